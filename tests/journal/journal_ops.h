/* journal_ops: world_ops.h's calls made through the journal (server/journal), as the daemon makes
 * them, for the tests and tools that record a random run. */
#ifndef COLLIDE_JOURNAL_OPS_H
#define COLLIDE_JOURNAL_OPS_H

#include "journal.h"
#include "world_ops.h"

static inline world_status wo_apply_journaled(journal *j, world *w, const wo_op *op,
                                              world_body_id *spawned) {
    *spawned = WORLD_NULL_BODY;
    switch (op->kind) {
    case WO_SPAWN:
        return journal_spawn(j, w, op->body_kind, &op->shape, op->position, op->angle, op->owner,
                             spawned, NULL);
    case WO_DESPAWN:
        return journal_despawn(j, w, op->id);
    case WO_FILTER:
        return journal_set_filter(j, w, op->id, &op->filter);
    case WO_ONE_WAY:
        return journal_set_one_way(j, w, op->id, true);
    case WO_CHARACTER:
        return journal_set_character(j, w, op->id, &op->character);
    case WO_INTENT:
        return journal_intent(j, w, op->owner, op->id, op->velocity, op->spin, op->seq, op->jump);
    }
    return WORLD_ERR_NOT_FOUND;
}

#endif

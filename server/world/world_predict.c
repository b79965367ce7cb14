/* world_predict: what a client's prediction needs beyond the daemon's API (world.h "Client-side
 * prediction"): a moving body's whole state saved and put back, so a predicting client can step
 * ahead and return to the state the server confirmed; and a body placed where a snapshot put it,
 * for the bodies a client only sees and for its own when it has lost the thread.
 *
 * What a step reads of a body, and so what a saved state holds: its mover record (position, AABB
 * offsets, intent, velocity, sequences, flags), its turn record and still memo when it turned, and
 * its character record (vertical speed, ground and its normal, carrier, coyote time, the pending
 * jump, the memos of the fused step and its remembered statics). The rest is the world's, not the
 * body's: the statics (which the memos are checked against by epoch), the other movers, and
 * per-step scratch. The shape, filter, one-way flag and character options are fixed at spawn and
 * are left as they are. */
#include <math.h>

#include "world_character.h"

#define BODY_STATE_MAGIC 0x636f6c73u /* "cols": a buffer that holds a saved state */

typedef struct body_state {
    uint32_t magic;         /* BODY_STATE_MAGIC */
    world_body_id id;       /* the body it was saved from */
    world_mover mover;      /* its mover record */
    uint32_t turned;        /* the turn record and memo below are saved */
    uint32_t character;     /* the character record below is saved */
    world_turn turn;        /* when turned */
    world_turn_still still; /* when turned */
    world_character ch;     /* when a character; jump_until as jump_in */
    int64_t jump_in;        /* the pending jump's last step less the tick of the save */
} body_state;

size_t world_body_state_size(void) { return sizeof(body_state); }

/* The slot of a live moving body, or the status that says why not. */
static world_status moving_slot(const world *w, world_body_id id, uint32_t *slot) {
    *slot = id_slot(w, id);
    if (*slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (w->slots[*slot].kind != WORLD_BODY_MOVING) return WORLD_ERR_NOT_MOVING;
    return WORLD_OK;
}

world_status world_body_save(const world *w, world_body_id id, void *out) {
    uint32_t slot;
    world_status st = moving_slot(w, id, &slot);
    if (st != WORLD_OK) return st;
    body_state s;
    memset(&s, 0, sizeof s);
    s.magic = BODY_STATE_MAGIC;
    s.id = id;
    s.mover = w->movers[w->slots[slot].index];
    if (ref_kind(s.mover.shape) == WORLD_REF_TURNED) {
        s.turned = 1;
        s.turn = w->turns[slot];
        s.still = w->turn_still[slot];
    }
    if (world_is_character(w, slot)) {
        s.character = 1;
        s.ch = w->characters[slot];
        s.jump_in = s.ch.jump_until ? (int64_t)(s.ch.jump_until - w->tick) : 0;
        s.ch.jump_until = 0;
    }
    memcpy(out, &s, sizeof s);
    return WORLD_OK;
}

/* The slot of a live mover, or UINT32_MAX: a carrier slot a state names may have gone since. */
static uint32_t live_mover_slot(const world *w, uint32_t slot) {
    if (slot >= w->capacity || w->slots[slot].kind != WORLD_BODY_MOVING) return UINT32_MAX;
    return slot;
}

world_status world_body_restore(world *w, world_body_id id, const void *state) {
    uint32_t slot;
    world_status st = moving_slot(w, id, &slot);
    if (st != WORLD_OK) return st;
    body_state s;
    memcpy(&s, state, sizeof s);
    if (s.magic != BODY_STATE_MAGIC || s.id != id || s.mover.slot != slot ||
        (s.character != 0) != world_is_character(w, slot) || (s.turned && !w->turns))
        return WORLD_ERR_NOT_FOUND;
    world_mover *m = &w->movers[w->slots[slot].index];
    /* A body that began turning after the save has a turn record; its reference goes back to
     * the unturned one (the polygon pool entry the turn record kept as its local shape), the
     * record is dropped, and a later turning intent begins a fresh one, as it did the first
     * time. */
    *m = s.mover;
    if (s.turned) {
        w->turns[slot] = s.turn;
        w->turn_still[slot] = s.still;
        if (s.turn.spin != 0.0f || s.turn.ang_vel != 0.0f) w->turning_hint++; /* an upper bound */
    } else if (w->turns && w->turns[slot].in_use) {
        /* unturned again: the record goes (rows and the hash read a record in use) */
        memset(&w->turns[slot], 0, sizeof w->turns[slot]);
        memset(&w->turn_still[slot], 0, sizeof w->turn_still[slot]);
    }
    if (s.character) {
        world_character *c = &w->characters[slot];
        /* its options stay as they are now (world.h); what it remembers of the static grid and
         * its still walk are caches, walked again rather than trusted from the buffer */
        world_character now = *c;
        *c = s.ch;
        c->opt = now.opt, c->cos_slope = now.cos_slope;
        c->buffer_ticks = now.buffer_ticks, c->coyote_ticks = now.coyote_ticks;
        c->near.epoch = 0, c->still_epoch = 0;
        c->jump_until = s.jump_in ? (uint64_t)((int64_t)w->tick + s.jump_in) : 0;
        /* a jump that would have expired is none (jump_until 0 means none pending) */
        if (s.jump_in && (int64_t)w->tick + s.jump_in <= 0) c->jump_until = 0;
        if (c->carrier != UINT32_MAX) c->carrier = live_mover_slot(w, c->carrier);
        if (c->ground != WORLD_NULL_BODY && id_slot(w, c->ground) == UINT32_MAX)
            c->ground = WORLD_NULL_BODY;
    }
    if (m->flags & WORLD_MOVER_CHECK_STATICS) w->static_checks_pending = true;
    w->cache->grid.valid = false; /* it may stand elsewhere than the grid has it */
    return WORLD_OK;
}

world_status world_body_place(world *w, world_body_id id, vec2 position, float angle, vec2 velocity,
                              float angular_velocity) {
    uint32_t slot;
    world_status st = moving_slot(w, id, &slot);
    if (st != WORLD_OK) return st;
    if (!v2_is_finite(position) || !v2_is_finite(velocity) || !isfinite(angle) ||
        !isfinite(angular_velocity))
        return WORLD_ERR_NOT_FINITE;
    const aabb b = w->cfg.bounds;
    if (position.x < b.min.x || position.x > b.max.x || position.y < b.min.y ||
        position.y > b.max.y)
        return WORLD_ERR_OUT_OF_BOUNDS;
    world_mover *m = &w->movers[w->slots[slot].index];
    angle = world_wrap_angle(angle);
    bool turned = ref_kind(m->shape) == WORLD_REF_TURNED;
    if (!turned && (angle != 0.0f || angular_velocity != 0.0f)) {
        if (!world_turns_ready(w)) return WORLD_ERR_NO_MEMORY;
        geom_shape tmp;
        geom_shape local = *ref_shape(w, m->shape, m->hi, &tmp);
        m->shape = world_turn_begin(w, slot, m->shape, &local, 0.0f);
        turned = true;
    }
    if (turned) {
        world_turn *t = &w->turns[slot];
        if (angle != t->angle) {
            /* as a tick that turns it leaves it (world_turn.c): q from the angle, the AABB of the
             * local shape turned by q */
            t->angle = angle;
            t->q = geom_turn_start(angle);
            geom_shape tmp, turned_shape;
            geom_shape_orient(turn_local(w, t, &tmp), t->q, &turned_shape);
            aabb box = geom_shape_aabb(&turned_shape, v2(0.0f, 0.0f));
            m->lo = box.min;
            m->hi = box.max;
        }
        t->ang_vel = angular_velocity;
        w->turn_still[slot].epoch = 0;
        if (t->spin != 0.0f || t->ang_vel != 0.0f) w->turning_hint++; /* an upper bound */
    }
    m->position = position;
    m->velocity = velocity;
    if (world_is_character(w, slot)) w->characters[slot].still_epoch = 0;
    w->cache->grid.valid = false;
    return WORLD_OK;
}

world_status world_character_place(world *w, world_body_id id, float vertical, bool grounded,
                                   world_body_id ground) {
    uint32_t slot;
    world_status st = moving_slot(w, id, &slot);
    if (st != WORLD_OK) return st;
    if (!world_is_character(w, slot)) return WORLD_ERR_NOT_FOUND;
    if (!isfinite(vertical)) return WORLD_ERR_NOT_FINITE;
    world_character *c = &w->characters[slot];
    c->vy = vertical;
    c->grounded = grounded ? 1 : 0;
    uint32_t gs = ground != WORLD_NULL_BODY ? id_slot(w, ground) : UINT32_MAX;
    c->ground = grounded && gs != UINT32_MAX ? ground : WORLD_NULL_BODY;
    c->carrier = grounded && gs != UINT32_MAX ? live_mover_slot(w, gs) : UINT32_MAX;
    vec2 g = w->cfg.gravity;
    float glen = sqrtf(v2_dot(g, g));
    c->ground_normal = grounded && glen > 0.0f ? v2_scale(g, -1.0f / glen) : v2(0.0f, 0.0f);
    c->coyote = 0;
    c->air_ticks = 0;
    c->jump_until = 0;
    c->still_epoch = 0;
    return WORLD_OK;
}

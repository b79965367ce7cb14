/* journal_wasm: see journal_wasm.h. */
#include "journal_wasm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(wasm_journal_info) == 72, "wasm_journal_info: the binding's offsets");
_Static_assert(sizeof(wasm_journal_stats) == 48, "wasm_journal_stats: the binding's offsets");

/* A world's image and the replay's position at one tick. */
typedef struct checkpoint {
    journal_position pos;
    void *image; /* world_image_save's; NULL for the start's (the header's image) */
    size_t len;
} checkpoint;

struct wasm_journal {
    uint8_t *bytes; /* the journal, read in place by the replay */
    uint32_t len;
    journal_replay *r;
    wasm_journal_info info;
    wasm_journal_stats stats;
    checkpoint *ckpt; /* ascending ticks; ckpt[0] the start's */
    uint32_t ckpt_count, ckpt_cap;
    int32_t failed;       /* the seek result of a failed replay, 0 while none */
    uint64_t failed_tick; /* a seek to it or past it gives the failure again */
    world_body_id *ids;   /* the live ids of the last table */
    uint32_t id_cap;
    wasm_body *rows; /* the last wasm_journal_bodies table */
    uint32_t row_cap;
    wasm_shape shape; /* wasm_journal_shape's row */
    char error[256];
};

wasm_journal *wasm_journal_create(uint32_t len) {
    wasm_journal *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->bytes = malloc(len ? len : 1);
    if (!j->bytes) {
        free(j);
        return NULL;
    }
    j->len = len;
    return j;
}

uint8_t *wasm_journal_bytes(wasm_journal *j) { return j->bytes; }

void wasm_journal_free(wasm_journal *j) {
    if (!j) return;
    for (uint32_t i = 0; i < j->ckpt_count; i++)
        free(j->ckpt[i].image);
    free(j->ckpt);
    journal_replay_free(j->r);
    free(j->ids);
    free(j->rows);
    free(j->bytes);
    free(j);
}

int32_t wasm_journal_open(wasm_journal *j, uint32_t checkpoint_every, uint32_t checkpoint_budget) {
    if (j->r) {
        snprintf(j->error, sizeof j->error, "the journal is open already");
        return 1;
    }
    j->error[0] = 0;
    j->r = journal_replay_open(j->bytes, j->len, j->error, sizeof j->error);
    if (!j->r) return 1;
    j->ckpt = malloc(sizeof *j->ckpt);
    if (!j->ckpt) {
        journal_replay_free(j->r);
        j->r = NULL;
        snprintf(j->error, sizeof j->error, "out of memory");
        return 1;
    }
    j->ckpt_cap = j->ckpt_count = 1;
    j->ckpt[0] = (checkpoint){.image = NULL};
    journal_replay_position(j->r, &j->ckpt[0].pos);
    j->stats.checkpoints = 1;
    j->stats.every = checkpoint_every ? checkpoint_every : WASM_JOURNAL_CHECKPOINT_EVERY;
    j->stats.budget = checkpoint_budget ? checkpoint_budget : WASM_JOURNAL_CHECKPOINT_BUDGET;

    const journal_header *h = journal_replay_header(j->r);
    const world_config *cfg = world_get_config(journal_replay_world(j->r));
    wasm_journal_info *in = &j->info;
    in->start_tick = h->start_tick;
    in->last_tick = journal_replay_last_tick(j->r);
    in->unix_ms = h->unix_ms;
    in->version = h->version;
    in->hash_every = h->hash_every;
    in->truncated = journal_replay_truncated(j->r) != NULL;
    in->max_bodies = cfg->max_bodies;
    in->tick_rate_hz = cfg->tick_rate_hz;
    in->min_x = cfg->bounds.min.x, in->min_y = cfg->bounds.min.y;
    in->max_x = cfg->bounds.max.x, in->max_y = cfg->bounds.max.y;
    in->gravity_x = cfg->gravity.x, in->gravity_y = cfg->gravity.y;
    return 0;
}

const wasm_journal_info *wasm_journal_get_info(const wasm_journal *j) { return &j->info; }

const char *wasm_journal_header_text(const wasm_journal *j, int32_t which) {
    if (!j->r) return "";
    const journal_header *h = journal_replay_header(j->r);
    switch (which) {
    case 0:
        return h->room;
    case 1:
        return h->world_name;
    case 2:
        return h->daemon_version;
    }
    return "";
}

const char *wasm_journal_truncated(const wasm_journal *j) {
    const char *t = j->r ? journal_replay_truncated(j->r) : NULL;
    return t ? t : "";
}

const char *wasm_journal_error(const wasm_journal *j) { return j->error; }

uint64_t wasm_journal_tick(const wasm_journal *j) {
    return j->r ? world_tick(journal_replay_world(j->r)) : 0;
}

uint64_t wasm_journal_state_hash(const wasm_journal *j) {
    return j->r ? world_state_hash(journal_replay_world(j->r)) : 0;
}

const wasm_journal_stats *wasm_journal_get_stats(const wasm_journal *j) { return &j->stats; }

/* ---- checkpoints -------------------------------------------------------------------------- */

/* Every other checkpoint past the start dropped, the spacing doubled: what stays is on the new
 * spacing's grid. */
static void thin(wasm_journal *j) {
    j->stats.every = j->stats.every > UINT32_MAX / 2 ? 0 : j->stats.every * 2;
    uint32_t kept = 1;
    for (uint32_t i = 1; i < j->ckpt_count; i++) {
        checkpoint *c = &j->ckpt[i];
        if (j->stats.every && (c->pos.tick - j->info.start_tick) % j->stats.every == 0) {
            j->ckpt[kept++] = *c;
        } else {
            j->stats.checkpoint_bytes -= c->len;
            free(c->image);
        }
    }
    j->ckpt_count = j->stats.checkpoints = kept;
}

/* A checkpoint of the world as it stands (on the spacing's grid, right after a replay_to that
 * returned JOURNAL_OK), unless one is kept there already. Out of memory: none, and the seek goes
 * on without it. */
static void save_checkpoint(wasm_journal *j) {
    const world *w = journal_replay_world(j->r);
    uint64_t tick = world_tick(w);
    for (uint32_t i = 0; i < j->ckpt_count; i++)
        if (j->ckpt[i].pos.tick == tick) return;
    size_t len;
    void *image = world_image_save(w, &len);
    if (!image) return;
    if (len > j->stats.budget) { /* not even one fits: none past the start */
        j->stats.every = 0;
        free(image);
        return;
    }
    while (j->stats.checkpoint_bytes + len > j->stats.budget && j->stats.every)
        thin(j);
    bool on_grid = j->stats.every && (tick - j->info.start_tick) % j->stats.every == 0;
    if (on_grid && j->ckpt_count == j->ckpt_cap) {
        checkpoint *more = realloc(j->ckpt, 2 * (size_t)j->ckpt_cap * sizeof *more);
        if (more) j->ckpt = more, j->ckpt_cap *= 2;
    }
    if (!on_grid || j->ckpt_count == j->ckpt_cap) {
        free(image);
        return;
    }
    uint32_t at = j->ckpt_count;
    while (j->ckpt[at - 1].pos.tick > tick)
        at--;
    memmove(&j->ckpt[at + 1], &j->ckpt[at], (size_t)(j->ckpt_count - at) * sizeof *j->ckpt);
    j->ckpt[at] = (checkpoint){.image = image, .len = len};
    journal_replay_position(j->r, &j->ckpt[at].pos);
    j->ckpt_count++;
    j->stats.checkpoints = j->ckpt_count;
    j->stats.checkpoint_bytes += len;
}

/* The replay put at checkpoint c: false, with the reason, when its image cannot be loaded (out of
 * memory). */
static bool restore(wasm_journal *j, const checkpoint *c) {
    const journal_header *h = journal_replay_header(j->r);
    const void *image = c->image ? c->image : h->image;
    size_t len = c->image ? c->len : h->image_len;
    world *w = world_image_load(image, len, j->error, sizeof j->error);
    if (!w) return false;
    if (!journal_replay_resume(j->r, w, &c->pos, j->error, sizeof j->error)) {
        world_destroy(w);
        return false;
    }
    j->failed = 0;
    j->error[0] = 0;
    j->stats.restores++;
    j->stats.restored_tick = c->pos.tick;
    return true;
}

/* ---- seeking ------------------------------------------------------------------------------ */

int32_t wasm_journal_seek(wasm_journal *j, uint64_t tick) {
    if (!j->r) {
        snprintf(j->error, sizeof j->error, "no journal is open");
        return JOURNAL_CORRUPT;
    }
    if (tick < j->info.start_tick) tick = j->info.start_tick;
    if (tick > j->info.last_tick) tick = j->info.last_tick;
    if (j->failed && tick >= j->failed_tick) return j->failed;
    uint64_t now = wasm_journal_tick(j);
    /* the nearest checkpoint at or before the tick; gone to when the world is past the tick, or
     * stands in a failed replay, or before the checkpoint */
    const checkpoint *c = &j->ckpt[0];
    for (uint32_t i = 1; i < j->ckpt_count && j->ckpt[i].pos.tick <= tick; i++)
        c = &j->ckpt[i];
    if ((j->failed || tick < now || c->pos.tick > now) && !restore(j, c)) {
        /* the world may be gone from the replay's position: start again from the start's */
        if (c == &j->ckpt[0] || !restore(j, &j->ckpt[0])) return WASM_JOURNAL_ERR_MEMORY;
    }
    journal_replay *r = j->r;
    const uint64_t start = j->info.start_tick;
    for (uint64_t at = wasm_journal_tick(j); at < tick; at = wasm_journal_tick(j)) {
        uint64_t every = j->stats.every, to = tick;
        if (every && (at - start) / every + 1 <= (tick - start) / every)
            to = start + ((at - start) / every + 1) * every; /* the next checkpoint's tick */
        journal_result res = journal_replay_to(r, to);
        j->stats.ticks_replayed += wasm_journal_tick(j) - at;
        if (res != JOURNAL_OK) {
            /* a hash is checked after its tick's step: the world stands at that tick; other
             * failures come among the inputs of the next one */
            uint64_t now_tick = wasm_journal_tick(j);
            j->failed = res == JOURNAL_END ? JOURNAL_CORRUPT : (int32_t)res;
            j->failed_tick = res == JOURNAL_MISMATCH ? now_tick : now_tick + 1;
            snprintf(j->error, sizeof j->error, "%s",
                     res == JOURNAL_END ? "the journal ended before its last tick"
                                        : journal_replay_error(r));
            return j->failed;
        }
        if (to < tick || (every && (to - start) % every == 0)) save_checkpoint(j);
    }
    return JOURNAL_OK;
}

/* ---- the world's bodies ------------------------------------------------------------------- */

uint32_t wasm_journal_bodies(wasm_journal *j, uint32_t kinds) {
    if (!j->r) return 0;
    const world *w = journal_replay_world(j->r);
    const aabb b = world_get_config(w)->bounds;
    /* every body overlaps the bounds (statics fit inside, movers are kept in) */
    aabb all = aabb_make(v2(b.min.x - 1.0f, b.min.y - 1.0f), v2(b.max.x + 1.0f, b.max.y + 1.0f));
    size_t n = world_query_aabb(w, all, kinds, j->ids, j->id_cap);
    if (n > j->id_cap) {
        world_body_id *ids = realloc(j->ids, n * sizeof *ids);
        wasm_body *rows = ids ? realloc(j->rows, n * sizeof *rows) : NULL;
        if (ids) j->ids = ids;
        if (rows) j->rows = rows, j->row_cap = (uint32_t)n;
        if (!ids || !rows) return UINT32_MAX;
        j->id_cap = (uint32_t)n;
        n = world_query_aabb(w, all, kinds, j->ids, j->id_cap);
    }
    uint32_t count = 0;
    for (size_t i = 0; i < n && i < j->id_cap; i++)
        if (wasm_body_of(w, j->ids[i], &j->rows[count])) count++;
    return count;
}

const wasm_body *wasm_journal_rows(const wasm_journal *j) { return j->rows; }

const wasm_shape *wasm_journal_shape(wasm_journal *j, uint32_t id) {
    if (!j->r) return NULL;
    return wasm_shape_of(journal_replay_world(j->r), id, &j->shape) ? &j->shape : NULL;
}

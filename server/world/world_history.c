/* world_history: the ring of past mover states (see world_history.h). */
#include "world_history.h"

#define HIST_MAX_CELLS 16384u
#define HIST_MIN_CELLS 64u

/* How far a mover's box reaches from its position, on any side. */
static inline float mover_reach(const world_mover *m) {
    return wmax(wmax(-m->lo.x, -m->lo.y), wmax(m->hi.x, m->hi.y));
}

/* A mover's angle (0 for one that never turned). */
static inline float mover_angle(const world *w, const world_mover *m) {
    return ref_kind(m->shape) == WORLD_REF_TURNED ? w->turns[m->slot].angle : 0.0f;
}

/* How far a mover's box may reach at any angle it had: its box now for one that never turned, the
 * disc it turns in for a turned one (its box at a past angle is not its box now). */
static inline float mover_reach_any_angle(const world *w, const world_mover *m) {
    return ref_kind(m->shape) == WORLD_REF_TURNED ? wmax(w->turns[m->slot].radius, mover_reach(m))
                                                  : mover_reach(m);
}

static void history_release(world_history *h) {
    free(h->ring);
    free(h->recs);
    free(h->cell_starts);
    free(h->keys);
}

void world_history_free(world *w) {
    world_history *h = w->history;
    if (!h) return;
    w->bytes -= h->bytes;
    history_release(h);
    free(h);
    w->history = NULL;
}

/* Points every frame at its part of the blocks. */
static void link_frames(world_history *h) {
    for (uint32_t k = 0; k < h->frames; k++) {
        /* no records before the first recording: no block to point into (NULL + 0 is UB) */
        h->ring[k].recs = h->recs ? h->recs + (size_t)k * h->rec_cap : NULL;
        h->ring[k].cell_start = h->cell_starts + (size_t)k * (h->cells + 1u);
    }
}

static size_t history_bytes(const world_history *h) {
    return sizeof *h + h->frames * sizeof *h->ring +
           (size_t)h->frames * h->rec_cap * sizeof *h->recs +
           (size_t)h->frames * (h->cells + 1u) * sizeof *h->cell_starts +
           (size_t)h->rec_cap * sizeof *h->keys;
}

/* The cell layout for `want` cells over the bounds (square cells, at most `want` along a side). */
static void history_layout(const world *w, world_history *h, uint32_t want) {
    vec2 ext = v2_sub(w->cfg.bounds.max, w->cfg.bounds.min);
    float cell = sqrtf(ext.x * ext.y / (float)want);
    if (!(cell > 0.0f) || !isfinite(cell)) cell = 1.0f;
    /* a long thin world: not more cells along its length than the budget */
    cell = wmax(cell, wmax(ext.x, ext.y) / (float)want);
    h->inv_cell = 1.0f / cell;
    h->origin = w->cfg.bounds.min;
    h->nx = (int32_t)wmin(ext.x * h->inv_cell + 1.0f, (float)want);
    h->ny = (int32_t)wmin(ext.y * h->inv_cell + 1.0f, (float)want);
    if (h->nx < 1) h->nx = 1;
    if (h->ny < 1) h->ny = 1;
    h->cells = (uint32_t)h->nx * (uint32_t)h->ny;
}

/* About one cell per mover the frames have room for (HIST_MIN_CELLS..HIST_MAX_CELLS). */
static uint32_t cells_for(uint32_t rec_cap) {
    return rec_cap < HIST_MIN_CELLS   ? HIST_MIN_CELLS
           : rec_cap > HIST_MAX_CELLS ? HIST_MAX_CELLS
                                      : rec_cap;
}

bool world_set_history(world *w, uint32_t ticks) {
    world_history_free(w);
    if (ticks == 0) return true;
    if (ticks > 1u << 20) return false; /* hours of history: a configuration mistake */
    world_history *h = calloc(1, sizeof *h);
    if (!h) return false;
    h->frames = ticks + 1u;
    history_layout(w, h, cells_for(0));
    h->ring = calloc(h->frames, sizeof *h->ring);
    h->cell_starts = calloc((size_t)h->frames * (h->cells + 1u), sizeof *h->cell_starts);
    if (!h->ring || !h->cell_starts) {
        history_release(h);
        free(h);
        return false;
    }
    link_frames(h);
    h->bytes = history_bytes(h);
    w->bytes += h->bytes;
    w->history = h;
    return true;
}

/* Where a mover's state goes in a frame: its cell, or the tail (h->cells) when its box reaches
 * further than a cell from its position. */
static inline uint32_t record_key(const world_history *h, vec2 p, float reach) {
    if (reach > 1.0f / h->inv_cell) return h->cells;
    return (uint32_t)hist_cell(p.y, h->origin.y, h->inv_cell, h->ny) * (uint32_t)h->nx +
           (uint32_t)hist_cell(p.x, h->origin.x, h->inv_cell, h->nx);
}

/* Fills frame f with n states by a counting sort on their keys (h->keys), the tail last: old
 * records (old non-NULL), or else the world's movers. */
static void frame_fill(const world *w, world_history *h, world_hist_frame *f, uint32_t n,
                       const world_hist_rec *old) {
    uint32_t *start = f->cell_start;
    uint32_t tail = 0;
    bool turned = w->turns != NULL; /* a world that never turned a body: every angle is 0 */
    memset(start, 0, (h->cells + 1u) * sizeof *start);
    for (uint32_t i = 0; i < n; i++) {
        if (h->keys[i] == h->cells)
            tail++;
        else
            start[h->keys[i] + 1u]++;
    }
    for (uint32_t c = 0; c < h->cells; c++)
        start[c + 1u] += start[c];
    uint32_t tail_at = n - tail;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t key = h->keys[i];
        uint32_t at = key == h->cells ? tail_at++ : start[key]++;
        if (old) {
            f->recs[at] = old[i];
        } else {
            const world_mover *m = &w->movers[i];
            f->recs[at].id = slot_id(w, m->slot);
            f->recs[at].position = m->position;
            f->recs[at].angle = turned ? mover_angle(w, m) : 0.0f;
        }
    }
    /* start[c] now holds the end of cell c: shift back to starts */
    for (uint32_t c = h->cells; c > 0; c--)
        start[c] = start[c - 1u];
    start[0] = 0;
    f->count = n;
    f->tail = tail;
}

/* Room for n records per frame (a quarter more, for the next joins), with as many cells: the kept
 * frames are sorted again into the new blocks. */
static bool history_grow(world *w, world_history *h, uint32_t n) {
    uint64_t want = (uint64_t)n + n / 4u + 64u;
    uint32_t cap = want > w->mover_cap ? (n > w->mover_cap ? n : w->mover_cap) : (uint32_t)want;
    world_history next = *h;
    next.rec_cap = cap;
    history_layout(w, &next, cells_for(cap));
    next.recs = malloc((size_t)h->frames * cap * sizeof *next.recs);
    next.cell_starts = malloc((size_t)h->frames * (next.cells + 1u) * sizeof *next.cell_starts);
    next.keys = malloc((size_t)cap * sizeof *next.keys);
    next.ring = malloc(h->frames * sizeof *next.ring);
    if (!next.recs || !next.cell_starts || !next.keys || !next.ring) {
        history_release(&next); /* frees the new blocks only: h keeps the old ones */
        return false;
    }
    memcpy(next.ring, h->ring, h->frames * sizeof *next.ring);
    link_frames(&next);
    for (uint32_t k = 0; k < h->frames; k++) {
        const world_hist_frame *old = &h->ring[k];
        world_hist_frame *f = &next.ring[k];
        if (old->count == 0) continue;
        float reach = 0.0f;
        for (uint32_t i = 0; i < old->count; i++) {
            /* a mover despawned since is skipped by every query: the tail will do */
            uint32_t slot = id_slot(w, old->recs[i].id);
            float r = slot == UINT32_MAX
                          ? INFINITY
                          : mover_reach_any_angle(w, &w->movers[w->slots[slot].index]);
            next.keys[i] = record_key(&next, old->recs[i].position, r);
            if (next.keys[i] != next.cells) reach = wmax(reach, r);
        }
        frame_fill(w, &next, f, old->count, old->recs);
        f->reach = reach;
    }
    history_release(h);
    *h = next;
    w->bytes -= h->bytes;
    h->bytes = history_bytes(h);
    w->bytes += h->bytes;
    return true;
}

void world_history_record(world *w) {
    world_history *h = w->history;
    if (!h) return;
    uint32_t n = w->mover_count;
    if (n > h->rec_cap && !history_grow(w, h, n)) {
        h->filled = 0; /* out of memory: the kept ticks are dropped, answered HISTORY_EXPIRED */
        return;
    }
    h->head = (h->head + 1u) % h->frames;
    world_hist_frame *f = &h->ring[h->head];
    f->tick = w->tick;
    f->despawns = w->mover_despawns;
    f->shape = WORLD_HIST_MIXED;
    /* a turned mover's reference is its own (and its shape depends on the recorded angle): never
     * shared */
    if (n > 0 && ref_kind(w->movers[0].shape) != WORLD_REF_TURNED &&
        vec_eq(w->movers[0].lo, v2_neg(w->movers[0].hi)))
        f->shape = w->movers[0].shape, f->hi = w->movers[0].hi;
    float reach = 0.0f;
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        float r = mover_reach(m);
        h->keys[i] = record_key(h, m->position, r);
        if (h->keys[i] != h->cells) reach = wmax(reach, r);
        if (m->shape != f->shape || !vec_eq(m->lo, v2_neg(f->hi)) || !vec_eq(m->hi, f->hi))
            f->shape = WORLD_HIST_MIXED;
    }
    frame_fill(w, h, f, n, NULL);
    f->reach = reach;
    if (h->filled < h->frames) h->filled++;
}

const world_hist_frame *world_history_frame(const world *w, uint64_t tick) {
    const world_history *h = w->history;
    if (!h || h->filled == 0) return NULL;
    const world_hist_frame *newest = &h->ring[h->head];
    if (tick > newest->tick || newest->tick - tick >= h->filled) return NULL;
    uint32_t back = (uint32_t)(newest->tick - tick);
    const world_hist_frame *f = &h->ring[(h->head + h->frames - back) % h->frames];
    return f->tick == tick ? f : NULL;
}

uint64_t world_history_oldest(const world *w) {
    const world_history *h = w->history;
    if (!h || h->filled == 0 || h->ring[h->head].tick != w->tick) return w->tick;
    /* the frames are consecutive ticks: each step records one */
    return w->tick - (h->filled - 1u);
}

void world_history_query(const world *w, const world_hist_frame *f, aabb box, hist_visit_fn visit,
                         void *ctx) {
    world_history_walk(w, f, box, visit, ctx);
}

/* world_history: the ring of past mover states (see world_history.h). */
#include "world_history.h"

#define HIST_MAX_CELLS 4096u
#define HIST_MIN_CELLS 64u

static inline int32_t hist_cell(float v, float origin, float inv, int32_t n) {
    float f = (v - origin) * inv;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    return (int32_t)f;
}

/* How far a mover's box reaches from its position, on any side. */
static inline float mover_reach(const world_mover *m) {
    return wmax(wmax(-m->lo.x, -m->lo.y), wmax(m->hi.x, m->hi.y));
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
        h->ring[k].recs = h->recs + (size_t)k * h->rec_cap;
        h->ring[k].cell_start = h->cell_starts + (size_t)k * (h->cells + 1u);
    }
}

static size_t history_bytes(const world_history *h) {
    return sizeof *h + h->frames * sizeof *h->ring +
           (size_t)h->frames * h->rec_cap * sizeof *h->recs +
           (size_t)h->frames * (h->cells + 1u) * sizeof *h->cell_starts +
           (size_t)h->rec_cap * sizeof *h->keys;
}

bool world_set_history(world *w, uint32_t ticks) {
    world_history_free(w);
    if (ticks == 0) return true;
    if (ticks > 1u << 20) return false; /* hours of history: a configuration mistake */
    world_history *h = calloc(1, sizeof *h);
    if (!h) return false;
    h->frames = ticks + 1u;
    /* About one cell per mover the world may hold, so a cell holds a mover or two when full. */
    uint32_t want = w->mover_cap < HIST_MIN_CELLS   ? HIST_MIN_CELLS
                    : w->mover_cap > HIST_MAX_CELLS ? HIST_MAX_CELLS
                                                    : w->mover_cap;
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

/* Room for n records per frame: the kept frames are copied into the new blocks. */
static bool history_grow(world *w, world_history *h, uint32_t n) {
    uint32_t cap = h->rec_cap ? h->rec_cap : 64u;
    while (cap < n)
        cap = cap > UINT32_MAX / 2u ? n : cap * 2u;
    if (cap > w->mover_cap) cap = w->mover_cap > n ? w->mover_cap : n;
    world_hist_rec *recs = malloc((size_t)h->frames * cap * sizeof *recs);
    uint32_t *keys = malloc((size_t)cap * sizeof *keys);
    if (!recs || !keys) {
        free(recs);
        free(keys);
        return false;
    }
    for (uint32_t k = 0; k < h->frames; k++)
        if (h->ring[k].count)
            memcpy(recs + (size_t)k * cap, h->ring[k].recs, h->ring[k].count * sizeof *recs);
    free(h->recs);
    free(h->keys);
    h->recs = recs;
    h->keys = keys;
    h->rec_cap = cap;
    link_frames(h);
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
    f->count = n;
    float cell = 1.0f / h->inv_cell;
    uint32_t tail_key = h->cells; /* sorts after every cell */
    uint32_t *start = f->cell_start;
    memset(start, 0, (h->cells + 1u) * sizeof *start);
    float reach = 0.0f;
    uint32_t tail = 0;
    /* counting sort by cell: counts, starts, then the records in mover order within a cell */
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        float r = mover_reach(m);
        uint32_t key;
        if (r > cell) {
            key = tail_key;
            tail++;
        } else {
            reach = wmax(reach, r);
            key = (uint32_t)hist_cell(m->position.y, h->origin.y, h->inv_cell, h->ny) *
                      (uint32_t)h->nx +
                  (uint32_t)hist_cell(m->position.x, h->origin.x, h->inv_cell, h->nx);
            start[key + 1u]++;
        }
        h->keys[i] = key;
    }
    for (uint32_t c = 0; c < h->cells; c++)
        start[c + 1u] += start[c];
    uint32_t tail_at = n - tail;
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        uint32_t key = h->keys[i];
        uint32_t at = key == tail_key ? tail_at++ : start[key]++;
        f->recs[at].id = slot_id(w, m->slot);
        f->recs[at].position = m->position;
    }
    /* start[c] now holds the end of cell c: shift back to starts */
    for (uint32_t c = h->cells; c > 0; c--)
        start[c] = start[c - 1u];
    start[0] = 0;
    f->tail = tail;
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
    const world_history *h = w->history;
    aabb near = aabb_inflate(box, f->reach);
    int32_t x0 = hist_cell(near.min.x, h->origin.x, h->inv_cell, h->nx);
    int32_t x1 = hist_cell(near.max.x, h->origin.x, h->inv_cell, h->nx);
    int32_t y0 = hist_cell(near.min.y, h->origin.y, h->inv_cell, h->ny);
    int32_t y1 = hist_cell(near.max.y, h->origin.y, h->inv_cell, h->ny);
    for (int32_t y = y0; y <= y1; y++) {
        /* a row's cells are consecutive: one run of records */
        uint32_t row = (uint32_t)y * (uint32_t)h->nx;
        uint32_t end = f->cell_start[row + (uint32_t)x1 + 1u];
        for (uint32_t i = f->cell_start[row + (uint32_t)x0]; i < end; i++) {
            const world_hist_rec *r = &f->recs[i];
            vec2 p = r->position;
            if (p.x < near.min.x || p.x > near.max.x || p.y < near.min.y || p.y > near.max.y)
                continue;
            if (!visit(w, r, ctx)) return;
        }
    }
    for (uint32_t i = f->count - f->tail; i < f->count; i++)
        if (!visit(w, &f->recs[i], ctx)) return;
}

/* world_history: the ring of past mover states that queries with an at_tick rewind to
 * (COLLISION.md "History": after step 4 the movers' states are appended; statics never move, so
 * they are not copied).
 *
 * A frame is what one step left: each mover's id, position and angle (16 bytes), sorted by a coarse
 * grid cell of its position (a counting sort), with the start of every cell, so a query walks only
 * the cells along its ray or sweep, as it does over the present movers. The cell size is fixed per
 * world (about one cell per mover of capacity, at most 4096 cells): the cell table costs at most
 * 16 KiB per frame. A mover wider than a cell goes to the frame's tail, which every query visits.
 * Shapes are not copied: they never change, and are read from the live body by id (a body
 * despawned since is left out); a turned body's (rotation) is its body-local shape turned by the
 * recorded angle, so a past query sees it as it stood then. When every mover of a frame has the
 * same symmetric shape (players of one size, none turned), the frame notes it, and while no mover
 * has been despawned since, a query tests the records without that lookup
 * (world_history_frame_same_shape). */
#ifndef COLLIDE_WORLD_HISTORY_H
#define COLLIDE_WORLD_HISTORY_H

#include "world_internal.h"

typedef struct world_hist_rec {
    world_body_id id; /* the mover (stale once it is despawned) */
    vec2 position;    /* where it was after the frame's tick */
    float angle;      /* its angle then (world_turn.angle; 0 for a body that never turned): a
                       * query turns the body-local shape by geom_turn_start of it, as the world
                       * does (turn_begin, world_turn.c), so the shape is the one of that tick */
} world_hist_rec;

#define WORLD_HIST_MIXED UINT32_MAX

typedef struct world_hist_frame {
    uint64_t tick;        /* the step it records */
    uint32_t count;       /* records */
    uint32_t tail;        /* records [count - tail, count): wider than a cell, in no cell */
    float reach;          /* farthest a celled mover's box reaches from its position */
    uint32_t shape;       /* every mover's shape reference when they share one with a box
                           * symmetric about the position (a room of players, say), else
                           * WORLD_HIST_MIXED */
    vec2 hi;              /* that shape's box: position + [-hi, hi] */
    uint64_t despawns;    /* w->mover_despawns at the recording */
    world_hist_rec *recs; /* rec_cap records, sorted by cell */
    uint32_t *cell_start; /* cells + 1 starts into recs */
} world_hist_frame;

typedef struct world_history {
    uint32_t frames;        /* ring size: the ticks kept besides the newest, plus one */
    uint32_t head;          /* ring index of the newest frame */
    uint32_t filled;        /* frames holding a tick (the newest `filled` ones) */
    uint32_t rec_cap;       /* records each frame has room for */
    vec2 origin;            /* the bounds' min corner: cells count from here */
    float inv_cell;         /* 1 / cell size */
    int32_t nx, ny;         /* cells per axis */
    uint32_t cells;         /* nx * ny */
    world_hist_frame *ring; /* frames */
    world_hist_rec *recs;   /* frames x rec_cap records */
    uint32_t *cell_starts;  /* frames x (cells + 1) */
    uint32_t *keys;         /* rec_cap: each mover's cell during a recording (scratch) */
    size_t bytes;           /* memory held */
} world_history;

/* Whether every record of f names a live mover of shape f->shape: the frame had one shape for all
 * and no mover has been despawned since (so no id is stale, nor its slot reused), and a query can
 * test a record without looking its mover up. */
static inline bool world_history_frame_same_shape(const world *w, const world_hist_frame *f) {
    return f->shape != WORLD_HIST_MIXED && f->despawns == w->mover_despawns;
}

/* Appends the movers' current positions and angles as the frame of the current tick (world_step,
 * step 4). */
void world_history_record(world *w);
void world_history_free(world *w);
/* The frame of `tick`, or NULL when it is not kept. */
const world_hist_frame *world_history_frame(const world *w, uint64_t tick);

/* Calls visit for every record of f whose mover's box may overlap box (every record of the tail,
 * and the celled ones whose position lies within box grown by the frame's reach): the visitor
 * tests the shape. Stops when visit returns false. */
typedef bool (*hist_visit_fn)(const world *w, const world_hist_rec *rec, void *ctx);
void world_history_query(const world *w, const world_hist_frame *f, aabb box, hist_visit_fn visit,
                         void *ctx);

/* The cell of coordinate v along an axis of n cells from origin (clamped to the grid). */
static inline int32_t hist_cell(float v, float origin, float inv, int32_t n) {
    float f = (v - origin) * inv;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    return (int32_t)f;
}

/* world_history_query inline, for a hot caller whose visit the compiler can then inline. */
WORLD_HOT void world_history_walk(const world *w, const world_hist_frame *f, aabb box,
                                  hist_visit_fn visit, void *ctx) {
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

#endif

/* world_history: the ring of past mover states that queries with an at_tick rewind to
 * (COLLISION.md "History": after step 4 the movers' states are appended; statics never move, so
 * they are not copied).
 *
 * A frame is what one step left: each mover's id and position (12 bytes), sorted by a coarse grid
 * cell of its position (a counting sort), with the start of every cell, so a query walks only the
 * cells along its ray or sweep, as it does over the present movers. The cell size is fixed per
 * world (about one cell per mover of capacity, at most 4096 cells): the cell table costs at most
 * 16 KiB per frame. A mover wider than a cell goes to the frame's tail, which every query visits.
 * Shapes are not copied: they never change, and are read from the live body by id (a body
 * despawned since is left out). */
#ifndef COLLIDE_WORLD_HISTORY_H
#define COLLIDE_WORLD_HISTORY_H

#include "world_internal.h"

typedef struct world_hist_rec {
    world_body_id id; /* the mover (stale once it is despawned) */
    vec2 position;    /* where it was after the frame's tick */
} world_hist_rec;

typedef struct world_hist_frame {
    uint64_t tick;        /* the step it records */
    uint32_t count;       /* records */
    uint32_t tail;        /* records [count - tail, count): wider than a cell, in no cell */
    float reach;          /* farthest a celled mover's box reaches from its position */
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

/* Appends the movers' current positions as the frame of the current tick (world_step, step 4). */
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

#endif

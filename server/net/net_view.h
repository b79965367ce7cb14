/* net_view: the interest-management index snapshots query. Each client's view is a box of about
 * 2 x view_radius (or its SetView box), queried once per client per tick: with the world's
 * collision grid, tuned for body-sized cells, such a box covers thousands of cells, and 1,000
 * clients cost ~90 ms a tick (measured, docs/perf/net.md). This index buckets bodies into cells
 * of about the view radius instead, so a view touches a handful of cells.
 *
 * The per-client cost is per (client, body in view) pair, so the layout serves that loop:
 *  - Every indexed body has a rank: statics in ascending id order, then movers in ascending id
 *    order. `ranked` holds each body's 16-byte entry (id, changed_tick, delta handle) by rank.
 *  - A body lives in one cell only (the cell of its AABB's min corner) as a compact 20-byte item
 *    (box, rank), stored contiguously with the other items of that cell. A query widens its box's
 *    low side by the grid's widest body instead of deduplicating items listed in several cells;
 *    bodies wider or taller than a cell go to a short `big` list that every query scans.
 *  - A query sets one bit per rank in view, without a branch (net_view_mark); net_view_take then
 *    reads the bits in order and yields the entries in rank order, each once, however many boxes
 *    overlapped. The session merge-joins that list with the client's known set, kept in the same
 *    order: a comparison sort of each view cost more than the rest of the pass (measured).
 *  - No encoding here: each mover's entry carries a 32-bit handle (delta_off) that a hook of the
 *    caller's returns while the movers are indexed, from the body state the grid reads anyway
 *    (net_snapshot.c keeps its delta record there). One world read per mover per tick.
 *
 * Two grids: movers, rebuilt every tick from one whole-world query (O(movers)), and statics,
 * rebuilt only when the set of statics changes (net spawns and despawns them, so it knows).
 * Allocation only while the arrays grow to their working size. */
#ifndef COLLIDE_NET_VIEW_H
#define COLLIDE_NET_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "world.h"

#define NET_VIEW_MAX_DIM 256         /* cells per axis at most: the cell grows for huge worlds */
#define NET_VIEW_NO_DELTA UINT32_MAX /* net_view_entry.delta_off of a static */

typedef struct net_view_entry {
    world_body_id id;      /* the body */
    uint32_t delta_off;    /* a mover's handle from the hook (never NET_VIEW_NO_DELTA);
                              NET_VIEW_NO_DELTA for a static */
    uint64_t changed_tick; /* world_body_info.changed_tick when the grid was built */
} net_view_entry;

/* The order of ranks, known sets and snapshots: statics before movers, then id. */
static inline uint64_t net_view_key(const net_view_entry *e) {
    return ((uint64_t)(e->delta_off != NET_VIEW_NO_DELTA) << 32) | e->id;
}

typedef struct net_view_item {
    aabb box;      /* its AABB when the grid was built */
    uint32_t rank; /* index into net_view_index.ranked */
} net_view_item;

typedef struct net_view_grid {
    net_view_item *items; /* grouped by cell, ascending id within a cell */
    uint32_t count;       /* entries in items */
    uint32_t cap;         /* entries allocated in items, stage and cell_of */
    uint32_t *start;      /* per cell: first index into items; ncells + 1 entries */
    net_view_item *stage; /* build scratch: the bodies in id order before the counting sort */
    uint32_t *cell_of;    /* build scratch: each staged body's cell */
    uint32_t first_rank;  /* rank of this grid's first body */
    uint32_t ranks;       /* bodies of this grid in ranked (cells and big) */
    net_view_item *big;   /* bodies wider or taller than a cell, ascending id */
    uint32_t big_count;   /* entries in big */
    uint32_t big_cap;     /* entries allocated in big */
    vec2 reach;           /* widest and tallest body in the cells: how far a query looks back */
} net_view_grid;

typedef struct net_view_index {
    vec2 origin;            /* world bounds min */
    float cell;             /* cell size */
    float inv_cell;         /* 1 / cell */
    int32_t nx, ny;         /* cells per axis */
    net_view_grid statics;  /* rebuilt when statics_dirty */
    net_view_grid movers;   /* rebuilt every tick */
    net_view_entry *ranked; /* every indexed body by rank: statics, then movers */
    size_t ranked_cap;      /* entries allocated in ranked */
    bool statics_dirty;     /* a static was spawned or despawned since the last build */
    world_body_id *ids;     /* scratch for the whole-world query */
    world_body_id *ids_tmp; /* scratch for sorting ids, when the world did not list them sorted */
    size_t ids_cap;         /* entries in ids and ids_tmp */
} net_view_index;

/* What net_view_rebuild calls for the movers: reserve once with their count (false: out of
 * memory), then record once per mover with its current state; record's result becomes the entry's
 * delta_off. */
typedef struct net_view_movers_hook {
    bool (*reserve)(void *ctx, size_t movers);
    uint32_t (*record)(void *ctx, const world_body_info *info);
    void *ctx;
} net_view_movers_hook;

/* Sizes the grid for the world's bounds and cells of about cell_hint. False when out of memory. */
bool net_view_init(net_view_index *v, const world *w, float cell_hint);
void net_view_free(net_view_index *v);
/* Rebuilds the movers (and, when dirty, the statics) from the world's current state, handing
 * each mover's state to the hook (NULL: every mover's handle is 0): the per-client hot path never
 * reads the world. */
bool net_view_rebuild(net_view_index *v, const world *w, const net_view_movers_hook *hook);

/* The ranks a set of view boxes selected: one bit per rank, and the span of words touched. */
typedef struct net_view_marks {
    uint64_t *bits; /* words; all zero between a take and the next mark */
    size_t words;   /* words allocated */
    size_t lo, hi;  /* words [lo, hi) may hold set bits */
} net_view_marks;

/* Sized for every body the world can hold. False when out of memory. */
bool net_view_marks_init(net_view_marks *m, const world *w);
void net_view_marks_free(net_view_marks *m);
/* Marks the indexed bodies whose AABB overlaps box (touching counts). Several boxes may be marked
 * before one take: a body is reported once. */
void net_view_mark(const net_view_index *v, aabb box, net_view_marks *m);
/* Writes the marked bodies' entries in rank order (net_view_key ascending), at most max, and
 * clears the marks; returns how many were written. Valid until the next rebuild. */
size_t net_view_take(const net_view_index *v, net_view_marks *m, net_view_entry *out, size_t max);

#endif

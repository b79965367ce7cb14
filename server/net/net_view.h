/* net_view: the interest-management index snapshots query. Each client's view is a box of about
 * 2 x view_radius (or its SetView box), queried once per client per tick: with the world's
 * collision grid, tuned for body-sized cells, such a box covers thousands of cells, and 1,000
 * clients cost ~90 ms a tick (measured, docs/perf/net.md). This index buckets bodies into cells
 * of about the view radius instead, so a view touches a handful of cells.
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

#define NET_VIEW_MAX_DIM 256  /* cells per axis at most: the cell grows for huge worlds */
#define NET_VIEW_BIG_CELLS 64 /* a body over more cells than this goes to the `big` list */

#define NET_VIEW_DELTA_MAX 40 /* bytes of one encoded delta BodyState (at most 35) */

typedef struct net_view_item {
    world_body_id id;      /* the body */
    aabb box;              /* its AABB when the grid was built */
    uint64_t changed_tick; /* world_body_info.changed_tick when the grid was built */
    int32_t cx, cy;        /* its first cell (the query reports it from one cell only) */
    uint8_t delta_len;     /* bytes in delta; 0 for statics (they never change) */
    uint8_t delta[NET_VIEW_DELTA_MAX]; /* the body's delta BodyState, encoded once per tick */
} net_view_item;

typedef struct net_view_grid {
    net_view_item *bodies; /* indexed bodies */
    uint32_t body_count;   /* entries in bodies */
    uint32_t body_cap;     /* entries allocated */
    uint32_t *start;       /* per cell: first index into items; ncells + 1 entries */
    uint32_t *items;       /* body indices, grouped by cell */
    uint32_t item_cap;     /* entries allocated in items */
    uint32_t *big;         /* bodies covering more than NET_VIEW_BIG_CELLS cells */
    uint32_t big_count;    /* entries in big */
    uint32_t big_cap;      /* entries allocated */
} net_view_grid;

typedef struct net_view_index {
    vec2 origin;           /* world bounds min */
    float cell;            /* cell size */
    float inv_cell;        /* 1 / cell */
    int32_t nx, ny;        /* cells per axis */
    net_view_grid statics; /* rebuilt when statics_dirty */
    net_view_grid movers;  /* rebuilt every tick */
    bool statics_dirty;    /* a static was spawned or despawned since the last build */
    world_body_id *ids;    /* scratch for the whole-world query */
    size_t ids_cap;        /* entries in ids */
} net_view_index;

/* Sizes the grid for the world's bounds and cells of about cell_hint. False when out of memory. */
bool net_view_init(net_view_index *v, const world *w, float cell_hint);
void net_view_free(net_view_index *v);
/* Rebuilds the movers (and, when dirty, the statics) from the world's current state. Each mover's
 * delta BodyState (id, position, velocity, last_input_seq) is encoded here, once per tick, and
 * copied into every snapshot that carries it: the per-client hot path neither reads the world
 * nor encodes. */
bool net_view_rebuild(net_view_index *v, const world *w);
/* Writes the indexed bodies whose AABB overlaps box (touching counts), each at most once per
 * call, at most max; returns how many were written. The pointers are valid until the next
 * rebuild. */
/* Encodes a delta BodyState (fields 1-4, zero values left out as proto3 does) into out, which has
 * room for NET_VIEW_DELTA_MAX bytes; returns its length. Exposed for the tests. */
size_t net_view_encode_delta(const world_body_info *info, uint8_t *out);

size_t net_view_query(const net_view_index *v, aabb box, const net_view_item **out, size_t max);

#endif

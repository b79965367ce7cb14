/* net_view: the interest-management index snapshots query. Each client's view is a box of about
 * 2 x view_radius (or its SetView box), queried once per client per tick: with the world's
 * collision grid, tuned for body-sized cells, such a box covers thousands of cells, and 1,000
 * clients cost ~90 ms a tick (measured, docs/perf/net.md). This index buckets bodies into cells
 * of about the view radius instead, so a view touches a handful of cells.
 *
 * The per-client cost is per (client, body in view) pair, so the layout serves that loop:
 *  - Every indexed body has a rank: statics in ascending id order, then movers in ascending id
 *    order. `ranked` holds each body's 16-byte entry (id, changed_tick, where its delta is) by
 * rank.
 *  - A body lives in one cell only (the cell of its AABB's min corner) as a compact 20-byte item
 *    (box, rank), stored contiguously with the other items of that cell. A query widens its box's
 *    low side by the grid's widest body instead of deduplicating items listed in several cells;
 *    bodies wider or taller than a cell go to a short `big` list that every query scans.
 *  - A query sets one bit per rank in view, without a branch (net_view_mark); net_view_take then
 *    reads the bits in order and yields the entries in rank order, each once, however many boxes
 *    overlapped. The session merge-joins that list with the client's known set, kept in the same
 *    order: a comparison sort of each view cost more than the rest of the pass (measured).
 *  - Every mover's delta BodyState is encoded once per tick, with its Snapshot.bodies tag and
 *    length, into one arena: a snapshot carries it with one memcpy.
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
#define NET_VIEW_DELTA_MAX 40 /* bytes of one encoded delta BodyState (at most 35) */
/* One arena record: Snapshot.bodies tag, one length byte (a delta is < 128 bytes), the delta. */
#define NET_VIEW_RECORD_MAX (2 + NET_VIEW_DELTA_MAX)
#define NET_VIEW_NO_DELTA UINT32_MAX /* net_view_entry.delta_off of a static */
/* Records are copied as this many bytes whatever their length (the arena and the snapshot buffer
 * have that much slack): a fixed-size memcpy is a few vector moves, a variable one became a
 * `rep movsq` that cost half the snapshot pass (measured, docs/perf/net.md). */
#define NET_VIEW_RECORD_COPY 48

typedef struct net_view_entry {
    world_body_id id;      /* the body */
    uint32_t delta_off;    /* its record in the arena (net_view_delta), or NET_VIEW_NO_DELTA */
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
    uint8_t *arena;         /* this tick's delta records, one per mover */
    size_t arena_len;       /* bytes used */
    size_t arena_cap;       /* bytes allocated */
} net_view_index;

/* Sizes the grid for the world's bounds and cells of about cell_hint. False when out of memory. */
bool net_view_init(net_view_index *v, const world *w, float cell_hint);
void net_view_free(net_view_index *v);
/* Rebuilds the movers (and, when dirty, the statics) from the world's current state, encoding
 * each mover's delta into the arena: the per-client hot path neither reads the world nor
 * encodes. */
bool net_view_rebuild(net_view_index *v, const world *w);

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

/* The arena record of an entry with a delta: tag, length, delta; its size is record[1] + 2. */
static inline const uint8_t *net_view_record(const net_view_index *v, const net_view_entry *e) {
    return v->arena + e->delta_off;
}

/* Encodes a delta BodyState (fields 1-4, zero values left out as proto3 does) into out, which has
 * room for NET_VIEW_DELTA_MAX bytes; returns its length. Exposed for the tests. */
size_t net_view_encode_delta(const world_body_info *info, uint8_t *out);

#endif

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
 *    caller's returns when the mover is new or changed (net_snapshot.c keeps its delta record
 *    there, re-encoded only for the movers that changed).
 *
 * The movers are a mirror kept from the world's body table (world_body_table): every mover's
 * entry, box and position in id order, to which each step's rows are applied (changed ones updated,
 * new ones inserted, despawned ones dropped), so a tick reads the world once per changed body, not
 * once per body. The mirror follows the world step by step: a step it did not see (net_view_update
 * not called after it) makes the next update read the whole world again. Two grids: movers, rebuilt
 * from the mirror every tick something changed (a counting sort, no world calls), and statics,
 * rebuilt only when the table shows a static spawned or despawned. Allocation only while the
 * arrays grow to their working size. */
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
    uint64_t changed_tick; /* world_body_row.changed_tick when the grid was built */
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
    net_view_grid movers;   /* rebuilt from the mirror when movers_dirty */
    net_view_entry *ranked; /* every indexed body by rank: statics, then movers */
    size_t ranked_cap;      /* entries allocated in ranked */
    bool statics_dirty;     /* the statics grid is not the world's: rebuilt at the next build */
    uint64_t statics_gen;   /* counts the statics grid's builds (0: never built): a client whose
                               view boxes and statics_gen are those of its last full pass has the
                               same statics in view (net_snapshot.c skips them) */
    bool movers_dirty;      /* the mirror changed since the movers grid was built */
    bool synced;            /* the mirror is the world's movers as of step `tick` */
    uint64_t tick;          /* the world step the mirror reflects */
    net_view_entry *mirror; /* every mover's entry, ascending id */
    aabb *mirror_box;       /* and its AABB, at the same index */
    vec2 *mirror_pos;       /* and its position (the snapshots' view boxes around own bodies) */
    net_view_entry *mirror_next; /* scratch: the mirror being rewritten by a step's rows */
    aabb *mirror_box_next;       /* scratch: its boxes */
    vec2 *mirror_pos_next;       /* scratch: its positions */
    size_t mirror_count;         /* movers in the mirror */
    size_t mirror_cap;           /* entries allocated in each mirror array */
    world_body_id *ids;          /* scratch for the whole-world query */
    world_body_id *ids_tmp; /* scratch for sorting ids, when the world did not list them sorted */
    net_view_entry *stage_entries; /* scratch: the statics' entries for their grid */
    aabb *stage_boxes;             /* scratch: and their boxes */
    size_t ids_cap;                /* entries in ids, ids_tmp, stage_entries and stage_boxes */
} net_view_index;

/* What the mirror calls for the movers' handles (delta_off): reserve before new movers arrive,
 * with the count the mirror will then hold (false: out of memory); record with a mover's row when
 * it is new (handle NET_VIEW_NO_DELTA) or changed (its handle), returning its handle from then on;
 * release a despawned mover's handle; clear every handle before the mirror is read anew from the
 * whole world. */
typedef struct net_view_movers_hook {
    bool (*reserve)(void *ctx, size_t movers);
    uint32_t (*record)(void *ctx, const world_body_row *row, uint32_t handle);
    void (*release)(void *ctx, uint32_t handle);
    void (*clear)(void *ctx);
    void *ctx;
} net_view_movers_hook;

/* Sizes the grid for the world's bounds and cells of about cell_hint. False when out of memory. */
bool net_view_init(net_view_index *v, const world *w, float cell_hint);
void net_view_free(net_view_index *v);
/* Brings the mover mirror to the world's last step: that step's table when the mirror holds the
 * step before, else the whole world (world_query_aabb and world_body_get per mover). Handles come
 * from the hook (NULL: every mover's handle is 0). Call it after every step whose changes the
 * views must not miss; a second call for the same step does nothing. False when out of memory
 * (the next call reads the whole world). */
bool net_view_update(net_view_index *v, const world *w, const net_view_movers_hook *hook);
/* net_view_update, then the grids: the movers' from the mirror (when it changed), the statics'
 * when a static came or went. The per-client hot path never reads the world. */
bool net_view_rebuild(net_view_index *v, const world *w, const net_view_movers_hook *hook);
/* A mover's position as of the mirror's step, by binary search of the id-ordered mirror; false
 * when no mover has that id there (despawned, or a static). */
bool net_view_mover_position(const net_view_index *v, world_body_id id, vec2 *position);

/* The ranks a set of view boxes selected: one bit per rank, and the span of words touched. */
typedef struct net_view_marks {
    uint64_t *bits; /* words; all zero between a take and the next mark */
    size_t words;   /* words allocated */
    size_t lo, hi;  /* words [lo, hi) may hold set bits */
    uint64_t taken; /* entries net_view_take has written, ever: the per-body work of the views,
                       for tests and benchmarks */
} net_view_marks;

/* Sized for every body the world can hold. False when out of memory. */
bool net_view_marks_init(net_view_marks *m, const world *w);
void net_view_marks_free(net_view_marks *m);
/* Marks the indexed bodies whose AABB overlaps box (touching counts). Several boxes may be marked
 * before one take: a body is reported once. */
void net_view_mark(const net_view_index *v, aabb box, net_view_marks *m);
/* net_view_mark of the movers only: the statics grid is not read. */
void net_view_mark_movers(const net_view_index *v, aabb box, net_view_marks *m);
/* Writes the marked bodies' entries in rank order (net_view_key ascending), at most max, and
 * clears the marks; returns how many were written. Valid until the next rebuild. */
size_t net_view_take(const net_view_index *v, net_view_marks *m, net_view_entry *out, size_t max);

#endif

/* world_internal: the world's private layout, shared by world.c and the white-box tests.
 * Nothing outside server/world and tests/world includes this. */
#ifndef COLLIDE_WORLD_INTERNAL_H
#define COLLIDE_WORLD_INTERNAL_H

#include "world.h"

/* A shape reference: the kind in the top two bits, a polygon pool index below (boxes and circles
 * need no pool entry: their AABB offsets say everything). */
#define WORLD_REF_KIND_SHIFT 30u
#define WORLD_REF_INDEX_MASK ((1u << WORLD_REF_KIND_SHIFT) - 1u)
#define WORLD_REF_NONE 0xffffffffu

/* Slot flags. */
#define WORLD_SLOT_SPAWNED 1u /* spawned since the last step: reported in the next changes */
#define WORLD_SLOT_RETIRED 2u /* generation exhausted: never handed out again */

/* Mover flags. */
#define WORLD_MOVER_CHECK_STATICS 1u /* spawned: may overlap a static, the discrete pass looks */

/* Most candidate movers one body considers in a tick's mover sweep; more are left to the
 * discrete pass (counted in world_stats.separations when they do overlap). */
#define WORLD_MAX_MOVER_CANDIDATES 256
/* A mover whose box spans more grid cells than this goes to the grid's "big" list. */
#define WORLD_GRID_MAX_CELLS_PER_ITEM 64
#define WORLD_MAX_LEVELS 24

typedef struct world_slot {
    uint32_t gen;   /* current generation (1..gen_max); the live id carries it */
    uint32_t index; /* index into statics[] or movers[] while alive */
    uint8_t kind;   /* 0 free, else a world_body_kind */
    uint8_t flags;  /* WORLD_SLOT_* */
} world_slot;

/* A static body: 44 bytes, the grid links through `next` so a static costs no extra entry. */
typedef struct world_static {
    aabb box;            /* world AABB; boxes use it directly as their shape */
    vec2 position;       /* the spawn position, returned exactly by world_body_get */
    uint32_t slot;       /* id slot */
    uint32_t shape;      /* shape reference (kind + polygon pool index) */
    int32_t next;        /* next static in the same grid cell, -1 at the end */
    uint32_t spawn_tick; /* its changed_tick, the step it first appears in (saturates at 2^32-1:
                          * 2.2 years at 60 Hz; 32 bits keep the record at 44 bytes) */
    uint32_t level;      /* grid level it lives in */
} world_static;

/* Most statics one near-cache entry remembers: a walk that finds more is not remembered. */
#define WORLD_NEAR_CACHE 7

/* What a mover's last walk of the level-0 cells found (step_alone): every static whose home cell
 * lies in a cell range, in walk order (row-major, then list order), so a later region whose cells
 * lie inside the range takes its near statics from here, in the order a walk would give them.
 * The range is kept as `area`, the floats whose cells lie in it (and inside the world's inner
 * bounds): a region inside `area` needs neither its cell coordinates nor the bounds test. */
typedef struct world_near_cache {
    aabb area;                         /* regions inside it: cells remembered (NaN for none) */
    uint32_t count;                    /* statics in the range (<= WORLD_NEAR_CACHE) */
    int32_t statics[WORLD_NEAR_CACHE]; /* their indices into statics[] */
} world_near_cache;

typedef struct world_mover {
    vec2 position;         /* current position */
    vec2 lo, hi;           /* AABB = position + [lo, hi] */
    vec2 intent;           /* desired velocity, clamped */
    vec2 velocity;         /* achieved in the last step */
    uint32_t slot;         /* id slot */
    uint32_t shape;        /* shape reference */
    uint32_t owner;        /* spawning client */
    uint32_t pending_seq;  /* newest input_seq received */
    uint32_t applied_seq;  /* input_seq applied in the last step */
    uint32_t flags;        /* WORLD_MOVER_* */
    uint64_t changed_tick; /* tick of the last change (see world_body_info) */
} world_mover;

/* One level of the static grid: a dense grid over the bounds; a static lives in exactly one cell
 * (the one holding its AABB's min corner) of the level whose cell is at least its size, so a
 * query reaches `extra` cells further on the min side instead of storing the static many times. */
typedef struct world_level {
    float cell;         /* cell size */
    float inv_cell;     /* 1 / cell */
    int32_t nx, ny;     /* cells per axis */
    int32_t extra;      /* how many cells past its home cell a static of this level reaches */
    uint32_t count;     /* statics in this level */
    int32_t *heads;     /* nx*ny heads of the cell lists, -1 when empty */
    uint64_t *occupied; /* a bit per cell: its list is not empty (small: stays in cache) */
} world_level;

/* A spatial hash over moving bodies, rebuilt from scratch (counting sort) when needed: mover
 * boxes change every tick, so rebuilding beats updating. Items are dense mover indices. */
typedef struct world_grid {
    vec2 origin;         /* bounds min: cell coordinates count from here */
    int32_t nx, ny;      /* cells across the bounds; coordinates are clamped to them */
    uint32_t row;        /* nx: the row stride of the cell numbering */
    float cell;          /* cell size, a power of two */
    float inv_cell;      /* 1 / cell */
    uint32_t mask;       /* table size - 1 for the current build */
    uint32_t table_cap;  /* allocated table size (power of two) */
    uint32_t *start;     /* table_cap + 1 bucket starts into items */
    uint32_t *items;     /* slots, grouped by bucket */
    uint32_t item_cap;   /* capacity of items */
    uint32_t *big;       /* slots too large for the cells, checked by every query */
    uint64_t *ranges;    /* per item: its cell range, x0 x1 y0 y1 in 16 bits each (build scratch) */
    uint32_t big_count;  /* entries in big */
    const aabb *boxes;   /* per dense index: the boxes built from (by reference) */
    bool valid;          /* built for the current state (plus `slack` and `unindexed`) */
    uint32_t *unindexed; /* slots of movers spawned after the build */
    uint32_t unindexed_count; /* entries in unindexed */
} world_grid;

/* Mutable state that const queries may use: the lazily built mover grid and a result buffer. */
typedef struct world_cache {
    world_grid grid;     /* mover grid (see world_grid) */
    uint32_t *results;   /* query results (slots) before sorting and deduplication */
    uint32_t result_cap; /* capacity of results */
} world_cache;

struct world {
    world_config cfg;   /* validated configuration */
    float dt;           /* 1 / tick_rate_hz */
    aabb inner_bounds;  /* bounds shrunk by the skin: a slide inside needs no bounds sweep */
    uint32_t capacity;  /* max bodies */
    uint32_t mover_cap; /* max moving bodies (<= capacity): sizes the mover arrays */
    uint32_t gen_bits;  /* id = slot << gen_bits | gen */
    uint32_t gen_max;   /* largest generation */
    uint64_t tick;      /* steps so far */
    bool static_checks_pending; /* a spawned mover still needs its push out of statics */
    bool movers_collide;        /* movers block each other (default true) */

    world_slot *slots;    /* capacity */
    uint32_t *free_slots; /* LIFO stack of free slots */
    uint32_t free_count;  /* entries in free_slots */

    world_static *statics; /* dense, capacity */
    uint32_t static_count; /* live statics */
    world_mover *movers;   /* dense, capacity */
    uint32_t mover_count;  /* live movers */

    geom_shape *polys;        /* polygon pool */
    uint32_t *free_polys;     /* free pool entries (stack) */
    uint32_t poly_cap;        /* pool capacity */
    uint32_t free_poly_count; /* entries in free_polys */

    world_level levels[WORLD_MAX_LEVELS]; /* static grid levels, finest first */
    int level_count;                      /* levels in use */
    int active_levels[WORLD_MAX_LEVELS];  /* levels holding statics, finest first */
    int active_level_count;               /* entries in active_levels */
    bool statics_in_finest;  /* every static sits in level 0 (slide_alone's condition) */
    uint32_t nonbox_statics; /* statics that are circles or polygons (a box among boxes only
                              * ever meets axis normals: see the pinned skip in world_step) */

    /* per-step scratch, indexed by dense mover index */
    vec2 *p0;                     /* position at the start of the step */
    vec2 *d1;                     /* displacement after the static-only pass */
    aabb *path;                   /* AABB of the static-only path */
    vec2 *p2;                     /* position after the mover pass */
    world_near_cache *near_cache; /* per dense mover index: the statics of a level-0 cell range
                                   * its last walk found; a fact about cells (any mover may use
                                   * any entry), void once a static is linked or unlinked */
    bool near_cache_stale;        /* a static was linked or unlinked since near_cache was last
                                   * cleared */

    /* change tracking */
    uint64_t *moved_bits; /* capacity bits, by slot */
    uint64_t *spawn_bits; /* capacity bits, by slot: filled when the step closes */
    world_body_id *moved; /* lists handed out by world_last_changes */
    world_body_id *spawned;
    world_body_id *despawned;
    size_t moved_count, spawned_count, despawned_count; /* lengths of the lists above */
    world_body_id *pending_despawned; /* despawns since the last step (of bodies that existed) */
    size_t pending_despawned_count;   /* entries in pending_despawned */
    uint32_t *pending_spawned;        /* slots spawned since the last step */
    size_t pending_spawned_count;     /* entries in pending_spawned */

    world_cache *cache;     /* mutable from const queries */
    uint32_t (*pairs)[2];   /* mover pairs (dense indices) for the mover and discrete passes */
    uint32_t pair_count;    /* entries in pairs */
    uint32_t pair_cap;      /* capacity of pairs (4 per mover) */
    uint32_t *adj;          /* mover pass: the pair partners of each mover, grouped by mover */
    uint32_t *adj_start;    /* mover_cap + 1 starts into adj */
    uint8_t *pushed;        /* discrete pass: per dense index, pushed in this pass */
    uint32_t *sort_counts;  /* spatial sort of movers: tile counts */
    uint32_t sort_tile_cap; /* tiles sort_counts holds (a finer grid is not sorted) */

    uint64_t swept_hits, separations, jammed; /* world_stats counters */
    world_body_id jams[WORLD_MAX_JAM_REPORT]
                      [2]; /* the last step's jammed pairs (world_last_jams) */
    uint32_t jam_count;    /* pairs the last step jammed, stored or not */
    size_t bytes;          /* memory owned */
};

#endif

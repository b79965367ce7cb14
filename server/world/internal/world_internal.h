/* world_internal: the world's private layout and the helpers every world_*.c file shares: the
 * struct, the id-slot and shape-reference helpers, the per-step scratch arrays and who owns them,
 * and the assertion switch. Nothing outside server/world includes this.
 *
 * One mechanism per file (COLLISION.md describes the tick):
 *   world.c           create/destroy, spawn/despawn/intent, getters, stats, state hash, validate
 *   world_statics.c   the static grid (multi-level, one cell list per static) and its cell walk
 *   world_movers.c    the mover hash (rebuilt per tick), its pairs, the spatial sort of movers
 *   world_pair.h      narrow-phase dispatch: the box fast path, else geom
 *   world_slide.c     collide-and-slide: the general slide and its fast paths, side by side
 *   world_separate.c  the discrete pass (I2, I3)
 *   world_step.c      the tick: the mover pass, change tracking and the body table
 *   world_events.c    contact and sensor events (step 4), when turned on
 *   world_query.c     AABB/box queries, ray casts and the game queries (rays, overlaps, casts)
 *   world_history.c   the ring of past mover states the game queries rewind to
 *   world_turn.c      rotation: a turning mover's move-and-turn up to its first contact
 *   world_one_way.c   one-way bodies: which pairs they block in a tick, and for rays and casts
 *   world_character.c characters: gravity, jumps, walking on slopes and steps, the carry
 *   world_character_api.c  characters' part of world.h: options and their bounds, jumps, state
 *   world_character_alone.c  characters where movers ignore each other: one walk, a fused step
 *   world_predict.c   what a client's prediction needs: a body's whole state saved and restored,
 *                     a body placed where a snapshot put it
 *   world_load.c      the JSON world file loader (links jansson; the only file reader)
 *
 * Layout, and why:
 *   - Statics are stored once, compactly (44 bytes), in a multi-level grid: a static lives in the
 *     one cell holding its AABB min corner, at the level whose cells are at least its size. A
 *     query reaches back `extra` cells on the min side. No per-cell entry pool to run out of, and
 *     a 1x1 tile on a cell-1 grid costs one list link.
 *   - A sweep walks its path in chunks of one cell length (a DDA over the swept footprint), and
 *     stops as soon as the best hit lies before the next chunk; cells already seen in the previous
 *     chunk are skipped. Fast bodies therefore visit only cells along their path.
 *   - A short move (under a cell) gathers its few statics once for all its slide iterations.
 *   - Boxes (the common case) take an AABB fast path; every other pair goes through geom.
 *   - Movers that collide: a spatial hash (row-major cell numbering, counting-sort rebuild each
 *     tick, dense mover indices) over each mover's expected path. Each mover then slides once,
 *     in order, against statics, bounds and the movers near its path: those already moved stand
 *     where they ended, the others move along their expected displacement, so two bodies meeting
 *     head-on meet in the middle whatever their order (relative motion, I7). Expected path: a
 *     slow mover's intent if new, else its last achieved velocity; a fast mover's slide against
 *     statics alone (kept as its result unless a neighbour is in its way).
 *   - A discrete pass then separates what still overlaps (pairs from the mover pass), pushing
 *     with collide-and-slide against statics so a push never goes through one (I2); what cannot
 *     be separated in the allotted passes is pinned, and is reported as jammed (I3).
 *   - Movers are re-sorted by space every few ticks (stable counting sort): neighbours in space
 *     are neighbours in memory, which keeps every walk over them cache-friendly.
 *   - Everything is float32 and processed in a deterministic order (I6).
 *   - What changed goes out through one mechanism, the body table (world_body_table, Box2D's move
 *     events as one dense array): the step only marks bits by slot (moved_bits as movers finish,
 *     spawn_bits and despawn_bits as it closes, the despawned generation and kind kept in the
 *     slot), and the first read walks those bits once, in slot order, into rows, then puts
 *     them in id order (a no-op check while every changed body has the same generation). A step
 * nobody reads the table of costs its marks alone (bench_world never reads it); the reader pays
 * O(words + rows). The rows are allocated by the first read, not by world_create: 2 x capacity rows
 * of 64 bytes would break the bytes-per-static budget of a world that never reads them. */
#ifndef COLLIDE_WORLD_INTERNAL_H
#define COLLIDE_WORLD_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

/* COLLIDE_ASSERT (common/collide_assert.h) guards the world's cross-module invariants (grid links,
 * the dense index, ids, scratch ownership). On in the checked builds and in the fast-paths-off
 * library the equality test runs (so Release CI runs them too); off in the Release daemon. */
#include "collide_assert.h"

/* WORLD_FAST_PATHS: 1 (the default) takes the specialised paths that must give bit-identical
 * results to the general code (the box-among-boxes slide, the S1a loop with its remembered
 * statics, the gathered statics of a short slide, the bounds skip). 0
 * compiles them out: the library test_world_fastpaths runs against the default one, over random
 * scenes, and the state hashes must be equal. */
#ifndef WORLD_FAST_PATHS
#define WORLD_FAST_PATHS 1
#endif

/* A shape reference: the kind in the top two bits, a polygon pool index below (boxes and circles
 * need no pool entry: their AABB offsets say everything). */
#define WORLD_REF_KIND_SHIFT 30u
#define WORLD_REF_INDEX_MASK ((1u << WORLD_REF_KIND_SHIFT) - 1u)
#define WORLD_REF_NONE 0xffffffffu
/* Kind 0: a turned body (world_turn). Its index is the body's slot; the shape it collides with is
 * its body-local shape turned by the slot's cos/sin, built by ref_shape at each use (nothing is
 * re-baked). Every fast path tests for GEOM_SHAPE_BOX, so a turned body takes the general ones. */
#define WORLD_REF_TURNED 0u

/* Slot flags. */
#define WORLD_SLOT_SPAWNED 1u /* spawned since the last step: reported in the next table */
#define WORLD_SLOT_RETIRED 2u /* generation exhausted: never handed out again */

/* Mover flags. */
#define WORLD_MOVER_CHECK_STATICS 1u /* spawned: may overlap a static, the discrete pass looks */
#define WORLD_MOVER_HAS_INPUT 2u     /* an intent was accepted: pending_seq is a real input_seq */

/* Most candidate movers one body considers in a tick's mover sweep; more are left to the
 * discrete pass (counted in world_stats.separations when they do overlap). */
#define WORLD_MAX_MOVER_CANDIDATES 256
/* A mover whose box spans more grid cells than this goes to the grid's "big" list. */
#define WORLD_GRID_MAX_CELLS_PER_ITEM 64
#define WORLD_MAX_LEVELS 24

typedef struct world_slot {
    uint32_t gen;      /* current generation (1..gen_max); the live id carries it */
    uint32_t index;    /* index into statics[] or movers[] while alive */
    uint8_t kind;      /* 0 free, else a world_body_kind */
    uint8_t flags;     /* WORLD_SLOT_* */
    uint8_t dead_kind; /* kind of the body despawned from it since the last step (table row) */
    uint32_t dead_gen; /* its generation: the id the table reports despawned */
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
    uint64_t changed_tick; /* tick of the last change (see world_body_row) */
} world_mover;

/* A body that turned or was spawned at an angle (per slot, world.turns). */
typedef struct world_turn {
    vec2 q;         /* (cos angle, sin angle) as geom_turn_start gives them (the advancement
                     * starts from it, so it is not taken again each tick) */
    float angle;    /* radians, in [-pi, pi] */
    float spin;     /* turning intent, rad/s, clamped to max_angular_speed */
    float ang_vel;  /* achieved in the last step, rad/s */
    float radius;   /* farthest point of the local shape from the body origin (what it turns
                     * about): the angular term of conservative advancement */
    vec2 half;      /* the local box's half extents, or the circle's radius in x */
    uint32_t local; /* the body-local shape: kind + polygon pool index (a polygon keeps its
                     * spawn-time pool entry as its local shape) */
    uint32_t in_use;
} world_turn;

/* A tick of world_turn_step_alone that left a turning body where it stood, unturned (pressed into
 * a tile or a corner), per slot beside its turn record (which keeps its size: the general slide's
 * code reads it): the next tick from the same inputs gives the same answer (a mover that ignores
 * the others reads only its own state and the statics), so while it stands there, its turning
 * speed 0, its intent, turning intent and angle not changed since (each change clears epoch:
 * world_set_intent, turn_begin, the tick that turns it) and no static was linked or unlinked
 * (world.statics_epoch), it is done without a slide. */
typedef struct world_turn_still {
    vec2 pos;       /* where it stood */
    uint32_t epoch; /* world.statics_epoch then; 0: none */
    uint32_t hits;  /* the hits its slide counted (world_stats.swept_hits) */
} world_turn_still;

/* A one-way body's flag, and every mover's state at the start of the step (world_one_way.c), per
 * slot: what decides whether a one-way body blocks a mover in the step, fixed for the whole step
 * (the slide's iterations, the separation pass and the contacts all get the same answer). */
typedef struct world_one_way_slot {
    vec2 start;  /* a mover's position at the step's start */
    vec2 q;      /* its (cos, sin) then; (1, 0) unturned */
    vec2 disp;   /* its intended displacement in the step (intent x dt) */
    uint32_t on; /* the body is one-way */
} world_one_way_slot;

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

/* Contact tracking's notes of each mover's slide in the step (world_events_noted): the
 * arrays are world_events.c's, per dense mover index; valid while they hold every mover of the
 * step (events on, and no allocation failed). */
#define WORLD_EVENTS_NEAR 4u        /* statics noted per mover at most */
#define WORLD_EVENTS_NOTED 4u       /* changed[i]: its slide noted its statics in this step */
#define WORLD_EVENTS_NOTED_SHIFT 4u /* changed[i]: how many, in the bits from here up */
/* One mover's note, the region and its statics side by side (32 bytes: one read of a line). */
typedef struct world_event_note {
    aabb region;                      /* the region the slide walked */
    uint32_t near[WORLD_EVENTS_NEAR]; /* the statics it found there (indices into statics) */
} world_event_note;
typedef struct world_event_notes {
    world_event_note *note;            /* per dense mover index */
    uint8_t *changed;                  /* world_events.c's flags, WORLD_EVENTS_NOTED among them */
    bool valid;                        /* the arrays may be written */
    uint32_t spill[WORLD_EVENTS_NEAR]; /* where a slide writes its statics while not valid */
} world_event_notes;

/* Mutable state that const queries may use: the lazily built mover grid and a result buffer. */
typedef struct world_cache {
    world_grid grid;      /* mover grid (see world_grid) */
    uint32_t *results;    /* query results (slots) before sorting and deduplication */
    uint32_t result_cap;  /* capacity of results */
    world_body_row *rows; /* the body table, allocated by its first read (2 x capacity rows: each
                           * slot may hold a live body and name one despawned since the step) */
    uint64_t *row_keys;   /* with rows: 2 x 2 x capacity sort keys (generation, row), for the
                           * id order of rows of mixed generations (world_table_build) */
    size_t row_count;     /* rows of the last step's table, once built */
    bool rows_built;      /* rows describe the last step (cleared by world_step) */
} world_cache;
/* The table is read every tick by the daemon: a field added to the one body record is paid per
 * changed body per tick, and twice per slot in world_stats.bytes. */
_Static_assert(sizeof(world_body_row) == 64,
               "world_body_row is the per-tick row: keep it 64 bytes");

/* The per-step scratch arrays (dense mover index unless said), and which phase owns which:
 * several change meaning from phase to phase, so each use names its owner and, with asserts on,
 * checks that no other phase holds it.
 *   p0, d1, p2       the mover pass: start, expected displacement, end of its slide; p2 is read by
 *                    the separation of the same step, p0 by step 4
 *   path             boxes the mover grid is built from, kept by reference (world_grid.boxes):
 *                    the mover pass's expected paths, or the current boxes (a query's grid, the
 *                    discrete pass's rebuild). Written only while the grid is not valid over it.
 *   pairs            WORLD_OWNER_SORT: keys and the permutation of the spatial sort;
 *                    WORLD_OWNER_PAIRS: mover pairs, from the mover pass through the discrete pass
 *   adj, adj_start   WORLD_OWNER_PAIRS: the mover pass's adjacency lists; then
 *                    WORLD_OWNER_SEPARATE: the discrete pass's list of bodies pushed in a pass
 *   pushed           the discrete pass: per body, WORLD_PUSHED_* bits
 *   sort_counts      the spatial sort: tile counts */
typedef enum world_owner {
    WORLD_OWNER_FREE = 0,
    WORLD_OWNER_SORT,     /* sort_movers */
    WORLD_OWNER_PAIRS,    /* the pair list and adjacency of this step's mover grid */
    WORLD_OWNER_SEPARATE, /* the discrete pass */
} world_owner;

typedef enum world_scratch_array {
    WORLD_SCRATCH_PAIRS,
    WORLD_SCRATCH_ADJ,
    WORLD_SCRATCH_COUNT,
} world_scratch_array;

typedef struct world_scratch {
    vec2 *p0;               /* position at the start of the step */
    vec2 *d1;               /* displacement after the static-only pass */
    aabb *path;             /* AABB of the static-only path (see above) */
    vec2 *p2;               /* position after the mover pass */
    uint32_t (*pairs)[2];   /* mover pairs (dense indices) for the mover and discrete passes */
    uint32_t pair_count;    /* entries in pairs */
    uint32_t pair_cap;      /* capacity of pairs (4 per mover) */
    uint32_t *adj;          /* mover pass: the pair partners of each mover, grouped by mover */
    uint32_t *adj_start;    /* mover_cap + 1 starts into adj */
    uint8_t *pushed;        /* discrete pass: per dense index, pushed in this pass */
    uint32_t *sort_counts;  /* spatial sort of movers: tile counts */
    uint32_t sort_tile_cap; /* tiles sort_counts holds (a finer grid is not sorted) */
    uint8_t owner[WORLD_SCRATCH_COUNT]; /* world_owner of each shared array (asserts only) */
} world_scratch;

struct world {
    world_config cfg;       /* validated configuration */
    float dt;               /* 1 / tick_rate_hz */
    aabb inner_bounds;      /* bounds shrunk by the skin: a slide inside needs no bounds sweep */
    uint32_t capacity;      /* max bodies */
    uint32_t mover_cap;     /* max moving bodies (<= capacity): sizes the mover arrays */
    uint32_t slot_bits;     /* id = gen << slot_bits | slot: see make_id */
    uint32_t gen_max;       /* largest generation */
    uint64_t spawns;        /* bodies ever spawned: each took one generation of one slot */
    uint32_t slots_retired; /* slots whose generation ran out (WORLD_SLOT_RETIRED) */
    uint64_t tick;          /* steps so far */
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

    world_near_cache *near_cache; /* per dense mover index: the statics of a level-0 cell range
                                   * its last walk found; a fact about cells (any mover may use
                                   * any entry), void once a static is linked or unlinked */
    uint32_t near_cache_epoch;    /* statics_epoch when near_cache was last cleared: another
                                   * value, a static was linked or unlinked since */
    uint32_t near_cache_used;     /* entries [0, used) are initialised; past it never touched, so
                                   * a world's memory follows its movers, not its capacity (a
                                   * daemon holds many worlds: issue 13) */

    /* change tracking: what the body table (world_body_table) is built from, a bit per slot */
    uint64_t *moved_bits;           /* movers the last step changed */
    uint64_t *spawn_bits;           /* bodies the last step showed first (filled as it closes) */
    uint64_t *despawn_bits;         /* bodies despawned before the last step (slot dead_gen) */
    uint64_t *pending_despawn_bits; /* despawned since the last step, of bodies a step showed */
    uint32_t *pending_spawned;      /* slots spawned since the last step */
    size_t pending_spawned_count;   /* entries in pending_spawned */
    uint64_t mover_despawns;        /* movers despawned so far: a history frame recorded at the
                                     * same count names only live movers (world_history.h) */
    uint64_t mover_sorts;           /* spatial re-sorts of the movers so far: with mover_despawns
                                     * and mover_count, says whether dense indices moved */

    world_filter *filters;   /* per slot, NULL until the first non-default filter (world.h) */
    uint32_t filtered_count; /* live bodies whose filter is not the default: while 0 the step
                              * takes its filter-free fast paths, bit-identical to the general
                              * ones, so S1 costs what it cost before filters existed */

    world_turn *turns;     /* per slot, NULL until the first turned body (world_spawn_turned,
                            * world_set_intent_turning): a world that never turns pays nothing */
    uint32_t turning_hint; /* movers that may turn or have turned in the last step (an upper
                            * bound, recounted by each step): 0 keeps the step's non-turning
                            * fast paths */

    uint32_t sensor_count;       /* live sensors */
    struct world_events *events; /* contact and sensor tracking, NULL while off (world_events.c) */
    world_event_notes event_notes; /* its notes of the slides (invalid while off) */

    struct world_history *history; /* past mover states for queries (NULL: none kept) */
    world_cache *cache;            /* mutable from const queries */
    world_scratch scratch;         /* per-step arrays, and which phase owns each (world_scratch) */
    uint64_t swept_hits, separations, jammed; /* world_stats counters */
    world_body_id jams[WORLD_MAX_JAM_REPORT]
                      [2];        /* the last step's jammed pairs (world_last_jams) */
    uint32_t jam_count;           /* pairs the last step jammed, stored or not */
    uint32_t statics_epoch;       /* counts the statics linked or unlinked (never 0: 0 is no
                                   * world_turn_still.epoch); here, in a hole before `bytes`, so no
                                   * other field moves */
    size_t bytes;                 /* memory owned */
    world_turn_still *turn_still; /* per slot, allocated with turns (last: no other field moves) */
    world_one_way_slot *one_way;  /* per slot, NULL until the first one-way body */
    uint32_t one_way_count;       /* live one-way bodies: while 0 the step takes exactly the paths
                                   * it took before one-way bodies existed */
    struct world_character *characters; /* per slot, NULL until the first character */
    uint32_t character_count;           /* live characters: while 0 (or without gravity) the
                                         * step takes the paths it took before characters */
    uint32_t rules_epoch; /* counts changes of filters and one-way flags (what a character's
                           * still memo reads besides the statics) */
};

/* ---- constants the files share ----------------------------------------------------------- */

/* Query boxes grow by this so contacts at exactly a cell border or within the skin are seen. */
#define WORLD_QUERY_MARGIN (4.0f * GEOM_SKIN)
/* A contact gap short of the skin by more than this is restored by the slide (slide_respond):
 * far above the float rounding of positions up to ~100 (1e-5), far below the skin. */
#define WORLD_SKIN_RESTORE (0.01f * GEOM_SKIN)
#define WORLD_NO_HIT 2.0f
/* Mover pairs closer than this are checked by the discrete pass (pushes move bodies a little). */
#define WORLD_PAIR_MARGIN 0.05f
/* Ticks between spatial re-sorts of the mover array. */
#define WORLD_SORT_INTERVAL 16
/* The discrete pass's grid holds each box grown by this, so small pushes keep bodies findable. */
#define WORLD_PUSH_ALLOWANCE 0.1f
#define WORLD_PUSHED_NOW 1u     /* pushed in the current pass */
#define WORLD_PUSHED_ESCAPED 2u /* moved out of its grid box: on the unindexed list */
/* More bodies than this off the grid and it is rebuilt. */
#define WORLD_MAX_UNINDEXED 64u
/* Movers off their expected path that later movers check by hand, per tick (more wait for the
 * discrete pass). */
#define WORLD_MAX_LATE 256u

/* ---- small helpers ----------------------------------------------------------------------- */

/* Small functions of the per-body loop: inlined whatever the compiler's budget says. */
#if defined(__GNUC__)
#define WORLD_HOT static inline __attribute__((always_inline))
#else
#define WORLD_HOT static inline
#endif

/* Plain compares: fminf/fmaxf carry NaN rules that make gcc call libm; our inputs are finite. */
static inline float wmin(float a, float b) { return a < b ? a : b; }
static inline float wmax(float a, float b) { return a > b ? a : b; }
/* ceil to int without a libm call (no SSE4.1 roundss at the baseline ISA). */
static inline int32_t iceil(float f) {
    int32_t i = (int32_t)f;
    return i + (f > (float)i);
}

static inline uint32_t ref_kind(uint32_t ref) { return ref >> WORLD_REF_KIND_SHIFT; }
static inline uint32_t ref_index(uint32_t ref) { return ref & WORLD_REF_INDEX_MASK; }
static inline aabb box_at(vec2 p, vec2 lo, vec2 hi) {
    return aabb_make(v2_add(p, lo), v2_add(p, hi));
}
/* The box around the disc of radius r at p: where a shape of that radius about p reaches at any
 * angle (a turning body's reach). */
static inline aabb disc_box(vec2 p, float r) {
    return aabb_make(v2(p.x - r, p.y - r), v2(p.x + r, p.y + r));
}
static inline bool vec_eq(vec2 a, vec2 b) { return memcmp(&a, &b, sizeof a) == 0; }

/* id = ((gen - 1) << slot_bits | slot) + 1: the generation (1..gen_max) sits above the slot, so a
 * body of a slot's first generation (most of a game's) has the id slot + 1. Neighbours' ids are
 * close: a quantized snapshot's id gaps (Snapshot.packed, ascending id order) and a MoveIntent's
 * body_id take one or two varint bytes rather than three. Ascending id order is ascending slot
 * order only within one generation: whatever promises id order (the body table,
 * world_query_aabb, a contact's a and b) compares ids, not slots. Never 0 (WORLD_NULL_BODY), and
 * gen <= gen_max = 2^(32 - slot_bits) - 1 keeps the largest id below 2^32. */
static inline world_body_id make_id(const world *w, uint32_t slot, uint32_t gen) {
    return (((gen - 1u) << w->slot_bits) | slot) + 1u;
}

/* The slot an id names, live or not (no check); id must not be 0. */
static inline uint32_t id_slot_bits(const world *w, world_body_id id) {
    return (id - 1u) & (uint32_t)((1ull << w->slot_bits) - 1u);
}

/* The slot of a live id, or UINT32_MAX. */
static inline uint32_t id_slot(const world *w, world_body_id id) {
    if (id == WORLD_NULL_BODY) return UINT32_MAX;
    uint32_t gen = (uint32_t)((uint64_t)(id - 1u) >> w->slot_bits) + 1u;
    uint32_t slot = id_slot_bits(w, id);
    if (gen > w->gen_max || slot >= w->capacity) return UINT32_MAX;
    const world_slot *s = &w->slots[slot];
    if (s->kind == 0 || s->gen != gen) return UINT32_MAX;
    /* a live id names a body in the dense arrays */
    COLLIDE_ASSERT(s->index < (s->kind == WORLD_BODY_STATIC ? w->static_count : w->mover_count));
    return slot;
}

static inline world_body_id slot_id(const world *w, uint32_t slot) {
    return make_id(w, slot, w->slots[slot].gen);
}

/* The body-local shape of a turned body: boxes and circles into tmp, polygons from the pool. */
static inline const geom_shape *turn_local(const world *w, const world_turn *t, geom_shape *tmp) {
    switch (ref_kind(t->local)) {
    case GEOM_SHAPE_BOX:
        tmp->kind = GEOM_SHAPE_BOX;
        tmp->u.half_extents = t->half;
        return tmp;
    case GEOM_SHAPE_CIRCLE:
        tmp->kind = GEOM_SHAPE_CIRCLE;
        tmp->u.radius = t->half.x;
        return tmp;
    default:
        return &w->polys[ref_index(t->local)];
    }
}

/* Builds a geom_shape for a reference; boxes and circles into tmp, polygons from the pool, a
 * turned body's local shape turned by its cos/sin into tmp. */
static inline const geom_shape *ref_shape(const world *w, uint32_t ref, vec2 hi, geom_shape *tmp) {
    switch (ref_kind(ref)) {
    case WORLD_REF_TURNED: {
        const world_turn *t = &w->turns[ref_index(ref)];
        geom_shape l;
        geom_shape_orient(turn_local(w, t, &l), t->q, tmp);
        return tmp;
    }
    case GEOM_SHAPE_BOX:
        tmp->kind = GEOM_SHAPE_BOX;
        tmp->u.half_extents = hi;
        return tmp;
    case GEOM_SHAPE_CIRCLE:
        tmp->kind = GEOM_SHAPE_CIRCLE;
        tmp->u.radius = hi.x;
        return tmp;
    default:
        return &w->polys[ref_index(ref)];
    }
}

static inline vec2 static_hi(const world_static *s) { return v2_sub(s->box.max, s->position); }

/* Step 4 for one mover: its new position, achieved velocity, applied sequence, change bit. */
WORLD_HOT void finish_mover(world *w, uint32_t i, vec2 start, vec2 end) {
    world_mover *m = &w->movers[i];
    vec2 vel = v2_scale(v2_sub(end, start), w->cfg.tick_rate_hz);
    bool changed =
        !vec_eq(end, start) || !vec_eq(vel, m->velocity) || m->applied_seq != m->pending_seq;
    m->position = end;
    m->velocity = vel;
    m->applied_seq = m->pending_seq;
    if (changed) {
        m->changed_tick = w->tick;
        w->moved_bits[m->slot >> 6] |= 1ull << (m->slot & 63);
    }
}

/* ---- filters (world_body_set_filter) ------------------------------------------------------ */

static inline bool filter_is_default(const world_filter *f) {
    return f->category == WORLD_DEFAULT_CATEGORY && f->mask == WORLD_DEFAULT_MASK && !f->sensor;
}
/* Whether the bodies of two slots interact (events and sensors), sensors or not. */
static inline bool slots_interact(const world *w, uint32_t a, uint32_t b) {
    if (!w->filtered_count) return true;
    return world_filters_interact(&w->filters[a], &w->filters[b]);
}
static inline bool slot_is_sensor(const world *w, uint32_t slot) {
    return w->filtered_count && w->filters[slot].sensor;
}
/* Whether the filters of two slots let them block each other: they interact and neither is a
 * sensor (one-way bodies aside: slots_block). */
static inline bool slots_filter_block(const world *w, uint32_t a, uint32_t b) {
    if (!w->filtered_count) return true;
    const world_filter *fa = &w->filters[a], *fb = &w->filters[b];
    return !fa->sensor && !fb->sensor && world_filters_interact(fa, fb);
}
/* Whether a one-way body of the pair lets the other through in this step (world_one_way.c). */
bool world_one_way_pair_blocks(const world *w, uint32_t a, uint32_t b);
/* Whether the bodies of two slots block each other in this step: their filters let them, and each
 * one-way body of the pair blocks the other (world_one_way.c). */
static inline bool slots_block(const world *w, uint32_t a, uint32_t b) {
    if (!(w->filtered_count | w->one_way_count)) return true;
    return slots_filter_block(w, a, b) && (!w->one_way_count || world_one_way_pair_blocks(w, a, b));
}
/* A zeroed array of count elements, counted in the world's bytes (world_get_stats). */
void *world_alloc(world *w, size_t count, size_t size);
/* Whether the step's fast paths, which know neither filters nor one-way bodies, may run. */
static inline bool world_pair_rules(const world *w) {
    return (w->filtered_count | w->one_way_count) != 0;
}

/* ---- scratch ownership (see world_scratch) ----------------------------------------------- */

/* Phase `to` takes array a, which must be free or already held by `from`. */
static inline void scratch_take(world *w, world_scratch_array a, world_owner from, world_owner to) {
    COLLIDE_ASSERT(w->scratch.owner[a] == WORLD_OWNER_FREE || w->scratch.owner[a] == from);
#if COLLIDE_ASSERTS
    w->scratch.owner[a] = (uint8_t)to;
#else
    (void)w, (void)a, (void)from, (void)to;
#endif
}
/* Checks that phase `who` holds array a. */
static inline void scratch_held(const world *w, world_scratch_array a, world_owner who) {
    COLLIDE_ASSERT(w->scratch.owner[a] == who);
    (void)w, (void)a, (void)who;
}
/* Phase `who` gives array a back. */
static inline void scratch_give(world *w, world_scratch_array a, world_owner who) {
    scratch_held(w, a, who);
#if COLLIDE_ASSERTS
    w->scratch.owner[a] = WORLD_OWNER_FREE;
#endif
}

/* ---- shared between the world_*.c files -------------------------------------------------- */

/* The per-slot turn table (world.turns, world.turn_still), allocated by the first turned body;
 * false when that allocation fails (world.c). */
bool world_turns_ready(world *w);
/* Makes the body of `slot`, whose shape reference is `ref`, a turned one at angle (q): its
 * reference becomes WORLD_REF_TURNED | slot and its local shape is kept in the turn record; the
 * caller sets the mover's AABB offsets (world.c; world_predict.c places a body at an angle). */
uint32_t world_turn_begin(world *w, uint32_t slot, uint32_t ref, const geom_shape *local,
                          float angle);

/* An angle in [-pi, pi] (IEEE remainder: exact, so the same on every machine). */
static inline float world_wrap_angle(float a) {
    /* within half a turn remainderf returns a itself (the quotient rounds to 0, a tie to even):
     * no libm call for the common case of a tick's small turn */
    if (fabsf(a) <= 0.5f * 6.28318531f) return a;
    return remainderf(a, 6.28318531f);
}

/* Whether mover m turns this step, or turned in the last one (so its achieved turning speed
 * goes back to 0). */
static inline bool mover_turning(const world *w, const world_mover *m) {
    if (!w->turning_hint || ref_kind(m->shape) != WORLD_REF_TURNED) return false;
    const world_turn *t = &w->turns[m->slot];
    return t->spin != 0.0f || t->ang_vel != 0.0f;
}

/* In-place heapsort of ids or slots (world.c). */
void world_sort_u32(uint32_t *v, size_t n);
/* Contact and sensor events (world_events.c): the step's start (sensors' sweeps need where each
 * mover began) and its end (after step 4, with the change bits of the step set). start_noted:
 * the step writes each mover's start into scratch.p0 before its end, so events copy none. */
void world_events_begin_step(world *w, bool start_noted);
void world_events_end_step(world *w);
/* The mover pass's pairs, right after world_grid_pairs: contact tracking takes each mover's mover
 * partners from them instead of querying the grid again. */
void world_events_note_pairs(world *w);
/* The mover grid is about to be rebuilt over scratch.path: contact tracking copies the mover
 * pass's path boxes first, if it still reads them there (world_grid_build_current). */
void world_events_keep_path(const world *w);
/* The statics of level 0 overlapping a region, found by a slide of the mover of dense index mi
 * (every one, in the static grid's walk order): contact tracking takes the mover's statics from
 * them when its final box grown by the begin gap lies in the region. In two halves around the
 * slide's own walk, which writes the index of each static it finds, the first WORLD_EVENTS_NEAR
 * of them, at world_events_note_at (no copy); world_events_noted marks the note when they all fit.
 * Inline: every slide of a box among boxes calls them while events are on. */
static inline uint32_t *world_events_note_at(world *w, uint32_t mi) {
    world_event_notes *notes = &w->event_notes;
    if (!notes->valid) return notes->spill;
    /* A mover may slide again in the step (a push of the separation pass): this walk writes over
     * the statics an earlier slide noted, and may end without noting its own (more than fit, or
     * a shape that sends it to the general slide). Unmarked until world_events_noted marks it
     * again, so the search never reads the earlier mark with these statics. A store of 0: in
     * the step the byte holds the mark alone (world_events_begin_step cleared it; the search's
     * own bits come after the step). */
    notes->changed[mi] = 0;
    return notes->note[mi].near;
}
static inline void world_events_noted(world *w, uint32_t mi, aabb region, uint32_t count) {
    world_event_notes *notes = &w->event_notes;
    if (!notes->valid || count > WORLD_EVENTS_NEAR) return;
    notes->note[mi].region = region;
    notes->changed[mi] = (uint8_t)(WORLD_EVENTS_NOTED | count << WORLD_EVENTS_NOTED_SHIFT);
}
void world_events_free(world *w);
/* One-way bodies (world_one_way.c): notes each mover's start of the step (while any one-way body
 * lives); a despawn clears its slot's flag; a ray or cast of direction d reaches the body of slot
 * at pos (angle q: (1, 0) unturned) only when d runs against its up direction. */
void world_one_way_begin_step(world *w);
void world_one_way_despawn(world *w, uint32_t slot);
bool world_one_way_ray_passes(const world *w, uint32_t slot, vec2 q, vec2 d);
/* Whether the body of slot b, at bpos, can bear the mover of slot a at apos: b is not one-way, or
 * a lies wholly on its up side, within the skin (the ground probe of characters). */
bool world_one_way_bears(const world *w, uint32_t a, vec2 apos, uint32_t b, vec2 bpos);
/* Whether the mover of slot a lay wholly on the up side of the one-way body of slot b (within the
 * skin) at the step's start; *up becomes b's up direction. The rule's first half, for a caller
 * that judges the motion itself (a character's sweeps judge each sweep's own motion). */
bool world_one_way_above(const world *w, uint32_t a, uint32_t b, vec2 *up);
/* The next step looks for new pairs around every body, not only the ones that moved (a static
 * spawned, a filter changed). */
void world_events_rescan(world *w);
uint64_t world_events_lost(const world *w);
/* Builds the last step's body table into cache->rows, which must be allocated (world_step.c). */
void world_table_build(const world *w);

#endif

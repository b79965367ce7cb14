/* world: the authoritative simulation collided drives (COLLISION.md).
 *
 * No I/O, no clock, no libuv, no protobuf-c: the tick is driven from outside with world_step(), so
 * the world is testable and benchmarkable headless, and a game client may link it for prediction.
 * Callers hold body ids, never pointers into world storage.
 *
 * Allocation happens in world_create() (capacity is fixed there) and in the loader; spawn, despawn,
 * intents, queries and world_step() do not allocate, with three opt-in exceptions: the first
 * non-default filter (world_body_set_filter) allocates the filter table once, a step with events
 * on (world_set_events) grows the pair sets and event lists as pairs come, and a step with a
 * query history (world_set_history) grows it with the most movers it has recorded.
 *
 * Not thread-safe, queries included: const queries share a lazily rebuilt mover index and a
 * result buffer inside the world. Use one thread per world (the daemon's loop does). */
#ifndef COLLIDE_WORLD_H
#define COLLIDE_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A generational body id. 0 is never a valid id. A despawned id stays stale forever: its slot is
 * reused only with a new generation, and a slot whose generation would wrap is retired. */
typedef uint32_t world_body_id;
#define WORLD_NULL_BODY 0u

typedef enum world_body_kind {
    WORLD_BODY_STATIC = 1, /* never moves, belongs to the world */
    WORLD_BODY_MOVING = 2, /* driven by intents */
} world_body_kind;

typedef enum world_status {
    WORLD_OK = 0,
    WORLD_STALE_INPUT,         /* intent ignored: its input_seq is not newer (not an error) */
    WORLD_ERR_INVALID_SHAPE,   /* see the geom_shape_error for the reason */
    WORLD_ERR_OUT_OF_BOUNDS,   /* position outside the bounds; a static (or any shape wider than the
                                * world) must fit inside; a mover poking through is shifted in */
    WORLD_ERR_FULL,            /* no free body slot */
    WORLD_ERR_NOT_FOUND,       /* unknown or stale id */
    WORLD_ERR_NOT_FINITE,      /* NaN or Inf in a position or velocity */
    WORLD_ERR_NOT_MOVING,      /* an intent for a static body */
    WORLD_ERR_NO_MEMORY,       /* the first non-default filter could not allocate its table */
    WORLD_ERR_HISTORY_EXPIRED, /* a query's at_tick lies before the kept history */
    WORLD_ERR_FUTURE_TICK,     /* a query's at_tick lies after the newest tick */
    WORLD_ERR_NOT_OWNER, /* an intent for a body the caller may not move (world_set_intent_as) */
} world_status;

const char *world_status_str(world_status status);

typedef struct world_config {
    aabb bounds;                /* the world's walls */
    float tick_rate_hz;         /* dt = 1 / tick_rate_hz; default 60 */
    float max_speed;            /* intents are clamped to this; default 10000 */
    uint32_t max_bodies;        /* capacity, statics included; default 65536 */
    float cell_size;            /* broad-phase cell; 0 = chosen by the world */
    int slide_iterations;       /* collide-and-slide passes per body per tick; default 4 */
    int separation_passes;      /* discrete overlap passes per tick; default 8 (4 left dense crowds
                                 * unresolved in the soak test; later passes only revisit pushed
                                 * bodies, so they cost little) */
    float max_shape_size;       /* largest half extent / radius / vertex distance; default 1000 */
    uint32_t max_moving_bodies; /* of max_bodies, how many may be moving; 0 = all of them (the
                                 * default). Sizes the per-mover arrays, so a world that is mostly
                                 * map costs less per static */
    float max_angular_speed;    /* rad/s: turning intents are clamped to it; 0 = the default 8 pi */
    vec2 gravity;               /* units/s^2, default (0, 0): what pulls characters (world_body_
                                 * set_character); "up" is minus gravity. Must be finite.
                                 * Last field: code that fills a config from world_config_default()
                                 * keeps working */
} world_config;

/* What world_create accepts: tick_rate_hz from WORLD_MIN_TICK_RATE (to 1e6), max_speed up to
 * WORLD_MAX_SPEED, gravity (0, 0) or of length at least WORLD_MIN_GRAVITY. */
#define WORLD_MIN_TICK_RATE 0.01f
#define WORLD_MAX_SPEED 1e7f
#define WORLD_MIN_GRAVITY 1e-3

/* The default of world_config.max_angular_speed (PROTOCOL.md "Rotation"): 8 pi rad/s. */
#define WORLD_DEFAULT_MAX_ANGULAR_SPEED 25.132741f

/* Fills the defaults documented above, with bounds [-500,500]^2. */
void world_config_default(world_config *cfg);

typedef struct world world;

/* NULL on a bad config (non-finite or empty bounds, rate or speed <= 0) or out of memory. */
/* The finest cell of the statics' grid a world of this configuration gets: cell_size, or the
 * power of two from 1 up that keeps that level within 4 cells per body slot. A static no wider or
 * taller than it lives in the finest level, where the world's fast paths for tile maps work; a
 * loader that merges tiles (world_tiled.c) keeps its boxes within it. */
float world_static_cell(const world_config *cfg);
world *world_create(const world_config *cfg);
void world_destroy(world *w);
const world_config *world_get_config(const world *w);

/* Spawns a body. Moving bodies may spawn onto occupied space: the next tick pushes them out.
 * shape_error (may be NULL) receives the reason when WORLD_ERR_INVALID_SHAPE is returned. */
world_status world_spawn(world *w, world_body_kind kind, const geom_shape *shape, vec2 position,
                         uint32_t owner, world_body_id *out_id, geom_shape_error *shape_error);
world_status world_despawn(world *w, world_body_id id);

/* Rotation (PROTOCOL.md "Rotation", COLLISION.md "Rotation"). A body's shape stays body-local as
 * spawned; its angle (radians, counter-clockwise, kept in [-pi, pi]) places it: world vertex =
 * rotate(angle) * local + position. world_spawn_turned spawns at an initial angle (world_spawn is
 * angle 0); a body that never turns and stands at angle 0 keeps the axis-aligned fast paths.
 * The first turned body allocates a per-slot table (WORLD_ERR_NO_MEMORY if that fails; counted
 * in world_stats.bytes). A turning body moves and turns until its first contact along the
 * combined motion (conservative advancement, geom_toi_turning), stops turning there for the tick
 * and slides on with what is left of its translation. */
world_status world_spawn_turned(world *w, world_body_kind kind, const geom_shape *shape,
                                vec2 position, float angle, uint32_t owner, world_body_id *out_id,
                                geom_shape_error *shape_error);
/* world_set_intent with a turning speed (rad/s, counter-clockwise), clamped to
 * max_angular_speed; it holds until replaced (world_set_intent leaves it as it is). */
world_status world_set_intent_turning(world *w, world_body_id id, vec2 velocity,
                                      float angular_velocity, uint32_t input_seq);
/* A client's intent (a MoveIntent) in one id lookup: world_set_intent_turning for a caller that
 * may move only some bodies. owner 0 may move any moving body (an admin, a backend); any other
 * owner only the moving bodies it spawned: another's body, or a static, gives WORLD_ERR_NOT_OWNER
 * before anything else is looked at (so the answer tells nothing of another's body), and changes
 * nothing. The checks in order: WORLD_ERR_NOT_FOUND, WORLD_ERR_NOT_OWNER, then as
 * world_set_intent_turning. */
world_status world_set_intent_as(world *w, uint32_t owner, world_body_id id, vec2 velocity,
                                 float angular_velocity, uint32_t input_seq);
/* The shape as spawned, body-local (world_body_shape gives it as it stands, turned by the
 * current angle), and the current angle. */
bool world_body_local_shape(const world *w, world_body_id id, geom_shape *out, float *angle);

/* Collision filters and sensors (PROTOCOL.md "Filters, sensors, contact events"). Two bodies
 * interact (block each other, appear in each other's events) iff
 * (a.category & b.mask) != 0 && (b.category & a.mask) != 0. A sensor neither blocks nor is
 * blocked; it reports the interacting bodies that overlap it. Every body starts with the defaults
 * (category 1, mask all, not a sensor). */
#define WORLD_DEFAULT_CATEGORY 1u
#define WORLD_DEFAULT_MASK 0xffffffffu
typedef struct world_filter {
    uint32_t category; /* the sets this body belongs to */
    uint32_t mask;     /* the sets it interacts with */
    bool sensor;       /* never blocks, never blocked; reports overlaps (world_sensor_event) */
} world_filter;
static inline bool world_filters_interact(const world_filter *a, const world_filter *b) {
    return (a->category & b->mask) != 0 && (b->category & a->mask) != 0;
}
/* Sets a body's filter; category 0 and mask 0 mean the defaults (as on the wire). Meant right
 * after world_spawn, before the next step; a later change takes effect at the next step. The
 * first non-default filter of a world allocates its per-slot table (12 bytes x max_bodies, in
 * world_stats.bytes): a world whose bodies all keep the defaults pays nothing, and its step takes
 * the same fast paths as before filters existed. WORLD_ERR_NO_MEMORY when that allocation fails. */
world_status world_body_set_filter(world *w, world_body_id id, const world_filter *filter);
/* A live body's filter, the defaults filled in. False for an unknown or stale id. */
bool world_body_filter(const world *w, world_body_id id, world_filter *out);

/* Makes a body one-way, or plain again (PROTOCOL.md SpawnBody.one_way; statics and movers): it
 * blocks a mover in a step only if, at the step's start, the mover lay wholly on its up side (the
 * body-local +y turned by its angle, within the skin) and the mover's intended motion relative to
 * it ran against that direction; statics and the bounds still block a one-way mover. Rays and
 * casts hit it only when running against its up direction, and not from a start inside it;
 * overlaps always report it; contacts with it begin only where it blocks. Meant right after
 * world_spawn; a later change takes effect at the next step. The first one-way body of a world
 * allocates a per-slot table (28 bytes x max_bodies, in world_stats.bytes): a world without one
 * pays nothing and its step takes the same paths as before. WORLD_ERR_NOT_FOUND for an unknown
 * or stale id, WORLD_ERR_NO_MEMORY when that allocation fails. */
world_status world_body_set_one_way(world *w, world_body_id id, bool one_way);
/* Whether a live body is one-way. False for an unknown or stale id. */
bool world_body_one_way(const world *w, world_body_id id);
/* Characters (PROTOCOL.md "Characters: side-on games", COLLISION.md "Protocol 1.2 additions").
 * A character is a mover whose velocity along gravity belongs to the world: each step it falls
 * (v += gravity x gravity_scale x dt, semi-implicit), is set to jump_speed along up by a jump the
 * step takes, and loses what a surface hit removes; across gravity it moves as its intent says
 * (the intent's component along gravity is ignored). On the ground it walks along walkable
 * surfaces (normal within max_slope of up) at its intent's speed across gravity, steps onto
 * obstacles up to step_height, keeps to a downward slope or step within snap_distance, and is
 * carried by the body it stands on (that body's translation and turn of the step, before its own
 * motion; a body is never stopped by the characters standing on it). Zero fields take the
 * defaults, as on the wire. With zero world gravity a character moves as a plain body and is
 * never grounded. Plain worlds pay nothing: the first character allocates a per-slot table
 * (counted in world_stats.bytes), and a world without characters takes the paths it took before
 * characters existed. */
typedef struct world_character_options {
    float max_slope;         /* radians from up a walkable surface's normal may lean; 0 = 0.7854
                              * (45 degrees); clamped below 89 degrees */
    float step_height;       /* highest rise of the lowest point stepped onto; 0 = no steps */
    float snap_distance;     /* drop a walker follows down without leaving the ground; 0 = none */
    float jump_speed;        /* speed along up a jump sets; 0 = cannot jump */
    float gravity_scale;     /* multiplies the world's gravity; 0 = 1 */
    uint32_t jump_buffer_ms; /* a jump pressed this long before landing is taken; 0 = 100 */
    uint32_t coyote_ms;      /* a jump within this long after walking off the ground; 0 = 100 */
} world_character_options;
#define WORLD_CHARACTER_MAX_SLOPE 0.7853982f      /* max_slope's default, 45 degrees */
#define WORLD_CHARACTER_MAX_GRAVITY_SCALE 1000.0f /* gravity_scale is clamped to it */
#define WORLD_CHARACTER_BUFFER_MS 100u            /* jump_buffer_ms's and coyote_ms's default */

/* Makes a moving body a character (opt NULL or all zeros: the defaults), or replaces its options.
 * step_height and snap_distance are clamped to the character's height along gravity (its AABB's;
 * a step taller than the character is none), gravity_scale to
 * WORLD_CHARACTER_MAX_GRAVITY_SCALE; world_body_character reports what was kept.
 * Meant right after world_spawn. WORLD_ERR_NOT_FOUND for an unknown or stale id,
 * WORLD_ERR_NOT_MOVING for a static, WORLD_ERR_NOT_FINITE for a non-finite option,
 * WORLD_ERR_NO_MEMORY when the first character's table cannot be allocated. */
world_status world_body_set_character(world *w, world_body_id id,
                                      const world_character_options *opt);
/* A jump pressed with the intent just accepted (MoveIntent.jump: call it after
 * world_set_intent_as returned WORLD_OK for the same intent, so a stale intent carries no jump).
 * It is taken on the first step, counting from the next one and within jump_buffer_ms (rounded up
 * to whole steps), on which the character is grounded or walked off the ground at most coyote_ms
 * before; one jump per call, never in the air. A newer press replaces one not yet taken.
 * WORLD_ERR_NOT_FOUND for an unknown or stale id; a body that is not a character ignores it
 * (WORLD_OK). */
world_status world_character_jump(world *w, world_body_id id);
/* A character's state after the most recent step. */
typedef struct world_character_state {
    bool grounded;        /* within 2 x GEOM_SKIN of a walkable surface below, or the bottom
                           * bound */
    world_body_id ground; /* the body stood on; WORLD_NULL_BODY for none or the bounds */
    float vertical;       /* its velocity along up (units/s) the next step starts from */
    world_character_options options; /* the defaults filled in */
} world_character_state;
/* False for an unknown or stale id, or a body that is not a character. */
bool world_body_character(const world *w, world_body_id id, world_character_state *out);
/* Live characters and one-way bodies: a caller that reports their fields (BodyState.grounded,
 * ground_id, one_way) asks only when these are not 0. */
uint32_t world_character_count(const world *w);
uint32_t world_one_way_count(const world *w);

/* Sets a moving body's desired velocity; it holds until replaced. The newest input_seq wins: an
 * older or equal one returns WORLD_STALE_INPUT and changes nothing. Speed is clamped to max_speed.
 */
world_status world_set_intent(world *w, world_body_id id, vec2 velocity, uint32_t input_seq);

/* Whether moving bodies block each other (default true). Off gives scene S1a of PERFORMANCE.md,
 * or a game whose players pass through one another; statics and bounds always block. */
void world_set_mover_collisions(world *w, bool enabled);

/* One fixed tick (COLLISION.md "One tick"). */
void world_step(world *w);
uint64_t world_tick(const world *w); /* ticks stepped so far */

/* A body as the world holds it: the one record of world_body_get and of the body table
 * (world_body_table). 64 bytes: the table is read every tick, so what only tests and tools ask
 * (the intent, the shape) has its own getter instead of a field. */
#define WORLD_ROW_SPAWNED 1u   /* new since the step before: alive at the end of this one */
#define WORLD_ROW_DESPAWNED 2u /* despawned since the step before: the id is now stale */
#define WORLD_ROW_MOVED 4u     /* a mover whose position, velocity or last_input_seq changed */
typedef struct world_body_row {
    world_body_id id;
    uint8_t kind;            /* world_body_kind */
    uint8_t flags;           /* WORLD_ROW_* in the body table (SPAWNED and MOVED may come
                              * together); 0 from world_body_get */
    uint32_t owner;          /* the spawning client's id; 0 for the world's own statics */
    uint32_t last_input_seq; /* newest input applied in the last tick */
    vec2 position;
    vec2 velocity;          /* achieved in the last tick (displacement / dt), zero for statics */
    aabb bounds;            /* current AABB */
    uint64_t changed_tick;  /* tick in which position, velocity or last_input_seq last changed
                             * (the spawn's tick for a new body: the step after the spawn call,
                             * world_tick() + 1, the first step whose snapshot can show it) */
    float angle;            /* radians, in [-pi, pi] (0 for a body that never turned) */
    float angular_velocity; /* achieved in the last tick, rad/s */
} world_body_row;

bool world_body_get(const world *w, world_body_id id, world_body_row *out);
bool world_body_shape(const world *w, world_body_id id, geom_shape *out); /* as it stands */
/* The intent a body holds, after clamping: the desired velocity and turning speed (rad/s);
 * zeros for a static. Either pointer may be NULL. */
bool world_body_intent(const world *w, world_body_id id, vec2 *velocity, float *turning);
bool world_body_alive(const world *w, world_body_id id);
/* The newest input_seq a moving body took (its intent's, applied or waiting for the next step);
 * 0 before its first intent, and for a static or an unknown id. */
uint32_t world_body_input_seq(const world *w, world_body_id id);

/* Ids of bodies whose AABB overlaps box, in ascending id order. Writes at most max ids and
 * returns how many overlap in all (so a return > max means out was truncated). kinds is a mask of
 * (1u << WORLD_BODY_STATIC) | (1u << WORLD_BODY_MOVING); 0 means both. */
size_t world_query_aabb(const world *w, aabb box, unsigned kinds, world_body_id *out, size_t max);

/* ---- Game queries (PROTOCOL.md "Queries, history and lag compensation") ---------------------
 *
 * Ray casts, overlaps and shape casts over every shape kind, walked through the broad phase along
 * the ray or sweep (never a scan of the whole world), answered at the present or, with at_tick,
 * against the movers as they were after a past tick (the history ring; statics never move and
 * are taken as they are now). The world bounds are not a body: queries report bodies only.
 *
 * Results (world_hit): `normal` points out of the hit body, `point` lies on its surface.
 *   - Casts report the first hit, or with `all` every body hit (each once, at the fraction where
 *     it is first touched) sorted by fraction then id. A cast starting inside a body (for a ray,
 *     its origin inside or on the boundary; for a shape, overlapping by more than zero) hits it at
 *     fraction 0 with point = the start, normal = the direction that pushes the query shape out
 *     fastest (zero for a ray) and depth = that push's length (0 for a ray).
 *   - Overlaps report every body overlapping the shape by more than zero (touching is not
 *     overlap): normal * depth is the MTV that pushes the query shape out of it; point is where
 *     the query's deepest point, pushed out, meets the body's surface.
 *   - At most `max` hits: casts keep the nearest (fraction, then id), overlaps the lowest ids, and
 *     result->truncated says more existed (only then). A first-hit cast has at most one.
 * at_tick: 0 or world_tick() = now; an earlier tick within the history: the movers after that
 * tick (a mover despawned since is left out: its shape is gone); earlier than the history holds:
 * WORLD_ERR_HISTORY_EXPIRED; later than now: WORLD_ERR_FUTURE_TICK. Non-finite input:
 * WORLD_ERR_NOT_FINITE. A shape that geom_shape_validate refuses: WORLD_ERR_INVALID_SHAPE. */
typedef struct world_query_filter {
    unsigned kinds;               /* as world_query_aabb: 0 = both kinds */
    uint32_t category_mask;       /* bodies whose category shares a bit with it; 0 = any */
    const world_body_id *exclude; /* ids left out, sorted ascending (may be NULL) */
    size_t exclude_count;         /* entries in exclude */
    bool include_sensors;         /* sensor bodies are left out unless set */
} world_query_filter;

typedef struct world_hit {
    world_body_id id;
    vec2 point;     /* on the hit body's surface (the start for a hit at fraction 0 of a cast) */
    vec2 normal;    /* unit, out of the hit body; zero for a ray starting inside */
    float fraction; /* of the translation; 0 for overlaps */
    float depth;    /* overlap depth (overlaps and casts starting inside), else 0 */
} world_hit;

typedef struct world_query_result {
    size_t count;   /* hits written */
    bool truncated; /* more hits existed than max */
    uint64_t tick;  /* the tick the answer was evaluated at */
    uint64_t work;  /* what the query cost, in units of 0.3-1 ns: the finest-level grid cells its
                     * regions covered, each region walked, candidates visited, exact tests and
                     * hits reordered, weighted by their measured cost (world_query.c); a caller
                     * may charge by it (net does: --query-work-per-message). 0 when refused. */
} world_query_result;

/* filter may be NULL (no restriction, no sensors); max >= 1. */
world_status world_query_ray(const world *w, uint64_t at_tick, vec2 origin, vec2 translation,
                             const world_query_filter *filter, bool all, world_hit *out, size_t max,
                             world_query_result *result);
world_status world_query_overlap(const world *w, uint64_t at_tick, const geom_shape *shape,
                                 vec2 position, const world_query_filter *filter, world_hit *out,
                                 size_t max, world_query_result *result);
world_status world_query_shape_cast(const world *w, uint64_t at_tick, const geom_shape *shape,
                                    vec2 position, vec2 translation,
                                    const world_query_filter *filter, bool all, world_hit *out,
                                    size_t max, world_query_result *result);

/* Keeps the movers' positions after each of the last `ticks` steps, besides the newest, so that
 * queries may ask for any tick from world_tick() - ticks on (0, the default, keeps none). The
 * ring is allocated here and grows with the most movers a step has recorded (the one allocation
 * world_step makes, at a new high-water mark; if it fails, the history restarts empty and such
 * queries get WORLD_ERR_HISTORY_EXPIRED until it has refilled). Resets what was kept. false on
 * out of memory (the history is then off). */
bool world_set_history(world *w, uint32_t ticks);
/* The oldest tick a query may name now (world_tick() when none is kept). */
uint64_t world_history_oldest(const world *w);

/* The body table: one row per body the most recent world_step() changed, spawned or despawned,
 * in ascending id order, each id at most once (Box2D's move events, as one dense array). A body
 * spawned and despawned between two steps never appears. Spawns and despawns made between steps
 * appear in the next step's table, as the changed_tick of a new body says.
 *
 * Rows of live bodies (SPAWNED, MOVED) hold the body's state at the end of the step, as
 * world_body_get gives it (with flags set); a MOVED row is a mover whose changed_tick is this
 * step. A DESPAWNED row holds the id and kind only (the rest is zero); a slot reused within one
 * interval gives two rows, the despawned id first (its generation is lower).
 *
 * world_body_table points *rows at the most recent step's table and returns its row count (0
 * before the first step). Built on the first call after the step, from what the step marked, so a
 * step whose table nobody reads costs no more than its marks. The rows stay valid and unchanged
 * until the next world_step(), whatever is spawned or despawned meanwhile.
 *
 * The first call allocates the rows, 2 x max_bodies of them (counted in world_stats.bytes): a
 * world that never reads its table (a client's prediction) does not pay for them. If that fails,
 * *rows is NULL and 0 is returned. A first call made after a despawn that followed the step leaves
 * that body out (later calls are exact: a despawn fixes the table first). */
size_t world_body_table(const world *w, const world_body_row **rows);

/* Contact and sensor events (PROTOCOL.md "Filters, sensors, contact events", COLLISION.md step
 * 4), off until world_set_events(w, true). Each step then compares what touches what with the
 * step before and lists the changes, readable until the next step:
 *   - contacts, between two interacting bodies neither a sensor (two movers, or a mover and a
 *     static): begin the step their gap (geom_distance) falls to at most 2 x GEOM_SKIN, end the
 *     step it exceeds 4 x GEOM_SKIN, or either body is gone, or they stop interacting (hysteresis:
 *     a resting contact does not flicker). a is the mover of a mover-static pair, else the lower
 *     id; normal points from a to b (at the end: the last one seen); approach_speed is the
 *     closing speed of their intents along it at the start of the step (positive: approaching;
 *     0 when one is gone);
 *   - sensor events, between a sensor and an interacting body that is not a sensor (statics
 *     included; at least one of the two moves): begin the step they start overlapping, end the
 *     step they stop or either goes (or they stop interacting). A visitor that crosses a sensor
 *     within one step, overlapping it at neither end, gets a begin and an end in that step (the
 *     two bodies' straight moves of the step are swept against each other).
 * Ends are listed before begins; no pair begins twice without an end between. Owners are 0 for
 * statics. Tracking allocates as pairs come and as the movers grow (it is the one part of the
 * step that may; about 81 bytes per mover, 8 per pair of the mover pass, 105 per held contact
 * (two buffers of 52-byte pairs, a seen byte), a bit per slot from world_set_events): a step whose
 * allocation fails loses the new pairs of that step and counts them in world_stats.events_lost
 * (when it cannot even regroup the held contacts, it looks at none: their ends come in a later
 * step).
 * Turning events off forgets every pair (no end events). */
typedef struct world_contact_event {
    world_body_id a, b;
    uint32_t owner_a, owner_b; /* the owners, 0 for a static */
    vec2 normal;               /* from a towards b */
    float approach_speed;      /* units/s, intended closing speed along normal */
    bool begin;                /* else an end */
} world_contact_event;
typedef struct world_sensor_event {
    world_body_id sensor, visitor;
    uint32_t owner_sensor, owner_visitor; /* the owners, 0 for a static */
    bool begin;                           /* else an end */
} world_sensor_event;
void world_set_events(world *w, bool enabled);
/* The last step's events; *out stays valid until the next step or world_set_events. */
size_t world_contact_events(const world *w, const world_contact_event **out);
size_t world_sensor_events(const world *w, const world_sensor_event **out);
/* Pairs tracked now (contacts in the band, sensor overlaps). */
size_t world_contact_count(const world *w);
size_t world_sensor_overlap_count(const world *w);

typedef struct world_stats {
    size_t static_bodies;
    size_t moving_bodies;
    size_t capacity;
    uint64_t swept_hits;  /* sweep hits resolved by collide-and-slide, cumulative */
    uint64_t separations; /* overlaps fixed by the discrete pass, cumulative */
    uint64_t jammed;      /* moving pairs left overlapping because statics pin them (I3) */
    uint64_t events_lost; /* new contact or sensor pairs a failed allocation left untracked */
    size_t bytes;         /* memory the world owns */
    /* The body-id space: a slot whose generation would wrap is retired for good (world_body_id),
     * so a process can spawn only so many bodies in its life; these say how far along it is. */
    uint64_t slots_retired; /* slots never handed out again */
    uint64_t ids_left;      /* spawns the id space still allows (capacity x generations, less
                             * the spawns so far) */
    /* The history ring (world_set_history): its memory (also counted in bytes), the ticks it
     * holds and the mover states across them (bytes / records = bytes per mover per tick). */
    size_t history_bytes;
    uint32_t history_ticks;
    uint64_t history_records;
} world_stats;
void world_get_stats(const world *w, world_stats *out);

/* The pairs the most recent world_step() left jammed: moving bodies still overlapping by more
 * than GEOM_SKIN when the discrete pass ran out of passes (statics pin them, I3), each counted once
 * in world_stats.jammed. Each pair is written as {lower id, higher id}, in the order the pass
 * found them. Writes at most max pairs (the world keeps at most WORLD_MAX_JAM_REPORT of them) and
 * returns how many the step jammed in all, so a return > max means out was truncated (out may be
 * NULL when max is 0). */
#define WORLD_MAX_JAM_REPORT 256
size_t world_last_jams(const world *w, world_body_id (*out)[2], size_t max);

/* A hash of the full simulation state (ids, positions, velocities, intents, sequences, tick, and
 * the angles, turning speeds and turning intents of bodies that turned);
 * bit-identical states give equal hashes (I6). */
uint64_t world_state_hash(const world *w);

/* Checks the world's internal consistency (id slots against the dense body arrays, free lists,
 * the polygon pool, the static grid's links, the mover grid): NULL when consistent, else the first
 * broken invariant. O(capacity): for tests and debugging (the soak test calls it every tick). */
const char *world_validate(const world *w);

/* ---- World images (docs/recording.md "The world image") -------------------------------------
 *
 * A world's whole state between two steps as bytes, and a world made from them that steps to the
 * same bits as the original would, given the same inputs (a journal's start: PROTOCOL.md
 * "Recordings"). Take an image right after a step, before the next tick's inputs. The image holds
 * the world's own records as this build lays them out (same-endian builds only; native x86-64 and
 * the WebAssembly build agree), tagged with a layout version and each record's size: a build whose
 * layout differs refuses it. Events and the query history are not in it (they never steer a step):
 * turn them on again on the loaded world if wanted. */

/* The image, malloc'd (the caller frees it), its size in *len; NULL when out of memory. */
void *world_image_save(const world *w, size_t *len);
/* A world from an image: NULL, with the reason in err ("world image: ..."), for anything that is
 * not an image this build wrote or could have written (cut short, another layout, a record out of
 * range, an inconsistent world). Never trusts the bytes: a hostile image is refused, not read
 * past. */
world *world_image_load(const void *image, size_t len, char *err, size_t err_size);

/* ---- Client-side prediction (ARCHITECTURE.md "Prediction with the server's own code") --------
 *
 * A client that predicts its own bodies with this world steps them ahead of the server, then goes
 * back to the last state the server confirmed and steps again with the inputs it has not yet seen
 * acknowledged (client/js's WorldPredictor, docs/wasm.md). These calls are what that needs beyond
 * the daemon's API; the daemon never calls them. Events and the query history see a restored or
 * placed body only from the next step on: a predicting world keeps both off. */

/* Bytes of a saved body state (world_body_save). */
size_t world_body_state_size(void);
/* Saves everything the world keeps of a moving body that a later step reads: its position,
 * velocity, intent and input sequences, its turn (angle, turning speed and intent) and, for a
 * character, its vertical speed, ground, carrier, coyote time and a pending jump (kept relative
 * to the tick, so a state saved at one tick restores at another), and the memos of its fast
 * paths (which are facts about its state: they stay true with it). `out` holds
 * world_body_state_size() bytes. WORLD_ERR_NOT_FOUND for an unknown or stale id,
 * WORLD_ERR_NOT_MOVING for a static. */
world_status world_body_save(const world *w, world_body_id id, void *out);
/* Puts a state world_body_save wrote for this same body back: the next step moves the body as the
 * step after the save would have, given the same statics, other movers and intents. The
 * shape, owner, filter, one-way flag and character options are the body's own and stay; the
 * carrier and ground are dropped when that body is gone. WORLD_ERR_NOT_FOUND for an unknown or
 * stale id or a state saved from another body (or of a character, into a body that is no longer
 * one), WORLD_ERR_NOT_MOVING for a static. */
world_status world_body_restore(world *w, world_body_id id, const void *state);
/* Moves a moving body to a place a snapshot gave (PROTOCOL.md BodyState): its position, angle
 * (radians; a body at angle 0 that never turned stays unturned), velocity and turning speed
 * achieved in the last tick. Its intent stays; the memos of its fast paths are cleared. What a
 * snapshot does not carry keeps its value: a character's vertical speed and ground are set by
 * world_character_place. WORLD_ERR_NOT_FINITE for a non-finite value, WORLD_ERR_OUT_OF_BOUNDS for
 * a position outside the bounds, WORLD_ERR_NO_MEMORY when the first turned body's table cannot be
 * allocated, and the id errors as above. */
world_status world_body_place(world *w, world_body_id id, vec2 position, float angle, vec2 velocity,
                              float angular_velocity);
/* A character's state as a snapshot tells it: its velocity along up, standing or not, and the body
 * stood on (WORLD_NULL_BODY for none or the bounds; a moving one carries it). What the wire does
 * not carry is reset: no coyote time, no pending jump, the ground's normal taken as straight up.
 * WORLD_ERR_NOT_FINITE for a non-finite speed; the id errors as above, and WORLD_ERR_NOT_FOUND
 * for a body that is not a character. */
world_status world_character_place(world *w, world_body_id id, float vertical, bool grounded,
                                   world_body_id ground);

#ifdef __cplusplus
}
#endif
#endif

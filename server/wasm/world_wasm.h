/* world_wasm: the world's thin C API for the WebAssembly module client/js ships (docs/wasm.md,
 * ARCHITECTURE.md "Prediction with the server's own code"), and the same API natively, so the
 * equality tests drive both builds through one code path (tests/js/wasm_world_oracle.c).
 *
 * Why a layer of its own and not world.h exported as it is: world.h passes structs by pointer
 * (configs, shapes, options) that JavaScript would have to lay out byte by byte in the module's
 * memory. Here every call takes scalars (a WebAssembly call passes them in registers), a polygon's
 * vertices are the one array the binding writes (wasm_world_vertices), and what comes back is a
 * status code, a scalar, or a table of fixed 64-byte rows the binding reads in place.
 *
 * The calls are the daemon's own, in its order (net_session.c): a spawn is world_spawn_turned on a
 * shape made by geom_make_box / _circle / _polygon, then the filter, one_way and character
 * options (the binding despawns a body whose options fail, as the daemon does); an intent is
 * world_set_intent_as and, when it was accepted and asks for one, world_character_jump. So a
 * journal of the daemon's spawns, intents and steps replays here with nothing more.
 *
 * Statuses: world_status values (WORLD_OK 0, WORLD_STALE_INPUT 1, the errors above), and
 * WASM_ERR_ARGUMENT for what the world never sees (an unknown body or shape kind, a polygon
 * vertex count out of range). Not thread-safe, as the world. */
#ifndef COLLIDE_WORLD_WASM_H
#define COLLIDE_WORLD_WASM_H

#include <stdint.h>

#include "world.h"

/* Exported from the module under its own name; an ordinary function natively. */
#if defined(__wasm__)
#define WASM_EXPORT(name) __attribute__((export_name(#name))) name
#else
#define WASM_EXPORT(name) name
#endif

#define WASM_ERR_ARGUMENT 100 /* an argument the world never sees was out of range */

/* One body as bodies() reads it: 16 fields of 4 bytes, so the binding reads a field as
 * u32[row * 16 + k] or f32[row * 16 + k] of the table, without a copy (WASM_BODY_* below). */
typedef struct wasm_body {
    uint32_t id;
    uint32_t kind;            /* world_body_kind */
    uint32_t flags;           /* WASM_BODY_ONE_WAY | _CHARACTER | _GROUNDED | _SENSOR */
    uint32_t owner;           /* the spawning client's id; 0 for the world's own statics */
    uint32_t last_input_seq;  /* newest input applied in the last tick */
    uint32_t ground;          /* the body a grounded character stands on; 0 for none, the bounds */
    float x, y;               /* position */
    float vx, vy;             /* velocity achieved in the last tick */
    float angle;              /* radians, in [-pi, pi] */
    float angular_velocity;   /* achieved in the last tick, rad/s */
    float vertical;           /* a character's velocity along up the next step starts from */
    float intent_x, intent_y; /* the intent's velocity, after clamping */
    float intent_turning;     /* the intent's turning speed, rad/s, after clamping */
} wasm_body;
#define WASM_BODY_ONE_WAY 1u
#define WASM_BODY_CHARACTER 2u
#define WASM_BODY_GROUNDED 4u
#define WASM_BODY_SENSOR 8u

/* A body's shape as spawned, body-local (world_body_local_shape; the body's angle, in its row,
 * turns it about its position): 36 fields of 4 bytes, read as u32[k] or f32[k]. */
typedef struct wasm_shape {
    uint32_t kind;         /* geom_shape_kind: GEOM_SHAPE_BOX 1, _POLYGON 2, _CIRCLE 3 */
    uint32_t vertex_count; /* a polygon's, else 0 */
    float a, b;            /* a box's half extents (a, b); a circle's radius (a) */
    float vertices[2 * GEOM_MAX_POLYGON_VERTICES]; /* a polygon's (x, y) pairs, counter-clockwise */
} wasm_shape;

typedef struct wasm_world wasm_world;

/* A world over [min, max]; each of the other arguments 0 takes world_config_default's value
 * (gravity's default is 0 anyway). NULL when world_create refuses the config (non-finite or empty
 * bounds, non-finite gravity, ...) or memory runs out. */
wasm_world *WASM_EXPORT(wasm_world_create)(float min_x, float min_y, float max_x, float max_y,
                                           float tick_rate_hz, float gravity_x, float gravity_y,
                                           int32_t slide_iterations, uint32_t max_bodies,
                                           uint32_t max_moving_bodies, float cell_size,
                                           float max_speed, float max_angular_speed,
                                           int32_t separation_passes, float max_shape_size);
void WASM_EXPORT(wasm_world_free)(wasm_world *h); /* NULL is a no-op */
void WASM_EXPORT(wasm_world_set_mover_collisions)(wasm_world *h, int32_t on);

/* Room for GEOM_MAX_POLYGON_VERTICES (x, y) pairs: a polygon's vertices, written before its
 * spawn. */
float *WASM_EXPORT(wasm_world_vertices)(wasm_world *h);
/* Spawns a body of kind (WORLD_BODY_STATIC or _MOVING) and shape (GEOM_SHAPE_BOX: half extents
 * a, b; _CIRCLE: radius a; _POLYGON: vertex_count vertices from wasm_world_vertices) at (x, y)
 * and angle. On WORLD_OK, wasm_world_spawned gives the id; on WORLD_ERR_INVALID_SHAPE,
 * wasm_world_shape_error the geom_shape_error. */
int32_t WASM_EXPORT(wasm_world_spawn)(wasm_world *h, int32_t kind, int32_t shape, float a, float b,
                                      int32_t vertex_count, float x, float y, float angle,
                                      uint32_t owner);
uint32_t WASM_EXPORT(wasm_world_spawned)(const wasm_world *h);
int32_t WASM_EXPORT(wasm_world_shape_error)(const wasm_world *h);
int32_t WASM_EXPORT(wasm_world_despawn)(wasm_world *h, uint32_t id);
/* The spawn options, each world_body_set_*: category and mask 0 mean the defaults. */
int32_t WASM_EXPORT(wasm_world_set_filter)(wasm_world *h, uint32_t id, uint32_t category,
                                           uint32_t mask, int32_t sensor);
int32_t WASM_EXPORT(wasm_world_set_one_way)(wasm_world *h, uint32_t id, int32_t one_way);
int32_t WASM_EXPORT(wasm_world_set_character)(wasm_world *h, uint32_t id, float max_slope,
                                              float step_height, float snap_distance,
                                              float jump_speed, float gravity_scale,
                                              uint32_t jump_buffer_ms, uint32_t coyote_ms);

/* A MoveIntent: world_set_intent_as (owner 0 may move any moving body), then, when it returned
 * WORLD_OK and jump is set, world_character_jump. WORLD_STALE_INPUT is not an error. */
int32_t WASM_EXPORT(wasm_world_intent)(wasm_world *h, uint32_t owner, uint32_t id, float vx,
                                       float vy, float angular_velocity, uint32_t input_seq,
                                       int32_t jump);

void WASM_EXPORT(wasm_world_step)(wasm_world *h, uint32_t ticks);
uint64_t WASM_EXPORT(wasm_world_tick)(const wasm_world *h);
uint64_t WASM_EXPORT(wasm_world_state_hash)(const wasm_world *h); /* world_state_hash */
uint32_t WASM_EXPORT(wasm_world_body_count)(const wasm_world *h);

/* Fills the table with every live body whose kind is in kinds ((1 << WORLD_BODY_STATIC) |
 * (1 << WORLD_BODY_MOVING); 0 = both), in ascending id order, and returns how many; the rows
 * (wasm_world_rows) stay as they are until the next call. UINT32_MAX when the table cannot
 * grow (out of memory). */
uint32_t WASM_EXPORT(wasm_world_bodies)(wasm_world *h, uint32_t kinds);
const wasm_body *WASM_EXPORT(wasm_world_rows)(const wasm_world *h);
/* One body into a row of its own (not the table's): NULL for an unknown or stale id. */
const wasm_body *WASM_EXPORT(wasm_world_body)(wasm_world *h, uint32_t id);
/* A body's shape into the handle's shape row: NULL for an unknown or stale id. */
const wasm_shape *WASM_EXPORT(wasm_world_shape)(wasm_world *h, uint32_t id);

/* Prediction (world.h "Client-side prediction", client/js's WorldPredictor): a body's whole state
 * saved into the handle's state buffer (wasm_world_state, wasm_world_state_size bytes), which the
 * binding copies out and back in before a restore; and a body placed where a snapshot put it. */
uint32_t WASM_EXPORT(wasm_world_state_size)(void);
uint8_t *WASM_EXPORT(wasm_world_state)(wasm_world *h);
int32_t WASM_EXPORT(wasm_world_save)(wasm_world *h, uint32_t id);    /* into the buffer */
int32_t WASM_EXPORT(wasm_world_restore)(wasm_world *h, uint32_t id); /* from the buffer */
int32_t WASM_EXPORT(wasm_world_place)(wasm_world *h, uint32_t id, float x, float y, float angle,
                                      float vx, float vy, float angular_velocity);
int32_t WASM_EXPORT(wasm_world_place_character)(wasm_world *h, uint32_t id, float vertical,
                                                int32_t grounded, uint32_t ground);

/* Texts for a status and a geom_shape_error ("outside the world bounds"); never NULL. */
const char *WASM_EXPORT(wasm_world_status_str)(int32_t status);
const char *WASM_EXPORT(wasm_world_shape_error_str)(int32_t error);

/* The rows above from any world (journal_wasm.c reads a replay's world through them): false for
 * an unknown or stale id. Not exported. */
bool wasm_body_of(const world *w, world_body_id id, wasm_body *out);
bool wasm_shape_of(const world *w, world_body_id id, wasm_shape *out);

#endif

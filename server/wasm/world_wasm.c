/* world_wasm: see world_wasm.h. The handle keeps what the world's public API does not give a
 * binding: the live ids in order (the world has no iterator; callers hold ids, never pointers into
 * its storage), the rows of the last table, and the polygon vertices the binding writes. */
#include "world_wasm.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(wasm_body) == 64, "wasm_body: 16 fields of 4 bytes (the binding's rows)");
_Static_assert(sizeof(wasm_shape) == 36 * 4, "wasm_shape: 36 fields of 4 bytes");

struct wasm_world {
    world *w;
    uint32_t spawned;    /* the id the last successful spawn made */
    int32_t shape_error; /* geom_shape_error of the last spawn refused for its shape */
    world_body_id *ids;  /* live ids, ascending */
    uint32_t id_count;   /* entries in ids */
    uint32_t id_cap;     /* capacity of ids: the world's max_bodies */
    wasm_body *rows;     /* the last wasm_world_bodies table */
    uint32_t row_cap;    /* capacity of rows (grows to the bodies asked for, never shrinks) */
    wasm_body one;       /* wasm_world_body's row */
    wasm_shape shape;    /* wasm_world_shape's row */
    float vertices[2 * GEOM_MAX_POLYGON_VERTICES]; /* a polygon's, before its spawn */
    uint8_t *state; /* one saved body state (world_body_state_size bytes) */
};

/* ---- the ids in order --------------------------------------------------------------------- */

/* Where id is, or would go, in the sorted ids. */
static uint32_t id_place(const wasm_world *h, world_body_id id) {
    uint32_t lo = 0, hi = h->id_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The world hands out ids of a fresh world in ascending order, so the common insertion is at the
 * end and moves nothing. There is room: the world holds at most id_cap bodies. */
static void ids_insert(wasm_world *h, world_body_id id) {
    uint32_t at = id_place(h, id);
    memmove(&h->ids[at + 1], &h->ids[at], (size_t)(h->id_count - at) * sizeof h->ids[0]);
    h->ids[at] = id;
    h->id_count++;
}

static void ids_remove(wasm_world *h, world_body_id id) {
    uint32_t at = id_place(h, id);
    if (at == h->id_count || h->ids[at] != id) return;
    memmove(&h->ids[at], &h->ids[at + 1], (size_t)(h->id_count - at - 1) * sizeof h->ids[0]);
    h->id_count--;
}

/* ---- create / free ------------------------------------------------------------------------ */

wasm_world *wasm_world_create(float min_x, float min_y, float max_x, float max_y,
                              float tick_rate_hz, float gravity_x, float gravity_y,
                              int32_t slide_iterations, uint32_t max_bodies,
                              uint32_t max_moving_bodies, float cell_size, float max_speed,
                              float max_angular_speed, int32_t separation_passes,
                              float max_shape_size) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(min_x, min_y), v2(max_x, max_y));
    cfg.gravity = v2(gravity_x, gravity_y);
    /* 0 keeps the default: the binding passes 0 for what its caller left out */
    if (tick_rate_hz != 0.0f) cfg.tick_rate_hz = tick_rate_hz;
    if (slide_iterations != 0) cfg.slide_iterations = slide_iterations;
    if (max_bodies != 0) cfg.max_bodies = max_bodies;
    if (max_moving_bodies != 0) cfg.max_moving_bodies = max_moving_bodies;
    if (cell_size != 0.0f) cfg.cell_size = cell_size;
    if (max_speed != 0.0f) cfg.max_speed = max_speed;
    if (max_angular_speed != 0.0f) cfg.max_angular_speed = max_angular_speed;
    if (separation_passes != 0) cfg.separation_passes = separation_passes;
    if (max_shape_size != 0.0f) cfg.max_shape_size = max_shape_size;
    wasm_world *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->w = world_create(&cfg);
    h->id_cap = h->w ? world_get_config(h->w)->max_bodies : 0;
    h->ids = h->w ? calloc(h->id_cap ? h->id_cap : 1, sizeof h->ids[0]) : NULL;
    h->state = calloc(1, world_body_state_size());
    if (!h->ids || !h->state) {
        wasm_world_free(h);
        return NULL;
    }
    return h;
}

void wasm_world_free(wasm_world *h) {
    if (!h) return;
    world_destroy(h->w);
    free(h->ids);
    free(h->rows);
    free(h->state);
    free(h);
}

void wasm_world_set_mover_collisions(wasm_world *h, int32_t on) {
    world_set_mover_collisions(h->w, on != 0);
}

/* ---- spawn, options, despawn -------------------------------------------------------------- */

float *wasm_world_vertices(wasm_world *h) { return h->vertices; }

/* The shape of a spawn, made as the daemon makes it (net_request.c); GEOM_ERR_UNKNOWN_KIND for a
 * kind or vertex count out of range. */
static geom_shape_error shape_of(const wasm_world *h, int32_t shape, float a, float b,
                                 int32_t vertex_count, geom_shape *out) {
    switch (shape) {
    case GEOM_SHAPE_BOX:
        return geom_make_box(v2(a, b), out);
    case GEOM_SHAPE_CIRCLE:
        return geom_make_circle(a, out);
    case GEOM_SHAPE_POLYGON: {
        if (vertex_count < 0) return GEOM_ERR_TOO_FEW_VERTICES;
        if (vertex_count > GEOM_MAX_POLYGON_VERTICES) return GEOM_ERR_TOO_MANY_VERTICES;
        vec2 v[GEOM_MAX_POLYGON_VERTICES];
        for (int32_t i = 0; i < vertex_count; i++)
            v[i] = v2(h->vertices[2 * i], h->vertices[2 * i + 1]);
        return geom_make_polygon(v, (int)vertex_count, out);
    }
    }
    return GEOM_ERR_UNKNOWN_KIND;
}

int32_t wasm_world_spawn(wasm_world *h, int32_t kind, int32_t shape, float a, float b,
                         int32_t vertex_count, float x, float y, float angle, uint32_t owner) {
    h->spawned = WORLD_NULL_BODY;
    h->shape_error = GEOM_OK;
    if (kind != WORLD_BODY_STATIC && kind != WORLD_BODY_MOVING) return WASM_ERR_ARGUMENT;
    geom_shape s;
    geom_shape_error err = shape_of(h, shape, a, b, vertex_count, &s);
    if (err != GEOM_OK) {
        h->shape_error = err;
        return WORLD_ERR_INVALID_SHAPE;
    }
    world_body_id id;
    geom_shape_error werr = GEOM_OK;
    world_status st =
        world_spawn_turned(h->w, (world_body_kind)kind, &s, v2(x, y), angle, owner, &id, &werr);
    h->shape_error = werr;
    if (st != WORLD_OK) return st;
    ids_insert(h, id);
    h->spawned = id;
    return WORLD_OK;
}

uint32_t wasm_world_spawned(const wasm_world *h) { return h->spawned; }
int32_t wasm_world_shape_error(const wasm_world *h) { return h->shape_error; }

int32_t wasm_world_despawn(wasm_world *h, uint32_t id) {
    world_status st = world_despawn(h->w, id);
    if (st == WORLD_OK) ids_remove(h, id);
    return st;
}

int32_t wasm_world_set_filter(wasm_world *h, uint32_t id, uint32_t category, uint32_t mask,
                              int32_t sensor) {
    world_filter f = {category, mask, sensor != 0};
    return world_body_set_filter(h->w, id, &f);
}

int32_t wasm_world_set_one_way(wasm_world *h, uint32_t id, int32_t one_way) {
    return world_body_set_one_way(h->w, id, one_way != 0);
}

int32_t wasm_world_set_character(wasm_world *h, uint32_t id, float max_slope, float step_height,
                                 float snap_distance, float jump_speed, float gravity_scale,
                                 uint32_t jump_buffer_ms, uint32_t coyote_ms) {
    world_character_options o = {max_slope,     step_height,    snap_distance, jump_speed,
                                 gravity_scale, jump_buffer_ms, coyote_ms};
    return world_body_set_character(h->w, id, &o);
}

/* ---- intents and steps -------------------------------------------------------------------- */

int32_t wasm_world_intent(wasm_world *h, uint32_t owner, uint32_t id, float vx, float vy,
                          float angular_velocity, uint32_t input_seq, int32_t jump) {
    world_status st = world_set_intent_as(h->w, owner, id, v2(vx, vy), angular_velocity, input_seq);
    /* the daemon's rule (net_session.c on_move): only an accepted intent carries its jump */
    if (st == WORLD_OK && jump) st = world_character_jump(h->w, id);
    return st;
}

void wasm_world_step(wasm_world *h, uint32_t ticks) {
    for (uint32_t i = 0; i < ticks; i++)
        world_step(h->w);
}

uint64_t wasm_world_tick(const wasm_world *h) { return world_tick(h->w); }
uint64_t wasm_world_state_hash(const wasm_world *h) { return world_state_hash(h->w); }
uint32_t wasm_world_body_count(const wasm_world *h) { return h->id_count; }

/* ---- prediction --------------------------------------------------------------------------- */

uint32_t wasm_world_state_size(void) { return (uint32_t)world_body_state_size(); }
uint8_t *wasm_world_state(wasm_world *h) { return h->state; }
int32_t wasm_world_save(wasm_world *h, uint32_t id) { return world_body_save(h->w, id, h->state); }
int32_t wasm_world_restore(wasm_world *h, uint32_t id) {
    return world_body_restore(h->w, id, h->state);
}

int32_t wasm_world_place(wasm_world *h, uint32_t id, float x, float y, float angle, float vx,
                         float vy, float angular_velocity) {
    return world_body_place(h->w, id, v2(x, y), angle, v2(vx, vy), angular_velocity);
}

int32_t wasm_world_place_character(wasm_world *h, uint32_t id, float vertical, int32_t grounded,
                                   uint32_t ground) {
    return world_character_place(h->w, id, vertical, grounded != 0, ground);
}

/* ---- reading bodies ----------------------------------------------------------------------- */

/* One live body's row; false for an unknown or stale id. */
bool wasm_body_of(const world *w, world_body_id id, wasm_body *out) {
    world_body_row r;
    if (!world_body_get(w, id, &r)) return false;
    memset(out, 0, sizeof *out);
    out->id = id;
    out->kind = r.kind;
    out->owner = r.owner;
    out->last_input_seq = r.last_input_seq;
    out->x = r.position.x, out->y = r.position.y;
    out->vx = r.velocity.x, out->vy = r.velocity.y;
    out->angle = r.angle;
    out->angular_velocity = r.angular_velocity;
    vec2 intent;
    float turning;
    if (world_body_intent(w, id, &intent, &turning))
        out->intent_x = intent.x, out->intent_y = intent.y, out->intent_turning = turning;
    world_character_state cs;
    if (world_body_character(w, id, &cs)) {
        out->flags |= WASM_BODY_CHARACTER | (cs.grounded ? WASM_BODY_GROUNDED : 0u);
        out->ground = cs.ground;
        out->vertical = cs.vertical;
    }
    if (world_body_one_way(w, id)) out->flags |= WASM_BODY_ONE_WAY;
    world_filter f;
    if (world_body_filter(w, id, &f) && f.sensor) out->flags |= WASM_BODY_SENSOR;
    return true;
}

bool wasm_shape_of(const world *w, world_body_id id, wasm_shape *out) {
    geom_shape s;
    float angle;
    if (!world_body_local_shape(w, id, &s, &angle)) return false;
    memset(out, 0, sizeof *out);
    out->kind = s.kind;
    switch (s.kind) {
    case GEOM_SHAPE_BOX:
        out->a = s.u.half_extents.x, out->b = s.u.half_extents.y;
        break;
    case GEOM_SHAPE_CIRCLE:
        out->a = s.u.radius;
        break;
    case GEOM_SHAPE_POLYGON:
        out->vertex_count = (uint32_t)s.u.polygon.count;
        for (int i = 0; i < s.u.polygon.count; i++) {
            out->vertices[2 * i] = s.u.polygon.vertices[i].x;
            out->vertices[2 * i + 1] = s.u.polygon.vertices[i].y;
        }
        break;
    }
    return true;
}

static bool row_of(const wasm_world *h, world_body_id id, wasm_body *out) {
    return wasm_body_of(h->w, id, out);
}

uint32_t wasm_world_bodies(wasm_world *h, uint32_t kinds) {
    if (h->row_cap < h->id_count) {
        wasm_body *rows = realloc(h->rows, (size_t)h->id_count * sizeof *rows);
        if (!rows) return UINT32_MAX;
        h->rows = rows;
        h->row_cap = h->id_count;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < h->id_count; i++)
        if (row_of(h, h->ids[i], &h->rows[n]) && (!kinds || (kinds >> h->rows[n].kind) & 1u)) n++;
    return n;
}

const wasm_body *wasm_world_rows(const wasm_world *h) { return h->rows; }

const wasm_body *wasm_world_body(wasm_world *h, uint32_t id) {
    return row_of(h, id, &h->one) ? &h->one : NULL;
}

const wasm_shape *wasm_world_shape(wasm_world *h, uint32_t id) {
    return wasm_shape_of(h->w, id, &h->shape) ? &h->shape : NULL;
}

const char *wasm_world_status_str(int32_t status) {
    if (status == WASM_ERR_ARGUMENT) return "argument out of range";
    return world_status_str((world_status)status);
}

const char *wasm_world_shape_error_str(int32_t error) {
    return geom_shape_error_str((geom_shape_error)error);
}

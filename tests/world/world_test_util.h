/* Helpers shared by the world tests: shapes, and brute-force invariant checks that look at every
 * pair (no broad phase), so they check the world's broad phase too. Depths and bounds are measured
 * by world_oracle.h, never by geom's own queries, so a geom bug cannot hide in the world tests. */
#ifndef COLLIDE_WORLD_TEST_UTIL_H
#define COLLIDE_WORLD_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "world.h"
#include "world_oracle.h"

static inline geom_shape wt_box(float hx, float hy) {
    geom_shape s;
    if (geom_make_box(v2(hx, hy), &s)) abort();
    return s;
}
static inline geom_shape wt_circle(float r) {
    geom_shape s;
    if (geom_make_circle(r, &s)) abort();
    return s;
}
/* Regular polygon of n vertices and circumradius r, first vertex at angle phase. */
static inline geom_shape wt_ngon(int n, float r, float phase) {
    vec2 v[GEOM_MAX_POLYGON_VERTICES];
    for (int i = 0; i < n; i++) {
        double a = phase + 2.0 * 3.14159265358979323846 * i / n;
        v[i] = v2((float)(r * cos(a)), (float)(r * sin(a)));
    }
    geom_shape s;
    if (geom_make_polygon(v, n, &s)) abort();
    return s;
}
/* A convex quad given by its four corners (counter-clockwise), relative to the body origin. */
static inline geom_shape wt_quad(vec2 a, vec2 b, vec2 c, vec2 d) {
    vec2 v[4] = {a, b, c, d};
    geom_shape s;
    if (geom_make_polygon(v, 4, &s)) abort();
    return s;
}

static inline world *wt_world(float half, uint32_t capacity) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-half, -half), v2(half, half));
    cfg.max_bodies = capacity;
    return world_create(&cfg);
}

static inline world_body_id wt_spawn(world *w, world_body_kind kind, geom_shape s, vec2 p) {
    world_body_id id = WORLD_NULL_BODY;
    if (world_spawn(w, kind, &s, p, kind == WORLD_BODY_MOVING ? 7u : 0u, &id, NULL) != WORLD_OK)
        return WORLD_NULL_BODY;
    return id;
}

static inline vec2 wt_pos(const world *w, world_body_id id) {
    world_body_row info;
    if (!world_body_get(w, id, &info)) return v2(NAN, NAN);
    return info.position;
}

/* A body as the oracle sees it: its body-local shape turned by its angle and placed at its
 * position, as the world reports them (turned in double by wo_make_turned, not the world's own
 * turned copy; a body that never turned is its shape at its position). */
static inline bool wt_body(const world *w, world_body_id id, wo_body *out) {
    geom_shape s;
    float angle;
    world_body_row info;
    if (!world_body_local_shape(w, id, &s, &angle) || !world_body_get(w, id, &info)) return false;
    *out = wo_make_turned(&s, info.position.x, info.position.y, angle);
    return true;
}

/* Penetration depth of two bodies (0 when apart), by the oracle. */
static inline float wt_depth(const world *w, world_body_id a, world_body_id b) {
    wo_body ba, bb;
    if (!wt_body(w, a, &ba) || !wt_body(w, b, &bb)) return INFINITY;
    return (float)wo_depth(&ba, &bb);
}

/* Distance between two bodies (> 0 apart, minus the depth when overlapping), by the oracle. */
static inline double wt_gap(const world *w, world_body_id a, world_body_id b) {
    wo_body ba, bb;
    if (!wt_body(w, a, &ba) || !wt_body(w, b, &bb)) return -INFINITY;
    return wo_gap(&ba, &bb);
}

/* The deepest overlap of any mover in movers[] with any static in statics[], and of any two
 * movers, and how many movers are not inside the bounds. Brute force, every pair. */
typedef struct wt_scan {
    float static_depth; /* deepest mover-static overlap */
    float mover_depth;  /* deepest mover-mover overlap */
    int outside;        /* movers outside the bounds */
} wt_scan;

static inline wt_scan wt_scan_all(const world *w, const world_body_id *movers, int mover_count,
                                  const world_body_id *statics, int static_count) {
    wt_scan r = {0.0f, 0.0f, 0};
    aabb bounds = world_get_config(w)->bounds;
    for (int i = 0; i < mover_count; i++) {
        if (!world_body_alive(w, movers[i])) continue;
        wo_body body;
        if (!wt_body(w, movers[i], &body) || wo_bounds_gap(&body, bounds) < 0.0) r.outside++;
        for (int k = 0; k < static_count; k++) {
            float d = wt_depth(w, movers[i], statics[k]);
            if (d > r.static_depth) r.static_depth = d;
        }
        for (int k = i + 1; k < mover_count; k++) {
            if (!world_body_alive(w, movers[k])) continue;
            float d = wt_depth(w, movers[i], movers[k]);
            if (d > r.mover_depth) r.mover_depth = d;
        }
    }
    return r;
}

/* I3's excuse, pair by pair: the deepest mover-mover overlap beyond tol whose pair the last step
 * did not name in world_last_jams() (0 when every such overlap was reported), with that pair in
 * *a, *b. Also checks the report itself: a named pair must really overlap by more than the skin
 * (the world's threshold; the oracle may differ from geom by rounding only), and be named once,
 * else *bogus is set. */
static inline float wt_unexcused_mover_depth(const world *w, const world_body_id *movers,
                                             int mover_count, float tol, world_body_id *a,
                                             world_body_id *b, bool *bogus) {
    world_body_id jams[WORLD_MAX_JAM_REPORT][2];
    size_t jam_count = world_last_jams(w, jams, WORLD_MAX_JAM_REPORT);
    if (jam_count > WORLD_MAX_JAM_REPORT) jam_count = WORLD_MAX_JAM_REPORT;
    *bogus = false;
    for (size_t k = 0; k < jam_count; k++) {
        if (!(jams[k][0] < jams[k][1]) ||
            !(wt_depth(w, jams[k][0], jams[k][1]) > GEOM_SKIN - 1e-5f))
            *bogus = true;
        for (size_t j = 0; j < k; j++) /* each pair once */
            if (jams[j][0] == jams[k][0] && jams[j][1] == jams[k][1]) *bogus = true;
    }
    float worst = 0.0f;
    for (int i = 0; i < mover_count; i++) {
        if (!world_body_alive(w, movers[i])) continue;
        for (int k = i + 1; k < mover_count; k++) {
            if (!world_body_alive(w, movers[k])) continue;
            float d = wt_depth(w, movers[i], movers[k]);
            if (!(d > tol) || !(d > worst)) continue;
            world_body_id lo = movers[i] < movers[k] ? movers[i] : movers[k];
            world_body_id hi = movers[i] < movers[k] ? movers[k] : movers[i];
            bool reported = false;
            for (size_t j = 0; j < jam_count && !reported; j++)
                reported = jams[j][0] == lo && jams[j][1] == hi;
            if (reported) continue;
            worst = d, *a = lo, *b = hi;
        }
    }
    return worst;
}

#endif

/* Brute-force oracles for the geom tests, written independently of server/geom's algorithms:
 * double precision, supports by enumerating corners and vertices, edge normals recomputed from
 * the vertices (the shapes' stored normals are never read), no Minkowski or Cyrus-Beck code.
 *
 * The central oracle is the gap along a direction u (from A towards B):
 *     gap(u) = min over B of dot(u, x) - max over A of dot(u, x),
 * and its maximum over a candidate set of directions. For convex shapes that maximum is zero
 * exactly when they touch, negative (minus the penetration depth) when they overlap and
 * positive when they are apart, provided the set holds every edge normal of both shapes and,
 * for a circle, the direction from every vertex / centre of the other shape to its centre. */
#ifndef COLLIDE_TEST_GEOM_ORACLE_H
#define COLLIDE_TEST_GEOM_ORACLE_H

#include "geom.h"
#include "harness.h"

typedef struct dvec {
    double x, y;
} dvec;

#define ORACLE_MAX_DIRS 96

typedef struct oracle_dirs {
    int count;                 /* directions in use */
    dvec dir[ORACLE_MAX_DIRS]; /* unit directions */
} oracle_dirs;

static inline dvec dv(double x, double y) {
    dvec r = {x, y};
    return r;
}
static inline double dv_dot(dvec a, dvec b) { return a.x * b.x + a.y * b.y; }
static inline dvec dv_unit(dvec a) {
    double l = sqrt(a.x * a.x + a.y * a.y);
    return l > 0 ? dv(a.x / l, a.y / l) : dv(0, 1);
}

/* The corner points of a box or polygon, in world coordinates; 0 for a circle. */
static inline int oracle_points(const geom_shape *s, dvec pos, dvec *out) {
    if (s->kind == GEOM_SHAPE_BOX) {
        double hx = s->u.half_extents.x, hy = s->u.half_extents.y;
        out[0] = dv(pos.x - hx, pos.y - hy);
        out[1] = dv(pos.x + hx, pos.y - hy);
        out[2] = dv(pos.x + hx, pos.y + hy);
        out[3] = dv(pos.x - hx, pos.y + hy);
        return 4;
    }
    if (s->kind == GEOM_SHAPE_POLYGON) {
        for (int i = 0; i < s->u.polygon.count; i++)
            out[i] = dv(pos.x + s->u.polygon.vertices[i].x, pos.y + s->u.polygon.vertices[i].y);
        return s->u.polygon.count;
    }
    return 0;
}

/* max over the shape of dot(u, x) */
static inline double oracle_support(const geom_shape *s, dvec pos, dvec u) {
    if (s->kind == GEOM_SHAPE_CIRCLE) return dv_dot(u, pos) + s->u.radius;
    dvec pts[GEOM_MAX_POLYGON_VERTICES];
    int n = oracle_points(s, pos, pts);
    double m = dv_dot(u, pts[0]);
    for (int i = 1; i < n; i++)
        m = fmax(m, dv_dot(u, pts[i]));
    return m;
}

static inline double oracle_gap_dir(const geom_shape *a, dvec pa, const geom_shape *b, dvec pb,
                                    dvec u) {
    return -oracle_support(b, pb, dv(-u.x, -u.y)) - oracle_support(a, pa, u);
}

static inline void oracle_add_dir(oracle_dirs *d, dvec u) {
    if (d->count + 2 > ORACLE_MAX_DIRS) abort();
    d->dir[d->count++] = u;
    d->dir[d->count++] = dv(-u.x, -u.y);
}

/* Edge normals (from the vertices) of a box or polygon; both signs. */
static inline void oracle_add_edge_normals(oracle_dirs *d, const geom_shape *s) {
    dvec pts[GEOM_MAX_POLYGON_VERTICES];
    int n = oracle_points(s, dv(0, 0), pts);
    for (int i = 0; i < n; i++) {
        dvec a = pts[i], b = pts[(i + 1) % n];
        oracle_add_dir(d, dv_unit(dv(b.y - a.y, a.x - b.x)));
    }
}

/* Directions from every corner (or the centre) of `other` to the centre of circle `c`. */
static inline void oracle_add_circle_dirs(oracle_dirs *d, const geom_shape *c, dvec pc,
                                          const geom_shape *other, dvec po) {
    if (c->kind != GEOM_SHAPE_CIRCLE) return;
    dvec pts[GEOM_MAX_POLYGON_VERTICES];
    int n = oracle_points(other, po, pts);
    if (n == 0) {
        pts[0] = po;
        n = 1;
    }
    for (int i = 0; i < n; i++)
        oracle_add_dir(d, dv_unit(dv(pc.x - pts[i].x, pc.y - pts[i].y)));
}

/* The full candidate set for A at pa and B at pb. Edge normals do not depend on the positions;
 * the circle directions do. */
static inline void oracle_dirs_for(oracle_dirs *d, const geom_shape *a, dvec pa,
                                   const geom_shape *b, dvec pb) {
    d->count = 0;
    oracle_add_edge_normals(d, a);
    oracle_add_edge_normals(d, b);
    oracle_add_circle_dirs(d, a, pa, b, pb);
    oracle_add_circle_dirs(d, b, pb, a, pa);
    if (d->count == 0) oracle_add_dir(d, dv(0, 1)); /* concentric circles: any direction */
}

/* Largest gap over the candidates: 0 touching, < 0 overlapping (minus the depth), > 0 apart. */
static inline double oracle_gap(const geom_shape *a, dvec pa, const geom_shape *b, dvec pb,
                                dvec *best_dir) {
    oracle_dirs d;
    oracle_dirs_for(&d, a, pa, b, pb);
    double best = -INFINITY;
    for (int i = 0; i < d.count; i++) {
        double g = oracle_gap_dir(a, pa, b, pb, d.dir[i]);
        if (g > best) {
            best = g;
            if (best_dir) *best_dir = d.dir[i];
        }
    }
    return best;
}

/* Signed distance of a point to a shape: exact inside and on the boundary, a lower bound of the
 * distance outside (box and polygon: the largest edge-plane distance). */
static inline double oracle_point_sd(const geom_shape *s, dvec pos, dvec p) {
    if (s->kind == GEOM_SHAPE_CIRCLE)
        return sqrt((p.x - pos.x) * (p.x - pos.x) + (p.y - pos.y) * (p.y - pos.y)) - s->u.radius;
    dvec pts[GEOM_MAX_POLYGON_VERTICES];
    int n = oracle_points(s, pos, pts);
    double best = -INFINITY;
    for (int i = 0; i < n; i++) {
        dvec a = pts[i], b = pts[(i + 1) % n];
        dvec nrm = dv_unit(dv(b.y - a.y, a.x - b.x));
        best = fmax(best, dv_dot(nrm, dv(p.x - a.x, p.y - a.y)));
    }
    return best;
}

/* ---- Random shapes ----------------------------------------------------------------------------
 */

/* A random convex polygon of `n` points on a rotated, off-centre ellipse, built by the hull.
 * Returns false (rarely) when the hull refuses the points. */
static inline bool oracle_random_polygon(collide_rng *rng, int n, geom_shape *out) {
    float ax = collide_rng_range(rng, 0.3f, 2.0f), ay = collide_rng_range(rng, 0.3f, 2.0f);
    float rot = collide_rng_range(rng, 0, 6.2831853f);
    float cx = collide_rng_range(rng, -0.5f, 0.5f), cy = collide_rng_range(rng, -0.5f, 0.5f);
    vec2 pts[GEOM_MAX_POLYGON_VERTICES];
    for (int i = 0; i < n; i++) {
        /* Stratified angles keep neighbours apart, so the hull keeps all n points. */
        float ang = 6.2831853f * ((float)i + collide_rng_range(rng, 0.1f, 0.9f)) / (float)n;
        float x = ax * cosf(ang), y = ay * sinf(ang);
        pts[i] = v2(cx + x * cosf(rot) - y * sinf(rot), cy + x * sinf(rot) + y * cosf(rot));
    }
    return geom_make_hull(pts, n, out) == GEOM_OK;
}

static inline geom_shape oracle_random_shape(collide_rng *rng, geom_shape_kind kind,
                                             int poly_vertices) {
    geom_shape s;
    for (;;) {
        geom_shape_error err = GEOM_OK;
        if (kind == GEOM_SHAPE_BOX)
            err = geom_make_box(
                v2(collide_rng_range(rng, 0.2f, 2.0f), collide_rng_range(rng, 0.2f, 2.0f)), &s);
        else if (kind == GEOM_SHAPE_CIRCLE)
            err = geom_make_circle(collide_rng_range(rng, 0.2f, 2.0f), &s);
        else if (!oracle_random_polygon(rng, poly_vertices, &s))
            continue;
        if (err == GEOM_OK) return s;
    }
}

/* Radius of a disc around the body position that contains the shape. */
static inline float oracle_bound_radius(const geom_shape *s) {
    if (s->kind == GEOM_SHAPE_CIRCLE) return s->u.radius;
    if (s->kind == GEOM_SHAPE_BOX) return v2_len(s->u.half_extents);
    float r = 0;
    for (int i = 0; i < s->u.polygon.count; i++)
        r = fmaxf(r, v2_len(s->u.polygon.vertices[i]));
    return r;
}

#endif

/* Helpers shared by the geom translation units; not part of the public API. */
#ifndef COLLIDE_GEOM_INTERNAL_H
#define COLLIDE_GEOM_INTERNAL_H

#include "collide_assert.h"
#include "geom.h"

/* Inputs beyond GEOM_MAX_COORD (or non-finite) get the defined "no overlap / no hit" answer
 * before any arithmetic that could overflow; NaN fails both comparisons. */
static inline bool geom_coord_ok(vec2 a) {
    return fabsf(a.x) <= GEOM_MAX_COORD && fabsf(a.y) <= GEOM_MAX_COORD;
}

/* Segment o + t*d (t in [0,1]) against the circle of `radius` at the origin, from outside.
 * On a hit: the entry time and the outward unit normal there. */
bool geom_ray_circle(vec2 o, vec2 d, float radius, float *t_out, vec2 *n_out);
/* The same in double, for callers that compare its time with other double-precision hits. */
bool geom_ray_circle_d(double ox, double oy, double dx, double dy, double r, double *t_out,
                       vec2 *n_out);

/* A convex polygon seen as vertex and normal arrays, so boxes can share the circle code. */
typedef struct poly_view {
    int count;     /* vertices */
    const vec2 *v; /* CCW vertices, local */
    const vec2 *n; /* outward normal of edge i -> i+1 */
} poly_view;

typedef struct box_poly {
    vec2 v[4]; /* corners, CCW from bottom-left */
    vec2 n[4]; /* bottom, right, top, left */
} box_poly;

static inline poly_view box_as_poly(vec2 h, box_poly *storage) {
    storage->v[0] = v2(-h.x, -h.y);
    storage->v[1] = v2(h.x, -h.y);
    storage->v[2] = v2(h.x, h.y);
    storage->v[3] = v2(-h.x, h.y);
    storage->n[0] = v2(0.0f, -1.0f);
    storage->n[1] = v2(1.0f, 0.0f);
    storage->n[2] = v2(0.0f, 1.0f);
    storage->n[3] = v2(-1.0f, 0.0f);
    poly_view pv = {4, storage->v, storage->n};
    return pv;
}

static inline poly_view polygon_view(const geom_polygon *p) {
    /* every loop over a view reads count entries of arrays sized GEOM_MAX_POLYGON_VERTICES: a
     * polygon that skipped geom_make_polygon's validation would read past them */
    COLLIDE_ASSERT(p->count >= 3 && p->count <= GEOM_MAX_POLYGON_VERTICES);
    poly_view pv = {p->count, p->vertices, p->normals};
    return pv;
}

/* A box or polygon as vertex and normal arrays (boxes into storage). */
static inline poly_view shape_poly(const geom_shape *s, box_poly *storage) {
    /* the caller took circles apart first: a circle's union holds a radius, not vertices */
    COLLIDE_ASSERT(s->kind == GEOM_SHAPE_BOX || s->kind == GEOM_SHAPE_POLYGON);
    return s->kind == GEOM_SHAPE_BOX ? box_as_poly(s->u.half_extents, storage)
                                     : polygon_view(&s->u.polygon);
}

#endif

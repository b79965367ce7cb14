/* geom: shapes, validation, hull and single-shape queries (AABB, containment, ray casts).
 * The pair queries (overlap, sweep) live in geom_pair.c. */
#include "geom.h"
#include "geom_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *geom_shape_error_str(geom_shape_error err) {
    switch (err) {
    case GEOM_OK:
        return "ok";
    case GEOM_ERR_NON_FINITE:
        return "shape has a NaN or infinite value";
    case GEOM_ERR_TOO_FEW_VERTICES:
        return "polygon has fewer than 3 vertices";
    case GEOM_ERR_TOO_MANY_VERTICES:
        return "polygon has more than 16 vertices";
    case GEOM_ERR_DUPLICATE_VERTEX:
        return "polygon has duplicate vertices";
    case GEOM_ERR_COLLINEAR:
        return "polygon has three collinear consecutive vertices";
    case GEOM_ERR_CLOCKWISE:
        return "polygon vertices are clockwise";
    case GEOM_ERR_NON_CONVEX:
        return "polygon is not convex";
    case GEOM_ERR_ZERO_AREA:
        return "polygon has zero area";
    case GEOM_ERR_SIZE_OUT_OF_RANGE:
        return "shape size out of range";
    case GEOM_ERR_UNKNOWN_KIND:
        return "unknown shape kind";
    }
    return "unknown shape error";
}

static bool size_in_range(float x) { return x >= GEOM_MIN_SIZE && x <= GEOM_MAX_SIZE; }

static vec2 edge_normal(vec2 a, vec2 b) { return v2_normalize(v2_right_perp(v2_sub(b, a))); }

/* The checks run in a fixed order so each bad input names one reason: the cheapest structural
 * ones first, the geometric ones (which assume finite, distinct points) last. */
static geom_shape_error validate_polygon(const vec2 *v, int count) {
    if (count < 3) return GEOM_ERR_TOO_FEW_VERTICES;
    if (count > GEOM_MAX_POLYGON_VERTICES) return GEOM_ERR_TOO_MANY_VERTICES;
    for (int i = 0; i < count; i++)
        if (!v2_is_finite(v[i])) return GEOM_ERR_NON_FINITE;
    for (int i = 0; i < count; i++)
        if (fabsf(v[i].x) > GEOM_MAX_SIZE || fabsf(v[i].y) > GEOM_MAX_SIZE)
            return GEOM_ERR_SIZE_OUT_OF_RANGE;
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            if (v2_len_sq(v2_sub(v[i], v[j])) <= GEOM_LINEAR_SLOP * GEOM_LINEAR_SLOP)
                return GEOM_ERR_DUPLICATE_VERTEX;

    /* Twice the signed area, summed relative to v[0] so large coordinates do not cancel. */
    float area2 = 0.0f, max_edge_sq = 0.0f;
    for (int i = 0; i < count; i++) {
        vec2 a = v[i], b = v[(i + 1) % count];
        area2 += v2_cross(v2_sub(a, v[0]), v2_sub(b, v[0]));
        float e = v2_len_sq(v2_sub(b, a));
        if (e > max_edge_sq) max_edge_sq = e;
    }
    if (fabsf(area2) <= GEOM_COLLINEAR_TOL * max_edge_sq) return GEOM_ERR_ZERO_AREA;
    if (area2 < 0.0f) return GEOM_ERR_CLOCKWISE;

    for (int i = 0; i < count; i++) {
        vec2 prev = v[(i + count - 1) % count], cur = v[i], next = v[(i + 1) % count];
        vec2 e0 = v2_sub(cur, prev), e1 = v2_sub(next, cur);
        float cr = v2_cross(e0, e1);
        /* sin of the turn angle: scale-free, so the tolerance means the same at any size. */
        if (fabsf(cr) <= GEOM_COLLINEAR_TOL * v2_len(e0) * v2_len(e1)) return GEOM_ERR_COLLINEAR;
        if (cr < 0.0f) return GEOM_ERR_NON_CONVEX;
    }
    /* Left turns everywhere still allow a self-intersecting star (turning twice); every vertex
     * strictly inside every edge's half-plane rules it out. */
    for (int i = 0; i < count; i++) {
        vec2 a = v[i], e = v2_sub(v[(i + 1) % count], a);
        for (int j = 0; j < count; j++) {
            if (j == i || j == (i + 1) % count) continue;
            if (v2_cross(e, v2_sub(v[j], a)) <= 0.0f) return GEOM_ERR_NON_CONVEX;
        }
    }
    /* A polygon thinner than GEOM_MIN_SIZE across any edge is as degenerate as a tiny box. */
    for (int i = 0; i < count; i++) {
        vec2 n = edge_normal(v[i], v[(i + 1) % count]);
        float width = 0.0f;
        for (int j = 0; j < count; j++) {
            float depth = -v2_dot(n, v2_sub(v[j], v[i]));
            if (depth > width) width = depth;
        }
        if (width < GEOM_MIN_SIZE) return GEOM_ERR_SIZE_OUT_OF_RANGE;
    }
    return GEOM_OK;
}

static geom_shape_error validate_box(vec2 h) {
    if (!v2_is_finite(h)) return GEOM_ERR_NON_FINITE;
    if (!size_in_range(h.x) || !size_in_range(h.y)) return GEOM_ERR_SIZE_OUT_OF_RANGE;
    return GEOM_OK;
}

static geom_shape_error validate_circle(float r) {
    if (!isfinite(r)) return GEOM_ERR_NON_FINITE;
    if (!size_in_range(r)) return GEOM_ERR_SIZE_OUT_OF_RANGE;
    return GEOM_OK;
}

geom_shape_error geom_make_box(vec2 half_extents, geom_shape *out) {
    geom_shape_error err = validate_box(half_extents);
    if (err || !out) return err;
    memset(out, 0, sizeof *out);
    out->kind = GEOM_SHAPE_BOX;
    out->u.half_extents = half_extents;
    return GEOM_OK;
}

geom_shape_error geom_make_circle(float radius, geom_shape *out) {
    geom_shape_error err = validate_circle(radius);
    if (err || !out) return err;
    memset(out, 0, sizeof *out);
    out->kind = GEOM_SHAPE_CIRCLE;
    out->u.radius = radius;
    return GEOM_OK;
}

geom_shape_error geom_make_polygon(const vec2 *vertices, int count, geom_shape *out) {
    if (!vertices) return GEOM_ERR_TOO_FEW_VERTICES;
    geom_shape_error err = validate_polygon(vertices, count);
    if (err || !out) return err;
    /* Zeroed first so unused slots are deterministic (shapes can be hashed or compared). */
    memset(out, 0, sizeof *out);
    out->kind = GEOM_SHAPE_POLYGON;
    out->u.polygon.count = count;
    for (int i = 0; i < count; i++) {
        out->u.polygon.vertices[i] = vertices[i];
        out->u.polygon.normals[i] = edge_normal(vertices[i], vertices[(i + 1) % count]);
    }
    return GEOM_OK;
}

/* Gift wrapping: O(points * hull vertices) with no scratch memory, and the hull is capped at
 * GEOM_MAX_POLYGON_VERTICES anyway, so it beats sorting for every input the cap allows. */
geom_shape_error geom_make_hull(const vec2 *points, int count, geom_shape *out) {
    if (!points || count < 3) return GEOM_ERR_TOO_FEW_VERTICES;
    for (int i = 0; i < count; i++)
        if (!v2_is_finite(points[i])) return GEOM_ERR_NON_FINITE;
    int start = 0;
    for (int i = 1; i < count; i++) {
        vec2 p = points[i], s = points[start];
        if (p.y < s.y || (p.y == s.y && p.x < s.x)) start = i;
    }
    vec2 hull[GEOM_MAX_POLYGON_VERTICES];
    int n = 0, cur = start;
    const float slop_sq = GEOM_LINEAR_SLOP * GEOM_LINEAR_SLOP;
    for (;;) {
        if (n == GEOM_MAX_POLYGON_VERTICES) return GEOM_ERR_TOO_MANY_VERTICES;
        hull[n++] = points[cur];
        int next = -1;
        vec2 base = points[cur];
        for (int i = 0; i < count; i++) {
            vec2 d = v2_sub(points[i], base);
            float d_sq = v2_len_sq(d);
            if (d_sq <= slop_sq) continue;
            if (next < 0) {
                next = i;
                continue;
            }
            vec2 e = v2_sub(points[next], base);
            float e_sq = v2_len_sq(e);
            float cr = v2_cross(e, d);
            float tol = GEOM_COLLINEAR_TOL * sqrtf(e_sq) * sqrtf(d_sq);
            /* Keep the most clockwise candidate, and the farthest of collinear ones so the
             * hull has no collinear vertices for the validator to refuse. */
            if (cr < -tol || (cr <= tol && v2_dot(e, d) > 0.0f && d_sq > e_sq)) next = i;
        }
        if (next < 0) break; /* every point coincides with this one */
        if (v2_len_sq(v2_sub(points[next], hull[0])) <= slop_sq) break;
        cur = next;
    }
    if (n < 3) return GEOM_ERR_ZERO_AREA; /* all points on one line (or one point) */
    return geom_make_polygon(hull, n, out);
}

geom_shape_error geom_shape_rotate(const geom_shape *shape, float angle, geom_shape *out) {
    if (!shape) return GEOM_ERR_UNKNOWN_KIND;
    if (!isfinite(angle)) return GEOM_ERR_NON_FINITE;
    geom_shape_error err = geom_shape_validate(shape);
    if (err) return err;
    if (shape->kind == GEOM_SHAPE_CIRCLE) {
        if (out) *out = *shape;
        return GEOM_OK;
    }
    /* Quarter turns are exact for boxes: keep them boxes (the fast paths stay available). */
    double quarters = (double)angle / 1.57079632679489661923 /* pi / 2 */;
    double nearest = floor(quarters + 0.5);
    if (shape->kind == GEOM_SHAPE_BOX && fabs(quarters - nearest) < 1e-6) {
        vec2 h = shape->u.half_extents;
        if (((long long)fabs(nearest)) % 2 == 1) h = v2(h.y, h.x);
        return geom_make_box(h, out);
    }
    vec2 src[GEOM_MAX_POLYGON_VERTICES];
    int n;
    if (shape->kind == GEOM_SHAPE_BOX) {
        vec2 h = shape->u.half_extents;
        src[0] = v2(-h.x, -h.y);
        src[1] = v2(h.x, -h.y);
        src[2] = v2(h.x, h.y);
        src[3] = v2(-h.x, h.y);
        n = 4;
    } else {
        n = shape->u.polygon.count;
        memcpy(src, shape->u.polygon.vertices, (size_t)n * sizeof src[0]);
    }
    /* In double so the turned vertices are the correctly rounded images of the originals; the
     * geom's own cos and sin (libm's differ by machine in the last bit: geom_trig.c). */
    double c, s;
    geom_sincos((double)angle, &c, &s);
    vec2 turned[GEOM_MAX_POLYGON_VERTICES];
    for (int i = 0; i < n; i++) {
        double x = src[i].x, y = src[i].y;
        turned[i] = v2((float)(c * x - s * y), (float)(s * x + c * y));
    }
    return geom_make_polygon(turned, n, out);
}

geom_shape_error geom_shape_validate(const geom_shape *shape) {
    if (!shape) return GEOM_ERR_UNKNOWN_KIND;
    switch (shape->kind) {
    case GEOM_SHAPE_BOX:
        return validate_box(shape->u.half_extents);
    case GEOM_SHAPE_CIRCLE:
        return validate_circle(shape->u.radius);
    case GEOM_SHAPE_POLYGON:
        return validate_polygon(shape->u.polygon.vertices, shape->u.polygon.count);
    }
    return GEOM_ERR_UNKNOWN_KIND;
}

/* ---- Single-shape queries -------------------------------------------------------------------- */

aabb geom_shape_aabb(const geom_shape *shape, vec2 position) {
    switch (shape->kind) {
    case GEOM_SHAPE_BOX: {
        vec2 h = shape->u.half_extents;
        return aabb_make(v2_sub(position, h), v2_add(position, h));
    }
    case GEOM_SHAPE_CIRCLE: {
        float r = shape->u.radius;
        return aabb_make(v2(position.x - r, position.y - r), v2(position.x + r, position.y + r));
    }
    case GEOM_SHAPE_POLYGON: {
        const geom_polygon *p = &shape->u.polygon;
        vec2 lo = p->vertices[0], hi = p->vertices[0];
        for (int i = 1; i < p->count; i++) {
            lo = v2_min(lo, p->vertices[i]);
            hi = v2_max(hi, p->vertices[i]);
        }
        return aabb_make(v2_add(position, lo), v2_add(position, hi));
    }
    }
    return aabb_make(position, position);
}

bool geom_shape_contains_point(const geom_shape *shape, vec2 position, vec2 point) {
    vec2 p = v2_sub(point, position);
    switch (shape->kind) {
    case GEOM_SHAPE_BOX: {
        vec2 h = shape->u.half_extents;
        return fabsf(p.x) <= h.x && fabsf(p.y) <= h.y;
    }
    case GEOM_SHAPE_CIRCLE: {
        double r = shape->u.radius;
        return (double)p.x * p.x + (double)p.y * p.y <= r * r;
    }
    case GEOM_SHAPE_POLYGON: {
        const geom_polygon *poly = &shape->u.polygon;
        for (int i = 0; i < poly->count; i++)
            if (v2_dot(poly->normals[i], v2_sub(p, poly->vertices[i])) > 0.0f) return false;
        return true;
    }
    }
    return false;
}

/* Clips the segment o + t*d, t in [0,1], against the half-plane dot(n, x) <= k, keeping the
 * entering face. Divisions only happen once the quotient is known to lie in the current
 * interval, so tiny denominators cannot overflow. */
typedef struct ray_clip {
    float t0;     /* latest entry so far */
    float t1;     /* earliest exit so far */
    vec2 normal;  /* face of the latest entry */
    bool miss;    /* the segment cannot reach the inside */
    bool entered; /* some face was crossed inwards: else the origin is on the boundary or inside */
} ray_clip;

static inline void ray_clip_face(ray_clip *c, vec2 n, float k, vec2 o, vec2 d) {
    float num = k - v2_dot(n, o); /* >= 0: origin inside this half-plane */
    float den = v2_dot(n, d);
    if (den < 0.0f) {
        if (num < c->t0 * den) {
            c->t0 = num / den;
            c->normal = n;
            c->entered = true;
        }
    } else if (den > 0.0f) {
        if (num < c->t1 * den) c->t1 = num / den;
    } else if (num < 0.0f) {
        c->miss = true;
    }
}

bool geom_ray_cast(const geom_shape *shape, vec2 position, vec2 origin, vec2 displacement,
                   geom_ray_hit *out) {
    vec2 o = v2_sub(origin, position), d = displacement;
    if (!geom_coord_ok(o) || !geom_coord_ok(d)) return false;
    if (geom_shape_contains_point(shape, position, origin)) return false;
    if (shape->kind == GEOM_SHAPE_CIRCLE) {
        float t;
        vec2 n;
        if (!geom_ray_circle(o, d, shape->u.radius, &t, &n)) return false;
        if (out) {
            out->t = t;
            out->normal = n;
        }
        return true;
    }
    ray_clip c = {0.0f, 1.0f, v2(0.0f, 1.0f), false, false};
    if (shape->kind == GEOM_SHAPE_BOX) {
        vec2 h = shape->u.half_extents;
        ray_clip_face(&c, v2(1.0f, 0.0f), h.x, o, d);
        ray_clip_face(&c, v2(-1.0f, 0.0f), h.x, o, d);
        ray_clip_face(&c, v2(0.0f, 1.0f), h.y, o, d);
        ray_clip_face(&c, v2(0.0f, -1.0f), h.y, o, d);
    } else if (shape->kind == GEOM_SHAPE_POLYGON) {
        const geom_polygon *p = &shape->u.polygon;
        for (int i = 0; i < p->count && !c.miss; i++)
            ray_clip_face(&c, p->normals[i], v2_dot(p->normals[i], p->vertices[i]), o, d);
    } else {
        return false;
    }
    /* No face entered: by the clip's own rounding the origin is on the boundary (a point within
     * an ulp of a polygon face can test outside in geom_shape_contains_point and inside here),
     * and a ray from the boundary reports no hit, rather than t = 0 with no face's normal. */
    if (c.miss || !c.entered || c.t0 > c.t1) return false;
    if (out) {
        out->t = c.t0;
        out->normal = c.normal;
    }
    return true;
}

bool geom_ray_circle_d(double ox, double oy, double dx, double dy, double r, double *t_out,
                       vec2 *n_out) {
    /* Double precision: the quadratic squares coordinates, which float would overflow or
     * cancel at the sizes and distances the world allows. */
    double c = ox * ox + oy * oy - r * r;
    double b = ox * dx + oy * dy;
    if (!(c > 0.0) || !(b < 0.0)) return false; /* inside/touching, or moving away */
    double a = dx * dx + dy * dy;
    double disc = b * b - a * c;
    if (disc < 0.0) return false;
    /* c / (-b + sqrt) is the smaller root without the cancellation of (-b - sqrt) / a. */
    double t = c / (-b + sqrt(disc));
    if (!(t <= 1.0)) return false;
    double hx = ox + t * dx, hy = oy + t * dy;
    double len = sqrt(hx * hx + hy * hy);
    *t_out = t;
    *n_out = len > 0.0 ? v2((float)(hx / len), (float)(hy / len)) : v2(0.0f, 1.0f);
    return true;
}

bool geom_ray_circle(vec2 o, vec2 d, float radius, float *t_out, vec2 *n_out) {
    double t;
    if (!geom_ray_circle_d(o.x, o.y, d.x, d.y, radius, &t, n_out)) return false;
    *t_out = (float)t;
    return true;
}

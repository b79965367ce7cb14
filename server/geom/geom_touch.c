/* geom_touch: where two shapes touch (geom_touch_point, geom.h), the point a shape query reports
 * at a cast's time of impact. Not on any hot path: once per reported hit. */
#include <float.h>
#include <math.h>

#include "geom_internal.h"

/* The point of polygon p's boundary nearest c (both in p's frame); *dist gets its distance. */
static vec2 boundary_nearest(poly_view p, vec2 c, float *dist) {
    vec2 best = p.v[0];
    float best_sq = FLT_MAX;
    for (int i = 0; i < p.count; i++) {
        vec2 a = p.v[i], e = v2_sub(p.v[i + 1 < p.count ? i + 1 : 0], a);
        float len_sq = v2_len_sq(e);
        float t = len_sq > 0.0f ? v2_dot(v2_sub(c, a), e) / len_sq : 0.0f;
        vec2 q = v2_mul_add(a, fminf(fmaxf(t, 0.0f), 1.0f), e);
        float d_sq = v2_len_sq(v2_sub(c, q));
        if (d_sq < best_sq) best_sq = d_sq, best = q;
    }
    *dist = sqrtf(best_sq);
    return best;
}

/* Largest absolute coordinate of a polygon's vertices: its size seen from its origin. */
static float poly_reach(poly_view p) {
    float m = 0.0f;
    for (int i = 0; i < p.count; i++)
        m = fmaxf(m, fmaxf(fabsf(p.v[i].x), fabsf(p.v[i].y)));
    return m;
}

vec2 geom_touch_point(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, vec2 normal) {
    float unused;
    if (b->kind == GEOM_SHAPE_CIRCLE) return v2_mul_add(pb, -b->u.radius, normal);
    box_poly sb;
    poly_view vb = shape_poly(b, &sb);
    vec2 r = v2_sub(pa, pb); /* A's origin in B's frame */
    if (a->kind == GEOM_SHAPE_CIRCLE) return v2_add(pb, boundary_nearest(vb, r, &unused));
    /* Two polygons touch along a vertex of one against the other's boundary, or along a stretch
     * of two faces whose ends are such vertices. Every vertex within rounding of the other's
     * boundary marks a touching place; their middle, put back on B's boundary, is the point (the
     * middle of the shared stretch for faces). Rounding: the time of impact leaves the shapes a
     * few ulps of their positions apart (or into each other), and the faces' own ulps. */
    box_poly sa;
    poly_view va = shape_poly(a, &sa);
    vec2 on_b[GEOM_MAX_POLYGON_VERTICES];
    float dist_a[GEOM_MAX_POLYGON_VERTICES], dist_b[GEOM_MAX_POLYGON_VERTICES];
    float least = FLT_MAX;
    for (int i = 0; i < va.count; i++) {
        on_b[i] = boundary_nearest(vb, v2_add(r, va.v[i]), &dist_a[i]);
        least = fminf(least, dist_a[i]);
    }
    for (int j = 0; j < vb.count; j++) {
        boundary_nearest(va, v2_sub(vb.v[j], r), &dist_b[j]);
        least = fminf(least, dist_b[j]);
    }
    float place = fmaxf(fmaxf(fabsf(pa.x), fabsf(pa.y)), fmaxf(fabsf(pb.x), fabsf(pb.y)));
    float tol = 1e-4f * fmaxf(poly_reach(va), poly_reach(vb)) + 16.0f * FLT_EPSILON * place;
    vec2 sum = v2(0.0f, 0.0f);
    int k = 0;
    for (int i = 0; i < va.count; i++)
        if (dist_a[i] <= least + tol) sum = v2_add(sum, on_b[i]), k++;
    for (int j = 0; j < vb.count; j++)
        if (dist_b[j] <= least + tol) sum = v2_add(sum, vb.v[j]), k++;
    return v2_add(pb, boundary_nearest(vb, v2_scale(sum, 1.0f / (float)k), &unused));
}

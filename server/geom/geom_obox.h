/* geom_obox: geom_poly_sweep for a turned box against fixed axis-aligned boxes (a turning body's
 * slide among box tiles), static inline so the slide's loop holds it without a call. Included by
 * geom.h, after geom_rot.h.
 *
 * The polygon is geom_shape_orient's of a box of half extents h turned by q (q != (1, 0): that
 * stays a box). Its sweep against a box (bp_sweep, the box X, the polygon Y) clips along 8 axes:
 * the world's 4 and the polygon's 4 edge normals. Opposite edges pair up: n_2 and n_3 are -n_0
 * and -n_1 in value (geom_rotate of opposite unit vectors), so the gap along -n_2 uses
 * dot(n_0, r) and the box's support along n_0, and every axis pair is a line along which the
 * motion closes one axis and opens the other. Per box: 2 dot products, 2 supports, 8 gaps; a box
 * the sweep misses (some gap above what the motion can close) is rejected by 8 compares against
 * thresholds kept per motion, the others take the latest entry over the 4 closing axes and the
 * earliest exit over the 4 opening ones, each in the order bp_sweep compares them. The floats are
 * geom_poly_sweep_box's on that polygon and the answer is the same, bit for bit (the sign of a
 * zero product aside, which subtracting an edge's nonzero offset drops). */
#ifndef COLLIDE_GEOM_OBOX_H
#define COLLIDE_GEOM_OBOX_H

#include <float.h>

typedef struct geom_obox_sweep {
    /* scalars, not arrays, so that the inlined copy keeps them in registers */
    vec2 n0, n1, n2, n3;              /* geom_shape_orient's edge normals */
    vec2 an0, an1;                    /* |n_0|, |n_1| componentwise (|n_2|, |n_3| the same) */
    float nv0, nv1, nv2, nv3;         /* dot(n_j, v_j): edge j's offset along its normal */
    float min_x, max_x, min_y, max_y; /* the turned box's bounds (polygon_extent) */
    /* Per motion: bp_sweep's relative motion d = -da, and for each line L (0: y, axes 0 and 1;
     * 1: x, axes 2 and 3; 2: n_0, axes 4 and 6; 3: n_1, axes 5 and 7) the motion's speed u_L
     * along its first axis (-u_L along its second): f_L = u_L > 0, the first axis closes; sp_L =
     * |u_L|; thr_L, the closing gap above which the sweep misses (above both the speed and the
     * slop). At u_L = 0 no axis closes: thr_L is then -slop like an opening axis's, and a gap
     * below it can neither enter nor exit at speed 0. */
    vec2 d;
    bool d_ok; /* geom_coord_ok(da) */
    bool f0, f1, f2, f3;
    bool swap_c, swap_o; /* the box's closing (opening) axes met 6 before 5 */
    float sp0, sp1, sp2, sp3;
    float thr0, thr1, thr2, thr3;
} geom_obox_sweep;

static inline float geom_obox_min_(float a, float b) { return b < a ? b : a; }
static inline float geom_obox_max_(float a, float b) { return b > a ? b : a; }

/* geom_poly_sweep_prepare of geom_shape_orient's polygon for the box h turned by q, whose
 * components must both be nonzero (and finite): geom_rotate's products with 0 and +-1 are then
 * +-0 and +-c, +-s, so its normals are exactly (s, -c), (c, s), (-s, c), (-c, -s). */
static inline void geom_obox_sweep_prepare(geom_obox_sweep *s, vec2 h, vec2 q) {
    float c = q.x, sn = q.y;
    vec2 v0 = geom_rotate(q, v2(-h.x, -h.y)), v1 = geom_rotate(q, v2(h.x, -h.y));
    vec2 v2_ = geom_rotate(q, v2(h.x, h.y)), v3 = geom_rotate(q, v2(-h.x, h.y));
    s->n0 = v2(sn, -c), s->n1 = v2(c, sn), s->n2 = v2(-sn, c), s->n3 = v2(-c, -sn);
    s->nv0 = v2_dot(s->n0, v0), s->nv1 = v2_dot(s->n1, v1);
    s->nv2 = v2_dot(s->n2, v2_), s->nv3 = v2_dot(s->n3, v3);
    s->an0 = v2(fabsf(sn), fabsf(c));
    s->an1 = v2(fabsf(c), fabsf(sn));
    /* polygon_extent: from the first vertex, in order */
    s->min_x = geom_obox_min_(geom_obox_min_(geom_obox_min_(v0.x, v1.x), v2_.x), v3.x);
    s->max_x = geom_obox_max_(geom_obox_max_(geom_obox_max_(v0.x, v1.x), v2_.x), v3.x);
    s->min_y = geom_obox_min_(geom_obox_min_(geom_obox_min_(v0.y, v1.y), v2_.y), v3.y);
    s->max_y = geom_obox_max_(geom_obox_max_(geom_obox_max_(v0.y, v1.y), v2_.y), v3.y);
}

/* geom_poly_sweep_motion: the turned box moves by da, the boxes stand still */
static inline void geom_obox_sweep_motion(geom_obox_sweep *s, vec2 da) {
    vec2 dd = v2_sub(da, v2(0.0f, 0.0f)), d = v2_neg(dd);
    const float slop = GEOM_LINEAR_SLOP;
    s->d = d;
    s->d_ok = fabsf(dd.x) <= GEOM_MAX_COORD && fabsf(dd.y) <= GEOM_MAX_COORD;
    /* the axes' speeds: 0-3 d.y, -d.y, d.x, -d.x; 4-7 -dot(n_j, d) */
    float u0 = d.y, u1 = d.x, u2 = -v2_dot(s->n0, d), u3 = -v2_dot(s->n1, d);
    s->f0 = u0 > 0.0f, s->f1 = u1 > 0.0f, s->f2 = u2 > 0.0f, s->f3 = u3 > 0.0f;
    s->sp0 = fabsf(u0), s->sp1 = fabsf(u1), s->sp2 = fabsf(u2), s->sp3 = fabsf(u3);
    s->thr0 = s->sp0 > 0.0f ? geom_obox_max_(s->sp0, slop) : -slop;
    s->thr1 = s->sp1 > 0.0f ? geom_obox_max_(s->sp1, slop) : -slop;
    s->thr2 = s->sp2 > 0.0f ? geom_obox_max_(s->sp2, slop) : -slop;
    s->thr3 = s->sp3 > 0.0f ? geom_obox_max_(s->sp3, slop) : -slop;
    s->swap_c = !s->f2 && s->f3;
    s->swap_o = s->f2 && !s->f3;
}

/* sweep_axis_br's entry and exit updates, for an axis that closes at speed v (opens at ov) */
static inline void geom_obox_enter_(float g, float v, int k, float *num, float *den, int *k_in) {
    bool enters = (g > 0.0f) & (g * *den > *num * v);
    *num = enters ? g : *num;
    *den = enters ? v : *den;
    *k_in = enters ? k : *k_in;
}
static inline void geom_obox_exit_(float g, float ov, float *num, float *den) {
    bool exits = -g * *den < *num * ov;
    *num = exits ? -g : *num;
    *den = exits ? ov : *den;
}

/* The normal axis k reports, from the turned box towards the box: bp_sweep's box_axes[k] or
 * -n_j, negated by geom_poly_sweep_box (-0.0f where an axis has a 0). */
static inline vec2 geom_obox_normal_(const geom_obox_sweep *s, int k) {
    static const vec2 world[4] = {{-0.0f, -1.0f}, {-0.0f, 1.0f}, {-1.0f, -0.0f}, {1.0f, -0.0f}};
    return k < 4 ? world[k] : k == 4 ? s->n0 : k == 5 ? s->n1 : k == 6 ? s->n2 : s->n3;
}

/* geom_poly_sweep_box: the turned box at pa, the box of half extents hb at pb. */
static inline bool geom_obox_sweep_box(const geom_obox_sweep *s, vec2 pa, vec2 hb, vec2 pb,
                                       geom_toi *out) {
    vec2 rr = v2_sub(pb, pa);
    if (!(fabsf(rr.x) <= GEOM_MAX_COORD && fabsf(rr.y) <= GEOM_MAX_COORD) || !s->d_ok) return false;
    const float slop = GEOM_LINEAR_SLOP;
    /* bp_sweep's offset r = pa - pb and its gaps g_k (-dot(n_2, r) is dot(n_0, r)) */
    vec2 r = v2_neg(rr);
    float g0 = r.y + s->min_y - hb.y, g1 = -r.y - s->max_y - hb.y;
    float g2 = r.x + s->min_x - hb.x, g3 = -r.x - s->max_x - hb.x;
    /* each line's closing and opening gap; a miss along any axis decides (sweep_decide's first
     * test): the world's axes first (the box's AABB swept against the tile's), which are
     * cheaper */
    float c0 = s->f0 ? g0 : g1, o0 = s->f0 ? g1 : g0, c1 = s->f1 ? g2 : g3, o1 = s->f1 ? g3 : g2;
    if ((c0 > s->thr0) | (c1 > s->thr1) | (o0 > -slop) | (o1 > -slop)) return false;
    float p0 = v2_dot(s->n0, r), p1 = v2_dot(s->n1, r);
    float h0 = s->an0.x * hb.x + s->an0.y * hb.y, h1 = s->an1.x * hb.x + s->an1.y * hb.y;
    float g4 = -p0 - s->nv0 - h0, g5 = -p1 - s->nv1 - h1;
    float g6 = p0 - s->nv2 - h0, g7 = p1 - s->nv3 - h1;
    float c2 = s->f2 ? g4 : g6, o2 = s->f2 ? g6 : g4, c3 = s->f3 ? g5 : g7, o3 = s->f3 ? g7 : g5;
    if ((c2 > s->thr2) | (c3 > s->thr3) | (o2 > -slop) | (o3 > -slop)) return false;
    float t;
    vec2 n;
    /* Without a miss every axis that does not close has a gap <= -slop: the largest gap is above
     * the slop (separated at the start) iff some closing axis's is. */
    if ((c0 > slop) | (c1 > slop) | (c2 > slop) | (c3 > slop)) {
        /* entering after the end (within the slop, or it would have missed) */
        if ((c0 > s->sp0) | (c1 > s->sp1) | (c2 > s->sp2) | (c3 > s->sp3)) return false;
        /* the latest entry over the closing axes, the earliest exit over the opening ones */
        float en = 0.0f, ed = 1.0f, xn = 1.0f, xd = 1.0f;
        int ke = 0;
        bool sc = s->swap_c, so = s->swap_o;
        geom_obox_enter_(c0, s->sp0, s->f0 ? 0 : 1, &en, &ed, &ke);
        geom_obox_enter_(c1, s->sp1, s->f1 ? 2 : 3, &en, &ed, &ke);
        geom_obox_enter_(sc ? c3 : c2, sc ? s->sp3 : s->sp2, sc ? 5 : s->f2 ? 4 : 6, &en, &ed, &ke);
        geom_obox_enter_(sc ? c2 : c3, sc ? s->sp2 : s->sp3, sc ? 6 : s->f3 ? 5 : 7, &en, &ed, &ke);
        geom_obox_exit_(o0, s->sp0, &xn, &xd);
        geom_obox_exit_(o1, s->sp1, &xn, &xd);
        geom_obox_exit_(so ? o3 : o2, so ? s->sp3 : s->sp2, &xn, &xd);
        geom_obox_exit_(so ? o2 : o3, so ? s->sp2 : s->sp3, &xn, &xd);
        if (en * xd > xn * ed) return false;
        t = en / ed;
        n = geom_obox_normal_(s, ke);
    } else {
        /* touching or overlapping: the first axis of the largest gap, if the motion closes
         * along the normal the sweep reports (the opposite of ours) */
        const float g[8] = {g0, g1, g2, g3, g4, g5, g6, g7};
        int k_max = 0;
        float s_max = -FLT_MAX;
        for (int k = 0; k < 8; k++)
            if (g[k] > s_max) s_max = g[k], k_max = k;
        n = geom_obox_normal_(s, k_max);
        if (!(v2_dot(v2_neg(n), s->d) > 0.0f)) return false;
        t = 0.0f;
    }
    if (out) {
        out->t = t;
        out->normal = n;
    }
    return true;
}

#endif

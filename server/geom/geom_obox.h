/* geom_obox: geom_poly_sweep for a turned box against fixed axis-aligned boxes (a turning body's
 * slide among box tiles), static inline so the slide's loop holds it without a call. Included by
 * geom.h, after geom_rot.h.
 *
 * The polygon is geom_shape_orient's of a box of half extents h turned by q = (c, s), both
 * nonzero (q = (1, 0) leaves a box). Its sweep against a box (bp_sweep, the box X, the polygon
 * Y) clips along 8 axes: the world's 4 and the polygon's 4 edge normals. With c and s nonzero
 * the polygon is known exactly from a few floats: geom_rotate's products with 0 and +-1 are +-0
 * and +-c, +-s, so its normals are (s, -c), (c, s), (-s, c), (-c, -s); its opposite vertices are
 * exact negations (v_2 = -v_0, v_3 = -v_1: the same products, negated), so its bounds are
 * -ex..ex, -ey..ey and opposite edges have the same offset along their normals (dot(n_2, v_2) =
 * dot(n_0, v_0)). Every axis pair is then a line along which the motion closes one axis and
 * opens the other. Per box: 2 dot products, 2 supports, 8 gaps; a box the sweep misses (some gap
 * above what the motion can close) is rejected by compares against thresholds kept per motion,
 * the others take the latest entry over the 4 closing axes and the earliest exit over the 4
 * opening ones, each in the order bp_sweep compares them. The floats are geom_poly_sweep_box's
 * on that polygon and the answer is the same, bit for bit (the sign of a zero product aside,
 * which adding a nonzero term drops). With SSE2 the 4 lines' gaps, tests and per-motion terms
 * are computed as 4 lanes (GEOM_OBOX_SIMD, below; GEOM_OBOX_SCALAR forces the scalar code, which
 * test_geom_props_scalar keeps tested). */
#ifndef COLLIDE_GEOM_OBOX_H
#define COLLIDE_GEOM_OBOX_H

#include <float.h>

/* With SSE2 (every x86-64) the 8 gaps of a box are computed 4 lanes at a time: IEEE single
 * arithmetic lane by lane (-ffp-contract=off: no fused operations), each lane the scalar
 * expression's operations in its order, so the same floats. Elsewhere the scalar code. */
#if defined(__SSE2__) && !defined(GEOM_OBOX_SCALAR)
#include <emmintrin.h>
#define GEOM_OBOX_SIMD 1
#else
#define GEOM_OBOX_SIMD 0
#endif

typedef struct geom_obox_sweep {
    /* few scalars, so that the inlined copy keeps them in registers */
    float c, s, ac, as; /* q and |q| componentwise */
    float nv0, nv1;     /* dot(n_0, v_0) = dot(n_2, v_2), dot(n_1, v_1) = dot(n_3, v_3) */
    float ex, ey;       /* the turned box's bounds: -ex..ex, -ey..ey (polygon_extent) */
    /* Per motion: bp_sweep's relative motion d = -da, and for each line L (0: y, axes 0 and 1;
     * 1: x, axes 2 and 3; 2: n_0, axes 4 and 6; 3: n_1, axes 5 and 7) the motion's speed u_L
     * along its first axis (-u_L along its second): f_L = u_L > 0, the first axis closes; sp_L =
     * |u_L|; thr_L, the closing gap above which the sweep misses (above both the speed and the
     * slop). At u_L = 0 no axis closes: thr_L is then -slop like an opening axis's, and a gap
     * below it can neither enter nor exit at speed 0. */
    vec2 d;
    bool d_ok; /* geom_coord_ok(da) */
#if GEOM_OBOX_SIMD
    /* Lane L holds line L's terms. A box's gaps: first axis (P - E) - H, second axis
     * (-P - E) - H, with P = kx r.x + ky r.y negated in lanes 2 and 3 (r.y, r.x, -dot(n_0, r),
     * -dot(n_1, r)), E = (ey, ex, nv0, nv1), H = hx hb.x + hy hb.y (hb.y, hb.x, h0, h1). A
     * product by 0 or 1 and a sum with a 0 leave the other term's value, but for the sign of a
     * zero, which the subtraction of E (nonzero) drops. */
    __m128 kx, ky, e, hx, hy;
    __m128 first;      /* per motion: all ones in the lanes whose first axis closes (f_L) */
    __m128 thr, speed; /* thr_L, sp_L */
#else
    bool f0, f1, f2, f3;
    bool swap_c, swap_o; /* the box's closing (opening) axes met 6 before 5 */
    float sp0, sp1, sp2, sp3;
    float thr0, thr1, thr2, thr3;
#endif
} geom_obox_sweep;

static inline float geom_obox_max_(float a, float b) { return b > a ? b : a; }

/* geom_poly_sweep_prepare of geom_shape_orient's polygon for the box h turned by q (both
 * components nonzero and finite) */
static inline void geom_obox_sweep_prepare(geom_obox_sweep *s, vec2 h, vec2 q) {
    float c = q.x, sn = q.y;
    /* geom_rotate of (-hx, -hy) and (hx, -hy); the other two vertices are their negations */
    vec2 v0 = geom_rotate(q, v2(-h.x, -h.y)), v1 = geom_rotate(q, v2(h.x, -h.y));
    s->c = c, s->s = sn, s->ac = fabsf(c), s->as = fabsf(sn);
    s->nv0 = v2_dot(v2(sn, -c), v0);
    s->nv1 = v2_dot(v2(c, sn), v1);
    s->ex = geom_obox_max_(fabsf(v0.x), fabsf(v1.x));
    s->ey = geom_obox_max_(fabsf(v0.y), fabsf(v1.y));
#if GEOM_OBOX_SIMD
    /* p0 = dot((s, -c), r) = s r.x + -c r.y, p1 = c r.x + s r.y; h0 = |s| hb.x + |c| hb.y, h1 =
     * |c| hb.x + |s| hb.y */
    s->kx = _mm_setr_ps(0.0f, 1.0f, sn, c);
    s->ky = _mm_setr_ps(1.0f, 0.0f, -c, sn);
    s->e = _mm_setr_ps(s->ey, s->ex, s->nv0, s->nv1);
    s->hx = _mm_setr_ps(0.0f, 1.0f, s->as, s->ac);
    s->hy = _mm_setr_ps(1.0f, 0.0f, s->ac, s->as);
#endif
}

/* geom_poly_sweep_motion: the turned box moves by da, the boxes stand still */
static inline void geom_obox_sweep_motion(geom_obox_sweep *s, vec2 da) {
    vec2 dd = v2_sub(da, v2(0.0f, 0.0f)), d = v2_neg(dd);
    const float slop = GEOM_LINEAR_SLOP;
    s->d = d;
    s->d_ok = fabsf(dd.x) <= GEOM_MAX_COORD && fabsf(dd.y) <= GEOM_MAX_COORD;
#if GEOM_OBOX_SIMD
    /* the lines' speeds u_L (below) as P's terms of d: lanes 0 and 1 d.y and d.x (but for the
     * sign of a zero, which neither u > 0 nor |u| sees; d_ok false answers no hit before any
     * is read), lanes 2 and 3 -dot(n_j, d) */
    __m128 u = _mm_add_ps(_mm_mul_ps(s->kx, _mm_set1_ps(d.x)), _mm_mul_ps(s->ky, _mm_set1_ps(d.y)));
    u = _mm_xor_ps(u, _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f));
    __m128 zero = _mm_setzero_ps(), sp = _mm_andnot_ps(_mm_set1_ps(-0.0f), u);
    s->first = _mm_cmpgt_ps(u, zero);
    s->speed = sp;
    /* sp > 0 ? (slop > sp ? slop : sp) : -slop */
    __m128 moving = _mm_cmpgt_ps(sp, zero);
    s->thr = _mm_or_ps(_mm_and_ps(moving, _mm_max_ps(_mm_set1_ps(slop), sp)),
                       _mm_andnot_ps(moving, _mm_set1_ps(-slop)));
#else
    /* the axes' speeds: 0-3 d.y, -d.y, d.x, -d.x; 4-7 -dot(n_j, d) */
    float u0 = d.y, u1 = d.x, u2 = -v2_dot(v2(s->s, -s->c), d), u3 = -v2_dot(v2(s->c, s->s), d);
    s->f0 = u0 > 0.0f, s->f1 = u1 > 0.0f, s->f2 = u2 > 0.0f, s->f3 = u3 > 0.0f;
    s->sp0 = fabsf(u0), s->sp1 = fabsf(u1), s->sp2 = fabsf(u2), s->sp3 = fabsf(u3);
    s->thr0 = s->sp0 > 0.0f ? geom_obox_max_(s->sp0, slop) : -slop;
    s->thr1 = s->sp1 > 0.0f ? geom_obox_max_(s->sp1, slop) : -slop;
    s->thr2 = s->sp2 > 0.0f ? geom_obox_max_(s->sp2, slop) : -slop;
    s->thr3 = s->sp3 > 0.0f ? geom_obox_max_(s->sp3, slop) : -slop;
    s->swap_c = !s->f2 && s->f3;
    s->swap_o = s->f2 && !s->f3;
#endif
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
    float c = s->c, sn = s->s;
    return k < 4    ? world[k]
           : k == 4 ? v2(sn, -c)
           : k == 5 ? v2(c, sn)
           : k == 6 ? v2(-sn, c)
                    : v2(-c, -sn);
}

#if GEOM_OBOX_SIMD
/* geom_poly_sweep_box: the turned box at pa, the box of half extents hb at pb. The scalar
 * version's tests and decision below, on the lanes. */
static inline bool geom_obox_sweep_box(const geom_obox_sweep *s, vec2 pa, vec2 hb, vec2 pb,
                                       geom_toi *out) {
    vec2 rr = v2_sub(pb, pa);
    if (!(fabsf(rr.x) <= GEOM_MAX_COORD && fabsf(rr.y) <= GEOM_MAX_COORD) || !s->d_ok) return false;
    const float slop = GEOM_LINEAR_SLOP;
    const __m128 neg = _mm_set1_ps(-0.0f);
    vec2 r = v2_neg(rr);
    __m128 pv =
        _mm_add_ps(_mm_mul_ps(s->kx, _mm_set1_ps(r.x)), _mm_mul_ps(s->ky, _mm_set1_ps(r.y)));
    pv = _mm_xor_ps(pv, _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f));
    __m128 hv =
        _mm_add_ps(_mm_mul_ps(s->hx, _mm_set1_ps(hb.x)), _mm_mul_ps(s->hy, _mm_set1_ps(hb.y)));
    __m128 ga = _mm_sub_ps(_mm_sub_ps(pv, s->e), hv);                  /* g0 g2 g4 g5 */
    __m128 gb = _mm_sub_ps(_mm_sub_ps(_mm_xor_ps(pv, neg), s->e), hv); /* g1 g3 g6 g7 */
    __m128 cv = _mm_or_ps(_mm_and_ps(s->first, ga), _mm_andnot_ps(s->first, gb));
    __m128 ov = _mm_or_ps(_mm_and_ps(s->first, gb), _mm_andnot_ps(s->first, ga));
    /* a miss along any axis */
    if (_mm_movemask_ps(_mm_or_ps(_mm_cmpgt_ps(cv, s->thr), _mm_cmpgt_ps(ov, _mm_set1_ps(-slop)))))
        return false;
    float t;
    vec2 n;
    if (_mm_movemask_ps(_mm_cmpgt_ps(cv, _mm_set1_ps(slop)))) {
        /* entering after the end */
        if (_mm_movemask_ps(_mm_cmpgt_ps(cv, s->speed))) return false;
        float c[4], o[4], sp[4];
        _mm_storeu_ps(c, cv);
        _mm_storeu_ps(o, ov);
        _mm_storeu_ps(sp, s->speed);
        int f = _mm_movemask_ps(s->first);
        bool f0 = f & 1, f1 = f & 2, f2 = f & 4, f3 = f & 8;
        bool sc = !f2 && f3, so = f2 && !f3;
        float en = 0.0f, ed = 1.0f, xn = 1.0f, xd = 1.0f;
        int ke = 0;
        geom_obox_enter_(c[0], sp[0], f0 ? 0 : 1, &en, &ed, &ke);
        geom_obox_enter_(c[1], sp[1], f1 ? 2 : 3, &en, &ed, &ke);
        geom_obox_enter_(sc ? c[3] : c[2], sc ? sp[3] : sp[2], sc ? 5 : f2 ? 4 : 6, &en, &ed, &ke);
        geom_obox_enter_(sc ? c[2] : c[3], sc ? sp[2] : sp[3], sc ? 6 : f3 ? 5 : 7, &en, &ed, &ke);
        if (_mm_movemask_ps(_mm_cmplt_ps(_mm_xor_ps(ov, neg), s->speed))) {
            geom_obox_exit_(o[0], sp[0], &xn, &xd);
            geom_obox_exit_(o[1], sp[1], &xn, &xd);
            geom_obox_exit_(so ? o[3] : o[2], so ? sp[3] : sp[2], &xn, &xd);
            geom_obox_exit_(so ? o[2] : o[3], so ? sp[2] : sp[3], &xn, &xd);
        }
        if (en * xd > xn * ed) return false;
        t = en / ed;
        n = geom_obox_normal_(s, ke);
    } else {
        /* touching or overlapping: the first axis of the largest gap */
        float ag[4], bg[4];
        _mm_storeu_ps(ag, ga);
        _mm_storeu_ps(bg, gb);
        const float g[8] = {ag[0], bg[0], ag[1], bg[1], ag[2], ag[3], bg[2], bg[3]};
        int k_max = 0;
        float s_max = -FLT_MAX;
        for (int k = 0; k < 8; k++)
            if (g[k] > s_max) s_max = g[k], k_max = k;
        n = geom_obox_normal_(s, k_max);
        if (!(v2_dot(s->d, v2_neg(n)) > 0.0f)) return false; /* moving away */
        t = 0.0f;
    }
    if (out) {
        out->t = t;
        out->normal = n;
    }
    return true;
}
#else
/* geom_poly_sweep_box: the turned box at pa, the box of half extents hb at pb. */
static inline bool geom_obox_sweep_box(const geom_obox_sweep *s, vec2 pa, vec2 hb, vec2 pb,
                                       geom_toi *out) {
    vec2 rr = v2_sub(pb, pa);
    if (!(fabsf(rr.x) <= GEOM_MAX_COORD && fabsf(rr.y) <= GEOM_MAX_COORD) || !s->d_ok) return false;
    const float slop = GEOM_LINEAR_SLOP;
    /* bp_sweep's offset r = pa - pb and its gaps g_k (-dot(n_2, r) is dot(n_0, r)) */
    vec2 r = v2_neg(rr);
    float g0 = r.y - s->ey - hb.y, g1 = -r.y - s->ey - hb.y;
    float g2 = r.x - s->ex - hb.x, g3 = -r.x - s->ex - hb.x;
    /* each line's closing and opening gap; a miss along any axis decides (sweep_decide's first
     * test): the world's axes first (the box's AABB swept against the tile's), which are
     * cheaper */
    float c0 = s->f0 ? g0 : g1, o0 = s->f0 ? g1 : g0, c1 = s->f1 ? g2 : g3, o1 = s->f1 ? g3 : g2;
    if ((c0 > s->thr0) | (c1 > s->thr1) | (o0 > -slop) | (o1 > -slop)) return false;
    float p0 = v2_dot(v2(s->s, -s->c), r), p1 = v2_dot(v2(s->c, s->s), r);
    float h0 = s->as * hb.x + s->ac * hb.y, h1 = s->ac * hb.x + s->as * hb.y;
    float g4 = -p0 - s->nv0 - h0, g5 = -p1 - s->nv1 - h1;
    float g6 = p0 - s->nv0 - h0, g7 = p1 - s->nv1 - h1;
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
        /* from 1 / 1 an exit updates only where -o < sp: mostly none (every exit after the
         * end), and the sequence then leaves 1 / 1 */
        if ((-o0 < s->sp0) | (-o1 < s->sp1) | (-o2 < s->sp2) | (-o3 < s->sp3)) {
            geom_obox_exit_(o0, s->sp0, &xn, &xd);
            geom_obox_exit_(o1, s->sp1, &xn, &xd);
            geom_obox_exit_(so ? o3 : o2, so ? s->sp3 : s->sp2, &xn, &xd);
            geom_obox_exit_(so ? o2 : o3, so ? s->sp2 : s->sp3, &xn, &xd);
        }
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

#endif

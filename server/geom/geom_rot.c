/* geom_rot: transforms, GJK distance and conservative advancement (see geom_rot.h). */
#include "geom.h"
#include "geom_internal.h"

#include <math.h>
#include <string.h>

/* The advancement's per-step helpers: inlined whatever the compiler's budget says. */
#if defined(__GNUC__)
#define ROT_HOT static inline __attribute__((always_inline))
#else
#define ROT_HOT static inline
#endif

float geom_shape_radius(const geom_shape *s) {
    switch (s->kind) {
    case GEOM_SHAPE_BOX:
        return v2_len(s->u.half_extents);
    case GEOM_SHAPE_CIRCLE:
        return s->u.radius;
    case GEOM_SHAPE_POLYGON: {
        float r2 = 0.0f;
        for (int i = 0; i < s->u.polygon.count; i++) {
            float l = v2_len_sq(s->u.polygon.vertices[i]);
            if (l > r2) r2 = l;
        }
        return sqrtf(r2);
    }
    }
    return 0.0f;
}

void geom_shape_orient(const geom_shape *local, vec2 q, geom_shape *out) {
    if (local->kind == GEOM_SHAPE_CIRCLE ||
        (local->kind == GEOM_SHAPE_BOX && q.x == 1.0f && q.y == 0.0f)) {
        *out = *local;
        return;
    }
    /* built in place (a polygon's copy is most of the work for a box), unless out is the
     * shape it reads */
    geom_shape tmp, *o = out == local ? &tmp : out;
    o->kind = GEOM_SHAPE_POLYGON;
    geom_polygon *p = &o->u.polygon;
    if (local->kind == GEOM_SHAPE_BOX) {
        vec2 h = local->u.half_extents;
        const vec2 v[4] = {{-h.x, -h.y}, {h.x, -h.y}, {h.x, h.y}, {-h.x, h.y}};
        const vec2 n[4] = {{0.0f, -1.0f}, {1.0f, 0.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}};
        p->count = 4;
        for (int i = 0; i < 4; i++) {
            p->vertices[i] = geom_rotate(q, v[i]);
            p->normals[i] = geom_rotate(q, n[i]);
        }
    } else {
        const geom_polygon *s = &local->u.polygon;
        p->count = s->count;
        for (int i = 0; i < s->count; i++) {
            p->vertices[i] = geom_rotate(q, s->vertices[i]);
            p->normals[i] = geom_rotate(q, s->normals[i]);
        }
    }
    if (o == &tmp) *out = tmp;
}

aabb geom_shape_aabb_xf(const geom_shape *shape, geom_xf xf) {
    if (shape->kind == GEOM_SHAPE_CIRCLE) return geom_shape_aabb(shape, xf.p);
    geom_shape o;
    geom_shape_orient(shape, xf.q, &o);
    return geom_shape_aabb(&o, xf.p);
}

bool geom_overlap_xf(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                     geom_contact *out) {
    geom_shape oa, ob;
    geom_shape_orient(a, xa.q, &oa);
    geom_shape_orient(b, xb.q, &ob);
    return geom_overlap(&oa, xa.p, &ob, xb.p, out);
}

/* ---- GJK --------------------------------------------------------------------------------- */

/* A shape as GJK sees it: points (already placed) plus a radius. */
typedef struct proxy {
    vec2 v[GEOM_MAX_POLYGON_VERTICES];
    int count;
    float radius;
} proxy;

/* Places the shape's points by xf, relative to `origin` (A's position: small numbers near the
 * pair, whatever the world coordinates). */
static void make_proxy(const geom_shape *s, geom_xf xf, vec2 origin, proxy *out) {
    vec2 p = v2_sub(xf.p, origin);
    switch (s->kind) {
    case GEOM_SHAPE_CIRCLE:
        out->count = 1;
        out->v[0] = p;
        out->radius = s->u.radius;
        return;
    case GEOM_SHAPE_BOX: {
        vec2 h = s->u.half_extents;
        const vec2 v[4] = {{-h.x, -h.y}, {h.x, -h.y}, {h.x, h.y}, {-h.x, h.y}};
        out->count = 4;
        for (int i = 0; i < 4; i++)
            out->v[i] = v2_add(p, geom_rotate(xf.q, v[i]));
        out->radius = 0.0f;
        return;
    }
    case GEOM_SHAPE_POLYGON:
        out->count = s->u.polygon.count;
        for (int i = 0; i < out->count; i++)
            out->v[i] = v2_add(p, geom_rotate(xf.q, s->u.polygon.vertices[i]));
        out->radius = 0.0f;
        return;
    }
    out->count = 1;
    out->v[0] = p;
    out->radius = 0.0f;
}

static int support(const proxy *p, vec2 d) {
    int best = 0;
    float bv = v2_dot(p->v[0], d);
    for (int i = 1; i < p->count; i++) {
        float v = v2_dot(p->v[i], d);
        if (v > bv) bv = v, best = i;
    }
    return best;
}

typedef struct simplex_vertex {
    vec2 wa, wb, w; /* support points on A and B, w = wb - wa */
    float a;        /* barycentric weight of the closest point */
    int ia, ib;
} simplex_vertex;

/* Reduces a segment to the part whose closest point to the origin it holds. */
static int solve2(simplex_vertex *s) {
    vec2 w1 = s[0].w, w2 = s[1].w, e12 = v2_sub(w2, w1);
    float d12_2 = -v2_dot(w1, e12);
    if (d12_2 <= 0.0f) {
        s[0].a = 1.0f;
        return 1;
    }
    float d12_1 = v2_dot(w2, e12);
    if (d12_1 <= 0.0f) {
        s[1].a = 1.0f;
        s[0] = s[1];
        return 1;
    }
    float inv = 1.0f / (d12_1 + d12_2);
    s[0].a = d12_1 * inv;
    s[1].a = d12_2 * inv;
    return 2;
}

/* The same for a triangle: its Voronoi regions, vertices then edges, else the inside (3). */
static int solve3(simplex_vertex *s) {
    vec2 w1 = s[0].w, w2 = s[1].w, w3 = s[2].w;
    vec2 e12 = v2_sub(w2, w1), e13 = v2_sub(w3, w1), e23 = v2_sub(w3, w2);
    float d12_1 = v2_dot(w2, e12), d12_2 = -v2_dot(w1, e12);
    float d13_1 = v2_dot(w3, e13), d13_2 = -v2_dot(w1, e13);
    float d23_1 = v2_dot(w3, e23), d23_2 = -v2_dot(w2, e23);
    float n123 = v2_cross(e12, e13);
    float d123_1 = n123 * v2_cross(w2, w3);
    float d123_2 = n123 * v2_cross(w3, w1);
    float d123_3 = n123 * v2_cross(w1, w2);
    if (d12_2 <= 0.0f && d13_2 <= 0.0f) {
        s[0].a = 1.0f;
        return 1;
    }
    if (d12_1 > 0.0f && d12_2 > 0.0f && d123_3 <= 0.0f) {
        float inv = 1.0f / (d12_1 + d12_2);
        s[0].a = d12_1 * inv;
        s[1].a = d12_2 * inv;
        return 2;
    }
    if (d13_1 > 0.0f && d13_2 > 0.0f && d123_2 <= 0.0f) {
        float inv = 1.0f / (d13_1 + d13_2);
        s[0].a = d13_1 * inv;
        s[2].a = d13_2 * inv;
        s[1] = s[2];
        return 2;
    }
    if (d12_1 <= 0.0f && d23_2 <= 0.0f) {
        s[1].a = 1.0f;
        s[0] = s[1];
        return 1;
    }
    if (d13_1 <= 0.0f && d23_1 <= 0.0f) {
        s[2].a = 1.0f;
        s[0] = s[2];
        return 1;
    }
    if (d23_1 > 0.0f && d23_2 > 0.0f && d123_1 <= 0.0f) {
        float inv = 1.0f / (d23_1 + d23_2);
        s[2].a = d23_2 * inv;
        s[1].a = d23_1 * inv;
        s[0] = s[2];
        return 2;
    }
    float inv = 1.0f / (d123_1 + d123_2 + d123_3);
    s[0].a = d123_1 * inv;
    s[1].a = d123_2 * inv;
    s[2].a = d123_3 * inv;
    return 3;
}

/* The support points GJK ended with, to start the next query of the same pair from (Box2D's
 * simplex cache): conservative advancement asks about the same pair a few times, each close to
 * the last, so a warm start usually needs one iteration. */
typedef struct gjk_cache {
    int count; /* 0: cold */
    int ia[3], ib[3];
} gjk_cache;

static float gjk(const proxy *pa, const proxy *pb, gjk_cache *cache, vec2 *out_a, vec2 *out_b,
                 int *iters) {
    simplex_vertex s[3];
    int n = cache && cache->count > 0 ? cache->count : 1;
    for (int i = 0; i < n; i++) {
        int ia = cache && cache->count > 0 ? cache->ia[i] : 0;
        int ib = cache && cache->count > 0 ? cache->ib[i] : 0;
        s[i].ia = ia;
        s[i].ib = ib;
        s[i].wa = pa->v[ia];
        s[i].wb = pb->v[ib];
        s[i].w = v2_sub(s[i].wb, s[i].wa);
        s[i].a = 1.0f / (float)n;
    }
    int it = 0;
    while (it < GEOM_GJK_MAX_ITERATIONS) {
        int save_a[3], save_b[3], save_n = n;
        for (int i = 0; i < n; i++)
            save_a[i] = s[i].ia, save_b[i] = s[i].ib;
        if (n == 2)
            n = solve2(s);
        else if (n == 3)
            n = solve3(s);
        if (n == 3) break; /* the origin is inside: overlapping */
        vec2 d;
        if (n == 1) {
            d = v2_neg(s[0].w);
        } else {
            vec2 e = v2_sub(s[1].w, s[0].w);
            d = v2_cross(e, v2_neg(s[0].w)) > 0.0f ? v2_perp(e) : v2_right_perp(e);
        }
        /* The origin lies on the simplex (touching): no direction left to search. */
        if (v2_len_sq(d) < 1e-24f) break;
        simplex_vertex *v = &s[n];
        v->ia = support(pa, v2_neg(d));
        v->ib = support(pb, d);
        v->wa = pa->v[v->ia];
        v->wb = pb->v[v->ib];
        v->w = v2_sub(v->wb, v->wa);
        it++;
        /* A support point already held: no progress is possible, the simplex is the answer. */
        bool dup = false;
        for (int i = 0; i < save_n; i++)
            if (save_a[i] == v->ia && save_b[i] == v->ib) dup = true;
        if (dup) break;
        n++;
    }
    *iters = it;
    if (cache) {
        cache->count = n;
        for (int i = 0; i < n; i++)
            cache->ia[i] = s[i].ia, cache->ib[i] = s[i].ib;
    }
    vec2 ca = v2(0.0f, 0.0f), cb = v2(0.0f, 0.0f);
    if (n == 3) {
        ca = v2_add(v2_add(v2_scale(s[0].wa, s[0].a), v2_scale(s[1].wa, s[1].a)),
                    v2_scale(s[2].wa, s[2].a));
        *out_a = ca;
        *out_b = ca;
        return 0.0f;
    }
    for (int i = 0; i < n; i++) {
        ca = v2_mul_add(ca, s[i].a, s[i].wa);
        cb = v2_mul_add(cb, s[i].a, s[i].wb);
    }
    *out_a = ca;
    *out_b = cb;
    return v2_len(v2_sub(cb, ca));
}

static float distance_cached(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                             gjk_cache *cache, geom_closest *out);

/* ---- box - box: separating axes and corners, no GJK ----------------------------------------- */

static inline float clamp_f(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The point of a box (half extents h) nearest to the point p, both in the box's frame: the
 * squared distance, and that point (p clamped to the box). */
static inline float point_box_sq(vec2 p, vec2 h, vec2 *nearest) {
    vec2 c = v2(clamp_f(p.x, -h.x, h.x), clamp_f(p.y, -h.y, h.y));
    *nearest = c;
    return v2_len_sq(v2_sub(p, c));
}

/* The two boxes' separation along their four face axes (> 0: apart, and never more than their
 * distance), and the axis that gives it (world, unit, from A towards B) and its index (0, 1: A's
 * x and y; 2, 3: B's). */
ROT_HOT float box_box_separation(vec2 ha, geom_xf xa, vec2 hb, geom_xf xb, vec2 *axis, int *index) {
    vec2 d = v2_sub(xb.p, xa.p);
    float c = xa.q.x * xb.q.x + xa.q.y * xb.q.y, s = xa.q.x * xb.q.y - xa.q.y * xb.q.x;
    float ac = fabsf(c), as = fabsf(s);
    float sep[4] = {
        fabsf(xa.q.x * d.x + xa.q.y * d.y) - ha.x - hb.x * ac - hb.y * as,
        fabsf(xa.q.x * d.y - xa.q.y * d.x) - ha.y - hb.x * as - hb.y * ac,
        fabsf(xb.q.x * d.x + xb.q.y * d.y) - hb.x - ha.x * ac - ha.y * as,
        fabsf(xb.q.x * d.y - xb.q.y * d.x) - hb.y - ha.x * as - ha.y * ac,
    };
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (sep[i] > sep[k]) k = i;
    vec2 q = k < 2 ? xa.q : xb.q, n = k & 1 ? v2_perp(q) : q;
    *axis = v2_dot(n, d) < 0.0f ? v2_neg(n) : n; /* from A towards B */
    *index = k;
    return sep[k];
}

/* The other box's deepest corner along face axis k (box_box_separation's index), in the
 * reference box's frame (A's for k < 2, else B's), and the side sg of the face it is on, given
 * B's rotation in A's frame (c, s) and the other box's centre o in the reference frame: the
 * corner-against-face case of box_box_distance, box_face_exact and box_face_exact_fixed. */
ROT_HOT vec2 face_corner(vec2 ha, vec2 hb, float c, float s, vec2 o, int k, float *sg) {
    bool ref_a = k < 2;
    int j = k & 1;
    vec2 ex = ref_a ? v2(c * hb.x, s * hb.x) : v2(c * ha.x, -s * ha.x);
    vec2 ey = ref_a ? v2(-s * hb.y, c * hb.y) : v2(s * ha.y, c * ha.y);
    *sg = (j ? o.y : o.x) >= 0.0f ? 1.0f : -1.0f; /* the side the other box is on */
    return v2_sub(o, v2_add(*sg * (j ? ex.y : ex.x) >= 0.0f ? ex : v2_neg(ex),
                            *sg * (j ? ey.y : ey.x) >= 0.0f ? ey : v2_neg(ey)));
}

/* Whether that corner projects inside the reference face. */
ROT_HOT bool face_corner_inside(vec2 ha, vec2 hb, int k, vec2 corner) {
    vec2 hr = k < 2 ? ha : hb;
    return fabsf(k & 1 ? corner.x : corner.y) <= (k & 1 ? hr.x : hr.y);
}

/* A corner against the face of axis k as the exact tests find it, kept for what a start in
 * contact asks next (whether the motion opens the gap, the closest points): face_corner's corner
 * and side, and the other box's centre o, all in the reference box's frame. */
typedef struct face_contact {
    vec2 corner, o;
    float sg;
} face_contact;

/* B's rotation in A's frame (c, s), and the other box's centre in the reference box's frame of
 * axis k (B's in A's for k < 2, else A's in B's). */
ROT_HOT vec2 face_frame(geom_xf xa, geom_xf xb, int k, float *c, float *s) {
    vec2 d = v2_sub(xb.p, xa.p);
    *c = xa.q.x * xb.q.x + xa.q.y * xb.q.y, *s = xa.q.x * xb.q.y - xa.q.y * xb.q.x;
    return k < 2 ? v2(xa.q.x * d.x + xa.q.y * d.y, xa.q.x * d.y - xa.q.y * d.x)
                 : v2(-(xb.q.x * d.x + xb.q.y * d.y), -(xb.q.x * d.y - xb.q.y * d.x));
}

/* Whether the separation along face axis k (box_box_separation's) is the distance: the other
 * box's deepest corner along it projects inside the face (box_box_distance's corner-against-face
 * case, the same arithmetic). */
static bool box_face_exact(vec2 ha, geom_xf xa, vec2 hb, geom_xf xb, int k, face_contact *fc) {
    float c, s;
    fc->o = face_frame(xa, xb, k, &c, &s);
    fc->corner = face_corner(ha, hb, c, s, fc->o, k, &fc->sg);
    return face_corner_inside(ha, hb, k, fc->corner);
}

/* The closest points and normal (A to B) of the corner against the face of axis k, the corner
 * and side as face_corner gives them: in the world, the corner and its foot on the face. */
ROT_HOT void face_closest(vec2 ha, geom_xf xa, vec2 hb, geom_xf xb, int k, vec2 corner, float sg,
                          geom_closest *r) {
    bool ref_a = k < 2;
    int j = k & 1;
    vec2 hr = ref_a ? ha : hb;
    vec2 foot = j ? v2(corner.x, sg * hr.y) : v2(sg * hr.x, corner.y);
    geom_xf xr = ref_a ? xa : xb;
    vec2 wc = geom_xf_apply(xr, corner), wf = geom_xf_apply(xr, foot);
    vec2 n = geom_rotate(xr.q, j ? v2(0.0f, sg) : v2(sg, 0.0f)); /* reference to other */
    r->normal = ref_a ? n : v2_neg(n);
    r->point_a = ref_a ? wf : wc;
    r->point_b = ref_a ? wc : wf;
}

/* Distance between two turned boxes. Overlap by their four face axes (enough for two convex
 * polygons in 2D); apart, the closest pair of points always has a corner of one box at one end
 * (two convex polygons meet at a vertex-edge or vertex-vertex pair, or along parallel edges that
 * include a vertex), so the distance is the least of the eight corner-to-box distances, each
 * exact and cheap in the other box's frame. Same contract as GJK's answer (distance_cached). */
static float box_box_distance(vec2 ha, geom_xf xa, vec2 hb, geom_xf xb, geom_closest *out) {
    geom_closest r;
    r.iterations = 0;
    vec2 d = v2_sub(xb.p, xa.p);
    /* B's x axis in A's frame (c, s): B's y axis there is (-s, c); A's axes in B's frame are
     * (c, -s) and (s, c) */
    float c = xa.q.x * xb.q.x + xa.q.y * xb.q.y, s = xa.q.x * xb.q.y - xa.q.y * xb.q.x;
    float ac = fabsf(c), as = fabsf(s);
    vec2 tb = v2(xa.q.x * d.x + xa.q.y * d.y, xa.q.x * d.y - xa.q.y * d.x); /* B's centre in A */
    vec2 ta = v2(-(xb.q.x * d.x + xb.q.y * d.y), -(xb.q.x * d.y - xb.q.y * d.x)); /* A's in B */
    float seps[4] = {
        fabsf(tb.x) - ha.x - hb.x * ac - hb.y * as,
        fabsf(tb.y) - ha.y - hb.x * as - hb.y * ac,
        fabsf(ta.x) - hb.x - ha.x * ac - ha.y * as,
        fabsf(ta.y) - hb.y - ha.x * as - ha.y * ac,
    };
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (seps[i] > seps[k]) k = i;
    float sep = seps[k];
    const float eps = 1e-6f; /* as GJK's: closer than this is touching */
    if (!(sep > 0.0f)) {
        r.distance = 0.0f;
        r.overlap = true;
        r.normal = v2(0.0f, 1.0f);
        r.point_a = r.point_b = v2_mul_add(xa.p, 0.5f, d);
        if (out) *out = r;
        return 0.0f;
    }
    /* A corner against a face (the common case): the other box's deepest corner along the best
     * axis, if it projects inside the reference face, is exactly sep from it, and no two points
     * are closer than sep (a lower bound): the distance is sep. The reference box is A for A's
     * axes (k < 2), else B (face_corner). */
    {
        float sg;
        vec2 corner = face_corner(ha, hb, c, s, k < 2 ? tb : ta, k, &sg);
        if (face_corner_inside(ha, hb, k, corner)) {
            face_closest(ha, xa, hb, xb, k, corner, sg, &r);
            r.overlap = !(sep > eps);
            r.distance = r.overlap ? 0.0f : sep;
            if (out) *out = r;
            return r.distance;
        }
    }
    /* B's corners against A, in A's frame */
    vec2 bx = v2(c * hb.x, s * hb.x), by = v2(-s * hb.y, c * hb.y);
    float best = INFINITY;
    vec2 best_p = v2(0, 0), best_c = v2(0, 0);
    bool from_b = true;
    for (int k = 0; k < 4; k++) {
        vec2 p = v2_add(tb, v2_add(k & 1 ? bx : v2_neg(bx), k & 2 ? by : v2_neg(by))), near;
        float q = point_box_sq(p, ha, &near);
        if (q < best) best = q, best_p = p, best_c = near;
    }
    /* A's corners against B, in B's frame */
    vec2 ax = v2(c * ha.x, -s * ha.x), ay = v2(s * ha.y, c * ha.y);
    for (int k = 0; k < 4; k++) {
        vec2 p = v2_add(ta, v2_add(k & 1 ? ax : v2_neg(ax), k & 2 ? ay : v2_neg(ay))), near;
        float q = point_box_sq(p, hb, &near);
        if (q < best) best = q, best_p = p, best_c = near, from_b = false;
    }
    float dist = sqrtf(best);
    /* back to the world: the corner and the nearest point on the other box, normal A to B */
    vec2 pa, pb;
    if (from_b) {
        pb = v2_add(xa.p, geom_rotate(xa.q, best_p));
        pa = v2_add(xa.p, geom_rotate(xa.q, best_c));
    } else {
        pa = v2_add(xb.p, geom_rotate(xb.q, best_p));
        pb = v2_add(xb.p, geom_rotate(xb.q, best_c));
    }
    vec2 n = dist > 0.0f
                 ? v2_scale(geom_rotate(from_b ? xa.q : xb.q,
                                        from_b ? v2_sub(best_p, best_c) : v2_sub(best_c, best_p)),
                            1.0f / dist)
                 : v2(0.0f, 1.0f);
    r.normal = n;
    r.point_a = pa;
    r.point_b = pb;
    if (dist > eps) {
        r.distance = dist;
        r.overlap = false;
    } else {
        r.distance = 0.0f;
        r.overlap = true;
    }
    if (out) *out = r;
    return r.distance;
}

float geom_distance_xf(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                       geom_closest *out) {
    return distance_cached(a, xa, b, xb, NULL, out);
}

static float distance_cached(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                             gjk_cache *cache, geom_closest *out) {
    geom_closest r;
    memset(&r, 0, sizeof r);
    r.normal = v2(0.0f, 1.0f);
    vec2 origin = xa.p;
    if (!geom_coord_ok(v2_sub(xb.p, xa.p))) {
        r.distance = GEOM_MAX_COORD;
        if (out) *out = r;
        return r.distance;
    }
    if (a->kind == GEOM_SHAPE_BOX && b->kind == GEOM_SHAPE_BOX)
        return box_box_distance(a->u.half_extents, xa, b->u.half_extents, xb, out);
    proxy pa, pb;
    make_proxy(a, xa, origin, &pa);
    make_proxy(b, xb, origin, &pb);
    vec2 ca, cb;
    float d = gjk(&pa, &pb, cache, &ca, &cb, &r.iterations);
    float radii = pa.radius + pb.radius;
    /* Closer than this between the cores is touching: GJK's float rounding lies below it. */
    const float eps = 1e-6f;
    if (d > radii + eps && d > eps) {
        vec2 n = v2_scale(v2_sub(cb, ca), 1.0f / d);
        r.normal = n;
        r.distance = d - radii;
        r.point_a = v2_add(v2_mul_add(ca, pa.radius, n), origin);
        r.point_b = v2_add(v2_mul_add(cb, -pb.radius, n), origin);
    } else {
        if (d > eps) r.normal = v2_scale(v2_sub(cb, ca), 1.0f / d);
        r.overlap = true;
        r.distance = 0.0f;
        r.point_a = v2_add(ca, origin);
        r.point_b = v2_add(cb, origin);
    }
    if (out) *out = r;
    return r.distance;
}

/* ---- conservative advancement -------------------------------------------------------------- */

/* (cos x, sin x) for the turn within an interval: Taylor to x^9 for |x| <= 1 (error below
 * 3e-8, under float's own rounding of the result), geom_cos_sin beyond. The advancement evaluates a
 * motion at many times; its start angle's cos/sin is taken once, so each step costs a few
 * multiplications instead of two libm calls. */
ROT_HOT vec2 turn_of(float x) {
    if (!(fabsf(x) <= 1.0f)) return geom_cos_sin(x);
    float x2 = x * x;
    float c = 1.0f + x2 * (-1.0f / 2 + x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320))));
    float s =
        x *
        (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 + x2 * (1.0f / 362880)))));
    return v2(c, s);
}

/* (cos a, sin a) for a start angle: a quarter-turn reduction to |x| <= pi/4 and turn_of, so the
 * advancement's setup costs a few multiplications (an angle of 0, every static's, costs nothing).
 * Within about 1e-7 of cosf/sinf for |a| up to a few turns; geom_cos_sin beyond. */
vec2 geom_turn_start(float a) {
    if (a == 0.0f) return v2(1.0f, 0.0f);
    if (!(fabsf(a) <= 32.0f)) return geom_cos_sin(a);
    /* the nearest number of quarter turns (a * 2 / pi, rounded; no libm call) */
    int ki = (int)(a * 0.63661977f + (a >= 0.0f ? 0.5f : -0.5f));
    float k = (float)ki;
    /* pi/2 in two parts (Cody-Waite: k times the first is exact), so the reduction keeps float
     * precision */
    vec2 r = turn_of((a - k * 1.5703125f) - k * 4.83826794e-4f);
    switch (ki & 3) {
    case 1:
        return v2(-r.y, r.x);
    case 2:
        return v2(-r.x, -r.y);
    case 3:
        return v2(r.y, -r.x);
    default:
        return r;
    }
}

/* A motion evaluated at t: q0 (the start's cos/sin) turned further by t * da. */
ROT_HOT geom_xf motion_at(const geom_motion *m, vec2 q0, float t) {
    geom_xf x;
    x.p = v2_mul_add(m->p0, t, m->dp);
    x.q = m->da == 0.0f ? q0 : geom_rotate(q0, turn_of(t * m->da));
    return x;
}

/* The first time in [0, 1] at which B's origin, at p relative to A's and moving by v relative to
 * it over the interval, comes within `reach` of A's origin; 0 when it starts within (or the
 * numbers are too large to trust), above 1 when it never does. */
ROT_HOT float disc_entry(vec2 p, vec2 v, float reach) {
    const float big = 1e6f; /* far below float overflow of the squares, and beyond any scene */
    /* within reach first (the common case of a body against another; huge or non-finite
     * numbers answer 0 either way) */
    float c = v2_dot(p, p) - reach * reach;
    if (!(c > 0.0f)) return 0.0f;
    if (!(fabsf(p.x) < big && fabsf(p.y) < big && fabsf(v.x) < big && fabsf(v.y) < big))
        return 0.0f;
    float b = v2_dot(p, v);
    if (!(b < 0.0f)) return 2.0f; /* not closing */
    float disc = b * b - v2_dot(v, v) * c;
    if (!(disc >= 0.0f)) return 2.0f; /* passes by */
    return c / (-b + sqrtf(disc));    /* the smaller root, without cancellation */
}

/* A start in contact that a leaving advancement may go on from: the gap there is not overlap and
 * not so small that half of it would sink into the rounding of positions and distances (a body
 * the tick stops against something stands target to target + tolerance from it, and a leaving
 * advancement keeps half the largest gap it met: see toi_leave_targets). */
#define TOI_LEAVE_MIN_GAP(target) (0.125f * (target))

/* Whether the two motions open the gap at the start, or hold it: the closest points' relative
 * velocity along the normal, each point carried by its body (its translation plus its turn about
 * its origin), is not negative. This is the first-order rate of the gap there; another part of a
 * shape that closes in meanwhile is what the lowered target of a leaving advancement is for. */
ROT_HOT bool toi_opens(const geom_closest *c, const geom_motion *ma, const geom_motion *mb) {
    vec2 ra = v2_sub(c->point_a, ma->p0), rb = v2_sub(c->point_b, mb->p0);
    vec2 va = v2_add(ma->dp, v2(-ma->da * ra.y, ma->da * ra.x));
    vec2 vb = v2_add(mb->dp, v2(-mb->da * rb.y, mb->da * rb.x));
    return v2_dot(v2_sub(vb, va), c->normal) >= 0.0f;
}

/* Whether a start in contact certainly closes, before toi_opens looks at the closest points: the
 * translation closes along the normal n (A to B) faster than any turn could open it (spin, the
 * advancement's bound on the turns). Most starts in contact are a body pressed into what it
 * stopped at; this spares them the closest points. */
ROT_HOT bool toi_closes(vec2 dv, vec2 n, float spin) { return v2_dot(dv, n) > spin; }

/* A leaving advancement's target and tolerance once it has met a gap of `seen` (the largest so
 * far): half of it, never above the caller's target, and the tolerance in the caller's proportion.
 * They only grow, so every step stays at least the first (half the start gap) from contact, and a
 * body that turns away from a wall and back onto it stops at half the gap it had opened, not at
 * half its start gap: rocking against a wall does not creep into it. */
ROT_HOT void toi_leave_targets(float seen, float target, float tolerance, float *tg, float *tl) {
    *tg = fminf(target, 0.5f * seen);
    *tl = *tg * (tolerance / target);
}

/* toi_opens for a box A (rotation q, moving by dp and turning by da) against a box B that stands
 * still at angle 0, where a corner meets a face along axis k (face_corner's corner and side sg,
 * o the other box's centre, all in the reference box's frame): the same rate along the same
 * normal from box_box_distance's closest points, worked out in that frame, without them. For
 * k >= 2 B's face is the reference (the world's axes): A's corner, at r = corner - o from A's
 * centre, moves by dp + da x r, and the normal from A to B is -sg along axis j. For k < 2 A's
 * face is: its foot under B's corner moves by dp + da x (foot), and the normal is sg along A's
 * axis j; da x r . n is da times r x n, which the turn into A's frame keeps. */
ROT_HOT bool box_face_opens_fixed(vec2 q, int k, const face_contact *fc, vec2 dp, float da) {
    int j = k & 1;
    if (k >= 2) {
        vec2 r = v2_sub(fc->corner, fc->o);
        return fc->sg * (j ? dp.y + da * r.x : dp.x - da * r.y) >= 0.0f;
    }
    float along = j ? -q.y * dp.x + q.x * dp.y : q.x * dp.x + q.y * dp.y; /* dp in A's frame */
    return -fc->sg * (along + da * (j ? fc->corner.x : -fc->corner.y)) >= 0.0f;
}

/* The one advancement behind geom_toi_turning_before and geom_toi_turning_leaving (leave: a start
 * in contact that the motion opens goes on, see geom_rot.h). */
ROT_HOT bool toi_turning(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                         const geom_motion *mb, float target, float tolerance, float before,
                         bool leave, geom_toi_result *out) {
    geom_toi_result r;
    memset(&r, 0, sizeof r);
    r.t = 1.0f;
    r.normal = v2(0.0f, 1.0f);
    /* Angular terms over the whole interval: no point of a turning shape moves (across any
     * fixed direction) faster than |da| times its farthest point from the body origin. A circle
     * is centred on its origin: its turn moves no part of it closer to anything. */
    float ra = geom_shape_radius(a), rb = geom_shape_radius(b);
    float spin = (a->kind == GEOM_SHAPE_CIRCLE ? 0.0f : fabsf(ma->da) * ra) +
                 (b->kind == GEOM_SHAPE_CIRCLE ? 0.0f : fabsf(mb->da) * rb);
    vec2 dv = v2_sub(ma->dp, mb->dp); /* A's motion relative to B */
    /* Whatever their turn, the shapes stay inside the discs of their radii around their origins:
     * until those discs come within target + tolerance (and as much again for the rounding of
     * this time), no advancement step could stop, so it starts there (or answers at once when
     * they never do). A far approach costs one root instead of a few steps. */
    float t = disc_entry(v2_sub(mb->p0, ma->p0), v2_neg(dv), ra + rb + 2.0f * target + tolerance);
    if (t > 1.0f || t >= before) {
        r.state = GEOM_TOI_SEPARATED;
        if (out) *out = r;
        return false;
    }
    vec2 qa = geom_turn_start(ma->a0), qb = geom_turn_start(mb->a0);
    bool exhausted = true;
    gjk_cache cache = {0, {0, 0, 0}, {0, 0, 0}};
    bool boxes = a->kind == GEOM_SHAPE_BOX && b->kind == GEOM_SHAPE_BOX;
    bool leaving = false;              /* a start in contact that the motion opens */
    float seen = 0.0f;                 /* leaving: the largest gap met */
    float tg = target, tl = tolerance; /* the target and tolerance in force */
    for (int it = 0; it < GEOM_CA_MAX_ITERATIONS && exhausted; it++) {
        geom_closest c;
        geom_xf xa = motion_at(ma, qa, t), xb = motion_at(mb, qb, t);
        float d;
        bool face = false; /* two boxes arrived with a corner against a face, along axis k */
        int k = 0;
        face_contact fc;
        if (boxes) {
            /* Two boxes: their separation along a face axis is a lower bound of the distance,
             * and the gap along that fixed axis closes no faster than the same bound, so it
             * advances as safely as the distance does (and equals it whenever a corner meets a
             * face, the common approach). Near the target the exact distance decides, so the
             * answer is the distance's, as for any other pair. */
            vec2 axis;
            float sep = box_box_separation(a->u.half_extents, xa, b->u.half_extents, xb, &axis, &k);
            if (sep > tg + tl) {
                d = sep;
                c.overlap = false;
                c.normal = axis;
            } else if (sep > 1e-6f &&
                       box_face_exact(a->u.half_extents, xa, b->u.half_extents, xb, k, &fc)) {
                face = true;
                /* arrived, a corner against a face: box_box_distance's answer (the distance
                 * is sep along the axis) without the rest of its work */
                d = sep;
                c.overlap = false;
                c.normal = axis;
            } else {
                d = box_box_distance(a->u.half_extents, xa, b->u.half_extents, xb, &c);
            }
        } else {
            d = distance_cached(a, xa, b, xb, &cache, &c);
        }
        r.t = t;
        r.normal = c.normal;
        r.distance = d;
        r.iterations = it;
        if (c.overlap || d <= tg + tl) {
            bool go_on = false;
            if (leave && t == 0.0f && !c.overlap && d > TOI_LEAVE_MIN_GAP(target)) {
                /* a start in contact: the closest points decide whether this motion leaves */
                if (face && mb->dp.x == 0.0f && mb->dp.y == 0.0f && mb->da == 0.0f &&
                    mb->a0 == 0.0f) {
                    /* B stands still at angle 0 (a tile): geom_toi_turning_box_fixed's test */
                    go_on = box_face_opens_fixed(xa.q, k, &fc, ma->dp, ma->da);
                } else if (!toi_closes(dv, c.normal, spin)) {
                    if (face) /* box_box_distance's closest points there, without its other work */
                        face_closest(a->u.half_extents, xa, b->u.half_extents, xb, k, fc.corner,
                                     fc.sg, &c);
                    go_on = toi_opens(&c, ma, mb);
                }
            }
            if (!go_on) {
                r.state = t == 0.0f ? GEOM_TOI_START_CONTACT : GEOM_TOI_HIT;
                if (out) *out = r;
                return true;
            }
            leaving = true;
        }
        if (leaving && d > seen) {
            seen = d;
            toi_leave_targets(seen, target, tolerance, &tg, &tl);
        }
        /* The seed's bound: the gap along n shrinks no faster than this. */
        float bound = fabsf(v2_dot(dv, c.normal)) + spin;
        if (!(bound > 0.0f)) {
            exhausted = false; /* nothing moves: no contact ahead */
        } else {
            t += (d - tg) / bound;
            if (!(t < 1.0f)) exhausted = false;
            if (!(t < before)) {
                /* at or past the caller's horizon: whatever comes later is no earlier */
                r.state = GEOM_TOI_SEPARATED;
                r.t = 1.0f;
                if (out) *out = r;
                return false;
            }
        }
    }
    if (exhausted) {
        /* The bound: the last time reached is still safe; stop there (conservative). */
        geom_closest c;
        r.distance = geom_distance_xf(a, motion_at(ma, qa, t), b, motion_at(mb, qb, t), &c);
        r.normal = c.normal;
        r.t = t;
        r.state = GEOM_TOI_ITERATIONS;
        r.iterations = GEOM_CA_MAX_ITERATIONS;
        if (out) *out = r;
        return true;
    }
    r.state = GEOM_TOI_SEPARATED;
    r.t = 1.0f;
    if (out) *out = r;
    return false;
}

bool geom_toi_turning(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                      const geom_motion *mb, float target, float tolerance, geom_toi_result *out) {
    return toi_turning(a, ma, b, mb, target, tolerance, 2.0f, false, out);
}

bool geom_toi_turning_before(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                             const geom_motion *mb, float target, float tolerance, float before,
                             geom_toi_result *out) {
    return toi_turning(a, ma, b, mb, target, tolerance, before, false, out);
}

bool geom_toi_turning_leaving(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                              const geom_motion *mb, float target, float tolerance, float before,
                              geom_toi_result *out) {
    return toi_turning(a, ma, b, mb, target, tolerance, before, true, out);
}

/* box_face_exact for a B at angle 0 (xb.q = (1, 0)), d = xb.p - xa.p: c and s are A's cos and
 * -sin, B's frame is the world's (A's centre there is -d); the same answer (the values differ at
 * most in the sign of a zero, which the side tests (>= 0) and fabsf do not see), with the corner,
 * its side and o in fc as box_face_exact has them (for box_face_opens_fixed, the same way). */
ROT_HOT bool box_face_exact_fixed(vec2 ha, vec2 q, vec2 d, vec2 hb, int k, face_contact *fc) {
    fc->o = k < 2 ? v2(q.x * d.x + q.y * d.y, q.x * d.y - q.y * d.x) : v2(-d.x, -d.y);
    fc->corner = face_corner(ha, hb, q.x, -q.y, fc->o, k, &fc->sg);
    return face_corner_inside(ha, hb, k, fc->corner);
}

/* geom_toi_turning_box_fixed's answer for a start in contact that leaves: toi_turning's own
 * (out of line: one in a hundred of S1r's advancements that start in contact leaves). */
static __attribute__((noinline)) float box_fixed_leave(const geom_turning_box *a, vec2 hb, vec2 pb,
                                                       float target, float tolerance,
                                                       float before) {
    const geom_motion mb = {pb, 0.0f, {0.0f, 0.0f}, 0.0f};
    geom_shape sa, sb;
    sa.kind = sb.kind = GEOM_SHAPE_BOX;
    sa.u.half_extents = a->h;
    sb.u.half_extents = hb;
    geom_toi_result r;
    return toi_turning(&sa, &a->m, &sb, &mb, target, tolerance, before, true, &r) ? r.t : 2.0f;
}

/* geom_toi_turning_leaving's loop for a box A against a box B that neither moves nor turns and
 * stands at angle 0 (B's motion {pb, 0, 0, 0}), where only the time matters: B's rotation is
 * (1, 0), so its products by 1 are the values themselves and those by 0 add nothing but the sign
 * of a zero, which no comparison, fabsf or later sum of a nonzero term sees; B's motion adds 0
 * (the same position, but for the sign of a zero). Every value the time depends on is so the
 * general loop's: the separations, the chosen axis, the bound (|dv . n|, the same for n and -n),
 * each step. At t = 0 A's rotation is qa itself (turn_of(0) is (1, 0)). The rare arrival that
 * needs the exact distance calls the same box_box_distance with the same transforms. A start in
 * contact takes toi_turning's tests for a leave (box_face_opens_fixed, as toi_turning does for a
 * B that stands still), and a leave toi_turning itself (box_fixed_leave). */
float geom_toi_turning_box_fixed(const geom_turning_box *a, float hbx, float hby, float pbx,
                                 float pby, float target, float tolerance, float before) {
    const vec2 ha = a->h, qa = a->q0, hb = v2(hbx, hby), pb = v2(pbx, pby);
    const float ra = a->radius;
    const geom_motion *ma = &a->m;
    float rb = v2_len(hb);
    float spin = fabsf(ma->da) * ra; /* + |0| rb: +0 */
    vec2 dv = ma->dp;                /* - 0 */
    float t = disc_entry(v2_sub(pb, ma->p0), v2_neg(dv), ra + rb + 2.0f * target + tolerance);
    if (t > 1.0f || t >= before) return 2.0f;
    const geom_xf xb = {pb, {1.0f, 0.0f}};
    const float arrive = target + tolerance;
    for (int it = 0; it < GEOM_CA_MAX_ITERATIONS; it++) {
        geom_xf xa;
        xa.p = v2_mul_add(ma->p0, t, ma->dp);
        xa.q = t == 0.0f || ma->da == 0.0f ? qa : geom_rotate(qa, turn_of(t * ma->da));
        face_contact fc; /* a corner against a face, box_face_exact_fixed's */
        /* box_box_separation with xb.q = (1, 0) */
        vec2 d = v2_sub(pb, xa.p);
        float ac = fabsf(xa.q.x), as = fabsf(xa.q.y);
        float sep[4] = {
            fabsf(xa.q.x * d.x + xa.q.y * d.y) - ha.x - hb.x * ac - hb.y * as,
            fabsf(xa.q.x * d.y - xa.q.y * d.x) - ha.y - hb.x * as - hb.y * ac,
            fabsf(d.x) - hb.x - ha.x * ac - ha.y * as,
            fabsf(d.y) - hb.y - ha.x * as - ha.y * ac,
        };
        int k = 0;
        for (int i = 1; i < 4; i++)
            if (sep[i] > sep[k]) k = i;
        float dist = sep[k];
        float closing; /* |dv . n| along the axis the gap is measured on */
        if (dist > arrive) {
            closing = k == 0   ? fabsf(dv.x * xa.q.x + dv.y * xa.q.y)
                      : k == 1 ? fabsf(dv.x * -xa.q.y + dv.y * xa.q.x)
                      : k == 2 ? fabsf(dv.x)
                               : fabsf(dv.y);
        } else if (dist > 1e-6f && box_face_exact_fixed(ha, xa.q, d, hb, k, &fc)) {
            /* arrived, a corner against a face. At the start (toi_turning's leave), a turn that
             * opens the gap goes on: both tests evaluated together, since which way a pressed
             * body turns is a coin toss to the branch predictor, while a leave is rare. */
            if (t != 0.0f) return t;
            if ((dist > TOI_LEAVE_MIN_GAP(target)) & box_face_opens_fixed(xa.q, k, &fc, dv, ma->da))
                return box_fixed_leave(a, hb, pb, target, tolerance, before);
            return t;
        } else {
            geom_closest c;
            dist = box_box_distance(ha, xa, hb, xb, &c);
            if (c.overlap || dist <= arrive) {
                const geom_motion mb = {pb, 0.0f, {0.0f, 0.0f}, 0.0f};
                if (t == 0.0f && !c.overlap && dist > TOI_LEAVE_MIN_GAP(target) &&
                    !toi_closes(dv, c.normal, spin) && toi_opens(&c, ma, &mb))
                    return box_fixed_leave(a, hb, pb, target, tolerance, before);
                return t;
            }
            closing = fabsf(v2_dot(dv, c.normal));
        }
        float bound = closing + spin;
        if (!(bound > 0.0f)) return 2.0f; /* nothing moves: no contact ahead */
        t += (dist - target) / bound;
        if (!(t < 1.0f) || !(t < before)) return 2.0f;
    }
    return t; /* the iteration bound: the last time reached is still safe */
}

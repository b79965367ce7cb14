/* geom pair queries: overlap with MTV and linear sweep for every pair of kinds.
 *
 * Every pair function works in the frame of its first shape X (at the origin) with the second
 * shape Y at offset r = pY - pX and the relative motion d = dX - dY, and returns normals from X
 * towards Y. The mirrored order calls the same function with X and Y swapped, r and d negated,
 * and negates the normal, so query(A,B) mirrors query(B,A) by construction.
 *
 * Polygon and box pairs use separating axes: the edge normals of both shapes are the edge normals
 * of the Minkowski difference M = Y (-) X. Along a candidate contact normal c (from X to Y) the
 * gap is s(c) = min over Y of dot(c, y) - max over X of dot(c, x), which is exactly how far the
 * origin lies outside the face of M whose outward normal is -c. Overlap is "all gaps negative", the
 * MTV is the axis with the largest (least negative) gap, and the sweep clips the ray t*d against
 * every face (Cyrus-Beck), which is exact for convex shapes. Circles use distances to the closest
 * feature, and sweep a ray against the other shape inflated by the radius (a rounded polygon). */
#include "collide_assert.h"
#include "geom.h"
#include "geom_internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

/* fminf/fmaxf honour NaN rules that keep GCC from inlining them; inputs here are finite, and
 * a plain compare compiles to one minss/maxss. */
static inline float min_f(float a, float b) { return b < a ? b : a; }
static inline float max_f(float a, float b) { return b > a ? b : a; }

/* ---- Sweep over separating axes ---------------------------------------------------------- */

/* The sweep decision, fed one axis at a time: k, an index the caller maps back to the axis's
 * contact normal c (from X towards Y); s, the gap along c at t = 0; v = dot(c, d), the closing
 * speed along c.
 *   - Separated at the start (largest gap > GEOM_LINEAR_SLOP): exact Cyrus-Beck clip of the ray
 *     against M; the hit time is the latest entry, the normal that entry's axis.
 *   - Touching or overlapping (largest gap <= GEOM_LINEAR_SLOP): t = 0 and the MTV normal if the
 *     motion closes along it.
 *   - Either way, an axis along which the shapes are at most touching (s > -GEOM_LINEAR_SLOP) and
 *     which the motion does not close (v <= 0) means no hit: the shapes can never overlap by more
 *     than the slop. This is what lets a body slide along a floor of many tiles without catching
 *     on the seams, and what makes "slides along the contact" report no hit. */
typedef struct sweep_acc {
    float s_max;     /* largest gap so far: the MTV axis */
    int k_max;       /* index of the MTV axis (the caller maps indices to normals) */
    float enter_num; /* latest entry time as enter_num / enter_den (den > 0): comparing */
    float enter_den; /* fractions by cross-multiplying keeps divisions out of the loop */
    int k_enter;     /* axis of that entry */
    float exit_num;  /* earliest exit time as exit_num / exit_den (den > 0) */
    float exit_den;  /* denominator of the exit time */
    bool late;       /* some closing axis with a gap <= the slop only enters after t = 1 */
    bool miss;       /* decided: no hit */
} sweep_acc;

static inline void sweep_acc_init(sweep_acc *a) {
    a->s_max = -FLT_MAX;
    a->k_max = 0;
    a->enter_num = 0.0f;
    a->enter_den = 1.0f;
    a->k_enter = 0;
    a->exit_num = 1.0f;
    a->exit_den = 1.0f;
    a->late = false;
    a->miss = false;
}

/* Written as selects rather than nested branches, whose outcomes are data-dependent coin flips:
 * measured faster for polygon pairs (bench_geom polygon-polygon/sweep). Entry and exit times are
 * compared as cross-multiplied fractions; the products stay finite for inputs within
 * GEOM_MAX_COORD. */
static inline void sweep_axis(sweep_acc *a, int k, float s, float v) {
    bool better = s > a->s_max;
    a->s_max = better ? s : a->s_max;
    a->k_max = better ? k : a->k_max;
    bool closing = v > 0.0f;
    /* Entry at s / v, later than the current one. */
    bool enters = closing & (s > 0.0f) & (s * a->enter_den > a->enter_num * v);
    a->enter_num = enters ? s : a->enter_num;
    a->enter_den = enters ? v : a->enter_den;
    a->k_enter = enters ? k : a->k_enter;
    /* Entering after t = 1: a miss for sure when the gap exceeds the slop (then the start is
     * "separated"); within the slop the start rule decides. */
    bool after_end = closing & (s > v);
    a->miss |= after_end & (s > GEOM_LINEAR_SLOP);
    a->late |= after_end;
    /* Not closing along an axis where they are at most touching. */
    a->miss |= !closing & (s > -GEOM_LINEAR_SLOP);
    /* Exit at s / v = (-s) / (-v), earlier than the current one. */
    bool exits = (v < 0.0f) & (-s * a->exit_den < a->exit_num * -v);
    a->exit_num = exits ? -s : a->exit_num;
    a->exit_den = exits ? -v : a->exit_den;
}

/* The same decision with branches: cheaper where the outcomes are predictable, as along the
 * polygon axes of a box-polygon pair (measured: bench_geom box-polygon/sweep). */
static inline void sweep_axis_br(sweep_acc *a, int k, float s, float v) {
    if (s > a->s_max) {
        a->s_max = s;
        a->k_max = k;
    }
    if (v > 0.0f) {
        if (s > v) {
            if (s > GEOM_LINEAR_SLOP) a->miss = true;
            a->late = true;
        } else if (s > 0.0f && s * a->enter_den > a->enter_num * v) {
            a->enter_num = s;
            a->enter_den = v;
            a->k_enter = k;
        }
    } else if (s > -GEOM_LINEAR_SLOP) {
        a->miss = true;
    } else if (v < 0.0f && -s * a->exit_den < a->exit_num * -v) {
        a->exit_num = -s;
        a->exit_den = -v;
    }
}

/* The decision once every axis is in: -1 for no hit, else the axis index with *t set. For a hit
 * at the start (t = 0, the MTV axis) the caller must still check that the motion closes along
 * that axis: *needs_closing says so. */
static inline int sweep_decide(const sweep_acc *a, float *t, bool *needs_closing) {
    if (a->miss) return -1;
    if (a->s_max <= GEOM_LINEAR_SLOP) {
        *t = 0.0f;
        *needs_closing = true;
        return a->k_max;
    }
    if (a->late || a->enter_num * a->exit_den > a->exit_num * a->enter_den) return -1;
    *t = a->enter_num / a->enter_den;
    *needs_closing = false;
    return a->k_enter;
}

static inline bool sweep_report(float t, vec2 n, vec2 d, bool needs_closing, geom_toi *out) {
    if (needs_closing && !(v2_dot(n, d) > 0.0f)) return false;
    if (out) {
        out->t = t;
        out->normal = n;
    }
    return true;
}

/* Axis normals of a box, in the order every box sweep feeds them (y first: ties go to y). */
static const vec2 box_axes[4] = {{0.0f, 1.0f}, {0.0f, -1.0f}, {1.0f, 0.0f}, {-1.0f, 0.0f}};

/* ---- Box-box: M is the box at r with half extents ha + hb ------------------------------- */

/* ---- Box (X) - polygon (Y) ---------------------------------------------------------------- */

typedef struct poly_extent {
    float min_x, max_x, min_y, max_y; /* the polygon's local bounds */
} poly_extent;

static inline poly_extent polygon_extent(const geom_polygon *p) {
    poly_extent e = {p->vertices[0].x, p->vertices[0].x, p->vertices[0].y, p->vertices[0].y};
    for (int i = 1; i < p->count; i++) {
        vec2 v = p->vertices[i];
        e.min_x = min_f(e.min_x, v.x);
        e.max_x = max_f(e.max_x, v.x);
        e.min_y = min_f(e.min_y, v.y);
        e.max_y = max_f(e.max_y, v.y);
    }
    return e;
}

/* Gap along -n_j (n_j: an outward normal of polygon Y) between box X and Y's edge j. */
static inline float bp_poly_axis_gap(vec2 h, const geom_polygon *y, int j, vec2 r) {
    vec2 n = y->normals[j];
    return -v2_dot(n, r) - v2_dot(n, y->vertices[j]) - (fabsf(n.x) * h.x + fabsf(n.y) * h.y);
}

static bool bp_overlap(vec2 h, const geom_polygon *y, vec2 r, geom_contact *out) {
    poly_extent e = polygon_extent(y);
    float s_best, s;
    vec2 n_best;
    s_best = r.y + e.min_y - h.y;
    n_best = v2(0.0f, 1.0f);
    if ((s = -r.y - e.max_y - h.y) > s_best) {
        s_best = s;
        n_best = v2(0.0f, -1.0f);
    }
    if ((s = r.x + e.min_x - h.x) > s_best) {
        s_best = s;
        n_best = v2(1.0f, 0.0f);
    }
    if ((s = -r.x - e.max_x - h.x) > s_best) {
        s_best = s;
        n_best = v2(-1.0f, 0.0f);
    }
    if (!(s_best < 0.0f)) return false;
    for (int j = 0; j < y->count; j++) {
        s = bp_poly_axis_gap(h, y, j, r);
        if (!(s < 0.0f)) return false;
        if (s > s_best) {
            s_best = s;
            n_best = v2_neg(y->normals[j]);
        }
    }
    if (out) {
        out->normal = n_best;
        out->depth = -s_best;
    }
    return true;
}

static bool bp_sweep(vec2 h, const geom_polygon *y, vec2 r, vec2 d, geom_toi *out) {
    poly_extent e = polygon_extent(y);
    sweep_acc a;
    sweep_acc_init(&a);
    sweep_axis_br(&a, 0, r.y + e.min_y - h.y, d.y);
    sweep_axis_br(&a, 1, -r.y - e.max_y - h.y, -d.y);
    sweep_axis_br(&a, 2, r.x + e.min_x - h.x, d.x);
    sweep_axis_br(&a, 3, -r.x - e.max_x - h.x, -d.x);
    for (int j = 0; j < y->count && !a.miss; j++)
        sweep_axis_br(&a, 4 + j, bp_poly_axis_gap(h, y, j, r), -v2_dot(y->normals[j], d));
    float t;
    bool needs_closing;
    int k = sweep_decide(&a, &t, &needs_closing);
    if (k < 0) return false;
    return sweep_report(t, k < 4 ? box_axes[k] : v2_neg(y->normals[k - 4]), d, needs_closing, out);
}

/* ---- Polygon (X) - polygon (Y) ----------------------------------------------------------- */

/* The vertex of p minimising dot(n, v), climbing forward from `start`. When n walks the edge
 * normals of another convex polygon in CCW order, the minimising vertex of p only moves forward
 * (consecutive normals turn by less than a half turn), so one pass over both polygons finds
 * every support: O(n + m) instead of O(n * m). Bounded by one lap whatever the input. */
static inline float polygon_min_from(const geom_polygon *p, vec2 n, int *index) {
    int j = *index, count = p->count;
    float m = v2_dot(n, p->vertices[j]);
    for (int k = 1; k < count; k++) {
        int next = j + 1 == count ? 0 : j + 1;
        float d = v2_dot(n, p->vertices[next]);
        if (!(d < m)) break;
        m = d;
        j = next;
    }
    *index = j;
    return m;
}

/* Full scan, to seed the climb. */
static inline int polygon_argmin(const geom_polygon *p, vec2 n) {
    int j = 0;
    float m = v2_dot(n, p->vertices[0]);
    for (int i = 1; i < p->count; i++) {
        float d = v2_dot(n, p->vertices[i]);
        if (d < m) {
            m = d;
            j = i;
        }
    }
    return j;
}

static bool pp_overlap(const geom_polygon *x, const geom_polygon *y, vec2 r, geom_contact *out) {
    float s_best = -FLT_MAX;
    vec2 n_best = v2(0.0f, 1.0f);
    int j = polygon_argmin(y, x->normals[0]);
    for (int i = 0; i < x->count; i++) {
        vec2 n = x->normals[i];
        float s = v2_dot(n, r) + polygon_min_from(y, n, &j) - v2_dot(n, x->vertices[i]);
        if (!(s < 0.0f)) return false;
        if (s > s_best) {
            s_best = s;
            n_best = n;
        }
    }
    j = polygon_argmin(x, y->normals[0]);
    for (int k = 0; k < y->count; k++) {
        vec2 n = y->normals[k];
        float s = -v2_dot(n, r) - v2_dot(n, y->vertices[k]) + polygon_min_from(x, n, &j);
        if (!(s < 0.0f)) return false;
        if (s > s_best) {
            s_best = s;
            n_best = v2_neg(n);
        }
    }
    if (out) {
        out->normal = n_best;
        out->depth = -s_best;
    }
    return true;
}

static bool pp_sweep(const geom_polygon *x, const geom_polygon *y, vec2 r, vec2 d, geom_toi *out) {
    sweep_acc a;
    sweep_acc_init(&a);
    int j = polygon_argmin(y, x->normals[0]);
    for (int i = 0; i < x->count && !a.miss; i++) {
        vec2 n = x->normals[i];
        float s = v2_dot(n, r) + polygon_min_from(y, n, &j) - v2_dot(n, x->vertices[i]);
        sweep_axis(&a, i, s, v2_dot(n, d));
    }
    j = polygon_argmin(x, y->normals[0]);
    for (int k = 0; k < y->count && !a.miss; k++) {
        vec2 n = y->normals[k];
        float s = -v2_dot(n, r) - v2_dot(n, y->vertices[k]) + polygon_min_from(x, n, &j);
        sweep_axis(&a, x->count + k, s, -v2_dot(n, d));
    }
    float t;
    bool needs_closing;
    int k = sweep_decide(&a, &t, &needs_closing);
    if (k < 0) return false;
    vec2 n = k < x->count ? x->normals[k] : v2_neg(y->normals[k - x->count]);
    return sweep_report(t, n, d, needs_closing, out);
}

/* ---- Circles ------------------------------------------------------------------------------ */

/* Signed distance from point c to the polygon (negative inside) and the outward unit normal of
 * the closest feature (inside: the face of least penetration).
 *
 * Outside, the closest feature is found by Voronoi region, not by the direction of the difference
 * between c and its closest point: when c lies within a few ulps of a face, that difference is a
 * cancellation of nearly equal floats and its direction is noise (it was up to 1.5 rad off). So a
 * point over an edge takes the edge's stored normal and its plane distance, both accurate at any
 * gap; only a point in a vertex's region takes the direction c - v, computed from one exact-ish
 * subtraction and then kept inside the vertex's normal cone. Every region test measures from the
 * nearer end of the edge (c - a for a's side, c - b for b's side), so its rounding is relative to
 * how close c is to that vertex, not to the edge's length. */
static float point_polygon_distance(poly_view p, vec2 c, vec2 *n_out) {
    float best = -FLT_MAX;
    int bi = 0;
    for (int i = 0; i < p.count; i++) {
        float s = v2_dot(p.n[i], v2_sub(c, p.v[i]));
        if (s > best) {
            best = s;
            bi = i;
        }
    }
    *n_out = p.n[bi];
    if (best <= 0.0f) return best;
    /* Outside. An edge whose open half-plane holds c and whose slab (between the lines through
     * its ends, perpendicular to it) holds c is the closest feature: the distance is its plane
     * distance. Of several (possible only by rounding at a region boundary) the largest is the
     * true distance, since every plane distance is a lower bound. */
    float face_best = -FLT_MAX;
    int face_i = -1;
    for (int i = 0; i < p.count; i++) {
        vec2 a = p.v[i], b = p.v[i + 1 < p.count ? i + 1 : 0];
        float s = v2_dot(p.n[i], v2_sub(c, a));
        if (!(s > 0.0f) || !(s > face_best)) continue;
        vec2 e = v2_sub(b, a);
        if (v2_dot(v2_sub(c, a), e) >= 0.0f && v2_dot(v2_sub(c, b), e) <= 0.0f) {
            face_best = s;
            face_i = i;
        }
    }
    if (face_i >= 0) {
        *n_out = p.n[face_i];
        return face_best;
    }
    /* In a vertex's region: the nearest vertex, by squared distances in double. In float they
     * are good to an ulp of the square, which for a polygon 1e-2 across seen from 1e3 away is
     * more than the difference between its vertices: the wrong vertex, then a neighbouring
     * face's normal, 4 degrees off (the x30 audit). */
    int vi = 0;
    double best_sq = DBL_MAX;
    for (int i = 0; i < p.count; i++) {
        double dx = (double)c.x - p.v[i].x, dy = (double)c.y - p.v[i].y;
        double dsq = dx * dx + dy * dy;
        if (dsq < best_sq) {
            best_sq = dsq;
            vi = i;
        }
    }
    float dist = (float)sqrt(best_sq);
    /* The face gap is a lower bound of the distance; below float resolution keep the face. */
    if (!(dist > best)) return best;
    vec2 diff = v2_sub(c, p.v[vi]);
    int prev = vi > 0 ? vi - 1 : p.count - 1, next = vi + 1 < p.count ? vi + 1 : 0;
    /* The direction must lie in the vertex's normal cone, between the normals of its two edges;
     * a rounding step outside it (c at a region boundary) means the adjacent face, if c is in
     * front of that face (c can also be past the vertex along an edge and behind its line: then
     * the direction stands, as the x30 audit showed for a tiny polygon far from a huge circle). */
    if (v2_dot(diff, v2_sub(p.v[next], p.v[vi])) > 0.0f && v2_dot(diff, p.n[vi]) > 0.0f)
        *n_out = p.n[vi];
    else if (v2_dot(diff, v2_sub(p.v[vi], p.v[prev])) < 0.0f && v2_dot(diff, p.n[prev]) > 0.0f)
        *n_out = p.n[prev];
    else
        *n_out = v2_scale(diff, 1.0f / dist);
    return dist;
}

/* Specialised point_polygon_distance for a box of half extents h. */
static inline float point_box_distance(vec2 h, vec2 c, vec2 *n_out) {
    vec2 q = v2(min_f(max_f(c.x, -h.x), h.x), min_f(max_f(c.y, -h.y), h.y));
    if (q.x == c.x && q.y == c.y) {
        float dx = h.x - fabsf(c.x), dy = h.y - fabsf(c.y);
        if (dx < dy) {
            *n_out = v2(c.x >= 0.0f ? 1.0f : -1.0f, 0.0f);
            return -dx;
        }
        *n_out = v2(0.0f, c.y >= 0.0f ? 1.0f : -1.0f);
        return -dy;
    }
    vec2 diff = v2_sub(c, q);
    float dist = v2_len(diff);
    if (!(dist > 0.0f)) {
        /* Underflow of a sub-1e-19 gap: the axis the point lies beyond still names the face. */
        *n_out =
            c.x != q.x ? v2(c.x > 0.0f ? 1.0f : -1.0f, 0.0f) : v2(0.0f, c.y > 0.0f ? 1.0f : -1.0f);
        return 0.0f;
    }
    *n_out = v2_scale(diff, 1.0f / dist);
    return dist;
}

/* Circle X (radius R, at the origin) against polygon/box Y at r: signed distance between the
 * shapes and the normal from X towards Y. */
static inline float circle_poly_gap(poly_view y, float radius, vec2 r, vec2 *n_xy) {
    vec2 n_out;
    float dist = point_polygon_distance(y, v2_neg(r), &n_out);
    *n_xy = v2_neg(n_out);
    return dist - radius;
}

static inline float circle_box_gap(vec2 h, float radius, vec2 r, vec2 *n_xy) {
    vec2 n_out;
    float dist = point_box_distance(h, v2_neg(r), &n_out);
    *n_xy = v2_neg(n_out);
    return dist - radius;
}

static inline bool gap_to_contact(float gap, vec2 n, geom_contact *out) {
    if (!(gap < 0.0f)) return false;
    if (out) {
        out->normal = n;
        out->depth = -gap;
    }
    return true;
}

/* Start rule shared by the circle sweeps: within the slop, t = 0 if the motion closes. */
static inline bool touching_start(vec2 n, vec2 d, geom_toi *out) {
    if (!(v2_dot(n, d) > 0.0f)) return false;
    if (out) {
        out->t = 0.0f;
        out->normal = n;
    }
    return true;
}

/* Whether o lies in polygon p inflated by radius (within radius of an edge or a vertex, or
 * inside), in double: a check of the float start gap where that gap is within its own rounding. */
static bool rounded_polygon_contains_d(poly_view p, float radius, vec2 o) {
    double r = radius, outside = -INFINITY;
    for (int i = 0; i < p.count; i++) {
        vec2 n = p.n[i], a = p.v[i], b = p.v[i + 1 < p.count ? i + 1 : 0];
        double ox = (double)o.x - a.x, oy = (double)o.y - a.y;
        double ex = (double)b.x - a.x, ey = (double)b.y - a.y;
        double s = (double)n.x * ox + (double)n.y * oy;
        if (s > outside) outside = s;
        double u = ox * ex + oy * ey;
        if (s >= 0.0 && s <= r && u >= 0.0 && u <= ex * ex + ey * ey) return true; /* edge band */
        if (ox * ox + oy * oy <= r * r) return true;                               /* vertex disc */
    }
    return outside <= 0.0; /* inside the polygon itself */
}

/* Ray from o along d against polygon p inflated by radius: the union of the polygon, one
 * rectangle per edge and one disc per vertex, so the first entry is the earliest hit among the
 * offset edges and the vertex circles. o must be outside. Returns the outward normal. */
static bool ray_rounded_polygon(poly_view p, float radius, vec2 o, vec2 d, float *t_out,
                                vec2 *n_out) {
    /* Double precision, like geom_ray_circle: where a face hit and a vertex-circle hit are a
     * rounding error apart, float could pick the vertex and tilt the normal. */
    double best_t = 2.0, dx = d.x, dy = d.y;
    vec2 best_n = v2(0.0f, 1.0f);
    for (int i = 0; i < p.count; i++) {
        vec2 n = p.n[i], a = p.v[i], b = p.v[i + 1 < p.count ? i + 1 : 0];
        double den = (double)n.x * dx + (double)n.y * dy;
        if (!(den < 0.0)) continue;
        double ox = (double)o.x - a.x, oy = (double)o.y - a.y;
        double num = (double)n.x * ox + (double)n.y * oy - radius; /* gap to the offset edge */
        if (num < 0.0 || num > -den * (best_t < 1.0 ? best_t : 1.0)) continue;
        double t = num / -den;
        double ex = (double)b.x - a.x, ey = (double)b.y - a.y;
        double u = (ox + t * dx) * ex + (oy + t * dy) * ey;
        if (u < 0.0 || u > ex * ex + ey * ey) continue; /* beyond the edge: a vertex's job */
        if (t < best_t) {
            best_t = t;
            best_n = n;
        }
    }
    for (int i = 0; i < p.count; i++) {
        double t;
        vec2 n, v = p.v[i];
        if (!geom_ray_circle_d((double)o.x - v.x, (double)o.y - v.y, dx, dy, radius, &t, &n) ||
            !(t < best_t))
            continue;
        /* Stored normals are float, so a face and its end vertex can swap order by a rounding
         * error when the hit is near their boundary. A vertex hit whose centre lies over an
         * adjacent edge takes that edge's normal: the same time, the exact face normal. */
        int prev = i > 0 ? i - 1 : p.count - 1, next = i + 1 < p.count ? i + 1 : 0;
        double hx = (double)o.x - v.x + t * dx, hy = (double)o.y - v.y + t * dy;
        /* Only a face the ray approaches: at a sliver's acute vertex the adjacent edge runs back
         * almost along the other one, and its normal may face away from the motion (seen in the
         * x30 audit: a 1,200-long sliver against a 0.014 circle, normal 92 degrees off). */
        if (hx * ((double)p.v[next].x - v.x) + hy * ((double)p.v[next].y - v.y) > 0.0 &&
            (double)p.n[i].x * dx + (double)p.n[i].y * dy < 0.0)
            n = p.n[i];
        else if (hx * ((double)v.x - p.v[prev].x) + hy * ((double)v.y - p.v[prev].y) < 0.0 &&
                 (double)p.n[prev].x * dx + (double)p.n[prev].y * dy < 0.0)
            n = p.n[prev];
        best_t = t;
        best_n = n;
    }
    if (!(best_t <= 1.0)) return false;
    *t_out = (float)best_t;
    *n_out = best_n;
    return true;
}

static bool circle_poly_sweep(poly_view y, float radius, float gap, vec2 n_xy, vec2 r, vec2 d,
                              geom_toi *out) {
    if (gap <= GEOM_LINEAR_SLOP) return touching_start(n_xy, d, out);
    /* The float gap is good to a few ulps of the offset and the radius: with either ~1e3 that is
     * ~1e-4, over the slop. Where the gap is that close, ask in double whether the start really
     * is separated: the ray below assumes so, and from inside it finds a far side's entry (a late
     * hit with a sideways normal). */
    float err = 8.0f * FLT_EPSILON * (fabsf(r.x) + fabsf(r.y) + radius);
    if (gap <= GEOM_LINEAR_SLOP + err && rounded_polygon_contains_d(y, radius, v2_neg(r)))
        return touching_start(n_xy, d, out);
    float t;
    vec2 n_out;
    if (!ray_rounded_polygon(y, radius, v2_neg(r), d, &t, &n_out)) return false;
    if (out) {
        out->t = t;
        out->normal = v2_neg(n_out);
    }
    return true;
}

/* Circle-circle: M is the disc of radius R at r. Distances in double, as in geom_ray_circle. */
static float cc_gap(float radius, vec2 r, vec2 *n_xy) {
    double x = r.x, y = r.y;
    double dist = sqrt(x * x + y * y);
    *n_xy = dist > 0.0 ? v2((float)(x / dist), (float)(y / dist)) : v2(0.0f, 1.0f);
    return (float)(dist - (double)radius);
}

static bool cc_sweep(float radius, vec2 r, vec2 d, geom_toi *out) {
    vec2 n;
    float gap = cc_gap(radius, r, &n);
    if (gap <= GEOM_LINEAR_SLOP) return touching_start(n, d, out);
    float t;
    vec2 n_out;
    /* Ray from the origin along d against the disc at r == ray from -r against a disc at 0. */
    if (!geom_ray_circle(v2_neg(r), d, radius, &t, &n_out)) return false;
    if (out) {
        out->t = t;
        out->normal = v2_neg(n_out);
    }
    return true;
}

/* ---- Dispatch ----------------------------------------------------------------------------- */

#define PAIR(a, b) ((int)(a)*4 + (int)(b))

#if defined(__GNUC__)
#define GEOM_NOINLINE __attribute__((noinline))
#else
#define GEOM_NOINLINE
#endif

static inline void flip_contact(geom_contact *c) { c->normal = v2_neg(c->normal); }

/* The pairs other than box-box, kept out of line: their stack frame and saved registers would
 * otherwise be paid by the box-box case, which is most of the world's queries. */
GEOM_NOINLINE static bool overlap_general(const geom_shape *a, vec2 pa, const geom_shape *b,
                                          vec2 pb, geom_contact *out) {
    vec2 r = v2_sub(pb, pa);
    if (!geom_coord_ok(r)) return false;
    geom_contact c;
    bool hit, flip = false;
    vec2 n;
    switch (PAIR(a->kind, b->kind)) {
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_BOX):
        return geom_box_box_overlap(a->u.half_extents, pa, b->u.half_extents, pb, out);
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON):
        hit = bp_overlap(a->u.half_extents, &b->u.polygon, r, &c);
        break;
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_BOX):
        hit = bp_overlap(b->u.half_extents, &a->u.polygon, v2_neg(r), &c);
        flip = true;
        break;
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_POLYGON):
        hit = pp_overlap(&a->u.polygon, &b->u.polygon, r, &c);
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_CIRCLE):
        hit = gap_to_contact(cc_gap(a->u.radius + b->u.radius, r, &n), n, &c);
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_BOX):
        hit = gap_to_contact(circle_box_gap(b->u.half_extents, a->u.radius, r, &n), n, &c);
        break;
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_CIRCLE):
        hit = gap_to_contact(circle_box_gap(a->u.half_extents, b->u.radius, v2_neg(r), &n), n, &c);
        flip = true;
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_POLYGON):
        hit =
            gap_to_contact(circle_poly_gap(polygon_view(&b->u.polygon), a->u.radius, r, &n), n, &c);
        break;
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_CIRCLE):
        hit = gap_to_contact(
            circle_poly_gap(polygon_view(&a->u.polygon), b->u.radius, v2_neg(r), &n), n, &c);
        flip = true;
        break;
    default:
        return false;
    }
    if (!hit) return false;
    if (flip) flip_contact(&c);
    if (out) *out = c;
    return true;
}

GEOM_NOINLINE static bool sweep_general(const geom_shape *a, vec2 pa, vec2 da, const geom_shape *b,
                                        vec2 pb, vec2 db, geom_toi *out) {
    vec2 r = v2_sub(pb, pa), d = v2_sub(da, db);
    if (!geom_coord_ok(r) || !geom_coord_ok(d)) return false;
    geom_toi c;
    bool hit, flip = false;
    vec2 n;
    float gap;
    box_poly bp;
    switch (PAIR(a->kind, b->kind)) {
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_BOX):
        return geom_box_box_sweep(a->u.half_extents, pa, da, b->u.half_extents, pb, db, out);
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON):
        hit = bp_sweep(a->u.half_extents, &b->u.polygon, r, d, &c);
        break;
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_BOX):
        hit = bp_sweep(b->u.half_extents, &a->u.polygon, v2_neg(r), v2_neg(d), &c);
        flip = true;
        break;
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_POLYGON):
        hit = pp_sweep(&a->u.polygon, &b->u.polygon, r, d, &c);
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_CIRCLE):
        hit = cc_sweep(a->u.radius + b->u.radius, r, d, &c);
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_BOX):
        gap = circle_box_gap(b->u.half_extents, a->u.radius, r, &n);
        hit = circle_poly_sweep(box_as_poly(b->u.half_extents, &bp), a->u.radius, gap, n, r, d, &c);
        break;
    case PAIR(GEOM_SHAPE_BOX, GEOM_SHAPE_CIRCLE):
        gap = circle_box_gap(a->u.half_extents, b->u.radius, v2_neg(r), &n);
        hit = circle_poly_sweep(box_as_poly(a->u.half_extents, &bp), b->u.radius, gap, n, v2_neg(r),
                                v2_neg(d), &c);
        flip = true;
        break;
    case PAIR(GEOM_SHAPE_CIRCLE, GEOM_SHAPE_POLYGON): {
        poly_view pv = polygon_view(&b->u.polygon);
        gap = circle_poly_gap(pv, a->u.radius, r, &n);
        hit = circle_poly_sweep(pv, a->u.radius, gap, n, r, d, &c);
        break;
    }
    case PAIR(GEOM_SHAPE_POLYGON, GEOM_SHAPE_CIRCLE): {
        poly_view pv = polygon_view(&a->u.polygon);
        gap = circle_poly_gap(pv, b->u.radius, v2_neg(r), &n);
        hit = circle_poly_sweep(pv, b->u.radius, gap, n, v2_neg(r), v2_neg(d), &c);
        flip = true;
        break;
    }
    default:
        return false;
    }
    if (!hit) return false;
    if (flip) c.normal = v2_neg(c.normal);
    if (out) *out = c;
    return true;
}

bool geom_overlap(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, geom_contact *out) {
    if (!a || !b) return false;
    if (a->kind == GEOM_SHAPE_BOX && b->kind == GEOM_SHAPE_BOX)
        return geom_box_box_overlap(a->u.half_extents, pa, b->u.half_extents, pb, out);
    return overlap_general(a, pa, b, pb, out);
}

bool geom_sweep(const geom_shape *a, vec2 pa, vec2 da, const geom_shape *b, vec2 pb, vec2 db,
                geom_toi *out) {
    if (!a || !b) return false;
    if (a->kind == GEOM_SHAPE_BOX && b->kind == GEOM_SHAPE_BOX)
        return geom_box_box_sweep(a->u.half_extents, pa, da, b->u.half_extents, pb, db, out);
    return sweep_general(a, pa, da, b, pb, db, out);
}

/* ---- Distance ------------------------------------------------------------------------------ */

/* Distance from the point p (relative to the shape's position) to a box, polygon or circle
 * (radius r >= 0 grows it), with the outward normal of the closest feature. */
static float point_shape_distance(const geom_shape *s, vec2 p, vec2 *n_out) {
    if (s->kind == GEOM_SHAPE_CIRCLE) {
        vec2 n;
        float d = cc_gap(s->u.radius, p, &n);
        *n_out = n;
        return d;
    }
    if (s->kind == GEOM_SHAPE_BOX) return point_box_distance(s->u.half_extents, p, n_out);
    return point_polygon_distance(polygon_view(&s->u.polygon), p, n_out);
}

float geom_distance(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, vec2 *normal) {
    vec2 n = v2(0.0f, 1.0f);
    float dist;
    geom_contact c;
    if (!a || !b) {
        dist = INFINITY;
    } else if (geom_overlap(a, pa, b, pb, &c)) {
        dist = -c.depth;
        n = c.normal;
    } else if (a->kind == GEOM_SHAPE_CIRCLE || b->kind == GEOM_SHAPE_CIRCLE) {
        /* a circle's centre against the other shape, less the radius */
        bool a_circle = a->kind == GEOM_SHAPE_CIRCLE;
        const geom_shape *circle = a_circle ? a : b, *other = a_circle ? b : a;
        vec2 centre = a_circle ? pa : pb, at = a_circle ? pb : pa;
        vec2 no;
        dist = point_shape_distance(other, v2_sub(centre, at), &no) - circle->u.radius;
        n = a_circle ? v2_neg(no) : no; /* no points out of the other shape, at the circle */
    } else {
        /* apart convex polygons: the closest pair includes a vertex of one of them */
        box_poly sa, sb;
        poly_view va = shape_poly(a, &sa), vb = shape_poly(b, &sb);
        dist = INFINITY;
        for (int i = 0; i < va.count; i++) {
            vec2 no;
            float d = point_polygon_distance(vb, v2_sub(v2_add(pa, va.v[i]), pb), &no);
            if (d < dist) dist = d, n = v2_neg(no);
        }
        for (int i = 0; i < vb.count; i++) {
            vec2 no;
            float d = point_polygon_distance(va, v2_sub(v2_add(pb, vb.v[i]), pa), &no);
            if (d < dist) dist = d, n = no;
        }
        if (dist < 0.0f) dist = 0.0f; /* touching within rounding: not overlapping */
    }
    if (normal) *normal = n;
    return dist;
}

bool geom_sweep_polygon_box(const geom_polygon *a, vec2 pa, vec2 da, vec2 hb, vec2 pb,
                            geom_toi *out) {
    /* sweep_general's polygon-box case with db = 0 (da - 0 is da), step for step */
    vec2 r = v2_sub(pb, pa), d = v2_sub(da, v2(0.0f, 0.0f));
    if (!geom_coord_ok(r) || !geom_coord_ok(d)) return false;
    geom_toi c;
    if (!bp_sweep(hb, a, v2_neg(r), v2_neg(d), &c)) return false;
    c.normal = v2_neg(c.normal);
    if (out) *out = c;
    return true;
}

void geom_poly_sweep_prepare(geom_poly_sweep *s, const geom_polygon *a) {
    COLLIDE_ASSERT(a->count >= 3 && a->count <= GEOM_MAX_POLYGON_VERTICES); /* s's arrays' size */
    poly_extent e = polygon_extent(a);
    s->poly = a;
    s->min_x = e.min_x;
    s->max_x = e.max_x;
    s->min_y = e.min_y;
    s->max_y = e.max_y;
    for (int j = 0; j < a->count; j++) {
        vec2 n = a->normals[j];
        s->nv[j] = v2_dot(n, a->vertices[j]);
        s->an[j] = v2(fabsf(n.x), fabsf(n.y));
    }
}

void geom_poly_sweep_motion(geom_poly_sweep *s, vec2 da) {
    /* geom_sweep_polygon_box's d (da - db, db = 0), then bp_sweep's (negated) */
    vec2 dd = v2_sub(da, v2(0.0f, 0.0f)), d = v2_neg(dd);
    s->d = d;
    s->d_ok = geom_coord_ok(dd);
    const geom_polygon *a = s->poly;
    for (int j = 0; j < a->count; j++)
        s->nd[j] = -v2_dot(a->normals[j], d);
}

/* bp_sweep(hb, poly, r, d) step for step, its per-edge terms read from s; count is the
 * polygon's, a constant for a turned box (the loop unrolled) */
static inline bool poly_sweep_box_n(const geom_poly_sweep *s, vec2 r, vec2 h, int count,
                                    geom_toi *out) {
    vec2 d = s->d;
    const geom_polygon *y = s->poly;
    sweep_acc a;
    sweep_acc_init(&a);
    sweep_axis_br(&a, 0, r.y + s->min_y - h.y, d.y);
    sweep_axis_br(&a, 1, -r.y - s->max_y - h.y, -d.y);
    sweep_axis_br(&a, 2, r.x + s->min_x - h.x, d.x);
    sweep_axis_br(&a, 3, -r.x - s->max_x - h.x, -d.x);
    for (int j = 0; j < count && !a.miss; j++) {
        vec2 n = y->normals[j];
        sweep_axis_br(&a, 4 + j, -v2_dot(n, r) - s->nv[j] - (s->an[j].x * h.x + s->an[j].y * h.y),
                      s->nd[j]);
    }
    float t;
    bool needs_closing;
    int k = sweep_decide(&a, &t, &needs_closing);
    if (k < 0) return false;
    return sweep_report(t, k < 4 ? box_axes[k] : v2_neg(y->normals[k - 4]), d, needs_closing, out);
}

bool geom_poly_sweep_box(const geom_poly_sweep *s, vec2 pa, vec2 hb, vec2 pb, geom_toi *out) {
    vec2 rr = v2_sub(pb, pa);
    if (!geom_coord_ok(rr) || !s->d_ok) return false;
    geom_toi c;
    bool hit = s->poly->count == 4 ? poly_sweep_box_n(s, v2_neg(rr), hb, 4, &c)
                                   : poly_sweep_box_n(s, v2_neg(rr), hb, s->poly->count, &c);
    if (!hit) return false;
    c.normal = v2_neg(c.normal);
    if (out) *out = c;
    return true;
}

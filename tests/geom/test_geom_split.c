/* geom_split_polygon against brute-force oracles on thousands of random simple polygons (fixed
 * seeds: a failure prints the family and case, and rerunning reproduces it). Families: star
 * polygons (random radii round a centre), orthogonal level outlines (a floor and a ceiling of
 * random heights per column: stairs, combs, many reflex vertices), convex ones. Each case comes
 * in a random winding, with exactly collinear and repeated vertices inserted. Coordinates lie on
 * a dyadic grid so that an inserted midpoint is exactly on its edge, as a map's integer pixel
 * coordinates are. */
#include "geom_split.h"
#include "harness.h"

#include <float.h>

#define MAX_POLY 1200
#define MAX_PIECES MAX_POLY
#define POINTS_PER_POLYGON 300

typedef struct dpt {
    double x, y;
} dpt;

static dpt to_d(vec2 a) { return (dpt){a.x, a.y}; }
static double orient(dpt a, dpt b, dpt c) {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

static float snap(double x) { return (float)(floor(x * 256.0 + 0.5) / 256.0); }
static int rand_int(collide_rng *rng, int lo, int hi) { /* [lo, hi] */
    return lo + (int)(collide_rng_next(rng) % (uint32_t)(hi - lo + 1));
}

/* ---- Oracles (brute force, double) --------------------------------------------------------- */

static double signed_area(const vec2 *p, int n) {
    double a = 0;
    for (int i = 0; i < n; i++) {
        dpt u = to_d(p[i]), v = to_d(p[(i + 1) % n]);
        a += u.x * v.y - v.x * u.y;
    }
    return a / 2;
}

/* Even-odd crossing count of the ray from q towards +x. */
static bool oracle_inside(const vec2 *p, int n, dpt q) {
    bool in = false;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        dpt a = to_d(p[i]), b = to_d(p[j]);
        if ((a.y > q.y) != (b.y > q.y)) {
            double x = a.x + (q.y - a.y) * (b.x - a.x) / (b.y - a.y);
            if (q.x < x) in = !in;
        }
    }
    return in;
}

static double seg_dist(dpt a, dpt b, dpt q) {
    double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((q.x - a.x) * dx + (q.y - a.y) * dy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double ex = a.x + t * dx - q.x, ey = a.y + t * dy - q.y;
    return sqrt(ex * ex + ey * ey);
}

static double boundary_dist(const vec2 *p, int n, dpt q) {
    double best = DBL_MAX;
    for (int i = 0; i < n; i++) {
        double d = seg_dist(to_d(p[i]), to_d(p[(i + 1) % n]), q);
        if (d < best) best = d;
    }
    return best;
}

/* Inside a convex CCW piece, with a margin: > margin from every edge's line (margin 0: the
 * boundary counts). */
static bool in_piece(const geom_piece *pc, dpt q, double margin) {
    for (int k = 0; k < pc->count; k++) {
        dpt a = to_d(pc->v[k]), b = to_d(pc->v[(k + 1) % pc->count]);
        double len = sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
        if (orient(a, b, q) < margin * len) return false;
    }
    return true;
}

static bool segments_cross(dpt a, dpt b, dpt c, dpt d) {
    double d1 = orient(c, d, a), d2 = orient(c, d, b), d3 = orient(a, b, c), d4 = orient(a, b, d);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
        return true;
    /* touching: an end on the other segment */
    dpt e[4] = {a, b, c, d};
    double o[4] = {d1, d2, d3, d4};
    for (int k = 0; k < 4; k++) {
        dpt s0 = k < 2 ? c : a, s1 = k < 2 ? d : b;
        if (o[k] == 0 && fmin(s0.x, s1.x) <= e[k].x && e[k].x <= fmax(s0.x, s1.x) &&
            fmin(s0.y, s1.y) <= e[k].y && e[k].y <= fmax(s0.y, s1.y))
            return true;
    }
    return false;
}

/* Simple: no two non-adjacent edges meet (generators whose snapping broke this are redrawn). */
static bool oracle_simple(const vec2 *p, int n) {
    for (int i = 0; i < n; i++)
        for (int j = i + 2; j < n; j++) {
            if (i == 0 && j == n - 1) continue;
            if (segments_cross(to_d(p[i]), to_d(p[(i + 1) % n]), to_d(p[j]), to_d(p[(j + 1) % n])))
                return false;
        }
    return true;
}

/* ---- Generators ---------------------------------------------------------------------------- */

static int gen_star(collide_rng *rng, vec2 *p, bool convex) {
    int n = convex ? rand_int(rng, 3, 40) : rand_int(rng, 3, 64);
    double cx = rand_int(rng, -500, 500), cy = rand_int(rng, -500, 500);
    /* Convex ones wide enough that snapping to 1/256 cannot dent them. */
    double r0 = convex ? collide_rng_range(rng, 8, 20) : collide_rng_range(rng, 2, 20);
    double ry = convex ? r0 * collide_rng_range(rng, 0.5f, 1) : 0;
    double phase = collide_rng_unit_d(rng) * 6.283185307179586;
    for (int i = 0; i < n; i++) {
        double ang = phase + (i + 0.6 * collide_rng_unit_d(rng)) * 6.283185307179586 / n;
        double rx = convex ? r0 : r0 * (0.15 + 0.85 * collide_rng_unit_d(rng));
        double rr = convex ? ry : rx;
        p[i] = v2(snap(cx + rx * cos(ang)), snap(cy + rr * sin(ang)));
    }
    return n;
}

/* A level outline over `cols` columns: column i is open from floor[i] to ceil[i] (whole cells),
 * neighbouring columns overlapping by at least one cell. Walked CCW: along the floor left to
 * right, then along the ceiling right to left. Equal neighbouring heights give collinear
 * vertices, as an outline traced cell by cell does. */
static int gen_outline(collide_rng *rng, vec2 *p) {
    int cols = rand_int(rng, 1, 60), fl[64], ce[64];
    int span = rand_int(rng, 2, 12);
    for (int i = 0; i < cols; i++) {
        int lo = i == 0 ? 0 : fl[i - 1] - span + 1, hi;
        fl[i] = rand_int(rng, lo < -span ? -span : lo, i == 0 ? 0 : ce[i - 1] - 1);
        hi = i == 0 ? fl[i] + span : ce[i - 1] + span;
        int clo = i == 0 ? fl[i] + 1 : (fl[i] + 1 > fl[i - 1] + 1 ? fl[i] + 1 : fl[i - 1] + 1);
        ce[i] = rand_int(rng, clo, hi > clo ? hi : clo);
    }
    /* Heights stay within -span .. 60 * span cells: at 8 units a cell, inside GEOM_MAX_SIZE. */
    static const double cells[] = {0.25, 0.5, 1, 4, 8};
    double s = cells[rand_int(rng, 0, 4)];
    double ox = rand_int(rng, -1000, 1000), oy = rand_int(rng, -1000, 1000);
    int n = 0;
    for (int i = 0; i < cols; i++) {
        p[n++] = v2((float)(ox + s * i), (float)(oy + s * fl[i]));
        p[n++] = v2((float)(ox + s * (i + 1)), (float)(oy + s * fl[i]));
    }
    for (int i = cols - 1; i >= 0; i--) {
        p[n++] = v2((float)(ox + s * (i + 1)), (float)(oy + s * ce[i]));
        p[n++] = v2((float)(ox + s * i), (float)(oy + s * ce[i]));
    }
    /* Consecutive equal points (a column as high as its neighbour): drop them here, the
     * duplicates come in below on purpose. */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || p[m - 1].x != p[i].x || p[m - 1].y != p[i].y) p[m++] = p[i];
    while (m > 1 && p[m - 1].x == p[0].x && p[m - 1].y == p[0].y)
        m--;
    /* Half the outlines stand on end (x and y swapped, which also flips the winding). */
    if (collide_rng_next(rng) & 1)
        for (int i = 0; i < m; i++)
            p[i] = v2(p[i].y, p[i].x);
    return m;
}

/* Reverses half the cases, inserts a few exact midpoints and exact repeats. */
static int perturb(collide_rng *rng, vec2 *p, int n) {
    if (collide_rng_next(rng) & 1)
        for (int i = 0, j = n - 1; i < j; i++, j--) {
            vec2 t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
    int extra = rand_int(rng, 0, 3);
    for (int e = 0; e < extra && n < MAX_POLY - 1; e++) {
        int at = rand_int(rng, 0, n - 1);
        vec2 a = p[at], b = p[(at + 1) % n];
        vec2 ins = (collide_rng_next(rng) & 1) ? v2((a.x + b.x) / 2, (a.y + b.y) / 2) : a;
        for (int k = n; k > at + 1; k--)
            p[k] = p[k - 1];
        p[at + 1] = ins;
        n++;
    }
    return n;
}

/* ---- The checks ---------------------------------------------------------------------------- */

static geom_piece pieces[MAX_PIECES];
static vec2 poly[MAX_POLY];

/* Runs every oracle on one polygon; returns false (after reporting) on the first mismatch. */
static bool check_polygon(collide_rng *rng, const vec2 *p, int n, const char *family, int ci,
                          bool expect_convex) {
    const char *reason = NULL;
    int count = geom_split_polygon(p, n, pieces, MAX_PIECES, &reason);
    if (count < 1) {
        fprintf(stderr, "%s case %d (n %d): refused: %s\n", family, ci, n, reason ? reason : "?");
        return false;
    }
    /* (e) no more pieces than triangles; a convex polygon geom can hold is one piece */
    if (count > n - 2) {
        fprintf(stderr, "%s case %d: %d pieces for %d vertices\n", family, ci, count, n);
        return false;
    }
    /* convex: every corner (repeats and exactly straight vertices aside) turns the same way */
    static vec2 q[MAX_POLY];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || q[m - 1].x != p[i].x || q[m - 1].y != p[i].y) q[m++] = p[i];
    while (m > 1 && q[m - 1].x == q[0].x && q[m - 1].y == q[0].y)
        m--;
    int corners = 0, left = 0, right = 0;
    for (int i = 0; i < m; i++) {
        double o = orient(to_d(q[(i + m - 1) % m]), to_d(q[i]), to_d(q[(i + 1) % m]));
        if (o != 0) corners++, left += o > 0, right += o < 0;
    }
    bool convex = left == 0 || right == 0;
    if (convex && corners <= GEOM_MAX_POLYGON_VERTICES && count != 1) {
        fprintf(stderr, "%s case %d: convex with %d corners gave %d pieces\n", family, ci, corners,
                count);
        return false;
    }
    if (expect_convex && !convex) {
        fprintf(stderr, "%s case %d: the convex generator made a dent\n", family, ci);
        return false;
    }
    /* (a) geom accepts every piece (so each is convex, CCW, within the vertex cap) */
    double area = 0;
    for (int k = 0; k < count; k++) {
        geom_shape sh;
        geom_shape_error err = geom_make_polygon(pieces[k].v, pieces[k].count, &sh);
        if (err) {
            fprintf(stderr, "%s case %d: piece %d refused: %s\n", family, ci, k,
                    geom_shape_error_str(err));
            return false;
        }
        area += signed_area(pieces[k].v, pieces[k].count);
    }
    /* (b) the pieces' areas add up to the polygon's */
    double want = fabs(signed_area(p, n));
    if (!(fabs(area - want) <= 1e-4 * want)) {
        fprintf(stderr, "%s case %d: pieces' area %.9g, polygon's %.9g\n", family, ci, area, want);
        return false;
    }
    /* (c) inside the outline (even-odd) = inside some piece, (d) inside at most one piece by a
     * margin; points near the outline are left out: there the answer is a rounding's. */
    double minx = DBL_MAX, miny = DBL_MAX, maxx = -DBL_MAX, maxy = -DBL_MAX;
    for (int i = 0; i < n; i++) {
        minx = fmin(minx, p[i].x), maxx = fmax(maxx, p[i].x);
        miny = fmin(miny, p[i].y), maxy = fmax(maxy, p[i].y);
    }
    double scale = fmax(maxx - minx, maxy - miny), eps = 1e-5 * scale + 1e-4;
    for (int t = 0; t < POINTS_PER_POLYGON; t++) {
        dpt q = {minx + (maxx - minx) * collide_rng_unit_d(rng),
                 miny + (maxy - miny) * collide_rng_unit_d(rng)};
        if (boundary_dist(p, n, q) < eps) continue;
        bool want_in = oracle_inside(p, n, q);
        int in = 0, deep = 0;
        for (int k = 0; k < count; k++) {
            in += in_piece(&pieces[k], q, 0);
            deep += in_piece(&pieces[k], q, eps);
        }
        if (want_in != (in > 0) || deep > 1) {
            fprintf(stderr,
                    "%s case %d: point (%.9g, %.9g): outline says %s, in %d pieces (%d "
                    "deep)\n",
                    family, ci, q.x, q.y, want_in ? "in" : "out", in, deep);
            return false;
        }
    }
    /* (d) each piece's centroid lies in no other piece */
    for (int k = 0; k < count; k++) {
        dpt c = {0, 0};
        for (int i = 0; i < pieces[k].count; i++)
            c.x += pieces[k].v[i].x, c.y += pieces[k].v[i].y;
        c.x /= pieces[k].count, c.y /= pieces[k].count;
        for (int j = 0; j < count; j++)
            if (j != k && in_piece(&pieces[j], c, 0)) {
                fprintf(stderr, "%s case %d: piece %d's centroid inside piece %d\n", family, ci, k,
                        j);
                return false;
            }
    }
    /* one piece fewer than needed: refused */
    reason = NULL;
    if (geom_split_polygon(p, n, pieces, count - 1, &reason) != -1 || !reason) {
        fprintf(stderr, "%s case %d: max_out %d accepted\n", family, ci, count - 1);
        return false;
    }
    return true;
}

static void run_family(unsigned seed, int cases, int family) {
    static const char *names[3] = {"star", "outline", "convex"};
    collide_rng rng = {seed};
    int done = 0, pieces_total = 0;
    for (int ci = 0; done < cases; ci++) {
        int n = family == 1 ? gen_outline(&rng, poly) : gen_star(&rng, poly, family == 2);
        if (n < 3 || !oracle_simple(poly, n)) continue; /* snapping broke it: draw again */
        n = perturb(&rng, poly, n);
        CHECK(check_polygon(&rng, poly, n, names[family], ci, family == 2));
        pieces_total += geom_split_polygon(poly, n, pieces, MAX_PIECES, NULL);
        done++;
    }
    printf("  %s: %d polygons, %d pieces\n", names[family], done, pieces_total);
}

static void test_split_star(void) { run_family(0x5eed0001u, 3000, 0); }
static void test_split_outline(void) { run_family(0x5eed0002u, 3000, 1); }
static void test_split_convex(void) { run_family(0x5eed0003u, 3000, 2); }

/* A long comb (a level's ceiling of spikes): hundreds of reflex vertices in one outline. */
static void test_split_long_comb(void) {
    collide_rng rng = {0x5eed0004u};
    for (int rep = 0; rep < 20; rep++) {
        int teeth = rand_int(&rng, 100, 290), n = 0;
        poly[n++] = v2(0, 0);
        poly[n++] = v2((float)(2 * teeth), 0);
        for (int i = teeth - 1; i >= 0; i--) {
            float h = (float)rand_int(&rng, 2, 40);
            poly[n++] = v2((float)(2 * i + 2), h);
            poly[n++] = v2((float)(2 * i + 1), 1);
        }
        CHECK(oracle_simple(poly, n));
        CHECK(check_polygon(&rng, poly, n, "comb", rep, false));
    }
}

static void test_split_refusals(void) {
    const char *reason;
    geom_piece out[8];
    vec2 two[2] = {{0, 0}, {1, 0}};
    reason = NULL;
    CHECK(geom_split_polygon(two, 2, out, 8, &reason) == -1 && reason);
    vec2 dup[4] = {{0, 0}, {1, 0}, {1, 0}, {0, 0}};
    reason = NULL;
    CHECK(geom_split_polygon(dup, 4, out, 8, &reason) == -1 && reason);
    vec2 line[4] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};
    reason = NULL;
    CHECK(geom_split_polygon(line, 4, out, 8, &reason) == -1 && reason);
    vec2 bowtie[4] = {{0, 0}, {2, 2}, {2, 0}, {0, 2}};
    reason = NULL;
    CHECK(geom_split_polygon(bowtie, 4, out, 8, &reason) == -1 && reason);
    CHECK(strstr(reason, "intersect"));
    /* touching itself at a vertex is not simple either */
    vec2 pinch[6] = {{0, 0}, {4, 0}, {2, 2}, {4, 4}, {0, 4}, {2, 2}};
    reason = NULL;
    CHECK(geom_split_polygon(pinch, 6, out, 8, &reason) == -1 && reason);
    vec2 square[4] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    float bad[3] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++) {
        vec2 q[4];
        memcpy(q, square, sizeof q);
        q[2].y = bad[b];
        reason = NULL;
        CHECK(geom_split_polygon(q, 4, out, 8, &reason) == -1 && reason);
    }
    reason = NULL;
    CHECK(geom_split_polygon(square, 4, out, 0, &reason) == -1 && reason);
    CHECK(geom_split_polygon(square, 4, out, 1, NULL) == 1);
    /* an L needs two pieces: max_out 1 is too small */
    vec2 ell[6] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
    reason = NULL;
    CHECK(geom_split_polygon(ell, 6, out, 1, &reason) == -1 && reason);
    CHECK(geom_split_polygon(ell, 6, out, 8, NULL) == 2);
    /* spikes (a zero-width antenna, in or out) are straight vertices: dropped, a square left */
    vec2 antenna[7] = {{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 2}, {2, 2}, {0, 2}};
    CHECK(geom_split_polygon(antenna, 7, out, 8, NULL) == 1);
    vec2 spike[7] = {{0, 0}, {4, 0}, {4, 4}, {2, 4}, {2, 7}, {2, 4}, {0, 4}};
    CHECK(geom_split_polygon(spike, 7, out, 8, NULL) == 1);
    CHECK(out[0].count == 4);
    /* the vertex cap: a convex 4097-gon is refused, a 4096-gon split */
    static vec2 big[4097];
    static geom_piece big_out[4096];
    for (int i = 0; i < 4097; i++) {
        double a = 6.283185307179586 * i / 4097;
        big[i] = v2((float)(5000 * cos(a)), (float)(5000 * sin(a)));
    }
    reason = NULL;
    CHECK(geom_split_polygon(big, 4097, big_out, 4096, &reason) == -1 && reason);
    CHECK(strstr(reason, "4096"));
    for (int i = 0; i < 4096; i++) {
        double a = 6.283185307179586 * i / 4096;
        big[i] = v2((float)(5000 * cos(a)), (float)(5000 * sin(a)));
    }
    int got = geom_split_polygon(big, 4096, big_out, 4096, &reason);
    CHECK_MSG(got > 0, "%s", reason);
    CHECK(got <= 4094);
}

TEST_MAIN(TEST(test_split_refusals), TEST(test_split_convex), TEST(test_split_star),
          TEST(test_split_outline), TEST(test_split_long_comb))

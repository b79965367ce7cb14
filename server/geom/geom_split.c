/* geom_split: ear clipping, then Hertel-Mehlhorn merging (see geom_split.h).
 *
 * Everything geometric here runs in double on the float input: a float difference is exact in
 * double for coordinates of similar magnitude, so the orientation tests that decide "is this an
 * ear" and "do these edges cross" do not flip on rounding for any polygon a map can hold. The
 * pieces keep the input's float vertices unchanged (no vertex is ever computed), so neighbouring
 * pieces share their edges bit for bit and leave no seam. */
#include "geom_split.h"

#include <math.h>
#include <stdlib.h>

/* Inputs above this are refused: the clipping is O(n^2) in time, and a level outline with
 * thousands of vertices is a mistake in the map, not a shape anyone meant (a Tiled polygon is
 * drawn by hand). At this cap the work stays a few tens of milliseconds, once, at load time. */
#define SPLIT_MAX_VERTICES 4096

typedef struct dpt {
    double x, y;
} dpt;

/* Twice the signed area of (a, b, c): > 0 when c lies left of a -> b. */
static double orient(dpt a, dpt b, dpt c) {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

static double dist_sq(dpt a, dpt b) {
    return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
}

/* geom's own collinearity rule (sin of the turn at b within GEOM_COLLINEAR_TOL), so a vertex
 * dropped here is exactly one geom_make_polygon would have refused. Catches spikes (a turn of
 * 180 degrees) as well as straight runs. */
static bool collinear(dpt a, dpt b, dpt c) {
    double cr = orient(a, b, c);
    return fabs(cr) <= (double)GEOM_COLLINEAR_TOL * sqrt(dist_sq(a, b) * dist_sq(b, c));
}

/* ---- Cleaning ------------------------------------------------------------------------------ */

/* Drops vertices within GEOM_LINEAR_SLOP of their predecessor (the ring closes, so the last is
 * compared with the first); returns the new count. */
static int drop_repeated(dpt *p, int n) {
    const double slop_sq = (double)GEOM_LINEAR_SLOP * GEOM_LINEAR_SLOP;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || dist_sq(p[m - 1], p[i]) > slop_sq) p[m++] = p[i];
    while (m > 1 && dist_sq(p[m - 1], p[0]) <= slop_sq)
        m--;
    return m;
}

/* Drops collinear vertices (straight runs and spikes) until none is left; returns the new
 * count, below 3 when the whole ring lies on a line. Repeated passes: dropping a vertex can leave
 * its neighbour straight. */
static int drop_collinear(dpt *p, int n) {
    bool changed = true;
    while (changed && n >= 3) {
        changed = false;
        int m = 0;
        for (int i = 0; i < n; i++) {
            /* p[0] may already have been overwritten by the first kept vertex: its successor
             * in the ring as it now stands, which is the neighbour to compare with. */
            dpt prev = m > 0 ? p[m - 1] : p[n - 1], next = p[(i + 1) % n];
            if (collinear(prev, p[i], next)) {
                changed = true;
                continue;
            }
            p[m++] = p[i];
        }
        n = m;
    }
    return n;
}

/* ---- Self-intersection --------------------------------------------------------------------- */

static int sgn(double x) { return (x > 0) - (x < 0); }

static bool on_segment_box(dpt a, dpt b, dpt c) {
    return fmin(a.x, b.x) <= c.x && c.x <= fmax(a.x, b.x) && fmin(a.y, b.y) <= c.y &&
           c.y <= fmax(a.y, b.y);
}

/* Closed segments a-b and c-d share a point (crossing or touching). */
static bool segments_meet(dpt a, dpt b, dpt c, dpt d) {
    int d1 = sgn(orient(c, d, a)), d2 = sgn(orient(c, d, b));
    int d3 = sgn(orient(a, b, c)), d4 = sgn(orient(a, b, d));
    if (d1 * d2 < 0 && d3 * d4 < 0) return true;
    return (d1 == 0 && on_segment_box(c, d, a)) || (d2 == 0 && on_segment_box(c, d, b)) ||
           (d3 == 0 && on_segment_box(a, b, c)) || (d4 == 0 && on_segment_box(a, b, d));
}

typedef struct edge_key {
    double min_x;
    int i;
} edge_key;

static int cmp_edge_key(const void *pa, const void *pb) {
    const edge_key *a = pa, *b = pb;
    if (a->min_x != b->min_x) return a->min_x < b->min_x ? -1 : 1;
    return a->i - b->i;
}

/* Any two non-adjacent edges meeting (a vertex touching another edge counts: ear clipping needs
 * a strictly simple ring). Edges sorted by their left end, each compared only with those that
 * start before it ends: a sweep along x, O(n^2) only for outlines whose edges all span x. */
static bool self_intersects(const dpt *p, int n, edge_key *keys) {
    for (int i = 0; i < n; i++) {
        keys[i].min_x = fmin(p[i].x, p[(i + 1) % n].x);
        keys[i].i = i;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_edge_key);
    for (int s = 0; s < n; s++) {
        int i = keys[s].i;
        dpt a = p[i], b = p[(i + 1) % n];
        double max_x = fmax(a.x, b.x);
        for (int t = s + 1; t < n && keys[t].min_x <= max_x; t++) {
            int j = keys[t].i;
            if (j == (i + 1) % n || i == (j + 1) % n) continue; /* share a vertex by design */
            dpt c = p[j], d = p[(j + 1) % n];
            if (fmax(a.y, b.y) < fmin(c.y, d.y) || fmax(c.y, d.y) < fmin(a.y, b.y)) continue;
            if (segments_meet(a, b, c, d)) return true;
        }
    }
    return false;
}

/* ---- Ear clipping -------------------------------------------------------------------------- */

/* A piece while merging: indices into the cleaned ring, CCW. */
typedef struct piece_idx {
    int count;
    int v[GEOM_MAX_POLYGON_VERTICES];
} piece_idx;

/* The O(n) working memory, one allocation per array, freed before returning. */
typedef struct split_scratch {
    dpt *p;           /* the cleaned ring, CCW */
    int *prev, *next; /* the ring still to clip */
    bool *ear;
    double *quality; /* of vertex i's ear: 2 * area / longest edge^2, 0 when not an ear */
    int *edge_diag;  /* the diagonal along ring edge i -> next[i], or -1 for an outline edge */
    int (*tri)[3];   /* triangles, CCW */
    int (*diag)[2];  /* each diagonal's two triangles, the one clipped first at [0] */
    int *parent;     /* union-find over triangles: the piece a triangle now belongs to */
    piece_idx *piece;
    edge_key *keys;
} split_scratch;

static bool point_in_triangle(dpt a, dpt b, dpt c, dpt q) {
    /* Inclusive: a vertex on the ear's boundary would make the clipped ring touch itself. */
    return orient(a, b, q) >= 0 && orient(b, c, q) >= 0 && orient(c, a, q) >= 0;
}

/* Whether vertex i of the current ring is an ear: strictly convex, and no other vertex of the
 * ring in or on its triangle. Only non-convex vertices can be the first inside, so only they are
 * tested (the classic shortcut: a convex vertex inside implies a reflex one inside). */
static void update_ear(split_scratch *s, int i) {
    int a = s->prev[i], c = s->next[i];
    dpt pa = s->p[a], pb = s->p[i], pc = s->p[c];
    double area2 = orient(pa, pb, pc);
    s->ear[i] = false;
    s->quality[i] = 0;
    if (!(area2 > 0)) return;
    for (int j = s->next[c]; j != a; j = s->next[j]) {
        dpt q = s->p[j];
        if (orient(s->p[s->prev[j]], q, s->p[s->next[j]]) > 0) continue;
        if (point_in_triangle(pa, pb, pc, q)) return;
    }
    double longest = fmax(dist_sq(pa, pb), fmax(dist_sq(pb, pc), dist_sq(pc, pa)));
    s->ear[i] = true;
    s->quality[i] = area2 / longest;
}

/* Clips the CCW ring p[0..n) into n - 2 triangles and records the n - 3 diagonals with the two
 * triangles each separates. The fattest ear goes first (largest area against its longest edge):
 * a thin ear left for later often becomes part of a fatter triangle, and the slivers that
 * clipping the first ear found would give are exactly what geom_make_polygon refuses. O(n^2).
 * false when no ear is left (only for a ring rounding has made not quite simple). */
static bool triangulate(split_scratch *s, int n) {
    for (int i = 0; i < n; i++) {
        s->prev[i] = (i + n - 1) % n;
        s->next[i] = (i + 1) % n;
        s->edge_diag[i] = -1;
    }
    for (int i = 0; i < n; i++)
        update_ear(s, i);
    int left = n, start = 0, tris = 0, diags = 0;
    while (left > 3) {
        int best = -1, i = start;
        do {
            if (s->ear[i] && (best < 0 || s->quality[i] > s->quality[best])) best = i;
            i = s->next[i];
        } while (i != start);
        if (best < 0) return false;
        int a = s->prev[best], c = s->next[best];
        s->tri[tris][0] = a;
        s->tri[tris][1] = best;
        s->tri[tris][2] = c;
        /* The ring edges this ear takes away were diagonals of earlier triangles: this triangle
         * is their other side. */
        if (s->edge_diag[a] >= 0) s->diag[s->edge_diag[a]][1] = tris;
        if (s->edge_diag[best] >= 0) s->diag[s->edge_diag[best]][1] = tris;
        s->diag[diags][0] = tris;
        s->diag[diags][1] = -1;
        s->edge_diag[a] = diags++;
        tris++;
        s->next[a] = c;
        s->prev[c] = a;
        left--;
        start = a;
        update_ear(s, a);
        update_ear(s, c);
    }
    int a = start, b = s->next[a], c = s->next[b];
    if (!(orient(s->p[a], s->p[b], s->p[c]) > 0)) return false;
    s->tri[tris][0] = a;
    s->tri[tris][1] = b;
    s->tri[tris][2] = c;
    for (int k = 0, v = a; k < 3; k++, v = s->next[v])
        if (s->edge_diag[v] >= 0) s->diag[s->edge_diag[v]][1] = tris;
    return true;
}

/* ---- Hertel-Mehlhorn ----------------------------------------------------------------------- */

static int find_root(int *parent, int t) {
    while (parent[t] != t) {
        parent[t] = parent[parent[t]];
        t = parent[t];
    }
    return t;
}

/* Position of the directed edge u -> v in the piece's cycle (index of u), or -1. */
static int find_edge(const piece_idx *pc, int u, int v) {
    for (int k = 0; k < pc->count; k++)
        if (pc->v[k] == u && pc->v[(k + 1) % pc->count] == v) return k;
    return -1;
}

/* Merges piece q into piece p across their shared diagonal if the union is convex and holds
 * within GEOM_MAX_POLYGON_VERTICES; a vertex the union leaves straight is dropped (geom refuses
 * collinear vertices, and the region is the same without it). Only the diagonal's two ends can
 * turn the wrong way: every other vertex keeps the angle it had. */
static bool try_merge(const dpt *pts, piece_idx *p, const piece_idx *q, int u, int v) {
    /* The diagonal runs v -> u in p and u -> v in q (both CCW, on opposite sides). */
    int kp = find_edge(p, v, u), kq = find_edge(q, u, v);
    if (kp < 0 || kq < 0) return false; /* an end was dropped as straight by an earlier merge */
    int cyc[2 * GEOM_MAX_POLYGON_VERTICES], m = 0;
    /* p from u round to v, then q from after v round to before u. */
    for (int k = 0; k < p->count; k++)
        cyc[m++] = p->v[(kp + 1 + k) % p->count];
    for (int k = 2; k < q->count; k++)
        cyc[m++] = q->v[(kq + k) % q->count];
    int out[2 * GEOM_MAX_POLYGON_VERTICES], kept = 0;
    for (int k = 0; k < m; k++) {
        int w = cyc[k];
        if (w != u && w != v) {
            out[kept++] = w;
            continue;
        }
        dpt a = pts[cyc[(k + m - 1) % m]], b = pts[w], c = pts[cyc[(k + 1) % m]];
        if (collinear(a, b, c)) continue;
        if (!(orient(a, b, c) > 0)) return false;
        out[kept++] = w;
    }
    if (kept > GEOM_MAX_POLYGON_VERTICES) return false;
    p->count = kept;
    for (int k = 0; k < kept; k++)
        p->v[k] = out[k];
    return true;
}

/* ---- Entry --------------------------------------------------------------------------------- */

static void free_scratch(split_scratch *s) {
    free(s->p);
    free(s->prev);
    free(s->next);
    free(s->ear);
    free(s->quality);
    free(s->edge_diag);
    free(s->tri);
    free(s->diag);
    free(s->parent);
    free(s->piece);
    free(s->keys);
}

static int fail(const char **reason, const char *why) {
    if (reason) *reason = why;
    return -1;
}

/* The outline cleaned and counter-clockwise in s->p: repeats and collinear vertices dropped, a
 * self-intersecting or zero-area one refused. Its vertex count, or -1 with *why. */
static int prepare_outline(split_scratch *s, const vec2 *pts, int n, const char **why) {
    for (int i = 0; i < n; i++)
        s->p[i] = (dpt){pts[i].x, pts[i].y};
    int m = drop_repeated(s->p, n);
    if (m < 3) return (*why = "fewer than 3 distinct vertices"), -1;
    m = drop_collinear(s->p, m);
    if (m < 3) return (*why = "zero area"), -1;
    /* Before the area: a bow-tie's signed area may well be zero, and that is not its problem. */
    if (self_intersects(s->p, m, s->keys)) return (*why = "self-intersecting edges"), -1;
    /* Twice the signed area, relative to p[0] so far-off coordinates do not cancel. */
    double area2 = 0;
    for (int i = 1; i + 1 < m; i++)
        area2 += orient(s->p[0], s->p[i], s->p[i + 1]);
    if (area2 == 0) return (*why = "zero area"), -1;
    if (area2 < 0) {
        for (int i = 0, j = m - 1; i < j; i++, j--) {
            dpt t = s->p[i];
            s->p[i] = s->p[j];
            s->p[j] = t;
        }
    }
    return m;
}

/* Hertel-Mehlhorn over the m - 2 triangles: every diagonal whose removal keeps both sides' union
 * convex goes. Each surviving piece is the root of its triangles in s->parent. */
static void merge_triangles(split_scratch *s, int m) {
    int tris = m - 2;
    for (int t = 0; t < tris; t++) {
        s->parent[t] = t;
        s->piece[t].count = 3;
        for (int k = 0; k < 3; k++)
            s->piece[t].v[k] = s->tri[t][k];
    }
    for (int d = 0; d < m - 3; d++) {
        int t0 = s->diag[d][0], t1 = s->diag[d][1];
        int pa = find_root(s->parent, t0), pb = find_root(s->parent, t1);
        /* t0 = (a, ear, c) was clipped off along a -> c: it runs c -> a in t0's piece, which
         * try_merge wants first. */
        int u = s->tri[t0][0], v = s->tri[t0][2];
        if (try_merge(s->p, &s->piece[pa], &s->piece[pb], u, v)) s->parent[pb] = pa;
    }
}

/* The surviving pieces into out, each checked by geom_make_polygon. Their count, or -1 with *why.
 */
static int emit_pieces(const split_scratch *s, int m, geom_piece *out, int max_out,
                       const char **why) {
    int pieces = 0;
    for (int t = 0; t < m - 2; t++) {
        if (s->parent[t] != t) continue;
        if (pieces == max_out) return (*why = "more than max_out pieces needed"), -1;
        geom_piece *o = &out[pieces];
        o->count = s->piece[t].count;
        for (int k = 0; k < o->count; k++) {
            dpt q = s->p[s->piece[t].v[k]];
            o->v[k] = v2((float)q.x, (float)q.y);
        }
        geom_shape_error err = geom_make_polygon(o->v, o->count, NULL);
        if (err) {
            *why = err == GEOM_ERR_SIZE_OUT_OF_RANGE
                       ? "a piece thinner than GEOM_MIN_SIZE (a sliver of the outline)"
                       : "a piece geom_make_polygon refuses (outline too close to degenerate)";
            return -1;
        }
        pieces++;
    }
    return pieces;
}

int geom_split_polygon(const vec2 *pts, int n, geom_piece *out, int max_out, const char **reason) {
    if (!pts || n < 3) return fail(reason, "fewer than 3 distinct vertices");
    if (n > SPLIT_MAX_VERTICES) return fail(reason, "more than 4096 vertices");
    if (max_out < 1 || !out) return fail(reason, "more than max_out pieces needed");
    for (int i = 0; i < n; i++) {
        if (!v2_is_finite(pts[i])) return fail(reason, "a vertex is not finite");
        if (fabsf(pts[i].x) > GEOM_MAX_SIZE || fabsf(pts[i].y) > GEOM_MAX_SIZE)
            return fail(reason, "a vertex lies beyond GEOM_MAX_SIZE");
    }
    split_scratch s = {0};
    size_t un = (size_t)n;
    s.p = malloc(un * sizeof *s.p);
    s.prev = malloc(un * sizeof *s.prev);
    s.next = malloc(un * sizeof *s.next);
    s.ear = malloc(un * sizeof *s.ear);
    s.quality = malloc(un * sizeof *s.quality);
    s.edge_diag = malloc(un * sizeof *s.edge_diag);
    s.tri = malloc(un * sizeof *s.tri);
    s.diag = malloc(un * sizeof *s.diag);
    s.parent = malloc(un * sizeof *s.parent);
    s.piece = malloc(un * sizeof *s.piece);
    s.keys = malloc(un * sizeof *s.keys);
    if (!s.p || !s.prev || !s.next || !s.ear || !s.quality || !s.edge_diag || !s.tri || !s.diag ||
        !s.parent || !s.piece || !s.keys) {
        free_scratch(&s);
        return fail(reason, "out of memory");
    }
    const char *why = NULL;
    int pieces = -1;
    int m = prepare_outline(&s, pts, n, &why);
    if (m >= 3 && !triangulate(&s, m))
        why = "no ear left to clip (outline too close to degenerate)";
    else if (m >= 3) {
        merge_triangles(&s, m);
        pieces = emit_pieces(&s, m, out, max_out, &why);
    }
    free_scratch(&s);
    if (pieces < 0) return fail(reason, why);
    return pieces;
}

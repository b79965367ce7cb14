/* world_oracle: geometry for the world tests that shares no code with geom's queries.
 *
 * The world tests judge the tick (I1-I7 of COLLISION.md). If they measured overlaps with
 * geom_overlap and crossings with geom_sweep, a bug in geom would make the world and its judge
 * agree on the same wrong answer. So everything here is written again, plainly and in double:
 *   - a body is a convex polygon (boxes become their four corners) or a circle, in world
 *     coordinates, built from the shape and position the world reports;
 *   - overlap depth by separating axes over both polygons' edge normals (the exact minimum
 *     translation for convex polygons); with a circle, by the closest point of the polygon's
 *     boundary to the centre (plus the radius when the centre is inside);
 *   - separation distance of two apart bodies exactly (closest vertex-edge pair), for rest gaps;
 *   - a chord test: the body's straight motion through a tick sampled finely, every sample
 *     checked against a static with the depth above (no time-of-impact formula to get wrong).
 * Only geom's value types (geom_shape, vec2, aabb) are used. */
#ifndef COLLIDE_WORLD_ORACLE_H
#define COLLIDE_WORLD_ORACLE_H

#include <math.h>
#include <stdbool.h>

#include "geom.h"

typedef struct wo_body {
    bool circle;                         /* a circle (cx, cy, r), else a polygon */
    double cx, cy, r;                    /* circle centre and radius */
    int n;                               /* polygon vertex count */
    double x[GEOM_MAX_POLYGON_VERTICES]; /* polygon vertices, counter-clockwise, world frame */
    double y[GEOM_MAX_POLYGON_VERTICES]; /* (a box: its four corners) */
    double minx, miny, maxx, maxy;       /* bounding box, from the vertices or the circle */
} wo_body;

static inline void wo_fit_box(wo_body *b) {
    if (b->circle) {
        b->minx = b->cx - b->r, b->maxx = b->cx + b->r;
        b->miny = b->cy - b->r, b->maxy = b->cy + b->r;
        return;
    }
    if (b->n == 0) return; /* not a shape the world hands out */
    b->minx = b->maxx = b->x[0];
    b->miny = b->maxy = b->y[0];
    for (int i = 1; i < b->n; i++) {
        b->minx = fmin(b->minx, b->x[i]), b->maxx = fmax(b->maxx, b->x[i]);
        b->miny = fmin(b->miny, b->y[i]), b->maxy = fmax(b->maxy, b->y[i]);
    }
}

/* The body of shape s placed at position (x, y) (the world's convention: centre for boxes and
 * circles, origin of the vertices for polygons). */
static inline wo_body wo_make_at(const geom_shape *s, double x, double y) {
    wo_body b = {0};
    b.circle = s->kind == GEOM_SHAPE_CIRCLE;
    b.cx = x, b.cy = y, b.r = 0.0, b.n = 0;
    if (b.circle) {
        b.r = s->u.radius;
    } else if (s->kind == GEOM_SHAPE_BOX) {
        double hx = s->u.half_extents.x, hy = s->u.half_extents.y;
        const double sx[4] = {-1, 1, 1, -1}, sy[4] = {-1, -1, 1, 1};
        b.n = 4;
        for (int i = 0; i < 4; i++)
            b.x[i] = x + sx[i] * hx, b.y[i] = y + sy[i] * hy;
    } else {
        b.n = s->u.polygon.count;
        for (int i = 0; i < b.n; i++)
            b.x[i] = x + s->u.polygon.vertices[i].x, b.y[i] = y + s->u.polygon.vertices[i].y;
    }
    wo_fit_box(&b);
    return b;
}
static inline wo_body wo_make(const geom_shape *s, vec2 p) { return wo_make_at(s, p.x, p.y); }

/* The body of body-local shape s turned by angle (radians, counter-clockwise) about its origin
 * and placed at (x, y): world vertex = rotate(angle) * local + position, turned here in double
 * (never by the world's own turned copy). At angle 0 it is wo_make_at's body exactly. */
static inline wo_body wo_make_turned(const geom_shape *s, double x, double y, double angle) {
    wo_body b = wo_make_at(s, 0.0, 0.0);
    double c = cos(angle), sn = sin(angle);
    if (b.circle) {
        b.cx = x, b.cy = y;
    } else {
        for (int i = 0; i < b.n; i++) {
            double vx = b.x[i], vy = b.y[i];
            b.x[i] = x + c * vx - sn * vy;
            b.y[i] = y + sn * vx + c * vy;
        }
    }
    wo_fit_box(&b);
    return b;
}

/* Distance from (px, py) to the segment a-b. */
static inline double wo_point_segment(double px, double py, double ax, double ay, double bx,
                                      double by) {
    double ex = bx - ax, ey = by - ay, len_sq = ex * ex + ey * ey;
    double t = len_sq > 0.0 ? ((px - ax) * ex + (py - ay) * ey) / len_sq : 0.0;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    double dx = px - (ax + t * ex), dy = py - (ay + t * ey);
    return sqrt(dx * dx + dy * dy);
}

/* Distance from a point to the polygon's boundary, and whether the point is strictly inside. */
static inline double wo_point_boundary(const wo_body *p, double px, double py, bool *inside) {
    double best = INFINITY;
    bool in = true;
    for (int i = 0; i < p->n; i++) {
        int j = (i + 1) % p->n;
        double ex = p->x[j] - p->x[i], ey = p->y[j] - p->y[i];
        /* counter-clockwise: the interior is left of every edge */
        if (ex * (py - p->y[i]) - ey * (px - p->x[i]) <= 0.0) in = false;
        best = fmin(best, wo_point_segment(px, py, p->x[i], p->y[i], p->x[j], p->y[j]));
    }
    *inside = in;
    return best;
}

/* Overlap of two polygons along the unit axis (ax, ay): positive when their projections overlap.
 */
static inline double wo_axis_overlap(const wo_body *a, const wo_body *b, double ax, double ay) {
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (int i = 0; i < a->n; i++) {
        double d = a->x[i] * ax + a->y[i] * ay;
        amin = fmin(amin, d), amax = fmax(amax, d);
    }
    for (int i = 0; i < b->n; i++) {
        double d = b->x[i] * ax + b->y[i] * ay;
        bmin = fmin(bmin, d), bmax = fmax(bmax, d);
    }
    return fmin(amax - bmin, bmax - amin);
}

/* Penetration depth of two bodies: the length of the minimum translation that separates them,
 * 0 when they are apart or only touch. */
static inline double wo_depth(const wo_body *a, const wo_body *b) {
    if (a->maxx <= b->minx || b->maxx <= a->minx || a->maxy <= b->miny || b->maxy <= a->miny)
        return 0.0;
    if (a->circle && b->circle) {
        double dx = b->cx - a->cx, dy = b->cy - a->cy;
        return fmax(0.0, a->r + b->r - sqrt(dx * dx + dy * dy));
    }
    if (a->circle || b->circle) {
        const wo_body *c = a->circle ? a : b, *p = a->circle ? b : a;
        bool inside;
        double d = wo_point_boundary(p, c->cx, c->cy, &inside);
        return inside ? c->r + d : fmax(0.0, c->r - d);
    }
    double depth = INFINITY;
    for (int pass = 0; pass < 2; pass++) {
        const wo_body *p = pass ? b : a;
        for (int i = 0; i < p->n; i++) {
            int j = (i + 1) % p->n;
            double ex = p->x[j] - p->x[i], ey = p->y[j] - p->y[i], len = sqrt(ex * ex + ey * ey);
            double o = wo_axis_overlap(a, b, ey / len, -ex / len);
            if (o <= 0.0) return 0.0;
            depth = fmin(depth, o);
        }
    }
    return depth;
}

/* Distance between two bodies: > 0 apart (the exact closest distance), <= 0 touching or
 * overlapping (then minus the penetration depth). */
static inline double wo_gap(const wo_body *a, const wo_body *b) {
    double depth = wo_depth(a, b);
    if (depth > 0.0) return -depth;
    if (a->circle && b->circle) {
        double dx = b->cx - a->cx, dy = b->cy - a->cy;
        return sqrt(dx * dx + dy * dy) - a->r - b->r;
    }
    if (a->circle || b->circle) {
        const wo_body *c = a->circle ? a : b, *p = a->circle ? b : a;
        bool inside;
        double d = wo_point_boundary(p, c->cx, c->cy, &inside);
        return inside ? -(c->r + d) : d - c->r;
    }
    /* apart: the closest points are a vertex of one and an edge of the other */
    double best = INFINITY;
    for (int pass = 0; pass < 2; pass++) {
        const wo_body *p = pass ? b : a, *q = pass ? a : b;
        for (int i = 0; i < p->n; i++)
            for (int k = 0; k < q->n; k++) {
                int k1 = (k + 1) % q->n;
                best = fmin(
                    best, wo_point_segment(p->x[i], p->y[i], q->x[k], q->y[k], q->x[k1], q->y[k1]));
            }
    }
    return best;
}

/* How far the body stays inside the bounds: the smallest distance from its extent to a wall,
 * negative when it pokes out. */
static inline double wo_bounds_gap(const wo_body *b, aabb bounds) {
    return fmin(fmin(b->minx - bounds.min.x, bounds.max.x - b->maxx),
                fmin(b->miny - bounds.min.y, bounds.max.y - b->maxy));
}

/* The part [*t0, *t1] of [0, 1] in which a point moving by d from 0 lies in the box lo..hi along
 * both axes (a slab test); false when it never does. At d = 0 on an axis, a start on the box's
 * edge counts as inside when closed. */
static inline bool wo_slab_times(const double lo[2], const double hi[2], const double d[2],
                                 bool closed, double *t0, double *t1) {
    *t0 = 0.0, *t1 = 1.0;
    for (int k = 0; k < 2; k++) {
        if (d[k] == 0.0) {
            bool inside = closed ? lo[k] <= 0.0 && 0.0 <= hi[k] : lo[k] < 0.0 && 0.0 < hi[k];
            if (!inside) return false;
            continue;
        }
        double ta = lo[k] / d[k], tb = hi[k] / d[k];
        if (ta > tb) {
            double tmp = ta;
            ta = tb, tb = tmp;
        }
        *t0 = fmax(*t0, ta), *t1 = fmin(*t1, tb);
    }
    return *t0 <= *t1;
}

/* The deepest a body of shape s goes into the static body st anywhere along the straight motion
 * p0 -> p1, sampled at most `step` apart (both ends included). Only the part of the motion where
 * the two bounding boxes meet is sampled, found by a slab test, so a long bullet chord costs what
 * its short stretch near the static costs. A body that tunnels through a static overlaps it by
 * about its own size half-way through: a step well below the thinnest body finds that. */
static inline double wo_chord_depth(const geom_shape *s, vec2 p0, vec2 p1, const wo_body *st,
                                    double step) {
    wo_body at0 = wo_make(s, p0);
    double dx = (double)p1.x - p0.x, dy = (double)p1.y - p0.y;
    /* times (fractions of the motion) when the moving box overlaps the static's box */
    const double lo[2] = {st->minx - at0.maxx, st->miny - at0.maxy};
    const double hi[2] = {st->maxx - at0.minx, st->maxy - at0.miny};
    const double d[2] = {dx, dy};
    double t0, t1;
    if (!wo_slab_times(lo, hi, d, false, &t0, &t1)) return 0.0;
    double len = sqrt(dx * dx + dy * dy);
    int samples = 1 + (int)ceil((t1 - t0) * len / step);
    double worst = 0.0;
    for (int i = 0; i <= samples; i++) {
        double t = t0 + (t1 - t0) * i / samples;
        wo_body at = wo_make_at(s, p0.x + t * dx, p0.y + t * dy);
        worst = fmax(worst, wo_depth(&at, st));
    }
    return worst;
}

#endif

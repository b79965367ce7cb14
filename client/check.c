#include "check.h"

#include <float.h>
#include <math.h>
#include <string.h>

const char *cc_violation_name(int kind) {
    switch (kind) {
    case CC_VIOL_OVERLAP_STATIC:
        return "overlap_static";
    case CC_VIOL_OVERLAP_MOVING:
        return "overlap_moving";
    case CC_VIOL_TUNNEL:
        return "tunnel";
    case CC_VIOL_CONTACT_BEGIN_FAR:
        return "contact_begin_far";
    case CC_VIOL_CONTACT_END_NEAR:
        return "contact_end_near";
    case CC_VIOL_CONTACT_DUPLICATE_BEGIN:
        return "contact_duplicate_begin";
    case CC_VIOL_CONTACT_END_WITHOUT_BEGIN:
        return "contact_end_without_begin";
    case CC_VIOL_CONTACT_NOT_ENDED:
        return "contact_not_ended";
    case CC_VIOL_SENSOR_BEGIN_APART:
        return "sensor_begin_apart";
    case CC_VIOL_SENSOR_END_OVERLAPPING:
        return "sensor_end_overlapping";
    case CC_VIOL_SENSOR_DUPLICATE_BEGIN:
        return "sensor_duplicate_begin";
    case CC_VIOL_SENSOR_END_WITHOUT_BEGIN:
        return "sensor_end_without_begin";
    case CC_VIOL_SENSOR_NOT_ENDED:
        return "sensor_not_ended";
    case CC_VIOL_REST_MOVED:
        return "rest_moved";
    case CC_VIOL_ONE_WAY_FELL:
        return "one_way_fell";
    case CC_VIOL_CARRY_SLIPPED:
        return "carry_slipped";
    case CC_VIOL_JUMP_AIRBORNE:
        return "jump_airborne";
    case CC_VIOL_JUMP_UNASKED:
        return "jump_unasked";
    default:
        return "unknown";
    }
}

void cc_check_view_init(cc_check_view *v, float tolerance) {
    v->count = 0;
    v->last_tick = 0;
    v->have_tick = false;
    v->events_apart = false; /* load mallocs its views: never left to chance */
    v->tolerance = tolerance;
    v->open_count = 0;
    v->up_x = v->up_y = 0.0f;
    v->tick_hz = 0;
    v->pos_quantum = v->vel_quantum = 0.0f;
    memset(&v->own, 0, sizeof v->own);
}

void cc_check_world(cc_check_view *v, float gx, float gy, uint32_t tick_hz, float pos_quantum,
                    float vel_quantum) {
    float g = sqrtf(gx * gx + gy * gy);
    v->up_x = g > 0.0f ? -gx / g : 0.0f;
    v->up_y = g > 0.0f ? -gy / g : 0.0f;
    v->tick_hz = tick_hz;
    v->pos_quantum = pos_quantum;
    v->vel_quantum = vel_quantum;
}

void cc_check_own_character(cc_check_view *v, uint32_t body_id,
                            const Collide__V1__CharacterOptions *opt) {
    memset(&v->own, 0, sizeof v->own);
    v->own.id = body_id;
    v->own.jump_speed = opt ? opt->jump_speed : 0.0f;
    v->own.coyote_ms = opt && opt->coyote_ms ? opt->coyote_ms : 100u;
    v->own.buffer_ms = opt && opt->jump_buffer_ms ? opt->jump_buffer_ms : 100u;
}

void cc_check_own_intent(cc_check_view *v, uint32_t seq, float vx, float vy, bool jump) {
    if (seq == 0) return;
    v->own.intents[seq % CC_CHECK_INTENTS] = (cc_check_intent){seq, vx, vy, jump};
}

bool cc_check_jumped(float up_before, float up_after, float vel_quantum) {
    float dv = CC_JUMP_DV + vel_quantum;
    return up_after > dv && up_after > up_before + dv;
}

void cc_check_stats_init(cc_check_stats *s) { memset(s, 0, sizeof *s); }

uint64_t cc_check_total(const cc_check_stats *s) {
    uint64_t t = 0;
    for (int k = 0; k < CC_VIOL_KINDS; k++)
        t += s->counts[k];
    return t;
}

void cc_check_stats_merge(cc_check_stats *into, const cc_check_stats *from) {
    into->snapshots += from->snapshots;
    into->pairs += from->pairs;
    for (int k = 0; k < CC_VIOL_KINDS; k++)
        into->counts[k] += from->counts[k];
    into->overflow += from->overflow;
    into->unknown_shape += from->unknown_shape;
    into->contact_events += from->contact_events;
    into->sensor_events += from->sensor_events;
    into->events_measured += from->events_measured;
    into->open_overflow += from->open_overflow;
    into->rest_checks += from->rest_checks;
    into->one_way_checks += from->one_way_checks;
    into->carry_checks += from->carry_checks;
    into->jumps_seen += from->jumps_seen;
    into->jumps_checked += from->jumps_checked;
    for (uint32_t i = 0; i < from->examples_len && into->examples_len < CC_CHECK_EXAMPLES; i++)
        into->examples[into->examples_len++] = from->examples[i];
}

bool cc_shape_from_proto(const Collide__V1__Shape *in, cc_shape *out) {
    memset(out, 0, sizeof *out);
    if (!in) return false;
    switch (in->kind_case) {
    case COLLIDE__V1__SHAPE__KIND_BOX: {
        float hx = 0, hy = 0;
        if (in->box && in->box->half_extents) {
            hx = in->box->half_extents->x;
            hy = in->box->half_extents->y;
        }
        if (!(hx > 0.0f) || !(hy > 0.0f)) return false;
        const float sx[4] = {-hx, hx, hx, -hx}, sy[4] = {-hy, -hy, hy, hy};
        out->kind = CC_SHAPE_POLY;
        out->count = 4;
        memcpy(out->vx, sx, sizeof sx);
        memcpy(out->vy, sy, sizeof sy);
        return true;
    }
    case COLLIDE__V1__SHAPE__KIND_POLYGON: {
        const Collide__V1__Polygon *p = in->polygon;
        if (!p || p->n_vertices < 3 || p->n_vertices > CC_CHECK_MAX_VERTS) return false;
        out->kind = CC_SHAPE_POLY;
        out->count = (uint8_t)p->n_vertices;
        for (size_t i = 0; i < p->n_vertices; i++) {
            out->vx[i] = p->vertices[i] ? p->vertices[i]->x : 0.0f;
            out->vy[i] = p->vertices[i] ? p->vertices[i]->y : 0.0f;
        }
        return true;
    }
    case COLLIDE__V1__SHAPE__KIND_CIRCLE:
        if (!in->circle || !(in->circle->radius > 0.0f)) return false;
        out->kind = CC_SHAPE_CIRCLE;
        out->radius = in->circle->radius;
        return true;
    default:
        return false;
    }
}

/* World-space vertices of a placed polygon. */
static void place(const cc_shape *s, float x, float y, float angle, double *wx, double *wy) {
    double c = 1.0, sn = 0.0;
    if (angle != 0.0f) {
        c = cos(angle);
        sn = sin(angle);
    }
    for (unsigned i = 0; i < s->count; i++) {
        wx[i] = x + c * s->vx[i] - sn * s->vy[i];
        wy[i] = y + sn * s->vx[i] + c * s->vy[i];
    }
}

static void project(const double *wx, const double *wy, unsigned n, double nx, double ny,
                    double *lo, double *hi) {
    *lo = *hi = wx[0] * nx + wy[0] * ny;
    for (unsigned i = 1; i < n; i++) {
        double d = wx[i] * nx + wy[i] * ny;
        if (d < *lo) *lo = d;
        if (d > *hi) *hi = d;
    }
}

/* Unit normal of the edge from vertex i to the next; false for a zero-length edge. */
static bool edge_normal(const double *wx, const double *wy, unsigned n, unsigned i, double *nx,
                        double *ny) {
    unsigned j = (i + 1) % n;
    double ex = wx[j] - wx[i], ey = wy[j] - wy[i];
    double len = sqrt(ex * ex + ey * ey);
    if (len <= 0.0) return false;
    *nx = ey / len;
    *ny = -ex / len;
    return true;
}

/* Smallest overlap over the edge normals of (ax, ay); updates *best. */
static void sat_axes(const double *ax, const double *ay, unsigned an, const double *bx,
                     const double *by, unsigned bn, double *best) {
    for (unsigned i = 0; i < an; i++) {
        double nx, ny;
        if (!edge_normal(ax, ay, an, i, &nx, &ny)) continue;
        double alo, ahi, blo, bhi;
        project(ax, ay, an, nx, ny, &alo, &ahi);
        project(bx, by, bn, nx, ny, &blo, &bhi);
        double o = fmin(ahi - blo, bhi - alo);
        if (o < *best) *best = o;
    }
}

static double circle_poly_depth(double cx, double cy, double r, const double *wx, const double *wy,
                                unsigned n) {
    double best = INFINITY;
    for (unsigned i = 0; i < n; i++) {
        double nx, ny;
        if (!edge_normal(wx, wy, n, i, &nx, &ny)) continue;
        double lo, hi;
        project(wx, wy, n, nx, ny, &lo, &hi);
        double c = cx * nx + cy * ny;
        double o = fmin(hi - (c - r), (c + r) - lo);
        if (o < best) best = o;
    }
    /* The axis from the nearest vertex to the centre separates circles beyond a corner. */
    unsigned k = 0;
    double dmin = INFINITY;
    for (unsigned i = 0; i < n; i++) {
        double d = (wx[i] - cx) * (wx[i] - cx) + (wy[i] - cy) * (wy[i] - cy);
        if (d < dmin) {
            dmin = d;
            k = i;
        }
    }
    double len = sqrt(dmin);
    if (len > 0.0) {
        double nx = (cx - wx[k]) / len, ny = (cy - wy[k]) / len;
        double lo, hi;
        project(wx, wy, n, nx, ny, &lo, &hi);
        double c = cx * nx + cy * ny;
        double o = fmin(hi - (c - r), (c + r) - lo);
        if (o < best) best = o;
    }
    return best;
}

float cc_shape_depth(const cc_shape *a, float ax, float ay, float aa, const cc_shape *b, float bx,
                     float by, float ba) {
    double awx[CC_CHECK_MAX_VERTS], awy[CC_CHECK_MAX_VERTS];
    double bwx[CC_CHECK_MAX_VERTS], bwy[CC_CHECK_MAX_VERTS];
    if (a->kind == CC_SHAPE_CIRCLE && b->kind == CC_SHAPE_CIRCLE) {
        double dx = (double)bx - ax, dy = (double)by - ay;
        return (float)((double)a->radius + b->radius - sqrt(dx * dx + dy * dy));
    }
    if (a->kind == CC_SHAPE_CIRCLE) {
        place(b, bx, by, ba, bwx, bwy);
        return (float)circle_poly_depth(ax, ay, a->radius, bwx, bwy, b->count);
    }
    if (b->kind == CC_SHAPE_CIRCLE) {
        place(a, ax, ay, aa, awx, awy);
        return (float)circle_poly_depth(bx, by, b->radius, awx, awy, a->count);
    }
    place(a, ax, ay, aa, awx, awy);
    place(b, bx, by, ba, bwx, bwy);
    double best = INFINITY;
    sat_axes(awx, awy, a->count, bwx, bwy, b->count, &best);
    sat_axes(bwx, bwy, b->count, awx, awy, a->count, &best);
    return (float)best;
}

/* Distance from (px, py) to the segment (x0, y0)-(x1, y1). */
static double point_segment(double px, double py, double x0, double y0, double x1, double y1) {
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    double t = len2 > 0.0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0.0;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    double qx = x0 + t * dx - px, qy = y0 + t * dy - py;
    return sqrt(qx * qx + qy * qy);
}

/* Distance from (px, py) to a polygon's boundary. */
static double point_poly(double px, double py, const double *wx, const double *wy, unsigned n) {
    double best = INFINITY;
    for (unsigned i = 0; i < n; i++) {
        unsigned j = (i + 1) % n;
        double d = point_segment(px, py, wx[i], wy[i], wx[j], wy[j]);
        if (d < best) best = d;
    }
    return best;
}

double cc_shape_gap(const cc_shape *a, float ax, float ay, float aa, const cc_shape *b, float bx,
                    float by, float ba) {
    float depth = cc_shape_depth(a, ax, ay, aa, b, bx, by, ba);
    /* overlapping: SAT's least penetration is the depth, as the daemon's contact measures it */
    if (depth > 0.0f) return -(double)depth;
    double awx[CC_CHECK_MAX_VERTS], awy[CC_CHECK_MAX_VERTS];
    double bwx[CC_CHECK_MAX_VERTS], bwy[CC_CHECK_MAX_VERTS];
    if (a->kind == CC_SHAPE_CIRCLE && b->kind == CC_SHAPE_CIRCLE) {
        double dx = (double)bx - ax, dy = (double)by - ay;
        return sqrt(dx * dx + dy * dy) - a->radius - b->radius;
    }
    /* apart: the nearest features are a vertex and an edge (or a circle's centre and an edge) */
    if (a->kind == CC_SHAPE_CIRCLE || b->kind == CC_SHAPE_CIRCLE) {
        const cc_shape *c = a->kind == CC_SHAPE_CIRCLE ? a : b, *p = c == a ? b : a;
        float cx = c == a ? ax : bx, cy = c == a ? ay : by;
        place(p, c == a ? bx : ax, c == a ? by : ay, c == a ? ba : aa, bwx, bwy);
        return point_poly(cx, cy, bwx, bwy, p->count) - c->radius;
    }
    place(a, ax, ay, aa, awx, awy);
    place(b, bx, by, ba, bwx, bwy);
    double best = INFINITY;
    for (unsigned i = 0; i < a->count; i++) {
        double d = point_poly(awx[i], awy[i], bwx, bwy, b->count);
        if (d < best) best = d;
    }
    for (unsigned i = 0; i < b->count; i++) {
        double d = point_poly(bwx[i], bwy[i], awx, awy, a->count);
        if (d < best) best = d;
    }
    return best;
}

double cc_event_tolerance(float ax, float ay, float bx, float by) {
    float m = fmaxf(fmaxf(fabsf(ax), fabsf(ay)), fmaxf(fabsf(bx), fabsf(by)));
    return 1e-4 + 16.0 * FLT_EPSILON * (double)fmaxf(m, 1.0f);
}

static bool point_inside(const cc_shape *s, const double *wx, const double *wy, double cx,
                         double cy, double margin, double px, double py) {
    if (s->kind == CC_SHAPE_CIRCLE) {
        double r = s->radius - margin;
        return r > 0.0 && (px - cx) * (px - cx) + (py - cy) * (py - cy) < r * r;
    }
    for (unsigned i = 0; i < s->count; i++) {
        double nx, ny;
        if (!edge_normal(wx, wy, s->count, i, &nx, &ny)) continue;
        if ((px - wx[i]) * nx + (py - wy[i]) * ny > -margin) return false;
    }
    return true;
}

/* A turning mover's corners: each one's chord from where it stood at the previous tick to where
 * it stands now, against the static (a turn that swings a bar's end through a thin wall moves no
 * centre across it). Chords, not arcs: a sampled check, like the centre's. */
static bool turned_through(const cc_check_body *m, const cc_check_body *st, float margin) {
    if (m->shape.kind != CC_SHAPE_POLY || m->angle == m->prev_angle) return false;
    double px[CC_CHECK_MAX_VERTS], py[CC_CHECK_MAX_VERTS], nx[CC_CHECK_MAX_VERTS],
        ny[CC_CHECK_MAX_VERTS];
    place(&m->shape, m->prev_x, m->prev_y, m->prev_angle, px, py);
    place(&m->shape, m->x, m->y, m->angle, nx, ny);
    for (unsigned i = 0; i < m->shape.count; i++)
        if (cc_segment_crosses(&st->shape, st->x, st->y, st->angle, margin, (float)px[i],
                               (float)py[i], (float)nx[i], (float)ny[i]))
            return true;
    return false;
}

bool cc_segment_crosses(const cc_shape *s, float x, float y, float angle, float margin, float x0,
                        float y0, float x1, float y1) {
    double wx[CC_CHECK_MAX_VERTS], wy[CC_CHECK_MAX_VERTS];
    if (s->kind == CC_SHAPE_POLY) place(s, x, y, angle, wx, wy);
    /* An end inside is an overlap, reported as such; this catches only passing through. */
    if (point_inside(s, wx, wy, x, y, margin, x0, y0) ||
        point_inside(s, wx, wy, x, y, margin, x1, y1))
        return false;
    double dx = (double)x1 - x0, dy = (double)y1 - y0;
    if (s->kind == CC_SHAPE_CIRCLE) {
        double r = s->radius - margin;
        if (r <= 0.0) return false;
        double len2 = dx * dx + dy * dy;
        double t = len2 > 0.0 ? (((double)x - x0) * dx + ((double)y - y0) * dy) / len2 : 0.0;
        if (t < 0.0) t = 0.0;
        if (t > 1.0) t = 1.0;
        double qx = x0 + t * dx - x, qy = y0 + t * dy - y;
        return qx * qx + qy * qy < r * r;
    }
    if (s->kind != CC_SHAPE_POLY) return false;
    /* Cyrus-Beck clipping against the edges moved inward by margin. */
    double t_enter = 0.0, t_leave = 1.0;
    for (unsigned i = 0; i < s->count; i++) {
        double nx, ny;
        if (!edge_normal(wx, wy, s->count, i, &nx, &ny)) continue;
        double plane = wx[i] * nx + wy[i] * ny - margin;
        double num = plane - (x0 * nx + y0 * ny);
        double den = dx * nx + dy * ny;
        if (den == 0.0) {
            if (num < 0.0) return false;
            continue;
        }
        double t = num / den;
        if (den < 0.0) {
            if (t > t_enter) t_enter = t;
        } else if (t < t_leave) {
            t_leave = t;
        }
        if (t_enter >= t_leave) return false;
    }
    return t_enter < t_leave;
}

static int view_find(const cc_check_view *v, uint32_t id) {
    for (uint32_t i = 0; i < v->count; i++)
        if (v->bodies[i].id == id) return (int)i;
    return -1;
}

/* Whether two bodies block each other (docs/protocol.md "Filters"): else they may overlap. A
 * one-way body may be passed from below: its pairs are left out like the others that may
 * overlap. */
static bool blocks(const cc_check_body *a, const cc_check_body *b) {
    return !a->sensor && !b->sensor && !a->one_way && !b->one_way && (a->category & b->mask) &&
           (b->category & a->mask);
}

static void record(cc_check_stats *s, int kind, uint32_t a, uint32_t b, uint64_t tick,
                   float depth) {
    s->counts[kind]++;
    if (s->examples_len < CC_CHECK_EXAMPLES)
        s->examples[s->examples_len++] = (cc_violation){(uint8_t)kind, a, b, tick, depth};
}

static int open_find(const cc_check_view *v, uint32_t a, uint32_t b, bool sensor) {
    for (uint32_t i = 0; i < v->open_count; i++)
        if (v->open[i].a == a && v->open[i].b == b && v->open[i].sensor == sensor) return (int)i;
    return -1;
}

static bool removed_in(const Collide__V1__Snapshot *snap, uint32_t id) {
    for (size_t r = 0; r < snap->n_removed; r++)
        if (snap->removed[r] == id) return true;
    return false;
}

/* The measure of the pair (a, b) in view: for contacts the gap, for sensors the depth; false
 * when either body is not in view or has no shape. */
static bool pair_measure(const cc_check_view *v, uint32_t a, uint32_t b, bool sensor, double *m,
                         double *tol) {
    int i = view_find(v, a), j = view_find(v, b);
    if (i < 0 || j < 0) return false;
    const cc_check_body *x = &v->bodies[i], *y = &v->bodies[j];
    if (x->shape.kind == CC_SHAPE_NONE || y->shape.kind == CC_SHAPE_NONE) return false;
    /* quantized positions are each off by up to half a quantum per axis (check.h) */
    *tol = cc_event_tolerance(x->x, x->y, y->x, y->y) + 1.5 * v->pos_quantum;
    *m = sensor ? (double)cc_shape_depth(&x->shape, x->x, x->y, x->angle, &y->shape, y->x, y->y,
                                         y->angle)
                : cc_shape_gap(&x->shape, x->x, x->y, x->angle, &y->shape, y->x, y->y, y->angle);
    return true;
}

/* One event: the pairing always, the geometry when measured (see check.h). crossing: a sensor
 * begin followed by its end in the same snapshot, or that end. */
static void check_event(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s,
                        uint32_t a, uint32_t b, bool sensor, bool begin, bool measured,
                        bool crossing) {
    int k = open_find(v, a, b, sensor);
    if (begin && k >= 0)
        record(s, sensor ? CC_VIOL_SENSOR_DUPLICATE_BEGIN : CC_VIOL_CONTACT_DUPLICATE_BEGIN, a, b,
               snap->tick, NAN);
    if (!begin && k < 0)
        record(s, sensor ? CC_VIOL_SENSOR_END_WITHOUT_BEGIN : CC_VIOL_CONTACT_END_WITHOUT_BEGIN, a,
               b, snap->tick, NAN);
    if (begin && k < 0) {
        if (v->open_count < CC_CHECK_MAX_OPEN)
            v->open[v->open_count++] = (cc_open_pair){a, b, sensor, false, false, snap->tick};
        else
            s->open_overflow++;
    }
    if (!begin && k >= 0) v->open[k] = v->open[--v->open_count];
    double m, tol;
    if (!measured || crossing || !pair_measure(v, a, b, sensor, &m, &tol)) return;
    s->events_measured++;
    bool gone = !begin && (removed_in(snap, a) || removed_in(snap, b));
    if (sensor) {
        if (begin && !(m > -tol)) record(s, CC_VIOL_SENSOR_BEGIN_APART, a, b, snap->tick, (float)m);
        if (!begin && !gone && m > tol)
            record(s, CC_VIOL_SENSOR_END_OVERLAPPING, a, b, snap->tick, (float)m);
    } else {
        if (begin && !(m <= CC_CONTACT_BEGIN_GAP + tol))
            record(s, CC_VIOL_CONTACT_BEGIN_FAR, a, b, snap->tick, (float)-m);
        if (!begin && !gone && m <= CC_CONTACT_END_GAP - tol)
            record(s, CC_VIOL_CONTACT_END_NEAR, a, b, snap->tick, (float)-m);
    }
}

/* Marks the begun pairs that lose a body in this snapshot, before the removals apply: the removed
 * body last seen near the other, which stays in view (see check.h). */
static void mark_gone(cc_check_view *v, const Collide__V1__Snapshot *snap) {
    for (uint32_t i = 0; i < v->open_count; i++) {
        cc_open_pair *p = &v->open[i];
        p->gone = false;
        bool ra = removed_in(snap, p->a), rb = removed_in(snap, p->b);
        if (ra == rb) continue; /* neither, or both (nothing left to measure against) */
        int x = view_find(v, p->a), y = view_find(v, p->b);
        if (x < 0 || y < 0) continue;
        const cc_check_body *g = &v->bodies[ra ? x : y], *o = &v->bodies[ra ? y : x];
        if (g->shape.kind == CC_SHAPE_NONE || o->shape.kind == CC_SHAPE_NONE) continue;
        p->gone = cc_shape_gap(&g->shape, g->x, g->y, g->angle, &o->shape, o->x, o->y, o->angle) <=
                  CC_GONE_NEAR;
    }
}

/* The snapshot's events, in order; then the begun pairs whose bodies have parted with no end. */
static void check_events(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s,
                         bool consecutive) {
    s->contact_events += snap->n_contacts;
    s->sensor_events += snap->n_sensor_events;
    for (size_t k = 0; k < snap->n_contacts; k++) {
        const Collide__V1__ContactEvent *e = snap->contacts[k];
        if (e) check_event(v, snap, s, e->a, e->b, false, e->begin, consecutive, false);
    }
    for (size_t k = 0; k < snap->n_sensor_events; k++) {
        const Collide__V1__SensorEvent *e = snap->sensor_events[k];
        if (!e) continue;
        /* a crossing within the tick: its begin is followed by its end (the end by nothing) */
        bool crossing = false;
        if (e->begin) {
            for (size_t q = k + 1; q < snap->n_sensor_events && !crossing; q++) {
                const Collide__V1__SensorEvent *f = snap->sensor_events[q];
                crossing = f && !f->begin && f->sensor == e->sensor && f->visitor == e->visitor;
            }
        } else {
            for (size_t q = 0; q < k && !crossing; q++) {
                const Collide__V1__SensorEvent *f = snap->sensor_events[q];
                crossing = f && f->begin && f->sensor == e->sensor && f->visitor == e->visitor;
            }
        }
        check_event(v, snap, s, e->sensor, e->visitor, true, e->begin, consecutive, crossing);
    }
    if (!consecutive) return;
    for (uint32_t i = 0; i < v->open_count; i++) {
        cc_open_pair *p = &v->open[i];
        double m, tol;
        if (p->reported || p->since == snap->tick) continue;
        if (p->gone) {
            p->reported = true;
            record(s, p->sensor ? CC_VIOL_SENSOR_NOT_ENDED : CC_VIOL_CONTACT_NOT_ENDED, p->a, p->b,
                   snap->tick, NAN);
            continue;
        }
        if (!pair_measure(v, p->a, p->b, p->sensor, &m, &tol)) continue;
        bool parted = p->sensor ? m < -tol : m > CC_CONTACT_END_GAP + tol;
        if (!parted) continue;
        p->reported = true;
        record(s, p->sensor ? CC_VIOL_SENSOR_NOT_ENDED : CC_VIOL_CONTACT_NOT_ENDED, p->a, p->b,
               snap->tick, (float)(p->sensor ? m : -m));
    }
}

/* ---- the own character (check.h's top) ---- */

/* Every intent from seq `from` to `to` was recorded, with no velocity across gravity and no
 * jump: the character was still over the interval. */
static bool own_still(const cc_check_view *v, uint32_t from, uint32_t to) {
    if (to < from || to - from >= CC_CHECK_INTENTS) return false;
    float rx = v->up_y, ry = -v->up_x; /* across gravity */
    for (uint32_t q = from;; q++) {
        const cc_check_intent *in = &v->own.intents[q % CC_CHECK_INTENTS];
        if (in->seq != q || in->jump || in->vx * rx + in->vy * ry != 0.0f) return false;
        if (q == to) return true;
    }
}

/* Jump presses among the intents applied since the previous snapshot (seq from + 1 to to): each
 * good for one jump up to the buffer's end after this tick. True when there was one. */
static bool own_presses(cc_check_view *v, uint32_t from, uint32_t to, uint64_t tick) {
    cc_check_own *o = &v->own;
    bool any = false;
    for (uint32_t q = from + 1; q > from && q <= to && q - from <= CC_CHECK_INTENTS; q++) {
        const cc_check_intent *in = &o->intents[q % CC_CHECK_INTENTS];
        if (in->seq != q || !in->jump) continue;
        uint64_t buffer = (uint64_t)ceil((double)o->buffer_ms * v->tick_hz / 1000.0);
        o->presses++;
        o->press_until = tick + buffer + 1u;
        any = true;
    }
    return any;
}

/* A body that blocks b, other than b and skip, within CC_CHAR_CLEAR plus two ticks of its speed
 * (check.h: it may have pushed b). */
static bool near_other(const cc_check_view *v, const cc_check_body *b, uint32_t skip) {
    double reach_s = v->tick_hz ? 2.0 / v->tick_hz : 0.0;
    for (uint32_t j = 0; j < v->count; j++) {
        const cc_check_body *o = &v->bodies[j];
        if (o == b || o->id == skip || o->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC ||
            o->shape.kind == CC_SHAPE_NONE || b->shape.kind == CC_SHAPE_NONE || !blocks(b, o))
            continue;
        double speed = sqrt((double)o->vx * o->vx + (double)o->vy * o->vy);
        double gap = cc_shape_gap(&b->shape, b->x, b->y, b->angle, &o->shape, o->x, o->y, o->angle);
        if (gap <= CC_CHAR_CLEAR + speed * reach_s) return true;
    }
    return false;
}

/* Something near the own character b (check.h's "near"). */
static bool own_crowded(const cc_check_view *v, const cc_check_body *b) {
    return near_other(v, b, b->ground_id);
}

/* The extent of a placed shape along the unit axis (ax, ay). */
static void extent_along(const cc_shape *sh, float x, float y, float angle, double ax, double ay,
                         double *lo, double *hi) {
    if (sh->kind == CC_SHAPE_CIRCLE) {
        double c = x * ax + y * ay;
        *lo = c - sh->radius;
        *hi = c + sh->radius;
        return;
    }
    double wx[CC_CHECK_MAX_VERTS], wy[CC_CHECK_MAX_VERTS];
    place(sh, x, y, angle, wx, wy);
    project(wx, wy, sh->count, ax, ay, lo, hi);
}

/* I9: b watched over the one-way body it stood on (o->one_way_id); stops watching when it may
 * legitimately be below it. */
static void own_one_way(cc_check_view *v, const cc_check_body *b, bool jumped, bool pressed,
                        uint64_t tick, cc_check_stats *s) {
    cc_check_own *o = &v->own;
    int i = view_find(v, o->one_way_id);
    const cc_check_body *p = i >= 0 ? &v->bodies[i] : NULL;
    if (!p || p->shape.kind == CC_SHAPE_NONE || b->shape.kind == CC_SHAPE_NONE || jumped ||
        pressed || (b->grounded && b->ground_id != o->one_way_id)) {
        o->one_way_id = 0;
        return;
    }
    double blo, bhi, plo, phi;
    extent_along(&b->shape, b->x, b->y, b->angle, v->up_y, -v->up_x, &blo, &bhi);
    extent_along(&p->shape, p->x, p->y, p->angle, v->up_y, -v->up_x, &plo, &phi);
    if (fmin(bhi, phi) - fmax(blo, plo) <= 0.0) { /* off its edge */
        o->one_way_id = 0;
        return;
    }
    s->one_way_checks++;
    extent_along(&b->shape, b->x, b->y, b->angle, v->up_x, v->up_y, &blo, &bhi);
    extent_along(&p->shape, p->x, p->y, p->angle, v->up_x, v->up_y, &plo, &phi);
    double below = phi - blo;
    if (below > CC_ONE_WAY_SINK + v->pos_quantum) {
        record(s, CC_VIOL_ONE_WAY_FELL, b->id, p->id, tick, (float)below);
        o->one_way_id = 0;
    }
}

/* I10: b still on the moving body it stood on at both ends, its place in that body's frame. */
static void own_carried(const cc_check_view *v, const cc_check_body *b, uint64_t k, uint64_t tick,
                        cc_check_stats *s) {
    const cc_check_own *o = &v->own;
    int i = view_find(v, b->ground_id);
    if (i < 0) return;
    const cc_check_body *m = &v->bodies[i];
    double c0 = cos(o->ground_angle), s0 = sin(o->ground_angle);
    double c1 = cos(m->angle), s1 = sin(m->angle);
    double dx0 = (double)o->last_x - o->ground_x, dy0 = (double)o->last_y - o->ground_y;
    double dx1 = (double)b->x - m->x, dy1 = (double)b->y - m->y;
    double rx0 = c0 * dx0 + s0 * dy0, ry0 = -s0 * dx0 + c0 * dy0; /* turned by minus the angle */
    double rx1 = c1 * dx1 + s1 * dy1, ry1 = -s1 * dx1 + c1 * dy1;
    double d = fmax(fabs(rx1 - rx0), fabs(ry1 - ry0));
    float big = fmaxf(fmaxf(fabsf(b->x), fabsf(b->y)), fmaxf(fabsf(m->x), fabsf(m->y)));
    double tol = CC_CARRY_PER_TICK * (double)k + 2.0 * v->pos_quantum +
                 16.0 * FLT_EPSILON * (double)fmaxf(big, 1.0f);
    s->carry_checks++;
    if (d > tol) record(s, CC_VIOL_CARRY_SLIPPED, b->id, m->id, tick, (float)d);
}

/* The jump rule, for a jump seen at tick (consecutive: the previous snapshot was tick - 1). */
static void own_jump(cc_check_view *v, const cc_check_body *b, bool consecutive, uint64_t tick,
                     cc_check_stats *s) {
    cc_check_own *o = &v->own;
    s->jumps_seen++;
    if (o->presses > 0 && tick <= o->press_until)
        o->presses--;
    else
        record(s, CC_VIOL_JUMP_UNASKED, b->id, 0, tick, NAN);
    if (consecutive && (o->last_grounded || o->air_known)) {
        uint64_t coyote = (uint64_t)floor((double)o->coyote_ms * v->tick_hz / 1000.0);
        bool ok = o->last_grounded || (o->coyote_open && tick - 1u - o->grounded_tick <= coyote);
        s->jumps_checked++;
        if (!ok)
            record(s, CC_VIOL_JUMP_AIRBORNE, b->id, 0, tick, b->vx * v->up_x + b->vy * v->up_y);
    }
    o->coyote_open = false; /* taking off by a jump ends coyote time */
}

/* What the next snapshot compares with: b's state now, its ground's, and the neighbourhood. */
static void own_remember(cc_check_view *v, const cc_check_body *b, bool consecutive, bool jumped,
                         bool crowded, uint64_t tick) {
    cc_check_own *o = &v->own;
    if (b->grounded) {
        o->grounded_tick = tick;
        o->coyote_open = false;
        o->air_known = true;
    } else {
        if (o->have_last && o->last_grounded && !jumped) o->coyote_open = true; /* walked off */
        if (!consecutive) o->air_known = false;
    }
    if (o->presses && tick > o->press_until) o->presses = 0;
    o->have_last = true;
    o->last_x = b->x;
    o->last_y = b->y;
    o->last_up = b->vx * v->up_x + b->vy * v->up_y;
    o->last_grounded = b->grounded;
    o->last_ground = b->ground_id;
    o->last_seq = b->last_input_seq;
    o->last_crowded = crowded;
    int g = b->grounded && b->ground_id ? view_find(v, b->ground_id) : -1;
    o->ground_known = g >= 0;
    if (g >= 0) {
        o->ground_kind = v->bodies[g].kind;
        o->ground_character = v->bodies[g].character;
        o->ground_x = v->bodies[g].x;
        o->ground_y = v->bodies[g].y;
        o->ground_angle = v->bodies[g].angle;
    }
}

/* The character checks of one snapshot, on the view already updated by it. */
static void check_own(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s,
                      bool consecutive) {
    cc_check_own *o = &v->own;
    int i = view_find(v, o->id);
    if (i < 0 || (v->up_x == 0.0f && v->up_y == 0.0f)) {
        o->have_last = false; /* out of view (or not yet seen): start again */
        return;
    }
    const cc_check_body *b = &v->bodies[i];
    uint64_t tick = snap->tick;
    bool pressed = o->have_last && own_presses(v, o->last_seq, b->last_input_seq, tick);
    float up = b->vx * v->up_x + b->vy * v->up_y;
    bool jumped = o->have_last && cc_check_jumped(o->last_up, up, v->vel_quantum);
    if (jumped) own_jump(v, b, consecutive, tick, s);
    bool crowded = own_crowded(v, b);
    /* In force over the interval: the previous snapshot's intent (for its first tick) unless
     * newer ones all came in on the one tick of a consecutive snapshot, and every one since. */
    uint32_t from = consecutive && b->last_input_seq > o->last_seq ? o->last_seq + 1u : o->last_seq;
    bool calm = o->have_last && !jumped && !crowded && !o->last_crowded &&
                own_still(v, from, b->last_input_seq);
    bool on_static =
        o->last_ground == 0 ||
        (o->ground_known && o->ground_kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC);
    if (calm && consecutive && o->last_grounded && on_static) {
        s->rest_checks++;
        if (b->x != o->last_x || b->y != o->last_y) {
            double dx = (double)b->x - o->last_x, dy = (double)b->y - o->last_y;
            record(s, CC_VIOL_REST_MOVED, b->id, o->last_ground, tick,
                   (float)sqrt(dx * dx + dy * dy));
        }
    }
    if (calm && o->last_grounded && b->grounded && b->ground_id == o->last_ground &&
        o->last_ground != 0 && o->ground_known && !o->ground_character &&
        o->ground_kind != COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC)
        own_carried(v, b, tick - v->last_tick, tick, s);
    if (o->one_way_id) own_one_way(v, b, jumped, pressed, tick, s);
    int g = b->grounded && b->ground_id ? view_find(v, b->ground_id) : -1;
    if (g >= 0 && v->bodies[g].one_way) o->one_way_id = b->ground_id;
    own_remember(v, b, consecutive, jumped, crowded, tick);
}

void cc_check_snapshot(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s) {
    /* Bodies absent from a snapshot did not change, so positions stay continuous only when no
     * snapshot was missed (the server drops stale ones for slow clients). */
    bool consecutive = v->have_tick && snap->tick == v->last_tick + 1;
    s->snapshots++;
    mark_gone(v, snap);
    for (size_t r = 0; r < snap->n_removed; r++) {
        int i = view_find(v, snap->removed[r]);
        if (i < 0) continue;
        v->bodies[i] = v->bodies[--v->count];
    }
    memset(v->changed, 0, v->count);
    for (size_t k = 0; k < snap->n_bodies; k++) {
        const Collide__V1__BodyState *bs = snap->bodies[k];
        if (!bs) continue;
        int i = view_find(v, bs->id);
        cc_check_body *b;
        if (i < 0) {
            if (v->count >= CC_CHECK_MAX_BODIES) {
                s->overflow++;
                continue;
            }
            i = (int)v->count++;
            b = &v->bodies[i];
            memset(b, 0, sizeof *b);
            b->id = bs->id;
            if (!cc_shape_from_proto(bs->shape, &b->shape)) s->unknown_shape++;
            /* the filter comes with the first BodyState, 0 meaning the default */
            b->category = bs->category ? bs->category : 1u;
            b->mask = bs->mask ? bs->mask : UINT32_MAX;
            b->sensor = bs->sensor;
            b->one_way = bs->one_way;
            b->kind = (uint8_t)bs->kind;
        } else {
            b = &v->bodies[i];
            b->prev_x = b->x;
            b->prev_y = b->y;
            b->prev_angle = b->angle;
            b->known_prev = consecutive;
            if (bs->kind != COLLIDE__V1__BODY_KIND__BODY_KIND_UNSPECIFIED)
                b->kind = (uint8_t)bs->kind;
            if (b->shape.kind == CC_SHAPE_NONE && bs->shape)
                cc_shape_from_proto(bs->shape, &b->shape);
        }
        if (bs->position) {
            b->x = bs->position->x;
            b->y = bs->position->y;
        }
        b->angle = bs->angle;
        b->tick = snap->tick;
        /* a record is the body's whole state (a character's grounded too: replaced, not merged) */
        b->vx = bs->velocity ? bs->velocity->x : 0.0f;
        b->vy = bs->velocity ? bs->velocity->y : 0.0f;
        b->grounded = bs->grounded;
        b->character = b->character || bs->grounded;
        b->ground_id = bs->ground_id;
        b->last_input_seq = bs->last_input_seq;
        v->changed[i] = 1;
    }
    for (uint32_t i = 0; i < v->count; i++) {
        if (!v->changed[i]) continue;
        const cc_check_body *a = &v->bodies[i];
        if (a->shape.kind == CC_SHAPE_NONE) continue;
        bool a_static = a->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC;
        for (uint32_t j = 0; j < v->count; j++) {
            if (j == i || (v->changed[j] && j < i)) continue; /* each changed pair once */
            const cc_check_body *b = &v->bodies[j];
            bool b_static = b->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC;
            if ((a_static && b_static) || b->shape.kind == CC_SHAPE_NONE || !blocks(a, b)) continue;
            s->pairs++;
            float depth =
                cc_shape_depth(&a->shape, a->x, a->y, a->angle, &b->shape, b->x, b->y, b->angle);
            const cc_check_body *mover = a_static ? b : a, *other = a_static ? a : b;
            if (depth > v->tolerance) {
                record(s, (a_static || b_static) ? CC_VIOL_OVERLAP_STATIC : CC_VIOL_OVERLAP_MOVING,
                       mover->id, other->id, snap->tick, depth);
            } else if (!a_static && b_static && a->known_prev &&
                       (cc_segment_crosses(&b->shape, b->x, b->y, b->angle, v->tolerance, a->prev_x,
                                           a->prev_y, a->x, a->y) ||
                        turned_through(a, b, v->tolerance))) {
                record(s, CC_VIOL_TUNNEL, a->id, b->id, snap->tick, 0.0f);
            }
        }
    }
    if (!v->events_apart) check_events(v, snap, s, consecutive);
    if (v->own.id) check_own(v, snap, s, consecutive);
    v->last_tick = snap->tick;
    v->have_tick = true;
}

void cc_check_events(cc_check_view *v, const Collide__V1__Events *e, cc_check_stats *s) {
    v->events_apart = true;
    Collide__V1__Snapshot as_snapshot = COLLIDE__V1__SNAPSHOT__INIT;
    as_snapshot.tick = e->tick;
    as_snapshot.n_contacts = e->n_contacts;
    as_snapshot.contacts = e->contacts;
    as_snapshot.n_sensor_events = e->n_sensor_events;
    as_snapshot.sensor_events = e->sensor_events;
    check_events(v, &as_snapshot, s, false);
}

/* Game queries (world_query_ray / _overlap / _shape_cast) against brute-force oracles, over random
 * scenes of every shape pair, at the present and at past ticks (the history ring).
 *
 * The oracles share no code with geom's queries (world_oracle.h, in double): a ray is sampled
 * along its length with a point-in-body test, a cast is sub-stepped with the depth and gap of the
 * moving shape against each body, and the first contact is bisected from the samples. Every body
 * of the scene is judged (no broad phase), so a candidate the world's walk misses is caught. A body
 * the oracle cannot decide (a graze, shallower than its sampling resolves) may be reported or not;
 * every other one must be exactly as the oracle says, fractions within 1e-4. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "world.h"
#include "world_oracle.h"

#define SCENE_MAX 96
#define HIT_MAX 128
#define FRACTION_TOL 1e-4
#define ORACLE_STEP 0.01 /* units between samples of a chord */

/* One generator for the whole file (harness.h's collide_rng), reseeded by each test. */
static collide_rng rng;
static uint32_t rng_next(void) { return collide_rng_next(&rng); }
static double rng_unit(void) { return collide_rng_unit_d(&rng); }
static float rng_range(double lo, double hi) { return (float)(lo + (hi - lo) * rng_unit()); }

/* When set, random_shape turns every box and polygon by a random angle (issue 28: the turned
 * shapes whose cast points were off the cast shape). */
static bool turn_shapes;

static geom_shape random_shape_unturned(int kind);

/* A random shape of the given kind (1 box, 2 polygon, 3 circle), turned when turn_shapes says. */
static geom_shape random_shape(int kind) {
    geom_shape s = random_shape_unturned(kind);
    if (!turn_shapes || kind == GEOM_SHAPE_CIRCLE) return s;
    geom_shape turned;
    if (geom_shape_rotate(&s, rng_range(-3.14159265, 3.14159265), &turned) != GEOM_OK) abort();
    return turned;
}

static geom_shape random_shape_unturned(int kind) {
    geom_shape s;
    if (kind == GEOM_SHAPE_BOX) {
        if (geom_make_box(v2(rng_range(0.2, 2.0), rng_range(0.2, 2.0)), &s)) abort();
    } else if (kind == GEOM_SHAPE_CIRCLE) {
        if (geom_make_circle(rng_range(0.2, 2.0), &s)) abort();
    } else {
        for (;;) {
            vec2 pts[8];
            int n = 3 + (int)(rng_next() % 6);
            float r = rng_range(0.4, 2.0);
            for (int i = 0; i < n; i++) {
                double a = rng_unit() * 6.283185307179586;
                pts[i] = v2((float)(r * cos(a)), (float)(r * sin(a)));
            }
            if (geom_make_hull(pts, n, &s) == GEOM_OK && s.u.polygon.count >= 3) {
                /* thin slivers make every sampled oracle guess: keep shapes with some body */
                aabb b = geom_shape_aabb(&s, v2(0, 0));
                if (b.max.x - b.min.x > 0.3f && b.max.y - b.min.y > 0.3f) break;
            }
        }
    }
    return s;
}

typedef struct scene_body {
    world_body_id id;
    world_body_kind kind;
    geom_shape shape;
    world_filter filter; /* category and sensor flag the queries filter on */
} scene_body;

typedef struct scene {
    world *w;
    scene_body bodies[SCENE_MAX];
    int count;
} scene;

static const aabb SCENE_BOUNDS = {{0.0f, 0.0f}, {40.0f, 40.0f}};

/* statics and movers of every kind (movers all of mover_shape unless it is NULL), scattered over
 * the bounds */
static void scene_make_shaped(scene *sc, int statics, int movers, const geom_shape *mover_shape) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = SCENE_BOUNDS;
    cfg.max_bodies = 256;
    sc->w = world_create(&cfg);
    if (!sc->w) abort();
    sc->count = 0;
    for (int i = 0; i < statics + movers && sc->count < SCENE_MAX; i++) {
        scene_body *b = &sc->bodies[sc->count];
        b->kind = i < statics ? WORLD_BODY_STATIC : WORLD_BODY_MOVING;
        b->shape = random_shape(1 + (int)(rng_next() % 3));
        if (mover_shape && b->kind == WORLD_BODY_MOVING) b->shape = *mover_shape;
        vec2 p = v2(rng_range(3, 37), rng_range(3, 37));
        if (world_spawn(sc->w, b->kind, &b->shape, p, 1, &b->id, NULL) != WORLD_OK) continue;
        /* a third of the bodies in other categories (bits 0-2), one in eight a sensor */
        b->filter = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
        if (rng_next() % 3 == 0) b->filter.category = 1u + rng_next() % 7u;
        b->filter.sensor = rng_next() % 8 == 0;
        if (world_body_set_filter(sc->w, b->id, &b->filter) != WORLD_OK) abort();
        sc->count++;
    }
}

static void scene_make(scene *sc, int statics, int movers) {
    scene_make_shaped(sc, statics, movers, NULL);
}

/* ---- oracles ----------------------------------------------------------------------------------
 */

typedef enum verdict { V_MISS, V_HIT, V_UNSURE } verdict;

typedef struct judged {
    verdict v;
    double fraction; /* V_HIT: the first contact */
    double depth;    /* overlaps and casts starting inside: the oracle's depth */
} judged;

/* Signed distance of a point to a body: < 0 inside (minus the distance to the boundary). */
static double point_sdist(const wo_body *b, double px, double py) {
    if (b->circle) return sqrt((px - b->cx) * (px - b->cx) + (py - b->cy) * (py - b->cy)) - b->r;
    bool inside;
    double d = wo_point_boundary(b, px, py, &inside);
    return inside ? -d : d;
}

/* The ray origin + t*d against body b, sampled ORACLE_STEP apart, the entry bisected. */
static judged oracle_ray(const wo_body *b, vec2 o, vec2 d) {
    judged j = {V_MISS, 0, 0};
    double len = sqrt((double)d.x * d.x + (double)d.y * d.y);
    double s0 = point_sdist(b, o.x, o.y);
    if (s0 < -1e-4) return (judged){V_HIT, 0.0, 0.0};
    if (s0 <= 1e-4) return (judged){V_UNSURE, 0.0, 0.0};
    /* only the stretch inside the body's box (grown a little) is sampled */
    double t0 = 0.0, t1 = 1.0;
    const double bl[2] = {b->minx - 0.1 - o.x, b->miny - 0.1 - o.y};
    const double bh[2] = {b->maxx + 0.1 - o.x, b->maxy + 0.1 - o.y};
    const double dd[2] = {d.x, d.y};
    for (int k = 0; k < 2; k++) {
        if (dd[k] == 0.0) {
            if (!(bl[k] < 0.0 && 0.0 < bh[k])) return j;
            continue;
        }
        double ta = bl[k] / dd[k], tb = bh[k] / dd[k];
        if (ta > tb) {
            double t = ta;
            ta = tb, tb = t;
        }
        t0 = fmax(t0, ta), t1 = fmin(t1, tb);
    }
    if (!(t0 <= t1)) return j;
    int n = 1 + (int)ceil((t1 - t0) * len / ORACLE_STEP);
    double lo = t0, best = s0, deepest = 0.0, first = -1.0;
    for (int i = 0; i <= n; i++) {
        double t = t0 + (t1 - t0) * i / n;
        double s = point_sdist(b, o.x + t * d.x, o.y + t * d.y);
        best = fmin(best, s);
        if (s <= 0.0 && first < 0.0) {
            double a = lo, z = t;
            for (int k = 0; k < 60; k++) {
                double m = 0.5 * (a + z);
                if (point_sdist(b, o.x + m * d.x, o.y + m * d.y) <= 0.0)
                    z = m;
                else
                    a = m;
            }
            first = z;
        }
        if (s > 0.0) lo = t;
        deepest = fmax(deepest, -s);
    }
    if (first >= 0.0 && deepest >= 2.0 * ORACLE_STEP) return (judged){V_HIT, first, 0.0};
    if (best > 2.0 * ORACLE_STEP) return j;
    j.v = V_UNSURE;
    j.fraction = first >= 0.0 ? first : 0.0;
    return j;
}

/* The shape s moving from p by d against body b: depth at the start, else sub-stepped. */
static judged oracle_cast(const geom_shape *s, vec2 p, vec2 d, const wo_body *b) {
    wo_body a0 = wo_make(s, p);
    double depth0 = wo_depth(&a0, b);
    if (depth0 > 1e-4) return (judged){V_HIT, 0.0, depth0};
    double g0 = wo_gap(&a0, b);
    if (g0 <= 1e-4) return (judged){V_UNSURE, 0.0, depth0};
    double len = sqrt((double)d.x * d.x + (double)d.y * d.y);
    /* only the stretch where the boxes can meet is sampled */
    double dx = d.x, dy = d.y, t0 = 0.0, t1 = 1.0;
    const double lo[2] = {b->minx - a0.maxx - 0.1, b->miny - a0.maxy - 0.1};
    const double hi[2] = {b->maxx - a0.minx + 0.1, b->maxy - a0.miny + 0.1};
    const double dd[2] = {dx, dy};
    for (int k = 0; k < 2; k++) {
        if (dd[k] == 0.0) {
            if (!(lo[k] < 0.0 && 0.0 < hi[k])) return (judged){V_MISS, 0, 0};
            continue;
        }
        double ta = lo[k] / dd[k], tb = hi[k] / dd[k];
        if (ta > tb) {
            double t = ta;
            ta = tb, tb = t;
        }
        t0 = fmax(t0, ta), t1 = fmin(t1, tb);
    }
    if (!(t0 <= t1)) return (judged){V_MISS, 0, 0};
    int n = 1 + (int)ceil((t1 - t0) * len / ORACLE_STEP);
    double prev = t0, best = INFINITY, deepest = 0.0, first = -1.0;
    for (int i = 0; i <= n; i++) {
        double t = t0 + (t1 - t0) * i / n;
        wo_body at = wo_make_at(s, p.x + t * dx, p.y + t * dy);
        double g = wo_gap(&at, b);
        best = fmin(best, g);
        deepest = fmax(deepest, -g);
        if (g <= 0.0 && first < 0.0) {
            double za = prev, zb = t;
            for (int k = 0; k < 50; k++) {
                double m = 0.5 * (za + zb);
                wo_body am = wo_make_at(s, p.x + m * dx, p.y + m * dy);
                if (wo_gap(&am, b) <= 0.0)
                    zb = m;
                else
                    za = m;
            }
            first = zb;
        }
        if (g > 0.0) prev = t;
    }
    if (first >= 0.0 && deepest >= 2.0 * ORACLE_STEP) return (judged){V_HIT, first, 0.0};
    if (best > 2.0 * ORACLE_STEP) return (judged){V_MISS, 0, 0};
    return (judged){V_UNSURE, first >= 0.0 ? first : 0.0, 0.0};
}

static judged oracle_overlap(const geom_shape *s, vec2 p, const wo_body *b) {
    wo_body a = wo_make(s, p);
    double depth = wo_depth(&a, b);
    if (depth > 1e-4) return (judged){V_HIT, 0.0, depth};
    if (depth == 0.0 && wo_gap(&a, b) > 1e-4) return (judged){V_MISS, 0, 0};
    return (judged){V_UNSURE, 0.0, depth};
}

/* ---- comparing an answer with the oracle ------------------------------------------------------
 */

typedef enum qkind { Q_RAY, Q_OVERLAP, Q_CAST } qkind;

typedef struct query_case {
    qkind kind;
    geom_shape shape; /* overlap, cast */
    vec2 p, d;        /* origin / position, translation */
    bool all;
    world_query_filter filter;
    size_t max;
    uint64_t at_tick;
} query_case;

typedef struct truth {
    world_body_id id;
    judged j;
    wo_body body;
    int kind; /* the body's shape kind */
} truth;

static int compared[4][4];      /* [query shape kind][body shape kind]: definite hits checked */
static int cast_points_checked; /* cast hits whose point was checked on both boundaries */

static world_status run_case(const world *w, const query_case *q, world_hit *out,
                             world_query_result *res) {
    switch (q->kind) {
    case Q_RAY:
        return world_query_ray(w, q->at_tick, q->p, q->d, &q->filter, q->all, out, q->max, res);
    case Q_OVERLAP:
        return world_query_overlap(w, q->at_tick, &q->shape, q->p, &q->filter, out, q->max, res);
    case Q_CAST:
        return world_query_shape_cast(w, q->at_tick, &q->shape, q->p, q->d, &q->filter, q->all, out,
                                      q->max, res);
    }
    return WORLD_ERR_NOT_FOUND;
}

static bool hit_order(const query_case *q, const world_hit *a, const world_hit *b) {
    if (q->kind != Q_OVERLAP && a->fraction != b->fraction) return a->fraction < b->fraction;
    return a->id < b->id;
}

static const truth *find_truth(const truth *t, int n, world_body_id id) {
    for (int i = 0; i < n; i++)
        if (t[i].id == id) return &t[i];
    return NULL;
}

/* Judges one answer (hits[0..count)) against the truths of every body the filter admits. */
static void check_answer(const query_case *q, const world_hit *hits, size_t count, bool truncated,
                         const truth *tr, int nt, const char *label, int case_no) {
    int definite = 0;
    for (int i = 0; i < nt; i++)
        definite += tr[i].j.v == V_HIT;
    size_t cap = q->kind == Q_OVERLAP || q->all ? q->max : 1;
    CHECK_MSG(count <= cap, "%s case %d: %zu hits over the cap %zu", label, case_no, count, cap);
    for (size_t k = 0; k < count; k++) {
        const world_hit *h = &hits[k];
        const truth *t = find_truth(tr, nt, h->id);
        CHECK_MSG(t != NULL, "%s case %d: hit %u is not an admitted body", label, case_no, h->id);
        CHECK_MSG(t->j.v != V_MISS, "%s case %d: body %u reported, oracle says miss (f %g)", label,
                  case_no, h->id, (double)h->fraction);
        for (size_t m = 0; m < k; m++)
            CHECK_MSG(hits[m].id != h->id, "%s case %d: body %u twice", label, case_no, h->id);
        if (k > 0)
            CHECK_MSG(hit_order(q, &hits[k - 1], h), "%s case %d: hits out of order at %zu", label,
                      case_no, k);
        CHECK_MSG(isfinite(h->point.x) && isfinite(h->point.y) && isfinite(h->normal.x) &&
                      isfinite(h->normal.y) && isfinite(h->fraction) && isfinite(h->depth),
                  "%s case %d: non-finite hit", label, case_no);
        CHECK_MSG(h->fraction >= 0.0f && h->fraction <= 1.0f, "%s case %d: fraction %g", label,
                  case_no, (double)h->fraction);
        double nlen = sqrt((double)h->normal.x * h->normal.x + (double)h->normal.y * h->normal.y);
        bool ray_inside = q->kind == Q_RAY && h->fraction == 0.0f && nlen == 0.0;
        if (t->j.v == V_HIT) {
            CHECK_MSG(fabs(h->fraction - t->j.fraction) <= FRACTION_TOL,
                      "%s case %d: body %u fraction %.7f, oracle %.7f", label, case_no, h->id,
                      (double)h->fraction, t->j.fraction);
            if (t->j.depth > 0.0 && q->kind != Q_RAY)
                CHECK_MSG(fabs(h->depth - t->j.depth) <= 1e-4,
                          "%s case %d: body %u depth %.7f, oracle %.7f", label, case_no, h->id,
                          (double)h->depth, t->j.depth);
        }
        if (!ray_inside)
            CHECK_MSG(fabs(nlen - 1.0) < 1e-3, "%s case %d: body %u normal length %g", label,
                      case_no, h->id, nlen);
        bool at_start = h->fraction == 0.0f && (q->kind == Q_RAY ? ray_inside : h->depth > 0.0f);
        if (at_start && q->kind != Q_OVERLAP) {
            CHECK_MSG(h->point.x == q->p.x && h->point.y == q->p.y,
                      "%s case %d: a start inside is reported at the start", label, case_no);
            if (q->kind == Q_RAY) continue;
        } else {
            /* the point lies on the hit body's surface */
            double sd = point_sdist(&t->body, h->point.x, h->point.y);
            CHECK_MSG(fabs(sd) <= 2e-3, "%s case %d: body %u point %g off its surface", label,
                      case_no, h->id, sd);
        }
        if (q->kind == Q_CAST && !at_start) {
            /* the point is where the cast shape meets the body: on the cast shape's boundary
             * placed at the reported fraction (PROTOCOL.md, "Queries"), and the normal points
             * out of the body there (a step along it leaves the body by that step) */
            wo_body at = wo_make_at(&q->shape, q->p.x + (double)h->fraction * q->d.x,
                                    q->p.y + (double)h->fraction * q->d.y);
            double sa = point_sdist(&at, h->point.x, h->point.y);
            CHECK_MSG(fabs(sa) <= 1e-3,
                      "%s case %d: body %u point (%.6f, %.6f) %g off the cast shape at %.7f", label,
                      case_no, h->id, (double)h->point.x, (double)h->point.y, sa,
                      (double)h->fraction);
            double out = point_sdist(&t->body, h->point.x + 0.01 * h->normal.x,
                                     h->point.y + 0.01 * h->normal.y);
            CHECK_MSG(out >= 0.009, "%s case %d: body %u normal (%g, %g) not out of it (%g)", label,
                      case_no, h->id, (double)h->normal.x, (double)h->normal.y, out);
            cast_points_checked++;
        }
        if (q->kind == Q_RAY || (q->kind == Q_CAST && !at_start)) {
            /* the normal faces the motion */
            double dn = (double)h->normal.x * q->d.x + (double)h->normal.y * q->d.y;
            double dl = sqrt((double)q->d.x * q->d.x + (double)q->d.y * q->d.y);
            CHECK_MSG(dn <= 1e-3 * dl, "%s case %d: body %u normal along the motion (%g)", label,
                      case_no, h->id, dn);
        }
        if (q->kind == Q_OVERLAP || (q->kind == Q_CAST && at_start)) {
            /* normal * depth pushes the query shape out of the body */
            if (t->j.v == V_HIT) {
                double push = h->depth + 2e-4;
                wo_body a =
                    wo_make_at(&q->shape, q->p.x + push * h->normal.x, q->p.y + push * h->normal.y);
                CHECK_MSG(wo_depth(&a, &t->body) < 1e-4,
                          "%s case %d: body %u: the MTV leaves %g of overlap", label, case_no,
                          h->id, wo_depth(&a, &t->body));
            }
        }
        if (t->j.v == V_HIT && k < 4) compared[q->kind == Q_RAY ? 0 : q->shape.kind][t->kind]++;
    }
    /* nothing definite is missing: all of them (within the cap), or the first */
    if (q->kind == Q_OVERLAP || q->all) {
        size_t want = 0;
        for (int i = 0; i < nt; i++)
            want += tr[i].j.v != V_MISS;
        if (definite > (int)cap) CHECK_MSG(truncated, "%s case %d: not truncated", label, case_no);
        if (want <= cap) CHECK_MSG(!truncated, "%s case %d: truncated for nothing", label, case_no);
        if (count < cap) {
            for (int i = 0; i < nt; i++) {
                if (tr[i].j.v != V_HIT) continue;
                bool found = false;
                for (size_t k = 0; k < count; k++)
                    found |= hits[k].id == tr[i].id;
                CHECK_MSG(found, "%s case %d: body %u missed (oracle f %.6f)", label, case_no,
                          tr[i].id, tr[i].j.fraction);
            }
        }
    } else {
        CHECK_MSG(!truncated, "%s case %d: a first-hit query truncated", label, case_no);
        double first = INFINITY;
        for (int i = 0; i < nt; i++)
            if (tr[i].j.v == V_HIT) first = fmin(first, tr[i].j.fraction);
        if (isfinite(first)) {
            CHECK_MSG(count == 1, "%s case %d: no hit, oracle first at %.6f", label, case_no,
                      first);
            CHECK_MSG(hits[0].fraction <= first + FRACTION_TOL,
                      "%s case %d: first hit at %.6f, oracle %.6f", label, case_no,
                      (double)hits[0].fraction, first);
        }
    }
}

/* The truth of every body the filter admits, with each body placed where `pos` says. */
static int judge_all(const scene *sc, const query_case *q, const vec2 *pos, truth *tr) {
    int n = 0;
    const world_query_filter *f = &q->filter;
    for (int i = 0; i < sc->count; i++) {
        const scene_body *b = &sc->bodies[i];
        if (f->kinds && !(f->kinds & (1u << b->kind))) continue;
        if (f->category_mask && !(f->category_mask & b->filter.category)) continue;
        if (b->filter.sensor && !f->include_sensors) continue;
        bool excluded = false;
        for (size_t k = 0; k < f->exclude_count; k++)
            excluded |= f->exclude[k] == b->id;
        if (excluded) continue;
        truth *t = &tr[n++];
        t->id = b->id;
        t->kind = b->shape.kind;
        t->body = wo_make(&b->shape, pos[i]);
        if (q->kind == Q_RAY)
            t->j = oracle_ray(&t->body, q->p, q->d);
        else if (q->kind == Q_OVERLAP)
            t->j = oracle_overlap(&q->shape, q->p, &t->body);
        else
            t->j = oracle_cast(&q->shape, q->p, q->d, &t->body);
    }
    return n;
}

static query_case random_case(const scene *sc, qkind kind, world_body_id *exclude_buf) {
    query_case q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.max = HIT_MAX;
    q.all = rng_next() % 2;
    if (kind != Q_RAY) q.shape = random_shape(1 + (int)(rng_next() % 3));
    /* half the time aimed at a body, so hits are common; sometimes from inside one */
    const scene_body *target = &sc->bodies[rng_next() % (uint32_t)sc->count];
    world_body_row info;
    world_body_get(sc->w, target->id, &info);
    uint32_t how = rng_next() % 8;
    if (how == 0) {
        q.p = info.position; /* inside (a polygon's origin may lie outside it: either way) */
    } else {
        q.p = v2(rng_range(-2, 42), rng_range(-2, 42));
    }
    if (how < 4) {
        vec2 to = v2_add(info.position, v2(rng_range(-1, 1), rng_range(-1, 1)));
        q.d = v2_scale(v2_sub(to, q.p), rng_range(0.5, 1.6));
    } else {
        q.d = v2(rng_range(-25, 25), rng_range(-25, 25));
    }
    if (kind == Q_OVERLAP) q.d = v2(0, 0);
    /* the filter matrix: kinds, an excluded body or two, a small cap */
    uint32_t fl = rng_next() % 8;
    if (fl == 1) q.filter.kinds = 1u << WORLD_BODY_STATIC;
    if (fl == 2) q.filter.kinds = 1u << WORLD_BODY_MOVING;
    if (fl == 3) {
        exclude_buf[0] = target->id;
        exclude_buf[1] = sc->bodies[rng_next() % (uint32_t)sc->count].id;
        if (exclude_buf[0] > exclude_buf[1]) {
            world_body_id t = exclude_buf[0];
            exclude_buf[0] = exclude_buf[1], exclude_buf[1] = t;
        }
        q.filter.exclude = exclude_buf;
        q.filter.exclude_count = 2;
    }
    if (fl == 4) q.max = 1 + rng_next() % 3;
    if (fl == 5) q.filter.category_mask = 1u + rng_next() % 7u;
    if (fl == 6 || fl == 5) q.filter.include_sensors = rng_next() % 2;
    return q;
}

/* Runs `cases` random queries of each kind over `scenes` scenes at the present. */
static void queries_present(qkind kind, uint32_t seed, int scenes, int cases) {
    rng.state = seed;
    memset(compared, 0, sizeof compared);
    for (int s = 0; s < scenes; s++) {
        scene sc;
        scene_make(&sc, 30, 30);
        world_step(sc.w);
        vec2 pos[SCENE_MAX];
        for (int i = 0; i < sc.count; i++) {
            world_body_row info;
            world_body_get(sc.w, sc.bodies[i].id, &info);
            pos[i] = info.position;
        }
        for (int c = 0; c < cases; c++) {
            world_body_id excl[2];
            query_case q = random_case(&sc, kind, excl);
            world_hit hits[HIT_MAX];
            world_query_result res;
            CHECK(run_case(sc.w, &q, hits, &res) == WORLD_OK);
            CHECK(res.tick == world_tick(sc.w));
            truth tr[SCENE_MAX];
            int nt = judge_all(&sc, &q, pos, tr);
            int before = harness_failed_checks;
            check_answer(&q, hits, res.count, res.truncated, tr, nt, "present", s * cases + c);
            if (harness_failed_checks != before) {
                fprintf(stderr, "  seed %u scene %d case %d kind %d all %d p (%g,%g) d (%g,%g)\n",
                        seed, s, c, kind, q.all, (double)q.p.x, (double)q.p.y, (double)q.d.x,
                        (double)q.d.y);
                world_destroy(sc.w);
                return;
            }
        }
        world_destroy(sc.w);
    }
    fprintf(stderr, "  kind %d: definite hits compared per [query shape][body shape]:", kind);
    for (int a = 0; a <= 3; a++)
        for (int b = 1; b <= 3; b++)
            if (compared[a][b]) fprintf(stderr, " %d/%d:%d", a, b, compared[a][b]);
    fputc('\n', stderr);
    /* every shape pair was met by definite hits */
    for (int a = kind == Q_RAY ? 0 : 1; a <= (kind == Q_RAY ? 0 : 3); a++)
        for (int b = 1; b <= 3; b++) {
            /* turned boxes are 4-gons (geom_shape_rotate): counted as polygons */
            if (turn_shapes && (a == GEOM_SHAPE_BOX || b == GEOM_SHAPE_BOX)) continue;
            CHECK_MSG(compared[a][b] >= 20, "query shape %d against body shape %d: %d hits", a, b,
                      compared[a][b]);
        }
}

static void test_ray_casts(void) { queries_present(Q_RAY, 0x1234567u, 40, 100); }
static void test_overlaps(void) { queries_present(Q_OVERLAP, 0x2345678u, 40, 100); }
static void test_shape_casts(void) { queries_present(Q_CAST, 0x3456789u, 40, 100); }

/* Issue 28: scenes of turned boxes, turned polygons and circles, cast at by turned shapes of every
 * kind, first hit and all; every hit's point on both boundaries (check_answer). */
static void test_shape_casts_turned(void) {
    turn_shapes = true;
    cast_points_checked = 0;
    queries_present(Q_CAST, 0x28282828u, 40, 100);
    turn_shapes = false;
    fprintf(stderr, "  %d cast points checked\n", cast_points_checked);
    CHECK_MSG(cast_points_checked >= 2000, "%d cast points checked", cast_points_checked);
}

/* The truncation rules, exactly: the capped answer is the first `max` of the uncapped one (casts
 * by fraction then id, overlaps by id), truncated only when more existed. */
static void test_truncation(void) {
    rng.state = 0x51u;
    int truncated_seen = 0;
    for (int s = 0; s < 10; s++) {
        scene sc;
        scene_make(&sc, 40, 40);
        world_step(sc.w);
        for (int c = 0; c < 60; c++) {
            world_body_id excl[2];
            query_case q = random_case(&sc, (qkind)(c % 3), excl);
            q.all = true;
            q.filter = (world_query_filter){0};
            if (q.kind == Q_OVERLAP) q.shape = random_shape(GEOM_SHAPE_CIRCLE);
            if (q.kind == Q_OVERLAP) q.shape.u.radius = 8.0f;
            q.max = HIT_MAX;
            world_hit full[HIT_MAX], part[HIT_MAX];
            world_query_result rf, rp;
            CHECK(run_case(sc.w, &q, full, &rf) == WORLD_OK);
            CHECK(!rf.truncated);
            q.max = 1 + rng_next() % 4;
            CHECK(run_case(sc.w, &q, part, &rp) == WORLD_OK);
            CHECK_MSG(rp.truncated == (rf.count > q.max), "case %d: %zu of %zu, truncated %d", c,
                      rp.count, rf.count, rp.truncated);
            CHECK(rp.count == (rf.count < q.max ? rf.count : q.max));
            for (size_t k = 0; k < rp.count; k++)
                CHECK_MSG(memcmp(&part[k], &full[k], sizeof part[k]) == 0, "case %d hit %zu", c, k);
            truncated_seen += rp.truncated;
            /* the first hit of a non-`all` cast is the first of the full list */
            if (q.kind != Q_OVERLAP && rf.count > 0) {
                q.all = false;
                q.max = HIT_MAX;
                CHECK(run_case(sc.w, &q, part, &rp) == WORLD_OK);
                CHECK(rp.count == 1 && !rp.truncated &&
                      memcmp(&part[0], &full[0], sizeof part[0]) == 0);
            }
        }
        world_destroy(sc.w);
    }
    CHECK(truncated_seen > 50);
}

/* The filter matrix: every category mask over three bits, sensors in or out, each kind set, over a
 * scene of mixed categories and sensors, against a count by hand; then a long sorted exclusion
 * list (the world binary-searches it). */
static void test_filters(void) {
    rng.state = 0x77u;
    scene sc;
    scene_make(&sc, 30, 30);
    world_step(sc.w);
    geom_shape big;
    geom_make_circle(100.0f, &big);
    world_hit hits[HIT_MAX];
    world_query_result r;
    world_query_filter f = {0};
    int sensors = 0, other_categories = 0;
    for (int i = 0; i < sc.count; i++) {
        sensors += sc.bodies[i].filter.sensor;
        other_categories += sc.bodies[i].filter.category != WORLD_DEFAULT_CATEGORY;
    }
    CHECK(sensors > 0 && other_categories > 0);
    for (uint32_t mask = 0; mask < 8; mask++)
        for (int sens = 0; sens < 2; sens++)
            for (unsigned kinds = 0; kinds < 4; kinds++) {
                f = (world_query_filter){
                    .kinds = kinds << 1, .category_mask = mask, .include_sensors = sens};
                int want = 0;
                for (int i = 0; i < sc.count; i++) {
                    const scene_body *b = &sc.bodies[i];
                    if (kinds && !((kinds << 1) & (1u << b->kind))) continue;
                    if (mask && !(mask & b->filter.category)) continue;
                    if (b->filter.sensor && !sens) continue;
                    want++;
                }
                CHECK(world_query_overlap(sc.w, 0, &big, v2(20, 20), &f, hits, HIT_MAX, &r) ==
                      WORLD_OK);
                CHECK_MSG((int)r.count == want, "mask %u sensors %d kinds %u: %zu, want %d", mask,
                          sens, kinds, r.count, want);
            }
    f = (world_query_filter){.kinds = 1u << WORLD_BODY_MOVING, .include_sensors = true};
    CHECK(world_query_overlap(sc.w, 0, &big, v2(20, 20), &f, hits, HIT_MAX, &r) == WORLD_OK);
    for (size_t k = 0; k < r.count; k++) {
        world_body_row info;
        CHECK(world_body_get(sc.w, hits[k].id, &info) && info.kind == WORLD_BODY_MOVING);
    }
    CHECK(r.count > 0);
    /* every other body excluded, in a sorted list */
    world_body_id ex[SCENE_MAX];
    size_t ne = 0;
    for (int i = 0; i < sc.count; i += 2)
        ex[ne++] = sc.bodies[i].id;
    for (size_t a = 1; a < ne; a++)
        for (size_t b = a; b > 0 && ex[b - 1] > ex[b]; b--) {
            world_body_id t = ex[b];
            ex[b] = ex[b - 1], ex[b - 1] = t;
        }
    f = (world_query_filter){.exclude = ex, .exclude_count = ne, .include_sensors = true};
    CHECK(world_query_overlap(sc.w, 0, &big, v2(20, 20), &f, hits, HIT_MAX, &r) == WORLD_OK);
    CHECK(r.count == (size_t)sc.count - ne);
    for (size_t k = 0; k < r.count; k++)
        for (size_t e = 0; e < ne; e++)
            CHECK(hits[k].id != ex[e]);
    world_destroy(sc.w);
}

/* world_query_result.work (issue 32: net charges a query by it): grows with the area of an
 * overlap, the length of a ray or cast and the bodies met; 0 for a refused query; the same now
 * and from the history when the movers stand still. */
static void test_query_work(void) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_bodies = 4096;
    world *w = world_create(&cfg);
    CHECK(w != NULL && world_set_history(w, 4));
    geom_shape box, small;
    geom_make_box(v2(0.5f, 0.5f), &small);
    world_body_id id;
    for (int i = 0; i < 400; i++)
        CHECK(world_spawn(w, i % 2 ? WORLD_BODY_MOVING : WORLD_BODY_STATIC, &small,
                          v2(-400.0f + 40.0f * (float)(i % 20), -400.0f + 40.0f * (float)(i / 20)),
                          1, &id, NULL) == WORLD_OK);
    world_step(w);
    world_step(w);
    world_hit hits[512];
    world_query_result r;
    uint64_t last = 0;
    for (float h = 1.0f; h <= 500.0f; h *= 4.0f) { /* overlaps: 2x2 to the whole arena */
        geom_make_box(v2(h, h), &box);
        CHECK(world_query_overlap(w, 0, &box, v2(0, 0), NULL, hits, 512, &r) == WORLD_OK);
        CHECK(r.work > last);
        last = r.work;
        uint64_t now = r.work;
        CHECK(world_query_overlap(w, world_tick(w) - 1, &box, v2(0, 0), NULL, hits, 512, &r) ==
              WORLD_OK);
        CHECK(r.work == now);
    }
    last = 0;
    for (float len = 30.0f; len <= 900.0f; len *= 3.0f) { /* rays and casts, longer and longer */
        CHECK(world_query_ray(w, 0, v2(-450, 1), v2(len, 0), NULL, true, hits, 512, &r) ==
              WORLD_OK);
        CHECK(r.work > last);
        world_query_result c;
        CHECK(world_query_shape_cast(w, 0, &small, v2(-450, 1), v2(len, 0), NULL, true, hits, 512,
                                     &c) == WORLD_OK);
        CHECK(c.work >= r.work);
        last = r.work;
    }
    /* the bodies met count: the same ray through a row of bodies costs more than beside it */
    world_query_result empty;
    CHECK(world_query_ray(w, 0, v2(-450, -420), v2(900, 0), NULL, true, hits, 512, &empty) ==
          WORLD_OK);
    CHECK(world_query_ray(w, 0, v2(-450, -400), v2(900, 0), NULL, true, hits, 512, &r) == WORLD_OK);
    CHECK(r.count == 20 && r.work > empty.work);
    CHECK(world_query_ray(w, 0, v2(NAN, 0), v2(1, 0), NULL, false, hits, 4, &r) ==
          WORLD_ERR_NOT_FINITE);
    CHECK(r.work == 0);
    world_destroy(w);
}

/* Errors: non-finite input, degenerate shapes, ticks out of range; the answer's tick. */
static void test_query_errors(void) {
    world_config cfg;
    world_config_default(&cfg);
    world *w = world_create(&cfg);
    CHECK(w != NULL);
    geom_shape box;
    geom_make_box(v2(1, 1), &box);
    world_hit hits[4];
    world_query_result r;
    CHECK(world_query_ray(w, 0, v2(NAN, 0), v2(1, 0), NULL, false, hits, 4, &r) ==
          WORLD_ERR_NOT_FINITE);
    CHECK(world_query_ray(w, 0, v2(0, 0), v2(INFINITY, 0), NULL, false, hits, 4, &r) ==
          WORLD_ERR_NOT_FINITE);
    CHECK(world_query_shape_cast(w, 0, &box, v2(0, 0), v2(0, NAN), NULL, false, hits, 4, &r) ==
          WORLD_ERR_NOT_FINITE);
    CHECK(world_query_overlap(w, 0, &box, v2(NAN, 0), NULL, hits, 4, &r) == WORLD_ERR_NOT_FINITE);
    geom_shape bad = box;
    bad.u.half_extents.x = 0.0f;
    CHECK(world_query_overlap(w, 0, &bad, v2(0, 0), NULL, hits, 4, &r) == WORLD_ERR_INVALID_SHAPE);
    CHECK(world_query_shape_cast(w, 0, &bad, v2(0, 0), v2(1, 0), NULL, true, hits, 4, &r) ==
          WORLD_ERR_INVALID_SHAPE);
    /* no history kept: only the present */
    world_step(w);
    world_step(w);
    CHECK(world_query_ray(w, 3, v2(0, 0), v2(1, 0), NULL, false, hits, 4, &r) ==
          WORLD_ERR_FUTURE_TICK);
    CHECK(world_query_ray(w, 1, v2(0, 0), v2(1, 0), NULL, false, hits, 4, &r) ==
          WORLD_ERR_HISTORY_EXPIRED);
    CHECK(world_query_ray(w, 2, v2(0, 0), v2(1, 0), NULL, false, hits, 4, &r) == WORLD_OK);
    CHECK(r.tick == 2 && r.count == 0);
    CHECK(world_query_ray(w, 0, v2(0, 0), v2(1, 0), NULL, false, hits, 4, &r) == WORLD_OK);
    CHECK(r.tick == 2);
    /* a zero-length ray hits what holds its origin; the bounds are not a body */
    world_body_id id;
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &box, v2(5, 5), 0, &id, NULL) == WORLD_OK);
    CHECK(world_query_ray(w, 0, v2(5.5f, 5), v2(0, 0), NULL, false, hits, 4, &r) == WORLD_OK);
    CHECK(r.count == 1 && hits[0].id == id && hits[0].fraction == 0.0f);
    CHECK(world_query_ray(w, 0, v2(0, 0), v2(0, 10000), NULL, true, hits, 4, &r) == WORLD_OK);
    CHECK(r.count == 0);
    /* an idle world's history (the default window) costs little: a 64-cell table per tick */
    CHECK(world_set_history(w, 30));
    world_step(w);
    world_stats ws;
    world_get_stats(w, &ws);
    CHECK_MSG(ws.history_bytes < 12 * 1024, "idle history: %zu bytes", ws.history_bytes);
    world_destroy(w);
}

static bool vec_equal_or_close(vec2 a, vec2 b) {
    return fabsf(a.x - b.x) + fabsf(a.y - b.y) < 0.05f;
}

/* History: movers wander for 40 ticks with 30 kept; queries at past ticks are judged against the
 * positions the test recorded at those ticks (statics as they are). With one_shape every mover is
 * the same box, which the frames remember (their records are then tested without a lookup of the
 * mover, until one is despawned). With turning the movers also turn (issue 16): each past query is
 * judged against the shapes as they stood at its tick, the body-local shape turned by the angle
 * the test recorded then (geom_shape_rotate, not the world's own orientation code). */
static void history_scenes(uint32_t seed, bool one_shape, bool turning) {
    rng.state = seed;
    int judged_cases = 0, rewound_hits = 0, turned_hits = 0;
    for (int s = 0; s < 6; s++) {
        scene sc;
        geom_shape mover_shape;
        if (one_shape) mover_shape = random_shape(GEOM_SHAPE_BOX);
        scene_make_shaped(&sc, 25, one_shape ? 35 : 34, one_shape ? &mover_shape : NULL);
        /* (mixed shapes) one mover wider than a history cell: kept in the frames' tail */
        scene_body *big = &sc.bodies[sc.count];
        big->kind = WORLD_BODY_MOVING;
        big->shape = random_shape_unturned(GEOM_SHAPE_BOX);
        big->shape.u.half_extents = v2(5.0f, 4.0f);
        big->filter = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
        if (!one_shape) {
            CHECK(world_spawn(sc.w, WORLD_BODY_MOVING, &big->shape, v2(20, 20), 1, &big->id,
                              NULL) == WORLD_OK);
            sc.count++;
        }
        CHECK(world_set_history(sc.w, 30));
        enum { TICKS = 40 };
        static vec2 pos[TICKS + 1][SCENE_MAX];
        static float angle[TICKS + 1][SCENE_MAX];
        for (int t = 1; t <= TICKS; t++) {
            if (t % 10 == 1)
                for (int i = 0; i < sc.count; i++)
                    if (sc.bodies[i].kind == WORLD_BODY_MOVING) {
                        vec2 v = v2(rng_range(-30, 30), rng_range(-30, 30));
                        if (turning)
                            world_set_intent_turning(sc.w, sc.bodies[i].id, v, rng_range(-8, 8),
                                                     (uint32_t)t);
                        else
                            world_set_intent(sc.w, sc.bodies[i].id, v, (uint32_t)t);
                    }
            world_step(sc.w);
            for (int i = 0; i < sc.count; i++) {
                world_body_row info;
                world_body_get(sc.w, sc.bodies[i].id, &info);
                pos[t][i] = info.position;
                angle[t][i] = info.angle;
            }
        }
        CHECK(world_tick(sc.w) == TICKS);
        CHECK(world_history_oldest(sc.w) == TICKS - 30);
        world_hit hits[HIT_MAX];
        world_query_result r;
        CHECK(world_query_ray(sc.w, TICKS - 31, v2(0, 0), v2(1, 1), NULL, true, hits, 4, &r) ==
              WORLD_ERR_HISTORY_EXPIRED);
        CHECK(world_query_ray(sc.w, TICKS + 1, v2(0, 0), v2(1, 1), NULL, true, hits, 4, &r) ==
              WORLD_ERR_FUTURE_TICK);
        for (int c = 0; c < 300; c++) {
            int back = (int)(rng_next() % 31);
            world_body_id excl[2];
            query_case q = random_case(&sc, (qkind)(c % 3), excl);
            q.at_tick = (uint64_t)(TICKS - back);
            CHECK(run_case(sc.w, &q, hits, &r) == WORLD_OK);
            CHECK(r.tick == q.at_tick);
            truth tr[SCENE_MAX];
            /* the scene as it stood then: each body's shape turned by its angle at that tick */
            static scene then_sc;
            then_sc = sc;
            for (int i = 0; i < sc.count; i++)
                if (angle[TICKS - back][i] != 0.0f)
                    CHECK(geom_shape_rotate(&sc.bodies[i].shape, angle[TICKS - back][i],
                                            &then_sc.bodies[i].shape) == GEOM_OK);
            int nt = judge_all(&then_sc, &q, pos[TICKS - back], tr);
            int before = harness_failed_checks;
            check_answer(&q, hits, r.count, r.truncated, tr, nt, "history", c);
            if (harness_failed_checks != before) {
                fprintf(stderr, "  scene %d case %d back %d\n", s, c, back);
                world_destroy(sc.w);
                return;
            }
            judged_cases++;
            /* a hit on a mover that has moved since: the rewind mattered */
            for (size_t k = 0; k < r.count; k++)
                for (int i = 0; i < sc.count; i++)
                    if (sc.bodies[i].id == hits[k].id && sc.bodies[i].kind == WORLD_BODY_MOVING) {
                        rewound_hits += !vec_equal_or_close(pos[TICKS - back][i], pos[TICKS][i]);
                        /* a non-circle turned by a tenth of a turn since */
                        turned_hits += sc.bodies[i].shape.kind != GEOM_SHAPE_CIRCLE &&
                                       fabsf(remainderf(angle[TICKS - back][i] - angle[TICKS][i],
                                                        6.2831853f)) > 0.6f;
                    }
        }
        /* a mover despawned since is left out of past answers (its shape is gone), also when
         * its slot holds a new body */
        int mi = sc.count - 1; /* a box (the big one, or the last of one shape): its position is
                                * inside it */
        geom_shape probe;
        geom_make_circle(0.05f, &probe);
        vec2 then = pos[TICKS - 5][mi];
        CHECK(world_query_overlap(sc.w, TICKS - 5, &probe, then, NULL, hits, HIT_MAX, &r) ==
              WORLD_OK);
        bool seen = false;
        for (size_t k = 0; k < r.count; k++)
            seen |= hits[k].id == sc.bodies[mi].id;
        CHECK(seen);
        CHECK(world_despawn(sc.w, sc.bodies[mi].id) == WORLD_OK);
        CHECK(world_query_overlap(sc.w, TICKS - 5, &probe, then, NULL, hits, HIT_MAX, &r) ==
              WORLD_OK);
        for (size_t k = 0; k < r.count; k++)
            CHECK(hits[k].id != sc.bodies[mi].id);
        world_body_id reborn;
        CHECK(world_spawn(sc.w, WORLD_BODY_MOVING, &sc.bodies[mi].shape, v2(1, 1), 1, &reborn,
                          NULL) == WORLD_OK);
        CHECK(world_query_overlap(sc.w, TICKS - 5, &probe, then, NULL, hits, HIT_MAX, &r) ==
              WORLD_OK);
        for (size_t k = 0; k < r.count; k++)
            CHECK(hits[k].id != sc.bodies[mi].id && hits[k].id != reborn);
        world_stats ws;
        world_get_stats(sc.w, &ws);
        CHECK(ws.history_ticks == 31);
        CHECK(ws.history_records == 31u * 35u);
        CHECK(world_despawn(sc.w, reborn) == WORLD_OK);
        CHECK(ws.history_bytes > 0 && ws.bytes >= ws.history_bytes);
        world_destroy(sc.w);
    }
    CHECK(judged_cases == 6 * 300);
    CHECK(rewound_hits > 100);
    /* enough hits on turned bodies to judge the rewound angle (gcc's build makes 126 of them,
     * clang's exactly 100: the scene's floats differ in the last bits) */
    CHECK_MSG(!turning || turned_hits >= 60, "%d hits on bodies turned since", turned_hits);
}

static void test_history(void) { history_scenes(0xabcdefu, false, false); }
static void test_history_one_shape(void) { history_scenes(0xbcdef1u, true, false); }
/* Issue 28 at past ticks: turned statics, turning movers, turned query shapes. */
static void test_history_turned_casts(void) {
    turn_shapes = true;
    cast_points_checked = 0;
    history_scenes(0x28a7c1u, false, true);
    turn_shapes = false;
    fprintf(stderr, "  %d cast points checked\n", cast_points_checked);
    CHECK_MSG(cast_points_checked >= 300, "%d cast points checked", cast_points_checked);
}
static void test_history_turning(void) { history_scenes(0xcdef12u, false, true); }

/* A world over the scene's bounds for max_bodies bodies, keeping history_ticks of history; NULL
 * when either fails. */
static world *history_world(uint32_t max_bodies, uint32_t history_ticks) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = SCENE_BOUNDS;
    cfg.max_bodies = max_bodies;
    world *w = world_create(&cfg);
    if (w && !world_set_history(w, history_ticks)) {
        world_destroy(w);
        return NULL;
    }
    return w;
}

/* A lone turning bar (issue 16): a frame of one mover notes no shared shape for a turned one (its
 * shape depends on the recorded angle), and a query at a past tick finds the bar where it pointed
 * then, not where it points now. A quarter turn every 10 ticks: vertical at tick 10, horizontal
 * (the other way round) at tick 20. */
static void test_history_turning_bar(void) {
    world *w = history_world(64, 15);
    CHECK(w != NULL);
    geom_shape bar, dot;
    geom_make_box(v2(3.0f, 0.2f), &bar);
    geom_make_circle(0.05f, &dot);
    world_body_id id;
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &bar, v2(20, 20), 1, &id, NULL) == WORLD_OK);
    CHECK(world_set_intent_turning(w, id, v2(0, 0), 3.14159265f * 3.0f, 1) == WORLD_OK);
    float at10 = 0.0f;
    for (int t = 1; t <= 20; t++) {
        world_step(w);
        world_body_row info;
        world_body_get(w, id, &info);
        if (t == 10) at10 = info.angle;
    }
    CHECK_MSG(fabsf(at10 - 1.5707964f) < 0.01f, "angle at tick 10: %g", (double)at10);
    world_hit hits[4];
    world_query_result r;
    const vec2 up = v2(20.0f, 22.5f), right = v2(22.5f, 20.0f);
    CHECK(world_query_overlap(w, 10, &dot, up, NULL, hits, 4, &r) == WORLD_OK);
    CHECK_MSG(r.count == 1 && hits[0].id == id, "tick 10, above the centre: %zu hits", r.count);
    CHECK(world_query_overlap(w, 10, &dot, right, NULL, hits, 4, &r) == WORLD_OK);
    CHECK_MSG(r.count == 0, "tick 10, right of the centre: %zu hits", r.count);
    CHECK(world_query_overlap(w, 20, &dot, right, NULL, hits, 4, &r) == WORLD_OK);
    CHECK_MSG(r.count == 1, "tick 20, right of the centre: %zu hits", r.count);
    CHECK(world_query_overlap(w, 20, &dot, up, NULL, hits, 4, &r) == WORLD_OK);
    CHECK_MSG(r.count == 0, "tick 20, above the centre: %zu hits", r.count);
    /* a ray down the y axis through the centre at tick 10 meets the bar's end, 3 units up */
    CHECK(world_query_ray(w, 10, v2(20.0f, 30.0f), v2(0.0f, -10.0f), NULL, false, hits, 4, &r) ==
          WORLD_OK);
    CHECK(r.count == 1);
    if (r.count == 1) CHECK_NEAR(hits[0].point.y, 23.0, 0.02);
    world_destroy(w);
}

/* A turning bar's past records when the history grows (issue 16): frames are sorted again with
 * how far each mover reaches, and a turned one may have reached further then than it does now.
 * The bar lies along x at tick 5 (reach 1) and at 45 degrees and more when 300 joins make the
 * history grow (reach about 0.7): a probe at its tip at tick 5 still finds it. */
static void test_history_turning_growth(void) {
    world *w = history_world(1024, 20);
    CHECK(w != NULL);
    geom_shape bar, small, dot;
    geom_make_box(v2(1.0f, 0.05f), &bar);
    geom_make_box(v2(0.2f, 0.2f), &small);
    geom_make_circle(0.02f, &dot);
    world_body_id id;
    CHECK(world_spawn_turned(w, WORLD_BODY_MOVING, &bar, v2(20, 20), -0.78539816f, 1, &id, NULL) ==
          WORLD_OK);
    /* an eighth of a turn every 5 ticks */
    CHECK(world_set_intent_turning(w, id, v2(0, 0), 3.14159265f * 3.0f, 1) == WORLD_OK);
    for (int t = 1; t <= 10; t++)
        world_step(w);
    world_body_row info;
    world_body_get(w, id, &info);
    CHECK_MSG(fabsf(info.angle - 0.78539816f) < 0.01f, "angle at tick 10: %g", (double)info.angle);
    for (int i = 0; i < 300; i++) {
        world_body_id other;
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &small,
                          v2(1.0f + (float)(i % 38), 30.0f + 0.8f * (float)(i / 38)), 1, &other,
                          NULL) == WORLD_OK);
    }
    world_step(w); /* records 301 movers: every frame is sorted again */
    world_hit hits[4];
    world_query_result r;
    CHECK(world_query_overlap(w, 5, &dot, v2(20.97f, 20.0f), NULL, hits, 4, &r) == WORLD_OK);
    CHECK_MSG(r.count == 1 && hits[0].id == id, "tick 5, the bar's tip: %zu hits", r.count);
    world_destroy(w);
}

/* The history grows with the movers: frames kept from before a join are sorted again into the
 * larger layout (more cells), and still answer exactly. */
static void test_history_growth(void) {
    world *w = history_world(1024, 20);
    CHECK(w != NULL);
    geom_shape small = random_shape(GEOM_SHAPE_BOX), dot;
    small.u.half_extents = v2(0.3f, 0.3f);
    geom_make_circle(0.01f, &dot);
    world_body_id early[5];
    for (int i = 0; i < 5; i++) {
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &small, v2(4.0f + 7.0f * (float)i, 5.0f), 1,
                          &early[i], NULL) == WORLD_OK);
        world_set_intent(w, early[i], v2(0.0f, 60.0f), 1); /* a unit a tick, upwards */
    }
    vec2 at5[5];
    for (int t = 1; t <= 10; t++) {
        world_step(w);
        for (int i = 0; t == 5 && i < 5; i++) {
            world_body_row info;
            world_body_get(w, early[i], &info);
            at5[i] = info.position;
        }
    }
    world_stats before;
    world_get_stats(w, &before);
    /* 300 more movers, far from the early ones: the next step grows every frame */
    for (int i = 0; i < 300; i++) {
        world_body_id id;
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &small,
                          v2(1.0f + (float)(i % 38), 30.0f + 0.8f * (float)(i / 38)), 1, &id,
                          NULL) == WORLD_OK);
    }
    world_step(w);
    world_stats after;
    world_get_stats(w, &after);
    CHECK(after.history_bytes > before.history_bytes);
    world_hit hits[HIT_MAX];
    world_query_result r;
    for (int i = 0; i < 5; i++) {
        CHECK(world_query_overlap(w, 5, &dot, at5[i], NULL, hits, HIT_MAX, &r) == WORLD_OK);
        CHECK_MSG(r.count == 1 && hits[0].id == early[i], "mover %d at tick 5: %zu hits", i,
                  r.count);
        /* and it has moved on since */
        CHECK(world_query_overlap(w, 0, &dot, at5[i], NULL, hits, HIT_MAX, &r) == WORLD_OK);
        CHECK(r.count == 0);
    }
    geom_shape all;
    geom_make_box(v2(20.0f, 20.0f), &all);
    CHECK(world_query_overlap(w, 5, &all, v2(20, 20), NULL, hits, HIT_MAX, &r) == WORLD_OK);
    CHECK_MSG(r.count == 5, "tick 5 held 5 movers, got %zu", r.count);
    world_destroy(w);
}

TEST_MAIN(TEST(test_ray_casts), TEST(test_overlaps), TEST(test_shape_casts),
          TEST(test_shape_casts_turned), TEST(test_truncation), TEST(test_filters),
          TEST(test_query_errors), TEST(test_query_work), TEST(test_history),
          TEST(test_history_one_shape), TEST(test_history_turning), TEST(test_history_turning_bar),
          TEST(test_history_turning_growth), TEST(test_history_growth),
          TEST(test_history_turned_casts))

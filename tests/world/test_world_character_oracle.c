/* Characters in randomized side-on worlds against a brute-force oracle (issue 34).
 *
 * Each world (fixed seed: world k of the run is seed SEED_BASE + k) has random statics of every
 * shape (boxes, some turned, circles, convex polygons, ramps rising or falling at 5-70 degrees,
 * thin platforms, some one-way), a floor of one box, a row of 1x1 tiles or none (the bottom bound),
 * and one to four characters of every shape with random options (max_slope 25-50 degrees, steps,
 * snap, jump speed, gravity scale, buffer and coyote times), walking and jumping at random, at 30,
 * 60, 120 or 240 Hz under gravities of 10 to 3,000 units/s^2. Characters do not meet each other
 * (mover collisions off, or filters that keep them apart), so every check is between one
 * character and the statics and bounds. After every tick, for every character, in double and by
 * this file's own geometry (world_oracle.h's SAT depth, never geom's queries):
 *   - I2: no static overlaps it by more than the skin; a one-way platform only when it lay wholly
 *     above the platform at the tick's start;
 *   - it lies inside the bounds;
 *   - grounded exactly when a walkable surface lies within the band: the character's shape moved
 *     down in sub-steps of 0.1 skin up to 2.6 skins touches a static whose contact normal (the
 *     SAT axes of least overlap at the first sub-step that overlaps, within a sub-step) lies
 *     within max_slope of up, or the bottom bound. Undecided, either answer passes: a touch
 *     between 1.5 and 2.5 skins, a normal within 1 degree of max_slope, a vertex-on-vertex touch
 *     whose normals straddle it, a one-way platform within a skin of the character's lowest point;
 *   - the ground id is a static the probe may have stood it on (0: the bounds);
 *   - its velocity along up never exceeds its jump speed; a rise in it (a jump) comes only from a
 *     press within the buffer, on the ground or within coyote time after walking off; a press
 *     while grounded with nothing overhead is taken at once;
 *   - a walk (started grounded, no jump) moves across gravity at most as far as its intent asks
 *     (slides, blocks and steps only shorten it).
 * A failure prints its seed, world, tick and character and the scene; COLLIDE_CHARACTER_WORLD=k
 * runs world k alone. COLLIDE_CHARACTER_WORLDS=n sets how many worlds run (default 4,000; 2,000
 * under a sanitizer). */
#include <stdarg.h>

#include "world_test_util.h"

#define SKIN ((double)GEOM_SKIN)
#define PI 3.14159265358979323846
#define SEED_BASE 0x0c4a7u
#define MAX_STATICS 64
#define MAX_CHARS 4
#define TICKS 240
#define DELTA (0.1 * SKIN)      /* the probe's sub-step */
#define PROBE_STEPS 26          /* sub-steps: the probe reaches 2.6 skins */
#define ANGLE_TOL (PI / 180.0)  /* a normal this close to max_slope is undecided */
#define DEPTH_TOL (SKIN + 1e-5) /* I2, float positions near 20 rounded */
#define BOUNDS_TOL 1e-5

#if defined(__SANITIZE_ADDRESS__)
#define ORACLE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORACLE_SANITIZED 1
#endif
#endif
#ifndef ORACLE_SANITIZED
#define ORACLE_SANITIZED 0
#endif

static double frand(collide_rng *r, double lo, double hi) {
    return lo + (hi - lo) * collide_rng_unit_d(r);
}
static bool chance(collide_rng *r, int percent) {
    return (int)(collide_rng_next(r) % 100u) < percent;
}

/* ---- The scene ------------------------------------------------------------------------------- */

typedef struct ocharacter {
    world_body_id id;
    world_character_options opt; /* as the world filled them in */
    int buffer_ticks, coyote_ticks;
    uint64_t press_tick;  /* the first step (world tick) that may take a pending press; 0 none */
    uint64_t ground_tick; /* the last step it ended grounded; 0 never */
    bool jumped;          /* took off by a jump since it was last grounded */
    wo_body start;        /* where the step started */
} ocharacter;

typedef struct oscene {
    world *w;
    float rate, g;
    aabb bounds;
    int statics, chars;
    world_body_id sid[MAX_STATICS];
    wo_body sbody[MAX_STATICS];
    bool one_way[MAX_STATICS];
    ocharacter ch[MAX_CHARS];
    char desc[4096]; /* the scene, for a failure's report */
    size_t desc_len;
} oscene;

static void describe(oscene *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void describe(oscene *s, const char *fmt, ...) {
    if (s->desc_len >= sizeof s->desc - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->desc + s->desc_len, sizeof s->desc - s->desc_len, fmt, ap);
    va_end(ap);
    if (n > 0) s->desc_len += (size_t)n;
    if (s->desc_len > sizeof s->desc - 1) s->desc_len = sizeof s->desc - 1;
}

static void describe_shape(oscene *s, const geom_shape *g) {
    if (g->kind == GEOM_SHAPE_BOX) {
        describe(s, "box(%.9g, %.9g)", (double)g->u.half_extents.x, (double)g->u.half_extents.y);
    } else if (g->kind == GEOM_SHAPE_CIRCLE) {
        describe(s, "circle(%.9g)", (double)g->u.radius);
    } else {
        describe(s, "polygon{");
        for (int i = 0; i < g->u.polygon.count; i++)
            describe(s, "%s(%.9g, %.9g)", i ? ", " : "", (double)g->u.polygon.vertices[i].x,
                     (double)g->u.polygon.vertices[i].y);
        describe(s, "}");
    }
}

/* A ramp: a right triangle whose top face runs `run` across, rising at deg (falling if < 0). */
static geom_shape ramp_shape(double run, double deg) {
    double rise = run * tan(deg * PI / 180.0);
    vec2 v[3];
    float hr = (float)(run / 2);
    if (rise >= 0.0) {
        v[0] = v2(-hr, 0), v[1] = v2(hr, 0), v[2] = v2(hr, (float)rise);
    } else {
        v[0] = v2(-hr, (float)rise), v[1] = v2(hr, (float)rise), v[2] = v2(-hr, 0);
    }
    geom_shape s;
    if (geom_make_polygon(v, 3, &s)) abort();
    return s;
}

/* One random static (kind 0 box, 1 circle, 2 polygon, 3 ramp, 4 thin platform). */
static void spawn_static(oscene *s, collide_rng *r, int kind) {
    geom_shape g;
    float angle = 0.0f;
    bool one_way = false;
    switch (kind) {
    case 0:
        g = wt_box((float)frand(r, 0.3, 4.0), (float)frand(r, 0.2, 2.0));
        if (chance(r, 25)) angle = (float)frand(r, -1.0, 1.0);
        break;
    case 1:
        g = wt_circle((float)frand(r, 0.3, 2.0));
        break;
    case 2:
        g = wt_ngon(3 + (int)(collide_rng_next(r) % 6u), (float)frand(r, 0.5, 2.5),
                    (float)frand(r, 0.0, 6.3));
        break;
    case 3: {
        double deg = frand(r, 5.0, 70.0);
        g = ramp_shape(frand(r, 2.0, 10.0), chance(r, 50) ? deg : -deg);
        break;
    }
    default:
        g = wt_box((float)frand(r, 1.0, 5.0), (float)frand(r, 0.1, 0.3));
        one_way = chance(r, 40);
    }
    vec2 p = v2((float)frand(r, -18.0, 18.0), (float)frand(r, -9.0, 15.0));
    world_body_id id;
    if (s->statics == MAX_STATICS ||
        world_spawn_turned(s->w, WORLD_BODY_STATIC, &g, p, angle, 0, &id, NULL) != WORLD_OK)
        return;
    if (one_way && world_body_set_one_way(s->w, id, true) != WORLD_OK) abort();
    s->sid[s->statics] = id;
    s->one_way[s->statics] = one_way;
    s->sbody[s->statics++] = wo_make_turned(&g, p.x, p.y, angle);
    describe(s, "  static %u%s at (%.9g, %.9g) angle %.9g: ", id, one_way ? " one-way" : "",
             (double)p.x, (double)p.y, (double)angle);
    describe_shape(s, &g);
    describe(s, "\n");
}

/* The floor: none (the bottom bound at y = -10), one box, or a row of 1x1 tiles, top at -8. */
static void spawn_floor(oscene *s, collide_rng *r) {
    int kind = (int)(collide_rng_next(r) % 3u);
    for (int i = 0; kind && i < (kind == 1 ? 1 : 40); i++) {
        geom_shape g = kind == 1 ? wt_box(20.0f, 1.0f) : wt_box(0.5f, 0.5f);
        vec2 p = kind == 1 ? v2(0.0f, -9.0f) : v2((float)i - 19.5f, -8.5f);
        world_body_id id;
        if (world_spawn(s->w, WORLD_BODY_STATIC, &g, p, 0, &id, NULL) != WORLD_OK) abort();
        s->sid[s->statics] = id;
        s->one_way[s->statics] = false;
        s->sbody[s->statics++] = wo_make(&g, p);
    }
    describe(s, "  floor: %s\n", kind == 0 ? "none" : kind == 1 ? "one box" : "40 tiles");
}

static geom_shape char_shape(collide_rng *r, int kind) {
    switch (kind) {
    case 0:
        return wt_box((float)frand(r, 0.2, 0.6), (float)frand(r, 0.3, 0.8));
    case 1:
        return wt_circle((float)frand(r, 0.2, 0.6));
    default:
        return wt_ngon(3 + (int)(collide_rng_next(r) % 6u), (float)frand(r, 0.3, 0.7),
                       (float)frand(r, 0.0, 6.3));
    }
}

static world_character_options random_options(collide_rng *r) {
    world_character_options o = {0};
    o.max_slope = (float)(frand(r, 25.0, 50.0) * PI / 180.0);
    o.step_height = chance(r, 50) ? 0.0f : (float)frand(r, 0.05, 0.5);
    o.snap_distance = chance(r, 50) ? 0.0f : (float)frand(r, 0.05, 0.5);
    o.jump_speed = chance(r, 25) ? 0.0f : (float)frand(r, 3.0, 15.0);
    o.gravity_scale = chance(r, 25) ? 0.0f : (float)frand(r, 0.5, 2.0);
    o.jump_buffer_ms = chance(r, 50) ? 0u : 10u + collide_rng_next(r) % 390u;
    o.coyote_ms = chance(r, 50) ? 0u : 10u + collide_rng_next(r) % 390u;
    return o;
}

/* Whether a body stands clear of every static by margin (the oracle's gap). */
static bool clear_of_statics(const oscene *s, const wo_body *b, double margin) {
    for (int k = 0; k < s->statics; k++)
        if (wo_gap(b, &s->sbody[k]) <= margin) return false;
    return wo_bounds_gap(b, s->bounds) > margin;
}

/* One character of a random shape at a random free place (none if 50 tries find none). */
static void spawn_character(oscene *s, collide_rng *r, bool filters) {
    int kind = (int)(collide_rng_next(r) % 3u);
    geom_shape g = char_shape(r, kind);
    world_character_options o = random_options(r);
    for (int tries = 0; tries < 50; tries++) {
        vec2 p = v2((float)frand(r, -19.0, 19.0), (float)frand(r, -9.0, 19.0));
        wo_body b = wo_make(&g, p);
        if (!clear_of_statics(s, &b, 0.05)) continue;
        ocharacter *c = &s->ch[s->chars];
        memset(c, 0, sizeof *c);
        c->id = wt_spawn(s->w, WORLD_BODY_MOVING, g, p);
        world_character_state st;
        if (!c->id || world_body_set_character(s->w, c->id, &o) != WORLD_OK ||
            !world_body_character(s->w, c->id, &st))
            abort();
        if (filters) {
            world_filter f = {2u, 1u, false}; /* meets the statics (category 1), not its kind */
            if (world_body_set_filter(s->w, c->id, &f) != WORLD_OK) abort();
        }
        c->opt = st.options;
        c->buffer_ticks = (int)ceil(c->opt.jump_buffer_ms * (double)s->rate / 1000.0);
        c->coyote_ticks = (int)ceil(c->opt.coyote_ms * (double)s->rate / 1000.0);
        describe(s,
                 "  character %u at (%.9g, %.9g): max_slope %.9g step %.9g snap %.9g jump %.9g "
                 "scale %.9g buffer %u coyote %u, ",
                 c->id, (double)p.x, (double)p.y, (double)o.max_slope, (double)o.step_height,
                 (double)o.snap_distance, (double)o.jump_speed, (double)o.gravity_scale,
                 o.jump_buffer_ms, o.coyote_ms);
        describe_shape(s, &g);
        describe(s, "\n");
        s->chars++;
        return;
    }
}

static bool build_scene(oscene *s, uint32_t seed) {
    memset(s, 0, sizeof *s);
    collide_rng r = {seed};
    static const float rates[4] = {30.0f, 60.0f, 120.0f, 240.0f};
    s->rate = rates[collide_rng_next(&r) % 4u];
    int band = (int)(collide_rng_next(&r) % 4u);
    s->g = (float)(band < 2    ? frand(&r, 10, 60)
                   : band == 2 ? frand(&r, 60, 400)
                               : frand(&r, 400, 3000));
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = s->bounds = aabb_make(v2(-20, -10), v2(20, 20));
    cfg.tick_rate_hz = s->rate;
    cfg.max_bodies = 128;
    cfg.gravity = v2(0, -s->g);
    s->w = world_create(&cfg);
    if (!s->w) return false;
    bool filters = chance(&r, 50);
    if (!filters) world_set_mover_collisions(s->w, false);
    describe(s, "world seed %u: %g Hz, gravity %.9g, %s\n", seed, (double)s->rate, (double)s->g,
             filters ? "filters" : "mover collisions off");
    spawn_floor(s, &r);
    int n = 4 + (int)(collide_rng_next(&r) % 7u);
    for (int i = 0; i < n; i++)
        spawn_static(s, &r, (int)(collide_rng_next(&r) % 5u));
    int m = 1 + (int)(collide_rng_next(&r) % MAX_CHARS);
    for (int i = 0; i < m; i++)
        spawn_character(s, &r, filters);
    return s->chars > 0;
}

/* ---- The oracle's probe ---------------------------------------------------------------------- */

static wo_body shifted(const wo_body *b, double dy) {
    wo_body m = *b;
    m.cy += dy, m.miny += dy, m.maxy += dy;
    for (int i = 0; i < m.n; i++)
        m.y[i] += dy;
    return m;
}

/* The closest point of a polygon's boundary to (px, py). */
static void closest_on_boundary(const wo_body *p, double px, double py, double *qx, double *qy) {
    double best = INFINITY;
    for (int i = 0; i < p->n; i++) {
        int j = (i + 1) % p->n;
        double ex = p->x[j] - p->x[i], ey = p->y[j] - p->y[i], len_sq = ex * ex + ey * ey;
        double t = len_sq > 0.0 ? ((px - p->x[i]) * ex + (py - p->y[i]) * ey) / len_sq : 0.0;
        t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
        double cx = p->x[i] + t * ex, cy = p->y[i] + t * ey;
        double d = (px - cx) * (px - cx) + (py - cy) * (py - cy);
        if (d < best) best = d, *qx = cx, *qy = cy;
    }
}

/* The up component (cosine of the angle from up) of the unit direction (dx, dy), with the
 * sign flipped when flip (a point inside pushes the other way). */
static double up_of(double dx, double dy, bool flip) {
    double len = sqrt(dx * dx + dy * dy);
    if (!(len > 0.0)) return NAN;
    return (flip ? -dy : dy) / len;
}

/* The up components of the contact normals (out of static s towards character c) when c
 * overlaps s by a hair: for two polygons every separating axis whose overlap is within slack of
 * the least (a vertex on a vertex gives several); with a circle the one closest-point direction.
 * Writes at most 16, returns how many. */
static int contact_ups(const wo_body *c, const wo_body *s, double slack, double *ups) {
    bool in;
    if (c->circle && s->circle) {
        ups[0] = up_of(c->cx - s->cx, c->cy - s->cy, false);
        return 1;
    }
    if (c->circle || s->circle) {
        const wo_body *circ = c->circle ? c : s, *poly = c->circle ? s : c;
        double qx = 0, qy = 0;
        wo_point_boundary(poly, circ->cx, circ->cy, &in);
        closest_on_boundary(poly, circ->cx, circ->cy, &qx, &qy);
        /* out of s towards c: from the closest point to the circle's centre when c is the
         * circle, from the circle's centre to the closest point of c's boundary when s is */
        ups[0] = c->circle ? up_of(circ->cx - qx, circ->cy - qy, in)
                           : up_of(qx - circ->cx, qy - circ->cy, in);
        return 1;
    }
    double o[2 * GEOM_MAX_POLYGON_VERTICES], u[2 * GEOM_MAX_POLYGON_VERTICES], least = INFINITY;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const wo_body *p = pass ? s : c;
        for (int i = 0; i < p->n; i++) {
            int j = (i + 1) % p->n;
            double ex = p->x[j] - p->x[i], ey = p->y[j] - p->y[i], len = sqrt(ex * ex + ey * ey);
            double ax = ey / len, ay = -ex / len; /* outward normal of a counter-clockwise edge */
            double cmin = INFINITY, cmax = -INFINITY, smin = INFINITY, smax = -INFINITY;
            for (int k = 0; k < c->n; k++) {
                double d = c->x[k] * ax + c->y[k] * ay;
                cmin = fmin(cmin, d), cmax = fmax(cmax, d);
            }
            for (int k = 0; k < s->n; k++) {
                double d = s->x[k] * ax + s->y[k] * ay;
                smin = fmin(smin, d), smax = fmax(smax, d);
            }
            /* c leaves along +axis by smax - cmin, along -axis by cmax - smin */
            bool plus = smax - cmin < cmax - smin;
            o[n] = fmin(smax - cmin, cmax - smin);
            u[n++] = plus ? ay : -ay;
            least = fmin(least, o[n - 1]);
        }
    }
    int k = 0;
    for (int i = 0; i < n && k < 16; i++)
        if (o[i] <= least + slack) ups[k++] = u[i];
    return k;
}

typedef enum verdict { V_NO, V_MAYBE, V_YES } verdict;

/* Whether static s grounds character c (at its place after the tick) by the probe: moved down
 * in sub-steps, the first that overlaps s gives the touch's distance and its normals. */
static verdict probe_static(const wo_body *c, const wo_body *s, double cos_lo, double cos_hi) {
    if (s->maxx <= c->minx || c->maxx <= s->minx) return V_NO;
    if (s->maxy < c->miny - (PROBE_STEPS + 1) * DELTA || s->miny > c->maxy) return V_NO;
    for (int k = 0; k <= PROBE_STEPS; k++) {
        wo_body m = shifted(c, -k * DELTA);
        if (!(wo_depth(&m, s) > 0.0)) continue;
        double ups[16];
        int n = contact_ups(&m, s, DELTA + 1e-9, ups);
        bool walk = n > 0, steep = n > 0;
        for (int i = 0; i < n; i++) {
            walk = walk && ups[i] >= cos_lo;   /* within max_slope less the tolerance */
            steep = steep && ups[i] <= cos_hi; /* beyond max_slope and the tolerance */
        }
        double d = k * DELTA;
        if (steep || d - DELTA >= 2.5 * SKIN) return V_NO;
        return walk && d <= 1.5 * SKIN ? V_YES : V_MAYBE;
    }
    return V_NO;
}

/* The oracle's answer for a character at its place: V_YES grounded, V_NO not, V_MAYBE either.
 * may[] marks the statics it may stand on (and may_bounds the bottom bound). */
static verdict ground_oracle(const oscene *s, const ocharacter *ch, const wo_body *c, bool *may,
                             bool *may_bounds) {
    double slope = ch->opt.max_slope;
    double cos_lo = cos(slope - ANGLE_TOL), cos_hi = cos(slope + ANGLE_TOL);
    verdict v = V_NO;
    double bottom = c->miny - s->bounds.min.y;
    *may_bounds = bottom < 2.5 * SKIN;
    if (bottom <= 1.5 * SKIN)
        v = V_YES;
    else if (*may_bounds)
        v = V_MAYBE;
    for (int k = 0; k < s->statics; k++) {
        may[k] = false;
        verdict p = probe_static(c, &s->sbody[k], cos_lo, cos_hi);
        if (p != V_NO && s->one_way[k]) {
            /* a one-way body bears it only from its up side (within the skin) */
            double above = c->miny - s->sbody[k].maxy;
            if (above < -SKIN - 1e-5)
                p = V_NO;
            else if (above < -SKIN + 1e-5)
                p = V_MAYBE;
        }
        may[k] = p != V_NO;
        if (p > v) v = p;
    }
    return v;
}

/* ---- The checks ------------------------------------------------------------------------------ */

enum {
    F_I2,
    F_BOUNDS,
    F_NOT_GROUNDED,
    F_GROUNDED,
    F_GROUND_ID,
    F_FLY,
    F_JUMP,
    F_MISSED,
    F_FAST,
    F_COUNT
};
static const char *const FAILURE[F_COUNT] = {
    "overlaps a static beyond the skin",
    "outside the bounds",
    "not grounded where the oracle finds ground",
    "grounded where the oracle finds none",
    "stands on a body the probe cannot reach",
    "velocity along up above its jump speed",
    "a jump without a press in its buffer or off the ground",
    "a press on the ground not taken",
    "a walk faster across gravity than its intent"};

typedef struct tally {
    int failures[F_COUNT];
    long checks, grounded_yes, grounded_no, undecided, jumps;
} tally;

/* Records a failure: counts it, and prints the first of each kind with its scene. */
static void fail(tally *t, int kind, const oscene *s, int tick, int ch, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void fail(tally *t, int kind, const oscene *s, int tick, int ch, const char *fmt, ...) {
    if (t->failures[kind]++ > 0) return;
    world_body_row row;
    world_body_get(s->w, s->ch[ch].id, &row);
    fprintf(stderr, "FIRST FAILURE: %s, tick %d, character %u at (%.9g, %.9g): ", FAILURE[kind],
            tick, s->ch[ch].id, (double)row.position.x, (double)row.position.y);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", s->desc);
}

/* I2 (a one-way platform only from above) and the bounds. */
static void check_overlaps(const oscene *s, int i, const wo_body *c, int tick, tally *t) {
    for (int k = 0; k < s->statics; k++) {
        if (s->one_way[k] && s->ch[i].start.miny < s->sbody[k].maxy - SKIN) continue;
        double d = wo_depth(c, &s->sbody[k]);
        if (d > DEPTH_TOL) {
            fail(t, F_I2, s, tick, i, "%.9g into static %u", d, s->sid[k]);
            break;
        }
    }
    if (wo_bounds_gap(c, s->bounds) < -BOUNDS_TOL)
        fail(t, F_BOUNDS, s, tick, i, "%.9g out", -wo_bounds_gap(c, s->bounds));
}

static void check_ground(const oscene *s, int i, const wo_body *c, int tick, tally *t) {
    bool may[MAX_STATICS], may_bounds;
    verdict v = ground_oracle(s, &s->ch[i], c, may, &may_bounds);
    world_character_state st;
    if (!world_body_character(s->w, s->ch[i].id, &st)) abort();
    t->grounded_yes += v == V_YES, t->grounded_no += v == V_NO, t->undecided += v == V_MAYBE;
    if (v == V_YES && !st.grounded) fail(t, F_NOT_GROUNDED, s, tick, i, "lowest %.9g", c->miny);
    if (v == V_NO && st.grounded)
        fail(t, F_GROUNDED, s, tick, i, "lowest %.9g, ground %u", c->miny, st.ground);
    if (!st.grounded) return;
    bool known = st.ground == WORLD_NULL_BODY && may_bounds;
    for (int k = 0; k < s->statics && !known; k++)
        known = may[k] && s->sid[k] == st.ground;
    if (!known && v != V_NO) fail(t, F_GROUND_ID, s, tick, i, "ground %u", st.ground);
}

/* Whether a static (or the top bound) lies within dist above the character. */
static bool blocked_above(const oscene *s, const wo_body *c, double dist) {
    if (s->bounds.max.y - c->maxy <= dist) return true;
    for (int k = 0; k < s->statics; k++) {
        const wo_body *b = &s->sbody[k];
        if (b->maxx > c->minx && c->maxx > b->minx && b->maxy > c->miny &&
            b->miny <= c->maxy + dist)
            return true;
    }
    return false;
}

/* The jump rules, from the velocity along up before (vy0, grounded0) and after the step. */
static bool check_jump(oscene *s, int i, float vy0, bool grounded0, int tick, tally *t) {
    ocharacter *ch = &s->ch[i];
    world_character_state st;
    if (!world_body_character(s->w, ch->id, &st)) abort();
    uint64_t now = world_tick(s->w);
    if (!(st.vertical <= ch->opt.jump_speed + 1e-3f))
        fail(t, F_FLY, s, tick, i, "%.9g up, jump speed %.9g", (double)st.vertical,
             (double)ch->opt.jump_speed);
    /* within the buffer: steps press_tick .. press_tick + buffer - 1, give or take one */
    bool pending = ch->press_tick && now - ch->press_tick <= (uint64_t)ch->buffer_ticks;
    bool jumped = st.vertical > fmaxf(vy0, 0.0f) + 1e-3f;
    if (jumped) {
        t->jumps++;
        bool coyote = !ch->jumped && ch->ground_tick &&
                      now - 1 - ch->ground_tick <= (uint64_t)ch->coyote_ticks + 1;
        if (!pending || !(grounded0 || coyote))
            fail(t, F_JUMP, s, tick, i,
                 "%.9g -> %.9g up, pressed at %llu, now %llu, last grounded %llu, jumped %d",
                 (double)vy0, (double)st.vertical, (unsigned long long)ch->press_tick,
                 (unsigned long long)now, (unsigned long long)ch->ground_tick, ch->jumped);
        ch->jumped = true, ch->press_tick = 0;
    } else if (grounded0 && ch->press_tick == now && ch->opt.jump_speed > 0.0f &&
               !blocked_above(s, &ch->start, ch->opt.jump_speed / s->rate + 0.05)) {
        fail(t, F_MISSED, s, tick, i, "%.9g up after the press", (double)st.vertical);
    }
    if (st.grounded) ch->ground_tick = now, ch->jumped = false;
    return jumped;
}

/* A walk (it started the step grounded and did not jump) moves across gravity at most as far as
 * its intent asks: slides and blocks only shorten it, a step goes up, across by the walk and
 * down, a snap straight down. */
static void check_walk(const oscene *s, int i, vec2 from, bool grounded0, bool jumped, int tick,
                       tally *t) {
    vec2 intent, to = wt_pos(s->w, s->ch[i].id);
    if (!grounded0 || jumped || !world_body_intent(s->w, s->ch[i].id, &intent, NULL)) return;
    double want = fabs((double)intent.x) / s->rate, got = fabs((double)to.x - from.x);
    if (got > want * 1.01 + 1e-5)
        fail(t, F_FAST, s, tick, i, "walked %.9g across, its intent %.9g", got, want);
}

/* Random intents: a new walk now and then (its part along gravity is noise the world ignores),
 * and a jump press one tick in 25. */
static void drive(oscene *s, collide_rng *r, int tick) {
    for (int i = 0; i < s->chars; i++) {
        ocharacter *ch = &s->ch[i];
        if (tick % 30 == i * 7) {
            vec2 v =
                chance(r, 20) ? v2(0, 0) : v2((float)frand(r, -10, 10), (float)frand(r, -10, 10));
            world_set_intent(s->w, ch->id, v, (uint32_t)tick + 1u);
        }
        if (chance(r, 4)) {
            world_character_jump(s->w, ch->id);
            ch->press_tick = world_tick(s->w) + 1;
        }
    }
}

/* COLLIDE_CHARACTER_TRACE=id prints that character's every tick (with COLLIDE_CHARACTER_WORLD). */
static int trace = -1;
static void trace_tick(const oscene *s, int i, const wo_body *c) {
    world_character_state st;
    world_body_row row;
    vec2 intent;
    if (!world_body_character(s->w, s->ch[i].id, &st) || !world_body_get(s->w, s->ch[i].id, &row) ||
        !world_body_intent(s->w, s->ch[i].id, &intent, NULL))
        return;
    printf("tick %llu: (%.9g, %.9g) lowest %.9g, up %.9g, grounded %d on %u, intent (%g, %g)\n",
           (unsigned long long)world_tick(s->w), (double)row.position.x, (double)row.position.y,
           c->miny, (double)st.vertical, st.grounded, st.ground, (double)intent.x,
           (double)intent.y);
}

/* One world, every tick checked. */
static void run_world(uint32_t seed, tally *t) {
    oscene *s = malloc(sizeof *s);
    if (!s) abort();
    if (!build_scene(s, seed)) {
        if (s->w) world_destroy(s->w);
        free(s);
        return;
    }
    collide_rng r = {seed ^ 0x9e3779b9u};
    float vy0[MAX_CHARS];
    bool g0[MAX_CHARS];
    vec2 p0[MAX_CHARS];
    for (int tick = 0; tick < TICKS; tick++) {
        drive(s, &r, tick);
        for (int i = 0; i < s->chars; i++) {
            world_character_state st;
            if (!world_body_character(s->w, s->ch[i].id, &st) ||
                !wt_body(s->w, s->ch[i].id, &s->ch[i].start))
                abort();
            vy0[i] = st.vertical, g0[i] = st.grounded, p0[i] = wt_pos(s->w, s->ch[i].id);
        }
        world_step(s->w);
        for (int i = 0; i < s->chars; i++) {
            wo_body c;
            if (!wt_body(s->w, s->ch[i].id, &c)) abort();
            if ((int)s->ch[i].id == trace) trace_tick(s, i, &c);
            t->checks++;
            check_overlaps(s, i, &c, tick, t);
            check_ground(s, i, &c, tick, t);
            bool jumped = check_jump(s, i, vy0[i], g0[i], tick, t);
            check_walk(s, i, p0[i], g0[i], jumped, tick, t);
        }
    }
    world_destroy(s->w);
    free(s);
}

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static void test_random_worlds(void) {
    tally t;
    memset(&t, 0, sizeof t);
    int only = env_int("COLLIDE_CHARACTER_WORLD", -1);
    trace = env_int("COLLIDE_CHARACTER_TRACE", -1);
    int worlds = env_int("COLLIDE_CHARACTER_WORLDS", ORACLE_SANITIZED ? 2000 : 4000);
    for (int k = only >= 0 ? only : 0; k < (only >= 0 ? only + 1 : worlds); k++)
        run_world(SEED_BASE + (uint32_t)k, &t);
    printf("%ld character-ticks: oracle grounded %ld, not %ld, undecided %ld; %ld jumps\n",
           t.checks, t.grounded_yes, t.grounded_no, t.undecided, t.jumps);
    for (int f = 0; f < F_COUNT; f++)
        if (t.failures[f]) printf("  %d ticks: %s\n", t.failures[f], FAILURE[f]);
    /* the scenes must exercise what they check */
    CHECK(only >= 0 || (t.grounded_yes > t.checks / 5 && t.grounded_no > t.checks / 5 &&
                        t.undecided < t.checks / 50 && t.jumps > 100));
    for (int f = 0; f < F_COUNT; f++)
        CHECK_MSG(t.failures[f] == 0, "%d ticks: %s", t.failures[f], FAILURE[f]);
}

TEST_MAIN(TEST(test_random_worlds))

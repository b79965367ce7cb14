/* One-way bodies (PROTOCOL.md SpawnBody.one_way, world_one_way.c): random scenes with fixed seeds
 * checked tick by tick against brute-force oracles (world_oracle.h, in double, never geom's):
 * one-way platforms of every shape, static and moving, turned by an angle, and movers of every
 * shape at speeds up to the max speed and several tick rates. A mover wholly on the up side and
 * moving against up never ends a tick more than the skin inside the platform nor sweeps through
 * it (the tick's chord, sub-stepped); one moving up or across passes as if it were not there; rays
 * and casts hit only against up and not from inside; overlaps report it; contacts begin only
 * where it blocks; the same inputs give the same state hashes (I6). */
#include "world_test_util.h"

#define SKIN GEOM_SKIN

static const float RATES[] = {30.0f, 60.0f, 120.0f, 240.0f};

static float frand(collide_rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(collide_rng_next(r) % 1000001u) / 1000000.0f;
}

/* A random shape of each kind: 0 box, 1 polygon, 2 circle; `big` for platforms. */
static geom_shape rand_shape(collide_rng *r, int kind, bool big) {
    float s = big ? 4.0f : 1.0f;
    switch (kind) {
    case 0:
        return big ? wt_box(frand(r, 1.5f, 6.0f), frand(r, 0.1f, 1.0f))
                   : wt_box(frand(r, 0.2f, 1.0f), frand(r, 0.2f, 1.0f));
    case 1:
        return wt_ngon(3 + (int)(collide_rng_next(r) % 6u), frand(r, 0.3f, 1.0f) * s,
                       frand(r, 0.0f, 3.0f));
    default:
        return wt_circle(frand(r, 0.2f, 1.0f) * s * (big ? 0.8f : 1.0f));
    }
}

/* The low and high ends of an oracle body along the unit direction (ux, uy). */
static void wo_extent(const wo_body *b, double ux, double uy, double *lo, double *hi) {
    if (b->circle) {
        double c = b->cx * ux + b->cy * uy;
        *lo = c - b->r, *hi = c + b->r;
        return;
    }
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < b->n; i++) {
        double d = b->x[i] * ux + b->y[i] * uy;
        *lo = fmin(*lo, d), *hi = fmax(*hi, d);
    }
}

/* How far mover a lies on the up side of platform p (up = (ux, uy)): >= 0 wholly on it. */
static double up_separation(const wo_body *a, const wo_body *p, double ux, double uy) {
    double alo, ahi, plo, phi;
    wo_extent(a, ux, uy, &alo, &ahi);
    wo_extent(p, ux, uy, &plo, &phi);
    return alo - phi;
}

static int landing_begins; /* begins seen in ticks the oracle says block */

static bool vec_same(vec2 a, vec2 b) { return a.x == b.x && a.y == b.y; }

/* One random scene: a one-way platform and a mover, and where the mover starts. */
typedef struct scene {
    world *w;
    world_body_id plat, mover;
    geom_shape ps, ms;
    float angle, rate;
    vec2 up, tangent, pv, mv; /* the platform's up and along, both velocities */
} scene;

/* mode 0: the mover above, moving against up; 1: below, moving up; 2: level with it, across. */
static bool scene_make(scene *s, collide_rng *r, int mode, int c) {
    memset(s, 0, sizeof *s);
    world_config cfg;
    world_config_default(&cfg);
    s->rate = RATES[c % 4];
    cfg.tick_rate_hz = s->rate;
    cfg.bounds = aabb_make(v2(-4000, -4000), v2(4000, 4000));
    cfg.max_bodies = 16;
    s->w = world_create(&cfg);
    if (!s->w) return false;
    s->ps = rand_shape(r, (c / 4) % 3, true);
    s->ms = rand_shape(r, (c / 12) % 3, false);
    s->angle = collide_rng_next(r) % 3u == 0 ? 0.0f : frand(r, -1.2f, 1.2f);
    if (mode == 2) s->angle = 0.0f; /* across exactly: only an unturned platform's is exactly so */
    bool moving = (c / 36) % 2 == 1;
    world_body_kind pk = moving ? WORLD_BODY_MOVING : WORLD_BODY_STATIC;
    if (world_spawn_turned(s->w, pk, &s->ps, v2(0, 0), s->angle, 0, &s->plat, NULL) != WORLD_OK ||
        world_body_set_one_way(s->w, s->plat, true) != WORLD_OK)
        return false;
    s->up = v2(-sinf(s->angle), cosf(s->angle));
    s->tangent = v2(cosf(s->angle), sinf(s->angle));
    if (moving) s->pv = v2(frand(r, -30, 30), frand(r, -30, 30));
    /* where the mover starts: its centre beyond the platform's reach along up, or level */
    float reach = 6.0f * 1.0f, lateral = frand(r, -1.0f, 1.0f);
    float speed = collide_rng_next(r) % 4u == 0 ? cfg.max_speed : frand(r, 1.0f, cfg.max_speed);
    float across = frand(r, -0.5f, 0.5f) * speed;
    vec2 p;
    if (mode == 0) {
        p = v2_add(v2_scale(s->up, reach + frand(r, 0.0f, 20.0f)), v2_scale(s->tangent, lateral));
        s->mv = v2_add(v2_scale(s->up, -speed * 0.8f), v2_scale(s->tangent, across * 0.5f));
    } else if (mode == 1) {
        p = v2_add(v2_scale(s->up, -reach - frand(r, 0.0f, 20.0f)), v2_scale(s->tangent, lateral));
        s->mv = v2_add(v2_scale(s->up, speed * 0.8f), v2_scale(s->tangent, across * 0.5f));
    } else {
        p = v2_add(v2_scale(s->tangent, -reach - frand(r, 0.0f, 20.0f)),
                   v2_scale(s->up, frand(r, -0.05f, 0.05f)));
        s->mv = v2_scale(s->tangent, speed * 0.9f);
    }
    s->mover = wt_spawn(s->w, WORLD_BODY_MOVING, s->ms, p);
    if (s->mover == WORLD_NULL_BODY) return false;
    world_set_intent(s->w, s->mover, s->mv, 1);
    if (moving) world_set_intent(s->w, s->plat, s->pv, 1);
    world_set_events(s->w, true);
    return true;
}

/* The begins between the scene's two bodies in the last step. */
static int pair_begins(const scene *s) {
    const world_contact_event *ev;
    size_t n = world_contact_events(s->w, &ev);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].begin && ((ev[i].a == s->mover && ev[i].b == s->plat) ||
                            (ev[i].a == s->plat && ev[i].b == s->mover)))
            k++;
    return k;
}

/* One tick of a scene against the oracle; *go false once the scene is done (far off). */
static void scene_tick(scene *s, int mode, int c, int t, int *blocked_ticks, bool *go) {
    wo_body a0, p0, a1, p1;
    *go = false;
    if (!wt_body(s->w, s->mover, &a0) || !wt_body(s->w, s->plat, &p0)) return;
    double ux = s->up.x, uy = s->up.y;
    /* the rule, by the oracle; its "within the skin" edge left out (float against double) */
    double sep = up_separation(&a0, &p0, ux, uy);
    vec2 rel = v2_sub(s->mv, s->pv);
    bool against = (double)rel.x * ux + (double)rel.y * uy < 0.0;
    bool must_block = against && sep >= 0.0, may_block = against && sep >= -2.0 * SKIN;
    vec2 ma = wt_pos(s->w, s->mover), pa = wt_pos(s->w, s->plat);
    world_step(s->w);
    vec2 mb = wt_pos(s->w, s->mover), pb = wt_pos(s->w, s->plat);
    if (!wt_body(s->w, s->mover, &a1) || !wt_body(s->w, s->plat, &p1)) return;
    double depth = wo_depth(&a1, &p1);
    int begins = pair_begins(s);
    CHECK_MSG(begins == 0 || may_block, "case %d mode %d tick %d: a contact began (sep %g)", c,
              mode, t, sep);
    if (must_block) {
        ++*blocked_ticks;
        landing_begins += begins;
        CHECK_MSG(depth <= 2.0 * SKIN, "case %d tick %d rate %g: %g deep in the platform", c, t,
                  (double)s->rate, depth);
        /* the tick's chord, relative to the platform (it only translates), sub-stepped */
        wo_body pl = p0;
        for (int i = 0; i < pl.n; i++)
            pl.x[i] -= pa.x, pl.y[i] -= pa.y;
        pl.cx -= pa.x, pl.cy -= pa.y;
        wo_fit_box(&pl);
        double chord = wo_chord_depth(&s->ms, v2_sub(ma, pa), v2_sub(mb, pb), &pl, 0.005);
        /* a moving platform: the mover pass sweeps a mover against a platform moved before it
         * where the platform ended (COLLISION.md), so the chord against either end will do */
        if (!vec_same(pa, pb))
            chord = fmin(chord, fmin(wo_chord_depth(&s->ms, ma, mb, &p0, 0.005),
                                     wo_chord_depth(&s->ms, ma, mb, &p1, 0.005)));
        CHECK_MSG(chord <= 2.0 * SKIN, "case %d tick %d rate %g: the chord goes %g deep", c, t,
                  (double)s->rate, chord);
    }
    if (mode != 0 && !may_block) {
        /* passes as if the platform were not there: exactly its free motion (bounds far) */
        vec2 free = v2_add(ma, v2_scale(s->mv, 1.0f / s->rate));
        float tol = 1e-4f * (1.0f + fabsf(free.x) + fabsf(free.y));
        CHECK_MSG(fabsf(mb.x - free.x) <= tol && fabsf(mb.y - free.y) <= tol,
                  "case %d mode %d tick %d: (%g, %g) not its free (%g, %g), depth %g", c, mode, t,
                  (double)mb.x, (double)mb.y, (double)free.x, (double)free.y, depth);
    }
    *go = fabsf(mb.x) < 3000.0f && fabsf(mb.y) < 3000.0f;
}

/* The tick rule in random scenes: landing from above (never through, at any speed up to the max
 * and every rate), passing up from below, passing across. */
static void test_random_scenes(void) {
    collide_rng rng = {0x5eed0e1u};
    int blocked = 0, passes = 0;
    for (int mode = 0; mode < 3; mode++) {
        for (int c = 0; c < 72 * 6; c++) {
            scene s;
            bool made = scene_make(&s, &rng, mode, c % 72);
            CHECK_MSG(made, "case %d: no scene", c);
            if (!made) {
                if (s.w) world_destroy(s.w);
                continue;
            }
            bool go = true;
            for (int t = 0; t < 8 && go; t++)
                scene_tick(&s, mode, c, t, &blocked, &go);
            if (mode != 0) {
                /* it ends on the far side of the platform or past it: never held back */
                wo_body a, p;
                if (wt_body(s.w, s.mover, &a) && wt_body(s.w, s.plat, &p) && mode == 1 &&
                    up_separation(&a, &p, s.up.x, s.up.y) > 0.0)
                    passes++;
            }
            world_destroy(s.w);
        }
    }
    CHECK_MSG(blocked > 500, "only %d blocking ticks", blocked);
    CHECK_MSG(passes > 300, "only %d passes from below", passes);
    CHECK_MSG(landing_begins > 40, "only %d contacts began on landing", landing_begins);
}

/* Rays and casts against a one-way platform turned by random angles: from above against up they
 * hit where the oracle's sampling first finds it; from below, across, or from inside, never;
 * overlaps always report it. */
static void test_rays_and_casts(void) {
    collide_rng rng = {77u};
    int hits = 0;
    for (int c = 0; c < 300; c++) {
        world *w = wt_world(100, 16);
        geom_shape ps = rand_shape(&rng, c % 3, true), qs = rand_shape(&rng, (c / 3) % 3, false);
        float angle = c % 2 ? frand(&rng, -1.2f, 1.2f) : 0.0f;
        world_body_id p;
        CHECK(world_spawn_turned(w, WORLD_BODY_STATIC, &ps, v2(0, 0), angle, 0, &p, NULL) ==
              WORLD_OK);
        CHECK(world_body_set_one_way(w, p, true) == WORLD_OK);
        vec2 up = v2(-sinf(angle), cosf(angle)), along = v2(cosf(angle), sinf(angle));
        wo_body pb;
        CHECK(wt_body(w, p, &pb));
        world_hit h;
        world_query_result res;
        vec2 o = v2_scale(up, 10.0f), d = v2_scale(up, -20.0f);
        /* the oracle: the first sampled point of the ray inside the platform */
        double first = -1.0;
        for (int i = 0; i <= 4000 && first < 0.0; i++) {
            double x = o.x + d.x * i / 4000.0, y = o.y + d.y * i / 4000.0;
            bool in;
            if (pb.circle)
                in = hypot(x - pb.cx, y - pb.cy) < pb.r;
            else
                wo_point_boundary(&pb, x, y, &in);
            if (in) first = i / 4000.0;
        }
        CHECK(world_query_ray(w, 0, o, d, NULL, false, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 1 && fabs(h.fraction - first) < 1e-3, "case %d: ray down %zu %g %g",
                  c, res.count, (double)h.fraction, first);
        hits += (int)res.count;
        CHECK(world_query_ray(w, 0, v2_neg(o), v2_neg(d), NULL, false, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 0, "case %d: a ray from below hit", c);
        CHECK(world_query_ray(w, 0, v2(0, 0), d, NULL, false, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 0, "case %d: a ray from inside hit", c);
        if (angle == 0.0f) {
            CHECK(world_query_ray(w, 0, v2(-20, 0), v2(40, 0), NULL, false, &h, 1, &res) ==
                  WORLD_OK);
            CHECK_MSG(res.count == 0, "case %d: a ray across hit", c);
        }
        (void)along;
        /* casts: from above against up hit (the oracle: some sampled position overlaps) */
        double cfirst = -1.0;
        for (int i = 0; i <= 2000 && cfirst < 0.0; i++) {
            wo_body at = wo_make_at(&qs, o.x + d.x * i / 2000.0, o.y + d.y * i / 2000.0);
            if (wo_depth(&at, &pb) > 0.0) cfirst = i / 2000.0;
        }
        CHECK(world_query_shape_cast(w, 0, &qs, o, d, NULL, false, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 1 && fabs(h.fraction - cfirst) < 2e-3,
                  "case %d: cast down %zu %g %g", c, res.count, (double)h.fraction, cfirst);
        CHECK(world_query_shape_cast(w, 0, &qs, v2_neg(o), v2_neg(d), NULL, false, &h, 1, &res) ==
              WORLD_OK);
        CHECK_MSG(res.count == 0, "case %d: a cast from below hit", c);
        CHECK(world_query_shape_cast(w, 0, &qs, v2(0, 0), d, NULL, false, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 0, "case %d: a cast from inside hit", c);
        CHECK(world_query_overlap(w, 0, &qs, v2(0, 0), NULL, &h, 1, &res) == WORLD_OK);
        CHECK_MSG(res.count == 1 && h.id == p, "case %d: the overlap missed it", c);
        world_destroy(w);
    }
    CHECK(hits == 300);
}

/* The API, and separation: a mover inside a one-way body it may pass is not pushed out of it
 * (a plain static pushes it), and one above that lands on it stays. */
static void test_api_and_separation(void) {
    world *w = wt_world(50, 16);
    world_stats st0, st1;
    world_get_stats(w, &st0);
    world_body_id p = wt_spawn(w, WORLD_BODY_STATIC, wt_box(5, 0.5f), v2(0, 0));
    world_body_id q = wt_spawn(w, WORLD_BODY_STATIC, wt_box(5, 0.5f), v2(0, 20));
    CHECK(!world_body_one_way(w, p));
    CHECK(world_body_set_one_way(w, p, false) == WORLD_OK);
    world_get_stats(w, &st1);
    CHECK(st1.bytes == st0.bytes); /* plain bodies allocate nothing */
    CHECK(world_body_set_one_way(w, p, true) == WORLD_OK);
    CHECK(world_body_one_way(w, p) && !world_body_one_way(w, q));
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(1, 0.2f));
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(1, 20.2f));
    world_step(w);
    vec2 pa = wt_pos(w, a);
    CHECK(pa.x == 1.0f && pa.y == 0.2f);          /* inside the one-way body: left there */
    CHECK(wt_pos(w, b).y >= 20.0f + 1.0f - SKIN); /* the plain one pushes it out */
    CHECK(world_despawn(w, p) == WORLD_OK);
    CHECK(!world_body_one_way(w, p));
    CHECK(world_body_set_one_way(w, p, true) == WORLD_ERR_NOT_FOUND);
    world_body_id r = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(-30, -30));
    CHECK(!world_body_one_way(w, r)); /* the slot's next body is plain */
    CHECK(world_validate(w) == NULL);
    world_destroy(w);
}

/* The decisions the rule leaves open (world_one_way.c): a static still blocks a one-way mover
 * whatever side it comes from; two one-way movers block each other only when each blocks the
 * other; a cast across a one-way body passes it (a plain one stops it). */
static void test_open_decisions(void) {
    world *w = wt_world(50, 16);
    wt_spawn(w, WORLD_BODY_STATIC, wt_box(10, 0.5f), v2(0, 0));
    world_body_id crate = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 5));
    CHECK(world_body_set_one_way(w, crate, true) == WORLD_OK);
    world_set_intent(w, crate, v2(0, -600), 1);
    world_step(w);
    CHECK(wt_pos(w, crate).y >= 1.5f - SKIN); /* on the floor, not through it */
    /* two one-way movers, a above b, a falling: b blocks a, but a does not block b (b is not on
     * a's up side): they pass */
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 0.25f), v2(20, 10));
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 0.25f), v2(20, 5));
    CHECK(world_body_set_one_way(w, a, true) == WORLD_OK);
    CHECK(world_body_set_one_way(w, b, true) == WORLD_OK);
    world_set_intent(w, a, v2(0, -600), 1);
    world_step(w);
    CHECK_MSG(fabsf(wt_pos(w, a).y) < 1e-4f, "a at %g, b at %g", (double)wt_pos(w, a).y,
              (double)wt_pos(w, b).y);
    /* a cast across a one-way platform passes it; across a plain one, stops */
    world_body_id p = wt_spawn(w, WORLD_BODY_STATIC, wt_box(5, 0.5f), v2(0, 20));
    world_body_id plain = wt_spawn(w, WORLD_BODY_STATIC, wt_box(5, 0.5f), v2(0, 30));
    CHECK(world_body_set_one_way(w, p, true) == WORLD_OK);
    world_hit h;
    world_query_result res;
    geom_shape q = wt_box(0.25f, 0.25f);
    CHECK(world_query_shape_cast(w, 0, &q, v2(-20, 20), v2(40, 0), NULL, true, &h, 1, &res) ==
          WORLD_OK);
    CHECK(res.count == 0);
    CHECK(world_query_shape_cast(w, 0, &q, v2(-20, 30), v2(40, 0), NULL, true, &h, 1, &res) ==
          WORLD_OK);
    CHECK(res.count == 1 && h.id == plain);
    world_destroy(w);
}

/* I6: the same scene of one-way platforms (static and moving, turned) and colliding movers of
 * every shape, run twice, gives the same state hash every tick. */
static int invalid_ticks; /* ticks world_validate refused */
static uint64_t run_crowd(uint32_t seed, uint64_t *hashes, int ticks) {
    collide_rng r = {seed};
    world *w = wt_world(60, 128);
    for (int i = 0; i < 12; i++) {
        geom_shape s = rand_shape(&r, i % 3, true);
        world_body_kind k = i % 4 == 3 ? WORLD_BODY_MOVING : WORLD_BODY_STATIC;
        world_body_id id;
        if (world_spawn_turned(w, k, &s, v2(frand(&r, -45, 45), frand(&r, -45, 45)),
                               frand(&r, -1, 1), 0, &id, NULL) != WORLD_OK)
            continue;
        world_body_set_one_way(w, id, i % 2 == 0 || k == WORLD_BODY_MOVING);
        if (k == WORLD_BODY_MOVING) world_set_intent(w, id, v2(frand(&r, -5, 5), 0), 1);
    }
    world_body_id m[60];
    for (int i = 0; i < 60; i++) {
        m[i] = wt_spawn(w, WORLD_BODY_MOVING, rand_shape(&r, i % 3, false),
                        v2(frand(&r, -55, 55), frand(&r, -55, 55)));
        if (i % 7 == 0) world_body_set_one_way(w, m[i], true);
    }
    for (int t = 0; t < ticks; t++) {
        for (int i = 0; i < 60; i++)
            if (m[i] && (t + i) % 10 == 0)
                world_set_intent(w, m[i], v2(frand(&r, -400, 400), frand(&r, -400, 400)),
                                 (uint32_t)t + 2u);
        world_step(w);
        invalid_ticks += world_validate(w) != NULL;
        hashes[t] = world_state_hash(w);
    }
    uint64_t last = world_state_hash(w);
    world_destroy(w);
    return last;
}

static void test_determinism(void) {
    uint64_t h1[200], h2[200];
    for (uint32_t seed = 1; seed <= 4; seed++) {
        run_crowd(seed, h1, 200);
        run_crowd(seed, h2, 200);
        for (int t = 0; t < 200; t++)
            CHECK_MSG(h1[t] == h2[t], "seed %u tick %d: hashes differ", seed, t);
        CHECK(invalid_ticks == 0);
    }
}

TEST_MAIN(TEST(test_api_and_separation), TEST(test_open_decisions), TEST(test_random_scenes),
          TEST(test_rays_and_casts), TEST(test_determinism))

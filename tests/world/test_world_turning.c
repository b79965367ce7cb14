/* Rotation in the world (COLLISION.md "Rotation"): I1 for a spinning bar at the max angular speed
 * at 10^4 u/s into a thin wall, a turn into a wall stopping at contact, I2/I3 in turning crowds,
 * I5 with a turning box, I7 for turning equal bodies, I6 (hashes and replays), the clamp, and a
 * spawn angle kept as the initial angle. Bodies are measured by world_oracle.h from each body's
 * local shape and angle (turned here in double), never from the world's own turned copy. */
#include "world_test_util.h"

#define PI 3.14159265358979323846
#define MAX_W WORLD_DEFAULT_MAX_ANGULAR_SPEED
/* moving bodies may overlap this much after a tick (I3), as test_world_invariants */
#define I3_TOL 0.01

/* The body as the oracle sees it: local shape turned by its reported angle, in double. */
static bool tt_body(const world *w, world_body_id id, wo_body *out) { return wt_body(w, id, out); }
static double tt_depth(const world *w, world_body_id a, world_body_id b) {
    wo_body ba, bb;
    if (!tt_body(w, a, &ba) || !tt_body(w, b, &bb)) return INFINITY;
    return wo_depth(&ba, &bb);
}
static double tt_gap(const world *w, world_body_id a, world_body_id b) {
    wo_body ba, bb;
    if (!tt_body(w, a, &ba) || !tt_body(w, b, &bb)) return -INFINITY;
    return wo_gap(&ba, &bb);
}
static world_body_id spawn_turned(world *w, world_body_kind k, geom_shape s, vec2 p, float a) {
    world_body_id id = WORLD_NULL_BODY;
    if (world_spawn_turned(w, k, &s, p, a, k == WORLD_BODY_MOVING ? 7u : 0u, &id, NULL) != WORLD_OK)
        return WORLD_NULL_BODY;
    return id;
}
static bool vec_same(vec2 a, vec2 b) { return a.x == b.x && a.y == b.y; }
static float angle_of(const world *w, world_body_id id) {
    world_body_row info;
    return world_body_get(w, id, &info) ? info.angle : NAN;
}

/* A 4 x 0.2 bar in each shape kind: a box, a hexagonal polygon bar, and (kind circle) a 0.1
 * circle, the thinnest body the bar's tip stands for. */
static geom_shape bar_of_kind(int kind) {
    if (kind == 0) return wt_box(2.0f, 0.1f);
    if (kind == 1) {
        vec2 v[6] = {{-2.0f, -0.1f}, {1.9f, -0.1f}, {2.0f, 0.0f},
                     {1.9f, 0.1f},   {-1.9f, 0.1f}, {-2.0f, 0.0f}};
        geom_shape s;
        if (geom_make_polygon(v, 6, &s)) abort();
        return s;
    }
    return wt_circle(0.1f);
}

/* I1: the bar spinning at the max angular speed while moving at 10^4 u/s into a 0.1-thick wall,
 * every shape kind, several start angles, both spins, straight and slanted: after every tick no
 * vertex lies past the wall's near face (tunnelling would put it beyond), and it ends at the
 * wall. */
static void test_i1_spinning_bar(void) {
    const float angles[] = {0.0f, 0.3f, 1.0f, 1.5707964f, 2.5f};
    for (int kind = 0; kind < 3; kind++)
        for (int ai = 0; ai < 5; ai++)
            for (int spin = -1; spin <= 1; spin += 2)
                for (int slant = 0; slant < 2; slant++) {
                    world *w = wt_world(500.0f, 16);
                    CHECK(w);
                    world_body_id wall =
                        wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.05f, 500.0f), v2(0.05f, 0.0f));
                    world_body_id bar =
                        spawn_turned(w, WORLD_BODY_MOVING, bar_of_kind(kind),
                                     v2(-300.0f, slant ? -200.0f : -3.0f), angles[ai]);
                    CHECK(wall && bar);
                    vec2 v = slant ? v2(8000.0f, 6000.0f) : v2(1e4f, 0.0f);
                    CHECK(world_set_intent_turning(w, bar, v, (float)spin * 1000.0f, 1) ==
                          WORLD_OK);
                    float turning;
                    CHECK(world_body_intent(w, bar, NULL, &turning) &&
                          turning == (float)spin * MAX_W);
                    double most = -INFINITY;
                    for (int t = 0; t < 40; t++) {
                        world_step(w);
                        wo_body b;
                        CHECK(tt_body(w, bar, &b));
                        most = fmax(most, b.maxx);
                        CHECK_MSG(b.maxx <= GEOM_SKIN,
                                  "kind %d angle %g spin %d slant %d tick %d: "
                                  "a vertex at x %.6f past the wall",
                                  kind, (double)angles[ai], spin, slant, t, b.maxx);
                        CHECK(tt_depth(w, bar, wall) <= GEOM_SKIN);
                    }
                    CHECK_MSG(most > -0.01, "kind %d: never reached the wall (%g)", kind, most);
                    world_destroy(w);
                }
}

/* A bar that only turns, next to a wall: it stops at contact without overlap, reports no turning
 * speed once stopped, and stays put (no jitter). */
static void test_turn_into_wall_stops_at_contact(void) {
    for (int kind = 0; kind < 2; kind++)
        for (int spin = -1; spin <= 1; spin += 2) {
            world *w = wt_world(50.0f, 16);
            CHECK(w);
            world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(1.5f, 0.0f));
            world_body_id bar =
                spawn_turned(w, WORLD_BODY_MOVING, bar_of_kind(kind), v2(0.0f, 0.0f), 1.5707964f);
            CHECK(wall && bar);
            CHECK(world_set_intent_turning(w, bar, v2(0, 0), (float)spin * 3.0f, 1) == WORLD_OK);
            float last = 0.0f;
            for (int t = 0; t < 120; t++) {
                world_step(w);
                CHECK_MSG(tt_depth(w, bar, wall) == 0.0, "kind %d spin %d tick %d: overlap %g",
                          kind, spin, t, tt_depth(w, bar, wall));
                if (t >= 100) CHECK(angle_of(w, bar) == last);
                last = angle_of(w, bar);
            }
            double gap = tt_gap(w, bar, wall);
            CHECK_MSG(gap > 0.0 && gap < 2.0 * GEOM_SKIN, "kind %d spin %d: gap %g", kind, spin,
                      gap);
            world_body_row info;
            CHECK(world_body_get(w, bar, &info));
            CHECK(info.angular_velocity == 0.0f && info.position.x == 0.0f &&
                  info.position.y == 0.0f);
            /* it turned towards the wall from upright until its end reached x = 1: about 0.5 rad
             * (2 sin a + 0.1 cos a = 1 for the box, 2 sin a = 1 for the pointed bar) */
            double turned = fabs(last - 1.5707964f);
            CHECK_MSG(turned > 0.44 && turned < 0.53, "kind %d: turned %g", kind, turned);
            world_destroy(w);
        }
}

/* I2/I3 in turning crowds: boxes, polygons and circles turning at random speeds and walking at
 * random, among pillars; after every tick nothing overlaps a static by more than the skin and no
 * two movers by more than I3's tolerance unless the step reported them jammed. */
static void test_i2_i3_turning_crowd(void) {
    collide_rng rng = {1616};
    world *w = wt_world(12.0f, 256);
    CHECK(w);
    world_body_id statics[16], movers[60];
    int ns = 0, nm = 0;
    for (int i = 0; i < 16; i++)
        statics[ns++] = spawn_turned(
            w, WORLD_BODY_STATIC, wt_box(0.6f, 0.3f),
            v2(-9.0f + 6.0f * (float)(i % 4), -9.0f + 6.0f * (float)(i / 4)), 0.4f * (float)i);
    for (int i = 0; i < 60; i++) {
        geom_shape s = i % 3 == 0   ? wt_box(0.5f, 0.15f)
                       : i % 3 == 1 ? wt_ngon(5, 0.35f, 0.2f)
                                    : wt_circle(0.3f);
        movers[nm++] =
            spawn_turned(w, WORLD_BODY_MOVING, s,
                         v2(collide_rng_range(&rng, -11, 11), collide_rng_range(&rng, -11, 11)),
                         collide_rng_range(&rng, -3, 3));
    }
    for (int i = 0; i < ns; i++)
        CHECK(statics[i]);
    for (int i = 0; i < nm; i++)
        CHECK(movers[i]);
    for (int t = 0; t < 240; t++) {
        if (t % 30 == 0)
            for (int i = 0; i < nm; i++) {
                float a = collide_rng_range(&rng, 0, 6.2831853f),
                      sp = collide_rng_range(&rng, 0, 12);
                CHECK(world_set_intent_turning(w, movers[i], v2(sp * cosf(a), sp * sinf(a)),
                                               collide_rng_range(&rng, -MAX_W, MAX_W),
                                               (uint32_t)t + 1) == WORLD_OK);
            }
        world_step(w);
        for (int i = 0; i < nm; i++) {
            for (int k = 0; k < ns; k++)
                CHECK_MSG(tt_depth(w, movers[i], statics[k]) <= GEOM_SKIN, "tick %d: I2 %g", t,
                          tt_depth(w, movers[i], statics[k]));
            wo_body b;
            CHECK(tt_body(w, movers[i], &b) &&
                  wo_bounds_gap(&b, world_get_config(w)->bounds) >= -1e-4);
        }
        world_body_id a, b;
        bool bogus;
        float d = wt_unexcused_mover_depth(w, movers, nm, (float)I3_TOL, &a, &b, &bogus);
        CHECK_MSG(d <= I3_TOL && !bogus, "tick %d: I3 %g", t, (double)d);
    }
    CHECK(world_validate(w) == NULL);
    world_destroy(w);
}

/* I5 with a turning box: driven diagonally into an inner corner while it turns, it comes to rest
 * in the corner without jitter (position and angle constant over the last ticks). */
static void test_i5_turning_box_rests_in_corner(void) {
    world *w = wt_world(50.0f, 16);
    CHECK(w);
    world_body_id floor = wt_spawn(w, WORLD_BODY_STATIC, wt_box(10.0f, 0.5f), v2(0.0f, -0.5f));
    world_body_id side = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 10.0f), v2(10.5f, 9.0f));
    world_body_id box =
        spawn_turned(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(3.0f, 5.0f), 0.3f);
    CHECK(floor && side && box);
    CHECK(world_set_intent_turning(w, box, v2(6.0f, -6.0f), 2.0f, 1) == WORLD_OK);
    vec2 p = v2(0, 0);
    float a = 0.0f;
    for (int t = 0; t < 300; t++) {
        world_step(w);
        CHECK(tt_depth(w, box, floor) == 0.0 && tt_depth(w, box, side) == 0.0);
        vec2 q = wt_pos(w, box);
        if (t >= 280) CHECK_MSG(vec_same(p, q) && angle_of(w, box) == a, "tick %d: jitter", t);
        p = q;
        a = angle_of(w, box);
    }
    CHECK(tt_gap(w, box, floor) < 0.01 && tt_gap(w, box, side) < 0.01);
    world_destroy(w);
}

/* I7: two equal bodies driven head-on at equal speed, turning at equal and opposite speeds (mirror
 * images of each other about x = 0; a box and a regular hexagon are their own mirror images, so
 * the mirror of one turned by a is the same shape turned by -a).
 *  - Whatever their join order, the runs are identical.
 *  - They stop turning in the same tick at mirrored angles: the first body's advancement turns
 *    the second one too (relative motion, turning included), and meet at the midpoint up to what
 *    the second one slides in that tick (a turned contact is slanted: the body that moves second
 *    slides off the other, the mover pass's order rule for any slanted contact, so the exact
 *    midpoint of axis-aligned I7 is not kept after it).
 *  - They never overlap beyond I3. */
typedef struct mirror_run {
    vec2 l[90], r[90];
    float al[90], ar[90], wl[90];
} mirror_run;
static void run_mirror(int shape, float speed, int order, mirror_run *out) {
    world *w = wt_world(200.0f, 16);
    CHECK(w);
    geom_shape s = shape == 0   ? wt_box(0.5f, 0.5f)
                   : shape == 1 ? wt_ngon(6, 0.5f, 0.0f)
                                : wt_box(1.0f, 0.25f);
    world_body_id l, r;
    if (order == 0) {
        l = spawn_turned(w, WORLD_BODY_MOVING, s, v2(-20.0f, 3.0f), 0.2f);
        r = spawn_turned(w, WORLD_BODY_MOVING, s, v2(20.0f, 3.0f), -0.2f);
    } else {
        r = spawn_turned(w, WORLD_BODY_MOVING, s, v2(20.0f, 3.0f), -0.2f);
        l = spawn_turned(w, WORLD_BODY_MOVING, s, v2(-20.0f, 3.0f), 0.2f);
    }
    CHECK(l && r);
    CHECK(world_set_intent_turning(w, l, v2(speed, 0.0f), 3.0f, 1) == WORLD_OK);
    CHECK(world_set_intent_turning(w, r, v2(-speed, 0.0f), -3.0f, 1) == WORLD_OK);
    for (int t = 0; t < 90; t++) {
        world_step(w);
        CHECK(tt_depth(w, l, r) <= I3_TOL);
        out->l[t] = wt_pos(w, l);
        out->r[t] = wt_pos(w, r);
        out->al[t] = angle_of(w, l);
        out->ar[t] = angle_of(w, r);
        world_body_row info;
        CHECK(world_body_get(w, l, &info));
        out->wl[t] = info.angular_velocity;
    }
    world_destroy(w);
}
static void test_i7_turning_head_on(void) {
    static mirror_run a, b;
    const float speeds[] = {30.0f, 600.0f, 1e4f};
    for (int si = 0; si < 3; si++)
        for (int shape = 0; shape < 3; shape++) {
            run_mirror(shape, speeds[si], 0, &a);
            run_mirror(shape, speeds[si], 1, &b);
            int contact = -1;
            bool same = true;
            for (int t = 0; t < 90; t++) {
                if (contact < 0 && a.wl[t] < 2.99f) contact = t;
                same = same && a.l[t].x == b.l[t].x && a.l[t].y == b.l[t].y &&
                       a.r[t].x == b.r[t].x && a.r[t].y == b.r[t].y && a.al[t] == b.al[t] &&
                       a.ar[t] == b.ar[t];
            }
            CHECK_MSG(same, "speed %g shape %d: the join order changed the run", (double)speeds[si],
                      shape);
            CHECK_MSG(contact >= 0, "speed %g shape %d: never met", (double)speeds[si], shape);
            if (contact < 0) continue;
            /* within what the advancement's stop band (a quarter skin) and its iteration bound
             * leave: tight for the hexagon, whose contact closes fast; a turning bar's or
             * square's slanted corner closes slowly and may stop at the bound a little short */
            CHECK_MSG(fabsf(a.al[contact] + a.ar[contact]) <= (shape == 1 ? 1e-4f : 1.5e-3f),
                      "speed %g shape %d: stopped at %g and %g", (double)speeds[si], shape,
                      (double)a.al[contact], (double)a.ar[contact]);
            /* at 30 u/s a body moves 0.5 a tick: the second one slides less than half of it */
            float mid = 0.5f * (a.l[contact].x + a.r[contact].x);
            CHECK_MSG(si > 0 || fabsf(mid) <= 0.25f, "speed %g shape %d: met at %g",
                      (double)speeds[si], shape, (double)mid);
        }
}

/* I6: the same world and intents (the same seed, run twice) give the same state hash, another
 * seed another one; the angle is part of the hash. */
static uint64_t turning_run(int ticks, unsigned seed) {
    collide_rng rng = {seed};
    world *w = wt_world(20.0f, 128);
    if (!w) return 0;
    world_body_id ids[40];
    for (int i = 0; i < 40; i++) {
        geom_shape s = i % 2 ? wt_box(0.6f, 0.2f) : wt_ngon(7, 0.4f, 0.1f);
        ids[i] =
            spawn_turned(w, WORLD_BODY_MOVING, s,
                         v2(collide_rng_range(&rng, -18, 18), collide_rng_range(&rng, -18, 18)),
                         collide_rng_range(&rng, -3, 3));
    }
    for (int t = 0; t < ticks; t++) {
        if (t % 20 == 0)
            for (int i = 0; i < 40; i++)
                world_set_intent_turning(
                    w, ids[i],
                    v2(collide_rng_range(&rng, -20, 20), collide_rng_range(&rng, -20, 20)),
                    collide_rng_range(&rng, -20, 20), (uint32_t)t + 1);
        world_step(w);
    }
    uint64_t h = world_state_hash(w);
    world_destroy(w);
    return h;
}
static void test_i6_turning_determinism(void) {
    uint64_t a = turning_run(200, 5), b = turning_run(200, 5), c = turning_run(200, 6);
    CHECK(a != 0 && a == b && a != c);
    /* the angle counts: two worlds differing only in a body's angle hash differently */
    world *w1 = wt_world(20.0f, 8), *w2 = wt_world(20.0f, 8);
    CHECK(spawn_turned(w1, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0), 0.5f));
    CHECK(spawn_turned(w2, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0), 0.25f));
    CHECK(world_state_hash(w1) != world_state_hash(w2));
    world_destroy(w1);
    world_destroy(w2);
}

/* Intents are clamped to the max angular speed, and a tick turns by w / rate. */
static void test_clamp_and_rate(void) {
    world_config cfg;
    world_config_default(&cfg);
    CHECK(cfg.max_angular_speed == MAX_W);
    cfg.max_angular_speed = 3.0f;
    world *w = world_create(&cfg);
    CHECK(w);
    world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 0));
    CHECK(world_set_intent_turning(w, id, v2(0, 0), -50.0f, 1) == WORLD_OK);
    world_body_row info;
    float turning;
    CHECK(world_body_intent(w, id, NULL, &turning) && turning == -3.0f);
    for (int t = 0; t < 10; t++)
        world_step(w);
    CHECK(world_body_get(w, id, &info));
    CHECK(fabs(info.angle - (-3.0 * 10 / 60.0)) < 1e-5 &&
          fabsf(info.angular_velocity + 3.0f) < 1e-4f);
    CHECK(world_set_intent_turning(w, id, v2(0, 0), NAN, 2) == WORLD_ERR_NOT_FINITE);
    /* stopping: the achieved turning speed goes back to 0 and the table reports it */
    CHECK(world_set_intent_turning(w, id, v2(0, 0), 0.0f, 3) == WORLD_OK);
    world_step(w);
    CHECK(world_body_get(w, id, &info) && info.angular_velocity == 0.0f);
    const world_body_row *rows;
    size_t n = world_body_table(w, &rows);
    CHECK(n == 1 && rows[0].angular_velocity == 0.0f && rows[0].angle == info.angle);
    world_destroy(w);
}

/* A spawn angle is the initial angle: the shape stays body-local, the world collides with it
 * turned, and the AABB is the turned one. */
static void test_spawn_angle_is_initial_angle(void) {
    world *w = wt_world(20.0f, 8);
    CHECK(w);
    world_body_id id =
        spawn_turned(w, WORLD_BODY_STATIC, wt_box(2.0f, 0.5f), v2(1, 1), (float)(PI / 2));
    CHECK(id);
    geom_shape local;
    float angle;
    CHECK(world_body_local_shape(w, id, &local, &angle));
    CHECK(local.kind == GEOM_SHAPE_BOX && local.u.half_extents.x == 2.0f &&
          angle == (float)(PI / 2));
    world_body_row info;
    CHECK(world_body_get(w, id, &info));
    CHECK(fabsf(info.bounds.max.y - 3.0f) < 1e-5f && fabsf(info.bounds.max.x - 1.5f) < 1e-5f);
    /* a mover dropped onto it rests on its turned extent */
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.25f, 0.25f), v2(1.0f, 6.0f));
    CHECK(world_set_intent(w, m, v2(0, -10), 1) == WORLD_OK);
    for (int t = 0; t < 60; t++)
        world_step(w);
    CHECK(fabsf(wt_pos(w, m).y - 3.25f) < 2.0f * GEOM_SKIN);
    /* an angle-0 spawn stays a plain body */
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.25f, 0.25f), v2(-5.0f, 6.0f));
    CHECK(world_body_local_shape(w, p, &local, &angle) && angle == 0.0f);
    CHECK(world_validate(w) == NULL);
    CHECK(world_despawn(w, id) == WORLD_OK && world_validate(w) == NULL);
    world_destroy(w);
}

/* S1r's case against the oracle: boxes (S1's 0.8 x 0.8) and thin bars turning at random speeds
 * up to the max among unit box tiles (a fifth of the cells), walking at random; movers ignoring
 * each other (the tick S1r runs) and colliding. After every tick no mover overlaps a tile by more
 * than the skin (by its reported angle, in double) and none is outside: 72,000 mover-ticks
 * through the turning tick's box paths (the discs' entry, the box separation steps, the corner
 * against a face, the swept-box cull, the shared walk, the polygon-box slide). */
static void test_turning_boxes_among_tiles(void) {
    for (int scene = 0; scene < 2; scene++) {
        collide_rng rng = {1717u + (unsigned)scene};
        const int n = 24; /* cells per side: the bounds are [-12, 12]^2 */
        world *w = wt_world(12.0f, 1024);
        CHECK(w);
        world_set_mover_collisions(w, scene == 1);
        static bool solid[24 * 24];
        world_body_id tiles[24 * 24];
        vec2 tile_at[24 * 24];
        int nt = 0;
        for (int c = 0; c < n * n; c++) {
            solid[c] = collide_rng_unit(&rng) < 0.2f;
            if (!solid[c]) continue;
            tile_at[nt] = v2((float)(c % n) - 11.5f, (float)(c / n) - 11.5f);
            tiles[nt] = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), tile_at[nt]);
            CHECK(tiles[nt]);
            nt++;
        }
        world_body_id movers[150];
        int nm = 0;
        while (nm < 150) {
            int c = (int)(collide_rng_next(&rng) % (unsigned)(n * n));
            if (solid[c]) continue;
            solid[c] = true; /* one mover per free cell */
            geom_shape s = nm % 3 == 2 ? wt_box(0.45f, 0.04f) : wt_box(0.4f, 0.4f);
            movers[nm] = wt_spawn(w, WORLD_BODY_MOVING, s,
                                  v2((float)(c % n) - 11.5f, (float)(c / n) - 11.5f));
            CHECK(movers[nm]);
            nm++;
        }
        long stopped = 0; /* mover-ticks that wanted to turn and did not turn all the way */
        float spin[150];
        for (int t = 0; t < 240; t++) {
            if (t % 40 == 0)
                for (int i = 0; i < nm; i++) {
                    float a = collide_rng_range(&rng, 0, 6.2831853f),
                          sp = collide_rng_range(&rng, 0, 8);
                    spin[i] = collide_rng_range(&rng, -MAX_W, MAX_W);
                    CHECK(world_set_intent_turning(w, movers[i], v2(sp * cosf(a), sp * sinf(a)),
                                                   spin[i], (uint32_t)t + 1) == WORLD_OK);
                }
            world_step(w);
            for (int i = 0; i < nm; i++) {
                world_body_row info;
                CHECK(world_body_get(w, movers[i], &info));
                stopped += fabsf(info.angular_velocity) < 0.99f * fabsf(spin[i]);
                /* which tiles to measure: by the oracle's own box of the body, not the world's */
                wo_body b;
                CHECK(tt_body(w, movers[i], &b));
                for (int k = 0; k < nt; k++) {
                    double tx = tile_at[k].x, ty = tile_at[k].y;
                    if (b.maxx < tx - 0.51 || b.minx > tx + 0.51 || b.maxy < ty - 0.51 ||
                        b.miny > ty + 0.51)
                        continue;
                    double depth = tt_depth(w, movers[i], tiles[k]);
                    CHECK_MSG(depth <= GEOM_SKIN, "scene %d tick %d mover %d: %g into a tile",
                              scene, t, i, depth);
                }
                CHECK(wo_bounds_gap(&b, world_get_config(w)->bounds) >= -1e-4);
            }
        }
        /* contacts while turning came up (most of S1r's work) */
        printf("  scene %d: %ld of %d mover-ticks stopped turning at a contact\n", scene, stopped,
               240 * nm);
        CHECK(stopped > 240 * nm / 10);
        CHECK(world_validate(w) == NULL);
        world_destroy(w);
    }
}

/* A turning mover takes its statics from what its walk remembered in earlier ticks (the near
 * cache S1a's movers keep): a static spawned ahead of it, inside the cells it remembers, must
 * still stop it, and one despawned must no longer. A box turning at 2 rad/s moves along +x at
 * 3 u/s among tiles (so the grid has statics and the remembered path is taken), from a free row;
 * after 10 ticks a tile appears in its way, its left face 0.5 ahead of the box's centre (within
 * the cells remembered, which reach a cell past the region ahead of the motion): the box stops
 * at it and never overlaps it. Then the tile goes and the box moves on. */
static void test_turning_remembered_statics_follow_spawns(void) {
    world *w = wt_world(12.0f, 64);
    CHECK(w);
    world_set_mover_collisions(w, false);
    /* tiles away from the row y in [0, 1] the box runs along */
    for (int k = 0; k < 8; k++) {
        CHECK(
            wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(-7.5f + 2.0f * (float)k, 4.5f)));
        CHECK(
            wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(-6.5f + 2.0f * (float)k, -3.5f)));
    }
    world_body_id box = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(-4.0f, 0.5f));
    CHECK(box);
    CHECK(world_set_intent_turning(w, box, v2(3.0f, 0.0f), 2.0f, 1) == WORLD_OK);
    for (int t = 0; t < 10; t++)
        world_step(w);
    float x0 = wt_pos(w, box).x;
    CHECK(x0 > -3.6f && x0 < -3.4f);
    /* the tile's home cell is the one ahead of the box's (cells of 1 here) */
    world_body_id tile =
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(floorf(x0) + 1.5f + 0.5f, 0.5f));
    CHECK(tile);
    float face = floorf(x0) + 1.5f;
    for (int t = 0; t < 60; t++) {
        world_step(w);
        CHECK_MSG(tt_depth(w, box, tile) <= GEOM_SKIN, "tick %d: %g into the new tile", t,
                  tt_depth(w, box, tile));
        /* no extent of the turned box along x is below its half side */
        CHECK_MSG(wt_pos(w, box).x <= face - 0.4f + 1e-3f, "tick %d: x %.6f past the tile at %.3f",
                  t, (double)wt_pos(w, box).x, (double)face);
    }
    CHECK(world_despawn(w, tile) == WORLD_OK);
    for (int t = 0; t < 40; t++) /* 2 units at 3 u/s */
        world_step(w);
    CHECK_MSG(wt_pos(w, box).x > face + 1.0f, "x %.6f: still held by the despawned tile",
              (double)wt_pos(w, box).x);
    CHECK(world_validate(w) == NULL);
    world_destroy(w);
}

/* The tick after a body stops turning (its turning intent set to 0 while it turned in the last
 * tick: it still takes the turning tick, which sets its turning speed back to 0) it moves into a
 * wall like any other: it stops at it, with movers colliding (a second mover far away, so the
 * step takes the mover passes) and without. */
static void test_stopped_turning_still_collides(void) {
    for (int collide = 1; collide >= 0; collide--) {
        world *w = wt_world(50.0f, 16);
        CHECK(w);
        world_set_mover_collisions(w, collide != 0);
        world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.05f, 5.0f), v2(3.0f, 0.0f));
        world_body_id box = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(0.0f, 0.0f));
        CHECK(wall && box);
        if (collide) CHECK(wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(-30.0f, -30.0f)));
        CHECK(world_set_intent_turning(w, box, v2(60.0f, 0.0f), 2.0f, 1) == WORLD_OK);
        world_step(w);
        CHECK(angle_of(w, box) != 0.0f);
        /* 10 units in the tick: far through the wall if nothing stopped it */
        CHECK(world_set_intent_turning(w, box, v2(600.0f, 0.0f), 0.0f, 2) == WORLD_OK);
        for (int t = 0; t < 3; t++) {
            world_step(w);
            CHECK_MSG(wt_pos(w, box).x < 2.95f - 0.4f, "collide %d tick %d: x %.4f past the wall",
                      collide, t, (double)wt_pos(w, box).x);
            CHECK_MSG(tt_depth(w, box, wall) == 0.0, "collide %d tick %d: overlap %g", collide, t,
                      tt_depth(w, box, wall));
        }
        world_body_row info;
        CHECK(world_body_get(w, box, &info) && info.angular_velocity == 0.0f);
        world_destroy(w);
    }
}

/* A body resting against a wall turns away from it: the contact its last turn stopped at does not
 * hold it (geom_toi_turning_leaving). The bar (box and polygon) turns onto the wall until it stops,
 * then turns back by the whole w / rate every tick, then onto the wall again to the same stop; then
 * rocked on the wall (the turning intent's sign flipped every 2 ticks for 120 ticks) it never
 * creeps into it and keeps turning away. A circle resting a skin from the wall turns in place
 * both ways every tick (its turn moves no part of it). */
static void test_turn_away_from_contact(void) {
    const float w_turn = 3.0f, step = w_turn / 60.0f;
    for (int kind = 0; kind < 3; kind++)
        for (int spin = -1; spin <= 1; spin += 2) {
            world *w = wt_world(50.0f, 16);
            CHECK(w);
            world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(1.5f, 0.0f));
            world_body_id body = kind < 2 ? spawn_turned(w, WORLD_BODY_MOVING, bar_of_kind(kind),
                                                         v2(0.0f, 0.0f), 1.5707964f)
                                          : spawn_turned(w, WORLD_BODY_MOVING, wt_circle(0.5f),
                                                         v2(0.5f - GEOM_SKIN, 0.0f), 0.0f);
            CHECK(wall && body);
            uint32_t seq = 1;
            float stop = 0.0f;
            if (kind < 2) {
                CHECK(world_set_intent_turning(w, body, v2(0, 0), (float)spin * w_turn, seq++) ==
                      WORLD_OK);
                for (int t = 0; t < 40; t++)
                    world_step(w);
                stop = angle_of(w, body);
                double gap = tt_gap(w, body, wall);
                CHECK_MSG(gap > 0.4 * GEOM_SKIN && gap < 2.0 * GEOM_SKIN,
                          "kind %d spin %d: gap %g at the first stop", kind, spin, gap);
            }
            /* away from the wall (for the circle: either way), the whole turn every tick */
            for (int dir = -1; dir <= (kind < 2 ? -1 : 1); dir += 2) {
                CHECK(world_set_intent_turning(w, body, v2(0, 0), (float)(dir * spin) * w_turn,
                                               seq++) == WORLD_OK);
                for (int t = 0; t < 8; t++) {
                    float before = angle_of(w, body);
                    world_step(w);
                    float turned = angle_of(w, body) - before;
                    CHECK_MSG(fabsf(turned - (float)(dir * spin) * step) < 1e-5f,
                              "kind %d spin %d dir %d tick %d: turned %.7f of %.7f", kind, spin,
                              dir, t, (double)turned, (double)((float)(dir * spin) * step));
                    CHECK(tt_depth(w, body, wall) == 0.0);
                }
            }
            if (kind < 2) {
                /* back onto the wall: the same stop */
                CHECK(world_set_intent_turning(w, body, v2(0, 0), (float)spin * w_turn, seq++) ==
                      WORLD_OK);
                for (int t = 0; t < 40; t++)
                    world_step(w);
                CHECK_MSG(fabsf(angle_of(w, body) - stop) < 1e-3f,
                          "kind %d spin %d: stopped at %.6f, first at %.6f", kind, spin,
                          (double)angle_of(w, body), (double)stop);
                /* rocked on the wall */
                double least = INFINITY;
                for (int t = 0; t < 120; t++) {
                    int sign = (t / 2) % 2 ? -spin : spin;
                    if (t % 2 == 0)
                        CHECK(world_set_intent_turning(w, body, v2(0, 0), (float)sign * w_turn,
                                                       seq++) == WORLD_OK);
                    float before = angle_of(w, body);
                    world_step(w);
                    if (sign == -spin)
                        CHECK_MSG(angle_of(w, body) != before,
                                  "kind %d spin %d rock %d: stuck turning away", kind, spin, t);
                    double gap = tt_gap(w, body, wall);
                    least = fmin(least, gap);
                    CHECK_MSG(gap > 0.4 * GEOM_SKIN, "kind %d spin %d rock %d: gap %g", kind, spin,
                              t, gap);
                }
            }
            world_body_row info;
            CHECK(world_body_get(w, body, &info) && info.position.y == 0.0f);
            world_destroy(w);
        }
}

TEST_MAIN(TEST(test_i1_spinning_bar), TEST(test_turn_into_wall_stops_at_contact),
          TEST(test_i2_i3_turning_crowd), TEST(test_i5_turning_box_rests_in_corner),
          TEST(test_i7_turning_head_on), TEST(test_i6_turning_determinism),
          TEST(test_clamp_and_rate), TEST(test_spawn_angle_is_initial_angle),
          TEST(test_turning_boxes_among_tiles), TEST(test_turning_remembered_statics_follow_spawns),
          TEST(test_stopped_turning_still_collides), TEST(test_turn_away_from_contact))

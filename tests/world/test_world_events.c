/* Filters, sensors and contact/sensor events (PROTOCOL.md "Filters, sensors, contact events",
 * COLLISION.md 1.1): scripted scenes with exact expectations, and random scenes (fixed seeds)
 * whose events are replayed into a pair set and compared tick by tick with brute-force oracle
 * distances (world_oracle.h, never geom's). */
#include "world_test_util.h"

#define SKIN GEOM_SKIN

static world_body_id spawn_f(world *w, world_body_kind kind, geom_shape s, vec2 p, uint32_t cat,
                             uint32_t mask, bool sensor) {
    world_body_id id = wt_spawn(w, kind, s, p);
    if (id == WORLD_NULL_BODY) return id;
    world_filter f = {cat, mask, sensor};
    if (world_body_set_filter(w, id, &f) != WORLD_OK) return WORLD_NULL_BODY;
    return id;
}

static bool interact(uint32_t ca, uint32_t ma, uint32_t cb, uint32_t mb) {
    return (ca & mb) && (cb & ma);
}

/* The filter API: defaults, 0 = default, stale ids, and no table while every body is default. */
static void test_filter_api(void) {
    world *w = wt_world(50, 64);
    world_stats st0, st1;
    world_get_stats(w, &st0);
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0));
    world_filter f;
    CHECK(world_body_filter(w, a, &f));
    CHECK(f.category == 1 && f.mask == 0xffffffffu && !f.sensor);
    world_filter d = {0, 0, false};
    CHECK(world_body_set_filter(w, a, &d) == WORLD_OK);
    world_get_stats(w, &st1);
    CHECK(st1.bytes == st0.bytes); /* defaults allocate nothing */
    world_filter g = {4, 2, true};
    CHECK(world_body_set_filter(w, a, &g) == WORLD_OK);
    CHECK(world_body_filter(w, a, &f));
    CHECK(f.category == 4 && f.mask == 2 && f.sensor);
    world_get_stats(w, &st1);
    CHECK(st1.bytes > st0.bytes);
    CHECK(world_despawn(w, a) == WORLD_OK);
    CHECK(!world_body_filter(w, a, &f));
    CHECK(world_body_set_filter(w, a, &g) == WORLD_ERR_NOT_FOUND);
    /* the slot's next body starts with the defaults */
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0));
    CHECK(world_body_filter(w, b, &f));
    CHECK(f.category == 1 && f.mask == 0xffffffffu && !f.sensor);
    world_destroy(w);
}

/* The filter matrix: pairs of movers with random categories and masks driven head-on at each
 * other, and into a static wall: interacting pairs never overlap (I3, I1), the others pass
 * through each other, statics included. */
static void test_filter_matrix(void) {
    collide_rng rng = {12345u};
    int passed = 0, blocked = 0;
    for (int c = 0; c < 200; c++) {
        world *w = wt_world(100, 16);
        uint32_t ca = 1u << (collide_rng_next(&rng) % 4), cb = 1u << (collide_rng_next(&rng) % 4);
        uint32_t ma = collide_rng_next(&rng) & 15u, mb = collide_rng_next(&rng) & 15u;
        uint32_t cs = 1u << (collide_rng_next(&rng) % 4), ms = collide_rng_next(&rng) & 15u;
        if (!ma) ma = 1; /* 0 would mean all */
        if (!mb) mb = 1;
        if (!ms) ms = 1;
        geom_shape sa = c % 3 == 0 ? wt_circle(1) : c % 3 == 1 ? wt_box(1, 1) : wt_ngon(6, 1, 0.3f);
        world_body_id a = spawn_f(w, WORLD_BODY_MOVING, sa, v2(-10, 0), ca, ma, false);
        world_body_id b = spawn_f(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(10, 0), cb, mb, false);
        /* a wall across the path of a second pair of movers that go the other way */
        world_body_id wall =
            spawn_f(w, WORLD_BODY_STATIC, wt_box(0.5f, 5), v2(0, 20), cs, ms, false);
        world_body_id m = spawn_f(w, WORLD_BODY_MOVING, sa, v2(-10, 20), ca, ma, false);
        CHECK(a && b && wall && m);
        world_set_intent(w, a, v2(600, 0), 1);
        world_set_intent(w, b, v2(-600, 0), 1);
        world_set_intent(w, m, v2(600, 0), 1);
        float worst = 0, worst_wall = 0;
        for (int t = 0; t < 60; t++) {
            world_step(w);
            float d = wt_depth(w, a, b), dw = wt_depth(w, m, wall);
            if (d > worst) worst = d;
            if (dw > worst_wall) worst_wall = dw;
        }
        if (interact(ca, ma, cb, mb)) {
            CHECK_MSG(worst <= 0.01f, "case %d: interacting movers overlap by %g", c, worst);
            CHECK_MSG(wt_pos(w, a).x < wt_pos(w, b).x, "case %d: interacting movers crossed", c);
            blocked++;
        } else {
            CHECK_MSG(wt_pos(w, a).x > 50 && wt_pos(w, b).x < -50,
                      "case %d: non-interacting movers blocked: %g %g", c, wt_pos(w, a).x,
                      wt_pos(w, b).x);
            passed++;
        }
        if (interact(ca, ma, cs, ms)) {
            CHECK_MSG(worst_wall <= SKIN && wt_pos(w, m).x < 0, "case %d: through the wall", c);
        } else {
            CHECK_MSG(wt_pos(w, m).x > 50, "case %d: a non-interacting wall blocked", c);
        }
        world_destroy(w);
    }
    CHECK(passed > 20 && blocked > 20); /* both sides of the matrix were exercised */
}

/* Sensors never block and are never blocked; a moving sensor goes where its intent says, and
 * stops only at the bounds. */
static void test_sensors_never_block(void) {
    world *w = wt_world(50, 32);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 10), v2(0, 0));
    world_body_id plate = spawn_f(w, WORLD_BODY_STATIC, wt_box(0.5f, 10), v2(0, 20), 0, 0, true);
    world_body_id ghost = spawn_f(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-10, 0), 0, 0, true);
    world_body_id walker = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-10, 20));
    world_body_id blocker = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(10, 0));
    CHECK(wall && plate && ghost && walker && blocker);
    world_set_intent(w, ghost, v2(600, 0), 1);
    world_set_intent(w, walker, v2(600, 0), 1);
    for (int t = 0; t < 60; t++)
        world_step(w);
    /* the ghost went through the wall and the mover behind it, and stopped at the bounds */
    CHECK_NEAR(wt_pos(w, ghost).x, 49.0f, 0.01f);
    CHECK_NEAR(wt_pos(w, blocker).x, 10.0f, 1e-6f); /* never pushed by it */
    CHECK_NEAR(wt_pos(w, walker).x, 49.0f, 0.01f);  /* the plate did not stop it */
    world_destroy(w);
}

/* An event log replayed into a set of pairs, with exactness checks: no begin of a tracked pair,
 * no end of an untracked one. */
#define MAX_TRACK 4096
typedef struct track {
    world_body_id a[MAX_TRACK], b[MAX_TRACK];
    int n;
    int begins, ends;
} track;
static int track_find(const track *t, world_body_id a, world_body_id b) {
    for (int i = 0; i < t->n; i++)
        if (t->a[i] == a && t->b[i] == b) return i;
    return -1;
}
/* Applies one event; false when it breaks the pairing. */
static bool track_apply(track *t, world_body_id a, world_body_id b, bool begin) {
    int i = track_find(t, a, b);
    if (begin) {
        if (i >= 0 || t->n == MAX_TRACK) return false;
        t->a[t->n] = a, t->b[t->n] = b, t->n++;
        t->begins++;
        return true;
    }
    if (i < 0) return false;
    t->a[i] = t->a[t->n - 1], t->b[i] = t->b[t->n - 1], t->n--;
    t->ends++;
    return true;
}
/* Applies the last step's contact events, ends before begins (the world's order); false on a
 * pairing error. Crossing sensor events (begin and end in one step) are applied in order. */
static bool track_step(const world *w, track *contacts, track *sensors) {
    const world_contact_event *ce;
    size_t nc = world_contact_events(w, &ce);
    for (size_t k = 0; k < nc; k++)
        if (contacts && !track_apply(contacts, ce[k].a, ce[k].b, ce[k].begin)) return false;
    const world_sensor_event *se;
    size_t ns = world_sensor_events(w, &se);
    for (size_t k = 0; k < ns; k++)
        if (sensors && !track_apply(sensors, se[k].sensor, se[k].visitor, se[k].begin))
            return false;
    return true;
}

/* Begin and end exactly at the hysteresis thresholds: a box walks away from a wall and back in
 * steps of 0.7 skin; the tracked state must follow the oracle's gap through the automaton
 * (begin at <= 2 skin, end at > 4 skin). No flicker while it rests against the wall. */
static void test_contact_hysteresis(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(0, 0));
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-5, 0));
    CHECK(wall && m);
    world_set_intent(w, m, v2(60, 0), 1);
    track t = {0};
    bool in = false; /* the oracle automaton */
    uint32_t seq = 2;
    int flips = 0;
    for (int tick = 0; tick < 400; tick++) {
        /* phases: press (rest on the wall), leave slowly, come back slowly, press again */
        int phase = tick / 100;
        float v = phase == 0 || phase == 3 ? 60.0f
                  : phase == 1             ? -0.7f * SKIN * 60.0f
                                           : 0.7f * SKIN * 60.0f;
        world_set_intent(w, m, v2(v, 0), seq++);
        world_step(w);
        CHECK(track_step(w, &t, NULL));
        double gap = wt_gap(w, m, wall);
        /* skip ticks within rounding of a threshold: the oracle and the world may disagree */
        bool near_threshold = fabs(gap - 2 * SKIN) < 1e-5 || fabs(gap - 4 * SKIN) < 1e-5;
        bool was = in;
        if (!in && gap <= 2 * SKIN) in = true;
        if (in && gap > 4 * SKIN) in = false;
        if (near_threshold) {
            in = t.n == 1;
            continue;
        }
        CHECK_MSG((t.n == 1) == in, "tick %d gap %.6g skins: world %d oracle %d", tick, gap / SKIN,
                  t.n, in);
        if (was != in) flips++;
        if (t.n == 1) CHECK(t.a[0] == m && t.b[0] == wall);
    }
    /* begin (press), end (walked past 4 skins), begin (back within 2), and no more */
    CHECK_MSG(t.begins == 2 && t.ends == 1, "begins %d ends %d", t.begins, t.ends);
    CHECK(flips == 3);
    world_destroy(w);
}

/* The begin event's fields: normal from a (the mover) to b (the static), approach speed the
 * intended closing speed along it; a mover-mover pair's a is the lower id. */
static void test_contact_fields(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(0, 0));
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-3, 0));
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(10, 0));
    world_body_id q = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(20, 0));
    world_set_intent(w, m, v2(30, 0), 1);
    world_set_intent(w, q, v2(-40, 0), 1);
    bool seen_wall = false, seen_pq = false;
    for (int t = 0; t < 40; t++) {
        world_step(w);
        const world_contact_event *ce;
        size_t n = world_contact_events(w, &ce);
        for (size_t k = 0; k < n; k++) {
            if (!ce[k].begin) continue;
            if (ce[k].b == wall) {
                CHECK(ce[k].a == m && ce[k].owner_a == 7 && ce[k].owner_b == 0);
                CHECK_NEAR(ce[k].normal.x, 1.0f, 1e-6f);
                CHECK_NEAR(ce[k].approach_speed, 30.0f, 1e-4f);
                seen_wall = true;
            } else {
                CHECK(ce[k].a == (p < q ? p : q) && ce[k].b == (p < q ? q : p));
                /* p at rest, q closing at 40 from the right: from p towards q is +x */
                float sign = ce[k].a == p ? 1.0f : -1.0f;
                CHECK_NEAR(ce[k].normal.x, sign, 1e-6f);
                CHECK_NEAR(ce[k].approach_speed, 40.0f, 1e-4f);
                seen_pq = true;
            }
        }
    }
    CHECK(seen_wall && seen_pq);
    world_destroy(w);
}

/* A despawn ends the contacts and sensor overlaps of the body, in the next step's events. */
static void test_despawn_ends(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(0, 0));
    world_body_id plate = spawn_f(w, WORLD_BODY_STATIC, wt_box(3, 3), v2(-5, 0), 0, 0, true);
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-4, 0));
    world_set_intent(w, m, v2(60, 0), 1);
    track c = {0}, s = {0};
    for (int t = 0; t < 20; t++) {
        world_step(w);
        CHECK(track_step(w, &c, &s));
    }
    CHECK(c.n == 1 && s.n == 1 && s.a[0] == plate && s.b[0] == m);
    CHECK(world_despawn(w, m) == WORLD_OK);
    world_step(w);
    CHECK(track_step(w, &c, &s));
    CHECK(c.n == 0 && s.n == 0 && c.ends == 1 && s.ends == 1);
    CHECK(world_contact_count(w) == 0 && world_sensor_overlap_count(w) == 0);
    (void)wall;
    world_destroy(w);
}

/* A body despawned and another spawned in its place between two steps (its slot taken again):
 * the step ends the pairs of the one that went and begins those of the new one, contacts and
 * sensor overlaps alike (the world keys its pairs by slot or by id: neither hides the new body). */
static void test_slot_reused(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(0, 0));
    world_body_id plate = spawn_f(w, WORLD_BODY_STATIC, wt_box(3, 3), v2(-5, 0), 0, 0, true);
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-4, 0));
    world_set_intent(w, m, v2(60, 0), 1);
    track c = {0}, s = {0};
    for (int t = 0; t < 20; t++) {
        world_step(w);
        CHECK(track_step(w, &c, &s));
    }
    CHECK(c.n == 1 && s.n == 1);
    world_body_row info;
    CHECK(world_body_get(w, m, &info));
    CHECK(world_despawn(w, m) == WORLD_OK);
    world_body_id m2 = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), info.position);
    CHECK(m2 != WORLD_NULL_BODY && m2 != m);
    world_set_intent(w, m2, v2(60, 0), 1);
    world_step(w);
    CHECK(track_step(w, &c, &s));
    CHECK(c.ends == 1 && s.ends == 1 && c.begins == 2 && s.begins == 2);
    CHECK(c.n == 1 && c.a[0] == m2 && c.b[0] == wall);
    CHECK(s.n == 1 && s.a[0] == plate && s.b[0] == m2);
    world_destroy(w);
}

/* A static despawned and another spawned in its slot, at the same place, while a mover rests
 * against it: the step ends the old pair and begins the new one. Contacts are kept by slot; the
 * search finds the old pair under the new static's slot and must end it, not take it over. A
 * slow box among unit tiles (the boxes' own path, which takes the statics its slide noted) and a
 * circle (the general one). */
static void test_static_slot_reused(void) {
    for (int circle = 0; circle < 2; circle++) {
        world *w = wt_world(50, 8);
        world_set_events(w, true);
        world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(0.5f, 0.5f));
        world_body_id m = wt_spawn(w, WORLD_BODY_MOVING,
                                   circle ? wt_circle(0.4f) : wt_box(0.4f, 0.4f), v2(-3, 0.5f));
        world_set_intent(w, m, v2(6, 0), 1);
        track c = {0};
        for (int t = 0; t < 40; t++) {
            world_step(w);
            CHECK(track_step(w, &c, NULL));
        }
        CHECK(c.n == 1 && c.a[0] == m && c.b[0] == wall);
        CHECK(world_despawn(w, wall) == WORLD_OK);
        world_body_id wall2 = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(0.5f, 0.5f));
        CHECK(wall2 != WORLD_NULL_BODY && wall2 != wall);
        world_step(w);
        CHECK(track_step(w, &c, NULL));
        CHECK_MSG(c.ends == 1 && c.begins == 2, "circle %d: ends %d begins %d", circle, c.ends,
                  c.begins);
        CHECK(c.n == 1 && c.a[0] == m && c.b[0] == wall2);
        CHECK(world_contact_count(w) == 1);
        world_destroy(w);
    }
}

/* Contact tracking's own bookkeeping (world_events.c: pairs grouped by a mover's dense index, a
 * tail of new pairs, ended pairs left in place until the groups are rebuilt) against the oracle,
 * in a crowded scene of boxes (the fast paths) that rebuilds the groups for every reason: the
 * movers' re-sort every 16 steps, mover despawns and spawns, statics despawned and spawned again
 * in their slot, and more new and ended pairs than the groups hold between two re-sorts. Every
 * step: the events pair up, the world's count is the replayed set's, and every pair within
 * 2 skins is held, none past 4. */
#define GROUP_MOVERS 90
#define GROUP_STATICS 40
static void test_contact_groups(void) {
    int begins = 0, group_cycles = 0;
    for (unsigned seed = 1; seed <= 3; seed++) {
        collide_rng rng = {seed * 2246822519u};
        world *w = wt_world(8, 256);
        world_set_events(w, true);
        world_body_id ids[GROUP_MOVERS + GROUP_STATICS];
        int n = 0;
        for (int i = 0; i < GROUP_STATICS; i++) {
            world_body_id id = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f),
                                        v2((float)(int)collide_rng_range(&rng, -7, 7),
                                           (float)(int)collide_rng_range(&rng, -7, 7)));
            if (id) ids[n++] = id;
        }
        int statics = n;
        for (int i = 0; i < GROUP_MOVERS; i++) {
            world_body_id id = wt_spawn(
                w, WORLD_BODY_MOVING, wt_box(collide_rng_range(&rng, 0.15f, 0.4f), 0.3f),
                v2(collide_rng_range(&rng, -7.5f, 7.5f), collide_rng_range(&rng, -7.5f, 7.5f)));
            if (id) ids[n++] = id;
        }
        track c = {0};
        uint32_t seq = 1;
        for (int tick = 0; tick < 240; tick++) {
            for (int i = statics; i < n; i++)
                if (world_body_alive(w, ids[i]) && collide_rng_next(&rng) % 6 == 0)
                    world_set_intent(
                        w, ids[i],
                        v2(collide_rng_range(&rng, -8, 8), collide_rng_range(&rng, -8, 8)), seq++);
            if (tick % 20 == 7) { /* a mover goes, another comes in its place */
                int i = statics + (int)(collide_rng_next(&rng) % (uint32_t)(n - statics));
                world_body_row info;
                if (world_body_get(w, ids[i], &info)) {
                    CHECK(world_despawn(w, ids[i]) == WORLD_OK);
                    ids[i] = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.2f, 0.2f), info.position);
                }
            }
            if (tick % 30 == 13) { /* a static goes and comes back in its slot */
                int i = (int)(collide_rng_next(&rng) % (uint32_t)statics);
                vec2 at = wt_pos(w, ids[i]);
                CHECK(world_despawn(w, ids[i]) == WORLD_OK);
                ids[i] = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), at);
                CHECK(ids[i] != WORLD_NULL_BODY);
            }
            world_step(w);
            CHECK_MSG(track_step(w, &c, NULL), "seed %u tick %d: events do not pair", seed, tick);
            CHECK_MSG(world_contact_count(w) == (size_t)c.n,
                      "seed %u tick %d: count %zu, replayed %d", seed, tick, world_contact_count(w),
                      c.n);
            for (int i = 0; i < n; i++) {
                if (!world_body_alive(w, ids[i])) continue;
                for (int k = i + 1; k < n; k++) {
                    if (k < statics || !world_body_alive(w, ids[k])) continue;
                    /* a is the mover of a mover-static pair, else the lower id */
                    world_body_id a = i < statics ? ids[k] : ids[i] < ids[k] ? ids[i] : ids[k];
                    world_body_id b = a == ids[i] ? ids[k] : ids[i];
                    double gap = wt_gap(w, a, b);
                    bool tracked = track_find(&c, a, b) >= 0;
                    if (gap <= 2 * SKIN - 1e-5)
                        CHECK_MSG(tracked, "seed %u tick %d: gap %.3g skins untracked", seed, tick,
                                  gap / SKIN);
                    if (gap > 4 * SKIN + 1e-5)
                        CHECK_MSG(!tracked, "seed %u tick %d: gap %.3g skins tracked", seed, tick,
                                  gap / SKIN);
                }
            }
            if (c.begins + c.ends > 200 * (group_cycles + 1)) group_cycles++;
        }
        begins += c.begins;
        world_destroy(w);
    }
    /* the scenes were busy: many pairs came and went (more than a tail of 64 between re-sorts) */
    CHECK_MSG(begins > 1500 && group_cycles > 10, "begins %d", begins);
}

/* A sensor crossed at 10,000 u/s: no tick ends inside it, the swept move still reports a begin
 * and an end in the step that crossed it; then a slow visitor gets its begin and end apart. */
static void test_sensor_crossed_fast(void) {
    world *w = wt_world(500, 8);
    world_set_events(w, true);
    world_body_id plate = spawn_f(w, WORLD_BODY_STATIC, wt_box(1, 5), v2(0, 0), 0, 0, true);
    world_body_id bullet = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.1f, 0.1f), v2(-80, 0));
    world_set_intent(w, bullet, v2(10000, 0), 1);
    int crossing_step = -1;
    track s = {0};
    for (int t = 0; t < 5; t++) {
        world_step(w);
        const world_sensor_event *se;
        size_t n = world_sensor_events(w, &se);
        if (n) {
            CHECK(n == 2 && se[0].begin && !se[1].begin && se[0].sensor == plate &&
                  se[0].visitor == bullet && se[1].visitor == bullet);
            CHECK(crossing_step < 0);
            crossing_step = t;
        }
        CHECK(track_step(w, NULL, &s));
    }
    CHECK(crossing_step == 0); /* -80 + 166.7: past the plate in the first step */
    CHECK(s.n == 0 && s.begins == 1 && s.ends == 1);
    CHECK(world_sensor_overlap_count(w) == 0);
    world_destroy(w);
}

/* A sensor crossed by turning alone: a 8 x 0.2 bar spinning about its centre at the max angular
 * speed (0.42 rad a tick) sweeps its tip through a small static sensor in the middle of its first
 * tick (at about 0.21 rad); neither tick's end touches it. The step reports a begin and an end,
 * as for a fast translation. */
static void test_sensor_crossed_by_turning(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id plate =
        spawn_f(w, WORLD_BODY_STATIC, wt_box(0.05f, 0.05f), v2(3.85f, 0.82f), 0, 0, true);
    world_body_id bar = wt_spawn(w, WORLD_BODY_MOVING, wt_box(4.0f, 0.1f), v2(0, 0));
    CHECK(world_set_intent_turning(w, bar, v2(0, 0), WORLD_DEFAULT_MAX_ANGULAR_SPEED, 1) ==
          WORLD_OK);
    track s = {0};
    world_step(w);
    world_body_row info;
    CHECK(world_body_get(w, bar, &info) && info.angular_velocity > 25.0f);
    const world_sensor_event *se;
    size_t n = world_sensor_events(w, &se);
    CHECK_MSG(n == 2 && se[0].begin && !se[1].begin && se[0].sensor == plate &&
                  se[0].visitor == bar,
              "%zu sensor events in the step the bar's tip swept through the sensor", n);
    CHECK(track_step(w, NULL, &s));
    CHECK(s.n == 0 && s.begins == 1 && s.ends == 1);
    world_destroy(w);
}

/* A moving sensor sweeps over still bodies (statics included) and reports them; a sensor does not
 * report another sensor or a body it does not interact with. */
static void test_moving_sensor(void) {
    world *w = wt_world(100, 16);
    world_set_events(w, true);
    world_body_id zone = spawn_f(w, WORLD_BODY_MOVING, wt_box(2, 2), v2(-30, 0), 0, 0, true);
    world_body_id rock = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(0, 0));
    world_body_id idle = wt_spawn(w, WORLD_BODY_MOVING, wt_circle(1), v2(10, 0));
    world_body_id other = spawn_f(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(20, 0), 0, 0, true);
    world_body_id ghost = spawn_f(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(25, 0), 2, 2, false);
    CHECK(zone && rock && idle && other && ghost);
    world_set_intent(w, zone, v2(60, 0), 1);
    track s = {0};
    int max_inside = 0;
    for (int t = 0; t < 120; t++) {
        world_step(w);
        CHECK(track_step(w, NULL, &s));
        if (s.n > max_inside) max_inside = s.n;
        for (int k = 0; k < s.n; k++)
            CHECK(s.a[k] == zone && (s.b[k] == rock || s.b[k] == idle));
    }
    CHECK_NEAR(wt_pos(w, zone).x, 90.0f, 0.01f); /* 2 s at 60 u/s, through them all */
    CHECK_MSG(s.begins == 2 && s.ends == 2, "begins %d ends %d", s.begins, s.ends);
    CHECK(max_inside == 1);
    world_destroy(w);
}

/* Random scenes of every shape pair with random filters and sensors, churn included: the event
 * stream pairs exactly (replayed into sets), and after every step the sets agree with the oracle:
 * every tracked contact within 4 skins, every interacting pair within 2 skins tracked; every
 * tracked overlap overlapping, every interacting overlap tracked. */
static geom_shape random_shape(collide_rng *rng) {
    switch (collide_rng_next(rng) % 3) {
    case 0:
        return wt_box(collide_rng_range(rng, 0.3f, 1.0f), collide_rng_range(rng, 0.3f, 1.0f));
    case 1:
        return wt_circle(collide_rng_range(rng, 0.3f, 1.0f));
    default:
        return wt_ngon(3 + (int)(collide_rng_next(rng) % 5), collide_rng_range(rng, 0.4f, 1.0f),
                       collide_rng_range(rng, 0, 6.28f));
    }
}

/* A soak scene: the bodies it spawned, their filters and kinds, the event streams replayed into
 * pair sets, and what the scenes produced (printed, so it shows the paths ran). */
#define SOAK_MAX 1024
typedef struct soak {
    world *w;
    world_body_id ids[SOAK_MAX];
    world_filter fs[SOAK_MAX];
    bool moving[SOAK_MAX];
    float reach[SOAK_MAX]; /* bounding radius about the body's position, at any angle */
    int n;
    track c, s;
    unsigned seed;
} soak;

static float shape_reach(const geom_shape *s) {
    if (s->kind == GEOM_SHAPE_BOX) return hypotf(s->u.half_extents.x, s->u.half_extents.y);
    if (s->kind == GEOM_SHAPE_CIRCLE) return s->u.radius;
    float r = 0;
    for (int i = 0; i < s->u.polygon.count; i++)
        r = fmaxf(r, hypotf(s->u.polygon.vertices[i].x, s->u.polygon.vertices[i].y));
    return r;
}

static soak *soak_new(world *w, unsigned seed) {
    soak *k = calloc(1, sizeof *k);
    if (!k) abort();
    k->w = w;
    k->seed = seed;
    world_set_events(w, true);
    return k;
}

/* Spawns a body (filter NULL: the defaults) and follows it; its index, or -1 if the world
 * refused it or the scene is full. */
static int soak_spawn(soak *k, bool moving, geom_shape shape, vec2 p, const world_filter *f) {
    if (k->n == SOAK_MAX) return -1;
    world_body_kind kind = moving ? WORLD_BODY_MOVING : WORLD_BODY_STATIC;
    world_body_id id = f ? spawn_f(k->w, kind, shape, p, f->category, f->mask, f->sensor)
                         : wt_spawn(k->w, kind, shape, p);
    if (!id) return -1;
    int i = k->n;
    if (!world_body_filter(k->w, id, &k->fs[i])) return -1;
    k->n++;
    k->ids[i] = id;
    k->moving[i] = moving;
    k->reach[i] = shape_reach(&shape);
    return i;
}

/* After a step: the events pair exactly (replayed into the sets), the sets are the world's
 * counts, and they agree with the oracle: every tracked contact between live interacting bodies
 * within 4 skins, every tracked overlap overlapping; every interacting pair (one of them moving)
 * within 2 skins tracked, every interacting overlap tracked. Pairs whose bounding circles lie
 * farther apart than 4 skins are skipped (the first check covers them). */
static void soak_check(soak *k, int tick) {
    world *w = k->w;
    unsigned seed = k->seed;
    CHECK_MSG(track_step(w, &k->c, &k->s), "seed %u tick %d: events do not pair", seed, tick);
    CHECK(world_contact_count(w) == (size_t)k->c.n);
    CHECK(world_sensor_overlap_count(w) == (size_t)k->s.n);
    for (int t = 0; t < k->c.n; t++) {
        world_filter fa, fb;
        bool alive = world_body_filter(w, k->c.a[t], &fa) && world_body_filter(w, k->c.b[t], &fb);
        CHECK_MSG(alive, "seed %u tick %d: a contact with a despawned body", seed, tick);
        if (!alive) continue;
        CHECK_MSG(world_filters_interact(&fa, &fb), "seed %u tick %d: contact of a filtered pair",
                  seed, tick);
        double gap = wt_gap(w, k->c.a[t], k->c.b[t]);
        CHECK_MSG(gap <= 4 * SKIN + 1e-5, "seed %u tick %d: gap %.3g skins tracked", seed, tick,
                  gap / SKIN);
    }
    for (int t = 0; t < k->s.n; t++) {
        bool alive = world_body_alive(w, k->s.a[t]) && world_body_alive(w, k->s.b[t]);
        CHECK_MSG(alive, "seed %u tick %d: an overlap with a despawned body", seed, tick);
        if (alive)
            CHECK_MSG(wt_gap(w, k->s.a[t], k->s.b[t]) <= 1e-4, "seed %u tick %d: apart but tracked",
                      seed, tick);
    }
    vec2 pos[SOAK_MAX];
    bool alive[SOAK_MAX];
    for (int i = 0; i < k->n; i++) {
        alive[i] = world_body_alive(w, k->ids[i]);
        if (alive[i]) pos[i] = wt_pos(w, k->ids[i]);
    }
    for (int i = 0; i < k->n; i++) {
        if (!alive[i]) continue;
        for (int j = i + 1; j < k->n; j++) {
            if (!alive[j] || (!k->moving[i] && !k->moving[j])) continue;
            float d = hypotf(pos[i].x - pos[j].x, pos[i].y - pos[j].y);
            if (d - k->reach[i] - k->reach[j] > 4 * SKIN + 1e-4f) continue;
            if (!world_filters_interact(&k->fs[i], &k->fs[j])) continue;
            double gap = wt_gap(w, k->ids[i], k->ids[j]);
            if (k->fs[i].sensor || k->fs[j].sensor) {
                if (k->fs[i].sensor && k->fs[j].sensor) continue;
                world_body_id sn = k->fs[i].sensor ? k->ids[i] : k->ids[j];
                world_body_id vi = k->fs[i].sensor ? k->ids[j] : k->ids[i];
                if (gap < -1e-4)
                    CHECK_MSG(track_find(&k->s, sn, vi) >= 0, "seed %u tick %d: overlap untracked",
                              seed, tick);
                continue;
            }
            if (gap > 2 * SKIN - 1e-5) continue;
            /* a is the mover of a mover-static pair, else the lower id */
            world_body_id a = !k->moving[j]           ? k->ids[i]
                              : !k->moving[i]         ? k->ids[j]
                              : k->ids[i] < k->ids[j] ? k->ids[i]
                                                      : k->ids[j];
            world_body_id b = a == k->ids[i] ? k->ids[j] : k->ids[i];
            CHECK_MSG(track_find(&k->c, a, b) >= 0, "seed %u tick %d: gap %.3g skins untracked",
                      seed, tick, gap / SKIN);
        }
    }
}

/* soak_check, and whether it passed. */
static bool soak_ok(soak *k, int tick) {
    int before = harness_failed_checks;
    soak_check(k, tick);
    return harness_failed_checks == before;
}

/* Scene totals, summed over a test's seeds. */
typedef struct soak_totals {
    long begins, ends, sensor_begins, separations, swept_hits;
} soak_totals;
static void soak_end(soak *k, soak_totals *tot) {
    world_stats st;
    world_get_stats(k->w, &st);
    tot->begins += k->c.begins;
    tot->ends += k->c.ends;
    tot->sensor_begins += k->s.begins;
    tot->separations += (long)st.separations;
    tot->swept_hits += (long)st.swept_hits;
    world_destroy(k->w);
    free(k);
}
static void soak_print(const char *name, const soak_totals *t) {
    printf("%s: %ld contact begins, %ld ends, %ld sensor begins, %ld separations, %ld swept hits\n",
           name, t->begins, t->ends, t->sensor_begins, t->separations, t->swept_hits);
}

static world_filter random_filter(collide_rng *rng) {
    world_filter f = {1u << (collide_rng_next(rng) % 3), 0, collide_rng_next(rng) % 6 == 0};
    f.mask = collide_rng_next(rng) % 3 ? 0xffffffffu : (collide_rng_next(rng) & 7u) | 1u;
    return f;
}

#define SOAK_BODIES 40
/* boxes: only boxes no larger than a cell, moving slowly, no filters: the scene whose movers take
 * the box-among-boxes slide, which tells contact tracking the statics it walked. */
static void events_soak(bool boxes) {
    soak_totals tot = {0};
    for (unsigned seed = 1; seed <= 6; seed++) {
        collide_rng rng = {seed * 2654435761u};
        soak *k = soak_new(wt_world(12, 128), seed);
        for (int i = 0; i < SOAK_BODIES; i++) {
            world_filter f = random_filter(&rng);
            if (boxes) f = (world_filter){0, 0, false};
            geom_shape shape = boxes ? wt_box(collide_rng_range(&rng, 0.2f, 0.5f),
                                              collide_rng_range(&rng, 0.2f, 0.5f))
                                     : random_shape(&rng);
            CHECK(soak_spawn(k, i >= 8, shape,
                             v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10)),
                             &f) == i);
        }
        uint32_t seq = 1;
        for (int tick = 0; tick < 300; tick++) {
            for (int i = 8; i < SOAK_BODIES; i++) {
                if (!world_body_alive(k->w, k->ids[i])) continue;
                /* mostly slow pushing (resting contacts), sometimes fast (crossings) */
                float speed = collide_rng_next(&rng) % 10 == 0 && !boxes ? 600.0f : 6.0f;
                if (collide_rng_next(&rng) % 8 == 0)
                    world_set_intent(k->w, k->ids[i],
                                     v2(collide_rng_range(&rng, -speed, speed),
                                        collide_rng_range(&rng, -speed, speed)),
                                     seq++);
            }
            if (tick % 50 == 49) /* a despawn in contact or not */
                world_despawn(k->w, k->ids[8 + (int)(collide_rng_next(&rng) % (SOAK_BODIES - 8))]);
            world_step(k->w);
            if (!soak_ok(k, tick)) break;
        }
        soak_end(k, &tot);
    }
    soak_print(boxes ? "events_soak_boxes" : "events_soak", &tot);
    /* the scenes did produce events of both kinds */
    CHECK_MSG(tot.begins > 50 && (boxes || tot.sensor_begins > 20), "contacts %ld sensor %ld",
              tot.begins, tot.sensor_begins);
}
static void test_events_soak(void) { events_soak(false); }
static void test_events_soak_boxes(void) { events_soak(true); }

/* Rows and blocks of tiles (unit boxes and half-unit boxes, every seventh a circle or a polygon)
 * for the crowd scenes: a slide along a row meets more statics than a note holds, and a non-box
 * among them sends it to the general slide. */
static void soak_tiles(soak *k, collide_rng *rng) {
    int t = 0;
    for (int row = 0; row < 4; row++) {
        /* unit tiles, half-unit tiles, unit tiles, gravel (small boxes a little apart) */
        float y = -12.0f + 8.0f * (float)row, h = row == 3 ? 0.05f : row % 2 ? 0.25f : 0.5f;
        for (float x = -16.0f; x <= 16.0f; x += row == 3 ? 0.15f : 2 * h, t++) {
            if (collide_rng_next(rng) % 9 == 0) continue; /* a gap in the row */
            geom_shape s = t % 7 == 3   ? wt_circle(h)
                           : t % 7 == 5 ? wt_ngon(3 + t % 4, h, 0.3f)
                                        : wt_box(h, h);
            soak_spawn(k, false, s, v2(x, y), NULL);
        }
    }
    for (int b = 0; b < 4; b++) /* 3x3 blocks of unit tiles between the rows */
        for (int i = 0; i < 9; i++)
            soak_spawn(k, false, wt_box(0.5f, 0.5f),
                       v2(-9.0f + 6.0f * (float)b + (float)(i % 3),
                          -7.5f + 8.0f * (float)(b % 3) + (float)(i / 3)),
                       NULL);
}

/* 1. Dense crowds among tile rows: 150-300 box movers (a few circles and polygons on odd
 * seeds) herded toward the rows and into each other, mostly slowly (the notes path, resting
 * contacts), a few fast; the separation pass pushes movers that already slid this step. */
static void test_events_soak_crowd(void) {
    soak_totals tot = {0};
    long statics = 0, moving = 0;
    for (unsigned seed = 1; seed <= 4; seed++) {
        collide_rng rng = {seed * 40503u + 7u};
        soak *k = soak_new(wt_world(20, SOAK_MAX), seed);
        soak_tiles(k, &rng);
        int first = k->n, movers = 150 + 50 * (int)seed;
        statics += first;
        while (k->n - first < movers && k->n < SOAK_MAX) {
            geom_shape s = seed % 2 && collide_rng_next(&rng) % 8 == 0
                               ? random_shape(&rng)
                               : wt_box(collide_rng_range(&rng, 0.15f, 0.5f),
                                        collide_rng_range(&rng, 0.15f, 0.5f));
            /* between the rows, in bands a body tall */
            float y = -12.0f + 8.0f * (float)(collide_rng_next(&rng) % 4) +
                      collide_rng_range(&rng, 1.2f, 6.8f);
            soak_spawn(k, true, s, v2(collide_rng_range(&rng, -17, 17), y), NULL);
        }
        moving += k->n - first;
        uint32_t seq = 1;
        for (int tick = 0; tick < 150; tick++) {
            for (int i = first; i < k->n; i++) {
                if (collide_rng_next(&rng) % 6) continue;
                vec2 p = wt_pos(k->w, k->ids[i]);
                /* toward the nearest row below or above, and toward the middle */
                float row = -12.0f + 8.0f * floorf((p.y + 12.0f) / 8.0f + 0.5f);
                /* some creep (a skin or two a tick: a gap crosses the begin band within a
                 * step, while pushes of the separation pass move them by as much) */
                unsigned pace = collide_rng_next(&rng) % 25;
                float fast = pace == 0 ? 80.0f : pace < 10 ? 0.03f : 1.0f;
                vec2 v =
                    v2(fast * (-0.2f * p.x + collide_rng_range(&rng, -3, 3)),
                       fast * (3.0f * (row > p.y ? 1.0f : -1.0f) + collide_rng_range(&rng, -2, 2)));
                world_set_intent(k->w, k->ids[i], v, seq++);
            }
            world_step(k->w);
            if (!soak_ok(k, tick)) break; /* one scene's failure is enough to read */
        }
        soak_end(k, &tot);
    }
    soak_print("events_soak_crowd", &tot);
    printf("events_soak_crowd: %ld statics, %ld movers\n", statics, moving);
    CHECK(tot.begins > 2000 && tot.ends > 500 && tot.separations > 500);
}

/* 1b. Movers dropped onto resting movers: box movers rest a few skins above strips of small box
 * statics (uneven tops, uneven spacing: a walk finds more of them than a note holds, and their
 * cells list them in spawn order); each tick a few new boxes spawn overlapping a resting mover's
 * top by a few skins, so the separation pass pushes a mover that already slid this step toward
 * the statics by about a skin, where contacts begin (the scene of test_note_overwritten_*, at
 * random). */
static void test_events_soak_drop(void) {
    soak_totals tot = {0};
    long dropped = 0;
    for (unsigned seed = 1; seed <= 8; seed++) {
        collide_rng rng = {seed * 1597334677u};
        soak *k = soak_new(wt_world(20, SOAK_MAX), seed);
        for (int strip = 0; strip < 5; strip++) {
            float top = -16.0f + 7.0f * (float)strip;
            for (float x = -12.0f; x < 12.0f; x += collide_rng_range(&rng, 0.06f, 0.35f)) {
                float h = collide_rng_range(&rng, 0.02f, 0.1f);
                float dy = (float)(collide_rng_next(&rng) % 4) * SKIN;
                soak_spawn(k, false, wt_box(h, h), v2(x, top - dy - h), NULL);
            }
        }
        int first = k->n;
        for (int strip = 0; strip < 5; strip++) {
            float top = -16.0f + 7.0f * (float)strip;
            for (float x = -11.0f; x < 11.0f; x += 1.2f) {
                float hx = collide_rng_range(&rng, 0.15f, 0.5f),
                      hy = collide_rng_range(&rng, 0.1f, 0.5f);
                float gap = (float)(1 + collide_rng_next(&rng) % 6) * SKIN;
                soak_spawn(k, true, wt_box(hx, hy), v2(x, top + gap + hy), NULL);
            }
        }
        int resting = k->n;
        CHECK(resting > first);
        for (int tick = 0; tick < 60 && resting > first; tick++) {
            for (int d = 0; d < 4; d++) {
                int i = first + (int)(collide_rng_next(&rng) % (unsigned)(resting - first));
                geom_shape s;
                float angle;
                if (!world_body_local_shape(k->w, k->ids[i], &s, &angle)) continue;
                vec2 p = wt_pos(k->w, k->ids[i]);
                float hx = collide_rng_range(&rng, 0.1f, 0.5f),
                      hy = collide_rng_range(&rng, 0.1f, 0.4f);
                float overlap = (float)(1 + collide_rng_next(&rng) % 4) * SKIN;
                vec2 at = v2(p.x + collide_rng_range(&rng, -0.3f, 0.3f),
                             p.y + s.u.half_extents.y + hy - overlap);
                if (soak_spawn(k, true, wt_box(hx, hy), at, NULL) >= 0) dropped++;
            }
            world_step(k->w);
            if (!soak_ok(k, tick)) break; /* one scene's failure is enough to read */
        }
        soak_end(k, &tot);
    }
    soak_print("events_soak_drop", &tot);
    printf("events_soak_drop: %ld movers dropped on resting ones\n", dropped);
    CHECK(tot.begins > 1000 && dropped > 1000 && tot.separations > 1000);
}

/* 2. Turning bodies of every shape kind, turning switched on and off, random filters and
 * sensors: with mover collisions (the general passes), without them (world_turn_step_alone)
 * and alone among statics (one mover). */
static void events_soak_turning(int movers, bool mover_collisions, soak_totals *tot) {
    for (unsigned seed = 1; seed <= (movers == 1 ? 16u : 4u); seed++) { /* one mover meets less */
        collide_rng rng = {seed * 2246822519u + (unsigned)movers};
        world *w = wt_world(12, 128);
        world_set_mover_collisions(w, mover_collisions);
        soak *k = soak_new(w, seed);
        for (int i = 0; i < 24; i++) {
            world_filter f = random_filter(&rng);
            soak_spawn(k, false, random_shape(&rng),
                       v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10)), &f);
        }
        int first = k->n;
        for (int i = 0; i < movers; i++) {
            world_filter f = random_filter(&rng);
            if (movers == 1) f.sensor = false;
            soak_spawn(k, true, random_shape(&rng),
                       v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10)), &f);
        }
        uint32_t seq = 1;
        for (int tick = 0; tick < 300; tick++) {
            for (int i = first; i < k->n; i++) {
                if (collide_rng_next(&rng) % 6) continue;
                float speed = collide_rng_next(&rng) % 12 == 0 ? 300.0f : 5.0f;
                vec2 v = v2(collide_rng_range(&rng, -speed, speed),
                            collide_rng_range(&rng, -speed, speed));
                if (collide_rng_next(&rng) % 4 == 0) v = v2(0, 0); /* turning in place */
                unsigned r = collide_rng_next(&rng) % 4;
                if (r == 0)
                    world_set_intent(k->w, k->ids[i], v, seq++); /* keeps its turning */
                else
                    world_set_intent_turning(k->w, k->ids[i], v,
                                             r == 1 ? 0.0f : collide_rng_range(&rng, -8, 8), seq++);
            }
            world_step(k->w);
            if (!soak_ok(k, tick)) break; /* one scene's failure is enough to read */
        }
        soak_end(k, tot);
    }
}
static void test_events_soak_turning(void) {
    soak_totals on = {0}, off = {0}, alone = {0};
    events_soak_turning(40, true, &on);
    events_soak_turning(40, false, &off);
    events_soak_turning(1, true, &alone);
    soak_print("events_soak_turning", &on);
    soak_print("events_soak_turning (mover collisions off)", &off);
    soak_print("events_soak_turning (one mover)", &alone);
    CHECK(on.begins > 300 && on.sensor_begins > 50 && on.separations > 100);
    CHECK(off.begins > 300 && off.sensor_begins > 50);
    CHECK(alone.begins > 15);
}

/* A random tracked contact's body of the kind asked (moving or static), or -1. */
static int soak_pick_in_contact(soak *k, collide_rng *rng, bool moving) {
    if (!k->c.n) return -1;
    int t = (int)(collide_rng_next(rng) % (unsigned)k->c.n);
    for (int i = 0; i < k->n; i++)
        if (k->moving[i] == moving && (k->ids[i] == k->c.a[t] || k->ids[i] == k->c.b[t])) return i;
    return -1;
}

/* 3. Churn: movers despawned in contact and spawned, statics despawned under resting movers and
 * spawned among them (world_events_rescan), filters changed at runtime; movers pushing slowly
 * (resting contacts) with some turning. */
static void test_events_soak_churn(void) {
    soak_totals tot = {0};
    long despawned = 0, spawned = 0, refiltered = 0, beside = 0;
    for (unsigned seed = 1; seed <= 6; seed++) {
        collide_rng rng = {seed * 3266489917u};
        soak *k = soak_new(wt_world(12, 256), seed);
        for (int i = 0; i < 60; i++) {
            world_filter f = random_filter(&rng);
            if (i % 3) f = (world_filter){0, 0, false};
            soak_spawn(k, i >= 20, i % 2 ? random_shape(&rng) : wt_box(0.4f, 0.4f),
                       v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10)), &f);
        }
        uint32_t seq = 1;
        for (int tick = 0; tick < 300; tick++) {
            for (int i = 0; i < k->n; i++) {
                if (!k->moving[i] || collide_rng_next(&rng) % 8) continue;
                vec2 v = v2(collide_rng_range(&rng, -4, 4), collide_rng_range(&rng, -4, 4));
                if (collide_rng_next(&rng) % 2) v = v2(0, 0); /* at rest: no search looks */
                if (collide_rng_next(&rng) % 5 == 0)
                    world_set_intent_turning(k->w, k->ids[i], v, collide_rng_range(&rng, -3, 3),
                                             seq++);
                else
                    world_set_intent(k->w, k->ids[i], v, seq++);
            }
            unsigned r = collide_rng_next(&rng) % 8;
            int i = r < 4 ? soak_pick_in_contact(k, &rng, r % 2 == 0) : -1;
            if (i >= 0 && world_despawn(k->w, k->ids[i]) == WORLD_OK) despawned++;
            if (r == 4 || r == 5) { /* a spawn of either kind, maybe on a resting mover */
                world_filter f = random_filter(&rng);
                if (collide_rng_next(&rng) % 2) f = (world_filter){0, 0, false};
                if (soak_spawn(
                        k, r == 4, random_shape(&rng),
                        v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10)),
                        &f) >= 0)
                    spawned++;
            }
            for (int tries = 0; r == 7 && tries < 8; tries++) {
                /* a static spawned a skin or so beside a box mover at rest */
                int j = 20 + 2 * (int)(collide_rng_next(&rng) % 20);
                geom_shape s;
                float angle;
                world_body_row b;
                vec2 held;
                if (world_body_local_shape(k->w, k->ids[j], &s, &angle) && angle == 0 &&
                    world_body_get(k->w, k->ids[j], &b) &&
                    world_body_intent(k->w, k->ids[j], &held, NULL) && held.x == 0 && held.y == 0 &&
                    b.velocity.x == 0 && b.velocity.y == 0) {
                    r = 8; /* one */
                    /* category 8: it interacts with this mover unless its mask leaves 8 out */
                    world_filter f = {collide_rng_next(&rng) % 2 ? 8u : 1u, 0, false};
                    float gap = (float)(1 + collide_rng_next(&rng) % 3) * 0.5f * SKIN;
                    vec2 p = b.position;
                    if (soak_spawn(k, false, wt_box(0.2f, 0.2f), v2(p.x + 0.6f + gap, p.y), &f) >=
                        0)
                        beside++;
                }
            }
            if (r == 6 && k->n) { /* a filter changed at runtime, often back to the defaults */
                int j = (int)(collide_rng_next(&rng) % (unsigned)k->n);
                world_filter f = random_filter(&rng);
                if (collide_rng_next(&rng) % 2) f = (world_filter){0, 0, false};
                if (world_body_set_filter(k->w, k->ids[j], &f) == WORLD_OK) {
                    CHECK(world_body_filter(k->w, k->ids[j], &k->fs[j]));
                    refiltered++;
                }
            }
            world_step(k->w);
            if (!soak_ok(k, tick)) break; /* one scene's failure is enough to read */
        }
        soak_end(k, &tot);
    }
    soak_print("events_soak_churn", &tot);
    printf("events_soak_churn: %ld despawned in contact, %ld spawned (%ld beside a mover at rest), "
           "%ld filters changed\n",
           despawned, spawned, beside, refiltered);
    CHECK(tot.begins > 500 && despawned > 100 && spawned > 100 && beside > 15 && refiltered > 50);
}

/* A mover slid twice in one step: its slide in the mover pass notes the statics of its region
 * for contact tracking (world_events_noted), then a push of the separation pass slides it again
 * over a region reaching past the first, where the second slide finds more statics than a note
 * holds (circle: a circle static, which sends it to the general slide). Either way the second
 * walk wrote over the note's statics without marking it; the search must then not read the
 * first note's mark with them. The scene: mover a at rest 3 skins above the box static s (no
 * contact); a mover spawned over a's top by 2 skins is pushed apart from it, a down by 1.5
 * skins (1.5 skins from s: within the begin gap), whose push region reaches 5.5 skins below a's
 * start, past its first region (4 skins) onto statics whose tops lie 5 skins below. The begin
 * of a and s must come in that step. */
static void note_overwritten(bool circle) {
    world *w = wt_world(50, 16);
    world_set_events(w, true);
    /* s before the strip's statics: in their cell, the walks meet it after them (a cell lists
     * its newest static first) */
    world_body_id s = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.1f, 0.1f), v2(0, -0.6f - 3 * SKIN));
    float strip_top = -0.5f - 5 * SKIN;
    float xs[4] = {-0.4f, -0.25f, 0.25f, 0.4f};
    /* circle: the circle, then a box the walks meet before it (the slide writes the box into
     * the note, then gives up at the circle) */
    for (int k = 0; k < (circle ? 2 : 4); k++) {
        geom_shape shape = circle && k == 0 ? wt_circle(0.05f) : wt_box(0.05f, 0.05f);
        CHECK(wt_spawn(w, WORLD_BODY_STATIC, shape, v2(xs[k], strip_top - 0.05f)));
    }
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 0));
    CHECK(s && a);
    world_step(w);
    const world_contact_event *ce;
    CHECK(world_contact_events(w, &ce) == 0);
    CHECK_NEAR(wt_gap(w, a, s), 3 * SKIN, 1e-5);
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 1.0f - 2 * SKIN));
    CHECK(b);
    world_step(w);
    /* the scene did what it says: a pushed down 1.5 skins, now within the begin gap of s */
    CHECK_NEAR(wt_pos(w, a).y, -1.5f * SKIN, 1e-5f);
    double gap = wt_gap(w, a, s);
    CHECK_MSG(gap <= 2 * SKIN - 1e-5, "gap %.3g skins", gap / SKIN);
    size_t n = world_contact_events(w, &ce);
    bool begun = false;
    for (size_t k = 0; k < n; k++)
        if (ce[k].begin && ce[k].a == a && ce[k].b == s) begun = true;
    CHECK_MSG(begun, "%s: no begin of a and s at %.3g skins (%zu events)",
              circle ? "circle" : "boxes", gap / SKIN, n);
    world_destroy(w);
}
static void test_note_overwritten_boxes(void) { note_overwritten(false); }
static void test_note_overwritten_circle(void) { note_overwritten(true); }

/* A mover turning in place (no translation: only its angle changes) makes and breaks contacts
 * like one that moves: a rod lying a skin above a wall along its right half turns up, off it
 * (the pair ends once past 4 skins), then down onto it again (the pair begins within 2 skins).
 * Its position never changes, so a search that looks only at the movers that changed place
 * would keep the first pair and miss the second begin. */
static void test_turn_in_place_contacts(void) {
    world *w = wt_world(50, 8);
    world_set_events(w, true);
    world_body_id rod = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1.0f, 0.05f), v2(0, 0));
    world_body_id wall =
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.6f, 0.5f), v2(0.8f, -0.55f - SKIN));
    CHECK(rod && wall);
    track c = {0};
    world_step(w);
    CHECK(track_step(w, &c, NULL) && c.n == 1 && c.begins == 1);
    uint32_t seq = 1;
    CHECK(world_set_intent_turning(w, rod, v2(0, 0), 3.0f, seq++) == WORLD_OK);
    for (int t = 0; t < 10; t++) {
        world_step(w);
        CHECK(track_step(w, &c, NULL));
    }
    CHECK(wt_pos(w, rod).x == 0.0f && wt_pos(w, rod).y == 0.0f);
    double gap = wt_gap(w, rod, wall);
    CHECK_MSG(gap > 4 * SKIN && c.n == 0 && c.ends == 1, "turned off by %.3g skins: %d held",
              gap / SKIN, c.n);
    CHECK(world_set_intent_turning(w, rod, v2(0, 0), -3.0f, seq++) == WORLD_OK);
    for (int t = 0; t < 20; t++) {
        world_step(w);
        CHECK(track_step(w, &c, NULL));
    }
    CHECK(wt_pos(w, rod).x == 0.0f && wt_pos(w, rod).y == 0.0f);
    gap = wt_gap(w, rod, wall);
    CHECK_MSG(gap <= 2 * SKIN && c.n == 1 && c.begins == 2, "turned back to %.3g skins: %d held",
              gap / SKIN, c.n);
    world_destroy(w);
}

/* Events off: nothing listed, nothing tracked, and turning them on reports what touches now. */
static void test_events_toggle(void) {
    world *w = wt_world(50, 8);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(0, 0));
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(-3, 0));
    world_set_intent(w, m, v2(30, 0), 1);
    for (int t = 0; t < 30; t++)
        world_step(w);
    const world_contact_event *ce;
    CHECK(world_contact_events(w, &ce) == 0);
    world_set_events(w, true);
    world_set_intent(w, m, v2(0, 0), 2);
    world_step(w);
    CHECK(world_contact_events(w, &ce) == 1 && ce[0].begin && ce[0].a == m && ce[0].b == wall);
    world_destroy(w);
}

TEST_MAIN(TEST(test_filter_api), TEST(test_filter_matrix), TEST(test_sensors_never_block),
          TEST(test_contact_hysteresis), TEST(test_contact_fields), TEST(test_despawn_ends),
          TEST(test_slot_reused), TEST(test_static_slot_reused), TEST(test_contact_groups),
          TEST(test_sensor_crossed_fast), TEST(test_sensor_crossed_by_turning),
          TEST(test_moving_sensor), TEST(test_events_soak), TEST(test_events_soak_boxes),
          TEST(test_events_soak_crowd), TEST(test_events_soak_drop), TEST(test_events_soak_turning),
          TEST(test_events_soak_churn), TEST(test_events_toggle), TEST(test_note_overwritten_boxes),
          TEST(test_note_overwritten_circle), TEST(test_turn_in_place_contacts))

/* The world API: id table (generations, staleness, retirement), spawn validation, intents,
 * change tracking, queries, stats. */
#include "world_test_util.h"

static void test_ids_never_zero_and_stale_detected(void) {
    world *w = wt_world(50.0f, 8);
    CHECK(w);
    CHECK(!world_body_alive(w, WORLD_NULL_BODY));
    CHECK(world_despawn(w, WORLD_NULL_BODY) == WORLD_ERR_NOT_FOUND);
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0));
    CHECK(a != WORLD_NULL_BODY && world_body_alive(w, a));
    CHECK(world_despawn(w, a) == WORLD_OK);
    CHECK(!world_body_alive(w, a));
    CHECK(world_despawn(w, a) == WORLD_ERR_NOT_FOUND);
    CHECK(world_set_intent(w, a, v2(1, 0), 1) == WORLD_ERR_NOT_FOUND);
    world_body_row info;
    CHECK(!world_body_get(w, a, &info));
    /* the slot is reused with a new generation: the old id stays stale */
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0));
    CHECK(b != WORLD_NULL_BODY && b != a);
    CHECK(!world_body_alive(w, a) && world_body_alive(w, b));
    /* garbage ids are not found */
    CHECK(!world_body_alive(w, 0xffffffffu));
    CHECK(!world_body_alive(w, b ^ 1u));
    world_destroy(w);
}

/* A slot whose generation would wrap is retired, so no id ever comes back. */
static void test_generation_wrap_retires_slot(void) {
    world *w = wt_world(50.0f, 65536); /* 16 slot bits, 16 generation bits */
    CHECK(w);
    geom_shape s = wt_box(0.5f, 0.5f);
    world_body_id prev = WORLD_NULL_BODY;
    uint32_t cycles = 0;
    for (;;) {
        world_body_id id = WORLD_NULL_BODY;
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(0, 0), 1, &id, NULL) == WORLD_OK);
        if (prev != WORLD_NULL_BODY && ((id - 1) & 0xffffu) != ((prev - 1) & 0xffffu)) break;
        CHECK(id > prev); /* a fresh generation */
        prev = id;
        CHECK(world_despawn(w, id) == WORLD_OK);
        cycles++;
        CHECK(cycles <= 65535);
    }
    CHECK_MSG(cycles == 65535, "slot reused %u times", cycles);
    /* one body is alive in a new slot; the retired slot is never handed out: 65534 more fit */
    for (uint32_t i = 0; i < 65534; i++)
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(0, 0), 1, NULL, NULL) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(0, 0), 1, NULL, NULL) == WORLD_ERR_FULL);
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.moving_bodies == 65535 && st.capacity == 65536);
    world_destroy(w);
}

static void test_spawn_validation(void) {
    world *w = wt_world(10.0f, 4);
    CHECK(w);
    geom_shape s = wt_box(1, 1);
    geom_shape_error err = GEOM_OK;
    world_body_id id = 123;
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &s, v2(9.5f, 0), 0, &id, NULL) ==
          WORLD_ERR_OUT_OF_BOUNDS);
    CHECK(id == WORLD_NULL_BODY);
    /* A mover whose position is inside but whose shape pokes through a wall is shifted inward. */
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(9.5f, -9.8f), 0, &id, NULL) == WORLD_OK);
    world_body_row edge;
    CHECK(world_body_get(w, id, &edge) && edge.position.x == 9.0f && edge.position.y == -9.0f);
    CHECK(world_despawn(w, id) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(10.5f, 0), 0, &id, NULL) ==
          WORLD_ERR_OUT_OF_BOUNDS);
    geom_shape wide = wt_box(11, 1);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &wide, v2(0, 0), 0, &id, NULL) ==
          WORLD_ERR_OUT_OF_BOUNDS);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(NAN, 0), 0, &id, NULL) == WORLD_ERR_NOT_FINITE);
    geom_shape bad = s;
    bad.u.half_extents.x = -1.0f;
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &bad, v2(0, 0), 0, &id, &err) ==
          WORLD_ERR_INVALID_SHAPE);
    CHECK(err != GEOM_OK);
    geom_shape concave = s;
    concave.kind = GEOM_SHAPE_POLYGON;
    concave.u.polygon.count = 4;
    concave.u.polygon.vertices[0] = v2(0, 0);
    concave.u.polygon.vertices[1] = v2(2, 0);
    concave.u.polygon.vertices[2] = v2(0.5f, 0.5f);
    concave.u.polygon.vertices[3] = v2(0, 2);
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &concave, v2(0, 0), 0, &id, &err) ==
          WORLD_ERR_INVALID_SHAPE);
    CHECK(err != GEOM_OK);
    /* larger than max_shape_size */
    world_config cfg = *world_get_config(w);
    cfg.max_shape_size = 2.0f;
    world *small = world_create(&cfg);
    CHECK(small);
    geom_shape big = wt_box(3, 1);
    CHECK(world_spawn(small, WORLD_BODY_STATIC, &big, v2(0, 0), 0, &id, &err) ==
          WORLD_ERR_INVALID_SHAPE);
    CHECK(err == GEOM_ERR_SIZE_OUT_OF_RANGE);
    world_destroy(small);
    /* capacity */
    for (int i = 0; i < 4; i++)
        CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(0, 0), 0, NULL, NULL) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &s, v2(0, 0), 0, NULL, NULL) == WORLD_ERR_FULL);
    world_destroy(w);
    /* bad configs */
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(1, 1), v2(0, 0));
    CHECK(world_create(&cfg) == NULL);
    world_config_default(&cfg);
    cfg.tick_rate_hz = 0;
    CHECK(world_create(&cfg) == NULL);
    world_config_default(&cfg);
    cfg.max_speed = INFINITY;
    CHECK(world_create(&cfg) == NULL);
    /* a step no world could hold, and a gravity too weak to point anywhere (a denormal's
     * length squared underflows: "up" would be infinite) */
    world_config_default(&cfg);
    cfg.max_speed = 2.0f * WORLD_MAX_SPEED;
    CHECK(world_create(&cfg) == NULL);
    world_config_default(&cfg);
    cfg.tick_rate_hz = 0.5f * WORLD_MIN_TICK_RATE;
    CHECK(world_create(&cfg) == NULL);
    world_config_default(&cfg);
    cfg.gravity = v2(0.0f, 4.6e-40f);
    CHECK(world_create(&cfg) == NULL);
    cfg.gravity = v2(0.0f, -1e-4f);
    CHECK(world_create(&cfg) == NULL);
    cfg.gravity = v2(0.0f, -(float)WORLD_MIN_GRAVITY);
    world *weak = world_create(&cfg);
    CHECK(weak != NULL);
    world_destroy(weak);
}

static void test_intents(void) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_speed = 100.0f;
    cfg.max_bodies = 8;
    world *w = world_create(&cfg);
    CHECK(w);
    world_body_id st = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(50, 50));
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_circle(1), v2(0, 0));
    CHECK(st && m);
    CHECK(world_set_intent(w, st, v2(1, 0), 1) == WORLD_ERR_NOT_MOVING);
    CHECK(world_set_intent(w, m, v2(INFINITY, 0), 1) == WORLD_ERR_NOT_FINITE);
    CHECK(world_set_intent(w, m, v2(300, 400), 5) == WORLD_OK);
    CHECK(world_set_intent(w, m, v2(1, 0), 5) == WORLD_STALE_INPUT);
    CHECK(world_set_intent(w, m, v2(1, 0), 4) == WORLD_STALE_INPUT);
    world_body_row info;
    vec2 held;
    CHECK(world_body_get(w, m, &info) && world_body_intent(w, m, &held, NULL));
    CHECK_NEAR(held.x, 60.0, 1e-3);
    CHECK_NEAR(held.y, 80.0, 1e-3);
    CHECK(info.last_input_seq == 0); /* applied by the next step */
    world_step(w);
    CHECK(world_body_get(w, m, &info));
    CHECK(info.last_input_seq == 5);
    CHECK_NEAR(info.position.x, 1.0, 1e-4);
    CHECK_NEAR(info.position.y, 80.0 / 60.0, 1e-4);
    CHECK_NEAR(info.velocity.x, 60.0, 1e-2);
    CHECK_NEAR(info.velocity.y, 80.0, 1e-2);
    CHECK(info.changed_tick == 1 && world_tick(w) == 1);
    /* a huge finite velocity is clamped, not overflowed */
    CHECK(world_set_intent(w, m, v2(3e38f, 3e38f), 6) == WORLD_OK);
    CHECK(world_body_intent(w, m, &held, NULL));
    CHECK(v2_is_finite(held) && v2_len(held) <= 100.01f);
    world_destroy(w);
}

/* An intent above max_speed is clamped to it along its own direction, however little above; at or
 * under it, it is kept as given. Checked on what the world does with it (the body's achieved
 * velocity and displacement in a free step), not only on the stored intent. */
static void test_intent_clamped_to_max_speed(void) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_speed = 100.0f;
    cfg.max_bodies = 8;
    world *w = world_create(&cfg);
    CHECK(w);
    const double factors[] = {1.5, 1.01, 1.0001, 0.99};
    const double angle = 0.3; /* neither axis: both components are scaled */
    for (size_t k = 0; k < sizeof factors / sizeof factors[0]; k++) {
        world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_circle(1), v2(0, 0));
        CHECK(m);
        double speed = factors[k] * cfg.max_speed;
        vec2 intent = v2((float)(speed * cos(angle)), (float)(speed * sin(angle)));
        double given = sqrt((double)intent.x * intent.x + (double)intent.y * intent.y);
        CHECK(world_set_intent(w, m, intent, 1) == WORLD_OK);
        world_step(w);
        world_body_row info;
        CHECK(world_body_get(w, m, &info));
        double vx = info.velocity.x, vy = info.velocity.y, got = sqrt(vx * vx + vy * vy);
        /* float components of a speed near 100: good to 1e-5 relative */
        double want = given > cfg.max_speed ? cfg.max_speed : given;
        CHECK_MSG(fabs(got - want) <= 1e-5 * want,
                  "intent at %g x max_speed: achieved speed %.9g, want %.9g", factors[k], got,
                  want);
        /* along the intent's direction: no sideways part */
        CHECK_MSG(fabs(vx * intent.y - vy * intent.x) <= 1e-5 * got * given,
                  "intent at %g x max_speed: velocity (%g, %g) turned from the intent (%g, %g)",
                  factors[k], vx, vy, (double)intent.x, (double)intent.y);
        CHECK(vx * intent.x + vy * intent.y > 0.0);
        /* the step moved it by that velocity */
        CHECK_NEAR(info.position.x, vx / cfg.tick_rate_hz, 1e-5);
        CHECK_NEAR(info.position.y, vy / cfg.tick_rate_hz, 1e-5);
        vec2 held;
        CHECK(world_body_intent(w, m, &held, NULL));
        if (given <= cfg.max_speed) /* under the limit: the intent exactly as given */
            CHECK(held.x == intent.x && held.y == intent.y);
        CHECK(world_despawn(w, m) == WORLD_OK);
    }
    world_destroy(w);
}

static bool ids_contain(const world_body_id *ids, size_t n, world_body_id id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return true;
    return false;
}
static bool ids_ascending(const world_body_id *ids, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (ids[i - 1] >= ids[i]) return false;
    return true;
}

/* The body table split by flag, as id lists (a row with SPAWNED and MOVED is in both). */
typedef struct table_lists {
    world_body_id moved[64], spawned[64], despawned[64];
    size_t moved_count, spawned_count, despawned_count;
} table_lists;

static void table_split(const world *w, table_lists *out) {
    const world_body_row *rows;
    size_t n = world_body_table(w, &rows);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if ((rows[i].flags & WORLD_ROW_DESPAWNED) && out->despawned_count < 64)
            out->despawned[out->despawned_count++] = rows[i].id;
        if ((rows[i].flags & WORLD_ROW_SPAWNED) && out->spawned_count < 64)
            out->spawned[out->spawned_count++] = rows[i].id;
        if ((rows[i].flags & WORLD_ROW_MOVED) && out->moved_count < 64)
            out->moved[out->moved_count++] = rows[i].id;
    }
}

static void test_change_tracking(void) {
    world *w = wt_world(50.0f, 64);
    CHECK(w);
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(20, 20));
    world_body_id ids[10];
    for (int i = 0; i < 10; i++)
        ids[i] =
            wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(-40.0f + 3.0f * (float)i, 0));
    world_body_id ghost = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(0, 30));
    CHECK(world_despawn(w, ghost) == WORLD_OK); /* spawned and gone before any step */
    world_body_row info;
    CHECK(world_body_get(w, ids[0], &info) &&
          info.changed_tick == 1); /* first step that shows it */
    world_step(w);
    table_lists ch;
    table_split(w, &ch);
    CHECK(ch.spawned_count == 11 && ids_ascending(ch.spawned, ch.spawned_count));
    CHECK(ids_contain(ch.spawned, ch.spawned_count, wall) &&
          !ids_contain(ch.spawned, ch.spawned_count, ghost));
    CHECK(ch.despawned_count == 0 && ch.moved_count == 0);
    /* three of them move; one gets a new sequence but no velocity change? it still counts */
    CHECK(world_set_intent(w, ids[7], v2(5, 0), 1) == WORLD_OK);
    CHECK(world_set_intent(w, ids[2], v2(0, 5), 1) == WORLD_OK);
    CHECK(world_set_intent(w, ids[5], v2(0, 0), 1) == WORLD_OK);
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.spawned_count == 0 && ch.despawned_count == 0);
    CHECK_MSG(ch.moved_count == 3, "moved %zu", ch.moved_count);
    CHECK(ids_ascending(ch.moved, ch.moved_count));
    CHECK(ids_contain(ch.moved, 3, ids[7]) && ids_contain(ch.moved, 3, ids[2]) &&
          ids_contain(ch.moved, 3, ids[5]));
    CHECK(world_body_get(w, ids[7], &info) && info.changed_tick == 2);
    CHECK(world_body_get(w, ids[1], &info) && info.changed_tick == 1);
    /* steady motion keeps reporting the moving ones only */
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.moved_count == 2);
    /* stopping is a change (velocity), then quiet */
    CHECK(world_set_intent(w, ids[7], v2(0, 0), 2) == WORLD_OK);
    CHECK(world_set_intent(w, ids[2], v2(0, 0), 2) == WORLD_OK);
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.moved_count == 2);
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.moved_count == 0);
    /* despawns are reported once, with the id that was seen */
    CHECK(world_despawn(w, ids[3]) == WORLD_OK && world_despawn(w, wall) == WORLD_OK);
    world_body_id fresh = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(0, -30));
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.despawned_count == 2 && ids_ascending(ch.despawned, 2));
    CHECK(ids_contain(ch.despawned, 2, ids[3]) && ids_contain(ch.despawned, 2, wall));
    CHECK(ch.spawned_count == 1 && ch.spawned[0] == fresh);
    world_step(w);
    table_split(w, &ch);
    CHECK(ch.despawned_count == 0 && ch.spawned_count == 0);
    world_destroy(w);
}

/* The table against the world itself, over random churn with a fixed seed: every row of a live
 * body equals world_body_get; the rows are exactly the bodies new since the step before, those
 * gone since (with the id and kind they had), and the movers whose changed_tick is this step; ids
 * ascend. The churn spawns and despawns movers and statics, spawns and despawns a body between
 * two steps (never listed), and reuses slots with a new generation (a small capacity). After each
 * read, despawns and spawns leave the rows as they were until the next step. */
#define TABLE_CAP 40
typedef struct table_body {
    world_body_id id;
    uint8_t kind;
} table_body;

static const table_body *find_body(const table_body *set, size_t n, world_body_id id) {
    for (size_t i = 0; i < n; i++)
        if (set[i].id == id) return &set[i];
    return NULL;
}

static void test_body_table_matches_world(void) {
    world *w = wt_world(30.0f, TABLE_CAP);
    CHECK(w);
    collide_rng rng = {4242};
    table_body alive[TABLE_CAP], before[TABLE_CAP];
    size_t nalive = 0, nbefore = 0;
    const world_body_row *rows;
    CHECK(world_body_table(w, &rows) == 0); /* no step yet */
    size_t spawns = 0, static_despawns = 0, rows_seen = 0;
    for (int t = 0; t < 400; t++) {
        /* churn between steps */
        int ops = (int)(collide_rng_next(&rng) % 6u);
        for (int k = 0; k < ops; k++) {
            unsigned op = collide_rng_next(&rng) % 8u;
            if (op < 3 && nalive < TABLE_CAP) {
                bool st = op == 0;
                vec2 p = v2(collide_rng_range(&rng, -25, 25), collide_rng_range(&rng, -25, 25));
                world_body_id id =
                    wt_spawn(w, st ? WORLD_BODY_STATIC : WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), p);
                if (!id) continue;
                spawns++; /* more than TABLE_CAP: slots came back with a new generation */
                if (op == 2) {
                    CHECK(world_despawn(w, id) == WORLD_OK); /* gone before any step saw it */
                    continue;
                }
                alive[nalive].id = id;
                alive[nalive].kind = (uint8_t)(st ? WORLD_BODY_STATIC : WORLD_BODY_MOVING);
                nalive++;
            } else if (op < 5 && nalive > 0) {
                size_t i = collide_rng_next(&rng) % nalive;
                if (alive[i].kind == WORLD_BODY_STATIC) static_despawns++;
                CHECK(world_despawn(w, alive[i].id) == WORLD_OK);
                alive[i] = alive[--nalive];
            } else if (nalive > 0) {
                size_t i = collide_rng_next(&rng) % nalive;
                if (alive[i].kind != WORLD_BODY_MOVING) continue;
                vec2 v = (collide_rng_next(&rng) & 1u) ? v2(0, 0)
                                                       : v2(collide_rng_range(&rng, -20, 20),
                                                            collide_rng_range(&rng, -20, 20));
                world_set_intent(w, alive[i].id, v, (uint32_t)t + 1u);
            }
        }
        world_step(w);
        uint64_t tick = world_tick(w);
        table_body seen[TABLE_CAP]; /* what this step saw */
        size_t nseen = nalive;
        memcpy(seen, alive, nalive * sizeof *alive);
        /* Now and then a body goes before the table is read: the table still shows the step. */
        world_body_id gone_early = WORLD_NULL_BODY;
        world_body_row gone_info;
        if (t % 5 == 1 && nalive > 0) {
            size_t i = collide_rng_next(&rng) % nalive;
            gone_early = alive[i].id;
            CHECK(world_body_get(w, gone_early, &gone_info));
            CHECK(world_despawn(w, gone_early) == WORLD_OK);
            alive[i] = alive[--nalive];
        }
        size_t n = world_body_table(w, &rows);
        rows_seen += n;
        CHECK(n == 0 || rows);
        size_t expect = 0;
        for (size_t i = 0; i < n; i++) {
            const world_body_row *r = &rows[i];
            if (i > 0)
                CHECK_MSG(rows[i - 1].id < r->id, "tick %llu: rows out of order",
                          (unsigned long long)tick);
            const table_body *now = find_body(seen, nseen, r->id);
            const table_body *was = find_body(before, nbefore, r->id);
            if (r->flags & WORLD_ROW_DESPAWNED) {
                CHECK_MSG(r->flags == WORLD_ROW_DESPAWNED && was && !now && r->kind == was->kind,
                          "tick %llu: despawned row %u", (unsigned long long)tick, r->id);
                CHECK(!world_body_alive(w, r->id));
                continue;
            }
            world_body_row info = gone_info;
            CHECK_MSG(now && (r->id == gone_early || world_body_get(w, r->id, &info)),
                      "tick %llu: row %u not alive", (unsigned long long)tick, r->id);
            if (!now) continue;
            CHECK(r->kind == (uint8_t)info.kind && r->owner == info.owner &&
                  r->last_input_seq == info.last_input_seq && r->changed_tick == info.changed_tick);
            CHECK(memcmp(&r->position, &info.position, sizeof info.position) == 0 &&
                  memcmp(&r->velocity, &info.velocity, sizeof info.velocity) == 0 &&
                  memcmp(&r->bounds, &info.bounds, sizeof info.bounds) == 0);
            CHECK_MSG(((r->flags & WORLD_ROW_SPAWNED) != 0) == (was == NULL),
                      "tick %llu: row %u spawned flag %u", (unsigned long long)tick, r->id,
                      r->flags);
            if (r->flags & WORLD_ROW_MOVED)
                CHECK(info.changed_tick == tick && info.kind == WORLD_BODY_MOVING);
            if (was) CHECK(r->flags == WORLD_ROW_MOVED);
        }
        /* every body that should be listed is: new ones, gone ones, changed movers */
        for (size_t i = 0; i < nseen; i++) {
            world_body_row info = gone_info;
            CHECK(seen[i].id == gone_early || world_body_get(w, seen[i].id, &info));
            if (!find_body(before, nbefore, seen[i].id) || info.changed_tick == tick) expect++;
        }
        for (size_t i = 0; i < nbefore; i++)
            if (!find_body(seen, nseen, before[i].id)) expect++;
        CHECK_MSG(n == expect, "tick %llu: %zu rows, expected %zu", (unsigned long long)tick, n,
                  expect);
        memcpy(before, seen, nseen * sizeof *seen);
        nbefore = nseen;
        /* the rows hold until the next step, whatever comes and goes meanwhile */
        if (t % 7 == 3 && n > 0 && nalive > 0) {
            static world_body_row copy[2 * TABLE_CAP];
            memcpy(copy, rows, n * sizeof *rows);
            size_t i = collide_rng_next(&rng) % nalive;
            world_body_id gone = alive[i].id;
            CHECK(world_despawn(w, gone) == WORLD_OK);
            alive[i] = alive[--nalive];
            world_body_id fresh = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 0));
            if (fresh) {
                alive[nalive].id = fresh;
                alive[nalive++].kind = WORLD_BODY_MOVING;
            }
            const world_body_row *again;
            CHECK(world_body_table(w, &again) == n && again == rows);
            CHECK(memcmp(copy, again, n * sizeof *again) == 0);
        }
    }
    /* the churn did what it is there for */
    CHECK_MSG(spawns > 2 * TABLE_CAP && static_despawns > 0 && rows_seen > 400,
              "spawns %zu, static despawns %zu, rows %zu", spawns, static_despawns, rows_seen);
    world_destroy(w);
}

/* A body that stops against a wall with its intent unchanged: in the tick it stops, its velocity
 * drops to zero while its position and input sequence stay as they were, and that alone is a
 * change. It must be in the moved list, with changed_tick set and the achieved (zero) velocity,
 * or a snapshot would keep showing it moving. Every shape, against a static and against the
 * bounds. */
static void test_stop_against_wall_is_a_change(void) {
    for (int shape = 0; shape < 3; shape++)
        for (int against_bounds = 0; against_bounds < 2; against_bounds++) {
            world *w = wt_world(20.0f, 16);
            CHECK(w);
            geom_shape s = shape == 0   ? wt_box(0.5f, 0.5f)
                           : shape == 1 ? wt_circle(0.5f)
                                        : wt_ngon(5, 0.6f, 0.3f);
            if (!against_bounds) CHECK(wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 10), v2(5, 0)));
            world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, s, v2(0.0f, 0.0f));
            CHECK(id);
            /* 7 units/s at 60 Hz: the wall is not a whole number of ticks away */
            CHECK(world_set_intent(w, id, v2(7.0f, 0.0f), 1) == WORLD_OK);
            bool moving = false, stopped = false;
            for (int t = 0; t < 60 * 4 && !stopped; t++) {
                world_body_row before, after;
                CHECK(world_body_get(w, id, &before));
                world_step(w);
                CHECK(world_body_get(w, id, &after));
                table_lists ch;
                table_split(w, &ch);
                bool listed = ids_contain(ch.moved, ch.moved_count, id);
                if (after.position.x != before.position.x) {
                    moving = true;
                    CHECK(listed && after.changed_tick == world_tick(w));
                } else if (moving) {
                    /* the first tick with no motion: velocity now zero, and reported */
                    stopped = true;
                    CHECK_MSG(after.velocity.x == 0.0f && after.velocity.y == 0.0f,
                              "shape %d bounds %d: velocity %g,%g", shape, against_bounds,
                              (double)after.velocity.x, (double)after.velocity.y);
                    CHECK_MSG(before.velocity.x > 0.0f, "shape %d bounds %d", shape,
                              against_bounds);
                    CHECK_MSG(listed, "shape %d bounds %d tick %d: stop not in the moved list",
                              shape, against_bounds, t);
                    CHECK_MSG(after.changed_tick == world_tick(w),
                              "shape %d bounds %d: changed_tick %llu, tick %llu", shape,
                              against_bounds, (unsigned long long)after.changed_tick,
                              (unsigned long long)world_tick(w));
                    vec2 held;
                    CHECK(world_body_intent(w, id, &held, NULL) && held.x == 7.0f &&
                          after.last_input_seq == 1);
                }
            }
            CHECK_MSG(stopped, "shape %d bounds %d: never stopped", shape, against_bounds);
            /* at rest against it, pressing on: quiet from now on */
            world_step(w);
            table_lists ch;
            table_split(w, &ch);
            CHECK(!ids_contain(ch.moved, ch.moved_count, id));
            world_destroy(w);
        }
}

static void test_queries(void) {
    world *w = wt_world(50.0f, 64);
    CHECK(w);
    world_body_id s1 = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(10, 0));
    world_body_id s2 = wt_spawn(w, WORLD_BODY_STATIC, wt_circle(1), v2(20, 0));
    world_body_id s3 = wt_spawn(w, WORLD_BODY_STATIC, wt_ngon(5, 2, 0), v2(-10, 5));
    world_body_id big = wt_spawn(w, WORLD_BODY_STATIC, wt_box(30, 0.5f), v2(0, -20));
    world_body_id m1 = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(15, 0));
    world_body_id m2 = wt_spawn(w, WORLD_BODY_MOVING, wt_circle(0.5f), v2(-30, 30));
    CHECK(s1 && s2 && s3 && big && m1 && m2);
    world_body_id out[8];
    size_t n = world_query_aabb(w, aabb_make(v2(5, -2), v2(25, 2)), 0, out, 8);
    CHECK(n == 3 && ids_ascending(out, 3));
    CHECK(ids_contain(out, 3, s1) && ids_contain(out, 3, s2) && ids_contain(out, 3, m1));
    n = world_query_aabb(w, aabb_make(v2(5, -2), v2(25, 2)), 1u << WORLD_BODY_MOVING, out, 8);
    CHECK(n == 1 && out[0] == m1);
    n = world_query_aabb(w, aabb_make(v2(-50, -50), v2(50, 50)), 0, out, 2);
    CHECK(n == 6 && ids_ascending(out, 2)); /* truncated, total still counted */
    n = world_query_aabb(w, aabb_make(v2(-1, -21), v2(1, -19)), 0, out, 8);
    CHECK(n == 1 && out[0] == big);
    /* the mover index follows motion after a step, and spawns after it */
    CHECK(world_set_intent(w, m2, v2(600, 0), 1) == WORLD_OK);
    world_step(w);
    world_body_id m3 = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(-20, 30));
    n = world_query_aabb(w, aabb_make(v2(-25, 28), v2(-15, 32)), 0, out, 8);
    CHECK(n == 2 && ids_contain(out, 2, m2) && ids_contain(out, 2, m3));
    world_despawn(w, m3);
    n = world_query_aabb(w, aabb_make(v2(-25, 28), v2(-15, 32)), 0, out, 8);
    CHECK(n == 1 && out[0] == m2);
    /* rays (world_query_ray): the nearest body, one excluded, none past the bounds (the bounds
     * are not a body), none short of every body */
    world_hit r;
    world_query_result qr;
    CHECK(world_query_ray(w, 0, v2(0, 0), v2(40, 0), NULL, false, &r, 1, &qr) == WORLD_OK);
    CHECK(qr.count == 1 && r.id == s1);
    CHECK_NEAR(r.point.x, 9.0, 1e-3);
    CHECK_NEAR(r.normal.x, -1.0, 1e-5);
    world_query_filter not_m1 = {.exclude = &m1, .exclude_count = 1};
    CHECK(world_query_ray(w, 0, v2(12, 0), v2(20, 0), &not_m1, false, &r, 1, &qr) == WORLD_OK);
    CHECK(qr.count == 1 && r.id == s2);
    CHECK_NEAR(r.point.x, 19.0, 1e-3);
    CHECK(world_query_ray(w, 0, v2(0, 10), v2(0, 100), NULL, false, &r, 1, &qr) == WORLD_OK);
    CHECK(qr.count == 0);
    CHECK(world_query_ray(w, 0, v2(0, 10), v2(0, 5), NULL, false, &r, 1, &qr) == WORLD_OK);
    CHECK(qr.count == 0);
    /* a long ray across the map walks to the polygon */
    CHECK(world_query_ray(w, 0, v2(-10, 45), v2(0, -90), NULL, false, &r, 1, &qr) == WORLD_OK);
    CHECK(qr.count == 1 && r.id == s3);
    geom_shape sh;
    CHECK(world_body_shape(w, s3, &sh) && sh.kind == GEOM_SHAPE_POLYGON && sh.u.polygon.count == 5);
    CHECK(world_body_shape(w, s2, &sh) && sh.kind == GEOM_SHAPE_CIRCLE && sh.u.radius == 1.0f);
    world_body_row info;
    CHECK(world_body_get(w, s3, &info) && info.kind == WORLD_BODY_STATIC &&
          info.position.x == -10.0f);
    world_destroy(w);
}

/* world_query_overlap of a box against a brute-force scan: every live body, its shape through
 * geom_overlap with the query box, in the query's order (the query shape first). Random worlds of
 * boxes, circles and polygons, static and moving (stepped a few ticks so the mover index is
 * exercised), random query boxes. */
static void test_query_box_exact(void) {
    collide_rng rng = {0x5eed1234u};
    size_t filtered = 0, found = 0;
    for (int round = 0; round < 20; round++) {
        world *w = wt_world(40.0f, 512);
        CHECK(w);
        world_body_id ids[300];
        int n_ids = 0;
        for (int i = 0; i < 300; i++) {
            unsigned k = collide_rng_next(&rng) % 3;
            geom_shape s = k == 0   ? wt_box(collide_rng_range(&rng, 0.2f, 3.0f),
                                             collide_rng_range(&rng, 0.2f, 3.0f))
                           : k == 1 ? wt_circle(collide_rng_range(&rng, 0.2f, 3.0f))
                                    : wt_ngon(3 + (int)(collide_rng_next(&rng) % 6),
                                              collide_rng_range(&rng, 0.3f, 3.0f),
                                              collide_rng_range(&rng, 0.0f, 6.28f));
            world_body_kind kind = i % 2 ? WORLD_BODY_MOVING : WORLD_BODY_STATIC;
            vec2 p = v2(collide_rng_range(&rng, -35, 35), collide_rng_range(&rng, -35, 35));
            world_body_id id = wt_spawn(w, kind, s, p);
            if (id == WORLD_NULL_BODY) continue;
            ids[n_ids++] = id;
            if (kind == WORLD_BODY_MOVING)
                CHECK(world_set_intent(
                          w, id,
                          v2(collide_rng_range(&rng, -20, 20), collide_rng_range(&rng, -20, 20)),
                          1) == WORLD_OK);
        }
        for (int t = 0; t < 3; t++)
            world_step(w);
        for (int q = 0; q < 50; q++) {
            vec2 a = v2(collide_rng_range(&rng, -45, 45), collide_rng_range(&rng, -45, 45));
            vec2 size = v2(collide_rng_range(&rng, 0.05f, 12), collide_rng_range(&rng, 0.05f, 12));
            aabb box = aabb_make(a, v2_add(a, size));
            unsigned kinds = q % 3 == 0   ? 0u
                             : q % 3 == 1 ? 1u << WORLD_BODY_STATIC
                                          : 1u << WORLD_BODY_MOVING;
            geom_shape qs = wt_box(size.x * 0.5f, size.y * 0.5f);
            vec2 qc = v2_scale(v2_add(box.min, box.max), 0.5f);
            world_query_filter filter = {.kinds = kinds};
            world_hit hits[300];
            world_query_result qr;
            CHECK(world_query_overlap(w, 0, &qs, qc, &filter, hits, 300, &qr) == WORLD_OK);
            size_t n = qr.count;
            CHECK(!qr.truncated);
            world_body_id out[300], broad[300];
            for (size_t i = 0; i < n; i++)
                out[i] = hits[i].id;
            size_t nb = world_query_aabb(w, box, kinds, broad, 300);
            CHECK(n <= nb && ids_ascending(out, n));
            size_t expect = 0;
            for (int i = 0; i < n_ids; i++) {
                world_body_row info;
                geom_shape sh;
                CHECK(world_body_get(w, ids[i], &info) && world_body_shape(w, ids[i], &sh));
                if (kinds && !(kinds & (1u << info.kind))) continue;
                bool hit = geom_overlap(&qs, qc, &sh, info.position, NULL);
                CHECK_MSG(hit == ids_contain(out, n, ids[i]),
                          "round %d query %d body %u: brute force %d", round, q, ids[i], hit);
                expect += hit;
            }
            CHECK(n == expect);
            filtered += nb - n;
            found += n;
        }
        world_destroy(w);
    }
    /* the random scenes must exercise both sides: AABB hits the shape misses, and real hits */
    CHECK_MSG(filtered > 50 && found > 500, "filtered %zu found %zu", filtered, found);
    world *w = wt_world(10.0f, 8);
    CHECK(w);
    world_body_id c = wt_spawn(w, WORLD_BODY_STATIC, wt_circle(1), v2(0, 0));
    world_body_id out[2];
    world_hit hits[2];
    world_query_result qr;
    /* the AABB corner of the circle: a broad hit, no shape hit */
    CHECK(world_query_aabb(w, aabb_make(v2(0.8f, 0.8f), v2(2, 2)), 0, out, 2) == 1);
    geom_shape empty = {.kind = GEOM_SHAPE_BOX}; /* zero half extents: no shape, not an empty one */
    CHECK(world_query_overlap(w, 0, &empty, v2(0, 0), NULL, hits, 2, &qr) ==
          WORLD_ERR_INVALID_SHAPE);
    geom_shape corner = wt_box(0.6f, 0.6f);
    CHECK(world_query_overlap(w, 0, &corner, v2(1.4f, 1.4f), NULL, hits, 2, &qr) == WORLD_OK &&
          qr.count == 0);
    /* touching is not overlap */
    geom_shape beside = wt_box(0.5f, 1);
    CHECK(world_query_overlap(w, 0, &beside, v2(1.5f, 0), NULL, hits, 2, &qr) == WORLD_OK &&
          qr.count == 0);
    geom_shape into = wt_box(0.75f, 0.1f);
    CHECK(world_query_overlap(w, 0, &into, v2(1.25f, 0), NULL, hits, 2, &qr) == WORLD_OK &&
          qr.count == 1 && hits[0].id == c);
    world_destroy(w);
}

/* world_set_intent_as: a MoveIntent's checks in one lookup, in the order the wire answers them
 * (unknown id, not the caller's, static, non-finite, stale), and nothing changed by a refusal. */
static void test_set_intent_as(void) {
    world *w = wt_world(50.0f, 8);
    CHECK(w);
    world_body_id mine = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1, 1), v2(0, 0)); /* owner 7 */
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(10, 0));
    CHECK(mine && wall);
    const float inf = INFINITY;
    CHECK(world_set_intent_as(w, 7, WORLD_NULL_BODY, v2(1, 0), 0, 1) == WORLD_ERR_NOT_FOUND);
    CHECK(world_set_intent_as(w, 7, mine + 1000u, v2(1, 0), 0, 1) == WORLD_ERR_NOT_FOUND);
    /* another's body, even with a bad velocity: the owner is checked first */
    CHECK(world_set_intent_as(w, 8, mine, v2(inf, 0), 0, 1) == WORLD_ERR_NOT_OWNER);
    CHECK(world_set_intent_as(w, 7, wall, v2(1, 0), 0, 1) == WORLD_ERR_NOT_OWNER);
    CHECK(world_set_intent_as(w, 0, wall, v2(1, 0), 0, 1) == WORLD_ERR_NOT_MOVING);
    CHECK(world_set_intent_as(w, 7, mine, v2(1, 0), inf, 1) == WORLD_ERR_NOT_FINITE);
    CHECK(world_set_intent_as(w, 7, mine, v2(inf, 0), 0, 1) == WORLD_ERR_NOT_FINITE);
    vec2 held;
    float turning;
    CHECK(world_body_intent(w, mine, &held, &turning) && held.x == 0.0f && turning == 0.0f);
    CHECK(world_set_intent_as(w, 7, mine, v2(1, 0), 0.5f, 2) == WORLD_OK);
    CHECK(world_set_intent_as(w, 0, mine, v2(2, 0), 0, 2) == WORLD_STALE_INPUT);
    CHECK(world_body_intent(w, mine, &held, &turning) && held.x == 1.0f && turning == 0.5f);
    CHECK(world_set_intent_as(w, 0, mine, v2(3, 0), 0, 3) == WORLD_OK); /* owner 0: any body */
    CHECK(world_body_intent(w, mine, &held, &turning) && held.x == 3.0f && turning == 0.0f);
    world_destroy(w);
}

/* Despawning statics keeps the grid consistent (swap-remove relinks the moved static). */
static void test_static_despawn_keeps_grid(void) {
    world *w = wt_world(20.0f, 512);
    CHECK(w);
    world_body_id ids[200];
    for (int i = 0; i < 200; i++) {
        geom_shape s = i % 3 == 0   ? wt_box(0.4f, 0.4f)
                       : i % 3 == 1 ? wt_circle(0.4f)
                                    : wt_ngon(4, 0.5f, 0.2f);
        ids[i] = wt_spawn(w, WORLD_BODY_STATIC, s,
                          v2(-15.0f + (float)(i % 20) * 1.5f, -15.0f + (float)(i / 20) * 1.5f));
        CHECK(ids[i]);
    }
    for (int i = 0; i < 200; i += 3)
        CHECK(world_despawn(w, ids[i]) == WORLD_OK);
    world_body_id out[256];
    size_t n = world_query_aabb(w, aabb_make(v2(-20, -20), v2(20, 20)), 0, out, 256);
    CHECK(n == 200 - 67);
    CHECK(ids_ascending(out, n)); /* sorted, whatever order the grid found them in */
    for (int i = 0; i < 200; i++) {
        world_body_row info;
        bool alive = world_body_get(w, ids[i], &info);
        CHECK(alive == (i % 3 != 0));
        if (!alive) continue;
        n = world_query_aabb(w, info.bounds, 0, out, 256);
        CHECK(ids_contain(out, n, ids[i]));
    }
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.static_bodies == 133);
    world_destroy(w);
}

/* Movers that ignore each other remember the statics near them between steps: a static
 * despawned in front of a mover pressed against it must free it, one spawned ahead of a moving
 * mover must stop it, and a static moved to another index by a despawn must still block. */
static void test_remembered_statics_follow_changes(void) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-20.0f, -20.0f), v2(20.0f, 20.0f));
    cfg.max_bodies = 64;
    cfg.cell_size = 1.0f; /* cells of the statics' size, as in S1 */
    world *w = world_create(&cfg);
    CHECK(w);
    world_set_mover_collisions(w, false);
    world_body_id wall[7];
    for (int i = 0; i < 7; i++) {
        wall[i] = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(3.5f, (float)(i - 3)));
        CHECK(wall[i]);
    }
    world_body_id a = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(1.0f, 0.0f));
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(1.0f, 3.0f));
    CHECK(a && b);
    CHECK(world_set_intent(w, a, v2(3.0f, 0.0f), 1) == WORLD_OK);
    CHECK(world_set_intent(w, b, v2(3.0f, 0.0f), 1) == WORLD_OK);
    for (int k = 0; k < 60; k++)
        world_step(w);
    CHECK(wt_pos(w, a).x > 2.5f && wt_pos(w, a).x <= 2.6f);
    CHECK(wt_pos(w, b).x > 2.5f && wt_pos(w, b).x <= 2.6f);
    /* the last static (in front of b) takes the despawned one's place */
    CHECK(world_despawn(w, wall[3]) == WORLD_OK);
    for (int k = 0; k < 30; k++)
        world_step(w);
    CHECK_MSG(wt_pos(w, a).x > 3.5f, "a stayed at %f after its wall went", (double)wt_pos(w, a).x);
    CHECK(wt_pos(w, b).x <= 2.6f);
    CHECK(wt_pos(w, b).x <= 2.6f);
    world_destroy(w);

    /* A static spawned in the cell just ahead of a moving mover, a cell its last look at the
     * grid already covered (it looks one cell ahead of its motion). */
    w = world_create(&cfg);
    CHECK(w);
    world_set_mover_collisions(w, false);
    /* a static far away, so the grid is looked at */
    CHECK(wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(-15.5f, -15.5f)));
    world_body_id c = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.4f), v2(1.0f, 0.0f));
    CHECK(c);
    CHECK(world_set_intent(w, c, v2(3.0f, 0.0f), 1) == WORLD_OK);
    world_step(w);
    world_step(w);
    CHECK(wt_pos(w, c).x < 1.55f); /* clear of the cell [2, 3] */
    world_body_id ahead = wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(2.5f, 0.0f));
    CHECK(ahead);
    for (int k = 0; k < 60; k++)
        world_step(w);
    CHECK_MSG(wt_pos(w, c).x <= 1.6f, "c at %f went into the new static", (double)wt_pos(w, c).x);
    CHECK(wt_depth(w, c, ahead) == 0.0f);
    world_destroy(w);
}

TEST_MAIN(TEST(test_ids_never_zero_and_stale_detected), TEST(test_generation_wrap_retires_slot),
          TEST(test_spawn_validation), TEST(test_intents), TEST(test_intent_clamped_to_max_speed),
          TEST(test_change_tracking), TEST(test_body_table_matches_world),
          TEST(test_stop_against_wall_is_a_change), TEST(test_queries), TEST(test_query_box_exact),
          TEST(test_set_intent_as), TEST(test_static_despawn_keeps_grid),
          TEST(test_remembered_statics_follow_changes))

/* Client-side prediction's calls (world.h "Client-side prediction", world_predict.c): a saved body
 * state put back makes the world step on as if nothing had happened between. Two copies of each
 * scene take the same intents tick by tick; the predicting copy, every few ticks, saves every
 * mover, runs ahead a detour of 1-12 ticks with other intents and jumps (as a client predicting
 * inputs the server never saw), restores them, and goes on. Every mover's row (position, velocity,
 * angle, turning speed, last input) and a character's state (grounded, ground, vertical speed)
 * must equal the reference's to the bit after every tick. Scenes:
 *   - top-down: boxes, circles, polygons, some turning, among box tiles, polygons and one-way
 *     statics;
 *   - side-on: characters (box, circle, hexagon) walking and jumping under gravity over tiles,
 *     ramps, steps and one-way platforms, with coyote time and buffered jumps;
 *   - a character riding a plain mover that shuttles back and forth (the carrier: two movers that
 *     meet, whose order the world fixes, plain movers before characters).
 * In the first two the movers ignore each other: which of two movers that meet is processed first
 * is the world's order (dense indices, re-sorted by space every 16 ticks), not a body's state, and
 * a detour's re-sort changes it; a client's own bodies meeting other movers are not restored to
 * the bit (docs/wasm.md "WorldPredictor");
 * and world_body_place: a plain body (turning or not) placed from the reference's row after a
 * detour, its intent set again, moves on as the reference does (a snapshot carries all of a
 * plain body's state); world_character_place sets what it says; the refusals. */
#include "world_test_util.h"

#define MAX_MOVERS 24

/* The same floats, to the bit. */
static bool vec_eq(vec2 a, vec2 b) { return memcmp(&a, &b, sizeof a) == 0; }
#define TICKS 600

typedef struct scene {
    world *w;
    world_body_id movers[MAX_MOVERS];
    int count;
    bool characters;
    world_body_id platform; /* the shuttling carrier of the rider scene, else 0 */
} scene;

enum { TOP_DOWN, SIDE_ON, RIDER };
static const char *const SCENE[] = {"top-down", "side-on", "rider"};

static uint32_t mix(uint32_t seed, uint32_t k, uint32_t i) {
    uint32_t h = seed * 0x9e3779b1u ^ k * 0x85ebca6bu ^ i * 0xc2b2ae35u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h | 1u;
}

static world *make_world(int kind) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(0.0f, 0.0f), v2(40.0f, 40.0f));
    cfg.max_bodies = 1024;
    if (kind != TOP_DOWN) cfg.gravity = v2(0.0f, -30.0f);
    world *w = world_create(&cfg);
    /* movers ignoring each other but in the rider scene: see the file's opening */
    if (w && kind != RIDER) world_set_mover_collisions(w, false);
    return w;
}

/* The same scene from the same seed, every time. */
static bool build(scene *s, int kind, uint32_t seed) {
    memset(s, 0, sizeof *s);
    s->w = make_world(kind);
    if (!s->w) return false;
    world *w = s->w;
    collide_rng r = {seed | 1u};
    /* tiles: a floor row and random cells, one-way on some */
    for (int x = 1; x < 39; x++)
        if (!wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(x + 0.5f, 0.5f))) return false;
    for (int k = 0; k < 60; k++) {
        float x = (float)(2 + collide_rng_next(&r) % 36),
              y = (float)(3 + collide_rng_next(&r) % 34);
        world_body_id id =
            wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2(x + 0.5f, y + 0.5f));
        if (!id) return false;
        if (k % 4 == 0 && world_body_set_one_way(w, id, true) != WORLD_OK) return false;
    }
    /* a few ramps and a hexagon */
    for (int k = 0; k < 4; k++) {
        vec2 v[3] = {v2(0, 0), v2(3, 0), v2(3, 1.5f + k * 0.3f)};
        geom_shape ramp;
        if (geom_make_polygon(v, 3, &ramp)) return false;
        if (!wt_spawn(w, WORLD_BODY_STATIC, ramp, v2(4.0f + 8.0f * k, 1.0f))) return false;
    }
    if (!wt_spawn(w, WORLD_BODY_STATIC, wt_ngon(6, 1.2f, 0.3f), v2(20.0f, 20.0f))) return false;

    world_character_options opt = {0};
    opt.jump_speed = 12.0f;
    opt.step_height = 0.3f;
    opt.snap_distance = 0.2f;
    if (kind == RIDER) {
        s->platform = wt_spawn(w, WORLD_BODY_MOVING, wt_box(2.0f, 0.25f), v2(20.0f, 12.0f));
        world_body_id c = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.4f, 0.5f), v2(20.0f, 13.0f));
        if (!s->platform || !c || world_body_set_character(w, c, &opt) != WORLD_OK) return false;
        s->movers[s->count++] = s->platform;
        s->movers[s->count++] = c;
        s->characters = true;
        return true;
    }
    for (int i = 0; i < MAX_MOVERS; i++) {
        geom_shape shape = i % 3 == 0   ? wt_box(0.4f, 0.45f)
                           : i % 3 == 1 ? wt_circle(0.45f)
                                        : wt_ngon(6, 0.5f, 0.0f);
        vec2 p = v2(2.0f + (float)(collide_rng_next(&r) % 36),
                    2.0f + (float)(collide_rng_next(&r) % 34));
        world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, shape, p);
        if (!id) return false;
        if (kind == SIDE_ON && world_body_set_character(w, id, &opt) != WORLD_OK) return false;
        s->movers[s->count++] = id;
    }
    s->characters = kind == SIDE_ON;
    return true;
}

/* Mover i's intent at tick k (real, or a detour's when `detour` is set). */
static void intent(const scene *s, int kind, uint32_t seed, uint32_t k, int i, uint32_t seq,
                   bool detour) {
    collide_rng r = {mix(seed + (detour ? 7777u : 0u), k, (uint32_t)i)};
    world_body_id id = s->movers[i];
    if (kind == RIDER && id == s->platform) {
        /* shuttles 60 ticks each way; a detour pushes it the other way */
        float vx = ((k / 60) % 2 == 0) != detour ? 3.0f : -3.0f;
        world_set_intent_turning(s->w, id, v2(vx, 0.0f), 0.0f, seq);
        return;
    }
    /* a new intent every 8 ticks or so (the same one sent again otherwise) */
    if (!detour && collide_rng_next(&r) % 8 != 0) return;
    float speed = collide_rng_range(&r, 0.0f, 12.0f), a = collide_rng_range(&r, 0.0f, 6.2831853f);
    vec2 v = v2(speed * cosf(a), speed * sinf(a));
    float spin = kind == TOP_DOWN && i % 4 == 1 ? collide_rng_range(&r, -6.0f, 6.0f) : 0.0f;
    world_set_intent_turning(s->w, id, v, spin, seq);
    if (s->characters && collide_rng_next(&r) % 5 == 0) world_character_jump(s->w, id);
}

static void apply_intents(const scene *s, int kind, uint32_t seed, uint32_t k, uint32_t seq,
                          bool detour) {
    for (int i = 0; i < s->count; i++)
        intent(s, kind, seed, k, i, seq, detour);
}

/* Mover i of two scenes the same, to the bit; else a description into why. */
static bool same_body(const scene *a, const scene *b, int i, char *why, size_t size) {
    world_body_row ra, rb;
    if (!world_body_get(a->w, a->movers[i], &ra) || !world_body_get(b->w, b->movers[i], &rb)) {
        snprintf(why, size, "mover %d is gone", i);
        return false;
    }
    if (!vec_eq(ra.position, rb.position) || !vec_eq(ra.velocity, rb.velocity) ||
        memcmp(&ra.angle, &rb.angle, sizeof ra.angle) != 0 ||
        memcmp(&ra.angular_velocity, &rb.angular_velocity, sizeof ra.angular_velocity) != 0 ||
        ra.last_input_seq != rb.last_input_seq) {
        snprintf(why, size,
                 "mover %d: (%.9g, %.9g) v (%.9g, %.9g) a %.9g seq %u, reference (%.9g, %.9g) v "
                 "(%.9g, %.9g) a %.9g seq %u",
                 i, (double)rb.position.x, (double)rb.position.y, (double)rb.velocity.x,
                 (double)rb.velocity.y, (double)rb.angle, rb.last_input_seq, (double)ra.position.x,
                 (double)ra.position.y, (double)ra.velocity.x, (double)ra.velocity.y,
                 (double)ra.angle, ra.last_input_seq);
        return false;
    }
    world_character_state ca, cb;
    bool ha = world_body_character(a->w, a->movers[i], &ca);
    bool hb = world_body_character(b->w, b->movers[i], &cb);
    if (ha != hb || (ha && (ca.grounded != cb.grounded || ca.ground != cb.ground ||
                            memcmp(&ca.vertical, &cb.vertical, sizeof ca.vertical) != 0))) {
        snprintf(why, size, "mover %d: grounded %d on %u vertical %.9g, reference %d on %u %.9g", i,
                 cb.grounded, cb.ground, (double)cb.vertical, ca.grounded, ca.ground,
                 (double)ca.vertical);
        return false;
    }
    return true;
}

/* Counts of what the reference did, so a scene that stopped exercising something is seen. */
typedef struct seen {
    long grounded, airborne, turned, jumps, restores;
} seen;

static bool scene_run(int kind, uint32_t seed, seen *sn, char *why, size_t size) {
    scene ref, pred;
    bool ok = build(&ref, kind, seed) && build(&pred, kind, seed);
    size_t bytes = world_body_state_size();
    unsigned char *states = malloc(bytes * MAX_MOVERS);
    if (!ok || !states) {
        snprintf(why, size, "scene could not be built");
        ok = false;
    }
    collide_rng r = {mix(seed, 99u, 99u)};
    for (uint32_t k = 1; ok && k <= TICKS; k++) {
        uint32_t seq = 1000u * k;
        if (k % 3 == 0) {
            /* run ahead on other inputs, then come back */
            for (int i = 0; i < pred.count; i++)
                if (world_body_save(pred.w, pred.movers[i], states + bytes * (size_t)i) != WORLD_OK)
                    ok = false;
            uint32_t detour = 1 + collide_rng_next(&r) % 12;
            for (uint32_t d = 0; d < detour; d++) {
                apply_intents(&pred, kind, seed, k + d, seq - 999u + d, true);
                world_step(pred.w);
            }
            for (int i = 0; i < pred.count; i++)
                if (world_body_restore(pred.w, pred.movers[i], states + bytes * (size_t)i) !=
                    WORLD_OK)
                    ok = false;
            sn->restores++;
            if (!ok) snprintf(why, size, "save or restore refused at tick %u", k);
        }
        apply_intents(&ref, kind, seed, k, seq, false);
        apply_intents(&pred, kind, seed, k, seq, false);
        world_step(ref.w);
        world_step(pred.w);
        for (int i = 0; ok && i < ref.count; i++) {
            char body[400];
            if (!same_body(&ref, &pred, i, body, sizeof body)) {
                snprintf(why, size, "%s seed %u tick %u: %s", SCENE[kind], seed, k, body);
                ok = false;
            }
            world_character_state cs;
            world_body_row row;
            if (world_body_character(ref.w, ref.movers[i], &cs)) {
                if (cs.grounded)
                    sn->grounded++;
                else
                    sn->airborne++;
                if (cs.vertical > 10.0f) sn->jumps++;
            }
            if (world_body_get(ref.w, ref.movers[i], &row) && row.angle != 0.0f) sn->turned++;
        }
        const char *bad = ok ? world_validate(pred.w) : NULL;
        if (bad) {
            snprintf(why, size, "%s seed %u tick %u: world_validate: %s", SCENE[kind], seed, k,
                     bad);
            ok = false;
        }
    }
    free(states);
    world_destroy(ref.w);
    world_destroy(pred.w);
    return ok;
}

static void test_restore_top_down(void) {
    seen sn = {0};
    char why[600] = "";
    for (uint32_t seed = 1; seed <= 4; seed++)
        CHECK_MSG(scene_run(TOP_DOWN, seed, &sn, why, sizeof why), "%s", why);
    CHECK_MSG(sn.turned > 1000 && sn.restores > 700, "turned %ld restores %ld", sn.turned,
              sn.restores);
}

static void test_restore_side_on(void) {
    seen sn = {0};
    char why[600] = "";
    for (uint32_t seed = 1; seed <= 4; seed++)
        CHECK_MSG(scene_run(SIDE_ON, seed, &sn, why, sizeof why), "%s", why);
    CHECK_MSG(sn.grounded > 5000 && sn.airborne > 5000 && sn.jumps > 100,
              "grounded %ld airborne %ld jumping %ld", sn.grounded, sn.airborne, sn.jumps);
}

static void test_restore_rider(void) {
    seen sn = {0};
    char why[600] = "";
    for (uint32_t seed = 1; seed <= 4; seed++)
        CHECK_MSG(scene_run(RIDER, seed, &sn, why, sizeof why), "%s", why);
    CHECK_MSG(sn.grounded > 500, "grounded %ld", sn.grounded);
}

/* A plain body placed from the reference's row after a detour, its intent set again, moves on as
 * the reference does. */
static void test_place_plain(void) {
    scene ref, pred;
    CHECK(build(&ref, TOP_DOWN, 5) && build(&pred, TOP_DOWN, 5));
    collide_rng r = {12345u};
    long placed = 0;
    for (uint32_t k = 1; k <= TICKS; k++) {
        uint32_t seq = 1000u * k;
        if (k % 5 == 0) {
            for (uint32_t d = 0; d < 1 + collide_rng_next(&r) % 6; d++) {
                apply_intents(&pred, TOP_DOWN, 5, k + d, seq - 999u + d, true);
                world_step(pred.w);
            }
            for (int i = 0; i < pred.count; i++) {
                world_body_row row;
                vec2 v;
                float spin;
                CHECK(world_body_get(ref.w, ref.movers[i], &row));
                CHECK(world_body_place(pred.w, pred.movers[i], row.position, row.angle,
                                       row.velocity, row.angular_velocity) == WORLD_OK);
                CHECK(world_body_intent(ref.w, ref.movers[i], &v, &spin));
                CHECK(world_set_intent_turning(pred.w, pred.movers[i], v, spin, seq - 1u) ==
                      WORLD_OK);
                placed++;
            }
        }
        apply_intents(&ref, TOP_DOWN, 5, k, seq, false);
        apply_intents(&pred, TOP_DOWN, 5, k, seq, false);
        world_step(ref.w);
        world_step(pred.w);
        for (int i = 0; i < ref.count; i++) {
            world_body_row a, b;
            CHECK(world_body_get(ref.w, ref.movers[i], &a) &&
                  world_body_get(pred.w, pred.movers[i], &b));
            CHECK_MSG(vec_eq(a.position, b.position) && vec_eq(a.velocity, b.velocity) &&
                          a.angle == b.angle && a.angular_velocity == b.angular_velocity,
                      "tick %u mover %d: (%.9g, %.9g) a %.9g, reference (%.9g, %.9g) a %.9g", k, i,
                      (double)b.position.x, (double)b.position.y, (double)b.angle,
                      (double)a.position.x, (double)a.position.y, (double)a.angle);
        }
        CHECK(world_validate(pred.w) == NULL);
    }
    CHECK(placed > 2000);
    world_destroy(ref.w);
    world_destroy(pred.w);
}

static void test_place_and_refusals(void) {
    scene s;
    CHECK(build(&s, SIDE_ON, 9));
    world *w = s.w;
    world_body_id c = s.movers[0];
    world_body_id floor1 = 1; /* the first tile of the floor row */
    CHECK(world_character_place(w, c, -3.5f, false, WORLD_NULL_BODY) == WORLD_OK);
    world_character_state cs;
    CHECK(world_body_character(w, c, &cs) && !cs.grounded && cs.vertical == -3.5f);
    CHECK(world_body_place(w, c, v2(1.5f, 1.5f), 0.0f, v2(0, 0), 0.0f) == WORLD_OK);
    CHECK(world_character_place(w, c, 0.0f, true, floor1) == WORLD_OK);
    CHECK(world_body_character(w, c, &cs) && cs.grounded && cs.ground == floor1);
    world_step(w);
    CHECK(world_body_character(w, c, &cs) && cs.grounded);
    /* refusals */
    unsigned char *st = malloc(world_body_state_size());
    CHECK(st);
    CHECK(world_body_save(w, floor1, st) == WORLD_ERR_NOT_MOVING);
    CHECK(world_body_save(w, 0x7fffffu, st) == WORLD_ERR_NOT_FOUND);
    CHECK(world_body_save(w, c, st) == WORLD_OK);
    CHECK(world_body_restore(w, s.movers[1], st) == WORLD_ERR_NOT_FOUND); /* another body's */
    CHECK(world_body_restore(w, c, st) == WORLD_OK);
    CHECK(world_body_place(w, c, v2(NAN, 0), 0.0f, v2(0, 0), 0.0f) == WORLD_ERR_NOT_FINITE);
    CHECK(world_body_place(w, c, v2(-5, 0), 0.0f, v2(0, 0), 0.0f) == WORLD_ERR_OUT_OF_BOUNDS);
    CHECK(world_body_place(w, floor1, v2(5, 5), 0.0f, v2(0, 0), 0.0f) == WORLD_ERR_NOT_MOVING);
    CHECK(world_character_place(w, c, INFINITY, false, 0) == WORLD_ERR_NOT_FINITE);
    /* a plain body is not a character */
    world_body_id plain = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.3f, 0.3f), v2(30, 30));
    CHECK(plain && world_character_place(w, plain, 0.0f, false, 0) == WORLD_ERR_NOT_FOUND);
    /* a state whose body went: its id is stale */
    CHECK(world_body_save(w, plain, st) == WORLD_OK);
    CHECK(world_despawn(w, plain) == WORLD_OK);
    CHECK(world_body_restore(w, plain, st) == WORLD_ERR_NOT_FOUND);
    /* an unturned body placed at an angle becomes a turned one there */
    world_body_id b = wt_spawn(w, WORLD_BODY_MOVING, wt_box(1.0f, 0.25f), v2(30, 30));
    CHECK(b && world_body_place(w, b, v2(30, 30), 1.0f, v2(0, 0), 0.5f) == WORLD_OK);
    world_body_row row;
    CHECK(world_body_get(w, b, &row) && row.angle == 1.0f && row.angular_velocity == 0.5f);
    CHECK(row.bounds.max.y - row.bounds.min.y > 1.0f); /* its AABB turned with it */
    CHECK(world_validate(w) == NULL);
    free(st);
    world_destroy(w);
}

TEST_MAIN(TEST(test_restore_top_down), TEST(test_restore_side_on), TEST(test_restore_rider),
          TEST(test_place_plain), TEST(test_place_and_refusals))

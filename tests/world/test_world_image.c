/* World images (world.h "World images"): a world loaded from an image steps to the same bits as
 * the world it was taken from, given the same inputs, whatever the world went through before
 * (spawns and despawns of every kind, statics too, turning, filters, sensors, one-way bodies,
 * characters, stale intents); and a bad image is refused with a reason, never read past. */
#include "harness.h"
#include "world_ops.h"

/* Runs `ops` random calls per tick on w for `ticks` ticks; when `twin` is given, the same calls on
 * it too, checking that both answer alike and hash alike after every step. */
static bool drive(world *w, world *twin, wo_gen *g, int ticks, int ops) {
    for (int t = 0; t < ticks; t++) {
        for (int k = 0; k < ops; k++) {
            wo_op op;
            wo_next(g, &op);
            world_body_id a, b = WORLD_NULL_BODY;
            world_status sa = wo_apply(w, &op, &a), sb = twin ? wo_apply(twin, &op, &b) : sa;
            if (twin && (sa != sb || a != b)) {
                fprintf(stderr, "tick %llu: call %d answered %d/%u here, %d/%u in the twin\n",
                        (unsigned long long)world_tick(w), (int)op.kind, sa, a, sb, b);
                return false;
            }
            wo_result(g, &op, sa, a);
        }
        world_step(w);
        if (twin) {
            world_step(twin);
            if (world_state_hash(w) != world_state_hash(twin)) {
                fprintf(stderr, "tick %llu: the loaded world stepped to other bits\n",
                        (unsigned long long)world_tick(w));
                return false;
            }
        }
    }
    return true;
}

static world *reload(const world *w) {
    size_t len = 0;
    void *img = world_image_save(w, &len);
    if (!img) return NULL;
    char err[160];
    world *copy = world_image_load(img, len, err, sizeof err);
    if (!copy) fprintf(stderr, "%s\n", err);
    free(img);
    return copy;
}

/* Images taken every 40 ticks of a long random run, each loaded world then driven beside the
 * original with the same calls: 48 runs (seeds x gravity x mover collisions). */
static void test_image_continues_bit_exactly(void) {
    for (uint32_t seed = 1; seed <= 12; seed++)
        for (int variant = 0; variant < 4; variant++) {
            bool gravity = variant & 1, collide = variant & 2;
            world *w = wo_world(24.0f, gravity);
            world_set_mover_collisions(w, collide);
            wo_gen g;
            wo_init(&g, seed * 7919u + (uint32_t)variant, 24.0f);
            CHECK(drive(w, NULL, &g, 30, 12));
            for (int round = 0; round < 5; round++) {
                world *copy = reload(w);
                CHECK(copy != NULL);
                CHECK(world_state_hash(copy) == world_state_hash(w));
                CHECK(world_tick(copy) == world_tick(w));
                bool same = drive(w, copy, &g, 40, 6);
                if (!same) fprintf(stderr, "seed %u variant %d round %d\n", seed, variant, round);
                CHECK(same);
                world_destroy(copy);
            }
            world_destroy(w);
        }
}

/* A world loaded from an image gives the same image again (nothing lost on the way), and an
 * image of a fresh world is a fresh world. */
static void test_image_round_trip(void) {
    world *w = wo_world(24.0f, true);
    wo_gen g;
    wo_init(&g, 99u, 24.0f);
    CHECK(drive(w, NULL, &g, 60, 10));
    world *a = reload(w), *b = a ? reload(a) : NULL;
    CHECK(a && b);
    size_t la, lb;
    void *ia = world_image_save(a, &la), *ib = world_image_save(b, &lb);
    CHECK(ia && ib && la == lb && memcmp(ia, ib, la) == 0);
    free(ia);
    free(ib);
    world_destroy(a);
    world_destroy(b);
    world_destroy(w);
    world *fresh = wo_world(10.0f, false), *copy = reload(fresh);
    CHECK(copy && world_state_hash(copy) == world_state_hash(fresh));
    world_destroy(copy);
    world_destroy(fresh);
}

/* Every cut of an image is refused with a reason; so are a wrong magic and another version; and
 * random damage either is refused or gives a world that validates (ASan watches the reads). */
static void test_image_refuses_bad_bytes(void) {
    world *w = wo_world(16.0f, true);
    wo_gen g;
    wo_init(&g, 5u, 16.0f);
    CHECK(drive(w, NULL, &g, 40, 10));
    size_t len;
    uint8_t *img = world_image_save(w, &len);
    CHECK(img != NULL);
    char err[160];
    for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
        err[0] = 0;
        world *bad = world_image_load(img, cut, err, sizeof err);
        CHECK(bad == NULL);
        CHECK(strncmp(err, "world image: ", 13) == 0);
        world_destroy(bad);
    }
    uint8_t *copy = malloc(len);
    memcpy(copy, img, len);
    copy[8] ^= 1; /* the version */
    CHECK(world_image_load(copy, len, err, sizeof err) == NULL);
    CHECK(strstr(err, "layout version") != NULL);
    collide_rng rng = {1234u};
    int refused = 0;
    for (int trial = 0; trial < 400; trial++) {
        memcpy(copy, img, len);
        for (int k = 0; k < 4; k++)
            copy[collide_rng_next(&rng) % len] ^= (uint8_t)(1u << (collide_rng_next(&rng) % 8));
        world *maybe = world_image_load(copy, len, err, sizeof err);
        if (!maybe) {
            refused++;
            continue;
        }
        CHECK(world_validate(maybe) == NULL);
        world_step(maybe);
        world_destroy(maybe);
    }
    CHECK(refused > 0);
    free(copy);
    free(img);
    world_destroy(w);
}

/* The image's bytes of a body's record, found by its position (unique floats in these worlds):
 * world_static and world_mover both hold the position, then (statics) slot and shape. */
static uint8_t *find_position(uint8_t *img, size_t len, vec2 p) {
    for (size_t at = 0; at + sizeof p <= len; at++)
        if (memcmp(img + at, &p, sizeof p) == 0) return img + at;
    return NULL;
}

/* Records that point where they must not: a static said to be turned with no turn record (it
 * crashed the loader's validation), two bodies sharing one polygon pool entry, a polygon
 * reference to an entry the image never loaded. Each is refused with a reason. */
static void test_image_refuses_bad_references(void) {
    world *w = wo_world(16.0f, false);
    geom_shape box = wt_box(1.0f, 1.0f), tri = wt_ngon(3, 1.0f, 0.3f);
    world_body_id a, b, c;
    vec2 pa = v2(1.25f, 2.5f), pb = v2(-3.75f, 4.5f), pc = v2(6.125f, -5.5f);
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &box, pa, 0, &a, NULL) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &tri, pb, 0, &b, NULL) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_STATIC, &tri, pc, 0, &c, NULL) == WORLD_OK);
    world_step(w);
    size_t len;
    uint8_t *img = world_image_save(w, &len), *copy = malloc(len);
    char err[160];
    CHECK(img && copy);
    uint32_t shape_b, shape_c;
    uint8_t *rb = find_position(img, len, pb), *rc = find_position(img, len, pc);
    CHECK(rb && rc);
    memcpy(&shape_b, rb + 12, 4);
    memcpy(&shape_c, rc + 12, 4);
    CHECK(shape_b != shape_c);
    struct {
        vec2 at;
        uint32_t shape;
    } plants[] = {{pa, 0u},                              /* turned (kind 0), slot 0: no turn */
                  {pc, shape_b},                         /* the other triangle's entry */
                  {pc, (shape_c & 0xc0000000u) | 200u}}; /* an entry never loaded */
    for (size_t k = 0; k < sizeof plants / sizeof plants[0]; k++) {
        memcpy(copy, img, len);
        uint8_t *rec = find_position(copy, len, plants[k].at);
        CHECK(rec != NULL);
        if (!rec) continue;
        memcpy(rec + 12, &plants[k].shape, 4);
        err[0] = 0;
        world *bad = world_image_load(copy, len, err, sizeof err);
        CHECK(bad == NULL);
        CHECK(strncmp(err, "world image: ", 13) == 0);
        world_destroy(bad);
    }
    memcpy(copy, img, len);
    world *good = world_image_load(copy, len, err, sizeof err);
    CHECK(good != NULL);
    world_destroy(good);
    free(copy);
    free(img);
    world_destroy(w);
}

TEST_MAIN(TEST(test_image_continues_bit_exactly), TEST(test_image_round_trip),
          TEST(test_image_refuses_bad_bytes), TEST(test_image_refuses_bad_references))

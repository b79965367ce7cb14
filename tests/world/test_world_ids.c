/* Counters that wrap or run out over a long-lived process (issue 12, finding 9): the per-body
 * input_seq, which must keep working across 2^32 - 1 -> 0 (serial-number arithmetic, RFC 1982),
 * and the body-id space, whose slots retire when their generation would wrap, reported in
 * world_stats so /metrics can show how much of it is left. */
#include <string.h>

#include "world_internal.h" /* white box: a world with 2-bit generations (see below) */
#include "world_test_util.h"

static world_body_id spawn_mover(world *w, vec2 at) {
    return wt_spawn(w, WORLD_BODY_MOVING, wt_circle(1), at);
}

/* The body's last applied input_seq; 0xDEADBEEF (no seq a test uses) when it is not alive. */
static uint32_t applied_seq(const world *w, world_body_id id) {
    world_body_row info;
    return world_body_get(w, id, &info) ? info.last_input_seq : 0xDEADBEEFu;
}

/* The newest input_seq wins, compared as serial numbers: b is newer than a when (b - a) mod 2^32
 * is in 1 .. 2^31 - 1. So 0, 1, ... follow 2^32 - 1, and a seq 2^31 or more ahead is older. */
static void test_input_seq_wraps(void) {
    world *w = wt_world(100, 8);
    CHECK(w);
    world_body_id m = spawn_mover(w, v2(0, 0));
    CHECK(m);
    CHECK(world_set_intent(w, m, v2(1, 0), UINT32_MAX - 1u) == WORLD_OK);
    CHECK(world_set_intent(w, m, v2(2, 0), UINT32_MAX) == WORLD_OK);
    CHECK(world_set_intent(w, m, v2(9, 0), UINT32_MAX) == WORLD_STALE_INPUT); /* equal */
    CHECK(world_set_intent(w, m, v2(9, 0), UINT32_MAX - 1u) == WORLD_STALE_INPUT);
    world_step(w);
    CHECK(applied_seq(w, m) == UINT32_MAX);
    /* the wrap: 0 and then 1 are newer than 2^32 - 1 */
    CHECK(world_set_intent(w, m, v2(3, 0), 0) == WORLD_OK);
    world_step(w);
    CHECK(applied_seq(w, m) == 0);
    vec2 held;
    CHECK(world_body_intent(w, m, &held, NULL) && held.x == 3.0f);
    CHECK(world_set_intent(w, m, v2(4, 0), 1) == WORLD_OK);
    CHECK(world_set_intent(w, m, v2(9, 0), UINT32_MAX) == WORLD_STALE_INPUT); /* from before */
    CHECK(world_set_intent(w, m, v2(9, 0), 1) == WORLD_STALE_INPUT);          /* equal */
    world_step(w);
    CHECK(applied_seq(w, m) == 1);
    CHECK(world_body_intent(w, m, &held, NULL) && held.x == 4.0f);
    /* half the space: 1 + 2^31 - 1 is newer, 1 + 2^31 is not (it reads as 2^31 behind) */
    CHECK(world_set_intent(w, m, v2(9, 0), 1u + 0x80000000u) == WORLD_STALE_INPUT);
    CHECK(world_set_intent(w, m, v2(5, 0), 0x80000000u) == WORLD_OK);
    world_step(w);
    CHECK(applied_seq(w, m) == 0x80000000u);
    world_destroy(w);
}

/* A body that has had no intent yet takes any first input_seq but 0, as before the wrap rule: a
 * client may number from anywhere, and one counter shared by its bodies is not refused for a new
 * body once it passes 2^31. */
static void test_first_input_seq_any_but_zero(void) {
    world *w = wt_world(100, 8);
    CHECK(w);
    world_body_id a = spawn_mover(w, v2(-50, 0));
    world_body_id b = spawn_mover(w, v2(50, 0));
    CHECK(a && b);
    CHECK(world_set_intent(w, a, v2(1, 0), 0) == WORLD_STALE_INPUT);
    CHECK(world_set_intent(w, a, v2(1, 0), 3000000000u) == WORLD_OK);
    CHECK(world_set_intent(w, a, v2(1, 0), 3000000001u) == WORLD_OK);
    CHECK(world_set_intent(w, a, v2(1, 0), 2000000000u) == WORLD_STALE_INPUT); /* behind */
    CHECK(world_set_intent(w, b, v2(1, 0), UINT32_MAX) == WORLD_OK);
    CHECK(world_set_intent(w, b, v2(1, 0), 0) == WORLD_OK);
    world_step(w);
    CHECK(applied_seq(w, a) == 3000000001u && applied_seq(w, b) == 0);
    world_destroy(w);
}

/* A slot retires when its generation would wrap (world_despawn: gen >= gen_max). With the 16 bits
 * of generation a 65536-body world has, that takes 65535 spawns of one slot; the test makes a
 * world with 2 bits of generation instead (id = ((gen - 1) << 30 | slot) + 1, gen 1..3), as
 * world_create would for a 2^30-body world, before its first spawn. world_stats counts the retired
 * slots and the spawns the id space still allows. */
#define ID_SLOT(id) (((id)-1u) & ((1u << 30) - 1u))
static void test_slots_retire_and_are_counted(void) {
    world *w = wt_world(100, 4);
    CHECK(w);
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.slots_retired == 0);
    CHECK_MSG(st.ids_left == 4ull * w->gen_max, "ids_left %llu", (unsigned long long)st.ids_left);
    w->slot_bits = 30;
    w->gen_max = 3;
    CHECK(world_validate(w) == NULL);
    world_get_stats(w, &st);
    CHECK(st.ids_left == 12 && st.slots_retired == 0);
    /* one body alive all along on its own slot */
    world_body_id keep = spawn_mover(w, v2(-50, -50));
    CHECK(keep);
    world_get_stats(w, &st);
    CHECK(st.ids_left == 11);
    /* the free slots are a LIFO stack: respawning at once reuses the same slot, 3 times */
    world_body_id prev = WORLD_NULL_BODY;
    for (int i = 0; i < 3; i++) {
        world_body_id id = spawn_mover(w, v2(0, 0));
        CHECK(id && id != prev && id != keep);
        if (prev) CHECK(ID_SLOT(id) == ID_SLOT(prev)); /* same slot, next generation */
        CHECK((id - 1u) >> 30 == (uint32_t)i);
        world_step(w);
        CHECK(world_despawn(w, id) == WORLD_OK);
        world_step(w);
        CHECK(!world_body_alive(w, id));
        prev = id;
    }
    world_get_stats(w, &st);
    CHECK_MSG(st.slots_retired == 1, "retired %llu", (unsigned long long)st.slots_retired);
    CHECK(st.ids_left == 8);
    CHECK(world_validate(w) == NULL);
    /* the retired slot is never handed out again: two more slots, then full */
    world_body_id x = spawn_mover(w, v2(20, 20)), y = spawn_mover(w, v2(-20, 20));
    CHECK(x && y && ID_SLOT(x) != ID_SLOT(prev) && ID_SLOT(y) != ID_SLOT(prev));
    world_body_id none = WORLD_NULL_BODY;
    geom_shape c = wt_circle(1);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &c, v2(40, 40), 7u, &none, NULL) == WORLD_ERR_FULL);
    world_get_stats(w, &st);
    CHECK(st.slots_retired == 1 && st.ids_left == 6);
    CHECK(world_despawn(w, keep) == WORLD_OK);
    world_get_stats(w, &st);
    CHECK(st.slots_retired == 1); /* gen 1 of 3: the slot is free again */
    CHECK(world_validate(w) == NULL);
    world_destroy(w);
}

/* Bodies of a slot's first generation have the id slot + 1 (the generation sits above the slot):
 * neighbours' ids are close, which keeps a quantized snapshot's id gaps to one byte. */
static void test_neighbours_ids_are_close(void) {
    world *w = wt_world(100, 65536);
    CHECK(w);
    world_body_id id[8];
    for (int i = 0; i < 8; i++) {
        id[i] = spawn_mover(w, v2(-40.0f + 10.0f * (float)i, 0));
        CHECK(id[i]);
    }
    for (int i = 1; i < 8; i++) {
        uint32_t gap = id[i] > id[i - 1] ? id[i] - id[i - 1] : id[i - 1] - id[i];
        CHECK_MSG(gap == 1 && id[i] <= 8, "ids %u then %u", id[i - 1], id[i]);
    }
    world_destroy(w);
}

/* A slot reused with a new generation puts slot order and id order apart: world_query_aabb
 * still lists ids ascending (the net layer's merges depend on it). */
static void test_query_aabb_ascends_across_generations(void) {
    world *w = wt_world(100, 8);
    CHECK(w);
    world_body_id a = spawn_mover(w, v2(-20, 0)), b = spawn_mover(w, v2(0, 0)),
                  c = spawn_mover(w, v2(20, 0));
    CHECK(a && b && c);
    world_step(w);
    CHECK(world_despawn(w, a) == WORLD_OK);
    world_step(w);
    world_body_id d = spawn_mover(w, v2(-20, 0)); /* a's slot, the next generation */
    CHECK(d > c);
    world_body_id out[8];
    size_t n = world_query_aabb(w, aabb_make(v2(-50, -50), v2(50, 50)), 0, out, 8);
    CHECK_MSG(n == 3 && out[0] == b && out[1] == c && out[2] == d, "n %zu: %u %u %u", n, out[0],
              out[1], out[2]);
    world_destroy(w);
}

TEST_MAIN(TEST(test_input_seq_wraps), TEST(test_query_aabb_ascends_across_generations),
          TEST(test_neighbours_ids_are_close), TEST(test_first_input_seq_any_but_zero),
          TEST(test_slots_retire_and_are_counted))

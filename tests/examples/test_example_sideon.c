/* The side-on example level (examples/worlds/sideon.json) played by a character, part by part, as
 * docs/operations.md "A side-on level" describes it: whatever the level promises a player (stand
 * on every spawn point, walk the tile seams and slopes without a snag, step up the steps, jump
 * onto the ledge, bump the ceiling, be stopped by the steep side and slide down it, jump up
 * through the one-way platforms onto the high block, ride the ferry and the lift along their
 * documented paths) is checked here, so an edit of the level or of the character code that
 * breaks one of them fails. The character is the one the description is made for: a box of half
 * extents (0.4, 0.8), step_height 0.3, snap_distance 0.3, jump_speed 12. */
#include "harness.h"
#include "world_load.h"

#ifndef COLLIDE_SIDEON
#error "COLLIDE_SIDEON (examples/worlds/sideon.json) must be defined"
#endif

#define HALF_H 0.8f /* the character's half height */
#define DT (1.0f / 60.0f)

typedef struct player {
    world *w;
    world_body_id id;
    uint32_t seq;
} player;

static world *level(world_spawn_points *sp) {
    char err[512];
    world *w = world_load_file(COLLIDE_SIDEON, NULL, sp, err, sizeof err);
    if (!w) fprintf(stderr, "  %s\n", err);
    return w;
}

static world_body_id character(world *w, vec2 p) {
    geom_shape box;
    world_body_id id = WORLD_NULL_BODY;
    if (geom_make_box(v2(0.4f, HALF_H), &box) ||
        world_spawn(w, WORLD_BODY_MOVING, &box, p, 1, &id, NULL) != WORLD_OK)
        return WORLD_NULL_BODY;
    world_character_options opt = {0};
    opt.step_height = 0.3f;
    opt.snap_distance = 0.3f;
    opt.jump_speed = 12.0f;
    return world_body_set_character(w, id, &opt) == WORLD_OK ? id : WORLD_NULL_BODY;
}

/* A character spawned at p on the level, settled for 30 steps. */
static bool player_at(player *pl, vec2 p) {
    pl->w = level(NULL);
    pl->seq = 0;
    pl->id = pl->w ? character(pl->w, p) : WORLD_NULL_BODY;
    for (int k = 0; pl->id && k < 30; k++)
        world_step(pl->w);
    return pl->id != WORLD_NULL_BODY;
}

static void walk(player *pl, float vx) { world_set_intent(pl->w, pl->id, v2(vx, 0), ++pl->seq); }

static void jump(player *pl, float vx) {
    walk(pl, vx);
    world_character_jump(pl->w, pl->id);
}

static world_body_row row(const player *pl) {
    world_body_row r;
    memset(&r, 0, sizeof r);
    world_body_get(pl->w, pl->id, &r);
    return r;
}

/* Walks at vx until its position reaches x (at most 10 s); false if it never does. */
static bool walk_to(player *pl, float vx, float x) {
    walk(pl, vx);
    for (int k = 0; k < 600; k++) {
        float at = row(pl).position.x;
        if (vx > 0.0f ? at >= x : at <= x) return true;
        world_step(pl->w);
    }
    return false;
}

/* Stops and steps n times. */
static void rest(player *pl, int n) {
    walk(pl, 0.0f);
    for (int k = 0; k < n; k++)
        world_step(pl->w);
}

static world_character_state cstate(const player *pl) {
    world_character_state s;
    memset(&s, 0, sizeof s);
    world_body_character(pl->w, pl->id, &s);
    return s;
}

/* The static at point p (the one of lowest id when several touch it). */
static world_body_id static_at(const world *w, vec2 p) {
    world_body_id id = WORLD_NULL_BODY;
    world_query_aabb(w, aabb_make(p, p), 1u << WORLD_BODY_STATIC, &id, 1);
    return id;
}

/* Grounded on `ground` (any body when WORLD_NULL_BODY) with its lowest point at top. */
static bool stands(const player *pl, world_body_id ground, float top) {
    world_character_state s = cstate(pl);
    world_body_row r = row(pl);
    bool ok = s.grounded && s.ground != WORLD_NULL_BODY && (!ground || s.ground == ground) &&
              fabsf(r.bounds.min.y - top) <= 0.01f;
    if (!ok)
        fprintf(stderr, "  at (%.4f, %.4f): grounded %d on %u (want %u), bottom %.4f (want %.4f)\n",
                (double)r.position.x, (double)r.position.y, s.grounded, (unsigned)s.ground,
                (unsigned)ground, (double)r.bounds.min.y, (double)top);
    return ok;
}

static void finish(player *pl) {
    world_destroy(pl->w);
    pl->w = NULL;
}

/* Every spawn point is free and a character spawned on it lands where it is, on a static. */
static void test_level_spawn_points(void) {
    static world_spawn_points sp;
    world *w = level(&sp);
    CHECK(w && sp.count == 8);
    world_destroy(w);
    for (size_t i = 0; i < sp.count; i++) {
        player pl;
        CHECK(player_at(&pl, sp.points[i]));
        world_body_row r = row(&pl);
        CHECK_MSG(fabsf(r.position.x - sp.points[i].x) < 1e-4f, "spawn point %zu", i);
        /* it stands on the first surface below the point */
        float top = r.bounds.min.y;
        CHECK_MSG(stands(&pl, WORLD_NULL_BODY, top) && top <= sp.points[i].y - HALF_H &&
                      top >= sp.points[i].y - HALF_H - 1.0f,
                  "spawn point %zu", i);
        finish(&pl);
    }
}

/* The flat ground from x 4 to 19 (1 x 2 tiles): grounded on every step at the same height, and
 * across gravity at the intent's speed on every step: no tile seam snags it. */
static void test_level_walk_across_tile_seams(void) {
    player pl;
    CHECK(player_at(&pl, v2(4, 2.9f)));
    CHECK(stands(&pl, WORLD_NULL_BODY, 2.0f));
    walk(&pl, 6.0f);
    for (float x = row(&pl).position.x; x < 19.0f; x = row(&pl).position.x) {
        world_step(pl.w);
        CHECK_NEAR(row(&pl).position.x - x, 6.0f * DT, 1e-3);
        CHECK(stands(&pl, WORLD_NULL_BODY, 2.0f));
    }
    finish(&pl);
}

/* Up the slope (21.8 degrees, two pieces meeting at x 25), across the plateau, down the other
 * side (33.7 degrees) to the flat: grounded on every step, over the plateau's top, and back on
 * the flat. */
static void test_level_slopes(void) {
    player pl;
    CHECK(player_at(&pl, v2(15, 2.9f)));
    float top = 2.0f;
    walk(&pl, 5.0f);
    for (int k = 0; k < 600 && row(&pl).position.x < 48.0f; k++) {
        world_step(pl.w);
        world_body_row r = row(&pl);
        CHECK_MSG(cstate(&pl).grounded, "off the ground at x %.4f", (double)r.position.x);
        top = fmaxf(top, r.bounds.min.y);
    }
    CHECK_NEAR(top, 6.0f, 0.01f); /* it went over the plateau */
    CHECK(row(&pl).position.x >= 48.0f && stands(&pl, WORLD_NULL_BODY, 2.0f));
    finish(&pl);
}

/* The same walk, its speed across gravity the intent's on every step, transitions included (the
 * contract: "it does not slow down climbing, nor take off running down a slope when
 * snap_distance covers the drop"). Known to fail (tests/examples/CMakeLists.txt): the first step
 * into the slope's foot (x 19.66) goes 0.0741 instead of 0.0833 (the rest of a flat walk is slid
 * along the slope, shortened), and the step off the plateau's edge onto the slope down (x 38.54)
 * goes 0.2196: the snap slides on along the slope after it touches it. */
static void test_slope_speed_kept(void) {
    player pl;
    CHECK(player_at(&pl, v2(15, 2.9f)));
    walk(&pl, 5.0f);
    for (int k = 0; k < 600 && row(&pl).position.x < 48.0f; k++) {
        float x = row(&pl).position.x;
        world_step(pl.w);
        CHECK_MSG(fabsf(row(&pl).position.x - x - 5.0f * DT) <= 1e-3f,
                  "from x %.4f a step of %.4f across gravity, not %.4f", (double)x,
                  (double)(row(&pl).position.x - x), (double)(5.0f * DT));
    }
    finish(&pl);
}

/* Step onto the steps (0.25 each: within step_height) without a jump; stopped by the ledge (1
 * higher: not a step); a jump puts it on the ledge. */
static void test_level_steps_and_ledge(void) {
    player pl;
    CHECK(player_at(&pl, v2(47, 2.9f)));
    walk(&pl, 4.0f);
    for (int k = 0; k < 180; k++)
        world_step(pl.w);
    world_body_row r = row(&pl);
    CHECK_NEAR(r.bounds.max.x, 58.0f, 0.01f); /* against the ledge's side */
    CHECK(stands(&pl, static_at(pl.w, v2(57, 2.9f)), 3.0f));
    jump(&pl, 4.0f); /* over the ledge's edge in half a second, then straight down onto it */
    for (int k = 0; k < 30; k++)
        world_step(pl.w);
    rest(&pl, 60);
    CHECK(stands(&pl, static_at(pl.w, v2(60, 3.9f)), 4.0f));
    finish(&pl);
}

/* A jump under the ceiling (5 to 6 over x 44 to 50) stops at it and comes back down. */
static void test_level_ceiling(void) {
    player pl;
    CHECK(player_at(&pl, v2(47, 2.9f)));
    jump(&pl, 0.0f);
    float head = 0.0f;
    for (int k = 0; k < 60; k++) {
        world_step(pl.w);
        head = fmaxf(head, row(&pl).bounds.max.y);
    }
    CHECK_NEAR(head, 5.0f, 0.01f); /* it reached the ceiling, and went no further */
    CHECK(stands(&pl, WORLD_NULL_BODY, 2.0f));
    finish(&pl);
}

/* The high block's right side (63.4 degrees) is too steep: a walker into it stays at its foot,
 * and a character dropped onto it slides down to the foot. */
static void test_level_steep_slope(void) {
    player pl;
    CHECK(player_at(&pl, v2(97, 2.9f)));
    walk(&pl, -5.0f);
    for (int k = 0; k < 120; k++) {
        world_step(pl.w);
        CHECK(row(&pl).bounds.min.y < 2.0f + 0.3f + 0.01f); /* never above a step */
    }
    CHECK(row(&pl).position.x > 94.0f);
    finish(&pl);
    CHECK(player_at(&pl, v2(92.6f, 8.0f))); /* over the face: it lands on it */
    for (int k = 0; k < 240; k++)
        world_step(pl.w);
    CHECK(row(&pl).position.x > 94.0f && stands(&pl, WORLD_NULL_BODY, 2.0f));
    finish(&pl);
}

/* Jumps towards target_x at 8 units/s (stopping over it) and steps until it lands. */
static bool jump_to(player *pl, float target_x) {
    float dir = target_x > row(pl).position.x ? 8.0f : -8.0f;
    jump(pl, dir);
    bool left = false, stopped = false;
    for (int k = 0; k < 150; k++) {
        world_step(pl->w);
        if (!stopped && fabsf(row(pl).position.x - target_x) < 8.0f * DT) {
            walk(pl, 0.0f);
            stopped = true;
        }
        bool g = cstate(pl).grounded;
        if (!g) left = true;
        if (left && g && stopped) return true;
    }
    return false;
}

/* Under the lowest one-way platform (its bottom above the head), then up through each of the four
 * by a jump, landing on each; along the last onto the high block (the seam between a one-way and
 * a plain body); standing on a one-way platform a second does not sink. */
static void test_level_one_way_platforms(void) {
    player pl;
    CHECK(player_at(&pl, v2(66, 2.9f)));
    CHECK(walk_to(&pl, 4.0f, 72.0f)); /* under the first platform */
    CHECK(stands(&pl, WORLD_NULL_BODY, 2.0f));
    rest(&pl, 1);
    static const struct { float x, top; } hops[] = {{72, 4}, {76, 6}, {72, 8}, {77, 10}};
    for (int i = 0; i < 4; i++) {
        if (i == 3) { /* to the edge of the third first: the fourth is 5 across */
            CHECK(walk_to(&pl, 4.0f, 73.5f));
            rest(&pl, 1);
        }
        CHECK_MSG(jump_to(&pl, hops[i].x), "hop %d", i);
        world_body_id p = static_at(pl.w, v2(hops[i].x, hops[i].top - 0.1f));
        CHECK_MSG(p && world_body_one_way(pl.w, p) && stands(&pl, p, hops[i].top), "hop %d", i);
    }
    rest(&pl, 60);
    CHECK(stands(&pl, WORLD_NULL_BODY, 10.0f));
    walk(&pl, 4.0f);
    for (int k = 0; k < 600 && row(&pl).position.x < 86.0f; k++) {
        world_step(pl.w);
        CHECK(stands(&pl, WORLD_NULL_BODY, 10.0f));
    }
    CHECK(stands(&pl, static_at(pl.w, v2(86, 9.9f)), 10.0f));
    finish(&pl);
}

/* A backend's platform as docs/operations.md lays it out: a box of half extents (1.9, 0.25). */
static world_body_id platform(world *w, vec2 p) {
    geom_shape box;
    world_body_id id = WORLD_NULL_BODY;
    if (geom_make_box(v2(1.9f, 0.25f), &box) ||
        world_spawn(w, WORLD_BODY_MOVING, &box, p, 2, &id, NULL) != WORLD_OK)
        return WORLD_NULL_BODY;
    return id;
}

/* Drives platform id at velocity v until its position's component along v reaches `to`. */
static bool drive(player *pl, world_body_id id, vec2 v, float to) {
    uint32_t seq = 0;
    world_set_intent(pl->w, id, v, ++seq);
    for (int k = 0; k < 600; k++) {
        world_body_row r;
        world_body_get(pl->w, id, &r);
        float along = v.x != 0.0f ? r.position.x : r.position.y;
        if (along >= to - 1e-3f) {
            world_set_intent(pl->w, id, v2(0, 0), ++seq);
            return true;
        }
        world_step(pl->w);
        if (!cstate(pl).grounded || cstate(pl).ground != id) return false;
    }
    return false;
}

/* The ferry: on at the pit's left edge, carried across at 4 units/s, off onto the far ground. The
 * lift: on at the shaft, carried up at 3 units/s, off onto the upper ledge. */
static void test_level_ferry_and_lift(void) {
    player pl;
    CHECK(player_at(&pl, v2(98, 2.9f)));
    world_body_id ferry = platform(pl.w, v2(102, 1.75f));
    CHECK(ferry);
    CHECK(walk_to(&pl, 4.0f, 102.0f));
    rest(&pl, 1);
    CHECK(stands(&pl, ferry, 2.0f));
    CHECK(drive(&pl, ferry, v2(4, 0), 122.0f));
    CHECK(walk_to(&pl, 4.0f, 126.0f));
    rest(&pl, 1);
    CHECK(stands(&pl, WORLD_NULL_BODY, 2.0f) && cstate(&pl).ground != ferry);
    finish(&pl);

    CHECK(player_at(&pl, v2(138, 2.9f)));
    world_body_id lift = platform(pl.w, v2(142, 1.75f));
    CHECK(lift);
    CHECK(walk_to(&pl, 4.0f, 142.0f));
    rest(&pl, 1);
    CHECK(stands(&pl, lift, 2.0f));
    CHECK(drive(&pl, lift, v2(0, 3), 13.75f));
    CHECK(walk_to(&pl, 4.0f, 148.0f));
    rest(&pl, 1);
    CHECK(stands(&pl, static_at(pl.w, v2(148, 13.9f)), 14.0f));
    finish(&pl);
}

TEST_MAIN(TEST(test_level_spawn_points), TEST(test_level_walk_across_tile_seams),
          TEST(test_level_slopes), TEST(test_level_steps_and_ledge), TEST(test_level_ceiling),
          TEST(test_level_steep_slope), TEST(test_level_one_way_platforms),
          TEST(test_level_ferry_and_lift), TEST(test_slope_speed_kept))

/* Characters (PROTOCOL.md "Characters: side-on games", COLLISION.md "Protocol 1.2 additions"):
 * the rules as written, scene by scene, for a box, a circle and a polygon, at several tick rates.
 * Depths, gaps and lowest points come from world_oracle.h (double, never geom's own queries);
 * groundedness and the ground's id from world_body_character. Scenes:
 *   - I8 resting: on flat ground and on walkable slopes, no intent: bit-identical position and
 *     grounded for 10,000 ticks;
 *   - I8 walking: over a row of 1x1 tiles and up and down walkable slopes, every tick covers
 *     99-101% of the intent's speed across gravity and stays grounded;
 *   - steps (climbed up to step_height, blocked above it), snapping down a convex kink and stairs
 *     (and taking off without snap), a slope steeper than max_slope blocks and is slid down;
 *   - I9 one-way platforms, static and moving, landed on at up to the max speed at 30-240 Hz,
 *     stood and walked on, jumped up through from below, jumped from under a ceiling's corner;
 *   - I10 carried by platforms moving across, up and down (drift <= 1e-4 a tick, the platform's
 *     own path unchanged by its riders: compared with the same platform riderless), a circle on
 *     a turning platform, a box that keeps its angle there, riders carried into a wall or under
 *     a ceiling never left inside the static;
 *   - jumps: only from the ground or within coyote time, a press every tick in the air changes
 *     nothing, the buffer, one jump per call, jump_speed 0;
 *   - zero gravity: the same trajectory as a plain body, never grounded; gravity along other
 *     directions: resting and walking on a floor facing minus gravity;
 *   - I3 for characters: a crowd walking into one another between two walls, every shape, at
 *     30-240 Hz: no pair overlaps past I3's tolerance unless reported jammed;
 *   - I6: the same scene twice, the same state hash every tick;
 *   - the API's refusals and defaults. */
#include "world_test_util.h"

#define SKIN GEOM_SKIN
#define PI 3.14159265358979323846
#define G 30.0f /* most scenes' gravity, units/s^2 down */

static const float RATES[] = {30.0f, 60.0f, 120.0f, 240.0f};
#define RATE_COUNT 4

/* The three character shapes: a box, a circle, and a hexagon with flat top and bottom whose
 * slanted sides stand 60 degrees steep, so an obstacle's corner against one of them is never a
 * walkable contact at the default max_slope (45 degrees): a step is a step for every shape. */
static geom_shape char_shape(int kind) {
    switch (kind) {
    case 0:
        return wt_box(0.4f, 0.5f);
    case 1:
        return wt_circle(0.5f);
    default:
        return wt_ngon(6, 0.55f, 0.0f);
    }
}
static const char *const KIND[] = {"box", "circle", "hexagon"};
#define KIND_COUNT 3

/* Every world a case creates stays reachable from here until drop_world destroys it: a failed
 * CHECK returns from its case early, and what it leaves is then not a leak to LeakSanitizer
 * (whose report would hide the failure's own message under the ASan build). */
#define MAX_WORLDS 512
static world *live_worlds[MAX_WORLDS];

static void drop_world(world *w) {
    for (int i = 0; i < MAX_WORLDS; i++)
        if (live_worlds[i] == w) live_worlds[i] = NULL;
    world_destroy(w);
}

static world *side_world(float rate, vec2 gravity, float half, uint32_t capacity) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-half, -half), v2(half, half));
    cfg.tick_rate_hz = rate;
    cfg.max_bodies = capacity;
    cfg.gravity = gravity;
    world *w = world_create(&cfg);
    for (int i = 0; w && i < MAX_WORLDS; i++)
        if (!live_worlds[i]) {
            live_worlds[i] = w;
            break;
        }
    return w;
}

static world_body_id spawn_char(world *w, geom_shape s, vec2 p, const world_character_options *o) {
    world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, s, p);
    if (id != WORLD_NULL_BODY && world_body_set_character(w, id, o) != WORLD_OK)
        return WORLD_NULL_BODY;
    return id;
}

/* A character's state after the last step; an impossible ground (all ones) when the world has
 * none, so a check against a real id fails. */
static world_character_state cstate(const world *w, world_body_id id) {
    world_character_state s;
    if (!world_body_character(w, id, &s)) {
        memset(&s, 0, sizeof s);
        s.ground = ~0u;
    }
    return s;
}
static bool grounded_on(const world *w, world_body_id id, world_body_id ground) {
    world_character_state s = cstate(w, id);
    return s.grounded && s.ground == ground;
}
/* The lowest and highest points of a body, by the oracle. */
static double lowest(const world *w, world_body_id id) {
    wo_body b;
    return wt_body(w, id, &b) ? b.miny : NAN;
}
static double highest(const world *w, world_body_id id) {
    wo_body b;
    return wt_body(w, id, &b) ? b.maxy : NAN;
}
static double rightmost(const world *w, world_body_id id) {
    wo_body b;
    return wt_body(w, id, &b) ? b.maxx : NAN;
}
static bool vec_same(vec2 a, vec2 b) { return a.x == b.x && a.y == b.y; }
static float angle_of(const world *w, world_body_id id) {
    world_body_row r;
    return world_body_get(w, id, &r) ? r.angle : NAN;
}

/* A floor from x0 to x1 whose top is at `top`, 2 thick. */
static world_body_id spawn_floor(world *w, float x0, float x1, float top) {
    return wt_spawn(w, WORLD_BODY_STATIC, wt_box((x1 - x0) / 2, 1.0f), v2((x0 + x1) / 2, top - 1));
}
/* A static right triangle at (x0, y0) whose top face runs over `run` units to the right, rising
 * at `deg` degrees (falling when negative); the solid lies below the face. */
static world_body_id spawn_ramp(world *w, float x0, float y0, float run, double deg) {
    float rise = (float)(run * tan(deg * PI / 180.0));
    geom_shape s;
    vec2 v[3];
    if (rise >= 0.0f) {
        v[0] = v2(0, 0), v[1] = v2(run, 0), v[2] = v2(run, rise);
    } else {
        v[0] = v2(0, rise), v[1] = v2(run, rise), v[2] = v2(0, 0);
    }
    if (geom_make_polygon(v, 3, &s)) return WORLD_NULL_BODY;
    return wt_spawn(w, WORLD_BODY_STATIC, s, v2(x0, y0));
}

/* Steps until the character has been grounded 30 ticks in a row, at most `max` steps. */
static bool settle(world *w, world_body_id id, int max) {
    int run = 0;
    for (int t = 0; t < max && run < 30; t++) {
        world_step(w);
        run = cstate(w, id).grounded ? run + 1 : 0;
    }
    return run >= 30;
}

/* ---- I8 resting ------------------------------------------------------------------------------ */

/* One character at rest on flat ground (deg 0) or a slope through the origin at deg degrees:
 * after landing, 10,000 ticks at the same position bit for bit, grounded on that static, and its
 * velocity along up never more than one tick of gravity (it does not pile up while standing). */
static void rest_case(int kind, double deg) {
    world *w = side_world(60.0f, v2(0, -G), 50.0f, 16);
    world_body_id ground =
        deg == 0.0 ? spawn_floor(w, -20, 20, 0)
                   : spawn_ramp(w, -10.0f, (float)(-10.0 * tan(deg * PI / 180.0)), 20.0f, deg);
    world_body_id c = spawn_char(w, char_shape(kind), v2(0.0f, 1.6f), NULL);
    CHECK(ground && c);
    CHECK_MSG(settle(w, c, 600), "%s on %g degrees never settled", KIND[kind], deg);
    vec2 p0 = wt_pos(w, c);
    for (int t = 0; t < 10000; t++) {
        world_step(w);
        vec2 p = wt_pos(w, c);
        world_character_state st = cstate(w, c);
        CHECK_MSG(vec_same(p, p0) && st.grounded && st.ground == ground,
                  "%s on %g degrees tick %d: (%.9g, %.9g) from (%.9g, %.9g), grounded %d on %u",
                  KIND[kind], deg, t, (double)p.x, (double)p.y, (double)p0.x, (double)p0.y,
                  st.grounded, st.ground);
        CHECK_MSG(fabsf(st.vertical) <= G / 60.0f + 1e-4f, "%s on %g: vertical %g", KIND[kind], deg,
                  (double)st.vertical);
    }
    drop_world(w);
}

static void test_rest(void) {
    const double slopes[] = {0.0, 30.0, 40.0};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int s = 0; s < 3; s++)
            rest_case(kind, slopes[s]);
}

/* ---- I8 walking ------------------------------------------------------------------------------ */

/* One tick of a walk: the displacement across gravity (x) is 99-101% of the intent's. */
static bool walked(vec2 before, vec2 after, float vx, float rate) {
    double dx = ((double)after.x - before.x) / ((double)vx / rate);
    return dx >= 0.99 && dx <= 1.01;
}

/* Across 120 adjacent 1x1 tiles (every seam a static's edge), left or right, with an intent
 * that also asks to move up (ignored: it is along gravity): every tick at the intent's speed
 * across gravity, grounded, at the height it stood at (within the skin). */
static void tiles_case(int kind, float rate, float vx) {
    world *w = side_world(rate, v2(0, -G), 70.0f, 256);
    for (int i = 0; i < 120; i++)
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2((float)i - 59.5f, -0.5f));
    world_body_id c = spawn_char(w, char_shape(kind), v2(vx > 0 ? -55.0f : 55.0f, 1.0f), NULL);
    CHECK(c && settle(w, c, 600));
    CHECK(world_set_intent(w, c, v2(vx, 3.0f), 1) == WORLD_OK);
    float y0 = wt_pos(w, c).y;
    int ticks = (int)(100.0f / fabsf(vx) * rate);
    for (int t = 0; t < ticks; t++) {
        vec2 before = wt_pos(w, c);
        world_step(w);
        vec2 after = wt_pos(w, c);
        world_character_state st = cstate(w, c);
        CHECK_MSG(walked(before, after, vx, rate) && st.grounded && fabsf(after.y - y0) <= SKIN,
                  "%s at %g Hz, %g u/s, tick %d: x %.7g -> %.7g, y %.7g (stood at %.7g), "
                  "grounded %d",
                  KIND[kind], (double)rate, (double)vx, t, (double)before.x, (double)after.x,
                  (double)after.y, (double)y0, st.grounded);
    }
    drop_world(w);
}

static void test_walk_tiles(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++) {
            tiles_case(kind, RATES[r], 6.0f);
            tiles_case(kind, RATES[r], -9.0f);
        }
}

/* Up a walkable slope and back down it (snap on), each tick at the intent's speed across
 * gravity (not slowed climbing, not faster descending) and grounded on the slope. */
static void slope_walk_case(int kind, double deg, float rate) {
    world *w = side_world(rate, v2(0, -G), 60.0f, 16);
    double tn = tan(deg * PI / 180.0);
    world_body_id ramp = spawn_ramp(w, -25.0f, (float)(-25.0 * tn), 50.0f, deg);
    world_character_options o = {0};
    o.snap_distance = 0.5f;
    world_body_id c = spawn_char(w, char_shape(kind), v2(-15.0f, (float)(-15.0 * tn) + 1.6f), &o);
    CHECK(ramp && c && settle(w, c, 600));
    const float vx[2] = {5.0f, -5.0f};
    for (int leg = 0; leg < 2; leg++) {
        CHECK(world_set_intent(w, c, v2(vx[leg], 0.0f), (uint32_t)leg + 1u) == WORLD_OK);
        for (int t = 0; t < (int)(5.0f * rate); t++) {
            vec2 before = wt_pos(w, c);
            world_step(w);
            vec2 after = wt_pos(w, c);
            CHECK_MSG(walked(before, after, vx[leg], rate) && grounded_on(w, c, ramp),
                      "%s %s %g degrees at %g Hz, tick %d: x %.7g -> %.7g, y %.7g -> %.7g, "
                      "grounded %d",
                      KIND[kind], leg ? "down" : "up", deg, (double)rate, t, (double)before.x,
                      (double)after.x, (double)before.y, (double)after.y, cstate(w, c).grounded);
        }
    }
    drop_world(w);
}

static void test_walk_slopes(void) {
    const double slopes[] = {15.0, 30.0, 40.0};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int s = 0; s < 3; s++)
            for (int r = 0; r < RATE_COUNT; r++)
                slope_walk_case(kind, slopes[s], RATES[r]);
}

/* ---- Steps, snap, steep slopes --------------------------------------------------------------- */

/* Walking at a block from x = 2 to 12 of the given height with step_height 0.5: one within it
 * is climbed (the character ends on top, grounded on it, having lost under 5% of its walk); a
 * taller one blocks (it never rises off the floor nor passes the block's face). */
static void step_case(int kind, float height, bool climbs) {
    world *w = side_world(60.0f, v2(0, -G), 50.0f, 16);
    world_body_id floor = spawn_floor(w, -20, 20, 0);
    world_body_id block =
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(5.0f, height / 2), v2(7.0f, height / 2));
    world_character_options o = {0};
    o.step_height = 0.5f;
    world_body_id c = spawn_char(w, char_shape(kind), v2(-3.0f, 1.2f), &o);
    CHECK(floor && block && c && settle(w, c, 600));
    float x0 = wt_pos(w, c).x;
    CHECK(world_set_intent(w, c, v2(4.0f, 0.0f), 1) == WORLD_OK);
    double rise = 0.0;
    for (int t = 0; t < 150; t++) {
        world_step(w);
        rise = fmax(rise, lowest(w, c));
        if (!climbs)
            CHECK_MSG(rise <= 0.01 && rightmost(w, c) <= 2.0 + SKIN,
                      "%s at a %g block, tick %d: lowest %g, right %g", KIND[kind], (double)height,
                      t, rise, rightmost(w, c));
    }
    if (climbs) {
        double low = lowest(w, c);
        CHECK_MSG(grounded_on(w, c, block) && low >= height && low <= height + 2 * SKIN &&
                      wt_pos(w, c).x >= x0 + 9.5f,
                  "%s at a %g block: x %g from %g, lowest %g, grounded %d on %u", KIND[kind],
                  (double)height, (double)wt_pos(w, c).x, (double)x0, low, cstate(w, c).grounded,
                  cstate(w, c).ground);
    } else {
        CHECK(grounded_on(w, c, floor));
    }
    drop_world(w);
}

static void test_steps(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        step_case(kind, 0.5f - 2 * SKIN, true);
        step_case(kind, 0.3f, true);
        step_case(kind, 0.55f, false);
        step_case(kind, 0.8f, false);
    }
}

/* Walking off a plateau (top y = 0, up to x = 0) onto a 30 degree downslope at 8 u/s: with
 * snap 0.5 every tick is grounded and covers the intent's speed across gravity; without snap
 * the character takes off at the kink (the control that shows the scene needs snapping). */
static void snap_case(int kind, float rate, float snap) {
    world *w = side_world(rate, v2(0, -G), 50.0f, 16);
    world_body_id plateau = wt_spawn(w, WORLD_BODY_STATIC, wt_box(10, 5), v2(-10, -5));
    world_body_id ramp = spawn_ramp(w, 0.0f, 0.0f, 15.0f, -30.0);
    world_character_options o = {0};
    o.snap_distance = snap;
    world_body_id c = spawn_char(w, char_shape(kind), v2(-5.0f, 1.2f), &o);
    CHECK(plateau && ramp && c && settle(w, c, 600));
    CHECK(world_set_intent(w, c, v2(8.0f, 0.0f), 1) == WORLD_OK);
    int airborne = 0;
    for (int t = 0; t < (int)(1.8f * rate); t++) {
        vec2 before = wt_pos(w, c);
        world_step(w);
        vec2 after = wt_pos(w, c);
        bool g = cstate(w, c).grounded;
        airborne += !g;
        if (snap > 0.0f)
            CHECK_MSG(g && walked(before, after, 8.0f, rate),
                      "%s at %g Hz, tick %d: x %.7g -> %.7g, y %.7g -> %.7g, grounded %d",
                      KIND[kind], (double)rate, t, (double)before.x, (double)after.x,
                      (double)before.y, (double)after.y, g);
    }
    CHECK_MSG(wt_pos(w, c).x > 8.0f, "%s stopped at %g", KIND[kind], (double)wt_pos(w, c).x);
    if (snap == 0.0f) CHECK_MSG(airborne > 0, "%s never took off without snap", KIND[kind]);
    drop_world(w);
}

/* A box walking down stairs (steps 0.25 high, 2 wide) with snap 0.5: grounded every tick. */
static void stairs_case(float rate) {
    world *w = side_world(rate, v2(0, -G), 50.0f, 32);
    for (int i = 0; i < 8; i++)
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(1.0f, 5.0f), v2(2.0f * i + 1.0f, -5.0f - 0.25f * i));
    world_character_options o = {0};
    o.snap_distance = 0.5f;
    world_body_id c = spawn_char(w, char_shape(0), v2(1.0f, 1.0f), &o);
    CHECK(c && settle(w, c, 600));
    CHECK(world_set_intent(w, c, v2(6.0f, 0.0f), 1) == WORLD_OK);
    for (int t = 0; t < (int)(2.0f * rate); t++) {
        world_step(w);
        CHECK_MSG(cstate(w, c).grounded, "stairs at %g Hz, tick %d: airborne at (%g, %g)",
                  (double)rate, t, (double)wt_pos(w, c).x, (double)wt_pos(w, c).y);
    }
    drop_world(w);
}

static void test_snap(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++) {
            snap_case(kind, RATES[r], 0.5f);
            snap_case(kind, RATES[r], 0.0f);
        }
    for (int r = 0; r < RATE_COUNT; r++)
        stairs_case(RATES[r]);
}

/* The widest a shape reaches along unit direction d from its position. */
static float reach(const geom_shape *s, vec2 d) {
    wo_body b = wo_make_at(s, 0.0, 0.0);
    if (b.circle) return (float)b.r;
    double best = -INFINITY;
    for (int i = 0; i < b.n; i++)
        best = fmax(best, b.x[i] * d.x + b.y[i] * d.y);
    return (float)best;
}

/* A 60 degree ramp (steeper than the default 45) from x = 2 on a floor: walking into it for 4 s
 * the character never climbs it (its lowest point stays on the floor) and stays grounded on the
 * floor; one placed against its face 5 up slides down it, never grounded on the way, and ends
 * grounded on the floor. */
static void steep_case(int kind) {
    world *w = side_world(60.0f, v2(0, -G), 50.0f, 16);
    world_body_id floor = spawn_floor(w, -20, 20, 0);
    world_body_id ramp = spawn_ramp(w, 2.0f, 0.0f, 6.0f, 60.0);
    geom_shape s = char_shape(kind);
    world_body_id c = spawn_char(w, s, v2(-2.0f, 1.2f), NULL);
    CHECK(floor && ramp && c && settle(w, c, 600));
    CHECK(world_set_intent(w, c, v2(5.0f, 0.0f), 1) == WORLD_OK);
    for (int t = 0; t < 240; t++) {
        world_step(w);
        CHECK_MSG(lowest(w, c) <= 0.01 && grounded_on(w, c, floor),
                  "%s walking into a steep slope, tick %d: lowest %g, grounded %d on %u",
                  KIND[kind], t, lowest(w, c), cstate(w, c).grounded, cstate(w, c).ground);
    }
    CHECK(world_despawn(w, c) == WORLD_OK); /* else the next lands on it */
    /* against the face 5 up: its centre off the face by its reach along the face's normal */
    vec2 n = v2(-sinf((float)(PI / 3)), cosf((float)(PI / 3)));
    vec2 at = v2(2.0f + 5.0f / tanf((float)(PI / 3)), 5.0f);
    world_body_id d = spawn_char(w, s, v2_add(at, v2_scale(n, reach(&s, v2_neg(n)) + 0.01f)), NULL);
    CHECK(d);
    double last = lowest(w, d);
    for (int t = 0; t < 240; t++) {
        world_step(w);
        double low = lowest(w, d);
        CHECK_MSG(low <= last + 1e-6, "%s slid up the steep face: %g -> %g", KIND[kind], last, low);
        CHECK_MSG(low <= 0.05 || !cstate(w, d).grounded,
                  "%s grounded on the steep face at %g, tick %d", KIND[kind], low, t);
        last = low;
    }
    CHECK_MSG(grounded_on(w, d, floor) && last <= 2 * SKIN, "%s did not slide down: lowest %g",
              KIND[kind], last);
    drop_world(w);
}

static void test_steep_slopes(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        steep_case(kind);
}

/* ---- I9 one-way ------------------------------------------------------------------------------ */

/* Falling onto a static one-way platform (top y = 0.25) from heights and gravities that land at
 * 11, 550 and 9,500 u/s and at the max speed (10,000, 333 units a tick at 30 Hz): never below
 * its top, and then standing on it; then walking back and forth on it for 10 s. */
static void one_way_landing_case(int kind, float rate, float g, float h) {
    world *w = side_world(rate, v2(0, -g), 2000.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_STATIC, wt_box(6.0f, 0.25f), v2(0, 0));
    CHECK(p && world_body_set_one_way(w, p, true) == WORLD_OK);
    world_body_id c = spawn_char(w, char_shape(kind), v2(0.5f, 0.25f + h + 1.0f), NULL);
    CHECK(c);
    int grounded_run = 0;
    for (int t = 0; t < 4000 && grounded_run < 60; t++) {
        world_step(w);
        CHECK_MSG(lowest(w, c) >= 0.25 - SKIN, "%s at %g Hz falling %g under %g: through, %g",
                  KIND[kind], (double)rate, (double)h, (double)g, lowest(w, c));
        grounded_run = grounded_on(w, c, p) ? grounded_run + 1 : 0;
    }
    CHECK_MSG(grounded_run >= 60 && lowest(w, c) <= 0.25 + 2 * SKIN,
              "%s at %g Hz falling %g under %g: not standing on it (lowest %g)", KIND[kind],
              (double)rate, (double)h, (double)g, lowest(w, c));
    for (int t = 0; t < (int)(10.0f * rate); t++) {
        if (t % (int)rate == 0)
            world_set_intent(w, c, v2((t / (int)rate) % 2 ? -4.0f : 4.0f, -50.0f),
                             (uint32_t)t + 1u);
        world_step(w);
        CHECK_MSG(lowest(w, c) >= 0.25 - SKIN && grounded_on(w, c, p),
                  "%s at %g Hz walking on a one-way platform, tick %d: lowest %g", KIND[kind],
                  (double)rate, t, lowest(w, c));
    }
    drop_world(w);
}

static void test_one_way_landing(void) {
    const float g[4] = {30.0f, 3000.0f, 30000.0f, 1e6f}, h[4] = {2.0f, 50.0f, 1500.0f, 1500.0f};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++)
            for (int i = 0; i < 4; i++)
                one_way_landing_case(kind, RATES[r], g[i], h[i]);
}

/* Standing on a moving one-way platform that moves across, up or down at 5, 50 or 300 u/s: never
 * below its top, grounded on it every tick. */
static void one_way_moving_case(int kind, float rate, vec2 pv) {
    world *w = side_world(rate, v2(0, -G), 400.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    CHECK(p && world_body_set_one_way(w, p, true) == WORLD_OK);
    world_body_id c = spawn_char(w, char_shape(kind), v2(0.0f, 1.5f), NULL);
    CHECK(c && settle(w, c, 600));
    CHECK(world_set_intent(w, p, pv, 1) == WORLD_OK);
    for (int t = 0; t < (int)rate; t++) {
        world_step(w);
        double top = highest(w, p);
        CHECK_MSG(lowest(w, c) >= top - SKIN && grounded_on(w, c, p),
                  "%s at %g Hz on a one-way platform moving (%g, %g), tick %d: lowest %g, top %g, "
                  "grounded %d",
                  KIND[kind], (double)rate, (double)pv.x, (double)pv.y, t, lowest(w, c), top,
                  cstate(w, c).grounded);
    }
    drop_world(w);
}

static void test_one_way_moving(void) {
    const float speeds[3] = {5.0f, 50.0f, 300.0f};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++)
            for (int s = 0; s < 3; s++) {
                one_way_moving_case(kind, RATES[r], v2(speeds[s], 0));
                one_way_moving_case(kind, RATES[r], v2(0, speeds[s]));
                one_way_moving_case(kind, RATES[r], v2(0, -speeds[s]));
            }
}

/* A jump from a floor towards a one-way platform 3 above it (platform 0: none, 1: static, 2:
 * moving across at 1 u/s): the positions of the rise (until its velocity along up ends) in
 * rise[], the world left running for the landing. */
typedef struct jump_through {
    world *w;
    world_body_id p, c;
    int ticks;
} jump_through;

static jump_through jump_through_run(int kind, float rate, int platform, vec2 *rise) {
    jump_through j = {side_world(rate, v2(0, -G), 50.0f, 16), WORLD_NULL_BODY, WORLD_NULL_BODY, 0};
    spawn_floor(j.w, -20, 20, 0);
    if (platform) {
        j.p = wt_spawn(j.w, platform == 2 ? WORLD_BODY_MOVING : WORLD_BODY_STATIC,
                       wt_box(3.0f, 0.25f), v2(0.0f, 3.0f));
        world_body_set_one_way(j.w, j.p, true);
    }
    world_character_options o = {0};
    o.jump_speed = 20.0f;
    j.c = spawn_char(j.w, char_shape(kind), v2(0.0f, 1.0f), &o);
    if (!j.c || !settle(j.w, j.c, 600)) return j;
    if (platform == 2) world_set_intent(j.w, j.p, v2(1.0f, 0.0f), 1);
    world_character_jump(j.w, j.c);
    do {
        world_step(j.w);
        rise[j.ticks++] = wt_pos(j.w, j.c);
    } while (cstate(j.w, j.c).vertical > 0.0f && j.ticks < 600);
    return j;
}

/* Jumping up through the platform: while rising it moves as in the same world without the
 * platform (within 1e-4), then it lands on top and stands there. */
static void jump_through_case(int kind, float rate, int platform) {
    static vec2 free_rise[600], rise[600];
    jump_through f = jump_through_run(kind, rate, 0, free_rise);
    jump_through j = jump_through_run(kind, rate, platform, rise);
    drop_world(f.w);
    CHECK_MSG(j.ticks == f.ticks && f.ticks > 1, "%s at %g Hz: rose %d ticks, free %d", KIND[kind],
              (double)rate, j.ticks, f.ticks);
    for (int t = 0; t < j.ticks; t++)
        CHECK_MSG(fabsf(rise[t].x - free_rise[t].x) <= 1e-4f &&
                      fabsf(rise[t].y - free_rise[t].y) <= 1e-4f,
                  "%s at %g Hz platform %d, tick %d: (%g, %g), free (%g, %g)", KIND[kind],
                  (double)rate, platform, t, (double)rise[t].x, (double)rise[t].y,
                  (double)free_rise[t].x, (double)free_rise[t].y);
    int grounded_run = 0;
    for (int t = 0; t < (int)(4.0f * rate) && grounded_run < 30; t++) {
        world_step(j.w);
        grounded_run = grounded_on(j.w, j.c, j.p) ? grounded_run + 1 : 0;
    }
    CHECK_MSG(grounded_run >= 30 && lowest(j.w, j.c) >= highest(j.w, j.p),
              "%s at %g Hz platform %d: not on top (lowest %g, top %g)", KIND[kind], (double)rate,
              platform, lowest(j.w, j.c), highest(j.w, j.p));
    drop_world(j.w);
}

/* Wedged under a ceiling's corner on a one-way platform: walking right from x = -2 at 8 u/s under
 * a static block whose lower left corner hangs at (0.8, 0.25 + the character's height - 0.05),
 * it stops against the corner; jump presses then send it up into the corner, which deflects it
 * down: it never ends a tick below the platform's top while over it (I9). */
static void one_way_wedge_case(int kind, float rate) {
    world *w = side_world(rate, v2(0, -G), 20.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_STATIC, wt_box(5.0f, 0.25f), v2(0, 0));
    CHECK(p && world_body_set_one_way(w, p, true) == WORLD_OK);
    geom_shape s = char_shape(kind);
    wo_body b = wo_make_at(&s, 0.0, 0.0);
    float corner = 0.25f + (float)(b.maxy - b.miny) - 0.05f;
    CHECK(wt_spawn(w, WORLD_BODY_STATIC, wt_box(2.0f, 2.0f), v2(2.8f, corner + 2.0f)));
    world_character_options o = {0};
    o.jump_speed = 8.0f;
    world_body_id c = spawn_char(w, s, v2(-2.0f, 1.0f), &o);
    CHECK(c && world_set_intent(w, c, v2(8.0f, 0.0f), 1) == WORLD_OK);
    for (int t = 0; t < (int)(4.0f * rate); t++) {
        if (t >= (int)rate && t % (int)(rate / 4) == 0) world_character_jump(w, c);
        world_step(w);
        wo_body at;
        CHECK(wt_body(w, c, &at));
        CHECK_MSG(at.maxx <= -5.0 || at.minx >= 5.0 || at.miny >= 0.25 - SKIN,
                  "%s at %g Hz, tick %d: through the one-way platform under a corner at (0.8, %g): "
                  "lowest %g at x %g",
                  KIND[kind], (double)rate, t, (double)corner, at.miny, (double)wt_pos(w, c).x);
    }
    drop_world(w);
}

static void test_one_way_wedged_jump(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++)
            one_way_wedge_case(kind, RATES[r]);
}

static void test_one_way_jump_through(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++)
            for (int platform = 1; platform <= 2; platform++)
                jump_through_case(kind, RATES[r], platform);
}

/* ---- I10 carried ----------------------------------------------------------------------------- */

/* Three riders (one of each shape) on a platform moving at pv: once at rest, each keeps its
 * position relative to the platform within 1e-4 a tick and stays grounded on it; and the
 * platform's path is bit for bit that of the same platform without riders (not stopped, not
 * slowed by them). */
static void carry_case(float rate, vec2 pv) {
    world *w = side_world(rate, v2(0, -G), 200.0f, 16);
    world *ghost = side_world(rate, v2(0, -G), 200.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id q = wt_spawn(ghost, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id c[KIND_COUNT];
    for (int k = 0; k < KIND_COUNT; k++) {
        c[k] = spawn_char(w, char_shape(k), v2(-2.5f + 2.5f * k, 1.5f), NULL);
        CHECK(c[k]);
    }
    for (int t = 0; t < 120; t++)
        world_step(w), world_step(ghost);
    CHECK(world_set_intent(w, p, pv, 1) == WORLD_OK &&
          world_set_intent(ghost, q, pv, 1) == WORLD_OK);
    vec2 rel[KIND_COUNT];
    for (int k = 0; k < KIND_COUNT; k++) {
        CHECK_MSG(grounded_on(w, c[k], p), "%s never stood on the platform", KIND[k]);
        rel[k] = v2_sub(wt_pos(w, c[k]), wt_pos(w, p));
    }
    for (int t = 0; t < (int)(6.0f * rate); t++) {
        world_step(w), world_step(ghost);
        vec2 pp = wt_pos(w, p);
        CHECK_MSG(vec_same(pp, wt_pos(ghost, q)), "platform (%g, %g) at %g Hz, tick %d: slowed",
                  (double)pv.x, (double)pv.y, (double)rate, t);
        for (int k = 0; k < KIND_COUNT; k++) {
            vec2 r = v2_sub(wt_pos(w, c[k]), pp);
            CHECK_MSG(fabsf(r.x - rel[k].x) <= 1e-4f && fabsf(r.y - rel[k].y) <= 1e-4f &&
                          grounded_on(w, c[k], p),
                      "%s on a platform (%g, %g) at %g Hz, tick %d: drifted (%g, %g), grounded %d",
                      KIND[k], (double)pv.x, (double)pv.y, (double)rate, t,
                      (double)(r.x - rel[k].x), (double)(r.y - rel[k].y), cstate(w, c[k]).grounded);
            rel[k] = r;
        }
    }
    drop_world(w);
    drop_world(ghost);
}

static void test_carried(void) {
    const vec2 pv[] = {{4, 0}, {-4, 0}, {0, 4}, {0, -4}, {0, -25}, {0, 25}, {3, 3}};
    for (int r = 0; r < RATE_COUNT; r++)
        for (size_t i = 0; i < sizeof pv / sizeof pv[0]; i++)
            carry_case(RATES[r], pv[i]);
}

/* The turns of a turning platform: +0.3 rad/s for 1 s, -0.3 for 2 s, +0.3 for 1 s. */
static float turn_at(int t, float rate) {
    float s = (float)t / rate;
    return s < 1.0f || s >= 3.0f ? 0.3f : -0.3f;
}

/* Turns the platform by turn_at's schedule before step t. */
static void turn_platform(world *w, world_body_id p, int t, float rate, float *turning,
                          uint32_t *seq) {
    if (turn_at(t, rate) == *turning) return;
    *turning = turn_at(t, rate);
    world_set_intent_turning(w, p, v2(0, 0), *turning, (*seq)++);
}

/* A circle on a turning platform keeps its position in the platform's frame within 1e-4 a
 * tick, grounded on it, and the platform turns as the same platform without a rider does, bit
 * for bit (its rider does not stop its turn). */
static void turning_circle_case(float rate) {
    world *w = side_world(rate, v2(0, -G), 50.0f, 16);
    world *ghost = side_world(rate, v2(0, -G), 50.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id q = wt_spawn(ghost, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id c = spawn_char(w, char_shape(1), v2(1.5f, 1.0f), NULL);
    CHECK(p && q && c && settle(w, c, 600));
    /* the circle in the platform's frame (the platform stands at angle 0 until it turns) */
    double qx = (double)wt_pos(w, c).x - wt_pos(w, p).x,
           qy = (double)wt_pos(w, c).y - wt_pos(w, p).y;
    uint32_t seq = 1, ghost_seq = 1;
    float turning = 0.0f, ghost_turning = 0.0f;
    for (int t = 0; t < (int)(4.0f * rate); t++) {
        turn_platform(w, p, t, rate, &turning, &seq);
        turn_platform(ghost, q, t, rate, &ghost_turning, &ghost_seq);
        world_step(w), world_step(ghost);
        vec2 pp = wt_pos(w, p), cp = wt_pos(w, c);
        double a = angle_of(w, p), dx = (double)cp.x - pp.x, dy = (double)cp.y - pp.y;
        double rx = cos(a) * dx + sin(a) * dy, ry = -sin(a) * dx + cos(a) * dy;
        CHECK_MSG(fabs(rx - qx) <= 1e-4 && fabs(ry - qy) <= 1e-4 && grounded_on(w, c, p),
                  "circle on a turning platform at %g Hz, tick %d (angle %g): drifted (%g, %g), "
                  "grounded %d",
                  (double)rate, t, a, rx - qx, ry - qy, cstate(w, c).grounded);
        CHECK_MSG(vec_same(pp, wt_pos(ghost, q)) && angle_of(w, p) == angle_of(ghost, q),
                  "circle on a turning platform at %g Hz, tick %d: the platform at angle %g, "
                  "without its rider %g",
                  (double)rate, t, a, (double)angle_of(ghost, q));
        qx = rx, qy = ry;
    }
    drop_world(w);
    drop_world(ghost);
}

/* A box on a turning platform keeps its own angle (0), stays grounded on it and is pushed out
 * of it as it tilts (I3's tolerance), and the platform turns in place as the same platform
 * without a rider does, bit for bit (its rider neither stops nor pushes it). */
static void turning_box_case(float rate) {
    world *w = side_world(rate, v2(0, -G), 50.0f, 16);
    world *ghost = side_world(rate, v2(0, -G), 50.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id q = wt_spawn(ghost, WORLD_BODY_MOVING, wt_box(4.0f, 0.25f), v2(0, 0));
    world_body_id b = spawn_char(w, char_shape(0), v2(-1.5f, 1.0f), NULL);
    CHECK(p && q && b && settle(w, b, 600));
    uint32_t seq = 1, ghost_seq = 1;
    float turning = 0.0f, ghost_turning = 0.0f;
    for (int t = 0; t < (int)(4.0f * rate); t++) {
        turn_platform(w, p, t, rate, &turning, &seq);
        turn_platform(ghost, q, t, rate, &ghost_turning, &ghost_seq);
        world_step(w), world_step(ghost);
        CHECK_MSG(angle_of(w, b) == 0.0f && wt_depth(w, b, p) <= 0.01f && grounded_on(w, b, p),
                  "box on a turning platform at %g Hz, tick %d: angle %g, depth %g, grounded %d",
                  (double)rate, t, (double)angle_of(w, b), (double)wt_depth(w, b, p),
                  cstate(w, b).grounded);
        vec2 pp = wt_pos(w, p), gp = wt_pos(ghost, q);
        CHECK_MSG(vec_same(pp, gp) && angle_of(w, p) == angle_of(ghost, q),
                  "box on a turning platform at %g Hz, tick %d: the platform at (%g, %g) angle %g, "
                  "without its rider (%g, %g) angle %g",
                  (double)rate, t, (double)pp.x, (double)pp.y, (double)angle_of(w, p), (double)gp.x,
                  (double)gp.y, (double)angle_of(ghost, q));
    }
    drop_world(w);
    drop_world(ghost);
}

static void test_carried_turning(void) {
    for (int r = 0; r < RATE_COUNT; r++) {
        turning_circle_case(RATES[r]);
        turning_box_case(RATES[r]);
    }
}

/* The deepest a body goes into a static, by the oracle and by geom_overlap. */
static float static_depth(const world *w, world_body_id id, world_body_id st) {
    geom_shape a, b;
    world_body_row ra, rb;
    geom_contact k = {.depth = 0.0f};
    if (!world_body_shape(w, id, &a) || !world_body_shape(w, st, &b) ||
        !world_body_get(w, id, &ra) || !world_body_get(w, st, &rb))
        return INFINITY;
    float g = geom_overlap(&a, ra.position, &b, rb.position, &k) ? k.depth : 0.0f;
    return fmaxf(g, wt_depth(w, id, st));
}

/* Carried into a static (mode 0: a platform moving right at 5 u/s passes under a wall hanging
 * 0.7 above its top, too low for the rider (and above a circle's or a hexagon's widest point, so
 * the wall's corner pushes it down towards its platform); 1: the same at 300 u/s (10 units a tick
 * at 30 Hz) under a wall 0.2 thick; 2: a platform moving up at 3 u/s under a ceiling). The rider is
 * never left inside the static (I2) nor carried through it; past a wall, nor inside the platform
 * beyond I3's tolerance (0.01), and the platform's path is that
 * of the same platform without a rider. (Under a ceiling the contract does not say whether a
 * crushed rider stops its platform: only I2 is checked there.) */
static void carry_into_static_case(int kind, float rate, int mode) {
    static const char *const what[3] = {"wall", "thin wall", "ceiling"};
    world *w = side_world(rate, v2(0, -G), 400.0f, 16);
    world *ghost = side_world(rate, v2(0, -G), 400.0f, 16);
    world_body_id p = wt_spawn(w, WORLD_BODY_MOVING, wt_box(6.0f, 0.25f), v2(0, 0));
    world_body_id q = wt_spawn(ghost, WORLD_BODY_MOVING, wt_box(6.0f, 0.25f), v2(0, 0));
    geom_shape ws = mode == 2 ? wt_box(1.0f, 1.0f) : wt_box(mode ? 0.1f : 2.0f, 5.0f);
    vec2 wp = mode == 2 ? v2(-3.0f, 4.0f) : v2(mode ? 5.1f : 7.0f, 5.95f); /* walls from x = 5 */
    world_body_id wall = wt_spawn(w, WORLD_BODY_STATIC, ws, wp);
    world_body_id c = spawn_char(w, char_shape(kind), v2(-3.0f, 1.0f), NULL);
    CHECK(p && q && wall && c && settle(w, c, 600));
    vec2 pv = mode == 2 ? v2(0, 3) : v2(mode ? 300.0f : 5.0f, 0);
    CHECK(world_set_intent(w, p, pv, 1) == WORLD_OK &&
          world_set_intent(ghost, q, pv, 1) == WORLD_OK);
    for (int t = 0; t < (int)(mode == 1 ? 0.3f * rate : 3.0f * rate); t++) {
        world_step(w), world_step(ghost);
        float d = static_depth(w, c, wall), dp = wt_depth(w, c, p);
        /* held back by the wall's corner, a round rider's widest part may reach under the wall
         * (the corner is above it): not through the wall is its centre short of the wall */
        CHECK_MSG(d <= SKIN && (mode == 2 || (wt_pos(w, c).x <= 5.0f && dp <= 0.01f)),
                  "%s carried into a %s at %g Hz, tick %d: %g deep in it, centre at %g, %g "
                  "deep in the platform",
                  KIND[kind], what[mode], (double)rate, t, (double)d, (double)wt_pos(w, c).x,
                  (double)dp);
        vec2 pp = wt_pos(w, p), gp = wt_pos(ghost, q);
        if (mode != 2)
            CHECK_MSG(vec_same(pp, gp),
                      "%s carried into a %s at %g Hz, tick %d: the platform at (%.9g, %.9g), "
                      "without its rider (%.9g, %.9g)",
                      KIND[kind], what[mode], (double)rate, t, (double)pp.x, (double)pp.y,
                      (double)gp.x, (double)gp.y);
    }
    drop_world(w);
    drop_world(ghost);
}

static void test_carried_into_statics(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int r = 0; r < RATE_COUNT; r++)
            for (int mode = 0; mode < 3; mode++)
                carry_into_static_case(kind, RATES[r], mode);
}

/* ---- Jumps ----------------------------------------------------------------------------------- */

#define JR_MAX 300
typedef struct jump_run {
    vec2 pos[JR_MAX];
    float vertical[JR_MAX];
    bool grounded[JR_MAX];
} jump_run;

/* A scripted run at 60 Hz, gravity 30, a box with options o: scene 0 stands on a floor; 1 walks
 * right at 5 u/s off a ledge at x = 0 (a lower floor 20 down); 2 falls from 6 up onto a floor.
 * press[t] presses jump that many times before step t (after settling, for scenes 0 and 1). */
static void jump_scene(int scene, const world_character_options *o, const int *press,
                       jump_run *out) {
    memset(out, 0, sizeof *out);
    world *w = side_world(60.0f, v2(0, -G), 50.0f, 16);
    spawn_floor(w, -20, scene == 1 ? 0.0f : 20.0f, 0);
    if (scene == 1) spawn_floor(w, -20, 20, -20);
    world_body_id c = spawn_char(w, char_shape(0), v2(-3.0f, scene == 2 ? 6.5f : 1.0f), o);
    if (!c || (scene != 2 && !settle(w, c, 600))) {
        drop_world(w);
        return;
    }
    if (scene == 1) world_set_intent(w, c, v2(5.0f, 0.0f), 1);
    for (int t = 0; t < JR_MAX; t++) {
        for (int k = 0; k < press[t]; k++)
            world_character_jump(w, c);
        world_step(w);
        world_character_state st = cstate(w, c);
        out->pos[t] = wt_pos(w, c), out->vertical[t] = st.vertical, out->grounded[t] = st.grounded;
    }
    drop_world(w);
}

/* The first tick at or after `from` that ends grounded (JR_MAX if none), and whether two runs
 * agree bit for bit up to and including tick `until`. */
static int landing(const jump_run *r, int from) {
    int t = from;
    while (t < JR_MAX && !r->grounded[t])
        t++;
    return t;
}
static int first_difference(const jump_run *a, const jump_run *b) {
    for (int t = 0; t < JR_MAX; t++)
        if (!vec_same(a->pos[t], b->pos[t]) || a->vertical[t] != b->vertical[t] ||
            a->grounded[t] != b->grounded[t])
            return t;
    return JR_MAX;
}
/* Whether a jump was taken from tick `from` to `to`: its velocity along up turned positive. */
static bool jumped(const jump_run *r, int from, int to) {
    for (int t = from; t <= to && t < JR_MAX; t++)
        if (r->vertical[t] > 0.0f) return true;
    return false;
}

static world_character_options jump_options(void) {
    world_character_options o = {0};
    o.jump_speed = 10.0f;
    return o;
}

/* Only from the ground or within coyote time, and presses in the air change nothing: falling,
 * a press every tick until out of the buffer's reach of the landing leaves the run bit for bit
 * as it was; after a jump from the ground the same; presses up to the landing are the same run
 * until the landing, then one jump; a second press just after taking off (within what would be
 * coyote time) does nothing. */
static void test_jump_airborne(void) {
    static int press[JR_MAX];
    static jump_run ref, run;
    world_character_options o = jump_options();
    memset(press, 0, sizeof press);
    jump_scene(2, &o, press, &ref);
    int land = landing(&ref, 0);
    CHECK(land > 20 && land < 100);
    for (int t = 0; t < land - 12; t++)
        press[t] = 1;
    jump_scene(2, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "falling: a press changed tick %d (land %d)",
              first_difference(&ref, &run), land);
    /* from the ground */
    memset(press, 0, sizeof press);
    press[0] = 1;
    jump_scene(0, &o, press, &ref);
    int up = landing(&ref, 1);
    CHECK(jumped(&ref, 0, 0) && !ref.grounded[1] && up > 20 && up < 100);
    CHECK_MSG(landing(&ref, up) == up && !jumped(&ref, up, JR_MAX - 1), "jumped again");
    for (int t = 1; t < up - 12; t++)
        press[t] = 1;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "a press in the air changed tick %d",
              first_difference(&ref, &run));
    for (int t = up - 12; t < up; t++)
        press[t] = 1;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) > up && jumped(&run, up + 1, up + 3),
              "presses up to the landing at %d: first difference %d", up,
              first_difference(&ref, &run));
    memset(press, 0, sizeof press);
    press[0] = 1, press[2] = 1;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "a jump opened coyote time: tick %d",
              first_difference(&ref, &run));
}

/* Coyote time: walking off a ledge, a press the tick after leaving the ground jumps; one 12
 * ticks after (coyote 100 ms = 6 ticks) changes nothing. */
static void test_jump_coyote(void) {
    static int press[JR_MAX];
    static jump_run ref, run;
    world_character_options o = jump_options();
    memset(press, 0, sizeof press);
    jump_scene(1, &o, press, &ref);
    int left = 0;
    while (left < JR_MAX && ref.grounded[left])
        left++;
    CHECK(left > 10 && left < 100 && !jumped(&ref, 0, JR_MAX - 1));
    press[left + 1] = 1;
    jump_scene(1, &o, press, &run);
    CHECK_MSG(jumped(&run, left + 1, left + 1), "no coyote jump (left the ground at tick %d)",
              left);
    memset(press, 0, sizeof press);
    press[left + 12] = 1;
    jump_scene(1, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "a jump 12 ticks after leaving: tick %d",
              first_difference(&ref, &run));
}

/* The buffer: falling onto the floor, a press 2 ticks before the landing is taken right after
 * it; one 20 ticks before is not (buffer 100 ms = 6 ticks); with a 500 ms buffer it is. */
static void test_jump_buffer(void) {
    static int press[JR_MAX];
    static jump_run ref, run;
    world_character_options o = jump_options();
    memset(press, 0, sizeof press);
    jump_scene(2, &o, press, &ref);
    int land = landing(&ref, 0);
    CHECK(land > 20 && land < 100 && !jumped(&ref, 0, JR_MAX - 1));
    press[land - 2] = 1;
    jump_scene(2, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) > land && jumped(&run, land + 1, land + 2),
              "a press 2 ticks before landing (%d): difference at %d", land,
              first_difference(&ref, &run));
    memset(press, 0, sizeof press);
    press[land - 20] = 1;
    jump_scene(2, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "a press 20 ticks early: tick %d",
              first_difference(&ref, &run));
    o.jump_buffer_ms = 500;
    jump_scene(2, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) > land && jumped(&run, land + 1, land + 2),
              "a press 20 ticks early with a 500 ms buffer: difference at %d",
              first_difference(&ref, &run));
}

/* One jump per call (two calls before one step are one jump: the newer replaces the other; a
 * 3 s buffer still open at the landing jumps no second time), and jump_speed 0 never jumps. */
static void test_jump_once(void) {
    static int press[JR_MAX];
    static jump_run ref, run;
    world_character_options o = jump_options();
    memset(press, 0, sizeof press);
    press[0] = 1;
    jump_scene(0, &o, press, &ref);
    int up = landing(&ref, 1);
    CHECK(up < JR_MAX - 60);
    for (int t = up; t < JR_MAX; t++)
        CHECK_MSG(ref.grounded[t] && vec_same(ref.pos[t], ref.pos[up]),
                  "tick %d after landing at %d: moved or airborne", t, up);
    press[0] = 2;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "two calls: tick %d",
              first_difference(&ref, &run));
    /* a press still in its buffer when the jump it made lands is not taken twice */
    o.jump_buffer_ms = 3000;
    press[0] = 1;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX, "a 3 s buffer: tick %d",
              first_difference(&ref, &run));
    o.jump_speed = 0.0f;
    memset(press, 0, sizeof press);
    jump_scene(0, &o, press, &ref);
    press[0] = 1, press[5] = 1;
    jump_scene(0, &o, press, &run);
    CHECK_MSG(first_difference(&ref, &run) == JR_MAX && ref.grounded[JR_MAX - 1],
              "jump_speed 0 jumped at tick %d", first_difference(&ref, &run));
}

/* ---- Zero gravity, determinism, the API ------------------------------------------------------ */

/* With zero world gravity a character moves as the same plain body does, bit for bit, through
 * free flight, into a floor and along it, against the bottom bound; never grounded, and its
 * jump presses change nothing. */
static void test_zero_gravity(void) {
    const vec2 intents[4] = {{4, -6}, {-3, -20}, {6, 0}, {0, -40}};
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        world *a = side_world(60.0f, v2(0, 0), 30.0f, 16), *b = side_world(60, v2(0, 0), 30, 16);
        for (int i = 0; i < 2; i++)
            spawn_floor(i ? b : a, -20, 0, -5);
        world_character_options o = jump_options();
        world_body_id c = spawn_char(a, char_shape(kind), v2(-10, 3), &o);
        world_body_id p = wt_spawn(b, WORLD_BODY_MOVING, char_shape(kind), v2(-10, 3));
        CHECK(c && p);
        for (int t = 0; t < 480; t++) {
            if (t % 120 == 0) {
                world_set_intent(a, c, intents[t / 120], (uint32_t)t + 1u);
                world_set_intent(b, p, intents[t / 120], (uint32_t)t + 1u);
            }
            if (t % 7 == 0) world_character_jump(a, c);
            world_step(a), world_step(b);
            world_character_state st = cstate(a, c);
            CHECK_MSG(vec_same(wt_pos(a, c), wt_pos(b, p)) && !st.grounded && st.ground == 0,
                      "%s tick %d: (%g, %g) against the plain body's (%g, %g), grounded %d",
                      KIND[kind], t, (double)wt_pos(a, c).x, (double)wt_pos(a, c).y,
                      (double)wt_pos(b, p).x, (double)wt_pos(b, p).y, st.grounded);
        }
        CHECK(wt_pos(a, c).y < -29.0f); /* it did reach the bottom bound */
        drop_world(a);
        drop_world(b);
    }
}

/* Gravity along any direction: "up" is minus gravity. A floor turned to face up (a box turned by
 * the angle of up from +y), a character on it: at rest for 2,000 ticks (bit-identical, grounded),
 * then walking across gravity at 6 u/s for 2 s, every tick 99-101% of the walk, grounded on it.
 * Boxes and hexagons only where the floor is axis-aligned (a turned floor under an unturned box
 * is a slope to it). */
static void gravity_dir_case(int kind, double deg) {
    double a = deg * PI / 180.0;
    vec2 up = v2((float)-sin(a), (float)cos(a)), right = v2(up.y, -up.x);
    world *w = side_world(60.0f, v2_scale(up, -G), 50.0f, 16);
    world_body_id floor;
    geom_shape fs = wt_box(20.0f, 1.0f);
    CHECK(world_spawn_turned(w, WORLD_BODY_STATIC, &fs, v2_scale(up, -1.0f), (float)a, 0, &floor,
                             NULL) == WORLD_OK);
    world_body_id c = spawn_char(w, char_shape(kind), v2_scale(up, 1.2f), NULL);
    CHECK(c && settle(w, c, 600) && grounded_on(w, c, floor));
    vec2 p0 = wt_pos(w, c);
    for (int t = 0; t < 2000; t++) {
        world_step(w);
        CHECK_MSG(vec_same(wt_pos(w, c), p0) && grounded_on(w, c, floor),
                  "%s under gravity at %g degrees, tick %d: moved at rest", KIND[kind], deg, t);
    }
    CHECK(world_set_intent(w, c, v2_scale(right, 6.0f), 1) == WORLD_OK);
    for (int t = 0; t < 120; t++) {
        vec2 before = wt_pos(w, c);
        world_step(w);
        vec2 d = v2_sub(wt_pos(w, c), before);
        double along = ((double)d.x * right.x + (double)d.y * right.y) / (6.0 / 60.0);
        CHECK_MSG(along >= 0.99 && along <= 1.01 && grounded_on(w, c, floor),
                  "%s under gravity at %g degrees, tick %d: walked %g of its intent, grounded %d",
                  KIND[kind], deg, t, along, cstate(w, c).grounded);
    }
    drop_world(w);
}

static void test_gravity_directions(void) {
    const double axis[3] = {90.0, 180.0, -90.0}, other[2] = {30.0, -137.0};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int i = 0; i < 3; i++)
            gravity_dir_case(kind, axis[i]);
    for (int i = 0; i < 2; i++)
        gravity_dir_case(1, other[i]);
}

/* A busy scene: tiles, slopes, one-way platforms static and moving, platforms moving across,
 * up and down and turning, 30 characters of every shape walking and jumping at random. */
static void run_busy(uint32_t seed, uint64_t *hashes, int ticks, int *invalid) {
    collide_rng r = {seed};
    world *w = side_world(60.0f, v2(0, -G), 40.0f, 256);
    for (int i = 0; i < 40; i++)
        wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 0.5f), v2((float)i - 19.5f, -20.5f));
    spawn_ramp(w, -30.0f, -20.0f, 10.0f, 30.0);
    spawn_ramp(w, 20.0f, -15.0f, 10.0f, -25.0);
    for (int i = 0; i < 6; i++) {
        world_body_kind k = i % 2 ? WORLD_BODY_MOVING : WORLD_BODY_STATIC;
        world_body_id p = wt_spawn(w, k, wt_box(3.0f, 0.25f), v2(-25.0f + 10.0f * i, -10.0f));
        world_body_set_one_way(w, p, i < 3);
        if (k == WORLD_BODY_MOVING)
            world_set_intent_turning(w, p, v2(i == 1 ? 2.0f : 0.0f, i == 3 ? 1.0f : -1.0f),
                                     i == 5 ? 0.2f : 0.0f, 1);
    }
    world_body_id c[30];
    for (int i = 0; i < 30; i++) {
        world_character_options o = {0};
        o.jump_speed = collide_rng_range(&r, 0.0f, 15.0f);
        o.step_height = collide_rng_range(&r, 0.0f, 0.5f);
        o.snap_distance = collide_rng_range(&r, 0.0f, 0.5f);
        c[i] = spawn_char(w, char_shape(i % 3),
                          v2(collide_rng_range(&r, -35, 35), collide_rng_range(&r, -15, 35)), &o);
    }
    for (int t = 0; t < ticks; t++) {
        for (int i = 0; i < 30; i++) {
            if ((t + i) % 20 == 0)
                world_set_intent(w, c[i], v2(collide_rng_range(&r, -8, 8), 0), (uint32_t)t + 1u);
            if ((t + 3 * i) % 45 == 0) world_character_jump(w, c[i]);
        }
        world_step(w);
        *invalid += world_validate(w) != NULL;
        hashes[t] = world_state_hash(w);
    }
    drop_world(w);
}

/* I3 for characters: a crowd on a floor between two walls, walking into one another (each turns
 * at random, a quarter of them jumping now and then), every shape, at 30-240 Hz: after every tick
 * no two overlap by more than I3's tolerance unless the step reported them jammed, none is inside
 * a static. Characters push one another through the discrete pass as plain movers do; a walk
 * must not take back next tick what that pass gave. */
#define CROWD 24
/* test_world_invariants.c's: mover-mover overlap allowed after a tick */
#define I3_TOLERANCE 0.01f
/* After a tick of a crowd between the floor and walls of statics[3]: no character inside a static
 * or outside the bounds, no pair overlapping past I3's tolerance unreported (what names the
 * tick in a failure). *held stays false when one failed. */
static void crowd_check(const world *w, const world_body_id *c, int n, const world_body_id *statics,
                        const char *what, bool *held) {
    *held = false;
    wt_scan sc = wt_scan_all(w, c, n, statics, 3);
    CHECK_MSG(sc.static_depth <= SKIN && sc.outside == 0, "%s: static depth %g", what,
              (double)sc.static_depth);
    world_body_id ja = 0, jb = 0;
    bool bogus;
    float d = wt_unexcused_mover_depth(w, c, n, I3_TOLERANCE, &ja, &jb, &bogus);
    CHECK_MSG(d == 0.0f, "%s: characters %u and %u overlap by %g", what, ja, jb, (double)d);
    *held = true;
}

static void crowd_case(float rate, uint32_t seed, bool boxes) {
    collide_rng r = {seed};
    world *w = side_world(rate, v2(0, -G), 40.0f, 64);
    world_body_id statics[3] = {spawn_floor(w, -8, 8, 0),
                                wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(-8.5f, 4.0f)),
                                wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(8.5f, 4.0f))};
    world_body_id c[CROWD];
    for (int i = 0; i < CROWD; i++) {
        world_character_options o = {0};
        o.jump_speed = boxes || i % 4 == 0 ? 9.0f : 0.0f;
        o.step_height = 0.3f, o.snap_distance = 0.3f;
        /* boxes: the load tool's platformer players (0.4 x 0.8, every one jumping) */
        c[i] = spawn_char(w, boxes ? wt_box(0.2f, 0.4f) : char_shape(i % 3),
                          v2(-7.0f + 0.6f * (float)i, 1.0f + (float)(i % 2)), &o);
        CHECK(c[i]);
    }
    for (int t = 0; t < (int)(rate * 10.0f); t++) {
        for (int i = 0; i < CROWD; i++) {
            if (collide_rng_range(&r, 0.0f, 1.0f) < 2.0f / rate)
                world_set_intent(w, c[i],
                                 v2(collide_rng_range(&r, -1.0f, 1.0f) < 0 ? -5.0f : 5.0f, 0),
                                 (uint32_t)t + 1u);
            if ((boxes || i % 4 == 0) && collide_rng_range(&r, 0.0f, 1.0f) < 0.5f / rate)
                world_character_jump(w, c[i]);
        }
        world_step(w);
        char what[64];
        snprintf(what, sizeof what, "%g Hz seed %u tick %d", (double)rate, seed, t);
        bool held;
        crowd_check(w, c, CROWD, statics, what, &held);
        if (!held) break;
    }
    drop_world(w);
}

/* A spawn onto occupied space is pushed out by the next tick's discrete resolution (PROTOCOL.md,
 * SpawnBody): characters spawned one a tick onto one spawn point (a game's spawn point taken by
 * many players at once), each then walking off; after every tick no pair overlaps past I3's
 * tolerance unless reported jammed. */
static void spawn_pile_case(int kind) {
    world *w = side_world(60.0f, v2(0, -G), 40.0f, 64);
    world_body_id statics[3] = {spawn_floor(w, -8, 8, 0),
                                wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(-8.5f, 4.0f)),
                                wt_spawn(w, WORLD_BODY_STATIC, wt_box(0.5f, 5.0f), v2(8.5f, 4.0f))};
    world_body_id c[CROWD];
    int n = 0;
    for (int t = 0; t < 240; t++) {
        if (t % 4 == 0 && n < CROWD) {
            world_character_options o = {.step_height = 0.3f, .snap_distance = 0.3f};
            c[n] = spawn_char(w, char_shape((kind + n) % 3), v2(-6.0f, 1.0f), &o);
            CHECK(c[n]);
            world_set_intent(w, c[n], v2(n % 2 ? 3.0f : 5.0f, 0), 1);
            n++;
        }
        world_step(w);
        char what[64];
        snprintf(what, sizeof what, "%s first, tick %d", KIND[kind], t);
        bool held;
        crowd_check(w, c, n, statics, what, &held);
        if (!held) break;
    }
    drop_world(w);
}

static void test_spawn_pile(void) {
    for (int k = 0; k < KIND_COUNT; k++)
        spawn_pile_case(k);
}

static void test_crowd(void) {
    for (int k = 0; k < RATE_COUNT; k++)
        for (uint32_t seed = 1; seed <= 3; seed++) {
            crowd_case(RATES[k], seed, false);
            crowd_case(RATES[k], seed, true);
        }
}

static void test_determinism(void) {
    static uint64_t h1[600], h2[600];
    int invalid = 0;
    for (uint32_t seed = 1; seed <= 3; seed++) {
        run_busy(seed, h1, 600, &invalid);
        run_busy(seed, h2, 600, &invalid);
        for (int t = 0; t < 600; t++)
            CHECK_MSG(h1[t] == h2[t], "seed %u tick %d: hashes differ", seed, t);
        CHECK(invalid == 0);
    }
}

/* The refusals (static, stale id, non-finite options), the defaults filled in, the count, the
 * bytes (a plain world pays nothing until its first character), a replaced option set, the
 * max_slope clamp, and a non-finite gravity refused by world_create. */
static void test_api(void) {
    world *w = side_world(60.0f, v2(0, -G), 50.0f, 16);
    world_stats st0, st1;
    world_get_stats(w, &st0);
    world_body_id s = wt_spawn(w, WORLD_BODY_STATIC, wt_box(1, 1), v2(0, -10));
    world_body_id m = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 0));
    world_character_state cs;
    CHECK(world_character_count(w) == 0 && !world_body_character(w, m, &cs));
    CHECK(world_body_set_character(w, s, NULL) == WORLD_ERR_NOT_MOVING);
    world_character_options o = {0};
    float *fields[5] = {&o.max_slope, &o.step_height, &o.snap_distance, &o.jump_speed,
                        &o.gravity_scale};
    for (int f = 0; f < 5; f++) {
        for (int bad = 0; bad < 2; bad++) {
            memset(&o, 0, sizeof o);
            *fields[f] = bad ? INFINITY : NAN;
            CHECK_MSG(world_body_set_character(w, m, &o) == WORLD_ERR_NOT_FINITE, "field %d", f);
        }
    }
    world_get_stats(w, &st1);
    CHECK(st1.bytes == st0.bytes && world_character_count(w) == 0);
    CHECK(world_character_jump(w, m) == WORLD_OK); /* not a character: ignored */
    CHECK(world_body_set_character(w, m, NULL) == WORLD_OK);
    world_get_stats(w, &st1);
    CHECK(st1.bytes > st0.bytes && world_character_count(w) == 1);
    CHECK(world_body_character(w, m, &cs) && !cs.grounded && cs.ground == 0);
    CHECK(fabsf(cs.options.max_slope - WORLD_CHARACTER_MAX_SLOPE) < 1e-6f &&
          cs.options.gravity_scale == 1.0f && cs.options.step_height == 0.0f &&
          cs.options.snap_distance == 0.0f && cs.options.jump_speed == 0.0f &&
          cs.options.jump_buffer_ms == WORLD_CHARACTER_BUFFER_MS &&
          cs.options.coyote_ms == WORLD_CHARACTER_BUFFER_MS);
    memset(&o, 0, sizeof o);
    o.max_slope = 3.0f, o.jump_speed = 7.0f, o.coyote_ms = 1;
    CHECK(world_body_set_character(w, m, &o) == WORLD_OK && world_character_count(w) == 1);
    CHECK(world_body_character(w, m, &cs) && cs.options.jump_speed == 7.0f &&
          cs.options.coyote_ms == 1 && cs.options.max_slope > 0.0f &&
          cs.options.max_slope <= (float)(89.0 * PI / 180.0));
    /* hostile sizes are bounded: a step or a snap no taller than the character (1 here), the
     * pull at most WORLD_CHARACTER_MAX_GRAVITY_SCALE times the world's */
    memset(&o, 0, sizeof o);
    o.step_height = 1e30f, o.snap_distance = 1e30f, o.gravity_scale = 1e30f;
    CHECK(world_body_set_character(w, m, &o) == WORLD_OK);
    CHECK_MSG(world_body_character(w, m, &cs) && cs.options.step_height == 1.0f &&
                  cs.options.snap_distance == 1.0f &&
                  cs.options.gravity_scale == WORLD_CHARACTER_MAX_GRAVITY_SCALE,
              "kept step %g snap %g scale %g", (double)cs.options.step_height,
              (double)cs.options.snap_distance, (double)cs.options.gravity_scale);
    CHECK(world_despawn(w, m) == WORLD_OK && world_character_count(w) == 0);
    CHECK(world_body_set_character(w, m, NULL) == WORLD_ERR_NOT_FOUND);
    CHECK(world_character_jump(w, m) == WORLD_ERR_NOT_FOUND);
    CHECK(!world_body_character(w, m, &cs));
    world_body_id n = wt_spawn(w, WORLD_BODY_MOVING, wt_box(0.5f, 0.5f), v2(0, 0));
    CHECK(n && !world_body_character(w, n, &cs)); /* the slot's next body is plain */
    CHECK(world_validate(w) == NULL);
    drop_world(w);
    world_config cfg;
    world_config_default(&cfg);
    cfg.gravity = v2(0, NAN);
    world *bad = world_create(&cfg);
    if (bad) world_destroy(bad);
    CHECK(bad == NULL);
}

TEST_MAIN(TEST(test_api), TEST(test_rest), TEST(test_walk_tiles), TEST(test_walk_slopes),
          TEST(test_steps), TEST(test_snap), TEST(test_steep_slopes), TEST(test_one_way_landing),
          TEST(test_one_way_moving), TEST(test_one_way_jump_through),
          TEST(test_one_way_wedged_jump), TEST(test_carried), TEST(test_carried_turning),
          TEST(test_carried_into_statics), TEST(test_jump_airborne), TEST(test_jump_coyote),
          TEST(test_jump_buffer), TEST(test_jump_once), TEST(test_zero_gravity),
          TEST(test_gravity_directions), TEST(test_determinism), TEST(test_crowd),
          TEST(test_spawn_pile))

/* The world file loader: the default arena, and errors that name the file, the place (line and
 * column) and the reason. */
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "world_load.h"
#include "world_test_util.h"

static world *load(const char *json, char *err, size_t err_size, world_spawn_points *sp) {
    return world_load_json(json, "test.json", NULL, sp, err, err_size);
}

static void test_default_arena_loads(void) {
    char err[256];
    static world_spawn_points sp;
    world *w = load(world_default_arena_json, err, sizeof err, &sp);
    CHECK_MSG(w, "%s", err);
    world_stats st;
    world_get_stats(w, &st);
    CHECK_MSG(st.static_bodies >= 200 && st.static_bodies <= 1000, "%zu statics", st.static_bodies);
    CHECK(st.moving_bodies == 0);
    aabb b = world_get_config(w)->bounds;
    CHECK(b.min.x == -500.0f && b.max.y == 500.0f);
    /* all three shape kinds are in it */
    static world_body_id ids[2048];
    size_t n = world_query_aabb(w, b, 1u << WORLD_BODY_STATIC, ids, 2048);
    CHECK(n == st.static_bodies);
    int kinds[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        geom_shape s;
        CHECK(world_body_shape(w, ids[i], &s));
        kinds[s.kind]++;
    }
    CHECK(kinds[GEOM_SHAPE_BOX] > 20 && kinds[GEOM_SHAPE_POLYGON] > 20 &&
          kinds[GEOM_SHAPE_CIRCLE] > 20);
    /* spawn points are inside and free: a player box fits on every one */
    CHECK(sp.count >= 16);
    for (size_t i = 0; i < sp.count; i++) {
        aabb player = aabb_make(v2(sp.points[i].x - 1, sp.points[i].y - 1),
                                v2(sp.points[i].x + 1, sp.points[i].y + 1));
        CHECK_MSG(world_query_aabb(w, player, 0, ids, 4) == 0, "spawn point %zu is occupied", i);
    }
    /* room for thousands of players: 4000 bodies spawn into free space and the world steps */
    world_destroy(w);
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_bodies = 8192;
    w = world_load_json(world_default_arena_json, "arena", &cfg, NULL, err, sizeof err);
    CHECK_MSG(w, "%s", err);
    geom_shape player = wt_box(0.5f, 0.5f);
    int placed = 0;
    for (int gy = 0; gy < 100 && placed < 4000; gy++)
        for (int gx = 0; gx < 100 && placed < 4000; gx++) {
            vec2 p = v2(-495.0f + 10.0f * (float)gx, -495.0f + 10.0f * (float)gy);
            if (world_query_aabb(w,
                                 aabb_make(v2(p.x - 0.6f, p.y - 0.6f), v2(p.x + 0.6f, p.y + 0.6f)),
                                 0, ids, 1))
                continue;
            CHECK(world_spawn(w, WORLD_BODY_MOVING, &player, p, 1, NULL, NULL) == WORLD_OK);
            placed++;
        }
    CHECK_MSG(placed == 4000, "only %d free spots on a 10-unit lattice", placed);
    world_step(w);
    world_destroy(w);
}

static void test_default_arena_is_deterministic(void) {
    char err[256];
    world *a = load(world_default_arena_json, err, sizeof err, NULL);
    world *b = load(world_default_arena_json, err, sizeof err, NULL);
    CHECK(a && b);
    CHECK(world_state_hash(a) == world_state_hash(b));
    world_destroy(a);
    world_destroy(b);
}

/* The default arena is examples/worlds/arena.json, embedded at build time: the file loads through
 * world_load_file into the same world, and that world is the arena as it was when it was generated
 * into C (its state hash, pinned: an edit of the example file changes the default world). */
static void test_example_file_is_the_default_arena(void) {
    char err[256];
    world *embedded = load(world_default_arena_json, err, sizeof err, NULL);
    CHECK_MSG(embedded, "%s", err);
    world *file = world_load_file(COLLIDE_EXAMPLE_ARENA, NULL, NULL, err, sizeof err);
    CHECK_MSG(file, "%s", err);
    CHECK(world_state_hash(file) == world_state_hash(embedded));
    CHECK_MSG(world_state_hash(embedded) == 0xf6feaef6edd84b59ull, "arena hash %016llx",
              (unsigned long long)world_state_hash(embedded));
    world_destroy(embedded);
    world_destroy(file);
}

static void test_small_file_loads(void) {
    const char *json =
        "{ \"bounds\": { \"min\": [-500, -500], \"max\": [500, 500] },\n"
        "  \"statics\": [ { \"position\": [0, -10], \"box\": { \"half_extents\": [50, 1] } },\n"
        "               { \"position\": [20, 5], \"polygon\": { \"vertices\": [[-2, 0], [2, 0], "
        "[0, 3]] } },\n"
        "               { \"position\": [-20, 5], \"circle\": { \"radius\": 2 } } ],\n"
        "  \"spawn_points\": [[0, 0], [10, 0]] }\n";
    char err[256];
    world_spawn_points sp;
    world *w = load(json, err, sizeof err, &sp);
    CHECK_MSG(w, "%s", err);
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.static_bodies == 3);
    CHECK(sp.count == 2 && sp.points[1].x == 10.0f);
    world_body_id id;
    CHECK(world_query_aabb(w, aabb_make(v2(19, 5), v2(21, 6)), 0, &id, 1) == 1);
    geom_shape s;
    CHECK(world_body_shape(w, id, &s) && s.kind == GEOM_SHAPE_POLYGON && s.u.polygon.count == 3);
    world_destroy(w);
}

/* Checks that loading fails and the message starts with "test.json:LINE:COL:" and contains what. */
static bool fails_at(const char *json, int line, int col, const char *what) {
    char err[256];
    world *w = load(json, err, sizeof err, NULL);
    if (w) {
        world_destroy(w);
        fprintf(stderr, "loaded: %s\n", json);
        return false;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "test.json:%d:%d: ", line, col);
    bool ok = strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, what) != NULL;
    if (!ok) fprintf(stderr, "error \"%s\", wanted prefix \"%s\" and \"%s\"\n", err, prefix, what);
    return ok;
}

static void test_errors_name_place_and_reason(void) {
    /* JSON syntax: jansson's line and column */
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0],\n \"max\": [1 1]}}", 2, 12, ""));
    CHECK(fails_at("", 1, 0, ""));
    /* semantic: the place of the offending value */
    const char *nonconvex = "{\"bounds\": {\"min\": [-10, -10], \"max\": [10, 10]},\n"
                            "\"statics\": [\n"
                            "  {\"position\": [0, 0], \"box\": {\"half_extents\": [1, 1]}},\n"
                            "  {\"position\": [5, 5], \"polygon\": {\"vertices\": [[0, 0], [2, 0], "
                            "[0.5, 0.5], [0, 2]]}}\n"
                            "]}";
    CHECK(fails_at(nonconvex, 4, 35, "not convex"));
    const char *outside = "{\"bounds\": {\"min\": [-10, -10], \"max\": [10, 10]},\n"
                          "\"statics\": [\n"
                          "  {\"position\": [9.5, 0], \"circle\": {\"radius\": 1}}\n"
                          "]}";
    CHECK(fails_at(outside, 3, 3, "outside the world bounds"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5], \"box\": {\"half_extents\": [-1, 1]}}]}",
                   2, 42, "invalid box"));
    CHECK(fails_at(
        "{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": [{\"position\": [5, 5], "
        "\"circle\": {\"radius\": 1}, \"box\": {\"half_extents\": [1, 1]}}]}",
        2, 45, "exactly one shape"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5]}]}",
                   2, 14, "needs a shape"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"statcs\": []}", 1, 56,
                   "unknown key \"statcs\""));
    CHECK(
        fails_at("{\"bounds\": {\"min\": [10, 0], \"max\": [0, 10]}}", 1, 12, "below bounds.max"));
    CHECK(fails_at("{\"statics\": []}", 1, 1, "\"bounds\" is required"));
    CHECK(fails_at(
        "{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"spawn_points\": [[1, 1], [11, 1]]}",
        1, 71, "outside the bounds"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, \"a\"], \"max\": [10, 10]}}", 1, 20, "two numbers"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"bounds\": {}}", 1, 53,
                   "duplicate"));
    CHECK(fails_at("[1, 2]", 1, 1, "must be a JSON object"));
}

/* The limits bad input could try to get around: each is refused with its place and reason. */
static void test_limits_refused(void) {
    const char *b = "{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n";
    char json[4096];
    /* a polygon past GEOM_MAX_POLYGON_VERTICES (read into a fixed array: must stop first) */
    int used = snprintf(json, sizeof json,
                        "%s\"statics\": [{\"position\": [5, 5], \"polygon\": {\"vertices\": [", b);
    for (int i = 0; i <= GEOM_MAX_POLYGON_VERTICES; i++)
        used += snprintf(json + used, sizeof json - (size_t)used, "%s[%d, 0]", i ? ", " : "", i);
    snprintf(json + used, sizeof json - (size_t)used, "]}}]}");
    CHECK(fails_at(json, 2, 58, "at most 16 allowed"));
    /* spawn points past WORLD_MAX_SPAWN_POINTS (copied into a fixed array) */
    static char big[16 * (WORLD_MAX_SPAWN_POINTS + 2)];
    used = snprintf(big, sizeof big, "%s\"spawn_points\": [", b);
    for (int i = 0; i <= WORLD_MAX_SPAWN_POINTS; i++)
        used += snprintf(big + used, sizeof big - (size_t)used, "%s[1, 1]", i ? ", " : "");
    snprintf(big + used, sizeof big - (size_t)used, "]}");
    CHECK(fails_at(big, 2, 17, "at most 1024 allowed"));
    /* more statics than max_bodies */
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_bodies = 2;
    char err[256];
    world *w = world_load_json("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"statics\": "
                               "[{\"position\": [2, 2], \"circle\": {\"radius\": 1}}, "
                               "{\"position\": [6, 6], \"circle\": {\"radius\": 1}}]}",
                               "test.json", &cfg, NULL, err, sizeof err);
    CHECK_MSG(!w && strstr(err, "do not fit in max_bodies 2"), "%s", err);
    world_destroy(w);
    /* numbers past the float range, as a coordinate and as a radius */
    snprintf(json, sizeof json,
             "%s\"statics\": [{\"position\": [1e39, 5], \"box\": "
             "{\"half_extents\": [1, 1]}}]}",
             b);
    CHECK(fails_at(json, 2, 26, "out of the float range"));
    snprintf(json, sizeof json,
             "%s\"statics\": [{\"position\": [5, 5], \"circle\": "
             "{\"radius\": 1e39}}]}",
             b);
    CHECK(fails_at(json, 2, 44, "invalid circle"));
    /* wrong types where an array or a number is wanted */
    snprintf(json, sizeof json, "%s\"statics\": {}}", b);
    CHECK(fails_at(json, 2, 12, "must be an array"));
    snprintf(json, sizeof json, "%s\"spawn_points\": 3}", b);
    CHECK(fails_at(json, 2, 17, "must be an array"));
    snprintf(json, sizeof json,
             "%s\"statics\": [{\"position\": [5, 5], \"circle\": "
             "{\"radius\": \"1\"}}]}",
             b);
    CHECK(fails_at(json, 2, 55, "circle.radius must be a number"));
    snprintf(json, sizeof json,
             "%s\"statics\": [{\"position\": [5, 5], \"polygon\": "
             "{\"vertices\": []}}]}",
             b);
    CHECK(fails_at(json, 2, 45, "invalid polygon"));
}

static void test_load_file(void) {
    char path[] = "/tmp/collide_world_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK(f);
    fputs("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n\"statics\": [{\"position\": [5, "
          "5], \"circle\": {\"radius\": 20}}]}",
          f);
    fclose(f);
    char err[512];
    world *w = world_load_file(path, NULL, NULL, err, sizeof err);
    CHECK(!w);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s:2:13: ", path);
    CHECK_MSG(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
    f = fopen(path, "w");
    CHECK(f);
    fputs("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"statics\": [{\"position\": [5, 5], "
          "\"circle\": {\"radius\": 2}}]}",
          f);
    fclose(f);
    w = world_load_file(path, NULL, NULL, err, sizeof err);
    CHECK_MSG(w, "%s", err);
    world_destroy(w);
    /* a NUL byte would cut the text short for the parser: refused */
    f = fopen(path, "wb");
    CHECK(f);
    fwrite("{\"bounds\": {}}\0{}", 1, 18, f);
    fclose(f);
    w = world_load_file(path, NULL, NULL, err, sizeof err);
    CHECK_MSG(!w && strstr(err, "contains a NUL byte"), "%s", err);
    unlink(path);
    w = world_load_file(path, NULL, NULL, err, sizeof err);
    CHECK(!w && strstr(err, "cannot open") && strstr(err, path));
}

/* "statics" may be left out (a world of bounds only), and statics may overlap each other: both
 * are accepted, every static kept where the file puts it. */
static void test_statics_optional_and_may_overlap(void) {
    char err[256];
    world *w = load("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", err, sizeof err, NULL);
    CHECK_MSG(w, "no statics key: %s", err);
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.static_bodies == 0);
    world_destroy(w);
    w = load("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"statics\": [\n"
             "{\"position\": [5, 5], \"box\": {\"half_extents\": [2, 1]}},\n"
             "{\"position\": [6, 5], \"box\": {\"half_extents\": [2, 1]}},\n"
             "{\"position\": [5, 5], \"circle\": {\"radius\": 1}}]}",
             err, sizeof err, NULL);
    CHECK_MSG(w, "overlapping statics: %s", err);
    world_get_stats(w, &st);
    CHECK(st.static_bodies == 3);
    world_body_id ids[4];
    CHECK(world_query_aabb(w, aabb_make(v2(4.9f, 4.9f), v2(5.1f, 5.1f)), 0, ids, 4) == 3);
    world_destroy(w);
}

/* world_load.c refuses a file larger than 64 MiB from its size, before reading it. Exactly 64 MiB
 * of valid JSON (padded with spaces) loads; one byte more is refused with the file and the limit.
 */
static void test_file_size_limit_exact(void) {
    const size_t limit = 64u * 1024u * 1024u;
    const char *doc = "{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}, \"statics\": "
                      "[{\"position\": [5, 5], \"circle\": {\"radius\": 1}}]}";
    char path[] = "/tmp/collide_world_size_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK(f);
    static char spaces[1 << 16];
    memset(spaces, ' ', sizeof spaces);
    size_t written = fwrite(doc, 1, strlen(doc), f);
    while (written < limit) {
        size_t n = limit - written < sizeof spaces ? limit - written : sizeof spaces;
        written += fwrite(spaces, 1, n, f);
    }
    CHECK(fclose(f) == 0 && written == limit);
    char err[512];
    world *w = world_load_file(path, NULL, NULL, err, sizeof err);
    if (!w) unlink(path); /* 64 MiB is not left behind by a failure */
    CHECK_MSG(w, "exactly 64 MiB must load: %s", err);
    world_stats st;
    world_get_stats(w, &st);
    CHECK(st.static_bodies == 1);
    world_destroy(w);
    f = fopen(path, "a");
    CHECK(f);
    fputc(' ', f);
    fclose(f);
    w = world_load_file(path, NULL, NULL, err, sizeof err);
    char want[600];
    snprintf(want, sizeof want, "%s:0:0: larger than 67108864 bytes", path);
    unlink(path);
    CHECK_MSG(!w && strcmp(err, want) == 0, "64 MiB + 1: \"%s\"", err);
}

/* Only a regular file is a world file (issue 12, finding 9). A FIFO used to hang fopen until a
 * writer came, with nothing logged, and a directory was reported as larger than the size limit.
 * Both are refused at once, saying what the path is. alarm() turns a hang into a failure. */
static void test_refuses_what_is_not_a_regular_file(void) {
    char dir[] = "/tmp/collide_world_dir_XXXXXX";
    CHECK(mkdtemp(dir));
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/world.fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    char err[1024];
    alarm(10); /* default SIGALRM action: the test process dies, reported as a failure */
    world *w = world_load_file(fifo, NULL, NULL, err, sizeof err);
    alarm(0);
    char want[1100];
    snprintf(want, sizeof want, "%s:0:0: not a regular file (a FIFO)", fifo);
    CHECK_MSG(!w && strcmp(err, want) == 0, "FIFO: \"%s\"", err);
    unlink(fifo);
    w = world_load_file(dir, NULL, NULL, err, sizeof err);
    snprintf(want, sizeof want, "%s:0:0: is a directory", dir);
    CHECK_MSG(!w && strcmp(err, want) == 0, "directory: \"%s\"", err);
    rmdir(dir);
    w = world_load_file("/dev/null", NULL, NULL, err, sizeof err);
    CHECK_MSG(!w && strcmp(err, "/dev/null:0:0: not a regular file (a device)") == 0,
              "device: \"%s\"", err);
}

/* A static's filter keys (the native form of Tiled's collide:sensor / category / mask): a sensor
 * static blocks no mover, a category outside a mover's mask lets it through, the others block. */
static void test_static_filters(void) {
    char err[256];
    world *w =
        load("{\"bounds\": {\"min\": [0, 0], \"max\": [40, 10]}, \"statics\": [\n"
             " {\"position\": [10, 5], \"box\": {\"half_extents\": [1, 5]}, \"sensor\": true},\n"
             " {\"position\": [20, 5], \"box\": {\"half_extents\": [1, 5]}, \"category\": 4},\n"
             " {\"position\": [30, 5], \"box\": {\"half_extents\": [1, 5]}, \"category\": "
             "2147483648, \"mask\": 1}]}",
             err, sizeof err, NULL);
    CHECK_MSG(w, "%s", err);
    static world_body_id ids[8];
    size_t n = world_query_aabb(w, world_get_config(w)->bounds, 1u << WORLD_BODY_STATIC, ids, 8);
    CHECK(n == 3);
    int sensors = 0, cat4 = 0, bit31 = 0;
    for (size_t i = 0; i < n; i++) {
        world_filter f;
        CHECK(world_body_filter(w, ids[i], &f));
        sensors += f.sensor && f.category == 1u && f.mask == UINT32_MAX;
        cat4 += !f.sensor && f.category == 4u && f.mask == UINT32_MAX;
        bit31 += !f.sensor && f.category == 0x80000000u && f.mask == 1u;
    }
    CHECK_MSG(sensors == 1 && cat4 == 1 && bit31 == 1, "%d %d %d", sensors, cat4, bit31);
    world_destroy(w);
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5], \"circle\": {\"radius\": 1}, \"sensor\": 1}]}",
                   2, 70, "\"sensor\" must be true or false"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5], \"circle\": {\"radius\": 1}, \"mask\": 4294967296}]}",
                   2, 68, "\"mask\" must be an integer from 0 to 4294967295"));
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5], \"circle\": {\"radius\": 1}, \"category\": -1}]}",
                   2, 72, "\"category\" must be an integer"));
}

/* "one_way": true makes a static one-way (the native form of Tiled's collide:one_way): a mover
 * falling onto it lands, one rising from below passes; absent or false, plain; not a bool,
 * refused with its place. */
static void test_static_one_way(void) {
    char err[256];
    world *w = load("{\"bounds\": {\"min\": [0, 0], \"max\": [40, 40]}, \"statics\": [\n"
                    " {\"position\": [10, 20], \"box\": {\"half_extents\": [5, 0.5]}, "
                    "\"one_way\": true},\n"
                    " {\"position\": [30, 20], \"box\": {\"half_extents\": [5, 0.5]}, "
                    "\"one_way\": false}]}",
                    err, sizeof err, NULL);
    CHECK_MSG(w, "%s", err);
    world_body_id ids[4];
    size_t n = world_query_aabb(w, world_get_config(w)->bounds, 1u << WORLD_BODY_STATIC, ids, 4);
    CHECK(n == 2);
    world_body_id ow = 0;
    for (size_t i = 0; i < n; i++)
        if (world_body_one_way(w, ids[i])) ow = ids[i];
    CHECK(ow != 0 && world_body_one_way(w, ids[0]) != world_body_one_way(w, ids[1]));
    geom_shape box;
    CHECK(geom_make_box(v2(0.5f, 0.5f), &box) == GEOM_OK);
    world_body_id down, up;
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &box, v2(10, 25), 1, &down, NULL) == WORLD_OK);
    CHECK(world_spawn(w, WORLD_BODY_MOVING, &box, v2(8, 15), 1, &up, NULL) == WORLD_OK);
    CHECK(world_set_intent(w, down, v2(0, -600), 1) == WORLD_OK);
    CHECK(world_set_intent(w, up, v2(0, 600), 1) == WORLD_OK);
    world_step(w);
    world_body_row r;
    CHECK(world_body_get(w, down, &r) && r.position.y >= 21.0f - 1e-3f); /* landed on top */
    CHECK(world_body_get(w, up, &r) && r.position.y == 25.0f);           /* passed through */
    world_destroy(w);
    CHECK(fails_at("{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"statics\": "
                   "[{\"position\": [5, 5], \"circle\": {\"radius\": 1}, \"one_way\": 1}]}",
                   2, 71, "\"one_way\" must be true or false"));
}

/* "gravity": [x, y] sets world_config.gravity; absent, the world has none even when the base
 * config held some (gravity belongs to the file, as the bounds do); anything but two numbers
 * whose length is at most WORLD_MAX_GRAVITY is refused with its place and the key's name. */
static void test_gravity(void) {
    char err[256];
    world *w = load("{\"bounds\": {\"min\": [0, 0], \"max\": [40, 40]}, \"gravity\": [0.5, -30]}",
                    err, sizeof err, NULL);
    CHECK_MSG(w, "%s", err);
    CHECK(w && world_get_config(w)->gravity.x == 0.5f && world_get_config(w)->gravity.y == -30.0f);
    world_destroy(w);
    /* the bound itself is allowed: a length of exactly 1e6 */
    w = load("{\"bounds\": {\"min\": [0, 0], \"max\": [40, 40]}, \"gravity\": [0, -1e6]}", err,
             sizeof err, NULL);
    CHECK_MSG(w, "%s", err);
    CHECK(w && world_get_config(w)->gravity.y == -1e6f);
    world_destroy(w);
    world_config base;
    world_config_default(&base);
    base.gravity = v2(0, -10);
    w = world_load_json("{\"bounds\": {\"min\": [0, 0], \"max\": [40, 40]}}", "test.json", &base,
                        NULL, err, sizeof err);
    CHECK_MSG(w, "%s", err);
    CHECK(w && world_get_config(w)->gravity.x == 0.0f && world_get_config(w)->gravity.y == 0.0f);
    world_destroy(w);
    const char *b = "{\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]},\n \"gravity\": ";
    static const struct {
        const char *value, *what;
    } bad[] = {
        {"-30", "\"gravity\" must be an array of two numbers"},
        {"[0]", "\"gravity\" must be an array of two numbers"},
        {"[0, -30, 0]", "\"gravity\" must be an array of two numbers"},
        {"[0, \"-30\"]", "\"gravity\" must be an array of two numbers"},
        {"{\"x\": 0, \"y\": -30}", "\"gravity\" must be an array of two numbers"},
        {"[0, -1e39]", "\"gravity\" is out of the float range"},
        {"[0, -1000001]", "\"gravity\" (0, -1000001) is stronger than 1e+06 units/s^2"},
        /* each component within the bound, the length past it */
        {"[800000, -800000]", "is stronger than 1e+06"},
        /* too weak to point anywhere (a denormal's length squared is 0) */
        {"[0, -1e-40]", "is weaker than 0.001 units/s^2 (use 0 for none)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[256];
        snprintf(json, sizeof json, "%s%s}", b, bad[i].value);
        CHECK_MSG(fails_at(json, 2, 13, bad[i].what), "gravity %s", bad[i].value);
    }
}

TEST_MAIN(TEST(test_default_arena_loads), TEST(test_static_filters), TEST(test_static_one_way),
          TEST(test_gravity), TEST(test_default_arena_is_deterministic),
          TEST(test_example_file_is_the_default_arena), TEST(test_small_file_loads),
          TEST(test_errors_name_place_and_reason), TEST(test_limits_refused), TEST(test_load_file),
          TEST(test_statics_optional_and_may_overlap), TEST(test_file_size_limit_exact),
          TEST(test_refuses_what_is_not_a_regular_file))

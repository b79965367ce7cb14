/* journal_fixture: a journal made by the real journal code, and the native replay's bodies, for
 * the tests of the journal's WebAssembly replay (client/js/test/journal_player.test.ts, the
 * viewer's journal mode in viewer_journal.test.ts).
 *
 *   journal_fixture write FILE        drives a world through the journaled calls (statics of every
 *                                     shape, one-way, turned; movers boxes, circles and polygons,
 *                                     turning, spawned and despawned along the way; mover
 *                                     collisions switched off and on; a run of quiet ticks),
 *                                     30 ticks before the journal starts and 600 after, a state
 *                                     hash every 60 ticks, and writes the journal to FILE; prints
 *                                     {"startTick", "lastTick", "bytes", "hashes": [{"tick",
 *                                     "offset"}]} (offset: the byte where a hash record's tag is).
 *   journal_fixture bodies FILE T...  replays FILE natively (server/journal) to each tick T and
 *                                     prints a line per T: {"tick", "result", "hash", "bodies":
 *                                     [...]}, every live body in ascending id order with its
 *                                     floats as their bits (u32), and its shape.
 *   journal_fixture replay FILE       replays FILE to its end: {"result", "tick", "startTick",
 *                                     "lastTick", "hashesChecked", "truncated", "error"}, or
 *                                     {"open": reason} when refused.
 *
 * FILE may be any journal (the daemon's --record-dir writes them too). Exit 0 unless the file
 * cannot be read or written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

#define HASH_EVERY 60
#define WARM_TICKS 30
#define RUN_TICKS 600

static uint32_t rng_state = 12345u;
static float rnd(float lo, float hi) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(rng_state >> 8) / 16777216.0f;
}

static geom_shape box(float hx, float hy) {
    geom_shape s;
    if (geom_make_box(v2(hx, hy), &s)) abort();
    return s;
}
static geom_shape circle(float r) {
    geom_shape s;
    if (geom_make_circle(r, &s)) abort();
    return s;
}
static geom_shape polygon(const float *xy, int n) {
    vec2 v[GEOM_MAX_POLYGON_VERTICES];
    for (int i = 0; i < n; i++)
        v[i] = v2(xy[2 * i], xy[2 * i + 1]);
    geom_shape s;
    if (geom_make_polygon(v, n, &s)) abort();
    return s;
}
static const float hexagon[] = {1.0f,  0.0f, 0.5f,  0.866f,  -0.5f, 0.866f,
                                -1.0f, 0.0f, -0.5f, -0.866f, 0.5f,  -0.866f};
static const float wedge[] = {-1.2f, -0.6f, 1.2f, -0.6f, 0.3f, 0.9f};
static const float pentagon[] = {0.0f,   2.0f,  -1.9f,  0.62f, -1.18f,
                                 -1.62f, 1.18f, -1.62f, 1.9f,  0.62f};

#define MAX_MOVERS 32
static world_body_id movers[MAX_MOVERS];
static uint32_t seqs[MAX_MOVERS];
static int mover_count;

/* The k-th mover's shape: boxes, circles and polygons in turn. */
static geom_shape mover_shape(int k) {
    switch (k % 4) {
    case 0:
        return box(0.8f, 0.5f);
    case 1:
        return circle(0.7f);
    case 2:
        return polygon(hexagon, 6);
    default:
        return polygon(wedge, 3);
    }
}

static void spawn_mover(journal *j, world *w, int k) {
    geom_shape s = mover_shape(k);
    world_body_id id;
    float angle = k % 3 == 0 ? rnd(-3.0f, 3.0f) : 0.0f;
    world_status st = journal_spawn(j, w, WORLD_BODY_MOVING, &s, v2(rnd(-30, 30), rnd(-18, 18)),
                                    angle, 1u + (uint32_t)k % 3, &id, NULL);
    if (st != WORLD_OK || mover_count == MAX_MOVERS) return;
    if (k == 5) { /* a sensor among them */
        world_filter f = {2u, 0xffffffffu, true};
        journal_set_filter(j, w, id, &f);
    }
    movers[mover_count] = id;
    seqs[mover_count++] = 0;
}

/* A new intent for every mover: a velocity, and for every other one a turning speed. */
static void steer(journal *j, world *w) {
    for (int i = 0; i < mover_count; i++) {
        if (!movers[i]) continue;
        float spin = i % 2 ? rnd(-3.0f, 3.0f) : 0.0f;
        journal_intent(j, w, 0, movers[i], v2(rnd(-9, 9), rnd(-9, 9)), spin, ++seqs[i], false);
    }
}

static int write_fixture(const char *path) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-40.0f, -25.0f), v2(40.0f, 25.0f));
    world *w = world_create(&cfg);
    if (!w) return 1;
    /* the level: walls inside the bounds, a turned box, a pentagon, a round pillar, a one-way
     * ledge; then six movers, 30 ticks on before the journal starts */
    struct {
        geom_shape s;
        vec2 at;
        float angle;
    } statics[] = {
        {box(38.0f, 0.5f), {0.0f, -23.5f}, 0.0f}, {box(38.0f, 0.5f), {0.0f, 23.5f}, 0.0f},
        {box(0.5f, 22.0f), {-38.5f, 0.0f}, 0.0f}, {box(0.5f, 22.0f), {38.5f, 0.0f}, 0.0f},
        {box(4.0f, 1.0f), {-12.0f, 6.0f}, 0.5f},  {polygon(pentagon, 5), {14.0f, -8.0f}, 0.0f},
        {circle(2.5f), {4.0f, 10.0f}, 0.0f},      {box(6.0f, 0.3f), {20.0f, 12.0f}, 0.0f},
    };
    world_body_id ledge = 0;
    for (size_t i = 0; i < sizeof statics / sizeof statics[0]; i++)
        if (world_spawn_turned(w, WORLD_BODY_STATIC, &statics[i].s, statics[i].at, statics[i].angle,
                               0, &ledge, NULL) != WORLD_OK)
            return 1;
    world_body_set_one_way(w, ledge, true);
    for (int k = 0; k < 6; k++)
        spawn_mover(NULL, w, k);
    steer(NULL, w);
    for (int t = 0; t < WARM_TICKS; t++)
        world_step(w);

    journal_meta meta = {.hash_every = HASH_EVERY,
                         .room = "fixture",
                         .world_name = "journal_fixture",
                         .daemon_version = "journal_fixture"};
    journal *j = journal_start(w, &meta, (size_t)1 << 28);
    if (!j) return 1;
    uint64_t hash_tick[RUN_TICKS / HASH_EVERY + 2];
    size_t hash_at[RUN_TICKS / HASH_EVERY + 2];
    int hashes = 0;
    uint8_t *file = NULL;
    size_t len = 0;
    int spawned = 6;
    for (int t = 1; t <= RUN_TICKS; t++) {
        bool quiet = t >= 280 && t < 360; /* a run of steps without inputs */
        if (t % 40 == 1 && !quiet) steer(j, w);
        if (t == 50 || t == 120 || t == 200 || t == 400 || t == 470) {
            spawn_mover(j, w, spawned++);
            int i = mover_count - 1;
            journal_intent(j, w, 0, movers[i], v2(rnd(-9, 9), rnd(-9, 9)), rnd(-2, 2), ++seqs[i],
                           false);
        }
        if (t == 150) {
            journal_despawn(j, w, movers[0]);
            movers[0] = 0;
        }
        if (t == 250) {
            geom_shape s = box(2.0f, 2.0f);
            world_body_id id;
            journal_spawn(j, w, WORLD_BODY_STATIC, &s, v2(-25.0f, -12.0f), 0.25f, 0, &id, NULL);
        }
        if (t == 300) journal_set_mover_collisions(j, w, false);
        if (t == 360) journal_set_mover_collisions(j, w, true);
        journal_step(j, w);
        if (world_tick(w) % HASH_EVERY == 0) {
            hash_tick[hashes] = world_tick(w);
            hash_at[hashes++] = len + journal_pending(j) - 9; /* the hash is the last record */
        }
        if (t % 97 == 0) { /* taken now and then, as the daemon does */
            journal_buf b = journal_take(j);
            file = realloc(file, len + b.len);
            memcpy(file + len, b.data, b.len);
            len += b.len;
            journal_recycle(j, b);
        }
    }
    journal_finish(j);
    journal_buf b = journal_take(j);
    file = realloc(file, len + b.len);
    memcpy(file + len, b.data, b.len);
    len += b.len;
    journal_recycle(j, b);
    journal_stats stats;
    journal_get_stats(j, &stats);
    journal_free(j);

    FILE *f = fopen(path, "wb");
    if (!f || fwrite(file, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    printf("{\"startTick\": %" PRIu64 ", \"lastTick\": %" PRIu64 ", \"bytes\": %zu, \"hashes\": [",
           stats.start_tick, world_tick(w), len);
    for (int i = 0; i < hashes; i++)
        printf("%s{\"tick\": %" PRIu64 ", \"offset\": %zu}", i ? ", " : "", hash_tick[i],
               hash_at[i]);
    printf("]}\n");
    free(file);
    world_destroy(w);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            data = realloc(data, cap);
        }
        size_t n = fread(data + *len, 1, cap - *len, f);
        if (n == 0) break;
        *len += n;
    }
    fclose(f);
    return data;
}

static uint32_t bits(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        if ((unsigned char)*s >= 0x20) putchar(*s);
    }
    putchar('"');
}

/* Every live body: the world has no iterator; every body overlaps the bounds. */
static void print_bodies(const world *w) {
    aabb b = world_get_config(w)->bounds;
    aabb all = aabb_make(v2(b.min.x - 1.0f, b.min.y - 1.0f), v2(b.max.x + 1.0f, b.max.y + 1.0f));
    size_t n = world_query_aabb(w, all, 0, NULL, 0);
    world_body_id *ids = malloc((n ? n : 1) * sizeof *ids);
    world_query_aabb(w, all, 0, ids, n);
    printf("[");
    for (size_t i = 0; i < n; i++) {
        world_body_row r;
        geom_shape s;
        float angle;
        if (!world_body_get(w, ids[i], &r) || !world_body_local_shape(w, ids[i], &s, &angle))
            continue;
        printf("%s{\"id\": %" PRIu32 ", \"kind\": %u, \"owner\": %" PRIu32
               ", \"lastInputSeq\": %" PRIu32 ", \"x\": %" PRIu32 ", \"y\": %" PRIu32
               ", \"vx\": %" PRIu32 ", \"vy\": %" PRIu32 ", \"angle\": %" PRIu32
               ", \"angularVelocity\": %" PRIu32 ", \"shape\": {\"kind\": %d",
               i ? ", " : "", ids[i], r.kind, r.owner, r.last_input_seq, bits(r.position.x),
               bits(r.position.y), bits(r.velocity.x), bits(r.velocity.y), bits(r.angle),
               bits(r.angular_velocity), (int)s.kind);
        if (s.kind == GEOM_SHAPE_BOX)
            printf(", \"a\": %" PRIu32 ", \"b\": %" PRIu32, bits(s.u.half_extents.x),
                   bits(s.u.half_extents.y));
        else if (s.kind == GEOM_SHAPE_CIRCLE)
            printf(", \"a\": %" PRIu32, bits(s.u.radius));
        else {
            printf(", \"vertices\": [");
            for (int k = 0; k < s.u.polygon.count; k++)
                printf("%s%" PRIu32 ", %" PRIu32, k ? ", " : "", bits(s.u.polygon.vertices[k].x),
                       bits(s.u.polygon.vertices[k].y));
            printf("]");
        }
        printf("}}");
    }
    printf("]");
    free(ids);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "write") == 0) return write_fixture(argv[2]);
    if (argc < 3 || (strcmp(argv[1], "bodies") != 0 && strcmp(argv[1], "replay") != 0)) {
        fprintf(stderr, "usage: journal_fixture write FILE | bodies FILE TICK... | replay FILE\n");
        return 2;
    }
    size_t len;
    uint8_t *data = read_file(argv[2], &len);
    if (!data) {
        perror(argv[2]);
        return 1;
    }
    char err[256];
    journal_replay *r = journal_replay_open(data, len, err, sizeof err);
    if (!r) {
        printf("{\"open\": ");
        print_json_string(err);
        printf("}\n");
        free(data);
        return 0;
    }
    if (strcmp(argv[1], "replay") == 0) {
        journal_result res = journal_replay_to(r, UINT64_MAX);
        const char *cut = journal_replay_truncated(r);
        journal_replay_stats st;
        journal_replay_get_stats(r, &st);
        printf("{\"result\": %d, \"tick\": %" PRIu64 ", \"startTick\": %" PRIu64
               ", \"lastTick\": %" PRIu64 ", \"hashesChecked\": %" PRIu64 ", \"truncated\": ",
               (int)res, world_tick(journal_replay_world(r)), journal_replay_header(r)->start_tick,
               journal_replay_last_tick(r), st.hashes_checked);
        print_json_string(cut ? cut : "");
        printf(", \"error\": ");
        print_json_string(journal_replay_error(r));
        printf("}\n");
    } else {
        for (int i = 3; i < argc; i++) {
            uint64_t tick = strtoull(argv[i], NULL, 10);
            if (tick < world_tick(journal_replay_world(r))) { /* back: from the start again */
                journal_replay_free(r);
                r = journal_replay_open(data, len, err, sizeof err);
            }
            journal_result res = journal_replay_to(r, tick);
            const world *w = journal_replay_world(r);
            printf("{\"tick\": %" PRIu64 ", \"result\": %d, \"hash\": \"%016" PRIx64
                   "\", \"bodies\": ",
                   world_tick(w), (int)res, world_state_hash(w));
            print_bodies(w);
            printf("}\n");
        }
    }
    journal_replay_free(r);
    free(data);
    return 0;
}

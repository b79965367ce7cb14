/* wasm_world_oracle: the native side of js_wasm_world (docs/wasm.md). The test runs the same
 * worlds in the WebAssembly module and compares state hashes tick by tick against this program's.
 *
 *   wasm_world_oracle s1 SCENE TICKS EVERY
 *     Scene S1 of PERFORMANCE.md (S1a-slow, S1a-fast, S1b-slow, S1r or S1c) exactly as bench_world
 *     runs it (bench/world/s1_world.h, s1c.h): 10 warm-up ticks and TICKS more, printing
 *     "hash TICK HEX" after every EVERY-th tick and after the last. The test builds the scene
 *     itself in JavaScript from the same specification (client/js/test/s1_scene.ts).
 *   wasm_world_oracle random FIRST_SEED COUNT STEPS
 *     COUNT random worlds, seeds FIRST_SEED.., each run for STEPS ticks through the module's own C
 *     API (server/wasm/world_wasm.h, natively), written as a journal the test replays: every call
 *     with its arguments (floats as their 8 hex digits of bits, so nothing is lost in text) and
 *     what it answered, then "hash TICK HEX" after each step. Six families by seed % 6 cover every
 *     shape pair: boxes; circles and boxes; polygons, boxes and circles (turned statics, filters,
 *     sensors); turning bodies of every shape (20 Hz worlds turn more than a radian a tick);
 *     one-way bodies; characters under gravity on ramps and one-way platforms, jumping. */
#include <string.h>

#include "s1c.h"
#include "world_wasm.h"

/* ---- S1 ----------------------------------------------------------------------------------- */

static void put_hash(uint64_t tick, uint64_t hash) {
    printf("hash %llu %016llx\n", (unsigned long long)tick, (unsigned long long)hash);
}

static int run_s1(const char *scene, int ticks, int every) {
    static s1_layout layout;
    s1_rng rng;
    if (s1_make_layout(&layout, &rng) != 0 || every < 1) return 1;
    if (strcmp(scene, "S1c") == 0) {
        static s1c_run c;
        s1c_run_start(&c, &layout, ticks);
        while (s1c_run_ticks(&c, every) > 0)
            put_hash(world_tick(c.w), world_state_hash(c.w));
        s1c_run_finish(&c);
        return 0;
    }
    struct {
        const char *name;
        float speed;
        int collide;
        double spin;
    } scenes[] = {{"S1a-slow", 5.0f, 0, 0.0},
                  {"S1a-fast", 600.0f, 0, 0.0},
                  {"S1b-slow", 5.0f, 1, 0.0},
                  {"S1r", 5.0f, 0, 2.0 * S1_PI}};
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        if (strcmp(scene, scenes[i].name) != 0) continue;
        s1_run run;
        s1_run_start(&run, &layout, scenes[i].speed, scenes[i].collide, ticks, false,
                     scenes[i].spin);
        while (s1_run_ticks(&run, every) > 0)
            put_hash(world_tick(run.s->w), world_state_hash(run.s->w));
        world_stats st;
        s1_run_finish(&run, &st);
        return 0;
    }
    fprintf(stderr, "unknown scene %s\n", scene);
    return 2;
}

/* ---- random worlds, as journals ----------------------------------------------------------- */

enum { FAM_BOXES, FAM_CIRCLES, FAM_POLYGONS, FAM_TURNING, FAM_ONE_WAY, FAM_CHARACTERS, FAMILIES };
static const char *const family_names[FAMILIES] = {"boxes",   "circles", "polygons",
                                                   "turning", "one-way", "characters"};
#define MAX_MOVERS 48

typedef struct gen {
    wasm_world *h;
    collide_rng rng;
    int family;
    float w, hgt;                /* the bounds: [0, w] x [0, hgt] */
    float gravity;               /* along -y; 0 for none */
    uint32_t movers[MAX_MOVERS]; /* live movers' ids */
    uint32_t seq[MAX_MOVERS];    /* each one's last input_seq */
    uint32_t owner[MAX_MOVERS];  /* each one's owner */
    int mover_count;             /* entries in movers */
} gen;

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float rnd(gen *g, float lo, float hi) { return collide_rng_range(&g->rng, lo, hi); }
static bool chance(gen *g, float p) { return collide_rng_unit(&g->rng) < p; }
static uint32_t pick(gen *g, uint32_t n) { return collide_rng_next(&g->rng) % n; }

/* A spawn's shape: kind and scalars, a polygon's vertices in the module's buffer. */
typedef struct gen_shape {
    int32_t kind;
    float a, b;
    int32_t n;
} gen_shape;

/* A convex polygon: n points at increasing angles round a circle of radius r, each pushed in or
 * out a little (kept convex: angles at least 2 pi / (2 n) apart, radii within 15%). */
static gen_shape make_polygon(gen *g, float r) {
    gen_shape s = {GEOM_SHAPE_POLYGON, 0.0f, 0.0f, (int32_t)(3 + pick(g, 6))};
    float *v = wasm_world_vertices(g->h);
    float phase = rnd(g, 0.0f, 6.2831853f), step = 6.2831853f / (float)s.n;
    for (int32_t i = 0; i < s.n; i++) {
        float a = phase + step * ((float)i + rnd(g, -0.25f, 0.25f));
        float ri = r * rnd(g, 0.92f, 1.08f);
        vec2 q = geom_cos_sin(a);
        v[2 * i] = ri * q.x, v[2 * i + 1] = ri * q.y;
    }
    return s;
}

static gen_shape make_shape(gen *g, float lo, float hi) {
    int kinds = g->family == FAM_BOXES ? 1 : g->family == FAM_CIRCLES ? 2 : 3;
    switch (pick(g, (uint32_t)kinds)) {
    case 1: {
        gen_shape s = {GEOM_SHAPE_CIRCLE, rnd(g, lo, hi), 0.0f, 0};
        return s;
    }
    case 2:
        return make_polygon(g, rnd(g, lo, hi) * 1.2f);
    default: {
        gen_shape s = {GEOM_SHAPE_BOX, rnd(g, lo, hi), rnd(g, lo, hi), 0};
        return s;
    }
    }
}

/* One spawn, journaled with its answer: "spawn kind shape a b n v... x y angle owner = st id". */
static uint32_t spawn_one(gen *g, int32_t kind, gen_shape s, float x, float y, float angle,
                          uint32_t owner) {
    const float *v = wasm_world_vertices(g->h);
    printf("spawn %d %d %08x %08x %d", kind, s.kind, fbits(s.a), fbits(s.b), s.n);
    for (int32_t i = 0; i < 2 * s.n; i++)
        printf(" %08x", fbits(v[i]));
    int32_t st = wasm_world_spawn(g->h, kind, s.kind, s.a, s.b, s.n, x, y, angle, owner);
    uint32_t id = st == WORLD_OK ? wasm_world_spawned(g->h) : 0u;
    printf(" %08x %08x %08x %u = %d %u\n", fbits(x), fbits(y), fbits(angle), owner, st, id);
    return id;
}

/* The spawn options of a new body, each journaled: filter, one_way, character. */
static void spawn_options(gen *g, uint32_t id, bool moving) {
    if ((g->family == FAM_POLYGONS || g->family == FAM_ONE_WAY) && chance(g, 0.2f)) {
        uint32_t cat = 1u << pick(g, 3),
                 mask = chance(g, 0.5f) ? 0xffffffffu : 1u | 1u << pick(g, 3);
        int32_t sensor = chance(g, 0.15f);
        printf("filter %u %u %u %d = %d\n", id, cat, mask, sensor,
               wasm_world_set_filter(g->h, id, cat, mask, sensor));
    }
    float p_one_way = g->family == FAM_ONE_WAY ? 0.4f : g->family == FAM_CHARACTERS ? 0.25f : 0.0f;
    if (chance(g, moving ? p_one_way * 0.4f : p_one_way))
        printf("oneway %u = %d\n", id, wasm_world_set_one_way(g->h, id, 1));
    if (moving && g->family == FAM_CHARACTERS && chance(g, 0.7f)) {
        /* max_slope 0 is the default 45 degrees; any other takes geom_cos_sin's cosine */
        float o[5];
        o[0] = chance(g, 0.5f) ? 0.0f : rnd(g, 0.35f, 1.1f);
        o[1] = rnd(g, 0.0f, 0.4f);
        o[2] = rnd(g, 0.0f, 0.4f);
        o[3] = rnd(g, 4.0f, 12.0f);
        o[4] = chance(g, 0.7f) ? 0.0f : rnd(g, 0.5f, 2.0f);
        uint32_t buffer = pick(g, 3) * 80u, coyote = pick(g, 3) * 80u;
        int32_t st =
            wasm_world_set_character(g->h, id, o[0], o[1], o[2], o[3], o[4], buffer, coyote);
        printf("character %u %08x %08x %08x %08x %08x %u %u = %d\n", id, fbits(o[0]), fbits(o[1]),
               fbits(o[2]), fbits(o[3]), fbits(o[4]), buffer, coyote, st);
    }
}

/* An angle for a spawn: 0 or any; statics of the character family lean as ramps. */
static float spawn_angle(gen *g, bool moving) {
    if (g->family == FAM_BOXES || g->family == FAM_CIRCLES) return 0.0f;
    if (g->family == FAM_CHARACTERS && !moving) return chance(g, 0.5f) ? 0.0f : rnd(g, -0.9f, 0.9f);
    if (moving && g->family != FAM_TURNING) return 0.0f;
    return chance(g, 0.4f) ? 0.0f : rnd(g, -3.14159f, 3.14159f);
}

static void spawn_static(gen *g) {
    gen_shape s = make_shape(g, 0.3f, 1.6f);
    float x = rnd(g, 3.0f, g->w - 3.0f), y = rnd(g, 3.0f, g->hgt - 3.0f);
    uint32_t id = spawn_one(g, WORLD_BODY_STATIC, s, x, y, spawn_angle(g, false), 0u);
    if (id) spawn_options(g, id, false);
}

static void spawn_mover(gen *g) {
    if (g->mover_count == MAX_MOVERS) return;
    gen_shape s = make_shape(g, 0.25f, 0.8f);
    float x = rnd(g, 1.0f, g->w - 1.0f), y = rnd(g, 1.0f, g->hgt - 1.0f);
    uint32_t owner = 1u + pick(g, 4);
    uint32_t id = spawn_one(g, WORLD_BODY_MOVING, s, x, y, spawn_angle(g, true), owner);
    if (!id) return;
    spawn_options(g, id, true);
    g->movers[g->mover_count] = id;
    g->seq[g->mover_count] = 0;
    g->owner[g->mover_count++] = owner;
}

/* The world line: bounds, tick rate, gravity, slide iterations, capacity, mover collisions, max
 * angular speed (a turning family may turn faster than the default 8 pi). */
static void make_world(gen *g) {
    g->w = rnd(g, 24.0f, 64.0f), g->hgt = rnd(g, 24.0f, 64.0f);
    static const float rates[4] = {60.0f, 30.0f, 120.0f, 20.0f};
    float rate = rates[pick(g, g->family == FAM_TURNING ? 4 : 3)];
    g->gravity = g->family == FAM_CHARACTERS ? rnd(g, 8.0f, 40.0f) : 0.0f;
    float gx = g->family == FAM_CHARACTERS && chance(g, 0.2f) ? rnd(g, -4.0f, 4.0f) : 0.0f;
    int32_t slide = (int32_t)(2 + pick(g, 5));
    int32_t collide = g->family == FAM_CHARACTERS ? chance(g, 0.5f) : chance(g, 0.7f);
    float spin_max = g->family == FAM_TURNING ? 40.0f : 0.0f;
    printf("world %08x %08x %08x %08x %08x %08x %08x %d %u %d %08x\n", fbits(0.0f), fbits(0.0f),
           fbits(g->w), fbits(g->hgt), fbits(rate), fbits(gx), fbits(-g->gravity), slide, 256u,
           collide, fbits(spin_max));
    g->h = wasm_world_create(0.0f, 0.0f, g->w, g->hgt, rate, gx, -g->gravity, slide, 256u, 0u, 0.0f,
                             0.0f, spin_max, 0, 0.0f);
    if (!g->h) exit(3);
    wasm_world_set_mover_collisions(g->h, collide);
}

/* This tick's intents: each mover with probability 1/4, a new velocity (now and then a fast one,
 * to sweep), a turning speed in the turning family, now and then a stale input_seq, jumps. */
static void make_intents(gen *g) {
    for (int i = 0; i < g->mover_count; i++) {
        if (!chance(g, 0.25f)) continue;
        float speed = chance(g, 0.08f) ? rnd(g, 30.0f, 150.0f) : rnd(g, 0.0f, 8.0f);
        vec2 d = geom_cos_sin(rnd(g, -3.14159f, 3.14159f));
        float spin = g->family == FAM_TURNING && chance(g, 0.7f) ? rnd(g, -30.0f, 30.0f) : 0.0f;
        uint32_t seq = chance(g, 0.05f) ? g->seq[i] : ++g->seq[i];
        int32_t jump = g->family == FAM_CHARACTERS && chance(g, 0.3f);
        uint32_t owner = chance(g, 0.5f) ? 0u : g->owner[i];
        float vx = speed * d.x, vy = speed * d.y;
        int32_t st = wasm_world_intent(g->h, owner, g->movers[i], vx, vy, spin, seq, jump);
        printf("intent %u %u %08x %08x %08x %u %d = %d\n", owner, g->movers[i], fbits(vx),
               fbits(vy), fbits(spin), seq, jump, st);
    }
}

/* Now and then a mover leaves and another comes: ids of reused slots get a new generation. */
static void churn(gen *g) {
    if (g->mover_count == 0 || !chance(g, 0.03f)) return;
    int i = (int)pick(g, (uint32_t)g->mover_count);
    printf("despawn %u = %d\n", g->movers[i], wasm_world_despawn(g->h, g->movers[i]));
    g->mover_count--;
    g->movers[i] = g->movers[g->mover_count];
    g->seq[i] = g->seq[g->mover_count];
    g->owner[i] = g->owner[g->mover_count];
    spawn_mover(g);
}

static void run_random(uint32_t seed, int steps) {
    gen g;
    memset(&g, 0, sizeof g);
    g.rng.state = seed * 2654435761u + 1u;
    g.family = (int)(seed % FAMILIES);
    printf("begin %u %s\n", seed, family_names[g.family]);
    make_world(&g);
    int statics = 10 + (int)pick(&g, 30), movers = 10 + (int)pick(&g, 30);
    for (int i = 0; i < statics; i++)
        spawn_static(&g);
    for (int i = 0; i < movers; i++)
        spawn_mover(&g);
    for (int k = 0; k < steps; k++) {
        make_intents(&g);
        churn(&g);
        printf("step 1\n");
        wasm_world_step(g.h, 1);
        put_hash(wasm_world_tick(g.h), wasm_world_state_hash(g.h));
    }
    printf("end\n");
    wasm_world_free(g.h);
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "s1") == 0)
        return run_s1(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 5 && strcmp(argv[1], "random") == 0) {
        uint32_t first = (uint32_t)strtoul(argv[2], NULL, 10);
        int count = atoi(argv[3]), steps = atoi(argv[4]);
        for (int i = 0; i < count; i++)
            run_random(first + (uint32_t)i, steps);
        return 0;
    }
    fprintf(stderr, "usage: wasm_world_oracle s1 SCENE TICKS EVERY | random FIRST COUNT STEPS\n");
    return 2;
}

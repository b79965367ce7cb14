/* bench_world: scene S1 of PERFORMANCE.md (movers in a 256 x 256 tile map), exactly as specified,
 * through the product's world (server/world). One JSON line per scene.
 *
 * Usage: bench_world [timed_ticks (default 600)] [scene filter substring] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "world.h"

#define S1_MAP 256
#define S1_STATICS 13798
#define S1_MOVERS 10000
#define S1_WARMUP 10

typedef struct s1_rng {
    uint32_t state; /* xorshift32 state */
} s1_rng;
static uint32_t s1_next(s1_rng *r) {
    uint32_t x = r->state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return r->state = x;
}
static double s1_unit(s1_rng *r) { return (double)(s1_next(r) >> 8) / 16777216.0; }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct s1_scene {
    world *w;                             /* the world */
    world_body_id movers[S1_MOVERS];      /* mover ids in creation order */
    uint32_t seq;                         /* input sequence */
    s1_rng rng;                           /* the scene's one generator */
    unsigned char solid[S1_MAP * S1_MAP]; /* map cells */
    int statics;                          /* statics spawned */
} s1_scene;

static world_config s1_config(uint32_t capacity) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP));
    cfg.max_bodies = capacity;
    cfg.cell_size = 1.0f;
    return cfg;
}

/* Builds the map (and, when with_movers, the movers) with the RNG sequence the scene defines. */
static int s1_build(s1_scene *s, uint32_t capacity, int with_movers) {
    world_config cfg = s1_config(capacity);
    s->w = world_create(&cfg);
    if (!s->w) return -1;
    s->rng.state = 12345;
    s->seq = 0;
    s->statics = 0;
    geom_shape tile, mover;
    if (geom_make_box(v2(0.5f, 0.5f), &tile) || geom_make_box(v2(0.4f, 0.4f), &mover)) return -1;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++) {
            int border = x == 0 || y == 0 || x == S1_MAP - 1 || y == S1_MAP - 1;
            int solid = border || s1_unit(&s->rng) < 0.2;
            s->solid[y * S1_MAP + x] = (unsigned char)solid;
            if (!solid) continue;
            if (world_spawn(s->w, WORLD_BODY_STATIC, &tile, v2((float)x + 0.5f, (float)y + 0.5f), 0,
                            NULL, NULL) != WORLD_OK)
                return -1;
            s->statics++;
        }
    if (s->statics != S1_STATICS) {
        fprintf(stderr, "S1: %d statics, expected %d\n", s->statics, S1_STATICS);
        return -1;
    }
    if (!with_movers) return 0;
    for (int i = 0; i < S1_MOVERS; i++) {
        uint32_t cx, cy;
        do {
            cx = s1_next(&s->rng) % S1_MAP;
            cy = s1_next(&s->rng) % S1_MAP;
        } while (s->solid[cy * S1_MAP + cx]);
        if (world_spawn(s->w, WORLD_BODY_MOVING, &mover, v2((float)cx + 0.5f, (float)cy + 0.5f), 1,
                        &s->movers[i], NULL) != WORLD_OK)
            return -1;
    }
    return 0;
}

static void s1_intents(s1_scene *s, float speed) {
    s->seq++;
    for (int i = 0; i < S1_MOVERS; i++) {
        double a = s1_unit(&s->rng) * 2.0 * 3.14159265358979323846;
        vec2 v = v2((float)(speed * cos(a)), (float)(speed * sin(a)));
        world_set_intent(s->w, s->movers[i], v, s->seq);
    }
}

/* Invariant counters of PERFORMANCE.md, by brute force over every mover's neighbourhood. */
static void s1_check(const s1_scene *s, int *overlaps, int *outside) {
    *overlaps = 0;
    *outside = 0;
    world_body_id near[64];
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_info info;
        geom_shape ms, ss;
        world_body_get(s->w, s->movers[i], &info);
        world_body_shape(s->w, s->movers[i], &ms);
        if (!aabb_contains(aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP)), info.bounds)) (*outside)++;
        size_t n = world_query_aabb(s->w, aabb_inflate(info.bounds, 0.02f), 1u << WORLD_BODY_STATIC,
                                    near, 64);
        for (size_t k = 0; k < n && k < 64; k++) {
            world_body_info si;
            world_body_get(s->w, near[k], &si);
            world_body_shape(s->w, near[k], &ss);
            geom_contact c;
            if (geom_overlap(&ms, info.position, &ss, si.position, &c) && c.depth > 0.01f) {
                (*overlaps)++;
                break;
            }
        }
    }
}

static size_t s1_bytes(uint32_t capacity) {
    s1_scene *s = calloc(1, sizeof *s);
    size_t bytes = 0;
    if (s && s1_build(s, capacity, 0) == 0) {
        world_stats st;
        world_get_stats(s->w, &st);
        bytes = st.bytes;
    }
    if (s) world_destroy(s->w);
    free(s);
    return bytes;
}

static int run_scene(const char *name, float speed, int movers_collide, int ticks) {
    s1_scene *s = calloc(1, sizeof *s);
    if (!s || s1_build(s, S1_STATICS + S1_MOVERS, 1) != 0) {
        fprintf(stderr, "%s: setup failed\n", name);
        return 1;
    }
    world_set_mover_collisions(s->w, movers_collide != 0);
    double *times = calloc((size_t)ticks, sizeof *times);
    for (int k = 0; k < S1_WARMUP + ticks; k++) {
        if (k % 60 == 0) s1_intents(s, speed);
        double t0 = now_ms();
        world_step(s->w);
        double t1 = now_ms();
        if (k >= S1_WARMUP) times[k - S1_WARMUP] = t1 - t0;
    }
    int overlaps, outside;
    s1_check(s, &overlaps, &outside);
    qsort(times, (size_t)ticks, sizeof *times, cmp_double);
    world_stats st;
    world_get_stats(s->w, &st);
    size_t statics_only = s1_bytes(S1_STATICS);
    size_t full_static = s1_bytes(S1_STATICS + S1_MOVERS);
    printf("{\"scene\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,\"overlaps\":%d,\"outside\":%d,"
           "\"ticks\":%d,\"statics\":%d,\"movers\":%d,\"bytes_per_static\":%.1f,"
           "\"bytes_per_mover\":%.1f,\"swept_hits\":%llu,\"separations\":%llu,\"jammed\":%llu}\n",
           name, times[ticks / 2], times[0], overlaps, outside, ticks, s->statics, S1_MOVERS,
           (double)statics_only / S1_STATICS,
           (double)(st.bytes - (full_static - statics_only) * 0 - statics_only) / S1_MOVERS,
           (unsigned long long)st.swept_hits, (unsigned long long)st.separations,
           (unsigned long long)st.jammed);
    fflush(stdout);
    free(times);
    world_destroy(s->w);
    free(s);
    return overlaps || outside;
}

int main(int argc, char **argv) {
    int ticks = argc > 1 ? atoi(argv[1]) : 600;
    const char *filter = argc > 2 ? argv[2] : NULL;
    if (ticks < 1) ticks = 1;
    struct {
        const char *name; /* scene */
        float speed;      /* V */
        int collide;      /* S1b */
    } scenes[] = {{"S1a-slow", 5.0f, 0},
                  {"S1a-fast", 600.0f, 0},
                  {"S1b-slow", 5.0f, 1},
                  {"S1b-fast", 600.0f, 1}};
    int bad = 0;
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        if (filter && !strstr(scenes[i].name, filter)) continue;
        bad |= run_scene(scenes[i].name, scenes[i].speed, scenes[i].collide, ticks);
    }
    return bad;
}

/* bench_queries: game queries on S1's map (PERFORMANCE.md "Protocol 1.1 figures"): ns per query
 * for a ray of 10 cells, an overlap of a 2x2 box and a 10-cell shape cast (the movers' 0.8 box),
 * first hit (and, as more figures, the casts with `all`: every hit along the 10 cells), at the
 * present and 30 ticks in the past, with the ratio past / present (target
 * <= 2x). The scene is S1 exactly (13,798 statics, 10,000 movers) run as S1-slow (S1b: movers
 * collide) for 40 ticks with 30 ticks of history kept (the default 500 ms at 60 Hz); the queries
 * start at random points of the map in random directions (fixed seed), the same set for the present
 * and the past.
 *
 * Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
 * Usage: bench_queries [queries per run (default 20000)] [runs (default 9)] [name filter]
 * One JSON line per figure: {"scene","median_ns","min_ns","hits_per_query"}, then the history's
 * memory per mover per tick. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s1_world.h"

#define BENCH_PAST 30
#define BENCH_WARM_TICKS 40

typedef struct qparam {
    vec2 origin, dir; /* dir: unit */
} qparam;

typedef enum qkind { QB_RAY, QB_OVERLAP, QB_CAST, QB_RAY_ALL, QB_CAST_ALL } qkind;

static volatile size_t sink;

/* This thread's CPU time (as bench_geom): time the scheduler gives other processes on a shared
 * machine is not counted. */
static double cpu_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ns per query for one pass over the set, and the hits found */
static double run_pass(world *w, qkind kind, const qparam *qs, int n, uint64_t at, size_t *hits) {
    geom_shape box2, mover;
    geom_make_box(v2(1.0f, 1.0f), &box2);
    geom_make_box(v2(0.4f, 0.4f), &mover);
    world_hit out[64];
    world_query_result r;
    size_t total = 0;
    double t0 = cpu_now_ms();
    for (int i = 0; i < n; i++) {
        vec2 d = v2_scale(qs[i].dir, 10.0f);
        switch (kind) {
        case QB_RAY:
            world_query_ray(w, at, qs[i].origin, d, NULL, false, out, 64, &r);
            break;
        case QB_RAY_ALL:
            world_query_ray(w, at, qs[i].origin, d, NULL, true, out, 64, &r);
            break;
        case QB_CAST_ALL:
            world_query_shape_cast(w, at, &mover, qs[i].origin, d, NULL, true, out, 64, &r);
            break;
        case QB_OVERLAP:
            world_query_overlap(w, at, &box2, qs[i].origin, NULL, out, 64, &r);
            break;
        case QB_CAST:
            world_query_shape_cast(w, at, &mover, qs[i].origin, d, NULL, false, out, 64, &r);
            break;
        }
        total += r.count;
    }
    double ms = cpu_now_ms() - t0;
    sink += total;
    *hits = total;
    return ms * 1e6 / n;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    const char *only = argc > 3 ? argv[3] : NULL; /* run the figures whose name holds this */
    if (n < 1 || runs < 1) return 2;
    s1_rng rng = {12345u};
    static s1_layout layout;
    if (s1_make_layout(&layout, &rng) != 0) return 1;
    static world_body_id movers[S1_MOVERS];
    world *w = s1_world_build(&layout, S1_STATICS + S1_MOVERS + 64, 0, movers);
    if (!w || !world_set_history(w, BENCH_PAST)) return 1; /* the default window: 500 ms at 60 Hz */
    /* S1-slow, movers colliding (S1b): intents re-aimed every 60 ticks as S1 says */
    for (int k = 0; k < BENCH_WARM_TICKS; k++) {
        if (k % 60 == 0)
            for (int i = 0; i < S1_MOVERS; i++) {
                double a = s1_unit(&rng) * 2.0 * S1_PI;
                world_set_intent(w, movers[i], v2((float)(5.0 * cos(a)), (float)(5.0 * sin(a))),
                                 (uint32_t)(k + 1));
            }
        world_step(w);
    }
    qparam *qs = malloc((size_t)n * sizeof *qs);
    if (!qs) return 1;
    for (int i = 0; i < n; i++) {
        double a = s1_unit(&rng) * 2.0 * S1_PI;
        qs[i].origin =
            v2((float)(1.0 + 254.0 * s1_unit(&rng)), (float)(1.0 + 254.0 * s1_unit(&rng)));
        qs[i].dir = v2((float)cos(a), (float)sin(a));
    }
    uint64_t now = world_tick(w), past = now - BENCH_PAST;
    /* the targets' three, then with `all` (every hit along the 10 cells, not the first) */
    static const char *names[5] = {"ray-10-cells", "overlap-2x2", "cast-10-cells",
                                   "ray-10-cells-all", "cast-10-cells-all"};
    double *times = malloc((size_t)runs * sizeof *times);
    if (!times) return 1;
    double median[5][2];
    for (int k = 0; k < 5; k++)
        for (int when = 0; when < 2; when++) {
            median[k][when] = 1.0;
            if (only && !strstr(names[k], only)) continue;
            size_t hits = 0;
            run_pass(w, (qkind)k, qs, n, when ? past : 0, &hits); /* warm the caches */
            for (int r = 0; r < runs; r++)
                times[r] = run_pass(w, (qkind)k, qs, n, when ? past : 0, &hits);
            qsort(times, (size_t)runs, sizeof *times, s1_cmp_double);
            median[k][when] = times[runs / 2];
            printf("{\"scene\":\"S1-%s%s\",\"median_ns\":%.1f,\"min_ns\":%.1f,"
                   "\"hits_per_query\":%.3f}\n",
                   names[k], when ? "-past30" : "", times[runs / 2], times[0], (double)hits / n);
        }
    for (int k = 0; k < 5; k++)
        printf("{\"scene\":\"S1-%s\",\"past30_over_present\":%.2f}\n", names[k],
               median[k][1] / median[k][0]);
    world_stats ws;
    world_get_stats(w, &ws);
    printf("{\"history_ticks\":%u,\"history_bytes\":%zu,\"bytes_per_mover_tick\":%.2f}\n",
           ws.history_ticks, ws.history_bytes,
           ws.history_records ? (double)ws.history_bytes / (double)ws.history_records : 0.0);
    free(times);
    free(qs);
    world_destroy(w);
    return 0;
}

/* bench_query_work: the exchange rate of a query's work (world_query_result.work: cells covered +
 * candidates visited + exact tests) into daemon time, on the daemon's default arena with players
 * (issue 32: a query is charged by the work it did). For queries from a 10-cell ray to an overlap
 * of the whole arena, now and 30 ticks back: ns per query, work per query and ns per unit of work.
 * If ns per unit stays within a small band from the smallest query to the largest, a charge
 * proportional to the work is a charge proportional to the time (--query-work-per-message).
 *
 * Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine the time given
 * to other processes is not counted, though their cache traffic still is.
 * Usage: bench_query_work [players (default 1000)] [queries per run (default 2000)] [runs (9)]
 * One JSON line per figure: {"query","players","median_ns","work","ns_per_work","hits"}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s1_world.h"
#include "world_load.h"

#define QW_PAST 30

typedef struct qw_kind {
    const char *name;
    int kind;     /* 0 ray, 1 overlap, 2 cast */
    float len;    /* ray or cast length; overlap: half extent of the box */
    bool all;     /* casts: every hit */
    bool centred; /* the query at the arena's centre (a whole-arena overlap), not at random */
} qw_kind;

static const qw_kind kinds[] = {
    {"ray-10", 0, 10.0f, false, false},          {"ray-10-all", 0, 10.0f, true, false},
    {"ray-100-all", 0, 100.0f, true, false},     {"ray-1000-all", 0, 1000.0f, true, false},
    {"overlap-2x2", 1, 1.0f, false, false},      {"overlap-40x40", 1, 20.0f, false, false},
    {"overlap-200x200", 1, 100.0f, false, true}, {"overlap-arena", 1, 500.0f, false, true},
    {"cast-10", 2, 10.0f, false, false},         {"cast-1000-all", 2, 1000.0f, true, false},
};

static volatile size_t sink;

static double cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per query for one pass of n queries of kind k; the work and hits summed over them */
static double run_pass(const world *w, const qw_kind *k, const vec2 *orig, const vec2 *dir, int n,
                       uint64_t at, world_hit *out, size_t max, uint64_t *work, size_t *hits) {
    geom_shape mover, box;
    geom_make_box(v2(0.5f, 0.5f), &mover);
    geom_make_box(v2(k->len, k->len), &box);
    world_query_result r;
    *work = 0, *hits = 0;
    double t0 = cpu_now_ns();
    for (int i = 0; i < n; i++) {
        vec2 o = k->centred ? v2(0.0f, 0.0f) : orig[i], d = v2_scale(dir[i], k->len);
        if (k->kind == 0)
            world_query_ray(w, at, o, d, NULL, k->all, out, max, &r);
        else if (k->kind == 1)
            world_query_overlap(w, at, &box, o, NULL, out, max, &r);
        else
            world_query_shape_cast(w, at, &mover, o, d, NULL, k->all, out, max, &r);
        *work += r.work;
        *hits += r.count;
    }
    double ns = cpu_now_ns() - t0;
    sink += *hits;
    return ns / n;
}

static world *make_arena(int players, s1_rng *rng) {
    world_config cfg;
    world_config_default(&cfg);
    char err[256];
    world *w = world_load_json(world_default_arena_json, "arena", &cfg, NULL, err, sizeof err);
    if (!w || !world_set_history(w, QW_PAST)) return NULL;
    geom_shape box;
    geom_make_box(v2(0.5f, 0.5f), &box);
    world_body_id probe[1], id;
    for (int i = 0; i < players;) {
        vec2 p = v2((float)(s1_unit(rng) * 980.0 - 490.0), (float)(s1_unit(rng) * 980.0 - 490.0));
        if (world_query_aabb(w, aabb_make(v2(p.x - 0.6f, p.y - 0.6f), v2(p.x + 0.6f, p.y + 0.6f)),
                             0, probe, 1))
            continue;
        if (world_spawn(w, WORLD_BODY_MOVING, &box, p, (uint32_t)i + 1, &id, NULL) != WORLD_OK)
            return NULL;
        double a = s1_unit(rng) * 2.0 * S1_PI;
        world_set_intent(w, id, v2((float)(5.0 * cos(a)), (float)(5.0 * sin(a))), 1);
        i++;
    }
    for (int k = 0; k < QW_PAST + 10; k++)
        world_step(w);
    return w;
}

int main(int argc, char **argv) {
    int players = argc > 1 ? atoi(argv[1]) : 1000;
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    int runs = argc > 3 ? atoi(argv[3]) : 9;
    if (players < 0 || n < 1 || runs < 1) return 2;
    s1_rng rng = {4242u};
    world *w = make_arena(players, &rng);
    vec2 *orig = malloc((size_t)n * sizeof *orig), *dir = malloc((size_t)n * sizeof *dir);
    double *times = malloc((size_t)runs * sizeof *times);
    size_t max = 256; /* --max-query-results' default */
    world_hit *out = malloc(max * sizeof *out);
    if (!w || !orig || !dir || !times || !out) return 1;
    for (int i = 0; i < n; i++) {
        double a = s1_unit(&rng) * 2.0 * S1_PI;
        orig[i] =
            v2((float)(s1_unit(&rng) * 900.0 - 450.0), (float)(s1_unit(&rng) * 900.0 - 450.0));
        dir[i] = v2((float)cos(a), (float)sin(a));
    }
    uint64_t now = world_tick(w);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int past = 0; past < 2; past++) {
            uint64_t work = 0;
            size_t hits = 0;
            uint64_t at = past ? now - QW_PAST : 0;
            int reps = kinds[k].centred ? (n / 20 > 0 ? n / 20 : 1) : n; /* the big ones: fewer */
            run_pass(w, &kinds[k], orig, dir, reps, at, out, max, &work, &hits); /* warm */
            for (int r = 0; r < runs; r++)
                times[r] = run_pass(w, &kinds[k], orig, dir, reps, at, out, max, &work, &hits);
            qsort(times, (size_t)runs, sizeof *times, s1_cmp_double);
            double per_work = (double)work / reps;
            printf("{\"query\":\"%s%s\",\"players\":%d,\"median_ns\":%.1f,\"work\":%.1f,"
                   "\"ns_per_work\":%.2f,\"hits\":%.2f}\n",
                   kinds[k].name, past ? "-past30" : "", players, times[runs / 2], per_work,
                   per_work > 0 ? times[runs / 2] / per_work : 0.0, (double)hits / reps);
        }
    world_destroy(w);
    free(orig), free(dir), free(times), free(out);
    return 0;
}

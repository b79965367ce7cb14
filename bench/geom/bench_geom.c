/* bench_geom: ns per narrow-phase query (PERFORMANCE.md, "Narrow phase").
 *
 * For each pair kind: PAIRS random pairs from a fixed seed, exactly half of them overlapping
 * (accepted by geom_overlap until each half is full). Queries: overlap with MTV, sweep (A moves
 * towards B with scatter, B moves half the time) and ray cast (per shape kind). Each figure is
 * the median (and min) of RUNS timed runs, each looping over the pairs until about
 * QUERIES_PER_RUN queries. Results feed a volatile sink so the work cannot be optimised away.
 * One JSON line per (pair, query).
 *
 * Usage: bench_geom [runs] [filter]   (runs default 7; filter: only "pair/query" names that
 * contain it, e.g. "polygon-polygon/sweep") */
#include "collide_rng.h"
#include "bench_time.h"
#include "geom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAIRS 512
#define QUERIES_PER_RUN 400000
#define MAX_RUNS 31

typedef struct bench_pair {
    geom_shape a;  /* first shape */
    geom_shape b;  /* second shape */
    vec2 pa, pb;   /* positions */
    vec2 da, db;   /* sweep displacements */
    vec2 origin;   /* ray origin (for the ray cast against b) */
    vec2 ray_disp; /* ray displacement */
} bench_pair;

static bench_pair pairs[PAIRS];

/* The box-box fast path's inputs, packed as a world would keep them (a geom_shape is 264
 * bytes, mostly the polygon arm of the union; these are 48). */
typedef struct box_pair {
    vec2 ha, pa, da; /* half extents, position, displacement of A */
    vec2 hb, pb, db; /* the same for B */
} box_pair;

static box_pair box_pairs[PAIRS];
static volatile float sink_f;
static volatile unsigned sink_u;

static collide_rng rng = {12345};

static geom_shape random_shape(geom_shape_kind kind) {
    geom_shape s;
    for (;;) {
        if (kind == GEOM_SHAPE_BOX) {
            if (geom_make_box(
                    v2(collide_rng_range(&rng, 0.2f, 2), collide_rng_range(&rng, 0.2f, 2)), &s) ==
                GEOM_OK)
                return s;
        } else if (kind == GEOM_SHAPE_CIRCLE) {
            if (geom_make_circle(collide_rng_range(&rng, 0.2f, 2), &s) == GEOM_OK) return s;
        } else {
            /* Octagon-ish: 8 points on a random ellipse, stratified angles. */
            vec2 pts[8];
            float ax = collide_rng_range(&rng, 0.3f, 2), ay = collide_rng_range(&rng, 0.3f, 2),
                  rot = collide_rng_range(&rng, 0, 6.2831853f);
            for (int i = 0; i < 8; i++) {
                float ang = 6.2831853f * ((float)i + collide_rng_range(&rng, 0.1f, 0.9f)) / 8.0f;
                float x = ax * cosf(ang), y = ay * sinf(ang);
                pts[i] = v2(x * cosf(rot) - y * sinf(rot), x * sinf(rot) + y * cosf(rot));
            }
            if (geom_make_polygon(pts, 8, &s) == GEOM_OK) return s;
        }
    }
}

static float bound_radius(const geom_shape *s) {
    if (s->kind == GEOM_SHAPE_CIRCLE) return s->u.radius;
    if (s->kind == GEOM_SHAPE_BOX) return v2_len(s->u.half_extents);
    float r = 0;
    for (int i = 0; i < s->u.polygon.count; i++)
        r = fmaxf(r, v2_len(s->u.polygon.vertices[i]));
    return r;
}

static void make_pairs(geom_shape_kind ka, geom_shape_kind kb) {
    int overlapping = 0, apart = 0, n = 0;
    while (n < PAIRS) {
        bench_pair p;
        p.a = random_shape(ka);
        p.b = random_shape(kb);
        float reach = bound_radius(&p.a) + bound_radius(&p.b);
        p.pa = v2(collide_rng_range(&rng, -50, 50), collide_rng_range(&rng, -50, 50));
        vec2 off =
            v2(collide_rng_range(&rng, -reach, reach), collide_rng_range(&rng, -reach, reach));
        p.pb = v2_add(p.pa, off);
        bool hit = geom_overlap(&p.a, p.pa, &p.b, p.pb, NULL);
        if (hit ? overlapping >= PAIRS / 2 : apart >= PAIRS / 2) continue;
        hit ? overlapping++ : apart++;
        p.da = v2_add(v2_scale(off, collide_rng_range(&rng, 0, 2)),
                      v2(collide_rng_range(&rng, -1, 1), collide_rng_range(&rng, -1, 1)));
        p.db = (collide_rng_next(&rng) & 1)
                   ? v2(collide_rng_range(&rng, -1, 1), collide_rng_range(&rng, -1, 1))
                   : v2(0, 0);
        p.origin = v2_add(p.pb, v2(collide_rng_range(&rng, -3 * reach, 3 * reach),
                                   collide_rng_range(&rng, -3 * reach, 3 * reach)));
        p.ray_disp = v2_add(v2_scale(v2_sub(p.pb, p.origin), collide_rng_range(&rng, 0, 2)),
                            v2(collide_rng_range(&rng, -1, 1), collide_rng_range(&rng, -1, 1)));
        if (ka == GEOM_SHAPE_BOX && kb == GEOM_SHAPE_BOX) {
            box_pair bp = {p.a.u.half_extents, p.pa, p.da, p.b.u.half_extents, p.pb, p.db};
            box_pairs[n] = bp;
        }
        pairs[n++] = p;
    }
}

typedef enum query { Q_MTV, Q_SWEEP, Q_RAY, Q_MTV_FAST, Q_SWEEP_FAST } query;

/* One timed run: ns per query. */
static double run_once(query q) {
    int rounds = QUERIES_PER_RUN / PAIRS;
    float acc = 0;
    unsigned count = 0;
    double t0 = bench_cpu_ns();
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < PAIRS; i++) {
            const bench_pair *p = &pairs[i];
            switch (q) {
            case Q_MTV: {
                geom_contact c = {{0, 0}, 0};
                bool hit = geom_overlap(&p->a, p->pa, &p->b, p->pb, &c);
                acc += hit ? c.depth : 0.0f;
                count += hit;
                break;
            }
            case Q_MTV_FAST: {
                geom_contact c = {{0, 0}, 0};
                const box_pair *bp = &box_pairs[i];
                bool hit = geom_box_box_overlap(bp->ha, bp->pa, bp->hb, bp->pb, &c);
                acc += hit ? c.depth : 0.0f;
                count += hit;
                break;
            }
            case Q_SWEEP: {
                geom_toi t = {0, {0, 0}};
                bool hit = geom_sweep(&p->a, p->pa, p->da, &p->b, p->pb, p->db, &t);
                acc += hit ? t.t : 0.0f;
                count += hit;
                break;
            }
            case Q_SWEEP_FAST: {
                geom_toi t = {0, {0, 0}};
                const box_pair *bp = &box_pairs[i];
                bool hit = geom_box_box_sweep(bp->ha, bp->pa, bp->da, bp->hb, bp->pb, bp->db, &t);
                acc += hit ? t.t : 0.0f;
                count += hit;
                break;
            }
            case Q_RAY: {
                geom_ray_hit h = {0, {0, 0}};
                bool hit = geom_ray_cast(&p->b, p->pb, p->origin, p->ray_disp, &h);
                acc += hit ? h.t : 0.0f;
                count += hit;
                break;
            }
            }
        }
    }
    double t1 = bench_cpu_ns();
    sink_f = acc;
    sink_u = count;
    return (t1 - t0) / ((double)rounds * PAIRS);
}

static const char *filter;

static void bench(const char *pair, const char *query_name, query q, int runs) {
    char name[64];
    snprintf(name, sizeof name, "%s/%s", pair, query_name);
    if (filter && !strstr(name, filter)) return;
    double t[MAX_RUNS];
    run_once(q); /* warm-up */
    for (int i = 0; i < runs; i++)
        t[i] = run_once(q);
    qsort(t, (size_t)runs, sizeof t[0], bench_cmp_double);
    /* Fraction of queries that hit, so a reader can tell what was measured. */
    printf("{\"bench\":\"narrow\",\"pair\":\"%s\",\"query\":\"%s\",\"median_ns\":%.2f,"
           "\"min_ns\":%.2f,\"runs\":%d,\"pairs\":%d,\"hit_fraction\":%.3f}\n",
           pair, query_name, t[runs / 2], t[0], runs, PAIRS,
           (double)sink_u / (double)((QUERIES_PER_RUN / PAIRS) * PAIRS));
    fflush(stdout);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    filter = argc > 2 ? argv[2] : NULL;
    static const struct {
        const char *name;
        geom_shape_kind a, b;
    } kinds[] = {
        {"box-box", GEOM_SHAPE_BOX, GEOM_SHAPE_BOX},
        {"box-polygon", GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON},
        {"polygon-polygon", GEOM_SHAPE_POLYGON, GEOM_SHAPE_POLYGON},
        {"circle-box", GEOM_SHAPE_CIRCLE, GEOM_SHAPE_BOX},
        {"circle-polygon", GEOM_SHAPE_CIRCLE, GEOM_SHAPE_POLYGON},
        {"circle-circle", GEOM_SHAPE_CIRCLE, GEOM_SHAPE_CIRCLE},
    };
    static const char *ray_names[] = {"", "box", "polygon", "circle"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        make_pairs(kinds[k].a, kinds[k].b);
        bench(kinds[k].name, "mtv", Q_MTV, runs);
        bench(kinds[k].name, "sweep", Q_SWEEP, runs);
        if (kinds[k].a == GEOM_SHAPE_BOX && kinds[k].b == GEOM_SHAPE_BOX) {
            bench("box-box-fast", "mtv", Q_MTV_FAST, runs);
            bench("box-box-fast", "sweep", Q_SWEEP_FAST, runs);
        }
        /* Ray casts against the second shape: one line per shape kind. */
        if (kinds[k].a == kinds[k].b) bench(ray_names[kinds[k].b], "ray", Q_RAY, runs);
    }
    return 0;
}

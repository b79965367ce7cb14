/* bench_toi: ns per time-of-impact query under combined linear and angular motion
 * (PERFORMANCE.md "Protocol 1.1 figures": conservative-advancement TOI, box-box and
 * polygon(8)-polygon(8), next to Box2D v3's b2TimeOfImpact on the same cases).
 *
 * CASES random cases per pair kind from a fixed seed (xorshift32 seeded 12345): A turned by a
 * random angle, B 1.1 to 2.5 reaches away (reach = the sum of the shapes' radii) in a random
 * direction, A moving towards B with scatter over 0.5 to 2 times the distance and turning by up
 * to +-0.5 rad (a tick at 30 rad/s), B drifting and turning by up to +-0.25 rad. Each figure is
 * the median (and min) of RUNS timed runs over all cases. geom_toi_turning stops at half a skin
 * (5e-4) with a tolerance of a quarter skin, as the world does; b2TimeOfImpact at its own target
 * (its linear slop, 5e-3, +- a quarter of it). Also printed: how often each reports a hit, and
 * the mean |t_collide - t_box2d| over the cases both hit.
 *
 * Box2D is optional: configure with -DCOLLIDE_BOX2D_DIR=<a Box2D v3 source tree whose build/
 * holds src/libbox2d.a> (never part of the product; docs/performance.md says how it was built).
 *
 * Usage: bench_toi [runs]   (default 7) */
#include "collide_rng.h"
#include "bench_time.h"
#include "geom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef COLLIDE_WITH_BOX2D
#include "box2d/collision.h"
#include "box2d/math_functions.h"
#endif

#define CASES 4096
#define MAX_RUNS 31

typedef struct toi_case {
    geom_shape a, b;
    geom_motion ma, mb;
} toi_case;

static toi_case cases[CASES];
static volatile float sink_f;

static collide_rng rng = {12345};

static geom_shape make_shape(int poly8) {
    geom_shape s;
    if (!poly8) {
        if (geom_make_box(
                v2(collide_rng_range(&rng, 0.2f, 1.0f), collide_rng_range(&rng, 0.2f, 1.0f)), &s))
            abort();
        return s;
    }
    vec2 v[8];
    float r = collide_rng_range(&rng, 0.4f, 1.0f);
    for (int i = 0; i < 8; i++) {
        float a = 6.2831853f * ((float)i + collide_rng_range(&rng, 0.2f, 0.8f)) / 8.0f;
        v[i] = v2(r * cosf(a), r * sinf(a) * 0.7f);
    }
    if (geom_make_hull(v, 8, &s)) abort();
    return s;
}

static void make_cases(int poly8) {
    for (int i = 0; i < CASES; i++) {
        toi_case *c = &cases[i];
        c->a = make_shape(poly8);
        c->b = make_shape(poly8);
        float reach = geom_shape_radius(&c->a) + geom_shape_radius(&c->b);
        float dir = collide_rng_range(&rng, 0.0f, 6.2831853f),
              dist = collide_rng_range(&rng, 1.1f, 2.5f) * reach;
        c->ma.p0 = v2(collide_rng_range(&rng, -10, 10), collide_rng_range(&rng, -10, 10));
        c->ma.a0 = collide_rng_range(&rng, -3.14159f, 3.14159f);
        c->mb.p0 = v2_add(c->ma.p0, v2(dist * cosf(dir), dist * sinf(dir)));
        c->mb.a0 = collide_rng_range(&rng, -3.14159f, 3.14159f);
        vec2 aim = v2_add(v2_sub(c->mb.p0, c->ma.p0), v2(collide_rng_range(&rng, -reach, reach),
                                                         collide_rng_range(&rng, -reach, reach)));
        c->ma.dp = v2_scale(aim, collide_rng_range(&rng, 0.5f, 2.0f));
        c->ma.da = collide_rng_range(&rng, -0.5f, 0.5f);
        c->mb.dp = v2(collide_rng_range(&rng, -0.3f, 0.3f) * reach,
                      collide_rng_range(&rng, -0.3f, 0.3f) * reach);
        c->mb.da = collide_rng_range(&rng, -0.25f, 0.25f);
    }
}

static float t_collide[CASES];
static int hit_collide[CASES];
#ifdef COLLIDE_WITH_BOX2D
static float t_box2d[CASES];
static int hit_box2d[CASES];
#endif
static long iters_collide;

static double run_collide(void) {
    double t0 = bench_cpu_ns();
    float acc = 0.0f;
    for (int i = 0; i < CASES; i++) {
        geom_toi_result r;
        hit_collide[i] = geom_toi_turning(&cases[i].a, &cases[i].ma, &cases[i].b, &cases[i].mb,
                                          0.5f * GEOM_SKIN, 0.25f * GEOM_SKIN, &r);
        t_collide[i] = r.t;
        iters_collide += r.iterations;
        acc += r.t;
    }
    sink_f = acc;
    return (bench_cpu_ns() - t0) / CASES;
}

#ifdef COLLIDE_WITH_BOX2D
static b2ShapeProxy proxies_a[CASES], proxies_b[CASES];
static b2Sweep sweeps_a[CASES], sweeps_b[CASES];

static b2ShapeProxy proxy_of(const geom_shape *s) {
    b2Vec2 pts[GEOM_MAX_POLYGON_VERTICES];
    int n = 0;
    if (s->kind == GEOM_SHAPE_BOX) {
        vec2 h = s->u.half_extents;
        pts[0] = (b2Vec2){-h.x, -h.y}, pts[1] = (b2Vec2){h.x, -h.y};
        pts[2] = (b2Vec2){h.x, h.y}, pts[3] = (b2Vec2){-h.x, h.y};
        n = 4;
    } else {
        n = s->u.polygon.count;
        for (int i = 0; i < n; i++)
            pts[i] = (b2Vec2){s->u.polygon.vertices[i].x, s->u.polygon.vertices[i].y};
    }
    return b2MakeProxy(pts, n, 0.0f);
}
static b2Sweep sweep_of(const geom_motion *m) {
    b2Sweep s;
    s.localCenter = (b2Vec2){0.0f, 0.0f};
    s.c1 = (b2Vec2){m->p0.x, m->p0.y};
    s.c2 = (b2Vec2){m->p0.x + m->dp.x, m->p0.y + m->dp.y};
    s.q1 = b2MakeRot(m->a0);
    s.q2 = b2MakeRot(m->a0 + m->da);
    return s;
}
static void prepare_box2d(void) {
    for (int i = 0; i < CASES; i++) {
        proxies_a[i] = proxy_of(&cases[i].a);
        proxies_b[i] = proxy_of(&cases[i].b);
        sweeps_a[i] = sweep_of(&cases[i].ma);
        sweeps_b[i] = sweep_of(&cases[i].mb);
    }
}
static double run_box2d(void) {
    double t0 = bench_cpu_ns();
    float acc = 0.0f;
    for (int i = 0; i < CASES; i++) {
        b2TOIInput in = {proxies_a[i], proxies_b[i], sweeps_a[i], sweeps_b[i], 1.0f};
        b2TOIOutput out = b2TimeOfImpact(&in);
        hit_box2d[i] = out.state == b2_toiStateHit || out.state == b2_toiStateOverlapped;
        t_box2d[i] = out.fraction;
        acc += out.fraction;
    }
    sink_f = acc;
    return (bench_cpu_ns() - t0) / CASES;
}
#endif

static void report(const char *pair, const char *who, double *ns, int runs, const int *hits) {
    qsort(ns, (size_t)runs, sizeof *ns, bench_cmp_double);
    int h = 0;
    for (int i = 0; i < CASES; i++)
        h += hits[i] != 0;
    printf(
        "{\"bench\":\"toi\",\"pair\":\"%s\",\"engine\":\"%s\",\"median_ns\":%.1f,\"min_ns\":%.1f,"
        "\"cases\":%d,\"hits\":%d,\"runs\":%d}\n",
        pair, who, ns[runs / 2], ns[0], CASES, h, runs);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    for (int poly8 = 0; poly8 < 2; poly8++) {
        const char *pair = poly8 ? "polygon8-polygon8" : "box-box";
        make_cases(poly8);
        double ns[MAX_RUNS];
        run_collide(); /* warm-up */
        for (int r = 0; r < runs; r++)
            ns[r] = run_collide();
        report(pair, "collide-ca", ns, runs, hit_collide);
        printf("{\"bench\":\"toi-steps\",\"pair\":\"%s\",\"mean_steps\":%.2f}\n", pair,
               (double)iters_collide / ((runs + 1.0) * CASES));
        iters_collide = 0;
#ifdef COLLIDE_WITH_BOX2D
        prepare_box2d();
        run_box2d();
        for (int r = 0; r < runs; r++)
            ns[r] = run_box2d();
        report(pair, "box2d-b2TimeOfImpact", ns, runs, hit_box2d);
        int both = 0, only_c = 0, only_b = 0;
        double diff = 0.0;
        for (int i = 0; i < CASES; i++) {
            if (hit_collide[i] && hit_box2d[i]) {
                both++;
                diff += fabs((double)t_collide[i] - (double)t_box2d[i]);
            }
            only_c += hit_collide[i] && !hit_box2d[i];
            only_b += !hit_collide[i] && hit_box2d[i];
        }
        printf("{\"bench\":\"toi-agreement\",\"pair\":\"%s\",\"both_hit\":%d,\"only_collide\":%d,"
               "\"only_box2d\":%d,\"mean_abs_dt\":%.6f}\n",
               pair, both, only_c, only_b, both ? diff / both : 0.0);
#endif
    }
    return 0;
}

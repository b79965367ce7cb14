/* Scene S1 of PERFORMANCE.md, shared by the benchmark programs: the RNG, the map, the movers'
 * start cells and their intents, exactly as specified, plus a driver that times any stepper on
 * it. Reference steppers (the plain-grid anchor, Chipmunk's indexes) move "plain" movers held in
 * arrays of doubles; the product moves bodies in a world. */
#ifndef COLLIDE_BENCH_S1_H
#define COLLIDE_BENCH_S1_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide_rng.h"

#define S1_MAP 256
#define S1_STATICS 13798
#define S1_MOVERS 10000
#define S1_WARMUP 10
#define S1_HALF 0.4  /* mover half extent */
#define S1_SKIN 1e-3 /* GEOM_SKIN, the gap a stopped mover keeps */
#define S1_PI 3.14159265358979323846

typedef collide_rng s1_rng; /* collide_rng.h: the scenes' xorshift32 */
static inline uint32_t s1_next(s1_rng *r) { return collide_rng_next(r); }
static inline double s1_unit(s1_rng *r) { return collide_rng_unit_d(r); }

static inline double s1_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline double s1_min(double a, double b) { return a < b ? a : b; }
static inline double s1_max(double a, double b) { return a > b ? a : b; }
static inline int s1_floor(double v) {
    int i = (int)v;
    return i - (v < (double)i);
}

static inline int s1_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The map and the movers' start cells, drawing from rng in the specified order. */
typedef struct s1_layout {
    unsigned char solid[S1_MAP * S1_MAP]; /* row-major, y outer */
    int statics;                          /* solid cells */
    uint32_t start_cell[S1_MOVERS][2];    /* cx, cy of each mover */
} s1_layout;

static inline int s1_make_layout(s1_layout *l, s1_rng *rng) {
    rng->state = 12345;
    l->statics = 0;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++) {
            int border = x == 0 || y == 0 || x == S1_MAP - 1 || y == S1_MAP - 1;
            int solid = border || s1_unit(rng) < 0.2; /* border cells draw nothing */
            l->solid[y * S1_MAP + x] = (unsigned char)solid;
            l->statics += solid;
        }
    if (l->statics != S1_STATICS) {
        fprintf(stderr, "S1: %d statics, expected %d\n", l->statics, S1_STATICS);
        return -1;
    }
    for (int i = 0; i < S1_MOVERS; i++) {
        uint32_t cx, cy;
        do {
            cx = s1_next(rng) % S1_MAP;
            cy = s1_next(rng) % S1_MAP;
        } while (l->solid[cy * S1_MAP + cx]);
        l->start_cell[i][0] = cx;
        l->start_cell[i][1] = cy;
    }
    return 0;
}

/* Plain movers for the reference steppers. */
typedef struct s1_plain {
    double x[S1_MOVERS], y[S1_MOVERS];   /* centres */
    double vx[S1_MOVERS], vy[S1_MOVERS]; /* intents */
} s1_plain;

/* Exact swept AABB against a fixed box (slab test), as the anchor describes, in double. Returns
 * the time of impact in [0,1] and the normal, or 2 when there is none. Starting in contact, a
 * motion into the box stops at 0 and one out of it is free (the product's rule). */
static inline double s1_box_sweep(double ax0, double ay0, double ax1, double ay1, double dx,
                                  double dy, double bx0, double by0, double bx1, double by1,
                                  double *nx, double *ny) {
    double px = s1_min(ax1 - bx0, bx1 - ax0), py = s1_min(ay1 - by0, by1 - ay0);
    if (px > -1e-5 && py > -1e-5) {
        double mx = 0, my = 0;
        if (px <= py)
            mx = (bx0 + bx1 >= ax0 + ax1) ? 1 : -1;
        else
            my = (by0 + by1 >= ay0 + ay1) ? 1 : -1;
        if (dx * mx + dy * my > 0) {
            *nx = mx, *ny = my;
            return 0.0;
        }
        return 2.0;
    }
    double te = -1.0, tx = 2.0, cx = 0, cy = 0;
    if (dx > 0) {
        double e = (bx0 - ax1) / dx, x = (bx1 - ax0) / dx;
        if (e > te) te = e, cx = 1, cy = 0;
        if (x < tx) tx = x;
    } else if (dx < 0) {
        double e = (bx1 - ax0) / dx, x = (bx0 - ax1) / dx;
        if (e > te) te = e, cx = -1, cy = 0;
        if (x < tx) tx = x;
    } else if (px <= 0) {
        return 2.0;
    }
    if (dy > 0) {
        double e = (by0 - ay1) / dy, x = (by1 - ay0) / dy;
        if (e > te) te = e, cx = 0, cy = 1;
        if (x < tx) tx = x;
    } else if (dy < 0) {
        double e = (by1 - ay0) / dy, x = (by0 - ay1) / dy;
        if (e > te) te = e, cx = 0, cy = -1;
        if (x < tx) tx = x;
    } else if (py <= 0) {
        return 2.0;
    }
    if (!(te < tx) || te > 1.0 || te < 0.0) return 2.0;
    *nx = cx, *ny = cy;
    return te;
}

/* One collide-and-slide of a plain mover: `sweep` finds the first hit of the box moving by r. */
typedef double (*s1_sweep_fn)(void *ctx, double x0, double y0, double x1, double y1, double rx,
                              double ry, double *nx, double *ny);
static inline void s1_plain_slide(void *ctx, s1_sweep_fn sweep, double *px, double *py, double rx,
                                  double ry) {
    for (int it = 0; it < 4 && (rx != 0.0 || ry != 0.0); it++) {
        double nx = 0, ny = 0;
        double t = sweep(ctx, *px - S1_HALF, *py - S1_HALF, *px + S1_HALF, *py + S1_HALF, rx, ry,
                         &nx, &ny);
        if (t > 1.0) {
            *px += rx, *py += ry;
            return;
        }
        double closing = rx * nx + ry * ny;
        if (closing > 0) t -= S1_SKIN / closing;
        if (t < 0) t = 0;
        *px += t * rx, *py += t * ry;
        rx *= 1 - t, ry *= 1 - t;
        double rn = rx * nx + ry * ny;
        if (rn > 0) rx -= rn * nx, ry -= rn * ny;
    }
}

/* Invariant counters for plain movers: overlap with a solid cell by more than 0.01, outside. */
static inline void s1_plain_check(const s1_layout *l, const s1_plain *m, int *overlaps,
                                  int *outside) {
    *overlaps = *outside = 0;
    for (int i = 0; i < S1_MOVERS; i++) {
        double x0 = m->x[i] - S1_HALF, x1 = m->x[i] + S1_HALF, y0 = m->y[i] - S1_HALF,
               y1 = m->y[i] + S1_HALF;
        if (x0 < 0 || y0 < 0 || x1 > S1_MAP || y1 > S1_MAP) {
            (*outside)++;
            continue;
        }
        int bad = 0;
        for (int cy = (int)floor(y0); cy <= (int)floor(y1) && !bad; cy++)
            for (int cx = (int)floor(x0); cx <= (int)floor(x1) && !bad; cx++)
                if (l->solid[cy * S1_MAP + cx] && fmin(x1 - cx, cx + 1 - x0) > 0.01 &&
                    fmin(y1 - cy, cy + 1 - y0) > 0.01)
                    bad = 1;
        *overlaps += bad;
    }
}

typedef struct s1_result {
    double median_ms, min_ms;      /* per tick */
    int overlaps, outside;         /* invariant counters */
    int mover_overlaps;            /* mover pairs overlapping by more than 0.01 at the end (S1b) */
    unsigned long long state_hash; /* world_state_hash at the end (0 for other engines): equal
                                    * hashes before and after a change mean the same results */
    unsigned long long events;     /* contact and sensor events over the timed ticks */
    unsigned long long events_digest; /* their order-independent digest (tick included): equal
                                       * digests before and after a change mean the same events */
} s1_result;

/* Times a plain stepper on S1 with speed V: 10 warm-up and `ticks` timed ticks. */
typedef void (*s1_plain_step_fn)(void *ctx, s1_plain *m, double dt);
static inline s1_result s1_run_plain(const s1_layout *l, s1_plain_step_fn step, void *ctx,
                                     double speed, int ticks) {
    s1_result r = {0, 0, 0, 0, 0, 0, 0, 0};
    s1_plain *m = calloc(1, sizeof *m);
    double *times = calloc((size_t)ticks, sizeof *times);
    if (!m || !times) exit(1);
    s1_rng rng;
    s1_layout again;
    s1_make_layout(&again, &rng); /* replays the draws so the intents continue the sequence */
    for (int i = 0; i < S1_MOVERS; i++) {
        m->x[i] = l->start_cell[i][0] + 0.5;
        m->y[i] = l->start_cell[i][1] + 0.5;
    }
    for (int k = 0; k < S1_WARMUP + ticks; k++) {
        if (k % 60 == 0)
            for (int i = 0; i < S1_MOVERS; i++) {
                double a = s1_unit(&rng) * 2.0 * S1_PI;
                m->vx[i] = (double)(float)(speed * cos(a));
                m->vy[i] = (double)(float)(speed * sin(a));
            }
        double t0 = s1_now_ms();
        step(ctx, m, 1.0 / 60.0);
        double t1 = s1_now_ms();
        if (k >= S1_WARMUP) times[k - S1_WARMUP] = t1 - t0;
    }
    qsort(times, (size_t)ticks, sizeof *times, s1_cmp_double);
    r.median_ms = times[ticks / 2];
    r.min_ms = times[0];
    s1_plain_check(l, m, &r.overlaps, &r.outside);
    free(times);
    free(m);
    return r;
}

#endif

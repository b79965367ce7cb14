/* What the micro-benchmarks time with and how they take a median: this thread's CPU time (other
 * processes on a shared machine do not count), and the comparison qsort sorts runs with. */
#ifndef COLLIDE_BENCH_TIME_H
#define COLLIDE_BENCH_TIME_H

#include <time.h>

static inline double bench_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif

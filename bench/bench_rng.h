/* xorshift32, the generator PERFORMANCE.md fixes for the benchmark scenes: the one copy every
 * benchmark draws its random cases and scenes from (a change to it changes every scene). */
#ifndef COLLIDE_BENCH_RNG_H
#define COLLIDE_BENCH_RNG_H

#include <stdint.h>

typedef struct bench_rng {
    uint32_t state; /* never 0 */
} bench_rng;

static inline uint32_t bench_rng_next(bench_rng *r) {
    uint32_t x = r->state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return r->state = x;
}

/* Uniform in [0, 1): the top 24 bits. */
static inline float bench_rng_unit(bench_rng *r) {
    return (float)(bench_rng_next(r) >> 8) / 16777216.0f;
}
static inline double bench_rng_unit_d(bench_rng *r) {
    return (double)(bench_rng_next(r) >> 8) / 16777216.0;
}
static inline float bench_rng_range(bench_rng *r, float lo, float hi) {
    return lo + (hi - lo) * bench_rng_unit(r);
}

#endif

/* collide_rng: the xorshift generators, one copy for tests, benchmarks and collide-client.
 * collide_rng is xorshift32 (shifts 13, 17, 5), the generator PERFORMANCE.md fixes for the
 * benchmark scenes: the scenes' state hashes and the tests' reproducible seeds depend on every
 * bit of its sequence, so it must not change. collide_xorshift64 (13, 7, 17) draws the client's
 * WebSocket masking keys, where 32 bits a call would be too few. Header only (target
 * collide_rng): geom and world tests and benchmarks include it without linking proto. */
#ifndef COLLIDE_RNG_H
#define COLLIDE_RNG_H

#include <stdint.h>

typedef struct collide_rng {
    uint32_t state; /* never 0: 0 stays 0 */
} collide_rng;

static inline uint32_t collide_rng_next(collide_rng *r) {
    uint32_t x = r->state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return r->state = x;
}

/* Uniform in [0, 1): the top 24 bits. */
static inline float collide_rng_unit(collide_rng *r) {
    return (float)(collide_rng_next(r) >> 8) / 16777216.0f;
}
static inline double collide_rng_unit_d(collide_rng *r) {
    return (double)(collide_rng_next(r) >> 8) / 16777216.0;
}
/* Uniform in [lo, hi), in float arithmetic. */
static inline float collide_rng_range(collide_rng *r, float lo, float hi) {
    return lo + (hi - lo) * collide_rng_unit(r);
}

static inline uint64_t collide_xorshift64(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

#endif

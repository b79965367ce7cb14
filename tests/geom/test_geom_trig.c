/* geom_trig: the geom's own cos and sin (geom_cos_sin, geom_sincos), which the world takes instead
 * of libm's so that its native and WebAssembly builds give the same bits (docs/wasm.md). Checked
 * against libm (within one unit in the last place: both are nearly correctly rounded), for the
 * symmetries the world relies on, and pinned by a digest: a change of the kernel changes the
 * results of every turned body, so it must be seen. */
#include <stdint.h>
#include <string.h>

#include "geom.h"
#include "harness.h"

#define GEOM_TRIG_DIGEST 0xb4ae8f6247aaa6b7ull

static uint32_t bits_f(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static uint64_t bits_d(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}
static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Units in the last place between two finite floats of the same sign (0 when equal). */
static uint32_t ulps_f(float a, float b) {
    if (a == b) return 0;
    if ((a < 0) != (b < 0)) return UINT32_MAX;
    uint32_t x = bits_f(fabsf(a)), y = bits_f(fabsf(b));
    return x > y ? x - y : y - x;
}

/* Floats of [0, 4] (a step through their bit patterns, about 270,000 of them) and their
 * negatives: within one ulp of libm's cosf and sinf, the double kernel within 4e-16 of libm's
 * cos and sin; cos even and sin odd to the bit. */
static void test_near_libm(void) {
    for (uint32_t u = 0; u <= 0x40800000u; u += 3989u) {
        float x = float_of(u);
        vec2 p = geom_cos_sin(x), m = geom_cos_sin(-x);
        CHECK_MSG(ulps_f(p.x, cosf(x)) <= 1 && ulps_f(p.y, sinf(x)) <= 1,
                  "x %a: (%a, %a) against libm (%a, %a)", (double)x, (double)p.x, (double)p.y,
                  (double)cosf(x), (double)sinf(x));
        CHECK_MSG(bits_f(m.x) == bits_f(p.x) && bits_f(m.y) == bits_f(-p.y), "x %a", (double)x);
        double c, s;
        geom_sincos((double)x, &c, &s);
        CHECK_MSG(fabs(c - cos((double)x)) <= 4e-16 && fabs(s - sin((double)x)) <= 4e-16,
                  "x %a: %a %a", (double)x, c, s);
    }
}

/* The values the world depends on most: 0 turns nothing, quarter turns land on the axes within
 * float's rounding, and the default max_slope (45 degrees, 0.7853982f) gives the cosine libm
 * gave, 0x3f3504f3: a 45-degree ramp's walkability is decided against it. */
static void test_exact_values(void) {
    vec2 z = geom_cos_sin(0.0f);
    CHECK(z.x == 1.0f && z.y == 0.0f);
    CHECK(bits_f(geom_cos_sin(0.7853982f).x) == 0x3f3504f3u);
    vec2 q = geom_cos_sin(1.5707964f); /* the float nearest pi/2 */
    CHECK(fabsf(q.x) < 1e-7f && q.y == 1.0f);
    vec2 h = geom_cos_sin(3.1415927f);
    CHECK(h.x == -1.0f && fabsf(h.y) < 1e-6f);
}

/* Beyond the three-part reduction (|a| > 2^20) the angle is wrapped by IEEE remainder first:
 * still finite, still on the unit circle; NaN and infinities give NaN, as libm. */
static void test_large_and_non_finite(void) {
    float big[] = {1.2e6f, -3.3e7f, 1e30f, 3.4e38f};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        vec2 p = geom_cos_sin(big[i]);
        CHECK_MSG(fabsf(p.x * p.x + p.y * p.y - 1.0f) < 1e-6f, "a %g", (double)big[i]);
    }
    CHECK(isnan(geom_cos_sin(NAN).x) && isnan(geom_cos_sin(INFINITY).y));
}

/* A digest of the bits over [-8, 8]: pinned, so that any change of the kernel (a coefficient,
 * the reduction, the evaluation order) is seen here before it moves a turned world. Taken on
 * x86-64 with gcc 12 and clang 14 (and the same kernel in WebAssembly is what js_wasm_world's
 * turned worlds take). */
static void test_pinned_digest(void) {
    uint64_t h = 14695981039346656037ull;
    for (int i = -40000; i <= 40000; i++) {
        float a = (float)i * 0.0002f * (1.0f + (float)(i & 7) * 1e-7f);
        vec2 p = geom_cos_sin(a);
        double c, s;
        geom_sincos((double)a * 3.0, &c, &s);
        uint64_t v[3] = {(uint64_t)bits_f(p.x) << 32 | bits_f(p.y), bits_d(c), bits_d(s)};
        for (int k = 0; k < 3; k++)
            h = (h ^ v[k]) * 0x100000001b3ull;
    }
    CHECK_MSG(h == GEOM_TRIG_DIGEST, "digest %016llx", (unsigned long long)h);
}

TEST_MAIN(TEST(test_near_libm), TEST(test_exact_values), TEST(test_large_and_non_finite),
          TEST(test_pinned_digest))

/* geom_trig: the cos and sin the simulation takes, the same bits on every machine.
 *
 * Why not libm's: the world must give the same floats natively and compiled to WebAssembly
 * (docs/wasm.md), and the two link different libms. glibc's sinf and musl's (wasi-libc) disagree
 * in the last bit on 1 float in 1,200 of [0, pi], cosf on 1 in 3,200, and a turning world built
 * from each, native and WebAssembly, parted after 333 ticks; glibc's double cos/sin even disagree
 * with themselves from one x86-64 CPU to another (an FMA variant is chosen at load time: 361 and
 * 743 of 17.7 million sampled inputs differ). Here only +, -, * and a cast to an integer
 * are used, in double, with -ffp-contract=off: IEEE arithmetic gives the same bits everywhere.
 *
 * Accurate as well: the reduced argument keeps about 2^-52 of relative error and the Taylor
 * series are cut where the next term is below 2^-60, so the float results are the correctly
 * rounded ones but for inputs within about 2^-50 of a tie (none in the 17.7 million sampled,
 * where glibc's sinf is wrong on 1 in 1,200: docs/wasm.md). */
#include "geom.h"

#include <math.h>
#include <stdint.h>

/* pi/2 in three parts, the first two of 33 bits: k times either is exact for |k| < 2^20, so
 * a - k P1 - k P2 loses nothing to cancellation (Cody and Waite, as fdlibm's __rem_pio2). */
#define TRIG_PIO2_1 0x1.921fb54400000p+0
#define TRIG_PIO2_2 0x1.0b4611a600000p-34
#define TRIG_PIO2_3 0x1.3198a2e037073p-69
#define TRIG_INV_PIO2 0x1.45f306dc9c883p-1 /* 2 / pi */
#define TRIG_TWO_PI 0x1.921fb54442d18p+2   /* the double nearest 2 pi */
/* Where the three-part reduction stops being exact (|k| < 2^20). */
#define TRIG_REDUCE_LIMIT 0x1p20

/* sin r and cos r for |r| <= pi/4 + a little: Taylor to r^17 and r^18 (the next terms are
 * below 1e-19), in Horner form, the coefficients 1/n! correctly rounded. */
static double kernel_sin(double r, double r2) {
    return r + r * r2 *
                   (-0x1.5555555555555p-3 +
                    r2 * (0x1.1111111111111p-7 +
                          r2 * (-0x1.a01a01a01a01ap-13 +
                                r2 * (0x1.71de3a556c734p-19 +
                                      r2 * (-0x1.ae64567f544e4p-26 +
                                            r2 * (0x1.6124613a86d09p-33 +
                                                  r2 * (-0x1.ae7f3e733b81fp-41 +
                                                        r2 * 0x1.952c77030ad4ap-49)))))));
}
static double kernel_cos(double r2) {
    return 1.0 +
           r2 * (-0.5 +
                 r2 * (0x1.5555555555555p-5 +
                       r2 * (-0x1.6c16c16c16c17p-10 +
                             r2 * (0x1.a01a01a01a01ap-16 +
                                   r2 * (-0x1.27e4fb7789f5cp-22 +
                                         r2 * (0x1.1eed8eff8d898p-29 +
                                               r2 * (-0x1.93974a8c07c9dp-37 +
                                                     r2 * (0x1.ae7f3e733b81fp-45 +
                                                           r2 * -0x1.6827863b97d97p-53))))))));
}

void geom_sincos(double a, double *c, double *s) {
    if (a == 0.0) { /* sin keeps the sign of a zero, as libm's (the series would give +0) */
        *c = 1.0, *s = a;
        return;
    }
    if (!(fabs(a) <= TRIG_REDUCE_LIMIT)) {
        if (!isfinite(a)) {
            *c = *s = a - a; /* NaN, as libm's */
            return;
        }
        /* Beyond a million radians: first wrapped by IEEE remainder (exact, so the same
         * everywhere), by the double nearest 2 pi; no simulation angle comes near. */
        a = remainder(a, TRIG_TWO_PI);
    }
    /* k, the nearest number of quarter turns (ties away from zero: the same for a and -a, so
     * sin stays odd and cos even) */
    double kd = a * TRIG_INV_PIO2;
    int64_t k = (int64_t)(kd + (kd >= 0.0 ? 0.5 : -0.5));
    double kf = (double)k;
    double r = ((a - kf * TRIG_PIO2_1) - kf * TRIG_PIO2_2) - kf * TRIG_PIO2_3;
    double r2 = r * r;
    double sr = kernel_sin(r, r2), cr = kernel_cos(r2);
    switch (k & 3) { /* k mod 4, also for negative k (two's complement) */
    case 0:
        *c = cr, *s = sr;
        break;
    case 1:
        *c = -sr, *s = cr;
        break;
    case 2:
        *c = -cr, *s = -sr;
        break;
    default:
        *c = sr, *s = -cr;
        break;
    }
}

vec2 geom_cos_sin(float a) {
    double c, s;
    geom_sincos((double)a, &c, &s);
    return v2((float)c, (float)s);
}

/* A tiny test harness in the spirit of Box2D's test macros: no dependency, readable failures.
 *
 * Why not cmocka: our tests are plain functions with loops over thousands of randomized cases;
 * what they need is a file:line message, a tolerance compare and a name filter. Forty lines of
 * macros do that, build everywhere with the project's own flags (ASan/UBSan included), and keep
 * one less package on the install list.
 *
 * Usage:
 *   static void test_box_box(void) { CHECK(x == 1); CHECK_NEAR(a, b, 1e-4); }
 *   TEST_MAIN(TEST(test_box_box), TEST(test_other))
 * Run `./prog` for all tests or `./prog SUBSTRING` for those whose name contains it.
 * A failed CHECK records the failure and returns from the test function. The last line printed
 * is "N passed, N failed". */
#ifndef COLLIDE_HARNESS_H
#define COLLIDE_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* collide_rng: the fixed-seed xorshift32 PERFORMANCE.md specifies, so a failing case is
 * reproducible from its seed. */
#include "collide_rng.h"

typedef struct harness_test {
    const char *name;
    void (*fn)(void);
} harness_test;

static int harness_failed_checks;

#define TEST(fn)                                                                                   \
    { #fn, fn }

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            harness_failed_checks++;                                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Like CHECK, with a printf-style explanation (values, seeds, case numbers). */
#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            harness_failed_checks++;                                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double harness_a_ = (double)(a), harness_b_ = (double)(b);                                 \
        if (!(fabs(harness_a_ - harness_b_) <= (double)(tol))) {                                   \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g, tol %g\n", __FILE__,  \
                    __LINE__, #a, harness_a_, #b, harness_b_, (double)(tol));                      \
            harness_failed_checks++;                                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static inline int harness_run(const harness_test *tests, size_t count, int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        int before = harness_failed_checks;
        tests[i].fn();
        if (harness_failed_checks != before) {
            fprintf(stderr, "FAIL %s\n", tests[i].name);
            failed++;
        } else {
            printf("ok   %s\n", tests[i].name);
            passed++;
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define TEST_MAIN(...)                                                                             \
    int main(int argc, char **argv) {                                                              \
        static const harness_test harness_tests_[] = {__VA_ARGS__};                                \
        return harness_run(harness_tests_, sizeof harness_tests_ / sizeof harness_tests_[0], argc, \
                           argv);                                                                  \
    }

#endif

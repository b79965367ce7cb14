/* COLLIDE_ASSERT: the one assertion of every layer (geom, world, proto, net, client), on one
 * switch, so a checked build checks all of them and a Release build pays for none.
 *
 * The switch is COLLIDE_ASSERTS. Left undefined it follows NDEBUG, the compiler's own: on in the
 * Debug, Asan and Tsan builds (the suites CI runs under the sanitizers), off in Release, whose hot
 * loops must not pay for it. Defined, it wins: collide_world_reference sets it to 1, so the
 * fast-paths-off world that test_world_fastpaths compares against checks its invariants in
 * Release CI too. As in Box2D, an assertion at an API edge is paired with a release-safe return:
 * what it forbids aborts a checked build and is refused, not trusted, by a Release daemon.
 *
 * Header-only (the interface library collide_common), so geom and proto, which link nothing of
 * ours, can use it. */
#ifndef COLLIDE_ASSERT_H
#define COLLIDE_ASSERT_H

#ifndef COLLIDE_ASSERTS
#ifdef NDEBUG
#define COLLIDE_ASSERTS 0
#else
#define COLLIDE_ASSERTS 1
#endif
#endif

#if COLLIDE_ASSERTS
#include <stdio.h>
#include <stdlib.h>
/* Out of the macro so each use costs one compare and a call on its cold side. */
_Noreturn static inline void collide_assert_fail(const char *cond, const char *file, int line) {
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, cond);
    abort();
}
#define COLLIDE_ASSERT(cond) ((cond) ? (void)0 : collide_assert_fail(#cond, __FILE__, __LINE__))
#else
#define COLLIDE_ASSERT(cond) ((void)0)
#endif

#endif

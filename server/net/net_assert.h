/* NET_ASSERT: the assertion of server/net. On in Debug and ASan builds (the test suite runs under
 * ASan in CI) and with -DCOLLIDE_ASSERT; compiled out of Release, where the hot paths must not pay
 * for it. As in Box2D, an assertion at an API edge is paired with a safe return, so a Release
 * daemon given what the assertion forbids degrades instead of corrupting memory. */
#ifndef COLLIDE_NET_ASSERT_H
#define COLLIDE_NET_ASSERT_H

#if !defined(NDEBUG) || defined(COLLIDE_ASSERT)
#include <stdio.h>
#include <stdlib.h>
#define NET_ASSERT(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: NET_ASSERT failed: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#else
#define NET_ASSERT(cond) ((void)0)
#endif

#endif

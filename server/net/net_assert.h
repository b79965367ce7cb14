/* NET_ASSERT: server/net's name for COLLIDE_ASSERT (common/collide_assert.h), the one assertion on
 * the one switch (COLLIDE_ASSERTS, following NDEBUG when unset). Only a name, kept while issue 29
 * reshapes this folder so the files being moved keep their lines; new code writes
 * COLLIDE_ASSERT. */
#ifndef COLLIDE_NET_ASSERT_H
#define COLLIDE_NET_ASSERT_H

#include "collide_assert.h"

#define NET_ASSERT(cond) COLLIDE_ASSERT(cond)

#endif

/* world_separate: the discrete pass (COLLISION.md step 3). */
#ifndef COLLIDE_WORLD_SEPARATE_H
#define COLLIDE_WORLD_SEPARATE_H

#include "world_internal.h"

/* Pushes spawned movers out of statics, then separates the overlapping mover pairs the mover pass
 * found (scratch.pairs, held as WORLD_OWNER_PAIRS when the mover grid is valid). */
void world_separate(world *w);

#endif

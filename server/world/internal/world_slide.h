/* world_slide: collide-and-slide (COLLISION.md step 2), the general slide and its fast paths. */
#ifndef COLLIDE_WORLD_SLIDE_H
#define COLLIDE_WORLD_SLIDE_H

#include "world_pair.h"

/* Collide-and-slide of mover mi from pos by r against statics, bounds and the candidates (which
 * move along their own displacement over the same tick: relative motion). Returns the end
 * position; *path (may be NULL) becomes the box of every point the body passed. */
vec2 world_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                 uint32_t cand_count, aabb *path);
/* The same slide through the box-among-boxes fast path when it applies: the same results. */
vec2 world_slide_box(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                     uint32_t cand_count);
/* The whole tick's slides and step 4 for movers that ignore each other (S1a). */
void world_step_alone(world *w);

#endif

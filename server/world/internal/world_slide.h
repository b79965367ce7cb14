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
/* A turning mover's move (world_turn.c): moves and turns until the first contact along the
 * combined motion, then world_slide with what is left of r; the same contract as world_slide. */
vec2 world_turn_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                      uint32_t cand_count, aabb *path);
/* Recounts world.turning_hint after a step (movers still turning or just stopped). */
void world_turn_recount(world *w);
/* The whole tick's slides and step 4 for movers that ignore each other (S1a). */
void world_step_alone(world *w);

#endif

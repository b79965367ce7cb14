/* world_slide: collide-and-slide (COLLISION.md step 2), the general slide and its fast paths. */
#ifndef COLLIDE_WORLD_SLIDE_H
#define COLLIDE_WORLD_SLIDE_H

#include "world_pair.h"

/* A static near a short sweep, copied so the slide's iterations loop over a small array. */
typedef struct near_static {
    aabb box;        /* its AABB */
    uint32_t index;  /* into statics */
    uint32_t is_box; /* box shape: the AABB fast path applies */
} near_static;
#define WORLD_NEAR_STATICS 32

/* The region whose statics a short slide (L1 length of r within a fine cell) gathers once for
 * all its iterations: its start box (pbox) grown by that length, since sliding never lengthens
 * the motion. */
static inline aabb world_slide_region(aabb pbox, vec2 r) {
    return aabb_inflate(pbox, fabsf(r.x) + fabsf(r.y) + WORLD_QUERY_MARGIN);
}

/* Collide-and-slide of mover mi from pos by r against statics, bounds and the candidates (which
 * move along their own displacement over the same tick: relative motion). Returns the end
 * position; *path (may be NULL) becomes the box of every point the body passed. */
vec2 world_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                 uint32_t cand_count, aabb *path);
/* world_slide with the statics of its short-slide region gathered by the caller (near_count of
 * them in near, in the order the grid walk of that region finds them, those that block the
 * mover only; -1 for more than WORLD_NEAR_STATICS) and, for a turned mover, its shape as it
 * stands (or NULL): the same results. */
vec2 world_slide_gathered(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                          uint32_t cand_count, aabb *path, const near_static *near, int near_count,
                          const geom_shape *turned);
/* A box static as the turned box's slide reads it (world_slide_turned_box). */
typedef struct slide_tile {
    vec2 position; /* its position, the box's centre */
    vec2 hi;       /* its half extents (static_hi) */
} slide_tile;
/* world_slide_gathered of a turned box among box statics: the mover's body-local shape a box of
 * half extents h, turned by q (not (1, 0): geom_shape_orient keeps that a box), no candidates,
 * r within a fine cell (L1), and the statics of its short-slide region all boxes, tile_count
 * of them (at most WORLD_NEAR_STATICS) in tiles in the walk's order. The same results, without the
 * path box (the turning tick keeps its own). */
vec2 world_slide_turned_box(world *w, uint32_t mi, vec2 pos, vec2 r, const slide_tile *tiles,
                            int tile_count, vec2 h, vec2 q);
/* The same slide through the box-among-boxes fast path when it applies: the same results. */
vec2 world_slide_box(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                     uint32_t cand_count);
/* A turning mover's move (world_turn.c): moves and turns until the first contact along the
 * combined motion, then world_slide with what is left of r; returns where it ends. Its path box
 * is the step's own (world_step: the disc of its shape around its path), not the slide's. */
vec2 world_turn_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                      uint32_t cand_count);
/* world_step_alone for a world with turning movers (world.turning_hint): each mover's slide,
 * a turning one's through world_turn_slide, and step 4, in one walk over the movers. */
void world_turn_step_alone(world *w);
/* Recounts world.turning_hint after a step (movers still turning or just stopped). */
void world_turn_recount(world *w);
/* The whole tick's slides and step 4 for movers that ignore each other (S1a). */
void world_step_alone(world *w);

#endif

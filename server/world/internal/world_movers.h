/* world_movers: the mover hash (world_grid: a spatial hash over each mover's box, rebuilt by a
 * counting sort when needed), the mover pairs it yields, and the spatial sort of the mover array.
 * Items are dense mover indices. */
#ifndef COLLIDE_WORLD_MOVERS_H
#define COLLIDE_WORLD_MOVERS_H

#include "world_internal.h"

/* Rebuilds the grid over the movers with the given per-dense-index boxes (kept by reference:
 * the array must not change while the grid is in use). */
void world_grid_build(const world *w, world_grid *g, const aabb *boxes);
/* Builds the mover grid over the current boxes grown by allowance, into scratch.path: a body may
 * then move that far (the discrete pass's pushes) and still be found through its cells. */
void world_grid_build_current(const world *w, float allowance);
/* Calls visit(index) once for every indexed mover whose build box overlaps box (inclusive), and
 * for every big or unindexed mover (the visitor checks those itself). Indices are dense mover
 * indices, valid until a despawn or the next step (both invalidate the grid). */
typedef bool (*mover_visit_fn)(const world *w, uint32_t index, void *ctx);
void world_grid_query(const world *w, const world_grid *g, aabb box, mover_visit_fn visit,
                      void *ctx);
/* The mover pairs whose grid boxes overlap into scratch.pairs, and as adjacency lists for the
 * mover pass (takes both arrays as WORLD_OWNER_PAIRS). */
void world_grid_pairs(world *w, const world_grid *g);
/* Reorders the dense mover array by space (stable, deterministic); fixes the slots' index. */
void world_sort_movers(world *w);
/* Checks the movers against the dense index (slots[m.slot].index == i) and, when valid, the grid
 * (every mover indexed, big or unindexed). NULL when consistent (world_validate). */
const char *world_movers_validate(const world *w);

#endif

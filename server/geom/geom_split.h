/* geom_split: a simple polygon split into convex pieces the world can hold (ARCHITECTURE.md
 * "World files: Tiled maps": a concave polygon from a level editor becomes several convex
 * statics). Ear clipping into triangles, then Hertel-Mehlhorn: adjacent pieces are merged across
 * a shared diagonal while the union stays convex and within GEOM_MAX_POLYGON_VERTICES, which
 * gives at most four times the optimal number of convex pieces (Hertel and Mehlhorn, "Fast
 * triangulation of simple polygons", FCT 1983). */
#ifndef COLLIDE_GEOM_SPLIT_H
#define COLLIDE_GEOM_SPLIT_H

#include "geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One convex piece: counter-clockwise, 3..GEOM_MAX_POLYGON_VERTICES vertices, no three
 * collinear, each accepted by geom_make_polygon. */
typedef struct geom_piece {
    int count;
    vec2 v[GEOM_MAX_POLYGON_VERTICES];
} geom_piece;

/* Splits the simple polygon pts[0..n) (either winding; collinear and repeated consecutive
 * vertices are dropped first) into convex pieces whose union is the polygon and whose interiors
 * are disjoint. Returns the number of pieces written (<= max_out), or -1 with *reason set to a
 * short, stable sentence: fewer than 3 distinct vertices, zero area, self-intersecting edges, more
 * than max_out pieces needed, or a piece geom_make_polygon refuses (a sliver below
 * GEOM_MIN_SIZE). A convex input comes back as one piece when it has at most
 * GEOM_MAX_POLYGON_VERTICES vertices, else as several pieces of up to that many. Never more
 * pieces than n - 2 (the triangles). Allocates O(n) scratch, freed before returning; inputs of
 * more than 4096 vertices, or with a coordinate beyond GEOM_MAX_SIZE, are refused. The pieces'
 * vertices are input vertices, unchanged: neighbouring pieces share their edges exactly. */
int geom_split_polygon(const vec2 *pts, int n, geom_piece *out, int max_out, const char **reason);

#ifdef __cplusplus
}
#endif
#endif

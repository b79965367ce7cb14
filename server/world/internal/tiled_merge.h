/* tiled_merge: full-cell boxes of a tile layer merged into fewer, larger boxes (ARCHITECTURE.md
 * "World files: Tiled maps": "Full-cell boxes of a layer are merged ... adjacent cells of the
 * same properties"). Fewer statics is less memory and a smaller grid, and no seams between cells
 * for a sliding body to catch on (COLLISION.md I4 holds either way; merging makes it cheaper). */
#ifndef COLLIDE_TILED_MERGE_H
#define COLLIDE_TILED_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* A rectangle of cells: columns [x, x + w), rows [y, y + h), and the class its cells share. */
typedef struct tiled_rect {
    int x, y, w, h;
    uint32_t cls;
} tiled_rect;

/* Covers every non-zero cell of cls[0 .. width * height) (row-major, row 0 first) with disjoint
 * rectangles, each of cells of one class: greedily, row by row, each rectangle as wide as its run
 * and then as tall as the same run repeats below it. Returns the number written, at most the
 * number of non-zero cells; (size_t)-1 when more than cap would be needed (cap >= the non-zero
 * cells never fails, short of a layer wider than 1024 columns failing to allocate its per-column
 * scratch). The rectangles come in row-major order of their top-left cell. */
size_t tiled_merge_cells(const uint32_t *cls, int width, int height, tiled_rect *out, size_t cap);

#endif

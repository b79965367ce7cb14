/* tiled_merge: greedy rectangles over a tile layer's full cells (see internal/tiled_merge.h). */
#include "tiled_merge.h"

#include <stdlib.h>

/* Layers up to this many columns keep their per-column scratch on the stack; wider ones (rare:
 * Tiled's own editor slows down well before) allocate it. */
#define MERGE_STACK_COLUMNS 1024

size_t tiled_merge_cells(const uint32_t *cls, int width, int height, tiled_rect *out, size_t cap) {
    if (!cls || width <= 0 || height <= 0) return 0;
    /* covered_to[x]: the first row below the rectangle that covers column x, from a row above.
     * A rectangle spans whole rows, so whether a cell was taken by an earlier rectangle is only
     * ever a question for its own row: below a run, every cell an earlier rectangle took would
     * have put that rectangle in the run's row too. */
    int stack_cols[MERGE_STACK_COLUMNS];
    int *covered_to = stack_cols;
    if (width > MERGE_STACK_COLUMNS) {
        covered_to = malloc((size_t)width * sizeof *covered_to);
        if (!covered_to) return (size_t)-1;
    }
    for (int x = 0; x < width; x++)
        covered_to[x] = 0;

    size_t count = 0;
    for (int y = 0; y < height; y++) {
        const uint32_t *row = cls + (size_t)y * (size_t)width;
        for (int x = 0; x < width;) {
            uint32_t c = row[x];
            if (c == 0 || covered_to[x] > y) {
                x++;
                continue;
            }
            int w = 1;
            while (x + w < width && row[x + w] == c && covered_to[x + w] <= y)
                w++;
            int h = 1;
            for (; y + h < height; h++) {
                const uint32_t *below = cls + (size_t)(y + h) * (size_t)width + x;
                int k = 0;
                while (k < w && below[k] == c)
                    k++;
                if (k < w) break;
            }
            if (count == cap) {
                count = (size_t)-1;
                goto done;
            }
            out[count++] = (tiled_rect){x, y, w, h, c};
            for (int k = 0; k < w; k++)
                covered_to[x + k] = y + h;
            x += w;
        }
    }
done:
    if (covered_to != stack_cols) free(covered_to);
    return count;
}

/* world_tiled_read: a Tiled map by its extension (ARCHITECTURE.md "World files: Tiled maps"). Apart
 * from world_tiled_files.c so that a program using one parser does not need the other linked. */
#include "tiled.h"

#include <string.h>

tiled_map *tiled_read(const tiled_source *src, char *err, size_t err_size) {
    size_t n = strlen(src->path);
    if (n >= 4 && strcmp(src->path + n - 4, ".tmx") == 0) return tiled_read_tmx(src, err, err_size);
    return tiled_read_tmj(src, err, err_size);
}

/* world_tiled_read: a Tiled map by its extension (ARCHITECTURE.md "World files: Tiled maps"), the
 * one place that knows both parsers: each gets the other's tileset reader through tiled_source,
 * so that a TMX map may use a JSON tileset and a TMJ map an XML one (Tiled writes both) without
 * either parser depending on the other. */
#include "tiled.h"

#include <string.h>

tiled_map *tiled_read(const tiled_source *src, char *err, size_t err_size) {
    tiled_source with = *src;
    size_t n = strlen(src->path);
    bool tmx = n >= 4 && strcmp(src->path + n - 4, ".tmx") == 0;
    with.other_tileset = tmx ? tiled_read_tsj : tiled_read_tsx;
    return tmx ? tiled_read_tmx(&with, err, err_size) : tiled_read_tmj(&with, err, err_size);
}

/* world_tiled_tmj_layers: a TMJ map's layers: group layers flattened into their children
 * (offsets added, properties inherited), tile layers with their data, finite or in chunks (an
 * array of gids or a string for tiled_decode_data), and object layers. Apart because the cells
 * are the bulk of a map, and their bounds (TMJ_MAX_LAYER_CELLS, TMJ_MAX_TOTAL_CELLS) are theirs. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmj.h"

/* ---- layers ---------------------------------------------------------------------------------- */

static tiled_layer *new_layer(tmj_ctx *c, tiled_place at, size_t *capacity) {
    tiled_map *m = c->m;
    if (m->nlayers >= TMJ_MAX_LAYERS) {
        tmj_fail(c, at, "more than %u layers", TMJ_MAX_LAYERS);
        return NULL;
    }
    if (m->nlayers == *capacity) {
        size_t cap = *capacity ? *capacity * 2 : 8;
        tiled_layer *ls = realloc(m->layers, cap * sizeof *ls);
        if (!ls) {
            tmj_oom(c, at);
            return NULL;
        }
        m->layers = ls;
        *capacity = cap;
    }
    tiled_layer *l = &m->layers[m->nlayers++];
    memset(l, 0, sizeof *l);
    l->place = at;
    return l;
}

/* Tile data of width x height cells: an array of gids, or a string for tiled_decode_data. */
static bool parse_data(tmj_ctx *c, tiled_place at, const char *where, const json_t *data,
                       const char *encoding, const char *compression, long long width,
                       long long height, tiled_chunk *chunk) {
    uint64_t cells = (uint64_t)width * (uint64_t)height;
    if (cells > TMJ_MAX_LAYER_CELLS)
        return tmj_fail(c, at, "%s: %lld x %lld tiles, more than %u", where, width, height,
                        TMJ_MAX_LAYER_CELLS);
    if (c->total_cells + cells > TMJ_MAX_TOTAL_CELLS)
        return tmj_fail(c, at, "%s: the map's layers hold more than %u tiles", where,
                        TMJ_MAX_TOTAL_CELLS);
    if (!data) return tmj_fail(c, at, "%s: \"data\" is missing", where);
    if (!json_is_array(data) && !json_is_string(data))
        return tmj_fail(c, at, "%s: \"data\" must be an array of gids or an encoded string", where);
    if (json_is_array(data) && json_array_size(data) != cells)
        return tmj_fail(c, at, "%s: \"data\" has %zu tiles, the layer %lld x %lld = %llu", where,
                        json_array_size(data), width, height, (unsigned long long)cells);
    c->total_cells += cells;
    chunk->gids = calloc(cells ? cells : 1, sizeof *chunk->gids);
    if (!chunk->gids) return tmj_oom(c, at);
    if (json_is_array(data)) {
        if (strcmp(encoding, "csv") != 0)
            return tmj_fail(c, at, "%s: \"data\" is an array but \"encoding\" is \"%s\"", where,
                            encoding);
        for (size_t i = 0; i < cells; i++) {
            const json_t *g = json_array_get(data, i);
            if (!json_is_integer(g) || json_integer_value(g) < 0 ||
                json_integer_value(g) > 0xffffffffLL)
                return tmj_fail(c, at,
                                "%s: tile %zu of \"data\" is not a gid (an integer in [0, "
                                "4294967295])",
                                where, i);
            chunk->gids[i] = (uint32_t)json_integer_value(g);
        }
        return true;
    }
    char why[256] = "";
    if (!tiled_decode_data(json_string_value(data), json_string_length(data), encoding, compression,
                           chunk->gids, (size_t)cells, why, sizeof why))
        return tmj_fail(c, at, "%s: \"data\": %s", where, why);
    return true;
}

static bool parse_tile_layer(tmj_ctx *c, const json_t *jl, const char *where, tiled_layer *l) {
    tiled_map *m = c->m;
    tiled_place at = l->place;
    const char *encoding, *compression;
    if (!tmj_get_string(c, at, where, jl, "encoding", "csv", &encoding) ||
        !tmj_get_string(c, at, where, jl, "compression", "", &compression))
        return false;
    if (!m->infinite) {
        long long w, h;
        if (!tmj_get_int(c, at, where, jl, "width", true, 0, 0, TMJ_MAX_MAP_TILES, &w) ||
            !tmj_get_int(c, at, where, jl, "height", true, 0, 0, TMJ_MAX_MAP_TILES, &h))
            return false;
        if (w != m->width || h != m->height)
            return tmj_fail(c, at, "%s: %lld x %lld tiles in a %d x %d map", where, w, h, m->width,
                            m->height);
        l->chunks = calloc(1, sizeof *l->chunks);
        if (!l->chunks) return tmj_oom(c, at);
        l->nchunks = 1;
        l->chunks[0].width = (int)w;
        l->chunks[0].height = (int)h;
        return parse_data(c, at, where, json_object_get(jl, "data"), encoding, compression, w, h,
                          &l->chunks[0]);
    }
    const json_t *chunks = json_object_get(jl, "chunks");
    if (!json_is_array(chunks))
        return tmj_fail(c, at, "%s: an infinite map's tile layer needs \"chunks\" (an array)",
                        where);
    size_t n = json_array_size(chunks);
    if (n > TMJ_MAX_CHUNKS)
        return tmj_fail(c, at, "%s: %zu chunks, at most %u", where, n, TMJ_MAX_CHUNKS);
    if (n == 0) return true;
    l->chunks = calloc(n, sizeof *l->chunks);
    if (!l->chunks) return tmj_oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *jc = json_array_get(chunks, i);
        char cwhere[600];
        snprintf(cwhere, sizeof cwhere, "%s, chunk %zu", where, i);
        if (!json_is_object(jc)) return tmj_fail(c, at, "%s must be an object", cwhere);
        long long x, y, w, h;
        if (!tmj_get_int(c, at, cwhere, jc, "x", true, 0, -TMJ_MAX_MAP_TILES, TMJ_MAX_MAP_TILES,
                         &x) ||
            !tmj_get_int(c, at, cwhere, jc, "y", true, 0, -TMJ_MAX_MAP_TILES, TMJ_MAX_MAP_TILES,
                         &y) ||
            !tmj_get_int(c, at, cwhere, jc, "width", true, 0, 1, TMJ_MAX_MAP_TILES, &w) ||
            !tmj_get_int(c, at, cwhere, jc, "height", true, 0, 1, TMJ_MAX_MAP_TILES, &h))
            return false;
        tiled_chunk *ch = &l->chunks[l->nchunks++];
        ch->x = (int)x;
        ch->y = (int)y;
        ch->width = (int)w;
        ch->height = (int)h;
        if (!parse_data(c, at, cwhere, json_object_get(jc, "data"), encoding, compression, w, h,
                        ch))
            return false;
    }
    return true;
}

bool tmj_parse_layers(tmj_ctx *c, const json_t *arr, const tmj_group *group, size_t *capacity) {
    tiled_map *m = c->m;
    if (!arr) return true;
    if (!json_is_array(arr)) return tmj_fail(c, m->place, "\"layers\" must be an array");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *jl = json_array_get(arr, i);
        if (!json_is_object(jl)) return tmj_fail(c, m->place, "a layer must be an object");
        long long id;
        const char *name, *type;
        double offx, offy;
        char where[512];
        snprintf(where, sizeof where, "layer %zu", i);
        if (!tmj_get_int(c, m->place, where, jl, "id", false, 0, 0, INT32_MAX, &id) ||
            !tmj_get_string(c, m->place, where, jl, "name", "", &name))
            return false;
        snprintf(where, sizeof where, "layer \"%s\" (id %lld)", name, id);
        if (!tmj_get_string(c, m->place, where, jl, "type", NULL, &type) ||
            !tmj_get_number(c, m->place, where, jl, "offsetx", 0, &offx) ||
            !tmj_get_number(c, m->place, where, jl, "offsety", 0, &offy))
            return false;
        if (!type) return tmj_fail(c, m->place, "%s: \"type\" is missing", where);
        offx += group->offsetx;
        offy += group->offsety;
        if (strcmp(type, "imagelayer") == 0) continue; /* nothing to collide with */
        bool tiles = strcmp(type, "tilelayer") == 0, objects = strcmp(type, "objectgroup") == 0;
        if (strcmp(type, "group") == 0) {
            if (group->depth + 1 > TMJ_MAX_GROUP_DEPTH)
                return tmj_fail(c, m->place, "%s: groups nested deeper than %d", where,
                                TMJ_MAX_GROUP_DEPTH);
            tiled_props props = {NULL, 0};
            bool ok = tmj_parse_props(c, m->place, where, jl, &props) &&
                      tmj_merge_props_under(c, m->place, &props, group->props);
            tmj_group inner = {offx, offy, &props, group->depth + 1};
            ok = ok && tmj_parse_layers(c, json_object_get(jl, "layers"), &inner, capacity);
            tiled_props_free(&props);
            if (!ok) return false;
            continue;
        }
        if (!tiles && !objects)
            return tmj_fail(c, m->place, "%s: unknown layer type \"%s\"", where, type);
        tiled_layer *l = new_layer(c, m->place, capacity);
        if (!l) return false;
        l->kind = tiles ? TILED_LAYER_TILES : TILED_LAYER_OBJECTS;
        l->id = (int)id;
        l->offsetx = offx;
        l->offsety = offy;
        if (!tmj_dup_string(c, m->place, name, &l->name) ||
            !tmj_parse_props(c, m->place, where, jl, &l->props) ||
            !tmj_merge_props_under(c, m->place, &l->props, group->props))
            return false;
        if (tiles ? !parse_tile_layer(c, jl, where, l)
                  : !tmj_parse_objects(c, m->place, where, json_object_get(jl, "objects"), "", offx,
                                       offy, &l->objects, &l->nobjects))
            return false;
    }
    return true;
}

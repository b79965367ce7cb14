/* tiled_tmj: the TMJ parser's own state, shared by its files and by no one else (the parser's
 * API is tiled_read_tmj and tiled_read_tsj, in tiled.h):
 *   world_tiled_tmj.c          the map and its tilesets (inline, TSJ); the entry points
 *   world_tiled_tmj_layers.c   layers: groups flattened, tile data and chunks, object layers
 *   world_tiled_tmj_objects.c  objects, their shapes, templates (TJ)
 *   world_tiled_tmj_values.c   errors, typed members, properties, external files
 * tmj_ctx is what all of one map's reading shares; each reader takes it and the place it names
 * in its errors. */
#ifndef COLLIDE_TILED_TMJ_H
#define COLLIDE_TILED_TMJ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiled.h"

/* Bounds. A layer's cells are 4 bytes each: 2^24 cells is 64 MiB, and all layers together at most
 * twice that, so no map costs the daemon more than that in gids however small its file. */
#define TMJ_MAX_LAYER_CELLS (1u << 24)
#define TMJ_MAX_TOTAL_CELLS (1u << 25)
#define TMJ_MAX_LAYERS 4096u       /* tile and object layers after flattening */
#define TMJ_MAX_GROUP_DEPTH 32     /* nested group layers */
#define TMJ_MAX_CHUNKS 65536u      /* per infinite layer */
#define TMJ_MAX_OBJECTS (1u << 20) /* all objects and tile shapes together */
#define TMJ_MAX_POINTS 4096u       /* per polygon or polyline */
#define TMJ_MAX_TILESETS 1024u
#define TMJ_MAX_TILES (1u << 20) /* tiles that say something, all tilesets together */
#define TMJ_MAX_PROPS 1024u      /* per map, layer, tileset tile or object */
#define TMJ_MAX_FILES 256u       /* external tilesets and templates */
#define TMJ_MAX_STRING 65536u    /* a name, a type, a property's value */
#define TMJ_MAX_PATH 4096u
#define TMJ_MAX_TILE_SIZE 65536     /* tile width or height in pixels */
#define TMJ_MAX_MAP_TILES (1 << 24) /* a map's width or height, a chunk's position */
#define TMJ_MAX_COORD 1e9           /* pixels: any x, y, size or point */

/* A template read once and applied to every instance that names it. */
typedef struct tmj_template {
    char *path;         /* normalized, relative to the map's directory */
    const char *file;   /* as recorded in m->files, for places */
    json_t *object;     /* the template's "object" (owned through root) */
    json_t *root;       /* the parsed file */
    char *tileset_path; /* its "tileset" source, normalized; NULL when none */
    uint32_t tileset_firstgid;
} tmj_template;

/* One map's reading: its model, its error buffer, the files it has read and its budgets spent. */
typedef struct tmj_ctx {
    const tiled_source *src;
    tiled_map *m;
    char *err;
    size_t err_size;
    char **tileset_paths; /* per m->tilesets entry: normalized source, NULL when inline */
    tmj_template *templates;
    size_t ntemplates;
    size_t nexternal; /* external files read */
    size_t total_cells, total_objects, total_tiles;
} tmj_ctx;

/* Layer-stack state while flattening groups. */
typedef struct tmj_group {
    double offsetx, offsety;
    const tiled_props *props; /* the enclosing groups', nearest first; NULL at the top */
    int depth;
} tmj_group;

/* ---- errors, values, properties, files (world_tiled_tmj_values.c) ---------------------------- */

/* Writes "FILE:LINE: reason" (at's file, or the map's) into the error buffer; returns false. */
bool tmj_fail(tmj_ctx *c, tiled_place at, const char *fmt, ...);
bool tmj_oom(tmj_ctx *c, tiled_place at);
bool tmj_ends_with(const char *s, const char *suffix);
/* An integer member in [lo, hi]; def when absent and not required. */
bool tmj_get_int(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj, const char *key,
                 bool required, long long def, long long lo, long long hi, long long *out);
bool tmj_get_number(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                    const char *key, double def, double *out);
bool tmj_get_bool(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj, const char *key,
                  bool *out);
/* A string member, borrowed from the document; def when absent. */
bool tmj_get_string(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                    const char *key, const char *def, const char **out);
bool tmj_dup_string(tmj_ctx *c, tiled_place at, const char *s, char **out);
/* Tiled's "properties": [{"name", "type", "value"}]: the collide: ones into *out. */
bool tmj_parse_props(tmj_ctx *c, tiled_place at, const char *where, const json_t *owner,
                     tiled_props *out);
/* Appends to dst copies of under's properties whose names dst lacks (dst's own win). */
bool tmj_merge_props_under(tmj_ctx *c, tiled_place at, tiled_props *dst, const tiled_props *under);
/* ref, written in a file whose directory is base_dir, as a normalized path relative to the map's
 * directory; refused when it leaves the map's tree. */
bool tmj_resolve_path(tmj_ctx *c, tiled_place at, const char *base_dir, const char *ref,
                      char **out);
/* The directory part of a normalized path ("" for a file in the map's directory). */
void tmj_dir_of(const char *path, char *out, size_t size);
/* Reads and parses an external JSON file (normalized path); *file is its name in m->files. */
json_t *tmj_load_external(tmj_ctx *c, tiled_place from, const char *path, const char **file);

/* ---- objects and templates (world_tiled_tmj_objects.c) --------------------------------------- */

/* An object layer's objects (offset added), or a tile's collision shapes, into *out, *count. */
bool tmj_parse_objects(tmj_ctx *c, tiled_place at, const char *owner, const json_t *arr,
                       const char *base_dir, double offx, double offy, tiled_object **out,
                       size_t *count);

/* ---- layers (world_tiled_tmj_layers.c) ------------------------------------------------------- */

/* The layers of arr, flattened: groups into their children, under group (NULL at the top). */
bool tmj_parse_layers(tmj_ctx *c, const json_t *arr, const tmj_group *group, size_t *capacity);

#endif

/* tiled_tmx: the TMX parser's own state, shared by its files and by no one else (the parser's
 * API is tiled_read_tmx and tiled_read_tsx, in tiled.h). The parser is one expat parse per file:
 *   world_tiled_tmx.c          the driver: expat callbacks, the element dispatch, the map element
 *   world_tiled_tmx_attrs.c    errors, the item budget, attributes, growable arrays
 *   world_tiled_tmx_tilesets.c tilesets (inline, TSX, JSON) and their tiles
 *   world_tiled_tmx_layers.c   layers, groups, <data> and chunks
 *   world_tiled_tmx_objects.c  objects, their shapes, templates (TX)
 *   world_tiled_tmx_props.c    properties
 * tmx is what all the files of one map share, px one file's parse; each handler takes the px. */
#ifndef COLLIDE_TILED_TMX_H
#define COLLIDE_TILED_TMX_H

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiled.h"

/* Limits (a map within them is far beyond any level we serve; one over them is refused). */
#define TMX_MAX_DEPTH 64               /* element nesting (groups nest) */
#define TMX_MAX_LAYER_CELLS (1u << 24) /* one tile layer: 16M cells, 64 MiB of gids */
#define TMX_MAX_MAP_CELLS (1u << 25)   /* all the map's tile layers together */
#define TMX_MAX_POINTS (1u << 16)      /* vertices of one polygon or polyline */
#define TMX_MAX_ITEMS (1u << 22)       /* objects, tiles, properties, vertices, layers, chunks */
#define TMX_MAX_COORD 1e9              /* pixels; Tiled's own are far below */
#define TMX_MAX_CHUNK_POS (1 << 28)    /* chunk x, y in tiles */
#define TMX_PATH_MAX 1024

/* The elements read, as the dispatch (world_tiled_tmx.c's classify) names them. */
typedef enum elem {
    EL_SKIP,
    EL_MAP,
    EL_TILESET,
    EL_TILESET_REF, /* the map's <tileset source=...>: its content is the external file's */
    EL_TILE,
    EL_LAYER,
    EL_DATA,
    EL_CHUNK,
    EL_DATA_TILE,
    EL_OBJECTGROUP,
    EL_TILE_OBJECTGROUP, /* a tile's collision shapes */
    EL_OBJECT,
    EL_SHAPE, /* <ellipse/>, <point/>, <polygon/>, <polyline/>, <text> */
    EL_GROUP,
    EL_PROPERTIES,
    EL_PROPERTY,
    EL_TEMPLATE,
    EL_TEMPLATE_TILESET
} elem;

/* What one parse reads: the map, an external tileset or a template. */
typedef enum file_kind { FILE_TMX, FILE_TSX, FILE_TX } file_kind;

/* A template read once per map, applied to each of its instances. */
typedef struct tmx_template {
    const char *file; /* pooled path relative to the map's directory */
    tiled_object obj;
    bool has_gid;
    bool has_tileset;
    uint32_t firstgid;
    char tileset[TMX_PATH_MAX]; /* its tileset, relative to the map's directory */
} tmx_template;

/* What every file of one map shares. */
typedef struct tmx {
    const tiled_source *src;
    tiled_map *m;
    char *err;
    size_t err_size;
    bool failed;
    size_t items;      /* TMX_MAX_ITEMS budget spent */
    uint64_t cells;    /* TMX_MAX_MAP_CELLS budget spent */
    char **ts_sources; /* per m->tilesets entry: its file relative to the map's dir, or NULL */
    tmx_template *templates;
    size_t ntemplates;
    /* Parses a nested file (a TSX tileset, a TX template) with the driver's expat callbacks: the
     * handlers reach the driver through this, so that they do not depend on the file that
     * dispatches to them. TSX: its tileset into *ts_out; TX: its template into *tmpl_out. */
    bool (*read_nested)(struct tmx *t, file_kind kind, const char *file, const char *text,
                        tiled_tileset *ts_out, struct tmx_template *tmpl_out);
} tmx;

/* A group layer being read: what it gives the layers inside it. */
typedef struct group_frame {
    double offx, offy;
    size_t first_layer;
    tiled_props props;
} group_frame;

/* One file's parse: the state of expat's callbacks, the element being read at each level. */
typedef struct px {
    tmx *t;
    XML_Parser xp;
    file_kind kind;
    const char *file;       /* pooled */
    char dir[TMX_PATH_MAX]; /* the file's directory relative to the map's ("" for the map's) */
    elem stack[TMX_MAX_DEPTH];
    size_t depth;
    /* character data, collected inside <data>, <chunk> and a <property> without value= */
    char *text;
    size_t text_len, text_cap;
    bool collecting;
    /* the property list being read, and the property it is reading */
    tiled_props props;
    bool prop_keep;
    tiled_prop prop;
    /* the tileset being read (inline or the TSX's), and its tile */
    tiled_tileset ts;
    bool ts_open;
    tiled_tile tile;
    bool tile_open;
    bool tileset_done; /* TSX: its tileset is in ts */
    /* the layer being read, its data */
    tiled_layer layer;
    bool layer_open;
    double layer_offx, layer_offy; /* total, groups' added */
    char encoding[16], compression[16];
    int data_line;
    tiled_chunk *chunk; /* the chunk being filled (finite: the layer's one) */
    size_t chunk_cells, chunk_filled;
    /* the object being read (a layer's, a tile's collision shape or a template's) */
    tiled_object obj;
    bool obj_open;
    bool obj_in_tile;
    int obj_shape; /* -1: none given, else the tiled_object_kind of its shape element */
    bool obj_has_gid;
    /* TX: what the template says */
    tmx_template *tmpl;
    bool tmpl_done;
    group_frame groups[TMX_MAX_DEPTH];
    int ngroups;
} px;

/* ---- errors, budget, attributes, arrays (world_tiled_tmx_attrs.c) ---------------------------- */

int tmx_line_of(const px *p);
/* "FILE:LINE: [where: ]reason", where naming the layer, the tileset's tile and the object. */
void tmx_fail_at(px *p, int line, const char *fmt, ...);
#define FAIL(p, ...) tmx_fail_at((p), tmx_line_of(p), __VA_ARGS__)
/* Stops this parse after a nested file's failure (the error is already written). */
void tmx_stop(px *p);
bool tmx_spend(px *p, size_t n);
const char *tmx_attr(const XML_Char **a, const char *name);
/* An integer attribute in [lo, hi]; def when absent. */
bool tmx_attr_int(px *p, const XML_Char **a, const char *name, long def, long lo, long hi,
                  long *out);
bool tmx_to_double(const char *s, double *out);
bool tmx_attr_double(px *p, const XML_Char **a, const char *name, double def, double *out);
bool tmx_attr_u32(px *p, const XML_Char **a, const char *name, uint32_t *out);
char *tmx_dup_or_fail(px *p, const char *s);
/* Room for one more element in *items (count used); false (error written) when out of memory. */
bool tmx_grow(px *p, void **items, size_t count, size_t size);

/* ---- tilesets and tiles (world_tiled_tmx_tilesets.c) ----------------------------------------- */

void tmx_tile_free(tiled_tile *tl);
void tmx_tileset_free(tiled_tileset *ts);
/* A tileset's own attributes (inline, or the TSX's root). */
void tmx_start_tileset_body(px *p, const XML_Char **a);
void tmx_push_tileset(px *p, tiled_tileset *ts, const char *source);
void tmx_start_tileset_in_map(px *p, const XML_Char **a);
void tmx_start_tile(px *p, const XML_Char **a);
void tmx_end_tile(px *p);
void tmx_end_tileset(px *p);

/* ---- layers, groups, data and chunks (world_tiled_tmx_layers.c) ------------------------------ */

void tmx_layer_free(tiled_layer *l);
void tmx_start_layer(px *p, const XML_Char **a, tiled_layer_kind kind);
void tmx_end_layer(px *p);
void tmx_start_group(px *p, const XML_Char **a);
void tmx_end_group(px *p);
void tmx_start_data(px *p, const XML_Char **a);
/* The gids of the chunk being read from the collected text (encoded) or its <tile> elements. */
void tmx_finish_chunk(px *p, int line);
void tmx_start_chunk(px *p, const XML_Char **a);
void tmx_start_data_tile(px *p, const XML_Char **a);

/* ---- objects, shapes and templates (world_tiled_tmx_objects.c) ------------------------------- */

void tmx_start_object(px *p, const XML_Char **a, bool in_tile);
void tmx_start_shape(px *p, const char *name, const XML_Char **a);
void tmx_end_object(px *p);
void tmx_start_template_tileset(px *p, const XML_Char **a);

/* ---- properties (world_tiled_tmx_props.c) ---------------------------------------------------- */

/* Appends to dst a copy of each of src's properties whose name dst does not have (a child's own
 * properties win over its group's, an instance's over its template's). */
bool tmx_props_merge_under(px *p, tiled_props *dst, const tiled_props *src);
void tmx_start_property(px *p, const XML_Char **a);
void tmx_end_property(px *p);
void tmx_end_properties(px *p, elem owner);

#endif

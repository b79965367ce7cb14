/* world_tiled_tmx: Tiled's XML formats (TMX maps, TSX tilesets, TX templates) read through expat
 * into the model of tiled.h, faithfully: nothing is interpreted beyond what the file says (units,
 * flips and meaning are world_tiled.c's). Each file is one expat parse driven by a stack of the
 * elements it is inside; an element we do not read is skipped with everything under it, so that
 * what newer Tiled versions add is ignored rather than misread. Every size is bounded before it is
 * allocated, so a corrupt or hostile map gives an error, never a crash or unbounded memory. */
#include "tiled.h"

#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Limits (a map within them is far beyond any level we serve; one over them is refused). */
#define TMX_MAX_DEPTH 64               /* element nesting (groups nest) */
#define TMX_MAX_LAYER_CELLS (1u << 24) /* one tile layer: 16M cells, 64 MiB of gids */
#define TMX_MAX_MAP_CELLS (1u << 25)   /* all the map's tile layers together */
#define TMX_MAX_POINTS (1u << 16)      /* vertices of one polygon or polyline */
#define TMX_MAX_ITEMS (1u << 22)       /* objects, tiles, properties, vertices, layers, chunks */
#define TMX_MAX_COORD 1e9              /* pixels; Tiled's own are far below */
#define TMX_MAX_CHUNK_POS (1 << 28)    /* chunk x, y in tiles */
#define TMX_PATH_MAX 1024

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
} tmx;

typedef struct group_frame {
    double offx, offy;
    size_t first_layer;
    tiled_props props;
} group_frame;

/* One file's parse. */
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

static bool parse_file(tmx *t, file_kind kind, const char *file, const char *text,
                       tiled_tileset *ts_out, tmx_template *tmpl_out);

/* ---- errors ---------------------------------------------------------------------------------- */

static int line_of(const px *p) { return (int)XML_GetCurrentLineNumber(p->xp); }

/* "FILE:LINE: [where: ]reason", where naming the layer, the tileset's tile and the object. */
static void fail_at(px *p, int line, const char *fmt, ...) {
    tmx *t = p->t;
    if (t->failed) return;
    t->failed = true;
    char where[300] = "";
    size_t w = 0;
#define WHERE(...)                                                                                 \
    do {                                                                                           \
        if (w < sizeof where) w += (size_t)snprintf(where + w, sizeof where - w, __VA_ARGS__);     \
    } while (0)
    if (p->layer_open) WHERE("layer '%s' ", p->layer.name ? p->layer.name : "");
    if (p->ts_open) WHERE("tileset '%s' ", p->ts.name ? p->ts.name : "");
    if (p->tile_open) WHERE("tile %u ", (unsigned)p->tile.id);
    if (p->obj_open) WHERE("object %d ", p->obj.id);
#undef WHERE
    if (w > 0 && w < sizeof where) where[w - 1] = ':'; /* "layer 'x' object 3:" */
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(t->err, t->err_size, "%s:%d: %s%s%s", p->file, line, where, w ? " " : "", reason);
    XML_StopParser(p->xp, XML_FALSE);
}

#define FAIL(p, ...) fail_at((p), line_of(p), __VA_ARGS__)

/* Stops this parse after a nested file's failure (the error is already written). */
static void stop(px *p) {
    p->t->failed = true;
    XML_StopParser(p->xp, XML_FALSE);
}

static bool spend(px *p, size_t n) {
    if (p->t->items + n > TMX_MAX_ITEMS) {
        FAIL(p, "more than %u objects, tiles, properties and vertices in the map", TMX_MAX_ITEMS);
        return false;
    }
    p->t->items += n;
    return true;
}

/* ---- attributes ------------------------------------------------------------------------------ */

static const char *attr(const XML_Char **a, const char *name) {
    for (; a[0]; a += 2)
        if (strcmp(a[0], name) == 0) return a[1];
    return NULL;
}

static bool to_long(const char *s, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* An integer attribute in [lo, hi]; def when absent. */
static bool attr_int(px *p, const XML_Char **a, const char *name, long def, long lo, long hi,
                     long *out) {
    const char *s = attr(a, name);
    if (!s) {
        *out = def;
        return true;
    }
    if (!to_long(s, out) || *out < lo || *out > hi) {
        FAIL(p, "%s=\"%s\": not an integer in [%ld, %ld]", name, s, lo, hi);
        return false;
    }
    return true;
}

static bool to_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end || !isfinite(v) || fabs(v) > TMX_MAX_COORD)
        return false;
    *out = v;
    return true;
}

static bool attr_double(px *p, const XML_Char **a, const char *name, double def, double *out) {
    const char *s = attr(a, name);
    if (!s) {
        *out = def;
        return true;
    }
    if (!to_double(s, out)) {
        FAIL(p, "%s=\"%s\": not a number within +-%g", name, s, TMX_MAX_COORD);
        return false;
    }
    return true;
}

static bool attr_u32(px *p, const XML_Char **a, const char *name, uint32_t *out) {
    const char *s = attr(a, name);
    *out = 0;
    if (!s) return true;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > UINT32_MAX) {
        FAIL(p, "%s=\"%s\": not a 32-bit tile id", name, s);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static char *dup_or_fail(px *p, const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) FAIL(p, "out of memory");
    return d;
}

/* ---- growable arrays --------------------------------------------------------------------------
 */

/* Room for one more element in *items (count used); false (error written) when out of memory. */
static bool grow(px *p, void **items, size_t count, size_t size) {
    /* powers of two: realloc when count is 0 or one */
    if (count & (count - 1) && count != 0) return true;
    size_t cap = count ? count * 2 : 1;
    void *n = realloc(*items, cap * size);
    if (!n) {
        FAIL(p, "out of memory");
        return false;
    }
    *items = n;
    return true;
}

static void tile_free(tiled_tile *tl) {
    for (size_t i = 0; i < tl->nshapes; i++)
        tiled_object_free(&tl->shapes[i]);
    free(tl->shapes);
    tiled_props_free(&tl->props);
    memset(tl, 0, sizeof *tl);
}

static void tileset_free(tiled_tileset *ts) {
    free(ts->name);
    for (size_t i = 0; i < ts->ntiles; i++)
        tile_free(&ts->tiles[i]);
    free(ts->tiles);
    memset(ts, 0, sizeof *ts);
}

static void layer_free(tiled_layer *l) {
    free(l->name);
    tiled_props_free(&l->props);
    for (size_t i = 0; i < l->nchunks; i++)
        free(l->chunks[i].gids);
    free(l->chunks);
    for (size_t i = 0; i < l->nobjects; i++)
        tiled_object_free(&l->objects[i]);
    free(l->objects);
    memset(l, 0, sizeof *l);
}

/* Appends to dst a copy of each of src's properties whose name dst does not have (a child's own
 * properties win over its group's, an instance's over its template's). */
static bool props_merge_under(px *p, tiled_props *dst, const tiled_props *src) {
    for (size_t i = 0; i < src->count; i++) {
        if (tiled_prop_find(dst, src->items[i].name)) continue;
        if (!spend(p, 1) || !grow(p, (void **)&dst->items, dst->count, sizeof *dst->items))
            return false;
        tiled_prop *np = &dst->items[dst->count];
        np->type = src->items[i].type;
        np->name = dup_or_fail(p, src->items[i].name);
        np->value = np->name ? dup_or_fail(p, src->items[i].value) : NULL;
        if (!np->name || !np->value) {
            free(np->name);
            return false;
        }
        dst->count++;
    }
    return true;
}

static bool object_copy(px *p, tiled_object *dst, const tiled_object *src) {
    *dst = *src;
    dst->points = NULL;
    dst->type = dup_or_fail(p, src->type);
    dst->name = dup_or_fail(p, src->name);
    dst->props = (tiled_props){0};
    if (src->npoints) {
        dst->points = malloc(src->npoints * sizeof *dst->points);
        if (dst->points) memcpy(dst->points, src->points, src->npoints * sizeof *dst->points);
    }
    if (!dst->type || !dst->name || (src->npoints && !dst->points)) {
        if (!p->t->failed) FAIL(p, "out of memory");
        tiled_object_free(dst);
        return false;
    }
    if (!spend(p, src->npoints) || !props_merge_under(p, &dst->props, &src->props)) {
        tiled_object_free(dst);
        return false;
    }
    return true;
}

/* ---- elements -------------------------------------------------------------------------------- */

static void start_map(px *p, const XML_Char **a) {
    tiled_map *m = p->t->m;
    long v;
    m->place = (tiled_place){p->file, line_of(p)};
    m->orientation = dup_or_fail(p, attr(a, "orientation"));
    if (!m->orientation) return;
    const char *inf = attr(a, "infinite");
    if (inf && strcmp(inf, "0") != 0 && strcmp(inf, "1") != 0) {
        FAIL(p, "infinite=\"%s\": not 0 or 1", inf);
        return;
    }
    m->infinite = inf && strcmp(inf, "1") == 0;
    if (!attr_int(p, a, "width", 0, 0, INT32_MAX, &v)) return;
    m->width = (int)v;
    if (!attr_int(p, a, "height", 0, 0, INT32_MAX, &v)) return;
    m->height = (int)v;
    if (!attr_int(p, a, "tilewidth", 0, 0, 1 << 20, &v)) return;
    m->tilewidth = (int)v;
    if (!attr_int(p, a, "tileheight", 0, 0, 1 << 20, &v)) return;
    m->tileheight = (int)v;
}

/* A tileset's own attributes (inline, or the TSX's root). */
static void start_tileset_body(px *p, const XML_Char **a) {
    long v;
    memset(&p->ts, 0, sizeof p->ts);
    p->ts_open = true;
    p->ts.place = (tiled_place){p->file, line_of(p)};
    p->ts.name = dup_or_fail(p, attr(a, "name"));
    if (!p->ts.name) return;
    if (!attr_int(p, a, "tilewidth", 0, 0, 1 << 20, &v)) return;
    p->ts.tilewidth = (int)v;
    if (!attr_int(p, a, "tileheight", 0, 0, 1 << 20, &v)) return;
    p->ts.tileheight = (int)v;
    if (!attr_int(p, a, "tilecount", 0, 0, TILED_GID_MASK, &v)) return;
    p->ts.tilecount = (int)v;
    if (!attr_int(p, a, "columns", 0, 0, TILED_GID_MASK, &v)) return;
    p->ts.columns = (int)v;
}

static void push_tileset(px *p, tiled_tileset *ts, const char *source) {
    tmx *t = p->t;
    tiled_map *m = t->m;
    char *src_copy = NULL;
    if (source && !(src_copy = dup_or_fail(p, source))) return;
    if (!spend(p, 1) || !grow(p, (void **)&m->tilesets, m->ntilesets, sizeof *m->tilesets) ||
        !grow(p, (void **)&t->ts_sources, m->ntilesets, sizeof *t->ts_sources)) {
        free(src_copy);
        return;
    }
    m->tilesets[m->ntilesets] = *ts;
    t->ts_sources[m->ntilesets] = src_copy;
    m->ntilesets++;
    memset(ts, 0, sizeof *ts);
}

static bool is_json_name(const char *name) {
    size_t n = strlen(name);
    return (n >= 4 && strcasecmp(name + n - 4, ".tsj") == 0) ||
           (n >= 5 && strcasecmp(name + n - 5, ".json") == 0);
}

/* Without tiled_read's reader for JSON tilesets (a caller of tiled_read_tmx alone). */
static bool fail_refused_json_tileset(px *p, tiled_place from, const char *source) {
    fail_at(p, from.line, "tileset '%s' is JSON: read this map through tiled_read", source);
    return false;
}

static void start_tileset_in_map(px *p, const XML_Char **a) {
    long firstgid;
    if (!attr_int(p, a, "firstgid", 1, 1, TILED_GID_MASK, &firstgid)) return;
    const char *source = attr(a, "source");
    if (!source) {
        start_tileset_body(p, a);
        p->ts.firstgid = (uint32_t)firstgid;
        return;
    }
    const char *file;
    tiled_place from = {p->file, line_of(p)};
    tiled_tileset ts;
    memset(&ts, 0, sizeof ts);
    if (is_json_name(source)) { /* a tileset Tiled saved as JSON: the TMJ parser reads it */
        tiled_tileset_reader read = p->t->src->other_tileset;
        bool ok =
            read ? read(p->t->src, p->dir, source, p->t->m, from, &ts, p->t->err, p->t->err_size)
                 : fail_refused_json_tileset(p, from, source);
        size_t items = ts.ntiles;
        for (size_t i = 0; i < ts.ntiles; i++)
            items += ts.tiles[i].nshapes + ts.tiles[i].props.count;
        if (!ok || !spend(p, items)) {
            tileset_free(&ts);
            stop(p);
            return;
        }
        ts.firstgid = (uint32_t)firstgid;
        push_tileset(p, &ts, ts.place.file);
        tileset_free(&ts);
        return;
    }
    char *text = tiled_read_file(p->t->src, p->dir, source, "tileset", p->t->m, from, &file,
                                 p->t->err, p->t->err_size);
    if (!text) {
        stop(p);
        return;
    }
    bool ok = parse_file(p->t, FILE_TSX, file, text, &ts, NULL);
    free(text);
    if (!ok) {
        stop(p);
        return;
    }
    ts.firstgid = (uint32_t)firstgid;
    push_tileset(p, &ts, file);
    tileset_free(&ts);
}

static void start_tile(px *p, const XML_Char **a) {
    long id;
    memset(&p->tile, 0, sizeof p->tile);
    p->tile.place = (tiled_place){p->file, line_of(p)};
    if (!attr(a, "id")) {
        FAIL(p, "<tile> without an id");
        return;
    }
    if (!attr_int(p, a, "id", 0, 0, TILED_GID_MASK, &id)) return;
    p->tile.id = (uint32_t)id;
    p->tile_open = true;
}

static void end_tile(px *p) {
    p->tile_open = false;
    if (p->tile.nshapes == 0 && p->tile.props.count == 0) return; /* says nothing to us */
    if (!spend(p, 1) || !grow(p, (void **)&p->ts.tiles, p->ts.ntiles, sizeof *p->ts.tiles)) {
        tile_free(&p->tile);
        return;
    }
    p->ts.tiles[p->ts.ntiles++] = p->tile;
    memset(&p->tile, 0, sizeof p->tile);
}

static int tile_cmp(const void *a, const void *b) {
    uint32_t x = ((const tiled_tile *)a)->id, y = ((const tiled_tile *)b)->id;
    return x < y ? -1 : x > y;
}

static void end_tileset(px *p) {
    if (p->ts.ntiles > 1) qsort(p->ts.tiles, p->ts.ntiles, sizeof *p->ts.tiles, tile_cmp);
    for (size_t i = 1; i < p->ts.ntiles; i++)
        if (p->ts.tiles[i].id == p->ts.tiles[i - 1].id) {
            fail_at(p, p->ts.tiles[i].place.line, "tileset '%s': tile %u given twice", p->ts.name,
                    (unsigned)p->ts.tiles[i].id);
            return;
        }
    p->ts_open = false;
    if (p->kind == FILE_TSX)
        p->tileset_done = true;
    else
        push_tileset(p, &p->ts, NULL);
}

static const group_frame *group_top(const px *p) {
    return p->ngroups ? &p->groups[p->ngroups - 1] : NULL;
}

static void start_layer(px *p, const XML_Char **a, tiled_layer_kind kind) {
    long id;
    double ox, oy;
    memset(&p->layer, 0, sizeof p->layer);
    p->layer.kind = kind;
    p->layer.place = (tiled_place){p->file, line_of(p)};
    p->layer.name = dup_or_fail(p, attr(a, "name"));
    if (!p->layer.name) return;
    p->layer_open = true;
    if (!attr_int(p, a, "id", 0, 0, INT32_MAX, &id)) return;
    p->layer.id = (int)id;
    if (!attr_double(p, a, "offsetx", 0, &ox) || !attr_double(p, a, "offsety", 0, &oy)) return;
    const group_frame *g = group_top(p);
    p->layer_offx = ox + (g ? g->offx : 0);
    p->layer_offy = oy + (g ? g->offy : 0);
    p->layer.offsetx = p->layer_offx;
    p->layer.offsety = p->layer_offy;
    if (kind == TILED_LAYER_TILES && !p->t->m->infinite) {
        /* a finite map's layers are the map's size (Tiled writes it); anything else is corrupt */
        long w, h;
        if (!attr_int(p, a, "width", p->t->m->width, 0, INT32_MAX, &w) ||
            !attr_int(p, a, "height", p->t->m->height, 0, INT32_MAX, &h))
            return;
        if (w != p->t->m->width || h != p->t->m->height)
            FAIL(p, "%ld x %ld tiles in a %d x %d map", w, h, p->t->m->width, p->t->m->height);
    }
}

static void end_layer(px *p) {
    tiled_map *m = p->t->m;
    if (!spend(p, 1) || !grow(p, (void **)&m->layers, m->nlayers, sizeof *m->layers)) return;
    m->layers[m->nlayers++] = p->layer;
    memset(&p->layer, 0, sizeof p->layer);
    p->layer_open = false;
}

static void start_group(px *p, const XML_Char **a) {
    double ox, oy;
    if (!attr_double(p, a, "offsetx", 0, &ox) || !attr_double(p, a, "offsety", 0, &oy)) return;
    const group_frame *g = group_top(p);
    group_frame *f = &p->groups[p->ngroups++]; /* depth-bounded: at most TMX_MAX_DEPTH */
    f->offx = ox + (g ? g->offx : 0);
    f->offy = oy + (g ? g->offy : 0);
    f->first_layer = p->t->m->nlayers;
    f->props = (tiled_props){0};
}

static void end_group(px *p) {
    group_frame *f = &p->groups[--p->ngroups];
    tiled_map *m = p->t->m;
    /* inner groups end first, so a layer's nearest group's properties come before outer ones' */
    for (size_t i = f->first_layer; i < m->nlayers && !p->t->failed; i++)
        props_merge_under(p, &m->layers[i].props, &f->props);
    tiled_props_free(&f->props);
}

/* Allocates the chunk being read, width x height cells, within the layer's and the map's caps. */
static bool open_chunk(px *p, long x, long y, long w, long h) {
    uint64_t cells = (uint64_t)w * (uint64_t)h;
    uint64_t layer_cells = cells;
    for (size_t i = 0; i < p->layer.nchunks; i++)
        layer_cells += (uint64_t)p->layer.chunks[i].width * (uint64_t)p->layer.chunks[i].height;
    if (layer_cells > TMX_MAX_LAYER_CELLS) {
        FAIL(p, "%llu cells, more than the %u a layer may have", (unsigned long long)layer_cells,
             TMX_MAX_LAYER_CELLS);
        return false;
    }
    if (p->t->cells + cells > TMX_MAX_MAP_CELLS) {
        FAIL(p, "the map's tile layers have more than %u cells", TMX_MAX_MAP_CELLS);
        return false;
    }
    if (!spend(p, 1) ||
        !grow(p, (void **)&p->layer.chunks, p->layer.nchunks, sizeof *p->layer.chunks))
        return false;
    tiled_chunk *c = &p->layer.chunks[p->layer.nchunks];
    *c = (tiled_chunk){(int)x, (int)y, (int)w, (int)h, NULL};
    c->gids = calloc(cells ? (size_t)cells : 1, sizeof *c->gids);
    if (!c->gids) {
        FAIL(p, "out of memory");
        return false;
    }
    p->layer.nchunks++;
    p->t->cells += cells;
    p->chunk = c;
    p->chunk_cells = (size_t)cells;
    p->chunk_filled = 0;
    return true;
}

static void start_data(px *p, const XML_Char **a) {
    const char *enc = attr(a, "encoding"), *comp = attr(a, "compression");
    if ((enc && strlen(enc) >= sizeof p->encoding) ||
        (comp && strlen(comp) >= sizeof p->compression)) {
        FAIL(p, "unknown data encoding '%s' / compression '%s'", enc ? enc : "", comp ? comp : "");
        return;
    }
    snprintf(p->encoding, sizeof p->encoding, "%s", enc ? enc : "");
    snprintf(p->compression, sizeof p->compression, "%s", comp ? comp : "");
    if (!enc && comp) {
        FAIL(p, "compression '%s' without an encoding", comp);
        return;
    }
    p->data_line = line_of(p);
    p->chunk = NULL;
    if (p->layer.nchunks) {
        FAIL(p, "a second <data>");
        return;
    }
    tiled_map *m = p->t->m;
    if (!m->infinite) {
        if (!open_chunk(p, 0, 0, m->width, m->height)) return;
        p->collecting = enc != NULL;
        p->text_len = 0;
    }
}

/* The gids of the chunk being read from the collected text (encoded) or its <tile> elements. */
static void finish_chunk(px *p, int line) {
    if (!p->chunk) return;
    if (p->encoding[0]) {
        char why[256];
        if (!tiled_decode_data(p->text ? p->text : "", p->text_len, p->encoding, p->compression,
                               p->chunk->gids, p->chunk_cells, why, sizeof why))
            fail_at(p, line, "data: %s", why);
    } else if (p->chunk_filled != p->chunk_cells) {
        fail_at(p, line, "data: %zu <tile> elements where %zu are expected", p->chunk_filled,
                p->chunk_cells);
    }
    p->collecting = false;
    p->chunk = NULL;
}

static void start_chunk(px *p, const XML_Char **a) {
    if (!p->t->m->infinite) {
        FAIL(p, "a <chunk> in a finite map");
        return;
    }
    long x, y, w, h;
    const long pos = TMX_MAX_CHUNK_POS, size = TMX_MAX_LAYER_CELLS;
    if (!attr(a, "width") || !attr(a, "height")) {
        FAIL(p, "<chunk> without width and height");
        return;
    }
    if (!attr_int(p, a, "x", 0, -pos, pos, &x) || !attr_int(p, a, "y", 0, -pos, pos, &y) ||
        !attr_int(p, a, "width", 0, 1, size, &w) || !attr_int(p, a, "height", 0, 1, size, &h))
        return;
    if (!open_chunk(p, x, y, w, h)) return;
    p->data_line = line_of(p);
    p->collecting = p->encoding[0] != '\0';
    p->text_len = 0;
}

static void start_data_tile(px *p, const XML_Char **a) {
    if (!p->chunk || p->encoding[0]) {
        FAIL(p, "a <tile> in %s data", p->encoding[0] ? "encoded" : "chunked");
        return;
    }
    uint32_t gid;
    if (!attr_u32(p, a, "gid", &gid)) return;
    if (p->chunk_filled == p->chunk_cells) {
        FAIL(p, "data: more <tile> elements than the %zu cells", p->chunk_cells);
        return;
    }
    p->chunk->gids[p->chunk_filled++] = gid;
}

static const tmx_template *load_template(px *p, const char *ref);
static bool map_template_gid(px *p, const tmx_template *tp, uint32_t *gid);

static void start_object(px *p, const XML_Char **a, bool in_tile) {
    tiled_object *o = &p->obj;
    long id;
    memset(o, 0, sizeof *o);
    p->obj_open = true;
    p->obj_in_tile = in_tile;
    p->obj_shape = -1;
    p->obj_has_gid = false;
    if (!attr_int(p, a, "id", 0, 0, INT32_MAX, &id)) return;
    o->id = (int)id;
    o->place = (tiled_place){p->file, line_of(p)};
    const char *tref = attr(a, "template");
    if (tref) {
        if (p->kind == FILE_TX) {
            FAIL(p, "a template's object refers to a template");
            return;
        }
        const tmx_template *tp = load_template(p, tref);
        if (!tp) return;
        if (!object_copy(p, o, &tp->obj)) return;
        o->id = (int)id;
        o->place = (tiled_place){p->file, line_of(p)};
        p->obj_has_gid = tp->has_gid;
        /* the template numbers its tile in its own tileset; an instance's own gid= is the map's */
        if (tp->has_gid && !attr(a, "gid") && !map_template_gid(p, tp, &o->gid)) return;
    } else {
        o->type = dup_or_fail(p, "");
        o->name = dup_or_fail(p, "");
        if (!o->type || !o->name) return;
    }
    const char *type = attr(a, "type");
    if (!type) type = attr(a, "class");
    const char *name = attr(a, "name");
    if (type) {
        free(o->type);
        if (!(o->type = dup_or_fail(p, type))) return;
    }
    if (name) {
        free(o->name);
        if (!(o->name = dup_or_fail(p, name))) return;
    }
    /* the instance's attributes override the template's: each only where given */
    if (!attr_double(p, a, "x", o->x, &o->x) || !attr_double(p, a, "y", o->y, &o->y) ||
        !attr_double(p, a, "width", o->width, &o->width) ||
        !attr_double(p, a, "height", o->height, &o->height) ||
        !attr_double(p, a, "rotation", o->rotation, &o->rotation))
        return;
    if (attr(a, "gid")) {
        if (!attr_u32(p, a, "gid", &o->gid)) return;
        p->obj_has_gid = true;
    }
    if (!spend(p, 1)) return;
}

/* "x,y x,y ..." relative to the object. */
static void parse_points(px *p, const char *s) {
    tiled_object *o = &p->obj;
    free(o->points);
    o->points = NULL;
    o->npoints = 0;
    size_t n = 0;
    for (const char *c = s; *c; c++)
        n += *c == ',';
    if (n > TMX_MAX_POINTS) {
        FAIL(p, "more than %u points", TMX_MAX_POINTS);
        return;
    }
    if (n == 0) {
        FAIL(p, "points=\"%s\": no point", s);
        return;
    }
    if (!spend(p, n)) return;
    o->points = malloc(n * sizeof *o->points);
    char *copy = strdup(s);
    if (!o->points || !copy) {
        free(copy);
        FAIL(p, "out of memory");
        return;
    }
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *comma = strchr(tok, ',');
        if (comma) *comma = '\0';
        double x, y;
        if (!comma || k == n || !to_double(tok, &x) || !to_double(comma + 1, &y)) {
            if (comma) *comma = ',';
            FAIL(p, "points: bad point '%s'", tok);
            free(copy);
            return;
        }
        o->points[k++] = (tiled_point){x, y};
    }
    free(copy);
    if (k != n) {
        FAIL(p, "points=\"%s\": malformed", s);
        return;
    }
    o->npoints = k;
}

static void start_shape(px *p, const char *name, const XML_Char **a) {
    tiled_object_kind k;
    if (strcmp(name, "ellipse") == 0)
        k = TILED_OBJ_ELLIPSE;
    else if (strcmp(name, "point") == 0)
        k = TILED_OBJ_POINT;
    else if (strcmp(name, "polygon") == 0)
        k = TILED_OBJ_POLYGON;
    else if (strcmp(name, "polyline") == 0)
        k = TILED_OBJ_POLYLINE;
    else
        k = TILED_OBJ_TEXT;
    p->obj_shape = (int)k;
    if (k == TILED_OBJ_POLYGON || k == TILED_OBJ_POLYLINE) {
        const char *pts = attr(a, "points");
        if (!pts) {
            FAIL(p, "<%s> without points", name);
            return;
        }
        parse_points(p, pts);
    } else if (p->obj.npoints) {
        /* a template's polygon turned into another shape by its instance */
        free(p->obj.points);
        p->obj.points = NULL;
        p->obj.npoints = 0;
    }
}

/* A template's tileset the map does not list (Tiled saves such maps as they are: the editor loads
 * the template's tileset on its own): read it and give it the first gids after the map's. */
static bool add_template_tileset(px *p, const tmx_template *tp, size_t *index) {
    tiled_map *m = p->t->m;
    uint64_t next = 1;
    for (size_t i = 0; i < m->ntilesets; i++) {
        const tiled_tileset *ts = &m->tilesets[i];
        uint64_t end = (uint64_t)ts->firstgid + (uint64_t)ts->tilecount;
        if (ts->ntiles && ts->firstgid + (uint64_t)ts->tiles[ts->ntiles - 1].id + 1 > end)
            end = ts->firstgid + (uint64_t)ts->tiles[ts->ntiles - 1].id + 1;
        if (end > next) next = end;
    }
    const char *file;
    tiled_place from = {p->file, line_of(p)};
    char *text = tiled_read_file(p->t->src, "", tp->tileset, "template's tileset", m, from, &file,
                                 p->t->err, p->t->err_size);
    if (!text) {
        stop(p);
        return false;
    }
    tiled_tileset ts;
    memset(&ts, 0, sizeof ts);
    bool ok = parse_file(p->t, FILE_TSX, file, text, &ts, NULL);
    free(text);
    if (!ok) {
        stop(p);
        return false;
    }
    if (next + (uint64_t)ts.tilecount > TILED_GID_MASK) {
        tileset_free(&ts);
        FAIL(p, "template '%s': no gids left for its tileset '%s'", tp->file, tp->tileset);
        return false;
    }
    ts.firstgid = (uint32_t)next;
    size_t before = m->ntilesets;
    push_tileset(p, &ts, file);
    tileset_free(&ts);
    *index = before;
    return m->ntilesets > before;
}

/* A template's tile gid in the map's gids: the map's tileset read from the same file. */
static bool map_template_gid(px *p, const tmx_template *tp, uint32_t *gid) {
    const tiled_map *m = p->t->m;
    uint32_t flags = *gid & ~TILED_GID_MASK, local = *gid & TILED_GID_MASK;
    if (!tp->has_tileset || local < tp->firstgid) {
        FAIL(p, "template '%s': gid %u has no tileset in the template", tp->file, (unsigned)local);
        return false;
    }
    size_t i = 0;
    while (i < m->ntilesets &&
           !(p->t->ts_sources[i] && strcmp(p->t->ts_sources[i], tp->tileset) == 0))
        i++;
    if (i == m->ntilesets && !add_template_tileset(p, tp, &i)) return false;
    uint64_t g = (uint64_t)m->tilesets[i].firstgid + (local - tp->firstgid);
    if (g > TILED_GID_MASK) {
        FAIL(p, "template '%s': gid %u beyond the last gid", tp->file, (unsigned)local);
        return false;
    }
    *gid = flags | (uint32_t)g;
    return true;
}

static void end_object(px *p) {
    tiled_object *o = &p->obj;
    if (p->obj_shape >= 0)
        o->kind = (tiled_object_kind)p->obj_shape;
    else if (p->obj_has_gid && o->kind == TILED_OBJ_RECT)
        o->kind = TILED_OBJ_TILE;
    p->obj_open = false;
    if (p->kind == FILE_TX) {
        tiled_object_free(&p->tmpl->obj);
        p->tmpl->obj = *o;
        p->tmpl->has_gid = p->obj_has_gid;
        p->tmpl_done = true;
    } else if (p->obj_in_tile) {
        if (!grow(p, (void **)&p->tile.shapes, p->tile.nshapes, sizeof *p->tile.shapes)) {
            tiled_object_free(o);
            return;
        }
        p->tile.shapes[p->tile.nshapes++] = *o;
    } else {
        o->x += p->layer_offx;
        o->y += p->layer_offy;
        if (!grow(p, (void **)&p->layer.objects, p->layer.nobjects, sizeof *p->layer.objects)) {
            tiled_object_free(o);
            return;
        }
        p->layer.objects[p->layer.nobjects++] = *o;
    }
    memset(o, 0, sizeof *o);
}

static const tmx_template *load_template(px *p, const char *ref) {
    tmx *t = p->t;
    char resolved[TMX_PATH_MAX];
    if (tiled_resolve_path(p->dir, ref, resolved, sizeof resolved))
        for (size_t i = 0; i < t->ntemplates; i++)
            if (strcmp(t->templates[i].file, resolved) == 0) return &t->templates[i];
    size_t n = strlen(ref);
    if ((n >= 3 && strcasecmp(ref + n - 3, ".tj") == 0) ||
        (n >= 5 && strcasecmp(ref + n - 5, ".json") == 0)) {
        FAIL(p,
             "template \"%s\" is JSON (.tj), which an XML map does not read: save the template "
             "as .tx, or the map as .tmj",
             ref);
        return NULL;
    }
    const char *file;
    tiled_place from = {p->file, line_of(p)};
    /* the object is not in the list yet: name it in the error ourselves */
    char *text =
        tiled_read_file(t->src, p->dir, ref, "template", t->m, from, &file, t->err, t->err_size);
    if (!text) {
        stop(p);
        return NULL;
    }
    tmx_template tp;
    memset(&tp, 0, sizeof tp);
    tp.file = file;
    bool ok = parse_file(t, FILE_TX, file, text, NULL, &tp);
    free(text);
    if (ok && !grow(p, (void **)&t->templates, t->ntemplates, sizeof *t->templates)) ok = false;
    if (!ok) {
        tiled_object_free(&tp.obj);
        stop(p);
        return NULL;
    }
    t->templates[t->ntemplates] = tp;
    return &t->templates[t->ntemplates++];
}

static void start_template_tileset(px *p, const XML_Char **a) {
    long firstgid;
    if (!attr_int(p, a, "firstgid", 1, 1, TILED_GID_MASK, &firstgid)) return;
    const char *source = attr(a, "source");
    if (!source) {
        FAIL(p, "a template's <tileset> without a source");
        return;
    }
    if (!tiled_resolve_path(p->dir, source, p->tmpl->tileset, sizeof p->tmpl->tileset)) {
        FAIL(p, "tileset '%s': outside the map's directory tree", source);
        return;
    }
    p->tmpl->firstgid = (uint32_t)firstgid;
    p->tmpl->has_tileset = true;
}

static void start_property(px *p, const XML_Char **a) {
    const char *name = attr(a, "name");
    if (!name) {
        FAIL(p, "<property> without a name");
        return;
    }
    p->prop_keep = strncmp(name, "collide:", 8) == 0;
    if (!p->prop_keep) return;
    const char *type = attr(a, "type");
    tiled_prop_type pt = TILED_PROP_OTHER;
    if (!type || strcmp(type, "string") == 0)
        pt = TILED_PROP_STRING;
    else if (strcmp(type, "int") == 0)
        pt = TILED_PROP_INT;
    else if (strcmp(type, "float") == 0)
        pt = TILED_PROP_FLOAT;
    else if (strcmp(type, "bool") == 0)
        pt = TILED_PROP_BOOL;
    p->prop = (tiled_prop){dup_or_fail(p, name), pt, NULL};
    if (!p->prop.name) return;
    const char *value = attr(a, "value");
    if (value) {
        p->prop.value = dup_or_fail(p, value);
    } else { /* a multi-line string is written as the element's text */
        p->collecting = true;
        p->text_len = 0;
    }
}

static void end_property(px *p) {
    p->collecting = false;
    if (!p->prop_keep) return;
    p->prop_keep = false;
    tiled_prop pr = p->prop;
    memset(&p->prop, 0, sizeof p->prop);
    if (!pr.value) {
        pr.value = malloc(p->text_len + 1);
        if (pr.value) {
            if (p->text_len) memcpy(pr.value, p->text, p->text_len);
            pr.value[p->text_len] = '\0';
        }
    }
    if (!pr.value || !pr.name) {
        free(pr.name);
        free(pr.value);
        FAIL(p, "out of memory");
        return;
    }
    tiled_prop *old = (tiled_prop *)tiled_prop_find(&p->props, pr.name);
    if (old) { /* a name given twice: the last, as Tiled would read it */
        free(old->name);
        free(old->value);
        *old = pr;
        return;
    }
    if (!spend(p, 1) ||
        !grow(p, (void **)&p->props.items, p->props.count, sizeof *p->props.items)) {
        free(pr.name);
        free(pr.value);
        return;
    }
    p->props.items[p->props.count++] = pr;
}

static void end_properties(px *p, elem owner) {
    tiled_props got = p->props;
    p->props = (tiled_props){0};
    tiled_props *dst = NULL;
    switch (owner) {
    case EL_MAP:
        dst = &p->t->m->props;
        break;
    case EL_TILE:
        dst = &p->tile.props;
        break;
    case EL_LAYER:
    case EL_OBJECTGROUP:
        dst = &p->layer.props;
        break;
    case EL_GROUP:
        dst = &p->groups[p->ngroups - 1].props;
        break;
    case EL_OBJECT:
        /* the instance's own over its template's */
        props_merge_under(p, &got, &p->obj.props);
        dst = &p->obj.props;
        break;
    default:
        break;
    }
    if (!dst) {
        tiled_props_free(&got);
        return;
    }
    tiled_props_free(dst);
    *dst = got;
}

/* ---- expat callbacks ------------------------------------------------------------------------- */

static elem classify(const px *p, elem parent, const char *name, const XML_Char **a) {
    switch (parent) {
    case EL_MAP:
    case EL_GROUP:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        if (parent == EL_MAP && strcmp(name, "tileset") == 0)
            return attr(a, "source") ? EL_TILESET_REF : EL_TILESET;
        if (strcmp(name, "layer") == 0) return EL_LAYER;
        if (strcmp(name, "objectgroup") == 0) return EL_OBJECTGROUP;
        if (strcmp(name, "group") == 0) return EL_GROUP;
        return EL_SKIP; /* <imagelayer>, <editorsettings>, what newer versions add */
    case EL_TILESET:
        return strcmp(name, "tile") == 0 ? EL_TILE : EL_SKIP;
    case EL_TILE:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        if (strcmp(name, "objectgroup") == 0) return EL_TILE_OBJECTGROUP;
        return EL_SKIP;
    case EL_TILE_OBJECTGROUP:
        return strcmp(name, "object") == 0 ? EL_OBJECT : EL_SKIP;
    case EL_LAYER:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        return strcmp(name, "data") == 0 ? EL_DATA : EL_SKIP;
    case EL_DATA:
        if (strcmp(name, "chunk") == 0) return EL_CHUNK;
        return strcmp(name, "tile") == 0 ? EL_DATA_TILE : EL_SKIP;
    case EL_CHUNK:
        return strcmp(name, "tile") == 0 ? EL_DATA_TILE : EL_SKIP;
    case EL_OBJECTGROUP:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        return strcmp(name, "object") == 0 ? EL_OBJECT : EL_SKIP;
    case EL_OBJECT:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        if (strcmp(name, "ellipse") == 0 || strcmp(name, "point") == 0 ||
            strcmp(name, "polygon") == 0 || strcmp(name, "polyline") == 0 ||
            strcmp(name, "text") == 0)
            return EL_SHAPE;
        return EL_SKIP;
    case EL_TEMPLATE:
        if (strcmp(name, "tileset") == 0) return EL_TEMPLATE_TILESET;
        return strcmp(name, "object") == 0 ? EL_OBJECT : EL_SKIP;
    case EL_PROPERTIES:
        return strcmp(name, "property") == 0 ? EL_PROPERTY : EL_SKIP;
    default:
        (void)p;
        return EL_SKIP; /* a class property's members, shapes' content, ... */
    }
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **a) {
    px *p = ud;
    if (p->t->failed) return;
    if (p->depth == TMX_MAX_DEPTH) {
        FAIL(p, "elements nested deeper than %d", TMX_MAX_DEPTH);
        return;
    }
    elem e;
    if (p->depth == 0) {
        static const char *const roots[] = {"map", "tileset", "template"};
        static const elem kinds[] = {EL_MAP, EL_TILESET, EL_TEMPLATE};
        if (strcmp(name, roots[p->kind]) != 0) {
            FAIL(p, "<%s> where a Tiled <%s> is expected", name, roots[p->kind]);
            return;
        }
        e = kinds[p->kind];
    } else {
        e = classify(p, p->stack[p->depth - 1], name, a);
    }
    /* a class property's members are not its value */
    if (p->depth > 0 && p->stack[p->depth - 1] == EL_PROPERTY) {
        p->collecting = false;
        p->text_len = 0;
    }
    p->stack[p->depth++] = e;
    switch (e) {
    case EL_MAP:
        start_map(p, a);
        break;
    case EL_TILESET:
        if (p->kind == FILE_TSX)
            start_tileset_body(p, a);
        else
            start_tileset_in_map(p, a);
        break;
    case EL_TILESET_REF:
        start_tileset_in_map(p, a);
        break;
    case EL_TILE:
        start_tile(p, a);
        break;
    case EL_LAYER:
        start_layer(p, a, TILED_LAYER_TILES);
        break;
    case EL_OBJECTGROUP:
        start_layer(p, a, TILED_LAYER_OBJECTS);
        break;
    case EL_GROUP:
        start_group(p, a);
        break;
    case EL_DATA:
        start_data(p, a);
        break;
    case EL_CHUNK:
        start_chunk(p, a);
        break;
    case EL_DATA_TILE:
        start_data_tile(p, a);
        break;
    case EL_OBJECT:
        start_object(p, a, p->stack[p->depth - 2] == EL_TILE_OBJECTGROUP);
        break;
    case EL_SHAPE:
        start_shape(p, name, a);
        break;
    case EL_TEMPLATE_TILESET:
        start_template_tileset(p, a);
        break;
    case EL_PROPERTIES:
        tiled_props_free(&p->props);
        break;
    case EL_PROPERTY:
        start_property(p, a);
        break;
    default:
        break;
    }
}

static void on_end(void *ud, const XML_Char *name) {
    px *p = ud;
    (void)name;
    if (p->t->failed || p->depth == 0) return;
    elem e = p->stack[--p->depth];
    switch (e) {
    case EL_TILESET:
        end_tileset(p);
        break;
    case EL_TILE:
        end_tile(p);
        break;
    case EL_LAYER:
    case EL_OBJECTGROUP:
        end_layer(p);
        break;
    case EL_GROUP:
        end_group(p);
        break;
    case EL_DATA:
        if (!p->t->m->infinite) finish_chunk(p, p->data_line);
        break;
    case EL_CHUNK:
        finish_chunk(p, p->data_line);
        break;
    case EL_OBJECT:
        end_object(p);
        break;
    case EL_PROPERTY:
        end_property(p);
        break;
    case EL_PROPERTIES:
        end_properties(p, p->stack[p->depth - 1]);
        break;
    default:
        break;
    }
}

static void on_text(void *ud, const XML_Char *s, int len) {
    px *p = ud;
    if (p->t->failed || !p->collecting || len <= 0) return;
    size_t need = p->text_len + (size_t)len + 1;
    if (need > p->text_cap) {
        size_t cap = p->text_cap ? p->text_cap : 256;
        while (cap < need)
            cap *= 2;
        char *n = realloc(p->text, cap);
        if (!n) {
            FAIL(p, "out of memory");
            return;
        }
        p->text = n;
        p->text_cap = cap;
    }
    memcpy(p->text + p->text_len, s, (size_t)len);
    p->text_len += (size_t)len;
    p->text[p->text_len] = '\0';
}

/* Entities could expand a small file into a huge one; Tiled never declares any. */
static void on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
                      int value_len, const XML_Char *base, const XML_Char *system_id,
                      const XML_Char *public_id, const XML_Char *notation) {
    px *p = ud;
    (void)is_param, (void)value, (void)value_len, (void)base, (void)system_id, (void)public_id;
    (void)notation;
    FAIL(p, "entity declaration '%s': not allowed in a Tiled file", name);
}

static void px_cleanup(px *p) {
    free(p->text);
    tiled_props_free(&p->props);
    free(p->prop.name);
    free(p->prop.value);
    tileset_free(&p->ts);
    tile_free(&p->tile);
    layer_free(&p->layer);
    tiled_object_free(&p->obj);
    for (int i = 0; i < p->ngroups; i++)
        tiled_props_free(&p->groups[i].props);
}

/* Parses one file of the map. TSX: its tileset into *ts_out; TX: its template into *tmpl_out. */
static bool parse_file(tmx *t, file_kind kind, const char *file, const char *text,
                       tiled_tileset *ts_out, tmx_template *tmpl_out) {
    px *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(t->err, t->err_size, "%s:0: out of memory", file);
        t->failed = true;
        return false;
    }
    p->t = t;
    p->kind = kind;
    p->file = file;
    p->tmpl = tmpl_out;
    /* references are relative to this file's directory, itself relative to the map's */
    const char *slash = kind == FILE_TMX ? NULL : strrchr(file, '/');
    if (slash) snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - file), file);
    p->xp = XML_ParserCreate(NULL);
    if (!p->xp) {
        snprintf(t->err, t->err_size, "%s:0: out of memory", file);
        t->failed = true;
        free(p);
        return false;
    }
    XML_SetUserData(p->xp, p);
    XML_SetElementHandler(p->xp, on_start, on_end);
    XML_SetCharacterDataHandler(p->xp, on_text);
    XML_SetEntityDeclHandler(p->xp, on_entity);
    size_t len = strlen(text);
    enum XML_Status st = XML_Parse(p->xp, text, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK && !t->failed) {
        snprintf(t->err, t->err_size, "%s:%lu: XML: %s (column %lu)", file,
                 (unsigned long)XML_GetCurrentLineNumber(p->xp),
                 XML_ErrorString(XML_GetErrorCode(p->xp)),
                 (unsigned long)XML_GetCurrentColumnNumber(p->xp) + 1);
        t->failed = true;
    }
    if (!t->failed && kind == FILE_TSX && !p->tileset_done) {
        snprintf(t->err, t->err_size, "%s:0: no <tileset>", file);
        t->failed = true;
    }
    if (!t->failed && kind == FILE_TX && !p->tmpl_done) {
        snprintf(t->err, t->err_size, "%s:0: a template without an <object>", file);
        t->failed = true;
    }
    if (!t->failed && kind == FILE_TSX) {
        *ts_out = p->ts;
        memset(&p->ts, 0, sizeof p->ts);
    }
    XML_ParserFree(p->xp);
    px_cleanup(p);
    free(p);
    return !t->failed;
}

/* Tilesets in firstgid order (the converter finds a gid's tileset by it), with their sources. */
static void sort_tilesets(tmx *t) {
    tiled_map *m = t->m;
    for (size_t i = 1; i < m->ntilesets; i++)
        for (size_t j = i; j > 0 && m->tilesets[j].firstgid < m->tilesets[j - 1].firstgid; j--) {
            tiled_tileset ts = m->tilesets[j];
            m->tilesets[j] = m->tilesets[j - 1];
            m->tilesets[j - 1] = ts;
            char *s = t->ts_sources[j];
            t->ts_sources[j] = t->ts_sources[j - 1];
            t->ts_sources[j - 1] = s;
        }
}

bool tiled_read_tsx(const tiled_source *src, const char *base_dir, const char *ref, tiled_map *m,
                    tiled_place from, tiled_tileset *out, char *err, size_t err_size) {
    tmx t = {.src = src, .m = m, .err = err, .err_size = err_size};
    const char *file;
    char *text = tiled_read_file(src, base_dir, ref, "tileset", m, from, &file, err, err_size);
    memset(out, 0, sizeof *out);
    bool ok = text && parse_file(&t, FILE_TSX, file, text, out, NULL);
    free(text);
    if (ok) out->place = (tiled_place){file, 0};
    /* a tileset names no other file: nothing else of t's was taken */
    return ok;
}

tiled_map *tiled_read_tmx(const tiled_source *src, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    char scratch[1];
    if (!err || !err_size) {
        err = scratch;
        err_size = sizeof scratch;
    }
    tiled_map *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_size, "%s:0: out of memory", src->path);
        return NULL;
    }
    tmx t = {.src = src, .m = m, .err = err, .err_size = err_size};
    char *text = tiled_read_map_text(src, m, err, err_size);
    bool ok = text && parse_file(&t, FILE_TMX, m->files[0], text, NULL, NULL);
    free(text);
    if (ok) sort_tilesets(&t);
    for (size_t i = 0; i < m->ntilesets; i++)
        free(t.ts_sources[i]);
    free(t.ts_sources);
    for (size_t i = 0; i < t.ntemplates; i++)
        tiled_object_free(&t.templates[i].obj);
    free(t.templates);
    if (!ok) {
        tiled_free(m);
        return NULL;
    }
    return m;
}

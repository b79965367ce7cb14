/* world_tiled_tmx: Tiled's XML formats (TMX maps, TSX tilesets, TX templates) read through expat
 * into the model of tiled.h, faithfully: nothing is interpreted beyond what the file says (units,
 * flips and meaning are world_tiled.c's). Each file is one expat parse driven by a stack of the
 * elements it is inside; an element we do not read is skipped with everything under it, so that
 * what newer Tiled versions add is ignored rather than misread. Every size is bounded before it is
 * allocated, so a corrupt or hostile map gives an error, never a crash or unbounded memory.
 *
 * This file is the driver: one file's expat parse, the dispatch of each element to its handlers
 * (world_tiled_tmx_{tilesets,layers,objects,props}.c, sharing internal/tiled_tmx.h) and the map's
 * own element; the handlers read nested files through tmx.read_nested, which is parse_file. */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmx.h"

/* ---- the map element ------------------------------------------------------------------------- */

static void start_map(px *p, const XML_Char **a) {
    tiled_map *m = p->t->m;
    long v;
    m->place = (tiled_place){p->file, tmx_line_of(p)};
    m->orientation = tmx_dup_or_fail(p, tmx_attr(a, "orientation"));
    if (!m->orientation) return;
    const char *inf = tmx_attr(a, "infinite");
    if (inf && strcmp(inf, "0") != 0 && strcmp(inf, "1") != 0) {
        FAIL(p, "infinite=\"%s\": not 0 or 1", inf);
        return;
    }
    m->infinite = inf && strcmp(inf, "1") == 0;
    if (!tmx_attr_int(p, a, "width", 0, 0, INT32_MAX, &v)) return;
    m->width = (int)v;
    if (!tmx_attr_int(p, a, "height", 0, 0, INT32_MAX, &v)) return;
    m->height = (int)v;
    if (!tmx_attr_int(p, a, "tilewidth", 0, 0, 1 << 20, &v)) return;
    m->tilewidth = (int)v;
    if (!tmx_attr_int(p, a, "tileheight", 0, 0, 1 << 20, &v)) return;
    m->tileheight = (int)v;
}

/* ---- expat callbacks ------------------------------------------------------------------------- */

static elem classify(const px *p, elem parent, const char *name, const XML_Char **a) {
    switch (parent) {
    case EL_MAP:
    case EL_GROUP:
        if (strcmp(name, "properties") == 0) return EL_PROPERTIES;
        if (parent == EL_MAP && strcmp(name, "tileset") == 0)
            return tmx_attr(a, "source") ? EL_TILESET_REF : EL_TILESET;
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
            tmx_start_tileset_body(p, a);
        else
            tmx_start_tileset_in_map(p, a);
        break;
    case EL_TILESET_REF:
        tmx_start_tileset_in_map(p, a);
        break;
    case EL_TILE:
        tmx_start_tile(p, a);
        break;
    case EL_LAYER:
        tmx_start_layer(p, a, TILED_LAYER_TILES);
        break;
    case EL_OBJECTGROUP:
        tmx_start_layer(p, a, TILED_LAYER_OBJECTS);
        break;
    case EL_GROUP:
        tmx_start_group(p, a);
        break;
    case EL_DATA:
        tmx_start_data(p, a);
        break;
    case EL_CHUNK:
        tmx_start_chunk(p, a);
        break;
    case EL_DATA_TILE:
        tmx_start_data_tile(p, a);
        break;
    case EL_OBJECT:
        tmx_start_object(p, a, p->stack[p->depth - 2] == EL_TILE_OBJECTGROUP);
        break;
    case EL_SHAPE:
        tmx_start_shape(p, name, a);
        break;
    case EL_TEMPLATE_TILESET:
        tmx_start_template_tileset(p, a);
        break;
    case EL_PROPERTIES:
        tiled_props_free(&p->props);
        break;
    case EL_PROPERTY:
        tmx_start_property(p, a);
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
        tmx_end_tileset(p);
        break;
    case EL_TILE:
        tmx_end_tile(p);
        break;
    case EL_LAYER:
    case EL_OBJECTGROUP:
        tmx_end_layer(p);
        break;
    case EL_GROUP:
        tmx_end_group(p);
        break;
    case EL_DATA:
        if (!p->t->m->infinite) tmx_finish_chunk(p, p->data_line);
        break;
    case EL_CHUNK:
        tmx_finish_chunk(p, p->data_line);
        break;
    case EL_OBJECT:
        tmx_end_object(p);
        break;
    case EL_PROPERTY:
        tmx_end_property(p);
        break;
    case EL_PROPERTIES:
        tmx_end_properties(p, p->stack[p->depth - 1]);
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
    tmx_tileset_free(&p->ts);
    tmx_tile_free(&p->tile);
    tmx_layer_free(&p->layer);
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

bool tiled_read_tsx(const tiled_source *src, const char *base_dir, const char *ref, tiled_map *m,
                    tiled_place from, tiled_tileset *out, char *err, size_t err_size) {
    tmx t = {.src = src, .m = m, .err = err, .err_size = err_size, .read_nested = parse_file};
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
    tmx t = {.src = src, .m = m, .err = err, .err_size = err_size, .read_nested = parse_file};
    char *text = tiled_read_map_text(src, m, err, err_size);
    bool ok = text && parse_file(&t, FILE_TMX, m->files[0], text, NULL, NULL);
    free(text);
    uint32_t dup;
    if (ok && !tiled_sort_tilesets(m, t.ts_sources, &dup)) {
        snprintf(err, err_size, "%s:0: two tilesets start at gid %u", m->files[0], dup);
        ok = false;
    }
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

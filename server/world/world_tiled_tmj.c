/* world_tiled_tmj: a Tiled JSON map (TMJ, with TSJ tilesets and TJ templates) into the model of
 * tiled.h, through jansson. Faithful, not interpreting: what the file says is copied into the
 * model, with groups flattened, templates applied and external files read in; meaning (units, y
 * flip, orientation) is world_tiled.c's.
 *
 * jansson gives a syntax error's line and column but no position for a value, so an error of
 * meaning names its place instead: the layer and the object or tile id, at line 0 (tiled.h).
 *
 * Everything is bounded before it is allocated (TMJ_MAX_*): a map is untrusted input (CreateRoom
 * takes one from any client with a --world-dir), and a small file can ask for a huge layer. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled.h"
#include "world_load.h"

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

static bool fail(tmj_ctx *c, tiled_place at, const char *fmt, ...) {
    if (c->err && c->err_size) {
        int used =
            snprintf(c->err, c->err_size, "%s:%d: ", at.file ? at.file : c->src->path, at.line);
        if (used >= 0 && (size_t)used < c->err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + used, c->err_size - (size_t)used, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}

static bool oom(tmj_ctx *c, tiled_place at) { return fail(c, at, "out of memory"); }

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* ---- values ---------------------------------------------------------------------------------- */

/* An integer member in [lo, hi]; def when absent and not required. */
static bool get_int(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                    const char *key, bool required, long long def, long long lo, long long hi,
                    long long *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) return fail(c, at, "%s: \"%s\" is missing", where, key);
        *out = def;
        return true;
    }
    if (!json_is_integer(v)) return fail(c, at, "%s: \"%s\" must be an integer", where, key);
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return fail(c, at, "%s: \"%s\" is %lld, not in [%lld, %lld]", where, key, x, lo, hi);
    *out = x;
    return true;
}

static bool get_number(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                       const char *key, double def, double *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_number(v)) return fail(c, at, "%s: \"%s\" must be a number", where, key);
    double x = json_number_value(v);
    if (!(fabs(x) <= TMJ_MAX_COORD))
        return fail(c, at, "%s: \"%s\" is %g, beyond +-%g", where, key, x, TMJ_MAX_COORD);
    *out = x;
    return true;
}

static bool get_bool(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                     const char *key, bool *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = false;
        return true;
    }
    if (!json_is_boolean(v)) return fail(c, at, "%s: \"%s\" must be true or false", where, key);
    *out = json_is_true(v);
    return true;
}

/* A string member, borrowed from the document; def when absent. */
static bool get_string(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                       const char *key, const char *def, const char **out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_string(v)) return fail(c, at, "%s: \"%s\" must be a string", where, key);
    if (json_string_length(v) > TMJ_MAX_STRING ||
        strlen(json_string_value(v)) != json_string_length(v))
        return fail(c, at, "%s: \"%s\" is longer than %u bytes or holds a NUL", where, key,
                    TMJ_MAX_STRING);
    *out = json_string_value(v);
    return true;
}

static bool dup_string(tmj_ctx *c, tiled_place at, const char *s, char **out) {
    *out = strdup(s);
    return *out ? true : oom(c, at);
}

/* The shortest text that reads back as x: what Tiled (Qt) writes for a double, so a value reads
 * the same from TMJ as from TMX, where it is text already. */
static void format_double(double x, char *buf, size_t size) {
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, x);
        if (strtod(buf, NULL) == x) return;
    }
}

/* ---- properties ------------------------------------------------------------------------------ */

static const char *const tmj_prop_prefix = "collide:";

/* Tiled's "properties": [{"name", "type", "value"}]. Only collide: names are kept (others are not
 * ours to judge); their value must match their type. */
static bool parse_props(tmj_ctx *c, tiled_place at, const char *where, const json_t *owner,
                        tiled_props *out) {
    const json_t *arr = json_object_get(owner, "properties");
    if (!arr) return true;
    if (!json_is_array(arr))
        return fail(c, at, "%s: \"properties\" must be an array of {name, type, value}", where);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_PROPS)
        return fail(c, at, "%s: %zu properties, at most %u", where, n, TMJ_MAX_PROPS);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        const char *name;
        if (!json_is_object(p)) return fail(c, at, "%s: a property must be an object", where);
        if (!get_string(c, at, where, p, "name", NULL, &name)) return false;
        if (!name) return fail(c, at, "%s: a property without a \"name\"", where);
        if (strncmp(name, tmj_prop_prefix, strlen(tmj_prop_prefix)) == 0) keep++;
    }
    if (keep == 0) return true;
    out->items = calloc(keep, sizeof *out->items);
    if (!out->items) return oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        const char *name = json_string_value(json_object_get(p, "name"));
        if (strncmp(name, tmj_prop_prefix, strlen(tmj_prop_prefix)) != 0) continue;
        if (tiled_prop_find(out, name))
            return fail(c, at, "%s: property \"%s\" twice", where, name);
        const char *type;
        if (!get_string(c, at, where, p, "type", "string", &type)) return false;
        const json_t *v = json_object_get(p, "value");
        tiled_prop_type kind = TILED_PROP_OTHER;
        char num[64];
        const char *text = NULL;
        char *dumped = NULL;
        bool ok = true;
        if (strcmp(type, "string") == 0) {
            kind = TILED_PROP_STRING;
            ok = json_is_string(v);
            text = json_string_value(v);
        } else if (strcmp(type, "int") == 0) {
            kind = TILED_PROP_INT;
            ok = json_is_integer(v);
            if (ok) snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
            text = num;
        } else if (strcmp(type, "float") == 0) {
            kind = TILED_PROP_FLOAT;
            ok = json_is_number(v) && isfinite(json_number_value(v));
            if (json_is_integer(v))
                snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
            else if (ok)
                format_double(json_number_value(v), num, sizeof num);
            text = num;
        } else if (strcmp(type, "bool") == 0) {
            kind = TILED_PROP_BOOL;
            ok = json_is_boolean(v);
            text = json_is_true(v) ? "true" : "false";
        } else if (json_is_string(v)) { /* color, file */
            text = json_string_value(v);
        } else if (json_is_integer(v)) { /* object */
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
            text = num;
        } else if (json_is_real(v)) {
            format_double(json_real_value(v), num, sizeof num);
            text = num;
        } else if (json_is_boolean(v)) {
            text = json_is_true(v) ? "true" : "false";
        } else if (v) { /* class: its members, as JSON */
            dumped = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
            if (!dumped) return oom(c, at);
            text = dumped;
        } else {
            ok = false;
        }
        if (!ok) {
            free(dumped);
            return fail(c, at, "%s: property \"%s\" of type %s has a value of another type", where,
                        name, type);
        }
        if (strlen(text) > TMJ_MAX_STRING) {
            free(dumped);
            return fail(c, at, "%s: property \"%s\" is longer than %u bytes", where, name,
                        TMJ_MAX_STRING);
        }
        tiled_prop *dst = &out->items[out->count];
        dst->name = strdup(name);
        dst->value = dumped ? dumped : strdup(text);
        dst->type = kind;
        if (dst->name && dst->value) {
            out->count++;
        } else {
            free(dst->name);
            free(dst->value);
            dst->name = dst->value = NULL;
            return oom(c, at);
        }
    }
    return true;
}

/* Appends to dst copies of under's properties whose names dst lacks (dst's own win). */
static bool merge_props_under(tmj_ctx *c, tiled_place at, tiled_props *dst,
                              const tiled_props *under) {
    if (!under || under->count == 0) return true;
    tiled_prop *items = realloc(dst->items, (dst->count + under->count) * sizeof *items);
    if (!items) return oom(c, at);
    dst->items = items;
    size_t own = dst->count;
    for (size_t i = 0; i < under->count; i++) {
        bool shadowed = false;
        for (size_t k = 0; k < own; k++)
            if (strcmp(dst->items[k].name, under->items[i].name) == 0) shadowed = true;
        if (shadowed) continue;
        tiled_prop *p = &dst->items[dst->count];
        p->name = strdup(under->items[i].name);
        p->value = strdup(under->items[i].value);
        p->type = under->items[i].type;
        if (!p->name || !p->value) {
            free(p->name);
            free(p->value);
            return oom(c, at);
        }
        dst->count++;
    }
    return true;
}

/* ---- files ----------------------------------------------------------------------------------- */

/* ref, written in a file whose directory is base_dir (relative to the map's, "" for the map's
 * own), as a path relative to the map's directory with "." and ".." resolved. Refused when
 * absolute or when it climbs out of the map's directory: the map's tree is all a map may read. */
static bool resolve_path(tmj_ctx *c, tiled_place at, const char *base_dir, const char *ref,
                         char **out) {
    if (ref[0] == '\0') return fail(c, at, "an empty file name");
    if (ref[0] == '/' || ref[0] == '\\' || strchr(ref, ':'))
        return fail(c, at, "\"%s\": an absolute path (files must lie in the map's tree)", ref);
    size_t blen = strlen(base_dir), rlen = strlen(ref);
    if (blen + rlen + 2 > TMJ_MAX_PATH) return fail(c, at, "\"%s\": path too long", ref);
    char joined[TMJ_MAX_PATH];
    size_t jlen = 0;
    memcpy(joined, base_dir, blen);
    jlen += blen;
    if (blen) joined[jlen++] = '/';
    memcpy(joined + jlen, ref, rlen + 1);
    /* component stack over the joined path, written back in place */
    char result[TMJ_MAX_PATH];
    size_t rlen_out = 0;
    const char *s = joined;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.')) {
            /* "a//b", "./b": nothing */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            if (rlen_out == 0) return fail(c, at, "\"%s\" is outside the map's directory", ref);
            while (rlen_out > 0 && result[rlen_out - 1] != '/')
                rlen_out--;
            if (rlen_out > 0) rlen_out--; /* the slash before the popped component */
        } else {
            if (rlen_out) result[rlen_out++] = '/';
            memcpy(result + rlen_out, s, n);
            rlen_out += n;
        }
        s += n + (e ? 1 : 0);
    }
    if (rlen_out == 0) return fail(c, at, "\"%s\" names the map's directory", ref);
    result[rlen_out] = '\0';
    *out = strdup(result);
    return *out ? true : oom(c, at);
}

/* The directory part of a normalized path ("" for a file in the map's directory). */
static void dir_of(const char *path, char *out, size_t size) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= size) n = size - 1;
    memcpy(out, path, n);
    out[n] = '\0';
}

/* Reads and parses an external JSON file (normalized path); *file is its name in m->files. */
static json_t *load_external(tmj_ctx *c, tiled_place from, const char *path, const char **file) {
    if (c->nexternal >= TMJ_MAX_FILES) {
        fail(c, from, "more than %u external files", TMJ_MAX_FILES);
        return NULL;
    }
    /* path is already relative to the map's directory (normalised here): base "" */
    char *text = tiled_read_file(c->src, "", path, "file", c->m, from, file, c->err, c->err_size);
    if (!text) return NULL;
    c->nexternal++;
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root) {
        tiled_place at = {*file, jerr.line > 0 ? jerr.line : 0};
        fail(c, at, "column %d: %s", jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        tiled_place at = {*file, 0};
        fail(c, at, "not a JSON object");
        json_decref(root);
        return NULL;
    }
    return root;
}

/* ---- objects --------------------------------------------------------------------------------- */

static const tmj_template *get_template(tmj_ctx *c, tiled_place at, const char *where,
                                        const char *path) {
    for (size_t i = 0; i < c->ntemplates; i++)
        if (strcmp(c->templates[i].path, path) == 0) return &c->templates[i];
    if (ends_with(path, ".tx")) {
        fail(c, at,
             "%s: template \"%s\" is XML (.tx), which a JSON map does not read: save the "
             "template as .tj, or the map as .tmx",
             where, path);
        return NULL;
    }
    tmj_template *ts = realloc(c->templates, (c->ntemplates + 1) * sizeof *ts);
    if (!ts) {
        oom(c, at);
        return NULL;
    }
    c->templates = ts;
    tmj_template *t = &ts[c->ntemplates];
    memset(t, 0, sizeof *t);
    const char *file = NULL;
    json_t *root = load_external(c, at, path, &file);
    if (!root) return NULL;
    t->root = root;
    t->file = file;
    t->path = strdup(path);
    c->ntemplates++; /* owned from here: freed at the end */
    if (!t->path) {
        oom(c, at);
        return NULL;
    }
    tiled_place tat = {file, 0};
    const char *type;
    if (!get_string(c, tat, "template", root, "type", "template", &type)) return NULL;
    if (strcmp(type, "template") != 0) {
        fail(c, tat, "\"type\" is \"%s\", not \"template\"", type);
        return NULL;
    }
    t->object = json_object_get(root, "object");
    if (!json_is_object(t->object)) {
        fail(c, tat, "template: \"object\" must be an object");
        return NULL;
    }
    if (json_object_get(t->object, "template")) {
        fail(c, tat, "template: a template's object cannot itself use a template");
        return NULL;
    }
    const json_t *tileset = json_object_get(root, "tileset");
    if (tileset) {
        const char *source;
        long long firstgid;
        if (!json_is_object(tileset)) {
            fail(c, tat, "template: \"tileset\" must be an object");
            return NULL;
        }
        if (!get_int(c, tat, "template tileset", tileset, "firstgid", true, 0, 1, TILED_GID_MASK,
                     &firstgid) ||
            !get_string(c, tat, "template tileset", tileset, "source", NULL, &source))
            return NULL;
        if (!source) {
            fail(c, tat, "template tileset: \"source\" is missing");
            return NULL;
        }
        char dir[TMJ_MAX_PATH];
        dir_of(path, dir, sizeof dir);
        if (!resolve_path(c, tat, dir, source, &t->tileset_path)) return NULL;
        t->tileset_firstgid = (uint32_t)firstgid;
    }
    return t;
}

/* A template's tile gid, numbered in its own tileset reference, as the map numbers it. */
static bool map_template_gid(tmj_ctx *c, tiled_place at, const char *where, const tmj_template *t,
                             uint32_t gid, uint32_t *out) {
    if (!t->tileset_path)
        return fail(c, at, "%s: template \"%s\" places a tile but names no tileset", where,
                    t->path);
    uint32_t local = gid & TILED_GID_MASK;
    if (local < t->tileset_firstgid)
        return fail(c, at, "%s: template \"%s\": gid %u is below its tileset's firstgid %u", where,
                    t->path, local, t->tileset_firstgid);
    for (size_t i = 0; i < c->m->ntilesets; i++) {
        if (!c->tileset_paths[i] || strcmp(c->tileset_paths[i], t->tileset_path) != 0) continue;
        uint64_t mapped = (uint64_t)c->m->tilesets[i].firstgid + (local - t->tileset_firstgid);
        if (mapped > TILED_GID_MASK)
            return fail(c, at, "%s: template \"%s\": gid out of range", where, t->path);
        *out = (gid & ~TILED_GID_MASK) | (uint32_t)mapped;
        return true;
    }
    return fail(c, at, "%s: template \"%s\" uses tileset \"%s\", which the map does not", where,
                t->path, t->tileset_path);
}

static bool parse_points(tmj_ctx *c, tiled_place at, const char *where, const json_t *arr,
                         const char *key, tiled_object *o) {
    if (!json_is_array(arr))
        return fail(c, at, "%s: \"%s\" must be an array of {x, y}", where, key);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_POINTS)
        return fail(c, at, "%s: %zu points, at most %u", where, n, TMJ_MAX_POINTS);
    if (n == 0) return true;
    o->points = calloc(n, sizeof *o->points);
    if (!o->points) return oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        if (!json_is_object(p) || !json_is_number(json_object_get(p, "x")) ||
            !json_is_number(json_object_get(p, "y")))
            return fail(c, at, "%s: \"%s\" point %zu must be {\"x\": number, \"y\": number}", where,
                        key, i);
        if (!get_number(c, at, where, p, "x", 0, &o->points[i].x) ||
            !get_number(c, at, where, p, "y", 0, &o->points[i].y))
            return false;
        o->npoints = i + 1;
    }
    return true;
}

/* One object: a layer's (offset added) or a tile's collision shape. base_dir: the directory its
 * file lies in, for its template. */
static bool parse_object(tmj_ctx *c, tiled_place at, const char *owner, const json_t *in,
                         const char *base_dir, double offx, double offy, tiled_object *o) {
    o->place = at;
    char where[512];
    if (!json_is_object(in)) return fail(c, at, "%s: an object must be a JSON object", owner);
    if (++c->total_objects > TMJ_MAX_OBJECTS)
        return fail(c, at, "%s: more than %u objects", owner, TMJ_MAX_OBJECTS);
    long long id;
    if (!get_int(c, at, owner, in, "id", false, 0, 0, INT32_MAX, &id)) return false;
    o->id = (int)id;
    snprintf(where, sizeof where, "%s, object %d", owner, o->id);

    /* A template instance: the template's object, the instance's members over it, and its
     * properties under the instance's (Tiled's own rule for overrides). */
    const char *tref;
    if (!get_string(c, at, where, in, "template", NULL, &tref)) return false;
    const tmj_template *t = NULL;
    json_t *merged = NULL;
    const json_t *obj = in;
    if (tref) {
        char *path = NULL;
        if (!resolve_path(c, at, base_dir, tref, &path)) return false;
        t = get_template(c, at, where, path);
        free(path);
        if (!t) return false;
        merged = json_deep_copy(t->object);
        if (!merged || json_object_update(merged, (json_t *)in) != 0) {
            json_decref(merged);
            return oom(c, at);
        }
        json_object_del(merged, "properties");
        json_object_del(merged, "template");
        obj = merged;
    }
    bool ok = false;
    const char *type, *cls, *name;
    bool ellipse = false, point = false;
    const json_t *gid = json_object_get(obj, "gid");
    if (!get_string(c, at, where, obj, "type", NULL, &type) ||
        !get_string(c, at, where, obj, "class", "", &cls) ||
        !get_string(c, at, where, obj, "name", "", &name) ||
        !dup_string(c, at, type ? type : cls, &o->type) || !dup_string(c, at, name, &o->name) ||
        !get_number(c, at, where, obj, "x", 0, &o->x) ||
        !get_number(c, at, where, obj, "y", 0, &o->y) ||
        !get_number(c, at, where, obj, "width", 0, &o->width) ||
        !get_number(c, at, where, obj, "height", 0, &o->height) ||
        !get_number(c, at, where, obj, "rotation", 0, &o->rotation) ||
        !get_bool(c, at, where, obj, "ellipse", &ellipse) ||
        !get_bool(c, at, where, obj, "point", &point))
        goto done;
    if (o->width < 0 || o->height < 0) {
        fail(c, at, "%s: a negative width or height", where);
        goto done;
    }
    o->x += offx;
    o->y += offy;
    if (gid) {
        if (!json_is_integer(gid) || json_integer_value(gid) < 0 ||
            json_integer_value(gid) > 0xffffffffLL) {
            fail(c, at, "%s: \"gid\" must be an integer in [0, 4294967295]", where);
            goto done;
        }
        o->kind = TILED_OBJ_TILE;
        o->gid = (uint32_t)json_integer_value(gid);
        /* the template's gid counts in the template's tileset; the instance's in the map's */
        if (t && !json_object_get(in, "gid") && !map_template_gid(c, at, where, t, o->gid, &o->gid))
            goto done;
    } else if (ellipse) {
        o->kind = TILED_OBJ_ELLIPSE;
    } else if (point) {
        o->kind = TILED_OBJ_POINT;
    } else if (json_object_get(obj, "polygon")) {
        o->kind = TILED_OBJ_POLYGON;
        if (!parse_points(c, at, where, json_object_get(obj, "polygon"), "polygon", o)) goto done;
    } else if (json_object_get(obj, "polyline")) {
        o->kind = TILED_OBJ_POLYLINE;
        if (!parse_points(c, at, where, json_object_get(obj, "polyline"), "polyline", o)) goto done;
    } else if (json_object_get(obj, "text")) {
        o->kind = TILED_OBJ_TEXT;
    } else {
        o->kind = TILED_OBJ_RECT;
    }
    if (!parse_props(c, at, where, in, &o->props)) goto done;
    if (t) {
        tiled_props tprops = {NULL, 0};
        tiled_place tat = {t->file, 0};
        bool merged_ok = parse_props(c, tat, "template object", t->object, &tprops) &&
                         merge_props_under(c, at, &o->props, &tprops);
        tiled_props_free(&tprops);
        if (!merged_ok) goto done;
    }
    ok = true;
done:
    json_decref(merged);
    return ok;
}

static bool parse_objects(tmj_ctx *c, tiled_place at, const char *owner, const json_t *arr,
                          const char *base_dir, double offx, double offy, tiled_object **out,
                          size_t *count) {
    if (!arr) return true;
    if (!json_is_array(arr)) return fail(c, at, "%s: \"objects\" must be an array", owner);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_OBJECTS)
        return fail(c, at, "%s: %zu objects, at most %u", owner, n, TMJ_MAX_OBJECTS);
    if (n == 0) return true;
    *out = calloc(n, sizeof **out);
    if (!*out) return oom(c, at);
    for (size_t i = 0; i < n; i++) {
        /* counted first so that a half-read object is freed with the rest */
        *count = i + 1;
        if (!parse_object(c, at, owner, json_array_get(arr, i), base_dir, offx, offy, &(*out)[i]))
            return false;
    }
    return true;
}

/* ---- tilesets -------------------------------------------------------------------------------- */

static int tile_cmp(const void *a, const void *b) {
    uint32_t x = ((const tiled_tile *)a)->id, y = ((const tiled_tile *)b)->id;
    return x < y ? -1 : x > y;
}

/* A tileset's own members (inline in the map or a TSJ file); ts->firstgid and place are set. */
static bool parse_tileset_body(tmj_ctx *c, const json_t *js, const char *base_dir,
                               tiled_tileset *ts) {
    tiled_place at = ts->place;
    const char *name;
    long long tw, th, count, columns;
    if (!get_string(c, at, "tileset", js, "name", "", &name) || !dup_string(c, at, name, &ts->name))
        return false;
    char where[512];
    snprintf(where, sizeof where, "tileset \"%s\"", ts->name);
    if (!get_int(c, at, where, js, "tilewidth", true, 0, 1, TMJ_MAX_TILE_SIZE, &tw) ||
        !get_int(c, at, where, js, "tileheight", true, 0, 1, TMJ_MAX_TILE_SIZE, &th) ||
        !get_int(c, at, where, js, "tilecount", false, 0, 0, TILED_GID_MASK, &count) ||
        !get_int(c, at, where, js, "columns", false, 0, 0, TILED_GID_MASK, &columns))
        return false;
    ts->tilewidth = (int)tw;
    ts->tileheight = (int)th;
    ts->tilecount = (int)count;
    ts->columns = (int)columns;
    const json_t *tiles = json_object_get(js, "tiles");
    if (!tiles) return true;
    if (!json_is_array(tiles)) return fail(c, at, "%s: \"tiles\" must be an array", where);
    size_t n = json_array_size(tiles);
    if (n > TMJ_MAX_TILES || c->total_tiles + n > TMJ_MAX_TILES)
        return fail(c, at, "%s: more than %u tiles", where, TMJ_MAX_TILES);
    c->total_tiles += n;
    if (n == 0) return true;
    ts->tiles = calloc(n, sizeof *ts->tiles);
    if (!ts->tiles) return oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *jt = json_array_get(tiles, i);
        if (!json_is_object(jt)) return fail(c, at, "%s: a tile must be an object", where);
        long long id;
        if (!get_int(c, at, where, jt, "id", true, 0, 0, TILED_GID_MASK, &id)) return false;
        char twhere[600];
        snprintf(twhere, sizeof twhere, "%s, tile %lld", where, id);
        tiled_tile *tile = &ts->tiles[ts->ntiles++];
        tile->id = (uint32_t)id;
        tile->place = at;
        if (!parse_props(c, at, twhere, jt, &tile->props)) return false;
        const json_t *group = json_object_get(jt, "objectgroup");
        if (group) {
            if (!json_is_object(group))
                return fail(c, at, "%s: \"objectgroup\" must be an object", twhere);
            if (!parse_objects(c, at, twhere, json_object_get(group, "objects"), base_dir, 0, 0,
                               &tile->shapes, &tile->nshapes))
                return false;
        }
        if (tile->nshapes == 0 && tile->props.count == 0) {
            /* says nothing to us: absent from the model (tiled.h) */
            free(tile->shapes);
            free(tile->props.items);
            memset(tile, 0, sizeof *tile);
            ts->ntiles--;
        }
    }
    qsort(ts->tiles, ts->ntiles, sizeof *ts->tiles, tile_cmp);
    for (size_t i = 1; i < ts->ntiles; i++)
        if (ts->tiles[i].id == ts->tiles[i - 1].id)
            return fail(c, at, "%s: tile %u twice", where, ts->tiles[i].id);
    return true;
}

static bool parse_tilesets(tmj_ctx *c, const json_t *root) {
    tiled_map *m = c->m;
    const json_t *arr = json_object_get(root, "tilesets");
    if (!arr) return true;
    if (!json_is_array(arr)) return fail(c, m->place, "\"tilesets\" must be an array");
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_TILESETS)
        return fail(c, m->place, "%zu tilesets, at most %u", n, TMJ_MAX_TILESETS);
    if (n == 0) return true;
    m->tilesets = calloc(n, sizeof *m->tilesets);
    c->tileset_paths = calloc(n, sizeof *c->tileset_paths);
    if (!m->tilesets || !c->tileset_paths) return oom(c, m->place);
    m->ntilesets = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *js = json_array_get(arr, i);
        tiled_tileset *ts = &m->tilesets[i];
        char where[64];
        snprintf(where, sizeof where, "tileset %zu", i);
        if (!json_is_object(js)) return fail(c, m->place, "%s must be an object", where);
        long long firstgid;
        const char *source;
        if (!get_int(c, m->place, where, js, "firstgid", true, 0, 1, TILED_GID_MASK, &firstgid) ||
            !get_string(c, m->place, where, js, "source", NULL, &source))
            return false;
        ts->firstgid = (uint32_t)firstgid;
        ts->place = m->place;
        if (!source) {
            if (!parse_tileset_body(c, js, "", ts)) return false;
            continue;
        }
        if (!resolve_path(c, m->place, "", source, &c->tileset_paths[i])) return false;
        const char *path = c->tileset_paths[i];
        if (ends_with(path, ".tsx")) { /* what Tiled's own JSON export refers to */
            uint32_t gid = ts->firstgid;
            if (!c->src->other_tileset)
                return fail(c, m->place,
                            "%s: \"%s\" is an XML tileset (.tsx): read this map "
                            "through tiled_read",
                            where, path);
            if (!c->src->other_tileset(c->src, "", path, m, m->place, ts, c->err, c->err_size))
                return false;
            ts->firstgid = gid;
            continue;
        }
        const char *file = NULL;
        json_t *tsroot = load_external(c, m->place, path, &file);
        if (!tsroot) return false;
        ts->place.file = file;
        ts->place.line = 0;
        const char *type;
        bool ok = get_string(c, ts->place, "tileset", tsroot, "type", "tileset", &type);
        if (ok && strcmp(type, "tileset") != 0)
            ok = fail(c, ts->place, "\"type\" is \"%s\", not \"tileset\"", type);
        if (ok && json_object_get(tsroot, "source"))
            ok = fail(c, ts->place, "an external tileset cannot name another (\"source\")");
        char dir[TMJ_MAX_PATH];
        dir_of(path, dir, sizeof dir);
        ok = ok && parse_tileset_body(c, tsroot, dir, ts);
        json_decref(tsroot);
        if (!ok) return false;
    }
    /* Tiled writes them in firstgid order; the model promises it whatever the file did. An
     * insertion sort (n is bounded) moves each path with its tileset. */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && m->tilesets[k].firstgid < m->tilesets[k - 1].firstgid; k--) {
            tiled_tileset t = m->tilesets[k];
            m->tilesets[k] = m->tilesets[k - 1];
            m->tilesets[k - 1] = t;
            char *p = c->tileset_paths[k];
            c->tileset_paths[k] = c->tileset_paths[k - 1];
            c->tileset_paths[k - 1] = p;
        }
    for (size_t i = 1; i < n; i++)
        if (m->tilesets[i].firstgid == m->tilesets[i - 1].firstgid)
            return fail(c, m->place, "two tilesets start at gid %u", m->tilesets[i].firstgid);
    return true;
}

/* ---- layers ---------------------------------------------------------------------------------- */

static tiled_layer *new_layer(tmj_ctx *c, tiled_place at, size_t *capacity) {
    tiled_map *m = c->m;
    if (m->nlayers >= TMJ_MAX_LAYERS) {
        fail(c, at, "more than %u layers", TMJ_MAX_LAYERS);
        return NULL;
    }
    if (m->nlayers == *capacity) {
        size_t cap = *capacity ? *capacity * 2 : 8;
        tiled_layer *ls = realloc(m->layers, cap * sizeof *ls);
        if (!ls) {
            oom(c, at);
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
        return fail(c, at, "%s: %lld x %lld tiles, more than %u", where, width, height,
                    TMJ_MAX_LAYER_CELLS);
    if (c->total_cells + cells > TMJ_MAX_TOTAL_CELLS)
        return fail(c, at, "%s: the map's layers hold more than %u tiles", where,
                    TMJ_MAX_TOTAL_CELLS);
    if (!data) return fail(c, at, "%s: \"data\" is missing", where);
    if (!json_is_array(data) && !json_is_string(data))
        return fail(c, at, "%s: \"data\" must be an array of gids or an encoded string", where);
    if (json_is_array(data) && json_array_size(data) != cells)
        return fail(c, at, "%s: \"data\" has %zu tiles, the layer %lld x %lld = %llu", where,
                    json_array_size(data), width, height, (unsigned long long)cells);
    c->total_cells += cells;
    chunk->gids = calloc(cells ? cells : 1, sizeof *chunk->gids);
    if (!chunk->gids) return oom(c, at);
    if (json_is_array(data)) {
        if (strcmp(encoding, "csv") != 0)
            return fail(c, at, "%s: \"data\" is an array but \"encoding\" is \"%s\"", where,
                        encoding);
        for (size_t i = 0; i < cells; i++) {
            const json_t *g = json_array_get(data, i);
            if (!json_is_integer(g) || json_integer_value(g) < 0 ||
                json_integer_value(g) > 0xffffffffLL)
                return fail(c, at,
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
        return fail(c, at, "%s: \"data\": %s", where, why);
    return true;
}

static bool parse_tile_layer(tmj_ctx *c, const json_t *jl, const char *where, tiled_layer *l) {
    tiled_map *m = c->m;
    tiled_place at = l->place;
    const char *encoding, *compression;
    if (!get_string(c, at, where, jl, "encoding", "csv", &encoding) ||
        !get_string(c, at, where, jl, "compression", "", &compression))
        return false;
    if (!m->infinite) {
        long long w, h;
        if (!get_int(c, at, where, jl, "width", true, 0, 0, TMJ_MAX_MAP_TILES, &w) ||
            !get_int(c, at, where, jl, "height", true, 0, 0, TMJ_MAX_MAP_TILES, &h))
            return false;
        if (w != m->width || h != m->height)
            return fail(c, at, "%s: %lld x %lld tiles in a %d x %d map", where, w, h, m->width,
                        m->height);
        l->chunks = calloc(1, sizeof *l->chunks);
        if (!l->chunks) return oom(c, at);
        l->nchunks = 1;
        l->chunks[0].width = (int)w;
        l->chunks[0].height = (int)h;
        return parse_data(c, at, where, json_object_get(jl, "data"), encoding, compression, w, h,
                          &l->chunks[0]);
    }
    const json_t *chunks = json_object_get(jl, "chunks");
    if (!json_is_array(chunks))
        return fail(c, at, "%s: an infinite map's tile layer needs \"chunks\" (an array)", where);
    size_t n = json_array_size(chunks);
    if (n > TMJ_MAX_CHUNKS)
        return fail(c, at, "%s: %zu chunks, at most %u", where, n, TMJ_MAX_CHUNKS);
    if (n == 0) return true;
    l->chunks = calloc(n, sizeof *l->chunks);
    if (!l->chunks) return oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *jc = json_array_get(chunks, i);
        char cwhere[600];
        snprintf(cwhere, sizeof cwhere, "%s, chunk %zu", where, i);
        if (!json_is_object(jc)) return fail(c, at, "%s must be an object", cwhere);
        long long x, y, w, h;
        if (!get_int(c, at, cwhere, jc, "x", true, 0, -TMJ_MAX_MAP_TILES, TMJ_MAX_MAP_TILES, &x) ||
            !get_int(c, at, cwhere, jc, "y", true, 0, -TMJ_MAX_MAP_TILES, TMJ_MAX_MAP_TILES, &y) ||
            !get_int(c, at, cwhere, jc, "width", true, 0, 1, TMJ_MAX_MAP_TILES, &w) ||
            !get_int(c, at, cwhere, jc, "height", true, 0, 1, TMJ_MAX_MAP_TILES, &h))
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

static bool parse_layers(tmj_ctx *c, const json_t *arr, const tmj_group *group, size_t *capacity) {
    tiled_map *m = c->m;
    if (!arr) return true;
    if (!json_is_array(arr)) return fail(c, m->place, "\"layers\" must be an array");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *jl = json_array_get(arr, i);
        if (!json_is_object(jl)) return fail(c, m->place, "a layer must be an object");
        long long id;
        const char *name, *type;
        double offx, offy;
        char where[512];
        snprintf(where, sizeof where, "layer %zu", i);
        if (!get_int(c, m->place, where, jl, "id", false, 0, 0, INT32_MAX, &id) ||
            !get_string(c, m->place, where, jl, "name", "", &name))
            return false;
        snprintf(where, sizeof where, "layer \"%s\" (id %lld)", name, id);
        if (!get_string(c, m->place, where, jl, "type", NULL, &type) ||
            !get_number(c, m->place, where, jl, "offsetx", 0, &offx) ||
            !get_number(c, m->place, where, jl, "offsety", 0, &offy))
            return false;
        if (!type) return fail(c, m->place, "%s: \"type\" is missing", where);
        offx += group->offsetx;
        offy += group->offsety;
        if (strcmp(type, "imagelayer") == 0) continue; /* nothing to collide with */
        bool tiles = strcmp(type, "tilelayer") == 0, objects = strcmp(type, "objectgroup") == 0;
        if (strcmp(type, "group") == 0) {
            if (group->depth + 1 > TMJ_MAX_GROUP_DEPTH)
                return fail(c, m->place, "%s: groups nested deeper than %d", where,
                            TMJ_MAX_GROUP_DEPTH);
            tiled_props props = {NULL, 0};
            bool ok = parse_props(c, m->place, where, jl, &props) &&
                      merge_props_under(c, m->place, &props, group->props);
            tmj_group inner = {offx, offy, &props, group->depth + 1};
            ok = ok && parse_layers(c, json_object_get(jl, "layers"), &inner, capacity);
            tiled_props_free(&props);
            if (!ok) return false;
            continue;
        }
        if (!tiles && !objects)
            return fail(c, m->place, "%s: unknown layer type \"%s\"", where, type);
        tiled_layer *l = new_layer(c, m->place, capacity);
        if (!l) return false;
        l->kind = tiles ? TILED_LAYER_TILES : TILED_LAYER_OBJECTS;
        l->id = (int)id;
        l->offsetx = offx;
        l->offsety = offy;
        if (!dup_string(c, m->place, name, &l->name) ||
            !parse_props(c, m->place, where, jl, &l->props) ||
            !merge_props_under(c, m->place, &l->props, group->props))
            return false;
        if (tiles ? !parse_tile_layer(c, jl, where, l)
                  : !parse_objects(c, m->place, where, json_object_get(jl, "objects"), "", offx,
                                   offy, &l->objects, &l->nobjects))
            return false;
    }
    return true;
}

/* ---- the map --------------------------------------------------------------------------------- */

static bool parse_map(tmj_ctx *c, const json_t *root) {
    tiled_map *m = c->m;
    tiled_place at = m->place;
    if (!json_is_object(root)) return fail(c, at, "a Tiled map must be a JSON object");
    const char *type, *orientation;
    long long w, h, tw, th;
    if (!get_string(c, at, "map", root, "type", "map", &type)) return false;
    if (strcmp(type, "map") != 0)
        return fail(c, at, "\"type\" is \"%s\", not \"map\" (a tileset or template is not a map)",
                    type);
    if (!get_string(c, at, "map", root, "orientation", NULL, &orientation) ||
        !get_bool(c, at, "map", root, "infinite", &m->infinite))
        return false;
    if (!orientation) return fail(c, at, "map: \"orientation\" is missing");
    if (!dup_string(c, at, orientation, &m->orientation)) return false;
    /* an infinite map's width and height are only the editor's view: kept, not checked */
    long long minsize = m->infinite ? 0 : 1;
    if (!get_int(c, at, "map", root, "width", true, 0, minsize, TMJ_MAX_MAP_TILES, &w) ||
        !get_int(c, at, "map", root, "height", true, 0, minsize, TMJ_MAX_MAP_TILES, &h) ||
        !get_int(c, at, "map", root, "tilewidth", true, 0, 1, TMJ_MAX_TILE_SIZE, &tw) ||
        !get_int(c, at, "map", root, "tileheight", true, 0, 1, TMJ_MAX_TILE_SIZE, &th))
        return false;
    m->width = (int)w;
    m->height = (int)h;
    m->tilewidth = (int)tw;
    m->tileheight = (int)th;
    if (!m->infinite && (uint64_t)w * (uint64_t)h > TMJ_MAX_LAYER_CELLS)
        return fail(c, at, "map: %lld x %lld tiles, more than %u", w, h, TMJ_MAX_LAYER_CELLS);
    if (!parse_props(c, at, "map", root, &m->props) || !parse_tilesets(c, root)) return false;
    size_t capacity = 0;
    tmj_group top = {0, 0, NULL, 0};
    return parse_layers(c, json_object_get(root, "layers"), &top, &capacity);
}

bool tiled_read_tsj(const tiled_source *src, const char *base_dir, const char *ref, tiled_map *m,
                    tiled_place from, tiled_tileset *out, char *err, size_t err_size) {
    tmj_ctx c = {.src = src, .m = m, .err = err, .err_size = err_size};
    memset(out, 0, sizeof *out);
    const char *file = NULL;
    char *text = tiled_read_file(src, base_dir, ref, "tileset", m, from, &file, err, err_size);
    if (!text) return false;
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    out->place = (tiled_place){file, 0};
    if (!root) {
        tiled_place at = {file, jerr.line > 0 ? jerr.line : 0};
        return fail(&c, at, "column %d: %s", jerr.column, jerr.text);
    }
    const char *type;
    bool ok = json_is_object(root) || fail(&c, out->place, "not a JSON object");
    ok = ok && get_string(&c, out->place, "tileset", root, "type", "tileset", &type);
    if (ok && strcmp(type, "tileset") != 0)
        ok = fail(&c, out->place, "\"type\" is \"%s\", not \"tileset\"", type);
    if (ok && json_object_get(root, "source"))
        ok = fail(&c, out->place, "an external tileset cannot name another (\"source\")");
    char dir[TMJ_MAX_PATH];
    dir_of(file, dir, sizeof dir);
    ok = ok && parse_tileset_body(&c, root, dir, out);
    json_decref(root);
    return ok; /* on failure the caller frees what out holds */
}

tiled_map *tiled_read_tmj(const tiled_source *src, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    tiled_map *m = calloc(1, sizeof *m);
    char **files = calloc(1, sizeof *files);
    char *name = strdup(src->path);
    if (!m || !files || !name) {
        free(m);
        free(files);
        free(name);
        if (err && err_size) snprintf(err, err_size, "%s:0: out of memory", src->path);
        return NULL;
    }
    files[0] = name;
    m->files = files;
    m->nfiles = 1;
    m->place.file = name;
    tmj_ctx c = {.src = src, .m = m, .err = err, .err_size = err_size};

    char why[512];
    char *text = world_read_text(src->dir_fd, src->path, src->no_follow, why, sizeof why);
    json_t *root = NULL;
    bool ok = false;
    if (!text) {
        /* world_read_text says "PATH:0:0: reason" */
        const char *reason = strstr(why, ":0:0: ");
        fail(&c, m->place, "%s", reason ? reason + 6 : why);
    } else {
        json_error_t jerr;
        root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
        free(text);
        if (!root) {
            tiled_place at = {name, jerr.line > 0 ? jerr.line : 0};
            fail(&c, at, "column %d: %s", jerr.column, jerr.text);
        } else {
            ok = parse_map(&c, root);
        }
    }
    json_decref(root);
    for (size_t i = 0; i < c.ntemplates; i++) {
        free(c.templates[i].path);
        free(c.templates[i].tileset_path);
        json_decref(c.templates[i].root);
    }
    free(c.templates);
    for (size_t i = 0; c.tileset_paths && i < m->ntilesets; i++)
        free(c.tileset_paths[i]);
    free(c.tileset_paths);
    if (!ok) {
        tiled_free(m);
        return NULL;
    }
    return m;
}

/* world_tiled_tmj_values: what every part of the TMJ parser reads a document with: errors at a
 * named place, typed and bounded members, Tiled's "properties", and the external files a map names
 * (tilesets, templates), resolved within the map's tree and parsed. Apart from the readers of the
 * map, its layers and its objects, so that they all stand on these and these on none of them. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmj.h"

bool tmj_fail(tmj_ctx *c, tiled_place at, const char *fmt, ...) {
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

bool tmj_oom(tmj_ctx *c, tiled_place at) { return tmj_fail(c, at, "out of memory"); }

bool tmj_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* ---- values ---------------------------------------------------------------------------------- */

/* An integer member in [lo, hi]; def when absent and not required. */
bool tmj_get_int(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj, const char *key,
                 bool required, long long def, long long lo, long long hi, long long *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) return tmj_fail(c, at, "%s: \"%s\" is missing", where, key);
        *out = def;
        return true;
    }
    if (!json_is_integer(v)) return tmj_fail(c, at, "%s: \"%s\" must be an integer", where, key);
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return tmj_fail(c, at, "%s: \"%s\" is %lld, not in [%lld, %lld]", where, key, x, lo, hi);
    *out = x;
    return true;
}

bool tmj_get_number(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                    const char *key, double def, double *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_number(v)) return tmj_fail(c, at, "%s: \"%s\" must be a number", where, key);
    double x = json_number_value(v);
    if (!(fabs(x) <= TMJ_MAX_COORD))
        return tmj_fail(c, at, "%s: \"%s\" is %g, beyond +-%g", where, key, x, TMJ_MAX_COORD);
    *out = x;
    return true;
}

bool tmj_get_bool(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj, const char *key,
                  bool *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = false;
        return true;
    }
    if (!json_is_boolean(v)) return tmj_fail(c, at, "%s: \"%s\" must be true or false", where, key);
    *out = json_is_true(v);
    return true;
}

/* A string member, borrowed from the document; def when absent. */
bool tmj_get_string(tmj_ctx *c, tiled_place at, const char *where, const json_t *obj,
                    const char *key, const char *def, const char **out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_string(v)) return tmj_fail(c, at, "%s: \"%s\" must be a string", where, key);
    if (json_string_length(v) > TMJ_MAX_STRING ||
        strlen(json_string_value(v)) != json_string_length(v))
        return tmj_fail(c, at, "%s: \"%s\" is longer than %u bytes or holds a NUL", where, key,
                        TMJ_MAX_STRING);
    *out = json_string_value(v);
    return true;
}

bool tmj_dup_string(tmj_ctx *c, tiled_place at, const char *s, char **out) {
    *out = strdup(s);
    return *out ? true : tmj_oom(c, at);
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
bool tmj_parse_props(tmj_ctx *c, tiled_place at, const char *where, const json_t *owner,
                     tiled_props *out) {
    const json_t *arr = json_object_get(owner, "properties");
    if (!arr) return true;
    if (!json_is_array(arr))
        return tmj_fail(c, at, "%s: \"properties\" must be an array of {name, type, value}", where);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_PROPS)
        return tmj_fail(c, at, "%s: %zu properties, at most %u", where, n, TMJ_MAX_PROPS);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        const char *name;
        if (!json_is_object(p)) return tmj_fail(c, at, "%s: a property must be an object", where);
        if (!tmj_get_string(c, at, where, p, "name", NULL, &name)) return false;
        if (!name) return tmj_fail(c, at, "%s: a property without a \"name\"", where);
        if (strncmp(name, tmj_prop_prefix, strlen(tmj_prop_prefix)) == 0) keep++;
    }
    if (keep == 0) return true;
    out->items = calloc(keep, sizeof *out->items);
    if (!out->items) return tmj_oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        const char *name = json_string_value(json_object_get(p, "name"));
        if (strncmp(name, tmj_prop_prefix, strlen(tmj_prop_prefix)) != 0) continue;
        if (tiled_prop_find(out, name))
            return tmj_fail(c, at, "%s: property \"%s\" twice", where, name);
        const char *type;
        if (!tmj_get_string(c, at, where, p, "type", "string", &type)) return false;
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
            if (!dumped) return tmj_oom(c, at);
            text = dumped;
        } else {
            ok = false;
        }
        if (!ok) {
            free(dumped);
            return tmj_fail(c, at, "%s: property \"%s\" of type %s has a value of another type",
                            where, name, type);
        }
        if (strlen(text) > TMJ_MAX_STRING) {
            free(dumped);
            return tmj_fail(c, at, "%s: property \"%s\" is longer than %u bytes", where, name,
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
            return tmj_oom(c, at);
        }
    }
    return true;
}

/* Appends to dst copies of under's properties whose names dst lacks (dst's own win). */
bool tmj_merge_props_under(tmj_ctx *c, tiled_place at, tiled_props *dst, const tiled_props *under) {
    if (!under || under->count == 0) return true;
    tiled_prop *items = realloc(dst->items, (dst->count + under->count) * sizeof *items);
    if (!items) return tmj_oom(c, at);
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
            return tmj_oom(c, at);
        }
        dst->count++;
    }
    return true;
}

/* ---- files ----------------------------------------------------------------------------------- */

/* ref, written in a file whose directory is base_dir (relative to the map's, "" for the map's
 * own), as a path relative to the map's directory with "." and ".." resolved. Refused when
 * absolute or when it climbs out of the map's directory: the map's tree is all a map may read. */
bool tmj_resolve_path(tmj_ctx *c, tiled_place at, const char *base_dir, const char *ref,
                      char **out) {
    if (ref[0] == '\0') return tmj_fail(c, at, "an empty file name");
    if (ref[0] == '/' || ref[0] == '\\' || strchr(ref, ':'))
        return tmj_fail(c, at, "\"%s\": an absolute path (files must lie in the map's tree)", ref);
    size_t blen = strlen(base_dir), rlen = strlen(ref);
    if (blen + rlen + 2 > TMJ_MAX_PATH) return tmj_fail(c, at, "\"%s\": path too long", ref);
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
            if (rlen_out == 0) return tmj_fail(c, at, "\"%s\" is outside the map's directory", ref);
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
    if (rlen_out == 0) return tmj_fail(c, at, "\"%s\" names the map's directory", ref);
    result[rlen_out] = '\0';
    *out = strdup(result);
    return *out ? true : tmj_oom(c, at);
}

/* The directory part of a normalized path ("" for a file in the map's directory). */
void tmj_dir_of(const char *path, char *out, size_t size) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= size) n = size - 1;
    memcpy(out, path, n);
    out[n] = '\0';
}

/* Reads and parses an external JSON file (normalized path); *file is its name in m->files. */
json_t *tmj_load_external(tmj_ctx *c, tiled_place from, const char *path, const char **file) {
    if (c->nexternal >= TMJ_MAX_FILES) {
        tmj_fail(c, from, "more than %u external files", TMJ_MAX_FILES);
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
        tmj_fail(c, at, "column %d: %s", jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        tiled_place at = {*file, 0};
        tmj_fail(c, at, "not a JSON object");
        json_decref(root);
        return NULL;
    }
    return root;
}

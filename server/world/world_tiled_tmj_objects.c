/* world_tiled_tmj_objects: a TMJ object (a layer's or a tile's collision shape) with its shape,
 * and templates (TJ): read once per map, applied under each instance that names one, their tile
 * gids renumbered as the map numbers them. Apart because a template brings its own file and
 * tileset, which no other part of a map does. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmj.h"

/* ---- objects --------------------------------------------------------------------------------- */

static const tmj_template *get_template(tmj_ctx *c, tiled_place at, const char *where,
                                        const char *path) {
    for (size_t i = 0; i < c->ntemplates; i++)
        if (strcmp(c->templates[i].path, path) == 0) return &c->templates[i];
    if (tmj_ends_with(path, ".tx")) {
        tmj_fail(c, at,
                 "%s: template \"%s\" is XML (.tx), which a JSON map does not read: save the "
                 "template as .tj, or the map as .tmx",
                 where, path);
        return NULL;
    }
    tmj_template *ts = realloc(c->templates, (c->ntemplates + 1) * sizeof *ts);
    if (!ts) {
        tmj_oom(c, at);
        return NULL;
    }
    c->templates = ts;
    tmj_template *t = &ts[c->ntemplates];
    memset(t, 0, sizeof *t);
    const char *file = NULL;
    json_t *root = tmj_load_external(c, at, path, &file);
    if (!root) return NULL;
    t->root = root;
    t->file = file;
    t->path = strdup(path);
    c->ntemplates++; /* owned from here: freed at the end */
    if (!t->path) {
        tmj_oom(c, at);
        return NULL;
    }
    tiled_place tat = {file, 0};
    const char *type;
    if (!tmj_get_string(c, tat, "template", root, "type", "template", &type)) return NULL;
    if (strcmp(type, "template") != 0) {
        tmj_fail(c, tat, "\"type\" is \"%s\", not \"template\"", type);
        return NULL;
    }
    t->object = json_object_get(root, "object");
    if (!json_is_object(t->object)) {
        tmj_fail(c, tat, "template: \"object\" must be an object");
        return NULL;
    }
    if (json_object_get(t->object, "template")) {
        tmj_fail(c, tat, "template: a template's object cannot itself use a template");
        return NULL;
    }
    const json_t *tileset = json_object_get(root, "tileset");
    if (tileset) {
        const char *source;
        long long firstgid;
        if (!json_is_object(tileset)) {
            tmj_fail(c, tat, "template: \"tileset\" must be an object");
            return NULL;
        }
        if (!tmj_get_int(c, tat, "template tileset", tileset, "firstgid", true, 0, 1,
                         TILED_GID_MASK, &firstgid) ||
            !tmj_get_string(c, tat, "template tileset", tileset, "source", NULL, &source))
            return NULL;
        if (!source) {
            tmj_fail(c, tat, "template tileset: \"source\" is missing");
            return NULL;
        }
        char dir[TMJ_MAX_PATH];
        tmj_dir_of(path, dir, sizeof dir);
        if (!tmj_resolve_path(c, tat, dir, source, &t->tileset_path)) return NULL;
        t->tileset_firstgid = (uint32_t)firstgid;
    }
    return t;
}

/* A template's tile gid, numbered in its own tileset reference, as the map numbers it. */
static bool map_template_gid(tmj_ctx *c, tiled_place at, const char *where, const tmj_template *t,
                             uint32_t gid, uint32_t *out) {
    if (!t->tileset_path)
        return tmj_fail(c, at, "%s: template \"%s\" places a tile but names no tileset", where,
                        t->path);
    uint32_t local = gid & TILED_GID_MASK;
    if (local < t->tileset_firstgid)
        return tmj_fail(c, at, "%s: template \"%s\": gid %u is below its tileset's firstgid %u",
                        where, t->path, local, t->tileset_firstgid);
    for (size_t i = 0; i < c->m->ntilesets; i++) {
        if (!c->tileset_paths[i] || strcmp(c->tileset_paths[i], t->tileset_path) != 0) continue;
        uint64_t mapped = (uint64_t)c->m->tilesets[i].firstgid + (local - t->tileset_firstgid);
        if (mapped > TILED_GID_MASK)
            return tmj_fail(c, at, "%s: template \"%s\": gid out of range", where, t->path);
        *out = (gid & ~TILED_GID_MASK) | (uint32_t)mapped;
        return true;
    }
    return tmj_fail(c, at, "%s: template \"%s\" uses tileset \"%s\", which the map does not", where,
                    t->path, t->tileset_path);
}

static bool parse_points(tmj_ctx *c, tiled_place at, const char *where, const json_t *arr,
                         const char *key, tiled_object *o) {
    if (!json_is_array(arr))
        return tmj_fail(c, at, "%s: \"%s\" must be an array of {x, y}", where, key);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_POINTS)
        return tmj_fail(c, at, "%s: %zu points, at most %u", where, n, TMJ_MAX_POINTS);
    if (n == 0) return true;
    o->points = calloc(n, sizeof *o->points);
    if (!o->points) return tmj_oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(arr, i);
        if (!json_is_object(p) || !json_is_number(json_object_get(p, "x")) ||
            !json_is_number(json_object_get(p, "y")))
            return tmj_fail(c, at, "%s: \"%s\" point %zu must be {\"x\": number, \"y\": number}",
                            where, key, i);
        if (!tmj_get_number(c, at, where, p, "x", 0, &o->points[i].x) ||
            !tmj_get_number(c, at, where, p, "y", 0, &o->points[i].y))
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
    if (!json_is_object(in)) return tmj_fail(c, at, "%s: an object must be a JSON object", owner);
    if (++c->total_objects > TMJ_MAX_OBJECTS)
        return tmj_fail(c, at, "%s: more than %u objects", owner, TMJ_MAX_OBJECTS);
    long long id;
    if (!tmj_get_int(c, at, owner, in, "id", false, 0, 0, INT32_MAX, &id)) return false;
    o->id = (int)id;
    snprintf(where, sizeof where, "%s, object %d", owner, o->id);

    /* A template instance: the template's object, the instance's members over it, and its
     * properties under the instance's (Tiled's own rule for overrides). */
    const char *tref;
    if (!tmj_get_string(c, at, where, in, "template", NULL, &tref)) return false;
    const tmj_template *t = NULL;
    json_t *merged = NULL;
    const json_t *obj = in;
    if (tref) {
        char *path = NULL;
        if (!tmj_resolve_path(c, at, base_dir, tref, &path)) return false;
        t = get_template(c, at, where, path);
        free(path);
        if (!t) return false;
        merged = json_deep_copy(t->object);
        if (!merged || json_object_update(merged, (json_t *)in) != 0) {
            json_decref(merged);
            return tmj_oom(c, at);
        }
        json_object_del(merged, "properties");
        json_object_del(merged, "template");
        obj = merged;
    }
    bool ok = false;
    const char *type, *cls, *name;
    bool ellipse = false, point = false;
    const json_t *gid = json_object_get(obj, "gid");
    if (!tmj_get_string(c, at, where, obj, "type", NULL, &type) ||
        !tmj_get_string(c, at, where, obj, "class", "", &cls) ||
        !tmj_get_string(c, at, where, obj, "name", "", &name) ||
        !tmj_dup_string(c, at, type ? type : cls, &o->type) ||
        !tmj_dup_string(c, at, name, &o->name) ||
        !tmj_get_number(c, at, where, obj, "x", 0, &o->x) ||
        !tmj_get_number(c, at, where, obj, "y", 0, &o->y) ||
        !tmj_get_number(c, at, where, obj, "width", 0, &o->width) ||
        !tmj_get_number(c, at, where, obj, "height", 0, &o->height) ||
        !tmj_get_number(c, at, where, obj, "rotation", 0, &o->rotation) ||
        !tmj_get_bool(c, at, where, obj, "ellipse", &ellipse) ||
        !tmj_get_bool(c, at, where, obj, "point", &point))
        goto done;
    if (o->width < 0 || o->height < 0) {
        tmj_fail(c, at, "%s: a negative width or height", where);
        goto done;
    }
    o->x += offx;
    o->y += offy;
    if (gid) {
        if (!json_is_integer(gid) || json_integer_value(gid) < 0 ||
            json_integer_value(gid) > 0xffffffffLL) {
            tmj_fail(c, at, "%s: \"gid\" must be an integer in [0, 4294967295]", where);
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
    if (!tmj_parse_props(c, at, where, in, &o->props)) goto done;
    if (t) {
        tiled_props tprops = {NULL, 0};
        tiled_place tat = {t->file, 0};
        bool merged_ok = tmj_parse_props(c, tat, "template object", t->object, &tprops) &&
                         tmj_merge_props_under(c, at, &o->props, &tprops);
        tiled_props_free(&tprops);
        if (!merged_ok) goto done;
    }
    ok = true;
done:
    json_decref(merged);
    return ok;
}

bool tmj_parse_objects(tmj_ctx *c, tiled_place at, const char *owner, const json_t *arr,
                       const char *base_dir, double offx, double offy, tiled_object **out,
                       size_t *count) {
    if (!arr) return true;
    if (!json_is_array(arr)) return tmj_fail(c, at, "%s: \"objects\" must be an array", owner);
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_OBJECTS)
        return tmj_fail(c, at, "%s: %zu objects, at most %u", owner, n, TMJ_MAX_OBJECTS);
    if (n == 0) return true;
    *out = calloc(n, sizeof **out);
    if (!*out) return tmj_oom(c, at);
    for (size_t i = 0; i < n; i++) {
        /* counted first so that a half-read object is freed with the rest */
        *count = i + 1;
        if (!parse_object(c, at, owner, json_array_get(arr, i), base_dir, offx, offy, &(*out)[i]))
            return false;
    }
    return true;
}

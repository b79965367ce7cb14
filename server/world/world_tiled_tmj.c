/* world_tiled_tmj: a Tiled JSON map (TMJ, with TSJ tilesets and TJ templates) into the model of
 * tiled.h, through jansson. Faithful, not interpreting: what the file says is copied into the
 * model, with groups flattened, templates applied and external files read in; meaning (units, y
 * flip, orientation) is world_tiled.c's.
 *
 * jansson gives a syntax error's line and column but no position for a value, so an error of
 * meaning names its place instead: the layer and the object or tile id, at line 0 (tiled.h).
 *
 * Everything is bounded before it is allocated (TMJ_MAX_*): a map is untrusted input (CreateRoom
 * takes one from any client with a --world-dir), and a small file can ask for a huge layer.
 *
 * This file reads the map and its tilesets (inline or TSJ), and is the entry points tiled_read_tmj
 * and tiled_read_tsj; layers, objects and templates, and the value readers they share are in
 * world_tiled_tmj_{layers,objects,values}.c, with the parser's state in internal/tiled_tmj.h. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmj.h"
#include "world_load.h"

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
    if (!tmj_get_string(c, at, "tileset", js, "name", "", &name) ||
        !tmj_dup_string(c, at, name, &ts->name))
        return false;
    char where[512];
    snprintf(where, sizeof where, "tileset \"%s\"", ts->name);
    if (!tmj_get_int(c, at, where, js, "tilewidth", true, 0, 1, TMJ_MAX_TILE_SIZE, &tw) ||
        !tmj_get_int(c, at, where, js, "tileheight", true, 0, 1, TMJ_MAX_TILE_SIZE, &th) ||
        !tmj_get_int(c, at, where, js, "tilecount", false, 0, 0, TILED_GID_MASK, &count) ||
        !tmj_get_int(c, at, where, js, "columns", false, 0, 0, TILED_GID_MASK, &columns))
        return false;
    ts->tilewidth = (int)tw;
    ts->tileheight = (int)th;
    ts->tilecount = (int)count;
    ts->columns = (int)columns;
    const json_t *tiles = json_object_get(js, "tiles");
    if (!tiles) return true;
    if (!json_is_array(tiles)) return tmj_fail(c, at, "%s: \"tiles\" must be an array", where);
    size_t n = json_array_size(tiles);
    if (n > TMJ_MAX_TILES || c->total_tiles + n > TMJ_MAX_TILES)
        return tmj_fail(c, at, "%s: more than %u tiles", where, TMJ_MAX_TILES);
    c->total_tiles += n;
    if (n == 0) return true;
    ts->tiles = calloc(n, sizeof *ts->tiles);
    if (!ts->tiles) return tmj_oom(c, at);
    for (size_t i = 0; i < n; i++) {
        const json_t *jt = json_array_get(tiles, i);
        if (!json_is_object(jt)) return tmj_fail(c, at, "%s: a tile must be an object", where);
        long long id;
        if (!tmj_get_int(c, at, where, jt, "id", true, 0, 0, TILED_GID_MASK, &id)) return false;
        char twhere[600];
        snprintf(twhere, sizeof twhere, "%s, tile %lld", where, id);
        tiled_tile *tile = &ts->tiles[ts->ntiles++];
        tile->id = (uint32_t)id;
        tile->place = at;
        if (!tmj_parse_props(c, at, twhere, jt, &tile->props)) return false;
        const json_t *group = json_object_get(jt, "objectgroup");
        if (group) {
            if (!json_is_object(group))
                return tmj_fail(c, at, "%s: \"objectgroup\" must be an object", twhere);
            if (!tmj_parse_objects(c, at, twhere, json_object_get(group, "objects"), base_dir, 0, 0,
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
            return tmj_fail(c, at, "%s: tile %u twice", where, ts->tiles[i].id);
    return true;
}

static bool parse_tilesets(tmj_ctx *c, const json_t *root) {
    tiled_map *m = c->m;
    const json_t *arr = json_object_get(root, "tilesets");
    if (!arr) return true;
    if (!json_is_array(arr)) return tmj_fail(c, m->place, "\"tilesets\" must be an array");
    size_t n = json_array_size(arr);
    if (n > TMJ_MAX_TILESETS)
        return tmj_fail(c, m->place, "%zu tilesets, at most %u", n, TMJ_MAX_TILESETS);
    if (n == 0) return true;
    m->tilesets = calloc(n, sizeof *m->tilesets);
    c->tileset_paths = calloc(n, sizeof *c->tileset_paths);
    if (!m->tilesets || !c->tileset_paths) return tmj_oom(c, m->place);
    m->ntilesets = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *js = json_array_get(arr, i);
        tiled_tileset *ts = &m->tilesets[i];
        char where[64];
        snprintf(where, sizeof where, "tileset %zu", i);
        if (!json_is_object(js)) return tmj_fail(c, m->place, "%s must be an object", where);
        long long firstgid;
        const char *source;
        if (!tmj_get_int(c, m->place, where, js, "firstgid", true, 0, 1, TILED_GID_MASK,
                         &firstgid) ||
            !tmj_get_string(c, m->place, where, js, "source", NULL, &source))
            return false;
        ts->firstgid = (uint32_t)firstgid;
        ts->place = m->place;
        if (!source) {
            if (!parse_tileset_body(c, js, "", ts)) return false;
            continue;
        }
        if (!tmj_resolve_path(c, m->place, "", source, &c->tileset_paths[i])) return false;
        const char *path = c->tileset_paths[i];
        if (tmj_ends_with(path, ".tsx")) { /* what Tiled's own JSON export refers to */
            uint32_t gid = ts->firstgid;
            if (!c->src->other_tileset)
                return tmj_fail(c, m->place,
                                "%s: \"%s\" is an XML tileset (.tsx): read this map "
                                "through tiled_read",
                                where, path);
            if (!c->src->other_tileset(c->src, "", path, m, m->place, ts, c->err, c->err_size))
                return false;
            ts->firstgid = gid;
            continue;
        }
        const char *file = NULL;
        json_t *tsroot = tmj_load_external(c, m->place, path, &file);
        if (!tsroot) return false;
        ts->place.file = file;
        ts->place.line = 0;
        const char *type;
        bool ok = tmj_get_string(c, ts->place, "tileset", tsroot, "type", "tileset", &type);
        if (ok && strcmp(type, "tileset") != 0)
            ok = tmj_fail(c, ts->place, "\"type\" is \"%s\", not \"tileset\"", type);
        if (ok && json_object_get(tsroot, "source"))
            ok = tmj_fail(c, ts->place, "an external tileset cannot name another (\"source\")");
        char dir[TMJ_MAX_PATH];
        tmj_dir_of(path, dir, sizeof dir);
        ok = ok && parse_tileset_body(c, tsroot, dir, ts);
        json_decref(tsroot);
        if (!ok) return false;
    }
    uint32_t dup;
    if (!tiled_sort_tilesets(m, c->tileset_paths, &dup))
        return tmj_fail(c, m->place, "two tilesets start at gid %u", dup);
    return true;
}

/* ---- the map --------------------------------------------------------------------------------- */

static bool parse_map(tmj_ctx *c, const json_t *root) {
    tiled_map *m = c->m;
    tiled_place at = m->place;
    if (!json_is_object(root)) return tmj_fail(c, at, "a Tiled map must be a JSON object");
    const char *type, *orientation;
    long long w, h, tw, th;
    if (!tmj_get_string(c, at, "map", root, "type", "map", &type)) return false;
    if (strcmp(type, "map") != 0)
        return tmj_fail(
            c, at, "\"type\" is \"%s\", not \"map\" (a tileset or template is not a map)", type);
    if (!tmj_get_string(c, at, "map", root, "orientation", NULL, &orientation) ||
        !tmj_get_bool(c, at, "map", root, "infinite", &m->infinite))
        return false;
    if (!orientation) return tmj_fail(c, at, "map: \"orientation\" is missing");
    if (!tmj_dup_string(c, at, orientation, &m->orientation)) return false;
    /* an infinite map's width and height are only the editor's view: kept, not checked */
    long long minsize = m->infinite ? 0 : 1;
    if (!tmj_get_int(c, at, "map", root, "width", true, 0, minsize, TMJ_MAX_MAP_TILES, &w) ||
        !tmj_get_int(c, at, "map", root, "height", true, 0, minsize, TMJ_MAX_MAP_TILES, &h) ||
        !tmj_get_int(c, at, "map", root, "tilewidth", true, 0, 1, TMJ_MAX_TILE_SIZE, &tw) ||
        !tmj_get_int(c, at, "map", root, "tileheight", true, 0, 1, TMJ_MAX_TILE_SIZE, &th))
        return false;
    m->width = (int)w;
    m->height = (int)h;
    m->tilewidth = (int)tw;
    m->tileheight = (int)th;
    if (!m->infinite && (uint64_t)w * (uint64_t)h > TMJ_MAX_LAYER_CELLS)
        return tmj_fail(c, at, "map: %lld x %lld tiles, more than %u", w, h, TMJ_MAX_LAYER_CELLS);
    if (!tmj_parse_props(c, at, "map", root, &m->props) || !parse_tilesets(c, root)) return false;
    size_t capacity = 0;
    tmj_group top = {0, 0, NULL, 0};
    return tmj_parse_layers(c, json_object_get(root, "layers"), &top, &capacity);
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
        return tmj_fail(&c, at, "column %d: %s", jerr.column, jerr.text);
    }
    const char *type;
    bool ok = json_is_object(root) || tmj_fail(&c, out->place, "not a JSON object");
    ok = ok && tmj_get_string(&c, out->place, "tileset", root, "type", "tileset", &type);
    if (ok && strcmp(type, "tileset") != 0)
        ok = tmj_fail(&c, out->place, "\"type\" is \"%s\", not \"tileset\"", type);
    if (ok && json_object_get(root, "source"))
        ok = tmj_fail(&c, out->place, "an external tileset cannot name another (\"source\")");
    char dir[TMJ_MAX_PATH];
    tmj_dir_of(file, dir, sizeof dir);
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
        tmj_fail(&c, m->place, "%s", reason ? reason + 6 : why);
    } else {
        json_error_t jerr;
        root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
        free(text);
        if (!root) {
            tiled_place at = {name, jerr.line > 0 ? jerr.line : 0};
            tmj_fail(&c, at, "column %d: %s", jerr.column, jerr.text);
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

/* world_load: the JSON world file (ARCHITECTURE.md) into a world, with jansson.
 *
 * jansson reports line and column for syntax errors, but its values carry no position. For a
 * semantic error (a bad shape, a static outside the bounds) we find the offending value's place
 * in the text with a small scanner over the (already valid) JSON, so every error reads
 * "FILE:LINE:COLUMN: reason". */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tiled.h"
#include "world_load.h"

/* ---- locating a value in valid JSON text ----------------------------------------------------- */

static size_t skip_ws(const char *s, size_t i, size_t n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

static size_t skip_string(const char *s, size_t i, size_t n) {
    i++; /* opening quote */
    while (i < n && s[i] != '"')
        i += s[i] == '\\' ? 2 : 1;
    return i < n ? i + 1 : n;
}

/* Skips one value starting at i (no leading whitespace); iterative depth count. */
static size_t skip_value(const char *s, size_t i, size_t n) {
    int depth = 0;
    do {
        if (i >= n) return n;
        char c = s[i];
        if (c == '"') {
            i = skip_string(s, i, n);
        } else if (c == '{' || c == '[') {
            depth++;
            i++;
        } else if (c == '}' || c == ']') {
            depth--;
            i++;
        } else if (depth > 0) {
            i++; /* commas, colons, whitespace, scalars inside a container */
        } else {
            while (i < n && !strchr(",]} \t\r\n", s[i]))
                i++;
        }
    } while (depth > 0);
    return i;
}

/* Offset of the value of `key` in the object at i, or of element `index` of the array at i; n when
 * not found. */
static size_t find_member(const char *s, size_t i, size_t n, const char *key) {
    size_t klen = strlen(key);
    i = skip_ws(s, i, n);
    if (i >= n || s[i] != '{') return n;
    i = skip_ws(s, i + 1, n);
    while (i < n && s[i] == '"') {
        size_t kstart = i + 1;
        size_t kend = skip_string(s, i, n) - 1;
        i = skip_ws(s, kend + 1, n);
        if (i < n && s[i] == ':') i = skip_ws(s, i + 1, n);
        if (kend - kstart == klen && memcmp(s + kstart, key, klen) == 0) return i;
        i = skip_ws(s, skip_value(s, i, n), n);
        if (i < n && s[i] == ',') i = skip_ws(s, i + 1, n);
    }
    return n;
}

static size_t find_element(const char *s, size_t i, size_t n, size_t index) {
    i = skip_ws(s, i, n);
    if (i >= n || s[i] != '[') return n;
    i = skip_ws(s, i + 1, n);
    for (size_t k = 0; i < n && s[i] != ']'; k++) {
        if (k == index) return i;
        i = skip_ws(s, skip_value(s, i, n), n);
        if (i < n && s[i] == ',') i = skip_ws(s, i + 1, n);
    }
    return n;
}

/* A path into the document: up to four steps, each a key or an index. */
typedef struct json_place {
    const char *key[4]; /* key for this step, or NULL for an index */
    size_t index[4];    /* index when key is NULL */
    int depth;          /* steps used */
} json_place;

static void place_line_col(const char *s, size_t n, const json_place *p, int *line, int *col) {
    size_t i = skip_ws(s, 0, n);
    for (int k = 0; k < p->depth && i < n; k++) {
        size_t next =
            p->key[k] ? find_member(s, i, n, p->key[k]) : find_element(s, i, n, p->index[k]);
        if (next >= n) break; /* missing member: point at its container */
        i = next;
    }
    int l = 1, c = 1;
    for (size_t j = 0; j < i && j < n; j++) {
        if (s[j] == '\n')
            l++, c = 1;
        else
            c++;
    }
    *line = l;
    *col = c;
}

/* ---- loader --------------------------------------------------------------------------------- */

typedef struct loader {
    const char *text; /* the document */
    size_t len;       /* its length */
    const char *name; /* file name for messages */
    char *err;        /* message buffer */
    size_t err_size;  /* its size */
} loader;

static void fail(loader *ld, const json_place *p, const char *fmt, ...) {
    int line = 1, col = 1;
    place_line_col(ld->text, ld->len, p, &line, &col);
    if (!ld->err || ld->err_size == 0) return;
    int used = snprintf(ld->err, ld->err_size, "%s:%d:%d: ", ld->name, line, col);
    if (used < 0 || (size_t)used >= ld->err_size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ld->err + used, ld->err_size - (size_t)used, fmt, ap);
    va_end(ap);
}

static json_place place0(void) {
    json_place p;
    memset(&p, 0, sizeof p);
    return p;
}
static json_place place_key(json_place p, const char *key) {
    if (p.depth < 4) p.key[p.depth++] = key;
    return p;
}
static json_place place_index(json_place p, size_t index) {
    if (p.depth < 4) {
        p.key[p.depth] = NULL;
        p.index[p.depth++] = index;
    }
    return p;
}

/* Reads [x, y] of finite numbers. */
static bool read_vec2(loader *ld, const json_t *v, json_place p, const char *what, vec2 *out) {
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_number(json_array_get(v, 0)) ||
        !json_is_number(json_array_get(v, 1))) {
        fail(ld, &p, "%s must be an array of two numbers [x, y]", what);
        return false;
    }
    double x = json_number_value(json_array_get(v, 0)), y = json_number_value(json_array_get(v, 1));
    out->x = (float)x;
    out->y = (float)y;
    if (!v2_is_finite(*out)) {
        fail(ld, &p, "%s is out of the float range", what);
        return false;
    }
    return true;
}

/* Refuses keys other than the allowed ones (a typo would otherwise be silently ignored). */
static bool only_keys(loader *ld, const json_t *obj, json_place p, const char *const *allowed) {
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        (void)value;
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, key) == 0) ok = true;
        if (!ok) {
            json_place kp = place_key(p, key);
            fail(ld, &kp, "unknown key \"%s\"", key);
            return false;
        }
    }
    return true;
}

static bool read_shape(loader *ld, const json_t *st, json_place p, geom_shape *shape) {
    static const char *const kinds[] = {"box", "polygon", "circle"};
    const json_t *found = NULL;
    int kind = -1;
    for (int k = 0; k < 3; k++) {
        const json_t *v = json_object_get(st, kinds[k]);
        if (!v) continue;
        if (found) {
            json_place kp = place_key(p, kinds[k]);
            fail(ld, &kp, "a static has exactly one shape: \"box\", \"polygon\" or \"circle\"");
            return false;
        }
        found = v;
        kind = k;
    }
    if (!found) {
        fail(ld, &p, "a static needs a shape: \"box\", \"polygon\" or \"circle\"");
        return false;
    }
    json_place sp = place_key(p, kinds[kind]);
    if (!json_is_object(found)) {
        fail(ld, &sp, "\"%s\" must be an object", kinds[kind]);
        return false;
    }
    geom_shape_error err = GEOM_OK;
    if (kind == 0) {
        static const char *const keys[] = {"half_extents", NULL};
        if (!only_keys(ld, found, sp, keys)) return false;
        vec2 h;
        if (!read_vec2(ld, json_object_get(found, "half_extents"), place_key(sp, "half_extents"),
                       "box.half_extents", &h))
            return false;
        err = geom_make_box(h, shape);
    } else if (kind == 2) {
        static const char *const keys[] = {"radius", NULL};
        if (!only_keys(ld, found, sp, keys)) return false;
        const json_t *r = json_object_get(found, "radius");
        if (!json_is_number(r)) {
            json_place rp = place_key(sp, "radius");
            fail(ld, &rp, "circle.radius must be a number");
            return false;
        }
        err = geom_make_circle((float)json_number_value(r), shape);
    } else {
        static const char *const keys[] = {"vertices", NULL};
        if (!only_keys(ld, found, sp, keys)) return false;
        const json_t *vs = json_object_get(found, "vertices");
        json_place vp = place_key(sp, "vertices");
        if (!json_is_array(vs)) {
            fail(ld, &vp, "polygon.vertices must be an array of [x, y]");
            return false;
        }
        size_t count = json_array_size(vs);
        if (count > GEOM_MAX_POLYGON_VERTICES) {
            fail(ld, &vp, "polygon has %zu vertices, at most %d allowed", count,
                 GEOM_MAX_POLYGON_VERTICES);
            return false;
        }
        vec2 verts[GEOM_MAX_POLYGON_VERTICES];
        for (size_t i = 0; i < count; i++)
            if (!read_vec2(ld, json_array_get(vs, i), place_index(vp, i), "a polygon vertex",
                           &verts[i]))
                return false;
        err = geom_make_polygon(verts, (int)count, shape);
    }
    if (err) {
        fail(ld, &sp, "invalid %s: %s", kinds[kind], geom_shape_error_str(err));
        return false;
    }
    return true;
}

/* A static's optional filter (PROTOCOL.md "Filters, sensors"): "sensor" true/false, "category"
 * and "mask" 32-bit unsigned integers; absent, the defaults (category 1, mask all, solid). Tiled
 * maps' collide:sensor / collide:category / collide:mask arrive here (world_tiled.c). */
static bool read_filter(loader *ld, const json_t *st, json_place p, world_filter *out) {
    out->category = 1u;
    out->mask = UINT32_MAX;
    out->sensor = false;
    const json_t *sensor = json_object_get(st, "sensor");
    if (sensor && !json_is_boolean(sensor)) {
        json_place kp = place_key(p, "sensor");
        fail(ld, &kp, "\"sensor\" must be true or false");
        return false;
    }
    out->sensor = sensor && json_is_true(sensor);
    static const char *const names[] = {"category", "mask"};
    uint32_t *fields[] = {&out->category, &out->mask};
    for (int i = 0; i < 2; i++) {
        const json_t *v = json_object_get(st, names[i]);
        if (!v) continue;
        json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
        if (n < 0 || n > (json_int_t)UINT32_MAX) {
            json_place kp = place_key(p, names[i]);
            fail(ld, &kp, "\"%s\" must be an integer from 0 to 4294967295", names[i]);
            return false;
        }
        *fields[i] = (uint32_t)n;
    }
    if (out->category == 0u) out->category = 1u; /* 0 means the default, as on the wire */
    if (out->mask == 0u) out->mask = UINT32_MAX;
    return true;
}

/* A static's optional "one_way" (PROTOCOL.md SpawnBody.one_way): true/false, absent false. Tiled
 * maps' collide:one_way arrives here (world_tiled.c). */
static bool read_one_way(loader *ld, const json_t *st, json_place p, bool *out) {
    const json_t *v = json_object_get(st, "one_way");
    if (v && !json_is_boolean(v)) {
        json_place kp = place_key(p, "one_way");
        fail(ld, &kp, "\"one_way\" must be true or false");
        return false;
    }
    *out = v && json_is_true(v);
    return true;
}

/* Spawns the static st (statics[i], at p) into w: its shape, filter and one-way flag. */
static bool load_static(loader *ld, world *w, const json_t *st, json_place p, size_t i) {
    static const char *const skeys[] = {"position", "box",  "polygon", "circle", "sensor",
                                        "category", "mask", "one_way", NULL};
    if (!json_is_object(st)) {
        fail(ld, &p, "a static must be an object");
        return false;
    }
    if (!only_keys(ld, st, p, skeys)) return false;
    vec2 pos;
    if (!read_vec2(ld, json_object_get(st, "position"), place_key(p, "position"), "static position",
                   &pos))
        return false;
    geom_shape shape;
    world_filter filter;
    bool one_way;
    if (!read_shape(ld, st, p, &shape) || !read_filter(ld, st, p, &filter) ||
        !read_one_way(ld, st, p, &one_way))
        return false;
    geom_shape_error serr = GEOM_OK;
    world_body_id id = 0;
    world_status status = world_spawn(w, WORLD_BODY_STATIC, &shape, pos, 0, &id, &serr);
    if (status == WORLD_OK && (filter.category != 1u || filter.mask != UINT32_MAX || filter.sensor))
        status = world_body_set_filter(w, id, &filter);
    if (status == WORLD_OK && one_way) status = world_body_set_one_way(w, id, true);
    if (status == WORLD_ERR_INVALID_SHAPE) {
        fail(ld, &p, "invalid shape: %s", geom_shape_error_str(serr));
        return false;
    }
    if (status != WORLD_OK) {
        fail(ld, &p, "static %zu: %s", i, world_status_str(status));
        return false;
    }
    return true;
}

/* The required "bounds": {"min": [x, y], "max": [x, y]} into cfg->bounds. */
static bool read_bounds(loader *ld, const json_t *root, json_place top, world_config *cfg) {
    const json_t *bounds = json_object_get(root, "bounds");
    json_place bp = place_key(top, "bounds");
    if (!json_is_object(bounds)) {
        fail(ld, &bp, "\"bounds\" is required: {\"min\": [x, y], \"max\": [x, y]}");
        return false;
    }
    static const char *const bkeys[] = {"min", "max", NULL};
    if (!only_keys(ld, bounds, bp, bkeys)) return false;
    if (!read_vec2(ld, json_object_get(bounds, "min"), place_key(bp, "min"), "bounds.min",
                   &cfg->bounds.min) ||
        !read_vec2(ld, json_object_get(bounds, "max"), place_key(bp, "max"), "bounds.max",
                   &cfg->bounds.max))
        return false;
    if (!(cfg->bounds.min.x < cfg->bounds.max.x && cfg->bounds.min.y < cfg->bounds.max.y)) {
        fail(ld, &bp, "bounds.min must be below bounds.max on both axes");
        return false;
    }
    return true;
}

/* The optional "gravity": [x, y] (PROTOCOL.md "Characters: side-on games") into cfg->gravity;
 * absent, [0, 0] whatever base held: gravity belongs to the level, like its bounds. The bound
 * keeps v += g dt far from float overflow at any tick rate the daemon takes, and is still far
 * past any game's gravity (Earth's is 9.8 m/s^2; a level in pixels might use a few thousand). */
static bool read_gravity(loader *ld, const json_t *root, json_place top, world_config *cfg) {
    cfg->gravity = v2(0.0f, 0.0f);
    const json_t *g = json_object_get(root, "gravity");
    if (!g) return true;
    json_place gp = place_key(top, "gravity");
    if (!read_vec2(ld, g, gp, "\"gravity\"", &cfg->gravity)) return false;
    double gx = cfg->gravity.x, gy = cfg->gravity.y;
    if (!(sqrt(gx * gx + gy * gy) <= WORLD_MAX_GRAVITY)) {
        fail(ld, &gp, "\"gravity\" (%.9g, %.9g) is stronger than %g units/s^2", gx, gy,
             WORLD_MAX_GRAVITY);
        return false;
    }
    if (sqrt(gx * gx + gy * gy) != 0.0 && !(sqrt(gx * gx + gy * gy) >= WORLD_MIN_GRAVITY)) {
        fail(ld, &gp, "\"gravity\" (%.9g, %.9g) is weaker than %g units/s^2 (use 0 for none)", gx,
             gy, WORLD_MIN_GRAVITY);
        return false;
    }
    return true;
}

static world *load_doc(loader *ld, const json_t *root, const world_config *base,
                       world_spawn_points *spawn_points) {
    json_place top = place0();
    if (!json_is_object(root)) {
        fail(ld, &top, "the world file must be a JSON object");
        return NULL;
    }
    static const char *const keys[] = {"bounds", "gravity", "statics", "spawn_points", NULL};
    if (!only_keys(ld, root, top, keys)) return NULL;
    world_config cfg;
    if (base)
        cfg = *base;
    else
        world_config_default(&cfg);
    if (!read_bounds(ld, root, top, &cfg) || !read_gravity(ld, root, top, &cfg)) return NULL;
    json_place bp = place_key(top, "bounds");
    const json_t *statics = json_object_get(root, "statics");
    json_place sp = place_key(top, "statics");
    if (statics && !json_is_array(statics)) {
        fail(ld, &sp, "\"statics\" must be an array");
        return NULL;
    }
    size_t static_count = statics ? json_array_size(statics) : 0;
    if (static_count >= cfg.max_bodies) {
        fail(ld, &sp, "%zu statics do not fit in max_bodies %u", static_count, cfg.max_bodies);
        return NULL;
    }
    world *w = world_create(&cfg);
    if (!w) {
        fail(ld, &bp, "cannot create a world with these bounds (configuration or memory)");
        return NULL;
    }
    for (size_t i = 0; i < static_count; i++)
        if (!load_static(ld, w, json_array_get(statics, i), place_index(sp, i), i)) goto fail;
    const json_t *points = json_object_get(root, "spawn_points");
    json_place pp = place_key(top, "spawn_points");
    if (points && !json_is_array(points)) {
        fail(ld, &pp, "\"spawn_points\" must be an array of [x, y]");
        goto fail;
    }
    size_t point_count = points ? json_array_size(points) : 0;
    if (point_count > WORLD_MAX_SPAWN_POINTS) {
        fail(ld, &pp, "%zu spawn points, at most %d allowed", point_count, WORLD_MAX_SPAWN_POINTS);
        goto fail;
    }
    if (spawn_points) spawn_points->count = 0;
    for (size_t i = 0; i < point_count; i++) {
        vec2 v;
        json_place p = place_index(pp, i);
        if (!read_vec2(ld, json_array_get(points, i), p, "a spawn point", &v)) goto fail;
        if (!aabb_contains(cfg.bounds, aabb_make(v, v))) {
            fail(ld, &p, "spawn point (%g, %g) is outside the bounds", (double)v.x, (double)v.y);
            goto fail;
        }
        if (spawn_points) spawn_points->points[spawn_points->count++] = v;
    }
    return w;
fail:
    world_destroy(w);
    return NULL;
}

world *world_load_json(const char *json, const char *name, const world_config *base,
                       world_spawn_points *spawn_points, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    if (!name) name = "<world>";
    loader ld = {json, json ? strlen(json) : 0, name, err, err_size};
    if (!json) {
        if (err && err_size) snprintf(err, err_size, "%s:1:1: no JSON text", name);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, ld.len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (err && err_size)
            snprintf(err, err_size, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    world *w = load_doc(&ld, root, base, spawn_points);
    json_decref(root);
    return w;
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcasecmp(s + n - t, tail) == 0;
}

/* A ".json" file is Tiled's when its top level names the Tiled version that saved it. */
static bool is_tiled_json(const char *text) {
    json_t *root = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
    bool tiled = json_is_object(root) && json_object_get(root, "tiledversion") != NULL;
    json_decref(root);
    return tiled;
}

char *world_read_any(int dir_fd, const char *path, bool no_follow, const world_config *base,
                     world_file_notes *notes, char *err, size_t err_size) {
    if (notes) memset(notes, 0, sizeof *notes);
    bool tmx = ends_with(path, ".tmx"), tmj = ends_with(path, ".tmj");
    if (!tmx && !tmj) {
        char *text = world_read_text(dir_fd, path, no_follow, err, err_size);
        if (!text || !ends_with(path, ".json") || !is_tiled_json(text)) return text;
        free(text);
    }
    tiled_source src = {dir_fd, path, no_follow, NULL};
    /* tiled_read picks the parser by extension: a Tiled ".json" goes to the TMJ one as ".tmj" */
    tiled_map *m = tiled_read(&src, err, err_size);
    if (!m) return NULL;
    char *json = world_tiled_json(m, base, notes, err, err_size);
    if (json && notes) notes->tiled = true;
    tiled_free(m);
    return json;
}

void world_notes_explain(const world_file_notes *notes, char *err, size_t err_size) {
    if (!notes || !notes->tiled || !err || !err_size) return;
    /* the prefix ends at the third ':' from the reason: NAME may hold ':' itself */
    char *reason = strstr(err, ": ");
    char *colon = reason;
    int back = 0;
    while (colon && colon > err && back < 2) {
        colon--;
        if (*colon == ':') back++;
    }
    if (!reason || back < 2) return;
    char msg[512];
    snprintf(msg, sizeof msg, "%.*s: the map's converted world: %s%s", (int)(colon - err), err,
             reason + 2,
             strstr(reason, "max_bodies") || strstr(reason, "full") ? " (raise --max-bodies)" : "");
    snprintf(err, err_size, "%s", msg);
}

world *world_load_file(const char *path, const world_config *base, world_spawn_points *spawn_points,
                       char *err, size_t err_size) {
    char *text = world_read_any(AT_FDCWD, path, false, base, NULL, err, err_size);
    if (!text) return NULL;
    world *w = world_load_json(text, path, base, spawn_points, err, err_size);
    free(text);
    return w;
}

/* world_tiled_tmx_objects: a TMX object (a layer's, a tile's collision shape or a TX template's)
 * with its shape (ellipse, point, polygon, polyline, text), and templates: read once per map by a
 * nested parse, copied under each instance, their tile gids renumbered as the map numbers them.
 * Apart because a template pulls in its own file and tileset, which no other element does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tiled_tmx.h"

static bool object_copy(px *p, tiled_object *dst, const tiled_object *src) {
    *dst = *src;
    dst->points = NULL;
    dst->type = tmx_dup_or_fail(p, src->type);
    dst->name = tmx_dup_or_fail(p, src->name);
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
    if (!tmx_spend(p, src->npoints) || !tmx_props_merge_under(p, &dst->props, &src->props)) {
        tiled_object_free(dst);
        return false;
    }
    return true;
}

static const tmx_template *load_template(px *p, const char *ref);
static bool map_template_gid(px *p, const tmx_template *tp, uint32_t *gid);

void tmx_start_object(px *p, const XML_Char **a, bool in_tile) {
    tiled_object *o = &p->obj;
    long id;
    memset(o, 0, sizeof *o);
    p->obj_open = true;
    p->obj_in_tile = in_tile;
    p->obj_shape = -1;
    p->obj_has_gid = false;
    if (!tmx_attr_int(p, a, "id", 0, 0, INT32_MAX, &id)) return;
    o->id = (int)id;
    o->place = (tiled_place){p->file, tmx_line_of(p)};
    const char *tref = tmx_attr(a, "template");
    if (tref) {
        if (p->kind == FILE_TX) {
            FAIL(p, "a template's object refers to a template");
            return;
        }
        const tmx_template *tp = load_template(p, tref);
        if (!tp) return;
        if (!object_copy(p, o, &tp->obj)) return;
        o->id = (int)id;
        o->place = (tiled_place){p->file, tmx_line_of(p)};
        p->obj_has_gid = tp->has_gid;
        /* the template numbers its tile in its own tileset; an instance's own gid= is the map's */
        if (tp->has_gid && !tmx_attr(a, "gid") && !map_template_gid(p, tp, &o->gid)) return;
    } else {
        o->type = tmx_dup_or_fail(p, "");
        o->name = tmx_dup_or_fail(p, "");
        if (!o->type || !o->name) return;
    }
    const char *type = tmx_attr(a, "type");
    if (!type) type = tmx_attr(a, "class");
    const char *name = tmx_attr(a, "name");
    if (type) {
        free(o->type);
        if (!(o->type = tmx_dup_or_fail(p, type))) return;
    }
    if (name) {
        free(o->name);
        if (!(o->name = tmx_dup_or_fail(p, name))) return;
    }
    /* the instance's attributes override the template's: each only where given */
    if (!tmx_attr_double(p, a, "x", o->x, &o->x) || !tmx_attr_double(p, a, "y", o->y, &o->y) ||
        !tmx_attr_double(p, a, "width", o->width, &o->width) ||
        !tmx_attr_double(p, a, "height", o->height, &o->height) ||
        !tmx_attr_double(p, a, "rotation", o->rotation, &o->rotation))
        return;
    if (tmx_attr(a, "gid")) {
        if (!tmx_attr_u32(p, a, "gid", &o->gid)) return;
        p->obj_has_gid = true;
    }
    if (!tmx_spend(p, 1)) return;
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
    if (!tmx_spend(p, n)) return;
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
        if (!comma || k == n || !tmx_to_double(tok, &x) || !tmx_to_double(comma + 1, &y)) {
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

void tmx_start_shape(px *p, const char *name, const XML_Char **a) {
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
        const char *pts = tmx_attr(a, "points");
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
    tiled_place from = {p->file, tmx_line_of(p)};
    char *text = tiled_read_file(p->t->src, "", tp->tileset, "template's tileset", m, from, &file,
                                 p->t->err, p->t->err_size);
    if (!text) {
        tmx_stop(p);
        return false;
    }
    tiled_tileset ts;
    memset(&ts, 0, sizeof ts);
    bool ok = p->t->read_nested(p->t, FILE_TSX, file, text, &ts, NULL);
    free(text);
    if (!ok) {
        tmx_stop(p);
        return false;
    }
    if (next + (uint64_t)ts.tilecount > TILED_GID_MASK) {
        tmx_tileset_free(&ts);
        FAIL(p, "template '%s': no gids left for its tileset '%s'", tp->file, tp->tileset);
        return false;
    }
    ts.firstgid = (uint32_t)next;
    size_t before = m->ntilesets;
    tmx_push_tileset(p, &ts, file);
    tmx_tileset_free(&ts);
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

void tmx_end_object(px *p) {
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
        if (!tmx_grow(p, (void **)&p->tile.shapes, p->tile.nshapes, sizeof *p->tile.shapes)) {
            tiled_object_free(o);
            return;
        }
        p->tile.shapes[p->tile.nshapes++] = *o;
    } else {
        o->x += p->layer_offx;
        o->y += p->layer_offy;
        if (!tmx_grow(p, (void **)&p->layer.objects, p->layer.nobjects, sizeof *p->layer.objects)) {
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
    tiled_place from = {p->file, tmx_line_of(p)};
    /* the object is not in the list yet: name it in the error ourselves */
    char *text =
        tiled_read_file(t->src, p->dir, ref, "template", t->m, from, &file, t->err, t->err_size);
    if (!text) {
        tmx_stop(p);
        return NULL;
    }
    tmx_template tp;
    memset(&tp, 0, sizeof tp);
    tp.file = file;
    bool ok = t->read_nested(t, FILE_TX, file, text, NULL, &tp);
    free(text);
    if (ok && !tmx_grow(p, (void **)&t->templates, t->ntemplates, sizeof *t->templates)) ok = false;
    if (!ok) {
        tiled_object_free(&tp.obj);
        tmx_stop(p);
        return NULL;
    }
    t->templates[t->ntemplates] = tp;
    return &t->templates[t->ntemplates++];
}

void tmx_start_template_tileset(px *p, const XML_Char **a) {
    long firstgid;
    if (!tmx_attr_int(p, a, "firstgid", 1, 1, TILED_GID_MASK, &firstgid)) return;
    const char *source = tmx_attr(a, "source");
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

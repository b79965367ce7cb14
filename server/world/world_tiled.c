/* world_tiled: a Tiled map (the model of internal/tiled.h, as either parser read it) into native
 * world JSON (ARCHITECTURE.md "World files: Tiled maps"), which world_load_json then builds like
 * any world file. Going through the native text keeps one builder and one set of checks, and lets
 * the rooms keep a world as text (each room builds its own on its thread).
 *
 * What is decided here, and nowhere else: the units (collide:unit pixels per world unit) and the
 * y flip (world y = (B - pixel y) / unit, B the bottom edge of the map's pixel extent), the tile
 * flips, which shapes a tile or an object gives, the collide: properties and their precedence
 * (object over tile over layer), the merging of full cells into larger boxes (tiled_merge.h) and
 * the split of concave polygons into convex pieces (geom_split.h). Each refusal names the file,
 * the layer and the object or tile; what is skipped is said in a warning. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom_split.h"
#include "tiled.h"
#include "tiled_merge.h"
#include "world_load.h"

#define TILED_MAX_PIECES 64   /* convex pieces of one polygon */
#define TILED_MAX_CLASSES 256 /* distinct filters among a layer's full cells */
#define TILED_MAX_POINTS 4096 /* vertices of one polygon object */
/* Cells of one tile layer's grid: its chunks' whole extent, not just the cells they hold, so an
 * infinite map of two far-apart chunks is bounded here, at the parsers' cap for one layer's
 * cells (16 Mi: 64 MiB of classes). */
#define TILED_MAX_GRID (1u << 24)

/* The collide: properties that apply to one shape, resolved object > tile > layer. */
typedef struct coll {
    bool solid, sensor, one_way;
    uint32_t category, mask;
    unsigned set; /* COLL_* bits already decided by a nearer level */
} coll;

enum { COLL_SOLID = 1, COLL_SENSOR = 2, COLL_ONE_WAY = 4, COLL_CATEGORY = 8, COLL_MASK = 16 };

typedef struct conv {
    const tiled_map *m;
    const world_config *base; /* the world to be built (its static grid's finest cell) */
    double unit;              /* pixels per world unit */
    double bottom;            /* B: the bottom edge of the pixel extent */
    double ext[4];            /* the pixel extent: min x, min y, max x, max y (y down) */
    int max_tx, max_ty;       /* the most tiles a merged box spans across and down (merge_limit) */
    json_t *statics;          /* the native "statics" array being built */
    json_t *spawns;           /* "spawn_points" */
    bool has_gravity;         /* collide:gravity was given: "gravity" is written */
    vec2 gravity;             /* then, in world units per second squared, y up */
    world_file_notes *notes;
    char *err;
    size_t err_size;
} conv;

/* ---- messages ---------------------------------------------------------------------------- */

static bool fail(conv *c, tiled_place at, const char *fmt, ...) {
    if (!c->err || c->err_size == 0) return false;
    int used = snprintf(c->err, c->err_size, "%s:%d: ", at.file ? at.file : "?", at.line);
    if (used < 0 || (size_t)used >= c->err_size) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + used, c->err_size - (size_t)used, fmt, ap);
    va_end(ap);
    return false;
}

static void warn(conv *c, tiled_place at, const char *fmt, ...) {
    world_file_notes *n = c->notes;
    if (!n) return;
    n->warnings++;
    size_t len = strlen(n->text);
    if (len + 2 >= sizeof n->text) return; /* full: counted, not kept */
    int used =
        snprintf(n->text + len, sizeof n->text - len, "%s:%d: ", at.file ? at.file : "?", at.line);
    if (used < 0 || len + (size_t)used >= sizeof n->text) return;
    len += (size_t)used;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text + len, sizeof n->text - len, fmt, ap);
    va_end(ap);
    len = strlen(n->text);
    if (len + 1 < sizeof n->text) strcat(n->text, "\n");
}

/* ---- properties -------------------------------------------------------------------------- */

static bool parse_u32(const tiled_prop *p, uint32_t *out) {
    const char *s = p->value ? p->value : "";
    errno = 0;
    char *end = NULL;
    if (p->type == TILED_PROP_INT) {
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > (long long)UINT32_MAX) return false;
        *out = (uint32_t)v;
        return true;
    }
    if (p->type != TILED_PROP_STRING) return false;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-' || *s == '+') return false;
    bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned long long v = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
    if (errno || end == (hex ? s + 2 : s) || *end || v > UINT32_MAX) return false;
    *out = (uint32_t)v;
    return true;
}

static bool parse_bool(const tiled_prop *p, bool *out) {
    if (p->type != TILED_PROP_BOOL || !p->value) return false;
    if (strcmp(p->value, "true") == 0) return (*out = true), true;
    if (strcmp(p->value, "false") == 0) return (*out = false), true;
    return false;
}

/* Fills what props decide and a nearer level has not. `who` names the owner in messages. */
static bool coll_apply(conv *c, const tiled_props *props, coll *k, tiled_place at,
                       const char *who) {
    static const struct {
        const char *name;
        unsigned bit;
    } flags[] = {{"collide:solid", COLL_SOLID},
                 {"collide:sensor", COLL_SENSOR},
                 {"collide:one_way", COLL_ONE_WAY}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        const tiled_prop *p = tiled_prop_find(props, flags[i].name);
        if (!p || (k->set & flags[i].bit)) continue;
        bool v;
        if (!parse_bool(p, &v))
            return fail(c, at, "%s: %s must be a bool property", who, flags[i].name);
        k->set |= flags[i].bit;
        if (flags[i].bit == COLL_SOLID) k->solid = v;
        if (flags[i].bit == COLL_SENSOR) k->sensor = v;
        if (flags[i].bit == COLL_ONE_WAY) k->one_way = v;
    }
    static const char *const masks[] = {"collide:category", "collide:mask"};
    for (int i = 0; i < 2; i++) {
        unsigned bit = i ? COLL_MASK : COLL_CATEGORY;
        const tiled_prop *p = tiled_prop_find(props, masks[i]);
        if (!p || (k->set & bit)) continue;
        uint32_t v;
        if (!parse_u32(p, &v))
            return fail(c, at,
                        "%s: %s must be an int from 0, or a string in decimal or 0x hex up to "
                        "0xffffffff",
                        who, masks[i]);
        k->set |= bit;
        *(i ? &k->mask : &k->category) = v;
    }
    return true;
}

static coll coll_default(void) { return (coll){false, false, false, 1u, UINT32_MAX, 0u}; }

/* ---- coordinates ------------------------------------------------------------------------- */

static vec2 to_world(const conv *c, double px, double py) {
    return v2((float)(px / c->unit), (float)((c->bottom - py) / c->unit));
}

/* (x, y) turned by deg degrees clockwise on screen (Tiled's y-down view) about (ox, oy). */
static void turn(double deg, double ox, double oy, double *x, double *y) {
    if (deg == 0.0) return;
    double r = deg * (M_PI / 180.0), cs = cos(r), sn = sin(r);
    double dx = *x - ox, dy = *y - oy;
    *x = ox + dx * cs - dy * sn;
    *y = oy + dx * sn + dy * cs;
}

/* ---- emitting statics -------------------------------------------------------------------- */

static json_t *vec_json(vec2 v) { return json_pack("[f, f]", (double)v.x, (double)v.y); }

/* One native static: position, shape (a box when the piece is an axis-aligned rectangle), and the
 * filter when it is not the default. Refused when it leaves the map's extent. */
static bool emit(conv *c, const geom_piece *pc, const geom_shape *circle, vec2 center,
                 const coll *k, tiled_place at, const char *who) {
    json_t *st = json_object();
    aabb box;
    if (circle) {
        float r = circle->u.radius;
        box = aabb_make(v2(center.x - r, center.y - r), v2(center.x + r, center.y + r));
        json_object_set_new(st, "circle", json_pack("{s:f}", "radius", (double)r));
        c->notes->circles++;
    } else {
        box = aabb_make(pc->v[0], pc->v[0]);
        for (int i = 1; i < pc->count; i++)
            box = aabb_union(box, aabb_make(pc->v[i], pc->v[i]));
        bool rect = pc->count == 4;
        for (int i = 0; rect && i < 4; i++)
            rect = (pc->v[i].x == box.min.x || pc->v[i].x == box.max.x) &&
                   (pc->v[i].y == box.min.y || pc->v[i].y == box.max.y);
        center = v2((box.min.x + box.max.x) * 0.5f, (box.min.y + box.max.y) * 0.5f);
        if (rect) {
            vec2 h = v2((box.max.x - box.min.x) * 0.5f, (box.max.y - box.min.y) * 0.5f);
            json_object_set_new(st, "box", json_pack("{s:o}", "half_extents", vec_json(h)));
            c->notes->boxes++;
        } else {
            json_t *vs = json_array();
            for (int i = 0; i < pc->count; i++)
                json_array_append_new(vs, vec_json(v2_sub(pc->v[i], center)));
            json_object_set_new(st, "polygon", json_pack("{s:o}", "vertices", vs));
            c->notes->polygons++;
        }
    }
    json_object_set_new(st, "position", vec_json(center));
    if (k->sensor) json_object_set_new(st, "sensor", json_true());
    if (k->category != 1u) json_object_set_new(st, "category", json_integer(k->category));
    if (k->mask != UINT32_MAX) json_object_set_new(st, "mask", json_integer(k->mask));
    /* a one-way platform: blocks what comes down onto it (up is the map's up, world +y) */
    if (k->one_way) json_object_set_new(st, "one_way", json_true());
    json_array_append_new(c->statics, st); /* the array owns st from here */
    aabb bounds = aabb_make(to_world(c, c->ext[0], c->ext[3]), to_world(c, c->ext[2], c->ext[1]));
    if (!aabb_contains(bounds, box)) {
        return fail(c, at, "%s: a shape at (%g, %g) lies outside the map's extent", who,
                    (double)center.x, (double)center.y);
    }
    return true;
}

/* A polygon given in pixels (either winding, maybe concave), split and emitted. */
static bool emit_outline(conv *c, const double *xy, size_t n, const coll *k, tiled_place at,
                         const char *who) {
    if (n > TILED_MAX_POINTS)
        return fail(c, at, "%s: %zu vertices, at most %d", who, n, TILED_MAX_POINTS);
    vec2 pts[TILED_MAX_POINTS];
    for (size_t i = 0; i < n; i++)
        pts[i] = to_world(c, xy[2 * i], xy[2 * i + 1]);
    geom_piece pieces[TILED_MAX_PIECES]; /* ~8 KiB: loads run on several threads (rooms) */
    const char *why = NULL;
    int np = geom_split_polygon(pts, (int)n, pieces, TILED_MAX_PIECES, &why);
    if (np < 0) return fail(c, at, "%s: %s", who, why ? why : "cannot be split");
    if (np > 1) c->notes->concave_split++;
    for (int i = 0; i < np; i++)
        if (!emit(c, &pieces[i], NULL, v2(0, 0), k, at, who)) return false;
    return true;
}

/* Maps a point of a shape given in its own frame to map pixels: the object's frame plus an
 * optional tile placement (flips inside the tile's image, then the image's top-left). */
typedef struct frame {
    bool in_tile;
    uint32_t flips;
    double img_w, img_h; /* the tile's image, before the diagonal flip */
    double left, top;    /* where the (flipped) image's top-left lands, in map pixels */
} frame;

static void place(const frame *f, double *x, double *y) {
    if (!f || !f->in_tile) return;
    double w = f->img_w, h = f->img_h;
    if (f->flips & TILED_FLIP_D) { /* the diagonal first, then the others (Tiled's order) */
        double t = *x;
        *x = *y;
        *y = t;
        w = f->img_h;
        h = f->img_w;
    }
    if (f->flips & TILED_FLIP_H) *x = w - *x;
    if (f->flips & TILED_FLIP_V) *y = h - *y;
    *x += f->left;
    *y += f->top;
}

/* One object as statics (or a spawn point), in frame f (NULL: the map itself). */
static bool object_shapes(conv *c, const tiled_object *o, const frame *f, const coll *k,
                          const char *who) {
    double xy[2 * 4];
    switch (o->kind) {
    case TILED_OBJ_RECT: {
        double cx[4] = {0, o->width, o->width, 0}, cy[4] = {0, 0, o->height, o->height};
        if (!(o->width > 0 && o->height > 0))
            return fail(c, o->place, "%s: a rectangle of %g x %g pixels", who, o->width, o->height);
        for (int i = 0; i < 4; i++) {
            double x = o->x + cx[i], y = o->y + cy[i];
            turn(o->rotation, o->x, o->y, &x, &y);
            place(f, &x, &y);
            xy[2 * i] = x;
            xy[2 * i + 1] = y;
        }
        return emit_outline(c, xy, 4, k, o->place, who);
    }
    case TILED_OBJ_ELLIPSE: {
        double w = o->width, h = o->height;
        if (!(w > 0) || fabs(w - h) > 1e-6 * fmax(w, h))
            return fail(c, o->place,
                        "%s: an ellipse of %g x %g pixels: only circles (equal "
                        "sides) are supported",
                        who, w, h);
        double x = o->x + w / 2, y = o->y + h / 2;
        turn(o->rotation, o->x, o->y, &x, &y);
        place(f, &x, &y);
        geom_shape s;
        if (geom_make_circle((float)(w / 2 / c->unit), &s) != GEOM_OK)
            return fail(c, o->place, "%s: a circle of diameter %g pixels is out of range", who, w);
        return emit(c, NULL, &s, to_world(c, x, y), k, o->place, who);
    }
    case TILED_OBJ_POLYGON: {
        if (o->npoints > TILED_MAX_POINTS)
            return fail(c, o->place, "%s: %zu vertices, at most %d", who, o->npoints,
                        TILED_MAX_POINTS);
        double *pts = malloc(2 * (o->npoints ? o->npoints : 1) * sizeof *pts);
        if (!pts) return fail(c, o->place, "out of memory");
        for (size_t i = 0; i < o->npoints; i++) {
            double x = o->x + o->points[i].x, y = o->y + o->points[i].y;
            turn(o->rotation, o->x, o->y, &x, &y);
            place(f, &x, &y);
            pts[2 * i] = x;
            pts[2 * i + 1] = y;
        }
        bool ok = emit_outline(c, pts, o->npoints, k, o->place, who);
        free(pts);
        return ok;
    }
    case TILED_OBJ_POINT:
        if (!f && strcmp(o->type ? o->type : "", "spawn") == 0) {
            vec2 p = to_world(c, o->x, o->y);
            aabb b =
                aabb_make(to_world(c, c->ext[0], c->ext[3]), to_world(c, c->ext[2], c->ext[1]));
            if (!aabb_contains(b, aabb_make(p, p)))
                return fail(c, o->place, "%s: a spawn point outside the map's extent", who);
            if (json_array_size(c->spawns) >= WORLD_MAX_SPAWN_POINTS)
                return fail(c, o->place, "%s: more than %d spawn points", who,
                            WORLD_MAX_SPAWN_POINTS);
            json_array_append_new(c->spawns, vec_json(p));
            return true;
        }
        warn(c, o->place,
             "%s: a point that is not a spawn point (type or class \"spawn\") is "
             "skipped",
             who);
        return true;
    case TILED_OBJ_POLYLINE:
        warn(c, o->place, "%s: a polyline is skipped (it encloses nothing)", who);
        return true;
    case TILED_OBJ_TEXT:
        warn(c, o->place, "%s: a text object is skipped", who);
        return true;
    case TILED_OBJ_TILE:
        warn(c, o->place,
             "%s: a tile placed as an object is skipped (draw its collision in the "
             "tileset and place it in a tile layer, or draw a shape)",
             who);
        return true;
    }
    return true;
}

/* ---- tiles ------------------------------------------------------------------------------- */

static const tiled_tileset *tileset_of(const tiled_map *m, uint32_t gid) {
    const tiled_tileset *ts = NULL;
    for (size_t i = 0; i < m->ntilesets; i++)
        if (m->tilesets[i].firstgid <= gid) ts = &m->tilesets[i];
    return ts;
}

static const tiled_tile *tile_of(const tiled_tileset *ts, uint32_t local) {
    size_t lo = 0, hi = ts->ntiles;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ts->tiles[mid].id < local)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ts->ntiles && ts->tiles[lo].id == local ? &ts->tiles[lo] : NULL;
}

/* The classes of a layer's full cells: one per distinct filter. */
typedef struct classes {
    coll k[TILED_MAX_CLASSES];
    uint32_t n;
} classes;

static uint32_t class_of(classes *cl, const coll *k) {
    for (uint32_t i = 0; i < cl->n; i++)
        if (cl->k[i].sensor == k->sensor && cl->k[i].one_way == k->one_way &&
            cl->k[i].category == k->category && cl->k[i].mask == k->mask)
            return i + 1;
    if (cl->n == TILED_MAX_CLASSES) return 0;
    cl->k[cl->n++] = *k;
    return cl->n;
}

/* One layer's grid of full cells (class ids, 0 empty) over its chunks' extent, in tiles. */
typedef struct grid {
    int x0, y0, w, h;
    uint32_t *cls;
} grid;

static bool tile_cell(conv *c, const tiled_layer *L, grid *g, classes *cl, int tx, int ty,
                      uint32_t gid) {
    const tiled_map *m = c->m;
    char who[160];
    uint32_t id = gid & TILED_GID_MASK;
    snprintf(who, sizeof who, "layer '%s' cell (%d, %d)", L->name ? L->name : "", tx, ty);
    if (gid & TILED_ROTATE_HEX)
        return fail(c, L->place, "%s: the hexagonal rotation bit is set on an orthogonal map", who);
    const tiled_tileset *ts = tileset_of(m, id);
    if (!ts || (ts->tilecount > 0 && id - ts->firstgid >= (uint32_t)ts->tilecount))
        return fail(c, L->place, "%s: tile gid %u is in no tileset", who, id);
    const tiled_tile *t = tile_of(ts, id - ts->firstgid);
    if (!t) return true; /* a tile that says nothing: no collision */
    snprintf(who, sizeof who, "layer '%s' cell (%d, %d) tile %u of tileset '%s'",
             L->name ? L->name : "", tx, ty, t->id, ts->name ? ts->name : "");
    coll tk = coll_default();
    if (!coll_apply(c, &t->props, &tk, t->place, who)) return false;
    coll merged = tk;
    merged.set = tk.set;
    if (!coll_apply(c, &L->props, &merged, L->place, who)) return false;
    if (t->nshapes == 0) {
        if (!merged.solid) return true;
        uint32_t k = class_of(cl, &merged);
        if (!k)
            return fail(c, L->place, "%s: more than %d distinct filters", who, TILED_MAX_CLASSES);
        g->cls[(size_t)(ty - g->y0) * (size_t)g->w + (size_t)(tx - g->x0)] = k;
        c->notes->tiles_collidable++;
        return true;
    }
    c->notes->tiles_collidable++;
    frame f = {
        true, gid & (TILED_FLIP_H | TILED_FLIP_V | TILED_FLIP_D), ts->tilewidth, ts->tileheight, 0,
        0};
    double img_h = (gid & TILED_FLIP_D) ? ts->tilewidth : ts->tileheight;
    f.left = (double)tx * m->tilewidth + L->offsetx;
    f.top = (double)(ty + 1) * m->tileheight - img_h + L->offsety;
    size_t before = json_array_size(c->statics);
    for (size_t i = 0; i < t->nshapes; i++) {
        coll sk = coll_default();
        if (!coll_apply(c, &t->shapes[i].props, &sk, t->shapes[i].place, who) ||
            !coll_apply(c, &t->props, &sk, t->place, who) ||
            !coll_apply(c, &L->props, &sk, L->place, who))
            return false;
        if ((sk.set & COLL_SOLID) && !sk.solid) continue; /* as an object's (object_layer) */
        if (!object_shapes(c, &t->shapes[i], &f, &sk, who)) return false;
    }
    c->notes->tile_statics += json_array_size(c->statics) - before;
    return true;
}

static bool layer_grid(conv *c, const tiled_layer *L, grid *g) {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    for (size_t i = 0; i < L->nchunks; i++) {
        const tiled_chunk *ch = &L->chunks[i];
        if (i == 0 || ch->x < x0) x0 = ch->x;
        if (i == 0 || ch->y < y0) y0 = ch->y;
        if (i == 0 || ch->x + ch->width > x1) x1 = ch->x + ch->width;
        if (i == 0 || ch->y + ch->height > y1) y1 = ch->y + ch->height;
    }
    g->x0 = x0;
    g->y0 = y0;
    g->w = x1 - x0;
    g->h = y1 - y0;
    size_t cells = (size_t)g->w * (size_t)g->h;
    if (cells > TILED_MAX_GRID)
        return fail(c, L->place, "layer '%s': its chunks span %d x %d tiles, more than %u cells",
                    L->name ? L->name : "", g->w, g->h, TILED_MAX_GRID);
    g->cls = calloc(cells ? cells : 1, sizeof *g->cls);
    return g->cls ? true : fail(c, L->place, "out of memory");
}

/* A merged box spans at most the finest cell of the world's statics grid (world_static_cell)
 * when one tile fits in it: a larger static lives in a coarser level, and the world's fast paths
 * for tile maps need every static in the finest one. Merging past it made S1's map 3.9x slower per
 * tick than its 13,798 one-cell boxes (bench_tiled s1); within it, merging still takes a level's
 * boxes down to a fraction. */
static void merge_limit(conv *c) {
    world_config cfg;
    if (c->base)
        cfg = *c->base;
    else
        world_config_default(&cfg);
    cfg.bounds = aabb_make(to_world(c, c->ext[0], c->ext[3]), to_world(c, c->ext[2], c->ext[1]));
    double cell = world_static_cell(&cfg) * c->unit; /* in pixels */
    double tx = floor(cell / c->m->tilewidth), ty = floor(cell / c->m->tileheight);
    /* A tile already larger than the cell: no static of this layer is in the finest level
     * anyway, so nothing is kept by limiting the merge. */
    bool no_limit = tx < 1 || ty < 1;
    c->max_tx = no_limit || tx > 1e6 ? 1000000 : (int)tx;
    c->max_ty = no_limit || ty > 1e6 ? 1000000 : (int)ty;
}

/* One merged rectangle of cells as boxes of at most max_tx x max_ty cells. */
static bool emit_rect(conv *c, const tiled_layer *L, const grid *g, const tiled_rect *r,
                      const coll *k) {
    const tiled_map *m = c->m;
    for (int y0 = 0; y0 < r->h; y0 += c->max_ty)
        for (int x0 = 0; x0 < r->w; x0 += c->max_tx) {
            int w = r->w - x0 < c->max_tx ? r->w - x0 : c->max_tx;
            int h = r->h - y0 < c->max_ty ? r->h - y0 : c->max_ty;
            int cx = g->x0 + r->x + x0, cy = g->y0 + r->y + y0;
            double l = (double)cx * m->tilewidth + L->offsetx;
            double t = (double)cy * m->tileheight + L->offsety;
            double rr = l + (double)w * m->tilewidth, b = t + (double)h * m->tileheight;
            double xy[8] = {l, t, rr, t, rr, b, l, b};
            char who[160];
            snprintf(who, sizeof who, "layer '%s' cells (%d, %d)-(%d, %d)", L->name ? L->name : "",
                     cx, cy, cx + w - 1, cy + h - 1);
            if (!emit_outline(c, xy, 4, k, L->place, who)) return false;
            c->notes->tile_statics++;
        }
    return true;
}

/* The merged full cells of one layer, as boxes. */
static bool emit_cells(conv *c, const tiled_layer *L, const grid *g, const classes *cl) {
    size_t cells = (size_t)g->w * (size_t)g->h, full = 0;
    for (size_t i = 0; i < cells; i++)
        full += g->cls[i] != 0;
    if (!full) return true;
    tiled_rect *r = malloc(full * sizeof *r);
    if (!r) return fail(c, L->place, "out of memory");
    size_t n = tiled_merge_cells(g->cls, g->w, g->h, r, full);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = emit_rect(c, L, g, &r[i], &cl->k[r[i].cls - 1]);
    free(r);
    return ok;
}

static bool tile_layer(conv *c, const tiled_layer *L) {
    grid g = {0, 0, 0, 0, NULL};
    if (!layer_grid(c, L, &g)) return false;
    classes cl; /* ~5 KiB on the stack, not static: loads run on several threads */
    cl.n = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < L->nchunks; i++) {
        const tiled_chunk *ch = &L->chunks[i];
        for (int y = 0; ok && y < ch->height; y++)
            for (int x = 0; ok && x < ch->width; x++) {
                uint32_t gid = ch->gids[(size_t)y * (size_t)ch->width + (size_t)x];
                if (gid) ok = tile_cell(c, L, &g, &cl, ch->x + x, ch->y + y, gid);
            }
    }
    ok = ok && emit_cells(c, L, &g, &cl);
    free(g.cls);
    return ok;
}

/* ---- objects ----------------------------------------------------------------------------- */

static bool object_layer(conv *c, const tiled_layer *L) {
    for (size_t i = 0; i < L->nobjects; i++) {
        const tiled_object *o = &L->objects[i];
        char who[160];
        snprintf(who, sizeof who, "layer '%s' object %d", L->name ? L->name : "", o->id);
        coll k = coll_default();
        if (!coll_apply(c, &o->props, &k, o->place, who) ||
            !coll_apply(c, &L->props, &k, L->place, who))
            return false;
        /* An object is solid unless it says otherwise: drawing a shape on a collision layer is
         * the point of it. collide:solid false (on it or its layer) leaves it out. */
        if ((k.set & COLL_SOLID) && !k.solid && o->kind != TILED_OBJ_POINT) continue;
        if (!object_shapes(c, o, NULL, &k, who)) return false;
    }
    return true;
}

/* ---- the map ----------------------------------------------------------------------------- */

static bool map_units(conv *c) {
    const tiled_map *m = c->m;
    if (!m->orientation || strcmp(m->orientation, "orthogonal") != 0)
        return fail(c, m->place, "orientation '%s': only orthogonal maps are read",
                    m->orientation ? m->orientation : "");
    if (m->tilewidth <= 0 || m->tileheight <= 0)
        return fail(c, m->place, "tiles of %d x %d pixels", m->tilewidth, m->tileheight);
    c->unit = 1.0;
    const tiled_prop *u = tiled_prop_find(&m->props, "collide:unit");
    if (u) {
        char *end = NULL;
        double v = u->value ? strtod(u->value, &end) : 0;
        if ((u->type != TILED_PROP_INT && u->type != TILED_PROP_FLOAT) || !end || *end ||
            !(v > 0) || !isfinite(v))
            return fail(c, m->place,
                        "collide:unit must be a positive int or float (pixels per "
                        "world unit)");
        c->unit = v;
    }
    if (!m->infinite) {
        c->ext[0] = 0;
        c->ext[1] = 0;
        c->ext[2] = (double)m->width * m->tilewidth;
        c->ext[3] = (double)m->height * m->tileheight;
    } else {
        bool any = false;
        for (size_t i = 0; i < m->nlayers; i++) {
            const tiled_layer *L = &m->layers[i];
            for (size_t j = 0; L->kind == TILED_LAYER_TILES && j < L->nchunks; j++) {
                const tiled_chunk *ch = &L->chunks[j];
                double e[4] = {(double)ch->x * m->tilewidth, (double)ch->y * m->tileheight,
                               (double)(ch->x + ch->width) * m->tilewidth,
                               (double)(ch->y + ch->height) * m->tileheight};
                for (int k = 0; k < 4; k++)
                    if (!any || (k < 2 ? e[k] < c->ext[k] : e[k] > c->ext[k])) c->ext[k] = e[k];
                any = true;
            }
        }
        if (!any) return fail(c, m->place, "an infinite map without any chunk has no extent");
    }
    c->bottom = c->ext[3];
    return true;
}

/* The map property collide:gravity ("x,y" in pixels per second squared, y up as in the world:
 * "0,-30" pulls down) into the world's "gravity", after collide:unit. Its bound is checked here as
 * well as by the native loader, so a map that is too strong is refused at its own place, not at a
 * place in the converted text nobody wrote. */
static bool map_gravity(conv *c) {
    const tiled_prop *p = tiled_prop_find(&c->m->props, "collide:gravity");
    if (!p) return true;
    double gx, gy;
    char tail;
    if (p->type != TILED_PROP_STRING || !p->value ||
        sscanf(p->value, " %lf , %lf %c", &gx, &gy, &tail) != 2 || !isfinite(gx) || !isfinite(gy))
        return fail(c, c->m->place, "collide:gravity must be a string \"x,y\" of two numbers");
    gx /= c->unit;
    gy /= c->unit;
    if (!(sqrt(gx * gx + gy * gy) <= WORLD_MAX_GRAVITY))
        return fail(c, c->m->place,
                    "collide:gravity (%.9g, %.9g) world units/s^2 is stronger than %g", gx, gy,
                    WORLD_MAX_GRAVITY);
    c->has_gravity = true;
    c->gravity = v2((float)gx, (float)gy);
    return true;
}

char *world_tiled_json(const tiled_map *m, const world_config *base, world_file_notes *notes,
                       char *err, size_t err_size) {
    world_file_notes scratch;
    if (!notes) notes = &scratch;
    memset(notes, 0, sizeof *notes);
    conv c = {.m = m,
              .base = base,
              .unit = 1.0,
              .max_tx = 1,
              .max_ty = 1,
              .statics = json_array(),
              .spawns = json_array(),
              .notes = notes,
              .err = err,
              .err_size = err_size};
    bool ok = c.statics && c.spawns && map_units(&c) && map_gravity(&c);
    if (ok) merge_limit(&c);
    for (size_t i = 0; ok && i < m->nlayers; i++) {
        const tiled_layer *L = &m->layers[i];
        const tiled_prop *ig = tiled_prop_find(&L->props, "collide:ignore");
        bool ignore = false;
        if (ig && !parse_bool(ig, &ignore))
            ok = fail(&c, L->place, "layer '%s': collide:ignore must be a bool property",
                      L->name ? L->name : "");
        if (!ok || ignore) continue;
        ok = L->kind == TILED_LAYER_TILES ? tile_layer(&c, L) : object_layer(&c, L);
    }
    char *text = NULL;
    if (ok) {
        vec2 lo = to_world(&c, c.ext[0], c.ext[3]), hi = to_world(&c, c.ext[2], c.ext[1]);
        json_t *doc = json_pack("{s:{s:o, s:o}, s:O, s:O}", "bounds", "min", vec_json(lo), "max",
                                vec_json(hi), "statics", c.statics, "spawn_points", c.spawns);
        if (doc && c.has_gravity) json_object_set_new(doc, "gravity", vec_json(c.gravity));
        text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        json_decref(doc);
        if (!text) fail(&c, m->place, "out of memory");
    }
    json_decref(c.statics);
    json_decref(c.spawns);
    return text;
}

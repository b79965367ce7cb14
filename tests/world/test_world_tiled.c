/* The Tiled conversion (world_tiled.c) against its contract, ARCHITECTURE.md "World files: Tiled
 * maps (1.2 era)" and docs/operations.md "Levels from Tiled": one test per rule, end to end through
 * world_read_any + world_load_json, on maps Tiled 1.8 wrote (tests/fixtures/tiled/conv, make.sh).
 * Where a rule is geometric the oracle is computed here, independently of the converter: points
 * (fixed seeds) are mapped back through the inverse of Tiled's tile flips, or tested against the
 * object's outline, in Tiled's pixels, and must agree with a world query at the same place. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "world.h"
#include "world_load.h"

#ifndef COLLIDE_TILED_FIXTURES
#error "COLLIDE_TILED_FIXTURES (tests/fixtures/tiled) must be defined"
#endif
#ifndef COLLIDE_EXAMPLE_WORLDS
#error "COLLIDE_EXAMPLE_WORLDS (examples/worlds) must be defined"
#endif
#define CONV COLLIDE_TILED_FIXTURES "/conv"

static char err[1024];
static world_file_notes notes;
static world_spawn_points spawns;

/* world_read_any on dir/rel, as the daemon reads --world-dir (relative to a directory, no links).
 */
static char *read_any(const char *dir, const char *rel) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return NULL;
    err[0] = '\0';
    char *text = world_read_any(fd, rel, true, NULL, &notes, err, sizeof err);
    close(fd);
    return text;
}

static world *load(const char *dir, const char *rel) {
    char *text = read_any(dir, rel);
    if (!text) {
        fprintf(stderr, "  %s/%s: %s\n", dir, rel, err);
        return NULL;
    }
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_bodies = 4096;
    world *w = world_load_json(text, rel, &cfg, &spawns, err, sizeof err);
    if (!w) fprintf(stderr, "  %s/%s: %s\n", dir, rel, err);
    free(text);
    return w;
}

static const unsigned STATICS = 1u << WORLD_BODY_STATIC;

static size_t count_statics(const world *w) {
    aabb all = aabb_make(v2(-1e5f, -1e5f), v2(1e5f, 1e5f));
    return world_query_aabb(w, all, STATICS, NULL, 0);
}

/* The statics whose shape contains world point p (a circle of radius 1e-3 overlapping them),
 * sensors included; how many, the lowest id in *id. */
static size_t statics_at(const world *w, vec2 p, world_body_id *id) {
    geom_shape dot;
    geom_make_circle(1e-3f, &dot);
    world_query_filter f = {STATICS, 0, NULL, 0, true};
    world_hit hits[8];
    world_query_result r;
    if (world_query_overlap(w, 0, &dot, p, &f, hits, 8, &r) != WORLD_OK) return (size_t)-1;
    if (id) *id = r.count ? hits[0].id : 0;
    return r.count;
}

/* ---- an outline oracle: polygons and circles in Tiled pixels (y down) ---------------------- */

typedef struct outline {
    int npoly, ncircle;
    int count[6];
    double poly[6][8][2];
    double circle[4][3]; /* cx, cy, r */
} outline;

static void add_poly(outline *o, int n, const double *xy) {
    o->count[o->npoly] = n;
    for (int i = 0; i < n; i++) {
        o->poly[o->npoly][i][0] = xy[2 * i];
        o->poly[o->npoly][i][1] = xy[2 * i + 1];
    }
    o->npoly++;
}

/* A Tiled rectangle object: (x, y) its top-left, turned `deg` clockwise on screen about (x, y). */
static void add_rect(outline *o, double x, double y, double w, double h, double deg) {
    double r = deg * M_PI / 180.0, cs = cos(r), sn = sin(r);
    double dx[4] = {0, w, w, 0}, dy[4] = {0, 0, h, h}, xy[8];
    for (int i = 0; i < 4; i++) {
        xy[2 * i] = x + dx[i] * cs - dy[i] * sn;
        xy[2 * i + 1] = y + dx[i] * sn + dy[i] * cs;
    }
    add_poly(o, 4, xy);
}

static void add_circle(outline *o, double cx, double cy, double r) {
    o->circle[o->ncircle][0] = cx;
    o->circle[o->ncircle][1] = cy;
    o->circle[o->ncircle][2] = r;
    o->ncircle++;
}

static double seg_dist(double px, double py, const double *a, const double *b) {
    double ex = b[0] - a[0], ey = b[1] - a[1];
    double t = ((px - a[0]) * ex + (py - a[1]) * ey) / (ex * ex + ey * ey);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypot(px - (a[0] + t * ex), py - (a[1] + t * ey));
}

/* 1 inside, 0 outside, -1 within eps of an edge (not decided: skipped). */
static int outline_test(const outline *o, double x, double y, double eps) {
    int in = 0;
    for (int p = 0; p < o->npoly; p++) {
        bool odd = false;
        for (int i = 0, j = o->count[p] - 1; i < o->count[p]; j = i++) {
            const double *a = o->poly[p][i], *b = o->poly[p][j];
            if (seg_dist(x, y, a, b) < eps) return -1;
            if ((a[1] > y) != (b[1] > y) && x < (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]) + a[0])
                odd = !odd;
        }
        in |= odd;
    }
    for (int c = 0; c < o->ncircle; c++) {
        double d = hypot(x - o->circle[c][0], y - o->circle[c][1]) - o->circle[c][2];
        if (fabs(d) < eps) return -1;
        in |= d < 0;
    }
    return in;
}

static double rnd(collide_rng *rng, double lo, double hi) {
    return lo + (hi - lo) * (collide_rng_next(rng) / 4294967296.0);
}

/* n random points of the pixel rectangle [x0, x1] x [y0, y1]: the world (map height mh, unit 1)
 * has a static there iff the outline holds the point. Returns the points decided (not near an
 * edge), or -1 after printing the first disagreement. */
static long check_outline(const world *w, const outline *o, double mh, double x0, double y0,
                          double x1, double y1, int n, uint32_t seed, const char *what) {
    collide_rng rng = {seed};
    long decided = 0;
    for (int i = 0; i < n; i++) {
        double x = rnd(&rng, x0, x1), y = rnd(&rng, y0, y1);
        int want = outline_test(o, x, y, 0.02);
        if (want < 0) continue;
        decided++;
        size_t got = statics_at(w, v2((float)x, (float)(mh - y)), NULL);
        if ((got > 0) != (want > 0)) {
            fprintf(stderr, "  %s: pixel (%.4f, %.4f): %s, but the world has %zu statics there\n",
                    what, x, y, want ? "inside" : "outside", got);
            return -1;
        }
    }
    return decided;
}

/* ---- 1. flips ------------------------------------------------------------------------------ */

/* conv/flips.tmx (18 x 12 tiles of 16 px): row `row` holds tile `kind` in columns 1, 3, .., 15
 * with the flip bits f = 0..7 (H = bit 0, V = bit 1, D = bit 2) in column 1 + 2f. Kinds 0-3 are
 * ts/shapes.tsx's tiles 0-3 (16 x 16), kind 4 is ts/tall.tsx's tile 0 (16 x 32, drawn from the
 * cell's bottom-left upwards). Their collision shapes, in tile pixels, as drawn in src/ts/. */
#define FLIP_MAP_H 192.0
static const struct {
    int row, w, h;
} flip_kinds[5] = {{1, 16, 16}, {3, 16, 16}, {5, 16, 16}, {7, 16, 16}, {10, 16, 32}};

static outline tile_outline(int kind) {
    outline o = {0};
    static const double tri[6] = {1, 2, 13, 2, 1, 11}, tall[6] = {2, 4, 14, 10, 3, 28};
    switch (kind) {
    case 0:
        add_rect(&o, 2, 3, 9, 5, 0);
        break;
    case 1:
        add_poly(&o, 3, tri);
        break;
    case 2:
        add_circle(&o, 6, 9, 3);
        break;
    case 3:
        add_rect(&o, 4, 4, 8, 4, 30);
        break;
    default:
        add_poly(&o, 3, tall);
        add_circle(&o, 10, 25, 4);
        break;
    }
    return o;
}

/* The flipped tile's footprint in map pixels: the image, w and h swapped by the diagonal flip,
 * with its bottom-left on the cell's bottom-left. */
static void flip_footprint(int kind, int f, double *left, double *top, double *fw, double *fh) {
    bool d = f & 4;
    *fw = d ? flip_kinds[kind].h : flip_kinds[kind].w;
    *fh = d ? flip_kinds[kind].w : flip_kinds[kind].h;
    *left = (1 + 2 * f) * 16.0;
    *top = (flip_kinds[kind].row + 1) * 16.0 - *fh;
}

/* Is map pixel (x, y) in a flipped tile's shape? Tiled flips the diagonal first (x/y swapped),
 * then horizontally, then vertically (TMX format, "Tile flipping"); the inverse undoes V, then H,
 * then the diagonal, and tests the tile's own shape. 1, 0, or -1 near an edge or in no tile. */
static int flip_oracle(double x, double y, const outline *shapes) {
    for (int kind = 0; kind < 5; kind++)
        for (int f = 0; f < 8; f++) {
            double left, top, fw, fh;
            flip_footprint(kind, f, &left, &top, &fw, &fh);
            double u = x - left, v = y - top;
            if (u < 0 || v < 0 || u > fw || v > fh) continue;
            if (f & 2) v = fh - v;
            if (f & 1) u = fw - u;
            if (f & 4) {
                double t = u;
                u = v;
                v = t;
            }
            return outline_test(&shapes[kind], u, v, 0.02);
        }
    return 0; /* no tile there */
}

static bool flip_point(const world *w, const outline *shapes, double x, double y, long *decided) {
    int want = flip_oracle(x, y, shapes);
    if (want < 0) return true;
    (*decided)++;
    size_t got = statics_at(w, v2((float)x, (float)(FLIP_MAP_H - y)), NULL);
    if ((got > 0) == (want > 0)) return true;
    fprintf(stderr,
            "  flips: map pixel (%.4f, %.4f): the flipped tile's shape is %s, the world "
            "has %zu statics there\n",
            x, y, want ? "there" : "not there", got);
    return false;
}

static void test_flips(void) {
    world *w = load(CONV, "flips.tmx");
    CHECK(w);
    outline shapes[5];
    for (int k = 0; k < 5; k++)
        shapes[k] = tile_outline(k);
    CHECK_MSG(notes.tiles_collidable == 40 && count_statics(w) == 48, "%zu tiles, %zu statics",
              notes.tiles_collidable, count_statics(w));
    collide_rng rng = {0xf11b5eedu};
    long decided = 0;
    for (int kind = 0; kind < 5; kind++)
        for (int f = 0; f < 8; f++) {
            double left, top, fw, fh;
            flip_footprint(kind, f, &left, &top, &fw, &fh);
            for (int i = 0; i < 2000; i++) {
                double x = rnd(&rng, left, left + fw), y = rnd(&rng, top, top + fh);
                if (!flip_point(w, shapes, x, y, &decided)) {
                    fprintf(stderr, "  tile kind %d, flips H%d V%d D%d\n", kind, f & 1,
                            (f >> 1) & 1, (f >> 2) & 1);
                    world_destroy(w);
                    CHECK(false);
                }
            }
        }
    for (int i = 0; i < 20000; i++) /* and nothing anywhere else */
        if (!flip_point(w, shapes, rnd(&rng, 0, 288), rnd(&rng, 0, FLIP_MAP_H), &decided)) {
            world_destroy(w);
            CHECK(false);
        }
    world_destroy(w);
    CHECK_MSG(decided > 90000, "only %ld points decided", decided);
}

/* ---- 2. units and the y flip --------------------------------------------------------------- */

/* The one static at world point p is a box centred at c with half extents h (1e-4 relative). */
static bool box_at(const world *w, vec2 p, vec2 c, vec2 h) {
    world_body_id id;
    geom_shape s;
    world_body_row row;
    if (statics_at(w, p, &id) != 1 || !world_body_shape(w, id, &s) ||
        !world_body_get(w, id, &row)) {
        fprintf(stderr, "  no single static at (%g, %g)\n", (double)p.x, (double)p.y);
        return false;
    }
    float tol = 1e-4f * (1 + fabsf(c.x) + fabsf(c.y));
    bool ok = s.kind == GEOM_SHAPE_BOX && fabsf(row.position.x - c.x) < tol &&
              fabsf(row.position.y - c.y) < tol && fabsf(s.u.half_extents.x - h.x) < tol &&
              fabsf(s.u.half_extents.y - h.y) < tol;
    if (!ok)
        fprintf(stderr,
                "  static at (%g, %g): kind %d at (%g, %g) half (%g, %g); want a box at "
                "(%g, %g) half (%g, %g)\n",
                (double)p.x, (double)p.y, (int)s.kind, (double)row.position.x,
                (double)row.position.y, (double)s.u.half_extents.x, (double)s.u.half_extents.y,
                (double)c.x, (double)c.y, (double)h.x, (double)h.y);
    return ok;
}

static bool bounds_are(const world *w, float x0, float y0, float x1, float y1) {
    aabb b = world_get_config(w)->bounds;
    bool ok = fabsf(b.min.x - x0) < 1e-4f && fabsf(b.min.y - y0) < 1e-4f &&
              fabsf(b.max.x - x1) < 1e-4f && fabsf(b.max.y - y1) < 1e-4f;
    if (!ok)
        fprintf(stderr, "  bounds (%g, %g)-(%g, %g), want (%g, %g)-(%g, %g)\n", (double)b.min.x,
                (double)b.min.y, (double)b.max.x, (double)b.max.y, (double)x0, (double)y0,
                (double)x1, (double)y1);
    return ok;
}

static bool spawn_is(size_t i, float x, float y) {
    bool ok = spawns.count > i && fabsf(spawns.points[i].x - x) < 1e-4f &&
              fabsf(spawns.points[i].y - y) < 1e-4f;
    if (!ok)
        fprintf(stderr, "  spawn %zu of %zu: (%g, %g), want (%g, %g)\n", i, spawns.count,
                spawns.count > i ? (double)spawns.points[i].x : 0.0,
                spawns.count > i ? (double)spawns.points[i].y : 0.0, (double)x, (double)y);
    return ok;
}

/* units_*.tmx: 10 x 8 tiles of 16 px (160 x 128), a 16 x 8 rectangle at pixel (24, 40) (centre
 * (32, 44)) and a spawn point at pixel (40, 100): world = (px, 128 - py) / unit. */
static void check_units(const char *file, double unit) {
    world *w = load(CONV, file);
    CHECK(w);
    float u = (float)unit;
    bool ok = bounds_are(w, 0, 0, 160 / u, 128 / u) &&
              box_at(w, v2(32 / u, 84 / u), v2(32 / u, 84 / u), v2(8 / u, 4 / u)) &&
              spawn_is(0, 40 / u, 28 / u) && count_statics(w) == 1;
    world_destroy(w);
    CHECK_MSG(ok, "%s (unit %g)", file, unit);
}

static void test_units_int(void) { check_units("units_int.tmx", 8); }
static void test_units_float(void) { check_units("units_float.tmx", 2.5); }

/* infinite.tmx (collide:unit 4): chunks at tiles (-32, -16) and (16, 16), 16 x 16 each, so the
 * extent is pixels [-512, 512] x [-256, 512] and B = 512. A solid tile in the first chunk's
 * top-left cell, another in the second's bottom-right; a rectangle 8 x 8 at pixel (-100, 300) and
 * a spawn point at (-200, -100). */
static void test_units_infinite(void) {
    world *w = load(CONV, "infinite.tmx");
    CHECK(w);
    bool ok = bounds_are(w, -128, 0, 128, 192) &&
              box_at(w, v2(-126, 190), v2(-126, 190), v2(2, 2)) &&
              box_at(w, v2(126, 2), v2(126, 2), v2(2, 2)) &&
              box_at(w, v2(-24, 52), v2(-24, 52), v2(1, 1)) && spawn_is(0, -50, 153) &&
              count_statics(w) == 3;
    world_destroy(w);
    CHECK(ok);
}

/* ---- 3. every encoding gives the same world ------------------------------------------------ */

/* The enc_* maps (tests/fixtures/tiled) hold tiles without collision: their worlds are equal and
 * empty, which checks that every encoding reads. test_encodings_flips checks equal contents. */
static void test_encodings(void) {
    char *ref = read_any(COLLIDE_TILED_FIXTURES, "enc_csv.tmx");
    CHECK_MSG(ref, "%s", err);
    static const char *const encs[] = {"csv", "base64", "zlib", "gzip", "zstd", "xml"};
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof encs / sizeof encs[0]; i++)
        for (int j = 0; ok && j < 2; j++) {
            char name[64];
            snprintf(name, sizeof name, "enc_%s.%s", encs[i], j ? "tmj" : "tmx");
            char *text = read_any(COLLIDE_TILED_FIXTURES, name);
            ok = text && strcmp(text, ref) == 0;
            if (!ok) fprintf(stderr, "  %s: %s\n", name, text ? "a different world" : err);
            free(text);
        }
    free(ref);
    CHECK(ok);
}

/* conv/flips.tmx's data re-encoded (make.sh), then re-saved by Tiled: the same world, byte for
 * byte, as the CSV map (every gid there carries flip bits). */
static void test_encodings_flips(void) {
    char *ref = read_any(CONV, "flips.tmx");
    CHECK_MSG(ref, "%s", err);
    static const char *const encs[] = {"base64", "zlib", "gzip", "zstd"};
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof encs / sizeof encs[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "flips_%s.tmx", encs[i]);
        char *text = read_any(CONV, name);
        ok = text && strcmp(text, ref) == 0;
        if (!ok) fprintf(stderr, "  %s: %s\n", name, text ? "a different world" : err);
        free(text);
    }
    free(ref);
    CHECK(ok);
}

/* ---- 4. a TMX map and its TMJ twin give the same world ------------------------------------- */

/* After "FILE:LINE: ": the reason, which names no format. */
static const char *reason_of(const char *msg) {
    const char *s = strchr(msg, ':');
    s = s ? strchr(s + 1, ':') : NULL;
    return s ? s + 2 : msg;
}

static bool refused(const char *dir, const char *rel, const char *needle, const char *reason,
                    const char *also);

static bool twins(const char *dir, const char *stem) {
    char a[256], b[256], why_a[1024];
    snprintf(a, sizeof a, "%s.tmx", stem);
    snprintf(b, sizeof b, "%s.tmj", stem);
    char *ta = read_any(dir, a);
    snprintf(why_a, sizeof why_a, "%s", err);
    char *tb = read_any(dir, b);
    bool ok = ta && tb ? strcmp(ta, tb) == 0
                       : !ta && !tb && strcmp(reason_of(why_a), reason_of(err)) == 0;
    if (!ok) {
        fprintf(stderr, "  %s/%s: %s\n  %s\n", dir, a, ta ? "read" : why_a, ta ? ta : "");
        fprintf(stderr, "  %s/%s: %s\n  %s\n", dir, b, tb ? "read" : err, tb ? tb : "");
    }
    free(ta);
    free(tb);
    return ok;
}

static void test_twins(void) {
    static const struct {
        const char *dir, *stem;
    } pairs[] = {
        {COLLIDE_TILED_FIXTURES, "enc_csv"},
        {COLLIDE_TILED_FIXTURES, "enc_base64"},
        {COLLIDE_TILED_FIXTURES, "enc_zlib"},
        {COLLIDE_TILED_FIXTURES, "enc_gzip"},
        {COLLIDE_TILED_FIXTURES, "enc_zstd"},
        {COLLIDE_TILED_FIXTURES, "enc_xml"},
        {COLLIDE_TILED_FIXTURES, "external"},
        {COLLIDE_TILED_FIXTURES, "infinite"},
        {COLLIDE_TILED_FIXTURES, "objects"},
        {COLLIDE_TILED_FIXTURES "/tmj", "infinite"},
        {COLLIDE_TILED_FIXTURES "/tmj", "encoded_base64"},
        {COLLIDE_TILED_FIXTURES "/tmj", "encoded_zlib"},
        {CONV, "flips"},
        {CONV, "props"},
        {CONV, "objects"},
        {CONV, "units_int"},
        {CONV, "units_float"},
        {CONV, "infinite"},
        {COLLIDE_EXAMPLE_WORLDS, "level"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        bad += !twins(pairs[i].dir, pairs[i].stem);
    CHECK_MSG(bad == 0, "%d of %zu pairs differ", bad, sizeof pairs / sizeof pairs[0]);
    /* tmj/basic has no twin: its TMX names JSON templates (templates/zone.tj, crate.tj), which an
     * XML map does not read (refused by name, as a JSON map naming a .tx is); its TMJ, a parser
     * fixture, puts a cell of layer 'inner' below the map by its groups' offsets (refused:
     * outside). */
    CHECK(refused(COLLIDE_TILED_FIXTURES "/tmj", "basic.tmx", "templates/zone.tj",
                  "layer 'objs' object 17: template \"templates/zone.tj\" is JSON (.tj)", NULL));
    CHECK(refused(COLLIDE_TILED_FIXTURES "/tmj", "basic.tmj", NULL,
                  "layer 'inner' cells (1, 1)-(1, 1): a shape at", "outside the map's extent"));
}

/* ---- 5. properties ------------------------------------------------------------------------- */

/* The one static at world p has this filter; its id in *id (may be NULL). */
static bool filter_at(const world *w, float x, float y, uint32_t cat, uint32_t mask, bool sensor,
                      world_body_id *id) {
    world_body_id b;
    world_filter f = {0, 0, false};
    size_t n = statics_at(w, v2(x, y), &b);
    bool ok = n == 1 && world_body_filter(w, b, &f) && f.category == cat && f.mask == mask &&
              f.sensor == sensor;
    if (!ok)
        fprintf(stderr,
                "  (%g, %g): %zu statics, the first {category %#x, mask %#x, sensor %d}; "
                "want one {%#x, %#x, %d}\n",
                (double)x, (double)y, n, f.category, f.mask, f.sensor, cat, mask, sensor);
    if (id) *id = b;
    return ok;
}

static bool nothing_at(const world *w, float x, float y) {
    size_t n = statics_at(w, v2(x, y), NULL);
    if (n) fprintf(stderr, "  (%g, %g): %zu statics, want none\n", (double)x, (double)y, n);
    return n == 0;
}

/* props.tmx (16 x 12 tiles of 16 px, world y = 192 - pixel y), tileset ts/props.tsx: tile 0
 * solid; 1 solid, category 2 (int); 2 solid, category "0x80000000"; 3 solid sensor; 4 solid,
 * mask "12"; 5 category 4 with two half-cell shapes, the top one with its own category 32; 6
 * solid, category "40". Layer 'merge': tile 0 in cells (1..3, 1..2), tile 1 in (4..5, 1..2),
 * tiles 2, 3, 4, 6 at (7, 1), (9, 1), (11, 1), (13, 1). */
static void test_props_tiles(void) {
    world *w = load(CONV, "props.tmx");
    CHECK(w);
    const uint32_t ALL = 0xffffffffu;
    world_body_id a, b, c;
    bool ok =
        filter_at(w, 24, 170, 1, ALL, false, &a) && filter_at(w, 60, 146, 1, ALL, false, &b) &&
        box_at(w, v2(40, 160), v2(40, 160), v2(24, 16)) &&
        filter_at(w, 70, 150, 2, ALL, false, &c) &&
        box_at(w, v2(80, 160), v2(80, 160), v2(16, 16)) &&
        filter_at(w, 120, 168, 0x80000000u, ALL, false, NULL) &&
        filter_at(w, 152, 168, 1, ALL, true, NULL) && filter_at(w, 184, 168, 1, 12, false, NULL) &&
        filter_at(w, 216, 168, 40, ALL, false, NULL);
    world_destroy(w);
    CHECK(ok);
    CHECK_MSG(a == b, "the 3 x 2 solid cells of one class are one box");
    CHECK_MSG(a != c, "cells of different filters are not merged");
    CHECK_MSG(notes.tiles_collidable == 17 && notes.tile_statics == 10, "%zu tiles, %zu statics",
              notes.tiles_collidable, notes.tile_statics);
}

/* props.tmx again: layer 'ignored' (collide:ignore) has tile 0 at (1, 4), (2, 4); layer 'prec'
 * (category 8, mask 5) tile 5 at (1, 6) and tile 0 at (3, 6); group 'grp' (category 16, mask 3)
 * holds tile layer 'ingroup' (mask 9) with tile 0 at (5, 6), and object layer 'groupobjs' with a
 * 16 x 16 rectangle at pixel (112, 96). Object layer 'objs' (mask 7): rectangles at pixel x 16
 * (own mask 3), 48, 80 (collide:solid false), 112 (sensor), y 144. Layer 'nosolid'
 * (collide:solid false): rectangles at x 176, and 208 (its own collide:solid true). */
static void test_props_precedence(void) {
    world *w = load(CONV, "props.tmx");
    CHECK(w);
    const uint32_t ALL = 0xffffffffu;
    bool ok = nothing_at(w, 24, 120) && nothing_at(w, 40, 120) && /* ignored */
              filter_at(w, 24, 92, 32, 5, false, NULL) &&         /* object > tile, layer */
              filter_at(w, 24, 84, 4, 5, false, NULL) &&          /* tile > layer */
              filter_at(w, 56, 88, 8, 5, false, NULL) &&          /* layer */
              filter_at(w, 88, 88, 16, 9, false, NULL) &&         /* group, own layer's mask */
              filter_at(w, 120, 88, 16, 3, false, NULL) &&        /* group on an object layer */
              filter_at(w, 24, 40, 1, 3, false, NULL) &&          /* object > layer */
              filter_at(w, 56, 40, 1, 7, false, NULL) && nothing_at(w, 88, 40) &&
              filter_at(w, 120, 40, 1, 7, true, NULL) && nothing_at(w, 184, 40) &&
              filter_at(w, 216, 40, 1, ALL, false, NULL) && count_statics(w) == 15;
    world_destroy(w);
    CHECK(ok);
}

/* The line of the first line of dir/rel holding needle (0: none): where TMX errors point. */
static int line_of(const char *dir, const char *rel, const char *needle) {
    char path[512], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "r");
    int line = 0, found = 0;
    while (f && !found && fgets(buf, sizeof buf, f)) {
        line++;
        if (strstr(buf, needle)) found = line;
    }
    if (f) fclose(f);
    return found;
}

/* dir/rel is refused with "rel:LINE: reason...", LINE the line holding `needle` (or 0 when
 * needle is NULL), reason beginning with `reason`, and containing `also` when not NULL. */
static bool refused(const char *dir, const char *rel, const char *needle, const char *reason,
                    const char *also) {
    char *text = read_any(dir, rel);
    if (text) {
        fprintf(stderr, "  %s: read, but should be refused with \"%s\"\n", rel, reason);
        free(text);
        return false;
    }
    char want[512];
    snprintf(want, sizeof want, "%s:%d: %s", rel, needle ? line_of(dir, rel, needle) : 0, reason);
    bool ok = strncmp(err, want, strlen(want)) == 0 && (!also || strstr(err, also));
    if (!ok)
        fprintf(stderr, "  %s: \"%s\"\n  want \"%s...%s\"\n", rel, err, want, also ? also : "");
    return ok;
}

static void test_props_wrong_types(void) {
    CHECK(refused(CONV, "refuse/bad_prop_obj.tmx", "<object id=\"3\"",
                  "layer 'objs' object 3: collide:sensor must be a bool property", NULL));
    CHECK(refused(CONV, "refuse/bad_prop_tile.tmx", "<tile id=\"0\"",
                  "layer 'tiles' cell (1, 0) tile 0 of tileset 'bad': collide:category must be "
                  "an int",
                  NULL));
}

/* ---- 6. objects ---------------------------------------------------------------------------- */

/* The static at world p is a polygon of n vertices. */
static bool polygon_at(const world *w, float x, float y, int n) {
    world_body_id id;
    geom_shape s;
    bool ok = statics_at(w, v2(x, y), &id) == 1 && world_body_shape(w, id, &s) &&
              s.kind == GEOM_SHAPE_POLYGON && s.u.polygon.count == n;
    if (!ok)
        fprintf(stderr, "  (%g, %g): not a single polygon of %d vertices\n", (double)x, (double)y,
                n);
    return ok;
}

/* objects.tmx (20 x 15 tiles of 16 px: world y = 240 - pixel y), layer 'objs'. */
static void test_objects_shapes(void) {
    world *w = load(CONV, "objects.tmx");
    CHECK(w);
    outline turned = {0}, tri = {0}, ell = {0};
    add_rect(&turned, 100, 60, 40, 20, 30); /* object 2: turned 30 degrees clockwise on screen */
    static const double t3[6] = {160, 40, 190, 40, 190, 60};
    static const double l4[12] = {200, 100, 240, 100, 240, 140, 220, 140, 220, 120, 200, 120};
    add_poly(&tri, 3, t3);
    add_poly(&ell, 6, l4); /* object 4: an L, concave */
    long n2 = check_outline(w, &turned, 240, 85, 55, 140, 100, 4000, 0x0b1ec702u, "object 2");
    long n3 = check_outline(w, &tri, 240, 155, 35, 195, 65, 4000, 0x0b1ec703u, "object 3");
    long n4 = check_outline(w, &ell, 240, 195, 95, 245, 145, 4000, 0x0b1ec704u, "object 4");
    world_body_id id;
    geom_shape s;
    world_body_row row;
    bool circle = statics_at(w, v2(50, 110), &id) == 1 && world_body_shape(w, id, &s) &&
                  world_body_get(w, id, &row) && s.kind == GEOM_SHAPE_CIRCLE &&
                  fabsf(s.u.radius - 10) < 1e-4f && fabsf(row.position.x - 50) < 1e-4f &&
                  fabsf(row.position.y - 110) < 1e-4f;
    size_t pieces = 0;
    world_body_id ids[16];
    pieces = world_query_aabb(w, aabb_make(v2(200, 100), v2(240, 140)), STATICS, ids, 16);
    bool ok = box_at(w, v2(32, 200), v2(32, 200), v2(16, 8)) &&
              polygon_at(w, 112.32f, 161.34f, 4) && polygon_at(w, 180, 193.33f, 3) && circle &&
              spawns.count == 1 && spawn_is(0, 60, 40) && count_statics(w) == 8;
    world_destroy(w);
    CHECK(n2 > 3000 && n3 > 3000 && n4 > 3000);
    CHECK(ok);
    CHECK_MSG(notes.concave_split == 1 && pieces >= 2, "the L: split %zu, %zu pieces",
              notes.concave_split, pieces);
}

static bool warned(const char *file, const char *needle, const char *what) {
    char want[512];
    snprintf(want, sizeof want, "%s:%d: %s", file, line_of(CONV, file, needle), what);
    bool ok = strstr(notes.text, want) != NULL;
    if (!ok) fprintf(stderr, "  no warning \"%s\" in:\n%s", want, notes.text);
    return ok;
}

/* Polylines, text, tile objects and points that are not spawn points: skipped, each with a
 * warning naming the object (and its line). */
static void test_objects_skipped(void) {
    world *w = load(CONV, "objects.tmx");
    CHECK(w);
    world_destroy(w);
    CHECK_MSG(notes.warnings == 4, "%zu warnings:\n%s", notes.warnings, notes.text);
    CHECK(
        warned("objects.tmx", "<object id=\"7\"", "layer 'objs' object 7: a polyline is skipped"));
    CHECK(warned("objects.tmx", "<object id=\"8\"",
                 "layer 'objs' object 8: a text object is skipped"));
    CHECK(warned("objects.tmx", "<object id=\"9\"",
                 "layer 'objs' object 9: a tile placed as an object"));
    CHECK(warned("objects.tmx", "<object id=\"10\"",
                 "layer 'objs' object 10: a point that is not a spawn"));
}

/* Object 11: an instance of tpl/block.tx (16 x 16, category 4, sensor) at pixel (240, 180) that
 * overrides collide:category with 8: a sensor box of category 8. The tileset ts/shapes.tsx the
 * tile object names is external, in a subdirectory (as are flips.tmx's, test_flips). */
static void test_objects_template(void) {
    world *w = load(CONV, "objects.tmx");
    CHECK(w);
    bool ok = box_at(w, v2(248, 52), v2(248, 52), v2(8, 8)) &&
              filter_at(w, 248, 52, 8, 0xffffffffu, true, NULL);
    world_destroy(w);
    CHECK(ok);
    char *tmj = read_any(CONV, "objects.tmj"); /* the JSON twin names tpl/block.tj */
    CHECK_MSG(tmj, "%s", err);
    free(tmj);
}

/* ---- 7. refusals: the file, the place (TMX: its line), the reason -----------------------------
 */

static void test_refuse_orientation(void) {
    CHECK(refused(CONV, "refuse/iso.tmx", "<map ",
                  "orientation 'isometric': only orthogonal maps are read", NULL));
}

static void test_refuse_ellipse(void) {
    CHECK(refused(CONV, "refuse/ellipse.tmx", "<object id=\"7\"",
                  "layer 'objs' object 7: an ellipse of 20 x 10 pixels: only circles", NULL));
}

static void test_refuse_tileset_outside(void) {
    CHECK(refused(CONV, "refuse/outside_ts.tmx", "<tileset",
                  "tileset '../ts/shapes.tsx': outside the map's directory tree", NULL));
}

static void test_refuse_corrupt_data(void) {
    CHECK(refused(CONV, "refuse/corrupt.tmx", "<data", "layer 'tiles': data: base64", NULL));
}

static void test_refuse_missing_file(void) {
    CHECK(refused(CONV, "refuse/missing.tmx", "<tileset", "tileset 'gone.tsx': cannot open",
                  "No such file"));
    CHECK(refused(CONV, "refuse/nothere.tmx", NULL, "cannot open", "No such file"));
    CHECK(refused(CONV, "refuse/nothere.tmj", NULL, "cannot open", "No such file"));
}

/* Object 3 is a 40 x 10 rectangle at pixel (150, 10) on a map 160 pixels wide. */
static void test_refuse_shape_outside(void) {
    CHECK(refused(CONV, "refuse/shape_outside.tmx", "<object id=\"3\"",
                  "layer 'objs' object 3: a shape at", "outside the map's extent"));
}

static void test_refuse_infinite_without_chunks(void) {
    CHECK(refused(CONV, "refuse/nochunks.tmx", "<map ",
                  "an infinite map without any chunk has no extent", NULL));
}

/* collide:unit 0 (a float), and "8" given as a string. */
static void test_refuse_bad_unit(void) {
    CHECK(refused(CONV, "refuse/bad_unit.tmx", "<map ",
                  "collide:unit must be a positive int or float", NULL));
    CHECK(refused(CONV, "refuse/bad_unit_str.tmx", "<map ",
                  "collide:unit must be a positive int or float", NULL));
}

static void test_refuse_bad_gravity(void) {
    CHECK(refused(CONV, "refuse/bad_gravity.tmx", "<map ",
                  "collide:gravity must be a string \"x,y\"", NULL));
}

/* ---- 8. gravity and one-way ---------------------------------------------------------------- */

/* The world's gravity after loading dir/rel, and whether the converted text names it. */
static bool gravity_is(const char *dir, const char *rel, float gx, float gy, bool written) {
    char *text = read_any(dir, rel);
    world *w = NULL;
    if (text) w = world_load_json(text, rel, NULL, NULL, err, sizeof err);
    bool ok = w && fabsf(world_get_config(w)->gravity.x - gx) <= 1e-6f * (1 + fabsf(gx)) &&
              fabsf(world_get_config(w)->gravity.y - gy) <= 1e-6f * (1 + fabsf(gy)) &&
              (strstr(text, "\"gravity\"") != NULL) == written && notes.warnings == 0;
    if (!ok)
        fprintf(stderr, "  %s: gravity (%g, %g), want (%g, %g)%s: %s\n", rel,
                w ? (double)world_get_config(w)->gravity.x : 0.0,
                w ? (double)world_get_config(w)->gravity.y : 0.0, (double)gx, (double)gy,
                written ? "" : " and none written", text ? text : err);
    world_destroy(w);
    free(text);
    return ok;
}

/* collide:gravity becomes the world's gravity after collide:unit (y up, as written: "0,-30" pulls
 * down), with no warning, in both formats; a map without it has none. */
static void test_gravity(void) {
    CHECK(gravity_is(CONV, "units_int.tmx", 0, -30.0f / 8, true)); /* "0,-30"; collide:unit 8 */
    CHECK(gravity_is(CONV, "units_int.tmj", 0, -30.0f / 8, true));
    CHECK(gravity_is(CONV, "units_float.tmx", 0, -30.0f / 2.5f, true)); /* collide:unit 2.5 */
    CHECK(gravity_is(CONV, "props.tmx", 0, 0, false));
}

static const char *solid_map(int unit);

/* A one-object map with collide:gravity VALUE and collide:unit 16, written to the private
 * directory as NAME. */
static const char *gravity_map(const char *name, const char *value) {
    const char *dir = solid_map(16);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "", name);
    FILE *f = dir ? fopen(path, "w") : NULL;
    if (!f) return NULL;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<map version=\"1.8\" tiledversion=\"1.8.2\" orientation=\"orthogonal\" "
            "renderorder=\"right-down\" width=\"8\" height=\"8\" tilewidth=\"16\" "
            "tileheight=\"16\" infinite=\"0\" nextlayerid=\"2\" nextobjectid=\"2\">\n"
            " <properties>\n  <property name=\"collide:gravity\" value=\"%s\"/>\n"
            "  <property name=\"collide:unit\" type=\"int\" value=\"16\"/>\n </properties>\n"
            " <objectgroup id=\"1\" name=\"objs\">\n"
            "  <object id=\"1\" x=\"0\" y=\"112\" width=\"128\" height=\"16\"/>\n"
            " </objectgroup>\n</map>\n",
            value);
    fclose(f);
    return dir;
}

/* The native loader's bound (a length of at most WORLD_MAX_GRAVITY world units/s^2) holds for a
 * map too, after collide:unit, and a map past it is refused at the map's own line. */
static void test_gravity_bound(void) {
    const char *dir = gravity_map("g_max.tmx", "0,-16e6"); /* 1e6 world units/s^2: allowed */
    CHECK(dir && gravity_is(dir, "g_max.tmx", 0, -1e6f, true));
    dir = gravity_map("g_diag.tmx", "-12e6, 12e6"); /* each part allowed, the length not */
    CHECK(dir);
    char *text = read_any(dir, "g_diag.tmx");
    free(text);
    CHECK_MSG(!text &&
                  strstr(err, "g_diag.tmx:2: collide:gravity (-750000, 750000) world units/s^2 "
                              "is stronger than 1e+06") == err,
              "\"%s\"", err);
}

/* Object 12 (32 x 8 at pixel (260, 40)) has collide:one_way: a one-way box (the only one of the
 * map), its up the map's up, and no warning. */
static void test_one_way(void) {
    world *w = load(CONV, "objects.tmx");
    CHECK(w);
    world_body_id id = 0, all[256];
    bool ok = box_at(w, v2(276, 196), v2(276, 196), v2(16, 4)) &&
              filter_at(w, 276, 196, 1, 0xffffffffu, false, &id);
    CHECK(ok && world_body_one_way(w, id));
    size_t n = world_query_aabb(w, world_get_config(w)->bounds, 1u << WORLD_BODY_STATIC, all, 256);
    int one_way = 0;
    for (size_t i = 0; i < n; i++)
        one_way += world_body_one_way(w, all[i]);
    CHECK_MSG(n > 1 && n < 256 && one_way == 1, "%zu statics, %d one-way", n, one_way);
    world_destroy(w);
    CHECK(!strstr(notes.text, "one_way"));
}

/* A 16 x 16 map of collide:solid tiles, 16-pixel tiles at collide:unit UNIT, written to a private
 * directory (the layout Tiled writes for an inline tileset with one property). */
static const char *solid_map(int unit) {
    static char dir[] = "/tmp/collide-merge-XXXXXX";
    static bool made;
    if (!made && !mkdtemp(dir)) return NULL;
    made = true;
    char path[256];
    snprintf(path, sizeof path, "%s/solid%d.tmx", dir, unit);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<map version=\"1.8\" tiledversion=\"1.8.2\" orientation=\"orthogonal\" "
            "renderorder=\"right-down\" width=\"16\" height=\"16\" tilewidth=\"16\" "
            "tileheight=\"16\" infinite=\"0\" nextlayerid=\"2\" nextobjectid=\"1\">\n"
            " <properties><property name=\"collide:unit\" type=\"int\" value=\"%d\"/>"
            "</properties>\n"
            " <tileset firstgid=\"1\" name=\"t\" tilewidth=\"16\" tileheight=\"16\" "
            "tilecount=\"1\" columns=\"1\">\n"
            "  <tile id=\"0\"><properties><property name=\"collide:solid\" type=\"bool\" "
            "value=\"true\"/></properties></tile>\n </tileset>\n"
            " <layer id=\"1\" name=\"ground\" width=\"16\" height=\"16\">\n"
            "  <data encoding=\"csv\">\n",
            unit);
    for (int i = 0; i < 256; i++)
        fprintf(f, "1%s", i == 255 ? "\n" : (i % 16 == 15 ? ",\n" : ","));
    fprintf(f, "</data>\n </layer>\n</map>\n");
    fclose(f);
    return dir;
}

/* Merged boxes stay within the finest cell of the world's statics grid when a tile fits in it
 * (world_static_cell: the world's fast paths for tile maps need every static there), and merge
 * freely when a tile is already larger. The cell is set through the world's configuration. */
static void test_merge_within_the_static_cell(void) {
    static const struct {
        int unit;       /* pixels per world unit: a tile is 16 / unit units */
        float cell;     /* the world's cell_size */
        size_t statics; /* 256 cells merged into */
        float half;     /* each box's half side */
    } cases[] = {
        {16, 1.0f, 256, 0.5f}, {16, 4.0f, 16, 2.0f}, {8, 1.0f, 1, 16.0f}, {16, 64.0f, 1, 8.0f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *dir = solid_map(cases[i].unit);
        CHECK(dir);
        char rel[32];
        snprintf(rel, sizeof rel, "solid%d.tmx", cases[i].unit);
        world_config cfg;
        world_config_default(&cfg);
        cfg.max_bodies = 4096;
        cfg.cell_size = cases[i].cell;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *text = world_read_any(fd, rel, true, &cfg, &notes, err, sizeof err);
        close(fd);
        CHECK_MSG(text, "%s", err);
        world *w = world_load_json(text, rel, &cfg, NULL, err, sizeof err);
        free(text);
        CHECK_MSG(w, "%s", err);
        size_t n = count_statics(w);
        CHECK_MSG(n == cases[i].statics, "case %zu: %zu statics, want %zu", i, n, cases[i].statics);
        world_body_id ids[256];
        n = world_query_aabb(w, aabb_make(v2(-1e5f, -1e5f), v2(1e5f, 1e5f)), STATICS, ids, 256);
        for (size_t k = 0; k < n; k++) {
            geom_shape sh;
            CHECK(world_body_shape(w, ids[k], &sh) && sh.kind == GEOM_SHAPE_BOX);
            CHECK_MSG(sh.u.half_extents.x == cases[i].half && sh.u.half_extents.y == cases[i].half,
                      "case %zu: a box of half side %g x %g, want %g", i,
                      (double)sh.u.half_extents.x, (double)sh.u.half_extents.y,
                      (double)cases[i].half);
        }
        world_destroy(w);
    }
}

/* A map the native builder refuses (here: more statics than max_bodies) is explained by the map's
 * name, not by a place in the converted text nobody wrote. */
static void test_converted_refusal_names_the_map(void) {
    const char *dir = solid_map(16);
    CHECK(dir);
    world_config cfg;
    world_config_default(&cfg);
    cfg.max_bodies = 200;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *text = world_read_any(fd, "solid16.tmx", true, &cfg, &notes, err, sizeof err);
    close(fd);
    CHECK_MSG(text, "%s", err);
    world *w = world_load_json(text, "solid16.tmx", &cfg, NULL, err, sizeof err);
    free(text);
    CHECK(!w);
    world_notes_explain(&notes, err, sizeof err);
    CHECK_MSG(strcmp(err, "solid16.tmx: the map's converted world: 256 statics do not fit in "
                          "max_bodies 200 (raise --max-bodies)") == 0,
              "\"%s\"", err);
}

/* An infinite map whose two chunks lie far apart: few cells of data, but a layer whose extent is
 * more than the 16 Mi cells the merge's grid may hold is refused, not allocated. */
static void test_refuse_chunks_far_apart(void) {
    const char *dir = solid_map(16); /* the private directory */
    CHECK(dir);
    char path[256];
    snprintf(path, sizeof path, "%s/far.tmx", dir);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<map version=\"1.8\" tiledversion=\"1.8.2\" orientation=\"orthogonal\" "
          "renderorder=\"right-down\" width=\"16\" height=\"16\" tilewidth=\"16\" "
          "tileheight=\"16\" infinite=\"1\" nextlayerid=\"2\" nextobjectid=\"1\">\n"
          " <tileset firstgid=\"1\" name=\"t\" tilewidth=\"16\" tileheight=\"16\" tilecount=\"1\" "
          "columns=\"1\">\n"
          "  <tile id=\"0\"><properties><property name=\"collide:solid\" type=\"bool\" "
          "value=\"true\"/></properties></tile>\n </tileset>\n"
          " <layer id=\"1\" name=\"far\" width=\"16\" height=\"16\">\n  <data encoding=\"csv\">\n",
          f);
    for (int c = 0; c < 2; c++) {
        fprintf(f, "   <chunk x=\"%d\" y=\"%d\" width=\"16\" height=\"16\">\n", c * 4096, c * 4096);
        for (int i = 0; i < 256; i++)
            fputs(i == 255 ? "1\n" : "1,", f);
        fputs("   </chunk>\n", f);
    }
    fputs("  </data>\n </layer>\n</map>\n", f);
    fclose(f);
    char *text = read_any(dir, "far.tmx");
    free(text);
    CHECK_MSG(!text && strstr(err, "far.tmx:") == err &&
                  strstr(err, "layer 'far': its chunks span 4112 x 4112 tiles, more than 16777216"),
              "\"%s\"", err);
}

TEST_MAIN(TEST(test_flips), TEST(test_refuse_chunks_far_apart),
          TEST(test_converted_refusal_names_the_map), TEST(test_merge_within_the_static_cell),
          TEST(test_units_int), TEST(test_units_float), TEST(test_units_infinite),
          TEST(test_encodings), TEST(test_encodings_flips), TEST(test_twins),
          TEST(test_props_tiles), TEST(test_props_precedence), TEST(test_props_wrong_types),
          TEST(test_objects_shapes), TEST(test_objects_skipped), TEST(test_objects_template),
          TEST(test_refuse_orientation), TEST(test_refuse_ellipse),
          TEST(test_refuse_tileset_outside), TEST(test_refuse_corrupt_data),
          TEST(test_refuse_missing_file), TEST(test_refuse_shape_outside),
          TEST(test_refuse_infinite_without_chunks), TEST(test_refuse_bad_unit),
          TEST(test_refuse_bad_gravity), TEST(test_gravity), TEST(test_gravity_bound),
          TEST(test_one_way))

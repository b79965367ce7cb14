/* tiled_read_tmj on maps exported by Tiled 1.8 itself (tests/fixtures/tiled/tmj, make.sh): the
 * model field by field against values worked out by hand from the .tmx sources, and refusals of
 * bad input by file, place and reason. */
/* nftw, to remove the scratch directory */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tiled.h"

#ifndef COLLIDE_TMJ_FIXTURES
#error "COLLIDE_TMJ_FIXTURES: the fixtures' directory"
#endif

static char err[1024];

/* Reads name relative to dir, as the daemon does with --world-dir. */
static tiled_map *read_in(const char *dir, const char *name) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return NULL;
    tiled_source src = {fd, name, true, NULL};
    tiled_map *m = tiled_read_tmj(&src, err, sizeof err);
    close(fd);
    return m;
}

static tiled_map *fixture(const char *name) { return read_in(COLLIDE_TMJ_FIXTURES, name); }

static bool prop_is(const tiled_props *props, const char *name, tiled_prop_type type,
                    const char *value) {
    const tiled_prop *p = tiled_prop_find(props, name);
    if (!p)
        fprintf(stderr, "no property %s\n", name);
    else if (p->type != type || strcmp(p->value, value) != 0)
        fprintf(stderr, "property %s: type %d value \"%s\"\n", name, (int)p->type, p->value);
    return p && p->type == type && strcmp(p->value, value) == 0;
}

static bool object_is(const tiled_object *o, int id, tiled_object_kind kind, double x, double y,
                      double w, double h, double rotation) {
    bool ok = o->id == id && o->kind == kind && o->x == x && o->y == y && o->width == w &&
              o->height == h && o->rotation == rotation;
    if (!ok)
        fprintf(stderr, "object %d kind %d (%g, %g) %g x %g rot %g\n", o->id, (int)o->kind, o->x,
                o->y, o->width, o->height, o->rotation);
    return ok;
}

static bool points_are(const tiled_object *o, size_t n, const double *xy) {
    if (o->npoints != n) return false;
    for (size_t i = 0; i < n; i++)
        if (o->points[i].x != xy[2 * i] || o->points[i].y != xy[2 * i + 1]) return false;
    return true;
}

static const uint32_t ground_gids[12] = {1,         0, 0, 9, 2147483649, 1073741830,
                                         536870922, 0, 9, 9, 10,         3221225483};

static void test_map_and_properties(void) {
    tiled_map *m = fixture("basic.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(strcmp(m->orientation, "orthogonal") == 0);
    CHECK(!m->infinite && m->width == 4 && m->height == 3);
    CHECK(m->tilewidth == 16 && m->tileheight == 16);
    CHECK(m->place.file == m->files[0] && strcmp(m->files[0], "basic.tmj") == 0);
    /* every type; "author" is not collide's and is not kept */
    CHECK(m->props.count == 8);
    CHECK(!tiled_prop_find(&m->props, "author"));
    CHECK(prop_is(&m->props, "collide:unit", TILED_PROP_FLOAT, "16"));
    CHECK(prop_is(&m->props, "collide:ratio", TILED_PROP_FLOAT, "0.1"));
    CHECK(prop_is(&m->props, "collide:gravity", TILED_PROP_STRING, "0,-30"));
    CHECK(prop_is(&m->props, "collide:count", TILED_PROP_INT, "-7"));
    CHECK(prop_is(&m->props, "collide:flag", TILED_PROP_BOOL, "false"));
    CHECK(prop_is(&m->props, "collide:color", TILED_PROP_OTHER, "#ff112233"));
    CHECK(prop_is(&m->props, "collide:file", TILED_PROP_OTHER, "tiles.png"));
    CHECK(prop_is(&m->props, "collide:target", TILED_PROP_OTHER, "12"));
    /* the map, then each external file once (the template read once for two instances) */
    CHECK(m->nfiles == 4);
    CHECK(strcmp(m->files[1], "tilesets/walls.tsj") == 0);
    CHECK(strcmp(m->files[2], "templates/zone.tj") == 0);
    CHECK(strcmp(m->files[3], "templates/crate.tj") == 0);
    tiled_free(m);
}

static void test_tilesets_and_tile_shapes(void) {
    tiled_map *m = fixture("basic.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(m->ntilesets == 2);
    const tiled_tileset *ts = &m->tilesets[0];
    CHECK(ts->firstgid == 1 && strcmp(ts->name, "props") == 0);
    CHECK(ts->tilewidth == 16 && ts->tileheight == 16 && ts->tilecount == 8 && ts->columns == 4);
    CHECK(ts->place.file == m->files[0]);
    CHECK(ts->ntiles == 2);
    const tiled_tile *t0 = &ts->tiles[0];
    CHECK(t0->id == 0 && t0->props.count == 0 && t0->nshapes == 6);
    const tiled_object *s = t0->shapes;
    CHECK(object_is(&s[0], 1, TILED_OBJ_RECT, 1, 2, 3, 4, 0));
    CHECK(object_is(&s[1], 2, TILED_OBJ_ELLIPSE, 2, 3, 8, 8, 0));
    CHECK(object_is(&s[2], 3, TILED_OBJ_POINT, 8, 8, 0, 0, 0));
    CHECK(strcmp(s[2].type, "anchor") == 0 && strcmp(s[1].type, "") == 0);
    CHECK(object_is(&s[3], 4, TILED_OBJ_POLYGON, 0, 16, 0, 0, 0));
    CHECK(points_are(&s[3], 3, (const double[]){0, 0, 8, -8, 16, 0}));
    CHECK(object_is(&s[4], 5, TILED_OBJ_POLYLINE, 0, 0, 0, 0, 0));
    CHECK(points_are(&s[4], 2, (const double[]){0, 0, 16, 0}));
    CHECK(object_is(&s[5], 6, TILED_OBJ_RECT, 4, 4, 8, 2, 45));
    const tiled_tile *t5 = &ts->tiles[1];
    CHECK(t5->id == 5 && t5->nshapes == 0 && t5->props.count == 2);
    CHECK(prop_is(&t5->props, "collide:sensor", TILED_PROP_BOOL, "true"));
    CHECK(prop_is(&t5->props, "collide:mask", TILED_PROP_STRING, "0x80000000"));

    /* the external one, in a subdirectory: places name its file */
    ts = &m->tilesets[1];
    CHECK(ts->firstgid == 9 && strcmp(ts->name, "walls") == 0);
    CHECK(ts->tilewidth == 16 && ts->tileheight == 16 && ts->tilecount == 4 && ts->columns == 2);
    CHECK(ts->place.file == m->files[1]);
    CHECK(ts->ntiles == 3);
    CHECK(ts->tiles[0].id == 0 && ts->tiles[0].nshapes == 0 && ts->tiles[0].props.count == 1);
    CHECK(prop_is(&ts->tiles[0].props, "collide:solid", TILED_PROP_BOOL, "true"));
    CHECK(ts->tiles[1].id == 1 && ts->tiles[1].nshapes == 1 && ts->tiles[1].props.count == 0);
    CHECK(object_is(&ts->tiles[1].shapes[0], 1, TILED_OBJ_RECT, 0, 8, 16, 8, 0));
    CHECK(ts->tiles[1].place.file == m->files[1]);
    CHECK(ts->tiles[2].id == 2 && ts->tiles[2].nshapes == 1 && ts->tiles[2].props.count == 1);
    CHECK(prop_is(&ts->tiles[2].props, "collide:one_way", TILED_PROP_BOOL, "true"));
    CHECK(object_is(&ts->tiles[2].shapes[0], 3, TILED_OBJ_POLYGON, 0, 16, 0, 0, 0));
    CHECK(points_are(&ts->tiles[2].shapes[0], 3, (const double[]){0, 0, 16, -16, 16, 0}));
    tiled_free(m);
}

static void test_layers_and_groups(void) {
    tiled_map *m = fixture("basic.tmj");
    CHECK_MSG(m, "%s", err);
    /* ground, g1/inner, g1/g2/deep, objs; the image layer and the groups themselves are gone */
    CHECK(m->nlayers == 4);
    const tiled_layer *l = &m->layers[0];
    CHECK(l->kind == TILED_LAYER_TILES && l->id == 1 && strcmp(l->name, "ground") == 0);
    CHECK(l->offsetx == 0 && l->offsety == 0 && l->props.count == 1);
    CHECK(prop_is(&l->props, "collide:one_way", TILED_PROP_BOOL, "true"));
    CHECK(l->nchunks == 1 && l->chunks[0].x == 0 && l->chunks[0].y == 0);
    CHECK(l->chunks[0].width == 4 && l->chunks[0].height == 3);
    CHECK(memcmp(l->chunks[0].gids, ground_gids, sizeof ground_gids) == 0);

    /* g1 (10, 20) + its own (1, 2); its own category wins over g1's, g1's sensor is inherited */
    l = &m->layers[1];
    CHECK(l->kind == TILED_LAYER_TILES && l->id == 3 && strcmp(l->name, "inner") == 0);
    CHECK(l->offsetx == 11 && l->offsety == 22);
    CHECK(l->props.count == 2);
    CHECK(prop_is(&l->props, "collide:category", TILED_PROP_INT, "8"));
    CHECK(prop_is(&l->props, "collide:sensor", TILED_PROP_BOOL, "true"));
    static const uint32_t inner[12] = {0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 6};
    CHECK(l->nchunks == 1 && memcmp(l->chunks[0].gids, inner, sizeof inner) == 0);

    /* g1 (10, 20) + g2 (100, 200) + its own (0.5, 0.25), added into its objects; g2's mask and
     * g1's category and sensor inherited */
    l = &m->layers[2];
    CHECK(l->kind == TILED_LAYER_OBJECTS && l->id == 5 && strcmp(l->name, "deep") == 0);
    CHECK(l->offsetx == 110.5 && l->offsety == 220.25);
    CHECK(l->props.count == 3);
    CHECK(prop_is(&l->props, "collide:mask", TILED_PROP_STRING, "0x80000000"));
    CHECK(prop_is(&l->props, "collide:category", TILED_PROP_INT, "4"));
    CHECK(prop_is(&l->props, "collide:sensor", TILED_PROP_BOOL, "true"));
    CHECK(l->nobjects == 1 && l->nchunks == 0);
    CHECK(object_is(&l->objects[0], 20, TILED_OBJ_RECT, 113.5, 224.25, 5, 6, 0));
    CHECK(strcmp(l->objects[0].name, "deep box") == 0 && strcmp(l->objects[0].type, "wall") == 0);
    CHECK(l->objects[0].props.count == 0); /* layer properties stay on the layer */
    tiled_free(m);
}

static void test_objects_and_templates(void) {
    tiled_map *m = fixture("basic.tmj");
    CHECK_MSG(m, "%s", err);
    const tiled_layer *l = &m->layers[3];
    CHECK(l->kind == TILED_LAYER_OBJECTS && l->id == 6 && strcmp(l->name, "objs") == 0);
    CHECK(l->props.count == 0 && l->nobjects == 10);
    const tiled_object *o = l->objects;
    CHECK(object_is(&o[0], 10, TILED_OBJ_RECT, 16, 8, 32, 4, 30));
    CHECK(strcmp(o[0].name, "r") == 0 && strcmp(o[0].type, "wall") == 0);
    CHECK(o[0].props.count == 1 &&
          prop_is(&o[0].props, "collide:one_way", TILED_PROP_BOOL, "true"));
    CHECK(o[0].place.file == m->files[0]);
    CHECK(object_is(&o[1], 11, TILED_OBJ_ELLIPSE, 40, 2, 10, 10, -15));
    CHECK(object_is(&o[2], 12, TILED_OBJ_POINT, 24.5, 40.25, 0, 0, 0));
    CHECK(strcmp(o[2].type, "spawn") == 0 && strcmp(o[2].name, "spawn1") == 0);
    CHECK(object_is(&o[3], 13, TILED_OBJ_POLYGON, 8, 40, 0, 0, 90));
    CHECK(points_are(&o[3], 5, (const double[]){0, 0, 8, 0, 8, -8, 0, -8, -4, -4}));
    CHECK(object_is(&o[4], 14, TILED_OBJ_POLYLINE, 0, 0, 0, 0, 0));
    CHECK(points_are(&o[4], 3, (const double[]){0, 0, 10, 5, 20, 0}));
    CHECK(object_is(&o[5], 15, TILED_OBJ_TEXT, 2, 3, 60, 12, 0));
    CHECK(object_is(&o[6], 16, TILED_OBJ_TILE, 48, 48, 16, 16, 180));
    CHECK(o[6].gid == 2147483658u); /* flipped horizontally, gid 10 */
    /* the template as it is */
    CHECK(object_is(&o[7], 17, TILED_OBJ_RECT, 5, 6, 32, 24, 0));
    CHECK(strcmp(o[7].name, "zone") == 0 && strcmp(o[7].type, "trigger") == 0);
    CHECK(o[7].props.count == 2);
    CHECK(prop_is(&o[7].props, "collide:sensor", TILED_PROP_BOOL, "true"));
    CHECK(prop_is(&o[7].props, "collide:category", TILED_PROP_INT, "16"));
    /* overridden: name, type, a property; the template's other property merged under */
    CHECK(object_is(&o[8], 18, TILED_OBJ_RECT, 7, 8, 32, 24, 0));
    CHECK(strcmp(o[8].name, "zone2") == 0 && strcmp(o[8].type, "door") == 0);
    CHECK(o[8].props.count == 3);
    CHECK(prop_is(&o[8].props, "collide:category", TILED_PROP_INT, "32"));
    CHECK(prop_is(&o[8].props, "collide:one_way", TILED_PROP_BOOL, "false"));
    CHECK(prop_is(&o[8].props, "collide:sensor", TILED_PROP_BOOL, "true"));
    /* a tile template: gid 2 of its tileset (firstgid 1) is the map's walls (firstgid 9) + 1 */
    CHECK(object_is(&o[9], 19, TILED_OBJ_TILE, 32, 32, 16, 16, 0));
    CHECK(o[9].gid == 10 && strcmp(o[9].name, "crate") == 0 && strcmp(o[9].type, "crate") == 0);
    tiled_free(m);
}

static void test_infinite_chunks(void) {
    tiled_map *m = fixture("infinite.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(m->infinite && m->width == 30 && m->height == 20);
    CHECK(m->tilewidth == 8 && m->tileheight == 8);
    CHECK(m->ntilesets == 2 && m->tilesets[0].firstgid == 1 && m->tilesets[0].ntiles == 0);
    CHECK(m->tilesets[1].firstgid == 33 && m->tilesets[1].ntiles == 3);
    CHECK(m->nlayers == 2);
    const tiled_layer *l = &m->layers[0];
    CHECK(l->kind == TILED_LAYER_TILES && l->nchunks == 2);
    const tiled_chunk *c = &l->chunks[0];
    CHECK(c->x == -16 && c->y == -16 && c->width == 16 && c->height == 16);
    for (int i = 0; i < 256; i++)
        CHECK_MSG(c->gids[i] == (i == 0 ? 2u : i == 255 ? 1u : 0u), "cell %d: %u", i, c->gids[i]);
    c = &l->chunks[1];
    CHECK(c->x == 16 && c->y == 0 && c->width == 16 && c->height == 16);
    for (int i = 0; i < 256; i++)
        CHECK_MSG(c->gids[i] == (i == 2 * 16 + 1 ? 2147483657u : 0u), "cell %d: %u", i, c->gids[i]);
    l = &m->layers[1];
    CHECK(l->kind == TILED_LAYER_OBJECTS && l->nobjects == 1);
    CHECK(object_is(&l->objects[0], 1, TILED_OBJ_RECT, -20, -30, 4, 4, 0));
    tiled_free(m);
}

/* base64 through tiled_decode_data (the shim's until merge, then the TMX branch's) */
static void test_base64_data(void) {
    tiled_map *m = fixture("encoded_base64.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(m->nlayers == 1 && m->layers[0].nchunks == 1);
    CHECK(memcmp(m->layers[0].chunks[0].gids, ground_gids, sizeof ground_gids) == 0);
    tiled_free(m);
}

#ifdef COLLIDE_TILED_DECODE_COMPRESSED
/* zlib needs the real tiled_decode_data (TMX branch): defined by the merge. */
static void test_zlib_data(void) {
    tiled_map *m = fixture("encoded_zlib.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(m->nlayers == 1 && m->layers[0].nchunks == 1);
    CHECK(memcmp(m->layers[0].chunks[0].gids, ground_gids, sizeof ground_gids) == 0);
    tiled_free(m);
}
#endif

/* ---- refusals: small maps written into a scratch directory ------------------------------------
 */

static char scratch[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_scratch(void) { nftw(scratch, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

/* Writes a file into the scratch directory (made on first use, removed at exit). */
static void put(const char *name, const char *fmt, ...) {
    if (!scratch[0]) {
        strcpy(scratch, "/tmp/test_tiled_tmj.XXXXXX");
        if (!mkdtemp(scratch)) abort();
        atexit(remove_scratch);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(scratch)) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) abort();
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

/* A 2 x 1 map around the given tilesets and layers. */
#define MAP_FMT                                                                                    \
    "{\"type\":\"map\",\"orientation\":\"%s\",\"infinite\":false,\"width\":2,\"height\":1,"        \
    "\"tilewidth\":16,\"tileheight\":16,\"tilesets\":[%s],\n\"layers\":[%s]}\n"
#define TILES_2X1                                                                                  \
    "{\"type\":\"tilelayer\",\"id\":1,\"name\":\"t\",\"width\":2,\"height\":1,"                    \
    "\"data\":[1,2]}"

/* The map is refused and err starts with want_prefix and contains want. */
static bool refused(const char *name, const char *want_prefix, const char *want) {
    tiled_map *m = read_in(scratch, name);
    if (m) {
        fprintf(stderr, "%s: read, not refused\n", name);
        tiled_free(m);
        return false;
    }
    bool ok = strncmp(err, want_prefix, strlen(want_prefix)) == 0 && strstr(err, want);
    if (!ok) fprintf(stderr, "%s: error \"%s\"\n", name, err);
    return ok;
}

static void test_refuses_bad_json(void) {
    put("syntax.tmj", "{\"type\":\"map\",\n\"width\": 4,,\n\"height\":3}\n");
    CHECK(refused("syntax.tmj", "syntax.tmj:2: column ", "")); /* jansson's line */
    put("empty.tmj", "");
    CHECK(refused("empty.tmj", "empty.tmj:", "column"));
    put("array.tmj", "[1, 2]");
    CHECK(refused("array.tmj", "array.tmj:0: ", "must be a JSON object"));
    put("dup.tmj", "{\"width\": 1, \"width\": 2}");
    CHECK(refused("dup.tmj", "dup.tmj:1: ", "duplicate"));
    /* a syntax error in an external tileset is placed in that file */
    put("sub/bad.tsj", "{\"name\":\"x\",\n\n \"tilewidth\":}");
    put("badts.tmj", MAP_FMT, "orthogonal", "{\"firstgid\":1,\"source\":\"sub/bad.tsj\"}",
        TILES_2X1);
    CHECK(refused("badts.tmj", "sub/bad.tsj:3: column ", ""));
}

static void test_refuses_wrong_types(void) {
    put("xstr.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"objectgroup\",\"id\":4,\"name\":\"things\",\"objects\":["
        "{\"id\":1,\"x\":1,\"y\":2},{\"id\":7,\"x\":\"16\",\"y\":2}]}");
    CHECK(refused("xstr.tmj", "xstr.tmj:0: ",
                  "layer \"things\" (id 4), object 7: \"x\" must be "
                  "a number"));
    put("wstr.tmj", "{\"type\":\"map\",\"orientation\":\"orthogonal\",\"width\":\"2\",\"height\":1,"
                    "\"tilewidth\":16,\"tileheight\":16}");
    CHECK(refused("wstr.tmj", "wstr.tmj:0: ", "\"width\" must be an integer"));
    put("prop.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"tilelayer\",\"id\":3,\"name\":\"t\",\"width\":2,\"height\":1,"
        "\"data\":[0,0],\"properties\":[{\"name\":\"collide:category\",\"type\":\"int\","
        "\"value\":\"3\"}]}");
    CHECK(refused("prop.tmj",
                  "prop.tmj:0: ", "layer \"t\" (id 3): property \"collide:category\" of type int"));
    put("gid.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"tilelayer\",\"id\":1,\"name\":\"t\",\"width\":2,\"height\":1,"
        "\"data\":[1,-2]}");
    CHECK(refused("gid.tmj", "gid.tmj:0: ", "tile 1 of \"data\" is not a gid"));
    /* a tile's collision shape: the tileset and tile id name it */
    put("shape.tmj", MAP_FMT, "orthogonal",
        "{\"firstgid\":1,\"name\":\"ts\",\"tilewidth\":16,\"tileheight\":16,\"tiles\":[{\"id\":3,"
        "\"objectgroup\":{\"objects\":[{\"id\":2,\"width\":true}]}}]}",
        TILES_2X1);
    CHECK(refused("shape.tmj",
                  "shape.tmj:0: ", "tileset \"ts\", tile 3, object 2: \"width\" must be a number"));
    put("layertype.tmj", MAP_FMT, "orthogonal", "", "{\"type\":\"hexlayer\",\"id\":1}");
    CHECK(refused("layertype.tmj", "layertype.tmj:0: ", "unknown layer type \"hexlayer\""));
}

static void test_keeps_other_orientations(void) {
    /* parsed as written: the converter refuses it with its reason */
    put("iso.tmj", MAP_FMT, "isometric", "", TILES_2X1);
    tiled_map *m = read_in(scratch, "iso.tmj");
    CHECK_MSG(m, "%s", err);
    CHECK(strcmp(m->orientation, "isometric") == 0 && m->nlayers == 1);
    tiled_free(m);
}

static void test_refuses_files_outside_or_missing(void) {
    /* Tiled's own export of a map whose tileset lies beside the map's directory */
    tiled_map *m = fixture("refuse/outside.tmj");
    CHECK(!m);
    CHECK_MSG(strncmp(err, "refuse/outside.tmj:0: ", 22) == 0 &&
                  strstr(err, "\"../tilesets/walls.tsj\" is outside the map's directory"),
              "%s", err);
    put("abs.tmj", MAP_FMT, "orthogonal", "{\"firstgid\":1,\"source\":\"/etc/passwd\"}", TILES_2X1);
    CHECK(refused("abs.tmj", "abs.tmj:0: ", "absolute path"));
    put("up.tmj", MAP_FMT, "orthogonal", "{\"firstgid\":1,\"source\":\"sub/../../x.tsj\"}",
        TILES_2X1);
    CHECK(refused("up.tmj", "up.tmj:0: ", "outside the map's directory"));
    put("missing.tmj", MAP_FMT, "orthogonal", "{\"firstgid\":1,\"source\":\"sub/nothere.tsj\"}",
        TILES_2X1);
    CHECK(refused("missing.tmj", "missing.tmj:0: ", "sub/nothere.tsj"));
    CHECK(strstr(err, "No such file"));
    CHECK(refused("nomap.tmj", "nomap.tmj:0: ", "No such file"));
    put("tsx.tmj", MAP_FMT, "orthogonal", "{\"firstgid\":1,\"source\":\"walls.tsx\"}", TILES_2X1);
    /* Tiled's own JSON export keeps .tsx references: read through the TMX parser (here missing) */
    CHECK(refused("tsx.tmj", "tsx.tmj:0: ", "walls.tsx"));
    put("dupgid.tmj", MAP_FMT, "orthogonal",
        "{\"firstgid\":1,\"name\":\"a\",\"tilewidth\":16,\"tileheight\":16,\"tilecount\":1,"
        "\"columns\":1},{\"firstgid\":1,\"name\":\"b\",\"tilewidth\":16,\"tileheight\":16,"
        "\"tilecount\":1,\"columns\":1}",
        TILES_2X1);
    CHECK(refused("dupgid.tmj", "dupgid.tmj:0: ", "two tilesets start at gid 1"));
    put("tx.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"objectgroup\",\"id\":2,\"name\":\"o\",\"objects\":[{\"id\":5,"
        "\"template\":\"t.tx\"}]}");
    CHECK(
        refused("tx.tmj", "tx.tmj:0: ", "layer \"o\" (id 2), object 5: template \"t.tx\" is XML"));
    /* a template's tileset that the map does not have */
    put("sub/t.tj", "{\"type\":\"template\",\"tileset\":{\"firstgid\":1,\"source\":\"w.tsj\"},"
                    "\"object\":{\"gid\":1,\"width\":16,\"height\":16}}");
    put("tjts.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"objectgroup\",\"id\":2,\"name\":\"o\",\"objects\":[{\"id\":5,"
        "\"template\":\"sub/t.tj\"}]}");
    CHECK(
        refused("tjts.tmj", "tjts.tmj:0: ", "uses tileset \"sub/w.tsj\", which the map does not"));
}

static void test_refuses_oversize_and_wrong_length(void) {
    put("huge.tmj",
        "{\"type\":\"map\",\"orientation\":\"orthogonal\",\"width\":100000,\"height\":100000,"
        "\"tilewidth\":16,\"tileheight\":16,\"layers\":[]}");
    CHECK(refused("huge.tmj", "huge.tmj:0: ", "100000 x 100000 tiles, more than 16777216"));
    put("hugechunk.tmj",
        "{\"type\":\"map\",\"orientation\":\"orthogonal\",\"infinite\":true,\"width\":1,"
        "\"height\":1,\"tilewidth\":16,\"tileheight\":16,\"layers\":[{\"type\":\"tilelayer\","
        "\"id\":1,\"name\":\"c\",\"chunks\":[{\"x\":-16,\"y\":0,\"width\":8192,\"height\":4096,"
        "\"data\":\"\"}]}]}");
    CHECK(refused("hugechunk.tmj", "hugechunk.tmj:0: ",
                  "layer \"c\" (id 1), chunk 0: 8192 x 4096 tiles, more than 16777216"));
    put("short.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"tilelayer\",\"id\":1,\"name\":\"t\",\"width\":2,\"height\":1,\"data\":[1]}");
    CHECK(refused("short.tmj", "short.tmj:0: ", "layer \"t\" (id 1): \"data\" has 1 tiles"));
    put("b64short.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"tilelayer\",\"id\":1,\"name\":\"t\",\"width\":2,\"height\":1,"
        "\"encoding\":\"base64\",\"data\":\"AQAAAA==\"}");
    CHECK(refused("b64short.tmj", "b64short.tmj:0: ", "layer \"t\" (id 1): \"data\": "));
    put("size.tmj", MAP_FMT, "orthogonal", "",
        "{\"type\":\"tilelayer\",\"id\":1,\"name\":\"t\",\"width\":3,\"height\":1,"
        "\"data\":[1,2,3]}");
    CHECK(refused("size.tmj", "size.tmj:0: ", "3 x 1 tiles in a 2 x 1 map"));
    /* groups nested past the bound: refused, not recursed into */
    char deep[4096] = "", tail[256] = "";
    for (int i = 0; i < 40; i++) {
        strcat(deep, "{\"type\":\"group\",\"id\":9,\"name\":\"g\",\"layers\":[");
        strcat(tail, "]}");
    }
    put("deep.tmj", MAP_FMT, "orthogonal", "", strcat(deep, tail));
    CHECK(refused("deep.tmj", "deep.tmj:0: ", "groups nested deeper than 32"));
    /* a polygon of too many points */
    static char poly[200000];
    strcpy(poly, "{\"type\":\"objectgroup\",\"id\":1,\"name\":\"o\",\"objects\":[{\"id\":3,"
                 "\"polygon\":[{\"x\":0,\"y\":0}");
    for (int i = 0; i < 5000; i++)
        strcat(poly, ",{\"x\":1,\"y\":1}");
    strcat(poly, "]}]}");
    put("poly.tmj", MAP_FMT, "orthogonal", "", poly);
    CHECK(refused("poly.tmj", "poly.tmj:0: ", "object 3: 5001 points, at most 4096"));
}

#ifdef COLLIDE_TILED_DECODE_COMPRESSED
#define TMJ_COMPRESSED_TESTS TEST(test_zlib_data),
#else
#define TMJ_COMPRESSED_TESTS
#endif

TEST_MAIN(TEST(test_map_and_properties), TEST(test_tilesets_and_tile_shapes),
          TEST(test_layers_and_groups), TEST(test_objects_and_templates),
          TEST(test_infinite_chunks), TEST(test_base64_data),
          TMJ_COMPRESSED_TESTS TEST(test_refuses_bad_json), TEST(test_refuses_wrong_types),
          TEST(test_keeps_other_orientations), TEST(test_refuses_files_outside_or_missing),
          TEST(test_refuses_oversize_and_wrong_length))

/* The TMX parser (world_tiled_tmx.c) and what it shares with the TMJ parser (tile data decoding,
 * the confined file reader): Tiled's own files (tests/fixtures/tiled, made by make.sh through Tiled
 * 1.8) read field by field against hand-computed expectations, and every refusal with its message
 * (FILE:LINE, the layer and the object). Refusal maps are written to a temporary directory here, so
 * that symbolic links and paths outside the tree can be set up for real. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tiled.h"

#ifndef COLLIDE_TILED_FIXTURES
#error "COLLIDE_TILED_FIXTURES (tests/fixtures/tiled) must be defined"
#endif

static char err[1024];

static tiled_map *read_fixture(const char *name) {
    int dir = open(COLLIDE_TILED_FIXTURES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return NULL;
    tiled_source src = {dir, name, true, NULL};
    tiled_map *m = tiled_read_tmx(&src, err, sizeof err);
    close(dir);
    return m;
}

/* ---- a scratch directory for the refusals ------------------------------------------------------
 */

static char scratch[256];

static void cleanup(void) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
}

static void scratch_make(void) {
    if (scratch[0]) return;
    snprintf(scratch, sizeof scratch, "/tmp/test_tiled_tmx.XXXXXX");
    if (!mkdtemp(scratch)) abort();
    atexit(cleanup);
}

static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch, rel);
    /* parents first */
    for (char *s = strchr(path + strlen(scratch) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static tiled_map *read_scratch(const char *rel) {
    int dir = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) abort();
    tiled_source src = {dir, rel, true, NULL};
    tiled_map *m = tiled_read_tmx(&src, err, sizeof err);
    close(dir);
    return m;
}

/* A map whose error must be exactly `expected` (or start with it when prefix). */
static bool refused(const char *rel, const char *expected, bool prefix) {
    tiled_map *m = read_scratch(rel);
    if (m) {
        tiled_free(m);
        fprintf(stderr, "  %s: read, but should be refused with \"%s\"\n", rel, expected);
        return false;
    }
    bool ok = prefix ? strncmp(err, expected, strlen(expected)) == 0 : strcmp(err, expected) == 0;
    if (!ok)
        fprintf(stderr, "  %s:\n    got      \"%s\"\n    expected \"%s\"\n", rel, err, expected);
    return ok;
}

#define MAP_HEAD(w, h, infinite)                                                                   \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"                                                 \
    "<map version=\"1.8\" orientation=\"orthogonal\" width=\"" #w "\" height=\"" #h                \
    "\" tilewidth=\"16\" tileheight=\"16\" infinite=\"" #infinite "\">\n"
#define LAYER(data_attrs, text)                                                                    \
    " <layer id=\"1\" name=\"ground\" width=\"4\" height=\"3\">\n  <data " data_attrs ">" text     \
    "</data>\n </layer>\n"

/* ---- Tiled's files ------------------------------------------------------------------------------
 */

static const uint32_t encodings_gids[12] = {1,           0,          2, 3, 0, 2147483650u,
                                            1073741828u, 536870917u, 8, 7, 6, 3758096385u};

static void test_every_encoding_gives_the_same_gids(void) {
    static const char *const names[] = {"enc_csv.tmx",  "enc_base64.tmx", "enc_zlib.tmx",
                                        "enc_gzip.tmx", "enc_zstd.tmx",   "enc_xml.tmx"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        tiled_map *m = read_fixture(names[i]);
        CHECK_MSG(m, "%s: %s", names[i], err);
        CHECK(strcmp(m->orientation, "orthogonal") == 0 && !m->infinite);
        CHECK(m->width == 4 && m->height == 3 && m->tilewidth == 16 && m->tileheight == 16);
        CHECK(m->nfiles == 1 && strcmp(m->files[0], names[i]) == 0 && m->place.file == m->files[0]);
        CHECK(m->ntilesets == 1);
        const tiled_tileset *ts = &m->tilesets[0];
        CHECK(ts->firstgid == 1 && strcmp(ts->name, "tiles") == 0 && ts->tilewidth == 16 &&
              ts->tileheight == 16 && ts->tilecount == 8 && ts->columns == 4 && ts->ntiles == 0);
        CHECK(m->nlayers == 1);
        const tiled_layer *l = &m->layers[0];
        CHECK(l->kind == TILED_LAYER_TILES && l->id == 1 && strcmp(l->name, "ground") == 0);
        CHECK(l->nchunks == 1 && l->nobjects == 0 && l->props.count == 0);
        const tiled_chunk *c = &l->chunks[0];
        CHECK(c->x == 0 && c->y == 0 && c->width == 4 && c->height == 3);
        CHECK_MSG(memcmp(c->gids, encodings_gids, sizeof encodings_gids) == 0, "%s", names[i]);
        CHECK(l->place.line == 6 && l->place.file == m->files[0]);
        tiled_free(m);
    }
}

static void test_infinite_map_keeps_its_chunks(void) {
    tiled_map *m = read_fixture("infinite.tmx");
    CHECK_MSG(m, "%s", err);
    CHECK(m->infinite && m->nlayers == 1);
    const tiled_layer *l = &m->layers[0];
    CHECK(l->nchunks == 3);
    const int pos[3][2] = {{-16, -16}, {0, -16}, {16, 0}};
    const uint32_t first[3] = {0, 3, 1}, last[3] = {2, 4, 5};
    for (int i = 0; i < 3; i++) {
        const tiled_chunk *c = &l->chunks[i];
        CHECK_MSG(c->x == pos[i][0] && c->y == pos[i][1] && c->width == 16 && c->height == 16,
                  "chunk %d at %d,%d %dx%d", i, c->x, c->y, c->width, c->height);
        CHECK(c->gids[0] == first[i] && c->gids[255] == last[i]);
        uint32_t sum = 0;
        for (int k = 0; k < 256; k++)
            sum += c->gids[k];
        CHECK(sum == first[i] + last[i] + (i == 2 ? 1u : 0u)); /* the third has 1,1 first */
    }
    tiled_free(m);
}

static bool prop_is(const tiled_props *ps, const char *name, tiled_prop_type type,
                    const char *value) {
    const tiled_prop *p = tiled_prop_find(ps, name);
    if (!p)
        fprintf(stderr, "  no property %s\n", name);
    else if (p->type != type || strcmp(p->value, value) != 0)
        fprintf(stderr, "  %s: type %d value \"%s\"\n", name, (int)p->type, p->value);
    return p && p->type == type && strcmp(p->value, value) == 0;
}

static void test_objects_of_every_kind(void) {
    tiled_map *m = read_fixture("objects.tmx");
    CHECK_MSG(m, "%s", err);
    /* properties of every type; "other" is not ours */
    CHECK(m->props.count == 7);
    CHECK(prop_is(&m->props, "collide:b", TILED_PROP_BOOL, "true"));
    CHECK(prop_is(&m->props, "collide:c", TILED_PROP_OTHER, "#ff102030"));
    CHECK(prop_is(&m->props, "collide:f", TILED_PROP_OTHER, "sub/tiles.png"));
    CHECK(prop_is(&m->props, "collide:i", TILED_PROP_INT, "-12"));
    CHECK(prop_is(&m->props, "collide:o", TILED_PROP_OTHER, "3"));
    CHECK(prop_is(&m->props, "collide:s", TILED_PROP_STRING, "hello world"));
    CHECK(prop_is(&m->props, "collide:unit", TILED_PROP_FLOAT, "32"));
    CHECK(!tiled_prop_find(&m->props, "other"));
    CHECK(m->ntilesets == 2 && m->tilesets[0].firstgid == 1 && m->tilesets[1].firstgid == 9);
    const tiled_tileset *more = &m->tilesets[1];
    CHECK(strcmp(more->name, "more") == 0 && more->ntiles == 1 && more->tiles[0].id == 1);
    CHECK(more->tiles[0].nshapes == 0 &&
          prop_is(&more->tiles[0].props, "collide:solid", TILED_PROP_BOOL, "true"));
    CHECK(m->nlayers == 1);
    const tiled_layer *l = &m->layers[0];
    CHECK(l->kind == TILED_LAYER_OBJECTS && l->id == 1 && strcmp(l->name, "shapes") == 0);
    CHECK(l->offsetx == 4 && l->offsety == -8 && l->place.line == 24);
    CHECK(l->props.count == 1 && prop_is(&l->props, "collide:ignore", TILED_PROP_BOOL, "false"));
    CHECK(l->nobjects == 8);
    /* x, y with the layer's offset (4, -8) added */
    const struct {
        int id;
        tiled_object_kind kind;
        double x, y, w, h, rot;
        const char *type, *name;
        size_t npoints;
        int line;
    } want[8] = {
        {1, TILED_OBJ_RECT, 14, 12, 30, 40, 30, "wall", "box", 0, 28},
        {2, TILED_OBJ_ELLIPSE, 104, 92, 20, 20, 45, "", "ball", 0, 33},
        {3, TILED_OBJ_POINT, 54.5, 52.25, 0, 0, 0, "spawn", "spawn", 0, 36},
        {4, TILED_OBJ_POLYGON, 204, 92, 0, 0, -15, "", "tri", 3, 39},
        {5, TILED_OBJ_POLYLINE, 14, 292, 0, 0, 0, "", "path", 3, 42},
        {6, TILED_OBJ_TEXT, 9, -3, 80, 20, 0, "", "label", 0, 45},
        {7, TILED_OBJ_TILE, 68, 88, 32, 32, 180, "", "tile", 0, 48},
        {8, TILED_OBJ_RECT, 304, 292, 0, 0, 0, "zero", "", 0, 49},
    };
    for (int i = 0; i < 8; i++) {
        const tiled_object *o = &l->objects[i];
        CHECK_MSG(o->id == want[i].id && o->kind == want[i].kind, "object %d: id %d kind %d", i,
                  o->id, (int)o->kind);
        CHECK_MSG(o->x == want[i].x && o->y == want[i].y && o->width == want[i].w &&
                      o->height == want[i].h && o->rotation == want[i].rot,
                  "object %d: %g,%g %gx%g rot %g", o->id, o->x, o->y, o->width, o->height,
                  o->rotation);
        CHECK(strcmp(o->type, want[i].type) == 0 && strcmp(o->name, want[i].name) == 0);
        CHECK(o->npoints == want[i].npoints && o->place.line == want[i].line);
    }
    CHECK(l->objects[0].props.count == 1 &&
          prop_is(&l->objects[0].props, "collide:sensor", TILED_PROP_BOOL, "true"));
    const tiled_point *pt = l->objects[3].points;
    CHECK(pt[0].x == 0 && pt[0].y == 0 && pt[1].x == 40 && pt[1].y == 0 && pt[2].x == 20 &&
          pt[2].y == -30.5);
    CHECK(l->objects[6].gid == (TILED_FLIP_H | 10u));
    tiled_free(m);
}

static void test_external_tileset_template_and_groups(void) {
    tiled_map *m = read_fixture("external.tmx");
    CHECK_MSG(m, "%s", err);
    CHECK(m->nfiles == 3 && strcmp(m->files[1], "sub/tiles.tsx") == 0 &&
          strcmp(m->files[2], "tpl/crate.tx") == 0);
    CHECK(m->props.count == 1 && prop_is(&m->props, "collide:gravity", TILED_PROP_STRING, "0,-30"));
    CHECK(m->ntilesets == 1);
    const tiled_tileset *ts = &m->tilesets[0];
    CHECK(ts->firstgid == 1 && strcmp(ts->name, "tiles") == 0 && ts->tilecount == 8);
    CHECK(ts->place.file == m->files[1] && ts->place.line == 2);
    /* tile 2 has only a property that is not ours: absent */
    CHECK(ts->ntiles == 2 && ts->tiles[0].id == 0 && ts->tiles[1].id == 1);
    CHECK(ts->tiles[0].nshapes == 0 &&
          prop_is(&ts->tiles[0].props, "collide:solid", TILED_PROP_BOOL, "true"));
    const tiled_tile *t1 = &ts->tiles[1];
    CHECK(t1->props.count == 2 &&
          prop_is(&t1->props, "collide:category", TILED_PROP_STRING, "0x80000000") &&
          prop_is(&t1->props, "collide:one_way", TILED_PROP_BOOL, "true"));
    CHECK(t1->place.file == m->files[1] && t1->place.line == 9);
    CHECK(t1->nshapes == 4);
    const tiled_object *s = t1->shapes;
    CHECK(s[0].id == 1 && s[0].kind == TILED_OBJ_RECT && s[0].x == 0 && s[0].y == 8 &&
          s[0].width == 16 && s[0].height == 8);
    CHECK(s[1].id == 2 && s[1].kind == TILED_OBJ_ELLIPSE && s[1].x == 2 && s[1].y == 1 &&
          s[1].width == 6 && s[1].height == 6);
    CHECK(s[2].id == 3 && s[2].kind == TILED_OBJ_POLYGON && s[2].x == 8 && s[2].y == 0 &&
          s[2].npoints == 3 && s[2].points[2].x == 8 && s[2].points[2].y == 8);
    CHECK(s[3].id == 4 && s[3].kind == TILED_OBJ_POINT && s[3].x == 4 && s[3].y == 12);
    CHECK(s[0].place.file == m->files[1]);

    /* the image layer is not read; groups flattened */
    CHECK(m->nlayers == 3);
    const tiled_layer *walls = &m->layers[0], *things = &m->layers[1], *top = &m->layers[2];
    CHECK(strcmp(walls->name, "walls") == 0 && walls->kind == TILED_LAYER_TILES);
    CHECK(walls->offsetx == 11 && walls->offsety == 22);
    /* its own mask (1) wins over the group's (7); the group's category is inherited */
    CHECK(walls->props.count == 2 && prop_is(&walls->props, "collide:mask", TILED_PROP_INT, "1") &&
          prop_is(&walls->props, "collide:category", TILED_PROP_INT, "2"));
    CHECK(walls->nchunks == 1 && walls->chunks[0].gids[10] == 2 && walls->chunks[0].gids[5] == 0);
    CHECK(strcmp(things->name, "things") == 0 && things->kind == TILED_LAYER_OBJECTS);
    CHECK(things->offsetx == 110.5 && things->offsety == 220.25);
    CHECK(things->props.count == 3 &&
          prop_is(&things->props, "collide:sensor", TILED_PROP_BOOL, "true") &&
          prop_is(&things->props, "collide:mask", TILED_PROP_INT, "7") &&
          prop_is(&things->props, "collide:category", TILED_PROP_INT, "2"));
    /* its own first (none), then its inner group's, then the outer's */
    CHECK(strcmp(things->props.items[0].name, "collide:sensor") == 0);
    CHECK(things->nobjects == 2);
    const tiled_object *a = &things->objects[0], *b = &things->objects[1];
    /* the template's tile, name, type, size and properties; the instance's position */
    CHECK(a->id == 1 && a->kind == TILED_OBJ_TILE && a->gid == 2 && a->width == 16 &&
          a->height == 16 && strcmp(a->name, "crate") == 0 && strcmp(a->type, "crate") == 0);
    CHECK(a->x == 142.5 && a->y == 268.25 && a->rotation == 0 && a->place.line == 28);
    CHECK(a->props.count == 2 && prop_is(&a->props, "collide:sensor", TILED_PROP_BOOL, "false") &&
          prop_is(&a->props, "collide:mask", TILED_PROP_INT, "3"));
    /* the instance's name, size, rotation and mask over the template's */
    CHECK(b->id == 2 && b->kind == TILED_OBJ_TILE && b->gid == 2 && b->width == 32 &&
          b->height == 32 && b->rotation == 90 && strcmp(b->name, "big crate") == 0 &&
          strcmp(b->type, "crate") == 0);
    CHECK(b->x == 110.5 && b->y == 236.25);
    CHECK(b->props.count == 2 && prop_is(&b->props, "collide:mask", TILED_PROP_INT, "9") &&
          prop_is(&b->props, "collide:sensor", TILED_PROP_BOOL, "false"));
    CHECK(top->nobjects == 1 && top->objects[0].kind == TILED_OBJ_POINT && top->objects[0].x == 8 &&
          strcmp(top->objects[0].type, "spawn") == 0 && top->props.count == 0 && top->offsetx == 0);
    tiled_free(m);
}

/* ---- tile data decoding -------------------------------------------------------------------------
 */

static bool decodes(const char *text, const char *enc, const char *comp, const uint32_t *want,
                    size_t n) {
    uint32_t out[16] = {0};
    char why[256] = "";
    bool ok = tiled_decode_data(text, strlen(text), enc, comp, out, n, why, sizeof why);
    if (!ok) fprintf(stderr, "  \"%s\" (%s %s): %s\n", text, enc, comp, why);
    return ok && memcmp(out, want, n * sizeof *out) == 0;
}

static bool fails(const char *text, const char *enc, const char *comp, size_t n,
                  const char *reason) {
    uint32_t out[16];
    char why[256] = "";
    bool ok = tiled_decode_data(text, strlen(text), enc, comp, out, n, why, sizeof why);
    bool good = !ok && strncmp(why, reason, strlen(reason)) == 0;
    if (!good) fprintf(stderr, "  \"%s\": got \"%s\", expected \"%s\"\n", text, why, reason);
    return good;
}

static void test_decode_data(void) {
    const uint32_t g[3] = {1, 2, 3};
    CHECK(decodes(" 1,2,\n3 ", "csv", "", g, 3));
    CHECK(decodes("1,2,3,\n", "csv", "", g, 3));
    CHECK(decodes("AQAAAAIA\n AAADAAAA", "base64", "", g, 3));
    CHECK(decodes("eJxjZGBgYAJiZiAGAAA0AAc=", "base64", "zlib", g, 3));
    CHECK(decodes("H4sIAGPdFmsC/2NkYGBgAmJmIAYAkyLgsAwAAAA=", "base64", "gzip", g, 3));
    CHECK(decodes("KLUv/QRYYQAAAQAAAAIAAAADAAAA/BGpAA==", "base64", "zstd", g, 3));
    CHECK(decodes("4294967295", "csv", "", (const uint32_t[]){0xffffffffu}, 1));
    CHECK(fails("4294967296", "csv", "", 1, "csv: tile id 1 exceeds 32 bits"));
    CHECK(fails("1,2", "csv", "", 3, "csv: 2 tile ids where 3 are expected"));
    CHECK(fails("1,2,3,4", "csv", "", 3, "csv: more than the 3 tile ids expected"));
    CHECK(fails("1,,2", "csv", "", 3, "csv: expected a tile id at byte 2"));
    CHECK(fails("1;2", "csv", "", 2, "csv: unexpected ';' at byte 1"));
    CHECK(fails("AQAAAAIAAAADAAA", "base64", "", 3, "base64: truncated or badly padded"));
    CHECK(fails("AQAAAAIA*AADAAAA", "base64", "", 3, "base64: invalid character at byte 8"));
    CHECK(fails("AQ==AAIA", "base64", "", 3, "base64: data after '=' padding at byte 4"));
    CHECK(fails("AQAAAAIA", "base64", "", 3, "base64: 6 bytes where 12 (3 tiles) are expected"));
    CHECK(fails("eJz/////ABE=", "base64", "zlib", 3, "zlib: the stream does not inflate"));
    CHECK(fails("eJxjZGBgYAJiZiAGAAA=", "base64", "zlib", 3, "zlib: truncated stream"));
    CHECK(fails("eJxjZGBgYAJiZiAGAAA0AAd4eQ==", "base64", "zlib", 3,
                "zlib: data after the end of the stream"));
    CHECK(fails("eJxjZGBgYAJiZiBmRGIDAACwAA0=", "base64", "zlib", 3,
                "zlib: more than the 12 bytes expected"));
    CHECK(fails("H4sIAGPdFmsC/2NkYGBgAmJmIAYAkiLgsAwAAAA=", "base64", "gzip", 3,
                "gzip: the stream does not inflate (incorrect data check)"));
    CHECK(fails("eJxjZGBgYAJiZiAGAAA0AAc=", "base64", "gzip", 3, "gzip: the stream does not"));
    CHECK(fails("KLUv/QRYQQAAAQAAAAIAAAA6GOQe", "base64", "zstd", 3,
                "zstd: 8 bytes where 12 are expected"));
    CHECK(fails("eJxjZGBgYAJiZiAGAAA0AAc=", "base64", "zstd", 3, "zstd: not a zstd frame"));
    CHECK(fails("AQAAAA==", "base64", "lz4", 1, "unsupported data compression 'lz4'"));
    CHECK(fails("1", "xml", "", 1, "unknown data encoding 'xml'"));
    CHECK(fails("1", "csv", "zlib", 1, "csv data cannot be compressed ('zlib')"));
}

/* ---- refusals
 * ------------------------------------------------------------------------------------ */

static const char tsx_ok[] = "<?xml version=\"1.0\"?>\n<tileset name=\"t\" tilewidth=\"16\" "
                             "tileheight=\"16\" tilecount=\"1\" columns=\"1\"/>\n";

static void test_refusals_name_file_line_and_reason(void) {
    scratch_make();
    /* two tilesets at one gid: which one its tiles name would be the file's order */
    put("dupgid.tmx", MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" name=\"a\" tilewidth=\"16\" "
                                        "tileheight=\"16\" tilecount=\"1\" columns=\"1\"/>\n"
                                        " <tileset firstgid=\"1\" name=\"b\" tilewidth=\"16\" "
                                        "tileheight=\"16\" tilecount=\"1\" columns=\"1\"/>\n"
                                        "</map>\n");
    CHECK(refused("dupgid.tmx", "dupgid.tmx:0: two tilesets start at gid 1", false));
    put("xml.tmx", MAP_HEAD(4, 3, 0) " <layer id=\"1\" name=\"a\">\n</map>\n");
    CHECK(refused("xml.tmx", "xml.tmx:4: XML: mismatched tag (column 3)", false));
    put("b64.tmx", MAP_HEAD(4, 3, 0) LAYER("encoding=\"base64\"", "AQAA*AAA"));
    CHECK(refused("b64.tmx", "b64.tmx:4: layer 'ground': data: base64: invalid character at byte 4",
                  false));
    put("zlib.tmx",
        MAP_HEAD(4, 3, 0) LAYER("encoding=\"base64\" compression=\"zlib\"", "eJz/////ABE="));
    CHECK(refused("zlib.tmx", "zlib.tmx:4: layer 'ground': data: zlib: the stream does not inflate",
                  true));
    put("len.tmx", MAP_HEAD(4, 3, 0) LAYER("encoding=\"base64\"", "AQAAAAIAAAA="));
    CHECK(refused("len.tmx",
                  "len.tmx:4: layer 'ground': data: base64: 8 bytes where 48 (12 tiles) are "
                  "expected",
                  false));
    put("csv.tmx", MAP_HEAD(4, 3, 0) LAYER("encoding=\"csv\"", "1,2,3"));
    CHECK(refused("csv.tmx", "csv.tmx:4: layer 'ground': data: csv: 3 tile ids where 12", true));
    put("tiles.tmx", MAP_HEAD(4, 3, 0) LAYER("", "<tile gid=\"1\"/>"));
    CHECK(refused("tiles.tmx",
                  "tiles.tmx:4: layer 'ground': data: 1 <tile> elements where 12 are expected",
                  false));
    put("huge.tmx",
        MAP_HEAD(100000, 100000,
                 0) " <layer id=\"1\" name=\"big\" width=\"100000\" height=\"100000\">\n"
                    "  <data encoding=\"csv\">0</data>\n </layer>\n</map>\n");
    CHECK(refused("huge.tmx",
                  "huge.tmx:4: layer 'big': 10000000000 cells, more than the 16777216 a layer may "
                  "have",
                  false));
    put("chunk.tmx",
        MAP_HEAD(4, 3, 1) " <layer id=\"7\" name=\"c\">\n  <data encoding=\"csv\">\n"
                          "   <chunk x=\"-16\" y=\"0\" width=\"5000\" height=\"5000\">0</chunk>\n"
                          "  </data>\n </layer>\n</map>\n");
    CHECK(refused("chunk.tmx",
                  "chunk.tmx:5: layer 'c': 25000000 cells, more than the 16777216 a layer may "
                  "have",
                  false));
    put("obj.tmx", MAP_HEAD(4, 3, 0) " <objectgroup id=\"2\" name=\"things\">\n"
                                     "  <object id=\"5\" x=\"1\" y=\"2\"/>\n"
                                     "  <object id=\"6\" x=\"nan\" y=\"2\"/>\n"
                                     " </objectgroup>\n</map>\n");
    CHECK(refused("obj.tmx",
                  "obj.tmx:5: layer 'things' object 6: x=\"nan\": not a number within +-1e+09",
                  false));
    put("poly.tmx", MAP_HEAD(4, 3, 0) " <objectgroup id=\"2\" name=\"things\">\n"
                                      "  <object id=\"9\" x=\"1\" y=\"2\">\n"
                                      "   <polygon points=\"0,0 4,x 3,3\"/>\n"
                                      "  </object>\n </objectgroup>\n</map>\n");
    CHECK(
        refused("poly.tmx", "poly.tmx:5: layer 'things' object 9: points: bad point '4,x'", false));
    /* a tile's collision shape in an external tileset: named by its file, tileset and tile */
    put("tileerr.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"ts/bad.tsx\"/>\n</map>\n");
    put("ts/bad.tsx",
        "<?xml version=\"1.0\"?>\n<tileset name=\"bad\" tilewidth=\"16\" "
        "tileheight=\"16\">\n <tile id=\"3\">\n  <objectgroup>\n"
        "   <object id=\"2\" width=\"-\"/>\n  </objectgroup>\n </tile>\n</tileset>\n");
    CHECK(refused("tileerr.tmx",
                  "ts/bad.tsx:5: tileset 'bad' tile 3 object 2: width=\"-\": not a number within "
                  "+-1e+09",
                  false));
    put("notmap.tmx", "<?xml version=\"1.0\"?>\n<tileset name=\"x\"/>\n");
    CHECK(refused("notmap.tmx", "notmap.tmx:2: <tileset> where a Tiled <map> is expected", false));
    put("empty.tmx", "");
    CHECK(refused("empty.tmx", "empty.tmx:1: XML: no element found", true));
    put("entity.tmx", "<?xml version=\"1.0\"?>\n<!DOCTYPE map [\n <!ENTITY a \"aaaaaaaaaa\">\n"
                      " <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n]>\n<map name=\"&b;\"/>\n");
    CHECK(refused("entity.tmx", "entity.tmx:3: entity declaration 'a': not allowed", true));
    /* nesting: 80 groups */
    char deep[4096];
    size_t n = (size_t)snprintf(deep, sizeof deep, MAP_HEAD(4, 3, 0));
    for (int i = 0; i < 80; i++)
        n += (size_t)snprintf(deep + n, sizeof deep - n, "<group>");
    snprintf(deep + n, sizeof deep - n, "\n");
    put("deep.tmx", deep);
    CHECK(refused("deep.tmx", "deep.tmx:3: elements nested deeper than 64", false));
    put("rel/hex.tmx", "<?xml version=\"1.0\"?>\n<map width=\"2\" height=\"1\" infinite=\"2\"/>\n");
    CHECK(refused("rel/hex.tmx", "rel/hex.tmx:2: infinite=\"2\": not 0 or 1", false));
    put("nomap.tmx", "");
    CHECK(refused("missing.tmx", "missing.tmx:0: cannot open: No such file or directory", false));
}

static void test_files_stay_in_the_maps_tree(void) {
    scratch_make();
    put("outside.tsx", tsx_ok);
    put("maps/in/t.tsx", tsx_ok);
    put("maps/up.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"../outside.tsx\"/>\n</map>\n");
    CHECK(refused("maps/up.tmx",
                  "maps/up.tmx:3: tileset '../outside.tsx': outside the map's directory tree (or "
                  "too long)",
                  false));
    put("maps/updown.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"in/../../maps/in/t.tsx\"/>\n</map>\n");
    CHECK(refused("maps/updown.tmx", "maps/updown.tmx:3: tileset 'in/../../maps/in/t.tsx': outside",
                  true));
    /* a ".." that stays inside is fine */
    put("maps/inside.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"./in/../in/t.tsx\"/>\n</map>\n");
    tiled_map *m = read_scratch("maps/inside.tmx");
    CHECK_MSG(m, "%s", err);
    CHECK(m->nfiles == 2 && strcmp(m->files[1], "in/t.tsx") == 0 && m->ntilesets == 1);
    tiled_free(m);
    char abs_ref[600], text[1200];
    snprintf(abs_ref, sizeof abs_ref, "%s/maps/in/t.tsx", scratch);
    snprintf(text, sizeof text,
             MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"%s\"/>\n</map>\n", abs_ref);
    put("maps/abs.tmx", text);
    char want[1300];
    snprintf(want, sizeof want,
             "maps/abs.tmx:3: tileset '%s': an absolute path (files must lie in the map's "
             "directory tree)",
             abs_ref);
    CHECK(refused("maps/abs.tmx", want, false));
    /* symbolic links: to a file, and to a directory, even inside the tree */
    char target[600], link_path[600];
    snprintf(target, sizeof target, "%s/maps/in/t.tsx", scratch);
    snprintf(link_path, sizeof link_path, "%s/maps/link.tsx", scratch);
    unlink(link_path);
    CHECK(symlink(target, link_path) == 0);
    put("maps/link.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"link.tsx\"/>\n</map>\n");
    CHECK(refused("maps/link.tmx",
                  "maps/link.tmx:3: tileset 'link.tsx': cannot open: a symbolic link", false));
    snprintf(target, sizeof target, "%s/maps/in", scratch);
    snprintf(link_path, sizeof link_path, "%s/maps/ld", scratch);
    unlink(link_path);
    CHECK(symlink(target, link_path) == 0);
    put("maps/linkdir.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"ld/t.tsx\"/>\n</map>\n");
    CHECK(refused("maps/linkdir.tmx",
                  "maps/linkdir.tmx:3: tileset 'ld/t.tsx': directory 'ld': a symbolic link or not "
                  "a directory",
                  false));
    put("maps/missing.tmx",
        MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"no.tsx\"/>\n</map>\n");
    CHECK(refused("maps/missing.tmx",
                  "maps/missing.tmx:3: tileset 'no.tsx': cannot open: No such file or directory",
                  false));
    put("maps/dir.tmx", MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" source=\"in\"/>\n</map>\n");
    CHECK(refused("maps/dir.tmx", "maps/dir.tmx:3: tileset 'in': is a directory", false));
    /* a template whose tileset the map does not list (Tiled saves such maps): the tileset is
     * read and numbered after the map's */
    put("maps/tpl/t.tx", "<?xml version=\"1.0\"?>\n<template>\n"
                         " <tileset firstgid=\"1\" source=\"../in/t.tsx\"/>\n"
                         " <object gid=\"1\" width=\"16\" height=\"16\"/>\n</template>\n");
    put("maps/tpl.tmx", MAP_HEAD(4, 3, 0) " <tileset firstgid=\"1\" name=\"a\" tilecount=\"5\"/>\n"
                                          " <objectgroup id=\"3\" name=\"o\">\n"
                                          "  <object id=\"4\" template=\"tpl/t.tx\"/>\n"
                                          "  <object id=\"5\" template=\"tpl/t.tx\"/>\n"
                                          " </objectgroup>\n</map>\n");
    m = read_scratch("maps/tpl.tmx");
    CHECK_MSG(m, "%s", err);
    CHECK(m->ntilesets == 2 && m->tilesets[1].firstgid == 6 &&
          strcmp(m->tilesets[1].name, "t") == 0);
    CHECK(m->nfiles == 3 && strcmp(m->files[1], "tpl/t.tx") == 0 &&
          strcmp(m->files[2], "in/t.tsx") == 0);
    CHECK(m->layers[0].nobjects == 2 && m->layers[0].objects[0].gid == 6 &&
          m->layers[0].objects[1].gid == 6 && m->layers[0].objects[1].kind == TILED_OBJ_TILE);
    tiled_free(m);
    put("maps/tplup.tmx", MAP_HEAD(4, 3, 0) " <objectgroup id=\"3\" name=\"o\">\n"
                                            "  <object id=\"4\" template=\"../x.tx\"/>\n"
                                            " </objectgroup>\n</map>\n");
    CHECK(refused("maps/tplup.tmx", "maps/tplup.tmx:4: template '../x.tx': outside", true));
}

/* What Tiled writes that is unusual: a multi-line string property is the element's text, a class
 * property's members are not read, an unknown element is skipped with its content. */
static void test_property_forms_and_unknown_elements(void) {
    scratch_make();
    put("forms.tmx",
        MAP_HEAD(4, 3, 0) " <properties>\n"
                          "  <property name=\"collide:multi\">line 1\nline 2</property>\n"
                          "  <property name=\"collide:cls\" type=\"class\" "
                          "propertytype=\"P\">\n"
                          "   <properties><property name=\"collide:inner\" "
                          "value=\"x\"/></properties>\n"
                          "  </property>\n"
                          " </properties>\n"
                          " <future><layer id=\"9\" name=\"not read\"/></future>\n"
                          "</map>\n");
    tiled_map *m = read_scratch("forms.tmx");
    CHECK_MSG(m, "%s", err);
    CHECK(m->props.count == 2);
    CHECK(prop_is(&m->props, "collide:multi", TILED_PROP_STRING, "line 1\nline 2"));
    CHECK(prop_is(&m->props, "collide:cls", TILED_PROP_OTHER, ""));
    CHECK(!tiled_prop_find(&m->props, "collide:inner") && m->nlayers == 0);
    tiled_free(m);
}

static char *slurp(const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", COLLIDE_TILED_FIXTURES, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

/* Every prefix of Tiled's files, and seeded byte changes: refused with a message or read, never a
 * crash (run under ASan and UBSan too). A prefix that cuts the map's end tag is always refused. */
static void test_cut_and_corrupted_files_never_crash(void) {
    scratch_make();
    static const char *const maps[] = {"external.tmx", "objects.tmx", "enc_zlib.tmx",
                                       "infinite.tmx"};
    char *tsx = slurp("sub/tiles.tsx"), *tx = slurp("tpl/crate.tx");
    CHECK(tsx && tx);
    put("sub/tiles.tsx", tsx);
    put("tpl/crate.tx", tx);
    collide_rng rng = {33u};
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++) {
        char *text = slurp(maps[k]);
        CHECK(text);
        size_t len = strlen(text), end = (size_t)(strstr(text, "</map>") - text) + 6;
        for (size_t cut = 0; cut < len; cut += 1 + cut / 512) {
            char saved = text[cut];
            text[cut] = '\0';
            put("cut.tmx", text);
            text[cut] = saved;
            tiled_map *m = read_scratch("cut.tmx");
            CHECK_MSG(m == NULL ? err[0] != '\0' : cut >= end, "%s cut at %zu: %s", maps[k], cut,
                      m ? "read" : "no message");
            tiled_free(m);
        }
        for (int round = 0; round < 300; round++) {
            char *copy = strdup(text);
            for (int j = 0; j < 3; j++)
                copy[collide_rng_next(&rng) % len] =
                    "<>/\"=0123456789-,. xAZ+"[collide_rng_next(&rng) % 24];
            put("bad.tmx", copy);
            tiled_map *m = read_scratch("bad.tmx");
            CHECK_MSG(m || err[0], "%s round %d: refused without a message", maps[k], round);
            tiled_free(m);
            free(copy);
        }
        free(text);
    }
    free(tsx);
    free(tx);
}

TEST_MAIN(TEST(test_every_encoding_gives_the_same_gids), TEST(test_infinite_map_keeps_its_chunks),
          TEST(test_objects_of_every_kind), TEST(test_external_tileset_template_and_groups),
          TEST(test_decode_data), TEST(test_refusals_name_file_line_and_reason),
          TEST(test_files_stay_in_the_maps_tree), TEST(test_property_forms_and_unknown_elements),
          TEST(test_cut_and_corrupted_files_never_crash))

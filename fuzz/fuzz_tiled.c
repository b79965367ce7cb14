/* libFuzzer target over the Tiled map loader (ARCHITECTURE.md "World files: Tiled maps"): what an
 * operator's --world, or an admin's CreateRoom naming a file in --world-dir, may hand the daemon.
 * The input's first byte picks the format (even: TMX, odd: TMJ); the rest is the map's bytes. They
 * are written to map.tmx or map.tmj in a private temporary directory that also holds small valid
 * external tilesets and templates under the names the fixture maps use (tiles.tsx, sub/tiles.tsj,
 * tpl/crate.tx, tilesets/walls.tsj, templates/zone.tj, ...), so that a map's references resolve
 * and the fuzzer gets past them. The map is read as the daemon reads it: world_read_any (parse,
 * convert to native world JSON) then world_load_json (build the world), and everything is freed.
 * Checked: nothing is read out of bounds or leaked (ASan/LSan), no undefined behaviour (UBSan); a
 * refusal's message is not empty and names the map (FILE:LINE: reason).
 * Seeds: fuzz/corpus_tiled (the fixture maps with their selector byte, and every crash found). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "world_load.h"

/* A small valid tileset, 8 tiles of 16 x 16: tile 0 solid, tile 1 a box, a triangle and a circle,
 * tile 2 a sensor box. */
static const char tsx[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<tileset version=\"1.8\" tiledversion=\"1.8.2\" name=\"tiles\" tilewidth=\"16\" "
    "tileheight=\"16\" tilecount=\"8\" columns=\"4\">\n"
    " <image source=\"tiles.png\" width=\"64\" height=\"32\"/>\n"
    " <tile id=\"0\"><properties><property name=\"collide:solid\" type=\"bool\" value=\"true\"/>"
    "</properties></tile>\n"
    " <tile id=\"1\"><objectgroup draworder=\"index\" id=\"2\">\n"
    "  <object id=\"1\" x=\"0\" y=\"8\" width=\"16\" height=\"8\"/>\n"
    "  <object id=\"2\" x=\"8\" y=\"0\"><polygon points=\"0,0 8,0 8,8\"/></object>\n"
    "  <object id=\"3\" x=\"2\" y=\"1\" width=\"6\" height=\"6\"><ellipse/></object>\n"
    " </objectgroup></tile>\n"
    " <tile id=\"2\"><properties><property name=\"collide:sensor\" type=\"bool\" value=\"true\"/>"
    "</properties><objectgroup id=\"2\"><object id=\"1\" x=\"0\" y=\"0\" width=\"16\" "
    "height=\"16\"/></objectgroup></tile>\n"
    "</tileset>\n";

static const char tsj[] =
    "{\"type\":\"tileset\",\"version\":\"1.8\",\"tiledversion\":\"1.8.2\",\"name\":\"tiles\","
    "\"tilewidth\":16,\"tileheight\":16,\"tilecount\":8,\"columns\":4,\"image\":\"tiles.png\","
    "\"imagewidth\":64,\"imageheight\":32,\"tiles\":["
    "{\"id\":0,\"properties\":[{\"name\":\"collide:solid\",\"type\":\"bool\",\"value\":true}]},"
    "{\"id\":1,\"objectgroup\":{\"type\":\"objectgroup\",\"objects\":["
    "{\"id\":1,\"x\":0,\"y\":8,\"width\":16,\"height\":8},"
    "{\"id\":2,\"x\":8,\"y\":0,\"polygon\":[{\"x\":0,\"y\":0},{\"x\":8,\"y\":0},{\"x\":8,\"y\":8}]}"
    ","
    "{\"id\":3,\"x\":2,\"y\":1,\"width\":6,\"height\":6,\"ellipse\":true}]}},"
    "{\"id\":2,\"properties\":[{\"name\":\"collide:sensor\",\"type\":\"bool\",\"value\":true}],"
    "\"objectgroup\":{\"type\":\"objectgroup\",\"objects\":["
    "{\"id\":1,\"x\":0,\"y\":0,\"width\":16,\"height\":16}]}}]}\n";

static const char crate_tx[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<template>\n"
    " <tileset firstgid=\"1\" source=\"../sub/tiles.tsx\"/>\n"
    " <object name=\"crate\" type=\"crate\" gid=\"2\" width=\"16\" height=\"16\">\n"
    "  <properties><property name=\"collide:mask\" type=\"int\" value=\"3\"/></properties>\n"
    " </object>\n</template>\n";

#define CRATE_TJ(tileset)                                                                          \
    "{\"type\":\"template\",\"tileset\":{\"firstgid\":1,\"source\":\"" tileset "\"},"              \
    "\"object\":{\"gid\":2,\"width\":16,\"height\":16,\"name\":\"crate\",\"type\":\"crate\","      \
    "\"properties\":[{\"name\":\"collide:mask\",\"type\":\"int\",\"value\":3}]}}\n"

static const char zone_tj[] =
    "{\"type\":\"template\",\"object\":{\"width\":32,\"height\":24,\"name\":\"zone\","
    "\"type\":\"trigger\",\"properties\":[{\"name\":\"collide:sensor\",\"type\":\"bool\","
    "\"value\":true}]}}\n";

/* The files beside the map, by the names the fixture maps give them. */
static const struct {
    const char *path, *text;
} externals[] = {
    {"tiles.tsx", tsx},
    {"tiles.tsj", tsj},
    {"sub/tiles.tsx", tsx},
    {"sub/tiles.tsj", tsj},
    {"tilesets/walls.tsx", tsx},
    {"tilesets/walls.tsj", tsj},
    {"tpl/crate.tx", crate_tx},
    {"tpl/crate.tj", CRATE_TJ("../sub/tiles.tsj")},
    {"templates/crate.tj", CRATE_TJ("../tilesets/walls.tsj")},
    {"templates/zone.tj", zone_tj},
};
static const char *const subdirs[] = {"sub", "tpl", "tilesets", "templates"};
#define N_EXTERNALS (sizeof externals / sizeof externals[0])
#define N_SUBDIRS (sizeof subdirs / sizeof subdirs[0])

static char dir_path[256]; /* the private directory; "" until made */
static int dir_fd = -1;

static bool write_file(const char *name, const void *data, size_t size) {
    int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const uint8_t *p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return false;
        }
        p += n;
        size -= (size_t)n;
    }
    return close(fd) == 0;
}

static void remove_dir(void) {
    if (dir_fd < 0) return;
    for (size_t i = 0; i < N_EXTERNALS; i++)
        unlinkat(dir_fd, externals[i].path, 0);
    unlinkat(dir_fd, "map.tmx", 0);
    unlinkat(dir_fd, "map.tmj", 0);
    for (size_t i = 0; i < N_SUBDIRS; i++)
        unlinkat(dir_fd, subdirs[i], AT_REMOVEDIR);
    close(dir_fd);
    dir_fd = -1;
    rmdir(dir_path);
}

/* Makes the private directory and its external files once; aborts when it cannot (the target
 * would test nothing). */
static void setup(void) {
    if (dir_fd >= 0) return;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir_path, sizeof dir_path, "%s/collide-fuzz-tiled-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir_path)) abort();
    dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) abort();
    atexit(remove_dir);
    for (size_t i = 0; i < N_SUBDIRS; i++)
        if (mkdirat(dir_fd, subdirs[i], 0700) != 0) abort();
    for (size_t i = 0; i < N_EXTERNALS; i++)
        if (!write_file(externals[i].path, externals[i].text, strlen(externals[i].text))) abort();
}

/* FUZZ_TILED_VERBOSE=1 (replay_tiled on the corpus): each input's outcome on stdout, to see the
 * seeds get past the references they make. */
static void say(const char *what, const char *err) {
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("FUZZ_TILED_VERBOSE") != NULL;
    if (verbose) printf("  %s%s%s\n", what, err[0] ? ": " : "", err);
}

/* A refusal names the map (as it was given: the file name) or one of its externals, then ':'. */
static void check_err(const char *err) {
    if (!err[0]) abort();
    if (!strchr(err, ':')) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    setup();
    const char *name = (data[0] & 1u) ? "map.tmj" : "map.tmx";
    if (!write_file(name, data + 1, size - 1)) abort();
    char err[512] = "";
    world_file_notes *notes = malloc(sizeof *notes);
    world_spawn_points *sp = malloc(sizeof *sp);
    if (!notes || !sp) abort();
    char *json = world_read_any(dir_fd, name, true, NULL, notes, err, sizeof err);
    if (!json) {
        say("refused by world_read_any", err);
        check_err(err);
    } else {
        world_config wc;
        world_config_default(&wc);
        err[0] = '\0';
        world *w = world_load_json(json, name, &wc, sp, err, sizeof err);
        say(w ? "loaded" : "refused by world_load_json", err);
        if (w)
            world_destroy(w);
        else
            check_err(err);
        free(json);
    }
    unlinkat(dir_fd, name, 0);
    free(sp);
    free(notes);
    return 0;
}

/* Unit tests of net_worlds (CreateRoom's world files): names, the folder never left (separators,
 * `..`, symbolic links), a missing file, files that are not worlds, and a good one read whole. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "net_worlds.h"

static char dir[64];

static void put(const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static net_world_status read_world(const char *name, char **text, size_t *statics, char *err) {
    world_config base;
    world_config_default(&base);
    return net_world_read(dir, name, strlen(name), &base, text, statics, err, 256);
}

static void test_names(void) {
    CHECK(net_world_name_ok("arena.json", 10));
    CHECK(net_world_name_ok("a.b.json", 8));
    CHECK(!net_world_name_ok("", 0));
    CHECK(!net_world_name_ok("../arena.json", 13));
    CHECK(!net_world_name_ok("..", 2));
    CHECK(!net_world_name_ok("a..json", 7));
    CHECK(!net_world_name_ok("maps/arena.json", 15));
    CHECK(!net_world_name_ok("maps\\arena.json", 15));
    CHECK(!net_world_name_ok("a\0b", 3));
    char long_name[300];
    memset(long_name, 'x', sizeof long_name);
    CHECK(net_world_name_ok(long_name, 255) && !net_world_name_ok(long_name, 256));
}

static void test_files(void) {
    snprintf(dir, sizeof dir, "/tmp/collide-worlds-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    put("good.json", "{\"bounds\": {\"min\": [-100, -100], \"max\": [100, 100]}, \"statics\": ["
                     "{\"position\": [0, -10], \"box\": {\"half_extents\": [50, 1]}},"
                     "{\"position\": [20, 5], \"circle\": {\"radius\": 2}}]}");
    put("bad.json", "{\"bounds\": {\"min\": [0, 0], \"max\": [0, 0]}}");
    char outside[96], link[128], sub[128], fifo[128];
    snprintf(outside, sizeof outside, "%s-outside.json", dir);
    FILE *f = fopen(outside, "w");
    CHECK(f);
    fputs("{\"bounds\": {\"min\": [-1, -1], \"max\": [1, 1]}}", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/link.json", dir);
    CHECK(symlink(outside, link) == 0);
    snprintf(sub, sizeof sub, "%s/sub.json", dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    CHECK(mkfifo(fifo, 0600) == 0);

    char *text = NULL, err[256];
    size_t statics = 0;
    CHECK(read_world("good.json", &text, &statics, err) == NET_WORLD_OK);
    CHECK(text && strstr(text, "half_extents") && statics == 2);
    free(text);
    CHECK(read_world("missing.json", &text, &statics, err) == NET_WORLD_NOT_FOUND && !text);
    CHECK_MSG(read_world("bad.json", &text, &statics, err) == NET_WORLD_BAD_FILE && !text &&
                  strstr(err, "bad.json"),
              "err: %s", err);
    CHECK_MSG(read_world("link.json", &text, &statics, err) == NET_WORLD_BAD_FILE,
              "a symbolic link out of the folder must be refused: %s", err);
    CHECK(read_world("sub.json", &text, &statics, err) == NET_WORLD_BAD_FILE);
    CHECK(read_world("fifo.json", &text, &statics, err) == NET_WORLD_BAD_FILE); /* no hang */
    CHECK(read_world("../collide.json", &text, &statics, err) == NET_WORLD_BAD_NAME);
    world_config base;
    world_config_default(&base);
    CHECK(net_world_read("", "good.json", 9, &base, &text, &statics, err, sizeof err) ==
          NET_WORLD_NOT_FOUND);
    unlink(link);
    unlink(fifo);
    rmdir(sub);
    char p[128];
    snprintf(p, sizeof p, "%s/good.json", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/bad.json", dir);
    unlink(p);
    rmdir(dir);
    unlink(outside);
}

TEST_MAIN(TEST(test_names), TEST(test_files))

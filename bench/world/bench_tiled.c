/* bench_tiled: loading levels drawn in Tiled (issue 33; ARCHITECTURE.md "World files: Tiled maps").
 *
 *   build/release/bench/world/bench_tiled load [RUNS]   (default 5)
 *     Generates, with a fixed seed, a 1024 x 1024 tile map (16-pixel tiles, collide:unit 16: one
 *     world unit per tile) with 20% collidable tiles: solid tiles (collide:solid) in level-like
 *     horizontal runs and round blobs, slope tiles (a triangle collision shape) at the runs' ends,
 *     and some thin platforms and concave L-shaped tiles (collision polygons). Saved as TMX with
 *     base64 + zlib tile data and an external tileset (tiles.tsx) in a private temporary directory,
 *     then timed (CLOCK_MONOTONIC) through world_read_any + world_load_json, the daemon's path for
 *     --world: the median of RUNS runs. Prints the load time, the statics after merging against
 *     the collidable tiles (target <= 0.5x), the world's memory (world_stats.bytes, and the VmRSS
 *     delta of the first load with the world kept) and the file sizes.
 *   build/release/bench/world/bench_tiled s1 [TICKS]    (default 600)
 *     Saves S1's static map (s1.h, PERFORMANCE.md's scene) as a Tiled map (256 x 256, the same
 *     encoding and tileset), loads it as above, and runs S1a-slow (bench_world's scene: 10,000
 *     movers at speed 5, same seed and intents, s1_world.h's run) on the native map (a box per
 *     solid cell) and on the Tiled one (cells merged), the two runs in alternating blocks of 10
 *     ticks (s1_run_paired). Prints ms/tick for each, the statics of each, and whether the state
 *     hashes and the movers' final positions match (the merged map gives fewer, larger statics, so
 *     body ids differ and a different hash is expected; positions may differ where a mover slides
 *     along a seam that merging removed).
 *   build/release/bench/world/bench_tiled               both, load first.
 *
 * One JSON line each, after a first line naming the machine. Timing figures need an otherwise
 * idle machine; on a shared one they say only that the code runs. Exits 1 when a load fails or an
 * invariant counter of S1 (overlaps, outside) is not 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "s1_world.h"
#include "world_load.h"

#define BIG 1024        /* the generated map's side, in tiles */
#define TILE_PX 16      /* pixels per tile side; collide:unit is the same: a tile is a unit */
#define BIG_SEED 20330u /* the generator's seed */
#define GID_SOLID 1u    /* tile 0: collide:solid, no shapes */
#define GID_SLOPE 2u    /* tile 1: a triangle, rising to the right */
#define GID_PLATFORM 3u /* tile 2: a 16 x 4 box at the top of the cell */
#define GID_L 4u        /* tile 3: a concave L (split into convex pieces) */
#define GID_FLIP_H 0x80000000u

static const char tileset_tsx[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<tileset version=\"1.8\" tiledversion=\"1.8.2\" name=\"tiles\" tilewidth=\"16\" "
    "tileheight=\"16\" tilecount=\"4\" columns=\"4\">\n"
    " <image source=\"tiles.png\" width=\"64\" height=\"16\"/>\n"
    " <tile id=\"0\"><properties><property name=\"collide:solid\" type=\"bool\" value=\"true\"/>"
    "</properties></tile>\n"
    " <tile id=\"1\"><objectgroup draworder=\"index\" id=\"2\"><object id=\"1\" x=\"0\" y=\"16\">"
    "<polygon points=\"0,0 16,0 16,-16\"/></object></objectgroup></tile>\n"
    " <tile id=\"2\"><objectgroup draworder=\"index\" id=\"2\"><object id=\"1\" x=\"0\" y=\"0\" "
    "width=\"16\" height=\"4\"/></objectgroup></tile>\n"
    " <tile id=\"3\"><objectgroup draworder=\"index\" id=\"2\"><object id=\"1\" x=\"0\" y=\"0\">"
    "<polygon points=\"0,0 6,0 6,10 16,10 16,16 0,16\"/></object></objectgroup></tile>\n"
    "</tileset>\n";

/* ---- the machine, files, memory ------------------------------------------------------------- */

static void print_machine(void) {
    struct utsname u;
    char cpu[128] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    printf("{\"machine\":\"%s\",\"cpu\":\"%s\",\"cpus\":%ld}\n", uname(&u) == 0 ? u.nodename : "?",
           cpu, sysconf(_SC_NPROCESSORS_ONLN));
}

static long vm_rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static long write_text(const char *dir, const char *name, const char *text, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "bench_tiled: cannot write %s\n", path);
        exit(1);
    }
    return (long)len;
}

static void remove_files(const char *dir) {
    static const char *const names[] = {"tiles.tsx", "big.tmx", "s1.tmx"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- TMX with base64 + zlib data ------------------------------------------------------------ */

static char *base64(const unsigned char *in, size_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out) exit(1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* The map w x h (gids row-major from the top-left) as TMX naming tiles.tsx; the file's size. */
static long write_tmx(const char *dir, const char *name, const uint32_t *gids, int w, int h) {
    size_t raw_len = (size_t)w * (size_t)h * 4u;
    unsigned char *raw = malloc(raw_len);
    uLongf z_len = compressBound((uLong)raw_len);
    unsigned char *z = malloc(z_len);
    if (!raw || !z) exit(1);
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        for (int b = 0; b < 4; b++)
            raw[i * 4 + (size_t)b] = (unsigned char)(gids[i] >> (8 * b));
    if (compress2(z, &z_len, raw, (uLong)raw_len, Z_DEFAULT_COMPRESSION) != Z_OK) exit(1);
    char *data = base64(z, z_len);
    size_t cap = strlen(data) + 1024;
    char *text = malloc(cap);
    if (!text) exit(1);
    int len = snprintf(
        text, cap,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<map version=\"1.8\" tiledversion=\"1.8.2\" orientation=\"orthogonal\" "
        "renderorder=\"right-down\" width=\"%d\" height=\"%d\" tilewidth=\"%d\" tileheight=\"%d\" "
        "infinite=\"0\" nextlayerid=\"2\" nextobjectid=\"1\">\n"
        " <properties><property name=\"collide:unit\" type=\"float\" value=\"%d\"/></properties>\n"
        " <tileset firstgid=\"1\" source=\"tiles.tsx\"/>\n"
        " <layer id=\"1\" name=\"level\" width=\"%d\" height=\"%d\">\n"
        "  <data encoding=\"base64\" compression=\"zlib\">\n   %s\n  </data>\n </layer>\n</map>\n",
        w, h, TILE_PX, TILE_PX, TILE_PX, w, h, data);
    long size = write_text(dir, name, text, (size_t)len);
    free(text);
    free(data);
    free(z);
    free(raw);
    return size;
}

/* world_read_any + world_load_json, as collided --world does; NULL (with the reason on stderr) on
 * failure. notes may be NULL. */
static world *load_map(const char *path, const world_config *base, world_file_notes *notes,
                       double *read_ms, double *build_ms) {
    char err[512];
    world_spawn_points *sp = malloc(sizeof *sp);
    if (!sp) exit(1);
    double t0 = s1_now_ms();
    char *text = world_read_any(AT_FDCWD, path, false, base, notes, err, sizeof err);
    double t1 = s1_now_ms();
    world *w = text ? world_load_json(text, path, base, sp, err, sizeof err) : NULL;
    double t2 = s1_now_ms();
    if (!w) fprintf(stderr, "bench_tiled: %s\n", err);
    if (read_ms) *read_ms = t1 - t0;
    if (build_ms) *build_ms = t2 - t1;
    free(text);
    free(sp);
    return w;
}

/* ---- the generated level -------------------------------------------------------------------- */

typedef struct level {
    uint32_t *gids; /* BIG x BIG, row-major from the top */
    size_t target, collidable;
    s1_rng rng;
} level;

static void put(level *lv, int x, int y, uint32_t gid) {
    if (x < 0 || y < 0 || x >= BIG || y >= BIG || lv->collidable >= lv->target) return;
    uint32_t *c = &lv->gids[(size_t)y * BIG + (size_t)x];
    if (*c == 0) lv->collidable++;
    *c = gid;
}

static int rnd(level *lv, int lo, int hi) { /* lo..hi inclusive */
    return lo + (int)(s1_next(&lv->rng) % (uint32_t)(hi - lo + 1));
}

/* A ground-like run: 1..3 rows of solid tiles, slopes at both ends of its top row. */
static void put_run(level *lv) {
    int x = rnd(lv, 0, BIG - 1), y = rnd(lv, 1, BIG - 1), len = rnd(lv, 4, 48),
        rows = rnd(lv, 1, 3);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < len; i++)
            put(lv, x + i, y + r, GID_SOLID);
    put(lv, x - 1, y, GID_SLOPE);
    put(lv, x + len, y, GID_SLOPE | GID_FLIP_H);
}

/* A round blob of solid tiles (rocks, hills). */
static void put_blob(level *lv) {
    int cx = rnd(lv, 0, BIG - 1), cy = rnd(lv, 0, BIG - 1), r = rnd(lv, 2, 9);
    for (int y = -r; y <= r; y++)
        for (int x = -r; x <= r; x++)
            if (x * x + y * y <= r * r) put(lv, cx + x, cy + y, GID_SOLID);
}

/* Thin platforms (a box shape per tile) or a few concave L tiles. */
static void put_shapes(level *lv) {
    int x = rnd(lv, 0, BIG - 1), y = rnd(lv, 0, BIG - 1);
    if (s1_next(&lv->rng) & 1u) {
        int len = rnd(lv, 3, 12);
        for (int i = 0; i < len; i++)
            put(lv, x + i, y, GID_PLATFORM);
    } else {
        for (int i = 0; i < 4; i++)
            put(lv, x + rnd(lv, -3, 3), y + rnd(lv, -3, 3), GID_L);
    }
}

static void make_level(level *lv) {
    memset(lv, 0, sizeof *lv);
    lv->gids = calloc((size_t)BIG * BIG, sizeof *lv->gids);
    if (!lv->gids) exit(1);
    lv->rng.state = BIG_SEED;
    lv->target = (size_t)BIG * BIG / 5; /* 20% */
    while (lv->collidable < lv->target) {
        uint32_t pick = s1_next(&lv->rng) % 100u;
        if (pick < 45)
            put_run(lv);
        else if (pick < 85)
            put_blob(lv);
        else
            put_shapes(lv);
    }
}

static int run_load(const char *dir, int runs) {
    level lv;
    make_level(&lv);
    size_t shaped = 0;
    for (size_t i = 0; i < (size_t)BIG * BIG; i++)
        shaped += lv.gids[i] != 0 && (lv.gids[i] & ~GID_FLIP_H) != GID_SOLID;
    long tsx = write_text(dir, "tiles.tsx", tileset_tsx, strlen(tileset_tsx));
    long tmx = write_tmx(dir, "big.tmx", lv.gids, BIG, BIG);
    free(lv.gids);
    char path[512];
    snprintf(path, sizeof path, "%s/big.tmx", dir);
    world_config base;
    world_config_default(&base);
    /* collided's default --max-bodies (65,536) leaves room for 4,096 polygons (a sixteenth): this
     * map has more, as a big level with many shaped tiles would (collided --max-bodies 131072) */
    base.max_bodies = 1u << 17;
    world_file_notes *notes = calloc(1, sizeof *notes);
    double *total = calloc((size_t)runs, sizeof *total),
           *reads = calloc((size_t)runs, sizeof *reads);
    if (!notes || !total || !reads) exit(1);
    world_stats st = {0};
    long rss_delta = -1;
    for (int k = 0; k < runs; k++) {
        malloc_trim(0);
        long rss0 = vm_rss_kb();
        double build = 0;
        world *w = load_map(path, &base, notes, &reads[k], &build);
        if (!w) return 1;
        total[k] = reads[k] + build;
        if (k == 0) {
            malloc_trim(0); /* what the parse freed is not the world's */
            rss_delta = vm_rss_kb() - rss0;
            world_get_stats(w, &st);
        }
        world_destroy(w);
    }
    qsort(total, (size_t)runs, sizeof *total, s1_cmp_double);
    qsort(reads, (size_t)runs, sizeof *reads, s1_cmp_double);
    double ratio = (double)notes->tile_statics / (double)notes->tiles_collidable;
    printf("{\"bench\":\"tiled-load\",\"map\":\"%dx%d base64+zlib, external tileset\",\"runs\":%d,"
           "\"load_ms_median\":%.2f,\"load_ms_min\":%.2f,\"read_any_ms_median\":%.2f,"
           "\"collidable_tiles\":%zu,\"shape_tiles\":%zu,\"tile_statics\":%zu,"
           "\"statics_per_tile\":%.3f,\"target\":0.5,\"statics\":%zu,\"boxes\":%zu,"
           "\"polygons\":%zu,\"concave_split\":%zu,\"world_bytes\":%zu,\"rss_delta_kb\":%ld,"
           "\"tmx_bytes\":%ld,\"tsx_bytes\":%ld,\"warnings\":%zu}\n",
           BIG, BIG, runs, total[runs / 2], total[0], reads[runs / 2], notes->tiles_collidable,
           shaped, notes->tile_statics, ratio, st.static_bodies, notes->boxes, notes->polygons,
           notes->concave_split, st.bytes, rss_delta, tmx, tsx, notes->warnings);
    free(total);
    free(reads);
    free(notes);
    return ratio > 0.5;
}

/* ---- S1a-slow on the native map and on the same map from Tiled ------------------------------ */

/* The movers' final positions, bit for bit, in creation order. */
static uint64_t movers_digest(const s1_run *run) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_row row;
        world_body_get(run->s->w, run->s->movers[i], &row);
        uint32_t b[2];
        memcpy(&b[0], &row.position.x, 4);
        memcpy(&b[1], &row.position.y, 4);
        h = (h ^ b[0]) * 1099511628211ull;
        h = (h ^ b[1]) * 1099511628211ull;
    }
    return h;
}

static int run_s1(const char *dir, int ticks) {
    static s1_layout layout;
    s1_rng rng;
    if (s1_make_layout(&layout, &rng) != 0) return 1;
    uint32_t *gids = calloc((size_t)S1_MAP * S1_MAP, sizeof *gids);
    if (!gids) exit(1);
    for (int y = 0; y < S1_MAP; y++) /* the world's row y is Tiled's row S1_MAP - 1 - y */
        for (int x = 0; x < S1_MAP; x++)
            gids[(size_t)(S1_MAP - 1 - y) * S1_MAP + (size_t)x] =
                layout.solid[y * S1_MAP + x] ? GID_SOLID : 0u;
    write_text(dir, "tiles.tsx", tileset_tsx, strlen(tileset_tsx));
    write_tmx(dir, "s1.tmx", gids, S1_MAP, S1_MAP);
    free(gids);
    char path[512];
    snprintf(path, sizeof path, "%s/s1.tmx", dir);
    world_config base = s1_config(S1_STATICS + S1_MOVERS, S1_MOVERS);
    world *tw = load_map(path, &base, NULL, NULL, NULL);
    if (!tw) return 1;
    aabb b = world_get_config(tw)->bounds;
    if (b.min.x != 0 || b.min.y != 0 || b.max.x != S1_MAP || b.max.y != S1_MAP) {
        fprintf(stderr, "bench_tiled: the Tiled S1 map's bounds are not S1's\n");
        return 1;
    }
    world_stats st;
    world_get_stats(tw, &st);
    size_t tiled_statics = st.static_bodies;
    s1_run native, tiled;
    s1_run_start(&native, &layout, 5.0f, 0, ticks, false, 0.0);
    s1_run_start_on(&tiled, &layout, tw, 5.0f, 0, ticks, false, 0.0);
    s1_run_paired(&native, &tiled, 10);
    uint64_t dn = movers_digest(&native), dt = movers_digest(&tiled);
    s1_result rn = s1_run_finish(&native, &st), rt = s1_run_finish(&tiled, &st);
    printf("{\"scene\":\"S1a-slow\",\"map\":\"native\",\"ms_per_tick\":%.4f,\"statics\":%d,"
           "\"overlaps\":%d,\"outside\":%d,\"state_hash\":\"%016llx\"}\n",
           rn.median_ms, S1_STATICS, rn.overlaps, rn.outside, rn.state_hash);
    printf("{\"scene\":\"S1a-slow\",\"map\":\"tiled\",\"ms_per_tick\":%.4f,\"statics\":%zu,"
           "\"overlaps\":%d,\"outside\":%d,\"state_hash\":\"%016llx\"}\n",
           rt.median_ms, tiled_statics, rt.overlaps, rt.outside, rt.state_hash);
    printf("{\"scene\":\"S1a-slow\",\"ticks\":%d,\"tiled_vs_native\":%.3f,\"same_state_hash\":%s,"
           "\"same_mover_positions\":%s}\n",
           ticks, rt.median_ms / rn.median_ms, rn.state_hash == rt.state_hash ? "true" : "false",
           dn == dt ? "true" : "false");
    return rn.overlaps || rn.outside || rt.overlaps || rt.outside;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    bool load = !strcmp(mode, "load") || !strcmp(mode, "all"),
         s1 = !strcmp(mode, "s1") || !strcmp(mode, "all");
    if (!load && !s1) {
        fprintf(stderr, "usage: bench_tiled [load [RUNS] | s1 [TICKS] | all]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 0;
    const char *tmp = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/collide-bench-tiled-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *d = mkdtemp(dir);
    if (!d) {
        fprintf(stderr, "bench_tiled: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    print_machine();
    int bad = 0;
    if (load) bad |= run_load(d, n > 0 && !s1 ? n : 5);
    if (s1) bad |= run_s1(d, n > 0 && !load ? n : 600);
    remove_files(d);
    return bad;
}

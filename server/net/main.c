/* collided: the authoritative 2D collision daemon (ARCHITECTURE.md). Reads the configuration,
 * builds the world (a JSON file or the embedded arena) and runs the event loop until drained. */
#include <signal.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>

#include "net_config.h"
#include "net_daemon.h"
#include "net_log.h"
#include "net_server.h"
#include "world.h"
#include "world_load.h"

/* Each connection is a socket, so the limits are only honest if the process may open that many
 * files: welcomed clients (--max-clients), connections before Hello (--max-pending), refused ones
 * flushing their Error (NET_MAX_REFUSING) and HTTP connections (--http-max-connections), plus 64
 * for the listeners, the loop's internals, the world file and the one accepted over a cap before
 * it evicts. Raise the soft limit towards the hard one, and say so when even that is short. */
static void raise_fd_limit(const net_config *cfg) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    /* A burst may hold the pending set at NET_PENDING_HARD_FACTOR x --max-pending for the
     * eviction grace (net_server.h): those are descriptors too. */
    rlim_t want = (rlim_t)cfg->max_clients + (rlim_t)cfg->max_pending * NET_PENDING_HARD_FACTOR +
                  NET_MAX_REFUSING + (cfg->http_port ? cfg->http_max_connections : 0) + 64;
    /* A recording room holds its file open, and a rotating one two (net_record.h). */
    if (cfg->record_dir[0]) want += 2 * ((rlim_t)cfg->max_rooms + 1);
    if (rl.rlim_cur < want) {
        rlim_t before = rl.rlim_cur;
        rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want) ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = before;
    }
    if (rl.rlim_cur < want)
        net_log(NET_LOG_WARN, "fd_limit", 0, NULL,
                "open-file limit %llu is below the %llu sockets the limits allow (--max-clients %u "
                "+ %u x --max-pending %u + %d refusing + HTTP + 64); raise it (ulimit -n) or "
                "connections past it are refused by accept()",
                (unsigned long long)rl.rlim_cur, (unsigned long long)want, cfg->max_clients,
                NET_PENDING_HARD_FACTOR, cfg->max_pending, NET_MAX_REFUSING);
}

#define NET_LOG_FLUSH_TIMEOUT_MS 2000u /* at exit, for the log lines still in the buffer */
/* RFC 7518 3.2: an HS256 key must be at least as long as the hash (32 bytes). Shorter keys are
 * taken (a deployment may have one already), with a warning. */
#define NET_TICKET_KEY_MIN_BYTES 32u

/* Whether tickets are on, how many keys, and which are short: never a byte of a key. */
static void log_tickets(const net_config *cfg) {
    if (cfg->ticket_key_count == 0) return;
    net_log(NET_LOG_INFO, "tickets", 0, NULL, "keys=%u required=%d leeway_s=%u max_bytes=%u",
            cfg->ticket_key_count, (int)cfg->ticket_required, cfg->ticket_leeway_s,
            cfg->ticket_max_bytes);
    for (uint32_t k = 0; k < cfg->ticket_key_count; k++)
        if (cfg->ticket_key_lens[k] < NET_TICKET_KEY_MIN_BYTES)
            net_log(NET_LOG_WARN, "ticket_key_short", 0, NULL,
                    "ticket key %u is shorter than %u bytes (RFC 7518 3.2): use a longer random "
                    "key",
                    k + 1, NET_TICKET_KEY_MIN_BYTES);
}

/* A Tiled map's statics, where they came from, and each warning (skipped objects, properties
 * read but not applied yet) as its own line. */
static void log_world_notes(const char *name, const world_file_notes *n, size_t statics) {
    if (!n->tiled) return;
    net_log(NET_LOG_INFO, "world_tiled", 0, NULL,
            "%s: %zu statics (%zu boxes, %zu polygons, %zu circles); %zu from %zu collidable "
            "tiles; %zu concave polygons split; %zu warnings",
            name, statics, n->boxes, n->polygons, n->circles, n->tile_statics, n->tiles_collidable,
            n->concave_split, n->warnings);
    for (const char *line = n->text; *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        net_log(NET_LOG_WARN, "world_warning", 0, NULL, "%.*s", len, line);
        line += len + (end ? 1 : 0);
    }
}

/* --record-dir: a directory the daemon may write (made when missing, one level), or the start is
 * refused: a recording that could never be written is an operator's mistake, told at once. */
static bool check_record_dir(const net_config *cfg, char *err, size_t err_size) {
    const char *dir = cfg->record_dir;
    if (!dir[0]) return true;
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT && mkdir(dir, 0755) != 0) {
        snprintf(err, err_size, "--record-dir %.400s: cannot create it: %s", dir, strerror(errno));
        return false;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, err_size, "--record-dir %.400s: not a directory", dir);
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, err_size, "--record-dir %.400s: not writable: %s", dir, strerror(errno));
        return false;
    }
    net_log(NET_LOG_INFO, "recordings", 0, NULL,
            "dir=%s rooms=%s hash_every=%u max_bytes=%zu keep=%u buffer_bytes=%zu http=%s", dir,
            cfg->record_rooms ? "all" : "none", cfg->record_hash_every, cfg->record_max_bytes,
            cfg->record_keep, cfg->record_buffer_bytes, cfg->record_http ? "on" : "off");
    return true;
}

/* --check-world FILE: what an operator runs before deploying a map (docs/operations.md). */
static int check_world(const net_config *cfg) {
    char err[512];
    world_file_notes notes;
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = cfg->max_bodies;
    char *text = world_read_any(AT_FDCWD, cfg->check_world, false, &wc, &notes, err, sizeof err);
    world_spawn_points *sp = calloc(1, sizeof *sp);
    world *w =
        text && sp ? world_load_json(text, cfg->check_world, &wc, sp, err, sizeof err) : NULL;
    if (text && !w) world_notes_explain(&notes, err, sizeof err);
    free(text);
    if (!w) {
        fprintf(stderr, "%s\n", sp ? err : "out of memory");
        free(sp);
        return 1;
    }
    world_stats ws;
    world_get_stats(w, &ws);
    aabb b = world_get_config(w)->bounds;
    world_body_id *ids = malloc((ws.static_bodies + 1) * sizeof *ids);
    size_t n = ids ? world_query_aabb(w, b, 1u << WORLD_BODY_STATIC, ids, ws.static_bodies + 1) : 0;
    size_t kinds[4] = {0, 0, 0, 0}; /* by geom_shape_kind (1..3) */
    for (size_t i = 0; i < n; i++) {
        geom_shape s;
        if (world_body_shape(w, ids[i], &s) && (unsigned)s.kind < 4u) kinds[s.kind]++;
    }
    printf("%s: %s world\n", cfg->check_world, notes.tiled ? "Tiled" : "native");
    printf("bounds: [%g, %g] - [%g, %g]\n", (double)b.min.x, (double)b.min.y, (double)b.max.x,
           (double)b.max.y);
    printf("statics: %zu (boxes %zu, polygons %zu, circles %zu)\n", ws.static_bodies,
           kinds[GEOM_SHAPE_BOX], kinds[GEOM_SHAPE_POLYGON], kinds[GEOM_SHAPE_CIRCLE]);
    if (notes.tiled)
        printf("from tiles: %zu statics for %zu collidable tiles; concave polygons split: %zu\n",
               notes.tile_statics, notes.tiles_collidable, notes.concave_split);
    printf("spawn points: %zu\n", sp->count);
    vec2 g = world_get_config(w)->gravity;
    if (g.x != 0.0f || g.y != 0.0f)
        printf("gravity: (%g, %g)\n", (double)g.x, (double)g.y);
    else
        printf("gravity: none\n");
    printf("warnings: %zu\n%s", notes.warnings, notes.text);
    free(ids);
    world_destroy(w);
    free(sp);
    return 0;
}

int main(int argc, char **argv) {
    net_config cfg;
    net_config_default(&cfg);
    char err[512];
    net_config_result r = net_config_parse(&cfg, argc, argv, err, sizeof err, stdout);
    if (r == NET_CONFIG_EXIT_OK) return 0;
    if (r == NET_CONFIG_ERROR) {
        net_config_wipe(&cfg);
        fprintf(stderr, "collided: %s\n", err);
        return 2;
    }
    if (cfg.check_world[0]) {
        int rc = check_world(&cfg);
        net_config_wipe(&cfg);
        return rc;
    }
    /* Read: the secrets need not stay in the command line and the environment, where ps and
     * /proc show them to anyone on the host. */
    net_config_hide_secrets(argc, argv);
    net_log_set_level(cfg.log_level);
    /* From here on a stalled reader of stderr costs log lines, never ticks (issue 12). */
    if (!net_log_start(cfg.log_buffer_bytes))
        net_log(NET_LOG_WARN, "log_sync", 0, NULL,
                "no log writer thread: stderr is written from the event loop");
    log_tickets(&cfg);
    if (!check_record_dir(&cfg, err, sizeof err)) {
        net_config_wipe(&cfg);
        net_log(NET_LOG_ERROR, "record_dir_error", 0, NULL, "%s", err);
        net_log_stop(NET_LOG_FLUSH_TIMEOUT_MS);
        fprintf(stderr, "collided: %s\n", err);
        return 1;
    }
    /* A peer that resets mid-write must cost an EPIPE, not the process. */
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit(&cfg);

    world_config wc;
    world_config_default(&wc);
    wc.tick_rate_hz = cfg.tick_rate_hz;
    wc.max_speed = cfg.max_speed;
    wc.max_angular_speed = cfg.max_angular_speed;
    wc.max_bodies = cfg.max_bodies;
    /* The default world as text: every room built from it (`default`, auto rooms) is built on
     * its own thread (docs/rooms-design.md). It is loaded once here to refuse a bad file at
     * start, with the file's own error. */
    const char *world_name = cfg.world_path[0] ? cfg.world_path : "<embedded arena>";
    world_file_notes notes;
    memset(&notes, 0, sizeof notes);
    char *text = cfg.world_path[0]
                     ? world_read_any(AT_FDCWD, cfg.world_path, false, &wc, &notes, err, sizeof err)
                     : strdup(world_default_arena_json);
    world_spawn_points spawn_points;
    world *w = text ? world_load_json(text, world_name, &wc, &spawn_points, err, sizeof err) : NULL;
    if (text && !w) world_notes_explain(&notes, err, sizeof err);
    if (!text && !cfg.world_path[0]) snprintf(err, sizeof err, "out of memory");
    if (!w) {
        free(text);
        net_config_wipe(&cfg);
        net_log(NET_LOG_ERROR, "world_error", 0, NULL, "%s", err);
        net_log_stop(NET_LOG_FLUSH_TIMEOUT_MS);
        fprintf(stderr, "collided: %s\n", err);
        return 1;
    }
    world_stats ws;
    world_get_stats(w, &ws);
    world_destroy(w);
    log_world_notes(world_name, &notes, ws.static_bodies);
    int rc = net_daemon_run(&cfg, text, strlen(text), ws.static_bodies);
    net_config_wipe(&cfg);
    net_log(NET_LOG_INFO, "exit", 0, NULL, "exit code %d", rc);
    /* Bounded: a reader that never comes back must not keep a drained daemon from exiting (and
     * nothing is written after a timeout: that write would block too). */
    net_log_stop(NET_LOG_FLUSH_TIMEOUT_MS);
    return rc;
}

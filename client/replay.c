/* collide-client replay: runs a recorded journal (PROTOCOL.md "Recordings", docs/recording.md)
 * through the world code and checks every stored state hash; prints the bodies at a tick.
 *
 * Exit codes: 0 every stored hash matched up to where it stopped (a cut journal replays to its
 * last whole tick and says so on stderr); 1 a hash mismatched, the world answered a recorded call
 * otherwise than it did live, or a record is malformed (the message names the tick); 2 bad usage
 * or a file that is not a journal this build reads (another format version, a cut header). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "journal.h"
#include "replay.h"

#define CMD "replay"

typedef struct replay_args {
    const char *file;
    bool verify;      /* --verify: the summary line alone */
    bool dump;        /* --dump: the bodies at the tick */
    bool has_to_tick; /* --to-tick given */
    uint64_t to_tick;
    double speed; /* --speed: times real time (0: as fast as it goes) */
} replay_args;

static void replay_usage(FILE *f) {
    fprintf(f, "usage: collide-client replay FILE [--verify] [--to-tick T [--dump]] [--speed X]\n"
               "Runs a journal written by collided --record-dir through the world code, checking\n"
               "every stored state hash (exit 1 at the first mismatch, naming the tick).\n\n"
               "  --verify        print only the summary line (exit 0: every hash matched)\n"
               "  --to-tick T     stop at tick T (default: the journal's last whole tick)\n"
               "  --dump          print every body at the tick it stopped at\n"
               "  --speed X       replay at X times real time (default: as fast as it goes)\n"
               "  -h, --help      this text\n");
}

static int parse_args(int argc, char **argv, replay_args *a) {
    static const struct option opts[] = {{"verify", 0, NULL, 'v'},  {"dump", 0, NULL, 'd'},
                                         {"to-tick", 1, NULL, 't'}, {"speed", 1, NULL, 's'},
                                         {"help", 0, NULL, 'h'},    {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'v':
            a->verify = true;
            break;
        case 'd':
            a->dump = true;
            break;
        case 't':
            errno = 0;
            a->to_tick = strtoull(optarg, &end, 10);
            if (errno || !end || *end || optarg[0] == '-') {
                fprintf(stderr, "collide-client " CMD ": --to-tick wants a tick number\n");
                return CC_EXIT_USAGE;
            }
            a->has_to_tick = true;
            break;
        case 's':
            a->speed = strtod(optarg, &end);
            if (!end || *end || !(a->speed > 0.0 && a->speed <= 1e6)) {
                fprintf(stderr, "collide-client " CMD ": --speed wants a number in (0, 1e6]\n");
                return CC_EXIT_USAGE;
            }
            break;
        case 'h':
            replay_usage(stdout);
            return -1;
        default:
            replay_usage(stderr);
            return CC_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        replay_usage(stderr);
        return CC_EXIT_USAGE;
    }
    if (a->dump && a->verify) {
        fprintf(stderr, "collide-client " CMD ": --dump and --verify do not go together\n");
        return CC_EXIT_USAGE;
    }
    a->file = argv[optind];
    return CC_EXIT_OK;
}

/* The whole file, malloc'd. */
static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1u << 20;
            uint8_t *d = realloc(data, cap);
            if (!d) {
                free(data);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            data = d;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return data;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *kind_name(uint8_t kind) {
    return kind == WORLD_BODY_STATIC ? "static" : "moving";
}

/* Every body, in id order, with the floats exact (%.9g round-trips a float). */
static void dump_bodies(world *w) {
    printf("tick %" PRIu64 " hash %016" PRIx64 "\n", world_tick(w), world_state_hash(w));
    world_body_id *ids = NULL;
    size_t count = 0, cap = 0;
    aabb all = world_get_config(w)->bounds;
    for (;;) {
        size_t got = world_query_aabb(w, all, 0, ids, cap);
        if (got <= cap) {
            count = got;
            break;
        }
        cap = got;
        free(ids);
        ids = malloc(cap * sizeof *ids);
        if (!ids) return;
    }
    for (size_t i = 0; i < count; i++) {
        world_body_row b;
        if (!world_body_get(w, ids[i], &b)) continue;
        printf("body %" PRIu32 " %s owner %" PRIu32 " x %.9g y %.9g angle %.9g vx %.9g vy %.9g "
               "seq %" PRIu32 "\n",
               b.id, kind_name(b.kind), b.owner, (double)b.position.x, (double)b.position.y,
               (double)b.angle, (double)b.velocity.x, (double)b.velocity.y, b.last_input_seq);
    }
    free(ids);
}

/* Replays to `target`, paced to `speed` x real time when asked. */
static journal_result run(journal_replay *r, uint64_t target, double speed) {
    world *w = journal_replay_world(r);
    if (speed <= 0.0) return journal_replay_to(r, target);
    double dt = 1.0 / (double)world_get_config(w)->tick_rate_hz / speed, start = now_s();
    uint64_t first = world_tick(w);
    journal_result res = JOURNAL_OK;
    while (world_tick(w) < target && res == JOURNAL_OK) {
        res = journal_replay_to(r, world_tick(w) + 1);
        double due = start + (double)(world_tick(w) - first) * dt, wait = due - now_s();
        if (wait > 0) {
            struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    return res;
}

int cc_replay_main(int argc, char **argv) {
    replay_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) return CC_EXIT_OK;
    if (rc) return rc;
    size_t len = 0;
    uint8_t *data = read_file(a.file, &len);
    if (!data) {
        fprintf(stderr, "collide-client " CMD ": %s: %s\n", a.file, strerror(errno));
        return CC_EXIT_USAGE;
    }
    char err[256];
    journal_replay *r = journal_replay_open(data, len, err, sizeof err);
    if (!r) {
        fprintf(stderr, "collide-client " CMD ": %s: %s\n", a.file, err);
        free(data);
        return CC_EXIT_USAGE;
    }
    const journal_header *h = journal_replay_header(r);
    uint64_t last = journal_replay_last_tick(r), target = a.has_to_tick ? a.to_tick : last;
    if (target > last) {
        fprintf(stderr,
                "collide-client " CMD ": tick %" PRIu64 " is past the journal's last "
                "whole tick %" PRIu64 "\n",
                target, last);
        target = last;
    }
    double t0 = now_s();
    journal_result res = run(r, target, a.speed);
    double secs = now_s() - t0;
    world *w = journal_replay_world(r);
    journal_replay_stats st;
    journal_replay_get_stats(r, &st);
    rc = CC_EXIT_OK;
    if (res != JOURNAL_OK && res != JOURNAL_END) {
        fprintf(stderr, "collide-client " CMD ": %s: %s\n", a.file,
                journal_replay_error(r)[0] ? journal_replay_error(r) : "a malformed record");
        rc = CC_EXIT_FAIL;
    } else if (journal_replay_truncated(r) && world_tick(w) == last) {
        fprintf(stderr, "collide-client " CMD ": %s: %s; replayed to its last whole tick\n", a.file,
                journal_replay_truncated(r));
    }
    if (a.dump && rc == CC_EXIT_OK) dump_bodies(w);
    uint64_t ticks = world_tick(w) - h->start_tick;
    double real = (double)ticks / (double)world_get_config(w)->tick_rate_hz;
    printf("%s: room %s, ticks %" PRIu64 "..%" PRIu64 " (%" PRIu64 " replayed), %" PRIu64
           " hashes checked, %" PRIu64 " intents, %.3f s (%.0fx real time): %s\n",
           a.file, h->room[0] ? h->room : "-", h->start_tick, world_tick(w), ticks,
           st.hashes_checked, st.intents, secs, secs > 0 ? real / secs : 0.0,
           rc == CC_EXIT_OK ? "ok" : "FAILED");
    journal_replay_free(r);
    free(data);
    return rc;
}

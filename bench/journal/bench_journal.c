/* bench_journal: what recording costs the tick at L1, how many bytes an applied intent takes, and
 * how fast a journal replays (PERFORMANCE.md "recording at L1": <= 3% of the tick time, <= 12
 * bytes per applied intent, replay >= 50x real time).
 *
 * The world side of L1, as bench_world's arena: the daemon's default arena, 1,000 players each
 * owning a 1x1 box and sending an intent 30 times a second into the 60 Hz tick (half of them each
 * tick), each intent a new random heading and speed (collide-client load's walk) with the next
 * input_seq. Two copies of the run in one process, one through the journal (the calls, the step
 * and the take of the tick's bytes, all the tick thread pays; the disk write is the thread
 * pool's) and one through the plain world calls, timed in alternating blocks of ticks so both see
 * the same machine. The tick time compared is the world's (inputs + step): the daemon's tick also
 * builds snapshots, so the share of its whole tick is smaller than the ratio printed here.
 *
 * Usage: bench_journal [ticks (default 3600)] [players (default 1000)] [plain|recorded]
 * Prints one JSON line. With plain or recorded only that run's ticks are run (the other stands
 * still), for an instruction count of each alone:
 *   valgrind --tool=callgrind --toggle-collect=ticks bench_journal 600 1000 recorded */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_time.h"
#include "collide_rng.h"
#include "journal.h"
#include "world_load.h"

#define BLOCK 60 /* ticks per timed block */

typedef struct run {
    world *w;
    journal *j; /* NULL: the plain calls */
    world_body_id *ids;
    uint32_t *seq;
    collide_rng rng;
    double ns; /* tick time summed */
    uint8_t *file;
    size_t file_len, file_cap;
} run;

static world *arena(void) {
    world_config cfg;
    world_config_default(&cfg);
    char err[256];
    world *w = world_load_json(world_default_arena_json, "arena", &cfg, NULL, err, sizeof err);
    if (!w) fprintf(stderr, "%s\n", err);
    return w;
}

static int setup(run *r, int players, bool record) {
    memset(r, 0, sizeof *r);
    r->w = arena();
    r->ids = calloc((size_t)players, sizeof *r->ids);
    r->seq = calloc((size_t)players, sizeof *r->seq);
    r->rng.state = 777u;
    geom_shape box;
    if (!r->w || !r->ids || !r->seq || geom_make_box(v2(0.5f, 0.5f), &box)) return 1;
    world_body_id probe[1];
    for (int i = 0; i < players;) {
        vec2 p = v2(collide_rng_range(&r->rng, -490.0f, 490.0f),
                    collide_rng_range(&r->rng, -490.0f, 490.0f));
        if (world_query_aabb(r->w,
                             aabb_make(v2(p.x - 0.6f, p.y - 0.6f), v2(p.x + 0.6f, p.y + 0.6f)), 0,
                             probe, 1))
            continue;
        if (world_spawn(r->w, WORLD_BODY_MOVING, &box, p, (uint32_t)i + 1, &r->ids[i], NULL))
            return 1;
        i++;
    }
    world_step(r->w);
    if (record) {
        journal_meta meta = {.hash_every = 60, .room = "L1", .world_name = "arena"};
        r->j = journal_start(r->w, &meta, 16u << 20);
        if (!r->j) return 1;
    }
    return 0;
}

/* Keeps the taken bytes (for the replay below), as the daemon hands them to its write. */
static void keep(run *r, journal_buf b) {
    if (r->file_len + b.len > r->file_cap) {
        r->file_cap = (r->file_len + b.len) * 2;
        r->file = realloc(r->file, r->file_cap);
        if (!r->file) abort();
    }
    memcpy(r->file + r->file_len, b.data, b.len);
    r->file_len += b.len;
}

__attribute__((noinline)) static void ticks(run *r, int players, int n) {
    for (int k = 0; k < n; k++) {
        uint64_t tick = world_tick(r->w);
        /* the inputs drawn before the clock starts: they are the clients', not the tick's */
        static float vx[100000], vy[100000];
        for (int i = (int)(tick & 1); i < players; i += 2) {
            float a = collide_rng_range(&r->rng, 0.0f, 6.2831853f);
            float v = collide_rng_range(&r->rng, 0.0f, 20.0f);
            vx[i] = v * cosf(a);
            vy[i] = v * sinf(a);
        }
        double t0 = bench_cpu_ns();
        for (int i = (int)(tick & 1); i < players; i += 2)
            journal_intent(r->j, r->w, (uint32_t)i + 1, r->ids[i], v2(vx[i], vy[i]), 0.0f,
                           ++r->seq[i], false);
        journal_step(r->j, r->w);
        journal_buf b = {0};
        if (r->j) b = journal_take(r->j);
        r->ns += bench_cpu_ns() - t0;
        if (r->j) {
            keep(r, b);
            journal_recycle(r->j, b);
        }
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3600, players = argc > 2 ? atoi(argv[2]) : 1000;
    const char *only = argc > 3 ? argv[3] : "";
    if (n < BLOCK || players < 1 || players > 100000) return 2;
    static run plain, rec;
    if (setup(&plain, players, false) || setup(&rec, players, true)) return 1;
    size_t header = journal_pending(rec.j);
    for (int done = 0; done < n; done += BLOCK) {
        if (strcmp(only, "recorded")) ticks(&plain, players, BLOCK);
        if (strcmp(only, "plain")) ticks(&rec, players, BLOCK);
    }
    if (only[0]) {
        printf("{\"only\":\"%s\",\"ms_per_tick\":%.4f}\n", only,
               (only[0] == 'p' ? plain.ns : rec.ns) / n * 1e-6);
        return 0;
    }
    journal_finish(rec.j);
    journal_buf b = journal_take(rec.j);
    keep(&rec, b);
    journal_recycle(rec.j, b);
    journal_stats st;
    journal_get_stats(rec.j, &st);
    if (world_state_hash(plain.w) != world_state_hash(rec.w)) {
        fprintf(stderr, "the recorded run stepped to other bits than the plain one\n");
        return 1;
    }
    /* the replay, from the bytes in memory, every hash checked */
    char err[256];
    double t0 = bench_cpu_ns();
    journal_replay *r = journal_replay_open(rec.file, rec.file_len, err, sizeof err);
    journal_result res = r ? journal_replay_to(r, UINT64_MAX) : JOURNAL_CORRUPT;
    double replay_ns = bench_cpu_ns() - t0;
    if (!r || res != JOURNAL_END || journal_replay_truncated(r)) {
        fprintf(stderr, "replay failed: %s\n", r ? journal_replay_error(r) : err);
        return 1;
    }
    journal_replay_stats rs;
    journal_replay_get_stats(r, &rs);
    double real_s = n / 60.0;
    printf("{\"players\":%d,\"ticks\":%d,\"plain_ms_per_tick\":%.4f,\"recorded_ms_per_tick\":%.4f,"
           "\"overhead\":%.4f,\"intents\":%llu,\"intent_bytes_per_intent\":%.3f,"
           "\"stream_bytes_per_intent\":%.3f,\"header_bytes\":%zu,\"file_bytes\":%zu,"
           "\"hashes_checked\":%llu,\"replay_s\":%.3f,\"replay_x_real_time\":%.1f}\n",
           players, n, plain.ns / n * 1e-6, rec.ns / n * 1e-6, rec.ns / plain.ns - 1.0,
           (unsigned long long)st.intents, (double)st.intent_bytes / (double)st.intents,
           (double)(rec.file_len - header) / (double)st.intents, header, rec.file_len,
           (unsigned long long)rs.hashes_checked, replay_ns * 1e-9, real_s / (replay_ns * 1e-9));
    journal_replay_free(r);
    journal_free(rec.j);
    world_destroy(plain.w);
    world_destroy(rec.w);
    free(plain.ids);
    free(plain.seq);
    free(rec.ids);
    free(rec.seq);
    free(rec.file);
    return 0;
}

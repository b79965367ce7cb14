/* bench_rooms: rooms across worker threads, in process and without sockets (PERFORMANCE.md
 * "rooms: 8 rooms x 500 players, --threads 2 vs --threads 1"). Each room is bench_net's L1 scene
 * (bench_scene.h): its own world loaded from the default arena, its own net_server and P clients
 * random-walking one box each, intents at 30 Hz through net_client_feed, every tick a world_step
 * and every client's Snapshot, output buffers emptied as if written. Rooms go round-robin to T
 * threads; a thread builds its rooms, ticks only them and destroys them, as the daemon's workers
 * do (docs/rooms-design.md): no room is touched by two threads, and each room's random stream is
 * its own (seeded by its index), so the rooms' output does not depend on T.
 *
 * A run: every thread builds its rooms and warms them up (60 ticks), then all start together and
 * tick each of their rooms N times as fast as they can, room after room, tick after tick. Figures:
 * room-ticks per second of wall time (rooms x N / the time from the start until the last thread is
 * done) and the time of each room's tick (p50, p99, min over every room and tick).
 *
 * Usage: bench_rooms [--rooms R (8)] [--players P (500)] [--threads T (1)] [--ticks N (300)]
 *                    [--runs K (5)] [--compare]
 * One JSON line per thread count with the medians of K runs. --compare runs T = 1 and T = the
 * --threads value (2 if not given) in pairs, alternating which goes first, so both see the same
 * machine, and adds a line with the median of the K same-pair ratios of ticks per second. Exits 1
 * if the rooms' output (snapshot bytes) differs between runs: it must not depend on the threads.
 * "cpu_per_wall" is the threads' CPU time over their wall time: below 1, they waited for a core. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_scene.h"
#include "net_log.h"

#define ROOMS_WARMUP 60

typedef struct rooms_run rooms_run;

typedef struct rooms_worker {
    rooms_run *run;
    int index;
    pthread_t thread;
    /* Written by the worker, read by main after the join. */
    double *tick_ms; /* [room of this worker][tick] */
    int nrooms;
    uint64_t bytes, known;
    double cpu_ms; /* the worker's CPU time over the timed ticks */
    bool ok;
} rooms_worker;

struct rooms_run {
    int rooms, players, threads, ticks;
    pthread_barrier_t ready; /* every room built and warmed up */
    pthread_barrier_t done;  /* every thread finished its timed ticks */
    rooms_worker *workers;
};

typedef struct rooms_result {
    double wall_ms, ticks_per_s, tick_p50_ms, tick_p99_ms, tick_min_ms, cpu_per_wall;
    uint64_t bytes, known;
    bool ok;
} rooms_result;

static double thread_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Each room's own fixed seed; room 0 gets bench_net's (12345). */
static uint32_t room_seed(int room) { return 12345u + (uint32_t)room * 2654435761u; }

static void *worker_main(void *arg) {
    rooms_worker *wk = arg;
    rooms_run *run = wk->run;
    int own = 0;
    for (int r = wk->index; r < run->rooms; r += run->threads)
        own++;
    /* Everything the rooms use is allocated here, on their thread. */
    bench_scene *scenes = calloc((size_t)(own ? own : 1), sizeof *scenes);
    wk->tick_ms = calloc((size_t)(own ? own : 1) * (size_t)run->ticks, sizeof *wk->tick_ms);
    wk->ok = scenes && wk->tick_ms;
    int built = 0;
    char err[256];
    for (int r = wk->index; wk->ok && r < run->rooms; r += run->threads) {
        if (!bench_scene_init(&scenes[built], run->players, 0.0f, room_seed(r), err, sizeof err)) {
            fprintf(stderr, "room %d: %s\n", r, err);
            wk->ok = false;
            break;
        }
        built++;
    }
    for (int t = -ROOMS_WARMUP; wk->ok && t < 0; t++)
        for (int k = 0; k < built; k++)
            bench_scene_tick(&scenes[k], t, NULL, NULL);
    /* A thread that failed still meets the barriers, so the others are not left waiting. */
    pthread_barrier_wait(&run->ready);
    uint64_t bytes = 0, known = 0;
    double cpu0 = thread_cpu_ms();
    for (int t = 0; wk->ok && t < run->ticks; t++) {
        for (int k = 0; k < built; k++) {
            double t0 = bench_now_ms();
            bench_scene_tick(&scenes[k], t, &bytes, &known);
            wk->tick_ms[(size_t)k * (size_t)run->ticks + (size_t)t] = bench_now_ms() - t0;
        }
    }
    wk->cpu_ms = thread_cpu_ms() - cpu0;
    pthread_barrier_wait(&run->done);
    wk->bytes = bytes;
    wk->known = known;
    wk->nrooms = built;
    for (int k = 0; k < built; k++)
        bench_scene_destroy(&scenes[k]);
    free(scenes);
    return NULL;
}

static rooms_result rooms_run_once(int rooms, int players, int threads, int ticks) {
    rooms_result res = {0};
    rooms_run run = {.rooms = rooms, .players = players, .threads = threads, .ticks = ticks};
    run.workers = calloc((size_t)threads, sizeof *run.workers);
    if (!run.workers) return res;
    pthread_barrier_init(&run.ready, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&run.done, NULL, (unsigned)threads + 1);
    int started = 0;
    for (int i = 0; i < threads; i++) {
        run.workers[i].run = &run;
        run.workers[i].index = i;
        if (pthread_create(&run.workers[i].thread, NULL, worker_main, &run.workers[i]) != 0) break;
        started++;
    }
    if (started < threads) { /* the barriers would never open: nothing to do but stop */
        fprintf(stderr, "bench_rooms: could not start %d threads\n", threads);
        exit(1);
    }
    pthread_barrier_wait(&run.ready);
    double t0 = bench_now_ms();
    pthread_barrier_wait(&run.done);
    res.wall_ms = bench_now_ms() - t0;
    res.ok = true;
    size_t nsamples = (size_t)rooms * (size_t)ticks, at = 0;
    double *all = calloc(nsamples, sizeof *all);
    double cpu_ms = 0;
    for (int i = 0; i < threads; i++) {
        rooms_worker *wk = &run.workers[i];
        pthread_join(wk->thread, NULL);
        res.ok = res.ok && wk->ok;
        res.bytes += wk->bytes;
        res.known += wk->known;
        cpu_ms += wk->cpu_ms;
        size_t n = (size_t)wk->nrooms * (size_t)ticks;
        if (all && wk->tick_ms && at + n <= nsamples)
            memcpy(all + at, wk->tick_ms, n * sizeof *all);
        at += n;
        free(wk->tick_ms);
    }
    res.ok = res.ok && all && at == nsamples;
    if (res.ok) {
        res.ticks_per_s = (double)nsamples / (res.wall_ms / 1e3);
        res.tick_p50_ms = bench_pct(all, (int)nsamples, 0.5);
        res.tick_p99_ms = bench_pct(all, (int)nsamples, 0.99);
        res.tick_min_ms = all[0]; /* sorted by bench_pct */
        /* 1.0: every thread had a core for the whole run; less: it waited for one. */
        res.cpu_per_wall = cpu_ms / (res.wall_ms * threads);
    }
    free(all);
    pthread_barrier_destroy(&run.ready);
    pthread_barrier_destroy(&run.done);
    free(run.workers);
    return res;
}

static double median_of(const rooms_result *r, int n, size_t offset) {
    double v[64];
    for (int i = 0; i < n; i++)
        v[i] = *(const double *)((const char *)&r[i] + offset);
    return bench_pct(v, n, 0.5);
}

static void print_line(int rooms, int players, int threads, int ticks, const rooms_result *r,
                       int runs) {
    double min = r[0].tick_min_ms;
    for (int i = 1; i < runs; i++)
        if (r[i].tick_min_ms < min) min = r[i].tick_min_ms;
    double frames = (double)rooms * (double)players * (double)ticks;
    printf("{\"scene\":\"rooms-%dx%d-t%d\",\"rooms\":%d,\"players\":%d,\"threads\":%d,"
           "\"ticks\":%d,\"runs\":%d,\"ticks_per_s\":%.1f,\"wall_ms\":%.1f,\"median_ms\":%.3f,"
           "\"min_ms\":%.3f,\"tick_p99_ms\":%.3f,\"cpu_per_wall\":%.2f,"
           "\"bodies_in_view_avg\":%.1f,\"snapshot_bytes_avg\":%.1f,\"ticks_per_s_runs\":[",
           rooms, players, threads, rooms, players, threads, ticks, runs,
           median_of(r, runs, offsetof(rooms_result, ticks_per_s)),
           median_of(r, runs, offsetof(rooms_result, wall_ms)),
           median_of(r, runs, offsetof(rooms_result, tick_p50_ms)), min,
           median_of(r, runs, offsetof(rooms_result, tick_p99_ms)),
           median_of(r, runs, offsetof(rooms_result, cpu_per_wall)), (double)r[0].known / frames,
           (double)r[0].bytes / frames);
    for (int i = 0; i < runs; i++)
        printf("%s%.1f", i ? "," : "", r[i].ticks_per_s);
    printf("]}\n");
}

static int usage(void) {
    fprintf(stderr, "usage: bench_rooms [--rooms R] [--players P] [--threads T] [--ticks N] "
                    "[--runs K (1..64)] [--compare]\n");
    return 2;
}

int main(int argc, char **argv) {
    int rooms = 8, players = 500, threads = 0, ticks = 300, runs = 5;
    bool compare = false;
    for (int i = 1; i < argc; i++) {
        int *into = NULL;
        if (strcmp(argv[i], "--compare") == 0)
            compare = true;
        else if (strcmp(argv[i], "--rooms") == 0)
            into = &rooms;
        else if (strcmp(argv[i], "--players") == 0)
            into = &players;
        else if (strcmp(argv[i], "--threads") == 0)
            into = &threads;
        else if (strcmp(argv[i], "--ticks") == 0)
            into = &ticks;
        else if (strcmp(argv[i], "--runs") == 0)
            into = &runs;
        else
            return usage();
        if (into) {
            if (++i >= argc) return usage();
            *into = atoi(argv[i]);
        }
    }
    if (threads == 0) threads = compare ? 2 : 1;
    if (rooms < 1 || players < 1 || threads < 1 || ticks < 1 || runs < 1 || runs > 64)
        return usage();
    net_log_set_level(NET_LOG_ERROR); /* process-wide: set before any thread starts */
    rooms_result one[64], many[64];
    for (int k = 0; k < runs; k++) {
        /* Pairs alternate which goes first, so a drift in the machine's load favours neither. */
        if (compare && k % 2 == 0) one[k] = rooms_run_once(rooms, players, 1, ticks);
        many[k] = rooms_run_once(rooms, players, threads, ticks);
        if (compare && k % 2 == 1) one[k] = rooms_run_once(rooms, players, 1, ticks);
        if ((compare && !one[k].ok) || !many[k].ok) return 1;
    }
    /* The rooms' output must not depend on the threads or the run. */
    for (int k = 0; k < runs; k++) {
        if (many[k].bytes != many[0].bytes || (compare && one[k].bytes != many[0].bytes)) {
            fprintf(stderr, "bench_rooms: snapshot bytes differ between runs (%llu vs %llu)\n",
                    (unsigned long long)(compare ? one[k].bytes : many[k].bytes),
                    (unsigned long long)many[0].bytes);
            return 1;
        }
    }
    if (compare) print_line(rooms, players, 1, ticks, one, runs);
    print_line(rooms, players, threads, ticks, many, runs);
    if (compare) {
        double ratio[64];
        for (int k = 0; k < runs; k++)
            ratio[k] = many[k].ticks_per_s / one[k].ticks_per_s;
        printf("{\"scene\":\"rooms-%dx%d-t%d-vs-t1\",\"runs\":%d,\"ratios\":[", rooms, players,
               threads, runs);
        for (int k = 0; k < runs; k++)
            printf("%s%.2f", k ? "," : "", ratio[k]);
        printf("],\"ratio\":%.2f}\n", bench_pct(ratio, runs, 0.5));
    }
    return 0;
}

/* bench_net: the daemon's tick with N simulated clients, in process and without sockets (load L1
 * of PERFORMANCE.md minus the kernel): each client owns one moving box in the default arena and
 * sends a random-walk MoveIntent 30 times a second through the real decode path
 * (net_client_feed); each 60 Hz tick steps the world and builds every client's Snapshot. The
 * output buffers are emptied as if written. One JSON line per run.
 *
 * Usage: bench_net [--quantized | --udp] [--rate HZ] [--record] [clients (default 1000)]
 * [timed_ticks (default 600)] [view_radius (default: the daemon's, 80)]. L2 has 5x L1's density in
 * the same arena: "the same ~30 bodies in view" takes a radius of 80 / sqrt(5) ~ 36
 * (docs/perf/net.md). --quantized and
 * --rate: every client's Hello asks for them (issue 17); the report then also gives the records
 * (bodies changed) per snapshot and the bytes per record, and the writer's copy counters.
 * --udp (issue 30): every client is a datagram client instead, fed through the udp transport's
 * socket-free side (net_udp.h, the entry a room thread's relay uses: one packet per message, on
 * its channel) and acknowledging each snapshot it gets (SnapshotAck, as a real client does, fed
 * after the timed part of the tick): its snapshots are quantized deltas against its last
 * acknowledged baseline, within --udp-snapshot-bytes. The same figures as --quantized (per-snapshot
 * cost, snapshot_bytes_avg, bytes_per_record), with "udp":true and the share of full snapshots
 * (full_snapshot_share), so a --quantized run beside it gives the cost of baselines and budget.
 *
 * --record (issue 36): the room records, as --record-dir makes it: its server's journal begun
 * after the warm-up's first step, every intent through journal_intent on its way in (the feed),
 * journal_step for the step, and the tick's bytes taken after it and given back at once (the
 * daemon's write happens in libuv's thread pool, off the tick). Adds "record_intent_bytes" and
 * "record_bytes"; paired with a run without it, the tick's cost of recording (docs/performance.md).
 *
 *        bench_net spectators [statics (60000)] [spectators (40)] [timed_ticks (300)] [walk]:
 * issue 12's finding 5: a 1000 x 1000 world of that many statics, 200 players random-walking one
 * box each (default views) and that many spectators whose SetView is the whole world (1000 wide:
 * the default --max-view-extent allows it). Reports the snapshot phase per tick and the entries
 * the views took from the index per tick. `walk` walks every static in view on every tick, as
 * before the known statics were kept (net_snapshot_writer.always_walk_statics). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "journal.h"
#include "net_log.h"
#include "net_session.h"
#include "bench_scene.h"
#include "net_test_util.h"
#include "quant.h"
#include "varint.h"
#include "wire.h"
#include "net_tick.h"

/* Under `valgrind --tool=callgrind --instr-atstart=no` the spectators scene counts instructions
 * of its timed ticks only (the warm-up, filling 60,000 statics into 40 views, is left out). */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define BENCH_WARMUP 60

#define SPECTATOR_PLAYERS 200
#define SPECTATOR_WARMUP 120 /* a whole-world view of 60,000 statics fills in ~35 ticks */

static int bench_spectators(int argc, char **argv) {
    int nstatics = argc > 2 ? atoi(argv[2]) : 60000;
    int nspect = argc > 3 ? atoi(argv[3]) : 40;
    int ticks = argc > 4 ? atoi(argv[4]) : 300;
    collide_rng rng = {12345};
    bool walk = argc > 5 && strcmp(argv[5], "walk") == 0;
    if (nstatics < 0 || nspect < 0 || ticks < 1) return 2;
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.rate_limit = 1000;
    cfg.max_bodies = (uint32_t)(nstatics + SPECTATOR_PLAYERS + 64);
    world_config wc;
    world_config_default(&wc);
    wc.bounds = aabb_make(v2(-500, -500), v2(500, 500));
    wc.max_bodies = cfg.max_bodies;
    world *w = world_create(&wc);
    if (!w) return 1;
    /* A square grid of small boxes over the whole world, in id order row by row. */
    int side = (int)ceilf(sqrtf((float)nstatics));
    float pitch = side > 0 ? 990.0f / (float)side : 1.0f;
    geom_shape box = {.kind = GEOM_SHAPE_BOX};
    box.u.half_extents = v2(0.3f * pitch, 0.3f * pitch);
    for (int k = 0; k < nstatics; k++) {
        vec2 at = v2(-495.0f + pitch * ((float)(k % side) + 0.5f),
                     -495.0f + pitch * ((float)(k / side) + 0.5f));
        world_body_id id;
        if (world_spawn(w, WORLD_BODY_STATIC, &box, at, 0, &id, NULL) != WORLD_OK) return 1;
    }
    net_server *srv = net_server_create(&cfg, w);
    if (!srv) return 1;
    srv->snapshot->always_walk_statics = walk;
    int nclients = SPECTATOR_PLAYERS + nspect;
    net_client *clients = calloc((size_t)nclients, sizeof *clients);
    uint32_t *body = calloc((size_t)nclients, sizeof *body);
    uint8_t buf[256];
    srv->now_us = 1000000;
    for (int i = 0; i < nclients; i++) {
        net_client *c = &clients[i];
        net_client_open(srv, c, "bench");
        net_client_feed(srv, c, buf, tu_hello(0, 1, NULL, buf, sizeof buf));
        if (i >= SPECTATOR_PLAYERS) {
            net_client_feed(srv, c, buf, tu_set_view(0, 0, 0, 500, 500, buf, sizeof buf));
        } else {
            /* Between the statics' rows: spawns do not overlap them. */
            float x = -495.0f + collide_rng_unit(&rng) * 990.0f;
            float y =
                -495.0f + pitch * (float)(1 + (int)(collide_rng_unit(&rng) * (float)(side - 1)));
            net_client_feed(srv, c, buf,
                            tu_spawn_box(0, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, x, y,
                                         0.1f * pitch, 0.1f * pitch, buf, sizeof buf));
        }
        tu_msgs replies;
        tu_take(c, &replies);
        if (replies.count >= 2 &&
            replies.m[1]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            body[i] = replies.m[1]->spawned->body_id;
        tu_free(&replies);
    }
    double *snap_ms = calloc((size_t)ticks, sizeof *snap_ms);
    double *all_ms = calloc((size_t)ticks, sizeof *all_ms); /* the intents' way in, and the tick */
    double *step_ms = calloc((size_t)ticks, sizeof *step_ms);
    uint64_t taken = 0, bytes = 0;
    uint32_t seq = 1;
    for (int t = -SPECTATOR_WARMUP; t < ticks; t++) {
        if (t == 0) CALLGRIND_START_INSTRUMENTATION;
        srv->now_us += 16667;
        if ((t & 1) == 0) {
            seq++;
            for (int i = 0; i < SPECTATOR_PLAYERS; i++) {
                if (!body[i]) continue;
                float a = collide_rng_unit(&rng) * 6.2831853f;
                net_client_feed(
                    srv, &clients[i], buf,
                    tu_move(0, body[i], seq, 20.0f * cosf(a), 20.0f * sinf(a), buf, sizeof buf));
            }
        }
        double t1 = bench_now_ms();
        world_step(w);
        double t2 = bench_now_ms();
        uint64_t taken0 = srv->snapshot->marks.taken;
        net_tick_snapshots(srv);
        double t3 = bench_now_ms();
        for (int i = 0; i < nclients; i++) {
            if (t >= 0) bytes += clients[i].out.len;
            clients[i].out.len = 0;
        }
        while (net_server_pop_dirty(srv)) {
        }
        if (t >= 0) {
            step_ms[t] = t2 - t1;
            snap_ms[t] = t3 - t2;
            taken += srv->snapshot->marks.taken - taken0;
        }
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    uint32_t known = nspect ? clients[SPECTATOR_PLAYERS].snap.known.count : 0;
    printf("{\"scene\":\"spectators\",\"walk\":%s,\"statics\":%d,\"spectators\":%d,"
           "\"players\":%d,\"ticks\":%d,\"spectator_knows\":%u,\"snapshots_p50_ms\":%.3f,"
           "\"snapshots_p99_ms\":%.3f,\"step_p50_ms\":%.3f,\"taken_per_tick\":%.0f,"
           "\"bytes_per_tick\":%.0f}\n",
           walk ? "true" : "false", nstatics, nspect, SPECTATOR_PLAYERS, ticks, known,
           bench_pct(snap_ms, ticks, 0.5), bench_pct(snap_ms, ticks, 0.99),
           bench_pct(step_ms, ticks, 0.5), (double)taken / ticks, (double)bytes / ticks);
    for (int i = 0; i < nclients; i++)
        net_client_release(srv, &clients[i]);
    net_server_destroy(srv);
    world_destroy(w);
    free(clients);
    free(body);
    free(snap_ms);
    free(step_ms);
    return 0;
}

/* Body records in the snapshots of a client's output: BodyStates, or packed records. Outside the
 * timed part: the figures of the report, not of the tick. */
static uint64_t count_records(const net_buf *out, uint64_t *snapshots, uint64_t *last_tick,
                              uint64_t *full) {
    uint64_t n = 0;
    const uint8_t *p = out->data, *end = out->data + out->len;
    while (p < end) {
        uint64_t len;
        if (!varint_read(&p, end, &len) || len > (uint64_t)(end - p)) break;
        wire_reader m = wire_reader_of(p, (size_t)len);
        p += len;
        const uint8_t *snap;
        size_t snap_len;
        if (!wire_next_len(&m, WIRE_SERVER_SNAPSHOT, &snap, &snap_len)) continue;
        (*snapshots)++;
        uint64_t tick = 0, base = 0;
        (void)wire_scan(snap, snap_len, WIRE_SNAPSHOT_TICK, WIRE_VARINT, NULL, &tick);
        (void)wire_scan(snap, snap_len, WIRE_SNAPSHOT_BASELINE_TICK, WIRE_VARINT, NULL, &base);
        *last_tick = tick;
        *full += base == 0;
        wire_reader r = wire_reader_of(snap, snap_len);
        while (r.p < r.end) {
            uint32_t field;
            unsigned type;
            if (!wire_read_key(&r, &field, &type)) break;
            const uint8_t *d;
            size_t dl;
            if (type != WIRE_LEN) {
                if (!wire_skip(&r, type)) break;
                continue;
            }
            if (!wire_read_len(&r, &d, &dl)) break;
            if (field == WIRE_SNAPSHOT_BODIES) n++;
            if (field != WIRE_SNAPSHOT_PACKED) continue;
            /* Records: id_gap, flags, then the parts the flags name. */
            const uint8_t *q = d, *qe = d + dl;
            while (q < qe) {
                uint64_t gap, flags, v = 0;
                if (!varint_read(&q, qe, &gap) || !varint_read(&q, qe, &flags)) break;
                int varints = 2 * !!(flags & QUANT_POSITION) + 2 * !!(flags & QUANT_VELOCITY) +
                              !!(flags & QUANT_ANGLE) + !!(flags & QUANT_INPUT_SEQ) +
                              !!(flags & QUANT_ANGULAR_VELOCITY) + 2 * !!(flags & QUANT_NEW);
                for (int k = 0; k < varints; k++)
                    varint_read(&q, qe, &v);
                if (flags & QUANT_NEW) {
                    varint_read(&q, qe, &v);
                    q += v;
                }
                if (flags & QUANT_FILTER)
                    for (int k = 0; k < 3; k++)
                        varint_read(&q, qe, &v);
                n++;
            }
        }
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "spectators") == 0) return bench_spectators(argc, argv);
    bool quantized = false, udp = false, record = false;
    uint32_t rate = 0;
    while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        if (strcmp(argv[1], "--quantized") == 0) {
            quantized = true;
        } else if (strcmp(argv[1], "--record") == 0) {
            record = true;
        } else if (strcmp(argv[1], "--udp") == 0) {
            udp = quantized = true; /* UDP snapshots are always quantized */
        } else if (strcmp(argv[1], "--rate") == 0 && argc > 2) {
            rate = (uint32_t)atoi(argv[2]);
            argv++;
            argc--;
        } else {
            return 2;
        }
        argv++;
        argc--;
    }
    int nclients = argc > 1 ? atoi(argv[1]) : 1000;
    int ticks = argc > 2 ? atoi(argv[2]) : 600;
    if (nclients < 1 || ticks < 1) return 2;
    float view_radius = argc > 3 ? (float)atof(argv[3]) : 0.0f;
    if (argc > 3 && !(view_radius > 0.0f)) return 2;
    net_log_set_level(NET_LOG_ERROR);
    bench_scene sc;
    char err[256];
    bool ok = udp ? bench_scene_init_udp(&sc, nclients, view_radius, 12345, rate, err, sizeof err)
                  : bench_scene_init_ex(&sc, nclients, view_radius, 12345, rate, quantized, err,
                                        sizeof err);
    if (!ok) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double *tick_ms = calloc((size_t)ticks, sizeof *tick_ms);
    double *step_ms = calloc((size_t)ticks, sizeof *step_ms);
    double *feed_ms = calloc((size_t)ticks, sizeof *feed_ms);
    double *snap_ms = calloc((size_t)ticks, sizeof *snap_ms);
    double *all_ms = calloc((size_t)ticks, sizeof *all_ms); /* the intents' way in, and the tick */
    uint64_t bytes = 0, frames = 0, in_view = 0, records = 0, snapshots = 0, full = 0;
    journal_meta meta = {.hash_every = 60, .room = "L1", .world_name = "arena"};
    for (int t = -BENCH_WARMUP; t < ticks; t++) {
        double t0 = bench_now_ms();
        bench_scene_intents(&sc, t);
        double t1 = bench_now_ms();
        journal_step(sc.srv->journal, sc.w);
        double t2 = bench_now_ms();
        net_tick_snapshots(sc.srv);
        if (sc.srv->journal) journal_recycle(sc.srv->journal, journal_take(sc.srv->journal));
        double t3 = bench_now_ms();
        if (record && !sc.srv->journal) {
            sc.srv->journal = journal_start(sc.w, &meta, 16u << 20);
            if (!sc.srv->journal) return 1;
            journal_recycle(sc.srv->journal, journal_take(sc.srv->journal)); /* the header */
        }
        uint64_t snaps_now = 0, full_now = 0;
        for (int i = 0; i < nclients; i++) {
            uint64_t tick = 0;
            uint64_t n = count_records(&sc.clients[i].out, &snaps_now, &tick, &full_now);
            if (t >= 0) records += n;
            if (udp && tick) bench_scene_ack(&sc, i, tick);
        }
        if (t >= 0) snapshots += snaps_now, full += full_now;
        bench_scene_drain(&sc, t >= 0 ? &bytes : NULL, t >= 0 ? &in_view : NULL);
        if (t >= 0) {
            feed_ms[t] = t1 - t0;
            step_ms[t] = t2 - t1;
            tick_ms[t] = t3 - t1;
            all_ms[t] = t3 - t0;
            snap_ms[t] = t3 - t2;
            frames += (uint64_t)nclients;
        }
    }
    world_stats ws;
    world_get_stats(sc.w, &ws);
    double snap_bytes = (double)bytes / (double)(snapshots ? snapshots : 1);
    /* The mean, not the median: at a reduced rate most ticks send nothing. */
    double snap_mean = 0.0, tick_mean = 0.0;
    for (int t = 0; t < ticks; t++) {
        snap_mean += snap_ms[t] / ticks;
        tick_mean += tick_ms[t] / ticks;
    }
    const net_metrics *m = &sc.srv->metrics;
    journal_stats js = {0};
    if (sc.srv->journal) journal_get_stats(sc.srv->journal, &js);
    char full_share[32] = "null"; /* only UDP snapshots have baselines */
    if (udp)
        snprintf(full_share, sizeof full_share, "%.4f", (double)full / (snapshots ? snapshots : 1));
    printf(
        "{\"scene\":\"%s\",\"clients\":%d,\"bodies_in_view_avg\":%.1f,\"view_radius\":%.1f,"
        "\"ticks\":%d,\"statics\":%zu,\"tick_p50_ms\":%.3f,"
        "\"tick_p99_ms\":%.3f,\"min_ms\":%.3f,\"median_ms\":%.3f,\"step_p50_ms\":%.3f,\"snapshots_"
        "p50_ms\":%.3f,"
        "\"intents_p50_ms\":%.3f,\"snapshot_bytes_avg\":%.1f,\"bytes_per_client_per_s\":%.0f,"
        "\"quantized\":%s,\"snapshot_rate_hz\":%u,\"snapshots_per_client_per_s\":%.2f,"
        "\"records_per_snapshot\":%.2f,\"bytes_per_record\":%.2f,\"snapshots_mean_ms\":%.3f,"
        "\"tick_mean_ms\":%.3f,\"snapshot_us_per_client_tick\":%.3f,"
        "\"records_copied\":%llu,\"records_encoded\":%llu,\"udp\":%s,"
        "\"full_snapshot_share\":%s,\"with_intents_p50_ms\":%.3f,\"record\":%s,\"record_intent_"
        "bytes\":%.3f,"
        "\"record_bytes\":%llu}\n",
        nclients >= 5000 ? "L2-inproc" : "L1-inproc", nclients, (double)in_view / (double)frames,
        (double)sc.cfg.view_radius, ticks, ws.static_bodies, bench_pct(tick_ms, ticks, 0.5),
        bench_pct(tick_ms, ticks, 0.99), bench_pct(tick_ms, ticks, 0.0),
        bench_pct(tick_ms, ticks, 0.5), bench_pct(step_ms, ticks, 0.5),
        bench_pct(snap_ms, ticks, 0.5), bench_pct(feed_ms, ticks, 0.5), snap_bytes,
        (double)bytes / (double)nclients / ((double)ticks / 60.0), quantized ? "true" : "false",
        rate, (double)snapshots / (double)nclients / ((double)ticks / 60.0),
        (double)records / (double)(snapshots ? snapshots : 1),
        (double)bytes / (double)(records ? records : 1), snap_mean, tick_mean,
        snap_mean * 1000.0 / nclients, (unsigned long long)m->quantized_records_copied_total,
        (unsigned long long)m->quantized_records_encoded_total, udp ? "true" : "false", full_share,
        bench_pct(all_ms, ticks, 0.5), record ? "true" : "false",
        js.intents ? (double)js.intent_bytes / (double)js.intents : 0.0,
        (unsigned long long)js.bytes);
    journal_free(sc.srv->journal);
    sc.srv->journal = NULL;
    bench_scene_destroy(&sc);
    free(tick_ms);
    free(step_ms);
    free(feed_ms);
    free(snap_ms);
    free(all_ms);
    return 0;
}

/* The L1 scene of bench_net, shared with bench_rooms: one world loaded from the default arena,
 * its net_server and N in-process clients (no sockets), each owning one moving 1 x 1 box at a
 * random place and sending a random-walk MoveIntent 30 times a second through the real decode
 * path (net_client_feed). A scene owns everything it touches, its random stream included, so
 * scenes on different threads share nothing. */
#ifndef COLLIDE_BENCH_SCENE_H
#define COLLIDE_BENCH_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collide_rng.h"
#include "net_server.h"
#include "world.h"

double bench_now_ms(void);
/* The p-quantile (0..1) of v[0..n), nearest rank; sorts v. */
double bench_pct(double *v, int n, double p);

typedef struct bench_scene {
    net_config cfg;
    world *w;
    net_server *srv;
    net_client *clients;
    uint32_t *body; /* each client's box */
    int nclients;
    uint32_t seq; /* the intents' input_seq (and request_id) */
    collide_rng rng;
    bool udp;         /* every client a datagram client (bench_scene_init_udp) */
    uint8_t buf[256]; /* one framed ClientMessage */
} bench_scene;

/* Loads the default arena and spawns nclients clients, each with its box; view_radius 0 keeps the
 * daemon's default. Draws x then y per client from an rng seeded with seed. Returns false with a
 * message in err on failure (the scene is then released). */
bool bench_scene_init(bench_scene *s, int nclients, float view_radius, uint32_t seed, char *err,
                      size_t errlen);
/* The same, every client's Hello asking for snapshot_rate_hz (0: every tick) and quantized
 * snapshots (PROTOCOL.md "Snapshot rate and quantized snapshots"). */
bool bench_scene_init_ex(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                         uint32_t snapshot_rate_hz, bool quantized, char *err, size_t errlen);
/* The same with every client on the udp transport's socket-free side (net_udp.h), as a room
 * thread's relay feeds it: each message goes in as one packet on its channel (intents on 1), and
 * its snapshots are quantized deltas against the baselines it acknowledged
 * (bench_scene_ack). */
bool bench_scene_init_udp(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                          uint32_t snapshot_rate_hz, char *err, size_t errlen);
/* Feeds client i one framed ClientMessage (buf[0..n), varint-prefixed as tu_frame writes it): as
 * is over TCP; over UDP as the packet [channel][message]. */
void bench_scene_feed(bench_scene *s, int i, uint8_t channel, const uint8_t *buf, size_t n);
/* UDP: client i acknowledges the snapshot of tick (SnapshotAck on channel 1), as a real client
 * does each one it applies. */
void bench_scene_ack(bench_scene *s, int i, uint64_t tick);
/* Tick t's intents: on even ticks (30 Hz at a 60 Hz tick) every client sends a MoveIntent of
 * 20 units/s in a random direction. Advances the server's clock by one tick first. */
void bench_scene_intents(bench_scene *s, int t);
/* After world_step and net_tick_snapshots: empties every client's output buffer as if written
 * and drains the dirty list. Adds the bytes and the bodies each client knows of to *bytes and
 * *known when they are not NULL. */
void bench_scene_drain(bench_scene *s, uint64_t *bytes, uint64_t *known);
/* A whole tick: intents, world_step, snapshots, drain. */
void bench_scene_tick(bench_scene *s, int t, uint64_t *bytes, uint64_t *known);
void bench_scene_destroy(bench_scene *s);

#endif

#define _POSIX_C_SOURCE 200809L
#include "bench_scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "net_test_util.h"
#include "net_udp.h"
#include "world_load.h"
#include "net_tick.h"

double bench_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

bool bench_scene_init(bench_scene *s, int nclients, float view_radius, uint32_t seed, char *err,
                      size_t errlen) {
    return bench_scene_init_ex(s, nclients, view_radius, seed, 0, false, err, errlen);
}

/* A Hello with the 1.1 snapshot fields (0 and false: a v1 Hello's bytes). */
static size_t hello_ex(uint32_t rate, bool quantized, uint8_t *out, size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"tester";
    h.token = (char *)"";
    h.snapshot_rate_hz = rate;
    h.quantized = quantized;
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return tu_frame(&m, out, cap);
}

void bench_scene_feed(bench_scene *s, int i, uint8_t channel, const uint8_t *buf, size_t n) {
    net_client *c = &s->clients[i];
    size_t pl = 0, bl = 0;
    if (!s->udp || frame_peek(buf, n, UINT32_MAX, &pl, &bl) != FRAME_OK) {
        net_client_feed(s->srv, c, buf, n);
        return;
    }
    uint8_t packet[sizeof s->buf + 1];
    packet[0] = channel;
    memcpy(packet + 1, buf + pl, bl);
    net_client_feed(s->srv, c, packet, bl + 1);
}

void bench_scene_ack(bench_scene *s, int i, uint64_t tick) {
    Collide__V1__SnapshotAck a = COLLIDE__V1__SNAPSHOT_ACK__INIT;
    a.tick = tick;
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK;
    m.snapshot_ack = &a;
    uint8_t buf[32];
    bench_scene_feed(s, i, NET_UDP_CHANNEL_SEQUENCED, buf, tu_frame(&m, buf, sizeof buf));
}

static bool scene_init(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                       uint32_t snapshot_rate_hz, bool quantized, bool udp, char *err,
                       size_t errlen);

bool bench_scene_init_ex(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                         uint32_t snapshot_rate_hz, bool quantized, char *err, size_t errlen) {
    return scene_init(s, nclients, view_radius, seed, snapshot_rate_hz, quantized, false, err,
                      errlen);
}

bool bench_scene_init_udp(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                          uint32_t snapshot_rate_hz, char *err, size_t errlen) {
    return scene_init(s, nclients, view_radius, seed, snapshot_rate_hz, true, true, err, errlen);
}

static bool scene_init(bench_scene *s, int nclients, float view_radius, uint32_t seed,
                       uint32_t snapshot_rate_hz, bool quantized, bool udp, char *err,
                       size_t errlen) {
    memset(s, 0, sizeof *s);
    s->udp = udp;
    s->seq = 1;
    s->rng.state = seed ? seed : 1;
    net_config_default(&s->cfg);
    if (view_radius > 0.0f) s->cfg.view_radius = view_radius;
    s->cfg.rate_limit = 1000;
    /* Every client is welcomed: --max-clients (1,500 by default) would refuse L2's 5,000. */
    if ((uint32_t)nclients > s->cfg.max_clients) s->cfg.max_clients = (uint32_t)nclients;
    world_config wc;
    world_config_default(&wc);
    s->w = world_load_json(world_default_arena_json, "arena", &wc, NULL, err, errlen);
    if (!s->w) return false;
    s->srv = net_server_create(&s->cfg, s->w);
    s->clients = calloc((size_t)nclients, sizeof *s->clients);
    s->body = calloc((size_t)nclients, sizeof *s->body);
    if (!s->srv || !s->clients || !s->body) {
        snprintf(err, errlen, "out of memory for %d clients", nclients);
        bench_scene_destroy(s);
        return false;
    }
    aabb b = world_get_config(s->w)->bounds;
    s->srv->now_us = 1000000;
    for (int i = 0; i < nclients; i++) {
        net_client *c = &s->clients[i];
        if (udp) c->transport = &net_udp_transport;
        net_client_open(s->srv, c, "bench");
        s->nclients = i + 1; /* the clients bench_scene_destroy releases */
        bench_scene_feed(s, i, NET_UDP_CHANNEL_RELIABLE, s->buf,
                         hello_ex(snapshot_rate_hz, quantized, s->buf, sizeof s->buf));
        /* x before y: the random stream fixes the layout. */
        float x = b.min.x + 5.0f + collide_rng_unit(&s->rng) * (b.max.x - b.min.x - 10.0f);
        float y = b.min.y + 5.0f + collide_rng_unit(&s->rng) * (b.max.y - b.min.y - 10.0f);
        bench_scene_feed(s, i, NET_UDP_CHANNEL_RELIABLE, s->buf,
                         tu_spawn_box(0, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, x, y, 0.5f, 0.5f,
                                      s->buf, sizeof s->buf));
        /* The replies are Welcome then Spawned: read the id back from our own output. */
        tu_msgs replies;
        tu_take(c, &replies);
        if (replies.count >= 2 &&
            replies.m[1]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            s->body[i] = replies.m[1]->spawned->body_id;
        tu_free(&replies);
    }
    return true;
}

void bench_scene_intents(bench_scene *s, int t) {
    s->srv->now_us += 16667;
    if ((t & 1) != 0) return; /* intents at 30 Hz */
    s->seq++;
    for (int i = 0; i < s->nclients; i++) {
        float a = collide_rng_unit(&s->rng) * 6.2831853f;
        bench_scene_feed(s, i, NET_UDP_CHANNEL_SEQUENCED, s->buf,
                         tu_move(s->seq, s->body[i], s->seq, 20.0f * cosf(a), 20.0f * sinf(a),
                                 s->buf, sizeof s->buf));
    }
}

/* The bodies the client now knows of: its known set, or a datagram client's held bodies after
 * its last snapshot (its known set stays empty). */
static uint64_t known_of(const net_client *c) {
    if (!c->transport || !c->transport->datagram) return c->snap.known.count;
    const net_baseline *b = net_baselines_newest(&c->snap.baselines);
    uint64_t n = 0;
    for (uint32_t k = 0; b && k < b->count; k++)
        n += b->bodies[k].held;
    return n;
}

void bench_scene_drain(bench_scene *s, uint64_t *bytes, uint64_t *known) {
    for (int i = 0; i < s->nclients; i++) {
        if (bytes) *bytes += s->clients[i].out.len;
        if (known) *known += known_of(&s->clients[i]);
        s->clients[i].out.len = 0;
    }
    while (net_server_pop_dirty(s->srv)) {
    }
}

void bench_scene_tick(bench_scene *s, int t, uint64_t *bytes, uint64_t *known) {
    bench_scene_intents(s, t);
    world_step(s->w);
    net_tick_snapshots(s->srv);
    bench_scene_drain(s, bytes, known);
}

void bench_scene_destroy(bench_scene *s) {
    if (s->clients && s->srv) {
        for (int i = 0; i < s->nclients; i++)
            net_client_release(s->srv, &s->clients[i]);
    }
    if (s->srv) net_server_destroy(s->srv);
    if (s->w) world_destroy(s->w);
    free(s->clients);
    free(s->body);
    memset(s, 0, sizeof *s);
}

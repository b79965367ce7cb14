/* A third transport written here, through net_transport.h alone: "mem" frames each message behind
 * a 4-byte big-endian length (nothing the daemon speaks), keeps a partial frame in c->in, and
 * counts its opens, closings and frees. Registered from the test, it carries a whole session:
 * Hello -> Welcome, a spawn, an intent, snapshots decoded through its framing, then the close on
 * the one idempotent path; a hand-off names it by id, and /metrics labels it by name. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "net_log.h"
#include "net_session.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "net_transport.h"

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name
#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING

static int opens, frees, closings; /* what the transport was asked to do */

typedef struct mem_state {
    int closings; /* on_closing calls for this client */
} mem_state;

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool mem_open(net_client *c, bool adopted) {
    (void)adopted;
    c->transport_state = calloc(1, sizeof(mem_state));
    opens += c->transport_state != NULL;
    return c->transport_state != NULL;
}

static void mem_free(net_client *c) {
    if (!c->transport_state) return;
    free(c->transport_state);
    c->transport_state = NULL;
    frees++;
}

static void mem_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    if (!net_client_accepts_input(c) || len == 0) return;
    if (c->in.len == 0) c->in_since_us = net_server_now_us(srv);
    if (!net_buf_append(&c->in, data, len)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    size_t off = 0;
    while (net_client_accepts_input(c) && c->in.len - off >= 4) {
        uint32_t n = be32(c->in.data + off);
        if (n > net_session_frame_limit(srv, c)) {
            net_server_kill(srv, c, NET_DISC_FATAL_ERROR);
            return;
        }
        if (c->in.len - off - 4 < n) break;
        net_session_message(srv, c, c->in.data + off + 4, n);
        off += 4 + (size_t)n;
    }
    net_buf_consume(&c->in, off);
}

static size_t mem_frame_prefix(size_t len, uint8_t out[NET_MAX_FRAME_PREFIX]) {
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(len >> (24 - 8 * i));
    return 4;
}

static void mem_on_closing(net_server *srv, net_client *c) {
    (void)srv;
    ((mem_state *)c->transport_state)->closings++;
    closings++;
}

static bool mem_linger(const net_client *c) {
    (void)c;
    return false;
}

static net_transport mem_transport = {
    .name = "mem",
    .open = mem_open,
    .free = mem_free,
    .feed = mem_feed,
    .frame_prefix = mem_frame_prefix,
    .on_closing = mem_on_closing,
    .linger = mem_linger,
    .render_metrics = NULL,
};

/* A varint-framed ClientMessage (net_test_util.h's builders) in the mem framing; returns its
 * length in out. */
static size_t mem_wrap(const uint8_t *framed, size_t n, uint8_t *out) {
    size_t pl = 0, bl = 0;
    if (frame_peek(framed, n, 1u << 20, &pl, &bl) != FRAME_OK) return 0;
    mem_frame_prefix(bl, out);
    memcpy(out + 4, framed + pl, bl);
    return 4 + bl;
}

/* Unpacks every mem frame of c->out (and empties it, as if written); false when it is not a
 * whole number of them. */
static bool mem_take(net_client *c, tu_msgs *msgs) {
    msgs->count = 0;
    size_t off = 0;
    while (off + 4 <= c->out.len && msgs->count < TU_MAX_MSGS) {
        uint32_t n = be32(c->out.data + off);
        if (c->out.len - off - 4 < n) break;
        tu_smsg *m = collide__v1__server_message__unpack(NULL, n, c->out.data + off + 4);
        if (!m) return false;
        msgs->len[msgs->count] = n;
        msgs->m[msgs->count++] = m;
        off += 4 + (size_t)n;
    }
    bool whole = off == c->out.len;
    c->out.len = 0;
    return whole;
}

/* Feeds a message in the mem framing a byte at a time: every partial frame is kept. */
static void feed_bytewise(net_server *srv, net_client *c, const uint8_t *framed, size_t n) {
    uint8_t wire[512];
    size_t len = mem_wrap(framed, n, wire);
    for (size_t i = 0; i < len; i++)
        net_client_feed(srv, c, wire + i, 1);
}

static const Collide__V1__BodyState *body_in(const Collide__V1__Snapshot *s, uint32_t id) {
    for (size_t i = 0; s && i < s->n_bodies; i++)
        if (s->bodies[i]->id == id) return s->bodies[i];
    return NULL;
}

static bool metric_line(net_server *srv, const char *line) {
    net_buf out = {0};
    bool ok = net_server_render_metrics(srv, &out) && net_buf_append(&out, "", 1) &&
              strstr((const char *)out.data, line) != NULL;
    net_buf_free(&out);
    return ok;
}

static void test_a_session_over_a_third_transport(void) {
    net_log_set_level(NET_LOG_ERROR);
    CHECK(net_transport_register(&mem_transport) && mem_transport.id == 3);
    CHECK(net_transport_find("mem") == &mem_transport && net_transport_at(3) == &mem_transport);
    CHECK(!net_transport_register(&mem_transport)); /* a name is registered once */
    net_config cfg;
    net_config_default(&cfg);
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 64;
    world *w = world_create(&wc);
    net_server *srv = net_server_create(&cfg, w);
    CHECK(w && srv);
    net_server_set_clock(srv, 1000000, 0);

    net_client c;
    memset(&c, 0, sizeof c);
    c.transport = &mem_transport;
    CHECK(net_client_open(srv, &c, "10.0.0.9:1") && opens == 1);
    uint8_t buf[512];
    tu_msgs msgs;
    feed_bytewise(srv, &c, buf, tu_hello(5, 1, NULL, buf, sizeof buf));
    CHECK(mem_take(&c, &msgs) && msgs.count == 1 && msgs.m[0]->msg_case == S(WELCOME) &&
          msgs.m[0]->request_id == 5 && msgs.m[0]->welcome->client_id == c.id);
    tu_free(&msgs);

    feed_bytewise(srv, &c, buf, tu_spawn_box(6, MOVING, 0, 0, 1, 1, buf, sizeof buf));
    CHECK(mem_take(&c, &msgs) && msgs.count == 1 && msgs.m[0]->msg_case == S(SPAWNED));
    uint32_t id = msgs.m[0]->spawned->body_id;
    tu_free(&msgs);
    CHECK(id != 0);

    /* The intent and a Ping in one read, through the transport's own framing. */
    uint8_t two[512], tmp[256];
    size_t n = mem_wrap(tmp, tu_move(7, id, 1, 30, 0, tmp, sizeof tmp), two);
    n += mem_wrap(tmp, tu_ping(8, 99, tmp, sizeof tmp), two + n);
    net_client_feed(srv, &c, two, n);
    CHECK(mem_take(&c, &msgs) && msgs.count == 1 && msgs.m[0]->msg_case == S(PONG) &&
          msgs.m[0]->pong->client_time_us == 99);
    tu_free(&msgs);

    float x = 0.0f;
    int snapshots = 0;
    for (int t = 0; t < 3; t++) {
        net_tick_run(srv, 1);
        CHECK(mem_take(&c, &msgs));
        for (size_t i = 0; i < msgs.count; i++) {
            if (msgs.m[i]->msg_case != S(SNAPSHOT)) continue;
            snapshots++;
            const Collide__V1__BodyState *b = body_in(msgs.m[i]->snapshot, id);
            if (b && b->position) x = b->position->x;
        }
        tu_free(&msgs);
    }
    CHECK_MSG(snapshots == 3 && x > 0.0f, "%d snapshots, body at x %g", snapshots, (double)x);
    CHECK(metric_line(srv, "collide_transport_connections_total{transport=\"mem\"} 1\n"));
    CHECK(metric_line(srv, "collide_transport_frames_in_total{transport=\"mem\"} 4\n"));
    CHECK(metric_line(srv, "collide_transport_connections_total{transport=\"tcp\"} 0\n"));

    /* Front mode's hand-off names it by id: the room's thread finds the same transport. */
    net_client d;
    memset(&d, 0, sizeof d);
    d.transport = &mem_transport;
    CHECK(net_client_open(srv, &d, "10.0.0.9:2") && opens == 2);
    net_hello_placement p;
    memset(&p, 0, sizeof p);
    net_client_hand_off(srv, &d, &p);
    CHECK(d.placement.transport == mem_transport.id &&
          net_transport_at(d.placement.transport) == &mem_transport);
    net_client_release(srv, &d);
    CHECK(frees == 1 && d.transport_state == NULL);

    /* The server closes c: the transport hears once, however often it is told. */
    net_server_drain(srv);
    net_server_drain(srv);
    CHECK(closings == 1 && ((mem_state *)c.transport_state)->closings == 1);
    CHECK(mem_take(&c, &msgs) && msgs.count == 1 && msgs.m[0]->msg_case == S(GOODBYE));
    tu_free(&msgs);
    CHECK(net_client_next_io(&c) == NET_IO_CLOSE && !c.transport->linger(&c));
    net_client_close(srv, &c, NET_DISC_CLIENT_CLOSED);
    net_client_close(srv, &c, NET_DISC_CLIENT_CLOSED);
    CHECK(frees == 2 && c.transport_state == NULL && !world_body_alive(w, id));
    CHECK(net_server_client_count(srv) == 0);
    net_server_destroy(srv);
    world_destroy(w);
}

TEST_MAIN(TEST(test_a_session_over_a_third_transport))

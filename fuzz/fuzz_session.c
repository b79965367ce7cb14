/* libFuzzer target over frame decoding and message dispatch: arbitrary bytes go through
 * net_client_feed exactly as they would from a socket, with ticks, clock jumps and reconnects
 * interleaved, against a small real world. No sockets, no libuv.
 *
 * Input layout (so the fuzzer can reach deep states without first inventing a Hello):
 *   byte 0: flags. bit0: client A says a valid Hello first; bit1: with the admin token;
 *           bit2: client B says Hello first (with a ticket: tickets are always on, so every other
 * token a Hello carries is verified as one); bit3: a small max frame (256 bytes, and UDP snapshots
 * of at most 256); bit4: client B is on a front (a world-less server placing Hellos in rooms
 * through the real room directory), as the daemon's front loop is; bit5: the Hellos ask for
 *           quantized snapshots; bit6: ... at 20 Hz; bit7: client A is a WebSocket client
 *           (net_client_feed, its upgrade done first): the bytes fed to it are RFC 6455 frames,
 * read by wslay and reassembled; bit7 with bit4: client A is a UDP client instead (the udp
 * transport's socket-free side, as a room thread's relay feeds it): each payload fed to it is one
 * packet, its first byte the channel. The world's server answers CreateRoom/CloseRoom/ListRooms
 * through the daemon's own admin calls (net_host.c) on a real directory, without worker threads.
 * then records [ctl][payload]: ctl & 3 = 0 feed A, 1 feed B (payload of (ctl >> 2) + 1 bytes), 2
 * run (ctl >> 2) % 4 world steps and snapshots, 3 reconnect B (ctl >> 2 == 0) or advance the clock
 * by (ctl >> 2) * 100 ms. Checked on every step: each frame the server wrote unpacks as a
 * ServerMessage and fits the max frame; every __unpack was freed (a counting allocator);
 * ASan/UBSan/LSan do the rest. A client with quantized snapshots (bit5, or a Hello of its own) has
 * every snapshot decoded by the C client's decoder (client/qsnap.c), which must accept it and end
 * up holding exactly what the server believes it sent (the client's qknown). A UDP client's
 * snapshots must each fit --udp-snapshot-bytes; each is decoded against its baseline by the C
 * client's (client/qbase.c), which must end up holding exactly the state the server recorded for
 * that tick, and is acknowledged (SnapshotAck on channel 1) as a real client would: the baselines
 * and the deltas against them are exercised, and the fuzzer's own acks are the hostile ones.
 * Before all that, the whole input goes to the tickets' verifier alone (net_ticket.h): as a token,
 * and as the payload and as the header of a token signed with the key, so that the fuzzer reaches
 * the claims' reading past the signature; no reason it gives may hold the key. */
#include <stdio.h>
#include <stdlib.h>

#include "net_host.h"
#include "net_udp.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "net_ws.h"
#include "net_ticket.h"
#include "qsnap.h"
#include "ticket_mint.h"

#define FUZZ_TICKET_KEY "fuzz-ticket-key-0123456789abcdef"

static const char ws_upgrade[] = "GET /v1 HTTP/1.1\r\nHost: f\r\nUpgrade: websocket\r\n"
                                 "Connection: Upgrade\r\nSec-WebSocket-Key: "
                                 "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/* A masked binary frame of the varint-framed message at buf[0..n) (its prefix dropped). */
static void decode_quantized(cc_qsnap *q, const Collide__V1__ServerMessage *m);
static void check_in_sync(const net_client *c, const cc_qsnap *q);

static size_t ws_wrap(uint8_t *buf, size_t n, size_t cap) {
    size_t pl = 0, bl = 0;
    if (frame_peek(buf, n, UINT32_MAX, &pl, &bl) != FRAME_OK || bl > 125 || bl + 6 > cap) abort();
    uint8_t body[125];
    memcpy(body, buf + pl, bl);
    buf[0] = 0x82;
    buf[1] = (uint8_t)(0x80u | bl);
    memcpy(buf + 2, "\x11\x22\x33\x44", 4);
    for (size_t i = 0; i < bl; i++)
        buf[6 + i] = body[i] ^ buf[2 + (i & 3)];
    return bl + 6;
}

/* What the server wrote to a WebSocket client: the 101 once, then frames; each binary one must
 * unpack as a ServerMessage within the max frame, and nothing may follow a close frame. */
static void drain_ws_output(net_server *srv, net_client *c, cc_qsnap *q, bool *upgraded,
                            bool *closed) {
    size_t off = 0;
    const uint8_t *o = c->out.data;
    if (!*upgraded && c->out.len) {
        size_t end = 4;
        while (end <= c->out.len && memcmp(o + end - 4, "\r\n\r\n", 4) != 0)
            end++;
        if (end > c->out.len || memcmp(o, "HTTP/1.1 101", 12) != 0) abort();
        off = end;
        *upgraded = true;
    }
    while (off < c->out.len) {
        if (*closed || c->out.len - off < 2 || o[off] < 0x80 || (o[off + 1] & 0x80)) abort();
        uint8_t op = o[off] & 0x0f;
        uint64_t n = o[off + 1] & 0x7f;
        size_t h = 2;
        if (n == 126) {
            n = (uint64_t)o[off + 2] << 8 | o[off + 3];
            h = 4;
        } else if (n == 127) {
            n = 0;
            for (int i = 0; i < 8; i++)
                n = n << 8 | o[off + 2 + i];
            h = 10;
        }
        if (off + h + n > c->out.len) abort();
        if (op == 0x2) {
            if (n > srv->cfg.max_frame) abort();
            Collide__V1__ServerMessage *m =
                collide__v1__server_message__unpack(NULL, n, o + off + h);
            if (!m) abort();
            if (c->snap.quantized) decode_quantized(q, m);
            collide__v1__server_message__free_unpacked(m, NULL);
        } else if (op == 0x8) {
            *closed = true;
        } else if (op != 0xa) {
            abort();
        }
        off += h + n;
    }
    c->out.len = 0;
    check_in_sync(c, q);
}

static long fuzz_live_allocs; /* protobuf-c allocations not yet freed */
/* Counts, then passes on to the server's own allocator (its parse arena), so the fuzzer runs the
 * daemon's allocation path. */
static void *fuzz_alloc(void *d, size_t n) {
    ProtobufCAllocator *inner = d;
    void *p = inner->alloc(inner->allocator_data, n);
    if (p) fuzz_live_allocs++;
    return p;
}
static void fuzz_free(void *d, void *p) {
    ProtobufCAllocator *inner = d;
    if (p) fuzz_live_allocs--;
    inner->free(inner->allocator_data, p);
}
static ProtobufCAllocator fuzz_allocator = {fuzz_alloc, fuzz_free, NULL};

static cc_qsnap qa, qb; /* the client decoders of a and b */

/* Decodes a quantized snapshot as the C client does; aborts on a refusal. */
static void decode_quantized(cc_qsnap *q, const Collide__V1__ServerMessage *m) {
    if (m->msg_case != COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT) return;
    Collide__V1__Snapshot *s = m->snapshot;
    if (s->n_bodies != 0) abort(); /* a quantized client never gets a BodyState */
    if (!cc_qsnap_expand(q, s)) abort();
    for (size_t i = 1; i < s->n_bodies; i++)
        if (s->bodies[i]->id <= s->bodies[i - 1]->id) abort();
    cc_qsnap_done(q, s);
}

/* The decoder's table is the server's record of what it sent: same ids, same states. */
static void check_in_sync(const net_client *c, const cc_qsnap *q) {
    /* A datagram client's known set stays empty: its state is its baselines (decode_udp). */
    if (!c->snap.quantized || c->state != NET_CLIENT_ACTIVE || c->transport->datagram) return;
    if (q->t.count != c->snap.known.count) abort();
    for (uint32_t i = 0; i < c->snap.known.count; i++) {
        const quant_body *b = quant_table_find(&q->t, c->snap.known.entries[i].id);
        if (!b || memcmp(&b->q, &c->snap.qknown[i], sizeof b->q) != 0) abort();
    }
}

/* ---- Client A over UDP ---------------------------------------------------------------------- */

static cc_qbase qbase_a;  /* A's baselines, as the C client keeps them */
static uint64_t acks[64]; /* the snapshots A applied since the last drain, to acknowledge */
static size_t nacks;

static bool is_udp(const net_client *c) { return c->transport == &net_udp_transport; }

/* Rewrites the varint-framed message at buf[0..n) as a UDP packet: [channel][message]. */
static size_t udp_wrap(uint8_t *buf, size_t n, uint8_t channel) {
    size_t pl = 0, bl = 0;
    if (frame_peek(buf, n, UINT32_MAX, &pl, &bl) != FRAME_OK || bl + 1 > n) abort();
    memmove(buf + 1, buf + pl, bl);
    buf[0] = channel;
    return bl + 1;
}

/* The state the server recorded for its snapshot of tick; NULL when not in its ring. */
static const net_baseline *recorded(const net_client *c, uint64_t tick) {
    const net_baselines *b = &c->snap.baselines;
    for (uint32_t i = 0; b->ring && i < b->slots; i++)
        if (b->ring[i].tick == tick) return &b->ring[i];
    return NULL;
}

/* The client's rebuilt state is exactly the server's record: the same held bodies, the same
 * quantized values. */
static void check_recorded(const net_baseline *rec, const quant_table *t) {
    size_t held = 0;
    for (uint32_t i = 0; i < rec->count; i++) {
        if (!rec->bodies[i].held) continue;
        const quant_body *b = quant_table_find(t, rec->bodies[i].id);
        if (!b || memcmp(&b->q, &rec->bodies[i].q, sizeof b->q) != 0) abort();
        held++;
    }
    if (held != t->count) abort();
}

/* A message to the UDP client A: a Snapshot goes on channel 1 within --udp-snapshot-bytes,
 * anything else on channel 0. An applied snapshot is checked against the server's record of its
 * tick and queued for a SnapshotAck, as a real client would; one whose baseline the client no
 * longer holds is ignored, as PROTOCOL.md says. */
static void decode_udp(net_server *srv, const net_client *c, cc_qsnap *q, const uint8_t *body,
                       size_t len, Collide__V1__ServerMessage *m) {
    bool snap = m->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT;
    uint8_t want = snap ? NET_UDP_CHANNEL_SEQUENCED : NET_UDP_CHANNEL_RELIABLE;
    if (net_udp_channel_of(body, len) != want) abort();
    if (!snap) return;
    if (len > srv->cfg.udp_snapshot_bytes) abort();
    Collide__V1__Snapshot *s = m->snapshot;
    int r = cc_qsnap_expand_base(q, &qbase_a, s);
    cc_qsnap_done(q, s);
    if (r == CC_QBASE_MALFORMED) abort();
    if (r != CC_QBASE_APPLIED) return;
    const net_baseline *rec = recorded(c, s->tick);
    if (!rec) abort(); /* drained after every step: the snapshot is the newest the ring holds */
    check_recorded(rec, cc_qbase_newest(&qbase_a));
    if (nacks < sizeof acks / sizeof acks[0]) acks[nacks++] = s->tick;
}

/* Acknowledges what A applied, on channel 1. */
static void send_acks(net_server *srv, net_client *c) {
    for (size_t i = 0; i < nacks; i++) {
        Collide__V1__SnapshotAck a = COLLIDE__V1__SNAPSHOT_ACK__INIT;
        a.tick = acks[i];
        tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
        m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK;
        m.snapshot_ack = &a;
        uint8_t buf[32];
        net_client_feed(srv, c, buf, udp_wrap(buf, tu_frame(&m, buf, sizeof buf), 1));
    }
    nacks = 0;
}

static void drain_output(net_server *srv, net_client *c, cc_qsnap *q) {
    size_t off = 0;
    while (off < c->out.len) {
        size_t pl = 0, bl = 0;
        if (frame_peek(c->out.data + off, c->out.len - off, srv->cfg.max_frame, &pl, &bl) !=
            FRAME_OK)
            abort();
        Collide__V1__ServerMessage *m =
            collide__v1__server_message__unpack(NULL, bl, c->out.data + off + pl);
        if (!m) abort();
        if (is_udp(c))
            decode_udp(srv, c, q, c->out.data + off + pl, bl, m);
        else if (c->snap.quantized)
            decode_quantized(q, m);
        collide__v1__server_message__free_unpacked(m, NULL);
        off += pl + bl;
    }
    c->out.len = 0;
    check_in_sync(c, q);
    if (is_udp(c)) send_acks(srv, c);
}

/* The input as a ticket, and as the claims and the header of tickets signed with the key: the
 * verifier must give a verdict, never hold the key in its reason, and allocate only in proportion
 * to the token (libFuzzer's RSS and malloc limits watch that). */
/* Whether the n bytes at d hold FUZZ_TICKET_KEY anywhere. */
static bool holds_key(const uint8_t *d, size_t n) {
    size_t k = sizeof FUZZ_TICKET_KEY - 1;
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(d + i, FUZZ_TICKET_KEY, k) == 0) return true;
    return false;
}

static void fuzz_ticket_verifier(const uint8_t *data, size_t size) {
    net_ticket_rules r = {.keys = {(const unsigned char *)FUZZ_TICKET_KEY},
                          .key_lens = {sizeof FUZZ_TICKET_KEY - 1},
                          .key_count = 1,
                          .now_s = 1800000000,
                          .leeway_s = data[0] & 7u,
                          .max_bytes = 1024};
    net_ticket_claims claims;
    char why[NET_TICKET_WHY];
    static char text[1025], token[4096];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0'; /* a NUL in the input ends the JSON text there */
    size_t lens[3] = {size, 0, 0};
    const uint8_t *tokens[3] = {data, (const uint8_t *)token, (const uint8_t *)token};
    for (int i = 0; i < 3; i++) {
        if (i == 1)
            lens[1] = tm_mint(TM_HS256_HEADER, text, FUZZ_TICKET_KEY, sizeof FUZZ_TICKET_KEY - 1,
                              TM_HS256, token, sizeof token);
        if (i == 2)
            lens[2] = tm_mint(text, "{\"room\":\"default\",\"exp\":1900000000}", FUZZ_TICKET_KEY,
                              sizeof FUZZ_TICKET_KEY - 1, TM_HS256, token, sizeof token);
        if (i > 0 && lens[i] == 0) continue;
        net_ticket_status st =
            net_ticket_verify(&r, tokens[i], lens[i], "default", 7, &claims, why, sizeof why);
        /* A refusal may quote the token's own text (a signed room claim, say): it holds the key
         * only by leaking it when the input does not hold it already. */
        if (memchr(why, '\0', sizeof why) == NULL ||
            (strstr(why, FUZZ_TICKET_KEY) && !holds_key(data, size)))
            abort();
        if (st == NET_TICKET_OK &&
            (claims.exp <= r.now_s - (int64_t)r.leeway_s || (claims.has_sub && !claims.sub[0])))
            abort();
    }
}

/* Client B's ticket: for the room default, with a name and a body limit of 2 (the server's is 4).
 */
static const char *ticket_b(void) {
    static char t[512];
    if (!t[0] && !tm_mint(TM_HS256_HEADER,
                          "{\"room\":\"default\",\"exp\":4102444800,\"sub\":\"fuzz-b\","
                          "\"max_bodies\":2}",
                          FUZZ_TICKET_KEY, sizeof FUZZ_TICKET_KEY - 1, TM_HS256, t, sizeof t))
        abort();
    return t;
}

/* The Hello of a client: quantized with bit5 of the flags (at 20 Hz with bit6). */
static size_t hello_of(uint8_t flags, const char *token, uint8_t *buf, size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"tester";
    h.token = (char *)(token ? token : "");
    h.quantized = (flags & 32u) != 0;
    h.snapshot_rate_hz = (flags & 64u) ? 20u : 0u;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return tu_frame(&m, buf, cap);
}

static bool ws_upgraded, ws_closed; /* client A's WebSocket output so far */

/* Feeds c as its transport reads: WebSocket frames or length-prefixed ones. */
static void feed(net_server *srv, net_client *c, const uint8_t *data, size_t n) {
    net_client_feed(srv, c, data, n);
}

static bool is_ws(const net_client *c) { return c->transport == &net_ws_transport; }

/* Opens c (a WebSocket client with its upgrade done when ws), with a Hello when say_hello (its
 * snapshot options from the flags), and a fresh decoder q for it. */
static void open_client(net_server *srv, net_client *c, cc_qsnap *q, const char *addr,
                        const net_transport *t, bool say_hello, const char *token, uint8_t flags) {
    bool ws = t == &net_ws_transport, udp = t == &net_udp_transport;
    memset(c, 0, sizeof *c);
    cc_qsnap_free(q);
    cc_qsnap_init(q, srv->cfg.position_quantum, srv->cfg.velocity_quantum);
    c->transport = t;
    if (udp) {
        cc_qbase_free(&qbase_a);
        if (!cc_qbase_init(&qbase_a, CC_QBASE_DEFAULT)) abort();
        nacks = 0;
    }
    if (!net_client_open(srv, c, addr)) abort();
    if (ws) {
        ws_upgraded = ws_closed = false;
        net_client_feed(srv, c, (const uint8_t *)ws_upgrade, sizeof ws_upgrade - 1);
    }
    if (say_hello) {
        uint8_t buf[512];
        size_t n = hello_of(flags, token, buf, sizeof buf);
        if (ws) n = ws_wrap(buf, n, sizeof buf);
        if (udp) n = udp_wrap(buf, n, NET_UDP_CHANNEL_RELIABLE);
        feed(srv, c, buf, n);
    }
}

static void drain(net_server *srv, net_client *c, cc_qsnap *q) {
    if (is_ws(c))
        drain_ws_output(srv, c, q, &ws_upgraded, &ws_closed);
    else
        drain_output(srv, c, q);
}

/* The front's hook, as the daemon's: the directory places the Hello or the front refuses it. */
static void place(net_server *srv, net_client *c, const net_hello_request *t, void *ctx) {
    net_room_ref ref;
    net_room_status st = net_rooms_join(ctx, t->room, t->room_len, t->grant.admin, &ref);
    if (st != NET_ROOM_OK) {
        net_session_refuse_room(srv, c, t->request_id, (int)st);
        return;
    }
    net_hello_placement p = {.room_id = ref.id,
                             .thread = ref.thread,
                             .request_id = t->request_id,
                             .grant = t->grant,
                             .all_events = t->all_events};
    memcpy(p.room, t->room, t->room_len);
    net_client_hand_off(srv, c, &p);
    net_rooms_abandon(ctx, ref.id); /* no worker here: the join never arrives */
}

/* A client the server wants closed is closed, as the I/O layer would, and a fresh one opened. */
static void settle(net_server *srv, net_client *c, cc_qsnap *q, bool say_hello, const char *token,
                   uint8_t flags) {
    drain(srv, c, q);
    if (c->kill || c->handed_off || c->state == NET_CLIENT_CLOSING) {
        const net_transport *t = c->transport;
        net_client_release(srv, c);
        open_client(srv, c, q, "fuzz", t, say_hello, token, flags);
        drain(srv, c, q);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    net_log_set_level(NET_LOG_ERROR);
    uint8_t flags = data[0];
    net_config cfg;
    net_config_default(&cfg);
    cfg.max_bodies_per_client = 4;
    cfg.rate_limit = 50;
    cfg.view_radius = 40;
    cfg.max_clients = 4;
    cfg.max_queued_bytes = 16384;
    if (flags & 8u) cfg.max_frame = 256;
    if (flags & 8u) cfg.udp_snapshot_bytes = 256; /* the least: the budget leaves changes out */
    memcpy(cfg.admin_token, "adm", 4);
    cfg.admin_token_len = 3;
    /* Tickets on: every Hello token but the admin's is a ticket to verify. */
    memcpy(cfg.ticket_keys[0], FUZZ_TICKET_KEY, sizeof FUZZ_TICKET_KEY);
    cfg.ticket_key_lens[0] = sizeof FUZZ_TICKET_KEY - 1;
    cfg.ticket_key_count = 1;
    fuzz_ticket_verifier(data, size);
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 64;
    world *w = world_create(&wc);
    if (!w) abort();
    geom_shape wall;
    geom_make_box(v2(20, 1), &wall);
    world_spawn(w, WORLD_BODY_STATIC, &wall, v2(0, -5), 0, NULL, NULL);
    net_server *srv = net_server_create(&cfg, w);
    if (!srv) abort();
    static const char world_json[] = "{\"bounds\": {\"min\": [-50, -50], \"max\": [50, 50]}}";
    char *text = malloc(sizeof world_json);
    if (!text) abort();
    memcpy(text, world_json, sizeof world_json);
    net_world_text *def = net_world_text_make(text, sizeof world_json - 1);
    net_rooms_config rc = {1, 3, cfg.max_clients, true, def};
    net_hosts hosts;
    memset(&hosts, 0, sizeof hosts);
    hosts.cfg = cfg;
    hosts.dir = net_rooms_create(&rc);
    net_world_text_unref(def);
    if (!hosts.dir) abort();
    hosts.threads = 1;
    net_hosts_init_admin(&hosts);
    srv->room_admin = &hosts.room_admin;
    net_server *front = net_server_create(&cfg, NULL);
    if (!front) abort();
    net_server_set_hello_hook(front, place, hosts.dir);
    net_server *srv_b = (flags & 16u) ? front : srv;
    front->now_us = 1000000;
    fuzz_allocator.allocator_data = srv->pb_alloc;
    srv->pb_alloc = &fuzz_allocator;
    srv->now_us = 1000000;
    srv->wall_us = 1;

    static net_client a, b;
    cc_qsnap_init(&qa, cfg.position_quantum, cfg.velocity_quantum);
    cc_qsnap_init(&qb, cfg.position_quantum, cfg.velocity_quantum);
    const net_transport *ta = !(flags & 128u) ? &net_tcp_transport
                              : (flags & 16u) ? &net_udp_transport
                                              : &net_ws_transport;
    open_client(srv, &a, &qa, "a", ta, flags & 1u, (flags & 2u) ? "adm" : NULL, flags);
    open_client(srv_b, &b, &qb, "b", &net_tcp_transport, flags & 4u, ticket_b(), flags);

    size_t i = 1;
    while (i < size) {
        uint8_t ctl = data[i++];
        unsigned op = ctl & 3u, arg = ctl >> 2;
        if (op <= 1) {
            size_t n = arg + 1u;
            if (n > size - i) n = size - i;
            feed(op == 0 ? srv : srv_b, op == 0 ? &a : &b, data + i, n);
            i += n;
        } else if (op == 2) {
            srv->now_us += 16667;
            front->now_us += 16667;
            net_tick_run(srv, arg % 4u);
            net_tick_run(front, 0);
        } else if (arg == 0) {
            b.kill = true;
        } else {
            srv->now_us += (uint64_t)arg * 100000u;
            front->now_us += (uint64_t)arg * 100000u;
        }
        if (fuzz_live_allocs != 0) abort();
        settle(srv, &a, &qa, flags & 1u, NULL, flags);
        settle(srv_b, &b, &qb, flags & 4u, ticket_b(), flags);
    }
    net_client_release(srv, &a);
    net_client_release(srv_b, &b);
    net_server_destroy(srv);
    net_server_destroy(front);
    net_rooms_destroy(hosts.dir);
    world_destroy(w);
    cc_qsnap_free(&qa);
    cc_qsnap_free(&qb);
    cc_qbase_free(&qbase_a);
    return 0;
}

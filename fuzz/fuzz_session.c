/* libFuzzer target over frame decoding and message dispatch: arbitrary bytes go through
 * net_session_feed exactly as they would from a socket, with ticks, clock jumps and reconnects
 * interleaved, against a small real world. No sockets, no libuv.
 *
 * Input layout (so the fuzzer can reach deep states without first inventing a Hello):
 *   byte 0: flags. bit0: client A says a valid Hello first; bit1: with the admin token;
 *           bit2: client B says Hello first; bit3: a small max frame (256 bytes);
 *           bit4: client B is on a front (a world-less server placing Hellos in rooms through the
 *           real room directory), as the daemon's front loop is; bit5: the Hellos ask for
 *           quantized snapshots; bit6: ... at 20 Hz.
 * The world's server answers CreateRoom/CloseRoom/ListRooms through the daemon's own admin calls
 * (net_host.c) on a real directory, without worker threads.
 *   then records [ctl][payload]: ctl & 3 = 0 feed A, 1 feed B (payload of (ctl >> 2) + 1 bytes),
 *   2 run (ctl >> 2) % 4 world steps and snapshots, 3 reconnect B (ctl >> 2 == 0) or advance the
 *   clock by (ctl >> 2) * 100 ms.
 * Checked on every step: each frame the server wrote unpacks as a ServerMessage and fits the max
 * frame; every __unpack was freed (a counting allocator); ASan/UBSan/LSan do the rest. A client
 * with quantized snapshots (bit5, or a Hello of its own) has every snapshot decoded by the C
 * client's decoder (client/qsnap.c), which must accept it and end up holding exactly what the
 * server believes it sent (the client's qknown). */
#include <stdio.h>
#include <stdlib.h>

#include "net_host.h"
#include "net_log.h"
#include "net_test_util.h"
#include "qsnap.h"

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
    if (!c->quantized || c->state != NET_CLIENT_ACTIVE) return;
    if (q->t.count != c->known.count) abort();
    for (uint32_t i = 0; i < c->known.count; i++) {
        const quant_body *b = quant_table_find(&q->t, c->known.entries[i].id);
        if (!b || memcmp(&b->q, &c->qknown[i], sizeof b->q) != 0) abort();
    }
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
        if (c->quantized) decode_quantized(q, m);
        collide__v1__server_message__free_unpacked(m, NULL);
        off += pl + bl;
    }
    c->out.len = 0;
    check_in_sync(c, q);
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

/* The front's hook, as the daemon's: the directory places the Hello or the front refuses it. */
static void place(net_server *srv, net_client *c, const net_hello_ticket *t, void *ctx) {
    net_room_ref ref;
    net_room_status st = net_rooms_join(ctx, t->room, t->room_len, t->admin, &ref);
    if (st != NET_ROOM_OK) {
        net_server_refuse_room(srv, c, t->request_id, (int)st);
        return;
    }
    net_hello_placement p = {ref.id, ref.thread, t->request_id, t->admin, "", 0, false};
    memcpy(p.room, t->room, t->room_len);
    net_client_hand_off(srv, c, &p);
    net_rooms_abandon(ctx, ref.id); /* no worker here: the join never arrives */
}

/* A client the server wants closed is closed, as the I/O layer would, and a fresh one opened. */
static void settle(net_server *srv, net_client *c, cc_qsnap *q, bool say_hello, uint8_t flags) {
    drain_output(srv, c, q);
    if (c->kill || c->handed_off || c->state == NET_CLIENT_CLOSING) {
        net_client_release(srv, c);
        memset(c, 0, sizeof *c);
        cc_qsnap_free(q);
        cc_qsnap_init(q, srv->cfg.position_quantum, srv->cfg.velocity_quantum);
        net_client_open(srv, c, "fuzz");
        if (say_hello) {
            uint8_t buf[128];
            net_session_feed(srv, c, buf, hello_of(flags, NULL, buf, sizeof buf));
        }
        drain_output(srv, c, q);
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
    memcpy(cfg.admin_token, "adm", 4);
    cfg.admin_token_len = 3;
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
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    net_client_open(srv, &a, "a");
    net_client_open(srv_b, &b, "b");
    cc_qsnap_init(&qa, cfg.position_quantum, cfg.velocity_quantum);
    cc_qsnap_init(&qb, cfg.position_quantum, cfg.velocity_quantum);
    uint8_t buf[128];
    if (flags & 1u)
        net_session_feed(srv, &a, buf,
                         hello_of(flags, (flags & 2u) ? "adm" : NULL, buf, sizeof buf));
    if (flags & 4u) net_session_feed(srv_b, &b, buf, hello_of(flags, NULL, buf, sizeof buf));

    size_t i = 1;
    while (i < size) {
        uint8_t ctl = data[i++];
        unsigned op = ctl & 3u, arg = ctl >> 2;
        if (op <= 1) {
            size_t n = arg + 1u;
            if (n > size - i) n = size - i;
            net_session_feed(op == 0 ? srv : srv_b, op == 0 ? &a : &b, data + i, n);
            i += n;
        } else if (op == 2) {
            srv->now_us += 16667;
            front->now_us += 16667;
            net_server_tick(srv, arg % 4u);
            net_server_tick(front, 0);
        } else if (arg == 0) {
            b.kill = true;
        } else {
            srv->now_us += (uint64_t)arg * 100000u;
            front->now_us += (uint64_t)arg * 100000u;
        }
        if (fuzz_live_allocs != 0) abort();
        settle(srv, &a, &qa, flags & 1u, flags);
        settle(srv_b, &b, &qb, flags & 4u, flags);
    }
    net_client_release(srv, &a);
    net_client_release(srv_b, &b);
    cc_qsnap_free(&qa);
    cc_qsnap_free(&qb);
    net_server_destroy(srv);
    net_server_destroy(front);
    net_rooms_destroy(hosts.dir);
    world_destroy(w);
    return 0;
}

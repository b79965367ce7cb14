/* libFuzzer target over frame decoding and message dispatch: arbitrary bytes go through
 * net_session_feed exactly as they would from a socket, with ticks, clock jumps and reconnects
 * interleaved, against a small real world. No sockets, no libuv.
 *
 * Input layout (so the fuzzer can reach deep states without first inventing a Hello):
 *   byte 0: flags. bit0: client A says a valid Hello first; bit1: with the admin token;
 *           bit2: client B says Hello first; bit3: a small max frame (256 bytes);
 *           bit4: client B is on a front (a world-less server placing Hellos in rooms through the
 *           real room directory), as the daemon's front loop is.
 * The world's server answers CreateRoom/CloseRoom/ListRooms through the daemon's own admin calls
 * (net_host.c) on a real directory, without worker threads.
 *   then records [ctl][payload]: ctl & 3 = 0 feed A, 1 feed B (payload of (ctl >> 2) + 1 bytes),
 *   2 run (ctl >> 2) % 4 world steps and snapshots, 3 reconnect B (ctl >> 2 == 0) or advance the
 *   clock by (ctl >> 2) * 100 ms.
 * Checked on every step: each frame the server wrote unpacks as a ServerMessage and fits the max
 * frame; every __unpack was freed (a counting allocator); ASan/UBSan/LSan do the rest. */
#include <stdio.h>
#include <stdlib.h>

#include "net_host.h"
#include "net_log.h"
#include "net_test_util.h"

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

static void drain_output(net_server *srv, net_client *c) {
    size_t off = 0;
    while (off < c->out.len) {
        size_t pl = 0, bl = 0;
        if (frame_peek(c->out.data + off, c->out.len - off, srv->cfg.max_frame, &pl, &bl) !=
            FRAME_OK)
            abort();
        Collide__V1__ServerMessage *m =
            collide__v1__server_message__unpack(NULL, bl, c->out.data + off + pl);
        if (!m) abort();
        collide__v1__server_message__free_unpacked(m, NULL);
        off += pl + bl;
    }
    c->out.len = 0;
}

/* The front's hook, as the daemon's: the directory places the Hello or the front refuses it. */
static void place(net_server *srv, net_client *c, const net_hello_ticket *t, void *ctx) {
    net_room_ref ref;
    net_room_status st = net_rooms_join(ctx, t->room, t->room_len, t->admin, &ref);
    if (st != NET_ROOM_OK) {
        net_server_refuse_room(srv, c, t->request_id, (int)st);
        return;
    }
    net_hello_placement p = {ref.id, ref.thread, t->request_id, t->admin, ""};
    memcpy(p.room, t->room, t->room_len);
    net_client_hand_off(srv, c, &p);
    net_rooms_abandon(ctx, ref.id); /* no worker here: the join never arrives */
}

/* A client the server wants closed is closed, as the I/O layer would, and a fresh one opened. */
static void settle(net_server *srv, net_client *c, bool say_hello) {
    drain_output(srv, c);
    if (c->kill || c->handed_off || c->state == NET_CLIENT_CLOSING) {
        net_client_release(srv, c);
        memset(c, 0, sizeof *c);
        net_client_open(srv, c, "fuzz");
        if (say_hello) {
            uint8_t buf[128];
            net_session_feed(srv, c, buf, tu_hello(1, 1, NULL, buf, sizeof buf));
        }
        drain_output(srv, c);
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
    uint8_t buf[128];
    if (flags & 1u)
        net_session_feed(srv, &a, buf,
                         tu_hello(1, 1, (flags & 2u) ? "adm" : NULL, buf, sizeof buf));
    if (flags & 4u) net_session_feed(srv_b, &b, buf, tu_hello(1, 1, NULL, buf, sizeof buf));

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
        settle(srv, &a, flags & 1u);
        settle(srv_b, &b, flags & 4u);
    }
    net_client_release(srv, &a);
    net_client_release(srv_b, &b);
    net_server_destroy(srv);
    net_server_destroy(front);
    net_rooms_destroy(hosts.dir);
    world_destroy(w);
    return 0;
}

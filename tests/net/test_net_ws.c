/* Unit tests of the WebSocket transport's socket-free side (net_ws.h): a WebSocket client's
 * Hello placed by the front while wslay holds bytes it has not returned as frames. The bytes that
 * followed the Hello must reach the room's thread exactly, as raw frames, wherever the reads were
 * split; there a fresh frame reader serves them in the same framing. Also the server's frame
 * header at each length boundary of RFC 6455 5.2. */
#include <string.h>

#include "harness.h"
#include "net_log.h"
#include "net_rooms.h"
#include "net_server.h"
#include "net_test_util.h"
#include "net_ws.h"
#include "net_tick.h"

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name

static const char upgrade[] = "GET /v1 HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\nSec-WebSocket-Key: "
                              "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

static void place(net_server *srv, net_client *c, const net_hello_request *t, void *p) {
    (void)p;
    net_hello_placement pl = {
        .room_id = 1, .request_id = t->request_id, .grant = t->grant, .room = "r"};
    net_client_hand_off(srv, c, &pl);
}

/* The body of a varint-framed message at buf (its prefix dropped) as one binary frame. */
static size_t ws_of(const uint8_t *framed, size_t len, uint8_t *out) {
    size_t pl = 0, bl = 0;
    if (frame_peek(framed, len, UINT32_MAX, &pl, &bl) != FRAME_OK) return 0;
    return tu_ws_frame(0x2, true, framed + pl, bl, out);
}

/* The ServerMessages in a server's WebSocket output (after the 101, if any); count returned. */
static size_t ws_messages(const net_buf *out, tu_smsg **msgs, size_t max) {
    size_t off = 0, k = 0;
    if (out->len > 12 && memcmp(out->data, "HTTP/1.1 101", 12) == 0) {
        while (off + 4 <= out->len && memcmp(out->data + off, "\r\n\r\n", 4) != 0)
            off++;
        off += 4;
    }
    while (off + 2 <= out->len && k < max) {
        const uint8_t *f = out->data + off;
        size_t n = f[1] & 0x7f, h = 2;
        if (n == 126) {
            n = (size_t)f[2] << 8 | f[3];
            h = 4;
        }
        if ((f[1] & 0x80) || off + h + n > out->len) break; /* malformed: counted short */
        if ((f[0] & 0x0f) == 0x2) msgs[k++] = collide__v1__server_message__unpack(NULL, n, f + h);
        off += h + n;
    }
    return k;
}

static void test_hand_off_keeps_the_raw_bytes_after_hello(void) {
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    /* The stream: the upgrade, a Hello, then a Ping message in two fragments with a WebSocket
     * ping between them, then a second Ping of 300 bytes (padded: a 126 length form). */
    uint8_t stream[2048], tmp[512];
    size_t len = sizeof upgrade - 1;
    memcpy(stream, upgrade, len);
    size_t hello_start = len;
    len += ws_of(tmp, tu_hello(7, 1, NULL, tmp, sizeof tmp), stream + len);
    size_t after_hello = len;
    size_t pl = tu_ping(8, 4242, tmp, sizeof tmp);
    len += tu_ws_frame(0x2, false, tmp + 1, 3, stream + len); /* tmp[0] is the 1-byte prefix */
    len += tu_ws_frame(0x9, true, (const uint8_t *)"p", 1, stream + len);
    len += tu_ws_frame(0x0, true, tmp + 4, pl - 4, stream + len);
    Collide__V1__Ping pg = COLLIDE__V1__PING__INIT;
    pg.client_time_us = 77;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 9;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_PING;
    m.ping = &pg;
    size_t body = collide__v1__client_message__pack(&m, tmp);
    /* padded to 300 bytes with unknown field 100 (skipped): key a2 06, a 2-byte length */
    size_t pad = 300 - body - 4;
    tmp[body] = 0xa2;
    tmp[body + 1] = 0x06;
    tmp[body + 2] = (uint8_t)(0x80 | (pad & 0x7f));
    tmp[body + 3] = (uint8_t)(pad >> 7);
    memset(tmp + body + 4, 0, pad);
    len += tu_ws_frame(0x2, true, tmp, 300, stream + len);
    CHECK(len < sizeof stream);

    /* Every way of splitting the stream in two reads, and around the Hello in three. */
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 64;
    world *w = world_create(&wc);
    net_server *front = net_server_create(&cfg, NULL);
    net_server *room = net_server_create(&cfg, w);
    CHECK(w && front && room);
    net_server_set_hello_hook(front, place, NULL);
    front->now_us = room->now_us = 1000000;
    int checked = 0;
    for (size_t cut = 1; cut < len; cut++) {
        bool near = cut + 8 >= hello_start && cut <= after_hello + 16;
        for (size_t cut2 = near ? cut : len; cut2 <= (near ? after_hello + 24 : len); cut2++) {
            net_client a;
            memset(&a, 0, sizeof a);
            a.transport = &net_ws_transport;
            CHECK(net_client_open(front, &a, "10.0.0.1:5"));
            net_client_feed(front, &a, stream, cut);
            net_client_feed(front, &a, stream + cut, cut2 - cut);
            net_client_feed(front, &a, stream + cut2, len - cut2);
            CHECK_MSG(a.handed_off && a.placement.transport == net_ws_transport.id,
                      "cut %zu/%zu: placed, as WebSocket", cut, cut2);
            CHECK_MSG(
                a.in.len == len - after_hello &&
                    memcmp(a.in.data, stream + after_hello, a.in.len) == 0,
                "cut %zu/%zu: the %zu raw bytes after the Hello must be kept exactly, got %zu", cut,
                cut2, len - after_hello, a.in.len);

            /* The room: a fresh frame reader serves them, answers in frames. */
            net_client b;
            memset(&b, 0, sizeof b);
            b.transport = net_transport_at(a.placement.transport);
            CHECK(net_client_open_adopted(room, &b, a.addr));
            net_session_welcome(room, &b, 7, &a.placement.grant, a.name, "r");
            net_client_feed(room, &b, a.in.data, a.in.len);
            tu_smsg *msgs[8];
            size_t k = ws_messages(&b.out, msgs, 8);
            CHECK_MSG(
                k == 3 && msgs[0] && msgs[0]->msg_case == S(WELCOME) && msgs[1] &&
                    msgs[1]->msg_case == S(PONG) && msgs[1]->pong->client_time_us == 4242 &&
                    msgs[2] && msgs[2]->msg_case == S(PONG) && msgs[2]->pong->client_time_us == 77,
                "cut %zu/%zu: Welcome and both Pongs, in frames (%zu messages)", cut, cut2, k);
            /* the WebSocket ping between the fragments got its pong (opcode 0xa, payload "p") */
            bool pong_frame = false;
            for (size_t i = 0; i + 3 <= b.out.len; i++)
                pong_frame |=
                    b.out.data[i] == 0x8a && b.out.data[i + 1] == 1 && b.out.data[i + 2] == 'p';
            CHECK_MSG(pong_frame, "cut %zu/%zu: the ping between fragments is answered", cut, cut2);
            for (size_t i = 0; i < k; i++)
                collide__v1__server_message__free_unpacked(msgs[i], NULL);
            net_client_release(room, &b);
            net_client_release(front, &a);
            checked++;
        }
    }
    net_server_destroy(room);
    net_server_destroy(front);
    world_destroy(w);
    CHECK(checked > 500);
}

/* One read holding the upgrade, the Hello and more than the 8 KiB handshake buffer keeps: the
 * bytes past the buffer are the room's too. */
static void test_hand_off_from_one_big_read(void) {
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.rate_limit = 1e6f;
    cfg.rate_limit_bytes = 1e9f;
    static uint8_t stream[16384];
    uint8_t tmp[512];
    size_t len = sizeof upgrade - 1;
    memcpy(stream, upgrade, len);
    len += ws_of(tmp, tu_hello(7, 1, NULL, tmp, sizeof tmp), stream + len);
    size_t after_hello = len;
    int pings = 0;
    while (len < NET_WS_MAX_HANDSHAKE + 2048) {
        len += ws_of(tmp, tu_ping((uint32_t)(100 + pings), (uint64_t)pings, tmp, sizeof tmp),
                     stream + len);
        pings++;
    }
    net_server *front = net_server_create(&cfg, NULL);
    CHECK(front != NULL);
    net_server_set_hello_hook(front, place, NULL);
    front->now_us = 1000000;
    net_client a;
    memset(&a, 0, sizeof a);
    a.transport = &net_ws_transport;
    CHECK(net_client_open(front, &a, "10.0.0.1:5"));
    net_client_feed(front, &a, stream, len);
    CHECK(a.handed_off);
    CHECK_MSG(a.in.len == len - after_hello &&
                  memcmp(a.in.data, stream + after_hello, a.in.len) == 0,
              "the %zu bytes after the Hello (%d pings, past the 8 KiB buffer) must all be kept, "
              "got %zu",
              len - after_hello, pings, a.in.len);
    net_client_release(front, &a);
    net_server_destroy(front);
}

static void test_frame_header_lengths(void) {
    static const struct {
        uint64_t len;
        size_t hlen;
        uint8_t second;
    } cases[] = {{0, 2, 0},       {125, 2, 125},    {126, 4, 126},
                 {65535, 4, 126}, {65536, 10, 127}, {(uint64_t)1 << 40, 10, 127}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t h[NET_WS_MAX_HEADER];
        size_t n = net_ws_frame_header(0x2, cases[i].len, h);
        CHECK_MSG(n == cases[i].hlen && h[0] == 0x82 && h[1] == cases[i].second,
                  "length %llu: header of %zu bytes starting 82 %02x, got %zu, %02x %02x",
                  (unsigned long long)cases[i].len, cases[i].hlen, cases[i].second, n, h[0], h[1]);
        uint64_t back = cases[i].len < 126 ? h[1] : 0;
        for (size_t j = 2; j < n; j++)
            back = back << 8 | h[j];
        CHECK_MSG(back == cases[i].len, "length %llu read back as %llu",
                  (unsigned long long)cases[i].len, (unsigned long long)back);
    }
}

TEST_MAIN(TEST(test_hand_off_keeps_the_raw_bytes_after_hello),
          TEST(test_hand_off_from_one_big_read), TEST(test_frame_header_lengths))

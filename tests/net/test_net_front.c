/* Unit tests of front mode (docs/rooms-design.md): a server with no world holds connections until
 * their Hello, checks it, and lets a hook place the client in a room through the real directory;
 * what the client sent after its Hello is kept for the room; the room's server welcomes the
 * client and serves those bytes. */
#include <string.h>

#include "harness.h"
#include "net_log.h"
#include "net_rooms.h"
#include "net_server.h"
#include "net_test_util.h"
#include "net_tick.h"

#define E(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name
#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name

typedef struct hook_ctx {
    net_rooms *rooms;
    net_room_ref last;
    int calls;
} hook_ctx;

static void place(net_server *srv, net_client *c, const net_hello_request *t, void *p) {
    hook_ctx *h = p;
    h->calls++;
    net_room_ref ref;
    int st = (int)net_rooms_join(h->rooms, t->room, t->room_len, t->grant.admin, &ref);
    if (st != NET_ROOM_OK) {
        net_session_refuse_room(srv, c, t->request_id, st);
        return;
    }
    h->last = ref;
    net_hello_placement pl = {.room_id = ref.id,
                              .thread = ref.thread,
                              .request_id = t->request_id,
                              .grant = t->grant,
                              .all_events = t->all_events};
    memcpy(pl.room, t->room, t->room_len);
    net_client_hand_off(srv, c, &pl);
}

static size_t hello_room(uint32_t rid, const char *room, uint8_t *out, size_t cap) {
    Collide__V1__Hello hl = COLLIDE__V1__HELLO__INIT;
    hl.protocol_version = 1;
    hl.name = (char *)"alice";
    hl.room = (char *)room;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &hl;
    return tu_frame(&m, out, cap);
}

static int first_error(net_client *c, bool *fatal) {
    tu_msgs msgs;
    tu_take(c, &msgs);
    int code = -1;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == S(ERROR)) {
            code = (int)msgs.m[i]->error->code;
            *fatal = msgs.m[i]->error->fatal;
            break;
        }
    tu_free(&msgs);
    return code;
}

static void test_hello_placed_and_the_rest_kept(void) {
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    net_rooms_config rc = {2, 8, 2, true, NULL};
    hook_ctx h = {net_rooms_create(&rc), {0, 0, false}, 0};
    net_server *front = net_server_create(&cfg, NULL);
    CHECK(front && h.rooms);
    net_server_set_hello_hook(front, place, &h);
    front->now_us = 1000000;

    /* Hello for room r1 and a Ping pipelined behind it, in one read */
    uint8_t buf[512];
    net_client a;
    memset(&a, 0, sizeof a);
    CHECK(net_client_open(front, &a, "10.0.0.1:5"));
    CHECK(net_server_pending_count(front) == 1);
    size_t n = hello_room(7, "r1", buf, sizeof buf);
    size_t ping_len = tu_ping(8, 4242, buf + n, sizeof buf - n);
    net_client_feed(front, &a, buf, n + ping_len);
    CHECK(h.calls == 1 && h.last.created && a.handed_off);
    CHECK(net_client_next_io(&a) == NET_IO_HAND_OFF && a.out.len == 0);
    CHECK(net_server_pending_count(front) == 0);
    CHECK_MSG(a.in.len == ping_len && memcmp(a.in.data, buf + n, ping_len) == 0,
              "the bytes after Hello must be kept whole: %zu of %zu", a.in.len, ping_len);
    /* more bytes arriving before the socket is detached are kept too, in order */
    size_t ping2 = tu_ping(9, 77, buf, sizeof buf);
    net_client_feed(front, &a, buf, ping2);
    CHECK(a.in.len == ping_len + ping2);

    /* the room's side: a server with a world adopts the client and serves the kept bytes */
    world_config wc;
    world_config_default(&wc);
    world *w = world_create(&wc);
    net_server *room = net_server_create(&cfg, w);
    CHECK(w && room);
    room->now_us = 1000000;
    net_client b;
    memset(&b, 0, sizeof b);
    CHECK(net_client_open(room, &b, a.addr));
    CHECK(net_rooms_arrived(h.rooms, h.last.id));
    net_session_welcome(room, &b, 7, &a.placement.grant, a.name, "r1");
    net_client_feed(room, &b, a.in.data, a.in.len);
    tu_msgs msgs;
    tu_take(&b, &msgs);
    CHECK(msgs.count == 3 && msgs.m[0]->msg_case == S(WELCOME) && msgs.m[0]->request_id == 7);
    CHECK(strcmp(msgs.m[0]->welcome->room, "r1") == 0 && msgs.m[0]->welcome->n_features >= 1);
    CHECK(msgs.m[1]->msg_case == S(PONG) && msgs.m[1]->pong->client_time_us == 4242);
    CHECK(msgs.m[2]->msg_case == S(PONG) && msgs.m[2]->pong->client_time_us == 77);
    tu_free(&msgs);
    CHECK(strcmp(b.name, "alice") == 0 && b.state == NET_CLIENT_ACTIVE);

    /* the front's release of a handed-off client is no disconnect */
    uint64_t before = 0, after = 0;
    for (int r = 0; r < NET_DISC_REASON_COUNT; r++)
        before += front->metrics.disconnects_total[r];
    net_client_release(front, &a);
    for (int r = 0; r < NET_DISC_REASON_COUNT; r++)
        after += front->metrics.disconnects_total[r];
    CHECK(after == before);

    /* a bad room name: BAD_REQUEST, fatal, the hook never asked */
    net_client c;
    memset(&c, 0, sizeof c);
    CHECK(net_client_open(front, &c, "10.0.0.2:5"));
    net_client_feed(front, &c, buf, hello_room(1, "no spaces", buf, sizeof buf));
    bool fatal = false;
    CHECK(first_error(&c, &fatal) == E(BAD_REQUEST) && fatal && h.calls == 1);
    net_client_release(front, &c);

    /* --max-clients 2 in the directory (b counts): the second placed join is refused */
    net_client d1, d2;
    memset(&d1, 0, sizeof d1);
    memset(&d2, 0, sizeof d2);
    CHECK(net_client_open(front, &d1, "10.0.0.3:5") && net_client_open(front, &d2, "10.0.0.3:6"));
    net_client_feed(front, &d1, buf, hello_room(1, "", buf, sizeof buf));
    CHECK(d1.handed_off && h.last.thread == 0); /* "" is default, on thread 0 */
    net_client_feed(front, &d2, buf, hello_room(1, "r1", buf, sizeof buf));
    CHECK(!d2.handed_off && first_error(&d2, &fatal) == E(LIMIT_EXCEEDED) && fatal);
    net_rooms_abandon(h.rooms, h.last.id); /* d1 never arrives */
    net_client_release(front, &d1);
    net_client_release(front, &d2);
    net_client_release(room, &b);
    net_rooms_left(h.rooms, h.last.id);
    net_server_destroy(room);
    world_destroy(w);
    net_server_destroy(front);
    net_rooms_destroy(h.rooms);
}

TEST_MAIN(TEST(test_hello_placed_and_the_rest_kept))

/* Unit tests of net_room on a real libuv loop: a room built from the directory's world text ticks
 * on its own timer and publishes its tick; an auto room without clients closes after
 * --room-idle-ms (and leaves the directory), an admin's room does not; a closed room's clients
 * get Goodbye with the reason. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "net_conn.h"
#include "net_log.h"
#include "net_room.h"
#include "net_room_test_util.h"
#include "net_test_util.h"
#include "net_tick.h"

static void test_ticks_and_idle_close(void) {
    net_log_set_level(NET_LOG_ERROR);
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop) == 0);
    net_config cfg;
    net_config_default(&cfg);
    cfg.tick_rate_hz = 200.0f;
    cfg.room_idle_ms = 150;
    net_world_text *text = net_world_text_make(strdup(WORLD), sizeof WORLD - 1);
    net_rooms_config rc = {1, 8, 100, true, text};
    net_rooms *dir = net_rooms_create(&rc);
    net_world_text_unref(text);
    net_room_ref ref, admin_ref;
    CHECK(net_rooms_join(dir, "match", 5, false, &ref) == NET_ROOM_OK && ref.created);
    CHECK(net_rooms_create_room(dir, "kept", 4, 0, NULL, &admin_ref) == NET_ROOM_OK);
    char err[256];
    net_room *r = net_room_open(&loop, dir, ref.id, "match", &cfg, err, sizeof err);
    net_room *k = net_room_open(&loop, dir, admin_ref.id, "kept", &cfg, err, sizeof err);
    CHECK_MSG(r && k, "%s", err);
    r->on_closed = k->on_closed = on_closed;
    CHECK(r->auto_created && !k->auto_created && r->spawns->count == 1);
    /* a join is in flight: no idle close however long, and the room ticks */
    run_for(&loop, 300);
    net_room_info info;
    CHECK(net_rooms_find(dir, "match", 5, &info) && closed_calls == 0);
    CHECK_MSG(world_tick(r->world) >= 30, "ticks %llu in 300 ms at 200 Hz",
              (unsigned long long)world_tick(r->world));
    CHECK(info.tick > 0 && info.tick <= world_tick(r->world) && info.bodies == 1);
    /* the client arrives, plays, and leaves: --room-idle-ms (150) counts from its departure; the
     * auto room then leaves the directory and closes, "kept" stays */
    CHECK(net_rooms_arrived(dir, ref.id));
    net_client p;
    memset(&p, 0, sizeof p);
    CHECK(net_client_open(r->srv, &p, "10.0.0.2:1"));
    net_session_welcome(r->srv, &p, 1, &(net_grant){0}, "pat", "match");
    run_for(&loop, 50);
    net_client_release(r->srv, &p);
    net_rooms_left(dir, ref.id);
    net_room_client_left(r);
    run_for(&loop, 100);
    CHECK(closed_calls == 0 && net_rooms_find(dir, "match", 5, &info)); /* not yet: 150 ms */
    run_for(&loop, 300);
    CHECK(closed_calls == 1 && !net_rooms_find(dir, "match", 5, &info));
    CHECK(net_rooms_find(dir, "kept", 4, &info));
    net_room_free(r);
    /* an admin's close: its client gets Goodbye with the reason, and the room closes once the
     * client is gone */
    net_client c;
    memset(&c, 0, sizeof c);
    CHECK(net_client_open(k->srv, &c, "10.0.0.1:1"));
    net_session_welcome(k->srv, &c, 1, &(net_grant){0}, "bob", "kept");
    tu_msgs msgs;
    tu_take(&c, &msgs);
    tu_free(&msgs);
    net_room_close(k, "maintenance", NET_DISC_ROOM_CLOSED);
    run_for(&loop, 20);
    CHECK(closed_calls == 1); /* its client is still there */
    tu_take(&c, &msgs);
    bool bye = false;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE)
            bye = strcmp(msgs.m[i]->goodbye->reason, "maintenance") == 0;
    tu_free(&msgs);
    CHECK(bye && c.state == NET_CLIENT_CLOSING && c.reason == NET_DISC_ROOM_CLOSED);
    net_client_release(k->srv, &c);
    net_room_client_left(k);
    run_for(&loop, 20);
    CHECK(closed_calls == 2);
    net_room_free(k);
    net_rooms_destroy(dir);
    CHECK(uv_loop_close(&loop) == 0);
}

static void flush_room(uv_prepare_t *p) { net_conn_flush(p->data); }

/* The worker's side of a hand-off: a socket taken over by fd becomes a welcomed client of the
 * room's server, and the bytes that followed its Hello (kept by the front) are served first. */
static void test_adopt_socket(void) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop) == 0);
    net_config cfg;
    net_config_default(&cfg);
    world_config wc;
    world_config_default(&wc);
    world *w = world_create(&wc);
    net_server *srv = net_server_create(&cfg, w);
    static uint8_t read_buf[65536];
    net_conn_host host = {.loop = &loop, .read_buf = read_buf, .read_buf_size = sizeof read_buf};
    uv_prepare_t flush;
    uv_prepare_init(&loop, &flush);
    flush.data = srv;
    uv_prepare_start(&flush, flush_room);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 4) == 0 &&
          getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
    int cfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(cfd, (struct sockaddr *)&a, sizeof a) == 0);
    int sfd = accept(lfd, NULL, NULL);
    CHECK(sfd >= 0);
    uint8_t left[64];
    size_t left_len = tu_ping(9, 4242, left, sizeof left);
    net_hello_request t = {.request_id = 5, .name = "alice", .room = "r1", .room_len = 2};
    CHECK(net_conn_adopt(&host, srv, sfd, &t, left, left_len));
    CHECK(host.conn_count == 1 && net_server_client_count(srv) == 1);

    /* read the Welcome and the Pong on the client side while the loop runs */
    fcntl(cfd, F_SETFL, O_NONBLOCK);
    uint8_t in[4096];
    size_t have = 0;
    bool welcome = false, pong = false;
    for (int i = 0; i < 200 && !(welcome && pong); i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        ssize_t n = recv(cfd, in + have, sizeof in - have, 0);
        if (n > 0) have += (size_t)n;
        size_t off = 0;
        while (off < have) {
            size_t plen = 0, blen = 0;
            if (frame_peek(in + off, have - off, 65536, &plen, &blen) != FRAME_OK) break;
            tu_smsg *m = collide__v1__server_message__unpack(NULL, blen, in + off + plen);
            if (m && m->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME)
                welcome = m->request_id == 5 && strcmp(m->welcome->room, "r1") == 0;
            if (m && m->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_PONG)
                pong = welcome && m->pong->client_time_us == 4242;
            if (m) collide__v1__server_message__free_unpacked(m, NULL);
            off += plen + blen;
        }
        memmove(in, in + off, have - off);
        have -= off;
        usleep(5000);
    }
    CHECK_MSG(welcome && pong, "welcome %d, then pong %d", welcome, pong);
    /* the client leaves: the connection closes on its one path and is freed */
    close(cfd);
    for (int i = 0; i < 200 && host.conn_count > 0; i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(2000);
    }
    CHECK(host.conn_count == 0 && net_server_client_count(srv) == 0);
    uv_close((uv_handle_t *)&flush, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    close(lfd);
    net_server_destroy(srv);
    world_destroy(w);
}

TEST_MAIN(TEST(test_ticks_and_idle_close), TEST(test_adopt_socket))

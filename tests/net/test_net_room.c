/* Unit tests of net_room on a real libuv loop: a room built from the directory's world text ticks
 * on its own timer and publishes its tick; an auto room without clients closes after
 * --room-idle-ms (and leaves the directory), an admin's room does not; a closed room's clients
 * get Goodbye with the reason. */
#include "harness.h"
#include "net_log.h"
#include "net_room.h"
#include "net_test_util.h"

static const char WORLD[] = "{\"bounds\": {\"min\": [-100, -100], \"max\": [100, 100]},"
                            " \"statics\": [{\"position\": [0, -10], \"box\": {\"half_extents\":"
                            " [50, 1]}}], \"spawn_points\": [[0, 0]]}";

static int closed_calls;
static void on_closed(net_room *r) {
    (void)r;
    closed_calls++;
}

static void stop_loop(uv_timer_t *t) { uv_stop(t->loop); }

/* Runs the loop for ms milliseconds (or until nothing is left to run). */
static void run_for(uv_loop_t *loop, uint64_t ms) {
    uv_timer_t t;
    uv_timer_init(loop, &t);
    uv_timer_start(&t, stop_loop, ms, 0);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

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
    net_server_welcome(r->srv, &p, 1, false, "pat", "match");
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
    net_server_welcome(k->srv, &c, 1, false, "bob", "kept");
    tu_msgs msgs;
    tu_take(&c, &msgs);
    tu_free(&msgs);
    net_room_close(k, "maintenance");
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

TEST_MAIN(TEST(test_ticks_and_idle_close))

/* What the tests of a room on a real libuv loop share (test_net_room, test_net_record): a small
 * world, a count of rooms closed, and running the loop for a while. */
#ifndef COLLIDE_NET_ROOM_TEST_UTIL_H
#define COLLIDE_NET_ROOM_TEST_UTIL_H

#include <uv.h>

#include "net_room.h"

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

#endif

/* net_agones: collided as an Agones GameServer (ARCHITECTURE.md "Scale-out: Agones"). A client of
 * the Agones SDK sidecar's REST gateway (http://localhost:$AGONES_SDK_HTTP_PORT), run on the
 * front's libuv loop:
 *  - POST /ready once every listener is up and the room `default` has ticked;
 *  - POST /health every --agones-health-ms;
 *  - PATCH /v1beta1/counters/players {count, capacity = --max-clients} and the list `rooms` kept
 *    equal to the directory's rooms (POST /v1beta1/lists/rooms:addValue / :removeValue),
 *    coalesced: the front compares the directory with what it last sent and sends the
 *    difference, the counter at most once per NET_AGONES_SYNC_MS, one call in flight at a time;
 *  - GET /watch/gameserver (newline-delimited JSON) to learn that the server was Allocated;
 *  - POST /shutdown after the drain.
 * Every call is retried with backoff (the sidecar may start after the daemon or restart); a
 * failed attempt is logged and counted (collide_agones_errors_total) and never stops the game.
 *
 * HTTP is libcurl's multi-socket API: curl says which sockets to watch and when it wants a timer,
 * and this file maps those onto uv_poll_t and uv_timer_t handles of the front's loop, so no
 * thread is added and nothing blocks the loop (docs/operations.md "Agones" says why libcurl). */
#ifndef COLLIDE_NET_AGONES_H
#define COLLIDE_NET_AGONES_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "net_buf.h"
#include "net_rooms.h"

#define NET_AGONES_DEFAULT_PORT 9358       /* the sidecar's HTTP port when the variable is unset */
#define NET_AGONES_SYNC_MS 200             /* the counter is sent at most this often */
#define NET_AGONES_BACKOFF_MIN_MS 100      /* first retry after a failure, doubled each time... */
#define NET_AGONES_BACKOFF_MAX_MS 1000     /* ...up to this */
#define NET_AGONES_CALL_TIMEOUT_MS 2000    /* a unary call not answered by then has failed */
#define NET_AGONES_SHUTDOWN_BUDGET_MS 3000 /* Shutdown is retried this long, then exit anyway */

typedef struct net_agones net_agones;

typedef struct net_agones_config {
    uint16_t port;        /* the sidecar's HTTP port */
    uint32_t health_ms;   /* Health period */
    uint32_t max_clients; /* the players counter's capacity */
    uint32_t max_rooms;   /* rooms besides `default`: the most the list can hold is this + 1 */
} net_agones_config;

/* Starts the client on loop (the Health timer and the watch begin now). NULL when out of memory
 * or libcurl cannot start (logged; the daemon runs without Agones then). */
net_agones *net_agones_start(uv_loop_t *loop, net_rooms *dir, const net_agones_config *cfg);
/* Every listener is up: Ready is sent as soon as `default` has ticked, retried until accepted. */
void net_agones_listening(net_agones *a);
/* The drain is over: POST /shutdown, retried for up to NET_AGONES_SHUTDOWN_BUDGET_MS; then
 * done(ctx) is called once (accepted or not) and every handle is closed. Health, the counter and
 * list updates and the watch stop now. */
void net_agones_shutdown(net_agones *a, void (*done)(void *ctx), void *ctx);
/* Closes every handle without Shutdown (a daemon that failed to start). */
void net_agones_close(net_agones *a);
/* Frees what is left once the loop has run the close callbacks. NULL allowed. */
void net_agones_free(net_agones *a);

/* The collide_agones_* series for /metrics. */
bool net_agones_render_metrics(const net_agones *a, net_buf *out);
/* `"agones": {...}` for /rooms: the GameServer state last seen on the watch, whether Ready was
 * accepted and Allocated seen, and the GameServer's labels. */
bool net_agones_render_json(const net_agones *a, net_buf *out);

#endif

/* net_ops: the ops port of collided (docs/operations.md), on the front's loop: GET or HEAD of
 * /healthz, /metrics and /rooms over HTTP/1.1, one request per connection. /healthz is answered at
 * once; /metrics and /rooms wait for the workers' figures (net_hosts_collect), one collection
 * serving every request that arrived before it started. The port is capped in total and per
 * remote address, a request must be whole within --http-timeout-ms, and at a cap the oldest
 * connection that has not asked anything yet makes room for the newcomer. Requests are parsed by
 * net_http.h; the expositions are rendered by net_metrics.h, net_rooms.h and net_agones.h. */
#ifndef COLLIDE_NET_OPS_H
#define COLLIDE_NET_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "net_agones.h"
#include "net_host.h"
#include "net_rooms.h"
#include "net_server.h"

typedef struct net_ops_conn net_ops_conn;

/* The ops port's state, inside its owner. The owner fills the first block before the first
 * accept and leaves it in place until count is back to 0; this module keeps the rest. */
typedef struct net_ops {
    uv_loop_t *loop;      /* the front's loop */
    net_server *srv;      /* the front: clock, caps and timeout, its figures, the close counters */
    net_rooms *dir;       /* the directory, for /rooms */
    net_hosts *hosts;     /* the workers whose figures are collected; NULL while none run */
    net_agones *agones;   /* its state joins /rooms and /metrics (NULL: off) */
    const bool *draining; /* the owner's drain flag: /healthz answers 503 once it is set */
    void (*on_freed)(struct net_ops *ops); /* after a connection's memory is freed; may be NULL */
    void *data;                            /* the owner's */

    net_ops_conn *conns; /* open connections, newest first */
    uint32_t count;      /* connections not yet freed */
    uint32_t open;       /* of those, not closing: what --http-max-connections caps (a closed slot
                            is free at once, not after uv_close's callback one loop turn later) */
    bool collecting;     /* a collection of the workers' figures is in flight */
} net_ops;

/* Accepts one pending connection from `listener` (its connection callback had status 0), making
 * room at a cap or refusing it when every slot is being answered. */
void net_ops_accept(net_ops *ops, uv_stream_t *listener);

/* Closes the connections whose request is not whole within --http-timeout-ms (from the owner's
 * housekeeping timer, the server's clock already set). */
void net_ops_sweep(net_ops *ops);

/* The collection in flight is complete (the owner saw hosts->collect_left at 0 under the lock,
 * with ops->collecting set): answers the requests that waited for it, frees it and starts the
 * next for those that asked meanwhile. */
void net_ops_collected(net_ops *ops);

/* Closes every connection (the end of the drain). */
void net_ops_close_all(net_ops *ops);

#endif

/* net_conn: the libuv side of game connections, for whichever loop runs them: the front's
 * (net_daemon.c, until the Hello) and each worker's (net_host.c, once handed off). A connection
 * reads into its loop's shared buffer, feeds its own net_server, writes what that server queued for
 * it when the owner flushes the server's dirty list, and closes on one idempotent path. Each
 * connection belongs to one net_server and one host for its whole life; a loop owner may run
 * several servers on one host. All protocol decisions stay in net_server/net_session. */
#ifndef COLLIDE_NET_CONN_H
#define COLLIDE_NET_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net_server.h"

/* What a loop owner provides to the connections on its loop. Filled by the owner and left in
 * place (the connections point at it) until conn_count is back to 0. */
typedef struct net_conn_host {
    uv_loop_t *loop;      /* the loop the connections run on */
    uint8_t *read_buf;    /* shared read buffer (reads are handled one at a time on a loop) */
    size_t read_buf_size; /* bytes at read_buf */
    uint32_t conn_count;  /* connections not yet freed (kept by this module) */
    /* Called after a connection's memory is freed and conn_count lowered; may be NULL. */
    void (*on_freed)(struct net_conn_host *host);
    /* Called once a client of srv is closed and released (welcomed: it had been welcomed, and
     * counted in its room); may be NULL. */
    void (*on_client_closed)(struct net_conn_host *host, net_server *srv, bool welcomed);
    /* Front mode: c was placed in a room (NET_IO_HAND_OFF). fd is a duplicate of its socket,
     * now the callee's to pass on or close; c (its placement, and in c->in the bytes that
     * followed its Hello) is valid during the call only. The connection is then closed here
     * without counting a disconnect. NULL: such a client is cut. */
    void (*on_hand_off)(struct net_conn_host *host, net_server *srv, net_client *c, int fd);
    void *data; /* the owner's */
} net_conn_host;

/* Accepts one pending connection from `listener` (its connection callback had status 0) as a
 * client of `srv` speaking transport t (net_transport.h; the listener's): TCP_NODELAY, a capped
 * send buffer, reads started. It keeps that transport for its whole life, in a room's thread too.
 * A connection the server does not register is closed at once (and counted until its close
 * callback, as any other). */
void net_conn_accept(net_conn_host *host, net_server *srv, uv_stream_t *listener,
                     const net_transport *t);

/* The worker's side of a hand-off (docs/rooms-design.md): opens the socket fd (taken over) on
 * host's loop as a client of the room server srv, welcomes it (request_id, admin, name, room:
 * the front's request; its transport, t->transport) and feeds it the bytes that followed its Hello,
 * as if just read. False when it could not (the fd is closed then). */
bool net_conn_adopt(net_conn_host *host, net_server *srv, int fd, const net_hello_request *t,
                    const uint8_t *leftover, size_t leftover_len);

/* A hand-off the worker cannot honour (its room closed meanwhile, the drain began): opens fd on
 * host's loop as a client of srv (a world-less server of the worker's) only to send it the fatal
 * Error of net_session_refuse_room(status) and close. */
void net_conn_refuse(net_conn_host *host, net_server *srv, int fd, uint32_t request_id, int status,
                     uint32_t transport);

/* Writes every client on srv's dirty list, or closes those the server decided to close (a client
 * with its own io_flush, a UDP peer, is given to it). An
 * owner with several servers on a loop calls it for each, before the loop sleeps. True when
 * anything was popped: the caller then updates the loop time (uv_update_time), see the daemon's
 * flush. */
bool net_conn_flush(net_server *srv);

/* Gives srv the current monotonic (uv_hrtime) and wall clocks, in microseconds. */
void net_conn_set_clock(net_server *srv);

#endif

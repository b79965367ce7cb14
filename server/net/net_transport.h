/* net_transport: how a client's messages are carried, behind one small interface, and the table
 * of the transports the daemon speaks. A transport turns the bytes read from a socket into whole
 * ClientMessages for the session (feed, which calls net_session_message), writes the framing
 * before each ServerMessage (frame_prefix), says what closing means on its wire (on_closing,
 * linger) and owns its per-client state (open, free). Nothing outside a transport's own file
 * asks which transport a client has: the registry calls these pointers, the connection layer
 * picks a transport by listener, a hand-off carries it by id, and /metrics labels its counters
 * by name. As the TypeScript SDK's Transport (client/js/src/transport.ts).
 *
 * The transports:
 *   net_tcp.c  "tcp": a varint length prefix before each message (proto/frame.h)
 *   net_ws.c   "ws":  one binary WebSocket message per message (RFC 6455), after the upgrade
 *   net_udp.c  "udp": one ENet packet per message, on a channel (the front's ENet host,
 *              net_udp_host.c, carries the packets; feed gets the channel before the message)
 * A new transport is one file defining its net_transport, plus a line in net_transport.c's
 * table (or net_transport_register at run time, as the test's in-memory transport does).
 *
 * This header is a leaf: it names the registry's types but includes none of them, so the
 * registry (net_server.c) can call through it without pointing up at any transport. */
#ifndef COLLIDE_NET_TRANSPORT_H
#define COLLIDE_NET_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_server;
struct net_client;
struct net_metrics;
struct net_buf;

#define NET_MAX_FRAME_PREFIX 10 /* the longest framing before a body: a WebSocket header */
#define NET_TRANSPORT_MAX 4     /* transports one process may register (net_metrics.h sizes) */

typedef struct net_transport {
    const char *name; /* label value of collide_transport_*{transport=...}; unique */
    uint32_t id;      /* its place in the table and in net_metrics.transports */
    /* Messages go as packets that may be lost (PROTOCOL.md "Datagrams"): snapshots quantized,
     * against the client's acknowledged baselines (net_baselines.h), within
     * --udp-snapshot-bytes; events as Events messages, which the transport carries on its
     * reliable channel. False for the stream transports (TCP, WebSocket). */
    bool datagram;
    /* Makes c->transport_state for a client about to be registered; adopted: handed over by the
     * front after its handshake (its Hello already answered there). False when out of memory. */
    bool (*open)(struct net_client *c, bool adopted);
    /* Frees c->transport_state (at release); idempotent. */
    void (*free)(struct net_client *c);
    /* Bytes read from c's socket (already counted in bytes_in_total): every whole message goes
     * to net_session_message, in order, while c accepts input; what follows a hand-off is kept
     * in c->in for the room's thread. */
    void (*feed)(struct net_server *srv, struct net_client *c, const uint8_t *data, size_t len);
    /* Writes the framing of one message of len bytes; returns its length (<=
     * NET_MAX_FRAME_PREFIX). The message follows it directly. */
    size_t (*frame_prefix)(size_t len, uint8_t out[NET_MAX_FRAME_PREFIX]);
    /* The registry made c CLOSING (c->reason says why): what the wire needs after the output
     * queued so far (a WebSocket close frame), appended here. */
    void (*on_closing)(struct net_server *srv, struct net_client *c);
    /* Once CLOSING and flushed: true to half-close and wait for the peer's EOF rather than
     * close at once (a close frame that a reset would destroy). */
    bool (*linger)(const struct net_client *c);
    /* Its own /metrics families, after the collide_transport_* ones; NULL: none. */
    bool (*render_metrics)(const struct net_metrics *m, struct net_buf *out);
} net_transport;

/* The built-in transports (net_tcp.c, net_ws.c, net_udp.c); the table lists them first, in this
 * order. */
extern const net_transport net_tcp_transport;
extern const net_transport net_ws_transport;
extern const net_transport net_udp_transport;

/* The transport of id (NULL: none), and how many there are: ids are 0 .. count-1. Id 0 is TCP,
 * the transport of a client opened without one. */
const net_transport *net_transport_at(uint32_t id);
uint32_t net_transport_count(void);
/* The transport called name; NULL when none is. */
const net_transport *net_transport_find(const char *name);
/* Adds t to the table, setting t->id; false when the table is full or the name is taken. Before
 * any server is created (the table is read from every thread without a lock). */
bool net_transport_register(net_transport *t);

#endif

/* net_udp_host: the UDP transport's sockets (PROTOCOL.md "Datagrams: UDP through ENet";
 * docs/net-design.md "UDP: one ENet host on the front, relayed to the rooms").
 *
 * One ENet host (libenet 1.3) on the front's loop owns the port: its socket is polled by libuv and
 * serviced without blocking (enet_host_service with timeout 0, in a loop), a timer services it
 * between packets (resends, pings, timeouts), and its queue is flushed once per loop iteration,
 * after the output of that iteration (the front's flush, the rooms' snapshots relayed back).
 *
 * A peer is a client of the front's server until its Hello is placed, exactly as a TCP
 * connection (pending caps by IP, the hello timeout, tokens, rate limits). Placed, it is handed
 * to its room's thread by message, not by descriptor: the front keeps the peer and relays each of
 * its packets to that thread's inbox (net_host.h), where a relay client (net_udp_relay.c) feeds
 * the room's server; the room's output comes back through this host's outbox, keyed by the peer,
 * and goes out on the front. The ENet host is only ever touched on the front's thread. */
#ifndef COLLIDE_NET_UDP_HOST_H
#define COLLIDE_NET_UDP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net_config.h"
#include "net_conn.h"
#include "net_server.h"

typedef struct net_udp net_udp;
struct net_hosts;

/* Binds --udp-bind:--udp-port (cfg->udp_port not 0) on loop for the front's server front, handing
 * placed peers to hosts' workers. on_idle(ctx) is called whenever the last peer is gone (the
 * drain waits for it). NULL when the port cannot be bound (logged). */
net_udp *net_udp_start(uv_loop_t *loop, const net_config *cfg, net_server *front,
                       struct net_hosts *hosts, void (*on_idle)(void *ctx), void *ctx);
/* Sends what the iteration queued (the front's own clients were just flushed by net_conn_flush):
 * the once-per-iteration enet_host_flush. */
void net_udp_flush(net_udp *u);
/* The drain began: new peers are refused (disconnect data SHUTTING_DOWN); the rest say Goodbye
 * through their servers. */
void net_udp_drain(net_udp *u);
/* Peers the host still holds: the drain ends at 0. */
uint32_t net_udp_peer_count(const net_udp *u);
/* The drain ran out of time: every peer is disconnected now. */
void net_udp_cut_all(net_udp *u);
/* Closes the handles, then (in their close callbacks) destroys the host and frees u. After the
 * workers stopped: nothing posts to the outbox any more. NULL: nothing. */
void net_udp_close(net_udp *u);

/* ---- The room thread's side (any thread): the relay's output to the front ------------------ */

typedef enum net_udp_out_kind {
    NET_UDP_OUT_SEND = 0,  /* bytes: framed ServerMessages, as the registry queued them */
    NET_UDP_OUT_CLOSE = 1, /* disconnect once delivered, the last fatal Error's code as data */
    NET_UDP_OUT_CUT = 2,   /* disconnect now */
} net_udp_out_kind;

/* Posts to the front: what to do for the peer named key. Copied; false when out of memory. */
bool net_udp_post(net_udp *u, uint64_t key, net_udp_out_kind kind, const uint8_t *bytes,
                  size_t len);

/* ---- net_udp_relay.c: a room thread's relay clients --------------------------------------- */

typedef struct net_udp_relay net_udp_relay;
/* A thread's relay clients by ENet peer index (a key's low 12 bits); made at first use. */
typedef struct net_udp_relays {
    net_udp_relay **slots; /* [NET_UDP_MAX_PEERS] */
    net_buf out;           /* the output being posted */
} net_udp_relays;

/* A placed peer's client in srv on host's loop (counted in host->conn_count), registered as
 * adopted under addr; the caller welcomes or refuses it. NULL when out of memory (the front is
 * told to cut the peer). */
net_client *net_udp_relay_open(net_udp_relays *rs, net_conn_host *host, net_udp *u, net_server *srv,
                               uint64_t key, const char *addr);
/* A packet from the peer key ([channel][message]); dropped when no relay holds key any more. */
void net_udp_relay_packet(net_udp_relays *rs, uint64_t key, const uint8_t *data, size_t len);
/* The peer key is gone on the front (disconnected, timed out): its client is closed for reason. */
void net_udp_relay_gone(net_udp_relays *rs, uint64_t key, net_disconnect_reason reason);
/* Closes every relay client left (a stop without a drain) and frees rs's memory. */
void net_udp_relays_free(net_udp_relays *rs);

#endif

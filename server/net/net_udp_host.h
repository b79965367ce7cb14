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
#include "net_udp_relay.h"

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

/* Posts to the front: what to do for the peer named key. Copied; false when out of memory. */
bool net_udp_post(net_udp *u, uint64_t key, net_udp_out_kind kind, const uint8_t *bytes,
                  size_t len);
/* The front's outbox as the rooms' relays see it (net_udp_relay.h): net_udp_post on u. */
net_udp_sink net_udp_sink_of(net_udp *u);

#endif

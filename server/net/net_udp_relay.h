/* net_udp_relay: a room thread's clients of UDP peers. The peers stay on the front's ENet host
 * (net_udp_host.h); on the room's thread each is a client of the room's server like any adopted
 * connection, fed the packets the front relays through the worker's inbox (net_host.c), and
 * flushed into the front's outbox through a sink the daemon wires (net_udp_sink_of): this side
 * names nothing of the front's, so the arrows run one way (the front -> the workers -> here). */
#ifndef COLLIDE_NET_UDP_RELAY_H
#define COLLIDE_NET_UDP_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_buf.h"
#include "net_conn.h"
#include "net_server.h"

/* What a relay asks of the front for its peer. */
typedef enum net_udp_out_kind {
    NET_UDP_OUT_SEND = 0,  /* bytes: framed ServerMessages, as the registry queued them */
    NET_UDP_OUT_CLOSE = 1, /* disconnect once delivered, the last fatal Error's code as data */
    NET_UDP_OUT_CUT = 2,   /* disconnect now */
} net_udp_out_kind;

/* The front's outbox (any thread): post copies bytes; false when out of memory. */
typedef struct net_udp_sink {
    bool (*post)(void *ctx, uint64_t key, net_udp_out_kind kind, const uint8_t *bytes, size_t len);
    void *ctx;
} net_udp_sink;

typedef struct net_udp_relay net_udp_relay;
/* A thread's relay clients by ENet peer index (a key's low 12 bits); made at first use. */
typedef struct net_udp_relays {
    net_udp_relay **slots; /* [NET_UDP_MAX_PEERS] */
    net_buf out;           /* the output being posted */
} net_udp_relays;

/* A placed peer's client in srv on host's loop (counted in host->conn_count), registered as
 * adopted under addr, its output posted to sink; the caller welcomes or refuses it. NULL when
 * out of memory (the front is told to cut the peer). */
net_client *net_udp_relay_open(net_udp_relays *rs, net_conn_host *host, const net_udp_sink *sink,
                               net_server *srv, uint64_t key, const char *addr);
/* A packet from the peer key ([channel][message]); dropped when no relay holds key any more. */
void net_udp_relay_packet(net_udp_relays *rs, uint64_t key, const uint8_t *data, size_t len);
/* The peer key is gone on the front (disconnected, timed out): its client is closed for reason. */
void net_udp_relay_gone(net_udp_relays *rs, uint64_t key, net_disconnect_reason reason);
/* Closes every relay client left (a stop without a drain) and frees rs's memory. */
void net_udp_relays_free(net_udp_relays *rs);

#endif

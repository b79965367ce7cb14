/* net_udp: the "udp" transport's socket-free side (net_transport.h; PROTOCOL.md "Datagrams: UDP
 * through ENet"). One ENet packet carries one message, without the varint prefix; the ENet host
 * itself, on the front's loop, is net_udp_host.c's. What is here the unit tests and the fuzz
 * target can drive without a socket:
 *  - feed: the packet arrives as one byte of channel followed by the message. Channel 0 carries
 *    everything; channel 1 only MoveIntent, MoveIntents and SnapshotAck (anything else there gets
 *    a non-fatal BAD_REQUEST), and is dropped before Welcome. A message over the session's frame
 *    limit is Error{FRAME_TOO_LARGE, fatal}.
 *  - the output: the registry frames each ServerMessage with the varint prefix as on TCP, so the
 *    output queue and its limits stay the registry's; the host splits the queue back into
 *    packets, each on the channel net_udp_channel_of names. */
#ifndef COLLIDE_NET_UDP_H
#define COLLIDE_NET_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_server.h"

#define NET_UDP_CHANNEL_RELIABLE 0  /* reliable, ordered: the session */
#define NET_UDP_CHANNEL_SEQUENCED 1 /* unreliable, sequenced: snapshots, intents, acks */
#define NET_UDP_CHANNELS 2          /* a connect asking for fewer is refused */
#define NET_UDP_MAX_PEERS 4095      /* ENet's peer id space (ENET_PROTOCOL_MAXIMUM_PEER_ID) */

/* The channel a framed ServerMessage body goes on: a Snapshot on the sequenced channel, every
 * other message (Welcome, replies, Error, Goodbye, Events) on the reliable one. */
uint8_t net_udp_channel_of(const uint8_t *body, size_t len);
/* The code of a ServerMessage body that is a fatal Error (the peer's disconnect data); 0 for any
 * other message. */
uint32_t net_udp_fatal_code(const uint8_t *body, size_t len);
/* Feeds c, in order, the packets its transport held while c was being handed off (c->in at the
 * hand-off: net_udp_transport's feed keeps each as a 4-byte little-endian length, then the
 * channel and the message). */
void net_udp_feed_held(net_server *srv, net_client *c, const uint8_t *held, size_t len);

#endif

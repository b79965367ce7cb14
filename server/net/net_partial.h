/* net_partial: the daemon-wide budget of memory held for partial frames (--max-partial-bytes,
 * issue 32). Every net_server of the process (the front's and each room's, on any thread) adds
 * to and takes from one counter: a client's read buffer while it holds a frame begun and not yet
 * whole (TCP's varint-framed frames, WebSocket messages; a UDP packet is whole by nature and
 * never waits here). One atomic counter, not per-thread budgets that sum to the bound: clients
 * move from the front to the workers at their Hello and rooms are uneven, so a static split would
 * cut a thread's clients while another's share sits idle; and a relaxed fetch_add per change of a
 * buffer's capacity (it doubles: a few per frame) costs nothing next to the copy. The registry
 * (net_server.c) decides whom to cut when it is over; this file only counts. */
#ifndef COLLIDE_NET_PARTIAL_H
#define COLLIDE_NET_PARTIAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_partial_budget {
    atomic_size_t held; /* bytes of read buffers holding a partial frame, all threads */
    size_t max;         /* --max-partial-bytes: over it, clients are cut, oldest first */
} net_partial_budget;

void net_partial_init(net_partial_budget *b, size_t max);
/* Moves one buffer's counted bytes from `was` to `now`; returns the daemon-wide total after it. */
size_t net_partial_change(net_partial_budget *b, size_t was, size_t now);
/* The daemon-wide total now (another thread may change it the next instant). */
size_t net_partial_held(const net_partial_budget *b);
/* True while the total is over the bound. */
bool net_partial_over(const net_partial_budget *b);

#endif

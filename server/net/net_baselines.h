/* net_baselines: what a datagram client holds after each of its last snapshots (PROTOCOL.md
 * "Datagrams: UDP through ENet", "Snapshots against the last acknowledged state"). A packet may
 * be lost, so a UDP snapshot is a delta against a state the client has said it holds
 * (SnapshotAck), not against what was last sent.
 *
 * A ring of --udp-baselines slots, one per snapshot sent, oldest overwritten first. Each slot is
 * the client's whole state after that snapshot: the bodies it holds, in the view's key order
 * (statics first, then id), with their quantized values. Keeping whole states (not a chain of
 * deltas) makes a snapshot's cost the view's (one merge with the baseline and one copy into the
 * next slot), whatever the number of slots; the price is memory: slots x bodies held x
 * sizeof(net_baseline_body) per client (docs/perf/net.md). A slot's array grows by doubling and
 * never shrinks, so a client whose view is steady stops allocating after its first laps.
 *
 * The baseline is the newest acknowledged snapshot still held, tracked as acks arrive (one binary
 * search over the ring's ticks per ack): an ack for a tick not in the ring is ignored, and when
 * the ring overwrites the baseline's slot the client has none (every acknowledged slot older than
 * it is gone too) and gets a full snapshot. */
#ifndef COLLIDE_NET_BASELINES_H
#define COLLIDE_NET_BASELINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quant.h"

#define NET_BASELINES_MAX 1024u       /* --udp-baselines' upper bound */
#define NET_BASELINE_WAIT_MAX 0xffffu /* net_baseline_body.wait saturates here */

/* One body of a state: its key, whether the client holds it, how long its change has waited,
 * and its values. */
typedef struct net_baseline_body {
    uint32_t id;    /* body id (world ids are never 0) */
    uint8_t moving; /* 1 for a mover: the high half of the key, as net_view_key */
    uint8_t held;   /* 1: the client holds it after this snapshot; 0: in view and not yet sent
                       (a new body the budget left out, kept for its wait) */
    uint16_t wait;  /* snapshots in a row, up to this one, that left its pending change out:
                       its accumulated priority (saturates at NET_BASELINE_WAIT_MAX) */
    quant_state q;  /* its values on the client (held only) */
} net_baseline_body;

/* The key order of net_view_key and net_known_key. */
static inline uint64_t net_baseline_key(const net_baseline_body *b) {
    return ((uint64_t)b->moving << 32) | b->id;
}

/* The client's state after one snapshot. */
typedef struct net_baseline {
    uint64_t tick;             /* the snapshot's tick; 0: the slot is empty */
    net_baseline_body *bodies; /* ascending key; NULL until first used */
    uint32_t count;            /* entries in bodies */
    uint32_t cap;              /* entries allocated */
} net_baseline;

typedef struct net_baselines {
    net_baseline *ring; /* slots entries, NULL until the first snapshot */
    uint32_t slots;     /* --udp-baselines */
    uint32_t newest;    /* the slot of the last snapshot sent (when any was) */
    uint32_t used;      /* slots holding a snapshot (at most slots) */
    uint32_t base;      /* the baseline's slot, when has_base */
    bool has_base;      /* an acknowledged snapshot is held */
} net_baselines;

/* The newest acknowledged state still held; NULL: none (the next snapshot is full). */
const net_baseline *net_baselines_base(const net_baselines *b);
/* The state after the last snapshot sent (acknowledged or not); NULL: none sent. */
const net_baseline *net_baselines_newest(const net_baselines *b);
/* SnapshotAck{tick}: the baseline becomes that snapshot when it is held and newer than the one
 * there is. A tick never sent, or overwritten since, is ignored. */
void net_baselines_ack(net_baselines *b, uint64_t tick);
/* Records the state after the snapshot of tick (newer than every tick held), overwriting the
 * oldest slot (and the baseline with it, when it is that slot). The ring is made on the first
 * call with slots slots. False when out of memory (then nothing changed). */
bool net_baselines_push(net_baselines *b, uint32_t slots, uint64_t tick,
                        const net_baseline_body *bodies, uint32_t count);
/* Bytes allocated for b (the ring and every slot's array): the memory one client's baselines take.
 */
size_t net_baselines_bytes(const net_baselines *b);
void net_baselines_free(net_baselines *b);

#endif

/* net_tick: a world's tick, above the registry, the session, events and snapshots, and the
 * lifetime of a server (net_server_create/destroy: the registry, then the layers' state). The
 * schedule (inline here, free of libuv so it is tested exactly): steps are due every period from a
 * start time; a callback that comes late runs the steps due, up to NET_TICK_MAX_CATCHUP of them,
 * and drops the rest instead of queueing them (no spiral of death); the schedule keeps the rate
 * either way. The daemon's world and each room's (net_room.c) run on one. What a tick does
 * (net_tick.c, net_tick_run): steps the world, queues each step's events, sweeps the registry
 * (timeouts, the pending set) and sends the snapshots. */
#ifndef COLLIDE_NET_TICK_H
#define COLLIDE_NET_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "net_server.h"

#define NET_TICK_MAX_CATCHUP 4u /* world steps one late callback may run; the rest are skipped */

typedef struct net_tick_schedule {
    uint64_t period_ns; /* 1e9 / tick rate */
    uint64_t next_ns;   /* monotonic time at which the next step is due */
} net_tick_schedule;

/* What one callback at now_ns is to do. */
typedef struct net_tick_due {
    unsigned run;     /* steps to run now (0: none due yet) */
    uint64_t skipped; /* steps dropped to catch up */
    double lag_s;     /* how late the callback came against the oldest step due */
} net_tick_due;

static inline net_tick_schedule net_tick_start(double rate_hz, uint64_t now_ns) {
    net_tick_schedule s;
    s.period_ns = (uint64_t)(1e9 / rate_hz);
    s.next_ns = now_ns + s.period_ns;
    return s;
}

/* The steps due at now_ns; the schedule moves past them. */
static inline net_tick_due net_tick_take(net_tick_schedule *s, uint64_t now_ns) {
    net_tick_due d = {0, 0, 0.0};
    if (now_ns < s->next_ns) return d;
    uint64_t due = (now_ns - s->next_ns) / s->period_ns + 1u;
    d.run = (unsigned)(due < NET_TICK_MAX_CATCHUP ? due : NET_TICK_MAX_CATCHUP);
    d.skipped = due - d.run;
    d.lag_s = (double)(now_ns - s->next_ns) * 1e-9;
    s->next_ns += due * s->period_ns;
    return d;
}

/* Milliseconds until the next step is due, rounded up, and never 0: libuv 1.44 runs a timer
 * re-armed with timeout 0 again inside the same timer phase, so a loop that is behind would tick
 * back to back and never reach I/O or the flush (every client starved of snapshots while the
 * ticks counted on). One millisecond lets the loop poll and write between late ticks; the
 * schedule keeps the rate. */
static inline uint64_t net_tick_wait_ms(const net_tick_schedule *s, uint64_t now_ns) {
    uint64_t wait_ns = s->next_ns > now_ns ? s->next_ns - now_ns : 0;
    uint64_t ms = (wait_ns + 999999u) / 1000000u;
    return ms ? ms : 1u;
}

/* Steps srv's world `steps` times (0 allowed: a server without a world, or no step due yet),
 * queueing each step's contact and sensor events, then sweeps the registry (net_server_sweep)
 * and, when it stepped, appends a Snapshot to every welcomed client whose rate is due. */
void net_tick_run(net_server *srv, unsigned steps);

/* A server, whole: the registry (net_server_registry_create) and the state the layers above keep
 * per server (the snapshot writer, with a world). cfg is copied; w is borrowed and must outlive
 * the server; NULL w: front mode. NULL when out of memory. */
net_server *net_server_create(const net_config *cfg, world *w);
/* Every client must have been released first. */
void net_server_destroy(net_server *srv);

/* Rebuilds the view index and the delta records, and appends a Snapshot to every welcomed client
 * due one, each by its transport's kind (net_tick_run does this after its steps). */
void net_tick_snapshots(struct net_server *srv);

#endif

/* net_known: per-client set of the bodies a client has been told about, with the world tick of
 * the state last sent. It is what makes snapshots deltas: a body in view is sent in full when
 * absent, as a delta when its changed_tick is newer than sent_tick, and listed in `removed` when
 * it is in the set but no longer in the view.
 *
 * An array sorted by key (statics before movers, then id: the view index's rank order, see
 * net_view.h), rewritten once per snapshot by a merge-join with the view, in the same order
 * (net_snapshot.c): each (client, body in view) pair then costs a sequential compare instead of a
 * hash probe that missed the cache (docs/perf/net.md). Empty until something is in view, so an
 * idle connection holds nothing. */
#ifndef COLLIDE_NET_KNOWN_H
#define COLLIDE_NET_KNOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_known_entry {
    uint32_t id;        /* body id (world ids are never 0) */
    uint32_t moving;    /* 1 for a moving body: the high half of the sort key */
    uint64_t sent_tick; /* world tick of the state last sent */
} net_known_entry;

/* sent_tick of an entry held in place while a snapshot is written, not (yet) sent; never left
 * in a client's set. */
#define NET_KNOWN_UNSENT UINT64_MAX

/* The sort key: (moving << 32) | id. */
static inline uint64_t net_known_key(const net_known_entry *e) {
    return ((uint64_t)e->moving << 32) | e->id;
}

typedef struct net_known {
    net_known_entry *entries; /* ascending key; NULL while never used */
    uint32_t count;           /* entries in use */
    uint32_t cap;             /* entries allocated */
} net_known;

/* Makes room for n entries in all; false on out of memory. Grows by doubling, so a client whose
 * view size is steady stops allocating. */
bool net_known_reserve(net_known *set, uint32_t n);
/* Binary search by key; NULL when absent. */
const net_known_entry *net_known_find(const net_known *set, uint64_t key);
void net_known_free(net_known *set);

#endif

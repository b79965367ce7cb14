/* net_known: per-client set of the bodies a client has been told about, keyed by body id, with the
 * world tick of the state last sent. It is what makes snapshots deltas: a body is sent in full when
 * absent (or never announced), as a delta when its changed_tick is newer than sent_tick, and listed
 * in `removed` when it is in the set but no longer in the view.
 *
 * Open addressing with linear probing and tombstones: one probe sequence per lookup, no per-entry
 * allocation. The table grows by doubling; tombstones are swept by rehashing in place through a
 * scratch array the caller lends (shared by all clients), so steady churn allocates nothing. */
#ifndef COLLIDE_NET_KNOWN_H
#define COLLIDE_NET_KNOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_known_entry {
    uint32_t id;        /* body id; 0 = empty slot (world ids are never 0) */
    uint32_t stamp;     /* snapshot pass that last saw it in view; NET_KNOWN_TOMB when deleted */
    uint64_t sent_tick; /* world tick of the state last sent; 0 = not announced yet */
} net_known_entry;

#define NET_KNOWN_TOMB UINT32_MAX

typedef struct net_known {
    net_known_entry *slots; /* cap entries, NULL while empty */
    uint32_t cap;           /* power of two, or 0 */
    uint32_t live;          /* entries holding an id */
    uint32_t tombs;         /* deleted entries still blocking probes */
} net_known;

/* Scratch shared by every set for in-place rehashing. */
typedef struct net_known_scratch {
    net_known_entry *entries; /* cap entries */
    uint32_t cap;             /* entries allocated */
} net_known_scratch;

net_known_entry *net_known_find(const net_known *set, uint32_t id);
/* Inserts id (stamp and sent_tick 0) or returns the existing entry; NULL on out of memory. The
 * returned pointer is valid until the next insert. */
net_known_entry *net_known_insert(net_known *set, net_known_scratch *scratch, uint32_t id);
/* Makes room so that `extra` inserts will not rehash: entry pointers then stay valid across them.
 * False on out of memory. */
bool net_known_reserve(net_known *set, net_known_scratch *scratch, uint32_t extra);
void net_known_delete(net_known *set, net_known_entry *entry);
void net_known_free(net_known *set);
void net_known_scratch_free(net_known_scratch *scratch);

#endif

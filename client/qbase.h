/* cc_qbase: the client's baselines for UDP snapshots (PROTOCOL.md "Datagrams: UDP through ENet",
 * "Snapshots against the last acknowledged state"). Over UDP a snapshot may be lost, so the server
 * writes each one as a delta against a state the client acknowledged (Snapshot.baseline_tick, 0 =
 * full). The client therefore keeps its state after each of its last N applied snapshots, builds
 * the next state from the named one, and ignores a snapshot whose baseline it no longer holds
 * (the server falls back to an older acknowledged one or to a full snapshot).
 *
 * Shapes and filters come once, in a body's new record, yet a body can vanish from the newest
 * state and come back from an older baseline without one: the shape store keeps them for every id
 * some held state still has, so the state that is rebuilt always has its shapes. */
#ifndef COLLIDE_CLIENT_QBASE_H
#define COLLIDE_CLIENT_QBASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quant.h"

#define CC_QBASE_DEFAULT 32u /* as the daemon's --udp-baselines default */
#define CC_QBASE_MAX 1024u   /* --udp-baselines bound on the tool */

typedef struct cc_qbase_slot {
    uint64_t tick; /* 0: empty */
    quant_table t; /* the state after that tick's snapshot */
} cc_qbase_slot;

typedef struct cc_qbase_shape {
    uint32_t id;
    uint32_t len;
    uint8_t *bytes; /* the Shape message as the new record carried it (heap) */
    quant_filter filter;
} cc_qbase_shape;

typedef struct cc_qbase {
    cc_qbase_slot *slots; /* ring of the last n applied states */
    uint32_t n;
    uint32_t next;          /* slot the next applied state goes to */
    uint64_t newest;        /* tick of the newest applied snapshot (0: none) */
    cc_qbase_shape *shapes; /* ascending id */
    size_t nshapes, shapes_cap;
    size_t prune_at;  /* nshapes above which unreferenced shapes are dropped */
    quant_table work; /* the state being built */
} cc_qbase;

typedef enum cc_qbase_result {
    CC_QBASE_APPLIED = 0,   /* the state is built, kept, and due an ack */
    CC_QBASE_IGNORED = 1,   /* baseline not held, or not newer than the newest applied */
    CC_QBASE_MALFORMED = 2, /* the records do not fit the baseline (or out of memory) */
} cc_qbase_result;

bool cc_qbase_init(cc_qbase *b, uint32_t n);
void cc_qbase_free(cc_qbase *b);
/* The held state after tick's snapshot, or NULL. */
const quant_table *cc_qbase_find(const cc_qbase *b, uint64_t tick);
/* The newest applied state (empty before the first). */
const quant_table *cc_qbase_newest(const cc_qbase *b);

/* Builds the state after the snapshot of tick from the baseline's: drops the baseline's removed
 * ids, applies packed (fn is called after each record, as quant_apply does), and keeps the result
 * in the ring (overwriting the oldest) as the newest state. Nothing changes unless APPLIED. */
cc_qbase_result cc_qbase_apply(cc_qbase *b, uint64_t tick, uint64_t baseline_tick,
                               const uint32_t *removed, size_t nremoved, const uint8_t *packed,
                               size_t len, quant_record_fn fn, void *ctx);

/* The shape and filter a held body came with, or NULL. */
const cc_qbase_shape *cc_qbase_shape_of(const cc_qbase *b, uint32_t id);

#endif

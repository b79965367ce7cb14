/* cc_qsnap: the client's side of quantized snapshots (Hello.quantized, PROTOCOL.md "Snapshot rate
 * and quantized snapshots"). It keeps the state of every body the server told this client about,
 * in quanta (proto/quant.h), and applies each snapshot's `removed` and `packed` to it.
 *
 * Two ways in: cc_qsnap_expand turns an unpacked Snapshot's records into ordinary BodyStates
 * (floats, the shape of a new body), so that watch's printing and the invariant checker take both
 * forms alike; cc_qsnap_scan walks the bytes in place for the load generator, which wants only
 * its own body. A malformed snapshot (the server never sends one) leaves the table out of sync:
 * the caller counts it and the session should be started again. */
#ifndef COLLIDE_CLIENT_QSNAP_H
#define COLLIDE_CLIENT_QSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collide.pb-c.h"
#include "qbase.h"
#include "quant.h"
#include "wire_read.h"

typedef struct cc_qsnap {
    quant_table t;           /* what the server told us, in quanta */
    double position_quantum; /* Welcome.position_quantum */
    double velocity_quantum; /* Welcome.velocity_quantum */
    /* cc_qsnap_expand's BodyStates, valid until cc_qsnap_done */
    Collide__V1__BodyState *states;
    Collide__V1__BodyState **ptrs;
    Collide__V1__Vec2 *vecs;     /* two per state: position, velocity */
    Collide__V1__Shape **shapes; /* unpacked shapes of new bodies, freed by cc_qsnap_done */
    size_t n, nshapes, cap;
    bool failed;                           /* a record did not fit the scratch (out of memory) */
    Collide__V1__BodyState **saved_bodies; /* the snapshot's own bodies, given back by done */
    size_t saved_n;
    /* UDP (cc_qsnap_expand_base): t is the newest applied state; the snapshot's removed ids are
     * replaced by those gone since it, and fresh lists the ids of this snapshot's new records. */
    uint32_t *removed, *saved_removed;
    size_t nremoved, removed_cap, saved_nremoved;
    uint32_t *fresh;
    size_t nfresh, fresh_cap;
} cc_qsnap;

/* The quanta from the Welcome; 0 (a server that did not grant quantized) leaves the defaults. */
void cc_qsnap_init(cc_qsnap *q, float position_quantum, float velocity_quantum);
void cc_qsnap_free(cc_qsnap *q);

/* Applies s->removed, then s->packed, and points s->bodies at one BodyState per record (the
 * body's whole state after it; shape, kind and owner for a new one). Call cc_qsnap_done before
 * s is freed. False when malformed or out of memory; a snapshot with both BodyStates and packed
 * records is malformed and applied not at all (one without records keeps its own bodies: a
 * server that ignored Hello.quantized). */
bool cc_qsnap_expand(cc_qsnap *q, Collide__V1__Snapshot *s);
/* UDP: builds the snapshot's state from its baseline_tick (cc_qbase_apply), then rewrites s as
 * the change from the previously applied state, so that printing and the checker read it as a
 * TCP snapshot: s->bodies one BodyState per body new or changed since then (with its shape, from
 * the shape store, when the previous state lacked it or its id now names a new body), s->removed
 * the ids gone since then. Call cc_qsnap_done in every case. */
int cc_qsnap_expand_base(cc_qsnap *q, cc_qbase *b, Collide__V1__Snapshot *s);
/* UDP: body_id's state in t (the rebuilt state, cc_qbase_newest), in world units, as the scan
 * reports it: the intent-to-ack reads last_input_seq there, so a body whose record was left out of
 * this snapshot by the size budget still acknowledges what its baseline did. False when absent. */
bool cc_qsnap_body_in(const cc_qsnap *q, const quant_table *t, uint32_t body_id, cc_wire_body *out);
/* Gives s->bodies back (s can then be freed with protobuf-c) and frees the shapes. */
void cc_qsnap_done(cc_qsnap *q, Collide__V1__Snapshot *s);

/* The same from a Snapshot's bytes, in place: tick, records (as out->bodies), removed ids, and
 * body_id's state when it had a record. False when malformed. */
bool cc_qsnap_scan(cc_qsnap *q, const uint8_t *buf, size_t len, uint32_t body_id,
                   cc_wire_snapshot_scan *out);

#endif

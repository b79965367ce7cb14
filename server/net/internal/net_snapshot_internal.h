/* net_snapshot_internal: what the snapshot writer's files share (net_snapshot.c, the stream
 * transports' writer; net_snapshot_datagram.c, the datagram one): where a snapshot's quantized
 * records go, the record encoders, and the one way a snapshot is sent. Private to server/net. */
#ifndef COLLIDE_NET_SNAPSHOT_INTERNAL_H
#define COLLIDE_NET_SNAPSHOT_INTERNAL_H

#include "net_internal.h"
#include "net_snapshot.h"

/* Where a snapshot's bodies go: a float client's BodyStates, or quantized records. */
typedef struct net_snap_out {
    net_buf *s;       /* the Snapshot body; a float client's BodyStates are appended to it */
    size_t limit;     /* float: s->len may not pass it; quantized: nor may used */
    bool quant;       /* the client's snapshots carry Snapshot.packed */
    size_t used;      /* quantized: s->len plus the most the packed field can take so far */
    size_t nrecs;     /* quantized: records in sw->qrecs */
    uint32_t last_id; /* quantized: the id of the last record written to sw->qbytes */
    bool unsorted;    /* quantized: a record came after one of a higher id (qbytes is not the
                         packed field as it stands: net_snapshot_q_packed sorts) */
    bool gap_by_id;   /* count each record's id_gap as the varint of its id (a tight budget, the
                         datagram writer's) rather than as 5 bytes (the stream writer's, whose
                         output stays as it was) */
} net_snap_out;

/* A body new to a quantized client: its state against zero, kind, owner and shape, as a record
 * in sw->qbytes. *sent gets the state sent. False when it does not fit (or is gone). */
bool net_snapshot_q_new(net_server *srv, net_snap_out *o, const net_view_entry *v,
                        uint64_t *changed_tick, quant_state *sent);
/* A known mover that changed, for a client that holds *base: its record against that state
 * (copied when another client with the same base had it encoded this tick). Nothing when the
 * change is below a quantum. *base becomes the state sent. False when it does not fit. */
bool net_snapshot_q_changed(net_server *srv, net_snap_out *o, const net_view_entry *v,
                            quant_state *base);
/* Appends Snapshot.packed to o->s: the records in ascending id order, each behind its id_gap. */
void net_snapshot_q_packed(net_snapshot_writer *sw, net_snap_out *o);
/* Appends ServerMessage{snapshot: body} to c's output, and counts it (each snapshot sent makes
 * one acknowledgement free). */
void net_snapshot_send(net_server *srv, net_client *c, const net_buf *body);
/* Whether an empty snapshot (no bodies, removals or events) for c is held back, and counted so:
 * --empty-snapshot-ms is set and c had a snapshot more recently than that. */
bool net_snapshot_hold_empty(net_server *srv, const net_client *c);

/* The first phases of a client's snapshot, for the datagram writer: false when it gets none now
 * (not welcomed, closing, or a quarter of its output limit behind); else its view, in key order
 * (statics walked), in the writer's scratch. */
bool net_snapshot_view(net_server *srv, net_client *c, const net_view_entry **view, size_t *nview);

#endif

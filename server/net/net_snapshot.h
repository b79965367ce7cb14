/* net_snapshot: the per-tick Snapshot writer (PROTOCOL.md "Snapshots"). Once a tick it brings
 * the interest index (net_view) up to the world's body table and re-encodes the delta BodyState
 * of each mover that changed, in place in an arena of records (one slot per mover); then for each
 * welcomed client it merge-joins the bodies in its view with what it was told before (net_known)
 * and appends one Snapshot: removed ids, new bodies in full, changed ones as a copy of their
 * record, round robin when a frame runs out of room. The hot loop neither reads the world nor
 * encodes (docs/perf/net.md).
 *
 * A quantized client (Hello.quantized: PROTOCOL.md "Snapshot rate and quantized snapshots") goes
 * through the same merge; its bodies become records of Snapshot.packed (proto/quant.h) against
 * what it was last sent of each (net_client.snap.qknown, kept beside its known set). A change
 * record depends on the client only through that baseline, so each mover's is encoded once per tick
 * (net_qslot) and copied to every client with the same baseline. A client at a reduced rate
 * (Hello.snapshot_rate_hz) is skipped between the ticks of its phase (net_snapshot_next_tick):
 * its known set makes the next snapshot carry everything since its last one. */
#ifndef COLLIDE_NET_SNAPSHOT_H
#define COLLIDE_NET_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_baselines.h"
#include "net_buf.h"
#include "net_config.h"
#include "net_known.h"
#include "net_view.h"
#include "quant.h"
#include "world.h"

/* Bytes of one encoded delta BodyState: at most 45 for 1.1's fields, and 8 for a character's
 * grounded (2) and ground_id (6) of 1.2. */
#define NET_SNAPSHOT_DELTA_MAX 54
/* One record: Snapshot.bodies key, one length byte (a delta is < 128 bytes), the delta. */
#define NET_SNAPSHOT_RECORD_MAX (2 + NET_SNAPSHOT_DELTA_MAX)
/* Records are copied as this many bytes whatever their length (the arena and the snapshot buffer
 * have that much slack): a fixed-size memcpy is a few vector moves, a variable one became a
 * `rep movsq` that cost half the snapshot pass (measured, docs/perf/net.md). 48 before 1.2's
 * characters; 56 is one 8-byte move more. */
#define NET_SNAPSHOT_RECORD_COPY 56
/* Room past max_frame in the quantized records' scratch, and the most one new body's record
 * (flags, parts, kind, owner, a 16-vertex polygon's Shape) takes. */
#define NET_SNAPSHOT_QUANT_SLACK 320

/* A mover's quantized state, and its change record as last encoded for some client with the
 * baseline it was encoded against: any other client with the same baseline gets a copy
 * (net_snapshot.c). One struct, so that a client's record costs one slot's cache lines. */
typedef struct net_qslot {
    quant_state cur;               /* the mover's state in quanta as of the mirror */
    quant_state base;              /* the baseline rec was encoded against (when valid) */
    bool valid;                    /* rec was encoded since the mover last changed */
    uint8_t len;                   /* bytes in rec (flags and parts; the id_gap is per client) */
    uint8_t rec[QUANT_CHANGE_MAX]; /* copied as QUANT_CHANGE_MAX bytes whatever len */
} net_qslot;

/* A datagram snapshot's candidate: a body whose record or removal it may carry, in the order the
 * budget serves them (net_snapshot_datagram.c). */
typedef struct net_dg_cand {
    uint32_t next; /* its entry in the state being written (net_snapshot_writer.dg_next) */
    uint32_t view; /* its entry in the view; NET_DG_REMOVAL: a baseline body gone from view */
    uint16_t wait; /* its accumulated priority (net_baseline_body.wait) */
    uint8_t rank;  /* NET_DG_OWN, NET_DG_REMOVE or NET_DG_OTHER: served in that order */
} net_dg_cand;
#define NET_DG_REMOVAL UINT32_MAX
enum { NET_DG_OWN = 0, NET_DG_REMOVE = 1, NET_DG_OTHER = 2 };

/* One record of a quantized snapshot being written, before the sort by id. */
typedef struct net_qrec {
    uint32_t id;
    uint32_t off; /* in net_snapshot_writer.qbytes */
    uint32_t len;
} net_qrec;

typedef struct net_snapshot_writer {
    net_view_index view;      /* interest-management grid the views query */
    net_buf deltas;           /* every mover's delta record, NET_SNAPSHOT_RECORD_COPY bytes apart
                                 (net_view_entry.delta_off), re-encoded when the mover changes */
    uint32_t *free_records;   /* record slots given back by despawned movers (a stack) */
    size_t free_count;        /* entries in free_records */
    size_t record_slots;      /* slots handed out so far (used or free) */
    size_t free_cap;          /* entries allocated in free_records */
    net_view_entry *query;    /* scratch: bodies in one client's view, in key order */
    size_t query_cap;         /* entries in query (the world's capacity) */
    net_view_marks marks;     /* scratch: the ranks one client's view boxes select */
    uint32_t *removed;        /* scratch: ids for one snapshot's removed list */
    size_t removed_cap;       /* entries in removed */
    uint32_t *deferred;       /* scratch: bodies before a client's resume_key waiting for room, as
                                 pairs (index in query, index in the known set being written);
                                 2 * query_cap entries */
    net_known known_next;     /* scratch: a client's known set being rewritten */
    net_buf body;             /* scratch: one Snapshot's encoded body */
    bool always_walk_statics; /* walk every static in view on every tick, as before the known
                                 statics were kept (for benchmarks and differential tests) */
    /* Quantized snapshots (quant.h). */
    double position_quantum, velocity_quantum; /* --position-quantum, --velocity-quantum */
    net_qslot *qslot;         /* each mover's quantized state and record, by record slot */
    size_t qslots;            /* entries allocated in qslot */
    quant_state *qknown_next; /* scratch: a quantized client's qknown being rewritten */
    size_t qknown_next_cap;   /* entries allocated in qknown_next */
    net_qrec *qrecs;          /* scratch: one quantized snapshot's records (query_cap of them) */
    net_buf qbytes;           /* scratch: their bytes */
    /* Datagram snapshots (net_snapshot_datagram.c); grown by doubling, never shrunk. */
    net_baseline_body *dg_next; /* scratch: the state a datagram client will hold */
    net_dg_cand *dg_cands;      /* scratch: its candidates, beside dg_next (as many at most) */
    size_t dg_cap;              /* entries allocated in dg_next and in dg_cands */
    uint32_t *dg_owned;         /* scratch: the client's own bodies, sorted */
    size_t dg_owned_cap;        /* entries allocated in dg_owned */
    const world *world;         /* the world of the last observe or rebuild: the movers' hook
                                   reads the characters' ground there (net_snapshot_ground) */
} net_snapshot_writer;

struct net_server;
struct net_client;

/* Sized for the world's capacity and cfg->max_frame. False when out of memory (then free it). */
bool net_snapshot_writer_init(net_snapshot_writer *s, const net_config *cfg, const world *w);
void net_snapshot_writer_free(net_snapshot_writer *s);
/* Brings the view index's mover mirror and the delta records to the world's last step (its body
 * table): net_tick_run calls it after each step of a tick that steps more than once, so the
 * snapshots that follow miss no step's changes. False when out of memory. */
bool net_snapshot_observe(net_snapshot_writer *s, const world *w);
/* Rebuilds the view index and the delta records from the world's body table (net_view_rebuild):
 * once a tick, before the clients' snapshots. False when out of memory. */
bool net_snapshot_rebuild(net_snapshot_writer *s, const world *w);
/* A body's state in the quanta of the writer: the angle in 1/65536 turn ([0, 65536)), the
 * angular velocity in 1/1024 rad/s (PROTOCOL.md "Snapshot rate and quantized snapshots"). */
quant_state net_snapshot_quantize(const net_snapshot_writer *s, vec2 position, vec2 velocity,
                                  uint32_t last_input_seq, float angle, float angular_velocity);

/* Snapshot for one client of a stream transport (TCP, WebSocket); the index and records must be
 * current (net_tick_snapshots). */
void net_snapshot_client(struct net_server *srv, struct net_client *c);
/* Snapshot for one client of a datagram transport (net_snapshot_datagram.c, UDP): against its
 * acknowledged baseline, within --udp-snapshot-bytes. */
void net_snapshot_datagram(struct net_server *srv, struct net_client *c);

/* The interval in ticks of a client that asked for rate_hz snapshots a second (Hello.
 * snapshot_rate_hz): the k >= 1 whose tick_rate / k is nearest, ties to the higher rate; 1 for 0
 * or a rate at or above the tick rate. */
uint32_t net_snapshot_interval(float tick_rate_hz, uint32_t rate_hz);

/* The first tick after `after` at which a client with an interval of `every` ticks gets its
 * snapshot: those of its phase, client_id mod every. Clients of one phase snapshot at the same
 * ticks, so they share their baselines (the quantized records' copies); the phases spread the
 * reduced-rate clients over the ticks (all at once would make every k-th tick k times as long). */
uint64_t net_snapshot_next_tick(uint64_t after, uint32_t every, uint32_t client_id);

/* A body's BodyState.grounded and ground_id (PROTOCOL.md "Characters: side-on games"). */
typedef struct net_ground {
    bool grounded;      /* a character standing after the world's last step */
    uint32_t ground_id; /* the body it stands on; 0 for none, the bounds, or not grounded */
} net_ground;
/* A character's ground after the world's last step; false and 0 for any other body, and without
 * a per-body call in a world that has no characters (w may be NULL: no characters). */
net_ground net_snapshot_ground(const world *w, world_body_id id);

/* Whether a body is one-way (BodyState.one_way), without a per-body call in a world that has
 * none. */
bool net_snapshot_one_way(const world *w, world_body_id id);

/* Encodes a delta BodyState (id, position, velocity, last_input_seq, angle, angular_velocity,
 * grounded, ground_id; zero values left out as proto3 does) into out, which has room for
 * NET_SNAPSHOT_DELTA_MAX bytes; returns its length. */
size_t net_snapshot_encode_delta(const world_body_row *info, const net_ground *ground,
                                 uint8_t *out);

#endif

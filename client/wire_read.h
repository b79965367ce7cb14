/* cc_wire: the load generator's in-place reader of ServerMessages, on proto/wire.h.
 *
 * Why not protobuf-c's unpack: a load run receives hundreds of thousands of snapshots a second and
 * needs a few numbers from each (its own body's last_input_seq, position, velocity and ground).
 * Unpacking allocates every BodyState; this walks the bytes in place, allocates nothing, and skips
 * the bodies that are not the player's. Rare messages (Welcome, Spawned, Error, Goodbye) still go
 * through protobuf-c.
 */
#ifndef COLLIDE_CLIENT_WIRE_READ_H
#define COLLIDE_CLIENT_WIRE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h" /* proto/wire.h: the field numbers and the readers */

/* ServerMessage oneof field numbers: cc_wire_envelope.kind. */
enum {
    CC_MSG_NONE = 0,
    CC_MSG_WELCOME = WIRE_SERVER_WELCOME,
    CC_MSG_SPAWNED = WIRE_SERVER_SPAWNED,
    CC_MSG_SNAPSHOT = WIRE_SERVER_SNAPSHOT,
    CC_MSG_PONG = WIRE_SERVER_PONG,
    CC_MSG_ERROR = WIRE_SERVER_ERROR,
    CC_MSG_GOODBYE = WIRE_SERVER_GOODBYE,
    CC_MSG_QUERY_RESULT = WIRE_SERVER_QUERY_RESULT,
};

typedef struct cc_wire_envelope {
    uint32_t request_id;  /* ServerMessage.request_id */
    int kind;             /* CC_MSG_*, CC_MSG_NONE when no known oneof field was present */
    const uint8_t *inner; /* bytes of the oneof submessage (points into the frame) */
    size_t inner_len;     /* their length */
} cc_wire_envelope;

typedef struct cc_wire_body {
    uint32_t id;             /* BodyState.id */
    bool has_position;       /* position field present */
    float x, y;              /* position */
    uint32_t last_input_seq; /* BodyState.last_input_seq (0 when absent) */
    float vx, vy;            /* velocity (0 when absent) */
    bool grounded;           /* 1.2: a character standing */
    uint32_t ground_id;      /* 1.2: what it stands on */
} cc_wire_body;

typedef struct cc_wire_snapshot_scan {
    uint64_t tick;     /* Snapshot.tick */
    uint32_t bodies;   /* BodyState entries in the snapshot */
    uint32_t removed;  /* removed ids */
    bool found;        /* the wanted body was present */
    cc_wire_body body; /* the wanted body, when found */
} cc_wire_snapshot_scan;

/* Splits a ServerMessage into request id and oneof payload. Returns false when malformed. */
bool cc_wire_envelope_read(const uint8_t *buf, size_t len, cc_wire_envelope *out);
/* Scans a Snapshot submessage for body_id. Returns false when malformed. */
bool cc_wire_snapshot_scan_for(const uint8_t *buf, size_t len, uint32_t body_id,
                               cc_wire_snapshot_scan *out);
/* Reads a Pong submessage. */
bool cc_wire_pong_read(const uint8_t *buf, size_t len, uint64_t *client_time_us, uint64_t *tick);

#endif

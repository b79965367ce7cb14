/* wire: protobuf's wire format by hand, for the hot paths that protobuf-c's descriptor walk would
 * cost too much: the server's snapshot writer (no per-body pack), the server's field scans (the
 * Hello token's true length, the request_id of a rate-limited frame) and the load generator's
 * snapshot reader (no per-body unpack).
 *
 * Every field number written or read by hand is named here, once. tests/proto/test_wire.c checks
 * each name against the descriptors protoc-c generates from collide.proto, so a renumbered field
 * fails that unit test rather than surfacing as garbage on the wire. Header-only readers and
 * writers (static inline): every caller is a per-body loop. */
#ifndef COLLIDE_WIRE_H
#define COLLIDE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collide_assert.h"
#include "varint.h"

/* Wire types (the low three bits of a key). Groups (3, 4) are not used by proto3. */
enum wire_type {
    WIRE_VARINT = 0,
    WIRE_I64 = 1,
    WIRE_LEN = 2,
    WIRE_I32 = 5,
};

/* A field key of one byte: field numbers 1..15. A constant expression, so switch labels and
 * stores of it cost nothing. */
#define WIRE_KEY(field, type) ((uint8_t)(((unsigned)(field) << 3) | (unsigned)(type)))

/* Field numbers of proto/collide.proto used by hand-written code, by message. */
enum wire_field {
    /* Vec2 */
    WIRE_VEC2_X = 1,
    WIRE_VEC2_Y = 2,
    /* ClientMessage */
    WIRE_CLIENT_REQUEST_ID = 1,
    WIRE_CLIENT_HELLO = 10,
    WIRE_CLIENT_SPAWN = 11,
    WIRE_CLIENT_MOVE = 12,
    WIRE_CLIENT_MOVE_BATCH = 16,
    WIRE_CLIENT_OVERLAP = 18,
    WIRE_CLIENT_SHAPE_CAST = 19,
    WIRE_CLIENT_SNAPSHOT_ACK = 23, /* 1.2 */
    /* OverlapQuery and ShapeCast: their shape, whose vertices are counted before unpack */
    WIRE_QUERY_SHAPE = 1,
    /* MoveIntents: its intents, counted before unpack */
    WIRE_MOVE_INTENTS_INTENTS = 1,
    /* SpawnBody, Shape, Polygon: the way to Polygon.vertices, counted before unpack */
    WIRE_SPAWN_SHAPE = 2,
    WIRE_SHAPE_POLYGON = 2,
    WIRE_POLYGON_VERTICES = 1,
    /* Hello */
    WIRE_HELLO_TOKEN = 3,
    /* ServerMessage: request_id and the oneof msg */
    WIRE_SERVER_REQUEST_ID = 1,
    WIRE_SERVER_WELCOME = 10,
    WIRE_SERVER_SPAWNED = 11,
    WIRE_SERVER_SNAPSHOT = 12,
    WIRE_SERVER_PONG = 13,
    WIRE_SERVER_ERROR = 14,
    WIRE_SERVER_GOODBYE = 15,
    WIRE_SERVER_QUERY_RESULT = 16,
    WIRE_SERVER_EVENTS = 20, /* 1.2 */
    /* Snapshot */
    WIRE_SNAPSHOT_TICK = 1,
    WIRE_SNAPSHOT_BODIES = 2,
    WIRE_SNAPSHOT_REMOVED = 3,
    WIRE_SNAPSHOT_CONTACTS = 4,
    WIRE_SNAPSHOT_SENSOR_EVENTS = 5,
    WIRE_SNAPSHOT_PACKED = 6,        /* 1.1: quantized records (quant.h) */
    WIRE_SNAPSHOT_BASELINE_TICK = 7, /* 1.2: the state the deltas are against (0: full) */
    /* Events (1.2: a datagram client's events, one message per tick) */
    WIRE_EVENTS_TICK = 1,
    WIRE_EVENTS_CONTACTS = 2,
    WIRE_EVENTS_SENSOR_EVENTS = 3,
    /* BodyState */
    WIRE_BODY_ID = 1,
    WIRE_BODY_POSITION = 2,
    WIRE_BODY_VELOCITY = 3,
    WIRE_BODY_LAST_INPUT_SEQ = 4,
    WIRE_BODY_ANGLE = 8,
    WIRE_BODY_ANGULAR_VELOCITY = 9,
    WIRE_BODY_GROUNDED = 13,  /* 1.2: characters */
    WIRE_BODY_GROUND_ID = 14, /* 1.2 */
    /* Pong */
    WIRE_PONG_CLIENT_TIME_US = 1,
    WIRE_PONG_TICK = 3,
    /* Error: a fatal one's code is a UDP peer's disconnect data (net_udp.c) */
    WIRE_ERROR_CODE = 1,
    WIRE_ERROR_FATAL = 3,
};

/* ---- Reading ------------------------------------------------------------------------------- */

typedef struct wire_reader {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last byte */
} wire_reader;

static inline wire_reader wire_reader_of(const uint8_t *buf, size_t len) {
    COLLIDE_ASSERT(buf != NULL || len == 0);
    wire_reader r = {buf, buf + len};
    return r;
}

static inline bool wire_read_varint(wire_reader *r, uint64_t *out) {
    return varint_read(&r->p, r->end, out);
}

/* Reads a field key: number in *field (0 is passed through: the caller decides), type in *type. */
static inline bool wire_read_key(wire_reader *r, uint32_t *field, unsigned *type) {
    uint64_t key;
    if (!wire_read_varint(r, &key)) return false;
    *field = (uint32_t)(key >> 3);
    *type = (unsigned)(key & 7u);
    return true;
}

/* Reads a length-delimited field's length and points *data at its bytes (inside the buffer). */
static inline bool wire_read_len(wire_reader *r, const uint8_t **data, size_t *len) {
    uint64_t n;
    if (!wire_read_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return false;
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return true;
}

static inline bool wire_read_fixed32(wire_reader *r, uint32_t *out) {
    if (r->end - r->p < 4) return false;
    *out = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
           (uint32_t)r->p[3] << 24;
    r->p += 4;
    return true;
}

/* Skips the value of a field of the given type. False when truncated or of an unknown type. */
static inline bool wire_skip(wire_reader *r, unsigned type) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (type) {
    case WIRE_VARINT:
        return wire_read_varint(r, &v);
    case WIRE_I64:
        if (r->end - r->p < 8) return false;
        r->p += 8;
        return true;
    case WIRE_LEN:
        return wire_read_len(r, &d, &n);
    case WIRE_I32:
        if (r->end - r->p < 4) return false;
        r->p += 4;
        return true;
    default:
        return false;
    }
}

static inline float wire_float_of_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Moves r to the next length-delimited field number `field` and points *data, *len at its bytes,
 * skipping every other field. False at the end of the message or when it is malformed. */
static inline bool wire_next_len(wire_reader *r, uint32_t field, const uint8_t **data,
                                 size_t *len) {
    while (r->p < r->end) {
        uint32_t f;
        unsigned t;
        if (!wire_read_key(r, &f, &t)) return false;
        if (f == field && t == WIRE_LEN) return wire_read_len(r, data, len);
        if (!wire_skip(r, t)) return false;
    }
    return false;
}

/* Finds the last occurrence of field `field` with wire type `type` (WIRE_VARINT or WIRE_LEN) in
 * a message's bytes, the one protobuf's merge rule keeps. *value gets a varint's value or a
 * length-delimited field's length; *data (WIRE_LEN only; may be NULL otherwise) its first byte.
 * False when absent or when the message is malformed anywhere. */
bool wire_scan(const uint8_t *buf, size_t len, uint32_t field, unsigned type, const uint8_t **data,
               uint64_t *value);

/* ---- Writing ------------------------------------------------------------------------------- */

/* Writes a one-byte key; returns 1. */
static inline size_t wire_put_key(uint8_t *out, uint32_t field, unsigned type) {
    COLLIDE_ASSERT(field >= 1 && field <= 15 && type <= 5);
    out[0] = WIRE_KEY(field, type);
    return 1;
}

/* A float field (fixed32, little-endian) with its one-byte key; returns 5. */
static inline size_t wire_put_float(uint8_t *out, uint32_t field, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    out[0] = WIRE_KEY(field, WIRE_I32);
    for (int i = 0; i < 4; i++)
        out[1 + i] = (uint8_t)(u >> (8 * i));
    return 5;
}

#endif

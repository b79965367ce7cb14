/* quant: the records of Snapshot.packed, quantized snapshots (PROTOCOL.md "Snapshot rate and
 * quantized snapshots", docs/protocol.md for the layout with a worked example). One codec for the
 * server's writer, the client's reader, the unit tests and the fuzz target, so both ends round
 * the same way.
 *
 * A body's state is kept in quanta (quant_state): positions in position_quantum units, velocities
 * in velocity_quantum units, the angle in 1/65536 turn, the angular velocity in 1/1024 rad/s. The
 * server quantizes (round half away from zero) and sends each part as a zig-zag varint delta
 * against what it last sent that client for that body; the client adds the deltas. Both hold the
 * same integers, so there is no drift however long the session.
 *
 * Protocol 1.2 adds two bits (PROTOCOL.md "Characters: side-on games"): bit 7, a character's
 * grounded flag and ground id, absolute, after bit 6's part, whenever either changed; bit 8, no
 * payload, on the new record of a one-way body. Both are zero for every body of a world without
 * characters or one-way bodies, so such a world's records are 1.1's, byte for byte. */
#ifndef COLLIDE_QUANT_H
#define COLLIDE_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QUANT_POSITION_DEFAULT (1.0f / 256.0f) /* Welcome.position_quantum's default */
#define QUANT_VELOCITY_DEFAULT (1.0f / 64.0f)  /* Welcome.velocity_quantum's default */
#define QUANT_ANGLE_STEPS 65536                /* an angle is in 1/65536 turn, [0, 65536) */
#define QUANT_ANGULAR_VELOCITY_PER_RAD 1024    /* an angular velocity is in 1/1024 rad/s */

/* Record flag bits, in the order their parts follow the flags. */
enum quant_flag {
    QUANT_POSITION = 1u << 0,         /* zz dx, zz dy */
    QUANT_VELOCITY = 1u << 1,         /* zz dvx, zz dvy */
    QUANT_ANGLE = 1u << 2,            /* zz da (modulo 65536 into [-32768, 32767]) */
    QUANT_INPUT_SEQ = 1u << 3,        /* varint last_input_seq (absolute) */
    QUANT_ANGULAR_VELOCITY = 1u << 4, /* zz dw */
    QUANT_NEW = 1u << 5,              /* varint kind, varint owner, varint len, Shape bytes */
    QUANT_FILTER = 1u << 6,           /* varint category, varint mask, varint sensor */
    QUANT_GROUND = 1u << 7,           /* 1.2: varint grounded (0/1), varint ground_id (absolute) */
    QUANT_ONE_WAY = 1u << 8,          /* 1.2: only with QUANT_NEW, no payload: a one-way body */
};
#define QUANT_KNOWN_FLAGS 0x1ffu

/* A body's state in quanta: what a record's deltas apply to, and what the server compares to
 * know whether a body changed for a client (memcmp: no padding). The angle takes 16 bits so that
 * grounded fits beside it and the state stays 32 bytes (two to a cache line in the server's
 * per-client arrays). */
typedef struct quant_state {
    int32_t px, py;          /* position */
    int32_t vx, vy;          /* velocity */
    int32_t w;               /* angular velocity */
    uint32_t last_input_seq; /* absolute */
    uint16_t angle;          /* [0, QUANT_ANGLE_STEPS) */
    uint16_t grounded;       /* 1.2: 1 when a character stands (BodyState.grounded), else 0 */
    uint32_t ground_id;      /* 1.2: the body it stands on; 0 for none or the bounds */
} quant_state;
_Static_assert(sizeof(quant_state) == 32, "quant_state is compared with memcmp: no padding");

/* Bytes of a record without its new-body part: id_gap (5) + flags (2) + 4 x 5 + 3 + 5 + 5, and
 * bit 7's 1 + 5; rounded up to 8 (the server copies records as this many bytes). */
#define QUANT_CHANGE_MAX 48

/* q = value / quantum rounded half away from zero, held to int32 (a non-finite value is 0).
 * quantum > 0. */
int32_t quant_of(double value, double quantum);
/* An angle in radians as 1/65536 turns in [0, 65536). */
uint32_t quant_angle_of(double radians);

static inline uint64_t quant_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t quant_unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1u); }

/* The flags and parts (not the id_gap) of a known body's record: the parts of cur that differ
 * from base. Writes at most QUANT_CHANGE_MAX bytes; returns the length, 0 when nothing differs
 * (then no record is due). */
size_t quant_encode_change(const quant_state *cur, const quant_state *base, uint8_t *out);

/* A body's filters (SpawnBody.category, mask, sensor). Bit 6 of a new body's record carries them
 * only when one differs from the defaults. */
typedef struct quant_filter {
    uint32_t category, mask;
    bool sensor;
} quant_filter;
#define QUANT_DEFAULT_CATEGORY 1u
#define QUANT_DEFAULT_MASK 0xffffffffu
#define QUANT_NEW_EXTRA_MAX 26 /* kind, owner, shape length: 15; category, mask, sensor: 11 */

/* The flags and parts of a body new to the client: its parts against zero, then kind, owner and
 * the Shape message's bytes (shape_len of them), then its filters if one is not the default
 * (filter NULL: the defaults), then its grounded part when it stands (bit 7); bit 8 when it is
 * one_way. out has room for QUANT_CHANGE_MAX + QUANT_NEW_EXTRA_MAX + shape_len bytes; returns the
 * length. */
size_t quant_encode_new(const quant_state *cur, uint32_t kind, uint32_t owner, const uint8_t *shape,
                        size_t shape_len, const quant_filter *filter, bool one_way, uint8_t *out);

/* ---- The client's side --------------------------------------------------------------------- */

typedef struct quant_body {
    uint32_t id;
    uint32_t kind;  /* BodyKind */
    uint32_t owner; /* client id, 0 for the world's */
    quant_state q;  /* the sum of every delta received */
    bool one_way;   /* its new record had bit 8 (BodyState.one_way) */
} quant_body;

/* Every body a client was told about and not told to forget, ascending id. */
typedef struct quant_table {
    quant_body *b;
    size_t count;
    size_t cap;
} quant_table;

#define QUANT_TABLE_MAX (1u << 24) /* bodies a table holds at most (a world's id slots) */

/* One record as decoded: the body's state after it (in the table), the flags, and for a new body
 * its Shape message's bytes (inside the packed buffer). */
typedef struct quant_record {
    const quant_body *body; /* valid until the table changes */
    unsigned flags;
    const uint8_t *shape; /* QUANT_NEW only, else NULL */
    size_t shape_len;
    uint32_t category, mask; /* QUANT_FILTER only, else 0 */
    bool sensor;
} quant_record;

typedef void (*quant_record_fn)(void *ctx, const quant_record *r);

/* Makes to hold what from holds (to's storage grows once, never shrinks). False when out of
 * memory: to is unchanged. A client keeps past states this way (its UDP baselines). */
bool quant_table_copy(quant_table *to, const quant_table *from);
void quant_table_free(quant_table *t);
const quant_body *quant_table_find(const quant_table *t, uint32_t id);
/* Forgets a body (Snapshot.removed); an unknown id is ignored. */
void quant_table_remove(quant_table *t, uint32_t id);

/* Applies one Snapshot.packed to the table (after its `removed`), calling fn (may be NULL) after
 * each record. False when malformed: truncated, ids not ascending, an unknown flag bit, a change
 * to a body not in the table, a new body already in it, a filter part or bit 8 without the new
 * part, or a value out of range (grounded neither 0 nor 1 among them). The table then holds what
 * was applied before the fault: a client that gets a malformed snapshot has lost sync and
 * reconnects. */
bool quant_apply(quant_table *t, const uint8_t *packed, size_t len, quant_record_fn fn, void *ctx);

#endif

/* journal_format: the record tags and their encoding, shared by the writer and the reader
 * (docs/recording.md is the description for other languages; this is the one in C).
 *
 * Every record is a tag byte and its payload. Integers are LEB128 varints (ids, counts, owners,
 * sequence deltas); floats are IEEE-754 binary32, little-endian, copied bit for bit (a replay
 * must call the world with the very floats the daemon did); hashes are 8 bytes little-endian. */
#ifndef COLLIDE_JOURNAL_FORMAT_H
#define COLLIDE_JOURNAL_FORMAT_H

#include <string.h>

#include "journal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "journal: the format is little-endian and this code copies floats as the host holds them"
#endif

enum {
    JTAG_STEP = 0x01,       /* varint n (1..JOURNAL_MAX_STEPS): the world steps n times */
    JTAG_HASH = 0x02,       /* u64: world_state_hash after the last step */
    JTAG_SPAWN = 0x03,      /* u8 kind, shape, f32 x y angle, varint owner, varint id given */
    JTAG_DESPAWN = 0x04,    /* varint id */
    JTAG_FILTER = 0x05,     /* varint id, u32 category, u32 mask, u8 sensor */
    JTAG_ONE_WAY = 0x06,    /* varint id, u8 on */
    JTAG_CHARACTER = 0x07,  /* varint id, f32 x5, varint x2 (world_character_options' order) */
    JTAG_COLLISIONS = 0x08, /* u8 movers collide */
    JTAG_END = 0x09,        /* a clean end */
    /* An intent: the tag's top bit, its flags below; then varint zigzag(id - previous intent's
     * id), [varint seq - the body's newest seq], [f32 vx vy], [f32 turning speed]. */
    JTAG_INTENT = 0x80,
    JINTENT_VELOCITY = 0x40, /* a velocity follows; else the body's current intent, bit for bit */
    JINTENT_SPIN = 0x20,     /* a turning speed follows; else the body's current one */
    JINTENT_SEQ = 0x10,      /* a sequence delta follows; else the body's newest + 1 */
    JINTENT_JUMP = 0x08,     /* world_character_jump after the intent */
    JINTENT_RESERVED = 0x07, /* must be 0 */
};

/* The most steps one STEP record holds: a writer splits a longer quiet run, a reader refuses a
 * larger n (a hostile journal cannot ask for 2^32 steps in 6 bytes). 2^20 steps: 4.9 hours at 60
 * Hz. */
#define JOURNAL_MAX_STEPS (1u << 20)

/* A shape's payload: u8 geom_shape_kind, then box f32 hx hy | circle f32 r | polygon u8 n, f32
 * x y n times. */

static inline uint32_t journal_zigzag(int32_t v) {
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t journal_unzigzag(uint32_t v) {
    return (int32_t)(v >> 1) ^ -(int32_t)(v & 1u);
}

#endif

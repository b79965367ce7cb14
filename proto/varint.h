/* Protobuf base-128 varints, the one implementation server, client and tools share: frame
 * prefixes, hand-encoded snapshot deltas, and the in-place field scans of the read paths.
 * Header-only and static inline because every caller is a hot path. */
#ifndef COLLIDE_VARINT_H
#define COLLIDE_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX_BYTES 10 /* any uint64 */

/* Writes v at out (room for VARINT_MAX_BYTES, or varint_size(v)); returns the bytes written. */
static inline size_t varint_write(uint8_t *out, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80u) {
        out[n++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Bytes varint_write(v) takes. */
static inline size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads a varint at *p, never past end; advances *p. False when truncated or longer than
 * VARINT_MAX_BYTES (then *p is left somewhere inside it: the caller gives the buffer up). */
static inline bool varint_read(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7fu) << shift;
        if (!(b & 0x80u)) {
            *out = v;
            return true;
        }
    }
    return false;
}

#endif

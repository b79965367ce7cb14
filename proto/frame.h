/* Framing shared by collided and collide-client: protobuf's standard length-delimited form, a
 * base-128 varint byte count followed by that many bytes (PROTOCOL.md "Transport and framing").
 *
 * The decoder never trusts a declared size: the bound is checked from the prefix alone, before a
 * single body byte is buffered, and a prefix longer than 5 bytes is refused the same way. */
#ifndef COLLIDE_FRAME_H
#define COLLIDE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX_PREFIX 5                  /* varint bytes for any uint32 length */
#define FRAME_DEFAULT_MAX_SIZE (64u * 1024u) /* PROTOCOL.md: default max frame 65,536 bytes */

typedef enum frame_status {
    FRAME_OK = 0,        /* a whole frame is at buf[*prefix_len .. *prefix_len + *body_len) */
    FRAME_NEED_MORE = 1, /* the prefix or the body is incomplete: read more, keep what you have */
    FRAME_TOO_LARGE = 2, /* declared length over max_size, or a prefix over 5 bytes: fatal */
} frame_status;

/* Looks at the start of buf for one frame. On FRAME_OK, *prefix_len and *body_len are set. On
 * FRAME_NEED_MORE, *body_len is set if the prefix is complete (so a caller can tell how much more it
 * needs), else 0. Never reads past buf[len - 1]. */
frame_status frame_peek(const uint8_t *buf, size_t len, uint32_t max_size, size_t *prefix_len,
                        size_t *body_len);

/* Writes the varint prefix for a body of body_len bytes; returns the number of bytes written
 * (1..5). out must have room for FRAME_MAX_PREFIX bytes. */
size_t frame_write_prefix(uint32_t body_len, uint8_t out[FRAME_MAX_PREFIX]);

/* Bytes the prefix of a body of body_len bytes takes. */
size_t frame_prefix_size(uint32_t body_len);

#endif

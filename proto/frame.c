#include "frame.h"

#include "varint.h"

frame_status frame_peek(const uint8_t *buf, size_t len, uint32_t max_size, size_t *prefix_len,
                        size_t *body_len) {
    uint64_t value = 0;
    *prefix_len = 0;
    *body_len = 0;
    for (size_t i = 0; i < FRAME_MAX_PREFIX; i++) {
        if (i >= len) return FRAME_NEED_MORE;
        uint8_t byte = buf[i];
        value |= (uint64_t)(byte & 0x7fu) << (7 * i);
        if ((byte & 0x80u) == 0) {
            /* Checked here, from the prefix alone: the body is never buffered when too large. */
            if (value > max_size) return FRAME_TOO_LARGE;
            *prefix_len = i + 1;
            *body_len = (size_t)value;
            return (len - *prefix_len >= *body_len) ? FRAME_OK : FRAME_NEED_MORE;
        }
        /* A prefix that already exceeds the bound while still continuing is refused early. */
        if (value > max_size) return FRAME_TOO_LARGE;
    }
    return FRAME_TOO_LARGE; /* a sixth continuation byte: longer than any uint32 varint */
}

size_t frame_write_prefix(uint32_t body_len, uint8_t out[FRAME_MAX_PREFIX]) {
    return varint_write(out, body_len);
}

size_t frame_prefix_size(uint32_t body_len) { return varint_size(body_len); }

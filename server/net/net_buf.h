/* net_buf: a growable byte buffer with a hard capacity bound, used for each connection's read
 * buffer (partial frames), output buffer (replies and snapshots appended between writes) and the
 * server's scratch space. Growth doubles, so appends are amortised O(1) and the hot path allocates
 * only while a buffer is still warming up to its working size. */
#ifndef COLLIDE_NET_BUF_H
#define COLLIDE_NET_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_buf {
    uint8_t *data; /* heap storage, NULL while cap == 0 */
    size_t len;    /* bytes in use, data[0..len) */
    size_t cap;    /* bytes allocated */
} net_buf;

/* Makes room for `extra` more bytes past len; false on overflow or out of memory (buf unchanged).
 */
bool net_buf_reserve(net_buf *buf, size_t extra);
/* Appends n bytes; false on out of memory. */
bool net_buf_append(net_buf *buf, const void *bytes, size_t n);
/* Drops the first n bytes (n <= len), moving the rest to the front. */
void net_buf_consume(net_buf *buf, size_t n);
/* Releases the storage when the buffer is empty and bigger than keep_cap: a burst must not leave
 * an idle connection holding its high-water mark. */
void net_buf_trim(net_buf *buf, size_t keep_cap);
void net_buf_free(net_buf *buf);

#endif

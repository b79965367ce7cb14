#include "net_buf.h"

#include <stdlib.h>
#include <string.h>

#define NET_BUF_MIN_CAP 256u /* first allocation: an empty snapshot or a Pong fits many times */

bool net_buf_reserve(net_buf *buf, size_t extra) {
    if (extra <= buf->cap - buf->len) return true;
    if (extra > SIZE_MAX / 2 - buf->len) return false;
    size_t need = buf->len + extra;
    size_t cap = buf->cap ? buf->cap : NET_BUF_MIN_CAP;
    while (cap < need)
        cap *= 2;
    uint8_t *data = realloc(buf->data, cap);
    if (!data) return false;
    buf->data = data;
    buf->cap = cap;
    return true;
}

bool net_buf_append(net_buf *buf, const void *bytes, size_t n) {
    if (n == 0) return true;
    if (!net_buf_reserve(buf, n)) return false;
    memcpy(buf->data + buf->len, bytes, n);
    buf->len += n;
    return true;
}

void net_buf_consume(net_buf *buf, size_t n) {
    if (n >= buf->len) {
        buf->len = 0;
        return;
    }
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
}

void net_buf_trim(net_buf *buf, size_t keep_cap) {
    if (buf->len == 0 && buf->cap > keep_cap) net_buf_free(buf);
}

void net_buf_free(net_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
}

#include "conn.h"

#include <stdlib.h>
#include <string.h>

#include "frame.h"

static void conn_fail(cc_conn *c, int status, const char *reason) {
    if (c->failed_reported || c->closing) return;
    c->failed_reported = true;
    if (c->hooks->failed) c->hooks->failed(c, status, reason);
    cc_conn_close(c);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    cc_conn *c = h->data;
    buf->base = (char *)c->rx + c->rx_len;
    buf->len = c->rx_cap - c->rx_len;
}

/* Consumes every whole frame at the start of rx; keeps a partial one, growing rx (up to the bound
 * the prefix was checked against) only when the frame cannot fit. */
static void conn_consume(cc_conn *c) {
    uint32_t off = 0;
    while (!c->closing) {
        size_t prefix, body;
        frame_status st = frame_peek(c->rx + off, c->rx_len - off, c->max_frame, &prefix, &body);
        if (st == FRAME_TOO_LARGE) {
            conn_fail(c, UV_EPROTO, "frame_too_large");
            return;
        }
        if (st == FRAME_NEED_MORE) {
            size_t need = prefix ? prefix + body : FRAME_MAX_PREFIX;
            if (need > c->rx_cap) {
                /* Bounded: frame_peek refused anything over max_frame. */
                uint8_t *grown = realloc(c->rx, need);
                if (!grown) {
                    conn_fail(c, UV_ENOMEM, "out_of_memory");
                    return;
                }
                c->rx = grown;
                c->rx_cap = (uint32_t)need;
            }
            break;
        }
        if (c->hooks->frame) c->hooks->frame(c, c->rx + off + prefix, body);
        off += (uint32_t)(prefix + body);
    }
    if (off > 0 && off < c->rx_len) memmove(c->rx, c->rx + off, c->rx_len - off);
    c->rx_len -= off <= c->rx_len ? off : c->rx_len;
}

static void conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    cc_conn *c = s->data;
    if (n == 0) return;
    if (n < 0) {
        conn_fail(c, (int)n, n == UV_EOF ? "server_closed" : uv_err_name((int)n));
        return;
    }
    c->bytes_in += (uint64_t)n;
    c->rx_len += (uint32_t)n;
    conn_consume(c);
}

static void conn_connected(uv_connect_t *req, int status) {
    cc_conn *c = req->data;
    if (status == UV_ECANCELED || c->closing) return;
    if (status == 0) {
        uv_tcp_nodelay(&c->tcp, 1);
        int rc = uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, conn_read);
        if (rc != 0) status = rc;
    }
    if (c->hooks->connected) c->hooks->connected(c, status);
    if (status != 0) {
        c->failed_reported = true; /* connected() already told the owner */
        cc_conn_close(c);
    }
}

int cc_conn_start(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                  const cc_conn_hooks *hooks, void *user, uint32_t max_frame) {
    memset(c, 0, sizeof *c);
    c->hooks = hooks;
    c->user = user;
    c->max_frame = max_frame;
    c->rx = malloc(CC_CONN_RX_INITIAL);
    if (!c->rx) return UV_ENOMEM;
    c->rx_cap = CC_CONN_RX_INITIAL;
    int rc = uv_tcp_init(loop, &c->tcp);
    if (rc != 0) {
        free(c->rx);
        c->rx = NULL;
        return rc;
    }
    c->initialised = true;
    c->tcp.data = c;
    c->connect_req.data = c;
    rc = uv_tcp_connect(&c->connect_req, &c->tcp, addr, conn_connected);
    if (rc != 0) {
        /* Still must close the initialised handle; the owner hears only the closed() hook. */
        c->failed_reported = true;
        cc_conn_close(c);
    }
    return rc;
}

bool cc_conn_queue(cc_conn *c, const Collide__V1__ClientMessage *msg) {
    if (c->closing) return false;
    size_t body = collide__v1__client_message__get_packed_size(msg);
    size_t need = frame_prefix_size((uint32_t)body) + body;
    uint8_t a = c->tx_active;
    if (body > UINT32_MAX || c->tx_len[a] + need > CC_CONN_TX_CAP) {
        c->frames_dropped++;
        return false;
    }
    uint8_t *p = c->tx[a] + c->tx_len[a];
    size_t prefix = frame_write_prefix((uint32_t)body, p);
    collide__v1__client_message__pack(msg, p + prefix);
    c->tx_len[a] += (uint32_t)need;
    c->bytes_out += need;
    return true;
}

static void conn_written(uv_write_t *req, int status) {
    cc_conn *c = req->data;
    c->writing = false;
    c->tx_len[c->tx_active ^ 1u] = 0;
    if (status == UV_ECANCELED || c->closing) return;
    if (status < 0) {
        conn_fail(c, status, uv_err_name(status));
        return;
    }
    cc_conn_flush(c);
}

void cc_conn_flush(cc_conn *c) {
    if (c->closing || c->writing) return;
    uint8_t a = c->tx_active;
    uint32_t len = c->tx_len[a];
    if (len == 0) return;
    uv_buf_t buf = uv_buf_init((char *)c->tx[a], len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &buf, 1);
    if (n == (int)len) {
        c->tx_len[a] = 0;
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        conn_fail(c, n, uv_err_name(n));
        return;
    }
    uint32_t done = n > 0 ? (uint32_t)n : 0u;
    buf = uv_buf_init((char *)c->tx[a] + done, len - done);
    c->write_req.data = c;
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, conn_written);
    if (rc != 0) {
        conn_fail(c, rc, uv_err_name(rc));
        return;
    }
    c->writing = true;
    c->tx_active = a ^ 1u; /* new frames go to the other buffer while this one is in flight */
}

uint32_t cc_conn_pending(const cc_conn *c) { return c->tx_len[0] + c->tx_len[1]; }

static void conn_closed(uv_handle_t *h) {
    cc_conn *c = h->data;
    free(c->rx);
    c->rx = NULL;
    c->rx_len = c->rx_cap = 0;
    if (c->hooks->closed) c->hooks->closed(c);
}

void cc_conn_close(cc_conn *c) {
    if (c->closing || !c->initialised) return;
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

#include "conn.h"

#include <http_parser.h>
#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#include "collide_assert.h"
#include "conn_udp.h"
#include "collide_rng.h"
#include "frame.h"

#define WS_READ_BUF 4096u
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

static void conn_fail(cc_conn *c, int status, const char *reason) {
    if (c->failed_reported || c->closing) return;
    c->failed_reported = true;
    if (c->hooks->failed) c->hooks->failed(c, status, reason);
    cc_conn_close(c);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    cc_conn *c = h->data;
    if (c->ws_open) { /* rx holds the message being reassembled */
        buf->base = (char *)c->ws_read;
        buf->len = WS_READ_BUF;
        return;
    }
    buf->base = (char *)c->rx + c->rx_len;
    buf->len = c->rx_cap - c->rx_len;
}

/* ---- WebSocket ------------------------------------------------------------------------------ */

static ssize_t ws_recv(uint8_t *buf, size_t len, int flags, void *user) {
    (void)flags;
    cc_conn *c = user;
    size_t n = c->ws_feed_len < len ? c->ws_feed_len : len;
    if (n == 0) return 0; /* WSLAY_ERR_WANT_READ */
    memcpy(buf, c->ws_feed, n);
    c->ws_feed += n;
    c->ws_feed_len -= n;
    return (ssize_t)n;
}

static ssize_t ws_send(const uint8_t *data, size_t len, int flags, void *user) {
    (void)data, (void)len, (void)flags, (void)user;
    return -1; /* the frame layer only reads here */
}

static int ws_genmask(uint8_t *buf, size_t len, void *user) {
    (void)buf, (void)len, (void)user;
    return -1;
}

/* The server's frames in data: each whole binary message goes to hooks->frame. */
static void ws_consume(cc_conn *c, const uint8_t *data, size_t len) {
    c->ws_feed = data;
    c->ws_feed_len = len;
    while (!c->closing) {
        struct wslay_frame_iocb f;
        memset(&f, 0, sizeof f);
        ssize_t r = wslay_frame_recv(c->ws_frames, &f);
        if (r == WSLAY_ERR_WANT_READ) break;
        if (r < 0 || f.mask || f.rsv) {
            conn_fail(c, UV_EPROTO, "bad_ws_frame");
            return;
        }
        if (!c->ws_in_frame) {
            c->ws_in_frame = true;
            c->ws_frame_off = 0;
            if (f.opcode == 0x8) { /* close: the server is done (a Goodbye or Error came first) */
                conn_fail(c, UV_EOF, "server_closed");
                return;
            }
            if (f.opcode == 0x1 || f.opcode > 0xa ||
                (f.opcode < 0x8 && (uint64_t)c->ws_msg_len + f.payload_length > c->max_frame)) {
                conn_fail(c, UV_EPROTO, f.opcode == 0x1 ? "text_ws_frame" : "frame_too_large");
                return;
            }
            if (f.opcode < 0x8 && c->ws_msg_len + f.payload_length > c->rx_cap) {
                uint32_t need = c->ws_msg_len + (uint32_t)f.payload_length; /* <= max_frame */
                uint8_t *grown = realloc(c->rx, need);
                if (!grown) {
                    conn_fail(c, UV_ENOMEM, "out_of_memory");
                    return;
                }
                c->rx = grown;
                c->rx_cap = need;
            }
        }
        c->ws_frame_off += f.data_length;
        bool frame_done = c->ws_frame_off == f.payload_length;
        if (frame_done) c->ws_in_frame = false;
        if (f.opcode >= 0x8) continue; /* ping, pong: the server sends none; ignored */
        memcpy(c->rx + c->ws_msg_len, f.data, f.data_length);
        c->ws_msg_len += (uint32_t)f.data_length;
        if (frame_done && f.fin) {
            uint32_t n = c->ws_msg_len;
            c->ws_msg_len = 0;
            if (c->hooks->frame) c->hooks->frame(c, c->rx, n);
        }
    }
}

typedef struct ws_response {
    const char *field; /* the header being read */
    size_t field_len;
    bool accept_ok;   /* Sec-WebSocket-Accept matched */
    const char *want; /* the expected accept value */
} ws_response;

static int ws_on_field(http_parser *p, const char *at, size_t n) {
    ws_response *r = p->data;
    r->field = at;
    r->field_len = n;
    return 0;
}

static int ws_on_value(http_parser *p, const char *at, size_t n) {
    ws_response *r = p->data;
    if (r->field_len == 20 && strncasecmp(r->field, "Sec-WebSocket-Accept", 20) == 0)
        r->accept_ok = n == strlen(r->want) && memcmp(at, r->want, n) == 0;
    return 0;
}

/* The upgrade's response so far, in rx: the 101 with the right accept opens the frames (what
 * followed it is read as frames) and reports the connection. */
static void ws_handshake(cc_conn *c) {
    bool whole = false;
    for (uint32_t i = 3; i < c->rx_len && !whole; i++)
        whole = memcmp(c->rx + i - 3, "\r\n\r\n", 4) == 0;
    if (!whole) {
        if (c->rx_len == c->rx_cap) conn_fail(c, UV_EPROTO, "bad_ws_upgrade");
        return;
    }
    char want[BASE64_ENCODE_RAW_LENGTH(SHA1_DIGEST_SIZE) + 1];
    struct sha1_ctx sha;
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_init(&sha);
    sha1_update(&sha, strlen(c->ws_key), (const uint8_t *)c->ws_key);
    sha1_update(&sha, strlen(WS_GUID), (const uint8_t *)WS_GUID);
    sha1_digest(&sha, sizeof digest, digest);
    base64_encode_raw(want, sizeof digest, digest);
    want[sizeof want - 1] = '\0';
    ws_response r = {.want = want};
    http_parser_settings s;
    memset(&s, 0, sizeof s);
    s.on_header_field = ws_on_field;
    s.on_header_value = ws_on_value;
    http_parser p;
    http_parser_init(&p, HTTP_RESPONSE);
    p.data = &r;
    size_t used = http_parser_execute(&p, &s, (const char *)c->rx, c->rx_len);
    if (p.status_code != 101 || !p.upgrade || !r.accept_ok) {
        /* Told at connected(): the owner counts a failed connect. */
        c->failed_reported = true;
        if (c->hooks->connected) c->hooks->connected(c, UV_EPROTO);
        cc_conn_close(c);
        return;
    }
    static const struct wslay_frame_callbacks cb = {ws_send, ws_recv, ws_genmask};
    c->ws_read = malloc(WS_READ_BUF);
    if (!c->ws_read || wslay_frame_context_init(&c->ws_frames, &cb, c) != 0) {
        conn_fail(c, UV_ENOMEM, "out_of_memory");
        return;
    }
    c->ws_open = true;
    size_t rest = c->rx_len - used; /* < rx_cap <= WS_READ_BUF */
    memcpy(c->ws_read, c->rx + used, rest);
    c->rx_len = 0;
    if (c->hooks->connected) c->hooks->connected(c, 0);
    if (rest && !c->closing) ws_consume(c, c->ws_read, rest);
}

static void ws_send_upgrade(cc_conn *c) {
    uint8_t key[16];
    for (int i = 0; i < 16; i += 8) {
        uint64_t v = collide_xorshift64(&c->ws_rng);
        memcpy(key + i, &v, 8);
    }
    base64_encode_raw(c->ws_key, sizeof key, key);
    c->ws_key[BASE64_ENCODE_RAW_LENGTH(16)] = '\0';
    int n = snprintf((char *)c->tx[c->tx_active], CC_CONN_TX_CAP,
                     "GET /v1 HTTP/1.1\r\nHost: collided\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: collide.v1\r\n\r\n",
                     c->ws_key);
    c->tx_len[c->tx_active] = (uint32_t)n;
    c->bytes_out += (uint64_t)n;
    cc_conn_flush(c);
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
    if (c->ws_open) {
        ws_consume(c, c->ws_read, (size_t)n);
        return;
    }
    c->rx_len += (uint32_t)n;
    if (c->ws)
        ws_handshake(c);
    else
        conn_consume(c);
}

static void conn_connected(uv_connect_t *req, int status) {
    cc_conn *c = req->data;
    if (status == UV_ECANCELED || c->closing) return;
    if (status == 0) {
        uv_tcp_nodelay(&c->tcp, 1);
        int rc = uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, conn_read);
        if (rc != 0) status = rc;
        if (rc == 0 && c->ws) { /* connected() waits for the 101 */
            ws_send_upgrade(c);
            return;
        }
    }
    if (c->hooks->connected) c->hooks->connected(c, status);
    if (status != 0) {
        c->failed_reported = true; /* connected() already told the owner */
        cc_conn_close(c);
    }
}

static int conn_start(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                      const cc_conn_hooks *hooks, void *user, uint32_t max_frame, bool ws);

int cc_conn_start(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                  const cc_conn_hooks *hooks, void *user, uint32_t max_frame) {
    return conn_start(c, loop, addr, hooks, user, max_frame, false);
}

int cc_conn_start_ws(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                     const cc_conn_hooks *hooks, void *user, uint32_t max_frame) {
    return conn_start(c, loop, addr, hooks, user, max_frame, true);
}

static int conn_start(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                      const cc_conn_hooks *hooks, void *user, uint32_t max_frame, bool ws) {
    memset(c, 0, sizeof *c);
    c->ws = ws;
    c->ws_rng = (uv_hrtime() ^ (uint64_t)(uintptr_t)c) | 1u;
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
    if (c->udp) return conn_udp_queue(c, msg);
    if (c->closing) return false;
    size_t body = collide__v1__client_message__get_packed_size(msg);
    /* WebSocket: a masked binary frame (RFC 6455 5.2), its header 2 or 4 bytes plus the key. */
    size_t ws_head = body < 126 ? 6u : 8u;
    size_t need = c->ws ? ws_head + body : frame_prefix_size((uint32_t)body) + body;
    uint8_t a = c->tx_active;
    if (body > UINT32_MAX || c->tx_len[a] + need > CC_CONN_TX_CAP || (c->ws && !c->ws_open)) {
        c->frames_dropped++;
        return false;
    }
    uint8_t *p = c->tx[a] + c->tx_len[a];
    if (c->ws) {
        p[0] = 0x82; /* FIN, binary */
        if (body < 126) {
            p[1] = (uint8_t)(0x80u | body);
        } else { /* < CC_CONN_TX_CAP */
            p[1] = 0x80u | 126u;
            p[2] = (uint8_t)(body >> 8);
            p[3] = (uint8_t)body;
        }
        uint8_t *key = p + ws_head - 4;
        uint32_t k = (uint32_t)collide_xorshift64(&c->ws_rng);
        memcpy(key, &k, 4);
        /* need reserved get_packed_size's count: packing more would run past tx */
        size_t packed = collide__v1__client_message__pack(msg, p + ws_head);
        COLLIDE_ASSERT(packed == body);
        (void)packed;
        for (size_t i = 0; i < body; i++)
            p[ws_head + i] ^= key[i & 3];
        c->tx_len[a] += (uint32_t)need;
        c->bytes_out += need;
        return true;
    }
    size_t prefix = frame_write_prefix((uint32_t)body, p);
    size_t packed = collide__v1__client_message__pack(msg, p + prefix);
    COLLIDE_ASSERT(packed == body); /* as above */
    (void)packed;
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
    if (c->udp) {
        conn_udp_flush(c);
        return;
    }
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
    free(c->ws_read);
    c->ws_read = NULL;
    if (c->ws_frames) wslay_frame_context_free(c->ws_frames);
    c->ws_frames = NULL;
    if (c->hooks->closed) c->hooks->closed(c);
}

void cc_conn_close(cc_conn *c) {
    if (c->closing || !c->initialised) return;
    if (c->udp) {
        conn_udp_close(c);
        return;
    }
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

#include "net_ws.h"
#include "net_viewer.h"

#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wslay/wslay.h>

#include "net_http.h"
#include "net_internal.h"
#include "net_server.h"
#include "net_log.h"
#include "net_session.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" /* RFC 6455 1.3 */
#define WS_OP_CONT 0x0
#define WS_OP_TEXT 0x1
#define WS_OP_BINARY 0x2
#define WS_OP_CLOSE 0x8
#define WS_OP_PING 0x9
#define WS_OP_PONG 0xa
#define WS_MAX_CONTROL 125 /* RFC 6455 5.5 */

struct net_ws {
    bool open;                      /* handshake done: frames from here on */
    bool refused;                   /* the handshake was answered with an HTTP error */
    bool close_sent;                /* a close frame was appended */
    bool peer_closed;               /* the peer's close frame came: it sends nothing more */
    uint16_t close_code;            /* the code a frame error or the peer's close chose; 0: none */
    wslay_frame_context_ptr frames; /* wslay's frame reader (it buffers up to 4 KiB itself) */
    const uint8_t *feed;            /* bytes offered to wslay's recv callback ... */
    size_t feed_len;                /* ... and how many are left */
    uint64_t fed;                   /* bytes given to wslay in all */
    uint64_t used;                  /* of those, bytes of frames wslay has returned (header and
                                       payload): fed - used is what it holds unread */
    bool in_frame;                  /* a frame's payload is being returned in chunks */
    uint64_t frame_off;             /* payload bytes of it returned so far */
    bool in_msg;                    /* a binary message is being reassembled (into c->in) */
    uint8_t ctrl_op;                /* the control frame being read */
    uint8_t ctrl[WS_MAX_CONTROL];   /* its payload */
    size_t ctrl_len;                /* bytes in ctrl */
    char *hs;                       /* the handshake's bytes so far (NET_WS_MAX_HANDSHAKE) */
    size_t hs_len;                  /* bytes in hs */
};

/* The WebSocket state of a client of this transport (net_transport.h: c->transport_state). */
static inline net_ws *ws_of(const net_client *c) { return c->transport_state; }

const char *net_ws_handshake_result_str(net_ws_handshake_result r) {
    static const char *names[NET_WS_HS_RESULT_COUNT] = {
        "accepted", "bad_request", "bad_version", "not_found", "forbidden", "too_large", "page"};
    return (unsigned)r < NET_WS_HS_RESULT_COUNT ? names[r] : "unknown";
}

/* wslay asks for bytes: it gets what this feed has left (none: WANT_READ). */
static ssize_t ws_recv(uint8_t *buf, size_t len, int flags, void *user) {
    (void)flags;
    net_ws *ws = user;
    size_t n = ws->feed_len < len ? ws->feed_len : len;
    if (n == 0) return 0;
    memcpy(buf, ws->feed, n);
    ws->feed += n;
    ws->feed_len -= n;
    ws->fed += n;
    return (ssize_t)n;
}

/* Never called: the frame layer only reads here (the server's frames are written by
 * net_ws_frame_header). */
static ssize_t ws_send(const uint8_t *data, size_t len, int flags, void *user) {
    (void)data, (void)len, (void)flags, (void)user;
    return -1;
}

static int ws_genmask(uint8_t *buf, size_t len, void *user) {
    (void)buf, (void)len, (void)user;
    return -1;
}

static void ws_free(net_client *c);

static bool ws_open_frames(net_ws *ws) {
    static const struct wslay_frame_callbacks cb = {ws_send, ws_recv, ws_genmask};
    ws->open = true;
    return wslay_frame_context_init(&ws->frames, &cb, ws) == 0;
}

/* A client accepted on the WebSocket port has its handshake to come; one adopted from the front
 * had it there, and reads frames from its first byte. */
static bool ws_open(net_client *c, bool adopted) {
    net_ws *ws = calloc(1, sizeof *ws);
    c->transport_state = ws;
    if (!ws) return false;
    if (adopted ? !ws_open_frames(ws) : !(ws->hs = malloc(NET_WS_MAX_HANDSHAKE))) {
        ws_free(c);
        return false;
    }
    return true;
}

static void ws_free(net_client *c) {
    net_ws *ws = ws_of(c);
    if (!ws) return;
    if (ws->frames) wslay_frame_context_free(ws->frames);
    free(ws->hs);
    free(ws);
    c->transport_state = NULL;
}

size_t net_ws_frame_header(uint8_t opcode, uint64_t len, uint8_t out[NET_WS_MAX_HEADER]) {
    out[0] = (uint8_t)(0x80u | (opcode & 0x0fu)); /* FIN: the server never fragments */
    if (len < 126) {
        out[1] = (uint8_t)len;
        return 2;
    }
    if (len < 65536) {
        out[1] = 126;
        out[2] = (uint8_t)(len >> 8);
        out[3] = (uint8_t)len;
        return 4;
    }
    out[1] = 127;
    for (int i = 0; i < 8; i++)
        out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
    return 10;
}

/* A control frame from the server (pong, close): header and payload appended together. */
static void append_control(net_server *srv, net_client *c, uint8_t op, const uint8_t *payload,
                           size_t len) {
    uint8_t frame[NET_WS_MAX_HEADER + WS_MAX_CONTROL];
    size_t h = net_ws_frame_header(op, len, frame);
    if (len) memcpy(frame + h, payload, len);
    net_server_append_raw(srv, c, frame, h + len);
}

static uint16_t close_code_of(net_disconnect_reason reason) {
    switch (reason) {
    case NET_DISC_SHUTDOWN:
        return NET_WS_CLOSE_GOING_AWAY;
    case NET_DISC_FATAL_ERROR:
        return NET_WS_CLOSE_POLICY;
    default:
        return NET_WS_CLOSE_NORMAL;
    }
}

/* The close frame, after what is queued: its code the one a frame error chose, else c->reason's.
 * Once, and only once the WebSocket is open. */
static void ws_on_closing(net_server *srv, net_client *c) {
    net_ws *ws = ws_of(c);
    if (!ws || !ws->open || ws->close_sent) return;
    ws->close_sent = true;
    uint16_t code = ws->close_code ? ws->close_code : close_code_of(c->reason);
    uint8_t payload[2] = {(uint8_t)(code >> 8), (uint8_t)code};
    append_control(srv, c, WS_OP_CLOSE, payload, sizeof payload);
}

/* Sent a close frame or an HTTP refusal (and the peer had not closed first): linger for its EOF
 * so that the close is not lost to a reset. */
static bool ws_linger(const net_client *c) {
    const net_ws *ws = ws_of(c);
    return ws && (ws->close_sent || ws->refused) && !ws->peer_closed;
}

/* ---- Handshake --------------------------------------------------------------------------------
 */

/* What the handshake needs of the request's headers. */
typedef struct ws_headers {
    bool upgrade_websocket;  /* Upgrade lists "websocket" */
    bool connection_upgrade; /* Connection lists "upgrade" */
    const char *key;         /* Sec-WebSocket-Key */
    size_t key_len;
    int keys;            /* how many Sec-WebSocket-Key headers */
    const char *version; /* Sec-WebSocket-Version */
    size_t version_len;
    bool protocol_offered; /* a Sec-WebSocket-Protocol header came */
    bool protocol_ours;    /* ... listing collide.v1 */
    const char *origin;    /* Origin */
    size_t origin_len;
} ws_headers;

static bool name_is(const char *name, size_t len, const char *want) {
    return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

/* Whether the comma-separated list v[0..len) holds token (case-insensitive, spaces trimmed). */
static bool list_has(const char *v, size_t len, const char *token) {
    size_t tl = strlen(token), i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t start = i;
        while (i < len && v[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end - start == tl && strncasecmp(v + start, token, tl) == 0) return true;
    }
    return false;
}

static void on_ws_header(void *ctx, const char *name, size_t nl, const char *value, size_t vl) {
    ws_headers *h = ctx;
    if (name_is(name, nl, "Upgrade")) {
        h->upgrade_websocket |= list_has(value, vl, "websocket");
    } else if (name_is(name, nl, "Connection")) {
        h->connection_upgrade |= list_has(value, vl, "upgrade");
    } else if (name_is(name, nl, "Sec-WebSocket-Key")) {
        h->key = value;
        h->key_len = vl;
        h->keys++;
    } else if (name_is(name, nl, "Sec-WebSocket-Version")) {
        h->version = value;
        h->version_len = vl;
    } else if (name_is(name, nl, "Sec-WebSocket-Protocol")) {
        h->protocol_offered = true;
        h->protocol_ours |= list_has(value, vl, NET_WS_SUBPROTOCOL);
    } else if (name_is(name, nl, "Origin")) {
        h->origin = value;
        h->origin_len = vl;
    }
}

/* A key is the base64 of 16 bytes (RFC 6455 4.1): 24 characters. */
static bool key_valid(const char *key, size_t len) {
    if (len != 24) return false;
    struct base64_decode_ctx b;
    uint8_t raw[BASE64_DECODE_LENGTH(24)];
    size_t n = sizeof raw;
    base64_decode_init(&b);
    return base64_decode_update(&b, &n, raw, len, key) && base64_decode_final(&b) && n == 16;
}

/* Whether --ws-origins (a comma list; empty or holding "*": any) admits origin. Compared whole,
 * case-insensitively (browsers send scheme://host[:port], lower case). */
static bool origin_allowed(const char *list, const char *origin, size_t len) {
    size_t list_len = strlen(list);
    if (list_len == 0 || list_has(list, list_len, "*")) return true;
    char o[256];
    if (len == 0 || len >= sizeof o) return false;
    memcpy(o, origin, len);
    o[len] = '\0';
    return list_has(list, list_len, o);
}

static void hs_refuse(net_server *srv, net_client *c, net_ws_handshake_result result, int status,
                      const char *reason, const char *why) {
    net_ws *ws = ws_of(c);
    char resp[512];
    char body[160];
    int bl = snprintf(body, sizeof body, "%s\n", why);
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %d\r\nConnection: close\r\n%s\r\n%s",
                     status, reason, bl,
                     result == NET_WS_HS_VERSION ? "Sec-WebSocket-Version: 13\r\n" : "", body);
    srv->metrics.ws_handshakes_total[result]++;
    net_log(NET_LOG_DEBUG, "ws_refused", c->id, c->addr, "%d %s", status, why);
    ws->refused = true;
    free(ws->hs);
    ws->hs = NULL;
    net_server_append_raw(srv, c, resp, (size_t)n);
    net_server_enter_closing(srv, c, NET_DISC_FATAL_ERROR);
}

static void frames_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len);

/* The pages on the WebSocket port (--viewer): the live viewer (issue 14) and the play page
 * (issue 35), each a page and its bundle, and the world's WebAssembly module the play page
 * predicts with, compiled into the daemon (net_viewer.h). */
typedef struct ws_page {
    const char *path;
    const char *body;
    const size_t *size; /* NULL: a NUL-terminated text; else its size, 0 for none (not served) */
    const char *type;
} ws_page;

#define WS_HTML "text/html; charset=utf-8"
#define WS_JS "text/javascript; charset=utf-8"
#define WS_WASM "application/wasm" /* what WebAssembly.instantiateStreaming asks for */
static const ws_page ws_pages[] = {
    {"/", net_viewer_html, NULL, WS_HTML},
    {"/index.html", net_viewer_html, NULL, WS_HTML},
    {"/dist/viewer.js", net_viewer_js, NULL, WS_JS},
    {"/play", net_play_html, NULL, WS_HTML},
    {"/dist/play.js", net_play_js, NULL, WS_JS},
    {"/dist/collide_world.wasm", (const char *)net_play_wasm, &net_play_wasm_size, WS_WASM},
};

/* A plain GET on the WebSocket port, not an upgrade, of one of the pages. Answered whole, then the
 * connection closes as any HTTP/1.0-style exchange: the page opens its own WebSocket to /v1
 * afterwards. */
static bool serve_page(net_server *srv, net_client *c, const net_http_request *req) {
    const char *body = NULL, *type = NULL;
    size_t len = 0;
    for (size_t i = 0; i < sizeof ws_pages / sizeof ws_pages[0] && !body; i++) {
        const ws_page *pg = &ws_pages[i];
        if (req->path_len == strlen(pg->path) && memcmp(req->path, pg->path, req->path_len) == 0) {
            len = pg->size ? *pg->size : strlen(pg->body);
            body = len ? pg->body : NULL;
            type = pg->type;
        }
    }
    if (!body) return false;
    net_ws *ws = ws_of(c);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-cache\r\nConnection: close\r\n\r\n",
                     type, len);
    srv->metrics.ws_handshakes_total[NET_WS_HS_PAGE]++;
    ws->refused = true; /* no frames: what follows the request is ignored */
    free(ws->hs);
    ws->hs = NULL;
    net_server_append_page(srv, c, head, (size_t)n);
    net_server_append_page(srv, c, body, len);
    net_server_enter_closing(srv, c, NET_DISC_CLIENT_CLOSED);
    return true;
}

/* The handshake's bytes so far: refused, still incomplete, or upgraded (and the bytes after the
 * request, if any, read as frames). */
static void handshake_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    net_ws *ws = ws_of(c);
    size_t take = NET_WS_MAX_HANDSHAKE - ws->hs_len;
    if (take > len) take = len;
    memcpy(ws->hs + ws->hs_len, data, take);
    ws->hs_len += take;
    ws_headers h;
    memset(&h, 0, sizeof h);
    net_http_request req;
    net_http_status st =
        net_http_read(ws->hs, ws->hs_len, NET_WS_MAX_HANDSHAKE, &req, on_ws_header, &h);
    if (st == NET_HTTP_NEED_MORE) return;
    if (st == NET_HTTP_TOO_LARGE) {
        hs_refuse(srv, c, NET_WS_HS_TOO_LARGE, 431, "Request Header Fields Too Large",
                  "request too large");
        return;
    }
    if (st != NET_HTTP_GET || !req.get || !req.http11) {
        hs_refuse(srv, c, NET_WS_HS_BAD_REQUEST, 400, "Bad Request", "not an HTTP/1.1 GET");
        return;
    }
    if (srv->cfg.viewer && !req.upgrade && serve_page(srv, c, &req)) return;
    if (!(req.path_len == strlen(NET_WS_PATH) &&
          memcmp(req.path, NET_WS_PATH, req.path_len) == 0)) {
        hs_refuse(srv, c, NET_WS_HS_NOT_FOUND, 404, "Not Found",
                  "not found: the WebSocket path is /v1");
        return;
    }
    if (!h.upgrade_websocket || !h.connection_upgrade || !req.upgrade) {
        hs_refuse(srv, c, NET_WS_HS_BAD_REQUEST, 400, "Bad Request", "not a WebSocket upgrade");
        return;
    }
    if (!(h.version_len == 2 && memcmp(h.version, "13", 2) == 0)) {
        hs_refuse(srv, c, NET_WS_HS_VERSION, 426, "Upgrade Required",
                  "Sec-WebSocket-Version must be 13");
        return;
    }
    if (h.keys != 1 || !key_valid(h.key, h.key_len)) {
        hs_refuse(srv, c, NET_WS_HS_BAD_REQUEST, 400, "Bad Request", "bad Sec-WebSocket-Key");
        return;
    }
    if (h.origin && !origin_allowed(srv->cfg.ws_origins, h.origin, h.origin_len)) {
        hs_refuse(srv, c, NET_WS_HS_FORBIDDEN, 403, "Forbidden", "origin not allowed");
        return;
    }
    if (h.protocol_offered && !h.protocol_ours) {
        hs_refuse(srv, c, NET_WS_HS_BAD_REQUEST, 400, "Bad Request",
                  "subprotocol " NET_WS_SUBPROTOCOL " not offered");
        return;
    }
    /* Sec-WebSocket-Accept: base64(SHA-1(key + GUID)), RFC 6455 4.2.2. */
    struct sha1_ctx sha;
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_init(&sha);
    sha1_update(&sha, h.key_len, (const uint8_t *)h.key);
    sha1_update(&sha, strlen(WS_GUID), (const uint8_t *)WS_GUID);
    sha1_digest(&sha, sizeof digest, digest);
    char accept[BASE64_ENCODE_RAW_LENGTH(SHA1_DIGEST_SIZE) + 1];
    base64_encode_raw(accept, sizeof digest, digest);
    accept[sizeof accept - 1] = '\0';
    char resp[256];
    int n = snprintf(
        resp, sizeof resp,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n",
        accept, h.protocol_offered ? "Sec-WebSocket-Protocol: " NET_WS_SUBPROTOCOL "\r\n" : "");
    if (!ws_open_frames(ws)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    srv->metrics.ws_handshakes_total[NET_WS_HS_ACCEPTED]++;
    net_server_append_raw(srv, c, resp, (size_t)n);
    /* What came after the request (a client may send frames before it reads the 101) is frames:
     * first the rest of the handshake buffer, then what did not fit in it. */
    char *hs = ws->hs;
    size_t after = req.header_end;
    size_t hs_len = ws->hs_len;
    ws->hs = NULL;
    if (after < hs_len) frames_feed(srv, c, (const uint8_t *)hs + after, hs_len - after);
    free(hs);
    if (take == len) return;
    if (c->handed_off && !c->kill) { /* placed by a Hello in the buffer: the rest is the room's */
        if (!net_buf_append(&c->in, data + take, len - take))
            net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
    } else if (net_client_accepts_input(c)) {
        frames_feed(srv, c, data + take, len - take);
    }
}

/* ---- Frames -----------------------------------------------------------------------------------
 */

/* RFC 6455 broken: close 1002, without an Error (the framing cannot be trusted). */
static void ws_protocol_error(net_server *srv, net_client *c, const char *why) {
    net_log(NET_LOG_INFO, "ws_protocol_error", c->id, c->addr, "%s", why);
    ws_of(c)->close_code = NET_WS_CLOSE_PROTOCOL;
    net_server_enter_closing(srv, c, NET_DISC_FATAL_ERROR);
}

static void ws_too_large(net_server *srv, net_client *c, uint64_t size, uint32_t max) {
    ws_of(c)->close_code = NET_WS_CLOSE_TOO_BIG;
    net_server_send_error(srv, c, 0, NET_ERR(FRAME_TOO_LARGE), true,
                          "message of %llu bytes over %u%s", (unsigned long long)size, max,
                          c->state == NET_CLIENT_AWAIT_HELLO ? " before Hello" : "");
}

static size_t header_len(uint64_t payload, bool mask) {
    return 2u + (payload < 126 ? 0u : payload < 65536 ? 2u : 8u) + (mask ? 4u : 0u);
}

static void on_control(net_server *srv, net_client *c) {
    net_ws *ws = ws_of(c);
    if (ws->ctrl_op == WS_OP_PING) {
        append_control(srv, c, WS_OP_PONG, ws->ctrl, ws->ctrl_len);
    } else if (ws->ctrl_op == WS_OP_CLOSE) {
        /* The peer closes: answer with its code (RFC 6455 5.5.1) and close once flushed. */
        uint16_t code = NET_WS_CLOSE_NORMAL;
        if (ws->ctrl_len == 1) {
            ws_protocol_error(srv, c, "close frame with a 1-byte payload");
            return;
        }
        if (ws->ctrl_len >= 2) {
            code = (uint16_t)(ws->ctrl[0] << 8 | ws->ctrl[1]);
            bool valid = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) ||
                         (code >= 3000 && code <= 4999);
            if (!valid) {
                ws_protocol_error(srv, c, "close frame with an invalid code");
                return;
            }
        }
        ws->close_code = code;
        ws->peer_closed = true; /* nothing follows its close: no linger needed after our echo */
        net_server_enter_closing(srv, c, NET_DISC_CLIENT_CLOSED);
    }
    /* A pong (unsolicited: the server sends no ping) is ignored. */
}

/* The start of a frame: RFC 6455's rules and the message limits. False when c is closing. */
static bool frame_begin(net_server *srv, net_client *c, const struct wslay_frame_iocb *f) {
    net_ws *ws = ws_of(c);
    ws->used += header_len(f->payload_length, f->mask);
    if (f->rsv) {
        ws_protocol_error(srv, c, "reserved bits set (no extension was negotiated)");
        return false;
    }
    if (!f->mask) {
        ws_protocol_error(srv, c, "unmasked client frame");
        return false;
    }
    uint32_t max = net_session_frame_limit(srv, c);
    switch (f->opcode) {
    case WS_OP_CLOSE:
    case WS_OP_PING:
    case WS_OP_PONG: /* wslay checked: at most 125 bytes, not fragmented */
        ws->ctrl_op = f->opcode;
        ws->ctrl_len = 0;
        return true;
    case WS_OP_TEXT:
        if (ws->in_msg) break;
        ws_of(c)->close_code = NET_WS_CLOSE_UNSUPPORTED;
        net_server_send_error(srv, c, 0, NET_ERR(BAD_REQUEST), true,
                              "text message: the protocol is binary (one ClientMessage each)");
        return false;
    case WS_OP_BINARY:
        if (ws->in_msg) break;
        if (f->payload_length > max) {
            ws_too_large(srv, c, f->payload_length, max);
            return false;
        }
        ws->in_msg = true;
        c->in_since_us = srv->now_us; /* --frame-timeout-ms: the whole message, from now */
        return true;
    case WS_OP_CONT:
        if (!ws->in_msg) {
            ws_protocol_error(srv, c, "continuation frame outside a message");
            return false;
        }
        if (c->in.len + f->payload_length > max) {
            ws_too_large(srv, c, c->in.len + f->payload_length, max);
            return false;
        }
        return true;
    default:
        ws_protocol_error(srv, c, "reserved opcode");
        return false;
    }
    ws_protocol_error(srv, c, "new message inside a fragmented one");
    return false;
}

/* Reads frames from data[0..len) for as long as c accepts input. Handed off meanwhile (its
 * Hello placed it in a room): the bytes wslay had not returned as frames, and the rest of data,
 * go to c->in for the room's thread, which reads them with a fresh frame reader. */
static void frames_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    net_ws *ws = ws_of(c);
    ws->feed = data;
    ws->feed_len = len;
    uint64_t fed_before = ws->fed;
    while (net_client_accepts_input(c)) {
        struct wslay_frame_iocb f;
        memset(&f, 0, sizeof f);
        ssize_t r = wslay_frame_recv(ws->frames, &f);
        if (r == WSLAY_ERR_WANT_READ) break;
        if (r < 0) {
            ws_protocol_error(srv, c, "malformed frame header");
            break;
        }
        if (!ws->in_frame) {
            if (!frame_begin(srv, c, &f)) break;
            ws->in_frame = true;
            ws->frame_off = 0;
        }
        ws->used += f.data_length;
        ws->frame_off += f.data_length;
        bool frame_done = ws->frame_off == f.payload_length;
        if (frame_done) ws->in_frame = false;
        if (f.opcode >= WS_OP_CLOSE) {
            memcpy(ws->ctrl + ws->ctrl_len, f.data, f.data_length); /* <= 125 in all */
            ws->ctrl_len += f.data_length;
            if (frame_done) on_control(srv, c);
            continue;
        }
        if (frame_done && f.fin && c->in.len == 0 && f.data_length == f.payload_length) {
            /* The common case: a whole message in one chunk, read in place. */
            ws->in_msg = false;
            net_session_message(srv, c, f.data, f.data_length);
            continue;
        }
        if (f.data_length && !net_buf_append(&c->in, f.data, f.data_length)) {
            net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
            break;
        }
        if (frame_done && f.fin) {
            ws->in_msg = false;
            net_session_message(srv, c, c->in.data, c->in.len);
            c->in.len = 0;
            net_buf_trim(&c->in, 4096);
        }
    }
    if (c->handed_off && !c->kill) {
        /* Every frame wslay returned is behind; what it holds unread came from this feed (it
         * only reads when it has no whole item left, and each call reads until it has none). */
        uint64_t held = ws->fed - ws->used;
        size_t fed_now = (size_t)(ws->fed - fed_before);
        COLLIDE_ASSERT(held <= fed_now);
        size_t rest = fed_now - (size_t)held;
        if (rest < len && !net_buf_append(&c->in, data + rest, len - rest))
            net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
    }
    ws->feed = NULL;
    ws->feed_len = 0;
}

/* The handshake, then frames; each whole binary message goes to the session. */
static void ws_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    COLLIDE_ASSERT(data != NULL || len == 0);
    if (c->handed_off && !c->kill && len > 0) { /* read before the socket was detached */
        if (!net_buf_append(&c->in, data, len)) net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    if (!net_client_accepts_input(c) || len == 0) return;
    if (ws_of(c)->open)
        frames_feed(srv, c, data, len);
    else
        handshake_feed(srv, c, data, len);
}
_Static_assert(NET_WS_HS_RESULT_COUNT == NET_WS_HANDSHAKE_RESULTS,
               "net_metrics.h sizes the handshake counters");
_Static_assert(NET_WS_MAX_HEADER == NET_MAX_FRAME_PREFIX, "net_transport.h sizes the framing");

static size_t ws_frame_prefix(size_t len, uint8_t out[NET_MAX_FRAME_PREFIX]) {
    return net_ws_frame_header(WS_OP_BINARY, len, out);
}

/* collide_ws_handshakes_total{result}: every outcome, whatever the traffic. */
static bool ws_render_metrics(const net_metrics *m, net_buf *out) {
    static const char head[] = "# HELP collide_ws_handshakes_total WebSocket upgrade requests by "
                               "outcome.\n# TYPE collide_ws_handshakes_total counter\n";
    bool ok = net_buf_append(out, head, sizeof head - 1);
    for (int r = 0; r < NET_WS_HS_RESULT_COUNT; r++) {
        char line[128];
        int n = snprintf(line, sizeof line, "collide_ws_handshakes_total{result=\"%s\"} %llu\n",
                         net_ws_handshake_result_str((net_ws_handshake_result)r),
                         (unsigned long long)m->ws_handshakes_total[r]);
        ok &= n > 0 && (size_t)n < sizeof line && net_buf_append(out, line, (size_t)n);
    }
    return ok;
}

const net_transport net_ws_transport = {
    .name = "ws",
    .id = 1,
    .datagram = false,
    .open = ws_open,
    .free = ws_free,
    .feed = ws_feed,
    .frame_prefix = ws_frame_prefix,
    .on_closing = ws_on_closing,
    .linger = ws_linger,
    .render_metrics = ws_render_metrics,
};

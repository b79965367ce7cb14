/* net_tcp: the TCP transport (net_transport.h): each message behind a varint length prefix
 * (proto/frame.h, PROTOCOL.md "Framing"). It keeps no state of its own: a partial frame waits in
 * c->in, timed from its first byte (--frame-timeout-ms), and a frame over the session's limit is
 * refused from its prefix, before its body is buffered. */
#include <stdlib.h>

#include "frame.h"
#include "net_internal.h"
#include "net_server.h"
#include "net_session.h"
#include "net_transport.h"

/* Dispatches every whole frame at the start of buf; returns the bytes consumed. */
static size_t parse_frames(net_server *srv, net_client *c, const uint8_t *buf, size_t len) {
    size_t off = 0;
    while (off < len && net_client_accepts_input(c)) {
        size_t plen = 0, blen = 0;
        uint32_t max = net_session_frame_limit(srv, c);
        frame_status st = frame_peek(buf + off, len - off, max, &plen, &blen);
        if (st == FRAME_NEED_MORE) break;
        if (st == FRAME_TOO_LARGE) {
            net_server_send_error(srv, c, 0, NET_ERR(FRAME_TOO_LARGE), true,
                                  "frame over %u bytes%s", max,
                                  c->state == NET_CLIENT_AWAIT_HELLO ? " before Hello" : "");
            return len;
        }
        net_session_message(srv, c, buf + off + plen, blen);
        off += plen + blen;
        COLLIDE_ASSERT(off <= len);
    }
    /* Handed off (front mode): what follows its Hello is the room's, kept for the worker. */
    return net_client_accepts_input(c) || c->handed_off ? off : len;
}

/* Bytes still missing from the partial frame in c->in: the rest of its body once the prefix is
 * whole, one byte while the prefix itself is incomplete (at most FRAME_MAX_PREFIX times), 0 when
 * c->in already holds a whole frame or a refused prefix that parse_frames must see. */
static size_t pending_need(const net_server *srv, const net_client *c) {
    size_t plen = 0, blen = 0;
    frame_status st =
        frame_peek(c->in.data, c->in.len, net_session_frame_limit(srv, c), &plen, &blen);
    if (st != FRAME_NEED_MORE) return 0;
    return plen == 0 ? 1u : plen + blen - c->in.len;
}

static void tcp_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    COLLIDE_ASSERT(data != NULL || len == 0);
    if (c->handed_off && !c->kill && len > 0) { /* read before the socket was detached */
        if (!net_buf_append(&c->in, data, len)) net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    if (!net_client_accepts_input(c) || len == 0) return;
    /* A partial frame is waiting: move over only the bytes that complete it, then parse the rest
     * straight from the read. c->in so never holds more than one frame (at most max_frame plus
     * its prefix), and the whole frames after it are not copied. */
    while (c->in.len > 0) {
        size_t need = pending_need(srv, c);
        if (need > 0) {
            size_t n = need < len ? need : len;
            if (!net_buf_append(&c->in, data, n)) {
                net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
                return;
            }
            data += n;
            len -= n;
            if (n < need) return; /* still partial; the read is used up */
            continue;
        }
        net_buf_consume(&c->in, parse_frames(srv, c, c->in.data, c->in.len));
        net_buf_trim(&c->in, 4096);
        if (!net_client_accepts_input(c)) {
            if (c->handed_off && len > 0 && !net_buf_append(&c->in, data, len))
                net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
            return;
        }
    }
    if (len == 0) return;
    /* The common case: whole frames straight from the read, no copy. */
    size_t used = parse_frames(srv, c, data, len);
    if (used < len && c->handed_off) {
        if (!net_buf_append(&c->in, data + used, len - used))
            net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
    } else if (used < len && net_client_accepts_input(c)) {
        /* c->in was empty: a new partial frame begins now (--frame-timeout-ms). It is timed from
         * its first byte, not its latest, so trickling it in a byte at a time does not extend it.
         */
        c->in_since_us = srv->now_us;
        if (!net_buf_append(&c->in, data + used, len - used))
            net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
    }
}

static bool tcp_open(net_client *c, bool adopted) {
    (void)c, (void)adopted;
    return true;
}

static void tcp_free(net_client *c) { (void)c; }

static size_t tcp_frame_prefix(size_t len, uint8_t out[NET_MAX_FRAME_PREFIX]) {
    return frame_write_prefix((uint32_t)len, out);
}

/* A closing TCP client needs nothing on the wire: its output is flushed, then the socket closed. */
static void tcp_on_closing(net_server *srv, net_client *c) { (void)srv, (void)c; }

static bool tcp_linger(const net_client *c) {
    (void)c;
    return false;
}

const net_transport net_tcp_transport = {
    .name = "tcp",
    .id = 0,
    .datagram = false,
    .open = tcp_open,
    .free = tcp_free,
    .feed = tcp_feed,
    .frame_prefix = tcp_frame_prefix,
    .on_closing = tcp_on_closing,
    .linger = tcp_linger,
    .render_metrics = NULL,
};
_Static_assert(FRAME_MAX_PREFIX <= NET_MAX_FRAME_PREFIX, "net_transport.h sizes the framing");

/* net_udp: the "udp" transport (net_udp.h, net_transport.h). */
#include "net_udp.h"

#include <stdio.h>

#include "frame.h"
#include "net_internal.h"
#include "net_session.h"
#include "wire.h"

/* The messages channel 1 may carry from a client: the ones that are stale once a newer one
 * exists, and request_id beside them. */
static bool sequenced_field(uint32_t field) {
    return field == WIRE_CLIENT_REQUEST_ID || field == WIRE_CLIENT_MOVE ||
           field == WIRE_CLIENT_MOVE_BATCH || field == WIRE_CLIENT_SNAPSHOT_ACK;
}

/* True when every top-level field of the ClientMessage at body may travel on channel 1. Every
 * field, not the first: protobuf merges, so a Hello after a MoveIntent would still be a Hello. */
static bool sequenced_message(const uint8_t *body, size_t len) {
    wire_reader r = wire_reader_of(body, len);
    bool any = false;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_read_key(&r, &field, &type) || !sequenced_field(field) || !wire_skip(&r, type))
            return false;
        any |= field != WIRE_CLIENT_REQUEST_ID;
    }
    return any;
}

/* Keeps a reliable packet that arrived after the client's Hello was placed and before its
 * hand-off: the room's thread gets it (net_udp_feed_held). Channel-1 packets are not kept: they
 * came before the Welcome, and PROTOCOL.md drops those. At most 2 x --max-frame is held: a peer
 * that floods in that moment is cut, as a TCP client whose frame overflows. */
static void hold(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    if (data[0] != NET_UDP_CHANNEL_RELIABLE) return;
    if (c->in.len + 4 + len > 2u * (size_t)srv->cfg.max_frame) {
        net_server_kill(srv, c, NET_DISC_SLOW_CLIENT);
        return;
    }
    uint8_t n[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    if (!net_buf_append(&c->in, n, sizeof n) || !net_buf_append(&c->in, data, len))
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
}

static void udp_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    if (c->handed_off && !c->kill && len > 0) {
        hold(srv, c, data, len);
        return;
    }
    if (!net_client_accepts_input(c) || len < 1) return;
    uint8_t channel = data[0];
    const uint8_t *body = data + 1;
    size_t blen = len - 1;
    uint32_t max = net_session_frame_limit(srv, c);
    if (blen > max) {
        net_server_send_error(srv, c, 0, NET_ERR(FRAME_TOO_LARGE), true, "packet over %u bytes%s",
                              max, c->state == NET_CLIENT_AWAIT_HELLO ? " before Hello" : "");
        return;
    }
    if (channel == NET_UDP_CHANNEL_RELIABLE) {
        net_session_message(srv, c, body, blen);
        return;
    }
    /* Channel 1 before Welcome: an intent for a session that does not exist yet, dropped. */
    if (c->state != NET_CLIENT_ACTIVE) return;
    if (channel == NET_UDP_CHANNEL_SEQUENCED && sequenced_message(body, blen))
        net_session_message(srv, c, body, blen);
    else
        net_session_refuse_message(
            srv, c, body, blen, "channel 1 carries only MoveIntent, MoveIntents and SnapshotAck");
}

void net_udp_feed_held(net_server *srv, net_client *c, const uint8_t *held, size_t len) {
    size_t off = 0;
    while (len - off >= 4) {
        size_t n = (size_t)held[off] | (size_t)held[off + 1] << 8 | (size_t)held[off + 2] << 16 |
                   (size_t)held[off + 3] << 24;
        off += 4;
        if (n > len - off) return; /* cannot happen: hold wrote it */
        udp_feed(srv, c, held + off, n);
        off += n;
    }
}

uint8_t net_udp_channel_of(const uint8_t *body, size_t len) {
    const uint8_t *d;
    size_t n;
    wire_reader r = wire_reader_of(body, len);
    return wire_next_len(&r, WIRE_SERVER_SNAPSHOT, &d, &n) ? NET_UDP_CHANNEL_SEQUENCED
                                                           : NET_UDP_CHANNEL_RELIABLE;
}

uint32_t net_udp_fatal_code(const uint8_t *body, size_t len) {
    const uint8_t *err;
    size_t elen;
    wire_reader r = wire_reader_of(body, len);
    if (!wire_next_len(&r, WIRE_SERVER_ERROR, &err, &elen)) return 0;
    uint64_t code = 0, fatal = 0;
    if (!wire_scan(err, elen, WIRE_ERROR_FATAL, WIRE_VARINT, NULL, &fatal) || !fatal) return 0;
    (void)wire_scan(err, elen, WIRE_ERROR_CODE, WIRE_VARINT, NULL, &code);
    return (uint32_t)code;
}

static bool udp_open(net_client *c, bool adopted) {
    (void)c, (void)adopted;
    return true;
}

static void udp_free(net_client *c) { (void)c; }

/* The varint prefix as on TCP: it only marks where each message ends in the output queue; the
 * host sends the body alone, as one packet. */
static size_t udp_frame_prefix(size_t len, uint8_t out[NET_MAX_FRAME_PREFIX]) {
    return frame_write_prefix((uint32_t)len, out);
}

/* ENet's own disconnect ends the session on the wire (net_udp_host.c): nothing to append. */
static void udp_on_closing(net_server *srv, net_client *c) { (void)srv, (void)c; }

static bool udp_linger(const net_client *c) {
    (void)c;
    return false;
}

/* The peers' round-trip time and the packets ENet counted lost, as the front sampled them. */
static bool udp_render_metrics(const net_metrics *m, net_buf *out) {
    bool ok = net_metrics_histogram(
        out, "collide_udp_rtt_seconds",
        "Round-trip time of the UDP peers as ENet measures it, sampled once a second per peer.",
        net_udp_rtt_bucket_bounds, NET_UDP_RTT_BUCKET_COUNT, m->udp_rtt_buckets, m->udp_rtt_count,
        m->udp_rtt_sum_seconds);
    char line[512];
    int n = snprintf(line, sizeof line,
                     "# HELP collide_udp_packets_lost_total Reliable UDP packets ENet resent for "
                     "want of an acknowledgement.\n# TYPE collide_udp_packets_lost_total "
                     "counter\ncollide_udp_packets_lost_total %llu\n"
                     "# HELP collide_udp_relay_dropped_total UDP packets a room thread had no room "
                     "for (--udp-relay-bytes).\n# TYPE collide_udp_relay_dropped_total counter\n"
                     "collide_udp_relay_dropped_total %llu\n",
                     (unsigned long long)m->udp_packets_lost_total,
                     (unsigned long long)m->udp_relay_dropped_total);
    return ok && n > 0 && (size_t)n < sizeof line && net_buf_append(out, line, (size_t)n);
}

const net_transport net_udp_transport = {
    .name = "udp",
    .id = 2,
    .datagram = true,
    .open = udp_open,
    .free = udp_free,
    .feed = udp_feed,
    .frame_prefix = udp_frame_prefix,
    .on_closing = udp_on_closing,
    .linger = udp_linger,
    .render_metrics = udp_render_metrics,
};

/* cc_conn over ENet (PROTOCOL.md "Datagrams: UDP through ENet"). ENet has no callbacks of its own:
 * enet_host_service both reads the socket and runs the protocol's clock. So libuv polls the
 * host's socket and services it when readable, a timer services it for retransmissions, pings and
 * the peer timeout, and cc_conn_flush sends what was queued (once per tick, as on TCP). */
#include <enet/enet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "conn_udp.h"

#define UDP_CHANNELS 2
#define UDP_SERVICE_MS 10 /* ENet's clock: retransmission and ping granularity */

static pthread_once_t enet_once = PTHREAD_ONCE_INIT;
static int enet_init_rc;
static void enet_init_once(void) { enet_init_rc = enet_initialize(); }

uint8_t conn_udp_channel(const Collide__V1__ClientMessage *msg) {
    switch (msg->msg_case) {
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE:
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE_BATCH:
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK:
        return 1;
    default:
        return 0;
    }
}

static void udp_fail(cc_conn *c, int status, const char *reason) {
    if (c->failed_reported || c->closing) return;
    c->failed_reported = true;
    if (c->hooks->failed) c->hooks->failed(c, status, reason);
    cc_conn_close(c);
}

/* One ENet event: the connect, a packet (one ServerMessage), or the end of the session. */
static void udp_event(cc_conn *c, ENetEvent *ev) {
    if (ev->type == ENET_EVENT_TYPE_CONNECT) {
        c->udp_connected = true;
        if (c->hooks->connected) c->hooks->connected(c, 0);
    } else if (ev->type == ENET_EVENT_TYPE_RECEIVE) {
        size_t len = ev->packet->dataLength;
        c->bytes_in += len;
        if (len > c->max_frame)
            udp_fail(c, UV_EPROTO, "frame_too_large");
        else if (c->hooks->frame)
            c->hooks->frame(c, ev->packet->data, len);
        enet_packet_destroy(ev->packet);
    } else if (ev->type == ENET_EVENT_TYPE_DISCONNECT) {
        c->udp_peer = NULL; /* ENet has reset it */
        if (!c->udp_connected) {
            /* ENet reports a refused connect and one that timed out alike. */
            c->failed_reported = true;
            if (c->hooks->connected) c->hooks->connected(c, UV_ETIMEDOUT);
            cc_conn_close(c);
            return;
        }
        /* data: the fatal error's code (0 for Goodbye, or a timeout). */
        if (ev->data)
            snprintf(c->udp_reason, sizeof c->udp_reason, "server_disconnected (error code %u)",
                     (unsigned)ev->data);
        else
            snprintf(c->udp_reason, sizeof c->udp_reason, "server_closed");
        udp_fail(c, UV_EOF, c->udp_reason);
    }
}

static void udp_service(cc_conn *c) {
    ENetEvent ev;
    while (!c->closing) {
        int rc = enet_host_service(c->udp_host, &ev, 0);
        if (rc < 0) {
            udp_fail(c, UV_EIO, "enet_service_failed");
            return;
        }
        if (rc == 0) return;
        udp_event(c, &ev);
    }
}

static void udp_readable(uv_poll_t *p, int status, int events) {
    (void)events;
    cc_conn *c = p->data;
    if (c->closing) return;
    if (status < 0) {
        udp_fail(c, status, uv_err_name(status));
        return;
    }
    udp_service(c);
}

static void udp_tick(uv_timer_t *t) {
    cc_conn *c = t->data;
    if (!c->closing) udp_service(c);
}

/* The host and the peer's connect; libuv's handles are set up by the caller. */
static int udp_host_open(cc_conn *c, const struct sockaddr *addr) {
    pthread_once(&enet_once, enet_init_once);
    if (enet_init_rc != 0) return UV_EIO;
    if (addr->sa_family != AF_INET) return UV_EAFNOSUPPORT; /* libenet 1.3 is IPv4 only */
    const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
    ENetAddress to = {.host = in->sin_addr.s_addr, .port = ntohs(in->sin_port)};
    c->udp_host = enet_host_create(NULL, 1, UDP_CHANNELS, 0, 0);
    if (!c->udp_host) return UV_EIO;
    /* No reassembly beyond what the tool accepts over TCP. */
    c->udp_host->maximumPacketSize = c->max_frame;
    c->udp_peer = enet_host_connect(c->udp_host, &to, UDP_CHANNELS, 0);
    if (!c->udp_peer) {
        enet_host_destroy(c->udp_host);
        c->udp_host = NULL;
        return UV_EIO;
    }
    enet_host_flush(c->udp_host); /* the connect goes now, not at the first tick */
    return 0;
}

int cc_conn_start_udp(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                      const cc_conn_hooks *hooks, void *user, uint32_t max_frame) {
    memset(c, 0, sizeof *c);
    c->udp = true;
    c->hooks = hooks;
    c->user = user;
    c->max_frame = max_frame;
    int rc = udp_host_open(c, addr);
    if (rc != 0) return rc;
    uv_timer_init(loop, &c->udp_timer);
    c->udp_timer.data = c;
    c->udp_handles = 1;
    c->initialised = true;
    rc = uv_poll_init(loop, &c->udp_poll, c->udp_host->socket);
    if (rc == 0) {
        c->udp_poll.data = c;
        c->udp_handles = 2;
        rc = uv_poll_start(&c->udp_poll, UV_READABLE, udp_readable);
    }
    if (rc == 0) rc = uv_timer_start(&c->udp_timer, udp_tick, UDP_SERVICE_MS, UDP_SERVICE_MS);
    if (rc != 0) {
        /* The owner hears only closed(), as for a TCP connect that fails to start. */
        c->failed_reported = true;
        cc_conn_close(c);
    }
    return rc;
}

bool conn_udp_queue(cc_conn *c, const Collide__V1__ClientMessage *msg) {
    if (c->closing || !c->udp_connected || !c->udp_peer) {
        c->frames_dropped++;
        return false;
    }
    uint8_t channel = conn_udp_channel(msg);
    size_t body = collide__v1__client_message__get_packed_size(msg);
    ENetPacket *p = enet_packet_create(NULL, body, channel == 0 ? ENET_PACKET_FLAG_RELIABLE : 0);
    if (!p) {
        c->frames_dropped++;
        return false;
    }
    collide__v1__client_message__pack(msg, p->data);
    if (enet_peer_send(c->udp_peer, channel, p) < 0) {
        enet_packet_destroy(p); /* refused: still ours */
        c->frames_dropped++;
        return false;
    }
    c->bytes_out += body;
    return true;
}

void conn_udp_flush(cc_conn *c) {
    if (!c->closing && c->udp_host) enet_host_flush(c->udp_host);
}

static void udp_handle_closed(uv_handle_t *h) {
    cc_conn *c = h->data;
    if (--c->udp_handles > 0) return;
    enet_host_destroy(c->udp_host); /* frees the peer and every packet still queued */
    c->udp_host = NULL;
    if (c->hooks->closed) c->hooks->closed(c);
}

void conn_udp_close(cc_conn *c) {
    c->closing = true;
    /* Tell the server now: it despawns our bodies at once rather than after its timeout. */
    if (c->udp_peer) enet_peer_disconnect_now(c->udp_peer, 0);
    c->udp_peer = NULL;
    c->udp_timer.data = c;
    uv_close((uv_handle_t *)&c->udp_timer, udp_handle_closed);
    if (c->udp_handles == 2) uv_close((uv_handle_t *)&c->udp_poll, udp_handle_closed);
}

/* net_udp_host: the ENet host on the front's loop (see net_udp_host.h). */
#include "net_udp_host.h"

#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "net_host.h"
#include "net_internal.h"
#include "net_log.h"
#include "net_udp.h"

#define UDP_ON_FRONT UINT32_MAX   /* udp_peer.thread of a peer not handed off */
#define UDP_SAMPLE_EVERY_MS 1000u /* the round-trip samples of /metrics, per peer */

/* One message of the outbox (the rooms' output for a peer). */
typedef struct udp_out {
    uint64_t key;
    net_udp_out_kind kind;
    uint8_t *bytes; /* malloc'ed; NULL when len is 0 */
    size_t len;
} udp_out;

/* What ENet holds for a peer's reliable channel and has not freed yet (acked or dropped): output a
 * peer that acknowledges slowly would otherwise queue in ENet without bound. It outlives its peer
 * while packets still point at it (orphan). */
typedef struct udp_ledger {
    size_t queued;    /* bytes of reliable packets ENet still holds */
    uint32_t packets; /* those packets (each one's freeCallback settles it) */
    bool orphan;      /* its peer is gone: freed by the last packet */
} udp_ledger;

/* A peer of the host: a client of the front until its hand-off, then a key its room's thread
 * knows it by. peer->data points here while the host holds the peer. */
typedef struct udp_peer {
    net_client client;   /* the front's, while registered */
    ENetPeer *peer;      /* the host's */
    uint64_t key;        /* a generation above the peer index: a reused index is a new key */
    uint32_t thread;     /* the room's worker once handed off; UDP_ON_FRONT before */
    bool registered;     /* client is in the front's server */
    bool closing;        /* a disconnect is under way: nothing more is relayed */
    uint32_t fatal_code; /* the last fatal Error sent: the disconnect's data */
    uint64_t heard_ms;   /* the loop time of its last packet (a timeout or a close?) */
    uint32_t lost_seen;  /* ENet's packetsLost at the last sample (it restarts every 10 s) */
    udp_ledger *ledger;  /* its reliable output held by ENet (--max-queued-bytes) */
    struct net_udp *u;
} udp_peer;

struct net_udp {
    uv_loop_t *loop;
    ENetHost *host;
    net_server *front;
    struct net_hosts *hosts;
    uint32_t timeout_ms; /* --udp-timeout-ms */
    size_t max_queued;   /* --max-queued-bytes: reliable output one peer may have in ENet */
    void (*on_idle)(void *ctx);
    void *ctx;
    uv_poll_t poll;   /* the host's socket */
    uv_timer_t timer; /* services the host between packets; samples /metrics */
    uv_async_t wake;  /* the rooms posted to the outbox */
    int handles_open; /* closed ones free u once at 0 */
    uint64_t generation;
    uint32_t peers;         /* udp_peer records alive */
    uint64_t relay_dropped; /* packets the rooms' inboxes had no room for (--udp-relay-bytes) */
    bool draining;
    uint64_t sampled_ms; /* when the peers were last sampled */
    uint8_t *scratch;    /* a packet with its channel before it: [channel][message] */
    size_t scratch_size;
    size_t peers_allocated; /* the host's peer slots (its peerCount at creation) */
    net_buf out;            /* a front client's output being sent */
    uv_mutex_t lock;        /* guards queue, count, cap */
    udp_out *queue, *batch;
    size_t count, cap, batch_cap;
};

#define UDP_REFUSED_TIMEOUT_MS 1000u /* how long a refused peer's disconnect may hold its slot */
#define UDP_EVENTS_PER_SERVICE 4096  /* ENet events handled per service call */
/* Free peer slots kept above the highest one in use (fit_window): ENet reads at most 256
 * datagrams a service pass, so one pass cannot take more new slots than this. */
#define UDP_WINDOW_HEADROOM 256u

/* ---- Sending --------------------------------------------------------------------------------- */

static void ledger_settle(ENetPacket *p) {
    udp_ledger *l = p->userData;
    l->queued -= p->dataLength;
    if (--l->packets == 0 && l->orphan) free(l);
}

static void ledger_release(udp_ledger *l) {
    if (!l) return;
    if (l->packets == 0)
        free(l);
    else
        l->orphan = true;
}

/* Splits framed ServerMessages into packets: a Snapshot unreliable on channel 1 (fragments and
 * all: a late snapshot is worthless), everything else reliable on channel 0. False when the peer
 * must be cut: a reliable message could not be queued (it may not be lost), or the reliable output
 * ENet holds for it passed --max-queued-bytes (a peer that does not acknowledge: TCP's slow
 * client). */
static bool send_framed(net_udp *u, udp_peer *up, const uint8_t *data, size_t len) {
    size_t off = 0;
    while (off < len) {
        size_t plen = 0, blen = 0;
        if (frame_peek(data + off, len - off, UINT32_MAX, &plen, &blen) != FRAME_OK)
            return true; /* our own framing */
        const uint8_t *body = data + off + plen;
        off += plen + blen;
        uint8_t ch = net_udp_channel_of(body, blen);
        if (ch == NET_UDP_CHANNEL_RELIABLE) {
            uint32_t code = net_udp_fatal_code(body, blen);
            if (code) up->fatal_code = code;
        }
        enet_uint32 flags = ch == NET_UDP_CHANNEL_RELIABLE ? ENET_PACKET_FLAG_RELIABLE
                                                           : ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT;
        ENetPacket *p = enet_packet_create(body, blen, flags);
        bool reliable = ch == NET_UDP_CHANNEL_RELIABLE;
        if (p && reliable) {
            p->userData = up->ledger;
            p->freeCallback = ledger_settle;
            up->ledger->queued += blen;
            up->ledger->packets++;
        }
        if (p && enet_peer_send(up->peer, ch, p) < 0) {
            enet_packet_destroy(p);
            p = NULL;
        }
        if (reliable && (!p || up->ledger->queued > u->max_queued)) return false;
    }
    return true;
}

/* ---- Peers ----------------------------------------------------------------------------------- */

/* The record goes (ENet has let the peer go, or is told to now): a front client is closed for
 * reason; a handed-off one's thread is told. */
static void release_peer(net_udp *u, udp_peer *up, net_disconnect_reason reason) {
    if (up->registered) {
        net_conn_set_clock(u->front);
        net_client_close(u->front, &up->client, reason);
    } else if (up->thread != UDP_ON_FRONT) {
        net_hosts_udp_gone(u->hosts, up->thread, up->key, reason);
    }
    if (up->peer && up->peer->data == up) up->peer->data = NULL;
    ledger_release(up->ledger);
    free(up);
    u->peers--;
    if (u->peers == 0 && u->on_idle) u->on_idle(u->ctx);
}

static void cut_peer(net_udp *u, udp_peer *up, net_disconnect_reason reason) {
    enet_peer_disconnect_now(up->peer, up->fatal_code);
    release_peer(u, up, reason);
}

static void front_flush(net_client *c);

static void on_connect(net_udp *u, ENetPeer *peer) {
    peer->data = NULL;
    if (u->draining || peer->channelCount < NET_UDP_CHANNELS) {
        /* PROTOCOL.md: fewer than 2 channels is refused with data 1. The disconnect is reliable,
         * but the slot must not wait ENet's default 30 s for it: a refused peer counts against no
         * cap, so a flood of them would fill the host. */
        enet_peer_timeout(peer, 0, UDP_REFUSED_TIMEOUT_MS, UDP_REFUSED_TIMEOUT_MS);
        enet_peer_disconnect(peer, u->draining ? (enet_uint32)NET_ERR(SHUTTING_DOWN) : 1u);
        return;
    }
    udp_peer *up = calloc(1, sizeof *up);
    udp_ledger *ledger = up ? calloc(1, sizeof *ledger) : NULL;
    if (!ledger) {
        free(up);
        enet_peer_disconnect_now(peer, (enet_uint32)NET_ERR(INTERNAL));
        return;
    }
    char ip[64] = "?", addr[80];
    enet_address_get_host_ip(&peer->address, ip, sizeof ip);
    snprintf(addr, sizeof addr, "%s:%u", ip, (unsigned)peer->address.port);
    up->peer = peer;
    up->ledger = ledger;
    up->u = u;
    up->key = (++u->generation << 12) | peer->incomingPeerID;
    up->thread = UDP_ON_FRONT;
    up->heard_ms = uv_now(u->loop);
    up->client.transport = &net_udp_transport;
    up->client.io_flush = front_flush;
    peer->data = up;
    u->peers++;
    enet_peer_timeout(peer, 0, u->timeout_ms, u->timeout_ms);
    net_conn_set_clock(u->front);
    up->registered = net_client_open(u->front, &up->client, addr);
    if (!up->registered) cut_peer(u, up, NET_DISC_OUT_OF_MEMORY);
}

static void on_receive(net_udp *u, ENetEvent *ev) {
    udp_peer *up = ev->peer->data;
    size_t len = ev->packet->dataLength;
    if (up && !up->closing && len + 1 <= u->scratch_size) {
        u->scratch[0] = ev->channelID;
        memcpy(u->scratch + 1, ev->packet->data, len);
        if (up->registered) {
            net_conn_set_clock(u->front);
            net_client_feed(u->front, &up->client, u->scratch, len + 1);
        } else if (up->thread != UDP_ON_FRONT &&
                   !net_hosts_udp_packet(u->hosts, up->thread, up->key, u->scratch, len + 1)) {
            /* The room's thread has --udp-relay-bytes waiting already: a sequenced packet is
             * dropped, as the network might have; a reliable one cannot be, so its peer is cut
             * (a client flooding its room is the likely one to hit the bound). */
            u->front->metrics.udp_relay_dropped_total++;
            if (ev->channelID != 1) cut_peer(u, up, NET_DISC_SLOW_CLIENT);
        }
    }
    enet_packet_destroy(ev->packet);
}

/* ENet says the peer is gone: its own disconnect, or no answer for --udp-timeout-ms. ENet 1.3
 * reports both alike (data 0) and resets the peer first, so its own lastReceiveTime is lost; a
 * peer whose last datagram (note_datagram: pings and acknowledgements count) is older than the
 * timeout is taken as timed out. */
/* ENet's intercept hook, called for every datagram before ENet reads it: the peer it names
 * (the header's low 12 bits, when its address is that peer's) was heard from now. A client that
 * sends no messages still pings every half second, so a quiet player that then closes is not
 * mistaken for a timed-out one. Returns 0: ENet goes on to handle the datagram itself. */
static int ENET_CALLBACK note_datagram(ENetHost *host, ENetEvent *event) {
    (void)event;
    if (host->receivedDataLength < 2) return 0;
    unsigned id = (((unsigned)host->receivedData[0] << 8) | host->receivedData[1]) &
                  ENET_PROTOCOL_MAXIMUM_PEER_ID;
    if (id >= host->peerCount) return 0;
    ENetPeer *peer = &host->peers[id];
    udp_peer *up = peer->data;
    if (up && peer->address.host == host->receivedAddress.host &&
        peer->address.port == host->receivedAddress.port)
        up->heard_ms = uv_now(up->u->loop);
    return 0;
}

static void on_disconnect(net_udp *u, ENetEvent *ev) {
    udp_peer *up = ev->peer->data;
    if (!up) return;
    up->peer = NULL;
    ev->peer->data = NULL;
    bool silent = uv_now(u->loop) - up->heard_ms >= u->timeout_ms;
    release_peer(u, up, silent && ev->data == 0 ? NET_DISC_TIMEOUT : NET_DISC_CLIENT_CLOSED);
}

/* ENet walks every peer slot (host->peerCount) at each flush and twice per service pass, whether
 * the slot is in use or not: with --max-clients 1,500 and 300 players, most of each walk was
 * free slots (issue 32's profile: a third of the front's time in libenet at 2,000 UDP players).
 * ENet fills the lowest free slot first and reads peerCount on every loop, so the window ENet
 * sees is trimmed to the highest slot in use plus UDP_WINDOW_HEADROOM free ones, refitted after
 * every pass; a slot above it is DISCONNECTED, so nothing addressed to it is lost (ENet drops a
 * datagram for a peer id past peerCount, as it drops one for a free slot). The whole allocation
 * is restored before enet_host_destroy. */
static void fit_window(net_udp *u) {
    ENetHost *h = u->host;
    size_t top = h->peerCount;
    while (top > 0 && h->peers[top - 1].state == ENET_PEER_STATE_DISCONNECTED)
        top--;
    size_t want = top + UDP_WINDOW_HEADROOM;
    h->peerCount = want < u->peers_allocated ? want : u->peers_allocated;
}

static void service(net_udp *u) {
    ENetEvent ev;
    /* One pass (a walk, up to 256 datagrams read, a walk), then the events it queued: calling
     * enet_host_service until it returns 0 made a second pass of two walks and an empty read
     * for every readable poll. What is left unread keeps the socket readable for the next poll.
     * At most UDP_EVENTS_PER_SERVICE events a call: a steady flood must not keep the front's loop
     * here (TCP, the sweep and the flushes run between calls). */
    int got = enet_host_service(u->host, &ev, 0);
    for (int n = 0; got > 0 && n < UDP_EVENTS_PER_SERVICE; n++) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT)
            on_connect(u, ev.peer);
        else if (ev.type == ENET_EVENT_TYPE_RECEIVE)
            on_receive(u, &ev);
        else if (ev.type == ENET_EVENT_TYPE_DISCONNECT)
            on_disconnect(u, &ev);
        got = enet_host_check_events(u->host, &ev);
    }
    fit_window(u);
}

/* ---- The front's clients (net_conn_flush calls this for a UDP peer) --------------------------
 */

static udp_peer *peer_of(net_client *c) {
    return (udp_peer *)(void *)((char *)c - offsetof(udp_peer, client));
}

/* A placed peer: its room's thread gets it (and the packets held since its Hello); the front's
 * client goes, the peer stays here. */
static void hand_off(net_udp *u, udp_peer *up) {
    net_client *c = &up->client;
    if (!net_hosts_udp_hand_off(u->hosts, &c->placement, c->name, up->key, c->addr, c->in.data,
                                c->in.len)) {
        cut_peer(u, up, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    up->thread = c->placement.thread;
    up->registered = false;
    net_client_close(u->front, c, NET_DISC_CLIENT_CLOSED); /* counts no disconnect: it moved */
}

static void front_flush(net_client *c) {
    udp_peer *up = peer_of(c);
    net_udp *u = up->u;
    switch (net_client_next_io(c)) {
    case NET_IO_CUT:
        cut_peer(u, up, net_client_reason(c));
        return;
    case NET_IO_HAND_OFF:
        hand_off(u, up);
        return;
    case NET_IO_CLOSE: /* the fatal Error or Goodbye is queued: disconnect once delivered */
        up->closing = true;
        up->registered = false;
        enet_peer_disconnect_later(up->peer, up->fatal_code);
        net_client_close(u->front, c, net_client_reason(c));
        return;
    case NET_IO_WRITE:
        net_client_take_output(c, &u->out);
        bool sent = send_framed(u, up, u->out.data, u->out.len);
        u->out.len = 0;
        net_buf_trim(&u->out, 65536);
        net_client_written(u->front, c);
        if (!sent) cut_peer(u, up, NET_DISC_SLOW_CLIENT);
        return;
    default:
        return;
    }
}

/* ---- The outbox: the rooms' output ------------------------------------------------------------
 */

bool net_udp_post(net_udp *u, uint64_t key, net_udp_out_kind kind, const uint8_t *bytes,
                  size_t len) {
    udp_out m = {key, kind, NULL, len};
    if (len) {
        m.bytes = malloc(len);
        if (!m.bytes) return false;
        memcpy(m.bytes, bytes, len);
    }
    uv_mutex_lock(&u->lock);
    bool ok = true;
    if (u->count == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 64;
        udp_out *q = realloc(u->queue, cap * sizeof *q);
        if (q) {
            u->queue = q;
            u->cap = cap;
        }
        ok = q != NULL;
    }
    if (ok) u->queue[u->count++] = m;
    uv_mutex_unlock(&u->lock);
    if (!ok)
        free(m.bytes);
    else
        uv_async_send(&u->wake);
    return ok;
}

static bool post_to(void *ctx, uint64_t key, net_udp_out_kind kind, const uint8_t *bytes,
                    size_t len) {
    return net_udp_post(ctx, key, kind, bytes, len);
}

net_udp_sink net_udp_sink_of(net_udp *u) { return (net_udp_sink){post_to, u}; }

/* The peer a key names, while the host still holds it. */
static udp_peer *peer_by_key(net_udp *u, uint64_t key) {
    size_t index = (size_t)(key & 0xfffu);
    if (index >= u->host->peerCount) return NULL;
    udp_peer *up = u->host->peers[index].data;
    return up && up->key == key ? up : NULL;
}

static void deliver(net_udp *u, const udp_out *m) {
    udp_peer *up = peer_by_key(u, m->key);
    if (!up || up->closing) return;
    if (m->kind == NET_UDP_OUT_SEND) {
        if (!send_framed(u, up, m->bytes, m->len)) cut_peer(u, up, NET_DISC_SLOW_CLIENT);
    } else if (m->kind == NET_UDP_OUT_CLOSE) {
        up->closing = true;
        up->thread = UDP_ON_FRONT; /* its client is gone already: nothing to tell */
        enet_peer_disconnect_later(up->peer, up->fatal_code);
    } else {
        up->thread = UDP_ON_FRONT;
        cut_peer(u, up, NET_DISC_CLIENT_CLOSED);
    }
}

/* Takes the whole outbox at once (the lock held for a swap), sends it, and flushes the host: a
 * room's snapshots leave as soon as its tick relayed them. */
static void on_wake(uv_async_t *a) {
    net_udp *u = a->data;
    uv_mutex_lock(&u->lock);
    udp_out *batch = u->queue;
    size_t n = u->count, cap = u->cap;
    u->queue = u->batch;
    u->cap = u->batch_cap;
    u->count = 0;
    uv_mutex_unlock(&u->lock);
    u->batch = batch;
    u->batch_cap = cap;
    for (size_t i = 0; i < n; i++) {
        deliver(u, &batch[i]);
        free(batch[i].bytes);
    }
    enet_host_flush(u->host);
}

/* ---- The loop's handles -------------------------------------------------------------------- */

/* Once a second: each peer's round-trip time, and the packets ENet counted lost since the last
 * look (its count restarts every ENET_PEER_PACKET_LOSS_INTERVAL: a smaller count is a new one). */
static void sample(net_udp *u) {
    uint64_t now = uv_now(u->loop);
    if (now - u->sampled_ms < UDP_SAMPLE_EVERY_MS) return;
    u->sampled_ms = now;
    net_metrics *m = &u->front->metrics;
    for (size_t i = 0; i < u->host->peerCount; i++) {
        ENetPeer *p = &u->host->peers[i];
        udp_peer *up = p->data;
        if (!up || p->state != ENET_PEER_STATE_CONNECTED) continue;
        net_metrics_observe_udp_rtt(m, (double)p->roundTripTime / 1000.0);
        uint32_t lost = p->packetsLost;
        m->udp_packets_lost_total += lost >= up->lost_seen ? lost - up->lost_seen : lost;
        up->lost_seen = lost;
    }
}

static void on_readable(uv_poll_t *p, int status, int events) {
    (void)status, (void)events;
    service(p->data);
}

/* Between packets: resends, pings and timeouts happen only when the host is serviced. */
static void on_timer(uv_timer_t *t) {
    net_udp *u = t->data;
    service(u);
    sample(u);
    enet_host_flush(u->host);
}

void net_udp_flush(net_udp *u) {
    if (u && u->host) enet_host_flush(u->host);
}

void net_udp_drain(net_udp *u) {
    if (u) u->draining = true;
}

uint32_t net_udp_peer_count(const net_udp *u) { return u ? u->peers : 0; }

void net_udp_cut_all(net_udp *u) {
    for (size_t i = 0; u && i < u->host->peerCount; i++) {
        udp_peer *up = u->host->peers[i].data;
        if (up) cut_peer(u, up, NET_DISC_SHUTDOWN);
    }
    if (u) enet_host_flush(u->host);
}

/* The last handle is closed: the host (and its socket) and everything else goes. */
static void on_handle_closed(uv_handle_t *h) {
    net_udp *u = h->data;
    if (--u->handles_open > 0) return;
    u->on_idle = NULL;
    u->host->peerCount = u->peers_allocated; /* fit_window's trim undone: every slot is reset */
    net_udp_cut_all(u);
    enet_host_destroy(u->host);
    enet_deinitialize();
    for (size_t i = 0; i < u->count; i++)
        free(u->queue[i].bytes);
    free(u->queue);
    free(u->batch);
    free(u->scratch);
    net_buf_free(&u->out);
    uv_mutex_destroy(&u->lock);
    free(u);
}

void net_udp_close(net_udp *u) {
    if (!u) return;
    u->handles_open = 3;
    uv_close((uv_handle_t *)&u->poll, on_handle_closed);
    uv_close((uv_handle_t *)&u->timer, on_handle_closed);
    uv_close((uv_handle_t *)&u->wake, on_handle_closed);
}

/* The host, with ENet's limits from the flags: no more peers than the sessions and pending
 * connections the daemon admits (and ENet's id space), two channels, packets of at most twice
 * --max-frame (a longer one is dropped by ENet unread; one between the two is FRAME_TOO_LARGE),
 * and no more data waiting per peer than such a packet: a peer cannot make the daemon hold more
 * than a TCP client's one partial frame. */
static ENetHost *make_host(const net_config *cfg) {
    const char *bind = cfg->udp_bind[0] ? cfg->udp_bind : cfg->bind;
    if (strcmp(bind, "::") == 0) bind = "0.0.0.0"; /* libenet 1.3 speaks IPv4 only */
    if (strcmp(bind, "::1") == 0) bind = "127.0.0.1";
    ENetAddress a;
    a.port = cfg->udp_port;
    if (strchr(bind, ':') || enet_address_set_host_ip(&a, bind) != 0) {
        net_log(NET_LOG_ERROR, "bind_error", 0, NULL, "--udp-bind '%s' is not an IPv4 address",
                bind);
        return NULL;
    }
    uint64_t peers = (uint64_t)cfg->max_clients + cfg->max_pending + NET_MAX_REFUSING;
    if (peers > NET_UDP_MAX_PEERS) peers = NET_UDP_MAX_PEERS;
    /* Incoming bandwidth stays 0 (ENet's widest window): what a peer can make the daemon hold
     * is bounded by maximumWaitingData below and the rate limits, not by ENet's pacing. Outgoing
     * is --udp-bandwidth: ENet's throttle drops unreliable packets (snapshots, which the next one
     * replaces) of peers over their share; reliable output is bounded by --max-queued-bytes. */
    ENetHost *h = enet_host_create(&a, (size_t)peers, NET_UDP_CHANNELS, 0, cfg->udp_bandwidth);
    if (!h) {
        net_log(NET_LOG_ERROR, "bind_error", 0, NULL, "cannot bind UDP %s port %u", bind,
                cfg->udp_port);
        return NULL;
    }
    h->maximumPacketSize = 2u * (size_t)cfg->max_frame;
    h->maximumWaitingData = 2u * (size_t)cfg->max_frame;
    h->intercept = note_datagram;
    return h;
}

static void start_handles(net_udp *u, uint64_t period_ms) {
    uv_timer_init(u->loop, &u->timer);
    uv_async_init(u->loop, &u->wake, on_wake);
    u->poll.data = u->timer.data = u->wake.data = u;
    uv_poll_start(&u->poll, UV_READABLE, on_readable);
    uv_timer_start(&u->timer, on_timer, period_ms, period_ms);
}

net_udp *net_udp_start(uv_loop_t *loop, const net_config *cfg, net_server *front,
                       struct net_hosts *hosts, void (*on_idle)(void *ctx), void *ctx) {
    if (enet_initialize() != 0) return NULL;
    net_udp *u = calloc(1, sizeof *u);
    /* ENet's largest packet (2 x --max-frame, or one unfragmented datagram of up to ENet's MTU
     * when that is larger) and its channel: a packet over --max-frame gets FRAME_TOO_LARGE, not
     * silence */
    size_t largest = 2u * (size_t)cfg->max_frame;
    if (largest < ENET_PROTOCOL_MAXIMUM_MTU) largest = ENET_PROTOCOL_MAXIMUM_MTU;
    size_t scratch_size = largest + 1u;
    if (u) {
        u->scratch_size = scratch_size;
        u->scratch = malloc(scratch_size);
    }
    if (!u || !u->scratch || uv_mutex_init(&u->lock) != 0) {
        if (u) free(u->scratch);
        free(u);
        enet_deinitialize();
        return NULL;
    }
    u->host = make_host(cfg);
    if (!u->host || uv_poll_init(loop, &u->poll, u->host->socket) != 0) {
        if (u->host) enet_host_destroy(u->host);
        uv_mutex_destroy(&u->lock);
        free(u->scratch);
        free(u);
        enet_deinitialize();
        return NULL;
    }
    u->loop = loop;
    u->front = front;
    u->hosts = hosts;
    u->peers_allocated = u->host->peerCount;
    fit_window(u);
    u->timeout_ms = cfg->udp_timeout_ms;
    u->max_queued = cfg->max_queued_bytes;
    u->on_idle = on_idle;
    u->ctx = ctx;
    uint64_t period_ms = (uint64_t)(1000.0f / cfg->tick_rate_hz);
    start_handles(u, period_ms ? period_ms : 1);
    return u;
}

/* net_udp_relay: a room thread's clients of UDP peers (net_udp_host.h). The peer stays on the
 * front's ENet host; here it is a client of the room's server like any adopted connection,
 * counted in the loop's connections (the drain waits for it), fed the packets the front relays,
 * and flushed by posting its output back to the front. */
#include <stdlib.h>

#include "net_udp.h"
#include "net_udp_relay.h"

#define RELAY_OUT_KEEP (64u * 1024u) /* the posting buffer is trimmed back to this */

struct net_udp_relay {
    net_client client;   /* in srv */
    net_conn_host *host; /* the loop's connections (its count, the closed hooks) */
    net_server *srv;     /* the room's server, or the worker's lobby for a refusal */
    net_udp_sink sink;   /* the front's outbox, for the output */
    net_udp_relays *set; /* the thread's relays */
    uint64_t key;        /* the peer on the front */
};

static net_udp_relay *relay_of(net_client *c) {
    return (net_udp_relay *)(void *)((char *)c - offsetof(net_udp_relay, client));
}

static net_udp_relay *relay_find(net_udp_relays *rs, uint64_t key) {
    net_udp_relay *r = rs->slots ? rs->slots[(key & 0xfffu) % NET_UDP_MAX_PEERS] : NULL;
    return r && r->key == key ? r : NULL;
}

/* The one close path: the client is released (a welcomed one leaves its room), the relay freed. */
static void relay_close(net_udp_relay *r, net_disconnect_reason reason) {
    net_conn_host *host = r->host;
    bool welcomed = r->client.admission.admitted;
    net_conn_set_clock(r->srv);
    net_client_close(r->srv, &r->client, reason);
    if (host->on_client_closed) host->on_client_closed(host, r->srv, welcomed);
    net_udp_relay **slot = &r->set->slots[(r->key & 0xfffu) % NET_UDP_MAX_PEERS];
    if (*slot == r) *slot = NULL;
    free(r);
    host->conn_count--;
    if (host->on_freed) host->on_freed(host);
}

/* net_conn_flush's call for a relay client: its output, or its close, goes to the front. */
static void relay_flush(net_client *c) {
    net_udp_relay *r = relay_of(c);
    net_udp_relays *rs = r->set;
    switch (net_client_next_io(c)) {
    case NET_IO_WRITE:
        net_client_take_output(c, &rs->out);
        /* Out of memory: the output is lost, as a lost datagram would be; a fatal one ends it. */
        if (!r->sink.post(r->sink.ctx, r->key, NET_UDP_OUT_SEND, rs->out.data, rs->out.len))
            net_server_kill(r->srv, c, NET_DISC_OUT_OF_MEMORY);
        rs->out.len = 0;
        net_buf_trim(&rs->out, RELAY_OUT_KEEP);
        net_client_written(r->srv, c);
        return;
    case NET_IO_CLOSE:
        (void)r->sink.post(r->sink.ctx, r->key, NET_UDP_OUT_CLOSE, NULL, 0);
        relay_close(r, net_client_reason(c));
        return;
    case NET_IO_CUT:
        (void)r->sink.post(r->sink.ctx, r->key, NET_UDP_OUT_CUT, NULL, 0);
        relay_close(r, net_client_reason(c));
        return;
    default:
        return;
    }
}

net_client *net_udp_relay_open(net_udp_relays *rs, net_conn_host *host, const net_udp_sink *sink,
                               net_server *srv, uint64_t key, const char *addr) {
    if (!rs->slots) rs->slots = calloc(NET_UDP_MAX_PEERS, sizeof *rs->slots);
    net_udp_relay *r = rs->slots ? calloc(1, sizeof *r) : NULL;
    if (!r) {
        (void)sink->post(sink->ctx, key, NET_UDP_OUT_CUT, NULL, 0);
        return NULL;
    }
    /* The index is the front's peer slot: a relay still in it is of a peer the front let go. */
    net_udp_relay *old = rs->slots[(key & 0xfffu) % NET_UDP_MAX_PEERS];
    if (old) relay_close(old, NET_DISC_CLIENT_CLOSED);
    r->host = host;
    r->srv = srv;
    r->sink = *sink;
    r->set = rs;
    r->key = key;
    r->client.transport = &net_udp_transport;
    r->client.io_flush = relay_flush;
    net_conn_set_clock(srv);
    if (!net_client_open_adopted(srv, &r->client, addr)) {
        free(r);
        (void)sink->post(sink->ctx, key, NET_UDP_OUT_CUT, NULL, 0);
        return NULL;
    }
    host->conn_count++;
    rs->slots[(key & 0xfffu) % NET_UDP_MAX_PEERS] = r;
    return &r->client;
}

void net_udp_relay_packet(net_udp_relays *rs, uint64_t key, const uint8_t *data, size_t len) {
    net_udp_relay *r = relay_find(rs, key);
    if (!r) return;
    net_conn_set_clock(r->srv);
    net_client_feed(r->srv, &r->client, data, len);
}

void net_udp_relay_gone(net_udp_relays *rs, uint64_t key, net_disconnect_reason reason) {
    net_udp_relay *r = relay_find(rs, key);
    if (r) relay_close(r, reason);
}

void net_udp_relays_free(net_udp_relays *rs) {
    for (size_t i = 0; rs->slots && i < NET_UDP_MAX_PEERS; i++)
        if (rs->slots[i]) relay_close(rs->slots[i], NET_DISC_SHUTDOWN);
    free(rs->slots);
    rs->slots = NULL;
    net_buf_free(&rs->out);
}

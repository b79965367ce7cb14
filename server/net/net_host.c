/* net_host: the rooms of one worker thread (see net_host.h). */
#include "net_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_internal.h"
#include "net_server.h"
#include "net_conn.h"
#include "net_log.h"
#include "net_room.h"
#include "net_session.h"
#include "net_worlds.h"
#include "world_load.h"
#include "net_tick.h"
#include "net_udp.h"
#include "net_udp_relay.h"

#define NET_HOST_READ_CHUNK 65536u  /* the thread's shared read buffer */
#define NET_HOST_HOUSEKEEPING_MS 50 /* the lobby's timeouts */

/* The messages a host handles (net_worker_msg.kind). */
enum {
    HOST_ROOM_ENSURE = 1, /* id: a room the directory placed here; bytes: its name */
    HOST_CONN_ADOPT,      /* id: the room; fd: the socket; bytes: adopt_header + what followed */
    HOST_ROOM_CLOSE,      /* id: the room (left the directory); bytes: the reason */
    HOST_DRAIN,           /* SIGTERM */
    HOST_COLLECT,         /* the front asks for the figures of /metrics */
    HOST_UDP_ADOPT,       /* id: the room; bytes: udp_adopt_header + the packets held */
    HOST_UDP_PACKET,      /* id: the peer's key; bytes: [channel][message] */
    HOST_UDP_GONE,        /* id: the peer's key; bytes: one byte, the disconnect reason */
};

/* What the front sends with a socket (the bytes of HOST_CONN_ADOPT start with it). */
typedef struct adopt_header {
    net_hello_placement placement;
    char name[48]; /* Hello.name, sanitised by the front */
} adopt_header;

/* What the front sends for a UDP peer, which stays on its ENet host (net_udp_host.h). */
typedef struct udp_adopt_header {
    adopt_header base;
    uint64_t key;  /* the peer, in the relay's messages both ways */
    char addr[64]; /* its "ip:port", for logs and the per-address key */
} udp_adopt_header;

typedef struct net_host {
    net_hosts *all;          /* shared */
    net_worker *worker;      /* its thread */
    uint32_t index;          /* its number, the directory's thread number */
    net_conn_host conns;     /* the connections on this loop */
    net_server *lobby;       /* world-less: refused hand-offs wait here for their Error */
    net_room **rooms;        /* the rooms it owns, open or closing */
    size_t room_count;       /* entries in rooms */
    size_t room_cap;         /* entries allocated */
    net_metrics retired;     /* counters of its closed rooms */
    uv_prepare_t flush;      /* writes dirty clients before the loop sleeps */
    uv_timer_t housekeeping; /* the lobby's timeouts, the overload flag */
    uv_timer_t drain_timer;  /* bounds the drain */
    bool overloaded;         /* as last told to the directory */
    bool draining;           /* HOST_DRAIN received */
    bool drained;            /* told the front its drain is over */
    bool stopping;           /* NET_WORKER_STOP received: handles closing */
    net_udp_relays relays;   /* its clients of UDP peers (net_udp_relay.c) */
    uint8_t read_buf[NET_HOST_READ_CHUNK];
} net_host;

static void notify_front(net_hosts *all) { uv_async_send(all->front_wake); }

/* ---- Rooms ----------------------------------------------------------------------------------- */

static net_room *room_find(net_host *h, net_room_id id) {
    for (size_t i = 0; i < h->room_count; i++)
        if (h->rooms[i]->id == id) return h->rooms[i];
    return NULL;
}

static void maybe_drained(net_host *h);
static void on_room_overload(net_room *changed);
static int admin_create(void *ctx, const char *name, size_t len, const char *world,
                        size_t world_len, uint32_t max_clients, net_room_info *out, char *err,
                        size_t err_size);
static int admin_close(void *ctx, const char *name, size_t len, const char *reason,
                       net_room_info *out, char *err, size_t err_size);
static size_t admin_list(void *ctx, net_room_info *out, size_t max);

/* A room's last handle is closed: its counters join the thread's retired ones, and it goes. */
static void on_room_closed(net_room *r) {
    net_host *h = r->data;
    for (size_t i = 0; i < h->room_count; i++) {
        if (h->rooms[i] == r) {
            h->rooms[i] = h->rooms[--h->room_count];
            break;
        }
    }
    net_metrics_add(&h->retired, &r->srv->metrics);
    if (r->overloaded) {
        r->overloaded = false;
        on_room_overload(r);
    }
    net_room_free(r);
    maybe_drained(h);
}

/* The room `id`, opened here from the directory's world text when it is not open yet. NULL when
 * it is gone from the directory or its world would not load. */
static net_room *room_ensure(net_host *h, net_room_id id, const char *name) {
    net_room *r = room_find(h, id);
    if (r) return r;
    if (h->room_count == h->room_cap) {
        size_t cap = h->room_cap ? 2 * h->room_cap : 16;
        net_room **rooms = realloc(h->rooms, cap * sizeof *rooms);
        if (!rooms) return NULL;
        h->rooms = rooms;
        h->room_cap = cap;
    }
    char err[512];
    r = net_room_open(net_worker_loop(h->worker), h->all->dir, id, name, &h->all->cfg, err,
                      sizeof err);
    if (!r) {
        net_log(NET_LOG_WARN, "room_error", 0, NULL, "room=%s: %s", name, err);
        return NULL;
    }
    r->data = h;
    r->on_closed = on_room_closed;
    r->on_overload = on_room_overload;
    r->srv->room_admin = &h->all->room_admin;
    h->rooms[h->room_count++] = r;
    return r;
}

/* ---- Connections ----------------------------------------------------------------------------- */

static void on_client_closed(net_conn_host *ch, net_server *srv, bool welcomed) {
    net_host *h = ch->data;
    net_room *r = srv->owner;
    if (!r) return; /* the lobby's */
    if (welcomed) net_rooms_left(h->all->dir, r->id);
    net_room_client_left(r);
}

static void on_conn_freed(net_conn_host *ch) { maybe_drained(ch->data); }

/* Where a hand-off lands: its room, or NULL with the status it is refused with. */
static net_room *landing(net_host *h, const net_hello_placement *p, int *refusal) {
    net_rooms *dir = h->all->dir;
    /* The drain began after the front placed it: the room is saying Goodbye, and a Welcome now
     * would be a lie (PROTOCOL.md "Shutting down"). */
    if (h->draining) {
        net_rooms_abandon(dir, p->room_id);
        *refusal = NET_ROOM_SHUTTING_DOWN;
        return NULL;
    }
    net_room *r = room_ensure(h, p->room_id, p->room);
    if (!r) {
        /* Gone meanwhile (the join's count went with it), or its world failed (counted here). */
        net_rooms_abandon(dir, p->room_id);
        *refusal = NET_ROOM_NOT_FOUND;
        return NULL;
    }
    /* Closed after the front placed the client (an admin's CloseRoom, or the idle close racing
     * the join cannot happen: a join in flight keeps an auto room open): refused, not welcomed
     * into a room on its way out. */
    if (r->closing || !net_rooms_arrived(dir, r->id)) {
        *refusal = NET_ROOM_NOT_FOUND;
        return NULL;
    }
    return r;
}

static net_hello_request request_of(const adopt_header *hd, const net_room *r) {
    const net_hello_placement *p = &hd->placement;
    net_hello_request t = {.request_id = p->request_id,
                           .grant = p->grant,
                           .name = hd->name,
                           .room = r->name,
                           .room_len = strlen(r->name),
                           .transport = p->transport,
                           .all_events = p->all_events,
                           .snapshot_rate_hz = p->snapshot_rate_hz,
                           .quantized = p->quantized};
    return t;
}

static void adopt(net_host *h, net_worker_msg *m) {
    int fd = m->fd;
    m->fd = -1; /* ours now */
    if (m->len < sizeof(adopt_header)) {
        close(fd);
        return;
    }
    adopt_header hd;
    memcpy(&hd, m->bytes, sizeof hd);
    hd.name[sizeof hd.name - 1] = '\0';
    hd.placement.room[NET_ROOM_NAME_MAX] = '\0';
    const net_hello_placement *p = &hd.placement;
    int refusal = 0;
    net_room *r = landing(h, p, &refusal);
    if (!r) {
        net_conn_refuse(&h->conns, h->lobby, fd, p->request_id, refusal, p->transport);
        return;
    }
    net_hello_request t = request_of(&hd, r);
    if (!net_conn_adopt(&h->conns, r->srv, fd, &t, m->bytes + sizeof hd, m->len - sizeof hd))
        net_rooms_left(h->all->dir, r->id); /* arrived, then could not be opened: it left */
}

/* A UDP peer placed in a room here: a relay client in the room's server (or, refused, in the
 * lobby until its Error is sent), welcomed as net_conn_adopt welcomes a socket. */
static void udp_adopt(net_host *h, net_worker_msg *m) {
    if (m->len < sizeof(udp_adopt_header) || !h->all->udp_sink.post) return;
    udp_adopt_header hd;
    memcpy(&hd, m->bytes, sizeof hd);
    hd.base.name[sizeof hd.base.name - 1] = '\0';
    hd.base.placement.room[NET_ROOM_NAME_MAX] = '\0';
    hd.addr[sizeof hd.addr - 1] = '\0';
    const net_hello_placement *p = &hd.base.placement;
    int refusal = 0;
    net_room *r = landing(h, p, &refusal);
    net_server *srv = r ? r->srv : h->lobby;
    net_client *c =
        net_udp_relay_open(&h->relays, &h->conns, &h->all->udp_sink, srv, hd.key, hd.addr);
    if (!c) {
        if (r) net_rooms_left(h->all->dir, r->id);
        return;
    }
    if (!r) {
        net_session_refuse_room(srv, c, p->request_id, refusal);
        return;
    }
    net_hello_request t = request_of(&hd.base, r);
    c->ev.all_events = t.grant.admin && t.all_events;
    c->snap.snapshot_rate_hz = t.snapshot_rate_hz;
    c->snap.quantized = t.quantized;
    net_session_welcome(srv, c, t.request_id, &t.grant, t.name, t.room);
    net_udp_feed_held(srv, c, m->bytes + sizeof hd, m->len - sizeof hd);
}

/* ---- Flush, housekeeping, drain -------------------------------------------------------------- */

static void on_flush(uv_prepare_t *p) {
    net_host *h = p->data;
    bool flushed = net_conn_flush(h->lobby);
    for (size_t i = 0; i < h->room_count; i++)
        flushed |= net_conn_flush(h->rooms[i]->srv);
    /* As the single-world daemon did: the time spent writing must not be slept again on top. */
    if (flushed) uv_update_time(net_worker_loop(h->worker));
}

static void on_housekeeping(uv_timer_t *t) {
    net_host *h = t->data;
    net_conn_set_clock(h->lobby);
    net_server_sweep(h->lobby);
}

/* The thread is overloaded when a room on it is: their ticks share this loop, so one room late is
 * every room late. New rooms go elsewhere and players are refused here (net_rooms_join). */
static void on_room_overload(net_room *changed) {
    net_host *h = changed->data;
    bool over = false;
    for (size_t i = 0; i < h->room_count && !over; i++)
        over = h->rooms[i]->overloaded;
    if (over != h->overloaded) {
        h->overloaded = over;
        net_rooms_set_overloaded(h->all->dir, h->index, over);
    }
}

static void maybe_drained(net_host *h) {
    if (!h->draining || h->drained || h->room_count > 0 || h->conns.conn_count > 0) return;
    h->drained = true;
    uv_timer_stop(&h->drain_timer);
    uv_mutex_lock(&h->all->lock);
    h->all->drained++;
    uv_mutex_unlock(&h->all->lock);
    notify_front(h->all);
}

static void on_drain_timeout(uv_timer_t *t) {
    net_host *h = t->data;
    /* Clients that would not read their Goodbye: cut them now. */
    uint32_t left = net_server_client_count(h->lobby);
    for (size_t i = 0; i < h->room_count; i++)
        left += net_server_client_count(h->rooms[i]->srv);
    if (left > 0)
        net_log(NET_LOG_WARN, "drain_timeout", 0, NULL,
                "%u clients not drained within %u ms: cut (thread %u)", left,
                h->all->cfg.drain_timeout_ms, h->index);
    net_server_kill_all(h->lobby);
    for (size_t i = 0; i < h->room_count; i++)
        net_server_kill_all(h->rooms[i]->srv);
}

static void drain(net_host *h) {
    if (h->draining) return;
    h->draining = true;
    net_conn_set_clock(h->lobby);
    net_server_drain(h->lobby);
    /* A room leaves h->rooms in its timer's close callback, never during net_room_close. */
    for (size_t i = 0; i < h->room_count; i++)
        net_room_close(h->rooms[i], "server shutting down", NET_DISC_SHUTDOWN);
    uv_timer_start(&h->drain_timer, on_drain_timeout, h->all->cfg.drain_timeout_ms, 0);
    maybe_drained(h);
}

/* ---- Metrics --------------------------------------------------------------------------------- */

_Static_assert(sizeof(((net_client *)0)->name) == NET_ROOM_PLAYER_NAME, "a name fits its row");

/* The welcomed clients of the host's rooms (at most max of them into out, when out is not NULL);
 * returns how many there are. */
static size_t collect_players(const net_host *h, net_room_player *out, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < h->room_count; i++) {
        const net_room *r = h->rooms[i];
        for (uint32_t k = 0; k < r->srv->client_count; k++) {
            const net_client *c = r->srv->clients[k];
            if (c->state != NET_CLIENT_ACTIVE) continue;
            if (out && n < max) {
                net_room_player *p = &out[n];
                snprintf(p->room, sizeof p->room, "%s", r->name);
                snprintf(p->name, sizeof p->name, "%s", c->name);
                p->id = c->id;
                p->admin = c->admin;
                p->ticket = c->ticket_key != 0;
            }
            n++;
        }
    }
    return n;
}

static void collect(net_host *h) {
    size_t players = collect_players(h, NULL, 0);
    size_t listed = players < NET_ROOMS_JSON_PLAYERS ? players : NET_ROOMS_JSON_PLAYERS;
    size_t rooms_bytes = sizeof(net_host_sample) + h->room_count * sizeof(net_room_sample);
    net_host_sample *s = malloc(rooms_bytes + listed * sizeof(net_room_player));
    if (s) {
        s->players = (net_room_player *)((char *)s + rooms_bytes);
        s->players_total = collect_players(h, s->players, listed);
        s->player_count = listed;
        s->retired = h->retired;
        net_metrics_add(&s->retired, &h->lobby->metrics);
        s->retired.overloaded = false;
        s->connections = net_server_client_count(h->lobby);
        s->count = h->room_count;
        for (size_t i = 0; i < h->room_count; i++) {
            const net_room *r = h->rooms[i];
            net_room_sample *o = &s->rooms[i];
            world_stats ws;
            world_get_stats(r->world, &ws);
            snprintf(o->name, sizeof o->name, "%s", r->name);
            o->m = r->srv->metrics;
            o->clients = net_server_client_count(r->srv);
            o->static_bodies = ws.static_bodies;
            o->moving_bodies = ws.moving_bodies;
            o->slots_retired = ws.slots_retired;
            o->ids_left = ws.ids_left;
            o->history_bytes = ws.history_bytes;
            o->history_records = ws.history_records;
            o->tick = world_tick(r->world);
            o->id = r->id;
        }
    }
    uv_mutex_lock(&h->all->lock);
    h->all->collected[h->index] = s; /* NULL (out of memory): this thread is left out */
    uint32_t left = --h->all->collect_left;
    uv_mutex_unlock(&h->all->lock);
    if (left == 0) notify_front(h->all);
}

/* ---- The thread ------------------------------------------------------------------------------ */

static void stop(net_host *h) {
    h->stopping = true;
    net_udp_relays_free(&h->relays); /* none after a drain; a failed start may leave some */
    uv_close((uv_handle_t *)&h->flush, NULL);
    uv_close((uv_handle_t *)&h->housekeeping, NULL);
    uv_close((uv_handle_t *)&h->drain_timer, NULL);
    /* Without a drain before (a start that failed half way) rooms may be open, with no client. */
    for (size_t i = 0; i < h->room_count; i++)
        net_room_close(h->rooms[i], "server stopped", NET_DISC_SHUTDOWN);
}

static void on_message(net_worker *w, void *ctx, net_worker_msg *m) {
    (void)w;
    net_host *h = ctx;
    switch (m->kind) {
    case HOST_ROOM_ENSURE: {
        char name[NET_ROOM_NAME_MAX + 1] = "";
        memcpy(name, m->bytes, m->len < NET_ROOM_NAME_MAX ? m->len : NET_ROOM_NAME_MAX);
        if (!h->draining) (void)room_ensure(h, m->id, name);
        break;
    }
    case HOST_CONN_ADOPT:
        adopt(h, m);
        break;
    case HOST_ROOM_CLOSE: {
        net_room *r = room_find(h, m->id);
        char reason[256] = "";
        memcpy(reason, m->bytes, m->len < sizeof reason - 1 ? m->len : sizeof reason - 1);
        if (r) net_room_close(r, reason[0] ? reason : "room closed", NET_DISC_ROOM_CLOSED);
        break;
    }
    case HOST_DRAIN:
        drain(h);
        break;
    case HOST_COLLECT:
        collect(h);
        break;
    case HOST_UDP_ADOPT:
        udp_adopt(h, m);
        break;
    case HOST_UDP_PACKET:
        net_udp_relay_packet(&h->relays, m->id, m->bytes, m->len);
        break;
    case HOST_UDP_GONE:
        net_udp_relay_gone(&h->relays, m->id,
                           m->len == 1 && m->bytes[0] < NET_DISC_REASON_COUNT
                               ? (net_disconnect_reason)m->bytes[0]
                               : NET_DISC_CLIENT_CLOSED);
        break;
    case NET_WORKER_STOP:
        stop(h);
        break;
    default:
        break;
    }
    if (m->fd >= 0) close(m->fd);
    free(m->bytes);
}

static void on_start(net_worker *w, void *ctx) {
    net_host *h = ctx;
    h->worker = w;
    uv_loop_t *loop = net_worker_loop(w);
    h->conns.loop = loop;
    h->conns.read_buf = h->read_buf;
    h->conns.read_buf_size = sizeof h->read_buf;
    h->conns.on_freed = on_conn_freed;
    h->conns.on_client_closed = on_client_closed;
    h->conns.data = h;
    uv_prepare_init(loop, &h->flush);
    uv_timer_init(loop, &h->housekeeping);
    uv_timer_init(loop, &h->drain_timer);
    h->flush.data = h->housekeeping.data = h->drain_timer.data = h;
    uv_prepare_start(&h->flush, on_flush);
    uv_timer_start(&h->housekeeping, on_housekeeping, NET_HOST_HOUSEKEEPING_MS,
                   NET_HOST_HOUSEKEEPING_MS);
}

bool net_hosts_start(net_hosts *all) {
    uint32_t n = all->cfg.threads;
    if (n == 0) n = (uint32_t)uv_available_parallelism();
    if (n == 0) n = 1;
    all->threads = n;
    all->cfg.threads = n;
    net_hosts_init_admin(all);
    all->workers = calloc(n, sizeof *all->workers);
    all->collected = calloc(n, sizeof *all->collected);
    net_host **hosts = calloc(n, sizeof *hosts);
    if (!all->workers || !all->collected || !hosts || uv_mutex_init(&all->lock) != 0) {
        free(all->workers);
        free(all->collected);
        free(hosts);
        all->workers = NULL;
        all->collected = NULL;
        return false;
    }
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        net_host *h = calloc(1, sizeof *h);
        net_server *lobby = h ? net_server_create(&all->cfg, NULL) : NULL;
        if (!lobby) {
            free(h);
            ok = false;
            break;
        }
        h->all = all;
        h->index = i;
        h->lobby = lobby;
        hosts[i] = h;
        all->workers[i] = net_worker_start(i, on_message, on_start, h);
        ok = all->workers[i] != NULL;
    }
    all->hosts = hosts;
    if (!ok) {
        net_hosts_stop(all);
        return false;
    }
    /* `default` exists from the start (PROTOCOL.md): built now, on thread 0, not at first join. */
    net_room_info def;
    if (net_rooms_find(all->dir, NET_ROOM_DEFAULT, strlen(NET_ROOM_DEFAULT), &def)) {
        net_worker_msg m = {HOST_ROOM_ENSURE, def.id, -1, (uint8_t *)def.name, strlen(def.name)};
        (void)net_worker_post(all->workers[def.thread], &m);
    }
    return true;
}

void net_hosts_stop(net_hosts *all) {
    for (uint32_t i = 0; i < all->threads; i++) {
        if (all->workers && all->workers[i]) net_worker_stop(all->workers[i]);
        net_host *h = all->hosts ? all->hosts[i] : NULL;
        if (h) {
            net_server_destroy(h->lobby);
            free(h->rooms);
            free(h);
        }
    }
    net_hosts_collect_free(all);
    free(all->workers);
    free(all->collected);
    free(all->hosts);
    all->workers = NULL;
    all->collected = NULL;
    all->hosts = NULL;
    uv_mutex_destroy(&all->lock);
}

void net_hosts_hand_off(net_hosts *all, const net_hello_placement *p, const char *name, int fd,
                        const uint8_t *leftover, size_t leftover_len) {
    size_t len = sizeof(adopt_header) + leftover_len;
    uint8_t *bytes = malloc(len);
    bool posted = false;
    if (bytes && p->thread < all->threads) {
        adopt_header hd;
        memset(&hd, 0, sizeof hd);
        hd.placement = *p;
        snprintf(hd.name, sizeof hd.name, "%s", name);
        memcpy(bytes, &hd, sizeof hd);
        if (leftover_len) memcpy(bytes + sizeof hd, leftover, leftover_len);
        net_worker_msg m = {HOST_CONN_ADOPT, p->room_id, fd, bytes, len};
        posted = net_worker_post(all->workers[p->thread], &m);
    }
    free(bytes);
    if (!posted) { /* the worker is stopping (or out of memory): the join never arrives */
        close(fd);
        net_rooms_abandon(all->dir, p->room_id);
    }
}

bool net_hosts_udp_hand_off(net_hosts *all, const net_hello_placement *p, const char *name,
                            uint64_t key, const char *addr, const uint8_t *held, size_t held_len) {
    size_t len = sizeof(udp_adopt_header) + held_len;
    uint8_t *bytes = malloc(len);
    bool posted = false;
    if (bytes && all->workers && p->thread < all->threads) {
        udp_adopt_header hd;
        memset(&hd, 0, sizeof hd);
        hd.base.placement = *p;
        snprintf(hd.base.name, sizeof hd.base.name, "%s", name);
        hd.key = key;
        snprintf(hd.addr, sizeof hd.addr, "%s", addr);
        memcpy(bytes, &hd, sizeof hd);
        if (held_len) memcpy(bytes + sizeof hd, held, held_len);
        net_worker_msg m = {HOST_UDP_ADOPT, p->room_id, -1, bytes, len};
        posted = net_worker_post(all->workers[p->thread], &m);
    }
    free(bytes);
    if (!posted) net_rooms_abandon(all->dir, p->room_id); /* the join never arrives */
    return posted;
}

bool net_hosts_udp_packet(net_hosts *all, uint32_t thread, uint64_t key, const uint8_t *data,
                          size_t len) {
    if (!all->workers || thread >= all->threads) return false;
    net_worker_msg m = {HOST_UDP_PACKET, key, -1, (uint8_t *)data, len};
    return net_worker_post_within(all->workers[thread], &m, all->cfg.udp_relay_bytes);
}

void net_hosts_udp_gone(net_hosts *all, uint32_t thread, uint64_t key,
                        net_disconnect_reason reason) {
    if (!all->workers || thread >= all->threads) return;
    uint8_t r = (uint8_t)reason;
    net_worker_msg m = {HOST_UDP_GONE, key, -1, &r, 1};
    (void)net_worker_post(all->workers[thread], &m);
}

void net_hosts_drain(net_hosts *all) {
    for (uint32_t i = 0; i < all->threads; i++) {
        net_worker_msg m = {HOST_DRAIN, 0, -1, NULL, 0};
        if (!net_worker_post(all->workers[i], &m)) {
            uv_mutex_lock(&all->lock);
            all->drained++;
            uv_mutex_unlock(&all->lock);
        }
    }
    notify_front(all);
}

bool net_hosts_collect(net_hosts *all) {
    uv_mutex_lock(&all->lock);
    bool busy = all->collect_left > 0;
    if (!busy) all->collect_left = all->threads;
    uv_mutex_unlock(&all->lock);
    if (busy) return false;
    net_hosts_collect_free(all);
    for (uint32_t i = 0; i < all->threads; i++) {
        net_worker_msg m = {HOST_COLLECT, 0, -1, NULL, 0};
        if (!net_worker_post(all->workers[i], &m)) {
            uv_mutex_lock(&all->lock);
            all->collect_left--;
            uv_mutex_unlock(&all->lock);
        }
    }
    notify_front(all); /* in case no worker could answer */
    return true;
}

void net_hosts_collect_free(net_hosts *all) {
    for (uint32_t i = 0; all->collected && i < all->threads; i++) {
        free(all->collected[i]);
        all->collected[i] = NULL;
    }
}

/* ---- Admin room calls (net_room_admin), on the admin's room thread ----------------------------
 */

/* CreateRoom: the world file is read and validated here, on the admin's thread, so the admin gets
 * the file's error in the reply; the owner builds the room from the same text. */
static int admin_create(void *ctx, const char *name, size_t len, const char *world,
                        size_t world_len, uint32_t max_clients, net_room_info *out, char *err,
                        size_t err_size) {
    net_hosts *all = ctx;
    if (!net_room_name_valid(name, len)) {
        snprintf(err, err_size, "room name must be 1..%d bytes of [A-Za-z0-9_.:-]",
                 NET_ROOM_NAME_MAX);
        return NET_ERR(BAD_REQUEST);
    }
    net_world_text *text = NULL;
    size_t statics = 0;
    if (world_len > 0) {
        world_config wc;
        world_config_default(&wc);
        wc.tick_rate_hz = all->cfg.tick_rate_hz;
        wc.max_speed = all->cfg.max_speed;
        wc.max_angular_speed = all->cfg.max_angular_speed;
        wc.max_bodies = all->cfg.max_bodies;
        char *data = NULL;
        net_world_status ws = net_world_read(all->cfg.world_dir, world, world_len, &wc, &data,
                                             &statics, err, err_size);
        if (ws == NET_WORLD_NOT_FOUND) return NET_ERR(NOT_FOUND);
        if (ws != NET_WORLD_OK) return NET_ERR(BAD_REQUEST);
        text = net_world_text_make(data, strlen(data));
        if (!text) {
            snprintf(err, err_size, "out of memory");
            return NET_ERR(INTERNAL);
        }
    }
    net_room_ref ref;
    net_room_status st = net_rooms_create_room(all->dir, name, len, max_clients, text, &ref);
    net_world_text_unref(text); /* the directory holds its own reference */
    if (st != NET_ROOM_OK) {
        snprintf(err, err_size, "%s", net_room_status_str(st));
        return net_rooms_status_error_code(st);
    }
    /* Built now on its thread, not at its first join: its statics are in ListRooms from the
     * first published figures, and a world that fails there is logged at once. */
    net_worker_msg m = {HOST_ROOM_ENSURE, ref.id, -1, (uint8_t *)name, len};
    if (all->workers) (void)net_worker_post(all->workers[ref.thread], &m);
    if (!net_rooms_find(all->dir, name, len, out)) memset(out, 0, sizeof *out);
    out->bodies = world_len > 0 ? statics : all->default_statics;
    net_log(NET_LOG_INFO, "room_create", 0, NULL, "room=%.*s world=%s max_clients=%u thread=%u",
            (int)len, name, world_len ? world : "<default>", max_clients, ref.thread);
    return 0;
}

static int admin_close(void *ctx, const char *name, size_t len, const char *reason,
                       net_room_info *out, char *err, size_t err_size) {
    net_hosts *all = ctx;
    net_room_ref ref;
    net_room_status st = net_rooms_close(all->dir, name, len, out, &ref);
    if (st != NET_ROOM_OK) {
        snprintf(err, err_size, "%s",
                 st == NET_ROOM_FORBIDDEN ? "the room default cannot be closed"
                                          : net_room_status_str(st));
        return net_rooms_status_error_code(st);
    }
    net_worker_msg m = {HOST_ROOM_CLOSE, ref.id, -1, (uint8_t *)reason, strlen(reason)};
    if (all->workers) (void)net_worker_post(all->workers[ref.thread], &m);
    return 0;
}

static size_t admin_list(void *ctx, net_room_info *out, size_t max) {
    return net_rooms_list(((net_hosts *)ctx)->dir, out, max);
}

void net_hosts_init_admin(net_hosts *all) {
    all->room_admin = (net_room_admin){admin_create, admin_close, admin_list, all};
}

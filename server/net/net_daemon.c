#include "net_daemon.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "net_agones.h"
#include "net_conn.h"
#include "net_host.h"
#include "net_http.h"
#include "net_log.h"

#define NET_READ_CHUNK 65536u /* one shared read buffer, handed to every read */
typedef struct net_daemon net_daemon;

typedef struct net_http_conn {
    uv_tcp_t tcp;                      /* the socket */
    uv_write_t wreq;                   /* the response write */
    char req[NET_HTTP_MAX_REQUEST];    /* request bytes so far */
    size_t len;                        /* bytes in req */
    char head[256];                    /* response status line and headers */
    net_buf body;                      /* response body */
    uint64_t start_us;                 /* accept time, for the timeout */
    struct sockaddr_storage peer;      /* remote address (port ignored), for the per-address cap */
    bool responded;                    /* a response was written: ignore further input */
    bool want_metrics;                 /* GET /metrics or /rooms: waits for the next collection */
    bool rooms;                        /* ... for /rooms */
    bool in_collection;                /* ... and that collection is the one in flight */
    bool head_only;                    /* HEAD: the response without its body */
    bool closing;                      /* uv_close called */
    net_daemon *d;                     /* owner */
    struct net_http_conn *prev, *next; /* in d->http_conns */
} net_http_conn;

struct net_daemon {
    uv_loop_t loop;                     /* the front's loop */
    net_server *srv;                    /* the front: connections until their Hello (no world) */
    net_rooms *dir;                     /* the room directory, shared with the workers */
    net_hosts hosts;                    /* the worker threads that own the rooms */
    bool hosts_on;                      /* the workers were started */
    uv_tcp_t listener;                  /* game port */
    uv_tcp_t http_listener;             /* metrics port (when http_on) */
    uv_tcp_t ws_listener;               /* WebSocket port (when ws_on) */
    bool ws_on;                         /* the WebSocket listener's handle was initialised */
    bool http_on;                       /* the HTTP listener is open */
    uv_timer_t housekeeping;            /* the front's timeouts (hello, pending, HTTP) */
    uv_timer_t drain_timer;             /* bounds the front's part of the drain */
    uv_prepare_t flush;                 /* writes dirty clients before the loop sleeps */
    uv_signal_t sigterm;                /* SIGTERM: drain */
    uv_signal_t sigint;                 /* SIGINT: drain */
    uv_async_t wake;                    /* the workers: drained, or figures collected */
    net_conn_host conns;                /* the front's connections: read buffer, count */
    uint32_t http_count;                /* HTTP connections not yet freed */
    uint32_t http_open;                 /* of those, not closing: what --http-max-connections caps
                                           (a closed slot is free at once, not after uv_close's
                                           callback one loop turn later) */
    net_http_conn *http_conns;          /* open HTTP connections */
    bool collecting;                    /* a collection of the workers' figures is in flight */
    bool draining;                      /* shutdown started */
    bool finished;                      /* every long-lived handle is closing */
    net_agones *agones;                 /* the Agones SDK client (NULL: off) */
    bool agones_shutting;               /* Shutdown was asked after the drain */
    bool agones_done;                   /* ... and is over (or the client is closed) */
    uint8_t read_chunk[NET_READ_CHUNK]; /* shared read buffer (reads are handled one at a time) */
};

static void maybe_finish(net_daemon *d);
static void on_agones_shut_down(void *ctx);
static void http_close(net_http_conn *hc);
static void collect_start(net_daemon *d);
static bool render_rooms(net_daemon *d, net_buf *out);

static void set_clock(net_daemon *d) { net_conn_set_clock(d->srv); }

/* ---- Game connections ---------------------------------------------------------------------- */

static void on_conn_freed(net_conn_host *host) { maybe_finish(host->data); }

static void on_flush(uv_prepare_t *h) {
    net_daemon *d = h->data;
    bool flushed = net_conn_flush(d->srv); /* hand-offs, refusals, pending clients' errors */
    /* libuv computes the poll timeout after this callback from the loop time of the start of
     * the iteration: without an update, the time spent writing here (milliseconds with
     * thousands of clients) would be slept again on top, and every tick start that late. */
    if (flushed) uv_update_time(&d->loop);
}

static void on_connection(uv_stream_t *server, int status) {
    net_daemon *d = server->data;
    if (status < 0) {
        net_log(NET_LOG_WARN, "accept_error", 0, NULL, "%s", uv_strerror(status));
        return;
    }
    net_conn_accept(&d->conns, d->srv, server, &net_tcp_transport);
}

/* The WebSocket port: the same front, the same admission; only the framing differs. */
static void on_ws_connection(uv_stream_t *server, int status) {
    net_daemon *d = server->data;
    if (status < 0) {
        net_log(NET_LOG_WARN, "accept_error", 0, NULL, "%s", uv_strerror(status));
        return;
    }
    net_conn_accept(&d->conns, d->srv, server, &net_ws_transport);
}

/* ---- Placing clients in rooms ------------------------------------------------------------- */

/* A Hello passed the front's checks (version, token, room name): the directory places it, or
 * the front refuses it with the code PROTOCOL.md gives. */
static void on_hello(net_server *srv, net_client *c, const net_hello_ticket *t, void *ctx) {
    net_daemon *d = ctx;
    net_room_ref ref;
    net_room_status st = net_rooms_join(d->dir, t->room, t->room_len, t->admin, &ref);
    if (st != NET_ROOM_OK) {
        /* Logged there for the two the single world logged (server full, at capacity). */
        if (st != NET_ROOM_SERVER_FULL && st != NET_ROOM_AT_CAPACITY)
            net_log(NET_LOG_INFO, "client_refused", c->id, c->addr, "room=%.*s: %s",
                    (int)t->room_len, t->room, net_room_status_str(st));
        net_server_refuse_room(srv, c, t->request_id, (int)st);
        return;
    }
    if (ref.created)
        net_log(NET_LOG_INFO, "room_create", 0, NULL, "room=%.*s auto=1 thread=%u",
                (int)t->room_len, t->room, ref.thread);
    net_hello_placement p = {.room_id = ref.id,
                             .thread = ref.thread,
                             .request_id = t->request_id,
                             .admin = t->admin,
                             .all_events = t->all_events,
                             .snapshot_rate_hz = t->snapshot_rate_hz,
                             .quantized = t->quantized};
    memcpy(p.room, t->room, t->room_len);
    net_client_hand_off(srv, c, &p);
}

/* The connection layer detached a placed client's socket: it goes to its room's thread. */
static void on_hand_off(net_conn_host *host, net_server *srv, net_client *c, int fd) {
    (void)srv;
    net_daemon *d = host->data;
    net_hosts_hand_off(&d->hosts, &c->placement, c->name, fd, c->in.data, c->in.len);
}

/* ---- Housekeeping ---------------------------------------------------------------------------- */

static void on_housekeeping(uv_timer_t *t) {
    net_daemon *d = t->data;
    set_clock(d);
    net_server_sweep(d->srv); /* hello and frame timeouts, the pending set's trim */
    /* HTTP connections that never finish their request. */
    for (net_http_conn *h = d->http_conns; h; h = h->next) {
        if (!h->closing && net_server_now_us(d->srv) - h->start_us >
                               (uint64_t)net_server_config(d->srv)->http_timeout_ms * 1000u) {
            if (!h->responded) net_server_note_http_close(d->srv, NET_HTTP_TIMEOUT);
            http_close(h);
        }
    }
}

/* ---- HTTP --------------------------------------------------------------------------------------
 */

static void on_http_closed(uv_handle_t *h) {
    net_http_conn *hc = h->data;
    net_daemon *d = hc->d;
    if (hc->prev)
        hc->prev->next = hc->next;
    else
        d->http_conns = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    net_buf_free(&hc->body);
    free(hc);
    d->http_count--;
    maybe_finish(d);
}

static void http_close(net_http_conn *hc) {
    if (hc->closing) return;
    hc->closing = true;
    hc->d->http_open--;
    uv_close((uv_handle_t *)&hc->tcp, on_http_closed);
}

static void on_http_written(uv_write_t *req, int status) {
    (void)status;
    http_close(req->data);
}

static void http_respond(net_http_conn *hc, int code, const char *reason, const char *type,
                         bool head_only) {
    hc->responded = true;
    uv_read_stop((uv_stream_t *)&hc->tcp);
    int n = snprintf(
        hc->head, sizeof hc->head,
        "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
        code, reason, type, hc->body.len);
    uv_buf_t bufs[2] = {uv_buf_init(hc->head, (unsigned)n),
                        uv_buf_init((char *)hc->body.data, (unsigned)hc->body.len)};
    hc->wreq.data = hc;
    if (uv_write(&hc->wreq, (uv_stream_t *)&hc->tcp, bufs, head_only || hc->body.len == 0 ? 1 : 2,
                 on_http_written) < 0)
        http_close(hc);
}

static void http_text(net_http_conn *hc, int code, const char *reason, const char *text,
                      bool head_only) {
    hc->body.len = 0;
    if (!net_buf_append(&hc->body, text, strlen(text))) {
        http_close(hc);
        return;
    }
    http_respond(hc, code, reason, "text/plain; charset=utf-8", head_only);
}

static void http_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    net_http_conn *hc = h->data;
    buf->base = hc->req + hc->len;
    buf->len = sizeof hc->req - hc->len;
}

static void http_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    net_http_conn *hc = s->data;
    if (hc->closing || hc->responded) return;
    if (nread < 0) {
        http_close(hc);
        return;
    }
    hc->len += (size_t)nread;
    char path[NET_HTTP_MAX_PATH];
    int head = 0;
    net_http_status st = net_http_parse(hc->req, hc->len, path, sizeof path, &head);
    net_daemon *d = hc->d;
    switch (st) {
    case NET_HTTP_NEED_MORE:
        return;
    case NET_HTTP_BAD:
        http_text(hc, 400, "Bad Request", "bad request\n", false);
        return;
    case NET_HTTP_METHOD:
        http_text(hc, 405, "Method Not Allowed", "method not allowed\n", false);
        return;
    case NET_HTTP_TOO_LARGE:
        http_text(hc, 431, "Request Header Fields Too Large", "request too large\n", false);
        return;
    case NET_HTTP_GET:
        break;
    }
    if (strcmp(path, "/healthz") == 0) {
        if (d->draining)
            http_text(hc, 503, "Service Unavailable", "draining\n", head);
        else
            http_text(hc, 200, "OK", "ok\n", head);
    } else if (strcmp(path, "/metrics") == 0 || strcmp(path, "/rooms") == 0) {
        /* The figures live on the rooms' threads: answered once each has sent a copy, taken
         * after this request arrived (what a client just saw counted is in it). */
        hc->want_metrics = true;
        hc->rooms = path[1] == 'r';
        hc->head_only = head;
        uv_read_stop((uv_stream_t *)&hc->tcp);
        collect_start(d);
    } else {
        http_text(hc, 404, "Not Found", "not found\n", head);
    }
}

/* ---- /metrics and /rooms across threads ------------------------------------------------------ */

/* The collected copy of room `id`; NULL when none (not built yet, or gone since). */
static const net_room_sample *sample_of(const net_hosts *hs, uint32_t thread, net_room_id id) {
    const net_host_sample *smp = thread < hs->threads ? hs->collected[thread] : NULL;
    for (size_t j = 0; smp && j < smp->count; j++)
        if (smp->rooms[j].id == id) return &smp->rooms[j];
    return NULL;
}

/* GET /rooms: the directory's rooms (clients counted with the joins in flight), with the figures
 * of the collection just made. */
static bool render_rooms(net_daemon *d, net_buf *out) {
    size_t cap = (size_t)net_server_config(d->srv)->max_rooms + 1u;
    net_room_info *infos = malloc(cap * sizeof *infos);
    if (!infos) return false;
    size_t n = net_rooms_list(d->dir, infos, cap);
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) {
        const net_room_sample *r = sample_of(&d->hosts, infos[i].thread, infos[i].id);
        if (!r) continue;
        infos[i].bodies = r->static_bodies + r->moving_bodies;
        infos[i].tick = r->tick;
        infos[i].tick_p99_ms = 1000.0 * net_metrics_tick_quantile(&r->m, 0.99);
    }
    out->len = 0;
    bool ok = net_rooms_render_json(infos, n, out);
    free(infos);
    /* With Agones, the GameServer's state and labels join the object: {..., "agones": {...}}. */
    if (ok && d->agones && out->len >= 2) {
        out->len -= 2; /* "}\n" */
        ok = net_buf_append(out, ", ", 2) && net_agones_render_json(d->agones, out) &&
             net_buf_append(out, "}\n", 2);
    }
    return ok;
}

/* Starts a collection for the requests that want one, unless one is in flight (those requests
 * then wait for the next: the one in flight may have been asked before they arrived). */
static void collect_start(net_daemon *d) {
    if (d->collecting || !d->hosts_on) return;
    bool wanted = false;
    for (net_http_conn *h = d->http_conns; h; h = h->next) {
        if (h->want_metrics && !h->closing) {
            h->want_metrics = false;
            h->in_collection = true;
            wanted = true;
        }
    }
    if (!wanted) return;
    d->collecting = net_hosts_collect(&d->hosts);
}

static int room_row_order(const void *pa, const void *pb) {
    const net_room_metrics *a = pa, *b = pb;
    bool da = strcmp(a->name, NET_ROOM_DEFAULT) == 0, db = strcmp(b->name, NET_ROOM_DEFAULT) == 0;
    if (da != db) return da ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The /metrics exposition from the collected copies: the daemon-wide series sum the front, every
 * room and every thread's retired counters; the collide_room_* families label the rooms. */
static bool render_metrics(net_daemon *d, net_buf *out) {
    net_hosts *hs = &d->hosts;
    size_t n = 0;
    for (uint32_t i = 0; i < hs->threads; i++)
        if (hs->collected[i]) n += hs->collected[i]->count;
    net_room_metrics *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return false;
    net_metrics front = d->srv->metrics;
    front.overloaded = false;
    net_gauges g = {net_server_client_count(d->srv),  0, 0, net_log_dropped_total(), 0, UINT64_MAX,
                    net_server_pending_count(d->srv), 0, 0};
    size_t k = 0;
    for (uint32_t i = 0; i < hs->threads; i++) {
        const net_host_sample *smp = hs->collected[i];
        if (!smp) continue;
        net_metrics_add(&front, &smp->retired);
        g.clients += smp->connections;
        for (size_t j = 0; j < smp->count; j++) {
            const net_room_sample *r = &smp->rooms[j];
            rows[k++] =
                (net_room_metrics){r->name, &r->m, r->clients, r->static_bodies, r->moving_bodies};
            g.clients += r->clients;
            g.static_bodies += r->static_bodies;
            g.moving_bodies += r->moving_bodies;
            g.body_slots_retired += r->slots_retired;
            /* The room nearest to running out is the one to watch. */
            if (r->ids_left < g.body_ids_left) g.body_ids_left = r->ids_left;
            g.history_bytes += r->history_bytes;
            g.history_records += r->history_records;
        }
    }
    if (g.body_ids_left == UINT64_MAX) g.body_ids_left = 0;
    /* The renderer breaks ties in the top 64 by position: in the directory's order (`default`
     * first, then by name; docs/operations.md), not in the order the threads answered. */
    qsort(rows, k, sizeof *rows, room_row_order);
    out->len = 0;
    bool ok = net_metrics_render_rooms(rows, k, &front, &g, out);
    if (ok && d->agones) ok = net_agones_render_metrics(d->agones, out);
    free(rows);
    return ok;
}

/* The workers woke the front: a collection complete, or a drain progressed. */
static void on_wake(uv_async_t *a) {
    net_daemon *d = a->data;
    uv_mutex_lock(&d->hosts.lock);
    bool collected = d->collecting && d->hosts.collect_left == 0;
    bool drained = d->hosts.drained >= d->hosts.threads;
    uv_mutex_unlock(&d->hosts.lock);
    if (collected) {
        d->collecting = false;
        for (net_http_conn *h = d->http_conns; h; h = h->next) {
            if (!h->in_collection || h->closing) continue;
            h->in_collection = false;
            if (!(h->rooms ? render_rooms(d, &h->body) : render_metrics(d, &h->body))) {
                http_close(h);
                continue;
            }
            http_respond(h, 200, "OK",
                         h->rooms ? "application/json" : "text/plain; version=0.0.4; charset=utf-8",
                         h->head_only);
        }
        net_hosts_collect_free(&d->hosts);
        collect_start(d); /* those that asked meanwhile */
    }
    if (drained && d->draining) maybe_finish(d);
}

/* Same remote address, port ignored. */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
    if (a->ss_family != b->ss_family) return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

/* Makes room for one more connection (from `from`, or any address when NULL) by closing the
 * oldest open one that has not sent a whole request yet. A socket that holds a slot without
 * asking anything is the cheapest to drop and the likeliest attacker; one already being answered
 * is kept, so a flood cannot cut a scrape mid-response. False when every slot is answering. */
static bool http_evict_oldest_idle(net_daemon *d, const net_http_conn *except,
                                   const struct sockaddr_storage *from) {
    net_http_conn *oldest = NULL; /* the list is newest first: the last match is the oldest */
    for (net_http_conn *h = d->http_conns; h; h = h->next)
        if (h != except && !h->closing && !h->responded && (!from || same_host(&h->peer, from)))
            oldest = h;
    if (!oldest) return false;
    net_server_note_http_close(d->srv, NET_HTTP_EVICTED);
    http_close(oldest);
    return true;
}

static void on_http_connection(uv_stream_t *server, int status) {
    net_daemon *d = server->data;
    if (status < 0) return;
    net_http_conn *hc = calloc(1, sizeof *hc);
    if (!hc) return;
    hc->d = d;
    uv_tcp_init(&d->loop, &hc->tcp);
    hc->tcp.data = hc;
    hc->next = d->http_conns;
    if (hc->next) hc->next->prev = hc;
    d->http_conns = hc;
    d->http_count++;
    d->http_open++;
    set_clock(d);
    hc->start_us = net_server_now_us(d->srv);
    if (uv_accept(server, (uv_stream_t *)&hc->tcp) != 0) {
        http_close(hc);
        return;
    }
    int len = sizeof hc->peer;
    uv_tcp_getpeername(&hc->tcp, (struct sockaddr *)&hc->peer, &len);
    const net_config *cfg = net_server_config(d->srv);
    /* At a cap, the newcomer is admitted and the oldest silent connection goes, rather than the
     * newcomer being refused: otherwise sockets that connect and never ask (reconnecting when
     * cut) hold every slot and /healthz goes unanswered. The per-address cap evicts within the
     * address first, so one host cannot push out everyone else's connections either. */
    uint32_t same = 0;
    for (net_http_conn *h = d->http_conns; h; h = h->next)
        if (h != hc && !h->closing && same_host(&h->peer, &hc->peer)) same++;
    if (same >= cfg->http_max_per_address && !http_evict_oldest_idle(d, hc, &hc->peer)) {
        net_server_note_http_close(d->srv, NET_HTTP_REFUSED);
        http_close(hc);
        return;
    }
    if (d->http_open > cfg->http_max_connections && !http_evict_oldest_idle(d, hc, NULL)) {
        net_server_note_http_close(d->srv, NET_HTTP_REFUSED);
        http_close(hc);
        return;
    }
    uv_read_start((uv_stream_t *)&hc->tcp, http_alloc, http_read);
}

/* ---- Lifecycle ---------------------------------------------------------------------------------
 */

/* The end of the drain: the front's own connections are gone and every worker has said Goodbye
 * to its clients and closed its rooms. The workers are joined (quickly: nothing is left on their
 * loops) and the front's handles closed, so its loop ends. */
static void maybe_finish(net_daemon *d) {
    if (!d->draining || d->finished || d->conns.conn_count > 0) return;
    if (d->hosts_on) {
        uv_mutex_lock(&d->hosts.lock);
        bool drained = d->hosts.drained >= d->hosts.threads;
        uv_mutex_unlock(&d->hosts.lock);
        if (!drained) return;
    }
    /* Agones: Shutdown once every client has had its Goodbye, then the exit. */
    if (d->agones && !d->agones_done) {
        if (!d->agones_shutting) {
            d->agones_shutting = true;
            net_agones_shutdown(d->agones, on_agones_shut_down, d);
        }
        return;
    }
    d->finished = true;
    for (net_http_conn *h = d->http_conns; h; h = h->next)
        http_close(h);
    if (d->http_on) uv_close((uv_handle_t *)&d->http_listener, NULL);
    uv_close((uv_handle_t *)&d->housekeeping, NULL);
    uv_close((uv_handle_t *)&d->drain_timer, NULL);
    uv_close((uv_handle_t *)&d->flush, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->wake, NULL);
    if (d->hosts_on) {
        net_hosts_stop(&d->hosts);
        d->hosts_on = false;
    }
    net_log(NET_LOG_INFO, "drained", 0, NULL, "all clients closed");
}

static void on_agones_shut_down(void *ctx) {
    net_daemon *d = ctx;
    d->agones_done = true;
    maybe_finish(d);
}

static void on_drain_timeout(uv_timer_t *t) {
    net_daemon *d = t->data;
    /* Connections that would not read their Goodbye: cut them now (the workers bound their own
     * clients' drain the same way). */
    net_server_kill_all(d->srv);
}

static void on_signal(uv_signal_t *s, int signum) {
    net_daemon *d = s->data;
    if (d->draining) return;
    d->draining = true;
    uint32_t rooms = 0, clients = 0;
    net_rooms_counts(d->dir, &rooms, &clients);
    net_log(NET_LOG_INFO, "shutdown", 0, NULL, "signal %d: draining %u clients in %u rooms", signum,
            clients, rooms);
    /* Hellos and CreateRooms from now on get SHUTTING_DOWN (PROTOCOL.md "Shutting down"). */
    net_rooms_begin_drain(d->dir);
    uv_close((uv_handle_t *)&d->listener, NULL); /* stop accepting */
    if (d->ws_on) uv_close((uv_handle_t *)&d->ws_listener, NULL);
    set_clock(d);
    net_server_drain(d->srv);
    if (d->hosts_on) net_hosts_drain(&d->hosts);
    uv_timer_start(&d->drain_timer, on_drain_timeout, net_server_config(d->srv)->drain_timeout_ms,
                   0);
    maybe_finish(d);
}

static int listen_on(net_daemon *d, uv_tcp_t *tcp, const char *bind, uint16_t port,
                     uv_connection_cb cb, uint16_t *bound_port) {
    struct sockaddr_storage ss;
    uv_tcp_init(&d->loop, tcp);
    tcp->data = d;
    int rc = strchr(bind, ':') ? uv_ip6_addr(bind, port, (struct sockaddr_in6 *)&ss)
                               : uv_ip4_addr(bind, port, (struct sockaddr_in *)&ss);
    if (rc != 0) {
        net_log(NET_LOG_ERROR, "bind_error", 0, NULL, "bad address '%s': %s", bind,
                uv_strerror(rc));
        return rc;
    }
    rc = uv_tcp_bind(tcp, (const struct sockaddr *)&ss, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)tcp, 511, cb);
    if (rc != 0) {
        net_log(NET_LOG_ERROR, "bind_error", 0, NULL, "cannot listen on %s port %u: %s", bind, port,
                uv_strerror(rc));
        return rc;
    }
    int len = sizeof ss;
    uv_tcp_getsockname(tcp, (struct sockaddr *)&ss, &len);
    *bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

/* The Agones SDK client, on the sidecar's port from AGONES_SDK_HTTP_PORT (Agones sets it in the
 * pod; 9358 when unset). NULL when it cannot start: the game runs without it. */
static net_agones *start_agones(net_daemon *d, const net_config *cfg) {
    net_agones_config ac = {NET_AGONES_DEFAULT_PORT, cfg->agones_health_ms, cfg->max_clients,
                            cfg->max_rooms};
    const char *port = getenv("AGONES_SDK_HTTP_PORT");
    if (port && *port) {
        char *end = NULL;
        unsigned long v = strtoul(port, &end, 10);
        if (*end || v == 0 || v > 65535)
            net_log(NET_LOG_WARN, "agones_error", 0, NULL,
                    "AGONES_SDK_HTTP_PORT='%.16s' is not a port: using %u", port,
                    NET_AGONES_DEFAULT_PORT);
        else
            ac.port = (uint16_t)v;
    }
    return net_agones_start(&d->loop, d->dir, &ac);
}

int net_daemon_run(const net_config *cfg_in, char *world_text, size_t world_len, size_t statics) {
    net_daemon *d = calloc(1, sizeof *d);
    net_world_text *text = net_world_text_make(world_text, world_len);
    if (!d || !text) {
        free(d);
        net_world_text_unref(text);
        return 1;
    }
    net_config cfg = *cfg_in;
    if (cfg.threads == 0) cfg.threads = (uint32_t)uv_available_parallelism();
    if (cfg.threads == 0) cfg.threads = 1;
    net_rooms_config rc = {cfg.threads, cfg.max_rooms, cfg.max_clients, cfg.room_auto_create, text};
    d->dir = net_rooms_create(&rc);
    net_world_text_unref(text); /* the directory holds its own reference */
    d->srv = d->dir ? net_server_create(&cfg, NULL) : NULL;
    if (!d->srv || uv_loop_init(&d->loop) != 0) {
        net_server_destroy(d->srv);
        net_rooms_destroy(d->dir);
        free(d);
        return 1;
    }
    int exit_code = 0;
    net_server_set_hello_hook(d->srv, on_hello, d);
    d->loop.data = d;
    d->conns.loop = &d->loop;
    d->conns.read_buf = d->read_chunk;
    d->conns.read_buf_size = sizeof d->read_chunk;
    d->conns.on_freed = on_conn_freed;
    d->conns.on_hand_off = on_hand_off;
    d->conns.data = d;
    uv_timer_init(&d->loop, &d->housekeeping);
    uv_timer_init(&d->loop, &d->drain_timer);
    uv_prepare_init(&d->loop, &d->flush);
    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    uv_async_init(&d->loop, &d->wake, on_wake);
    d->housekeeping.data = d->drain_timer.data = d->flush.data = d->sigterm.data = d->sigint.data =
        d->wake.data = d;
    d->hosts.cfg = cfg;
    d->hosts.dir = d->dir;
    d->hosts.front_wake = &d->wake;
    d->hosts.default_statics = statics;
    if (cfg.agones) d->agones = start_agones(d, &cfg); /* before the threads: curl_global_init */
    d->hosts_on = net_hosts_start(&d->hosts);

    uint16_t game_port = 0, http_port = 0, ws_port = 0;
    const char *http_bind = cfg.http_bind[0] ? cfg.http_bind : cfg.bind; /* default: --bind */
    bool listener_made = d->hosts_on; /* listen_on initialises the handle first */
    bool listening = listener_made &&
                     listen_on(d, &d->listener, cfg.bind, cfg.port, on_connection, &game_port) == 0;
    if (listening && cfg.http_port) {
        d->http_on = true;
        listening = listen_on(d, &d->http_listener, http_bind, cfg.http_port, on_http_connection,
                              &http_port) == 0;
    }
    if (listening && cfg.ws_port) {
        d->ws_on = true;
        listening =
            listen_on(d, &d->ws_listener, cfg.bind, cfg.ws_port, on_ws_connection, &ws_port) == 0;
    }
    if (!listening) {
        if (!d->hosts_on) net_log(NET_LOG_ERROR, "thread_error", 0, NULL, "cannot start workers");
        exit_code = 1;
        net_agones_close(d->agones); /* no Shutdown: it never was Ready */
        d->agones_done = true;
        d->draining = true;
        if (d->hosts_on) net_hosts_drain(&d->hosts);
        if (listener_made) uv_close((uv_handle_t *)&d->listener, NULL);
        if (d->ws_on) uv_close((uv_handle_t *)&d->ws_listener, NULL);
        maybe_finish(d);
    } else {
        /* The front's timeouts at the tick period, as when they ran in the tick. */
        uint64_t period_ms = (uint64_t)(1000.0f / cfg.tick_rate_hz);
        if (period_ms == 0) period_ms = 1;
        uv_timer_start(&d->housekeeping, on_housekeeping, period_ms, period_ms);
        uv_prepare_start(&d->flush, on_flush);
        uv_signal_start(&d->sigterm, on_signal, SIGTERM);
        uv_signal_start(&d->sigint, on_signal, SIGINT);
        char kv[256];
        snprintf(kv, sizeof kv, "bind=%s game_port=%u http_bind=%s http_port=%u ws_port=%u",
                 cfg.bind, game_port, http_bind, http_port, ws_port);
        net_log_kv(NET_LOG_INFO, "listening", kv,
                   "tick_rate=%g statics=%zu threads=%u max_rooms=%u version=%s",
                   (double)cfg.tick_rate_hz, statics, cfg.threads, cfg.max_rooms, COLLIDE_VERSION);
        net_agones_listening(d->agones); /* Ready as soon as `default` has ticked */
    }
    uv_run(&d->loop, UV_RUN_DEFAULT);
    int rc2 = uv_loop_close(&d->loop);
    if (rc2 != 0) {
        net_log(NET_LOG_ERROR, "loop_close", 0, NULL, "uv_loop_close: %s", uv_strerror(rc2));
        exit_code = 1;
    }
    net_agones_free(d->agones);
    net_server_destroy(d->srv);
    net_rooms_destroy(d->dir);
    free(d);
    return exit_code;
}

#include "net_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_buf.h"
#include "net_conn.h"
#include "net_http.h"
#include "net_log.h"

struct net_ops_conn {
    uv_tcp_t tcp;                     /* the socket */
    uv_write_t wreq;                  /* the response write */
    char req[NET_HTTP_MAX_REQUEST];   /* request bytes so far */
    size_t len;                       /* bytes in req */
    char head[256];                   /* response status line and headers */
    net_buf body;                     /* response body */
    uint64_t start_us;                /* accept time, for the timeout */
    struct sockaddr_storage peer;     /* remote address (port ignored), for the per-address cap */
    bool responded;                   /* a response was written: ignore further input */
    bool want_metrics;                /* GET /metrics or /rooms: waits for the next collection */
    bool rooms;                       /* ... for /rooms */
    bool in_collection;               /* ... and that collection is the one in flight */
    bool head_only;                   /* HEAD: the response without its body */
    bool closing;                     /* uv_close called */
    net_ops *ops;                     /* owner */
    struct net_ops_conn *prev, *next; /* in ops->conns */
};

static void collect_start(net_ops *ops);

/* ---- One connection ---------------------------------------------------------------------- */

static void on_conn_closed(uv_handle_t *h) {
    net_ops_conn *hc = h->data;
    net_ops *ops = hc->ops;
    if (hc->prev)
        hc->prev->next = hc->next;
    else
        ops->conns = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    net_buf_free(&hc->body);
    free(hc);
    ops->count--;
    if (ops->on_freed) ops->on_freed(ops);
}

static void conn_close(net_ops_conn *hc) {
    if (hc->closing) return;
    hc->closing = true;
    hc->ops->open--;
    uv_close((uv_handle_t *)&hc->tcp, on_conn_closed);
}

static void on_conn_written(uv_write_t *req, int status) {
    (void)status;
    conn_close(req->data);
}

static void conn_respond(net_ops_conn *hc, int code, const char *reason, const char *type,
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
                 on_conn_written) < 0)
        conn_close(hc);
}

static void conn_text(net_ops_conn *hc, int code, const char *reason, const char *text,
                      bool head_only) {
    hc->body.len = 0;
    if (!net_buf_append(&hc->body, text, strlen(text))) {
        conn_close(hc);
        return;
    }
    conn_respond(hc, code, reason, "text/plain; charset=utf-8", head_only);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    net_ops_conn *hc = h->data;
    buf->base = hc->req + hc->len;
    buf->len = sizeof hc->req - hc->len;
}

/* A whole GET or HEAD of `path`. */
static void conn_route(net_ops_conn *hc, const char *path, bool head) {
    if (strcmp(path, "/healthz") == 0) {
        if (*hc->ops->draining)
            conn_text(hc, 503, "Service Unavailable", "draining\n", head);
        else
            conn_text(hc, 200, "OK", "ok\n", head);
    } else if (strcmp(path, "/metrics") == 0 || strcmp(path, "/rooms") == 0) {
        /* The figures live on the rooms' threads: answered once each has sent a copy, taken
         * after this request arrived (what a client just saw counted is in it). */
        hc->want_metrics = true;
        hc->rooms = path[1] == 'r';
        hc->head_only = head;
        uv_read_stop((uv_stream_t *)&hc->tcp);
        collect_start(hc->ops);
    } else {
        conn_text(hc, 404, "Not Found", "not found\n", head);
    }
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    net_ops_conn *hc = s->data;
    if (hc->closing || hc->responded) return;
    if (nread < 0) {
        conn_close(hc);
        return;
    }
    hc->len += (size_t)nread;
    char path[NET_HTTP_MAX_PATH];
    int head = 0;
    switch (net_http_parse(hc->req, hc->len, path, sizeof path, &head)) {
    case NET_HTTP_NEED_MORE:
        return;
    case NET_HTTP_BAD:
        conn_text(hc, 400, "Bad Request", "bad request\n", false);
        return;
    case NET_HTTP_METHOD:
        conn_text(hc, 405, "Method Not Allowed", "method not allowed\n", false);
        return;
    case NET_HTTP_TOO_LARGE:
        conn_text(hc, 431, "Request Header Fields Too Large", "request too large\n", false);
        return;
    case NET_HTTP_GET:
        break;
    }
    conn_route(hc, path, head);
}

/* ---- /metrics and /rooms across threads -------------------------------------------------- */

/* The collected copy of room `id`; NULL when none (not built yet, or gone since). */
static const net_room_sample *sample_of(const net_hosts *hs, uint32_t thread, net_room_id id) {
    const net_host_sample *smp = thread < hs->threads ? hs->collected[thread] : NULL;
    for (size_t j = 0; smp && j < smp->count; j++)
        if (smp->rooms[j].id == id) return &smp->rooms[j];
    return NULL;
}

static int player_order(const void *pa, const void *pb) {
    const net_room_player *a = pa, *b = pb;
    int by_room = strcmp(a->room, b->room);
    if (by_room != 0) return by_room;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* GET /rooms' players: the collection's, every thread's, by room name and then id (the threads
 * answer in any order). Each thread lists at most NET_ROOMS_JSON_PLAYERS of its own and the
 * renderer the first NET_ROOMS_JSON_PLAYERS of all; past that `players_truncated` says so. */
static bool render_players(const net_hosts *hs, net_buf *out) {
    size_t n = 0, total = 0;
    for (uint32_t i = 0; hs && i < hs->threads; i++) {
        if (!hs->collected[i]) continue;
        n += hs->collected[i]->player_count;
        total += hs->collected[i]->players_total;
    }
    net_room_player *all = malloc((n ? n : 1) * sizeof *all);
    if (!all) return false;
    size_t k = 0;
    for (uint32_t i = 0; hs && i < hs->threads; i++) {
        const net_host_sample *smp = hs->collected[i];
        if (!smp) continue;
        memcpy(all + k, smp->players, smp->player_count * sizeof *all);
        k += smp->player_count;
    }
    qsort(all, n, sizeof *all, player_order);
    bool ok = net_rooms_render_players(all, n, total, out);
    free(all);
    return ok;
}

/* GET /rooms: the directory's rooms (clients counted with the joins in flight), with the figures
 * of the collection just made, and who is in them. */
static bool render_rooms(net_ops *ops, net_buf *out) {
    size_t cap = (size_t)net_server_config(ops->srv)->max_rooms + 1u;
    net_room_info *infos = malloc(cap * sizeof *infos);
    if (!infos) return false;
    size_t n = net_rooms_list(ops->dir, infos, cap);
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) {
        const net_room_sample *r = sample_of(ops->hosts, infos[i].thread, infos[i].id);
        if (!r) continue;
        infos[i].bodies = r->static_bodies + r->moving_bodies;
        infos[i].tick = r->tick;
        infos[i].tick_p99_ms = 1000.0 * net_metrics_tick_quantile(&r->m, 0.99);
    }
    out->len = 0;
    bool ok = net_rooms_render_json(infos, n, out);
    free(infos);
    /* The players join the object: {..., "players": [...], ...}. */
    if (ok && out->len >= 2) {
        out->len -= 2; /* "}\n" */
        ok = net_buf_append(out, ", ", 2) && render_players(ops->hosts, out) &&
             net_buf_append(out, "}\n", 2);
    }
    /* With Agones, the GameServer's state and labels join the object: {..., "agones": {...}}. */
    if (ok && ops->agones && out->len >= 2) {
        out->len -= 2; /* "}\n" */
        ok = net_buf_append(out, ", ", 2) && net_agones_render_json(ops->agones, out) &&
             net_buf_append(out, "}\n", 2);
    }
    return ok;
}

/* Starts a collection for the requests that want one, unless one is in flight (those requests
 * then wait for the next: the one in flight may have been asked before they arrived). */
static void collect_start(net_ops *ops) {
    if (ops->collecting || !ops->hosts) return;
    bool wanted = false;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (h->want_metrics && !h->closing) {
            h->want_metrics = false;
            h->in_collection = true;
            wanted = true;
        }
    }
    if (!wanted) return;
    ops->collecting = net_hosts_collect(ops->hosts);
}

static int room_row_order(const void *pa, const void *pb) {
    const net_room_metrics *a = pa, *b = pb;
    bool da = strcmp(a->name, NET_ROOM_DEFAULT) == 0, db = strcmp(b->name, NET_ROOM_DEFAULT) == 0;
    if (da != db) return da ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The /metrics exposition from the collected copies: the daemon-wide series sum the front, every
 * room and every thread's retired counters; the collide_room_* families label the rooms. */
static bool render_metrics(net_ops *ops, net_buf *out) {
    net_hosts *hs = ops->hosts;
    size_t n = 0;
    for (uint32_t i = 0; i < hs->threads; i++)
        if (hs->collected[i]) n += hs->collected[i]->count;
    net_room_metrics *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return false;
    net_metrics front = ops->srv->metrics;
    front.overloaded = false;
    net_gauges g = {net_server_client_count(ops->srv), 0, 0, net_log_dropped_total(), 0, UINT64_MAX,
                    net_server_pending_count(ops->srv), 0, 0,
                    /* The budget every thread counts against, read as it is now, not collected. */
                    net_partial_held(ops->srv->partial), ops->srv->partial->max};
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
    if (ok && ops->agones) ok = net_agones_render_metrics(ops->agones, out);
    free(rows);
    return ok;
}

void net_ops_collected(net_ops *ops) {
    if (!ops->collecting) return;
    ops->collecting = false;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (!h->in_collection || h->closing) continue;
        h->in_collection = false;
        if (!(h->rooms ? render_rooms(ops, &h->body) : render_metrics(ops, &h->body))) {
            conn_close(h);
            continue;
        }
        conn_respond(h, 200, "OK",
                     h->rooms ? "application/json" : "text/plain; version=0.0.4; charset=utf-8",
                     h->head_only);
    }
    net_hosts_collect_free(ops->hosts);
    collect_start(ops); /* those that asked meanwhile */
}

/* ---- Admission and timeouts -------------------------------------------------------------- */

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
static bool evict_oldest_idle(net_ops *ops, const net_ops_conn *except,
                              const struct sockaddr_storage *from) {
    net_ops_conn *oldest = NULL; /* the list is newest first: the last match is the oldest */
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        if (h != except && !h->closing && !h->responded && (!from || same_host(&h->peer, from)))
            oldest = h;
    if (!oldest) return false;
    net_server_note_http_close(ops->srv, NET_HTTP_EVICTED);
    conn_close(oldest);
    return true;
}

/* At a cap, the newcomer is admitted and the oldest silent connection goes, rather than the
 * newcomer being refused: otherwise sockets that connect and never ask (reconnecting when cut)
 * hold every slot and /healthz goes unanswered. The per-address cap evicts within the address
 * first, so one host cannot push out everyone else's connections either. */
static bool admit(net_ops *ops, net_ops_conn *hc) {
    const net_config *cfg = net_server_config(ops->srv);
    uint32_t same = 0;
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        if (h != hc && !h->closing && same_host(&h->peer, &hc->peer)) same++;
    if (same >= cfg->http_max_per_address && !evict_oldest_idle(ops, hc, &hc->peer)) return false;
    if (ops->open > cfg->http_max_connections && !evict_oldest_idle(ops, hc, NULL)) return false;
    return true;
}

void net_ops_accept(net_ops *ops, uv_stream_t *listener) {
    net_ops_conn *hc = calloc(1, sizeof *hc);
    if (!hc) return;
    hc->ops = ops;
    uv_tcp_init(ops->loop, &hc->tcp);
    hc->tcp.data = hc;
    hc->next = ops->conns;
    if (hc->next) hc->next->prev = hc;
    ops->conns = hc;
    ops->count++;
    ops->open++;
    net_conn_set_clock(ops->srv);
    hc->start_us = net_server_now_us(ops->srv);
    if (uv_accept(listener, (uv_stream_t *)&hc->tcp) != 0) {
        conn_close(hc);
        return;
    }
    int len = sizeof hc->peer;
    uv_tcp_getpeername(&hc->tcp, (struct sockaddr *)&hc->peer, &len);
    if (!admit(ops, hc)) {
        net_server_note_http_close(ops->srv, NET_HTTP_REFUSED);
        conn_close(hc);
        return;
    }
    uv_read_start((uv_stream_t *)&hc->tcp, conn_alloc, conn_read);
}

void net_ops_sweep(net_ops *ops) {
    uint64_t timeout_us = (uint64_t)net_server_config(ops->srv)->http_timeout_ms * 1000u;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (!h->closing && net_server_now_us(ops->srv) - h->start_us > timeout_us) {
            if (!h->responded) net_server_note_http_close(ops->srv, NET_HTTP_TIMEOUT);
            conn_close(h);
        }
    }
}

void net_ops_close_all(net_ops *ops) {
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        conn_close(h);
}

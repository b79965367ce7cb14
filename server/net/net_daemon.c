#include "net_daemon.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "net_conn.h"
#include "net_http.h"
#include "net_log.h"
#include "net_tick.h"

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
    bool closing;                      /* uv_close called */
    net_daemon *d;                     /* owner */
    struct net_http_conn *prev, *next; /* in d->http_conns */
} net_http_conn;

struct net_daemon {
    uv_loop_t loop;                     /* the one event loop */
    net_server *srv;                    /* protocol state */
    uv_tcp_t listener;                  /* game port */
    uv_tcp_t http_listener;             /* metrics port (when http_on) */
    bool http_on;                       /* the HTTP listener is open */
    uv_timer_t tick_timer;              /* one-shot, re-armed against the schedule */
    uv_timer_t drain_timer;             /* bounds the drain */
    uv_prepare_t flush;                 /* writes dirty clients before the loop sleeps */
    uv_signal_t sigterm;                /* SIGTERM: drain */
    uv_signal_t sigint;                 /* SIGINT: drain */
    net_tick_schedule schedule;         /* when the world's steps are due (uv_hrtime) */
    net_conn_host conns;                /* the game connections' host: read buffer, count */
    uint32_t http_count;                /* HTTP connections not yet freed */
    uint32_t http_open;                 /* of those, not closing: what --http-max-connections caps
                                           (a closed slot is free at once, not after uv_close's
                                           callback one loop turn later) */
    net_http_conn *http_conns;          /* open HTTP connections */
    bool draining;                      /* shutdown started */
    bool finished;                      /* every long-lived handle is closing */
    uint8_t read_chunk[NET_READ_CHUNK]; /* shared read buffer (reads are handled one at a time) */
};

static void maybe_finish(net_daemon *d);
static void http_close(net_http_conn *hc);

static void set_clock(net_daemon *d) { net_conn_set_clock(d->srv); }

/* ---- Game connections ---------------------------------------------------------------------- */

static void on_conn_freed(net_conn_host *host) { maybe_finish(host->data); }

static void on_flush(uv_prepare_t *h) {
    net_daemon *d = h->data;
    bool flushed = net_conn_flush(d->srv);
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
    net_conn_accept(&d->conns, d->srv, server);
}

/* ---- The tick -------------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t) {
    net_daemon *d = t->data;
    net_tick_due due = net_tick_take(&d->schedule, uv_hrtime());
    if (due.run > 0 || due.skipped > 0) {
        set_clock(d);
        uint64_t t0 = uv_hrtime();
        net_server_tick(d->srv, due.run);
        net_server_note_tick(d->srv, due.run, due.skipped, due.lag_s,
                             (double)(uv_hrtime() - t0) * 1e-9);

        /* HTTP connections that never finish their request. */
        for (net_http_conn *h = d->http_conns; h; h = h->next) {
            if (!h->closing && net_server_now_us(d->srv) - h->start_us >
                                   (uint64_t)net_server_config(d->srv)->http_timeout_ms * 1000u) {
                if (!h->responded) net_server_note_http_close(d->srv, NET_HTTP_TIMEOUT);
                http_close(h);
            }
        }
    }
    uv_update_time(&d->loop);
    uv_timer_start(t, on_tick, net_tick_wait_ms(&d->schedule, uv_hrtime()), 0);
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
    } else if (strcmp(path, "/metrics") == 0) {
        if (!net_server_render_metrics(d->srv, &hc->body)) {
            http_close(hc);
            return;
        }
        http_respond(hc, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", head);
    } else if (strcmp(path, "/rooms") == 0) {
        if (!net_server_render_rooms(d->srv, &hc->body)) {
            http_close(hc);
            return;
        }
        http_respond(hc, 200, "OK", "application/json", head);
    } else {
        http_text(hc, 404, "Not Found", "not found\n", head);
    }
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

static void maybe_finish(net_daemon *d) {
    if (!d->draining || d->finished || d->conns.conn_count > 0) return;
    d->finished = true;
    for (net_http_conn *h = d->http_conns; h; h = h->next)
        http_close(h);
    if (d->http_on) uv_close((uv_handle_t *)&d->http_listener, NULL);
    uv_close((uv_handle_t *)&d->tick_timer, NULL);
    uv_close((uv_handle_t *)&d->drain_timer, NULL);
    uv_close((uv_handle_t *)&d->flush, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    net_log(NET_LOG_INFO, "drained", 0, NULL, "all clients closed");
}

static void on_drain_timeout(uv_timer_t *t) {
    net_daemon *d = t->data;
    /* Clients that would not read their Goodbye: cut them now. */
    uint32_t left = net_server_client_count(d->srv);
    if (left > 0)
        net_log(NET_LOG_WARN, "drain_timeout", 0, NULL, "%u clients not drained within %u ms: cut",
                left, net_server_config(d->srv)->drain_timeout_ms);
    net_server_kill_all(d->srv);
}

static void on_signal(uv_signal_t *s, int signum) {
    net_daemon *d = s->data;
    if (d->draining) return;
    d->draining = true;
    net_log(NET_LOG_INFO, "shutdown", 0, NULL, "signal %d: draining %u clients", signum,
            net_server_client_count(d->srv));
    uv_close((uv_handle_t *)&d->listener, NULL); /* stop accepting */
    uv_timer_stop(&d->tick_timer);
    set_clock(d);
    net_server_drain(d->srv);
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

int net_daemon_run(const net_config *cfg, world *w, const vec2 *spawn_points,
                   size_t spawn_point_count) {
    net_daemon *d = calloc(1, sizeof *d);
    if (!d) return 1;
    int exit_code = 0;
    d->srv = net_server_create(cfg, w);
    if (!d->srv || uv_loop_init(&d->loop) != 0) {
        net_server_destroy(d->srv);
        free(d);
        return 1;
    }
    net_server_set_spawn_points(d->srv, spawn_points, spawn_point_count);
    d->loop.data = d;
    d->conns.loop = &d->loop;
    d->conns.read_buf = d->read_chunk;
    d->conns.read_buf_size = sizeof d->read_chunk;
    d->conns.on_freed = on_conn_freed;
    d->conns.data = d;
    uint16_t game_port = 0, http_port = 0;
    const char *http_bind = cfg->http_bind[0] ? cfg->http_bind : cfg->bind; /* default: --bind */
    bool listening =
        listen_on(d, &d->listener, cfg->bind, cfg->port, on_connection, &game_port) == 0;
    if (listening && cfg->http_port) {
        d->http_on = true;
        listening = listen_on(d, &d->http_listener, http_bind, cfg->http_port, on_http_connection,
                              &http_port) == 0;
    }
    uv_timer_init(&d->loop, &d->tick_timer);
    uv_timer_init(&d->loop, &d->drain_timer);
    uv_prepare_init(&d->loop, &d->flush);
    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    d->tick_timer.data = d->drain_timer.data = d->flush.data = d->sigterm.data = d->sigint.data = d;
    if (!listening) {
        exit_code = 1;
        d->draining = true;
        uv_close((uv_handle_t *)&d->listener, NULL);
        maybe_finish(d);
    } else {
        d->schedule = net_tick_start((double)cfg->tick_rate_hz, uv_hrtime());
        uv_timer_start(&d->tick_timer, on_tick, d->schedule.period_ns / 1000000u, 0);
        uv_prepare_start(&d->flush, on_flush);
        uv_signal_start(&d->sigterm, on_signal, SIGTERM);
        uv_signal_start(&d->sigint, on_signal, SIGINT);
        world_stats ws;
        world_get_stats(w, &ws);
        char kv[224];
        snprintf(kv, sizeof kv, "bind=%s game_port=%u http_bind=%s http_port=%u", cfg->bind,
                 game_port, http_bind, http_port);
        net_log_kv(NET_LOG_INFO, "listening", kv,
                   "tick_rate=%g statics=%zu capacity=%zu version=%s", (double)cfg->tick_rate_hz,
                   ws.static_bodies, ws.capacity, COLLIDE_VERSION);
    }
    uv_run(&d->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&d->loop);
    if (rc != 0) {
        net_log(NET_LOG_ERROR, "loop_close", 0, NULL, "uv_loop_close: %s", uv_strerror(rc));
        exit_code = 1;
    }
    net_server_destroy(d->srv);
    free(d);
    return exit_code;
}

#include "net_daemon.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "net_agones.h"
#include "net_conn.h"
#include "net_session.h"
#include "net_host.h"
#include "net_log.h"
#include "net_ops.h"
#include "net_tick.h"
#include "net_udp_host.h"

#define NET_READ_CHUNK 65536u /* one shared read buffer, handed to every read */
typedef struct net_daemon net_daemon;

struct net_daemon {
    uv_loop_t loop;             /* the front's loop */
    net_server *srv;            /* the front: connections until their Hello (no world) */
    net_rooms *dir;             /* the room directory, shared with the workers */
    net_hosts hosts;            /* the worker threads that own the rooms */
    bool hosts_on;              /* the workers were started */
    uv_tcp_t listener;          /* game port */
    uv_tcp_t http_listener;     /* ops port (when http_on) */
    uv_tcp_t ws_listener;       /* WebSocket port (when ws_on) */
    bool ws_on;                 /* the WebSocket listener's handle was initialised */
    bool http_on;               /* the HTTP listener is open */
    net_udp *udp;               /* the UDP port's ENet host (NULL: off) */
    uv_timer_t housekeeping;    /* the front's timeouts (hello, pending, HTTP) */
    uv_timer_t drain_timer;     /* bounds the front's part of the drain */
    uv_prepare_t flush;         /* writes dirty clients before the loop sleeps */
    uv_signal_t sigterm;        /* SIGTERM: drain */
    uv_signal_t sigint;         /* SIGINT: drain */
    uv_async_t wake;            /* the workers: drained, or figures collected */
    net_conn_host conns;        /* the front's connections: read buffer, count */
    net_ops ops;                /* the ops port's connections (net_ops.h) */
    bool draining;              /* shutdown started */
    bool finished;              /* every long-lived handle is closing */
    net_agones *agones;         /* the Agones SDK client (NULL: off) */
    net_partial_budget partial; /* --max-partial-bytes: the front and every room count here */
    bool agones_shutting;       /* Shutdown was asked after the drain */
    bool agones_done;           /* ... and is over (or the client is closed) */
    uint8_t read_chunk[NET_READ_CHUNK]; /* shared read buffer (reads are handled one at a time) */
};

static void maybe_finish(net_daemon *d);
static void on_agones_shut_down(void *ctx);

static void set_clock(net_daemon *d) { net_conn_set_clock(d->srv); }

/* ---- Game connections ---------------------------------------------------------------------- */

static void on_conn_freed(net_conn_host *host) { maybe_finish(host->data); }

static void on_udp_idle(void *ctx) { maybe_finish(ctx); }

static void on_flush(uv_prepare_t *h) {
    net_daemon *d = h->data;
    bool flushed = net_conn_flush(d->srv); /* hand-offs, refusals, pending clients' errors */
    net_udp_flush(d->udp);                 /* what that queued for UDP peers, sent now */
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
static void on_hello(net_server *srv, net_client *c, const net_hello_request *t, void *ctx) {
    net_daemon *d = ctx;
    net_room_ref ref;
    net_room_status st = net_rooms_join(d->dir, t->room, t->room_len, t->grant.admin, &ref);
    if (st != NET_ROOM_OK) {
        /* Logged there for the two the single world logged (server full, at capacity). */
        if (st != NET_ROOM_SERVER_FULL && st != NET_ROOM_AT_CAPACITY)
            net_log(NET_LOG_INFO, "client_refused", c->id, c->addr, "room=%.*s: %s",
                    (int)t->room_len, t->room, net_room_status_str(st));
        net_session_refuse_room(srv, c, t->request_id, (int)st);
        return;
    }
    if (ref.created)
        net_log(NET_LOG_INFO, "room_create", 0, NULL, "room=%.*s auto=1 thread=%u",
                (int)t->room_len, t->room, ref.thread);
    net_hello_placement p = {.room_id = ref.id,
                             .thread = ref.thread,
                             .request_id = t->request_id,
                             .grant = t->grant,
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
    net_ops_sweep(&d->ops);   /* HTTP connections that never finish their request */
}

/* ---- The ops port (net_ops.h) ---------------------------------------------------------------- */

static void on_ops_freed(net_ops *ops) { maybe_finish(ops->data); }

static void on_http_connection(uv_stream_t *server, int status) {
    net_daemon *d = server->data;
    if (status < 0) return;
    net_ops_accept(&d->ops, server);
}

/* The workers woke the front: a collection complete, or a drain progressed. */
static void on_wake(uv_async_t *a) {
    net_daemon *d = a->data;
    uv_mutex_lock(&d->hosts.lock);
    bool collected = d->ops.collecting && d->hosts.collect_left == 0;
    bool drained = d->hosts.drained >= d->hosts.threads;
    uv_mutex_unlock(&d->hosts.lock);
    if (collected) net_ops_collected(&d->ops);
    if (drained && d->draining) maybe_finish(d);
}

/* ---- Lifecycle ---------------------------------------------------------------------------------
 */

/* The end of the drain: the front's own connections are gone and every worker has said Goodbye
 * to its clients and closed its rooms. The workers are joined (quickly: nothing is left on their
 * loops) and the front's handles closed, so its loop ends. */
static void maybe_finish(net_daemon *d) {
    if (!d->draining || d->finished || d->conns.conn_count > 0) return;
    if (net_udp_peer_count(d->udp) > 0) return; /* their disconnects still on the wire */
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
    net_ops_close_all(&d->ops);
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
        d->ops.hosts = NULL;
    }
    net_udp_close(d->udp); /* after the workers: nothing posts to its outbox any more */
    d->udp = NULL;
    d->hosts.udp_sink = (net_udp_sink){NULL, NULL};
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
    net_udp_cut_all(d->udp);
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
    net_udp_drain(d->udp); /* new peers refused */
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

/* Connects the front's parts to one another and to the loop: the hooks of the server, the game
 * connections and the ops port, the handles, the Agones client and the workers. */
static void wire(net_daemon *d, const net_config *cfg, size_t statics) {
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
    d->hosts.cfg = *cfg;
    d->hosts.dir = d->dir;
    d->hosts.front_wake = &d->wake;
    d->hosts.default_statics = statics;
    if (cfg->agones) d->agones = start_agones(d, cfg); /* before the threads: curl_global_init */
    d->hosts_on = net_hosts_start(&d->hosts);
    d->ops.loop = &d->loop;
    d->ops.srv = d->srv;
    d->ops.dir = d->dir;
    d->ops.hosts = d->hosts_on ? &d->hosts : NULL;
    d->ops.agones = d->agones;
    d->ops.draining = &d->draining;
    d->ops.on_freed = on_ops_freed;
    d->ops.data = d;
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
    net_partial_init(&d->partial, cfg.max_partial_bytes);
    cfg.partial_budget = &d->partial; /* every server made from cfg (rooms: hosts.cfg) shares it */
    if (cfg.threads == 0) cfg.threads = (uint32_t)uv_available_parallelism();
    if (cfg.threads == 0) cfg.threads = 1;
    net_rooms_config rc = {cfg.threads, cfg.max_rooms, cfg.max_clients, cfg.room_auto_create, text};
    d->dir = net_rooms_create(&rc);
    net_world_text_unref(text); /* the directory holds its own reference */
    d->srv = d->dir ? net_server_create(&cfg, NULL) : NULL;
    if (!d->srv || uv_loop_init(&d->loop) != 0) {
        net_server_destroy(d->srv);
        net_rooms_destroy(d->dir);
        net_config_wipe(&cfg);
        free(d);
        return 1;
    }
    int exit_code = 0;
    wire(d, &cfg, statics);

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
    if (listening && cfg.udp_port) {
        d->udp = net_udp_start(&d->loop, &cfg, d->srv, &d->hosts, on_udp_idle, d);
        if (d->udp) d->hosts.udp_sink = net_udp_sink_of(d->udp);
        listening = d->udp != NULL;
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
        snprintf(kv, sizeof kv,
                 "bind=%s game_port=%u http_bind=%s http_port=%u ws_port=%u udp_port=%u", cfg.bind,
                 game_port, http_bind, http_port, ws_port, d->udp ? cfg.udp_port : 0u);
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
    net_config_wipe(&d->hosts.cfg); /* the secrets leave memory with their last copies */
    net_config_wipe(&cfg);
    free(d);
    return exit_code;
}

#include "net_server.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "net_log.h"
#include "net_rooms.h"

/* ---- Server lifetime and clock ------------------------------------------------------------- */

net_server *net_server_registry_create(const net_config *cfg, world *w) {
    COLLIDE_ASSERT(cfg != NULL);
    if (!cfg) return NULL;
    net_server *srv = calloc(1, sizeof *srv);
    if (!srv) return NULL;
    srv->cfg = *cfg;
    srv->world = w;
    srv->next_client_id = 1;
    /* Any per-process value an attacker does not choose will do: it only spreads the chains. */
    srv->pending_hash_seed = (uint64_t)(uintptr_t)srv ^ (cfg->max_pending * 0x9e3779b97f4a7c15ull);
    /* Front mode (w NULL) holds connections until their Hello only: no snapshots. */
    /* contact and sensor events ride in the snapshots (PROTOCOL.md 1.1) */
    if (w) world_set_events(w, true);
    uint32_t history_ticks = net_config_history_ticks(cfg);
    if ((w && !world_set_history(w, history_ticks)) ||
        !net_arena_init(&srv->arena, cfg->max_frame)) {
        net_server_registry_destroy(srv);
        return NULL;
    }
    srv->pb_alloc = &srv->arena.pb;
    net_partial_init(&srv->own_partial, cfg->max_partial_bytes);
    srv->partial = cfg->partial_budget ? cfg->partial_budget : &srv->own_partial;
    return srv;
}

void net_server_registry_destroy(net_server *srv) {
    if (!srv) return;
    COLLIDE_ASSERT(srv->client_count == 0);
    COLLIDE_ASSERT(srv->pending_addr_count == 0);
    COLLIDE_ASSERT(!srv->snapshot && !srv->query && !srv->events);
    free(srv->clients);
    free(srv->dirty);
    free(srv->pending_buckets);
    net_arena_free(&srv->arena);
    net_config_wipe(&srv->cfg); /* every server holds a copy of the secrets */
    free(srv);
}

void net_server_set_spawn_points(net_server *srv, const vec2 *points, size_t count) {
    COLLIDE_ASSERT(points != NULL || count == 0);
    srv->spawn_points = count ? points : NULL;
    srv->spawn_point_count = points ? count : 0;
    srv->next_spawn_point = 0;
}

void net_server_set_clock(net_server *srv, uint64_t now_us, uint64_t wall_us) {
    srv->now_us = now_us;
    srv->wall_us = wall_us;
}

uint64_t net_server_now_us(const net_server *srv) { return srv->now_us; }

const net_config *net_server_config(const net_server *srv) { return &srv->cfg; }

uint32_t net_server_client_count(const net_server *srv) { return srv->client_count; }

uint32_t net_server_pending_count(const net_server *srv) { return srv->pending_count; }

/* The detector's side of net_server_note_tick (see net_server.h). */
static void overload_note(net_server *srv, double behind_seconds) {
    net_overload *o = &srv->overload;
    uint64_t window_us = (uint64_t)srv->cfg.overload_window_ms * 1000u;
    if (window_us == 0) return;
    uint64_t slot_us = window_us / NET_OVERLOAD_SLOTS;
    uint64_t slot = srv->now_us / slot_us;
    /* Slots that fell out of the window since the last tick start empty again. */
    for (uint64_t s = o->slot + 1; s <= slot && s <= o->slot + NET_OVERLOAD_SLOTS; s++)
        o->behind_us[s % NET_OVERLOAD_SLOTS] = 0;
    if (slot > o->slot) o->slot = slot;
    uint64_t behind_us = behind_seconds > 0 ? (uint64_t)(behind_seconds * 1e6) : 0;
    if (behind_us > window_us / 4u) behind_us = window_us / 4u;
    o->behind_us[o->slot % NET_OVERLOAD_SLOTS] += behind_us;
    uint64_t sum = 0;
    for (int i = 0; i < NET_OVERLOAD_SLOTS; i++)
        sum += o->behind_us[i];
    if (!srv->metrics.overloaded && sum >= window_us / 2u) {
        srv->metrics.overloaded = true;
        net_log(NET_LOG_WARN, "overloaded", 0, NULL,
                "behind the tick schedule %llu ms of the last %u ms: new Hellos refused",
                (unsigned long long)(sum / 1000u), srv->cfg.overload_window_ms);
    } else if (srv->metrics.overloaded && sum <= window_us / 10u) {
        srv->metrics.overloaded = false;
        net_log(NET_LOG_INFO, "overload_cleared", 0, NULL,
                "behind the tick schedule %llu ms of the last %u ms: Hellos welcome again",
                (unsigned long long)(sum / 1000u), srv->cfg.overload_window_ms);
    }
}

void net_server_note_tick(net_server *srv, uint64_t steps_run, uint64_t skipped_steps,
                          double lag_seconds, double seconds) {
    srv->metrics.ticks_skipped_total += skipped_steps;
    if (steps_run > 1) { /* a catch-up: every step it ran is late, and they share one snapshot */
        srv->metrics.steps_late_total += steps_run;
        srv->metrics.steps_coalesced_total += steps_run - 1;
    }
    net_metrics_observe_tick(&srv->metrics, seconds);
    net_metrics_observe_lag(&srv->metrics, lag_seconds);
    overload_note(srv, lag_seconds + seconds - 1.0 / (double)srv->cfg.tick_rate_hz);
}

bool net_server_refuse_hello_at_capacity(net_server *srv, net_client *c, uint32_t rid) {
    if (!net_server_overloaded(srv)) return false;
    net_server_refuse_at_capacity(srv, c, rid);
    return true;
}

void net_server_refuse_at_capacity(net_server *srv, net_client *c, uint32_t rid) {
    srv->metrics.capacity_refusals_total++;
    net_overload *o = &srv->overload;
    o->refused_unlogged++;
    if (o->last_log_us == 0 || srv->now_us - o->last_log_us >= NET_CAPACITY_LOG_US) {
        net_log(NET_LOG_WARN, "capacity_refused", c->id, c->addr,
                "at capacity: %llu Hello(s) refused since the last line",
                (unsigned long long)o->refused_unlogged);
        o->refused_unlogged = 0;
        o->last_log_us = srv->now_us ? srv->now_us : 1u;
    }
    net_server_send_error(srv, c, rid, NET_ERR(LIMIT_EXCEEDED), true, "at capacity");
    c->reason = NET_DISC_SERVER_FULL;
}

void net_server_note_http_close(net_server *srv, net_http_close_reason reason) {
    if ((unsigned)reason < NET_HTTP_CLOSE_REASON_COUNT) srv->metrics.http_closed_total[reason]++;
}

bool net_server_render_metrics(const net_server *srv, net_buf *out) {
    world_stats ws = {0};
    if (srv->world) world_get_stats(srv->world, &ws); /* front mode has no world */
    net_gauges g = {srv->client_count,  ws.static_bodies,
                    ws.moving_bodies,   net_log_dropped_total(),
                    ws.slots_retired,   ws.ids_left,
                    srv->pending_count, ws.history_bytes,
                    ws.history_records, net_partial_held(srv->partial),
                    srv->partial->max};
    /* One room today, `default`, holding every counter: the daemon-wide series are its own. */
    net_room_metrics room = {NET_ROOM_DEFAULT, &srv->metrics,
                             srv->client_count - srv->pending_count, ws.static_bodies,
                             ws.moving_bodies};
    out->len = 0;
    return net_metrics_render_rooms(&room, 1, NULL, &g, out);
}

bool net_server_render_rooms(const net_server *srv, net_buf *out) {
    world_stats ws;
    world_get_stats(srv->world, &ws);
    net_room_info room = {.name = NET_ROOM_DEFAULT,
                          .clients = srv->client_count - srv->pending_count,
                          .bodies = ws.static_bodies + ws.moving_bodies,
                          .tick = world_tick(srv->world),
                          .tick_p99_ms = 1e3 * net_metrics_tick_quantile(&srv->metrics, 0.99)};
    out->len = 0;
    return net_rooms_render_json(&room, 1, out);
}

static void pending_unlink(net_server *srv, net_client *c);

/* ---- The dirty list, kills and closing ----------------------------------------------------- */

void net_server_mark_dirty(net_server *srv, net_client *c) {
    if (c->dirty || c->index == UINT32_MAX) return;
    COLLIDE_ASSERT(srv->dirty_count < srv->client_count);
    c->dirty = true;
    c->dirty_index = srv->dirty_count;
    srv->dirty[srv->dirty_count++] = c;
}

net_client *net_server_pop_dirty(net_server *srv) {
    if (srv->dirty_count == 0) return NULL;
    net_client *c = srv->dirty[--srv->dirty_count];
    c->dirty = false;
    return c;
}

void net_server_kill(net_server *srv, net_client *c, net_disconnect_reason reason) {
    COLLIDE_ASSERT((unsigned)reason < NET_DISC_REASON_COUNT);
    if (!c->kill) {
        c->kill = true;
        c->reason = reason;
    }
    pending_unlink(srv, c); /* gone at the next flush: its pending slot is free now */
    net_server_mark_dirty(srv, c);
}

void net_server_kill_all(net_server *srv) {
    for (uint32_t i = srv->client_count; i > 0; i--) {
        net_client *c = srv->clients[i - 1];
        net_server_kill(srv, c, c->reason);
    }
}

void net_server_enter_closing(net_server *srv, net_client *c, net_disconnect_reason reason) {
    if (c->state == NET_CLIENT_CLOSING) return;
    c->state = NET_CLIENT_CLOSING;
    c->reason = reason;
    c->closing_us = srv->now_us;
    net_server_mark_dirty(srv, c);
    c->transport->on_closing(srv, c); /* e.g. a WebSocket's close frame, after what is queued */
}

/* ---- Output -------------------------------------------------------------------------------- */

bool net_server_over_hard_limit(net_server *srv, net_client *c) {
    size_t queued = net_client_queued(c);
    if (queued <= srv->cfg.max_queued_bytes) return false;
    if (!c->kill) {
        srv->metrics.slow_client_disconnects_total++;
        net_log(NET_LOG_WARN, "slow_client_disconnect", c->id, c->addr,
                "%zu bytes queued, limit %zu", queued, srv->cfg.max_queued_bytes);
        net_server_kill(srv, c, NET_DISC_SLOW_CLIENT);
    }
    return true;
}

/* Call before appending to c->out: an empty queue starts aging now (net_client_lag_us). */
static inline void net_client_note_queue_start(const net_server *srv, net_client *c) {
    if (c->out.len == 0) c->out_since_us = srv->now_us;
}

bool net_server_append_raw(net_server *srv, net_client *c, const void *data, size_t len) {
    if (c->kill) return false;
    if (!net_buf_append(&c->out, data, len)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    net_client_note_queue_start(srv, c);
    net_server_mark_dirty(srv, c);
    return !net_server_over_hard_limit(srv, c);
}

bool net_server_append_page(net_server *srv, net_client *c, const void *data, size_t len) {
    if (c->kill) return false;
    c->page_bytes += len;
    if (!net_buf_append(&c->out, data, len)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    net_client_note_queue_start(srv, c);
    net_server_mark_dirty(srv, c);
    return true;
}

size_t net_client_frame_prefix(net_server *srv, const net_client *c, size_t len,
                               uint8_t out[NET_MAX_FRAME_PREFIX]) {
    srv->metrics.frames_out_total++;
    srv->metrics.transports[c->transport->id].frames_out++;
    return c->transport->frame_prefix(len, out);
}

bool net_server_append_with(net_server *srv, net_client *c, size_t size, net_msg_write write,
                            const void *ctx) {
    if (c->kill) return false; /* being closed: whatever it is owed will never be read */
    uint8_t prefix[NET_MAX_FRAME_PREFIX];
    size_t plen = net_client_frame_prefix(srv, c, size, prefix);
    if (!net_buf_reserve(&c->out, plen + size)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    net_client_note_queue_start(srv, c);
    memcpy(c->out.data + c->out.len, prefix, plen);
    write(ctx, c->out.data + c->out.len + plen, size);
    c->out.len += plen + size;
    net_server_mark_dirty(srv, c);
    return !net_server_over_hard_limit(srv, c);
}

static void pack_message(const void *m, uint8_t *out, size_t size) {
    size_t packed = collide__v1__server_message__pack(m, out);
    COLLIDE_ASSERT(packed == size);
    (void)packed;
    (void)size;
}

bool net_server_append(net_server *srv, net_client *c, const net_server_msg *m) {
    if (c->kill) return false; /* before sizing it: nothing to pack for a client being closed */
    size_t size = collide__v1__server_message__get_packed_size(m);
    return net_server_append_with(srv, c, size, pack_message, m);
}

void net_server_send_error(net_server *srv, net_client *c, uint32_t request_id,
                           Collide__V1__ErrorCode code, bool fatal, const char *fmt, ...) {
    char text[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    Collide__V1__Error err = COLLIDE__V1__ERROR__INIT;
    err.code = code;
    err.message = text;
    err.fatal = fatal;
    err.index = srv->error_index;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR;
    m.error = &err;
    if ((unsigned)code < NET_ERROR_CODE_COUNT) srv->metrics.errors_total[code]++;
    net_server_append(srv, c, &m);
    if (fatal) net_server_enter_closing(srv, c, NET_DISC_FATAL_ERROR);
}

net_io net_client_next_io(const net_client *c) {
    if (c->kill) return NET_IO_CUT;
    if (c->out.len > 0) return NET_IO_WRITE;
    if (c->handed_off) return NET_IO_HAND_OFF;
    return c->state == NET_CLIENT_CLOSING ? NET_IO_CLOSE : NET_IO_NONE;
}

void net_client_take_output(net_client *c, net_buf *into) {
    COLLIDE_ASSERT(into->len == 0 && c->inflight == 0);
    net_buf tmp = *into; /* empty: swap buffers, no copy */
    *into = c->out;
    c->out = tmp;
    c->inflight = into->len;
    c->inflight_since_us = c->out_since_us;
    c->inflight_snapshots = c->out_snapshots;
    c->out_snapshots = 0;
}

void net_client_written(net_server *srv, net_client *c) {
    srv->metrics.bytes_out_total += c->inflight;
    srv->metrics.transports[c->transport->id].bytes_out += c->inflight;
    srv->metrics.snapshots_sent_total += c->inflight_snapshots;
    c->inflight = 0;
    c->inflight_snapshots = 0;
    if (net_client_next_io(c) != NET_IO_NONE) net_server_mark_dirty(srv, c);
}

/* ---- Admission: connections not yet past Hello ----------------------------------------------- */

/* Pending connections of one IP: their count (--max-pending-per-address) and their FIFO, so the
 * oldest of an address is found in O(1). An entry lives while the IP has a pending client. */
typedef struct net_pending_addr {
    uint8_t ip[NET_IP_KEY_BYTES];
    uint32_t count;                /* pending clients from ip */
    net_client *head, *tail;       /* oldest first, linked through addr_prev/addr_next */
    struct net_pending_addr *next; /* hash chain */
} net_pending_addr;

bool net_ip_key(const char *addr, uint8_t key[NET_IP_KEY_BYTES]) {
    memset(key, 0, NET_IP_KEY_BYTES);
    if (!addr) return false;
    char host[64];
    const char *start = addr, *end = NULL;
    if (addr[0] == '[') { /* "[ipv6]:port" */
        start = addr + 1;
        end = strchr(start, ']');
    } else {
        const char *colon = strchr(addr, ':');
        /* one colon: "ipv4:port"; none or several: no port (a bare IPv4 or IPv6 literal) */
        end = colon && !strchr(colon + 1, ':') ? colon : addr + strlen(addr);
    }
    if (!end || (size_t)(end - start) >= sizeof host) return false;
    memcpy(host, start, (size_t)(end - start));
    host[end - start] = '\0';
    char *zone = strchr(host, '%'); /* fe80::1%eth0: the zone is not part of the address */
    if (zone) *zone = '\0';
    struct in_addr v4;
    if (inet_pton(AF_INET, host, &v4) == 1) {
        key[10] = key[11] = 0xff; /* ::ffff:a.b.c.d, what an IPv4 peer is on a dual-stack socket */
        memcpy(key + 12, &v4, 4);
        return true;
    }
    struct in6_addr v6;
    if (inet_pton(AF_INET6, host, &v6) == 1) {
        memcpy(key, &v6, NET_IP_KEY_BYTES);
        return true;
    }
    return false;
}

static uint64_t mix64(uint64_t x) { /* splitmix64's finalizer */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint32_t ip_bucket(const net_server *srv, const uint8_t ip[NET_IP_KEY_BYTES]) {
    uint64_t a, b;
    memcpy(&a, ip, 8);
    memcpy(&b, ip + 8, 8);
    return (uint32_t)mix64(mix64(srv->pending_hash_seed ^ a) ^ b) & (srv->pending_bucket_count - 1);
}

/* Doubles the chains once they average one entry (64 at first use). Out of memory: the chains
 * only get longer, bounded by --max-pending entries in all. */
static void pending_buckets_grow(net_server *srv) {
    uint32_t n = srv->pending_bucket_count ? srv->pending_bucket_count * 2u : 64u;
    net_pending_addr **b = calloc(n, sizeof *b);
    if (!b) return;
    uint32_t old_n = srv->pending_bucket_count;
    net_pending_addr **old = srv->pending_buckets;
    srv->pending_buckets = b;
    srv->pending_bucket_count = n;
    for (uint32_t i = 0; i < old_n; i++) {
        for (net_pending_addr *e = old[i], *next; e; e = next) {
            next = e->next;
            uint32_t k = ip_bucket(srv, e->ip);
            e->next = b[k];
            b[k] = e;
        }
    }
    free(old);
}

/* The entry of ip, created (count 0) when absent; NULL when out of memory. */
static net_pending_addr *pending_addr_get(net_server *srv, const uint8_t ip[NET_IP_KEY_BYTES]) {
    if (srv->pending_addr_count >= srv->pending_bucket_count) pending_buckets_grow(srv);
    if (srv->pending_bucket_count == 0) return NULL;
    uint32_t k = ip_bucket(srv, ip);
    for (net_pending_addr *e = srv->pending_buckets[k]; e; e = e->next)
        if (memcmp(e->ip, ip, NET_IP_KEY_BYTES) == 0) return e;
    net_pending_addr *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    memcpy(e->ip, ip, NET_IP_KEY_BYTES);
    e->next = srv->pending_buckets[k];
    srv->pending_buckets[k] = e;
    srv->pending_addr_count++;
    return e;
}

static void pending_addr_drop(net_server *srv, net_pending_addr *e) {
    net_pending_addr **p = &srv->pending_buckets[ip_bucket(srv, e->ip)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    srv->pending_addr_count--;
    free(e);
}

/* Appends c (the newest) to both FIFOs of its entry e. */
static void pending_link(net_server *srv, net_client *c, net_pending_addr *e) {
    c->admission.pending = true;
    c->admission.pending_addr = e;
    c->admission.pending_prev = srv->pending_tail;
    c->admission.pending_next = NULL;
    if (srv->pending_tail)
        srv->pending_tail->admission.pending_next = c;
    else
        srv->pending_head = c;
    srv->pending_tail = c;
    srv->pending_count++;
    c->admission.addr_prev = e->tail;
    c->admission.addr_next = NULL;
    if (e->tail)
        e->tail->admission.addr_next = c;
    else
        e->head = c;
    e->tail = c;
    e->count++;
}

static void pending_unlink(net_server *srv, net_client *c) {
    if (!c->admission.pending) return;
    c->admission.pending = false;
    if (c->admission.pending_prev)
        c->admission.pending_prev->admission.pending_next = c->admission.pending_next;
    else
        srv->pending_head = c->admission.pending_next;
    if (c->admission.pending_next)
        c->admission.pending_next->admission.pending_prev = c->admission.pending_prev;
    else
        srv->pending_tail = c->admission.pending_prev;
    srv->pending_count--;
    net_pending_addr *e = c->admission.pending_addr;
    if (c->admission.addr_prev)
        c->admission.addr_prev->admission.addr_next = c->admission.addr_next;
    else
        e->head = c->admission.addr_next;
    if (c->admission.addr_next)
        c->admission.addr_next->admission.addr_prev = c->admission.addr_prev;
    else
        e->tail = c->admission.addr_prev;
    c->admission.pending_prev = c->admission.pending_next = c->admission.addr_prev =
        c->admission.addr_next = NULL;
    c->admission.pending_addr = NULL;
    if (--e->count == 0) pending_addr_drop(srv, e);
}

/* Whether a pending connection is past the grace in which its Hello may still be unread. */
static bool pending_aged(const net_server *srv, const net_client *c) {
    return srv->now_us - c->connected_us >= NET_PENDING_GRACE_US;
}

/* A newer connection needs the slot of `victim`, the oldest silent one (of its IP, or of all). */
static void pending_evict(net_server *srv, net_client *victim, const char *cap, uint32_t limit) {
    net_log(NET_LOG_DEBUG, "pending_evicted", victim->id, victim->addr,
            "no Hello after %llu ms; %s pending cap %u reached",
            (unsigned long long)((srv->now_us - victim->connected_us) / 1000u), cap, limit);
    net_server_kill(srv, victim, NET_DISC_PENDING_EVICTED);
}

bool net_server_admit_session(net_server *srv, net_client *c, uint32_t request_id) {
    pending_unlink(srv, c);
    if (srv->admitted_count >= srv->cfg.max_clients) {
        c->admission.refused = true;
        srv->refusing++;
        net_log(NET_LOG_WARN, "client_refused", c->id, c->addr, "max clients (%u) reached",
                srv->cfg.max_clients);
        if (srv->refusing > NET_MAX_REFUSING) {
            net_server_kill(srv, c, NET_DISC_SERVER_FULL);
        } else {
            net_server_send_error(srv, c, request_id, NET_ERR(LIMIT_EXCEEDED), true,
                                  "server full: %u clients", srv->cfg.max_clients);
            c->reason = NET_DISC_SERVER_FULL;
        }
        return false;
    }
    c->admission.admitted = true;
    srv->admitted_count++;
    return true;
}

void net_server_mark_welcomed(net_server *srv, net_client *c) {
    pending_unlink(srv, c);
    if (!c->admission.admitted) {
        c->admission.admitted = true;
        srv->admitted_count++;
    }
}

/* ---- Clients ------------------------------------------------------------------------------- */

static bool client_open(net_server *srv, net_client *c, const char *addr, bool count);
bool net_client_open(net_server *srv, net_client *c, const char *addr) {
    return client_open(srv, c, addr, true);
}
bool net_client_open_adopted(net_server *srv, net_client *c, const char *addr) {
    return client_open(srv, c, addr, false);
}

static bool client_open(net_server *srv, net_client *c, const char *addr, bool count) {
    c->index = UINT32_MAX;
    if (srv->client_count == srv->client_cap) {
        uint32_t cap = srv->client_cap ? srv->client_cap * 2u : 64u;
        net_client **clients = realloc(srv->clients, cap * sizeof *clients);
        if (!clients) return false;
        srv->clients = clients;
        net_client **dirty = realloc(srv->dirty, cap * sizeof *dirty);
        if (!dirty) return false;
        srv->dirty = dirty;
        srv->client_cap = cap;
    }
    if (!c->transport) c->transport = net_transport_at(0);
    if (!c->transport->open(c, !count)) return false;
    (void)net_ip_key(addr, c->ip); /* no IP literal: all such share the zero key */
    net_pending_addr *e = pending_addr_get(srv, c->ip);
    if (!e) {
        c->transport->free(c);
        return false;
    }
    c->id = srv->next_client_id++;
    if (srv->next_client_id == 0) srv->next_client_id = 1; /* ids are never 0 */
    snprintf(c->addr, sizeof c->addr, "%s", addr ? addr : "-");
    c->connected_us = srv->now_us;
    c->state = NET_CLIENT_AWAIT_HELLO;
    c->index = srv->client_count;
    srv->clients[srv->client_count++] = c;
    if (count) srv->metrics.connections_total++;
    if (count) srv->metrics.transports[c->transport->id].connections++;
    pending_link(srv, c, e);
    /* debug, as is the close of a connection that never said Hello: a flood of sockets that never
     * authenticate must not bury the log (client_hello and its close are the info lines). */
    net_log(NET_LOG_DEBUG, "client_connected", c->id, c->addr, "connected");
    /* At a cap the newcomer is admitted and the oldest silent connection goes, rather than the
     * newcomer being refused: otherwise sockets that connect, never say Hello and reconnect when
     * cut hold every slot (issue 12). A player says Hello within a round trip, so it is the oldest
     * only when it is late. The per-address cap evicts within the IP first, so one host cannot
     * push out everyone else's pending connections either. */
    if (e->count > srv->cfg.max_pending_per_address &&
        (pending_aged(srv, e->head) ||
         e->count > NET_PENDING_HARD_FACTOR * (uint64_t)srv->cfg.max_pending_per_address))
        pending_evict(srv, e->head, "per-address", srv->cfg.max_pending_per_address);
    if (srv->pending_count > srv->cfg.max_pending &&
        (pending_aged(srv, srv->pending_head) ||
         srv->pending_count > NET_PENDING_HARD_FACTOR * (uint64_t)srv->cfg.max_pending))
        pending_evict(srv, srv->pending_head, "global", srv->cfg.max_pending);
    return true;
}

/* Evicts, oldest first, the pending connections past the grace that are over a cap: those let in
 * over it while they were young (net_client_open). The queue is in age order, so the walk stops
 * at the first young one. */
static void pending_trim(net_server *srv) {
    /* The common case, every tick: too few pending for any cap to be crossed. */
    if (srv->pending_count <= srv->cfg.max_pending &&
        srv->pending_count <= srv->cfg.max_pending_per_address)
        return;
    net_client *c = srv->pending_head;
    while (c && pending_aged(srv, c)) {
        net_client *next = c->admission.pending_next;
        if (c->admission.pending_addr->count > srv->cfg.max_pending_per_address)
            pending_evict(srv, c, "per-address", srv->cfg.max_pending_per_address);
        else if (srv->pending_count > srv->cfg.max_pending)
            pending_evict(srv, c, "global", srv->cfg.max_pending);
        c = next;
    }
}

/* ---- Partial frames (--max-partial-bytes) ------------------------------------------------- */

static void partial_unlink(net_server *srv, net_client *c) {
    if (c->partial_prev)
        c->partial_prev->partial_next = c->partial_next;
    else
        srv->partial_head = c->partial_next;
    if (c->partial_next)
        c->partial_next->partial_prev = c->partial_prev;
    else
        srv->partial_tail = c->partial_prev;
    c->partial_prev = c->partial_next = NULL;
}

/* Counts held bytes for c in the budget, keeping the server's list of holders oldest first:
 * a client joins at the tail when it begins to hold and leaves when it holds none. Returns the
 * daemon-wide total after the change. */
static size_t partial_set(net_server *srv, net_client *c, size_t held) {
    size_t total = net_partial_change(srv->partial, c->in_held, held);
    /* A frame that began since the client joined the list (the one it was counted for completed
     * within the same read) makes it young again: a client that streams frames across reads
     * must not stay at the head, first in line to be cut, for as long as it keeps busy. */
    bool newer = held > 0 && c->in_held > 0 && c->in_since_us != c->in_held_since;
    if ((held == 0 || newer) && c->in_held > 0) partial_unlink(srv, c);
    if (held > 0 && (c->in_held == 0 || newer)) {
        c->partial_prev = srv->partial_tail;
        c->partial_next = NULL;
        if (srv->partial_tail)
            srv->partial_tail->partial_next = c;
        else
            srv->partial_head = c;
        srv->partial_tail = c;
        c->in_held_since = c->in_since_us;
    }
    c->in_held = held;
    return total;
}

void net_server_partial_changed(net_server *srv, net_client *c) {
    size_t was = c->in_held;
    size_t held = c->in.len > 0 && !c->handed_off ? c->in.cap : 0;
    size_t total = partial_set(srv, c, held);
    /* Only growth cuts: a buffer that shrank or emptied never costs anyone their connection. */
    while (held > was && total > srv->partial->max && srv->partial_head) {
        net_client *old = srv->partial_head;
        size_t bytes = old->in.len;
        /* Its buffer goes now, not at the close (the next flush): the loop must see the budget
         * fall, and the memory is what the bound is about. Nothing reads it again: a kill takes
         * no more input. */
        total = partial_set(srv, old, 0);
        net_buf_free(&old->in);
        if (!old->kill) /* one that was already cut is only freed sooner */
            net_log(NET_LOG_WARN, "partial_frames", old->id, old->addr,
                    "oldest partial frame (%zu bytes, %llu ms old) cut: %zu bytes held for "
                    "partial frames in all, limit %zu",
                    bytes, (unsigned long long)((srv->now_us - old->in_since_us) / 1000u), total,
                    srv->partial->max);
        net_server_kill(srv, old, NET_DISC_PARTIAL_FRAMES);
    }
}

void net_client_release(net_server *srv, net_client *c) {
    if (c->index == UINT32_MAX) return;
    COLLIDE_ASSERT(c->index < srv->client_count && srv->clients[c->index] == c);
    /* PROTOCOL.md 8: a player's moving bodies go with it; statics belong to the world, and so do
     * an admin's moving bodies (PROTOCOL.md "Backends and batches": a backend that reconnects
     * finds its NPCs where the world left them; any admin may move or despawn them). */
    for (uint32_t i = 0; !c->admin && i < c->owned_count; i++) {
        world_body_row info;
        if (world_body_get(srv->world, c->owned[i], &info) && info.kind == WORLD_BODY_MOVING &&
            info.owner == c->id) {
            journal_despawn(srv->journal, srv->world, c->owned[i]);
        }
    }
    if (c->dirty) {
        net_client *last = srv->dirty[--srv->dirty_count];
        srv->dirty[c->dirty_index] = last;
        last->dirty_index = c->dirty_index;
        c->dirty = false;
    }
    net_client *last = srv->clients[--srv->client_count];
    srv->clients[c->index] = last;
    last->index = c->index;
    c->index = UINT32_MAX;
    pending_unlink(srv, c);
    if (c->admission.refused) srv->refusing--;
    bool welcomed = c->admission.admitted;
    if (welcomed) srv->admitted_count--;
    c->admission.admitted = false;
    /* A client handed to a room's worker did not disconnect: it moved (front mode). */
    if (!c->handed_off)
        srv->metrics.disconnects_total[c->reason < NET_DISC_REASON_COUNT ? c->reason : 0]++;
    if (!c->admission.refused && !c->handed_off) {
        net_log(welcomed ? NET_LOG_INFO : NET_LOG_DEBUG, "client_disconnected", c->id, c->addr,
                "reason=%s name=%s", net_disconnect_reason_str(c->reason),
                c->name[0] ? c->name : "-");
    }
    partial_set(srv, c, 0);
    net_buf_free(&c->in);
    net_buf_free(&c->out);
    net_buf_free(&c->ev.events);
    c->ev.event_count = 0;
    free(c->owned);
    c->owned = NULL;
    c->owned_count = c->owned_cap = 0;
    net_known_free(&c->snap.known);
    c->transport->free(c);
    free(c->snap.qknown);
    c->snap.qknown = NULL;
    c->snap.qknown_cap = 0;
    net_baselines_free(&c->snap.baselines);
}

void net_client_close(net_server *srv, net_client *c, net_disconnect_reason reason) {
    if (!c->kill && c->state != NET_CLIENT_CLOSING) c->reason = reason;
    net_client_release(srv, c);
}

void net_client_prune_owned(net_server *srv, net_client *c) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->owned_count; i++) {
        if (world_body_alive(srv->world, c->owned[i])) c->owned[kept++] = c->owned[i];
    }
    c->owned_count = kept;
}

/* ---- The sweep and the drain ---------------------------------------------------------------- */

void net_server_sweep(net_server *srv) {
    pending_trim(srv);
    uint64_t max_lag_us = (uint64_t)srv->cfg.max_snapshot_lag_ms * 1000u;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->kill) continue;
        /* Over the lag at two ticks in a row, not one: after the daemon itself stalled (a frozen
         * container, a debugger) the first tick runs before the loop has reported the writes
         * that completed meanwhile, and every client would look behind by the stall. */
        bool was_over = c->lag_over;
        /* The kernel's part is looked at only once it would decide: for a client that keeps up,
         * one query per --max-snapshot-lag-ms, not one per tick. */
        if (c->state == NET_CLIENT_ACTIVE && c->io_kernel_refresh && c->kernel_since_us != 0 &&
            srv->now_us - c->kernel_since_us > max_lag_us)
            c->io_kernel_refresh(c);
        c->lag_over =
            c->state == NET_CLIENT_ACTIVE && net_client_lag_us(c, srv->now_us) > max_lag_us;
        if (c->state == NET_CLIENT_AWAIT_HELLO &&
            srv->now_us - c->connected_us >= (uint64_t)srv->cfg.hello_timeout_ms * 1000u) {
            net_log(NET_LOG_INFO, "hello_timeout", c->id, c->addr, "no Hello within %u ms",
                    srv->cfg.hello_timeout_ms);
            net_server_kill(srv, c, NET_DISC_HELLO_TIMEOUT);
        } else if (net_client_accepts_input(c) && c->in.len > 0 &&
                   srv->now_us - c->in_since_us > (uint64_t)srv->cfg.frame_timeout_ms * 1000u) {
            net_log(NET_LOG_WARN, "frame_timeout", c->id, c->addr,
                    "partial frame (%zu bytes) not completed within %u ms", c->in.len,
                    srv->cfg.frame_timeout_ms);
            net_server_kill(srv, c, NET_DISC_FRAME_TIMEOUT);
        } else if (c->lag_over && was_over) {
            net_log(
                NET_LOG_WARN, "snapshot_lag", c->id, c->addr,
                "oldest output not yet received %llu ms old (%zu bytes queued here), limit %u ms",
                (unsigned long long)(net_client_lag_us(c, srv->now_us) / 1000u),
                net_client_queued(c), srv->cfg.max_snapshot_lag_ms);
            net_server_kill(srv, c, NET_DISC_SNAPSHOT_LAG);
        } else if (c->state == NET_CLIENT_CLOSING) {
            uint64_t timeout = c->page_bytes ? NET_PAGE_TIMEOUT_US : NET_CLOSING_TIMEOUT_US;
            if (srv->now_us - c->closing_us >= timeout ||
                net_client_queued(c) > srv->cfg.max_queued_bytes + c->page_bytes) {
                net_server_kill(srv, c, c->reason);
            }
        }
    }
}

void net_server_drain(net_server *srv) {
    net_server_goodbye_all(srv, "server shutting down", NET_DISC_SHUTDOWN);
}

void net_server_goodbye_all(net_server *srv, const char *reason, net_disconnect_reason why) {
    srv->draining = true;
    Collide__V1__Goodbye bye = COLLIDE__V1__GOODBYE__INIT;
    bye.reason = (char *)reason;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE;
    m.goodbye = &bye;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        /* A client being handed to a room hears from the room: a Goodbye here would go out
         * before its Welcome (the room refuses it instead: SHUTTING_DOWN). */
        if (c->kill || c->handed_off || c->state == NET_CLIENT_CLOSING) continue;
        net_server_append(srv, c, &m);
        net_server_enter_closing(srv, c, why);
    }
}

/* ---- Front mode ------------------------------------------------------------------------------ */

void net_server_set_hello_hook(net_server *srv,
                               void (*hook)(net_server *srv, net_client *c,
                                            const net_hello_request *t, void *ctx),
                               void *ctx) {
    srv->hello_hook = hook;
    srv->hello_ctx = ctx;
}

void net_client_hand_off(net_server *srv, net_client *c, const net_hello_placement *p) {
    if (c->kill || c->handed_off) return;
    c->handed_off = true;
    c->placement = *p;
    c->placement.transport = c->transport->id; /* the room's thread keeps the client's framing */
    pending_unlink(srv, c);
    net_server_mark_dirty(srv, c);
}

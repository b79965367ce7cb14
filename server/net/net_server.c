#include "net_server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "net_internal.h"
#include "net_log.h"

/* ---- Server lifetime and clock ------------------------------------------------------------- */

net_server *net_server_create(const net_config *cfg, world *w) {
    NET_ASSERT(cfg != NULL && w != NULL);
    if (!cfg || !w) return NULL;
    net_server *srv = calloc(1, sizeof *srv);
    if (!srv) return NULL;
    srv->cfg = *cfg;
    srv->world = w;
    srv->next_client_id = 1;
    if (!net_snapshot_writer_init(&srv->snapshot, cfg, w)) {
        net_server_destroy(srv);
        return NULL;
    }
    return srv;
}

void net_server_destroy(net_server *srv) {
    if (!srv) return;
    NET_ASSERT(srv->client_count == 0);
    free(srv->clients);
    free(srv->dirty);
    net_snapshot_writer_free(&srv->snapshot);
    free(srv);
}

void net_server_set_spawn_points(net_server *srv, const vec2 *points, size_t count) {
    NET_ASSERT(points != NULL || count == 0);
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
    return true;
}

bool net_server_render_metrics(const net_server *srv, net_buf *out) {
    world_stats ws;
    world_get_stats(srv->world, &ws);
    net_gauges g = {srv->client_count,       ws.static_bodies, ws.moving_bodies,
                    net_log_dropped_total(), ws.slots_retired, ws.ids_left};
    out->len = 0;
    return net_metrics_render(&srv->metrics, &g, out);
}

/* ---- The dirty list, kills and closing ----------------------------------------------------- */

void net_server_mark_dirty(net_server *srv, net_client *c) {
    if (c->dirty || c->index == UINT32_MAX) return;
    NET_ASSERT(srv->dirty_count < srv->client_count);
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
    NET_ASSERT((unsigned)reason < NET_DISC_REASON_COUNT);
    if (!c->kill) {
        c->kill = true;
        c->reason = reason;
    }
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

bool net_server_append(net_server *srv, net_client *c, const net_server_msg *m) {
    if (c->kill) return false; /* being closed: whatever it is owed will never be read */
    size_t size = collide__v1__server_message__get_packed_size(m);
    uint8_t prefix[FRAME_MAX_PREFIX];
    size_t plen = frame_write_prefix((uint32_t)size, prefix);
    if (!net_buf_reserve(&c->out, plen + size)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    net_client_note_queue_start(srv, c);
    memcpy(c->out.data + c->out.len, prefix, plen);
    size_t packed = collide__v1__server_message__pack(m, c->out.data + c->out.len + plen);
    NET_ASSERT(packed == size);
    (void)packed;
    c->out.len += plen + size;
    srv->metrics.frames_out_total++;
    net_server_mark_dirty(srv, c);
    return !net_server_over_hard_limit(srv, c);
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
    return c->state == NET_CLIENT_CLOSING ? NET_IO_CLOSE : NET_IO_NONE;
}

void net_client_take_output(net_client *c, net_buf *into) {
    NET_ASSERT(into->len == 0 && c->inflight == 0);
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
    srv->metrics.snapshots_sent_total += c->inflight_snapshots;
    c->inflight = 0;
    c->inflight_snapshots = 0;
    if (net_client_next_io(c) != NET_IO_NONE) net_server_mark_dirty(srv, c);
}

/* ---- Clients ------------------------------------------------------------------------------- */

bool net_client_open(net_server *srv, net_client *c, const char *addr) {
    if (srv->client_count == srv->client_cap) {
        uint32_t cap = srv->client_cap ? srv->client_cap * 2u : 64u;
        net_client **clients = realloc(srv->clients, cap * sizeof *clients);
        if (!clients) {
            c->index = UINT32_MAX;
            return false;
        }
        srv->clients = clients;
        net_client **dirty = realloc(srv->dirty, cap * sizeof *dirty);
        if (!dirty) {
            c->index = UINT32_MAX;
            return false;
        }
        srv->dirty = dirty;
        srv->client_cap = cap;
    }
    c->id = srv->next_client_id++;
    if (srv->next_client_id == 0) srv->next_client_id = 1; /* ids are never 0 */
    snprintf(c->addr, sizeof c->addr, "%s", addr ? addr : "-");
    c->connected_us = srv->now_us;
    c->state = NET_CLIENT_AWAIT_HELLO;
    c->index = srv->client_count;
    srv->clients[srv->client_count++] = c;
    srv->metrics.connections_total++;
    if (srv->client_count - srv->refusing > srv->cfg.max_clients) {
        c->refused = true;
        srv->refusing++;
        net_log(NET_LOG_WARN, "client_refused", c->id, c->addr, "max clients (%u) reached",
                srv->cfg.max_clients);
        if (srv->refusing > NET_MAX_REFUSING) {
            net_server_kill(srv, c, NET_DISC_SERVER_FULL);
        } else {
            net_server_send_error(srv, c, 0, NET_ERR(LIMIT_EXCEEDED), true,
                                  "server full: %u clients", srv->cfg.max_clients);
            c->reason = NET_DISC_SERVER_FULL;
        }
        return true;
    }
    net_log(NET_LOG_INFO, "client_connected", c->id, c->addr, "connected");
    return true;
}

void net_client_release(net_server *srv, net_client *c) {
    if (c->index == UINT32_MAX) return;
    NET_ASSERT(c->index < srv->client_count && srv->clients[c->index] == c);
    /* PROTOCOL.md 8: the client's moving bodies go with it; statics belong to the world. */
    for (uint32_t i = 0; i < c->owned_count; i++) {
        world_body_info info;
        if (world_body_get(srv->world, c->owned[i], &info) && info.kind == WORLD_BODY_MOVING &&
            info.owner == c->id) {
            world_despawn(srv->world, c->owned[i]);
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
    if (c->refused) srv->refusing--;
    srv->metrics.disconnects_total[c->reason < NET_DISC_REASON_COUNT ? c->reason : 0]++;
    if (!c->refused) {
        net_log(NET_LOG_INFO, "client_disconnected", c->id, c->addr, "reason=%s name=%s",
                net_disconnect_reason_str(c->reason), c->name[0] ? c->name : "-");
    }
    net_buf_free(&c->in);
    net_buf_free(&c->out);
    free(c->owned);
    c->owned = NULL;
    c->owned_count = c->owned_cap = 0;
    net_known_free(&c->known);
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

/* ---- Tick and drain ------------------------------------------------------------------------ */

void net_server_tick(net_server *srv, unsigned steps) {
    for (unsigned i = 0; i < steps; i++) {
        world_step(srv->world);
        /* The snapshots read the last step's body table: the steps before it are taken in now
         * (out of memory: the next snapshots read the whole world instead). */
        if (i + 1 < steps) (void)net_snapshot_observe(&srv->snapshot, srv->world);
    }
    srv->metrics.ticks_total += steps;
    uint64_t max_lag_us = (uint64_t)srv->cfg.max_snapshot_lag_ms * 1000u;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->kill) continue;
        /* Over the lag at two ticks in a row, not one: after the daemon itself stalled (a frozen
         * container, a debugger) the first tick runs before the loop has reported the writes
         * that completed meanwhile, and every client would look behind by the stall. */
        bool was_over = c->lag_over;
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
            net_log(NET_LOG_WARN, "snapshot_lag", c->id, c->addr,
                    "oldest queued output %llu ms old (%zu bytes queued), limit %u ms",
                    (unsigned long long)(net_client_lag_us(c, srv->now_us) / 1000u),
                    net_client_queued(c), srv->cfg.max_snapshot_lag_ms);
            net_server_kill(srv, c, NET_DISC_SNAPSHOT_LAG);
        } else if (c->state == NET_CLIENT_CLOSING) {
            if (srv->now_us - c->closing_us >= NET_CLOSING_TIMEOUT_US ||
                net_client_queued(c) > srv->cfg.max_queued_bytes) {
                net_server_kill(srv, c, c->reason);
            }
        }
    }
    if (steps > 0) net_server_snapshots(srv);
}

void net_server_drain(net_server *srv) {
    srv->draining = true;
    Collide__V1__Goodbye bye = COLLIDE__V1__GOODBYE__INIT;
    bye.reason = "server shutting down";
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE;
    m.goodbye = &bye;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->kill || c->state == NET_CLIENT_CLOSING) continue;
        net_server_append(srv, c, &m);
        net_server_enter_closing(srv, c, NET_DISC_SHUTDOWN);
    }
}

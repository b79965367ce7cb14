/* net_room: a room on its owner thread (see net_room.h). */
#include "net_room.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net_conn.h"
#include "net_log.h"
#include "net_tick.h"

static void maybe_closed(net_room *r);
static void on_record_drained(void *ctx) { maybe_closed(ctx); }
static void on_timer_closed(uv_handle_t *h) {
    net_room *r = h->data;
    if (r->on_closed) r->on_closed(r);
}

/* What /rooms and ListRooms show of the room. */
static void publish(net_room *r) {
    world_stats ws;
    world_get_stats(r->world, &ws);
    net_rooms_publish(r->dir, r->id, world_tick(r->world), ws.static_bodies + ws.moving_bodies,
                      1000.0 * net_metrics_tick_quantile(&r->srv->metrics, 0.99));
}

/* A closing room steps no more, but its clients' timeouts still run (a client that does not read
 * its Goodbye is cut after NET_CLOSING_TIMEOUT_US), at the same period. */
static void on_closing_tick(uv_timer_t *t) {
    net_room *r = t->data;
    net_conn_set_clock(r->srv);
    net_tick_run(r->srv, 0);
    uv_timer_start(t, on_closing_tick, r->schedule.period_ns / 1000000u + 1u, 0);
}

static void on_room_tick(uv_timer_t *t) {
    net_room *r = t->data;
    uint64_t now = uv_hrtime();
    net_tick_due due = net_tick_take(&r->schedule, now);
    if (due.run > 0 || due.skipped > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts); /* Pong.server_time_us */
        net_server_set_clock(r->srv, now / 1000u,
                             (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
        uint64_t t0 = uv_hrtime();
        net_tick_run(r->srv, due.run);
        net_record_tick(r->rec, due.run); /* right after the steps: a journal starts here */
        net_server_note_tick(r->srv, due.run, due.skipped, due.lag_s,
                             (double)(uv_hrtime() - t0) * 1e-9);
        if (net_server_overloaded(r->srv) != r->overloaded) {
            r->overloaded = !r->overloaded;
            if (r->on_overload) r->on_overload(r);
        }
        publish(r); /* a short lock: ListRooms' figures are the last tick's */
    }
    /* Idle: an auto room without clients for --room-idle-ms leaves the directory (unless a join is
     * on its way) and closes. */
    if (r->auto_created && net_server_client_count(r->srv) == 0) {
        if (r->empty_since_ns == 0) r->empty_since_ns = now;
        if (now - r->empty_since_ns >= r->idle_ns && net_rooms_close_if_idle(r->dir, r->id)) {
            net_log(NET_LOG_INFO, "room_idle_closed", 0, NULL, "room=%s idle %llu ms", r->name,
                    (unsigned long long)(r->idle_ns / 1000000u));
            net_room_close(r, "room closed: idle", NET_DISC_ROOM_CLOSED);
            return;
        }
    } else {
        r->empty_since_ns = 0;
    }
    uv_timer_start(t, on_room_tick, net_tick_wait_ms(&r->schedule, uv_hrtime()), 0);
}

net_room *net_room_open(uv_loop_t *loop, net_rooms *dir, net_room_id id, const char *name,
                        const net_config *cfg, char *err, size_t err_size) {
    net_world_text *text = net_rooms_world(dir, id);
    if (!text) {
        snprintf(err, err_size, "room %s is closed", name);
        return NULL;
    }
    net_room *r = calloc(1, sizeof *r);
    world_spawn_points *spawns = calloc(1, sizeof *spawns);
    world_config wc;
    world_config_default(&wc);
    wc.tick_rate_hz = cfg->tick_rate_hz;
    wc.max_speed = cfg->max_speed;
    wc.max_angular_speed = cfg->max_angular_speed;
    wc.max_bodies = cfg->max_bodies;
    world *w = r && spawns
                   ? world_load_json(net_world_text_data(text), name, &wc, spawns, err, err_size)
                   : NULL;
    net_world_text_unref(text);
    net_server *srv = w ? net_server_create(cfg, w) : NULL;
    if (!srv) {
        if (w && err_size) snprintf(err, err_size, "room %s: out of memory", name);
        if (w) world_destroy(w);
        free(spawns);
        free(r);
        return NULL;
    }
    r->id = id;
    snprintf(r->name, sizeof r->name, "%s", name);
    net_room_info info;
    r->auto_created =
        net_rooms_find(dir, name, strlen(name), &info) && info.id == id && info.auto_created;
    r->world = w;
    r->spawns = spawns;
    r->srv = srv;
    r->dir = dir;
    r->idle_ns = (uint64_t)cfg->room_idle_ms * 1000000u;
    net_server_set_spawn_points(srv, spawns->points, spawns->count);
    srv->owner = r;
    r->rec = net_record_create(loop, srv, r->name, cfg);
    if (cfg->record_dir[0] && !r->rec)
        net_log(NET_LOG_WARN, "recording_dropped", 0, NULL,
                "room=%s reason=open_failed: out of memory for its recorder", r->name);
    publish(r);
    uv_timer_init(loop, &r->tick_timer);
    r->tick_timer.data = r;
    r->schedule = net_tick_start((double)cfg->tick_rate_hz, uv_hrtime());
    uv_timer_start(&r->tick_timer, on_room_tick, net_tick_wait_ms(&r->schedule, uv_hrtime()), 0);
    world_stats ws;
    world_get_stats(w, &ws);
    net_log(NET_LOG_INFO, "room_created", 0, NULL, "room=%s auto=%d statics=%zu", r->name,
            (int)r->auto_created, ws.static_bodies);
    return r;
}

static void maybe_closed(net_room *r) {
    if (!r->closing || net_server_client_count(r->srv) > 0 || !net_record_drained(r->rec)) return;
    if (!uv_is_closing((uv_handle_t *)&r->tick_timer))
        uv_close((uv_handle_t *)&r->tick_timer, on_timer_closed);
}

void net_room_close(net_room *r, const char *reason, net_disconnect_reason why) {
    if (r->closing) return;
    r->closing = true;
    net_conn_set_clock(r->srv);
    net_server_goodbye_all(r->srv, reason, why);
    /* the timer first: a recorder with nothing in flight reports drained from within its close,
     * and maybe_closed may then close the timer */
    uv_timer_start(&r->tick_timer, on_closing_tick, r->schedule.period_ns / 1000000u + 1u, 0);
    net_record_close(r->rec, on_record_drained, r); /* the journal finished, written, closed */
    net_log(NET_LOG_INFO, "room_closed", 0, NULL, "room=%s reason=\"%s\" clients=%u", r->name,
            reason, net_server_client_count(r->srv));
    maybe_closed(r);
}

void net_room_client_left(net_room *r) { maybe_closed(r); }

void net_room_free(net_room *r) {
    if (!r) return;
    net_record_free(r->rec);
    net_server_destroy(r->srv);
    world_destroy(r->world);
    free(r->spawns);
    free(r);
}

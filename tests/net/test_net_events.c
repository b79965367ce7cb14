/* Contact and sensor events through the real server, socket-free (net_client_feed in,
 * client->out out): who gets them, that a snapshot dropped for a slow reader loses none of them,
 * that the steps of a catch-up tick all deliver, the frame budget, and --max-pending-events. */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "wire.h"

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name
#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING

typedef struct fixture {
    world *w;
    net_server *srv;
    net_client c[4];
    uint8_t buf[4096];
    world_body_id wall; /* the world's static at x in [9, 11] */
} fixture;

static void fx_init(fixture *f, const net_config *cfg_in) {
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        net_config_default(&cfg);
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 256;
    f->w = world_create(&wc);
    f->srv = net_server_create(&cfg, f->w);
    f->srv->now_us = 1000000;
    geom_shape s;
    geom_make_box(v2(1, 50), &s);
    world_spawn(f->w, WORLD_BODY_STATIC, &s, v2(10, 0), 0, &f->wall, NULL);
}

static void fx_free(fixture *f) {
    for (int i = 0; i < 4; i++)
        if (f->c[i].id) net_client_release(f->srv, &f->c[i]);
    net_server_destroy(f->srv);
    world_destroy(f->w);
}

static void feed(fixture *f, net_client *c, size_t n) { net_client_feed(f->srv, c, f->buf, n); }

static void drain(net_client *c) {
    tu_msgs m;
    tu_take(c, &m);
    tu_free(&m);
}

/* Client i says Hello (with the admin token "adm" when admin, asking for every event when all). */
static net_client *fx_hello(fixture *f, int i, bool admin, bool all) {
    net_client *c = &f->c[i];
    net_client_open(f->srv, c, "127.0.0.1:1");
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"t";
    h.token = (char *)(admin ? "adm" : "");
    h.all_events = all;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    feed(f, c, tu_frame(&m, f->buf, sizeof f->buf));
    drain(c);
    return c;
}

static uint32_t fx_spawn(fixture *f, net_client *c, float x, float y) {
    feed(f, c, tu_spawn_box(7, MOVING, x, y, 1, 1, f->buf, sizeof f->buf));
    tu_msgs m;
    tu_take(c, &m);
    uint32_t id = m.count == 1 && m.m[0]->msg_case == S(SPAWNED) ? m.m[0]->spawned->body_id : 0;
    tu_free(&m);
    return id;
}

typedef struct seen {
    int snapshots;
    int begins, ends; /* contacts */
    int sensor_begins, sensor_ends;
    uint32_t a, b;          /* the last contact's pair */
    float normal_x, speed;  /* the last begin's */
    size_t max_event_bytes; /* the most event bytes one snapshot carried */
} seen;

/* Takes the client's output and counts what its snapshots carried. */
static void collect(net_client *c, seen *s) {
    tu_msgs m;
    tu_take(c, &m);
    for (size_t i = 0; i < m.count; i++) {
        if (m.m[i]->msg_case != S(SNAPSHOT)) continue;
        const Collide__V1__Snapshot *sn = m.m[i]->snapshot;
        s->snapshots++;
        for (size_t k = 0; k < sn->n_contacts; k++) {
            const Collide__V1__ContactEvent *e = sn->contacts[k];
            if (e->begin) {
                s->begins++;
                s->normal_x = e->normal ? e->normal->x : NAN;
                s->speed = e->approach_speed;
            } else {
                s->ends++;
            }
            s->a = e->a, s->b = e->b;
        }
        size_t bytes = 0;
        for (size_t k = 0; k < sn->n_sensor_events; k++) {
            sn->sensor_events[k]->begin ? s->sensor_begins++ : s->sensor_ends++;
            size_t n = collide__v1__sensor_event__get_packed_size(sn->sensor_events[k]);
            bytes += 1 + varint_size(n) + n; /* the field as the snapshot holds it */
        }
        for (size_t k = 0; k < sn->n_contacts; k++) {
            size_t n = collide__v1__contact_event__get_packed_size(sn->contacts[k]);
            bytes += 1 + varint_size(n) + n;
        }
        if (bytes > s->max_event_bytes) s->max_event_bytes = bytes;
    }
    tu_free(&m);
}

static net_config admin_cfg(void) {
    net_config cfg;
    net_config_default(&cfg);
    snprintf(cfg.admin_token, sizeof cfg.admin_token, "adm");
    cfg.admin_token_len = 3;
    return cfg;
}

/* A contact goes to the owner of the mover, to an admin with all_events, and to nobody else
 * (another player whose view holds it, an admin without all_events). */
static void test_delivery(void) {
    fixture f;
    net_config cfg = admin_cfg();
    fx_init(&f, &cfg);
    net_client *owner = fx_hello(&f, 0, false, false);
    net_client *other = fx_hello(&f, 1, false, true); /* all_events without the token: ignored */
    net_client *watcher = fx_hello(&f, 2, true, true);
    net_client *quiet = fx_hello(&f, 3, true, false);
    uint32_t body = fx_spawn(&f, owner, 5, 0);
    CHECK(fx_spawn(&f, other, 5, 10) != 0); /* its view holds the scene */
    CHECK(body);
    feed(&f, owner, tu_move(0, body, 1, 60, 0, f.buf, sizeof f.buf));
    seen s[4] = {{0}};
    for (int t = 0; t < 30; t++) {
        net_tick_run(f.srv, 1);
        for (int i = 0; i < 4; i++)
            collect(&f.c[i], &s[i]);
    }
    CHECK_MSG(s[0].begins == 1 && s[0].a == body && s[0].b == f.wall, "owner begins %d",
              s[0].begins);
    CHECK_NEAR(s[0].normal_x, 1.0f, 1e-6f);
    CHECK_NEAR(s[0].speed, 60.0f, 1e-3f);
    CHECK(s[2].begins == 1);
    CHECK(s[1].begins == 0 && s[3].begins == 0);
    CHECK(s[1].snapshots > 0 && s[3].snapshots > 0);
    (void)other, (void)watcher, (void)quiet;
    fx_free(&f);
}

/* A snapshot dropped for a slow reader keeps its events: they arrive in the next snapshot that
 * goes out, each once. */
static void test_dropped_snapshot_keeps_events(void) {
    fixture f;
    fx_init(&f, NULL);
    net_client *c = fx_hello(&f, 0, false, false);
    uint32_t body = fx_spawn(&f, c, 7, 0);
    CHECK(body);
    feed(&f, c, tu_move(0, body, 1, 60, 0, f.buf, sizeof f.buf));
    /* a reader that does not read: its queue past a quarter of --max-queued-bytes */
    size_t junk = f.srv->cfg.max_queued_bytes / 4u + 1u;
    CHECK(net_buf_reserve(&c->out, junk));
    c->out.len = junk;
    uint64_t drops0 = f.srv->metrics.slow_client_drops_total;
    for (int t = 0; t < 10; t++)
        net_tick_run(f.srv, 1);
    CHECK(f.srv->metrics.slow_client_drops_total == drops0 + 10); /* every snapshot dropped */
    CHECK(c->ev.event_count == 1);                                /* the begin waits */
    c->out.len = 0;                                               /* it read everything */
    net_tick_run(f.srv, 1);
    seen s = {0};
    collect(c, &s);
    CHECK(s.snapshots == 1 && s.begins == 1 && s.a == body);
    CHECK(c->ev.event_count == 0);
    net_tick_run(f.srv, 1);
    collect(c, &s);
    CHECK(s.begins == 1); /* sent once */
    fx_free(&f);
}

/* A tick that catches up several steps delivers the events of every one of them. */
static void test_catch_up_steps(void) {
    fixture f;
    fx_init(&f, NULL);
    net_client *c = fx_hello(&f, 0, false, false);
    uint32_t body = fx_spawn(&f, c, 7.5f, 0);
    CHECK(body);
    feed(&f, c, tu_move(0, body, 1, 60, 0, f.buf, sizeof f.buf));
    net_tick_run(f.srv, 3); /* reaches the wall in the first step */
    feed(&f, c, tu_move(0, body, 2, -600, 0, f.buf, sizeof f.buf));
    net_tick_run(f.srv, 3); /* leaves it in the first step */
    seen s = {0};
    collect(c, &s);
    CHECK_MSG(s.snapshots == 2 && s.begins == 1 && s.ends == 1, "snapshots %d begins %d ends %d",
              s.snapshots, s.begins, s.ends);
    fx_free(&f);
}

/* More events than a quarter frame holds: split over snapshots in order, none lost. */
static void test_frame_budget(void) {
    net_config cfg = admin_cfg();
    cfg.max_frame = 1024; /* a quarter: ~256 bytes, ~8 sensor events */
    fixture f;
    fx_init(&f, &cfg);
    net_client *c = fx_hello(&f, 0, true, true);
    /* 40 sensor plates crossed by one fast body in one step: 80 events at once */
    for (int i = 0; i < 40; i++) {
        geom_shape s;
        geom_make_box(v2(0.1f, 5), &s);
        world_body_id id;
        CHECK(world_spawn(f.w, WORLD_BODY_STATIC, &s, v2(-100 + 2.0f * (float)i, 100), 0, &id,
                          NULL) == WORLD_OK);
        world_filter fl = {0, 0, true};
        CHECK(world_body_set_filter(f.w, id, &fl) == WORLD_OK);
    }
    uint32_t body = fx_spawn(&f, c, -110, 100);
    CHECK(body);
    net_tick_run(f.srv, 1);
    drain(c);
    feed(&f, c, tu_move(0, body, 1, 6000, 0, f.buf, sizeof f.buf));
    seen s = {0};
    net_tick_run(f.srv, 1);
    collect(c, &s);
    CHECK_MSG(s.sensor_begins + s.sensor_ends < 80 && s.snapshots == 1, "first %d",
              s.sensor_begins + s.sensor_ends);
    feed(&f, c, tu_move(0, body, 2, 0, 0, f.buf, sizeof f.buf));
    for (int t = 0; t < 30; t++) {
        net_tick_run(f.srv, 1);
        collect(c, &s);
    }
    CHECK_MSG(s.sensor_begins == 40 && s.sensor_ends == 40, "begins %d ends %d", s.sensor_begins,
              s.sensor_ends);
    /* at most a quarter of the frame (less the envelope's slack) per snapshot, and it was used */
    CHECK_MSG(s.max_event_bytes <= (1024 - 16) / 4 && s.max_event_bytes > (1024 - 16) / 8,
              "event bytes per snapshot %zu", s.max_event_bytes);
    CHECK(c->ev.event_count == 0);
    fx_free(&f);
}

/* --max-pending-events: a reader whose snapshots are dropped while events keep coming is cut
 * when one more would pass the bound (events are never dropped), not before. */
static void test_pending_bound(void) {
    net_config cfg = admin_cfg();
    cfg.max_pending_events = 40;
    fixture f;
    fx_init(&f, &cfg);
    net_client *c = fx_hello(&f, 0, true, true);
    for (int i = 0; i < 30; i++) {
        geom_shape s;
        geom_make_box(v2(0.1f, 5), &s);
        world_body_id id;
        world_spawn(f.w, WORLD_BODY_STATIC, &s, v2(-100 + 2.0f * (float)i, 100), 0, &id, NULL);
        world_filter fl = {0, 0, true};
        world_body_set_filter(f.w, id, &fl);
    }
    uint32_t body = fx_spawn(&f, c, -110, 100);
    CHECK(body);
    net_tick_run(f.srv, 1);
    drain(c);
    size_t junk = f.srv->cfg.max_queued_bytes / 4u + 1u;
    CHECK(net_buf_reserve(&c->out, junk));
    c->out.len = junk;
    /* 30 plates crossed over a few steps: 60 events, 20 past the bound */
    feed(&f, c, tu_move(0, body, 1, 600, 0, f.buf, sizeof f.buf));
    for (int t = 0; t < 20 && !c->kill; t++) {
        net_tick_run(f.srv, 1);
        CHECK_MSG(c->ev.event_count <= 40, "pending %u", c->ev.event_count);
    }
    /* filled to the bound, then cut by the one past it */
    CHECK_MSG(c->kill && c->reason == NET_DISC_EVENTS_BACKLOG && c->ev.event_count == 40,
              "kill %d pending %u", c->kill, c->ev.event_count);
    fx_free(&f);
}

TEST_MAIN(TEST(test_delivery), TEST(test_dropped_snapshot_keeps_events), TEST(test_catch_up_steps),
          TEST(test_frame_budget), TEST(test_pending_bound))

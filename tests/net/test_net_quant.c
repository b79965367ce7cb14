/* Snapshot rates and quantized snapshots (PROTOCOL.md "Snapshot rate and quantized snapshots")
 * through the real session and snapshot writer against a real world:
 *  - a v1 client that asks for neither gets the stream it got before 1.1, byte for byte (a hash
 *    of every snapshot frame of a scripted run, taken from the `rooms` branch before this
 *    change), with or without rated and quantized clients beside it;
 *  - rates 60, 30, 20, 7 (and ties) at tick 60: the Welcome, the ticks, every change carried;
 *  - quantized watchers at several rates decode (proto/quant.c, the client's decoder) exactly
 *    the server's quantized state after each of their snapshots, for 10,000 ticks, and agree
 *    with a float watcher within half a quantum at the same ticks;
 *    (angles and angular velocities too: the movers of that run turn, some spawned at an angle);
 *  - new bodies of every shape; a slow reader's dropped snapshots; records copied. */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "quant.h"

#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING
#define STATIC COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
#define HALF 150.0f
#define CAPACITY 256u
#define NCLIENTS 8
#define ADMIN 0  /* statics, and watches as a float client at full rate */
#define PLAYER 1 /* owns the movers */

/* FNV-1a 64 of a v1 watcher's snapshot frames over scripted_run(): measured on branch `rooms`
 * (34a4f59) before Hello.snapshot_rate_hz and Hello.quantized existed, and taken again when body
 * ids put the generation above the slot (make_id; ids are opaque to clients, and the same run
 * names the same bodies with other numbers, which the frames carry), built by each compiler
 * the project's builds use (their float code differs in the last bits, and so do the bodies'
 * positions after a few hundred steps; each build is held to its own compiler's stream). */
#if defined(__clang__)
#define V1_STREAM_HASH 0xafb86a8ceb85ac53ull /* clang 14 (Release and ASan builds alike) */
#else
#define V1_STREAM_HASH 0x5211571d508a00bfull /* gcc 12 */
#endif

typedef struct fixture {
    world *w;
    net_server *srv;
    net_config cfg;
    net_client c[NCLIENTS];
    bool open[NCLIENTS];
    uint8_t buf[2048];
    uint32_t seq;
    uint32_t movers[8];
    size_t nmovers;
    bool turning; /* the movers spawn at angles and turn (MoveIntent.angular_velocity) */
} fixture;

static void feed(fixture *f, int ci, size_t n) { net_client_feed(f->srv, &f->c[ci], f->buf, n); }

/* The fixture's world with gravity (1.2 characters; (0, 0) for every other test). */
static void fixture_init_gravity(fixture *f, vec2 gravity) {
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    net_config_default(&f->cfg);
    f->cfg.rate_limit = 1e6f;
    f->cfg.tick_rate_hz = 60.0f;
    strcpy(f->cfg.admin_token, "adm");
    f->cfg.admin_token_len = 3;
    world_config wc;
    world_config_default(&wc);
    wc.bounds = aabb_make(v2(-HALF, -HALF), v2(HALF, HALF));
    wc.max_bodies = CAPACITY;
    wc.tick_rate_hz = 60.0f;
    wc.gravity = gravity;
    f->w = world_create(&wc);
    CHECK(f->w);
    f->srv = net_server_create(&f->cfg, f->w);
    CHECK(f->srv);
    f->srv->now_us = 1000000;
}

static void fixture_init(fixture *f) { fixture_init_gravity(f, v2(0.0f, 0.0f)); }

static void fixture_free(fixture *f) {
    for (int i = 0; i < NCLIENTS; i++)
        if (f->open[i]) net_client_release(f->srv, &f->c[i]);
    net_server_destroy(f->srv);
    world_destroy(f->w);
}

/* Hello with the 1.1 fields (rate 0 and quantized false: exactly a v1 Hello's bytes). */
static size_t hello_ex(const char *token, uint32_t rate, bool quantized, uint8_t *out, size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"tester";
    h.token = (char *)(token ? token : "");
    h.snapshot_rate_hz = rate;
    h.quantized = quantized;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return tu_frame(&m, out, cap);
}

/* Connects client ci; returns its Welcome's snapshot_rate_hz (0 when not welcomed). */
static uint32_t connect_client(fixture *f, int ci, const char *token, uint32_t rate, bool quant,
                               float *pq, float *vq) {
    if (!net_client_open(f->srv, &f->c[ci], "127.0.0.1:1")) return 0;
    f->open[ci] = true;
    feed(f, ci, hello_ex(token, rate, quant, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    uint32_t granted = 0;
    if (msgs.count == 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME) {
        const Collide__V1__Welcome *w = msgs.m[0]->welcome;
        granted = w->snapshot_rate_hz;
        if (pq) *pq = w->position_quantum;
        if (vq) *vq = w->velocity_quantum;
        bool has_feature = false;
        for (size_t i = 0; i < w->n_features; i++)
            has_feature |= strcmp(w->features[i], "quantized") == 0;
        if (!has_feature) granted = 0;
    }
    tu_free(&msgs);
    return granted;
}

static void whole_world(fixture *f, int ci) {
    feed(f, ci, tu_set_view(0, 0, 0, HALF, HALF, f->buf, sizeof f->buf));
}

/* SpawnBody of shape 0 (box), 1 (circle) or 2 (pentagon), with filters unless NULL. */
static uint32_t spawn_filtered(fixture *f, int ci, Collide__V1__BodyKind kind, int shape, float x,
                               float y, const quant_filter *filter) {
    Collide__V1__Vec2 half = COLLIDE__V1__VEC2__INIT, pos = COLLIDE__V1__VEC2__INIT;
    Collide__V1__Vec2 vs[5], *vp[5];
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    Collide__V1__Circle circle = COLLIDE__V1__CIRCLE__INIT;
    Collide__V1__Polygon poly = COLLIDE__V1__POLYGON__INIT;
    Collide__V1__Shape sh = COLLIDE__V1__SHAPE__INIT;
    pos.x = x;
    pos.y = y;
    if (shape == 0) {
        half.x = 2.0f;
        half.y = 1.25f;
        box.half_extents = &half;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        sh.box = &box;
    } else if (shape == 1) {
        circle.radius = 1.5f;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        sh.circle = &circle;
    } else {
        for (int i = 0; i < 5; i++) {
            Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
            v.x = 1.7f * cosf(6.2831853f * (float)i / 5.0f);
            v.y = 1.7f * sinf(6.2831853f * (float)i / 5.0f);
            vs[i] = v;
            vp[i] = &vs[i];
        }
        poly.n_vertices = 5;
        poly.vertices = vp;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
        sh.polygon = &poly;
    }
    Collide__V1__SpawnBody s = COLLIDE__V1__SPAWN_BODY__INIT;
    s.kind = kind;
    s.shape = &sh;
    s.position = &pos;
    /* turning runs: every other body at an angle either side of the wrap (-pi/pi) */
    if (f->turning && ((int)(x + y) & 1)) s.angle = x > 0.0f ? 3.1f : -3.1f;
    if (filter) {
        s.category = filter->category;
        s.mask = filter->mask;
        s.sensor = filter->sensor;
    }
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 9;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN;
    m.spawn = &s;
    feed(f, ci, tu_frame(&m, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    uint32_t id = 0;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            id = msgs.m[i]->spawned->body_id;
    tu_free(&msgs);
    return id;
}

static uint32_t spawn_shape(fixture *f, int ci, Collide__V1__BodyKind kind, int shape, float x,
                            float y) {
    return spawn_filtered(f, ci, kind, shape, x, y, NULL);
}

/* The scene: statics of every shape, the player's movers of every shape. */
static void build_scene(fixture *f) {
    for (int i = 0; i < 6; i++)
        CHECK(spawn_shape(f, ADMIN, STATIC, i % 3, -120.0f + 45.0f * (float)i, 100.0f));
    for (int i = 0; i < 6; i++) {
        uint32_t id = spawn_shape(f, PLAYER, MOVING, i % 3, -100.0f + 35.0f * (float)i, -20.0f);
        CHECK(id);
        f->movers[f->nmovers++] = id;
    }
}

/* New intents for some movers, now and then one despawned and respawned (ids far apart come
 * from the generational slots). */
static void churn(fixture *f, collide_rng *r, int tick) {
    if (tick % 5 == 0) {
        uint32_t k = collide_rng_next(r) % (uint32_t)f->nmovers;
        float vx = collide_rng_range(r, -40.0f, 40.0f), vy = collide_rng_range(r, -40.0f, 40.0f);
        float w = f->turning ? collide_rng_range(r, -20.0f, 20.0f) : 0.0f; /* drawn only then */
        feed(f, PLAYER,
             tu_move_turning(0, f->movers[k], ++f->seq, vx, vy, w, f->buf, sizeof f->buf));
    }
    if (tick % 97 == 13) {
        uint32_t k = collide_rng_next(r) % (uint32_t)f->nmovers;
        feed(f, PLAYER, tu_despawn(0, f->movers[k], f->buf, sizeof f->buf));
        uint32_t id = spawn_shape(f, PLAYER, MOVING, (int)(k % 3u), collide_rng_range(r, -100, 100),
                                  collide_rng_range(r, -100, 0));
        if (id) f->movers[k] = id;
    }
    tu_msgs msgs;
    tu_take(&f->c[PLAYER], &msgs); /* the player's own snapshots: not under test */
    tu_free(&msgs);
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The scripted run: a v1 watcher (client 2) sees the whole world for 400 ticks; with `others`,
 * rated and quantized watchers watch beside it. Returns the hash of the watcher's frames. */
static uint64_t scripted_run(bool others) {
    static fixture fx;
    fixture *f = &fx;
    fixture_init(f);
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    f->open[2] = net_client_open(f->srv, &f->c[2], "127.0.0.1:2");
    feed(f, 2, tu_hello(1, 1, NULL, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[2], &msgs); /* the Welcome: 1.1 adds fields to it, not to the snapshots */
    tu_free(&msgs);
    whole_world(f, 2);
    if (others) {
        connect_client(f, 3, NULL, 20, false, NULL, NULL);
        connect_client(f, 4, NULL, 0, true, NULL, NULL);
        connect_client(f, 5, NULL, 7, true, NULL, NULL);
        for (int ci = 3; ci <= 5; ci++)
            whole_world(f, ci);
    }
    build_scene(f);
    collide_rng r = {4242u};
    uint64_t h = 0xcbf29ce484222325ull;
    for (int tick = 0; tick < 400; tick++) {
        churn(f, &r, tick);
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        h = fnv(h, f->c[2].out.data, f->c[2].out.len);
        f->c[2].out.len = 0;
        for (int ci = 0; ci < NCLIENTS; ci++)
            if (ci != 2 && f->open[ci]) f->c[ci].out.len = 0;
    }
    fixture_free(f);
    return h;
}

/* ---- A quantized watcher: the client's decoder over what the server sent ------------------- */

typedef struct qwatch {
    quant_table t;
    double pq, vq; /* the Welcome's quanta */
    uint64_t last; /* tick of its last snapshot */
    unsigned snapshots;
    bool ok;                      /* every snapshot decoded */
    uint8_t shapes[CAPACITY][64]; /* the Shape bytes of new records, in arrival order */
    size_t shape_len[CAPACITY];
    uint32_t shape_id[CAPACITY];
    unsigned flags[CAPACITY]; /* the new records' flags and filters, in the same order */
    quant_filter filter[CAPACITY];
    size_t nshapes;
    unsigned ground_changes; /* change records with bit 7 (1.2: a character's ground changed) */
} qwatch;

static void on_record(void *ctx, const quant_record *r) {
    qwatch *q = ctx;
    q->ground_changes += (r->flags & (QUANT_GROUND | QUANT_NEW)) == QUANT_GROUND;
    if (!(r->flags & QUANT_NEW)) return;
    size_t k = q->nshapes;
    if (k == CAPACITY) return; /* kept for the first CAPACITY new records only */
    if (r->shape_len > sizeof q->shapes[k]) {
        q->ok = false;
        return;
    }
    memcpy(q->shapes[k], r->shape, r->shape_len);
    q->shape_len[k] = r->shape_len;
    q->shape_id[k] = r->body->id;
    q->flags[k] = r->flags;
    q->filter[k] = (quant_filter){r->category, r->mask, r->sensor};
    q->nshapes++;
}

/* Applies every snapshot in c's output; counts them. */
static void qwatch_take(qwatch *q, net_client *c) {
    tu_msgs msgs;
    tu_take(c, &msgs);
    q->ok &= !msgs.malformed;
    for (size_t i = 0; i < msgs.count; i++) {
        if (msgs.m[i]->msg_case != COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT) continue;
        const Collide__V1__Snapshot *s = msgs.m[i]->snapshot;
        q->ok &= s->n_bodies == 0;
        for (size_t k = 0; k < s->n_removed; k++) {
            if (!quant_table_find(&q->t, s->removed[k])) {
                fprintf(stderr, "snapshot %llu: removed %u was never announced\n",
                        (unsigned long long)s->tick, s->removed[k]);
                q->ok = false;
            }
            quant_table_remove(&q->t, s->removed[k]);
        }
        if (!quant_apply(&q->t, s->packed.data, s->packed.len, on_record, q)) {
            fprintf(stderr, "snapshot %llu: packed (%zu bytes) did not decode\n",
                    (unsigned long long)s->tick, s->packed.len);
            q->ok = false;
        }
        q->last = s->tick;
        q->snapshots++;
    }
    tu_free(&msgs);
}

/* A character's ground after the step, from the world itself (not the writer's reading of it). */
static net_ground world_ground(const world *w, world_body_id id) {
    world_character_state cs;
    net_ground g = {false, 0};
    if (world_body_character(w, id, &cs) && cs.grounded) g.grounded = true, g.ground_id = cs.ground;
    return g;
}

/* Whether q's table is exactly the server's quantized state of every body in the world (the
 * watchers see the whole world). */
static bool qwatch_exact(const qwatch *q, fixture *f, char *why, size_t why_size) {
    world_body_id ids[CAPACITY];
    size_t n =
        world_query_aabb(f->w, aabb_make(v2(-HALF, -HALF), v2(HALF, HALF)), 0, ids, CAPACITY);
    if (n != q->t.count) {
        snprintf(why, why_size, "%zu bodies in the world, %zu decoded", n, q->t.count);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        world_body_row info;
        world_body_get(f->w, ids[i], &info);
        const quant_body *b = quant_table_find(&q->t, ids[i]);
        if (!b) {
            snprintf(why, why_size, "body %u not decoded", ids[i]);
            return false;
        }
        quant_state want;
        memset(&want, 0, sizeof want);
        want.px = quant_of(info.position.x, q->pq);
        want.py = quant_of(info.position.y, q->pq);
        want.vx = quant_of(info.velocity.x, q->vq);
        want.vy = quant_of(info.velocity.y, q->vq);
        want.last_input_seq = info.last_input_seq;
        want.angle = quant_angle_of(info.angle);
        want.w = quant_of(info.angular_velocity, 1.0 / QUANT_ANGULAR_VELOCITY_PER_RAD);
        net_ground g = world_ground(f->w, ids[i]);
        want.grounded = g.grounded;
        want.ground_id = g.ground_id;
        if (memcmp(&want, &b->q, sizeof want) != 0) {
            snprintf(why, why_size,
                     "body %u: decoded (%d, %d) v (%d, %d) seq %u a %u w %d ground %u/%u, server "
                     "(%d, %d) v (%d, %d) seq %u a %u w %d ground %u/%u",
                     ids[i], b->q.px, b->q.py, b->q.vx, b->q.vy, b->q.last_input_seq, b->q.angle,
                     b->q.w, b->q.grounded, b->q.ground_id, want.px, want.py, want.vx, want.vy,
                     want.last_input_seq, want.angle, want.w, want.grounded, want.ground_id);
            return false;
        }
        if (b->one_way != world_body_one_way(f->w, ids[i])) {
            snprintf(why, why_size, "body %u: one_way %d", ids[i], (int)b->one_way);
            return false;
        }
        uint32_t kind = info.kind == WORLD_BODY_STATIC ? STATIC : MOVING;
        if (b->kind != kind || b->owner != info.owner) {
            snprintf(why, why_size, "body %u: kind or owner", ids[i]);
            return false;
        }
    }
    return true;
}

static void test_v1_stream_byte_for_byte(void) {
    uint64_t alone = scripted_run(false), beside = scripted_run(true);
    CHECK_MSG(alone == V1_STREAM_HASH, "v1 stream hash %#llx, before 1.1 %#llx",
              (unsigned long long)alone, (unsigned long long)V1_STREAM_HASH);
    CHECK_MSG(beside == alone, "rated and quantized clients changed a v1 client's stream");
}

static void test_interval_is_nearest_divisor(void) {
    CHECK(net_snapshot_interval(60.0f, 0) == 1);
    CHECK(net_snapshot_interval(60.0f, 60) == 1);
    CHECK(net_snapshot_interval(60.0f, 1000) == 1);
    CHECK(net_snapshot_interval(60.0f, 30) == 2);
    CHECK(net_snapshot_interval(60.0f, 20) == 3);
    CHECK(net_snapshot_interval(60.0f, 7) == 9);  /* 6.67 Hz is 0.33 away, 7.5 Hz 0.5 */
    CHECK(net_snapshot_interval(60.0f, 45) == 1); /* 60 and 30 are both 15 away: the higher */
    CHECK(net_snapshot_interval(60.0f, 24) == 3); /* 20 (4 away) beats 30 (6 away) */
    CHECK(net_snapshot_interval(60.0f, 1) == 60);
    CHECK(net_snapshot_interval(30.0f, 7) == 4); /* 7.5 (0.5) beats 6 (1) */
}

/* Rates 60, 30, 20, 7 at tick 60: the Welcome says the rate granted, snapshots come every 1, 2,
 * 3, 9 ticks, and each carries every change since the client's last one (its belief, made from
 * its snapshots alone, is the world's exact state after each of them), removals included. */
static void test_rates_at_tick_60(void) {
    static fixture fx;
    fixture *f = &fx;
    fixture_init(f);
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    const uint32_t asked[4] = {60, 30, 20, 7}, granted[4] = {60, 30, 20, 7},
                   every[4] = {1, 2, 3, 9};
    tu_view view[4];
    for (int k = 0; k < 4; k++) {
        CHECK(connect_client(f, 2 + k, NULL, asked[k], false, NULL, NULL) == granted[k]);
        whole_world(f, 2 + k);
        CHECK(tu_view_init(&view[k], CAPACITY));
    }
    build_scene(f);
    collide_rng r = {99u};
    uint64_t last[4] = {0};
    unsigned count[4] = {0}, removals[4] = {0};
    bool ok = true;
    for (int tick = 0; tick < 600 && ok; tick++) {
        churn(f, &r, tick);
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        for (int k = 0; k < 4 && ok; k++) {
            tu_msgs msgs;
            tu_take(&f->c[2 + k], &msgs);
            for (size_t i = 0; i < msgs.count; i++) {
                const Collide__V1__Snapshot *s = msgs.m[i]->snapshot;
                if (msgs.m[i]->msg_case != COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT) continue;
                if (count[k] > 0 && s->tick - last[k] != every[k]) {
                    fprintf(stderr, "rate %u: snapshot at %llu after %llu\n", asked[k],
                            (unsigned long long)s->tick, (unsigned long long)last[k]);
                    ok = false;
                }
                /* Its phase: the client id mod the interval. */
                if (s->tick % every[k] != f->c[2 + k].id % every[k]) {
                    fprintf(stderr, "rate %u: tick %llu out of phase %u\n", asked[k],
                            (unsigned long long)s->tick, f->c[2 + k].id % every[k]);
                    ok = false;
                }
                removals[k] += (unsigned)s->n_removed;
                if (!tu_view_apply(&view[k], s)) {
                    fprintf(stderr, "rate %u: snapshot at %llu breaks rule 6\n", asked[k],
                            (unsigned long long)s->tick);
                    ok = false;
                }
                last[k] = s->tick;
                count[k]++;
                /* Exact: every body of the world, as it is now. */
                world_body_id ids[CAPACITY];
                size_t n = world_query_aabb(f->w, aabb_make(v2(-HALF, -HALF), v2(HALF, HALF)), 0,
                                            ids, CAPACITY);
                if (n != view[k].count) {
                    fprintf(stderr, "rate %u: %zu bodies, %zu believed\n", asked[k], n,
                            view[k].count);
                    ok = false;
                }
                for (size_t b = 0; b < n && ok; b++) {
                    world_body_row info;
                    world_body_get(f->w, ids[b], &info);
                    const tu_body *tb = tu_view_find(&view[k], ids[b]);
                    ok = tb && tb->px == info.position.x && tb->py == info.position.y &&
                         tb->vx == info.velocity.x && tb->vy == info.velocity.y &&
                         tb->last_input_seq == info.last_input_seq;
                    if (!ok)
                        fprintf(stderr, "rate %u, tick %llu: body %u not exact\n", asked[k],
                                (unsigned long long)s->tick, ids[b]);
                }
            }
            tu_free(&msgs);
        }
    }
    CHECK(ok);
    for (int k = 0; k < 4; k++) {
        /* 600 ticks: 600 / every snapshots, give or take the first. */
        CHECK_MSG(count[k] + 1 >= 600 / every[k] && count[k] <= 600 / every[k] + 1,
                  "rate %u: %u snapshots", asked[k], count[k]);
        CHECK_MSG(removals[k] >= 6, "rate %u saw %u removals", asked[k], removals[k]);
        tu_view_free(&view[k]);
    }
    fixture_free(f);
}

#define DRIFT_TICKS 10000
#define QUANT_WATCHERS 4 /* clients 2..5: quantized at 60, 60, 20 and 7 Hz */

/* 10,000 ticks of churn: after each snapshot of each quantized watcher (two at full rate, one at
 * 20 Hz, one at 7), its decoded state is exactly the server's quantized state; and at the ticks
 * where a quantized watcher at full rate and a float watcher both got one, they agree within
 * half a quantum. Watchers at different rates hold different baselines of the same body: the
 * records copied between clients must be those of the same baseline. */
static void test_no_drift_over_10000_ticks(void) {
    static fixture fx;
    static qwatch qw[QUANT_WATCHERS];
    fixture *f = &fx;
    fixture_init(f);
    f->turning = true;
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    whole_world(f, ADMIN);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    const uint32_t rates[QUANT_WATCHERS] = {0, 60, 20, 7};
    for (int k = 0; k < QUANT_WATCHERS; k++) {
        memset(&qw[k], 0, sizeof qw[k]);
        float pq = 0, vq = 0;
        CHECK(connect_client(f, 2 + k, NULL, rates[k], true, &pq, &vq) != 0);
        CHECK(pq == 1.0f / 256.0f && vq == 1.0f / 64.0f);
        qw[k].pq = pq;
        qw[k].vq = vq;
        qw[k].ok = true;
        whole_world(f, 2 + k);
    }
    tu_view fv;
    CHECK(tu_view_init(&fv, CAPACITY));
    build_scene(f);
    collide_rng r = {31337u};
    char why[256] = "";
    bool ok = true;
    unsigned compared = 0, turning = 0, wrapped = 0;
    for (int tick = 0; tick < DRIFT_TICKS && ok; tick++) {
        churn(f, &r, tick);
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        tu_msgs msgs;
        tu_take(&f->c[ADMIN], &msgs);
        for (size_t i = 0; i < msgs.count; i++)
            if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT)
                ok &= tu_view_apply(&fv, msgs.m[i]->snapshot);
        tu_free(&msgs);
        for (int k = 0; k < QUANT_WATCHERS && ok; k++) {
            unsigned before = qw[k].snapshots;
            qwatch_take(&qw[k], &f->c[2 + k]);
            ok = qw[k].ok;
            if (ok && qw[k].snapshots != before) {
                ok = qwatch_exact(&qw[k], f, why, sizeof why);
                if (!ok)
                    fprintf(stderr, "watcher %d, tick %llu: %s\n", k,
                            (unsigned long long)qw[k].last, why);
            }
        }
        /* The float watcher and the first quantized watcher, same tick: half a quantum. */
        ok &= fv.count == qw[0].t.count;
        for (size_t b = 0; b < fv.count && ok; b++) {
            const quant_body *qb = quant_table_find(&qw[0].t, fv.b[b].id);
            ok = qb != NULL;
            double tol = 0.5 * qw[0].pq + 1e-6 * HALF, vtol = 0.5 * qw[0].vq + 1e-6 * 100;
            ok = ok && fabs(fv.b[b].px - qb->q.px * qw[0].pq) <= tol &&
                 fabs(fv.b[b].py - qb->q.py * qw[0].pq) <= tol &&
                 fabs(fv.b[b].vx - qb->q.vx * qw[0].vq) <= vtol &&
                 fabs(fv.b[b].vy - qb->q.vy * qw[0].vq) <= vtol;
            /* The angle within half of 1/65536 turn, the short way round (the float is in
             * [-pi, pi], the quanta in [0, 65536)); the turning speed within half of 1/1024. */
            if (ok) {
                double turn = 2.0 * 3.14159265358979323846;
                double da = fv.b[b].angle - qb->q.angle * (turn / QUANT_ANGLE_STEPS);
                da -= turn * floor(da / turn + 0.5);
                ok = fabs(da) <= 0.5 * turn / QUANT_ANGLE_STEPS + 1e-6 &&
                     fabs(fv.b[b].w - qb->q.w / (double)QUANT_ANGULAR_VELOCITY_PER_RAD) <=
                         0.5 / QUANT_ANGULAR_VELOCITY_PER_RAD + 1e-6;
                turning += fv.b[b].w != 0.0f;
                wrapped += fv.b[b].angle < 0.0f && qb->q.angle > 32768u;
            }
            if (!ok)
                fprintf(stderr, "tick %d: body %u float and quantized disagree\n", tick,
                        fv.b[b].id);
            compared++;
        }
    }
    CHECK_MSG(ok, "failed before tick %d", DRIFT_TICKS);
    CHECK(compared > 10000u);
    /* the run turned bodies, and negative angles were sent as quanta above half a turn */
    CHECK_MSG(turning > compared / 4 && wrapped > 100, "turning %u wrapped %u of %u", turning,
              wrapped, compared);
    CHECK(qw[2].snapshots >= DRIFT_TICKS / 3 - 1 && qw[2].snapshots <= DRIFT_TICKS / 3 + 1);
    CHECK(qw[3].snapshots >= DRIFT_TICKS / 9 - 1 && qw[3].snapshots <= DRIFT_TICKS / 9 + 1);
    /* The two full-rate watchers share every baseline: about half the records are copies. */
    const net_metrics *m = &f->srv->metrics;
    CHECK_MSG(m->quantized_records_copied_total * 3 >= m->quantized_records_encoded_total,
              "copied %llu, encoded %llu", (unsigned long long)m->quantized_records_copied_total,
              (unsigned long long)m->quantized_records_encoded_total);
    tu_view_free(&fv);
    for (int k = 0; k < QUANT_WATCHERS; k++)
        quant_table_free(&qw[k].t);
    fixture_free(f);
}

/* New bodies of every shape: a quantized watcher's records carry the same Shape, kind and owner
 * as a float watcher's BodyStates, once per body. */
static void test_new_bodies_of_every_shape(void) {
    static fixture fx;
    static qwatch q;
    fixture *f = &fx;
    fixture_init(f);
    f->turning = true; /* half the bodies spawn at an angle: the shape stays body-local */
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    whole_world(f, ADMIN);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    memset(&q, 0, sizeof q);
    q.ok = true;
    float pq, vq;
    CHECK(connect_client(f, 2, NULL, 0, true, &pq, &vq) == 60);
    q.pq = pq;
    q.vq = vq;
    whole_world(f, 2);
    build_scene(f);
    f->srv->now_us += 16667;
    net_tick_run(f->srv, 1);
    tu_msgs msgs;
    tu_take(&f->c[ADMIN], &msgs);
    CHECK(msgs.count == 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT);
    const Collide__V1__Snapshot *s = msgs.m[0]->snapshot;
    qwatch_take(&q, &f->c[2]);
    CHECK(q.ok && q.snapshots == 1 && q.t.count == 12 && s->n_bodies == 12);
    int kinds[3] = {0}, angled = 0;
    for (size_t i = 0; i < s->n_bodies; i++) {
        const Collide__V1__BodyState *bs = s->bodies[i];
        size_t k = 0;
        while (k < q.nshapes && q.shape_id[k] != bs->id)
            k++;
        CHECK(k < q.nshapes);
        uint8_t want[64];
        size_t n = collide__v1__shape__pack(bs->shape, want);
        CHECK_MSG(n == q.shape_len[k] && memcmp(want, q.shapes[k], n) == 0, "body %u's shape",
                  bs->id);
        const quant_body *b = quant_table_find(&q.t, bs->id);
        CHECK(b && b->kind == (uint32_t)bs->kind && b->owner == bs->owner);
        CHECK(b->q.px == quant_of(tu_x(bs->position), pq) &&
              b->q.py == quant_of(tu_y(bs->position), pq));
        CHECK(b->q.angle == quant_angle_of(bs->angle));
        angled += bs->angle != 0.0f;
        kinds[bs->shape->kind_case - 1]++;
    }
    CHECK(kinds[0] == 4 && kinds[1] == 4 && kinds[2] == 4);
    CHECK_MSG(angled >= 4, "%d bodies spawned at an angle", angled);
    tu_free(&msgs);
    /* The next ticks: nothing moves, so nothing is said (no record, no shape again). */
    for (int t = 0; t < 3; t++) {
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
    }
    tu_take(&f->c[2], &msgs);
    CHECK(msgs.count == 3);
    for (size_t i = 0; i < msgs.count; i++)
        CHECK(msgs.m[i]->snapshot->packed.len == 0 && msgs.m[i]->snapshot->n_bodies == 0);
    tu_free(&msgs);
    quant_table_free(&q.t);
    fixture_free(f);
}

/* A new body's filters ride its record (bit 6) only when one differs from the defaults, with the
 * values SpawnBody gave, as the float BodyState carries them. */
static void test_filters_ride_new_records(void) {
    static fixture fx;
    static qwatch q;
    fixture *f = &fx;
    fixture_init(f);
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    whole_world(f, ADMIN);
    memset(&q, 0, sizeof q);
    q.ok = true;
    float pq, vq;
    CHECK(connect_client(f, 2, NULL, 0, true, &pq, &vq) == 60);
    whole_world(f, 2);
    const quant_filter sensor = {4, 0x0f, true}, masked = {1, 0xfffffffeu, false};
    /* a sensor at the default category and mask: its sensor flag alone sends bit 6 (issue 28's
     * audit: without that term it reached quantized clients as a solid body) */
    const quant_filter plain_sensor = {QUANT_DEFAULT_CATEGORY, QUANT_DEFAULT_MASK, true};
    uint32_t id[4] = {spawn_filtered(f, ADMIN, STATIC, 0, -50, 50, &sensor),
                      spawn_filtered(f, ADMIN, STATIC, 1, 0, 50, &masked),
                      spawn_shape(f, ADMIN, STATIC, 2, 50, 50),
                      spawn_filtered(f, ADMIN, STATIC, 0, 100, 50, &plain_sensor)};
    CHECK(id[0] && id[1] && id[2] && id[3]);
    f->srv->now_us += 16667;
    net_tick_run(f->srv, 1);
    qwatch_take(&q, &f->c[2]);
    CHECK(q.ok && q.snapshots == 1 && q.nshapes == 4);
    for (size_t k = 0; k < q.nshapes; k++) {
        const quant_filter *want = q.shape_id[k] == id[0]   ? &sensor
                                   : q.shape_id[k] == id[1] ? &masked
                                   : q.shape_id[k] == id[3] ? &plain_sensor
                                                            : NULL;
        if (want) {
            CHECK_MSG((q.flags[k] & QUANT_FILTER) && q.filter[k].category == want->category &&
                          q.filter[k].mask == want->mask && q.filter[k].sensor == want->sensor,
                      "body %u: flags %#x, category %u, mask %#x, sensor %d", q.shape_id[k],
                      q.flags[k], q.filter[k].category, q.filter[k].mask, q.filter[k].sensor);
        } else {
            CHECK_MSG(!(q.flags[k] & QUANT_FILTER), "body %u at the defaults has bit 6",
                      q.shape_id[k]);
        }
    }
    quant_table_free(&q.t);
    fixture_free(f);
}

/* ---- 1.2: characters and one-way bodies ------------------------------------------------------ */

/* SpawnBody of a box, a character when opt is not NULL, one_way as given; returns its id. */
static uint32_t spawn_side(fixture *f, int ci, Collide__V1__BodyKind kind, float x, float y,
                           float hx, float hy, const Collide__V1__CharacterOptions *opt,
                           bool one_way) {
    Collide__V1__Vec2 half = COLLIDE__V1__VEC2__INIT, pos = COLLIDE__V1__VEC2__INIT;
    half.x = hx, half.y = hy, pos.x = x, pos.y = y;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    box.half_extents = &half;
    Collide__V1__Shape sh = COLLIDE__V1__SHAPE__INIT;
    sh.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
    sh.box = &box;
    Collide__V1__CharacterOptions o = opt ? *opt : (Collide__V1__CharacterOptions){0};
    Collide__V1__SpawnBody s = COLLIDE__V1__SPAWN_BODY__INIT;
    s.kind = kind;
    s.shape = &sh;
    s.position = &pos;
    s.character = opt ? &o : NULL;
    s.one_way = one_way;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 9;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN;
    m.spawn = &s;
    feed(f, ci, tu_frame(&m, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    uint32_t id = 0;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            id = msgs.m[i]->spawned->body_id;
    tu_free(&msgs);
    return id;
}

/* MoveIntent{jump} for a character, walking at vx. */
static void jump(fixture *f, int ci, uint32_t body, float vx) {
    Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
    v.x = vx;
    Collide__V1__MoveIntent mv = COLLIDE__V1__MOVE_INTENT__INIT;
    mv.body_id = body;
    mv.input_seq = ++f->seq;
    mv.velocity = &v;
    mv.jump = true;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE;
    m.move = &mv;
    feed(f, ci, tu_frame(&m, f->buf, sizeof f->buf));
}

/* Whether the float watcher's view says every character's ground as the world does. */
static bool float_ground_exact(const tu_view *v, fixture *f, const uint32_t *ids, size_t n,
                               char *why, size_t why_size) {
    for (size_t i = 0; i < n; i++) {
        const tu_body *b = tu_view_find(v, ids[i]);
        net_ground g = world_ground(f->w, ids[i]);
        if (!b || b->grounded != g.grounded || b->ground_id != g.ground_id) {
            snprintf(why, why_size, "character %u: float says %d on %u, the world %d on %u", ids[i],
                     b ? (int)b->grounded : -1, b ? b->ground_id : 0, (int)g.grounded, g.ground_id);
            return false;
        }
    }
    return true;
}

/* Watchers that come now (clients 3 and 4): the new records of standing characters set bit 7
 * with their ground, and their new BodyStates say it. */
static void late_watchers_see_the_ground(fixture *f, const uint32_t *ch, size_t n) {
    static qwatch late;
    char why[256] = "";
    float pq, vq;
    memset(&late, 0, sizeof late);
    late.ok = true;
    CHECK(connect_client(f, 3, NULL, 0, true, &pq, &vq) == 60);
    late.pq = pq, late.vq = vq;
    whole_world(f, 3);
    connect_client(f, 4, NULL, 0, false, NULL, NULL);
    whole_world(f, 4);
    f->srv->now_us += 16667;
    net_tick_run(f->srv, 1);
    tu_view lf;
    CHECK(tu_view_init(&lf, CAPACITY));
    tu_msgs msgs;
    tu_take(&f->c[4], &msgs);
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT)
            CHECK(tu_view_apply(&lf, msgs.m[i]->snapshot));
    tu_free(&msgs);
    bool late_float = float_ground_exact(&lf, f, ch, n, why, sizeof why);
    tu_view_free(&lf);
    CHECK_MSG(late_float, "late float watcher: %s", why);
    qwatch_take(&late, &f->c[3]);
    CHECK(late.ok && late.snapshots == 1);
    CHECK_MSG(qwatch_exact(&late, f, why, sizeof why), "late: %s", why);
    unsigned standing = 0;
    for (size_t k = 0; k < late.nshapes; k++) {
        bool grounded = world_ground(f->w, late.shape_id[k]).grounded;
        CHECK_MSG(((late.flags[k] & QUANT_GROUND) != 0) == grounded, "late: body %u flags %#x",
                  late.shape_id[k], late.flags[k]);
        standing += grounded;
    }
    CHECK(standing >= 3);
    quant_table_free(&late.t);
}

/* Characters and one-way bodies through every form of TCP snapshot, against the world: a float
 * and a quantized watcher of a side-on world (gravity; a static, a one-way static and a one-way
 * mover; characters spawned by SpawnBody.character falling onto them and onto the bottom bound,
 * jumping by MoveIntent.jump) hold, after every tick, every character's grounded and ground_id
 * as world_body_character says (the quantized one the server's whole quantized state), bit 7
 * rides the change records, a late watcher's new records of standing characters set bit 7, and
 * one_way rides new records only (bit 8, BodyState.one_way). */
static void test_characters_ride_every_form(void) {
    static fixture fx;
    static qwatch q;
    static tu_view fv;
    fixture *f = &fx;
    fixture_init_gravity(f, v2(0.0f, -60.0f));
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    whole_world(f, ADMIN);
    memset(&q, 0, sizeof q);
    q.ok = true;
    float pq, vq;
    CHECK(connect_client(f, 2, NULL, 0, true, &pq, &vq) == 60);
    q.pq = pq, q.vq = vq;
    whole_world(f, 2);
    CHECK(tu_view_init(&fv, CAPACITY));
    uint32_t plat = spawn_side(f, ADMIN, STATIC, -60, -100, 25, 1, NULL, false);
    uint32_t ow = spawn_side(f, ADMIN, STATIC, 60, -100, 25, 1, NULL, true);
    uint32_t owm = spawn_side(f, ADMIN, MOVING, 0, 100, 5, 0.5f, NULL, true);
    CHECK(plat && ow && owm);
    Collide__V1__CharacterOptions opt = COLLIDE__V1__CHARACTER_OPTIONS__INIT;
    opt.jump_speed = 30.0f;
    uint32_t ch[6];
    for (int i = 0; i < 6; i++) {
        ch[i] = spawn_side(f, PLAYER, MOVING, -100.0f + 40.0f * (float)i, 20.0f * (float)(i % 3),
                           0.5f, 1.0f, &opt, false);
        CHECK(ch[i]);
    }
    char why[256] = "";
    uint32_t grounds[8] = {0};
    size_t ngrounds = 0;
    for (int tick = 0; tick < 400; tick++) {
        if (tick % 37 == 36) jump(f, PLAYER, ch[(tick / 37) % 6], tick % 2 ? 5.0f : -5.0f);
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        tu_msgs msgs;
        tu_take(&f->c[ADMIN], &msgs);
        for (size_t i = 0; i < msgs.count; i++)
            if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT)
                CHECK(tu_view_apply(&fv, msgs.m[i]->snapshot));
        tu_free(&msgs);
        tu_take(&f->c[PLAYER], &msgs);
        tu_free(&msgs);
        qwatch_take(&q, &f->c[2]);
        CHECK(q.ok);
        CHECK_MSG(qwatch_exact(&q, f, why, sizeof why), "tick %d, quantized: %s", tick, why);
        CHECK_MSG(float_ground_exact(&fv, f, ch, 6, why, sizeof why), "tick %d: %s", tick, why);
        for (int i = 0; i < 6; i++) {
            uint32_t g = world_ground(f->w, ch[i]).ground_id;
            bool seen = false;
            for (size_t k = 0; k < ngrounds; k++)
                seen |= grounds[k] == g;
            if (!seen && ngrounds < 8) grounds[ngrounds++] = g;
        }
    }
    /* they stood on the static, the one-way static and the bottom bound (0), and flew */
    bool on_plat = false, on_ow = false, on_bound = false;
    for (size_t k = 0; k < ngrounds; k++)
        on_plat |= grounds[k] == plat, on_ow |= grounds[k] == ow, on_bound |= grounds[k] == 0;
    CHECK_MSG(on_plat && on_ow && on_bound, "grounds seen: %zu", ngrounds);
    CHECK_MSG(q.ground_changes >= 12, "bit 7 on %u change records", q.ground_changes);
    /* one_way on the new records of exactly the one-way bodies, both forms */
    for (size_t k = 0; k < q.nshapes; k++) {
        bool want = q.shape_id[k] == ow || q.shape_id[k] == owm;
        CHECK_MSG(((q.flags[k] & QUANT_ONE_WAY) != 0) == want, "body %u: flags %#x", q.shape_id[k],
                  q.flags[k]);
    }
    for (size_t k = 0; k < fv.count; k++)
        CHECK(fv.b[k].one_way == (fv.b[k].id == ow || fv.b[k].id == owm));
    late_watchers_see_the_ground(f, ch, 6);
    tu_view_free(&fv);
    quant_table_free(&q.t);
    fixture_free(f);
}

/* A quantized slow reader: its snapshots are dropped while its queue is over a quarter of
 * --max-queued-bytes; once it reads again, the next snapshot carries what it missed, against
 * what it was actually sent. */
static void test_slow_reader_stays_consistent(void) {
    static fixture fx;
    static qwatch q;
    fixture *f = &fx;
    fixture_init(f);
    f->srv->cfg.max_queued_bytes = 4096; /* drops past 1024 queued bytes */
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    memset(&q, 0, sizeof q);
    q.ok = true;
    float pq, vq;
    CHECK(connect_client(f, 2, NULL, 0, true, &pq, &vq) == 60);
    q.pq = pq;
    q.vq = vq;
    whole_world(f, 2);
    build_scene(f);
    collide_rng r = {5u};
    char why[256] = "";
    for (int round = 0; round < 6; round++) {
        uint64_t drops = f->srv->metrics.slow_client_drops_total;
        /* 40 ticks unread: the queue passes 1024 bytes and snapshots are dropped. */
        for (int t = 0; t < 40; t++) {
            churn(f, &r, round * 40 + t);
            f->srv->now_us += 16667;
            net_tick_run(f->srv, 1);
        }
        CHECK(f->srv->metrics.slow_client_drops_total > drops);
        qwatch_take(&q, &f->c[2]); /* read it all */
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        qwatch_take(&q, &f->c[2]);
        CHECK(q.ok);
        CHECK_MSG(qwatch_exact(&q, f, why, sizeof why), "round %d: %s", round, why);
    }
    quant_table_free(&q.t);
    fixture_free(f);
}

/* The decoder's table is the server's record of what it sent (the known set and its quantized
 * states): same ids, same integers. */
static bool in_sync(const net_client *c, const qwatch *q) {
    if (q->t.count != c->snap.known.count) {
        fprintf(stderr, "decoded %zu bodies, the server's record %u\n", q->t.count,
                c->snap.known.count);
        return false;
    }
    for (uint32_t i = 0; i < c->snap.known.count; i++) {
        const quant_body *b = quant_table_find(&q->t, c->snap.known.entries[i].id);
        if (!b || memcmp(&b->q, &c->snap.qknown[i], sizeof b->q) != 0) {
            fprintf(
                stderr, "body %u (entry %u, moving %u): decoded %s (%d, %d), recorded (%d, %d)\n",
                c->snap.known.entries[i].id, i, c->snap.known.entries[i].moving, b ? "" : "none",
                b ? b->q.px : 0, b ? b->q.py : 0, c->snap.qknown[i].px, c->snap.qknown[i].py);
            return false;
        }
    }
    return true;
}

/* Small frames (256 bytes) and a view that jumps across 120 statics and the movers: new bodies
 * wait for room (round robin), `removed` runs out of its half of the frame and known bodies out
 * of view stay known for a while. After every snapshot the decoder holds exactly what the
 * server believes it sent, and once the view stays put, the world's state. */
static void test_small_frames_stay_in_sync(void) {
    static fixture fx;
    static qwatch q;
    fixture *f = &fx;
    fixture_init(f);
    f->srv->cfg.max_frame = 256;
    net_snapshot_writer_free(f->srv->snapshot);
    CHECK(net_snapshot_writer_init(f->srv->snapshot, &f->srv->cfg, f->w));
    connect_client(f, ADMIN, "adm", 0, false, NULL, NULL);
    connect_client(f, PLAYER, NULL, 0, false, NULL, NULL);
    memset(&q, 0, sizeof q);
    q.ok = true;
    float pq, vq;
    CHECK(connect_client(f, 2, NULL, 0, true, &pq, &vq) == 60);
    q.pq = pq;
    q.vq = vq;
    /* Movers first: their ids are below the statics', so a snapshot with new statics and
     * moved movers has its records out of id order until sorted. */
    for (int i = 0; i < 6; i++) {
        uint32_t id = spawn_shape(f, PLAYER, MOVING, i % 3, -100.0f + 35.0f * (float)i, -20.0f);
        CHECK(id);
        f->movers[f->nmovers++] = id;
    }
    for (int i = 0; i < 120; i++)
        CHECK(spawn_shape(f, ADMIN, STATIC, i % 3, -140.0f + 23.0f * (float)(i % 12),
                          -140.0f + 23.0f * (float)(i / 12)));
    collide_rng r = {777u};
    char why[256] = "";
    bool ok = true;
    for (int tick = 0; tick < 900 && ok; tick++) {
        /* Now and then, and for a while every third tick: a jump while the last one's bodies
         * are still being served. */
        if ((tick % 60 == 0 || (tick >= 300 && tick < 420 && tick % 3 == 0)) && tick < 600) {
            float cx = collide_rng_range(&r, -80, 80), cy = collide_rng_range(&r, -80, 80);
            feed(f, 2, tu_set_view(0, cx, cy, 70, 70, f->buf, sizeof f->buf));
        }
        if (tick == 600) whole_world(f, 2);
        churn(f, &r, tick);
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        qwatch_take(&q, &f->c[2]);
        ok = q.ok && in_sync(&f->c[2], &q);
        if (!ok) fprintf(stderr, "tick %d: the decoder and the server's record differ\n", tick);
    }
    CHECK(ok);
    CHECK_MSG(qwatch_exact(&q, f, why, sizeof why), "at rest on the whole world: %s", why);
    quant_table_free(&q.t);
    fixture_free(f);
}

TEST_MAIN(TEST(test_v1_stream_byte_for_byte), TEST(test_interval_is_nearest_divisor),
          TEST(test_rates_at_tick_60), TEST(test_no_drift_over_10000_ticks),
          TEST(test_new_bodies_of_every_shape), TEST(test_filters_ride_new_records),
          TEST(test_slow_reader_stays_consistent), TEST(test_small_frames_stay_in_sync),
          TEST(test_characters_ride_every_form))

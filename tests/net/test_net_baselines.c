/* Datagram snapshots (PROTOCOL.md "Datagrams: UDP through ENet"), socket-free: a test transport
 * "dg" declared datagram (TCP's framing, so the test reads its output as usual) carries a client
 * whose snapshots are deltas against its acknowledged baselines, within --udp-snapshot-bytes.
 *   - the ring's bookkeeping: acks for unknown and forgotten ticks, the wrap, the full fallback;
 *   - the budget: own bodies first, every other change within the bound net_snapshot_datagram.c
 *     documents, every message within the byte budget;
 *   - a randomized round trip (fixed seeds): a decoder written here from PROTOCOL.md applies full
 *     and baseline snapshots, acknowledges some, loses some at random, and must hold exactly the
 *     state the server recorded for each snapshot it applied, each record exactly the server's
 *     quantized state; once the world rests and nothing is lost, every body in view exactly;
 *     half the seeds are side-on worlds (1.2: gravity, characters that fall, stand and jump,
 * one-way statics): the records' bit 7 is taken against the baseline's ground, bit 8 rides new
 * ones;
 *   - events: one Events message per tick on the client's output, none in snapshots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "net_baselines.h"
#include "net_log.h"
#include "net_snapshot.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "net_transport.h"
#include "quant.h"
#include "varint.h"

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name
#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING

static net_transport dg_transport;

/* TCP's framing and feed, declared datagram: the writer's datagram path, read as TCP output. */
static void dg_register(void) {
    static bool done;
    if (done) return;
    dg_transport = net_tcp_transport;
    dg_transport.name = "dg";
    dg_transport.datagram = true;
    done = net_transport_register(&dg_transport);
}

/* ---- The ring ---------------------------------------------------------------------------- */

static void push_tick(net_baselines *b, uint32_t slots, uint64_t tick) {
    net_baseline_body body;
    memset(&body, 0, sizeof body);
    body.id = (uint32_t)tick;
    body.held = 1;
    body.q.px = (int32_t)tick;
    (void)net_baselines_push(b, slots, tick, &body, 1);
}

static void test_ring_bookkeeping(void) {
    net_baselines b;
    memset(&b, 0, sizeof b);
    CHECK(net_baselines_base(&b) == NULL && net_baselines_newest(&b) == NULL);
    net_baselines_ack(&b, 1); /* nothing sent yet: ignored */
    CHECK(net_baselines_base(&b) == NULL);
    for (uint64_t t = 1; t <= 40; t++)
        push_tick(&b, 32, 2 * t); /* ticks 2, 4, .. 80: 18 .. 80 held */
    CHECK(net_baselines_newest(&b)->tick == 80 && b.used == 32);
    net_baselines_ack(&b, 81); /* never sent */
    net_baselines_ack(&b, 17); /* never sent (odd) */
    net_baselines_ack(&b, 16); /* sent, forgotten */
    CHECK(net_baselines_base(&b) == NULL);
    net_baselines_ack(&b, 18); /* the oldest held */
    CHECK(net_baselines_base(&b) && net_baselines_base(&b)->tick == 18);
    net_baselines_ack(&b, 60);
    net_baselines_ack(&b, 40); /* older than the base: the base stands */
    const net_baseline *base = net_baselines_base(&b);
    CHECK(base && base->tick == 60 && base->count == 1 && base->bodies[0].q.px == 60);
    for (uint64_t t = 41; t <= 61; t++)
        push_tick(&b, 32, 2 * t); /* up to 122: 60 is the oldest held */
    CHECK(net_baselines_base(&b) && net_baselines_base(&b)->tick == 60);
    push_tick(&b, 32, 124); /* overwrites 60: back to full snapshots */
    CHECK(net_baselines_base(&b) == NULL);
    net_baselines_ack(&b, 60);
    CHECK(net_baselines_base(&b) == NULL);
    net_baselines_ack(&b, 124);
    CHECK(net_baselines_base(&b) && net_baselines_base(&b)->tick == 124);
    CHECK(net_baselines_bytes(&b) > 0);
    net_baselines_free(&b);

    /* One slot: a baseline only while the last snapshot is acknowledged before the next. */
    push_tick(&b, 1, 5);
    net_baselines_ack(&b, 5);
    CHECK(net_baselines_base(&b) && net_baselines_base(&b)->tick == 5);
    push_tick(&b, 1, 6);
    CHECK(net_baselines_base(&b) == NULL && net_baselines_newest(&b)->tick == 6);
    net_baselines_free(&b);
}

/* ---- The client's side, from PROTOCOL.md ----------------------------------------------------- */

#define MAXB 512   /* bodies a client state holds */
#define STATES 128 /* states the client keeps, by tick */

typedef struct cbody {
    uint32_t id;
    quant_state q;
} cbody;

typedef struct cstate {
    uint64_t tick; /* 0: empty */
    size_t n;
    cbody b[MAXB]; /* ascending id */
} cstate;

typedef struct client_side {
    cstate states[STATES]; /* applied states, slot tick % STATES */
    uint32_t recs[MAXB];   /* ids with a record in the last snapshot applied */
    size_t nrecs;
    uint64_t applied; /* the last tick applied */
} client_side;

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    return varint_read(p, end, v);
}

static bool get_zz(const uint8_t **p, const uint8_t *end, int64_t *v) {
    uint64_t u;
    if (!varint_read(p, end, &u)) return false;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1u);
    return true;
}

static cbody *cfind(cstate *s, uint32_t id) {
    for (size_t i = 0; i < s->n; i++)
        if (s->b[i].id == id) return &s->b[i];
    return NULL;
}

static int seen_ground, seen_one_way; /* records with bit 7, new records with bit 8 */

/* A record's parts, deltas against *q (PROTOCOL.md "Snapshot rate and quantized snapshots"). */
static bool decode_parts(const uint8_t **p, const uint8_t *end, uint64_t flags, quant_state *q) {
    int64_t a, b;
    if (flags & 1u) {
        if (!get_zz(p, end, &a) || !get_zz(p, end, &b)) return false;
        q->px += (int32_t)a;
        q->py += (int32_t)b;
    }
    if (flags & 2u) {
        if (!get_zz(p, end, &a) || !get_zz(p, end, &b)) return false;
        q->vx += (int32_t)a;
        q->vy += (int32_t)b;
    }
    if (flags & 4u) {
        if (!get_zz(p, end, &a)) return false;
        q->angle = (uint32_t)((int64_t)q->angle + a) & 0xffffu;
    }
    uint64_t u;
    if (flags & 8u) {
        if (!get_varint(p, end, &u)) return false;
        q->last_input_seq = (uint32_t)u;
    }
    if (flags & 16u) {
        if (!get_zz(p, end, &a)) return false;
        q->w += (int32_t)a;
    }
    return true;
}

/* Applies Snapshot.packed to s: false when malformed or against the rules (a change to a body
 * not held, a new body already held, a full snapshot's record without bit 5). */
static bool decode_packed(client_side *cs, cstate *s, const uint8_t *p, size_t len, bool full) {
    uint32_t id = 0;
    cs->nrecs = 0;
    if (len == 0) return true; /* an empty packed field: p may be NULL, no offset on it */
    const uint8_t *end = p + len;
    while (p < end) {
        uint64_t gap, flags, u;
        if (!get_varint(&p, end, &gap) || !get_varint(&p, end, &flags) || (gap == 0 && id != 0))
            return false;
        id += (uint32_t)gap;
        if ((flags & ~0x1ffu) || ((flags & 256u) && !(flags & 32u))) return false;
        cbody *b = cfind(s, id);
        if (flags & 32u) {
            if (b || s->n == MAXB) return false;
            b = &s->b[s->n++];
            memset(b, 0, sizeof *b);
            b->id = id;
        } else if (!b || full) {
            return false;
        }
        if (!decode_parts(&p, end, flags, &b->q)) return false;
        if (flags & 32u) { /* kind, owner, the Shape's bytes */
            if (!get_varint(&p, end, &u) || !get_varint(&p, end, &u) || !get_varint(&p, end, &u) ||
                u > (uint64_t)(end - p))
                return false;
            p += u;
        }
        if (flags & 64u) /* category, mask, sensor */
            for (int i = 0; i < 3; i++)
                if (!get_varint(&p, end, &u)) return false;
        if (flags & 128u) { /* 1.2: grounded (0/1), ground_id, absolute, after bit 6's part */
            uint64_t g;
            if (!get_varint(&p, end, &g) || g > 1 || !get_varint(&p, end, &u)) return false;
            b->q.grounded = (uint16_t)g;
            b->q.ground_id = (uint32_t)u;
            seen_ground++;
        }
        seen_one_way += (flags & 256u) != 0; /* 1.2: a new one-way body, no payload */
        cs->recs[cs->nrecs++] = id;
    }
    return true;
}

static int cmp_cbody(const void *a, const void *b) {
    uint32_t x = ((const cbody *)a)->id, y = ((const cbody *)b)->id;
    return (x > y) - (x < y);
}

/* 1: applied; 0: its baseline is not held (ignored, as PROTOCOL.md says); -1: malformed. */
static int client_apply(client_side *cs, const Collide__V1__Snapshot *snap) {
    cstate *out = &cs->states[snap->tick % STATES];
    static cstate next;
    memset(&next, 0, offsetof(cstate, b));
    if (snap->baseline_tick) {
        const cstate *base = &cs->states[snap->baseline_tick % STATES];
        if (base->tick != snap->baseline_tick) return 0;
        memcpy(&next, base, sizeof next);
    } else if (snap->n_removed) {
        return -1; /* a full snapshot removes nothing: the client dropped everything */
    }
    for (size_t i = 0; i < snap->n_removed; i++) {
        cbody *b = cfind(&next, snap->removed[i]);
        if (!b) return -1;
        *b = next.b[--next.n];
    }
    if (!decode_packed(cs, &next, snap->packed.data, snap->packed.len, snap->baseline_tick == 0))
        return -1;
    qsort(next.b, next.n, sizeof *next.b, cmp_cbody);
    next.tick = snap->tick;
    memcpy(out, &next, sizeof next);
    cs->applied = snap->tick;
    return 1;
}

/* ---- The server's side ------------------------------------------------------------------- */

static size_t tu_ack(uint64_t tick, uint8_t *out, size_t cap) {
    Collide__V1__SnapshotAck a = COLLIDE__V1__SNAPSHOT_ACK__INIT;
    a.tick = tick;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK;
    m.snapshot_ack = &a;
    return tu_frame(&m, out, cap);
}

static void send_ack(net_server *srv, net_client *c, uint64_t tick) {
    uint8_t buf[64];
    net_client_feed(srv, c, buf, tu_ack(tick, buf, sizeof buf));
}

/* The server's quantized state of a body now, as its records are made; a character's ground
 * from the world itself. */
static quant_state server_q(net_server *srv, uint32_t id) {
    world_body_row row;
    world_character_state cs;
    quant_state q;
    memset(&q, 0, sizeof q);
    if (world_body_get(srv->world, id, &row))
        q = net_snapshot_quantize(srv->snapshot, row.position, row.velocity, row.last_input_seq,
                                  row.angle, row.angular_velocity);
    if (world_body_character(srv->world, id, &cs) && cs.grounded) {
        q.grounded = 1;
        q.ground_id = cs.ground;
    }
    return q;
}

/* The client's state equals what the server recorded for that snapshot (its held bodies). */
static bool same_as_recorded(const cstate *s, const net_baseline *r) {
    size_t n = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        if (!r->bodies[i].held) continue;
        const cbody *b = NULL;
        for (size_t k = 0; k < s->n && !b; k++)
            if (s->b[k].id == r->bodies[i].id) b = &s->b[k];
        if (!b || memcmp(&b->q, &r->bodies[i].q, sizeof b->q) != 0) return false;
        n++;
    }
    return n == s->n;
}

typedef struct rig {
    world *w;
    net_server *srv;
    net_client c;
    uint32_t own;         /* the client's own body */
    uint32_t movers[256]; /* the world's movers the test drives */
    size_t nmovers;
    client_side *cs;
} rig;

/* The round trip's side-on seeds (1.2): gravity pulls down hard enough that what falls lands
 * within the run's rest, a third of the new movers are characters, some statics one-way. */
static bool side_on;
#define SIDE_GRAVITY (-200.0f)

static bool rig_open(rig *r, uint32_t snapshot_bytes, uint32_t baselines, uint32_t max_bodies) {
    dg_register();
    memset(r, 0, sizeof *r);
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.udp_snapshot_bytes = snapshot_bytes;
    cfg.udp_baselines = baselines;
    cfg.rate_limit = 1e6f; /* the test acknowledges freely */
    cfg.rate_limit_bytes = 1e9f;
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = max_bodies;
    if (side_on) {
        wc.gravity = v2(0.0f, SIDE_GRAVITY);
        wc.bounds = aabb_make(v2(-120.0f, -120.0f), v2(120.0f, 120.0f));
    }
    r->w = world_create(&wc);
    r->srv = r->w ? net_server_create(&cfg, r->w) : NULL;
    if (!r->srv) return false;
    net_server_set_clock(r->srv, 1000000, 0);
    r->c.transport = &dg_transport;
    if (!net_client_open(r->srv, &r->c, "10.0.0.7:1")) return false;
    uint8_t buf[512];
    tu_msgs msgs;
    net_client_feed(r->srv, &r->c, buf, tu_hello(1, 1, NULL, buf, sizeof buf));
    net_client_feed(r->srv, &r->c, buf, tu_spawn_box(2, MOVING, 0, 0, 0.5f, 0.5f, buf, sizeof buf));
    tu_take(&r->c, &msgs);
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == S(SPAWNED)) r->own = msgs.m[i]->spawned->body_id;
    tu_free(&msgs);
    r->cs = calloc(1, sizeof *r->cs);
    return r->own != 0 && r->cs;
}

static void rig_close(rig *r) {
    if (r->srv) {
        net_client_close(r->srv, &r->c, NET_DISC_CLIENT_CLOSED);
        net_server_destroy(r->srv);
    }
    world_destroy(r->w);
    free(r->cs);
}

static uint32_t spawn_box(rig *r, world_body_kind kind, float x, float y) {
    geom_shape s;
    memset(&s, 0, sizeof s);
    s.kind = GEOM_SHAPE_BOX;
    s.u.half_extents = v2(0.5f, 0.5f);
    world_body_id id = 0;
    return world_spawn(r->w, kind, &s, v2(x, y), 0, &id, NULL) == WORLD_OK ? id : 0;
}

/* The snapshot of this tick on the client's output (NULL: none); every other message is counted
 * in *events when it is an Events message. Checks each message against the byte budget. */
static tu_smsg *take_snapshot(rig *r, tu_msgs *msgs, size_t budget, int *events, bool *over) {
    tu_take(&r->c, msgs);
    tu_smsg *snap = NULL;
    for (size_t i = 0; i < msgs->count; i++) {
        if (msgs->m[i]->msg_case == S(SNAPSHOT)) {
            snap = msgs->m[i];
            *over |= msgs->len[i] > budget;
        } else if (msgs->m[i]->msg_case == S(EVENTS)) {
            (*events)++;
        }
    }
    return snap;
}

/* ---- The randomized round trip ------------------------------------------------------------- */

static uint64_t rng_state;
static int seen_full, seen_delta, seen_removed; /* what the round trip exercised */
static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
static float rndf(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() % 10001u) / 10000.0f;
}

/* The world changes at random: intents, despawns, spawns, and the client's view moves. */
static void drive(rig *r, int t) {
    uint8_t buf[128];
    for (size_t i = 0; i < r->nmovers; i++) {
        if (rnd() % 100u < 2u) {
            world_despawn(r->w, r->movers[i]);
            r->movers[i--] = r->movers[--r->nmovers];
        } else if (rnd() % 100u < 30u) {
            world_set_intent(r->w, r->movers[i], v2(rndf(-20, 20), rndf(-20, 20)), (uint32_t)t);
        }
    }
    while (r->nmovers < 120 && rnd() % 100u < 40u) {
        uint32_t id = spawn_box(r, WORLD_BODY_MOVING, rndf(-100, 100), rndf(-100, 100));
        if (id && side_on && rnd() % 3u == 0) {
            world_character_options o = {.jump_speed = 40.0f};
            if (world_body_set_character(r->w, id, &o) != WORLD_OK) id = 0;
        }
        if (id) r->movers[r->nmovers++] = id;
    }
    if (side_on) /* a character's jump now and then (plain movers ignore it) */
        for (size_t i = 0; i < r->nmovers; i++)
            if (rnd() % 100u < 3u) world_character_jump(r->w, r->movers[i]);
    net_client_feed(r->srv, &r->c, buf,
                    tu_move(0, r->own, (uint32_t)t, rndf(-10, 10), rndf(-10, 10), buf, sizeof buf));
    if (t % 25 == 0) /* side-on: low, where the characters land */
        net_client_feed(r->srv, &r->c, buf,
                        tu_set_view(0, rndf(-60, 60), side_on ? rndf(-110, -70) : rndf(-60, 60),
                                    rndf(20, 60), rndf(20, 60), buf, sizeof buf));
}

/* Each record carries the server's quantized state now, and the state the client built is the
 * one the server recorded for that tick. */
static bool check_applied(rig *r, const Collide__V1__Snapshot *snap) {
    const cstate *s = &r->cs->states[snap->tick % STATES];
    for (size_t i = 0; i < r->cs->nrecs; i++) {
        const cbody *b = NULL;
        for (size_t k = 0; k < s->n && !b; k++)
            if (s->b[k].id == r->cs->recs[i]) b = &s->b[k];
        quant_state q = server_q(r->srv, r->cs->recs[i]);
        if (!b || memcmp(&b->q, &q, sizeof q) != 0) return false;
    }
    const net_baseline *rec = net_baselines_newest(&r->c.snap.baselines);
    return rec && rec->tick == snap->tick && same_as_recorded(s, rec);
}

/* One seed: 300 ticks of churn with loss, then 80 at rest without loss. Returns the snapshots
 * applied (checked), or -1 on a failure (printed). */
static int round_trip(uint64_t seed) {
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1u;
    static const uint32_t bytes[] = {256, 600, 1100};
    static const uint32_t kept[] = {1, 4, 32};
    rig r;
    int applied = -1;
    /* every (bytes, kept) pair comes in plain and side-on seeds; the side-on rest is longer, so
     * that what jumped or fell at its start has landed */
    side_on = (seed / 9) % 2 == 1;
    int end = side_on ? 460 : 380;
    if (!rig_open(&r, bytes[seed % 3], kept[(seed / 3) % 3], 512)) goto done;
    for (int i = 0; i < 15; i++) {
        uint32_t id = spawn_box(&r, WORLD_BODY_STATIC, rndf(-100, 100), rndf(-100, 100));
        if (id && side_on && i % 3 == 0) world_body_set_one_way(r.w, id, true);
    }
    applied = 0;
    for (int t = 1; t <= end; t++) {
        bool rest = t > 300, over = false;
        int events = 0;
        if (!rest) drive(&r, t);
        if (t == 301)
            for (size_t i = 0; i < r.nmovers; i++)
                world_set_intent(r.w, r.movers[i], v2(0, 0), 0);
        net_tick_run(r.srv, 1);
        tu_msgs msgs;
        tu_smsg *m = take_snapshot(&r, &msgs, bytes[seed % 3], &events, &over);
        int res = m && (rest || rnd() % 100u >= 25u) ? client_apply(r.cs, m->snapshot) : 0;
        bool ok = !over && res >= 0 && (res == 0 || check_applied(&r, m->snapshot));
        if (!ok)
            fprintf(stderr, "seed %llu tick %d: over %d apply %d\n", (unsigned long long)seed, t,
                    over, res);
        applied += res > 0;
        if (res > 0) {
            seen_full += m->snapshot->baseline_tick == 0;
            seen_delta += m->snapshot->baseline_tick != 0;
            seen_removed += m->snapshot->n_removed > 0;
        }
        if (res > 0 && (rest || rnd() % 100u < 60u)) send_ack(r.srv, &r.c, m->snapshot->tick);
        if (rnd() % 50u == 0) send_ack(r.srv, &r.c, (uint64_t)t + 1000u); /* never sent */
        tu_free(&msgs);
        if (!ok) {
            applied = -1;
            goto done;
        }
    }
    /* At rest, nothing lost: the client holds every body in view at its exact state. */
    const net_baseline *last = net_baselines_newest(&r.c.snap.baselines);
    const cstate *s = &r.cs->states[r.cs->applied % STATES];
    for (uint32_t i = 0; last && i < last->count; i++) {
        const cbody *b = NULL;
        for (size_t k = 0; k < s->n && !b; k++)
            if (s->b[k].id == last->bodies[i].id) b = &s->b[k];
        quant_state q = server_q(r.srv, last->bodies[i].id);
        if (!last->bodies[i].held || !b || memcmp(&b->q, &q, sizeof q) != 0) {
            fprintf(stderr, "seed %llu: body %u not converged\n", (unsigned long long)seed,
                    last->bodies[i].id);
            applied = -1;
        }
    }
    if (!last || last->count != s->n) applied = -1;
done:
    rig_close(&r);
    side_on = false;
    return applied;
}

static void test_round_trip_with_loss(void) {
    int total = 0;
    for (uint64_t seed = 1; seed <= 36; seed++) {
        int n = round_trip(seed);
        CHECK_MSG(n > 0, "seed %llu", (unsigned long long)seed);
        total += n;
    }
    fprintf(stderr,
            "round trip: %d snapshots applied and checked (%d full, %d against a baseline, %d "
            "with removals; %d records with bit 7, %d with bit 8)\n",
            total, seen_full, seen_delta, seen_removed, seen_ground, seen_one_way);
    CHECK(total > 5000 && seen_full > 36 && seen_delta > 4000 && seen_removed > 100);
    CHECK(seen_ground > 200 && seen_one_way > 50);
}

/* ---- The budget ---------------------------------------------------------------------------- */

/* 100 movers in view, every one changing every tick, 256 bytes a snapshot, every snapshot
 * acknowledged: the own body goes in each one, and no change waits longer than the documented
 * bound, ceil((M - 1) / k) snapshots (M the others' candidates, k the fewest records of others
 * a snapshot carried). */
static void test_budget_bound(void) {
    rig r;
    CHECK(rig_open(&r, 256, 32, 256));
    enum { M = 100 };
    for (int i = 0; i < M; i++) {
        r.movers[i] =
            spawn_box(&r, WORLD_BODY_MOVING, (float)(i % 10) * 3 - 15, (float)(i / 10) * 3 - 15);
        CHECK(r.movers[i]);
    }
    r.nmovers = M;
    rng_state = 7;
    uint64_t last_sent[2048] = {0};
    int longest = 0, k_min = 1 << 30, snaps = 0;
    for (int t = 1; t <= 400; t++) {
        uint8_t buf[128];
        for (int i = 0; i < M; i++)
            world_set_intent(r.w, r.movers[i], v2(rndf(-5, 5), rndf(-5, 5)), (uint32_t)t);
        net_client_feed(r.srv, &r.c, buf,
                        tu_move(0, r.own, (uint32_t)t, rndf(-5, 5), rndf(-5, 5), buf, sizeof buf));
        net_tick_run(r.srv, 1);
        tu_msgs msgs;
        bool over = false;
        int events = 0;
        tu_smsg *m = take_snapshot(&r, &msgs, 256, &events, &over);
        CHECK(m && !over && client_apply(r.cs, m->snapshot) == 1);
        send_ack(r.srv, &r.c, m->snapshot->tick);
        bool own = false;
        int others = 0;
        for (size_t i = 0; i < r.cs->nrecs; i++) {
            uint32_t id = r.cs->recs[i];
            CHECK(id < 2048);
            if (id == r.own) {
                own = true;
                continue;
            }
            others++;
            if (last_sent[id] && t > 20) {
                int waited = (int)((uint64_t)t - last_sent[id]) - 1;
                if (waited > longest) longest = waited;
            }
            last_sent[id] = (uint64_t)t;
        }
        tu_free(&msgs);
        CHECK_MSG(own || t == 1, "tick %d: the own body's change left out", t);
        if (t > 20) {
            snaps++;
            if (others < k_min) k_min = others;
        }
    }
    int bound = (M - 1 + k_min - 1) / k_min;
    fprintf(stderr, "budget: %d snapshots, k_min %d records, longest wait %d, bound %d\n", snaps,
            k_min, longest, bound);
    CHECK(k_min >= 1 && longest <= bound);
    for (int i = 0; i < M; i++)
        CHECK_MSG(last_sent[r.movers[i]] >= 400u - (uint64_t)bound, "body %u starved", r.movers[i]);
    rig_close(&r);
}

/* ---- Memory and events ---------------------------------------------------------------------- */

/* 30 bodies in view, 32 baselines, after the ring's first lap: the bytes one client holds
 * (docs/perf/net.md). */
static void test_memory_at_30_bodies(void) {
    rig r;
    CHECK(rig_open(&r, 1100, 32, 256));
    for (int i = 0; i < 29; i++)
        CHECK(spawn_box(&r, WORLD_BODY_MOVING, (float)(i % 6) * 3 - 9, (float)(i / 6) * 3 - 9));
    for (int t = 1; t <= 80; t++) {
        net_tick_run(r.srv, 1);
        tu_msgs msgs;
        bool over = false;
        int events = 0;
        tu_smsg *m = take_snapshot(&r, &msgs, 1100, &events, &over);
        CHECK(m && !over);
        send_ack(r.srv, &r.c, m->snapshot->tick);
        tu_free(&msgs);
    }
    const net_baseline *last = net_baselines_newest(&r.c.snap.baselines);
    CHECK(last && last->count == 30);
    size_t bytes = net_baselines_bytes(&r.c.snap.baselines);
    fprintf(stderr, "baselines: %zu bytes per client at 30 bodies, 32 baselines (%zu a body)\n",
            bytes, sizeof(net_baseline_body));
    CHECK(bytes <= 32u * (64u * sizeof(net_baseline_body) + sizeof(net_baseline)));
    rig_close(&r);
}

/* Two of the client's bodies pushed into each other: contact events go in Events messages, one
 * per tick that has any, in tick order; the snapshots carry none. */
static void test_events_reliable(void) {
    rig r;
    CHECK(rig_open(&r, 1100, 32, 64));
    uint8_t buf[256];
    tu_msgs msgs;
    net_client_feed(r.srv, &r.c, buf, tu_spawn_box(3, MOVING, 3, 0, 0.5f, 0.5f, buf, sizeof buf));
    tu_take(&r.c, &msgs);
    uint32_t other = 0;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == S(SPAWNED)) other = msgs.m[i]->spawned->body_id;
    tu_free(&msgs);
    CHECK(other);
    int events = 0;
    uint64_t last_tick = 0;
    for (int t = 1; t <= 60; t++) {
        net_client_feed(r.srv, &r.c, buf, tu_move(0, r.own, (uint32_t)t, 5, 0, buf, sizeof buf));
        net_client_feed(r.srv, &r.c, buf, tu_move(0, other, (uint32_t)t, -5, 0, buf, sizeof buf));
        net_tick_run(r.srv, 1);
        tu_take(&r.c, &msgs);
        for (size_t i = 0; i < msgs.count; i++) {
            const tu_smsg *m = msgs.m[i];
            if (m->msg_case == S(SNAPSHOT))
                CHECK(m->snapshot->n_contacts == 0 && m->snapshot->n_sensor_events == 0);
            if (m->msg_case != S(EVENTS)) continue;
            CHECK(m->events->tick > last_tick && m->events->n_contacts > 0);
            last_tick = m->events->tick;
            events++;
        }
        tu_free(&msgs);
    }
    CHECK_MSG(events >= 1, "%d Events messages", events);
    rig_close(&r);
}

TEST_MAIN(TEST(test_ring_bookkeeping), TEST(test_round_trip_with_loss), TEST(test_budget_bound),
          TEST(test_memory_at_30_bodies), TEST(test_events_reliable))

/* Unit tests of the client's UDP baselines (client/qbase.c): snapshots written the server's way
 * (proto/quant.c's encoder, each a delta against a baseline state) over a randomized world with
 * loss, late packets and lost acks, checked against an oracle written here: the state the server
 * meant for each tick, and which snapshots a client that keeps its last N states must apply. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "qbase.h"
#include "qsnap.h"
#include "quant.h"
#include "varint.h"

#define O_BODIES 40    /* bodies alive in the oracle's world at most */
#define O_TICKS 240    /* ticks per seed */
#define O_PACKED 8192u /* room for a snapshot of O_BODIES new records */

typedef struct o_body {
    uint32_t id, kind, owner;
    quant_state q;
    uint8_t shape[8];
    uint32_t shape_len;
    bool has_filter;
    quant_filter filter;
    bool in_view;
} o_body;

/* What the client is meant to hold after one tick: the bodies in view, ascending id. */
typedef struct o_state {
    uint32_t n;
    o_body b[O_BODIES];
} o_state;

typedef struct o_world {
    collide_rng rng;
    uint32_t n, next_id;
    o_body b[O_BODIES]; /* ascending id: new ids only grow */
} o_world;

typedef struct o_snapshot {
    uint64_t tick, baseline;
    uint32_t removed[O_BODIES];
    size_t nremoved;
    uint8_t packed[O_PACKED];
    size_t len;
} o_snapshot;

static uint32_t pick(o_world *w, uint32_t n) { return collide_rng_next(&w->rng) % n; }

static void world_spawn(o_world *w) {
    o_body *b = &w->b[w->n++];
    memset(b, 0, sizeof *b);
    w->next_id += 1 + pick(w, 3) * pick(w, 4000); /* opaque ids: gaps small and large */
    b->id = w->next_id;
    b->kind = 1 + pick(w, 2);
    b->owner = pick(w, 3);
    b->q = (quant_state){.px = (int32_t)pick(w, 20000) - 10000,
                         .py = (int32_t)pick(w, 20000) - 10000,
                         .angle = (uint16_t)pick(w, QUANT_ANGLE_STEPS)};
    b->shape_len = 1 + pick(w, 8);
    for (uint32_t i = 0; i < b->shape_len; i++)
        b->shape[i] = (uint8_t)collide_rng_next(&w->rng);
    b->has_filter = pick(w, 4) == 0;
    b->filter = (quant_filter){1u + pick(w, 8), 0xffu, pick(w, 2) == 1};
    b->in_view = true;
}

/* One tick of the world: some bodies move, turn or take an input, some leave or enter the view,
 * some are despawned and some spawned. Most are left alone, so deltas have untouched bodies. */
static void world_step(o_world *w) {
    for (uint32_t i = 0; i < w->n; i++) {
        o_body *b = &w->b[i];
        uint32_t r = pick(w, 16);
        if (r == 0) b->q.px += (int32_t)pick(w, 2001) - 1000;
        if (r == 1) b->q.vy = (int32_t)pick(w, 2001) - 1000;
        if (r == 2) b->q.angle = (b->q.angle + pick(w, 70000)) % QUANT_ANGLE_STEPS;
        if (r == 3) b->q.last_input_seq += 1 + pick(w, 5);
        if (r == 4) b->q.w = (int32_t)pick(w, 4001) - 2000;
        if (r == 5 && pick(w, 3) == 0) b->in_view = !b->in_view;
        if (r == 6 && pick(w, 4) == 0) { /* despawned */
            memmove(b, b + 1, (w->n - i - 1) * sizeof *b);
            w->n--;
            i--;
        }
    }
    while (w->n < O_BODIES && pick(w, 3) == 0)
        world_spawn(w);
}

static void world_view(const o_world *w, o_state *s) {
    s->n = 0;
    for (uint32_t i = 0; i < w->n; i++)
        if (w->b[i].in_view) s->b[s->n++] = w->b[i];
}

static const o_body *state_find(const o_state *s, uint32_t id) {
    for (uint32_t i = 0; i < s->n; i++)
        if (s->b[i].id == id) return &s->b[i];
    return NULL;
}

/* The server's side: cur as a delta against base (NULL: a full snapshot). */
static void encode(const o_state *cur, const o_state *base, o_snapshot *out) {
    out->len = 0;
    out->nremoved = 0;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < cur->n; i++) {
        const o_body *b = &cur->b[i];
        const o_body *was = base ? state_find(base, b->id) : NULL;
        uint8_t rec[QUANT_CHANGE_MAX + QUANT_NEW_EXTRA_MAX + 8];
        size_t n = was ? quant_encode_change(&b->q, &was->q, rec)
                       : quant_encode_new(&b->q, b->kind, b->owner, b->shape, b->shape_len,
                                          b->has_filter ? &b->filter : NULL, false, rec);
        if (n == 0) continue; /* unchanged against the baseline: no record */
        out->len += varint_write(out->packed + out->len, b->id - prev);
        memcpy(out->packed + out->len, rec, n);
        out->len += n;
        prev = b->id;
    }
    for (uint32_t i = 0; base && i < base->n; i++)
        if (!state_find(cur, base->b[i].id)) out->removed[out->nremoved++] = base->b[i].id;
}

/* The client's state equals what the server meant, shapes and filters included. */
static bool same_state(const cc_qbase *qb, const o_state *want) {
    const quant_table *t = cc_qbase_newest(qb);
    if (t->count != want->n) return false;
    for (uint32_t i = 0; i < want->n; i++) {
        const o_body *w = &want->b[i];
        const quant_body *g = &t->b[i];
        if (g->id != w->id || g->kind != w->kind || g->owner != w->owner ||
            memcmp(&g->q, &w->q, sizeof g->q) != 0)
            return false;
        const cc_qbase_shape *s = cc_qbase_shape_of(qb, w->id);
        quant_filter f = w->has_filter
                             ? w->filter
                             : (quant_filter){QUANT_DEFAULT_CATEGORY, QUANT_DEFAULT_MASK, false};
        if (!s || s->len != w->shape_len || memcmp(s->bytes, w->shape, w->shape_len) != 0 ||
            s->filter.category != f.category || s->filter.mask != f.mask ||
            s->filter.sensor != f.sensor)
            return false;
    }
    return true;
}

/* The client the oracle models: its last n applied ticks. */
typedef struct o_client {
    uint64_t held[CC_QBASE_MAX];
    uint32_t n, next;
    uint64_t newest;
} o_client;

static bool o_holds(const o_client *c, uint64_t tick) {
    for (uint32_t i = 0; i < c->n; i++)
        if (c->held[i] == tick) return true;
    return false;
}

typedef struct o_counts {
    uint64_t full, delta, forgotten, late, removals, untouched, applied;
} o_counts;

static o_state hist[O_TICKS + 1];

/* One snapshot reaches the client: applied exactly when the oracle says, to the state it says. */
static bool deliver(cc_qbase *qb, o_client *c, const o_snapshot *s, o_counts *k, uint64_t *acked,
                    o_world *w) {
    bool want = s->tick > c->newest && (s->baseline == 0 || o_holds(c, s->baseline));
    cc_qbase_result r = cc_qbase_apply(qb, s->tick, s->baseline, s->removed, s->nremoved, s->packed,
                                       s->len, NULL, NULL);
    if (r != (want ? CC_QBASE_APPLIED : CC_QBASE_IGNORED)) return false;
    if (!want) {
        k->late += s->tick <= c->newest;
        k->forgotten += s->tick > c->newest;
        return qb->newest == c->newest && (c->newest == 0 || same_state(qb, &hist[c->newest]));
    }
    c->held[c->next] = s->tick;
    c->next = (c->next + 1) % c->n;
    c->newest = s->tick;
    k->applied++;
    k->full += s->baseline == 0;
    k->delta += s->baseline != 0;
    k->removals += s->nremoved;
    if (s->baseline) {
        for (uint32_t i = 0; i < hist[s->tick].n; i++) {
            const o_body *b = &hist[s->tick].b[i], *was = state_find(&hist[s->baseline], b->id);
            k->untouched += was && memcmp(&was->q, &b->q, sizeof b->q) == 0;
        }
    }
    if (pick(w, 10) < 7 && s->tick > *acked) *acked = s->tick; /* the ack may be lost */
    return same_state(qb, &hist[s->tick]);
}

/* The server's choice: mostly the newest acknowledged state it holds (32 sent), sometimes a full
 * snapshot, sometimes any recent tick (one the client may never have applied, or forgot). */
static uint64_t choose_baseline(o_world *w, uint64_t t, uint64_t acked) {
    uint32_t r = pick(w, 10);
    if (r == 0 || t == 1) return 0;
    if (r == 1) {
        uint64_t lo = t > 40 ? t - 40 : 1;
        return lo + pick(w, (uint32_t)(t - lo));
    }
    return acked && t - acked <= 32 ? acked : 0;
}

static void run_seed(uint32_t seed, uint32_t n, o_counts *k) {
    static o_world w;
    static o_snapshot snap, late;
    static o_client c;
    memset(&w, 0, sizeof w);
    memset(&c, 0, sizeof c);
    w.rng.state = seed;
    c.n = n;
    cc_qbase qb;
    CHECK(cc_qbase_init(&qb, n));
    uint64_t acked = 0;
    bool late_due = false;
    for (uint64_t t = 1; t <= O_TICKS; t++) {
        world_step(&w);
        world_view(&w, &hist[t]);
        snap.tick = t;
        snap.baseline = choose_baseline(&w, t, acked);
        encode(&hist[t], snap.baseline ? &hist[snap.baseline] : NULL, &snap);
        uint32_t fate = pick(&w, 10);
        if (fate == 2 && !late_due) { /* overtaken by the next one */
            late = snap;
            late_due = true;
            continue;
        }
        if (fate >= 2)
            CHECK_MSG(deliver(&qb, &c, &snap, k, &acked, &w), "seed %u tick %llu", seed,
                      (unsigned long long)t);
        if (late_due && late.tick < t) {
            late_due = false;
            CHECK_MSG(deliver(&qb, &c, &late, k, &acked, &w), "seed %u late tick %llu", seed,
                      (unsigned long long)late.tick);
        }
    }
    cc_qbase_free(&qb);
}

static void test_qbase_randomized_against_oracle(void) {
    o_counts k;
    memset(&k, 0, sizeof k);
    static const uint32_t rings[] = {1, 2, 4, 32};
    for (uint32_t seed = 1; seed <= 128; seed++)
        run_seed(seed * 2654435761u, rings[seed % 4], &k);
    /* Every case of the contract was exercised, thousands of times over. */
    CHECK_MSG(k.applied > 12000 && k.full > 2000 && k.delta > 10000 && k.forgotten > 5000 &&
                  k.late > 1000 && k.removals > 10000 && k.untouched > 80000,
              "applied %llu full %llu delta %llu forgotten %llu late %llu removals %llu untouched "
              "%llu",
              (unsigned long long)k.applied, (unsigned long long)k.full,
              (unsigned long long)k.delta, (unsigned long long)k.forgotten,
              (unsigned long long)k.late, (unsigned long long)k.removals,
              (unsigned long long)k.untouched);
}

/* The contract's cases one by one, with a ring of 2. */
static void test_qbase_directed(void) {
    static o_state s1, s2, s3;
    static o_snapshot snap;
    o_world w;
    memset(&w, 0, sizeof w);
    w.rng.state = 99;
    for (int i = 0; i < 3; i++)
        world_spawn(&w);
    world_view(&w, &s1);
    cc_qbase qb;
    CHECK(cc_qbase_init(&qb, 2));
    CHECK(!cc_qbase_init(&(cc_qbase){0}, 0));

    encode(&s1, NULL, &snap); /* full, tick 10 */
    CHECK(cc_qbase_apply(&qb, 10, 0, NULL, 0, snap.packed, snap.len, NULL, NULL) ==
          CC_QBASE_APPLIED);
    CHECK(cc_qbase_newest(&qb)->count == 3);

    s2 = s1; /* tick 11 against 10: body 0 moves, body 1 gone, body 2 untouched */
    s2.b[0].q.px += 77;
    s2.b[1] = s2.b[2];
    s2.n = 2;
    encode(&s2, &s1, &snap);
    CHECK(snap.nremoved == 1 && snap.removed[0] == s1.b[1].id);
    CHECK(cc_qbase_apply(&qb, 11, 10, snap.removed, snap.nremoved, snap.packed, snap.len, NULL,
                         NULL) == CC_QBASE_APPLIED);
    hist[11] = s2;
    CHECK(same_state(&qb, &s2));
    CHECK(quant_table_find(cc_qbase_newest(&qb), s1.b[2].id)->q.px == s1.b[2].q.px);

    /* tick 12 against 10 (the ack of 11 was lost): body 1 is back from the baseline, shape and
     * all, although the newest state had forgotten it */
    s3 = s1;
    s3.b[2].q.vx = 5;
    encode(&s3, &s1, &snap);
    CHECK(cc_qbase_apply(&qb, 12, 10, snap.removed, snap.nremoved, snap.packed, snap.len, NULL,
                         NULL) == CC_QBASE_APPLIED);
    CHECK(same_state(&qb, &s3));

    /* The ring of 2 holds 11 and 12: 10 is forgotten, its deltas ignored, the state kept. */
    encode(&s3, &s1, &snap);
    CHECK(cc_qbase_apply(&qb, 13, 10, snap.removed, snap.nremoved, snap.packed, snap.len, NULL,
                         NULL) == CC_QBASE_IGNORED);
    CHECK(cc_qbase_find(&qb, 10) == NULL && cc_qbase_find(&qb, 11) && cc_qbase_find(&qb, 12));
    CHECK(qb.newest == 12 && same_state(&qb, &s3));
    /* Not newer than the newest: ignored. A baseline at or after its own tick: ignored. */
    CHECK(cc_qbase_apply(&qb, 12, 0, NULL, 0, NULL, 0, NULL, NULL) == CC_QBASE_IGNORED);
    CHECK(cc_qbase_apply(&qb, 14, 14, NULL, 0, NULL, 0, NULL, NULL) == CC_QBASE_IGNORED);

    /* A change to a body the baseline lacks is malformed and changes nothing. */
    uint8_t bad[16];
    size_t n = varint_write(bad, 123456789u);
    bad[n++] = QUANT_POSITION;
    bad[n++] = 2;
    bad[n++] = 2;
    CHECK(cc_qbase_apply(&qb, 14, 12, NULL, 0, bad, n, NULL, NULL) == CC_QBASE_MALFORMED);
    CHECK(qb.newest == 12 && same_state(&qb, &s3));

    /* A full snapshot drops everything held before. */
    encode(&s2, NULL, &snap);
    CHECK(cc_qbase_apply(&qb, 15, 0, NULL, 0, snap.packed, snap.len, NULL, NULL) ==
          CC_QBASE_APPLIED);
    CHECK(same_state(&qb, &s2));
    /* An empty delta keeps every body as in its baseline. */
    CHECK(cc_qbase_apply(&qb, 16, 15, NULL, 0, NULL, 0, NULL, NULL) == CC_QBASE_APPLIED);
    CHECK(same_state(&qb, &s2));
    cc_qbase_free(&qb);
}

/* A body's shape as a real Shape message (a circle), which cc_qsnap_expand_base unpacks; the
 * oracle's random bytes are enough for qbase, which only keeps them. */
static void give_circle(o_body *b) {
    Collide__V1__Circle c = COLLIDE__V1__CIRCLE__INIT;
    Collide__V1__Shape sh = COLLIDE__V1__SHAPE__INIT;
    c.radius = 0.5f;
    sh.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
    sh.circle = &c;
    CHECK(collide__v1__shape__get_packed_size(&sh) <= sizeof b->shape);
    b->shape_len = (uint32_t)collide__v1__shape__pack(&sh, b->shape);
}

/* load's reading of a UDP snapshot: cc_qsnap_expand_base, then our body from the rebuilt state.
 * A delta that leaves our body out (the size budget) still shows the baseline's last_input_seq,
 * although the rewritten message has no record of it. */
static void test_qsnap_body_in_rebuilt_state(void) {
    static o_state s1, s2;
    static o_snapshot enc;
    o_world w;
    memset(&w, 0, sizeof w);
    w.rng.state = 7;
    for (int i = 0; i < 3; i++)
        world_spawn(&w);
    w.b[1].q.last_input_seq = 7;
    for (int i = 0; i < 3; i++)
        give_circle(&w.b[i]);
    world_view(&w, &s1);
    uint32_t ours = s1.b[1].id;
    cc_qbase qb;
    cc_qsnap q;
    CHECK(cc_qbase_init(&qb, 4));
    cc_qsnap_init(&q, 0.5f, 0.25f);
    Collide__V1__Snapshot snap = COLLIDE__V1__SNAPSHOT__INIT;

    encode(&s1, NULL, &enc);
    snap.tick = 10;
    snap.packed = (ProtobufCBinaryData){enc.len, enc.packed};
    CHECK(cc_qsnap_expand_base(&q, &qb, &snap) == CC_QBASE_APPLIED && snap.n_bodies == 3);
    cc_qsnap_done(&q, &snap);
    cc_wire_body b;
    CHECK(cc_qsnap_body_in(&q, cc_qbase_newest(&qb), ours, &b));
    CHECK(b.id == ours && b.has_position && b.last_input_seq == 7);
    CHECK(b.x == (float)s1.b[1].q.px * 0.5f && b.y == (float)s1.b[1].q.py * 0.5f);

    /* tick 11 against 10, an empty delta: no record of ours, its state kept from the baseline */
    snap.tick = 11;
    snap.baseline_tick = 10;
    snap.packed = (ProtobufCBinaryData){0, NULL};
    CHECK(cc_qsnap_expand_base(&q, &qb, &snap) == CC_QBASE_APPLIED && snap.n_bodies == 0);
    cc_qsnap_done(&q, &snap);
    CHECK(cc_qsnap_body_in(&q, cc_qbase_newest(&qb), ours, &b) && b.last_input_seq == 7);

    /* tick 12 against 11: the server applied seq 9 */
    s2 = s1;
    s2.b[1].q.last_input_seq = 9;
    encode(&s2, &s1, &enc);
    snap.tick = 12;
    snap.baseline_tick = 11;
    snap.packed = (ProtobufCBinaryData){enc.len, enc.packed};
    CHECK(cc_qsnap_expand_base(&q, &qb, &snap) == CC_QBASE_APPLIED && snap.n_bodies == 1);
    cc_qsnap_done(&q, &snap);
    CHECK(cc_qsnap_body_in(&q, cc_qbase_newest(&qb), ours, &b) && b.last_input_seq == 9);
    /* Before Spawned (id 0) and for an id not in view: nothing. */
    CHECK(!cc_qsnap_body_in(&q, cc_qbase_newest(&qb), 0, &b));
    CHECK(!cc_qsnap_body_in(&q, cc_qbase_newest(&qb), s1.b[2].id + 1, &b));
    cc_qsnap_free(&q);
    cc_qbase_free(&qb);
}

TEST_MAIN(TEST(test_qbase_directed), TEST(test_qbase_randomized_against_oracle),
          TEST(test_qsnap_body_in_rebuilt_state))

/* proto/quant: the records of Snapshot.packed, encoded as the server does (quant_encode_*) and
 * read back with the client's decoder (quant_apply). Random states to the world bounds and the
 * max speed, zig-zag extremes, angles across the wrap, ids far apart, and malformed input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "quant.h"
#include "varint.h"

#define BOUND 10000.0f     /* the default world's half size is smaller: this covers it */
#define MAX_SPEED 10000.0f /* --max-speed's default */
#define BODIES 64
#define ROUNDS 2000

/* What a server believes it sent one client: the bodies and their last-sent states. */
typedef struct model {
    uint32_t id[BODIES];
    quant_state q[BODIES];
    bool known[BODIES];
    bool one_way[BODIES]; /* its new record said so (bit 8) */
} model;

static int32_t rnd_i32(collide_rng *r) {
    return (int32_t)(collide_rng_next(r) ^ (collide_rng_next(r) << 16));
}

static quant_state random_state(collide_rng *r) {
    quant_state q;
    memset(&q, 0, sizeof q);
    double pq = 1.0 / 256.0, vq = 1.0 / 64.0;
    q.px = quant_of(collide_rng_range(r, -BOUND, BOUND), pq);
    q.py = quant_of(collide_rng_range(r, -BOUND, BOUND), pq);
    q.vx = quant_of(collide_rng_range(r, -MAX_SPEED, MAX_SPEED), vq);
    q.vy = quant_of(collide_rng_range(r, -MAX_SPEED, MAX_SPEED), vq);
    q.angle = quant_angle_of(collide_rng_range(r, -20.0f, 20.0f));
    q.w = quant_of(collide_rng_range(r, -25.2f, 25.2f), 1.0 / QUANT_ANGULAR_VELOCITY_PER_RAD);
    q.last_input_seq = collide_rng_next(r) % 4u == 0 ? collide_rng_next(r) : 0;
    /* 1.2: a quarter stand, on the bounds (0) or on a body (ids up to 2^32 - 1) */
    if (collide_rng_next(r) % 4u == 0) {
        q.grounded = 1;
        q.ground_id = collide_rng_next(r) & 1u ? 0u : collide_rng_next(r) | 1u;
    }
    /* One in eight takes the extremes: the largest deltas a record can carry. */
    if (collide_rng_next(r) % 8u == 0) {
        q.px = collide_rng_next(r) & 1u ? INT32_MAX : INT32_MIN;
        q.vy = collide_rng_next(r) & 1u ? INT32_MAX : INT32_MIN;
        q.w = rnd_i32(r);
        q.angle = collide_rng_next(r) & 1u ? 0 : QUANT_ANGLE_STEPS - 1;
    }
    return q;
}

/* A shape's bytes: any bytes do for the codec (it carries them). */
static const uint8_t fake_shape[] = {0x1a, 0x05, 0x0d, 0x00, 0x00, 0x80, 0x3f};

static void check_table(const quant_table *t, const model *m) {
    size_t n = 0;
    for (int i = 0; i < BODIES; i++) {
        if (!m->known[i]) continue;
        n++;
        const quant_body *b = quant_table_find(t, m->id[i]);
        CHECK_MSG(b != NULL, "body %u lost", m->id[i]);
        if (b) CHECK_MSG(memcmp(&b->q, &m->q[i], sizeof b->q) == 0, "body %u differs", m->id[i]);
        if (b) CHECK_MSG(b->one_way == m->one_way[i], "body %u one_way", m->id[i]);
    }
    CHECK(t->count == n);
}

static void test_round_trip_random(void) {
    collide_rng r = {7777u};
    model m;
    memset(&m, 0, sizeof m);
    /* Ids far apart: gaps up to 2^26 between neighbours, the last near 2^32. */
    uint32_t id = 1;
    for (int i = 0; i < BODIES; i++) {
        m.id[i] = id;
        id += 1u + collide_rng_next(&r) % (1u << 26);
    }
    m.id[BODIES - 1] = UINT32_MAX;
    quant_table t;
    memset(&t, 0, sizeof t);
    uint8_t packed[BODIES * (QUANT_CHANGE_MAX + 32)];
    for (int round = 0; round < ROUNDS; round++) {
        size_t len = 0;
        uint32_t prev = 0;
        unsigned removed[BODIES], nremoved = 0;
        for (int i = 0; i < BODIES; i++) {
            unsigned what = collide_rng_next(&r) % 8u;
            if (m.known[i] && what == 0) {
                removed[nremoved++] = m.id[i];
                m.known[i] = false;
                continue;
            }
            uint8_t rec[QUANT_CHANGE_MAX + 32];
            size_t n;
            quant_state cur = random_state(&r);
            if (!m.known[i]) {
                if (what > 3) continue;
                m.one_way[i] = what & 1u;
                n = quant_encode_new(&cur, 2, 7, fake_shape, sizeof fake_shape, NULL, m.one_way[i],
                                     rec);
                m.known[i] = true;
            } else {
                /* Half the time one part changes a little, as a tick gives (each part alone
                 * must get its own bit); else anything at all. */
                if (what < 5) {
                    cur = m.q[i];
                    int32_t *parts[] = {&cur.px, &cur.py, &cur.vx, &cur.vy, &cur.w};
                    unsigned which = collide_rng_next(&r) % 9u;
                    if (which == 7) {
                        cur.grounded ^= 1u; /* lands or takes off: bit 7 alone */
                        if (!cur.grounded) cur.ground_id = 0;
                    } else if (which == 8) {
                        cur.grounded = 1; /* walks onto another body */
                        cur.ground_id = collide_rng_next(&r);
                    } else if (which < 5) {
                        int64_t x =
                            (int64_t)*parts[which] + (int64_t)(collide_rng_next(&r) % 200u) - 100;
                        *parts[which] = x > INT32_MAX   ? INT32_MAX
                                        : x < INT32_MIN ? INT32_MIN
                                                        : (int32_t)x;
                    } else if (which == 5) {
                        cur.angle = (cur.angle + 65530u) % QUANT_ANGLE_STEPS;
                    } else {
                        cur.last_input_seq++;
                    }
                }
                n = quant_encode_change(&cur, &m.q[i], rec);
                /* The model holds the truth: a change the encoder left out shows as a
                 * difference below. */
                m.q[i] = cur;
                if (n == 0) continue;
            }
            m.q[i] = cur;
            len += varint_write(packed + len, m.id[i] - prev);
            prev = m.id[i];
            memcpy(packed + len, rec, n);
            len += n;
        }
        for (unsigned k = 0; k < nremoved; k++)
            quant_table_remove(&t, removed[k]);
        CHECK_MSG(quant_apply(&t, packed, len, NULL, NULL), "round %d did not decode", round);
        check_table(&t, &m);
    }
    quant_table_free(&t);
}

static void test_rounding_and_zigzag(void) {
    CHECK(quant_of(0.5, 1.0) == 1);
    CHECK(quant_of(-0.5, 1.0) == -1);
    CHECK(quant_of(1.0 / 512.0, 1.0 / 256.0) == 1); /* half a quantum: away from zero */
    CHECK(quant_of(-1.0 / 512.0, 1.0 / 256.0) == -1);
    CHECK(quant_of(0.49999, 1.0) == 0);
    CHECK(quant_of(1e30, 1.0 / 256.0) == INT32_MAX);
    CHECK(quant_of(-1e30, 1.0 / 256.0) == INT32_MIN);
    CHECK(quant_of(NAN, 1.0) == 0);
    CHECK(quant_angle_of(0) == 0);
    CHECK(quant_angle_of(-1e-9) == 0); /* just under a whole turn rounds to 65536: that is 0 */
    CHECK(quant_angle_of(3.14159265358979323846) == 32768);
    CHECK(quant_angle_of(-3.14159265358979323846 / 2) == 49152);
    int64_t ext[] = {0,
                     -1,
                     1,
                     INT32_MAX,
                     INT32_MIN,
                     (int64_t)INT32_MAX - INT32_MIN,
                     (int64_t)INT32_MIN - INT32_MAX,
                     INT64_MAX,
                     INT64_MIN};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        CHECK(quant_unzigzag(quant_zigzag(ext[i])) == ext[i]);
    CHECK(quant_zigzag(0) == 0 && quant_zigzag(-1) == 1 && quant_zigzag(1) == 2);
    CHECK(quant_zigzag(INT64_MIN) == UINT64_MAX);

    /* The widest deltas: every field from one extreme to the other and back. */
    quant_state lo, hi;
    memset(&lo, 0, sizeof lo);
    lo.px = lo.py = lo.vx = lo.vy = lo.w = INT32_MIN;
    hi = lo;
    hi.px = hi.py = hi.vx = hi.vy = hi.w = INT32_MAX;
    hi.angle = 32767;
    hi.last_input_seq = UINT32_MAX;
    hi.grounded = 1;
    hi.ground_id = UINT32_MAX; /* bit 7 at its longest: the bound of QUANT_CHANGE_MAX */
    uint8_t buf[3 * (QUANT_CHANGE_MAX + 16)];
    size_t len = varint_write(buf, UINT32_MAX);
    len += quant_encode_new(&lo, 1, UINT32_MAX, NULL, 0, NULL, false, buf + len);
    quant_table t;
    memset(&t, 0, sizeof t);
    CHECK(quant_apply(&t, buf, len, NULL, NULL));
    len = varint_write(buf, UINT32_MAX);
    size_t n = quant_encode_change(&hi, &lo, buf + len);
    CHECK(n > 0 && n + 5 <= QUANT_CHANGE_MAX);
    CHECK(quant_apply(&t, buf, len + n, NULL, NULL));
    const quant_body *b = quant_table_find(&t, UINT32_MAX);
    CHECK(b && memcmp(&b->q, &hi, sizeof hi) == 0 && b->owner == UINT32_MAX && b->kind == 1);
    len = varint_write(buf, UINT32_MAX);
    len += quant_encode_change(&lo, &hi, buf + len);
    CHECK(quant_apply(&t, buf, len, NULL, NULL));
    b = quant_table_find(&t, UINT32_MAX);
    CHECK(b && memcmp(&b->q, &lo, sizeof lo) == 0);
    /* Angles across the wrap take the short way: 65535 -> 1 is +2, one byte. */
    quant_state a = lo, a2 = lo;
    a.angle = 65535;
    a2.angle = 1;
    n = quant_encode_change(&a2, &a, buf);
    CHECK(n == 2 && buf[0] == QUANT_ANGLE && buf[1] == 4);
    /* Half a turn either way is -32768, the one delta without a positive twin. */
    for (uint32_t from = 0; from < 65536; from += 16384) {
        quant_table u;
        memset(&u, 0, sizeof u);
        quant_state s0 = lo, s1 = lo;
        s0.angle = from;
        s1.angle = (from + 32768) % 65536;
        len = varint_write(buf, 9);
        len += quant_encode_new(&s0, 2, 1, NULL, 0, NULL, false, buf + len);
        CHECK(quant_apply(&u, buf, len, NULL, NULL));
        len = varint_write(buf, 9);
        len += quant_encode_change(&s1, &s0, buf + len);
        CHECK_MSG(quant_apply(&u, buf, len, NULL, NULL), "half a turn from %u", from);
        CHECK(quant_table_find(&u, 9)->q.angle == s1.angle);
        quant_table_free(&u);
    }
    quant_table_free(&t);
}

/* A turning body as the server sends it: the world keeps its angle in [-pi, pi] (IEEE remainder)
 * and its turning speed in rad/s, either sign; each tick's record carries the angle and turning
 * speed deltas against the last sent, and the client's sum stays within half a quantum of the
 * float angle (the short way round) however many times the angle wraps, both ways. */
static void test_turning_body_across_the_wrap(void) {
    const double turn = 2.0 * 3.14159265358979323846;
    const float speeds[] = {-25.13f, -7.3f, 3.1f, 25.13f};
    quant_table t;
    memset(&t, 0, sizeof t);
    uint8_t packed[QUANT_CHANGE_MAX + 32];
    quant_state sent;
    memset(&sent, 0, sizeof sent);
    unsigned wraps = 0, records = 0;
    float angle = 3.0f, w = 0.0f;
    for (int k = 0; k < 4000; k++) {
        if (k % 1000 == 0) w = speeds[k / 1000];
        float next = remainderf(angle + w / 60.0f, 6.28318531f);
        wraps += fabsf(next - angle) > 3.0f;
        angle = next;
        quant_state cur = sent;
        cur.angle = quant_angle_of(angle);
        cur.w = quant_of(w, 1.0 / QUANT_ANGULAR_VELOCITY_PER_RAD);
        size_t n = varint_write(packed, 42);
        n += k == 0 ? quant_encode_new(&cur, 2, 1, NULL, 0, NULL, false, packed + n)
                    : quant_encode_change(&cur, &sent, packed + n);
        sent = cur;
        CHECK_MSG(quant_apply(&t, packed, n, NULL, NULL), "tick %d did not decode", k);
        records++;
        const quant_body *b = quant_table_find(&t, 42);
        if (!b) break;
        double got = b->q.angle * (turn / QUANT_ANGLE_STEPS), d = angle - got;
        d -= turn * floor(d / turn + 0.5);
        /* (the decoded angle is in [0, 65536) by its type, uint16_t) */
        CHECK_MSG(fabs(d) <= 0.5 * turn / QUANT_ANGLE_STEPS + 1e-6,
                  "tick %d: angle %.9g decoded %u", k, (double)angle, b->q.angle);
        CHECK_MSG(fabs(b->q.w / (double)QUANT_ANGULAR_VELOCITY_PER_RAD - w) <=
                      0.5 / QUANT_ANGULAR_VELOCITY_PER_RAD,
                  "tick %d: turning speed %g decoded %d", k, (double)w, b->q.w);
    }
    /* each speed wraps: 4000 ticks at |w| >= 3.1 rad/s pass pi many times, both ways */
    CHECK_MSG(wraps >= 20 && records == 4000, "wraps %u records %u", wraps, records);
    /* a negative spin's angle record is a negative delta: one tick at -7.3 rad/s from quantum 3 */
    quant_state a, b;
    memset(&a, 0, sizeof a);
    b = a;
    a.angle = 3;
    b.angle = quant_angle_of(3 * turn / QUANT_ANGLE_STEPS - 7.3 / 60.0);
    size_t n = quant_encode_change(&b, &a, packed);
    CHECK(n == 3 && packed[0] == QUANT_ANGLE && b.angle > 60000u);
    const uint8_t *p = packed + 1;
    uint64_t u;
    CHECK(varint_read(&p, packed + n, &u) && quant_unzigzag(u) == (int64_t)b.angle - 65536 - 3);
    quant_table_free(&t);
}

/* Bytes a server never sends: each is refused, none is read past its end. */
static void test_malformed(void) {
    quant_table t;
    memset(&t, 0, sizeof t);
    static const quant_state zero;
    quant_state one = zero;
    one.px = 1;
    uint8_t buf[64];
    size_t len = varint_write(buf, 5);
    len += quant_encode_new(&one, 2, 1, fake_shape, sizeof fake_shape, NULL, false, buf + len);
    CHECK(quant_apply(&t, buf, len, NULL, NULL));
    CHECK(!quant_apply(&t, buf, len, NULL, NULL)); /* announced twice */
    for (size_t cut = 1; cut < len; cut++) {
        quant_table u;
        memset(&u, 0, sizeof u);
        CHECK_MSG(!quant_apply(&u, buf, cut, NULL, NULL), "truncated at %zu accepted", cut);
        quant_table_free(&u);
    }
    uint8_t unknown[] = {5, 0x01, 2, 2}; /* a change to id 5: fine */
    CHECK(quant_apply(&t, unknown, sizeof unknown, NULL, NULL));
    uint8_t stranger[] = {6, 0x01, 2, 2}; /* a change to a body never announced */
    CHECK(!quant_apply(&t, stranger, sizeof stranger, NULL, NULL));
    uint8_t flag9[] = {5, 0x80, 0x04, 1, 0}; /* flag bit 9: unknown (7 and 8 are 1.2's) */
    CHECK(!quant_apply(&t, flag9, sizeof flag9, NULL, NULL));
    uint8_t ground_cut[] = {5, 0x80, 0x01, 1}; /* bit 7 without its ground_id */
    CHECK(!quant_apply(&t, ground_cut, sizeof ground_cut, NULL, NULL));
    uint8_t grounded2[] = {5, 0x80, 0x01, 2, 0}; /* grounded is 0 or 1 */
    CHECK(!quant_apply(&t, grounded2, sizeof grounded2, NULL, NULL));
    uint8_t one_way_alone[] = {5, 0x80, 0x02}; /* bit 8 without bit 5 */
    CHECK(!quant_apply(&t, one_way_alone, sizeof one_way_alone, NULL, NULL));
    uint8_t ground_ok[] = {5, 0x80, 0x01, 1, 0}; /* grounded on the bounds: fine */
    CHECK(quant_apply(&t, ground_ok, sizeof ground_ok, NULL, NULL));
    CHECK(quant_table_find(&t, 5)->q.grounded == 1);
    uint8_t filter_alone[] = {5, 0x40, 1, 1, 0}; /* bit 6 without bit 5 */
    CHECK(!quant_apply(&t, filter_alone, sizeof filter_alone, NULL, NULL));
    uint8_t zero_gap[] = {5, 0x01, 2, 2, 0, 0x01, 2, 2}; /* the same id twice */
    CHECK(!quant_apply(&t, zero_gap, sizeof zero_gap, NULL, NULL));
    uint8_t id0[] = {0, 0x01, 2, 2};
    CHECK(!quant_apply(&t, id0, sizeof id0, NULL, NULL));
    uint8_t big_angle[] = {5, 0x04, 0x80, 0x80, 0x04}; /* da = 32768: out of range */
    CHECK(!quant_apply(&t, big_angle, sizeof big_angle, NULL, NULL));
    quant_table_free(&t);
}

/* The record flags the last quant_apply call saw, and the one_way of its bodies. */
typedef struct seen {
    unsigned flags[4];
    bool one_way[4];
    int n;
} seen;

static void on_seen(void *ctx, const quant_record *r) {
    seen *s = ctx;
    if (s->n < 4) s->flags[s->n] = r->flags, s->one_way[s->n++] = r->body->one_way;
}

/* Protocol 1.2's bits, byte for byte as PROTOCOL.md lays them out: bit 7 (varint grounded,
 * varint ground_id, absolute) after bit 6's part whenever either changed, a new grounded
 * character's record included; bit 8 (no payload) on a new one-way body's record; neither on a
 * body that is neither, whose record stays 1.1's. */
static void test_ground_and_one_way_bits(void) {
    static const quant_state zero;
    quant_table t;
    memset(&t, 0, sizeof t);
    uint8_t buf[128];
    /* A new character standing on body 3, with a filter: position, new, filter, ground. */
    quant_state ch = zero;
    ch.py = 256;
    ch.grounded = 1;
    ch.ground_id = 3;
    quant_filter f = {2u, 5u, false};
    size_t n = varint_write(buf, 7);
    n += quant_encode_new(&ch, 2, 9, fake_shape, sizeof fake_shape, &f, false, buf + n);
    const uint8_t want_new[] = {7,    0xe1, 0x01, 0x00, 0x80, 0x04, 2, 9, 7, 0x1a, 0x05,
                                0x0d, 0x00, 0x00, 0x80, 0x3f, 2,    5, 0, 1, 3};
    CHECK_MSG(n == sizeof want_new && memcmp(buf, want_new, n) == 0, "new grounded: %zu bytes", n);
    seen sn = {{0}, {0}, 0};
    CHECK(quant_apply(&t, buf, n, on_seen, &sn) && sn.n == 1 && !sn.one_way[0]);
    CHECK(sn.flags[0] == (QUANT_POSITION | QUANT_NEW | QUANT_FILTER | QUANT_GROUND));
    const quant_body *b = quant_table_find(&t, 7);
    CHECK(b && b->q.grounded == 1 && b->q.ground_id == 3 && b->q.py == 256 && !b->one_way);
    /* It takes off: bit 7 alone, grounded 0 and ground 0. */
    quant_state air = ch;
    air.grounded = 0;
    air.ground_id = 0;
    n = varint_write(buf, 7);
    n += quant_encode_change(&air, &ch, buf + n);
    const uint8_t want_off[] = {7, 0x80, 0x01, 0, 0};
    CHECK_MSG(n == sizeof want_off && memcmp(buf, want_off, n) == 0, "take-off: %zu bytes", n);
    CHECK(quant_apply(&t, buf, n, NULL, NULL));
    b = quant_table_find(&t, 7);
    CHECK(b && b->q.grounded == 0 && b->q.ground_id == 0 && b->q.py == 256);
    /* It lands on the bottom bound while moving: bit 7 after bits 0 and 3's parts. */
    quant_state land = air;
    land.py = 250;
    land.last_input_seq = 4;
    land.grounded = 1;
    n = varint_write(buf, 7);
    n += quant_encode_change(&land, &air, buf + n);
    const uint8_t want_land[] = {7, 0x89, 0x01, 0, 11, 4, 1, 0};
    CHECK_MSG(n == sizeof want_land && memcmp(buf, want_land, n) == 0, "landing: %zu bytes", n);
    CHECK(quant_apply(&t, buf, n, NULL, NULL));
    CHECK(memcmp(&quant_table_find(&t, 7)->q, &land, sizeof land) == 0);
    /* A new character in the air: nothing of bit 7 (its zeros are the new record's base). */
    quant_state falling = zero;
    falling.vy = -64;
    n = varint_write(buf, 8);
    n += quant_encode_new(&falling, 2, 9, NULL, 0, NULL, false, buf + n);
    const uint8_t want_falling[] = {8, 0x22, 0x00, 0x7f, 2, 9, 0};
    CHECK_MSG(n == sizeof want_falling && memcmp(buf, want_falling, n) == 0, "falling: %zu", n);
    /* A new one-way static: bit 8 beside bit 5, no payload. */
    quant_state plat = zero;
    plat.px = 512;
    n += varint_write(buf + n, 1);
    size_t at = n;
    n += quant_encode_new(&plat, 1, 0, fake_shape, sizeof fake_shape, NULL, true, buf + n);
    const uint8_t want_plat[] = {0xa1, 0x02, 0x80, 0x08, 0x00, 1,    0,   7,
                                 0x1a, 0x05, 0x0d, 0x00, 0x00, 0x80, 0x3f};
    CHECK_MSG(n - at == sizeof want_plat && memcmp(buf + at, want_plat, n - at) == 0,
              "one-way: %zu bytes", n - at);
    sn.n = 0;
    CHECK(quant_apply(&t, buf, n, on_seen, &sn) && sn.n == 2);
    CHECK(sn.flags[1] == (QUANT_POSITION | QUANT_NEW | QUANT_ONE_WAY) && sn.one_way[1]);
    CHECK(quant_table_find(&t, 9)->one_way && !quant_table_find(&t, 8)->one_way);
    /* A plain body (1.1): a one-byte flags varint, neither bit, as before 1.2. */
    quant_state plain = zero;
    plain.px = 1;
    n = quant_encode_new(&plain, 2, 9, NULL, 0, NULL, false, buf);
    CHECK(n == 6 && buf[0] == (QUANT_POSITION | QUANT_NEW));
    CHECK(quant_encode_change(&plain, &plain, buf) == 0);
    quant_table_free(&t);
}

TEST_MAIN(TEST(test_round_trip_random), TEST(test_rounding_and_zigzag),
          TEST(test_turning_body_across_the_wrap), TEST(test_malformed),
          TEST(test_ground_and_one_way_bits))

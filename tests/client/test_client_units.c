/* Unit tests of collide-client's pure parts: the histogram against exact percentiles, the wire
 * scanner against protobuf-c's own encoder, and the checker's geometry against known cases. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "collide.pb-c.h"
#include "harness.h"
#include "hist.h"
#include "wire_read.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_hist_slots_cover_values(void) {
    uint64_t lo, width;
    for (uint64_t v = 0; v < 5000000; v += 7) {
        uint32_t i = cc_hist_index(v);
        CHECK(i < CC_HIST_SLOTS);
        cc_hist_slot_range(i, &lo, &width);
        CHECK_MSG(v >= lo && v < lo + width, "v=%llu slot %u [%llu, +%llu)", (unsigned long long)v,
                  i, (unsigned long long)lo, (unsigned long long)width);
        /* The slot is narrow relative to its values: ~1% precision. */
        CHECK(width == 1 || (double)width / (double)lo <= 1.0 / 128.0 + 1e-12);
    }
    CHECK(cc_hist_index(UINT64_MAX) == CC_HIST_SLOTS - 1);
}

static void test_hist_percentiles_match_exact(void) {
    static cc_hist h;
    static uint64_t samples[100000];
    harness_rng rng = {12345};
    for (int round = 0; round < 5; round++) {
        cc_hist_init(&h);
        size_t n = 1000 + (size_t)(harness_rng_next(&rng) % 99000);
        for (size_t i = 0; i < n; i++) {
            /* Log-uniform from 1 us to ~10 s, like latencies. */
            double e = harness_rng_range(&rng, 0.0f, 23.0f);
            samples[i] = (uint64_t)exp2(e);
            cc_hist_record(&h, samples[i]);
        }
        qsort(samples, n, sizeof samples[0], cmp_u64);
        const double ps[] = {50, 90, 99, 99.9};
        for (int k = 0; k < 4; k++) {
            size_t rank = (size_t)ceil(ps[k] / 100.0 * (double)n);
            uint64_t exact = samples[rank - 1];
            uint64_t got = cc_hist_percentile(&h, ps[k]);
            double err = fabs((double)got - (double)exact) / (double)(exact ? exact : 1);
            CHECK_MSG(err <= 0.01 || (exact < 256 && got == exact), "p%g exact %llu got %llu",
                      ps[k], (unsigned long long)exact, (unsigned long long)got);
        }
        CHECK(cc_hist_percentile(&h, 100) == samples[n - 1]);
        CHECK(h.total == n);
    }
}

static void test_hist_merge_equals_combined(void) {
    static cc_hist a, b, all;
    cc_hist_init(&a);
    cc_hist_init(&b);
    cc_hist_init(&all);
    for (uint64_t v = 1; v < 200000; v += 13) {
        cc_hist_record(v % 2 ? &a : &b, v);
        cc_hist_record(&all, v);
    }
    cc_hist_merge(&a, &b);
    CHECK(a.total == all.total && a.min == all.min && a.max == all.max);
    CHECK(cc_hist_percentile(&a, 99) == cc_hist_percentile(&all, 99));
    CHECK(memcmp(a.counts, all.counts, sizeof a.counts) == 0);
}

/* Packs a snapshot with protobuf-c and checks the scanner reads what was packed. */
static void test_wire_scans_snapshot(void) {
    harness_rng rng = {777};
    for (int round = 0; round < 200; round++) {
        Collide__V1__ServerMessage m = COLLIDE__V1__SERVER_MESSAGE__INIT;
        Collide__V1__Snapshot s = COLLIDE__V1__SNAPSHOT__INIT;
        Collide__V1__BodyState st[40], *ptrs[40];
        Collide__V1__Vec2 pos[40];
        Collide__V1__Shape shape = COLLIDE__V1__SHAPE__INIT;
        Collide__V1__Circle circle = COLLIDE__V1__CIRCLE__INIT;
        uint32_t removed[5] = {9, 99, 999, 9999, 99999};
        circle.radius = 0.5f;
        shape.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        shape.circle = &circle;
        size_t n = harness_rng_next(&rng) % 40;
        uint32_t want = 1 + harness_rng_next(&rng) % 60;
        int want_index = -1;
        for (size_t i = 0; i < n; i++) {
            collide__v1__body_state__init(&st[i]);
            collide__v1__vec2__init(&pos[i]);
            st[i].id = (uint32_t)(i * 3 + 1);
            if (st[i].id == want) want_index = (int)i;
            pos[i].x = harness_rng_range(&rng, -100, 100);
            pos[i].y = harness_rng_range(&rng, -100, 100);
            st[i].position = &pos[i];
            st[i].velocity = &pos[i];
            st[i].last_input_seq = harness_rng_next(&rng) % 100000;
            st[i].shape = (i % 3 == 0) ? &shape : NULL;
            st[i].kind = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
            st[i].owner = 5;
            st[i].angle = 0.25f;
            ptrs[i] = &st[i];
        }
        s.tick = (uint64_t)harness_rng_next(&rng) << 20;
        s.n_bodies = n;
        s.bodies = ptrs;
        s.n_removed = (size_t)(round % 6);
        s.removed = removed;
        m.request_id = (uint32_t)round;
        m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT;
        m.snapshot = &s;
        uint8_t buf[8192];
        size_t len = collide__v1__server_message__pack(&m, buf);
        cc_wire_envelope env;
        CHECK(cc_wire_envelope_read(buf, len, &env));
        CHECK(env.kind == CC_MSG_SNAPSHOT && env.request_id == (uint32_t)round);
        cc_wire_snapshot_scan scan;
        CHECK(cc_wire_snapshot_scan_for(env.inner, env.inner_len, want, &scan));
        CHECK(scan.tick == s.tick && scan.bodies == n && scan.removed == s.n_removed);
        CHECK(scan.found == (want_index >= 0));
        if (want_index >= 0) {
            CHECK(scan.body.id == want);
            CHECK(scan.body.last_input_seq == st[want_index].last_input_seq);
            CHECK(scan.body.has_position && scan.body.x == pos[want_index].x &&
                  scan.body.y == pos[want_index].y);
        }
        /* Any truncation is either still a valid prefix of fields or refused; never a crash. */
        for (size_t cut = 0; cut < len; cut += 1 + len / 50) {
            cc_wire_envelope e2;
            if (cc_wire_envelope_read(buf, cut, &e2) && e2.kind == CC_MSG_SNAPSHOT)
                (void)cc_wire_snapshot_scan_for(e2.inner, e2.inner_len, want, &scan);
        }
    }
}

static void test_wire_pong(void) {
    Collide__V1__ServerMessage m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    Collide__V1__Pong p = COLLIDE__V1__PONG__INIT;
    p.client_time_us = 123456789012345ull;
    p.server_time_us = 42;
    p.tick = 777;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_PONG;
    m.pong = &p;
    uint8_t buf[64];
    size_t len = collide__v1__server_message__pack(&m, buf);
    cc_wire_envelope env;
    uint64_t t, tick;
    CHECK(cc_wire_envelope_read(buf, len, &env) && env.kind == CC_MSG_PONG);
    CHECK(cc_wire_pong_read(env.inner, env.inner_len, &t, &tick));
    CHECK(t == p.client_time_us && tick == 777);
    uint8_t junk[3] = {0x0a, 0xff, 0xff}; /* a length running past the end */
    CHECK(!cc_wire_envelope_read(junk, sizeof junk, &env));
}

static cc_shape box_shape(float hx, float hy) {
    cc_shape s;
    memset(&s, 0, sizeof s);
    s.kind = CC_SHAPE_POLY;
    s.count = 4;
    const float x[4] = {-hx, hx, hx, -hx}, y[4] = {-hy, -hy, hy, hy};
    memcpy(s.vx, x, sizeof x);
    memcpy(s.vy, y, sizeof y);
    return s;
}

static void test_check_depths(void) {
    cc_shape a = box_shape(0.5f, 0.5f), b = box_shape(1.0f, 1.0f);
    cc_shape c;
    memset(&c, 0, sizeof c);
    c.kind = CC_SHAPE_CIRCLE;
    c.radius = 0.5f;
    CHECK_NEAR(cc_shape_depth(&a, 1.3f, 0, 0, &b, 0, 0, 0), 0.2, 1e-5);
    CHECK(cc_shape_depth(&a, 1.6f, 0, 0, &b, 0, 0, 0) < 0);
    CHECK_NEAR(cc_shape_depth(&c, 0, 1.4f, 0, &b, 0, 0, 0), 0.1, 1e-5);
    CHECK_NEAR(cc_shape_depth(&c, 0, 0.9f, 0, &c, 0, 0, 0), 0.1, 1e-5);
    /* A circle off a corner: the box-axis overlap alone would call it overlapping. */
    CHECK(cc_shape_depth(&c, 1.4f, 1.4f, 0, &b, 0, 0, 0) < 0);
    /* Rotated by 45 degrees a unit box reaches sqrt(2)*0.5 along x. */
    CHECK_NEAR(cc_shape_depth(&a, 0, 0, 0.78539816f, &b, 1.7f, 0, 0), 0.7071068 - 0.7, 1e-4);
    CHECK(cc_segment_crosses(&b, 0, 0, 0, 0.01f, -5, 0, 3, 0));
    CHECK(!cc_segment_crosses(&b, 0, 0, 0, 0.01f, -5, 2, 3, 2));
    CHECK(!cc_segment_crosses(&b, 0, 0, 0, 0.01f, -5, 0, -4, 0));
    CHECK(cc_segment_crosses(&c, 0, 0, 0, 0.01f, -5, 0.2f, 5, -0.2f));
    CHECK(!cc_segment_crosses(&c, 0, 0, 0, 0.01f, -5, 0.6f, 5, 0.6f));
}

TEST_MAIN(TEST(test_hist_slots_cover_values), TEST(test_hist_percentiles_match_exact),
          TEST(test_hist_merge_equals_combined), TEST(test_wire_scans_snapshot),
          TEST(test_wire_pong), TEST(test_check_depths))

/* Unit tests of collide-client's pure parts: the histogram against exact percentiles, the wire
 * scanner against protobuf-c's own encoder, and the checker's geometry against known cases. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "check.h"
#include "collide.pb-c.h"
#include "harness.h"
#include "hist.h"
#include "load.h"
#include "procstat.h"
#include "qsnap.h"
#include "quant.h"
#include "varint.h"
#include "report.h"
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
    collide_rng rng = {12345};
    for (int round = 0; round < 5; round++) {
        cc_hist_init(&h);
        size_t n = 1000 + (size_t)(collide_rng_next(&rng) % 99000);
        for (size_t i = 0; i < n; i++) {
            /* Log-uniform from 1 us to ~10 s, like latencies. */
            double e = collide_rng_range(&rng, 0.0f, 23.0f);
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
    collide_rng rng = {777};
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
        size_t n = collide_rng_next(&rng) % 40;
        uint32_t want = 1 + collide_rng_next(&rng) % 60;
        int want_index = -1;
        for (size_t i = 0; i < n; i++) {
            collide__v1__body_state__init(&st[i]);
            collide__v1__vec2__init(&pos[i]);
            st[i].id = (uint32_t)(i * 3 + 1);
            if (st[i].id == want) want_index = (int)i;
            pos[i].x = collide_rng_range(&rng, -100, 100);
            pos[i].y = collide_rng_range(&rng, -100, 100);
            st[i].position = &pos[i];
            st[i].velocity = &pos[i];
            st[i].last_input_seq = collide_rng_next(&rng) % 100000;
            st[i].shape = (i % 3 == 0) ? &shape : NULL;
            st[i].kind = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
            st[i].owner = 5;
            st[i].angle = 0.25f;
            ptrs[i] = &st[i];
        }
        s.tick = (uint64_t)collide_rng_next(&rng) << 20;
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

/* --check and turning bodies: a bar whose centre stays put but whose end swings through a thin
 * static between two ticks is tunnelling (the corners' chords are checked, not only the centre's),
 * and the same turn that stays clear of the static is not. */
static void check_turn(float wall_half_y, uint64_t *tunnels, uint64_t *overlaps) {
    cc_check_view *v = calloc(1, sizeof *v);
    cc_check_stats st;
    CHECK(v != NULL);
    if (!v) return;
    cc_check_view_init(v, 0.01f);
    cc_check_stats_init(&st);
    Collide__V1__Vec2 wall_half = COLLIDE__V1__VEC2__INIT, bar_half = COLLIDE__V1__VEC2__INIT;
    wall_half.x = 0.05f, wall_half.y = wall_half_y;
    bar_half.x = 2.0f, bar_half.y = 0.1f;
    Collide__V1__Box wall_box = COLLIDE__V1__BOX__INIT, bar_box = COLLIDE__V1__BOX__INIT;
    wall_box.half_extents = &wall_half;
    bar_box.half_extents = &bar_half;
    Collide__V1__Shape wall_shape = COLLIDE__V1__SHAPE__INIT, bar_shape = COLLIDE__V1__SHAPE__INIT;
    wall_shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX, wall_shape.box = &wall_box;
    bar_shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX, bar_shape.box = &bar_box;
    Collide__V1__Vec2 wall_pos = COLLIDE__V1__VEC2__INIT, bar_pos = COLLIDE__V1__VEC2__INIT;
    bar_pos.x = -1.0f, bar_pos.y = 3.0f;
    Collide__V1__BodyState wall = COLLIDE__V1__BODY_STATE__INIT,
                           bar = COLLIDE__V1__BODY_STATE__INIT;
    wall.id = 100, wall.position = &wall_pos, wall.shape = &wall_shape;
    wall.kind = COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC;
    bar.id = 1, bar.position = &bar_pos, bar.shape = &bar_shape;
    bar.kind = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    Collide__V1__BodyState *both[2] = {&wall, &bar}, *just_bar[1] = {&bar};
    Collide__V1__Snapshot snap = COLLIDE__V1__SNAPSHOT__INIT;
    snap.tick = 10, snap.n_bodies = 2, snap.bodies = both;
    cc_check_snapshot(v, &snap, &st);
    /* next tick: turned a quarter turn clockwise about the same centre, lying along x = -1 */
    bar.angle = -1.5707964f;
    bar.angular_velocity = -94.0f;
    snap.tick = 11, snap.n_bodies = 1, snap.bodies = just_bar;
    cc_check_snapshot(v, &snap, &st);
    *tunnels = st.counts[CC_VIOL_TUNNEL];
    *overlaps = st.counts[CC_VIOL_OVERLAP_STATIC];
    free(v);
}
static void test_check_turning_tunnel(void) {
    uint64_t tunnels, overlaps;
    /* a wall up to y = 2.5: the bar's end swings from (1, 2.9) to (-1.1, 1) through it */
    check_turn(2.5f, &tunnels, &overlaps);
    CHECK(tunnels == 1 && overlaps == 0);
    /* a wall up to y = 1.5: the swing passes above it */
    check_turn(1.5f, &tunnels, &overlaps);
    CHECK(tunnels == 0 && overlaps == 0);
}

static void test_check_gaps(void) {
    cc_shape a = box_shape(0.5f, 0.5f), c;
    memset(&c, 0, sizeof c);
    c.kind = CC_SHAPE_CIRCLE;
    c.radius = 0.5f;
    /* apart along x, apart diagonally (corner to corner), overlapping */
    CHECK_NEAR(cc_shape_gap(&a, 0, 0, 0, &a, 1.003f, 0, 0), 0.003, 1e-6);
    CHECK_NEAR(cc_shape_gap(&a, 0, 0, 0, &a, 1.3f, 1.4f, 0), 0.5, 1e-6);
    CHECK_NEAR(cc_shape_gap(&a, 0, 0, 0, &a, 0.9f, 0, 0), -0.1, 1e-6);
    CHECK_NEAR(cc_shape_gap(&c, 0, 0, 0, &c, 1.25f, 0, 0), 0.25, 1e-6);
    /* a circle off a box corner: the distance to the corner */
    CHECK_NEAR(cc_shape_gap(&c, 1.1f, 1.1f, 0, &a, 0, 0, 0), sqrt(2 * 0.6 * 0.6) - 0.5, 1e-6);
    CHECK_NEAR(cc_shape_gap(&a, 0, 0, 0, &c, 0, 1.002f, 0), 0.002, 1e-6);
    /* the tolerance: 1e-4 near the origin, growing with the coordinates */
    CHECK_NEAR(cc_event_tolerance(0, 0, 1, 1), 1e-4 + 16 * 1.1920929e-7, 1e-9);
    CHECK(cc_event_tolerance(1000, 0, 0, 0) > cc_event_tolerance(10, 0, 0, 0));
}

/* A hand-built snapshot for the event checks: box bodies of half extent 0.5, events, removals. */
typedef struct ev_snap {
    Collide__V1__Snapshot snap;
    Collide__V1__BodyState bs[4], *bsp[4];
    Collide__V1__Vec2 pos[4], half[4];
    Collide__V1__Shape shape[4];
    Collide__V1__Box box[4];
    Collide__V1__ContactEvent ce[4], *cep[4];
    Collide__V1__SensorEvent se[4], *sep[4];
    uint32_t removed[4];
} ev_snap;

static void ev_reset(ev_snap *e, uint64_t tick) {
    memset(e, 0, sizeof *e);
    collide__v1__snapshot__init(&e->snap);
    e->snap.tick = tick;
    e->snap.bodies = e->bsp;
    e->snap.contacts = e->cep;
    e->snap.sensor_events = e->sep;
    e->snap.removed = e->removed;
}
static void ev_body(ev_snap *e, uint32_t id, bool is_static, float x, float y) {
    size_t k = e->snap.n_bodies++;
    collide__v1__body_state__init(&e->bs[k]);
    collide__v1__vec2__init(&e->pos[k]);
    collide__v1__vec2__init(&e->half[k]);
    collide__v1__shape__init(&e->shape[k]);
    collide__v1__box__init(&e->box[k]);
    e->pos[k].x = x, e->pos[k].y = y;
    e->half[k].x = e->half[k].y = 0.5f;
    e->box[k].half_extents = &e->half[k];
    e->shape[k].kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
    e->shape[k].box = &e->box[k];
    e->bs[k].id = id;
    e->bs[k].position = &e->pos[k];
    e->bs[k].shape = &e->shape[k];
    e->bs[k].kind = is_static ? COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
                              : COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    e->bsp[k] = &e->bs[k];
}
static void ev_contact(ev_snap *e, uint32_t a, uint32_t b, bool begin) {
    size_t k = e->snap.n_contacts++;
    collide__v1__contact_event__init(&e->ce[k]);
    e->ce[k].a = a, e->ce[k].b = b, e->ce[k].begin = begin;
    e->cep[k] = &e->ce[k];
}
static void ev_sensor(ev_snap *e, uint32_t sensor, uint32_t visitor, bool begin) {
    size_t k = e->snap.n_sensor_events++;
    collide__v1__sensor_event__init(&e->se[k]);
    e->se[k].sensor = sensor, e->se[k].visitor = visitor, e->se[k].begin = begin;
    e->sep[k] = &e->se[k];
}

/* Body 1 moves along x next to the static 2 at the origin: a gap of g puts it at 1 + g. */
static uint64_t ev_run(cc_check_view *v, cc_check_stats *st, uint64_t tick, float gap, int event,
                       bool removed) {
    static ev_snap e;
    ev_reset(&e, tick);
    if (tick == 1) ev_body(&e, 2, true, 0, 0);
    ev_body(&e, 1, false, 1.0f + gap, 0);
    if (event) ev_contact(&e, 1, 2, event > 0);
    if (removed) e.removed[e.snap.n_removed++] = 2;
    cc_check_snapshot(v, &e.snap, st);
    return cc_check_total(st);
}

static cc_check_view *ev_view(cc_check_stats *st) {
    static cc_check_view v;
    cc_check_view_init(&v, 0.01f);
    cc_check_stats_init(st);
    return &v;
}

static void test_check_contact_events(void) {
    cc_check_stats st;
    cc_check_view *v = ev_view(&st);
    /* the first snapshot: what it carries may be older than its tick, so nothing is measured */
    CHECK(ev_run(v, &st, 1, 0.5f, 0, false) == 0);
    /* begin at 1 skin, rest at 3 skins (the hysteresis band), end at 10: all in order */
    CHECK(ev_run(v, &st, 2, 0.001f, 1, false) == 0);
    CHECK(ev_run(v, &st, 3, 0.003f, 0, false) == 0);
    CHECK(ev_run(v, &st, 4, 0.0019f, 0, false) == 0);
    CHECK(ev_run(v, &st, 5, 0.01f, -1, false) == 0);
    CHECK(st.contact_events == 2 && st.events_measured == 2 && v->open_count == 0);
    /* a begin at 3 skins is too far; its end at 3 skins too near */
    CHECK(ev_run(v, &st, 6, 0.003f, 1, false) == 1 && st.counts[CC_VIOL_CONTACT_BEGIN_FAR] == 1);
    CHECK(ev_run(v, &st, 7, 0.003f, -1, false) == 2 && st.counts[CC_VIOL_CONTACT_END_NEAR] == 1);
    CHECK_NEAR(st.examples[1].depth, -0.003, 1e-5);
    /* a begin just inside 2 skins and an end just past 4, within the float tolerance */
    CHECK(ev_run(v, &st, 8, 0.00205f, 1, false) == 2);
    CHECK(ev_run(v, &st, 9, 0.00395f, -1, false) == 2);
    /* twice begun; ended without a begin */
    CHECK(ev_run(v, &st, 10, 0.001f, 1, false) == 2);
    CHECK(ev_run(v, &st, 11, 0.001f, 1, false) == 3 &&
          st.counts[CC_VIOL_CONTACT_DUPLICATE_BEGIN] == 1);
    CHECK(ev_run(v, &st, 12, 0.01f, -1, false) == 3);
    CHECK(ev_run(v, &st, 13, 0.01f, -1, false) == 4 &&
          st.counts[CC_VIOL_CONTACT_END_WITHOUT_BEGIN] == 1);
    /* begun, then parted with no end: counted once, however long it stays open */
    CHECK(ev_run(v, &st, 14, 0.001f, 1, false) == 4);
    CHECK(ev_run(v, &st, 15, 0.0041f, 0, false) == 4); /* within the tolerance of 4 skins */
    CHECK(ev_run(v, &st, 16, 0.01f, 0, false) == 5 && st.counts[CC_VIOL_CONTACT_NOT_ENDED] == 1);
    CHECK(ev_run(v, &st, 17, 0.02f, 0, false) == 5);
    CHECK(ev_run(v, &st, 18, 0.02f, -1, false) == 5);
    /* a snapshot after a gap in the ticks carries events of ticks since: no geometry */
    CHECK(ev_run(v, &st, 31, 0.5f, 1, false) == 5);
    CHECK(ev_run(v, &st, 32, 0.5f, 0, false) == 6); /* but then it has parted, unended */
    CHECK(ev_run(v, &st, 33, 0.5f, -1, false) == 6);
    /* the end of a contact with a body removed: whatever the gap; no end with it: not ended */
    CHECK(ev_run(v, &st, 34, 0.001f, 1, false) == 6);
    CHECK(ev_run(v, &st, 35, 0.001f, -1, true) == 6);
    cc_check_stats st2;
    v = ev_view(&st2);
    CHECK(ev_run(v, &st2, 1, 0.5f, 0, false) == 0);
    CHECK(ev_run(v, &st2, 2, 0.001f, 1, false) == 0);
    CHECK(ev_run(v, &st2, 3, 0.001f, 0, true) == 1 && st2.counts[CC_VIOL_CONTACT_NOT_ENDED] == 1);
    /* the totals fail the run: every kind counts */
    cc_check_stats_merge(&st, &st2);
    CHECK(cc_check_total(&st) == 7);
}

static void test_check_sensor_events(void) {
    cc_check_stats st;
    cc_check_view *v = ev_view(&st);
    static ev_snap e;
    /* sensor 2 (static), visitor 1: overlapping at x 0.9, apart at 1.5 */
    ev_reset(&e, 1);
    ev_body(&e, 2, true, 0, 0);
    e.bs[0].sensor = 1; /* the overlap checks leave it out: it blocks nothing */
    ev_body(&e, 1, false, 3.0f, 0);
    cc_check_snapshot(v, &e.snap, &st);
    ev_reset(&e, 2);
    ev_body(&e, 1, false, 0.9f, 0);
    ev_sensor(&e, 2, 1, true);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 0 && st.events_measured == 1);
    ev_reset(&e, 3);
    ev_body(&e, 1, false, 1.5f, 0);
    ev_sensor(&e, 2, 1, false);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 0);
    /* a crossing within the tick: begin and end together, apart at the tick's end */
    ev_reset(&e, 4);
    ev_body(&e, 1, false, -1.5f, 0);
    ev_sensor(&e, 2, 1, true);
    ev_sensor(&e, 2, 1, false);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 0 && v->open_count == 0);
    /* begun apart */
    ev_reset(&e, 5);
    ev_sensor(&e, 2, 1, true);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 1 && st.counts[CC_VIOL_SENSOR_BEGIN_APART] == 1);
    /* ended overlapping */
    ev_reset(&e, 6);
    ev_body(&e, 1, false, 0.5f, 0);
    ev_sensor(&e, 2, 1, false);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 2 && st.counts[CC_VIOL_SENSOR_END_OVERLAPPING] == 1);
    /* begun twice; then apart with no end */
    ev_reset(&e, 7);
    ev_sensor(&e, 2, 1, true);
    cc_check_snapshot(v, &e.snap, &st);
    ev_reset(&e, 8);
    ev_sensor(&e, 2, 1, true);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 3 && st.counts[CC_VIOL_SENSOR_DUPLICATE_BEGIN] == 1);
    ev_reset(&e, 9);
    ev_body(&e, 1, false, 3.0f, 0);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 4 && st.counts[CC_VIOL_SENSOR_NOT_ENDED] == 1);
    ev_reset(&e, 10);
    ev_sensor(&e, 2, 1, false);
    ev_sensor(&e, 2, 1, false);
    cc_check_snapshot(v, &e.snap, &st);
    CHECK(cc_check_total(&st) == 5 && st.counts[CC_VIOL_SENSOR_END_WITHOUT_BEGIN] == 1);
    CHECK(st.sensor_events == 10);
}

/* Quantized snapshots and rotation: cc_qsnap_expand gives a record's angle in [-pi, pi) (the
 * server's range) and its turning speed in rad/s, and --check's oriented overlap test sees the
 * decoded angle: a bar beside a static is clear at angle 0 and through it a quarter turn on. */
static size_t box_shape_bytes(float hx, float hy, uint8_t *out) {
    Collide__V1__Vec2 half = COLLIDE__V1__VEC2__INIT;
    half.x = hx, half.y = hy;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    box.half_extents = &half;
    Collide__V1__Shape sh = COLLIDE__V1__SHAPE__INIT;
    sh.kind_case = COLLIDE__V1__SHAPE__KIND_BOX, sh.box = &box;
    return collide__v1__shape__pack(&sh, out);
}
static void test_qsnap_turning_and_check(void) {
    cc_qsnap q;
    cc_qsnap_init(&q, 1.0f / 256.0f, 1.0f / 64.0f);
    cc_check_view *v = calloc(1, sizeof *v);
    CHECK(v != NULL);
    if (!v) return;
    cc_check_stats st;
    cc_check_view_init(v, 0.01f);
    cc_check_stats_init(&st);
    uint8_t shape[32], packed[256];
    quant_state bar, wall;
    memset(&bar, 0, sizeof bar);
    memset(&wall, 0, sizeof wall);
    wall.py = 256 + 128;                             /* (0, 1.5): a unit box from y 1 to 2 */
    bar.angle = QUANT_ANGLE_STEPS - 1;               /* just under a whole turn: -2 pi / 65536 */
    bar.w = -3 * QUANT_ANGULAR_VELOCITY_PER_RAD / 2; /* -1.5 rad/s */
    size_t n = varint_write(packed, 1);
    n += quant_encode_new(&bar, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, 7, shape,
                          box_shape_bytes(2.0f, 0.1f, shape), NULL, false, packed + n);
    n += varint_write(packed + n, 99);
    n += quant_encode_new(&wall, COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC, 0, shape,
                          box_shape_bytes(0.5f, 0.5f, shape), NULL, false, packed + n);
    Collide__V1__Snapshot snap = COLLIDE__V1__SNAPSHOT__INIT;
    snap.tick = 10;
    snap.packed.data = packed, snap.packed.len = n;
    CHECK(cc_qsnap_expand(&q, &snap) && snap.n_bodies == 2);
    CHECK(snap.bodies[0]->id == 1);
    CHECK_NEAR(snap.bodies[0]->angle, -2.0 * 3.14159265358979 / 65536, 1e-7);
    CHECK(snap.bodies[0]->angular_velocity == -1.5f);
    cc_check_snapshot(v, &snap, &st);
    cc_qsnap_done(&q, &snap);
    CHECK(cc_check_total(&st) == 0);
    /* a quarter turn the short way (+16385 quanta across the wrap), spinning the other way */
    quant_state turned = bar;
    turned.angle = QUANT_ANGLE_STEPS / 4;
    turned.w = 2 * QUANT_ANGULAR_VELOCITY_PER_RAD;
    n = varint_write(packed, 1);
    n += quant_encode_change(&turned, &bar, packed + n);
    snap.tick = 11;
    snap.packed.len = n;
    CHECK(cc_qsnap_expand(&q, &snap) && snap.n_bodies == 1);
    CHECK_NEAR(snap.bodies[0]->angle, 3.14159265358979 / 2, 1e-6);
    CHECK(snap.bodies[0]->angular_velocity == 2.0f);
    cc_check_snapshot(v, &snap, &st);
    cc_qsnap_done(&q, &snap);
    CHECK(st.counts[CC_VIOL_OVERLAP_STATIC] == 1);
    /* three quarters: decoded across the wrap as -pi/2 (only the angle is checked here) */
    quant_state back = turned;
    back.angle = 3 * QUANT_ANGLE_STEPS / 4;
    n = varint_write(packed, 1);
    n += quant_encode_change(&back, &turned, packed + n);
    snap.tick = 12;
    snap.packed.len = n;
    CHECK(cc_qsnap_expand(&q, &snap) && snap.n_bodies == 1);
    CHECK_NEAR(snap.bodies[0]->angle, -3.14159265358979 / 2, 1e-6);
    cc_qsnap_done(&q, &snap);
    cc_qsnap_free(&q);
    free(v);
}

/* 1.2 over the quantized form: cc_qsnap_expand gives a record's grounded and ground_id (bit 7)
 * in every BodyState and one_way (bit 8) in a new one; --check leaves a one-way body's overlaps
 * alone (a mover may pass it from below) and a sensor's (bit 6, which the TCP path now passes
 * on), and still reports a plain static's. */
static void test_qsnap_ground_one_way_and_check(void) {
    cc_qsnap q;
    cc_qsnap_init(&q, 1.0f / 256.0f, 1.0f / 64.0f);
    cc_check_view *v = calloc(1, sizeof *v);
    CHECK(v != NULL);
    if (!v) return;
    cc_check_stats st;
    cc_check_view_init(v, 0.01f);
    cc_check_stats_init(&st);
    uint8_t shape[32], packed[512];
    const uint32_t moving = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING,
                   fixed = COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC;
    quant_state ch, plat, sensor, wall, crate;
    memset(&ch, 0, sizeof ch);
    plat = sensor = wall = crate = ch;
    ch.grounded = 1, ch.ground_id = 5; /* id 2, standing on the one-way body 5 */
    plat.py = 64;                      /* id 5: one-way, overlapping the character */
    sensor.px = 256 * 10;              /* id 6: a sensor over the crate */
    crate.px = 256 * 10;               /* id 7 */
    wall.px = 256 * 20, crate.py = 0;  /* id 9: a plain static under ... */
    quant_state crate2 = wall;         /* id 10: ... a crate inside it: a violation */
    quant_filter sf = {1u, 0xffffffffu, true};
    size_t n = varint_write(packed, 2);
    n += quant_encode_new(&ch, moving, 7, shape, box_shape_bytes(0.5f, 1.0f, shape), NULL, false,
                          packed + n);
    n += varint_write(packed + n, 3);
    n += quant_encode_new(&plat, fixed, 0, shape, box_shape_bytes(5.0f, 0.5f, shape), NULL, true,
                          packed + n);
    n += varint_write(packed + n, 1);
    n += quant_encode_new(&sensor, fixed, 0, shape, box_shape_bytes(1.0f, 1.0f, shape), &sf, false,
                          packed + n);
    n += varint_write(packed + n, 1);
    n += quant_encode_new(&crate, moving, 7, shape, box_shape_bytes(0.5f, 0.5f, shape), NULL, false,
                          packed + n);
    n += varint_write(packed + n, 2);
    n += quant_encode_new(&wall, fixed, 0, shape, box_shape_bytes(1.0f, 1.0f, shape), NULL, false,
                          packed + n);
    n += varint_write(packed + n, 1);
    n += quant_encode_new(&crate2, moving, 7, shape, box_shape_bytes(0.5f, 0.5f, shape), NULL,
                          false, packed + n);
    Collide__V1__Snapshot snap = COLLIDE__V1__SNAPSHOT__INIT;
    snap.tick = 10;
    snap.packed.data = packed, snap.packed.len = n;
    CHECK(cc_qsnap_expand(&q, &snap) && snap.n_bodies == 6);
    const Collide__V1__BodyState *const *b = (const Collide__V1__BodyState *const *)snap.bodies;
    CHECK(b[0]->id == 2 && b[0]->grounded && b[0]->ground_id == 5 && !b[0]->one_way);
    CHECK(b[1]->id == 5 && !b[1]->grounded && b[1]->ground_id == 0 && b[1]->one_way);
    CHECK(b[2]->id == 6 && b[2]->sensor && !b[2]->one_way);
    cc_check_snapshot(v, &snap, &st);
    cc_qsnap_done(&q, &snap);
    CHECK_MSG(cc_check_total(&st) == 1 && st.counts[CC_VIOL_OVERLAP_STATIC] == 1,
              "%llu violations, %llu overlapping a static", (unsigned long long)cc_check_total(&st),
              (unsigned long long)st.counts[CC_VIOL_OVERLAP_STATIC]);
    /* the character takes off: bit 7 alone, both back to false and 0 */
    quant_state off = ch;
    off.grounded = 0, off.ground_id = 0;
    n = varint_write(packed, 2);
    n += quant_encode_change(&off, &ch, packed + n);
    snap.tick = 11;
    snap.packed.len = n;
    CHECK(cc_qsnap_expand(&q, &snap) && snap.n_bodies == 1);
    CHECK(snap.bodies[0]->id == 2 && !snap.bodies[0]->grounded && snap.bodies[0]->ground_id == 0);
    cc_qsnap_done(&q, &snap);
    cc_qsnap_free(&q);
    free(v);
}

/* cc_load_parse on a fixed argv (getopt permutes argv, so each call gets its own copy). */
static int parse(load_opts *o, int n, const char *const *args) {
    char *argv[16];
    argv[0] = (char *)"load";
    for (int i = 0; i < n && i < 15; i++)
        argv[i + 1] = (char *)args[i];
    return cc_load_parse(n + 1, argv, o);
}

static void test_load_parse_rooms_backend(void) {
    static load_opts o;
    CHECK(parse(&o, 0, NULL) == -1);
    CHECK(o.rooms == 0 && o.backend_npcs == 0 && o.admin_token == NULL);
    CHECK(strcmp(o.room_prefix, "load-") == 0);

    const char *rooms[] = {"--rooms", "3", "--room-prefix", "arena_"};
    CHECK(parse(&o, 4, rooms) == -1);
    CHECK(o.rooms == 3 && strcmp(o.room_prefix, "arena_") == 0);

    const char *too_many[] = {"--rooms", "1001"};
    CHECK(parse(&o, 2, too_many) == CC_EXIT_USAGE);
    const char *most[] = {"--rooms", "1000"};
    CHECK(parse(&o, 2, most) == -1 && o.rooms == 1000);
    const char *bad_prefix[] = {"--rooms", "2", "--room-prefix", "a b"};
    CHECK(parse(&o, 4, bad_prefix) == CC_EXIT_USAGE);
    /* A prefix is only checked when rooms are in use. */
    const char *unused_prefix[] = {"--room-prefix", "a b"};
    CHECK(parse(&o, 2, unused_prefix) == -1);

    const char *no_token[] = {"--backend", "200"};
    CHECK(parse(&o, 2, no_token) == CC_EXIT_USAGE);
    const char *backend[] = {"--backend", "200", "--admin-token", "s3cret", "--rate", "20"};
    CHECK(parse(&o, 6, backend) == -1);
    CHECK(o.backend_npcs == 200 && strcmp(o.admin_token, "s3cret") == 0 && o.rate_hz == 20.0);
    const char *bad_count[] = {"--backend", "-1", "--admin-token", "x"};
    CHECK(parse(&o, 4, bad_count) == CC_EXIT_USAGE);
}

/* load speaks udp (its own port, its baselines), but its backend only TCP or WebSocket. */
static void test_load_parse_udp(void) {
    static load_opts o;
    const char *udp[] = {"--transport", "udp", "--udp-baselines", "8"};
    CHECK(parse(&o, 4, udp) == -1);
    CHECK(o.common.udp && !o.common.ws && o.common.port == 7779 && o.common.udp_baselines == 8);
    const char *udp_backend[] = {"--transport", "udp", "--backend", "5", "--admin-token", "x"};
    CHECK(parse(&o, 6, udp_backend) == CC_EXIT_USAGE);
    const char *no_baselines[] = {"--transport", "udp", "--udp-baselines", "0"};
    CHECK(parse(&o, 4, no_baselines) == CC_EXIT_USAGE);
}

static void test_load_room_names(void) {
    uint32_t per_room[3] = {0, 0, 0};
    for (uint32_t i = 0; i < 10; i++) {
        uint32_t r = cc_load_room_of(i, 3);
        CHECK(r == i % 3);
        per_room[r]++;
    }
    CHECK(per_room[0] == 4 && per_room[1] == 3 && per_room[2] == 3);
    char name[CC_LOAD_ROOM_NAME + 1];
    CHECK(cc_load_room_name(name, sizeof name, "load-", 12) && strcmp(name, "load-12") == 0);
    CHECK(cc_load_room_name(name, sizeof name, "a.b:c_D-", 0) && strcmp(name, "a.b:c_D-0") == 0);
    /* 63 bytes of prefix and one digit make the longest valid name; one more is refused. */
    char prefix[70];
    memset(prefix, 'p', 63);
    prefix[63] = '\0';
    CHECK(cc_load_room_name(name, sizeof name, prefix, 9));
    CHECK(strlen(name) == 64);
    CHECK(!cc_load_room_name(name, sizeof name, prefix, 10));
    char roomy[200]; /* the 64-byte bound holds whatever the buffer */
    CHECK(!cc_load_room_name(roomy, sizeof roomy, prefix, 10));
    CHECK(!cc_load_room_name(name, sizeof name, "x/", 1));
    CHECK(!cc_load_room_name(name, sizeof name, "caf\xc3\xa9", 1));
}

static void test_room_stats_merge(void) {
    /* Two workers' shares of the same room add up to the room, histogram included. */
    static cc_room_stats a, b, into, all;
    cc_room_stats_init(&a);
    cc_room_stats_init(&b);
    cc_room_stats_init(&into);
    cc_room_stats_init(&all);
    collide_rng rng = {4242};
    for (int i = 0; i < 3000; i++) {
        uint64_t v = 100u + collide_rng_next(&rng) % 50000u;
        cc_hist_record(i % 3 ? &a.ack_us : &b.ack_us, v);
        cc_hist_record(&all.ack_us, v);
    }
    a.players = 2, a.intents_scheduled = 60, a.intents_acked = 59, a.errors = 1, a.disconnects = 1;
    b.players = 3, b.intents_scheduled = 90, b.intents_acked = 90, b.errors = 0, b.disconnects = 2;
    cc_room_stats_merge(&into, &a);
    cc_room_stats_merge(&into, &b);
    CHECK(into.players == 5 && into.intents_scheduled == 150 && into.intents_acked == 149);
    CHECK(into.errors == 1 && into.disconnects == 3);
    CHECK(into.ack_us.total == 3000);
    const double ps[] = {50, 99, 99.9};
    for (int k = 0; k < 3; k++)
        CHECK(cc_hist_percentile(&into.ack_us, ps[k]) == cc_hist_percentile(&all.ack_us, ps[k]));
}

static void test_backend_batch_and_acks(void) {
    enum { N = 5 };
    Collide__V1__ClientMessage m;
    Collide__V1__MoveIntents batch;
    Collide__V1__MoveIntent items[N], *ptrs[N];
    Collide__V1__Vec2 vels[N];
    const uint32_t ids[N] = {7, 8, 300, 70000, 9};
    const float vx[N] = {1, -2, 0.5f, 0, 3}, vy[N] = {0, 1, -1, 4, 0};
    cc_backend_fill_batch(&m, &batch, items, ptrs, vels, N, ids, 42, vx, vy);
    uint8_t buf[512];
    size_t len = collide__v1__client_message__pack(&m, buf);
    Collide__V1__ClientMessage *back = collide__v1__client_message__unpack(NULL, len, buf);
    CHECK(back != NULL);
    CHECK(back->msg_case == COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE_BATCH);
    CHECK(back->request_id != 0);
    CHECK(back->move_batch && back->move_batch->n_intents == N);
    for (uint32_t i = 0; i < N; i++) {
        const Collide__V1__MoveIntent *it = back->move_batch->intents[i];
        CHECK(it->body_id == ids[i] && it->input_seq == 42);
        CHECK(it->velocity && it->velocity->x == vx[i] && it->velocity->y == vy[i]);
    }
    collide__v1__client_message__free_unpacked(back, NULL);

    /* Acks within two ticks, and errors by code with their batch index. */
    static cc_backend_stats st;
    cc_backend_stats_init(&st, N);
    st.tick_period_us = 16666;
    cc_backend_ack(&st, 5000);
    cc_backend_ack(&st, 33332);
    cc_backend_ack(&st, 33333);
    cc_backend_ack(&st, 90000);
    CHECK(st.intents_acked == 4 && st.acked_within_2_ticks == 2 && st.ack_us.total == 4);
    cc_backend_error_add(&st, 1, 3, 3);
    cc_backend_error_add(&st, 8, 0, 3);
    cc_backend_error_add(&st, 99, 1, 3);
    CHECK(st.errors[1] == 1 && st.errors[8] == 1 && st.errors[CC_ERROR_CODES - 1] == 1);
    CHECK(st.item_errors == 2 && st.examples_len == 3);
    CHECK(st.examples[0].code == 1 && st.examples[0].index == 3 && st.examples[0].request_id == 3);
}

/* --daemon-pid's parser: utime and stime are fields 14 and 15, counted after the last ')' (a
 * command name may hold spaces and parentheses); a short or garbled line is refused. */
/* ---- the character checks (check.h's top): a client's own character 10, a box (0.4, 0.8),
 * under gravity (0, -30) at 60 Hz. Statics and movers as boxes of their own half extents. ---- */

typedef struct ch_body {
    uint32_t id;
    float x, y, hx, hy, vx, vy;
    bool is_static, one_way, grounded;
    uint32_t ground, seq;
} ch_body;

/* One snapshot of the bodies given (all with their shapes: the first one tells the view). */
static void ch_apply(cc_check_view *v, cc_check_stats *st, uint64_t tick, const ch_body *b, int n) {
    Collide__V1__Snapshot snap = COLLIDE__V1__SNAPSHOT__INIT;
    Collide__V1__BodyState bs[4], *bsp[4];
    Collide__V1__Vec2 pos[4], vel[4], half[4];
    Collide__V1__Shape shape[4];
    Collide__V1__Box box[4];
    for (int k = 0; k < n && k < 4; k++) {
        collide__v1__body_state__init(&bs[k]);
        collide__v1__vec2__init(&pos[k]);
        collide__v1__vec2__init(&vel[k]);
        collide__v1__vec2__init(&half[k]);
        collide__v1__shape__init(&shape[k]);
        collide__v1__box__init(&box[k]);
        pos[k].x = b[k].x, pos[k].y = b[k].y;
        vel[k].x = b[k].vx, vel[k].y = b[k].vy;
        half[k].x = b[k].hx, half[k].y = b[k].hy;
        box[k].half_extents = &half[k];
        shape[k].kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        shape[k].box = &box[k];
        bs[k].id = b[k].id;
        bs[k].position = &pos[k];
        bs[k].velocity = &vel[k];
        bs[k].shape = &shape[k];
        bs[k].kind = b[k].is_static ? COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
                                    : COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
        bs[k].one_way = b[k].one_way;
        bs[k].grounded = b[k].grounded;
        bs[k].ground_id = b[k].ground;
        bs[k].last_input_seq = b[k].seq;
        bsp[k] = &bs[k];
    }
    snap.tick = tick;
    snap.n_bodies = (size_t)n;
    snap.bodies = bsp;
    cc_check_snapshot(v, &snap, st);
}

static cc_check_view *ch_view(cc_check_stats *st) {
    static cc_check_view v;
    cc_check_view_init(&v, 0.01f);
    cc_check_stats_init(st);
    cc_check_world(&v, 0.0f, -30.0f, 60, 0.0f, 0.0f);
    cc_check_own_character(&v, 10, NULL);
    return &v;
}

#define CH_FLOOR                                                                                   \
    { 1, 0, -0.5f, 10, 0.5f, 0, 0, true, false, false, 0, 0 }
#define CH_REST_Y 0.801f /* the character's centre resting on the floor's top, y 0 */

/* I8: still on a static, bit-identical; a move is a violation, a walk or a crowd is not judged. */
static void test_check_character_rest(void) {
    cc_check_stats st;
    cc_check_view *v = ch_view(&st);
    for (uint32_t q = 1; q <= 8; q++)
        cc_check_own_intent(v, q, q == 4 ? 5.0f : 0.0f, 0.0f, false);
    ch_body b[3] = {CH_FLOOR, {10, 0, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 1}};
    ch_apply(v, &st, 1, b, 2);
    b[1].seq = 2;
    ch_apply(v, &st, 2, b + 1, 1); /* the intent changed, nothing moved */
    CHECK(st.rest_checks == 1 && cc_check_total(&st) == 0);
    b[1].seq = 3, b[1].x = 0.001f;
    ch_apply(v, &st, 3, b + 1, 1);
    CHECK(st.rest_checks == 2 && st.counts[CC_VIOL_REST_MOVED] == 1);
    CHECK(st.examples[0].a == 10 && st.examples[0].b == 1 && st.examples[0].tick == 3);
    b[1].seq = 4, b[1].x = 0.1f, b[1].vx = 5.0f; /* walking: not judged */
    ch_apply(v, &st, 4, b + 1, 1);
    b[1].seq = 5, b[1].vx = 0.0f;
    ch_apply(v, &st, 5, b + 1, 1); /* stopped: judged, the walk's intent no longer in force */
    CHECK(st.rest_checks == 3 && st.counts[CC_VIOL_REST_MOVED] == 1);
    b[1].seq = 6, b[1].x = 0.2f;
    b[2] = (ch_body){11, 1.2f, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0};
    ch_apply(v, &st, 6, b + 1, 2); /* another body near it: it may have been pushed */
    b[1].seq = 7, b[1].x = 0.3f;
    ch_apply(v, &st, 8, b + 1, 1); /* a snapshot skipped: consecutive only */
    CHECK(st.rest_checks == 3 && st.counts[CC_VIOL_REST_MOVED] == 1);
}

/* The jump rule: from the ground, within coyote time after walking off (not after a jump), and
 * only after a press. */
static void test_check_character_jumps(void) {
    cc_check_stats st;
    cc_check_view *v = ch_view(&st);
    ch_body b[2] = {CH_FLOOR, {10, 0, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0}};
    ch_apply(v, &st, 1, b, 2);
    cc_check_own_intent(v, 1, 0.0f, 0.0f, true);
    b[1] = (ch_body){10, 0, 1.0f, 0.4f, 0.8f, 0, 12.0f, false, false, false, 0, 1};
    ch_apply(v, &st, 2, b + 1, 1); /* a jump from the ground, pressed */
    CHECK(st.jumps_seen == 1 && st.jumps_checked == 1 && cc_check_total(&st) == 0);
    b[1].vy = 11.5f, b[1].y = 1.2f;
    ch_apply(v, &st, 3, b + 1, 1);
    cc_check_own_intent(v, 2, 0.0f, 0.0f, true);
    b[1].vy = 12.0f, b[1].y = 1.4f, b[1].seq = 2;
    ch_apply(v, &st, 4, b + 1, 1); /* again in the air: a jump gives no coyote time */
    CHECK(st.jumps_checked == 2 && st.counts[CC_VIOL_JUMP_AIRBORNE] == 1);
    CHECK(st.counts[CC_VIOL_JUMP_UNASKED] == 0);

    v = ch_view(&st); /* walked off: coyote time is 6 ticks at 60 Hz (100 ms, rounded down) */
    b[1] = (ch_body){10, 0, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0};
    ch_apply(v, &st, 1, b, 2);
    for (uint64_t t = 2; t <= 7; t++) {
        b[1].grounded = false, b[1].vy = -0.5f * (float)(t - 1);
        ch_apply(v, &st, t, b + 1, 1);
    }
    cc_check_own_intent(v, 1, 0.0f, 0.0f, true);
    b[1].vy = 12.0f, b[1].seq = 1;
    ch_apply(v, &st, 8, b + 1, 1); /* 8 - 1 - 1 = 6 ticks after: in time */
    CHECK(st.jumps_checked == 1 && cc_check_total(&st) == 0);

    v = ch_view(&st);
    b[1] = (ch_body){10, 0, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0};
    ch_apply(v, &st, 1, b, 2);
    for (uint64_t t = 2; t <= 8; t++) {
        b[1].grounded = false, b[1].vy = -0.5f * (float)(t - 1);
        ch_apply(v, &st, t, b + 1, 1);
    }
    cc_check_own_intent(v, 1, 0.0f, 0.0f, true);
    b[1].vy = 12.0f, b[1].seq = 1;
    ch_apply(v, &st, 9, b + 1, 1); /* 7 ticks after: too late */
    CHECK(st.counts[CC_VIOL_JUMP_AIRBORNE] == 1 && st.counts[CC_VIOL_JUMP_UNASKED] == 0);

    v = ch_view(&st); /* a jump nobody pressed */
    b[1] = (ch_body){10, 0, CH_REST_Y, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0};
    ch_apply(v, &st, 1, b, 2);
    b[1].grounded = false, b[1].vy = 12.0f;
    ch_apply(v, &st, 2, b + 1, 1);
    CHECK(st.counts[CC_VIOL_JUMP_UNASKED] == 1 && st.counts[CC_VIOL_JUMP_AIRBORNE] == 0);
    CHECK(cc_check_jumped(-3.0f, 0.0f, 0.0f) == false && cc_check_jumped(0.0f, 12.0f, 0.0f));
    CHECK(!cc_check_jumped(11.5f, 11.0f, 0.0f) && !cc_check_jumped(0.0f, 0.001f, 0.01f));
}

/* I9: below the one-way platform it stood on, unless it left it by the edge or by a jump. */
static void test_check_character_one_way(void) {
    cc_check_stats st;
    for (int variant = 0; variant < 3; variant++) {
        cc_check_view *v = ch_view(&st);
        ch_body b[2] = {{2, 0, 2.0f, 2.0f, 0.125f, 0, 0, true, true, false, 0, 0},
                        {10, 0, 2.926f, 0.4f, 0.8f, 0, 0, false, false, true, 2, 0}};
        ch_apply(v, &st, 1, b, 2);
        ch_apply(v, &st, 2, b + 1, 1);
        CHECK(st.one_way_checks == 1);   /* standing on it, on its top */
        if (variant == 1) b[1].x = 2.5f; /* off its edge (extent 2.1 .. 2.9) */
        if (variant == 2) {
            cc_check_own_intent(v, 1, 0.0f, 0.0f, true);
            b[1].seq = 1;
        }
        b[1].grounded = false, b[1].y = 2.95f, b[1].vy = -0.5f;
        ch_apply(v, &st, 3, b + 1, 1);
        b[1].y = 1.5f, b[1].vy = -1.0f; /* its feet at 0.7, the top at 2.125 */
        ch_apply(v, &st, 4, b + 1, 1);
        CHECK_MSG(st.counts[CC_VIOL_ONE_WAY_FELL] == (variant == 0 ? 1u : 0u), "variant %d",
                  variant);
        CHECK(variant != 0 || (st.one_way_checks == 3 && st.examples[0].b == 2));
    }
}

/* I10: still on a moving platform, its place in the platform's frame is kept, also with another
 * body near the platform; a carrier that is a character is not judged. */
static void test_check_character_carried(void) {
    cc_check_stats st;
    cc_check_view *v = ch_view(&st);
    for (uint32_t q = 1; q <= 8; q++)
        cc_check_own_intent(v, q, 0.0f, 0.0f, false);
    ch_body b[3] = {{3, 0, 0, 1.9f, 0.25f, 4.0f, 0, false, false, false, 0, 0},
                    {10, 0.5f, 1.051f, 0.4f, 0.8f, 0, 0, false, false, true, 3, 1}};
    ch_apply(v, &st, 1, b, 2);
    b[0].x = 1.0f / 15.0f, b[1].x = 0.5f + 1.0f / 15.0f, b[1].seq = 2;
    ch_apply(v, &st, 2, b, 2);
    CHECK(st.carry_checks == 1 && cc_check_total(&st) == 0);
    b[0].x = 2.0f / 15.0f, b[1].x = 0.6f, b[1].seq = 3; /* 0.0333 behind */
    ch_apply(v, &st, 3, b, 2);
    CHECK(st.carry_checks == 2 && st.counts[CC_VIOL_CARRY_SLIPPED] == 1);
    CHECK_NEAR(st.examples[0].depth, 0.5f + 2.0f / 15.0f - 0.6f, 1e-5);
    b[0].x = 0.4f, b[1].x = 0.4f + (0.6f - 2.0f / 15.0f) + 2e-4f, b[1].seq = 4; /* 3 ticks */
    ch_apply(v, &st, 6, b, 2);
    CHECK(st.carry_checks == 3 && st.counts[CC_VIOL_CARRY_SLIPPED] == 1);
    /* a body beside the platform (which the discrete pass may push back): still judged, since
     * collided moves the riders of a pushed carrier with it */
    b[2] = (ch_body){12, 2.5f, 0, 0.4f, 0.8f, 0, 0, false, false, false, 0, 0};
    b[0].x = 0.5f, b[1].x = 1.2f, b[1].seq = 5;
    ch_apply(v, &st, 7, b, 3);
    CHECK(st.carry_checks == 4 && st.counts[CC_VIOL_CARRY_SLIPPED] == 2);

    v = ch_view(&st); /* its carrier a character (seen grounded): carried only if it moves first */
    b[0] = (ch_body){3, 0, 0, 0.4f, 0.8f, 0, 0, false, false, true, 1, 0};
    b[1] = (ch_body){10, 0, 1.601f, 0.4f, 0.8f, 0, 0, false, false, true, 3, 1};
    ch_apply(v, &st, 1, b, 2);
    b[0].x = 0.1f, b[1].seq = 2;
    ch_apply(v, &st, 2, b, 2);
    CHECK(st.carry_checks == 0 && cc_check_total(&st) == 0);
}

/* --pattern platformer: its platforms come from the backend, which needs an admin token. */
static void test_load_parse_platformer(void) {
    static load_opts o;
    const char *no_token[] = {"--pattern", "platformer"};
    CHECK(parse(&o, 2, no_token) == CC_EXIT_USAGE);
    const char *sideon[] = {"--pattern", "platformer", "--admin-token", "a"};
    CHECK(parse(&o, 4, sideon) == -1);
    CHECK(o.pattern == PATTERN_PLATFORMER && o.n_platforms == 2 && o.jumps_hz == 0.5);
    CHECK(o.platforms[0].to[0] == 122.0f && o.platforms[1].to[1] == 13.75f);
    const char *none[] = {"--pattern", "platformer", "--no-platforms", "--jumps", "2"};
    CHECK(parse(&o, 5, none) == -1 && o.n_platforms == 0 && o.jumps_hz == 2.0);
    const char *own[] = {"--pattern", "platformer", "--admin-token",
                         "a",         "--platform", "1,2,3,4,0.5,0.25,2"};
    CHECK(parse(&o, 6, own) == -1 && o.n_platforms == 1 && o.platforms[0].half[1] == 0.25f);
    const char *flat[] = {"--pattern", "platformer", "--no-platforms", "--platform",
                          "1,2,3,4,0,0.25,2"};
    CHECK(parse(&o, 5, flat) == CC_EXIT_USAGE);
    const char *walk[] = {"--platform", "1,2,3,4,1,1,2"};
    CHECK(parse(&o, 2, walk) == CC_EXIT_USAGE);
}

static void test_proc_stat_cpu_ticks(void) {
    uint64_t ut = 0, st = 0;
    CHECK(cc_proc_stat_cpu_ticks("1234 (coll ided) x) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0\n",
                                 &ut, &st));
    CHECK(ut == 250 && st == 50);
    CHECK(!cc_proc_stat_cpu_ticks("1234 (collided) S 1 2 3 4 5 6 7 8 9 10 250", &ut, &st));
    CHECK(!cc_proc_stat_cpu_ticks("1234 collided S 1 2 3", &ut, &st));
    CHECK(!cc_proc_stat_cpu_ticks("1234 (c) S 1 2 3 4 5 6 7 8 9 10 x 50", &ut, &st));
    double cpu = -1.0;
    CHECK(cc_proc_cpu_s((uint32_t)getpid(), &cpu) && cpu >= 0.0);
}

TEST_MAIN(TEST(test_proc_stat_cpu_ticks), TEST(test_hist_slots_cover_values),
          TEST(test_hist_percentiles_match_exact), TEST(test_hist_merge_equals_combined),
          TEST(test_wire_scans_snapshot), TEST(test_wire_pong), TEST(test_check_depths),
          TEST(test_check_turning_tunnel), TEST(test_qsnap_turning_and_check),
          TEST(test_qsnap_ground_one_way_and_check), TEST(test_check_gaps),
          TEST(test_check_contact_events), TEST(test_check_sensor_events),
          TEST(test_load_parse_rooms_backend), TEST(test_load_parse_udp),
          TEST(test_load_room_names), TEST(test_room_stats_merge),
          TEST(test_backend_batch_and_acks), TEST(test_check_character_rest),
          TEST(test_check_character_jumps), TEST(test_check_character_one_way),
          TEST(test_check_character_carried), TEST(test_load_parse_platformer))

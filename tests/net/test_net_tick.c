/* Unit tests of net_tick (the tick schedule): on time, late, very late, and the wait. */
#include "harness.h"
#include "net_tick.h"

static void test_schedule(void) {
    net_tick_schedule s = net_tick_start(60.0, 1000000000ull);
    uint64_t p = s.period_ns;
    CHECK(p == 16666666u && s.next_ns == 1000000000ull + p);
    /* early: nothing due, the wait rounds up and is never 0 */
    net_tick_due d = net_tick_take(&s, s.next_ns - 1);
    CHECK(d.run == 0 && d.skipped == 0);
    CHECK(net_tick_wait_ms(&s, s.next_ns - 1) == 1);
    CHECK(net_tick_wait_ms(&s, s.next_ns - p) == 17);
    CHECK(net_tick_wait_ms(&s, s.next_ns + 5 * p) == 1);
    /* on time: one step, no lag */
    uint64_t t = s.next_ns;
    d = net_tick_take(&s, t);
    CHECK(d.run == 1 && d.skipped == 0 && d.lag_s == 0.0 && s.next_ns == t + p);
    /* 2.5 periods late: the 3 steps due run, the schedule moves past them, the lag is 2.5 p */
    t = s.next_ns + 2 * p + p / 2;
    d = net_tick_take(&s, t);
    CHECK_MSG(d.run == 3 && d.skipped == 0, "run %u skipped %llu", d.run,
              (unsigned long long)d.skipped);
    CHECK_NEAR(d.lag_s, 2.5 * (double)p * 1e-9, 1e-6);
    CHECK(s.next_ns > t && s.next_ns - t <= p);
    /* a 1 s stall: 4 steps run, the other due ones are skipped, the rate is kept */
    t = s.next_ns + 1000000000ull;
    d = net_tick_take(&s, t);
    CHECK_MSG(d.run == NET_TICK_MAX_CATCHUP && d.skipped == 61 - NET_TICK_MAX_CATCHUP,
              "run %u skipped %llu", d.run, (unsigned long long)d.skipped);
    CHECK(s.next_ns > t && s.next_ns - t <= p);
}

TEST_MAIN(TEST(test_schedule))

#!/usr/bin/env python3
"""Overload (issue 12, finding 3) against the real daemon: late and coalesced steps and the tick lag
in /metrics, a new Hello refused with LIMIT_EXCEEDED "at capacity" while the tick budget is
persistently overrun, the players already in kept, and Hellos welcome again once the ticks are
back on time.

The daemon is made late from outside, the same way on any machine however fast: SIGSTOP holds its
loop for a fixed time, SIGCONT lets it run. One long stop is a single late tick (not overload);
stops of 300 ms with 30 ms runs between are a loop behind its schedule most of the time."""

import os
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

SHORT_WINDOW_MS = 1000  # --overload-window-ms of the one-stall test: a tick's share is <= 250 ms
DEFAULT_WINDOW_S = 2.0  # the default --overload-window-ms


def stall(d, seconds):
    d.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        d.proc.send_signal(signal.SIGCONT)


class Stalls(threading.Thread):
    """Stops the daemon for stop_s, lets it run for run_s, until stopped (bounded by max_s)."""

    def __init__(self, d, stop_s=0.3, run_s=0.03, max_s=8.0):
        super().__init__(daemon=True)
        self.d, self.stop_s, self.run_s, self.max_s = d, stop_s, run_s, max_s
        self.done = threading.Event()

    def run(self):
        deadline = time.monotonic() + self.max_s
        while not self.done.is_set() and time.monotonic() < deadline:
            stall(self.d, self.stop_s)
            time.sleep(self.run_s)

    def finish(self):
        self.done.set()
        self.join(self.max_s + 2)
        self.d.proc.send_signal(signal.SIGCONT)


def hello_reply(d, name):
    """A fresh connection's reply to Hello (snapshots cannot come before it)."""
    c = d.client(timeout=20)
    c.send(ct.msg_hello(7, name=name))
    sm = c.recv_until(lambda m: kind_of(m) != "snapshot", timeout=20, what="the reply to Hello")
    return c, sm


def lag_over(m, seconds):
    """Tick callbacks that started more than `seconds` late (seconds: a bucket bound)."""
    count = ct.metric(m, "collide_tick_lag_seconds_count")
    le = ct.metric(m, "collide_tick_lag_seconds_bucket", le="%g" % seconds)
    check(count is not None and le is not None, "/metrics must have collide_tick_lag_seconds "
          "with a bucket le=%g" % seconds)
    return count - le


@test
def one_stall_is_counted_but_not_overload():
    d = ct.Daemon(["--overload-window-ms", str(SHORT_WINDOW_MS)], http=True,
                  world=ct.write_world())
    player = d.client()
    player.hello(name="player")
    m0 = d.metrics()
    check(ct.metric(m0, "collide_overloaded") == 0, "not overloaded at start")
    # 700 ms held: more than half the window, but one tick's share is capped at a quarter of it.
    stall(d, 0.7)
    c, sm = hello_reply(d, "after-one-stall")
    check(kind_of(sm) == "welcome", "a Hello after one stall must be welcomed, got %s"
          % describe(sm))
    c.close()
    m = d.metrics()
    check(ct.metric(m, "collide_overloaded") == 0, "one stall is not overload")
    check(ct.metric(m, "collide_capacity_refusals_total") == 0, "nothing refused")
    late = ct.metric(m, "collide_steps_late_total") - ct.metric(m0, "collide_steps_late_total")
    coalesced = (ct.metric(m, "collide_steps_coalesced_total")
                 - ct.metric(m0, "collide_steps_coalesced_total"))
    skipped = (ct.metric(m, "collide_ticks_skipped_total")
               - ct.metric(m0, "collide_ticks_skipped_total"))
    # 42 steps were due when the loop came back: 4 run late, sharing one snapshot, the rest skipped.
    check(late >= 4 and coalesced >= 3 and late - coalesced >= 1,
          "the catch-up after a 700 ms stall must count late (%s) and coalesced (%s) steps"
          % (late, coalesced))
    check(skipped >= 30, "a 700 ms stall at 60 Hz skips about 38 steps, counted %s" % skipped)
    check(lag_over(m, 0.5) - lag_over(m0, 0.5) >= 1,
          "the tick after a 700 ms stall must show in collide_tick_lag_seconds above 0.5 s")
    check(ct.metric(m, "collide_snapshots_sent_total") > ct.metric(m0, "collide_snapshots_sent_total"),
          "collide_snapshots_sent_total must move while a player is in")
    player.assert_open("the player after one stall")
    d.stop_and_check()


@test
def persistent_overrun_refuses_hello_then_clears():
    d = ct.Daemon([], http=True, world=ct.write_world())  # the default window, 2 s
    player = d.client(timeout=20)
    player.hello(name="player")
    stalls = Stalls(d)
    stalls.start()
    try:
        # Four stop/run cycles put the 1 s behind (half the window) that makes overload; wait for
        # about six.
        time.sleep(2.0)
        c, sm = hello_reply(d, "during-overload")
        check(kind_of(sm) == "error" and sm.error.code == ct.code_of("LIMIT_EXCEEDED")
              and sm.error.fatal and sm.error.message == "at capacity" and sm.request_id == 7,
              "a Hello while the loop is persistently behind must get Error{LIMIT_EXCEEDED, "
              "fatal, \"at capacity\"}, got %s" % describe(sm))
        c.check_fatal_rule(sm, "capacity refusal")
        m = d.metrics()
        check(ct.metric(m, "collide_overloaded") == 1, "collide_overloaded must be 1")
        check(ct.metric(m, "collide_capacity_refusals_total") >= 1, "the refusal is counted")
        check(ct.metric(m, "collide_errors_total", code="LIMIT_EXCEEDED") >= 1,
              "and counted as an Error sent")
        check(ct.metric(m, "collide_steps_coalesced_total") >= 3 * 3,
              "every resume is a catch-up: coalesced steps counted, got %s"
              % ct.metric(m, "collide_steps_coalesced_total"))
        check(lag_over(m, 0.25) >= 3, "ticks 300 ms late must show in collide_tick_lag_seconds")
    finally:
        stalls.finish()
    t_back = time.monotonic()
    check(d.wait_log(r"event=overloaded\b", timeout=1) is not None, "event=overloaded logged")
    check(d.wait_log(r"event=capacity_refused\b", timeout=1) is not None,
          "event=capacity_refused logged")
    # Back on time: cleared once the overrun has left the window (hysteresis: not at once).
    cleared = None
    deadline = t_back + 15
    while time.monotonic() < deadline:
        if ct.metric(d.metrics(), "collide_overloaded") == 0:
            cleared = time.monotonic() - t_back
            break
        time.sleep(0.05)
    check(cleared is not None, "collide_overloaded must clear once the ticks are back on time")
    # The last stall (about 285 ms behind) stays in the 2 s window for about 1.9 s, and until it
    # leaves more than a tenth of the window is behind. Clearing as soon as less than half is
    # behind (no hysteresis) would come after about 1 s, when three of the six stalls have left.
    print("cleared %.2f s after the stalls" % cleared)
    check(cleared >= 0.75 * DEFAULT_WINDOW_S, "collide_overloaded cleared %.2f s after the "
          "stalls: too soon for a %g s window" % (cleared, DEFAULT_WINDOW_S))
    check(d.wait_log(r"event=overload_cleared\b", timeout=2) is not None,
          "event=overload_cleared logged")
    c, sm = hello_reply(d, "after-recovery")
    check(kind_of(sm) == "welcome", "a Hello after recovery must be welcomed, got %s"
          % describe(sm))
    c.close()
    # The player already in was never cut and still gets its snapshots.
    player.assert_open("the player who was in during the overload")
    n = player.snapshots
    player.pump(0.5)
    check(player.snapshots - n >= 10, "the player must get snapshots again (%d in 0.5 s)"
          % (player.snapshots - n))
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

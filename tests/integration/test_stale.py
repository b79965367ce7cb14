#!/usr/bin/env python3
"""Slow readers (issue 32): a reader that reads 10 kB/s while its view streams far more must not
be left reading stale snapshots out of the kernel's socket buffers. --max-snapshot-lag-ms counts
what waits there too: the reader is cut (reason snapshot_lag, by a reset, so that the kernel's
stale backlog is not delivered first) before its view is older than the lag plus a second (plus
the time one snapshot frame takes to read at its rate). Over TCP and WebSocket: the same socket
underneath (docs/net-design.md "Slow readers")."""

import os
import select
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402

MOVERS = 300
TICK_RATE = 60.0
READ_RATE = 10000  # bytes a second
RUN_S = 20.0       # today's main: the kernel's ~256 kB feed such a reader for 25 s


def disconnects(d, reason):
    return ct.metric(d.metrics(), "collide_disconnects_total", reason=reason) or 0


class Clock(threading.Thread):
    """The daemon's current tick: a client viewing an empty corner reads its few bytes a tick as
    they come, so its newest snapshot's tick is now."""

    def __init__(self, c):
        super().__init__(daemon=True)
        self.c = c
        self.tick = None
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                m = self.c.recv(0.1)
            except ct.ConnectionClosed:
                return
            if m is not None and kind_of(m) == "snapshot":
                self.tick = m.snapshot.tick


def world_of_movers(d):
    mover = d.client()
    mover.hello(name="mover")
    mover.send(ct.msg_set_view(mover.rid(), -990, -990, 1, 1))
    rids = [mover.rid() for _ in range(MOVERS)]
    mover.send(*[ct.msg_spawn(r, ct.box(1, 1), -450 + 3 * (i % 300), -400 + 3 * (i // 300))
                 for i, r in enumerate(rids)])
    ids = [mover.reply(r).spawned.body_id for r in rids]
    check(all(ids), "the %d movers must spawn" % MOVERS)
    mover.send(*[ct.msg_move(0, b, 1, 3, 2) for b in ids])  # every body changes every tick
    clock = Clock(mover)
    clock.start()
    return clock


def read_slowly(reader, clock, lag_s):
    """Reads at READ_RATE until the connection ends or RUN_S pass; fails as soon as the newest
    snapshot read is older than allowed. Returns (closed, worst age, largest frame)."""
    sock = reader.sock
    sock.setblocking(False)
    t_start = time.monotonic()
    got = 0
    newest = None
    worst = 0.0
    largest = 0
    while time.monotonic() - t_start < RUN_S:
        now = time.monotonic()
        allowed = int(READ_RATE * (now - t_start)) - got
        if allowed > 0 and select.select([sock], [], [], 0.02)[0]:
            try:
                data = sock.recv(min(allowed, 1024))
            except (ConnectionResetError, ConnectionAbortedError):
                return True, worst, largest
            except BlockingIOError:
                data = None
            if data == b"":
                return True, worst, largest
            if data:
                got += len(data)
                before = len(reader.buf)
                reader.buf += data
                while True:
                    m = reader._try_parse()
                    if m is None:
                        break
                    if kind_of(m) == "snapshot":
                        newest = m.snapshot.tick
                        largest = max(largest, before + len(data) - len(reader.buf))
                        before = len(reader.buf)
        else:
            time.sleep(0.01)
        if newest is None or clock.tick is None:
            check(time.monotonic() - t_start < 10, "no snapshot read in 10 s")
            continue
        age = (clock.tick - newest) / TICK_RATE
        worst = max(worst, age)
        # A frame is read whole before its tick counts: its reading time is allowed on top.
        bound = lag_s + 1.0 + max(largest, 1) / READ_RATE
        check(age <= bound, "a reader at %d B/s still reads a view %.1f s old, %.1f s in, and is "
              "not cut (bound %.1f s: the lag, a second and one %d-byte frame); "
              "collide_disconnects_total{reason=\"snapshot_lag\"} %g" % (
                  READ_RATE, age, time.monotonic() - t_start, bound, largest,
                  disconnects(reader.daemon, "snapshot_lag")))
    return False, worst, largest


# The reader's view: all the movers (~15 kB a tick: our own queue fills within a second, and what
# the kernel holds is the backlog a FIN would deliver first), or the first 21 of them (~1 kB a
# tick: the kernel's buffers take it all for seconds, so our own queue is empty while the kernel's
# backlog ages; only the kernel's count of unacknowledged bytes shows the lag).
ALL_MOVERS = (0, 0, 1000, 1000)
FEW_MOVERS = (-420, -380, 31, 20)


def slow_reader_is_cut(ws, view):
    lag_s = 2.0  # the default --max-snapshot-lag-ms, not passed
    d = ct.Daemon(["--max-bodies-per-client", str(MOVERS), "--rate-limit", "5000"] +
                  ct.WHOLE_WORLD_VIEW, http=True, ws=ws,
                  world=ct.write_world(statics=[(900, 900, {"box": {"half_extents": [10, 10]}})]))
    clock = world_of_movers(d)
    # A small receive buffer, set before connect: the kernel on the reader's side must not absorb
    # the backlog.
    reader = (d.ws_client if ws else d.client)(rcvbuf=4096)
    reader.daemon = d
    reader.hello(name="slow")
    reader.send(ct.msg_set_view(reader.rid(), *view))
    closed, worst, largest = read_slowly(reader, clock, lag_s)
    check(closed, "a reader at %d B/s of %d movers must be cut within %.0f s (its view reached "
          "%.1f s old)" % (READ_RATE, MOVERS, RUN_S, worst))
    check(disconnects(d, "snapshot_lag") == 1, "the cut must count as reason=\"snapshot_lag\", "
          "got %g" % disconnects(d, "snapshot_lag"))
    cut = d.wait_log(r"(?=.*\bevent=snapshot_lag\b)(?=.*\bclient=%d\b)" % reader.client_id)
    check(cut, "the cut must be logged as event=snapshot_lag with the client id")
    print("  %s: worst view age %.2f s, largest frame %d bytes; %s" % (
        "ws" if ws else "tcp", worst, largest, cut.strip()))
    clock.stop.set()
    clock.join(ct.REPLY_TIMEOUT)
    ct.full_session(d)
    d.stop_and_check()


@test
def slow_tcp_reader_of_many_movers_is_cut_before_its_view_goes_stale():
    slow_reader_is_cut(False, ALL_MOVERS)


@test
def slow_websocket_reader_of_many_movers_is_cut_before_its_view_goes_stale():
    slow_reader_is_cut(True, ALL_MOVERS)


@test
def slow_tcp_reader_of_few_movers_is_cut_before_its_view_goes_stale():
    slow_reader_is_cut(False, FEW_MOVERS)


@test
def slow_websocket_reader_of_few_movers_is_cut_before_its_view_goes_stale():
    slow_reader_is_cut(True, FEW_MOVERS)


if __name__ == "__main__":
    ct.main()

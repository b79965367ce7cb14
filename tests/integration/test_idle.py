#!/usr/bin/env python3
"""Idle clients (issue 32): a welcomed client with nothing in view should cost close to nothing.
Under PROTOCOL.md rule 6 each one costs a write every snapshot tick (an empty snapshot), which is
what an idle horde costs the daemon; --empty-snapshot-ms (issue 32's proposal, docs/protocol.md
"Empty snapshots as a heartbeat") sends an empty snapshot only to a client that has had none for
that long.

- the horde: 2,000 idle clients with --empty-snapshot-ms 1000 leave a watcher (one moving body of
  its own) at the tick rate, each idle client still hears from the daemon about once a second;
- the rule: without the flag, an idle client gets every snapshot tick's empty snapshot;
- the heartbeat is only for empty snapshots: a spectator whose view starts to hold a moving body
  gets a snapshot every tick again, at once, and the heartbeat again once it stops;
- over UDP the same, and the held snapshots do not push the acknowledged baseline out."""

import os
import resource
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402

TICK_RATE = 60.0
HORDE = 2000


def snapshots_in(c, seconds):
    """The snapshots c reads in the next `seconds` (their ticks)."""
    ticks = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        m = c.recv(max(0.01, end - time.monotonic()))
        if m is not None and kind_of(m) == "snapshot":
            ticks.append(m.snapshot.tick)
    return ticks


def drain(socks):
    """Reads what each idle socket holds, as a remote client's kernel would take it."""
    for s in socks:
        try:
            while s.recv(1 << 16):
                pass
        except (BlockingIOError, ConnectionError):
            pass


def mover(d, name="watcher"):
    """A client with one body of its own going back and forth: every snapshot it gets carries a
    change, so none is ever held back."""
    w = d.client()
    w.hello(name=name)
    rid = w.rid()
    w.send(ct.msg_spawn(rid, ct.circle(0.5), 0, 0))
    body = w.reply(rid).spawned.body_id
    return w, body


@test
def idle_horde_leaves_the_watcher_at_the_tick_rate():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < HORDE + 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(HORDE + 512, hard), hard))
    n = HORDE + 100
    d = ct.Daemon(args=["--empty-snapshot-ms", "1000", "--max-clients", str(n),
                        "--max-pending", str(n), "--max-pending-per-address", str(n),
                        "--overload-window-ms", "0", "--tick-rate", str(TICK_RATE)], http=True)
    # The watcher first: its socket's number stays under select()'s 1024.
    w, body = mover(d)
    hello = ct.frame(ct.msg_hello(name="idle").SerializeToString())
    horde = []
    try:
        for _ in range(HORDE):
            s = socket.create_connection(("127.0.0.1", d.game_port))
            s.sendall(hello)
            s.setblocking(False)
            horde.append(s)
            if len(horde) % 200 == 0:
                drain(horde)
                snapshots_in(w, 0.01)
        deadline = time.monotonic() + 30
        while ct.metric(d.metrics(), "collide_clients") < HORDE + 1 and \
                time.monotonic() < deadline:
            drain(horde)
            snapshots_in(w, 0.2)
        check(ct.metric(d.metrics(), "collide_clients") >= HORDE + 1,
              "all %d idle clients welcomed" % HORDE)
        seq = 0
        for _ in range(4):  # 2 s to settle, 2 s measured
            seq += 1
            w.send(ct.msg_move(0, body, seq, 2.0 if seq % 2 else -2.0, 0.0))
            snapshots_in(w, 0.5)
            drain(horde)
        m0 = d.metrics()
        ticks = []
        for _ in range(6):  # 3 s
            seq += 1
            w.send(ct.msg_move(0, body, seq, 2.0 if seq % 2 else -2.0, 0.0))
            ticks += snapshots_in(w, 0.5)
            drain(horde)
        m1 = d.metrics()
        rate = len(ticks) / 3.0
        check(rate >= 0.9 * TICK_RATE, "the watcher gets %.1f snapshots/s beside %d idle clients "
              "(tick rate %g): want >= 0.9 x" % (rate, HORDE, TICK_RATE))
        held = (ct.metric(m1, "collide_empty_snapshots_held_total") -
                ct.metric(m0, "collide_empty_snapshots_held_total"))
        sent = (ct.metric(m1, "collide_snapshots_sent_total") -
                ct.metric(m0, "collide_snapshots_sent_total"))
        # Each idle client: one empty snapshot a second goes out, the other 59 are held.
        check(held >= 0.9 * HORDE * TICK_RATE * 3 * 59 / 60,
              "%d empty snapshots held in 3 s for %d idle clients" % (held, HORDE))
        check(2.0 * HORDE <= sent <= 4.5 * HORDE + 3 * TICK_RATE * 2,
              "%d snapshots sent in 3 s: about one a second per idle client (heartbeat) plus the "
              "watcher's" % sent)
        check(ct.metric(m1, "collide_clients") >= HORDE + 1, "nobody was cut")
    finally:
        for s in horde:
            s.close()
    d.stop_and_check()


@test
def without_the_flag_every_snapshot_tick_sends_an_empty_snapshot():
    d = ct.Daemon(args=["--tick-rate", str(TICK_RATE)], http=True)
    c = d.client()
    c.hello(name="idle")
    ticks = snapshots_in(c, 1.0)
    check(len(ticks) >= 0.8 * TICK_RATE, "rule 6: %d empty snapshots in 1 s at %g Hz" %
          (len(ticks), TICK_RATE))
    check(ct.metric(d.metrics(), "collide_empty_snapshots_held_total") == 0, "none held")
    d.stop_and_check()


def spectator_sees_motion_then_heartbeat(spectator, w, body):
    # Nothing moving in view: about one snapshot a second (the heartbeat), the first at once.
    quiet = snapshots_in(spectator, 2.5)
    check(2 <= len(quiet) <= 4, "a quiet view: %d snapshots in 2.5 s at --empty-snapshot-ms "
          "1000, want 2-4" % len(quiet))
    # The watcher's body moves in the spectator's view: a snapshot every snapshot tick again.
    w.send(ct.msg_move(0, body, 1, 3.0, 0.0))
    moving = snapshots_in(spectator, 1.0)
    check(len(moving) >= 0.8 * TICK_RATE, "a moving body in view: %d snapshots in 1 s" %
          len(moving))
    w.send(ct.msg_move(0, body, 2, 0.0, 0.0))
    snapshots_in(spectator, 0.3)  # the last changes go out
    again = snapshots_in(spectator, 2.5)
    check(2 <= len(again) <= 4, "still again: %d snapshots in 2.5 s" % len(again))


@test
def heartbeat_holds_only_empty_snapshots():
    d = ct.Daemon(args=["--empty-snapshot-ms", "1000", "--tick-rate", str(TICK_RATE)], http=True)
    w, body = mover(d)
    s = d.client()
    s.hello(name="spectator")
    s.send(ct.msg_set_view(s.rid(), 0, 0, 20, 20))
    spectator_sees_motion_then_heartbeat(s, w, body)
    d.stop_and_check()


@test
def heartbeat_over_udp_keeps_the_baseline():
    from udp_client import UdpClient
    d = ct.Daemon(args=["--empty-snapshot-ms", "1000", "--tick-rate", str(TICK_RATE)], udp=True,
                  http=True)
    w, body = mover(d)
    c = UdpClient(d.udp_port)
    c.hello()
    c.send(ct.msg_set_view(5, 0, 0, 20, 20))
    # Acknowledge every snapshot; once still, the held ones must not push the acknowledged
    # baseline out of the ring: the snapshot after a quiet spell is still a delta (baseline_tick
    # set), not a full one.
    bases = []

    def read(seconds):
        n = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            c.pump(10)
            got, c.events = c.events, []
            for kind, _, sm in got:
                if kind != "message" or kind_of(sm) != "snapshot":
                    continue
                n += 1
                bases.append(sm.snapshot.baseline_tick)
                ack = ct.pb.ClientMessage()
                ack.snapshot_ack.tick = sm.snapshot.tick
                c.send(ack, channel=1, flags=0)
        return n

    w.send(ct.msg_move(0, body, 1, 3.0, 0.0))
    check(read(1.0) >= 0.8 * TICK_RATE, "a moving body in view: a snapshot every tick over UDP")
    w.send(ct.msg_move(0, body, 2, 0.0, 0.0))
    read(0.3)
    quiet = read(3.0)
    check(2 <= quiet <= 5, "a quiet view over UDP: %d snapshots in 3 s, want 2-5" % quiet)
    del bases[:]
    w.send(ct.msg_move(0, body, 3, -3.0, 0.0))
    read(0.5)
    check(bases and bases[0] != 0, "the first snapshot after the quiet spell is a delta against "
          "the acknowledged baseline, not a full one: baseline_tick %s" % bases[:3])
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

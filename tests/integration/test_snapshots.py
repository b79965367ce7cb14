#!/usr/bin/env python3
"""PROTOCOL.md rule 6 over the wire: a client's map built only from its snapshots ends at the
world's state. A body that stops against a wall with its intent unchanged changes only its velocity
in its last tick of motion, and the client must hear that; with a small --max-frame and many
bodies, a watching client's map must converge to what a client that joins afterwards is told in
full."""

import os
import random
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

SKIN = 1e-3       # COLLISION.md I2
FLOAT_EPS = 1e-3  # float32 rounding near the positions used here
ADMIN = "adm1n"
DYNAMIC = ("x", "y", "vx", "vy", "seq")


def snap(m):
    return kind_of(m) == "snapshot"


def whole_world_watcher(d, w):
    """A client whose view is the whole world (SetView); returns it after its first snapshot."""
    c = d.client()
    c.hello()
    cx, cy = (w.world_min.x + w.world_max.x) / 2, (w.world_min.y + w.world_max.y) / 2
    hx, hy = (w.world_max.x - w.world_min.x) / 2, (w.world_max.y - w.world_min.y) / 2
    c.send(ct.msg_set_view(0, cx, cy, hx, hy))
    c.sync()
    return c


def dynamic(view):
    return {bid: tuple(st[k] for k in DYNAMIC) for bid, st in view.items()}


def pump_all(clients, seconds):
    """Reads every client in turn for the given time, so none falls behind."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for c in clients:
            for m in c.pump(0.02):
                raise ct.TestFailure("unexpected %s" % describe(m))


@test
def velocity_only_change_when_stopping_at_a_wall():
    d = ct.Daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    admin = d.client()
    admin.hello(token=ADMIN)
    wall_x, wall_hx = 20.0, 0.5
    admin.spawn_ok(ct.box(wall_hx, 10), wall_x, 0, kind=ct.pb.BODY_KIND_STATIC)
    player = d.client()
    w = player.hello()
    hx = 1.0
    # Towards the wall and towards the world's left bound, one intent each, never replaced.
    to_wall = player.spawn_ok(ct.box(hx, hx), 0, 0)
    to_bound = player.spawn_ok(ct.box(hx, hx), w.world_min.x + 20, 0)
    player.sync()
    speed = 45.0  # not a whole number of units per tick: the last step before the wall is partial
    seq_wall = player.move(to_wall, speed, 0)
    seq_bound = player.move(to_bound, -speed, 0)
    # 18.5 and 19 units to go at 0.75 units a tick: both stop within 26 ticks; wait three times as
    # long for the last snapshot that changes anything.
    ticks = 3 * 26
    player.pump(ticks / w.tick_rate_hz + 0.5)
    for bid, seq, face in ((to_wall, seq_wall, wall_x - wall_hx - hx),
                           (to_bound, seq_bound, w.world_min.x + hx)):
        st = player.view[bid]
        check(st["seq"] == seq, "body %d: last_input_seq %d, sent %d" % (bid, st["seq"], seq))
        check(abs(st["x"] - face) <= SKIN + FLOAT_EPS and st["y"] == 0.0,
              "body %d must rest against its wall at x = %g, believed at (%g, %g)" % (
                  bid, face, st["x"], st["y"]))
        check(st["vx"] == 0.0 and st["vy"] == 0.0,
              "body %d stopped against a wall but the client believes it moves at (%g, %g)" % (
                  bid, st["vx"], st["vy"]))
    # And exactly what a client that never saw it move is told about it.
    fresh = whole_world_watcher(d, w)
    for bid in (to_wall, to_bound):
        check(bid in fresh.view, "body %d missing from a fresh whole-world view" % bid)
        check(dynamic(player.view)[bid] == dynamic(fresh.view)[bid],
              "body %d: the mover's client believes %s, a fresh client is told %s" % (
                  bid, dynamic(player.view)[bid], dynamic(fresh.view)[bid]))
    for c in (admin, player, fresh):
        c.close()
    d.stop_and_check()


@test
def small_frames_converge_to_the_truth():
    """150 bodies in 256-byte frames: a whole-world watcher sees them spawn, run into the walls and
    a third of them despawn at once, more than any one frame holds. At rest its map must equal
    what a client joining then is told, body for body."""
    rng = random.Random(7)
    bounds = ((-60, -60), (60, 60))
    d = ct.Daemon(["--admin-token", ADMIN, "--max-frame", "256", "--rate-limit", "100000"],
                  world=ct.write_world(bounds=bounds))
    admin = d.client()
    w = admin.hello(token=ADMIN)
    watcher = whole_world_watcher(d, w)
    ids = []
    for _ in range(150):
        h = rng.uniform(0.3, 1.2)
        ids.append(admin.spawn_ok(ct.box(h, h), rng.uniform(-55, 55), rng.uniform(-55, 55)))
    # Every body straight at one of the four walls: all come to rest against it or a neighbour.
    dirs = [(150, 0), (-150, 0), (0, 150), (0, -150)]
    admin.send(*[ct.msg_move(0, bid, 1, *rng.choice(dirs)) for bid in ids])
    pump_all([admin, watcher], 1.5)
    gone = ids[::3]
    admin.send(*[ct.msg_despawn(0, bid) for bid in gone])
    pump_all([admin, watcher], 0.5)
    fresh = whole_world_watcher(d, w)
    live = set(ids) - set(gone)
    deadline = time.monotonic() + 8.0
    while time.monotonic() < deadline:
        pump_all([admin, watcher, fresh], 0.1)
        if set(fresh.view) == live and dynamic(watcher.view) == dynamic(fresh.view):
            break
    check(set(fresh.view) == live, "a fresh client sees %d bodies, %d live" % (
        len(fresh.view), len(live)))
    stale = sorted(bid for bid in live if dynamic(watcher.view).get(bid) !=
                   dynamic(fresh.view)[bid])
    check(set(watcher.view) == live and not stale,
          "the watcher's map did not converge: %d bodies, %d live, %d differ (first: %s)" % (
              len(watcher.view), len(live), len(stale),
              [(b, dynamic(watcher.view).get(b), dynamic(fresh.view)[b]) for b in stale[:3]]))
    check(all(st["vx"] == 0.0 and st["vy"] == 0.0 for st in fresh.view.values()),
          "the world must be at rest")
    for c in (admin, watcher, fresh):
        c.close()
    d.stop_and_check()


def msg_ack(rid, tick):
    m = ct.pb.ClientMessage(request_id=rid)
    m.snapshot_ack.tick = tick
    return m


@test
def snapshot_ack_is_accepted_and_ignored_on_tcp():
    """PROTOCOL.md "Datagrams" (1.2): on TCP SnapshotAck is accepted and ignored (no reply, no
    error), snapshots keep baseline_tick 0, Welcome.udp_port is 0 while no UDP port is served, and
    acks up to one per snapshot sent are free of the rate limits: at --rate-limit 5 (burst 10) a
    client that acknowledges each of 60 snapshots is never limited, and its acks past the
    snapshots it was sent are."""
    d = ct.Daemon(["--rate-limit", "5"], world=ct.write_world(bounds=((-100, -100), (100, 100))))
    try:
        c = d.client()
        w = c.hello()
        check(w.udp_port == 0, "no UDP transport: Welcome.udp_port 0, got %d" % w.udp_port)
        acked, others = 0, []
        while acked < 60:
            sm = c.recv_until(snap, what="a snapshot", keep=others)
            check(sm.snapshot.baseline_tick == 0, "TCP snapshots are never against a baseline")
            c.send(msg_ack(0, sm.snapshot.tick))
            acked += 1
        pong = c.ping()
        check(kind_of(pong) == "pong", "the Ping after 60 acks: %s" % describe(pong))
        others += c.non_snapshots(0.3)
        check(not others, "an ack has no reply, and 60 acks of 60 snapshots cost nothing: %s"
              % [describe(m) for m in others])
        # a frame that holds an ack field but unpacks as another message (protobuf's last oneof
        # wins: the Ping after the ack) is charged as that message, banked acks or not: after
        # 1.5 s without acking (up to 64 acks banked), 40 such Pings at --rate-limit 5 (burst
        # 10) are rate limited
        time.sleep(1.5)
        ack_field = b"\xba\x01\x02\x08\x01"  # field 23 (LEN), SnapshotAck{tick: 1}
        c.send_raw(b"".join(ct.frame(ack_field + ct.msg_ping(500 + i).SerializeToString())
                            for i in range(40)))
        limited = c.recv_until(lambda m: kind_of(m) == "error", what="RATE_LIMITED")
        check(limited.error.code == ct.code_of("RATE_LIMITED") and limited.request_id >= 500,
              "a Ping behind an ack field is charged: %s" % describe(limited))
        time.sleep(3)  # the bucket refills (burst 10 at 5/s)
        # a burst of acks beyond the snapshots sent is charged: past the burst, RATE_LIMITED
        c.send(*[msg_ack(100 + i, 1) for i in range(200)])
        limited = c.recv_until(lambda m: kind_of(m) == "error", what="RATE_LIMITED")
        check(limited.error.code == ct.code_of("RATE_LIMITED") and limited.request_id >= 100,
              "acks past one per snapshot are charged: %s" % describe(limited))
    finally:
        d.stop_and_check()


if __name__ == "__main__":
    ct.main()

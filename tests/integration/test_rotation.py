#!/usr/bin/env python3
"""Rotation over the wire (protocol 1.1, PROTOCOL.md "Rotation"): MoveIntent.angular_velocity
turns a body, snapshots carry BodyState.angle and angular_velocity with the body-local shape, the
angle advances by w * ticks / rate, turning intents are clamped to --max-angular-speed (default
8 pi), a turning body stops turning at a wall, and Welcome.features announces "rotation"."""

import math
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402

TWO_PI = 2 * math.pi


def snap(m):
    return kind_of(m) == "snapshot"


def turned_by(a0, a1):
    """a1 - a0 taken into [-pi, pi)."""
    return (a1 - a0 + math.pi) % TWO_PI - math.pi


def open_world():
    return ct.write_world(statics=[(900, 900, {"box": {"half_extents": [10, 10]}})])


@test
def angle_follows_w_ticks_over_rate():
    d = ct.Daemon(world=open_world())
    c = d.client()
    w = c.hello()
    check("rotation" in w.features, "Welcome.features must list rotation: %s" % list(w.features))
    bid = c.spawn_ok(ct.box(2, 0.5), 0, 0, angle=0.3)
    c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
    first = c.view[bid]["new_msg"]
    check(first.shape.WhichOneof("kind") == "box" and abs(first.angle - 0.3) < 1e-6,
          "body-local box at angle 0.3, got %s angle %r" % (first.shape, first.angle))
    spin = 1.5
    seq = c.move(bid, 0.0, 0.0, w=spin)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq and c.view[bid]["w"] != 0,
                 what="the turn applied")
    st = dict(c.view[bid])
    check(abs(st["w"] - spin) < 1e-4, "angular_velocity must be %g, got %r" % (spin, st["w"]))
    c.recv_until(lambda m: snap(m) and c.view[bid]["tick"] >= st["tick"] + 90, what="90 ticks")
    now = dict(c.view[bid])
    ticks = now["tick"] - st["tick"]
    want = spin * ticks / w.tick_rate_hz
    got = turned_by(st["angle"], now["angle"])
    check(abs(turned_by(want, got)) < 1e-3,
          "after %d ticks the angle must advance by w*ticks/rate = %g, got %g" % (ticks, want, got))
    check(-math.pi <= now["angle"] <= math.pi, "angle kept in [-pi, pi]: %r" % now["angle"])
    check(now["x"] == 0 and now["y"] == 0, "turning alone does not move it")
    # stopping: 0 turns no more, and the snapshot says so
    seq = c.move(bid, 0.0, 0.0, w=0.0)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq and c.view[bid]["w"] == 0,
                 what="turning stopped")
    c.close()
    d.stop_and_check()


@test
def turning_intents_are_clamped():
    for args, limit in (((), 8 * math.pi), (("--max-angular-speed", "3"), 3.0)):
        d = ct.Daemon(args=args, world=open_world())
        c = d.client()
        c.hello()
        bid = c.spawn_ok(ct.box(1, 1), 0, 0)
        c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
        seq = c.move(bid, 0.0, 0.0, w=-1000.0)
        c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq and c.view[bid]["w"] != 0,
                     what="the turn applied")
        got = c.view[bid]["w"]
        check(abs(got + limit) < 1e-3 * limit, "%s: -1000 rad/s must be clamped to %g, got %r"
              % (args, -limit, got))
        c.close()
        d.stop_and_check()


@test
def turn_stops_at_a_wall():
    # A 4 x 0.2 bar standing upright 1 from a wall turns towards it: it stops at contact,
    # reports no turning speed once stopped, and its end is at the wall, not in it.
    world = ct.write_world(statics=[(1.5, 0, {"box": {"half_extents": [0.5, 5]}}),
                                    (900, 900, {"box": {"half_extents": [10, 10]}})])
    d = ct.Daemon(world=world)
    c = d.client()
    c.hello()
    bid = c.spawn_ok(ct.box(2, 0.1), 0, 0, angle=math.pi / 2)
    c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
    seq = c.move(bid, 0.0, 0.0, w=-4.0)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq, what="the turn applied")
    c.recv_until(lambda m: snap(m) and c.view[bid]["w"] == 0, what="the turn stopped")
    a = c.view[bid]["angle"]
    # the bar's far corner: (2, -0.1) turned by a; its x must stay left of the wall at x = 1
    cx = 2 * math.cos(a) + 0.1 * math.sin(a)
    check(0.99 < cx <= 1.0 + 1e-3, "the bar's end must rest at the wall (x 1), got x %g angle %g"
          % (cx, a))
    c.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

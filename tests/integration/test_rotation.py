#!/usr/bin/env python3
"""Rotation over the wire (protocol 1.1, PROTOCOL.md "Rotation"): MoveIntent.angular_velocity
turns a body, snapshots carry BodyState.angle and angular_velocity with the body-local shape, the
angle advances by w * ticks / rate, turning intents are clamped to --max-angular-speed (default
8 pi), a turning body stops turning at a wall and turns away from it freely, and Welcome.features
announces "rotation"."""

import math
import os
import subprocess
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
    # the default, the flag, and its variable; both signs of the turn
    for args, env, limit, w in (((), None, 8 * math.pi, -1000.0),
                                (("--max-angular-speed", "3"), None, 3.0, -1000.0),
                                ((), {"COLLIDE_MAX_ANGULAR_SPEED": "2.5"}, 2.5, 1000.0)):
        d = ct.Daemon(args=args, env_extra=env, world=open_world())
        c = d.client()
        c.hello()
        bid = c.spawn_ok(ct.box(1, 1), 0, 0)
        c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
        seq = c.move(bid, 0.0, 0.0, w=w)
        c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq and c.view[bid]["w"] != 0,
                     what="the turn applied")
        got = c.view[bid]["w"]
        want = math.copysign(limit, w)
        check(abs(got - want) < 1e-3 * limit, "%s %s: %g rad/s must be clamped to %g, got %r"
              % (args, env, w, want, got))
        c.close()
        d.stop_and_check()


@test
def max_angular_speed_out_of_range_is_refused_at_start():
    for bad in ("0", "-1", "100000", "nan"):
        r = subprocess.run([ct.OPTS.collided, "--port", "0", "--udp-port", "0", "--http-port", "0",
                            "--max-angular-speed", bad], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 2 and "max-angular-speed" in r.stderr,
              "--max-angular-speed %s must be refused at start (exit %d: %s)"
              % (bad, r.returncode, r.stderr[-200:]))


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
    # turning away from the wall it rests against: the whole w * ticks / rate, from the next tick
    # on (the contact its last turn stopped at does not hold it)
    seq = c.move(bid, 0.0, 0.0, w=4.0)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == seq, what="the turn away applied")
    st = dict(c.view[bid])
    check(abs(st["w"] - 4.0) < 1e-4, "turning away from the wall at 4 rad/s, got w %r" % st["w"])
    c.recv_until(lambda m: snap(m) and c.view[bid]["tick"] >= st["tick"] + 6, what="6 ticks")
    now = dict(c.view[bid])
    want = 4.0 * (now["tick"] - st["tick"]) / 60.0
    got = turned_by(st["angle"], now["angle"])
    check(abs(got - want) < 1e-4, "turning away must advance by w*ticks/rate = %g, got %g"
          % (want, got))
    check(now["x"] == 0 and now["y"] == 0, "turning alone does not move it")
    c.close()
    d.stop_and_check()


@test
def past_queries_see_the_angle_of_their_tick():
    # Lag compensation with a turning bar (a 6 x 0.4 box spinning at 3 rad/s about its centre):
    # a query at a past tick finds the bar where that tick's snapshot showed it, not where it
    # points now, one radian on.
    d = ct.Daemon(["--history-ms", "1000"], world=open_world())
    c = d.client()
    c.hello()
    bid = c.spawn_ok(ct.box(3, 0.2), 0, 0)
    c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
    c.move(bid, 0.0, 0.0, w=3.0)
    c.recv_until(lambda m: snap(m) and c.view[bid]["w"] != 0, what="the turn applied")
    seen = dict(c.view[bid])
    c.recv_until(lambda m: snap(m) and c.view[bid]["tick"] >= seen["tick"] + 20, what="20 ticks")
    a = seen["angle"]
    tip = (2.9 * math.cos(a), 2.9 * math.sin(a))
    moving = [ct.pb.BODY_KIND_MOVING]

    def overlap(at_tick):
        m = ct.pb.ClientMessage(request_id=c.rid())
        m.overlap.shape.CopyFrom(ct.circle(0.01))
        m.overlap.position.x, m.overlap.position.y = tip
        m.overlap.at_tick = at_tick
        m.overlap.filter.kinds.extend(moving)
        c.send(m)
        return c.reply(m.request_id).query_result

    then, now = overlap(seen["tick"]), overlap(0)
    check(then.tick == seen["tick"] and [h.body_id for h in then.hits] == [bid],
          "at tick %d (angle %.3f) the bar's tip is at (%.3f, %.3f): %s"
          % (seen["tick"], a, tip[0], tip[1], then))
    check(now.tick > seen["tick"] + 19 and len(now.hits) == 0,
          "a radian later it is not: %s" % now)
    # a ray down the bar's axis at that tick meets its end, 3 from the centre
    m = ct.pb.ClientMessage(request_id=c.rid())
    m.ray_cast.origin.x, m.ray_cast.origin.y = 6 * math.cos(a), 6 * math.sin(a)
    m.ray_cast.translation.x, m.ray_cast.translation.y = -6 * math.cos(a), -6 * math.sin(a)
    m.ray_cast.at_tick = seen["tick"]
    m.ray_cast.filter.kinds.extend(moving)
    c.send(m)
    r = c.reply(m.request_id).query_result
    check(len(r.hits) == 1 and abs(r.hits[0].fraction - 0.5) < 1e-3,
          "the ray meets the bar's end half way (3 of 6): %s" % r)
    c.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

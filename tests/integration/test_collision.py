#!/usr/bin/env python3
"""COLLISION.md invariants observed over the wire: I1/I2 (a body at max speed does not pass through
an admin's static wall nor the world bounds, and does not sink into it), I3/I7 (bodies driven
head-on meet without passing through each other, at the midpoint when driven in the same tick)."""

import math
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

SKIN = 1e-3          # COLLISION.md I2
FLOAT_EPS = 1e-3     # float32 positions near 1000 carry ~6e-5 of rounding; be generous
PAIR_TOL = 0.1       # I3 "a small tolerance" for moving-moving overlap


def snap(m):
    return kind_of(m) == "snapshot"


# (name, shape, half extent along x, half extent along y)
MOVERS = [
    ("box", lambda: ct.box(2, 2), 2.0, 2.0),
    ("circle", lambda: ct.circle(2), 2.0, 2.0),
    ("triangle", lambda: ct.polygon([(-2, -2), (2, -2), (0, 2)]), 2.0, 2.0),
    ("hexagon", lambda: ct.regular_polygon(6, 2), 2.0, 2.0 * math.sin(math.pi / 3)),
]


def watch(client, ids, seconds, on_state):
    """Calls on_state(id, state, tick) for each of ids in every snapshot for the given time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        m = client.recv(deadline - time.monotonic())
        if m is None:
            continue
        if snap(m):
            for b in m.snapshot.bodies:
                if b.id in ids:
                    on_state(b.id, client.view[b.id], m.snapshot.tick)
        elif kind_of(m) == "error":
            raise ct.TestFailure("unexpected %s" % describe(m))


@test
def no_tunnelling_through_admin_wall_or_bounds():
    d, admin = ct.daemon_with_admin(["--tick-rate", "30"])
    wall_x, wall_hx = 300.0, 0.5
    admin.spawn_ok(ct.box(wall_hx, 200), wall_x, 0, kind=ct.pb.BODY_KIND_STATIC)
    player = d.client()
    w = player.hello()
    max_speed = w.max_speed
    check(max_speed >= 10000, "default max speed must be at least 10000 (I1), got %g" % max_speed)
    bodies = {}
    for i, (name, make, hx, hy) in enumerate(MOVERS):
        bid = player.spawn_ok(make(), 0, -120 + 80 * i)
        bodies[bid] = (name, hx, hy)
    player.recv_until(lambda m: snap(m) and all(b in player.view for b in bodies),
                      what="own bodies")
    # At max speed a body covers 333 units per tick at 30 Hz: 600 times the wall's thickness.
    player.send(*[ct.msg_move(0, b, 1, max_speed * 5, 0) for b in bodies])
    worst = {}

    def against_wall(bid, st, tick):
        name, hx, _ = bodies[bid]
        right = st["x"] + hx
        check(ct.finite(st["x"], st["y"]), "%s: non-finite position" % name)
        check(st["x"] < wall_x, "I1: %s passed through the wall: x = %g (wall at %g)" % (
            name, st["x"], wall_x))
        check(right <= wall_x - wall_hx + SKIN + FLOAT_EPS,
              "I2: %s overlaps the static wall: right edge %g > wall face %g + skin" % (
                  name, right, wall_x - wall_hx))
        worst[bid] = right

    watch(player, set(bodies), 1.5, against_wall)
    for bid, (name, hx, _) in bodies.items():
        check(bid in worst, "%s: no state seen" % name)
        check(worst[bid] >= wall_x - wall_hx - 0.5,
              "%s must come to rest against the wall face %g, right edge at %g" % (
                  name, wall_x - wall_hx, worst[bid]))
        check(abs(player.view[bid]["y"] - (-120 + 80 * list(bodies).index(bid))) < 0.5,
              "%s must not drift along the wall: y %g" % (name, player.view[bid]["y"]))
    # Now into the left bound at max speed, then diagonally into the bottom-left corner.
    player.send(*[ct.msg_move(0, b, 2, -max_speed, 0) for b in bodies])

    def against_bounds(bid, st, tick):
        name, hx, hy = bodies[bid]
        check(st["x"] - hx >= w.world_min.x - SKIN - FLOAT_EPS and
              st["y"] - hy >= w.world_min.y - SKIN - FLOAT_EPS,
              "I1: %s left the world: (%g,%g) with bounds min (%g,%g)" % (
                  name, st["x"], st["y"], w.world_min.x, w.world_min.y))

    watch(player, set(bodies), 1.5, against_bounds)
    for bid, (name, hx, hy) in bodies.items():
        st = player.view[bid]
        check(st["x"] - hx <= w.world_min.x + 0.5, "%s must rest at the left bound: x %g" % (
            name, st["x"]))
    player.send(*[ct.msg_move(0, b, 3, -max_speed, -max_speed) for b in bodies])
    watch(player, set(bodies), 1.5, against_bounds)
    admin.close()
    player.close()
    d.stop_and_check()


@test
def thin_static_polygon_and_circle_walls():
    d, admin = ct.daemon_with_admin()
    # A thin polygon wall (a sliver 0.5 wide) and a circle post, each in its own lane.
    admin.spawn_ok(ct.polygon([(-0.25, -30), (0.25, -30), (0.25, 30), (-0.25, 30)]), 200, 0,
                   kind=ct.pb.BODY_KIND_STATIC)
    admin.spawn_ok(ct.circle(3), 200, 200, kind=ct.pb.BODY_KIND_STATIC)
    player = d.client()
    w = player.hello()
    a = player.spawn_ok(ct.box(1, 1), 0, 0)
    b = player.spawn_ok(ct.circle(1), 0, 200)
    player.send(ct.msg_move(0, a, 1, w.max_speed, 0), ct.msg_move(0, b, 1, w.max_speed, 0))

    def check_side(bid, st, tick):
        limit = 199.75 - 1.0 if bid == a else 197.0 - 1.0
        check(st["x"] <= limit + SKIN + FLOAT_EPS,
              "I1/I2: body %d went into or through the %s wall: x %g > %g" % (
                  bid, "polygon" if bid == a else "circle", st["x"], limit))

    watch(player, {a, b}, 1.0, check_side)
    check(player.view[a]["x"] > 190, "box must reach the polygon wall, x %g" % player.view[a]["x"])
    admin.close()
    player.close()
    d.stop_and_check()


def head_on(d, make, half, same_client):
    a_c = d.client()
    a_c.hello()
    if same_client:
        b_c = a_c
    else:
        b_c = d.client()
        b_c.hello()
    a = a_c.spawn_ok(make(), -300, 0)
    b = b_c.spawn_ok(make(), 300, 0)
    speed = a_c.welcome.max_speed
    # Observe both from one client that sees the whole world, from before they move.
    watcher = d.client()
    watcher.hello()
    watcher.send(ct.msg_set_view(watcher.rid(), 0, 0, 500, 500))  # +-300 is in view
    watcher.recv_until(lambda m: snap(m) and a in watcher.view and b in watcher.view,
                       what="both bodies")
    if same_client:
        a_c.send(ct.msg_move(0, a, 1, speed, 0), ct.msg_move(0, b, 1, -speed, 0))
    else:
        a_c.move(a, speed, 0, seq=1)
        b_c.move(b, -speed, 0, seq=1)

    def pair(bid, st, tick):
        xa, xb = watcher.view[a]["x"], watcher.view[b]["x"]
        check(xa < xb, "I3: head-on bodies passed through each other at tick %d: a %g, b %g" % (
            tick, xa, xb))
        check(xb - xa >= 2 * half - PAIR_TOL,
              "I3: head-on bodies overlap by %g (> %g) at tick %d" % (
                  2 * half - (xb - xa), PAIR_TOL, tick))

    watch(watcher, {a, b}, 1.0, pair)
    xa, xb = watcher.view[a]["x"], watcher.view[b]["x"]
    check(xa > -300 and xb < 300, "both bodies must have moved: a %g, b %g" % (xa, xb))
    check(xa < xb and xb - xa <= 2 * half + 0.5, "bodies pushed head-on must be in contact: "
          "a %g, b %g" % (xa, xb))
    for c in {id(a_c): a_c, id(b_c): b_c, id(watcher): watcher}.values():
        c.close()
    return xa, xb


@test
def head_on_boxes_meet_at_midpoint():
    d = ct.Daemon(world=ct.write_world())
    xa, xb = head_on(d, lambda: ct.box(2, 2), 2.0, same_client=True)
    check(abs((xa + xb) / 2) <= 0.5, "I7: equal boxes driven head-on in the same tick must meet "
          "at the midpoint 0, met at %g" % ((xa + xb) / 2))
    d.stop_and_check()


@test
def head_on_circles_two_clients():
    d = ct.Daemon(world=ct.write_world())
    head_on(d, lambda: ct.circle(2), 2.0, same_client=False)
    d.stop_and_check()


@test
def head_on_polygons_two_clients():
    d = ct.Daemon(world=ct.write_world())
    # A regular octagon with flat faces towards +-x, apothem 2.
    r = 2.0 / math.cos(math.pi / 8)
    octagon = [(r * math.cos((2 * i + 1) * math.pi / 8), r * math.sin((2 * i + 1) * math.pi / 8))
               for i in range(8)]
    head_on(d, lambda: ct.polygon(octagon), 2.0, same_client=False)
    d.stop_and_check()


@test
def spawn_onto_occupied_space_is_pushed_out():
    # Rule 3 / COLLISION.md step 3: accepted, then separated by the next tick's discrete pass: a
    # moving body takes all of it against a static, two moving bodies half each.
    d, admin = ct.daemon_with_admin()
    admin.spawn_ok(ct.box(10, 10), 0, 0, kind=ct.pb.BODY_KIND_STATIC)
    c = d.client()
    c.hello()
    inside = c.spawn_ok(ct.box(1, 1), 3, 0)
    a = c.spawn_ok(ct.circle(2), 200, 0)
    b = c.spawn_ok(ct.circle(2), 201, 0)
    c.sync()
    c.sync()
    st = c.view[inside]
    check(abs(st["x"]) >= 11 - SKIN - FLOAT_EPS or abs(st["y"]) >= 11 - SKIN - FLOAT_EPS,
          "I2: a body spawned inside a static must be pushed out: at (%g,%g), static +-10, "
          "body +-1" % (st["x"], st["y"]))
    check(abs(st["x"] - 11) < 0.1 and abs(st["y"]) < 0.1,
          "the shallowest way out of the static is +x to x=11: at (%g,%g)" % (st["x"], st["y"]))
    dist = math.hypot(c.view[b]["x"] - c.view[a]["x"], c.view[b]["y"] - c.view[a]["y"])
    check(dist >= 4 - PAIR_TOL, "I3: two moving bodies spawned overlapping must be separated: "
          "centres %g apart, radii 2+2" % dist)
    mid = (c.view[a]["x"] + c.view[b]["x"]) / 2
    check(abs(mid - 200.5) < 0.1, "two moving bodies take half each: midpoint %g, expected 200.5"
          % mid)
    admin.close()
    c.close()
    d.stop_and_check()


@test
def sliding_along_a_tiled_floor():
    # I4: a body pressed into a floor of adjacent tiles keeps its motion along it (>= 99%).
    d, admin = ct.daemon_with_admin()
    for i in range(30):
        admin.spawn_ok(ct.box(5, 5), -150 + 10 * i, -10, kind=ct.pb.BODY_KIND_STATIC)
    c = d.client()
    w = c.hello()
    shapes = [("box", ct.box(1, 1), 1.0), ("circle", ct.circle(1), 1.0),
              ("triangle", ct.polygon([(-1, -1), (1, -1), (0, 1)]), 1.0)]
    for name, shape, hy in shapes:
        bid = c.spawn_ok(shape, -140, -5 + hy + 0.01)
        c.move(bid, 100, -100, seq=1)
        c.recv_until(lambda m: snap(m) and c.view.get(bid, {}).get("seq") == 1,
                     what="%s: intent applied" % name)
        start = dict(c.view[bid])
        c.recv_until(lambda m: snap(m) and c.view[bid]["tick"] >= start["tick"] + 60,
                     what="%s: 60 ticks of sliding" % name)
        end = c.view[bid]
        free = 100.0 * (end["tick"] - start["tick"]) / w.tick_rate_hz
        got = end["x"] - start["x"]
        check(got >= 0.99 * free, "I4: %s sliding along a tiled floor covered %g of %g (%.1f%%)"
              % (name, got, free, 100 * got / free))
        check(end["y"] - hy >= -5 - SKIN - FLOAT_EPS and end["y"] - hy < -5 + 0.05,
              "%s must stay on the floor (bottom at %g, floor top -5)" % (name, end["y"] - hy))
        c.send(ct.msg_despawn(0, bid))
    admin.close()
    c.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

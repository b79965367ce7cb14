#!/usr/bin/env python3
"""Issue 10 over the wire: circles against sloped static polygons (COLLISION.md I2, I4), judged from
the snapshots alone with an independent circle-vs-convex-polygon distance in double precision.

  - a circle pressed at an angle into a long 30 degree slab, and into the face y = 0.3x of the
    issue's triangle (0,0) (10,3) (0,5), slides along it: every tick it is never more than the
    skin into the wall (I2), once at the face its gap stays in the skin band, and it advances along
    the face by the tangential part of its intent (I4);
  - a circle driven straight down into a V of two sloped flanks (16.7 and 30 degrees) slides down
    one flank, comes to rest in the V without jitter, and a straight-up intent lifts it by the
    whole intent in the very next tick.

The daemon runs at 240 Hz (--tick-rate) so that several hundred ticks take a couple of seconds;
the world's tick is the same at any rate (a fixed dt of 1/tick rate), and the checks use the
Welcome's rate. The world-level versions of these checks, and the reasons for their tolerances,
are in tests/world/test_world_slopes.c.
"""

import math
import os
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

TICK_RATE = 240
SKIN = 1e-3  # COLLISION.md I2 (GEOM_SKIN)
# The rest-gap band of tests/world/test_world_slopes.c: the slide stops a skin short of the face,
# computed in float along the closing speed (1% relative); positions here stay below 128, where a
# float is good to 3.8e-6.
GAP_EPS = 0.01
GAP_TOL = 2e-5


def gap_in_skin_band(gap):
    return SKIN * (1.0 - GAP_EPS) - GAP_TOL <= gap <= SKIN + GAP_TOL


def f32(x):
    """x rounded to float32, as the wire and the world store it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def polygon_gap(cx, cy, r, verts):
    """Signed gap between the circle (cx, cy, r) and the convex counter-clockwise polygon verts,
    in double: the distance between them when apart, minus the penetration depth when they
    overlap (the circle's overlap with the wall is max(0, -gap))."""
    inside = True
    nearest = math.inf
    n = len(verts)
    for i in range(n):
        ax, ay = verts[i]
        bx, by = verts[(i + 1) % n]
        ex, ey = bx - ax, by - ay
        if ex * (cy - ay) - ey * (cx - ax) < 0.0:
            inside = False  # right of a counter-clockwise edge: outside
        t = ((cx - ax) * ex + (cy - ay) * ey) / (ex * ex + ey * ey)
        t = min(1.0, max(0.0, t))
        nearest = min(nearest, math.hypot(cx - ax - t * ex, cy - ay - t * ey))
    return (-nearest if inside else nearest) - r


class Face:
    """A polygon face from a to b (float32 vertices, as the world holds them): its unit direction
    u and outward unit normal n (right of a -> b, the polygon being counter-clockwise), in
    double."""

    def __init__(self, a, b):
        ex, ey = b[0] - a[0], b[1] - a[1]
        self.len = math.hypot(ex, ey)
        self.a = a
        self.u = (ex / self.len, ey / self.len)
        self.n = (self.u[1], -self.u[0])

    def s(self, x, y):
        """How far along the face (x, y) lies, from a."""
        return (x - self.a[0]) * self.u[0] + (y - self.a[1]) * self.u[1]

    def point(self, s, h):
        """The point s along the face and h above it (outside), in float32."""
        return (f32(self.a[0] + s * self.u[0] + h * self.n[0]),
                f32(self.a[1] + s * self.u[1] + h * self.n[1]))

    def velocity(self, v, into):
        """v along the face turned by `into` radians towards the inside, in float32."""
        c, s = math.cos(into), math.sin(into)
        return (f32(v * (c * self.u[0] - s * self.n[0])), f32(v * (c * self.u[1] - s * self.n[1])))


def spawn_static(admin, verts):
    """A static polygon at position (0, 0) whose body-local vertices are its world vertices, so
    the world holds exactly these floats."""
    admin.spawn_ok(ct.polygon(verts), 0, 0, kind=ct.pb.BODY_KIND_STATIC)


def f32_points(points):
    return [(f32(x), f32(y)) for x, y in points]


def slab(deg, half, thick, centre=(0.0, 0.0)):
    """A slab `thick` thick whose top face runs at `deg` degrees through centre, 2 half long:
    (vertices, top face as the circle sees it)."""
    a = math.radians(deg)
    ux, uy, nx, ny = math.cos(a), math.sin(a), -math.sin(a), math.cos(a)
    cx, cy = centre
    p0, p1 = (cx - half * ux, cy - half * uy), (cx + half * ux, cy + half * uy)
    b0 = (p0[0] - thick * nx, p0[1] - thick * ny)
    b1 = (p1[0] - thick * nx, p1[1] - thick * ny)
    verts = f32_points([b0, b1, p1, p0])  # counter-clockwise; the top face is p1 -> p0
    return verts, Face(verts[2], verts[3])


# A daemon that falls behind runs up to 4 world steps in one late tick and sends one snapshot
# after them (server/net/net_daemon.c), which a loaded machine does at 240 Hz: the checks below
# take each snapshot's step over the ticks since the last one.
MAX_STEPS_PER_SNAPSHOT = 4


def each_tick(client, bid, what):
    """Yields (tick, steps, state, updated) for every snapshot from now on: the body's state after
    that tick (its last one sent when the snapshot carries none: unchanged, PROTOCOL.md rule 6),
    the ticks since the previous snapshot, and whether the snapshot carried the body."""
    prev = client.last_tick
    while True:
        m = client.recv_until(lambda m: kind_of(m) in ("snapshot", "error"),
                              what="%s: the next snapshot" % what)
        check(kind_of(m) == "snapshot", "%s: unexpected %s" % (what, describe(m)))
        tick = m.snapshot.tick
        steps = 1 if prev is None else tick - prev
        check(1 <= steps <= MAX_STEPS_PER_SNAPSHOT,
              "%s: tick %d after %s: one snapshot per tick, or per late tick's steps" % (
                  what, tick, prev))
        prev = tick
        updated = any(b.id == bid for b in m.snapshot.bodies)
        yield tick, steps, dict(client.view[bid]), updated


def slide_case(player, wall, face, radius, s0, gap0, v, into, ticks, what):
    """A circle spawned s0 along the face and gap0 off it, driven at speed v at `into` radians into
    the face, for `ticks` ticks after its intent applies. Checks I2 and the skin band against the
    wall's polygon and I4 along the face every tick."""
    x0, y0 = face.point(s0, radius + gap0)
    bid = player.spawn_ok(ct.circle(radius), x0, y0)
    player.recv_until(lambda m: kind_of(m) == "snapshot" and bid in player.view,
                      what="%s: own body" % what)
    ix, iy = face.velocity(v, into)
    dt = 1.0 / player.welcome.tick_rate_hz
    along = (ix * face.u[0] + iy * face.u[1]) * dt
    towards = -(ix * face.n[0] + iy * face.n[1]) * dt
    prev = dict(player.view[bid])
    seq = player.move(bid, ix, iy)
    applied = 0
    touching = False
    lowest = math.inf
    for tick, k, st, _ in each_tick(player, bid, what):
        gap = polygon_gap(st["x"], st["y"], radius, wall)
        at = "%s tick %d (%d with the intent)" % (what, tick, applied)
        check(gap >= -SKIN, "I2: %s: the circle is %.9g into the wall (skin %g)" % (at, -gap, SKIN))
        if st["seq"] != seq:
            check((st["x"], st["y"]) == (prev["x"], prev["y"]), "%s: moved before its intent" % at)
            prev = st
            continue
        # the intent applies from the first of the k steps since the last snapshot on
        applied += k
        lowest = min(lowest, gap)
        gap_before = polygon_gap(prev["x"], prev["y"], radius, wall)
        # reaches the face in the tick the intent closes the gap, and stays at the skin
        touching = touching or gap_before - k * towards <= SKIN
        if touching:
            check(gap_in_skin_band(gap), "%s: gap %.9g off the skin %g" % (at, gap, SKIN))
        else:
            check(abs(gap - (gap_before - k * towards)) <= 1e-5 * k,
                  "%s: closing on the face in free flight, gap %.9g, expected %.9g" % (
                      at, gap, gap_before - k * towards))
        # I4: the tangential part of the intent is kept whole every tick, at the face or not. The
        # positions are the world's floats, sent as they are, so the world test's tolerance holds:
        # 0.1% of the step (the slide's float arithmetic) plus 1e-5 (float positions below 128 are
        # good to 3.8e-6, and the step is the difference of two).
        moved = face.s(st["x"], st["y"]) - face.s(prev["x"], prev["y"])
        check(abs(moved - k * along) <= k * (0.001 * abs(along) + 1e-5),
              "I4: %s: moved %.9g along the face in %d ticks, the intent's tangential part is "
              "%.9g a tick" % (at, moved, k, along))
        prev = st
        if applied >= ticks:
            break
    check(touching, "%s: never reached the face" % what)
    print("     %s: %d ticks, lowest gap %.9g" % (what, ticks, lowest), flush=True)
    player.send(ct.msg_despawn(0, bid))
    player.recv_until(lambda m: kind_of(m) == "snapshot" and bid in m.snapshot.removed,
                      what="%s: despawned" % what)


def slope_daemon():
    """A 240 Hz daemon on an empty world, an admin client (for the statics) and a player."""
    d, admin = ct.daemon_with_admin(["--tick-rate", str(TICK_RATE)])
    player = d.client()
    player.hello()
    check(player.welcome.tick_rate_hz == TICK_RATE, "Welcome.tick_rate_hz must be %d, got %d" % (
        TICK_RATE, player.welcome.tick_rate_hz))
    return d, admin, player


def finish(d, *clients):
    for c in clients:
        c.close()
    d.stop_and_check()


# Each case has its daemon, with its statics near the origin: positions stay below 128, where
# floats are good to 4e-6 (the tolerances below assume so).


@test
def circle_pressed_into_30_degree_slab_slides_along():
    d, admin, player = slope_daemon()
    # 60 long, centred at (96, 96): the runs below stay within x, y in [64, 128), where a float
    # position is good to 3.8e-6. Not at the origin, because there the rounding of each tick's
    # position is so small that a slide which never restores the skin (the world before 64fe5bf)
    # creeps into the face by only 3e-5 in 600 ticks; here it leaves the skin band in ~120.
    wall, face = slab(30.0, 30.0, 4.0, (96.0, 96.0))
    spawn_static(admin, wall)
    # Pressed at 35 degrees, 0.05 along the face a tick, 500 ticks (25 units along the slab), both
    # ways; starting 0.25 off it, so the first ticks close on it in free flight.
    v = 0.05 * TICK_RATE / math.cos(math.radians(35.0))
    slide_case(player, wall, face, 1.0, 5.0, 0.25, v, math.radians(35.0), 500,
               "30 deg slab, downhill")
    slide_case(player, wall, face, 0.5, 55.0, 0.25, -v, -math.radians(35.0), 500,
               "30 deg slab, uphill")
    finish(d, admin, player)


@test
def circle_pressed_into_issue_triangle_slides_along():
    d, admin, player = slope_daemon()
    triangle = f32_points([(0, 0), (10, 3), (0, 5)])
    spawn_static(admin, triangle)
    face = Face(triangle[0], triangle[1])  # y = 0.3x, outward normal (3, -10) / sqrt(109)
    # The face is 10.44 long: pressed at 0.5 rad at 3 units/s from s = 2.29 (x = 2.1), 400 ticks
    # at 0.011 a tick reach s = 6.7 of it, more than a radius short of the far corner.
    slide_case(player, triangle, face, 1.0, 2.1 * math.sqrt(1.09), 0.1, 3.0, 0.5, 400,
               "issue triangle")
    finish(d, admin, player)


def valley(deg_left, deg_right, length=20.0, thick=4.0):
    """A V of two slabs meeting at the origin: the right flank's face runs up to the right at
    deg_right, the left one's up to the left at deg_left. Returns (right verts, right face, left
    verts, left face); the faces as the circle sees them (the right one from its top down)."""
    ar, al = math.radians(deg_right), math.radians(deg_left)
    top_r = (length * math.cos(ar), length * math.sin(ar))
    under_r = (top_r[0] + thick * math.sin(ar), top_r[1] - thick * math.cos(ar))
    foot_r = (thick * math.sin(ar), -thick * math.cos(ar))
    top_l = (-length * math.cos(al), length * math.sin(al))
    under_l = (top_l[0] - thick * math.sin(al), top_l[1] - thick * math.cos(al))
    foot_l = (-thick * math.sin(al), -thick * math.cos(al))
    right = f32_points([foot_r, under_r, top_r, (0, 0)])
    left = f32_points([under_l, foot_l, (0, 0), top_l])
    return right, Face(right[2], right[3]), left, Face(left[2], left[3])


def rest_case(admin, player, deg_left, deg_right, what):
    """A circle driven straight down onto the right flank of a V: slides down it
    at the tangential part of its intent, comes to rest against both flanks, stays there, and
    leaves at once when driven straight up."""
    right, fr, left, fl = valley(deg_left, deg_right)
    spawn_static(admin, right)
    spawn_static(admin, left)
    r = 0.5
    v = 24.0  # 0.1 a tick at 240 Hz
    dt = 1.0 / player.welcome.tick_rate_hz
    downhill = v * math.sin(math.radians(deg_right)) * dt
    # At rest the centre is r and a skin from both faces: where the two offset lines cross.
    (a1, b1), (a2, b2) = fr.n, fl.n
    c1 = r + SKIN + a1 * fr.a[0] + b1 * fr.a[1]
    c2 = r + SKIN + a2 * fl.a[0] + b2 * fl.a[1]
    det = a1 * b2 - a2 * b1
    rest = ((c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det)
    rest_s = fr.s(*rest)
    x0, y0 = fr.point(12.0, r + 0.05)
    bid = player.spawn_ok(ct.circle(r), x0, y0)
    player.recv_until(lambda m: kind_of(m) == "snapshot" and bid in player.view,
                      what="%s: own body" % what)
    prev = dict(player.view[bid])
    seq = player.move(bid, 0.0, f32(-v))

    def gaps(st):
        return (polygon_gap(st["x"], st["y"], r, right), polygon_gap(st["x"], st["y"], r, left))

    ticks = each_tick(player, bid, what)
    touching = False
    # Down the right flank, until it nears the bottom (bounded: 10 units at >= 0.028 a tick).
    for n, (tick, k, st, _) in enumerate(ticks):
        check(n < 2000, "%s: still sliding after 2000 ticks, at s %g of %g" % (
            what, fr.s(st["x"], st["y"]), rest_s))
        gr, gl = gaps(st)
        at_tick = "%s tick %d" % (what, tick)
        check(gr >= -SKIN and gl >= -SKIN, "I2: %s: into a flank, gaps %.9g %.9g" % (
            at_tick, gr, gl))
        check(gr >= SKIN * (1.0 - GAP_EPS) - GAP_TOL, "%s: gap %.9g below the skin" % (at_tick, gr))
        if st["seq"] == seq:
            touching = touching or gap_in_skin_band(gr)
            if touching:
                check(gap_in_skin_band(gr), "%s: gap %.9g after touching" % (at_tick, gr))
                moved = fr.s(st["x"], st["y"]) - fr.s(prev["x"], prev["y"])
                check(abs(moved - k * downhill) <= k * (0.001 * downhill + 1e-5),
                      "I4: %s: slid %.9g down the slope in %d ticks, the intent's tangential "
                      "part is %.9g a tick" % (at_tick, moved, k, downhill))
        prev = st
        if fr.s(st["x"], st["y"]) + 2.0 * downhill >= rest_s - 0.05:
            break
    check(touching, "%s: never reached the right flank" % what)
    # To the bottom: the distance left at the slide speed, with room to settle.
    settled = 0
    for tick, k, st, _ in ticks:
        gr, gl = gaps(st)
        check(gr >= -SKIN and gl >= -SKIN, "I2: %s tick %d: into a flank settling, gaps %.9g %.9g"
              % (what, tick, gr, gl))
        settled += k
        if settled >= int(0.1 / downhill) + 30:
            break
    first = st
    gr, gl = gaps(first)
    check(SKIN * (1.0 - GAP_EPS) - GAP_TOL <= min(gr, gl) and max(gr, gl) <= 4.0 * SKIN,
          "%s: at the bottom the gaps are %.9g and %.9g, want a skin off both" % (what, gr, gl))
    check(math.hypot(first["x"] - rest[0], first["y"] - rest[1]) <= 4.0 * SKIN,
          "%s: rests at (%.9g, %.9g), the V's rest point is (%.9g, %.9g)" % (
              what, first["x"], first["y"], rest[0], rest[1]))
    # At rest: 60 ticks without a body update that moves it (the world is deterministic and the
    # rest point a fixed point of its tick: the position stays exactly the same) and velocity 0.
    updates = 0
    at_rest = 0
    for tick, k, st, updated in ticks:
        updates += updated
        at_rest += k
        check((st["x"], st["y"]) == (first["x"], first["y"]),
              "%s: jitters at rest, tick %d: (%.9g, %.9g) then (%.9g, %.9g)" % (
                  what, tick, first["x"], first["y"], st["x"], st["y"]))
        check(abs(st["vx"]) <= 1e-4 and abs(st["vy"]) <= 1e-4,
              "%s: at rest with velocity (%g, %g)" % (what, st["vx"], st["vy"]))
        if at_rest >= 60:
            break
    print("     %s: at rest at (%.9g, %.9g), gaps %.9g %.9g, %d body updates in 60 ticks" % (
        what, first["x"], first["y"], gr, gl, updates), flush=True)
    # Straight up: leaves at once, by the whole intent, in the tick the intent applies.
    up_seq = player.move(bid, 0.0, f32(v))
    for tick, k, st, _ in ticks:
        if st["seq"] == up_seq:
            # the intent applied from the first of the k steps since the last snapshot
            check(abs(st["x"] - first["x"]) <= 1e-6 and
                  abs(st["y"] - first["y"] - k * v * dt) <= 1e-5 * k,
                  "%s: a straight-up intent lifted it by (%.9g, %.9g) in %d ticks, the intent is "
                  "(0, %.9g) a tick" % (what, st["x"] - first["x"], st["y"] - first["y"], k,
                                        v * dt))
            break
        check(abs(st["x"] - first["x"]) <= 1e-6 and abs(st["y"] - first["y"]) <= 1e-6,
              "%s: moved at rest before the upward intent, tick %d" % (what, tick))
    ticks.close()
    player.send(ct.msg_despawn(0, bid))
    player.recv_until(lambda m: kind_of(m) == "snapshot" and bid in m.snapshot.removed,
                      what="%s: despawned" % what)


def valley_test(deg_left, deg_right):
    d, admin, player = slope_daemon()
    rest_case(admin, player, deg_left, deg_right,
              "V of %g deg (left) and %g deg (right) flanks" % (deg_left, deg_right))
    finish(d, admin, player)


@test
def circle_rests_in_16_7_degree_valley():
    valley_test(16.7, 16.7)  # the issue's slope, y = 0.3x


@test
def circle_rests_in_30_degree_valley():
    valley_test(30.0, 30.0)


@test
def circle_rests_in_uneven_valley():
    valley_test(30.0, 16.7)


if __name__ == "__main__":
    ct.main()

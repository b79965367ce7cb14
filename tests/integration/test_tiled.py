#!/usr/bin/env python3
"""Levels from Tiled (issue 33; ARCHITECTURE.md "World files: Tiled maps", docs/operations.md
"Levels from Tiled") over the wire: the example level examples/worlds/level.tmx (its tileset
tiles.tsx, and Tiled's own JSON export level.tmj) as `--world`, as a `--world-dir` file named by
an admin's CreateRoom, and under `--check-world`.

What the map says, in world units (collide:unit 8 pixels; y = (480 - pixel y) / 8): bounds
(0, 0)-(120, 60); the ground's top at y = 6 (rows 27..29 of 30 are solid tiles); a platform of
tile 3 (a 6-pixel box at the top of its cell) along row 20, its top at y = 20 for x in [40, 56];
the sensor pool, a rectangle object with collide:sensor, over x in [37.5, 45.5], y in [6, 10];
six spawn points, (6, 10) (30, 10) (60, 10) (87.5, 10) (45, 22.5) (75, 32.5).
Each check below fails when the loader gets the map wrong: a lost y flip moves the ground to the
top, a lost sensor flag makes the pool answer without include_sensors, and so on."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

ADMIN = "adm1n"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "worlds")
LEVEL_TMX = os.path.join(EXAMPLES, "level.tmx")
LEVEL_TMJ = os.path.join(EXAMPLES, "level.tmj")
LEVEL_FILES = ("level.tmx", "level.tmj", "tiles.tsx", "tiles.png")

BOUNDS = ((0.0, 0.0), (120.0, 60.0))
GROUND_TOP = 6.0
PLATFORM_TOP = 20.0
SPAWN_POINTS = {(6.0, 10.0), (30.0, 10.0), (60.0, 10.0), (87.5, 10.0), (45.0, 22.5),
                (75.0, 32.5)}
SLOPE_SPAWN = (30.0, 10.0)
LEVEL_STATICS = 40  # --check-world's count: 32 boxes, 7 polygons, 1 circle


def daemon(args=(), **kw):
    """collided without the overload detector (its refusals are not under test here)."""
    return ct.Daemon(["--overload-window-ms", "0", *args], **kw)


def vec(v, x, y):
    v.x = x
    v.y = y


def msg_ray(rid, ox, oy, tx, ty, all_=False):
    m = ct.pb.ClientMessage(request_id=rid)
    vec(m.ray_cast.origin, ox, oy)
    vec(m.ray_cast.translation, tx, ty)
    m.ray_cast.all = all_
    m.ray_cast.filter.SetInParent()
    return m


def msg_overlap(rid, shape, x, y, include_sensors=False):
    m = ct.pb.ClientMessage(request_id=rid)
    m.overlap.shape.CopyFrom(shape)
    vec(m.overlap.position, x, y)
    m.overlap.filter.include_sensors = include_sensors
    return m


def msg_spawn_anywhere(rid, shape):
    """A moving body's SpawnBody without a position: the server picks a spawn point."""
    m = ct.pb.ClientMessage(request_id=rid)
    m.spawn.kind = ct.pb.BODY_KIND_MOVING
    m.spawn.shape.CopyFrom(shape)
    return m


def ask(c, msg):
    c.send(msg)
    sm = c.reply(msg.request_id)
    check(kind_of(sm) == "query_result", "a query must be answered by QueryResult, got %s"
          % describe(sm))
    return sm.query_result


def near(a, b, tol=1e-3):
    return abs(a - b) <= tol


def check_bounds(w, what):
    got = ((w.world_min.x, w.world_min.y), (w.world_max.x, w.world_max.y))
    check(got == BOUNDS, "%s: Welcome's bounds must be the map's %s, got %s" % (what, BOUNDS, got))


def level_answers(c, what):
    """Asks the queries whose answers the map decides, checks them, and returns them (so the TMX
    and the TMJ twin can be compared answer for answer)."""
    got = []
    # A downward ray at x = 60 (column 30: nothing but the ground below) hits the ground's top.
    r = ask(c, msg_ray(c.rid(), 60, 50, 0, -50))
    check(len(r.hits) == 1, "%s: a ray down at x=60 must hit the ground, got %s" % (what, r))
    h = r.hits[0]
    check(near(h.point.x, 60) and near(h.point.y, GROUND_TOP) and near(h.normal.y, 1),
          "%s: the ray down at x=60 hits the ground's top at y=%g, normal up: got point (%g,%g) "
          "normal (%g,%g)" % (what, GROUND_TOP, h.point.x, h.point.y, h.normal.x, h.normal.y))
    got.append(("ground", round(h.point.x, 3), round(h.point.y, 3), round(h.fraction, 4)))
    # At x = 51 (mid-cell: the platform's tiles are one box each) the platform of row 20 is above
    # the ground: all hits, the platform first.
    r = ask(c, msg_ray(c.rid(), 51, 50, 0, -50, all_=True))
    ys = [round(x.point.y, 3) for x in r.hits]
    check(len(ys) == 2 and near(ys[0], PLATFORM_TOP) and near(ys[1], GROUND_TOP),
          "%s: a ray down at x=51 hits the platform (y=%g) then the ground (y=%g), got %s"
          % (what, PLATFORM_TOP, GROUND_TOP, ys))
    got.append(("platform", ys))
    # Just under the ground's top is inside it; just over it is free.
    probe = ct.circle(0.25)
    inside = ask(c, msg_overlap(c.rid(), probe, 60, GROUND_TOP - 1))
    free = ask(c, msg_overlap(c.rid(), probe, 60, GROUND_TOP + 1))
    check(len(inside.hits) >= 1 and len(free.hits) == 0,
          "%s: a probe at (60, %g) overlaps the ground and one at (60, %g) nothing: got %d and %d "
          "hits" % (what, GROUND_TOP - 1, GROUND_TOP + 1, len(inside.hits), len(free.hits)))
    got.append(("probe", len(inside.hits), len(free.hits)))
    # The sensor pool: found only with include_sensors.
    plain = ask(c, msg_overlap(c.rid(), probe, 41.5, 8))
    sens = ask(c, msg_overlap(c.rid(), probe, 41.5, 8, include_sensors=True))
    check(len(plain.hits) == 0 and len(sens.hits) == 1,
          "%s: a probe in the pool (41.5, 8) finds nothing without include_sensors and the pool "
          "with it: got %d and %d hits" % (what, len(plain.hits), len(sens.hits)))
    got.append(("pool", len(plain.hits), len(sens.hits)))
    return got


def spawn_points_used(c, n, what):
    """n moving bodies spawned without a position: where the server put each."""
    where = []
    for _ in range(n):
        rid = c.rid()
        c.send(msg_spawn_anywhere(rid, ct.circle(0.5)))
        sm = c.reply(rid)
        check(kind_of(sm) == "spawned", "%s: a spawn without a position must succeed, got %s"
              % (what, describe(sm)))
        where.append((round(sm.spawned.position.x, 3), round(sm.spawned.position.y, 3)))
    return where


def level_session(d, what, room=None):
    c = d.client()
    check_bounds(c.hello(room=room), what)
    answers = level_answers(c, what)
    # p2 (30, 10) is the top corner of the flipped slope tile at column 15, row 25 (beside the solid
    # tile at column 14): a body there would overlap them, so the round robin passes it by (docs/protocol.md "Spawning without a
    # position") and the other five are used in turn.
    on_slope = ask(c, msg_overlap(c.rid(), ct.circle(0.5), *SLOPE_SPAWN))
    check(len(on_slope.hits) >= 1, "%s: a body on p2 %s touches the slope: got %d hits"
          % (what, SLOPE_SPAWN, len(on_slope.hits)))
    free = SPAWN_POINTS - {SLOPE_SPAWN}
    where = spawn_points_used(c, len(free), what)
    check(set(where) == free,
          "%s: five spawns without a position land on the map's five free spawn points %s, got %s"
          % (what, sorted(free), where))
    answers.append(("spawns", where))
    c.close()
    return answers


# ---- (a) and (d): --world level.tmx, and its TMJ twin ---------------------------------------


@test
def world_flag_tmx_and_tmj_twin_answer_where_the_map_says():
    d = daemon(world=LEVEL_TMX)
    tmx = level_session(d, "--world level.tmx")
    check(re.search(r"event=world_tiled", d.log_text()) is not None,
          "the daemon logs event=world_tiled for a Tiled map:\n%s" % d.log_tail())
    d.stop_and_check()
    d = daemon(world=LEVEL_TMJ)
    tmj = level_session(d, "--world level.tmj")
    d.stop_and_check()
    check(tmx == tmj, "the TMJ twin answers as the TMX does: %s vs %s" % (tmx, tmj))


# ---- (b): --world-dir and CreateRoom ---------------------------------------------------------


def level_tree():
    """A temporary tree: ROOT/worlds (the --world-dir) with a copy of the level and maps that must
    be refused, and ROOT/x.tsx, a good tileset outside it. Returns (root, worlds)."""
    root = tempfile.mkdtemp(prefix="collide-itest-tiled-")
    worlds = os.path.join(root, "worlds")
    os.mkdir(worlds)
    for f in LEVEL_FILES:
        shutil.copy(os.path.join(EXAMPLES, f), worlds)
    shutil.copy(os.path.join(EXAMPLES, "tiles.tsx"), os.path.join(root, "x.tsx"))
    with open(os.path.join(EXAMPLES, "level.tmx")) as f:
        text = f.read()
    check('source="tiles.tsx"' in text, "level.tmx names its tileset tiles.tsx")

    def variant(name, old, new):
        check(old in text, "level.tmx holds %r" % old)
        with open(os.path.join(worlds, name), "w") as f:
            f.write(text.replace(old, new, 1))

    variant("escape.tmx", 'source="tiles.tsx"', 'source="../x.tsx"')
    os.symlink("tiles.tsx", os.path.join(worlds, "link.tsx"))
    variant("linked.tmx", 'source="tiles.tsx"', 'source="link.tsx"')
    # Corrupt tile data: a letter in the ground layer's CSV (the <data> element is on line 8).
    variant("corrupt.tmx", "\n1,0,0,0,", "\n1,0,x,0,")
    return root, worlds


@test
def create_room_from_world_dir_level_and_refusals():
    root, worlds = level_tree()
    try:
        d = daemon(["--admin-token", ADMIN, "--world-dir", worlds], world=ct.write_world())
        boss = d.client()
        boss.hello(token=ADMIN)
        for name, world in (("lvl", "level.tmx"), ("lvlj", "level.tmj")):
            sm = boss.create_room(name, world)
            check(kind_of(sm) == "room_info", "CreateRoom %s from %s must succeed, got %s"
                  % (name, world, describe(sm)))
            check(sm.room_info.bodies == LEVEL_STATICS, "RoomInfo.bodies: the level's %d statics, "
                  "got %d" % (LEVEL_STATICS, sm.room_info.bodies))
        tmx = level_session(d, "room lvl (level.tmx)", room="lvl")
        tmj = level_session(d, "room lvlj (level.tmj)", room="lvlj")
        check(tmx == tmj, "rooms from the TMX and the TMJ answer alike: %s vs %s" % (tmx, tmj))
        refusals = (
            ("escape.tmx", r"^escape\.tmx:6: tileset '\.\./x\.tsx': outside the map's directory",
             "a tileset outside the directory"),
            ("linked.tmx", r"^linked\.tmx:6: tileset 'link\.tsx': .*symbolic link",
             "a tileset that is a symbolic link"),
            ("corrupt.tmx", r"^corrupt\.tmx:8: layer 'ground': data: csv: .+ at byte 5",
             "corrupt tile data"),
        )
        for i, (world, pattern, why) in enumerate(refusals):
            sm = boss.create_room("bad%d" % i, world)
            check(kind_of(sm) == "error" and sm.error.code == ct.code_of("BAD_REQUEST")
                  and not sm.error.fatal,
                  "CreateRoom of a map with %s: a non-fatal BAD_REQUEST, got %s"
                  % (why, describe(sm)))
            check(re.search(pattern, sm.error.message) is not None,
                  "CreateRoom of a map with %s: the error must say FILE:LINE and why (%s), got %r"
                  % (why, pattern, sm.error.message))
            boss.assert_open("after CreateRoom refused " + world)
        names = [r.name for r in boss.list_rooms().room_list.rooms]
        check(sorted(names) == ["default", "lvl", "lvlj"],
              "a refused CreateRoom creates nothing: %s" % names)
        boss.close()
        d.stop_and_check()
    finally:
        shutil.rmtree(root)


# ---- (c): --check-world ----------------------------------------------------------------------


def check_world(path):
    p = subprocess.run([ct.OPTS.collided, "--check-world", path], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=ct.START_TIMEOUT)
    return p.returncode, p.stdout, p.stderr


@test
def check_world_counts_and_bad_maps_by_line():
    for path in (LEVEL_TMX, LEVEL_TMJ):
        rc, out, err = check_world(path)
        check(rc == 0, "--check-world %s exits 0, got %d: %s" % (path, rc, err))
        for want in ("Tiled world", "bounds: [0, 0] - [120, 60]",
                     "statics: %d (boxes 32, polygons 7, circles 1)" % LEVEL_STATICS,
                     "from tiles: 35 statics for 288 collidable tiles", "spawn points: 6",
                     "warnings: 0"):
            check(want in out, "--check-world %s prints %r:\n%s" % (path, want, out))
    with open(LEVEL_TMX) as f:
        text = f.read()
    tmp = tempfile.mkdtemp(prefix="collide-itest-tiled-")
    try:
        shutil.copy(os.path.join(EXAMPLES, "tiles.tsx"), tmp)
        bad = (
            ("iso.tmx", 'orientation="orthogonal"', 'orientation="isometric"',
             r"iso\.tmx:2: orientation 'isometric': only orthogonal maps"),
            ("oval.tmx", 'width="32" height="32">', 'width="32" height="16">',
             r"oval\.tmx:%d: layer 'shapes' object 2: an ellipse of 32 x 16 pixels: only circles"),
        )
        for name, old, new, pattern in bad:
            check(old in text, "level.tmx holds %r" % old)
            changed = text.replace(old, new, 1)
            line = changed[:changed.index(new)].count("\n") + 1
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(changed)
            rc, out, err = check_world(path)
            if "%d" in pattern:
                pattern = pattern % line
            check(rc == 1, "--check-world on %s exits 1, got %d" % (name, rc))
            check(re.match(re.escape(tmp) + "/" + pattern, err) is not None,
                  "--check-world on %s: stderr must be FILE:LINE: reason (%s), got %r"
                  % (name, pattern, err))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    ct.main()

#!/usr/bin/env python3
"""Rooms (protocol 1.1, PROTOCOL.md "Additions": Rooms, Backends and batches, Shutting down,
Welcome.features; issue 13): many isolated worlds in one daemon. Hello.room and its name rules,
auto-create and the idle close, --max-rooms, the admin's CreateRoom / CloseRoom / ListRooms,
GET /rooms and the per-room metrics, rooms opening and closing under load on --threads 2, the
drain, and an admin backend's NPCs in a named room."""

import os
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

ADMIN = "adm1n"
# A room name is 1..64 bytes of [A-Za-z0-9_.:-] (PROTOCOL.md "Rooms").
NAME_CHARS = "abcXYZ019_.:-"


def daemon(args=(), **kw):
    """collided without the overload detector (issue 12): under TSan or ASan on 2 shared cores a
    room's ticks run late, and "at capacity" refusals of Hellos are not what these tests check."""
    return ct.Daemon(["--overload-window-ms", "0", *args], **kw)


def snap(m):
    return kind_of(m) == "snapshot"


def box_static(x, y, h=5):
    return (x, y, {"box": {"half_extents": [h, h]}})


def see_all(c):
    """A view over the whole of write_world's bounds (a player needs ct.WHOLE_WORLD_VIEW): the
    default view is only around a client's own bodies."""
    c.send(ct.msg_set_view(c.rid(), 0, 0, 1000, 1000))
    return c


def admin(d, room=None):
    c = d.client()
    c.hello(token=ADMIN, room=room)
    return see_all(c)


def player(d, room=None):
    c = d.client()
    c.hello(room=room)
    return see_all(c)


def expect_kind(sm, kind, what):
    check(kind_of(sm) == kind, "%s: expected %s, got %s" % (what, kind, describe(sm)))
    return getattr(sm, kind)


def expect_admin_error(c, sm, code, what):
    """A non-fatal Error{code} answering an admin request; the session goes on."""
    check(kind_of(sm) == "error" and sm.error.code == ct.code_of(code),
          "%s: expected Error{%s}, got %s" % (what, code, describe(sm)))
    check(not sm.error.fatal, "%s: Error{%s} must not be fatal" % (what, code))
    c.assert_open(what + " (after a non-fatal error)")


def positions(c):
    """The bodies a client sees, as rounded positions (ids are per room, positions tell apart)."""
    return sorted((round(st["x"]), round(st["y"])) for st in c.view.values())


def expect_goodbye_then_close(c, what, reason=None, timeout=ct.REPLY_TIMEOUT):
    msgs = [m for m in c.wait_closed(timeout) if not snap(m)]
    byes = [m for m in msgs if kind_of(m) == "goodbye"]
    check(len(byes) == 1 and msgs[-1] is byes[0],
          "%s: one Goodbye, then the close; got %s" % (what, [describe(m) for m in msgs]))
    if reason is not None:
        check(byes[0].goodbye.reason == reason, "%s: Goodbye.reason must be %r, got %r" % (
            what, reason, byes[0].goodbye.reason))
    return byes[0]


def room_row(rows, name):
    got = [r for r in rows if r.get("name") == name]
    check(len(got) == 1, "room %r must be listed once, got %s" % (name, rows))
    return got[0]


# ---------------------------------------------------------------------------------------------


@test
def rooms_are_isolated_same_ids_in_both():
    # One thread: both rooms on one loop, the closest two rooms ever are.
    d = daemon(["--threads", "1", "--rate-limit", "20"] + ct.WHOLE_WORLD_VIEW,
                  world=ct.write_world())
    a = player(d, "alpha")
    b = player(d, "beta")
    check(a.welcome.room == "alpha" and b.welcome.room == "beta",
          "Welcome.room must name the room joined: %r, %r" % (a.welcome.room, b.welcome.room))
    a1 = a.spawn_ok(ct.circle(2), -100, 0)
    b1 = b.spawn_ok(ct.circle(2), 100, 0)
    # Ids are per room: two fresh rooms from the same empty world give their first body the same
    # id (a daemon-wide id counter would not).
    check(a1 == b1, "ids are per room: the first body of two fresh rooms must have the same id, "
          "got %d and %d" % (a1, b1))
    b2 = b.spawn_ok(ct.circle(2), 100, 100)
    check(b2 != a1, "b's second body needs an id unknown in alpha")
    b.move(b1, 0, 20)
    a.sync()
    a.sync()
    b.sync()
    check(positions(a) == [(-100, 0)], "a snapshot of alpha must show alpha's one body only, "
          "got %s" % positions(a))
    check(abs(a.view[a1]["y"]) < 1e-3, "b moving its body %d must not move a's body %d" % (b1, a1))
    check(b.view[b1]["y"] > 1, "b's body must move")
    # An id that exists only in the other room is no body here.
    r = a.rid()
    a.send(ct.msg_move(r, b2, 1, 10, 0))
    a.expect_error(r, "NOT_FOUND", "MoveIntent on an id of the other room", fatal=False)
    r = a.rid()
    a.send(ct.msg_despawn(r, b2))
    a.expect_error(r, "NOT_FOUND", "DespawnBody on an id of the other room", fatal=False)
    # Despawning its own body with the shared id leaves b's body of that id alone.
    a.send(ct.msg_despawn(a.rid(), a1))
    a.recv_until(lambda m: snap(m) and a1 in m.snapshot.removed, what="a's despawn applied")
    bx, by = b.view[b2]["x"], b.view[b2]["y"]
    b.sync()
    check(b1 in b.view and b2 in b.view, "b's bodies must survive a's despawns: %s"
          % sorted(b.view))
    check(b1 not in b.removed_seen, "a's despawn of id %d must not remove b's" % b1)
    check(abs(b.view[b2]["x"] - bx) < 1e-3 and abs(b.view[b2]["y"] - by) < 1e-3,
          "a's MoveIntent must not have moved b's body")
    # Views are per client: a looks at an empty corner, b still sees its bodies.
    a.send(ct.msg_set_view(a.rid(), 900, 900, 5, 5))
    a.sync()
    b.sync()
    b.sync()
    check(not b.removed_seen and b.view[b1]["tick"] == b.last_tick,
          "a's SetView must not change b's view: removed %s, b1 last seen at tick %d of %d"
          % (sorted(b.removed_seen), b.view[b1]["tick"], b.last_tick))
    # Rate buckets are per client: a spends all of its (burst 2 x 20) and more ...
    base = a.next_rid
    a.send(*[ct.msg_ping(base + 1 + i, 1) for i in range(60)])
    a.next_rid += 60
    limited = [m for m in a.pump(1.0) if kind_of(m) == "error"
               and m.error.code == ct.code_of("RATE_LIMITED")]
    check(limited, "60 pings at --rate-limit 20 must be rate limited")
    # ... while b, in the other room, still has its own burst.
    base = b.next_rid
    b.send(*[ct.msg_ping(base + 1 + i, 2) for i in range(30)])
    b.next_rid += 30
    for i in range(30):
        m = b.reply(base + 1 + i)
        check(kind_of(m) == "pong", "b's ping %d of 30 must be answered (its own bucket): %s"
              % (i + 1, describe(m)))
    a.close()
    b.close()
    d.stop_and_check()


@test
def room_names_and_features():
    d = daemon(ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    c = d.client()
    w = c.hello(room="")
    check(w.room == "default", "Hello.room \"\" must join `default`, Welcome.room %r" % w.room)
    for f in ("rooms", "batch"):
        check(f in w.features, "Welcome.features must list %r: %s" % (f, list(w.features)))
    # `default` by name is the same room as "".
    body = c.spawn_ok(ct.circle(1), 10, 10)
    same = player(d, "default")
    check(same.welcome.room == "default", "Welcome.room %r" % same.welcome.room)
    same.recv_until(lambda m: snap(m) and body in same.view,
                    what="the body of a client of \"\" seen from `default`")
    longest = (NAME_CHARS * 8)[:64]
    ok = player(d, longest)
    check(ok.welcome.room == longest, "a 64-byte name must be joined as is: %r"
          % ok.welcome.room)
    for bad, why in (((NAME_CHARS * 8)[:65], "65 bytes"), ("a b", "a space"), ("a/b", "a slash"),
                     ("caf\u00e9", "non-ASCII"), ("..\\x", "a backslash"), ("x\ty", "a tab")):
        d.client().hello_refused("BAD_REQUEST", room=bad, what="room name with %s" % why)
    ct.full_session(d, "after refused room names")
    for x in (c, same, ok):
        x.close()
    d.stop_and_check()


@test
def auto_room_idle_closes_and_comes_back_fresh():
    idle_ms = 600
    world = ct.write_world(statics=[box_static(50, 50)])
    d = daemon(["--admin-token", ADMIN, "--room-idle-ms", str(idle_ms)] + ct.WHOLE_WORLD_VIEW,
                  http=True, world=world)
    boss = admin(d, "x")
    p = player(d, "x")
    boss.spawn_ok(ct.box(3, 3), -50, -50, kind=ct.pb.BODY_KIND_STATIC)
    p.spawn_ok(ct.circle(1), 0, -100)
    check(d.wait_log(r"event=room_created\b.*room=x\b.*auto=1"),
          "the creation on join must be logged (event=room_created room=x auto=1)")
    row = room_row(d.rooms(), "x")
    check(row.get("auto") is True and row.get("clients") == 2,
          "/rooms: x was created on join (auto) and holds 2 clients: %s" % row)
    time.sleep(1.0)  # the old room's tick runs well past a new room's
    p.sync()
    old_tick = p.last_tick
    check(sorted(positions(p)) == [(-50, -50), (0, -100), (50, 50)],
          "x holds the world's static, the admin's static and the player's body: %s"
          % positions(p))
    boss.close()
    p.close()
    t_left = time.monotonic()
    # Not before its idle time: the room is still there at half of it (the daemon's count of it
    # starts no earlier than our close; an answer that took too long proves nothing) ...
    time.sleep(0.5 * idle_ms / 1000)
    rows = d.rooms()
    if time.monotonic() - t_left < 0.95 * idle_ms / 1000:
        check("x" in [r["name"] for r in rows], "x must not close before --room-idle-ms: %s"
              % rows)
    # ... and gone well after it.
    deadline = t_left + 5.0
    while "x" in d.room_names():
        check(time.monotonic() < deadline, "x must idle-close after %d ms without clients"
              % idle_ms)
        time.sleep(0.05)
    check(d.wait_log(r"room_idle_closed.*room=x\b", 2.0),
          "the idle close must be logged (room_idle_closed room=x)")
    check("default" in d.room_names(), "`default` stays")
    # A new join creates a fresh x: the world's statics anew, nothing of the old room.
    q = player(d, "x")
    check(q.welcome.tick < old_tick, "a fresh x starts its own ticks: Welcome.tick %d, the old "
          "room was at %d" % (q.welcome.tick, old_tick))
    q.sync()
    check(positions(q) == [(50, 50)], "a fresh x holds the world's statics only: %s"
          % positions(q))
    q.close()
    d.stop_and_check()


@test
def default_never_idle_closes_and_auto_create_off():
    d = daemon([*ct.WHOLE_WORLD_VIEW, "--room-idle-ms", "200"], http=True,
                  world=ct.write_world())
    c = player(d, "")
    t0 = c.welcome.tick
    c.close()
    time.sleep(1.0)
    check("default" in d.room_names(), "`default` must never idle-close")
    c = player(d, "default")
    check(c.welcome.tick > t0, "`default` goes on ticking (Welcome.tick %d after %d)"
          % (c.welcome.tick, t0))
    c.close()
    d.stop_and_check()
    d = daemon([*ct.WHOLE_WORLD_VIEW, "--room-auto-create", "off"], http=True,
                  world=ct.write_world())
    d.client().hello_refused("NOT_FOUND", room="nowhere",
                             what="an unknown room with --room-auto-create off")
    check(d.room_names() == ["default"], "a refused join creates no room: %s" % d.room_names())
    player(d, "").close()
    d.stop_and_check()


@test
def max_rooms_counts_rooms_besides_default():
    d = daemon([*ct.WHOLE_WORLD_VIEW, "--max-rooms", "2", "--room-idle-ms", "300"], http=True,
                  world=ct.write_world())
    r1 = player(d, "r1")
    r2 = player(d, "r2")
    d.client().hello_refused("LIMIT_EXCEEDED", room="r3", what="a third room at --max-rooms 2")
    # Joining a room that exists, or `default`, is no new room.
    extra = player(d, "r1")
    home = player(d, "")
    check(sorted(d.room_names()) == ["default", "r1", "r2"], "rooms: %s" % d.room_names())
    # Once r2 idle-closes there is room for r3.
    r2.close()
    deadline = time.monotonic() + 5
    while "r2" in d.room_names():
        check(time.monotonic() < deadline, "r2 must idle-close")
        time.sleep(0.05)
    r3 = player(d, "r3")
    for c in (r1, extra, home, r3):
        c.close()
    d.stop_and_check()


@test
def admin_create_room_with_a_world_file():
    wdir = ct.world_dir()
    ct.write_world(statics=[box_static(-200, 0), box_static(200, 0)], directory=wdir,
                   name="arena.json")
    default_world = ct.write_world(statics=[box_static(0, 300)])
    d = daemon(["--admin-token", ADMIN, "--world-dir", wdir, "--max-rooms", "3"]
                  + ct.WHOLE_WORLD_VIEW, world=default_world)
    boss = admin(d)
    info = expect_kind(boss.create_room("arena1", "arena.json"), "room_info",
                       "CreateRoom arena1 with arena.json")
    check((info.name, info.clients, info.bodies, info.auto) == ("arena1", 0, 2, False),
          "RoomInfo must be {arena1, 0 clients, 2 bodies (its statics), auto false}: %s" % info)
    p = player(d, "arena1")
    p.sync()
    check(positions(p) == [(-200, 0), (200, 0)], "a player of arena1 sees arena.json's statics: %s"
          % positions(p))
    info = expect_kind(boss.create_room("plain", ""), "room_info", "CreateRoom with world \"\"")
    check(info.bodies == 1 and not info.auto,
          "world \"\" is the default world (1 static): %s" % info)
    for world, code, why in (("../arena.json", "BAD_REQUEST", "a '..'"),
                             ("sub/arena.json", "BAD_REQUEST", "a '/'"),
                             (wdir + "/arena.json", "BAD_REQUEST", "an absolute path"),
                             ("..", "BAD_REQUEST", "'..' alone"),
                             ("missing.json", "NOT_FOUND", "no such file")):
        expect_admin_error(boss, boss.create_room("w-" + code.lower(), world), code,
                           "CreateRoom with a world name with %s" % why)
    expect_admin_error(boss, boss.create_room("arena1", ""), "BAD_REQUEST",
                       "CreateRoom of a room that exists")
    expect_admin_error(boss, boss.create_room("default", ""), "BAD_REQUEST",
                       "CreateRoom of `default`")
    expect_admin_error(boss, boss.create_room("bad name", ""), "BAD_REQUEST",
                       "CreateRoom of an invalid name")
    info = expect_kind(boss.create_room("solo", "", max_clients=1), "room_info",
                       "CreateRoom with max_clients 1")
    expect_admin_error(boss, boss.create_room("fourth", ""), "LIMIT_EXCEEDED",
                       "CreateRoom past --max-rooms 3")
    first = player(d, "solo")
    d.client().hello_refused("LIMIT_EXCEEDED", room="solo", what="a second joiner of a room of "
                             "max_clients 1")
    first.close()
    # The seat is free once its holder left.
    deadline = time.monotonic() + 5
    while True:
        c = d.client()
        c.send(ct.msg_hello(1, room="solo"))
        m = c.reply(1)
        if kind_of(m) == "welcome":
            break
        check(time.monotonic() < deadline and m.error.code == ct.code_of("LIMIT_EXCEEDED"),
              "solo's seat must be free again once its client left: %s" % describe(m))
        c.close()
        time.sleep(0.05)
    c.close()
    # Non-admins may not.
    for msg, what in ((ct.msg_create_room(0, "mine"), "CreateRoom"),
                      (ct.msg_close_room(0, "arena1"), "CloseRoom"),
                      (ct.msg_list_rooms(0), "ListRooms")):
        expect_admin_error(p, p.admin_request(msg), "FORBIDDEN", "a non-admin's " + what)
    rooms = expect_kind(boss.list_rooms(), "room_list", "ListRooms").rooms
    check(sorted(r.name for r in rooms) == ["arena1", "default", "plain", "solo"],
          "a non-admin's CreateRoom creates nothing: %s" % [r.name for r in rooms])
    for x in (boss, p):
        x.close()
    d.stop_and_check()


@test
def admin_close_room_says_goodbye_and_list_rooms():
    d = daemon([*ct.WHOLE_WORLD_VIEW, "--admin-token", ADMIN, "--room-idle-ms", "300"],
                  world=ct.write_world())
    boss = admin(d)
    expect_kind(boss.create_room("match", ""), "room_info", "CreateRoom match")
    expect_kind(boss.create_room("stay", ""), "room_info", "CreateRoom stay")
    p1 = player(d, "match")
    p2 = player(d, "match")
    p1.spawn_ok(ct.circle(1), 0, 0)
    auto = player(d, "zz-auto")
    home = player(d, "")
    rooms = expect_kind(boss.list_rooms(), "room_list", "ListRooms").rooms
    names = [r.name for r in rooms]
    check(names[0] == "default" and sorted(names) == ["default", "match", "stay", "zz-auto"],
          "RoomList: `default` first, then every room: %s" % names)
    by = {r.name: r for r in rooms}
    check(by["match"].clients == 2 and not by["match"].auto and by["zz-auto"].auto
          and by["default"].clients == 2,
          "RoomList figures (clients, auto): %s" % [(r.name, r.clients, r.auto) for r in rooms])
    info = expect_kind(boss.close_room("match", "match over"), "room_info", "CloseRoom match")
    check(info.name == "match" and info.clients == 2 and not info.auto,
          "CloseRoom answers RoomInfo as the room was (2 clients): %s" % info)
    for c in (p1, p2):
        expect_goodbye_then_close(c, "a client of a closed room", reason="match over")
    check(d.wait_log(r'event=room_closed\b.*room=match\b.*match over'),
          "the close must be logged with its reason (event=room_closed room=match)")
    home.assert_open("a client of `default` after CloseRoom match")
    auto.assert_open("a client of another room after CloseRoom match")
    expect_admin_error(boss, boss.close_room("match", "again"), "NOT_FOUND",
                       "CloseRoom of a room already closed")
    expect_admin_error(boss, boss.close_room("nope", ""), "NOT_FOUND", "CloseRoom of no room")
    expect_admin_error(boss, boss.close_room("default", ""), "FORBIDDEN", "CloseRoom of `default`")
    # An admin's room does not idle-close (stay never had a client; --room-idle-ms is 300).
    time.sleep(1.0)
    names = [r.name for r in expect_kind(boss.list_rooms(), "room_list", "ListRooms").rooms]
    check("stay" in names and "match" not in names, "rooms after the close: %s" % names)
    for x in (boss, auto, home):
        x.close()
    d.stop_and_check()


@test
def closed_rooms_stay_in_the_daemon_wide_counters():
    """Counters never go back: a closed room's ticks, frames and connections stay in the
    daemon-wide sums (each thread keeps the totals of its closed rooms)."""
    d = daemon(["--admin-token", ADMIN], http=True, world=ct.write_world())
    boss = admin(d)
    expect_kind(boss.create_room("brief", ""), "room_info", "CreateRoom brief")
    p = player(d, "brief")
    p.spawn_ok(ct.circle(1), 0, 0)
    time.sleep(0.3)  # the room ticks, its player's frames are counted
    names = ("collide_ticks_total", "collide_frames_in_total", "collide_frames_out_total",
             "collide_connections_total")
    before = d.metrics()
    in_room = room_samples(before, "collide_room_ticks_total").get("brief", 0)
    check(in_room >= 5, "the room ticked before its close: %s ticks" % in_room)
    expect_kind(boss.close_room("brief", "over"), "room_info", "CloseRoom brief")
    expect_goodbye_then_close(p, "the player of the closed room", reason="over")
    deadline = time.monotonic() + 5
    while "brief" in room_samples(d.metrics(), "collide_room_ticks_total"):
        check(time.monotonic() < deadline, "the closed room must leave the per-room series")
        time.sleep(0.05)
    after = d.metrics()
    for n in names:
        check(ct.metric(after, n) >= ct.metric(before, n),
              "%s went back when a room closed: %s -> %s" % (n, ct.metric(before, n),
                                                              ct.metric(after, n)))
    check(ct.metric(after, "collide_disconnects_total", reason="room_closed") >= 1,
          "the closed room's player counts as reason=\"room_closed\"")
    boss.close()
    d.stop_and_check()


def room_samples(parsed, name):
    """{room label: value} of a collide_room_* family (summed over its other labels)."""
    out = {}
    for n, labels, v in parsed["samples"]:
        if n == name:
            r = labels.get("room")
            check(r is not None, "%s must carry a room label: %s" % (name, labels))
            out[r] = out.get(r, 0.0) + v
    return out


@test
def get_rooms_and_per_room_metrics():
    d = daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, http=True,
                  world=ct.write_world(statics=[box_static(0, 300)]))
    home = player(d, "")
    m1 = [player(d, "m1") for _ in range(2)]
    for i, c in enumerate(m1):
        c.spawn_ok(ct.circle(1), -100 + 50 * i, 0)
    m2 = player(d, "m2")
    for c in m1 + [m2, home]:
        c.sync()
    rows = d.rooms()
    check([r.get("name") for r in rows][0] == "default", "/rooms lists `default` first: %s" % rows)
    keys = {"name", "clients", "bodies", "tick", "auto", "tick_p99_ms"}
    for r in rows:
        check(keys <= set(r), "/rooms: every room has %s: %s" % (sorted(keys), r))
    want = {"default": (1, 1, False), "m1": (2, 3, True), "m2": (1, 1, True)}
    got = {r["name"]: (r["clients"], r["bodies"], r["auto"]) for r in rows}
    check(got == want, "/rooms (clients, bodies, auto) must be %s, got %s" % (want, got))
    for r in rows:
        check(r["tick"] > 0 and isinstance(r["tick_p99_ms"], (int, float))
              and r["tick_p99_ms"] >= 0, "/rooms: a ticking room's tick and p99: %s" % r)
    parsed = d.metrics()
    clients = room_samples(parsed, "collide_room_clients")
    check(clients == {"default": 1, "m1": 2, "m2": 1},
          "collide_room_clients per room: %s" % clients)
    bodies = {k: v for k, v in room_samples(parsed, "collide_room_bodies").items()}
    check(bodies == {"default": 1, "m1": 3, "m2": 1}, "collide_room_bodies per room: %s" % bodies)
    for fam in ("collide_room_ticks_total", "collide_room_snapshots_sent_total"):
        per = room_samples(parsed, fam)
        check(set(per) == {"default", "m1", "m2"} and all(v > 0 for v in per.values()),
              "%s: a positive series per room: %s" % (fam, per))
    per = room_samples(parsed, "collide_room_tick_duration_seconds_count")
    check(set(per) == {"default", "m1", "m2"}, "the tick histogram is per room: %s" % per)
    # The daemon-wide series are the sums over the rooms (one scrape, one set of figures).
    for wide, fam in (("collide_ticks_total", "collide_room_ticks_total"),
                      ("collide_snapshots_sent_total", "collide_room_snapshots_sent_total")):
        total = ct.metric(parsed, wide)
        check(total == sum(room_samples(parsed, fam).values()),
              "%s (%s) must be the sum of %s (%s)" % (wide, total, fam,
                                                     room_samples(parsed, fam)))
    check(ct.metric(parsed, "collide_bodies") == 5, "collide_bodies: all rooms' bodies, 5: %s"
          % ct.metric(parsed, "collide_bodies"))
    for c in m1 + [m2, home]:
        c.close()
    d.stop_and_check()


@test
def per_room_metrics_bounded_to_64_rooms_and_other():
    # 70 rooms of one client each, one of them (r68) with two: the 64 with the most clients are
    # labelled (ties: `default` first, then by name, docs/operations.md), the other 6 sum into
    # room="other".
    d = daemon([], http=True, world=ct.write_world())
    held = [player(d, "")] + [player(d, "r%02d" % i) for i in range(69)] + [player(d, "r68")]
    for c in held:
        c.assert_open()
    parsed = d.metrics()
    clients = room_samples(parsed, "collide_room_clients")
    check(len(clients) == 65 and clients.get("other") == 6 and clients.get("r68") == 2
          and clients.get("default") == 1,
          "collide_room_clients: 64 rooms labelled (r68 with its 2 clients, `default`) and the "
          "other 6 summed in room=\"other\": %s" % sorted(clients.items()))
    check(sum(clients.values()) == 71, "the sum over room stays exact")
    # Ties are broken by name: of the rooms of one client, r00..r61 are labelled.
    want = {"default": 1, "r68": 2, "other": 6}
    want.update({"r%02d" % i: 1 for i in range(62)})
    check(clients == want, "collide_room_clients: ties go to `default` first, then by name "
          "(docs/operations.md); differs at %s"
          % sorted(set(clients.items()) ^ set(want.items())))
    check(len(d.rooms()) == 70, "/rooms lists all 70 rooms")
    for c in held:
        c.close()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Threads


class Outcomes:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.bad = []

    def add(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def fail(self, what):
        with self.lock:
            self.bad.append(what)


def joiner_once(d, room, out):
    """One client's life in a room that may be closed under it: Welcome then a ping and a close of
    its own, or Welcome then Goodbye then the close, or a fatal Error then the close. Anything
    else (no answer, a close without a word) is a failure."""
    try:
        c = d.client(timeout=5)
    except OSError as e:
        out.fail("connect to %s: %s" % (room, e))
        return
    try:
        c.send(ct.msg_hello(1, room=room))
        m = c.recv_until(lambda m: not snap(m), timeout=5, what="the answer to Hello")
        if kind_of(m) == "error":
            if not m.error.fatal:
                out.fail("%s: non-fatal %s to Hello" % (room, describe(m)))
                return
            c.wait_closed(5)
            out.add("refused:" + ct.err_name(m.error.code))
            return
        if kind_of(m) == "goodbye":  # the drain began before its Hello was read (PROTOCOL.md)
            c.wait_closed(5)
            out.add("goodbye before welcome")
            return
        if kind_of(m) != "welcome":
            out.fail("%s: Hello answered by %s" % (room, describe(m)))
            return
        rid = c.rid()
        try:
            c.send(ct.msg_ping(rid, 1))
        except OSError:
            pass  # closed meanwhile: its Goodbye is still to be read
        m = c.recv_until(lambda m: not snap(m), timeout=5, what="Pong or Goodbye")
        if kind_of(m) == "pong":
            out.add("served")
        elif kind_of(m) == "goodbye":
            rest = [x for x in c.wait_closed(5) if not snap(x)]
            if rest:
                out.fail("%s: after Goodbye: %s" % (room, [describe(x) for x in rest]))
            out.add("goodbye")
        else:
            out.fail("%s: ping answered by %s" % (room, describe(m)))
    except ct.TestFailure as e:
        out.fail("%s: %s" % (room, e))
    except OSError as e:
        out.fail("%s: %s" % (room, e))
    finally:
        c.close()


@test
def threads_rooms_open_and_close_under_load_then_sigterm():
    d = daemon([*ct.WHOLE_WORLD_VIEW, "--admin-token", ADMIN, "--threads", "2",
                   "--room-idle-ms", "200", "--drain-timeout-ms", "3000"], world=ct.write_world())
    home = player(d, "")
    boss = admin(d)
    out = Outcomes()
    stop = threading.Event()

    def joiners(seed):
        i = seed
        while not stop.is_set():
            # The auto rooms r0..r19, and the admin's rooms c0..c7 that come and go.
            room = "r%d" % (i % 20) if i % 3 else "c%d" % (i % 8)
            joiner_once(d, room, out)
            i += 7

    threads = [threading.Thread(target=joiners, args=(s,), daemon=True) for s in range(6)]
    for t in threads:
        t.start()
    closes = 0
    deadline = time.monotonic() + 4.0
    k = 0
    try:
        while time.monotonic() < deadline:
            name = "c%d" % (k % 8)
            m = boss.create_room(name, "")
            # An auto room of that name may exist already (a joiner came first): BAD_REQUEST.
            check(kind_of(m) == "room_info" or (kind_of(m) == "error" and not m.error.fatal and
                  m.error.code == ct.code_of("BAD_REQUEST")), "CreateRoom %s: %s"
                  % (name, describe(m)))
            time.sleep(0.02)
            m = boss.close_room(name, "round over")
            check(kind_of(m) == "room_info" or (kind_of(m) == "error" and not m.error.fatal and
                  m.error.code == ct.code_of("NOT_FOUND")), "CloseRoom %s: %s"
                  % (name, describe(m)))
            closes += kind_of(m) == "room_info"
            m = home.ping()
            check(kind_of(m) == "pong", "`default` must be served throughout: %s" % describe(m))
            k += 1
    finally:
        stop.set()
        for t in threads:
            t.join(20)
    check(not any(t.is_alive() for t in threads), "a joiner hung")
    check(not out.bad, "every joiner gets Welcome (then a Pong or Goodbye) or a fatal Error: %s"
          % out.bad[:5])
    check("goodbye before welcome" not in out.counts, "no Goodbye before the drain: %s"
          % out.counts)
    check(out.counts.get("served", 0) > 20 and closes > 10,
          "the load must have happened: %s, %d closes" % (out.counts, closes))
    print("  joiners: %s, %d rooms closed under them" % (sorted(out.counts.items()), closes))
    ct.full_session(d, "after rooms opened and closed under load")
    # SIGTERM mid-load: every client, in every room, gets Goodbye and the daemon exits 0.
    held = [player(d, "r%d" % i) for i in range(10)] + [player(d, "c%d" % i) for i in range(4)]
    held += [home, boss]
    stop.clear()
    threads = [threading.Thread(target=joiners, args=(s,), daemon=True) for s in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    for i, c in enumerate(held):
        expect_goodbye_then_close(c, "held client %d at SIGTERM" % i, timeout=10)
    stop.set()
    for t in threads:
        t.join(20)
    try:  # no second signal: one SIGTERM drains
        rc = d.proc.wait(3.0 + 5.0 - (time.monotonic() - t0))
    except Exception:
        rc = None
    check(rc == 0, "collided must exit 0 within the drain timeout (3 s) after SIGTERM, got %s"
          % rc)
    # A connect refused, or reset by the closing listener, is a refusal (the listener may close
    # when the drain begins); a close without a word after an accept is not.
    print("  with the drain: %s" % sorted(out.counts.items()))
    bad = [b for b in out.bad if "connect to" not in b
           and "connection reset" not in b.lower()]
    check(not bad, "during the drain, a joiner gets Welcome then Goodbye, a fatal Error, or a "
          "refused connect: %s" % bad[:5])
    check(not d.sanitizer_reports(), "sanitizer reports")


@test
def hello_after_drain_began_is_refused():
    # A client that does not read holds the drain open: its Goodbye waits behind a full socket
    # until the daemon cuts it (a closing client that does not drain: 2 s, net_server.h).
    d = daemon(["--admin-token", ADMIN, "--drain-timeout-ms", "4000"] + ct.WHOLE_WORLD_VIEW,
                  world=ct.write_world())
    boss = admin(d)
    boss.send(ct.msg_set_view(boss.rid(), 990, 990, 1, 1))
    rids = [boss.rid() for _ in range(400)]
    boss.send(*[ct.msg_spawn(r, ct.circle(1), -900 + 40 * (i % 40), -900 + 40 * (i // 40))
                for i, r in enumerate(rids)])
    ids = [boss.reply(r).spawned.body_id for r in rids]
    check(all(ids), "the 400 movers must spawn")
    boss.send(*[ct.msg_move(0, b, 1, 3, 2) for b in ids])  # every body changes every tick
    stuck = d.client(rcvbuf=4096)
    stuck.hello()
    stuck.send(ct.msg_set_view(stuck.rid(), 0, 0, 1000, 1000))
    early = d.client()
    time.sleep(1.2)  # the kernel buffers fill (~10 kB a tick), short of --max-snapshot-lag-ms
    d.proc.send_signal(signal.SIGTERM)
    check(d.wait_log(r"event=shutdown"), "the drain must begin")
    early.send(ct.msg_hello(1))
    msgs = [m for m in early.wait_closed() if not snap(m)]
    ok = (len(msgs) == 1 and (kind_of(msgs[0]) == "goodbye" or (
        kind_of(msgs[0]) == "error" and msgs[0].error.code == ct.code_of("SHUTTING_DOWN")
        and msgs[0].error.fatal)))
    check(ok, "a Hello after the drain began: Error{SHUTTING_DOWN, fatal} or Goodbye, then the "
          "close; got %s" % [describe(m) for m in msgs])
    # A connection opened now: refused (the listener is closed) or the same answer.
    check(d.alive(), "the drain must still be on (held by the stuck client)")
    try:
        late = d.client()
        late.send(ct.msg_hello(1))
        msgs = [m for m in late.wait_closed() if not snap(m)]
        check(len(msgs) <= 1 and all(
            kind_of(m) == "goodbye" or (kind_of(m) == "error" and m.error.code ==
                                        ct.code_of("SHUTTING_DOWN") and m.error.fatal)
            for m in msgs), "a new connection during the drain: %s" % [describe(m) for m in msgs])
    except (ConnectionRefusedError, ConnectionResetError):
        pass
    rc = d.terminate()
    check(rc == 0, "collided must exit 0 after the drain timeout, got %s" % rc)


@test
def backend_npcs_stay_in_their_named_room():
    d = daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    backend = admin(d, "match-7")
    npcs = [backend.spawn_ok(ct.circle(1), -200 + 40 * i, 100) for i in range(3)]
    backend.close()  # a network blip
    elsewhere = admin(d, "")
    elsewhere.sync()
    check(not elsewhere.view, "match-7's NPCs are not in `default`: %s" % positions(elsewhere))
    # The room outlives its last client while the NPCs are in it: they are the room's bodies.
    backend = admin(d, "match-7")
    backend.sync()
    for n in npcs:
        check(n in backend.view, "NPC %d must stay in match-7 after its admin left" % n)
    y0 = backend.view[npcs[0]]["y"]
    backend.move(npcs[0], 0, 30, seq=1)
    backend.recv_until(lambda m: snap(m) and backend.view[npcs[0]]["y"] > y0 + 1,
                       what="the NPC moved by the reconnected backend")
    r = elsewhere.rid()
    elsewhere.send(ct.msg_move(r, npcs[1], 1, 0, 30))
    elsewhere.expect_error(r, "NOT_FOUND", "an admin of `default` moving match-7's NPC",
                           fatal=False)
    backend.close()
    elsewhere.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

#!/usr/bin/env python3
"""Every ErrorCode of PROTOCOL.md a client can provoke, with rule 9 (fatal: sent, flushed, closed;
otherwise the connection stays usable) and the admin token's powers."""

import math
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

NAN = float("nan")
INF = float("inf")


def snap(m):
    return kind_of(m) == "snapshot"


def world_one_static():
    return ct.write_world(statics=[(900, 900, {"box": {"half_extents": [10, 10]}})])


def first_message_error(d, msg, code, what):
    c = d.client()
    c.send(msg)
    c.expect_error(msg.request_id, code, what, fatal=True)
    c.close()


@test
def unauthenticated_when_first_message_is_not_hello():
    d = ct.Daemon(world=world_one_static())
    firsts = [
        ("Ping", ct.msg_ping(5)),
        ("SpawnBody", ct.msg_spawn(6, ct.box(1, 1), 0, 0)),
        ("MoveIntent", ct.msg_move(7, 1, 1, 1, 0)),
        ("DespawnBody", ct.msg_despawn(8, 1)),
        ("SetView", ct.msg_set_view(9, 0, 0, 10, 10)),
        ("empty ClientMessage", ct.pb.ClientMessage(request_id=10)),
    ]
    for name, m in firsts:
        first_message_error(d, m, "UNAUTHENTICATED", "%s as first message" % name)
    ct.full_session(d)
    d.stop_and_check()


@test
def unauthenticated_bad_token():
    d = ct.Daemon(["--token", "s3cret"], world=world_one_static())
    for tok in (None, "", "wrong", "s3cre", "s3cret!", "S3CRET", "s3cret\0"):
        c = d.client()
        c.send(ct.msg_hello(3, token=tok))
        c.expect_error(3, "UNAUTHENTICATED", "Hello with token %r" % tok, fatal=True)
        c.close()
    c = d.client()
    w = c.hello(token="s3cret")
    check(not w.admin, "the client token must not make an admin")
    c.close()
    # full_session presents no token: it must be refused, so check a full session with it by hand.
    c = d.client()
    c.hello(token="s3cret")
    bid = c.spawn_ok(ct.box(1, 1), 0, 0)
    c.move(bid, 10, 0)
    c.recv_until(lambda m: snap(m) and c.view.get(bid, {}).get("x", 0) > 0, what="motion")
    c.close()
    d.stop_and_check()


@test
def version_mismatch():
    d = ct.Daemon()
    for v in (0, 2, 1000, 2 ** 32 - 1):
        c = d.client()
        c.send(ct.msg_hello(4, version=v))
        c.expect_error(4, "VERSION_MISMATCH", "Hello with protocol_version %d" % v, fatal=True)
        c.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def admin_token_makes_admin():
    d = ct.Daemon(["--admin-token", "adm1n"], world=world_one_static())
    c = d.client()
    check(c.hello(token="adm1n").admin is True, "the admin token must give Welcome.admin = true")
    c.close()
    c = d.client()
    check(c.hello().admin is False, "no token: not an admin")
    c.close()
    c = d.client()
    # No client token configured: any other token is accepted, as a plain client.
    check(c.hello(token="adm1").admin is False, "a near-miss admin token must not give admin")
    c.close()
    d.stop_and_check()
    # With a client token as well, the admin token still authenticates, as admin.
    d = ct.Daemon(["--token", "tok", "--admin-token", "adm1n"], world=world_one_static())
    c = d.client()
    check(c.hello(token="adm1n").admin is True, "admin token with --token set: admin")
    c.close()
    c = d.client()
    check(c.hello(token="tok").admin is False, "client token: not admin")
    c.close()
    d.stop_and_check()


@test
def forbidden_static_spawn_without_admin():
    d = ct.Daemon(["--admin-token", "adm1n"] + ct.WHOLE_WORLD_VIEW, world=world_one_static())
    c = d.client()
    c.hello()
    rid = c.rid()
    c.send(ct.msg_spawn(rid, ct.box(5, 5), 50, 50, kind=ct.pb.BODY_KIND_STATIC))
    c.expect_error(rid, "FORBIDDEN", "static spawn by a non-admin", fatal=False)
    # Nothing was created: a whole-world view shows only the file's static.
    c.send(ct.msg_set_view(c.rid(), 0, 0, 1000, 1000))
    c.sync()
    c.sync()
    statics = [i for i, s in c.view.items() if s.get("kind") == ct.pb.BODY_KIND_STATIC]
    check(len(statics) == 1, "a refused static spawn must not change the world: %d statics" %
          len(statics))
    c.close()
    d.stop_and_check()


@test
def forbidden_move_and_despawn_of_others_body():
    d = ct.Daemon(ct.WHOLE_WORLD_VIEW, world=world_one_static())
    a = d.client()
    b = d.client()
    a.hello()
    b.hello()
    ba = a.spawn_ok(ct.box(1, 1), 0, 0)
    a.move(ba, 0, 0, seq=3)
    a.recv_until(lambda m: snap(m) and a.view.get(ba, {}).get("seq") == 3, what="seq 3")
    rid = b.rid()
    b.send(ct.msg_move(rid, ba, 100, 50, 0))
    b.expect_error(rid, "FORBIDDEN", "MoveIntent for another client's body", fatal=False)
    rid = b.rid()
    b.send(ct.msg_despawn(rid, ba))
    b.expect_error(rid, "FORBIDDEN", "DespawnBody of another client's body", fatal=False)
    a.sync()
    a.sync()
    check(ba in a.view, "a forbidden despawn must not remove the body")
    st = a.view[ba]
    check(st["seq"] == 3 and st["vx"] == 0 and st["x"] == 0,
          "a forbidden move must not change the body (seq %d, vx %g, x %g)" % (
              st["seq"], st["vx"], st["x"]))
    # The world's own statics belong to no client: a plain client may not despawn or move them.
    b.send(ct.msg_set_view(b.rid(), 0, 0, 1000, 1000))
    b.recv_until(lambda m: snap(m) and any(s.get("kind") == ct.pb.BODY_KIND_STATIC
                                           for s in b.view.values()), what="the file's static")
    wstatic = [i for i, s in b.view.items() if s.get("kind") == ct.pb.BODY_KIND_STATIC][0]
    rid = b.rid()
    b.send(ct.msg_despawn(rid, wstatic))
    b.expect_error(rid, "FORBIDDEN", "DespawnBody of a world static by a non-admin", fatal=False)
    b.sync()
    check(wstatic in b.view, "a refused despawn must leave the static")
    # The owner may still use seq 4 (the forbidden seq 100 did not advance anything).
    a.move(ba, 10, 0, seq=4)
    a.recv_until(lambda m: snap(m) and a.view[ba]["seq"] == 4, what="owner's seq 4 applied")
    a.close()
    b.close()
    d.stop_and_check()


@test
def admin_spawns_statics_and_controls_others():
    d = ct.Daemon(["--admin-token", "adm1n", "--max-bodies-per-client", "2"] + ct.WHOLE_WORLD_VIEW,
                  world=world_one_static())
    player = d.client()
    player.hello()
    admin = d.client()
    check(admin.hello(token="adm1n").admin, "admin")
    pbody = player.spawn_ok(ct.box(1, 1), 0, 0)
    wall = admin.spawn_ok(ct.box(2, 20), 20, 0, kind=ct.pb.BODY_KIND_STATIC)
    player.recv_until(lambda m: snap(m) and wall in player.view, what="the admin's static")
    check(player.view[wall].get("kind") == ct.pb.BODY_KIND_STATIC,
          "admin-spawned static must be reported as static")
    # Admins are not bounded by the per-client limit (2).
    extra = [admin.spawn_ok(ct.circle(1), -100 - 10 * i, 200) for i in range(4)]
    # Admin may move another client's body.
    admin.move(pbody, 0, 40, seq=1)
    player.recv_until(lambda m: snap(m) and player.view[pbody]["y"] > 0.1,
                      what="player's body moved by the admin")
    # Admin may despawn another client's body.
    rid = admin.rid()
    admin.send(ct.msg_despawn(rid, pbody))
    player.recv_until(lambda m: snap(m) and pbody in m.snapshot.removed,
                      what="player's body despawned by the admin")
    errs = [describe(m) for m in admin.pump(0.2)]
    check(not errs, "admin actions must not produce errors: %s" % errs)
    # "Any body for an admin": also the world file's static.
    admin.send(ct.msg_set_view(admin.rid(), 0, 0, 1000, 1000))
    admin.recv_until(lambda m: snap(m) and any(
        s.get("kind") == ct.pb.BODY_KIND_STATIC and s.get("owner", 0) != admin.client_id
        and i != wall for i, s in admin.view.items()), what="the file's static")
    fstatic = [i for i, s in admin.view.items() if s.get("kind") == ct.pb.BODY_KIND_STATIC
               and i != wall][0]
    admin.send(ct.msg_despawn(admin.rid(), fstatic))
    admin.recv_until(lambda m: snap(m) and fstatic in m.snapshot.removed,
                     what="the world static despawned by the admin")
    # Statics stay with the world when the admin leaves, and so do its moving bodies (protocol
    # 1.1, PROTOCOL.md "Backends and batches"; test_batch.py checks another admin moves them).
    admin.close()
    newcomer = d.client()
    newcomer.hello()
    newcomer.send(ct.msg_set_view(newcomer.rid(), 0, 0, 1000, 1000))
    newcomer.sync()
    newcomer.sync()
    check(wall in newcomer.view, "a static must stay after its admin disconnects")
    for e in extra:
        check(e in newcomer.view, "an admin's moving bodies must stay after it disconnects")
    player.close()
    newcomer.close()
    d.stop_and_check()


@test
def not_found():
    d = ct.Daemon(world=world_one_static())
    c = d.client()
    c.hello()
    for what, m in (("MoveIntent for an unknown id", ct.msg_move(0, 123456789, 1, 1, 0)),
                    ("DespawnBody of an unknown id", ct.msg_despawn(0, 987654321)),
                    ("MoveIntent for id 0", ct.msg_move(0, 0, 1, 1, 0))):
        m.request_id = c.rid()
        c.send(m)
        c.expect_error(m.request_id, "NOT_FOUND", what, fatal=False)
    bid = c.spawn_ok(ct.box(1, 1), 0, 0)
    c.recv_until(lambda m: snap(m) and bid in c.view, what="own body")
    c.send(ct.msg_despawn(c.rid(), bid))
    c.recv_until(lambda m: snap(m) and bid in m.snapshot.removed, what="despawn")
    rid = c.rid()
    c.send(ct.msg_despawn(rid, bid))
    c.expect_error(rid, "NOT_FOUND", "DespawnBody of a despawned id", fatal=False)
    rid = c.rid()
    c.send(ct.msg_move(rid, bid, 99, 1, 0))
    c.expect_error(rid, "NOT_FOUND", "MoveIntent for a despawned id", fatal=False)
    # A despawned id is not reused by the next spawn (generational ids).
    nb = c.spawn_ok(ct.box(1, 1), 0, 0)
    check(nb != bid, "a despawned id must stay stale, got it back from a new spawn")
    c.close()
    d.stop_and_check()


INVALID_SHAPES = [
    ("non-convex polygon", lambda: ct.polygon([(0, 0), (4, 0), (1, 1), (0, 4)])),
    ("self-intersecting polygon", lambda: ct.polygon([(0, 0), (2, 2), (2, 0), (0, 2)])),
    ("clockwise triangle", lambda: ct.polygon([(0, 0), (0, 2), (2, 0)])),
    ("clockwise hexagon", lambda: ct.regular_polygon(6, 2, clockwise=True)),
    ("2 vertices", lambda: ct.polygon([(0, 0), (1, 0)])),
    ("0 vertices", lambda: ct.polygon([])),
    ("17 vertices", lambda: ct.regular_polygon(17, 3)),
    ("collinear vertices", lambda: ct.polygon([(0, 0), (1, 0), (2, 0)])),
    ("repeated vertex", lambda: ct.polygon([(0, 0), (0, 0), (1, 1)])),
    ("zero radius", lambda: ct.circle(0)),
    ("negative radius", lambda: ct.circle(-1)),
    ("NaN radius", lambda: ct.circle(NAN)),
    ("Inf radius", lambda: ct.circle(INF)),
    ("zero box", lambda: ct.box(0, 0)),
    ("flat box", lambda: ct.box(1, 0)),
    ("negative box", lambda: ct.box(-1, 1)),
    ("NaN box", lambda: ct.box(NAN, 1)),
    ("Inf box", lambda: ct.box(1, INF)),
    ("NaN vertex", lambda: ct.polygon([(0, 0), (1, 0), (NAN, 1)])),
    ("Inf vertex", lambda: ct.polygon([(0, 0), (INF, 0), (0, 1)])),
    ("empty Shape (no kind)", lambda: ct.pb.Shape()),
]


@test
def invalid_shape():
    d = ct.Daemon(world=world_one_static())
    c = d.client()
    c.hello()
    for name, make in INVALID_SHAPES:
        rid = c.rid()
        c.send(ct.msg_spawn(rid, make(), 0, 0))
        c.expect_error(rid, "INVALID_SHAPE", "spawn with %s" % name, fatal=False)
    # A shape larger than the server's size range (default 1000): INVALID_SHAPE.
    rid = c.rid()
    c.send(ct.msg_spawn(rid, ct.circle(5000), 0, 0))
    sm = c.reply(rid)
    check(kind_of(sm) == "error" and sm.error.code in (ct.code_of("INVALID_SHAPE"),
                                                       ct.code_of("OUT_OF_BOUNDS")),
          "a circle of radius 5000 must be refused (INVALID_SHAPE), got %s" % describe(sm))
    c.sync()
    check(not c.view, "refused spawns must not create bodies: %s" % list(c.view))
    # Still usable, and the boundary shapes are valid: 3 and 16 vertices.
    c.spawn_ok(ct.regular_polygon(3, 2), 0, 0)
    c.spawn_ok(ct.regular_polygon(16, 2), 20, 0)
    c.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def out_of_bounds():
    d = ct.Daemon(world=world_one_static())  # bounds +-1000
    c = d.client()
    c.hello()
    for x, y in ((5000, 0), (0, -5000), (1000.5, 0), (-1e30, 1e30), (0, 1001)):
        rid = c.rid()
        c.send(ct.msg_spawn(rid, ct.box(1, 1), x, y))
        c.expect_error(rid, "OUT_OF_BOUNDS", "spawn at (%g,%g) outside +-1000" % (x, y),
                       fatal=False)
    c.sync()
    check(not c.view, "refused spawns must not create bodies")
    c.close()
    d.stop_and_check()


@test
def limit_exceeded_per_client_bodies():
    d = ct.Daemon(["--max-bodies-per-client", "3"], world=world_one_static())
    c = d.client()
    check(c.hello().max_bodies_per_client == 3, "Welcome.max_bodies_per_client must be 3")
    ids = [c.spawn_ok(ct.circle(1), 10 * i, 0) for i in range(3)]
    rid = c.rid()
    c.send(ct.msg_spawn(rid, ct.circle(1), -50, 0))
    c.expect_error(rid, "LIMIT_EXCEEDED", "4th body with --max-bodies-per-client 3", fatal=False)
    c.recv_until(lambda m: snap(m) and ids[0] in c.view, what="own body")
    c.send(ct.msg_despawn(c.rid(), ids[0]))
    c.recv_until(lambda m: snap(m) and ids[0] in m.snapshot.removed, what="despawn")
    c.spawn_ok(ct.circle(1), -50, 0)
    # The limit is per client: another client has its own 3.
    o = d.client()
    o.hello()
    for i in range(3):
        o.spawn_ok(ct.circle(1), 10 * i, 100)
    c.close()
    o.close()
    d.stop_and_check()


@test
def limit_exceeded_world_capacity():
    # Capacity 4, statics included; the world file has one static: 3 more bodies fit.
    d = ct.Daemon(["--max-bodies", "4", "--admin-token", "adm1n"], world=world_one_static())
    admin = d.client()
    admin.hello(token="adm1n")
    ok = 0
    last = None
    bodies = []
    for i in range(10):
        last = admin.spawn(ct.circle(1), 20 * i, 0)
        if kind_of(last) != "spawned":
            break
        bodies.append(last.spawned.body_id)
        ok += 1
    check(kind_of(last) == "error" and last.error.code == ct.code_of("LIMIT_EXCEEDED"),
          "an admin past the world's capacity must get LIMIT_EXCEEDED, got %s" % describe(last))
    check(not last.error.fatal, "LIMIT_EXCEEDED is not fatal")
    check(ok == 3, "capacity 4 with 1 static must hold exactly 3 more bodies, held %d" % ok)
    player = d.client()
    player.hello()
    rid = player.rid()
    player.send(ct.msg_spawn(rid, ct.circle(1), 0, 300))
    player.expect_error(rid, "LIMIT_EXCEEDED", "a player spawning into a full world",
                        fatal=False)
    # An admin's moving bodies stay when it leaves (protocol 1.1): the world is still full until
    # an admin despawns them; then the player fits again.
    admin.close()
    rid = player.rid()
    player.send(ct.msg_spawn(rid, ct.circle(1), 0, 300))
    player.expect_error(rid, "LIMIT_EXCEEDED", "the world is still full after the admin left",
                        fatal=False)
    admin = d.client()
    admin.hello(token="adm1n")
    for b in bodies:
        admin.send(ct.msg_despawn(admin.rid(), b))
    admin.assert_open("after despawning the first admin's bodies")
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while True:
        sm = player.spawn(ct.circle(1), 0, 300)
        if kind_of(sm) == "spawned":
            break
        check(time.monotonic() < deadline, "after the admin left, spawning must work again: %s" %
              describe(sm))
        time.sleep(0.1)
    player.close()
    admin.close()
    d.stop_and_check()


@test
def limit_exceeded_max_clients():
    d = ct.Daemon(["--max-clients", "2"], world=world_one_static())
    a = d.client()
    a.hello()
    b = d.client()
    b.hello()
    c = d.client()
    try:
        c.send(ct.msg_hello(7))
    except OSError:
        pass
    msgs = c.wait_closed()
    errs = [m for m in msgs if kind_of(m) == "error"]
    check(not any(kind_of(m) == "welcome" for m in msgs), "a third client over --max-clients 2 "
          "must not be welcomed")
    check(errs and errs[-1].error.code == ct.code_of("LIMIT_EXCEEDED") and errs[-1].error.fatal,
          "a client over --max-clients must get Error{LIMIT_EXCEEDED, fatal} before the close, "
          "got %s" % [describe(m) for m in msgs])
    c.close()
    # A slot frees when a client leaves.
    a.close()
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while True:
        n = d.client()
        n.send(ct.msg_hello(1))
        sm = n.recv_until(lambda m: not snap(m), what="reply to Hello")
        if kind_of(sm) == "welcome":
            n.close()
            break
        n.close()
        check(time.monotonic() < deadline, "a slot must free after a client leaves")
        time.sleep(0.1)
    b.close()
    d.stop_and_check()


@test
def rate_limited():
    # 5 msgs/s, burst 2 s worth = 10 messages.
    d = ct.Daemon(["--rate-limit", "5"], world=world_one_static())
    c = d.client()
    c.hello(rid=1)
    c.send(*[ct.msg_ping(1000 + i, i) for i in range(16)])
    replies = []
    closed = False
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    try:
        while len(replies) < 16 and time.monotonic() < deadline:
            m = c.recv(deadline - time.monotonic())
            if m is not None and not snap(m):
                replies.append(m)
    except ct.ConnectionClosed:
        closed = True
    pongs = [m for m in replies if kind_of(m) == "pong"]
    limited = [m for m in replies if kind_of(m) == "error" and
               m.error.code == ct.code_of("RATE_LIMITED")]
    check(len(pongs) >= 8, "within the burst (10 messages, Hello included) pings must be served, "
          "got %d pongs: %s" % (len(pongs), [describe(m) for m in replies]))
    check(limited, "16 pings at once with --rate-limit 5 (burst 10) must give RATE_LIMITED, got %s"
          % [describe(m) for m in replies])
    for m in limited:
        check(1000 <= m.request_id < 1016, "RATE_LIMITED must echo the request_id")
    order = [m.request_id for m in replies]
    check(order == sorted(order), "replies in request order: %s" % order)
    if not closed:
        check(not limited[0].error.fatal, "a fatal RATE_LIMITED must close the connection, it "
              "stayed open")
        # Not fatal: after the bucket refills the client is served again.
        time.sleep(2.5)
        c.assert_open("after RATE_LIMITED and a pause")
    c.close()
    # Sustained abuse: a flood is refused, and if the server ends it, with a fatal error first.
    f = d.client()
    f.hello()
    try:
        for _ in range(20):
            f.send(*[ct.msg_ping(0, 1) for _ in range(50)])
            time.sleep(0.05)
    except OSError:
        pass
    msgs = f.non_snapshots(3.0)
    check(any(kind_of(m) == "error" and m.error.code == ct.code_of("RATE_LIMITED")
              for m in msgs),
          "a flood must be RATE_LIMITED: %s" % [describe(m) for m in msgs[-5:]])
    # Issue 4: "sustained abuse is fatal": the flood ends with Error{RATE_LIMITED, fatal}, closed.
    check(f.closed, "a sustained flood (1000 messages at --rate-limit 5) must be disconnected")
    errs = [m for m in msgs if kind_of(m) == "error" and m.error.fatal]
    check(errs and errs[-1].error.code == ct.code_of("RATE_LIMITED"),
          "a flood must be closed with a fatal RATE_LIMITED first: %s" % [
              describe(m) for m in errs])
    f.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def frame_too_large():
    d = ct.Daemon(["--max-frame", "1024"], world=world_one_static())
    # Declared length over the max, before Hello, with no body: refused from the length alone.
    for prefix, what in ((ct.varint(1025), "declared 1025 > --max-frame 1024"),
                         (ct.varint(1 << 31), "declared 2^31"),
                         (b"\x80\x80\x80\x80\x80\x01", "6-byte varint"),
                         (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "10-byte varint"),
                         (b"\x80\x80\x80\x80\x10", "5-byte varint over 2^32")):
        for after_hello in (False, True):
            c = d.client()
            if after_hello:
                c.hello()
            c.send_raw(prefix)
            msgs = c.wait_closed()
            errs = [m for m in msgs if kind_of(m) == "error"]
            check(errs and errs[-1].error.code == ct.code_of("FRAME_TOO_LARGE") and
                  errs[-1].error.fatal,
                  "%s (%s Hello): expected Error{FRAME_TOO_LARGE, fatal} then close, got %s" % (
                      what, "after" if after_hello else "before", [describe(m) for m in msgs]))
            check(not [m for m in msgs if kind_of(m) not in ("error", "snapshot")],
                  "%s: nothing but the error expected, got %s" % (what, [describe(m) for m in msgs]))
            c.close()
    # Exactly the max is a valid frame: a Hello and a Ping padded with an unknown field.
    c = d.client()
    h = ct.msg_hello(1).SerializeToString()
    body = h + ct.unknown_field_padding(1024 - len(h))
    check(len(body) == 1024, "test bug: padded Hello is %d bytes" % len(body))
    c.send_raw(ct.frame(body))
    sm = c.recv_until(lambda m: not snap(m), what="reply to a 1024-byte Hello")
    check(kind_of(sm) == "welcome", "a 1024-byte frame with --max-frame 1024 is valid (unknown "
          "fields are skipped), got %s" % describe(sm))
    p = ct.msg_ping(77, 5).SerializeToString()
    c.send_raw(ct.frame(p + ct.unknown_field_padding(1024 - len(p))))
    sm = c.reply(77)
    check(kind_of(sm) == "pong", "a 1024-byte Ping must be answered, got %s" % describe(sm))
    # One byte more: refused.
    c.send_raw(ct.frame(p + ct.unknown_field_padding(1025 - len(p))))
    msgs = c.wait_closed()
    check([m for m in msgs if kind_of(m) == "error" and
           m.error.code == ct.code_of("FRAME_TOO_LARGE") and m.error.fatal],
          "a 1025-byte frame must be FRAME_TOO_LARGE, got %s" % [describe(m) for m in msgs])
    c.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def bad_request_non_finite_velocity():
    d = ct.Daemon(world=world_one_static())
    c = d.client()
    c.hello()
    bid = c.spawn_ok(ct.box(1, 1), 0, 0)
    c.move(bid, 5, 0, seq=1)
    c.recv_until(lambda m: snap(m) and c.view.get(bid, {}).get("seq") == 1, what="seq 1")
    seq = 2
    for vx, vy in ((NAN, 0), (0, NAN), (INF, 0), (0, -INF), (NAN, INF)):
        rid = c.rid()
        c.send(ct.msg_move(rid, bid, seq, vx, vy))
        seq += 1
        c.expect_error(rid, "BAD_REQUEST", "MoveIntent velocity (%r,%r)" % (vx, vy), fatal=False)
    c.sync()
    st = c.view[bid]
    check(st["seq"] == 1 and abs(st["vx"] - 5) < 0.1 and math.isfinite(st["x"]),
          "refused intents must not change the body: seq %d v (%g,%g)" % (st["seq"], st["vx"],
                                                                          st["vy"]))
    # A refused seq was not consumed as "newest": seq 2 is still newer than 1.
    c.move(bid, 0, 5, seq=2)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == 2, what="seq 2 after refused ones")
    c.close()
    d.stop_and_check()


@test
def input_seq_wraps_past_2_to_the_32():
    """input_seq is compared as a serial number (docs/protocol.md): after 2^32 - 1 come 0, 1, ...;
    compared as plain integers the body would freeze at 2^32 - 1 for good."""
    top = 2 ** 32 - 1
    d = ct.Daemon(world=world_one_static())
    c = d.client()
    c.hello()
    bid = c.spawn_ok(ct.box(1, 1), 0, 0)
    c.move(bid, 5, 0, seq=top)
    c.recv_until(lambda m: snap(m) and c.view.get(bid, {}).get("seq") == top
                 and c.view[bid]["vx"] > 4, what="seq 2^32 - 1 applied")
    c.move(bid, 0, 5, seq=0)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == 0 and c.view[bid]["vy"] > 4,
                 what="seq 0 after 2^32 - 1 applied (the body must not freeze)")
    c.move(bid, -5, 0, seq=1)
    c.recv_until(lambda m: snap(m) and c.view[bid]["seq"] == 1 and c.view[bid]["vx"] < -4,
                 what="seq 1 applied")
    # 2^32 - 1 is now behind: ignored, the body keeps going -x.
    c.move(bid, 0, -5, seq=top)
    c.sync()
    c.sync()
    st = c.view[bid]
    check(st["seq"] == 1 and st["vx"] < -4,
          "an input_seq from before the wrap must be ignored: seq %d v (%g,%g)"
          % (st["seq"], st["vx"], st["vy"]))
    c.close()
    d.stop_and_check()


@test
def bad_request_undecodable_protobuf():
    d = ct.Daemon(world=world_one_static())
    garbage = [b"\xff\xff\xff\xff", b"\x0f", b"\x52\x05\x08", b"\x08\x80\x80\x80\x80\x80\x80\x80"
               b"\x80\x80\x80\x01", b"\x00\x00"]
    for g in garbage:
        c = d.client()
        c.hello()
        c.send_raw(ct.frame(g))
        sm = c.recv_until(lambda m: not snap(m), what="reply to undecodable frame %r" % g)
        check(kind_of(sm) == "error" and sm.error.code == ct.code_of("BAD_REQUEST"),
              "undecodable protobuf %r after Hello must be BAD_REQUEST, got %s" % (g, describe(sm)))
        c.check_fatal_rule(sm, "undecodable protobuf %r" % g)
        c.close()
    # Before Hello: refused and closed (UNAUTHENTICATED or BAD_REQUEST, fatal).
    c = d.client()
    c.send_raw(ct.frame(b"\xff\xff\xff\xff"))
    msgs = c.wait_closed()
    errs = [m for m in msgs if kind_of(m) == "error"]
    check(errs and errs[-1].error.fatal and errs[-1].error.code in (
        ct.code_of("UNAUTHENTICATED"), ct.code_of("BAD_REQUEST")),
        "garbage as the first frame must give a fatal error then close, got %s" % [
            describe(m) for m in msgs])
    c.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def token_is_the_parsed_field_not_the_first_bytes():
    # Protobuf merges repeated occurrences: the last token on the wire is the token. A server that
    # reads the token from the raw bytes must agree with a protobuf parser.
    d = ct.Daemon(["--token", "s3cret", "--admin-token", "adm1n"], world=world_one_static())

    def merged(*parts):
        body = b"".join(p.SerializeToString() for p in parts)
        check(ct.pb.ClientMessage.FromString(body).hello.token == parts[-1].hello.token,
              "test bug: merge semantics")
        return ct.frame(body)

    def tail_hello(token):
        # protocol_version repeated too: protobuf-c replaces a repeated oneof member where other
        # runtimes merge it; the token must be the last one either way.
        m = ct.pb.ClientMessage()
        m.hello.protocol_version = 1
        m.hello.token = token
        return m

    cases = [
        ("right token then a second Hello field with a wrong one",
         merged(ct.msg_hello(1, token="s3cret"), tail_hello("nope")), "refuse"),
        ("admin token then a wrong one", merged(ct.msg_hello(1, token="adm1n"), tail_hello("x")),
         "refuse"),
        ("wrong token then the right one", merged(ct.msg_hello(1, token="nope"),
                                                  tail_hello("s3cret")), "welcome"),
    ]
    # The same inside one Hello: token field repeated.
    inner = ct.pb.Hello(protocol_version=1, token="s3cret").SerializeToString() + \
        ct.pb.Hello(protocol_version=1, token="bad").SerializeToString()
    body = ct.pb.ClientMessage(request_id=1).SerializeToString() + ct.varint((10 << 3) | 2) + \
        ct.varint(len(inner)) + inner
    check(ct.pb.ClientMessage.FromString(body).hello.token == "bad", "test bug: inner merge")
    cases.append(("token field repeated inside Hello, last wrong", ct.frame(body), "refuse"))
    for what, data, want in cases:
        c = d.client()
        c.send_raw(data)
        sm = c.recv_until(lambda m: not snap(m), what="reply to Hello (%s)" % what)
        if want == "refuse":
            check(kind_of(sm) == "error" and sm.error.code == ct.code_of("UNAUTHENTICATED"),
                  "%s: must be UNAUTHENTICATED (protobuf keeps the last value), got %s" % (
                      what, describe(sm)))
            c.wait_closed()
        else:
            check(kind_of(sm) == "welcome" and not sm.welcome.admin,
                  "%s: must be welcomed (protobuf keeps the last value), got %s" % (
                      what, describe(sm)))
        c.close()
    ct.full_session(d, token="s3cret")
    d.stop_and_check()


@test
def fatal_error_after_pipelined_requests():
    # Rule 9 and 10 together: replies to what came before are sent in order, then the fatal
    # error, then the close; nothing after the bad frame is acted on.
    d = ct.Daemon(ct.WHOLE_WORLD_VIEW, world=world_one_static())
    c = d.client()
    c.send_raw(ct.encode(ct.msg_hello(1)) + ct.encode(ct.msg_ping(2, 22)) +
               ct.encode(ct.msg_spawn(3, ct.box(1, 1), 0, 0)) + b"\x80\x80\x80\x80\x80\x01" +
               ct.encode(ct.msg_ping(4, 44)))
    msgs = [m for m in c.wait_closed() if not snap(m)]
    kinds = [(kind_of(m), m.request_id) for m in msgs]
    check(kinds[:3] == [("welcome", 1), ("pong", 2), ("spawned", 3)],
          "replies before the bad frame must come first, in order: %s" % [describe(m) for m in msgs])
    check(len(msgs) == 4 and kind_of(msgs[3]) == "error" and
          msgs[3].error.code == ct.code_of("FRAME_TOO_LARGE") and msgs[3].error.fatal,
          "then exactly Error{FRAME_TOO_LARGE, fatal} and the close: %s" % [
              describe(m) for m in msgs])
    c.close()
    # The spawned body went with the connection.
    o = d.client()
    o.hello()
    o.send(ct.msg_set_view(o.rid(), 0, 0, 1000, 1000))
    o.sync()
    o.sync()
    check(not [i for i, s in o.view.items() if s.get("kind") == ct.pb.BODY_KIND_MOVING],
          "the closed client's body must be despawned")
    o.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

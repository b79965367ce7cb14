#!/usr/bin/env python3
"""Queries over the wire (protocol 1.1, PROTOCOL.md "Queries, history and lag compensation"):
RayCast, OverlapQuery and ShapeCast answered by QueryResult in request order, first hit or `all`
sorted by fraction then id, point and normal out of the hit body, overlap depth and MTV, a start
inside at fraction 0, QueryFilter (kinds, category_mask, exclude_ids, max_results + truncated),
--max-query-results, at_tick against the history (lag compensation: a body that moved away is
still hit where it was), HISTORY_EXPIRED past --history-ms and BAD_REQUEST for a future tick,
non-fatal errors for bad input, each query counted against the rate limit, the history's memory
in /metrics, Welcome.features "queries" and "history"."""

import math
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

# Three walls on the x axis: boxes of half extent 1 at x = 10, 20, 30 (ids in that order).
WALLS = [(10, 0), (20, 0), (30, 0)]
BOX1 = {"box": {"half_extents": [1, 1]}}


def walls_world():
    return ct.write_world(statics=[(x, y, BOX1) for x, y in WALLS])


def vec(v, x, y):
    v.x = x
    v.y = y


def msg_ray(rid, ox, oy, tx, ty, all_=False, at_tick=0, **flt):
    m = ct.pb.ClientMessage(request_id=rid)
    vec(m.ray_cast.origin, ox, oy)
    vec(m.ray_cast.translation, tx, ty)
    m.ray_cast.all = all_
    m.ray_cast.at_tick = at_tick
    fill_filter(m.ray_cast.filter, **flt)
    return m


def msg_overlap(rid, shape, x, y, angle=0.0, at_tick=0, **flt):
    m = ct.pb.ClientMessage(request_id=rid)
    m.overlap.SetInParent()
    if shape is not None:
        m.overlap.shape.CopyFrom(shape)
    vec(m.overlap.position, x, y)
    m.overlap.angle = angle
    m.overlap.at_tick = at_tick
    fill_filter(m.overlap.filter, **flt)
    return m


def msg_cast(rid, shape, x, y, tx, ty, all_=False, angle=0.0, at_tick=0, **flt):
    m = ct.pb.ClientMessage(request_id=rid)
    m.shape_cast.shape.CopyFrom(shape)
    vec(m.shape_cast.position, x, y)
    vec(m.shape_cast.translation, tx, ty)
    m.shape_cast.angle = angle
    m.shape_cast.all = all_
    m.shape_cast.at_tick = at_tick
    fill_filter(m.shape_cast.filter, **flt)
    return m


def fill_filter(f, kinds=(), category_mask=0, exclude_ids=(), max_results=0,
                include_sensors=False):
    f.kinds.extend(kinds)
    f.category_mask = category_mask
    f.exclude_ids.extend(exclude_ids)
    f.max_results = max_results
    f.include_sensors = include_sensors


def ask(c, msg):
    """Sends a query and returns its QueryResult (failing on anything else)."""
    c.send(msg)
    sm = c.reply(msg.request_id)
    check(kind_of(sm) == "query_result", "a query must be answered by QueryResult, got %s"
          % describe(sm))
    return sm.query_result


def near(a, b, tol=1e-3):
    return abs(a - b) <= tol


def wall_ids(admin):
    """The walls' ids, by a ray along them (the world file's statics are not ours to know)."""
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True))
    check(len(r.hits) == 3, "the ray along the walls must hit 3, got %d" % len(r.hits))
    return [h.body_id for h in r.hits]


@test
def welcome_lists_queries_and_history():
    d = ct.Daemon([], world=walls_world())
    c = d.client()
    feats = list(c.hello().features)
    check("queries" in feats and "history" in feats, "features must list queries and history: %s"
          % feats)
    c.close()
    d.stop_and_check()
    # --history-ms 0: now only, so no "history"; the env var sets it as the flag does
    d = ct.Daemon([], world=walls_world(), env_extra={"COLLIDE_HISTORY_MS": "0"})
    c = d.client()
    feats = list(c.hello().features)
    check("queries" in feats and "history" not in feats,
          "with COLLIDE_HISTORY_MS=0, queries but not history: %s" % feats)
    c.sync()  # a few ticks stepped
    r = ask(c, msg_ray(c.rid(), 0, 0, 100, 0))
    check(r.tick >= 2, "ticks have run: %d" % r.tick)
    rid = c.rid()
    c.send(msg_ray(rid, 0, 0, 100, 0, at_tick=r.tick - 1))
    c.expect_error(rid, "HISTORY_EXPIRED", "a past tick with no history kept", fatal=False)
    c.close()
    d.stop_and_check()


@test
def ray_cast_first_all_point_normal_and_filters():
    d, admin = ct.daemon_with_admin(world=walls_world())
    admin.sync()  # a few ticks stepped
    w1, w2, w3 = wall_ids(admin)
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0))
    check(len(r.hits) == 1 and not r.truncated, "first hit only: %s" % r)
    h = r.hits[0]
    check(h.body_id == w1, "the first wall first")
    check(near(h.fraction, 0.09, 1e-5), "fraction 9/100, got %r" % h.fraction)
    check(near(h.point.x, 9) and near(h.point.y, 0), "point on the wall's face: %s" % h.point)
    check(near(h.normal.x, -1) and near(h.normal.y, 0), "normal out of the wall: %s" % h.normal)
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True))
    check([h.body_id for h in r.hits] == [w1, w2, w3], "all: by fraction")
    check([round(h.fraction, 4) for h in r.hits] == [0.09, 0.19, 0.29], "fractions: %s"
          % [h.fraction for h in r.hits])
    check(r.tick >= 1, "QueryResult.tick is the tick evaluated at")
    # filters
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, max_results=2))
    check([h.body_id for h in r.hits] == [w1, w2] and r.truncated,
          "max_results 2 keeps the nearest two, truncated: %s" % r)
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, max_results=3))
    check(len(r.hits) == 3 and not r.truncated, "truncated only when more exist")
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, exclude_ids=[w3, w1]))
    check([h.body_id for h in r.hits] == [w2], "excluded ids are passed through: %s" % r)
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, kinds=[ct.pb.BODY_KIND_MOVING]))
    check(len(r.hits) == 0, "kinds MOVING leaves the static walls out")
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, kinds=[ct.pb.BODY_KIND_STATIC]))
    check(len(r.hits) == 1, "kinds STATIC keeps them")
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, category_mask=2))
    check(len(r.hits) == 0, "every body is category 1: mask 2 matches none")
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, category_mask=1))
    check(len(r.hits) == 1, "mask 1 matches")
    # starting inside the first wall: fraction 0, point = origin, normal zero
    r = ask(admin, msg_ray(admin.rid(), 10.5, 0.2, 100, 0, all_=True))
    h = r.hits[0]
    check(h.body_id == w1 and h.fraction == 0 and near(h.point.x, 10.5) and near(h.point.y, 0.2)
          and h.normal.x == 0 and h.normal.y == 0, "a start inside: %s" % h)
    # the bounds are not a body
    r = ask(admin, msg_ray(admin.rid(), 0, 5, 5000, 0, all_=True))
    check(len(r.hits) == 0, "a ray past the walls to the bounds hits nothing: %s" % r)
    admin.close()
    d.stop_and_check()


@test
def overlap_and_shape_cast():
    d, admin = ct.daemon_with_admin(world=walls_world())
    w1, w2, w3 = wall_ids(admin)
    # a circle of radius 2 at x = 12.5 overlaps the first wall by 0.5 (its face at x = 11)
    r = ask(admin, msg_overlap(admin.rid(), ct.circle(2), 12.5, 0))
    check([h.body_id for h in r.hits] == [w1], "the circle overlaps wall 1 only: %s" % r)
    h = r.hits[0]
    check(near(h.depth, 0.5) and near(h.normal.x, 1) and near(h.normal.y, 0),
          "MTV pushes the query out along +x by 0.5: %s" % h)
    check(near(h.point.x, 11) and abs(h.point.y) <= 1, "point on the wall's face: %s" % h.point)
    # a wide box at 20 overlaps all three, listed by id; max_results 1 keeps the lowest id
    r = ask(admin, msg_overlap(admin.rid(), ct.box(11, 1), 20, 0))
    check(sorted(h.body_id for h in r.hits) == [h.body_id for h in r.hits] and len(r.hits) == 3,
          "overlaps by id: %s" % r)
    r = ask(admin, msg_overlap(admin.rid(), ct.box(11, 1), 20, 0, max_results=1))
    check(len(r.hits) == 1 and r.hits[0].body_id == min(w1, w2, w3) and r.truncated,
          "an overlap capped keeps the lowest id: %s" % r)
    # a box turned a quarter turn: 1 x 3 becomes 3 x 1, reaching wall 1 (to x = 11) from 13.5
    r = ask(admin, msg_overlap(admin.rid(), ct.box(1, 3), 13.5, 0))
    check(len(r.hits) == 0, "unturned, the tall box misses")
    r = ask(admin, msg_overlap(admin.rid(), ct.box(1, 3), 13.5, 0, angle=math.pi / 2))
    check([h.body_id for h in r.hits] == [w1], "turned, it overlaps wall 1: %s" % r)
    # a shape cast: a box of half 0.5 from x = 0 along +x hits wall 1 at x = 8.5 of 100
    r = ask(admin, msg_cast(admin.rid(), ct.box(0.5, 0.5), 0, 0, 100, 0))
    h = r.hits[0]
    check(h.body_id == w1 and near(h.fraction, 0.085, 1e-5), "cast first hit: %s" % h)
    check(near(h.normal.x, -1) and near(h.point.x, 9), "normal out of the wall, point on it: %s"
          % h)
    r = ask(admin, msg_cast(admin.rid(), ct.circle(0.5), 0, 0, 100, 0, all_=True))
    check([h.body_id for h in r.hits] == [w1, w2, w3], "cast all by fraction: %s" % r)
    # starting inside wall 2: fraction 0, point = the start, normal = the MTV direction
    r = ask(admin, msg_cast(admin.rid(), ct.box(0.5, 0.5), 20.8, 0, 100, 0))
    h = r.hits[0]
    check(h.body_id == w2 and h.fraction == 0 and near(h.point.x, 20.8) and near(h.normal.x, 1)
          and near(h.depth, 0.7), "a cast starting inside: %s" % h)
    admin.close()
    d.stop_and_check()


def box_boundary_distance(px, py, cx, cy, hx, hy, angle):
    """Distance from (px, py) to the boundary of a box of half extents (hx, hy) at (cx, cy)
    turned by angle (in double, not the daemon's code)."""
    c, s = math.cos(angle), math.sin(angle)
    dx, dy = px - cx, py - cy
    lx, ly = abs(c * dx + s * dy), abs(-s * dx + c * dy)  # in the box's own frame, folded
    ox, oy = max(lx - hx, 0.0), max(ly - hy, 0.0)
    if ox > 0 or oy > 0:
        return math.hypot(ox, oy)
    return min(hx - lx, hy - ly)


@test
def shape_cast_point_where_turned_shapes_touch():
    """Issue 28: a turned box cast against a turned static box; the hit point lies on both
    boxes' boundaries at the reported fraction (PROTOCOL.md: where the cast shape meets the body).
    The case an independent client found: the point was on the static but 0.35 off the cast box."""
    d, admin = ct.daemon_with_admin(world=walls_world())
    st = (-16.817991, -45.515923, 1.6429033, 1.9338201, 2.2705162)  # x, y, hx, hy, angle
    rid = admin.rid()
    admin.send(ct.msg_spawn(rid, ct.box(st[2], st[3]), st[0], st[1], kind=ct.pb.BODY_KIND_STATIC,
                            angle=st[4]))
    sm = admin.reply(rid)
    check(kind_of(sm) == "spawned", "spawn: %s" % describe(sm))
    cast = (-27.232939, -37.028381, 0.89153403, 1.0569558, -0.44491172)
    tx, ty = 31.838181, -30.892485
    r = ask(admin, msg_cast(admin.rid(), ct.box(cast[2], cast[3]), cast[0], cast[1], tx, ty,
                            angle=cast[4]))
    check(len(r.hits) == 1 and r.hits[0].body_id == sm.spawned.body_id, "the static: %s" % r)
    h = r.hits[0]
    check(near(h.fraction, 0.23473759, 1e-5), "fraction as the oracle says: %s" % h)
    on_static = box_boundary_distance(h.point.x, h.point.y, *st)
    on_cast = box_boundary_distance(h.point.x, h.point.y, cast[0] + h.fraction * tx,
                                    cast[1] + h.fraction * ty, *cast[2:])
    check(on_static <= 1e-3 and on_cast <= 1e-3,
          "point on the static (%g off) and on the cast box (%g off): %s"
          % (on_static, on_cast, h))
    admin.close()
    d.stop_and_check()


@test
def filters_on_spawned_category_and_sensor():
    d, admin = ct.daemon_with_admin(world=walls_world())
    w1, w2, w3 = wall_ids(admin)

    def spawn_static(x, category=0, sensor=False):
        rid = admin.rid()
        m = ct.msg_spawn(rid, ct.box(1, 1), x, 0, kind=ct.pb.BODY_KIND_STATIC)
        m.spawn.category = category
        m.spawn.sensor = sensor
        admin.send(m)
        sm = admin.reply(rid)
        check(kind_of(sm) == "spawned", "spawn: %s" % describe(sm))
        return sm.spawned.body_id

    plate = spawn_static(5, sensor=True)
    blue = spawn_static(15, category=4)
    ids = lambda r: [h.body_id for h in r.hits]  # noqa: E731
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True))
    check(ids(r) == [w1, blue, w2, w3], "a sensor only with include_sensors: %s" % ids(r))
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, include_sensors=True))
    check(ids(r) == [plate, w1, blue, w2, w3], "sensors included: %s" % ids(r))
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, category_mask=4))
    check(ids(r) == [blue], "category_mask 4: the category-4 body alone: %s" % ids(r))
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, category_mask=5,
                           include_sensors=True))
    check(ids(r) == [plate, w1, blue, w2, w3], "mask 5 takes categories 1 and 4: %s" % ids(r))
    admin.close()
    d.stop_and_check()


@test
def bad_queries_are_non_fatal():
    d, admin = ct.daemon_with_admin(world=walls_world())
    c = d.client()
    c.hello()
    now = ask(c, msg_ray(c.rid(), 0, 0, 1, 0)).tick
    cases = [
        (msg_ray(c.rid(), float("nan"), 0, 1, 0), "BAD_REQUEST", "a NaN origin"),
        (msg_ray(c.rid(), 0, 0, float("inf"), 0), "BAD_REQUEST", "an infinite translation"),
        (msg_overlap(c.rid(), ct.box(0, 1), 0, 0), "INVALID_SHAPE", "a box of zero width"),
        (msg_overlap(c.rid(), None, 0, 0), "INVALID_SHAPE", "an overlap without a shape"),
        (msg_overlap(c.rid(), ct.circle(1), 0, 0, angle=float("nan")), "BAD_REQUEST",
         "a NaN angle"),
        (msg_cast(c.rid(), ct.polygon([(0, 0), (1, 0), (2, 0)]), 0, 0, 1, 0), "INVALID_SHAPE",
         "a collinear polygon"),
        (msg_cast(c.rid(), ct.regular_polygon(17, 1), 0, 0, 1, 0), "INVALID_SHAPE",
         "a polygon of 17 vertices"),
        (msg_cast(c.rid(), ct.circle(1), 0, float("nan"), 1, 0), "BAD_REQUEST", "a NaN position"),
        (msg_ray(c.rid(), 0, 0, 1, 0, kinds=[ct.pb.BODY_KIND_UNSPECIFIED]), "BAD_REQUEST",
         "an unspecified kind in the filter"),
        (msg_ray(c.rid(), 0, 0, 1, 0, at_tick=now + 1000), "BAD_REQUEST", "a future tick"),
        (msg_overlap(c.rid(), ct.circle(1), 0, 0, at_tick=now + 1000), "BAD_REQUEST",
         "a future tick (overlap)"),
    ]
    for m, code, what in cases:
        c.send(m)
        c.expect_error(m.request_id, code, what, fatal=False)
    # and the session goes on: a good query right after
    r = ask(c, msg_ray(c.rid(), 0, 0, 100, 0))
    check(len(r.hits) == 1, "a query after the errors is answered")
    c.close()
    admin.close()
    d.stop_and_check()


@test
def queries_in_request_order_and_rate_limited():
    d = ct.Daemon(["--rate-limit", "20"], world=walls_world())
    c = d.client()
    c.hello()
    # A burst of 2 s worth (40 messages) less the Hello: 45 queries in one write, then a Ping.
    # Short rays (to the first wall): one message each (--query-work-per-message).
    first = c.next_rid + 1
    msgs = [msg_ray(c.rid(), 0, 0, 12, 0, all_=True) for _ in range(45)]
    c.send(*msgs)
    got = []
    deadline = time.monotonic() + 10
    while len(got) < 45 and time.monotonic() < deadline:
        m = c.recv(deadline - time.monotonic())
        if m is not None and kind_of(m) != "snapshot":
            got.append(m)
    check(len(got) == 45, "every query answered or refused, got %d" % len(got))
    check([m.request_id for m in got] == list(range(first, first + 45)),
          "answers in request order")
    kinds = [kind_of(m) for m in got]
    n_ok = kinds.count("query_result")
    check(30 <= n_ok < 45 and all(k == "query_result" for k in kinds[:n_ok]),
          "the burst answered, then refused: %s" % kinds)
    check(all(m.error.code == ct.code_of("RATE_LIMITED") and not m.error.fatal
              for m in got[n_ok:]), "queries past the burst: RATE_LIMITED, non-fatal")
    c.close()
    d.stop_and_check()


def reply_kind(sm):
    if kind_of(sm) == "error" and sm.error.code == ct.code_of("RATE_LIMITED"):
        return "RATE_LIMITED" if not sm.error.fatal else "RATE_LIMITED fatal"
    return kind_of(sm) if kind_of(sm) != "error" else describe(sm)


def query_stream(c, make, per_s, seconds):
    """Sends make(rid) per_s times a second for `seconds`; the replies' kinds, in request order."""
    replies, sent = {}, []
    t0 = time.monotonic()
    for i in range(int(per_s * seconds)):
        wait = t0 + i / per_s - time.monotonic()
        if wait > 0:
            for sm in c.pump(wait):
                replies[sm.request_id] = reply_kind(sm)
        m = make(c.rid())
        sent.append(m.request_id)
        c.send(m)
    for rid in sent:
        if rid not in replies:
            replies[rid] = reply_kind(c.reply(rid))
    return [replies[r] for r in sent]


@test
def whole_arena_overlaps_cost_their_work():
    # Issue 32: a query is charged ceil(work / --query-work-per-message) messages. At 10 queries a
    # second under --rate-limit 20, short rays are never limited, while overlaps of the whole
    # arena (2000 x 2000: a million cells) each empty the bucket into debt and are RATE_LIMITED.
    d = ct.Daemon(["--rate-limit", "20"], world=walls_world())
    rays, big = d.client(), d.client()
    rays.hello()
    big.hello()
    ray_kinds = query_stream(rays, lambda rid: msg_ray(rid, 0, 0, 12, 0), 10, 3)
    check(ray_kinds == ["query_result"] * 30, "short rays at half the rate: all answered, got %s"
          % ray_kinds)
    whole = ct.box(1000, 1000)
    big_kinds = query_stream(big, lambda rid: msg_overlap(rid, whole, 0, 0), 10, 3)
    check(big_kinds[0] == "query_result", "the first whole-arena overlap is answered (then paid)")
    limited = big_kinds.count("RATE_LIMITED")
    check(limited >= 20 and set(big_kinds) == {"query_result", "RATE_LIMITED"},
          "whole-arena overlaps at half the rate: most RATE_LIMITED (never fatal in 3 s), got %s"
          % big_kinds)
    rays.close()
    big.close()
    d.stop_and_check()


@test
def max_query_results_flag_caps_hits():
    d, admin = ct.daemon_with_admin(["--max-query-results", "2"], world=walls_world())
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True))
    check(len(r.hits) == 2 and r.truncated, "--max-query-results 2 caps all: %s" % r)
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 100, 0, all_=True, max_results=5))
    check(len(r.hits) == 2 and r.truncated, "a larger max_results does not lift the flag's cap")
    r = ask(admin, msg_ray(admin.rid(), 0, 0, 25, 0, all_=True))
    check(len(r.hits) == 2 and not r.truncated, "exactly at the cap: not truncated")
    admin.close()
    d.stop_and_check()


@test
def lag_compensation_hits_where_the_body_was():
    # 60 Hz, 1 s of history: 60 ticks back, room for a slow machine between the shot and the ask
    d = ct.Daemon(["--history-ms", "1000", "--tick-rate", "60"],
                  world=walls_world(), http=True)
    c = d.client()
    c.hello()
    body = c.spawn_ok(ct.circle(1), 50, 0)
    c.recv_until(lambda m: kind_of(m) == "snapshot" and body in c.view, what="own body")
    # the tick the shooter saw it at (50, 0)
    seen = ask(c, msg_ray(c.rid(), 40, 0, 20, 0, kinds=[ct.pb.BODY_KIND_MOVING]))
    check(len(seen.hits) == 1 and seen.hits[0].body_id == body, "it is there now: %s" % seen)
    t_seen = seen.tick
    seq = c.move(body, 0, 600)  # away, 10 units a tick
    c.recv_until(lambda m: kind_of(m) == "snapshot" and c.view[body]["y"] > 20,
                 what="the body gone up")
    now = ask(c, msg_ray(c.rid(), 40, 0, 20, 0, kinds=[ct.pb.BODY_KIND_MOVING]))
    check(len(now.hits) == 0 and now.tick > t_seen, "the body has moved away: %s" % now)
    then = ask(c, msg_ray(c.rid(), 40, 0, 20, 0, at_tick=t_seen, kinds=[ct.pb.BODY_KIND_MOVING]))
    check(then.tick == t_seen, "answered at the tick asked: %d vs %d" % (then.tick, t_seen))
    check(len(then.hits) == 1 and then.hits[0].body_id == body and
          near(then.hits[0].point.x, 49) and near(then.hits[0].normal.x, -1),
          "at the tick the shooter saw, the ray hits it where it was: %s" % then)
    for m in (msg_overlap(c.rid(), ct.circle(0.5), 50, 0, at_tick=t_seen),
              msg_cast(c.rid(), ct.circle(0.5), 40, 0, 20, 0, at_tick=t_seen)):
        r = ask(c, m)
        check([h.body_id for h in r.hits] == [body], "overlap and cast rewind too: %s" % r)
    met = ct.metric(d.metrics(), "collide_history_bytes")
    per = ct.metric(d.metrics(), "collide_history_bytes_per_mover_tick")
    check(met > 0 and 12 <= per, "/metrics reports the history: %s bytes, %s per mover tick"
          % (met, per))
    # past the window: HISTORY_EXPIRED, non-fatal
    c.recv_until(lambda m: kind_of(m) == "snapshot" and m.snapshot.tick > t_seen + 61,
                 what="61 ticks later")
    rid = c.rid()
    c.send(msg_ray(rid, 40, 0, 20, 0, at_tick=t_seen))
    c.expect_error(rid, "HISTORY_EXPIRED", "a tick past --history-ms", fatal=False)
    del seq
    c.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

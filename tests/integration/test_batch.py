#!/usr/bin/env python3
"""Backends and batches (protocol 1.1, PROTOCOL.md "Additions"): MoveIntents applies its items in
order, each as a MoveIntent of its own, a failing item answered by a non-fatal Error carrying the
batch's request_id and Error.index = its position + 1; each item counts against the rate limit,
the items past the budget dropped with one RATE_LIMITED at the first dropped index; admins pay
neither --rate-limit nor --rate-limit-bytes, only --admin-rate-limit when set; an admin's moving
bodies stay in the world when it leaves and any admin may move them; Welcome.features lists
"batch"; a batch is bounded by its count of intents (--max-frame / 16)."""

import math
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

ADMIN = "adm1n"
# server/net/net_arena.h: a batch holds at most --max-frame / 16 intents.
BATCH_BYTES_PER_ITEM = 16


def snap(m):
    return kind_of(m) == "snapshot"


def msg_batch(rid, items):
    """MoveIntents of items (body_id, seq, vx, vy) or (body_id, seq, vx, vy, angular_velocity)."""
    m = ct.pb.ClientMessage(request_id=rid)
    m.move_batch.SetInParent()
    for item in items:
        body_id, seq, vx, vy = item[:4]
        it = m.move_batch.intents.add()
        it.body_id = body_id
        it.input_seq = seq
        it.velocity.x = vx
        it.velocity.y = vy
        if len(item) > 4:
            it.angular_velocity = item[4]
    return m


def errors_for(msgs, rid):
    return [m for m in msgs if kind_of(m) == "error" and m.request_id == rid]


def rate_limited(msgs):
    return [m for m in msgs if kind_of(m) == "error" and m.error.code == ct.code_of("RATE_LIMITED")]


def replies_to(c, rid):
    """The Errors answering request rid: replies come in request order, so they all arrive
    before the Pong of a Ping sent after it (and a little more reading shows nothing follows)."""
    msgs = []
    ping = c.rid()
    c.send(ct.msg_ping(ping, 1))
    c.reply(ping, keep=msgs)
    msgs += c.pump(0.2)
    return errors_for(msgs, rid)


def hide_view(c):
    """A view box over an empty corner: the test reads replies, not thousands of bodies."""
    c.send(ct.msg_set_view(c.rid(), 990, 990, 1, 1))


@test
def welcome_lists_batch_feature():
    d, admin = ct.daemon_with_admin()
    player = d.client()
    for who, w in (("admin", admin.welcome), ("player", player.hello())):
        feats = list(w.features)
        check("batch" in feats, "%s: Welcome.features must list \"batch\": %s" % (who, feats))
        check(len(feats) == len(set(feats)), "%s: features listed twice: %s" % (who, feats))
    admin.close()
    player.close()
    d.stop_and_check()


@test
def admin_2000_pipelined_spawns_never_rate_limited():
    # A player here gets 200 messages of burst and 2 x 1000 bytes (or one max frame, 65,541):
    # 2,000 spawns of hexagons, ~90 bytes each, in one write cross both buckets many times.
    d = ct.Daemon(["--admin-token", ADMIN, "--rate-limit", "100", "--rate-limit-bytes", "1000"],
                  world=ct.write_world())
    admin = d.client()
    admin.hello(token=ADMIN)
    hide_view(admin)
    n = 2000
    first = admin.next_rid + 1
    msgs = []
    for i in range(n):
        rid = admin.rid()
        msgs.append(ct.msg_spawn(rid, ct.regular_polygon(6, 1.0), -900 + 30 * (i % 60),
                                 -900 + 30 * (i // 60)))
    data = b"".join(ct.encode(m) for m in msgs)
    check(len(data) > 2 * 65541, "the spawns must be well over a player's byte burst: %d"
          % len(data))
    admin.send_raw(data)
    got = {}
    errs = []
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        try:
            m = admin.recv(deadline - time.monotonic())
        except ct.ConnectionClosed as e:
            raise ct.TestFailure("an admin's spawns must never close it (%s) after %d Spawned, "
                                 "errors %s" % (e, len(got), [describe(m) for m in errs[-3:]]))
        if m is None or snap(m):
            continue
        if kind_of(m) == "error":
            errs.append(m)
            if len(errs) > 5:
                break
        elif kind_of(m) == "spawned":
            got[m.request_id] = m.spawned.body_id
    check(not errs, "an admin's spawns must never be refused: %s" % [describe(m) for m in errs])
    check(sorted(got) == list(range(first, first + n)),
          "all %d spawns must be answered with Spawned, got %d" % (n, len(got)))
    check(len(set(got.values())) == n, "each spawn must get its own body id")
    admin.assert_open("after 2000 pipelined spawns")
    admin.close()
    d.stop_and_check()


@test
def batch_bad_items_answered_at_their_index_good_items_apply():
    d = ct.Daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    a = d.client()
    a.hello()
    b = d.client()
    b.hello()
    admin = d.client()
    admin.hello(token=ADMIN)
    a1 = a.spawn_ok(ct.circle(1), -100, 0)
    a2 = a.spawn_ok(ct.circle(1), 100, 0)
    b1 = b.spawn_ok(ct.circle(1), 0, 200)
    wall = admin.spawn_ok(ct.box(2, 2), 0, -300, kind=ct.pb.BODY_KIND_STATIC)
    a.send(ct.msg_set_view(a.rid(), 0, 0, 500, 500))
    # a2's input_seq is first raised to 7, so a later item with seq 6 is stale.
    a.move(a2, 0, 0, seq=7)
    a.sync()
    x1, y2 = a.view[a1]["x"], a.view[a2]["y"]
    bx, by = a.view[b1]["x"], a.view[b1]["y"]
    rid = a.rid()
    items = [
        (a1, 1, 20.0, 0.0),           # 1: applies
        (b1, 1, 20.0, 20.0),          # 2: not yours: FORBIDDEN
        (987654, 1, 1.0, 1.0),        # 3: no such body: NOT_FOUND
        (a2, 8, math.nan, 0.0),       # 4: NaN velocity: BAD_REQUEST
        (wall, 1, 1.0, 0.0),          # 5: a static, not yours: FORBIDDEN
        (a2, 6, 0.0, 40.0),           # 6: stale seq (6 < 7): ignored, silently
        (0, 1, 1.0, 0.0),             # 7: body 0 is no body: NOT_FOUND
        (a2, 9, 0.0, -20.0),          # 8: applies
        (a2, 10, 0.0, 20.0, math.inf),  # 9: infinite turning speed: BAD_REQUEST
        (a2, 11, 0.0, 20.0, math.nan),  # 10: NaN turning speed: BAD_REQUEST
    ]
    a.send(msg_batch(rid, items))
    errs = replies_to(a, rid)
    got = [(m.error.index, ct.err_name(m.error.code), m.error.fatal) for m in errs]
    want = [(2, "ERROR_CODE_FORBIDDEN", False), (3, "ERROR_CODE_NOT_FOUND", False),
            (4, "ERROR_CODE_BAD_REQUEST", False), (5, "ERROR_CODE_FORBIDDEN", False),
            (7, "ERROR_CODE_NOT_FOUND", False), (9, "ERROR_CODE_BAD_REQUEST", False),
            (10, "ERROR_CODE_BAD_REQUEST", False)]
    check(got == want, "the batch's Errors must be exactly %s, got %s" % (want, got))
    # The good items applied (and the stale one did not): a1 goes +x, a2 goes -y, b1 stays.
    a.recv_until(lambda m: snap(m) and a.view[a1]["seq"] == 1 and a.view[a2]["seq"] == 9
                 and a.view[a1]["x"] > x1 + 1 and a.view[a2]["y"] < y2 - 1,
                 what="items 1 and 8 applied (a1 moving +x at seq 1, a2 moving -y at seq 9)")
    check(a.view[a2]["vy"] < 0, "the stale item 6 (vy +40) and the rejected 9 and 10 (vy +20) "
          "must not apply: vy %g" % a.view[a2]["vy"])
    check(abs(a.view[b1]["x"] - bx) < 1e-3 and abs(a.view[b1]["y"] - by) < 1e-3,
          "b's body must not move: it was not a's")
    # Error.index is 0 for what is not a batch item.
    rid2 = a.rid()
    a.send(ct.msg_move(rid2, b1, 2, 1, 1))
    e = a.expect_error(rid2, "FORBIDDEN", "a single MoveIntent on another's body", fatal=False)
    check(e.error.index == 0, "a lone MoveIntent's Error.index must be 0, got %d" % e.error.index)
    # An empty batch is a batch that succeeds: silent.
    rid3 = a.rid()
    a.send(msg_batch(rid3, []))
    check(not replies_to(a, rid3), "an empty batch must be silent")
    for c in (a, b, admin):
        c.close()
    d.stop_and_check()


def first_dropped_index_bounds(rate, tokens_left, t_start, t_end):
    """The bucket held tokens_left (plus what refilled since t_start) when the batch was
    handled: the first dropped index is 1 + the whole tokens then, refill bounded by t_end."""
    lo = 1 + tokens_left
    hi = 1 + tokens_left + math.ceil(rate * (t_end - t_start))
    return lo, hi


def check_batch_cut(c, rate, tokens_left, n_items, body, t_start, what):
    """Sends a batch of n_items intents on body (seq 1..n); checks one RATE_LIMITED at the first
    dropped index, and that exactly the items before it applied."""
    rid = c.rid()
    c.send(msg_batch(rid, [(body, i + 1, 1.0, 0.0) for i in range(n_items)]))
    e = c.reply(rid)
    t_end = time.monotonic()
    check(kind_of(e) == "error" and e.error.code == ct.code_of("RATE_LIMITED")
          and not e.error.fatal, "%s: the batch must get a non-fatal RATE_LIMITED, got %s"
          % (what, describe(e)))
    lo, hi = first_dropped_index_bounds(rate, tokens_left, t_start, t_end)
    check(lo <= e.error.index <= hi, "%s: RATE_LIMITED.index must be the first dropped item's, "
          "in [%d, %d], got %d" % (what, lo, hi, e.error.index))
    more = errors_for(c.pump(0.3), rid)
    check(not more, "%s: ONE RATE_LIMITED for the batch, then %s" % (
        what, [describe(m) for m in more]))
    c.recv_until(lambda m: snap(m) and body in c.view and c.view[body]["seq"] == e.error.index - 1,
                 what="%s: items 1..%d applied, none after" % (what, e.error.index - 1))
    c.sync()
    check(c.view[body]["seq"] == e.error.index - 1, "%s: an item past the cut applied: seq %d"
          % (what, c.view[body]["seq"]))


@test
def player_batch_over_rate_limit_one_rate_limited_at_first_dropped_index():
    rate = 50  # burst 100: Hello and the spawn take 2, so 98 items pass (plus the refill)
    d = ct.Daemon(["--rate-limit", str(rate)], world=ct.write_world())
    c = d.client()
    t_start = time.monotonic()  # before the Hello: the bucket starts no earlier
    c.hello()
    body = c.spawn_ok(ct.circle(1), 0, 0)
    check_batch_cut(c, rate, 2 * rate - 2, 300, body, t_start, "player, --rate-limit 50")
    c.close()
    d.stop_and_check()


@test
def admin_rate_limit_crossed():
    rate = 20  # --admin-rate-limit 20: burst 40, whatever --rate-limit says
    d = ct.Daemon(["--admin-token", ADMIN, "--admin-rate-limit", str(rate), "--rate-limit", "1000"],
                  world=ct.write_world())
    admin = d.client()
    t_start = time.monotonic()
    admin.hello(token=ADMIN)
    # Not before its value: 30 pings of the burst of 40 are all answered.
    base = admin.next_rid
    admin.send(*[ct.msg_ping(base + 1 + i, 7) for i in range(30)])
    admin.next_rid += 30
    for i in range(30):
        m = admin.reply(base + 1 + i)
        check(kind_of(m) == "pong", "ping %d of 30 under --admin-rate-limit 20 (burst 40): %s"
              % (i + 1, describe(m)))
    # A batch counts per item: with 9 tokens left after the spawn, item 10 (plus refill) is cut.
    body = admin.spawn_ok(ct.circle(1), 0, 0)
    check_batch_cut(admin, rate, 2 * rate - 31, 200, body, t_start, "admin, --admin-rate-limit 20")
    admin.close()
    d.stop_and_check()


@test
def admin_npcs_stay_after_reconnect_and_another_admin_moves_them():
    d = ct.Daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    backend = d.client()
    backend.hello(token=ADMIN)
    npcs = [backend.spawn_ok(ct.circle(1), -200 + 40 * i, 100) for i in range(3)]
    player = d.client()
    player.hello()
    pbody = player.spawn_ok(ct.circle(1), 300, -300)
    backend.close()  # a network blip
    # The player's body still goes with its connection (rule 8).
    player.close()
    backend = d.client()
    backend.hello(token=ADMIN)
    backend.send(ct.msg_set_view(backend.rid(), 0, 0, 500, 500))
    backend.sync()
    backend.sync()
    for n in npcs:
        check(n in backend.view, "an admin's NPC %d must stay after it disconnects" % n)
    check(pbody not in backend.view, "a player's body must go with its connection")
    # Another admin moves them (a batch and a lone MoveIntent) and despawns one.
    other = d.client()
    other.hello(token=ADMIN)
    other.send(ct.msg_set_view(other.rid(), 0, 0, 500, 500))
    other.sync()
    y0 = {n: other.view[n]["y"] for n in npcs}
    rid = other.rid()
    other.send(msg_batch(rid, [(npcs[0], 1, 0, 30), (npcs[1], 1, 0, -30)]))
    other.move(npcs[2], 30, 0, seq=1)
    other.recv_until(lambda m: snap(m) and other.view[npcs[0]]["y"] > y0[npcs[0]] + 1
                     and other.view[npcs[1]]["y"] < y0[npcs[1]] - 1
                     and other.view[npcs[2]]["seq"] == 1,
                     what="the NPCs moved by a second admin")
    check(not [describe(m) for m in other.pump(0.2) if kind_of(m) == "error"],
          "an admin's moves of another admin's NPCs must not be refused")
    # A player may not touch them.
    p2 = d.client()
    p2.hello()
    r = p2.rid()
    p2.send(msg_batch(r, [(npcs[0], 5, 1, 1)]))
    e = p2.expect_error(r, "FORBIDDEN", "a player moving an admin's NPC", fatal=False)
    check(e.error.index == 1, "index of the only item must be 1, got %d" % e.error.index)
    other.send(ct.msg_despawn(other.rid(), npcs[2]))
    other.recv_until(lambda m: snap(m) and npcs[2] in m.snapshot.removed,
                     what="an NPC despawned by a second admin")
    for c in (backend, other, p2):
        c.close()
    d.stop_and_check()


@test
def batch_bounded_by_count_of_intents():
    max_frame = 4096
    limit = max_frame // BATCH_BYTES_PER_ITEM  # 256
    d = ct.Daemon(["--admin-token", ADMIN, "--max-frame", str(max_frame)],
                  world=ct.write_world())
    admin = d.client()
    admin.hello(token=ADMIN)
    body = admin.spawn_ok(ct.circle(1), 0, 0)
    # Stop intents (no velocity): 6 bytes each, so 257 of them fit the frame but not the count.
    def stops(rid, n, seq0):
        m = ct.pb.ClientMessage(request_id=rid)
        for i in range(n):
            it = m.move_batch.intents.add()
            it.body_id = body
            it.input_seq = seq0 + i
        return m
    rid = admin.rid()
    over = stops(rid, limit + 1, 1000)
    check(len(over.SerializeToString()) < max_frame, "the batch must fit the frame")
    admin.send(over)
    e = admin.expect_error(rid, "LIMIT_EXCEEDED", "a batch of %d intents" % (limit + 1),
                           fatal=False)
    check(e.error.index == 0, "a batch refused whole has Error.index 0")
    check(str(limit) in e.error.message, "the Error must name the limit: %r" % e.error.message)
    admin.sync()
    check(admin.view[body]["seq"] == 0, "no item of a refused batch may apply")
    rid = admin.rid()
    admin.send(stops(rid, limit, 1))
    check(not replies_to(admin, rid), "a batch of %d intents must be silent" % limit)
    admin.recv_until(lambda m: snap(m) and admin.view[body]["seq"] == limit,
                     what="every item of a batch at the limit applied")
    admin.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

#!/usr/bin/env python3
"""Documented limits, each checked on both sides of its value over the wire, and the start-up and
shutdown edges: the hello timeout, the snapshot lag and the partial-frame timeout, the abuse cuts
of the rate limit, --max-clients, IPv6 (game and HTTP), a bad --bind and a port in use, a second
signal during a drain, and world files (no statics, overlapping statics, past the size limit).

Values come from README.md, docs/operations.md, docs/protocol.md and shared/design/PROTOCOL.md.
The exact byte edges of the output queue are pinned in tests/net (in-process, to the byte); the
over-the-wire checks of that limit are in test_load.py."""

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

# server/world/world_load.c: a world file larger than this is refused before it is read.
WORLD_MAX_FILE_BYTES = 64 * 1024 * 1024


def snap(m):
    return kind_of(m) == "snapshot"


def open_world():
    return ct.write_world(statics=[(900, 900, {"box": {"half_extents": [10, 10]}})])


def run_collided(args, timeout=ct.START_TIMEOUT):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLIDE_")}
    if "--ws-port" not in args:  # on by default (7778): off, so parallel daemons do not clash
        args = args + ["--ws-port", "0"]
    return subprocess.run([ct.OPTS.collided] + args, env=env, capture_output=True, text=True,
                          timeout=timeout)


# ---------------------------------------------------------------------------------------------
# Hello timeout (--hello-timeout-ms; the 2 s default is pinned in tests/net and test_badinput.py)


@test
def hello_timeout_not_before_its_value_and_soon_after():
    timeout_s = 1.0
    d = ct.Daemon(["--hello-timeout-ms", "1000"], world=open_world())
    # The clock starts before connect: the daemon's own start (its accept) can only be later, so
    # the cut cannot be observed before timeout_s after t0, however loaded the machine is.
    t0 = time.monotonic()
    silent = d.client()
    t_late = time.monotonic()
    late = d.client()
    # Hello just before the timeout: in time, so never cut.
    time.sleep(max(0.0, t_late + 0.8 * timeout_s - time.monotonic()))
    late.hello(name="late")
    try:
        msgs = silent.wait_closed(timeout=timeout_s + 5.0)
    except ct.TestFailure as e:
        raise ct.TestFailure("a connection without Hello must be closed soon after "
                             "--hello-timeout-ms 1000: %s" % e)
    elapsed = time.monotonic() - t0
    check(not msgs, "the hello timeout closes without a message, got %s" % [
        describe(m) for m in msgs])
    check(elapsed >= 0.99 * timeout_s, "closed %.3f s after connecting, before --hello-timeout-ms "
          "1000" % elapsed)
    check(elapsed <= timeout_s + 2.0, "closed %.3f s after connecting, long after "
          "--hello-timeout-ms 1000" % elapsed)
    check(d.wait_log(r"\bevent=hello_timeout\b"), "event=hello_timeout must be logged")
    time.sleep(max(0.0, t_late + 1.5 * timeout_s - time.monotonic()))
    late.assert_open("a client that said Hello at 0.8x the hello timeout, at 1.5x")
    silent.close()
    late.close()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Time limits on a welcomed client (docs/operations.md "Limits"): --max-snapshot-lag-ms (a reader
# whose oldest queued output is older than this is cut) and --frame-timeout-ms (a partial frame
# held longer than this is cut). Both pinned to the microsecond in tests/net.


def disconnects(d, reason):
    return ct.metric(d.metrics(), "collide_disconnects_total", reason=reason) or 0


def wait_disconnect_counted(d, reason, deadline):
    """Polls /metrics until collide_disconnects_total{reason} is 1; returns the time it was seen,
    or None at the deadline."""
    while time.monotonic() < deadline:
        n = disconnects(d, reason)
        if n:
            check(n == 1, "exactly one %s disconnect, got %g" % (reason, n))
            return time.monotonic()
        time.sleep(0.05)
    return None


MOVERS = 100


@test
def stalled_reader_of_many_movers_is_cut_after_the_default_snapshot_lag():
    # The default --max-snapshot-lag-ms (2000): not passed on purpose, so this pins it.
    lag_s = 2.0
    d = ct.Daemon(["--max-bodies-per-client", str(MOVERS), "--rate-limit", "2000"] +
                  ct.WHOLE_WORLD_VIEW, http=True,
                  world=open_world())
    mover = d.client()
    mover.hello(name="mover")
    # The mover's own view is an empty corner: its few bytes a tick never back up.
    mover.send(ct.msg_set_view(mover.rid(), -990, -990, 1, 1))
    rids = [mover.rid() for _ in range(MOVERS)]
    mover.send(*[ct.msg_spawn(r, ct.box(1, 1), -400 + 8 * (i % 100), -400 + 8 * (i // 100))
                 for i, r in enumerate(rids)])
    ids = [mover.reply(r).spawned.body_id for r in rids]
    check(all(ids), "the %d movers must spawn" % MOVERS)
    mover.send(*[ct.msg_move(0, b, 1, 3, 2) for b in ids])  # every body changes every tick
    reader = d.client(rcvbuf=4096)
    reader.hello(name="reader")
    reader.send(ct.msg_set_view(reader.rid(), 0, 0, 1000, 1000))
    # Healthy for 1.5x the lag: it drains its socket (raw bytes, no parse, so a loaded machine
    # cannot make the test itself the slow reader) and is not cut.
    got = 0
    end = time.monotonic() + 1.5 * lag_s
    reader.sock.settimeout(0.2)
    while time.monotonic() < end:
        try:
            data = reader.sock.recv(1 << 16)
        except socket.timeout:
            continue
        check(data, "a reader that keeps up must not be cut (EOF after %d bytes)" % got)
        got += len(data)
    check(got > 100 * 1000, "the whole-world view of %d movers must stream snapshots, got %d bytes "
          "in %.1f s" % (MOVERS, got, 1.5 * lag_s))
    check(disconnects(d, "snapshot_lag") == 0, "a reader that keeps up must not count as lagging")
    # Then it stops reading. The kernel buffers fill within about a second (~3 kB a tick), then
    # the daemon's own queue ages: cut once its oldest byte is past the lag, not before.
    t_stop = time.monotonic()
    seen = wait_disconnect_counted(d, "snapshot_lag", t_stop + lag_s + 8.0)
    check(seen is not None, "a reader that stopped reading %d movers must be cut within %.1f s "
          "(the lag plus the kernel buffers' fill); collide_slow_client_drops_total %g" % (
              MOVERS, lag_s + 8.0,
              ct.metric(d.metrics(), "collide_slow_client_drops_total") or 0))
    check(seen - t_stop >= 0.9 * lag_s, "cut %.2f s after it stopped reading, before the %.1f s "
          "lag" % (seen - t_stop, lag_s))
    check(d.wait_log(r"(?=.*\bevent=snapshot_lag\b)(?=.*\bclient=%d\b)" % reader.client_id),
          "the cut must be logged as event=snapshot_lag with the client id")
    reader.sock.settimeout(ct.REPLY_TIMEOUT)
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    closed = False
    try:
        while not closed and time.monotonic() < deadline:
            closed = not reader.sock.recv(1 << 16)  # what was queued, then EOF
    except (ConnectionResetError, ConnectionAbortedError):
        closed = True
    except socket.timeout:
        pass
    check(closed, "the lagging reader's socket must be closed")
    mover.assert_open("the mover, while a reader of its bodies was cut")
    mover.close()
    reader.close()
    d.stop_and_check()


@test
def partial_frame_cut_after_frame_timeout_not_before():
    timeout_s = 1.0
    d = ct.Daemon(["--frame-timeout-ms", "1000"], http=True, world=open_world())
    slow = d.client()
    slow.hello(name="slow")
    held = d.client()
    held.hello(name="held")
    ping = ct.encode(ct.msg_ping(77, 4242))
    # slow: completes its frame at 0.8x the timeout, then a whole one: both served, never cut.
    t0 = time.monotonic()
    slow.send_raw(ping[:3])
    # held: a length prefix and part of the body, then nothing.
    held.send_raw(ping[:3])
    time.sleep(max(0.0, t0 + 0.8 * timeout_s - time.monotonic()))
    slow.send_raw(ping[3:])
    sm = slow.reply(77)
    check(kind_of(sm) == "pong", "a frame completed at 0.8x --frame-timeout-ms must be served, "
          "got %s" % describe(sm))
    seen = wait_disconnect_counted(d, "frame_timeout", t0 + timeout_s + 4.0)
    check(seen is not None, "a partial frame held past --frame-timeout-ms 1000 must be cut")
    check(seen - t0 >= 0.99 * timeout_s, "cut %.2f s after the partial frame, before the timeout"
          % (seen - t0))
    msgs = held.wait_closed()
    check(not [m for m in msgs if not snap(m)], "the frame timeout closes without a message, got "
          "%s" % [describe(m) for m in msgs if not snap(m)])
    check(d.wait_log(r"(?=.*\bevent=frame_timeout\b)(?=.*\bclient=%d\b)" % held.client_id),
          "the cut must be logged as event=frame_timeout with the client id")
    time.sleep(max(0.0, t0 + 1.5 * timeout_s - time.monotonic()))
    slow.assert_open("a client whose frame was whole at 0.8x the frame timeout, at 1.5x")
    check(disconnects(d, "frame_timeout") == 1, "only the held partial frame is cut")
    slow.close()
    held.close()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Rate limit: the abuse cuts (docs/operations.md "Limits": drops in 5 consecutive seconds, or over
# 4 bursts' worth in one second, disconnect with a fatal RATE_LIMITED)


def batch_replies(c, rids, what):
    """Reads the replies to rids (in order) until all came or the connection closed. Returns
    (pongs, non-fatal RATE_LIMITED, fatal RATE_LIMITED, closed)."""
    pongs = limited = fatal = 0
    pending = set(rids)
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    closed = False
    try:
        while pending and time.monotonic() < deadline:
            m = c.recv(deadline - time.monotonic())
            if m is None or snap(m):
                continue
            check(m.request_id in pending, "%s: unexpected %s" % (what, describe(m)))
            pending.discard(m.request_id)
            if kind_of(m) == "pong":
                pongs += 1
            elif kind_of(m) == "error" and m.error.code == ct.code_of("RATE_LIMITED"):
                if m.error.fatal:
                    fatal += 1
                    c.wait_closed()
                    closed = True
                    break
                limited += 1
            else:
                raise ct.TestFailure("%s: unexpected %s" % (what, describe(m)))
    except ct.ConnectionClosed:
        closed = True
    check(closed or not pending, "%s: no reply to %d requests" % (what, len(pending)))
    return pongs, limited, fatal, closed


@test
def abuse_cut_in_the_fifth_consecutive_second_of_drops():
    # --rate-limit 5: burst 10. A batch of 12 pings every 1.5 s always overflows the bucket (at
    # most 7.5 tokens refill between batches) but stays far under 4 bursts (40) of drops, so only
    # the consecutive-seconds rule can cut. 1.5 s apart, each batch opens a new one-second window
    # that directly follows the previous one, with half a second of slack either way.
    d = ct.Daemon(["--rate-limit", "5"], world=open_world())
    c = d.client()
    c.hello()
    period = 1.5
    t0 = time.monotonic()
    for second in range(1, 6):
        time.sleep(max(0.0, t0 + (second - 1) * period - time.monotonic()))
        rids = [1000 * second + i for i in range(12)]
        c.send(*[ct.msg_ping(r, r) for r in rids])
        pongs, limited, fatal, closed = batch_replies(c, rids, "batch %d" % second)
        if second < 5:
            check(not closed and fatal == 0 and limited > 0,
                  "drops in %d consecutive seconds must be RATE_LIMITED, not fatal, the connection"
                  " open (documented cut: drops in 5 consecutive seconds): %d pongs, %d limited, "
                  "%d fatal, closed %s" % (second, pongs, limited, fatal, closed))
        else:
            check(fatal == 1 and limited == 0 and closed,
                  "the first drop of the 5th consecutive second with drops must be a fatal "
                  "RATE_LIMITED and close: %d pongs, %d limited, %d fatal, closed %s" % (
                      pongs, limited, fatal, closed))
    c.close()
    ct.full_session(d, "after an abuse cut")
    d.stop_and_check()


@test
def abuse_cut_past_four_bursts_in_one_second():
    # --rate-limit 5: burst 10, 4 bursts = 40 drops. One write of 70 pings right after Hello: the
    # first 40 drops are non-fatal, the 41st is fatal and nothing after it is answered. (Tokens that
    # refill during the write serve a ping between drops; they do not change the count of drops.)
    d = ct.Daemon(["--rate-limit", "5"], world=open_world())
    c = d.client()
    c.hello()
    c.send(*[ct.msg_ping(100 + i, i) for i in range(70)])
    seq = []
    try:
        while True:
            m = c.recv(ct.REPLY_TIMEOUT)
            check(m is not None, "no close after 70 pings at --rate-limit 5: %s" % seq[-5:])
            if not snap(m):
                seq.append(m)
    except ct.ConnectionClosed:
        pass
    drops = [m for m in seq if kind_of(m) == "error"]
    check(all(m.error.code == ct.code_of("RATE_LIMITED") for m in drops),
          "only RATE_LIMITED expected: %s" % [describe(m) for m in drops])
    nonfatal = [m for m in drops if not m.error.fatal]
    check(len(nonfatal) == 40 and len(drops) == 41 and drops[-1].error.fatal,
          "4 bursts' worth (40) of drops in one second are not fatal, the 41st is: got %d "
          "non-fatal, %d in all, last %s" % (len(nonfatal), len(drops), describe(drops[-1])))
    check(seq[-1] is drops[-1], "nothing may follow the fatal RATE_LIMITED: %s" % describe(seq[-1]))
    c.close()
    ct.full_session(d, "after a burst cut")
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# --max-clients


def hello_reply(c):
    try:
        c.send(ct.msg_hello(1))
    except OSError:
        pass
    return c.recv_until(lambda m: not snap(m), what="reply to Hello")


@test
def max_clients_counts_welcomed_sessions_only():
    # --max-clients 2 counts welcomed sessions (issue 12): 5 connections that have not said Hello
    # hold no slot, two players are welcomed next to them, and the third Hello gets
    # Error{LIMIT_EXCEEDED, fatal} echoing its request_id and is closed. A slot freed by a leaving
    # player is taken by the next Hello, here one of the quiet connections (a long hello timeout:
    # none is cut by the clock meanwhile).
    d = ct.Daemon(["--max-clients", "2", "--hello-timeout-ms", "60000"], http=True,
                  world=open_world())
    quiet = [d.client() for _ in range(5)]
    b = d.client()
    b.hello()
    a = d.client()
    a.hello()
    over = d.client()
    over.send(ct.msg_hello(7))
    msgs = over.wait_closed()
    check(len(msgs) == 1 and kind_of(msgs[0]) == "error" and
          msgs[0].error.code == ct.code_of("LIMIT_EXCEEDED") and msgs[0].error.fatal and
          msgs[0].request_id == 7 and "server full: 2 clients" in msgs[0].error.message,
          "the 3rd Hello at --max-clients 2 must get exactly Error{LIMIT_EXCEEDED, fatal, "
          "request_id 7, 'server full: 2 clients'} and be closed, got %s" %
          [describe(m) for m in msgs])
    over.close()
    m = d.metrics()
    check(ct.metric(m, "collide_disconnects_total", reason="server_full") == 1,
          "the refusal must count as reason=server_full")
    check(ct.metric(m, "collide_clients_pending") == 5, "the 5 quiet connections are pending")
    check(d.wait_log(r"\bevent=client_refused\b"), "event=client_refused must be logged")
    a.close()
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    n = quiet.pop()
    while True:
        sm = hello_reply(n)
        if kind_of(sm) == "welcome":
            break
        n.close()
        check(time.monotonic() < deadline, "the slot of a client that left must be taken by "
              "the next Hello: %s" % describe(sm))
        time.sleep(0.1)
        n = d.client()
    # Full again: the refusals before left no slot behind.
    over = quiet.pop()
    over.send(ct.msg_hello(8))
    msgs = over.wait_closed()
    check(msgs and kind_of(msgs[0]) == "error" and
          msgs[0].error.code == ct.code_of("LIMIT_EXCEEDED"),
          "with 2 clients again at --max-clients 2 the next Hello must be refused, got %s" %
          [describe(m) for m in msgs])
    for q in quiet:
        r, _, _ = select.select([q.sock], [], [], 0.1)
        check(not r, "a quiet connection must be left open (it holds no --max-clients slot)")
        q.close()
    over.close()
    b.assert_open("a client within --max-clients")
    n.assert_open("the client that took the freed slot")
    b.close()
    n.close()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# --admin-reserved-bodies


@test
def players_cannot_fill_the_slots_kept_for_admins():
    # Issue 12: players alone filled the world's capacity, and an admin's static spawn was then
    # refused. With --max-bodies 40 and --admin-reserved-bodies 8, players stop at 32 bodies with a
    # non-fatal LIMIT_EXCEEDED; the admin then spawns the last 8, and meets the capacity itself.
    d, admin = ct.daemon_with_admin(["--max-bodies", "40", "--admin-reserved-bodies", "8",
                                     "--max-bodies-per-client", "100"])
    player = d.client()
    player.hello()
    for i in range(32):
        player.spawn_ok(ct.box(1, 1), -300 + 4 * i, 0)
    rid = player.rid()
    player.send(ct.msg_spawn(rid, ct.box(1, 1), 0, 50))
    sm = player.expect_error(rid, "LIMIT_EXCEEDED", "a player's spawn into the admins' reserve",
                             fatal=False)
    check("admin" in sm.error.message, "the refusal must say the slots are kept for admins: %r"
          % sm.error.message)
    for i in range(8):
        admin.spawn_ok(ct.box(1, 1), -300 + 4 * i, 100, kind=ct.pb.BODY_KIND_STATIC)
    rid = admin.rid()
    admin.send(ct.msg_spawn(rid, ct.box(1, 1), 0, 200, kind=ct.pb.BODY_KIND_STATIC))
    admin.expect_error(rid, "LIMIT_EXCEEDED", "an admin's spawn past the world's capacity",
                       fatal=False)
    player.close()
    admin.close()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# IPv6 and binding


@test
def ipv6_any_serves_game_and_http_on_loopback():
    if not ct.ipv6_loopback_available():
        print("NOTE ipv6_any_serves_game_and_http_on_loopback: no IPv6 loopback; checked nothing")
        return
    d = ct.Daemon(bind="::", http=True, world=open_world())
    d.host = "::1"
    ct.full_session(d, "a client on ::1 with --bind ::")
    check(d.wait_log(r"\bevent=client_hello\b.*\baddr=\[::1\]:\d+"),
          "the connection must be logged with its IPv6 peer address [::1]:port")
    status, body = d.http_get("/healthz", host="::1")
    check(status == 200 and body.strip() == "ok", "GET /healthz over [::1] must be 200 ok, got "
          "%d %r" % (status, body))
    m = d.metrics(host="::1")
    check((ct.metric(m, "collide_connections_total") or 0) >= 1,
          "/metrics over [::1] must count the IPv6 connection")
    with open("/proc/sys/net/ipv6/bindv6only") as f:
        v6only = f.read().strip() == "1"
    if not v6only:
        # docs/operations.md: "::" serves IPv4 too where the system maps it.
        ct.full_session(IPv4View(d), "an IPv4 client with --bind ::")
        status, _ = d.http_get("/healthz", host="127.0.0.1")
        check(status == 200, "GET /healthz over IPv4 with --bind :: must be 200, got %d" % status)
    d.stop_and_check()


class IPv4View:
    """The same daemon seen from IPv4 (for full_session, which only needs client())."""

    def __init__(self, d):
        self.d = d

    def client(self, **kw):
        kw["host"] = "127.0.0.1"
        return ct.Client(self.d.game_port, **kw)


@test
def bad_bind_address_refused_at_start():
    for bad in ("notanaddress", "300.1.1.1", "localhost"):
        r = run_collided(["--bind", bad, "--port", "0", "--udp-port", "0", "--http-port", "0"])
        check(r.returncode != 0, "--bind %s must stop the start (non-zero exit), got %d" % (
            bad, r.returncode))
        check(re.search(r"event=bind_error\b.*bad address '%s'" % re.escape(bad), r.stderr),
              "--bind %s: the error must name the address: %r" % (bad, r.stderr[-400:]))
        check("event=listening" not in r.stderr, "--bind %s: must not report listening" % bad)


@test
def port_in_use_refused_at_start():
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        for args, what in ((["--port", str(port), "--http-port", "0"], "game"),
                           (["--port", "0", "--udp-port", "0", "--http-port", str(port)], "HTTP")):
            r = run_collided(["--bind", "127.0.0.1"] + args)
            # docs/operations.md: exit 1 when a port could not be bound.
            check(r.returncode == 1, "the %s port in use must exit 1, got %d" % (
                what, r.returncode))
            check(re.search(r"event=bind_error\b.*port %d: address already in use" % port,
                            r.stderr),
                  "the %s port in use must be named with the reason: %r" % (
                      what, r.stderr[-400:]))
            check("event=listening" not in r.stderr, "must not report listening")
    finally:
        holder.close()


# ---------------------------------------------------------------------------------------------
# A second signal during a drain (docs/operations.md: "A second signal during the drain changes
# nothing")


@test
def second_signal_during_drain_changes_nothing():
    drain_s = 2.0
    d = ct.Daemon(["--rate-limit", "1000000", "--max-queued-bytes", "8388608",
                   "--drain-timeout-ms", "2000"], http=True, world=open_world())
    # A client that never reads while ~30,000 Pongs are owed: far more than the kernel buffers
    # hold, so the drain cannot flush it and must wait for --drain-timeout-ms.
    hog = d.client(rcvbuf=4096)
    hog.hello(name="hog")
    n = 30000
    batch = b"".join(ct.encode(ct.msg_ping(0, 123456789)) for _ in range(1000))
    for _ in range(n // 1000):
        hog.send_raw(batch)
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while (ct.metric(d.metrics(), "collide_frames_in_total") or 0) < n + 1:
        check(time.monotonic() < deadline, "the daemon did not read the %d pings" % n)
        time.sleep(0.1)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    check(d.wait_log(r"\bevent=shutdown\b"), "event=shutdown must be logged")
    for at, sig in ((0.5 * drain_s, signal.SIGTERM), (0.6 * drain_s, signal.SIGINT)):
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        check(d.alive(), "collided exited %.2f s after the first signal, before "
              "--drain-timeout-ms 2000 (signals after the first must change nothing)" % (
                  time.monotonic() - t0))
        d.proc.send_signal(sig)
    time.sleep(max(0.0, t0 + 0.9 * drain_s - time.monotonic()))
    check(d.alive(), "a second signal must not end the drain early: collided exited %.2f s after "
          "the first, before --drain-timeout-ms 2000" % (time.monotonic() - t0))
    check("event=drain_timeout" not in d.log_text(), "a second signal must not cut the clients")
    try:
        rc = d.proc.wait(ct.EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ct.TestFailure("collided still running %ss after the drain timeout" %
                             ct.EXIT_TIMEOUT)
    took = time.monotonic() - t0
    d.reader.join(5)
    check(rc == 0, "exit status after a drain with a second signal must be 0, got %d" % rc)
    check(took >= 0.99 * drain_s, "the drain ended %.2f s after the first signal, before "
          "--drain-timeout-ms" % took)
    # Had the second signal restarted the drain clock, the end would come 1 s later than this.
    check(took < drain_s + 0.9, "the drain ended %.2f s after the first signal: the second "
          "signal must not restart --drain-timeout-ms 2000" % took)
    log = d.log_text()
    check(len(re.findall(r"\bevent=shutdown\b", log)) == 1,
          "the drain starts once: event=shutdown logged %d times" % len(
              re.findall(r"\bevent=shutdown\b", log)))
    check("event=drain_timeout" in log, "the hog must be cut by the drain timeout, logged")
    check(not d.sanitizer_reports(), "sanitizer: %s" % d.sanitizer_reports()[:5])
    hog.close()


# ---------------------------------------------------------------------------------------------
# World files through --world


def raw_world_file(doc_text):
    fd, path = tempfile.mkstemp(prefix="collide-itest-world-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write(doc_text)
    ct._TEMP_FILES.append(path)
    return path


@test
def world_without_statics_key_is_accepted():
    path = raw_world_file(json.dumps({"bounds": {"min": [-100, -100], "max": [100, 100]},
                                      "spawn_points": [[0, 0]]}))
    d = ct.Daemon(world=path)
    check(d.wait_log(r"\bevent=listening\b.*\bstatics=0\b"), "no statics key: 0 statics")
    c = d.client()
    w = c.hello()
    check((w.world_min.x, w.world_max.y) == (-100, 100), "the file's bounds: %s" % w)
    c.close()
    ct.full_session(d, "a world without statics")
    d.stop_and_check()


@test
def world_with_overlapping_statics_is_accepted():
    # Statics overlapping each other are accepted (walls meeting, a floor tiled with overlaps):
    # statics never move, so nothing resolves them; both are in the world and in snapshots.
    path = ct.write_world(statics=[(0, 50, {"box": {"half_extents": [20, 5]}}),
                                   (10, 52, {"box": {"half_extents": [20, 5]}}),
                                   (5, 50, {"circle": {"radius": 4}})])
    d = ct.Daemon(world=path)
    check(d.wait_log(r"\bevent=listening\b.*\bstatics=3\b"),
          "three overlapping statics must all be loaded: %s" % d.log_tail(5))
    c = d.client()
    c.hello()
    c.send(ct.msg_set_view(c.rid(), 0, 50, 100, 100))
    c.recv_until(lambda m: snap(m) and sum(1 for s in c.view.values()
                                           if s.get("kind") == ct.pb.BODY_KIND_STATIC) == 3,
                 what="the three overlapping statics in a snapshot")
    got = sorted((round(s["x"], 3), round(s["y"], 3)) for s in c.view.values())
    check(got == [(0, 50), (5, 50), (10, 52)], "statics stay where the file puts them: %s" % got)
    c.close()
    d.stop_and_check()


@test
def world_file_over_the_size_limit_is_refused():
    # One byte past the limit, as a sparse file: refused from its size alone, exit 1, with the file
    # and the reason. (Exactly at the limit is accepted: tests/world/test_world_load.c.)
    fd, path = tempfile.mkstemp(prefix="collide-itest-world-", suffix=".json")
    ct._TEMP_FILES.append(path)
    os.ftruncate(fd, WORLD_MAX_FILE_BYTES + 1)
    os.close(fd)
    r = run_collided(["--world", path, "--port", "0", "--udp-port", "0", "--http-port", "0"])
    check(r.returncode == 1, "a world file past 64 MiB must exit 1, got %d" % r.returncode)
    check("%s:0:0: larger than %d bytes" % (path, WORLD_MAX_FILE_BYTES) in r.stderr,
          "the refusal must name the file and the limit: %r" % r.stderr[-400:])
    check("event=world_error" in r.stderr, "event=world_error must be logged")


# ---------------------------------------------------------------------------------------------
# View extent (--max-view-extent, default 1000: a non-admin view box at most that wide and tall)


def set_view_replies(c, cx, cy, hx, hy):
    """SetView then Ping: the non-snapshot messages that came before the Pong (replies are in
    request order, so any answer to the SetView is among them)."""
    c.send(ct.msg_set_view(c.rid(), cx, cy, hx, hy))
    ping = c.rid()
    c.send(ct.msg_ping(ping, 1))
    before = []
    c.reply(ping, keep=before)
    return [m for m in before if not snap(m)]


def statics_in_view(c):
    return sorted((round(s["x"]), round(s["y"])) for s in c.view.values()
                  if s.get("kind") == ct.pb.BODY_KIND_STATIC)


@test
def view_wider_than_max_view_extent_refused_and_old_view_kept():
    box = {"box": {"half_extents": [2, 2]}}
    d = ct.Daemon(["--admin-token", "adm1n"],
                  world=ct.write_world(statics=[(-300, 0, box), (300, 0, box), (900, 900, box)]))
    c = d.client()
    c.hello()
    check(not set_view_replies(c, -300, 0, 50, 50), "a small view must be accepted")
    c.recv_until(lambda m: snap(m) and statics_in_view(c) == [(-300, 0)], what="the west static")
    for hx, hy in ((500.5, 10), (10, 500.5), (1e6, 1e6)):
        got = set_view_replies(c, 0, 0, hx, hy)
        check(len(got) == 1 and kind_of(got[0]) == "error" and
              got[0].error.code == ct.code_of("LIMIT_EXCEEDED") and not got[0].error.fatal,
              "a view of %g x %g must be refused with a non-fatal LIMIT_EXCEEDED: %s" % (
                  2 * hx, 2 * hy, [describe(m) for m in got]))
        check("--max-view-extent" in got[0].error.message and "1000" in got[0].error.message,
              "the refusal must name the limit: %r" % got[0].error.message)
    # The old view stays: the west static is still known, nothing was removed or added.
    c.sync()
    check(statics_in_view(c) == [(-300, 0)], "the old view must stay: %s" % statics_in_view(c))
    # Exactly the cap (the whole default arena's size) is allowed.
    check(not set_view_replies(c, 0, 0, 500, 500), "a view of 1000 x 1000 must be accepted")
    c.recv_until(lambda m: snap(m) and statics_in_view(c) == [(-300, 0), (300, 0)],
                 what="both statics in a 1000-wide view")
    # Admins are not capped.
    admin = d.client()
    admin.hello(token="adm1n")
    check(not set_view_replies(admin, 0, 0, 1000, 1000), "an admin's view is not capped")
    admin.recv_until(lambda m: snap(m) and len(statics_in_view(admin)) == 3,
                     what="every static in an admin's whole-world view")
    c.close()
    admin.close()
    d.stop_and_check()


@test
def max_view_extent_from_the_environment():
    d = ct.Daemon(env_extra={"COLLIDE_MAX_VIEW_EXTENT": "200"}, world=open_world())
    c = d.client()
    c.hello()
    got = set_view_replies(c, 0, 0, 100.5, 1)
    check(len(got) == 1 and got[0].error.code == ct.code_of("LIMIT_EXCEEDED") and
          "200" in got[0].error.message, "201 wide must be refused under a cap of 200: %s" % [
              describe(m) for m in got])
    check(not set_view_replies(c, 0, 0, 100, 100), "200 x 200 must be accepted")
    c.close()
    d.stop_and_check()

if __name__ == "__main__":
    ct.main()

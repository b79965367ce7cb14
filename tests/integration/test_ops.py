#!/usr/bin/env python3
"""Operations surface: SIGTERM/SIGINT drain (Goodbye to all, exit 0, event=shutdown), /healthz and
/metrics (Prometheus text, the metric names of the interfaces note, counters that move)."""

import os
import re
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


def snap(m):
    return kind_of(m) == "snapshot"


def two_statics():
    return ct.write_world(statics=[(900, 900, {"box": {"half_extents": [10, 10]}}),
                                   (-900, 900, {"circle": {"radius": 5}})])


def drain(d, sig):
    clients = []
    for i in range(5):
        c = d.client()
        c.hello(name="c%d" % i)
        if i < 3:
            c.spawn_ok(ct.box(1, 1), 20 * i, 0)
        clients.append(c)
    mid_frame = d.client()
    mid_frame.hello(name="mid-frame")
    mid_frame.send_raw(ct.encode(ct.msg_ping(5))[:2])
    no_hello = d.client()
    for c in clients:
        c.recv_until(snap, what="a snapshot before the drain")
    check(d.alive(), "daemon alive before %s" % sig)
    d.proc.send_signal(sig)
    shutting_down_seen = 0
    for i, c in enumerate(clients + [mid_frame]):
        msgs = c.wait_closed(timeout=ct.EXIT_TIMEOUT)
        rest = [m for m in msgs if not snap(m)]
        check(rest and kind_of(rest[-1]) == "goodbye",
              "client %d must get Goodbye before the close on %s, got %s" % (
                  i, sig, [describe(m) for m in rest]))
        for m in rest[:-1]:
            check(kind_of(m) == "error" and m.error.code == ct.code_of("SHUTTING_DOWN"),
                  "only SHUTTING_DOWN may precede Goodbye in a drain: %s" % describe(m))
            shutting_down_seen += 1
        c.close()
    msgs = no_hello.wait_closed(timeout=ct.EXIT_TIMEOUT)
    check(all(kind_of(m) in ("goodbye", "error") for m in msgs),
          "a connection without Hello gets at most Goodbye/SHUTTING_DOWN: %s" % [
              describe(m) for m in msgs])
    no_hello.close()
    try:
        d.proc.wait(ct.EXIT_TIMEOUT)
    except Exception:
        raise ct.TestFailure("collided did not exit within %ss of %s" % (ct.EXIT_TIMEOUT, sig))
    d.reader.join(5)
    check(d.proc.returncode == 0, "exit status on %s must be 0, got %d\n%s" % (
        sig, d.proc.returncode, d.log_tail()))
    check(d.wait_log(r"\bevent=shutdown\b", 1.0), "event=shutdown must be logged on %s" % sig)
    check(not d.sanitizer_reports(), "sanitizer: %s" % d.sanitizer_reports()[:5])


@test
def sigterm_drain():
    d = ct.Daemon(world=two_statics())
    drain(d, signal.SIGTERM)


@test
def sigint_drain():
    d = ct.Daemon(world=two_statics())
    drain(d, signal.SIGINT)


@test
def requests_during_drain_get_shutting_down_or_goodbye():
    # A client that keeps sending while the daemon drains: every reply is a normal reply,
    # SHUTTING_DOWN, or the Goodbye that ends it; nothing after the Goodbye.
    d = ct.Daemon(world=two_statics())
    c = d.client()
    c.hello()
    c.send(*[ct.msg_spawn(10 + i, ct.circle(1), 10 * i, 0) for i in range(4)])
    d.proc.send_signal(signal.SIGTERM)
    try:
        for i in range(20):
            c.send(ct.msg_ping(100 + i))
    except OSError:
        pass
    msgs = [m for m in c.wait_closed(timeout=ct.EXIT_TIMEOUT) if not snap(m)]
    kinds = [kind_of(m) for m in msgs]
    check("goodbye" in kinds, "Goodbye expected in a drain, got %s" % [describe(m) for m in msgs])
    check(kinds.index("goodbye") == len(kinds) - 1, "nothing may follow Goodbye: %s" % [
        describe(m) for m in msgs])
    for m in msgs:
        if kind_of(m) == "error":
            check(m.error.code == ct.code_of("SHUTTING_DOWN"),
                  "only SHUTTING_DOWN errors in a drain: %s" % describe(m))
    rc = d.proc.wait(ct.EXIT_TIMEOUT)
    check(rc == 0, "exit 0 after the drain, got %d" % rc)
    c.close()


@test
def healthz_and_http_robustness():
    d = ct.Daemon(http=True, world=two_statics())
    check(getattr(d, "logged_http_port", None) == d.http_port, "event=listening must log http_port=%d, got %s" % (
        d.http_port, getattr(d, "logged_http_port", None)))
    status, body = d.http_get("/healthz")
    check(status == 200 and body.strip() == "ok", "GET /healthz must be 200 ok, got %d %r" % (
        status, body))
    status, _ = d.http_get("/no-such-path")
    check(status == 404, "an unknown path must be 404, got %d" % status)
    # An idle HTTP connection, garbage, and an oversized request must not stall or kill anything.
    idle = socket.create_connection(("127.0.0.1", d.http_port), timeout=5)
    for payload in (b"GARBAGE\r\n\r\n", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
                    b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"y" * 50000 + b"\r\n\r\n",
                    b"\x00\xff" * 100):
        s = socket.create_connection(("127.0.0.1", d.http_port), timeout=ct.REPLY_TIMEOUT)
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            got = b""
            while len(got) < 1 << 20:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except OSError:
            got = b""
        s.close()
        check(not got or got.startswith(b"HTTP/1.") and b" 200 " not in got.split(b"\r\n")[0],
              "a bad HTTP request must be refused (4xx) or closed, got %r" % got[:80])
    status, body = d.http_get("/healthz")
    check(status == 200, "/healthz after bad HTTP input must be 200, got %d" % status)
    idle.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def http_connection_and_timeout_bounds():
    # --http-max-connections and --http-timeout-ms, crossed: a connection over the cap is admitted
    # and answered, the oldest silent one is evicted for it, the rest are closed at the timeout,
    # and the endpoint serves again afterwards.
    d = ct.Daemon(["--http-max-connections", "2", "--http-timeout-ms", "3000"], http=True,
                  world=two_statics())
    idle = [socket.create_connection(("127.0.0.1", d.http_port), timeout=10) for _ in range(2)]
    time.sleep(0.3)  # both accepted
    over = socket.create_connection(("127.0.0.1", d.http_port), timeout=10)
    try:
        over.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        got = over.recv(4096)
    except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, socket.timeout):
        got = b""
    over.close()
    check(got.startswith(b"HTTP/1.1 200"), "a third HTTP connection over --http-max-connections 2 "
          "must be admitted and answered, got %r" % got[:80])
    oldest = idle.pop(0)
    oldest.settimeout(1.0)  # well inside the 3 s timeout: only the eviction can have closed it
    try:
        evicted = oldest.recv(4096) == b""
    except (ConnectionResetError, ConnectionAbortedError):
        evicted = True
    except socket.timeout:
        evicted = False
    oldest.close()
    check(evicted, "the oldest silent HTTP connection must be evicted for the newcomer")
    t0 = time.monotonic()
    for s in idle:
        try:
            closed = s.recv(4096) == b""
        except (ConnectionResetError, ConnectionAbortedError):
            closed = True
        except socket.timeout:
            closed = False
        check(closed, "an idle HTTP connection must be closed by the server at the timeout")
        s.close()
    waited = time.monotonic() - t0
    check(waited < 8, "idle HTTP connections must be closed near --http-timeout-ms 3000, took "
          "%.1f s" % waited)
    status, body = d.http_get("/healthz")
    check(status == 200, "/healthz after the bounds were crossed must be 200, got %d" % status)
    d.stop_and_check()


@test
def raises_its_open_file_limit_to_fit_max_clients():
    # Each connection is a descriptor: started with a soft limit of 256, collided raises its own
    # soft limit to --max-clients + 4 x --max-pending (a burst may hold 4x the cap during the
    # eviction grace) + 64 refusing + 64 (no HTTP port here) when the hard limit allows it.
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2000 + 4 * 500 + 64 + 64
    if hard != resource.RLIM_INFINITY and hard < want:
        print("SKIP-PART: hard open-file limit %d below %d" % (hard, want))
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        d = ct.Daemon(["--max-clients", "2000", "--max-pending", "500"], world=two_statics())
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    limits = open("/proc/%d/limits" % d.proc.pid).read()
    line = [l for l in limits.splitlines() if l.startswith("Max open files")][0]
    check(int(line.split()[3]) >= want, "soft open-file limit must be raised to >= %d: %s" % (
        want, line))
    d.stop_and_check()


REQUIRED = {
    "collide_tick_duration_seconds": "histogram",
    "collide_ticks_total": "counter",
    "collide_ticks_skipped_total": "counter",
    "collide_clients": "gauge",
    "collide_clients_pending": "gauge",
    "collide_bodies": "gauge",
    "collide_connections_total": "counter",
    "collide_disconnects_total": "counter",
    "collide_frames_in_total": "counter",
    "collide_frames_out_total": "counter",
    "collide_bytes_in_total": "counter",
    "collide_bytes_out_total": "counter",
    "collide_errors_total": "counter",
    "collide_slow_client_drops_total": "counter",
    "collide_slow_client_disconnects_total": "counter",
    "collide_events_total": "counter",
    "collide_log_lines_dropped_total": "counter",
    "collide_body_slots_retired": "gauge",
    "collide_body_ids_left": "gauge",
    "collide_steps_late_total": "counter",
    "collide_steps_coalesced_total": "counter",
    "collide_tick_lag_seconds": "histogram",
    "collide_snapshots_sent_total": "counter",
    "collide_capacity_refusals_total": "counter",
    "collide_overloaded": "gauge",
    "collide_http_closed_total": "counter",
}


def family_present(m, name, typ):
    # Counters may be declared with or without the _total suffix in the TYPE line (OpenMetrics
    # style); accept both.
    declared = m["types"].get(name) or m["types"].get(name[:-len("_total")]
                                                      if name.endswith("_total") else name)
    return declared == typ


@test
def metrics_names_parse_and_move():
    d = ct.Daemon(["--admin-token", "adm1n"], http=True, world=two_statics())
    m0 = d.metrics()
    for name, typ in REQUIRED.items():
        check(family_present(m0, name, typ), "/metrics must declare %s as a %s (TYPE line); "
              "types seen: %s" % (name, typ, sorted(m0["types"])[:40]))
    for name in REQUIRED:
        if name in ("collide_tick_duration_seconds", "collide_tick_lag_seconds",
                    "collide_disconnects_total", "collide_errors_total",
                    "collide_http_closed_total"):
            continue
        check(ct.metric(m0, name) is not None, "/metrics must have a sample of %s" % name)
    check(ct.metric(m0, "collide_bodies", kind="static") == 2,
          "collide_bodies{kind=\"static\"} must be the world file's 2 statics, got %s" %
          ct.metric(m0, "collide_bodies", kind="static"))
    check(ct.metric(m0, "collide_bodies", kind="moving") == 0, "no moving bodies yet")
    check(ct.metric(m0, "collide_clients") == 0, "no clients yet")
    # The body-id space of the default 65536 bodies: 16 bits of slot, generations 1..65535, less
    # the 2 statics' spawns.
    check(ct.metric(m0, "collide_body_slots_retired") == 0, "no slot retired yet")
    check(ct.metric(m0, "collide_body_ids_left") == 65536 * 65535 - 2,
          "collide_body_ids_left must be 65536 x 65535 - 2 statics, got %s"
          % ct.metric(m0, "collide_body_ids_left"))
    check(ct.metric(m0, "collide_log_lines_dropped_total") == 0, "no log line dropped")
    # Histogram: cumulative buckets ending in +Inf equal to _count, and a _sum.
    buckets = [(l["le"], v) for n, l, v in m0["samples"]
               if n == "collide_tick_duration_seconds_bucket"]
    check(buckets and buckets[-1][0] == "+Inf", "histogram buckets must end with le=\"+Inf\"")
    values = [v for _, v in buckets]
    check(values == sorted(values), "histogram buckets must be cumulative: %s" % buckets)
    count = ct.metric(m0, "collide_tick_duration_seconds_count")
    check(count is not None and count == values[-1], "_count must equal the +Inf bucket")
    check(ct.metric(m0, "collide_tick_duration_seconds_sum") is not None, "_sum required")
    les = [float(le) for le, _ in buckets]
    check(les == sorted(les), "bucket bounds must increase")

    # Traffic: 2 clients, 10 pings, 1 spawn, 2 NOT_FOUND, 1 INVALID_SHAPE, 1 UNAUTHENTICATED.
    sent_frames = 0
    sent_bytes = 0
    a = d.client()
    a.hello()
    b = d.client()
    b.hello(token="adm1n")
    sent_frames += 2
    sent_bytes += len(ct.encode(ct.msg_hello(1))) + len(ct.encode(ct.msg_hello(1, token="adm1n")))
    for i in range(10):
        a.ping(i)
        sent_frames += 1
        sent_bytes += 4
    a.spawn_ok(ct.box(1, 1), 0, 0)
    sent_frames += 1
    for i in range(2):
        rid = a.rid()
        a.send(ct.msg_despawn(rid, 99999999))
        a.expect_error(rid, "NOT_FOUND", "despawn unknown")
        sent_frames += 2  # the despawn and expect_error's ping
    rid = a.rid()
    a.send(ct.msg_spawn(rid, ct.circle(0), 0, 0))
    a.expect_error(rid, "INVALID_SHAPE", "zero radius")
    sent_frames += 2
    u = d.client()
    u.send(ct.msg_ping(3))
    u.expect_error(3, "UNAUTHENTICATED", "ping first", fatal=True)
    u.close()
    sent_frames += 1
    a.sync()
    time.sleep(0.5)
    m1 = d.metrics()
    check(ct.metric(m1, "collide_body_ids_left") == ct.metric(m0, "collide_body_ids_left") - 1,
          "one spawn must use one id: collide_body_ids_left %s then %s"
          % (ct.metric(m0, "collide_body_ids_left"), ct.metric(m1, "collide_body_ids_left")))

    def delta(name, **labels):
        return (ct.metric(m1, name, **labels) or 0) - (ct.metric(m0, name, **labels) or 0)

    check(delta("collide_frames_in_total") >= sent_frames,
          "collide_frames_in_total must count every frame in: +%g < %d" % (
              delta("collide_frames_in_total"), sent_frames))
    check(delta("collide_bytes_in_total") >= sent_bytes, "collide_bytes_in_total must grow")
    check(delta("collide_frames_out_total") >= 15, "collide_frames_out_total must grow")
    check(delta("collide_bytes_out_total") > 100, "collide_bytes_out_total must grow")
    for code, n in (("NOT_FOUND", 2), ("INVALID_SHAPE", 1), ("UNAUTHENTICATED", 1)):
        check(delta("collide_errors_total", code=code) == n,
              "collide_errors_total{code=\"%s\"} must grow by %d, grew by %g" % (
                  code, n, delta("collide_errors_total", code=code)))
    check(delta("collide_errors_total", code="RATE_LIMITED") == 0, "no RATE_LIMITED")
    check(delta("collide_connections_total") == 3, "3 connections, counted %g" %
          delta("collide_connections_total"))
    check(ct.metric(m1, "collide_clients") == 2, "collide_clients must be 2, got %s" %
          ct.metric(m1, "collide_clients"))
    check(ct.metric(m1, "collide_bodies", kind="moving") == 1, "one moving body")
    check(delta("collide_ticks_total") > 0, "collide_ticks_total must grow")
    check(delta("collide_tick_duration_seconds_count") > 0, "tick histogram must observe ticks")
    check(delta("collide_disconnects_total") >= 1, "the UNAUTHENTICATED close is a disconnect")
    for n, labels, v in m1["samples"]:
        if n == "collide_errors_total":
            check("code" in labels and ("ERROR_CODE_" + labels["code"]) in
                  ct.pb.ErrorCode.keys(), "errors_total code label must be an ErrorCode name "
                  "without the prefix: %s" % labels)
        if n == "collide_disconnects_total":
            check("reason" in labels, "disconnects_total needs a reason label")
    # Ticks advance at about the tick rate.
    t0 = time.monotonic()
    k0 = ct.metric(d.metrics(), "collide_ticks_total")
    time.sleep(1.5)
    k1 = ct.metric(d.metrics(), "collide_ticks_total")
    rate = (k1 - k0) / (time.monotonic() - t0)
    check(20 <= rate <= 120, "collide_ticks_total must advance at ~60/s, got %.1f/s" % rate)
    a.close()
    b.close()
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while ct.metric(d.metrics(), "collide_clients") != 0:
        check(time.monotonic() < deadline, "collide_clients must return to 0")
        time.sleep(0.1)
    ct.full_session(d)
    d.stop_and_check()


def run_collided(args, env_extra=None, timeout=ct.START_TIMEOUT):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLIDE_")}
    env.update(env_extra or {})
    if "--ws-port" not in args:  # on by default (7778): off, so parallel daemons do not clash
        args = args + ["--ws-port", "0"]
    return subprocess.run([ct.OPTS.collided] + args, env=env, capture_output=True, text=True,
                          timeout=timeout)


@test
def help_version_and_bad_configuration():
    r = run_collided(["--help"])
    check(r.returncode == 0, "--help must exit 0, got %d" % r.returncode)
    text = r.stdout + r.stderr
    for flag, env in (("--bind", "COLLIDE_BIND"), ("--port", "COLLIDE_PORT"),
                      ("--http-port", "COLLIDE_HTTP_PORT"), ("--world", "COLLIDE_WORLD"),
                      ("--tick-rate", "COLLIDE_TICK_RATE"), ("--max-speed", "COLLIDE_MAX_SPEED"),
                      ("--token", "COLLIDE_TOKEN"), ("--admin-token", "COLLIDE_ADMIN_TOKEN"),
                      ("--max-clients", "COLLIDE_MAX_CLIENTS"),
                      ("--max-pending", "COLLIDE_MAX_PENDING"),
                      ("--max-pending-per-address", "COLLIDE_MAX_PENDING_PER_ADDRESS"),
                      ("--log-level", "COLLIDE_LOG_LEVEL"), ("--max-frame", "COLLIDE_MAX_FRAME"),
                      ("--max-bodies-per-client", "COLLIDE_MAX_BODIES_PER_CLIENT"),
                      ("--max-bodies", "COLLIDE_MAX_BODIES"), ("--rate-limit", "COLLIDE_RATE_LIMIT"),
                      ("--max-queued-bytes", "COLLIDE_MAX_QUEUED_BYTES"),
                      ("--hello-timeout-ms", "COLLIDE_HELLO_TIMEOUT_MS"),
                      ("--view-radius", "COLLIDE_VIEW_RADIUS"),
                      ("--max-view-extent", "COLLIDE_MAX_VIEW_EXTENT"),
                      ("--http-bind", "COLLIDE_HTTP_BIND"),
                      ("--http-max-per-address", "COLLIDE_HTTP_MAX_PER_ADDRESS")):
        check(flag in text and env in text, "--help must document %s (%s)" % (flag, env))
    r = run_collided(["--version"])
    check(r.returncode == 0 and "0.1.0" in r.stdout + r.stderr,
          "--version must exit 0 and print the version, got %d %r" % (r.returncode, r.stdout))
    for args in (["--no-such-flag"], ["--port", "notanumber"], ["--tick-rate", "0"],
                 ["--max-speed", "nan"], ["--log-level", "loud"], ["--max-pending", "0"],
                 ["--max-pending-per-address", "0"]):
        r = run_collided(args + ["--port", "0", "--udp-port", "0", "--http-port", "0"])
        check(r.returncode != 0, "%s must be refused at start (non-zero exit), got %d" % (
            args, r.returncode))
    # A bad world file is refused with the file, the place and the reason.
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write('{ "bounds": { "min": [-10, -10], "max": [10, 10] },\n  "statics": [ { "position": '
                '[0, 0], "circle": { "radius": -1 } } ] }\n')
    try:
        r = run_collided(["--world", path, "--port", "0", "--udp-port", "0", "--http-port", "0"])
        check(r.returncode != 0, "a world file with a negative radius must be refused")
        check(os.path.basename(path) in r.stderr and re.search(r":\d+", r.stderr),
              "the refusal must name the file and the place: %r" % r.stderr[-300:])
        r = run_collided(["--world", path + ".missing", "--port", "0", "--udp-port", "0", "--http-port", "0"])
        check(r.returncode != 0, "a missing world file must be refused")
    finally:
        os.unlink(path)


@test
def configuration_from_environment():
    d = ct.Daemon(env_extra={"COLLIDE_TICK_RATE": "30", "COLLIDE_MAX_SPEED": "123",
                             "COLLIDE_MAX_BODIES_PER_CLIENT": "3", "COLLIDE_TOKEN": "envtok",
                             "COLLIDE_ADMIN_TOKEN": "envadm"}, world=two_statics())
    c = d.client()
    c.send(ct.msg_hello(1))
    c.expect_error(1, "UNAUTHENTICATED", "COLLIDE_TOKEN from the environment", fatal=True)
    c.close()
    c = d.client()
    w = c.hello(token="envtok")
    check((w.tick_rate_hz, w.max_speed, w.max_bodies_per_client) == (30, 123, 3),
          "COLLIDE_TICK_RATE/MAX_SPEED/MAX_BODIES_PER_CLIENT must configure the daemon: %s" % w)
    c.close()
    c = d.client()
    check(c.hello(token="envadm").admin, "COLLIDE_ADMIN_TOKEN must make an admin")
    c.close()
    d.stop_and_check()


@test
def ipv6_listener():
    if not ct.ipv6_loopback_available():
        print("NOTE ipv6_listener: no IPv6 loopback on this machine; checked nothing")
        return
    d = ct.Daemon(bind="::1", world=two_statics())
    ct.full_session(d, "a client over IPv6")
    d.stop_and_check()


@test
def rooms_endpoint_and_room_series():
    """GET /rooms lists the one room `default` with its real figures (welcomed clients, not the
    connection that has not said Hello; statics and moving bodies; the world's tick as snapshots
    carry it), and /metrics' collide_room_* series for room="default" agree with the daemon-wide
    ones of the same scrape."""
    import json
    d = ct.Daemon(http=True, world=two_statics())
    silent = d.client()  # connected, no Hello: in no room yet
    a = d.client()
    a.hello()
    b = d.client()
    b.hello(name="b")
    a.spawn_ok(ct.box(1, 1), 0, 0)
    b.spawn_ok(ct.box(1, 1), 50, 0)
    b.spawn_ok(ct.circle(1), 100, 0)
    a.sync()
    before = a.last_tick
    status, text = d.http_get("/rooms")
    check(status == 200, "GET /rooms must be 200, got %d" % status)
    a.sync()
    after = a.last_tick
    doc = json.loads(text)
    check(isinstance(doc.get("rooms"), list) and len(doc["rooms"]) == 1,
          "/rooms must list exactly the room default: %s" % text)
    check(doc.get("total") == 1 and doc.get("truncated") is False, "total 1, not truncated: %s"
          % text)
    r = doc["rooms"][0]
    check(set(r) == {"name", "clients", "bodies", "tick", "auto", "tick_p99_ms"},
          "a room's fields are name, clients, bodies, tick, auto, tick_p99_ms: %s" % r)
    check(r["name"] == "default" and r["auto"] is False, "the room default, not auto: %s" % r)
    check(r["clients"] == 2, "2 welcomed clients (the silent one is in no room): %s" % r)
    check(r["bodies"] == 5, "2 statics + 3 spawned bodies: %s" % r)
    check(isinstance(r["tick"], int) and before <= r["tick"] < after,
          "the room's tick must be the world's: snapshots saw %d before and %d after, /rooms said "
          "%s" % (before, after, r["tick"]))
    check(isinstance(r["tick_p99_ms"], float) and 0 < r["tick_p99_ms"] <= 250,
          "tick_p99_ms from the tick histogram: %s" % r)
    _, text2 = d.http_get("/rooms")
    check(json.loads(text2)["rooms"][0]["tick"] > r["tick"], "the tick must advance: %s then %s"
          % (text, text2))

    m = d.metrics()
    room = {"room": "default"}
    check(ct.metric(m, "collide_room_clients", **room) == 2,
          "collide_room_clients{room=\"default\"} must be 2, got %s"
          % ct.metric(m, "collide_room_clients", **room))
    check(ct.metric(m, "collide_clients") == 3, "collide_clients counts every connection: %s"
          % ct.metric(m, "collide_clients"))
    for kind, n in (("static", 2), ("moving", 3)):
        check(ct.metric(m, "collide_room_bodies", kind=kind, **room) == n ==
              ct.metric(m, "collide_bodies", kind=kind),
              "%s bodies: room %s, daemon %s, want %d" % (
                  kind, ct.metric(m, "collide_room_bodies", kind=kind, **room),
                  ct.metric(m, "collide_bodies", kind=kind), n))
    for name in ("ticks_total", "ticks_skipped_total", "steps_late_total",
                 "steps_coalesced_total", "snapshots_sent_total",
                 "tick_duration_seconds_count", "tick_lag_seconds_count"):
        per_room = ct.metric(m, "collide_room_" + name, **room)
        check(per_room is not None and per_room == ct.metric(m, "collide_" + name),
              "collide_room_%s{room=\"default\"} %s must equal collide_%s %s" % (
                  name, per_room, name, ct.metric(m, "collide_" + name)))
    check(ct.metric(m, "collide_room_ticks_total", **room) > 0, "ticks counted per room")
    for family in ("tick_duration_seconds", "tick_lag_seconds"):
        daemon = [(l["le"], v) for n, l, v in m["samples"]
                  if n == "collide_%s_bucket" % family]
        mine = [(l["le"], v) for n, l, v in m["samples"]
                if n == "collide_room_%s_bucket" % family and l.get("room") == "default"]
        check(daemon and mine == daemon, "collide_room_%s buckets must equal the daemon's: %s vs %s"
              % (family, mine, daemon))
    check(m["types"].get("collide_room_tick_duration_seconds") == "histogram",
          "collide_room_tick_duration_seconds is a histogram")
    rooms = {l.get("room") for n, l, _ in m["samples"] if n.startswith("collide_room_")}
    check(rooms == {"default"}, "one room, no `other` row: %s" % rooms)
    silent.close()
    a.close()
    b.close()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

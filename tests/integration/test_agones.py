#!/usr/bin/env python3
"""collided as an Agones GameServer (issue 18; ARCHITECTURE.md "Scale-out: Agones"), against a
test double of the SDK sidecar (agones_sidecar.py: the published REST paths and bodies; a double
because Kubernetes cannot run here). Each test starts the real daemon with AGONES_SDK_HTTP_PORT
pointing at the double and checks what the double was told, and when."""

import datetime
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agones_sidecar as ag  # noqa: E402
import collide_test as ct  # noqa: E402
from collide_test import check, test  # noqa: E402

COUNTER = "/v1beta1/counters/players"
ADD = "/v1beta1/lists/rooms:addValue"
REMOVE = "/v1beta1/lists/rooms:removeValue"
SYNC_S = 0.2  # NET_AGONES_SYNC_MS: the counter is sent at most this often


def agones_daemon(sidecar_port, args=(), **kw):
    """A daemon told of the sidecar the way Agones tells it: AGONES_SDK_HTTP_PORT in its env."""
    return ct.Daemon(list(args), env_extra={"AGONES_SDK_HTTP_PORT": str(sidecar_port)}, **kw)


def hello_in(d, room, name="p"):
    c = d.client()
    m = ct.msg_hello(1, name=name)
    m.hello.room = room
    c.send(m)
    sm = c.recv_until(lambda m: ct.kind_of(m) != "snapshot", what="the reply to Hello")
    check(ct.kind_of(sm) == "welcome", "Hello to room %s: %s" % (room, ct.describe(sm)))
    return c


def agones_json(d):
    status, text = d.http_get("/rooms")
    check(status == 200, "GET /rooms must be 200, got %d" % status)
    doc = json.loads(text)
    check("agones" in doc, "GET /rooms must carry the agones object: %s" % text[:300])
    return doc


def counter_value(sc):
    return sc.counters["players"]["count"]


@test
def ready_after_every_listener_and_the_world():
    # Fixed ports, so the double can reach the daemon the moment Ready arrives.
    game_port, http_port, sc_port = ct.free_port(), ct.free_port(), ct.free_port()
    sc = ag.Sidecar(sc_port)
    seen = {}

    def on_call(call):
        if call.path != "/ready" or "ready" in seen:
            return
        # While the daemon waits for this answer: the game port must take a player into the
        # room `default` (its world loaded) and the ops port must answer.
        try:
            s = socket.create_connection(("127.0.0.1", game_port), timeout=5)
            s.sendall(ct.encode(ct.msg_hello(1, name="at-ready")))
            s.settimeout(5)
            data = s.recv(65536)
            s.close()
            seen["game"] = len(data) > 0
        except OSError as e:
            seen["game"] = "game port: %s" % e
        try:
            s = socket.create_connection(("127.0.0.1", http_port), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(5)
            seen["http"] = s.recv(4096).startswith(b"HTTP/1.1 200")
            s.close()
        except OSError as e:
            seen["http"] = "ops port: %s" % e
        seen["ready"] = True

    sc.on_call = on_call
    sc.start()
    # 30,000 statics: the room `default` takes a measurable time (about 0.2 s) to build on its
    # thread after the listeners are up, so a Ready sent before the world is loaded shows.
    rng = random.Random(18)
    statics = [(rng.uniform(-990, 990), rng.uniform(-990, 990), {"box": {"half_extents": [1, 1]}})
               for _ in range(30000)]
    d = agones_daemon(sc_port, ["--port", str(game_port), "--http-port", str(http_port)],
                      world=ct.write_world(statics=statics))
    d.http_port = http_port
    check(sc.wait_for(lambda s: s.state == "Ready", ct.REPLY_TIMEOUT, "Ready"),
          "no POST /ready within %ss: %s" % (ct.REPLY_TIMEOUT, sc.all_calls()))
    check(seen.get("game") is True, "at Ready the game port must take a Hello and answer: %s"
          % seen.get("game"))
    check(seen.get("http") is True, "at Ready the ops port must answer /healthz 200: %s"
          % seen.get("http"))
    time.sleep(3 * SYNC_S)
    calls = sc.all_calls()
    readies = [c for c in calls if c.path == "/ready"]
    built = d.wait_log(r"event=room_created\b.*room=default")
    check(built, "the room default must be built")
    built_at = datetime.datetime.strptime(built.split()[0][3:], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    check(readies and readies[0].wall >= built_at - 0.005,
          "Ready must follow the default room's build (its world loaded): Ready %.3f s after it"
          % (readies[0].wall - built_at if readies else float("nan")))
    check(len(readies) == 1 and readies[0].body in (None, {}),
          "exactly one POST /ready {}: %s" % readies)
    first_sync = [c for c in calls if c.path in (COUNTER, ADD, REMOVE)]
    check(first_sync and first_sync[0].t > readies[0].t,
          "the players counter and the rooms list follow Ready: %s" % calls[:8])
    check(d.wait_log(r"event=agones_ready\b"), "Ready accepted must be logged")
    m = d.metrics()
    check(ct.metric(m, "collide_agones_ready") == 1, "collide_agones_ready must be 1")
    check(ct.metric(m, "collide_agones_errors_total") == 0, "no errors with a healthy sidecar")
    d.stop_and_check()
    sc.stop()


@test
def health_every_agones_health_ms():
    period = 0.25
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, ["--agones-health-ms", "250"], http=True, world=ct.write_world())
    check(sc.wait_for(lambda s: len([c for c in s.calls if c.path == "/health"]) >= 2,
                      ct.REPLY_TIMEOUT, "health"), "no POST /health")
    t0 = time.monotonic()
    time.sleep(3.0)
    window = time.monotonic() - t0
    hs = [c for c in sc.calls_to("POST", "/health") if c.t >= t0]
    check(all(c.body in (None, {}) for c in hs), "POST /health carries {}: %s" % hs[:3])
    gaps = [b.t - a.t for a, b in zip(hs, hs[1:])]
    med = statistics.median(gaps)
    check(0.8 * period <= med <= 1.3 * period,
          "the median gap between Health calls must be --agones-health-ms 250 ms: %.0f ms "
          "(gaps %s)" % (med * 1000, [round(g * 1000) for g in gaps]))
    expected = window / period
    check(0.7 * expected <= len(hs) <= 1.2 * expected + 1,
          "%.1f s at 250 ms make about %.0f Health calls, got %d" % (window, expected, len(hs)))
    d.stop_and_check()
    sc.stop()


@test
def sidecar_three_seconds_late():
    late = 3.0
    sc = ag.Sidecar(ct.free_port()).start(delay=late)
    t0 = time.monotonic()
    d = agones_daemon(sc.port, ["--agones-health-ms", "500"], http=True, world=ct.write_world())
    # Meanwhile the game works.
    c = d.client()
    c.hello()
    c.ping()
    check(sc.wait_for(lambda s: s.bound_at is not None, late + ct.REPLY_TIMEOUT, "bound"),
          "the double did not start")
    check(sc.wait_for(lambda s: s.state == "Ready", ct.REPLY_TIMEOUT, "Ready"),
          "no Ready after the sidecar came up: %s\n%s" % (sc.all_calls(), d.log_tail()))
    ready = sc.calls_to("POST", "/ready")
    after = ready[0].t - sc.bound_at
    # The backoff is capped at 1 s: the first attempt after the sidecar is up comes within it.
    check(after < 1.0 + 1.5, "Ready must follow the sidecar's start within the 1 s backoff cap "
          "(and margin): %.2f s" % after)
    check(len(ready) == 1, "one accepted Ready: %s" % ready)
    check(ready[0].t - t0 >= late * 0.95, "Ready before the sidecar was up?")
    check(sc.wait_for(lambda s: counter_value(s) == 1 and "default" in s.lists["rooms"]["values"],
                      ct.REPLY_TIMEOUT, "sync"),
          "the players counter (1) and the rooms list must be sent once it is up: %s" % (
              sc.all_calls()[-6:]))
    errors = ct.metric(d.metrics(), "collide_agones_errors_total")
    check(errors >= 3, "3 s of a missing sidecar must count failed calls: %s" % errors)
    check(d.wait_log(r"event=agones_error\b.*call=ready"), "the failing Ready must be logged")
    check(d.wait_log(r"event=agones_recovered\b.*call=ready"), "the recovery must be logged")
    c.ping()
    d.stop_and_check()
    sc.stop()


@test
def sidecar_down_throughout_the_game_goes_on():
    port = ct.free_port()  # nothing listens there
    d = agones_daemon(port, ["--agones-health-ms", "200"], http=True, world=ct.write_world())
    c = d.client()
    c.hello()
    c.spawn_ok(ct.circle(1.0), 0, 0)
    m1 = ct.metric(d.metrics(), "collide_agones_errors_total")
    n0 = c.snapshots
    c.pump(2.0)
    rate = (c.snapshots - n0) / 2.0
    check(rate >= 0.8 * 60, "snapshots must keep the tick rate with the sidecar down: %.1f/s" % rate)
    c.ping()
    status, _ = d.http_get("/healthz")
    check(status == 200, "/healthz must stay 200 with the sidecar down, got %d" % status)
    m2 = ct.metric(d.metrics(), "collide_agones_errors_total")
    check(m2 >= m1 + 5, "failed calls must keep being counted: %s then %s 2 s later" % (m1, m2))
    check(ct.metric(d.metrics(), "collide_agones_ready") == 0, "never Ready")
    check(agones_json(d)["agones"]["ready"] is False, "/rooms: ready false")
    warns = [l for l in d.log_text().splitlines() if "event=agones_error" in l and "level=warn" in l]
    check(warns and len(warns) <= 10, "failures logged, once per call kind, not per attempt: "
          "%d warn lines" % len(warns))
    t0 = time.monotonic()
    d.stop_and_check()
    took = time.monotonic() - t0
    check(took < 3.0 + 4.0, "Shutdown gives up within its 3 s budget: exit took %.1f s" % took)


BURST = """
import socket, sys, time
port, n, hello = int(sys.argv[1]), int(sys.argv[2]), bytes.fromhex(sys.argv[3])
socks, t0 = [], time.monotonic()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(hello)
    socks.append(s)
    time.sleep(max(0.0, t0 + (i + 1) * 0.002 - time.monotonic()))
sys.stdin.read()
for s in socks:
    s.close()
"""


@test
def players_counter_coalesced_under_a_500_client_burst():
    n = 500
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, ["--max-clients", "700", "--max-pending", "1000",
                                "--max-pending-per-address", "1000"],
                      http=True, world=ct.write_world())
    check(sc.wait_for(lambda s: s.counters["players"]["capacity"] == 700, ct.REPLY_TIMEOUT, "cap"),
          "the players capacity must be --max-clients 700: %s" % sc.counters)
    # The 500 clients live in a child process, so this one (and the double's threads, which
    # share its interpreter lock) answer the daemon as fast as a real sidecar would. They
    # connect over about a second (500 a second): long enough that a client sending the counter
    # on every change, or back to back, would make hundreds of calls, not a few.
    burst = subprocess.Popen([sys.executable, "-c", BURST, str(d.game_port), str(n),
                              ct.encode(ct.msg_hello(1, name="burst")).hex()],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        check(sc.wait_for(lambda s: counter_value(s) == n, 20, "500"),
              "the players counter must reach %d: %s" % (n, sc.counters))
        t1 = time.monotonic()
        calls = [c for c in sc.calls_to("PATCH", COUNTER) if c.t >= t0]
        counts = [int(c.body["count"]) for c in calls]
        allowed = 2 + (t1 - t0) / (0.9 * SYNC_S)
        print("  burst: %d connects over %.2f s, %d counter calls: %s" % (
            n, t1 - t0, len(calls), counts), flush=True)
        check(len(calls) <= allowed and len(calls) < 50,
              "%d connects over %.2f s must make a few counter calls (one per 200 ms at most: "
              "<= %.0f), got %d: %s" % (n, t1 - t0, allowed, len(calls), counts))
        check(counts == sorted(counts), "counts only grow during a burst of connects: %s" % counts)
        check(all(c.body["capacity"] == "700" for c in calls), "capacity stays 700")
        m = d.metrics()
        check(ct.metric(m, "collide_agones_errors_total") == 0, "no errors")
    finally:
        t2 = time.monotonic()
        burst.stdin.close()  # the child closes its 500 sockets and exits
        burst.wait(30)
    check(sc.wait_for(lambda s: counter_value(s) == 0, 20, "0"),
          "the players counter must come back to 0: %s" % sc.counters)
    down = [c for c in sc.calls_to("PATCH", COUNTER) if c.t >= t2]
    allowed = 2 + (time.monotonic() - t2) / (0.9 * SYNC_S)
    check(len(down) <= allowed, "%d disconnects: a few counter calls, got %d" % (n, len(down)))
    d.stop_and_check()
    sc.stop()


@test
def rooms_list_follows_rooms_opened_and_closed():
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, ["--room-idle-ms", "300"], http=True, world=ct.write_world())
    check(sc.wait_for(lambda s: s.lists["rooms"]["values"] == ["default"], ct.REPLY_TIMEOUT, "d"),
          "the rooms list must hold `default` once Ready: %s" % sc.lists)
    names = ["arena-1", "arena-2", "arena-3"]
    clients = {r: hello_in(d, r) for r in names}
    check(sc.wait_for(lambda s: sorted(s.lists["rooms"]["values"]) == sorted(["default"] + names),
                      ct.REPLY_TIMEOUT, "3"),
          "the list must hold the 3 rooms opened: %s" % sc.lists)
    check(sc.wait_for(lambda s: counter_value(s) == 3, ct.REPLY_TIMEOUT, "3"),
          "3 players: %s" % sc.counters)
    for r in ("arena-1", "arena-2"):
        clients.pop(r).close()
    # Their rooms close after --room-idle-ms 300 and leave the list.
    check(sc.wait_for(lambda s: sorted(s.lists["rooms"]["values"]) == ["arena-3", "default"],
                      ct.REPLY_TIMEOUT, "closed"),
          "the closed rooms must leave the list: %s\n%s" % (sc.lists, d.log_tail(10)))
    adds = [c.body["value"] for c in sc.calls_to("POST", ADD)]
    removes = [c.body["value"] for c in sc.calls_to("POST", REMOVE)]
    check(sorted(adds) == sorted(["default"] + names), "each room added once: %s" % adds)
    check(sorted(removes) == ["arena-1", "arena-2"], "each closed room removed once: %s" % removes)
    check(sorted(json.loads(d.http_get("/rooms")[1])["agones"]["labels"]) ==
          ["agones.dev/fleet", "agones.dev/gameserverset"], "/rooms: the GameServer's labels")
    clients["arena-3"].close()
    d.stop_and_check()
    sc.stop()


@test
def sigterm_goodbye_then_shutdown_then_exit():
    drain_s = 1.5
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, ["--rate-limit", "1000000", "--max-queued-bytes", "8388608",
                                "--drain-timeout-ms", "1500"], http=True, world=ct.write_world())
    check(sc.wait_for(lambda s: s.state == "Ready", ct.REPLY_TIMEOUT, "Ready"), "not Ready")
    player = d.client()
    player.hello(name="player")
    # A client that never reads while ~30,000 Pongs are owed: the drain cannot flush it and waits
    # --drain-timeout-ms, so "after the drain" is measurably later than the signal.
    hog = d.client(rcvbuf=4096)
    hog.hello(name="hog")
    batch = b"".join(ct.encode(ct.msg_ping(0, 123456789)) for _ in range(1000))
    for _ in range(30):
        hog.send_raw(batch)
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while (ct.metric(d.metrics(), "collide_frames_in_total") or 0) < 30000:
        check(time.monotonic() < deadline, "the daemon did not read the pings")
        time.sleep(0.1)
    got = {}

    def read_goodbye():
        try:
            sm = player.recv_until(lambda m: ct.kind_of(m) == "goodbye", timeout=10,
                                   what="Goodbye")
            got["goodbye"] = (time.monotonic(), sm.goodbye.reason)
        except Exception as e:  # noqa: BLE001 - reported below
            got["error"] = repr(e)

    reader = threading.Thread(target=read_goodbye, daemon=True)
    reader.start()
    t_sig = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    try:
        rc = d.proc.wait(ct.EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ct.TestFailure("collided did not exit after SIGTERM")
    t_exit = time.monotonic()
    d.reader.join(5)
    reader.join(5)
    check(rc == 0, "exit status 0 after SIGTERM, got %s" % rc)
    check("goodbye" in got, "the player must get Goodbye: %s" % got)
    shut = sc.calls_to("POST", "/shutdown")
    check(len(shut) == 1 and shut[0].body in (None, {}), "one POST /shutdown {}: %s" % shut)
    t_good, t_shut = got["goodbye"][0], shut[0].t
    check(t_good < t_shut < t_exit, "Goodbye (%.2f s), then Shutdown (%.2f s), then the exit "
          "(%.2f s), after the signal" % (t_good - t_sig, t_shut - t_sig, t_exit - t_sig))
    check(t_shut - t_sig >= 0.95 * drain_s, "Shutdown only once the drain is over (the hog cut at "
          "--drain-timeout-ms 1.5 s): %.2f s after the signal" % (t_shut - t_sig))
    log = d.log_text()
    check(log.find("event=drain_timeout") < log.find("event=agones_shutdown") <
          log.find("event=drained"), "logged in order: drain_timeout, agones_shutdown, drained")
    check(sc.state == "Shutdown", "the GameServer is Shutdown")
    check(not d.sanitizer_reports(), "sanitizer: %s" % d.sanitizer_reports()[:5])
    hog.close()
    player.close()
    sc.stop()


@test
def allocation_seen_through_the_watch_stream():
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, http=True, world=ct.write_world())
    check(sc.wait_for(lambda s: s.state == "Ready" and s.watchers > 0, ct.REPLY_TIMEOUT, "Ready"),
          "not Ready and watching")
    check(ct.metric(d.metrics(), "collide_agones_allocated") == 0, "not allocated yet")
    check(agones_json(d)["agones"]["state"] == "Ready", "/rooms: state Ready")
    sc.allocate({"mode": "deathmatch", "match": "m-42"})
    line = d.wait_log(r"event=agones_allocated\b")
    check(line, "the allocation must be logged\n%s" % d.log_tail(10))
    check("mode" in line and "deathmatch" in line and "m-42" in line,
          "the allocation's labels must be in the log line: %s" % line)
    check(ct.metric(d.metrics(), "collide_agones_allocated") == 1, "collide_agones_allocated 1")
    a = agones_json(d)["agones"]
    check(a["state"] == "Allocated" and a["allocated"] is True, "/rooms: Allocated: %s" % a)
    check(a["labels"].get("mode") == "deathmatch" and a["labels"].get("match") == "m-42",
          "/rooms: the allocation's labels: %s" % a)
    # Allocated again (another match packed into this server): the new labels are logged.
    sc.allocate({"match": "m-43"})
    line = d.wait_log(r"event=agones_allocated\b.*m-43")
    check(line and "again" in line, "a second allocation's labels must be logged: %s" % line)
    # The stream survives the sidecar going away and coming back (a restarted sidecar).
    sc.stop()
    sc2 = ag.Sidecar(sc.port)
    sc2.state = "Allocated"
    sc2.labels["mode"] = "ctf"
    sc2.start()
    check(sc2.wait_for(lambda s: s.watchers > 0, ct.REPLY_TIMEOUT, "rewatch"),
          "the watch must reconnect to a restarted sidecar")
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while agones_json(d)["agones"]["labels"].get("mode") != "ctf":
        check(time.monotonic() < deadline, "labels from the new stream: %s" % agones_json(d))
        time.sleep(0.1)
    d.stop_and_check()
    sc2.stop()


@test
def agones_flags_and_environment():
    # AGONES_SDK_HTTP_PORT alone turns the SDK on (the other tests); --agones off wins over it.
    sc = ag.Sidecar(ct.free_port()).start()
    d = agones_daemon(sc.port, ["--agones", "off"], http=True, world=ct.write_world())
    c = d.client()
    c.hello()
    c.pump(1.0)
    check(sc.all_calls() == [], "--agones off: no call to the sidecar: %s" % sc.all_calls()[:3])
    check(ct.metric(d.metrics(), "collide_agones_errors_total") is None,
          "--agones off: no collide_agones_* series")
    check("agones" not in json.loads(d.http_get("/rooms")[1]), "--agones off: /rooms unchanged")
    d.stop_and_check()
    # COLLIDE_AGONES=off, then a bare --agones: the flag wins.
    d = ct.Daemon(["--agones"], http=True, world=ct.write_world(),
                  env_extra={"AGONES_SDK_HTTP_PORT": str(sc.port), "COLLIDE_AGONES": "off"})
    check(sc.wait_for(lambda s: s.state == "Ready", ct.REPLY_TIMEOUT, "Ready"),
          "a bare --agones must turn the SDK on over COLLIDE_AGONES=off")
    d.stop_and_check()
    # Without the variable or the flag the SDK is off.
    d = ct.Daemon([], http=True, world=ct.write_world())
    check(ct.metric(d.metrics(), "collide_agones_errors_total") is None, "off by default")
    d.stop_and_check()
    sc.stop()
    # --agones-health-ms: 100 to 3600000.
    for bad in ("99", "0", "x"):
        r = subprocess.run([ct.OPTS.collided, "--agones-health-ms", bad], capture_output=True,
                           text=True, timeout=ct.START_TIMEOUT,
                           env={k: v for k, v in os.environ.items() if not k.startswith("COLLIDE_")})
        check(r.returncode == 2 and "--agones-health-ms" in r.stderr,
              "--agones-health-ms %s must be refused (exit 2) naming the flag: %d %r" % (
                  bad, r.returncode, r.stderr[-200:]))
    r = subprocess.run([ct.OPTS.collided, "--help"], capture_output=True, text=True, timeout=30)
    check("--agones" in r.stdout and "COLLIDE_AGONES_HEALTH_MS" in r.stdout, "--help lists them")


if __name__ == "__main__":
    ct.main()

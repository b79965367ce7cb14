#!/usr/bin/env python3
"""Load and abuse: a client that never reads, a message flood, 300 concurrent clients. The others
must keep receiving snapshots at roughly the tick rate and the daemon's memory must stay bounded.
(Loose bounds: this is correctness under load, not a benchmark.)"""

import os
import resource
import selectors
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

# ASan's quarantine keeps freed memory resident (256 MB by default): shrink it so RSS means memory
# in use, whichever build runs.
SMALL_QUARANTINE = {"ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") +
                                     ":quarantine_size_mb=8").lstrip(":")}


def snap(m):
    return kind_of(m) == "snapshot"


def busy_world():
    # Many statics make a whole-world view big.
    statics = []
    for i in range(20):
        for j in range(10):
            statics.append((-950 + 100 * i, 500 + 40 * j, {"box": {"half_extents": [3, 3]}}))
    return ct.write_world(statics=statics)


class Player(threading.Thread):
    """A well-behaved client: 8 bodies moving back and forth, reading everything, counting
    snapshots in a measured window."""

    def __init__(self, daemon, index, bodies=8):
        super().__init__(daemon=True)
        self.c = daemon.client()
        self.c.hello(name="player%d" % index)
        self.ids = [self.c.spawn_ok(ct.circle(1), -400 + 120 * index + 12 * k, -200)
                    for k in range(bodies)]
        self.stop = threading.Event()
        self.error = None
        self.window = None  # (t0, t1) measured
        self.count_in_window = 0
        self.pong_rtts = []

    def run(self):
        c = self.c
        direction = 1
        next_turn = 0
        next_ping = time.monotonic() + 0.5
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                if now >= next_turn:
                    direction = -direction
                    c.send(*[ct.msg_move(0, b, c.next_seq + k, 0, 40 * direction)
                             for k, b in enumerate(self.ids)])
                    c.next_seq += len(self.ids)
                    next_turn = now + 0.25
                if now >= next_ping:
                    c.send(ct.msg_ping(c.rid(), int(now * 1e6)))
                    next_ping = now + 0.5
                m = c.recv(0.05)
                if m is None:
                    continue
                if snap(m) and self.window and self.window[0] <= time.monotonic() <= \
                        self.window[1]:
                    self.count_in_window += 1
                elif kind_of(m) == "pong":
                    self.pong_rtts.append(time.monotonic() - m.pong.client_time_us / 1e6)
                elif kind_of(m) == "error":
                    raise ct.TestFailure("player got %s" % describe(m))
        except Exception as e:  # reported by the test
            self.error = e

    def finish(self):
        self.stop.set()
        self.join(ct.REPLY_TIMEOUT)
        self.c.close()


def measure_players(players, seconds, tick_rate, what):
    t0 = time.monotonic()
    for p in players:
        p.count_in_window = 0
        p.window = (t0, t0 + seconds)
    time.sleep(seconds + 0.2)
    for i, p in enumerate(players):
        check(p.error is None, "%s: player %d failed: %s" % (what, i, p.error))
        rate = p.count_in_window / seconds
        check(rate >= 0.5 * tick_rate,
              "%s: player %d must keep receiving snapshots at about %d Hz, got %.1f Hz" % (
                  what, i, tick_rate, rate))


def rss_sampler(d, stop, samples):
    while not stop.is_set() and d.alive():
        try:
            samples.append(d.rss_kb())
        except OSError:
            return
        time.sleep(0.2)


@test
def never_reading_client_memory_bounded():
    d = ct.Daemon(["--max-queued-bytes", "32768"], http=True, world=busy_world(),
                  env_extra=SMALL_QUARANTINE)
    players = [Player(d, i) for i in range(4)]
    for p in players:
        p.start()
    reader = d.client(rcvbuf=4096)
    reader.hello(name="never-reads")
    reader.send(ct.msg_set_view(reader.rid(), 0, 0, 1000, 1000))
    time.sleep(1.0)
    base = d.rss_kb()
    stop = threading.Event()
    samples = []
    sampler = threading.Thread(target=rss_sampler, args=(d, stop, samples), daemon=True)
    sampler.start()
    measure_players(players, 6.0, 60, "while a client never reads")
    stop.set()
    sampler.join(5)
    peak = max(samples) if samples else d.rss_kb()
    check(peak - base < 64 * 1024, "daemon RSS must stay bounded while a client never reads: "
          "%d kB -> peak %d kB" % (base, peak))
    m = d.metrics()
    drops = ct.metric(m, "collide_slow_client_drops_total") or 0
    disconnects = ct.metric(m, "collide_slow_client_disconnects_total") or 0
    check(drops + disconnects > 0, "a client that never reads a whole-world view of moving bodies "
          "must have stale snapshots dropped (or be disconnected): drops %g, disconnects %g" % (
              drops, disconnects))
    # Now it reads. Either it was disconnected, or its view converges to the truth: newest kept
    # means no body or removal is lost.
    alive_ids = set()
    for p in players:
        alive_ids.update(p.ids)
    try:
        reader.recv_until(lambda msg: snap(msg) and alive_ids <= set(reader.view) and all(
            reader.view[i].get("kind") == ct.pb.BODY_KIND_MOVING for i in alive_ids),
            timeout=20, what="the resumed reader's view to hold every moving body")
        moving = {i for i, s in reader.view.items() if s.get("kind") == ct.pb.BODY_KIND_MOVING}
        check(moving == alive_ids, "the resumed reader's view has stray bodies: %s" % (
            moving - alive_ids))
        statics = [i for i, s in reader.view.items() if s.get("kind") == ct.pb.BODY_KIND_STATIC]
        check(len(statics) == 200, "the resumed reader must know all 200 statics, knows %d" %
              len(statics))
    except ct.TestFailure as e:
        if not reader.closed:
            raise
        check(disconnects > 0 or d.wait_log(r"slow|queue", 1.0),
              "the reader was closed without a slow-client disconnect being counted (%s)" % e)
    for p in players:
        p.finish()
    reader.close()
    ct.full_session(d)
    d.stop_and_check()


@test
def never_reading_client_with_requests_is_disconnected():
    d = ct.Daemon(["--max-queued-bytes", "16384", "--rate-limit", "2000"], http=True,
                  world=busy_world(), env_extra=SMALL_QUARANTINE)
    players = [Player(d, i) for i in range(3)]
    for p in players:
        p.start()
    reader = d.client(rcvbuf=4096)
    reader.hello(name="never-reads")
    reader.send(ct.msg_set_view(reader.rid(), 0, 0, 1000, 1000))
    base = d.rss_kb()
    # It keeps asking (Pongs cannot be dropped as stale) but never reads a byte.
    reader.sock.settimeout(0.5)
    t0 = time.monotonic()
    send_failed = False
    peak = base
    disconnected = False
    while time.monotonic() - t0 < 60:
        try:
            reader.send(*[ct.msg_ping(0, 1) for _ in range(40)])
        except (OSError, socket.timeout):
            send_failed = True
        peak = max(peak, d.rss_kb())
        m = ct.metric(d.metrics(), "collide_slow_client_disconnects_total") or 0
        if m >= 1:
            disconnected = True
            break
        time.sleep(0.05)
    check(disconnected, "a client that never reads and keeps sending must be disconnected past "
          "--max-queued-bytes (collide_slow_client_disconnects_total stayed 0 for 60 s; send "
          "failed: %s)" % send_failed)
    check(peak - base < 64 * 1024, "RSS must stay bounded: %d -> %d kB" % (base, peak))
    check(d.wait_log(r"(?i)(?=.*\bclient=%d\b)(?=.*(slow|queue|disconnect|clos))" %
                     reader.client_id, 2.0),
          "the slow-client disconnect must be logged with the client id %d" % reader.client_id)
    # Its socket is closed by the daemon: draining it reaches EOF.
    reader.sock.settimeout(ct.REPLY_TIMEOUT)
    try:
        while True:
            if not reader.sock.recv(1 << 16):
                break
    except OSError:
        pass
    measure_players(players, 2.0, 60, "after the slow client was dropped")
    for p in players:
        p.finish()
    reader.close()
    ct.full_session(d)
    d.stop_and_check()


def flood(d, rate_limit_args, what):
    players = [Player(d, i) for i in range(3)]
    for p in players:
        p.start()
    flooder = d.client()
    flooder.hello(name="flooder")
    fbody = flooder.spawn_ok(ct.circle(1), 0, 300)
    stop = threading.Event()
    counts = {"sent": 0, "received": 0, "errors": {}}

    def send_loop():
        seq = 1
        batch_pings = b"".join(ct.encode(ct.msg_ping(0, 1)) for _ in range(200))
        try:
            while not stop.is_set():
                moves = b"".join(ct.encode(ct.msg_move(0, fbody, seq + k, 5, 0))
                                 for k in range(50))
                seq += 50
                flooder.sock.sendall(batch_pings + moves)
                counts["sent"] += 250
        except OSError:
            pass

    def read_loop():
        try:
            while not stop.is_set():
                m = flooder.recv(0.1)
                if m is not None:
                    counts["received"] += 1
                    if kind_of(m) == "error":
                        name = ct.err_name(m.error.code)
                        counts["errors"][name] = counts["errors"].get(name, 0) + 1
        except (ct.ConnectionClosed, OSError):
            pass

    ts = [threading.Thread(target=send_loop, daemon=True),
          threading.Thread(target=read_loop, daemon=True)]
    for t in ts:
        t.start()
    measure_players(players, 4.0, 60, what)
    stop.set()
    for t in ts:
        t.join(ct.REPLY_TIMEOUT)
    for i, p in enumerate(players):
        check(p.pong_rtts, "%s: player %d got no Pong during the flood" % (what, i))
    for p in players:
        p.finish()
    flooder.close()
    return counts


@test
def message_flood_rate_limited():
    d = ct.Daemon(world=busy_world())  # default --rate-limit 200
    counts = flood(d, [], "during a rate-limited flood")
    check(counts["errors"].get("ERROR_CODE_RATE_LIMITED", 0) > 0,
          "a flood with the default rate limit must see RATE_LIMITED: %s" % counts)
    ct.full_session(d)
    d.stop_and_check()


@test
def message_flood_unlimited():
    d = ct.Daemon(["--rate-limit", "1000000"], world=busy_world())
    counts = flood(d, [], "during an unthrottled flood")
    check(counts["received"] > 100, "the flooder itself must be served: %s" % counts)
    ct.full_session(d)
    d.stop_and_check()


class RawPeer:
    """One of many non-blocking clients driven by a selector."""

    def __init__(self, port, index):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=ct.REPLY_TIMEOUT)
        self.sock.setblocking(False)
        self.index = index
        self.buf = bytearray()
        self.out = bytearray()
        self.welcome = None
        self.body = None
        self.snapshots_after_spawn = 0
        self.sees_own = False
        self.acked_seq = 0
        self.errors = []
        self.closed = False

    def feed(self, data):
        self.buf += data
        msgs = []
        while True:
            n = shift = 0
            for i in range(min(len(self.buf), 6)):
                b = self.buf[i]
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            else:
                return msgs
            if len(self.buf) < i + 1 + n:
                return msgs
            m = ct.pb.ServerMessage()
            m.ParseFromString(bytes(self.buf[i + 1:i + 1 + n]))
            del self.buf[:i + 1 + n]
            msgs.append(m)


@test
def three_hundred_clients():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    d = ct.Daemon(http=True, world=ct.write_world())
    n = 300
    peers = []
    for i in range(n):
        p = RawPeer(d.game_port, i)
        x = -950 + 100 * (i % 20)
        y = -950 + 120 * (i // 20)
        p.out += ct.encode(ct.msg_hello(1, name="p%d" % i)) + \
            ct.encode(ct.msg_spawn(2, ct.box(1, 1), x, y))
        peers.append(p)
    sel = selectors.DefaultSelector()
    for p in peers:
        sel.register(p.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, p)

    def pump(until, timeout, what):
        deadline = time.monotonic() + timeout
        while not until():
            check(time.monotonic() < deadline, "300 clients: timed out waiting for %s" % what)
            for key, ev in sel.select(0.2):
                p = key.data
                if ev & selectors.EVENT_WRITE and p.out:
                    try:
                        k = p.sock.send(p.out)
                        del p.out[:k]
                    except BlockingIOError:
                        pass
                if not p.out:
                    sel.modify(p.sock, selectors.EVENT_READ, p)
                if ev & selectors.EVENT_READ:
                    try:
                        data = p.sock.recv(1 << 16)
                    except BlockingIOError:
                        continue
                    except ConnectionError:
                        data = b""
                    if not data:
                        raise ct.TestFailure("300 clients: daemon closed client %d (%s)" % (
                            p.index, [describe(e) for e in p.errors]))
                    for m in p.feed(data):
                        k = kind_of(m)
                        if k == "welcome":
                            p.welcome = m.welcome
                        elif k == "spawned":
                            p.body = m.spawned.body_id
                        elif k == "error":
                            p.errors.append(m)
                        elif k == "snapshot" and p.body is not None:
                            p.snapshots_after_spawn += 1
                            for b in m.snapshot.bodies:
                                if b.id == p.body:
                                    p.sees_own = True
                                    p.acked_seq = max(p.acked_seq, b.last_input_seq)
            bad = [p for p in peers if p.errors]
            check(not bad, "300 clients: client %d got %s" % (
                bad[0].index, describe(bad[0].errors[0])) if bad else "")

    pump(lambda: all(p.welcome is not None for p in peers), 60, "300 Welcomes")
    ids = {p.welcome.client_id for p in peers}
    check(len(ids) == n, "300 clients need 300 distinct client ids, got %d" % len(ids))
    pump(lambda: all(p.body is not None for p in peers), 60, "300 Spawned")
    pump(lambda: all(p.sees_own and p.snapshots_after_spawn >= 5 for p in peers), 60,
         "5 snapshots each with the own body")
    m = d.metrics()
    check(ct.metric(m, "collide_clients") == n, "collide_clients must be %d, got %s" % (
        n, ct.metric(m, "collide_clients")))
    check(ct.metric(m, "collide_bodies", kind="moving") == n, "collide_bodies{kind=moving} must "
          "be %d, got %s" % (n, ct.metric(m, "collide_bodies", kind="moving")))
    for p in peers:
        p.out += ct.encode(ct.msg_move(0, p.body, 42, 1, 1))
        sel.modify(p.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, p)
    pump(lambda: all(p.acked_seq == 42 for p in peers), 60, "every client's input 42 acknowledged")
    for p in peers:
        sel.unregister(p.sock)
        p.sock.close()
    deadline = time.monotonic() + 30
    while ct.metric(d.metrics(), "collide_clients") != 0:
        check(time.monotonic() < deadline, "collide_clients must return to 0 after 300 closes")
        time.sleep(0.2)
    check(ct.metric(d.metrics(), "collide_bodies", kind="moving") == 0,
          "their bodies must be despawned")
    ct.full_session(d)
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

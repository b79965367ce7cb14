#!/usr/bin/env python3
"""The soak run of issue 12 (not in CI): L1 (PERFORMANCE.md: 1,000 players, one box each, intents
at 30 Hz) for 30 minutes against a real collided, while three kinds of trouble keep coming:

  churn    short sessions that connect, say Hello, spawn, move, and leave (or vanish mid-frame),
  hostile  the frames of issue 12: a SpawnBody of 21,000 empty Vec2s, a big frame before Hello,
           garbage, a length prefix over --max-frame, a partial frame left hanging, a flood over
           the rate limit, silent sockets that never say Hello,
  log      stderr left unread for 10 s of every minute (a stalled log collector).

Every 10 s it samples the daemon's RSS (/proc) and /metrics, and at the end it reports whether
  - RSS stayed flat: the last third's median within 10% (and 16 MiB) of the second third's,
  - the tick rate held: every window ran >= 0.95 x --tick-rate steps per second,
  - nothing leaked: the daemon drained on SIGTERM and exited 0 (with an ASan build, LeakSanitizer
    checks every allocation at that exit: --collided build/asan/server/net/collided).
Exit status 0 when all three hold.

  bench/soak/soak.py --build build/release                  # 30 minutes
  bench/soak/soak.py --build build/release --minutes 2      # a quick rehearsal
"""

import argparse
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

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
import collide_test as ct  # noqa: E402

SAMPLE_S = 10.0


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def total(parsed, name):
    return sum(v for n, _, v in parsed["samples"] if n == name)


class Trouble(threading.Thread):
    """One kind of trouble, repeated until stop is set; counts what it did."""

    def __init__(self, name, port, stop, fn):
        super().__init__(daemon=True, name=name)
        self.port, self.stop, self.fn = port, stop, fn
        self.done = 0
        self.errors = 0
        self.rng = random.Random(hash(name) & 0xFFFF)

    def run(self):
        while not self.stop.is_set():
            try:
                self.fn(self)
                self.done += 1
            except (OSError, ct.TestFailure, ct.ConnectionClosed):
                self.errors += 1  # the daemon cut us, as it should for most hostile frames
                time.sleep(0.05)


def churn_once(t):
    c = ct.Client(t.port, timeout=5)
    try:
        c.hello(name="churn")
        body = c.spawn_ok(ct.box(0.5, 0.5), t.rng.uniform(-400, 400), t.rng.uniform(-400, 400))
        for _ in range(t.rng.randint(1, 20)):
            c.move(body, t.rng.uniform(-5, 5), t.rng.uniform(-5, 5))
            time.sleep(0.03)
        if t.rng.random() < 0.2:
            c.send_raw(ct.varint(200) + b"\x08")  # vanish mid-frame
    finally:
        c.close()
    time.sleep(0.05)


def hostile_once(t):
    kind = t.rng.randrange(7)
    s = socket.create_connection(("127.0.0.1", t.port), timeout=5)
    try:
        if kind == 0:  # 21,000 empty Vec2s after a Hello
            s.sendall(ct.encode(ct.msg_hello(1)))
            poly = ct.pb.Shape(polygon=ct.pb.Polygon(vertices=[ct.pb.Vec2()] * 21000))
            msg = ct.pb.ClientMessage(request_id=2, spawn=ct.pb.SpawnBody(
                kind=ct.pb.BODY_KIND_MOVING, shape=poly, position=ct.vec(0, 0)))
            for _ in range(5):
                s.sendall(ct.encode(msg))
        elif kind == 1:  # a big frame before Hello
            s.sendall(ct.frame(ct.unknown_field_padding(40000)))
        elif kind == 2:  # garbage
            s.sendall(bytes(t.rng.randrange(256) for _ in range(512)))
        elif kind == 3:  # a prefix over --max-frame
            s.sendall(ct.varint(1 << 30))
        elif kind == 4:  # a partial frame, then silence
            s.sendall(ct.encode(ct.msg_hello(1)) + ct.varint(1000) + b"\x08\x01")
            time.sleep(1.0)
        elif kind == 5:  # a flood over the rate limit
            s.sendall(ct.encode(ct.msg_hello(1)))
            ping = ct.encode(ct.msg_ping(3, 1))
            s.sendall(ping * 2000)
        else:  # a silent socket
            time.sleep(1.0)
        # Read what comes back for half a second (a welcomed socket gets snapshots forever).
        t_stop = time.monotonic() + 0.5
        try:
            while time.monotonic() < t_stop:
                s.settimeout(max(0.01, t_stop - time.monotonic()))
                if not s.recv(65536):
                    break
        except OSError:
            pass
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--collided", default=None, help="default: BUILD/server/net/collided")
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--tick-rate", type=float, default=60.0)
    ap.add_argument("--json", default=None, help="write the samples here")
    args = ap.parse_args()
    collided = args.collided or os.path.join(args.build, "server/net/collided")
    ct.OPTS = argparse.Namespace(collided=collided)
    sys.path.insert(0, os.path.join(args.build, "tests", "pb"))
    import collide_pb2  # noqa: E402
    ct.pb = collide_pb2

    d = ct.Daemon(["--tick-rate", "%g" % args.tick_rate], http=True)
    pid = d.proc.pid
    duration = args.minutes * 60.0
    load = subprocess.Popen(
        [os.path.join(args.build, "client/collide-client"), "load", "--port", str(d.game_port),
         "--clients", str(args.clients), "--duration", "%ds" % int(duration + 30), "--ramp", "10s",
         "--rate", "30", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(12)  # the ramp
    stop = threading.Event()
    troubles = [Trouble("churn%d" % i, d.game_port, stop, churn_once) for i in range(4)]
    troubles += [Trouble("hostile%d" % i, d.game_port, stop, hostile_once) for i in range(3)]
    for t in troubles:
        t.start()

    samples = []
    prev = d.metrics()
    prev_t = t_start = time.monotonic()
    t_end = t_start + duration
    print("%6s %9s %8s %8s %7s %7s %6s" % ("t_s", "rss_kib", "ticks/s", "skipped", "clients",
                                           "errors", "log"), flush=True)
    while time.monotonic() < t_end:
        # A stalled log collector: stderr unread for the first 10 s of every minute.
        minute_phase = (time.monotonic() - t_start) % 60.0
        stalled = minute_phase < 10.0
        if stalled:
            d.pause_log()
        else:
            d.resume_log()
        time.sleep(SAMPLE_S)
        now = time.monotonic()
        cur = d.metrics()
        dt = now - prev_t
        row = {
            "t_s": round(now - t_start, 1),
            "rss_kib": rss_kb(pid),
            "ticks_per_s": (total(cur, "collide_ticks_total") -
                            total(prev, "collide_ticks_total")) / dt,
            "skipped": total(cur, "collide_ticks_skipped_total") -
            total(prev, "collide_ticks_skipped_total"),
            "clients": total(cur, "collide_clients"),
            "errors": total(cur, "collide_errors_total") - total(prev, "collide_errors_total"),
            "log_stalled": stalled,
        }
        samples.append(row)
        print("%6.0f %9d %8.1f %8d %7d %7d %6s" % (row["t_s"], row["rss_kib"], row["ticks_per_s"],
                                                  row["skipped"], row["clients"], row["errors"],
                                                  "stall" if stalled else "-"), flush=True)
        prev, prev_t = cur, now
        if not d.alive():
            break
    d.resume_log()
    stop.set()
    for t in troubles:
        t.join(10)
    load.send_signal(signal.SIGINT)
    try:
        load_out = load.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        load.kill()
        load_out = load.communicate()[0]
    rc = d.terminate()
    exited = rc is not None

    rate = args.tick_rate
    third = max(1, len(samples) // 3)
    mid = statistics.median(s["rss_kib"] for s in samples[third:2 * third] or samples)
    last = statistics.median(s["rss_kib"] for s in samples[2 * third:] or samples)
    rss_flat = last <= mid * 1.10 or last - mid <= 16 * 1024
    worst_rate = min(s["ticks_per_s"] for s in samples) if samples else 0.0
    rate_held = worst_rate >= 0.95 * rate
    drained = rc == 0 and not d.sanitizer_reports()
    print("\nload: " + " | ".join(line for line in load_out.splitlines()[-6:]))
    for t in troubles:
        print("%-9s %6d rounds, %5d ended by an error or a cut" % (t.name, t.done, t.errors))
    print("RSS median: middle third %d KiB, last third %d KiB -> %s" % (
        mid, last, "flat" if rss_flat else "GROWING"))
    print("tick rate: worst 10 s window %.1f/s (need >= %.1f) -> %s" % (
        worst_rate, 0.95 * rate, "held" if rate_held else "NOT HELD"))
    print("exit: status %s%s -> %s" % (rc, "" if exited else " (forced)",
                                       "clean" if drained else "NOT CLEAN"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"samples": samples, "rss_flat": rss_flat, "rate_held": rate_held,
                       "drained": drained}, f, indent=1)
    sys.exit(0 if rss_flat and rate_held and drained else 1)


if __name__ == "__main__":
    main()

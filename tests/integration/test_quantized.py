#!/usr/bin/env python3
"""Snapshot rates and quantized snapshots against the real daemon (PROTOCOL.md "Snapshot rate and
quantized snapshots"): a quantized watcher and a float watcher of the same area agree within half
a quantum at the same ticks, through each decoder the project ships: the Python example's
(examples/python/collide_quantized.py) and the C client's (`collide-client watch --quantized`).
The movers turn (issue 16): the angles (1/65536 turn) and turning speeds (1/1024 rad/s) agree
within half a quantum too, across the -pi/pi wrap. Also: the rate granted and the ticks of a 20 Hz
watcher, --position-quantum in the Welcome, and the records copied between clients that share a
baseline (/metrics)."""

import math

import os
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402
from collide_quantized import QuantizedDecoder  # noqa: E402

CLIENT = None  # collide-client, from --client
TICKS = 120    # snapshots compared per watcher


class Watcher:
    """A raw watcher of the whole world: float or quantized, at a rate; records every body's
    state after each of its snapshots, by tick."""

    def __init__(self, daemon, quantized=False, rate=0):
        self.c = daemon.client()
        m = ct.msg_hello(1, name="watch")
        m.hello.quantized = quantized
        m.hello.snapshot_rate_hz = rate
        self.c.send(m)
        sm = self.c.recv_until(lambda m: kind_of(m) == "welcome", what="Welcome")
        self.welcome = sm.welcome
        self.decoder = (QuantizedDecoder(ct.pb, sm.welcome.position_quantum,
                                         sm.welcome.velocity_quantum) if quantized else None)
        w = sm.welcome
        self.c.send(ct.msg_set_view(0, 0, 0, w.world_max.x, w.world_max.y))
        self.states = {}  # tick -> {id: (x, y, vx, vy, seq, angle, w)}
        self.view = {}

    def read(self, until_tick):
        while True:
            sm = self.c.recv_until(lambda m: kind_of(m) == "snapshot", what="a snapshot")
            snap = sm.snapshot
            if self.decoder:
                check(len(snap.bodies) == 0, "a quantized snapshot carries no BodyState")
                self.decoder.apply(snap)
                self.view = {}
                for i, b in self.decoder.bodies.items():
                    s = self.decoder.body_state(b, False)
                    self.view[i] = (b.px * self.decoder.pq, b.py * self.decoder.pq,
                                    b.vx * self.decoder.vq, b.vy * self.decoder.vq, b.seq,
                                    s.angle, s.angular_velocity)
            else:
                check(len(snap.packed) == 0, "a float snapshot carries no packed records")
                for i in snap.removed:
                    self.view.pop(i, None)
                for b in snap.bodies:
                    self.view[b.id] = (b.position.x, b.position.y, b.velocity.x, b.velocity.y,
                                       b.last_input_seq, b.angle, b.angular_velocity)
            self.states[snap.tick] = dict(self.view)
            if snap.tick >= until_tick:
                return


def movers(d, n=8):
    """A player with n bodies of every shape, moved and turned by new intents from a thread (the
    odd ones spawned at an angle near the -pi/pi wrap)."""
    p = d.client()
    p.hello(name="mover")
    shapes = [ct.box(1.0, 0.5), ct.circle(0.8), ct.regular_polygon(5, 1.0)]
    ids = [p.spawn_ok(shapes[i % 3], -60 + 15 * i, 10 * (i % 3), angle=3.1 if i % 2 else 0.0)
           for i in range(n)]
    stop = threading.Event()

    def drive():
        k = 0
        while not stop.is_set():
            for j, bid in enumerate(ids):
                a = 0.37 * k + j
                p.move(bid, 7.3 * ((k + j) % 5 - 2) + 0.1 * a, 5.1 * ((k * 3 + j) % 7 - 3),
                       w=2.3 * ((k + 2 * j) % 7 - 3))
            k += 1
            try:
                p.non_snapshots(0.15)
            except ct.ConnectionClosed:
                return

    t = threading.Thread(target=drive, daemon=True)
    t.start()
    return p, ids, stop, t


def angle_diff(a, b):
    """a - b the short way round, in (-pi, pi]."""
    d = math.fmod(a - b, 2 * math.pi)
    if d > math.pi:
        d -= 2 * math.pi
    if d <= -math.pi:
        d += 2 * math.pi
    return d


def compare(fw, qw, pq, vq, what, printed=0.0):
    """Every tick both have: the same bodies, within half a quantum (plus float32 rounding, plus
    `printed` for values read back from text)."""
    common = sorted(set(fw.states) & set(qw.states))
    check(len(common) >= TICKS // 10, "%s: %d common ticks" % (what, len(common)))
    moving = turning = negative = 0
    atol = math.pi / 65536 + 1e-6 + printed
    wtol = 0.5 / 1024 + 1e-6 + printed
    for t in common:
        f, q = fw.states[t], qw.states[t]
        check(set(f) == set(q), "%s, tick %d: bodies %s vs %s" % (what, t, sorted(f), sorted(q)))
        for i in f:
            fx, fy, fvx, fvy, fseq, fa, fw_ = f[i]
            qx, qy, qvx, qvy, qseq, qa, qw_ = q[i]
            ptol = pq / 2 + 1e-6 * max(1.0, abs(fx), abs(fy))
            vtol = vq / 2 + 1e-6 * max(1.0, abs(fvx), abs(fvy))
            check(abs(fx - qx) <= ptol and abs(fy - qy) <= ptol,
                  "%s, tick %d, body %d: position (%r, %r) vs (%r, %r)" % (what, t, i, fx, fy,
                                                                           qx, qy))
            check(abs(fvx - qvx) <= vtol and abs(fvy - qvy) <= vtol,
                  "%s, tick %d, body %d: velocity (%r, %r) vs (%r, %r)" % (what, t, i, fvx, fvy,
                                                                           qvx, qvy))
            check(fseq == qseq, "%s, tick %d, body %d: seq %d vs %d" % (what, t, i, fseq, qseq))
            check(abs(angle_diff(fa, qa)) <= atol and -math.pi - atol <= qa < math.pi + atol,
                  "%s, tick %d, body %d: angle %r vs %r (decoded into [-pi, pi))" % (
                      what, t, i, fa, qa))
            check(abs(fw_ - qw_) <= wtol,
                  "%s, tick %d, body %d: turning speed %r vs %r" % (what, t, i, fw_, qw_))
            moving += fvx != 0 or fvy != 0
            turning += fw_ != 0
            negative += fa < -0.01
    check(moving > len(common), "%s: bodies were moving (%d)" % (what, moving))
    check(turning > len(common) and negative > 0,
          "%s: bodies were turning (%d), some at negative angles (%d)" % (what, turning, negative))
    return len(common)


@test
def test_python_decoder_agrees_with_float_watcher():
    d = ct.Daemon(["--position-quantum", "0.01", "--velocity-quantum", "0.125"],
                  world=ct.write_world(bounds=((-200, -200), (200, 200))))
    p, ids, stop, t = movers(d)
    try:
        fw = Watcher(d)
        qw = Watcher(d, quantized=True)
        q20 = Watcher(d, quantized=True, rate=20)
        q7 = Watcher(d, quantized=True, rate=7)
        check(fw.welcome.snapshot_rate_hz == 60 and qw.welcome.snapshot_rate_hz == 60,
              "full rate granted as 60 Hz")
        check(q20.welcome.snapshot_rate_hz == 20, "20 Hz granted")
        check(q7.welcome.snapshot_rate_hz == 7, "7 Hz asked: tick 60 / 9 = 6.67, said 7")
        check(abs(qw.welcome.position_quantum - 0.01) < 1e-9
              and qw.welcome.velocity_quantum == 0.125, "the quanta of the flags in the Welcome")
        check("quantized" in qw.welcome.features, "the feature is announced")
        end = max(fw.welcome.tick, qw.welcome.tick) + TICKS
        threads = [threading.Thread(target=w.read, args=(end,)) for w in (fw, qw, q20, q7)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        check(all(not th.is_alive() for th in threads), "every watcher read %d ticks" % TICKS)
        n = compare(fw, qw, 0.01, 0.125, "quantized at 60 Hz")
        # A loaded machine coalesces late steps (no snapshot of their own): most ticks remain.
        check(n >= TICKS // 2, "most ticks compared (%d)" % n)
        compare(fw, q20, 0.01, 0.125, "quantized at 20 Hz")
        # One snapshot per window of 3 (9) ticks, at the ticks of the watcher's phase (its
        # client id mod k), or at the first snapshot pass after when a loaded loop coalesced late
        # steps.
        for k, w in ((3, q20), (9, q7)):
            ticks = sorted(w.states)
            phase = w.welcome.client_id % k
            win = [(t - phase) // k for t in ticks]
            check(all(b > a for a, b in zip(win, win[1:])),
                  "every %d ticks: never two snapshots in one window: %s" % (k, ticks))
            check(len(ticks) >= 0.8 * (win[-1] - win[0] + 1),
                  "every %d ticks: few windows missed: %s" % (k, ticks))
            on_time = sum(1 for t in ticks if t % k == phase)
            check(on_time >= len(ticks) // 2, "mostly at the phase's ticks: %s" % ticks)
        compare(fw, q7, 0.01, 0.125, "quantized at 7 Hz")
    finally:
        stop.set()
        t.join(5)
        d.stop_and_check()


@test
def test_filters_ride_bit_6_only_off_the_defaults():
    """A new body's record carries its filters (bit 6: varint category, mask, sensor, absolute)
    only when one differs from the defaults (category 1, mask 0xffffffff, not a sensor), with
    the values SpawnBody gave; the float watcher's BodyState says the same (10, 11, 12; 0 reads
    as the default)."""
    d = ct.Daemon(["--admin-token", "S"], world=ct.write_world(bounds=((-100, -100), (100, 100))))
    try:
        admin = d.client()
        admin.hello(token="S")
        spawned = {}
        for name, x, kind, cat, mask, sensor in (
                ("plate", -20, ct.pb.BODY_KIND_STATIC, 4, 0x0F, True),
                ("ghost", 0, ct.pb.BODY_KIND_MOVING, 1, 0xFFFFFFFE, False),
                ("plain", 20, ct.pb.BODY_KIND_MOVING, 0, 0, False),
                # a sensor at the default category and mask: the sensor flag alone sends bit 6
                ("pad", 40, ct.pb.BODY_KIND_STATIC, 0, 0, True)):
            m = ct.msg_spawn(admin.rid(), ct.box(1, 1), x, 30, kind)
            m.spawn.category, m.spawn.mask, m.spawn.sensor = cat, mask, sensor
            admin.send(m)
            sm = admin.reply(m.request_id)
            check(kind_of(sm) == "spawned", "spawn %s: %s" % (name, ct.describe(sm)))
            spawned[name] = sm.spawned.body_id
        fw = Watcher(d)
        qw = Watcher(d, quantized=True)
        floats = {}
        while len(floats) < 4:
            sm = fw.c.recv_until(lambda m: kind_of(m) == "snapshot", what="a float snapshot")
            for b in sm.snapshot.bodies:
                floats[b.id] = (b.category or 1, b.mask or 0xFFFFFFFF, b.sensor)
        while len(qw.decoder.bodies) < 4:
            sm = qw.c.recv_until(lambda m: kind_of(m) == "snapshot", what="a quantized snapshot")
            qw.decoder.apply(sm.snapshot)
        want = {"plate": (4, 0x0F, True), "ghost": (1, 0xFFFFFFFE, False),
                "plain": (1, 0xFFFFFFFF, False), "pad": (1, 0xFFFFFFFF, True)}
        for name, bid in spawned.items():
            b = qw.decoder.bodies[bid]
            check(floats[bid] == want[name], "float %s: %s" % (name, floats[bid]))
            if name == "plain":
                # no bit 6: the decoder's fields stay unset (0), which reads as the defaults
                check((b.category, b.mask, b.sensor) == (0, 0, False),
                      "plain: bit 6 sent at the defaults: %s" % ((b.category, b.mask, b.sensor),))
            else:
                check((b.category, b.mask, b.sensor) == want[name],
                      "quantized %s: %s" % (name, (b.category, b.mask, b.sensor)))
    finally:
        d.stop_and_check()


@test
def test_angled_spawn_record_carries_the_local_shape_and_the_angle():
    """A body spawned at an angle (PROTOCOL.md "Rotation": the angle is no longer baked into the
    shape) is new to a quantized watcher with its shape as spawned, body-local, in its record's
    Shape bytes (bit 5), and its angle in 1/65536 turn (bit 2), for every shape kind and at
    angles either side of the -pi/pi wrap; the float watcher's BodyState says the same."""
    d = ct.Daemon(["--max-bodies-per-client", "16"],
                  world=ct.write_world(bounds=((-100, -100), (100, 100))))
    try:
        p = d.client()
        p.hello(name="spawner")
        spawned = {}
        shapes = [ct.box(1.5, 0.25), ct.circle(0.8), ct.regular_polygon(5, 1.0),
                  ct.polygon([(-1, -0.5), (2, -0.5), (0, 1.5)])]
        for k, shape in enumerate(shapes):
            for j, angle in enumerate((0.7, -2.9, 3.1)):
                bid = p.spawn_ok(shape, -60 + 12 * k, -30 + 20 * j, angle=angle)
                spawned[bid] = (shape, angle)
        fw = Watcher(d)
        qw = Watcher(d, quantized=True)
        floats = {}
        while len(floats) < len(spawned):
            sm = fw.c.recv_until(lambda m: kind_of(m) == "snapshot", what="a float snapshot")
            for b in sm.snapshot.bodies:
                if b.HasField("shape"):
                    floats[b.id] = (b.shape, b.angle)
        while len(qw.decoder.bodies) < len(spawned):
            sm = qw.c.recv_until(lambda m: kind_of(m) == "snapshot", what="a quantized snapshot")
            qw.decoder.apply(sm.snapshot)
        atol = math.pi / 65536 + 1e-6
        for bid, (shape, angle) in spawned.items():
            b = qw.decoder.bodies[bid]
            check(b.shape == shape, "body %d: quantized shape %s, spawned %s (body-local)" % (
                bid, b.shape, shape))
            check(floats[bid][0] == shape, "body %d: float shape %s, spawned %s" % (
                bid, floats[bid][0], shape))
            qa = qw.decoder.body_state(b, False).angle
            check(abs(angle_diff(qa, angle)) <= atol,
                  "body %d: quantized angle %r, spawned at %r" % (bid, qa, angle))
            check(abs(angle_diff(floats[bid][1], angle)) <= 1e-6,
                  "body %d: float angle %r, spawned at %r" % (bid, floats[bid][1], angle))
    finally:
        d.stop_and_check()


@test
def test_quantum_flags_bounds_and_env():
    for bad in ("0", "-1", "1001", "nan"):
        r = subprocess.run([ct.OPTS.collided, "--port", "0", "--udp-port", "0", "--http-port", "0",
                            "--position-quantum", bad], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 2 and "position-quantum" in r.stderr,
              "--position-quantum %s refused at start (exit %d: %s)" % (bad, r.returncode,
                                                                         r.stderr[-200:]))
    # The variable, and the flag's upper bound taken.
    d = ct.Daemon(["--position-quantum", "1000"], env_extra={"COLLIDE_VELOCITY_QUANTUM": "0.5"},
                  world=ct.write_world(bounds=((-200, -200), (200, 200))))
    try:
        w = Watcher(d, quantized=True)
        check(w.welcome.position_quantum == 1000 and w.welcome.velocity_quantum == 0.5,
              "quanta from the flag and COLLIDE_VELOCITY_QUANTUM: %r %r" % (
                  w.welcome.position_quantum, w.welcome.velocity_quantum))
        f = Watcher(d)
        check(f.welcome.position_quantum == 0 and f.welcome.velocity_quantum == 0,
              "a float client's Welcome carries no quanta")
    finally:
        d.stop_and_check()


def run_watch(port, *extra):
    return subprocess.Popen([CLIENT, "watch", "--port", str(port), "--bodies", "--count",
                             str(TICKS), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def parse_watch(text):
    """tick -> {id: (x, y, vx, vy, seq, angle, w)}: the state after each snapshot, from --bodies
    lines."""
    states = {}
    view = {}
    tick = None
    body = re.compile(r"  body (\d+) kind \d+ owner \d+ pos \(([-\d.]+), ([-\d.]+)\) vel "
                      r"\(([-\d.]+), ([-\d.]+)\) angle ([-\d.]+) w ([-\d.]+) seq (\d+)")
    for line in text.splitlines():
        m = re.match(r"tick (\d+):", line)
        if m:
            if tick is not None:
                states[tick] = dict(view)
            tick = int(m.group(1))
            continue
        m = body.match(line)
        if m:
            view[int(m.group(1))] = tuple(float(g) for g in m.group(2, 3, 4, 5)) + (
                int(m.group(8)), float(m.group(6)), float(m.group(7)))
            continue
        m = re.match(r"  removed (\d+)", line)
        if m:
            view.pop(int(m.group(1)), None)
    if tick is not None:
        states[tick] = dict(view)
    return states


@test
def test_c_client_decoder_agrees_with_float_watch():
    d = ct.Daemon(http=True, world=ct.write_world(bounds=((-200, -200), (200, 200))))
    p, ids, stop, t = movers(d)
    try:
        fw = run_watch(d.game_port)
        qw = run_watch(d.game_port, "--quantized", "--check")
        out_f, err_f = fw.communicate(timeout=120)
        out_q, err_q = qw.communicate(timeout=120)
        check(fw.returncode == 0 and qw.returncode == 0,
              "both watches end well: %s %s" % (err_f[-300:], err_q[-300:]))
        check("quantized: position 0.00390625, velocity 0.015625" in out_q,
              "the quantized watch prints the quanta of its Welcome")
        check("violations 0" in out_q, "--check runs on the quantized form")

        class S:
            pass
        f, q = S(), S()
        f.states, q.states = parse_watch(out_f), parse_watch(out_q)
        # --bodies prints 3 decimals: half a quantum plus the print's rounding.
        n = compare(f, q, 1.0 / 256 + 0.001, 1.0 / 64 + 0.001, "collide-client watch",
                    printed=0.001)
        check(n >= TICKS // 2, "%d ticks compared" % n)
        # One quantized watcher: nothing to share (the copies are the unit tests'); the counters
        # are exported.
        parsed = d.metrics()
        check(ct.metric(parsed, "collide_quantized_records_encoded_total") > 0,
              "collide_quantized_records_encoded_total counts the records encoded")
        check(ct.metric(parsed, "collide_quantized_records_copied_total") is not None,
              "collide_quantized_records_copied_total is exported")
    finally:
        stop.set()
        t.join(5)
        d.stop_and_check()


if __name__ == "__main__":
    i = sys.argv.index("--client")
    CLIENT = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    ct.main()

#!/usr/bin/env python3
"""Characters and one-way bodies over the wire (protocol 1.2, PROTOCOL.md "Characters: side-on
games"), against the real daemon over real sockets:
- Welcome.gravity is the world file's "gravity", left out for a world without; Welcome.features
  lists "characters" and "one_way";
- a character in a world with gravity falls (its velocity along gravity grows by g dt a tick)
  and lands: BodyState.grounded, ground_id the body it stands on (0 on the bottom bound), on a
  static, on a moving platform that carries it;
- a jump is taken only on the ground: intents with jump every tick in the air change nothing
  (the trajectory is a twin's without them), one jump per input_seq (a stale one is none),
  jump_speed 0 cannot jump;
- SpawnBody.one_way round trip (float BodyState.one_way on new records, quantized bit 8) for
  statics of the world file, an admin's statics and movers, and the one-way rule over the wire:
  a body dropped (or driven) onto a one-way platform lands on it, one rising from below passes;
- a static with `character` is refused (BAD_REQUEST) and so are non-finite or negative options,
  and nothing is spawned;
- the decoders agree with the float snapshots on grounded and ground_id: the Python example's
  quantized decoder (bit 7 on landing and take-off, on a late watcher's new record of a standing
  character), collide-client watch float and --quantized (with --check), and UDP against
  acknowledged baselines (the Python baseline decoder and collide-client watch --transport udp);
- a 1.1 world (no characters, no one-way bodies) has neither bit 7 nor 8 and decodes as before,
  and so does a world whose characters never stand (no gravity)."""

import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402
import collide_quantized as cq  # noqa: E402

GRAVITY = (0.0, -30.0)
FLOOR = -20.0                       # the bottom bound
BOUNDS = ((-100.0, FLOOR), (100.0, 100.0))
HALF = (0.5, 1.0)                   # the characters' box
REST = FLOOR + HALF[1]              # a character's y standing on the bottom bound
RATE = 60.0                         # the daemon's default tick rate
SKIN = 1e-3                         # GEOM_SKIN: grounded within 2 x of a surface
NEAR = 0.01                         # resting height tolerance (the world rests within the skin)


def snap(m):
    return kind_of(m) == "snapshot"


def side_world(statics=(), gravity=GRAVITY):
    return ct.write_world(statics=statics, bounds=BOUNDS, spawn_points=((0, 0),), gravity=gravity)


def char_box():
    return ct.box(*HALF)


class Watcher:
    """A raw watcher of the whole world, float or quantized (the Python example's decoder): every
    body's state after each of its snapshots, by tick, and for quantized each record's flags."""

    def __init__(self, d, quantized=False, name="watch"):
        self.c = d.client()
        m = ct.msg_hello(1, name=name)
        m.hello.quantized = quantized
        self.c.send(m)
        self.welcome = w = self.c.recv_until(lambda m: kind_of(m) == "welcome",
                                             what="Welcome").welcome
        self.dec = (cq.QuantizedDecoder(ct.pb, w.position_quantum, w.velocity_quantum)
                    if quantized else None)
        cx, cy = (w.world_min.x + w.world_max.x) / 2, (w.world_min.y + w.world_max.y) / 2
        hx, hy = (w.world_max.x - w.world_min.x) / 2, (w.world_max.y - w.world_min.y) / 2
        self.c.send(ct.msg_set_view(0, cx, cy, hx, hy))
        self.view = {}
        self.states = {}   # tick -> {id: state dict}
        self.flags = {}    # tick -> {id: flags} (quantized)
        self.first = {}    # id -> its first record: the BodyState (float) or its flags (quantized)
        self.tick = 0

    def _apply(self, s):
        if self.dec:
            check(len(s.bodies) == 0, "a quantized snapshot carries no BodyState")
            self.dec.apply(s)
            self.flags[s.tick] = dict(self.dec.flags)
            for i, f in self.dec.flags.items():
                if f & cq.NEW:
                    self.first[i] = f
            pq, vq = self.dec.pq, self.dec.vq
            self.view = {i: dict(x=b.px * pq, y=b.py * pq, vx=b.vx * vq, vy=b.vy * vq,
                                 grounded=b.grounded, ground_id=b.ground_id, one_way=b.one_way,
                                 kind=b.kind)
                         for i, b in self.dec.bodies.items()}
        else:
            check(len(s.packed) == 0, "a float snapshot carries no packed records")
            for i in s.removed:
                self.view.pop(i, None)
            for b in s.bodies:
                st = self.view.get(b.id)
                if st is None or b.HasField("shape"):
                    st = dict(one_way=b.one_way, kind=b.kind)
                    self.first[b.id] = b
                # every record is the body's whole state for these fields: absent is false, 0
                st.update(x=b.position.x, y=b.position.y, vx=b.velocity.x, vy=b.velocity.y,
                          grounded=b.grounded, ground_id=b.ground_id)
                self.view[b.id] = st
        self.states[s.tick] = {i: dict(v) for i, v in self.view.items()}
        self.tick = s.tick

    def until(self, pred, what, timeout=ct.REPLY_TIMEOUT):
        """Reads snapshots until pred(self) holds."""
        deadline = time.monotonic() + timeout
        while not pred(self):
            left = deadline - time.monotonic()
            sm = self.c.recv(left) if left > 0 else None
            if sm is None:
                raise ct.TestFailure("timed out waiting for %s (tick %d): %s" % (
                    what, self.tick, self.view))
            if snap(sm):
                self._apply(sm.snapshot)

    def ticks(self, n, what="ticks"):
        t = self.tick
        self.until(lambda w: w.tick >= t + n, "%d %s" % (n, what))

    def get(self, body_id, key):
        st = self.view.get(body_id)
        return st.get(key) if st else None


def resting(w, body_id, y, ground_id):
    st = w.view.get(body_id)
    return (st is not None and st["grounded"] and st["ground_id"] == ground_id and
            abs(st["y"] - y) <= NEAR and st["vy"] == 0)


def wait_resting(w, body_id, y, ground_id, what, timeout=ct.REPLY_TIMEOUT):
    w.until(lambda w: resting(w, body_id, y, ground_id), what, timeout)


# ---------------------------------------------------------------------------------------------
# Welcome


@test
def welcome_gravity_and_features():
    for gravity in (GRAVITY, (2.5, -12.25)):
        d = ct.Daemon(world=side_world(gravity=gravity))
        c = d.client()
        w = c.hello()
        check("characters" in w.features and "one_way" in w.features,
              "Welcome.features lists characters and one_way: %s" % list(w.features))
        check(w.HasField("gravity") and (w.gravity.x, w.gravity.y) == gravity,
              "Welcome.gravity %s, the world file's %s" % ((w.gravity.x, w.gravity.y), gravity))
        c.close()
        d.stop_and_check()
    # A world without gravity: the field left out (it reads (0, 0)), the features still there.
    d = ct.Daemon(world=ct.write_world())
    w = d.client().hello()
    check(not w.HasField("gravity") and w.gravity.x == 0 and w.gravity.y == 0,
          "no gravity: Welcome.gravity left out")
    check("characters" in w.features and "one_way" in w.features, "features in any world")
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Falling, landing, standing


@test
def character_falls_and_lands():
    d, admin = ct.daemon_with_admin(world=side_world())
    plat = admin.spawn_ok(ct.box(5, 0.5), 30, 0, kind=ct.pb.BODY_KIND_STATIC)
    carrier = admin.spawn_ok(ct.box(4, 0.5), -70, -10)  # an admin's mover: a moving platform
    w = Watcher(d)
    p = d.client()
    p.hello(name="player")
    a = p.spawn_ok(char_box(), -30, 10, character={})   # onto the bottom bound
    b = p.spawn_ok(char_box(), 30, 10, character={})    # onto the static
    r = p.spawn_ok(char_box(), -70, 0, character={})    # onto the moving platform
    admin.move(carrier, 3.0, 0.0)
    wait_resting(w, a, REST, 0, "a on the bottom bound", timeout=20)
    wait_resting(w, b, 0.5 + HALF[1], plat, "b on the static", timeout=20)
    w.until(lambda w: w.get(r, "grounded") and w.get(r, "ground_id") == carrier,
            "the rider on the moving platform", timeout=20)
    # The fall: along gravity the velocity grows by g dt each tick, semi-implicit (the new
    # velocity moves it); not grounded, no ground id, until it lands.
    ticks = sorted(t for t in w.states if a in w.states[t])
    falling = [t for t in ticks if not w.states[t][a]["grounded"]]
    check(len(falling) >= 20, "a fell for %d ticks" % len(falling))
    dv = GRAVITY[1] / RATE
    steps = 0
    for t0, t1 in zip(falling, falling[1:]):
        s0, s1 = w.states[t0][a], w.states[t1][a]
        check(s0["ground_id"] == 0 and s1["y"] <= s0["y"] and s0["vx"] == 0,
              "tick %d: falling straight down, nothing stood on: %s" % (t0, s0))
        if t1 == t0 + 1 and s0["vy"] < 0 and s1["y"] > REST + 1:
            check(abs((s1["vy"] - s0["vy"]) - dv) < 1e-3,
                  "tick %d: vy %r -> %r, want + %r (g dt)" % (t1, s0["vy"], s1["vy"], dv))
            check(abs((s1["y"] - s0["y"]) - s1["vy"] / RATE) < 1e-3,
                  "tick %d: the new velocity moves it (semi-implicit)" % t1)
            steps += 1
    check(steps >= 10, "%d falling ticks checked" % steps)
    landed = next(t for t in ticks if w.states[t][a]["grounded"])
    check(w.states[landed][a]["ground_id"] == 0 and
          abs(w.states[landed][a]["y"] - REST) <= NEAR,
          "landed on the bottom bound: %s" % w.states[landed][a])
    # Carried: the rider moves with its platform (x grows at the platform's 3 u/s).
    x0, t0 = w.get(r, "x"), w.tick
    w.ticks(30)
    moved = w.get(r, "x") - x0
    want = 3.0 * (w.tick - t0) / RATE
    check(abs(moved - want) < 0.05 and w.get(r, "grounded") and w.get(r, "ground_id") == carrier,
          "the rider carried %g (want %g), still on %d: %s" % (moved, want, carrier, w.view[r]))
    # The player's own snapshots (its default view) say the same.
    p.sync()
    check(p.view[a]["grounded"] and p.view[a]["ground_id"] == 0, "own view: a grounded on 0")
    check(p.view[b]["grounded"] and p.view[b]["ground_id"] == plat, "own view: b on the static")
    # Gone: a character whose ground is despawned falls again (a change of grounded).
    admin.send(ct.msg_despawn(0, plat))
    w.until(lambda w: not w.get(b, "grounded") and w.get(b, "ground_id") == 0, "b falls again")
    wait_resting(w, b, REST, 0, "b on the bottom bound", timeout=20)
    d.stop_and_check()


@test
def jump_only_when_grounded():
    d = ct.Daemon(world=side_world())
    w = Watcher(d)
    p = d.client()
    p.hello(name="jumper")
    opts = dict(jump_speed=12.0, jump_buffer_ms=1, coyote_ms=1)  # a press lives one tick
    a = p.spawn_ok(char_box(), -40, 10, character=opts)
    b = p.spawn_ok(char_box(), 40, 10, character=opts)   # a's twin: the same fall, no jumps
    c = p.spawn_ok(char_box(), 0, REST, character={})   # jump_speed 0: cannot jump
    w.until(lambda w: a in w.view and b in w.view, "both characters")
    # In the air: a jump with every intent (a new input_seq each), high above the ground.
    air = 0
    while w.get(a, "y") > 0:
        p.move(a, 0.0, 0.0, jump=True)
        p.move(b, 0.0, 0.0)
        air += 1
        w.ticks(1)
    check(air >= 10, "%d jumps pressed in the air" % air)
    wait_resting(w, a, REST, 0, "a landed", timeout=20)
    wait_resting(w, b, REST, 0, "b landed", timeout=20)
    both = [t for t in sorted(w.states) if a in w.states[t] and b in w.states[t]]
    for t in both:
        sa, sb = w.states[t][a], w.states[t][b]
        check(abs(sa["y"] - sb["y"]) < 1e-4 and abs(sa["vy"] - sb["vy"]) < 1e-4,
              "tick %d: jumps in the air changed nothing: a %s, its twin %s" % (t, sa, sb))
        check(sa["vy"] <= 0, "tick %d: a never rose in the air (vy %r)" % (t, sa["vy"]))
    # On the ground: one jump, at jump_speed; its twin stays.
    p.move(a, 0.0, 0.0, jump=True)
    w.until(lambda w: not w.get(a, "grounded"), "a took off")
    t_off = w.tick
    check(abs(w.get(a, "vy") - 12.0) < 0.5 + 1e-3 and w.get(a, "ground_id") == 0,
          "the jump sets jump_speed along up: %s" % w.view[a])
    # Jumps pressed while it rises: none is taken (never in the air).
    pressed = 0
    while w.get(a, "vy") > 6.0:
        p.move(a, 0.0, 0.0, jump=True)
        pressed += 1
        w.ticks(1)
    check(pressed >= 3, "%d jumps pressed while rising" % pressed)
    wait_resting(w, a, REST, 0, "a back on the ground", timeout=20)
    flight = [w.states[t][a] for t in sorted(w.states) if t >= t_off and a in w.states[t]]
    for s0, s1 in zip(flight, flight[1:]):
        if not s1["grounded"]:
            check(s1["vy"] < s0["vy"] + 1e-6, "one jump: vy only falls in the air (%r -> %r)"
                  % (s0["vy"], s1["vy"]))
    apex = max(s["y"] for s in flight) - REST
    check(2.0 < apex < 2.7, "one jump's height (12^2 / 60 = 2.4 u, stepped): %g" % apex)
    check(resting(w, b, REST, 0), "the twin never jumped: %s" % w.view[b])
    # The same input_seq again (stale): no jump. A new one: a jump.
    # (the newest input_seq sent to a, last pressed in the air: equal is stale as older is)
    p.send(ct.msg_move(0, a, p.next_seq - 1, 0.0, 0.0, jump=True))
    t = w.tick
    w.until(lambda w: w.tick >= t + 30 or not w.get(a, "grounded"), "30 ticks")
    check(resting(w, a, REST, 0), "a stale input_seq's jump is none: %s" % w.view[a])
    p.move(a, 0.0, 0.0, jump=True)
    w.until(lambda w: not w.get(a, "grounded"), "a new input_seq's jump")
    # jump_speed 0 (the default): it cannot jump.
    p.move(c, 0.0, 0.0, jump=True)
    t = w.tick
    w.until(lambda w: w.tick >= t + 30, "30 ticks")
    check(all(w.states[k][c]["grounded"] and w.states[k][c]["vy"] == 0
              for k in w.states if k > t and c in w.states[k]),
          "jump_speed 0 cannot jump: %s" % w.view[c])
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# One-way bodies


@test
def one_way_landing_and_passing_from_below():
    d, admin = ct.daemon_with_admin(world=side_world())
    top = -15.0 + 0.5
    plat = admin.spawn_ok(ct.box(10, 0.5), 0, -15, kind=ct.pb.BODY_KIND_STATIC, one_way=True)
    w = Watcher(d)
    p = d.client()
    p.hello(name="player")
    # Dropped onto it from above: lands on it.
    a = p.spawn_ok(char_box(), -5, 10, character={})
    wait_resting(w, a, top + HALF[1], plat, "dropped onto the one-way platform: lands",
                 timeout=20)
    # From below: standing on the bottom bound under it, a jump carries it up through the
    # platform, and it lands on top.
    b = p.spawn_ok(char_box(), 5, REST, character=dict(jump_speed=25.0))
    wait_resting(w, b, REST, 0, "b under the platform")
    t0 = w.tick
    p.move(b, 0.0, 0.0, jump=True)
    wait_resting(w, b, top + HALF[1], plat, "jumped up through the one-way platform: on top",
                 timeout=20)
    inside = [t for t in w.states if t > t0 and b in w.states[t] and
              abs(w.states[t][b]["y"] - (-15.0)) < HALF[1] + 0.5]
    check(inside, "b passed through the platform (it overlapped it on the way up)")
    d.stop_and_check()


@test
def one_way_rule_with_intents():
    """Without gravity: plain bodies driven by their intents, the rule alone."""
    d, admin = ct.daemon_with_admin(ct.WHOLE_WORLD_VIEW)
    plat = admin.spawn_ok(ct.box(10, 0.5), 0, 0, kind=ct.pb.BODY_KIND_STATIC, one_way=True)
    wall = admin.spawn_ok(ct.box(10, 0.5), 50, 0, kind=ct.pb.BODY_KIND_STATIC)
    w = Watcher(d)
    p = d.client()
    p.hello()
    down = p.spawn_ok(ct.circle(0.5), -5, 5)
    up = p.spawn_ok(ct.circle(0.5), 5, -5)
    control = p.spawn_ok(ct.circle(0.5), 50, -5)
    p.move(down, 0.0, -20.0)
    p.move(up, 0.0, 20.0)
    p.move(control, 0.0, 20.0)
    w.until(lambda w: (w.get(up, "y") or 0) > 5 and w.tick > 60, "the bodies' moves", timeout=20)
    check(abs(w.get(down, "y") - 1.0) <= NEAR, "from above: stopped on the one-way platform at "
          "y 1, got %r" % w.get(down, "y"))
    check(w.get(up, "y") > 5, "from below: passed through it, at %r" % w.get(up, "y"))
    check(abs(w.get(control, "y") - (-1.0)) <= NEAR, "a plain static blocks from below: %r"
          % w.get(control, "y"))
    check(w.view[plat]["one_way"] and not w.view[wall]["one_way"], "one_way as spawned")
    d.stop_and_check()


class Watch:
    """collide-client watch --bodies in the background. Its output goes to a file, not a pipe: a
    pipe nobody reads until the end fills and stops the watch mid-run (over UDP its acks then stop
    too, and the daemon falls back to full snapshots)."""

    def __init__(self, port, count, *extra):
        self.out = tempfile.TemporaryFile(mode="w+")
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([ct.OPTS.client, "watch", "--port", str(port), "--bodies",
                                      "--count", str(count), *extra],
                                     stdout=self.out, stderr=self.err, text=True)

    def finish(self, what, timeout=120):
        """Waits for it; checks it ended well; returns its output."""
        try:
            self.proc.wait(timeout)
        finally:
            self.kill()
        self.out.seek(0)
        self.err.seek(0)
        out, err = self.out.read(), self.err.read()
        check(self.proc.returncode == 0, "%s ends well (%s): %s" % (what, self.proc.returncode,
                                                                    err[-300:]))
        return out

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_watch(port, count, *extra):
    return Watch(port, count, *extra)


BODY_LINE = re.compile(r"  body (\d+) kind (\d+) owner \d+ pos \(([-\d.]+), ([-\d.]+)\) vel "
                       r"\(([-\d.]+), ([-\d.]+)\) angle [-\d.]+ w [-\d.]+ seq \d+.*?"
                       r"(?: grounded (\d) ground (\d+))?( one_way)?$")


def parse_watch(text):
    """collide-client watch --bodies: tick -> {id: state} after each snapshot, and the ids whose
    first line said one_way. A snapshot's removals apply before its bodies, whatever the print's
    order (over UDP an id whose body was replaced is listed in both)."""
    states, view, first_one_way = {}, {}, set()
    tick, bodies, removed = None, [], []

    def close():
        if tick is None:
            return
        for i in removed:
            view.pop(i, None)
        for i, st, ow in bodies:
            if i not in view and ow:
                first_one_way.add(i)
            view[i] = st
        states[tick] = {i: dict(v) for i, v in view.items()}

    for line in text.splitlines():
        m = re.match(r"tick (\d+): (ignored)?", line)
        if m:
            close()
            tick, bodies, removed = (None if m.group(2) else int(m.group(1))), [], []
            continue
        m = BODY_LINE.match(line)
        if m:
            # a line without grounded says false and 0, as the BodyState it prints
            bodies.append((int(m.group(1)),
                           dict(x=float(m.group(3)), y=float(m.group(4)), vx=float(m.group(5)),
                                vy=float(m.group(6)), grounded=m.group(7) == "1",
                                ground_id=int(m.group(8) or 0)),
                           m.group(9) is not None))
            continue
        m = re.match(r"  removed (\d+)", line)
        if m:
            removed.append(int(m.group(1)))
    close()
    return states, first_one_way


@test
def one_way_round_trip():
    world = ct.write_world(statics=[(60, 60, {"box": {"half_extents": [5, 0.5]}, "one_way": True}),
                                    (-60, 60, {"box": {"half_extents": [5, 0.5]}})])
    d, admin = ct.daemon_with_admin(ct.WHOLE_WORLD_VIEW, world=world)
    f, q = Watcher(d), Watcher(d, quantized=True)
    cf = run_watch(d.game_port, 90)
    cq_ = run_watch(d.game_port, 90, "--quantized", "--check")
    try:
        s1 = admin.spawn_ok(ct.box(3, 0.5), 0, 30, kind=ct.pb.BODY_KIND_STATIC, one_way=True)
        s2 = admin.spawn_ok(ct.box(3, 0.5), 20, 30, kind=ct.pb.BODY_KIND_STATIC)
        m1 = admin.spawn_ok(ct.box(3, 0.5), 0, -30, one_way=True)
        p = d.client()
        p.hello()
        m2 = p.spawn_ok(ct.circle(1), -20, -30, one_way=True)
        m3 = p.spawn_ok(ct.circle(1), 20, -30)
        p.move(m2, 2.0, 0.0)
        admin.move(m1, 0.0, 1.0)
        f.until(lambda w: all(i in w.view for i in (s1, s2, m1, m2, m3)) and
                abs(w.get(m2, "vx") - 2.0) < 1e-3, "every body, m2 moving")
        f.ticks(10)
        q.until(lambda w: w.tick >= f.tick, "the quantized watcher at the same tick")
        one_way = {i for i, st in f.view.items() if st["one_way"]}
        file_ow = {i for i, st in f.view.items()
                   if st["kind"] == ct.pb.BODY_KIND_STATIC and abs(st["x"] - 60) < 1e-6}
        check(len(file_ow) == 1, "the world file's one-way static is in view")
        want = {s1, m1, m2} | file_ow
        check(one_way == want, "float: one_way on exactly the one-way bodies: %s, want %s"
              % (sorted(one_way), sorted(want)))
        for i, b in f.first.items():
            check(b.one_way == (i in want),
                  "float: body %d's new record one_way %s" % (i, b.one_way))
        # quantized: bit 8 on the new records of exactly those, never on a change record
        qow = {i for i, fl in q.first.items() if fl & cq.ONE_WAY}
        check(qow == want, "quantized: bit 8 on %s, want %s" % (sorted(qow), sorted(want)))
        for t, recs in q.flags.items():
            for i, fl in recs.items():
                check(not fl & cq.ONE_WAY or fl & cq.NEW, "tick %d: bit 8 only with bit 5" % t)
                check(not fl & cq.GROUND, "tick %d: no character, no bit 7 (body %d)" % (t, i))
        check({i for i, st in q.view.items() if st["one_way"]} == want, "decoded one_way")
        # collide-client watch, float and quantized: "one_way" on those bodies' first lines
        for w, what in ((cf, "float"), (cq_, "quantized --check")):
            _, first = parse_watch(w.finish("watch " + what))
            check(first == want, "watch %s: one_way on %s, want %s" % (what, sorted(first),
                                                                       sorted(want)))
    finally:
        cf.kill()
        cq_.kill()
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Refusals


@test
def static_character_refused():
    d, admin = ct.daemon_with_admin()
    player = d.client()
    player.hello()

    def bodies():
        admin.sync()  # ListRooms' figures are the last tick's
        rl = admin.list_rooms()
        return next(r.bodies for r in rl.room_list.rooms if r.name == "default")

    before = bodies()
    rid = admin.rid()
    admin.send(ct.msg_spawn(rid, ct.box(2, 2), 0, 0, kind=ct.pb.BODY_KIND_STATIC, character={}))
    sm = admin.expect_error(rid, "BAD_REQUEST", "a static with character", fatal=False)
    check("static" in sm.error.message and "character" in sm.error.message,
          "the error says why: %r" % sm.error.message)
    # options a character cannot have: non-finite, negative
    for opts in (dict(max_slope=float("nan")), dict(jump_speed=float("inf")),
                 dict(step_height=-1.0), dict(gravity_scale=-2.0), dict(snap_distance=-0.5)):
        rid = player.rid()
        player.send(ct.msg_spawn(rid, ct.box(1, 1), 0, 0, character=opts))
        sm = player.expect_error(rid, "BAD_REQUEST", "character %s" % opts, fatal=False)
        check("character options" in sm.error.message, "it names the options: %r"
              % sm.error.message)
    # a player's static is FORBIDDEN first (statics are for admins), character or not
    rid = player.rid()
    player.send(ct.msg_spawn(rid, ct.box(1, 1), 0, 0, kind=ct.pb.BODY_KIND_STATIC, character={}))
    player.expect_error(rid, "FORBIDDEN", "a player's static character", fatal=False)
    check(bodies() == before, "nothing was spawned (%d bodies, %d before)" % (bodies(), before))
    # the same requests done right are taken
    player.spawn_ok(ct.box(1, 1), 0, 0, character=dict(jump_speed=5.0, coyote_ms=50))
    admin.spawn_ok(ct.box(2, 2), 10, 10, kind=ct.pb.BODY_KIND_STATIC, one_way=True)
    check(bodies() == before + 2, "two bodies spawned (%d, %d before)" % (bodies(), before))
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# 1.1 worlds and worlds whose characters never stand


def no_bits_7_8(w, what):
    seen = 0
    for t, recs in w.flags.items():
        for i, fl in recs.items():
            check(fl <= cq.KNOWN_FLAGS & 0x7F, "%s: tick %d, body %d: flags 0x%x (1.1's only)"
                  % (what, t, i, fl))
            seen += 1
    check(seen >= 20, "%s: %d records seen" % (what, seen))
    for st in w.view.values():
        check(not st["grounded"] and st["ground_id"] == 0 and not st["one_way"],
              "%s: decoded as before: %s" % (what, st))


@test
def plain_world_has_no_bits_7_8():
    d, admin = ct.daemon_with_admin(ct.WHOLE_WORLD_VIEW)
    admin.spawn_ok(ct.box(2, 2), 30, 30, kind=ct.pb.BODY_KIND_STATIC)
    q = Watcher(d, quantized=True)
    cw = run_watch(d.game_port, 60, "--quantized", "--check")
    try:
        p = d.client()
        p.hello()
        ids = [p.spawn_ok(s, -20 + 10 * i, 0) for i, s in
               enumerate((ct.box(1, 0.5), ct.circle(0.8), ct.regular_polygon(5, 1.0)))]
        for k, i in enumerate(ids):
            p.move(i, 3.0 - k, 2.0 * k - 1, w=0.5 * k)
        q.ticks(60)
        no_bits_7_8(q, "1.1 world")
        out = cw.finish("watch --quantized --check")
        check("violations 0" in out, "watch --quantized --check: no violation")
        check(" grounded " not in out and "one_way" not in out, "the C client says nothing new")
        check(len(parse_watch(out)[0]) >= 30, "the C client decoded the snapshots")
    finally:
        cw.kill()
    d.stop_and_check()
    # Characters without gravity move as plain bodies and never stand: no bit 7 either.
    d = ct.Daemon(ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    q = Watcher(d, quantized=True)
    f = Watcher(d)
    p = d.client()
    p.hello()
    a = p.spawn_ok(char_box(), 0, 0, character=dict(jump_speed=10.0))
    p.move(a, 3.0, 4.0, jump=True)
    f.until(lambda w: abs((w.get(a, "vx") or 0) - 3.0) < 1e-3, "the character moving")
    f.ticks(30)
    q.until(lambda w: w.tick >= f.tick, "the quantized watcher")
    check(abs(f.get(a, "vx") - 3.0) < 1e-3 and abs(f.get(a, "vy") - 4.0) < 1e-3,
          "no gravity: the intent's velocity, both axes, no jump: %s" % f.view[a])
    check(all(not s[a]["grounded"] for s in f.states.values() if a in s), "never grounded")
    no_bits_7_8(q, "characters without gravity")
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Every decoder against the float snapshots


def side_scene(d, admin):
    """Characters falling onto the bottom bound, a static, a one-way platform and a moving
    platform, one of them jumping every 0.6 s from a thread. Returns (ids, stop, thread)."""
    plat = admin.spawn_ok(ct.box(5, 0.5), 30, -10, kind=ct.pb.BODY_KIND_STATIC)
    ow = admin.spawn_ok(ct.box(5, 0.5), -30, -10, kind=ct.pb.BODY_KIND_STATIC, one_way=True)
    carrier = admin.spawn_ok(ct.box(4, 0.5), 60, -15)
    admin.move(carrier, -2.0, 0.0)
    p = d.client()
    p.hello(name="player")
    ids = [p.spawn_ok(char_box(), x, 5 + 3 * k, character=dict(jump_speed=10.0))
           for k, x in enumerate((0, 30, -30, 60, 80))]
    stop = threading.Event()

    def drive():
        k = 0
        while not stop.is_set():
            p.move(ids[k % len(ids)], 2.0 * ((k % 3) - 1), 0.0, jump=True)
            k += 1
            try:
                p.non_snapshots(0.6)
            except ct.ConnectionClosed:
                return

    t = threading.Thread(target=drive, daemon=True)
    t.start()
    return dict(ids=ids, plat=plat, ow=ow, carrier=carrier), stop, t


def compare_ground(fw, other, what, pq, vq, printed=0.0):
    """At every tick both have: the same bodies, grounded and ground_id equal, positions and
    velocities within half a quantum (plus `printed` for text)."""
    common = sorted(set(fw) & set(other))
    # From the first tick both hold the same bodies on (a watcher's view is set after its Hello)
    start = next((t for t in common if set(fw[t]) == set(other[t]) and fw[t]), None)
    common = [t for t in common if start is not None and t >= start]
    check(len(common) >= 20, "%s: %d common ticks" % (what, len(common)))
    grounded = airborne = 0
    for t in common:
        f, o = fw[t], other[t]
        check(set(f) == set(o), "%s, tick %d: bodies %s vs %s" % (what, t, sorted(f), sorted(o)))
        for i, fs in f.items():
            os_ = o[i]
            check(fs["grounded"] == os_["grounded"] and fs["ground_id"] == os_["ground_id"],
                  "%s, tick %d, body %d: grounded %s on %d vs %s on %d" % (
                      what, t, i, fs["grounded"], fs["ground_id"], os_["grounded"],
                      os_["ground_id"]))
            ptol = pq / 2 + 1e-6 * max(1.0, abs(fs["x"]), abs(fs["y"])) + printed
            vtol = vq / 2 + 1e-6 * max(1.0, abs(fs["vx"]), abs(fs["vy"])) + printed
            check(abs(fs["x"] - os_["x"]) <= ptol and abs(fs["y"] - os_["y"]) <= ptol and
                  abs(fs["vx"] - os_["vx"]) <= vtol and abs(fs["vy"] - os_["vy"]) <= vtol,
                  "%s, tick %d, body %d: %s vs %s" % (what, t, i, fs, os_))
            grounded += fs["grounded"]
            airborne += not fs["grounded"] and fs["vy"] != 0  # falling or jumping
    check(grounded > len(common) and airborne > 0,
          "%s: characters stood (%d) and flew (%d)" % (what, grounded, airborne))
    return len(common)


def kinds_of(fw_states, other):
    """The float watcher's kinds copied into text-parsed states (which lack them)."""
    for t, bodies in other.items():
        for i, st in bodies.items():
            st.setdefault("kind", fw_states.get(t, {}).get(i, {}).get("kind", 0))
    return other


@test
def tcp_decoders_agree_on_characters():
    d, admin = ct.daemon_with_admin(world=side_world())
    f, q = Watcher(d), Watcher(d, quantized=True)
    cf = run_watch(d.game_port, 240)
    cw = run_watch(d.game_port, 240, "--quantized", "--check")
    scene, stop, t = side_scene(d, admin)
    try:
        ids = scene["ids"]
        f.until(lambda w: all(w.get(i, "grounded") for i in ids[:3]), "characters standing",
                timeout=20)
        f.ticks(150)
        q.until(lambda w: w.tick >= f.tick, "the quantized watcher")
        compare_ground(f.states, q.states, "Python quantized", q.dec.pq, q.dec.vq)
        # bit 7 on change records when a character lands or takes off; a record of a standing
        # character that has bit 7 says grounded
        changes = [(tk, i) for tk, recs in q.flags.items() for i, fl in recs.items()
                   if fl & cq.GROUND and not fl & cq.NEW]
        check(len(changes) >= 4, "bit 7 on landing and take-off records (%d)" % len(changes))
        seen = set(scene[k] for k in ("plat", "ow", "carrier"))
        grounds = {st["ground_id"] for s in f.states.values() for st in s.values()}
        check(seen <= grounds | {0} and 0 in grounds,
              "characters stood on the bounds, the static, the one-way and the moving platform: "
              "%s of %s" % (sorted(grounds), sorted(seen)))
        # A watcher that arrives now: the new records of standing characters set bit 7.
        late = Watcher(d, quantized=True, name="late")
        late.until(lambda w: all(i in w.view for i in ids), "the late watcher's view")
        standing = [i for i in ids if late.view.get(i, {}).get("grounded")]
        check(standing, "some characters standing for the late watcher")
        for i in standing:
            check(late.first[i] & cq.GROUND and late.first[i] & cq.NEW,
                  "the new record of standing character %d sets bit 7 (flags 0x%x)"
                  % (i, late.first[i]))
        check(late.first[scene["ow"]] & cq.ONE_WAY, "and a one-way body's, bit 8")
        for w, what, quanta in ((cf, "watch (float)", None), (cw, "watch --quantized", q)):
            out = w.finish(what)
            if quanta:
                check("violations 0" in out, "%s --check: no violation" % what)
            states, _ = parse_watch(out)
            pq = q.dec.pq if quanta else 0.0
            vq = q.dec.vq if quanta else 0.0
            compare_ground(f.states, kinds_of(f.states, states), "collide-client " + what, pq,
                           vq, printed=0.001)
    finally:
        stop.set()
        t.join(5)
        cf.kill()
        cw.kill()
    d.stop_and_check()


@test
def udp_decoders_agree_on_characters():
    """Over UDP every snapshot is quantized and a delta against an acknowledged baseline: bit 7 is
    taken against the baseline's ground (the Python baseline decoder and collide-client watch
    --transport udp)."""
    from udp_baseline import BaselineDecoder
    from udp_client import UdpClient
    d = ct.Daemon(["--admin-token", "adm1n"], world=side_world(), udp=True)
    admin = d.client()
    admin.hello(token="adm1n")
    f = Watcher(d)
    cw = Watch(d.udp_port, 200, "--transport", "udp")
    u = UdpClient(d.udp_port)
    w = u.hello(name="udp watch")
    u.send(ct.msg_set_view(2, 0, 40, 100, 60))
    dec = BaselineDecoder(ct.pb, w.position_quantum, w.velocity_quantum)
    states = {}
    scene, stop, t = side_scene(d, admin)
    try:
        f.until(lambda w: all(w.get(i, "grounded") for i in scene["ids"][:3]),
                "characters standing", timeout=20)
        deadline = time.monotonic() + 30
        while len(states) < 150 and time.monotonic() < deadline:
            ch, sm = u.message("snapshot")
            if dec.apply(sm.snapshot) is None:
                continue
            ack = ct.pb.ClientMessage()
            ack.snapshot_ack.tick = sm.snapshot.tick
            u.send(ack, channel=1, flags=0)
            if not all(i in dec.bodies for i in scene["ids"]):
                continue  # its view not set yet
            pq, vq = dec.q.pq, dec.q.vq
            states[sm.snapshot.tick] = {
                i: dict(x=b.px * pq, y=b.py * pq, vx=b.vx * vq, vy=b.vy * vq, grounded=b.grounded,
                        ground_id=b.ground_id) for i, b in dec.bodies.items()}
        f.until(lambda w: w.tick >= max(states), "the float watcher")
        compare_ground(f.states, kinds_of(f.states, states), "UDP baselines", dec.q.pq, dec.q.vq)
        cstates, _ = parse_watch(cw.finish("watch --transport udp"))
        compare_ground(f.states, kinds_of(f.states, cstates), "collide-client watch udp",
                       dec.q.pq, dec.q.vq, printed=0.001)
    finally:
        stop.set()
        t.join(5)
        cw.kill()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

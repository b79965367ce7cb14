#!/usr/bin/env python3
"""Recordings (protocol 1.2, PROTOCOL.md "Recordings", docs/operations.md "Recordings"), against
the real daemon on real sockets and a real disk:
- rooms recorded under load with every kind of input (boxes, circles and polygons spawned, turning
  bodies, despawns, intents, move batches, characters jumping in a side-on world, an admin's
  statics with filters, sensors and one-way platforms, a leaving player's bodies, rooms created,
  closed and idle-closed, room names that need escaping): every file ends cleanly and replays
  with `collide-client replay FILE --verify` (exit 0, hashes checked);
- StartRecording / StopRecording / RecordingInfo: admins only, NOT_FOUND without --record-dir,
  --record-rooms none records nothing until StartRecording, a start on an active recording
  answers its info without a restart, a stop finishes the file, the next start a new file;
- rotation at a small --record-max-bytes with --record-keep 2: at most 2 files of the room stay,
  the newest, each replays on its own and each starts where the one before ended;
- a full disk (a 512 KiB tmpfs in a mount namespace) drops the recording (disk_full, a log line),
  never the tick: clients keep their snapshots, the tick counter keeps the tick rate, and the cut
  file still replays to its last whole tick; --record-buffer-bytes crossed drops it (buffer_full);
- --record-http: off by default (404); on, GET /recordings lists the files and GET
  /recordings/NAME sends one byte for byte (CORS header), any other name is 404;
- an independent reader (journal_reader.py, from docs/recording.md) copies a daemon's journal
  byte for byte, and a copy without one intent fails --verify naming a tick at or after it;
- the collide_record_bytes_total, collide_recordings_active and
  collide_recordings_dropped_total{reason} metrics."""

import glob
import math
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, describe, kind_of, test  # noqa: E402
import journal_reader as jr  # noqa: E402

ADMIN = "adm1n"
RATE = 60.0
NAME_RX = re.compile(r"^([A-Za-z0-9_~-]+)\.(\d{6,})\.cjournal$")
GRAVITY = (0.0, -30.0)
SIDE_BOUNDS = ((-100.0, -20.0), (100.0, 100.0))


# ---- helpers -------------------------------------------------------------------------------


def record_dir():
    path = tempfile.mkdtemp(prefix="collide-itest-rec-")
    ct._TEMP_DIRS.append(path)
    return path


def cleanup(d):
    shutil.rmtree(d, ignore_errors=True)


def daemon(rdir, args=(), **kw):
    """collided recording into rdir, without the overload detector (ASan on 2 shared cores runs
    ticks late, and "at capacity" is not under test), with small worlds: the image of a world is
    its capacity's (--max-bodies), and small images make files rotate and disks fill fast."""
    base = ["--overload-window-ms", "0", "--admin-token", ADMIN, "--max-bodies", "2048"]
    if rdir is not None:
        base += ["--record-dir", rdir]
    return ct.Daemon(base + list(args), **kw)


def files_of(rdir, room_prefix=None):
    """The recordings in rdir (sorted by room, then number), or one room's."""
    out = []
    for name in os.listdir(rdir):
        m = NAME_RX.match(name)
        if m and (room_prefix is None or m.group(1) == room_prefix):
            out.append((m.group(1), int(m.group(2)), name))
    return [os.path.join(rdir, n) for _, _, n in sorted(out)]


def replay(path):
    """collide-client replay FILE --verify: (exit code, stdout + stderr)."""
    p = subprocess.run([ct.OPTS.client, "replay", path, "--verify"], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def replays_ok(path, what, want_hashes=True):
    rc, out = replay(path)
    check(rc == 0, "%s: collide-client replay %s --verify must exit 0, got %d:\n%s"
          % (what, os.path.basename(path), rc, out))
    m = re.search(r"(\d+) hashes checked", out)
    if want_hashes:
        check(m and int(m.group(1)) > 0, "%s: the replay of %s must check hashes: %s"
              % (what, os.path.basename(path), out))
    return out


def read_journal(path):
    data = open(path, "rb").read()
    h = jr.read_header(data)
    recs, cut = jr.read_records(data, h)
    return data, h, recs, cut


def last_tick(h, recs):
    return h.start_tick + sum(r.steps for r in recs if r.tag == jr.STEP)


def recording_msg(rid, start):
    m = ct.pb.ClientMessage(request_id=rid)
    (m.start_recording if start else m.stop_recording).SetInParent()
    return m


def recording(c, start):
    """StartRecording (start) or StopRecording; the reply (RecordingInfo or Error)."""
    return c.admin_request(recording_msg(0, start))


def info_of(sm, what):
    check(kind_of(sm) == "recording_info", "%s: expected RecordingInfo, got %s"
          % (what, describe(sm)))
    return sm.recording_info


def expect_refused(c, sm, code, what):
    """sm is a non-fatal Error{code}, and c is still served."""
    check(kind_of(sm) == "error" and sm.error.code == ct.code_of(code) and not sm.error.fatal,
          "%s: expected a non-fatal Error{%s}, got %s" % (what, code, describe(sm)))
    c.assert_open(what)


def metric(d, name, **labels):
    return ct.metric(d.metrics(), name, **labels)


def wait_until(pred, what, timeout=20.0, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise ct.TestFailure("timed out waiting for %s" % what)


def keep_reading(clients, seconds):
    """Reads every client's stream for about `seconds` (snapshots applied, nothing left unread)."""
    per = max(0.002, seconds / max(1, len(clients)))
    for c in clients:
        c.pump(per)


def see_all(c):
    c.send(ct.msg_set_view(c.rid(), 0, 0, 1000, 1000))
    return c


def msg_batch(rid, items):
    """MoveIntents of (body_id, seq, vx, vy, w)."""
    m = ct.pb.ClientMessage(request_id=rid)
    m.move_batch.SetInParent()
    for body_id, seq, vx, vy, w in items:
        it = m.move_batch.intents.add()
        it.body_id, it.input_seq, it.angular_velocity = body_id, seq, w
        it.velocity.x, it.velocity.y = vx, vy
    return m


def msg_spawn_filtered(rid, shape, x, y, kind, category=0, mask=0, sensor=False):
    m = ct.msg_spawn(rid, shape, x, y, kind)
    m.spawn.category, m.spawn.mask, m.spawn.sensor = category, mask, sensor
    return m


def side_world():
    statics = [
        (0, -19, {"box": {"half_extents": [90, 1]}}),
        (40, -10, {"polygon": {"vertices": [[-6, -2], [6, -2], [6, 2]]}}),
        (-40, 0, {"box": {"half_extents": [8, 0.5]}, "one_way": True}),
        (60, 20, {"circle": {"radius": 3}}),
    ]
    return ct.write_world(statics=statics, bounds=SIDE_BOUNDS, spawn_points=((0, 0), (10, 10)),
                          gravity=GRAVITY)


def polygon(n, r):
    return ct.regular_polygon(n, r)


# ---- every kind of input, replayed ---------------------------------------------------------


class Player:
    """A player's bodies and what it does to them each round: intents with new velocities (some
    turning), now and then a batch, a despawn and a new spawn, characters that jump."""

    def __init__(self, d, room, rng, characters=False):
        self.c = d.client()
        self.c.hello(room=room)
        see_all(self.c)
        self.rng = rng
        self.seq = 1
        self.bodies = []
        self.characters = characters
        if characters:
            for x in (-20.0, 20.0):
                self.bodies.append(self.c.spawn_ok(ct.box(0.5, 1.0), x, 5,
                                                   character={"jump_speed": 12.0}))
        else:
            for shape in (ct.box(1, 0.5), ct.circle(0.7), polygon(5, 1.0)):
                self.spawn(shape)

    def spawn(self, shape):
        for _ in range(8):
            sm = self.c.spawn(shape, self.rng.uniform(-60, 60), self.rng.uniform(0, 60))
            if kind_of(sm) == "spawned":
                self.bodies.append(sm.spawned.body_id)
                return

    def round(self, i):
        r = self.rng
        items = []
        for b in self.bodies:
            vx, vy = r.uniform(-8, 8), r.uniform(-8, 8)
            w = r.choice((0.0, 0.0, r.uniform(-3, 3)))
            jump = self.characters and r.random() < 0.3
            if self.characters:
                vy = 0.0
            items.append((b, self.seq, vx, vy, w, jump))
            self.seq += 1
        if i % 3 == 0 and not self.characters:  # a batch (a player's may batch too)
            self.c.send(msg_batch(0, [it[:5] for it in items]))
        else:
            self.c.send(*[ct.msg_move(0, b, s, vx, vy, w, jump) for b, s, vx, vy, w, jump in items])
        if i % 7 == 3 and len(self.bodies) > 1 and not self.characters:
            self.c.send(ct.msg_despawn(0, self.bodies.pop(0)))
            self.spawn(r.choice((ct.box(0.8, 0.8), ct.circle(0.5), polygon(6, 0.9))))


class Admin:
    """An admin's statics (filtered, sensors, one-way) and movers driven by batches that turn."""

    def __init__(self, d, room, rng):
        self.c = d.client()
        self.c.hello(token=ADMIN, room=room)
        see_all(self.c)
        self.rng = rng
        self.seq = 1
        c = self.c
        st = ct.pb.BODY_KIND_STATIC
        c.spawn_ok(ct.box(4, 0.5), -70, 30, kind=st, one_way=True)
        c.spawn_ok(polygon(7, 2.0), 70, 40, kind=st)
        rid = c.rid()
        c.send(msg_spawn_filtered(rid, ct.circle(3), 0, 50, st, category=2, mask=0xFFFF,
                                  sensor=True))
        check(kind_of(c.reply(rid)) == "spawned", "an admin's sensor static")
        rid = c.rid()
        c.send(msg_spawn_filtered(rid, ct.box(1, 1), 10, 60, ct.pb.BODY_KIND_MOVING,
                                  category=4, mask=0xFFFB))
        check(kind_of(c.reply(rid)) == "spawned", "an admin's filtered mover")
        self.movers = [c.spawn_ok(polygon(4, 1.2), -50 + 12 * k, 70, angle=0.3 * k)
                       for k in range(6)]
        self.movers.append(c.spawn_ok(ct.box(2, 0.5), 0, 80, one_way=True))

    def round(self, i):
        r = self.rng
        items = []
        for b in self.movers:
            items.append((b, self.seq, r.uniform(-6, 6), r.uniform(-6, 6), r.uniform(-4, 4)))
            self.seq += 1
        self.c.send(msg_batch(0, items))
        if i % 11 == 5:  # an admin's moving body despawned, another spawned in its place
            self.c.send(ct.msg_despawn(0, self.movers.pop(0)))
            sm = self.c.spawn(ct.circle(1.0), r.uniform(-50, 50), 75)
            if kind_of(sm) == "spawned":
                self.movers.append(sm.spawned.body_id)


@test
def every_kind_of_input_replays():
    rdir = record_dir()
    rng = random.Random(36)
    d = daemon(rdir, ["--record-hash-every", "7", "--threads", "2", "--room-idle-ms", "1500"],
               http=True, world=side_world())

    def started(room):  # a journal starts at the end of the room's first step (and a scan)
        check(d.wait_log(r"event=recording_started .*room=%s " % re.escape(room)),
              "the recording of room %s started" % room)

    started("default")  # so that the spawns below are records, not in the image
    boss = Admin(d, None, rng)
    check(kind_of(boss.c.create_room("match-1", "")) == "room_info", "CreateRoom match-1")
    check(kind_of(boss.c.create_room("r.2:x", "")) == "room_info", "CreateRoom r.2:x")
    started("match-1")
    started("r.2:x")
    actors = [boss,
              Player(d, None, rng), Player(d, None, rng, characters=True),
              Player(d, "match-1", rng), Admin(d, "match-1", rng),
              Player(d, "r.2:x", rng, characters=True),
              Player(d, "auto.1", rng)]  # auto-created on join
    leaver = Player(d, None, rng)  # leaves with its bodies: the release despawns them
    clients = [a.c for a in actors] + [leaver.c]
    b0 = metric(d, "collide_record_bytes_total")
    t_end = time.monotonic() + 4.0
    i = 0
    closed_match = left_auto = False
    while time.monotonic() < t_end:
        for a in actors:
            if a.c.closed:
                continue
            try:
                a.round(i)
            except (OSError, ct.ConnectionClosed):
                pass
        if i < 8:
            leaver.round(i)
        if i == 8:
            leaver.c.close()
            clients.remove(leaver.c)
        if i == 15 and not left_auto:  # the auto room's only player goes: it idle-closes
            left_auto = True
            auto = actors.pop()
            auto.c.close()
            clients.remove(auto.c)
        if time.monotonic() > t_end - 1.5 and not closed_match:
            closed_match = True
            check(kind_of(boss.c.close_room("match-1", "over")) == "room_info", "CloseRoom")
            for a in actors[3:5]:
                a.c.wait_closed()
                clients.remove(a.c)
            del actors[3:5]
        keep_reading(clients, 0.06)
        i += 1
    check(metric(d, "collide_recordings_active") >= 2,
          "default and r.2:x record: collide_recordings_active %s"
          % metric(d, "collide_recordings_active"))
    check(metric(d, "collide_record_bytes_total") > b0, "collide_record_bytes_total must grow")
    check(d.wait_log(r"event=recording_finished .*room=auto\.1 .*why=room closed", timeout=10),
          "the auto room idle-closed and its recording finished")
    for c in clients:
        c.close()
    d.stop_and_check()
    kinds, flags = set(), 0
    files = files_of(rdir)
    rooms = {}
    for f in files:
        data, h, recs, cut = read_journal(f)
        check(not cut, "%s ends with its END record after a clean stop" % os.path.basename(f))
        check(data == jr.write_journal(data, recs, h),
              "the Python reader copies %s byte for byte" % os.path.basename(f))
        rooms.setdefault(h.room, []).append(f)
        kinds |= {r.tag for r in recs}
        # --record-hash-every 7: a hash after exactly the steps whose tick is a multiple of 7
        steps = [r for r in recs if r.tag == jr.STEP]
        last = steps[-1].tick + steps[-1].steps if steps else h.start_tick
        hashed = [r.tick for r in recs if r.tag == jr.HASH]
        check(hashed == [t for t in range(h.start_tick + 1, last + 1) if t % 7 == 0],
              "%s: a hash at every multiple of 7 from tick %d to %d, no other"
              % (os.path.basename(f), h.start_tick, last))
        for r in recs:
            if r.tag == jr.INTENT:
                flags |= r.flags
        replays_ok(f, "room %s" % h.room)
    check(set(rooms) == {"default", "match-1", "r.2:x", "auto.1"},
          "a journal for each room, got %s" % sorted(rooms))
    check(os.path.basename(rooms["r.2:x"][0]) == "r~2e2~3ax.000001.cjournal",
          "a room name is escaped in its files' names, got %s" % rooms["r.2:x"])
    want = {jr.STEP, jr.HASH, jr.SPAWN, jr.DESPAWN, jr.FILTER, jr.ONE_WAY, jr.CHARACTER,
            jr.INTENT, jr.END}
    check(want <= kinds, "every kind of record was recorded; missing %s"
          % sorted(jr.NAMES.get(k, "INTENT") for k in want - kinds))
    check(flags & jr.I_JUMP and flags & jr.I_SPIN and flags & jr.I_VELOCITY,
          "intents with a jump, a turn and a velocity were recorded: flags 0x%02x" % flags)
    cleanup(rdir)


# ---- the admin messages --------------------------------------------------------------------


@test
def start_stop_and_recording_info():
    rdir = record_dir()
    d = daemon(rdir, ["--record-rooms", "none", "--record-hash-every", "5"], http=True,
               world=ct.write_world())
    boss = d.client()
    boss.hello(token=ADMIN)
    see_all(boss)
    p = d.client()
    p.hello()
    b = p.spawn_ok(ct.circle(1), 0, 0)
    for k in range(10):
        p.move(b, 3.0 + k, 0)
        p.pump(0.05)
    boss.pump(0.05)
    check(files_of(rdir) == [], "--record-rooms none: nothing recorded before StartRecording, "
          "got %s" % os.listdir(rdir))
    check(metric(d, "collide_recordings_active") == 0, "no room records yet")
    expect_refused(p, recording(p, True), "FORBIDDEN", "a player's StartRecording")
    info = info_of(recording(boss, True), "StartRecording")
    check(info.active and info.file == "default.000001.cjournal" and info.start_tick > 0
          and info.bytes > 0, "StartRecording answers the new file's info, got %s" % info)
    again = info_of(recording(boss, True), "StartRecording on an active recording")
    check(again.active and again.file == info.file and again.start_tick == info.start_tick,
          "a start on an active recording answers its info, no restart: %s then %s"
          % (info, again))
    check(metric(d, "collide_recordings_active") == 1, "one room records")
    bytes0 = metric(d, "collide_record_bytes_total")
    for k in range(20):
        p.move(b, -3.0 - k, 1)
        p.pump(0.03)
    wait_until(lambda: metric(d, "collide_record_bytes_total") > bytes0,
               "collide_record_bytes_total to grow while recording")
    stop = info_of(recording(boss, False), "StopRecording")
    check(not stop.active and stop.file == info.file and stop.bytes >= info.bytes
          and stop.start_tick == info.start_tick,
          "StopRecording finishes the file and says so: %s" % stop)
    path = os.path.join(rdir, stop.file)
    wait_until(lambda: os.path.getsize(path) == stop.bytes,
               "the stopped file's %d bytes on disk" % stop.bytes)
    check(metric(d, "collide_recordings_active") == 0, "nothing records after the stop")
    again = info_of(recording(boss, False), "StopRecording again")
    check(not again.active and again.file == stop.file, "a second stop: %s" % again)
    data, h, recs, cut = read_journal(path)
    check(not cut and h.start_tick == info.start_tick and h.room == "default",
          "the file's header: start tick %d room %s, cut %s" % (h.start_tick, h.room, cut))
    check(sum(1 for r in recs if r.tag == jr.INTENT) >= 10, "the intents were recorded")
    second = info_of(recording(boss, True), "StartRecording after a stop")
    check(second.active and second.file == "default.000002.cjournal"
          and second.start_tick > stop.start_tick, "the next start a new file: %s" % second)
    # an admin's room is the one it is in: another room's admin records that room
    check(kind_of(boss.create_room("other", "")) == "room_info", "CreateRoom other")
    other = d.client()
    other.hello(token=ADMIN, room="other")
    o = info_of(recording(other, True), "StartRecording in room other")
    check(o.file == "other.000001.cjournal", "the room of the admin records: %s" % o)
    wait_until(lambda: metric(d, "collide_recordings_active") == 2, "two rooms recording")
    for c in (boss, p, other):
        c.close()
    d.stop_and_check()
    replays_ok(path, "the stopped file")
    for f in files_of(rdir):
        replays_ok(f, "StartRecording's file", want_hashes=False)
    check(len(files_of(rdir)) == 3, "three files: %s" % os.listdir(rdir))
    cleanup(rdir)


@test
def not_found_without_record_dir():
    d = daemon(None, http=True, world=ct.write_world())
    boss = d.client()
    boss.hello(token=ADMIN)
    for start in (True, False):
        expect_refused(boss, recording(boss, start), "NOT_FOUND",
                       "Start/StopRecording without --record-dir")
    p = d.client()
    p.hello()
    expect_refused(p, recording(p, True), "FORBIDDEN", "a player's StartRecording")
    check(metric(d, "collide_recordings_active") == 0, "no recording")
    boss.close()
    p.close()
    d.stop_and_check()


@test
def record_dir_must_be_a_writable_directory():
    for bad in ("/etc/hostname/recordings", "/etc/hostname"):
        try:
            p = subprocess.run([ct.OPTS.collided, "--port", "0", "--http-port", "0", "--ws-port",
                                "0", "--udp-port", "0", "--record-dir", bad],
                               capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            raise ct.TestFailure("--record-dir %s: the daemon started (still running 20 s later)"
                                 % bad)
        check(p.returncode == 1 and "--record-dir" in p.stderr,
              "--record-dir %s must refuse the start (exit 1, saying why), got %d: %s"
              % (bad, p.returncode, p.stderr[-300:]))


# ---- rotation and keep ---------------------------------------------------------------------


def drive_movers(c, movers, seq, rng, rounds=1):
    """Batches of new velocities for the movers; returns the next seq."""
    for _ in range(rounds):
        items = []
        for b in movers:
            items.append((b, seq, rng.uniform(-5, 5), rng.uniform(-5, 5), 0.0))
            seq += 1
        c.send(msg_batch(0, items))
    return seq


@test
def rotation_keeps_the_newest_files_each_standing_alone():
    rdir = record_dir()
    rng = random.Random(7)
    d = daemon(rdir, ["--record-max-bytes", "65536", "--record-keep", "2",
                      "--record-hash-every", "10", "--max-bodies", "1024"], http=True,
               world=ct.write_world())
    boss = d.client()
    boss.hello(token=ADMIN)
    movers = [boss.spawn_ok(ct.circle(0.5), -400 + 8 * k, 0) for k in range(100)]
    seq = 1
    deadline = time.monotonic() + 60
    while len(re.findall(r"why=rotated", d.log_text())) < 4:
        check(time.monotonic() < deadline, "four rotations within 60 s:\n%s" % d.log_tail())
        seq = drive_movers(boss, movers, seq, rng)
        boss.pump(0.02)
    wait_until(lambda: len(re.findall(r"event=recording_deleted", d.log_text())) >= 3,
               "the oldest files deleted past --record-keep 2")
    wait_until(lambda: len(files_of(rdir, "default")) <= 2, "at most 2 files of the room")
    for _ in range(20):  # the newest file holds some ticks too
        seq = drive_movers(boss, movers, seq, rng)
        boss.pump(0.02)
    boss.close()
    d.stop_and_check()
    files = files_of(rdir, "default")
    check(len(files) == 2, "--record-keep 2: two files of the room stay, got %s"
          % [os.path.basename(f) for f in files])
    seqs = [int(NAME_RX.match(os.path.basename(f)).group(2)) for f in files]
    check(seqs[0] >= 4 and seqs[1] == seqs[0] + 1,
          "the newest stay and the oldest went: %s" % [os.path.basename(f) for f in files])
    heads = []
    for f in files:
        data, h, recs, cut = read_journal(f)
        heads.append((h, last_tick(h, recs)))
        check(h.start_tick > 1, "a rotated file starts with its own image (tick %d)"
              % h.start_tick)
        replays_ok(f, "a rotated file on its own", want_hashes=last_tick(h, recs) >=
                   h.start_tick + 10)
    check(heads[0][1] == heads[1][0].start_tick,
          "each file starts where the one before ended: %d then %d"
          % (heads[0][1], heads[1][0].start_tick))
    check(os.path.getsize(files[0]) >= 65536, "a rotated file reached --record-max-bytes")
    cleanup(rdir)


# ---- the bounds: a full disk, the buffer ---------------------------------------------------


def ticks(d):
    return metric(d, "collide_ticks_total")


def check_ticking(d, watcher, what):
    """The tick counter advances at about the tick rate, each step on time (not coalesced into a
    late tick's catch-up), and a client gets a snapshot a step."""
    t0, k0 = time.monotonic(), ticks(d)
    c0 = metric(d, "collide_steps_coalesced_total")
    s0 = watcher.snapshots
    watcher.pump(1.0)
    secs = time.monotonic() - t0
    rate = (ticks(d) - k0) / secs
    coalesced = (metric(d, "collide_steps_coalesced_total") - c0) / secs
    check(rate > 0.5 * RATE, "%s: collide_ticks_total must advance at about %g/s, got %.1f/s"
          % (what, RATE, rate))
    check(coalesced < 0.25 * RATE, "%s: steps run late and coalesced: %.1f/s" % (what, coalesced))
    check(watcher.snapshots - s0 > 0.5 * RATE, "%s: a client keeps getting snapshots (%d in 1 s)"
          % (what, watcher.snapshots - s0))


def fetch(d, name):
    """GET /recordings/NAME: (status, headers, body bytes)."""
    s = socket.create_connection(("127.0.0.1", d.http_port), timeout=10)
    s.sendall(("GET /recordings/%s HTTP/1.1\r\nHost: x\r\n\r\n" % name).encode())
    out = b""
    while True:
        x = s.recv(1 << 16)
        if not x:
            break
        out += x
    s.close()
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), headers, body


@test
def full_disk_drops_the_recording_never_the_tick():
    rdir = record_dir()
    rng = random.Random(3)
    # The daemon in a mount namespace of its own with a 512 KiB tmpfs over rdir: its files are
    # seen only from inside, so the cut one is fetched back over --record-http.
    wrapper = ["unshare", "-rm", "sh", "-c",
               'mount -t tmpfs -o size=512k none "$0" && exec "$@"', rdir]
    d = daemon(rdir, ["--record-http", "on", "--max-bodies", "1024", "--record-hash-every", "5"],
               http=True, world=ct.write_world(), wrapper=wrapper)
    boss = d.client()
    boss.hello(token=ADMIN)
    watcher = d.client()
    watcher.hello()
    see_all(watcher)
    movers = [boss.spawn_ok(ct.circle(0.5), -400 + 8 * k, 0) for k in range(100)]
    seq = 1
    deadline = time.monotonic() + 90
    while metric(d, "collide_recordings_dropped_total", reason="disk_full") == 0:
        check(time.monotonic() < deadline, "the disk filled within 90 s:\n%s" % d.log_tail())
        for _ in range(5):
            seq = drive_movers(boss, movers, seq, rng)
            keep_reading([boss, watcher], 0.02)
    line = d.wait_log(r"event=recording_dropped .*reason=disk_full")
    check(line is not None, "a log line says the recording was dropped for a full disk")
    check(len(re.findall(r"event=recording_dropped", d.log_text())) == 1, "one log line")
    check(metric(d, "collide_recordings_active") == 0, "the room no longer records")
    for _ in range(10):  # the room keeps ticking, inputs and all
        seq = drive_movers(boss, movers, seq, rng)
        keep_reading([boss, watcher], 0.02)
    check_ticking(d, watcher, "after the disk filled")
    ct.full_session(d, "a client after the disk filled")
    check(metric(d, "collide_recordings_dropped_total", reason="disk_full") == 1,
          "dropped once: it stays off until StartRecording")
    status, listing = d.http_get("/recordings")
    check(status == 200 and "default.000001.cjournal" in listing, "the cut file is listed: %s"
          % listing)
    status, _, body = fetch(d, "default.000001.cjournal")
    check(status == 200 and len(body) > 100000, "the cut file is served (%d, %d bytes)"
          % (status, len(body)))
    boss.close()
    watcher.close()
    d.stop_and_check()
    path = os.path.join(rdir, "cut.000001.cjournal")
    with open(path, "wb") as f:
        f.write(body)
    data, h, recs, cut = read_journal(path)
    check(cut, "the file on the full disk has no END record")
    out = replays_ok(path, "the file cut by the full disk")
    check("cut" in out or "without its end record" in out,
          "the replay says the journal was cut: %s" % out)
    m = re.search(r"ticks (\d+)\.\.(\d+)", out)
    check(m and int(m.group(2)) == last_tick(h, recs) and int(m.group(2)) > h.start_tick,
          "it replays to its last whole tick %d: %s" % (last_tick(h, recs), out))
    cleanup(rdir)


@test
def buffer_bound_drops_the_recording():
    rdir = record_dir()
    # max_pending is at least the header and the image (a journal without them is none): with
    # --max-bodies 1024 that is about 22 KB, which one batch of 4,000 intents crosses at once.
    d = daemon(rdir, ["--record-buffer-bytes", "4096", "--max-bodies", "1024",
                      "--max-frame", "262144", "--record-hash-every", "5"], http=True,
               world=ct.write_world())
    boss = d.client()
    boss.hello(token=ADMIN)
    watcher = d.client()
    watcher.hello()
    see_all(watcher)
    movers = [boss.spawn_ok(ct.circle(0.5), -400 + 8 * k, 0) for k in range(10)]
    wait_until(lambda: metric(d, "collide_recordings_active") == 1, "the recording")
    rng = random.Random(5)
    items = [(movers[k % 10], 1 + k, rng.uniform(-5, 5), rng.uniform(-5, 5), 0.0)
             for k in range(4000)]
    boss.send(msg_batch(0, items))
    wait_until(lambda: metric(d, "collide_recordings_dropped_total", reason="buffer_full") == 1,
               "collide_recordings_dropped_total{reason=\"buffer_full\"}")
    check(d.wait_log(r"event=recording_dropped .*reason=buffer_full") is not None,
          "a log line says why")
    check(metric(d, "collide_recordings_active") == 0, "the room no longer records")
    check_ticking(d, watcher, "after the buffer overflowed")
    boss.close()
    watcher.close()
    d.stop_and_check()
    for f in files_of(rdir):
        replays_ok(f, "the dropped recording's file", want_hashes=False)
    cleanup(rdir)


# ---- the ops port --------------------------------------------------------------------------


@test
def record_http_off_by_default_then_lists_and_serves():
    rdir = record_dir()
    d = daemon(rdir, http=True, world=ct.write_world())
    wait_until(lambda: files_of(rdir), "a file")
    name = os.path.basename(files_of(rdir)[0])
    for path in ("/recordings", "/recordings/" + name):
        check(d.http_get(path)[0] == 404, "--record-http is off by default: %s is 404" % path)
    d.stop_and_check()

    d = daemon(rdir, ["--record-http", "on", "--record-hash-every", "5"], http=True,
               world=ct.write_world())
    p = d.client()
    p.hello()
    b = p.spawn_ok(ct.box(1, 1), 0, 0)
    for k in range(10):
        p.move(b, k, -k)
        p.pump(0.03)
    boss = d.client()
    boss.hello(token=ADMIN)
    stop = info_of(recording(boss, False), "StopRecording")
    check(stop.file == "default.000002.cjournal", "the second daemon's file numbers follow the "
          "first's: %s" % stop.file)
    wait_until(lambda: os.path.getsize(os.path.join(rdir, stop.file)) == stop.bytes,
               "the stopped file written")
    status, text = d.http_get("/recordings")
    check(status == 200, "GET /recordings: %d %s" % (status, text))
    import json
    listing = json.loads(text)
    check(isinstance(listing, list) and
          {(e["name"], e["bytes"]) for e in listing} ==
          {(os.path.basename(f), os.path.getsize(f)) for f in files_of(rdir)},
          "GET /recordings lists every file with its size: %s" % text)
    status, headers, body = fetch(d, stop.file)
    check(status == 200 and body == open(os.path.join(rdir, stop.file), "rb").read(),
          "GET /recordings/%s sends the file byte for byte (%d, %d bytes)"
          % (stop.file, status, len(body)))
    check(headers.get("access-control-allow-origin") == "*"
          and headers.get("content-type") == "application/octet-stream",
          "its headers: %s" % headers)
    open(os.path.join(rdir, "notes.txt"), "w").write("not a recording\n")
    os.symlink("/etc/passwd", os.path.join(rdir, "passwd"))
    os.symlink("/etc/passwd", os.path.join(rdir, "evil.000001.cjournal"))  # named like one
    for bad in ("../../etc/passwd", "..", "notes.txt", "passwd", "%2e%2e%2fetc%2fpasswd",
                "evil.000001.cjournal",
                stop.file + "/x", "default.1.cjournal", "a.b.000001.cjournal",
                "default.999999.cjournal", ".default.000001.cjournal", ""):
        status, _, _ = fetch(d, bad)
        check(status == 404, "GET /recordings/%s must be 404, got %d" % (bad, status))
    text = d.http_get("/recordings")[1]
    check("notes.txt" not in text and "evil" not in text, "only recordings are listed: %s" % text)
    p.close()
    boss.close()
    d.stop_and_check()
    cleanup(rdir)


# ---- a planted nondeterminism, through an independent reader ---------------------------------


@test
def a_journal_without_one_intent_fails_at_its_tick():
    rdir = record_dir()
    d = daemon(rdir, ["--record-hash-every", "1"], http=True, world=ct.write_world())
    p = d.client()
    p.hello()
    b = p.spawn_ok(ct.circle(1), 0, 0)
    rng = random.Random(11)
    for k in range(40):
        p.move(b, rng.uniform(-9, 9), rng.uniform(-9, 9))
        p.pump(0.03)
    p.close()
    d.stop_and_check()
    path = files_of(rdir, "default")[0]
    data, h, recs, cut = read_journal(path)
    replays_ok(path, "the daemon's journal")
    intents = [k for k, r in enumerate(recs) if r.tag == jr.INTENT and r.velocity is not None]
    check(len(intents) >= 20, "the journal holds the intents: %d" % len(intents))
    drop = intents[len(intents) // 2]
    tick = recs[drop].tick + 1  # an input between two steps steers the next tick
    copy = os.path.join(rdir, "planted.000001.cjournal")
    with open(copy, "wb") as f:
        f.write(jr.write_journal(data, recs[:drop] + recs[drop + 1:], h))
    rc, out = replay(copy)
    check(rc == 1, "a journal without one intent must fail --verify (exit 1), got %d: %s"
          % (rc, out))
    m = re.search(r"tick (\d+)", out)
    check(m and int(m.group(1)) >= tick,
          "the failure names a tick at or after the dropped intent's (%d): %s" % (tick, out))
    cleanup(rdir)


if __name__ == "__main__":
    ct.main()

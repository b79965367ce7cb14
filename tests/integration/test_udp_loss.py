#!/usr/bin/env python3
"""UDP under real packet loss (issue 30, "Tests": the loss test). Inside scripts/loss-rig's private
network namespace, 5% of the packets to and from the daemon's UDP port are dropped each way
(nftables; netem is not available here); the TCP port is lossless.

A pyenet client that applies only the snapshots that arrive, each against the baseline it names
(tests/integration/udp_baseline.py), is compared with a lossless float watcher over TCP through
a run of 500 ticks in which players random-walk (a TCP player's bodies and the UDP client's own,
whose intents ride the lossy channel 1), others rest, and one body is despawned and another
spawned midway:
- at every tick the UDP client applied, it holds exactly the bodies the float watcher holds at
  that tick, each within half a quantum (the scene's view fits one packet, so every snapshot
  covers every changed body: nothing waits for the priority budget);
- after the last change (every walker stopped), a snapshot arrives and the state is still exact;
- and the loss was real: packets dropped both ways, snapshots missed, baselines older than the
  previous tick used.

Run directly, the script re-runs itself through scripts/loss-rig; where the namespace or the rules
cannot be made, the rig says why and exits 77, which ctest reports as skipped.
"""

import math
import os
import random
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
RIG = os.path.join(HERE, "..", "..", "scripts", "loss-rig")
PERMILLE = 50
UDP_PORT = 7779  # the namespace is private: every port is free
TICKS = 500

if "LOSS_RIG_TABLE" not in os.environ:
    sys.stdout.flush()
    os.execv(RIG, [RIG, "--permille", str(PERMILLE), "--udp", str(UDP_PORT), "--",
                   sys.executable] + sys.argv)

import enet  # noqa: E402

sys.path.insert(0, HERE)
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402
from udp_baseline import BaselineDecoder  # noqa: E402

PQ = 1.0 / 256
VQ = 1.0 / 64
SNAPSHOT_BYTES = 1100


class FloatWatcher:
    """The truth: a float watcher of the whole world over the lossless TCP port, recording every
    body's state after each snapshot, by tick."""

    def __init__(self, d):
        self.c = d.client()
        self.c.hello(name="truth")
        self.c.send(ct.msg_set_view(0, 0, 0, 60, 60))
        self.states = {}
        self.stop = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        view = {}
        try:
            while not self.stop.is_set():
                sm = self.c.recv(0.2)
                if sm is None or kind_of(sm) != "snapshot":
                    continue
                snap = sm.snapshot
                for i in snap.removed:
                    view.pop(i, None)
                for b in snap.bodies:
                    view[b.id] = (b.position.x, b.position.y, b.velocity.x, b.velocity.y,
                                  b.last_input_seq, b.angle, b.angular_velocity)
                self.states[snap.tick] = dict(view)
        except Exception as e:  # reported by the test, not lost in a thread
            self.error = e

    def last_tick(self):
        return max(self.states, default=0)


class UdpPlayer:
    """The client under test: an ENet peer that spawns two bodies, random-walks them with intents
    on the lossy channel 1, and applies what arrives, acknowledging each snapshot it applied."""

    def __init__(self, port, rng):
        self.rng = rng
        self.host = enet.Host(None, 1, 2, 0, 0)
        self.peer = self.host.connect(enet.Address(b"127.0.0.1", port), 2, 0)
        self.replies = []
        self.dec = None
        self.applied = {}       # tick -> the view after it, for the ticks applied
        self.older_baselines = 0
        self.largest = 0        # the largest snapshot's packed + removed bytes
        self.seq = 0
        self.connected = self.closing = self.closed = False
        deadline = time.monotonic() + ct.REPLY_TIMEOUT
        while not self.connected:
            check(time.monotonic() < deadline, "no ENet connect through the loss")
            self.pump(10)
        self.send(ct.msg_hello(1, name="lossy"))
        self.welcome = self.reply(1).welcome
        check(self.welcome.udp_port == port and self.welcome.position_quantum == PQ,
              "Welcome over UDP: %s" % self.welcome)
        self.dec = BaselineDecoder(ct.pb, self.welcome.position_quantum,
                                   self.welcome.velocity_quantum)
        self.send(ct.msg_set_view(0, 0, 0, 60, 60))
        self.bodies = []
        for k in range(2):
            self.send(ct.msg_spawn(2 + k, ct.circle(0.8), -20 + 40 * k, -20))
            sm = self.reply(2 + k)
            check(kind_of(sm) == "spawned", "a UDP spawn: %s" % sm)
            self.bodies.append(sm.spawned.body_id)

    def send(self, msg, channel=0):
        flags = enet.PACKET_FLAG_RELIABLE if channel == 0 else 0
        check(self.peer.send(channel, enet.Packet(msg.SerializeToString(), flags)) >= 0,
              "enet send")

    def pump(self, ms):
        ev = self.host.service(ms)
        while ev is not None and ev.type != enet.EVENT_TYPE_NONE:
            if ev.type == enet.EVENT_TYPE_CONNECT:
                self.connected = True
            elif ev.type == enet.EVENT_TYPE_DISCONNECT:
                check(self.closing, "the daemon disconnected the UDP client (data %s)" % ev.data)
                self.closed = True
                return
            elif ev.type == enet.EVENT_TYPE_RECEIVE:
                sm = ct.pb.ServerMessage()
                sm.ParseFromString(ev.packet.data)
                if kind_of(sm) == "snapshot":
                    check(ev.channelID == 1, "a snapshot on channel %d" % ev.channelID)
                    self._snapshot(sm.snapshot)
                elif kind_of(sm) == "error":
                    raise ct.TestFailure("an Error over UDP: %s" % sm)
                else:
                    self.replies.append(sm)
            ev = self.host.check_events()

    def _snapshot(self, snap):
        if self.dec is None:
            return  # before the Welcome's quanta: cannot happen (Welcome comes first), kept safe
        self.largest = max(self.largest, len(snap.packed) + 8 * len(snap.removed))
        prev = self.dec.tick
        if self.dec.apply(snap) is None:
            return
        if snap.baseline_tick and prev is not None and snap.baseline_tick < prev:
            self.older_baselines += 1
        self.applied[snap.tick] = self.dec.view()
        ack = ct.pb.ClientMessage()
        ack.snapshot_ack.tick = snap.tick
        self.send(ack, channel=1)

    def close(self):
        """A clean disconnect, so the daemon's drain does not wait for a silent peer."""
        self.closing = True
        self.peer.disconnect()
        deadline = time.monotonic() + ct.REPLY_TIMEOUT
        while not self.closed:
            check(time.monotonic() < deadline, "the daemon acknowledged the disconnect")
            self.pump(10)

    def reply(self, rid):
        deadline = time.monotonic() + ct.REPLY_TIMEOUT
        while True:
            for i, sm in enumerate(self.replies):
                if sm.request_id == rid:
                    del self.replies[i]
                    return sm
            check(time.monotonic() < deadline, "no reply to request %d over UDP" % rid)
            self.pump(10)

    def walk(self, stop=False):
        for b in self.bodies:
            self.seq += 1
            vx, vy = (0.0, 0.0) if stop else (self.rng.uniform(-8, 8), self.rng.uniform(-8, 8))
            # The stop is reliable (channel 0 takes intents too): "after the last change" needs
            # a last change that is not lost.
            self.send(ct.msg_move(0, b, self.seq, vx, vy), channel=0 if stop else 1)


def tcp_walker(d, rng, stop):
    """A TCP player: four bodies random-walking, four at rest; midway one resting body is despawned
    and a new one spawned. Stops (velocity 0) when `stop` is set, then returns."""
    p = d.client()
    p.hello(name="walker")
    walkers = [p.spawn_ok(ct.box(0.6, 0.4), -30 + 15 * i, 10) for i in range(4)]
    resting = [p.spawn_ok(ct.regular_polygon(5, 0.7), -30 + 15 * i, 30) for i in range(4)]
    state = {"changed": False}

    def run():
        t0 = time.monotonic()
        while not stop.is_set():
            for b in walkers:
                p.move(b, rng.uniform(-8, 8), rng.uniform(-8, 8))
            if not state["changed"] and time.monotonic() - t0 > 3.0:
                p.send(ct.msg_despawn(p.rid(), resting.pop()))
                resting.append(p.spawn_ok(ct.circle(0.5), 30, -30))
                state["changed"] = True
            p.non_snapshots(0.1)
        for b in walkers:
            p.move(b, 0.0, 0.0)
        p.sync()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, state


def same(f, u):
    fx, fy, fvx, fvy, fseq, fa, fw = f
    ux, uy, uvx, uvy, useq, ua, uw = u
    ptol = PQ / 2 + 1e-6 * max(1.0, abs(fx), abs(fy))
    vtol = VQ / 2 + 1e-6 * max(1.0, abs(fvx), abs(fvy))
    da = math.remainder(fa - ua, 2 * math.pi)
    return (abs(fx - ux) <= ptol and abs(fy - uy) <= ptol and abs(fvx - uvx) <= vtol
            and abs(fvy - uvy) <= vtol and fseq == useq and abs(da) <= math.pi / 65536 + 1e-6
            and abs(fw - uw) <= 0.5 / 1024 + 1e-6)


def compare(truth, udp, ticks, what):
    for t in ticks:
        f, u = truth.states[t], udp.applied[t]
        check(set(f) == set(u), "%s, tick %d: bodies %s over TCP, %s over UDP"
              % (what, t, sorted(f), sorted(u)))
        for i in f:
            check(same(f[i], u[i]), "%s, tick %d, body %d: %s over TCP, %s over UDP (more than "
                  "half a quantum apart)" % (what, t, i, f[i], u[i]))


def dropped():
    """Packets the rig dropped so far: (to the UDP port, from it)."""
    out = subprocess.run(["nft", "list", "table"] + os.environ["LOSS_RIG_TABLE"].split(),
                         capture_output=True, text=True, check=True).stdout
    to = re.search(r"dport %d .*counter packets (\d+)" % UDP_PORT, out)
    frm = re.search(r"sport %d .*counter packets (\d+)" % UDP_PORT, out)
    return int(to.group(1)), int(frm.group(1))


@test
def lossy_udp_client_converges_to_the_float_watcher():
    rng = random.Random(30)
    d = ct.Daemon(["--udp-port", str(UDP_PORT)], http=True,
                  world=ct.write_world(bounds=((-50, -50), (50, 50))))
    truth = FloatWatcher(d)
    stop = threading.Event()
    # Each thread its own generator: random.Random is not to be shared between threads.
    walker, walker_state = tcp_walker(d, random.Random(rng.random()), stop)
    try:
        udp = UdpPlayer(UDP_PORT, rng)
        # Compare from a tick at which every client has its view and every body is spawned.
        while truth.last_tick() == 0:
            udp.pump(10)
        start = truth.last_tick() + 30
        end = start + TICKS
        next_walk = 0.0
        deadline = time.monotonic() + 20 + TICKS / 60 * 4  # a slow (sanitized) daemon still ends
        while (udp.dec.tick or 0) < end:
            check(time.monotonic() < deadline, "the UDP client reached tick %s of %d"
                  % (udp.dec.tick, end))
            if time.monotonic() >= next_walk:
                udp.walk()
                next_walk = time.monotonic() + 0.1
            udp.pump(5)
        # The last change: everybody stops (reliably), then snapshots keep coming.
        stop.set()
        udp.walk(stop=True)
        walker.join(ct.REPLY_TIMEOUT)
        check(not walker.is_alive(), "the TCP walker stopped")
        still = truth.last_tick() + 30
        deadline = time.monotonic() + ct.REPLY_TIMEOUT
        while (udp.dec.tick or 0) < still + 30 or truth.last_tick() < udp.dec.tick:
            check(time.monotonic() < deadline, "snapshots after the last change")
            udp.pump(5)
        truth.stop.set()
        truth.thread.join(ct.REPLY_TIMEOUT)
        check(truth.error is None, "the float watcher: %r" % truth.error)

        check(walker_state["changed"], "a body was despawned and another spawned midway")
        check(udp.largest < SNAPSHOT_BYTES - 100,
              "the scene fits one snapshot (largest %d bytes), so every snapshot covers every "
              "change" % udp.largest)
        run = sorted(t for t in udp.applied if start <= t <= end and t in truth.states)
        check(len(run) >= TICKS // 2, "most of the run's ticks compared (%d)" % len(run))
        compare(truth, udp, run, "during the walk")
        after = sorted(t for t in udp.applied if t >= still and t in truth.states)
        check(after, "a snapshot applied after the last change")
        compare(truth, udp, after, "after the last change")
        final = truth.states[after[-1]]
        moving = sum(1 for t in run for s in truth.states[t].values() if s[2] or s[3])
        check(moving >= len(run) * 4, "bodies were moving (%d body-ticks)" % moving)
        check(all(s[2] == 0 and s[3] == 0 for s in final.values()), "all at rest at the end")

        # The loss was real and the baselines did their work.
        to, frm = dropped()
        missed = sum(1 for t in truth.states if start <= t <= end and t not in udp.applied)
        print("dropped %d packets to the UDP port, %d from it; %d of %d ticks' snapshots missed, "
              "%d applied against a baseline older than the previous snapshot, %d full, "
              "%d ignored" % (to, frm, missed, end - start + 1, udp.older_baselines,
                               udp.dec.full, udp.dec.ignored), flush=True)
        check(to > 0 and frm > 0, "packets dropped both ways (%d, %d)" % (to, frm))
        check(missed > 0, "some snapshots were lost")
        check(udp.older_baselines > 0, "some snapshots built on a baseline older than the "
              "previous one (a lost ack or snapshot)")
        udp.close()
    finally:
        stop.set()
        truth.stop.set()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

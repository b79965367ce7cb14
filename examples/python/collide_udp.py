#!/usr/bin/env python3
"""A collide client over UDP (ENet) in Python: a whole session, snapshots against baselines.

The same session as collide_example.py, on the datagram transport of protocol 1.2
(docs/protocol.md, "Datagrams: UDP through ENet"). It uses Debian's python3-enet (pyenet, over
libenet 1.3, the library the daemon speaks) and the module protoc generates from
proto/collide.proto, and nothing else from the project: a game client in another language (C#,
Rust, GDScript...) does the same steps with its own ENet binding.

  connect with 2 channels; on channel 0 (reliable): Hello -> Welcome ("udp" feature, udp_port),
  SpawnBody -> Spawned (a box, and a sensor over it so that Events arrive), Events, Ping -> Pong,
  DespawnBody; on channel 1 (unreliable, sequenced): MoveIntents out, Snapshots in, SnapshotAcks
  out. Every snapshot is quantized (Snapshot.packed) and is a delta against a state this client
  acknowledged (Snapshot.baseline_tick); BaselineDecoder below turns it into the world's state.
  Then a clean ENet disconnect.

Generate the protobuf module first (nothing generated is committed), then run against a daemon:

  protoc --python_out=/tmp/collide-py -Iproto proto/collide.proto
  /usr/bin/python3 examples/python/collide_udp.py --gen /tmp/collide-py --port 7779

Exit status 0 when every step behaved as docs/protocol.md says; 1 with the reason otherwise.
"""

import argparse
import copy
import math
import os
import sys
import time

try:
    import enet  # Debian: python3-enet
except ImportError as e:
    sys.exit("collide_udp: %s (install Debian's python3-enet, run with /usr/bin/python3)" % e)

PROTOCOL_VERSION = 1

# The two channels the daemon wants (a connect asking for fewer is refused with data 1).
CH_RELIABLE = 0  # reliable and ordered: the session, requests and replies, errors, Events
CH_SNAPSHOTS = 1  # unreliable and sequenced: Snapshot in; MoveIntent and SnapshotAck out

# ENet packet flags: RELIABLE is resent until acknowledged; 0 on a channel means unreliable but
# sequenced (ENet drops a packet older than one already delivered on that channel).
RELIABLE = enet.PACKET_FLAG_RELIABLE
UNRELIABLE = 0

# How many applied states the decoder keeps. The server names as baseline the newest snapshot we
# acknowledged that it still holds, so a handful is plenty: only when every ack of the last N
# snapshots was lost does a snapshot name a state we dropped, and then we ignore it and wait.
KEEP_STATES = 16

# Bits of a packed record's flags (docs/protocol.md, "Snapshot rate and quantized snapshots").
POSITION = 1 << 0  # zz dx, zz dy                 (position quanta)
VELOCITY = 1 << 1  # zz dvx, zz dvy               (velocity quanta)
ANGLE = 1 << 2  # zz da                           (1/65536 turn, modulo 65536)
INPUT_SEQ = 1 << 3  # varint last_input_seq       (absolute, not a delta)
ANGULAR_VELOCITY = 1 << 4  # zz dw                (1/1024 rad/s)
NEW = 1 << 5  # varint kind, varint owner, varint len, Shape bytes
FILTER = 1 << 6  # varint category, varint mask, varint sensor (only with NEW)
GROUND = 1 << 7  # 1.2: varint grounded (0/1), varint ground_id (absolute), after FILTER's part
ONE_WAY = 1 << 8  # 1.2: no payload (only with NEW): a one-way body


class ProtocolFailure(Exception):
    """The server did something docs/protocol.md says it must not (or did not do what it must)."""


# ---------------------------------------------------------------------------------------------
# Decoding Snapshot.packed against a baseline
# ---------------------------------------------------------------------------------------------


def read_varint(data, i):
    """Base-128 varint at data[i]: returns (value, index after it)."""
    value = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ProtocolFailure("packed snapshot ends inside a varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i
        shift += 7


def read_zigzag(data, i):
    """A zig-zag varint (0, 1, 2, 3, 4 ... mean 0, -1, 1, -2, 2 ...): returns (delta, index)."""
    u, i = read_varint(data, i)
    return (u >> 1) ^ -(u & 1), i


class Body:
    """One body as the server describes it, in quanta: plain integers, so adding the server's
    deltas gives exactly the server's numbers, with no rounding (and no drift) on our side."""

    def __init__(self, body_id):
        self.id = body_id
        self.px = self.py = 0  # position, in position quanta
        self.vx = self.vy = 0  # velocity, in velocity quanta
        self.angle = 0  # in 1/65536 turn, [0, 65536)
        self.w = 0  # angular velocity, in 1/1024 rad/s
        self.last_input_seq = 0
        self.kind = self.owner = 0
        self.shape = None  # a collide_pb2.Shape, body-local
        self.category, self.mask, self.sensor = 1, 0xFFFFFFFF, False  # the filter defaults
        self.grounded, self.ground_id = False, 0  # 1.2: a character standing, on which body
        self.one_way = False  # 1.2: a one-way body


class BaselineDecoder:
    """Keeps the states this client applied, by tick, and applies each new snapshot on top of
    the one it names as its baseline.

    Why several states and not just "the current world": over UDP the server does not know which
    of its snapshots arrived until we acknowledge them, so it encodes each one against a state we
    told it we hold (Snapshot.baseline_tick), not against the previous snapshot it sent. When
    packets are lost, the baseline is older than our newest state; we must still have it."""

    def __init__(self, pb, keep=KEEP_STATES):
        self.pb = pb
        self.keep = keep
        self.states = {}  # tick -> {body id: Body}: the world after that tick's snapshot
        self.newest_tick = 0  # the newest applied snapshot's tick (0: none yet)
        self.ignored = 0  # snapshots whose baseline we did not hold

    def world(self):
        """The newest applied state: {body id: Body}."""
        return self.states.get(self.newest_tick, {})

    def apply(self, snap):
        """Applies one Snapshot; returns the new state, or None when it cannot be applied."""
        if snap.tick <= self.newest_tick:
            return None  # older than what we have (ENet's sequencing already drops most of these)
        if snap.baseline_tick == 0:
            # A full snapshot: every body in view comes as a new record; forget all we held.
            base = {}
        elif snap.baseline_tick in self.states:
            base = self.states[snap.baseline_tick]
        else:
            # A delta against a state we no longer (or never) had: useless to us. Ignore it; we keep
            # acknowledging what we applied, and the server soon uses a baseline we hold.
            self.ignored += 1
            return None
        # A new dict of the same Body objects: a body we change is copied first, so the baseline
        # state stays as it was (a later snapshot may name it again).
        state = dict(base)
        for body_id in snap.removed:  # the baseline's ids that are gone from this state
            state.pop(body_id, None)
        data = snap.packed
        i = 0
        body_id = 0
        while i < len(data):
            gap, i = read_varint(data, i)  # ids ascend: each record gives the distance
            flags, i = read_varint(data, i)
            if gap == 0 and body_id != 0:
                raise ProtocolFailure("packed ids do not ascend")
            body_id += gap
            if flags & NEW:
                body = Body(body_id)  # a new body's parts are deltas against zero
            elif body_id in state:
                body = copy.copy(state[body_id])  # its parts are deltas against the baseline
            else:
                raise ProtocolFailure("tick %d: a change to body %d, not in baseline %d"
                                      % (snap.tick, body_id, snap.baseline_tick))
            if flags & POSITION:
                dx, i = read_zigzag(data, i)
                dy, i = read_zigzag(data, i)
                body.px += dx
                body.py += dy
            if flags & VELOCITY:
                dx, i = read_zigzag(data, i)
                dy, i = read_zigzag(data, i)
                body.vx += dx
                body.vy += dy
            if flags & ANGLE:
                da, i = read_zigzag(data, i)
                body.angle = (body.angle + da) % 65536  # the short way round
            if flags & INPUT_SEQ:
                body.last_input_seq, i = read_varint(data, i)
            if flags & ANGULAR_VELOCITY:
                dw, i = read_zigzag(data, i)
                body.w += dw
            if flags & NEW:
                body.kind, i = read_varint(data, i)
                body.owner, i = read_varint(data, i)
                n, i = read_varint(data, i)
                if i + n > len(data):
                    raise ProtocolFailure("packed snapshot ends inside a shape")
                body.shape = self.pb.Shape()
                body.shape.ParseFromString(bytes(data[i:i + n]))
                i += n
                if flags & FILTER:
                    body.category, i = read_varint(data, i)
                    body.mask, i = read_varint(data, i)
                    sensor, i = read_varint(data, i)
                    body.sensor = sensor == 1
                body.one_way = bool(flags & ONE_WAY)
            if flags & GROUND:  # absolute, after the new body's parts
                grounded, i = read_varint(data, i)
                body.grounded = grounded == 1
                body.ground_id, i = read_varint(data, i)
            state[body_id] = body
        # A body of the baseline with neither a record nor a removal keeps its baseline values:
        # it is already in `state`, untouched.
        self.states[snap.tick] = state
        self.newest_tick = snap.tick
        for old in sorted(self.states)[:-self.keep]:  # keep the newest N states only
            del self.states[old]
        return state


# ---------------------------------------------------------------------------------------------
# The ENet connection
# ---------------------------------------------------------------------------------------------


class Connection:
    """One ENet peer of the daemon; each packet is one ClientMessage / ServerMessage, without the
    varint length prefix of TCP (ENet keeps the packet boundaries for us)."""

    def __init__(self, pb, host, port, timeout_s):
        self.pb = pb
        # A client host: no address of its own, 1 peer, 2 channels, no bandwidth limits.
        self.host = enet.Host(None, 1, 2, 0, 0)
        self.peer = self.host.connect(enet.Address(host.encode(), port), 2, 0)
        self.inbox = []  # (channel, ServerMessage) received and not yet handled
        self.connected = False
        self.disconnect_data = None  # set when the server disconnected us
        self.next_request_id = 1
        deadline = time.monotonic() + timeout_s
        while not self.connected:
            if self.disconnect_data is not None:
                raise ProtocolFailure("connect refused (disconnect data %d)" % self.disconnect_data)
            if time.monotonic() >= deadline:
                raise ProtocolFailure("no ENet connect within %.1f s" % timeout_s)
            self.service(50)

    def service(self, wait_ms):
        """Lets ENet send and receive (it does both only in here), up to wait_ms for the first
        event, then takes every event already queued."""
        event = self.host.service(wait_ms)
        while event is not None and event.type != enet.EVENT_TYPE_NONE:
            if event.type == enet.EVENT_TYPE_CONNECT:
                self.connected = True
            elif event.type == enet.EVENT_TYPE_DISCONNECT:
                # The server's disconnect data: 0 after Goodbye, else the fatal error's code.
                self.disconnect_data = event.data
            elif event.type == enet.EVENT_TYPE_RECEIVE:
                msg = self.pb.ServerMessage()
                msg.ParseFromString(event.packet.data)
                self.inbox.append((event.channelID, msg))
            event = self.host.check_events()

    def send(self, channel=CH_RELIABLE, want_reply=True, **msg):
        """Sends one ClientMessage with the given oneof field set; returns its request_id.
        Channel 0 is reliable, channel 1 unreliable: a lost intent is replaced by the next one,
        a lost ack by the next ack, so resending them would only add latency."""
        request_id = 0
        if want_reply:
            request_id = self.next_request_id
            self.next_request_id += 1
        body = self.pb.ClientMessage(request_id=request_id, **msg).SerializeToString()
        flags = RELIABLE if channel == CH_RELIABLE else UNRELIABLE
        if self.peer.send(channel, enet.Packet(body, flags)) < 0:
            raise ProtocolFailure("ENet refused to queue a packet")
        self.host.flush()  # out now, rather than at the next service()
        return request_id

    def recv(self, timeout_s):
        """The next (channel, ServerMessage), or None within timeout_s; raises if disconnected."""
        deadline = time.monotonic() + timeout_s
        while not self.inbox:
            if self.disconnect_data is not None:
                raise ProtocolFailure("disconnected by the server (data %d)" % self.disconnect_data)
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return None
            self.service(min(left_ms, 50))
        return self.inbox.pop(0)

    def close(self, timeout_s=2.0):
        """A clean disconnect: ENet tells the server (which despawns what we still own) and
        waits for its confirmation, for at most timeout_s."""
        if self.connected and self.disconnect_data is None:
            self.peer.disconnect(0)
            deadline = time.monotonic() + timeout_s
            while self.disconnect_data is None and time.monotonic() < deadline:
                self.service(50)
        return self.disconnect_data is not None


# ---------------------------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------------------------


class Client:
    """Session state: our bodies, the decoded world, our prediction, the events we got."""

    def __init__(self, conn, log):
        self.conn = conn
        self.log = log
        self.welcome = None
        self.decoder = None  # a BaselineDecoder once the Welcome gave the quanta
        self.body_id = 0  # our moving box
        self.snapshots = 0  # snapshots received on channel 1
        self.applied = 0  # of which applied (their baseline was held, or they were full)
        self.full = 0  # of which full (baseline_tick 0)
        self.events = []  # Events messages received on channel 0
        self.pending = []  # (input_seq, vx, vy) sent and not yet acknowledged
        self.acked_seq = 0
        self.predicted = None
        self.max_correction = 0.0

    def dt(self):
        return 1.0 / self.welcome.tick_rate_hz

    def world(self):
        return self.decoder.world() if self.decoder else {}

    def position(self, body):
        """A body's position in world units: quanta times the quantum of the Welcome."""
        q = self.welcome.position_quantum
        return body.px * q, body.py * q

    def handle(self, channel, msg):
        """Everything the server may send unasked: snapshots (channel 1), Events and Goodbye
        (channel 0). Returns True when it handled msg."""
        which = msg.WhichOneof("msg")
        if which == "snapshot":
            if channel != CH_SNAPSHOTS:
                raise ProtocolFailure("a Snapshot on channel %d" % channel)
            self.on_snapshot(msg.snapshot)
            return True
        if which == "events":
            if channel != CH_RELIABLE:
                raise ProtocolFailure("Events on channel %d" % channel)
            self.events.append(msg.events)
            return True
        if which == "goodbye":
            raise ProtocolFailure("Goodbye: %s" % msg.goodbye.reason)
        return False

    def on_snapshot(self, snap):
        self.snapshots += 1
        if snap.bodies:
            raise ProtocolFailure("a UDP snapshot with float bodies (they are always quantized)")
        state = self.decoder.apply(snap)
        if state is None:
            return  # its baseline is not one we hold: no ack, nothing changes
        self.applied += 1
        if snap.baseline_tick == 0:
            self.full += 1
        # Tell the server we hold this state: its next snapshots can be deltas against it.
        # Unreliable, on channel 1: if this ack is lost, the next one says as much.
        self.conn.send(CH_SNAPSHOTS, want_reply=False,
                       snapshot_ack=self.conn.pb.SnapshotAck(tick=snap.tick))
        mine = state.get(self.body_id)
        if mine is not None:
            self.reconcile(mine)

    def reconcile(self, body):
        """Server reconciliation (docs/protocol.md, "Input acknowledgements and reconciling a
        prediction"): drop the inputs the server applied, replay the rest on its position."""
        if body.last_input_seq < self.acked_seq:
            raise ProtocolFailure("last_input_seq went back: %d after %d"
                                  % (body.last_input_seq, self.acked_seq))
        self.acked_seq = body.last_input_seq
        self.pending = [p for p in self.pending if p[0] > self.acked_seq]
        x, y = self.position(body)
        for _, vx, vy in self.pending:
            x += vx * self.dt()
            y += vy * self.dt()
        if self.predicted is not None:
            error = math.hypot(self.predicted[0] - x, self.predicted[1] - y)
            self.max_correction = max(self.max_correction, error)
        self.predicted = (x, y)

    def await_reply(self, request_id, kind, timeout_s):
        """Reads until the reply to request_id arrives on channel 0, handling the rest."""
        deadline = time.monotonic() + timeout_s
        while True:
            got = self.conn.recv(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise ProtocolFailure("no %s within %.1f s" % (kind, timeout_s))
            channel, msg = got
            if self.handle(channel, msg):
                continue
            which = msg.WhichOneof("msg")
            if msg.request_id != request_id or which != kind:
                detail = ""
                if which == "error":
                    detail = ": %s %s" % (self.conn.pb.ErrorCode.Name(msg.error.code),
                                          msg.error.message)
                raise ProtocolFailure("wanted %s for request %d, got %s (request %d)%s"
                                      % (kind, request_id, which, msg.request_id, detail))
            if channel != CH_RELIABLE:
                raise ProtocolFailure("%s on channel %d" % (kind, channel))
            return msg

    def pump_until(self, done, what, timeout_s):
        """Handles snapshots and events until done() holds."""
        deadline = time.monotonic() + timeout_s
        while not done():
            got = self.conn.recv(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise ProtocolFailure("timed out waiting for %s" % what)
            if not self.handle(*got):
                raise ProtocolFailure("unexpected %s while waiting for %s"
                                      % (got[1].WhichOneof("msg"), what))

    def move(self, seq, vx, vy):
        """An intent on channel 1, predicted locally for one tick."""
        pb = self.conn.pb
        self.conn.send(CH_SNAPSHOTS, want_reply=False,
                       move=pb.MoveIntent(body_id=self.body_id, input_seq=seq,
                                          velocity=pb.Vec2(x=vx, y=vy)))
        self.pending.append((seq, vx, vy))
        if self.predicted is not None:
            self.predicted = (self.predicted[0] + vx * self.dt(),
                              self.predicted[1] + vy * self.dt())

    def until_acked(self, seq, timeout_s):
        """Waits until a snapshot says input seq was applied. An intent on the unreliable
        channel can be lost; in a game the next frame's intent replaces it, but this one may have
        no successor, so it is sent again (the same input_seq: the server applies it at most
        once) every quarter second until it is applied."""
        if self.acked_seq >= seq:
            return
        _, vx, vy = next(p for p in self.pending if p[0] == seq)
        deadline = time.monotonic() + timeout_s
        resend_at = time.monotonic() + 0.25
        while self.acked_seq < seq:
            now = time.monotonic()
            if now >= deadline:
                raise ProtocolFailure("input %d never acknowledged" % seq)
            if now >= resend_at:
                self.conn.send(CH_SNAPSHOTS, want_reply=False,
                               move=self.conn.pb.MoveIntent(body_id=self.body_id, input_seq=seq,
                                                            velocity=self.conn.pb.Vec2(x=vx, y=vy)))
                resend_at = now + 0.25
            got = self.conn.recv(min(resend_at, deadline) - now)
            if got is not None and not self.handle(*got):
                raise ProtocolFailure("unexpected %s" % got[1].WhichOneof("msg"))


def run(pb, args, log):
    conn = Connection(pb, args.host, args.port, args.timeout)
    client = Client(conn, log)
    try:
        # 1. Hello -> Welcome, both on channel 0. UDP snapshots are quantized whatever Hello says.
        rid = conn.send(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, name=args.name,
                                       token=args.token))
        client.welcome = w = client.await_reply(rid, "welcome", args.timeout).welcome
        if w.protocol_version != PROTOCOL_VERSION or w.client_id == 0 or w.tick_rate_hz == 0:
            raise ProtocolFailure("bad Welcome: %s" % w)
        if "udp" not in w.features or w.udp_port != args.port:
            raise ProtocolFailure("Welcome: features %s, udp_port %d (we came in on %d)"
                                  % (list(w.features), w.udp_port, args.port))
        if w.position_quantum <= 0 or w.velocity_quantum <= 0:
            raise ProtocolFailure("no quanta in the Welcome: %s" % w)
        client.decoder = BaselineDecoder(pb)
        log("welcome: client %d, %d Hz, udp_port %d, position quantum %g, velocity quantum %g"
            % (w.client_id, w.tick_rate_hz, w.udp_port, w.position_quantum, w.velocity_quantum))

        # 2. Spawn our box at the world's centre, and a small sensor over it: the two overlap, so
        # the server reports a SensorEvent, which over UDP travels in an Events message on
        # channel 0 (reliable: events are never lost, unlike a snapshot).
        centre = pb.Vec2(x=(w.world_min.x + w.world_max.x) / 2,
                         y=(w.world_min.y + w.world_max.y) / 2)
        box = pb.Shape(box=pb.Box(half_extents=pb.Vec2(x=0.5, y=0.5)))
        rid = conn.send(spawn=pb.SpawnBody(kind=pb.BODY_KIND_MOVING, shape=box, position=centre))
        client.body_id = client.await_reply(rid, "spawned", args.timeout).spawned.body_id
        rid = conn.send(spawn=pb.SpawnBody(kind=pb.BODY_KIND_MOVING, sensor=True, position=centre,
                                           shape=pb.Shape(circle=pb.Circle(radius=0.25))))
        sensor_id = client.await_reply(rid, "spawned", args.timeout).spawned.body_id
        log("spawned: box %d and sensor %d at (%.2f, %.2f)"
            % (client.body_id, sensor_id, centre.x, centre.y))
        client.pump_until(lambda: client.body_id in client.world()
                          and sensor_id in client.world(), "both bodies in a snapshot",
                          args.timeout)
        mine = client.world()[client.body_id]
        if mine.owner != w.client_id or mine.kind != pb.BODY_KIND_MOVING or mine.shape != box:
            raise ProtocolFailure("our box: owner %d kind %d shape %s"
                                  % (mine.owner, mine.kind, mine.shape))
        if not client.world()[sensor_id].sensor:
            raise ProtocolFailure("the sensor's record does not say sensor")
        client.pump_until(lambda: any(e.sensor_events for e in client.events),
                          "the sensor's begin event", args.timeout)
        ev = next(e for e in client.events if e.sensor_events).sensor_events[0]
        if not (ev.begin and ev.sensor == sensor_id and ev.visitor == client.body_id):
            raise ProtocolFailure("wanted sensor %d begun by %d, got %s"
                                  % (sensor_id, client.body_id, ev))
        log("events: sensor %d begun by %d at tick %d, on channel 0"
            % (ev.sensor, ev.visitor, client.events[0].tick))

        # 3. Intents on channel 1, one per snapshot as a game loop would send one per frame, each
        # predicted locally and reconciled against the snapshots' last_input_seq.
        start = client.position(client.world()[client.body_id])
        speed = min(4.0, w.max_speed)
        seq = 0
        for step in range(args.intents):
            seq += 1
            if step < args.intents // 2:
                client.move(seq, speed, 0.0)
            else:
                client.move(seq, 0.0, speed)
            tick = client.decoder.newest_tick
            client.pump_until(lambda: client.decoder.newest_tick > tick, "the next snapshot",
                              args.timeout)
        client.until_acked(seq, args.timeout)
        now = client.position(client.world()[client.body_id])
        if now == start:
            raise ProtocolFailure("%d intents did not move the body from %s" % (seq, start))
        log("reconciled: inputs 1..%d acknowledged, body at (%.4f, %.4f), largest correction "
            "%.3f units" % (seq, now[0], now[1], client.max_correction))

        # Stop, wait until the stop is applied and the body at rest in our decoded state.
        seq += 1
        client.move(seq, 0.0, 0.0)
        client.until_acked(seq, args.timeout)
        wait_tick = client.decoder.newest_tick + 10
        client.pump_until(lambda: client.decoder.newest_tick >= wait_tick, "10 ticks",
                          args.timeout)
        body = client.world()[client.body_id]
        if body.vx or body.vy:
            raise ProtocolFailure("still moving after the stop: velocity (%d, %d) quanta"
                                  % (body.vx, body.vy))
        x, y = client.position(body)
        # One parseable line (the CI test compares it with a float watcher of the same daemon).
        log("at rest: body %d at (%.6f, %.6f) tick %d last_input_seq %d"
            % (client.body_id, x, y, client.decoder.newest_tick, body.last_input_seq))

        # 4. Ping -> Pong on channel 0, echoing our clock.
        sent_us = time.monotonic_ns() // 1000
        rid = conn.send(ping=pb.Ping(client_time_us=sent_us))
        pong = client.await_reply(rid, "pong", args.timeout).pong
        if pong.client_time_us != sent_us:
            raise ProtocolFailure("Pong echoed %d, sent %d" % (pong.client_time_us, sent_us))
        log("pong: rtt %.2f ms, server tick %d"
            % ((time.monotonic_ns() // 1000 - sent_us) / 1000.0, pong.tick))

        # 5. Despawn the sensor: no reply; its id leaves our state (a snapshot's `removed`, or a
        # full snapshot without it), and the end of its overlap comes as an Events message.
        conn.send(want_reply=False, despawn=pb.DespawnBody(body_id=sensor_id))
        client.pump_until(lambda: sensor_id not in client.world(), "the sensor removed",
                          args.timeout)
        client.pump_until(lambda: any(not e.begin for m in client.events for e in m.sensor_events),
                          "the sensor's end event", args.timeout)
        log("despawned: sensor %d gone from our state, its end event received" % sensor_id)
        log("snapshots: %d received, %d applied (%d full), %d ignored (baseline not held)"
            % (client.snapshots, client.applied, client.full, client.decoder.ignored))
    finally:
        # 6. A clean exit: an ENet disconnect. The server despawns what we still own (our box).
        clean = conn.close()
    if not clean:
        raise ProtocolFailure("no disconnect confirmation from the server")
    log("ok: disconnected cleanly, last tick %d" % client.decoder.newest_tick)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7779, help="the daemon's --udp-port")
    parser.add_argument("--token", default=os.environ.get("COLLIDE_TOKEN", ""))
    parser.add_argument("--name", default="python-udp-example")
    parser.add_argument("--intents", type=int, default=8, help="movement intents to send")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per step")
    parser.add_argument("--gen", default=os.environ.get("COLLIDE_PY_GEN", ""),
                        help="directory holding collide_pb2.py generated by protoc --python_out")
    args = parser.parse_args()

    if args.gen:
        sys.path.insert(0, args.gen)
    try:
        import collide_pb2 as pb
    except ImportError as e:
        sys.exit("collide_udp: %s\n  generate it: protoc --python_out=DIR -Iproto "
                 "proto/collide.proto, then pass --gen DIR (needs python3-protobuf)" % e)

    def log(line):
        print("collide_udp: " + line, flush=True)

    try:
        run(pb, args, log)
    except (ProtocolFailure, OSError) as e:
        print("collide_udp: FAIL: %s" % e, file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

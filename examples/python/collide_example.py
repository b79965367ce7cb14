#!/usr/bin/env python3
"""A small collide client in Python: the whole protocol v1 session, end to end.

It speaks to collided through the code that protoc generates from proto/collide.proto and Debian's
python3-protobuf runtime, and nothing else from the project, so it doubles as a cross-language
check of the contract (tests/examples runs it against the real daemon):

  Hello -> Welcome, SpawnBody -> Spawned, a few MoveIntents with client-side prediction reconciled
  against each Snapshot's last_input_seq, a stale intent that must be ignored, a non-fatal error,
  Ping -> Pong, DespawnBody -> the id in Snapshot.removed, then a clean close.

With --quantized (protocol 1.1) the same session runs on quantized snapshots: Snapshot.packed,
decoded by collide_quantized.py next to this file; --snapshot-rate asks for fewer of them.

A ticket (PROTOCOL.md 1.2) goes where a token goes: --token takes the daemon's shared token or a
ticket the game's backend issued. mint_ticket below is how a backend makes one, with the standard
library only; --ticket-key makes this client its own, as a backend would for it.

Generate the protobuf module first (the build does it for the test; nothing generated is
committed), then run against a daemon:

  protoc --python_out=/tmp/collide-py -Iproto proto/collide.proto
  /usr/bin/python3 examples/python/collide_example.py --gen /tmp/collide-py --port 7777

Exit status 0 when every step behaved as docs/protocol.md says; 1 with the reason otherwise.
"""

import argparse
import base64
import hashlib
import hmac
import json
import math
import os
import socket
import sys
import time

from collide_quantized import QuantizedDecoder

PROTOCOL_VERSION = 1
MAX_VARINT_BYTES = 5  # a longer length prefix is a framing error (FRAME_TOO_LARGE)
MAX_FRAME = 1 << 20  # this client's own bound on what it accepts from the server


def b64url(data):
    """base64url without padding, as a JWT writes each of its three parts (RFC 7515, 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint_ticket(key, room, ttl, sub=None, admin=False, max_bodies=None, now=None):
    """A ticket as a game's backend makes it (PROTOCOL.md 1.2, "Tickets: who may join which room";
    docs/operations.md, "Tickets"): an HS256 JWT (RFC 7519, compact form) signed with the daemon's
    --ticket-key, for one player and one room. The client passes it as Hello.token.

    key: the daemon's --ticket-key (str or bytes). room: the room it admits to, the Hello's room
    ("" or "default": the default room). ttl: seconds it stays valid (a minute covers a join; the
    client may reuse it to reconnect until it expires). sub: the player's name, which the daemon
    logs. admin: makes the player an admin of that room only. max_bodies: lowers the per-client
    body limit for this player. now: the issue time in seconds since the epoch (default: the
    clock); the daemon allows --ticket-leeway-s of skew between its clock and the backend's."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    iat = int(time.time() if now is None else now)
    claims = {"room": room, "iat": iat, "exp": iat + int(math.ceil(ttl))}
    if sub is not None:
        claims["sub"] = sub
    if admin:
        claims["admin"] = True
    if max_bodies is not None:
        claims["max_bodies"] = int(max_bodies)
    header = {"alg": "HS256", "typ": "JWT"}
    signing_input = "%s.%s" % (b64url(json.dumps(header, separators=(",", ":")).encode()),
                               b64url(json.dumps(claims, separators=(",", ":")).encode()))
    signature = hmac.new(key, signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


class ProtocolFailure(Exception):
    """The server did something docs/protocol.md says it must not (or did not do what it must)."""


def encode_varint(value):
    """Base-128 varint, low 7 bits first, high bit set on every byte but the last."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class Connection:
    """One TCP connection carrying length-delimited ClientMessage / ServerMessage frames."""

    def __init__(self, pb, host, port, timeout_s):
        self.pb = pb  # the generated collide_pb2 module
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()  # bytes received and not yet parsed into a frame
        self.next_request_id = 1  # request ids let us match replies; 0 means "no reply wanted"

    def send(self, want_reply=True, **msg):
        """Sends one ClientMessage with the given oneof field set; returns its request_id."""
        request_id = 0
        if want_reply:
            request_id = self.next_request_id
            self.next_request_id += 1
        body = self.pb.ClientMessage(request_id=request_id, **msg).SerializeToString()
        self.sock.sendall(encode_varint(len(body)) + body)
        return request_id

    def _frame_from_buffer(self):
        """Returns one complete frame body from self.buf, or None if more bytes are needed."""
        length = 0
        for i, byte in enumerate(self.buf[:MAX_VARINT_BYTES]):
            length |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                start = i + 1
                break
        else:
            if len(self.buf) >= MAX_VARINT_BYTES:
                raise ProtocolFailure("length prefix longer than 5 bytes")
            return None
        if length > MAX_FRAME:
            raise ProtocolFailure("server frame of %d bytes" % length)
        if len(self.buf) < start + length:
            return None
        body = bytes(self.buf[start : start + length])
        del self.buf[: start + length]
        return body

    def recv(self):
        """Blocks for the next ServerMessage; None when the server closed the connection."""
        while True:
            body = self._frame_from_buffer()
            if body is not None:
                msg = self.pb.ServerMessage()
                msg.ParseFromString(body)
                return msg
            chunk = self.sock.recv(65536)
            if not chunk:
                if self.buf:
                    raise ProtocolFailure("connection closed inside a frame")
                return None
            self.buf += chunk

    def close(self):
        self.sock.close()


class Client:
    """Session state: our body, the world as seen through snapshots, and our prediction."""

    def __init__(self, conn, log):
        self.conn = conn  # the framed connection
        self.log = log  # print-like function for progress lines
        self.welcome = None  # the Welcome message
        self.body_id = 0  # id of the one moving body we own (0 = none yet)
        self.bodies = {}  # id -> last known BodyState (merged from deltas)
        self.removed_seen = set()  # ids the server told us left our view
        self.snapshots = 0  # Snapshot messages received
        self.last_tick = 0  # tick of the newest snapshot
        self.pending = []  # (input_seq, vx, vy) sent and not yet acknowledged
        self.acked_seq = 0  # newest last_input_seq the server reported for our body
        self.predicted = None  # (x, y): authoritative position + replay of pending inputs
        self.max_correction = 0.0  # largest snap of the prediction onto the server's state
        self.decoder = None  # a QuantizedDecoder when the session asked for quantized snapshots

    def dt(self):
        return 1.0 / self.welcome.tick_rate_hz

    def apply_snapshot(self, snap):
        """Merges a delta into the local world and reconciles our prediction against it."""
        if snap.tick <= self.last_tick:
            raise ProtocolFailure("snapshot tick %d after %d" % (snap.tick, self.last_tick))
        self.snapshots += 1
        self.last_tick = snap.tick
        # Quantized: the packed records become the same BodyStates a float snapshot carries.
        bodies = self.decoder.apply(snap) if self.decoder else snap.bodies
        for body in bodies:
            known = self.bodies.get(body.id)
            if known is None and not body.HasField("shape"):
                raise ProtocolFailure("body %d first seen without its shape" % body.id)
            # A delta carries the whole dynamic state (position, velocity, angle, last_input_seq;
            # a zero is a real zero, so no proto3 MergeFrom here); shape, kind and owner only
            # come the first time, so keep them from what we already know.
            state = self.conn.pb.BodyState()
            state.CopyFrom(body)
            if known is not None:
                if not body.HasField("shape"):
                    state.shape.CopyFrom(known.shape)
                state.kind = body.kind or known.kind
                state.owner = body.owner or known.owner
            self.bodies[body.id] = state
            self.removed_seen.discard(body.id)
        for body_id in snap.removed:
            self.bodies.pop(body_id, None)
            self.removed_seen.add(body_id)
        mine = next((b for b in bodies if b.id == self.body_id), None)
        if mine is not None:
            self.reconcile(mine)

    def reconcile(self, state):
        """Server reconciliation: drop acknowledged inputs, replay the rest from the server's
        position. Each input was predicted for one tick when it was sent, so replaying the
        pending ones gives where we believe the body is now."""
        if state.last_input_seq < self.acked_seq:
            raise ProtocolFailure(
                "last_input_seq went back: %d after %d" % (state.last_input_seq, self.acked_seq)
            )
        self.acked_seq = state.last_input_seq
        self.pending = [p for p in self.pending if p[0] > self.acked_seq]
        x, y = state.position.x, state.position.y
        for _, vx, vy in self.pending:
            x += vx * self.dt()
            y += vy * self.dt()
        if self.predicted is not None:
            # How far the prediction was off: collisions the client did not simulate, or a
            # server tick that fell between two of our sends.
            error = math.hypot(self.predicted[0] - x, self.predicted[1] - y)
            self.max_correction = max(self.max_correction, error)
        self.predicted = (x, y)

    def await_reply(self, request_id, kind, timeout_s):
        """Reads until the reply to request_id arrives, applying snapshots on the way."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = self.conn.recv()
            if msg is None:
                raise ProtocolFailure("server closed while waiting for %s" % kind)
            which = msg.WhichOneof("msg")
            if which == "snapshot":
                self.apply_snapshot(msg.snapshot)
            elif which == "goodbye":
                raise ProtocolFailure("Goodbye while waiting for %s: %s" % (kind, msg.goodbye.reason))
            elif msg.request_id == request_id:
                if which != kind:
                    detail = ""
                    if which == "error":
                        detail = ": %s %s" % (
                            self.conn.pb.ErrorCode.Name(msg.error.code),
                            msg.error.message,
                        )
                    raise ProtocolFailure("wanted %s for request %d, got %s%s"
                                          % (kind, request_id, which, detail))
                return msg
            else:
                raise ProtocolFailure("unexpected %s (request_id %d)" % (which, msg.request_id))
        raise ProtocolFailure("no %s within %.1f s" % (kind, timeout_s))

    def pump_until(self, done, what, timeout_s):
        """Applies snapshots until done() holds."""
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() >= deadline:
                raise ProtocolFailure("timed out waiting for %s" % what)
            msg = self.conn.recv()
            if msg is None:
                raise ProtocolFailure("server closed while waiting for %s" % what)
            which = msg.WhichOneof("msg")
            if which != "snapshot":
                raise ProtocolFailure("unexpected %s while waiting for %s" % (which, what))
            self.apply_snapshot(msg.snapshot)

    def move(self, seq, vx, vy):
        """Sends an intent and predicts it locally for one tick."""
        pb = self.conn.pb
        self.conn.send(want_reply=False,
                       move=pb.MoveIntent(body_id=self.body_id, input_seq=seq,
                                          velocity=pb.Vec2(x=vx, y=vy)))
        self.pending.append((seq, vx, vy))
        if self.predicted is not None:
            self.predicted = (self.predicted[0] + vx * self.dt(), self.predicted[1] + vy * self.dt())


def run(pb, args, log):
    token = args.token
    if args.ticket_key:
        # What the game's backend does when a player asks to join: a ticket for the room its
        # Hello names ("" here: the default room), a minute to use it. Neither the key nor the
        # ticket is printed: both are credentials.
        token = mint_ticket(args.ticket_key, "", 60, sub=args.name)
        log("ticket made for the default room, sub %s, valid 60 s" % args.name)
    conn = Connection(pb, args.host, args.port, args.timeout)
    client = Client(conn, log)
    try:
        # 1. Hello -> Welcome.
        rid = conn.send(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, name=args.name,
                                       token=token, quantized=args.quantized,
                                       snapshot_rate_hz=args.snapshot_rate))
        client.welcome = w = client.await_reply(rid, "welcome", args.timeout).welcome
        if w.protocol_version != PROTOCOL_VERSION or w.client_id == 0 or w.tick_rate_hz == 0:
            raise ProtocolFailure("bad Welcome: %s" % w)
        if args.quantized:
            if "quantized" not in w.features or w.position_quantum <= 0:
                raise ProtocolFailure("asked for quantized snapshots: %s" % w)
            client.decoder = QuantizedDecoder(pb, w.position_quantum, w.velocity_quantum)
            log("quantized snapshots at %d Hz: position quantum %g, velocity quantum %g"
                % (w.snapshot_rate_hz, w.position_quantum, w.velocity_quantum))
        log("welcome: client %d, %d Hz, tick %d, world (%g,%g)-(%g,%g), max speed %g, "
            "%d bodies per client" % (w.client_id, w.tick_rate_hz, w.tick, w.world_min.x,
                                      w.world_min.y, w.world_max.x, w.world_max.y, w.max_speed,
                                      w.max_bodies_per_client))

        # 2. Spawn one moving box in the middle of the world -> Spawned.
        centre = pb.Vec2(x=(w.world_min.x + w.world_max.x) / 2, y=(w.world_min.y + w.world_max.y) / 2)
        box = pb.Shape(box=pb.Box(half_extents=pb.Vec2(x=0.5, y=0.5)))
        rid = conn.send(spawn=pb.SpawnBody(kind=pb.BODY_KIND_MOVING, shape=box, position=centre))
        spawned = client.await_reply(rid, "spawned", args.timeout).spawned
        if spawned.body_id == 0:
            raise ProtocolFailure("Spawned with body id 0")
        client.body_id = spawned.body_id
        log("spawned: body %d at (%.2f, %.2f)" % (spawned.body_id, spawned.position.x,
                                                 spawned.position.y))
        client.pump_until(lambda: client.body_id in client.bodies, "our body in a snapshot",
                          args.timeout)
        mine = client.bodies[client.body_id]
        if mine.owner != w.client_id or mine.kind != pb.BODY_KIND_MOVING:
            raise ProtocolFailure("our body: owner %d kind %d" % (mine.owner, mine.kind))

        # 3. A few intents, one per tick as a game loop would (here: paced by the snapshots),
        # each predicted locally; then wait until the server has acknowledged the last one.
        # Half of them go right, half up: the body must end up away from where it started.
        start = client.bodies[client.body_id].position
        start = (start.x, start.y)
        speed = min(4.0, w.max_speed)
        seq = 0
        for step in range(args.intents):
            seq += 1
            if step < args.intents // 2:
                client.move(seq, speed, 0.0)
            else:
                client.move(seq, 0.0, speed)
            tick = client.last_tick
            client.pump_until(lambda: client.last_tick > tick, "the next snapshot", args.timeout)
        client.pump_until(lambda: client.acked_seq >= seq, "input %d acknowledged" % seq,
                          args.timeout)
        auth = client.bodies[client.body_id].position
        if (auth.x, auth.y) == start:
            raise ProtocolFailure("%d intents at speed %g did not move the body from %s"
                                  % (seq, speed, start))
        log("reconciled: inputs 1..%d acknowledged, body at (%.2f, %.2f), largest correction "
            "%.3f units, %d snapshots" % (seq, auth.x, auth.y, client.max_correction,
                                          client.snapshots))

        # Stop, then send a stale intent (older input_seq): the server must ignore it, so the
        # body stays at rest and last_input_seq does not move back.
        seq += 1
        client.move(seq, 0.0, 0.0)
        client.pump_until(lambda: client.acked_seq >= seq, "the stop acknowledged", args.timeout)
        client.pending.clear()  # the stale one below is expected to be ignored, not acknowledged
        conn.send(want_reply=False, move=pb.MoveIntent(body_id=client.body_id, input_seq=seq - 1,
                                                       velocity=pb.Vec2(x=speed, y=0)))
        rest = client.bodies[client.body_id].position
        rest = (rest.x, rest.y)
        wait_tick = client.last_tick + 10
        client.pump_until(lambda: client.last_tick >= wait_tick, "10 ticks", args.timeout)
        now = client.bodies[client.body_id]
        if (now.position.x, now.position.y) != rest or now.last_input_seq != seq:
            raise ProtocolFailure("a stale intent moved the body: %s" % now)
        log("stale intent %d ignored (body still at rest, last_input_seq %d)" % (seq - 1, seq))

        # 4. A request the server must refuse without closing: an intent for a body that does not
        # exist -> Error{NOT_FOUND, fatal=false}, echoing our request id.
        rid = conn.send(move=pb.MoveIntent(body_id=0xFFFFFFF0, input_seq=1, velocity=pb.Vec2(x=1, y=0)))
        err = client.await_reply(rid, "error", args.timeout).error
        if err.code != pb.ERROR_CODE_NOT_FOUND or err.fatal:
            raise ProtocolFailure("wanted non-fatal NOT_FOUND, got %s" % err)
        log("error as documented: %s (%s), connection kept" % (pb.ErrorCode.Name(err.code), err.message))

        # 5. Ping -> Pong echoing our clock.
        sent_us = time.monotonic_ns() // 1000
        rid = conn.send(ping=pb.Ping(client_time_us=sent_us))
        pong = client.await_reply(rid, "pong", args.timeout).pong
        if pong.client_time_us != sent_us:
            raise ProtocolFailure("Pong echoed %d, sent %d" % (pong.client_time_us, sent_us))
        rtt_ms = (time.monotonic_ns() // 1000 - sent_us) / 1000.0
        log("pong: rtt %.2f ms, server tick %d" % (rtt_ms, pong.tick))

        # 6. Despawn: no reply message; the id comes back in a snapshot's removed list.
        conn.send(want_reply=False, despawn=pb.DespawnBody(body_id=client.body_id))
        client.pump_until(lambda: client.body_id in client.removed_seen, "our body removed",
                          args.timeout)
        log("despawned: body %d in Snapshot.removed" % client.body_id)
    finally:
        # 7. A clean exit is just closing the connection: the server despawns what we still own.
        conn.close()
    log("ok: %d snapshots, last tick %d" % (client.snapshots, client.last_tick))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7777)
    parser.add_argument("--token", default=os.environ.get("COLLIDE_TOKEN", ""),
                        help="Hello.token: the daemon's shared token, or a ticket")
    parser.add_argument("--ticket-key", default=os.environ.get("COLLIDE_TICKET_KEY", ""),
                        help="the daemon's --ticket-key: make our own ticket (mint_ticket) and "
                             "send it as Hello.token (default $COLLIDE_TICKET_KEY)")
    parser.add_argument("--name", default="python-example")
    parser.add_argument("--intents", type=int, default=8, help="movement intents to send")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per step")
    parser.add_argument("--quantized", action="store_true",
                        help="ask for quantized snapshots (Snapshot.packed) and decode them")
    parser.add_argument("--snapshot-rate", type=int, default=0,
                        help="snapshots per second asked for (0: every tick)")
    parser.add_argument("--gen", default=os.environ.get("COLLIDE_PY_GEN", ""),
                        help="directory holding collide_pb2.py generated by protoc --python_out")
    args = parser.parse_args()
    if args.token and args.ticket_key:
        parser.error("give --token or --ticket-key, not both (a Hello carries one token)")

    if args.gen:
        sys.path.insert(0, args.gen)
    try:
        import collide_pb2 as pb
    except ImportError as e:
        sys.exit("collide_example: %s\n  generate it: protoc --python_out=DIR -Iproto "
                 "proto/collide.proto, then pass --gen DIR (needs python3-protobuf)" % e)

    def log(line):
        print("collide_example: " + line, flush=True)

    try:
        run(pb, args, log)
    except (ProtocolFailure, OSError) as e:
        print("collide_example: FAIL: %s" % e, file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

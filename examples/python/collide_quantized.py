"""Decoder of collide's quantized snapshots (Hello.quantized, protocol 1.1; 1.2's characters and
one-way bodies: flag bits 7 and 8) in plain Python.

A client that sets Hello.quantized gets Snapshot.packed instead of Snapshot.bodies: one record per
body in ascending id order, each part a zig-zag varint delta in fixed point against the value the
server last sent this client (docs/protocol.md, "Quantized snapshots", has the layout and a worked
example). The server rounds; the client adds integers, so the decoded state is exactly the
server's quantized state, with no drift however long the session.

    decoder = QuantizedDecoder(pb, welcome.position_quantum, welcome.velocity_quantum)
    for body_state in decoder.apply(snapshot):   # pb.BodyState per record, floats filled in
        ...
    decoder.bodies                               # id -> Body, every body known, in quanta

Standard library only, besides the generated collide_pb2 (for the BodyStates it hands back).
"""

import math

POSITION = 1 << 0         # zz dx, zz dy
VELOCITY = 1 << 1         # zz dvx, zz dvy
ANGLE = 1 << 2            # zz da, in 1/65536 turn, modulo 65536
INPUT_SEQ = 1 << 3        # varint last_input_seq (absolute)
ANGULAR_VELOCITY = 1 << 4  # zz dw, in 1/1024 rad/s
NEW = 1 << 5              # varint kind, varint owner, varint len, Shape bytes
FILTER = 1 << 6           # varint category, varint mask, varint sensor (only with NEW)
GROUND = 1 << 7           # 1.2: varint grounded (0/1), varint ground_id, absolute, after FILTER's
ONE_WAY = 1 << 8          # 1.2: no payload, only with NEW: a one-way body
KNOWN_FLAGS = 0x1FF


class DecodeError(Exception):
    """The packed bytes break the layout: the client has lost sync and should reconnect."""


class Body:
    """One body as the server last described it, in quanta (integers)."""

    __slots__ = ("id", "px", "py", "vx", "vy", "angle", "w", "seq", "kind", "owner", "shape",
                 "category", "mask", "sensor", "grounded", "ground_id", "one_way")

    def __init__(self, body_id):
        self.id = body_id
        self.px = self.py = self.vx = self.vy = self.angle = self.w = self.seq = 0
        self.kind = self.owner = 0
        self.shape = None
        self.category = self.mask = 0
        self.sensor = False
        self.grounded = False   # 1.2: a character standing (bit 7)
        self.ground_id = 0      # 1.2: the body it stands on; 0 for none or the bounds
        self.one_way = False    # 1.2: bit 8 of its new record


def _varint(data, i):
    value = 0
    shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise DecodeError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _zigzag(data, i):
    u, i = _varint(data, i)
    return (u >> 1) ^ -(u & 1), i


class QuantizedDecoder:
    def __init__(self, pb, position_quantum, velocity_quantum):
        self.pb = pb
        self.pq = position_quantum or 1.0 / 256
        self.vq = velocity_quantum or 1.0 / 64
        self.bodies = {}
        self.flags = {}  # id -> the flags of its record in the last snapshot applied

    def apply(self, snap):
        """Applies one Snapshot (its `removed`, then its `packed`); returns a BodyState per record
        with the body's whole state after it (shape, kind and owner when it is new)."""
        for body_id in snap.removed:
            self.bodies.pop(body_id, None)
        data = snap.packed
        out = []
        self.flags = {}
        i = 0
        body_id = 0
        while i < len(data):
            gap, i = _varint(data, i)
            flags, i = _varint(data, i)
            if gap == 0 and body_id != 0 or body_id + gap == 0 or body_id + gap > 0xFFFFFFFF:
                raise DecodeError("ids must ascend")
            body_id += gap
            self.flags[body_id] = flags
            if flags & ~KNOWN_FLAGS or (flags & (FILTER | ONE_WAY) and not flags & NEW):
                raise DecodeError("flags 0x%x of body %d" % (flags, body_id))
            if flags & NEW:
                if body_id in self.bodies:
                    raise DecodeError("body %d announced twice" % body_id)
                b = Body(body_id)  # its parts are deltas against zero
            else:
                b = self.bodies.get(body_id)
                if b is None:
                    raise DecodeError("a change to body %d, never announced" % body_id)
            if flags & POSITION:
                dx, i = _zigzag(data, i)
                dy, i = _zigzag(data, i)
                b.px += dx
                b.py += dy
            if flags & VELOCITY:
                dx, i = _zigzag(data, i)
                dy, i = _zigzag(data, i)
                b.vx += dx
                b.vy += dy
            if flags & ANGLE:
                da, i = _zigzag(data, i)
                if not -32768 <= da <= 32767:
                    raise DecodeError("angle delta %d of body %d out of range" % (da, body_id))
                b.angle = (b.angle + da) % 65536
            if flags & INPUT_SEQ:
                b.seq, i = _varint(data, i)
            if flags & ANGULAR_VELOCITY:
                dw, i = _zigzag(data, i)
                b.w += dw
            if flags & NEW:
                b.kind, i = _varint(data, i)
                b.owner, i = _varint(data, i)
                n, i = _varint(data, i)
                if i + n > len(data):
                    raise DecodeError("shape of body %d truncated" % body_id)
                b.shape = self.pb.Shape()
                b.shape.ParseFromString(bytes(data[i:i + n]))
                i += n
                if flags & FILTER:
                    b.category, i = _varint(data, i)
                    b.mask, i = _varint(data, i)
                    sensor, i = _varint(data, i)
                    b.sensor = sensor == 1
                b.one_way = bool(flags & ONE_WAY)
            if flags & GROUND:  # absolute values, after the new body's parts
                grounded, i = _varint(data, i)
                if grounded > 1:
                    raise DecodeError("grounded %d of body %d is not 0 or 1" % (grounded, body_id))
                b.grounded = grounded == 1
                b.ground_id, i = _varint(data, i)
                if b.ground_id > 0xFFFFFFFF:
                    raise DecodeError("ground_id of body %d is not a uint32" % body_id)
            if flags & NEW:
                self.bodies[body_id] = b
            out.append(self.body_state(b, flags & NEW))
        return out

    def body_state(self, b, with_shape=True):
        """The body as a pb.BodyState in world units (what a float snapshot would carry): the
        angle in [-pi, pi) as the server keeps it (quanta of half a turn and more are negative
        angles), the turning speed in rad/s."""
        turns = b.angle - 65536 if b.angle >= 32768 else b.angle
        bs = self.pb.BodyState(id=b.id, last_input_seq=b.seq, angle=turns * 2.0 * math.pi / 65536,
                               angular_velocity=b.w / 1024.0, grounded=b.grounded,
                               ground_id=b.ground_id)
        bs.position.x = b.px * self.pq
        bs.position.y = b.py * self.pq
        bs.velocity.x = b.vx * self.vq
        bs.velocity.y = b.vy * self.vq
        if with_shape:
            bs.kind = b.kind
            bs.owner = b.owner
            bs.one_way = b.one_way
            if b.shape is not None:
                bs.shape.CopyFrom(b.shape)
        return bs

"""An independent reader of collide's journals (docs/recording.md, format version 1), in Python
with the standard library only: it walks the header and every record, and writes a journal back
from its records, so a test can change one (drop an intent) and hand the copy to the C replay.
It shares nothing with server/journal but the format's description: that it reads the daemon's
files is the proof the format is readable from another language."""

import struct

MAGIC = b"COLLIDEJ"
VERSION = 1

STEP, HASH, SPAWN, DESPAWN, FILTER, ONE_WAY, CHARACTER, COLLISIONS, END = range(1, 10)
INTENT = 0x80
I_VELOCITY, I_SPIN, I_SEQ, I_JUMP, I_RESERVED = 0x40, 0x20, 0x10, 0x08, 0x07
SHAPE_BOX, SHAPE_POLYGON, SHAPE_CIRCLE = 1, 2, 3
NAMES = {STEP: "STEP", HASH: "HASH", SPAWN: "SPAWN", DESPAWN: "DESPAWN", FILTER: "FILTER",
         ONE_WAY: "ONE_WAY", CHARACTER: "CHARACTER", COLLISIONS: "COLLISIONS", END: "END"}


class Malformed(Exception):
    """Bytes that are not a journal of this version (the message says where)."""


class Cut(Exception):
    """The bytes end inside a record."""


def zigzag(v):
    return ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF


def unzigzag(u):
    v = (u >> 1) ^ -(u & 1)
    return ((v + 2**31) % 2**32) - 2**31


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class Cursor:
    def __init__(self, data, at=0):
        self.data, self.at = data, at

    def take(self, n):
        if self.at + n > len(self.data):
            raise Cut("cut at byte %d (wanted %d more)" % (self.at, n))
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def f32(self):
        return struct.unpack("<f", self.take(4))[0]

    def varint(self):
        v, shift = 0, 0
        while True:
            b = self.u8()
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
            if shift >= 64:
                raise Malformed("a varint longer than 64 bits at byte %d" % self.at)

    def string(self):
        return self.take(self.u8()).decode("utf-8", "replace")


class Header:
    pass


def read_header(data):
    """The header (its fields as attributes; .records_at is where the records begin)."""
    c = Cursor(data)
    if c.take(8) != MAGIC:
        raise Malformed("no COLLIDEJ at the start")
    h = Header()
    h.version = c.u32()
    if h.version != VERSION:
        raise Malformed("format version %d, this reader reads %d" % (h.version, VERSION))
    fields_len = c.u32()
    f = Cursor(c.take(fields_len))
    h.start_tick, h.unix_ms = f.u64(), f.u64()
    h.hash_every, h.history_ticks, h.flags = f.u32(), f.u32(), f.u32()
    h.daemon, h.room, h.world = f.string(), f.string(), f.string()
    image_len = c.u64()
    h.image = c.take(image_len)
    h.records_at = c.at
    return h


class Record:
    """One record: its tag (INTENT for every intent, the flags in .flags), the bytes it took in
    the file (.raw), the tick it belongs to (.tick: an input steers tick + 1; a STEP's is the
    tick before it) and what it holds (.id for the records of a body; an intent's .id is
    resolved from the delta chain)."""

    def __repr__(self):
        return "<%s tick %d id %s>" % (NAMES.get(self.tag, "INTENT"), self.tick,
                                        getattr(self, "id", None))


def _shape(c):
    kind = c.u8()
    if kind == SHAPE_BOX:
        c.take(8)
    elif kind == SHAPE_CIRCLE:
        c.take(4)
    elif kind == SHAPE_POLYGON:
        n = c.u8()
        if not 3 <= n <= 16:
            raise Malformed("a polygon of %d vertices at byte %d" % (n, c.at))
        c.take(8 * n)
    else:
        raise Malformed("shape kind %d at byte %d" % (kind, c.at))
    return kind


def read_records(data, h=None):
    """(records, cut): every whole record after the header, in order, and whether the bytes end
    without an END record (cut inside a record or after a whole one)."""
    h = h or read_header(data)
    c = Cursor(data, h.records_at)
    tick, prev_id, out = h.start_tick, 0, []
    while c.at < len(data):
        start = c.at
        r = Record()
        r.tick = tick
        try:
            tag = c.u8()
            if tag & INTENT:
                r.tag, r.flags = INTENT, tag & 0x7F
                if tag & I_RESERVED:
                    raise Malformed("an intent with reserved bits 0x%02x at byte %d" % (tag, start))
                r.id = (prev_id + unzigzag(c.varint())) & 0xFFFFFFFF
                after_id = c.at
                r.seq_delta = c.varint() if tag & I_SEQ else 1
                r.velocity = (c.f32(), c.f32()) if tag & I_VELOCITY else None
                r.spin = c.f32() if tag & I_SPIN else None
                r.jump = bool(tag & I_JUMP)
                r.payload = data[after_id:c.at]  # the SEQ delta, velocity, turning speed as read
                prev_id = r.id
            else:
                r.tag = tag
                if tag == STEP:
                    r.steps = c.varint()
                    if r.steps == 0:
                        raise Malformed("a STEP of 0 at byte %d" % start)
                    tick += r.steps
                elif tag == HASH:
                    r.hash = c.u64()
                elif tag == SPAWN:
                    r.kind = c.u8()
                    r.shape = _shape(c)
                    r.x, r.y, r.angle = c.f32(), c.f32(), c.f32()
                    r.owner, r.id = c.varint(), c.varint()
                elif tag == DESPAWN:
                    r.id = c.varint()
                elif tag == FILTER:
                    r.id = c.varint()
                    c.take(9)
                elif tag == ONE_WAY:
                    r.id = c.varint()
                    c.take(1)
                elif tag == CHARACTER:
                    r.id = c.varint()
                    c.take(20)
                    c.varint()
                    c.varint()
                elif tag == COLLISIONS:
                    c.take(1)
                elif tag != END:
                    raise Malformed("tag 0x%02x at byte %d" % (tag, start))
        except Cut:
            return out, True
        r.raw = data[start:c.at]
        out.append(r)
        if r.tag == END:
            return out, False
    return out, True


def write_journal(data, records, h=None):
    """The journal of data's header and the given records, every intent's id delta taken again
    from the intent before it in `records` (so records may be left out)."""
    h = h or read_header(data)
    out = bytearray(data[:h.records_at])
    prev_id = 0
    for r in records:
        if r.tag == INTENT:
            delta = r.id - prev_id
            delta = ((delta + 2**31) % 2**32) - 2**31
            out += bytes([INTENT | r.flags]) + varint(zigzag(delta)) + r.payload
            prev_id = r.id
        else:
            out += r.raw
    return bytes(out)

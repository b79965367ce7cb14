// Quantized snapshots (protocol 1.1, Hello.quantized; PROTOCOL.md "Snapshot rate and quantized
// snapshots", docs/protocol.md for the layout and a worked example). A quantized client's
// snapshots carry `Snapshot.packed` instead of `bodies`: one record per body in ascending id
// order, each part a zig-zag varint delta, in quanta, against what the server last sent this
// client. The decoder keeps every body in quanta (integers) and adds the deltas, so its state is
// the server's quantized state exactly, with no drift; `toBody` gives the float view the SDK's
// float snapshots give. The same algorithm as the C client's proto/quant.c and the Python
// example's examples/python/collide_quantized.py.
//
// Varints are read as JS numbers, exactly: a varint whose value needs more than 53 bits is refused
// (no valid part needs more than 34: ids and absolute values are uint32, a delta between two
// int32s zig-zags to under 2^33), so no value is ever silently rounded.
import { pb, type Shape, type SnapshotMsg } from "./proto";
import type { Body } from "./world";

/** The flag bits of a record, in the order their parts follow the flags. */
export const QuantizedFlag = {
  POSITION: 1 << 0, // zz dx, zz dy (position_quantum)
  VELOCITY: 1 << 1, // zz dvx, zz dvy (velocity_quantum)
  ANGLE: 1 << 2, // zz da, 1/65536 turn, the delta modulo 65536 in [-32768, 32767]
  INPUT_SEQ: 1 << 3, // varint last_input_seq (absolute)
  ANGULAR_VELOCITY: 1 << 4, // zz dw, 1/1024 rad/s
  NEW: 1 << 5, // varint kind, varint owner, varint len, len bytes of a Shape message
  FILTER: 1 << 6, // varint category, varint mask, varint sensor (0/1); only with NEW
  GROUND: 1 << 7, // 1.2: varint grounded (0/1), varint ground_id, absolute; after FILTER's part
  ONE_WAY: 1 << 8, // 1.2: no payload; only with NEW: a one-way body
} as const;
const KNOWN_FLAGS = 0x1ff;

/** Welcome's defaults, for a server that grants quantized without saying its quanta. */
export const DEFAULT_POSITION_QUANTUM = 1 / 256;
export const DEFAULT_VELOCITY_QUANTUM = 1 / 64;
export const ANGLE_STEPS = 65536;
export const ANGULAR_VELOCITY_PER_RAD = 1024;

const UINT32_MAX = 0xffffffff;
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** The packed bytes break the layout: the client has lost sync with the server and should
 * reconnect. The decoder's state is left as it was before the snapshot. */
export class QuantizedDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QuantizedDecodeError";
  }
}

/** One body as the server last described it to this client, in quanta. */
export interface QuantizedBody {
  id: number;
  /** Position in position quanta, velocity in velocity quanta (int32). */
  px: number;
  py: number;
  vx: number;
  vy: number;
  /** 1/65536 turn, [0, 65536). */
  angle: number;
  /** 1/1024 rad/s (int32). */
  angularVelocity: number;
  lastInputSeq: number;
  kind: number;
  owner: number;
  shape: Shape;
  /** The filter as on the wire: 0 = the default (category 1, mask all bits). */
  category: number;
  mask: number;
  sensor: boolean;
  /** 1.2: a character standing after the last tick, and the body it stands on (0: none or the
   * world's bounds). */
  grounded: boolean;
  groundId: number;
  /** 1.2: a one-way body (bit 8 of its new record). */
  oneWay: boolean;
}

/** One decoded record: its flags and the body's whole state after it. */
export interface QuantizedRecord {
  id: number;
  flags: number;
  body: QuantizedBody;
}

/** Reads the parts of `packed` from `pos`, never past its end. */
class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  /** An unsigned varint, exact: refused past 10 bytes, at the end of the buffer, or above 2^53. */
  varint(what: string): number {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.buf.length) throw new QuantizedDecodeError(`truncated varint (${what}) at byte ${this.pos}`);
      const b = this.buf[this.pos++];
      const payload = b & 0x7f;
      // Bits at 53 and above would be rounded away in a double: refuse the value instead.
      if (payload !== 0 && shift + 7 > 53 && (shift >= 53 || payload >= 2 ** (53 - shift)))
        throw new QuantizedDecodeError(`varint (${what}) too large at byte ${this.pos - 1}`);
      value += payload * 2 ** shift;
      if (!(b & 0x80)) return value;
    }
    throw new QuantizedDecodeError(`varint (${what}) longer than 10 bytes at byte ${this.pos}`);
  }

  u32(what: string): number {
    const v = this.varint(what);
    if (v > UINT32_MAX) throw new QuantizedDecodeError(`${what} ${v} is not a uint32`);
    return v;
  }

  /** A zig-zag varint: 0, 1, 2, 3, 4 ... -> 0, -1, 1, -2, 2 ... */
  zigzag(what: string): number {
    const u = this.varint(what);
    return u % 2 === 1 ? -(u + 1) / 2 : u / 2;
  }

  bytes(n: number, what: string): Uint8Array {
    if (n > this.buf.length - this.pos)
      throw new QuantizedDecodeError(`${what}: ${n} bytes announced, ${this.buf.length - this.pos} left`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** base + d, refused when the sum leaves int32 (the server never sends one). */
function addI32(base: number, d: number, what: string, id: number): number {
  const s = base + d;
  if (s < INT32_MIN || s > INT32_MAX) throw new QuantizedDecodeError(`${what} of body ${id} leaves int32 (${base} + ${d})`);
  return s;
}

export class QuantizedDecoder {
  /** Every body the server told this client about and did not remove, in quanta. */
  readonly bodies = new Map<number, QuantizedBody>();
  readonly positionQuantum: number;
  readonly velocityQuantum: number;

  /** The quanta from the Welcome; 0 or absent takes the protocol's defaults. */
  constructor(positionQuantum = 0, velocityQuantum = 0) {
    this.positionQuantum = positionQuantum > 0 ? positionQuantum : DEFAULT_POSITION_QUANTUM;
    this.velocityQuantum = velocityQuantum > 0 ? velocityQuantum : DEFAULT_VELOCITY_QUANTUM;
  }

  /** Applies one snapshot: its `removed` first (ids it did not know are ignored), then the
   * records of `packed`. All or nothing: when the bytes break the layout (truncated, ids not
   * ascending, an unknown flag bit, a change to a body it does not know, a new body it knows, a
   * value out of range, a Shape that does not decode) it throws QuantizedDecodeError and its
   * state is unchanged. Returns the records, and the removed ids it knew. */
  apply(removed: Iterable<number>, packed: Uint8Array | null | undefined): { records: QuantizedRecord[]; removed: number[] } {
    const gone = new Set<number>();
    for (const id of removed) if (this.bodies.has(id)) gone.add(id);
    const known = (id: number) => this.bodies.has(id) && !gone.has(id);
    const records: QuantizedRecord[] = [];
    const r = new Reader(packed ?? new Uint8Array(0));
    let id = 0;
    while (!r.done) {
      const gap = r.varint("id gap");
      const flags = r.varint("flags");
      if ((records.length > 0 && gap === 0) || id + gap === 0 || id + gap > UINT32_MAX)
        throw new QuantizedDecodeError(`ids must ascend within uint32: ${id} + gap ${gap}`);
      id += gap;
      if (flags > KNOWN_FLAGS) throw new QuantizedDecodeError(`unknown flag bits 0x${flags.toString(16)} in the record of body ${id}`);
      if (flags & QuantizedFlag.FILTER && !(flags & QuantizedFlag.NEW))
        throw new QuantizedDecodeError(`a filter part without the new part in the record of body ${id}`);
      if (flags & QuantizedFlag.ONE_WAY && !(flags & QuantizedFlag.NEW))
        throw new QuantizedDecodeError(`the one-way bit without the new part in the record of body ${id}`);
      const isNew = (flags & QuantizedFlag.NEW) !== 0;
      const prev = this.bodies.get(id);
      if (isNew && known(id)) throw new QuantizedDecodeError(`body ${id} announced again while known`);
      if (!isNew && !known(id)) throw new QuantizedDecodeError(`a change to body ${id}, never announced`);
      // A new body's parts are deltas against zero.
      const b: QuantizedBody =
        isNew || !prev
          ? {
              id,
              px: 0,
              py: 0,
              vx: 0,
              vy: 0,
              angle: 0,
              angularVelocity: 0,
              lastInputSeq: 0,
              kind: 0,
              owner: 0,
              shape: pb.Shape.create(),
              category: 0,
              mask: 0,
              sensor: false,
              grounded: false,
              groundId: 0,
              oneWay: false,
            }
          : { ...prev };
      if (flags & QuantizedFlag.POSITION) {
        b.px = addI32(b.px, r.zigzag("dx"), "x", id);
        b.py = addI32(b.py, r.zigzag("dy"), "y", id);
      }
      if (flags & QuantizedFlag.VELOCITY) {
        b.vx = addI32(b.vx, r.zigzag("dvx"), "vx", id);
        b.vy = addI32(b.vy, r.zigzag("dvy"), "vy", id);
      }
      if (flags & QuantizedFlag.ANGLE) {
        const da = r.zigzag("da");
        if (da < -32768 || da > 32767) throw new QuantizedDecodeError(`angle delta ${da} of body ${id} outside [-32768, 32767]`);
        b.angle = (((b.angle + da) % ANGLE_STEPS) + ANGLE_STEPS) % ANGLE_STEPS;
      }
      if (flags & QuantizedFlag.INPUT_SEQ) b.lastInputSeq = r.u32("last_input_seq");
      if (flags & QuantizedFlag.ANGULAR_VELOCITY) b.angularVelocity = addI32(b.angularVelocity, r.zigzag("dw"), "angular velocity", id);
      if (isNew) {
        b.kind = r.u32("kind");
        b.owner = r.u32("owner");
        const shapeBytes = r.bytes(r.varint("shape length"), `the Shape of body ${id}`);
        try {
          b.shape = pb.Shape.decode(shapeBytes);
        } catch (e) {
          throw new QuantizedDecodeError(`the Shape of body ${id} does not decode: ${(e as Error).message}`);
        }
        if (flags & QuantizedFlag.FILTER) {
          b.category = r.u32("category");
          b.mask = r.u32("mask");
          const sensor = r.u32("sensor");
          if (sensor > 1) throw new QuantizedDecodeError(`sensor ${sensor} of body ${id} is not 0 or 1`);
          b.sensor = sensor === 1;
        }
        b.oneWay = (flags & QuantizedFlag.ONE_WAY) !== 0;
      }
      if (flags & QuantizedFlag.GROUND) {
        // Absolute values, not deltas, after the new body's parts.
        const grounded = r.u32("grounded");
        if (grounded > 1) throw new QuantizedDecodeError(`grounded ${grounded} of body ${id} is not 0 or 1`);
        b.grounded = grounded === 1;
        b.groundId = r.u32("ground_id");
      }
      records.push({ id, flags, body: b });
    }
    // The whole snapshot decoded: only now does the state change.
    for (const g of gone) this.bodies.delete(g);
    for (const rec of records) this.bodies.set(rec.id, rec.body);
    return { records, removed: [...gone] };
  }

  /** applies a Snapshot message; one that carries BodyStates is not a quantized one. */
  applySnapshot(snap: SnapshotMsg): { records: QuantizedRecord[]; removed: number[] } {
    if (snap.bodies.length) throw new QuantizedDecodeError(`a quantized session got ${snap.bodies.length} float BodyStates at tick ${snap.tick}`);
    return this.apply(snap.removed, snap.packed);
  }

  /** A body in world units, as the SDK's float snapshots give it (radians, units, units/s). */
  toBody(q: QuantizedBody, tick: number): Body {
    return {
      id: q.id,
      position: { x: q.px * this.positionQuantum, y: q.py * this.positionQuantum },
      velocity: { x: q.vx * this.velocityQuantum, y: q.vy * this.velocityQuantum },
      // [-pi, pi), as the float BodyState.angle and the C and Python decoders give it
      angle: ((q.angle >= ANGLE_STEPS / 2 ? q.angle - ANGLE_STEPS : q.angle) * 2 * Math.PI) / ANGLE_STEPS,
      angularVelocity: q.angularVelocity / ANGULAR_VELOCITY_PER_RAD,
      lastInputSeq: q.lastInputSeq,
      shape: q.shape,
      kind: q.kind,
      owner: q.owner,
      category: q.category,
      mask: q.mask,
      sensor: q.sensor,
      grounded: q.grounded,
      groundId: q.groundId,
      oneWay: q.oneWay,
      tick,
    };
  }
}

// The quantized snapshot decoder (src/quantized.ts) alone: the worked example of docs/protocol.md
// (bytes captured from the daemon), round trips of records built here by an independent encoder
// (BigInt varints, so the encoder cannot share the decoder's number tricks), and hostile buffers,
// each of which must give a QuantizedDecodeError and leave the state as it was.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CollideClient,
  CollideError,
  FrameDecoder,
  QuantizedDecodeError,
  QuantizedDecoder,
  QuantizedFlag as F,
  applyQuantizedSnapshot,
  pb,
  type Body,
  type QuantizedBody,
  type Shape,
  type SnapshotMsg,
  type Transport,
} from "../src/index";

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).map((h) => parseInt(h, 16)));
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;
const U32_MAX = 0xffffffff;

// ---- An encoder, the server's side, written independently of the decoder --------------------

function varint(out: number[], v: bigint | number): void {
  let x = BigInt(v);
  assert.ok(x >= 0n && x < 1n << 64n, `varint ${x}`);
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
}

/** (v << 1) ^ (v >> 63) over int64, as proto/quant.h's quant_zigzag. */
function zz(out: number[], v: bigint | number): void {
  const x = BigInt.asIntN(64, BigInt(v));
  varint(out, BigInt.asUintN(64, (x << 1n) ^ (x >> 63n)));
}

interface QState {
  px: number;
  py: number;
  vx: number;
  vy: number;
  angle: number;
  w: number;
  seq: number;
  /** 1.2 (bit 7): absent reads as 0, as on the wire */
  grounded?: number;
  groundId?: number;
}
const ZERO: QState = { px: 0, py: 0, vx: 0, vy: 0, angle: 0, w: 0, seq: 0 };

interface NewPart {
  kind: number;
  owner: number;
  shape: Shape;
  filter?: { category: number; mask: number; sensor: boolean };
  oneWay?: boolean;
}

/** One record of `cur` against `base` (ZERO and `fresh` for a new body), as the server writes it:
 * a bit for each part that differs. */
function record(out: number[], gap: number, cur: QState, base: QState, fresh?: NewPart): void {
  let flags = 0;
  if (cur.px !== base.px || cur.py !== base.py) flags |= F.POSITION;
  if (cur.vx !== base.vx || cur.vy !== base.vy) flags |= F.VELOCITY;
  if (cur.angle !== base.angle) flags |= F.ANGLE;
  if (cur.seq !== base.seq) flags |= F.INPUT_SEQ;
  if (cur.w !== base.w) flags |= F.ANGULAR_VELOCITY;
  if ((cur.grounded ?? 0) !== (base.grounded ?? 0) || (cur.groundId ?? 0) !== (base.groundId ?? 0)) flags |= F.GROUND;
  if (fresh) flags |= F.NEW | (fresh.filter ? F.FILTER : 0) | (fresh.oneWay ? F.ONE_WAY : 0);
  varint(out, gap);
  varint(out, flags);
  if (flags & F.POSITION) {
    zz(out, BigInt(cur.px) - BigInt(base.px));
    zz(out, BigInt(cur.py) - BigInt(base.py));
  }
  if (flags & F.VELOCITY) {
    zz(out, BigInt(cur.vx) - BigInt(base.vx));
    zz(out, BigInt(cur.vy) - BigInt(base.vy));
  }
  if (flags & F.ANGLE) {
    // The delta modulo 65536 into [-32768, 32767].
    let d = (cur.angle - base.angle) & 0xffff;
    if (d >= 32768) d -= 65536;
    zz(out, d);
  }
  if (flags & F.INPUT_SEQ) varint(out, cur.seq);
  if (flags & F.ANGULAR_VELOCITY) zz(out, BigInt(cur.w) - BigInt(base.w));
  if (fresh) {
    varint(out, fresh.kind);
    varint(out, fresh.owner);
    const shape = pb.Shape.encode(fresh.shape).finish();
    varint(out, shape.length);
    out.push(...shape);
    if (fresh.filter) {
      varint(out, fresh.filter.category);
      varint(out, fresh.filter.mask);
      varint(out, fresh.filter.sensor ? 1 : 0);
    }
  }
  // 1.2: absolute, after the new body's parts
  if (flags & F.GROUND) {
    varint(out, cur.grounded ?? 0);
    varint(out, cur.groundId ?? 0);
  }
}

/** A body's state in quanta; grounded and groundId only when not zero (as QState leaves them). */
const stateOf = (b: QuantizedBody): QState => ({
  px: b.px,
  py: b.py,
  vx: b.vx,
  vy: b.vy,
  angle: b.angle,
  w: b.angularVelocity,
  seq: b.lastInputSeq,
  ...(b.grounded || b.groundId ? { grounded: b.grounded ? 1 : 0, groundId: b.groundId } : {}),
});

const box = (hx: number, hy: number): Shape => ({ box: { halfExtents: { x: hx, y: hy } } });
const circle = (r: number): Shape => ({ circle: { radius: r } });
const triangle: Shape = { polygon: { vertices: [{ x: -1, y: -1 }, { x: 1, y: -1 }, { x: 0, y: 1.5 }] } };

/** A Shape as plain data (the generated code has no toObject: built with --no-convert). */
const shapeOf = (s: Shape | null): unknown => JSON.parse(JSON.stringify(s));
/** What a Shape reads as after the wire (float32). */
const wireShape = (s: Shape): unknown => shapeOf(pb.Shape.decode(pb.Shape.encode(s).finish()));

/** The decoder's whole state, to compare before and after a refused snapshot. */
const dump = (d: QuantizedDecoder) => JSON.stringify([...d.bodies.entries()].map(([id, b]) => [id, stateOf(b), b.kind, b.owner, b.category, b.mask, b.sensor, b.oneWay, b.shape]));

// ---- The worked example ----------------------------------------------------------------------

// docs/protocol.md "A worked example": a Welcome's tail and four snapshot frames, as captured.
const WELCOME_TAIL = hex("5a 09 71 75 61 6e 74 69 7a 65 64  60 3c  6d 00 00 80 3b  75 00 00 80 3c");
const TICK1 = hex(`44 62 42 08 01 32 3e
  01 21 80 28 80 28 01 00 0e 0a 0c 0a 0a 0d 00 00 00 40 15 00 00 00 3f
  01 21 ff 0c 80 06 02 02 07 1a 05 0d 00 00 00 3f
  01 21 80 10 ff 07 02 02 0e 0a 0c 0a 0a 0d 00 00 00 3f 15 00 00 00 3f`);
const TICK13 = hex("0e 62 0c 08 0d 32 08 02 0b 12 07 80 02 7f 01");
const TICK14 = hex("0a 62 08 08 0e 32 04 02 01 10 09");
const TICK19 = hex("0d 62 0b 08 13 32 04 02 01 12 07 1a 01 03");

function snapshotOfFrame(frame: Uint8Array): SnapshotMsg {
  const frames = new FrameDecoder().push(frame);
  assert.equal(frames.length, 1, "one whole frame");
  const m = pb.ServerMessage.decode(frames[0]);
  assert.equal(m.msg, "snapshot");
  return m.snapshot as SnapshotMsg;
}

test("the worked example of docs/protocol.md decodes to the state it describes", () => {
  const w = pb.Welcome.decode(WELCOME_TAIL);
  assert.deepEqual(w.features, ["quantized"]);
  assert.equal(w.snapshotRateHz, 60);
  assert.equal(w.positionQuantum, 1 / 256);
  assert.equal(w.velocityQuantum, 1 / 64);
  const d = new QuantizedDecoder(w.positionQuantum, w.velocityQuantum);
  const bodies = new Map<number, Body>();

  const s1 = snapshotOfFrame(TICK1);
  assert.equal(s1.packed.length, 62);
  assert.deepEqual(applyQuantizedSnapshot(bodies, d, s1), { added: [1, 2, 3], changed: [], removed: [] });
  const b1 = bodies.get(1)!;
  assert.deepEqual([b1.position, b1.velocity, b1.kind, b1.owner, b1.tick], [{ x: 10, y: 10 }, { x: 0, y: 0 }, 1, 0, 1]);
  assert.deepEqual(shapeOf(b1.shape), { box: { halfExtents: { x: 2, y: 0.5 } } });
  const p = bodies.get(2)!;
  assert.deepEqual([p.position, p.kind, p.owner, p.angle, p.lastInputSeq], [{ x: -3.25, y: 1.5 }, 2, 2, 0, 0]);
  assert.deepEqual(shapeOf(p.shape), { circle: { radius: 0.5 } });
  const b3 = bodies.get(3)!;
  assert.deepEqual([b3.position, b3.kind, b3.owner], [{ x: 4, y: -2 }, 2, 2]);
  assert.deepEqual(shapeOf(b3.shape), { box: { halfExtents: { x: 0.5, y: 0.5 } } });
  assert.deepEqual([b3.category, b3.mask, b3.sensor], [0, 0, false]);

  // Tick 13: position (+9, -4), velocity (+128, -64) quanta, last_input_seq 1.
  assert.deepEqual(applyQuantizedSnapshot(bodies, d, snapshotOfFrame(TICK13)), { added: [], changed: [2], removed: [] });
  assert.deepEqual(stateOf(d.bodies.get(2)!), { px: -823, py: 380, vx: 128, vy: -64, angle: 0, w: 0, seq: 1 });
  const moved = bodies.get(2)!;
  assert.deepEqual([moved.position, moved.velocity, moved.lastInputSeq, moved.tick], [{ x: -823 / 256, y: 380 / 256 }, { x: 2, y: -1 }, 1, 13]);
  // The shape, kind and owner stay from the first record.
  assert.deepEqual(shapeOf(moved.shape), { circle: { radius: 0.5 } });
  assert.deepEqual([moved.kind, moved.owner], [2, 2]);

  // Tick 14: position only (+8, -5); velocity and seq are kept.
  applyQuantizedSnapshot(bodies, d, snapshotOfFrame(TICK14));
  assert.deepEqual(stateOf(d.bodies.get(2)!), { px: -815, py: 375, vx: 128, vy: -64, angle: 0, w: 0, seq: 1 });

  // Tick 19 (the ticks between left out): moved (+9, -4), and 3 removed.
  assert.deepEqual(applyQuantizedSnapshot(bodies, d, snapshotOfFrame(TICK19)), { added: [], changed: [2], removed: [3] });
  assert.deepEqual(stateOf(d.bodies.get(2)!), { px: -806, py: 371, vx: 128, vy: -64, angle: 0, w: 0, seq: 1 });
  assert.deepEqual([...bodies.keys()].sort((a, b) => a - b), [1, 2]);
  assert.deepEqual([...d.bodies.keys()].sort((a, b) => a - b), [1, 2]);
  assert.deepEqual(bodies.get(2)!.position, { x: -806 / 256, y: 371 / 256 });
  assert.equal(bodies.get(1)!.tick, 1, "a body without a record did not change");
});

// ---- Round trips -----------------------------------------------------------------------------

test("round trip: zig-zag extremes of every part, ids far apart, every shape new, filters", () => {
  const d = new QuantizedDecoder();
  const ids = [1, 65537, 0x80000000, U32_MAX - 1, U32_MAX];
  const lo: QState = { px: INT32_MIN, py: INT32_MAX, vx: INT32_MIN, vy: INT32_MAX, angle: 32768, w: INT32_MIN, seq: U32_MAX };
  const hi: QState = { px: INT32_MAX, py: INT32_MIN, vx: INT32_MAX, vy: INT32_MIN, angle: 65535, w: INT32_MAX, seq: 1 };
  const shapes = [box(2, 0.5), circle(0.25), triangle, box(0.125, 1e6), circle(3.5)];
  const fresh: NewPart[] = ids.map((id, i) => ({
    kind: 1 + (i % 2),
    owner: i === 2 ? U32_MAX : i,
    shape: shapes[i],
    filter: i === 3 ? { category: U32_MAX, mask: 0x80000001, sensor: true } : undefined,
  }));
  // Snapshot 1: every body new at the low extremes (deltas against zero).
  let out: number[] = [];
  ids.forEach((id, i) => record(out, id - (i ? ids[i - 1] : 0), lo, ZERO, fresh[i]));
  const r1 = d.apply([], Uint8Array.from(out));
  assert.deepEqual(r1.records.map((r) => r.id), ids);
  for (const [i, id] of ids.entries()) {
    const b = d.bodies.get(id)!;
    assert.deepEqual(stateOf(b), lo, `body ${id}`);
    assert.deepEqual([b.kind, b.owner], [fresh[i].kind, fresh[i].owner]);
    assert.deepEqual(shapeOf(b.shape), wireShape(shapes[i]));
    assert.deepEqual([b.category, b.mask, b.sensor], fresh[i].filter ? [U32_MAX, 0x80000001, true] : [0, 0, false]);
    assert.equal(r1.records[i].flags & F.FILTER ? 1 : 0, fresh[i].filter ? 1 : 0);
  }
  // Snapshot 2: the other extreme, deltas of 2^32 - 1 (zig-zag 2^33 - 2 and 2^33 - 1), the angle
  // across the wrap.
  out = [];
  ids.forEach((id, i) => record(out, id - (i ? ids[i - 1] : 0), hi, lo));
  d.apply([], Uint8Array.from(out));
  for (const id of ids) assert.deepEqual(stateOf(d.bodies.get(id)!), hi, `body ${id} at the high extremes`);
  // Snapshot 3: the angle back by the largest deltas each way, across 0.
  const steps = [{ from: 65535, to: 32767 }, { from: 32767, to: 0 }, { from: 0, to: 32768 }, { from: 32768, to: 0 }, { from: 0, to: 65535 }];
  for (const s of steps) {
    out = [];
    const base = { ...hi, angle: s.from };
    record(out, U32_MAX, { ...base, angle: s.to }, base);
    d.apply([], Uint8Array.from(out));
    assert.equal(d.bodies.get(U32_MAX)!.angle, s.to, `angle ${s.from} -> ${s.to}`);
  }
  // The float view: angle in radians in [-pi, pi) (as the float BodyState), angular velocity in rad/s.
  const view = d.toBody(d.bodies.get(0x80000000)!, 7);
  assert.equal(view.angle, (-1 * 2 * Math.PI) / 65536);
  assert.equal(d.toBody({ ...d.bodies.get(0x80000000)!, angle: 32767 }, 7).angle, (32767 * 2 * Math.PI) / 65536);
  assert.equal(d.toBody({ ...d.bodies.get(0x80000000)!, angle: 32768 }, 7).angle, -Math.PI);
  assert.equal(view.angularVelocity, INT32_MAX / 1024);
  assert.equal(view.position.x, INT32_MAX / 256);
  assert.equal(view.velocity.y, INT32_MIN / 64);
});

test("round trip: removal, and a body removed and new again in one snapshot", () => {
  const d = new QuantizedDecoder(0.01, 0.125);
  const bodies = new Map<number, Body>();
  let out: number[] = [];
  record(out, 5, { ...ZERO, px: 100 }, ZERO, { kind: 2, owner: 1, shape: circle(1) });
  record(out, 5, { ...ZERO, py: -100 }, ZERO, { kind: 2, owner: 1, shape: box(1, 1) });
  applyQuantizedSnapshot(bodies, d, pb.Snapshot.create({ tick: 1, packed: Uint8Array.from(out) }));
  assert.deepEqual(bodies.get(5)!.position, { x: 1, y: 0 });
  // 5 goes, 10 goes and comes back new (it left the view and returned): its state is against 0.
  out = [];
  record(out, 10, { ...ZERO, px: 7, seq: 3 }, ZERO, { kind: 2, owner: 4, shape: triangle });
  const delta = applyQuantizedSnapshot(bodies, d, pb.Snapshot.create({ tick: 2, removed: [5, 10, 99], packed: Uint8Array.from(out) }));
  assert.deepEqual(delta, { added: [10], changed: [], removed: [5, 10] });
  assert.deepEqual([...d.bodies.keys()], [10]);
  assert.deepEqual([...bodies.keys()], [10]);
  assert.deepEqual(stateOf(d.bodies.get(10)!), { ...ZERO, px: 7, seq: 3 });
  assert.equal(bodies.get(10)!.owner, 4);
  // A change to a removed body is out of sync.
  out = [];
  record(out, 5, { ...ZERO, px: 1 }, ZERO);
  assert.throws(() => d.apply([], Uint8Array.from(out)), /never announced/);
});

test("round trip: random states with a fixed seed, 2,000 snapshots, no drift", () => {
  let seed = 12345;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const d = new QuantizedDecoder(1 / 256, 1 / 64);
  const server = new Map<number, QState>(); // what the server last sent, per id
  const ids = [...new Set(Array.from({ length: 40 }, (_, i) => (((i * 2654435761) >>> 0) | 1) >>> 0))].sort((a, b) => a - b);
  // World bounds +-10,000 units at 1/256: +-2,560,000 quanta; max speed 500 u/s at 1/64.
  const P = 2_560_000;
  const V = 32_000;
  for (let snap = 0; snap < 2000; snap++) {
    const out: number[] = [];
    const removed: number[] = [];
    let prev = 0;
    for (const id of ids) {
      const base = server.get(id);
      if (base && rnd() < 0.02) {
        removed.push(id);
        server.delete(id);
        continue;
      }
      if (base && rnd() < 0.5) continue; // unchanged: no record
      const cur: QState = base
        ? { ...base, px: Math.max(-P, Math.min(P, base.px + int(-200, 200))), py: Math.max(-P, Math.min(P, base.py + int(-9, 9))), vx: rnd() < 0.2 ? int(-V, V) : base.vx, angle: rnd() < 0.3 ? int(0, 65535) : base.angle, seq: base.seq + int(0, 1) }
        : { px: int(-P, P), py: int(-P, P), vx: int(-V, V), vy: int(-V, V), angle: int(0, 65535), w: int(-6434, 6434), seq: int(0, 9) };
      // 1.2: a fifth of the records land, take off or change the body stood on (bit 7)
      if (rnd() < 0.2) {
        cur.grounded = int(0, 1);
        cur.groundId = cur.grounded && rnd() < 0.7 ? int(1, U32_MAX) : 0;
      }
      if (base && JSON.stringify(cur) === JSON.stringify(base)) continue;
      record(out, id - prev, cur, base ?? ZERO, base ? undefined : { kind: 2, owner: int(1, 9), shape: [box(1, 2), circle(0.5), triangle][int(0, 2)], oneWay: rnd() < 0.3 });
      prev = id;
      server.set(id, cur);
    }
    d.apply(removed, Uint8Array.from(out));
  }
  assert.equal(d.bodies.size, server.size);
  const norm = (q: QState): QState => ({ ...ZERO, ...q, ...(q.grounded || q.groundId ? {} : { grounded: undefined, groundId: undefined }) });
  const clean = (q: QState) => JSON.parse(JSON.stringify(norm(q)));
  for (const [id, s] of server) assert.deepEqual(clean(stateOf(d.bodies.get(id)!)), clean(s), `body ${id}`);
});

// ---- Protocol 1.2: characters and one-way bodies ----------------------------------------------

test("1.2: bit 7 (grounded, ground_id after bit 6) and bit 8 (one-way, no payload), byte for byte", () => {
  // The bytes of proto/quant.c's test_ground_and_one_way_bits: a new character standing on body 3
  // with a filter (flags 0xe1 0x01), then taking off (bit 7 alone), then landing on the bounds
  // while moving; a new falling character (no bit 7) and a new one-way static (0xa1 0x02).
  const d = new QuantizedDecoder();
  const bodies = new Map<number, Body>();
  const snap = (tick: number, packed: string) => applyQuantizedSnapshot(bodies, d, pb.Snapshot.create({ tick, packed: hex(packed) }));
  snap(1, "07 e1 01 00 80 04 02 09 07 1a 05 0d 00 00 80 3f 02 05 00 01 03");
  let c = d.bodies.get(7)!;
  assert.deepEqual([c.grounded, c.groundId, c.py, c.category, c.mask, c.oneWay], [true, 3, 256, 2, 5, false]);
  assert.deepEqual([bodies.get(7)!.grounded, bodies.get(7)!.groundId], [true, 3]);
  snap(2, "07 80 01 00 00");
  c = d.bodies.get(7)!;
  assert.deepEqual([c.grounded, c.groundId, c.py], [false, 0, 256]);
  snap(3, "07 89 01 00 0b 04 01 00");
  c = d.bodies.get(7)!;
  assert.deepEqual([c.grounded, c.groundId, c.py, c.lastInputSeq], [true, 0, 250, 4]);
  assert.deepEqual([bodies.get(7)!.grounded, bodies.get(7)!.groundId, bodies.get(7)!.tick], [true, 0, 3]);
  const r = d.apply([], hex("08 22 00 7f 02 09 00  01 a1 02 80 08 00 01 00 07 1a 05 0d 00 00 80 3f"));
  assert.deepEqual(r.records.map((x) => [x.id, x.flags]), [[8, F.VELOCITY | F.NEW], [9, F.POSITION | F.NEW | F.ONE_WAY]]);
  assert.deepEqual([d.bodies.get(8)!.grounded, d.bodies.get(8)!.oneWay, d.bodies.get(9)!.oneWay, d.bodies.get(9)!.px], [false, false, true, 512]);
  assert.equal(d.toBody(d.bodies.get(9)!, 4).oneWay, true);
  // A 1.1 record (neither bit) decodes as before: grounded false, ground 0, not one-way.
  const plain = new QuantizedDecoder();
  plain.apply([], hex("05 21 02 00 02 09 00"));
  const p = plain.toBody(plain.bodies.get(5)!, 1);
  assert.deepEqual([p.grounded, p.groundId, p.oneWay, p.position.x], [false, 0, false, 1 / 256]);
});

// ---- Hostile buffers -------------------------------------------------------------------------

/** A decoder holding one known body, 7, to check that refusals leave it untouched. */
function seeded(): QuantizedDecoder {
  const d = new QuantizedDecoder();
  const out: number[] = [];
  record(out, 7, { ...ZERO, px: 10, vy: -3, seq: 2 }, ZERO, { kind: 2, owner: 1, shape: circle(1) });
  d.apply([], Uint8Array.from(out));
  return d;
}

const bytes = (f: (out: number[]) => void) => {
  const out: number[] = [];
  f(out);
  return Uint8Array.from(out);
};

const HOSTILE: [string, Uint8Array, RegExp][] = [
  ["a varint cut at the end", hex("07 01 80"), /truncated varint/],
  ["flags missing", hex("07"), /truncated varint \(flags\)/],
  ["a record cut inside its parts", hex("07 03 02 02 04"), /truncated varint \(dvy\)/],
  ["a varint of 11 bytes", hex("80 80 80 80 80 80 80 80 80 80 01"), /longer than 10 bytes/],
  ["a varint above 2^53", bytes((o) => { varint(o, 7); varint(o, F.POSITION); varint(o, 1n << 53n); varint(o, 0); }), /too large/],
  ["a uint64 id gap", bytes((o) => { varint(o, (1n << 64n) - 1n); varint(o, 0); }), /too large/],
  ["an id past uint32", bytes((o) => { varint(o, 7); varint(o, 1); zz(o, 1); zz(o, 0); varint(o, U32_MAX); varint(o, F.NEW); }), /ascend/],
  ["id 0", hex("00 01 02 02"), /ascend/],
  ["ids not ascending (gap 0)", hex("07 01 02 02 00 01 02 02"), /ascend/],
  ["an unknown flag bit 9", hex("07 81 04 02 02"), /unknown flag bits 0x201/],
  ["bit 7 cut before its ground_id", hex("07 80 01 01"), /truncated varint \(ground_id\)/],
  ["a grounded of 2", hex("07 80 01 02 00"), /grounded 2 of body 7/],
  ["a ground_id past uint32", bytes((o) => { varint(o, 7); varint(o, F.GROUND); varint(o, 1); varint(o, 2 ** 32); }), /ground_id 4294967296 is not a uint32/],
  ["the one-way bit without the new part", hex("07 80 02"), /one-way bit without the new part/],
  ["a 40-bit flags value", bytes((o) => { varint(o, 7); varint(o, 2 ** 40 + 1); }), /unknown flag bits/],
  ["the filter part without the new part", hex("07 40 01 01 00"), /filter part without the new part/],
  ["a change to a body never announced", hex("08 01 02 02"), /never announced/],
  ["a new body already known", bytes((o) => record(o, 7, ZERO, ZERO, { kind: 2, owner: 1, shape: circle(1) })), /announced again/],
  ["a shape length beyond the buffer", hex("09 20 02 01 64 1a 05 0d"), /100 bytes announced, 3 left/],
  // Three bytes announced, two left (that would decode as circle{} if cut short).
  ["a shape length one past the buffer", hex("09 20 02 01 03 1a 00"), /3 bytes announced, 2 left/],
  ["a shape that does not decode", hex("09 20 02 01 02 1a 05"), /does not decode/],
  ["a kind past uint32", bytes((o) => { varint(o, 9); varint(o, F.NEW); varint(o, 2 ** 32); }), /kind 4294967296 is not a uint32/],
  ["a sensor of 2", bytes((o) => { varint(o, 9); varint(o, F.NEW | F.FILTER); varint(o, 2); varint(o, 1); varint(o, 0); varint(o, 1); varint(o, 1); varint(o, 2); }), /sensor 2/],
  ["a position leaving int32", bytes((o) => { varint(o, 7); varint(o, F.POSITION); zz(o, INT32_MAX); zz(o, 0); }), /leaves int32/],
  ["an angular velocity leaving int32", bytes((o) => { varint(o, 7); varint(o, F.ANGULAR_VELOCITY); zz(o, -(2 ** 32)); }), /leaves int32/],
  ["an angle delta of 32768", bytes((o) => { varint(o, 7); varint(o, F.ANGLE); zz(o, 32768); }), /angle delta 32768/],
  ["an angle delta of -32769", bytes((o) => { varint(o, 7); varint(o, F.ANGLE); zz(o, -32769); }), /angle delta -32769/],
];

for (const [what, buf, message] of HOSTILE) {
  test(`hostile: ${what} is refused and changes nothing`, () => {
    const d = seeded();
    const before = dump(d);
    // A good record ahead of the bad one, and a removal: neither may be applied.
    const good = bytes((o) => record(o, 3, { ...ZERO, px: 1 }, ZERO, { kind: 2, owner: 1, shape: circle(1) }));
    assert.throws(() => d.apply([], buf), (e: unknown) => e instanceof QuantizedDecodeError && message.test(e.message));
    assert.equal(dump(d), before);
    // The same bad record behind a good one (ids rebased after 3) and a removal of 7: all or nothing.
    const gap = new Uint8Array(buf);
    if (gap[0] >= 3 && gap[0] < 0x80) {
      gap[0] -= 3;
      const joined = new Uint8Array([...good, ...gap]);
      // (Removing 7 would make a new 7 valid.)
      const removed = what === "a new body already known" ? [] : [7];
      if (gap[0] !== 0) {
        assert.throws(() => d.apply(removed, joined), QuantizedDecodeError);
        assert.equal(dump(d), before);
      }
    }
  });
}

test("hostile: a float session's snapshot in a quantized session is refused", () => {
  const d = seeded();
  const snap = pb.Snapshot.create({ tick: 3, bodies: [{ id: 7 }] });
  assert.throws(() => applyQuantizedSnapshot(new Map(), d, snap), /float BodyStates/);
});

test("hostile: 20,000 random buffers (fixed seed) each decode or throw QuantizedDecodeError, quickly", () => {
  let seed = 777;
  const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const start = Date.now();
  let refused = 0;
  for (let i = 0; i < 20000; i++) {
    const d = seeded();
    const n = Math.floor(rnd() * 48);
    // Mostly small bytes, so that records get deep before they break.
    const buf = Uint8Array.from({ length: n }, () => (rnd() < 0.7 ? Math.floor(rnd() * 0x28) : Math.floor(rnd() * 256)));
    const before = dump(d);
    try {
      d.apply([], buf);
    } catch (e) {
      assert.ok(e instanceof QuantizedDecodeError, `buffer ${Buffer.from(buf).toString("hex")}: ${e}`);
      assert.equal(dump(d), before);
      refused++;
    }
  }
  assert.ok(refused > 10000, `most random buffers are refused (${refused})`);
  assert.ok(Date.now() - start < 60000, "no hang");
});

// ---- The client: Hello's options, Welcome's grant, an out-of-sync snapshot ----------------------

/** A transport scripted by the test (the daemon never sends a malformed snapshot, so this is the
 * only way to show what the client does with one; the daemon tests are quantized_daemon's). */
function scripted(welcome: Uint8Array): { t: Transport; hellos: InstanceType<typeof pb.ClientMessage>[]; closed: () => boolean } {
  const hellos: InstanceType<typeof pb.ClientMessage>[] = [];
  let closed = false;
  const t: Transport = {
    send(bytes) {
      const m = pb.ClientMessage.decode(bytes);
      if (m.msg !== "hello") return;
      hellos.push(m);
      const w = pb.Welcome.decode(welcome);
      w.clientId = 2;
      w.tickRateHz = 60;
      const reply = pb.ServerMessage.encode({ requestId: m.requestId, welcome: w }).finish();
      setImmediate(() => t.onMessage(reply));
    },
    close() {
      if (closed) return;
      closed = true;
      setImmediate(() => t.onClose(""));
    },
    onMessage: () => {},
    onClose: () => {},
    onOpen: () => {},
  };
  setImmediate(() => t.onOpen());
  return { t, hellos, closed: () => closed };
}

test("client: Hello carries quantized and snapshotRateHz; snapshots fill bodies; an out-of-sync one closes", async () => {
  const { t, hellos, closed } = scripted(WELCOME_TAIL);
  const c = await CollideClient.open(t, { quantized: true, snapshotRateHz: 20 });
  assert.equal(hellos.length, 1);
  assert.deepEqual([hellos[0].hello!.quantized, hellos[0].hello!.snapshotRateHz], [true, 20]);
  assert.deepEqual([c.welcome.snapshotRateHz, c.welcome.positionQuantum, c.welcome.velocityQuantum], [60, 1 / 256, 1 / 64]);
  assert.ok(c.quantized);
  const events: number[][] = [];
  const errors: CollideError[] = [];
  c.on("snapshot", (s) => events.push(s.added));
  c.on("error", (e) => errors.push(e));
  t.onMessage(new FrameDecoder().push(TICK1)[0]);
  assert.deepEqual(events, [[1, 2, 3]]);
  assert.equal(c.tick, 1);
  assert.deepEqual(c.bodies.get(2)!.position, { x: -3.25, y: 1.5 });
  // A change to a body it never heard of (8): the error, fatal; bodies as before; the close.
  const bad = pb.ServerMessage.encode({ snapshot: { tick: 2, removed: [1], packed: hex("08 01 02 02") } }).finish();
  t.onMessage(bad);
  assert.equal(errors.length, 1);
  assert.ok(errors[0].fatal && /tick 2 out of sync: a change to body 8/.test(errors[0].message), errors[0].message);
  assert.equal(events.length, 1, "no snapshot event for it");
  assert.deepEqual([...c.bodies.keys()], [1, 2, 3], "the removal in it is not applied either");
  assert.equal(c.tick, 1);
  assert.ok(closed());
});

test("client: a float session (quantized not asked) sends a v1 Hello and refuses packed records", async () => {
  const { t, hellos } = scripted(WELCOME_TAIL);
  const c = await CollideClient.open(t, {});
  assert.deepEqual([hellos[0].hello!.quantized, hellos[0].hello!.snapshotRateHz], [false, 0]);
  assert.equal(c.quantized, null);
  const errors: CollideError[] = [];
  c.on("error", (e) => errors.push(e));
  t.onMessage(new FrameDecoder().push(TICK1)[0]);
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /quantized records in a float session/);
  assert.equal(c.bodies.size, 0);
});

test("client: a daemon that grants no quanta gets the float path", async () => {
  // A Welcome without the quanta (a daemon before 1.1, or one that ignored Hello.quantized).
  const { t } = scripted(new Uint8Array(0));
  const c = await CollideClient.open(t, { quantized: true });
  assert.equal(c.quantized, null);
  assert.equal(c.welcome.snapshotRateHz, 60, "no rate said: every tick");
  t.onMessage(pb.ServerMessage.encode({ snapshot: { tick: 5, bodies: [{ id: 4, position: { x: 1, y: 2 } }] } }).finish());
  assert.deepEqual(c.bodies.get(4)!.position, { x: 1, y: 2 });
});

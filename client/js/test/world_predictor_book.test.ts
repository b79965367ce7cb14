// WorldPredictor's bookkeeping, against a world of the same module standing in for the server
// (FakeServer: it applies each intent at the tick after it was sent, steps, and snapshots every
// mover every tick), on a clock the test drives. No daemon: world_predictor.test.ts has that.
//   - the lead: snapshots seen 6 ticks late are learned as a lead of 6, after which every
//     prediction is timed and exact;
//   - an intent that reaches the server 2 ticks later than expected: the predictions it spoils are
//     not timed, its tick moves on, the base is still reproduced every tick;
//   - a long life: 3,000 ticks with movers and statics leaving and entering the view, and owns
//     spawned and despawned: what the predictor holds stays bounded, the module's memory does not
//     grow, and dispose() gives the world back (40 predictors made and disposed);
//   - quantized snapshots: within half a quantum the local state is kept (confirms), to the bit it
//     is not (resyncs);
//   - a body registered after its first snapshot was taken for another's: placed, then predicted;
//   - others: extrapolated at their snapshot velocity, or held still; and what that costs an own
//     body walking into another mover that turns away and back (predicted 10 ticks ahead).
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadWorldModuleFile } from "../src/node";
import { BodyKind, type Shape } from "../src/proto";
import type { CharacterOptions } from "../src/client";
import type { WasmWorld, WorldModule } from "../src/wasm_world";
import { predictorWorldConfig, WorldPredictor, type RoomSetup, type WorldPredictorOptions } from "../src/world_predictor";
import type { Body, Point } from "../src/world";
import { MODULE_PATH } from "./wasm_world_path";

let modulePromise: Promise<WorldModule> | undefined;
const worldModule = () => (modulePromise ??= loadWorldModuleFile(MODULE_PATH));

const SETUP: RoomSetup = {
  tickRateHz: 60, worldMin: { x: 0, y: 0 }, worldMax: { x: 60, y: 60 }, maxSpeed: 20, gravity: { x: 0, y: 0 },
};
const box = (h: number): Shape => ({ box: { halfExtents: { x: h, y: h } } });

/** The server: the same world code, intents applied at the step after they arrive. */
class FakeServer {
  readonly world: WasmWorld;
  tick = 0;
  private readonly shapes = new Map<number, Shape>();
  private readonly arriving: { at: number; id: number; seq: number; v: Point; jump: boolean }[] = [];
  /** Bodies every snapshot leaves out (out of view) and that were sent already. */
  readonly hidden = new Set<number>();
  private readonly sent = new Set<number>();

  constructor(module: WorldModule, setup: RoomSetup) {
    this.world = module.createWorld(predictorWorldConfig(setup));
  }
  addStatic(shape: Shape, position: Point): number {
    const id = this.world.addStatic(shape, { position });
    this.shapes.set(id, shape);
    return id;
  }
  spawn(shape: Shape, position: Point, character?: CharacterOptions): number {
    const id = this.world.spawn(shape, { position, character });
    this.shapes.set(id, shape);
    return id;
  }
  despawn(id: number): void {
    this.world.despawn(id);
    this.shapes.delete(id);
  }
  /** An intent that reaches the server before the step of tick `this.tick + 1 + late`. */
  send(id: number, seq: number, v: Point, jump = false, late = 0): void {
    this.arriving.push({ at: this.tick + 1 + late, id, seq, v, jump });
  }
  /** Steps one tick; the snapshot: every body in view (new ones with their shape), and what left
   * the view or went. */
  step(): { tick: number; bodies: Body[]; removed: number[] } {
    this.tick++;
    for (let i = 0; i < this.arriving.length;) {
      const a = this.arriving[i];
      if (a.at === this.tick) {
        this.world.setIntent(a.id, { velocity: a.v, inputSeq: a.seq, jump: a.jump });
        this.arriving.splice(i, 1);
      } else i++;
    }
    this.world.step();
    const t = this.world.bodies();
    const bodies: Body[] = [];
    const live = new Set<number>();
    for (let i = 0; i < t.count; i++) {
      const b = t.body(i);
      live.add(b.id);
      if (this.hidden.has(b.id)) continue;
      if (b.kind === BodyKind.BODY_KIND_STATIC && this.sent.has(b.id)) continue;
      this.sent.add(b.id);
      bodies.push({
        id: b.id, position: b.position, velocity: b.velocity, angle: b.angle, angularVelocity: b.angularVelocity,
        lastInputSeq: b.lastInputSeq, shape: this.shapes.get(b.id) ?? null, kind: b.kind, owner: b.owner,
        category: 0, mask: 0, sensor: b.sensor, grounded: b.grounded, groundId: b.groundId, oneWay: b.oneWay,
        tick: this.tick,
      });
    }
    const removed: number[] = [];
    for (const id of this.sent) {
      if (!live.has(id) || this.hidden.has(id)) {
        removed.push(id);
        this.sent.delete(id);
      }
    }
    return { tick: this.tick, bodies, removed };
  }
  body(id: number): Body | undefined {
    const b = this.world.body(id);
    return b ? ({ ...b, shape: this.shapes.get(id) ?? null, category: 0, mask: 0, tick: this.tick } as Body) : undefined;
  }
}

/** A server, a predictor fed `delay` ticks late on a clock of whole ticks, and one own body. */
async function rig(delay: number, opts: WorldPredictorOptions = {}, setup = SETUP) {
  const module = await worldModule();
  const server = new FakeServer(module, setup);
  for (let x = 0; x < 60; x += 2) server.addStatic(box(1), { x: x + 1, y: 1 });
  for (let y = 4; y < 56; y += 2) server.addStatic(box(1), { x: 59, y: y + 1 });
  let clock = 0;
  const wp = new WorldPredictor(module, setup, { now: () => clock, ...opts });
  const me = server.spawn(box(0.5), { x: 30, y: 30 });
  wp.addOwn(me, { position: { x: 30, y: 30 } });
  const late: { tick: number; bodies: Body[]; removed: number[] }[] = [];
  let seq = 0;
  const frame = (v: Point | null, lateBy = 0) => {
    const snap = server.step();
    clock = (snap.tick * 1000) / setup.tickRateHz;
    late.push(snap);
    if (late.length > delay) {
      const e = late.shift()!;
      wp.observe(e.tick, e.bodies, e.removed);
    }
    if (v) {
      seq++;
      server.send(me, seq, v, false, lateBy);
      wp.input(me, seq, v);
    }
    return wp.predict();
  };
  return { module, server, wp, me, frame, clock: () => clock };
}

test("the lead: snapshots seen 6 ticks late, then every prediction timed and exact", async () => {
  const { wp, me, frame } = await rig(6);
  const checks: { timed: boolean; exact: boolean; replayed: number }[] = [];
  wp.onCheck = (c) => checks.push(c);
  for (let k = 0; k < 300; k++) frame({ x: 15 * Math.cos(k / 9), y: 15 * Math.sin(k / 13) });
  assert.equal(wp.lead, 6);
  const st = wp.stats(me)!;
  assert.equal(st.resyncs, 0);
  const after = checks.slice(20);
  assert.ok(after.length > 250 && after.every((c) => c.timed && c.exact && c.replayed === 7),
    `after the first 20: ${after.filter((c) => !c.timed).length} untimed, ${after.filter((c) => !c.exact).length} inexact`);
  wp.dispose();
});

test("an intent 2 ticks later than expected: its predictions untimed, its tick moved, no resync", async () => {
  const { wp, me, frame } = await rig(3);
  const checks: { tick: number; timed: boolean; exact: boolean }[] = [];
  wp.onCheck = (c) => checks.push(c);
  for (let k = 0; k < 60; k++) frame({ x: 10, y: 0 });
  frame({ x: -10, y: 5 }, 2); // this one reaches the server 2 ticks late
  for (let k = 0; k < 4; k++) frame({ x: -10, y: 5 }, 2); // so do the next, in order
  for (let k = 0; k < 40; k++) frame({ x: 0, y: -10 });
  const st = wp.stats(me)!;
  assert.equal(st.resyncs, 0, "the base is still reproduced: the acknowledged intents are put at the ticks the server applied them");
  const untimed = checks.filter((c) => !c.timed && c.tick > 20); // (before: the lead being learned)
  assert.ok(untimed.length >= 2 && untimed.length <= 10, `untimed predictions: ${untimed.map((c) => c.tick)}`);
  assert.ok(untimed.some((c) => !c.exact) && st.maxError > 0, "a mistimed prediction of a changing intent is off");
  assert.ok(checks.every((c) => !c.timed || c.exact), "every timed one exact");
  assert.ok(checks.slice(-20).every((c) => c.timed && c.exact), "back on time afterwards");
  wp.dispose();
});

test("a long life: 3,000 ticks of bodies leaving and entering the view do not grow it", async () => {
  const module = await worldModule();
  const memory0 = module.memoryBytes;
  const { server, wp, me, frame } = await rig(4);
  const others: number[] = [];
  for (let i = 0; i < 20; i++) others.push(server.spawn(box(0.4), { x: 5 + (i % 10) * 5, y: 45 + Math.floor(i / 10) * 5 }));
  for (const id of others) server.world.setIntent(id, { velocity: { x: 3, y: 0 }, inputSeq: 1 });
  let memoryAt1000 = 0;
  let mine: number[] = [];
  for (let k = 0; k < 3000; k++) {
    // others and some statics flicker out of view and back; an extra own body comes and goes
    if (k % 50 === 0) {
      for (const id of others) server.world.setIntent(id, { velocity: { x: (k / 50) % 2 ? -3 : 3, y: 0 }, inputSeq: k + 2 });
      server.hidden.clear();
      for (let i = (k / 50) % 3; i < 40; i += 3) server.hidden.add(others[i % 20]);
      for (let id = 1; id < 10; id += 2 + ((k / 50) % 2)) server.hidden.add(id);
    }
    if (k % 600 === 100) {
      const extra = server.spawn(box(0.3), { x: 20, y: 20 });
      wp.addOwn(extra, { position: { x: 20, y: 20 } });
      mine.push(extra);
    }
    if (k % 600 === 550) {
      for (const id of mine) server.despawn(id);
      mine = [];
    }
    frame({ x: 8 * Math.cos(k / 30), y: 8 * Math.sin(k / 17) });
    for (const id of mine) wp.input(id, 0x7fffffff, { x: 0, y: 0 }); // never sent: never acknowledged
    const s = wp.sizes;
    assert.ok(s.queue <= 8 && s.records <= 12 && s.pending <= 2 * 121 + 10 && s.actual <= 2 * 62 && s.others <= 20 && s.statics <= 56,
      `tick ${k}: ${JSON.stringify(s)}`);
    if (k === 1000) memoryAt1000 = module.memoryBytes;
  }
  const st = wp.stats(me)!;
  assert.ok(st.checks > 2900, `checks ${st.checks}`);
  assert.equal(module.memoryBytes, memoryAt1000, "the module's memory did not grow after tick 1000");
  wp.dispose();
  // dispose gives the world back: 40 more, created and disposed, leave the memory where it was
  const before = module.memoryBytes;
  for (let i = 0; i < 40; i++) new WorldPredictor(module, SETUP).dispose();
  assert.equal(module.memoryBytes, before);
  assert.ok(memory0 <= before);
});

test("quantized snapshots: within half a quantum the local state is kept, to the bit it is not", async () => {
  const q = 1 / 256, vq = 1 / 64;
  const round = (x: number, u: number) => Math.sign(x) * Math.round(Math.abs(x) / u) * u;
  for (const tolerant of [true, false]) {
    const module = await worldModule();
    const server = new FakeServer(module, SETUP);
    server.addStatic(box(1), { x: 40, y: 30.5 });
    const wp = new WorldPredictor(module, SETUP, tolerant ? { positionTolerance: q / 2, velocityTolerance: vq / 2 } : {});
    wp.observe(0, [], [], 0); // a snapshot before the spawn: the body is then spawned as the server did
    const me = server.spawn(box(0.5), { x: 30, y: 30 });
    wp.addOwn(me, { position: { x: 30, y: 30 } });
    for (let k = 1; k <= 120; k++) {
      const snap = server.step();
      const bodies = snap.bodies.map((b) => ({
        ...b,
        position: { x: round(b.position.x, q), y: round(b.position.y, q) },
        velocity: { x: round(b.velocity.x, vq), y: round(b.velocity.y, vq) },
      }));
      wp.observe(snap.tick, bodies, snap.removed, k);
      server.send(me, k, { x: 7.3, y: 1.1 });
      wp.input(me, k, { x: 7.3, y: 1.1 }, 0, false, { now: k });
      wp.predict(k);
    }
    server.step();
    const truth = server.body(me)!.position, predicted = wp.body(me)!;
    assert.equal(predicted.tick, server.tick);
    const st = wp.stats(me)!;
    if (tolerant) {
      assert.ok(st.resyncs === 0 && st.confirms >= 120, JSON.stringify(st));
      assert.deepEqual(predicted.position, truth, "the base kept is the server's own float state, not the rounded one");
    } else {
      assert.ok(st.resyncs > 100, `to the bit, rounded states never confirm: ${JSON.stringify(st)}`);
      assert.notDeepEqual(predicted.position, truth);
    }
    wp.dispose();
    server.world.dispose();
  }
});

test("a body registered after its first snapshot was taken for another's: placed, then predicted", async () => {
  const module = await worldModule();
  const server = new FakeServer(module, SETUP);
  server.addStatic(box(1), { x: 40, y: 30 });
  const wp = new WorldPredictor(module, SETUP);
  const me = server.spawn(box(0.5), { x: 30, y: 30 });
  for (let k = 1; k <= 3; k++) {
    const s = server.step();
    wp.observe(s.tick, s.bodies, s.removed, k * 16);
    wp.predict(k * 16);
  }
  assert.equal(wp.sizes.others, 1, "seen as another's");
  wp.addOwn(me);
  assert.equal(wp.sizes.others, 0);
  assert.deepEqual(wp.position(me), server.body(me)!.position, "placed where the last snapshot had it");
  for (let k = 4; k <= 60; k++) {
    const s = server.step();
    wp.observe(s.tick, s.bodies, s.removed, k * 16);
    server.send(me, k, { x: 12, y: 0 });
    wp.input(me, k, { x: 12, y: 0 }, 0, false, { now: k * 16 });
    wp.predict(k * 16);
  }
  const st = wp.stats(me)!;
  assert.equal(st.resyncs, 0);
  assert.ok(st.checks > 50 && st.timedExact === st.timed && st.timed > 50, JSON.stringify(st));
  wp.dispose();
  server.world.dispose();
});

test("others: extrapolated at their snapshot velocity, or held still", async () => {
  for (const others of ["extrapolate", "still"] as const) {
    const module = await worldModule();
    const server = new FakeServer(module, SETUP);
    const wp = new WorldPredictor(module, SETUP, { others });
    const me = server.spawn(box(0.5), { x: 10, y: 10 });
    const other = server.spawn(box(0.5), { x: 30, y: 30 });
    server.world.setIntent(other, { velocity: { x: 6, y: 0 }, inputSeq: 1 });
    wp.addOwn(me, { position: { x: 10, y: 10 } });
    let tick = 0;
    for (let k = 1; k <= 10; k++) {
      const s = server.step();
      tick = s.tick;
      wp.observe(s.tick, s.bodies, s.removed, k * 1000 / 60);
    }
    const seen = server.body(other)!.position;
    server.send(me, 1, { x: 1, y: 0 }, false);
    wp.input(me, 1, { x: 1, y: 0 }, 0, false, { tick: tick + 10 });
    assert.equal(wp.predict(10 * 1000 / 60), tick + 10);
    const t = wp.world.bodies(BodyKind.BODY_KIND_MOVING);
    let at: Point | undefined;
    for (let i = 0; i < t.count; i++) if (Math.abs(t.y(i) - 30) < 1) at = { x: t.x(i), y: t.y(i) };
    assert.ok(at);
    const want = others === "still" ? seen.x : seen.x + 6 * (10 / 60);
    assert.ok(Math.abs(at.x - want) < 1e-3, `${others}: the other at ${at.x}, expected ${want}`);
    wp.dispose();
    server.world.dispose();
  }
});

test("input: only for own bodies; the expected tick never before the base", async () => {
  const { wp, me, frame } = await rig(2);
  assert.throws(() => wp.input(999, 1, { x: 0, y: 0 }), /not predicted/);
  for (let k = 0; k < 10; k++) frame({ x: 1, y: 0 });
  const base = wp.base!;
  const t = wp.input(me, 1000, { x: 2, y: 0 }, 0, false, { tick: base - 5 });
  assert.ok(t >= base + 1, `tick ${t}, base ${base}`);
  wp.dispose();
});

test("others that turn: what extrapolating them costs an own body that meets them", async (t) => {
  for (const others of ["extrapolate", "still"] as const) {
    const module = await worldModule();
    const server = new FakeServer(module, SETUP);
    let clock = 0;
    const wp = new WorldPredictor(module, SETUP, { others, now: () => clock });
    const checks: { tick: number; error: number; timed: boolean; exact: boolean }[] = [];
    wp.onCheck = (c) => checks.push(c);
    wp.observe(0, [], [], 0);
    const me = server.spawn(box(0.5), { x: 20, y: 30 });
    const other = server.spawn(box(0.5), { x: 26, y: 30 });
    wp.addOwn(me, { position: { x: 20, y: 30 } });
    const late: { tick: number; bodies: Body[]; removed: number[] }[] = [];
    for (let k = 1; k <= 160; k++) {
      // the other walks at the own body, then turns away at tick 60 and back at 110
      if (k === 1 || k === 60 || k === 110) server.world.setIntent(other, { velocity: { x: k === 60 ? 6 : -4, y: 0 }, inputSeq: k });
      const snap = server.step();
      clock = (snap.tick * 1000) / 60;
      late.push(snap);
      if (late.length > 9) {
        const e = late.shift()!;
        wp.observe(e.tick, e.bodies, e.removed);
      }
      server.send(me, k, { x: 4, y: 0 });
      wp.input(me, k, { x: 4, y: 0 });
      wp.predict();
    }
    const st = wp.stats(me)!;
    const timed = checks.filter((c) => c.timed);
    const worst = Math.max(...timed.map((c) => c.error));
    const inexact = timed.filter((c) => !c.exact).length;
    t.diagnostic(`others ${others}: ${timed.length} timed predictions 10 ticks ahead, ${inexact} inexact, ` +
      `error max ${worst.toFixed(4)} mean ${(timed.reduce((a, c) => a + c.error, 0) / timed.length).toFixed(4)}; ` +
      `resyncs ${st.resyncs}`);
    // the other changes its velocity by at most 10 units/s, for at most 10 ticks at 60 Hz
    assert.ok(worst > 0 && worst <= (10 * 10) / 60 + 1e-3, `worst ${worst}`);
    if (others === "extrapolate") assert.ok(inexact < timed.length / 2, "a body that keeps going is predicted exactly");
    wp.dispose();
    server.world.dispose();
  }
});

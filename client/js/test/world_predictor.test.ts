// WorldPredictor against the real collided over TCP on loopback (ARCHITECTURE.md "Prediction with
// the server's own code", docs/wasm.md "WorldPredictor"): scripted walks with no other movers,
// each checked tick by tick against the daemon's own snapshots.
//   - top-down: a box, a circle and a hexagon, each in a walled room (one with a slanted wall in a
//     corner), walking into walls, along them and into corners, above the daemon's --max-speed
//     (clamped) and turning every tick for a while; the predictor sees each snapshot 9 ticks late
//     (as over a link of about 150 ms), so every frame replays 10 unacknowledged ticks;
//   - side-on: a character under gravity walking, stepping up, jumping up through a one-way
//     platform and landing on it, walking off its edge, jumping against a wall; 3 ticks late;
//   - attach(): spawn and move through the predictor, frames on a timer (not on snapshots).
// Each frame is drawn right after a snapshot: one intent per body, sent, recorded (input) and
// predicted; the plain Predictor (a straight line, no walls) predicts the same inputs from the
// same late snapshots beside it. Checked for every acknowledged tick:
//   - every snapshot of an own body is reproduced from the confirmed base by replaying exactly the
//     intents the server applied in that tick: no resync in the whole run (the local world stepped
//     as the daemon's, to the bit, every tick);
//   - every prediction whose intents were all applied at the ticks the predictor expected (the
//     `timed` ones: nearly all, once the lead is learned) equals the server's state of its tick:
//     position, velocity, angle, grounded and ground, the floats compared as they are (float32
//     values on both sides), error 0;
//   - the walks did what they say (ticks pressed into walls, grounded on the platform, in the air).
// The plain Predictor's error is printed (diagnostics) and recorded in docs/wasm.md.
// WORLD_PREDICTOR_BREAK plants a break to see the checks fail (docs/wasm.md says what each gave):
// "config" (the local max speed 1% off the daemon's), "late" (every intent expected a tick late),
// "gravity" (the local gravity 1% off).
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, loadWorldModuleFile, Predictor, WorldPredictor, type Body, type CollideClient } from "../src/node";
import type { PredictionCheck, RoomSetup } from "../src/world_predictor";
import type { CharacterOptions } from "../src/client";
import type { Shape } from "../src/proto";
import type { Point } from "../src/world";
import { Daemon, sleep, waitFor, type WorldSpec } from "./daemon";
import { MODULE_PATH } from "./wasm_world_path";

const BREAK = process.env.WORLD_PREDICTOR_BREAK ?? "";
const MAX_SPEED = 12;

interface BodySpec {
  shape: Shape;
  position: Point;
  character?: CharacterOptions;
}

interface Step {
  v: Point;
  jump?: boolean;
}

interface Run {
  checks: PredictionCheck[];
  /** Server states of own bodies by tick. */
  server: Map<number, Map<number, Body>>;
  ids: number[];
  wp: WorldPredictor;
  plain: { max: number; sum: number; n: number; exact: number }[];
  ticks: number;
  /** The frame whose intent the server applied at each tick (sent right after the snapshot of the
   * tick before). */
  frameAt: Map<number, number>;
}

/** Runs `script` for `ticks` frames, one per snapshot, the predictor fed `delay` ticks late. */
async function runScript(world: WorldSpec, bodies: BodySpec[], ticks: number, delay: number,
                         script: (k: number, i: number) => Step): Promise<Run> {
  const d = await Daemon.start({ args: ["--max-speed", String(MAX_SPEED)], world });
  let c: CollideClient | null = null;
  let wp: WorldPredictor | null = null;
  try {
    c = await connect(d.tcpUrl, { name: "predictor" });
    const client = c;
    const w = client.welcome;
    assert.equal(w.maxSpeed, MAX_SPEED);
    const setup: RoomSetup = {
      tickRateHz: w.tickRateHz, worldMin: w.worldMin, worldMax: w.worldMax,
      maxSpeed: BREAK === "config" ? w.maxSpeed * 1.01 : w.maxSpeed,
      gravity: BREAK === "gravity" ? { x: w.gravity.x * 1.01, y: w.gravity.y * 1.01 } : w.gravity,
    };
    const predictor = (wp = new WorldPredictor(await loadWorldModuleFile(MODULE_PATH), setup));
    const checks: PredictionCheck[] = [];
    predictor.onCheck = (x) => checks.push(x);
    const ids: number[] = [];
    const plains: Predictor[] = [];
    const server = new Map<number, Map<number, Body>>();
    const plainAt = new Map<number, Point[]>();
    const plain = bodies.map(() => ({ max: 0, sum: 0, n: 0, exact: 0 }));
    const late: { tick: number; bodies: Body[]; removed: number[] }[] = [];
    const frameAt = new Map<number, number>();
    const dt = 1 / w.tickRateHz;
    let k = 0;
    let fed = 0;
    let ready = false;
    client.on("snapshot", (s) => {
      const now = new Map<number, Body>();
      ids.forEach((id, i) => {
        const b = client.bodies.get(id);
        if (!b) return;
        now.set(id, b);
        const p = plainAt.get(s.tick)?.[i];
        if (p) {
          const e = Math.hypot(p.x - b.position.x, p.y - b.position.y);
          const st = plain[i];
          st.max = Math.max(st.max, e);
          st.sum += e;
          st.n++;
          if (e === 0) st.exact++;
        }
      });
      server.set(s.tick, now);
      plainAt.delete(s.tick);
      // the predictor sees the snapshot `delay` ticks late, and so does the plain Predictor
      late.push({ tick: s.tick, bodies: [...s.added, ...s.changed].map((id) => client.bodies.get(id)!), removed: s.removed });
      if (late.length > delay) {
        const e = late.shift()!;
        predictor.observe(e.tick, e.bodies, e.removed);
        fed = e.tick;
        for (const b of e.bodies) {
          const i = ids.indexOf(b.id);
          if (i >= 0) plains[i].reconcile(b.position, b.lastInputSeq);
        }
      }
      if (!ready || k >= ticks) return;
      const predicted: Point[] = [];
      ids.forEach((id, i) => {
        const st = script(k, i);
        const seq = client.move(id, st.v, 0, { jump: st.jump ?? false });
        const expect = BREAK === "late" ? s.tick + 2 : undefined;
        predictor.input(id, seq, st.v, 0, st.jump ?? false, { tick: expect });
        predicted.push({ ...plains[i].applyInput(seq, st.v, dt) });
      });
      predictor.predict();
      plainAt.set(s.tick + 1, predicted);
      frameAt.set(s.tick + 1, k);
      k++;
    });
    // Snapshots are observed from before the spawns: the statics come in the snapshot that first
    // shows an own body (the view follows own bodies), which may be read with the spawn's reply.
    for (const b of bodies) {
      const r = await client.spawn(b.shape, { position: b.position, character: b.character });
      predictor.addOwn(r.bodyId, { position: r.position, character: b.character });
      ids.push(r.bodyId);
      plains.push(new Predictor(r.position, { maxSpeed: w.maxSpeed }));
    }
    ready = true;
    await waitFor(() => k >= ticks, `${ticks} frames`, ticks * 100 + 20000);
    const last = client.tick;
    await waitFor(() => fed >= last + 2, "the last frames' snapshots fed", 20000);
    predictor.predict(); // processes what is queued: the last checks
    c.close();
    await d.stopAndCheck();
    return { checks, server, ids, wp: predictor, plain, ticks, frameAt };
  } catch (e) {
    wp?.dispose();
    throw e;
  } finally {
    c?.close();
    await d.terminate();
  }
}

/** The checks every run makes; returns a summary line per body. */
function verify(run: Run, names: string[]): string[] {
  const lines: string[] = [];
  run.ids.forEach((id, i) => {
    const st = run.wp.stats(id)!;
    const mine = run.checks.filter((c) => c.bodyId === id);
    const timed = mine.filter((c) => c.timed);
    for (const c of timed) {
      const s = run.server.get(c.tick)?.get(id);
      assert.ok(s, `no server state of body ${id} at tick ${c.tick}`);
      const p = c.predicted;
      const same = Math.fround(s.position.x) === p.position.x && Math.fround(s.position.y) === p.position.y &&
        s.position.x === p.position.x && s.position.y === p.position.y && s.velocity.x === p.velocity.x &&
        s.velocity.y === p.velocity.y && s.angle === p.angle && s.grounded === p.grounded && s.groundId === p.groundId;
      assert.ok(same && c.exact && c.error === 0,
        `${names[i]} tick ${c.tick} (replayed ${c.replayed}): predicted ${JSON.stringify(p)}, server ` +
        `${JSON.stringify({ position: s.position, velocity: s.velocity, angle: s.angle, grounded: s.grounded, groundId: s.groundId })}`);
    }
    assert.equal(st.resyncs, 0, `${names[i]}: ${st.resyncs} snapshots not reproduced by the local world (of ${st.confirms + st.resyncs})`);
    assert.ok(mine.length >= run.ticks * 0.9, `${names[i]}: only ${mine.length} predictions checked in ${run.ticks} frames`);
    assert.ok(timed.length >= mine.length * 0.8,
      `${names[i]}: only ${timed.length} of ${mine.length} predictions applied every intent at the expected tick`);
    const pl = run.plain[i];
    const wpMean = st.checks ? st.sumError / st.checks : 0;
    lines.push(`${names[i]}: ${mine.length} predictions checked, ${timed.length} timed, all exact (error 0); ` +
      `every tick's snapshot reproduced (${st.confirms} confirms, 0 resyncs); WorldPredictor error over all ` +
      `checks max ${st.maxError.toFixed(4)} mean ${wpMean.toFixed(5)}; plain Predictor max ${pl.max.toFixed(4)} ` +
      `mean ${(pl.sum / Math.max(1, pl.n)).toFixed(4)} exact ${pl.exact}/${pl.n}`);
  });
  return lines;
}

// ---- top-down: three rooms of walls and corners ----------------------------------------------------

const ROOMS = [-20, 0, 20];
function topDownWorld(): WorldSpec {
  const statics: NonNullable<WorldSpec["statics"]> = [];
  for (const cx of ROOMS) {
    statics.push({ position: [cx - 5.5, 0], box: { half_extents: [0.5, 6.5] } });
    statics.push({ position: [cx + 5.5, 0], box: { half_extents: [0.5, 6.5] } });
    statics.push({ position: [cx, -5.5], box: { half_extents: [6, 0.5] } });
    statics.push({ position: [cx, 5.5], box: { half_extents: [6, 0.5] } });
    statics.push({ position: [cx - 2, 2], box: { half_extents: [0.5, 0.5] } }); // a pillar
  }
  // the third room's bottom-right corner cut by a slanted wall
  statics.push({ position: [25, -5], polygon: { vertices: [[-3, 0], [0, 0], [0, 3]] } });
  return { bounds: [[-40, -40], [40, 40]], statics, spawn_points: [[0, 0]] };
}

/** Into walls, along them, into corners, past the max speed, turning; the same for every body. */
function topDownStep(k: number): Step {
  const p = Math.floor(k / 40);
  switch (p) {
    case 0: return { v: { x: 15, y: 0 } };       // into the right wall (clamped to 12)
    case 1: return { v: { x: 8, y: 8 } };        // along it, into the top-right corner
    case 2: return { v: { x: -11, y: 2 } };      // along the ceiling, into the top-left corner
    case 3: return { v: { x: 0, y: -14 } };      // down the left wall
    case 4: return { v: { x: -7, y: -9 } };      // into the bottom-left corner
    case 5: return { v: { x: 12 * Math.cos(k / 5), y: 12 * Math.sin(k / 5) } }; // a new intent every tick
    case 6: return { v: { x: 9, y: -9 } };       // into the slanted corner, sliding along it
    case 7: return { v: { x: -3, y: 10 } };      // into the pillar and past it
    default: return { v: k % 7 === 0 ? { x: 0, y: 0 } : { x: 12 * Math.cos(k), y: 12 * Math.sin(k) } };
  }
}

test("top-down walks into walls, along walls and into corners: every acknowledged tick exact",
  { timeout: 200000 }, async (t) => {
    const bodies: BodySpec[] = [
      { shape: { box: { halfExtents: { x: 0.5, y: 0.5 } } }, position: { x: ROOMS[0], y: 0 } },
      { shape: { circle: { radius: 0.6 } }, position: { x: ROOMS[1], y: 0 } },
      { shape: { polygon: { vertices: hexagon(0.6) } }, position: { x: ROOMS[2], y: 0 } },
    ];
    const run = await runScript(topDownWorld(), bodies, 400, 9, (k) => topDownStep(k));
    try {
      for (const line of verify(run, ["box", "circle", "hexagon"])) t.diagnostic(line);
      // the walks met the walls: ticks where the server's velocity is not the intent's
      let pressed = 0;
      for (const [tick, states] of run.server) {
        const k = run.frameAt.get(tick);
        if (k === undefined) continue;
        for (const b of states.values()) {
          const want = topDownStep(k);
          const speed = Math.hypot(want.v.x, want.v.y);
          if (speed > 1 && Math.hypot(b.velocity.x, b.velocity.y) < Math.min(speed, MAX_SPEED) * 0.9) pressed++;
        }
      }
      t.diagnostic(`ticks where a wall or corner held a body back: ${pressed}`);
      assert.ok(pressed > 300, `the walks met too few walls: ${pressed}`);
      const replayed = run.checks.filter((c) => c.timed).map((c) => c.replayed);
      assert.ok(replayed.filter((r) => r === 10).length > replayed.length * 0.8,
        `most predictions replayed 10 ticks: ${JSON.stringify(histogram(replayed))}`);
    } finally {
      run.wp.dispose();
    }
  });

// ---- side-on: a character, a step, a one-way platform ------------------------------------------------

function sideOnWorld(): WorldSpec {
  const statics: NonNullable<WorldSpec["statics"]> = [];
  statics.push({ position: [0, -5], box: { half_extents: [25, 1] } }); // the floor, top at -4
  statics.push({ position: [-25, 5], box: { half_extents: [1, 10] } });
  statics.push({ position: [25, 5], box: { half_extents: [1, 10] } });
  statics.push({ position: [0, -2], box: { half_extents: [3, 0.25] }, one_way: true }); // top -1.75
  statics.push({ position: [-8, -3.85], box: { half_extents: [1.5, 0.15] } }); // a step of 0.3
  statics.push({ position: [12, -4], polygon: { vertices: [[0, 0], [4, 0], [4, 1.5]] } }); // a ramp
  return { bounds: [[-30, -10], [30, 30]], statics, spawn_points: [[0, 0]], gravity: [0, -30] };
}

/** Walks, steps, jumps through the platform and lands on it, walks off, jumps at the wall. */
function sideOnStep(k: number): Step {
  if (k < 30) return { v: { x: 0, y: 0 } };                         // falls, lands on the floor
  if (k < 50) return { v: { x: -6, y: 0 } };                        // walks left onto the step
  if (k < 75) return { v: { x: 6, y: 0 } };                         // back under the platform
  if (k === 75) return { v: { x: 0, y: 0 }, jump: true };           // up through it
  if (k < 120) return { v: { x: 0, y: 0 } };                        // lands on it
  if (k < 160) return { v: { x: 5, y: 0 } };                        // walks off its right edge
  if (k === 160) return { v: { x: -4, y: 0 }, jump: true };         // jumps back onto it
  if (k < 200) return { v: { x: -4, y: 0 } };
  if (k < 260) return { v: { x: 8, y: 0 } };                        // down, along, up the ramp
  if (k < 320) return { v: { x: 12, y: 0 }, jump: k % 20 === 0 };   // into the wall, jumping
  return { v: { x: -10, y: 0 }, jump: k % 25 === 0 };               // back across everything
}

test("side-on: a character walking, stepping, jumping onto a one-way platform: every acknowledged tick exact",
  { timeout: 200000 }, async (t) => {
    const character: CharacterOptions = { jumpSpeed: 12, stepHeight: 0.35, snapDistance: 0.2 };
    const bodies: BodySpec[] = [
      { shape: { box: { halfExtents: { x: 0.4, y: 0.5 } } }, position: { x: 0, y: -3 }, character },
    ];
    const run = await runScript(sideOnWorld(), bodies, 400, 3, (k) => sideOnStep(k));
    try {
      for (const line of verify(run, ["character"])) t.diagnostic(line);
      const id = run.ids[0];
      let onPlatform = 0, inAir = 0, jumping = 0;
      const platform = 4; // the fourth static of the file: ids follow the file's order
      for (const states of run.server.values()) {
        const b = states.get(id);
        if (!b) continue;
        if (b.grounded && b.groundId === platform) onPlatform++;
        if (!b.grounded) inAir++;
        if (b.velocity.y > 8) jumping++;
      }
      t.diagnostic(`ticks on the one-way platform ${onPlatform}, in the air ${inAir}, rising fast ${jumping}`);
      assert.ok(onPlatform > 20 && inAir > 40 && jumping > 5,
        `the walk did not do what it says: on the platform ${onPlatform}, in the air ${inAir}, jumping ${jumping}`);
    } finally {
      run.wp.dispose();
    }
  });

// ---- attach(): through the predictor, frames on a timer ------------------------------------------------

test("attach(): spawn and move through the predictor, frames on a timer", { timeout: 120000 }, async (t) => {
  const d = await Daemon.start({ args: ["--max-speed", String(MAX_SPEED)], world: topDownWorld() });
  let c: CollideClient | null = null;
  try {
    c = await connect(d.tcpUrl, { name: "attached" });
    const wp = WorldPredictor.attach(c, await loadWorldModuleFile(MODULE_PATH));
    const checks: PredictionCheck[] = [];
    wp.onCheck = (x) => checks.push(x);
    const { bodyId } = await wp.spawn({ box: { halfExtents: { x: 0.5, y: 0.5 } } }, { position: { x: 0, y: 0 } });
    for (let k = 0; k < 200; k++) {
      wp.move(bodyId, topDownStep(k).v);
      wp.predict();
      await sleep(1000 / 60);
    }
    const last = wp.move(bodyId, { x: 0, y: 0 });
    await waitFor(() => (c!.bodies.get(bodyId)?.lastInputSeq ?? 0) >= last, "the last move applied");
    const t0 = c.tick;
    await waitFor(() => c!.tick >= t0 + 3, "three more snapshots");
    wp.predict();
    const st = wp.stats(bodyId)!;
    const timed = checks.filter((x) => x.timed);
    t.diagnostic(`attach: ${checks.length} checked, ${timed.length} timed, ${st.confirms} confirms, ` +
      `${st.resyncs} resyncs, lead ${wp.lead}, error max ${st.maxError.toFixed(4)}`);
    assert.equal(st.resyncs, 0, "every snapshot reproduced");
    for (const x of timed) assert.ok(x.exact && x.error === 0, `tick ${x.tick}: ${JSON.stringify(x)}`);
    assert.ok(checks.length > 100 && timed.length > checks.length * 0.5, `${timed.length} of ${checks.length} timed`);
    const p = wp.position(bodyId)!, s = c.bodies.get(bodyId)!.position;
    assert.deepEqual(p, s, "stopped, the prediction is where the server has the body");
    assert.equal(wp.pendingCount, 0, "every intent acknowledged and dropped");
    wp.dispose();
    c.close();
    await d.stopAndCheck();
  } finally {
    c?.close();
    await d.terminate();
  }
});

function hexagon(r: number): Point[] {
  const v: Point[] = [];
  for (let i = 0; i < 6; i++) v.push({ x: Math.fround(r * Math.cos((i * Math.PI) / 3)), y: Math.fround(r * Math.sin((i * Math.PI) / 3)) });
  return v;
}

function histogram(xs: number[]): Record<number, number> {
  const h: Record<number, number> = {};
  for (const x of xs) h[x] = (h[x] ?? 0) + 1;
  return h;
}

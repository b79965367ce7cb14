// The world compiled to WebAssembly against the native world, to the bit (docs/wasm.md): S1
// scenes built here from PERFORMANCE.md's specification (s1_scene.ts) and random worlds of every
// shape pair replayed from the journals the native oracle writes (tests/js/wasm_world_oracle.c,
// which runs them through the same C API natively). State hashes are compared tick by tick; a
// failure names the scene or the world (seed, family) and the first tick whose hashes differ.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { loadWorldModuleFile } from "../src/node";
import { BodyKind } from "../src/proto";
import type { WasmWorld, WorldModule } from "../src/wasm_world";
import { S1Run, S1_WARMUP } from "./s1_scene";
import { MODULE_PATH } from "./wasm_world_path";

const ORACLE = process.env.COLLIDE_WORLD_ORACLE ?? "";


function oracle(args: string[]): string {
  if (!ORACLE) throw new Error("COLLIDE_WORLD_ORACLE is not set (ctest sets it: js_wasm_world)");
  return execFileSync(ORACLE, args, { encoding: "utf8", maxBuffer: 1 << 28 });
}

/** "hash TICK HEX" lines: hex by tick. */
function hashes(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of text.split("\n")) {
    const p = line.split(" ");
    if (p[0] === "hash") out.set(Number(p[1]), p[2]);
  }
  return out;
}

let modulePromise: Promise<WorldModule> | undefined;
const worldModule = () => (modulePromise ??= loadWorldModuleFile(MODULE_PATH));

/** S1 scene `scene` for S1_WARMUP + ticks ticks, compared every `every` ticks; on a difference,
 * both sides again tick by tick up to it, to name the first tick that differs. */
async function compareS1(scene: string, ticks: number, every: number): Promise<string> {
  const native = hashes(oracle(["s1", scene, String(ticks), String(every)]));
  const run = new S1Run(await worldModule(), scene);
  let last = "";
  try {
    for (const [tick, want] of native) {
      run.ticks(tick - run.k);
      last = run.world.stateHashHex();
      if (last !== want) return firstS1Difference(scene, tick, every);
    }
    assert.equal(run.k, S1_WARMUP + ticks);
  } finally {
    run.world.dispose();
  }
  return last;
}

async function firstS1Difference(scene: string, tick: number, every: number): Promise<never> {
  const from = Math.max(0, tick - every);
  const native = hashes(oracle(["s1", scene, String(tick - S1_WARMUP), "1"]));
  const run = new S1Run(await worldModule(), scene);
  try {
    for (let k = 1; k <= tick; k++) {
      run.ticks(1);
      const got = run.world.stateHashHex();
      if (k > from && got !== native.get(k))
        assert.fail(`${scene}: the first tick whose state hashes differ is ${k}: ` +
                    `wasm ${got}, native ${native.get(k)}`);
    }
  } finally {
    run.world.dispose();
  }
  assert.fail(`${scene}: hashes differed at tick ${tick} but not when stepped one by one`);
}

test("S1a-slow: 10 + 600 ticks, the native state hash every 61 ticks", async (t) => {
  const hash = await compareS1("S1a-slow", 600, 61);
  t.diagnostic(`S1a-slow after 610 ticks: ${hash} (bench_world 600 S1a-slow prints the same)`);
});

test("S1b-slow (movers collide): 10 + 200 ticks, every 21", async () => {
  await compareS1("S1b-slow", 200, 21);
});

test("S1a-fast (sweeps of 10 cells a tick): 10 + 100 ticks, every 11", async () => {
  await compareS1("S1a-fast", 100, 11);
});

test("S1r (turning boxes): 10 + 200 ticks, every 21", async () => {
  await compareS1("S1r", 200, 21);
});

test("S1c (characters, one-way cells, jumps): 10 + 200 ticks, every 21", async () => {
  await compareS1("S1c", 200, 21);
});

// ---- random worlds: journals -----------------------------------------------------------------

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** A float from its 8 hex digits of bits. */
function fl(hex: string): number {
  u32[0] = parseInt(hex, 16);
  return f32[0];
}

interface Journal {
  seed: number;
  family: string;
  lines: string[][];
}

function journals(text: string): Journal[] {
  const out: Journal[] = [];
  for (const line of text.split("\n")) {
    const p = line.split(" ");
    if (p[0] === "begin") out.push({ seed: Number(p[1]), family: p[2], lines: [] });
    else if (p[0] && p[0] !== "end") out[out.length - 1].lines.push(p);
  }
  return out;
}

/** The status a call answered: WORLD_OK 0, or the WasmWorldError's. */
function statusOf(fn: () => unknown): [number, unknown] {
  try {
    return [0, fn()];
  } catch (e) {
    const st = (e as { status?: number }).status;
    if (st === undefined) throw e;
    return [st, undefined];
  }
}

/** One journal line replayed through WasmWorld; an error message when its answer differs. */
function replayLine(w: WasmWorld, p: string[]): string | undefined {
  const answer = p.slice(p.indexOf("=") + 1).map(Number);
  let st: number, got: unknown;
  switch (p[0]) {
    case "spawn": {
      const [kind, shape, a, b, n] = [Number(p[1]), Number(p[2]), fl(p[3]), fl(p[4]), Number(p[5])];
      const vs = [];
      for (let i = 0; i < n; i++) vs.push({ x: fl(p[6 + 2 * i]), y: fl(p[7 + 2 * i]) });
      const q = 6 + 2 * n;
      const s = shape === 1 ? { box: { halfExtents: { x: a, y: b } } }
        : shape === 3 ? { circle: { radius: a } } : { polygon: { vertices: vs } };
      const opts = { position: { x: fl(p[q]), y: fl(p[q + 1]) }, angle: fl(p[q + 2]), owner: Number(p[q + 3]) };
      [st, got] = statusOf(() => (kind === BodyKind.BODY_KIND_STATIC ? w.addStatic(s, opts) : w.spawn(s, opts)));
      if (st !== answer[0] || (st === 0 && got !== answer[1]))
        return `spawn answered ${st} id ${got}, native ${answer[0]} id ${answer[1]}`;
      return undefined;
    }
    case "filter":
      [st] = statusOf(() => w.setFilter(Number(p[1]), Number(p[2]), Number(p[3]), p[4] === "1"));
      break;
    case "oneway":
      [st] = statusOf(() => w.setOneWay(Number(p[1]), true));
      break;
    case "character":
      [st] = statusOf(() => w.setCharacter(Number(p[1]), {
        maxSlope: fl(p[2]), stepHeight: fl(p[3]), snapDistance: fl(p[4]), jumpSpeed: fl(p[5]),
        gravityScale: fl(p[6]), jumpBufferMs: Number(p[7]), coyoteMs: Number(p[8]),
      }));
      break;
    case "intent":
      [st, got] = statusOf(() => w.setIntent(Number(p[2]), {
        owner: Number(p[1]), velocity: { x: fl(p[3]), y: fl(p[4]) }, angularVelocity: fl(p[5]),
        inputSeq: Number(p[6]), jump: p[7] === "1",
      }));
      if (st === 0 && got === false) st = 1; // WORLD_STALE_INPUT
      break;
    case "despawn":
      [st] = statusOf(() => w.despawn(Number(p[1])));
      break;
    case "step":
      w.step(Number(p[1]));
      return undefined;
    default:
      return `unknown journal line ${p.join(" ")}`;
  }
  return st === answer[0] ? undefined : `${p[0]} answered ${st}, native ${answer[0]}`;
}

/** What the worlds did, counted every 25 ticks over their movers: so a run that stopped
 * exercising something (no contact, no turn, no grounded character) is seen, not passed. */
const seen = { clipped: 0, turning: 0, grounded: 0, oneWay: 0, sensors: 0, turnedStatics: 0 };
function countSeen(w: WasmWorld): void {
  const t = w.bodies();
  for (let i = 0; i < t.count; i++) {
    const b = t.body(i);
    if (b.kind === BodyKind.BODY_KIND_STATIC) {
      seen.turnedStatics += b.angle !== 0 ? 1 : 0;
      continue;
    }
    // a plain mover that did not get its intended velocity met something
    const v = b.velocity, want = b.intent.velocity;
    if (!b.character && Math.hypot(v.x - want.x, v.y - want.y) > 0.01) seen.clipped++;
    if (b.angularVelocity !== 0) seen.turning++;
    if (b.grounded) seen.grounded++;
    if (b.oneWay) seen.oneWay++;
    if (b.sensor) seen.sensors++;
  }
}

/** Replays one journal; the first difference (a call's answer or a tick's hash), or undefined. */
function replay(module: WorldModule, j: Journal): { diff?: string; ticks: number } {
  const c = j.lines[0];
  const w = module.createWorld({
    bounds: { min: { x: fl(c[1]), y: fl(c[2]) }, max: { x: fl(c[3]), y: fl(c[4]) } },
    tickRateHz: fl(c[5]), gravity: { x: fl(c[6]), y: fl(c[7]) }, slideIterations: Number(c[8]),
    maxBodies: Number(c[9]), moverCollisions: c[10] === "1", maxAngularSpeed: fl(c[11]),
  });
  try {
    for (const p of j.lines.slice(1)) {
      if (p[0] === "hash") {
        const got = w.stateHashHex();
        if (got !== p[2]) return { diff: `tick ${p[1]}: state hash wasm ${got}, native ${p[2]}`, ticks: w.tick };
        if (w.tick % 25 === 0) countSeen(w);
        continue;
      }
      const diff = replayLine(w, p);
      if (diff) return { diff: `tick ${w.tick + 1}: ${diff}`, ticks: w.tick };
    }
    return { ticks: w.tick };
  } finally {
    w.dispose();
  }
}

const WORLDS = 60;
const TICKS = 500;
test(`random worlds of every shape pair: ${WORLDS} worlds x ${TICKS} ticks, hashes equal every tick`, async (t) => {
  const module = await worldModule();
  const all = journals(oracle(["random", "1", String(WORLDS), String(TICKS)]));
  assert.equal(all.length, WORLDS);
  const families = new Map<string, number>();
  let ticks = 0;
  for (const j of all) {
    const r = replay(module, j);
    if (r.diff) assert.fail(`world seed ${j.seed} (${j.family}): first difference at ${r.diff}`);
    ticks += r.ticks;
    families.set(j.family, (families.get(j.family) ?? 0) + 1);
  }
  assert.equal(ticks, WORLDS * TICKS);
  assert.equal(families.size, 6, "every family of shapes ran");
  t.diagnostic(`${ticks} ticks in ${all.length} worlds: ${[...families].map(([k, v]) => `${k} ${v}`).join(", ")}`);
  t.diagnostic(`mover samples (every 25 ticks): ${JSON.stringify(seen)}`);
  for (const [what, n] of Object.entries(seen)) assert.ok(n > 0, `no world showed ${what}`);
});

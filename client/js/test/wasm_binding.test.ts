// The WasmWorld binding (src/wasm_world.ts) around the world's WebAssembly module: it gives its
// memory back (many worlds created and disposed leave the module's memory where it was), turns
// the module's refusals into WasmWorldError, reads the body table in place, carries prediction's
// calls (a body saved, run ahead, restored: the same steps again; placed), and the module
// imports nothing (an import would get a shim that throws: checked on a module made here).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { loadWorldModuleFile } from "../src/node";
import { BodyKind } from "../src/proto";
import { BODY_FIELD, BODY_STRIDE, WasmWorldError, WorldModule, type WasmWorld } from "../src/wasm_world";
import { MODULE_PATH } from "./wasm_world_path";

const load = () => loadWorldModuleFile(MODULE_PATH);
const bounds = { min: { x: 0, y: 0 }, max: { x: 50, y: 50 } };
const box = (hx: number, hy = hx) => ({ box: { halfExtents: { x: hx, y: hy } } });
const tri = { polygon: { vertices: [{ x: -0.5, y: -0.4 }, { x: 0.5, y: -0.4 }, { x: 0, y: 0.6 }] } };

/** The WasmWorldError fn throws, checked to carry `status`. */
function throwsStatus(fn: () => unknown, status: string): WasmWorldError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof WasmWorldError, `not a WasmWorldError: ${String(e)}`);
    assert.equal(e.statusName, status, e.message);
    return e;
  }
  assert.fail(`expected ${status}, nothing was thrown`);
}

test("the module: no imports, its size", (t) => {
  const bytes = readFileSync(MODULE_PATH);
  const mod = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.imports(mod), [], "the world needs nothing from WASI");
  t.diagnostic(`collide_world.wasm: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped`);
});

/** A module importing WASI's proc_exit and calling it from an export named as the world's. */
function moduleWithImport(): Uint8Array {
  const name = (s: string) => [s.length, ...Buffer.from(s)];
  const section = (id: number, body: number[]) => [id, body.length, ...body];
  const imp = [1, ...name("wasi_snapshot_preview1"), ...name("proc_exit"), 0, 0];
  const exp = [2, ...name("memory"), 2, 0, ...name("wasm_world_step"), 0, 1];
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [2, 0x60, 1, 0x7f, 0, 0x60, 2, 0x7f, 0x7f, 0]),
    ...section(2, imp), ...section(3, [1, 1]), ...section(5, [1, 0, 1]), ...section(7, exp),
    ...section(10, [1, 6, 0, 0x41, 0, 0x10, 0, 0x0b])]);
}

test("an import the module might have gets a shim that throws when called", async () => {
  const m = await WorldModule.instantiate(moduleWithImport());
  assert.throws(() => m.exports.wasm_world_step(0, 0),
    /called wasi_snapshot_preview1\.proc_exit, which the world never needs/);
});

/** A world with every lazily allocated table in use: turned bodies, filters, one-way bodies,
 * characters, the body table; stepped a little. */
function busyWorld(m: WorldModule, maxBodies?: number): WasmWorld {
  const w = m.createWorld({ bounds, maxBodies, gravity: { x: 0, y: -20 } });
  for (let i = 0; i < 40; i++) {
    w.addStatic(i % 2 ? box(0.5) : tri, { position: { x: 2 + i, y: 1 + (i % 7) }, angle: i * 0.1,
      oneWay: i % 3 === 0 });
    const id = w.spawn(i % 3 ? box(0.3) : { circle: { radius: 0.3 } }, {
      position: { x: 2 + i, y: 30 }, owner: 1 + (i % 4), category: i % 5 ? 0 : 2, sensor: i === 7,
      character: i % 2 ? { jumpSpeed: 8 } : undefined });
    w.setIntent(id, { velocity: { x: 1, y: 0 }, angularVelocity: i % 2 ? 0 : 3, inputSeq: 1, jump: true });
  }
  w.step(10);
  assert.equal(w.bodies().count, 80);
  return w;
}

test("memory: worlds created and disposed leave the module's memory as it was", async (t) => {
  const m = await load();
  for (let i = 0; i < 20; i++) busyWorld(m, 256).dispose();
  m.createWorld({ bounds }).dispose(); // the default capacity, 65,536 bodies
  const settled = m.memoryBytes;
  for (let i = 0; i < 300; i++) busyWorld(m, 256).dispose();
  for (let i = 0; i < 20; i++) m.createWorld({ bounds }).dispose();
  assert.equal(m.memoryBytes, settled, "300 busy worlds and 20 large ones later");
  t.diagnostic(`module memory after the first worlds and after 320 more: ${settled} bytes`);
  const kept = Array.from({ length: 8 }, () => busyWorld(m, 256));
  assert.ok(m.memoryBytes >= settled);
  kept.forEach((w) => w.dispose());
});

test("dispose: idempotent, and a disposed world refuses every call", async () => {
  const w = (await load()).createWorld({ bounds });
  w.dispose();
  w.dispose();
  assert.ok(w.disposed);
  assert.throws(() => w.step(), /used after dispose/);
  assert.throws(() => w.stateHash(), /used after dispose/);
  assert.throws(() => w.spawn(box(1), { position: { x: 1, y: 1 } }), /used after dispose/);
});

test("errors from the module are WasmWorldError exceptions", async () => {
  const m = await load();
  throwsStatus(() => m.createWorld({ bounds: { min: { x: 0, y: 0 }, max: { x: NaN, y: 1 } } }),
    "WASM_ERR_ARGUMENT");
  const w = m.createWorld({ bounds, maxBodies: 4, gravity: { x: 0, y: -10 } });
  try {
    const e = throwsStatus(() => w.spawn(box(1), { position: { x: 60, y: 10 } }), "WORLD_ERR_OUT_OF_BOUNDS");
    assert.match(e.message, /spawn: outside the world bounds/);
    const s = throwsStatus(() => w.spawn({ polygon: { vertices: [{ x: 0, y: 0 }, { x: 1, y: 0 }, { x: 2, y: 0 }] } },
      { position: { x: 5, y: 5 } }), "WORLD_ERR_INVALID_SHAPE");
    assert.equal(s.shapeError, "polygon has zero area");
    throwsStatus(() => w.spawn({}, { position: { x: 5, y: 5 } }), "WORLD_ERR_INVALID_SHAPE");
    throwsStatus(() => w.spawn(box(1), { position: { x: Infinity, y: 5 } }), "WORLD_ERR_NOT_FINITE");
    const wall = w.addStatic(box(1), { position: { x: 5, y: 1 } });
    const id = w.spawn(box(0.5), { position: { x: 10, y: 10 }, owner: 3 });
    throwsStatus(() => w.setIntent(id, { velocity: { x: NaN, y: 0 }, inputSeq: 1 }), "WORLD_ERR_NOT_FINITE");
    throwsStatus(() => w.setIntent(id, { velocity: { x: 0, y: 0 }, angularVelocity: Infinity, inputSeq: 1 }),
      "WORLD_ERR_NOT_FINITE");
    throwsStatus(() => w.setIntent(wall, { velocity: { x: 1, y: 0 }, inputSeq: 1 }), "WORLD_ERR_NOT_MOVING");
    throwsStatus(() => w.setIntent(id, { velocity: { x: 1, y: 0 }, inputSeq: 1, owner: 4 }), "WORLD_ERR_NOT_OWNER");
    throwsStatus(() => w.setIntent(9999, { velocity: { x: 1, y: 0 }, inputSeq: 1 }), "WORLD_ERR_NOT_FOUND");
    assert.equal(w.setIntent(id, { velocity: { x: 1, y: 0 }, inputSeq: 5, owner: 3 }), true);
    assert.equal(w.setIntent(id, { velocity: { x: 2, y: 0 }, inputSeq: 5 }), false, "stale input");
    // a spawn whose options fail is undone, as the daemon's SpawnBody
    const before = w.bodyCount;
    throwsStatus(() => w.spawn(box(0.5), { position: { x: 20, y: 20 }, character: { jumpSpeed: NaN } }),
      "WORLD_ERR_NOT_FINITE");
    assert.equal(w.bodyCount, before);
    w.spawn(box(0.5), { position: { x: 20, y: 20 } });
    w.spawn(box(0.5), { position: { x: 30, y: 20 } });
    throwsStatus(() => w.spawn(box(0.5), { position: { x: 40, y: 20 } }), "WORLD_ERR_FULL");
    w.despawn(id);
    throwsStatus(() => w.despawn(id), "WORLD_ERR_NOT_FOUND");
  } finally {
    w.dispose();
  }
});

test("bodies(): the table read in place, ascending ids, kinds; body(id)", async () => {
  const w = (await load()).createWorld({ bounds, gravity: { x: 0, y: -10 } });
  try {
    const floor = w.addStatic(box(20, 1), { position: { x: 25, y: 1 }, oneWay: true });
    const a = w.spawn(box(0.5), { position: { x: 10, y: 2.6 }, owner: 2, character: {} });
    const b = w.spawn(tri, { position: { x: 20, y: 20 }, angle: 0.5, sensor: true });
    w.setIntent(b, { velocity: { x: 3, y: 0 }, angularVelocity: 1, inputSeq: 7 });
    w.step(30);
    const all = w.bodies();
    assert.equal(all.count, 3);
    assert.deepEqual([0, 1, 2].map((i) => all.id(i)), [floor, a, b]);
    assert.equal(all.u32.length, 3 * BODY_STRIDE);
    const movers = w.bodies(BodyKind.BODY_KIND_MOVING);
    assert.deepEqual([movers.id(0), movers.id(1)], [a, b]);
    assert.equal(w.bodies(BodyKind.BODY_KIND_STATIC).count, 1);
    const rb = w.body(b)!;
    assert.equal(rb.sensor, true);
    assert.equal(rb.lastInputSeq, 7);
    assert.equal(rb.intent.velocity.x, 3);
    assert.ok(Math.abs(rb.position.x - 21.5) < 1e-4, `x ${rb.position.x}`);
    assert.ok(rb.angle > 0.5, "turned");
    const ra = w.body(a)!;
    assert.equal(ra.character, true);
    assert.equal(ra.grounded, true);
    assert.equal(ra.groundId, floor);
    assert.equal(w.body(floor)!.oneWay, true);
    const m = w.bodies(BodyKind.BODY_KIND_MOVING);
    assert.equal(m.f32[BODY_STRIDE + BODY_FIELD.x], rb.position.x, "in place, the same floats");
    w.despawn(a);
    assert.equal(w.body(a), undefined);
    assert.equal(w.bodies().count, 2);
    assert.equal(w.tick, 30);
  } finally {
    w.dispose();
  }
});

test("shape(id): a body's shape as spawned, body-local, whatever its angle", async () => {
  const m = await load();
  const w = m.createWorld({ bounds });
  const a = w.addStatic(box(2, 1), { position: { x: 10, y: 10 }, angle: 0.5 });
  const b = w.spawn({ circle: { radius: 1.5 } }, { position: { x: 20, y: 20 } });
  const c = w.spawn(tri, { position: { x: 30, y: 30 }, angle: 1 });
  w.setIntent(c, { velocity: { x: 1, y: 0 }, angularVelocity: 2, inputSeq: 1 });
  w.step(5);
  assert.deepEqual(w.shape(a), box(2, 1));
  assert.deepEqual(w.shape(b), { circle: { radius: 1.5 } });
  const f = Math.fround;
  assert.deepEqual(w.shape(c), { polygon: { vertices: tri.polygon.vertices.map((v) => ({ x: f(v.x), y: f(v.y) })) } });
  w.despawn(b);
  assert.equal(w.shape(b), undefined);
  assert.equal(w.shape(12345), undefined);
  w.dispose();
});

test("saveBody / restoreBody / place / placeCharacter: prediction's calls through the binding", async () => {
  const w = (await load()).createWorld({ bounds, gravity: { x: 0, y: -30 } });
  try {
    w.addStatic(box(20, 1), { position: { x: 25, y: 1 } });
    const c = w.spawn(box(0.4, 0.5), { position: { x: 10, y: 2.6 }, character: { jumpSpeed: 10 } });
    const p = w.spawn(tri, { position: { x: 30, y: 20 } });
    w.step(20);
    const sc = w.saveBody(c), sp = w.saveBody(p);
    assert.equal(sc.length, w.stateSize);
    const run = (seq: number) => {
      w.setIntent(c, { velocity: { x: 4, y: 0 }, inputSeq: seq, jump: true });
      w.setIntent(p, { velocity: { x: -2, y: 1 }, angularVelocity: 3, inputSeq: seq });
      w.step(15);
      return [w.body(c)!, w.body(p)!];
    };
    const first = run(5);
    // a detour on other inputs, then back to the saved states: the same 15 ticks again
    w.setIntent(c, { velocity: { x: -4, y: 0 }, inputSeq: 9, jump: true });
    w.step(7);
    w.restoreBody(c, sc);
    w.restoreBody(p, sp);
    assert.deepEqual(run(5), first, "restored, the bodies step as they did");
    throwsStatus(() => w.restoreBody(p, sc), "WORLD_ERR_NOT_FOUND"); // another body's state
    w.place(p, { x: 12, y: 30 }, 1.25, { x: 1, y: 2 }, 0.5);
    const placed = w.body(p)!;
    assert.deepEqual([placed.position, placed.angle, placed.velocity, placed.angularVelocity],
      [{ x: 12, y: 30 }, 1.25, { x: 1, y: 2 }, 0.5]);
    throwsStatus(() => w.place(p, { x: -5, y: 0 }, 0, { x: 0, y: 0 }, 0), "WORLD_ERR_OUT_OF_BOUNDS");
    w.placeCharacter(c, -2.5, false, 0);
    assert.equal(w.body(c)!.vertical, -2.5);
    throwsStatus(() => w.placeCharacter(p, 0, false, 0), "WORLD_ERR_NOT_FOUND"); // not a character
  } finally {
    w.dispose();
  }
});

// Benchmark (not a test): WorldPredictor's cost per frame (PERFORMANCE.md "WorldPredictor"),
// with 10 unacknowledged ticks and 50 bodies in view: one own body and 49 others walking at
// random among the statics of a 48 x 48 tile map (20% solid, as S1's), snapshots every tick seen
// 9 ticks late, so each frame processes one snapshot (one confirming step) and replays 10 ticks.
// The server is a world of the same module (as js_world_predictor_book's): no daemon, no network.
// A frame is what a game does each frame: observe() the snapshot that arrived, input() the
// frame's intent, predict(); the time of the three together is what is timed.
//
//   npm run build   (or the CMake build), then from client/js:
//   node bench/world_predictor.mjs [FRAMES=2000] [UNACKED=10] [BODIES=50]
//
// Prints one JSON line: median and min ms per frame, the ticks replayed per frame, what was in
// view, and how many predictions came out exact (not all: the others turn every 30 ticks, and a
// prediction in which the own body meets one that turned within its 10 ticks, seen moving on at
// its old velocity, is off; the rest are the server's state to the bit). Run it on a quiet
// machine.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { loadWorldModuleFile, WorldPredictor, predictorWorldConfig } = require(join(root, "build", "src", "node.js"));

const args = process.argv.slice(2);
const frames = Math.max(20, Number(args[0] ?? 2000));
const unacked = Math.max(1, Number(args[1] ?? 10));
const inView = Math.max(1, Number(args[2] ?? 50));
const modulePath = process.env.COLLIDE_WORLD_WASM || join(root, "wasm", "collide_world.wasm");

// xorshift32 (PERFORMANCE.md's), seeded 12345
let rng = 12345;
const next = () => {
  rng ^= rng << 13;
  rng >>>= 0;
  rng ^= rng >>> 17;
  rng ^= rng << 5;
  return (rng >>>= 0);
};
const unit = () => (next() >>> 8) / 16777216;

const module = await loadWorldModuleFile(modulePath);
const setup = { tickRateHz: 60, worldMin: { x: 0, y: 0 }, worldMax: { x: 48, y: 48 }, maxSpeed: 10000, gravity: { x: 0, y: 0 } };
const server = module.createWorld(predictorWorldConfig(setup));
const shapes = new Map();
const cell = { box: { halfExtents: { x: 0.5, y: 0.5 } } };
const solid = new Set();
for (let y = 0; y < 48; y++) {
  for (let x = 0; x < 48; x++) {
    const border = x === 0 || y === 0 || x === 47 || y === 47;
    if (!border && unit() < 0.2) {
      shapes.set(server.addStatic(cell, { position: { x: x + 0.5, y: y + 0.5 } }), cell);
      solid.add(y * 48 + x);
    }
  }
}
const mover = { box: { halfExtents: { x: 0.4, y: 0.4 } } };
const movers = [];
while (movers.length < inView) {
  const cx = next() % 48, cy = next() % 48;
  if (solid.has(cy * 48 + cx) || cx === 0 || cy === 0 || cx === 47 || cy === 47) continue;
  solid.add(cy * 48 + cx);
  const id = server.spawn(mover, { position: { x: cx + 0.5, y: cy + 0.5 } });
  shapes.set(id, mover);
  movers.push(id);
}
const me = movers[0];

let clock = 0;
const wp = new WorldPredictor(module, setup, { now: () => clock });
wp.addOwn(me, { position: server.body(me).position });
let exact = 0, checks = 0;
wp.onCheck = (c) => {
  checks++;
  if (c.exact) exact++;
};

const sent = new Set();
function snapshot(tick) {
  const t = server.bodies();
  const bodies = [];
  for (let i = 0; i < t.count; i++) {
    const b = t.body(i);
    if (b.kind === 1 && sent.has(b.id)) continue;
    sent.add(b.id);
    bodies.push({ ...b, shape: shapes.get(b.id), category: 0, mask: 0, tick });
  }
  return { tick, bodies, removed: [] };
}

const late = [snapshot(0)];
const times = [];
const replayed = [];
let seq = 0, arriving = null;
for (let k = 1; k <= frames + unacked; k++) {
  // the server: the own intent sent last frame, the others' random walks, one tick
  if (arriving) server.setIntent(me, arriving);
  if (k % 30 === 1) {
    for (const id of movers.slice(1)) {
      const a = unit() * 2 * Math.PI;
      server.setIntent(id, { velocity: { x: 4 * Math.cos(a), y: 4 * Math.sin(a) }, inputSeq: k });
    }
  }
  server.step();
  late.push(snapshot(k));
  clock = (k * 1000) / setup.tickRateHz;
  const a = unit() * 2 * Math.PI;
  const v = { x: 6 * Math.cos(a), y: 6 * Math.sin(a) };
  seq++;
  arriving = { velocity: v, inputSeq: seq };
  const t0 = performance.now();
  if (late.length > unacked - 1) {
    const e = late.shift();
    wp.observe(e.tick, e.bodies, e.removed);
  }
  wp.input(me, seq, v);
  const target = wp.predict();
  const dt = performance.now() - t0;
  if (k > unacked) {
    times.push(dt);
    replayed.push(target - wp.base);
  }
}
times.sort((x, y) => x - y);
replayed.sort((x, y) => x - y);
console.log(JSON.stringify({
  scene: `WorldPredictor-${unacked}x${inView}`,
  engine: "collide-wasm (Node " + process.versions.node + ")",
  median_ms: Number(times[times.length >> 1].toFixed(4)),
  min_ms: Number(times[0].toFixed(4)),
  frames: times.length,
  replayed_ticks_median: replayed[replayed.length >> 1],
  movers_in_view: inView,
  statics_in_view: wp.sizes.statics,
  predictions_exact: `${exact}/${checks}`,
  module_memory_bytes: module.memoryBytes,
}));
wp.dispose();
server.dispose();

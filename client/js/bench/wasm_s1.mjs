// Benchmark (not a test): scene S1 of PERFORMANCE.md through the world's WebAssembly module in
// Node, built from the specification by the tests' s1_scene.ts, timed as bench_world times the
// native world (world.step() alone, 10 warm-up ticks, the median of the timed ticks). The target
// (PERFORMANCE.md): on S1a-slow <= 2.5x the native time per tick, the same state hash.
//
//   npm run build   (or the CMake build), then from client/js:
//   node bench/wasm_s1.mjs [TICKS=600] [SCENE=S1a-slow] [--native PATH/bench_world]
//
// One JSON line per scene like bench_world's; with --native, bench_world runs the same scene
// first (build/release/bench/world/bench_world) and a line with the ratio and whether the state
// hashes agree follows. Run it on a quiet machine: ratios of two processes run one after the
// other move with whatever else the machine does.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { loadWorldModuleFile } = require(join(root, "build", "src", "node.js"));
const { S1Run, S1_WARMUP } = require(join(root, "build", "test", "s1_scene.js"));

const args = process.argv.slice(2);
const nativeAt = args.indexOf("--native");
const native = nativeAt >= 0 ? args.splice(nativeAt, 2)[1] : undefined;
const ticks = Math.max(1, Number(args[0] ?? 600));
const scene = args[1] ?? "S1a-slow";
const modulePath = process.env.COLLIDE_WORLD_WASM || join(root, "wasm", "collide_world.wasm");

let nativeLine;
if (native) {
  const out = execFileSync(native, [String(ticks), scene], { encoding: "utf8" });
  nativeLine = out.split("\n").map((l) => (l.startsWith("{") ? JSON.parse(l) : {}))
    .find((j) => j.scene === scene);
  if (nativeLine) console.log(JSON.stringify(nativeLine));
}

const module = await loadWorldModuleFile(modulePath);
const run = new S1Run(module, scene);
run.ticks(S1_WARMUP + ticks);
const timed = run.times.slice(S1_WARMUP).sort((a, b) => a - b);
const line = {
  scene,
  engine: "collide-wasm (Node " + process.versions.node + ")",
  median_ms: Number(timed[timed.length >> 1].toFixed(4)),
  min_ms: Number(timed[0].toFixed(4)),
  ticks,
  state_hash: run.world.stateHashHex(),
  module_memory_bytes: module.memoryBytes,
};
console.log(JSON.stringify(line));
if (nativeLine?.median_ms)
  console.log(JSON.stringify({
    scene: "ratios",
    wasm_vs_native: Number((line.median_ms / nativeLine.median_ms).toFixed(3)),
    same_state: nativeLine.state_hash === line.state_hash,
  }));
run.world.dispose();

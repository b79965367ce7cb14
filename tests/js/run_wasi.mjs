// Runs a WASI command module (a C test built for wasm32-wasi: js_wasm_geom_trig) in Node, its
// output on ours, its exit status ours: `node run_wasi.mjs test.wasm [args...]`.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: "preview1", args: [file, ...args], returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);

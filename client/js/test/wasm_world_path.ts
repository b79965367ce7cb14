// Where the tests find the world's WebAssembly module: ctest names the one CMake built
// (COLLIDE_WORLD_WASM); by hand, client/js/wasm/ (the tests run from build/test/).
import { join } from "node:path";

export const MODULE_PATH =
  process.env.COLLIDE_WORLD_WASM || join(__dirname, "..", "..", "wasm", "collide_world.wasm");

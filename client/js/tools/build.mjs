// Builds the package: wire code from the project's proto/collide.proto (pbjs/pbts), the SDK
// (tsc into dist/), the tests (tsc into build/test/; they take in the play page's and the viewer's
// sources, so tsc checks those too), and the bundles of the viewer and the play page (esbuild into
// viewer/dist/ and play/dist/). Run through `npm run build`; the ctest target collide_js runs it
// too.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);
const run = (cmd, args) => execFileSync(bin(cmd), args, { cwd: root, stdio: "inherit" });
const proto = join(root, "..", "..", "proto", "collide.proto");

mkdirSync(join(root, "src", "gen"), { recursive: true });
// uint64 as number (--force-number); no verify/convert/delimited code: the SDK does not use it.
run("pbjs", ["-t", "static-module", "-w", "commonjs", "--force-number", "--no-verify", "--no-convert",
             "--no-delimited", "-o", "src/gen/collide.js", proto]);
run("pbts", ["-o", "src/gen/collide.d.ts", "src/gen/collide.js"]);
run("tsc", ["-p", "tsconfig.json"]);
cpSync(join(root, "src", "gen"), join(root, "dist", "gen"), { recursive: true });
run("tsc", ["-p", "tsconfig.test.json"]);
cpSync(join(root, "src", "gen"), join(root, "build", "src", "gen"), { recursive: true });
run("esbuild", ["viewer/src/viewer.ts", "--bundle", "--format=iife", "--target=es2020", "--minify",
                "--outfile=viewer/dist/viewer.js"]);
run("esbuild", ["play/src/play.ts", "--bundle", "--format=iife", "--target=es2020", "--minify",
                "--outfile=play/dist/play.js"]);

#!/usr/bin/env python3
"""ctest driver: every world in examples/worlds loads with `collided --check-world` (exit 0, no
warning), so an example nobody opens cannot rot; and the side-on example (sideon.json) is what
docs/operations.md "A side-on level" says it is: its bounds, its gravity, its statics by shape
and its spawn points, line by line as --check-world prints them."""

import argparse
import os
import subprocess
import sys

WORLD_EXTENSIONS = (".json", ".tmx", ".tmj")

# What --check-world prints for sideon.json (docs/operations.md "A side-on level"): 116 ground
# tiles, a wall, two slope pieces, the plateau, the slope down, the ceiling, four steps, the ledge,
# four one-way platforms, the high block and its steep side, the upper ledge and the right wall.
SIDEON = ["examples/worlds/sideon.json: native world", "bounds: [0, 0] - [160, 40]",
          "statics: 135 (boxes 131, polygons 4, circles 0)", "spawn points: 8",
          "gravity: (0, -30)", "warnings: 0"]


def check_world(collided, path):
    p = subprocess.run([collided, "--check-world", path], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collided", required=True)
    ap.add_argument("--source", required=True, help="the source tree (examples/worlds under it)")
    args = ap.parse_args()
    os.chdir(args.source)
    worlds = sorted(os.path.join("examples/worlds", f) for f in os.listdir("examples/worlds")
                    if f.endswith(WORLD_EXTENSIONS))
    failures = []
    if "examples/worlds/sideon.json" not in worlds:
        failures.append("examples/worlds/sideon.json is missing")
    for path in worlds:
        rc, out, err = check_world(args.collided, path)
        if rc != 0 or "warnings: 0" not in out.splitlines():
            failures.append("%s: exit %d, stdout:\n%s\nstderr:\n%s" % (path, rc, out, err))
            continue
        if path.endswith("sideon.json") and out.splitlines() != SIDEON:
            failures.append("sideon.json: --check-world printed\n%s\nwanted\n%s"
                            % (out, "\n".join(SIDEON)))
        print("ok   %s" % path)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

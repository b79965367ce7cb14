#!/usr/bin/env python3
"""collide-client replay against journals written by the journal code (journal_sample), run by
ctest:

  replay_cli.py --client PATH --sample PATH

- a whole journal replays with exit 0, its hashes checked, the summary saying so;
- --to-tick T --dump prints the bodies at T exactly as the live run had them (journal_sample
  prints the live world at T in the same format);
- an input that went past the journal fails the replay (exit 1) naming the tick it was applied in;
- a journal cut short replays to its last whole tick (exit 0) and says it was cut;
- another format version, a cut header, a missing file and bad arguments exit 2 with the reason;
- --speed paces the replay (20 s of journal at 10x takes about 2 s)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--sample", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.cjournal")
        rc, live, err = run([a.sample, good, "--ticks", "600", "--seed", "3", "--dump-at", "420"])
        check(rc == 0, f"journal_sample wrote the journal ({err})")

        rc, out, err = run([a.client, "replay", good, "--verify"])
        check(rc == 0, f"a whole journal replays: {rc} {out} {err}")
        m = re.search(r"ticks 0\.\.600 \(600 replayed\), (\d+) hashes checked", out)
        check(m is not None and int(m.group(1)) == 10, f"its 10 hashes were checked: {out}")
        check(out.strip().endswith(": ok"), f"the summary says ok: {out}")

        rc, out, err = run([a.client, "replay", good, "--to-tick", "420", "--dump"])
        dumped = "\n".join(l for l in out.splitlines() if l.startswith(("tick ", "body ")))
        check(rc == 0 and dumped == live.strip(),
              "the dump at tick 420 is the live world's at 420, body for body")
        check(live.count("\nbody ") > 10, "the live world had bodies to compare")

        planted = os.path.join(d, "planted.cjournal")
        rc, _, _ = run([a.sample, planted, "--ticks", "600", "--seed", "3", "--hash-every", "1",
                        "--plant", "333"])
        rc, out, err = run([a.client, "replay", planted])
        check(rc == 1, f"an input past the journal fails the replay: {rc}")
        check("tick 333: state hash" in err, f"...naming the tick it came in: {err}")
        check(out.strip().endswith("FAILED"), f"the summary says FAILED: {out}")

        data = open(good, "rb").read()
        cut = os.path.join(d, "cut.cjournal")
        open(cut, "wb").write(data[: len(data) - 777])
        rc, out, err = run([a.client, "replay", cut, "--verify"])
        check(rc == 0, f"a cut journal replays to its last whole tick: {rc} {err}")
        check("cut" in err and "last whole tick" in err, f"...and says it was cut: {err}")
        m = re.search(r"ticks 0\.\.(\d+)", out)
        check(m is not None and 500 < int(m.group(1)) < 600, f"...to a tick before 600: {out}")

        v2 = os.path.join(d, "v2.cjournal")
        open(v2, "wb").write(data[:8] + b"\x02" + data[9:])
        rc, out, err = run([a.client, "replay", v2])
        check(rc == 2 and "format version 2" in err, f"another format version is refused: {err}")
        head = os.path.join(d, "head.cjournal")
        open(head, "wb").write(data[:40])
        rc, out, err = run([a.client, "replay", head])
        check(rc == 2 and "cut short" in err, f"a cut header is refused: {err}")
        rc, out, err = run([a.client, "replay", os.path.join(d, "missing.cjournal")])
        check(rc == 2 and "No such file" in err, f"a missing file: {err}")
        rc, out, err = run([a.client, "replay", good, "--to-tick", "x"])
        check(rc == 2, "a bad --to-tick is a usage error")
        rc, out, err = run([a.client, "replay", good, "--speed", "0"])
        check(rc == 2, "a bad --speed is a usage error")

        paced = os.path.join(d, "paced.cjournal")
        run([a.sample, paced, "--ticks", "1200", "--seed", "5"])
        t0 = time.monotonic()
        rc, out, err = run([a.client, "replay", paced, "--speed", "10", "--verify"])
        took = time.monotonic() - t0
        check(rc == 0 and 1.8 <= took < 10.0, f"--speed 10 paces 20 s of journal to ~2 s: {took:.2f}")
    if failures:
        print(f"{len(failures)} failed", file=sys.stderr)
        sys.exit(1)
    print("replay_cli: all passed")


if __name__ == "__main__":
    main()

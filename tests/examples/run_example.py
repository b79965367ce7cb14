#!/usr/bin/env python3
"""ctest driver: starts the real collided on ephemeral ports, runs the Python example client
against it, then stops the daemon with SIGTERM and checks that it drained (exit 0, event=shutdown).
Every wait is bounded; the daemon is killed if anything goes wrong."""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collided", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--gen", required=True, help="directory holding the generated collide_pb2.py")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()

    daemon = subprocess.Popen([args.collided, "--port", "0", "--udp-port", "0", "--http-port", "0", "--ws-port", "0", "--bind",
                               "127.0.0.1"], stderr=subprocess.PIPE, text=True,
                              env={k: v for k, v in os.environ.items()
                                   if not k.startswith("COLLIDE_")})
    log_lines = []  # the daemon's stderr, kept for the failure report and the shutdown check
    listening = threading.Event()

    def drain_stderr():
        for line in daemon.stderr:
            log_lines.append(line.rstrip("\n"))
            if "event=listening" in line:
                listening.set()

    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()

    def fail(why):
        print("run_example: FAIL: %s" % why, file=sys.stderr)
        print("---- collided stderr ----\n" + "\n".join(log_lines[-40:]), file=sys.stderr)
        return 1

    try:
        deadline = time.monotonic() + 30
        while not listening.wait(0.1):
            if daemon.poll() is not None:
                reader.join(5)
                return fail("collided exited %d before listening" % daemon.returncode)
            if time.monotonic() > deadline:
                return fail("no event=listening line within 30 s")
        line = next(l for l in log_lines if "event=listening" in l)
        match = re.search(r"\bgame_port=(\d+)", line)
        if not match or int(match.group(1)) == 0:
            return fail("no game_port in: " + line)
        port = int(match.group(1))

        example = subprocess.run([args.python, args.example, "--gen", args.gen,
                                  "--host", "127.0.0.1", "--port", str(port)], timeout=120)
        if example.returncode != 0:
            return fail("the example client exited %d" % example.returncode)
        # The same session on quantized snapshots at 20 Hz (protocol 1.1): its decoder,
        # collide_quantized.py, against the daemon.
        example = subprocess.run([args.python, args.example, "--gen", args.gen,
                                  "--host", "127.0.0.1", "--port", str(port), "--quantized",
                                  "--snapshot-rate", "20"], timeout=120)
        if example.returncode != 0:
            return fail("the example client exited %d with --quantized" % example.returncode)

        daemon.send_signal(signal.SIGTERM)
        try:
            rc = daemon.wait(30)
        except subprocess.TimeoutExpired:
            return fail("collided did not exit within 30 s of SIGTERM")
        reader.join(5)
        if rc != 0:
            return fail("collided exited %d after SIGTERM, want 0" % rc)
        if not any("event=shutdown" in l for l in log_lines):
            return fail("no event=shutdown in collided's log")
        print("run_example: ok (daemon drained and exited 0)")
        return 0
    except subprocess.TimeoutExpired:
        return fail("the example client did not finish within 120 s")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end tests of collide-client, run by ctest.

  client_tests.py CASE --client PATH [--daemon PATH] [--double PATH]

Cases against the real daemon (started on --port 0; its port read from the `event=listening`
stderr line; stopped after): load_live, thresholds, disconnects, errors, ping_live, watch_live.
Cases without it: ping_dead, ping_stalled, usage, check_double (a tiny server double that sends a
deliberately wrong snapshot stream, and a correct one).
No assertion depends on speed: latencies are only required to be above zero and below the
timeouts the tool itself enforces."""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 120  # seconds for any one command; a generous bound under ASan on a busy machine


class Daemon:
    def __init__(self, path, *extra):
        self.proc = subprocess.Popen([path, "--port", "0", "--http-port", "0", "--bind",
                                      "127.0.0.1", *extra],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = None
        deadline = time.time() + 30
        self.log = []
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            if "event=listening" in line:
                self.port = int(re.search(r"game_port=(\d+)", line).group(1))
                break
        if self.port is None:
            self.stop()
            sys.exit("daemon did not log event=listening:\n" + "".join(self.log))
        # Keep reading its log, or a chatty daemon would block on a full pipe.
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for line in self.proc.stderr:
            if len(self.log) < 10000:
                self.log.append(line)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    sys.stdout.write("$ " + " ".join(args) + f"\n(exit {r.returncode})\n" + r.stdout + r.stderr)
    return r


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)
    print("ok:", what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def load_json(client, port, *extra):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "report.json")
        r = run([client, "load", "--port", str(port), "--json", path, *extra])
        data = json.load(open(path)) if os.path.exists(path) else None
        return r, data


def case_load_live(a):
    with Daemon(a.daemon) as d:
        r, j = load_json(a.client, d.port, "--clients", "20", "--threads", "2", "--ramp", "0.5s",
                         "--duration", "3s", "--rate", "30", "--drain", "20s", "--check",
                         "--stall-timeout", "60s")
    check(r.returncode == 0, "a short load run passes")
    check(j is not None and j["pass"], "the JSON report was written and says pass")
    check(j["clients_spawned"] == 20 and j["disconnects"] == 0, "all 20 clients spawned, none lost")
    ack = j["latency"]["intent_to_ack"]
    check(ack["count"] > 0, "intent-to-ack latency was measured")
    check(0 < ack["p50_ms"] <= ack["p99_ms"] <= ack["max_ms"] < 60000,
          "intent-to-ack latency is above zero and below the stall timeout (60 s)")
    it = j["intents"]
    check(it["scheduled"] > 20 * 30 and it["acked"] == it["scheduled"] and it["unacked"] == 0,
          "every scheduled intent was acknowledged by a snapshot (%d of %d)"
          % (it["acked"], it["scheduled"]))
    check(j["pings"]["pongs"] > 0 and 0 < j["latency"]["ping_rtt"]["p50_ms"] < 60000,
          "pings were answered with a plausible rtt")
    check(j["snapshots"]["per_client_per_s"] > 1, "snapshots arrived continuously")
    check(j["errors"]["total"] == 0, "no protocol errors")
    check(j["check"]["enabled"] and j["check"]["snapshots"] > 0 and j["check"]["pairs"] > 0,
          "the checker ran on the real stream")
    check(j["cpu"]["user_s"] + j["cpu"]["sys_s"] > 0, "the client's own cpu time is reported")
    check("result: PASS" in r.stdout and "intent-to-ack" in r.stdout, "the text report is printed")


def case_thresholds(a):
    with Daemon(a.daemon) as d:
        common = ["--clients", "5", "--ramp", "0.2", "--duration", "1.5s", "--drain", "10s"]
        r, j = load_json(a.client, d.port, *common, "--max-p99-ms", "0.001")
        check(r.returncode == 1, "a p99 bound of 1 us makes the run exit 1")
        check("FAIL: intent-to-ack p99" in r.stdout and j and not j["pass"],
              "the failure is named in the report and the JSON")
        r, j = load_json(a.client, d.port, *common, "--max-p99-ms", "60000", "--max-errors", "0",
                         "--max-disconnects", "0")
        check(r.returncode == 0 and j["pass"], "generous bounds pass on the same server")


def case_disconnects(a):
    d = Daemon(a.daemon)
    try:
        p = subprocess.Popen([a.client, "load", "--port", str(d.port), "--clients", "10",
                              "--ramp", "0.2", "--duration", "20s", "--max-disconnects", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Wait (without a timing assumption) until every client has joined, then stop the daemon.
        deadline = time.time() + TIMEOUT
        while sum("event=client_hello" in line for line in list(d.log)) < 10:
            check(time.time() < deadline and p.poll() is None, "all 10 clients joined")
            time.sleep(0.05)
        time.sleep(0.5)
        d.stop()  # SIGTERM: the daemon says Goodbye to everyone and closes
        out, err = p.communicate(timeout=TIMEOUT)
        sys.stdout.write(out + err)
    finally:
        d.stop()
    check(p.returncode == 1, "clients dropped by the server make --max-disconnects 0 fail")
    check("FAIL: disconnects" in out, "the verdict names the disconnects")
    check(re.search(r'disconnects: \d+ .*("goodbye|"server_closed)', out) is not None,
          "the reason (Goodbye or closed by the server) is reported")


def case_errors(a):
    with Daemon(a.daemon, "--token", "right") as d:
        r, j = load_json(a.client, d.port, "--clients", "3", "--ramp", "0", "--duration", "1s",
                         "--token", "wrong", "--max-errors", "0")
    check(r.returncode == 1, "a refused token makes --max-errors 0 fail")
    check(j["errors"].get("UNAUTHENTICATED", 0) == 3, "errors are counted by code")
    check("FAIL: errors" in r.stdout, "the verdict names the errors")


def case_ping_live(a):
    with Daemon(a.daemon) as d:
        r = run([a.client, "ping", "--port", str(d.port), "--timeout-ms", "20000"])
        check(r.returncode == 0 and re.search(r"rtt \d+\.\d+ ms", r.stdout), "ping a live daemon")


def case_watch_live(a):
    with Daemon(a.daemon) as d:
        r = run([a.client, "watch", "--port", str(d.port), "--count", "3", "--bodies"])
    check(r.returncode == 0, "watch stops after --count snapshots")
    check(r.stdout.count("\ntick ") + r.stdout.startswith("tick ") == 3, "three snapshot lines")
    check("welcome: client" in r.stdout and "  body " in r.stdout,
          "the world's bodies are listed with --bodies")


def case_watch_goodbye(a):
    # A server that drains says Goodbye: the watch ends cleanly (exit 0) and says so.
    with Daemon(a.daemon) as d:
        p = subprocess.Popen([a.client, "watch", "--port", str(d.port)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            first = p.stdout.readline()
            check(first.startswith("welcome:"), "the watcher is welcomed")
            d.stop()
            out, err = p.communicate(timeout=TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
    sys.stdout.write(first + out + err)
    check(p.returncode == 0, "a drained server's Goodbye ends the watch with exit 0")
    check("goodbye:" in out, "the Goodbye is shown")


def case_ping_dead(a):
    port = free_port()
    r = run([a.client, "ping", "--port", str(port), "--timeout-ms", "5000"])
    check(r.returncode == 1 and "refused" in r.stderr, "ping a dead port exits 1 and says why")


def case_ping_stalled(a):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)  # accepts at the TCP level, never answers
    r = run([a.client, "ping", "--port", str(s.getsockname()[1]), "--timeout-ms", "300"])
    s.close()
    check(r.returncode == 1 and "no pong" in r.stderr, "a silent server times out with exit 1")


def case_usage(a):
    for sub in ("load", "watch", "ping"):
        r = run([a.client, sub, "--help"])
        check(r.returncode == 0 and "usage: collide-client " + sub in r.stdout, sub + " --help")
    r = run([a.client, "load", "--rate", "fast"])
    check(r.returncode == 2 and "--rate" in r.stderr, "a bad number names the flag, exit 2")
    r = run([a.client, "load", "--pattern", "zigzag"])
    check(r.returncode == 2 and "walk" in r.stderr, "a bad choice lists the valid ones")
    r = run([a.client, "load", "--ramp", "10", "--duration", "5"])
    check(r.returncode == 2 and "--ramp" in r.stderr, "an inconsistent ramp is refused")
    r = run([a.client, "watch", "--box", "1,2,3"])
    check(r.returncode == 2 and "--box" in r.stderr, "a malformed box is refused")
    # A hard descriptor limit below what the run needs: refused up front with the way out.
    r = run(["/bin/sh", "-c", 'ulimit -Sn 64; ulimit -Hn 64; exec "$0" load --clients 5000',
             a.client])
    check(r.returncode == 2 and "file descriptors" in r.stderr and "hard limit is 64" in r.stderr,
          "a too-low descriptor limit is explained, not hit mid-run")
    r = run([a.client, "frobnicate"])
    check(r.returncode == 2 and "unknown command" in r.stderr, "an unknown command")
    r = run([a.client, "load", "--port", str(free_port()), "--clients", "3", "--ramp", "0",
             "--duration", "5"])
    check(r.returncode == 1 and "no client reached the server" in r.stdout
          and "ECONNREFUSED" in r.stdout, "all clients refused: exit 1 with the reason")


def double_run(a, mode, *command):
    p = subprocess.Popen([a.double, "--mode", mode], stdout=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline().strip().split("=")[1])
        if not command:
            command = ("load", "--clients", "1", "--ramp", "0", "--duration", "2s", "--check",
                       "--drain", "20s", "--stall-timeout", "60s")
        r = run([a.client, *command, "--port", str(port)])
    finally:
        p.wait(timeout=TIMEOUT)
    return r


def case_check_double(a):
    r = double_run(a, "bad")
    check(r.returncode == 1, "--check fails a run whose snapshots break the invariants")
    check(re.search(r"violation overlap_moving: body [23] vs body [23] at tick \d+", r.stdout),
          "the moving-moving overlap is shown with both ids and the tick")
    check(re.search(r"violation overlap_static: body 4 vs body 100 at tick \d+", r.stdout),
          "the body sunk into a static is shown")
    check(re.search(r"violation tunnel: body 1 vs body 100 at tick \d+", r.stdout),
          "the jump through the static is shown")
    r = double_run(a, "good")
    check(r.returncode == 0 and "overlap_static=0 overlap_moving=0 tunnel=0" in r.stdout,
          "the same scene without the faults passes")
    r = double_run(a, "bad", "watch", "--check", "--count", "5")
    check(r.returncode == 1 and "VIOLATION tunnel: body 1 vs body 100" in r.stdout
          and "VIOLATION overlap_moving" in r.stdout, "watch --check reports the same faults")
    r = double_run(a, "good", "watch", "--check", "--count", "5")
    check(r.returncode == 0 and "VIOLATION" not in r.stdout, "watch --check passes a good stream")


def case_oversize(a):
    r = double_run(a, "oversize", "ping", "--timeout-ms", "20000")
    check(r.returncode == 1 and "frame_too_large" in r.stderr,
          "ping refuses a frame declared larger than --max-frame, from its prefix")
    r = double_run(a, "oversize", "load", "--clients", "1", "--ramp", "0", "--duration", "1s",
                   "--max-disconnects", "0")
    check(r.returncode == 1 and '"frame_too_large"=1' in r.stdout,
          "load reports the refused frame as the disconnect reason")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--client", required=True)
    ap.add_argument("--daemon")
    ap.add_argument("--double")
    a = ap.parse_args()
    globals()["case_" + a.case](a)
    print("PASS", a.case)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ctest driver: starts the real collided on ephemeral ports, runs a Python example client against
it, then stops the daemon with SIGTERM and checks that it drained (exit 0, event=shutdown).
Every wait is bounded; the daemon is killed if anything goes wrong.

--example runs the TCP example (collide_example.py), twice: float, then quantized snapshots.
With --tickets the daemon takes only tickets (--ticket-key, --ticket-required on) and the example
mints its own (its mint_ticket, the standard library's hmac) and plays the float session with it.
--udp-example runs the UDP example (collide_udp.py) on a free UDP port, with a TCP float watcher
of the same area beside it: the example's decoded position of its body at rest must be the
watcher's float position at the same tick within half a position quantum, which holds only if
every delta against every baseline was applied right."""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

# Lines the UDP example prints when each step of its session went as documented.
UDP_EXAMPLE_STEPS = ["welcome:", "spawned:", "events: sensor", "reconciled:", "at rest:", "pong:",
                     "despawned:", "snapshots:", "ok: disconnected cleanly"]


# The daemon's ticket key under --tickets (a test's key: 32 bytes, RFC 7518's least for HS256).
TICKET_KEY = "example-ticket-key-0123456789abcdef"


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def varint(value):
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


class FloatWatcher(threading.Thread):
    """A TCP client on float snapshots watching a box around the world's centre; keeps, for
    every body, each position it was sent with its tick: history[id] = [(tick, x, y), ...]."""

    def __init__(self, pb, port):
        super().__init__(daemon=True)
        self.pb = pb
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.history = {}
        self.last_tick = 0
        self.ready = threading.Event()  # set once the SetView is sent
        self.stop = threading.Event()
        self.error = None

    def send(self, **msg):
        body = self.pb.ClientMessage(**msg).SerializeToString()
        self.sock.sendall(varint(len(body)) + body)

    def frames(self):
        """Yields each ServerMessage of the varint-length-delimited stream."""
        buf = bytearray()
        while not self.stop.is_set():
            chunk = self.sock.recv(65536)
            if not chunk:
                return
            buf += chunk
            while True:
                length, shift, i = 0, 0, 0
                while i < len(buf):
                    length |= (buf[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                    if not buf[i - 1] & 0x80:
                        break
                else:
                    break  # the length prefix is not all here yet
                if len(buf) < i + length:
                    break
                msg = self.pb.ServerMessage()
                msg.ParseFromString(bytes(buf[i:i + length]))
                del buf[:i + length]
                yield msg

    def run(self):
        try:
            pb = self.pb
            self.send(hello=pb.Hello(protocol_version=1, name="float-watcher"))
            for msg in self.frames():
                if msg.WhichOneof("msg") == "welcome":
                    w = msg.welcome
                    centre = pb.Vec2(x=(w.world_min.x + w.world_max.x) / 2,
                                     y=(w.world_min.y + w.world_max.y) / 2)
                    self.send(set_view=pb.SetView(center=centre,
                                                  half_extents=pb.Vec2(x=50, y=50)))
                    self.ready.set()
                elif msg.WhichOneof("msg") == "snapshot":
                    snap = msg.snapshot
                    for b in snap.bodies:
                        self.history.setdefault(b.id, []).append(
                            (snap.tick, b.position.x, b.position.y))
                    self.last_tick = snap.tick
        except OSError as e:
            if not self.stop.is_set():
                self.error = e

    def position_at(self, body_id, tick):
        """The body's float position after the snapshot of that tick (the newest one sent at or
        before it: a float snapshot carries a body only when it changed)."""
        known = [(x, y) for t, x, y in self.history.get(body_id, []) if t <= tick]
        return known[-1] if known else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collided", required=True)
    ap.add_argument("--example", help="the TCP example, collide_example.py")
    ap.add_argument("--udp-example", help="the UDP example, collide_udp.py")
    ap.add_argument("--gen", required=True, help="directory holding the generated collide_pb2.py")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tickets", action="store_true",
                    help="the daemon takes only tickets; the example mints its own")
    args = ap.parse_args()
    ticket_args = ["--ticket-key", TICKET_KEY, "--ticket-required", "on"] if args.tickets else []

    udp_port = free_udp_port() if args.udp_example else 0  # 0: the transport off
    daemon = subprocess.Popen([args.collided, "--port", "0", "--udp-port", str(udp_port),
                               "--http-port", "0", "--ws-port", "0", "--bind", "127.0.0.1",
                               *ticket_args],
                              stderr=subprocess.PIPE, text=True,
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

        if args.example:
            why = run_tcp_example(args, port)
            if why:
                return fail(why)
        if args.udp_example:
            why = run_udp_example(args, port, udp_port)
            if why:
                return fail(why)

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


def run_tcp_example(args, port):
    """The TCP example, then the same session on quantized snapshots at 20 Hz (protocol 1.1): its
    decoder, collide_quantized.py, against the daemon. Returns why it failed, or None. With
    --tickets, the float session alone, on a ticket the example mints from the daemon's key."""
    if args.tickets:
        example = subprocess.run([args.python, args.example, "--gen", args.gen,
                                  "--host", "127.0.0.1", "--port", str(port),
                                  "--ticket-key", TICKET_KEY], timeout=120)
        if example.returncode != 0:
            return "the example client exited %d with its own ticket" % example.returncode
        return None
    example = subprocess.run([args.python, args.example, "--gen", args.gen,
                              "--host", "127.0.0.1", "--port", str(port)], timeout=120)
    if example.returncode != 0:
        return "the example client exited %d" % example.returncode
    example = subprocess.run([args.python, args.example, "--gen", args.gen,
                              "--host", "127.0.0.1", "--port", str(port), "--quantized",
                              "--snapshot-rate", "20"], timeout=120)
    if example.returncode != 0:
        return "the example client exited %d with --quantized" % example.returncode
    return None


def run_udp_example(args, port, udp_port):
    """The UDP example beside a TCP float watcher. Returns why it failed, or None."""
    sys.path.insert(0, args.gen)
    import collide_pb2 as pb
    watcher = FloatWatcher(pb, port)
    watcher.start()
    if not watcher.ready.wait(10):
        return "the float watcher got no Welcome within 10 s"
    example = subprocess.run([args.python, args.udp_example, "--gen", args.gen,
                              "--host", "127.0.0.1", "--port", str(udp_port)],
                             stdout=subprocess.PIPE, text=True, timeout=120)
    sys.stdout.write(example.stdout)
    if example.returncode != 0:
        return "the UDP example exited %d" % example.returncode
    for step in UDP_EXAMPLE_STEPS:
        if "collide_udp: " + step not in example.stdout:
            return "the UDP example did not print %r" % step
    quantum = float(re.search(r"position quantum (\S+),", example.stdout).group(1))
    rest = re.search(r"at rest: body (\d+) at \((\S+), (\S+)\) tick (\d+)", example.stdout)
    body, x, y, tick = int(rest.group(1)), float(rest.group(2)), float(rest.group(3)), \
        int(rest.group(4))
    deadline = time.monotonic() + 10
    while watcher.last_tick < tick and watcher.error is None and time.monotonic() < deadline:
        time.sleep(0.05)
    watcher.stop.set()
    watcher.sock.close()
    if watcher.error is not None:
        return "the float watcher failed: %s" % watcher.error
    seen = watcher.position_at(body, tick)
    if seen is None:
        return "the float watcher never saw body %d" % body
    # The printed position has 6 decimals: allow for that rounding on top of half a quantum.
    if abs(seen[0] - x) > quantum / 2 + 1e-6 or abs(seen[1] - y) > quantum / 2 + 1e-6:
        return ("body %d at tick %d: UDP decoded (%.6f, %.6f), float watcher (%.6f, %.6f): "
                "more than half a quantum (%g) apart" % (body, tick, x, y, seen[0], seen[1],
                                                         quantum))
    print("run_example: body %d at tick %d: decoded (%.6f, %.6f), float (%.6f, %.6f), within "
          "half a quantum" % (body, tick, x, y, seen[0], seen[1]))
    return None


if __name__ == "__main__":
    sys.exit(main())

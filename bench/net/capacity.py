#!/usr/bin/env python3
"""How many idle players collided can serve at its tick rate on this machine (issue 12, finding 3):
the method behind the default of --max-clients (docs/operations.md, docs/perf/net.md).

For each K, a fresh collided is started; K idle clients connect and say Hello (they read what they
are sent, in batches, as a remote client's kernel would take it); one well-behaved client moves a
body of its own back and forth (so each of its snapshots carries a change, and none is an empty
one that --empty-snapshot-ms would hold back), reads continuously and counts the snapshots it gets
per second over --seconds. Each welcomed client
costs the daemon one write() per tick even when its snapshot is empty (PROTOCOL.md rule 6), so the
rate the well-behaved client sees falls once K writes no longer fit in a tick.

The capacity is the largest K at which the well-behaved client still gets >= 0.95 x the tick rate;
a default is that, rounded down with margin. Run it on a quiet machine: anything else on the cores
lowers the figure.

Usage: bench/net/capacity.py --collided build/release/server/net/collided \\
           --pb-dir build/release/tests/pb [--ks 500,1000,1500,2000,2500,3000] [--seconds 5]
           [--strace /tmp/collided.strace] [--daemon-args '--empty-snapshot-ms 1000']
Needs a python3 with google.protobuf (Debian python3-protobuf)."""
import argparse
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick  # utime, stime


def metrics(port):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    text = opener.open("http://127.0.0.1:%d/metrics" % port, timeout=30).read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


class Counter(threading.Thread):
    """The well-behaved client: reads all the time, counts whole Snapshot frames."""

    def __init__(self, sock, pb):
        super().__init__(daemon=True)
        self.sock, self.pb = sock, pb
        self.snapshots = 0
        self.stop = False
        self.body, self.seq, self.next_turn = None, 0, 0.0

    def run(self):
        buf = bytearray()
        self.sock.settimeout(0.5)
        while not self.stop:
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            if not data:
                return
            buf += data
            self.steer()
            while True:
                n = shift = 0
                for i in range(min(len(buf), 5)):
                    n |= (buf[i] & 0x7F) << shift
                    shift += 7
                    if not buf[i] & 0x80:
                        break
                else:
                    break
                if len(buf) < i + 1 + n:
                    break
                m = self.pb.ServerMessage()
                m.ParseFromString(bytes(buf[i + 1:i + 1 + n]))
                del buf[:i + 1 + n]
                if m.WhichOneof("msg") == "snapshot":
                    self.snapshots += 1
                elif m.WhichOneof("msg") == "spawned":
                    self.body = m.spawned.body_id

    def steer(self):
        """Its body goes back and forth at 2 units/s, turning every second."""
        now = time.monotonic()
        if self.body is None or now < self.next_turn:
            return
        self.next_turn = now + 1.0
        self.seq += 1
        move = self.pb.ClientMessage(request_id=0)
        move.move.body_id = self.body
        move.move.input_seq = self.seq
        move.move.velocity.x = 2.0 if self.seq % 2 else -2.0
        frame = move.SerializeToString()
        self.sock.sendall(varint(len(frame)) + frame)


def drain(socks):
    for s in socks:
        try:
            while s.recv(1 << 16):
                pass
        except (BlockingIOError, ConnectionError):
            pass


def run_one(opts, pb, k):
    http_port = 20000 + (os.getpid() + k) % 20000
    cmd = [opts.collided, "--bind", "127.0.0.1", "--port", "0", "--udp-port", "0", "--ws-port", "0", "--http-port", str(http_port),
           "--log-level", "warn", "--max-clients", str(k + 100), "--overload-window-ms", "0",
           # K connections from one host in a burst: the pending caps are for attackers and NATs,
           # not for a load generator (docs/operations.md, admission)
           "--max-pending", str(k + 100), "--max-pending-per-address", str(k + 100),
           "--tick-rate", str(opts.tick_rate)] + opts.daemon_args.split()
    env = {k_: v for k_, v in os.environ.items() if not k_.startswith("COLLIDE_")}
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    port = None
    for line in p.stderr:
        m = re.search(r"game_port=(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    hello = pb.ClientMessage(request_id=1, hello=pb.Hello(protocol_version=1, name="idle"))
    frame = hello.SerializeToString()
    frame = varint(len(frame)) + frame
    idle = []
    try:
        for _ in range(k):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(frame)
            s.setblocking(False)
            idle.append(s)
            if len(idle) % 200 == 0:
                drain(idle)
        good = socket.create_connection(("127.0.0.1", port))
        good.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        good.sendall(frame)
        spawn = pb.ClientMessage(request_id=2)
        spawn.spawn.kind = pb.BODY_KIND_MOVING
        spawn.spawn.shape.circle.radius = 0.5
        spawn = spawn.SerializeToString()
        good.sendall(varint(len(spawn)) + spawn)
        counter = Counter(good, pb)
        counter.start()
        t_end = time.monotonic() + opts.warmup
        while time.monotonic() < t_end:
            drain(idle)
            time.sleep(0.25)
        tracer = None
        if opts.strace:
            tracer = subprocess.Popen(["strace", "-c", "-f", "-p", str(p.pid), "-o",
                                       "%s.%d" % (opts.strace, k)], stderr=subprocess.DEVNULL)
            time.sleep(0.5)  # attached
        m0, c0, n0, t0 = metrics(http_port), cpu_seconds(p.pid), counter.snapshots, time.monotonic()
        t_end = t0 + opts.seconds
        while time.monotonic() < t_end:
            drain(idle)
            time.sleep(0.25)
        m1, c1, n1, t1 = metrics(http_port), cpu_seconds(p.pid), counter.snapshots, time.monotonic()
        if tracer:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(30)
        counter.stop = True
        dt = t1 - t0

        def rate(name):
            return (m1.get(name, 0) - m0.get(name, 0)) / dt

        lag_n = m1["collide_tick_lag_seconds_count"] - m0["collide_tick_lag_seconds_count"]
        lag_mean = ((m1["collide_tick_lag_seconds_sum"] - m0["collide_tick_lag_seconds_sum"])
                    / lag_n if lag_n else 0)
        return {
            "k": k,
            "snap_per_s": (n1 - n0) / dt,
            "clients": m1.get("collide_clients", 0),
            "cut": {name.split('"')[1]: v for name, v in m1.items()
                    if name.startswith("collide_disconnects_total{") and v > 0},
            "sent_per_s": rate("collide_snapshots_sent_total"),
            "coalesced_per_s": rate("collide_steps_coalesced_total"),
            "skipped_per_s": rate("collide_ticks_skipped_total"),
            "lag_mean_ms": lag_mean * 1000,
            "cpu_user": (c1[0] - c0[0]) / dt,
            "cpu_sys": (c1[1] - c0[1]) / dt,
        }
    finally:
        for s in idle:
            s.close()
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collided", required=True)
    ap.add_argument("--pb-dir", required=True)
    ap.add_argument("--ks", default="500,1000,1500,2000,2500,3000")
    ap.add_argument("--seconds", type=float, default=5.0, help="measured time per K")
    ap.add_argument("--warmup", type=float, default=2.0, help="time before measuring")
    ap.add_argument("--tick-rate", type=float, default=60.0)
    ap.add_argument("--daemon-args", default="", help="more flags for collided, e.g. "
                    "'--empty-snapshot-ms 1000' (the heartbeat proposal, docs/protocol.md)")
    ap.add_argument("--strace", default="", help="FILE: attach strace -c -f to collided for "
                    "the measured time and write its syscall summary to FILE.K")
    opts = ap.parse_args()
    sys.path.insert(0, opts.pb_dir)
    import collide_pb2 as pb
    ks = [int(x) for x in opts.ks.split(",")]
    need = max(ks) + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    print("tick rate %g Hz; threshold 0.95 x = %.1f snapshots/s; %.0f s measured per K"
          % (opts.tick_rate, 0.95 * opts.tick_rate, opts.seconds))
    # cpu us/snap: the daemon's CPU time per snapshot written, the figure least moved by other
    # load on the machine (which takes CPU away and lowers snap/s).
    print("%6s %9s %8s %10s %12s %10s %8s %6s %6s %13s" % (
        "K", "snap/s", "clients", "sent/s", "coalesced/s", "skipped/s", "lag ms", "usr", "sys",
        "cpu us/snap"))
    best = 0
    for k in ks:
        r = run_one(opts, pb, k)
        ok = r["snap_per_s"] >= 0.95 * opts.tick_rate
        if ok:
            best = max(best, k)
        per_snap = ((r["cpu_user"] + r["cpu_sys"]) / r["sent_per_s"] * 1e6
                    if r["sent_per_s"] else 0)
        print("%6d %9.1f %8d %10.0f %12.1f %10.1f %8.2f %5.0f%% %5.0f%% %13.2f %s" % (
            k, r["snap_per_s"], r["clients"], r["sent_per_s"], r["coalesced_per_s"],
            r["skipped_per_s"], r["lag_mean_ms"], 100 * r["cpu_user"], 100 * r["cpu_sys"],
            per_snap, "ok" if ok else "BELOW"), flush=True)
        if r["cut"]:
            print("        closed during the run, by reason: %s" % r["cut"], flush=True)
    print("largest K at >= 0.95 x the tick rate: %d" % best)


if __name__ == "__main__":
    main()

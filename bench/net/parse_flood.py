#!/usr/bin/env python3
"""Parse-cost flood over the wire (issue 12 finding 1): starts collided, opens ATTACKERS
connections that say Hello and then send the worst frame bench_parse found (default: a SetView
repeated 20,000 times, 40 KB, merged by protobuf-c) while one well-behaved client counts the
snapshots it receives per second. Reports snapshots/s (target >= 0.9x the tick rate), the daemon's
CPU share and what the attackers got back.

Modes:
  paced  each attacker sends at --rate-limit-bytes (65536 B/s by default): every frame is parsed
  flood  each attacker sends 180 frames/s, under the message rate limit as in the issue: the byte
         bucket refuses most frames (RATE_LIMITED), the abuse rule cuts the attacker after 5 s of
         drops and it reconnects
  preauth  the daemon has --token; each attacker loops: connect, send the worst frame without a
         Hello, close (issue 12: 578 connections/s took 96% of the daemon's CPU)

Usage: bench/net/parse_flood.py COLLIDED PB_DIR [paced|flood] [seconds=10] [attackers=5]
       [kind=setview|polygon|unknown|shapes] [extra collided flags...]
PB_DIR holds collide_pb2.py (e.g. build/release/tests/pb). Loopback only."""
import os
import select
import socket
import subprocess
import sys
import threading
import time

collided, pb_dir = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "paced"
seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
attackers = int(sys.argv[5]) if len(sys.argv) > 5 else 5
kind = sys.argv[6] if len(sys.argv) > 6 else "setview"
extra = sys.argv[7:]
sys.path.insert(0, pb_dir)
import collide_pb2 as pb  # noqa: E402


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def frame(body):
    return varint(len(body)) + body


def field_len(num, payload):
    return varint((num << 3) | 2) + varint(len(payload)) + payload


def worst_frame(kind):
    rid = b"\x08\x07"
    if kind == "setview":    # ClientMessage{set_view{} x 20000}
        return frame(rid + field_len(15, b"") * 20000)
    if kind == "polygon":    # SpawnBody{MOVING, shape{polygon{vertices{} x 21000}}}
        poly = field_len(1, b"") * 21000
        return frame(rid + field_len(11, b"\x08\x02" + field_len(2, field_len(2, poly))))
    if kind == "unknown":    # Ping{client_time_us 1, unknown varint x 20000}
        return frame(rid + field_len(14, b"\x08\x01" + b"\x78\x00" * 20000))
    if kind == "shapes":     # SpawnBody{MOVING, shape{} x 20000}
        return frame(rid + field_len(11, b"\x08\x02" + field_len(2, b"") * 20000))
    raise SystemExit("unknown kind " + kind)


TOKEN = "bench-token"


def hello_frame(name):
    m = pb.ClientMessage(request_id=1)
    m.hello.protocol_version = 1
    m.hello.name = name
    if mode == "preauth":
        m.hello.token = TOKEN
    return frame(m.SerializeToString())


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


p = subprocess.Popen([collided, "--bind", "127.0.0.1", "--port", "0", "--udp-port", "0", "--ws-port", "0", "--http-port", "0",
                      "--log-level", "warn"] + (["--token", TOKEN] if mode == "preauth" else [])
                     + extra,
                     stderr=subprocess.PIPE, text=True)
port = None
while port is None:  # the event=listening line names the port
    line = p.stderr.readline()
    if not line:
        raise SystemExit("collided exited")
    if "game_port=" in line:
        port = int(line.split("game_port=")[1].split()[0])
threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()

stop = threading.Event()
bad = worst_frame(kind)
stats = {"sent": 0, "limited": 0, "invalid": 0, "bad_request": 0, "other": 0, "reconnects": 0}
lock = threading.Lock()


def read_frames(buf):
    out = []
    while True:
        n, shift, i = 0, 0, 0
        while i < len(buf):
            b = buf[i]
            n |= (b & 0x7F) << shift
            shift += 7
            i += 1
            if not b & 0x80:
                break
        else:
            return out, buf
        if len(buf) - i < n:
            return out, buf
        out.append(pb.ServerMessage.FromString(bytes(buf[i:i + n])))
        buf = buf[i + n:]


def preauth_attacker(idx):
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(bad)
            s.settimeout(1.0)
            while s.recv(1 << 16):  # the refusal, then the close
                pass
        except OSError:
            pass
        s.close()
        with lock:
            stats["sent"] += 1
            stats["reconnects"] += 1


def attacker(idx):
    rate = len(bad) / 65536.0 if mode == "paced" else 1.0 / 180.0
    while not stop.is_set():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(hello_frame("attacker%d" % idx))
        s.setblocking(False)
        buf = bytearray()
        next_t = time.monotonic()
        alive = True
        while alive and not stop.is_set():
            now = time.monotonic()
            if now >= next_t:
                try:
                    s.setblocking(True)
                    s.settimeout(1.0)
                    s.sendall(bad)
                    s.setblocking(False)
                    with lock:
                        stats["sent"] += 1
                except OSError:
                    alive = False
                    break
                next_t += rate
                if next_t < now - 1.0:
                    next_t = now
            r, _, _ = select.select([s], [], [], max(0.0, min(0.05, next_t - time.monotonic())))
            if r:
                try:
                    data = s.recv(1 << 16)
                except OSError:
                    data = b""
                if not data:
                    alive = False
                    break
                buf += data
                msgs, buf = read_frames(buf)
                with lock:
                    for m in msgs:
                        if m.WhichOneof("msg") == "error":
                            c = m.error.code
                            if c == pb.ERROR_CODE_RATE_LIMITED:
                                stats["limited"] += 1
                            elif c == pb.ERROR_CODE_INVALID_SHAPE:
                                stats["invalid"] += 1
                            elif c == pb.ERROR_CODE_BAD_REQUEST:
                                stats["bad_request"] += 1
                            else:
                                stats["other"] += 1
        s.close()
        if not stop.is_set():
            with lock:
                stats["reconnects"] += 1


good = socket.create_connection(("127.0.0.1", port))
good.sendall(hello_frame("good"))
gbuf = bytearray()
tick_rate = None
for t in [threading.Thread(target=preauth_attacker if mode == "preauth" else attacker, args=(i,),
                           daemon=True) for i in range(attackers)]:
    t.start()
time.sleep(1.0)  # let the attack reach its steady state
good.settimeout(0.0)
while True:  # what queued meanwhile is not counted: only the Welcome is kept
    try:
        data = good.recv(1 << 20)
    except (BlockingIOError, socket.timeout):
        break
    gbuf += data
    msgs, gbuf = read_frames(gbuf)
    for m in msgs:
        if m.WhichOneof("msg") == "welcome":
            tick_rate = m.welcome.tick_rate_hz
cpu0, t0 = cpu_seconds(p.pid), time.monotonic()
snaps = 0
good.settimeout(0.2)
while time.monotonic() - t0 < seconds:
    try:
        data = good.recv(1 << 16)
    except socket.timeout:
        continue
    if not data:
        break
    gbuf += data
    msgs, gbuf = read_frames(gbuf)
    for m in msgs:
        k = m.WhichOneof("msg")
        if k == "welcome":
            tick_rate = m.welcome.tick_rate_hz
        elif k == "snapshot":
            snaps += 1
elapsed = time.monotonic() - t0
cpu = cpu_seconds(p.pid) - cpu0
stop.set()
time.sleep(0.3)
p.terminate()
p.wait(5)
rate = snaps / elapsed
print('{"mode":"%s","kind":"%s","frame_bytes":%d,"attackers":%d,"seconds":%.1f,'
      '"snapshots_per_s":%.1f,"tick_rate_hz":%s,"ratio":%.3f,"daemon_cpu_pct":%.1f,'
      '"attack_frames_sent":%d,"rate_limited":%d,"invalid_shape":%d,"bad_request":%d,'
      '"other_errors":%d,"attacker_reconnects":%d}' % (
          mode, kind, len(bad), attackers, elapsed, rate, tick_rate, rate / (tick_rate or 60),
          100.0 * cpu / elapsed, stats["sent"], stats["limited"], stats["invalid"],
          stats["bad_request"], stats["other"], stats["reconnects"]))

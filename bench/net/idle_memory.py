#!/usr/bin/env python3
"""Memory per idle connection of collided: starts the daemon, opens N connections that say Hello,
reads everything they were sent, and compares the daemon's VmRSS before and after.

Usage: bench/net/idle_memory.py COLLIDED_BINARY PB_DIR [N=2000] [MORE COLLIDED FLAGS...]
e.g. bench/net/idle_memory.py build/release/server/net/collided build/release/tests/pb 10000 \
         --empty-snapshot-ms 1000
PB_DIR holds collide_pb2.py (protoc --python_out=PB_DIR -Iproto proto/collide.proto), e.g.
build/net-rel/tests/integration/pb. Needs a python3 with google.protobuf (Debian python3-protobuf)."""
import re
import resource
import socket
import subprocess
import sys
import threading
import time

collided, pb_dir = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
more = sys.argv[4:]
sys.path.insert(0, pb_dir)
import collide_pb2 as pb  # noqa: E402

resource.setrlimit(resource.RLIMIT_NOFILE, (n + 256, n + 256))


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return 0


p = subprocess.Popen([collided, "--port", "0", "--ws-port", "0", "--http-port", "0", "--log-level", "warn",
                      "--max-clients", str(n + 100), "--bind", "127.0.0.1",
                      # N connections from one host in a burst: the pending caps are for
                      # attackers and NATs, not for a load generator (docs/operations.md)
                      "--max-pending", str(n + 100), "--max-pending-per-address", str(n + 100)]
                     + more,
                     stderr=subprocess.PIPE, text=True)
port = None
for line in p.stderr:
    m = re.search(r"game_port=(\d+)", line)
    if m:
        port = int(m.group(1))
        break
# The daemon's log is read to the end: a full pipe would stop the daemon at its next log line.
threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
time.sleep(0.5)
before = rss_kb(p.pid)
hello = pb.ClientMessage(request_id=1, hello=pb.Hello(protocol_version=1)).SerializeToString()
socks = []


def drain():
    for s in socks:
        try:
            while s.recv(65536):
                pass
        except (BlockingIOError, ConnectionError):
            pass


for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(varint(len(hello)) + hello)
    s.setblocking(False)
    socks.append(s)
    if len(socks) % 200 == 0:
        drain()  # as a remote client's kernel would take what it is sent
for _ in range(8):
    time.sleep(0.25)
    drain()
time.sleep(1)
drain()
after = rss_kb(p.pid)
print("idle clients %d: RSS %d kB -> %d kB, %.0f bytes per connection" %
      (n, before, after, (after - before) * 1024.0 / n))
for s in socks:
    s.close()
p.terminate()
p.wait()
sys.exit(0 if p.returncode == 0 else 1)

"""Shared harness for collide's black-box integration tests.

The tests are written from the contract (shared/design/PROTOCOL.md, the interfaces note) the way an
independent client would check it: they start the real `collided` as a subprocess on ephemeral
ports, speak protocol v1 over loopback with Python's protobuf, and never look inside the daemon.

Standard library only, besides protobuf. Every wait has a timeout; bounds are generous because CI
runs on 2 shared cores and also runs the ASan+UBSan daemon.
"""

import argparse
import base64
import errno
import hashlib
import json
import math
import os
import re
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

pb = None  # collide_pb2, imported by main() from --pb-dir

# Generous bounds: an ASan daemon on a loaded 2-core machine is slow to start and to drain.
START_TIMEOUT = 30.0
REPLY_TIMEOUT = 10.0
EXIT_TIMEOUT = 20.0

PROTOCOL_VERSION = 1


class TestFailure(Exception):
    """A check failed; the message says what the contract wanted and what was observed."""


class ConnectionClosed(Exception):
    """The daemon closed the connection (EOF or reset)."""


def ipv6_loopback_available():
    """Whether this machine can bind ::1 (a container or kernel without IPv6 cannot)."""
    if not socket.has_ipv6:
        return False
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def err_name(code):
    return pb.ErrorCode.Name(code) if code in pb.ErrorCode.values() else "UNKNOWN(%d)" % code


def code_of(name):
    return pb.ErrorCode.Value("ERROR_CODE_" + name)


# ---------------------------------------------------------------------------------------------
# Varint framing (PROTOCOL.md "Transport and framing")


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def frame(body):
    return varint(len(body)) + body


def encode(msg):
    return frame(msg.SerializeToString())


def unknown_field_padding(n_bytes):
    """Bytes of an unknown length-delimited field (number 100) totalling exactly n_bytes (>= 4),
    which a conforming protobuf parser skips: used to build frames of an exact size."""
    tag = varint((100 << 3) | 2)
    for prefix_len in range(1, 6):
        payload = n_bytes - len(tag) - prefix_len
        if payload >= 0 and len(varint(payload)) == prefix_len:
            return tag + varint(payload) + b"\0" * payload
    raise ValueError("cannot pad to %d" % n_bytes)


# ---------------------------------------------------------------------------------------------
# Messages


def vec(x, y):
    return pb.Vec2(x=x, y=y)


def box(hx, hy):
    s = pb.Shape()
    s.box.half_extents.x = hx
    s.box.half_extents.y = hy
    return s


def circle(r):
    s = pb.Shape()
    s.circle.radius = r
    return s


def polygon(points):
    s = pb.Shape()
    s.polygon.SetInParent()
    for x, y in points:
        v = s.polygon.vertices.add()
        v.x = x
        v.y = y
    return s


def regular_polygon(n, r, clockwise=False):
    pts = [(r * math.cos(2 * math.pi * i / n), r * math.sin(2 * math.pi * i / n)) for i in range(n)]
    return polygon(list(reversed(pts)) if clockwise else pts)


def msg_hello(rid=1, version=PROTOCOL_VERSION, name="itest", token=None, room=None):
    m = pb.ClientMessage(request_id=rid)
    m.hello.protocol_version = version
    m.hello.name = name
    if token is not None:
        m.hello.token = token
    if room is not None:
        m.hello.room = room
    return m


def msg_create_room(rid, name, world="", max_clients=0):
    m = pb.ClientMessage(request_id=rid)
    m.create_room.name = name
    m.create_room.world = world
    m.create_room.max_clients = max_clients
    return m


def msg_close_room(rid, name, reason=""):
    m = pb.ClientMessage(request_id=rid)
    m.close_room.name = name
    m.close_room.reason = reason
    return m


def msg_list_rooms(rid):
    m = pb.ClientMessage(request_id=rid)
    m.list_rooms.SetInParent()
    return m


def msg_spawn(rid, shape, x, y, kind=None, angle=None, character=None, one_way=False):
    """character: None (a plain body) or a dict of CharacterOptions fields ({} is a character
    with every default); one_way: SpawnBody.one_way (1.2)."""
    m = pb.ClientMessage(request_id=rid)
    m.spawn.kind = pb.BODY_KIND_MOVING if kind is None else kind
    m.spawn.shape.CopyFrom(shape)
    m.spawn.position.x = x
    m.spawn.position.y = y
    if angle is not None:
        m.spawn.angle = angle
    if character is not None:
        m.spawn.character.SetInParent()  # present, even empty: the body is a character
        for k, v in character.items():
            setattr(m.spawn.character, k, v)
    if one_way:
        m.spawn.one_way = True
    return m


def msg_move(rid, body_id, seq, vx, vy, w=0.0, jump=False):
    m = pb.ClientMessage(request_id=rid)
    m.move.body_id = body_id
    m.move.input_seq = seq
    m.move.velocity.x = vx
    m.move.velocity.y = vy
    m.move.angular_velocity = w
    if jump:
        m.move.jump = True
    return m


def msg_despawn(rid, body_id):
    m = pb.ClientMessage(request_id=rid)
    m.despawn.body_id = body_id
    return m


def msg_ping(rid, client_time_us=None):
    m = pb.ClientMessage(request_id=rid)
    m.ping.client_time_us = int(time.time() * 1e6) if client_time_us is None else client_time_us
    return m


def msg_set_view(rid, cx, cy, hx, hy):
    m = pb.ClientMessage(request_id=rid)
    m.set_view.center.x = cx
    m.set_view.center.y = cy
    m.set_view.half_extents.x = hx
    m.set_view.half_extents.y = hy
    return m


def msg_spawn_empty_vertices(rid, n):
    """SpawnBody whose polygon has n empty Vec2s: 2 bytes of frame per vertex, the cheapest way to
    make a parser build many structs (issue 12: 21,000 of them in a 42 KB frame)."""
    m = pb.ClientMessage(request_id=rid)
    m.spawn.kind = pb.BODY_KIND_MOVING
    m.spawn.shape.polygon.SetInParent()
    vs = m.spawn.shape.polygon.vertices
    for _ in range(n):
        vs.add()
    return m


def as_sent(msg):
    """msg after a trip through the wire (float32 rounding), for equality with what comes back."""
    return type(msg).FromString(msg.SerializeToString())


def kind_of(sm):
    return sm.WhichOneof("msg")


def describe(sm):
    k = kind_of(sm)
    if k == "error":
        return "Error{%s, fatal=%s, rid=%d, %r}" % (
            err_name(sm.error.code), sm.error.fatal, sm.request_id, sm.error.message)
    if k == "snapshot":
        return "Snapshot{tick=%d, %d bodies, %d removed}" % (
            sm.snapshot.tick, len(sm.snapshot.bodies), len(sm.snapshot.removed))
    return "%s{rid=%d}" % (k, sm.request_id)


def finite(*xs):
    return all(math.isfinite(x) for x in xs)


# ---------------------------------------------------------------------------------------------
# The daemon


class ReconnectingSockets:
    """Sockets that connect and then hold their slot, reconnecting as soon as the server cuts them:
    the slot-holding attacks of issue 12 (silent game sockets, slow HTTP requests). `per_source`
    from each source address in `sources` (None: the kernel's choice); with `half_sent`, every
    other one sends those bytes first and nothing more. Run the selector in the caller's thread
    with step(seconds), or in a thread with start() ... stop(); close() releases the sockets."""

    def __init__(self, port, sources, per_source, host="127.0.0.1", half_sent=None):
        self.port, self.host, self.half_sent = port, host, half_sent
        self.sel = selectors.DefaultSelector()
        self.cuts = 0
        self.stopping = threading.Event()
        self.thread = None
        n = 0
        for src in sources:
            for _ in range(per_source):
                self._open((src, n))
                n += 1

    def _open(self, key):
        src, i = key
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if src:
            s.bind((src, 0))
        s.setblocking(False)
        err = s.connect_ex((self.host, self.port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            return
        if self.half_sent and i % 2:
            try:
                s.send(self.half_sent)
            except OSError:
                pass
        self.sel.register(s, selectors.EVENT_READ, key)

    def _poll(self, timeout):
        for key, _ in self.sel.select(timeout):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:  # cut by the server: come straight back
                self.sel.unregister(s)
                s.close()
                self.cuts += 1
                self._open(key.data)

    def step(self, seconds):
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            self._poll(min(left, 0.05))

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stopping.is_set():
            self._poll(0.05)

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(5)
        self.close()

    def close(self):
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_udp_port():
    return free_port(socket.SOCK_DGRAM)


# A non-admin's view is at most --max-view-extent (default 1000) wide and tall: a test that watches
# the whole of write_world's default bounds (2000 wide) from a plain client raises the cap.
WHOLE_WORLD_VIEW = ["--max-view-extent", "2000"]


def write_world(statics=(), bounds=((-1000, -1000), (1000, 1000)), spawn_points=((0, 0),),
                directory=None, name=None, gravity=None):
    """Writes a world file (ARCHITECTURE.md format) and returns its path. statics: list of
    (x, y, shape-dict) with shape-dict like {"box": {"half_extents": [hx, hy]}} (and any other
    key of a static, "one_way": True say). With directory and name (a world_dir() and
    "arena.json"), the file is that one, for CreateRoom. gravity: (x, y), the "gravity" key."""
    doc = {
        "bounds": {"min": list(bounds[0]), "max": list(bounds[1])},
        "statics": [dict({"position": [x, y]}, **shape) for x, y, shape in statics],
        "spawn_points": [list(p) for p in spawn_points],
    }
    if gravity is not None:
        doc["gravity"] = list(gravity)
    if directory is not None:
        path = os.path.join(directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    else:
        fd, path = tempfile.mkstemp(prefix="collide-itest-world-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    _TEMP_FILES.append(path)
    return path


def world_dir():
    """An empty folder for --world-dir, removed (with the worlds written into it) at the end."""
    path = tempfile.mkdtemp(prefix="collide-itest-worlds-")
    _TEMP_DIRS.append(path)
    return path


_TEMP_FILES = []
_TEMP_DIRS = []
_DAEMONS = []


class Daemon:
    """The real collided as a subprocess. stderr is drained by a thread into self.log_lines."""

    def __init__(self, args=(), http=False, env_extra=None, world=None, bind="127.0.0.1",
                 ws=False, udp=False, wrapper=()):
        """wrapper: a command line that runs the daemon's (its last word an exec of the rest),
        say unshare into a mount namespace; the daemon must keep the wrapper's pid (exec)."""
        self.host = bind
        env = dict(os.environ)
        # Keep the daemon's configuration to what the test passes on the command line.
        for k in list(env):
            if k.startswith("COLLIDE_"):
                del env[k]
        if env_extra:
            env.update(env_extra)
        # free_port() releases the port it found: another process (a test of another suite under
        # ctest -j) may take it before collided binds. That start is retried on fresh ports.
        for attempt in range(3):
            self.http_port = free_port() if http else 0
            # The WebSocket port is on by default (7778): off unless asked for, so daemons run
            # side by side (ctest -j) do not fight over it.
            self.ws_port = free_port() if ws else 0
            cmd = list(wrapper) + [OPTS.collided, "--bind", bind, "--port", "0",
                   "--http-port", str(self.http_port)]
            if "--ws-port" not in args and "COLLIDE_WS_PORT" not in (env_extra or {}):
                cmd += ["--ws-port", str(self.ws_port)]
            # The UDP port likewise (7779 by default): a free one only for a test that wants it.
            self.udp_port = free_udp_port() if udp else 0
            if "--udp-port" not in args and "COLLIDE_UDP_PORT" not in (env_extra or {}):
                cmd += ["--udp-port", str(self.udp_port)]
            # Flags a whole run adds to every daemon (scripts/test: under TSan the overload
            # detector is off, since ticks run several times slower there and "at capacity" is not
            # under test).
            cmd += os.environ.get("ITEST_DAEMON_ARGS", "").split()
            if world is not None:
                cmd += ["--world", world]
            cmd += list(args)
            try:
                self._start(cmd, env)
                return
            except TestFailure:
                lost_race = (self.proc.returncode not in (None, 0) and (http or ws or udp) and
                             ("address already in use" in self.log_text() or
                              "cannot bind UDP" in self.log_text()))
                if not lost_race or attempt == 2:
                    raise
                _DAEMONS.remove(self)

    def _start(self, cmd, env):
        self.cmd = cmd
        self.log_lines = []
        self.lock = threading.Lock()
        self.listening = threading.Event()
        self.log_reading = threading.Event()  # cleared by pause_log: stderr is left unread
        self.log_reading.set()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        _DAEMONS.append(self)
        self.game_port = None
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.listening.is_set():
            if self.proc.poll() is not None:
                self.reader.join(2)
                raise TestFailure("collided exited with %s before logging event=listening\n%s"
                                  % (self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                raise TestFailure("no event=listening line within %ss\n%s"
                                  % (START_TIMEOUT, self.log_tail()))
            self.listening.wait(0.05)

    def _drain(self):
        # One line at a time, waiting while paused: the pipe is then left unread (beyond what the
        # file object already buffered) until resume_log.
        while True:
            self.log_reading.wait()
            raw = self.proc.stderr.readline()
            if not raw:
                break
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.lock:
                self.log_lines.append(line)
            if "event=listening" in line and not self.listening.is_set():
                g = re.search(r"\bgame_port=(\d+)", line)
                h = re.search(r"\bhttp_port=(\d+)", line)
                if g:
                    self.game_port = int(g.group(1))
                    if h:
                        self.logged_http_port = int(h.group(1))
                    self.listening.set()

    def pause_log(self):
        """Stops reading the daemon's stderr (a stalled log pipe) until resume_log."""
        self.log_reading.clear()

    def resume_log(self):
        self.log_reading.set()

    def log_tail(self, n=40):
        with self.lock:
            lines = self.log_lines[-n:]
        return "---- collided stderr (last %d lines) ----\n%s" % (len(lines), "\n".join(lines))

    def log_text(self):
        with self.lock:
            return "\n".join(self.log_lines)

    def wait_log(self, pattern, timeout=REPLY_TIMEOUT):
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for line in self.log_lines:
                    if rx.search(line):
                        return line
            time.sleep(0.05)
        return None

    def alive(self):
        return self.proc.poll() is None

    def cpu_seconds(self):
        """User plus system CPU time the daemon has used so far (/proc, clock-tick resolution)."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def client(self, **kw):
        kw.setdefault("host", self.host)
        return Client(self.game_port, **kw)

    def ws_client(self, **kw):
        """A WsClient on the WebSocket port (the daemon was started with ws=True), upgraded."""
        kw.setdefault("host", self.host)
        check(self.ws_port, "this daemon was started without its WebSocket port (ws=True)")
        return WsClient(self.ws_port, **kw)

    def sanitizer_reports(self):
        text = self.log_text()
        hits = [l for l in text.splitlines()
                if "ERROR: AddressSanitizer" in l or "ERROR: LeakSanitizer" in l
                or "runtime error:" in l]
        return hits

    def terminate(self, sig=signal.SIGTERM, timeout=EXIT_TIMEOUT):
        """Sends sig and waits for the exit; returns the exit status (None if it had to be
        killed)."""
        self.log_reading.set()
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                self.reader.join(5)
                return None
        self.reader.join(5)
        return self.proc.returncode

    def stop_and_check(self):
        """The end of every test: SIGTERM must drain and exit 0, with no sanitizer report."""
        rc = self.terminate()
        check(rc == 0, "collided must exit 0 on SIGTERM, got %s\n%s" % (rc, self.log_tail()))
        reports = self.sanitizer_reports()
        check(not reports, "sanitizer reports:\n%s" % "\n".join(reports[:20]))

    def kill(self):
        self.log_reading.set()
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass

    # HTTP -----------------------------------------------------------------------------------
    def http_get(self, path, timeout=REPLY_TIMEOUT, host="127.0.0.1"):
        """Returns (status, body text). host: an IPv4 or IPv6 literal."""
        url = "http://%s:%d%s" % ("[%s]" % host if ":" in host else host, self.http_port, path)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(url, timeout=timeout) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def metrics(self, host="127.0.0.1"):
        status, text = self.http_get("/metrics", host=host)
        check(status == 200, "GET /metrics must be 200, got %d" % status)
        return parse_prometheus(text)

    def rooms(self):
        """GET /rooms (PROTOCOL.md "Rooms"), parsed: the list of room objects."""
        status, text = self.http_get("/rooms")
        check(status == 200, "GET /rooms must be 200, got %d: %r" % (status, text[:200]))
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise TestFailure("GET /rooms must be JSON (%s): %r" % (e, text[:200]))
        check(isinstance(doc, dict) and isinstance(doc.get("rooms"), list),
              "GET /rooms must be {\"rooms\": [...]}, got %r" % text[:200])
        return doc["rooms"]

    def room_names(self):
        return [r.get("name") for r in self.rooms()]


# ---------------------------------------------------------------------------------------------
# Prometheus text format

_SAMPLE_RX = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:\s*[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"(?:[^"\\]|\\.)*"\s*,?)*\s*\})?'
    r'\s+(\S+)(\s+-?\d+)?$')
_LABEL_RX = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_prometheus(text):
    """Parses Prometheus text exposition format strictly. Returns
    {"types": {name: type}, "samples": [(name, {labels}, value)]}; raises TestFailure on a line
    that does not parse."""
    types = {}
    samples = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] == "TYPE":
                check(len(parts) == 4 and parts[3].strip() in
                      ("counter", "gauge", "histogram", "summary", "untyped"),
                      "/metrics line %d: bad TYPE line %r" % (n, line))
                types[parts[2]] = parts[3].strip()
            continue
        m = _SAMPLE_RX.match(line)
        check(m is not None, "/metrics line %d does not parse: %r" % (n, line))
        labels = dict(_LABEL_RX.findall(m.group(2) or ""))
        try:
            value = float(m.group(3))
        except ValueError:
            raise TestFailure("/metrics line %d: value %r is not a number" % (n, m.group(3)))
        samples.append((m.group(1), labels, value))
    return {"types": types, "samples": samples}


def metric(parsed, name, **labels):
    """Sum of the samples of name whose labels include the given ones; None if there is none."""
    total = None
    for n, l, v in parsed["samples"]:
        if n == name and all(l.get(k) == val for k, val in labels.items()):
            total = (total or 0.0) + v
    return total


# ---------------------------------------------------------------------------------------------
# A blocking client


class Client:
    def __init__(self, port, host="127.0.0.1", rcvbuf=None, timeout=REPLY_TIMEOUT, source=None):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        if source is not None:  # another loopback address (127.0.0.2, ...): another peer IP
            self.sock.bind((source, 0))
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.closed = False
        self.client_id = None
        self.welcome = None
        self.next_rid = 100
        self.next_seq = 1
        self.view = {}          # body id -> dict(state), built from snapshots
        self.removed_seen = set()
        self.snapshots = 0
        self.last_tick = None

    def rid(self):
        self.next_rid += 1
        return self.next_rid

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, *msgs):
        self.send_raw(b"".join(encode(m) for m in msgs))

    def send_raw(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        r, _, _ = select.select([self.sock], [], [], remaining)
        if not r:
            return False
        try:
            data = self.sock.recv(1 << 16)
        except (ConnectionResetError, ConnectionAbortedError):
            self.closed = True
            raise ConnectionClosed("connection reset")
        if not data:
            self.closed = True
            raise ConnectionClosed("EOF")
        self.buf += data
        return True

    def _try_parse(self):
        # varint prefix
        n = 0
        shift = 0
        for i in range(min(len(self.buf), 10)):
            b = self.buf[i]
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if len(self.buf) < i + 1 + n:
                    return None
                body = bytes(self.buf[i + 1:i + 1 + n])
                del self.buf[:i + 1 + n]
                sm = pb.ServerMessage()
                try:
                    sm.ParseFromString(body)
                except Exception as e:
                    raise TestFailure("undecodable ServerMessage (%d bytes): %s" % (n, e))
                return sm
        check(len(self.buf) < 5, "server sent a length prefix longer than 5 bytes")
        return None

    def recv(self, timeout=REPLY_TIMEOUT):
        """Next ServerMessage, or None on timeout. Raises ConnectionClosed on EOF."""
        deadline = time.monotonic() + timeout
        while True:
            sm = self._try_parse()
            if sm is not None:
                if kind_of(sm) == "snapshot":
                    self._apply_snapshot(sm.snapshot)
                return sm
            if not self._fill(deadline):
                return None

    def _apply_snapshot(self, snap):
        if self.last_tick is not None:
            check(snap.tick > self.last_tick,
                  "snapshot ticks must increase: %d after %d" % (snap.tick, self.last_tick))
        self.last_tick = snap.tick
        self.snapshots += 1
        for rid in snap.removed:
            self.view.pop(rid, None)
            self.removed_seen.add(rid)
        for b in snap.bodies:
            check(b.id != 0, "snapshot body with id 0")
            st = self.view.get(b.id)
            if st is None:
                st = {"new_msg": b, "first_tick": snap.tick}
                self.view[b.id] = st
            if b.HasField("shape"):
                st["shape"] = b.shape
            if b.kind:
                st["kind"] = b.kind
            if b.owner:
                st["owner"] = b.owner
            st["x"], st["y"] = b.position.x, b.position.y
            st["vx"], st["vy"] = b.velocity.x, b.velocity.y
            st["seq"] = b.last_input_seq
            st["angle"] = b.angle
            st["w"] = b.angular_velocity
            # 1.2: every record of a character carries its ground (absent: not grounded, 0);
            # one_way comes with the new body, like its shape
            st["grounded"] = b.grounded
            st["ground_id"] = b.ground_id
            if b.one_way:
                st["one_way"] = True
            st["tick"] = snap.tick

    def recv_until(self, pred, timeout=REPLY_TIMEOUT, what="a matching message", keep=None):
        """Reads until pred(msg) is true and returns that message; the others are appended to keep
        (when given). Fails on timeout or EOF."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TestFailure("timed out after %.1fs waiting for %s" % (timeout, what))
            try:
                sm = self.recv(remaining)
            except ConnectionClosed as e:
                raise TestFailure("connection closed (%s) while waiting for %s" % (e, what))
            if sm is None:
                continue
            if pred(sm):
                return sm
            if keep is not None:
                keep.append(sm)

    def reply(self, rid, timeout=REPLY_TIMEOUT, keep=None):
        """The reply (any non-snapshot message) carrying request_id rid."""
        return self.recv_until(lambda m: kind_of(m) != "snapshot" and m.request_id == rid,
                               timeout, "the reply to request %d" % rid, keep)

    def non_snapshots(self, timeout):
        """Every non-snapshot message received within timeout (stops early on EOF)."""
        out = []
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                sm = self.recv(deadline - time.monotonic())
                if sm is not None and kind_of(sm) != "snapshot":
                    out.append(sm)
        except ConnectionClosed:
            pass
        return out

    def wait_closed(self, timeout=REPLY_TIMEOUT):
        """Reads until EOF; returns the messages received before it. Fails if the connection is
        still open after timeout."""
        msgs = []
        deadline = time.monotonic() + timeout
        try:
            while True:
                if time.monotonic() > deadline:
                    raise TestFailure("connection still open %.1fs later (messages: %s)" % (
                        timeout, [describe(m) for m in msgs[-5:]]))
                sm = self.recv(max(0.0, deadline - time.monotonic()))
                if sm is not None:
                    msgs.append(sm)
        except ConnectionClosed:
            return msgs

    # Session helpers --------------------------------------------------------------------------
    def hello(self, token=None, name="itest", rid=1, room=None):
        self.send(msg_hello(rid, token=token, name=name, room=room))
        sm = self.recv_until(lambda m: kind_of(m) != "snapshot", what="the reply to Hello")
        check(kind_of(sm) == "welcome", "Hello%s must be answered by Welcome, got %s" % (
            "" if room is None else " to room %r" % room, describe(sm)))
        check(sm.request_id == rid, "Welcome must echo request_id %d, got %d" % (rid, sm.request_id))
        self.welcome = sm.welcome
        self.client_id = sm.welcome.client_id
        return sm.welcome

    def hello_refused(self, code, room=None, token=None, what=None):
        """Sends Hello and checks it is refused with a fatal Error{code}, then closed (rule 9)."""
        self.send(msg_hello(1, token=token, room=room))
        return self.expect_error(1, code, what or "Hello to room %r" % room, fatal=True)

    def admin_request(self, msg):
        """Sends an admin request (CreateRoom, CloseRoom, ListRooms) with a fresh request_id and
        returns its reply (RoomInfo, RoomList or Error)."""
        msg.request_id = self.rid()
        self.send(msg)
        return self.reply(msg.request_id)

    def create_room(self, name, world="", max_clients=0):
        return self.admin_request(msg_create_room(0, name, world, max_clients))

    def close_room(self, name, reason=""):
        return self.admin_request(msg_close_room(0, name, reason))

    def list_rooms(self):
        return self.admin_request(msg_list_rooms(0))

    def spawn(self, shape, x, y, kind=None, angle=None, **options):
        """Spawns and returns the ServerMessage replying to it (Spawned or Error). options:
        msg_spawn's character and one_way."""
        rid = self.rid()
        self.send(msg_spawn(rid, shape, x, y, kind, angle, **options))
        return self.reply(rid)

    def spawn_ok(self, shape, x, y, kind=None, angle=None, **options):
        sm = self.spawn(shape, x, y, kind, angle, **options)
        check(kind_of(sm) == "spawned", "spawn at (%g,%g) must succeed, got %s" % (x, y,
                                                                                   describe(sm)))
        check(sm.spawned.body_id != 0, "Spawned.body_id must not be 0")
        return sm.spawned.body_id

    def move(self, body_id, vx, vy, seq=None, rid=0, w=0.0, jump=False):
        if seq is None:
            seq = self.next_seq
            self.next_seq += 1
        self.send(msg_move(rid, body_id, seq, vx, vy, w, jump))
        return seq

    def ping(self, t=None):
        rid = self.rid()
        self.send(msg_ping(rid, t))
        return self.reply(rid)

    def expect_error(self, rid, code, what, fatal=None, timeout=REPLY_TIMEOUT):
        """Waits for the reply to rid and checks it is Error{code}. Applies rule 9: a fatal error is
        followed by a close; a non-fatal one leaves the connection usable."""
        sm = self.reply(rid, timeout)
        check(kind_of(sm) == "error", "%s: expected Error{%s}, got %s" % (what, code,
                                                                            describe(sm)))
        check(sm.error.code == code_of(code), "%s: expected Error{%s}, got %s" % (
            what, code, describe(sm)))
        if fatal is not None:
            check(sm.error.fatal == fatal, "%s: Error{%s}.fatal must be %s" % (what, code, fatal))
        self.check_fatal_rule(sm, what)
        return sm

    def check_fatal_rule(self, sm, what):
        if sm.error.fatal:
            rest = self.wait_closed()
            check(all(kind_of(m) == "snapshot" for m in rest),
                  "%s: nothing but snapshots may follow a fatal error, got %s" % (
                      what, [describe(m) for m in rest]))
        else:
            self.assert_open(what + " (after a non-fatal error)")

    def assert_open(self, what="connection"):
        rid = self.rid()
        self.send(msg_ping(rid, 4242))
        sm = self.reply(rid)
        check(kind_of(sm) == "pong" and sm.pong.client_time_us == 4242,
              "%s: must still answer Ping with Pong, got %s" % (what, describe(sm)))

    def sync(self):
        """Waits until one full snapshot after a Pong, so everything sent before has been applied
        by a tick and reported."""
        self.assert_open("sync")
        t = self.last_tick or 0
        self.recv_until(lambda m: kind_of(m) == "snapshot" and m.snapshot.tick > t + 1,
                        what="two snapshots after a Pong")

    def pump(self, seconds):
        """Reads (and applies snapshots) for the given time; returns non-snapshot messages."""
        return self.non_snapshots(seconds)


def daemon_with_admin(extra_args=(), world=None):
    """A daemon (on an empty world unless given one) and a client welcomed with its admin token
    (admins spawn statics)."""
    d = Daemon(["--admin-token", "adm1n", *extra_args],
               world=write_world() if world is None else world)
    admin = d.client()
    admin.hello(token="adm1n")
    return d, admin


def full_session(daemon, what="fresh client", token=None, ws=False, room=None):
    """A complete session from a fresh client: Hello, spawn, move, observe motion, ping, despawn.
    Proves the daemon still serves after whatever the test did before. ws: over the WebSocket
    port (WsClient)."""
    c = daemon.ws_client() if ws else daemon.client()
    try:
        w = c.hello(name="fresh", token=token, room=room)
        if room is not None:
            check(w.room == room, "%s: Welcome.room must be %r, got %r" % (what, room, w.room))
        cx = (w.world_min.x + w.world_max.x) / 2
        cy = (w.world_min.y + w.world_max.y) / 2
        # Somewhere free enough in any arena: try a few spots.
        bid = None
        for dx, dy in ((0, 0), (30, 30), (-60, 40), (90, -90), (-150, -150)):
            sm = c.spawn(circle(1.0), cx + dx, cy + dy)
            if kind_of(sm) == "spawned":
                bid = sm.spawned.body_id
                break
        check(bid is not None, "%s: could not spawn a body" % what)
        c.recv_until(lambda m: kind_of(m) == "snapshot" and bid in c.view, what="own new body")
        x0 = c.view[bid]["x"]
        seq = c.move(bid, 5.0, 0.0)
        c.recv_until(lambda m: kind_of(m) == "snapshot" and c.view[bid]["seq"] >= seq
                     and c.view[bid]["x"] > x0, timeout=REPLY_TIMEOUT,
                     what="%s: body moving after MoveIntent" % what)
        c.assert_open(what)
        c.send(msg_despawn(0, bid))
        c.recv_until(lambda m: kind_of(m) == "snapshot" and bid in m.snapshot.removed,
                     what="%s: despawned id in removed" % what)
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# WebSocket (PROTOCOL.md "WebSocket transport"): the same session helpers over RFC 6455 frames

WS_OP_CONT, WS_OP_TEXT, WS_OP_BINARY, WS_OP_CLOSE, WS_OP_PING, WS_OP_PONG = 0, 1, 2, 8, 9, 10


def ws_frame(payload, opcode=WS_OP_BINARY, fin=True, mask=True, rsv=0):
    """One client frame as RFC 6455 5.2 lays it out (masked unless told otherwise)."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    m = 0x80 if mask else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_request(path="/v1", key="dGhlIHNhbXBsZSBub25jZQ==", version="13", protocol="collide.v1",
               origin=None, extra=""):
    """An upgrade request; a field set to None is left out."""
    lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1", "Upgrade: websocket",
             "Connection: Upgrade"]
    if key is not None:
        lines.append("Sec-WebSocket-Key: " + key)
    if version is not None:
        lines.append("Sec-WebSocket-Version: " + version)
    if protocol is not None:
        lines.append("Sec-WebSocket-Protocol: " + protocol)
    if origin is not None:
        lines.append("Origin: " + origin)
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


class WsClient(Client):
    """Client over the WebSocket port: each message its own masked binary frame, server frames
    parsed strictly (FIN, unmasked, binary / close / pong only). Every Client helper works as is.
    handshake: the raw request to send (default ws_request()); the response is in self.status,
    self.headers, and the session helpers are usable only after a 101."""

    def __init__(self, port, host="127.0.0.1", handshake=None, **kw):
        Client.__init__(self, port, host=host, **kw)
        self.close_code = None    # the code of the server's close frame, once received
        self.pongs = []           # payloads of the pongs received
        self.sock.sendall(ws_request() if handshake is None else handshake)
        deadline = time.monotonic() + REPLY_TIMEOUT
        while b"\r\n\r\n" not in self.buf:
            check(self._fill(deadline), "no HTTP response to the upgrade within %ss" % REPLY_TIMEOUT)
        head, _, rest = bytes(self.buf).partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.strip().lower(): v.strip() for k, _, v in
                        (l.partition(":") for l in lines[1:])}
        self.buf = bytearray(rest)
        self.body = b""           # an HTTP refusal's body (what came with the response)
        if self.status != 101:
            self.body, self.buf = bytes(rest), bytearray()
        if self.status == 101:
            accept = base64.b64encode(hashlib.sha1(
                b"dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()).decode()
            if handshake is None:
                check(self.headers.get("sec-websocket-accept") == accept,
                      "Sec-WebSocket-Accept must be %s, got %r" % (accept, self.headers))

    def send(self, *msgs):
        self.send_raw(b"".join(ws_frame(m.SerializeToString()) for m in msgs))

    def _try_parse(self):
        while True:
            b = self.buf
            if len(b) < 2:
                return None
            check(b[0] & 0x80 and not b[0] & 0x70, "server frames are FIN and use no RSV bit: "
                  "first byte 0x%02x" % b[0])
            check(not b[1] & 0x80, "server frames are never masked (RFC 6455 5.1)")
            op, n, off = b[0] & 0x0F, b[1] & 0x7F, 2
            if n == 126:
                if len(b) < 4:
                    return None
                n, off = struct.unpack(">H", bytes(b[2:4]))[0], 4
            elif n == 127:
                if len(b) < 10:
                    return None
                n, off = struct.unpack(">Q", bytes(b[2:10]))[0], 10
            if len(b) < off + n:
                return None
            body = bytes(b[off:off + n])
            del self.buf[:off + n]
            if op == WS_OP_CLOSE:
                check(n >= 2, "the server's close frames carry a code")
                self.close_code = struct.unpack(">H", body[:2])[0]
                continue
            if op == WS_OP_PONG:
                self.pongs.append(body)
                continue
            check(op == WS_OP_BINARY, "server sent opcode %d: only binary, close and pong are "
                  "expected" % op)
            check(self.close_code is None, "a message after the close frame")
            sm = pb.ServerMessage()
            try:
                sm.ParseFromString(body)
            except Exception as e:
                raise TestFailure("undecodable ServerMessage (%d bytes): %s" % (n, e))
            return sm


# ---------------------------------------------------------------------------------------------
# Runner

_TESTS = []


def test(fn):
    _TESTS.append(fn)
    return fn


OPTS = None


def main():
    global OPTS, pb
    ap = argparse.ArgumentParser()
    ap.add_argument("--collided", required=True)
    ap.add_argument("--pb-dir", required=True)
    ap.add_argument("--client", default=None, help="collide-client, for the tests that drive it")
    ap.add_argument("-k", default=None, help="run only tests whose name contains this")
    OPTS = ap.parse_args()
    sys.path.insert(0, OPTS.pb_dir)
    import collide_pb2  # noqa: E402
    pb = collide_pb2
    passed = failed = 0
    for fn in _TESTS:
        if OPTS.k and OPTS.k not in fn.__name__:
            continue
        t0 = time.monotonic()
        print("RUN  %s" % fn.__name__, flush=True)
        try:
            fn()
            passed += 1
            print("PASS %s (%.1fs)" % (fn.__name__, time.monotonic() - t0), flush=True)
        except Exception as e:  # a test failure or an unexpected error: both fail the test
            failed += 1
            if isinstance(e, TestFailure):
                print("FAIL %s: %s" % (fn.__name__, e), flush=True)
            else:
                print("FAIL %s: unexpected %s" % (fn.__name__, traceback.format_exc()), flush=True)
            for d in _DAEMONS:
                print(d.log_tail(), flush=True)
        finally:
            for d in _DAEMONS:
                d.kill()
            _DAEMONS.clear()
    for p in _TEMP_FILES:
        try:
            os.unlink(p)
        except OSError:
            pass
    for p in _TEMP_DIRS:
        try:
            os.rmdir(p)
        except OSError:
            pass
    print("%d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(1 if failed or passed == 0 else 0)

"""A test double of the Agones SDK sidecar's REST gateway (http://localhost:$AGONES_SDK_HTTP_PORT).

Why a double: the real sidecar (agones-sdk) runs inside a Kubernetes pod next to a GameServer the
Agones controller created; Kubernetes cannot run on the machines these tests run on. So this
small HTTP server implements the published REST surface collided uses, from Agones' own API
description (sdks/swagger/sdk.swagger.json and beta.swagger.json; the gRPC-gateway's status
mapping), and records every call so the tests can check what was said and when:

  POST  /ready  /health  /shutdown  /allocate      body: {} (an Empty; no body is accepted too)
  POST  /reserve                                   body: {"seconds": "N"}
  GET   /gameserver                                the GameServer (proto field names)
  GET   /watch/gameserver                          newline-delimited {"result": GameServer},
                                                   the current one at once, then on every change
  PUT   /metadata/label  /metadata/annotation      body: {"key": k, "value": v}
  GET   /v1beta1/counters/{name}                   a Counter {"name","count","capacity"}
  PATCH /v1beta1/counters/{name}                   {"count"?, "capacity"?, "countDiff"?}
  GET   /v1beta1/lists/{name}                      a List {"name","capacity","values"}
  PATCH /v1beta1/lists/{name}                      {"capacity"?, "values"?}
  POST  /v1beta1/lists/{name}:addValue             {"value": v}
  POST  /v1beta1/lists/{name}:removeValue          {"value": v}

int64 fields are JSON strings on output and strings or numbers on input (proto3 JSON). Errors are
the gateway's: HTTP 404 NOT_FOUND (unknown counter or list, value not in the list), 409
ALREADY_EXISTS (value already in the list), 400 OUT_OF_RANGE or INVALID_ARGUMENT (count outside
[0, capacity], list at capacity, a malformed body), 405 for a wrong method, with a JSON body
{"code": grpc_code, "message": ..., "details": []}. Unknown request fields are refused (400): the
real gateway may ignore them, and a double stricter than the real thing catches our typos without
accepting anything the real one would refuse.

The state machine follows the SDK's: Scheduled -> RequestReady/Ready on /ready, Allocated on
/allocate or the test's allocate() (what a GameServerAllocation does), Shutdown on /shutdown.
HTTP/1.1 with keep-alive, as the Go gateway. Tests control it: start(delay) binds late, never
starting it leaves the port closed, allocate(labels) is an allocation.
"""

import copy
import http.server
import json
import re
import socket
import socketserver
import threading
import time

GRPC = {"INVALID_ARGUMENT": (3, 400), "NOT_FOUND": (5, 404), "ALREADY_EXISTS": (6, 409),
        "OUT_OF_RANGE": (11, 400), "UNIMPLEMENTED": (12, 501)}


class Call:
    """One request as the double saw it."""

    def __init__(self, t, method, path, body):
        self.t = t            # time.monotonic() at arrival
        self.wall = time.time()  # the same on the wall clock, to compare with the daemon's log
        self.method = method
        self.path = path
        self.body = body      # the parsed JSON body (None when empty)

    def __repr__(self):
        return "%s %s %s" % (self.method, self.path, json.dumps(self.body))


class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def _int64(v, field):
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ApiError("INVALID_ARGUMENT", "%s: not an int64" % field)
    if isinstance(v, str) and not re.fullmatch(r"-?[0-9]+", v):
        raise ApiError("INVALID_ARGUMENT", "%s: not an int64 string" % field)
    return int(v)


def _only(body, allowed, what):
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ApiError("INVALID_ARGUMENT", "%s: the body must be a JSON object" % what)
    extra = set(body) - set(allowed)
    if extra:
        raise ApiError("INVALID_ARGUMENT", "%s: unknown field(s) %s" % (what, sorted(extra)))
    return body


class Sidecar:
    def __init__(self, port, counters=None, lists=None, name="collide-gs-1"):
        self.port = port
        self.lock = threading.Condition()
        self.calls = []
        self.on_call = None  # hook(call) run before the answer (the daemon waits for it)
        self.state = "Scheduled"
        self.labels = {"agones.dev/fleet": "collide", "agones.dev/gameserverset": "collide-x"}
        self.annotations = {}
        self.name = name
        # Declared like a Fleet would (deploy/agones/fleet.yaml): players capacity 0 until set.
        self.counters = counters if counters is not None else {"players": {"count": 0, "capacity": 0}}
        self.lists = lists if lists is not None else {"rooms": {"capacity": 1000, "values": []}}
        self.version = 0
        self.server = None
        self.thread = None
        self.watchers = 0

    # ---- control -----------------------------------------------------------------------------
    def start(self, delay=0.0):
        """Binds and serves, after delay seconds (in the background when delay > 0)."""
        def run():
            if delay:
                time.sleep(delay)
            srv = _Server(("127.0.0.1", self.port), _Handler)
            srv.sidecar = self
            with self.lock:
                self.server = srv
                self.bound_at = time.monotonic()
                self.lock.notify_all()
            srv.serve_forever(poll_interval=0.05)
        self.bound_at = None
        if delay:
            self.thread = threading.Thread(target=run, daemon=True)
            self.thread.start()
        else:
            srv = _Server(("127.0.0.1", self.port), _Handler)
            srv.sidecar = self
            self.server = srv
            self.bound_at = time.monotonic()
            self.thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                           daemon=True)
            self.thread.start()
        return self

    def stop(self):
        with self.lock:
            srv = self.server
            self.server = None
            self.lock.notify_all()  # ends the watch streams
        if srv:
            srv.shutdown()
            srv.server_close()

    def allocate(self, labels=None):
        """What a GameServerAllocation does: the state becomes Allocated and its metadata's labels
        are applied."""
        with self.lock:
            self.labels.update(labels or {})
            self._set_state("Allocated")

    def calls_to(self, method, path):
        with self.lock:
            return [c for c in self.calls if c.method == method and c.path == path]

    def all_calls(self):
        with self.lock:
            return list(self.calls)

    def wait_for(self, pred, timeout, what):
        """Waits until pred(self) is true (checked under the lock); returns False on timeout."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not pred(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(min(left, 0.05))
        return True

    # ---- the GameServer ------------------------------------------------------------------------
    def _set_state(self, state):
        self.state = state
        self.version += 1
        self.lock.notify_all()

    def gameserver(self):
        """The GameServer as the SDK's REST gateway renders it (proto field names)."""
        return {
            "object_meta": {
                "name": self.name, "namespace": "default", "uid": "0000-1111",
                "resource_version": str(self.version), "generation": "1",
                "creation_timestamp": "1700000000",
                "labels": dict(self.labels), "annotations": dict(self.annotations),
            },
            "spec": {"health": {"disabled": False, "period_seconds": 5, "failure_threshold": 3,
                                "initial_delay_seconds": 5}},
            "status": {
                "state": self.state, "address": "127.0.0.1",
                "ports": [{"name": "game", "port": 7777}],
                "counters": {k: {"count": str(v["count"]), "capacity": str(v["capacity"])}
                             for k, v in self.counters.items()},
                "lists": {k: {"capacity": str(v["capacity"]), "values": list(v["values"])}
                          for k, v in self.lists.items()},
            },
        }

    # ---- the API -------------------------------------------------------------------------------
    def handle(self, method, path, body):
        """Returns the answer's JSON for a request; raises ApiError. Called under the lock."""
        simple = {"/ready": "Ready", "/health": None, "/shutdown": "Shutdown",
                  "/allocate": "Allocated"}
        if path in simple:
            if method != "POST":
                raise ApiError(405, "method")
            _only(body, (), path)
            if simple[path] and self.state != simple[path]:
                self._set_state(simple[path])
            return {}
        if path == "/reserve":
            if method != "POST":
                raise ApiError(405, "method")
            _int64(_only(body, ("seconds",), path).get("seconds", "0"), "seconds")
            self._set_state("Reserved")
            return {}
        if path == "/gameserver":
            if method != "GET":
                raise ApiError(405, "method")
            return self.gameserver()
        if path in ("/metadata/label", "/metadata/annotation"):
            if method != "PUT":
                raise ApiError(405, "method")
            b = _only(body, ("key", "value"), path)
            target = self.labels if path.endswith("label") else self.annotations
            target["agones.dev/sdk-" + str(b.get("key", ""))] = str(b.get("value", ""))
            self._set_state(self.state)
            return {}
        m = re.fullmatch(r"/v1beta1/counters/([^/:]+)", path)
        if m:
            ctr = self.counters.get(m.group(1))
            if ctr is None:
                raise ApiError("NOT_FOUND", "counter not found: %s" % m.group(1))
            if method == "PATCH":
                b = _only(body, ("count", "capacity", "countDiff", "name"), "UpdateCounter")
                cap = _int64(b["capacity"], "capacity") if "capacity" in b else ctr["capacity"]
                count = _int64(b["count"], "count") if "count" in b else ctr["count"]
                count += _int64(b.get("countDiff", "0"), "countDiff")
                if cap < 0 or count < 0 or count > cap:
                    raise ApiError("OUT_OF_RANGE", "count %d out of range [0, %d]" % (count, cap))
                ctr["capacity"], ctr["count"] = cap, count
                self._set_state(self.state)
            elif method != "GET":
                raise ApiError(405, "method")
            return {"name": m.group(1), "count": str(ctr["count"]), "capacity": str(ctr["capacity"])}
        m = re.fullmatch(r"/v1beta1/lists/([^/:]+)(:addValue|:removeValue)?", path)
        if m:
            lst = self.lists.get(m.group(1))
            if lst is None:
                raise ApiError("NOT_FOUND", "list not found: %s" % m.group(1))
            op = m.group(2)
            if op:
                if method != "POST":
                    raise ApiError(405, "method")
                b = _only(body, ("value", "name"), op[1:])
                v = b.get("value")
                if not isinstance(v, str):
                    raise ApiError("INVALID_ARGUMENT", "value: a string is required")
                if op == ":addValue":
                    if v in lst["values"]:
                        raise ApiError("ALREADY_EXISTS", "already in the list: %s" % v)
                    if len(lst["values"]) >= lst["capacity"]:
                        raise ApiError("OUT_OF_RANGE", "the list is at capacity")
                    lst["values"].append(v)
                else:
                    if v not in lst["values"]:
                        raise ApiError("NOT_FOUND", "not in the list: %s" % v)
                    lst["values"].remove(v)
                self._set_state(self.state)
            elif method == "PATCH":
                b = _only(body, ("capacity", "values", "name"), "UpdateList")
                if "capacity" in b:
                    lst["capacity"] = _int64(b["capacity"], "capacity")
                if "values" in b:
                    lst["values"] = list(dict.fromkeys(b["values"]))[:lst["capacity"]]
                self._set_state(self.state)
            elif method != "GET":
                raise ApiError(405, "method")
            return {"name": m.group(1), "capacity": str(lst["capacity"]),
                    "values": list(lst["values"])}
        if path == "/watch/gameserver":
            raise ApiError(405, "method")
        raise ApiError("NOT_FOUND", "Not Found")


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the Go gateway

    def setup(self):
        super().setup()
        # Go's net/http sets TCP_NODELAY; without it the header and body writes meet Nagle and
        # the client's delayed ACK, 40 ms a call.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def _answer(self, status, obj):
        data = json.dumps(obj).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up on the call (a timeout, an exit)

    def _serve(self, method):
        sc = self.server.sidecar
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = ValueError
        call = Call(time.monotonic(), method, path, None if body is ValueError else body)
        with sc.lock:
            sc.calls.append(call)
            sc.lock.notify_all()
        if sc.on_call:
            sc.on_call(call)
        if method == "GET" and path == "/watch/gameserver":
            return self._watch(sc)
        try:
            if body is ValueError:
                raise ApiError("INVALID_ARGUMENT", "the body is not JSON")
            with sc.lock:
                out = sc.handle(method, path, body)
            self._answer(200, out)
        except ApiError as e:
            if e.status == 405:
                self._answer(405, {"code": 12, "message": "Method Not Allowed", "details": []})
            else:
                code, http_status = GRPC[e.status]
                self._answer(http_status, {"code": code, "message": e.message, "details": []})

    def _watch(self, sc):
        # A streaming answer without a length: chunked, one JSON document and a newline per
        # GameServer version, the current one first.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        seen = None
        try:
            with sc.lock:
                sc.watchers += 1
                sc.lock.notify_all()
            while True:
                with sc.lock:
                    while sc.version == seen and sc.server is not None:
                        sc.lock.wait(0.2)
                    if sc.server is None:
                        break
                    seen = sc.version
                    line = (json.dumps({"result": copy.deepcopy(sc.gameserver())}) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, socket.error):
            pass
        finally:
            with sc.lock:
                sc.watchers -= 1
        self.close_connection = True

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_PATCH(self):
        self._serve("PATCH")

    def do_PUT(self):
        self._serve("PUT")

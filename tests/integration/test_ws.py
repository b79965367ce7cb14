#!/usr/bin/env python3
"""The WebSocket transport (PROTOCOL.md "WebSocket transport"; docs/protocol.md): the handshake
and its refusals, the Origin allow-list, frames (binary only, fragments, ping/pong, close codes
1002/1003/1009), the same limits and drain as TCP, and full sessions both through our own strict
WsClient and through a WebSocket client nobody here wrote (Python's `websockets`)."""

import asyncio
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test, ws_frame, ws_request  # noqa: E402
from collide_test import WS_OP_BINARY, WS_OP_CONT, WS_OP_TEXT, WS_OP_PING, WS_OP_CLOSE  # noqa


def ws_daemon(args=(), http=True):
    return ct.Daemon(list(args), http=http, ws=True, world=ct.write_world())


def handshake_counts(d):
    m = d.metrics()
    return {r: ct.metric(m, "collide_ws_handshakes_total", result=r) for r in
            ("accepted", "bad_request", "bad_version", "not_found", "forbidden", "too_large",
             "page")}


def refused(d, request, status, what):
    """Sends a raw upgrade request; checks the HTTP status and that the connection then closes."""
    c = ct.WsClient(d.ws_port, handshake=request)
    check(c.status == status, "%s: must be answered %d, got %d %s" % (what, status, c.status,
                                                                       c.headers))
    c.wait_closed()
    c.close()
    return c


@test
def handshake_refusals_are_http_answers():
    d = ws_daemon(["--hello-timeout-ms", "3000"])
    refused(d, ws_request(path="/"), 404, "GET / (another path)")
    refused(d, ws_request(path="/v2?x=1"), 404, "GET /v2")
    c = refused(d, ws_request(version="8"), 426, "Sec-WebSocket-Version 8")
    check(c.headers.get("sec-websocket-version") == "13",
          "426 must say Sec-WebSocket-Version: 13, got %s" % c.headers)
    refused(d, ws_request(key=None), 400, "no Sec-WebSocket-Key")
    refused(d, ws_request(key="c2hvcnQ="), 400, "a key that is not 16 bytes")
    refused(d, ws_request(protocol="chat, superchat"), 400, "subprotocols without collide.v1")
    refused(d, b"GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "a plain GET /v1 (no upgrade)")
    refused(d, ws_request().replace(b"GET", b"PUT", 1), 400, "PUT")
    refused(d, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\r\n\r\n", 400, "TLS bytes")
    refused(d, ws_request(extra="X-Pad: %s\r\n" % ("a" * 9000)), 431, "9 KB of headers")
    counts = handshake_counts(d)
    check(counts == {"accepted": 0, "bad_request": 6, "bad_version": 1, "not_found": 2,
                     "forbidden": 0, "too_large": 1, "page": 0},
          "collide_ws_handshakes_total must count each refusal by outcome, got %s" % counts)
    # A client offering no subprotocol is accepted, and told none.
    c = ct.WsClient(d.ws_port, handshake=ws_request(protocol=None))
    check(c.status == 101 and "sec-websocket-protocol" not in c.headers,
          "no subprotocol offered: 101 without Sec-WebSocket-Protocol, got %d %s" % (
              c.status, c.headers))
    c.hello()
    c.close()
    c = ct.WsClient(d.ws_port, handshake=ws_request(protocol="chat, collide.v1"))
    check(c.status == 101 and c.headers.get("sec-websocket-protocol") == "collide.v1",
          "collide.v1 among others: chosen, got %d %s" % (c.status, c.headers))
    c.close()
    d.stop_and_check()


def plain_get(port, path):
    """A plain HTTP/1.1 GET (no upgrade) on the WebSocket port: (status, headers, body), read to
    the close the server makes after answering."""
    with socket.create_connection(("127.0.0.1", port), timeout=ct.REPLY_TIMEOUT) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, _, v in (x.partition(":") for x in lines[1:]))
    return int(lines[0].split()[1]), headers, body


@test
def viewer_page_served_on_the_websocket_port():
    viewer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client", "js",
                          "viewer")
    d = ws_daemon()
    status, headers, body = plain_get(d.ws_port, "/")
    check(status == 200 and headers.get("content-type", "").startswith("text/html")
          and body == open(os.path.join(viewer, "index.html"), "rb").read(),
          "GET / on the WebSocket port must be the viewer's page, got %d %s" % (status, headers))
    check(int(headers.get("content-length", -1)) == len(body), "Content-Length must be the body's")
    status, headers, body = plain_get(d.ws_port, "/dist/viewer.js")
    check(status == 200 and headers.get("content-type", "").startswith("text/javascript")
          and body == open(os.path.join(viewer, "bundle", "viewer.js"), "rb").read(),
          "GET /dist/viewer.js must be the viewer's bundle, got %d %s (%d bytes)" % (
              status, headers, len(body)))
    # The play page (issue 35) and its bundle, beside the viewer's.
    play = os.path.join(os.path.dirname(viewer), "play")
    status, headers, body = plain_get(d.ws_port, "/play?room=r1&token=t")
    check(status == 200 and headers.get("content-type", "").startswith("text/html")
          and body == open(os.path.join(play, "index.html"), "rb").read(),
          "GET /play must be the play page, got %d %s" % (status, headers))
    check(b'src="dist/play.js"' in body,
          "the play page loads dist/play.js (relative to /play: /dist/play.js)")
    status, headers, body = plain_get(d.ws_port, "/dist/play.js")
    check(status == 200 and headers.get("content-type", "").startswith("text/javascript")
          and int(headers.get("content-length", -1)) == len(body)
          and body == open(os.path.join(play, "bundle", "play.js"), "rb").read(),
          "GET /dist/play.js must be the play page's bundle, got %d %s (%d bytes)" % (
              status, headers, len(body)))
    # the world's WebAssembly module the play page predicts with (built with the SDK), byte for byte
    wasm = os.path.join(os.path.dirname(viewer), "wasm", "collide_world.wasm")
    status, headers, body = plain_get(d.ws_port, "/dist/collide_world.wasm")
    check(status == 200 and headers.get("content-type", "") == "application/wasm"
          and int(headers.get("content-length", -1)) == len(body) and body[:4] == b"\0asm"
          and body == open(wasm, "rb").read(),
          "GET /dist/collide_world.wasm must be the world's module, got %d %s (%d bytes)" % (
              status, headers, len(body)))
    for path in ("/etc/passwd", "/play/", "/playx", "/dist/play.jsx", "/dist/collide_world.was"):
        status, _, _ = plain_get(d.ws_port, path)
        check(status == 404, "any other path is 404: %s got %d" % (path, status))
    counts = handshake_counts(d)
    check(counts["page"] == 5 and counts["not_found"] == 5,
          "the pages' requests count as result=\"page\": %s" % counts)
    full = ct.WsClient(d.ws_port)  # the game path beside it is unchanged
    full.hello()
    full.close()
    d.stop_and_check()
    # a page larger than --max-queued-bytes is still served whole: its size is the daemon's own
    # bound, not a slow reader's backlog
    d = ws_daemon(["--max-queued-bytes", "16384"])
    status, headers, body = plain_get(d.ws_port, "/dist/collide_world.wasm")
    check(status == 200 and len(body) > 16384 and body == open(wasm, "rb").read(),
          "GET /dist/collide_world.wasm under --max-queued-bytes 16384: %d (%d bytes)" % (
              status, len(body)))
    d.stop_and_check()
    d = ws_daemon(["--viewer", "off"])
    for path in ("/", "/dist/viewer.js", "/play", "/dist/play.js", "/dist/collide_world.wasm"):
        status, _, _ = plain_get(d.ws_port, path)
        check(status == 404, "--viewer off: GET %s must be 404, got %d" % (path, status))
    d.stop_and_check()


@test
def ws_flags_documented_and_read_from_the_environment():
    r = subprocess.run([ct.OPTS.collided, "--help"], capture_output=True, text=True,
                       timeout=ct.START_TIMEOUT)
    for flag, env in (("--ws-port", "COLLIDE_WS_PORT"), ("--ws-origins", "COLLIDE_WS_ORIGINS")):
        check(flag in r.stdout and env in r.stdout, "--help must document %s (%s)" % (flag, env))
    check("(default 7778)" in r.stdout, "--help must give --ws-port's default, 7778")
    r = subprocess.run([ct.OPTS.collided, "--ws-port", "65536"], capture_output=True, text=True,
                       timeout=ct.START_TIMEOUT)
    check(r.returncode == 2 and "--ws-port" in r.stderr, "--ws-port 65536: exit 2 naming the flag")
    port = ct.free_port()
    d = ct.Daemon(http=False, env_extra={"COLLIDE_WS_PORT": str(port),
                                         "COLLIDE_WS_ORIGINS": "https://a.example"})
    d.ws_port = port
    check(d.wait_log(r"event=listening .*ws_port=%d" % port),
          "COLLIDE_WS_PORT must set the WebSocket port (logged in event=listening)")
    refused(d, ws_request(origin="https://b.example"), 403, "COLLIDE_WS_ORIGINS lists a.example")
    c = ct.WsClient(port, handshake=ws_request(origin="https://a.example"))
    check(c.status == 101, "the listed origin is upgraded, got %d" % c.status)
    c.hello()
    c.close()
    d.stop_and_check()


@test
def handshake_is_timed_with_the_hello():
    # The whole handshake and the Hello: --hello-timeout-ms from the accept.
    d = ws_daemon(["--hello-timeout-ms", "1000"], http=False)
    s = socket.create_connection(("127.0.0.1", d.ws_port))
    s.sendall(ws_request()[:40])
    t0 = time.monotonic()
    s.settimeout(5)
    check(s.recv(100) == b"", "a handshake left unfinished must be closed without an answer")
    took = time.monotonic() - t0
    check(0.8 <= took <= 3.0, "an unfinished handshake must be cut at --hello-timeout-ms 1000 "
          "(not before 0.8 s, by 3 s), took %.2f s" % took)
    s.close()
    c = d.ws_client()  # upgraded but silent: the same clock runs on
    t0 = time.monotonic()
    c.wait_closed(timeout=5)
    took = time.monotonic() - t0
    check(0.8 <= took <= 3.0, "no Hello after the upgrade: cut at 1 s, took %.2f s" % took)
    d.stop_and_check()


@test
def origin_allow_list():
    d = ws_daemon(["--ws-origins", "https://a.example, https://b.example:8443"])
    for origin in ("https://b.example:8443", "https://A.example"):
        c = ct.WsClient(d.ws_port, handshake=ws_request(origin=origin))
        check(c.status == 101, "Origin %s is listed: 101, got %d" % (origin, c.status))
        c.close()
    for origin in ("https://evil.example", "https://b.example", "null"):
        refused(d, ws_request(origin=origin), 403, "Origin %s (not listed)" % origin)
    c = ct.WsClient(d.ws_port)  # no Origin: not a browser
    check(c.status == 101, "a request without Origin is accepted, got %d" % c.status)
    c.hello()
    c.close()
    check(handshake_counts(d)["forbidden"] == 3, "collide_ws_handshakes_total{result=forbidden} "
          "must be 3: %s" % handshake_counts(d))
    d.stop_and_check()


@test
def full_session_in_a_named_room_with_transport_metrics():
    d = ws_daemon(["--threads", "2"])
    c = ct.WsClient(d.ws_port)
    w = c.hello()
    check("websocket" in w.features, "Welcome.features must list \"websocket\": %s" % list(w.features))
    c.close()
    ct.full_session(d, "WebSocket client", ws=True, room="ws-room")
    ct.full_session(d, "TCP client after it")
    m = d.metrics()
    conns = {t: ct.metric(m, "collide_transport_connections_total", transport=t)
             for t in ("tcp", "ws")}
    check(conns == {"tcp": 1, "ws": 2}, "one TCP connection, two WebSocket ones: %s" % conns)
    for fam in ("bytes_in", "bytes_out", "frames_in", "frames_out"):
        name = "collide_transport_%s_total" % fam
        ws, tcp = ct.metric(m, name, transport="ws"), ct.metric(m, name, transport="tcp")
        total = ct.metric(m, "collide_%s_total" % fam)
        check(ws > 0 and tcp > 0 and ws + tcp == total,
              "%s: ws %s + tcp %s must be collide_%s_total %s" % (name, ws, tcp, fam, total))
    d.stop_and_check()


@test
def real_websocket_client_plays_a_session():
    import websockets  # Debian's python3-websockets: a client nobody here wrote

    d = ws_daemon(["--threads", "2"])
    out = {}

    async def session():
        uri = "ws://127.0.0.1:%d/v1" % d.ws_port
        async with websockets.connect(uri, subprotocols=["collide.v1"],
                                      origin="http://localhost") as ws:
            out["subprotocol"] = ws.subprotocol

            async def reply(rid):
                while True:
                    sm = ct.pb.ServerMessage()
                    sm.ParseFromString(await asyncio.wait_for(ws.recv(), ct.REPLY_TIMEOUT))
                    if kind_of(sm) != "snapshot" and sm.request_id == rid:
                        return sm
                    if kind_of(sm) == "snapshot":
                        for b in sm.snapshot.bodies:
                            out.setdefault("seen", {})[b.id] = (b.position.x, b.last_input_seq)

            await ws.send(ct.msg_hello(1, name="browserish", room="lobby").SerializeToString())
            w = await reply(1)
            out["welcome"] = w
            await ws.send(ct.msg_spawn(2, ct.circle(1.0), 0, 0).SerializeToString())
            bid = (await reply(2)).spawned.body_id
            out["bid"] = bid
            await ws.send(ct.msg_move(0, bid, 7, 5.0, 0.0).SerializeToString())
            deadline = time.monotonic() + ct.REPLY_TIMEOUT
            while time.monotonic() < deadline and out.get("seen", {}).get(bid, (0, 0))[1] < 7:
                await ws.send(ct.msg_ping(3, 1).SerializeToString())
                await reply(3)
            pong = await ws.ping(b"are you there")
            await asyncio.wait_for(pong, ct.REPLY_TIMEOUT)
            out["pinged"] = True
        out["close_code"] = ws.close_code

    asyncio.run(session())
    check(out["subprotocol"] == "collide.v1", "subprotocol must be collide.v1: %s" % out)
    w = out["welcome"]
    check(kind_of(w) == "welcome" and w.welcome.room == "lobby",
          "Hello over websockets must be welcomed into room lobby, got %s" % describe(w))
    seen = out.get("seen", {}).get(out["bid"])
    check(seen and seen[1] == 7 and seen[0] > 0,
          "the moved body must be seen with last_input_seq 7 and x > 0, got %s" % (seen,))
    check(out.get("pinged"), "a WebSocket ping must be answered with a pong")
    check(out["close_code"] == 1000, "a client's close 1000 is answered 1000, got %s" %
          out["close_code"])
    check(d.wait_log(r"event=client_disconnected .*reason=client_closed name=browserish"),
          "the close must count as client_closed")
    d.stop_and_check()


@test
def text_message_is_bad_request_then_1003():
    d = ws_daemon(http=False)
    c = d.ws_client()
    c.hello()
    c.send_raw(ws_frame(b"hello?", WS_OP_TEXT))
    msgs = c.wait_closed()
    errs = [m for m in msgs if kind_of(m) == "error"]
    check(len(errs) == 1 and errs[0].error.code == ct.code_of("BAD_REQUEST") and
          errs[0].error.fatal, "a text message gets Error{BAD_REQUEST, fatal}: %s" % [
              describe(m) for m in msgs if kind_of(m) != "snapshot"])
    check(c.close_code == 1003, "then close 1003, got %s" % c.close_code)
    c.close()
    d.stop_and_check()


@test
def other_fatal_errors_close_1008():
    d = ws_daemon(["--max-clients", "1"], http=False)
    a = d.ws_client()
    a.hello()
    for what, send, code in (
            ("a Ping before Hello", lambda c: c.send(ct.msg_ping(3, 1)), "UNAUTHENTICATED"),
            ("a Hello past --max-clients 1", lambda c: c.send(ct.msg_hello(3)), "LIMIT_EXCEEDED")):
        c = d.ws_client()
        send(c)
        msgs = c.wait_closed()
        errs = [m for m in msgs if kind_of(m) == "error"]
        check(len(errs) == 1 and errs[0].error.code == ct.code_of(code) and errs[0].error.fatal
              and c.close_code == 1008, "%s: Error{%s, fatal} then close 1008; got %s, close %s"
              % (what, code, [describe(m) for m in errs], c.close_code))
        c.close()
    a.close()
    d.stop_and_check()


@test
def server_lingers_after_its_close_frame_until_the_peer_closes():
    # After its close frame the server sends FIN and reads on, dropping what comes: a close with
    # unread input would reset the connection, and a reset can destroy the close frame unread.
    d = ws_daemon(http=False)
    c = d.ws_client()
    c.hello(name="lingerer")
    c.send_raw(ws_frame(b"x", WS_OP_TEXT))
    c.wait_closed()  # Error, close 1003, then the server's FIN
    check(c.close_code == 1003, "close 1003 first, got %s" % c.close_code)
    try:
        for _ in range(20):
            c.sock.sendall(ws_frame(b"\0" * 4000))
            time.sleep(0.01)
    except OSError as e:
        raise ct.TestFailure("bytes sent after the server's close frame must be read and dropped "
                             "until we close, not reset: %s" % e)
    check(not d.wait_log(r"event=client_disconnected .*name=lingerer", timeout=0.3),
          "the server must wait for the peer's close, not release the connection at once")
    c.sock.shutdown(socket.SHUT_WR)
    check(d.wait_log(r"event=client_disconnected .*reason=fatal_error name=lingerer", timeout=5),
          "our EOF ends the linger; the disconnect keeps its reason (fatal_error)")
    c.close()
    # A peer that never closes is cut by the CLOSING timeout (2 s), not kept for ever.
    c = d.ws_client()
    c.hello(name="stayer")
    c.send_raw(ws_frame(b"x", WS_OP_TEXT))
    c.wait_closed()
    t0 = time.monotonic()
    check(d.wait_log(r"event=client_disconnected .*name=stayer", timeout=6),
          "a lingering connection whose peer never closes must be cut")
    took = time.monotonic() - t0
    check(1.5 <= took <= 5.0, "cut by the 2 s CLOSING timeout (not before 1.5 s, by 5 s): %.2f s"
          % took)
    c.close()
    d.stop_and_check()


@test
def oversize_message_is_frame_too_large_then_1009():
    d = ws_daemon(["--max-frame", "1024", "--max-hello-frame", "256"], http=False)
    # Before Hello the bound is --max-hello-frame, checked from the declared length.
    c = d.ws_client()
    c.send_raw(ws_frame(b"\x00" * 300))
    msgs = c.wait_closed()
    check([m.error.code for m in msgs if kind_of(m) == "error"] == [ct.code_of("FRAME_TOO_LARGE")]
          and c.close_code == 1009, "300 bytes before Hello (bound 256): FRAME_TOO_LARGE, 1009; "
          "got %s, close %s" % ([describe(m) for m in msgs], c.close_code))
    c.close()
    # After it, --max-frame, a message whole or the sum of its fragments.
    for frames, what in (([ws_frame(b"\x00" * 1025)], "one frame of 1025 bytes"),
                         ([ws_frame(b"\x00" * 600, fin=False),
                           ws_frame(b"\x00" * 425, WS_OP_CONT)], "fragments of 600 + 425")):
        c = d.ws_client()
        c.hello()
        c.send_raw(b"".join(frames))
        msgs = c.wait_closed()
        errs = [m for m in msgs if kind_of(m) == "error"]
        check(len(errs) == 1 and errs[0].error.code == ct.code_of("FRAME_TOO_LARGE") and
              errs[0].error.fatal and c.close_code == 1009,
              "%s over --max-frame 1024: Error{FRAME_TOO_LARGE, fatal} then 1009; got %s, close %s"
              % (what, [describe(m) for m in errs], c.close_code))
        c.close()
    # Exactly at the bound is fine (a padded Ping: unknown fields are skipped).
    c = d.ws_client()
    c.hello()
    ping = ct.msg_ping(9, 5).SerializeToString()
    body = ping + ct.unknown_field_padding(1024 - len(ping))
    check(len(body) == 1024, "padding: %d" % len(body))
    c.send_raw(ws_frame(body[:500], fin=False) + ws_frame(body[500:], WS_OP_CONT))
    sm = c.reply(9)
    check(kind_of(sm) == "pong", "a 1024-byte message in two fragments must be served: %s" %
          describe(sm))
    c.close()
    d.stop_and_check()


@test
def fragments_are_reassembled_with_control_frames_between():
    d = ws_daemon(http=False)
    c = d.ws_client()
    hello = ct.msg_hello(1, name="fragmented").SerializeToString()
    # Hello in three fragments, a ping between two of them, sent a byte at a time.
    raw = (ws_frame(hello[:3], fin=False) + ws_frame(b"p1", WS_OP_PING) +
           ws_frame(hello[3:7], WS_OP_CONT, fin=False) + ws_frame(b"", WS_OP_CONT, fin=False) +
           ws_frame(hello[7:], WS_OP_CONT))
    for i in range(len(raw)):
        c.send_raw(raw[i:i + 1])
    sm = c.recv_until(lambda m: kind_of(m) != "snapshot", what="the reply to a fragmented Hello")
    check(kind_of(sm) == "welcome", "a fragmented Hello must be welcomed: %s" % describe(sm))
    check(c.pongs == [b"p1"], "the ping between fragments must get its pong: %s" % c.pongs)
    # Two messages in one write, the second fragmented: both served, in order.
    p1, p2 = ct.msg_ping(11, 1).SerializeToString(), ct.msg_ping(12, 2).SerializeToString()
    c.send_raw(ws_frame(p1) + ws_frame(p2[:2], fin=False) + ws_frame(p2[2:], WS_OP_CONT))
    check(kind_of(c.reply(11)) == "pong" and kind_of(c.reply(12)) == "pong",
          "both pings answered")
    c.close()
    d.stop_and_check()


@test
def protocol_violations_close_1002():
    d = ws_daemon(http=False)
    ping = ct.msg_ping(5, 1).SerializeToString()
    cases = (
        (ws_frame(ping, mask=False), "an unmasked client frame"),
        (ws_frame(ping, rsv=4), "RSV1 set without an extension"),
        (ws_frame(ping, opcode=3), "reserved opcode 3"),
        (ws_frame(ping, WS_OP_CONT), "a continuation with no message begun"),
        (ws_frame(ping[:2], fin=False) + ws_frame(ping), "a new message inside a fragmented one"),
        (ws_frame(b"x" * 126, WS_OP_PING), "a ping of 126 bytes"),
        (ws_frame(b"", WS_OP_PING, fin=False), "a fragmented ping"),
        (ws_frame(b"\x03", WS_OP_CLOSE), "a close frame of 1 byte"),
        (bytes([0x82, 0xFF]) + struct.pack(">Q", 1 << 63) + b"\0\0\0\0", "a length with bit 63"),
    )
    for raw, what in cases:
        c = d.ws_client()
        c.hello()
        c.send_raw(raw)
        msgs = c.wait_closed()
        check(not any(kind_of(m) == "error" for m in msgs) and c.close_code == 1002,
              "%s: close 1002 without an Error; got %s, close %s" % (
                  what, [describe(m) for m in msgs if kind_of(m) != "snapshot"], c.close_code))
        c.close()
    check(d.alive(), "the daemon must survive every malformed frame")
    ct.full_session(d, "after the protocol violations", ws=True)
    d.stop_and_check()


@test
def client_close_is_echoed_and_releases_the_session():
    d = ws_daemon(http=False)
    c = d.ws_client()
    c.hello(name="leaver")
    bid = c.spawn_ok(ct.circle(1.0), 0, 0)
    watcher = d.ws_client()
    watcher.hello(name="watcher")
    watcher.send(ct.msg_set_view(watcher.rid(), 0, 0, 100, 100))
    watcher.recv_until(lambda m: kind_of(m) == "snapshot" and bid in watcher.view,
                       what="the leaver's body")
    c.send_raw(ws_frame(struct.pack(">H", 4000) + b"bye", WS_OP_CLOSE))
    t0 = time.monotonic()
    c.wait_closed()
    check(c.close_code == 4000, "the server must echo the client's close code 4000, got %s" %
          c.close_code)
    watcher.recv_until(lambda m: kind_of(m) == "snapshot" and bid in m.snapshot.removed,
                       what="the leaver's body removed after its close")
    # It closed first: nothing to wait for (no linger until the 2 s CLOSING timeout).
    check(time.monotonic() - t0 < 1.0, "the session must be released as soon as the echo is "
          "written, took %.2f s" % (time.monotonic() - t0))
    c.close()
    watcher.close()
    d.stop_and_check()


@test
def drain_sends_goodbye_then_close_1001():
    d = ws_daemon(["--threads", "2"], http=False)
    a = d.ws_client()
    a.hello(room="drained")
    b = d.ws_client()  # upgraded, no Hello yet: on the front
    d.proc.send_signal(signal.SIGTERM)
    for c, what in ((a, "a player in a room"), (b, "a client on the front")):
        msgs = c.wait_closed()
        rest = [m for m in msgs if kind_of(m) != "snapshot"]
        check(rest and kind_of(rest[-1]) == "goodbye", "%s must get Goodbye before the close, "
              "got %s" % (what, [describe(m) for m in rest]))
        check(c.close_code == 1001, "%s: the Goodbye must be followed by close 1001, got %s" % (
            what, c.close_code))
        c.close()
    d.proc.wait(ct.EXIT_TIMEOUT)  # a second SIGTERM (terminate) could land after the handlers
    rc = d.terminate()            # closed: only wait
    check(rc == 0, "collided must exit 0 after the drain, got %s" % rc)
    check(not d.sanitizer_reports(), "sanitizer reports: %s" % d.sanitizer_reports())


@test
def slow_websocket_reader_cut_at_max_queued_bytes():
    d = ws_daemon(["--max-queued-bytes", "16384", "--rate-limit", "100000",
                   "--max-snapshot-lag-ms", "3600000"])
    c = d.ws_client(rcvbuf=4096)
    c.hello(name="never-reads")
    c.sock.settimeout(0.2)
    deadline = time.monotonic() + 30
    cut = 0
    while time.monotonic() < deadline and not cut:
        try:  # it keeps asking (Pongs are never dropped as stale) and never reads
            c.send(*[ct.msg_ping(0, 1) for _ in range(50)])
        except (OSError, socket.timeout):
            pass
        cut = ct.metric(d.metrics(), "collide_slow_client_disconnects_total")
    check(cut == 1, "a WebSocket client that never reads must be cut past --max-queued-bytes "
          "within 30 s: collide_slow_client_disconnects_total %s" % cut)
    check(d.wait_log(r"event=slow_client_disconnect .*limit 16384"),
          "the cut must be logged with the limit")
    c.close()
    ct.full_session(d, "after the slow reader", ws=True)
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

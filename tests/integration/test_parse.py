#!/usr/bin/env python3
"""Parse cost (issue 12 finding 1), against the real daemon over loopback: before Hello only a
small frame is accepted (--max-hello-frame, 1024), the 21,000-vertex SpawnBody is refused from its
raw bytes without being unpacked, and the rate limit charges bytes (--rate-limit-bytes, 65536/s,
burst 2 s worth). The arena budget and the exact bucket arithmetic are pinned in tests/net."""

import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402


def fatal_frame_too_large(c, what):
    msgs = c.wait_closed()
    errs = [m for m in msgs if kind_of(m) == "error"]
    check(len(errs) == 1 and errs[0].error.code == ct.code_of("FRAME_TOO_LARGE") and
          errs[0].error.fatal,
          "%s: expected one fatal FRAME_TOO_LARGE then a close, got %s" % (
              what, [describe(m) for m in msgs]))


@test
def frame_over_1024_bytes_before_hello_refused_from_its_prefix():
    d = ct.Daemon(["--token", "tok"])
    # The length prefix alone, declaring 1025 bytes: refused before any body byte arrives.
    c = d.client()
    c.send_raw(ct.varint(1025))
    fatal_frame_too_large(c, "a 1025-byte frame announced before Hello")
    c.close()
    # A whole 2000-byte Hello (no token: the unauthenticated loop of the issue) is refused the same
    # way, not parsed into UNAUTHENTICATED.
    c = d.client()
    c.send(ct.msg_hello(1, name="n" * 1990))
    fatal_frame_too_large(c, "a 2000-byte Hello")
    c.close()
    # Not cut at the limit: a Hello of exactly 1024 bytes is welcomed.
    hello = ct.msg_hello(1, token="tok", name="")
    base = len(hello.SerializeToString())
    for k in range(1024 - base - 6, 1024 - base):  # the name's key and length, Hello's length
        hello.hello.name = "n" * k
        if len(hello.SerializeToString()) >= 1024:
            break
    check(len(hello.SerializeToString()) == 1024, "the boundary Hello must be 1024 bytes")
    c = d.client()
    c.send(hello)
    sm = c.recv_until(lambda m: kind_of(m) != "snapshot", what="the reply to a 1024-byte Hello")
    check(kind_of(sm) == "welcome", "a 1024-byte Hello must be welcomed, got %s" % describe(sm))
    # After Hello, --max-frame (65536) applies: a 20,000-byte Ping is answered.
    rid = c.rid()
    big = ct.msg_ping(rid, 7).SerializeToString() + ct.unknown_field_padding(20000)
    c.send_raw(ct.frame(big))
    check(kind_of(c.reply(rid)) == "pong", "a 20 KB frame after Hello must be served")
    c.close()
    ct.full_session(d, "after pre-Hello frames over the cap", token="tok")
    d.stop_and_check()


@test
def spawn_of_21000_empty_vertices_refused_unparsed_and_session_goes_on():
    # Byte bucket and message rate out of the way: this pins the cost of the frame itself.
    d = ct.Daemon(["--rate-limit-bytes", "1e9", "--rate-limit", "10000"])
    c = d.client()
    c.hello()
    frame = ct.encode(ct.msg_spawn_empty_vertices(77, 21000))
    check(40000 < len(frame) < 65536, "the attack frame is %d bytes" % len(frame))
    c.send_raw(frame)
    sm = c.expect_error(77, "INVALID_SHAPE", "a SpawnBody of 21,000 vertices", fatal=False)
    check(sm.error.message == "invalid shape: polygon has more than 16 vertices",
          "the clear error of a polygon too large, got %r" % sm.error.message)
    # Its cost: unpacked, 21,000 mallocs took 1.7-2.6 ms of daemon CPU per frame (issue 12);
    # counted from the raw bytes, tens of microseconds (docs/perf/net.md). 200 frames must take
    # under 100 ms of CPU, 0.5 ms a frame: the unpacking daemon took 290 ms here, the counting one
    # under one clock tick (10 ms).
    frames = 200
    cpu0 = d.cpu_seconds()
    for _ in range(frames):
        c.send_raw(frame)
    for i in range(frames):
        sm = c.reply(77)
        check(kind_of(sm) == "error" and sm.error.code == ct.code_of("INVALID_SHAPE") and
              not sm.error.fatal, "frame %d: expected INVALID_SHAPE, got %s" % (i, describe(sm)))
    cpu = d.cpu_seconds() - cpu0
    print("NOTE %d frames of 21,000 empty vertices: %.0f ms of daemon CPU" % (frames, cpu * 1e3))
    check(cpu < 0.1, "%d frames of 21,000 empty vertices cost %.0f ms of daemon CPU (over 0.5 ms a "
          "frame: unpacked before the vertex rule?)" % (frames, cpu * 1e3))
    c.assert_open("after 200 such frames")
    ct.full_session(d, "after the vertex flood")
    d.stop_and_check()


@test
def byte_flood_gets_rate_limited_not_fatal():
    # Defaults: 200 messages/s, 65536 bytes/s, burst 2 s worth = 131072 bytes. Twelve 16 KB Pings
    # in one write are 12 messages (far under the message burst of 400) but 196 KB: the bucket lets
    # about 8 through (a little more may refill while they arrive), the rest are RATE_LIMITED.
    d = ct.Daemon([])
    c = d.client()
    c.hello()
    rids = [500 + i for i in range(12)]
    data = b"".join(ct.frame(ct.msg_ping(r, r).SerializeToString() +
                             ct.unknown_field_padding(16000)) for r in rids)
    c.send_raw(data)
    replies = {}
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while len(replies) < len(rids) and time.monotonic() < deadline:
        sm = c.recv(deadline - time.monotonic())
        if sm is not None and kind_of(sm) != "snapshot" and sm.request_id in rids:
            replies[sm.request_id] = sm
    check(len(replies) == len(rids), "every frame must be answered, got %d" % len(replies))
    pongs = [r for r in rids if kind_of(replies[r]) == "pong"]
    limited = [r for r in rids if kind_of(replies[r]) == "error" and
               replies[r].error.code == ct.code_of("RATE_LIMITED")]
    check(all(not replies[r].error.fatal for r in limited), "byte drops must not be fatal")
    check(7 <= len(pongs) <= 9 and len(limited) == len(rids) - len(pongs),
          "12 frames of 16 KB against a 131072-byte burst: 7 to 9 must pass and the rest be "
          "RATE_LIMITED, got %d pongs, %d limited: %s" % (
              len(pongs), len(limited), [describe(replies[r]) for r in rids]))
    check("bytes per second" in replies[limited[0]].error.message,
          "the refusal names the byte limit: %r" % replies[limited[0]].error.message)
    c.assert_open("after a byte flood")
    c.close()
    ct.full_session(d, "after a byte flood")
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

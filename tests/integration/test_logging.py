#!/usr/bin/env python3
"""Logging never takes the tick away (issue 12, finding 4): with its stderr pipe full and unread,
collided keeps ticking and serving; the log lines that do not fit in --log-buffer-bytes are
dropped, counted in collide_log_lines_dropped_total and reported once the reader is back."""

import os
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, test  # noqa: E402

TICK_HZ = 60.0


def churn(port, stop, counter):
    """Connects, says Hello and closes at about 200/s: two info lines each (client_hello,
    client_disconnected; a connection that never says Hello logs at debug only), enough to fill a
    64 KiB pipe in well under a second. Bounded waits, so a daemon that stalls cannot hang the
    test."""
    hello = ct.encode(ct.msg_hello(1, name="churn"))
    while not stop.is_set():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(hello)
            counter[0] += 1
        except OSError:
            pass
        finally:
            s.close()
        stop.wait(0.005)


@test
def stalled_log_pipe_does_not_stall_the_tick():
    d = ct.Daemon(http=True, args=["--log-buffer-bytes", "16384"])
    c = d.client()
    c.hello()
    c.pump(0.2)
    d.pause_log()
    stop = threading.Event()
    made = [0]
    t = threading.Thread(target=churn, args=(d.game_port, stop, made), daemon=True)
    t.start()
    try:
        # Fill the pipe (64 KiB) and the 16 KiB buffer first, then measure a player meanwhile.
        c.pump(1.5)
        n0, t0 = c.snapshots, time.monotonic()
        c.pump(4.0)
        rate = (c.snapshots - n0) / (time.monotonic() - t0)
        check(rate >= 0.85 * TICK_HZ,
              "a player must keep getting snapshots at the tick rate while stderr is stalled: "
              "%.1f/s (%d connections churned)" % (rate, made[0]))
        m = d.metrics()
        dropped = ct.metric(m, "collide_log_lines_dropped_total")
        check(m["types"].get("collide_log_lines_dropped_total") == "counter",
              "collide_log_lines_dropped_total must be a counter")
        check(dropped is not None and dropped > 0,
              "lines that do not fit must be dropped and counted, got %s after %d connections"
              % (dropped, made[0]))
    finally:
        stop.set()
        t.join(5)
    print("  %d connections, %.1f snapshots/s, %d log lines dropped" % (made[0], rate, dropped))
    d.resume_log()
    line = d.wait_log(r"\bevent=log_dropped\b")
    check(line is not None and "level=warn" in line,
          "once the pipe drains, one event=log_dropped line must say what was lost\n%s"
          % d.log_tail())
    c.close()
    ct.full_session(d, "after the stall")
    # Stalled again at the exit: the lines still buffered are flushed within the bounded wait
    # (2 s) once the reader is back, the last one being event=exit.
    d.pause_log()
    stop.clear()
    t = threading.Thread(target=churn, args=(d.game_port, stop, made), daemon=True)
    t.start()
    time.sleep(1.0)
    stop.set()
    t.join(5)
    d.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    d.resume_log()
    d.stop_and_check()
    check(d.wait_log(r"\bevent=exit\b", timeout=1) is not None,
          "the last line (event=exit) must be flushed before the exit\n%s" % d.log_tail())


@test
def join_and_leave_at_info_silent_sockets_at_debug():
    # A welcomed client's arrival and departure are info lines (client_hello, client_disconnected);
    # a socket that never says Hello logs only at debug (client_connected and its
    # client_disconnected), so a flood of them cannot bury the log (issue 12).
    d = ct.Daemon(["--log-level", "debug"])
    c = d.client()
    c.hello(name="alice")
    cid = c.client_id
    c.close()
    check(d.wait_log(r"level=info event=client_disconnected client=%d .*name=alice" % cid),
          "a welcomed client's close must be an info line:\n%s" % d.log_tail())
    s = socket.create_connection(("127.0.0.1", d.game_port), timeout=5)
    s.close()
    line = d.wait_log(r"event=client_disconnected .*name=-\"")
    check(line and "level=debug" in line,
          "a socket that never said Hello must close at debug, got %r" % line)
    line = d.wait_log(r"event=client_connected\b")
    check(line and "level=debug" in line, "client_connected must be debug, got %r" % line)
    check(d.wait_log(r"level=info event=client_hello\b.*name=alice"), "client_hello must be info")
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

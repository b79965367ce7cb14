#!/usr/bin/env python3
"""The UDP transport over real UDP (PROTOCOL.md "Datagrams: UDP through ENet"), with Debian's
pyenet (python3-enet, libenet 1.3) as the client: Hello and Welcome on channel 0 (udp_port, the
"udp" feature), a spawn on channel 0 and intents on channel 1, quantized snapshots on channel 1,
a non-intent on channel 1 answered BAD_REQUEST on channel 0, a fatal error followed by a
disconnect carrying its code, a connect with one channel refused (data 1), a packet over
--max-frame, Goodbye then disconnect 0 on SIGTERM, and a silent peer dropped after
--udp-timeout-ms with its bodies despawned."""

import os
import sys
import time

import enet

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, test  # noqa: E402

from udp_client import RELIABLE, UdpClient  # noqa: E402,F401


def udp_daemon(*args):
    return ct.Daemon(args=list(args), udp=True, http=True)


@test
def welcome_intents_snapshots():
    d = udp_daemon()
    c = UdpClient(d.udp_port)
    w = c.hello()
    check(w.udp_port == d.udp_port, "Welcome.udp_port %d, want %d" % (w.udp_port, d.udp_port))
    check("udp" in w.features, "feature udp in %s" % list(w.features))
    check(w.position_quantum > 0, "UDP snapshots are quantized: quanta in the Welcome")
    c.send(ct.msg_spawn(2, ct.circle(1.0), 0, 0))
    ch, sm = c.message("spawned")
    check(ch == 0 and sm.request_id == 2, "Spawned on channel 0")
    body = sm.spawned.body_id
    for seq in range(1, 6):
        c.send(ct.msg_move(0, body, seq, 5.0, 0.0), channel=1, flags=0)
    ch, sm = c.message("snapshot", "a snapshot acknowledging the intents", channel=None)
    check(ch == 1, "Snapshot on channel 1, got %d" % ch)
    check(len(sm.snapshot.bodies) == 0 and len(sm.snapshot.packed) > 0,
          "a UDP snapshot is quantized (packed), without BodyState")
    ack = ct.pb.ClientMessage()
    ack.snapshot_ack.tick = sm.snapshot.tick
    c.send(ack, channel=1, flags=0)
    # Snapshots keep coming on channel 1 only; nothing unasked for on channel 0.
    for _ in range(5):
        ch, sm = c.message("snapshot")
        check(ch == 1, "every Snapshot on channel 1")
    # A Ping on channel 1: not an intent, BAD_REQUEST on channel 0, and the session goes on.
    c.send(ct.msg_ping(7), channel=1)
    ch, sm = c.message("error", "BAD_REQUEST for a Ping on channel 1")
    check(ch == 0 and sm.error.code == ct.code_of("BAD_REQUEST") and not sm.error.fatal,
          "non-fatal BAD_REQUEST on channel 0: %s" % sm)
    check(sm.request_id == 7, "the Error names the request")
    c.send(ct.msg_ping(8))
    ch, sm = c.message("pong")
    check(ch == 0 and sm.request_id == 8, "Pong on channel 0")
    m = d.metrics()
    check(ct.metric(m, "collide_transport_connections_total", transport="udp") >= 1,
          "collide_transport_connections_total{transport=udp}")
    check(ct.metric(m, "collide_transport_frames_in_total", transport="udp") >= 3,
          "frames counted for udp")
    check(m["types"].get("collide_udp_rtt_seconds") == "histogram" and
          ct.metric(m, "collide_udp_packets_lost_total") is not None,
          "the RTT histogram and the lost packets are in /metrics")
    d.stop_and_check()


@test
def events_are_reliable_events_messages_not_in_snapshots():
    """PROTOCOL.md "Datagrams": on UDP a tick's contact events for a client travel in one
    Events{tick, contacts, sensor_events} (ServerMessage 20) on channel 0, in tick order; the UDP
    snapshots carry none. Two boxes of one player driven into each other make a contact begin."""
    d = udp_daemon()
    c = UdpClient(d.udp_port)
    c.hello()
    ids = []
    for rid, x in ((2, -3.0), (3, 3.0)):
        c.send(ct.msg_spawn(rid, ct.box(1.0, 1.0), x, 0))
        _, sm = c.message("spawned")
        ids.append(sm.spawned.body_id)
    c.send(ct.msg_move(0, ids[0], 1, 20.0, 0.0), channel=1, flags=0)
    c.send(ct.msg_move(0, ids[1], 2, -20.0, 0.0), channel=1, flags=0)
    ch, sm = c.message("events", "an Events message with the contact")
    check(ch == 0, "Events on channel 0 (reliable), got %d" % ch)
    ev = sm.events
    check(ev.tick > 0 and len(ev.contacts) >= 1 and ev.contacts[0].begin and
          {ev.contacts[0].a, ev.contacts[0].b} == set(ids),
          "the two boxes' contact begins, with its tick: %s" % ev)
    snaps, last_tick = 0, ev.tick
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and snaps < 30:
        c.pump()
        for kind, ch, m in c.events:
            if kind != "message":
                continue
            if kind_of(m) == "snapshot":
                snaps += 1
                check(len(m.snapshot.contacts) == 0 and len(m.snapshot.sensor_events) == 0,
                      "a UDP snapshot carries no events")
            elif kind_of(m) == "events":
                check(ch == 0 and m.events.tick > last_tick,
                      "Events on channel 0, one per tick, in tick order: %s after %d"
                      % (m.events.tick, last_tick))
                last_tick = m.events.tick
        c.events = []
    check(snaps >= 10, "snapshots kept coming (%d)" % snaps)
    d.stop_and_check()


@test
def hello_version_mismatch_is_disconnect_data():
    d = udp_daemon()
    c = UdpClient(d.udp_port)
    c.send(ct.msg_hello(1, version=99))
    ch, sm = c.message("error")
    code = ct.code_of("VERSION_MISMATCH")
    check(ch == 0 and sm.error.fatal and sm.error.code == code, "fatal VERSION_MISMATCH: %s" % sm)
    e = c.until(lambda e: e[0] == "disconnect", "the disconnect")
    check(e[2] == code, "disconnect data %s, want the error code %d" % (e[2], code))
    d.stop_and_check()


@test
def channel1_before_welcome_dropped_and_one_channel_refused():
    d = udp_daemon()
    c = UdpClient(d.udp_port)
    c.send(ct.msg_ping(3), channel=1)  # before Welcome: dropped, no reply
    w = c.hello()
    check(w.client_id > 0, "welcomed after a dropped channel-1 packet")
    c.pump(100)
    check(not [e for e in c.events if e[0] == "message" and kind_of(e[2]) == "error"],
          "no Error for a channel-1 packet before Welcome")
    one = UdpClient.__new__(UdpClient)
    one.host = enet.Host(None, 1, 1, 0, 0)
    one.peer = one.host.connect(enet.Address(b"127.0.0.1", d.udp_port), 1, 0)
    one.events = []
    e = one.until(lambda e: e[0] == "disconnect", "a refusal of a one-channel connect")
    check(e[2] == 1, "disconnect data 1 for fewer than 2 channels, got %s" % e[2])
    d.stop_and_check()


@test
def packet_over_max_frame():
    d = udp_daemon("--max-frame", "2048")
    c = UdpClient(d.udp_port)
    c.hello()
    c.send_raw(ct.unknown_field_padding(3000))
    ch, sm = c.message("error")
    code = ct.code_of("FRAME_TOO_LARGE")
    check(ch == 0 and sm.error.fatal and sm.error.code == code, "fatal FRAME_TOO_LARGE: %s" % sm)
    e = c.until(lambda e: e[0] == "disconnect", "the disconnect")
    check(e[2] == code, "disconnect data %s, want %d" % (e[2], code))
    d.stop_and_check()


@test
def goodbye_then_disconnect_on_sigterm():
    d = udp_daemon()
    c = UdpClient(d.udp_port)
    c.hello()
    d.proc.send_signal(ct.signal.SIGTERM)
    ch, sm = c.message("goodbye")
    check(ch == 0, "Goodbye on channel 0")
    e = c.until(lambda e: e[0] == "disconnect", "the disconnect after Goodbye")
    check(e[2] == 0, "disconnect data 0 after Goodbye, got %s" % e[2])
    check(d.proc.wait(timeout=ct.EXIT_TIMEOUT) == 0, "clean exit after the drain")


@test
def silent_peer_times_out_and_its_bodies_go():
    d = udp_daemon("--udp-timeout-ms", "1000")
    watcher = d.client()
    watcher.send(ct.msg_hello(1, name="watch"))
    watcher.recv_until(lambda m: kind_of(m) == "welcome", what="Welcome")
    watcher.send(ct.msg_set_view(0, 0, 0, 50, 50))
    c = UdpClient(d.udp_port)
    c.hello()
    c.send(ct.msg_spawn(2, ct.circle(1.0), 3, 3))
    _, sm = c.message("spawned")
    body = sm.spawned.body_id
    watcher.recv_until(lambda m: kind_of(m) == "snapshot" and body in watcher.view,
                       what="the UDP player's body")
    # From now on the client never services its host: no acks, no pings.
    watcher.recv_until(lambda m: kind_of(m) == "snapshot" and body not in watcher.view,
                       what="the body despawned after the timeout", timeout=10)
    d.wait_log(r"client_disconnected.*reason=timeout", timeout=5)
    m = d.metrics()
    check(ct.metric(m, "collide_disconnects_total", reason="timeout") >= 1,
          "a disconnect counted as reason=timeout")
    d.stop_and_check()


@test
def quiet_peer_that_closes_is_not_a_timeout():
    """A player that sends no message for longer than --udp-timeout-ms but keeps its ENet host
    serviced (ENet pings every half second) and then disconnects is a close, not a timeout."""
    d = udp_daemon("--udp-timeout-ms", "1000")
    c = UdpClient(d.udp_port)
    c.hello()
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:
        c.pump(50)
    check(not [e for e in c.events if e[0] == "disconnect"], "still connected after 2.5 s quiet")
    c.peer.disconnect(0)
    c.until(lambda e: e[0] == "disconnect", "the disconnect's acknowledgement")
    d.wait_log(r"client_disconnected.*reason=client_closed", timeout=5)
    m = d.metrics()
    check(ct.metric(m, "collide_disconnects_total", reason="timeout") == 0,
          "no disconnect counted as reason=timeout")
    d.stop_and_check()


def snapshots_in(c, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        c.pump(20)
    n = len([e for e in c.events if e[0] == "message" and kind_of(e[2]) == "snapshot"])
    c.events.clear()
    return n


@test
def udp_bandwidth_caps_what_the_host_sends():
    """--udp-bandwidth crossed: with 300 bytes a second for the host, ENet's throttle drops most
    of a 60 Hz player's snapshots (about 2 KB/s with headers); without it, every one arrives."""
    counts = {}
    for cap in ("0", "300"):
        d = udp_daemon("--udp-bandwidth", cap, "--drain-timeout-ms", "300")
        c = UdpClient(d.udp_port)
        c.hello()
        c.send(ct.msg_spawn(2, ct.circle(1.0), 3, 3))
        c.message("spawned")
        snapshots_in(c, 1.5)  # ENet's throttle adjusts once a second
        counts[cap] = snapshots_in(c, 3.0)
        d.stop_and_check()
    print("snapshots in 3 s: %s" % counts)
    check(counts["0"] >= 150, "uncapped: about 180 snapshots in 3 s, got %d" % counts["0"])
    check(counts["300"] <= counts["0"] // 2,
          "capped at 300 B/s: at most half as many snapshots as uncapped: %s" % counts)


@test
def peer_that_stops_acknowledging_is_cut_past_max_queued_bytes():
    """Reliable output ENet holds for a peer that does not acknowledge counts against
    --max-queued-bytes, as a TCP client's unread output does: 300 Pings in one burst, then the
    client never services its host (no acks); the 300 Pongs (~7 KB), sent in rounds each far
    under the limit, pass 4096 bytes held by ENet and the daemon cuts the peer as a slow client,
    without waiting for --udp-timeout-ms."""
    d = udp_daemon("--max-queued-bytes", "4096", "--udp-timeout-ms", "30000",
                   "--rate-limit", "1000")
    c = UdpClient(d.udp_port)
    c.hello()
    # From now on the client never services its host: the Pongs stay unacknowledged.
    # 12 rounds of 25: each round's Pongs (~600 bytes) stay far under the limit in the room's
    # own output buffer; only what ENet keeps unacknowledged adds up past it
    for r in range(12):
        for i in range(25):
            msg = ct.msg_ping(100 + 25 * r + i)
            check(c.peer.send(0, enet.Packet(msg.SerializeToString(), RELIABLE)) >= 0,
                  "enet send")
        c.host.flush()
        time.sleep(0.05)
    d.wait_log(r"client_disconnected.*reason=slow_client", timeout=10)
    m = d.metrics()
    check(ct.metric(m, "collide_disconnects_total", reason="slow_client") >= 1,
          "a disconnect counted as reason=slow_client")
    d.stop_and_check()


@test
def hello_timeout_disconnects_a_silent_peer():
    # --hello-timeout-ms 1000 crossed: a peer connected over ENet that never says Hello is let go
    # as a TCP connection is (event=hello_timeout), not held until ENet's own timeout.
    d = udp_daemon("--hello-timeout-ms", "1000", "--udp-timeout-ms", "30000")
    t0 = time.monotonic()
    c = UdpClient(d.udp_port)
    c.until(lambda e: e[0] == "disconnect", "the disconnect of a peer without Hello", timeout=6)
    elapsed = time.monotonic() - t0
    check(0.9 <= elapsed <= 5.0, "disconnected %.2f s after connecting, want about 1 s" % elapsed)
    check(d.wait_log(r"\bevent=hello_timeout\b"), "event=hello_timeout must be logged")
    UdpClient(d.udp_port).hello()  # the port still serves
    d.stop_and_check()


@test
def pending_peers_per_address_capped():
    # --max-pending-per-address 2 crossed by a third ENet peer from the same IP (other ports):
    # the oldest pending one is evicted (disconnected), the newcomer is served.
    d = udp_daemon("--max-pending-per-address", "2", "--hello-timeout-ms", "60000",
                   "--log-level", "debug")
    a = [UdpClient(d.udp_port) for _ in range(2)]
    for c in a:
        c.pump(150)  # older than the eviction's grace (250 ms) before the third arrives
    check(not [e for e in a[0].events if e[0] == "disconnect"],
          "2 pending peers from one IP at --max-pending-per-address 2: none evicted yet")
    a.append(UdpClient(d.udp_port))
    a[0].until(lambda e: e[0] == "disconnect", "the eviction of the oldest pending peer")
    a[1].pump(200)
    check(not [e for e in a[1].events if e[0] == "disconnect"], "the second peer stays")
    a[2].hello()
    check(d.wait_log(r"\bevent=pending_evicted\b|reason=pending_evicted"),
          "the eviction is logged")
    d.stop_and_check()


@test
def flood_is_rate_limited_then_cut():
    # --rate-limit 5 (burst 10, 4 bursts = 40 drops) crossed by 70 pings in one go on channel 0:
    # as over TCP, 40 non-fatal RATE_LIMITED, then a fatal one, then the disconnect with its code.
    d = udp_daemon("--rate-limit", "5")
    c = UdpClient(d.udp_port)
    c.hello()
    for i in range(70):
        check(c.peer.send(0, enet.Packet(ct.msg_ping(100 + i, i).SerializeToString(), RELIABLE))
              >= 0, "enet send")
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while not [e for e in c.events if e[0] == "disconnect"] and time.monotonic() < deadline:
        c.pump()
    code = ct.code_of("RATE_LIMITED")
    ends = [e for e in c.events if e[0] == "disconnect"]
    check(ends and ends[0][2] == code, "a disconnect with data RATE_LIMITED %d: %s" % (code, ends))
    drops = [e[2].error for e in c.events if e[0] == "message" and kind_of(e[2]) == "error"]
    check(all(x.code == code for x in drops), "only RATE_LIMITED: %s" % drops)
    check(len(drops) == 41 and drops[-1].fatal and not any(x.fatal for x in drops[:-1]),
          "40 non-fatal drops then a fatal one, as over TCP: %d drops" % len(drops))
    d.stop_and_check()


@test
def burst_of_connects_past_the_peer_window():
    """ENet walks only the peer slots in use plus 256 free ones (net_udp_host.c, fit_window): a
    burst of 600 connects in one flush (more than one window's free slots) must all be connected,
    and a Hello from the highest slot answered, with --max-clients 1000."""
    n = 600
    d = udp_daemon("--max-clients", "1000", "--max-pending", "1000",
                   "--max-pending-per-address", "1000", "--hello-timeout-ms", "60000")
    host = enet.Host(None, n, 2, 0, 0)
    peers = [host.connect(enet.Address(b"127.0.0.1", d.udp_port), 2) for _ in range(n)]
    connected = set()
    deadline = time.monotonic() + 20
    while len(connected) < n and time.monotonic() < deadline:
        ev = host.service(20)
        while ev is not None and ev.type != enet.EVENT_TYPE_NONE:
            if ev.type == enet.EVENT_TYPE_CONNECT:
                connected.add(ev.peer.incomingPeerID)
            ev = host.check_events()
    check(len(connected) == n, "%d of %d peers connected in one burst" % (len(connected), n))
    last = peers[-1]
    last.send(0, enet.Packet(ct.msg_hello().SerializeToString(), RELIABLE))
    got = None
    deadline = time.monotonic() + ct.REPLY_TIMEOUT
    while got is None and time.monotonic() < deadline:
        ev = host.service(20)
        while ev is not None and ev.type != enet.EVENT_TYPE_NONE:
            if ev.type == enet.EVENT_TYPE_RECEIVE and ev.peer.incomingPeerID == last.incomingPeerID:
                sm = ct.pb.ServerMessage()
                sm.ParseFromString(ev.packet.data)
                # Snapshots travel on channel 1, the Welcome on channel 0: ENet orders each
                # channel on its own, so a snapshot may be dispatched first.
                if kind_of(sm) == "welcome":
                    got = sm
            ev = host.check_events()
    check(got is not None and kind_of(got) == "welcome", "the last peer's Hello is welcomed: %s"
          % got)
    for p in peers:
        p.disconnect_now(0)
    host.flush()
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()

"""An ENet peer of the daemon for the UDP integration suites (test_udp.py, test_tickets.py), on
Debian's pyenet (python3-enet, libenet 1.3): every event is kept, in order, and waited for with a
timeout."""

import time

import enet

import collide_test as ct
from collide_test import check, kind_of

RELIABLE = enet.PACKET_FLAG_RELIABLE


class UdpClient:
    """One ENet peer of the daemon; every event is kept, in order, as (kind, channel, payload)."""

    def __init__(self, port, channels=2):
        self.host = enet.Host(None, 1, channels, 0, 0)
        self.peer = self.host.connect(enet.Address(b"127.0.0.1", port), channels, 0)
        self.events = []
        self.until(lambda e: e[0] == "connect", "the connect")
        self.host.flush()  # the connect's acknowledgement: the daemon's peer is connected by it

    def pump(self, ms=10):
        ev = self.host.service(ms)
        while ev is not None and ev.type != enet.EVENT_TYPE_NONE:
            if ev.type == enet.EVENT_TYPE_CONNECT:
                self.events.append(("connect", 0, None))
            elif ev.type == enet.EVENT_TYPE_DISCONNECT:
                self.events.append(("disconnect", 0, ev.data))
            elif ev.type == enet.EVENT_TYPE_RECEIVE:
                sm = ct.pb.ServerMessage()
                sm.ParseFromString(ev.packet.data)
                self.events.append(("message", ev.channelID, sm))
            ev = self.host.check_events()

    def until(self, pred, what, timeout=ct.REPLY_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, e in enumerate(self.events):
                if pred(e):
                    del self.events[:i + 1]
                    return e
            self.pump()
        raise ct.TestFailure("no %s within %.0f s; got %s" % (
            what, timeout, [(k, c, kind_of(p) if k == "message" else p) for k, c, p in self.events]))

    def message(self, kind, what=None, channel=None):
        e = self.until(lambda e: e[0] == "message" and kind_of(e[2]) == kind and
                       (channel is None or e[1] == channel), what or kind)
        return e[1], e[2]

    def send(self, msg, channel=0, flags=RELIABLE):
        check(self.peer.send(channel, enet.Packet(msg.SerializeToString(), flags)) >= 0,
              "enet send")
        self.pump(0)

    def send_raw(self, data, channel=0):
        check(self.peer.send(channel, enet.Packet(data, RELIABLE)) >= 0, "enet send")
        self.pump(0)

    def hello(self, **kw):
        self.send(ct.msg_hello(1, **kw))
        ch, sm = self.message("welcome")
        check(ch == 0, "Welcome on channel 0, got %d" % ch)
        return sm.welcome

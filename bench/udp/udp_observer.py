#!/usr/bin/env python3
"""One UDP player that only watches: spawns a resting body, applies every snapshot against its
baseline (tests/integration/udp_baseline.py), acknowledges it, and after a warm-up counts the
snapshot bytes it received and the bodies it held. Prints one JSON line:
bytes per body per snapshot = snapshot payload bytes / (snapshots x bodies in view).

The load report cannot give that figure alone: it counts records per snapshot, and against a
baseline a resting body has no record. Used by bench/udp/loss_compare.sh; needs Debian's pyenet
(/usr/bin/python3).

    udp_observer.py --port 7779 --pb-dir build/release/tests/pb --seconds 20 --warmup 5
"""

import argparse
import json
import os
import sys
import time

import enet

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=7779)
    ap.add_argument("--pb-dir", required=True)
    ap.add_argument("--seconds", type=float, default=20.0, help="measured time, after the warm-up")
    ap.add_argument("--warmup", type=float, default=5.0, help="not counted: the load ramps up")
    ap.add_argument("--x", type=float, default=0.0, help="where the observer's body rests")
    ap.add_argument("--y", type=float, default=0.0)
    a = ap.parse_args()
    sys.path.insert(0, a.pb_dir)
    import collide_pb2 as pb
    from udp_baseline import BaselineDecoder

    host = enet.Host(None, 1, 2, 0, 0)
    peer = host.connect(enet.Address(b"127.0.0.1", a.port), 2, 0)

    def send(msg, channel):
        peer.send(channel, enet.Packet(msg.SerializeToString(),
                                       enet.PACKET_FLAG_RELIABLE if channel == 0 else 0))

    dec = None
    n = nbytes = bodies = 0
    t_end = t_count = None
    start = time.monotonic()
    while t_end is None or time.monotonic() < t_end:
        if time.monotonic() - start > a.warmup + a.seconds + 30:
            sys.exit("udp_observer: no Welcome or no snapshots from port %d" % a.port)
        ev = host.service(5)
        while ev is not None and ev.type != enet.EVENT_TYPE_NONE:
            if ev.type == enet.EVENT_TYPE_CONNECT:
                hello = pb.ClientMessage(request_id=1)
                hello.hello.protocol_version = 1
                hello.hello.name = "observer"
                send(hello, 0)
            elif ev.type == enet.EVENT_TYPE_DISCONNECT:
                sys.exit("udp_observer: disconnected (data %s)" % ev.data)
            elif ev.type == enet.EVENT_TYPE_RECEIVE:
                sm = pb.ServerMessage()
                sm.ParseFromString(ev.packet.data)
                if sm.HasField("welcome"):
                    w = sm.welcome
                    dec = BaselineDecoder(pb, w.position_quantum, w.velocity_quantum)
                    spawn = pb.ClientMessage(request_id=2)
                    spawn.spawn.kind = pb.BODY_KIND_MOVING
                    spawn.spawn.shape.box.half_extents.x = 0.4
                    spawn.spawn.shape.box.half_extents.y = 0.4
                    spawn.spawn.position.x = a.x
                    spawn.spawn.position.y = a.y
                    send(spawn, 0)
                    t_end = time.monotonic() + a.warmup + a.seconds
                    t_count = time.monotonic() + a.warmup
                elif sm.HasField("snapshot") and dec is not None:
                    if dec.apply(sm.snapshot) is not None:
                        ack = pb.ClientMessage()
                        ack.snapshot_ack.tick = sm.snapshot.tick
                        send(ack, 1)
                        if time.monotonic() >= t_count:
                            n += 1
                            nbytes += len(ev.packet.data)
                            bodies += len(dec.bodies)
                elif sm.HasField("error"):
                    sys.exit("udp_observer: %s" % sm)
            ev = host.check_events()
    peer.disconnect()
    host.service(100)
    print(json.dumps({
        "snapshots": n,
        "bodies_in_view": bodies / n if n else 0.0,
        "bytes_per_snapshot": nbytes / n if n else 0.0,
        "bytes_per_body_per_snapshot": nbytes / bodies if bodies else 0.0,
        "full": dec.full if dec else 0,
        "ignored": dec.ignored if dec else 0,
    }))


if __name__ == "__main__":
    main()

"""A UDP client's view of the world: snapshots applied against acknowledged baselines (PROTOCOL.md
"Datagrams: UDP through ENet", "Snapshots against the last acknowledged state"), on top of the
1.1 record decoder (examples/python/collide_quantized.py).

Written from the contract, apart from the daemon's and collide-client's code, so the loss test
checks the daemon against an independent reading. Used by tests/integration/test_udp_loss.py and
bench/udp/loss_compare.sh (its byte counter).

    dec = BaselineDecoder(pb, welcome.position_quantum, welcome.velocity_quantum)
    ids = dec.apply(snapshot)      # the ids the snapshot had records for, or None when ignored
    if ids is not None:
        ack(snapshot.tick)         # SnapshotAck: the daemon may now use it as a baseline
    dec.bodies                     # id -> Body (in quanta) after the newest applied snapshot
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "python"))
from collide_quantized import Body, QuantizedDecoder  # noqa: E402


def _copy(b):
    c = Body(b.id)
    for k in Body.__slots__:
        setattr(c, k, getattr(b, k))
    return c


class BaselineDecoder:
    def __init__(self, pb, position_quantum, velocity_quantum, keep=64):
        self.q = QuantizedDecoder(pb, position_quantum, velocity_quantum)
        # The states after the last `keep` applied snapshots, oldest first: the daemon names one
        # of those it knows we acknowledged (it keeps --udp-baselines, 32 by default).
        self.keep = keep
        self.states = {}
        self.tick = None        # the newest applied snapshot's tick
        self.bodies = {}
        self.applied = self.full = self.ignored = 0

    def apply(self, snap):
        if self.tick is not None and snap.tick <= self.tick:
            # Channel 1 is sequenced, so ENet should never hand over an older one.
            raise ValueError("snapshot tick %d after %d" % (snap.tick, self.tick))
        if snap.baseline_tick == 0:
            base = {}  # a full snapshot: every body we held is dropped first
            self.full += 1
        elif snap.baseline_tick in self.states:
            base = self.states[snap.baseline_tick]
        else:
            self.ignored += 1  # a baseline we do not hold: ignored, keep acking what we have
            return None
        # Copies, because the records mutate the bodies in place and the baseline stays in use.
        self.q.bodies = {i: _copy(b) for i, b in base.items()}
        records = self.q.apply(snap)
        self.bodies = self.q.bodies
        self.states[snap.tick] = self.bodies
        while len(self.states) > self.keep:
            del self.states[next(iter(self.states))]
        self.tick = snap.tick
        self.applied += 1
        return [r.id for r in records]

    def view(self):
        """id -> (x, y, vx, vy, last_input_seq, angle, angular velocity) in world units."""
        out = {}
        for i, b in self.bodies.items():
            s = self.q.body_state(b, False)
            out[i] = (b.px * self.q.pq, b.py * self.q.pq, b.vx * self.q.vq, b.vy * self.q.vq,
                      b.seq, s.angle, s.angular_velocity)
        return out

// The client's copy of the bodies in its view, kept from the snapshots' deltas
// (docs/protocol.md "Snapshots: views and deltas"): a body in `bodies` gets its dynamic fields
// replaced (shape, kind and owner are kept from the first time), an id in `removed` is dropped, a
// body absent from a snapshot has not changed. Fields are copied, never proto-merged: a zero is
// not on the wire, and a merge would keep a stale velocity when a body stops. A quantized session
// keeps the same map from its decoder (quantized.ts): the same Body, whichever form came.
import { BodyKind, type BodyStateMsg, type Shape, type SnapshotMsg, type Vec2 } from "./proto";
import type { QuantizedDecoder } from "./quantized";

export interface Point {
  x: number;
  y: number;
}

export interface Body {
  id: number;
  position: Point;
  velocity: Point;
  /** Radians, counter-clockwise, in [-pi, pi]: the body-local `shape` turned by it about
   * `position` is where the body is (docs/protocol.md "Rotation"). */
  angle: number;
  /** Rad/s achieved in the last tick (protocol 1.1 rotation; 0 when not turning). */
  angularVelocity: number;
  /** The newest input of this body applied in the tick of the last change (0 = none yet). */
  lastInputSeq: number;
  shape: Shape | null;
  kind: BodyKind;
  owner: number;
  /** The collision filter, as on the wire: 0 = the default (category 1, mask all bits). */
  category: number;
  mask: number;
  sensor: boolean;
  /** Protocol 1.2 characters (feature "characters"): standing after the last tick, and the body
   * stood on (0: none, or the world's bounds). Always false and 0 for other bodies. */
  grounded: boolean;
  groundId: number;
  /** Protocol 1.2 (feature "one_way"): blocks only what comes from its up side (body-local +y). */
  oneWay: boolean;
  /** The tick of the snapshot that last changed this body. */
  tick: number;
}

export function vec(v: Vec2 | null | undefined): Point {
  return { x: v?.x ?? 0, y: v?.y ?? 0 };
}

/** Applies one snapshot to `bodies`; returns the ids it added, changed and removed. */
export function applySnapshot(
  bodies: Map<number, Body>,
  snap: SnapshotMsg,
): { added: number[]; changed: number[]; removed: number[] } {
  const tick = Number(snap.tick);
  const added: number[] = [];
  const changed: number[] = [];
  const removed: number[] = [];
  for (const id of snap.removed) {
    if (bodies.delete(id)) removed.push(id);
  }
  for (const b of snap.bodies as BodyStateMsg[]) {
    const prev = bodies.get(b.id);
    const body: Body = {
      id: b.id,
      position: vec(b.position),
      velocity: vec(b.velocity),
      angle: b.angle,
      angularVelocity: b.angularVelocity,
      lastInputSeq: b.lastInputSeq,
      shape: b.shape ?? prev?.shape ?? null,
      kind: b.shape ? b.kind : prev ? prev.kind : b.kind || BodyKind.BODY_KIND_MOVING,
      owner: b.shape ? b.owner : prev ? prev.owner : b.owner,
      category: b.shape ? b.category : prev ? prev.category : b.category,
      mask: b.shape ? b.mask : prev ? prev.mask : b.mask,
      sensor: b.shape ? b.sensor : prev ? prev.sensor : b.sensor,
      // dynamic: every record of a character carries them (absent reads false and 0)
      grounded: b.grounded,
      groundId: b.groundId,
      oneWay: b.shape ? b.oneWay : prev ? prev.oneWay : b.oneWay,
      tick,
    };
    bodies.set(b.id, body);
    (prev ? changed : added).push(b.id);
  }
  return { added, changed, removed };
}

/** Applies one quantized snapshot through `decoder` (its `removed`, then its `packed`) and keeps
 * `bodies` the decoder's bodies in world units. Throws QuantizedDecodeError, leaving both as they
 * were, when the snapshot breaks the layout. */
export function applyQuantizedSnapshot(
  bodies: Map<number, Body>,
  decoder: QuantizedDecoder,
  snap: SnapshotMsg,
): { added: number[]; changed: number[]; removed: number[] } {
  const tick = Number(snap.tick);
  const { records, removed } = decoder.applySnapshot(snap);
  const added: number[] = [];
  const changed: number[] = [];
  for (const id of removed) bodies.delete(id);
  for (const r of records) {
    (bodies.has(r.id) ? changed : added).push(r.id);
    bodies.set(r.id, decoder.toBody(r.body, tick));
  }
  return { added, changed, removed };
}

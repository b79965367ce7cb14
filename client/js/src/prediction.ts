// Client-side prediction with reconciliation for one owned body. The game moves its body at once
// (predict) and sends the same input to the server; each snapshot of the body carries the server's
// position and last_input_seq, the newest input it had applied. Reconciliation starts again from
// the server's position, drops the inputs the server has applied (seq <= last_input_seq) and
// replays the rest. Where the server disagreed (a wall clipped the move, another body pushed) the
// prediction follows the server within one round trip; where it agreed nothing visible happens.
import type { CollideClient } from "./client";
import type { Point } from "./world";

/** One local simulation step: where a body at `from` is after moving at `velocity` for `dt` s. */
export type Integrator = (from: Point, velocity: Point, dt: number) => Point;

export interface PendingInput {
  seq: number;
  velocity: Point;
  dt: number;
}

export interface PredictorOptions {
  /** The server's max_speed (Welcome): faster inputs are clamped as the server clamps them. */
  maxSpeed?: number;
  /** The game's local step (default: straight motion, no collisions). Give it the statics you
   * know to predict walls too; the server stays the authority either way. */
  integrate?: Integrator;
}

/** Whether input_seq b is newer than a: serial-number arithmetic on 32 bits (RFC 1982), as the
 * server compares them (docs/protocol.md), so a counter may wrap past 2^32 - 1 to 1. */
export function seqNewer(b: number, a: number): boolean {
  const d = (b - a) >>> 0;
  return d !== 0 && d < 0x80000000;
}

export const straightLine: Integrator = (p, v, dt) => ({ x: p.x + v.x * dt, y: p.y + v.y * dt });

export class Predictor {
  /** The predicted position: the server's last word plus every input it has not applied yet. */
  position: Point;
  /** Inputs sent and not yet applied by the server, oldest first. */
  readonly pending: PendingInput[] = [];
  /** The last position and seq the server reported. */
  serverPosition: Point;
  ackedSeq = 0;
  private readonly maxSpeed: number;
  private readonly integrate: Integrator;

  constructor(start: Point, opts: PredictorOptions = {}) {
    this.position = { ...start };
    this.serverPosition = { ...start };
    this.maxSpeed = opts.maxSpeed ?? Infinity;
    this.integrate = opts.integrate ?? straightLine;
  }

  /** Records input `seq` (as sent with MoveIntent) held for `dt` seconds and predicts it. */
  applyInput(seq: number, velocity: Point, dt: number): Point {
    const v = this.clamp(velocity);
    this.pending.push({ seq, velocity: v, dt });
    this.position = this.integrate(this.position, v, dt);
    return this.position;
  }

  /** The server's state of the body: its position after applying inputs up to lastInputSeq. */
  reconcile(serverPosition: Point, lastInputSeq: number): Point {
    // 0 is never a seq: "no input applied yet" on the server's side, "no ack yet" on ours.
    if (this.ackedSeq !== 0 && (lastInputSeq === 0 || seqNewer(this.ackedSeq, lastInputSeq))) {
      return this.position; // older news than we have
    }
    this.ackedSeq = lastInputSeq;
    this.serverPosition = { ...serverPosition };
    while (lastInputSeq !== 0 && this.pending.length && !seqNewer(this.pending[0].seq, lastInputSeq)) {
      this.pending.shift();
    }
    let p: Point = { ...serverPosition };
    for (const input of this.pending) p = this.integrate(p, input.velocity, input.dt);
    this.position = p;
    return p;
  }

  private clamp(v: Point): Point {
    const speed = Math.hypot(v.x, v.y);
    if (!(speed > this.maxSpeed)) return { x: v.x, y: v.y };
    const k = this.maxSpeed / speed;
    return { x: v.x * k, y: v.y * k };
  }
}

/** A Predictor wired to a client and one of its bodies: step() sends the input and predicts it,
 * snapshots of the body reconcile it. dispose() unhooks it. */
export class PredictedBody extends Predictor {
  private readonly unsubscribe: () => void;

  constructor(
    private readonly client: CollideClient,
    readonly bodyId: number,
    start: Point,
    opts: PredictorOptions = {},
  ) {
    super(start, { maxSpeed: client.welcome?.maxSpeed || undefined, ...opts });
    this.unsubscribe = client.on("snapshot", (s) => {
      if (!s.added.includes(bodyId) && !s.changed.includes(bodyId)) return;
      const b = client.bodies.get(bodyId)!;
      this.reconcile(b.position, b.lastInputSeq);
    });
  }

  /** One frame of input: sends MoveIntent and predicts it for dt seconds. Returns the seq. */
  step(velocity: Point, dt: number): number {
    const seq = this.client.move(this.bodyId, velocity);
    this.applyInput(seq, velocity, dt);
    return seq;
  }

  dispose(): void {
    this.unsubscribe();
  }
}

// An interpolation buffer for remote bodies: it renders them `delayMs` in the past, between the two
// snapshots around that moment, so motion is smooth whatever the network's jitter, at the cost of
// showing others a little late. Snapshots are deltas: a body absent from a snapshot did not move,
// so when it changes again after a pause, the buffer first records its old place at the previous
// snapshot's tick (otherwise the move would be smeared over the whole pause).
import type { CollideClient, SnapshotEvent } from "./client";
import type { Body, Point } from "./world";

interface Sample {
  tick: number;
  x: number;
  y: number;
  angle: number;
}

interface Track {
  samples: Sample[];
  /** The tick the body was added at (not drawn before) and removed at (not drawn from). */
  addedTick: number;
  removedTick: number;
  body: Body;
}

export interface InterpolatedBody {
  id: number;
  position: Point;
  angle: number;
  /** The body as last reported (shape, kind, owner, velocity). */
  body: Body;
}

export interface InterpolationOptions {
  /** How far in the past to render (default 100 ms: a few snapshots at 30-60 Hz). */
  delayMs?: number;
  tickRateHz: number;
  /** History kept per body past the render time (default 1000 ms). */
  keepMs?: number;
}

const now = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

function lerpAngle(a: number, b: number, t: number): number {
  let d = (b - a) % (2 * Math.PI);
  if (d > Math.PI) d -= 2 * Math.PI;
  if (d < -Math.PI) d += 2 * Math.PI;
  return a + d * t;
}

export class InterpolationBuffer {
  delayMs: number;
  readonly tickRateHz: number;
  private readonly keepTicks: number;
  private tracks = new Map<number, Track>();
  private lastTick = -1;
  /** Local time minus server time of a tick, least-delayed snapshot seen (ms). */
  private clockOffset = Infinity;
  private lastArrival = 0;

  constructor(opts: InterpolationOptions) {
    this.delayMs = opts.delayMs ?? 100;
    this.tickRateHz = opts.tickRateHz;
    this.keepTicks = Math.ceil(((opts.keepMs ?? 1000) * opts.tickRateHz) / 1000);
  }

  /** Feeds one snapshot; `bodies` is the client's map after it was applied. */
  push(tick: number, changed: Body[], removed: number[], arrivalMs = now()): void {
    const tickMs = (tick * 1000) / this.tickRateHz;
    // The least-delayed snapshot gives the clock offset; it may creep up 1 ms per second so a
    // drifting clock or a route that got slower is followed.
    const relaxed = this.clockOffset + Math.max(0, arrivalMs - this.lastArrival) / 1000;
    this.clockOffset = Math.min(relaxed, arrivalMs - tickMs);
    this.lastArrival = arrivalMs;
    for (const id of removed) {
      const t = this.tracks.get(id);
      if (t) t.removedTick = tick;
    }
    for (const b of changed) {
      let t = this.tracks.get(b.id);
      if (!t || t.removedTick <= tick) {
        t = { samples: [], addedTick: tick, removedTick: Infinity, body: b };
        this.tracks.set(b.id, t);
      }
      const last = t.samples[t.samples.length - 1];
      if (last && last.tick < this.lastTick && this.lastTick < tick) {
        t.samples.push({ ...last, tick: this.lastTick });
      }
      t.samples.push({ tick, x: b.position.x, y: b.position.y, angle: b.angle });
      t.body = b;
    }
    this.lastTick = tick;
    this.prune(tick - this.keepTicks);
  }

  /** Feeds a client's snapshots from now on; returns the unsubscribe function. */
  attach(client: CollideClient): () => void {
    return client.on("snapshot", (s: SnapshotEvent) => {
      const changed = [...s.added, ...s.changed].map((id) => client.bodies.get(id)!).filter(Boolean);
      this.push(s.tick, changed, s.removed);
    });
  }

  /** The tick (fractional) rendered at local time nowMs: delayMs behind the server. */
  renderTick(nowMs = now()): number {
    if (!isFinite(this.clockOffset)) return this.lastTick;
    return ((nowMs - this.clockOffset - this.delayMs) * this.tickRateHz) / 1000;
  }

  /** Bodies as they were at local time nowMs minus the delay. */
  sample(nowMs = now()): Map<number, InterpolatedBody> {
    return this.sampleAt(this.renderTick(nowMs));
  }

  /** Bodies as they were at a (fractional) tick: interpolated between the samples around it,
   * held at the newest when the tick is past it, absent before they were added or once removed. */
  sampleAt(tick: number): Map<number, InterpolatedBody> {
    const out = new Map<number, InterpolatedBody>();
    for (const [id, t] of this.tracks) {
      if (tick < t.addedTick || tick >= t.removedTick || t.samples.length === 0) continue;
      const s = t.samples;
      let i = s.length - 1;
      while (i > 0 && s[i].tick > tick) i--;
      const a = s[i];
      const b = s[i + 1];
      if (!b || a.tick >= tick) {
        out.set(id, { id, position: { x: a.x, y: a.y }, angle: a.angle, body: t.body });
        continue;
      }
      const f = (tick - a.tick) / (b.tick - a.tick);
      out.set(id, {
        id,
        position: { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f },
        angle: lerpAngle(a.angle, b.angle, f),
        body: t.body,
      });
    }
    return out;
  }

  private prune(oldestTick: number): void {
    for (const [id, t] of this.tracks) {
      if (t.removedTick < oldestTick) {
        this.tracks.delete(id);
        continue;
      }
      // Keep one sample at or before oldestTick: it is the left end of an interpolation there.
      let drop = 0;
      while (drop + 1 < t.samples.length && t.samples[drop + 1].tick <= oldestTick) drop++;
      if (drop) t.samples.splice(0, drop);
    }
  }
}

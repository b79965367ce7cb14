// The play page's prediction of the player's own body, behind a small interface. The
// WorldPredictor predicts with the server's own world code compiled to WebAssembly (ARCHITECTURE.md
// "Prediction with the server's own code"): the page fetches the module the daemon serves
// (GET /dist/collide_world.wasm) and replays the unacknowledged intents through the same tick, so
// where nothing the client cannot see gets in the way the prediction is the server's answer to the
// bit. Without the module (a daemon built without the SDK serves none, or the browser refused it)
// the page falls back to the SDK's Predictor with a local step that keeps the body out of the
// statics the client has seen and inside the world's bounds: the player still never sees their
// body enter a wall, but a slide along one is only approximated.
import {
  BodyKind, Predictor, WorldModule, WorldPredictor,
  type Body, type CollideClient, type Integrator, type Point, type Shape, type SnapshotEvent,
} from "../../src/index";

export interface Prediction {
  /** "world": the server's own code (WorldPredictor); "sdk": the SDK's Predictor and keepOut. */
  kind: "world" | "sdk";
  /** One frame of the player's input: `velocity` (units/s), just sent as MoveIntent `seq`,
   * held for `dt` seconds. */
  applyIntent(seq: number, velocity: Point, dt: number): void;
  /** Where the body is as predicted now: where the page draws it. */
  predictedPosition(): Point;
  /** Every snapshot, once the client has applied it to `client.bodies`. */
  onSnapshot(s: SnapshotEvent): void;
}

/** The player's body: a circle of this radius (the page spawns it). */
export interface OwnBody {
  bodyId: number;
  start: Point;
  radius: number;
}

/** Which prediction the page runs: the server's world when its module loaded, else the SDK's. */
export function createPrediction(client: CollideClient, body: OwnBody, module: WorldModule | null): Prediction {
  if (module) {
    try {
      return new WorldPrediction(client, body, module);
    } catch (e) {
      console.warn(`play: the WorldPredictor did not start (${String(e)}): predicting without it`);
    }
  }
  return new SdkPrediction(client, body);
}

/** The module the daemon serves beside the page, or null (with the reason logged) when there is
 * none: the page then predicts with the SDK's Predictor. */
export async function loadWorldModule(url = "dist/collide_world.wasm"): Promise<WorldModule | null> {
  try {
    const r = await fetch(url);
    if (!r.ok) {
      console.info(`play: no world module at ${url} (${r.status}): predicting without it`);
      return null;
    }
    return await WorldModule.instantiate(await r.arrayBuffer());
  } catch (e) {
    console.info(`play: the world module did not load (${String(e)}): predicting without it`);
    return null;
  }
}

/** The WorldPredictor, fed by the client's snapshots itself (attach). Should the module ever
 * throw (a WasmWorldError the page cannot act on), the page goes on with the SDK's Predictor
 * rather than stop drawing: a frame that throws would end the game. */
class WorldPrediction implements Prediction {
  kind: "world" | "sdk" = "world";
  private readonly predictor: WorldPredictor;
  private fallback: SdkPrediction | null = null;

  constructor(private readonly client: CollideClient, private readonly body: OwnBody, module: WorldModule) {
    this.predictor = WorldPredictor.attach(client, module);
    this.predictor.addOwn(body.bodyId, { position: body.start, angle: 0 });
  }

  applyIntent(seq: number, velocity: Point, dt: number): void {
    if (this.fallback) return this.fallback.applyIntent(seq, velocity, dt);
    this.predictor.input(this.body.bodyId, seq, velocity);
  }

  predictedPosition(): Point {
    if (!this.fallback) {
      try {
        this.predictor.predict();
        return this.predictor.position(this.body.bodyId) ?? this.body.start;
      } catch (e) {
        console.warn(`play: the WorldPredictor failed (${String(e)}): predicting without it`);
        this.predictor.dispose();
        this.fallback = new SdkPrediction(this.client, this.body);
        this.kind = "sdk";
      }
    }
    return this.fallback.predictedPosition();
  }

  onSnapshot(s: SnapshotEvent): void {
    this.fallback?.onSnapshot(s); // else attach() listens to the client's snapshots itself
  }
}

/** The SDK's Predictor, reconciled from the snapshots of the body, stepping with keepOut. */
class SdkPrediction implements Prediction {
  kind: "world" | "sdk" = "sdk";
  private readonly predictor: Predictor;
  private statics: Body[] = [];

  constructor(private readonly client: CollideClient, private readonly body: OwnBody) {
    const w = client.welcome;
    this.predictor = new Predictor(body.start, {
      maxSpeed: w.maxSpeed || undefined,
      integrate: keepOut(() => this.statics, body.radius, w.worldMin, w.worldMax),
    });
    this.refreshStatics();
  }

  applyIntent(seq: number, velocity: Point, dt: number): void {
    this.predictor.applyInput(seq, velocity, dt);
  }

  predictedPosition(): Point {
    return this.predictor.position;
  }

  onSnapshot(s: SnapshotEvent): void {
    if (s.added.length || s.removed.length) this.refreshStatics();
    const id = this.body.bodyId;
    if (!s.added.includes(id) && !s.changed.includes(id)) return;
    const b = this.client.bodies.get(id);
    if (b) this.predictor.reconcile(b.position, b.lastInputSeq);
  }

  private refreshStatics(): void {
    // what blocks the body: not sensors, nor one-way statics (passed from below)
    this.statics = [...this.client.bodies.values()].filter(
      (b) => b.kind === BodyKind.BODY_KIND_STATIC && !b.sensor && !b.oneWay);
  }
}

/** A body's outline in its own frame: a box as its four corners, a polygon as given (convex,
 * counter-clockwise); null for a circle (or no shape). */
export function outline(shape: Shape | null): Point[] | null {
  if (shape?.box) {
    const hx = shape.box.halfExtents?.x ?? 0, hy = shape.box.halfExtents?.y ?? 0;
    return [{ x: -hx, y: -hy }, { x: hx, y: -hy }, { x: hx, y: hy }, { x: -hx, y: hy }];
  }
  if (shape?.polygon) return (shape.polygon.vertices ?? []).map((v) => ({ x: v.x ?? 0, y: v.y ?? 0 }));
  return null;
}

const GAP = 1e-4; // pushed out to a hair past touching, so the next step starts outside

/** q (body-local) pushed out of a convex polygon grown by r, or null when it is clear. */
function pushOutOfPolygon(q: Point, pts: Point[], r: number): Point | null {
  let inside = true;
  let best: Point | null = null, bestD = Infinity; // nearest point of the outline (from outside)
  let exitN: Point = { x: 0, y: 0 }, exitD = -Infinity; // the shallowest face (from inside)
  for (let i = 0; i < pts.length; i++) {
    const a = pts[i], b = pts[(i + 1) % pts.length];
    const ex = b.x - a.x, ey = b.y - a.y, len = Math.hypot(ex, ey) || 1;
    const n = { x: ey / len, y: -ex / len }; // outward for a counter-clockwise polygon
    const side = (q.x - a.x) * n.x + (q.y - a.y) * n.y;
    if (side > 0) inside = false;
    if (side > exitD) { exitD = side; exitN = n; }
    const t = Math.max(0, Math.min(1, ((q.x - a.x) * ex + (q.y - a.y) * ey) / (len * len)));
    const c = { x: a.x + ex * t, y: a.y + ey * t };
    const d = Math.hypot(q.x - c.x, q.y - c.y);
    if (d < bestD) { bestD = d; best = c; }
  }
  if (inside) return { x: q.x + exitN.x * (r - exitD + GAP), y: q.y + exitN.y * (r - exitD + GAP) };
  if (!best || bestD >= r) return null;
  const k = (r + GAP) / bestD;
  return { x: best.x + (q.x - best.x) * k, y: best.y + (q.y - best.y) * k };
}

/** p (a circle of radius r, world) pushed out of one static, or null when it is clear. */
function pushOut(p: Point, r: number, s: Body): Point | null {
  const c = Math.cos(s.angle), sn = Math.sin(s.angle);
  const dx = p.x - s.position.x, dy = p.y - s.position.y;
  const q = { x: c * dx + sn * dy, y: -sn * dx + c * dy }; // into the static's frame
  let out: Point | null;
  const pts = outline(s.shape);
  if (pts) {
    out = pushOutOfPolygon(q, pts, r);
  } else {
    const reach = (s.shape?.circle?.radius ?? 0) + r, d = Math.hypot(q.x, q.y);
    out = d >= reach ? null : d > 0 ? { x: (q.x * (reach + GAP)) / d, y: (q.y * (reach + GAP)) / d } : { x: reach + GAP, y: 0 };
  }
  if (!out) return null;
  return { x: s.position.x + c * out.x - sn * out.y, y: s.position.y + sn * out.x + c * out.y };
}

/** A Predictor step for a circle of radius r: straight along the velocity, in steps of at most
 * a quarter radius, each followed by pushing the circle out of the statics it overlaps and back
 * inside the world's bounds. Other movers are left to the server. */
export function keepOut(statics: () => readonly Body[], r: number, min: Point, max: Point): Integrator {
  return (from, v, dt) => {
    const steps = Math.max(1, Math.ceil((Math.hypot(v.x, v.y) * dt) / (r * 0.25)));
    let p = { ...from };
    for (let i = 0; i < steps; i++) {
      p = { x: p.x + (v.x * dt) / steps, y: p.y + (v.y * dt) / steps };
      for (let pass = 0; pass < 3; pass++) { // a corner between two statics takes more than one
        let moved = false;
        for (const s of statics()) {
          const q = pushOut(p, r, s);
          if (q) { p = q; moved = true; }
        }
        if (!moved) break;
      }
      p = { x: Math.min(max.x - r, Math.max(min.x + r, p.x)), y: Math.min(max.y - r, Math.max(min.y + r, p.y)) };
    }
    return p;
  };
}

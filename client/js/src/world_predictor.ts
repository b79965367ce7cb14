// WorldPredictor: client-side prediction with the server's own world (ARCHITECTURE.md "Prediction
// with the server's own code", docs/wasm.md "WorldPredictor"). A local WasmWorld holds the statics
// and bodies of the client's snapshots; the client's own bodies are kept at the last state the
// server confirmed (saved whole with WasmWorld.saveBody, vertical speed, ground, coyote time and
// a pending jump included), and each frame the predictor restores them there and replays the
// intents the server has not acknowledged, one world tick per server tick, each at the tick the
// server is expected to apply it. Where nothing the client cannot see gets in the way, the
// prediction for a tick is the server's state of that tick to the bit.
//
// The timeline. Snapshot T carries each body's last_input_seq: the newest intent the server had
// applied when it stepped tick T (an intent is applied at the server's next tick after it
// arrives). An intent is recorded with the tick it is expected at: the newest snapshot's tick, plus
// the ticks elapsed since it arrived (floored), plus one, plus a lead learned from the
// acknowledgements (the mode of the last 32 ticks-late, 0 on loopback). When snapshot T is
// processed (the base moves from B to T): with a snapshot every tick (T = B + 1) the intents with
// seq in (last_input_seq at B, last_input_seq at T] are known to have been applied at tick T; the
// predictor restores its own bodies at B, applies exactly those, steps once, and compares with the
// server's state. Equal (within half a quantum for quantized snapshots): the local state, hidden
// parts and all, becomes the base. Different (something the client did not see got in the way):
// the body is placed where the snapshot says (resync), its hidden character state estimated.
// Later intents whose expected tick has passed move to T + 1.
//
// Other movers are placed each replay where their last snapshot put them, and move on at their
// last achieved velocity and turning speed (dead reckoning through the same collisions) or, with
// `others: "still"`, stand where they were; as plain movers whatever they are on the server (a
// character's options are not on the wire).
import { BodyKind, type Shape } from "./proto";
import type { CharacterOptions, CollideClient, MoveOptions, SpawnOptions, Welcome } from "./client";
import { seqNewer } from "./prediction";
import type { WasmWorld, WasmWorldConfig, WorldModule } from "./wasm_world";
import type { Body, Point } from "./world";

/** world.h's WORLD_DEFAULT_MAX_ANGULAR_SPEED (8 pi rad/s), the daemon's --max-angular-speed
 * default: not in Welcome. */
export const DEFAULT_MAX_ANGULAR_SPEED = 25.132741;
/** The daemon's --max-bodies default: not in Welcome, and the static grid's cell follows it. */
export const DEFAULT_MAX_BODIES = 65536;

/** What the predictor takes from Welcome. */
export interface RoomSetup {
  tickRateHz: number;
  worldMin: Point;
  worldMax: Point;
  maxSpeed: number;
  gravity: Point;
}

export interface WorldPredictorOptions {
  /** The daemon's --max-angular-speed (rad/s; not in Welcome): default 8 pi. */
  maxAngularSpeed?: number;
  /** The daemon's --max-bodies (not in Welcome): the local world takes the same capacity, which
   * decides the static grid's cell and so the order statics are met in. Default 65536. */
  maxBodies?: number;
  /** Movers the local world can hold, own and others (default 4096; more in view are left out). */
  maxMovingBodies?: number;
  /** Other movers in the replayed ticks: at their last velocity ("extrapolate", the default) or
   * where their last snapshot put them ("still"). */
  others?: "extrapolate" | "still";
  /** Most ticks one predict() replays (default one second's worth): the prediction stops there
   * when snapshots stop coming. */
  maxReplayTicks?: number;
  /** A server state confirms the local one within these (default 0: float snapshots, to the bit;
   * attach() takes half the quanta for quantized ones). */
  positionTolerance?: number;
  velocityTolerance?: number;
  /** Radians, for angles; angular speeds take velocityTolerance's share of the quantum below. */
  angleTolerance?: number;
  angularVelocityTolerance?: number;
  /** The clock, in ms (default performance.now). */
  now?: () => number;
}

/** What a client knows of an own body at its spawn (SpawnBody, Spawned). */
export interface OwnBodySpawn {
  /** Where the server spawned it (Spawned.position); absent: the first snapshot's place is taken
   * (then a character's hidden state is estimated, not known). */
  position?: Point;
  angle?: number;
  /** Its character options, as sent: not on the wire, so only the spawner knows them. */
  character?: CharacterOptions;
}

/** One own body as predicted for `tick` (a server tick), or as the server last said. */
export interface PredictedState {
  id: number;
  tick: number;
  position: Point;
  velocity: Point;
  angle: number;
  angularVelocity: number;
  grounded: boolean;
  /** The server's id of the body stood on (0: none, or the bounds). */
  groundId: number;
}

/** A prediction checked against the server's state of the same tick. */
export interface PredictionCheck {
  bodyId: number;
  tick: number;
  predicted: PredictedState;
  server: Point;
  /** Distance between the predicted and the server's position. */
  error: number;
  /** Position, velocity, angle, turning speed, grounded and ground all equal to the server's (to
   * the bit for float snapshots; within the tolerances for quantized ones). */
  exact: boolean;
  /** The replay that made it started from a confirmed base and applied every intent at the tick
   * the server applied it: then only what the client could not see can make it inexact. */
  timed: boolean;
  /** Ticks it was replayed from its base. */
  replayed: number;
}

export interface PredictionStats {
  /** Predictions checked against the server's state of their tick. */
  checks: number;
  exact: number;
  timed: number;
  timedExact: number;
  maxError: number;
  sumError: number;
  /** Snapshots that confirmed the local state (it became the base) and that did not (resync). */
  confirms: number;
  resyncs: number;
}

interface PendingIntent {
  bodyId: number;
  seq: number;
  velocity: Point;
  angularVelocity: number;
  jump: boolean;
  /** The server tick it is (expected to be) applied in; 0 before any snapshot. */
  tick: number;
  /** floor(server tick now) when sent, for learning the lead; null for an explicit tick. */
  sentTick: number | null;
  /** The newest snapshot's tick when it was recorded (null before any: then the first snapshot
   * processed after it): unacknowledged for long, it is dropped. */
  since: number | null;
  applied: boolean;
}

interface Rec {
  body: PredictedState;
  base: number;
  baseExact: boolean;
  /** The intents the replay applied, by tick: "k:seq,seq;" from base + 1 to the record's tick. */
  sig: string;
}

interface OwnBody {
  id: number;
  spawn: OwnBodySpawn;
  local: number;
  /** The tick of the first snapshot that showed it (0: not seen yet). */
  firstTick: number;
  /** The server's state at the base (the latest snapshot that had it). */
  server: Body | null;
  /** The local state at the base (saveBody), and whether it was confirmed (not placed). */
  state: Uint8Array | null;
  baseExact: boolean;
  ackedSeq: number;
  /** The intent of ackedSeq: the one a resync holds. */
  heldIntent: PendingIntent | null;
  /** Predictions by tick, made by the replays whose last tick it was. */
  records: Map<number, Rec>;
  /** The intents the server applied, by tick ("seq,seq"), where snapshots came every tick. */
  actual: Map<number, string>;
  predicted: PredictedState | null;
  stats: PredictionStats;
}

interface OtherBody {
  local: number;
  body: Body;
  moving: boolean;
}

interface Entry {
  tick: number;
  bodies: Body[];
  removed: number[];
}

const emptyStats = (): PredictionStats => ({
  checks: 0, exact: 0, timed: 0, timedExact: 0, maxError: 0, sumError: 0, confirms: 0, resyncs: 0,
});

const clockNow = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

/** The local world's config for a room: Welcome's bounds, tick rate, max speed and gravity, and
 * the daemon's defaults for what Welcome does not carry (docs/wasm.md "WorldPredictor"). */
export function predictorWorldConfig(setup: RoomSetup, opts: WorldPredictorOptions = {}): WasmWorldConfig {
  return {
    bounds: { min: { ...setup.worldMin }, max: { ...setup.worldMax } },
    tickRateHz: setup.tickRateHz,
    maxSpeed: setup.maxSpeed,
    gravity: { ...setup.gravity },
    maxAngularSpeed: opts.maxAngularSpeed ?? DEFAULT_MAX_ANGULAR_SPEED,
    maxBodies: opts.maxBodies ?? DEFAULT_MAX_BODIES,
    maxMovingBodies: opts.maxMovingBodies ?? 4096,
    // slide iterations, separation passes, the cell (0: chosen from the bounds and maxBodies as
    // the daemon's world chooses it) and the largest shape: world_config_default's, as the
    // daemon's rooms take them; movers block each other, as there
  };
}

/** Half a step of 1/65536 turn: a quantized angle's rounding. */
const HALF_ANGLE_QUANTUM = Math.PI / 65536;
/** Half of 1/1024 rad/s: a quantized turning speed's rounding. */
const HALF_SPIN_QUANTUM = 1 / 2048;

export class WorldPredictor {
  readonly world: WasmWorld;
  readonly tickRateHz: number;
  /** The base: the newest server tick processed, where own bodies stand confirmed (null before
   * the first snapshot). */
  base: number | null = null;
  /** Ticks an intent is applied later than the newest snapshot's tick + elapsed + 1 (learned). */
  lead = 0;
  /** Called for each prediction checked against the server's state of its tick. */
  onCheck: ((c: PredictionCheck) => void) | null = null;

  private readonly up: Point;
  private readonly othersMove: boolean;
  private readonly maxReplay: number;
  private readonly tol: { p: number; v: number; a: number; w: number };
  private readonly now: () => number;
  private readonly own = new Map<number, OwnBody>();
  private readonly others = new Map<number, OtherBody>();
  private readonly statics = new Map<number, number>();
  /** Local id to the server's, for grounds. */
  private readonly serverIdOf = new Map<number, number>();
  private readonly pending: PendingIntent[] = [];
  private readonly queue: Entry[] = [];
  private latestTick: number | null = null;
  private latestArrival = 0;
  private readonly leadSamples: number[] = [];
  private otherSeq = 0;
  private version = 0;
  private memo = "";
  private client: CollideClient | null = null;
  private unsubscribe: (() => void) | null = null;
  /** An error processing a snapshot in the client's event (attach), thrown by the next predict(). */
  private deferred: unknown = undefined;

  constructor(module: WorldModule, setup: RoomSetup, opts: WorldPredictorOptions = {}) {
    this.world = module.createWorld(predictorWorldConfig(setup, opts));
    this.tickRateHz = setup.tickRateHz;
    const g = setup.gravity, gl = Math.hypot(g.x, g.y);
    this.up = gl > 0 ? { x: -g.x / gl, y: -g.y / gl } : { x: 0, y: 1 };
    this.othersMove = (opts.others ?? "extrapolate") === "extrapolate";
    this.maxReplay = Math.max(1, Math.round(opts.maxReplayTicks ?? setup.tickRateHz));
    const grow = (t: number | undefined): number => (t ? t * (1 + 1e-6) : 0);
    this.tol = {
      p: grow(opts.positionTolerance), v: grow(opts.velocityTolerance),
      a: grow(opts.angleTolerance), w: grow(opts.angularVelocityTolerance),
    };
    this.now = opts.now ?? clockNow;
  }

  /** A predictor fed by a client's snapshots: Welcome's setup, every body the client holds, then
   * each snapshot; spawn() and move() send through the client and record for the prediction. For
   * a quantized session the tolerances are half the Welcome's quanta. */
  static attach(client: CollideClient, module: WorldModule, opts: WorldPredictorOptions = {}): WorldPredictor {
    const w: Welcome = client.welcome;
    const q = client.quantized !== null;
    const p = new WorldPredictor(module, w, {
      ...(q ? {
        positionTolerance: w.positionQuantum / 2, velocityTolerance: w.velocityQuantum / 2,
        angleTolerance: HALF_ANGLE_QUANTUM, angularVelocityTolerance: HALF_SPIN_QUANTUM,
      } : {}),
      ...opts,
    });
    p.client = client;
    if (client.bodies.size) p.observe(client.tick, [...client.bodies.values()], []);
    p.unsubscribe = client.on("snapshot", (s) => {
      const bodies: Body[] = [];
      for (const id of s.added) bodies.push(client.bodies.get(id)!);
      for (const id of s.changed) bodies.push(client.bodies.get(id)!);
      // (observe may process queued snapshots, which can throw a WasmWorldError: kept for the
      // next predict() to throw, not thrown through the client's event, which would cost the
      // client's other listeners this snapshot)
      try {
        p.observe(s.tick, bodies, s.removed);
      } catch (e) {
        p.deferred ??= e;
      }
    });
    return p;
  }

  // ---- feeding ---------------------------------------------------------------------------------

  /** One snapshot, after the client applied it: the bodies it added or changed (as the client's
   * Body records, which a snapshot replaces and never mutates) and the ids it removed. Queued and
   * processed by the next predict() (or at once past 8 waiting), so that an own body registered
   * just after its first snapshot (spawn's reply and that snapshot may come in one read) is
   * predicted from its spawn. */
  observe(tick: number, bodies: Body[], removed: number[], arrivalMs = this.now()): void {
    if (this.latestTick !== null && tick <= this.latestTick) return; // older news
    this.latestTick = tick;
    this.latestArrival = arrivalMs;
    this.queue.push({ tick, bodies, removed });
    if (this.queue.length > 8) this.flush();
  }

  /** Registers an own body (its id from Spawned). Intents recorded for it are predicted. */
  addOwn(bodyId: number, spawn: OwnBodySpawn = {}): void {
    if (this.own.has(bodyId)) return;
    const o: OwnBody = {
      id: bodyId, spawn, local: 0, firstTick: 0, server: null, state: null, baseExact: false,
      ackedSeq: 0, heldIntent: null, records: new Map(), actual: new Map(), predicted: null,
      stats: emptyStats(),
    };
    this.own.set(bodyId, o);
    // Already seen and taken for another's: from here on it is ours, placed where it was seen.
    const other = this.others.get(bodyId);
    if (other) {
      this.forgetOther(bodyId);
      o.firstTick = this.base ?? 0;
      this.resync(o, other.body);
    }
    this.version++;
  }

  /** Stops predicting a body (it keeps living on the server). */
  removeOwn(bodyId: number): void {
    const o = this.own.get(bodyId);
    if (!o) return;
    if (o.local) this.despawnLocal(o.local);
    this.own.delete(bodyId);
    for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i].bodyId === bodyId) this.pending.splice(i, 1);
    this.version++;
  }

  /** Records an intent sent for an own body (MoveIntent with this seq); returns the server tick it
   * is expected at. `tick` overrides the estimate (a game with its own server-tick clock). */
  input(bodyId: number, seq: number, velocity: Point, angularVelocity = 0, jump = false,
        opts: { tick?: number; now?: number } = {}): number {
    if (!this.own.has(bodyId)) throw new Error(`body ${bodyId} is not predicted: addOwn it first`);
    let tick = 0;
    let sentTick: number | null = null;
    if (opts.tick !== undefined) {
      tick = opts.tick;
    } else if (this.latestTick !== null) {
      sentTick = Math.floor(this.tickNow(opts.now ?? this.now()));
      tick = sentTick + 1 + this.lead;
    }
    if (tick && this.base !== null) tick = Math.max(tick, this.base + 1);
    for (const p of this.pending) if (p.bodyId === bodyId && tick) tick = Math.max(tick, p.tick);
    this.pending.push({
      bodyId, seq, velocity: { ...velocity }, angularVelocity, jump, tick, sentTick,
      since: this.latestTick ?? this.base ?? null, applied: false,
    });
    this.version++;
    return tick;
  }

  // ---- a client's helpers (attach) ---------------------------------------------------------------

  /** client.spawn, then addOwn with what the spawn said (position, angle, character options). */
  async spawn(shape: Shape, opts: SpawnOptions = {}): Promise<{ bodyId: number; position: Point }> {
    const r = await this.attached().spawn(shape, opts);
    this.addOwn(r.bodyId, { position: r.position, angle: opts.angle ?? 0, character: opts.character });
    return r;
  }

  /** client.move, recorded for the prediction; returns the input_seq. */
  move(bodyId: number, velocity: Point, angularVelocity = 0, opts: MoveOptions = {}): number {
    const seq = this.attached().move(bodyId, velocity, angularVelocity, opts);
    this.input(bodyId, seq, velocity, angularVelocity, opts.jump ?? false);
    return seq;
  }

  // ---- predicting --------------------------------------------------------------------------------

  /** The server tick now, as the newest snapshot and the time since it arrived tell it. */
  tickNow(now = this.now()): number {
    if (this.latestTick === null) return 0;
    return this.latestTick + Math.max(0, now - this.latestArrival) * this.tickRateHz / 1000;
  }

  /** The tick an intent sent now is expected at: what a frame drawn now shows. */
  targetTick(now = this.now()): number {
    return Math.floor(this.tickNow(now)) + 1 + this.lead;
  }

  /** Processes the snapshots waiting, then replays from the base to the target tick (the tick an
   * intent sent now would be applied at, or the last intent's, at most maxReplayTicks ahead).
   * Returns that tick (the base when nothing is predicted yet). */
  predict(now = this.now()): number {
    if (this.deferred !== undefined) {
      const e = this.deferred;
      this.deferred = undefined;
      throw e;
    }
    this.flush();
    if (this.base === null) return 0;
    let target = this.latestTick === null ? this.base : this.targetTick(now);
    for (const p of this.pending) if (!p.applied) target = Math.max(target, p.tick);
    target = Math.max(this.base, Math.min(target, this.base + this.maxReplay));
    const key = `${this.base}:${target}:${this.version}`;
    if (key === this.memo) return target;
    this.memo = key;
    this.replay(target);
    return target;
  }

  /** An own body as last predicted (or as the server last said, before any prediction). */
  body(bodyId: number): PredictedState | undefined {
    const o = this.own.get(bodyId);
    if (!o) return undefined;
    if (o.predicted) return o.predicted;
    return o.server ? this.fromServer(o.server, this.base ?? 0) : undefined;
  }

  position(bodyId: number): Point | undefined {
    return this.body(bodyId)?.position;
  }

  stats(bodyId: number): PredictionStats | undefined {
    const s = this.own.get(bodyId)?.stats;
    return s ? { ...s } : undefined;
  }

  /** Intents recorded and not yet applied by the server. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** What the predictor holds, for tests of its bookkeeping. */
  get sizes(): { pending: number; queue: number; records: number; actual: number; others: number; statics: number; bodies: number } {
    let records = 0, actual = 0;
    for (const o of this.own.values()) {
      records += o.records.size;
      actual += o.actual.size;
    }
    return {
      pending: this.pending.length, queue: this.queue.length, records, actual, others: this.others.size,
      statics: this.statics.size, bodies: this.world.bodyCount,
    };
  }

  /** Unhooks the client and frees the local world (its memory lives in the module). */
  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.world.dispose();
  }

  // ---- the timeline --------------------------------------------------------------------------------

  private flush(): void {
    while (this.queue.length) this.process(this.queue.shift()!);
  }

  private process(e: Entry): void {
    const T = e.tick;
    if (this.base !== null && T <= this.base) return;
    // What entered the view first (statics in id order: the order the server's grid has them),
    // so the step into T meets them; own bodies' states at T aside.
    const incoming = new Map<number, Body>();
    const adds: Body[] = [];
    for (const b of e.bodies) {
      const o = this.own.get(b.id);
      if (o) {
        incoming.set(b.id, b);
        if (!o.firstTick) o.firstTick = T;
      } else if (!this.statics.has(b.id) && !this.others.has(b.id)) {
        adds.push(b);
      }
    }
    adds.sort((a, b) => a.id - b.id);
    for (const b of adds) this.addSeen(b);
    if (this.base === null) {
      for (const [id, b] of incoming) this.resync(this.own.get(id)!, b);
      this.base = T;
    } else {
      this.confirm(T, incoming);
    }
    // The others as T left them (the next replays place them there), and what left the view.
    for (const b of e.bodies) {
      const other = this.others.get(b.id);
      if (other) other.body = b;
    }
    for (const id of e.removed) {
      if (this.own.has(id)) this.removeOwn(id);
      else if (this.statics.has(id)) {
        this.despawnLocal(this.statics.get(id)!);
        this.statics.delete(id);
      } else this.forgetOther(id);
    }
    this.version++;
  }

  /** Moves the base from B to T: the replay of what the server applied, checked against it. */
  private confirm(T: number, incoming: Map<number, Body>): void {
    const B = this.base!;
    const everyTick = T === B + 1;
    const ackAt = new Map<number, number>();
    for (const o of this.own.values()) ackAt.set(o.id, incoming.get(o.id)?.lastInputSeq ?? o.ackedSeq);
    // Which intents tick T had applied, and when: exactly (T) with a snapshot every tick, else
    // the estimate kept within (B, T]; the others are later than T.
    const appliedAt = new Map<number, string[]>();
    const last = new Map<number, number>();
    for (const p of this.pending) {
      const acked = ackAt.get(p.bodyId) ?? 0;
      if (acked !== 0 && !seqNewer(p.seq, acked)) {
        if (everyTick) {
          if (p.sentTick !== null) this.learn(T - 1 - p.sentTick);
          p.tick = T;
        } else {
          p.tick = Math.min(T, Math.max(B + 1, p.tick, last.get(p.bodyId) ?? 0));
        }
        p.applied = true;
        last.set(p.bodyId, p.tick);
        if (everyTick) {
          const list = appliedAt.get(p.bodyId) ?? [];
          list.push(String(p.seq));
          appliedAt.set(p.bodyId, list);
        }
      } else if (p.tick <= T) {
        p.tick = T + 1;
      }
    }
    // An intent not acknowledged within twice the replay window never will be (refused, rate
    // limited, lost with its body): dropped, so a predictor that lives long does not grow.
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i];
      p.since ??= T; // recorded before any snapshot: its age counts from the first one
      if (!p.applied && p.since < T - 2 * this.maxReplay) this.pending.splice(i, 1);
    }
    // The replay of (B, T] from the base, the bodies first seen in it spawned where the server
    // spawned them, before the tick that first showed them.
    this.restoreOwn();
    this.placeOthers();
    for (let k = B + 1; k <= T; k++) {
      for (const o of this.own.values()) {
        // (first seen at T; between snapshots the spawn's tick is not known: the latest it can be)
        const spawnTick = Math.min(T, Math.max(B + 1, o.firstTick));
        if (!o.local && o.firstTick && k === spawnTick) this.spawnOwn(o, incoming.get(o.id) ?? o.server);
      }
      for (const p of this.pending) if (p.applied && p.tick === k) this.applyIntent(p);
      this.world.step(1);
    }
    // Checked against the server: confirmed, or placed where it says.
    for (const o of this.own.values()) {
      if (everyTick) o.actual.set(T, (appliedAt.get(o.id) ?? []).join(","));
      const server = incoming.get(o.id) ?? o.server;
      o.ackedSeq = ackAt.get(o.id) ?? o.ackedSeq;
      if (!server) continue;
      const rec = o.records.get(T);
      if (rec) this.check(o, T, rec, server);
      const local = o.local ? this.read(o, T) : null;
      if (local && this.matches(local, server)) {
        o.state = this.world.saveBody(o.local, o.state ?? undefined);
        o.baseExact = true;
        o.stats.confirms++;
      } else {
        this.resync(o, server);
        o.stats.resyncs++;
      }
      o.server = server;
      for (const t of o.records.keys()) if (t <= T) o.records.delete(t);
      for (const t of o.actual.keys()) if (t < T - this.maxReplay) o.actual.delete(t);
    }
    // The applied intents are in the base now; each body's newest is the one a resync holds.
    for (let i = 0; i < this.pending.length;) {
      const p = this.pending[i];
      if (!p.applied) {
        i++;
        continue;
      }
      const o = this.own.get(p.bodyId);
      if (o) o.heldIntent = p;
      this.pending.splice(i, 1);
    }
    this.base = T;
  }

  /** The replay of (base, target]: own bodies from their base, the pending intents at their ticks;
   * the prediction is the state after `target`. */
  private replay(target: number): void {
    const B = this.base!;
    this.restoreOwn();
    this.placeOthers();
    const sig = new Map<number, string>();
    for (let k = B + 1; k <= target; k++) {
      const seqs = new Map<number, string[]>();
      for (const p of this.pending) {
        if (p.applied || p.tick !== k) continue;
        this.applyIntent(p);
        const list = seqs.get(p.bodyId) ?? [];
        list.push(String(p.seq));
        seqs.set(p.bodyId, list);
      }
      for (const o of this.own.values()) sig.set(o.id, `${sig.get(o.id) ?? ""}${k}:${(seqs.get(o.id) ?? []).join(",")};`);
      this.world.step(1);
    }
    for (const o of this.own.values()) {
      if (!o.local || !o.state) {
        o.predicted = null;
        continue;
      }
      const body = this.read(o, target);
      o.predicted = body;
      if (target > B) o.records.set(target, { body, base: B, baseExact: o.baseExact, sig: sig.get(o.id) ?? "" });
    }
  }

  /** A prediction of tick T against the server's state of T. */
  private check(o: OwnBody, T: number, rec: Rec, server: Body): void {
    let actual = "";
    let known = true;
    for (let k = rec.base + 1; k <= T; k++) {
      const a = o.actual.get(k);
      if (a === undefined) known = false;
      actual += `${k}:${a ?? "?"};`;
    }
    const timed = known && rec.baseExact && actual === rec.sig;
    const p = rec.body.position, s = server.position;
    const error = Math.hypot(p.x - s.x, p.y - s.y);
    const exact = this.matches(rec.body, server);
    const st = o.stats;
    st.checks++;
    if (exact) st.exact++;
    if (timed) st.timed++;
    if (timed && exact) st.timedExact++;
    st.maxError = Math.max(st.maxError, error);
    st.sumError += error;
    this.onCheck?.({
      bodyId: o.id, tick: T, predicted: rec.body, server: { ...s }, error, exact, timed, replayed: T - rec.base,
    });
  }

  /** Whether a local state is the server's (within the tolerances). */
  private matches(b: PredictedState, s: Body): boolean {
    const t = this.tol;
    const near = (x: number, y: number, tol: number): boolean => (tol === 0 ? x === y : Math.abs(x - y) <= tol);
    let da = Math.abs(b.angle - s.angle) % (2 * Math.PI);
    if (da > Math.PI) da = 2 * Math.PI - da;
    return near(b.position.x, s.position.x, t.p) && near(b.position.y, s.position.y, t.p) &&
      near(b.velocity.x, s.velocity.x, t.v) && near(b.velocity.y, s.velocity.y, t.v) &&
      (t.a === 0 ? b.angle === s.angle : da <= t.a) && near(b.angularVelocity, s.angularVelocity, t.w) &&
      b.grounded === s.grounded && b.groundId === s.groundId;
  }

  /** A tick-late sample of an acknowledged intent; the lead is the most frequent of the last 32
   * (the larger on a tie: late is the safer guess for what has not been seen). */
  private learn(sample: number): void {
    this.leadSamples.push(sample);
    if (this.leadSamples.length > 32) this.leadSamples.shift();
    const count = new Map<number, number>();
    for (const s of this.leadSamples) count.set(s, (count.get(s) ?? 0) + 1);
    let best = 0, bestN = -1;
    for (const [s, n] of count) if (n > bestN || (n === bestN && s > best)) [best, bestN] = [s, n];
    this.lead = Math.max(0, best);
  }

  // ---- the local world ---------------------------------------------------------------------------

  private restoreOwn(): void {
    for (const o of this.own.values()) if (o.local && o.state) this.world.restoreBody(o.local, o.state);
  }

  /** Other movers where their last snapshot put them, moving at its velocity (or still). */
  private placeOthers(): void {
    for (const o of this.others.values()) {
      if (!o.moving) continue;
      const b = o.body;
      try {
        this.world.place(o.local, b.position, b.angle, b.velocity, b.angularVelocity);
        this.otherSeq = (this.otherSeq % 0xffffffff) + 1;
        this.world.setIntent(o.local, {
          velocity: this.othersMove ? b.velocity : { x: 0, y: 0 },
          angularVelocity: this.othersMove ? b.angularVelocity : 0,
          inputSeq: this.otherSeq,
        });
      } catch {
        // a place the local world refuses (it never should): the body stays where it was
      }
    }
  }

  private applyIntent(p: PendingIntent): void {
    const o = this.own.get(p.bodyId);
    if (!o?.local) return;
    this.world.setIntent(o.local, {
      velocity: p.velocity, angularVelocity: p.angularVelocity, inputSeq: p.seq, jump: p.jump,
    });
  }

  /** A body the view brought: a static of the world, or another's mover. */
  private addSeen(b: Body): void {
    if (!b.shape) return;
    const opts = {
      position: b.position, angle: b.angle, oneWay: b.oneWay, category: b.category, mask: b.mask, sensor: b.sensor,
    };
    try {
      if (b.kind === BodyKind.BODY_KIND_STATIC) {
        const local = this.world.addStatic(b.shape, opts);
        this.statics.set(b.id, local);
        this.serverIdOf.set(local, b.id);
      } else {
        const local = this.world.spawn(b.shape, opts);
        this.others.set(b.id, { local, body: b, moving: true });
        this.serverIdOf.set(local, b.id);
      }
    } catch {
      // full, or a shape the local world refuses: left out of the prediction
    }
  }

  private forgetOther(id: number): void {
    const o = this.others.get(id);
    if (!o) return;
    this.despawnLocal(o.local);
    this.others.delete(id);
  }

  private despawnLocal(local: number): void {
    try {
      this.world.despawn(local);
    } catch {
      // already gone
    }
    this.serverIdOf.delete(local);
  }

  private localIdOf(serverId: number): number {
    if (!serverId) return 0;
    const o = this.own.get(serverId);
    if (o) return o.local;
    return this.statics.get(serverId) ?? this.others.get(serverId)?.local ?? 0;
  }

  /** An own body spawned in the local world as the server spawned it: at its spawn place, with the
   * snapshot's shape and flags and the spawner's character options. */
  private spawnOwn(o: OwnBody, seen: Body | null): boolean {
    if (!seen?.shape) return false;
    const at = o.spawn.position ?? seen.position;
    o.local = this.world.spawn(seen.shape, {
      position: at, angle: o.spawn.position ? o.spawn.angle ?? 0 : seen.angle, oneWay: seen.oneWay,
      category: seen.category, mask: seen.mask, sensor: seen.sensor, character: o.spawn.character,
    });
    this.serverIdOf.set(o.local, o.id);
    return true;
  }

  /** Places an own body where the server says (its hidden character state estimated: vertical
   * speed 0 on the ground, else its velocity along up), holding its last acknowledged intent. */
  private resync(o: OwnBody, s: Body): void {
    if (!o.local) {
      const spawn = o.spawn;
      o.spawn = { ...spawn, position: undefined }; // placed below, not from its spawn
      const made = this.spawnOwn(o, s);
      o.spawn = spawn;
      if (!made) return;
    }
    this.world.place(o.local, s.position, s.angle, s.velocity, s.angularVelocity);
    if (o.spawn.character && (this.up.x !== 0 || this.up.y !== 0)) {
      const vertical = s.grounded ? 0 : s.velocity.x * this.up.x + s.velocity.y * this.up.y;
      this.world.placeCharacter(o.local, vertical, s.grounded, this.localIdOf(s.groundId));
    }
    const held = o.heldIntent;
    const cur = this.world.body(o.local);
    if (cur && s.lastInputSeq && cur.lastInputSeq !== s.lastInputSeq) {
      // the local body holds another intent than the server's: the one of its last_input_seq
      const v = held && held.seq === s.lastInputSeq ? held.velocity : s.velocity;
      const w = held && held.seq === s.lastInputSeq ? held.angularVelocity : s.angularVelocity;
      this.world.setIntent(o.local, { velocity: v, angularVelocity: w, inputSeq: s.lastInputSeq });
    }
    o.ackedSeq = s.lastInputSeq;
    o.server = s;
    o.state = this.world.saveBody(o.local, o.state ?? undefined);
    o.baseExact = false;
  }

  private read(o: OwnBody, tick: number): PredictedState {
    const b = this.world.body(o.local)!;
    return {
      id: o.id, tick, position: b.position, velocity: b.velocity, angle: b.angle,
      angularVelocity: b.angularVelocity, grounded: b.grounded,
      groundId: b.groundId ? this.serverIdOf.get(b.groundId) ?? 0 : 0,
    };
  }

  private fromServer(s: Body, tick: number): PredictedState {
    return {
      id: s.id, tick, position: { ...s.position }, velocity: { ...s.velocity }, angle: s.angle,
      angularVelocity: s.angularVelocity, grounded: s.grounded, groundId: s.groundId,
    };
  }

  private attached(): CollideClient {
    if (!this.client) throw new Error("WorldPredictor.spawn and move need WorldPredictor.attach(client, ...)");
    return this.client;
  }
}

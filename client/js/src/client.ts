// CollideClient: one session with collided over any Transport. connect() sends Hello and resolves
// on Welcome; requests with a reply (spawn, ping, the queries) return promises matched by
// request_id; moves return their input_seq; snapshots keep `bodies` (world.ts) and are emitted as
// typed events.
import { Emitter } from "./events";
import {
  BodyKind,
  ErrorCode,
  PROTOCOL_VERSION,
  errorCodeName,
  pb,
  uint64ToNumber,
  type ClientMessageProps,
  type QueryResultMsg,
  type Shape,
  type SnapshotMsg,
  type WelcomeMsg,
} from "./proto";
import { QuantizedDecodeError, QuantizedDecoder } from "./quantized";
import type { Transport } from "./transport";
import { applyQuantizedSnapshot, applySnapshot, vec, type Body, type Point } from "./world";

/** An Error sent by the daemon (or a local failure: code UNSPECIFIED, e.g. the connection closed). */
export class CollideError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fatal: boolean,
    readonly requestId: number,
    /** 1.1 batches: the failing item's position + 1; 0 = not a batch item. */
    readonly index = 0,
  ) {
    super(`${errorCodeName(code)}: ${message}`);
    this.name = "CollideError";
  }
  get codeName(): string {
    return errorCodeName(this.code);
  }
}

export interface Welcome {
  clientId: number;
  tickRateHz: number;
  tick: number;
  worldMin: Point;
  worldMax: Point;
  maxSpeed: number;
  maxBodiesPerClient: number;
  admin: boolean;
  room: string;
  features: string[];
  /** The snapshot rate granted, rounded to whole Hz (the exact rate is tickRateHz / k). */
  snapshotRateHz: number;
  /** The quanta of quantized snapshots (units, units/s); 0 when they were not granted. */
  positionQuantum: number;
  velocityQuantum: number;
  /** The room's gravity (units/s^2, 1.2); (0, 0) when it has none: characters then never stand.
   * "Up" is minus gravity. */
  gravity: Point;
  raw: WelcomeMsg;
}

export interface SnapshotEvent {
  tick: number;
  /** Ids new to this client, changed, and gone (despawned or out of view) in this snapshot. */
  added: number[];
  changed: number[];
  removed: number[];
  /** The snapshot as decoded. */
  raw: SnapshotMsg;
}

export interface PongResult {
  rttMs: number;
  serverTimeUs: number;
  tick: number;
}

export interface ClientEvents {
  snapshot: (s: SnapshotEvent) => void;
  /** Every Error the daemon sends, also those that reject a promise. */
  error: (e: CollideError) => void;
  goodbye: (reason: string) => void;
  /** The connection is gone; reason "" after close(). */
  close: (reason: string, code?: number) => void;
}

export interface ConnectOptions {
  /** Hello.token: the daemon's shared token (`--token`, `--admin-token`), or a ticket (PROTOCOL.md
   * 1.2), the JWT the game's backend signed for this player and `room`; either is sent as it is.
   * A refused ticket (expired, bad signature, another room) rejects the connect with a fatal
   * `UNAUTHENTICATED` CollideError whose message names the check: ask the backend for a new one.
   * The same ticket may be used again to reconnect until it expires. */
  token?: string;
  room?: string;
  name?: string;
  /** Snapshots at about this rate (the nearest tick_rate / k); 0 or absent = every tick. */
  snapshotRateHz?: number;
  /** Ask for quantized snapshots (Snapshot.packed): 4x+ fewer bytes, values rounded to the
   * Welcome's quanta. `bodies` and the snapshot events look the same either way. */
  quantized?: boolean;
  /** How long to wait for Welcome, and for each reply (default 10 s). */
  timeoutMs?: number;
}

/** SpawnBody.character (protocol 1.2, feature "characters"): zeros and absent fields take the
 * server's defaults (docs/protocol.md "Characters"). */
export interface CharacterOptions {
  /** Radians from up a walkable surface may lean (default 0.7854, 45 degrees). */
  maxSlope?: number;
  stepHeight?: number;
  snapDistance?: number;
  /** Speed along up a jump sets (default 0: cannot jump). */
  jumpSpeed?: number;
  /** Multiplies the world's gravity (default 1). */
  gravityScale?: number;
  jumpBufferMs?: number;
  coyoteMs?: number;
}

export interface SpawnOptions {
  position?: Point;
  angle?: number;
  /** Default moving; static bodies are for admins. */
  kind?: BodyKind;
  /** Makes a moving body a character ({} for every default); a static cannot be one. */
  character?: CharacterOptions;
  /** A one-way body (statics and movers, 1.2). */
  oneWay?: boolean;
}

export interface MoveOptions {
  /** A character's jump (1.2): taken on the ground (or within coyote time), at most once for
   * this move's input_seq, never in the air; a body that is not a character ignores it. */
  jump?: boolean;
}

/** QueryFilter (protocol 1.1 "queries"): which bodies a query sees. Absent or empty fields do not
 * restrict; sensors are left out unless `includeSensors`. */
export interface QueryFilter {
  /** Only bodies of these kinds (STATIC, MOVING; another value is refused with BAD_REQUEST). */
  kinds?: BodyKind[];
  /** Only bodies whose category shares a bit with it (0 = any). */
  categoryMask?: number;
  /** Bodies to leave out (e.g. the shooter's own), in any order, unknown ids allowed. */
  excludeIds?: number[];
  /** At most this many hits (0 = no cap of its own; the server's caps still hold). */
  maxResults?: number;
  includeSensors?: boolean;
}

export interface QueryOptions {
  filter?: QueryFilter;
  /** Lag compensation (the protocol's at_tick): answer against the movers as they were after this
   * tick, e.g. the tick of the snapshot the shooter saw. Absent or 0 = the newest tick. A tick
   * older than the server's history (--history-ms, 500 ms by default) rejects with
   * HISTORY_EXPIRED, a tick after the newest with BAD_REQUEST. Statics are taken as they are now. */
  atTick?: number;
}

export interface CastOptions extends QueryOptions {
  /** Every body along the way (once each, sorted by fraction then id) instead of the first hit. */
  all?: boolean;
}

export interface ShapeQueryOptions extends QueryOptions {
  /** Radians, counter-clockwise: turns the query shape about its position, as a spawn angle. */
  angle?: number;
}

export interface ShapeCastOptions extends CastOptions, ShapeQueryOptions {}

/** One body a query found (the protocol's Hit). */
export interface Hit {
  bodyId: number;
  /** On the hit body's surface (a ray or cast that starts inside a body: the start). */
  point: Point;
  /** Unit, out of the hit body; (0, 0) for a ray starting inside it. For an overlap, or a cast
   * starting overlapped, normal * depth is the shortest push of the query shape out of the body. */
  normal: Point;
  /** Of the translation, 0..1: the hit is at origin + fraction * translation (0 for overlaps). */
  fraction: number;
  /** The overlap's depth; 0 for a hit along the way. */
  depth: number;
}

/** The answer to a query (the protocol's QueryResult). */
export interface QueryResult {
  /** The tick the answer was evaluated at: atTick, or the newest tick for "now". */
  tick: number;
  /** Casts: the nearest hit alone (none: empty), or with `all` every one by fraction then id.
   * Overlaps: every overlapping body, by id. */
  hits: Hit[];
  /** More hits existed than the cap (maxResults, the server's --max-query-results). */
  truncated: boolean;
}

interface Pending {
  resolve: (m: InstanceType<typeof pb.ServerMessage>) => void;
  reject: (e: CollideError) => void;
  timer: ReturnType<typeof setTimeout>;
}

const now = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

export class CollideClient extends Emitter<ClientEvents> {
  /** Bodies in view, by id, as of the last snapshot. */
  readonly bodies = new Map<number, Body>();
  welcome!: Welcome;
  /** The tick of the last snapshot (Welcome's tick before the first). */
  tick = 0;
  closed = false;
  /** The decoder of a quantized session (its bodies in quanta, exactly the server's), null for a
   * float one (not asked for, or a server that did not grant it). */
  quantized: QuantizedDecoder | null = null;
  private nextRequestId = 1;
  private inputSeq = 0;
  private pending = new Map<number, Pending>();
  private readonly timeoutMs: number;

  private constructor(
    private readonly transport: Transport,
    opts: ConnectOptions,
  ) {
    super();
    this.timeoutMs = opts.timeoutMs ?? 10000;
  }

  /** Opens a session over `transport`: Hello, then resolves on Welcome (rejects on Error/close). */
  static open(transport: Transport, opts: ConnectOptions = {}): Promise<CollideClient> {
    const c = new CollideClient(transport, opts);
    transport.onMessage = (m) => c.receive(m);
    transport.onClose = (reason, code) => c.closedBy(reason, code);
    return new Promise<CollideClient>((resolve, reject) => {
      const hello = c.request(
        {
          hello: {
            protocolVersion: PROTOCOL_VERSION,
            name: opts.name ?? "",
            token: opts.token ?? "",
            room: opts.room ?? "",
            snapshotRateHz: opts.snapshotRateHz ?? 0,
            quantized: opts.quantized ?? false,
          },
        },
        false,
      );
      transport.onOpen = () => c.flushHello();
      hello.then(
        (m) => {
          const w = m.welcome as WelcomeMsg | null;
          if (!w) {
            transport.close();
            reject(new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, `Hello answered by ${m.msg}, not Welcome`, true, m.requestId));
            return;
          }
          c.welcome = {
            clientId: w.clientId,
            tickRateHz: w.tickRateHz,
            tick: Number(w.tick),
            worldMin: vec(w.worldMin),
            worldMax: vec(w.worldMax),
            maxSpeed: w.maxSpeed,
            maxBodiesPerClient: w.maxBodiesPerClient,
            admin: w.admin,
            room: w.room,
            features: [...w.features],
            // A daemon before 1.1 leaves it out: every tick.
            snapshotRateHz: w.snapshotRateHz || w.tickRateHz,
            positionQuantum: w.positionQuantum,
            velocityQuantum: w.velocityQuantum,
            gravity: vec(w.gravity),
            raw: w as WelcomeMsg,
          };
          // Quanta are set only for a client granted quantized snapshots.
          if (opts.quantized && w.positionQuantum > 0) c.quantized = new QuantizedDecoder(w.positionQuantum, w.velocityQuantum);
          c.tick = Number(w.tick);
          resolve(c);
        },
        (e) => {
          transport.close();
          reject(e);
        },
      );
    });
  }

  private helloBytes: Uint8Array | null = null;
  private flushHello(): void {
    if (this.helloBytes) this.transport.send(this.helloBytes);
    this.helloBytes = null;
  }

  /** Spawns a body; resolves with its id and where the server put it. */
  spawn(shape: Shape, opts: SpawnOptions = {}): Promise<{ bodyId: number; position: Point }> {
    return this.request({
      spawn: {
        kind: opts.kind ?? BodyKind.BODY_KIND_MOVING,
        shape,
        position: opts.position,
        angle: opts.angle ?? 0,
        character: opts.character,
        oneWay: opts.oneWay ?? false,
      },
    }).then((m) => {
      const s = m.spawned as InstanceType<typeof pb.Spawned>;
      return { bodyId: s.bodyId, position: vec(s.position) };
    });
  }

  /** Sets a body's velocity (units/s) and turning speed (rad/s, counter-clockwise; 1.1
   * feature "rotation", clamped to the server's --max-angular-speed), both held until replaced: a
   * move without angularVelocity stops the turning. Returns the input_seq it was sent with: a
   * snapshot whose last_input_seq is at least this has applied it. Errors (not the owner, unknown
   * body) arrive as `error` events with the returned seq as request_id. */
  move(bodyId: number, velocity: Point, angularVelocity = 0, opts: MoveOptions = {}): number {
    // 1 .. 2^32 - 1, then 1 again: the server compares seqs modulo 2^32 and 0 means "none".
    const seq = (this.inputSeq = (this.inputSeq % 0xffffffff) + 1);
    this.send({ requestId: seq, move: { bodyId, inputSeq: seq, velocity, angularVelocity, jump: opts.jump ?? false } });
    return seq;
  }

  /** Removes a body (no reply: its id shows in a snapshot's `removed`). */
  despawn(bodyId: number): void {
    this.send({ requestId: this.nextId(), despawn: { bodyId } });
  }

  /** Replaces the view with a box; halfExtents (0, 0) returns to the default view. Resolves once
   * the server has taken it (a Ping behind it came back), rejects if it was refused. */
  setView(center: Point, halfExtents: Point): Promise<void> {
    const id = this.nextId();
    let refused: CollideError | null = null;
    const off = this.on("error", (e) => {
      if (e.requestId === id) refused = e;
    });
    this.send({ requestId: id, setView: { center, halfExtents } });
    // SetView has no success reply; replies come in request order, so a ping behind it tells.
    return this.ping().then(
      () => {
        off();
        if (refused) throw refused;
      },
      (e) => {
        off();
        throw e;
      },
    );
  }

  /** Round trip to the daemon. */
  ping(): Promise<PongResult> {
    const t0 = now();
    return this.request({ ping: { clientTimeUs: Math.round(t0 * 1000) } }).then((m) => ({
      rttMs: now() - t0,
      serverTimeUs: Number(m.pong!.serverTimeUs),
      tick: Number(m.pong!.tick),
    }));
  }

  /** Casts a ray from `origin` along `translation` (its length is the ray's reach); resolves with
   * the first body hit, or every one with `all`. A ray that leaves the world reports nothing (the
   * bounds are not a body). Rejects with the server's CollideError: BAD_REQUEST (non-finite
   * numbers, a future atTick), HISTORY_EXPIRED (an atTick past the history). */
  rayCast(origin: Point, translation: Point, opts: CastOptions = {}): Promise<QueryResult> {
    return this.query(opts.atTick, (atTick) => ({
      rayCast: { origin, translation, filter: opts.filter, all: opts.all ?? false, atTick },
    }));
  }

  /** The bodies that overlap `shape` placed at `position` (turned by `angle`), by id; touching is
   * not overlapping. Each hit's normal * depth pushes the query shape out of that body. Rejects as
   * rayCast does, and with INVALID_SHAPE for a shape a spawn would refuse. */
  overlap(shape: Shape, position: Point, opts: ShapeQueryOptions = {}): Promise<QueryResult> {
    return this.query(opts.atTick, (atTick) => ({
      overlap: { shape, position, angle: opts.angle ?? 0, filter: opts.filter, atTick },
    }));
  }

  /** Sweeps `shape` from `position` along `translation`; resolves with the first body it would
   * touch (its point on that body's surface, fraction of the translation), or every one with
   * `all`. Starting overlapped, a body is hit at fraction 0 with its push-out normal and depth.
   * Rejects as overlap does. */
  shapeCast(shape: Shape, position: Point, translation: Point, opts: ShapeCastOptions = {}): Promise<QueryResult> {
    return this.query(opts.atTick, (atTick) => ({
      shapeCast: {
        shape,
        position,
        angle: opts.angle ?? 0,
        translation,
        filter: opts.filter,
        all: opts.all ?? false,
        atTick,
      },
    }));
  }

  /** Sends the query msg builds around a checked at_tick; maps its QueryResult (uint64 tick exact). */
  private query(atTick: number | undefined, msg: (atTick: number) => ClientMessageProps): Promise<QueryResult> {
    const tick = atTick ?? 0;
    if (!Number.isSafeInteger(tick) || tick < 0)
      return Promise.reject(
        new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, `atTick must be a whole number in [0, 2^53), not ${atTick}`, false, 0),
      );
    return this.request(msg(tick)).then((m) => {
      const r = m.queryResult as QueryResultMsg | null;
      if (!r)
        throw new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, `query answered by ${m.msg}, not QueryResult`, false, m.requestId);
      let resultTick: number;
      try {
        resultTick = uint64ToNumber(r.tick, "QueryResult.tick");
      } catch (e) {
        throw new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, (e as Error).message, false, m.requestId);
      }
      return {
        tick: resultTick,
        // Decoded hits carry proto3's defaults (zeros are not on the wire); the types allow null.
        hits: r.hits.map((h) => ({
          bodyId: h.bodyId ?? 0,
          point: vec(h.point),
          normal: vec(h.normal),
          fraction: h.fraction ?? 0,
          depth: h.depth ?? 0,
        })),
        truncated: r.truncated,
      };
    });
  }

  /** Closes the connection; `close` follows with reason "". */
  close(): void {
    this.transport.close();
  }

  /** Sends any ClientMessage (for the 1.1 messages the helpers above do not wrap). */
  send(msg: ClientMessageProps): void {
    if (this.closed) throw new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, "connection closed", true, msg.requestId ?? 0);
    this.transport.send(pb.ClientMessage.encode(msg).finish());
  }

  /** Sends msg with a fresh request_id and resolves with the reply carrying it. */
  request(msg: ClientMessageProps, sendNow = true): Promise<InstanceType<typeof pb.ServerMessage>> {
    const requestId = this.nextId();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, `no reply within ${this.timeoutMs} ms`, false, requestId));
      }, this.timeoutMs);
      this.pending.set(requestId, { resolve, reject, timer });
      const m = { ...msg, requestId };
      if (sendNow) this.send(m);
      else this.helloBytes = pb.ClientMessage.encode(m).finish();
    });
  }

  private nextId(): number {
    // Request ids of moves are their input_seq; the others count down from 2^32 - 1 so the two
    // never meet and an error names what it answers.
    return 0xffffffff - this.nextRequestId++;
  }

  private receive(bytes: Uint8Array): void {
    let m: InstanceType<typeof pb.ServerMessage>;
    try {
      m = pb.ServerMessage.decode(bytes);
    } catch (e) {
      this.emit("error", new CollideError(ErrorCode.ERROR_CODE_BAD_REQUEST, `undecodable message from the server: ${e}`, true, 0));
      this.transport.close();
      return;
    }
    switch (m.msg) {
      case "snapshot": {
        const snap = m.snapshot as SnapshotMsg;
        let delta: { added: number[]; changed: number[]; removed: number[] };
        try {
          if (this.quantized) delta = applyQuantizedSnapshot(this.bodies, this.quantized, snap);
          else if (snap.packed.length) throw new QuantizedDecodeError("quantized records in a float session");
          else delta = applySnapshot(this.bodies, snap);
        } catch (e) {
          if (!(e instanceof QuantizedDecodeError)) throw e;
          // Out of sync with the server (which never sends such a snapshot): bodies stay as
          // they were before it; the session is over, a new one starts from a clean state.
          this.emit("error", new CollideError(ErrorCode.ERROR_CODE_BAD_REQUEST, `snapshot at tick ${snap.tick} out of sync: ${e.message}`, true, 0));
          this.transport.close();
          return;
        }
        const { added, changed, removed } = delta;
        this.tick = Number(snap.tick);
        this.emit("snapshot", { tick: this.tick, added, changed, removed, raw: snap });
        return;
      }
      case "error": {
        const e = m.error!;
        const err = new CollideError(e.code ?? 0, e.message ?? "", !!e.fatal, m.requestId, e.index ?? 0);
        const p = this.pending.get(m.requestId);
        if (p) {
          this.pending.delete(m.requestId);
          clearTimeout(p.timer);
          p.reject(err);
        }
        this.emit("error", err);
        return;
      }
      case "goodbye":
        this.emit("goodbye", m.goodbye!.reason ?? "");
        return;
      default: {
        const p = this.pending.get(m.requestId);
        if (p) {
          this.pending.delete(m.requestId);
          clearTimeout(p.timer);
          p.resolve(m);
        }
      }
    }
  }

  private closedBy(reason: string, code?: number): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new CollideError(ErrorCode.ERROR_CODE_UNSPECIFIED, `connection closed${reason ? ": " + reason : ""}`, true, id));
    }
    this.pending.clear();
    this.emit("close", reason, code);
  }
}

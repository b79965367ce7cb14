// The server's own world, compiled to WebAssembly (client/js/wasm/collide_world.wasm, built from
// server/geom, server/world and server/wasm by CMake: docs/wasm.md), for prediction with the
// server's code (ARCHITECTURE.md "Prediction with the server's own code"): a WasmWorld steps the
// same floats as the daemon's world, checked equal to the bit by the js_wasm_world test.
//
// Browser-safe: the module is instantiated from bytes (or a compiled WebAssembly.Module) by
// loadWorldModule; Node's loadWorldModuleFile (collide-sdk/node) reads the file first. The module
// imports nothing today; should a later build import a WASI function, it gets a shim that throws
// when called, so a call nobody expected is an error, never a silent no-op.
import { BodyKind, type Shape } from "./proto";
import type { CharacterOptions } from "./client";
import type { Point } from "./world";

/** world_status (server/world/world.h) by code, and the binding's own WASM_ERR_ARGUMENT (100). */
export const WORLD_STATUS_NAMES: Readonly<Record<number, string>> = {
  0: "WORLD_OK",
  1: "WORLD_STALE_INPUT",
  2: "WORLD_ERR_INVALID_SHAPE",
  3: "WORLD_ERR_OUT_OF_BOUNDS",
  4: "WORLD_ERR_FULL",
  5: "WORLD_ERR_NOT_FOUND",
  6: "WORLD_ERR_NOT_FINITE",
  7: "WORLD_ERR_NOT_MOVING",
  8: "WORLD_ERR_NO_MEMORY",
  9: "WORLD_ERR_HISTORY_EXPIRED",
  10: "WORLD_ERR_FUTURE_TICK",
  11: "WORLD_ERR_NOT_OWNER",
  100: "WASM_ERR_ARGUMENT",
};
const WORLD_OK = 0;
const WORLD_STALE_INPUT = 1;
const WORLD_ERR_INVALID_SHAPE = 2;

/** An error the world's module answered: `status` is its world_status code. */
export class WasmWorldError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** For WORLD_ERR_INVALID_SHAPE: geom's reason ("polygon is not convex"). */
    readonly shapeError = "",
  ) {
    super(message);
    this.name = "WasmWorldError";
  }
  get statusName(): string {
    return WORLD_STATUS_NAMES[this.status] ?? `status ${this.status}`;
  }
}

/** world_config (world.h): bounds are required; every other field left out (or 0) takes the
 * world's default (tick rate 60 Hz, no gravity, 4 slide iterations, 65,536 bodies, ...). */
export interface WasmWorldConfig {
  bounds: { min: Point; max: Point };
  tickRateHz?: number;
  gravity?: Point;
  slideIterations?: number;
  maxBodies?: number;
  /** Of maxBodies, how many may move (sizes the per-mover arrays); 0 = all. */
  maxMovingBodies?: number;
  /** The broad phase's cell; 0 = chosen by the world. */
  cellSize?: number;
  maxSpeed?: number;
  maxAngularSpeed?: number;
  separationPasses?: number;
  maxShapeSize?: number;
  /** Whether moving bodies block each other (default true; false gives scene S1a). */
  moverCollisions?: boolean;
}

/** A body's filter and one-way flag, as SpawnBody has them. */
export interface WasmBodyOptions {
  position: Point;
  angle?: number;
  oneWay?: boolean;
  /** Collision filter: 0 = the default (category 1, mask all bits). */
  category?: number;
  mask?: number;
  sensor?: boolean;
}

export interface WasmSpawnOptions extends WasmBodyOptions {
  /** The owning client's id (0: the world's own; setIntent's owner must match it unless 0). */
  owner?: number;
  /** Makes the mover a character ({} for every default). */
  character?: CharacterOptions;
}

/** A MoveIntent (docs/protocol.md): velocity, turning speed, input_seq and a character's jump. */
export interface WasmIntent {
  velocity: Point;
  angularVelocity?: number;
  inputSeq: number;
  jump?: boolean;
  /** The client moving it: 0 (the default) may move any moving body, any other id only its own. */
  owner?: number;
}

/** One row of the body table: server/wasm/world_wasm.h's wasm_body, 16 fields of 4 bytes. */
export const BODY_STRIDE = 16;
export const BODY_FIELD = {
  id: 0, kind: 1, flags: 2, owner: 3, lastInputSeq: 4, ground: 5, x: 6, y: 7, vx: 8, vy: 9,
  angle: 10, angularVelocity: 11, vertical: 12, intentX: 13, intentY: 14, intentTurning: 15,
} as const;
/** wasm_body.flags. */
export const BODY_ONE_WAY = 1;
export const BODY_CHARACTER = 2;
export const BODY_GROUNDED = 4;
export const BODY_SENSOR = 8;

/** One body, copied out of the module. */
export interface WasmBody {
  id: number;
  kind: BodyKind;
  owner: number;
  lastInputSeq: number;
  position: Point;
  velocity: Point;
  angle: number;
  angularVelocity: number;
  oneWay: boolean;
  sensor: boolean;
  character: boolean;
  grounded: boolean;
  /** The body a grounded character stands on (0: none, or the world's bounds). */
  groundId: number;
  /** A character's velocity along up, which its next step starts from. */
  vertical: number;
  intent: { velocity: Point; angularVelocity: number };
}

/** The table bodies() filled, read in place: `u32` and `f32` view the same rows (BODY_STRIDE
 * fields each, at BODY_FIELD). Valid until the next call into the same module (a step or a spawn
 * may grow its memory, which detaches these views): read it, then call on. */
export class WasmBodyTable {
  constructor(
    readonly count: number,
    readonly u32: Uint32Array,
    readonly f32: Float32Array,
  ) {}
  id(i: number): number { return this.u32[i * BODY_STRIDE + BODY_FIELD.id]; }
  kind(i: number): BodyKind { return this.u32[i * BODY_STRIDE + BODY_FIELD.kind]; }
  flags(i: number): number { return this.u32[i * BODY_STRIDE + BODY_FIELD.flags]; }
  x(i: number): number { return this.f32[i * BODY_STRIDE + BODY_FIELD.x]; }
  y(i: number): number { return this.f32[i * BODY_STRIDE + BODY_FIELD.y]; }
  /** Row i copied out as an object. */
  body(i: number): WasmBody {
    const u = this.u32, f = this.f32, o = i * BODY_STRIDE, flags = u[o + BODY_FIELD.flags];
    return {
      id: u[o + BODY_FIELD.id],
      kind: u[o + BODY_FIELD.kind],
      owner: u[o + BODY_FIELD.owner],
      lastInputSeq: u[o + BODY_FIELD.lastInputSeq],
      position: { x: f[o + BODY_FIELD.x], y: f[o + BODY_FIELD.y] },
      velocity: { x: f[o + BODY_FIELD.vx], y: f[o + BODY_FIELD.vy] },
      angle: f[o + BODY_FIELD.angle],
      angularVelocity: f[o + BODY_FIELD.angularVelocity],
      oneWay: (flags & BODY_ONE_WAY) !== 0,
      sensor: (flags & BODY_SENSOR) !== 0,
      character: (flags & BODY_CHARACTER) !== 0,
      grounded: (flags & BODY_GROUNDED) !== 0,
      groundId: u[o + BODY_FIELD.ground],
      vertical: f[o + BODY_FIELD.vertical],
      intent: {
        velocity: { x: f[o + BODY_FIELD.intentX], y: f[o + BODY_FIELD.intentY] },
        angularVelocity: f[o + BODY_FIELD.intentTurning],
      },
    };
  }
  toArray(): WasmBody[] {
    const out: WasmBody[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.body(i));
    return out;
  }
}

/** The C API of server/wasm/world_wasm.h as the module exports it (pointers are numbers). */
interface WorldExports {
  memory: WebAssembly.Memory;
  _initialize?: () => void;
  wasm_world_create(...a: number[]): number;
  wasm_world_free(h: number): void;
  wasm_world_set_mover_collisions(h: number, on: number): void;
  wasm_world_vertices(h: number): number;
  wasm_world_spawn(h: number, kind: number, shape: number, a: number, b: number, n: number,
                   x: number, y: number, angle: number, owner: number): number;
  wasm_world_spawned(h: number): number;
  wasm_world_shape_error(h: number): number;
  wasm_world_despawn(h: number, id: number): number;
  wasm_world_set_filter(h: number, id: number, category: number, mask: number, sensor: number): number;
  wasm_world_set_one_way(h: number, id: number, on: number): number;
  wasm_world_set_character(h: number, id: number, ...a: number[]): number;
  wasm_world_intent(h: number, owner: number, id: number, vx: number, vy: number, w: number,
                    seq: number, jump: number): number;
  wasm_world_step(h: number, ticks: number): void;
  wasm_world_tick(h: number): bigint;
  wasm_world_state_hash(h: number): bigint;
  wasm_world_body_count(h: number): number;
  wasm_world_bodies(h: number, kinds: number): number;
  wasm_world_rows(h: number): number;
  wasm_world_body(h: number, id: number): number;
  wasm_world_status_str(status: number): number;
  wasm_world_shape_error_str(error: number): number;
  wasm_world_state_size(): number;
  wasm_world_state(h: number): number;
  wasm_world_save(h: number, id: number): number;
  wasm_world_restore(h: number, id: number): number;
  wasm_world_place(h: number, id: number, x: number, y: number, angle: number, vx: number, vy: number,
                   w: number): number;
  wasm_world_place_character(h: number, id: number, vertical: number, grounded: number, ground: number): number;
  wasm_world_shape(h: number, id: number): number;
}

const GEOM_SHAPE_BOX = 1;
const GEOM_SHAPE_POLYGON = 2;
const GEOM_SHAPE_CIRCLE = 3;
const MAX_POLYGON_VERTICES = 16;

/** server/wasm/world_wasm.h's wasm_shape: kind, vertex count, a, b, then 16 (x, y) pairs. */
export const SHAPE_WORDS = 36;

/** The shape row at ptr (wasm_shape) as the wire's Shape, body-local. */
export function readShape(memory: WebAssembly.Memory, ptr: number): Shape {
  const u = new Uint32Array(memory.buffer, ptr, SHAPE_WORDS), f = new Float32Array(memory.buffer, ptr, SHAPE_WORDS);
  switch (u[0]) {
    case GEOM_SHAPE_BOX: return { box: { halfExtents: { x: f[2], y: f[3] } } };
    case GEOM_SHAPE_CIRCLE: return { circle: { radius: f[2] } };
    default: {
      const vertices: Point[] = [];
      for (let i = 0; i < u[1]; i++) vertices.push({ x: f[4 + 2 * i], y: f[5 + 2 * i] });
      return { polygon: { vertices } };
    }
  }
}

/** The instantiated module: one per page or process is enough, each WasmWorld lives in it. */
export class WorldModule {
  private constructor(readonly exports: WorldExports) {}

  /** Instantiates the module from its bytes (fetch(...).arrayBuffer(), fs.readFile) or from a
   * WebAssembly.Module compiled before. */
  static async instantiate(source: BufferSource | WebAssembly.Module): Promise<WorldModule> {
    const mod = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
    const instance = await WebAssembly.instantiate(mod, importShims(mod));
    const exports = instance.exports as unknown as WorldExports;
    exports._initialize?.(); // a reactor's constructors (none today), before any other call
    return new WorldModule(exports);
  }

  /** Bytes of the module's linear memory: grows as worlds need it, never shrinks (freed memory
   * is reused by the next world). */
  get memoryBytes(): number {
    return this.exports.memory.buffer.byteLength;
  }

  createWorld(config: WasmWorldConfig): WasmWorld {
    return new WasmWorld(this, config);
  }

  /** The NUL-terminated string at ptr. */
  text(ptr: number): string {
    const bytes = new Uint8Array(this.exports.memory.buffer, ptr >>> 0);
    const end = bytes.indexOf(0);
    return new TextDecoder().decode(bytes.subarray(0, end < 0 ? 0 : end));
  }

  statusText(status: number): string {
    return this.text(this.exports.wasm_world_status_str(status));
  }
}

/** Every function the module imports becomes one that throws (see the file's opening). */
function importShims(mod: WebAssembly.Module): WebAssembly.Imports {
  const imports: Record<string, Record<string, WebAssembly.ImportValue>> = {};
  for (const imp of WebAssembly.Module.imports(mod)) {
    if (imp.kind !== "function")
      throw new Error(`collide_world.wasm imports ${imp.kind} ${imp.module}.${imp.name}: not supported`);
    (imports[imp.module] ??= {})[imp.name] = () => {
      throw new Error(`collide_world.wasm called ${imp.module}.${imp.name}, which the world never needs`);
    };
  }
  return imports;
}

const f = (v: number | undefined): number => v ?? 0;

/** A world inside the module: the daemon's world, stepped by the same code. Call dispose() when
 * done: its memory lives in the module, not in JavaScript's heap. */
export class WasmWorld {
  private readonly x: WorldExports;
  private h: number;

  constructor(readonly module: WorldModule, config: WasmWorldConfig) {
    this.x = module.exports;
    const { min, max } = config.bounds;
    const g = config.gravity ?? { x: 0, y: 0 };
    this.h = this.x.wasm_world_create(min.x, min.y, max.x, max.y, f(config.tickRateHz), g.x, g.y,
      f(config.slideIterations), f(config.maxBodies), f(config.maxMovingBodies), f(config.cellSize),
      f(config.maxSpeed), f(config.maxAngularSpeed), f(config.separationPasses),
      f(config.maxShapeSize)) >>> 0;
    if (!this.h)
      throw new WasmWorldError(100, "world_create refused the config (non-finite or empty bounds, " +
        "rate or speed <= 0, non-finite gravity) or ran out of memory");
    if (config.moverCollisions === false) this.x.wasm_world_set_mover_collisions(this.h, 0);
  }

  /** A static body (the world's own geometry): its id. */
  addStatic(shape: Shape, opts: WasmBodyOptions): number {
    return this.spawnAs(BodyKind.BODY_KIND_STATIC, shape, opts);
  }

  /** A moving body: its id. Whole or not at all, as the daemon's SpawnBody: a body whose options
   * fail is despawned before the error is thrown. */
  spawn(shape: Shape, opts: WasmSpawnOptions): number {
    return this.spawnAs(BodyKind.BODY_KIND_MOVING, shape, opts);
  }

  private spawnAs(kind: BodyKind, shape: Shape, opts: WasmSpawnOptions): number {
    const h = this.handle();
    const [sk, a, b, n] = this.writeShape(shape);
    const st = this.x.wasm_world_spawn(h, kind, sk, a, b, n, opts.position.x, opts.position.y,
      f(opts.angle), f(opts.owner));
    if (st !== WORLD_OK) {
      const why = st === WORLD_ERR_INVALID_SHAPE
        ? this.module.text(this.x.wasm_world_shape_error_str(this.x.wasm_world_shape_error(h))) : "";
      throw new WasmWorldError(st, `spawn: ${this.module.statusText(st)}${why ? `: ${why}` : ""}`, why);
    }
    const id = this.x.wasm_world_spawned(h) >>> 0;
    try {
      if (opts.category || opts.mask || opts.sensor)
        this.setFilter(id, f(opts.category), f(opts.mask), opts.sensor ?? false);
      if (opts.oneWay) this.setOneWay(id, true);
      if (opts.character) this.setCharacter(id, opts.character);
    } catch (e) {
      this.x.wasm_world_despawn(h, id);
      throw e;
    }
    return id;
  }

  /** world_body_set_filter: category and mask 0 mean the defaults. Meant right after the spawn
   * (spawn's options call it); a later change takes effect at the next step. */
  setFilter(id: number, category: number, mask: number, sensor: boolean): void {
    this.check("setFilter", this.x.wasm_world_set_filter(this.handle(), id, category, mask,
      sensor ? 1 : 0));
  }

  /** world_body_set_one_way, as setFilter. */
  setOneWay(id: number, oneWay: boolean): void {
    this.check("setOneWay", this.x.wasm_world_set_one_way(this.handle(), id, oneWay ? 1 : 0));
  }

  /** world_body_set_character ({} for every default), as setFilter. */
  setCharacter(id: number, c: CharacterOptions): void {
    this.check("setCharacter", this.x.wasm_world_set_character(this.handle(), id, f(c.maxSlope),
      f(c.stepHeight), f(c.snapDistance), f(c.jumpSpeed), f(c.gravityScale), f(c.jumpBufferMs),
      f(c.coyoteMs)));
  }

  /** The shape's kind and scalars; a polygon's vertices go to the module's vertex buffer. */
  private writeShape(shape: Shape): [number, number, number, number] {
    if (shape.box) {
      const he = shape.box.halfExtents;
      return [GEOM_SHAPE_BOX, he?.x ?? 0, he?.y ?? 0, 0];
    }
    if (shape.circle) return [GEOM_SHAPE_CIRCLE, shape.circle.radius ?? 0, 0, 0];
    if (shape.polygon) {
      const vs = shape.polygon.vertices ?? [];
      if (vs.length > MAX_POLYGON_VERTICES)
        throw new WasmWorldError(WORLD_ERR_INVALID_SHAPE, "spawn: invalid shape: polygon has more than 16 vertices",
          "polygon has more than 16 vertices");
      const out = new Float32Array(this.x.memory.buffer, this.x.wasm_world_vertices(this.handle()) >>> 0,
        2 * MAX_POLYGON_VERTICES);
      vs.forEach((v, i) => { out[2 * i] = v.x ?? 0; out[2 * i + 1] = v.y ?? 0; });
      return [GEOM_SHAPE_POLYGON, 0, 0, vs.length];
    }
    throw new WasmWorldError(WORLD_ERR_INVALID_SHAPE, "spawn: invalid shape: unknown shape kind",
      "unknown shape kind");
  }

  despawn(id: number): void {
    this.check("despawn", this.x.wasm_world_despawn(this.handle(), id));
  }

  /** A MoveIntent: false when its inputSeq is not newer than the last (ignored, as the daemon
   * ignores it); throws on anything the world refuses (unknown body, NaN, not the owner's). */
  setIntent(id: number, intent: WasmIntent): boolean {
    const st = this.x.wasm_world_intent(this.handle(), f(intent.owner), id, intent.velocity.x,
      intent.velocity.y, f(intent.angularVelocity), intent.inputSeq, intent.jump ? 1 : 0);
    if (st === WORLD_STALE_INPUT) return false;
    this.check("setIntent", st);
    return true;
  }

  setMoverCollisions(on: boolean): void {
    this.x.wasm_world_set_mover_collisions(this.handle(), on ? 1 : 0);
  }

  step(ticks = 1): void {
    this.x.wasm_world_step(this.handle(), ticks);
  }

  /** Ticks stepped so far. */
  get tick(): number {
    return Number(this.x.wasm_world_tick(this.handle()));
  }

  /** world_state_hash: equal to the native world's for the same spawns, intents and steps. */
  stateHash(): bigint {
    return BigInt.asUintN(64, this.x.wasm_world_state_hash(this.handle()));
  }

  /** The hash as 16 hex digits, as bench_world prints it. */
  stateHashHex(): string {
    return this.stateHash().toString(16).padStart(16, "0");
  }

  get bodyCount(): number {
    return this.x.wasm_world_body_count(this.handle()) >>> 0;
  }

  /** Every live body (or only statics / movers), in ascending id order, read in place. */
  bodies(kind?: BodyKind): WasmBodyTable {
    const h = this.handle();
    const n = this.x.wasm_world_bodies(h, kind ? 1 << kind : 0) >>> 0;
    if (n === 0xffffffff) throw new WasmWorldError(8, "bodies: out of memory for the table");
    const ptr = this.x.wasm_world_rows(h) >>> 0;
    const buf = this.x.memory.buffer;
    return new WasmBodyTable(n, new Uint32Array(buf, ptr, n * BODY_STRIDE),
      new Float32Array(buf, ptr, n * BODY_STRIDE));
  }

  /** One body, copied out; undefined for an unknown or stale id. */
  body(id: number): WasmBody | undefined {
    const ptr = this.x.wasm_world_body(this.handle(), id) >>> 0;
    if (!ptr) return undefined;
    const buf = this.x.memory.buffer;
    return new WasmBodyTable(1, new Uint32Array(buf, ptr, BODY_STRIDE),
      new Float32Array(buf, ptr, BODY_STRIDE)).body(0);
  }

  /** A body's shape as spawned, body-local (its angle turns it); undefined for an unknown or
   * stale id. */
  shape(id: number): Shape | undefined {
    const ptr = this.x.wasm_world_shape(this.handle(), id) >>> 0;
    return ptr ? readShape(this.x.memory, ptr) : undefined;
  }

  /** Bytes of a saved body state (saveBody). */
  get stateSize(): number {
    return this.x.wasm_world_state_size() >>> 0;
  }

  /** Everything the world keeps of a moving body that a later step reads (world.h
   * world_body_save: position, velocity, intent, sequences, turn, a character's vertical speed,
   * ground, coyote time and pending jump), copied into `into` (stateSize bytes; a new array when
   * absent). restoreBody puts it back: the next step then moves the body as the step after the
   * save would have. For prediction (WorldPredictor). */
  saveBody(id: number, into?: Uint8Array): Uint8Array {
    const h = this.handle();
    this.check("saveBody", this.x.wasm_world_save(h, id));
    const size = this.stateSize;
    const out = into ?? new Uint8Array(size);
    out.set(new Uint8Array(this.x.memory.buffer, this.x.wasm_world_state(h) >>> 0, size));
    return out;
  }

  /** Puts back a state saveBody took from this same body (WORLD_ERR_NOT_FOUND for another's). */
  restoreBody(id: number, state: Uint8Array): void {
    const h = this.handle();
    new Uint8Array(this.x.memory.buffer, this.x.wasm_world_state(h) >>> 0, this.stateSize).set(state);
    this.check("restoreBody", this.x.wasm_world_restore(h, id));
  }

  /** Moves a moving body where a snapshot put it: position, angle, and the velocity and turning
   * speed achieved in the last tick (world_body_place); its intent stays. */
  place(id: number, position: Point, angle: number, velocity: Point, angularVelocity: number): void {
    this.check("place", this.x.wasm_world_place(this.handle(), id, position.x, position.y, angle, velocity.x,
      velocity.y, angularVelocity));
  }

  /** A character's vertical speed (along up), standing and ground (a local id; 0 for none or the
   * bounds) as a snapshot tells them; coyote time and a pending jump are reset
   * (world_character_place). */
  placeCharacter(id: number, vertical: number, grounded: boolean, groundId: number): void {
    this.check("placeCharacter", this.x.wasm_world_place_character(this.handle(), id, vertical, grounded ? 1 : 0,
      groundId));
  }

  /** Frees the world's memory in the module; the world cannot be used after (idempotent). */
  dispose(): void {
    if (this.h) this.x.wasm_world_free(this.h);
    this.h = 0;
  }

  get disposed(): boolean {
    return this.h === 0;
  }

  private handle(): number {
    if (!this.h) throw new Error("WasmWorld used after dispose()");
    return this.h;
  }

  private check(what: string, st: number): void {
    if (st !== WORLD_OK) throw new WasmWorldError(st, `${what}: ${this.module.statusText(st)}`);
  }
}

// Match recordings played in the browser (PROTOCOL.md "Recordings", docs/wasm.md "Journals"): a
// journal the daemon wrote (--record-dir) replayed by the server's own world, compiled to
// WebAssembly, to any tick, forwards or backwards, every stored state hash checked on the way.
//
//   const player = JournalPlayer.open(await WorldModule.instantiate(wasmBytes), journalBytes);
//   player.seek(player.lastTick);          // throws JournalError on a hash mismatch, naming its tick
//   for (const b of player.bodies()) draw(b.shape, b.position, b.angle);
//   player.dispose();
//
// The journal's bytes are copied into the module's memory and kept there while the player is
// open (the replay reads them in place). Seeking back goes on from the nearest checkpoint the
// module kept while playing forwards (the world's image every checkpointEvery ticks, bounded by
// checkpointBudgetBytes), not from the start.
import { BodyKind, type Shape } from "./proto";
import { readShape, WasmBodyTable, BODY_STRIDE, type WasmBody, type WorldModule } from "./wasm_world";
import type { Point } from "./world";

/** The module's journal calls (server/wasm/journal_wasm.h); pointers are numbers, u64 bigints. */
interface JournalExports {
  memory: WebAssembly.Memory;
  wasm_journal_create(len: number): number;
  wasm_journal_bytes(j: number): number;
  wasm_journal_open(j: number, every: number, budget: number): number;
  wasm_journal_free(j: number): void;
  wasm_journal_get_info(j: number): number;
  wasm_journal_header_text(j: number, which: number): number;
  wasm_journal_truncated(j: number): number;
  wasm_journal_error(j: number): number;
  wasm_journal_seek(j: number, tick: bigint): number;
  wasm_journal_tick(j: number): bigint;
  wasm_journal_state_hash(j: number): bigint;
  wasm_journal_get_stats(j: number): number;
  wasm_journal_bodies(j: number, kinds: number): number;
  wasm_journal_rows(j: number): number;
  wasm_journal_shape(j: number, id: number): number;
}

/** What went wrong: the bytes refused at open (not a journal, another format version, a damaged
 * header or world image, a malformed record), a stored state hash the replay does not reach
 * ("mismatch": the replay is not the run), a call the world answered otherwise than live
 * ("diverged"), a malformed record met while replaying ("corrupt"), or the module out of memory. */
export type JournalErrorKind = "refused" | "mismatch" | "diverged" | "corrupt" | "memory";
const SEEK_ERRORS: Readonly<Record<number, JournalErrorKind>> = { 2: "mismatch", 3: "diverged", 4: "corrupt", 100: "memory" };

/** A journal the player refused, or a replay that failed: the journal's reason as the message
 * ("tick 120: state hash 0123..., the journal's is 4567..."), and for a failed replay the tick it
 * names. */
export class JournalError extends Error {
  constructor(
    readonly kind: JournalErrorKind,
    message: string,
    /** The tick the reason names ("tick N: ..."); null when it names none (a refused open). */
    readonly tick: number | null = null,
  ) {
    super(message);
    this.name = "JournalError";
  }
}

export interface JournalPlayerOptions {
  /** Ticks between the checkpoints kept while playing forwards (default 300). */
  checkpointEvery?: number;
  /** Bytes their world images may take in the module (default 64 MiB); past it they are thinned,
   * every other one dropped and the spacing doubled. */
  checkpointBudgetBytes?: number;
}

/** The journal's header and the world it starts from. */
export interface JournalInfo {
  startTick: number;
  /** The last tick the journal holds whole. */
  lastTick: number;
  /** Wall clock (ms since 1970) when the recording started. */
  unixMs: number;
  formatVersion: number;
  /** A state hash stored every this many ticks (0: none). */
  hashEvery: number;
  room: string;
  worldName: string;
  daemonVersion: string;
  tickRateHz: number;
  bounds: { min: Point; max: Point };
  gravity: Point;
  maxBodies: number;
}

/** The checkpoints and what the seeks did. */
export interface JournalStats {
  checkpoints: number;
  checkpointBytes: number;
  /** Ticks between checkpoints now (0: none kept past the start). */
  checkpointEvery: number;
  checkpointBudgetBytes: number;
  /** Ticks the seeks stepped in all. */
  ticksReplayed: number;
  /** Seeks that went on from a checkpoint, and the last one's tick. */
  restores: number;
  restoredTick: number;
}

/** A body of the replayed world, with its shape (body-local; its angle turns it). */
export interface JournalBody extends WasmBody {
  shape: Shape;
}

/** A journal replayed in the world's module. dispose() frees its memory there. */
export class JournalPlayer {
  readonly info: JournalInfo;
  private readonly x: JournalExports;
  private h: number;
  private readonly shapes = new Map<number, Shape>(); // ids are never reused: a shape is for good
  private readonly cut: string | null;

  private constructor(readonly module: WorldModule, h: number) {
    this.x = module.exports as unknown as JournalExports;
    this.h = h;
    const v = new DataView(this.x.memory.buffer, this.x.wasm_journal_get_info(h) >>> 0, 72);
    const u64 = (o: number) => Number(v.getBigUint64(o, true));
    const u32 = (o: number) => v.getUint32(o, true), f32 = (o: number) => v.getFloat32(o, true);
    // wasm_journal_info: u64 start, last, unix_ms; u32 version, hash_every, truncated, max_bodies;
    // f32 tick rate, min x y, max x y, gravity x y
    this.info = {
      startTick: u64(0), lastTick: u64(8), unixMs: u64(16), formatVersion: u32(24), hashEvery: u32(28),
      maxBodies: u32(36), tickRateHz: f32(40),
      bounds: { min: { x: f32(44), y: f32(48) }, max: { x: f32(52), y: f32(56) } },
      gravity: { x: f32(60), y: f32(64) },
      room: this.text(this.x.wasm_journal_header_text(h, 0)),
      worldName: this.text(this.x.wasm_journal_header_text(h, 1)),
      daemonVersion: this.text(this.x.wasm_journal_header_text(h, 2)),
    };
    this.cut = u32(32) ? this.text(this.x.wasm_journal_truncated(h)) : null;
  }

  /** Opens a journal's bytes (a file the daemon wrote, fetched or picked): a JournalError
   * ("refused") with the journal's reason for bytes that are not a journal this build reads. The
   * world stands at the start tick. */
  static open(module: WorldModule, bytes: Uint8Array, opts: JournalPlayerOptions = {}): JournalPlayer {
    const x = module.exports as unknown as Partial<JournalExports>;
    if (typeof x.wasm_journal_create !== "function")
      throw new Error("this collide_world.wasm replays no journals (built before they existed)");
    const j = x as JournalExports;
    const h = j.wasm_journal_create(bytes.length) >>> 0;
    if (!h) throw new JournalError("memory", `out of memory for a journal of ${bytes.length} bytes`);
    new Uint8Array(j.memory.buffer, j.wasm_journal_bytes(h) >>> 0, bytes.length).set(bytes);
    if (j.wasm_journal_open(h, opts.checkpointEvery ?? 0, opts.checkpointBudgetBytes ?? 0) !== 0) {
      const why = module.text(j.wasm_journal_error(h));
      j.wasm_journal_free(h);
      throw new JournalError("refused", why);
    }
    return new JournalPlayer(module, h);
  }

  get startTick(): number {
    return this.info.startTick;
  }

  get lastTick(): number {
    return this.info.lastTick;
  }

  /** How the journal ends short ("the journal is cut inside a record after tick 512"): a
   * recording still being written, or cut; null for a clean end. It plays to its last whole
   * tick. */
  get truncated(): string | null {
    return this.cut;
  }

  /** The tick the world stands at. */
  get tick(): number {
    return Number(this.x.wasm_journal_tick(this.handle()));
  }

  /** Runs the world to `tick` (clamped to [startTick, lastTick]), forwards or back, and returns
   * the tick it stands at. A stored hash it does not reach throws a JournalError naming that
   * tick; the world then stands where the replay stopped, and a seek before it plays again. */
  seek(tick: number): number {
    const h = this.handle();
    if (Number.isNaN(tick)) throw new RangeError("seek: the tick is NaN");
    const t = Math.min(Math.max(Math.floor(tick), this.startTick), this.lastTick);
    const res = this.x.wasm_journal_seek(h, BigInt(t));
    if (res !== 0) {
      const why = this.text(this.x.wasm_journal_error(h));
      const named = /^tick (\d+):/.exec(why);
      throw new JournalError(SEEK_ERRORS[res] ?? "corrupt", why, named ? Number(named[1]) : this.tick);
    }
    return this.tick;
  }

  /** world_state_hash of the world as it stands: the daemon's at the same tick. */
  stateHash(): bigint {
    return BigInt.asUintN(64, this.x.wasm_journal_state_hash(this.handle()));
  }

  /** The body table in place (valid until the next call into the module): every live body, or
   * only statics or movers, in ascending id order. */
  table(kind?: BodyKind): WasmBodyTable {
    const h = this.handle();
    const n = this.x.wasm_journal_bodies(h, kind ? 1 << kind : 0) >>> 0;
    if (n === 0xffffffff) throw new JournalError("memory", "bodies: out of memory for the table");
    const ptr = this.x.wasm_journal_rows(h) >>> 0;
    const buf = this.x.memory.buffer;
    return new WasmBodyTable(n, new Uint32Array(buf, ptr, n * BODY_STRIDE), new Float32Array(buf, ptr, n * BODY_STRIDE));
  }

  /** Every live body (or only statics or movers) with its shape, copied out. */
  bodies(kind?: BodyKind): JournalBody[] {
    return this.table(kind).toArray().map((b) => ({ ...b, shape: this.shape(b.id) ?? {} }));
  }

  /** The world's statics with their shapes: what a viewer draws under the movers. */
  statics(): JournalBody[] {
    return this.bodies(BodyKind.BODY_KIND_STATIC);
  }

  /** A live body's shape as spawned, body-local; undefined for an unknown or stale id. */
  shape(id: number): Shape | undefined {
    let s = this.shapes.get(id);
    if (!s) {
      const ptr = this.x.wasm_journal_shape(this.handle(), id) >>> 0;
      if (!ptr) return undefined;
      s = readShape(this.x.memory, ptr);
      this.shapes.set(id, s);
    }
    return s;
  }

  stats(): JournalStats {
    const v = new DataView(this.x.memory.buffer, this.x.wasm_journal_get_stats(this.handle()) >>> 0, 48);
    const u64 = (o: number) => Number(v.getBigUint64(o, true));
    // wasm_journal_stats: u64 checkpoint bytes, ticks replayed, restores, restored tick; u32
    // checkpoints, every, budget
    return {
      checkpointBytes: u64(0), ticksReplayed: u64(8), restores: u64(16), restoredTick: u64(24),
      checkpoints: v.getUint32(32, true), checkpointEvery: v.getUint32(36, true),
      checkpointBudgetBytes: v.getUint32(40, true),
    };
  }

  /** Frees the journal, its world and its checkpoints in the module (idempotent). */
  dispose(): void {
    if (this.h) this.x.wasm_journal_free(this.h);
    this.h = 0;
  }

  get disposed(): boolean {
    return this.h === 0;
  }

  private text(ptr: number): string {
    return this.module.text(ptr);
  }

  private handle(): number {
    if (!this.h) throw new Error("JournalPlayer used after dispose()");
    return this.h;
  }
}

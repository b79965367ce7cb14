// Scene S1 of PERFORMANCE.md through the WebAssembly world, exactly as bench/world/s1.h,
// s1_world.h and s1c.h build and step it natively, so the state hashes can be compared
// (js_wasm_world) and the module timed on it (client/js/bench/wasm_s1.mjs). Every draw is the
// specification's: xorshift32 seeded 12345, unit() = (next() >> 8) / 2^24 in double, headings
// a = unit() 2 pi, velocities fround(V cos a): V8's Math.cos and Math.sin give the same floats as
// glibc's there for all 2^24 values unit() can take (docs/wasm.md).
import { BodyKind } from "../src/proto";
import type { WasmWorld, WorldModule } from "../src/wasm_world";

export const S1_MAP = 256;
export const S1_STATICS = 13798;
export const S1_MOVERS = 10000;
export const S1_WARMUP = 10;
const S1C_ONE_WAY = 1380;
const S1C_SEED = 777;
const S1C_JUMP_EVERY = 20;
const S1C_JUMP_CHANCE = 0.25;

/** xorshift32 (13, 17, 5): proto/collide_rng.h. */
export class Xorshift32 {
  constructor(public state: number) {}
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (this.state = x >>> 0);
  }
  unit(): number {
    return (this.next() >>> 8) / 16777216;
  }
}

/** The map and the movers' start cells, drawing from rng in the specified order. */
export function s1Layout(rng: Xorshift32): { solid: Uint8Array; start: Uint32Array } {
  rng.state = 12345;
  const solid = new Uint8Array(S1_MAP * S1_MAP);
  let statics = 0;
  for (let y = 0; y < S1_MAP; y++)
    for (let x = 0; x < S1_MAP; x++) {
      const border = x === 0 || y === 0 || x === S1_MAP - 1 || y === S1_MAP - 1;
      solid[y * S1_MAP + x] = border || rng.unit() < 0.2 ? 1 : 0; // border cells draw nothing
      statics += solid[y * S1_MAP + x];
    }
  if (statics !== S1_STATICS) throw new Error(`S1: ${statics} statics, expected ${S1_STATICS}`);
  const start = new Uint32Array(2 * S1_MOVERS);
  for (let i = 0; i < S1_MOVERS; i++) {
    let cx: number, cy: number;
    do {
      cx = rng.next() % S1_MAP;
      cy = rng.next() % S1_MAP;
    } while (solid[cy * S1_MAP + cx]);
    start[2 * i] = cx;
    start[2 * i + 1] = cy;
  }
  return { solid, start };
}

interface SceneSpec {
  speed: number;
  collide: boolean;
  spin: number; // S1r's turning speeds: (2 unit() - 1) spin after each heading
  side: boolean; // S1c: gravity, characters, one-way cells, jumps
}
export const S1_SCENES: Record<string, SceneSpec> = {
  "S1a-slow": { speed: 5, collide: false, spin: 0, side: false },
  "S1a-fast": { speed: 600, collide: false, spin: 0, side: false },
  "S1b-slow": { speed: 5, collide: true, spin: 0, side: false },
  S1r: { speed: 5, collide: false, spin: 2 * Math.PI, side: false },
  S1c: { speed: 5, collide: false, spin: 0, side: true },
};

const box = (h: number) => ({ box: { halfExtents: { x: h, y: h } } });

/** One run of an S1 scene in a WasmWorld: built at construction, stepped by ticks(). */
export class S1Run {
  readonly world: WasmWorld;
  readonly movers = new Uint32Array(S1_MOVERS);
  /** Ticks stepped, warm-up included. */
  k = 0;
  /** Milliseconds of each world.step() (the intents are not timed, as bench_world). */
  readonly times: number[] = [];
  private readonly spec: SceneSpec;
  private readonly rng = new Xorshift32(12345);
  private seq = 0;
  private readonly intentX = new Float32Array(S1_MOVERS);
  private readonly intentY = new Float32Array(S1_MOVERS);

  constructor(module: WorldModule, readonly scene: string) {
    const spec = S1_SCENES[scene];
    if (!spec) throw new Error(`unknown scene ${scene}`);
    this.spec = spec;
    const layout = s1Layout(new Xorshift32(12345));
    this.world = module.createWorld({
      bounds: { min: { x: 0, y: 0 }, max: { x: S1_MAP, y: S1_MAP } },
      maxBodies: S1_STATICS + S1_MOVERS,
      maxMovingBodies: S1_MOVERS,
      cellSize: 1,
      maxSpeed: 1000,
      gravity: spec.side ? { x: 0, y: -30 } : undefined,
    });
    this.addMap(layout.solid);
    for (let i = 0; i < S1_MOVERS; i++)
      this.movers[i] = this.world.spawn(box(0.4), {
        position: { x: layout.start[2 * i] + 0.5, y: layout.start[2 * i + 1] + 0.5 },
        owner: 1,
      });
    // s1c_run_start: the characters after all the spawns
    if (spec.side)
      for (const id of this.movers)
        this.world.setCharacter(id, { stepHeight: 0.3, snapDistance: 0.3, jumpSpeed: 9 });
    this.world.setMoverCollisions(spec.collide);
    s1Layout(this.rng); // the intents continue the layout's draws
  }

  /** The statics, row-major; S1c makes 10% of the interior ones one-way by selection sampling
   * (Knuth's algorithm S) from a second xorshift32 seeded 777, as s1c_world_build. */
  private addMap(solid: Uint8Array): void {
    let interior = 0;
    for (let y = 1; y < S1_MAP - 1; y++)
      for (let x = 1; x < S1_MAP - 1; x++) interior += solid[y * S1_MAP + x];
    const pick = new Xorshift32(S1C_SEED);
    let seen = 0, oneWay = 0;
    for (let y = 0; y < S1_MAP; y++)
      for (let x = 0; x < S1_MAP; x++) {
        if (!solid[y * S1_MAP + x]) continue;
        const id = this.world.addStatic(box(0.5), { position: { x: x + 0.5, y: y + 0.5 } });
        if (!this.spec.side || x === 0 || y === 0 || x === S1_MAP - 1 || y === S1_MAP - 1) continue;
        if (pick.unit() * (interior - seen++) < S1C_ONE_WAY - oneWay) {
          this.world.setOneWay(id, true);
          oneWay++;
        }
      }
  }

  /** The intents of tick k: headings every 60 ticks (S1r: and turning speeds), S1c's jumps. */
  private intents(k: number): void {
    const { speed, spin } = this.spec;
    if (k % 60 === 0) {
      this.seq++;
      for (let i = 0; i < S1_MOVERS; i++) {
        const a = this.rng.unit() * 2 * Math.PI;
        this.intentX[i] = speed * Math.cos(a);
        this.intentY[i] = speed * Math.sin(a);
        const w = spin > 0 ? Math.fround((2 * this.rng.unit() - 1) * spin) : 0;
        this.world.setIntent(this.movers[i], {
          velocity: { x: this.intentX[i], y: this.intentY[i] },
          angularVelocity: w,
          inputSeq: this.seq,
        });
      }
    }
    if (!this.spec.side || k % S1C_JUMP_EVERY !== 0) return;
    this.seq++;
    for (let i = 0; i < S1_MOVERS; i++) {
      if (this.rng.unit() >= S1C_JUMP_CHANCE) continue;
      this.world.setIntent(this.movers[i], {
        velocity: { x: this.intentX[i], y: this.intentY[i] },
        inputSeq: this.seq,
        jump: true,
      });
    }
  }

  /** Steps n more ticks, each with its intents first. */
  ticks(n: number): void {
    for (let done = 0; done < n; done++, this.k++) {
      this.intents(this.k);
      const t0 = performance.now();
      this.world.step();
      this.times.push(performance.now() - t0);
    }
  }

  /** Median ms per tick of the ticks after the warm-up. */
  medianMs(): number {
    const t = this.times.slice(S1_WARMUP).sort((a, b) => a - b);
    return t.length ? t[t.length >> 1] : NaN;
  }

  moverCount(): number {
    return this.world.bodies(BodyKind.BODY_KIND_MOVING).count;
  }
}

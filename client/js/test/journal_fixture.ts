// The journal fixture for the journal tests (journal_player.test.ts, viewer_journal.test.ts):
// tests/js/journal_fixture (COLLIDE_JOURNAL_FIXTURE, ctest names it) writes a journal with the
// real journal code and prints the native replay's bodies at any tick; and the player's bodies in
// the same form (floats as their bits), to compare bit for bit.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalBody } from "../src/journal_player";
import type { Shape } from "../src/proto";

export const FIXTURE = process.env.COLLIDE_JOURNAL_FIXTURE ?? "";
if (!FIXTURE) throw new Error("set COLLIDE_JOURNAL_FIXTURE to the journal_fixture binary (ctest does)");

export interface FixtureInfo {
  startTick: number;
  lastTick: number;
  bytes: number;
  hashes: { tick: number; offset: number }[];
}

/** One body as journal_fixture prints it: floats as their bits. */
export interface NativeBody {
  id: number; kind: number; owner: number; lastInputSeq: number;
  x: number; y: number; vx: number; vy: number; angle: number; angularVelocity: number;
  shape: { kind: number; a?: number; b?: number; vertices?: number[] };
}
export interface NativeTick { tick: number; result: number; hash: string; bodies: NativeBody[] }

/** Writes the fixture journal into a fresh folder: its path and what the writer said. */
export function writeFixture(): { path: string; info: FixtureInfo } {
  const path = join(mkdtempSync(join(tmpdir(), "collide-journal-")), "fixture.cjournal");
  const info = JSON.parse(execFileSync(FIXTURE, ["write", path], { encoding: "utf8" })) as FixtureInfo;
  return { path, info };
}

/** The native replay's bodies at each tick. */
export function nativeBodies(path: string, ticks: number[]): Map<number, NativeTick> {
  const out = execFileSync(FIXTURE, ["bodies", path, ...[...ticks].sort((a, b) => a - b).map(String)],
    { encoding: "utf8", maxBuffer: 1 << 28 });
  const m = new Map<number, NativeTick>();
  for (const line of out.trim().split("\n")) {
    const t = JSON.parse(line) as NativeTick;
    m.set(t.tick, t);
  }
  return m;
}

export interface NativeReplay {
  /** Why the journal was refused, when it was. */
  open?: string;
  /** journal_result: 1 (JOURNAL_END) for a replay that reached the end, 2 a hash mismatch, ... */
  result: number;
  tick: number;
  startTick: number;
  lastTick: number;
  hashesChecked: number;
  truncated: string;
  error: string;
}

/** The native replay of a whole journal. */
export function nativeReplay(path: string): NativeReplay {
  return JSON.parse(execFileSync(FIXTURE, ["replay", path], { encoding: "utf8" }));
}

const scratch = new DataView(new ArrayBuffer(4));
/** A float32's bits. */
export function bits(v: number): number {
  scratch.setFloat32(0, v, true);
  return scratch.getUint32(0, true);
}

function shapeBits(s: Shape): NativeBody["shape"] {
  if (s.box) return { kind: 1, a: bits(s.box.halfExtents?.x ?? 0), b: bits(s.box.halfExtents?.y ?? 0) };
  if (s.circle) return { kind: 3, a: bits(s.circle.radius ?? 0) };
  return { kind: 2, vertices: (s.polygon?.vertices ?? []).flatMap((v) => [bits(v.x ?? 0), bits(v.y ?? 0)]) };
}

/** The player's bodies in journal_fixture's form. */
export function asNative(bodies: JournalBody[]): NativeBody[] {
  return bodies.map((b) => ({
    id: b.id, kind: b.kind, owner: b.owner, lastInputSeq: b.lastInputSeq,
    x: bits(b.position.x), y: bits(b.position.y), vx: bits(b.velocity.x), vy: bits(b.velocity.y),
    angle: bits(b.angle), angularVelocity: bits(b.angularVelocity), shape: shapeBits(b.shape),
  }));
}

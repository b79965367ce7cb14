// JournalPlayer (src/journal_player.ts) over the world's WebAssembly module against the native
// replay (server/journal): a journal written by the real journal code (tests/js/journal_fixture:
// statics of every shape, boxes, circles and polygons turning, spawned and despawned, a run of
// quiet ticks, a hash every 60 ticks) played to ticks forwards and backwards, each time every
// body's fields and shape equal to the native replay's at that tick, bit for bit, and the state
// hash too; backwards seeks go on from the nearest checkpoint (not from the start), and
// checkpoints stay within their memory budget; a cut journal plays to its last whole tick and
// says it was cut; a byte flipped in a stored hash fails the replay at that hash's tick with the
// native replay's very words, and a seek before it plays again; another format version and bytes
// that are no journal are refused with the reason; disposed players give their memory back.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { JournalError, JournalPlayer } from "../src/journal_player";
import { loadWorldModuleFile } from "../src/node";
import type { WorldModule } from "../src/wasm_world";
import { asNative, nativeBodies, nativeReplay, writeFixture, type NativeTick } from "./journal_fixture";
import { MODULE_PATH } from "./wasm_world_path";

function assertSame(p: JournalPlayer, want: NativeTick | undefined, what: string): void {
  assert.ok(want, `${what}: no native replay at tick ${p.tick}`);
  assert.equal(p.tick, want.tick, `${what}: tick`);
  assert.deepEqual(asNative(p.bodies()), want.bodies, `${what}: the bodies at tick ${want.tick}`);
  assert.equal(p.stateHash().toString(16).padStart(16, "0"), want.hash, `${what}: the state hash at tick ${want.tick}`);
}

let modulePromise: Promise<WorldModule> | null = null;
const load = () => (modulePromise ??= loadWorldModuleFile(MODULE_PATH));
const fixture = writeFixture();
const bytes = new Uint8Array(readFileSync(fixture.path));

test("the fixture: what the journal holds", () => {
  const { info } = fixture;
  assert.equal(info.startTick, 30);
  assert.equal(info.lastTick, 630);
  assert.equal(info.hashes.length, 10);
  const n = nativeBodies(fixture.path, [30, 630]);
  const kinds = (t: number) => new Set(n.get(t)!.bodies.filter((b) => b.kind === 2).map((b) => b.shape.kind));
  assert.deepEqual([...kinds(630)].sort(), [1, 2, 3], "boxes, polygons and circles move");
  assert.ok(n.get(630)!.bodies.some((b) => b.kind === 2 && b.angle !== 0), "some turned");
  assert.ok(n.get(630)!.bodies.length > n.get(30)!.bodies.length, "bodies spawned along the way");
});

test("seeks forwards and backwards: the native replay's bodies at every tick, bit for bit", async () => {
  const m = await load();
  const { info, path } = fixture;
  const ticks = [30, 31, 45, 100, 331, 330, 329, 600, 630, 200, 31, 329, 630, 250, 30, 355, 120, 121, 119, 631, 0];
  const want = nativeBodies(path, ticks.map((t) => Math.min(Math.max(t, info.startTick), info.lastTick)));
  for (const every of [300, 50, 7]) {
    const p = JournalPlayer.open(m, bytes, { checkpointEvery: every });
    assert.equal(p.startTick, 30);
    assert.equal(p.lastTick, 630);
    assert.equal(p.truncated, null);
    assert.equal(p.tick, 30, "open stands at the start");
    assert.equal(p.info.room, "fixture");
    assert.equal(p.info.worldName, "journal_fixture");
    assert.equal(p.info.hashEvery, 60);
    assert.deepEqual(p.info.bounds, { min: { x: -40, y: -25 }, max: { x: 40, y: 25 } });
    assert.equal(p.statics().length, 8, "the level's statics (a ninth comes at tick 280)");
    for (const t of ticks) {
      const before = p.stats(), from: number = p.tick;
      const at = p.seek(t);
      const target = Math.min(Math.max(t, 30), 630);
      assert.equal(at, target, `every ${every}: seek(${t})`);
      assertSame(p, want.get(target), `every ${every}: seek(${t}) from ${from}`);
      const st = p.stats();
      // the nearest checkpoint at or before the target, when the world stood past it or before
      // that checkpoint; the ticks replayed are those from there
      const grid = 30 + Math.floor((target - 30) / st.checkpointEvery) * st.checkpointEvery;
      if (target < from) {
        assert.equal(st.restores, before.restores + 1, `every ${every}: seek(${t}) back from ${from} restores`);
        assert.ok(st.restoredTick <= target && st.restoredTick >= Math.min(grid, target), `every ${every}: seek(${t}) from ${from} went on from ${st.restoredTick}`);
        assert.equal(st.ticksReplayed - before.ticksReplayed, target - st.restoredTick);
      }
    }
    assert.equal(p.seek(Infinity), 630, "Infinity: the last tick");
    assert.equal(p.seek(-Infinity), 30, "-Infinity: the start");
    assert.throws(() => p.seek(NaN), RangeError);
    assert.equal(p.tick, 30, "NaN moves nothing");
    const st = p.stats();
    // 1.3 MB an image (the daemon's 65,536 body slots): the default 64 MiB holds about 48
    assert.ok(st.checkpoints >= Math.min(600 / every, 40), `every ${every}: ${st.checkpoints} checkpoints kept`);
    assert.ok(st.checkpointBytes <= st.checkpointBudgetBytes, `every ${every}: ${st.checkpointBytes} bytes`);
    assert.ok(st.ticksReplayed < 4000, `every ${every}: ${st.ticksReplayed} ticks replayed for ${ticks.length} seeks`);
    p.dispose();
  }
});

test("checkpoints stay within their memory budget, thinned evenly; seeks stay exact", async () => {
  const m = await load();
  const image = fixture.info.hashes[0].offset; // the header and the world's image come first: about one image
  const budget = Math.ceil(image * 3.5);
  const p = JournalPlayer.open(m, bytes, { checkpointEvery: 10, checkpointBudgetBytes: budget });
  p.seek(630);
  const st = p.stats();
  assert.ok(st.checkpointBytes <= budget, `${st.checkpointBytes} bytes of checkpoints, budget ${budget}`);
  assert.ok(st.checkpointEvery >= 160, `spaced ${st.checkpointEvery} ticks apart`);
  assert.ok(st.checkpoints >= 3, `${st.checkpoints} kept`);
  const want = nativeBodies(fixture.path, [500, 95, 401]);
  for (const t of [500, 95, 401]) {
    p.seek(t);
    assertSame(p, want.get(t), `budgeted seek(${t})`);
    assert.ok(p.stats().restoredTick % st.checkpointEvery === 30 % st.checkpointEvery || p.stats().restoredTick === 30);
  }
  p.dispose();
});

test("a cut journal plays to its last whole tick and says it was cut", async () => {
  const m = await load();
  const dir = mkdtempSync(join(tmpdir(), "collide-journal-cut-"));
  const h300 = fixture.info.hashes.find((h) => h.tick === 300)!;
  for (const cut of [h300.offset + 4, h300.offset + 9, fixture.info.bytes - 1]) {
    const path = join(dir, `cut-${cut}.cjournal`);
    writeFileSync(path, bytes.subarray(0, cut));
    const nat = nativeReplay(path);
    const p = JournalPlayer.open(m, bytes.subarray(0, cut));
    assert.equal(p.lastTick, nat.lastTick, `cut at ${cut}`);
    assert.ok(p.truncated, `cut at ${cut}: truncated`);
    assert.equal(p.truncated, nat.truncated, `cut at ${cut}: the native replay's words`);
    assert.equal(p.seek(1e9), nat.lastTick, "past the end: the last whole tick");
    assertSame(p, nativeBodies(fixture.path, [nat.lastTick]).get(nat.lastTick), `cut at ${cut}`);
    p.dispose();
  }
  const early = JournalPlayer.open(m, bytes.subarray(0, h300.offset + 4));
  // the step of tick 300 is whole, its hash is not
  assert.equal(early.lastTick, 300, "cut inside tick 300's hash");
  assert.equal(early.truncated, "the journal is cut inside a record after tick 300");
  early.dispose();
});

test("a flipped byte in a stored hash: the replay fails at that tick, with the native words", async () => {
  const m = await load();
  const h300 = fixture.info.hashes.find((h) => h.tick === 300)!;
  const bad = bytes.slice();
  bad[h300.offset + 3] ^= 0x10;
  const dir = mkdtempSync(join(tmpdir(), "collide-journal-flip-"));
  const path = join(dir, "flipped.cjournal");
  writeFileSync(path, bad);
  const nat = nativeReplay(path);
  assert.equal(nat.result, 2, "the native replay: JOURNAL_MISMATCH");
  const p = JournalPlayer.open(m, bad, { checkpointEvery: 50 });
  p.seek(290);
  const want = nativeBodies(fixture.path, [290, 250, 299]);
  assertSame(p, want.get(290), "before the flipped hash");
  for (const t of [630, 300, 450]) {
    try {
      p.seek(t);
      assert.fail(`seek(${t}) past the flipped hash must throw`);
    } catch (e) {
      assert.ok(e instanceof JournalError, String(e));
      assert.equal(e.kind, "mismatch");
      assert.equal(e.tick, 300);
      assert.equal(e.message, nat.error, "the module's words are the native replay's");
      assert.match(e.message, /^tick 300: state hash [0-9a-f]{16}, the journal's is [0-9a-f]{16}$/);
    }
    assert.equal(p.tick, 300, "the world stands where the replay stopped");
  }
  for (const t of [250, 299]) {
    assert.equal(p.seek(t), t, "a seek before the failure plays again");
    assertSame(p, want.get(t), `seek(${t}) after the failure`);
  }
  p.dispose();
});

test("another format version, and bytes that are no journal, are refused with the reason", async () => {
  const m = await load();
  const dir = mkdtempSync(join(tmpdir(), "collide-journal-v2-"));
  const v2 = bytes.slice();
  v2[8] = 2;
  const path = join(dir, "v2.cjournal");
  writeFileSync(path, v2);
  const nat = nativeReplay(path);
  const refused = (b: Uint8Array): JournalError => {
    try {
      JournalPlayer.open(m, b).dispose();
    } catch (e) {
      assert.ok(e instanceof JournalError, String(e));
      assert.equal(e.kind, "refused");
      assert.equal(e.tick, null);
      return e;
    }
    assert.fail("opened");
  };
  const e = refused(v2);
  assert.equal(e.message, "journal format version 2, this build reads only 1");
  assert.equal(e.message, nat.open);
  // a record of an unknown tag (0x0a, where tick 300's hash record starts): refused at open, with
  // the native words (the module's own snprintf: "tag 0x0a" zero-padded, the byte as %zu)
  const h300 = fixture.info.hashes.find((h) => h.tick === 300)!;
  const tagged = bytes.slice();
  tagged[h300.offset] = 0x0a;
  writeFileSync(join(dir, "tag.cjournal"), tagged);
  const badTag = refused(tagged);
  assert.equal(badTag.message, `a malformed record (tag 0x0a) at byte ${h300.offset}, after tick 300`);
  assert.equal(badTag.message, nativeReplay(join(dir, "tag.cjournal")).open);
  assert.match(refused(new TextEncoder().encode("hello, not a journal")).message, /not a collide journal/);
  assert.match(refused(new Uint8Array(0)).message, /not a collide journal/);
  assert.match(refused(bytes.subarray(0, 100)).message, /cut short/);
});

test("players give their memory back", async () => {
  const m = await load();
  const warm = JournalPlayer.open(m, bytes, { checkpointEvery: 60 });
  warm.seek(630);
  warm.seek(100);
  warm.dispose();
  const mem = m.memoryBytes;
  for (let i = 0; i < 12; i++) {
    const p = JournalPlayer.open(m, bytes, { checkpointEvery: 60 });
    p.seek(630);
    p.seek(100);
    p.bodies();
    p.dispose();
    p.dispose();
    assert.throws(() => p.seek(3), /after dispose/);
  }
  assert.equal(m.memoryBytes, mem, "the module's memory where it was");
});

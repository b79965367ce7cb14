// The viewer's journal mode in headless Chromium (Debian's chromium + chromedriver, as js_viewer):
// the page the daemon serves (GET /, and the world's module at /dist/collide_world.wasm) opens a
// journal from ?journal=URL (a server with CORS standing in for the daemon's ops port and its
// /recordings/<name>) and from its file picker, as a person would:
//  - the slider spans [start, last] of the journal; moved to a tick (and by a key), the world
//    drawn changes and window.collideViewer.journal.bodies is the native replay's at that tick,
//    bit for bit (tests/js/journal_fixture), each body drawn in its colour where it is;
//  - step moves one tick either way (real clicks), play advances ticks (no faster than the
//    journal's rate times the speed) and stops at the last tick at 16x, there equal to the
//    native replay again;
//  - a journal with a flipped byte in a stored hash shows the failure on the bar, naming tick 300,
//    the world where the replay stopped; a seek before it plays again; a cut journal shows its
//    note and plays to its last whole tick; a version-2 journal shows why it was refused;
//  - no console errors. The screenshot is kept in build/viewer-journal-screenshot.png.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { test } from "node:test";
import type { JournalBody } from "../src/journal_player";
import { Browser, hslToRgb, KEYS } from "./browser";
import { Daemon, HAS_WS, sleep } from "./daemon";
import { nativeBodies, writeFixture, type NativeBody } from "./journal_fixture";

const ROOT = join(__dirname, "..", "..");
const SCALE = 9; // px per unit: the page is opened at ?scale=9, the camera at (0, 0)

interface JState {
  loaded: boolean; name: string; tick: number; startTick: number; lastTick: number; playing: boolean;
  speed: number; truncated: string; error: string; errorTick: number; bodies: JournalBody[];
}
interface Listed { id: number; kind: number; x: number; y: number; sx: number; sy: number; colour: string; pixel: number[] }

/** Serves journals as the daemon's ops port will: GET /recordings/<name>, any origin. */
async function recordings(files: Map<string, Uint8Array>): Promise<{ server: Server; url: (name: string) => string }> {
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "").replace(/^\/recordings\//, ""));
    const body = files.get(name);
    res.setHeader("Access-Control-Allow-Origin", "*");
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { server, url: (name) => `http://127.0.0.1:${port}/recordings/${encodeURIComponent(name)}` };
}

test("the viewer plays a recording: slider, step, play, the world drawn as the native replay has it", {
  skip: HAS_WS ? false : "collided has no --ws-port", timeout: 200000,
}, async () => {
  const fixture = writeFixture();
  const bytes = new Uint8Array(readFileSync(fixture.path));
  const { startTick, lastTick } = fixture.info;
  const h300 = fixture.info.hashes.find((h) => h.tick === 300)!;
  const dir = dirname(fixture.path);
  const flipped = bytes.slice();
  flipped[h300.offset + 3] ^= 0x10;
  writeFileSync(join(dir, "flipped.cjournal"), flipped);
  writeFileSync(join(dir, "cut.cjournal"), bytes.subarray(0, h300.offset + 4));
  const v2 = bytes.slice();
  v2[8] = 2;
  writeFileSync(join(dir, "v2.cjournal"), v2);
  const want = nativeBodies(fixture.path, [startTick, 250, 400, 401, 402, lastTick]);

  const d = await Daemon.start({ ws: true });
  const rec = await recordings(new Map([["match 1.cjournal", bytes]]));
  let browser: Browser | null = null;
  try {
    browser = await Browser.start(800, 600);
    const b = browser;
    await b.goto(`http://127.0.0.1:${d.wsPort}/?journal=${encodeURIComponent(rec.url("match 1.cjournal"))}&scale=${SCALE}`);
    // wrapped: an object with an `error` field would read as WebDriver's own error
    const state = async () => (await b.exec<{ s: JState }>(`return { s: window.collideViewer.journal }`)).s;
    // The page's bodies with their floats as bits, taken in the page: WebDriver's JSON would turn
    // a -0 into 0.
    const pageBodies = () => b.exec<NativeBody[]>(`const dv = new DataView(new ArrayBuffer(4));
      const bits = (v) => (dv.setFloat32(0, v, true), dv.getUint32(0, true));
      const shape = (s) => s.box ? { kind: 1, a: bits(s.box.halfExtents.x), b: bits(s.box.halfExtents.y) }
        : s.circle ? { kind: 3, a: bits(s.circle.radius) }
        : { kind: 2, vertices: s.polygon.vertices.flatMap((v) => [bits(v.x), bits(v.y)]) };
      return window.collideViewer.journal.bodies.map((b) => ({ id: b.id, kind: b.kind, owner: b.owner,
        lastInputSeq: b.lastInputSeq, x: bits(b.position.x), y: bits(b.position.y), vx: bits(b.velocity.x),
        vy: bits(b.velocity.y), angle: bits(b.angle), angularVelocity: bits(b.angularVelocity), shape: shape(b.shape) }))`);
    const sameAsNative = async (tick: number, what: string) => {
      assert.equal((await state()).tick, tick, `${what}: the tick`);
      assert.deepEqual(await pageBodies(), want.get(tick)!.bodies, `${what}: the bodies at tick ${tick}`);
    };
    const slide = (tick: number) => b.exec(`const s = document.getElementById("j-slider");
      s.value = String(arguments[0]); s.dispatchEvent(new Event("input", { bubbles: true }));`, tick);
    for (const deadline = Date.now() + 30000; !(await state()).loaded;) {
      if (Date.now() > deadline) throw new Error(`the journal did not open: ${JSON.stringify(await state())}`);
      await sleep(50);
    }
    let st = await state();
    assert.equal(st.name, "match 1.cjournal");
    assert.equal(st.error, "");
    assert.equal(st.truncated, "");
    await sameAsNative(startTick, "opened");

    // the slider spans the journal
    const range = await b.exec<{ min: number; max: number; value: number; disabled: boolean }>(`const s = document.getElementById("j-slider");
      return { min: +s.min, max: +s.max, value: +s.value, disabled: s.disabled }`);
    assert.deepEqual(range, { min: startTick, max: lastTick, value: startTick, disabled: false });

    /** What the page drew last: each body listed, and the canvas pixel at its centre. */
    const drawn = () => b.exec<Listed[]>(`const ctx = document.getElementById("canvas").getContext("2d");
      return [...document.querySelectorAll("#bodies li")].map(li => ({ id: +li.dataset.id, kind: +li.dataset.kind,
        x: +li.dataset.x, y: +li.dataset.y, sx: +li.dataset.sx, sy: +li.dataset.sy, colour: li.dataset.colour,
        pixel: Array.from(ctx.getImageData(Math.round(+li.dataset.sx), Math.round(+li.dataset.sy), 1, 1).data.slice(0, 3)) }))`);
    const canvasSum = () => b.exec<number>(`const c = document.getElementById("canvas");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let h = 0;
      for (let i = 0; i < d.length; i += 4) h = (Math.imul(h, 31) + d[i] + 3 * d[i + 1] + 7 * d[i + 2]) | 0; return h`);
    await sleep(200); // a frame or two
    const before = await drawn(), sumBefore = await canvasSum();
    assert.equal(before.length, want.get(startTick)!.bodies.length, "every body of the start drawn");

    // to tick 400: the world drawn changes, and is the native replay's
    await slide(400);
    await sameAsNative(400, "the slider at 400");
    await sleep(200);
    const after = await drawn();
    assert.notEqual(await canvasSum(), sumBefore, "the canvas changed");
    const st400 = await state();
    assert.deepEqual(after.map((l) => [l.id, l.x, l.y]), st400.bodies.map((bb) => [bb.id, bb.position.x, bb.position.y]),
      "each body drawn where the replay has it");
    const moved = after.filter((l) => l.kind === 2 && !before.some((o) => o.id === l.id && Math.hypot(o.x - l.x, o.y - l.y) < 1));
    assert.ok(moved.length >= 5, `${moved.length} movers drawn elsewhere than at the start`);
    const colourOf = (c: string) => {
      const m = /hsl\(([\d.]+), (\d+)%, (\d+)%\)/.exec(c);
      return m ? hslToRgb(+m[1], +m[2], +m[3]) : [0x8a, 0x8a, 0x8a];
    };
    const near = (p: number[], q: number[]) => p.every((v, i) => Math.abs(v - q[i]) <= 3);
    const size = await b.exec<{ w: number; h: number }>(`const c = document.getElementById("canvas"); return { w: c.width, h: c.height }`);
    for (const l of after)
      assert.ok(Math.abs(l.sx - (size.w / 2 + l.x * SCALE)) < 0.06 && Math.abs(l.sy - (size.h / 2 - l.y * SCALE)) < 0.06,
        `body ${l.id} at its screen place: ${JSON.stringify(l)}, canvas ${size.w} x ${size.h}`);
    const inColour = after.filter((l) => near(l.pixel, colourOf(l.colour)));
    assert.ok(inColour.filter((l) => l.kind === 2).length >= moved.length / 2, `movers drawn in their colour at their place: ${inColour.length} of ${after.length}`);
    assert.ok(inColour.some((l) => l.kind === 1), "statics drawn grey at their place");

    // step, either way (real clicks), and a key on the slider
    await b.click("#j-step");
    await sameAsNative(401, "step");
    writeFileSync(join(ROOT, "build", "viewer-journal-screenshot.png"), await b.screenshot());
    await b.click("#j-back");
    await sameAsNative(400, "step back");
    await b.exec(`document.getElementById("j-slider").focus()`);
    await b.holdKey(KEYS.right, 10);
    await sameAsNative(401, "the right arrow on the slider");
    await b.click("#j-step");
    await sameAsNative(402, "step");

    // play at 1x: ticks advance, no faster than 60 a second
    const t0 = Date.now(), tick0 = (await state()).tick;
    await b.click("#j-play");
    assert.equal((await state()).playing, true);
    await sleep(700);
    const tick1 = (await state()).tick, t1 = Date.now();
    await b.click("#j-play"); // pause
    st = await state();
    assert.equal(st.playing, false);
    assert.ok(tick1 > tick0, `playing advanced: ${tick0} to ${tick1}`);
    assert.ok(tick1 - tick0 <= Math.ceil(((t1 - t0) / 1000) * 60) + 1, `at most 60 ticks a second: ${tick1 - tick0} in ${t1 - t0} ms`);
    const paused = st.tick;
    await sleep(300);
    assert.equal((await state()).tick, paused, "paused, it stays");

    // play at 16x to the end: it stops at the last tick, the native replay's world there
    await b.exec(`const s = document.getElementById("j-speed"); s.value = "16"; s.dispatchEvent(new Event("change"))`);
    await b.click("#j-play");
    const seen: number[] = [];
    for (const deadline = Date.now() + 60000; (st = await state()).playing;) {
      seen.push(st.tick);
      if (Date.now() > deadline) throw new Error(`still playing at tick ${st.tick}`);
      await sleep(30);
    }
    assert.ok(seen.every((t, i) => i === 0 || t >= seen[i - 1]), "ticks only go forwards while playing");
    assert.ok(seen.length > 1 && seen[seen.length - 1] > paused, "it played");
    await sameAsNative(lastTick, "played to the end");
    assert.equal((await state()).speed, 16);

    // the file picker: a flipped hash shows the failure, naming its tick
    await b.setInputFiles("#journal-file", join(dir, "flipped.cjournal"));
    for (const deadline = Date.now() + 20000; (st = await state()).name !== "flipped.cjournal" || !st.loaded;) {
      if (Date.now() > deadline) throw new Error(`the picked journal did not open: ${JSON.stringify(st)}`);
      await sleep(50);
    }
    await sameAsNative(startTick, "the picked journal opened");
    await slide(lastTick);
    st = await state();
    assert.equal(st.tick, 300, "the world stands where the replay stopped");
    assert.equal(st.errorTick, 300);
    assert.match(st.error, /^tick 300: state hash [0-9a-f]{16}, the journal's is [0-9a-f]{16}$/);
    const note = () => b.exec<{ text: string; cls: string; colour: string; height: number }>(`const n = document.getElementById("j-note");
      return { text: n.textContent, cls: n.className, colour: getComputedStyle(n).color, height: n.getBoundingClientRect().height }`);
    let n = await note();
    assert.equal(n.text, `replay failed: ${st.error}`);
    assert.equal(n.cls, "error");
    assert.equal(n.colour, "rgb(255, 107, 94)", "shown in red");
    assert.ok(n.height > 0, "visible");
    await slide(250);
    await sameAsNative(250, "a seek before the failure plays again");
    assert.equal((await state()).error, "");
    assert.equal((await note()).text, "");

    // a cut journal: its note, and it plays to its last whole tick
    await b.setInputFiles("#journal-file", join(dir, "cut.cjournal"));
    for (const deadline = Date.now() + 20000; (st = await state()).name !== "cut.cjournal" || !st.loaded;) {
      if (Date.now() > deadline) throw new Error(`the cut journal did not open: ${JSON.stringify(st)}`);
      await sleep(50);
    }
    assert.equal(st.lastTick, 300);
    assert.equal(st.truncated, "the journal is cut inside a record after tick 300");
    assert.equal(+(await b.exec<string>(`return document.getElementById("j-slider").max`)), 300);
    n = await note();
    assert.equal(n.cls, "warn");
    assert.match(n.text, /cut inside a record after tick 300: it plays to tick 300/);

    // another version: refused, with the reason shown
    await b.setInputFiles("#journal-file", join(dir, "v2.cjournal"));
    for (const deadline = Date.now() + 20000; !(st = await state()).error;) {
      if (Date.now() > deadline) throw new Error(`no refusal shown: ${JSON.stringify(st)}`);
      await sleep(50);
    }
    assert.equal(st.loaded, false);
    assert.equal(st.error, "v2.cjournal: journal format version 2, this build reads only 1");
    n = await note();
    assert.equal(n.text, st.error);
    assert.equal(n.cls, "error");

    assert.deepEqual(await b.consoleErrors(), [], "no console errors");
    await d.stopAndCheck();
  } finally {
    await browser?.close();
    rec.server.close();
    await d.terminate();
  }
});

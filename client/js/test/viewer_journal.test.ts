// The viewer's journal mode in headless Chromium (Debian's chromium + chromedriver, as js_viewer).
// The page is the one the daemon serves (GET /, and the world's module at
// /dist/collide_world.wasm); every journal it fetches comes from a real collided's ops port
// (--record-http on: GET /recordings, GET /recordings/<name>, with CORS: the page's origin is the
// WebSocket port, another one). Two cases:
//
// 1. A match the daemon itself recorded (--record-dir): players over TCP (the SDK's client) spawn
//    32 movers of four shapes and steer them for about four seconds, an admin adds a one-way
//    static, a player despawns a body, then the admin's StopRecording finishes the journal (its
//    END record: the journal is whole, so the page must show no note; a cut one is case 2's). The
//    test lists GET /recordings on the ops port (the listing's size the daemon's own count), opens
//    ?journal=<the ops port>/recordings/<name>, and holds the page to the native replay
//    (tests/js/journal_fixture over the file the daemon wrote, the same bytes the port serves):
//    the slider spans [start, last whole tick] as the native replay reports them (and as the
//    daemon's log and RecordingInfo name them), at six ticks (slider, step, back) and at the end
//    of play window.collideViewer.journal.bodies is the native replay's bit for bit, each body
//    drawn at its place, the movers in their colours; no console errors. The screenshot is kept in
//    build/viewer-journal-daemon-screenshot.png.
// 2. The fixture journal (tests/js/journal_fixture: statics of every shape, turned, one-way,
//    sensors, mover collisions switched off and on), copied into the daemon's record dir under a
//    recording's name and fetched from the daemon too:
//  - the slider spans [start, last] of the journal; moved to a tick (and by a key), the world
//    drawn changes and window.collideViewer.journal.bodies is the native replay's at that tick,
//    bit for bit, each body drawn in its colour where it is;
//  - step moves one tick either way (real clicks), play advances ticks (no faster than the
//    journal's rate times the speed) and stops at the last tick at 16x, there equal to the
//    native replay again;
//  - a journal with a flipped byte in a stored hash (from the file picker) shows the failure on
//    the bar, naming tick 300, the world where the replay stopped; a seek before it plays again;
//    a cut journal (from the daemon) shows its note and plays to its last whole tick; a version-2
//    journal (from the daemon) shows why it was refused;
//  - no console errors. The screenshot is kept in build/viewer-journal-screenshot.png.
// The damaged journals are what the daemon does not write on purpose (a cut one it does, when
// killed): the fixture makes them.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import type { JournalBody } from "../src/journal_player";
import { BodyKind, connect, type CollideClient } from "../src/node";
import type { Shape } from "../src/proto";
import { Browser, hslToRgb, KEYS } from "./browser";
import { Daemon, HAS_WS, sleep, type WorldSpec } from "./daemon";
import { nativeBodies, nativeReplay, writeFixture, type NativeBody, type NativeTick } from "./journal_fixture";

const ROOT = join(__dirname, "..", "..");
// px per unit: the page is opened at ?scale=, the camera at (0, 0): case 1 shows its whole arena
const SCALE = 9;
const ARENA_SCALE = 6;

interface JState {
  loaded: boolean; name: string; tick: number; startTick: number; lastTick: number; playing: boolean;
  speed: number; truncated: string; error: string; errorTick: number; bodies: JournalBody[];
}
interface Listed { id: number; kind: number; x: number; y: number; sx: number; sy: number; colour: string; pixel: number[] }

/** The page's journal mode as the tests look at it and move it. */
function journalPage(b: Browser, want: () => Map<number, NativeTick>, scale = SCALE) {
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
    const native = want().get(tick);
    assert.ok(native, `no native replay asked for tick ${tick}`);
    assert.deepEqual(await pageBodies(), native.bodies, `${what}: the bodies at tick ${tick}`);
  };
  const slide = (tick: number) => b.exec(`const s = document.getElementById("j-slider");
    s.value = String(arguments[0]); s.dispatchEvent(new Event("input", { bubbles: true }));`, tick);
  const range = () => b.exec<{ min: number; max: number; value: number; disabled: boolean }>(`const s = document.getElementById("j-slider");
    return { min: +s.min, max: +s.max, value: +s.value, disabled: s.disabled }`);
  /** What the page drew last: each body listed, and the canvas pixel at its centre. */
  const drawn = () => b.exec<Listed[]>(`const ctx = document.getElementById("canvas").getContext("2d");
    return [...document.querySelectorAll("#bodies li")].map(li => ({ id: +li.dataset.id, kind: +li.dataset.kind,
      x: +li.dataset.x, y: +li.dataset.y, sx: +li.dataset.sx, sy: +li.dataset.sy, colour: li.dataset.colour,
      pixel: Array.from(ctx.getImageData(Math.round(+li.dataset.sx), Math.round(+li.dataset.sy), 1, 1).data.slice(0, 3)) }))`);
  const canvasSum = () => b.exec<number>(`const c = document.getElementById("canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let h = 0;
    for (let i = 0; i < d.length; i += 4) h = (Math.imul(h, 31) + d[i] + 3 * d[i + 1] + 7 * d[i + 2]) | 0; return h`);
  const note = () => b.exec<{ text: string; cls: string; colour: string; height: number }>(`const n = document.getElementById("j-note");
    return { text: n.textContent, cls: n.className, colour: getComputedStyle(n).color, height: n.getBoundingClientRect().height }`);
  /** Waits for the journal named `name` to open (or, with `refused`, for the page to refuse it). */
  const opened = async (name: string, refused = false) => {
    let st: JState;
    for (const deadline = Date.now() + 30000; (st = await state()).name !== name || (refused ? !st.error : !st.loaded);) {
      if (Date.now() > deadline || (!refused && st.name === name && st.error)) throw new Error(`${name} did not ${refused ? "show a refusal" : "open"}: ${JSON.stringify({ ...st, bodies: st.bodies.length })}`);
      await sleep(50);
    }
    return st;
  };
  /** Each body drawn at its screen place (the camera at (0, 0), `scale` px a unit), and how many
   * movers and statics show their colour at their centre. */
  const drawnInPlace = async (what: string) => {
    const list = await drawn();
    const st = await state();
    assert.deepEqual(list.map((l) => [l.id, l.x, l.y]), st.bodies.map((bb) => [bb.id, bb.position.x, bb.position.y]),
      `${what}: each body drawn where the replay has it`);
    const size = await b.exec<{ w: number; h: number }>(`const c = document.getElementById("canvas"); return { w: c.width, h: c.height }`);
    for (const l of list)
      assert.ok(Math.abs(l.sx - (size.w / 2 + l.x * scale)) < 0.06 && Math.abs(l.sy - (size.h / 2 - l.y * scale)) < 0.06,
        `${what}: body ${l.id} at its screen place: ${JSON.stringify(l)}, canvas ${size.w} x ${size.h}`);
    const colourOf = (c: string) => {
      const m = /hsl\(([\d.]+), (\d+)%, (\d+)%\)/.exec(c);
      return m ? hslToRgb(+m[1], +m[2], +m[3]) : [0x8a, 0x8a, 0x8a];
    };
    const near = (p: number[], q: number[]) => p.every((v, i) => Math.abs(v - q[i]) <= 3);
    const inColour = list.filter((l) => near(l.pixel, colourOf(l.colour)));
    return { list, movers: inColour.filter((l) => l.kind === 2).length, statics: inColour.filter((l) => l.kind === 1).length };
  };
  return { state, pageBodies, sameAsNative, slide, range, drawn, canvasSum, note, opened, drawnInPlace };
}

// Case 1's level: walls inside the bounds, a round pillar (the page shows it whole at ARENA_SCALE).
const ARENA: WorldSpec = {
  bounds: [[-40, -25], [40, 25]],
  statics: [
    { position: [0, -23.5], box: { half_extents: [38, 0.5] } }, { position: [0, 23.5], box: { half_extents: [38, 0.5] } },
    { position: [-38.5, 0], box: { half_extents: [0.5, 22] } }, { position: [38.5, 0], box: { half_extents: [0.5, 22] } },
    { position: [14, -17], circle: { radius: 2.5 } },
  ],
};
const SHAPES: Shape[] = [
  { box: { halfExtents: { x: 0.8, y: 0.5 } } },
  { circle: { radius: 0.7 } },
  { polygon: { vertices: [[1, 0], [0.5, 0.866], [-0.5, 0.866], [-1, 0], [-0.5, -0.866], [0.5, -0.866]].map(([x, y]) => ({ x, y })) } },
  { polygon: { vertices: [{ x: -1.2, y: -0.6 }, { x: 1.2, y: -0.6 }, { x: 0.3, y: 0.9 }] } },
];

test("the viewer plays a match the daemon recorded, fetched from the daemon's ops port, as the native replay has it", {
  skip: HAS_WS ? false : "collided has no --ws-port", timeout: 150000,
}, async () => {
  const recDir = mkdtempSync(join(tmpdir(), "collide-recordings-"));
  const ADMIN = "referee-secret";
  const d = await Daemon.start({
    ws: true, http: true, world: ARENA,
    args: ["--record-dir", recDir, "--record-http", "on", "--admin-token", ADMIN],
  });
  const clients: CollideClient[] = [];
  let browser: Browser | null = null;
  try {
    // The default room records from the end of its first step: bodies spawned from now on are
    // the journal's records (SPAWN, INTENT, DESPAWN, ONE_WAY), not its image.
    const startedLine = await d.waitForLog(/event=recording_started\b.*\broom=default\b/);
    const file = /\bfile=(\S+)/.exec(startedLine)![1];
    const loggedStart = Number(/\bstart_tick=(\d+)/.exec(startedLine)![1]);
    assert.match(file, /^default\.\d{6,}\.cjournal$/);

    const admin = await connect(d.tcpUrl, { name: "referee", token: ADMIN });
    clients.push(admin);
    const players: CollideClient[] = [];
    for (let p = 0; p < 4; p++) players.push(await connect(d.tcpUrl, { name: `player-${p}` }));
    clients.push(...players);
    // 32 movers (8 a player, the daemon's default cap): boxes, circles, hexagons, wedges in a grid,
    // some turned.
    const movers = (await Promise.all(players.map((c, p) => Promise.all(Array.from({ length: 8 }, (_, i) => {
      const k = 8 * p + i;
      return c.spawn(SHAPES[k % 4], { position: { x: -28 + 8 * (k % 8), y: -13.5 + 9 * Math.floor(k / 8) }, angle: k % 3 ? 0 : 0.4 * k })
        .then((r) => ({ c, id: r.bodyId, k }));
    }))))).flat();
    assert.equal(movers.length, 32);
    let seed = 20240607;
    const rnd = (lo: number, hi: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return lo + ((hi - lo) * (seed >>> 8)) / 16777216;
    };
    // About four seconds of play: a new heading for every mover every quarter second, every
    // other one turning too; an admin's one-way static and a despawn on the way. The ticks looked
    // at below: one after the spawns (round 2), one after the despawn (round 13), by the players'
    // snapshots.
    let q1 = 0, q3 = 0;
    for (let round = 0; round < 16; round++) {
      if (round === 2) q1 = players[1].tick;
      if (round === 13) q3 = players[1].tick;
      for (const m of movers) if (m.id) m.c.move(m.id, { x: rnd(-9, 9), y: rnd(-9, 9) }, m.k % 2 ? rnd(-3, 3) : 0);
      if (round === 4) await admin.spawn({ box: { halfExtents: { x: 5, y: 0.3 } } }, { position: { x: -20, y: 19 }, kind: BodyKind.BODY_KIND_STATIC, oneWay: true });
      if (round === 6) {
        movers[0].c.despawn(movers[0].id);
        movers[0].id = 0;
      }
      await sleep(250);
    }
    const reply = await admin.request({ stopRecording: {} });
    const info = reply.recordingInfo!;
    assert.ok(info, `StopRecording answered with ${reply.msg}`);
    assert.equal(info.file, file);
    assert.equal(info.active, false);
    assert.equal(Number(info.startTick), loggedStart);
    for (const c of clients) c.close();
    clients.length = 0;
    const finished = await d.waitForLog(new RegExp(`event=recording_finished\\b.*\\bfile=${file.replace(/\./g, "\\.")}\\b`));
    assert.match(finished, /\bwhy=stopped\b/);
    const endTick = Number(/\bend_tick=(\d+)/.exec(finished)![1]);
    const totalBytes = Number(/\bbytes=(\d+)/.exec(finished)![1]);
    assert.equal(Number(info.bytes), totalBytes);

    // The listing on the ops port: the file, once its last bytes are on the disk, at the size the
    // daemon counted.
    let listed: { name: string; bytes: number }[] = [];
    for (const deadline = Date.now() + 20000; ;) {
      const r = await fetch(`${d.httpUrl}/recordings`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("access-control-allow-origin"), "*");
      listed = (await r.json()) as typeof listed;
      if (listed.some((e) => e.name === file && e.bytes === totalBytes)) break;
      if (Date.now() > deadline) throw new Error(`GET /recordings never listed ${file} at ${totalBytes} bytes: ${JSON.stringify(listed)}`);
      await sleep(100);
    }
    assert.deepEqual(listed.map((e) => e.name), [file], "the one recording, by its name");
    const served = await fetch(`${d.httpUrl}/recordings/${file}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("access-control-allow-origin"), "*");
    const path = join(recDir, file);
    assert.deepEqual(new Uint8Array(await served.arrayBuffer()), new Uint8Array(readFileSync(path)), "the port serves the file as written");

    // The oracle: the native replay of the file the daemon wrote. It is whole (END), every hash
    // holds, and it spans what the daemon said.
    const nat = nativeReplay(path);
    assert.deepEqual({ result: nat.result, error: nat.error, truncated: nat.truncated },
      { result: 1, error: "", truncated: "" }, "the native replay runs to the end (JOURNAL_END), checked");
    assert.equal(nat.startTick, loggedStart);
    assert.equal(nat.lastTick, endTick);
    assert.ok(nat.hashesChecked >= 3, `${nat.hashesChecked} state hashes checked`);
    const { startTick, lastTick } = nat;
    assert.ok(startTick < q1 && q1 + 30 < q3 && q3 < lastTick - 1, `ticks ${startTick} < ${q1} < ${q3} < ${lastTick}`);
    const mid = Math.round((q1 + q3) / 2);
    const want = nativeBodies(path, [...new Set([startTick, q1, mid, mid + 1, q3, lastTick - 1, lastTick])]);
    // A meaningful recording: at q3 the players' 31 movers and the admin's static are there, and
    // they moved since q1.
    const moversAt = (t: number) => want.get(t)!.bodies.filter((bb) => bb.kind === 2);
    const f32 = (u: number) => new Float32Array(new Uint32Array([u]).buffer)[0];
    assert.equal(moversAt(q3).length, 31);
    assert.equal(want.get(q3)!.bodies.filter((bb) => bb.kind === 1).length, ARENA.statics!.length + 1);
    const movedNatively = moversAt(q3).filter((bb) => moversAt(q1).some((o) => o.id === bb.id && Math.hypot(f32(o.x) - f32(bb.x), f32(o.y) - f32(bb.y)) >= 1));
    assert.ok(movedNatively.length >= 20, `${movedNatively.length} movers moved a unit or more between ${q1} and ${q3}`);

    browser = await Browser.start(800, 600);
    const b = browser;
    const pg = journalPage(b, () => want, ARENA_SCALE);
    const url = `${d.httpUrl}/recordings/${file}`;
    await b.goto(`http://127.0.0.1:${d.wsPort}/?journal=${encodeURIComponent(url)}&scale=${ARENA_SCALE}`);
    let st = await pg.opened(file);
    assert.equal(st.error, "");
    assert.equal(st.truncated, "", "a finished journal is whole");
    const n0 = await pg.note();
    assert.deepEqual([n0.text, n0.cls], ["", ""], "no note on the bar");
    await pg.sameAsNative(startTick, "opened");
    // the slider spans the journal as the native replay has it
    assert.deepEqual(await pg.range(), { min: startTick, max: lastTick, value: startTick, disabled: false });
    assert.deepEqual([st.startTick, st.lastTick], [startTick, lastTick]);

    // through the match: the slider, a step either way
    await pg.slide(q1);
    await pg.sameAsNative(q1, "the slider after the spawns");
    await sleep(200); // a frame or two
    const sumQ1 = await pg.canvasSum();
    const atQ1 = await pg.drawnInPlace(`tick ${q1}`);
    await pg.slide(q3);
    await pg.sameAsNative(q3, "the slider after the despawn");
    await sleep(200);
    assert.notEqual(await pg.canvasSum(), sumQ1, "the canvas changed");
    const atQ3 = await pg.drawnInPlace(`tick ${q3}`);
    assert.equal(atQ3.list.length, want.get(q3)!.bodies.length, "every body drawn");
    const moved = atQ3.list.filter((l) => l.kind === 2 && !atQ1.list.some((o) => o.id === l.id && Math.hypot(o.x - l.x, o.y - l.y) < 1));
    assert.ok(moved.length >= 20, `${moved.length} movers drawn elsewhere than at tick ${q1}`);
    assert.ok(atQ3.movers >= 16, `movers drawn in their colour at their place: ${atQ3.movers} of 31`);
    assert.ok(atQ3.statics >= 1, "statics drawn grey at their place");
    writeFileSync(join(ROOT, "build", "viewer-journal-daemon-screenshot.png"), await b.screenshot());
    await pg.slide(mid);
    await pg.sameAsNative(mid, "the slider between them");
    await b.click("#j-step");
    await pg.sameAsNative(mid + 1, "step");
    await b.click("#j-back");
    await pg.sameAsNative(mid, "step back");
    await pg.slide(lastTick - 1);
    await pg.sameAsNative(lastTick - 1, "the slider a tick before the end");

    // play at 4x from the middle: it stops at the last tick, the native replay's world there
    await pg.slide(mid);
    await b.exec(`const s = document.getElementById("j-speed"); s.value = "4"; s.dispatchEvent(new Event("change"))`);
    await b.click("#j-play");
    const seen: number[] = [];
    for (const deadline = Date.now() + 60000; (st = await pg.state()).playing;) {
      seen.push(st.tick);
      if (Date.now() > deadline) throw new Error(`still playing at tick ${st.tick}`);
      await sleep(30);
    }
    assert.ok(seen.length > 1 && seen.every((t, i) => i === 0 || t >= seen[i - 1]), `ticks only go forwards while playing: ${seen}`);
    await pg.sameAsNative(lastTick, "played to the end");
    assert.deepEqual([st.error, (await pg.note()).text], ["", ""], "no failure, no note at the end");

    assert.deepEqual(await b.consoleErrors(), [], "no console errors");
    await d.stopAndCheck();
  } finally {
    for (const c of clients) c.close();
    await browser?.close();
    await d.terminate();
  }
});

test("the viewer plays the fixture journal: slider, step, play, the world drawn as the native replay has it; damaged journals", {
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
  const v2 = bytes.slice();
  v2[8] = 2;
  // The daemon serves the fixture, a cut copy and a version-2 copy from its record dir, under
  // recordings' names (it serves nothing else); it records nothing itself (--record-rooms none).
  const recDir = mkdtempSync(join(tmpdir(), "collide-recordings-"));
  const NAME = "fixture.000001.cjournal", CUT = "cut.000001.cjournal", V2 = "v2.000001.cjournal";
  copyFileSync(fixture.path, join(recDir, NAME));
  writeFileSync(join(recDir, CUT), bytes.subarray(0, h300.offset + 4));
  writeFileSync(join(recDir, V2), v2);
  const want = nativeBodies(fixture.path, [startTick, 250, 400, 401, 402, lastTick]);

  const d = await Daemon.start({ ws: true, http: true, args: ["--record-dir", recDir, "--record-http", "on", "--record-rooms", "none"] });
  let browser: Browser | null = null;
  try {
    browser = await Browser.start(800, 600);
    const b = browser;
    const pg = journalPage(b, () => want);
    const { state, sameAsNative, slide, drawn, canvasSum, note } = pg;
    const page = (name: string) => `http://127.0.0.1:${d.wsPort}/?journal=${encodeURIComponent(`${d.httpUrl}/recordings/${name}`)}&scale=${SCALE}`;
    await b.goto(page(NAME));
    let st = await pg.opened(NAME);
    assert.equal(st.error, "");
    assert.equal(st.truncated, "");
    await sameAsNative(startTick, "opened");

    // the slider spans the journal
    assert.deepEqual(await pg.range(), { min: startTick, max: lastTick, value: startTick, disabled: false });

    await sleep(200); // a frame or two
    const before = await drawn(), sumBefore = await canvasSum();
    assert.equal(before.length, want.get(startTick)!.bodies.length, "every body of the start drawn");

    // to tick 400: the world drawn changes, and is the native replay's
    await slide(400);
    await sameAsNative(400, "the slider at 400");
    await sleep(200);
    assert.notEqual(await canvasSum(), sumBefore, "the canvas changed");
    const at400 = await pg.drawnInPlace("tick 400");
    const moved = at400.list.filter((l) => l.kind === 2 && !before.some((o) => o.id === l.id && Math.hypot(o.x - l.x, o.y - l.y) < 1));
    assert.ok(moved.length >= 5, `${moved.length} movers drawn elsewhere than at the start`);
    assert.ok(at400.movers >= moved.length / 2, `movers drawn in their colour at their place: ${at400.movers} of ${at400.list.length}`);
    assert.ok(at400.statics >= 1, "statics drawn grey at their place");

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
    await pg.opened("flipped.cjournal");
    await sameAsNative(startTick, "the picked journal opened");
    await slide(lastTick);
    st = await state();
    assert.equal(st.tick, 300, "the world stands where the replay stopped");
    assert.equal(st.errorTick, 300);
    assert.match(st.error, /^tick 300: state hash [0-9a-f]{16}, the journal's is [0-9a-f]{16}$/);
    let n = await note();
    assert.equal(n.text, `replay failed: ${st.error}`);
    assert.equal(n.cls, "error");
    assert.equal(n.colour, "rgb(255, 107, 94)", "shown in red");
    assert.ok(n.height > 0, "visible");
    await slide(250);
    await sameAsNative(250, "a seek before the failure plays again");
    assert.equal((await state()).error, "");
    assert.equal((await note()).text, "");

    // a cut journal from the daemon (as a file still being written is): its note, and it plays
    // to its last whole tick
    await b.goto(page(CUT));
    st = await pg.opened(CUT);
    assert.equal(st.lastTick, 300);
    assert.equal(st.truncated, "the journal is cut inside a record after tick 300");
    assert.equal((await pg.range()).max, 300);
    n = await note();
    assert.equal(n.cls, "warn");
    assert.match(n.text, /cut inside a record after tick 300: it plays to tick 300/);

    // another version: refused, with the reason shown
    await b.goto(page(V2));
    st = await pg.opened(V2, true);
    assert.equal(st.loaded, false);
    assert.equal(st.error, `${V2}: journal format version 2, this build reads only 1`);
    n = await note();
    assert.equal(n.text, st.error);
    assert.equal(n.cls, "error");

    assert.deepEqual(await b.consoleErrors(), [], "no console errors");
    await d.stopAndCheck();
  } finally {
    await browser?.close();
    await d.terminate();
  }
});

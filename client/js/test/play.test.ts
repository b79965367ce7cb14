// The play page (GET /play) in headless Chromium against the real daemon, as a person would play
// it: the page the daemon serves joins with the daemon's token, spawns the player's body, and
//  - a click on a bot moving across the screen fires a RayCast at the tick the screen showed
//    (lag compensation): the daemon answers with the bot's id, the score counts it, the bot
//    flashes on the canvas; the same ray now (at_tick 0) would miss, so the tick mattered; a click
//    on empty space fires a miss that does not score;
//  - held keys (real key events through WebDriver: A, then the right arrow) move the body the way
//    they say, by the daemon's state (an observer's snapshots) and on the screen (the camera
//    follows the body, so a pillar of the world file is drawn where the body's move puts it, and
//    no longer where it was);
//  - pushed into the pillar, the body drawn is never inside it in any frame (the page's trail of
//    drawn positions), and the daemon has it stopped at the pillar's face;
//  - no console errors. The screenshot (the hit bot flashing, the shot's line) is kept in
//    build/play-screenshot.png for a person to look at.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { connect, type CollideClient, type Point } from "../src/node";
import { Browser, decodePng, KEYS, pixel } from "./browser";
import { Daemon, HAS_WS, sleep, waitFor } from "./daemon";

const ROOT = join(__dirname, "..", "..");
const SCALE = 8; // px per unit: the page is opened at ?scale=8
const SPEED = 12; // the page's default speed, units/s
const PILLAR = { x: 12, y: 0, hx: 2, hy: 6 }; // a static box of the world file
const RADIUS = 1; // the player's body (the page's)

interface Drawn { id: number; kind: number; x: number; y: number; sx: number; sy: number; flash: boolean }
interface Frame { tick: number; camera: Point; scale: number; own: Point; drawn: Drawn[] }
interface Shot {
  origin: Point; translation: Point; atTick: number; newestTick: number; hitBodyId: number; error: string;
  result: { tick: number; hits: { bodyId: number; fraction: number }[] } | null;
}
interface PlayState { connected: boolean; bodyId: number; score: number; frame: Frame | null; shots: Shot[]; trail: Point[]; error: string; prediction: string }

/** The canvas pixel at (x, y) of the frame last drawn (read between two frames: the canvas holds
 * exactly what state.frame describes). */
const PIXEL_JS = `const px = (x, y) => Array.from(document.getElementById("canvas").getContext("2d")
  .getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3));`;

const near = (got: number[], want: number[], what: string) =>
  assert.ok(got.every((v, i) => Math.abs(v - want[i]) <= 3), `${what}: pixel ${got}, want ${want}`);
const far = (got: number[], not: number[], what: string) =>
  assert.ok(got.some((v, i) => Math.abs(v - not[i]) > 30), `${what}: pixel ${got}, must not be ${not}`);
const GREY = [0x8a, 0x8a, 0x8a], WHITE = [255, 255, 255], GREEN = [0x44, 0xcc, 0x44];

/** How far a circle of the player's radius at p reaches into the pillar (<= 0: not inside). */
function intoPillar(p: Point): number {
  const dx = Math.max(PILLAR.x - PILLAR.hx - p.x, 0, p.x - PILLAR.x - PILLAR.hx);
  const dy = Math.max(PILLAR.y - PILLAR.hy - p.y, 0, p.y - PILLAR.y - PILLAR.hy);
  return RADIUS - Math.hypot(dx, dy);
}

test("the play page: a click hits the bot the screen showed, keys move the body, never into a wall", {
  skip: HAS_WS ? false : "collided has no --ws-port", timeout: 150000,
}, async () => {
  const d = await Daemon.start({
    ws: true,
    args: ["--token", "play", "--admin-token", "watch"],
    world: {
      bounds: [[-60, -60], [60, 60]],
      statics: [{ position: [PILLAR.x, PILLAR.y], box: { half_extents: [PILLAR.hx, PILLAR.hy] } }],
      spawn_points: [[0, 0]],
    },
  });
  const clients: CollideClient[] = [];
  let browser: Browser | null = null;
  try {
    const observer = await connect(d.tcpUrl, { name: "observer", token: "watch" });
    clients.push(observer);
    await observer.setView({ x: 0, y: 0 }, { x: 60, y: 60 });

    browser = await Browser.start(800, 600);
    // The page the daemon serves; it opens ws://<its host>/v1 itself.
    await browser.goto(`http://127.0.0.1:${d.wsPort}/play?token=play&spawn=0,0&scale=${SCALE}`);
    const page = () => browser!.exec<PlayState>(`return window.collidePlay`);
    let st = await page();
    for (const deadline = Date.now() + 20000; !(st.bodyId && st.frame); st = await page()) {
      if (Date.now() > deadline) throw new Error(`the page did not start: ${JSON.stringify(st)}`);
      await sleep(50);
    }
    const me = st.bodyId;
    // the daemon serves the world's module beside the page: the player's body is predicted by the
    // server's own code (WorldPredictor), not the SDK's fallback
    assert.equal(st.prediction, "world", "the page predicts with the world's WebAssembly module");
    await waitFor(() => observer.bodies.has(me), "the observer to see the player's body");
    assert.deepEqual(observer.bodies.get(me)!.position, { x: 0, y: 0 }, "spawned where ?spawn=0,0 says");
    assert.notEqual(observer.bodies.get(me)!.owner, observer.welcome.clientId);

    // A bot crossing the screen left of the player, upwards at 20 units/s.
    const botClient = await connect(d.tcpUrl, { name: "bot", token: "play" });
    clients.push(botClient);
    const bot = await botClient.spawn({ circle: { radius: 1 } }, { position: { x: -20, y: -14 } });
    botClient.move(bot.bodyId, { x: 0, y: 20 });
    // Click where the page draws it, in the same turn of the page's event loop as reading the
    // frame, once it is drawn in front of the player.
    let clicked: { x: number; y: number; tick: number } | null = null;
    for (const deadline = Date.now() + 10000; !clicked; await sleep(10)) {
      if (Date.now() > deadline) throw new Error("the bot was never drawn in front of the player");
      clicked = await browser.exec<{ x: number; y: number; tick: number } | null>(`
        const f = window.collidePlay.frame, b = f && f.drawn.find((x) => x.id === arguments[0]);
        if (!b || Math.abs(b.y) > 6) return null;
        const c = document.getElementById("canvas"), r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent("mousedown", { clientX: r.left + b.sx, clientY: r.top + b.sy, button: 0, bubbles: true }));
        return { x: b.x, y: b.y, tick: f.tick };`, bot.bodyId);
    }
    for (const deadline = Date.now() + 10000; !(st = await page()).shots[0]?.result; await sleep(10)) {
      if (Date.now() > deadline || st.shots[0]?.error) throw new Error(`no answer to the shot: ${JSON.stringify(st.shots)}`);
    }
    // The hit shows: the bot flashes where it is drawn (the canvas between two frames).
    const flash = await browser.exec<{ drawn: Drawn | undefined; rgb: number[] }>(`${PIXEL_JS}
      const b = window.collidePlay.frame.drawn.find((x) => x.id === arguments[0]);
      return { drawn: b, rgb: b ? px(b.sx, b.sy) : [] };`, bot.bodyId);
    const png = await browser.screenshot();
    const shot = st.shots[0];
    assert.equal(st.shots.length, 1);
    assert.equal(shot.result!.hits[0]?.bodyId, bot.bodyId, `the daemon's answer names the bot: ${JSON.stringify(shot.result)}`);
    assert.equal(shot.atTick, Math.round(clicked.tick), `at_tick is the tick the screen showed (${clicked.tick})`);
    assert.ok(shot.atTick < shot.newestTick, `at_tick ${shot.atTick} is behind the newest tick ${shot.newestTick}`);
    assert.equal(shot.result!.tick, shot.atTick, "the daemon answered at that tick");
    assert.equal(shot.hitBodyId, bot.bodyId);
    assert.equal(st.score, 1);
    assert.equal(await browser.exec<string>(`return document.getElementById("score").textContent`), "score 1");
    assert.ok(flash.drawn?.flash, "the bot is drawn flashing");
    near(flash.rgb, WHITE, `the hit bot at (${flash.drawn?.sx}, ${flash.drawn?.sy})`);
    // The same ray asked again: at that tick it finds the bot; now (the bot has moved on) it
    // misses: what the player saw is what they hit.
    const again = await observer.rayCast(shot.origin, shot.translation, { atTick: shot.atTick, filter: { excludeIds: [me] } });
    assert.equal(again.hits[0]?.bodyId, bot.bodyId);
    const nowShot = await observer.rayCast(shot.origin, shot.translation, { filter: { excludeIds: [me] } });
    assert.equal(nowShot.hits.length, 0, `at the newest tick the ray misses: ${JSON.stringify(nowShot.hits)}`);
    // The screenshot, for a person: the player (green) at the centre, the bot flashing.
    const file = join(ROOT, "build", "play-screenshot.png");
    writeFileSync(file, png);
    console.log(`screenshot: ${file}`);
    const img = decodePng(png);
    // (right of the centre: the aim and the shot's lines leave it to the left)
    near(pixel(img, img.width / 2 + 4, img.height / 2 + 2), GREEN, "the player's body at the screen's centre");

    // A click on empty space (above the player) is a miss: no score.
    botClient.despawn(bot.bodyId);
    await waitFor(() => !observer.bodies.has(bot.bodyId), "the bot to go");
    await browser.exec<void>(`const c = document.getElementById("canvas"), r = c.getBoundingClientRect();
      c.dispatchEvent(new MouseEvent("mousedown", { clientX: r.left + c.width / 2, clientY: r.top + 60, button: 0, bubbles: true }));`);
    for (const deadline = Date.now() + 10000; !(st = await page()).shots[1]?.result; await sleep(10)) {
      if (Date.now() > deadline) throw new Error(`no answer to the second shot: ${JSON.stringify(st.shots)}`);
    }
    assert.equal(st.shots[1].result!.hits.length, 0, "nothing above the player");
    assert.equal(st.score, 1, "a miss does not score");

    // Keys: A held moves the body left (-x), by the daemon's state and on the screen.
    const settled = async (what: string): Promise<Point> => {
      await waitFor(() => { const b = observer.bodies.get(me); return !!b && b.velocity.x === 0 && b.velocity.y === 0; }, what);
      await sleep(300); // the last snapshots reconcile the page
      const server = observer.bodies.get(me)!.position;
      const drawn = (await page()).frame!.own;
      assert.ok(Math.hypot(drawn.x - server.x, drawn.y - server.y) < 0.01,
                `${what}: drawn at (${drawn.x}, ${drawn.y}), the daemon has (${server.x}, ${server.y})`);
      return server;
    };
    const pillarOnScreen = () => browser!.exec<{ camera: Point; w: number; h: number; at: number[]; was: number[] }>(`${PIXEL_JS}
      const f = window.collidePlay.frame, c = document.getElementById("canvas");
      const sx = (x) => c.width / 2 + (x - f.camera.x) * f.scale, sy = (y) => c.height / 2 - (y - f.camera.y) * f.scale;
      return { camera: f.camera, w: c.width, h: c.height, at: px(sx(arguments[0]), sy(arguments[1])),
               was: px(c.width / 2 + arguments[0] * f.scale, c.height / 2 - arguments[1] * f.scale) };`, PILLAR.x, PILLAR.y);
    const before = await pillarOnScreen();
    near(before.at, GREY, "the pillar before moving");
    near(before.was, GREY, "the pillar before moving (camera at the origin)");
    await browser.holdKey("a", 600);
    const left = await settled("after A");
    assert.ok(left.x < -4 && left.x > -40, `A moved the body left: x ${left.x}`);
    assert.ok(Math.abs(left.y) < 1e-3, `and not up or down: y ${left.y}`);
    const after = await pillarOnScreen();
    assert.ok(Math.abs(after.camera.x - left.x) < 0.01, "the camera follows the body");
    near(after.at, GREY, `the pillar ${(PILLAR.x - left.x) * SCALE} px right of the centre`);
    far(after.was, GREY, "where the pillar was drawn before the move");

    // The right arrow held well past the pillar (0.8 s more than the way to it takes): the body
    // stops at its face, and is never drawn inside it.
    const face = PILLAR.x - PILLAR.hx - RADIUS;
    const from = (await page()).trail.length;
    await browser.holdKey(KEYS.right, ((face - left.x) / SPEED + 0.8) * 1000);
    const stopped = await settled("after the right arrow");
    assert.ok(stopped.x <= face + 1e-3 && stopped.x > face - 0.05, `the daemon stopped the body at the pillar: x ${stopped.x}, face ${face}`);
    const trail = (await page()).trail.slice(from);
    assert.ok(trail.length > 60, `frames drawn while pushing: ${trail.length}`);
    assert.ok(trail.some((p) => p.x > face - 0.05), "the drawn body reached the pillar");
    const deepest = Math.max(...trail.map(intoPillar));
    assert.ok(deepest <= 1e-3, `the body was drawn ${deepest} units inside the pillar`);

    const errors = await browser.consoleErrors();
    assert.deepEqual(errors, [], "no console errors");
    assert.equal((await page()).error, "");
    await d.stopAndCheck();
  } finally {
    await browser?.close();
    for (const c of clients) c.close();
    await d.terminate();
  }
});

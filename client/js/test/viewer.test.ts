// The live viewer in headless Chromium against the real daemon: scripted movers (an SDK client
// over TCP) move about; the page, a spectator over WebSocket, must list every body where the
// server has it (DOM), draw each in its owner's colour at that place (screenshot), and show them
// moving. The page is the one collided itself serves on its WebSocket port (GET /, its bundle
// compiled in). The screenshot is kept in build/viewer-screenshot.png for a person to look at.
// Twice: with float snapshots, and with ?quantized=1&rate=15 (quantized, every 2nd tick) at a
// position quantum of 1/1024 unit, so that half a quantum stays inside the 1e-3 the places are
// held to.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { connect, type CollideClient } from "../src/node";
import { Browser, decodePng, hslToRgb, pixel } from "./browser";
import { Daemon, HAS_WS, sleep, waitFor } from "./daemon";

const ROOT = join(__dirname, "..", "..");
const SCALE = 2; // px per world unit: the viewer is opened at ?scale=2, camera at (0, 0)

interface Listed { id: number; owner: number; kind: number; x: number; y: number; angle: number; sx: number; sy: number }

for (const quantized of [false, true]) test(`the viewer${quantized ? " (quantized, 15 Hz)" : ""} draws the daemon's bodies where the server has them, and they move`, {
  skip: HAS_WS ? false : "collided has no --ws-port yet (branch i14-ws)", timeout: 120000,
}, async () => {
  const d = await Daemon.start({
    ws: true,
    // A token for players, and the viewer logs in with the admin token for the whole world.
    args: ["--tick-rate", "30", "--token", "play", "--admin-token", "watch", "--position-quantum", String(1 / 1024)],
    world: { bounds: [[-100, -100], [100, 100]], statics: [{ position: [0, -50], box: { half_extents: [40, 5] } }] },
  });
  // The daemon's own page: http on the WebSocket port (the page then opens ws://<same host>/v1).
  const site = { url: `http://127.0.0.1:${d.wsPort}` };
  const clients: CollideClient[] = [];
  let browser: Browser | null = null;
  try {
    const a = await connect(d.tcpUrl, { name: "mover-a", token: "play" });
    const b = await connect(d.tcpUrl, { name: "mover-b", token: "play" });
    clients.push(a, b);
    const circle = await a.spawn({ circle: { radius: 6 } }, { position: { x: -60, y: 30 } });
    const box = await a.spawn({ box: { halfExtents: { x: 6, y: 6 } } }, { position: { x: 0, y: 30 } });
    const tri = await b.spawn({ polygon: { vertices: [{ x: -8, y: -6 }, { x: 8, y: -6 }, { x: 0, y: 8 }] } },
                              { position: { x: 60, y: 30 } });
    // A long bar spawned near upright and turning: it must be drawn turned by the server's angle.
    const bar = await b.spawn({ box: { halfExtents: { x: 14, y: 1.5 } } },
                              { position: { x: -60, y: -75 }, angle: 1.3 });
    const movers = [{ c: a, id: circle.bodyId }, { c: a, id: box.bodyId }, { c: b, id: tri.bodyId }];
    b.move(bar.bodyId, { x: 0, y: 0 }, 1.0);
    await waitFor(() => (b.bodies.get(bar.bodyId)?.angle ?? 0) > 1.6, "the bar to turn past 1.6 rad");
    b.move(bar.bodyId, { x: 0, y: 0 }); // and stop it there, near upright
    movers.push({ c: b, id: bar.bodyId });

    browser = await Browser.start(800, 600);
    await browser.goto(`${site.url}/?ws=${encodeURIComponent(d.wsUrl)}&scale=${SCALE}&token=watch&whole=1${quantized ? "&quantized=1&rate=15" : ""}`);
    const list = () => browser!.exec<Listed[]>(`return [...document.querySelectorAll("#bodies li")].map(li => ({
        id: +li.dataset.id, owner: +li.dataset.owner, kind: +li.dataset.kind,
        x: +li.dataset.x, y: +li.dataset.y, angle: +li.dataset.angle, sx: +li.dataset.sx, sy: +li.dataset.sy }))`);
    let listed: Listed[] = [];
    const deadline = Date.now() + 20000;
    while ((listed = await list()).length < 5) {
      if (Date.now() > deadline) {
        const status = await browser.exec<string>(`return document.getElementById("status").textContent`);
        throw new Error(`the viewer lists ${listed.length} bodies, want 5 (status: ${status})`);
      }
      await sleep(100);
    }

    // They move: the same body lower down half a second later (12 units/s down). They start only
    // now that the page lists them, so that a slow start (a loaded machine) cannot let them land
    // on the floor before the first look; the time between the looks is measured, not assumed.
    for (const m of movers.slice(0, 3)) m.c.move(m.id, { x: 0, y: -12 });
    const circleY = async () => (await list()).find((l) => l.id === circle.bodyId)!.y;
    const startY = listed.find((l) => l.id === circle.bodyId)!.y;
    const moving = Date.now() + 10000;
    while ((await circleY()) > startY - 0.5) {
      if (Date.now() > moving) throw new Error("the circle never started moving in the viewer");
      await sleep(50);
    }
    const t0 = Date.now();
    const y0 = await circleY();
    await sleep(500);
    const y1 = await circleY();
    const dt = (Date.now() - t0) / 1000;
    assert.ok(y0 - y1 > 3 && y0 - y1 < 12 * dt + 2,
              `the circle moved down ${y0 - y1} units in ${dt} s at 12 units/s`);

    // Stop them; once the server has applied the stops and the viewer's interpolation delay has
    // passed, the page must show each body exactly where the server has it.
    const seqs = movers.map((m) => m.c.move(m.id, { x: 0, y: 0 }));
    await waitFor(() => movers.every((m, i) => (m.c.bodies.get(m.id)?.lastInputSeq ?? 0) >= seqs[i]), "the stops");
    await sleep(600);
    listed = await list();
    const canvas = await browser.exec<{ w: number; h: number }>(
      `const c = document.getElementById("canvas"); return { w: c.width, h: c.height }`);
    for (const m of movers) {
      const server = m.c.bodies.get(m.id)!;
      const l = listed.find((x) => x.id === m.id);
      assert.ok(l, `body ${m.id} listed`);
      assert.equal(l.owner, m.c.welcome.clientId);
      const posTol = quantized ? 1 / 512 + 1e-6 : 1e-3; // quantized: half a position quantum
      assert.ok(Math.abs(l.x - server.position.x) < posTol && Math.abs(l.y - server.position.y) < posTol,
                `body ${m.id} drawn at (${l.x}, ${l.y}), the server has (${server.position.x}, ${server.position.y})`);
      // quantized: within half an angle quantum (1/65536 turn)
      const angleTol = quantized ? Math.PI / 65536 : 1e-6;
      assert.ok(Math.abs(l.angle - server.angle) < angleTol, `body ${m.id} drawn at angle ${l.angle}, the server has ${server.angle}`);
      assert.ok(Math.abs(l.sx - (canvas.w / 2 + server.position.x * SCALE)) < 0.1 &&
                Math.abs(l.sy - (canvas.h / 2 - server.position.y * SCALE)) < 0.1, `body ${m.id} screen place`);
    }
    const wall = listed.find((l) => l.kind === 1);
    assert.ok(wall && wall.x === 0 && wall.y === -50, "the static wall is listed where the world file puts it");

    // The screenshot: each body's centre in its owner's colour, the wall grey, empty space dark.
    const png = await browser.screenshot();
    writeFileSync(join(ROOT, "build", `viewer-screenshot${quantized ? "-quantized" : ""}.png`), png);
    const img = decodePng(png);
    const near = (got: number[], want: number[], what: string) =>
      assert.ok(got.every((v, i) => Math.abs(v - want[i]) <= 3), `${what}: pixel ${got}, want ${want}`);
    for (const l of listed) {
      const want = l.kind === 1 ? [0x8a, 0x8a, 0x8a] : hslToRgb((l.owner * 137.508) % 360, 80, 60);
      near(pixel(img, l.sx, l.sy), want, `body ${l.id} (owner ${l.owner}) at (${l.sx}, ${l.sy})`);
    }
    // The bar, turned (stopped a little past 1.6 rad, near upright): 11 units out
    // along its turned axis is bar; 11 units out across it (its half width is 1.5) is space.
    const barL = listed.find((l) => l.id === bar.bodyId)!;
    assert.ok(Math.abs(Math.sin(barL.angle)) > 0.6, `the bar stopped at angle ${barL.angle}`);
    const along = [Math.cos(barL.angle), Math.sin(barL.angle)], across = [-along[1], along[0]];
    near(pixel(img, barL.sx + 11 * SCALE * along[0], barL.sy - 11 * SCALE * along[1]),
         hslToRgb((barL.owner * 137.508) % 360, 80, 60), `the bar 11 units along its axis (angle ${barL.angle})`);
    near(pixel(img, barL.sx + 11 * SCALE * across[0], barL.sy - 11 * SCALE * across[1]),
         [0x16, 0x16, 0x16], `11 units across the bar (angle ${barL.angle})`);
    assert.notDeepEqual(hslToRgb((a.welcome.clientId * 137.508) % 360, 80, 60),
                        hslToRgb((b.welcome.clientId * 137.508) % 360, 80, 60), "two owners, two colours");
    near(pixel(img, canvas.w / 2 - 30 * SCALE, canvas.h / 2), [0x16, 0x16, 0x16], "empty space");
    const status = await browser.exec<string>(`return document.getElementById("status").textContent`);
    assert.match(status, /^tick \d+ \| rtt [\d.]+ ms \| \d+ snapshots\/s \| 5 bodies in view \| room default \(admin\)/);
    if (quantized) assert.match(status, / \| quantized at 15 Hz$/);
    else assert.doesNotMatch(status, /quantized/);

    // Hover names the body; a click follows it (the camera centres on it); the wheel zooms about
    // the cursor; a drag pans and stops following.
    const tri0 = listed.find((l) => l.id === tri.bodyId)!;
    const mouse = (type: string, x: number, y: number, extra = "") => browser!.exec<void>(
      `const c = document.getElementById("canvas"), r = c.getBoundingClientRect();
       const init = { clientX: r.left + ${x}, clientY: r.top + ${y}, bubbles: true, cancelable: true ${extra} };
       c.dispatchEvent("${type}" === "wheel" ? new WheelEvent("wheel", init) : new MouseEvent("${type}", init));`);
    await mouse("mousemove", tri0.sx, tri0.sy);
    const hover = await browser.exec<string>(`return document.getElementById("hover").textContent`);
    assert.equal(hover, `#${tri.bodyId} owner ${b.welcome.clientId} v (0.0, 0.0)`);
    await mouse("mousedown", tri0.sx, tri0.sy);
    await mouse("mouseup", tri0.sx, tri0.sy);
    const cam = () => browser!.exec<{ x: number; y: number; scale: number }>(
      `const c = window.collideViewer.camera; return { x: c.x, y: c.y, scale: c.scale }`);
    await sleep(100);
    let cm = await cam();
    assert.ok(Math.abs(cm.x - tri0.x) < 1e-3 && Math.abs(cm.y - tri0.y) < 1e-3, `following: camera at (${cm.x}, ${cm.y})`);
    assert.match(await browser.exec<string>(`return document.getElementById("follow-label").textContent`),
                 new RegExp(`following #${tri.bodyId}`));
    await mouse("mousedown", 100, 300);
    await mouse("mousemove", 140, 300);
    await mouse("mouseup", 140, 300);
    cm = await cam();
    assert.ok(Math.abs(cm.x - (tri0.x - 40 / SCALE)) < 1e-3, `a 40 px drag right moves the camera 20 units left: ${cm.x}`);
    await mouse("wheel", canvas.w / 2, canvas.h / 2, ", deltaY: -200");
    cm = await cam();
    assert.ok(cm.scale > SCALE * 1.2, `the wheel zoomed in: ${cm.scale} px/unit`);
    await d.stopAndCheck();
  } finally {
    await browser?.close();
    for (const c of clients) c.close();
    await d.terminate();
  }
});

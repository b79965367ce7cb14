// The live viewer: a spectator session over WebSocket (the SDK's browser entry) drawing the world
// on a canvas. World y points up; drag pans, the wheel zooms, a click follows a body (Esc stops),
// hovering shows a body's id, owner, velocity and turning speed. Each body is its body-local shape
// turned by its angle. Remote movers are drawn through the SDK's interpolation buffer, a little in
// the past; statics as they are. Journal mode (journal.ts: "Open recording…", or ?journal=URL)
// draws a recording replayed in the page instead, with the same drawing code.
import { connect, errorCodeName, InterpolationBuffer, type Body, type CollideClient, type CollideError, type JournalInfo, type Shape } from "../../src/index";
import { JournalView } from "./journal";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const canvas = $<HTMLCanvasElement>("canvas");
const ctx = canvas.getContext("2d")!;
const statusEl = $("status");
const hoverEl = $("hover");
const listEl = $("bodies");
const params = new URLSearchParams(location.search);
const defaultUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host || "127.0.0.1:7778"}/v1`;
$<HTMLInputElement>("url").value = params.get("ws") ?? defaultUrl;
$<HTMLInputElement>("room").value = params.get("room") ?? "";
$<HTMLInputElement>("token").value = params.get("token") ?? "";
$<HTMLInputElement>("whole").checked = params.get("whole") === "1";

// Camera: world point at the canvas centre, pixels per world unit.
const cam = { x: 0, y: 0, scale: Number(params.get("scale") ?? 0) || 1 };
let client: CollideClient | null = null;
let interp: InterpolationBuffer | null = null;
let follow = 0;
let rttMs = NaN;
let snapTimes: number[] = [];
let lastError = "";
let viewKey = "";
let viewCap = 1000; // a non-admin's view is capped (--max-view-extent); halved on LIMIT_EXCEEDED
// ?wasm=URL: the world's module elsewhere (the daemon serves it beside the page).
const journal = new JournalView(params.get("wasm") ?? "dist/collide_world.wasm", (info) => {
  client?.close();
  client = null;
  if (!params.get("scale")) fitCamera(info.bounds.min, info.bounds.max);
});

function fitCamera(min: { x: number; y: number }, max: { x: number; y: number }): void {
  cam.x = (min.x + max.x) / 2; cam.y = (min.y + max.y) / 2;
  cam.scale = Math.min(canvas.clientWidth / (max.x - min.x), canvas.clientHeight / (max.y - min.y)) * 0.95;
}

function colourOf(b: Body): string {
  if (b.kind === 1) return "#8a8a8a"; // statics
  const hue = (b.owner * 137.508) % 360; // golden angle: neighbouring owners far apart
  return `hsl(${hue.toFixed(1)}, 80%, 60%)`;
}

function toScreen(x: number, y: number): [number, number] {
  return [canvas.width / 2 + (x - cam.x) * cam.scale, canvas.height / 2 - (y - cam.y) * cam.scale];
}
function toWorld(sx: number, sy: number): [number, number] {
  return [cam.x + (sx - canvas.width / 2) / cam.scale, cam.y - (sy - canvas.height / 2) / cam.scale];
}

function tracePath(shape: Shape | null, x: number, y: number, angle: number): void {
  ctx.beginPath();
  const [sx, sy] = toScreen(x, y);
  if (shape?.circle) {
    ctx.arc(sx, sy, Math.max(1, (shape.circle.radius ?? 0) * cam.scale), 0, 2 * Math.PI);
    return;
  }
  let pts: { x: number; y: number }[];
  if (shape?.box) {
    const hx = shape.box.halfExtents?.x ?? 0, hy = shape.box.halfExtents?.y ?? 0;
    pts = [{ x: -hx, y: -hy }, { x: hx, y: -hy }, { x: hx, y: hy }, { x: -hx, y: hy }];
  } else if (shape?.polygon) {
    pts = (shape.polygon.vertices ?? []).map((v) => ({ x: v.x ?? 0, y: v.y ?? 0 }));
  } else {
    pts = [{ x: -0.5, y: -0.5 }, { x: 0.5, y: -0.5 }, { x: 0.5, y: 0.5 }, { x: -0.5, y: 0.5 }];
  }
  const c = Math.cos(angle), s = Math.sin(angle);
  pts.forEach((p, i) => {
    const [px, py] = toScreen(x + c * p.x - s * p.y, y + s * p.x + c * p.y);
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  });
  ctx.closePath();
}

interface Drawn { body: Body; x: number; y: number; angle: number }

function visibleBodies(): Drawn[] {
  if (journal.active) return journal.bodies().map((b) => ({ body: b, x: b.position.x, y: b.position.y, angle: b.angle }));
  if (!client) return [];
  const out: Drawn[] = [];
  const sampled = interp?.sample();
  for (const b of client.bodies.values()) {
    const s = b.kind === 1 ? undefined : sampled?.get(b.id);
    // A body not yet in the buffer's past (just arrived) is drawn where it is.
    out.push({ body: b, x: s?.position.x ?? b.position.x, y: s?.position.y ?? b.position.y, angle: s?.angle ?? b.angle });
  }
  return out;
}

function updateView(): void {
  if (!client || client.closed) return;
  const w = client.welcome;
  let cx: number, cy: number, hx: number, hy: number;
  if ($<HTMLInputElement>("whole").checked) {
    cx = (w.worldMin.x + w.worldMax.x) / 2; cy = (w.worldMin.y + w.worldMax.y) / 2;
    hx = (w.worldMax.x - w.worldMin.x) / 2; hy = (w.worldMax.y - w.worldMin.y) / 2;
    if (!w.admin) { hx = Math.min(hx, viewCap / 2); hy = Math.min(hy, viewCap / 2); }
  } else {
    // The visible rectangle plus a margin, rounded so small pans do not resend it.
    const q = 16 / cam.scale;
    cx = Math.round(cam.x / q) * q; cy = Math.round(cam.y / q) * q;
    hx = (canvas.width / 2 / cam.scale) * 1.25; hy = (canvas.height / 2 / cam.scale) * 1.25;
    if (!w.admin) { hx = Math.min(hx, viewCap / 2); hy = Math.min(hy, viewCap / 2); }
  }
  const key = [cx, cy, hx, hy].map((v) => v.toFixed(2)).join(",");
  if (key === viewKey) return;
  viewKey = key;
  client.setView({ x: cx, y: cy }, { x: hx, y: hy }).catch((e: CollideError) => {
    if (e.codeName === "LIMIT_EXCEEDED" && viewCap > 50) { viewCap /= 2; viewKey = ""; }
  });
}

function draw(frameTime: number): void {
  journal.frame(frameTime);
  const dpr = 1;
  if (canvas.width !== canvas.clientWidth * dpr || canvas.height !== canvas.clientHeight * dpr) {
    canvas.width = canvas.clientWidth * dpr; canvas.height = canvas.clientHeight * dpr; viewKey = "";
  }
  const drawn = visibleBodies();
  const followed = drawn.find((d) => d.body.id === follow);
  if (followed) { cam.x = followed.x; cam.y = followed.y; }
  ctx.fillStyle = "#161616";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const info: JournalInfo | null = journal.info;
  const bounds = info ? info.bounds : client ? { min: client.welcome.worldMin, max: client.welcome.worldMax } : null;
  if (bounds) {
    const [x0, y0] = toScreen(bounds.min.x, bounds.max.y), [x1, y1] = toScreen(bounds.max.x, bounds.min.y);
    ctx.strokeStyle = "#444"; ctx.lineWidth = 1; ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
  }
  const items: string[] = [];
  for (const d of drawn) {
    tracePath(d.body.shape, d.x, d.y, d.angle);
    ctx.fillStyle = colourOf(d.body);
    ctx.fill();
    if (d.body.id === follow) { ctx.strokeStyle = "#fff"; ctx.lineWidth = 2; ctx.stroke(); }
    const [sx, sy] = toScreen(d.x, d.y);
    items.push(`<li data-id="${d.body.id}" data-owner="${d.body.owner}" data-kind="${d.body.kind}" data-x="${d.x}" data-y="${d.y}" data-angle="${d.angle}" data-sx="${sx.toFixed(1)}" data-sy="${sy.toFixed(1)}" data-colour="${colourOf(d.body)}"></li>`);
  }
  listEl.innerHTML = items.join("");
  const now = performance.now();
  snapTimes = snapTimes.filter((t) => now - t < 1000);
  const js = journal.state;
  const st = info
    ? `journal ${js.name} | tick ${js.tick} of ${js.startTick}-${js.lastTick}${js.playing ? ` | playing ${js.speed}x` : ""} | ${drawn.length} bodies | room ${info.room || "-"} | ${info.tickRateHz} Hz | zoom ${cam.scale.toFixed(2)} px/unit`
    : client && !client.closed
    ? `tick ${client.tick} | rtt ${isNaN(rttMs) ? "-" : rttMs.toFixed(1) + " ms"} | ${snapTimes.length} snapshots/s | ${drawn.length} bodies in view | room ${client.welcome.room}${client.welcome.admin ? " (admin)" : ""} | zoom ${cam.scale.toFixed(2)} px/unit${client.quantized ? ` | quantized at ${client.welcome.snapshotRateHz} Hz` : ""}`
    : `not connected${lastError ? ": " + lastError : ""}`;
  if (statusEl.textContent !== st) statusEl.textContent = st;
  statusEl.dataset.tick = String(info ? js.tick : client?.tick ?? 0);
  statusEl.dataset.bodies = String(drawn.length);
  statusEl.dataset.connected = String(!!client && !client.closed);
  $("follow-label").textContent = follow ? `following #${follow} (Esc to stop)` : "";
  updateView();
  requestAnimationFrame(draw);
}

async function start(): Promise<void> {
  journal.close();
  client?.close();
  client = null;
  lastError = "";
  viewKey = "";
  try {
    const c = await connect($<HTMLInputElement>("url").value, {
      name: "viewer", room: $<HTMLInputElement>("room").value, token: $<HTMLInputElement>("token").value,
      // Fewer, smaller snapshots for slow links (protocol 1.1): ?quantized=1, ?rate=HZ.
      quantized: params.get("quantized") === "1", snapshotRateHz: Number(params.get("rate") ?? 0) || 0,
    });
    client = c;
    interp = new InterpolationBuffer({ tickRateHz: c.welcome.tickRateHz, delayMs: Number(params.get("delay") ?? 100) });
    interp.attach(c);
    c.on("snapshot", () => snapTimes.push(performance.now()));
    c.on("goodbye", (r) => (lastError = `goodbye: ${r}`));
    c.on("close", (r) => { if (!lastError) lastError = r || "closed"; });
    c.on("error", (e) => { if (e.fatal) lastError = `${errorCodeName(e.code)}: ${e.message}`; });
    if (!params.get("scale")) fitCamera(c.welcome.worldMin, c.welcome.worldMax);
    const pinger = setInterval(() => {
      if (c.closed) return clearInterval(pinger);
      c.ping().then((p) => (rttMs = p.rttMs), () => {});
    }, 1000);
  } catch (e) {
    lastError = String((e as Error).message ?? e);
  }
}

/** The body under a canvas point, a mover before a static (the canvas' own hit test). */
function bodyAt(sx: number, sy: number): Drawn | undefined {
  let best: Drawn | undefined;
  for (const d of visibleBodies()) {
    tracePath(d.body.shape, d.x, d.y, d.angle);
    if (ctx.isPointInPath(sx, sy) && (!best || best.body.kind === 1)) best = d;
  }
  return best;
}

let drag: { x: number; y: number; moved: boolean } | null = null;
canvas.addEventListener("mousedown", (e) => (drag = { x: e.offsetX, y: e.offsetY, moved: false }));
window.addEventListener("mouseup", (e) => {
  if (drag && !drag.moved && e.target === canvas) follow = bodyAt(e.offsetX, e.offsetY)?.body.id ?? 0;
  drag = null;
});
canvas.addEventListener("mousemove", (e) => {
  if (drag) {
    const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
    if (drag.moved) { follow = 0; cam.x -= dx / cam.scale; cam.y += dy / cam.scale; drag.x = e.offsetX; drag.y = e.offsetY; }
  }
  const d = bodyAt(e.offsetX, e.offsetY);
  if (!d) { hoverEl.style.display = "none"; return; }
  const v = d.body.velocity;
  const w = d.body.angularVelocity;
  hoverEl.textContent = `#${d.body.id} ${d.body.kind === 1 ? "static" : "owner " + d.body.owner} v (${v.x.toFixed(1)}, ${v.y.toFixed(1)})` +
    (w ? ` w ${w.toFixed(2)} rad/s` : "");
  hoverEl.style.left = `${e.clientX + 12}px`; hoverEl.style.top = `${e.clientY + 12}px`; hoverEl.style.display = "block";
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  const [wx, wy] = toWorld(e.offsetX, e.offsetY);
  cam.scale = Math.min(200, Math.max(0.02, cam.scale * Math.exp(-e.deltaY * 0.0015)));
  const [nx, ny] = toWorld(e.offsetX, e.offsetY); // keep the point under the cursor in place
  cam.x += wx - nx; cam.y += wy - ny;
}, { passive: false });
window.addEventListener("keydown", (e) => { if (e.key === "Escape") follow = 0; });
$("connect").addEventListener("click", () => void start());
$("whole").addEventListener("change", () => (viewKey = ""));

(window as unknown as { collideViewer: unknown }).collideViewer = { camera: cam, follow: (id: number) => (follow = id), journal: journal.state };
requestAnimationFrame(draw);
const journalUrl = params.get("journal");
if (journalUrl) void journal.openUrl(journalUrl);
else void start();

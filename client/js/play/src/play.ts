// A small game on the SDK, served by collided at GET /play on its WebSocket port. The player's
// body is a circle: WASD or the arrow keys set its velocity (MoveIntent, one a frame while it
// changes or moves), predicted at once (prediction.ts) and reconciled by the snapshots. The camera
// follows it. Other movers are drawn through the SDK's interpolation buffer, delayMs in the past;
// a click fires a RayCast from the body towards the mouse with at_tick = the tick the screen shows
// for them (lag compensation: what you saw is what you hit). A mover hit flashes and scores.
import {
  BodyKind, connect, errorCodeName, InterpolationBuffer,
  type Body, type CollideClient, type CollideError, type Point, type QueryResult, type Shape,
} from "../../src/index";
import { createPrediction, loadWorldModule, outline, type Prediction } from "./prediction";

const RADIUS = 1; // the player's body
const RANGE = 60; // a shot's reach (units), inside the default view (80) so what it hits is known
const FLASH_MS = 500;
const SHOT_MS = 250;
const STEP_MIN_S = 1 / 90; // at most 90 intents a second, whatever the display's refresh rate

const params = new URLSearchParams(location.search);
const num = (name: string, dflt: number): number => {
  const v = Number(params.get(name));
  return params.has(name) && Number.isFinite(v) && v > 0 ? v : dflt;
};
const SPEED = num("speed", 12); // units/s
const SCALE = num("scale", 10); // px per unit
const DELAY_MS = num("delay", 100); // the interpolation delay for other bodies

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const canvas = $<HTMLCanvasElement>("canvas");
const ctx = canvas.getContext("2d")!;

interface Shot {
  origin: Point;
  translation: Point;
  /** The tick the screen showed for other bodies when it was fired (0: none yet, "now"), and the
   * newest tick the client had then: atTick is behind it by the interpolation delay. */
  atTick: number;
  newestTick: number;
  firedMs: number;
  result: QueryResult | null;
  hitBodyId: number; // a mover hit (0: none, a static or a miss)
  error: string;
}

interface Drawn { id: number; kind: BodyKind; x: number; y: number; sx: number; sy: number; flash: boolean }

/** What the page shows, for tests and curious players (window.collidePlay). */
interface PlayState {
  connected: boolean;
  bodyId: number;
  score: number;
  /** The last frame drawn: its render tick for other bodies, camera, own body, everything drawn. */
  frame: { tick: number; camera: Point; scale: number; own: Point; drawn: Drawn[] } | null;
  shots: Shot[];
  /** The own body's drawn positions, one a frame, newest last (bounded). */
  trail: Point[];
  error: string;
  /** Which prediction runs: "world" (the server's code, the module loaded) or "sdk". */
  prediction: "" | "world" | "sdk";
}
const state: PlayState = {
  connected: false, bodyId: 0, score: 0, frame: null, shots: [], trail: [], error: "", prediction: "",
};
// fetched while the page connects: the WorldPredictor's world (null: the SDK's Predictor)
const worldModule = loadWorldModule();
(window as unknown as { collidePlay: PlayState }).collidePlay = state;

let client: CollideClient | null = null;
let interp: InterpolationBuffer | null = null;
let prediction: Prediction | null = null;
const keys = new Set<string>();
const flashUntil = new Map<number, number>();
let mouse: Point | null = null; // screen
let lastStepMs = 0;
let lastSent: Point = { x: 0, y: 0 };
let rttMs = NaN;

function toScreen(p: Point, cam: Point): [number, number] {
  return [canvas.width / 2 + (p.x - cam.x) * SCALE, canvas.height / 2 - (p.y - cam.y) * SCALE];
}
function toWorld(sx: number, sy: number, cam: Point): Point {
  return { x: cam.x + (sx - canvas.width / 2) / SCALE, y: cam.y - (sy - canvas.height / 2) / SCALE };
}

function trace(shape: Shape | null, at: Point, angle: number, cam: Point): void {
  ctx.beginPath();
  const [sx, sy] = toScreen(at, cam);
  const pts = outline(shape);
  if (!pts) {
    ctx.arc(sx, sy, Math.max(1, (shape?.circle?.radius ?? 0.5) * SCALE), 0, 2 * Math.PI);
    return;
  }
  const c = Math.cos(angle), s = Math.sin(angle);
  pts.forEach((p, i) => {
    const [px, py] = toScreen({ x: at.x + c * p.x - s * p.y, y: at.y + s * p.x + c * p.y }, cam);
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  });
  ctx.closePath();
}

/** Another player's colour: by owner, neighbouring owners far apart (golden-ratio steps), from
 * cyan round through blue, red and orange to yellow: never the green of the player's own body. */
function colourOf(b: Body): string {
  const hue = (170 + ((b.owner * 0.618034) % 1) * 250) % 360;
  return `hsl(${hue.toFixed(1)}, 70%, 55%)`;
}

/** The velocity the keys ask for: up is +y (the world's y points up on screen). */
function keyVelocity(): Point {
  const on = (...codes: string[]) => codes.some((c) => keys.has(c));
  const x = (on("KeyD", "ArrowRight") ? 1 : 0) - (on("KeyA", "ArrowLeft") ? 1 : 0);
  const y = (on("KeyW", "ArrowUp") ? 1 : 0) - (on("KeyS", "ArrowDown") ? 1 : 0);
  const len = Math.hypot(x, y) || 1;
  return { x: (x / len) * SPEED, y: (y / len) * SPEED };
}

/** One input step: the keys' velocity sent and predicted, while it moves or has just changed. */
function step(nowMs: number): void {
  if (!client || client.closed || !prediction || !state.bodyId) return;
  const dt = Math.min(0.1, (nowMs - lastStepMs) / 1000);
  if (lastStepMs && dt < STEP_MIN_S) return;
  lastStepMs = nowMs;
  const v = keyVelocity();
  if (v.x === 0 && v.y === 0 && lastSent.x === 0 && lastSent.y === 0) return;
  const seq = client.move(state.bodyId, v);
  prediction.applyIntent(seq, v, dt);
  lastSent = v;
}

/** Dots every 10 units: something to see the body move against in open space. */
function drawGrid(cam: Point): void {
  const step = 10, w0 = toWorld(0, canvas.height, cam), w1 = toWorld(canvas.width, 0, cam);
  ctx.fillStyle = "#3a3a3a";
  for (let x = Math.ceil(w0.x / step) * step; x <= w1.x; x += step) {
    for (let y = Math.ceil(w0.y / step) * step; y <= w1.y; y += step) {
      const [sx, sy] = toScreen({ x, y }, cam);
      ctx.fillRect(sx - 1, sy - 1, 2, 2);
    }
  }
}

function drawShots(nowMs: number, cam: Point): void {
  for (const s of state.shots.slice(-8)) {
    const age = nowMs - s.firedMs;
    if (age > SHOT_MS) continue;
    const f = s.result?.hits[0]?.fraction ?? 1;
    const [x0, y0] = toScreen(s.origin, cam);
    const [x1, y1] = toScreen({ x: s.origin.x + s.translation.x * f, y: s.origin.y + s.translation.y * f }, cam);
    ctx.strokeStyle = `rgba(255, 220, 80, ${1 - age / SHOT_MS})`;
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    if (s.hitBodyId) { ctx.beginPath(); ctx.arc(x1, y1, 4, 0, 2 * Math.PI); ctx.stroke(); }
  }
}

function draw(nowMs: number): void {
  requestAnimationFrame(draw); // first: a frame that throws must not end the game
  if (canvas.width !== canvas.clientWidth || canvas.height !== canvas.clientHeight) {
    canvas.width = canvas.clientWidth; canvas.height = canvas.clientHeight;
  }
  step(nowMs);
  ctx.fillStyle = "#161616";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const c = client;
  if (c && interp && prediction && state.bodyId) {
    const own = { ...prediction.predictedPosition() };
    state.prediction = prediction.kind; // "sdk" should the world's ever have failed
    const cam = own;
    const tick = interp.renderTick(nowMs); // the moment the screen shows the other bodies at
    const sampled = interp.sampleAt(tick);
    const w = c.welcome;
    drawGrid(cam);
    const [bx0, by0] = toScreen({ x: w.worldMin.x, y: w.worldMax.y }, cam), [bx1, by1] = toScreen({ x: w.worldMax.x, y: w.worldMin.y }, cam);
    ctx.strokeStyle = "#555"; ctx.lineWidth = 2; ctx.strokeRect(bx0, by0, bx1 - bx0, by1 - by0);
    const drawn: Drawn[] = [];
    for (const b of c.bodies.values()) {
      if (b.id === state.bodyId) continue;
      const s = b.kind === BodyKind.BODY_KIND_STATIC ? undefined : sampled.get(b.id);
      if (b.kind !== BodyKind.BODY_KIND_STATIC && !s) continue; // not yet (or no longer) at that tick
      const at = s ? s.position : b.position, angle = s ? s.angle : b.angle;
      const flash = (flashUntil.get(b.id) ?? 0) > nowMs;
      trace(b.shape, at, angle, cam);
      ctx.fillStyle = flash ? "#ffffff" : b.kind === BodyKind.BODY_KIND_STATIC ? "#8a8a8a" : colourOf(b);
      ctx.fill();
      const [sx, sy] = toScreen(at, cam);
      drawn.push({ id: b.id, kind: b.kind, x: at.x, y: at.y, sx, sy, flash });
    }
    trace({ circle: { radius: RADIUS } }, own, 0, cam);
    ctx.fillStyle = "#44cc44"; ctx.fill();
    ctx.strokeStyle = "#eeffee"; ctx.lineWidth = 2; ctx.stroke();
    if (mouse) {
      const [ox, oy] = toScreen(own, cam);
      ctx.strokeStyle = "rgba(255, 255, 255, 0.15)"; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(ox, oy); ctx.lineTo(mouse.x, mouse.y); ctx.stroke();
    }
    drawShots(nowMs, cam);
    state.frame = { tick, camera: cam, scale: SCALE, own, drawn };
    state.trail.push(own);
    if (state.trail.length > 4000) state.trail.splice(0, state.trail.length - 4000);
  }
  status();
}

function status(): void {
  const c = client;
  const text = c && !c.closed && state.bodyId
    ? `tick ${c.tick} | rtt ${Number.isNaN(rttMs) ? "-" : rttMs.toFixed(1) + " ms"} | ${c.bodies.size} bodies in view | room ${c.welcome.room} | body #${state.bodyId}`
    : state.error ? `${state.error} (reload the page to play again)` : "connecting";
  const el = $("status");
  if (el.textContent !== text) el.textContent = text;
  const score = `score ${state.score}`;
  if ($("score").textContent !== score) $("score").textContent = score;
}

/** The tick a shot asks about: the one the screen shows for other bodies, to the nearest whole
 * tick, no later than the newest snapshot (0 = "now" before any snapshot came). */
function shotTick(rendered: number): number {
  if (!client || !Number.isFinite(rendered) || client.tick <= 0) return 0;
  return Math.min(client.tick, Math.max(1, Math.round(rendered)));
}

async function fire(sx: number, sy: number): Promise<void> {
  const c = client, f = state.frame;
  if (!c || c.closed || !f) return;
  const target = toWorld(sx, sy, f.camera);
  const dx = target.x - f.own.x, dy = target.y - f.own.y, len = Math.hypot(dx, dy);
  if (len === 0) return;
  const shot: Shot = {
    origin: f.own, translation: { x: (dx / len) * RANGE, y: (dy / len) * RANGE },
    atTick: shotTick(f.tick), newestTick: c.tick, firedMs: performance.now(), result: null, hitBodyId: 0, error: "",
  };
  state.shots.push(shot);
  if (state.shots.length > 100) state.shots.shift();
  try {
    shot.result = await c.rayCast(shot.origin, shot.translation, { atTick: shot.atTick, filter: { excludeIds: [state.bodyId] } });
    const hit = shot.result.hits[0];
    if (hit && c.bodies.get(hit.bodyId)?.kind === BodyKind.BODY_KIND_MOVING) {
      shot.hitBodyId = hit.bodyId;
      state.score++;
      flashUntil.set(hit.bodyId, performance.now() + FLASH_MS);
    }
    $("shot").textContent = shot.hitBodyId ? `hit #${shot.hitBodyId} at tick ${shot.result.tick}` : `miss (tick ${shot.result.tick})`;
  } catch (e) {
    shot.error = (e as CollideError).codeName ?? String(e);
    $("shot").textContent = `shot refused: ${shot.error}`;
  }
}

async function start(): Promise<void> {
  const url = params.get("ws") ?? `${location.protocol === "https:" ? "wss" : "ws"}://${location.host || "127.0.0.1:7778"}/v1`;
  try {
    const c = await connect(url, { name: params.get("name") ?? "player", room: params.get("room") ?? "", token: params.get("token") ?? "" });
    client = c;
    c.on("goodbye", (r) => (state.error = `goodbye: ${r}`));
    c.on("error", (e) => { if (e.fatal) state.error = `${errorCodeName(e.code)}: ${e.message}`; });
    c.on("close", (r) => { state.connected = false; if (!state.error) state.error = `disconnected${r ? ": " + r : ""}`; });
    const w = c.welcome;
    // ?spawn=x,y, else near the world's centre (a little apart from other players).
    const at = (params.get("spawn") ?? "").split(",").map(Number);
    const position = at.length === 2 && at.every(Number.isFinite) ? { x: at[0], y: at[1] }
      : { x: (w.worldMin.x + w.worldMax.x) / 2 + (Math.random() - 0.5) * 8, y: (w.worldMin.y + w.worldMax.y) / 2 + (Math.random() - 0.5) * 8 };
    const spawned = await c.spawn({ circle: { radius: RADIUS } }, { position });
    interp = new InterpolationBuffer({ tickRateHz: w.tickRateHz, delayMs: DELAY_MS });
    interp.attach(c);
    prediction = createPrediction(c, { bodyId: spawned.bodyId, start: spawned.position, radius: RADIUS },
                                  await worldModule);
    state.prediction = prediction.kind;
    const p = prediction;
    c.on("snapshot", (s) => p.onSnapshot(s));
    state.bodyId = spawned.bodyId;
    state.connected = true;
    const pinger = setInterval(() => {
      if (c.closed) return clearInterval(pinger);
      c.ping().then((r) => (rttMs = r.rttMs), () => {});
    }, 2000);
  } catch (e) {
    const err = e as CollideError;
    state.error = String(err.message ?? e);
    if (err.codeName === "UNAUTHENTICATED" && !params.get("token")) state.error += " (the daemon wants a token: add ?token=SECRET to the address)";
  }
}

const GAME_KEYS = new Set(["KeyW", "KeyA", "KeyS", "KeyD", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"]);
window.addEventListener("keydown", (e) => {
  if (!GAME_KEYS.has(e.code)) return;
  keys.add(e.code);
  e.preventDefault(); // no scrolling with the arrows
});
window.addEventListener("keyup", (e) => keys.delete(e.code));
window.addEventListener("blur", () => keys.clear()); // a key released elsewhere must not stick
const canvasPoint = (e: MouseEvent): Point => {
  const r = canvas.getBoundingClientRect();
  return { x: e.clientX - r.left, y: e.clientY - r.top };
};
canvas.addEventListener("mousemove", (e) => (mouse = canvasPoint(e)));
canvas.addEventListener("mouseleave", () => (mouse = null));
canvas.addEventListener("mousedown", (e) => {
  if (e.button !== 0) return;
  mouse = canvasPoint(e);
  void fire(mouse.x, mouse.y);
});

requestAnimationFrame(draw);
void start();

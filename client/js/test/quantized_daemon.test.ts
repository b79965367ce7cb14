// Quantized snapshots through the SDK against the real collided: a quantized watcher and a float
// watcher of the same area agree within half a quantum at the same ticks (positions, velocities,
// input seqs, shapes, kinds and owners), at the full rate and at snapshotRateHz 20; the Welcome
// says the rate and the quanta granted. The 20 Hz watcher speaks WebSocket where collided has it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, type Body, type CollideClient, type Shape } from "../src/node";
import { Daemon, HAS_WS, waitFor } from "./daemon";

const TICKS = 120; // ticks watched (2 s at 60 Hz)
const PQ = 0.01; // --position-quantum
const VQ = 0.125; // --velocity-quantum

interface Seen {
  x: number;
  y: number;
  vx: number;
  vy: number;
  seq: number;
  shape: string;
  kind: number;
  owner: number;
}

/** A watcher of the whole world; keeps what `bodies` held after each snapshot, by tick. */
class Watcher {
  readonly states = new Map<number, Map<number, Seen>>();
  snapshots = 0;
  /** Snapshots that carried packed records, and BodyStates received. */
  packed = 0;
  bodyStates = 0;
  private constructor(readonly c: CollideClient) {
    c.on("snapshot", (s) => {
      this.snapshots++;
      if (s.raw.packed.length) this.packed++;
      this.bodyStates += s.raw.bodies.length;
      const view = new Map<number, Seen>();
      for (const b of c.bodies.values()) view.set(b.id, seen(b));
      this.states.set(s.tick, view);
    });
  }

  static async open(url: string, opts: { quantized?: boolean; snapshotRateHz?: number }): Promise<Watcher> {
    const c = await connect(url, { name: "watch", ...opts });
    const w = new Watcher(c);
    await c.setView({ x: 0, y: 0 }, c.welcome.worldMax);
    return w;
  }

  get lastTick(): number {
    return Math.max(0, ...this.states.keys());
  }
}

const seen = (b: Body): Seen => ({
  x: b.position.x,
  y: b.position.y,
  vx: b.velocity.x,
  vy: b.velocity.y,
  seq: b.lastInputSeq,
  shape: JSON.stringify(b.shape),
  kind: b.kind,
  owner: b.owner,
});

/** Every tick both watchers have: the same bodies, within half a quantum (plus float32 rounding).
 * Returns the ticks compared. */
function compare(float: Watcher, quant: Watcher, what: string): number {
  const common = [...quant.states.keys()].filter((t) => float.states.has(t)).sort((a, b) => a - b);
  assert.ok(common.length >= 10, `${what}: ${common.length} common ticks`);
  let moving = 0;
  for (const t of common) {
    const f = float.states.get(t)!;
    const q = quant.states.get(t)!;
    assert.deepEqual([...q.keys()].sort(), [...f.keys()].sort(), `${what}, tick ${t}: the same bodies`);
    for (const [id, fb] of f) {
      const qb = q.get(id)!;
      const ptol = PQ / 2 + 1e-6 * Math.max(1, Math.abs(fb.x), Math.abs(fb.y));
      const vtol = VQ / 2 + 1e-6 * Math.max(1, Math.abs(fb.vx), Math.abs(fb.vy));
      const at = `${what}, tick ${t}, body ${id}`;
      assert.ok(Math.abs(fb.x - qb.x) <= ptol && Math.abs(fb.y - qb.y) <= ptol, `${at}: position (${fb.x}, ${fb.y}) vs (${qb.x}, ${qb.y})`);
      assert.ok(Math.abs(fb.vx - qb.vx) <= vtol && Math.abs(fb.vy - qb.vy) <= vtol, `${at}: velocity (${fb.vx}, ${fb.vy}) vs (${qb.vx}, ${qb.vy})`);
      assert.equal(qb.seq, fb.seq, `${at}: last_input_seq`);
      assert.deepEqual([qb.shape, qb.kind, qb.owner], [fb.shape, fb.kind, fb.owner], `${at}: shape, kind, owner`);
      if (fb.vx !== 0 || fb.vy !== 0) moving++;
    }
  }
  assert.ok(moving > common.length, `${what}: bodies were moving (${moving})`);
  return common.length;
}

test("quantized and float SDK watchers agree within half a quantum, at 60 Hz and at 20 Hz", { timeout: 120000 }, async () => {
  const d = await Daemon.start({
    args: ["--position-quantum", String(PQ), "--velocity-quantum", String(VQ)],
    world: { bounds: [[-200, -200], [200, 200]] },
    ws: HAS_WS,
  });
  const clients: CollideClient[] = [];
  let driver: ReturnType<typeof setInterval> | undefined;
  try {
    // A player with 8 bodies of every shape, moved by new intents every 50 ms.
    const p = await connect(d.tcpUrl, { name: "mover" });
    clients.push(p);
    const shapes: Shape[] = [
      { box: { halfExtents: { x: 1, y: 0.5 } } },
      { circle: { radius: 0.8 } },
      { polygon: { vertices: [{ x: -1, y: -0.8 }, { x: 1, y: -0.8 }, { x: 0.2, y: 1.1 }] } },
    ];
    const ids: number[] = [];
    for (let i = 0; i < 8; i++) ids.push((await p.spawn(shapes[i % 3], { position: { x: -60 + 15 * i, y: 10 * (i % 3) } })).bodyId);
    let k = 0;
    driver = setInterval(() => {
      ids.forEach((id, j) => p.move(id, { x: 7.3 * (((k + j) % 5) - 2) + 0.1 * (0.37 * k + j), y: 5.1 * (((k * 3 + j) % 7) - 3) }));
      k++;
    }, 50);

    const fw = await Watcher.open(d.tcpUrl, {});
    const qw = await Watcher.open(d.tcpUrl, { quantized: true });
    const q20 = await Watcher.open(HAS_WS ? d.wsUrl : d.tcpUrl, { quantized: true, snapshotRateHz: 20 });
    clients.push(fw.c, qw.c, q20.c);

    // The Welcome: rate and quanta granted; a float client has no decoder and no quanta.
    assert.equal(fw.c.welcome.snapshotRateHz, 60);
    assert.equal(qw.c.welcome.snapshotRateHz, 60);
    assert.equal(q20.c.welcome.snapshotRateHz, 20);
    assert.ok(qw.c.welcome.features.includes("quantized"), `features: ${qw.c.welcome.features}`);
    assert.ok(Math.abs(qw.c.welcome.positionQuantum - PQ) < 1e-9, `position quantum ${qw.c.welcome.positionQuantum}`);
    assert.equal(qw.c.welcome.velocityQuantum, VQ);
    assert.ok(qw.c.quantized && q20.c.quantized, "the quantized watchers decode packed records");
    assert.equal(qw.c.quantized!.positionQuantum, qw.c.welcome.positionQuantum);
    assert.equal(fw.c.quantized, null);
    assert.deepEqual([fw.c.welcome.positionQuantum, fw.c.welcome.velocityQuantum], [0, 0]);

    const end = Math.max(fw.c.tick, qw.c.tick, q20.c.tick) + TICKS;
    await waitFor(() => [fw, qw, q20].every((w) => w.lastTick >= end), `every watcher to reach tick ${end}`, 60000);
    // The quantized sessions really were: packed records, no BodyStates; the float one the reverse.
    assert.ok(qw.packed > TICKS / 2 && q20.packed > 10, `packed snapshots: ${qw.packed}, ${q20.packed}`);
    assert.deepEqual([qw.bodyStates, q20.bodyStates, fw.packed], [0, 0, 0]);
    assert.ok(fw.bodyStates > TICKS);
    const n = compare(fw, qw, "quantized at 60 Hz");
    // A loaded machine coalesces late steps (no snapshot of their own): most ticks remain.
    assert.ok(n >= TICKS / 2, `most ticks compared (${n})`);
    compare(fw, q20, "quantized at 20 Hz");
    // 20 Hz of 60: one snapshot per window of 3 ticks, at the phase's ticks (client id mod 3).
    const ticks = [...q20.states.keys()].sort((a, b) => a - b);
    const phase = q20.c.welcome.clientId % 3;
    const windows = ticks.map((t) => Math.floor((t - phase) / 3));
    for (let i = 1; i < windows.length; i++) assert.ok(windows[i] > windows[i - 1], `never two snapshots in one window of 3: ${ticks}`);
    assert.ok(ticks.filter((t) => t % 3 === phase).length >= ticks.length / 2, `mostly at the phase's ticks: ${ticks}`);
    assert.ok(q20.snapshots < qw.snapshots / 2, `20 Hz gets fewer snapshots (${q20.snapshots} vs ${qw.snapshots})`);

    clearInterval(driver);
    driver = undefined;
    for (const c of clients) c.close();
    await d.stopAndCheck();
  } finally {
    if (driver) clearInterval(driver);
    for (const c of clients) c.close();
    await d.terminate();
  }
});

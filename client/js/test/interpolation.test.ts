// The interpolation buffer: linear between samples, a paused body's old place kept until it moves
// again, bodies absent before their first tick and from their removal, the render clock delayMs
// behind the newest snapshot; and against the real daemon, a body at constant velocity rendered
// on its true line at fractional ticks.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, InterpolationBuffer, type Body, type CollideClient } from "../src/node";
import { Daemon, waitFor } from "./daemon";

const body = (id: number, x: number, y: number): Body => ({
  id, position: { x, y }, velocity: { x: 0, y: 0 }, angle: 0, angularVelocity: 0, lastInputSeq: 0, shape: null, kind: 2, owner: 1,
  category: 0, mask: 0, sensor: false, grounded: false, groundId: 0, oneWay: false, tick: 0,
});
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} != ${b}`);

test("interpolates between snapshots, holds paused bodies, honours adds and removals", () => {
  const buf = new InterpolationBuffer({ tickRateHz: 10, delayMs: 200 });
  buf.push(10, [body(1, 0, 0), body(2, 100, 0)], [], 1000);
  buf.push(11, [body(1, 10, 0)], [], 1100);
  // Body 2 is absent from ticks 11..14 (it did not move), then jumps at 15.
  for (let t = 12; t <= 14; t++) buf.push(t, [body(1, 10 * (t - 10), 0)], [], 1000 + (t - 10) * 100);
  buf.push(15, [body(1, 50, 0), body(2, 140, 0)], [], 1500);
  buf.push(16, [], [1], 1600);

  let s = buf.sampleAt(10.5);
  close(s.get(1)!.position.x, 5, "body 1 halfway between ticks 10 and 11");
  close(s.get(2)!.position.x, 100, "body 2 before its move");
  s = buf.sampleAt(13);
  close(s.get(2)!.position.x, 100, "body 2 still paused at tick 13, not smeared toward tick 15");
  s = buf.sampleAt(14.25);
  close(s.get(2)!.position.x, 110, "body 2 moving between ticks 14 and 15");
  close(s.get(1)!.position.x, 42.5, "body 1 between 14 and 15");
  assert.equal(buf.sampleAt(9.5).size, 0, "nothing before the first tick");
  assert.ok(buf.sampleAt(15.9).has(1));
  assert.ok(!buf.sampleAt(16).has(1), "body 1 gone from its removal tick");
  close(buf.sampleAt(20).get(2)!.position.x, 140, "held at the newest sample past it");
  // The render clock: 200 ms behind the least-delayed snapshot (tick 16 arrived at 1600 ms).
  close(buf.renderTick(1600), 14, "render tick at the newest arrival");
  close(buf.renderTick(1650), 14.5, "render tick 50 ms later");
  close(buf.sample(1650).get(2)!.position.x, 120, "sample() at 1650 ms renders tick 14.5");
});

test("renders a body of the real daemon on its line of motion", { timeout: 60000 }, async () => {
  const d = await Daemon.start({ args: ["--tick-rate", "30"] });
  const clients: CollideClient[] = [];
  try {
    const mover = await connect(d.tcpUrl, { name: "mover" });
    clients.push(mover);
    const watcher = await connect(d.tcpUrl, { name: "watcher" });
    clients.push(watcher);
    await watcher.setView({ x: 0, y: 0 }, { x: 400, y: 400 });
    const buf = new InterpolationBuffer({ tickRateHz: 30, delayMs: 100 });
    buf.attach(watcher);
    const { bodyId } = await mover.spawn({ circle: { radius: 1 } }, { position: { x: -100, y: 0 } });
    const seq = mover.move(bodyId, { x: 90, y: 30 });
    await waitFor(() => watcher.bodies.get(bodyId)?.lastInputSeq === seq, "the watcher to see the move");
    const t0 = watcher.tick;
    const p0 = { ...watcher.bodies.get(bodyId)!.position };
    await waitFor(() => watcher.tick >= t0 + 10, "ten more ticks");
    // At 30 Hz the body moves (3, 1) per tick: every fractional tick in between is on that line.
    for (const f of [0.25, 1.5, 4.75, 8.5]) {
      const p = buf.sampleAt(t0 + f).get(bodyId)!.position;
      assert.ok(Math.abs(p.x - (p0.x + 3 * f)) < 1e-3 && Math.abs(p.y - (p0.y + f)) < 1e-3,
                `tick ${t0 + f}: (${p.x}, ${p.y}) off the line from (${p0.x}, ${p0.y})`);
    }
    // The render clock runs about delayMs behind the newest snapshot.
    const lag = watcher.tick - buf.renderTick();
    assert.ok(lag > 2 && lag < 30, `render tick ${lag} ticks behind the newest (100 ms = 3 ticks)`);
    await d.stopAndCheck();
  } finally {
    for (const c of clients) c.close();
    await d.terminate();
  }
});

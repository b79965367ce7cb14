// Prediction with reconciliation against the real daemon: the client predicts straight motion
// through a wall it does not know about; the server clips the body at the wall; while the inputs
// flow the prediction is pulled back to the server's word; once the inputs
// are acknowledged (last_input_seq) the prediction must sit exactly where the server says, short
// of the wall, with nothing left pending.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, PredictedBody, Predictor, seqNewer, type CollideClient } from "../src/node";
import { Daemon, sleep, waitFor } from "./daemon";

const WALL_X = 30; // the wall's left face is at x = 29
const DT = 1 / 30;

test("reconciliation converges after the server clips a move against a wall", { timeout: 60000 }, async () => {
  const d = await Daemon.start({
    args: ["--tick-rate", "30"],
    world: { statics: [{ position: [WALL_X, 0], box: { half_extents: [1, 50] } }] },
  });
  let c: CollideClient | null = null;
  try {
    c = await connect(d.tcpUrl, { name: "predictor" });
    const { bodyId, position } = await c.spawn({ box: { halfExtents: { x: 1, y: 1 } } }, { position: { x: 0, y: 0 } });
    const body = new PredictedBody(c, bodyId, position);
    let maxPredictedX = -Infinity;
    // One second of "right at 60 units/s", one input per 30 Hz frame: straight-line prediction
    // runs to x = 60, through the wall.
    for (let i = 0; i < 30; i++) {
      body.step({ x: 60, y: 0 }, DT);
      maxPredictedX = Math.max(maxPredictedX, body.position.x);
      await sleep(DT * 1000);
    }
    // Without reconciliation the prediction would reach x = 60; corrected by each snapshot, it runs
    // past the wall only by the inputs still in flight (a round trip and a tick, a few units on
    // loopback; 20 units would be 330 ms of lag).
    assert.ok(maxPredictedX < WALL_X + 20, `the prediction kept running through the wall (max x ${maxPredictedX})`);
    const last = body.step({ x: 0, y: 0 }, DT);
    await waitFor(() => body.ackedSeq >= last, "the server to apply the last input", 15000);
    const server = c.bodies.get(bodyId)!.position;
    assert.equal(body.pending.length, 0, "every input acknowledged");
    assert.ok(server.x < WALL_X - 1 && server.x > WALL_X - 3, `the server clipped at the wall: x ${server.x}`);
    assert.deepEqual(body.position, server, "the prediction converged on the server's position");
    assert.deepEqual(body.serverPosition, server);
    body.dispose();
    await d.stopAndCheck();
  } finally {
    c?.close();
    await d.terminate();
  }
});

test("input seqs compare modulo 2^32", () => {
  assert.ok(seqNewer(2, 1) && !seqNewer(1, 2) && !seqNewer(5, 5));
  assert.ok(seqNewer(1, 0xffffffff), "1 follows 2^32 - 1");
  assert.ok(!seqNewer(0x80000001, 1), "2^31 ahead counts as older");
  const p = new Predictor({ x: 0, y: 0 });
  p.applyInput(0xfffffffe, { x: 1, y: 0 }, 1);
  p.applyInput(0xffffffff, { x: 1, y: 0 }, 1);
  p.applyInput(1, { x: 1, y: 0 }, 1);
  assert.deepEqual(p.reconcile({ x: 2, y: 0 }, 0xffffffff), { x: 3, y: 0 }, "only seq 1 replays");
  assert.deepEqual(p.pending.map((i) => i.seq), [1]);
});

test("replay keeps the inputs the server has not applied", () => {
  const p = new Predictor({ x: 0, y: 0 }, { maxSpeed: 10 });
  p.applyInput(1, { x: 10, y: 0 }, 0.5); // x 5
  p.applyInput(2, { x: 100, y: 0 }, 0.5); // clamped to 10: x 10
  p.applyInput(3, { x: 0, y: 10 }, 0.5); // y 5
  assert.deepEqual(p.position, { x: 10, y: 5 });
  // The server applied input 1 but a wall stopped it at x 2: inputs 2 and 3 replay from there.
  assert.deepEqual(p.reconcile({ x: 2, y: 0 }, 1), { x: 7, y: 5 });
  assert.deepEqual(p.pending.map((i) => i.seq), [2, 3]);
  // Older news (a reordered snapshot) changes nothing.
  assert.deepEqual(p.reconcile({ x: 0, y: 0 }, 0), { x: 7, y: 5 });
  assert.deepEqual(p.reconcile({ x: 7, y: 5 }, 3), { x: 7, y: 5 });
  assert.equal(p.pending.length, 0);
});

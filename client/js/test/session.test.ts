// A whole session through the SDK against the real collided, over each transport: Hello/Welcome,
// spawn, moves acknowledged through last_input_seq, the body mirror, ping, setView, despawn, and
// the Goodbye of a SIGTERM drain.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, CollideClient, type SnapshotEvent } from "../src/node";
import { Daemon, TRANSPORTS, waitFor } from "./daemon";

const box = (hx: number, hy: number) => ({ box: { halfExtents: { x: hx, y: hy } } });

for (const { name, skip } of TRANSPORTS) {
  test(`full session over ${name}`, { skip, timeout: 60000 }, async () => {
    const d = await Daemon.start({ ws: name === "ws", args: ["--tick-rate", "30"] });
    let c: CollideClient | null = null;
    try {
      c = await connect(d.url(name), { name: "sdk-test", room: "lobby" });
      assert.equal(c.welcome.room, "lobby");
      assert.equal(c.welcome.tickRateHz, 30);
      assert.ok(c.welcome.clientId > 0);
      assert.ok(c.welcome.features.includes("rooms"), `features: ${c.welcome.features}`);

      const snaps: SnapshotEvent[] = [];
      c.on("snapshot", (s) => snaps.push(s));
      const { bodyId, position } = await c.spawn(box(1, 1), { position: { x: 10, y: 20 } });
      assert.deepEqual(position, { x: 10, y: 20 });
      await waitFor(() => c!.bodies.has(bodyId), "the spawned body in a snapshot");
      const b0 = c.bodies.get(bodyId)!;
      assert.equal(b0.owner, c.welcome.clientId);
      assert.deepEqual({ ...b0.shape?.box?.halfExtents }, { x: 1, y: 1 });

      // Moves return increasing seqs; the snapshot acknowledging the last carries it.
      const seq1 = c.move(bodyId, { x: 30, y: 0 });
      const seq2 = c.move(bodyId, { x: 60, y: 0 });
      assert.ok(seq2 > seq1 && seq1 > 0);
      await waitFor(() => (c!.bodies.get(bodyId)?.lastInputSeq ?? 0) >= seq2, "last_input_seq to reach the second move");
      const moving = c.bodies.get(bodyId)!;
      assert.deepEqual(moving.velocity, { x: 60, y: 0 });
      await waitFor(() => c!.bodies.get(bodyId)!.position.x > 12, "the body to move right");
      assert.equal(c.bodies.get(bodyId)!.position.y, 20);
      // Stopping: the mirror must show velocity 0 (proto3 leaves zeros off the wire).
      const seq3 = c.move(bodyId, { x: 0, y: 0 });
      await waitFor(() => c!.bodies.get(bodyId)!.lastInputSeq >= seq3, "the stop to be applied");
      assert.deepEqual(c.bodies.get(bodyId)!.velocity, { x: 0, y: 0 });
      // Turning (1.1 "rotation"): a body spawned at an angle reports it with its body-local shape;
      // a move with a turning speed turns it, the mirror showing the speed and the angle moving;
      // a move without one stops it, and the mirror says 0 (not the last speed it saw).
      assert.ok(c.welcome.features.includes("rotation"), `features: ${c.welcome.features}`);
      const bar = await c.spawn(box(2, 0.5), { position: { x: -10, y: 20 }, angle: 0.3 });
      await waitFor(() => c!.bodies.has(bar.bodyId), "the bar in a snapshot");
      const bar0 = c.bodies.get(bar.bodyId)!;
      assert.ok(Math.abs(bar0.angle - 0.3) < 1e-6 && bar0.angularVelocity === 0, `angle ${bar0.angle}`);
      assert.deepEqual({ ...bar0.shape?.box?.halfExtents }, { x: 2, y: 0.5 });
      const turn = c.move(bar.bodyId, { x: 0, y: 0 }, -1.5);
      await waitFor(() => c!.bodies.get(bar.bodyId)!.lastInputSeq >= turn &&
                          c!.bodies.get(bar.bodyId)!.angularVelocity !== 0, "the turn applied");
      assert.ok(Math.abs(c.bodies.get(bar.bodyId)!.angularVelocity + 1.5) < 1e-4);
      await waitFor(() => c!.bodies.get(bar.bodyId)!.angle < 0.2, "the bar to turn clockwise");
      const still = c.move(bar.bodyId, { x: 0, y: 0 });
      await waitFor(() => c!.bodies.get(bar.bodyId)!.lastInputSeq >= still &&
                          c!.bodies.get(bar.bodyId)!.angularVelocity === 0, "the turn to stop");
      const a0 = c.bodies.get(bar.bodyId)!.angle;
      const seen = snaps.length; // a Pong may come before the next tick: wait for two of them
      await waitFor(() => snaps.length >= seen + 2, "two more snapshots");
      assert.equal(c.bodies.get(bar.bodyId)!.angle, a0, "stopped: the angle holds");
      c.despawn(bar.bodyId);

      // Snapshots come every tick, in tick order.
      for (let i = 1; i < snaps.length; i++) assert.ok(snaps[i].tick > snaps[i - 1].tick);

      const pong = await c.ping();
      assert.ok(pong.rttMs >= 0 && pong.rttMs < 5000, `rtt ${pong.rttMs}`);
      assert.ok(pong.tick >= c.welcome.tick);
      assert.ok(Math.abs(pong.serverTimeUs / 1000 - Date.now()) < 60000, "server_time_us is the wall clock");

      // A second client, a spectator, sees the body through setView, and its despawn.
      const spec = await connect(d.url(name), { name: "spectator", room: "lobby" });
      try {
        await spec.setView({ x: 0, y: 0 }, { x: 200, y: 200 });
        await waitFor(() => spec.bodies.has(bodyId), "the spectator to see the body");
        assert.equal(spec.bodies.get(bodyId)!.owner, c.welcome.clientId);
        c.despawn(bodyId);
        await waitFor(() => !spec.bodies.has(bodyId) && !c!.bodies.has(bodyId), "the despawn in both views");
      } finally {
        spec.close();
      }

      // SIGTERM: Goodbye, then the close.
      let goodbye: string | null = null;
      c.on("goodbye", (r) => (goodbye = r));
      const closed = new Promise<string>((r) => c!.on("close", (reason) => r(reason)));
      await d.stopAndCheck();
      await closed;
      assert.equal(goodbye, "server shutting down");
      assert.ok(c.closed);
    } finally {
      c?.close();
      await d.terminate();
    }
  });
}

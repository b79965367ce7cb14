// Protocol 1.2's characters and one-way bodies through the SDK against the real collided: the
// Welcome's gravity and features; a character spawned with `character` falls and stands on the
// bottom bound (grounded, groundId 0) and on a one-way platform of the world file (groundId its
// id, oneWay on its Body); move's `jump` takes it off the ground; a float and a quantized client
// of the same world agree on grounded and groundId at every tick both have, and on oneWay; a
// static with `character` is refused (BAD_REQUEST) and spawns nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CollideError, connect, type CollideClient } from "../src/node";
import { Daemon, waitFor } from "./daemon";

const FLOOR = -20;
const HALF = { x: 0.5, y: 1 };

interface Seen {
  grounded: boolean;
  groundId: number;
  y: number;
}

/** A watcher of the whole world; keeps every body's ground after each snapshot, by tick. */
class Watcher {
  readonly states = new Map<number, Map<number, Seen>>();
  private constructor(readonly c: CollideClient) {
    c.on("snapshot", (s) => {
      const view = new Map<number, Seen>();
      for (const b of c.bodies.values()) view.set(b.id, { grounded: b.grounded, groundId: b.groundId, y: b.position.y });
      this.states.set(s.tick, view);
    });
  }
  static async open(url: string, quantized: boolean): Promise<Watcher> {
    const c = await connect(url, { name: "watch", quantized });
    const w = new Watcher(c);
    await c.setView({ x: 0, y: 40 }, { x: 100, y: 60 });
    return w;
  }
}

test("characters and one-way bodies: gravity, standing, jumping, both forms agree", { timeout: 120000 }, async () => {
  const d = await Daemon.start({
    args: ["--admin-token", "adm"],
    world: {
      bounds: [[-100, FLOOR], [100, 100]],
      gravity: [0, -30],
      statics: [{ position: [40, -10], box: { half_extents: [5, 0.5] }, one_way: true }],
    },
  });
  const clients: CollideClient[] = [];
  try {
    const fw = await Watcher.open(d.tcpUrl, false);
    const qw = await Watcher.open(d.tcpUrl, true);
    const p = await connect(d.tcpUrl, { name: "player" });
    clients.push(fw.c, qw.c, p);
    assert.deepEqual(p.welcome.gravity, { x: 0, y: -30 });
    assert.ok(p.welcome.features.includes("characters") && p.welcome.features.includes("one_way"), `features: ${p.welcome.features}`);
    assert.ok(qw.c.quantized, "the quantized watcher decodes packed records");

    const box = { box: { halfExtents: HALF } };
    const { bodyId: a } = await p.spawn(box, { position: { x: 0, y: 10 }, character: { jumpSpeed: 12 } });
    const { bodyId: b } = await p.spawn(box, { position: { x: 40, y: 10 }, character: {} });
    await waitFor(() => {
      const ba = p.bodies.get(a), bb = p.bodies.get(b);
      return !!ba && !!bb && ba.grounded && bb.grounded;
    }, "both characters standing", 20000);
    const plat = [...fw.c.bodies.values()].find((x) => x.oneWay);
    assert.ok(plat && plat.kind === 1, "the world file's one-way static says oneWay");
    assert.equal(p.bodies.get(a)!.groundId, 0, "a stands on the bottom bound");
    assert.equal(p.bodies.get(b)!.groundId, plat!.id, "b stands on the one-way platform");
    assert.ok(Math.abs(p.bodies.get(a)!.position.y - (FLOOR + HALF.y)) < 0.01);
    assert.equal(qw.c.bodies.get(plat!.id)!.oneWay, true, "the quantized form says oneWay too (bit 8)");
    assert.equal(qw.c.bodies.get(a)!.oneWay, false);

    // A jump on the ground: off it, then back.
    p.move(a, { x: 0, y: 0 }, 0, { jump: true });
    await waitFor(() => !p.bodies.get(a)!.grounded, "a took off");
    assert.ok(p.bodies.get(a)!.velocity.y > 10, `jumping up: ${JSON.stringify(p.bodies.get(a)!.velocity)}`);
    await waitFor(() => p.bodies.get(a)!.grounded, "a landed", 10000);

    // Both forms, at every tick both have: the same grounds (every record says them).
    let compared = 0;
    let stood = 0;
    let flew = 0;
    for (const [t, f] of fw.states) {
      const q = qw.states.get(t);
      if (!q) continue;
      for (const id of [a, b]) {
        const fs = f.get(id), qs = q.get(id);
        if (!fs || !qs) continue;
        assert.deepEqual([qs.grounded, qs.groundId], [fs.grounded, fs.groundId], `tick ${t}, body ${id}`);
        compared++;
        if (fs.grounded) stood++;
        else flew++;
      }
    }
    assert.ok(compared > 100 && stood > 20 && flew > 20, `compared ${compared} (${stood} standing, ${flew} in the air)`);

    // A static character is refused, and nothing is spawned.
    const admin = await connect(d.tcpUrl, { name: "admin", token: "adm" });
    clients.push(admin);
    const before = fw.c.bodies.size;
    await assert.rejects(
      admin.spawn(box, { kind: 1, position: { x: -40, y: 0 }, character: {} }),
      (e: unknown) => e instanceof CollideError && e.codeName === "BAD_REQUEST" && /static/.test(e.message),
    );
    await admin.ping();
    const t0 = fw.c.tick;
    await waitFor(() => fw.c.tick >= t0 + 2, "two ticks more");
    assert.equal(fw.c.bodies.size, before, "nothing spawned");

    for (const c of clients) c.close();
    await d.stopAndCheck();
  } finally {
    for (const c of clients) c.close();
    await d.terminate();
  }
});

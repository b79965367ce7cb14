// The SDK's typed queries (rayCast, overlap, shapeCast) against the real collided: answers checked
// against known geometry (a wall of the world file and bodies spawned at known places), the
// filter's fields, lag compensation through atTick (a mover's place at an earlier tick), the tick
// as a plain number (also past what a Long's low half holds), and the errors they reject with.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BodyKind,
  CollideError,
  ErrorCode,
  connect,
  pb,
  uint64ToNumber,
  type CollideClient,
  type Hit,
  type Point,
  type QueryResult,
} from "../src/node";
import { Daemon, TRANSPORTS, waitFor } from "./daemon";

const box = (hx: number, hy: number) => ({ box: { halfExtents: { x: hx, y: hy } } });
const circle = (r: number) => ({ circle: { radius: r } });
const EPS = 1e-4;

function near(got: number, want: number, what: string, eps = EPS): void {
  assert.ok(Math.abs(got - want) <= eps, `${what}: got ${got}, want ${want}`);
}
function nearPoint(got: Point, want: Point, what: string, eps = EPS): void {
  near(got.x, want.x, `${what}.x`, eps);
  near(got.y, want.y, `${what}.y`, eps);
}
function only(r: QueryResult, what: string): Hit {
  assert.equal(r.hits.length, 1, `${what}: one hit, got ${JSON.stringify(r.hits)}`);
  return r.hits[0];
}
function isError(code: ErrorCode): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof CollideError, `a CollideError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.fatal, false);
    return true;
  };
}

test("QueryResult.tick converts exactly up to 2^53 - 1 and refuses past it", () => {
  const decoded = (tick: number) => pb.QueryResult.decode(pb.QueryResult.encode({ tick }).finish()).tick;
  for (const t of [0, 1, 0xffffffff, 0x100000000, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER])
    assert.equal(uint64ToNumber(decoded(t), "tick"), t);
  assert.throws(() => uint64ToNumber(decoded(2 ** 53 + 2), "tick"), RangeError);
  assert.throws(() => uint64ToNumber(2 ** 53, "tick"), RangeError);
});

for (const { name, skip } of TRANSPORTS) {
  test(`typed queries over ${name}`, { skip, timeout: 120000 }, async () => {
    // A wall x in [18, 22], y in [-3, 3]; a history of 1 s at 60 Hz (60 ticks: room for a slow
    // machine between a snapshot and the query about its tick).
    const d = await Daemon.start({
      ws: name === "ws",
      args: ["--tick-rate", "60", "--history-ms", "1000"],
      world: { statics: [{ position: [20, 0], box: { half_extents: [2, 3] } }] },
    });
    let c: CollideClient | null = null;
    try {
      c = await connect(d.url(name), { name: "queries" });
      const cl = c;
      assert.ok(cl.welcome.features.includes("queries") && cl.welcome.features.includes("history"),
                `features: ${cl.welcome.features}`);
      await cl.setView({ x: 0, y: 0 }, { x: 100, y: 100 });
      const isWall = (k: BodyKind) => k === BodyKind.BODY_KIND_STATIC;
      await waitFor(() => [...cl.bodies.values()].some((b) => isWall(b.kind)), "the wall in view");
      const wall = [...cl.bodies.values()].find((b) => isWall(b.kind))!.id;

      // Movers: a box A over x in [-1, 1], a circle B over [8, 10], a box D over [11, 13] (at
      // y = 20), and M at (0, -50) for the history.
      const a = (await cl.spawn(box(1, 1), { position: { x: 0, y: 20 } })).bodyId;
      const b = (await cl.spawn(circle(1), { position: { x: 9, y: 20 } })).bodyId;
      const dd = (await cl.spawn(box(1, 1), { position: { x: 12, y: 20 } })).bodyId;
      const m = (await cl.spawn(box(1, 1), { position: { x: 0, y: -50 } })).bodyId;

      // rayCast: the wall's left face at (18, 0), normal out of it (-1, 0), 18 of 40 units.
      const before = cl.tick;
      const ray = await cl.rayCast({ x: 0, y: 0 }, { x: 40, y: 0 });
      assert.equal(typeof ray.tick, "number");
      assert.ok(Number.isSafeInteger(ray.tick) && ray.tick >= before, `tick ${ray.tick}, last snapshot ${before}`);
      assert.equal(ray.truncated, false);
      const rh = only(ray, "ray at the wall");
      assert.equal(rh.bodyId, wall);
      nearPoint(rh.point, { x: 18, y: 0 }, "ray point");
      nearPoint(rh.normal, { x: -1, y: 0 }, "ray normal");
      near(rh.fraction, 18 / 40, "ray fraction");
      assert.equal(rh.depth, 0);
      // Short of the wall: nothing. Movers only: the wall is not seen.
      assert.deepEqual((await cl.rayCast({ x: 0, y: 0 }, { x: 17.9, y: 0 })).hits, []);
      const moversOnly = { filter: { kinds: [BodyKind.BODY_KIND_MOVING] } };
      assert.deepEqual((await cl.rayCast({ x: 0, y: 0 }, { x: 40, y: 0 }, moversOnly)).hits, []);

      // Along y = 20 from x = -5: A at x = -1 first; with `all` A, B, D by fraction; excluding A, B.
      const first = only(await cl.rayCast({ x: -5, y: 20 }, { x: 30, y: 0 }), "ray along the row");
      assert.equal(first.bodyId, a);
      nearPoint(first.point, { x: -1, y: 20 }, "row point");
      near(first.fraction, 4 / 30, "row fraction");
      const all = await cl.rayCast({ x: -5, y: 20 }, { x: 30, y: 0 }, { all: true });
      assert.deepEqual(all.hits.map((h) => h.bodyId), [a, b, dd]);
      near(all.hits[1].fraction, 13 / 30, "B's fraction");
      near(all.hits[2].fraction, 16 / 30, "D's fraction");
      const notA = only(await cl.rayCast({ x: -5, y: 20 }, { x: 30, y: 0 }, { filter: { excludeIds: [a] } }), "ray past A");
      assert.equal(notA.bodyId, b);
      nearPoint(notA.point, { x: 8, y: 20 }, "B's point");
      nearPoint(notA.normal, { x: -1, y: 0 }, "B's normal");

      // overlap: a box over x in [-1, 11], y in [18, 22] holds A and B; it only touches D (at
      // x = 11), which is not overlapping.
      const ov = await cl.overlap(box(6, 2), { x: 5, y: 20 });
      assert.deepEqual(ov.hits.map((h) => h.bodyId), [a, b].sort((p, q) => p - q));
      assert.equal(ov.truncated, false);
      const capped = await cl.overlap(box(6, 2), { x: 5, y: 20 }, { filter: { maxResults: 1 } });
      assert.deepEqual(capped.hits.map((h) => h.bodyId), [Math.min(a, b)]);
      assert.equal(capped.truncated, true);
      // The MTV: a 2 x 2 box at (20, 3.5) sinks 0.5 into the wall's top: pushed out along +y.
      const sunk = only(await cl.overlap(box(1, 1), { x: 20, y: 3.5 }), "overlap with the wall's top");
      assert.equal(sunk.bodyId, wall);
      nearPoint(sunk.normal, { x: 0, y: 1 }, "MTV normal");
      near(sunk.depth, 0.5, "MTV depth");
      // Turned by 45 degrees, a 0.3-box at (20, 3.35) reaches down to 3.35 - 0.3 * sqrt(2) < 3.
      assert.deepEqual((await cl.overlap(box(0.3, 0.3), { x: 20, y: 3.35 })).hits, []);
      const turned = await cl.overlap(box(0.3, 0.3), { x: 20, y: 3.35 }, { angle: Math.PI / 4 });
      assert.deepEqual(turned.hits.map((h) => h.bodyId), [wall]);

      // shapeCast: a circle of radius 0.5 from (10, 0) along +20 meets the wall's face at x = 18
      // after 7.5 units: fraction 0.375, point on the face.
      const ch = only(await cl.shapeCast(circle(0.5), { x: 10, y: 0 }, { x: 20, y: 0 }), "cast at the wall");
      assert.equal(ch.bodyId, wall);
      near(ch.fraction, 0.375, "cast fraction");
      nearPoint(ch.point, { x: 18, y: 0 }, "cast point");
      nearPoint(ch.normal, { x: -1, y: 0 }, "cast normal");
      // A box cast down the row with `all`: A (already overlapped at the start), then B, then D.
      const sweep = await cl.shapeCast(box(0.5, 0.5), { x: 0, y: 20 }, { x: 20, y: 0 }, { all: true });
      assert.deepEqual(sweep.hits.map((h) => h.bodyId), [a, b, dd]);
      assert.equal(sweep.hits[0].fraction, 0);
      near(sweep.hits[0].depth, 1.5, "A's depth at the start");
      near(sweep.hits[1].fraction, 7.5 / 20, "B's cast fraction");

      // atTick: M moves right at 30 units/s (0.5 a tick); each snapshot tells where it was.
      const seen = new Map<number, number>();
      cl.on("snapshot", (s) => {
        if (s.changed.includes(m) || s.added.includes(m)) seen.set(s.tick, cl.bodies.get(m)!.position.x);
      });
      const seq = cl.move(m, { x: 30, y: 0 });
      await waitFor(() => (cl.bodies.get(m)?.lastInputSeq ?? 0) >= seq && cl.bodies.get(m)!.position.x > 5, "M to move 5 units");
      // A tick three snapshots back (well inside the 60-tick history), M at xk.
      const ticks = [...seen.keys()].sort((p, q) => p - q);
      const tk = ticks[ticks.length - 4];
      const xk = seen.get(tk)!;
      assert.ok(xk > 0.5 && seen.get(ticks[ticks.length - 1])! - xk >= 1, `M at ${xk} at tick ${tk}: ${[...seen]}`);
      // A ray from the left along y = -50 meets M's left face where M was then...
      const leftRay = (atTick?: number) =>
        cl.rayCast({ x: -100, y: -50 }, { x: 200, y: 0 }, { atTick, filter: { kinds: [BodyKind.BODY_KIND_MOVING] } });
      const past = await leftRay(tk);
      assert.equal(past.tick, tk);
      const ph = only(past, "M in the past");
      assert.equal(ph.bodyId, m);
      near(ph.point.x, xk - 1, `M's left face at tick ${tk}`, 1e-3);
      // ...and now, at least a tick (0.5 units) further on.
      const present = await leftRay();
      assert.ok(present.tick > tk, `now ${present.tick} after ${tk}`);
      assert.ok(only(present, "M now").point.x >= xk - 1 + 0.5 - 1e-3, `M now at ${present.hits[0].point.x + 1}, then ${xk}`);
      // Overlap and shape cast take atTick too. Half a unit behind xk lies inside M then (over
      // [xk - 1, xk + 1]), and clear of it now (M's left face is past xk + 0.5).
      const behind = { x: xk - 0.5, y: -50 };
      const thenBox = await cl.overlap(box(0.2, 0.2), behind, { atTick: tk });
      assert.deepEqual(thenBox.hits.map((h) => h.bodyId), [m]);
      assert.equal(thenBox.tick, tk);
      assert.deepEqual((await cl.overlap(box(0.2, 0.2), behind)).hits, []);
      const down = (atTick?: number) => cl.shapeCast(circle(0.4), { x: xk - 0.5, y: -40 }, { x: 0, y: -20 }, { atTick });
      const thenCast = await down(tk);
      assert.equal(thenCast.tick, tk);
      const th = only(thenCast, "cast down onto M then");
      assert.equal(th.bodyId, m);
      nearPoint(th.point, { x: xk - 0.5, y: -49 }, "M's top face then", 1e-3);
      near(th.fraction, 8.6 / 20, "the cast's fraction then", 1e-3);
      assert.deepEqual((await down()).hits, []);

      // Errors: each rejects the query it answers with the protocol's code, and the session stays.
      await waitFor(() => cl.tick > 100, "tick 1 to be out of the history (tick past 100)");
      await assert.rejects(leftRay(1), isError(ErrorCode.ERROR_CODE_HISTORY_EXPIRED));
      await assert.rejects(leftRay(cl.tick + 100000), isError(ErrorCode.ERROR_CODE_BAD_REQUEST));
      await assert.rejects(cl.rayCast({ x: NaN, y: 0 }, { x: 1, y: 0 }), isError(ErrorCode.ERROR_CODE_BAD_REQUEST));
      await assert.rejects(cl.overlap(circle(-1), { x: 0, y: 0 }), isError(ErrorCode.ERROR_CODE_INVALID_SHAPE));
      await assert.rejects(cl.shapeCast({}, { x: 0, y: 0 }, { x: 1, y: 0 }), isError(ErrorCode.ERROR_CODE_INVALID_SHAPE));
      await assert.rejects(cl.rayCast({ x: 0, y: 0 }, { x: 1, y: 0 }, { filter: { kinds: [BodyKind.BODY_KIND_UNSPECIFIED] } }),
                           isError(ErrorCode.ERROR_CODE_BAD_REQUEST));
      // An atTick a uint64 cannot carry as meant is refused here, before it is sent.
      await assert.rejects(leftRay(-1), isError(ErrorCode.ERROR_CODE_UNSPECIFIED));
      await assert.rejects(leftRay(1.5), isError(ErrorCode.ERROR_CODE_UNSPECIFIED));
      assert.equal(cl.closed, false);
      assert.equal(only(await cl.rayCast({ x: 0, y: 0 }, { x: 40, y: 0 }), "after the errors").bodyId, wall);
      await d.stopAndCheck();
    } finally {
      c?.close();
      await d.terminate();
    }
  });
}

// Errors through the SDK: fatal ones reject connect() and close; non-fatal ones reject the
// request they answer (matched by request_id) and leave the session open; a move's error names
// the move by its seq.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, CollideError, ErrorCode, type CollideClient } from "../src/node";
import { Daemon, TRANSPORTS, waitFor } from "./daemon";

for (const { name, skip } of TRANSPORTS) {
  test(`errors over ${name}`, { skip, timeout: 60000 }, async () => {
    const d = await Daemon.start({ ws: name === "ws", args: ["--token", "secret"] });
    const clients: CollideClient[] = [];
    try {
      // A wrong token: connect rejects with UNAUTHENTICATED, fatal.
      await assert.rejects(connect(d.url(name), { token: "wrong" }), (e: unknown) => {
        assert.ok(e instanceof CollideError, String(e));
        assert.equal(e.code, ErrorCode.ERROR_CODE_UNAUTHENTICATED);
        assert.equal(e.fatal, true);
        return true;
      });
      // A bad room name: BAD_REQUEST, fatal.
      await assert.rejects(connect(d.url(name), { token: "secret", room: "no spaces" }), (e: unknown) =>
        e instanceof CollideError && e.code === ErrorCode.ERROR_CODE_BAD_REQUEST && e.fatal);

      const c = await connect(d.url(name), { token: "secret" });
      clients.push(c);
      const errors: CollideError[] = [];
      c.on("error", (e) => errors.push(e));

      // An invalid shape rejects the spawn, not the session.
      await assert.rejects(c.spawn({ circle: { radius: -1 } }, { position: { x: 0, y: 0 } }), (e: unknown) =>
        e instanceof CollideError && e.code === ErrorCode.ERROR_CODE_INVALID_SHAPE && !e.fatal);
      // A static body is for admins.
      await assert.rejects(
        c.spawn({ circle: { radius: 1 } }, { position: { x: 0, y: 0 }, kind: 1 }),
        (e: unknown) => e instanceof CollideError && e.code === ErrorCode.ERROR_CODE_FORBIDDEN);
      // A view wider than --max-view-extent: LIMIT_EXCEEDED, the previous view stays.
      await assert.rejects(c.setView({ x: 0, y: 0 }, { x: 5000, y: 5000 }), (e: unknown) =>
        e instanceof CollideError && e.code === ErrorCode.ERROR_CODE_LIMIT_EXCEEDED && !e.fatal);
      // Moving a body that does not exist: an error event whose request_id is the move's seq.
      const seq = c.move(424242, { x: 1, y: 0 });
      await waitFor(() => errors.some((e) => e.requestId === seq), "the move's error");
      assert.equal(errors.find((e) => e.requestId === seq)!.code, ErrorCode.ERROR_CODE_NOT_FOUND);
      // Moving another client's body: FORBIDDEN.
      const other = await connect(d.url(name), { token: "secret" });
      clients.push(other);
      const { bodyId } = await other.spawn({ circle: { radius: 1 } }, { position: { x: 50, y: 50 } });
      const seq2 = c.move(bodyId, { x: 1, y: 0 });
      await waitFor(() => errors.some((e) => e.requestId === seq2), "the forbidden move's error");
      assert.equal(errors.find((e) => e.requestId === seq2)!.code, ErrorCode.ERROR_CODE_FORBIDDEN);
      // The session is still open and answers.
      assert.equal(c.closed, false);
      await c.ping();
      // After the close, requests reject at once and sending throws.
      c.close();
      await waitFor(() => c.closed, "the close");
      assert.throws(() => c.move(1, { x: 0, y: 0 }), CollideError);
      await d.stopAndCheck();
    } finally {
      for (const c of clients) c.close();
      await d.terminate();
    }
  });
}

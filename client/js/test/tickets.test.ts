// Tickets (PROTOCOL.md 1.2): the SDK takes one in `token`, as it takes the shared token, and sends
// it as Hello.token untouched; a refused one rejects connect with the daemon's UNAUTHENTICATED and
// its message, so a game can tell "ask the backend for a new ticket" from other failures. The
// daemon's checks of the ticket itself are its own tests'; here a scripted transport stands in
// for it, and the ticket is made the way a Node backend would (the README's snippet).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { CollideClient, CollideError, ErrorCode, pb, type Transport } from "../src/index";

/** client/js/README.md's "Tickets" snippet: a ticket as a Node backend makes it. */
function mintTicket(key: string, room: string, ttlS: number, sub?: string, now = Date.now() / 1000): string {
  const b64url = (s: string | Buffer) => Buffer.from(s).toString("base64url");
  const iat = Math.floor(now);
  const claims = { room, iat, exp: iat + Math.ceil(ttlS), ...(sub === undefined ? {} : { sub }) };
  const input = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(createHmac("sha256", key).update(input).digest())}`;
}

/** A transport that answers the Hello as `answer` says, and records it. */
function scripted(answer: (hello: InstanceType<typeof pb.ClientMessage>) => Uint8Array[], closeAfter = false) {
  const hellos: InstanceType<typeof pb.ClientMessage>[] = [];
  let closes = 0;
  const t: Transport = {
    send(bytes) {
      const m = pb.ClientMessage.decode(bytes);
      if (m.msg !== "hello") return;
      hellos.push(m);
      const replies = answer(m);
      setImmediate(() => {
        for (const r of replies) t.onMessage(r);
        // The daemon flushes a fatal Error, then closes: the close follows in the same turn.
        if (closeAfter) t.onClose("");
      });
    },
    close() {
      closes++;
    },
    onMessage: () => {},
    onClose: () => {},
    onOpen: () => {},
  };
  setImmediate(() => t.onOpen());
  return { t, hellos, closes: () => closes };
}

test("the README's Node snippet makes the same ticket as the Python example's mint_ticket", () => {
  // examples/python: mint_ticket("backend-secret", "arena-1", 60, sub="alice", now=1700000000)
  const python =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb29tIjoiYXJlbmEtMSIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAwMDYwLCJzdWIiOiJhbGljZSJ9.djVe5idgakEOqS_1pe8YidhLwF2R9BrdaTVlL4vL7pA";
  assert.equal(mintTicket("backend-secret", "arena-1", 60, "alice", 1700000000), python);
});

test("a ticket in `token` travels as Hello.token, untouched, with its room", async () => {
  const ticket = mintTicket("backend-secret", "arena-1", 60, "alice");
  const { t, hellos } = scripted((m) => [
    pb.ServerMessage.encode({ requestId: m.requestId, welcome: { clientId: 7, tickRateHz: 60, room: "arena-1" } }).finish(),
  ]);
  const c = await CollideClient.open(t, { token: ticket, room: "arena-1", name: "alice" });
  assert.equal(hellos.length, 1);
  const h = hellos[0].hello!;
  assert.equal(h.token, ticket);
  assert.deepEqual([h.room, h.name], ["arena-1", "alice"]);
  assert.equal(c.welcome.room, "arena-1");
});

test("a refused ticket rejects connect with UNAUTHENTICATED, fatal, and the daemon's reason", async () => {
  const { t, closes } = scripted(
    (m) => [
      pb.ServerMessage.encode({
        requestId: m.requestId,
        error: { code: ErrorCode.ERROR_CODE_UNAUTHENTICATED, message: "ticket expired", fatal: true },
      }).finish(),
    ],
    true,
  );
  await assert.rejects(
    CollideClient.open(t, { token: mintTicket("backend-secret", "arena-1", 60, "alice", 1000), room: "arena-1" }),
    (e: unknown) => {
      assert.ok(e instanceof CollideError, String(e));
      assert.equal(e.code, ErrorCode.ERROR_CODE_UNAUTHENTICATED);
      assert.equal(e.codeName, "UNAUTHENTICATED");
      assert.equal(e.fatal, true);
      assert.match(e.message, /ticket expired/);
      return true;
    },
  );
  assert.ok(closes() >= 1, "the transport is closed");
});

// The TCP framing: frames cut anywhere, several in one chunk, the 5-byte varint limit and the
// max frame, checked byte for byte against the prefixes PROTOCOL.md gives.
import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeFrame, FrameDecoder, FrameError } from "../src/framing";

test("varint prefixes", () => {
  assert.deepEqual([...encodeFrame(new Uint8Array(0))], [0]);
  assert.deepEqual([...encodeFrame(new Uint8Array(127)).subarray(0, 1)], [0x7f]);
  assert.deepEqual([...encodeFrame(new Uint8Array(128)).subarray(0, 2)], [0x80, 0x01]);
  assert.deepEqual([...encodeFrame(new Uint8Array(300)).subarray(0, 2)], [0xac, 0x02]);
});

test("frames cut at every byte come out whole and in order", () => {
  const bodies = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array(200).map((_, i) => i)];
  const stream = Buffer.concat(bodies.map((b) => encodeFrame(b)));
  for (let cut = 0; cut <= stream.length; cut++) {
    const dec = new FrameDecoder();
    const got = [...dec.push(stream.subarray(0, cut)), ...dec.push(stream.subarray(cut))];
    assert.deepEqual(got.map((f) => [...f]), bodies.map((b) => [...b]), `cut at ${cut}`);
  }
  // One byte at a time.
  const dec = new FrameDecoder();
  const got: Uint8Array[] = [];
  for (const byte of stream) got.push(...dec.push(new Uint8Array([byte])));
  assert.equal(got.length, 3);
});

test("oversize frames and overlong varints are refused", () => {
  assert.throws(() => new FrameDecoder(100).push(encodeFrame(new Uint8Array(101)).subarray(0, 2)), FrameError);
  assert.equal(new FrameDecoder(100).push(encodeFrame(new Uint8Array(100))).length, 1);
  // A length of 1 spelled in 6 bytes: small, but longer than 5 bytes, so refused (PROTOCOL.md).
  assert.throws(() => new FrameDecoder().push(new Uint8Array([0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0xff])), FrameError);
  // The same in 5 bytes is fine.
  assert.deepEqual([...new FrameDecoder().push(new Uint8Array([0x81, 0x80, 0x80, 0x80, 0x00, 0xff]))[0]], [0xff]);
});

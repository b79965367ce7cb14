// Varint framing of the TCP transport (PROTOCOL.md "Transport and framing"): each frame is a
// base-128 varint byte count, then that many bytes. WebSocket messages carry no prefix.

/** The largest frame a decoder accepts by default: the daemon's default --max-frame. */
export const DEFAULT_MAX_FRAME = 65536;

export function encodeFrame(body: Uint8Array): Uint8Array {
  const prefix: number[] = [];
  let n = body.length;
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    prefix.push(b);
  } while (n);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

export class FrameError extends Error {}

/** Splits a byte stream into frames; bytes may arrive cut anywhere. */
export class FrameDecoder {
  private buf: Uint8Array = new Uint8Array(0);
  constructor(private readonly maxFrame = DEFAULT_MAX_FRAME) {}

  /** Adds bytes and returns every frame now complete. Throws FrameError on a bad length. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.buf.length === 0) {
      this.buf = chunk;
    } else {
      const joined = new Uint8Array(this.buf.length + chunk.length);
      joined.set(this.buf, 0);
      joined.set(chunk, this.buf.length);
      this.buf = joined;
    }
    const frames: Uint8Array[] = [];
    let pos = 0;
    for (;;) {
      let len = 0;
      let shift = 0;
      let i = pos;
      let complete = false;
      while (i < this.buf.length) {
        const b = this.buf[i++];
        len += (b & 0x7f) * 2 ** shift;
        shift += 7;
        if (!(b & 0x80)) {
          complete = true;
          break;
        }
        if (shift >= 35) throw new FrameError("length varint longer than 5 bytes");
      }
      if (!complete) break;
      if (len > this.maxFrame) throw new FrameError(`frame of ${len} bytes over the max ${this.maxFrame}`);
      if (this.buf.length - i < len) break;
      frames.push(this.buf.subarray(i, i + len));
      pos = i + len;
    }
    this.buf = pos === this.buf.length ? new Uint8Array(0) : this.buf.slice(pos);
    return frames;
  }
}

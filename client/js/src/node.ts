// collide-sdk for Node: everything of the browser entry, plus TCP (tcp://host:port, the varint
// framing) and WebSocket through the `ws` package.
import { readFile } from "fs/promises";
import * as net from "net";
import { join } from "path";
import WebSocket from "ws";
import { CollideClient } from "./client";
import { DEFAULT_MAX_FRAME, FrameDecoder, encodeFrame } from "./framing";
import { webSocketTransport, type Transport, type WebSocketConstructor } from "./transport";
import type { WebSocketConnectOptions } from "./index";
import { WorldModule } from "./wasm_world";

export * from "./index";

/** A TCP transport with the varint framing of PROTOCOL.md. */
export function tcpTransport(host: string, port: number, maxFrame = DEFAULT_MAX_FRAME): Transport {
  const sock = net.connect({ host, port });
  sock.setNoDelay(true);
  const decoder = new FrameDecoder(maxFrame);
  let closed = false;
  let lastError = "";
  const t: Transport = {
    send(message) {
      sock.write(encodeFrame(message));
    },
    close() {
      sock.end();
    },
    onMessage: () => {},
    onClose: () => {},
    onOpen: () => {},
  };
  sock.on("connect", () => t.onOpen());
  sock.on("data", (chunk: Buffer) => {
    if (closed) return;
    let frames: Uint8Array[];
    try {
      frames = decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } catch (e) {
      lastError = String((e as Error).message);
      sock.destroy();
      return;
    }
    for (const f of frames) t.onMessage(f);
  });
  sock.on("error", (e) => {
    lastError = e.message;
  });
  sock.on("close", () => {
    if (closed) return;
    closed = true;
    t.onClose(lastError);
  });
  return t;
}

/** Connects over `tcp://host:port` or `ws://host:port/v1` and says Hello. */
export function connect(url: string, opts: WebSocketConnectOptions = {}): Promise<CollideClient> {
  const u = new URL(url);
  if (u.protocol === "tcp:") {
    const host = u.hostname.replace(/^\[|\]$/g, "");
    return CollideClient.open(tcpTransport(host, Number(u.port || 7777)), opts);
  }
  if (u.protocol === "ws:" || u.protocol === "wss:") {
    const WS = opts.WebSocket ?? (WebSocket as unknown as WebSocketConstructor);
    return CollideClient.open(webSocketTransport(url, WS), opts);
  }
  throw new Error(`unsupported URL ${url}: use tcp://host:port or ws://host:port/v1`);
}

/** Where the package keeps the world's WebAssembly module: client/js/wasm/collide_world.wasm,
 * next to dist/ (CMake builds it: docs/wasm.md). */
export function defaultWorldModulePath(): string {
  return join(__dirname, "..", "wasm", "collide_world.wasm");
}

/** Reads and instantiates the world's WebAssembly module (WorldModule.instantiate from bytes). */
export async function loadWorldModuleFile(path = defaultWorldModulePath()): Promise<WorldModule> {
  return WorldModule.instantiate(await readFile(path));
}

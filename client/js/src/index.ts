// collide-sdk for browsers (and any runtime with a global WebSocket). Node adds TCP and the `ws`
// package through "collide-sdk/node".
import { CollideClient, type ConnectOptions } from "./client";
import { webSocketTransport, type WebSocketConstructor } from "./transport";

export * from "./client";
export * from "./proto";
export * from "./world";
export * from "./quantized";
export * from "./framing";
export * from "./transport";
export * from "./prediction";
export * from "./interpolation";
export * from "./wasm_world";
export * from "./world_predictor";
export * from "./journal_player";

export interface WebSocketConnectOptions extends ConnectOptions {
  /** The WebSocket class (default: the global one). */
  WebSocket?: WebSocketConstructor;
}

/** Connects to `ws://host:port/v1` (or wss:// behind a TLS proxy) and says Hello. */
export function connect(url: string, opts: WebSocketConnectOptions = {}): Promise<CollideClient> {
  const WS = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!WS) throw new Error("no WebSocket in this runtime: pass opts.WebSocket (in Node use collide-sdk/node)");
  return CollideClient.open(webSocketTransport(url, WS), opts);
}

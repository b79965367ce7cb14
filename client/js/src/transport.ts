// A transport carries whole protobuf messages (without any varint prefix) both ways. The client
// (client.ts) is the same over every transport, as the daemon's session is.

export interface Transport {
  /** Sends one encoded ClientMessage. */
  send(message: Uint8Array): void;
  /** Closes; onClose follows once. */
  close(): void;
  onMessage: (message: Uint8Array) => void;
  /** reason: why it closed ("" for an orderly close); code: the WebSocket close code, if any. */
  onClose: (reason: string, code?: number) => void;
  /** Called once the transport can send. */
  onOpen: () => void;
}

/** The WebSocket subprotocol of the daemon's --ws-port listener. */
export const WS_SUBPROTOCOL = "collide.v1";

/** What the SDK needs of a WebSocket class: the browser's, or the `ws` package's in Node. */
export interface WebSocketLike {
  binaryType: string;
  readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/** A WebSocket transport: one binary message per ClientMessage/ServerMessage. */
export function webSocketTransport(url: string, WS: WebSocketConstructor): Transport {
  const ws = new WS(url, WS_SUBPROTOCOL);
  ws.binaryType = "arraybuffer";
  let closed = false;
  let lastError = "";
  const t: Transport = {
    send(message) {
      ws.send(message);
    },
    close() {
      if (ws.readyState <= 1) ws.close(1000);
    },
    onMessage: () => {},
    onClose: () => {},
    onOpen: () => {},
  };
  ws.onopen = () => t.onOpen();
  ws.onmessage = (ev) => {
    const d = ev.data;
    if (d instanceof ArrayBuffer) t.onMessage(new Uint8Array(d));
    else if (ArrayBuffer.isView(d)) t.onMessage(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    // A text message is not part of the protocol: ignored (the daemon never sends one).
  };
  ws.onerror = (ev) => {
    const msg = (ev as { message?: string })?.message;
    lastError = msg ? String(msg) : "websocket error";
  };
  ws.onclose = (ev) => {
    if (closed) return;
    closed = true;
    t.onClose(ev.reason || lastError || (ev.code === 1000 ? "" : `websocket closed (${ev.code})`), ev.code);
  };
  return t;
}

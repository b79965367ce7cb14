/* net_ws: the WebSocket transport (RFC 6455, PROTOCOL.md "WebSocket transport"), free of sockets
 * and of libuv like net_session: bytes in, the session's frames out. It is a second way of
 * carrying the same ClientMessage / ServerMessage frames, not a second session: every whole
 * binary message goes to the same dispatch as a length-prefixed frame (net_session_message), and
 * what the session appends is framed as one binary WebSocket message (net_server_append).
 *
 * Parsers are Debian's: http_parser (libhttp-parser-dev) reads the upgrade request, wslay
 * (libwslay-dev, its frame layer: it does no I/O) reads the client's frames; nettle gives the
 * SHA-1 and base64 of Sec-WebSocket-Accept. What is written here is only the server's side, which
 * has nothing to parse: the 101 or the HTTP refusal, and the 2 to 10 bytes of an unmasked frame
 * header (RFC 6455 5.2).
 *
 * Decisions (docs/protocol.md "WebSocket transport"):
 *  - The handshake is bounded (NET_WS_MAX_HANDSHAKE bytes, then 431) and timed with the Hello:
 *    the whole of it and the Hello must arrive within --hello-timeout-ms of the accept.
 *  - A message over --max-frame (--max-hello-frame before Hello) is refused from its declared
 *    length, before its payload is buffered: Error{FRAME_TOO_LARGE, fatal}, close 1009.
 *  - A text message: Error{BAD_REQUEST, fatal}, close 1003. A violation of RFC 6455 (an unmasked
 *    client frame, reserved bits or opcodes, a continuation out of place, a bad control frame):
 *    close 1002, no Error (the framing itself cannot be trusted any more).
 *  - Every close the server decides (a fatal Error, a Goodbye) is followed by a close frame:
 *    1001 for the drain, 1008 after a fatal Error (its code says why), 1000 otherwise;
 *    then the connection lingers, reading and discarding, until the peer closes (or the
 *    CLOSING timeout cuts it), so the close frame is not lost to a reset. A close frame from the
 *    client is answered with the same code and the connection closed once that is written (the
 *    peer sends nothing after its close: there is nothing to linger for). */
#ifndef COLLIDE_NET_WS_H
#define COLLIDE_NET_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_server.h"

#define NET_WS_MAX_HANDSHAKE 8192 /* upgrade request line plus headers */
#define NET_WS_MAX_HEADER                                                                          \
    10 /* = NET_MAX_FRAME_PREFIX */ /* the longest server frame header (unmasked, 64-bit length)   \
                                     */
#define NET_WS_PATH "/v1"           /* the one path upgraded */
#define NET_WS_SUBPROTOCOL "collide.v1"

/* Close codes (RFC 6455 7.4.1) the server sends. */
#define NET_WS_CLOSE_NORMAL 1000
#define NET_WS_CLOSE_GOING_AWAY 1001
#define NET_WS_CLOSE_PROTOCOL 1002
#define NET_WS_CLOSE_UNSUPPORTED 1003
#define NET_WS_CLOSE_POLICY 1008
#define NET_WS_CLOSE_TOO_BIG 1009

/* How a handshake ended (collide_ws_handshakes_total{result}). */
typedef enum net_ws_handshake_result {
    NET_WS_HS_ACCEPTED = 0, /* 101 */
    NET_WS_HS_BAD_REQUEST,  /* 400: malformed, not GET, not an upgrade, bad key, subprotocol */
    NET_WS_HS_VERSION,      /* 426: Sec-WebSocket-Version other than 13 */
    NET_WS_HS_NOT_FOUND,    /* 404: a path other than /v1 */
    NET_WS_HS_FORBIDDEN,    /* 403: an Origin --ws-origins does not list */
    NET_WS_HS_TOO_LARGE,    /* 431: no end of headers within NET_WS_MAX_HANDSHAKE */
    NET_WS_HS_PAGE,         /* 200: not an upgrade, a GET of a page: viewer, play (--viewer) */
    NET_WS_HS_RESULT_COUNT
} net_ws_handshake_result;

const char *net_ws_handshake_result_str(net_ws_handshake_result r);

typedef struct net_ws net_ws;

/* The transport itself is net_ws_transport (net_transport.h): its open makes a client's net_ws
 * (before the handshake, or after it for a client adopted from the front), its feed reads the
 * handshake then frames, its on_closing appends the close frame and its linger keeps the socket
 * half-open until the peer's EOF once a close frame or an HTTP refusal went out. */

/* Writes the header of an unmasked server frame (FIN set) of `opcode` carrying len bytes; returns
 * its length (2..NET_WS_MAX_HEADER). */
size_t net_ws_frame_header(uint8_t opcode, uint64_t len, uint8_t out[NET_WS_MAX_HEADER]);

#endif

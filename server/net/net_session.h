/* net_session: the protocol v1 state machine (PROTOCOL.md "Session"), free of sockets and of
 * libuv. Messages in: the client's transport (net_transport.h) hands each whole ClientMessage to
 * net_session_message(), which unpacks it, applies it to the world and appends the encoded
 * ServerMessage replies to the client's output buffer. The registry, output and tick live in
 * net_server.h, snapshots in net_snapshot.h, the rate limit in net_rate.h; this header brings them
 * together for the I/O layer, the fuzz target and the unit tests, which all drive the very same
 * functions.
 *
 * Decisions (see docs/net-design.md):
 *  - A frame that does not unpack as a ClientMessage is BAD_REQUEST, not fatal: the length prefix
 *    kept the stream in sync, so the next frame can still be served. Before Hello it is "anything
 *    else first": UNAUTHENTICATED, fatal.
 *  - Rate limit: a token bucket of rate_limit per second (admins: admin_rate_limit, 0 = none;
 *    and players only, a bucket of frame bytes), burst 2 s worth, consulted before the unpack,
 *    each MoveIntents item counting as one message. A message over it is dropped with a
 *    non-fatal RATE_LIMITED; sustained abuse is fatal (RATE_LIMITED, fatal=true): see net_rate.h.
 *  - World statuses map to error codes through one table (net_request.c); a MoveIntent is
 *    validated by the world alone, the session checks only that the client may act on the body. */
#ifndef COLLIDE_NET_SESSION_H
#define COLLIDE_NET_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "net_rate.h"
#include "net_server.h"
#include "net_snapshot.h"

/* One whole ClientMessage, as the client's transport delivered it (net_transport.h: a
 * length-prefixed frame's body, a WebSocket binary message). The transport checked its size
 * against net_session_frame_limit. Nothing once c no longer accepts input. */
void net_session_message(net_server *srv, net_client *c, const uint8_t *body, size_t len);
/* A whole message the transport will not deliver where it came (a datagram on the wrong channel):
 * counted and charged against the rate limits as any message, then a non-fatal BAD_REQUEST (to
 * its request_id) saying why. Nothing once c no longer accepts input. */
void net_session_refuse_message(net_server *srv, net_client *c, const uint8_t *body, size_t len,
                                const char *why);
/* The largest frame (message) c may send now: --max-hello-frame before Hello, else --max-frame. */
uint32_t net_session_frame_limit(const net_server *srv, const net_client *c);

/* The hook's refusal of a Hello the directory would not place (net_rooms.h status, not OK): a
 * fatal Error with the code PROTOCOL.md gives (BAD_REQUEST, NOT_FOUND, LIMIT_EXCEEDED for a
 * limit or "at capacity", SHUTTING_DOWN), then close. */
void net_session_refuse_room(net_server *srv, net_client *c, uint32_t request_id, int status);
/* The room's side of a placed client (and of a Hello in a server with a world): ACTIVE, with what
 * its Hello was granted (admin or not, of its room only, its body limit), named, and sent Welcome
 * (its tick, bounds, id, room, body limit and features). The snapshot rate and form are
 * c->snap.snapshot_rate_hz and c->snap.quantized, set from its Hello before this call. */
void net_session_welcome(net_server *srv, net_client *c, uint32_t request_id, const net_grant *g,
                         const char *name, const char *room);
/* A StartRecording's answer that waited for the recording to start (net_recording_hook): the
 * RecordingInfo to request_id of the client client_id, if it is still there and listening. */
void net_session_recording_reply(net_server *srv, uint32_t client_id, uint32_t request_id,
                                 const net_recording_info *info);

#endif

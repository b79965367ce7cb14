/* net_internal: what server/net's own files share and nothing outside it may call (the
 * registry's append, errors and state changes; the requests' helpers), and the map of the folder.
 * Private: internal/ is on the PRIVATE include path of collide_net, collide_rooms and collided.
 *
 * The map, from the bottom up: a file includes and calls only files on the lines above it (the
 * include graph has no cycle and no arrow back up).
 *
 * The socket-free core (collide_net: no libuv; unit tests, the fuzz target and bench_net drive it):
 *   net_buf, net_known, net_rate, net_arena, net_config, net_http, net_rooms, net_partial
 *                      leaves: a bounded byte buffer, a client's known set, the token bucket, the
 *                      arena frames unpack into (and the one pre-scan of a frame), the flags, HTTP
 *                      requests, the room directory (and its one status-to-ErrorCode table), the
 *                      daemon-wide count of memory held for partial frames (--max-partial-bytes)
 *   net_ticket         the tickets' verifier: a token, the keys and the clock in, the claims or
 *                      the check that failed out (libjwt; room names from net_rooms)
 *   net_baselines      a datagram client's states after its last snapshots, a ring (the baselines
 *                      its deltas are against)
 *   net_transport      the transport interface and its table (a leaf: names the registry's types;
 *                      `datagram` marks the transports whose packets may be lost)
 *   net_view           the interest index and the id-ordered mover mirror snapshots read
 *   net_log, net_metrics   log lines, the /metrics counters
 *   internal/          this header: below the registry (it names net_server, includes none of it)
 *   net_server         the registry: ids, output queues and their limits, close with a reason,
 *                      the timeout sweep; it calls nothing above it
 *   net_request        world status -> ErrorCode, wire shape -> geom shape (every request's)
 *   net_events         each step's contact and sensor events, queued per recipient (a datagram
 *                      client's sent at once, one Events message per tick)
 *   net_session_rooms  CreateRoom, CloseRoom, ListRooms (FORBIDDEN to an admin by ticket)
 *   net_session_auth   who a Hello is: the tokens, a ticket (net_ticket) and what it grants
 *   net_queries        RayCast, OverlapQuery, ShapeCast
 *   net_snapshot       the snapshot writer of a stream client, in named phases over the view's
 *                      mirror, and the record encoders it shares (internal/net_snapshot_internal.h)
 *   net_snapshot_deltas, net_snapshot_datagram  above it: the writer's per-tick side (each changed
 *                      mover's record, once for all); a datagram client's writer (against its
 *                      acknowledged baseline, within --udp-snapshot-bytes, by accumulated priority)
 *   net_session        the protocol state machine: Hello, Welcome, dispatch, the handlers
 *   net_tick           a world's tick (step, events, sweep, each client's snapshot by its
 *                      transport's kind: net_tick_snapshots), its schedule, and a server's whole
 *                      lifetime (net_server_create / _destroy)
 *   net_tcp, net_ws, net_udp   the transports: varint-prefixed TCP, WebSocket (and the viewer's
 *                      page), UDP's packets and channels (its host is below, on the libuv side)
 * The libuv side (collide_rooms, and the collided executable):
 *   net_worker, net_worlds  a worker thread, its loop and its inbox; CreateRoom's world files
 *   net_conn           game connections on a loop: reads into the transport, writes, one close
 *   net_record         a room's recording: its journal (srv->journal) begun between steps, written
 *                      to --record-dir through uv_fs, rotated, kept, dropped on a disk error
 *   net_room, net_host a room on its thread; a worker's rooms
 *   net_udp_relay      a room thread's clients of UDP peers: packets in through the worker's
 *                      inbox (net_host), output out through a sink the daemon wires to the front
 *   net_udp_host       the ENet host on the front's loop, its peers, its outbox
 *   net_agones, net_ops, net_daemon, main.c
 *                      collided: the Agones SDK client, the ops HTTP port (/metrics, /healthz,
 *                      /rooms), the front (listeners, admission, hand-off, signals, drain)
 *
 * Two data paths (docs/architecture.md): an intent comes in through net_conn -> the client's
 * transport (feed) -> net_session_message -> a handler -> world; a snapshot goes out from net_tick
 * -> net_snapshot (the view's mirror) -> net_server_append_with (the transport's frame_prefix,
 * the output limits) -> net_conn's write. */
#ifndef COLLIDE_NET_INTERNAL_H
#define COLLIDE_NET_INTERNAL_H

#include "collide.pb-c.h"
#include "collide_assert.h"
#include "journal.h"
#include "net_buf.h"
#include "net_metrics.h"
#include "net_transport.h"
#include "world.h"

/* The registry's types, named and not included: this header sits below net_server.h, so the
 * registry can include its own private declarations without an arrow back up. */
typedef struct net_server net_server;
typedef struct net_client net_client;
typedef struct net_grant net_grant;

typedef Collide__V1__ClientMessage net_client_msg;
typedef Collide__V1__ServerMessage net_server_msg;

#define NET_ERR(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name

/* Appends one framed ServerMessage to c's output. False when c is (now) being killed: over the
 * hard limit, or out of memory. */
bool net_server_append(net_server *srv, net_client *c, const net_server_msg *m);
/* True when c is over the hard output limit, and from now on killed for it. */
bool net_server_over_hard_limit(net_server *srv, net_client *c);
/* Appends bytes already framed for the client's transport (net_ws.c: the 101 or an HTTP refusal,
 * a pong, a close frame), under the same hard limit. */
/* Writes the framing of a body of len bytes for c's transport (net_transport.h: the varint
 * prefix, a binary WebSocket frame's header), counts the frame, and returns its length (at most
 * NET_MAX_FRAME_PREFIX). */
size_t net_client_frame_prefix(net_server *srv, const net_client *c, size_t len,
                               uint8_t out[NET_MAX_FRAME_PREFIX]);
bool net_server_append_raw(net_server *srv, net_client *c, const void *data, size_t len);
/* net_server_append_raw for bytes whose size the daemon bounds itself (a page the WebSocket port
 * serves, at most the largest compiled in): not held to --max-queued-bytes, which a page larger
 * than the limit would otherwise cross at once, cutting every such request as a slow reader. */
bool net_server_append_page(net_server *srv, net_client *c, const void *data, size_t len);
/* Writes a message body of exactly size bytes at out (net_server_append_with). */
typedef void (*net_msg_write)(const void *ctx, uint8_t *out, size_t size);
/* Appends one message of size bytes, written in place by write(ctx, ...), behind the framing of
 * c's transport (net_client_frame_prefix): what net_server_append does for a ServerMessage, for
 * a body encoded by hand (the snapshot writer's). Marks c dirty; false when c is (now) being
 * killed: over the hard limit, or out of memory. */
bool net_server_append_with(net_server *srv, net_client *c, size_t size, net_msg_write write,
                            const void *ctx);
/* Appends Error{code, message, fatal}; a fatal one makes c CLOSING. */
void net_server_send_error(net_server *srv, net_client *c, uint32_t request_id,
                           Collide__V1__ErrorCode code, bool fatal, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* CLOSING for reason: nothing more is read; closed once its output is flushed. */
void net_server_enter_closing(net_server *srv, net_client *c, net_disconnect_reason reason);
/* The Hello-time admission of an authenticated client: true when it is welcomed (no longer
 * pending, counted against --max-clients). False when refused: Error{LIMIT_EXCEEDED, fatal} is
 * queued (or it is killed while NET_MAX_REFUSING others are being refused) and nothing more is to
 * be done for it. Every reason to refuse a Hello for capacity belongs here. */
bool net_server_admit_session(net_server *srv, net_client *c, uint32_t request_id);
/* A client welcomed without net_server_admit_session (placed in its room by the front, which
 * counted it in the directory): no longer pending, counted as welcomed here. Idempotent. */
void net_server_mark_welcomed(net_server *srv, net_client *c);
/* At Hello: refuses c when the server is at capacity (overloaded): Error{LIMIT_EXCEEDED, fatal}
 * "at capacity" to request rid, counted and logged (at most a line a second). True when refused:
 * the Hello goes no further. */
bool net_server_refuse_hello_at_capacity(net_server *srv, net_client *c, uint32_t rid);
/* The refusal itself: counted, logged at most once a second (event=capacity_refused), and a fatal
 * LIMIT_EXCEEDED "at capacity" (also the front's, when the directory finds the room's thread
 * overloaded). */
void net_server_refuse_at_capacity(net_server *srv, net_client *c, uint32_t rid);
/* Drops ids of bodies that are gone (despawned by an admin) so the count is of live bodies. */
void net_client_prune_owned(net_server *srv, net_client *c);

static inline vec2 net_vec2_of(const Collide__V1__Vec2 *v) {
    return v ? v2(v->x, v->y) : v2(0.0f, 0.0f);
}

/* ---- The session's requests, split over files (net_session.c dispatches) --------------------- */

#define NET_ERROR_TEXT 128 /* room for any Error.message the request handlers write */

/* net_request.c: a refused world call as a non-fatal Error: its code from the one table, the
 * handler's text. */
void net_request_world_error(net_server *srv, net_client *c, uint32_t rid, world_status st,
                             const char *text);
/* The message rate c is held to (--rate-limit, or --admin-rate-limit for an admin); 0 = none. */
double net_request_message_rate(const net_server *srv, const net_client *c);
/* Converts a wire shape; GEOM_OK or the reason it is refused. */
geom_shape_error net_request_shape(const Collide__V1__Shape *s, geom_shape *out);
/* net_queries.c */
void net_session_ray_cast(net_server *srv, net_client *c, uint32_t rid,
                          const Collide__V1__RayCast *r);
void net_session_overlap(net_server *srv, net_client *c, uint32_t rid,
                         const Collide__V1__OverlapQuery *o);
void net_session_shape_cast(net_server *srv, net_client *c, uint32_t rid,
                            const Collide__V1__ShapeCast *sc);
/* net_queries.c: frees the query buffer the first query made (net_server_destroy). */
void net_queries_free(net_server *srv);
/* net_events.c: queues the last world step's contact and sensor events for the owners of the
 * moving bodies involved and the admins with all_events, until their next snapshot. A client
 * over --max-pending-events is cut (NET_DISC_EVENTS_BACKLOG): events are never dropped. */
void net_events_collect(net_server *srv);
/* net_events.c: frees what net_events_collect made (net_server_destroy). */
void net_events_free(net_server *srv);
/* net_events.c: moves c's waiting events into the Snapshot body s, whole fields, oldest first,
 * while they fit in budget bytes; the rest wait for the next snapshot. */
void net_events_take(net_client *c, net_buf *s, size_t budget);
/* net_session_auth.c: who the Hello in frame is (the tokens, a ticket for room, room_len bytes,
 * already mapped from ""). True with *g filled (and c's name from a ticket's sub) when it may go
 * on; false when it was refused, a fatal Error sent. */
bool net_session_authenticate(net_server *srv, net_client *c, uint32_t rid, const uint8_t *frame,
                              size_t frame_len, const char *room, size_t room_len, net_grant *g);
/* net_session_auth.c: c's name for logs and /rooms: name with every byte that is not printable
 * ASCII, or is '"' or '\\', as '_', cut to fit. */
void net_session_set_name(net_client *c, const char *name);
/* net_session_rooms.c */
void net_session_create_room(net_server *srv, net_client *c, uint32_t rid,
                             const Collide__V1__CreateRoom *cr);
void net_session_close_room(net_server *srv, net_client *c, uint32_t rid,
                            const Collide__V1__CloseRoom *cr);
void net_session_list_rooms(net_server *srv, net_client *c, uint32_t rid);
/* StartRecording (start) and StopRecording of c's room: admins only, NOT_FOUND without
 * --record-dir; answered by RecordingInfo (PROTOCOL.md "Recordings"). */
void net_session_recording(net_server *srv, net_client *c, uint32_t rid, bool start);

static inline Collide__V1__Vec2 net_pb_vec2(vec2 v) {
    Collide__V1__Vec2 r = COLLIDE__V1__VEC2__INIT;
    r.x = v.x;
    r.y = v.y;
    return r;
}

#endif

/* net_session: the protocol v1 state machine (PROTOCOL.md "Session"), free of sockets and of
 * libuv. Bytes in: net_session_feed() splits them into frames, unpacks each ClientMessage, applies
 * it to the world and appends the encoded ServerMessage replies to the client's output buffer.
 * Ticks: net_server_tick() steps the world and appends one Snapshot per client. The I/O layer
 * (net_daemon.c) moves bytes between sockets and these buffers; the fuzz target and the unit tests
 * drive the very same functions with no socket at all.
 *
 * Decisions (see docs/net-design.md):
 *  - A frame that does not unpack as a ClientMessage is BAD_REQUEST, not fatal: the length prefix
 *    kept the stream in sync, so the next frame can still be served. Before Hello it is "anything
 *    else first": UNAUTHENTICATED, fatal.
 *  - Rate limit: a token bucket of rate_limit per second, burst 2 s worth. A message over it is
 *    dropped with a non-fatal RATE_LIMITED. Sustained abuse is fatal (RATE_LIMITED, fatal=true):
 *    drops in NET_ABUSE_SECONDS consecutive seconds, or more than NET_ABUSE_BURSTS bursts' worth of
 *    drops within one second (a flood that would otherwise cost the loop its tick rate).
 *  - Fatal errors set state CLOSING: nothing more is read, the output is flushed, then closed.
 *  - Replies are appended in request order to one output buffer, flushed once per loop iteration.
 */
#ifndef COLLIDE_NET_SESSION_H
#define COLLIDE_NET_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_buf.h"
#include "net_config.h"
#include "net_known.h"
#include "net_metrics.h"
#include "net_view.h"
#include "world.h"

struct ProtobufCAllocator;

#define NET_PROTOCOL_VERSION 1
#define NET_ABUSE_SECONDS 5 /* consecutive seconds with drops before the cut */
#define NET_ABUSE_BURSTS 4  /* drops above this many bursts in one second: cut */
#define NET_CLOSING_TIMEOUT_US                                                                     \
    2000000u                 /* a CLOSING client that does not drain is cut after this             \
                              */
#define NET_MAX_VIEW_BOXES 8 /* more own bodies than this: one enclosing view box */
#define NET_MAX_REFUSING 64  /* refused connections waiting for their Error to flush */

typedef enum net_client_state {
    NET_CLIENT_AWAIT_HELLO = 0, /* connected; only Hello is accepted */
    NET_CLIENT_ACTIVE = 1,      /* welcomed: requests and snapshots */
    NET_CLIENT_CLOSING = 2, /* fatal error or Goodbye queued: flush, then close; input ignored */
} net_client_state;

typedef struct net_rate {
    double tokens;            /* messages still allowed now */
    uint64_t last_us;         /* monotonic time of the last refill */
    uint64_t window_start_us; /* start of the current one-second abuse window */
    uint32_t window_drops;    /* messages dropped in the current window */
    uint32_t abusive_windows; /* consecutive windows (seconds) with drops */
} net_rate;

typedef struct net_client {
    uint32_t id;                  /* Welcome.client_id and owner of its bodies; never 0 */
    net_client_state state;       /* protocol state */
    bool admin;                   /* presented the admin token */
    bool refused;                 /* over max clients: only the LIMIT_EXCEEDED error goes out */
    bool kill;                    /* close now, without flushing (hard limit, timeout, OOM) */
    bool dirty;                   /* in the server's dirty list */
    net_disconnect_reason reason; /* why it is closing, once CLOSING or kill */
    char addr[64];                /* peer "ip:port" for logs */
    char name[48];                /* Hello.name, sanitised, for logs */
    uint64_t connected_us;        /* monotonic accept time (hello timeout) */
    uint64_t closing_us;          /* monotonic time CLOSING was entered */
    net_buf in;                   /* bytes of a partial frame kept across reads */
    net_buf out;                  /* encoded frames not yet handed to the socket */
    size_t inflight;              /* bytes handed to the socket and not yet confirmed written */
    world_body_id *owned;         /* moving bodies it spawned (may hold stale ids, pruned lazily) */
    uint32_t owned_count;         /* entries in owned */
    uint32_t owned_cap;           /* entries allocated */
    bool has_view;                /* SetView box in force instead of the default view */
    aabb view;                    /* the SetView box */
    net_known known;              /* bodies this client was told about */
    uint64_t resume_key;          /* view key of the first body the last snapshot had no room for:
                                     the next one starts there (0: from the start) */
    net_rate rate;                /* token bucket and abuse tracking */
    uint32_t index;               /* position in net_server.clients */
    uint32_t dirty_index;         /* position in net_server.dirty while dirty */
    void *conn;                   /* the I/O layer's connection; NULL in tests */
} net_client;

typedef struct net_server {
    net_config cfg;                      /* settings */
    world *world;                        /* the simulation (borrowed) */
    net_metrics metrics;                 /* counters for /metrics */
    struct ProtobufCAllocator *pb_alloc; /* allocator for __unpack; NULL = malloc (tests count) */
    net_client **clients;                /* every registered connection */
    uint32_t client_count;               /* entries in clients */
    uint32_t client_cap;                 /* entries allocated */
    uint32_t refusing;                   /* registered connections that were refused */
    net_client **dirty;                  /* clients with output to flush or a close to carry out */
    uint32_t dirty_count;                /* entries in dirty (capacity is client_cap) */
    uint32_t next_client_id;             /* next Welcome.client_id */
    uint64_t now_us;                     /* monotonic clock, set by the caller before each call */
    uint64_t wall_us;                    /* wall clock for Pong.server_time_us */
    bool draining;                       /* shutdown started */
    net_view_entry *query;               /* scratch: bodies in one client's view, in key order */
    size_t query_cap;                    /* entries in query (the world's capacity) */
    net_view_marks marks;                /* scratch: the ranks one client's view boxes select */
    uint32_t *removed;                   /* scratch: ids for one snapshot's removed list */
    size_t scratch_cap;                  /* entries in removed */
    uint32_t *deferred;                  /* scratch: bodies before a client's resume_key waiting
                                            for room, as pairs (index in query, index in the
                                            known set being written); 2 * query_cap entries */
    net_known known_next;                /* scratch: a client's known set being rewritten */
    net_buf snap;                        /* scratch: one Snapshot's encoded body */
    net_view_index view;                 /* interest-management grid the views query */
} net_server;

/* cfg is copied; w is borrowed and must outlive the server. NULL when out of memory. */
net_server *net_server_create(const net_config *cfg, world *w);
/* Every client must have been released first. */
void net_server_destroy(net_server *srv);

/* Registers a new connection (zeroed *c). A server at max clients refuses it: the client gets
 * Error{LIMIT_EXCEEDED, fatal} queued and is CLOSING (or kill when too many are being refused).
 * False only when out of memory. */
bool net_client_open(net_server *srv, net_client *c, const char *addr);
/* Unregisters and frees what the client owns; its moving bodies are despawned. Idempotent. */
void net_client_release(net_server *srv, net_client *c);

/* Feeds bytes read from the client's socket. */
void net_session_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len);

/* Steps the world `steps` times (0 allowed), then appends one Snapshot to every welcomed client,
 * applies hello and closing timeouts and the slow-reader limits. */
void net_server_tick(net_server *srv, unsigned steps);
/* Rebuilds the view index and appends a Snapshot to every welcomed client (net_server_tick does
 * this after its steps). */
void net_server_snapshots(net_server *srv);
/* Snapshot for one client; the view index must be current (net_server_snapshots). */
void net_session_snapshot(net_server *srv, net_client *c);

/* Shutdown: Goodbye to every client; each becomes CLOSING. */
void net_server_drain(net_server *srv);

/* Pops the next client needing I/O attention (flush or close); NULL when none. */
net_client *net_server_pop_dirty(net_server *srv);
void net_server_mark_dirty(net_server *srv, net_client *c);

/* Bytes queued for the client: not yet written plus in flight. */
static inline size_t net_client_queued(const net_client *c) { return c->out.len + c->inflight; }

/* Constant-time equality of two byte strings: the time depends on the lengths only, never on
 * where they differ. */
bool net_secret_equal(const char *a, size_t a_len, const char *b, size_t b_len);

/* Token bucket: true when a message may pass at now_us. */
bool net_rate_take(net_rate *r, double rate_per_s, uint64_t now_us);

#endif

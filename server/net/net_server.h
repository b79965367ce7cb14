/* net_server: the registry of connections and everything the I/O layer (net_daemon.c) asks of it,
 * free of sockets and of libuv: clients opened and released, the dirty list of clients needing a
 * flush or a close, output appended in request order under the hard limit, kills with a reason,
 * the clock, the tick (timeouts, world steps, snapshots) and the drain. The daemon calls these
 * functions and never writes a field; the unit tests and the fuzz target drive the same ones.
 *
 * Decisions (see docs/net-design.md):
 *  - Fatal errors set state CLOSING: nothing more is read, the output is flushed, then closed.
 *    A kill (hard limit, timeout, out of memory) closes at once, without flushing.
 *  - Replies are appended in request order to one output buffer, flushed once per loop iteration.
 *  - The hard output limit is enforced where output is appended (Redis-style), not only once a
 *    tick: a client that pipelines requests and never reads cannot grow its buffer past it. */
#ifndef COLLIDE_NET_SERVER_H
#define COLLIDE_NET_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_arena.h"
#include "net_baselines.h"
#include "net_buf.h"
#include "net_config.h"
#include "net_known.h"
#include "net_metrics.h"
#include "net_partial.h"
#include "net_rate.h"
#include "net_rooms.h"
#include "net_transport.h"
#include "quant.h"
#include "world.h"

struct ProtobufCAllocator;

#define NET_PROTOCOL_VERSION 1
#define NET_CLOSING_TIMEOUT_US                                                                     \
    2000000u /* a CLOSING client that does not drain is cut after this                             \
              */
/* A page being served (net_ws.c) may take longer to drain than a session's last words: up to a
 * few hundred KB to a browser on a slow link. */
#define NET_PAGE_TIMEOUT_US 30000000u
/* Acknowledgements a client may bank against snapshots it was sent: a client that acknowledges
 * every snapshot never pays for it, one that stops acknowledging cannot save up a flood. */
#define NET_FREE_ACKS_MAX 64u
#define NET_MAX_VIEW_BOXES 8 /* more own bodies than this: one enclosing view box */
#define NET_MAX_REFUSING 64  /* refused connections waiting for their Error to flush */
#define NET_IP_KEY_BYTES 16  /* a peer IP as IPv6; IPv4 as IPv4-mapped (::ffff:a.b.c.d) */
/* A pending connection younger than this is not evicted to make room under --max-pending(-per-
 * address): its Hello may be in its socket, unread, because the loop accepts a burst of
 * connections in one turn and reads them in the next. Over the cap, the young are trimmed at the
 * first tick after they age past it. */
#define NET_PENDING_GRACE_US 250000u
/* ... unless the pending count reaches this many times the cap: then the oldest goes at once,
 * young or not, so a connection flood cannot grow the pending set without bound. */
#define NET_PENDING_HARD_FACTOR 4u

struct net_pending_addr;
#define NET_OVERLOAD_SLOTS 20 /* the overload window is kept in this many slots of time */
/* At most one event=capacity_refused line per this long: not one per refusal in a storm. */
#define NET_CAPACITY_LOG_US 1000000u

/* What a Hello was granted, decided where it is checked (the front: the tokens, a ticket) and
 * carried with the client to its room by value (front mode). All zeros: a plain player. */
typedef struct net_grant {
    bool admin;          /* admin rights: the admin token, or a ticket's `admin` claim */
    bool room_only;      /* a ticket's: rights in its own room only; CreateRoom, CloseRoom and
                            ListRooms are FORBIDDEN to it (PROTOCOL.md 1.2 "Tickets") */
    uint8_t ticket_key;  /* 0: no ticket; k: a ticket verified under the k-th key (rotation) */
    bool limited;        /* a ticket's `max_bodies` lowers the player's body limit... */
    uint32_t max_bodies; /* ... to this, when below --max-bodies-per-client (never raises it) */
} net_grant;

/* What the front's Hello check hands to the hook that places the client (front mode). */
typedef struct net_hello_request {
    uint32_t request_id; /* the Hello's, for the Welcome or the refusal */
    net_grant grant;     /* the admin token, or what its ticket says */
    const char *name;    /* Hello.name, sanitised (the client's c->name) */
    const char *room;    /* Hello.room as a room name ("" became "default"), room_len bytes */
    size_t room_len;
    uint32_t transport;        /* net_conn_adopt: the socket's transport (net_transport_at), its
                                  handshake done */
    bool all_events;           /* Hello.all_events of an admin */
    uint32_t snapshot_rate_hz; /* Hello.snapshot_rate_hz (0: every tick) */
    bool quantized;            /* Hello.quantized */
} net_hello_request;

/* Front mode: where the hook placed a client (net_client_hand_off), carried to the room's thread
 * with its socket. The room is named by id, never by pointer (docs/rooms-design.md). */
typedef struct net_hello_placement {
    uint64_t room_id;                 /* the directory's id of the room */
    uint32_t thread;                  /* the worker that owns it */
    uint32_t request_id;              /* the Hello's, for the Welcome */
    net_grant grant;                  /* the admin token, or what its ticket says */
    char room[NET_ROOM_NAME_MAX + 1]; /* the room's name, for Welcome.room */
    uint32_t transport; /* its transport's id (net_transport_at): the room keeps the framing */
    bool all_events;    /* Hello.all_events of an admin */
    uint32_t snapshot_rate_hz; /* Hello.snapshot_rate_hz, for the room's snapshots */
    bool quantized;            /* Hello.quantized */
} net_hello_placement;

/* The rooms an admin manages (CreateRoom, CloseRoom, ListRooms: PROTOCOL.md "Rooms"): the
 * daemon's directory, reached from the admin's room thread through these calls. Each returns an
 * ErrorCode of PROTOCOL.md (0: done) and, on failure, the reason in err. A server without it
 * (unit tests, a single world) answers such messages BAD_REQUEST. */
typedef struct net_room_admin {
    int (*create)(void *ctx, const char *name, size_t len, const char *world, size_t world_len,
                  uint32_t max_clients, net_room_info *out, char *err, size_t err_size);
    int (*close)(void *ctx, const char *name, size_t len, const char *reason, net_room_info *out,
                 char *err, size_t err_size);
    /* Rooms in the directory, `default` first; writes at most max, returns how many there are. */
    size_t (*list)(void *ctx, net_room_info *out, size_t max);
    void *ctx;
} net_room_admin;

#define NET_RECORD_FILE_MAX 256 /* longest recording file name (net_record.h's naming) + 1 */

/* What RecordingInfo says of a room's recording (PROTOCOL.md "Recordings"). */
typedef struct net_recording_info {
    char file[NET_RECORD_FILE_MAX]; /* the current (or last) file's name in --record-dir; "" none */
    uint64_t start_tick;            /* the tick that file's journal starts at */
    uint64_t bytes;                 /* bytes of that file's journal so far */
    bool active;                    /* recording now (or about to: started at the next step) */
} net_recording_info;

/* A room's recorder as the session sees it (net_record.c installs it). request starts (start) or
 * stops the room's recording for client_id's request rid. True: *out is the answer, now. False:
 * a journal starts only at the end of a step (world.h "World images"), so the answer comes when
 * it has, through net_session_recording_reply. */
typedef struct net_recording_hook {
    bool (*request)(void *ctx, bool start, uint32_t client_id, uint32_t rid,
                    net_recording_info *out);
    void *ctx;
} net_recording_hook;

typedef enum net_client_state {
    NET_CLIENT_AWAIT_HELLO = 0, /* connected; only Hello is accepted */
    NET_CLIENT_ACTIVE = 1,      /* welcomed: requests and snapshots */
    NET_CLIENT_CLOSING = 2, /* fatal error or Goodbye queued: flush, then close; input ignored */
} net_client_state;

/* A client's contact and sensor events, read and written by net_events.c (the session sets
 * all_events at Hello; the registry frees the queue at release). */
typedef struct net_client_events {
    bool all_events;      /* an admin that asked for every event (Hello.all_events) */
    net_buf events;       /* its events not yet sent: Snapshot.contacts/sensor_events fields,
                           * encoded, waiting for its next snapshot */
    uint32_t event_count; /* events in `events` (--max-pending-events) */
} net_client_events;

/* A client's admission, read and written by the registry alone (net_server.c): the pending
 * lists (--max-pending, --max-pending-per-address) until its Hello, then refused or welcomed. */
typedef struct net_client_admission {
    bool pending;  /* not yet past Hello: in the pending lists (--max-pending) */
    bool refused;  /* Hello over max clients: only its LIMIT_EXCEEDED goes out */
    bool admitted; /* welcomed: counts against --max-clients until released */
    struct net_client *pending_prev, *pending_next; /* all pending clients, oldest first */
    struct net_client *addr_prev, *addr_next;       /* pending clients of its IP, oldest first */
    struct net_pending_addr *pending_addr;          /* its IP's entry while pending */
} net_client_admission;

/* A client's snapshot state, read and written by net_snapshot.c alone (the session sets the rate
 * and form at Hello; the registry frees it at release). */
typedef struct net_client_snapshot {
    net_known known;     /* bodies this client was told about */
    uint64_t resume_key; /* view key of the first body the last snapshot had no room for: the next
                            one starts there (0: from the start) */
    /* The statics part of `known` (its first known_statics entries) as of the last snapshot that
     * walked the statics in view: made with these view boxes against the statics grid of that
     * build (net_view_index.statics_gen). Settled: it held exactly the statics in view, so while
     * the boxes and the grid stay the same the next snapshots skip the statics (net_snapshot.c). */
    aabb statics_boxes[NET_MAX_VIEW_BOXES]; /* the view boxes of that snapshot */
    uint32_t statics_box_count;             /* entries in statics_boxes */
    uint32_t known_statics;                 /* entries of known that are statics */
    uint64_t statics_gen;                   /* statics_gen of the grid that snapshot read */
    bool statics_settled;                   /* known's statics were exactly the statics in view */
    /* Snapshot rate and form (PROTOCOL.md "Snapshot rate and quantized snapshots"). */
    uint32_t snapshot_rate_hz;   /* Hello.snapshot_rate_hz as asked (0: every tick) */
    uint32_t snapshot_every;     /* granted: one snapshot every this many ticks (0 counts as 1) */
    uint64_t next_snapshot_tick; /* its next snapshot goes out at the first tick >= this */
    bool quantized;              /* Hello.quantized: Snapshot.packed instead of bodies */
    uint64_t acked_tick; /* the newest snapshot tick it acknowledged (SnapshotAck; 0: none) */
    uint64_t sent_us;    /* the server clock when its last snapshot was queued (0: none yet) */
    uint32_t free_acks;  /* SnapshotAcks still free of the rate limits: one per snapshot sent
                            (PROTOCOL.md "Datagrams"), at most NET_FREE_ACKS_MAX banked */
    quant_state *qknown; /* quantized: the state last sent of each body in `known`, same index */
    uint32_t qknown_cap; /* entries allocated in qknown */
    net_baselines baselines; /* datagram transport: its states after its last snapshots (its
                                known set and qknown stay empty) */
} net_client_snapshot;

typedef struct net_client {
    const net_transport *transport; /* how its messages are carried (net_transport.h); set before
                                       net_client_open (NULL there: the table's first, TCP) */
    void *transport_state;          /* the transport's own (its open makes it, release frees it) */
    /* The I/O layer's writer of this client when it is not a net_conn socket (net_conn_flush
     * calls it for each dirty client popped): a UDP peer's (net_udp_host.c). NULL: net_conn's. */
    void (*io_flush)(struct net_client *c);
    /* The I/O layer's look into the kernel: asks the socket which of the bytes it took the peer
     * has not yet acknowledged and sets kernel_since_us from that (net_conn.c: SIOCOUTQ). The
     * sweep calls it only once kernel_since_us is past --max-snapshot-lag-ms. NULL: no kernel
     * queue is tracked (UDP, the unit tests' fake I/O). */
    void (*io_kernel_refresh)(struct net_client *c);
    /* Monotonic queue time of the oldest byte the kernel took and the peer has not acknowledged,
     * as last known (it only gets younger between refreshes); 0: none. */
    uint64_t kernel_since_us;
    uint32_t id;                    /* Welcome.client_id and owner of its bodies; never 0 */
    net_client_state state;         /* protocol state */
    bool admin;                     /* presented the admin token, or a ticket's admin claim */
    bool admin_room_only;           /* admin by ticket: of its room only (net_session_rooms.c) */
    uint8_t ticket_key;             /* came with a ticket, under this key (1, 2); 0: none */
    uint32_t max_bodies;            /* moving bodies it may own as a player: set at Welcome from
                                       --max-bodies-per-client, or a ticket's lower max_bodies */
    net_client_admission admission; /* pending, refused or welcomed (net_server.c) */
    bool kill;                      /* close now, without flushing (net_server_kill) */
    bool handed_off;                /* front mode: placed in a room; its socket moves to a worker */
    net_hello_placement placement;  /* front mode, once handed off: where, for the worker */
    bool dirty;                     /* in the server's dirty list */
    net_disconnect_reason reason;   /* why it is closing, once CLOSING or kill */
    char addr[64];                  /* peer "ip:port" for logs */
    uint8_t ip[NET_IP_KEY_BYTES];   /* peer IP without the port: the per-address key */
    char name[48];                  /* Hello.name, sanitised, for logs */
    uint64_t connected_us;          /* monotonic accept time (hello timeout) */
    uint64_t closing_us;            /* monotonic time CLOSING was entered */
    size_t page_bytes;              /* a page being served (net_server_append_page): its bytes,
                                     * allowed queued beyond --max-queued-bytes while it drains */
    net_buf in;                     /* bytes of a partial frame kept across reads */
    uint64_t in_since_us;           /* monotonic time the partial frame in `in` began */
    size_t in_held;                 /* bytes of `in` counted in the partial-frame budget: its
                                       capacity while it holds a partial frame, else 0 */
    uint64_t in_held_since;         /* in_since_us of the frame counted in in_held */
    struct net_client *partial_prev, *partial_next; /* the server's holders (in_held > 0), in the
                                                       order their frames began: oldest first */
    net_buf out;                 /* encoded frames not yet handed to the socket */
    uint64_t out_since_us;       /* monotonic time the oldest byte in `out` was queued */
    size_t inflight;             /* bytes handed to the socket and not yet confirmed written */
    uint64_t inflight_since_us;  /* monotonic time the oldest in-flight byte was queued */
    bool lag_over;               /* the last tick found it over --max-snapshot-lag-ms */
    world_body_id *owned;        /* moving bodies it spawned (may hold stale ids, pruned lazily) */
    uint32_t owned_count;        /* entries in owned */
    uint32_t owned_cap;          /* entries allocated */
    bool has_view;               /* SetView box in force instead of the default view */
    aabb view;                   /* the SetView box */
    net_rate rate;               /* token bucket and abuse tracking */
    net_client_snapshot snap;    /* its snapshots (net_snapshot.c) */
    uint32_t index;              /* position in net_server.clients; UINT32_MAX: not registered */
    uint32_t dirty_index;        /* position in net_server.dirty while dirty */
    uint32_t out_snapshots;      /* snapshots in out (collide_snapshots_sent_total) */
    uint32_t inflight_snapshots; /* snapshots in the write in flight */
    net_client_events ev;        /* its events (net_events.c) */
} net_client;

/* The overload detector (net_server_note_tick): how long the loop was behind its tick schedule
 * over the last --overload-window-ms, kept per slot of window / NET_OVERLOAD_SLOTS. */
typedef struct net_overload {
    uint64_t behind_us[NET_OVERLOAD_SLOTS]; /* time behind schedule noted in each slot */
    uint64_t slot;                          /* number (now_us / slot length) of the newest slot */
    uint64_t refused_unlogged;              /* refusals since the last capacity_refused line */
    uint64_t last_log_us;                   /* when that line was written (0: never) */
} net_overload;

typedef struct net_server {
    net_config cfg;                      /* settings */
    world *world;                        /* the simulation (borrowed) */
    net_metrics metrics;                 /* counters for /metrics */
    struct ProtobufCAllocator *pb_alloc; /* allocator for __unpack: &arena.pb (tests wrap it) */
    net_arena arena;                     /* every frame is unpacked into it (net_arena.h) */
    net_client **clients;                /* every registered connection */
    uint32_t client_count;               /* entries in clients */
    uint32_t client_cap;                 /* entries allocated */
    uint32_t refusing;                   /* registered connections that were refused */
    uint32_t admitted_count;             /* welcomed clients registered: what --max-clients caps */
    net_client *pending_head;            /* oldest client not yet past Hello (evicted first) */
    net_client *pending_tail;            /* newest such client */
    uint32_t pending_count;              /* clients in that list: what --max-pending caps */
    struct net_pending_addr **pending_buckets; /* pending clients per IP: hash chains */
    uint32_t pending_bucket_count;             /* chains (a power of two; 0 until first use) */
    uint32_t pending_addr_count;               /* IPs with a pending client */
    uint64_t pending_hash_seed;                /* per server: chains an attacker cannot predict */
    net_client **dirty;      /* clients with output to flush or a close to carry out */
    uint32_t dirty_count;    /* entries in dirty (capacity is client_cap) */
    uint32_t next_client_id; /* next Welcome.client_id */
    uint64_t now_us;         /* monotonic clock, set by the caller before each call */
    uint64_t wall_us;        /* wall clock for Pong.server_time_us */
    bool draining;           /* shutdown started */
    /* Front mode (no world: docs/rooms-design.md): a Hello that passes the checks goes to this
     * hook, which places the client in a room (net_client_hand_off) or refuses it. */
    void (*hello_hook)(struct net_server *srv, net_client *c, const net_hello_request *t,
                       void *ctx);
    void *hello_ctx;
    const net_room_admin *room_admin; /* CreateRoom, CloseRoom, ListRooms; NULL: none */
    void *owner; /* the loop owner's (a room's server points at its room); never read here */
    const vec2 *spawn_points;    /* the world file's (borrowed; NULL: none) */
    size_t spawn_point_count;    /* entries in spawn_points */
    size_t next_spawn_point;     /* where the round robin looks first */
    net_overload overload;       /* the overload detector (metrics.overloaded) */
    net_partial_budget *partial; /* --max-partial-bytes: cfg.partial_budget, shared by every server
                                    of the daemon, or own_partial */
    net_partial_budget own_partial; /* a server alone's budget (no shared one given) */
    net_client *partial_head;       /* its client holding a partial frame longest (cut first) */
    net_client *partial_tail;       /* the newest such */
    uint32_t error_index; /* Error.index of the errors sent now: the MoveIntents item being
                             handled (position + 1), 0 outside a batch (net_session.c) */
    /* The layers above keep their per-server state behind these, each type private to the file
     * that works on it; made and freed by net_server_create/destroy (net_tick.c), never read by
     * the registry. */
    struct net_snapshot_writer *snapshot; /* net_snapshot.c: the writer's index and scratch (NULL
                                             without a world) */
    struct net_query_buf *query;     /* net_queries.c: the hits of a query being answered, made by
                                        the first query; NULL until then */
    struct net_events_state *events; /* net_events.c: the event scratch and owner table, made by
                                        the first event; NULL until then */
    /* The room's recording (PROTOCOL.md "Recordings"): every call that changes the world goes
     * through the journaled calls (journal.h) with this journal, NULL while nothing records (the
     * calls are then the plain world calls). Started, rotated and ended by the room's recorder
     * (net_record.c), only ever between steps; never freed here. */
    struct journal *journal;
    /* StartRecording / StopRecording (net_session_rooms.c), answered by the room's recorder
     * (net_record.c); NULL: no recorder (a server without a room: unit tests, the front). */
    const struct net_recording_hook *recording;
} net_server;

/* The registry alone: net_server_create (net_tick.h) makes it and then the state of the layers
 * above. cfg is copied; w is borrowed and must outlive the server. With a world, its query
 * history is set to --history-ms (world_set_history) and its events are turned on. NULL when out
 * of memory. */
net_server *net_server_registry_create(const net_config *cfg, world *w);
/* Frees the registry (net_server_destroy freed the layers' state first). Every client must have
 * been released first. */
void net_server_registry_destroy(net_server *srv);
/* The world file's spawn points, where a moving body spawned without a position is placed
 * (net_session.c). Borrowed: they must outlive the server. count 0 (the default): none, and a
 * spawn without a position is at the origin. */
void net_server_set_spawn_points(net_server *srv, const vec2 *points, size_t count);

/* The clock every following call sees: monotonic now_us, wall clock wall_us (Pong). */
void net_server_set_clock(net_server *srv, uint64_t now_us, uint64_t wall_us);
uint64_t net_server_now_us(const net_server *srv);
const net_config *net_server_config(const net_server *srv);
uint32_t net_server_client_count(const net_server *srv);
/* Registered connections that have not said Hello yet (and are not being killed). */
uint32_t net_server_pending_count(const net_server *srv);
/* The per-address key of an "ip:port" / "[ipv6]:port" string: IPv4 and IPv4-mapped IPv6 give the
 * same key. False (and an all-zero key) when addr holds no IP literal. */
bool net_ip_key(const char *addr, uint8_t key[NET_IP_KEY_BYTES]);

/* Registers a new connection (zeroed *c); addr is "ip:port", "[ipv6]:port" (or anything else: one
 * shared address). It is pending until its Hello. Over --max-pending-per-address pending from its
 * IP, or --max-pending in all, the oldest pending connection (of that IP first) is killed for
 * NET_DISC_PENDING_EVICTED, never the newcomer: at once when it is older than
 * NET_PENDING_GRACE_US or the pending set is at NET_PENDING_HARD_FACTOR x the cap, otherwise by
 * the first tick after it ages past the grace (if it has not said Hello by then). --max-clients is
 * checked at Hello (net_server_admit_session). c->transport (TCP when NULL) makes its state
 * first. False only when out of memory; c is then not registered (release is a no-op). */
bool net_client_open(net_server *srv, net_client *c, const char *addr);
/* The same for a connection another server accepted and counted (a hand-off from the front):
 * not counted again in collide_connections_total. */
bool net_client_open_adopted(net_server *srv, net_client *c, const char *addr);
/* Unregisters and frees what the client owns; a player's moving bodies are despawned, an admin's
 * stay in the world (they belong to it, like statics). Idempotent. */
void net_client_release(net_server *srv, net_client *c);
/* The connection is gone for `reason` (EOF, a socket error): counted under that reason unless
 * the server had already decided to close it (a kill or CLOSING keeps its own), then released. */
void net_client_close(net_server *srv, net_client *c, net_disconnect_reason reason);

/* Closes the client now, without flushing: the I/O layer cuts it at its next flush. The first
 * reason given stands. */
void net_server_kill(net_server *srv, net_client *c, net_disconnect_reason reason);
/* Kills every client, each for the reason it is closing (a drain that ran out of time). */
void net_server_kill_all(net_server *srv);

/* The registry's sweep, once a tick (net_tick_run) or on its own (a server without a world):
 * trims the pending set over its caps, and cuts clients past the hello, frame, snapshot-lag and
 * closing timeouts or over the queued-bytes limit while closing. */
void net_server_sweep(net_server *srv);
/* Counts an ops-port connection the I/O layer closed before answering it. */
void net_server_note_http_close(net_server *srv, net_http_close_reason reason);
/* Counts what the I/O layer measured of one tick callback: the steps it ran and skipped, how late
 * it started against its schedule (lag) and how long its work took; feeds the overload detector.
 *
 * Overload: a tick is behind by lag + work - period when positive (its work ended after the next
 * step was due); each tick's share is capped at a quarter of the window, so one stall alone (a
 * frozen container) never counts as overload. The server is overloaded once the ticks of the last
 * --overload-window-ms were behind for half of it, and clears, with hysteresis, once that falls
 * to a tenth. Uses the clock set before the tick (net_server_set_clock). */
void net_server_note_tick(net_server *srv, uint64_t steps_run, uint64_t skipped_steps,
                          double lag_seconds, double seconds);
/* True while the tick budget is persistently overrun (net_server_note_tick). */
static inline bool net_server_overloaded(const net_server *srv) { return srv->metrics.overloaded; }
/* Front mode: w is NULL in net_server_create, and every Hello that passes the version, token and
 * room-name checks is given to hook instead of being welcomed. */
void net_server_set_hello_hook(net_server *srv,
                               void (*hook)(net_server *srv, net_client *c,
                                            const net_hello_request *t, void *ctx),
                               void *ctx);
/* The hook placed c: nothing more is read from it here; what it sent after its Hello stays in
 * c->in (the worker feeds it to the room), no reply goes out, and its release counts no
 * disconnect. net_client_next_io says NET_IO_HAND_OFF once its output (none) is flushed. */
void net_client_hand_off(net_server *srv, net_client *c, const net_hello_placement *p);
/* Shutdown: Goodbye to every client; each becomes CLOSING. */
void net_server_drain(net_server *srv);
/* Goodbye{reason} to every client, each CLOSING for `why` (a room closed: NET_DISC_ROOM_CLOSED). */
void net_server_goodbye_all(net_server *srv, const char *reason, net_disconnect_reason why);
/* Renders /metrics into out; false when out of memory. */
bool net_server_render_metrics(const net_server *srv, net_buf *out);
/* GET /rooms (net_rooms_render_json): today the one room `default`. false on out of memory. */
bool net_server_render_rooms(const net_server *srv, net_buf *out);

/* ---- The I/O layer's side of one client ---------------------------------------------------- */

/* What a dirty client needs from the I/O layer. */
typedef enum net_io {
    NET_IO_NONE = 0,     /* nothing (yet): wait for the write in flight, or for more output */
    NET_IO_WRITE = 1,    /* output waiting: net_client_take_output, then write it */
    NET_IO_CLOSE = 2,    /* CLOSING and flushed: close once no write is in flight */
    NET_IO_CUT = 3,      /* killed: close now, whatever is in flight */
    NET_IO_HAND_OFF = 4, /* front mode: placed in a room; detach the socket for its worker */
} net_io;

/* Pops the next client needing I/O attention (flush or close); NULL when none. */
net_client *net_server_pop_dirty(net_server *srv);
void net_server_mark_dirty(net_server *srv, net_client *c);
net_io net_client_next_io(const net_client *c);
/* Moves the pending output into `into` (which must be empty: the buffers are swapped, no copy);
 * it counts as in flight until net_client_written. */
void net_client_take_output(net_client *c, net_buf *into);
/* The write of what net_client_take_output gave has completed. */
void net_client_written(net_server *srv, net_client *c);
/* c's read buffer started, grew or stopped holding a partial frame, or holds a newer one
 * (net_client_feed): counted in the daemon-wide budget (--max-partial-bytes). When that grew it
 * over the bound, this server's clients holding a partial frame are cut (NET_DISC_PARTIAL_FRAMES),
 * oldest first, c too when its turn comes, until the budget is back under or this server holds
 * none. Exact oldest-first within a server; across servers (the front, each room, other threads)
 * the server whose read crossed the bound cuts its own (docs/net-design.md, docs/operations.md
 * "Partial frames, all clients"). */
void net_server_partial_changed(net_server *srv, net_client *c);
/* Bytes read from c's socket: counted (bytes_in_total, and its transport's share), then read by
 * its transport, which hands each whole message to the session. */
static inline void net_client_feed(net_server *srv, net_client *c, const uint8_t *data,
                                   size_t len) {
    srv->metrics.bytes_in_total += len;
    srv->metrics.transports[c->transport->id].bytes_in += len;
    c->transport->feed(srv, c, data, len);
    /* The transport grew or emptied c->in: counted once here, after it is done with the buffer,
     * for every transport; the budget's cuts (which free other clients' buffers) happen only
     * here, never under a transport's feet. A handed-off client's bytes are the room's and leave
     * with it at this turn's flush. */
    size_t held = c->in.len > 0 && !c->handed_off ? c->in.cap : 0;
    if (held != c->in_held || (held > 0 && c->in_since_us != c->in_held_since))
        net_server_partial_changed(srv, c);
}
/* Whether bytes read from the client are still wanted (neither killed nor CLOSING). */
static inline bool net_client_accepts_input(const net_client *c) {
    return !c->kill && !c->handed_off &&
           (c->state == NET_CLIENT_AWAIT_HELLO || c->state == NET_CLIENT_ACTIVE);
}
/* Refused at Hello over max clients: its one Error goes out, nothing more is read. */
static inline bool net_client_refused(const net_client *c) { return c->admission.refused; }
static inline net_disconnect_reason net_client_reason(const net_client *c) { return c->reason; }

/* Bytes queued for the client: not yet written plus in flight. */
static inline size_t net_client_queued(const net_client *c) { return c->out.len + c->inflight; }

/* How far behind the client is (--max-snapshot-lag-ms): the age of the oldest byte queued for it
 * that the peer has not yet received: in the kernel's send buffer and unacknowledged
 * (kernel_since_us), in flight or not yet written; 0 when nothing is queued. A reader that stops
 * or reads slower than its output is produced cannot bring this down: a write completes only once
 * the kernel took all of it, and the next one starts with what was queued meanwhile. A reader
 * that keeps up empties its queue every loop iteration. */
static inline uint64_t net_client_lag_us(const net_client *c, uint64_t now_us) {
    uint64_t since = c->inflight > 0  ? c->inflight_since_us
                     : c->out.len > 0 ? c->out_since_us
                                      : now_us;
    /* What the kernel holds was queued before anything we still hold. */
    if (c->kernel_since_us != 0 && c->kernel_since_us < since) since = c->kernel_since_us;
    return now_us > since ? now_us - since : 0;
}

#endif

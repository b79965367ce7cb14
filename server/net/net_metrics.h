/* net_metrics: the counters behind GET /metrics, rendered in Prometheus text format. Plain
 * integers bumped on the loop thread: no locks, no allocation. */
#ifndef COLLIDE_NET_METRICS_H
#define COLLIDE_NET_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "net_buf.h"
#include "net_transport.h"

#define NET_ERROR_CODE_COUNT 14     /* ErrorCode values 0..13 of PROTOCOL.md */
#define NET_TICK_BUCKET_COUNT 17    /* finite buckets of the tick-duration histogram */
#define NET_LAG_BUCKET_COUNT 13     /* finite buckets of the tick-lag histogram */
#define NET_WS_HANDSHAKE_RESULTS 7  /* net_ws_handshake_result values (net_ws.h) */
#define NET_UDP_RTT_BUCKET_COUNT 10 /* finite buckets of the UDP peers' round-trip histogram */

/* One transport's share of the game-connection counters (net_transport.h). */
typedef struct net_transport_counters {
    uint64_t connections; /* of connections_total */
    uint64_t bytes_in;    /* of bytes_in_total (framing included) */
    uint64_t bytes_out;   /* of bytes_out_total (framing included) */
    uint64_t frames_in;   /* of frames_in_total: whole messages received */
    uint64_t frames_out;  /* of frames_out_total */
} net_transport_counters;

typedef enum net_disconnect_reason {
    NET_DISC_CLIENT_CLOSED = 0, /* EOF from the peer */
    NET_DISC_READ_ERROR,        /* a socket error (reset, ...) */
    NET_DISC_WRITE_ERROR,       /* a write failed */
    NET_DISC_FATAL_ERROR,       /* we sent a fatal Error */
    NET_DISC_HELLO_TIMEOUT,     /* no Hello in time */
    NET_DISC_SLOW_CLIENT,       /* output queue over the hard limit */
    NET_DISC_SERVER_FULL,       /* refused at max clients */
    NET_DISC_SHUTDOWN,          /* drained on SIGTERM/SIGINT */
    NET_DISC_OUT_OF_MEMORY,     /* a buffer could not grow */
    NET_DISC_SNAPSHOT_LAG,      /* oldest output not received older than --max-snapshot-lag-ms */
    NET_DISC_FRAME_TIMEOUT,     /* a partial frame held longer than --frame-timeout-ms */
    NET_DISC_PENDING_EVICTED,   /* silent before Hello, evicted for a newer connection */
    NET_DISC_ROOM_CLOSED,       /* its room was closed (CloseRoom, idle) */
    NET_DISC_EVENTS_BACKLOG,    /* more events waiting than --max-pending-events */
    NET_DISC_TIMEOUT,           /* a UDP peer stopped answering (--udp-timeout-ms) */
    NET_DISC_PARTIAL_FRAMES,    /* held the oldest partial frame over --max-partial-bytes */
    NET_DISC_REASON_COUNT
} net_disconnect_reason;

const char *net_disconnect_reason_str(net_disconnect_reason reason);

/* Why the ops port closed a connection before answering it (collide_http_closed_total). */
typedef enum net_http_close_reason {
    NET_HTTP_EVICTED = 0, /* made room for a newcomer at --http-max-connections / -per-address */
    NET_HTTP_TIMEOUT,     /* its request was not whole within --http-timeout-ms */
    NET_HTTP_REFUSED,     /* over a cap while every other slot was being answered */
    NET_HTTP_CLOSE_REASON_COUNT
} net_http_close_reason;

const char *net_http_close_reason_str(net_http_close_reason reason);

/* Why a room's recording was dropped (collide_recordings_dropped_total, net_record.c). */
typedef enum net_record_drop_reason {
    NET_RECORD_DISK_FULL = 0, /* a write failed with ENOSPC or EDQUOT */
    NET_RECORD_WRITE_ERROR,   /* a write failed otherwise (EIO, EFBIG, ...) */
    NET_RECORD_BUFFER_FULL,   /* more bytes waited for the disk than --record-buffer-bytes */
    NET_RECORD_OPEN_FAILED,   /* its file could not be created (or the journal not started) */
    NET_RECORD_DROP_REASON_COUNT
} net_record_drop_reason;

const char *net_record_drop_reason_str(net_record_drop_reason reason);

typedef struct net_metrics {
    uint64_t ticks_total;                              /* world steps run */
    uint64_t ticks_skipped_total;                      /* steps dropped by the bounded catch-up */
    uint64_t tick_buckets[NET_TICK_BUCKET_COUNT];      /* non-cumulative counts per bucket */
    uint64_t tick_count;                               /* observations (tick callbacks) */
    double tick_sum_seconds;                           /* sum of observed durations */
    uint64_t connections_total;                        /* accepted connections */
    uint64_t disconnects_total[NET_DISC_REASON_COUNT]; /* closes by reason */
    uint64_t frames_in_total;                          /* whole frames received */
    uint64_t frames_out_total;                         /* frames appended for sending */
    uint64_t bytes_in_total;                           /* bytes read from game sockets */
    uint64_t bytes_out_total;                          /* bytes written to game sockets */
    uint64_t errors_total[NET_ERROR_CODE_COUNT];       /* Error messages sent, by code */
    uint64_t slow_client_drops_total;                  /* snapshots skipped for slow readers */
    uint64_t empty_snapshots_held_total;               /* empty ones held (--empty-snapshot-ms) */
    uint64_t events_total;                  /* contact/sensor events queued, one per recipient */
    uint64_t slow_client_disconnects_total; /* slow readers cut at the hard limit */
    uint64_t http_closed_total[NET_HTTP_CLOSE_REASON_COUNT]; /* ops connections cut unanswered */
    uint64_t steps_late_total;      /* steps run by a tick callback that found more than one due */
    uint64_t steps_coalesced_total; /* of those, steps that got no snapshot of their own */
    uint64_t lag_buckets[NET_LAG_BUCKET_COUNT]; /* tick lag: non-cumulative counts per bucket */
    uint64_t lag_count;                         /* observations (tick callbacks) */
    double lag_sum_seconds;                     /* sum of observed lags */
    uint64_t snapshots_sent_total;              /* snapshots the kernel took (a completed write) */
    uint64_t capacity_refusals_total;        /* Hellos refused because the tick budget is overrun */
    uint64_t quantized_records_copied_total; /* quantized change records copied from another
                                                client's with the same baseline */
    uint64_t quantized_records_encoded_total; /* quantized change records encoded */
    bool overloaded;                          /* the overload detector's state (net_server.c) */
    /* Each transport's share of the counters above, by net_transport id: rendered as
     * collide_transport_*{transport=name}, their own families (see the rooms' note). */
    net_transport_counters transports[NET_TRANSPORT_MAX];
    uint64_t ws_handshakes_total[NET_WS_HANDSHAKE_RESULTS]; /* by net_ws_handshake_result: net_ws.c
                                                               renders them */
    /* The UDP peers as ENet measures them, sampled by the front (net_udp_host.c); net_udp.c
     * renders them. */
    uint64_t udp_rtt_buckets[NET_UDP_RTT_BUCKET_COUNT]; /* round-trip samples per bucket */
    uint64_t udp_rtt_count;                             /* samples */
    double udp_rtt_sum_seconds;                         /* their sum */
    uint64_t udp_packets_lost_total;  /* reliable packets ENet resent for lack of an ack */
    uint64_t udp_relay_dropped_total; /* packets a room thread's inbox had no room for */
    /* Recordings (net_record.c): a room's are its own; the sums are the daemon's. */
    uint64_t record_bytes_total; /* journal bytes written to --record-dir */
    uint64_t recordings_dropped_total[NET_RECORD_DROP_REASON_COUNT]; /* by reason */
    uint32_t recordings_active; /* a gauge: 1 while the room records (a sum: rooms recording) */
} net_metrics;

/* Upper bounds (seconds) of the finite tick-duration buckets. */
extern const double net_tick_bucket_bounds[NET_TICK_BUCKET_COUNT];

/* Upper bounds (seconds) of the finite tick-lag buckets. */
extern const double net_lag_bucket_bounds[NET_LAG_BUCKET_COUNT];

void net_metrics_observe_tick(net_metrics *m, double seconds);
/* One tick callback's lag: how long after its scheduled time it started. */
void net_metrics_observe_lag(net_metrics *m, double seconds);
/* Upper bounds (seconds) of the finite UDP round-trip buckets. */
extern const double net_udp_rtt_bucket_bounds[NET_UDP_RTT_BUCKET_COUNT];
/* One UDP peer's round-trip time, as ENet last measured it. */
void net_metrics_observe_udp_rtt(net_metrics *m, double seconds);
/* A histogram in the exposition format (cumulative buckets, +Inf, sum, count), for a transport's
 * own families (net_transport.h render_metrics); false on out of memory. */
bool net_metrics_histogram(net_buf *out, const char *name, const char *help, const double *bounds,
                           int n, const uint64_t *buckets, uint64_t count, double sum);

typedef struct net_gauges {
    uint32_t clients;            /* connections open now */
    size_t static_bodies;        /* world statics */
    size_t moving_bodies;        /* world moving bodies */
    uint64_t log_lines_dropped;  /* log lines dropped because stderr was not read (net_log) */
    uint64_t body_slots_retired; /* world slots whose id generations ran out */
    uint64_t body_ids_left;      /* spawns the body-id space still allows */
    uint32_t clients_pending;    /* connections open now that have not said Hello */
    size_t history_bytes;        /* memory of the worlds' query history rings (--history-ms) */
    uint64_t history_records;    /* mover states those rings hold (movers x ticks kept) */
    size_t partial_frame_bytes;  /* read buffers holding partial frames, daemon-wide */
    size_t max_partial_bytes;    /* their bound, --max-partial-bytes */
} net_gauges;

/* Appends the Prometheus text exposition; false on out of memory. */
bool net_metrics_render(const net_metrics *m, const net_gauges *g, net_buf *out);

/* Adds every counter and histogram bucket of m into acc (exact: integer sums; the _sum seconds
 * add as doubles); acc->overloaded becomes true when either is. */
void net_metrics_add(net_metrics *acc, const net_metrics *m);

/* The q-quantile (0..1) of the tick-duration histogram, in seconds, as Prometheus'
 * histogram_quantile reads it: linear interpolation inside the bucket the rank falls in (the
 * first bucket from 0). Past the last finite bound: that bound. 0 with no observation. */
double net_metrics_tick_quantile(const net_metrics *m, double q);

/* ---- Rooms ----------------------------------------------------------------------------------
 * Per-room series are their own families, collide_room_*, rather than a `room` label on the
 * daemon-wide ones: a family that mixed the unlabelled sum with its labelled parts would make
 * every sum() over it count twice (dashboards and tests/integration's metric() helper sum all
 * samples of a name). See docs/operations.md "Rooms". */

#define NET_METRICS_ROOM_LABELS 64     /* rooms labelled by name; the rest sum into `other` */
#define NET_METRICS_ROOM_OTHER "other" /* the label of that sum */
#define NET_ROOMS_JSON_MAX 1000        /* rooms listed by GET /rooms; `truncated` past it */
#define NET_ROOMS_JSON_PLAYERS 1000    /* players listed by GET /rooms; `players_truncated` past */

typedef struct net_room_metrics {
    const char *name;     /* [A-Za-z0-9_.:-]{1,64} (escaped anyway; cut at NET_ROOM_NAME_MAX) */
    const net_metrics *m; /* the room's own counters */
    uint32_t clients;     /* welcomed sessions in the room */
    size_t static_bodies; /* its world's statics */
    size_t moving_bodies; /* its world's moving bodies */
} net_room_metrics;

/* The exposition for a daemon of n rooms: first every daemon-wide series as net_metrics_render
 * writes them, their counters the sum over the rooms plus front (the counters of connections in
 * no room; NULL = none) and g the daemon-wide gauges; then the collide_room_* families. The
 * NET_METRICS_ROOM_LABELS rooms with the most clients (ties: the earlier in rooms[]) get
 * room="<name>"; every other room, and a room named `other` always, sums into room="other"
 * (emitted only when it holds a room). false on out of memory. */
bool net_metrics_render_rooms(const net_room_metrics *rooms, size_t n, const net_metrics *front,
                              const net_gauges *g, net_buf *out);

struct net_room_info;
/* GET /rooms: {"rooms": [{"name", "clients", "bodies", "tick", "auto", "tick_p99_ms"}, ...],
 * "total": n, "truncated": bool}, the first NET_ROOMS_JSON_MAX of rooms[] in their order (the
 * directory's: `default` first, then by name). Bounded: at most NET_ROOMS_JSON_MAX entries of at
 * most ~400 bytes. false on out of memory. */
bool net_rooms_render_json(const struct net_room_info *rooms, size_t n, net_buf *out);

struct net_room_player;
/* GET /rooms' players, appended to out as members of its object (after "truncated"):
 * `"players": [{"room", "id", "name", "admin", "ticket"}, ...], "players_total": total,
 * "players_truncated": bool`, the first NET_ROOMS_JSON_PLAYERS of p[] (n of them listed) in their
 * order. A member of the top-level object, not of each room's, so that a room's fields stay the
 * six PROTOCOL.md lists. Bounded: at most NET_ROOMS_JSON_PLAYERS entries of at most ~500 bytes.
 * false on out of memory. */
bool net_rooms_render_players(const struct net_room_player *p, size_t n, size_t total,
                              net_buf *out);

#endif

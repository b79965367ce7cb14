/* net_config: collided's settings, from environment variables and then command-line flags (a flag
 * wins over its variable). Names and defaults are the interface of ARCHITECTURE.md / iface.md. */
#ifndef COLLIDE_NET_CONFIG_H
#define COLLIDE_NET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_MAX_SECRET 256 /* longest accepted --token / --admin-token / --ticket-key, + 1 */
/* Ticket keys at once: the current one and the one it replaces, so that a rotation needs no
 * downtime (net_ticket.h's NET_TICKET_KEYS_MAX, asserted equal where both are seen). */
#define NET_MAX_TICKET_KEYS 2
#define NET_TICKET_KEY_FILE_MAX 4096 /* a --ticket-key-file longer than this is no key file */

typedef enum net_log_level {
    NET_LOG_DEBUG = 0,
    NET_LOG_INFO = 1,
    NET_LOG_WARN = 2,
    NET_LOG_ERROR = 3,
} net_log_level;

typedef struct net_config {
    char bind[64];              /* IPv4 or IPv6 literal to listen on */
    char http_bind[64];         /* the HTTP listener's address; "" = bind */
    uint16_t port;              /* game port; 0 = any free port */
    uint16_t http_port;         /* metrics/health port; 0 = off */
    char world_path[1024];      /* world file (native JSON or Tiled); "" = the embedded arena */
    char check_world[1024];     /* --check-world: load this file, print it, exit */
    float tick_rate_hz;         /* world steps per second */
    float max_speed;            /* intents are clamped to this */
    float max_angular_speed;    /* turning intents are clamped to this, rad/s */
    char token[NET_MAX_SECRET]; /* clients must present it; empty = none */
    size_t token_len;           /* bytes in token */
    char admin_token[NET_MAX_SECRET]; /* admin clients present it; empty = no admins */
    size_t admin_token_len;           /* bytes in admin_token */
    uint32_t max_clients;             /* welcomed sessions at once (a Hello past it is refused) */
    uint32_t max_pending;             /* connections that have not said Hello yet, at once */
    uint32_t max_pending_per_address; /* of those, from one remote IP (port ignored) */
    net_log_level log_level;          /* lowest level written to stderr */
    uint32_t max_frame;               /* largest frame body accepted or sent */
    uint32_t max_hello_frame;         /* largest frame accepted before Hello (<= max_frame) */
    uint32_t max_bodies_per_client;   /* moving bodies a non-admin client may own */
    uint32_t max_bodies;              /* world capacity, statics included */
    uint32_t admin_reserved_bodies;   /* of max_bodies, slots non-admin spawns may not take */
    float rate_limit;                 /* messages per second per client; burst = 2 s worth */
    float rate_limit_bytes;           /* frame bytes per second per client; burst = 2 s worth */
    size_t max_queued_bytes;          /* hard limit of queued output; soft = a quarter */
    uint32_t hello_timeout_ms;        /* close a connection that has not said Hello by then */
    uint32_t empty_snapshot_ms;      /* least time between empty snapshots to one client (0: all) */
    uint32_t max_snapshot_lag_ms;    /* cut a client whose oldest output not received is older */
    uint32_t frame_timeout_ms;       /* cut a client holding a partial frame longer than this */
    size_t max_partial_bytes;        /* read-buffer bytes held for partial frames, daemon-wide;
                                        past it the oldest holder is cut (net_partial.h) */
    float view_radius;               /* default view: boxes of this half size around own bodies */
    float max_view_extent;           /* widest and tallest view box a non-admin may have */
    uint32_t http_max_connections;   /* concurrent /metrics and /healthz connections */
    uint32_t http_max_per_address;   /* of those, from one remote address */
    uint32_t http_timeout_ms;        /* an HTTP request must arrive whole within this */
    uint32_t drain_timeout_ms;       /* on SIGTERM, clients not drained by then are cut */
    size_t log_buffer_bytes;         /* log lines waiting for stderr; more are dropped, counted */
    uint32_t overload_window_ms;     /* overload detector's sliding window; 0 = never refuse */
    uint32_t threads;                /* worker threads owning rooms; 0 = one per core */
    uint32_t max_rooms;              /* rooms besides `default` */
    bool room_auto_create;           /* an unknown Hello.room is created from the default world */
    uint32_t room_idle_ms;           /* an auto room without clients closes after this */
    char world_dir[1024];            /* worlds CreateRoom may name; "" = none (only the default) */
    float admin_rate_limit;          /* messages per second per admin; 0 = unbounded */
    bool agones;                     /* speak the Agones SDK (default: AGONES_SDK_HTTP_PORT set) */
    uint32_t agones_health_ms;       /* Agones Health period */
    uint16_t ws_port;                /* WebSocket port (--bind's address); 0 = off */
    char ws_origins[1024];           /* Origins a WebSocket upgrade may come from; "" = any */
    bool viewer;                     /* serve the viewer (GET /) and play page (GET /play) */
    uint32_t max_query_results;      /* most hits one QueryResult carries */
    uint32_t history_ms;             /* how far back a query's at_tick may rewind; 0 = now only */
    uint32_t query_work_per_message; /* a query's work (world_query_result.work) worth one
                                      * message of the rate limits; 0 = every query one */
    uint32_t max_pending_events;     /* contact/sensor events waiting for one client's next
                                      * snapshot; past it the client is cut (events_backlog) */
    float position_quantum;          /* quantized snapshots: world units per position step */
    float velocity_quantum;          /* quantized snapshots: units/s per velocity step */
    uint16_t udp_port;               /* the ENet (UDP) port; 0 = off */
    char udp_bind[64];               /* its IPv4 address; "" = bind (IPv4 only: libenet 1.3) */
    uint32_t udp_timeout_ms;     /* a UDP peer silent this long is dropped (enet_peer_timeout) */
    uint32_t udp_relay_bytes;    /* UDP packets relayed to one room thread, not yet handled, in
                                  * bytes: past it a sequenced packet is dropped, a reliable one
                                  * cuts its peer */
    uint32_t udp_baselines;      /* datagram clients: snapshots whose state is kept per
                                  * client as a possible baseline (net_baselines.h) */
    uint32_t udp_snapshot_bytes; /* datagram clients: most bytes of one snapshot
                                  * ServerMessage (--max-frame caps it) */
    uint32_t udp_bandwidth;      /* the UDP host's outgoing bytes per second, shared by ENet
                                  * among its peers (0 = no cap) */
    /* Tickets (PROTOCOL.md 1.2): the keys are secrets, like the tokens above (net_config_wipe). */
    char ticket_keys[NET_MAX_TICKET_KEYS][NET_MAX_SECRET]; /* HS256 keys, raw bytes, NUL-ended;
                                                            * the first is the current one */
    size_t ticket_key_lens[NET_MAX_TICKET_KEYS];           /* bytes in each key */
    uint32_t ticket_key_count;  /* keys set (--ticket-key, --ticket-key-file): 0 = tickets off */
    char ticket_key_file[1024]; /* --ticket-key-file, read by net_config_parse; "" = none */
    bool ticket_required;       /* players must present a ticket; --token admits none */
    uint32_t ticket_leeway_s;   /* clock skew allowed on a ticket's exp, nbf and iat */
    uint32_t ticket_max_bytes;  /* a longer token that is no token of ours is refused unread */
    /* Recordings (PROTOCOL.md 1.2 "Recordings", net_record.h, docs/operations.md). */
    char record_dir[1024];      /* rooms' journals are written here; "" = recordings off */
    bool record_rooms;          /* --record-rooms all (true): every room records from its start;
                                   none: only after an admin's StartRecording */
    uint32_t record_hash_every; /* a state hash in the journal every this many ticks; 0 = none */
    size_t record_max_bytes;    /* a room's file is finished past this and a new one begun */
    uint32_t record_keep;       /* files kept per room; older ones are deleted (>= 1) */
    size_t record_buffer_bytes; /* journal bytes waiting for the disk, per room; past it the
                                   recording is dropped (a disk slower than the room) */
    bool record_http;           /* serve --record-dir on the ops port: GET /recordings[/NAME] */
    /* Not a flag: the one budget every server of the process counts against (the daemon's,
     * net_daemon.c; copied with the rest into each server's cfg). NULL: each server has its own,
     * of max_partial_bytes (unit tests, the fuzz target). */
    struct net_partial_budget *partial_budget;
} net_config;

void net_config_default(net_config *cfg);

typedef enum net_config_result {
    NET_CONFIG_OK = 0,      /* run the daemon */
    NET_CONFIG_EXIT_OK = 1, /* --help or --version was printed: exit 0 */
    NET_CONFIG_ERROR = 2,   /* a bad flag or value: err holds the reason, exit 2 */
} net_config_result;

/* Applies the COLLIDE_* environment variables (env may be NULL: getenv is used) and then argv.
 * --help and --version print to `out`. */
net_config_result net_config_parse(net_config *cfg, int argc, char **argv, char *err,
                                   size_t err_size, void *out /* FILE* */);

const char *net_log_level_str(net_log_level level);

/* Clears the secrets (--token, --admin-token, the ticket keys) from this copy of the settings with
 * explicit_bzero, which the compiler may not drop: called where a copy's life ends (the main's,
 * the daemon's, every server's at destroy), so that no key outlives its use in memory. */
void net_config_wipe(net_config *cfg);
/* For main() alone, once net_config_parse has read them: overwrites the values of the secret flags
 * in argv (so /proc/PID/cmdline and ps show x's) and of their variables in the environment (wiped
 * in place, then unset: /proc/PID/environ shows the original block). argv and environ must be the
 * process's own, writable strings. */
void net_config_hide_secrets(int argc, char **argv);

/* The ticks a query may rewind: floor(history_ms * tick_rate / 1000) (PROTOCOL.md). */
uint32_t net_config_history_ticks(const net_config *cfg);

#endif

#include "net_config.h"

#include "world.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef COLLIDE_VERSION
#define COLLIDE_VERSION "unknown"
#endif

void net_config_default(net_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->bind, sizeof cfg->bind, "0.0.0.0");
    cfg->port = 7777;
    cfg->http_port = 9100;
    cfg->tick_rate_hz = 60.0f;
    cfg->max_speed = 10000.0f;
    cfg->max_angular_speed = WORLD_DEFAULT_MAX_ANGULAR_SPEED;
    cfg->max_clients = 1500;
    cfg->max_pending = 256;
    cfg->max_pending_per_address = 64;
    cfg->log_level = NET_LOG_INFO;
    cfg->max_frame = 65536;
    cfg->max_hello_frame = 1024;
    cfg->max_bodies_per_client = 8;
    cfg->max_bodies = 65536;
    cfg->admin_reserved_bodies = 1024;
    cfg->threads = 0;
    cfg->max_rooms = 1024;
    cfg->room_auto_create = true;
    cfg->room_idle_ms = 60000;
    cfg->admin_rate_limit = 0.0f;
    cfg->agones_health_ms = 2000;
    cfg->rate_limit = 200.0f;
    cfg->rate_limit_bytes = 65536.0f;
    cfg->max_queued_bytes = 1048576;
    cfg->hello_timeout_ms = 2000;
    cfg->max_snapshot_lag_ms = 2000;
    cfg->max_pending_events = 65536;
    cfg->frame_timeout_ms = 10000;
    /* 64 MiB: 1,024 frames of the default --max-frame at once, far more than honest clients
     * ever hold (a frame is partial for a round trip at most), while 10,000 attackers holding a
     * 64 KiB frame each would otherwise pin 640 MiB. */
    cfg->max_partial_bytes = 64u * 1024u * 1024u;
    cfg->view_radius = 80.0f;
    cfg->max_view_extent = 1000.0f;
    cfg->http_max_connections = 32;
    cfg->http_max_per_address = 16;
    cfg->http_timeout_ms = 2000;
    cfg->drain_timeout_ms = 3000;
    cfg->log_buffer_bytes = 1048576;
    cfg->overload_window_ms = 2000;
    cfg->ws_port = 7778;
    cfg->viewer = true;
    cfg->max_query_results = 256;
    cfg->query_work_per_message = 4096;
    cfg->history_ms = 500;
    cfg->position_quantum = 1.0f / 256.0f;
    cfg->velocity_quantum = 1.0f / 64.0f;
    cfg->udp_port = 7779;
    cfg->udp_timeout_ms = 5000;
    cfg->udp_relay_bytes = 8u * 1024u * 1024u;
    cfg->udp_baselines = 32;
    cfg->udp_snapshot_bytes = 1100; /* a 1280-byte path MTU, less IPv6, UDP and ENet headers */
    cfg->ticket_leeway_s = 5;
    cfg->ticket_max_bytes = 1024; /* a ticket is a few hundred bytes; --max-hello-frame is 1024 */
    cfg->record_rooms = true;
    cfg->record_hash_every = 60;
    cfg->record_max_bytes = 256u * 1024u * 1024u;
    cfg->record_keep = 8;
    cfg->record_buffer_bytes = 16u * 1024u * 1024u;
}

void net_config_wipe(net_config *cfg) {
    explicit_bzero(cfg->token, sizeof cfg->token);
    explicit_bzero(cfg->admin_token, sizeof cfg->admin_token);
    explicit_bzero(cfg->ticket_keys, sizeof cfg->ticket_keys);
    cfg->token_len = cfg->admin_token_len = 0;
    memset(cfg->ticket_key_lens, 0, sizeof cfg->ticket_key_lens);
    cfg->ticket_key_count = 0;
}

const char *net_log_level_str(net_log_level level) {
    switch (level) {
    case NET_LOG_DEBUG:
        return "debug";
    case NET_LOG_INFO:
        return "info";
    case NET_LOG_WARN:
        return "warn";
    case NET_LOG_ERROR:
        return "error";
    }
    return "info";
}

typedef enum opt_kind {
    OPT_STRING,
    OPT_SECRET,
    OPT_PORT,
    OPT_U32,
    OPT_SIZE,
    OPT_FLOAT,
    OPT_LEVEL,
    OPT_BOOL,
    OPT_ALL_NONE, /* all|none into a bool (all: true) */
    OPT_KEY       /* a ticket key: given up to NET_MAX_TICKET_KEYS times, each adds one */
} opt_kind;

typedef struct opt_def {
    const char *flag;  /* without the leading "--" */
    const char *env;   /* environment variable */
    opt_kind kind;     /* how the value is parsed */
    size_t offset;     /* field in net_config */
    size_t len_offset; /* OPT_SECRET: its length field */
    double min, max;   /* accepted range for numbers */
    const char *help;  /* one line for --help */
} opt_def;

#define F(field) offsetof(net_config, field)
static const opt_def opts[] = {
    {"bind", "COLLIDE_BIND", OPT_STRING, F(bind), 0, 0, 0,
     "ADDR  IPv4 or IPv6 address to listen on (default 0.0.0.0)"},
    {"port", "COLLIDE_PORT", OPT_PORT, F(port), 0, 0, 65535,
     "N  game port, 0 = any free port (default 7777)"},
    {"http-bind", "COLLIDE_HTTP_BIND", OPT_STRING, F(http_bind), 0, 0, 0,
     "ADDR  address of the /metrics and /healthz listener (default: the --bind address)"},
    {"http-port", "COLLIDE_HTTP_PORT", OPT_PORT, F(http_port), 0, 0, 65535,
     "N  /metrics and /healthz port, 0 = off (default 9100)"},
    {"world", "COLLIDE_WORLD", OPT_STRING, F(world_path), 0, 0, 0,
     "FILE  world file: native JSON, or a Tiled map (.tmx, .tmj) (default: the embedded arena)"},
    {"check-world", NULL, OPT_STRING, F(check_world), 0, 0, 0,
     "FILE  load a world file of any format, print what it holds (bounds, statics by shape, "
     "spawn points, gravity, warnings) and exit: 0 if it loads, 1 with the place and reason if "
     "not"},
    {"tick-rate", "COLLIDE_TICK_RATE", OPT_FLOAT, F(tick_rate_hz), 0, 1, 1000,
     "HZ  simulation ticks per second (default 60)"},
    {"max-speed", "COLLIDE_MAX_SPEED", OPT_FLOAT, F(max_speed), 0, 1e-3, 1e7,
     "UNITS_PER_S  intents are clamped to it (default 10000)"},
    {"max-angular-speed", "COLLIDE_MAX_ANGULAR_SPEED", OPT_FLOAT, F(max_angular_speed), 0, 1e-3,
     1e4, "RAD_PER_S  turning intents are clamped to it (default 25.1327 = 8 pi)"},
    {"token", "COLLIDE_TOKEN", OPT_SECRET, F(token), F(token_len), 0, 0,
     "SECRET  clients must present it in Hello (default none)"},
    {"admin-token", "COLLIDE_ADMIN_TOKEN", OPT_SECRET, F(admin_token), F(admin_token_len), 0, 0,
     "SECRET  makes a client an admin (default none: no admins)"},
    {"max-clients", "COLLIDE_MAX_CLIENTS", OPT_U32, F(max_clients), 0, 1, 1000000,
     "N  welcomed sessions at once; a Hello past it is refused (default 1500; measure yours: "
     "docs/operations.md)"},
    {"max-pending", "COLLIDE_MAX_PENDING", OPT_U32, F(max_pending), 0, 1, 1000000,
     "N  connections that have not said Hello; at the cap a newcomer evicts the oldest (default "
     "256)"},
    {"max-pending-per-address", "COLLIDE_MAX_PENDING_PER_ADDRESS", OPT_U32,
     F(max_pending_per_address), 0, 1, 1000000,
     "N  of those, from one remote IP; at the cap a newcomer evicts that IP's oldest (default 64)"},
    {"log-level", "COLLIDE_LOG_LEVEL", OPT_LEVEL, F(log_level), 0, 0, 0,
     "LEVEL  debug, info, warn or error (default info)"},
    {"max-frame", "COLLIDE_MAX_FRAME", OPT_U32, F(max_frame), 0, 256, 16777216,
     "BYTES  largest frame accepted or sent (default 65536)"},
    {"max-hello-frame", "COLLIDE_MAX_HELLO_FRAME", OPT_U32, F(max_hello_frame), 0, 64, 16777216,
     "BYTES  largest frame accepted before Hello; --max-frame caps it (default 1024)"},
    {"max-bodies-per-client", "COLLIDE_MAX_BODIES_PER_CLIENT", OPT_U32, F(max_bodies_per_client), 0,
     0, 1000000, "N  moving bodies per non-admin client (default 8)"},
    {"max-bodies", "COLLIDE_MAX_BODIES", OPT_U32, F(max_bodies), 0, 1, 16777216,
     "N  world capacity, statics included (default 65536)"},
    {"admin-reserved-bodies", "COLLIDE_ADMIN_RESERVED_BODIES", OPT_U32, F(admin_reserved_bodies), 0,
     0, 16777216,
     "N  world slots players may not fill, kept for admins' spawns; at most half of --max-bodies "
     "(default 1024)"},
    {"rate-limit", "COLLIDE_RATE_LIMIT", OPT_FLOAT, F(rate_limit), 0, 1, 1e7,
     "MSGS_PER_S  per-client token bucket, burst 2 s worth (default 200)"},
    {"rate-limit-bytes", "COLLIDE_RATE_LIMIT_BYTES", OPT_FLOAT, F(rate_limit_bytes), 0, 64, 1e10,
     "BYTES_PER_S  per-client token bucket of frame bytes, burst 2 s worth or one --max-frame "
     "frame if larger (default 65536)"},
    {"max-queued-bytes", "COLLIDE_MAX_QUEUED_BYTES", OPT_SIZE, F(max_queued_bytes), 0, 4096,
     1073741824.0,
     "BYTES  output queued per client before disconnect; snapshots dropped past a quarter (default "
     "1048576)"},
    {"hello-timeout-ms", "COLLIDE_HELLO_TIMEOUT_MS", OPT_U32, F(hello_timeout_ms), 0, 1, 3600000,
     "MS  time allowed before Hello (default 2000)"},
    {"empty-snapshot-ms", "COLLIDE_EMPTY_SNAPSHOT_MS", OPT_U32, F(empty_snapshot_ms), 0, 0, 60000,
     "MS  an empty snapshot (nothing new, changed, removed, no events) goes to a client only when "
     "it had no snapshot for this long, a heartbeat; 0 sends every one, PROTOCOL.md rule 6 "
     "(default 0; 1000 is issue 32's proposal)"},
    {"max-snapshot-lag-ms", "COLLIDE_MAX_SNAPSHOT_LAG_MS", OPT_U32, F(max_snapshot_lag_ms), 0, 1,
     3600000,
     "MS  a client whose oldest output not yet received (here or in the kernel) is older than this "
     "is cut (default 2000)"},
    {"max-pending-events", "COLLIDE_MAX_PENDING_EVENTS", OPT_U32, F(max_pending_events), 0, 1,
     100000000,
     "N  contact/sensor events waiting for one client's next snapshot; past it the client is cut, "
     "events are never dropped (default 65536)"},
    {"frame-timeout-ms", "COLLIDE_FRAME_TIMEOUT_MS", OPT_U32, F(frame_timeout_ms), 0, 1, 3600000,
     "MS  a frame begun must arrive whole within this (default 10000)"},
    {"max-partial-bytes", "COLLIDE_MAX_PARTIAL_BYTES", OPT_SIZE, F(max_partial_bytes), 0, 4096,
     17179869184.0,
     "BYTES  read buffers holding frames begun but not yet whole, all clients together; past it "
     "the client holding the oldest is cut (default 67108864)"},
    {"view-radius", "COLLIDE_VIEW_RADIUS", OPT_FLOAT, F(view_radius), 0, 0, 1e7,
     "UNITS  default view half size around own bodies (default 80)"},
    {"max-view-extent", "COLLIDE_MAX_VIEW_EXTENT", OPT_FLOAT, F(max_view_extent), 0, 1, 1e9,
     "UNITS  widest or tallest view a non-admin may set (SetView; default 1000)"},
    {"http-max-connections", "COLLIDE_HTTP_MAX_CONNECTIONS", OPT_U32, F(http_max_connections), 0, 1,
     100000,
     "N  concurrent /metrics and /healthz connections; at the cap a newcomer evicts the oldest "
     "that has not sent its request (default 32)"},
    {"http-max-per-address", "COLLIDE_HTTP_MAX_PER_ADDRESS", OPT_U32, F(http_max_per_address), 0, 1,
     100000, "N  of those, from one remote address (default 16)"},
    {"http-timeout-ms", "COLLIDE_HTTP_TIMEOUT_MS", OPT_U32, F(http_timeout_ms), 0, 1, 3600000,
     "MS  an HTTP request must arrive whole within this (default 2000)"},
    {"drain-timeout-ms", "COLLIDE_DRAIN_TIMEOUT_MS", OPT_U32, F(drain_timeout_ms), 0, 0, 3600000,
     "MS  on SIGTERM, clients not drained by then are cut (default 3000)"},
    {"log-buffer-bytes", "COLLIDE_LOG_BUFFER_BYTES", OPT_SIZE, F(log_buffer_bytes), 0, 4096,
     1073741824.0,
     "BYTES  log lines waiting for a slow stderr reader; past it lines are dropped and counted "
     "(default 1048576)"},
    {"overload-window-ms", "COLLIDE_OVERLOAD_WINDOW_MS", OPT_U32, F(overload_window_ms), 0, 0,
     600000,
     "MS  new Hellos get LIMIT_EXCEEDED \"at capacity\" while the loop spent half of the last MS "
     "behind its tick schedule; 0 = never refuse (default 2000)"},
    {"threads", "COLLIDE_THREADS", OPT_U32, F(threads), 0, 0, 256,
     "N  worker threads that own rooms, 0 = one per core (default: the number of cores)"},
    {"max-rooms", "COLLIDE_MAX_ROOMS", OPT_U32, F(max_rooms), 0, 0, 1000000,
     "N  rooms besides `default` (default 1024)"},
    {"room-auto-create", "COLLIDE_ROOM_AUTO_CREATE", OPT_BOOL, F(room_auto_create), 0, 0, 0,
     "on|off  a Hello naming an unknown room creates it from the default world (default on)"},
    {"room-idle-ms", "COLLIDE_ROOM_IDLE_MS", OPT_U32, F(room_idle_ms), 0, 0, 86400000,
     "MS  a room created on join closes after this long without clients (default 60000)"},
    {"world-dir", "COLLIDE_WORLD_DIR", OPT_STRING, F(world_dir), 0, 0, 0,
     "DIR  world files CreateRoom may name (default none)"},
    {"admin-rate-limit", "COLLIDE_ADMIN_RATE_LIMIT", OPT_FLOAT, F(admin_rate_limit), 0, 0, 1e9,
     "MSGS_PER_S  per-admin token bucket, 0 = none (default 0)"},
    {"agones", "COLLIDE_AGONES", OPT_BOOL, F(agones), 0, 0, 0,
     "[on|off]  speak the Agones SDK to the sidecar on localhost:$AGONES_SDK_HTTP_PORT (default: "
     "on when AGONES_SDK_HTTP_PORT is set)"},
    {"agones-health-ms", "COLLIDE_AGONES_HEALTH_MS", OPT_U32, F(agones_health_ms), 0, 100, 3600000,
     "MS  Agones Health call period (default 2000)"},
    {"ws-port", "COLLIDE_WS_PORT", OPT_PORT, F(ws_port), 0, 0, 65535,
     "N  WebSocket port (path /v1, subprotocol collide.v1) on the --bind address, 0 = off "
     "(default 7778)"},
    {"ws-origins", "COLLIDE_WS_ORIGINS", OPT_STRING, F(ws_origins), 0, 0, 0,
     "LIST  comma list of Origins a WebSocket upgrade may come from, 403 for others; a request "
     "without Origin is accepted (default any)"},
    {"viewer", "COLLIDE_VIEWER", OPT_BOOL, F(viewer), 0, 0, 0,
     "on|off  serve the live viewer (GET /) and the play page, a small game (GET /play), on the "
     "WebSocket port (default on)"},
    {"max-query-results", "COLLIDE_MAX_QUERY_RESULTS", OPT_U32, F(max_query_results), 0, 1, 65536,
     "N  most hits in one QueryResult; more set `truncated` (default 256)"},
    {"query-work-per-message", "COLLIDE_QUERY_WORK_PER_MESSAGE", OPT_U32, F(query_work_per_message),
     0, 0, 1000000000,
     "UNITS  a query costs ceil(its work / UNITS) messages of the rate limits, at least 1; a unit "
     "is 0.3-1 ns of query time; 0 = every query one message (default 4096)"},
    {"history-ms", "COLLIDE_HISTORY_MS", OPT_U32, F(history_ms), 0, 0, 60000,
     "MS  how far back a query's at_tick may rewind the movers, 0 = now only (default 500)"},
    {"position-quantum", "COLLIDE_POSITION_QUANTUM", OPT_FLOAT, F(position_quantum), 0, 1e-6, 1000,
     "UNITS  position step of quantized snapshots (default 0.00390625 = 1/256)"},
    {"velocity-quantum", "COLLIDE_VELOCITY_QUANTUM", OPT_FLOAT, F(velocity_quantum), 0, 1e-6, 1000,
     "UNITS_PER_S  velocity step of quantized snapshots (default 0.015625 = 1/64)"},
    {"udp-port", "COLLIDE_UDP_PORT", OPT_PORT, F(udp_port), 0, 0, 65535,
     "N  UDP port of the ENet transport, 0 = off (default 7779)"},
    {"udp-bind", "COLLIDE_UDP_BIND", OPT_STRING, F(udp_bind), 0, 0, 0,
     "ADDR  IPv4 address of the UDP port (default: the --bind address; :: means 0.0.0.0)"},
    {"udp-timeout-ms", "COLLIDE_UDP_TIMEOUT_MS", OPT_U32, F(udp_timeout_ms), 0, 100, 600000,
     "MS  a UDP peer that stops answering is dropped after this, as a TCP close (default 5000)"},
    {"udp-relay-bytes", "COLLIDE_UDP_RELAY_BYTES", OPT_U32, F(udp_relay_bytes), 0, 65536,
     1073741824,
     "BYTES  UDP packets waiting for one room thread; past it sequenced ones are dropped and a "
     "reliable one cuts its peer (default 8388608)"},
    {"udp-baselines", "COLLIDE_UDP_BASELINES", OPT_U32, F(udp_baselines), 0, 1, 1024,
     "N  snapshots per UDP client kept as baselines for the next ones' deltas (default 32)"},
    {"udp-snapshot-bytes", "COLLIDE_UDP_SNAPSHOT_BYTES", OPT_U32, F(udp_snapshot_bytes), 0, 256,
     65536, "BYTES  most bytes of one UDP snapshot; --max-frame caps it (default 1100)"},
    {"udp-bandwidth", "COLLIDE_UDP_BANDWIDTH", OPT_U32, F(udp_bandwidth), 0, 0, 4294967295u,
     "BYTES_PER_S  the UDP host's outgoing bandwidth, which ENet shares among its peers by "
     "dropping snapshots of those over their share (default 0: no cap)"},
    {"ticket-key", "COLLIDE_TICKET_KEY", OPT_KEY, F(ticket_keys), 0, 0, 0,
     "SECRET  HS256 key of the tickets (JWTs) a game's backend signs for its players; give it "
     "twice (the old key and the new) to rotate keys, either verifies; none = tickets off "
     "(default none)"},
    {"ticket-key-file", "COLLIDE_TICKET_KEY_FILE", OPT_STRING, F(ticket_key_file), 0, 0, 0,
     "PATH  ticket keys from a file (a container's secret): one key per line, up to 2 with "
     "--ticket-key's, line ends stripped, blank lines skipped (default none)"},
    {"ticket-required", "COLLIDE_TICKET_REQUIRED", OPT_BOOL, F(ticket_required), 0, 0, 0,
     "on|off  players must present a ticket; --token admits none, --admin-token still works "
     "(default off)"},
    {"ticket-leeway-s", "COLLIDE_TICKET_LEEWAY_S", OPT_U32, F(ticket_leeway_s), 0, 0, 3600,
     "S  clock skew allowed on a ticket's exp, nbf and iat (default 5)"},
    {"ticket-max-bytes", "COLLIDE_TICKET_MAX_BYTES", OPT_U32, F(ticket_max_bytes), 0, 64, 16384,
     "BYTES  a longer Hello.token that is neither token is refused unread (default 1024)"},
    {"record-dir", "COLLIDE_RECORD_DIR", OPT_STRING, F(record_dir), 0, 0, 0,
     "DIR  write each room's journal (its run, replayable bit for bit) into DIR as "
     "ROOM.SEQ.cjournal; none = recordings off (default none)"},
    {"record-rooms", "COLLIDE_RECORD_ROOMS", OPT_ALL_NONE, F(record_rooms), 0, 0, 0,
     "all|none  every room records from its start, or none until an admin's StartRecording "
     "(default all)"},
    {"record-hash-every", "COLLIDE_RECORD_HASH_EVERY", OPT_U32, F(record_hash_every), 0, 0, 1000000,
     "TICKS  a state hash in the journal every TICKS ticks, 0 = none (default 60)"},
    {"record-max-bytes", "COLLIDE_RECORD_MAX_BYTES", OPT_SIZE, F(record_max_bytes), 0, 65536,
     1099511627776.0,
     "BYTES  a room's file past this is finished and a new one, standing alone, begun (default "
     "268435456)"},
    {"record-keep", "COLLIDE_RECORD_KEEP", OPT_U32, F(record_keep), 0, 1, 1000000,
     "N  files kept per room; the oldest beyond N are deleted (default 8)"},
    {"record-buffer-bytes", "COLLIDE_RECORD_BUFFER_BYTES", OPT_SIZE, F(record_buffer_bytes), 0,
     4096, 1073741824.0,
     "BYTES  a room's journal bytes waiting for the disk; past it the recording is dropped, "
     "never the tick (default 16777216)"},
    {"record-http", "COLLIDE_RECORD_HTTP", OPT_BOOL, F(record_http), 0, 0, 0,
     "on|off  serve --record-dir on the ops port: GET /recordings lists it, GET "
     "/recordings/NAME sends a file (default off)"},
};
#undef F
#define OPT_COUNT (sizeof opts / sizeof opts[0])

/* One more ticket key of len bytes. An empty value adds none (as an empty --token is none). No
 * error quotes the value. */
static bool add_ticket_key(net_config *cfg, const char *value, size_t len, const char *source,
                           char *err, size_t err_size) {
    if (len == 0) return true;
    if (len >= NET_MAX_SECRET) {
        snprintf(err, err_size, "%s: a ticket key longer than %d bytes", source,
                 NET_MAX_SECRET - 1);
        return false;
    }
    if (cfg->ticket_key_count >= NET_MAX_TICKET_KEYS) {
        snprintf(err, err_size,
                 "%s: more than %d ticket keys (the current one and the one it replaces)", source,
                 NET_MAX_TICKET_KEYS);
        return false;
    }
    uint32_t k = cfg->ticket_key_count++;
    memcpy(cfg->ticket_keys[k], value, len);
    cfg->ticket_keys[k][len] = '\0';
    cfg->ticket_key_lens[k] = len;
    return true;
}

static bool apply(net_config *cfg, const opt_def *o, const char *value, const char *source,
                  char *err, size_t err_size) {
    char *base = (char *)cfg;
    char *end = NULL;
    errno = 0;
    switch (o->kind) {
    case OPT_STRING: {
        size_t cap = o->offset == offsetof(net_config, bind)          ? sizeof cfg->bind
                     : o->offset == offsetof(net_config, http_bind)   ? sizeof cfg->http_bind
                     : o->offset == offsetof(net_config, udp_bind)    ? sizeof cfg->udp_bind
                     : o->offset == offsetof(net_config, world_dir)   ? sizeof cfg->world_dir
                     : o->offset == offsetof(net_config, check_world) ? sizeof cfg->check_world
                     : o->offset == offsetof(net_config, ws_origins)  ? sizeof cfg->ws_origins
                     : o->offset == offsetof(net_config, ticket_key_file)
                         ? sizeof cfg->ticket_key_file
                     : o->offset == offsetof(net_config, record_dir) ? sizeof cfg->record_dir
                                                                     : sizeof cfg->world_path;
        if (strlen(value) >= cap) {
            snprintf(err, err_size, "%s: value too long", source);
            return false;
        }
        snprintf(base + o->offset, cap, "%s", value);
        return true;
    }
    case OPT_SECRET: {
        size_t n = strlen(value);
        if (n >= NET_MAX_SECRET) {
            snprintf(err, err_size, "%s: longer than %d bytes", source, NET_MAX_SECRET - 1);
            return false;
        }
        memcpy(base + o->offset, value, n + 1);
        *(size_t *)(base + o->len_offset) = n;
        return true;
    }
    case OPT_KEY:
        return add_ticket_key(cfg, value, strlen(value), source, err, err_size);
    case OPT_LEVEL:
        for (int l = NET_LOG_DEBUG; l <= NET_LOG_ERROR; l++) {
            if (strcmp(value, net_log_level_str((net_log_level)l)) == 0) {
                cfg->log_level = (net_log_level)l;
                return true;
            }
        }
        snprintf(err, err_size, "%s: '%s' is not debug, info, warn or error", source, value);
        return false;
    case OPT_BOOL:
        if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
            *(bool *)(base + o->offset) = value[1] == 'n';
            return true;
        }
        snprintf(err, err_size, "%s: '%s' is not on or off", source, value);
        return false;
    case OPT_ALL_NONE:
        if (strcmp(value, "all") == 0 || strcmp(value, "none") == 0) {
            *(bool *)(base + o->offset) = value[0] == 'a';
            return true;
        }
        snprintf(err, err_size, "%s: '%s' is not all or none", source, value);
        return false;
    case OPT_FLOAT: {
        double v = strtod(value, &end);
        if (end == value || *end || errno || !isfinite(v) || v < o->min || v > o->max) {
            snprintf(err, err_size, "%s: '%s' is not a number in [%g, %g]", source, value, o->min,
                     o->max);
            return false;
        }
        *(float *)(base + o->offset) = (float)v;
        return true;
    }
    case OPT_PORT:
    case OPT_U32:
    case OPT_SIZE: {
        /* strtoull takes "-5" and negates it: refuse a sign; end == value refuses "". */
        unsigned long long v = strtoull(value, &end, 10);
        if (value[0] == '-' || end == value || *end || errno || (double)v < o->min ||
            (double)v > o->max) {
            snprintf(err, err_size, "%s: '%s' is not a whole number in [%.0f, %.0f]", source, value,
                     o->min, o->max);
            return false;
        }
        if (o->kind == OPT_PORT)
            *(uint16_t *)(base + o->offset) = (uint16_t)v;
        else if (o->kind == OPT_U32)
            *(uint32_t *)(base + o->offset) = (uint32_t)v;
        else
            *(size_t *)(base + o->offset) = (size_t)v;
        return true;
    }
    }
    return false;
}

static void print_help(FILE *out) {
    fprintf(out, "usage: collided [flags]\n"
                 "Authoritative 2D collision daemon speaking collide protocol v1.\n"
                 "Each flag also reads an environment variable; the flag wins.\n\n");
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const char *space = strchr(opts[i].help, ' ');
        int arg_len = space ? (int)(space - opts[i].help) : 0;
        char left[64];
        snprintf(left, sizeof left, "--%s %.*s", opts[i].flag, arg_len, opts[i].help);
        if (opts[i].env)
            fprintf(out, "  %-32s %s [%s]\n", left, space ? space + 2 : "", opts[i].env);
        else /* a one-off command (--check-world): no environment variable */
            fprintf(out, "  %-32s %s\n", left, space ? space + 2 : "");
    }
    fprintf(out, "  %-32s %s\n  %-32s %s\n", "--help", "print this and exit", "--version",
            "print the version and exit");
}

static void drop_ticket_keys(net_config *cfg) {
    explicit_bzero(cfg->ticket_keys, sizeof cfg->ticket_keys);
    memset(cfg->ticket_key_lens, 0, sizeof cfg->ticket_key_lens);
    cfg->ticket_key_count = 0;
}

/* The keys of one --ticket-key-file's text (n bytes): one per line, each line's bytes as they are
 * but for its end ("\n" or "\r\n"; the last line's is optional); blank lines are skipped. */
static bool add_file_keys(net_config *cfg, const char *text, size_t n, char *err, size_t err_size) {
    size_t line = 0;
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(text + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - text) : n, len = end - at;
        line++;
        if (len > 0 && text[at + len - 1] == '\r') len--;
        char where[64];
        snprintf(where, sizeof where, "--ticket-key-file line %zu", line);
        if (memchr(text + at, '\0', len)) {
            snprintf(err, err_size, "%s: a NUL byte in a key", where);
            return false;
        }
        if (!add_ticket_key(cfg, text + at, len, where, err, err_size)) return false;
        at = end + 1;
    }
    return true;
}

/* --ticket-key-file: read with read(2), not stdio, so that no library buffer keeps a copy; the
 * text is wiped once its keys are taken. Errors name the file, never a byte of it. */
static bool read_key_file(net_config *cfg, char *err, size_t err_size) {
    const char *path = cfg->ticket_key_file;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "--ticket-key-file %s: %s", path, strerror(errno));
        return false;
    }
    char text[NET_TICKET_KEY_FILE_MAX + 1];
    size_t n = 0;
    ssize_t got = 1;
    while (n < sizeof text && (got = read(fd, text + n, sizeof text - n)) != 0) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        n += (size_t)got;
    }
    int read_errno = errno;
    close(fd);
    bool ok = false;
    uint32_t before = cfg->ticket_key_count;
    if (got < 0)
        snprintf(err, err_size, "--ticket-key-file %s: %s", path, strerror(read_errno));
    else if (n > NET_TICKET_KEY_FILE_MAX)
        snprintf(err, err_size, "--ticket-key-file %s: longer than %d bytes", path,
                 NET_TICKET_KEY_FILE_MAX);
    else if (add_file_keys(cfg, text, n, err, err_size)) { /* else err names the line */
        ok = cfg->ticket_key_count > before;
        if (!ok) snprintf(err, err_size, "--ticket-key-file %s: no key in it", path);
    }
    explicit_bzero(text, sizeof text);
    return ok;
}

/* What holds only once every flag is read: the key file's keys, and --ticket-required's need of
 * a key. */
static bool finish_tickets(net_config *cfg, char *err, size_t err_size) {
    if (cfg->ticket_key_file[0] && !read_key_file(cfg, err, err_size)) return false;
    if (cfg->ticket_required && cfg->ticket_key_count == 0) {
        snprintf(err, err_size,
                 "--ticket-required on needs a ticket key (--ticket-key or --ticket-key-file)");
        return false;
    }
    return true;
}

net_config_result net_config_parse(net_config *cfg, int argc, char **argv, char *err,
                                   size_t err_size, void *out_file) {
    FILE *out = out_file ? (FILE *)out_file : stdout;
    char source[128];
    /* The keys come from this parse alone: the environment's, replaced by the flags' if any
     * (each --ticket-key adds one), then the key file's. */
    drop_ticket_keys(cfg);
    bool flag_keys = false;
    /* In an Agones pod the sidecar's port is set: the SDK is on unless COLLIDE_AGONES or
     * --agones says otherwise. */
    if (getenv("AGONES_SDK_HTTP_PORT")) cfg->agones = true;
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const char *v = opts[i].env ? getenv(opts[i].env) : NULL;
        if (!v) continue;
        snprintf(source, sizeof source, "%s", opts[i].env);
        if (!apply(cfg, &opts[i], v, source, err, err_size)) return NET_CONFIG_ERROR;
    }
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_help(out);
            return NET_CONFIG_EXIT_OK;
        }
        if (strcmp(arg, "--version") == 0) {
            fprintf(out, "collided %s (protocol 1)\n", COLLIDE_VERSION);
            return NET_CONFIG_EXIT_OK;
        }
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, err_size, "unexpected argument '%s' (see --help)", arg);
            return NET_CONFIG_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_def *o = NULL;
        for (size_t i = 0; i < OPT_COUNT; i++) {
            if (strlen(opts[i].flag) == name_len && strncmp(opts[i].flag, name, name_len) == 0)
                o = &opts[i];
        }
        if (!o) {
            snprintf(err, err_size, "unknown flag '%.*s' (see --help)", (int)(name_len + 2), arg);
            return NET_CONFIG_ERROR;
        }
        const char *value = eq ? eq + 1 : NULL;
        /* An on/off flag alone means on (`--agones`); a following on or off is its value. */
        if (!value && o->kind == OPT_BOOL &&
            (a + 1 >= argc || (strcmp(argv[a + 1], "on") != 0 && strcmp(argv[a + 1], "off") != 0)))
            value = "on";
        if (!value) {
            if (a + 1 >= argc) {
                snprintf(err, err_size, "--%s needs a value", o->flag);
                return NET_CONFIG_ERROR;
            }
            value = argv[++a];
        }
        snprintf(source, sizeof source, "--%s", o->flag);
        if (o->kind == OPT_KEY && !flag_keys) {
            drop_ticket_keys(cfg); /* a flag wins over its variable */
            flag_keys = true;
        }
        if (!apply(cfg, o, value, source, err, err_size)) return NET_CONFIG_ERROR;
    }
    return finish_tickets(cfg, err, err_size) ? NET_CONFIG_OK : NET_CONFIG_ERROR;
}

void net_config_hide_secrets(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        const char *name = argv[a];
        if (strncmp(name, "--", 2) != 0) continue;
        name += 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t i = 0; i < OPT_COUNT; i++) {
            const opt_def *o = &opts[i];
            if ((o->kind != OPT_SECRET && o->kind != OPT_KEY) || strlen(o->flag) != name_len ||
                strncmp(o->flag, name, name_len) != 0)
                continue;
            char *value = eq ? argv[a] + 2 + name_len + 1 : (a + 1 < argc ? argv[++a] : NULL);
            if (value) memset(value, 'x', strlen(value));
        }
    }
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (opts[i].kind != OPT_SECRET && opts[i].kind != OPT_KEY) continue;
        char *value = getenv(opts[i].env);
        if (!value) continue;
        explicit_bzero(value, strlen(value));
        unsetenv(opts[i].env);
    }
}

uint32_t net_config_history_ticks(const net_config *cfg) {
    return (uint32_t)floor((double)cfg->history_ms * (double)cfg->tick_rate_hz / 1000.0);
}

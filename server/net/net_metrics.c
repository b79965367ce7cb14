#include "net_metrics.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "collide.pb-c.h"
#include "net_rooms.h"

/* Dense around the figures operators gate on (PERFORMANCE.md: tick p99 <= 4 ms at L1, <= 12 ms at
 * L2, and the 16.7 ms budget of a 60 Hz tick), so a quantile read from the buckets is within about
 * a millisecond there. */
const double net_tick_bucket_bounds[NET_TICK_BUCKET_COUNT] = {
    0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.006,
    0.008,   0.010,  0.012, 0.016,  0.020, 0.033, 0.066, 0.25};

/* From well under a period to seconds: a loop on time shows lags of a millisecond or two (timer
 * granularity); a period or more (16.7 ms at 60 Hz) means steps were run late and coalesced. */
const double net_lag_bucket_bounds[NET_LAG_BUCKET_COUNT] = {
    0.001, 0.002, 0.004, 0.008, 0.016, 0.033, 0.066, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0};

const char *net_disconnect_reason_str(net_disconnect_reason reason) {
    static const char *names[NET_DISC_REASON_COUNT] = {
        "client_closed", "read_error",     "write_error",   "fatal_error",
        "hello_timeout", "slow_client",    "server_full",   "shutdown",
        "out_of_memory", "snapshot_lag",   "frame_timeout", "pending_evicted",
        "room_closed",   "events_backlog", "timeout",       "partial_frames"};
    return (unsigned)reason < NET_DISC_REASON_COUNT ? names[reason] : "unknown";
}

const char *net_http_close_reason_str(net_http_close_reason reason) {
    static const char *names[NET_HTTP_CLOSE_REASON_COUNT] = {"evicted", "timeout", "refused"};
    return (unsigned)reason < NET_HTTP_CLOSE_REASON_COUNT ? names[reason] : "unknown";
}

const char *net_record_drop_reason_str(net_record_drop_reason reason) {
    static const char *names[NET_RECORD_DROP_REASON_COUNT] = {"disk_full", "write_error",
                                                              "buffer_full", "open_failed"};
    return (unsigned)reason < NET_RECORD_DROP_REASON_COUNT ? names[reason] : "unknown";
}

/* One observation into a histogram of n finite buckets (non-cumulative counts), plus +Inf. */
static void observe(const double *bounds, int n, uint64_t *buckets, uint64_t *count, double *sum,
                    double x) {
    (*count)++;
    *sum += x;
    for (int i = 0; i < n; i++) {
        if (x <= bounds[i]) {
            buckets[i]++;
            return;
        }
    }
}

void net_metrics_observe_tick(net_metrics *m, double seconds) {
    observe(net_tick_bucket_bounds, NET_TICK_BUCKET_COUNT, m->tick_buckets, &m->tick_count,
            &m->tick_sum_seconds, seconds);
}

void net_metrics_observe_lag(net_metrics *m, double seconds) {
    observe(net_lag_bucket_bounds, NET_LAG_BUCKET_COUNT, m->lag_buckets, &m->lag_count,
            &m->lag_sum_seconds, seconds);
}

const double net_udp_rtt_bucket_bounds[NET_UDP_RTT_BUCKET_COUNT] = {0.001, 0.005, 0.01, 0.025, 0.05,
                                                                    0.1,   0.25,  0.5,  1.0,   2.5};

void net_metrics_observe_udp_rtt(net_metrics *m, double seconds) {
    observe(net_udp_rtt_bucket_bounds, NET_UDP_RTT_BUCKET_COUNT, m->udp_rtt_buckets,
            &m->udp_rtt_count, &m->udp_rtt_sum_seconds, seconds);
}

static bool put(net_buf *out, const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    return net_buf_append(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static bool counter(net_buf *out, const char *name, const char *help, uint64_t value) {
    return put(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
               (unsigned long long)value);
}

/* A histogram in the exposition format: cumulative buckets, +Inf, sum and count. */
static bool histogram(net_buf *out, const char *name, const char *help, const double *bounds, int n,
                      const uint64_t *buckets, uint64_t count, double sum) {
    bool ok = put(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cumulative = 0;
    for (int i = 0; i < n; i++) {
        cumulative += buckets[i];
        ok &= put(out, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
                  (unsigned long long)cumulative);
    }
    ok &= put(out, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)count);
    ok &= put(out, "%s_sum %.9f\n", name, sum);
    ok &= put(out, "%s_count %llu\n", name, (unsigned long long)count);
    return ok;
}

bool net_metrics_histogram(net_buf *out, const char *name, const char *help, const double *bounds,
                           int n, const uint64_t *buckets, uint64_t count, double sum) {
    return histogram(out, name, help, bounds, n, buckets, count, sum);
}

/* One family split by transport, a line per transport in the table (net_transport.h), whatever
 * the traffic; field: the counter's offset in net_transport_counters. */
static bool transport_counter(net_buf *out, const char *name, const char *help,
                              const net_metrics *m, size_t field) {
    bool ok = put(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (uint32_t id = 0; id < net_transport_count(); id++) {
        uint64_t v;
        memcpy(&v, (const char *)&m->transports[id] + field, sizeof v);
        ok &= put(out, "%s{transport=\"%s\"} %llu\n", name, net_transport_at(id)->name,
                  (unsigned long long)v);
    }
    return ok;
}

static bool render_transports(const net_metrics *m, net_buf *out) {
    bool ok = true;
    ok &= transport_counter(out, "collide_transport_connections_total",
                            "Accepted game connections by transport.", m,
                            offsetof(net_transport_counters, connections));
    ok &= transport_counter(out, "collide_transport_bytes_in_total",
                            "Bytes received on game connections by transport (framing included).",
                            m, offsetof(net_transport_counters, bytes_in));
    ok &= transport_counter(out, "collide_transport_bytes_out_total",
                            "Bytes written to game connections by transport (framing included).", m,
                            offsetof(net_transport_counters, bytes_out));
    ok &= transport_counter(out, "collide_transport_frames_in_total",
                            "Frames (WebSocket: binary messages) received by transport.", m,
                            offsetof(net_transport_counters, frames_in));
    ok &= transport_counter(out, "collide_transport_frames_out_total",
                            "Frames (WebSocket: binary messages) sent by transport.", m,
                            offsetof(net_transport_counters, frames_out));
    for (uint32_t id = 0; id < net_transport_count(); id++) {
        const net_transport *t = net_transport_at(id);
        if (t->render_metrics) ok &= t->render_metrics(m, out);
    }
    return ok;
}

/* The tick: its duration and schedule (late, coalesced and skipped steps, lag), the snapshots
 * it sends, and the overload it reports (refused Hellos). */
static bool render_ticks(const net_metrics *m, net_buf *out) {
    bool ok = true;
    ok &= histogram(out, "collide_tick_duration_seconds",
                    "Time to step the world and build snapshots.", net_tick_bucket_bounds,
                    NET_TICK_BUCKET_COUNT, m->tick_buckets, m->tick_count, m->tick_sum_seconds);
    ok &= counter(out, "collide_ticks_total", "World steps run.", m->ticks_total);
    ok &= counter(out, "collide_ticks_skipped_total", "Steps dropped by the bounded catch-up.",
                  m->ticks_skipped_total);
    ok &= counter(out, "collide_steps_late_total",
                  "Steps run by a tick that found more than one step due (catch-up).",
                  m->steps_late_total);
    ok &= counter(out, "collide_steps_coalesced_total",
                  "Steps run without a snapshot of their own (a catch-up sends one).",
                  m->steps_coalesced_total);
    ok &= histogram(out, "collide_tick_lag_seconds",
                    "How late each tick started against its schedule.", net_lag_bucket_bounds,
                    NET_LAG_BUCKET_COUNT, m->lag_buckets, m->lag_count, m->lag_sum_seconds);
    ok &= counter(out, "collide_snapshots_sent_total",
                  "Snapshots written to game sockets (not those dropped for slow readers).",
                  m->snapshots_sent_total);
    ok &= counter(out, "collide_capacity_refusals_total",
                  "Hellos refused at capacity: the tick budget was persistently overrun.",
                  m->capacity_refusals_total);
    ok &= put(out,
              "# HELP collide_overloaded 1 while the tick budget is persistently overrun (new "
              "Hellos are refused).\n# TYPE collide_overloaded gauge\ncollide_overloaded %d\n",
              m->overloaded ? 1 : 0);
    return ok;
}

/* What the process holds now: connections, bodies, the query history. */
static bool render_population(const net_gauges *g, net_buf *out) {
    bool ok = true;
    ok &= put(out,
              "# HELP collide_clients Connections open.\n# TYPE collide_clients "
              "gauge\ncollide_clients %u\n",
              g->clients);
    ok &= put(out,
              "# HELP collide_clients_pending Connections that have not said Hello yet.\n# TYPE "
              "collide_clients_pending gauge\ncollide_clients_pending %u\n",
              g->clients_pending);
    ok &= put(out,
              "# HELP collide_bodies Bodies in the world.\n# TYPE collide_bodies gauge\n"
              "collide_bodies{kind=\"static\"} %zu\ncollide_bodies{kind=\"moving\"} %zu\n",
              g->static_bodies, g->moving_bodies);
    /* The history's cost, as PROTOCOL.md asks it reported: bytes per mover per tick kept. */
    ok &= put(out,
              "# HELP collide_history_bytes Memory of the query history (--history-ms) in every "
              "room.\n# TYPE collide_history_bytes gauge\ncollide_history_bytes %zu\n",
              g->history_bytes);
    ok &= put(out,
              "# HELP collide_history_bytes_per_mover_tick History memory per mover state it "
              "holds (bytes / (movers x ticks kept)); 0 while it holds none.\n# TYPE "
              "collide_history_bytes_per_mover_tick gauge\ncollide_history_bytes_per_mover_tick "
              "%.3f\n",
              g->history_records ? (double)g->history_bytes / (double)g->history_records : 0.0);
    ok &= put(out,
              "# HELP collide_partial_frame_bytes Read-buffer memory held for frames begun and not "
              "yet whole, all clients.\n# TYPE collide_partial_frame_bytes gauge\n"
              "collide_partial_frame_bytes %zu\n",
              g->partial_frame_bytes);
    ok &= put(out,
              "# HELP collide_max_partial_bytes Its bound (--max-partial-bytes).\n# TYPE "
              "collide_max_partial_bytes gauge\ncollide_max_partial_bytes %zu\n",
              g->max_partial_bytes);
    return ok;
}

/* Game connections: accepted and closed (by reason), frames and bytes, Errors (by code). */
static bool render_connections(const net_metrics *m, net_buf *out) {
    bool ok = true;
    ok &= counter(out, "collide_connections_total", "Accepted game connections.",
                  m->connections_total);
    ok &= put(out, "# HELP collide_disconnects_total Closed game connections by reason.\n# TYPE "
                   "collide_disconnects_total counter\n");
    for (int r = 0; r < NET_DISC_REASON_COUNT; r++) {
        ok &= put(out, "collide_disconnects_total{reason=\"%s\"} %llu\n",
                  net_disconnect_reason_str((net_disconnect_reason)r),
                  (unsigned long long)m->disconnects_total[r]);
    }
    ok &= counter(out, "collide_frames_in_total", "Frames received.", m->frames_in_total);
    ok &= counter(out, "collide_frames_out_total", "Frames sent.", m->frames_out_total);
    ok &= counter(out, "collide_bytes_in_total", "Bytes received on game connections.",
                  m->bytes_in_total);
    ok &= counter(out, "collide_bytes_out_total", "Bytes written to game connections.",
                  m->bytes_out_total);
    ok &= put(out, "# HELP collide_errors_total Error messages sent, by code.\n# TYPE "
                   "collide_errors_total counter\n");
    for (int c = 1; c < NET_ERROR_CODE_COUNT; c++) {
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value(&collide__v1__error_code__descriptor, c);
        const char *name = v ? v->name : "UNKNOWN";
        if (strncmp(name, "ERROR_CODE_", 11) == 0) name += 11;
        ok &= put(out, "collide_errors_total{code=\"%s\"} %llu\n", name,
                  (unsigned long long)m->errors_total[c]);
    }
    return ok;
}

/* The snapshot and event output: slow readers, events queued, quantized records. */
static bool render_output(const net_metrics *m, net_buf *out) {
    bool ok = true;
    ok &= counter(out, "collide_slow_client_drops_total", "Snapshots skipped for slow readers.",
                  m->slow_client_drops_total);
    ok &= counter(out, "collide_empty_snapshots_held_total",
                  "Empty snapshots not sent: the client had one within --empty-snapshot-ms.",
                  m->empty_snapshots_held_total);
    ok &= counter(out, "collide_events_total",
                  "Contact and sensor events queued for clients (one per recipient).",
                  m->events_total);
    ok &= counter(out, "collide_slow_client_disconnects_total",
                  "Slow readers disconnected at the hard limit.", m->slow_client_disconnects_total);
    ok &= counter(out, "collide_quantized_records_copied_total",
                  "Quantized change records copied from another client's with the same baseline.",
                  m->quantized_records_copied_total);
    ok &= counter(out, "collide_quantized_records_encoded_total",
                  "Quantized change records encoded for a baseline not seen yet that tick.",
                  m->quantized_records_encoded_total);
    return ok;
}

/* The ops port's connections closed before they were answered, by reason. */
static bool render_http_closed(const net_metrics *m, net_buf *out) {
    bool ok = true;
    ok &= put(out, "# HELP collide_http_closed_total Ops-port connections closed before they were "
                   "answered, by reason.\n# TYPE collide_http_closed_total counter\n");
    for (int r = 0; r < NET_HTTP_CLOSE_REASON_COUNT; r++) {
        ok &= put(out, "collide_http_closed_total{reason=\"%s\"} %llu\n",
                  net_http_close_reason_str((net_http_close_reason)r),
                  (unsigned long long)m->http_closed_total[r]);
    }
    return ok;
}

/* Recordings (net_record.c): bytes written, rooms recording, recordings dropped by reason. */
static bool render_recordings(const net_metrics *m, net_buf *out) {
    bool ok = counter(out, "collide_record_bytes_total",
                      "Journal bytes written to --record-dir (recordings).", m->record_bytes_total);
    ok &= put(out,
              "# HELP collide_recordings_active Rooms recording now.\n# TYPE "
              "collide_recordings_active gauge\ncollide_recordings_active %u\n",
              m->recordings_active);
    ok &= put(out, "# HELP collide_recordings_dropped_total Recordings dropped (the room kept "
                   "ticking), by reason.\n# TYPE collide_recordings_dropped_total counter\n");
    for (int r = 0; r < NET_RECORD_DROP_REASON_COUNT; r++)
        ok &= put(out, "collide_recordings_dropped_total{reason=\"%s\"} %llu\n",
                  net_record_drop_reason_str((net_record_drop_reason)r),
                  (unsigned long long)m->recordings_dropped_total[r]);
    return ok;
}

/* The process's own limits: log lines lost, body ids used up. */
static bool render_process(const net_gauges *g, net_buf *out) {
    bool ok = true;
    ok &=
        counter(out, "collide_log_lines_dropped_total",
                "Log lines dropped because stderr was not read fast enough.", g->log_lines_dropped);
    ok &= put(out,
              "# HELP collide_body_slots_retired Body slots whose id generations ran out: never "
              "reused.\n# TYPE collide_body_slots_retired gauge\ncollide_body_slots_retired %llu\n",
              (unsigned long long)g->body_slots_retired);
    ok &= put(out,
              "# HELP collide_body_ids_left Spawns the body-id space still allows in this "
              "process.\n# TYPE collide_body_ids_left gauge\ncollide_body_ids_left %llu\n",
              (unsigned long long)g->body_ids_left);
    return ok;
}

bool net_metrics_render(const net_metrics *m, const net_gauges *g, net_buf *out) {
    bool ok = true;
    ok &= render_ticks(m, out);
    ok &= render_population(g, out);
    ok &= render_connections(m, out);
    ok &= render_output(m, out);
    ok &= render_http_closed(m, out);
    ok &= render_transports(m, out);
    ok &= render_recordings(m, out);
    ok &= render_process(g, out);
    return ok;
}

void net_metrics_add(net_metrics *acc, const net_metrics *m) {
    acc->ticks_total += m->ticks_total;
    acc->ticks_skipped_total += m->ticks_skipped_total;
    for (int i = 0; i < NET_TICK_BUCKET_COUNT; i++)
        acc->tick_buckets[i] += m->tick_buckets[i];
    acc->tick_count += m->tick_count;
    acc->tick_sum_seconds += m->tick_sum_seconds;
    acc->connections_total += m->connections_total;
    for (int i = 0; i < NET_DISC_REASON_COUNT; i++)
        acc->disconnects_total[i] += m->disconnects_total[i];
    acc->frames_in_total += m->frames_in_total;
    acc->frames_out_total += m->frames_out_total;
    acc->bytes_in_total += m->bytes_in_total;
    acc->bytes_out_total += m->bytes_out_total;
    for (int i = 0; i < NET_ERROR_CODE_COUNT; i++)
        acc->errors_total[i] += m->errors_total[i];
    acc->slow_client_drops_total += m->slow_client_drops_total;
    acc->empty_snapshots_held_total += m->empty_snapshots_held_total;
    acc->events_total += m->events_total;
    acc->slow_client_disconnects_total += m->slow_client_disconnects_total;
    for (int i = 0; i < NET_HTTP_CLOSE_REASON_COUNT; i++)
        acc->http_closed_total[i] += m->http_closed_total[i];
    acc->steps_late_total += m->steps_late_total;
    acc->steps_coalesced_total += m->steps_coalesced_total;
    for (int i = 0; i < NET_LAG_BUCKET_COUNT; i++)
        acc->lag_buckets[i] += m->lag_buckets[i];
    acc->lag_count += m->lag_count;
    acc->lag_sum_seconds += m->lag_sum_seconds;
    acc->snapshots_sent_total += m->snapshots_sent_total;
    acc->capacity_refusals_total += m->capacity_refusals_total;
    acc->quantized_records_copied_total += m->quantized_records_copied_total;
    acc->quantized_records_encoded_total += m->quantized_records_encoded_total;
    acc->overloaded = acc->overloaded || m->overloaded;
    for (int t = 0; t < NET_TRANSPORT_MAX; t++) {
        acc->transports[t].connections += m->transports[t].connections;
        acc->transports[t].bytes_in += m->transports[t].bytes_in;
        acc->transports[t].bytes_out += m->transports[t].bytes_out;
        acc->transports[t].frames_in += m->transports[t].frames_in;
        acc->transports[t].frames_out += m->transports[t].frames_out;
    }
    for (int i = 0; i < NET_WS_HANDSHAKE_RESULTS; i++)
        acc->ws_handshakes_total[i] += m->ws_handshakes_total[i];
    for (int i = 0; i < NET_UDP_RTT_BUCKET_COUNT; i++)
        acc->udp_rtt_buckets[i] += m->udp_rtt_buckets[i];
    acc->udp_rtt_count += m->udp_rtt_count;
    acc->udp_rtt_sum_seconds += m->udp_rtt_sum_seconds;
    acc->udp_packets_lost_total += m->udp_packets_lost_total;
    acc->udp_relay_dropped_total += m->udp_relay_dropped_total;
    acc->record_bytes_total += m->record_bytes_total;
    for (int i = 0; i < NET_RECORD_DROP_REASON_COUNT; i++)
        acc->recordings_dropped_total[i] += m->recordings_dropped_total[i];
    acc->recordings_active += m->recordings_active;
}

double net_metrics_tick_quantile(const net_metrics *m, double q) {
    if (m->tick_count == 0) return 0.0;
    double rank = q * (double)m->tick_count;
    uint64_t below = 0; /* observations in the buckets before i */
    for (int i = 0; i < NET_TICK_BUCKET_COUNT; i++) {
        uint64_t in = m->tick_buckets[i];
        if (in > 0 && (double)(below + in) >= rank) {
            double lower = i > 0 ? net_tick_bucket_bounds[i - 1] : 0.0;
            double upper = net_tick_bucket_bounds[i];
            double within = (rank - (double)below) / (double)in;
            if (within < 0) within = 0;
            return lower + (upper - lower) * within;
        }
        below += in;
    }
    return net_tick_bucket_bounds[NET_TICK_BUCKET_COUNT - 1];
}

/* A room name as a Prometheus label value: \, " and newline escaped, at most NET_ROOM_NAME_MAX
 * bytes of it (valid names need none of this; a bad one must still not break the exposition). */
static void label_value(const char *name, char *out, size_t size) {
    size_t o = 0;
    for (size_t i = 0; name[i] && i < NET_ROOM_NAME_MAX && o + 3 < size; i++) {
        char ch = name[i];
        if (ch == '\\' || ch == '"' || ch == '\n') {
            out[o++] = '\\';
            ch = ch == '\n' ? 'n' : ch;
        }
        out[o++] = ch;
    }
    out[o] = '\0';
}

/* A row of the collide_room_* families: one room, or the `other` sum. */
typedef struct room_row {
    char label[2 * NET_ROOM_NAME_MAX + 1]; /* escaped */
    const net_metrics *m;
    uint32_t clients;
    size_t static_bodies, moving_bodies;
} room_row;

/* The longest sample line: "collide_room_tick_duration_seconds_bucket{room=\"" (48) + 128 label
 * bytes + "\",le=\"0.00025\"} " (17) + 20 digits + "\n" = 214 < put()'s 256. */

static bool room_counter(net_buf *out, const char *name, const char *help, const room_row *rows,
                         size_t nrows, size_t field) {
    bool ok = put(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (size_t r = 0; r < nrows; r++) {
        uint64_t v;
        memcpy(&v, (const char *)rows[r].m + field, sizeof v);
        ok &= put(out, "%s{room=\"%s\"} %llu\n", name, rows[r].label, (unsigned long long)v);
    }
    return ok;
}

static bool room_histogram(net_buf *out, const char *name, const char *help, const room_row *rows,
                           size_t nrows, bool lag) {
    bool ok = put(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    int nb = lag ? NET_LAG_BUCKET_COUNT : NET_TICK_BUCKET_COUNT;
    const double *bounds = lag ? net_lag_bucket_bounds : net_tick_bucket_bounds;
    for (size_t r = 0; r < nrows; r++) {
        const net_metrics *m = rows[r].m;
        const uint64_t *buckets = lag ? m->lag_buckets : m->tick_buckets;
        uint64_t count = lag ? m->lag_count : m->tick_count;
        double sum = lag ? m->lag_sum_seconds : m->tick_sum_seconds;
        uint64_t cumulative = 0;
        for (int i = 0; i < nb; i++) {
            cumulative += buckets[i];
            ok &= put(out, "%s_bucket{room=\"%s\",le=\"%g\"} %llu\n", name, rows[r].label,
                      bounds[i], (unsigned long long)cumulative);
        }
        ok &= put(out, "%s_bucket{room=\"%s\",le=\"+Inf\"} %llu\n", name, rows[r].label,
                  (unsigned long long)count);
        ok &= put(out, "%s_sum{room=\"%s\"} %.9f\n", name, rows[r].label, sum);
        ok &= put(out, "%s_count{room=\"%s\"} %llu\n", name, rows[r].label,
                  (unsigned long long)count);
    }
    return ok;
}

bool net_metrics_render_rooms(const net_room_metrics *rooms, size_t n, const net_metrics *front,
                              const net_gauges *g, net_buf *out) {
    net_metrics total = {0};
    if (front) net_metrics_add(&total, front);
    for (size_t i = 0; i < n; i++)
        net_metrics_add(&total, rooms[i].m);
    bool ok = net_metrics_render(&total, g, out);

    /* The labelled rooms: the top NET_METRICS_ROOM_LABELS by clients, kept sorted (most first,
     * ties by index) by insertion; no allocation, O(n x 64). */
    size_t top[NET_METRICS_ROOM_LABELS];
    size_t ntop = 0;
    for (size_t i = 0; i < n; i++) {
        /* A room named `other` would collide with the sum's label: it always joins the sum. */
        if (strcmp(rooms[i].name, NET_METRICS_ROOM_OTHER) == 0) continue;
        if (ntop == NET_METRICS_ROOM_LABELS && rooms[i].clients <= rooms[top[ntop - 1]].clients)
            continue;
        size_t at = ntop < NET_METRICS_ROOM_LABELS ? ntop++ : ntop - 1;
        while (at > 0 && rooms[top[at - 1]].clients < rooms[i].clients) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = i;
    }
    room_row rows[NET_METRICS_ROOM_LABELS + 1]; /* about 10 KiB */
    for (size_t r = 0; r < ntop; r++) {
        const net_room_metrics *rm = &rooms[top[r]];
        label_value(rm->name, rows[r].label, sizeof rows[r].label);
        rows[r].m = rm->m;
        rows[r].clients = rm->clients;
        rows[r].static_bodies = rm->static_bodies;
        rows[r].moving_bodies = rm->moving_bodies;
    }
    size_t nrows = ntop;
    net_metrics other = {0};
    if (n > ntop) {
        /* Everyone not in top: sort a copy of top by index and walk both. */
        size_t labelled[NET_METRICS_ROOM_LABELS];
        memcpy(labelled, top, ntop * sizeof top[0]);
        for (size_t a = 1; a < ntop; a++)
            for (size_t b = a; b > 0 && labelled[b - 1] > labelled[b]; b--) {
                size_t t = labelled[b];
                labelled[b] = labelled[b - 1];
                labelled[b - 1] = t;
            }
        room_row *o = &rows[nrows++];
        memset(o, 0, sizeof *o);
        label_value(NET_METRICS_ROOM_OTHER, o->label, sizeof o->label);
        o->m = &other;
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
            if (j < ntop && labelled[j] == i) {
                j++;
                continue;
            }
            net_metrics_add(&other, rooms[i].m);
            o->clients += rooms[i].clients;
            o->static_bodies += rooms[i].static_bodies;
            o->moving_bodies += rooms[i].moving_bodies;
        }
    }

    ok &= room_histogram(out, "collide_room_tick_duration_seconds",
                         "Time to step the room's world and build its snapshots.", rows, nrows,
                         false);
    ok &= room_histogram(out, "collide_room_tick_lag_seconds",
                         "How late each of the room's ticks started against its schedule.", rows,
                         nrows, true);
    ok &= room_counter(out, "collide_room_ticks_total", "World steps run in the room.", rows, nrows,
                       offsetof(net_metrics, ticks_total));
    ok &= room_counter(out, "collide_room_ticks_skipped_total",
                       "Steps of the room dropped by the bounded catch-up.", rows, nrows,
                       offsetof(net_metrics, ticks_skipped_total));
    ok &= room_counter(out, "collide_room_steps_late_total",
                       "Steps of the room run by a tick that found more than one due.", rows, nrows,
                       offsetof(net_metrics, steps_late_total));
    ok &= room_counter(out, "collide_room_steps_coalesced_total",
                       "Steps of the room run without a snapshot of their own.", rows, nrows,
                       offsetof(net_metrics, steps_coalesced_total));
    ok &= room_counter(out, "collide_room_snapshots_sent_total",
                       "Snapshots of the room written to game sockets.", rows, nrows,
                       offsetof(net_metrics, snapshots_sent_total));
    ok &= put(out, "# HELP collide_room_clients Sessions welcomed into the room.\n"
                   "# TYPE collide_room_clients gauge\n");
    for (size_t r = 0; r < nrows; r++)
        ok &= put(out, "collide_room_clients{room=\"%s\"} %u\n", rows[r].label, rows[r].clients);
    ok &= put(out, "# HELP collide_room_bodies Bodies in the room's world.\n"
                   "# TYPE collide_room_bodies gauge\n");
    for (size_t r = 0; r < nrows; r++)
        ok &= put(out,
                  "collide_room_bodies{room=\"%s\",kind=\"static\"} %zu\n"
                  "collide_room_bodies{room=\"%s\",kind=\"moving\"} %zu\n",
                  rows[r].label, rows[r].static_bodies, rows[r].label, rows[r].moving_bodies);
    return ok;
}

/* A room name as a JSON string body: ", \ and control bytes escaped, at most NET_ROOM_NAME_MAX
 * bytes of it. */
static void json_string(const char *name, char *out, size_t size) {
    size_t o = 0;
    for (size_t i = 0; name[i] && i < NET_ROOM_NAME_MAX && o + 7 < size; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, size - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = '\0';
}

bool net_rooms_render_json(const net_room_info *rooms, size_t n, net_buf *out) {
    bool ok = put(out, "{\"rooms\": [");
    size_t shown = n < NET_ROOMS_JSON_MAX ? n : NET_ROOMS_JSON_MAX;
    for (size_t i = 0; i < shown; i++) {
        const net_room_info *r = &rooms[i];
        char name[6 * NET_ROOM_NAME_MAX + 1];
        json_string(r->name, name, sizeof name);
        double p99 = r->tick_p99_ms >= 0 && r->tick_p99_ms < 1e9 ? r->tick_p99_ms : 0.0;
        /* The name apart: escaped, it may be longer than a put() line. */
        ok &= put(out, "%s{\"name\": \"", i ? ", " : "");
        ok &= net_buf_append(out, name, strlen(name));
        ok &= put(out,
                  "\", \"clients\": %u, \"bodies\": %llu, \"tick\": %llu, \"auto\": %s, "
                  "\"tick_p99_ms\": %.3f}",
                  r->clients, (unsigned long long)r->bodies, (unsigned long long)r->tick,
                  r->auto_created ? "true" : "false", p99);
    }
    ok &= put(out, "], \"total\": %zu, \"truncated\": %s}\n", n, shown < n ? "true" : "false");
    return ok;
}

bool net_rooms_render_players(const net_room_player *p, size_t n, size_t total, net_buf *out) {
    bool ok = put(out, "\"players\": [");
    size_t shown = n < NET_ROOMS_JSON_PLAYERS ? n : NET_ROOMS_JSON_PLAYERS;
    for (size_t i = 0; i < shown; i++) {
        /* Both escaped, though neither needs it today (room names and client names are
         * sanitised ASCII): the JSON must not depend on that. */
        char room[6 * NET_ROOM_NAME_MAX + 1], name[6 * NET_ROOM_PLAYER_NAME + 1];
        json_string(p[i].room, room, sizeof room);
        json_string(p[i].name, name, sizeof name);
        ok &= put(out, "%s{\"room\": \"", i ? ", " : "");
        ok &= net_buf_append(out, room, strlen(room));
        ok &= put(out, "\", \"id\": %u, \"name\": \"", p[i].id);
        ok &= net_buf_append(out, name, strlen(name));
        ok &= put(out, "\", \"admin\": %s, \"ticket\": %s}", p[i].admin ? "true" : "false",
                  p[i].ticket ? "true" : "false");
    }
    if (total < shown) total = shown;
    ok &= put(out, "], \"players_total\": %zu, \"players_truncated\": %s", total,
              shown < total ? "true" : "false");
    return ok;
}

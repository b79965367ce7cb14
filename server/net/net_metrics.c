#include "net_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collide.pb-c.h"

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
        "client_closed", "read_error",   "write_error",   "fatal_error",
        "hello_timeout", "slow_client",  "server_full",   "shutdown",
        "out_of_memory", "snapshot_lag", "frame_timeout", "pending_evicted"};
    return (unsigned)reason < NET_DISC_REASON_COUNT ? names[reason] : "unknown";
}

const char *net_http_close_reason_str(net_http_close_reason reason) {
    static const char *names[NET_HTTP_CLOSE_REASON_COUNT] = {"evicted", "timeout", "refused"};
    return (unsigned)reason < NET_HTTP_CLOSE_REASON_COUNT ? names[reason] : "unknown";
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

bool net_metrics_render(const net_metrics *m, const net_gauges *g, net_buf *out) {
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
    ok &= counter(out, "collide_slow_client_drops_total", "Snapshots skipped for slow readers.",
                  m->slow_client_drops_total);
    ok &= counter(out, "collide_slow_client_disconnects_total",
                  "Slow readers disconnected at the hard limit.", m->slow_client_disconnects_total);
    ok &= put(out, "# HELP collide_http_closed_total Ops-port connections closed before they were "
                   "answered, by reason.\n# TYPE collide_http_closed_total counter\n");
    for (int r = 0; r < NET_HTTP_CLOSE_REASON_COUNT; r++) {
        ok &= put(out, "collide_http_closed_total{reason=\"%s\"} %llu\n",
                  net_http_close_reason_str((net_http_close_reason)r),
                  (unsigned long long)m->http_closed_total[r]);
    }
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

#include "report.h"

#include <math.h>
#include <string.h>

void cc_stats_init(cc_stats *s) {
    memset(s, 0, sizeof *s);
    cc_hist_init(&s->connect_us);
    cc_hist_init(&s->welcome_us);
    cc_hist_init(&s->spawn_us);
    cc_hist_init(&s->ack_us);
    cc_hist_init(&s->rtt_us);
    cc_hist_init(&s->gap_us);
    cc_hist_init(&s->jitter_us);
    cc_hist_init(&s->send_lag_us);
    cc_hist_init(&s->query_us);
    s->min_bytes_in_per_s = -1.0;
    cc_check_stats_init(&s->check);
}

void cc_room_stats_init(cc_room_stats *r) {
    memset(r, 0, sizeof *r);
    cc_hist_init(&r->ack_us);
}

void cc_room_stats_merge(cc_room_stats *into, const cc_room_stats *from) {
    into->players += from->players;
    into->intents_scheduled += from->intents_scheduled;
    into->intents_acked += from->intents_acked;
    into->errors += from->errors;
    into->disconnects += from->disconnects;
    cc_hist_merge(&into->ack_us, &from->ack_us);
}

void cc_backend_stats_init(cc_backend_stats *b, uint32_t npcs) {
    memset(b, 0, sizeof *b);
    b->npcs_requested = npcs;
    cc_hist_init(&b->ack_us);
    cc_hist_init(&b->query_us);
}

void cc_backend_error_add(cc_backend_stats *b, uint32_t code, uint32_t index, uint32_t request_id) {
    b->errors[code < CC_ERROR_CODES - 1 ? code : CC_ERROR_CODES - 1]++;
    if (index > 0) b->item_errors++;
    if (b->examples_len < CC_BACKEND_EXAMPLES)
        b->examples[b->examples_len++] = (cc_backend_error){code, index, request_id};
}

void cc_backend_ack(cc_backend_stats *b, uint64_t latency_us) {
    cc_hist_record(&b->ack_us, latency_us);
    b->intents_acked++;
    if (b->tick_period_us && latency_us <= 2u * b->tick_period_us) b->acked_within_2_ticks++;
}

static uint64_t backend_errors(const cc_backend_stats *b) {
    uint64_t t = 0;
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        t += b->errors[i];
    return t;
}

void cc_reasons_add(cc_reasons *r, const char *text, uint64_t count) {
    for (uint32_t i = 0; i < r->len; i++) {
        if (strncmp(r->items[i].text, text, CC_REASON_LEN - 1) == 0) {
            r->items[i].count += count;
            return;
        }
    }
    if (r->len == CC_REASONS_MAX) {
        r->other += count;
        return;
    }
    cc_reason *it = &r->items[r->len++];
    snprintf(it->text, sizeof it->text, "%s", text);
    it->count = count;
}

void cc_stats_merge(cc_stats *into, const cc_stats *from) {
    cc_hist_merge(&into->connect_us, &from->connect_us);
    cc_hist_merge(&into->welcome_us, &from->welcome_us);
    cc_hist_merge(&into->spawn_us, &from->spawn_us);
    cc_hist_merge(&into->ack_us, &from->ack_us);
    cc_hist_merge(&into->rtt_us, &from->rtt_us);
    cc_hist_merge(&into->gap_us, &from->gap_us);
    cc_hist_merge(&into->jitter_us, &from->jitter_us);
    cc_hist_merge(&into->send_lag_us, &from->send_lag_us);
    cc_hist_merge(&into->query_us, &from->query_us);
    into->queries_sent += from->queries_sent;
    into->query_results += from->query_results;
    into->sched_run_s += from->sched_run_s;
    into->sched_wait_s += from->sched_wait_s;
    into->clients_started += from->clients_started;
    into->clients_welcomed += from->clients_welcomed;
    into->clients_spawned += from->clients_spawned;
    into->connect_failures += from->connect_failures;
    into->disconnects += from->disconnects;
    into->intents_scheduled += from->intents_scheduled;
    into->intents_sent += from->intents_sent;
    into->intents_acked += from->intents_acked;
    into->intents_unacked += from->intents_unacked;
    into->intents_expired += from->intents_expired;
    into->pings_sent += from->pings_sent;
    into->pongs += from->pongs;
    into->snapshots += from->snapshots;
    into->snapshot_bodies += from->snapshot_bodies;
    into->frames_in += from->frames_in;
    into->frames_dropped += from->frames_dropped;
    into->malformed += from->malformed;
    into->udp_full += from->udp_full;
    into->udp_ignored += from->udp_ignored;
    into->udp_acks_sent += from->udp_acks_sent;
    into->udp_events += from->udp_events;
    into->bytes_in += from->bytes_in;
    into->bytes_out += from->bytes_out;
    into->client_seconds += from->client_seconds;
    if (from->min_bytes_in_per_s >= 0.0 &&
        (into->min_bytes_in_per_s < 0.0 || from->min_bytes_in_per_s < into->min_bytes_in_per_s))
        into->min_bytes_in_per_s = from->min_bytes_in_per_s;
    if (from->max_bytes_in_per_s > into->max_bytes_in_per_s)
        into->max_bytes_in_per_s = from->max_bytes_in_per_s;
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        into->errors[i] += from->errors[i];
    if (from->max_tick > into->max_tick) into->max_tick = from->max_tick;
    for (uint32_t i = 0; i < from->reasons.len; i++)
        cc_reasons_add(&into->reasons, from->reasons.items[i].text, from->reasons.items[i].count);
    into->reasons.other += from->reasons.other;
    into->jumps_sent += from->jumps_sent;
    into->jumps_taken += from->jumps_taken;
    into->ticks_grounded += from->ticks_grounded;
    into->ticks_observed += from->ticks_observed;
    cc_check_stats_merge(&into->check, &from->check);
}

uint64_t cc_stats_errors(const cc_stats *s) {
    uint64_t t = 0;
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        t += s->errors[i];
    return t;
}

const char *cc_error_code_name(uint32_t code) {
    static const char *const names[] = {
        "UNSPECIFIED",  "BAD_REQUEST",     "UNAUTHENTICATED",  "FORBIDDEN",
        "NOT_FOUND",    "INVALID_SHAPE",   "OUT_OF_BOUNDS",    "LIMIT_EXCEEDED",
        "RATE_LIMITED", "FRAME_TOO_LARGE", "VERSION_MISMATCH", "SHUTTING_DOWN",
        "INTERNAL",     "HISTORY_EXPIRED",
    };
    return code < sizeof names / sizeof names[0] ? names[code] : "UNKNOWN";
}

static double ms(uint64_t us) { return (double)us / 1000.0; }

static void text_hist(FILE *out, const char *name, const cc_hist *h) {
    if (h->total == 0) {
        fprintf(out, "  %-22s (no samples)\n", name);
        return;
    }
    fprintf(out, "  %-22s p50 %8.3f  p90 %8.3f  p99 %8.3f  p99.9 %8.3f  max %8.3f ms  (n=%llu)\n",
            name, ms(cc_hist_percentile(h, 50)), ms(cc_hist_percentile(h, 90)),
            ms(cc_hist_percentile(h, 99)), ms(cc_hist_percentile(h, 99.9)), ms(h->max),
            (unsigned long long)h->total);
}

static void text_rooms(FILE *out, const cc_report_meta *m) {
    if (m->rooms == 0 || !m->room_stats) return;
    fprintf(out, "rooms (%u, prefix \"%s\"; intent-to-ack in ms):\n", m->rooms, m->room_prefix);
    for (uint32_t i = 0; i < m->rooms; i++) {
        const cc_room_stats *r = &m->room_stats[i];
        fprintf(out,
                "  %s%u: players %llu, intents %llu scheduled %llu acked, ack p50 %.3f p99 %.3f "
                "p99.9 %.3f, errors %llu, disconnects %llu\n",
                m->room_prefix, i, (unsigned long long)r->players,
                (unsigned long long)r->intents_scheduled, (unsigned long long)r->intents_acked,
                ms(cc_hist_percentile(&r->ack_us, 50)), ms(cc_hist_percentile(&r->ack_us, 99)),
                ms(cc_hist_percentile(&r->ack_us, 99.9)), (unsigned long long)r->errors,
                (unsigned long long)r->disconnects);
    }
}

static void text_backend(FILE *out, const cc_backend_stats *b) {
    if (!b) return;
    fprintf(out,
            "backend: %u of %u NPCs spawned, %llu batches (%llu intents) sent, %llu acked, %llu "
            "unacked\n",
            b->npcs_spawned, b->npcs_requested, (unsigned long long)b->batches_sent,
            (unsigned long long)b->intents_sent, (unsigned long long)b->intents_acked,
            (unsigned long long)b->intents_unacked);
    if (b->platforms_requested)
        fprintf(out, "  platforms: %u of %u spawned, %llu turns\n", b->platforms_spawned,
                b->platforms_requested, (unsigned long long)b->platform_turns);
    text_hist(out, "npc intent-to-ack", &b->ack_us);
    fprintf(out, "  acked within 2 ticks (%.1f ms): %.2f%%\n", ms(2u * b->tick_period_us),
            b->intents_acked ? 100.0 * (double)b->acked_within_2_ticks / (double)b->intents_acked
                             : 0.0);
    fprintf(out, "  backend errors: %llu (%llu batch items)", (unsigned long long)backend_errors(b),
            (unsigned long long)b->item_errors);
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        if (b->errors[i])
            fprintf(out, "  %s=%llu", cc_error_code_name(i), (unsigned long long)b->errors[i]);
    fputc('\n', out);
    for (uint32_t i = 0; i < b->examples_len; i++)
        fprintf(out, "  backend error %s index %u request %u\n",
                cc_error_code_name(b->examples[i].code), b->examples[i].index,
                b->examples[i].request_id);
    if (b->queries_sent) {
        fprintf(out,
                "  backend ray casts: %llu sent, %llu answered, %llu refused, %llu unanswered\n",
                (unsigned long long)b->queries_sent, (unsigned long long)b->query_results,
                (unsigned long long)b->query_errors, (unsigned long long)b->queries_unanswered);
        text_hist(out, "backend ray cast answer", &b->query_us);
    }
    if (b->failure[0]) fprintf(out, "  backend stopped: %s\n", b->failure);
}

/* What the connect time covers: over WebSocket the upgrade's round trip is in it; over UDP it is
 * ENet's connect handshake (no TCP at all). */
static const char *connect_label(const char *transport) {
    if (transport && strcmp(transport, "ws") == 0) return "connect+upgrade";
    if (transport && strcmp(transport, "udp") == 0) return "enet connect";
    return "tcp connect";
}

/* UDP's own figures: how often the baseline scheme fell back or lost its footing. */
static void text_udp(FILE *out, const cc_stats *s) {
    fprintf(out,
            "udp: %llu full snapshots, %llu ignored (baseline not held), %llu acks sent, %llu "
            "events messages\n",
            (unsigned long long)s->udp_full, (unsigned long long)s->udp_ignored,
            (unsigned long long)s->udp_acks_sent, (unsigned long long)s->udp_events);
}

/* The errors line (by code) and the disconnects line (by reason). */
static void text_errors(FILE *out, const cc_stats *s) {
    fprintf(out, "errors: %llu", (unsigned long long)cc_stats_errors(s));
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        if (s->errors[i])
            fprintf(out, "  %s=%llu", cc_error_code_name(i), (unsigned long long)s->errors[i]);
    if (s->malformed) fprintf(out, "  malformed_frames=%llu", (unsigned long long)s->malformed);
    if (s->frames_dropped)
        fprintf(out, "  send_buffer_full=%llu", (unsigned long long)s->frames_dropped);
    fputc('\n', out);
    fprintf(out, "disconnects: %llu", (unsigned long long)(s->disconnects + s->connect_failures));
    for (uint32_t i = 0; i < s->reasons.len; i++)
        fprintf(out, "  \"%s\"=%llu", s->reasons.items[i].text,
                (unsigned long long)s->reasons.items[i].count);
    if (s->reasons.other) fprintf(out, "  other=%llu", (unsigned long long)s->reasons.other);
    fputc('\n', out);
}

/* With --check: the invariants' and the events' violations, and the first examples. */
static void text_check(FILE *out, const cc_report_meta *m, const cc_stats *s) {
    if (!m->check) return;
    const cc_check_stats *c = &s->check;
    fprintf(out,
            "check (%u clients): %llu snapshots, %llu pair tests; violations: "
            "overlap_static=%llu overlap_moving=%llu tunnel=%llu",
            m->check_clients, (unsigned long long)c->snapshots, (unsigned long long)c->pairs,
            (unsigned long long)c->counts[CC_VIOL_OVERLAP_STATIC],
            (unsigned long long)c->counts[CC_VIOL_OVERLAP_MOVING],
            (unsigned long long)c->counts[CC_VIOL_TUNNEL]);
    if (c->unknown_shape)
        fprintf(out, " (bodies without shape: %llu)", (unsigned long long)c->unknown_shape);
    if (c->overflow) fprintf(out, " (untracked: %llu)", (unsigned long long)c->overflow);
    fputc('\n', out);
    fprintf(out, "check events: %llu contact, %llu sensor, %llu measured; violations:",
            (unsigned long long)c->contact_events, (unsigned long long)c->sensor_events,
            (unsigned long long)c->events_measured);
    for (int k = CC_VIOL_CONTACT_BEGIN_FAR; k <= CC_VIOL_SENSOR_NOT_ENDED; k++)
        fprintf(out, " %s=%llu", cc_violation_name(k), (unsigned long long)c->counts[k]);
    if (c->open_overflow)
        fprintf(out, " (begins untracked: %llu)", (unsigned long long)c->open_overflow);
    fputc('\n', out);
    fprintf(out,
            "check characters: %llu rest, %llu one-way, %llu carried, %llu of %llu jumps judged; "
            "violations:",
            (unsigned long long)c->rest_checks, (unsigned long long)c->one_way_checks,
            (unsigned long long)c->carry_checks, (unsigned long long)c->jumps_checked,
            (unsigned long long)c->jumps_seen);
    for (int k = CC_VIOL_REST_MOVED; k < CC_VIOL_KINDS; k++)
        fprintf(out, " %s=%llu", cc_violation_name(k), (unsigned long long)c->counts[k]);
    fputc('\n', out);
    for (uint32_t i = 0; i < c->examples_len; i++) {
        const cc_violation *v = &c->examples[i];
        fprintf(out, "  violation %s: body %u vs body %u at tick %llu (depth %.4f)\n",
                cc_violation_name(v->kind), v->a, v->b, (unsigned long long)v->tick,
                isnan(v->depth) ? 0.0 : (double)v->depth);
    }
}

/* --daemon-pid: the daemon's CPU over the same window, in cores (what players per core divides
 * by); --pin: where this tool ran, so the reader knows the two did not share a core. */
static void text_daemon(FILE *out, const cc_report_meta *m) {
    if (m->pin_cpu >= 0) fprintf(out, "client pinned: CPU %lld\n", (long long)m->pin_cpu);
    if (!m->daemon_pid) return;
    double share = m->daemon_wall_s > 0 ? m->daemon_cpu_s / m->daemon_wall_s : 0.0;
    fprintf(out,
            "daemon cpu: pid %u, %.2f s user + sys over %.2f s = %.3f cores (%.1f%% of one core); "
            "%.0f clients per core at this load\n",
            m->daemon_pid, m->daemon_cpu_s, m->daemon_wall_s, share, 100.0 * share,
            share > 0 ? (double)m->clients / share : 0.0);
}

void cc_report_text(FILE *out, const cc_report_meta *m, const cc_stats *s) {
    double el = m->elapsed_s > 0 ? m->elapsed_s : 1.0;
    double cs = s->client_seconds > 0 ? s->client_seconds : 1.0;
    fprintf(out,
            "collide-client load: %s:%u (%s), %u clients on %u thread(s), %.1f Hz %s intents, %s\n",
            m->host, m->port, m->transport ? m->transport : "tcp", m->clients, m->threads,
            m->rate_hz, m->pattern, m->shape);
    fprintf(out, "  elapsed %.2f s (ramp %.2f s, duration %.2f s)\n", m->elapsed_s, m->ramp_s,
            m->duration_s);
    fprintf(out,
            "  clients: %llu started, %llu welcomed, %llu spawned, %llu connect failures, %llu "
            "disconnects\n",
            (unsigned long long)s->clients_started, (unsigned long long)s->clients_welcomed,
            (unsigned long long)s->clients_spawned, (unsigned long long)s->connect_failures,
            (unsigned long long)s->disconnects);
    fprintf(out, "latency (from the intended send time; ms):\n");
    text_hist(out, "intent-to-ack", &s->ack_us);
    text_hist(out, "ping rtt", &s->rtt_us);
    text_hist(out, connect_label(m->transport), &s->connect_us);
    text_hist(out, "hello-to-welcome", &s->welcome_us);
    text_hist(out, "spawn", &s->spawn_us);
    text_hist(out, "snapshot inter-arrival", &s->gap_us);
    text_hist(out, "snapshot jitter", &s->jitter_us);
    text_hist(out, "intent send lag", &s->send_lag_us);
    if (s->queries_sent) text_hist(out, "ray cast answer", &s->query_us);
    fprintf(out,
            "intents: %llu scheduled, %llu sent (%llu coalesced late), %llu acked, %llu unacked, "
            "%llu expired\n",
            (unsigned long long)s->intents_scheduled, (unsigned long long)s->intents_sent,
            (unsigned long long)(s->intents_scheduled - s->intents_sent),
            (unsigned long long)s->intents_acked, (unsigned long long)s->intents_unacked,
            (unsigned long long)s->intents_expired);
    fprintf(out, "pings: %llu sent, %llu pongs\n", (unsigned long long)s->pings_sent,
            (unsigned long long)s->pongs);
    if (m->pattern && strcmp(m->pattern, "platformer") == 0)
        fprintf(out,
                "characters: %llu jumps sent, %llu taken; grounded %llu of %llu ticks (%.1f%%)\n",
                (unsigned long long)s->jumps_sent, (unsigned long long)s->jumps_taken,
                (unsigned long long)s->ticks_grounded, (unsigned long long)s->ticks_observed,
                s->ticks_observed ? 100.0 * (double)s->ticks_grounded / (double)s->ticks_observed
                                  : 0.0);
    if (s->queries_sent)
        fprintf(out, "ray casts: %llu sent, %llu answered\n", (unsigned long long)s->queries_sent,
                (unsigned long long)s->query_results);
    fprintf(out, "snapshots: %llu total, %.1f/s per client, %.1f bodies each; %.0f/s overall\n",
            (unsigned long long)s->snapshots, (double)s->snapshots / cs,
            s->snapshots ? (double)s->snapshot_bodies / (double)s->snapshots : 0.0,
            (double)s->snapshots / el);
    if (m->transport && strcmp(m->transport, "udp") == 0) text_udp(out, s);
    fprintf(out,
            "bytes per client: in %.0f B/s (min %.0f, max %.0f), out %.0f B/s; total in %llu, "
            "out %llu\n",
            (double)s->bytes_in / cs, s->min_bytes_in_per_s < 0 ? 0.0 : s->min_bytes_in_per_s,
            s->max_bytes_in_per_s, (double)s->bytes_out / cs, (unsigned long long)s->bytes_in,
            (unsigned long long)s->bytes_out);
    text_errors(out, s);
    text_check(out, m, s);
    text_rooms(out, m);
    text_backend(out, m->backend);
    double cpu = m->cpu_user_s + m->cpu_sys_s;
    fprintf(out,
            "client cpu: %.2f s user + %.2f s sys = %.1f%% of one core; worker threads waited "
            "%.2f s for a CPU\n",
            m->cpu_user_s, m->cpu_sys_s, 100.0 * cpu / el, s->sched_wait_s);
    text_daemon(out, m);
    if (cc_report_generator_behind(m, s))
        fprintf(out,
                "WARNING: the load generator fell behind its own schedule (%.1f%% of intents "
                "coalesced late, send lag p99 %.1f ms, %.0f%% of thread time spent waiting for a "
                "CPU): the figures are bounded by this machine, not only by the server. Use more "
                "--threads, fewer --clients, or a less busy machine.\n",
                s->intents_scheduled ? 100.0 * (double)(s->intents_scheduled - s->intents_sent) /
                                           (double)s->intents_scheduled
                                     : 0.0,
                ms(cc_hist_percentile(&s->send_lag_us, 99)),
                s->sched_run_s + s->sched_wait_s > 0
                    ? 100.0 * s->sched_wait_s / (s->sched_run_s + s->sched_wait_s)
                    : 0.0);
}

bool cc_report_generator_behind(const cc_report_meta *m, const cc_stats *s) {
    (void)m;
    bool late = s->intents_scheduled && (double)(s->intents_scheduled - s->intents_sent) >
                                            0.01 * (double)s->intents_scheduled;
    bool starved = s->sched_run_s + s->sched_wait_s > 0 &&
                   s->sched_wait_s > 0.25 * (s->sched_run_s + s->sched_wait_s);
    return late || starved;
}

static void json_hist(FILE *f, const char *name, const cc_hist *h, bool last) {
    fprintf(f,
            "    \"%s\": {\"count\": %llu, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, "
            "\"p999_ms\": %.3f, \"max_ms\": %.3f, \"mean_ms\": %.3f}%s\n",
            name, (unsigned long long)h->total, ms(cc_hist_percentile(h, 50)),
            ms(cc_hist_percentile(h, 90)), ms(cc_hist_percentile(h, 99)),
            ms(cc_hist_percentile(h, 99.9)), ms(h->max), cc_hist_mean(h) / 1000.0, last ? "" : ",");
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_rooms(FILE *f, const cc_report_meta *m) {
    if (m->rooms == 0 || !m->room_stats) return;
    fprintf(f, "  \"rooms\": [\n");
    for (uint32_t i = 0; i < m->rooms; i++) {
        const cc_room_stats *r = &m->room_stats[i];
        char name[160];
        snprintf(name, sizeof name, "%s%u", m->room_prefix, i);
        fprintf(f, "   {\"name\": ");
        json_string(f, name);
        fprintf(f,
                ", \"players\": %llu, \"intents\": {\"scheduled\": %llu, \"acked\": %llu}, "
                "\"errors\": %llu, \"disconnects\": %llu,\n",
                (unsigned long long)r->players, (unsigned long long)r->intents_scheduled,
                (unsigned long long)r->intents_acked, (unsigned long long)r->errors,
                (unsigned long long)r->disconnects);
        json_hist(f, "intent_to_ack", &r->ack_us, true);
        fprintf(f, "   }%s\n", i + 1 < m->rooms ? "," : "");
    }
    fprintf(f, "  ],\n");
}

static void json_backend(FILE *f, const cc_backend_stats *b) {
    if (!b) return;
    fprintf(f,
            "  \"backend\": {\"npcs\": %u, \"npcs_spawned\": %u, \"batches_sent\": %llu, "
            "\"intents_sent\": %llu, \"intents_acked\": %llu, \"intents_unacked\": %llu, "
            "\"tick_period_ms\": %.3f, \"acked_within_2_ticks\": %.6f, \"platforms\": %u, "
            "\"platforms_spawned\": %u, \"platform_turns\": %llu,\n",
            b->npcs_requested, b->npcs_spawned, (unsigned long long)b->batches_sent,
            (unsigned long long)b->intents_sent, (unsigned long long)b->intents_acked,
            (unsigned long long)b->intents_unacked, ms(b->tick_period_us),
            b->intents_acked ? (double)b->acked_within_2_ticks / (double)b->intents_acked : 0.0,
            b->platforms_requested, b->platforms_spawned, (unsigned long long)b->platform_turns);
    json_hist(f, "intent_to_ack", &b->ack_us, false);
    fprintf(f,
            "    \"ray_casts\": {\"sent\": %llu, \"answered\": %llu, \"refused\": %llu, "
            "\"unanswered\": %llu},\n",
            (unsigned long long)b->queries_sent, (unsigned long long)b->query_results,
            (unsigned long long)b->query_errors, (unsigned long long)b->queries_unanswered);
    json_hist(f, "ray_cast_answer", &b->query_us, false);
    fprintf(f, "    \"errors\": {\"total\": %llu, \"batch_items\": %llu",
            (unsigned long long)backend_errors(b), (unsigned long long)b->item_errors);
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        if (b->errors[i])
            fprintf(f, ", \"%s\": %llu", cc_error_code_name(i), (unsigned long long)b->errors[i]);
    fprintf(f, "},\n    \"error_examples\": [");
    for (uint32_t i = 0; i < b->examples_len; i++)
        fprintf(f, "%s{\"code\": \"%s\", \"index\": %u, \"request_id\": %u}", i ? ", " : "",
                cc_error_code_name(b->examples[i].code), b->examples[i].index,
                b->examples[i].request_id);
    fprintf(f, "],\n    \"failure\": ");
    json_string(f, b->failure);
    fprintf(f, "\n  },\n");
}

bool cc_report_json(const char *path, const cc_report_meta *m, const cc_stats *s,
                    const char *const *failures, int n_failures) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    double cs = s->client_seconds > 0 ? s->client_seconds : 1.0;
    double el = m->elapsed_s > 0 ? m->elapsed_s : 1.0;
    fprintf(f, "{\n  \"host\": ");
    json_string(f, m->host);
    fprintf(f, ",\n  \"transport\": \"%s\"", m->transport ? m->transport : "tcp");
    fprintf(f,
            ",\n  \"port\": %u,\n  \"clients\": %u,\n  \"threads\": %u,\n  \"rate_hz\": %.3f,\n"
            "  \"duration_s\": %.3f,\n  \"ramp_s\": %.3f,\n  \"pattern\": \"%s\",\n"
            "  \"shape\": \"%s\",\n  \"elapsed_s\": %.3f,\n",
            m->port, m->clients, m->threads, m->rate_hz, m->duration_s, m->ramp_s, m->pattern,
            m->shape, m->elapsed_s);
    fprintf(f, "  \"cpu\": {\"user_s\": %.3f, \"sys_s\": %.3f, \"cores\": %.3f},\n", m->cpu_user_s,
            m->cpu_sys_s, (m->cpu_user_s + m->cpu_sys_s) / el);
    if (m->pin_cpu >= 0) fprintf(f, "  \"pin_cpu\": %lld,\n", (long long)m->pin_cpu);
    if (m->daemon_pid)
        fprintf(f,
                "  \"daemon\": {\"pid\": %u, \"cpu_s\": %.3f, \"wall_s\": %.3f, \"cpu_share\": "
                "%.4f},\n",
                m->daemon_pid, m->daemon_cpu_s, m->daemon_wall_s,
                m->daemon_wall_s > 0 ? m->daemon_cpu_s / m->daemon_wall_s : 0.0);
    fprintf(f,
            "  \"clients_started\": %llu,\n  \"clients_welcomed\": %llu,\n"
            "  \"clients_spawned\": %llu,\n  \"connect_failures\": %llu,\n"
            "  \"disconnects\": %llu,\n",
            (unsigned long long)s->clients_started, (unsigned long long)s->clients_welcomed,
            (unsigned long long)s->clients_spawned, (unsigned long long)s->connect_failures,
            (unsigned long long)s->disconnects);
    fprintf(f, "  \"latency\": {\n");
    json_hist(f, "intent_to_ack", &s->ack_us, false);
    json_hist(f, "ping_rtt", &s->rtt_us, false);
    json_hist(f, "tcp_connect", &s->connect_us, false);
    json_hist(f, "hello_to_welcome", &s->welcome_us, false);
    json_hist(f, "spawn", &s->spawn_us, false);
    json_hist(f, "snapshot_interarrival", &s->gap_us, false);
    json_hist(f, "snapshot_jitter", &s->jitter_us, false);
    json_hist(f, "intent_send_lag", &s->send_lag_us, false);
    json_hist(f, "ray_cast_answer", &s->query_us, true);
    fprintf(f, "  },\n");
    fprintf(f,
            "  \"intents\": {\"scheduled\": %llu, \"sent\": %llu, \"acked\": %llu, "
            "\"unacked\": %llu, \"expired\": %llu},\n",
            (unsigned long long)s->intents_scheduled, (unsigned long long)s->intents_sent,
            (unsigned long long)s->intents_acked, (unsigned long long)s->intents_unacked,
            (unsigned long long)s->intents_expired);
    fprintf(f, "  \"pings\": {\"sent\": %llu, \"pongs\": %llu},\n",
            (unsigned long long)s->pings_sent, (unsigned long long)s->pongs);
    fprintf(f,
            "  \"characters\": {\"jumps_sent\": %llu, \"jumps_taken\": %llu, \"ticks_grounded\": "
            "%llu, \"ticks_observed\": %llu},\n",
            (unsigned long long)s->jumps_sent, (unsigned long long)s->jumps_taken,
            (unsigned long long)s->ticks_grounded, (unsigned long long)s->ticks_observed);
    fprintf(f, "  \"ray_casts\": {\"sent\": %llu, \"answered\": %llu},\n",
            (unsigned long long)s->queries_sent, (unsigned long long)s->query_results);
    fprintf(f,
            "  \"snapshots\": {\"total\": %llu, \"per_client_per_s\": %.3f, "
            "\"bodies_per_snapshot\": %.3f, \"max_tick\": %llu},\n",
            (unsigned long long)s->snapshots, (double)s->snapshots / cs,
            s->snapshots ? (double)s->snapshot_bodies / (double)s->snapshots : 0.0,
            (unsigned long long)s->max_tick);
    fprintf(f,
            "  \"udp\": {\"full_snapshots\": %llu, \"ignored_snapshots\": %llu, \"acks_sent\": "
            "%llu, \"events_messages\": %llu},\n",
            (unsigned long long)s->udp_full, (unsigned long long)s->udp_ignored,
            (unsigned long long)s->udp_acks_sent, (unsigned long long)s->udp_events);
    fprintf(f,
            "  \"bytes\": {\"in_total\": %llu, \"out_total\": %llu, \"in_per_client_per_s\": "
            "%.1f, \"out_per_client_per_s\": %.1f, \"in_per_client_per_s_min\": %.1f, "
            "\"in_per_client_per_s_max\": %.1f},\n",
            (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out,
            (double)s->bytes_in / cs, (double)s->bytes_out / cs,
            s->min_bytes_in_per_s < 0 ? 0.0 : s->min_bytes_in_per_s, s->max_bytes_in_per_s);
    fprintf(f, "  \"errors\": {\"total\": %llu", (unsigned long long)cc_stats_errors(s));
    for (uint32_t i = 0; i < CC_ERROR_CODES; i++)
        if (s->errors[i])
            fprintf(f, ", \"%s\": %llu", cc_error_code_name(i), (unsigned long long)s->errors[i]);
    fprintf(f, ", \"malformed_frames\": %llu, \"send_buffer_full\": %llu},\n",
            (unsigned long long)s->malformed, (unsigned long long)s->frames_dropped);
    fprintf(f, "  \"disconnect_reasons\": {");
    for (uint32_t i = 0; i < s->reasons.len; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, s->reasons.items[i].text);
        fprintf(f, ": %llu", (unsigned long long)s->reasons.items[i].count);
    }
    if (s->reasons.other)
        fprintf(f, "%s\"other\": %llu", s->reasons.len ? ", " : "",
                (unsigned long long)s->reasons.other);
    fprintf(f, "},\n");
    const cc_check_stats *c = &s->check;
    fprintf(f,
            "  \"check\": {\"enabled\": %s, \"clients\": %u, \"snapshots\": %llu, \"pairs\": %llu, "
            "\"overlap_static\": %llu, \"overlap_moving\": %llu, \"tunnel\": %llu, "
            "\"examples\": [",
            m->check ? "true" : "false", m->check ? m->check_clients : 0u,
            (unsigned long long)c->snapshots, (unsigned long long)c->pairs,
            (unsigned long long)c->counts[CC_VIOL_OVERLAP_STATIC],
            (unsigned long long)c->counts[CC_VIOL_OVERLAP_MOVING],
            (unsigned long long)c->counts[CC_VIOL_TUNNEL]);
    /* unmeasured events have no depth: 0 in JSON, which has no NaN */
    for (uint32_t i = 0; i < c->examples_len; i++)
        fprintf(f, "%s{\"kind\": \"%s\", \"a\": %u, \"b\": %u, \"tick\": %llu, \"depth\": %.5f}",
                i ? ", " : "", cc_violation_name(c->examples[i].kind), c->examples[i].a,
                c->examples[i].b, (unsigned long long)c->examples[i].tick,
                isnan(c->examples[i].depth) ? 0.0 : (double)c->examples[i].depth);
    fprintf(f,
            "], \"events\": {\"contact\": %llu, \"sensor\": %llu, \"measured\": %llu, "
            "\"begins_untracked\": %llu",
            (unsigned long long)c->contact_events, (unsigned long long)c->sensor_events,
            (unsigned long long)c->events_measured, (unsigned long long)c->open_overflow);
    for (int k = CC_VIOL_CONTACT_BEGIN_FAR; k <= CC_VIOL_SENSOR_NOT_ENDED; k++)
        fprintf(f, ", \"%s\": %llu", cc_violation_name(k), (unsigned long long)c->counts[k]);
    fprintf(f,
            "}, \"characters\": {\"rest\": %llu, \"one_way\": %llu, \"carried\": %llu, "
            "\"jumps_seen\": %llu, \"jumps_judged\": %llu",
            (unsigned long long)c->rest_checks, (unsigned long long)c->one_way_checks,
            (unsigned long long)c->carry_checks, (unsigned long long)c->jumps_seen,
            (unsigned long long)c->jumps_checked);
    for (int k = CC_VIOL_REST_MOVED; k < CC_VIOL_KINDS; k++)
        fprintf(f, ", \"%s\": %llu", cc_violation_name(k), (unsigned long long)c->counts[k]);
    fprintf(f, "}},\n");
    json_rooms(f, m);
    json_backend(f, m->backend);
    fprintf(f, "  \"failures\": [");
    for (int i = 0; i < n_failures; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, failures[i]);
    }
    fprintf(f, "],\n  \"pass\": %s\n}\n", n_failures ? "false" : "true");
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

int cc_report_verdict(const cc_report_meta *m, const cc_stats *s, const cc_thresholds *t,
                      char buf[][160], int max) {
    int n = 0;
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (n < max) snprintf(buf[n++], 160, __VA_ARGS__);                                         \
    } while (0)
    if (s->clients_started > 0 && s->clients_welcomed == 0)
        FAIL("no client reached the server (%llu connect failures, %llu disconnects)",
             (unsigned long long)s->connect_failures, (unsigned long long)s->disconnects);
    else if (s->clients_started > 0 && s->disconnects + s->connect_failures >= s->clients_started)
        FAIL("every client was dropped before the end of the run (%llu of %llu)",
             (unsigned long long)(s->disconnects + s->connect_failures),
             (unsigned long long)s->clients_started);
    if (t->has_p99) {
        double p99 = ms(cc_hist_percentile(&s->ack_us, 99));
        if (s->ack_us.total == 0)
            FAIL("intent-to-ack p99: no acknowledged intent to measure");
        else if (p99 > t->max_p99_ms)
            FAIL("intent-to-ack p99 %.3f ms > --max-p99-ms %.3f", p99, t->max_p99_ms);
    }
    /* The backend's errors count with the players': a refused batch is as much a failure. */
    uint64_t errors = cc_stats_errors(s) + (m->backend ? backend_errors(m->backend) : 0u);
    if (t->has_errors && errors > t->max_errors)
        FAIL("errors %llu > --max-errors %llu", (unsigned long long)errors,
             (unsigned long long)t->max_errors);
    if (m->backend && m->backend->failure[0]) FAIL("backend: %s", m->backend->failure);
    uint64_t disc = s->disconnects + s->connect_failures;
    if (t->has_disconnects && disc > t->max_disconnects)
        FAIL("disconnects %llu > --max-disconnects %llu", (unsigned long long)disc,
             (unsigned long long)t->max_disconnects);
    if (m->check && cc_check_total(&s->check) > t->max_violations)
        FAIL("check violations %llu > --max-violations %llu",
             (unsigned long long)cc_check_total(&s->check), (unsigned long long)t->max_violations);
#undef FAIL
    return n;
}

/* cc_stats and the load report: what one worker measures (merged across workers at the end),
 * the text and JSON reports, and the threshold verdict. */
#ifndef COLLIDE_CLIENT_REPORT_H
#define COLLIDE_CLIENT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "hist.h"

#define CC_ERROR_CODES 15u /* ErrorCode 0..13, and 14 for any code this build does not know */
#define CC_REASONS_MAX 24u /* distinct disconnect reasons kept; the rest go under "other" */
#define CC_REASON_LEN 64u  /* bytes kept of a reason */

typedef struct cc_reason {
    char text[CC_REASON_LEN]; /* e.g. "server_closed", "goodbye: shutting down" */
    uint64_t count;           /* clients that ended this way */
} cc_reason;

typedef struct cc_reasons {
    uint32_t len;                    /* entries used */
    uint64_t other;                  /* reasons that did not fit */
    cc_reason items[CC_REASONS_MAX]; /* distinct reasons */
} cc_reasons;

typedef struct cc_stats {
    cc_hist connect_us;         /* TCP connect */
    cc_hist welcome_us;         /* Hello sent -> Welcome */
    cc_hist spawn_us;           /* SpawnBody sent -> Spawned */
    cc_hist ack_us;             /* intended send time of input_seq -> first snapshot acking it */
    cc_hist rtt_us;             /* Ping -> Pong */
    cc_hist gap_us;             /* snapshot inter-arrival time */
    cc_hist jitter_us;          /* |inter-arrival - tick period| */
    cc_hist send_lag_us;        /* actual send time - intended send time of each intent sent */
    cc_hist query_us;           /* RayCast sent -> its QueryResult (--queries) */
    uint64_t clients_started;   /* connects attempted */
    uint64_t clients_welcomed;  /* got Welcome */
    uint64_t clients_spawned;   /* got Spawned: ran the scenario */
    uint64_t connect_failures;  /* never connected (refused, unreachable, timed out) */
    uint64_t disconnects;       /* ended before the run did, whatever the cause */
    uint64_t intents_scheduled; /* input_seq values issued by the schedule */
    uint64_t intents_sent;      /* MoveIntent messages sent (late slots coalesce into one) */
    uint64_t intents_acked;     /* input_seq values acknowledged by a snapshot */
    uint64_t intents_unacked;   /* issued but never acknowledged (at the end or at a close) */
    uint64_t intents_expired;   /* given up after CC_ACK_RING outstanding */
    uint64_t pings_sent;        /* Ping messages */
    uint64_t pongs;             /* Pong messages */
    uint64_t queries_sent;      /* RayCasts sent (--queries) */
    uint64_t query_results;     /* QueryResults received */
    uint64_t snapshots;         /* Snapshot messages */
    uint64_t snapshot_bodies;   /* BodyState entries across them */
    uint64_t frames_in;         /* ServerMessages */
    uint64_t frames_dropped;    /* client frames dropped: send buffers full */
    uint64_t malformed;         /* frames that did not parse */
    uint64_t udp_full;          /* UDP: snapshots applied with baseline_tick 0 */
    uint64_t udp_ignored;       /* UDP: snapshots ignored, their baseline not held (or stale) */
    uint64_t udp_acks_sent;     /* UDP: SnapshotAcks queued */
    uint64_t udp_events;        /* UDP: Events messages (channel 0) */
    uint64_t bytes_in;          /* bytes received, all clients */
    uint64_t bytes_out;         /* bytes sent, all clients */
    double client_seconds;      /* sum over clients of time from Welcome to close */
    double min_bytes_in_per_s;  /* smallest per-client receive rate */
    double max_bytes_in_per_s;  /* largest per-client receive rate */
    uint64_t errors[CC_ERROR_CODES]; /* Error messages by code */
    uint64_t max_tick;               /* newest server tick seen */
    double sched_run_s;              /* worker threads on a CPU (/proc/thread-self/schedstat) */
    double sched_wait_s;             /* worker threads runnable but waiting for a CPU */
    cc_reasons reasons;              /* disconnects and connect failures by reason */
    uint64_t jumps_sent;             /* platformer: intents with jump */
    uint64_t jumps_taken;            /* platformer: jumps of the players' own characters seen */
    uint64_t ticks_grounded;         /* platformer: ticks their snapshots showed them grounded */
    uint64_t ticks_observed;         /* platformer: ticks their snapshots covered */
    cc_check_stats check;            /* --check results */
} cc_stats;

/* One room's share of a --rooms run: what its players did, kept per worker and merged like
 * cc_stats, so the report can say which room lagged or failed rather than only the total. */
typedef struct cc_room_stats {
    uint64_t players;           /* clients that spawned a body in this room */
    uint64_t intents_scheduled; /* input_seq values issued by its players */
    uint64_t intents_acked;     /* of those, acknowledged by a snapshot */
    uint64_t errors;            /* Error messages its players received */
    uint64_t disconnects;       /* its players that dropped or could not connect */
    cc_hist ack_us;             /* intent-to-ack, as cc_stats.ack_us */
} cc_room_stats;

#define CC_BACKEND_EXAMPLES 8u /* batch item errors kept verbatim for the report */

typedef struct cc_backend_error {
    uint32_t code;       /* ErrorCode */
    uint32_t index;      /* Error.index: the batch item + 1, 0 for none */
    uint32_t request_id; /* echoed request */
} cc_backend_error;

/* The --backend connection: one admin that spawns NPCs and drives them with MoveIntents. */
typedef struct cc_backend_stats {
    uint32_t npcs_requested;         /* --backend */
    uint32_t npcs_spawned;           /* Spawned answers */
    uint32_t platforms_requested;    /* --pattern platformer's moving platforms */
    uint32_t platforms_spawned;      /* of those, Spawned */
    uint64_t platform_turns;         /* times a platform turned back (an end, or stalled) */
    uint64_t batches_sent;           /* MoveIntents frames */
    uint64_t intents_sent;           /* items across them */
    uint64_t intents_acked;          /* NPC input_seq values acknowledged by a snapshot */
    uint64_t intents_unacked;        /* sent, never acknowledged */
    uint64_t acked_within_2_ticks;   /* of intents_acked, within two tick periods */
    uint64_t tick_period_us;         /* from Welcome */
    uint64_t errors[CC_ERROR_CODES]; /* Error messages by code */
    uint64_t item_errors;            /* of those, with Error.index > 0 (a batch item) */
    uint32_t examples_len;           /* entries in examples */
    cc_backend_error examples[CC_BACKEND_EXAMPLES]; /* the first errors */
    cc_hist ack_us;              /* tick's intended send time -> snapshot acking the NPC */
    uint64_t queries_sent;       /* RayCasts sent (--backend-queries) */
    uint64_t query_results;      /* QueryResults received */
    uint64_t query_errors;       /* Errors answered to a RayCast */
    uint64_t queries_unanswered; /* sent, neither answered nor refused by the end */
    cc_hist query_us;            /* RayCast sent -> its QueryResult */
    char failure[CC_REASON_LEN]; /* why the backend stopped early ("" when it did not) */
} cc_backend_stats;

void cc_stats_init(cc_stats *s);
void cc_room_stats_init(cc_room_stats *r);
void cc_room_stats_merge(cc_room_stats *into, const cc_room_stats *from);
void cc_backend_stats_init(cc_backend_stats *b, uint32_t npcs);
/* Counts one Error answered to the backend, keeping the first few verbatim. */
void cc_backend_error_add(cc_backend_stats *b, uint32_t code, uint32_t index, uint32_t request_id);
/* Records one NPC ack latency, and whether it came within two ticks. */
void cc_backend_ack(cc_backend_stats *b, uint64_t latency_us);
void cc_stats_merge(cc_stats *into, const cc_stats *from);
void cc_reasons_add(cc_reasons *r, const char *text, uint64_t count);
uint64_t cc_stats_errors(const cc_stats *s);
const char *cc_error_code_name(uint32_t code);

typedef struct cc_report_meta {
    const char *host;                /* server */
    unsigned port;                   /* game port */
    const char *transport;           /* --transport: "tcp", "ws" or "udp" (NULL: tcp) */
    uint32_t clients;                /* --clients */
    uint32_t threads;                /* --threads */
    double rate_hz;                  /* --rate */
    double duration_s;               /* --duration */
    double ramp_s;                   /* --ramp */
    const char *pattern;             /* --pattern */
    const char *shape;               /* --shape */
    double elapsed_s;                /* wall time of the run */
    double cpu_user_s;               /* this process, getrusage */
    double cpu_sys_s;                /* this process, getrusage */
    bool check;                      /* --check was on */
    uint32_t check_clients;          /* clients that ran the checker */
    uint32_t rooms;                  /* --rooms (0: no per-room section) */
    const char *room_prefix;         /* --room-prefix */
    const cc_room_stats *room_stats; /* rooms entries, merged over the workers */
    const cc_backend_stats *backend; /* --backend, NULL without */
    int64_t pin_cpu;                 /* --pin's CPU, -1 without */
    uint32_t daemon_pid;             /* --daemon-pid, 0 without */
    double daemon_cpu_s;             /* its user + system time over the run */
    double daemon_wall_s;            /* the wall time between the two readings */
} cc_report_meta;

typedef struct cc_thresholds {
    bool has_p99;             /* --max-p99-ms given */
    double max_p99_ms;        /* intent-to-ack p99 bound */
    bool has_errors;          /* --max-errors given */
    uint64_t max_errors;      /* Error messages bound */
    bool has_disconnects;     /* --max-disconnects given */
    uint64_t max_disconnects; /* disconnects + connect failures bound */
    uint64_t max_violations;  /* --max-violations (with --check) */
} cc_thresholds;

/* True when the generator itself could not keep its schedule (late intents or CPU starvation). */
bool cc_report_generator_behind(const cc_report_meta *m, const cc_stats *s);
void cc_report_text(FILE *out, const cc_report_meta *m, const cc_stats *s);
bool cc_report_json(const char *path, const cc_report_meta *m, const cc_stats *s,
                    const char *const *failures, int n_failures);
/* Fills failures (static strings in buf) and returns how many thresholds were crossed. */
int cc_report_verdict(const cc_report_meta *m, const cc_stats *s, const cc_thresholds *t,
                      char buf[][160], int max);

#endif

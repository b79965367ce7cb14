/* collide-client watch: joins as a spectator (no body), asks with SetView for a box or the whole
 * world, and prints one summary line per snapshot, or with --bodies every body state in it.
 * With --check, the same invariant checker as `load --check` runs on the stream. */
#include "watch.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "qsnap.h"
#include "conn.h"
#include "report.h"
#include "session.h"

#define CMD "watch"
#define WATCH_SET_BITS 17u /* open-addressed id set: 131,072 slots, bodies in view tracked */
#define WATCH_SET_SLOTS (1u << WATCH_SET_BITS)

typedef struct watch_ctx {
    cc_conn conn;               /* the connection */
    uv_timer_t deadline;        /* --duration */
    uv_signal_t sigint;         /* Ctrl-C ends the watch cleanly */
    const cc_common_opts *o;    /* connection options */
    bool has_box;               /* --box given */
    float box[4];               /* x0,y0,x1,y1 */
    bool bodies;                /* --bodies */
    uint64_t count;             /* --count: snapshots to print (0 = no limit) */
    uint64_t seen;              /* snapshots received */
    bool welcomed;              /* Welcome received */
    int result;                 /* exit code once decided, -1 before */
    char message[256];          /* why it ended, when not by --count/--duration */
    uint32_t *ids;              /* the id set (0 = empty slot; ids are never 0) */
    uint32_t in_view;           /* ids in the set */
    cc_check_view *check;       /* --check: the checker's view */
    cc_check_stats check_stats; /* --check: violations */
    uint32_t snapshot_rate;     /* --snapshot-rate: Hello.snapshot_rate_hz (0: every tick) */
    bool quantized;             /* --quantized: Hello.quantized */
    cc_qsnap q;                 /* --quantized: the bodies in quanta, from Snapshot.packed */
    cc_qbase base;              /* --transport udp: the states snapshots are deltas against */
    uint64_t ignored;           /* UDP snapshots ignored: their baseline is not held */
} watch_ctx;

static uint32_t *set_slot(watch_ctx *x, uint32_t id, bool *found) {
    uint32_t h = (id * 2654435761u) >> (32u - WATCH_SET_BITS);
    uint32_t tomb = UINT32_MAX;
    for (uint32_t n = 0; n < WATCH_SET_SLOTS; n++, h = (h + 1u) & (WATCH_SET_SLOTS - 1u)) {
        uint32_t v = x->ids[h];
        if (v == id) {
            *found = true;
            return &x->ids[h];
        }
        if (v == UINT32_MAX && tomb == UINT32_MAX) tomb = h; /* UINT32_MAX marks a removal */
        if (v == 0) {
            *found = false;
            return &x->ids[tomb != UINT32_MAX ? tomb : h];
        }
    }
    *found = false;
    return tomb != UINT32_MAX ? &x->ids[tomb] : NULL;
}

static void watch_finish(watch_ctx *x, int result) {
    if (x->result >= 0) return;
    x->result = result;
    uv_close((uv_handle_t *)&x->deadline, NULL);
    uv_close((uv_handle_t *)&x->sigint, NULL);
    cc_conn_close(&x->conn);
}

static void watch_connected(cc_conn *c, int status) {
    watch_ctx *x = c->user;
    if (status != 0) {
        cc_connect_failure(x->message, sizeof x->message, x->o, status);
        watch_finish(x, CC_EXIT_FAIL);
        return;
    }
    cc_session_hello_ex(c, 1, "collide-client-watch", x->o->token, NULL, x->snapshot_rate,
                        x->quantized);
    cc_conn_flush(c);
}

static const char *shape_text(const Collide__V1__Shape *s, char *buf, size_t n) {
    if (!s) return "";
    switch (s->kind_case) {
    case COLLIDE__V1__SHAPE__KIND_BOX:
        snprintf(buf, n, " box(%g,%g)",
                 s->box && s->box->half_extents ? (double)s->box->half_extents->x : 0.0,
                 s->box && s->box->half_extents ? (double)s->box->half_extents->y : 0.0);
        break;
    case COLLIDE__V1__SHAPE__KIND_POLYGON:
        snprintf(buf, n, " polygon(%zu vertices)", s->polygon ? s->polygon->n_vertices : 0);
        break;
    case COLLIDE__V1__SHAPE__KIND_CIRCLE:
        snprintf(buf, n, " circle(%g)", s->circle ? (double)s->circle->radius : 0.0);
        break;
    default:
        buf[0] = '\0';
    }
    return buf;
}

static void watch_snapshot(watch_ctx *x, const Collide__V1__Snapshot *s, size_t bytes) {
    for (size_t i = 0; i < s->n_removed; i++) {
        bool found;
        uint32_t *slot = set_slot(x, s->removed[i], &found);
        if (found) {
            *slot = UINT32_MAX;
            x->in_view--;
        }
    }
    for (size_t i = 0; i < s->n_bodies; i++) {
        bool found;
        if (!s->bodies[i] || s->bodies[i]->id == 0 || s->bodies[i]->id == UINT32_MAX) continue;
        uint32_t *slot = set_slot(x, s->bodies[i]->id, &found);
        if (!found && slot) {
            *slot = s->bodies[i]->id;
            x->in_view++;
        }
    }
    uint64_t before = cc_check_total(&x->check_stats);
    if (x->check) cc_check_snapshot(x->check, s, &x->check_stats);
    printf("tick %llu: %zu bodies changed, %zu removed, %u in view, %zu bytes",
           (unsigned long long)s->tick, s->n_bodies, s->n_removed, x->in_view, bytes);
    if (x->check) printf(", violations %llu", (unsigned long long)cc_check_total(&x->check_stats));
    putchar('\n');
    if (x->check) {
        for (uint64_t k = before; k < cc_check_total(&x->check_stats) && k < CC_CHECK_EXAMPLES;
             k++) {
            const cc_violation *v = &x->check_stats.examples[k];
            printf("  VIOLATION %s: body %u vs body %u at tick %llu (depth %.4f)\n",
                   cc_violation_name(v->kind), v->a, v->b, (unsigned long long)v->tick,
                   (double)v->depth);
        }
    }
    if (x->bodies) {
        for (size_t i = 0; i < s->n_bodies; i++) {
            const Collide__V1__BodyState *b = s->bodies[i];
            if (!b) continue;
            char sh[64], ch[48] = "";
            /* 1.2: a standing character's ground, a one-way body; nothing for other bodies, whose
             * lines stay as they were */
            if (b->grounded || b->ground_id)
                snprintf(ch, sizeof ch, " grounded %d ground %u", (int)b->grounded, b->ground_id);
            if (b->one_way) snprintf(ch + strlen(ch), sizeof ch - strlen(ch), " one_way");
            printf("  body %u kind %d owner %u pos (%.3f, %.3f) vel (%.3f, %.3f) angle %.3f "
                   "w %.3f seq %u%s%s\n",
                   b->id, (int)b->kind, b->owner, b->position ? (double)b->position->x : 0.0,
                   b->position ? (double)b->position->y : 0.0,
                   b->velocity ? (double)b->velocity->x : 0.0,
                   b->velocity ? (double)b->velocity->y : 0.0, (double)b->angle,
                   (double)b->angular_velocity, b->last_input_seq,
                   shape_text(b->shape, sh, sizeof sh), ch);
        }
        for (size_t i = 0; i < s->n_removed; i++)
            printf("  removed %u\n", s->removed[i]);
    }
    fflush(stdout);
}

/* A snapshot: over UDP built from its baseline and acknowledged (an ignored one re-acknowledges
 * the newest applied, in case that ack was lost); over TCP quantized, expanded in place. */
static void watch_on_snapshot(watch_ctx *x, Collide__V1__Snapshot *s, size_t len) {
    int r = CC_QBASE_APPLIED;
    if (x->o->udp)
        r = cc_qsnap_expand_base(&x->q, &x->base, s);
    else if (x->quantized && !cc_qsnap_expand(&x->q, s))
        r = CC_QBASE_MALFORMED;
    if (r == CC_QBASE_MALFORMED) {
        cc_qsnap_done(&x->q, s);
        snprintf(x->message, sizeof x->message,
                 "malformed quantized snapshot from the server (tick %llu)",
                 (unsigned long long)s->tick);
        watch_finish(x, CC_EXIT_FAIL);
        return;
    }
    if (r == CC_QBASE_APPLIED) watch_snapshot(x, s, len);
    if (r == CC_QBASE_IGNORED) {
        x->ignored++;
        printf("tick %llu: ignored (baseline %llu not held)\n", (unsigned long long)s->tick,
               (unsigned long long)s->baseline_tick);
    }
    if (x->quantized) cc_qsnap_done(&x->q, s);
    if (x->o->udp && x->base.newest) {
        cc_session_snapshot_ack(&x->conn, x->base.newest);
        cc_conn_flush(&x->conn);
    }
    if (r == CC_QBASE_APPLIED && x->count && ++x->seen >= x->count) watch_finish(x, CC_EXIT_OK);
}

/* UDP: a tick's events, reliable on channel 0, checked for their pairing. */
static void watch_on_events(watch_ctx *x, const Collide__V1__Events *e) {
    printf("events tick %llu: %zu contacts, %zu sensor events\n", (unsigned long long)e->tick,
           e->n_contacts, e->n_sensor_events);
    if (x->check) cc_check_events(x->check, e, &x->check_stats);
}

static void watch_frame(cc_conn *c, const uint8_t *body, size_t len) {
    watch_ctx *x = c->user;
    if (x->result >= 0) return;
    Collide__V1__ServerMessage *m = collide__v1__server_message__unpack(NULL, len, body);
    if (!m) {
        snprintf(x->message, sizeof x->message, "malformed frame from the server");
        watch_finish(x, CC_EXIT_FAIL);
        return;
    }
    switch (m->msg_case) {
    case COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME: {
        const Collide__V1__Welcome *w = m->welcome;
        float x0, y0, x1, y1;
        if (x->has_box) {
            x0 = x->box[0], y0 = x->box[1], x1 = x->box[2], y1 = x->box[3];
        } else {
            x0 = w->world_min ? w->world_min->x : 0.0f;
            y0 = w->world_min ? w->world_min->y : 0.0f;
            x1 = w->world_max ? w->world_max->x : 0.0f;
            y1 = w->world_max ? w->world_max->y : 0.0f;
        }
        printf("welcome: client %u, protocol %u, %u Hz, tick %llu, world (%g, %g)-(%g, %g); view "
               "(%g, %g)-(%g, %g)\n",
               w->client_id, w->protocol_version, w->tick_rate_hz, (unsigned long long)w->tick,
               w->world_min ? (double)w->world_min->x : 0.0,
               w->world_min ? (double)w->world_min->y : 0.0,
               w->world_max ? (double)w->world_max->x : 0.0,
               w->world_max ? (double)w->world_max->y : 0.0, (double)x0, (double)y0, (double)x1,
               (double)y1);
        if (w->snapshot_rate_hz) printf("snapshots: %u Hz", w->snapshot_rate_hz);
        if (x->quantized)
            printf(", quantized: position %g, velocity %g", (double)w->position_quantum,
                   (double)w->velocity_quantum);
        if (w->snapshot_rate_hz || x->quantized) putchar('\n');
        if (x->quantized) cc_qsnap_init(&x->q, w->position_quantum, w->velocity_quantum);
        /* the quanta widen the event checks' tolerance (no own character: nothing else) */
        if (x->check)
            cc_check_world(x->check, w->gravity ? w->gravity->x : 0.0f,
                           w->gravity ? w->gravity->y : 0.0f, w->tick_rate_hz,
                           x->quantized ? w->position_quantum : 0.0f,
                           x->quantized ? w->velocity_quantum : 0.0f);
        if (x->o->udp && !cc_qbase_init(&x->base, x->o->udp_baselines)) {
            snprintf(x->message, sizeof x->message, "out of memory for the UDP baselines");
            watch_finish(x, CC_EXIT_FAIL);
            break;
        }
        x->welcomed = true;
        cc_session_set_view(c, 2, (x0 + x1) * 0.5f, (y0 + y1) * 0.5f, (x1 - x0) * 0.5f,
                            (y1 - y0) * 0.5f);
        cc_conn_flush(c);
        break;
    }
    case COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT:
        watch_on_snapshot(x, m->snapshot, len);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_EVENTS:
        watch_on_events(x, m->events);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR:
        printf("error %d (%s)%s\n", (int)m->error->code, m->error->message ? m->error->message : "",
               m->error->fatal ? " fatal" : "");
        if (m->error->fatal) {
            snprintf(x->message, sizeof x->message, "fatal error from the server: %s",
                     m->error->message ? m->error->message : "");
            watch_finish(x, CC_EXIT_FAIL);
        }
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE:
        /* A graceful end of the server (a drain) ends the watch cleanly: only a refusal, a lost
         * connection or a violation is a failure. */
        printf("goodbye: %s\n", m->goodbye->reason ? m->goodbye->reason : "");
        watch_finish(x, CC_EXIT_OK);
        break;
    default:
        break;
    }
    collide__v1__server_message__free_unpacked(m, NULL);
}

static void watch_failed(cc_conn *c, int status, const char *reason) {
    (void)status;
    watch_ctx *x = c->user;
    snprintf(x->message, sizeof x->message, "connection lost: %s", reason);
    watch_finish(x, CC_EXIT_FAIL);
}

static void watch_closed(cc_conn *c) { (void)c; }

static void watch_deadline(uv_timer_t *t) { watch_finish(t->data, CC_EXIT_OK); }
static void watch_signal(uv_signal_t *s, int signum) {
    (void)signum;
    watch_finish(s->data, CC_EXIT_OK);
}

static const cc_conn_hooks watch_hooks = {watch_connected, watch_frame, watch_failed, watch_closed};

static void watch_usage(FILE *f) {
    fprintf(f, "usage: collide-client watch [options]\n"
               "Joins as a spectator and prints each snapshot: a summary line, or every body.\n\n"
               "  --box x0,y0,x1,y1   the area to watch (default: the whole world from Welcome)\n"
               "  --bodies            print every body state, not only the summary\n"
               "  --count N           stop after N snapshots\n"
               "  --duration DURATION stop after this time (e.g. 10s)\n"
               "  --check             verify collision invariants on the stream\n"
               "  --check-tolerance U allowed overlap depth (default 0.01)\n"
               "  --quantized         ask for quantized snapshots (Snapshot.packed) and decode "
               "them\n"
               "  --snapshot-rate HZ  ask for HZ snapshots a second (the nearest tick rate / k; "
               "default 0 = every tick)\n" CC_COMMON_HELP
               "Exit status: 0 when stopped by --count, --duration, Ctrl-C or the server's "
               "Goodbye; 1 when the server refused or dropped the connection or (with --check) a "
               "violation was seen.\n");
}

/* What the command line asks beyond the common options. */
typedef struct watch_args {
    double duration; /* --duration in seconds (0: until stopped) */
    double tol;      /* --check-tolerance */
    bool check;      /* --check */
} watch_args;

/* Parses the command line into o, x and a. -1 to go on, else the exit status (--help, a usage
 * error). */
static int watch_parse(int argc, char **argv, cc_common_opts *o, watch_ctx *x, watch_args *a) {
    enum {
        OPT_BOX = CC_OPT_FIRST_FREE,
        OPT_BODIES,
        OPT_COUNT,
        OPT_DURATION,
        OPT_CHECK,
        OPT_TOL,
        OPT_QUANTIZED,
        OPT_SNAPSHOT_RATE
    };
    static const struct option longs[] = {
        CC_COMMON_LONG_OPTIONS,
        {"box", 1, NULL, OPT_BOX},
        {"bodies", 0, NULL, OPT_BODIES},
        {"count", 1, NULL, OPT_COUNT},
        {"duration", 1, NULL, OPT_DURATION},
        {"check", 0, NULL, OPT_CHECK},
        {"check-tolerance", 1, NULL, OPT_TOL},
        {"quantized", 0, NULL, OPT_QUANTIZED},
        {"snapshot-rate", 1, NULL, OPT_SNAPSHOT_RATE},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        int common = cc_common_option(CMD, c, optarg, o);
        if (common < 0) return CC_EXIT_USAGE;
        if (common > 0) continue;
        bool ok = true;
        switch (c) {
        case 'h':
            watch_usage(stdout);
            return CC_EXIT_OK;
        case OPT_BOX:
            ok = cc_parse_floats(CMD, "--box", optarg, x->box, 4);
            if (ok && (x->box[2] <= x->box[0] || x->box[3] <= x->box[1])) {
                fprintf(stderr, "collide-client " CMD ": --box: need x0 < x1 and y0 < y1\n");
                ok = false;
            }
            x->has_box = true;
            break;
        case OPT_BODIES:
            x->bodies = true;
            break;
        case OPT_COUNT:
            ok = cc_parse_u64(CMD, "--count", optarg, &x->count);
            break;
        case OPT_DURATION:
            ok = cc_parse_duration(CMD, "--duration", optarg, 0.001, 86400 * 365, &a->duration);
            break;
        case OPT_CHECK:
            a->check = true;
            break;
        case OPT_TOL:
            ok = cc_parse_double(CMD, "--check-tolerance", optarg, 0, 1e3, &a->tol);
            break;
        case OPT_QUANTIZED:
            x->quantized = true;
            break;
        case OPT_SNAPSHOT_RATE:
            ok = cc_parse_u32(CMD, "--snapshot-rate", optarg, 0, 100000, &x->snapshot_rate);
            break;
        default:
            fprintf(stderr, "collide-client " CMD ": see 'collide-client watch --help'\n");
            return CC_EXIT_USAGE;
        }
        if (!ok) return CC_EXIT_USAGE;
    }
    return cc_no_operands(CMD, argc, argv, optind) ? -1 : CC_EXIT_USAGE;
}

/* Connects and runs the loop until the watch ends; the exit status. */
static int watch_run(cc_common_opts *o, watch_ctx *x, const struct sockaddr_storage *addr,
                     double duration) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    uv_timer_init(&loop, &x->deadline);
    x->deadline.data = x;
    if (duration > 0) uv_timer_start(&x->deadline, watch_deadline, (uint64_t)(duration * 1000), 0);
    uv_signal_init(&loop, &x->sigint);
    x->sigint.data = x;
    uv_signal_start(&x->sigint, watch_signal, SIGINT);
    int rc = cc_common_connect(o, &x->conn, &loop, (const struct sockaddr *)addr, &watch_hooks, x);
    if (rc != 0) {
        cc_connect_failure(x->message, sizeof x->message, o, rc);
        watch_finish(x, CC_EXIT_FAIL);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    bool closed = cc_loop_close(&loop, CMD);
    return x->result < 0 || !closed ? CC_EXIT_FAIL : x->result;
}

int cc_watch_main(int argc, char **argv) {
    static cc_common_opts o;
    static watch_ctx x;
    memset(&x, 0, sizeof x);
    cc_common_defaults(&o);
    watch_args a = {.duration = 0.0, .tol = 0.01, .check = false};
    int parsed = watch_parse(argc, argv, &o, &x, &a);
    if (parsed >= 0) return parsed;
    struct sockaddr_storage addr;
    if (!cc_resolve_common(CMD, &o, &addr)) return CC_EXIT_FAIL;
    x.o = &o;
    x.quantized |= o.udp; /* UDP snapshots are always quantized */
    x.result = -1;
    x.ids = calloc(WATCH_SET_SLOTS, sizeof *x.ids);
    if (a.check) {
        x.check = malloc(sizeof *x.check);
        if (x.check) cc_check_view_init(x.check, (float)a.tol);
    }
    if (!x.ids || (a.check && !x.check)) {
        fprintf(stderr, "collide-client " CMD ": out of memory\n");
        return CC_EXIT_FAIL;
    }
    int result = watch_run(&o, &x, &addr, a.duration);
    if (result != CC_EXIT_OK) fprintf(stderr, "collide-client " CMD ": %s\n", x.message);
    if (a.check && cc_check_total(&x.check_stats) > 0) {
        fprintf(stderr, "collide-client " CMD ": %llu invariant violations\n",
                (unsigned long long)cc_check_total(&x.check_stats));
        result = CC_EXIT_FAIL;
    }
    free(x.ids);
    free(x.check);
    cc_qsnap_free(&x.q);
    cc_qbase_free(&x.base);
    return result;
}

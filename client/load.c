#include "load.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "backend.h"
#include "check.h"
#include "collide_rng.h"
#include "qbase.h"
#include "qsnap.h"
#include "cli.h"
#include "conn.h"
#include "procstat.h"
#include "report.h"
#include "session.h"
#include "ticket.h"
#include "wire_read.h"

#define CMD "load"
#define CC_ACK_RING 256u /* outstanding input_seq values remembered per player */
#define CC_TICK_MS 1u    /* scheduler resolution */
#define CC_REQ_HELLO 1u  /* request ids of the handshake */
#define CC_REQ_SPAWN 2u
#define CC_PING_PERIOD_US 1000000u /* one Ping per second */
/* --queries: RayCast request ids are CC_REQ_QUERY + their sequence (mod 2^31), so a QueryResult
 * or an Error is told apart from the handshake's; the send times of the last CC_QUERY_RING are
 * kept for the answer latency (an answer older than that is counted, not timed). */
#define CC_REQ_QUERY 0x80000000u
#define CC_QUERY_RING 64u
#define CC_QUERY_LENGTH 20.0f /* units: each ray goes this far in a random direction */
/* --pattern platformer: a walk lasts 1 to 4 s, a rest 0.5 to 1.5 s; a walker whose achieved
 * velocity across gravity stayed under 5% of its speed for CC_STUCK_INTENTS intents in a row
 * (its walking intent acknowledged) has met a wall and turns. */
#define CC_WALK_S 1.0
#define CC_WALK_MORE_S 3.0
#define CC_REST_S 0.5
#define CC_REST_MORE_S 1.0
#define CC_STUCK_INTENTS 3u
/* --pattern play (the play page's bots): spawned within CC_PLAY_SPREAD units of the world's centre
 * (without --spawn-box), each wanders within CC_PLAY_ROAM of where it spawned and, every 1.5 to 4
 * s, dodges: CC_PLAY_DODGE_S across its heading at twice its speed. */
#define CC_PLAY_SPREAD 20.0f
#define CC_PLAY_ROAM 25.0f
#define CC_PLAY_DODGE_S 0.3
#define CC_PLAY_DODGE_EVERY_S 1.5
#define CC_PLAY_DODGE_MORE_S 2.5

/* The platformer's character, as docs/operations.md "A side-on level" is laid out for: a box of
 * half extents (size, 2 size), 0.3 steps and snap, a jump of 12 u/s (2.4 units high there). */
static const Collide__V1__CharacterOptions cc_platformer_character = {
    PROTOBUF_C_MESSAGE_INIT(&collide__v1__character_options__descriptor),
    .step_height = 0.3f,
    .snap_distance = 0.3f,
    .jump_speed = 12.0f,
};

typedef enum player_state {
    P_IDLE = 0, /* not started yet */
    P_CONNECTING,
    P_HELLO,    /* Hello sent */
    P_SPAWNING, /* SpawnBody sent */
    P_RUNNING,  /* body owned, intents flowing */
    P_CLOSING,  /* cc_conn_close called */
    P_CLOSED,   /* handle closed */
} player_state;

typedef struct load_worker load_worker;

typedef struct load_player {
    cc_conn conn;             /* the connection (first: conn.user is the player) */
    load_worker *w;           /* owning worker */
    uint32_t slot;            /* index in the worker's arrays */
    uint8_t state;            /* player_state */
    bool ended_badly;         /* a disconnect or failure was already counted */
    bool welcomed;            /* Welcome received */
    uint64_t start_at_us;     /* ramp: when to connect */
    uint64_t phase_start_us;  /* connect / hello / spawn start time, per handshake step */
    uint64_t welcomed_at_us;  /* for client-seconds */
    uint64_t last_rx_us;      /* last frame received: stall detection */
    uint32_t body_id;         /* our body */
    uint32_t client_id;       /* Welcome.client_id */
    uint32_t sched_seq;       /* newest input_seq issued */
    uint32_t acked_seq;       /* newest input_seq acknowledged */
    uint64_t intents_base_us; /* intended time of seq 1 */
    uint64_t next_intent_us;  /* intended time of seq sched_seq + 1 */
    uint64_t next_ping_us;    /* when the next Ping is due */
    uint64_t next_query_us;   /* when the next RayCast is due (--queries; UINT64_MAX: never) */
    uint32_t query_seq;       /* RayCasts sent: their request ids count from CC_REQ_QUERY */
    uint64_t query_sent_us[CC_QUERY_RING]; /* send time by query_seq % CC_QUERY_RING */
    uint64_t last_snap_us;                 /* arrival of the previous snapshot */
    uint64_t intended[CC_ACK_RING];        /* intended send time by input_seq % CC_ACK_RING */
    float x, y;                            /* last known body position */
    float angle;                           /* walk/bounce heading */
    float spin;                            /* --spin: its turning speed, rad/s */
    float sent_vx, sent_vy;                /* the velocity of its last intent (--hold) */
    float stuck_x, stuck_y;                /* position at the last stuck test (bounce) */
    uint64_t stuck_at_us;                  /* time of the last stuck test */
    collide_rng rng;                       /* its draws */
    uint32_t room;                         /* --rooms: index of its room (0 without) */
    cc_check_view *check;                  /* non-NULL when this client runs the checker */
    /* --pattern platformer */
    float dir;             /* walking direction across gravity: 1 or -1 */
    bool resting;          /* in a rest (no velocity), else walking */
    uint64_t leg_until_us; /* when the walk or the rest ends */
    uint32_t walk_seq;     /* first input_seq of the current walk's direction */
    uint32_t stuck;        /* intents in a row that found it stopped */
    float vx, vy;          /* its body's velocity in the last snapshot that had it */
    bool grounded;         /* and whether it stood */
    bool have_up;          /* up_v holds the velocity along up seen before */
    float up_v;
    uint64_t seen_tick; /* tick of the snapshot before (ticks grounded) */
    /* --pattern play */
    float home[2];           /* where it spawned: it wanders about it */
    float dodge_side;        /* 1: to the left of its heading, -1: to the right */
    uint64_t dodge_until_us; /* dodging until then */
    uint64_t next_dodge_us;  /* the next dodge starts then */
    cc_qsnap *q;             /* --quantized or udp: its bodies in quanta, from the Welcome on */
    cc_qbase *base; /* --transport udp: its states after the last snapshots, the baselines */
} load_player;

typedef struct load_progress {
    uint64_t running;     /* players in P_RUNNING */
    uint64_t snapshots;   /* snapshots so far */
    uint64_t max_tick;    /* newest tick */
    uint64_t errors;      /* Error messages */
    uint64_t disconnects; /* disconnects + connect failures */
    uint64_t ack_p99_us;  /* intent-to-ack p99 so far */
    uint64_t violations;  /* check violations */
} load_progress;

typedef struct load_run {
    const load_opts *opts;        /* parsed options */
    struct sockaddr_storage addr; /* resolved server address */
    uint64_t start_us;            /* run start */
    uint64_t end_us;              /* intents stop */
    atomic_int stop;              /* SIGINT: wind down early */
    uv_async_t *done_async;       /* wakes the main loop when a worker finishes */
    atomic_uint workers_done;     /* finished workers */
} load_run;

typedef enum worker_phase { W_RUN, W_DRAIN, W_CLOSING } worker_phase;

struct load_worker {
    uv_loop_t loop;           /* this thread's loop */
    uv_timer_t timer;         /* the scheduler */
    pthread_t thread;         /* the thread */
    load_run *run;            /* shared run state (read-only but for stop) */
    load_player *players;     /* players of this worker */
    uint64_t *due_us;         /* next event per player, contiguous so the scan stays in cache */
    uint32_t count;           /* players */
    uint32_t first_index;     /* global index of players[0] */
    uint32_t next_to_start;   /* ramp cursor */
    uint32_t open;            /* connections not yet closed */
    uint8_t phase;            /* worker_phase */
    uint64_t drain_until_us;  /* end of the drain */
    uint64_t next_second_us;  /* next stall check */
    uint64_t next_publish_us; /* next progress publication */
    uint64_t last_tick_us;    /* previous scheduler run: a long gap defers stall checks */
    uint64_t tick_period_us;  /* from Welcome, for jitter */
    float world_min[2];       /* world bounds from Welcome (one world: same for all) */
    float up[2];              /* minus Welcome.gravity, unit ((0, 1) without gravity) */
    float vel_quantum;        /* quantized snapshots' velocity step (0: floats) */
    float world_max[2];
    cc_stats stats;              /* this worker's measurements */
    cc_room_stats *rooms;        /* --rooms: this worker's share per room, NULL without */
    pthread_mutex_t progress_mu; /* guards progress */
    load_progress progress;      /* published once per second for the progress line */
};

/* The player's room figures, NULL when --rooms is not in use. */
static cc_room_stats *player_room(const load_player *p) {
    return p->w->rooms ? &p->w->rooms[p->room] : NULL;
}

static void player_end(load_player *p, const char *reason, bool connect_failure) {
    if (p->ended_badly) return;
    p->ended_badly = true;
    load_worker *w = p->w;
    cc_room_stats *room = player_room(p);
    if (room) room->disconnects++;
    if (connect_failure)
        w->stats.connect_failures++;
    else
        w->stats.disconnects++;
    cc_reasons_add(&w->stats.reasons, reason, 1);
}

static void player_close(load_player *p) {
    if (p->state >= P_CLOSING) return;
    p->state = P_CLOSING;
    p->w->due_us[p->slot] = UINT64_MAX;
    cc_conn_close(&p->conn);
}

static void player_hook_closed(cc_conn *c) {
    load_player *p = c->user;
    load_worker *w = p->w;
    uint64_t now = cc_now_us();
    p->state = P_CLOSED;
    w->stats.bytes_in += c->bytes_in;
    w->stats.bytes_out += c->bytes_out;
    w->stats.frames_dropped += c->frames_dropped;
    w->stats.intents_unacked += p->sched_seq - p->acked_seq;
    if (p->welcomed) {
        double secs = (double)(now - p->welcomed_at_us) / 1e6;
        w->stats.client_seconds += secs;
        if (secs > 0.5) {
            double rate = (double)c->bytes_in / secs;
            if (w->stats.min_bytes_in_per_s < 0 || rate < w->stats.min_bytes_in_per_s)
                w->stats.min_bytes_in_per_s = rate;
            if (rate > w->stats.max_bytes_in_per_s) w->stats.max_bytes_in_per_s = rate;
        }
    }
    free(p->check);
    p->check = NULL;
    if (p->q) cc_qsnap_free(p->q);
    free(p->q);
    p->q = NULL;
    if (p->base) cc_qbase_free(p->base);
    free(p->base);
    p->base = NULL;
    w->open--;
    if (w->open == 0 && w->phase == W_CLOSING && !uv_is_closing((uv_handle_t *)&w->timer))
        uv_close((uv_handle_t *)&w->timer, NULL);
}

static void player_hook_failed(cc_conn *c, int status, const char *reason) {
    load_player *p = c->user;
    if (p->state < P_CLOSING) {
        char buf[CC_REASON_LEN];
        if (status < 0 && status != UV_EOF && status != UV_EPROTO && status != UV_ENOMEM)
            snprintf(buf, sizeof buf, "socket error: %s", reason);
        else
            snprintf(buf, sizeof buf, "%s", reason);
        player_end(p, buf, false);
    }
    p->state = P_CLOSING;
    p->w->due_us[p->slot] = UINT64_MAX;
}

/* --ticket-key: the ticket of one connection, valid from now for --ticket-ttl; NULL with the
 * reason in why on failure. */
static char *load_ticket(const load_opts *o, const char *name, const char *room, bool admin,
                         char *why, size_t why_size) {
    int64_t now = (int64_t)time(NULL);
    cc_ticket_claims claims = {
        .room = room,
        .sub = name,
        .iat = now,
        .exp = now + (int64_t)ceil(o->ticket_ttl_s),
        .admin = admin,
    };
    return cc_ticket_mint(&o->ticket, &claims, why, why_size);
}

static void player_hook_connected(cc_conn *c, int status) {
    load_player *p = c->user;
    load_worker *w = p->w;
    uint64_t now = cc_now_us();
    if (status != 0) {
        char buf[CC_REASON_LEN];
        snprintf(buf, sizeof buf, "connect: %s", uv_err_name(status));
        player_end(p, buf, true);
        p->state = P_CLOSING;
        return;
    }
    cc_hist_record(&w->stats.connect_us, now - p->phase_start_us);
    const load_opts *o = w->run->opts;
    char name[32];
    snprintf(name, sizeof name, "%s%u", o->name_prefix, w->first_index + p->slot);
    char room[CC_LOAD_ROOM_NAME + 1] = "";
    if (w->rooms)
        cc_load_room_name(room, sizeof room, o->room_prefix, p->room);
    else if (o->room)
        snprintf(room, sizeof room, "%s", o->room);
    /* Made at the connect, as a game's backend would hand one out at the join: its life runs
     * from here, whatever the ramp. */
    char *ticket = NULL;
    if (o->ticket.bytes) {
        char why[CC_REASON_LEN - 8];
        ticket = load_ticket(o, name, room, false, why, sizeof why);
        if (!ticket) {
            char buf[CC_REASON_LEN];
            snprintf(buf, sizeof buf, "ticket: %s", why);
            player_end(p, buf, true);
            player_close(p);
            return;
        }
    }
    cc_session_hello_ex(c, CC_REQ_HELLO, name, ticket ? ticket : o->common.token, room,
                        o->snapshot_rate, o->quantized);
    free(ticket);
    cc_conn_flush(c);
    p->state = P_HELLO;
    p->phase_start_us = now;
    p->last_rx_us = now;
}

static void player_spawn(load_player *p, uint64_t now) {
    const load_opts *o = p->w->run->opts;
    const load_worker *r = p->w;
    float x0, y0, x1, y1, margin = (float)o->size * 2.0f + 1.0f;
    if (o->spawn_box_set) {
        x0 = o->spawn_box[0];
        y0 = o->spawn_box[1];
        x1 = o->spawn_box[2];
        y1 = o->spawn_box[3];
    } else {
        x0 = r->world_min[0] + margin;
        y0 = r->world_min[1] + margin;
        x1 = r->world_max[0] - margin;
        y1 = r->world_max[1] - margin;
        if (x1 < x0) x0 = x1 = (r->world_min[0] + r->world_max[0]) * 0.5f;
        if (y1 < y0) y0 = y1 = (r->world_min[1] + r->world_max[1]) * 0.5f;
        if (o->pattern == PATTERN_PLAY) { /* where the play page puts its players */
            float cx = (x0 + x1) * 0.5f, cy = (y0 + y1) * 0.5f;
            x0 = fmaxf(x0, cx - CC_PLAY_SPREAD);
            x1 = fminf(x1, cx + CC_PLAY_SPREAD);
            y0 = fmaxf(y0, cy - CC_PLAY_SPREAD);
            y1 = fminf(y1, cy + CC_PLAY_SPREAD);
        }
    }
    float x = x0 + (x1 - x0) * collide_rng_unit(&p->rng);
    float y = y0 + (y1 - y0) * collide_rng_unit(&p->rng);
    if (o->pattern == PATTERN_PLATFORMER) {
        /* Without --spawn-box, no position: the world's spawn points, which the server takes in
         * turn skipping occupied ones (a side-on level's are on its floors). */
        float at[2] = {x, y};
        cc_spawn_msg sp;
        cc_session_spawn_character_fill(&sp, CC_REQ_SPAWN, (float)o->size, 2.0f * (float)o->size,
                                        o->spawn_box_set ? at : NULL, &cc_platformer_character);
        cc_conn_queue(&p->conn, &sp.m);
    } else {
        cc_session_spawn(&p->conn, CC_REQ_SPAWN, o->shape, (float)o->size, x, y);
    }
    cc_conn_flush(&p->conn);
    p->state = P_SPAWNING;
    p->phase_start_us = now;
}

/* UDP: the baseline store, and the qsnap its snapshots are read through. */
static bool player_base_init(load_player *p) {
    if (p->base) return true;
    if (!p->q) return false;
    p->base = malloc(sizeof *p->base);
    if (p->base && cc_qbase_init(p->base, p->w->run->opts->common.udp_baselines)) return true;
    free(p->base);
    p->base = NULL;
    return false;
}

static void on_welcome(load_player *p, const Collide__V1__Welcome *wm, uint64_t now) {
    load_worker *w = p->w;
    cc_hist_record(&w->stats.welcome_us, now - p->phase_start_us);
    w->stats.clients_welcomed++;
    p->welcomed = true;
    p->welcomed_at_us = now;
    p->client_id = wm->client_id;
    /* The snapshot period the server granted (Welcome.snapshot_rate_hz, 1.1), else the tick's. */
    uint32_t snap_hz = wm->snapshot_rate_hz ? wm->snapshot_rate_hz : wm->tick_rate_hz;
    if (snap_hz > 0) w->tick_period_us = 1000000u / snap_hz;
    const load_opts *o = w->run->opts;
    /* UDP snapshots are always quantized, whatever Hello.quantized said. */
    if ((o->quantized || o->common.udp) && !p->q) {
        p->q = malloc(sizeof *p->q);
        if (p->q) cc_qsnap_init(p->q, wm->position_quantum, wm->velocity_quantum);
    }
    if (o->common.udp && !player_base_init(p)) {
        player_end(p, "out of memory for the UDP baselines", false);
        player_close(p);
        return;
    }
    if (wm->world_min && wm->world_max) {
        w->world_min[0] = wm->world_min->x;
        w->world_min[1] = wm->world_min->y;
        w->world_max[0] = wm->world_max->x;
        w->world_max[1] = wm->world_max->y;
    }
    float gx = wm->gravity ? wm->gravity->x : 0.0f, gy = wm->gravity ? wm->gravity->y : 0.0f;
    float g = sqrtf(gx * gx + gy * gy);
    w->up[0] = g > 0.0f ? -gx / g : 0.0f;
    w->up[1] = g > 0.0f ? -gy / g : 1.0f;
    w->vel_quantum = p->q ? wm->velocity_quantum : 0.0f;
    if (p->check)
        cc_check_world(p->check, gx, gy, wm->tick_rate_hz, p->q ? wm->position_quantum : 0.0f,
                       w->vel_quantum);
    player_spawn(p, now);
}

/* The next event of a player's schedule: an intent, a Ping or a RayCast. */
static uint64_t player_next_due(const load_player *p) {
    uint64_t due = p->next_intent_us < p->next_ping_us ? p->next_intent_us : p->next_ping_us;
    return p->next_query_us < due ? p->next_query_us : due;
}

static void on_spawned(load_player *p, const Collide__V1__Spawned *sp, uint64_t now) {
    load_worker *w = p->w;
    const load_opts *o = w->run->opts;
    cc_hist_record(&w->stats.spawn_us, now - p->phase_start_us);
    w->stats.clients_spawned++;
    if (player_room(p)) player_room(p)->players++;
    p->body_id = sp->body_id;
    if (sp->position) {
        p->x = sp->position->x;
        p->y = sp->position->y;
    }
    p->state = P_RUNNING;
    p->angle = collide_rng_unit(&p->rng) * 6.2831853f;
    p->spin = (float)(o->spin * (2.0 * collide_rng_unit(&p->rng) - 1.0));
    p->stuck_x = p->x;
    p->stuck_y = p->y;
    p->stuck_at_us = now;
    p->home[0] = p->x;
    p->home[1] = p->y;
    p->next_dodge_us =
        now +
        (uint64_t)((CC_PLAY_DODGE_EVERY_S + CC_PLAY_DODGE_MORE_S * collide_rng_unit(&p->rng)) *
                   1e6);
    if (o->pattern == PATTERN_PLATFORMER) {
        p->dir = collide_rng_unit(&p->rng) < 0.5f ? -1.0f : 1.0f;
        /* Walking at once, off its spawn point: the server skips an occupied point, and a
         * player resting there would send the ramp's next ones onto each other. */
        p->resting = false;
        p->leg_until_us =
            now + (uint64_t)((CC_WALK_S + CC_WALK_MORE_S * collide_rng_unit(&p->rng)) * 1e6);
        if (p->check) cc_check_own_character(p->check, p->body_id, &cc_platformer_character);
    }
    /* A random phase spreads the clients over the period instead of firing them in lockstep. */
    double period = 1e6 / o->rate_hz;
    p->intents_base_us = now + (uint64_t)(period * collide_rng_unit(&p->rng));
    p->next_intent_us = p->intents_base_us;
    p->next_ping_us = now + (uint64_t)(CC_PING_PERIOD_US * collide_rng_unit(&p->rng));
    p->next_query_us = o->queries_hz > 0
                           ? now + (uint64_t)(1e6 / o->queries_hz * collide_rng_unit(&p->rng))
                           : UINT64_MAX;
    w->due_us[p->slot] = player_next_due(p);
}

/* With --quantized and the checker, the Snapshot must be unpacked (and expanded to world units)
 * anyway, so the scan's figures come from the unpacked message instead of a second walk of the
 * bytes. *snap is left for the caller to check and free (NULL when it does not unpack). */
static bool snapshot_unpack_scan(load_player *p, const cc_wire_envelope *env,
                                 cc_wire_snapshot_scan *scan, Collide__V1__Snapshot **snap) {
    *snap = collide__v1__snapshot__unpack(NULL, env->inner_len, env->inner);
    bool ok = *snap && cc_qsnap_expand(p->q, *snap);
    memset(scan, 0, sizeof *scan);
    if (!*snap) return ok;
    scan->tick = (*snap)->tick;
    scan->bodies = (uint32_t)(*snap)->n_bodies;
    scan->removed = (uint32_t)(*snap)->n_removed;
    for (size_t i = 0; i < (*snap)->n_bodies && p->body_id; i++) {
        const Collide__V1__BodyState *b = (*snap)->bodies[i];
        if (b->id != p->body_id) continue;
        scan->found = true;
        scan->body.id = b->id;
        scan->body.has_position = b->position != NULL;
        scan->body.x = b->position ? b->position->x : 0.0f;
        scan->body.y = b->position ? b->position->y : 0.0f;
        scan->body.last_input_seq = b->last_input_seq;
        scan->body.vx = b->velocity ? b->velocity->x : 0.0f;
        scan->body.vy = b->velocity ? b->velocity->y : 0.0f;
        scan->body.grounded = b->grounded;
        scan->body.ground_id = b->ground_id;
    }
    return ok;
}

/* Our body in a snapshot: its position, and the intent-to-ack latency of every input_seq it
 * acknowledges for the first time. */
static void player_saw_body(load_player *p, const cc_wire_snapshot_scan *scan, uint64_t now) {
    load_worker *w = p->w;
    if (scan->body.has_position) {
        p->x = scan->body.x;
        p->y = scan->body.y;
    }
    uint32_t acked = scan->body.last_input_seq;
    if (acked > p->sched_seq) acked = p->sched_seq; /* never trust past what we sent */
    cc_room_stats *room = player_room(p);
    for (uint32_t s = p->acked_seq + 1; s <= acked && acked > p->acked_seq; s++) {
        uint64_t intended = p->intended[s % CC_ACK_RING];
        cc_hist_record(&w->stats.ack_us, now > intended ? now - intended : 0);
        w->stats.intents_acked++;
        if (room) {
            cc_hist_record(&room->ack_us, now > intended ? now - intended : 0);
            room->intents_acked++;
        }
    }
    if (acked > p->acked_seq) p->acked_seq = acked;
    p->vx = scan->body.vx;
    p->vy = scan->body.vy;
    p->grounded = scan->body.grounded;
    /* a jump taken: the same reading as the checker's (check.h) */
    float up = p->vx * w->up[0] + p->vy * w->up[1];
    if (p->have_up && cc_check_jumped(p->up_v, up, w->vel_quantum)) w->stats.jumps_taken++;
    p->have_up = true;
    p->up_v = up;
}

/* Platformer: the ticks since the previous snapshot, counted grounded when this one shows it so
 * (its body's state is the last record of it: no record, no change). */
static void player_count_ground(load_player *p, uint64_t tick) {
    if (!p->body_id || p->w->run->opts->pattern != PATTERN_PLATFORMER) return;
    if (p->seen_tick && tick > p->seen_tick) {
        p->w->stats.ticks_observed += tick - p->seen_tick;
        if (p->grounded) p->w->stats.ticks_grounded += tick - p->seen_tick;
    }
    p->seen_tick = tick;
}

/* The figures of every snapshot applied: count, bodies, newest tick, inter-arrival and jitter. */
static void snapshot_arrived(load_player *p, uint64_t tick, size_t bodies, uint64_t now) {
    load_worker *w = p->w;
    w->stats.snapshots++;
    w->stats.snapshot_bodies += bodies;
    if (tick > w->stats.max_tick) w->stats.max_tick = tick;
    if (p->last_snap_us) {
        uint64_t gap = now - p->last_snap_us;
        cc_hist_record(&w->stats.gap_us, gap);
        if (w->tick_period_us)
            cc_hist_record(&w->stats.jitter_us, gap > w->tick_period_us ? gap - w->tick_period_us
                                                                        : w->tick_period_us - gap);
    }
    p->last_snap_us = now;
}

/* UDP: the snapshot is a delta against the state after its baseline_tick; cc_qsnap_expand_base
 * rebuilds the state in the baseline store and rewrites the message as the change since the
 * previous applied state, which the checker reads as it reads a TCP snapshot. The intent-to-ack
 * reads our body in the rebuilt state: under the size budget its record may be left out, and the
 * baseline's last_input_seq is then still what the server has applied. Every snapshot is answered
 * with an ack of the newest applied state, an ignored one too (the previous ack may be lost). */
static void on_udp_snapshot(load_player *p, const cc_wire_envelope *env, uint64_t now) {
    load_worker *w = p->w;
    Collide__V1__Snapshot *snap = collide__v1__snapshot__unpack(NULL, env->inner_len, env->inner);
    if (!snap) {
        w->stats.malformed++;
        return;
    }
    int r = cc_qsnap_expand_base(p->q, p->base, snap);
    if (r == CC_QBASE_APPLIED) {
        if (snap->baseline_tick == 0) w->stats.udp_full++;
        snapshot_arrived(p, snap->tick, snap->n_bodies, now);
        cc_wire_snapshot_scan scan = {.tick = snap->tick};
        scan.found = cc_qsnap_body_in(p->q, cc_qbase_newest(p->base), p->body_id, &scan.body);
        if (scan.found) player_saw_body(p, &scan, now);
        player_count_ground(p, snap->tick);
        if (p->check) cc_check_snapshot(p->check, snap, &w->stats.check);
    } else if (r == CC_QBASE_IGNORED) {
        w->stats.udp_ignored++;
    } else {
        w->stats.malformed++;
    }
    cc_qsnap_done(p->q, snap);
    collide__v1__snapshot__free_unpacked(snap, NULL);
    if (p->base->newest && cc_session_snapshot_ack(&p->conn, p->base->newest)) {
        w->stats.udp_acks_sent++;
        cc_conn_flush(&p->conn);
    }
}

static void on_snapshot(load_player *p, const cc_wire_envelope *env, uint64_t now) {
    load_worker *w = p->w;
    if (w->run->opts->common.udp) { /* packed against baselines: never the TCP reading */
        if (p->base) on_udp_snapshot(p, env, now);
        return;
    }
    cc_wire_snapshot_scan scan;
    Collide__V1__Snapshot *snap = NULL; /* unpacked (and expanded) when the checker runs */
    bool ok;
    if (p->q && p->check) {
        ok = snapshot_unpack_scan(p, env, &scan, &snap);
    } else if (p->q) {
        ok = cc_qsnap_scan(p->q, env->inner, env->inner_len, p->body_id, &scan);
    } else {
        ok = cc_wire_snapshot_scan_for(env->inner, env->inner_len, p->body_id, &scan);
    }
    if (!ok) {
        w->stats.malformed++;
        if (snap) {
            cc_qsnap_done(p->q, snap);
            collide__v1__snapshot__free_unpacked(snap, NULL);
        }
        return;
    }
    snapshot_arrived(p, scan.tick, scan.bodies, now);
    if (scan.found && p->body_id) player_saw_body(p, &scan, now);
    player_count_ground(p, scan.tick);
    if (snap) {
        cc_check_snapshot(p->check, snap, &w->stats.check);
        cc_qsnap_done(p->q, snap);
        collide__v1__snapshot__free_unpacked(snap, NULL);
    } else if (p->check) {
        /* The envelope was already walked: unpack only the Snapshot it located. */
        snap = collide__v1__snapshot__unpack(NULL, env->inner_len, env->inner);
        if (snap) {
            cc_check_snapshot(p->check, snap, &w->stats.check);
            collide__v1__snapshot__free_unpacked(snap, NULL);
        } else {
            w->stats.malformed++;
        }
    }
}

static void player_hook_frame(cc_conn *c, const uint8_t *body, size_t len) {
    load_player *p = c->user;
    load_worker *w = p->w;
    uint64_t now = cc_now_us();
    cc_wire_envelope env;
    w->stats.frames_in++;
    p->last_rx_us = now;
    if (!cc_wire_envelope_read(body, len, &env)) {
        w->stats.malformed++;
        return;
    }
    if (env.kind == CC_MSG_SNAPSHOT) {
        on_snapshot(p, &env, now);
        return;
    }
    if (env.kind == CC_MSG_QUERY_RESULT) {
        w->stats.query_results++;
        uint32_t seq = env.request_id & 0x7fffffffu;
        if ((env.request_id & CC_REQ_QUERY) && p->query_seq - seq <= CC_QUERY_RING &&
            p->query_seq != seq) {
            uint64_t sent = p->query_sent_us[seq % CC_QUERY_RING];
            cc_hist_record(&w->stats.query_us, now > sent ? now - sent : 0);
        }
        return;
    }
    if (env.kind == CC_MSG_PONG) {
        uint64_t sent, tick;
        if (cc_wire_pong_read(env.inner, env.inner_len, &sent, &tick) && sent && sent <= now) {
            cc_hist_record(&w->stats.rtt_us, now - sent);
            w->stats.pongs++;
        }
        return;
    }
    Collide__V1__ServerMessage *m = collide__v1__server_message__unpack(NULL, len, body);
    if (!m) {
        w->stats.malformed++;
        return;
    }
    char reason[CC_REASON_LEN];
    switch (m->msg_case) {
    case COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME:
        if (p->state == P_HELLO && m->welcome) on_welcome(p, m->welcome, now);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED:
        if (p->state == P_SPAWNING && m->spawned) on_spawned(p, m->spawned, now);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR: {
        uint32_t code = m->error ? (uint32_t)m->error->code : 0u;
        w->stats.errors[code < CC_ERROR_CODES - 1 ? code : CC_ERROR_CODES - 1]++;
        if (player_room(p)) player_room(p)->errors++;
        if (m->error && m->error->fatal) {
            /* The message too: UNAUTHENTICATED alone does not tell an expired ticket from a
             * bad signature. */
            const char *text = m->error->message ? m->error->message : "";
            snprintf(reason, sizeof reason, "fatal error: %s%s%s", cc_error_code_name(code),
                     text[0] ? ": " : "", text);
            player_end(p, reason, false);
            player_close(p);
        } else if (p->state == P_SPAWNING && m->request_id == CC_REQ_SPAWN) {
            /* Without a body the player cannot take part: say why and leave. */
            snprintf(reason, sizeof reason, "spawn refused: %s", cc_error_code_name(code));
            player_end(p, reason, false);
            player_close(p);
        }
        break;
    }
    case COLLIDE__V1__SERVER_MESSAGE__MSG_EVENTS:
        /* UDP: a tick's events travel apart from the snapshots, reliable on channel 0. */
        w->stats.udp_events++;
        if (p->check && m->events) cc_check_events(p->check, m->events, &w->stats.check);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE:
        snprintf(reason, sizeof reason, "goodbye: %s",
                 m->goodbye && m->goodbye->reason ? m->goodbye->reason : "");
        if (w->phase == W_RUN) player_end(p, reason, false);
        player_close(p);
        break;
    default:
        break;
    }
    collide__v1__server_message__free_unpacked(m, NULL);
}

static const cc_conn_hooks player_hooks = {
    .connected = player_hook_connected,
    .frame = player_hook_frame,
    .failed = player_hook_failed,
    .closed = player_hook_closed,
};

static void player_start(load_player *p, uint64_t now) {
    load_worker *w = p->w;
    w->stats.clients_started++;
    p->state = P_CONNECTING;
    p->phase_start_us = now;
    p->last_rx_us = now;
    int rc = cc_common_connect(&w->run->opts->common, &p->conn, &w->loop,
                               (const struct sockaddr *)&w->run->addr, &player_hooks, p);
    if (rc != 0) {
        char buf[CC_REASON_LEN];
        snprintf(buf, sizeof buf, "connect: %s", uv_err_name(rc));
        player_end(p, buf, true);
        if (p->conn.initialised) {
            w->open++; /* closed() follows */
            p->state = P_CLOSING;
        } else {
            p->state = P_CLOSED;
        }
        return;
    }
    w->open++;
}

/* Against a static the body stops: after half a second with less than a tenth of its way made,
 * it takes a new heading. */
static void player_unstick(load_player *p, float speed, uint64_t now) {
    if (now - p->stuck_at_us <= 500000u) return;
    float mx = p->x - p->stuck_x, my = p->y - p->stuck_y;
    if (mx * mx + my * my < 0.01f * speed * speed * 0.25f)
        p->angle = collide_rng_unit(&p->rng) * 6.2831853f;
    p->stuck_x = p->x;
    p->stuck_y = p->y;
    p->stuck_at_us = now;
}

/* --pattern play: a wander that turns a little each intent, heads back towards home past
 * CC_PLAY_ROAM from it (or near the world's bounds), turns when stuck, and now and then dodges. */
static void play_velocity(load_player *p, float speed, float margin, uint64_t now, float *vx,
                          float *vy) {
    const load_worker *r = p->w;
    if (now >= p->next_dodge_us) {
        p->dodge_until_us = now + (uint64_t)(CC_PLAY_DODGE_S * 1e6);
        p->next_dodge_us =
            now +
            (uint64_t)((CC_PLAY_DODGE_EVERY_S + CC_PLAY_DODGE_MORE_S * collide_rng_unit(&p->rng)) *
                       1e6);
        p->dodge_side = collide_rng_unit(&p->rng) < 0.5f ? -1.0f : 1.0f;
    }
    if (now < p->dodge_until_us) {
        *vx = -2.0f * speed * p->dodge_side * sinf(p->angle);
        *vy = 2.0f * speed * p->dodge_side * cosf(p->angle);
        return;
    }
    float hx = p->home[0] - p->x, hy = p->home[1] - p->y;
    p->angle += (collide_rng_unit(&p->rng) - 0.5f) * 0.3f;
    if (hx * hx + hy * hy > CC_PLAY_ROAM * CC_PLAY_ROAM || p->x < r->world_min[0] + margin ||
        p->x > r->world_max[0] - margin || p->y < r->world_min[1] + margin ||
        p->y > r->world_max[1] - margin)
        p->angle = atan2f(hy, hx) + (collide_rng_unit(&p->rng) - 0.5f);
    player_unstick(p, speed, now);
    *vx = speed * cosf(p->angle);
    *vy = speed * sinf(p->angle);
}

/* The velocity for the next intent, by pattern. */
static void player_velocity(load_player *p, const load_opts *o, uint64_t now, float *vx,
                            float *vy) {
    const load_worker *r = p->w;
    float speed = (float)o->speed;
    float margin = (float)o->size * 3.0f;
    switch (o->pattern) {
    case PATTERN_SWARM: {
        float tx = o->target_set ? o->target[0] : (r->world_min[0] + r->world_max[0]) * 0.5f;
        float ty = o->target_set ? o->target[1] : (r->world_min[1] + r->world_max[1]) * 0.5f;
        float dx = tx - p->x, dy = ty - p->y;
        float d = sqrtf(dx * dx + dy * dy);
        if (d > (float)o->size) {
            *vx = speed * dx / d;
            *vy = speed * dy / d;
        } else {
            p->angle += (collide_rng_unit(&p->rng) - 0.5f) * 2.0f;
            *vx = speed * cosf(p->angle);
            *vy = speed * sinf(p->angle);
        }
        return;
    }
    case PATTERN_BOUNCE: {
        float cx = cosf(p->angle), cy = sinf(p->angle);
        if ((p->x < r->world_min[0] + margin && cx < 0) ||
            (p->x > r->world_max[0] - margin && cx > 0))
            cx = -cx;
        if ((p->y < r->world_min[1] + margin && cy < 0) ||
            (p->y > r->world_max[1] - margin && cy > 0))
            cy = -cy;
        p->angle = atan2f(cy, cx);
        player_unstick(p, speed, now);
        *vx = speed * cosf(p->angle);
        *vy = speed * sinf(p->angle);
        return;
    }
    case PATTERN_PLAY:
        play_velocity(p, speed, margin, now, vx, vy);
        return;
    default: {
        p->angle += (collide_rng_unit(&p->rng) - 0.5f) * 1.0f;
        /* Near a wall, head back inwards rather than press against it for the rest of the run. */
        if (p->x < r->world_min[0] + margin || p->x > r->world_max[0] - margin ||
            p->y < r->world_min[1] + margin || p->y > r->world_max[1] - margin)
            p->angle = atan2f((r->world_min[1] + r->world_max[1]) * 0.5f - p->y,
                              (r->world_min[0] + r->world_max[0]) * 0.5f - p->x);
        *vx = speed * cosf(p->angle);
        *vy = speed * sinf(p->angle);
        return;
    }
    }
}

/* The platformer's next intent: walks and rests in turn, a turn at a wall, a jump now and then
 * (walking only, so that a rest is still for the checks of a character at rest). */
static void platformer_intent(load_player *p, const load_opts *o, uint64_t now, float *vx,
                              float *vy, bool *jump) {
    const load_worker *w = p->w;
    float speed = (float)o->speed, right[2] = {w->up[1], -w->up[0]};
    if (now >= p->leg_until_us) {
        p->resting = !p->resting;
        double secs = p->resting ? CC_REST_S + CC_REST_MORE_S * collide_rng_unit(&p->rng)
                                 : CC_WALK_S + CC_WALK_MORE_S * collide_rng_unit(&p->rng);
        p->leg_until_us = now + (uint64_t)(secs * 1e6);
        if (!p->resting && collide_rng_unit(&p->rng) < 0.3f) p->dir = -p->dir;
        p->walk_seq = p->sched_seq + 1u;
        p->stuck = 0;
    }
    *vx = *vy = 0.0f;
    *jump = false;
    if (p->resting) return;
    /* Its walk acknowledged and still no speed across gravity: a wall (or a step too high). */
    float across = p->vx * right[0] + p->vy * right[1];
    if (p->acked_seq >= p->walk_seq && fabsf(across) < 0.05f * speed) {
        if (++p->stuck >= CC_STUCK_INTENTS) {
            p->dir = -p->dir;
            p->walk_seq = p->sched_seq + 1u;
            p->stuck = 0;
        }
    } else {
        p->stuck = 0;
    }
    *vx = p->dir * speed * right[0];
    *vy = p->dir * speed * right[1];
    *jump = o->jumps_hz > 0.0 && collide_rng_unit(&p->rng) < (float)(o->jumps_hz / o->rate_hz);
}

/* Issues every input_seq whose intended time has come; a late loop sends only the newest of
 * them, but each keeps its own intended time, so lateness shows in the latency. */
static void player_due(load_player *p, uint64_t now) {
    load_worker *w = p->w;
    const load_opts *o = w->run->opts;
    bool dirty = false;
    cc_room_stats *room = player_room(p);
    float vx = 0.0f, vy = 0.0f;
    bool jump = false;
    if (p->next_intent_us <= now) {
        if (o->pattern == PATTERN_PLATFORMER)
            platformer_intent(p, o, now, &vx, &vy, &jump);
        else
            player_velocity(p, o, now, &vx, &vy);
        if (o->hold && p->sched_seq > 0 && vx == p->sent_vx && vy == p->sent_vy && !jump) {
            /* --hold: the intent in force already says this; its slots pass unused (the base
             * moves with them, so no input_seq is scheduled that is never sent) */
            double period = 1e6 / o->rate_hz;
            while (p->next_intent_us <= now) {
                p->intents_base_us += (uint64_t)period;
                p->next_intent_us += (uint64_t)period;
            }
        }
    }
    if (p->next_intent_us <= now) {
        double period = 1e6 / o->rate_hz;
        while (p->next_intent_us <= now) {
            if (p->sched_seq - p->acked_seq >= CC_ACK_RING - 1) {
                /* The ring is full: the oldest has waited CC_ACK_RING periods; give it up, but
                 * keep its wait so far in the histogram (a lower bound), so an overloaded server
                 * still shows in the tail instead of vanishing from it. */
                p->acked_seq++;
                uint64_t intended = p->intended[p->acked_seq % CC_ACK_RING];
                cc_hist_record(&w->stats.ack_us, now > intended ? now - intended : 0);
                w->stats.intents_expired++;
                if (room) cc_hist_record(&room->ack_us, now > intended ? now - intended : 0);
            }
            p->sched_seq++;
            p->intended[p->sched_seq % CC_ACK_RING] = p->next_intent_us;
            w->stats.intents_scheduled++;
            if (room) room->intents_scheduled++;
            p->next_intent_us = p->intents_base_us + (uint64_t)(period * (double)p->sched_seq);
        }
        uint64_t intended = p->intended[p->sched_seq % CC_ACK_RING];
        cc_hist_record(&w->stats.send_lag_us, now - intended);
        if (cc_session_move_full(&p->conn, p->body_id, p->sched_seq, vx, vy, p->spin, jump)) {
            w->stats.intents_sent++;
            w->stats.jumps_sent += jump;
        }
        if (p->check) cc_check_own_intent(p->check, p->sched_seq, vx, vy, jump);
        p->sent_vx = vx;
        p->sent_vy = vy;
        dirty = true;
    }
    if (p->next_ping_us <= now) {
        if (cc_session_ping(&p->conn, 0, now)) w->stats.pings_sent++;
        p->next_ping_us += CC_PING_PERIOD_US;
        if (p->next_ping_us <= now) p->next_ping_us = now + CC_PING_PERIOD_US;
        dirty = true;
    }
    if (p->next_query_us <= now) {
        /* from the body along a random direction, its own body left out; late slots coalesce */
        float a = collide_rng_unit(&p->rng) * 6.2831853f;
        uint32_t rid = CC_REQ_QUERY | (p->query_seq & 0x7fffffffu);
        if (cc_session_ray_cast(&p->conn, rid, p->x, p->y, CC_QUERY_LENGTH * cosf(a),
                                CC_QUERY_LENGTH * sinf(a), p->body_id)) {
            p->query_sent_us[p->query_seq % CC_QUERY_RING] = now;
            p->query_seq++;
            w->stats.queries_sent++;
        }
        double period = 1e6 / o->queries_hz;
        p->next_query_us += (uint64_t)period;
        if (p->next_query_us <= now) p->next_query_us = now + (uint64_t)period;
        dirty = true;
    }
    if (dirty) cc_conn_flush(&p->conn);
    w->due_us[p->slot] = player_next_due(p);
}

static void worker_publish(load_worker *w) {
    load_progress pr = {0};
    for (uint32_t i = 0; i < w->count; i++)
        pr.running += w->players[i].state == P_RUNNING;
    pr.snapshots = w->stats.snapshots;
    pr.max_tick = w->stats.max_tick;
    pr.errors = cc_stats_errors(&w->stats);
    pr.disconnects = w->stats.disconnects + w->stats.connect_failures;
    pr.ack_p99_us = cc_hist_percentile(&w->stats.ack_us, 99);
    pr.violations = cc_check_total(&w->stats.check);
    pthread_mutex_lock(&w->progress_mu);
    w->progress = pr;
    pthread_mutex_unlock(&w->progress_mu);
}

static void worker_close_all(load_worker *w) {
    w->phase = W_CLOSING;
    uv_timer_stop(&w->timer);
    for (uint32_t i = 0; i < w->count; i++) {
        load_player *p = &w->players[i];
        /* A client still joining when the run ends never took part: that is a failure to
         * report (the server was too slow to admit it), not a quiet omission. */
        if (p->state == P_CONNECTING)
            player_end(p, "still connecting at the end of the run", true);
        else if (p->state == P_HELLO)
            player_end(p, "no Welcome by the end of the run", false);
        else if (p->state == P_SPAWNING)
            player_end(p, "no Spawned by the end of the run", false);
        if (p->state == P_IDLE)
            p->state = P_CLOSED;
        else if (p->state < P_CLOSING)
            player_close(p);
    }
    if (w->open == 0) uv_close((uv_handle_t *)&w->timer, NULL);
}

static void worker_tick(uv_timer_t *t) {
    load_worker *w = t->data;
    load_run *r = w->run;
    const load_opts *o = r->opts;
    uint64_t now = cc_now_us();
    bool stop = atomic_load_explicit(&r->stop, memory_order_relaxed) != 0;

    if (w->phase == W_RUN && (now >= r->end_us || stop)) {
        w->phase = W_DRAIN;
        w->drain_until_us = now + (uint64_t)(o->drain_s * 1e6);
        for (uint32_t i = 0; i < w->count; i++)
            w->due_us[i] = UINT64_MAX;
    }
    if (w->phase == W_RUN) {
        while (w->next_to_start < w->count && w->players[w->next_to_start].start_at_us <= now)
            player_start(&w->players[w->next_to_start++], now);
        for (uint32_t i = 0; i < w->count; i++)
            if (w->due_us[i] <= now) player_due(&w->players[i], now);
        /* Every client has started and ended (a dead server): nothing left to wait for. */
        if (w->next_to_start == w->count && w->open == 0) {
            worker_close_all(w);
            return;
        }
    }
    /* After a long gap (this thread starved of CPU, or the machine paused) the sockets may hold
     * data not yet read: let one poll phase run before judging any connection silent. */
    bool loop_was_late = now - w->last_tick_us > 200000u;
    w->last_tick_us = now;
    if (now >= w->next_publish_us) {
        w->next_publish_us = now + 250000u;
        worker_publish(w);
    }
    if (now >= w->next_second_us && !loop_was_late) {
        w->next_second_us = now + 1000000u;
        uint64_t stall = (uint64_t)(o->stall_s * 1e6);
        for (uint32_t i = 0; i < w->count; i++) {
            load_player *p = &w->players[i];
            if (p->state >= P_CONNECTING && p->state < P_CLOSING && now - p->last_rx_us > stall) {
                player_end(p,
                           p->state == P_RUNNING ? "stalled: no data from the server"
                                                 : "handshake timed out",
                           p->state == P_CONNECTING);
                player_close(p);
            }
        }
    }
    if (w->phase == W_DRAIN) {
        bool all_acked = true;
        for (uint32_t i = 0; i < w->count && all_acked; i++) {
            const load_player *p = &w->players[i];
            if (p->state == P_RUNNING && p->acked_seq < p->sched_seq) all_acked = false;
        }
        if (all_acked || now >= w->drain_until_us || stop) worker_close_all(w);
    }
}

/* This thread's time on a CPU and waiting for one, from Linux's schedstat; false elsewhere. */
static bool thread_schedstat(double *run_s, double *wait_s) {
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f) return false;
    unsigned long long run = 0, wait = 0;
    bool ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
    fclose(f);
    *run_s = (double)run / 1e9;
    *wait_s = (double)wait / 1e9;
    return ok;
}

static void *worker_main(void *arg) {
    load_worker *w = arg;
    double run0 = 0, wait0 = 0, run1 = 0, wait1 = 0;
    bool sched = thread_schedstat(&run0, &wait0);
    w->last_tick_us = cc_now_us();
    w->next_second_us = w->last_tick_us + 1000000u;
    uv_timer_start(&w->timer, worker_tick, 0, CC_TICK_MS);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    if (sched && thread_schedstat(&run1, &wait1)) {
        w->stats.sched_run_s = run1 - run0;
        w->stats.sched_wait_s = wait1 - wait0;
    }
    worker_publish(w);
    atomic_fetch_add(&w->run->workers_done, 1u);
    uv_async_send(w->run->done_async);
    return NULL;
}

/* ---- main thread: options, progress, report ---- */

typedef struct load_main_ctx {
    load_run *run;           /* the run */
    load_worker *workers;    /* the workers */
    load_player *players;    /* all players, each worker owning a contiguous slice */
    uint64_t *due;           /* their next-event times, sliced the same way */
    uint32_t n_workers;      /* how many */
    uint32_t expected_done;  /* workers, plus the backend thread when there is one */
    uv_timer_t progress;     /* one line per second on a TTY */
    uv_signal_t sigint;      /* Ctrl-C: stop early, still report */
    uv_signal_t sigterm;     /* same */
    uv_async_t done;         /* a worker finished */
    bool show_progress;      /* progress line enabled */
    uint64_t last_tick;      /* for ticks/s */
    uint64_t last_snapshots; /* for snapshots/s */
} load_main_ctx;

static void main_progress(uv_timer_t *t) {
    load_main_ctx *m = t->data;
    load_progress sum = {0};
    for (uint32_t i = 0; i < m->n_workers; i++) {
        load_worker *w = &m->workers[i];
        pthread_mutex_lock(&w->progress_mu);
        load_progress pr = w->progress;
        pthread_mutex_unlock(&w->progress_mu);
        sum.running += pr.running;
        sum.snapshots += pr.snapshots;
        sum.errors += pr.errors;
        sum.disconnects += pr.disconnects;
        sum.violations += pr.violations;
        if (pr.max_tick > sum.max_tick) sum.max_tick = pr.max_tick;
        if (pr.ack_p99_us > sum.ack_p99_us) sum.ack_p99_us = pr.ack_p99_us;
    }
    double el = (double)(cc_now_us() - m->run->start_us) / 1e6;
    fprintf(stderr,
            "[%6.1fs] clients %llu/%u  ticks/s %llu  snapshots/s %llu  ack p99 %.2f ms  errors "
            "%llu  disconnects %llu%s",
            el, (unsigned long long)sum.running, m->run->opts->clients,
            (unsigned long long)(m->last_tick ? sum.max_tick - m->last_tick : 0),
            (unsigned long long)(sum.snapshots - m->last_snapshots),
            (double)sum.ack_p99_us / 1000.0, (unsigned long long)sum.errors,
            (unsigned long long)sum.disconnects, m->run->opts->check ? "" : "\n");
    if (m->run->opts->check)
        fprintf(stderr, "  violations %llu\n", (unsigned long long)sum.violations);
    m->last_tick = sum.max_tick;
    m->last_snapshots = sum.snapshots;
}

static void main_signal(uv_signal_t *s, int signum) {
    (void)signum;
    load_main_ctx *m = s->data;
    atomic_store(&m->run->stop, 1);
}

static void main_done(uv_async_t *a) {
    load_main_ctx *m = a->data;
    if (atomic_load(&m->run->workers_done) < m->expected_done) return;
    if (m->show_progress) uv_close((uv_handle_t *)&m->progress, NULL);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    uv_close((uv_handle_t *)&m->done, NULL);
}

uint32_t cc_load_room_of(uint32_t player, uint32_t rooms) { return player % rooms; }

/* An admin connection runs beside the players: for NPCs (--backend) or platforms (platformer). */
static bool load_has_backend(const load_opts *o) {
    return o->backend_npcs > 0 || o->n_platforms > 0;
}

typedef struct load_backend_thread {
    cc_backend_config cfg; /* what to run */
    cc_backend_stats *stats;
    load_run *run; /* to signal the end */
    pthread_t thread;
    char room[CC_LOAD_ROOM_NAME + 1]; /* cfg.room points here: lives as long as the thread */
    char *ticket; /* --ticket-key without --admin-token: cfg.admin_token points here (malloc'd) */
} load_backend_thread;

static void *backend_main(void *arg) {
    load_backend_thread *bt = arg;
    cc_backend_run(&bt->cfg, bt->stats);
    atomic_fetch_add(&bt->run->workers_done, 1u);
    uv_async_send(bt->run->done_async);
    return NULL;
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* The main thread's allocations and its loop's handles: the done async (wakes it as workers
 * finish), SIGINT/SIGTERM (stop early, still report) and the progress timer. */
static bool main_setup(load_main_ctx *m, load_run *run) {
    const load_opts *opts = run->opts;
    memset(m, 0, sizeof *m);
    m->run = run;
    m->n_workers = opts->threads;
    m->expected_done = opts->threads + (load_has_backend(opts) ? 1u : 0u);
    m->workers = calloc(opts->threads, sizeof *m->workers);
    m->players = calloc(opts->clients, sizeof *m->players);
    m->due = malloc(opts->clients * sizeof *m->due);
    if (!m->workers || !m->players || !m->due) {
        fprintf(stderr, "collide-client " CMD ": out of memory for %u clients\n", opts->clients);
        return false;
    }
    uv_loop_t *main_loop = uv_default_loop();
    uv_async_init(main_loop, &m->done, main_done);
    m->done.data = m;
    run->done_async = &m->done;
    uv_signal_init(main_loop, &m->sigint);
    uv_signal_init(main_loop, &m->sigterm);
    m->sigint.data = m->sigterm.data = m;
    uv_signal_start(&m->sigint, main_signal, SIGINT);
    uv_signal_start(&m->sigterm, main_signal, SIGTERM);
    m->show_progress = opts->progress == 1 || (opts->progress == -1 && isatty(STDERR_FILENO));
    if (m->show_progress) {
        uv_timer_init(main_loop, &m->progress);
        m->progress.data = m;
        uv_timer_start(&m->progress, main_progress, 1000, 1000);
    }
    return true;
}

/* Player g (global index) as slot i of worker w: its room, its own random stream and its place
 * in the ramp. Needs run->start_us. */
static void player_setup(load_player *p, load_worker *w, uint32_t i, uint32_t g) {
    const load_run *run = w->run;
    const load_opts *opts = run->opts;
    p->w = w;
    p->slot = i;
    p->room = opts->rooms > 0 ? cc_load_room_of(g, opts->rooms) : 0u;
    p->rng.state = opts->seed ^ (g * 2654435761u);
    if (p->rng.state == 0) p->rng.state = 0x9e3779b9u;
    collide_rng_next(&p->rng);
    /* Global index order: thread t starts clients t, t+threads, ... in ramp order. */
    p->start_at_us =
        run->start_us + (uint64_t)(opts->ramp_s * 1e6 * (double)g / (double)opts->clients);
    w->due_us[i] = UINT64_MAX;
    if (opts->check && g < opts->check_clients) {
        p->check = malloc(sizeof *p->check);
        if (p->check) cc_check_view_init(p->check, (float)opts->check_tolerance);
    }
}

/* Worker w gets players [first, first + n) of m's arrays, its stats, its loop and its timer. */
static bool worker_setup(load_main_ctx *m, load_worker *w, uint32_t first, uint32_t n) {
    const load_opts *opts = m->run->opts;
    w->run = m->run;
    w->players = m->players + first;
    w->due_us = m->due + first;
    w->count = n;
    w->first_index = first;
    cc_stats_init(&w->stats);
    if (opts->rooms > 0) {
        w->rooms = malloc(opts->rooms * sizeof *w->rooms);
        if (!w->rooms) {
            fprintf(stderr, "collide-client " CMD ": out of memory for %u rooms\n", opts->rooms);
            return false;
        }
        for (uint32_t r = 0; r < opts->rooms; r++)
            cc_room_stats_init(&w->rooms[r]);
    }
    pthread_mutex_init(&w->progress_mu, NULL);
    uv_loop_init(&w->loop);
    uv_timer_init(&w->loop, &w->timer);
    w->timer.data = w;
    /* Until the first Welcome: a harmless default so patterns never read garbage. */
    w->world_min[0] = w->world_min[1] = -100.0f;
    w->world_max[0] = w->world_max[1] = 100.0f;
    for (uint32_t i = 0; i < n; i++)
        player_setup(&w->players[i], w, i, first + i);
    return true;
}

/* Sets every worker up (the clients split as evenly as they go, the first threads taking one
 * more), then starts their threads. */
static bool workers_start(load_main_ctx *m) {
    const load_opts *opts = m->run->opts;
    for (uint32_t t = 0, first = 0; t < opts->threads; t++) {
        uint32_t n = opts->clients / opts->threads + (t < opts->clients % opts->threads ? 1u : 0u);
        if (!worker_setup(m, &m->workers[t], first, n)) return false;
        first += n;
    }
    for (uint32_t t = 0; t < opts->threads; t++) {
        if (pthread_create(&m->workers[t].thread, NULL, worker_main, &m->workers[t]) != 0) {
            fprintf(stderr, "collide-client " CMD ": cannot start thread %u\n", t);
            return false;
        }
    }
    return true;
}

/* --backend-npcs: the backend runs on its own thread over the same window as the players, and
 * joins the first room when there are rooms, else the default one. */
static bool backend_start(load_backend_thread *bt, cc_backend_stats *stats, load_run *run) {
    const load_opts *opts = run->opts;
    bt->room[0] = '\0';
    if (opts->rooms > 0)
        cc_load_room_name(bt->room, sizeof bt->room, opts->room_prefix, 0);
    else if (opts->room)
        snprintf(bt->room, sizeof bt->room, "%s", opts->room);
    cc_backend_stats_init(stats, opts->backend_npcs);
    stats->platforms_requested = opts->n_platforms;
    bt->ticket = NULL;
    if (opts->ticket.bytes && (!opts->admin_token || !opts->admin_token[0])) {
        /* An admin of its room by ticket: what a game's logic server holds when the daemon takes
         * only tickets. */
        char why[CC_REASON_LEN];
        bt->ticket = load_ticket(opts, "load-backend", bt->room, true, why, sizeof why);
        if (!bt->ticket) {
            fprintf(stderr, "collide-client " CMD ": the backend's ticket: %s\n", why);
            return false;
        }
    }
    bt->stats = stats;
    bt->run = run;
    bt->cfg = (cc_backend_config){
        .addr = (const struct sockaddr *)&run->addr,
        .max_frame = opts->common.max_frame,
        .ws = opts->common.ws,
        .admin_token = bt->ticket ? bt->ticket : opts->admin_token,
        .room = bt->room,
        .npcs = opts->backend_npcs,
        .platforms = opts->platforms,
        .n_platforms = opts->n_platforms,
        .rate_hz = opts->rate_hz,
        .queries_hz = opts->backend_queries_hz,
        .speed = opts->speed,
        .size = opts->size,
        .shape = opts->shape,
        .seed = opts->seed,
        .start_us = run->start_us,
        .end_us = run->end_us,
        .drain_s = opts->drain_s,
        .stall_s = opts->stall_s,
        .stop = &run->stop,
    };
    if (pthread_create(&bt->thread, NULL, backend_main, bt) != 0) {
        fprintf(stderr, "collide-client " CMD ": cannot start the backend thread\n");
        return false;
    }
    return true;
}

/* After the run: joins the workers and merges their figures into *total and (--rooms) *rooms,
 * both allocated here, and closes their loops; *leaked_handles is set if one would not close. */
static bool workers_collect(load_main_ctx *m, cc_stats **total, cc_room_stats **rooms,
                            bool *leaked_handles) {
    const load_opts *opts = m->run->opts;
    *rooms = NULL;
    if (opts->rooms > 0) {
        *rooms = malloc(opts->rooms * sizeof **rooms);
        if (!*rooms) return false;
        for (uint32_t r = 0; r < opts->rooms; r++)
            cc_room_stats_init(&(*rooms)[r]);
    }
    *total = malloc(sizeof **total);
    if (!*total) return false;
    cc_stats_init(*total);
    for (uint32_t t = 0; t < opts->threads; t++) {
        load_worker *w = &m->workers[t];
        pthread_join(w->thread, NULL);
        cc_stats_merge(*total, &w->stats);
        for (uint32_t r = 0; r < opts->rooms; r++)
            cc_room_stats_merge(&(*rooms)[r], &w->rooms[r]);
        free(w->rooms);
        if (!cc_loop_close(&w->loop, CMD)) *leaked_handles = true;
        pthread_mutex_destroy(&w->progress_mu);
    }
    return true;
}

/* Prints the report, its FAIL lines and the verdict to stdout, and writes --json; returns the
 * exit code the verdict (and the --json write) calls for. Brief (play-bots): one line instead of
 * the report. */
static int main_report(const load_opts *opts, const cc_report_meta *meta, const cc_stats *total) {
    char failures[8][160];
    int n_fail = cc_report_verdict(meta, total, &opts->thresholds, failures, 8);
    if (opts->brief)
        printf("%llu of %u bots played for %.1f s in room %s: %llu errors, %llu disconnects\n",
               (unsigned long long)total->clients_spawned, opts->clients, meta->elapsed_s,
               opts->room ? opts->room : "default", (unsigned long long)cc_stats_errors(total),
               (unsigned long long)(total->disconnects + total->connect_failures));
    for (uint32_t i = 0; opts->brief && i < total->reasons.len; i++)
        printf("  %llu ended: %s\n", (unsigned long long)total->reasons.items[i].count,
               total->reasons.items[i].text);
    if (!opts->brief) cc_report_text(stdout, meta, total);
    const char *fail_ptrs[8];
    for (int i = 0; i < n_fail; i++) {
        fail_ptrs[i] = failures[i];
        printf("FAIL: %s\n", failures[i]);
    }
    bool gated = opts->thresholds.has_p99 || opts->thresholds.has_errors ||
                 opts->thresholds.has_disconnects || opts->check;
    if (n_fail || !opts->brief)
        printf("%s\n", n_fail  ? "result: FAIL"
                       : gated ? "result: PASS"
                               : "result: PASS (no --max-* threshold was set)");
    fflush(stdout);
    int exit_code = n_fail ? CC_EXIT_FAIL : CC_EXIT_OK;
    if (opts->json_path && !cc_report_json(opts->json_path, meta, total, fail_ptrs, n_fail)) {
        fprintf(stderr, "collide-client " CMD ": cannot write --json '%s'\n", opts->json_path);
        exit_code = CC_EXIT_FAIL;
    }
    return exit_code;
}

/* --ticket-key: one ticket made before the threads start, so a key libjwt refuses stops the run
 * before it begins (and jansson's hash seed is set once, on this thread). -1 to go on. */
static int load_tickets_try(const load_opts *o) {
    if (!o->ticket.bytes) return -1;
    char why[CC_REASON_LEN];
    char *t = load_ticket(o, "load-0", "", false, why, sizeof why);
    if (!t) {
        fprintf(stderr, "collide-client " CMD ": cannot make tickets: %s\n", why);
        return CC_EXIT_FAIL;
    }
    free(t);
    return -1;
}

/* The run, its options parsed. */
static int load_main_run(const load_opts *o) {
    char msg[256];
    /* One descriptor per client, plus the loops' own (epoll, eventfd, signal pipe) and stdio. */
    if (!cc_fd_limit_ensure((uint64_t)o->clients + 16u * o->threads + 32u, msg, sizeof msg)) {
        fprintf(stderr, "collide-client " CMD ": %s\n", msg);
        return CC_EXIT_USAGE;
    }
    static load_run run;
    memset(&run, 0, sizeof run);
    run.opts = o;
    if (!cc_resolve_common(CMD, &o->common, &run.addr)) return CC_EXIT_FAIL;

    /* Before main_setup allocates: a refused flag leaves nothing to free. */
    if (o->pin_set && !cc_pin_cpu(o->pin_cpu, msg, sizeof msg)) {
        fprintf(stderr, "collide-client " CMD ": --pin: %s\n", msg);
        return CC_EXIT_USAGE;
    }
    double daemon_cpu0 = 0.0, daemon_cpu1 = 0.0;
    if (o->daemon_pid && !cc_proc_cpu_s(o->daemon_pid, &daemon_cpu0)) {
        fprintf(stderr, "collide-client " CMD ": --daemon-pid: cannot read /proc/%u/stat\n",
                o->daemon_pid);
        return CC_EXIT_USAGE;
    }
    load_main_ctx m;
    if (!main_setup(&m, &run)) return CC_EXIT_FAIL;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    /* Again, now: the window starts with the run, not with the check above. */
    if (o->daemon_pid && !cc_proc_cpu_s(o->daemon_pid, &daemon_cpu0)) daemon_cpu0 = 0.0;
    run.start_us = cc_now_us();
    run.end_us = run.start_us + (uint64_t)(o->duration_s * 1e6);
    if (!workers_start(&m)) return CC_EXIT_FAIL;
    static load_backend_thread bt;
    static cc_backend_stats backend_stats;
    if (load_has_backend(o) && !backend_start(&bt, &backend_stats, &run)) return CC_EXIT_FAIL;

    /* Runs until main_done has seen every thread finish and closed the main loop's handles. */
    uv_loop_t *main_loop = uv_default_loop();
    uv_run(main_loop, UV_RUN_DEFAULT);
    if (load_has_backend(o)) {
        pthread_join(bt.thread, NULL);
        free(bt.ticket);
    }
    bool leaked_handles = false;
    cc_stats *total;
    cc_room_stats *rooms;
    if (!workers_collect(&m, &total, &rooms, &leaked_handles)) return CC_EXIT_FAIL;
    getrusage(RUSAGE_SELF, &ru1);
    uint64_t end_us = cc_now_us();
    /* A daemon gone by now (it crashed) reads as no time rather than failing the report. */
    if (o->daemon_pid && !cc_proc_cpu_s(o->daemon_pid, &daemon_cpu1)) daemon_cpu1 = daemon_cpu0;
    if (!cc_loop_close(main_loop, CMD)) leaked_handles = true;

    cc_report_meta meta = {
        .host = o->common.host,
        .port = o->common.port,
        .transport = o->common.udp  ? "udp"
                     : o->common.ws ? "ws"
                                    : "tcp",
        .clients = o->clients,
        .threads = o->threads,
        .rate_hz = o->rate_hz,
        .duration_s = o->duration_s,
        .ramp_s = o->ramp_s,
        .pattern = cc_load_pattern_names[o->pattern],
        .shape = cc_load_shape_names[o->shape],
        .elapsed_s = (double)(end_us - run.start_us) / 1e6,
        .cpu_user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime),
        .cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
        .check = o->check,
        .check_clients = o->check_clients,
        .rooms = o->rooms,
        .room_prefix = o->room_prefix,
        .room_stats = rooms,
        .backend = load_has_backend(o) ? &backend_stats : NULL,
        .pin_cpu = o->pin_set ? (int64_t)o->pin_cpu : -1,
        .daemon_pid = o->daemon_pid,
        .daemon_cpu_s = daemon_cpu1 - daemon_cpu0,
        .daemon_wall_s = (double)(end_us - run.start_us) / 1e6,
    };
    int exit_code = main_report(o, &meta, total);
    if (leaked_handles) exit_code = CC_EXIT_FAIL;
    free(total);
    free(rooms);
    free(m.players);
    free(m.due);
    free(m.workers);
    return exit_code;
}

int cc_load_run(const load_opts *o) {
    int rc = load_tickets_try(o);
    return rc < 0 ? load_main_run(o) : rc;
}

int cc_load_main(int argc, char **argv) {
    static load_opts opts;
    int rc = cc_load_parse(argc, argv, &opts);
    if (rc >= 0) return rc;
    rc = cc_load_run(&opts);
    cc_ticket_key_free(&opts.ticket);
    return rc;
}

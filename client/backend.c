#include "backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cli.h"
#include "collide_rng.h"
#include "conn.h"
#include "frame.h"
#include "session.h"

#define BK_RING 256u    /* outstanding batch seqs remembered (intended send times) */
#define BK_REQ_HELLO 1u /* request ids: Hello, SetView, the batches, then the spawns */
#define BK_REQ_VIEW 2u
#define BK_REQ_BATCH 3u
#define BK_REQ_SPAWN_BASE 1000u /* spawn i is request BK_REQ_SPAWN_BASE + i */
/* RayCast number i is request BK_REQ_QUERY | i (i < 2^31: 29 hours at 20,000 a second); the send
 * times of the last BK_QUERY_RING are kept, far more than are ever outstanding. */
#define BK_REQ_QUERY 0x80000000u
#define BK_QUERY_RING 65536u
#define BK_QUERY_LENGTH 20.0f /* units: each ray goes this far in a random direction */
#define BK_QUERY_BURST                                                                             \
    1000u /* casts sent in one timer call at most (catching up after a stall)                      \
           */
#define BK_PLATFORM_ARRIVE 0.05f      /* units: a platform this near its goal turns back */
#define BK_PLATFORM_STALL_US 1000000u /* ... as does one that got no nearer for this long */

typedef enum bk_phase {
    BK_CONNECTING,
    BK_HELLO,
    BK_SPAWNING,
    BK_RUNNING,
    BK_DRAIN,
    BK_CLOSED
} bk_phase;

/* Frames are written from two growable buffers (one in flight, one filling): a batch of
 * thousands of intents, or thousands of pipelined spawns, are far past cc_conn's fixed ones. */
typedef struct bk_out {
    uint8_t *buf[2]; /* the two buffers (heap, grow by doubling) */
    size_t len[2];   /* bytes held in each */
    size_t cap[2];   /* their capacity */
    uint8_t active;  /* buffer that collects new frames */
    bool writing;    /* a uv_write is in flight from buf[!active] */
    uv_write_t req;  /* the write in flight */
} bk_out;

typedef struct bk_npc {
    uint32_t body_id; /* 0 until Spawned */
    uint32_t acked;   /* newest input_seq acknowledged */
    float x, y;       /* last known position */
    float angle;      /* heading */
    /* a platform (index cfg->npcs + k: cfg->platforms[k]) */
    bool back;            /* heading for `from` (else for `to`) */
    float best;           /* its least distance to the goal on this leg */
    uint64_t progress_us; /* when it last got nearer */
} bk_npc;

typedef struct bk {
    const cc_backend_config *cfg;     /* what to run */
    cc_backend_stats *st;             /* where the figures go */
    uv_loop_t loop;                   /* this thread's loop */
    uv_timer_t timer;                 /* 1 ms scheduler */
    cc_conn conn;                     /* connect and read (writes go through out) */
    bk_out out;                       /* the frames to send */
    uint8_t phase;                    /* bk_phase */
    bool conn_open;                   /* conn handle not yet closed */
    uint64_t last_rx_us;              /* stall detection */
    uint64_t drain_until_us;          /* end of the drain */
    uint64_t base_us;                 /* intended time of seq 1 */
    uint64_t next_batch_us;           /* intended time of seq + 1 */
    uint32_t seq;                     /* newest input_seq issued (the same for every NPC) */
    uint32_t answered;                /* spawns answered (Spawned or Error) */
    uint64_t intended[BK_RING];       /* intended send time by seq % BK_RING */
    float world_min[2], world_max[2]; /* from Welcome */
    collide_rng rng;                  /* for the headings */
    bk_npc *npcs;                     /* cfg->npcs NPCs, then cfg->n_platforms platforms */
    uint32_t bodies;                  /* cfg->npcs + cfg->n_platforms */
    uint32_t *alive;                  /* indices of spawned NPCs, in batch order */
    uint32_t n_alive;
    uint32_t *table;     /* body id -> npc index + 1, open addressing, 0 = empty */
    uint32_t *table_ids; /* the key of each slot */
    uint32_t table_mask;
    /* The batch, built in place each tick from these arrays (n_alive entries used). */
    Collide__V1__MoveIntent *items;      /* the items */
    Collide__V1__MoveIntent **item_ptrs; /* pointers to them, as protobuf-c wants */
    Collide__V1__Vec2 *vels;             /* their velocities */
    uint32_t *ids;                       /* body id per item */
    float *vx, *vy;                      /* velocity per item */
    /* --backend-queries */
    uint64_t query_base_us;  /* intended time of cast 0 */
    uint32_t query_seq;      /* casts sent: the next one's number */
    uint64_t *query_sent_us; /* BK_QUERY_RING send times, by number % BK_QUERY_RING */
} bk;

void cc_backend_fill_batch(Collide__V1__ClientMessage *m, Collide__V1__MoveIntents *batch,
                           Collide__V1__MoveIntent *items, Collide__V1__MoveIntent **item_ptrs,
                           Collide__V1__Vec2 *vels, uint32_t n, const uint32_t *body_ids,
                           uint32_t seq, const float *vx, const float *vy) {
    collide__v1__client_message__init(m);
    collide__v1__move_intents__init(batch);
    for (uint32_t i = 0; i < n; i++) {
        collide__v1__move_intent__init(&items[i]);
        collide__v1__vec2__init(&vels[i]);
        vels[i].x = vx[i];
        vels[i].y = vy[i];
        items[i].body_id = body_ids[i];
        items[i].input_seq = seq;
        items[i].velocity = &vels[i];
        item_ptrs[i] = &items[i];
    }
    batch->n_intents = n;
    batch->intents = item_ptrs;
    m->request_id = BK_REQ_BATCH;
    m->msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE_BATCH;
    m->move_batch = batch;
}

static void bk_fail(bk *b, const char *why) {
    if (!b->st->failure[0]) snprintf(b->st->failure, sizeof b->st->failure, "%s", why);
}

static void bk_close(bk *b) {
    if (b->phase == BK_CLOSED) return;
    b->phase = BK_CLOSED;
    uv_timer_stop(&b->timer);
    if (b->conn_open) cc_conn_close(&b->conn);
    if (!uv_is_closing((uv_handle_t *)&b->timer)) uv_close((uv_handle_t *)&b->timer, NULL);
}

static bool bk_queue(bk *b, const Collide__V1__ClientMessage *m) {
    bk_out *o = &b->out;
    size_t body = collide__v1__client_message__get_packed_size(m);
    size_t need = FRAME_MAX_PREFIX + body;
    uint8_t a = o->active;
    if (o->len[a] + need > o->cap[a]) {
        size_t cap = o->cap[a] ? o->cap[a] : 65536u;
        while (cap < o->len[a] + need)
            cap *= 2u;
        uint8_t *nb = realloc(o->buf[a], cap);
        if (!nb) return false;
        o->buf[a] = nb;
        o->cap[a] = cap;
    }
    uint8_t *p = o->buf[a] + o->len[a];
    size_t prefix = frame_write_prefix((uint32_t)body, p);
    collide__v1__client_message__pack(m, p + prefix);
    o->len[a] += prefix + body;
    return true;
}

static void bk_flush(bk *b);

static void bk_written(uv_write_t *req, int status) {
    bk *b = req->data;
    b->out.writing = false;
    b->out.len[b->out.active ^ 1u] = 0;
    if (status == UV_ECANCELED || b->phase == BK_CLOSED) return;
    if (status < 0) {
        char why[CC_REASON_LEN];
        snprintf(why, sizeof why, "write: %s", uv_err_name(status));
        bk_fail(b, why);
        bk_close(b);
        return;
    }
    bk_flush(b);
}

static void bk_flush(bk *b) {
    bk_out *o = &b->out;
    if (o->writing || o->len[o->active] == 0 || b->phase == BK_CLOSED) return;
    uint8_t a = o->active;
    uv_buf_t buf = uv_buf_init((char *)o->buf[a], (unsigned)o->len[a]);
    o->active ^= 1u;
    o->writing = true;
    o->req.data = b;
    int rc = uv_write(&o->req, (uv_stream_t *)&b->conn.tcp, &buf, 1, bk_written);
    if (rc != 0) {
        o->writing = false;
        o->len[a] = 0;
        bk_fail(b, "write refused");
        bk_close(b);
    }
}

static bool bk_table_put(bk *b, uint32_t body_id, uint32_t npc) {
    for (uint32_t h = (body_id * 2654435761u) & b->table_mask, n = 0; n <= b->table_mask;
         h = (h + 1u) & b->table_mask, n++) {
        if (b->table[h] == 0) {
            b->table[h] = npc + 1u;
            b->table_ids[h] = body_id;
            return true;
        }
    }
    return false;
}

static int64_t bk_table_get(const bk *b, uint32_t body_id) {
    for (uint32_t h = (body_id * 2654435761u) & b->table_mask, n = 0; n <= b->table_mask;
         h = (h + 1u) & b->table_mask, n++) {
        if (b->table[h] == 0) return -1;
        if (b->table_ids[h] == body_id) return (int64_t)b->table[h] - 1;
    }
    return -1;
}

/* Grid positions over the world, so the NPCs do not start on top of each other. */
static void bk_spawn_all(bk *b) {
    const cc_backend_config *c = b->cfg;
    float margin = (float)c->size * 2.0f + 1.0f;
    float x0 = b->world_min[0] + margin, y0 = b->world_min[1] + margin;
    float w = b->world_max[0] - margin - x0, h = b->world_max[1] - margin - y0;
    if (w < 0) w = 0;
    if (h < 0) h = 0;
    uint32_t cols = (uint32_t)ceil(sqrt((double)c->npcs * (w > 0 && h > 0 ? w / h : 1.0)));
    if (cols == 0) cols = 1;
    uint32_t rows = (c->npcs + cols - 1u) / cols;
    for (uint32_t i = 0; i < c->npcs; i++) {
        float fx = cols > 1 ? (float)(i % cols) / (float)(cols - 1u) : 0.5f;
        float fy = rows > 1 ? (float)(i / cols) / (float)(rows - 1u) : 0.5f;
        b->npcs[i].x = x0 + w * fx;
        b->npcs[i].y = y0 + h * fy;
        b->npcs[i].angle = collide_rng_unit(&b->rng) * 6.2831853f;
    }
    for (uint32_t k = 0; k < c->n_platforms; k++) {
        bk_npc *n = &b->npcs[c->npcs + k];
        n->x = c->platforms[k].from[0];
        n->y = c->platforms[k].from[1];
        n->best = INFINITY;
    }
    /* The same message cc_session_spawn sends, into our own buffer; a platform is a box. */
    for (uint32_t i = 0; i < b->bodies; i++) {
        cc_spawn_msg sp;
        const cc_platform *pl = i >= c->npcs ? &c->platforms[i - c->npcs] : NULL;
        cc_session_spawn_fill(&sp, BK_REQ_SPAWN_BASE + i, pl ? 0 : c->shape,
                              pl ? pl->half[0] : (float)c->size, b->npcs[i].x, b->npcs[i].y);
        if (pl) sp.half.y = pl->half[1];
        if (!bk_queue(b, &sp.m)) {
            bk_fail(b, "out of memory for the spawns");
            bk_close(b);
            return;
        }
    }
    bk_flush(b);
}

static void bk_start_running(bk *b, uint64_t now) {
    b->phase = BK_RUNNING;
    b->base_us = now;
    b->next_batch_us = now;
    b->query_base_us = now;
    if (b->n_alive == 0) bk_fail(b, "no NPC was spawned");
    if (b->st->platforms_spawned < b->cfg->n_platforms) bk_fail(b, "a platform was not spawned");
}

static void bk_hook_connected(cc_conn *c, int status) {
    bk *b = c->user;
    if (status != 0) {
        char why[CC_REASON_LEN];
        snprintf(why, sizeof why, "connect: %s", uv_err_name(status));
        bk_fail(b, why);
        bk_close(b);
        return;
    }
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = CC_PROTOCOL_VERSION;
    h.name = (char *)"load-backend";
    h.token = (char *)b->cfg->admin_token;
    if (b->cfg->room && b->cfg->room[0]) h.room = (char *)b->cfg->room;
    m.request_id = BK_REQ_HELLO;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    bk_queue(b, &m);
    bk_flush(b);
    b->phase = BK_HELLO;
    b->last_rx_us = cc_now_us();
}

static void bk_on_welcome(bk *b, const Collide__V1__Welcome *w) {
    if (!w->admin) {
        bk_fail(b, "not an admin (check --admin-token or --ticket-key)");
        bk_close(b);
        return;
    }
    if (w->tick_rate_hz > 0) b->st->tick_period_us = 1000000u / w->tick_rate_hz;
    if (w->world_min && w->world_max) {
        b->world_min[0] = w->world_min->x;
        b->world_min[1] = w->world_min->y;
        b->world_max[0] = w->world_max->x;
        b->world_max[1] = w->world_max->y;
    }
    /* The whole world in view, so every NPC shows in the snapshots and its acks can be seen. */
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__SetView v = COLLIDE__V1__SET_VIEW__INIT;
    Collide__V1__Vec2 center = COLLIDE__V1__VEC2__INIT, half = COLLIDE__V1__VEC2__INIT;
    center.x = (b->world_min[0] + b->world_max[0]) * 0.5f;
    center.y = (b->world_min[1] + b->world_max[1]) * 0.5f;
    half.x = (b->world_max[0] - b->world_min[0]) * 0.5f + 1.0f;
    half.y = (b->world_max[1] - b->world_min[1]) * 0.5f + 1.0f;
    v.center = &center;
    v.half_extents = &half;
    m.request_id = BK_REQ_VIEW;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW;
    m.set_view = &v;
    bk_queue(b, &m);
    b->phase = BK_SPAWNING;
    bk_spawn_all(b);
}

static void bk_on_snapshot(bk *b, const Collide__V1__Snapshot *s, uint64_t now) {
    for (size_t i = 0; i < s->n_bodies; i++) {
        const Collide__V1__BodyState *bs = s->bodies[i];
        int64_t k = bk_table_get(b, bs->id);
        if (k < 0) continue;
        bk_npc *n = &b->npcs[k];
        if (bs->position) {
            n->x = bs->position->x;
            n->y = bs->position->y;
        }
        uint32_t acked = bs->last_input_seq;
        if (acked > b->seq) acked = b->seq; /* never trust past what was sent */
        for (uint32_t q = n->acked + 1u; q <= acked && acked > n->acked; q++) {
            uint64_t intended = b->intended[q % BK_RING];
            cc_backend_ack(b->st, now > intended ? now - intended : 0);
        }
        if (acked > n->acked) n->acked = acked;
    }
}

/* A QueryResult or Error answering cast number rid & ~BK_REQ_QUERY: its latency (results only),
 * once; answers to numbers never sent or forgotten by the ring are not counted. */
static void bk_on_query_answer(bk *b, uint32_t rid, bool result, uint64_t now) {
    uint32_t seq = rid & ~BK_REQ_QUERY;
    if (!(rid & BK_REQ_QUERY) || seq >= b->query_seq || b->query_seq - seq > BK_QUERY_RING) return;
    if (result) {
        uint64_t sent = b->query_sent_us[seq % BK_QUERY_RING];
        cc_hist_record(&b->st->query_us, now > sent ? now - sent : 0);
        b->st->query_results++;
    } else {
        b->st->query_errors++;
    }
}

static void bk_hook_frame(cc_conn *c, const uint8_t *body, size_t len) {
    bk *b = c->user;
    uint64_t now = cc_now_us();
    b->last_rx_us = now;
    Collide__V1__ServerMessage *m = collide__v1__server_message__unpack(NULL, len, body);
    if (!m) {
        bk_fail(b, "malformed frame from the server");
        bk_close(b);
        return;
    }
    switch (m->msg_case) {
    case COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME:
        if (b->phase == BK_HELLO && m->welcome) bk_on_welcome(b, m->welcome);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED:
        if (b->phase == BK_SPAWNING && m->spawned && m->request_id >= BK_REQ_SPAWN_BASE &&
            m->request_id - BK_REQ_SPAWN_BASE < b->bodies) {
            uint32_t i = m->request_id - BK_REQ_SPAWN_BASE;
            if (b->npcs[i].body_id == 0 && bk_table_put(b, m->spawned->body_id, i)) {
                b->npcs[i].body_id = m->spawned->body_id;
                b->alive[b->n_alive++] = i;
                if (i < b->cfg->npcs)
                    b->st->npcs_spawned++;
                else
                    b->st->platforms_spawned++;
                b->answered++;
            }
        }
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT:
        if (m->snapshot) bk_on_snapshot(b, m->snapshot, now);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_QUERY_RESULT:
        bk_on_query_answer(b, m->request_id, true, now);
        break;
    case COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR: {
        const Collide__V1__Error *e = m->error;
        uint32_t code = e ? (uint32_t)e->code : 0u;
        cc_backend_error_add(b->st, code, e ? e->index : 0u, m->request_id);
        bk_on_query_answer(b, m->request_id, false, now);
        if (b->phase == BK_SPAWNING && m->request_id >= BK_REQ_SPAWN_BASE) b->answered++;
        if (e && e->fatal) {
            char why[CC_REASON_LEN];
            snprintf(why, sizeof why, "fatal error: %s", cc_error_code_name(code));
            bk_fail(b, why);
            bk_close(b);
        }
        break;
    }
    case COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE:
        if (b->phase < BK_DRAIN) bk_fail(b, "goodbye from the server");
        bk_close(b);
        break;
    default:
        break;
    }
    collide__v1__server_message__free_unpacked(m, NULL);
    if (b->phase == BK_SPAWNING && b->answered >= b->bodies) bk_start_running(b, now);
}

static void bk_hook_failed(cc_conn *c, int status, const char *reason) {
    bk *b = c->user;
    (void)status;
    if (b->phase < BK_DRAIN) {
        char why[CC_REASON_LEN];
        snprintf(why, sizeof why, "connection lost: %s", reason);
        bk_fail(b, why);
    }
    bk_close(b);
}

static void bk_hook_closed(cc_conn *c) {
    bk *b = c->user;
    b->conn_open = false;
}

static const cc_conn_hooks bk_hooks = {
    .connected = bk_hook_connected,
    .frame = bk_hook_frame,
    .failed = bk_hook_failed,
    .closed = bk_hook_closed,
};

/* Headings wander a little each tick and turn back inwards near a wall. */
static void bk_velocity(bk *b, bk_npc *n, float *vx, float *vy) {
    float speed = (float)b->cfg->speed, margin = (float)b->cfg->size * 3.0f;
    n->angle += (collide_rng_unit(&b->rng) - 0.5f) * 0.5f;
    if (n->x < b->world_min[0] + margin || n->x > b->world_max[0] - margin ||
        n->y < b->world_min[1] + margin || n->y > b->world_max[1] - margin)
        n->angle = atan2f((b->world_min[1] + b->world_max[1]) * 0.5f - n->y,
                          (b->world_min[0] + b->world_max[0]) * 0.5f - n->x);
    *vx = speed * cosf(n->angle);
    *vy = speed * sinf(n->angle);
}

/* A platform's velocity for the next batch: towards its goal at its speed, slowing so as not to
 * pass it in one batch period; at the goal, or stalled (a mover does not push what is in its way:
 * a character under the lift), it turns back. Steered from the snapshots, as a game server would
 * drive one. */
static void bk_platform_velocity(bk *b, bk_npc *n, uint64_t now, float *vx, float *vy) {
    const cc_platform *pl = &b->cfg->platforms[n - b->npcs - b->cfg->npcs];
    const float *goal = n->back ? pl->from : pl->to;
    float dx = goal[0] - n->x, dy = goal[1] - n->y, d = sqrtf(dx * dx + dy * dy);
    if (d < n->best - 0.01f) {
        n->best = d;
        n->progress_us = now;
    }
    if (d < BK_PLATFORM_ARRIVE || now - n->progress_us > BK_PLATFORM_STALL_US) {
        n->back = !n->back;
        n->best = INFINITY;
        n->progress_us = now;
        b->st->platform_turns++;
        goal = n->back ? pl->from : pl->to;
        dx = goal[0] - n->x;
        dy = goal[1] - n->y;
        d = sqrtf(dx * dx + dy * dy);
    }
    float v = pl->speed, per_batch = (float)(1.0 / b->cfg->rate_hz);
    if (d < v * per_batch) v = d / per_batch;
    *vx = d > 0.0f ? v * dx / d : 0.0f;
    *vy = d > 0.0f ? v * dy / d : 0.0f;
}

static void bk_send_batch(bk *b, uint64_t now) {
    double period = 1e6 / b->cfg->rate_hz;
    while (b->next_batch_us <= now) {
        b->seq++;
        b->intended[b->seq % BK_RING] = b->next_batch_us;
        b->next_batch_us = b->base_us + (uint64_t)(period * (double)b->seq);
    }
    for (uint32_t k = 0; k < b->n_alive; k++) {
        bk_npc *n = &b->npcs[b->alive[k]];
        /* The ring forgets the oldest seq: give it up, keeping its wait so far (a lower bound). */
        while (b->seq - n->acked >= BK_RING - 1u) {
            n->acked++;
            uint64_t intended = b->intended[n->acked % BK_RING];
            cc_hist_record(&b->st->ack_us, now > intended ? now - intended : 0);
        }
        b->ids[k] = n->body_id;
        if (b->alive[k] >= b->cfg->npcs)
            bk_platform_velocity(b, n, now, &b->vx[k], &b->vy[k]);
        else
            bk_velocity(b, n, &b->vx[k], &b->vy[k]);
    }
    Collide__V1__ClientMessage m;
    Collide__V1__MoveIntents batch;
    cc_backend_fill_batch(&m, &batch, b->items, b->item_ptrs, b->vels, b->n_alive, b->ids, b->seq,
                          b->vx, b->vy);
    if (!bk_queue(b, &m)) {
        bk_fail(b, "out of memory for a batch");
        bk_close(b);
        return;
    }
    b->st->batches_sent++;
    b->st->intents_sent += b->n_alive;
    bk_flush(b);
}

/* The casts due by now, each from the next NPC in turn (its own body excluded), 20 units in a
 * random direction, as a game server checking a shot would. */
static void bk_send_queries(bk *b, uint64_t now) {
    double period = 1e6 / b->cfg->queries_hz;
    uint32_t sent = 0;
    while (b->query_base_us + (uint64_t)(period * (double)b->query_seq) <= now &&
           sent < BK_QUERY_BURST && b->query_seq < BK_REQ_QUERY) {
        const bk_npc *n = &b->npcs[b->alive[b->query_seq % b->n_alive]];
        float a = collide_rng_unit(&b->rng) * 6.2831853f;
        uint32_t exclude = n->body_id;
        Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
        Collide__V1__RayCast r = COLLIDE__V1__RAY_CAST__INIT;
        Collide__V1__QueryFilter f = COLLIDE__V1__QUERY_FILTER__INIT;
        Collide__V1__Vec2 o = COLLIDE__V1__VEC2__INIT, t = COLLIDE__V1__VEC2__INIT;
        o.x = n->x;
        o.y = n->y;
        t.x = BK_QUERY_LENGTH * cosf(a);
        t.y = BK_QUERY_LENGTH * sinf(a);
        f.n_exclude_ids = 1;
        f.exclude_ids = &exclude;
        r.origin = &o;
        r.translation = &t;
        r.filter = &f;
        m.request_id = BK_REQ_QUERY | b->query_seq;
        m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_RAY_CAST;
        m.ray_cast = &r;
        if (!bk_queue(b, &m)) {
            bk_fail(b, "out of memory for a ray cast");
            bk_close(b);
            return;
        }
        b->query_sent_us[b->query_seq % BK_QUERY_RING] = now;
        b->query_seq++;
        b->st->queries_sent++;
        sent++;
    }
    if (sent) bk_flush(b);
}

static bool bk_all_acked(const bk *b) {
    for (uint32_t k = 0; k < b->n_alive; k++)
        if (b->npcs[b->alive[k]].acked < b->seq) return false;
    return b->st->query_results + b->st->query_errors >= b->st->queries_sent;
}

/* At the end of the run: the platforms go (an admin's bodies stay after it leaves, and a next run
 * would spawn its own over them) and leave the alive list, whose acks the drain waits for. */
static void bk_despawn_platforms(bk *b) {
    uint32_t kept = 0;
    for (uint32_t k = 0; k < b->n_alive; k++) {
        uint32_t i = b->alive[k];
        if (i < b->cfg->npcs) {
            b->alive[kept++] = i;
            continue;
        }
        Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
        Collide__V1__DespawnBody d = COLLIDE__V1__DESPAWN_BODY__INIT;
        d.body_id = b->npcs[i].body_id;
        m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_DESPAWN;
        m.despawn = &d;
        bk_queue(b, &m);
    }
    b->n_alive = kept;
    bk_flush(b);
}

static void bk_tick(uv_timer_t *t) {
    bk *b = t->data;
    const cc_backend_config *c = b->cfg;
    uint64_t now = cc_now_us();
    bool stop = atomic_load_explicit(c->stop, memory_order_relaxed) != 0;
    if (b->phase == BK_CLOSED) return;
    if (b->phase < BK_DRAIN && (now >= c->end_us || stop)) {
        if (b->phase < BK_RUNNING)
            bk_fail(b, "the NPCs were not all spawned by the end of the run");
        b->phase = BK_DRAIN;
        b->drain_until_us = now + (uint64_t)(c->drain_s * 1e6);
        if (c->n_platforms) bk_despawn_platforms(b);
    }
    if (b->phase == BK_RUNNING && b->n_alive > 0 && b->next_batch_us <= now) bk_send_batch(b, now);
    if (b->phase == BK_RUNNING && b->n_alive > 0 && c->queries_hz > 0) bk_send_queries(b, now);
    if (b->phase == BK_DRAIN && (bk_all_acked(b) || now >= b->drain_until_us || stop)) {
        bk_close(b);
        return;
    }
    if (b->phase >= BK_HELLO && now - b->last_rx_us > (uint64_t)(c->stall_s * 1e6)) {
        bk_fail(b, "stalled: no data from the server");
        bk_close(b);
    }
}

void cc_backend_run(const cc_backend_config *cfg, cc_backend_stats *out) {
    bk *b = calloc(1, sizeof *b);
    uint32_t n = cfg->npcs + cfg->n_platforms;
    uint32_t slots = 1;
    while (slots < 4u * n)
        slots *= 2u;
    if (b) {
        b->npcs = calloc(n, sizeof *b->npcs);
        b->alive = calloc(n, sizeof *b->alive);
        b->table = calloc(slots, sizeof *b->table);
        b->table_ids = calloc(slots, sizeof *b->table_ids);
        b->items = calloc(n, sizeof *b->items);
        b->item_ptrs = calloc(n, sizeof *b->item_ptrs);
        b->vels = calloc(n, sizeof *b->vels);
        b->ids = calloc(n, sizeof *b->ids);
        b->vx = calloc(n, sizeof *b->vx);
        b->vy = calloc(n, sizeof *b->vy);
        if (cfg->queries_hz > 0) b->query_sent_us = calloc(BK_QUERY_RING, sizeof *b->query_sent_us);
    }
    if (!b || !b->npcs || !b->alive || !b->table || !b->table_ids || !b->items || !b->item_ptrs ||
        !b->vels || !b->ids || !b->vx || !b->vy || (cfg->queries_hz > 0 && !b->query_sent_us)) {
        snprintf(out->failure, sizeof out->failure, "out of memory for %u NPCs", n);
    } else {
        b->cfg = cfg;
        b->st = out;
        b->bodies = n;
        b->table_mask = slots - 1u;
        b->rng.state = cfg->seed ? cfg->seed * 2654435761u : 0x9e3779b9u;
        if (b->rng.state == 0) b->rng.state = 0x9e3779b9u;
        b->world_min[0] = b->world_min[1] = -100.0f;
        b->world_max[0] = b->world_max[1] = 100.0f;
        uv_loop_init(&b->loop);
        uv_timer_init(&b->loop, &b->timer);
        b->timer.data = b;
        b->last_rx_us = cc_now_us();
        int rc = cfg->ws
                     ? cc_conn_start_ws(&b->conn, &b->loop, cfg->addr, &bk_hooks, b, cfg->max_frame)
                     : cc_conn_start(&b->conn, &b->loop, cfg->addr, &bk_hooks, b, cfg->max_frame);
        if (rc != 0) {
            char why[CC_REASON_LEN];
            snprintf(why, sizeof why, "connect: %s", uv_err_name(rc));
            bk_fail(b, why);
            b->conn_open = b->conn.initialised;
            bk_close(b);
        } else {
            b->conn_open = true;
            b->phase = BK_CONNECTING;
            uv_timer_start(&b->timer, bk_tick, 0, 1);
        }
        uv_run(&b->loop, UV_RUN_DEFAULT);
        for (uint32_t k = 0; k < b->n_alive; k++)
            out->intents_unacked += b->seq - b->npcs[b->alive[k]].acked;
        out->queries_unanswered = out->queries_sent - out->query_results - out->query_errors;
        if (!cc_loop_close(&b->loop, "load")) bk_fail(b, "a handle was left open");
    }
    if (b) {
        free(b->npcs);
        free(b->alive);
        free(b->table);
        free(b->table_ids);
        free(b->items);
        free(b->item_ptrs);
        free(b->vels);
        free(b->ids);
        free(b->vx);
        free(b->vy);
        free(b->query_sent_us);
        free(b->out.buf[0]);
        free(b->out.buf[1]);
    }
    free(b);
}

/* A model test of PROTOCOL.md rule 6 under a frame budget: hundreds of bodies spawn, move, stop
 * against walls, change intents and despawn while several clients watch through 256-byte frames.
 * Each client's belief is built only from the snapshot frames it received (tu_view). After every
 * tick it is compared with the truth the world API gives for that client's view, and the
 * difference must be one the frame budget forced:
 *  - whatever a snapshot carries is the body's state now (nothing stale is ever sent);
 *  - a body missing or out of date after a snapshot means that snapshot had no room left for it;
 *  - an id still believed after it left the view means `removed` had used its half of the frame;
 *  - once the world comes to rest, every belief is exact within the ticks that the bytes still
 *    owed need at the frame budget, and stays exact.
 * The run must also exercise all three overflow paths of the writer (new bodies deferred, deltas
 * deferred, `removed` cut short): the counts are checked at the end.
 * During the churn each body's wait is bounded too: the writer serves the view round robin
 * (each snapshot starts where the last one ran out of room), so a body waits at most one turn of
 * the whole view through the frame budget. A writer that filled every frame from the lowest key
 * starved the highest ids until the churn ended (about 330 ticks here; the bound is ~100). */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "varint.h"

#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING
#define STATIC COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC

#define MAX_FRAME 256u
/* The writer keeps a few bytes of the frame for the ServerMessage envelope; a snapshot that left
 * a pending record out may have had up to this much room beside the record's own size. */
#define FRAME_SLACK 24u
#define WORLD_HALF 120.0f    /* world bounds [-120, 120]^2: walls are never far */
#define PLAYERS 4            /* clients 0..3 own moving bodies, default view */
#define ADMIN 4              /* client 4: statics, views the whole world */
#define SPECTATOR 5          /* client 5: a SetView box that jumps and resizes */
#define LATE 6               /* client 6: joins mid-run with the whole world in view */
#define CLIENTS 7            /* all of them */
#define PER_PLAYER 60        /* moving bodies a player keeps at most */
#define CHURN_TICKS 240      /* ticks of random spawns, moves, despawns, views */
#define LATE_JOIN_TICK 150   /* when client 6 connects */
#define LEAVE_TICK 200       /* when player 3 disconnects: all its bodies go at once */
#define SETTLE_MAX_TICKS 600 /* the world must come to rest within this after the churn */
#define CAPACITY 1024u       /* world body capacity */

typedef struct model_fixture {
    world *w;
    net_server *srv;
    net_config cfg;
    net_client c[CLIENTS];
    bool open[CLIENTS];
    tu_view view[CLIENTS];
    aabb box[CLIENTS];                   /* SetView box in force, when has_box */
    bool has_box[CLIENTS];               /* false: default view (boxes around own bodies) */
    uint32_t owned[PLAYERS][PER_PLAYER]; /* the players' live moving bodies */
    size_t nowned[PLAYERS];
    uint32_t statics[64]; /* the admin's live statics */
    size_t nstatics;
    uint32_t seq; /* input_seq, increasing over all bodies */
    uint8_t buf[1024];
    world_body_id *ids; /* scratch: CAPACITY ids */
    /* Per client, the bodies whose belief is not exact, ascending id, with the tick each became
     * so: how long one body waits for its turn. */
    struct pending {
        uint32_t id;
        int since;
    } * pending[CLIENTS], *pending_next;
    size_t npending[CLIENTS];
} model_fixture;

/* What the writer was forced to leave out, counted over the run. */
typedef struct budget_counts {
    unsigned new_deferred;   /* snapshots after which a new body in view was still unknown */
    unsigned delta_deferred; /* ... a known body was still out of date */
    unsigned removed_cut;    /* ... a body that left the view was still believed */
    unsigned near_full;      /* frames within FRAME_SLACK + the largest record of MAX_FRAME */
    unsigned max_lag;        /* the longest a client's belief stayed inexact, in ticks */
    unsigned max_body_wait;  /* the longest one body's belief stayed inexact, in ticks */
    unsigned max_turn;       /* the largest round-robin turn of any view, in ticks */
} budget_counts;

static void feed(model_fixture *f, int ci, size_t n) {
    net_client_feed(f->srv, &f->c[ci], f->buf, n);
}

static bool welcome(model_fixture *f, int ci, const char *token) {
    if (!net_client_open(f->srv, &f->c[ci], "127.0.0.1:1")) return false;
    f->open[ci] = true;
    feed(f, ci, tu_hello(1, 1, token, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    bool ok = msgs.count == 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
    tu_free(&msgs);
    return ok && tu_view_init(&f->view[ci], CAPACITY);
}

static void set_view(model_fixture *f, int ci, vec2 center, vec2 half) {
    feed(f, ci, tu_set_view(0, center.x, center.y, half.x, half.y, f->buf, sizeof f->buf));
    f->box[ci] = aabb_make(v2_sub(center, half), v2_add(center, half));
    f->has_box[ci] = true;
}

/* Spawns a box through the session; its id, or 0 when refused. */
static uint32_t spawn(model_fixture *f, int ci, Collide__V1__BodyKind kind, vec2 at, vec2 half) {
    feed(f, ci, tu_spawn_box(9, kind, at.x, at.y, half.x, half.y, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    uint32_t id = msgs.count == 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED
                      ? msgs.m[0]->spawned->body_id
                      : 0;
    tu_free(&msgs);
    return id;
}

static void move(model_fixture *f, int ci, uint32_t id, vec2 v) {
    feed(f, ci, tu_move(0, id, ++f->seq, v.x, v.y, f->buf, sizeof f->buf));
}

/* A random intent: a third of them straight at a wall (the body ends pressed against it, its
 * intent unchanged, velocity zero), the rest in any direction at up to 2 units a tick. */
static vec2 random_intent(collide_rng *rng) {
    float speed = collide_rng_range(rng, 20.0f, 120.0f);
    switch (collide_rng_next(rng) % 6u) {
    case 0:
        return v2(speed, 0.0f);
    case 1:
        return v2(-speed, 0.0f);
    case 2:
        return v2(0.0f, collide_rng_next(rng) % 2u ? speed : -speed);
    default: {
        float a = collide_rng_range(rng, 0.0f, 6.2831853f);
        return v2(speed * cosf(a), speed * sinf(a));
    }
    }
}

/* The bodies in client ci's view now, sorted by id, from the world API alone (rule 7: the SetView
 * box, else the boxes of view_radius around the client's own moving bodies, merged into their
 * enclosing box past NET_MAX_VIEW_BOXES of them as the daemon documents). Returns the count. */
static size_t truth_view(model_fixture *f, int ci, world_body_id *out) {
    aabb boxes[PER_PLAYER];
    size_t nboxes = 0;
    if (f->has_box[ci]) {
        boxes[nboxes++] = f->box[ci];
    } else if (ci < PLAYERS) {
        vec2 r = v2(f->cfg.view_radius, f->cfg.view_radius);
        for (size_t k = 0; k < f->nowned[ci]; k++) {
            world_body_row info;
            if (!world_body_get(f->w, f->owned[ci][k], &info)) continue;
            boxes[nboxes++] = aabb_make(v2_sub(info.position, r), v2_add(info.position, r));
        }
        if (nboxes > NET_MAX_VIEW_BOXES) {
            for (size_t b = 1; b < nboxes; b++)
                boxes[0] = aabb_union(boxes[0], boxes[b]);
            nboxes = 1;
        }
    }
    size_t n = 0;
    for (size_t b = 0; b < nboxes; b++) {
        size_t got = world_query_aabb(f->w, boxes[b], 0, f->ids, CAPACITY);
        for (size_t k = 0; k < got && k < CAPACITY; k++)
            out[n++] = f->ids[k];
    }
    /* Sort and deduplicate (several boxes may hold one body). */
    for (size_t i = 1; i < n; i++) {
        world_body_id x = out[i];
        size_t j = i;
        for (; j > 0 && out[j - 1] > x; j--)
            out[j] = out[j - 1];
        out[j] = x;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i]) out[m++] = out[i];
    return m;
}

/* The bytes one Snapshot.bodies entry for this body takes now: a delta, or in full when new. */
static size_t record_size(const world *w, world_body_id id, bool full) {
    world_body_row info;
    geom_shape gs;
    if (!world_body_get(w, id, &info) || !world_body_shape(w, id, &gs)) return 0;
    Collide__V1__Vec2 pos = COLLIDE__V1__VEC2__INIT, vel = COLLIDE__V1__VEC2__INIT,
                      half = COLLIDE__V1__VEC2__INIT;
    pos.x = info.position.x;
    pos.y = info.position.y;
    vel.x = info.velocity.x;
    vel.y = info.velocity.y;
    Collide__V1__BodyState bs = COLLIDE__V1__BODY_STATE__INIT;
    bs.id = id;
    bs.position = &pos;
    bs.velocity = &vel;
    bs.last_input_seq = info.last_input_seq;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    Collide__V1__Shape shape = COLLIDE__V1__SHAPE__INIT;
    if (full) {
        half.x = gs.u.half_extents.x;
        half.y = gs.u.half_extents.y;
        box.half_extents = &half;
        shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        shape.box = &box;
        bs.shape = &shape;
        bs.kind = info.kind == WORLD_BODY_STATIC ? STATIC : MOVING;
        bs.owner = info.owner;
    }
    size_t n = collide__v1__body_state__get_packed_size(&bs);
    return 1 + varint_size(n) + n;
}

/* Whether a believed body matches the world's body exactly (dynamic state, kind, owner, shape). */
static bool belief_exact(const world *w, const tu_body *b) {
    world_body_row info;
    geom_shape gs;
    if (!world_body_get(w, b->id, &info) || !world_body_shape(w, b->id, &gs)) return false;
    Collide__V1__BodyKind kind = info.kind == WORLD_BODY_STATIC ? STATIC : MOVING;
    return b->px == info.position.x && b->py == info.position.y && b->vx == info.velocity.x &&
           b->vy == info.velocity.y && b->last_input_seq == info.last_input_seq &&
           b->kind == kind && b->owner == info.owner && gs.kind == GEOM_SHAPE_BOX &&
           b->hx == gs.u.half_extents.x && b->hy == gs.u.half_extents.y;
}

/* What one client still lacks after a snapshot: bodies and bytes. */
typedef struct owed {
    size_t missing, stale, extra; /* new bodies unknown, known ones out of date, ids left over */
    size_t body_bytes;            /* records the missing and stale bodies need now */
    size_t min_record;            /* the smallest of those records (0 when none) */
    size_t removed_bytes;         /* varints the extra ids need */
    size_t max_removed_varint;    /* the largest of those */
    size_t view_bytes;            /* records every body in view would need if all had changed */
} owed;

/* Also records, when tick >= 0, how long each inexact body has waited (f->pending). */
static owed compute_owed(model_fixture *f, int ci, const world_body_id *truth, size_t ntruth,
                         int tick, budget_counts *counts) {
    owed o;
    size_t nnext = 0, p = 0;
    memset(&o, 0, sizeof o);
    const tu_view *v = &f->view[ci];
    size_t i = 0, j = 0;
    while (i < ntruth || j < v->count) {
        uint32_t t = i < ntruth ? truth[i] : UINT32_MAX;
        uint32_t b = j < v->count ? v->b[j].id : UINT32_MAX;
        size_t rec = 0;
        if (t < b) {
            o.missing++;
            rec = record_size(f->w, t, true);
            i++;
        } else if (b < t) {
            o.extra++;
            size_t vs = varint_size(b);
            o.removed_bytes += vs;
            if (vs > o.max_removed_varint) o.max_removed_varint = vs;
            j++;
        } else {
            if (!belief_exact(f->w, &v->b[j])) {
                o.stale++;
                rec = record_size(f->w, t, false);
            }
            i++;
            j++;
        }
        if (rec) {
            o.body_bytes += rec;
            if (o.min_record == 0 || rec < o.min_record) o.min_record = rec;
        }
        if (t <= b && t != UINT32_MAX) o.view_bytes += rec ? rec : record_size(f->w, t, t < b);
        uint32_t id = t < b ? t : b;
        bool pend = rec || b < t;
        if (tick >= 0 && pend) {
            while (p < f->npending[ci] && f->pending[ci][p].id < id)
                p++;
            int since =
                p < f->npending[ci] && f->pending[ci][p].id == id ? f->pending[ci][p].since : tick;
            f->pending_next[nnext].id = id;
            f->pending_next[nnext++].since = since;
            unsigned wait = (unsigned)(tick - since + 1);
            if (wait > counts->max_body_wait) counts->max_body_wait = wait;
        }
    }
    if (tick >= 0) {
        memcpy(f->pending[ci], f->pending_next, nnext * sizeof *f->pending_next);
        f->npending[ci] = nnext;
    }
    return o;
}

/* Bytes a snapshot gives the bodies at least: half a frame (removed takes at most the other
 * half) less one record (the record that did not fit wastes the rest; a box BodyState in full is
 * about 50 bytes). And what it gives removed at least: half a frame less the envelope. */
#define BODY_RATE ((MAX_FRAME - FRAME_SLACK) / 2 - 64)
#define REMOVED_RATE ((MAX_FRAME - FRAME_SLACK) / 2 - 5)

static unsigned ticks_at(size_t bytes, size_t rate) {
    return (unsigned)((bytes + rate - 1) / rate);
}

/* Ticks that a fair writer needs for what is owed, plus one for rounding. */
static unsigned ticks_for(const owed *o) {
    return ticks_at(o->body_bytes, BODY_RATE) + ticks_at(o->removed_bytes, REMOVED_RATE) + 1;
}

/* Ticks for one round-robin turn of a whole view: every body in it sent once, plus one tick for
 * the turn's start and one for rounding. */
static unsigned turn_ticks(const owed *o) { return ticks_at(o->view_bytes, BODY_RATE) + 2; }

/* Takes client ci's output after a tick, applies its snapshot and checks it against the world.
 * Returns false (with a message) on a violation; lag[ci] counts consecutive inexact ticks. */
static bool check_client(model_fixture *f, int ci, int tick, world_body_id *truth,
                         budget_counts *counts, unsigned *lag, owed *out_owed) {
    tu_msgs msgs;
    tu_take(&f->c[ci], &msgs);
    const Collide__V1__Snapshot *snap = NULL;
    size_t snap_len = 0, nsnaps = 0;
    bool ok = !msgs.malformed;
    for (size_t k = 0; k < msgs.count; k++) {
        if (msgs.m[k]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT) {
            snap = msgs.m[k]->snapshot;
            snap_len = msgs.len[k];
            nsnaps++;
        } else {
            ok = false; /* no request of this run is refused */
            fprintf(stderr, "tick %d client %d: unexpected message %d\n", tick, ci,
                    (int)msgs.m[k]->msg_case);
        }
    }
    if (nsnaps != 1 || !ok) {
        fprintf(stderr, "tick %d client %d: %zu snapshots\n", tick, ci, nsnaps);
        tu_free(&msgs);
        return false;
    }
    if (snap_len > MAX_FRAME || snap->tick != world_tick(f->w)) {
        fprintf(stderr, "tick %d client %d: frame of %zu bytes, tick %llu\n", tick, ci, snap_len,
                (unsigned long long)snap->tick);
        tu_free(&msgs);
        return false;
    }
    size_t ntruth = truth_view(f, ci, truth);
    /* What the snapshot says is the truth now: listed bodies are in view with their current
     * state, removed ids are gone or out of view. */
    for (size_t k = 0; k < snap->n_removed && ok; k++) {
        uint32_t id = snap->removed[k];
        for (size_t t = 0; t < ntruth; t++)
            if (truth[t] == id) ok = false;
        if (!ok) fprintf(stderr, "tick %d client %d: removed %u still in view\n", tick, ci, id);
    }
    if (!tu_view_apply(&f->view[ci], snap)) {
        fprintf(stderr, "tick %d client %d: snapshot breaks rule 6\n", tick, ci);
        ok = false;
    }
    for (size_t k = 0; k < snap->n_bodies && ok; k++) {
        const tu_body *b = tu_view_find(&f->view[ci], snap->bodies[k]->id);
        bool in_view = false;
        for (size_t t = 0; t < ntruth && !in_view; t++)
            in_view = truth[t] == snap->bodies[k]->id;
        if (!b || !in_view || !belief_exact(f->w, b)) {
            fprintf(stderr, "tick %d client %d: body %u sent out of view or not as it is\n", tick,
                    ci, snap->bodies[k]->id);
            ok = false;
        }
    }
    size_t removed_bytes = 0;
    for (size_t k = 0; k < snap->n_removed; k++)
        removed_bytes += varint_size(snap->removed[k]);
    owed o = compute_owed(f, ci, truth, ntruth, tick, counts);
    *out_owed = o;
    unsigned turn = turn_ticks(&o);
    if (turn > counts->max_turn) counts->max_turn = turn;
    if (o.missing || o.stale) {
        /* Left out only for want of room: not even the smallest pending record fit. */
        if (snap_len + o.min_record <= MAX_FRAME - FRAME_SLACK) {
            fprintf(stderr,
                    "tick %d client %d: %zu new and %zu changed bodies left out of a %zu-byte "
                    "frame (smallest record %zu bytes)\n",
                    tick, ci, o.missing, o.stale, snap_len, o.min_record);
            ok = false;
        }
        counts->near_full++;
    }
    if (o.extra && removed_bytes + o.max_removed_varint <= (MAX_FRAME - FRAME_SLACK) / 2) {
        fprintf(stderr, "tick %d client %d: %zu ids owed but removed holds only %zu bytes\n", tick,
                ci, o.extra, removed_bytes);
        ok = false;
    }
    counts->new_deferred += o.missing > 0;
    counts->delta_deferred += o.stale > 0;
    counts->removed_cut += o.extra > 0;
    if (o.missing || o.stale || o.extra) {
        lag[ci]++;
        if (lag[ci] > counts->max_lag) counts->max_lag = lag[ci];
    } else {
        lag[ci] = 0;
    }
    tu_free(&msgs);
    return ok;
}

static void churn_players(model_fixture *f, collide_rng *rng, int tick) {
    for (int ci = 0; ci < PLAYERS; ci++) {
        if (!f->open[ci]) continue;
        /* Many spawns at the start (new bodies pile up), then a trickle. */
        int spawns = tick == 0 ? 30 : (collide_rng_next(rng) % 4u == 0 ? 2 : 0);
        for (int s = 0; s < spawns && f->nowned[ci] < PER_PLAYER; s++) {
            vec2 at = v2(collide_rng_range(rng, -110, 110), collide_rng_range(rng, -110, 110));
            vec2 half = v2(collide_rng_range(rng, 0.4f, 2.0f), collide_rng_range(rng, 0.4f, 2.0f));
            uint32_t id = spawn(f, ci, MOVING, at, half);
            if (id) f->owned[ci][f->nowned[ci]++] = id;
        }
        if (f->nowned[ci] > 0 && collide_rng_next(rng) % 3u == 0) {
            size_t k = collide_rng_next(rng) % f->nowned[ci];
            feed(f, ci, tu_despawn(0, f->owned[ci][k], f->buf, sizeof f->buf));
            f->owned[ci][k] = f->owned[ci][--f->nowned[ci]];
        }
        for (size_t k = 0; k < f->nowned[ci]; k++) {
            if (collide_rng_next(rng) % 10u == 0) move(f, ci, f->owned[ci][k], random_intent(rng));
        }
    }
}

static void churn_admin(model_fixture *f, collide_rng *rng, int tick) {
    int spawns = tick == 0 ? 40 : (tick % 20 == 0 ? 3 : 0);
    for (int s = 0; s < spawns && f->nstatics < 64; s++) {
        vec2 at = v2(collide_rng_range(rng, -100, 100), collide_rng_range(rng, -100, 100));
        uint32_t id = spawn(f, ADMIN, STATIC, at, v2(collide_rng_range(rng, 0.5f, 4.0f), 1.0f));
        if (id) f->statics[f->nstatics++] = id;
    }
    if (tick % 20 == 10 && f->nstatics > 0) {
        size_t k = collide_rng_next(rng) % f->nstatics;
        feed(f, ADMIN, tu_despawn(0, f->statics[k], f->buf, sizeof f->buf));
        f->statics[k] = f->statics[--f->nstatics];
    }
}

static void test_snapshot_budget_model(void) {
    static model_fixture fx;
    model_fixture *f = &fx;
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    net_config_default(&f->cfg);
    f->cfg.max_frame = MAX_FRAME;
    f->cfg.rate_limit = 1e6f;
    f->cfg.max_bodies_per_client = PER_PLAYER;
    f->cfg.view_radius = 30.0f;
    strcpy(f->cfg.admin_token, "admin-secret");
    f->cfg.admin_token_len = strlen(f->cfg.admin_token);
    world_config wc;
    world_config_default(&wc);
    wc.bounds = aabb_make(v2(-WORLD_HALF, -WORLD_HALF), v2(WORLD_HALF, WORLD_HALF));
    wc.max_bodies = CAPACITY;
    f->w = world_create(&wc);
    CHECK(f->w);
    f->srv = net_server_create(&f->cfg, f->w);
    CHECK(f->srv);
    f->srv->now_us = 1000000;
    f->ids = calloc(CAPACITY, sizeof *f->ids);
    world_body_id *truth = calloc(CAPACITY, sizeof *truth);
    CHECK(f->ids && truth);
    f->pending_next = calloc(2 * CAPACITY, sizeof *f->pending_next);
    CHECK(f->pending_next);
    for (int ci = 0; ci < CLIENTS; ci++) {
        f->pending[ci] = calloc(2 * CAPACITY, sizeof *f->pending[ci]);
        CHECK(f->pending[ci]);
    }
    for (int ci = 0; ci < CLIENTS; ci++) {
        if (ci == LATE) continue;
        CHECK(welcome(f, ci, ci == ADMIN ? "admin-secret" : NULL));
    }
    set_view(f, ADMIN, v2(0, 0), v2(WORLD_HALF, WORLD_HALF));
    collide_rng rng = {20240611u};
    budget_counts counts;
    memset(&counts, 0, sizeof counts);
    unsigned lag[CLIENTS] = {0};
    bool ok = true;
    int tick = 0;

    /* 1. Churn. */
    for (; tick < CHURN_TICKS && ok; tick++) {
        churn_admin(f, &rng, tick);
        churn_players(f, &rng, tick);
        if (tick % 23 == 0) {
            vec2 c = v2(collide_rng_range(&rng, -100, 100), collide_rng_range(&rng, -100, 100));
            vec2 h = v2(collide_rng_range(&rng, 10, 120), collide_rng_range(&rng, 10, 120));
            set_view(f, SPECTATOR, c, h);
        }
        if (tick == LATE_JOIN_TICK) {
            CHECK(welcome(f, LATE, NULL));
            set_view(f, LATE, v2(0, 0), v2(WORLD_HALF, WORLD_HALF));
        }
        if (tick == LEAVE_TICK) {
            net_client_release(f->srv, &f->c[PLAYERS - 1]);
            f->open[PLAYERS - 1] = false;
            f->nowned[PLAYERS - 1] = 0;
        }
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        for (int ci = 0; ci < CLIENTS && ok; ci++) {
            owed o;
            if (f->open[ci]) ok = check_client(f, ci, tick, truth, &counts, lag, &o);
        }
    }
    CHECK_MSG(ok, "churn failed at tick %d", tick - 1);

    /* 2. Every body heads straight for a wall with one last intent, and the world comes to rest:
     *    the last change of each is its velocity falling to zero against the wall or a body. */
    for (int ci = 0; ci < PLAYERS; ci++) {
        for (size_t k = 0; f->open[ci] && k < f->nowned[ci]; k++) {
            vec2 dir[4] = {v2(90, 0), v2(-90, 0), v2(0, 90), v2(0, -90)};
            move(f, ci, f->owned[ci][k], dir[collide_rng_next(&rng) % 4u]);
        }
    }
    int rest_tick = -1;
    for (int settle = 0; settle < SETTLE_MAX_TICKS && ok && rest_tick < 0; settle++, tick++) {
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        for (int ci = 0; ci < CLIENTS && ok; ci++) {
            owed o;
            if (f->open[ci]) ok = check_client(f, ci, tick, truth, &counts, lag, &o);
        }
        const world_body_row *rows;
        if (world_body_table(f->w, &rows) == 0) rest_tick = tick;
    }
    CHECK_MSG(ok, "settling failed at tick %d", tick - 1);
    CHECK_MSG(rest_tick >= 0, "the world did not come to rest in %d ticks", SETTLE_MAX_TICKS);

    /* 3. At rest, what each client is owed drains at the frame budget, then nothing is owed. The
     *    deadline is set from what was owed after the first snapshot at rest. */
    unsigned deadline[CLIENTS] = {0};
    bool exact[CLIENTS] = {false};
    unsigned worst_deadline = 0;
    for (int ci = 0; ci < CLIENTS; ci++) {
        if (!f->open[ci]) continue;
        owed o = compute_owed(f, ci, truth, truth_view(f, ci, truth), -1, &counts);
        deadline[ci] = ticks_for(&o);
        if (deadline[ci] > worst_deadline) worst_deadline = deadline[ci];
        exact[ci] = !o.missing && !o.stale && !o.extra;
    }
    for (unsigned t = 1; t <= worst_deadline + 30 && ok; t++, tick++) {
        f->srv->now_us += 16667;
        net_tick_run(f->srv, 1);
        for (int ci = 0; ci < CLIENTS && ok; ci++) {
            if (!f->open[ci]) continue;
            owed o;
            ok = check_client(f, ci, tick, truth, &counts, lag, &o);
            bool now_exact = !o.missing && !o.stale && !o.extra;
            if (exact[ci] && !now_exact) {
                fprintf(stderr, "tick %d client %d: exact at rest, then not\n", tick, ci);
                ok = false;
            }
            exact[ci] = now_exact;
            if (!now_exact && t >= deadline[ci]) {
                fprintf(stderr,
                        "tick %d client %d: still owed %zu new, %zu changed, %zu removed %u "
                        "ticks after rest (deadline %u)\n",
                        tick, ci, o.missing, o.stale, o.extra, t, deadline[ci]);
                ok = false;
            }
        }
    }
    printf("rest at tick %d; snapshots left short: %u (new %u, delta %u, removed %u); longest "
           "lag %u ticks, longest wait of one body %u ticks (a view's longest turn %u); deadline "
           "at rest %u ticks\n",
           rest_tick, counts.near_full, counts.new_deferred, counts.delta_deferred,
           counts.removed_cut, counts.max_lag, counts.max_body_wait, counts.max_turn,
           worst_deadline);
    CHECK_MSG(ok, "convergence failed at tick %d", tick - 1);
    /* No body waited longer than one round-robin turn of the largest view. */
    CHECK_MSG(counts.max_body_wait <= counts.max_turn, "a body waited %u ticks, a turn is %u",
              counts.max_body_wait, counts.max_turn);
    /* Every overflow path of the writer ran, several times. */
    CHECK(counts.new_deferred >= 10);
    CHECK(counts.delta_deferred >= 10);
    CHECK(counts.removed_cut >= 2);

    for (int ci = 0; ci < CLIENTS; ci++) {
        if (f->open[ci]) net_client_release(f->srv, &f->c[ci]);
        tu_view_free(&f->view[ci]);
        free(f->pending[ci]);
    }
    free(f->pending_next);
    net_server_destroy(f->srv);
    world_destroy(f->w);
    free(f->ids);
    free(truth);
}

TEST_MAIN(TEST(test_snapshot_budget_model))

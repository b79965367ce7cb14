#include "qsnap.h"

#include <stdlib.h>
#include <string.h>

#include "varint.h"

void cc_qsnap_init(cc_qsnap *q, float position_quantum, float velocity_quantum) {
    memset(q, 0, sizeof *q);
    q->position_quantum = position_quantum > 0 ? position_quantum : QUANT_POSITION_DEFAULT;
    q->velocity_quantum = velocity_quantum > 0 ? velocity_quantum : QUANT_VELOCITY_DEFAULT;
}

void cc_qsnap_free(cc_qsnap *q) {
    quant_table_free(&q->t);
    for (size_t i = 0; i < q->nshapes; i++)
        collide__v1__shape__free_unpacked(q->shapes[i], NULL);
    free(q->states);
    free(q->ptrs);
    free(q->vecs);
    free(q->shapes);
    free(q->removed);
    free(q->fresh);
    memset(q, 0, sizeof *q);
}

static bool grow(cc_qsnap *q) {
    size_t cap = q->cap ? 2 * q->cap : 64;
    Collide__V1__BodyState *st = realloc(q->states, cap * sizeof *st);
    if (st) q->states = st;
    Collide__V1__BodyState **pt = realloc(q->ptrs, cap * sizeof *pt);
    if (pt) q->ptrs = pt;
    Collide__V1__Vec2 *v = realloc(q->vecs, 2 * cap * sizeof *v);
    if (v) q->vecs = v;
    Collide__V1__Shape **sh = realloc(q->shapes, cap * sizeof *sh);
    if (sh) q->shapes = sh;
    if (!st || !pt || !v || !sh) return false;
    q->cap = cap;
    return true;
}

/* The angle of a state in radians, [-pi, pi) as the server keeps it: quanta of half a turn and
 * more are negative angles. */
static float angle_of(const quant_state *s) {
    int32_t turns = (int32_t)s->angle;
    if (turns >= QUANT_ANGLE_STEPS / 2) turns -= QUANT_ANGLE_STEPS;
    return (float)((double)turns * (2.0 * 3.14159265358979323846 / QUANT_ANGLE_STEPS));
}

/* One BodyState from a body's state in quanta; with shape bytes (a body new to the reader) its
 * kind, owner, shape and filter too. */
static void emit_state(cc_qsnap *q, const quant_body *body, const uint8_t *shape, size_t shape_len,
                       const quant_filter *filter) {
    if (q->failed) return;
    if (q->n == q->cap && !grow(q)) {
        q->failed = true;
        return;
    }
    /* The pointers into states and vecs are set once all records are in (they may move). */
    Collide__V1__BodyState bs = COLLIDE__V1__BODY_STATE__INIT;
    Collide__V1__Vec2 pos = COLLIDE__V1__VEC2__INIT, vel = COLLIDE__V1__VEC2__INIT;
    const quant_state *s = &body->q;
    bs.id = body->id;
    pos.x = (float)(s->px * q->position_quantum);
    pos.y = (float)(s->py * q->position_quantum);
    vel.x = (float)(s->vx * q->velocity_quantum);
    vel.y = (float)(s->vy * q->velocity_quantum);
    bs.last_input_seq = s->last_input_seq;
    bs.angle = angle_of(s);
    bs.angular_velocity = (float)((double)s->w / QUANT_ANGULAR_VELOCITY_PER_RAD);
    /* 1.2: part of the state (bit 7), in every BodyState as the float form has it */
    bs.grounded = s->grounded != 0;
    bs.ground_id = s->ground_id;
    if (shape) {
        bs.one_way = body->one_way; /* bit 8: a new body's, as the float form's */
        bs.kind = (Collide__V1__BodyKind)body->kind;
        bs.owner = body->owner;
        Collide__V1__Shape *unpacked = collide__v1__shape__unpack(NULL, shape_len, shape);
        if (!unpacked) {
            q->failed = true;
            return;
        }
        q->shapes[q->nshapes++] = unpacked;
        bs.shape = unpacked;
        if (filter) {
            bs.category = filter->category;
            bs.mask = filter->mask;
            bs.sensor = filter->sensor;
        }
    }
    q->states[q->n] = bs;
    q->vecs[2 * q->n] = pos;
    q->vecs[2 * q->n + 1] = vel;
    q->n++;
}

static void on_record(void *ctx, const quant_record *r) {
    cc_qsnap *q = ctx;
    bool fresh = (r->flags & QUANT_NEW) != 0;
    /* a new body's filter (bit 6), as the UDP path gives it from the shape store: without it a
     * sensor reached --check as a solid body */
    quant_filter f = {r->category, r->mask, r->sensor};
    emit_state(q, r->body, fresh ? r->shape : NULL, r->shape_len,
               (r->flags & QUANT_FILTER) ? &f : NULL);
}

static void expand_begin(cc_qsnap *q, Collide__V1__Snapshot *s) {
    q->n = 0;
    q->nshapes = 0;
    q->failed = false;
    q->saved_bodies = s->bodies;
    q->saved_n = s->n_bodies;
    q->saved_removed = s->removed;
    q->saved_nremoved = s->n_removed;
}

/* Points s->bodies at the BodyStates made (once all are in: the arrays may have moved). */
static void expand_end(cc_qsnap *q, Collide__V1__Snapshot *s) {
    for (size_t i = 0; i < q->n; i++) {
        q->states[i].position = &q->vecs[2 * i];
        q->states[i].velocity = &q->vecs[2 * i + 1];
        q->ptrs[i] = &q->states[i];
    }
    /* A float snapshot's own bodies (a server that ignored Hello.quantized) are left alone. */
    if (q->n) {
        s->n_bodies = q->n;
        s->bodies = q->ptrs;
    }
}

bool cc_qsnap_expand(cc_qsnap *q, Collide__V1__Snapshot *s) {
    expand_begin(q, s);
    if (s->n_bodies && s->packed.len) return false;
    for (size_t i = 0; i < s->n_removed; i++)
        quant_table_remove(&q->t, s->removed[i]);
    bool ok = quant_apply(&q->t, s->packed.data, s->packed.len, on_record, q) && !q->failed;
    expand_end(q, s);
    return ok;
}

void cc_qsnap_done(cc_qsnap *q, Collide__V1__Snapshot *s) {
    if (q->n && s->bodies == q->ptrs) {
        s->n_bodies = q->saved_n;
        s->bodies = q->saved_bodies;
    }
    if (s->removed == q->removed && q->removed) {
        s->n_removed = q->saved_nremoved;
        s->removed = q->saved_removed;
    }
    for (size_t i = 0; i < q->nshapes; i++)
        collide__v1__shape__free_unpacked(q->shapes[i], NULL);
    q->n = 0;
    q->nshapes = 0;
}

typedef struct scan_ctx {
    cc_qsnap *q;
    uint32_t body_id;
    cc_wire_snapshot_scan *out;
} scan_ctx;

static void on_scan_record(void *ctx, const quant_record *r) {
    scan_ctx *x = ctx;
    x->out->bodies++;
    if (r->body->id != x->body_id) return;
    x->out->found = true;
    x->out->body.id = r->body->id;
    x->out->body.has_position = true;
    x->out->body.x = (float)(r->body->q.px * x->q->position_quantum);
    x->out->body.y = (float)(r->body->q.py * x->q->position_quantum);
    x->out->body.last_input_seq = r->body->q.last_input_seq;
    x->out->body.vx = (float)(r->body->q.vx * x->q->velocity_quantum);
    x->out->body.vy = (float)(r->body->q.vy * x->q->velocity_quantum);
    x->out->body.grounded = r->body->q.grounded != 0;
    x->out->body.ground_id = r->body->q.ground_id;
}

bool cc_qsnap_scan(cc_qsnap *q, const uint8_t *buf, size_t len, uint32_t body_id,
                   cc_wire_snapshot_scan *out) {
    if (buf == NULL && len > 0) return false;
    memset(out, 0, sizeof *out);
    wire_reader r = wire_reader_of(buf, len);
    const uint8_t *packed = NULL;
    size_t packed_len = 0;
    /* `removed` goes first whatever the field order: one pass to find the fields. */
    wire_reader removed[4];
    size_t nremoved = 0;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_read_key(&r, &field, &type)) return false;
        if (field == WIRE_SNAPSHOT_TICK && type == WIRE_VARINT) {
            if (!wire_read_varint(&r, &out->tick)) return false;
        } else if (field == WIRE_SNAPSHOT_PACKED && type == WIRE_LEN) {
            if (packed) return false; /* the server writes it once */
            if (!wire_read_len(&r, &packed, &packed_len)) return false;
        } else if (field == WIRE_SNAPSHOT_REMOVED && type == WIRE_LEN) {
            const uint8_t *d;
            size_t n;
            if (!wire_read_len(&r, &d, &n) || nremoved == 4) return false;
            removed[nremoved++] = wire_reader_of(d, n);
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    for (size_t i = 0; i < nremoved; i++) {
        uint64_t v;
        while (removed[i].p < removed[i].end) {
            if (!wire_read_varint(&removed[i], &v) || v > UINT32_MAX) return false;
            quant_table_remove(&q->t, (uint32_t)v);
            out->removed++;
        }
    }
    scan_ctx x = {q, body_id, out};
    return quant_apply(&q->t, packed, packed_len, on_scan_record, &x);
}

bool cc_qsnap_body_in(const cc_qsnap *q, const quant_table *t, uint32_t body_id,
                      cc_wire_body *out) {
    const quant_body *b = body_id ? quant_table_find(t, body_id) : NULL;
    if (!b) return false;
    out->id = b->id;
    out->has_position = true;
    out->x = (float)(b->q.px * q->position_quantum);
    out->y = (float)(b->q.py * q->position_quantum);
    out->last_input_seq = b->q.last_input_seq;
    out->vx = (float)(b->q.vx * q->velocity_quantum);
    out->vy = (float)(b->q.vy * q->velocity_quantum);
    out->grounded = b->q.grounded != 0;
    out->ground_id = b->q.ground_id;
    return true;
}

/* ---- UDP: snapshots against a baseline ----------------------------------------------------- */

static bool push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        uint32_t *grown = realloc(*a, c * sizeof *grown);
        if (!grown) return false;
        *a = grown;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return true;
}

static void on_base_record(void *ctx, const quant_record *r) {
    cc_qsnap *q = ctx;
    if ((r->flags & QUANT_NEW) && !push_u32(&q->fresh, &q->nfresh, &q->fresh_cap, r->body->id))
        q->failed = true;
}

static bool is_fresh(const cc_qsnap *q, uint32_t id) {
    for (size_t i = 0; i < q->nfresh; i++) /* few per snapshot */
        if (q->fresh[i] == id) return true;
    return false;
}

/* The change from q->t (the previous state) to now, as BodyStates and removed ids. */
static void diff_states(cc_qsnap *q, const cc_qbase *b, const quant_table *now) {
    const quant_table *was = &q->t;
    size_t i = 0, j = 0;
    while (!q->failed && (i < was->count || j < now->count)) {
        const quant_body *o = i < was->count ? &was->b[i] : NULL;
        const quant_body *n = j < now->count ? &now->b[j] : NULL;
        if (o && (!n || o->id < n->id)) { /* gone */
            if (!push_u32(&q->removed, &q->nremoved, &q->removed_cap, o->id)) q->failed = true;
            i++;
            continue;
        }
        bool known = o && o->id == n->id, fresh = is_fresh(q, n->id);
        if (known && fresh && /* the id now names another body: the old one goes first */
            !push_u32(&q->removed, &q->nremoved, &q->removed_cap, o->id))
            q->failed = true;
        if (!known || fresh) {
            const cc_qbase_shape *sh = cc_qbase_shape_of(b, n->id);
            static const uint8_t none[1];
            emit_state(q, n, sh ? sh->bytes : none, sh ? sh->len : 0, sh ? &sh->filter : NULL);
        } else if (memcmp(&o->q, &n->q, sizeof o->q) != 0) {
            emit_state(q, n, NULL, 0, NULL);
        }
        i += known;
        j++;
    }
}

int cc_qsnap_expand_base(cc_qsnap *q, cc_qbase *b, Collide__V1__Snapshot *s) {
    expand_begin(q, s);
    q->nremoved = 0;
    q->nfresh = 0;
    if (s->n_bodies) return CC_QBASE_MALFORMED; /* UDP snapshots are always packed */
    cc_qbase_result r = cc_qbase_apply(b, s->tick, s->baseline_tick, s->removed, s->n_removed,
                                       s->packed.data, s->packed.len, on_base_record, q);
    if (r != CC_QBASE_APPLIED) return r;
    const quant_table *now = cc_qbase_newest(b);
    diff_states(q, b, now);
    if (!quant_table_copy(&q->t, now)) q->failed = true;
    expand_end(q, s);
    s->removed = q->removed;
    s->n_removed = q->nremoved;
    return q->failed ? CC_QBASE_MALFORMED : CC_QBASE_APPLIED;
}

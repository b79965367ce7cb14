/* Helpers shared by the net unit tests and the fuzz target: build framed ClientMessages, read
 * back the ServerMessages a client's output buffer holds, and keep what a client believes from
 * its snapshots alone (tu_view). */
#ifndef COLLIDE_NET_TEST_UTIL_H
#define COLLIDE_NET_TEST_UTIL_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "net_session.h"

typedef Collide__V1__ClientMessage tu_cmsg;
typedef Collide__V1__ServerMessage tu_smsg;

/* Packs m with its varint prefix into out (cap bytes); returns the bytes written. */
static inline size_t tu_frame(const tu_cmsg *m, uint8_t *out, size_t cap) {
    size_t size = collide__v1__client_message__get_packed_size(m);
    if (size + FRAME_MAX_PREFIX > cap) return 0;
    size_t p = frame_write_prefix((uint32_t)size, out);
    collide__v1__client_message__pack(m, out + p);
    return p + size;
}

static inline size_t tu_hello(uint32_t rid, uint32_t version, const char *token, uint8_t *out,
                              size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = version;
    h.name = (char *)"tester";
    h.token = (char *)(token ? token : "");
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return tu_frame(&m, out, cap);
}

static inline size_t tu_spawn_box(uint32_t rid, Collide__V1__BodyKind kind, float x, float y,
                                  float hx, float hy, uint8_t *out, size_t cap) {
    Collide__V1__Vec2 half = COLLIDE__V1__VEC2__INIT, pos = COLLIDE__V1__VEC2__INIT;
    half.x = hx;
    half.y = hy;
    pos.x = x;
    pos.y = y;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    box.half_extents = &half;
    Collide__V1__Shape shape = COLLIDE__V1__SHAPE__INIT;
    shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
    shape.box = &box;
    Collide__V1__SpawnBody s = COLLIDE__V1__SPAWN_BODY__INIT;
    s.kind = kind;
    s.shape = &shape;
    s.position = &pos;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN;
    m.spawn = &s;
    return tu_frame(&m, out, cap);
}

/* A MoveIntent turning at w rad/s (0: the field stays off the wire, proto3's default). */
static inline size_t tu_move_turning(uint32_t rid, uint32_t body, uint32_t seq, float vx, float vy,
                                     float w, uint8_t *out, size_t cap) {
    Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
    v.x = vx;
    v.y = vy;
    Collide__V1__MoveIntent mv = COLLIDE__V1__MOVE_INTENT__INIT;
    mv.body_id = body;
    mv.input_seq = seq;
    mv.velocity = &v;
    mv.angular_velocity = w;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE;
    m.move = &mv;
    return tu_frame(&m, out, cap);
}

static inline size_t tu_move(uint32_t rid, uint32_t body, uint32_t seq, float vx, float vy,
                             uint8_t *out, size_t cap) {
    return tu_move_turning(rid, body, seq, vx, vy, 0.0f, out, cap);
}

static inline size_t tu_ping(uint32_t rid, uint64_t t, uint8_t *out, size_t cap) {
    Collide__V1__Ping p = COLLIDE__V1__PING__INIT;
    p.client_time_us = t;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_PING;
    m.ping = &p;
    return tu_frame(&m, out, cap);
}

static inline size_t tu_despawn(uint32_t rid, uint32_t body, uint8_t *out, size_t cap) {
    Collide__V1__DespawnBody d = COLLIDE__V1__DESPAWN_BODY__INIT;
    d.body_id = body;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_DESPAWN;
    m.despawn = &d;
    return tu_frame(&m, out, cap);
}

/* SetView of the box centred on (cx, cy) with half extents (hx, hy); (0, 0) = default view. */
static inline size_t tu_set_view(uint32_t rid, float cx, float cy, float hx, float hy, uint8_t *out,
                                 size_t cap) {
    Collide__V1__Vec2 center = COLLIDE__V1__VEC2__INIT, half = COLLIDE__V1__VEC2__INIT;
    center.x = cx;
    center.y = cy;
    half.x = hx;
    half.y = hy;
    Collide__V1__SetView sv = COLLIDE__V1__SET_VIEW__INIT;
    sv.center = &center;
    sv.half_extents = &half;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW;
    m.set_view = &sv;
    return tu_frame(&m, out, cap);
}

#define TU_MAX_MSGS 512

typedef struct tu_msgs {
    tu_smsg *m[TU_MAX_MSGS]; /* unpacked, in order */
    size_t len[TU_MAX_MSGS]; /* each one's frame body length, as sent (prefix excluded) */
    size_t count;            /* entries in m */
    bool malformed;          /* a frame did not unpack or the buffer ended mid-frame */
} tu_msgs;

/* Unpacks every frame of c->out (and empties it, as if written). */
static inline void tu_take(net_client *c, tu_msgs *out) {
    out->count = 0;
    out->malformed = false;
    size_t off = 0;
    while (off < c->out.len) {
        size_t pl = 0, bl = 0;
        if (frame_peek(c->out.data + off, c->out.len - off, 16u << 20, &pl, &bl) != FRAME_OK) {
            out->malformed = true;
            break;
        }
        tu_smsg *m = collide__v1__server_message__unpack(NULL, bl, c->out.data + off + pl);
        if (!m) {
            out->malformed = true;
            break;
        }
        if (out->count < TU_MAX_MSGS) {
            out->len[out->count] = bl;
            out->m[out->count++] = m;
        } else
            collide__v1__server_message__free_unpacked(m, NULL);
        off += pl + bl;
    }
    c->out.len = 0;
}

static inline void tu_free(tu_msgs *msgs) {
    for (size_t i = 0; i < msgs->count; i++)
        collide__v1__server_message__free_unpacked(msgs->m[i], NULL);
    msgs->count = 0;
}

/* What a client believes, built only from the snapshots it received (PROTOCOL.md rule 6): the
 * newest state of every body it was told about and not told to forget, sorted by id. */
typedef struct tu_body {
    uint32_t id;
    float px, py;            /* position */
    float vx, vy;            /* velocity */
    uint32_t last_input_seq; /* newest input applied, as last reported */
    Collide__V1__BodyKind kind;
    uint32_t owner;
    float hx, hy;       /* a box's half extents (0 for other shapes) */
    float angle;        /* radians, as last reported (1.1 rotation) */
    float w;            /* angular velocity, rad/s, as last reported */
    bool grounded;      /* 1.2 characters: as last reported (every record says it) */
    uint32_t ground_id; /* 1.2: the body stood on, as last reported */
    bool one_way;       /* 1.2: as its new record said */
} tu_body;

typedef struct tu_view {
    tu_body *b;   /* ascending id */
    size_t count; /* entries in b */
    size_t cap;   /* entries allocated in b (fixed: tu_view_init) */
} tu_view;

static inline bool tu_view_init(tu_view *v, size_t cap) {
    v->b = calloc(cap ? cap : 1, sizeof *v->b);
    v->count = 0;
    v->cap = cap;
    return v->b != NULL;
}

static inline void tu_view_free(tu_view *v) {
    free(v->b);
    v->b = NULL;
    v->count = v->cap = 0;
}

/* Index of the first entry with id >= the given one (binary search). */
static inline size_t tu_view_lower(const tu_view *v, uint32_t id) {
    size_t lo = 0, hi = v->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->b[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline tu_body *tu_view_find(const tu_view *v, uint32_t id) {
    size_t i = tu_view_lower(v, id);
    return i < v->count && v->b[i].id == id ? &v->b[i] : NULL;
}

static inline float tu_x(const Collide__V1__Vec2 *v) { return v ? v->x : 0.0f; }
static inline float tu_y(const Collide__V1__Vec2 *v) { return v ? v->y : 0.0f; }

/* Applies one snapshot: forgets the removed ids, then inserts new bodies and replaces the dynamic
 * fields of known ones (copied, not merged: a zero field is absent on the wire). False when the
 * snapshot breaks rule 6: an id removed that was never announced, a new body without its shape,
 * kind and owner, a body announced again while known, an id both removed and listed. */
static inline bool tu_view_apply(tu_view *v, const Collide__V1__Snapshot *s) {
    bool ok = true;
    for (size_t i = 0; i < s->n_removed; i++) {
        size_t k = tu_view_lower(v, s->removed[i]);
        if (k == v->count || v->b[k].id != s->removed[i]) {
            ok = false;
            continue;
        }
        memmove(&v->b[k], &v->b[k + 1], (v->count - k - 1) * sizeof *v->b);
        v->count--;
    }
    for (size_t i = 0; i < s->n_bodies; i++) {
        const Collide__V1__BodyState *bs = s->bodies[i];
        for (size_t r = 0; r < s->n_removed; r++)
            ok &= s->removed[r] != bs->id;
        size_t k = tu_view_lower(v, bs->id);
        tu_body *b;
        if (k == v->count || v->b[k].id != bs->id) {
            if (!bs->shape || bs->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_UNSPECIFIED ||
                v->count == v->cap)
                return false;
            memmove(&v->b[k + 1], &v->b[k], (v->count - k) * sizeof *v->b);
            v->count++;
            b = &v->b[k];
            memset(b, 0, sizeof *b);
            b->id = bs->id;
            b->kind = bs->kind;
            b->owner = bs->owner;
            b->one_way = bs->one_way;
            if (bs->shape->kind_case == COLLIDE__V1__SHAPE__KIND_BOX && bs->shape->box) {
                b->hx = tu_x(bs->shape->box->half_extents);
                b->hy = tu_y(bs->shape->box->half_extents);
            }
        } else {
            b = &v->b[k];
            ok &= bs->shape == NULL; /* announced twice */
        }
        b->px = tu_x(bs->position);
        b->py = tu_y(bs->position);
        b->vx = tu_x(bs->velocity);
        b->vy = tu_y(bs->velocity);
        b->last_input_seq = bs->last_input_seq;
        b->angle = bs->angle;
        b->w = bs->angular_velocity;
        b->grounded = bs->grounded;
        b->ground_id = bs->ground_id;
    }
    return ok;
}

/* A masked client frame of body[0..n) (RFC 6455 5.2); returns its length. */
static inline size_t tu_ws_frame(uint8_t op, bool fin, const uint8_t *body, size_t n,
                                 uint8_t *out) {
    static const uint8_t key[4] = {0xa1, 0x0b, 0x7c, 0x3d};
    size_t h = 0;
    out[h++] = (uint8_t)((fin ? 0x80 : 0) | op);
    if (n < 126) {
        out[h++] = (uint8_t)(0x80 | n);
    } else {
        out[h++] = 0x80 | 126;
        out[h++] = (uint8_t)(n >> 8);
        out[h++] = (uint8_t)n;
    }
    memcpy(out + h, key, 4);
    h += 4;
    for (size_t i = 0; i < n; i++)
        out[h + i] = body[i] ^ key[i & 3];
    return h + n;
}

#endif

/* Helpers shared by the net unit tests and the fuzz target: build framed ClientMessages and read
 * back the ServerMessages a client's output buffer holds. */
#ifndef COLLIDE_NET_TEST_UTIL_H
#define COLLIDE_NET_TEST_UTIL_H

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

static inline size_t tu_move(uint32_t rid, uint32_t body, uint32_t seq, float vx, float vy,
                             uint8_t *out, size_t cap) {
    Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
    v.x = vx;
    v.y = vy;
    Collide__V1__MoveIntent mv = COLLIDE__V1__MOVE_INTENT__INIT;
    mv.body_id = body;
    mv.input_seq = seq;
    mv.velocity = &v;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE;
    m.move = &mv;
    return tu_frame(&m, out, cap);
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

#define TU_MAX_MSGS 512

typedef struct tu_msgs {
    tu_smsg *m[TU_MAX_MSGS]; /* unpacked, in order */
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
        if (out->count < TU_MAX_MSGS)
            out->m[out->count++] = m;
        else
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

#endif

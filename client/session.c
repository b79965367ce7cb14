#include "session.h"

#include <math.h>
#include <string.h>

static Collide__V1__Vec2 session_vec2(float x, float y) {
    Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
    v.x = x;
    v.y = y;
    return v;
}

bool cc_session_hello(cc_conn *c, uint32_t request_id, const char *name, const char *token) {
    return cc_session_hello_room(c, request_id, name, token, NULL);
}

bool cc_session_hello_room(cc_conn *c, uint32_t request_id, const char *name, const char *token,
                           const char *room) {
    return cc_session_hello_ex(c, request_id, name, token, room, 0, false);
}

bool cc_session_hello_ex(cc_conn *c, uint32_t request_id, const char *name, const char *token,
                         const char *room, uint32_t snapshot_rate_hz, bool quantized) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = CC_PROTOCOL_VERSION;
    h.name = (char *)name;
    h.token = (char *)token;
    if (room && room[0]) h.room = (char *)room;
    h.snapshot_rate_hz = snapshot_rate_hz;
    h.quantized = quantized;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return cc_conn_queue(c, &m);
}

bool cc_session_ping(cc_conn *c, uint32_t request_id, uint64_t client_time_us) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__Ping p = COLLIDE__V1__PING__INIT;
    p.client_time_us = client_time_us;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_PING;
    m.ping = &p;
    return cc_conn_queue(c, &m);
}

bool cc_session_set_view(cc_conn *c, uint32_t request_id, float cx, float cy, float hx, float hy) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__SetView v = COLLIDE__V1__SET_VIEW__INIT;
    Collide__V1__Vec2 center = session_vec2(cx, cy), half = session_vec2(hx, hy);
    v.center = &center;
    v.half_extents = &half;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW;
    m.set_view = &v;
    return cc_conn_queue(c, &m);
}

bool cc_session_move(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy) {
    return cc_session_move_turning(c, body_id, input_seq, vx, vy, 0.0f);
}

bool cc_session_move_turning(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy,
                             float w) {
    return cc_session_move_full(c, body_id, input_seq, vx, vy, w, false);
}

bool cc_session_move_full(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy,
                          float w, bool jump) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__MoveIntent mi = COLLIDE__V1__MOVE_INTENT__INIT;
    Collide__V1__Vec2 v = session_vec2(vx, vy);
    mi.body_id = body_id;
    mi.input_seq = input_seq;
    mi.velocity = &v;
    mi.angular_velocity = w;
    mi.jump = jump;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE;
    m.move = &mi;
    return cc_conn_queue(c, &m);
}

void cc_session_spawn_fill(cc_spawn_msg *s, uint32_t request_id, int shape, float size, float x,
                           float y) {
    memset(s, 0, sizeof *s);
    collide__v1__client_message__init(&s->m);
    collide__v1__spawn_body__init(&s->sb);
    collide__v1__shape__init(&s->sh);
    collide__v1__box__init(&s->box);
    collide__v1__circle__init(&s->circle);
    collide__v1__polygon__init(&s->poly);
    s->half = session_vec2(size, size);
    s->pos = session_vec2(x, y);
    if (shape == 1) {
        /* A regular hexagon, counter-clockwise from angle 0. */
        for (int i = 0; i < 6; i++) {
            double a = (double)i * (2.0 * 3.14159265358979323846 / 6.0);
            s->verts[i] = session_vec2((float)(size * cos(a)), (float)(size * sin(a)));
            s->vert_ptrs[i] = &s->verts[i];
        }
        s->poly.n_vertices = 6;
        s->poly.vertices = s->vert_ptrs;
        s->sh.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
        s->sh.polygon = &s->poly;
    } else if (shape == 2) {
        s->circle.radius = size;
        s->sh.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        s->sh.circle = &s->circle;
    } else {
        s->box.half_extents = &s->half;
        s->sh.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        s->sh.box = &s->box;
    }
    s->sb.kind = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    s->sb.shape = &s->sh;
    s->sb.position = &s->pos;
    s->m.request_id = request_id;
    s->m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN;
    s->m.spawn = &s->sb;
}

bool cc_session_spawn(cc_conn *c, uint32_t request_id, int shape, float size, float x, float y) {
    cc_spawn_msg s;
    cc_session_spawn_fill(&s, request_id, shape, size, x, y);
    return cc_conn_queue(c, &s.m);
}

void cc_session_spawn_character_fill(cc_spawn_msg *s, uint32_t request_id, float hx, float hy,
                                     const float *at, const Collide__V1__CharacterOptions *opt) {
    cc_session_spawn_fill(s, request_id, 0, hx, 0.0f, 0.0f);
    s->half = session_vec2(hx, hy);
    s->opt = *opt;
    s->sb.character = &s->opt;
    if (at)
        s->pos = session_vec2(at[0], at[1]);
    else
        s->sb.position = NULL; /* the server's choice: the world's spawn points in turn */
}

bool cc_session_ray_cast(cc_conn *c, uint32_t request_id, float x, float y, float tx, float ty,
                         uint32_t exclude) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__RayCast r = COLLIDE__V1__RAY_CAST__INIT;
    Collide__V1__QueryFilter f = COLLIDE__V1__QUERY_FILTER__INIT;
    Collide__V1__Vec2 o = session_vec2(x, y), t = session_vec2(tx, ty);
    r.origin = &o;
    r.translation = &t;
    if (exclude) {
        f.n_exclude_ids = 1;
        f.exclude_ids = &exclude;
        r.filter = &f;
    }
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_RAY_CAST;
    m.ray_cast = &r;
    return cc_conn_queue(c, &m);
}

bool cc_session_snapshot_ack(cc_conn *c, uint64_t tick) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__SnapshotAck ack = COLLIDE__V1__SNAPSHOT_ACK__INIT;
    ack.tick = tick;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK;
    m.snapshot_ack = &ack;
    return cc_conn_queue(c, &m);
}

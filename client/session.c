#include "session.h"

#include <math.h>

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
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__MoveIntent mi = COLLIDE__V1__MOVE_INTENT__INIT;
    Collide__V1__Vec2 v = session_vec2(vx, vy);
    mi.body_id = body_id;
    mi.input_seq = input_seq;
    mi.velocity = &v;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE;
    m.move = &mi;
    return cc_conn_queue(c, &m);
}

bool cc_session_spawn(cc_conn *c, uint32_t request_id, int shape, float size, float x, float y) {
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    Collide__V1__SpawnBody sb = COLLIDE__V1__SPAWN_BODY__INIT;
    Collide__V1__Shape sh = COLLIDE__V1__SHAPE__INIT;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    Collide__V1__Circle circle = COLLIDE__V1__CIRCLE__INIT;
    Collide__V1__Polygon poly = COLLIDE__V1__POLYGON__INIT;
    Collide__V1__Vec2 half = session_vec2(size, size), pos = session_vec2(x, y);
    Collide__V1__Vec2 verts[6];
    Collide__V1__Vec2 *vert_ptrs[6];
    if (shape == 1) {
        /* A regular hexagon, counter-clockwise from angle 0. */
        for (int i = 0; i < 6; i++) {
            double a = (double)i * (2.0 * 3.14159265358979323846 / 6.0);
            verts[i] = session_vec2((float)(size * cos(a)), (float)(size * sin(a)));
            vert_ptrs[i] = &verts[i];
        }
        poly.n_vertices = 6;
        poly.vertices = vert_ptrs;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
        sh.polygon = &poly;
    } else if (shape == 2) {
        circle.radius = size;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        sh.circle = &circle;
    } else {
        box.half_extents = &half;
        sh.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        sh.box = &box;
    }
    sb.kind = COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    sb.shape = &sh;
    sb.position = &pos;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN;
    m.spawn = &sb;
    return cc_conn_queue(c, &m);
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

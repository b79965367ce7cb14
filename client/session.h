/* cc_session: the building blocks of a protocol v1 session shared by load, watch and ping:
 * messages packed on the stack, and the names of server replies. */
#ifndef COLLIDE_CLIENT_SESSION_H
#define COLLIDE_CLIENT_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "collide.pb-c.h"
#include "conn.h"

#define CC_PROTOCOL_VERSION 1u

bool cc_session_hello(cc_conn *c, uint32_t request_id, const char *name, const char *token);
/* As cc_session_hello, with Hello.room (NULL or "" leaves it empty: the room `default`). */
bool cc_session_hello_room(cc_conn *c, uint32_t request_id, const char *name, const char *token,
                           const char *room);
/* As cc_session_hello_room, with Hello.snapshot_rate_hz (0: every tick) and Hello.quantized. */
bool cc_session_hello_ex(cc_conn *c, uint32_t request_id, const char *name, const char *token,
                         const char *room, uint32_t snapshot_rate_hz, bool quantized);
bool cc_session_ping(cc_conn *c, uint32_t request_id, uint64_t client_time_us);
bool cc_session_set_view(cc_conn *c, uint32_t request_id, float cx, float cy, float hx, float hy);
bool cc_session_move(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy);
/* The same with a turning speed (MoveIntent.angular_velocity, rad/s; protocol 1.1 "Rotation"). */
bool cc_session_move_turning(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy,
                             float w);
/* The same with MoveIntent.jump (protocol 1.2: a character's jump, one per input_seq). */
bool cc_session_move_full(cc_conn *c, uint32_t body_id, uint32_t input_seq, float vx, float vy,
                          float w, bool jump);
/* A first-hit RayCast from (x, y) by (tx, ty), leaving out body `exclude` (0: none). */
bool cc_session_ray_cast(cc_conn *c, uint32_t request_id, float x, float y, float tx, float ty,
                         uint32_t exclude);
/* A SpawnBody message and the storage it points into (packed from the stack, no allocation). */
typedef struct cc_spawn_msg {
    Collide__V1__ClientMessage m; /* what to pack: m.spawn points into the rest */
    Collide__V1__SpawnBody sb;
    Collide__V1__Shape sh;
    Collide__V1__Box box;
    Collide__V1__Circle circle;
    Collide__V1__Polygon poly;
    Collide__V1__Vec2 half, pos, verts[6];
    Collide__V1__Vec2 *vert_ptrs[6];
    Collide__V1__CharacterOptions opt; /* a character's (cc_session_spawn_character_fill) */
} cc_spawn_msg;
/* Fills s with a moving body's SpawnBody. shape: 0 box (half extent size), 1 polygon (hexagon of
 * circumradius size), 2 circle. For a sender with its own buffer (the backend); others call
 * cc_session_spawn. */
void cc_session_spawn_fill(cc_spawn_msg *s, uint32_t request_id, int shape, float size, float x,
                           float y);
/* Fills s with a character's SpawnBody (protocol 1.2): a box of half extents (hx, hy) with the
 * options opt, at at[0], at[1], or with no position when at is NULL (the world's spawn points,
 * docs/protocol.md "Spawning without a position"). */
void cc_session_spawn_character_fill(cc_spawn_msg *s, uint32_t request_id, float hx, float hy,
                                     const float *at, const Collide__V1__CharacterOptions *opt);
/* SnapshotAck{tick}: UDP, the newest snapshot applied (channel 1). */
bool cc_session_snapshot_ack(cc_conn *c, uint64_t tick);
bool cc_session_spawn(cc_conn *c, uint32_t request_id, int shape, float size, float x, float y);

#endif

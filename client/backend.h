/* collide-client load --backend: one admin connection, as a game's logic server would hold, that
 * spawns M NPC bodies (pipelined SpawnBody) and drives them with one MoveIntents batch per tick,
 * each NPC with its own input_seq, measuring how long each intent takes to be acknowledged by a
 * snapshot (BodyState.last_input_seq); with --backend-queries it also sends ray casts, as a game
 * server checking its players' shots would, and measures how long each takes to be answered. Runs
 * on its own thread and libuv loop, beside the players. */
#ifndef COLLIDE_CLIENT_BACKEND_H
#define COLLIDE_CLIENT_BACKEND_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "collide.pb-c.h"
#include "report.h"

/* A moving platform the backend drives (--pattern platformer): a box of half extents half,
 * spawned at from, sent towards to and back at speed, turned at each end. */
typedef struct cc_platform {
    float from[2], to[2]; /* the ends of its path */
    float half[2];        /* half extents */
    float speed;          /* units per second */
} cc_platform;

typedef struct cc_backend_config {
    const struct sockaddr *addr;  /* the daemon */
    uint32_t max_frame;           /* largest frame accepted from the server */
    bool ws;                      /* --transport ws */
    const char *admin_token;      /* Hello.token: must make the connection an admin */
    const char *room;             /* Hello.room ("" or NULL: the default room) */
    uint32_t npcs;                /* bodies to spawn and drive */
    const cc_platform *platforms; /* moving platforms to spawn and drive besides (may be NULL) */
    uint32_t n_platforms;         /* how many */
    double rate_hz;               /* batches per second */
    double queries_hz;            /* first-hit RayCasts per second in all, from the NPCs in turn
                                   * (0: none) */
    double speed;                 /* NPC speed, units per second */
    double size;                  /* half extent / radius / circumradius */
    int shape;                    /* 0 box, 1 polygon, 2 circle (cc_session_spawn) */
    uint32_t seed;                /* headings */
    uint64_t start_us;            /* run start (cc_now_us) */
    uint64_t end_us;              /* batches stop */
    double drain_s;               /* then wait this long for the last acks */
    double stall_s;               /* silence before the connection is given up */
    atomic_int *stop;             /* set by SIGINT: wind down early */
} cc_backend_config;

/* Runs the backend to the end of the run (blocking; call on its own thread). out must have been
 * set up with cc_backend_stats_init. */
void cc_backend_run(const cc_backend_config *cfg, cc_backend_stats *out);

/* Fills m (with the arrays given, n entries each) as one MoveIntents batch: item i moves
 * body_ids[i] with input_seq seq and velocity (vx[i], vy[i]). Exposed for the unit tests. */
void cc_backend_fill_batch(Collide__V1__ClientMessage *m, Collide__V1__MoveIntents *batch,
                           Collide__V1__MoveIntent *items, Collide__V1__MoveIntent **item_ptrs,
                           Collide__V1__Vec2 *vels, uint32_t n, const uint32_t *body_ids,
                           uint32_t seq, const float *vx, const float *vy);

#endif

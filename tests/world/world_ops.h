/* world_ops: a seeded stream of everything a daemon does to a world between steps (spawns of every
 * kind and shape, turned or not, statics included; filters, sensors, one-way flags, characters;
 * intents with turning and jumps, stale ones too; despawns), for tests that run the same inputs
 * through two worlds and compare them (world images, journals and their replay).
 *
 * The generator decides; the caller applies (wo_apply, or its own path, such as a journal's
 * calls) and hands the result back (wo_result), so the generator's list of live bodies follows
 * what the world answered. Two worlds driven by generators of the same seed get the same calls as
 * long as they answer the same. */
#ifndef COLLIDE_WORLD_OPS_H
#define COLLIDE_WORLD_OPS_H

#include "collide_rng.h"
#include "world_test_util.h"

typedef enum wo_kind {
    WO_SPAWN,
    WO_DESPAWN,
    WO_FILTER,
    WO_ONE_WAY,
    WO_CHARACTER,
    WO_INTENT,
} wo_kind;

typedef struct wo_op {
    wo_kind kind;
    world_body_kind body_kind; /* WO_SPAWN */
    geom_shape shape;
    vec2 position;
    float angle;
    uint32_t owner;
    world_body_id id; /* the body of every other kind */
    world_filter filter;
    world_character_options character;
    vec2 velocity; /* WO_INTENT */
    float spin;
    uint32_t seq;
    bool jump;
} wo_op;

#define WO_MAX_BODIES 256
typedef struct wo_gen {
    collide_rng rng;
    world_body_id live[WO_MAX_BODIES];
    uint32_t seq[WO_MAX_BODIES];
    bool moving[WO_MAX_BODIES];
    vec2 velocity[WO_MAX_BODIES]; /* the last intent's, repeated now and then */
    float spin[WO_MAX_BODIES];
    int count;
    float half; /* the world's half extent */
} wo_gen;

static inline void wo_init(wo_gen *g, uint32_t seed, float half) {
    memset(g, 0, sizeof *g);
    g->rng.state = seed ? seed : 1u;
    g->half = half;
}

static inline geom_shape wo_shape(wo_gen *g) {
    float s = collide_rng_range(&g->rng, 0.3f, 1.2f);
    switch (collide_rng_next(&g->rng) % 4) {
    case 0:
        return wt_circle(s);
    case 1:
        return wt_ngon(3 + (int)(collide_rng_next(&g->rng) % 5), s, 0.3f);
    default:
        return wt_box(s, collide_rng_range(&g->rng, 0.3f, 1.2f));
    }
}

/* The next call: mostly intents, then spawns while few bodies live, the rest now and then. */
static inline void wo_next(wo_gen *g, wo_op *op) {
    memset(op, 0, sizeof *op);
    uint32_t r = collide_rng_next(&g->rng) % 100;
    int pick = g->count ? (int)(collide_rng_next(&g->rng) % (uint32_t)g->count) : -1;
    if (pick < 0 || (r < 12 && g->count < WO_MAX_BODIES)) {
        op->kind = WO_SPAWN;
        op->body_kind = collide_rng_next(&g->rng) % 5 == 0 ? WORLD_BODY_STATIC : WORLD_BODY_MOVING;
        op->shape = wo_shape(g);
        float h = g->half - 2.0f;
        op->position = v2(collide_rng_range(&g->rng, -h, h), collide_rng_range(&g->rng, -h, h));
        op->angle =
            collide_rng_next(&g->rng) % 3 == 0 ? collide_rng_range(&g->rng, -3.0f, 3.0f) : 0;
        op->owner = 1u + collide_rng_next(&g->rng) % 3;
        return;
    }
    op->id = g->live[pick];
    if (r < 17) {
        op->kind = WO_DESPAWN;
    } else if (r < 20) {
        op->kind = WO_FILTER;
        op->filter.category = 1u << (collide_rng_next(&g->rng) % 3);
        op->filter.mask = 0xffffffffu ^ (collide_rng_next(&g->rng) % 4 == 0 ? 2u : 0u);
        op->filter.sensor = collide_rng_next(&g->rng) % 6 == 0;
    } else if (r < 22) {
        op->kind = WO_ONE_WAY;
    } else if (r < 25 && g->moving[pick]) {
        op->kind = WO_CHARACTER;
        op->character.step_height = collide_rng_range(&g->rng, 0.0f, 0.4f);
        op->character.snap_distance = collide_rng_range(&g->rng, 0.0f, 0.3f);
        op->character.jump_speed = collide_rng_range(&g->rng, 0.0f, 12.0f);
    } else {
        op->kind = WO_INTENT;
        float s = collide_rng_range(&g->rng, 0.0f, 14.0f);
        op->velocity = v2(collide_rng_range(&g->rng, -s, s), collide_rng_range(&g->rng, -s, s));
        op->spin = collide_rng_next(&g->rng) % 4 == 0 ? collide_rng_range(&g->rng, -6.0f, 6.0f) : 0;
        /* a third of the time the body's last velocity and turning speed again (a player holding
         * a key): what a journal leaves out of the record */
        if (collide_rng_next(&g->rng) % 3 == 0) {
            op->velocity = g->velocity[pick];
            op->spin = g->spin[pick];
        }
        g->velocity[pick] = op->velocity;
        g->spin[pick] = op->spin;
        /* now and then a stale or repeated sequence number: refused, and must stay so */
        op->seq = collide_rng_next(&g->rng) % 16 == 0 ? g->seq[pick] : ++g->seq[pick];
        op->jump = collide_rng_next(&g->rng) % 5 == 0;
        op->owner = collide_rng_next(&g->rng) % 8 == 0 ? 0u : 1u + collide_rng_next(&g->rng) % 3;
    }
}

/* What the world answered: the generator's list follows it. */
static inline void wo_result(wo_gen *g, const wo_op *op, world_status st, world_body_id spawned) {
    if (op->kind == WO_SPAWN && st == WORLD_OK) {
        g->live[g->count] = spawned;
        g->seq[g->count] = 0;
        g->velocity[g->count] = v2(0.0f, 0.0f);
        g->spin[g->count] = 0.0f;
        g->moving[g->count++] = op->body_kind == WORLD_BODY_MOVING;
    }
    if (op->kind == WO_DESPAWN && st == WORLD_OK)
        for (int i = 0; i < g->count; i++)
            if (g->live[i] == op->id) {
                g->count--;
                g->live[i] = g->live[g->count];
                g->seq[i] = g->seq[g->count];
                g->moving[i] = g->moving[g->count];
                g->velocity[i] = g->velocity[g->count];
                g->spin[i] = g->spin[g->count];
                break;
            }
}

/* The calls as the daemon makes them (net_session.c): an intent through world_set_intent_as, its
 * jump only when the intent was taken. */
static inline world_status wo_apply(world *w, const wo_op *op, world_body_id *spawned) {
    *spawned = WORLD_NULL_BODY;
    switch (op->kind) {
    case WO_SPAWN:
        return world_spawn_turned(w, op->body_kind, &op->shape, op->position, op->angle, op->owner,
                                  spawned, NULL);
    case WO_DESPAWN:
        return world_despawn(w, op->id);
    case WO_FILTER:
        return world_body_set_filter(w, op->id, &op->filter);
    case WO_ONE_WAY:
        return world_body_set_one_way(w, op->id, true);
    case WO_CHARACTER:
        return world_body_set_character(w, op->id, &op->character);
    case WO_INTENT: {
        world_status st =
            world_set_intent_as(w, op->owner, op->id, op->velocity, op->spin, op->seq);
        if (st == WORLD_OK && op->jump) world_character_jump(w, op->id);
        return st;
    }
    }
    return WORLD_ERR_NOT_FOUND;
}

/* A world for the streams: gravity on or off, movers colliding or not. */
static inline world *wo_world(float half, bool gravity) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-half, -half), v2(half, half));
    cfg.max_bodies = 512;
    if (gravity) cfg.gravity = v2(0.0f, -30.0f);
    return world_create(&cfg);
}

#endif

/* world_character: characters in side-on worlds (PROTOCOL.md "Characters: side-on games",
 * COLLISION.md "Protocol 1.2 additions"). The step calls in at four places, each a no-op while
 * no character lives or gravity is zero (world_characters_active):
 *   world_character_begin_step  before step 1: each character's plan for the step (the jump it
 *                               takes, gravity, the walk along its ground, the body carrying it)
 *   world_character_expected    step 1: where it is expected to go (its plan and its carrier's)
 *   world_character_move        step 2, after every plain mover: the carry, then its own motion
 *                               (walk with step-up and snap, or flight), by collide-and-slide
 *   world_character_end_step    step 4, for every mover: the ground probe at the final place,
 *                               the velocity along up, grounded and ground id, the change bits */
#ifndef COLLIDE_WORLD_CHARACTER_H
#define COLLIDE_WORLD_CHARACTER_H

#include "world_pair.h"

/* Statics a character's last walk of the grid found (world_character.c's gather): every static
 * its filter lets it meet that meets area, in the walk's order. */
#define WORLD_CHARACTER_NEAR 10
typedef struct world_character_near {
    aabb area;      /* the region walked */
    uint32_t epoch; /* world.statics_epoch then; 0: none remembered */
    uint32_t rules; /* world.rules_epoch then */
    uint32_t count; /* in statics */
    uint32_t statics[WORLD_CHARACTER_NEAR];
    aabb box[WORLD_CHARACTER_NEAR]; /* their boxes (statics never move: the epoch keeps them) */
    uint8_t flags[WORLD_CHARACTER_NEAR]; /* what each is (world_character.c's CHAR_NEAR_*) */
} world_character_near;

/* One character's options and state, per slot (world.characters). */
typedef struct world_character {
    /* what a step of world_character_step_alone reads first (char_still): one cache line */
    vec2 still_pos;       /* where it stood pressed still; see still_epoch */
    uint32_t still_epoch; /* statics_epoch when it was last pressed still; 0: it was not */
    uint32_t still_rules; /* rules_epoch then */
    uint32_t still_seq;   /* the input it had applied then: a newer one applied since (on any
                           * path, the general passes' too) and it is not still */
    uint32_t still_hits;  /* the sweep hits its slides counted then (world_stats.swept_hits) */
    uint64_t jump_until;  /* the last step a pending jump may be taken in; 0: none pending */
    vec2 plan;            /* its own displacement for the step */
    float vy;             /* velocity along up (units/s), carried from step to step */
    uint8_t on;           /* the slot holds a character */
    uint8_t grounded;     /* after the last step */
    uint8_t coyote;       /* it left the ground by walking off (not by a jump) */
    uint8_t walking;      /* this step: on the ground and not taking off: walks along it */
    uint8_t jumped;       /* this step: took a jump */
    uint8_t hit;          /* this step: its own motion hit something */
    uint8_t settled;      /* the ground probe at moved_to (movers ignoring each other: step 4
                           * takes it when the discrete pass left the character there) */
    world_body_id ground; /* the body stood on; 0 for none or the bounds */
    vec2 ground_normal;   /* out of the surface stood on (grounded only) */
    vec2 plan_normal;     /* the ground normal a walk's plan followed */
    uint32_t air_ticks;   /* steps ended off the ground since it was last on it */
    uint32_t settled_slot;
    vec2 settled_normal;
    vec2 moved_to;               /* where its move ended (before the discrete pass) */
    vec2 carried;                /* what the carry moved it by */
    world_character_options opt; /* the defaults filled in */
    float cos_slope;             /* cos(max_slope): the least dot of a walkable normal with up */
    uint32_t buffer_ticks;       /* jump_buffer_ms in whole steps, rounded up */
    uint32_t coyote_ticks;       /* coyote_ms in whole steps, rounded down */
    uint32_t carrier;            /* slot of the mover it stands on; UINT32_MAX for none */
    vec2 carrier_p0;             /* the carrier's position and (cos, sin) at the step's start */
    vec2 carrier_q0;
    world_character_near near; /* its last walk of the static grid */
} world_character;

/* Characters move by their own rules only with gravity: without it they are plain movers. */
static inline bool world_characters_active(const world *w) {
    return w->character_count != 0 && (w->cfg.gravity.x != 0.0f || w->cfg.gravity.y != 0.0f);
}
static inline bool world_is_character(const world *w, uint32_t slot) {
    return w->characters && w->characters[slot].on;
}
/* Whether the character of slot c stands on (is carried by) the body of slot b this step: b's
 * own motion never collides with it. */
static inline bool world_character_rides(const world *w, uint32_t c, uint32_t b) {
    return w->characters[c].on && w->characters[c].carrier == b;
}
/* Whether mover i stands where it ends before mover self slides (the mover pass's order: every
 * plain mover in dense order, then every character in dense order). */
static inline bool world_moved_before(const world *w, uint32_t i, uint32_t self) {
    if (!world_characters_active(w)) return i < self;
    bool ci = world_is_character(w, w->movers[i].slot);
    bool cs = world_is_character(w, w->movers[self].slot);
    return ci == cs ? i < self : cs;
}

void world_character_begin_step(world *w);
/* Mover i's expected displacement (scratch.d1) and how far past its swept box its step may
 * reach (steps, snaps, the carrier's turn). */
vec2 world_character_expected(const world *w, uint32_t i, float *reach);
vec2 world_character_move(world *w, uint32_t i, const mover_candidate *cands, uint32_t count);
void world_character_end_step(world *w);
/* Steps 1-4 for a world with characters whose movers ignore each other (no spawned mover waiting
 * for its push out of statics): each mover's plan, move and step 4 in one walk over them. */
void world_character_step_alone(world *w);
void world_character_despawn(world *w, uint32_t slot);

#endif

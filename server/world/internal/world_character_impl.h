/* What world_character.c (the general step of characters) and world_character_alone.c (the tick
 * of characters whose movers ignore each other, with its fused step for a box among boxes) share:
 * the world's frame, a walker's response to what it hits, the ground probe's offer of one static,
 * and the general step's parts. Internal to those two files. */
#ifndef COLLIDE_WORLD_CHARACTER_IMPL_H
#define COLLIDE_WORLD_CHARACTER_IMPL_H

#include "world_character.h"
#include "world_slide.h"

/* The world's up (minus gravity, unit) and right (up turned clockwise: across gravity). */
typedef struct char_frame {
    vec2 up, right;
    float g; /* |gravity| */
} char_frame;

static inline char_frame frame_of(const world *w) {
    vec2 g = w->cfg.gravity;
    char_frame f;
    f.g = sqrtf(v2_dot(g, g));
    f.up = v2(-g.x / f.g, -g.y / f.g);
    f.right = v2(f.up.y, -f.up.x);
    return f;
}

#define CHAR_BOUNDS UINT32_MAX /* the probe's ground slot for the world's bounds */
#define CHAR_NONE (UINT32_MAX - 1u)
/* What a gathered static is (world_character_near.flags). */
#define CHAR_NEAR_ONE_WAY 1u /* one-way (rules_epoch keeps it so while remembered) */
#define CHAR_NEAR_BOX 2u     /* a box: a box character sweeps it by its AABB alone */

/* How a character's motion meets what it hits. */
typedef enum char_motion {
    CHAR_FLY,  /* collide-and-slide */
    CHAR_WALK, /* the slide of a walker: a surface too steep to walk is a wall, and a walkable
                * one (not a mover's) takes the rest of the walk along it at the same speed
                * across gravity (so a walker entering a slope or leaving one for flat ground
                * loses nothing on that step) */
    CHAR_DROP, /* straight on to the first contact and no further (a snap or a step's rise and
                * fall: a slide would carry it along a slope, across gravity) */
} char_motion;

/* A walker meets an upward-facing surface too steep to walk (normal n, from the walker into it)
 * as a wall: the normal's part across gravity, so the response stops it instead of lifting it
 * up the slope. */
static inline vec2 walker_normal(vec2 n, vec2 up, float cos_slope) {
    float su = -v2_dot(n, up); /* the surface's normal (-n) along up */
    if (!(su > 0.0f) || su >= cos_slope) return n;
    vec2 across = v2_mul_add(n, su, up); /* n less its part along up */
    float len = sqrtf(v2_dot(across, across));
    return len > 0.0f ? v2_scale(across, 1.0f / len) : n;
}

/* The displacement along the ground (normal n, out of it) whose part across gravity is across. */
static inline vec2 walk_along(vec2 n, vec2 right, float across) {
    float rn = v2_dot(right, n);
    if (rn == 0.0f) return v2_scale(right, across);
    vec2 t = v2_mul_add(right, -rn, n); /* the tangent; t . right = 1 - rn^2 */
    return v2_scale(t, across / (1.0f - rn * rn));
}

/* The ground probe's best walkable surface so far. */
typedef struct probe_hit {
    float t;     /* fraction of the band; > 1 for none */
    vec2 normal; /* out of the surface */
    uint32_t slot;
} probe_hit;

/* What the probe asks of each body: the character (its mover m at pos, its box there), the probe's
 * motion d (down the band) and what a walkable normal is. */
typedef struct probe_ask {
    const world *w;
    const world_mover *m;
    vec2 pos, d, inv; /* inv: recip(d) */
    aabb box;
    vec2 up;
    float cos_slope;
} probe_ask;

/* What the probe already knows of a body it is offered. */
#define PROBE_ASK 0u         /* nothing: ask its filter and whether it is one-way */
#define PROBE_FILTERED 1u    /* its filter lets the character meet it (gather asked) */
#define PROBE_NOT_ONE_WAY 2u /* with PROBE_FILTERED: and it is not one-way */

static inline void probe_keep(const probe_ask *p, float t, vec2 n, uint32_t slot, probe_hit *best) {
    if (t < best->t && v2_dot(n, p->up) >= p->cos_slope) {
        best->t = t, best->normal = n, best->slot = slot;
    }
}

/* Offers body b (blocking the character, at its place; slot) to the probe. */
static inline void probe_offer(const probe_ask *p, const body_view *b, uint32_t slot,
                               unsigned known, probe_hit *best) {
    const world *w = p->w;
    if (!(known & PROBE_FILTERED) && !slots_filter_block(w, p->m->slot, slot)) return;
    if (!(known & PROBE_NOT_ONE_WAY) && !world_one_way_bears(w, p->m->slot, p->pos, slot, b->pos))
        return;
    body_view a = mover_view(p->m, p->pos);
    geom_toi toi;
    if (pair_sweep(w, &a, p->d, b, v2(0.0f, 0.0f), &toi)) {
        probe_keep(p, toi.t, v2_neg(toi.normal), slot, best);
        return;
    }
    /* a start a rounding inside it (box sweeps see no hit from there) */
    geom_contact ct;
    if (!aabb_overlaps(box_at(a.pos, a.lo, a.hi), box_at(b->pos, b->lo, b->hi)) ||
        !pair_overlap(w, &a, b, &ct))
        return;
    probe_keep(p, 0.0f, v2_neg(ct.normal), slot, best);
}

/* probe_offer for a box character over the box static of index s (box sbox) that is not
 * one-way: the AABB sweep on the static's own box (as the slides' sweeps), the static's record
 * read only for the overlap's rare fallback or a new best. */
WORLD_HOT void probe_box(const probe_ask *p, uint32_t s, aabb sbox, probe_hit *best) {
    geom_toi toi;
    if (box_sweep(p->box, p->d, p->inv, sbox, &toi)) {
        if (toi.t < best->t) probe_keep(p, toi.t, v2_neg(toi.normal), p->w->statics[s].slot, best);
        return;
    }
    if (!aabb_overlaps(p->box, sbox)) return;
    const world_static *st = &p->w->statics[s];
    body_view a = mover_view(p->m, p->pos), b = static_view(st);
    geom_contact ct;
    if (!pair_overlap(p->w, &a, &b, &ct)) return;
    probe_keep(p, 0.0f, v2_neg(ct.normal), st->slot, best);
}

/* The probe over gathered statics (indices, boxes and CHAR_NEAR_* flags, count of them, in the
 * static walk's order): each one the probe's swept box meets, offered as a walk of the grid would
 * offer it (the same statics either way); a_box: the character is a box, so a box static that is
 * not one-way takes the AABB sweep. Shared by the general probe (probe_within) and the fused
 * step's (bs_probe), which must give the same answers. */
WORLD_HOT void probe_near(const probe_ask *p, aabb swept, bool a_box, const uint32_t *statics,
                          const aabb *boxes, const uint8_t *flags, uint32_t count,
                          probe_hit *best) {
    for (uint32_t k = 0; k < count; k++) {
        if (!aabb_meets(boxes[k], swept)) continue;
        if (a_box && flags[k] == CHAR_NEAR_BOX) {
            probe_box(p, statics[k], boxes[k], best);
            continue;
        }
        const world_static *st = &p->w->statics[statics[k]];
        body_view b = static_view(st);
        probe_offer(p, &b, st->slot,
                    PROBE_FILTERED | (flags[k] & CHAR_NEAR_ONE_WAY ? 0u : PROBE_NOT_ONE_WAY), best);
    }
}

/* A character's plan for the step (before anything moves): the jump it takes (buffer and coyote
 * time), gravity, its own displacement (a walk along its ground or a flight) and the body carrying
 * it. Inline: the tick of movers that ignore each other runs it for every character. */
static inline void char_plan(world *w, world_mover *m, world_character *c, const char_frame *f) {
    float dt = w->dt;
    float g = f->g * c->opt.gravity_scale;
    float a = v2_dot(m->intent, f->right); /* the intent along gravity is ignored */
    bool grounded = c->grounded;
    c->jumped = 0;
    if (c->jump_until) {
        if (w->tick > c->jump_until) {
            c->jump_until = 0; /* pressed too long ago */
        } else if (c->opt.jump_speed > 0.0f &&
                   (grounded || (c->coyote && c->air_ticks <= c->coyote_ticks))) {
            c->jumped = 1;
            c->jump_until = 0;
            c->coyote = 0; /* taking off by a jump ends coyote time */
        }
    }
    float vy = grounded && c->vy <= 0.0f ? 0.0f : c->vy - g * dt;
    if (c->jumped) vy = c->opt.jump_speed;
    float lim = w->cfg.max_speed, room = lim * lim - a * a;
    room = room > 0.0f ? room : 0.0f;
    if (vy * vy > room) vy = vy < 0.0f ? -sqrtf(room) : sqrtf(room);
    c->walking = grounded && !c->jumped && vy <= 0.0f;
    if (c->walking) {
        vy = 0.0f; /* the floor removes what gravity added */
        c->plan = walk_along(c->ground_normal, f->right, a * dt);
        c->plan_normal = c->ground_normal;
    } else {
        c->plan = v2_add(v2_scale(f->right, a * dt), v2_scale(f->up, vy * dt));
    }
    c->vy = vy;
    /* one-way bodies judge its motion of the step: a walker presses on its floor */
    if (w->one_way_count)
        w->one_way[m->slot].disp = c->walking ? v2_mul_add(c->plan, -g * dt * dt, f->up) : c->plan;
    c->carrier = UINT32_MAX;
    /* (only movers that meet others carry: a world without mover collisions asks nothing) */
    uint32_t gs = grounded && c->ground && w->movers_collide ? id_slot(w, c->ground) : UINT32_MAX;
    if (gs != UINT32_MAX && w->slots[gs].kind == WORLD_BODY_MOVING) {
        const world_mover *gm = &w->movers[w->slots[gs].index];
        c->carrier = gs;
        c->carrier_p0 = gm->position;
        c->carrier_q0 = ref_kind(gm->shape) == WORLD_REF_TURNED ? w->turns[gs].q : v2(1.0f, 0.0f);
    }
}

/* The velocity along up after the step: a stopped motion keeps only what it achieved. */
static inline float vertical_after(const world *w, const world_character *c, vec2 own, bool stopped,
                                   const char_frame *f) {
    if (c->walking) return 0.0f;
    float vy = c->vy;
    if (!stopped) return vy;
    float u = v2_dot(own, f->up) / w->dt;
    if (vy < 0.0f && u > vy) return u < 0.0f ? u : 0.0f;
    if (vy > 0.0f && u < vy) return u > 0.0f ? u : 0.0f;
    return vy;
}

/* Step 4's record of character m (c) that ends at its position, the ground probe's answer given
 * (grounded, slot, n): its velocity (what it achieved across gravity, and along up), grounded
 * and ground id, coyote time, the change bits. */
static inline void char_record_step(world *w, world_mover *m, world_character *c,
                                    const char_frame *f, vec2 start, bool grounded, uint32_t slot,
                                    vec2 n) {
    vec2 end = m->position;
    vec2 own = v2_sub(v2_sub(end, start), c->carried);
    float vy = vertical_after(w, c, own, c->hit || !vec_eq(end, c->moved_to), f);
    if (grounded && vy < 0.0f) vy = 0.0f;
    c->vy = vy;
    vec2 vel =
        v2_mul_add(v2_scale(f->up, vy), v2_dot(own, f->right) * w->cfg.tick_rate_hz, f->right);
    world_body_id ground = grounded && slot != CHAR_BOUNDS ? slot_id(w, slot) : WORLD_NULL_BODY;
    bool changed = !vec_eq(end, start) || !vec_eq(vel, m->velocity) ||
                   m->applied_seq != m->pending_seq || grounded != (bool)c->grounded ||
                   ground != c->ground;
    m->velocity = vel;
    m->applied_seq = m->pending_seq;
    if (changed) {
        m->changed_tick = w->tick;
        w->moved_bits[m->slot >> 6] |= 1ull << (m->slot & 63);
    }
    if (grounded) {
        c->air_ticks = 0;
        c->coyote = 0;
        c->ground_normal = n;
    } else {
        if (c->grounded && !c->jumped) c->coyote = 1; /* walked off */
        if (c->air_ticks != UINT32_MAX) c->air_ticks++;
    }
    c->grounded = grounded;
    c->ground = ground;
}

/* The general step's parts (world_character.c), which the fused step falls back on. */
vec2 world_character_move_one(world *w, uint32_t i, const mover_candidate *cands, uint32_t count,
                              const char_frame *f);
void world_character_finish(world *w, uint32_t i, const char_frame *f, bool movers, vec2 start);

#endif

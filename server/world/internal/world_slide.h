/* world_slide: collide-and-slide (COLLISION.md step 2), the general slide and its fast paths. */
#ifndef COLLIDE_WORLD_SLIDE_H
#define COLLIDE_WORLD_SLIDE_H

#include "world_pair.h"

/* A static near a short sweep, copied so the slide's iterations loop over a small array. */
typedef struct near_static {
    aabb box;        /* its AABB */
    uint32_t index;  /* into statics */
    uint32_t is_box; /* box shape: the AABB fast path applies */
} near_static;
#define WORLD_NEAR_STATICS 32

/* The region whose statics a short slide (L1 length of r within a fine cell) gathers once for
 * all its iterations: its start box (pbox) grown by that length, since sliding never lengthens
 * the motion. */
static inline aabb world_slide_region(aabb pbox, vec2 r) {
    return aabb_inflate(pbox, fabsf(r.x) + fabsf(r.y) + WORLD_QUERY_MARGIN);
}

/* ---- the primitives every slide shares (world_slide.c, world_character.c) -------------- */

/* The bounds as four walls: the AABB must stay inside. A motion that would end within half a skin
 * of a wall counts as reaching it, so the stop keeps a gap and rounding (position + offset) never
 * puts a box an ulp outside. */
WORLD_HOT void sweep_bounds(const world *w, aabb box, vec2 r, sweep_hit *best) {
    const aabb *b = &w->cfg.bounds;
    const float near = 0.5f * GEOM_SKIN;
    geom_toi toi;
    if (r.x > 0.0f && box.max.x + r.x > b->max.x - near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->max.x - box.max.x) / r.x)), toi.normal = v2(1.0f, 0.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f), false);
    } else if (r.x < 0.0f && box.min.x + r.x < b->min.x + near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->min.x - box.min.x) / r.x)), toi.normal = v2(-1.0f, 0.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f), false);
    }
    if (r.y > 0.0f && box.max.y + r.y > b->max.y - near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->max.y - box.max.y) / r.y)), toi.normal = v2(0.0f, 1.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f), false);
    } else if (r.y < 0.0f && box.min.y + r.y < b->min.y + near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->min.y - box.min.y) / r.y)), toi.normal = v2(0.0f, -1.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f), false);
    }
}

/* The contact response every slide shares (slide, slide_box_impl, world_step_alone): stop GEOM_SKIN
 * short of the contact along the closing speed (never before the start), advance *pos, and keep of
 * the remaining motion all but its component into the normal n, less what the other body moves
 * away by. other_d is the other body's displacement over the rest of the tick; with_mover must be
 * a compile-time constant (false: a static or the bounds, other_d unread) so the inlined copy
 * carries no mover arithmetic (0 * x is not folded for floats). solid: what was hit does not
 * move (a static or the bounds). first is the motion the slide started with this tick. Returns
 * the fraction t of *r used; *r becomes the remaining motion.
 *
 * Two rules keep a body sliding along a slope honest (issue 10's world tests), against solid
 * things only (between movers the relative motion decides, and I7's symmetry with it), and only
 * where the normal is sloped. Along an axis-aligned normal a slide moves along one axis exactly
 * (no rounding towards the face), and the remainder keeps the signs of the first motion's
 * components (no crease to turn back from). sloped is a compile-time constant: false in the
 * box-among-boxes paths (slide_box_impl, world_step_alone), whose normals are all axis-aligned,
 * so they carry none of it (it cost S1a-slow 4% in instructions even as a dead branch).
 *  - Crease: a remainder that turns against the tick's first motion is dropped. Sliding down one
 *    flank of a V into the other would otherwise be sent up that flank, and back the next tick,
 *    forever (~0.016 a tick in a V of 30-degree flanks).
 *  - Skin restored: a start closer than the skin by more than WORLD_SKIN_RESTORE (the gap the
 *    sweep saw is its touching time times the closing speed) adds the missing gap to a sliding
 *    remainder, as motion straight out along the normal, swept like the rest in the next
 *    iteration so it cannot push into something else. Without it a body pressed along a sloped
 *    face crept into it: each slide rounds its position to float, a rounding towards the face was
 *    never undone (the stop clamps at t = 0), and the gap ratcheted down, 0.027 deep after 13,000
 *    ticks on a 30-degree slab. A body pressed still does not round its way in; restoring its gap
 *    would cost a sweep every tick (S1a-fast +5% instructions), so it is left. */
WORLD_HOT float slide_respond(vec2 *pos, vec2 *r, float t, vec2 n, bool with_mover, vec2 other_d,
                              bool solid, bool sloped, vec2 first) {
    vec2 d = *r;
    float closing = with_mover ? v2_dot(v2_sub(d, other_d), n) : v2_dot(d, n);
    float deficit = 0.0f;
    if (closing > 0.0f) t -= GEOM_SKIN / closing;
    if (t < 0.0f) {
        deficit = -t * closing; /* the skin less the gap the sweep saw (touching time x closing) */
        t = 0.0f;
    }
    *pos = v2_mul_add(*pos, t, d);
    vec2 rem = v2_scale(d, 1.0f - t);
    float rn = v2_dot(rem, n);
    if (with_mover) {
        float allowed = wmax(0.0f, v2_dot(v2_scale(other_d, 1.0f - t), n));
        if (rn > allowed) rem = v2_mul_add(rem, -(rn - allowed), n);
    } else if (rn > 0.0f) {
        rem = v2_mul_add(rem, -rn, n);
    }
    if (sloped && (!with_mover || solid) && n.x != 0.0f && n.y != 0.0f) {
        if (v2_dot(rem, first) <= 0.0f) rem = v2(0.0f, 0.0f);
        if (deficit > WORLD_SKIN_RESTORE && (rem.x != 0.0f || rem.y != 0.0f))
            rem = v2_mul_add(rem, -deficit, n);
    }
    *r = rem;
    return t;
}

/* The general slide's sweep of the statics that block the body of slot self (a at its place, box
 * its AABB) by r, cell chunk by chunk along the path: the earliest hit into best (a sweep too
 * long for a caller to gather its statics once, world_character.c). */
void world_sweep_statics(const world *w, uint32_t self, const body_view *a, aabb box, vec2 r,
                         sweep_hit *best);
/* Collide-and-slide of mover mi from pos by r against statics, bounds and the candidates (which
 * move along their own displacement over the same tick: relative motion). Returns the end
 * position; *path (may be NULL) becomes the box of every point the body passed. */
vec2 world_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                 uint32_t cand_count, aabb *path);
/* world_slide with the statics of its short-slide region gathered by the caller (near_count of
 * them in near, in the order the grid walk of that region finds them, those that block the
 * mover only; -1 for more than WORLD_NEAR_STATICS) and, for a turned mover, its shape as it
 * stands (or NULL): the same results. */
vec2 world_slide_gathered(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                          uint32_t cand_count, aabb *path, const near_static *near, int near_count,
                          const geom_shape *turned);
/* A box static as the turned box's slide reads it (world_slide_turned_box). */
typedef struct slide_tile {
    vec2 position; /* its position, the box's centre */
    vec2 hi;       /* its half extents (static_hi) */
} slide_tile;
/* world_slide_gathered of a turned box among box statics: the mover's body-local shape a box of
 * half extents h, turned by q (not (1, 0): geom_shape_orient keeps that a box), no candidates,
 * r within a fine cell (L1), and the statics of its short-slide region all boxes, tile_count
 * of them (at most WORLD_NEAR_STATICS) in tiles in the walk's order. The same results, without the
 * path box (the turning tick keeps its own). */
vec2 world_slide_turned_box(world *w, uint32_t mi, vec2 pos, vec2 r, const slide_tile *tiles,
                            int tile_count, vec2 h, vec2 q);
/* The same slide through the box-among-boxes fast path when it applies: the same results. */
vec2 world_slide_box(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                     uint32_t cand_count);
/* A turning mover's move (world_turn.c): moves and turns until the first contact along the
 * combined motion, then world_slide with what is left of r; returns where it ends. Its path box
 * is the step's own (world_step: the disc of its shape around its path), not the slide's. */
vec2 world_turn_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                      uint32_t cand_count);
/* world_step_alone for a world with turning movers (world.turning_hint): each mover's slide,
 * a turning one's through world_turn_slide, and step 4, in one walk over the movers. */
void world_turn_step_alone(world *w);
/* Recounts world.turning_hint after a step (movers still turning or just stopped). */
void world_turn_recount(world *w);
/* The whole tick's slides and step 4 for movers that ignore each other (S1a). */
void world_step_alone(world *w);

#endif

/* world_pair: the narrow-phase dispatch of the world's loops. Two boxes take the world's own
 * reciprocal slab sweep (geom's rules, AABBs in, one reciprocal per slide iteration); every other
 * pair goes through geom. Header-only: the slide loops inline it. */
#ifndef COLLIDE_WORLD_PAIR_H
#define COLLIDE_WORLD_PAIR_H

#include "world_internal.h"

/* Sweep of box a by d against a fixed box b (relative frame); normal from a towards b. The same
 * rules as geom_box_box_sweep (geom_box.h): starting within GEOM_LINEAR_SLOP, the MTV axis is
 * the one with the smaller penetration, ties going to y (a box touching a floor of tiles exactly
 * at a seam slides on instead of catching on the next tile's side, I4). Specialised for the
 * world's loops: boxes as AABBs (no centre/half conversion) and inv, the reciprocal of d per
 * axis (0 where d is 0), computed once per slide iteration for every box it tests, so the slab
 * test multiplies instead of dividing; geom's version is ~20% more instructions on S1. */
WORLD_HOT bool box_sweep(aabb a, vec2 d, vec2 inv, aabb b, geom_toi *out) {
    float px = wmin(a.max.x - b.min.x, b.max.x - a.min.x);
    float py = wmin(a.max.y - b.min.y, b.max.y - a.min.y);
    if (px > -GEOM_LINEAR_SLOP && py > -GEOM_LINEAR_SLOP) {
        /* Starting in contact. At most touching along an axis the motion does not close along:
         * never a hit (geom's rule; a box resting on tiles slides past their seams). Else stop
         * only if the motion goes further in along the MTV axis. */
        float dcx = (b.min.x + b.max.x) - (a.min.x + a.max.x);
        float dcy = (b.min.y + b.max.y) - (a.min.y + a.max.y);
        if ((px < GEOM_LINEAR_SLOP && !(d.x * dcx > 0.0f)) ||
            (py < GEOM_LINEAR_SLOP && !(d.y * dcy > 0.0f)))
            return false;
        vec2 n =
            px < py ? v2(dcx >= 0.0f ? 1.0f : -1.0f, 0.0f) : v2(0.0f, dcy >= 0.0f ? 1.0f : -1.0f);
        if (v2_dot(d, n) > 0.0f) {
            out->t = 0.0f;
            out->normal = n;
            return true;
        }
        return false;
    }
    float t_enter = -1.0f, t_exit = 2.0f;
    vec2 n = v2(0.0f, 0.0f);
    if (d.x > 0.0f) {
        float te = (b.min.x - a.max.x) * inv.x, tx = (b.max.x - a.min.x) * inv.x;
        if (te > t_enter) t_enter = te, n = v2(1.0f, 0.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (d.x < 0.0f) {
        float te = (b.max.x - a.min.x) * inv.x, tx = (b.min.x - a.max.x) * inv.x;
        if (te > t_enter) t_enter = te, n = v2(-1.0f, 0.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (px <= 0.0f) {
        return false;
    }
    if (d.y > 0.0f) {
        float te = (b.min.y - a.max.y) * inv.y, tx = (b.max.y - a.min.y) * inv.y;
        if (te > t_enter) t_enter = te, n = v2(0.0f, 1.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (d.y < 0.0f) {
        float te = (b.max.y - a.min.y) * inv.y, tx = (b.min.y - a.max.y) * inv.y;
        if (te > t_enter) t_enter = te, n = v2(0.0f, -1.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (py <= 0.0f) {
        return false;
    }
    if (!(t_enter < t_exit) || t_enter > 1.0f || t_enter < 0.0f) return false;
    out->t = t_enter;
    out->normal = n;
    return true;
}

static inline vec2 recip(vec2 d) {
    return v2(d.x != 0.0f ? 1.0f / d.x : 0.0f, d.y != 0.0f ? 1.0f / d.y : 0.0f);
}

/* A body as the narrow phase needs it. */
typedef struct body_view {
    uint32_t ref; /* shape reference */
    vec2 pos;     /* position */
    vec2 lo, hi;  /* AABB offsets */
} body_view;

static inline bool pair_sweep(const world *w, const body_view *a, vec2 da, const body_view *b,
                              vec2 db, geom_toi *out) {
    if (ref_kind(a->ref) == GEOM_SHAPE_BOX && ref_kind(b->ref) == GEOM_SHAPE_BOX)
        return box_sweep(box_at(a->pos, a->lo, a->hi), v2_sub(da, db), recip(v2_sub(da, db)),
                         box_at(b->pos, b->lo, b->hi), out);
    geom_shape ta, tb;
    const geom_shape *sa = ref_shape(w, a->ref, a->hi, &ta);
    const geom_shape *sb = ref_shape(w, b->ref, b->hi, &tb);
    return geom_sweep(sa, a->pos, da, sb, b->pos, db, out);
}

static inline bool pair_overlap(const world *w, const body_view *a, const body_view *b,
                                geom_contact *out) {
    if (ref_kind(a->ref) == GEOM_SHAPE_BOX && ref_kind(b->ref) == GEOM_SHAPE_BOX)
        return geom_box_box_overlap(a->hi, a->pos, b->hi, b->pos, out);
    geom_shape ta, tb;
    const geom_shape *sa = ref_shape(w, a->ref, a->hi, &ta);
    const geom_shape *sb = ref_shape(w, b->ref, b->hi, &tb);
    return geom_overlap(sa, a->pos, sb, b->pos, out);
}

static inline body_view static_view(const world_static *s) {
    body_view v = {s->shape, s->position, v2_sub(s->box.min, s->position), static_hi(s)};
    return v;
}
static inline body_view mover_view(const world_mover *m, vec2 pos) {
    body_view v = {m->shape, pos, m->lo, m->hi};
    return v;
}

/* The best hit of one sweep. */
typedef struct sweep_hit {
    float t;      /* fraction of the displacement; WORLD_NO_HIT when nothing */
    vec2 normal;  /* from the body towards what it hit */
    vec2 other_d; /* the other body's displacement over the remaining time (movers) */
    bool mover;   /* the hit is a moving body (else a static or the bounds) */
} sweep_hit;

/* Keeps the earlier hit: a moving body displaced by other_d over the remaining time (mover), or
 * a static or the bounds (other_d zero). */
WORLD_HOT void hit_offer(sweep_hit *best, const geom_toi *toi, vec2 other_d, bool mover) {
    if (toi->t < best->t) {
        best->t = toi->t;
        best->normal = toi->normal;
        best->other_d = other_d;
        best->mover = mover;
    }
}

/* Movers another mover considers in its mover pass. */
typedef struct mover_candidate {
    body_view view; /* shape and start position */
    vec2 d;         /* its first-pass displacement this tick */
    uint32_t index; /* dense index */
} mover_candidate;

#endif

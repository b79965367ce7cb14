/* world_character: characters in side-on worlds (PROTOCOL.md "Characters: side-on games",
 * COLLISION.md "Protocol 1.2 additions"). See world_character.h for where the step calls in.
 *
 * How a character's step goes, and why:
 *   - The plan (before anything moves): the jump it takes (buffer and coyote time), gravity
 *     integrated semi-implicitly, and its own displacement: on the ground a walk along the
 *     ground's tangent scaled so its speed across gravity is the intent's (no slowing on a
 *     climb, no take-off on a descent), in the air its intent across and its velocity along up.
 *   - The move comes after every plain mover's (world_step.c orders the pass), so the body it
 *     stands on has already moved: the carry is that body's translation and turn of the step, by
 *     collide-and-slide (the carrier left out), so a carry never pushes it into anything (I10);
 *     and a plain mover never sees its riders (a platform is not stopped by what it carries).
 *   - The walk slides with upward-facing surfaces steeper than max_slope taken as walls, so a
 *     walker is blocked by them rather than lifted. Blocked (short of 99% of its walk), it tries
 *     a step: up by step_height, across, down onto a walkable surface no higher than that. Off
 *     the ground after its walk, it snaps down by at most snap_distance onto a walkable surface.
 *   - Grounded is decided after the step (after the discrete pass) by a probe along gravity of
 *     2 x GEOM_SKIN, the contact band's begin distance: the walkable surface nearest below, of a
 *     body that blocks it (a one-way body only from its up side), or the bounds.
 *   - A step whose own motion was stopped keeps of its velocity along up only what it achieved
 *     (a floor or a ceiling removes the component into it); the velocity reported is what it
 *     achieved across gravity and that velocity along up.
 * Decisions the contract leaves open (docs/protocol.md "Characters"):
 *   - Characters do not turn: a turning intent for one is taken as 0 (it keeps its angle).
 *   - The carrier is the mover it stood on after the last step; a character standing on a
 *     character later in the pass's order is carried by where that one stood (it has not moved).
 *   - A character leaving the ground by walking (not jumping) keeps no upward speed from a slope:
 *     it leaves with 0 along up, and gravity takes it from there. */
#include "world_character.h"
#include "world_movers.h"
#include "world_slide.h"
#include "world_statics.h"

/* The world's up (minus gravity, unit) and right (up turned clockwise: across gravity). */
typedef struct char_frame {
    vec2 up, right;
    float g; /* |gravity| */
} char_frame;

static char_frame frame_of(const world *w) {
    vec2 g = w->cfg.gravity;
    char_frame f;
    f.g = sqrtf(v2_dot(g, g));
    f.up = v2(-g.x / f.g, -g.y / f.g);
    f.right = v2(f.up.y, -f.up.x);
    return f;
}

#define CHAR_BOUNDS UINT32_MAX /* the probe's ground slot for the world's bounds */
#define CHAR_NONE (UINT32_MAX - 1u)
#define CHAR_NEAR 48 /* statics gathered once for a character's whole move */
/* What a gathered static is (world_character_near.flags, char_ctx.near_flags). */
#define CHAR_NEAR_ONE_WAY 1u /* one-way (rules_epoch keeps it so while remembered) */
#define CHAR_NEAR_BOX 2u     /* a box: a box character sweeps it by its AABB alone */
#define CHAR_PROBE_CANDS 32

/* One character's move: what its sweeps test against. */
typedef struct char_ctx {
    world *w;
    uint32_t mi;                  /* dense index */
    const world_mover *m;         /* the character's mover */
    const world_character *c;     /* its record */
    char_frame f;                 /* the world's up and right */
    const mover_candidate *cands; /* movers near, moving over the step (relative motion) */
    uint32_t count;               /* entries in cands */
    uint32_t skip;                /* a candidate's dense index left out (the carrier, in the
                                   * carry), or UINT32_MAX */
    aabb region;                  /* where near holds every static its filter lets it meet */
    int near_count;               /* statics in near; -1: walk the grid per sweep */
    const uint32_t *near;         /* indices into statics, in the grid walk's order */
    const aabb *near_box;         /* their boxes, side by side (the tests that drop most of them
                                   * read no static) */
    const uint8_t *near_flags;    /* CHAR_NEAR_* of each */
    uint32_t near_buf[CHAR_NEAR]; /* near, near_box and near_flags when the character's own
                                   * walk (its world_character_near) does not hold them */
    aabb near_box_buf[CHAR_NEAR];
    uint8_t near_flags_buf[CHAR_NEAR];
    bool hit; /* a sweep of the current motion hit something */
    /* the last probe's answer (a walk's snap and the settle probe often ask at one place) */
    bool memo_valid, memo_ground;
    vec2 memo_pos, memo_normal;
    uint32_t memo_slot;
} char_ctx;

static void char_ctx_init(char_ctx *x, world *w, uint32_t i, const world_character *c,
                          const char_frame *f, const mover_candidate *cands, uint32_t count) {
    x->w = w, x->mi = i, x->m = &w->movers[i], x->c = c, x->f = *f;
    x->cands = cands, x->count = count, x->skip = UINT32_MAX;
    x->region = aabb_make(v2(0.0f, 0.0f), v2(0.0f, 0.0f));
    x->near_count = -1; /* nothing gathered: sweeps walk the grid */
    x->near = NULL, x->near_box = NULL, x->near_flags = NULL;
    x->hit = false, x->memo_valid = false;
}

static uint8_t near_flags_of(const world *w, const world_static *st) {
    bool one_way = w->one_way_count && w->one_way[st->slot].on;
    return (uint8_t)((one_way ? CHAR_NEAR_ONE_WAY : 0u) |
                     (ref_kind(st->shape) == GEOM_SHAPE_BOX ? CHAR_NEAR_BOX : 0u));
}

typedef struct gather_ctx {
    uint32_t self;  /* the character's slot */
    uint32_t *out;  /* statics its filter lets it meet, in the walk's order */
    uint32_t count; /* in out */
    uint32_t max;   /* out's room */
} gather_ctx;

static bool gather_visit(const world *w, uint32_t s, void *vctx) {
    gather_ctx *g = vctx;
    if (!slots_filter_block(w, g->self, w->statics[s].slot)) return true;
    if (g->count == g->max) {
        g->count = g->max + 1; /* more than fit */
        return false;
    }
    g->out[g->count++] = s;
    return true;
}

/* The statics of region, gathered once for every sweep inside it (most moves are short): the
 * character's remembered walk when region lies inside it, else a new walk of the region grown
 * ahead along the plan (so a walker takes a few steps from one), remembered. The sweeps and the
 * probe keep of them those their own boxes meet, in order: the statics meeting a box inside a
 * walked region, in the walk's order, are those a walk of the box finds, in its order (cells are
 * visited row by row, level by level, in both), so the answers are the same. */
static void gather(char_ctx *x, world_character *c, aabb region) {
    world *w = x->w;
    world_character_near *nc = &c->near;
    if (!(WORLD_FAST_PATHS && nc->epoch == w->statics_epoch && nc->rules == w->rules_epoch &&
          aabb_contains(nc->area, region))) {
        aabb area =
            aabb_inflate(aabb_sweep(region, v2_scale(c->plan, 4.0f)), 0.25f * w->levels[0].cell);
        gather_ctx g = {x->m->slot, nc->statics, 0, WORLD_CHARACTER_NEAR};
        world_static_walk(w, area, gather_visit, &g);
        nc->epoch = 0;
        if (g.count > WORLD_CHARACTER_NEAR) {
            /* too many to remember: the region alone */
            g = (gather_ctx){x->m->slot, x->near_buf, 0, CHAR_NEAR};
            world_static_walk(w, region, gather_visit, &g);
            x->region = region;
            x->near_count = g.count > CHAR_NEAR ? -1 : (int)g.count;
            x->near = x->near_buf, x->near_box = x->near_box_buf;
            x->near_flags = x->near_flags_buf;
            for (int k = 0; k < x->near_count; k++) {
                const world_static *st = &w->statics[x->near_buf[k]];
                x->near_box_buf[k] = st->box;
                x->near_flags_buf[k] = near_flags_of(w, st);
            }
            return;
        }
        nc->area = area, nc->count = g.count;
        nc->epoch = w->statics_epoch, nc->rules = w->rules_epoch;
        for (uint32_t k = 0; k < g.count; k++) {
            const world_static *st = &w->statics[nc->statics[k]];
            nc->box[k] = st->box;
            nc->flags[k] = near_flags_of(w, st);
        }
    }
    x->region = nc->area;
    x->near_count = (int)nc->count;
    x->near = nc->statics, x->near_box = nc->box, x->near_flags = nc->flags;
}

/* Whether the swept box lies in the gathered region (else the sweep walks the grid itself). */
static bool gathered_for(const char_ctx *x, aabb swept) {
    return x->near_count >= 0 && aabb_contains(x->region, swept);
}

/* The earliest hit of the character at pos moving by r, the candidates tau into the step. */
static void char_sweep(char_ctx *x, vec2 pos, vec2 r, float tau, sweep_hit *best) {
    const world *w = x->w;
    const world_mover *m = x->m;
    body_view a = mover_view(m, pos);
    aabb box = box_at(pos, m->lo, m->hi);
    aabb swept = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
    /* a sweep that stays a skin inside the bounds cannot meet them (as the plain slide's) */
    if (!aabb_contains(w->inner_bounds, swept)) sweep_bounds(w, box, r, best);
    for (uint32_t k = 0; k < x->count; k++) {
        if (x->cands[k].index == x->skip) continue;
        body_view b = x->cands[k].view;
        b.pos = v2_mul_add(b.pos, tau, x->cands[k].d);
        vec2 db = v2_scale(x->cands[k].d, 1.0f - tau);
        geom_toi toi;
        if (pair_sweep(w, &a, r, &b, db, &toi)) hit_offer(best, &toi, db, true);
    }
    if (!gathered_for(x, swept)) {
        world_sweep_statics(w, m->slot, &a, box, r, best);
        return;
    }
    /* a box against a box static: the AABB sweep on the static's own box, as the general
     * slide's walk (sweep_statics) does, without the dispatch or a division per static */
    bool a_box = ref_kind(m->shape) == GEOM_SHAPE_BOX;
    vec2 inv = recip(r);
    for (int k = 0; k < x->near_count; k++) {
        if (!aabb_overlaps(swept, x->near_box[k])) continue;
        /* A one-way static blocks it when it lay above the static at the step's start and this
         * sweep runs against the static's up: judged per sweep, not by the step's plan, since a
         * jump deflected down by a corner must still land on the platform it started above.
         * (Filters were asked by gather.) */
        if (x->near_flags[k] & CHAR_NEAR_ONE_WAY) {
            vec2 up;
            if (!world_one_way_above(w, m->slot, w->statics[x->near[k]].slot, &up) ||
                !(v2_dot(r, up) < 0.0f))
                continue;
        }
        geom_toi toi;
        bool hit;
        if (a_box && (x->near_flags[k] & CHAR_NEAR_BOX)) {
            hit = box_sweep(box, r, inv, x->near_box[k], &toi);
        } else {
            body_view b = static_view(&w->statics[x->near[k]]);
            hit = pair_sweep(w, &a, r, &b, v2(0.0f, 0.0f), &toi);
        }
        if (hit) hit_offer(best, &toi, v2(0.0f, 0.0f), false);
    }
}

/* A walker meets an upward-facing surface too steep to walk as a wall: the normal's part across
 * gravity, so the response stops it instead of lifting it up the slope. */
static vec2 walker_normal(const char_ctx *x, vec2 n) {
    float su = -v2_dot(n, x->f.up); /* the surface's normal (-n) along up */
    if (!(su > 0.0f) || su >= x->c->cos_slope) return n;
    vec2 across = v2_mul_add(n, su, x->f.up); /* n less its part along up */
    float len = sqrtf(v2_dot(across, across));
    return len > 0.0f ? v2_scale(across, 1.0f / len) : n;
}

/* Collide-and-slide of the character from pos by r (walking: steep surfaces are walls). */
/* The displacement along the ground (normal n, out of it) whose part across gravity is across. */
static vec2 walk_along(vec2 n, vec2 right, float across) {
    float rn = v2_dot(right, n);
    if (rn == 0.0f) return v2_scale(right, across);
    vec2 t = v2_mul_add(right, -rn, n); /* the tangent; t . right = 1 - rn^2 */
    return v2_scale(t, across / (1.0f - rn * rn));
}

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

static vec2 char_slide(char_ctx *x, vec2 pos, vec2 r, char_motion how) {
    vec2 first = r;
    float tau = 0.0f;
    for (int it = 0; it < x->w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        sweep_hit best = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
        char_sweep(x, pos, r, tau, &best);
        if (best.t > 1.0f) return v2_add(pos, r);
        x->hit = true;
        x->w->swept_hits++;
        vec2 n = how == CHAR_WALK ? walker_normal(x, best.normal) : best.normal;
        vec2 d = r;
        float t = slide_respond(&pos, &r, best.t, n, true, best.other_d, !best.mover, true, first);
        if (how == CHAR_DROP) break;
        if (how == CHAR_WALK && !best.mover && -v2_dot(n, x->f.up) >= x->c->cos_slope)
            r = walk_along(v2_neg(n), x->f.right, v2_dot(d, x->f.right) * (1.0f - t));
        tau += t * (1.0f - tau);
    }
    return pos;
}

/* The probe's best walkable surface so far. */
typedef struct probe_hit {
    float t;     /* fraction of the band; > 1 for none */
    vec2 normal; /* out of the surface */
    uint32_t slot;
} probe_hit;

/* Offers body b (blocking the character, at its place) to the probe from pos down by d. */
/* What the probe already knows of a body it is offered. */
#define PROBE_ASK 0u         /* nothing: ask its filter and whether it is one-way */
#define PROBE_FILTERED 1u    /* its filter lets the character meet it (gather asked) */
#define PROBE_NOT_ONE_WAY 2u /* with PROBE_FILTERED: and it is not one-way */

static void probe_offer(const char_ctx *x, vec2 pos, vec2 d, const body_view *b, uint32_t slot,
                        unsigned known, probe_hit *best) {
    const world *w = x->w;
    if (!(known & PROBE_FILTERED) && !slots_filter_block(w, x->m->slot, slot)) return;
    if (!(known & PROBE_NOT_ONE_WAY) && !world_one_way_bears(w, x->m->slot, pos, slot, b->pos))
        return;
    body_view a = mover_view(x->m, pos);
    geom_toi toi;
    float t;
    vec2 n;
    if (pair_sweep(w, &a, d, b, v2(0.0f, 0.0f), &toi)) {
        t = toi.t, n = v2_neg(toi.normal);
    } else {
        /* a start a rounding inside it (box sweeps see no hit from there) */
        geom_contact ct;
        if (!aabb_overlaps(box_at(a.pos, a.lo, a.hi), box_at(b->pos, b->lo, b->hi)) ||
            !pair_overlap(w, &a, b, &ct))
            return;
        t = 0.0f, n = v2_neg(ct.normal);
    }
    if (t < best->t && v2_dot(n, x->f.up) >= x->c->cos_slope) {
        best->t = t, best->normal = n, best->slot = slot;
    }
}

typedef struct probe_walk {
    const char_ctx *x;
    vec2 pos, d;
    probe_hit *best;
} probe_walk;

static bool probe_visit(const world *w, uint32_t s, void *vctx) {
    probe_walk *p = vctx;
    body_view b = static_view(&w->statics[s]);
    probe_offer(p->x, p->pos, p->d, &b, w->statics[s].slot, PROBE_ASK, p->best);
    return true;
}

/* Whether a walkable surface lies within the contact band's begin distance below the character
 * at pos (candidates where they end the step): its slot (CHAR_BOUNDS for the bounds) and normal. */
/* probe_offer for a box character over a gathered box static that is not one-way: the AABB
 * sweep on the static's own box (as the slides' sweeps), the static's record read only for the
 * overlap's rare fallback or a new best. */
static void probe_box(const char_ctx *x, vec2 pos, aabb box, vec2 d, vec2 inv, int k,
                      probe_hit *best) {
    geom_toi toi;
    float t;
    vec2 n;
    if (box_sweep(box, d, inv, x->near_box[k], &toi)) {
        t = toi.t, n = v2_neg(toi.normal);
    } else {
        if (!aabb_overlaps(box, x->near_box[k])) return;
        const world_static *st = &x->w->statics[x->near[k]];
        body_view a = mover_view(x->m, pos), b = static_view(st);
        geom_contact ct;
        if (!pair_overlap(x->w, &a, &b, &ct)) return;
        t = 0.0f, n = v2_neg(ct.normal);
    }
    if (t < best->t && v2_dot(n, x->f.up) >= x->c->cos_slope) {
        best->t = t, best->normal = n, best->slot = x->w->statics[x->near[k]].slot;
    }
}

/* The nearest walkable surface within dist below the character at pos (candidates where they
 * end the step): its best hit (t > 1 for none; slot CHAR_BOUNDS for the bounds). */
static probe_hit probe_within(const char_ctx *x, vec2 pos, float dist) {
    const world *w = x->w;
    vec2 d = v2_scale(x->f.up, -dist);
    probe_hit best = {WORLD_NO_HIT, {0, 0}, CHAR_NONE};
    aabb box = box_at(pos, x->m->lo, x->m->hi);
    sweep_hit bounds = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
    aabb swept = aabb_inflate(aabb_sweep(box, d), WORLD_QUERY_MARGIN);
    if (!aabb_contains(w->inner_bounds, swept)) sweep_bounds(w, box, d, &bounds);
    if (bounds.t <= 1.0f && -v2_dot(bounds.normal, x->f.up) >= x->c->cos_slope)
        best = (probe_hit){bounds.t, v2_neg(bounds.normal), CHAR_BOUNDS};
    for (uint32_t k = 0; k < x->count; k++) {
        if (x->cands[k].index == x->skip) continue;
        body_view b = x->cands[k].view;
        b.pos = v2_add(b.pos, x->cands[k].d);
        probe_offer(x, pos, d, &b, w->movers[x->cands[k].index].slot, PROBE_ASK, &best);
    }
    probe_walk p = {x, pos, d, &best};
    if (gathered_for(x, swept)) {
        bool a_box = ref_kind(x->m->shape) == GEOM_SHAPE_BOX;
        vec2 inv = recip(d);
        for (int k = 0; k < x->near_count; k++) {
            /* what world_static_walk's test would keep: the same statics either way */
            if (!aabb_meets(x->near_box[k], swept)) continue;
            uint8_t flags = x->near_flags[k];
            if (a_box && flags == CHAR_NEAR_BOX) {
                probe_box(x, pos, box, d, inv, k, &best);
                continue;
            }
            const world_static *st = &w->statics[x->near[k]];
            body_view b = static_view(st);
            probe_offer(x, pos, d, &b, st->slot,
                        PROBE_FILTERED | (flags & CHAR_NEAR_ONE_WAY ? 0u : PROBE_NOT_ONE_WAY),
                        &best);
        }
    } else {
        world_static_walk(w, swept, probe_visit, &p);
    }
    return best;
}

/* Whether a walkable surface lies within the contact band's begin distance below the character
 * at pos: its slot (CHAR_BOUNDS for the bounds) and normal. */
static bool char_probe(char_ctx *x, vec2 pos, uint32_t *slot, vec2 *normal) {
    if (!(x->memo_valid && vec_eq(pos, x->memo_pos))) {
        probe_hit best = probe_within(x, pos, 2.0f * GEOM_SKIN);
        x->memo_valid = true;
        x->memo_pos = pos;
        x->memo_slot = best.slot;
        x->memo_normal = best.normal;
        x->memo_ground = best.t <= 1.0f;
    }
    *slot = x->memo_slot, *normal = x->memo_normal;
    return x->memo_ground;
}

/* A walk blocked short of want (across gravity): up by step_height, across, down onto a
 * walkable surface; kept when it got further and rose no more than step_height. */
static vec2 char_step_up(char_ctx *x, vec2 pos, vec2 blocked, float want) {
    const char_frame *f = &x->f;
    float h = x->c->opt.step_height;
    vec2 s1 = char_slide(x, pos, v2_scale(f->up, h), CHAR_DROP);
    float rise = v2_dot(v2_sub(s1, pos), f->up);
    if (!(rise > 0.0f)) return blocked;
    vec2 s2 = char_slide(x, s1, v2_scale(f->right, want), CHAR_WALK);
    vec2 s3 = char_slide(x, s2, v2_scale(f->up, -(rise + 2.0f * GEOM_SKIN)), CHAR_DROP);
    float sign = want > 0.0f ? 1.0f : -1.0f;
    if (!(sign * v2_dot(v2_sub(s3, pos), f->right) > sign * v2_dot(v2_sub(blocked, pos), f->right)))
        return blocked;
    float up = v2_dot(v2_sub(s3, pos), f->up);
    if (up > h + GEOM_SKIN) return blocked;
    uint32_t slot;
    vec2 n;
    if (char_probe(x, s3, &slot, &n)) return s3;
    /* Landed higher on something it cannot stand on: a round or slanted shape on the obstacle's
     * edge. When the obstacle's top, a half width further on, is free and walkable within the
     * rise, it steps up anyway but stays at the height it stepped across at: it then falls the
     * little left onto the top while its walk carries it on at the intent's speed (left on the
     * edge, it would roll over it slowly, and it cannot reach the top in one step's walk). A
     * steep face or a wall taller than the step gives no such top. */
    if (!(up > GEOM_SKIN)) return blocked;
    const world_mover *m = x->m;
    float half =
        0.5f * (fabsf(f->right.x) * (m->hi.x - m->lo.x) + fabsf(f->right.y) * (m->hi.y - m->lo.y));
    bool hit = x->hit;
    x->hit = false;
    vec2 ahead = char_slide(x, s2, v2_scale(f->right, sign * half), CHAR_DROP);
    bool clear = !x->hit; /* room on top: not a wall taller than the rise */
    x->hit = hit;
    return clear && probe_within(x, ahead, rise + 2.0f * GEOM_SKIN).t <= 1.0f ? s2 : blocked;
}

/* A walker off the ground after its walk: down by at most snap_distance onto a walkable surface,
 * or where it was (it walked off a ledge). */
static vec2 char_snap(char_ctx *x, vec2 end) {
    uint32_t slot;
    vec2 n;
    if (char_probe(x, end, &slot, &n)) return end;
    vec2 s = char_slide(x, end, v2_scale(x->f.up, -x->c->opt.snap_distance), CHAR_DROP);
    return char_probe(x, s, &slot, &n) ? s : end;
}

static vec2 char_walk(char_ctx *x, vec2 pos) {
    const world_character *c = x->c;
    vec2 end = char_slide(x, pos, c->plan, CHAR_WALK);
    float want = v2_dot(c->plan, x->f.right), got = v2_dot(v2_sub(end, pos), x->f.right);
    if (c->opt.step_height > 0.0f && fabsf(got) < 0.99f * fabsf(want))
        end = char_step_up(x, pos, end, want);
    if (c->opt.snap_distance > 0.0f) end = char_snap(x, end);
    return end;
}

/* The sine of the carrier's turn in the step (0 for none). */
static float carrier_turn_sin(const world *w, const world_character *c) {
    if (ref_kind(w->movers[w->slots[c->carrier].index].shape) != WORLD_REF_TURNED) return 0.0f;
    vec2 q1 = w->turns[c->carrier].q, q0 = c->carrier_q0;
    return q1.y * q0.x - q1.x * q0.y;
}

/* Where the carrier's motion of the step takes a point at pos: its translation, and its turn
 * about its position. */
static vec2 carry_of(const world *w, const world_character *c, vec2 at, vec2 pos) {
    vec2 q1 = ref_kind(w->movers[w->slots[c->carrier].index].shape) == WORLD_REF_TURNED
                  ? w->turns[c->carrier].q
                  : v2(1.0f, 0.0f);
    vec2 q0 = c->carrier_q0;
    if (vec_eq(q0, q1)) return v2_sub(at, c->carrier_p0);
    float cs = q1.x * q0.x + q1.y * q0.y, sn = q1.y * q0.x - q1.x * q0.y;
    vec2 rel = v2_sub(pos, c->carrier_p0);
    vec2 to = v2_add(at, v2(cs * rel.x - sn * rel.y, sn * rel.x + cs * rel.y));
    return v2_sub(to, pos);
}

/* A rider keeps its angle while its carrier turns, so the carrier's surface may tilt into it:
 * lifted along up out of it (to the skin along the contact's normal), so it stays standing on it
 * rather than being pushed out sideways by the discrete pass, or pushing its carrier. A contact
 * too steep to stand on is left to the discrete pass. The lift is a straight move that stops at
 * anything else in the way (the carrier left out). */
static vec2 lift_off_carrier(char_ctx *x, vec2 pos, uint32_t gi, vec2 at) {
    const world *w = x->w;
    body_view a = mover_view(x->m, pos), b = mover_view(&w->movers[gi], at);
    geom_contact ct;
    if (!pair_overlap(w, &a, &b, &ct) || !(ct.depth > 0.0f)) return pos;
    float along = -v2_dot(ct.normal, x->f.up); /* the normal runs from the rider into it */
    if (!(along >= x->c->cos_slope)) return pos;
    return char_slide(x, pos, v2_scale(x->f.up, (ct.depth + GEOM_SKIN) / along), CHAR_DROP);
}

/* As the carrier turns back the other way its surface may fall away from a rider that keeps its
 * angle: dropped straight back onto it (at most as far as the turn can open a gap, the carrier
 * included this time), so a rider of a rocking platform stays standing on it; nothing within
 * that reach and it stays where the carry left it. */
static vec2 drop_onto_carrier(char_ctx *x, vec2 pos, vec2 at, float turn_sin) {
    vec2 rel = v2_sub(pos, at);
    float reach = sqrtf(v2_dot(rel, rel)) * fabsf(turn_sin) + 2.0f * GEOM_SKIN;
    bool hit = x->hit;
    x->hit = false;
    vec2 to = char_slide(x, pos, v2_scale(x->f.up, -reach), CHAR_DROP);
    bool landed = x->hit;
    x->hit = hit;
    return landed ? to : pos;
}

static vec2 char_move(world *w, uint32_t i, const mover_candidate *cands, uint32_t count,
                      const char_frame *f) {
    const world_mover *m = &w->movers[i];
    world_character *c = &w->characters[m->slot];
    char_ctx x; /* its arrays are written before they are read: no zeroing them every move */
    char_ctx_init(&x, w, i, c, f, cands, count);
    vec2 pos = m->position;
    vec2 carry = v2(0.0f, 0.0f), at = v2(0.0f, 0.0f); /* the carrier's place now */
    uint32_t gi = UINT32_MAX;
    if (c->carrier != UINT32_MAX) {
        gi = w->slots[c->carrier].index;
        at = world_moved_before(w, gi, i) ? w->scratch.p2[gi] : w->scratch.p0[gi];
        carry = carry_of(w, c, at, pos);
    }
    /* everything this move can reach: the carry, the plan (turned by a slope, never longer), a
     * step up and a snap and the probe down */
    aabb box = box_at(pos, m->lo, m->hi);
    aabb reach = aabb_sweep(aabb_sweep(box, carry), v2_add(carry, c->plan));
    reach = aabb_sweep(reach, v2_scale(f->up, c->opt.step_height));
    reach = aabb_sweep(reach, v2_scale(f->up, -(c->opt.snap_distance + 2.0f * GEOM_SKIN)));
    gather(&x, c, aabb_inflate(reach, fabsf(c->plan.x) + fabsf(c->plan.y) + WORLD_QUERY_MARGIN));
    c->carried = v2(0.0f, 0.0f);
    if (gi != UINT32_MAX) {
        x.skip = gi;
        vec2 to = char_slide(&x, pos, carry, CHAR_DROP);
        vec2 lifted = lift_off_carrier(&x, to, gi, at);
        x.skip = UINT32_MAX;
        float turn_sin = carrier_turn_sin(w, c);
        if (vec_eq(lifted, to) && turn_sin != 0.0f)
            lifted = drop_onto_carrier(&x, to, at, turn_sin);
        c->carried = v2_sub(lifted, pos);
        pos = lifted;
    }
    x.hit = false;
    pos = c->walking ? char_walk(&x, pos) : char_slide(&x, pos, c->plan, CHAR_FLY);
    c->hit = x.hit;
    c->moved_to = pos;
    /* Where no mover can be under it after the step (movers ignore each other), nothing can
     * move it from here before step 4, whose probe this answer then is (finish_character). */
    if (!(w->movers_collide && w->mover_count >= 2))
        c->settled = char_probe(&x, pos, &c->settled_slot, &c->settled_normal);
    return pos;
}

vec2 world_character_move(world *w, uint32_t i, const mover_candidate *cands, uint32_t count) {
    char_frame f = frame_of(w);
    return char_move(w, i, cands, count, &f);
}

/* ---- the plan (before step 1) ------------------------------------------------------------ */

static void plan_character(world *w, world_mover *m, world_character *c, const char_frame *f) {
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

void world_character_begin_step(world *w) {
    if (!world_characters_active(w)) return;
    char_frame f = frame_of(w);
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (world_is_character(w, m->slot)) plan_character(w, m, &w->characters[m->slot], &f);
    }
}

vec2 world_character_expected(const world *w, uint32_t i, float *reach) {
    const world_character *c = &w->characters[w->movers[i].slot];
    vec2 d = c->plan;
    float extra = c->opt.step_height + c->opt.snap_distance + 4.0f * GEOM_SKIN;
    if (c->carrier != UINT32_MAX) {
        const world_mover *g = &w->movers[w->slots[c->carrier].index];
        d = v2_add(d, v2_scale(g->intent, w->dt));
        if (ref_kind(g->shape) == WORLD_REF_TURNED) {
            /* a turning carrier swings it about its position by up to its turn of the step */
            vec2 rel = v2_sub(w->movers[i].position, g->position);
            extra += sqrtf(v2_dot(rel, rel)) * w->cfg.max_angular_speed * w->dt;
        }
    }
    *reach = extra;
    return d;
}

/* ---- step 4 ------------------------------------------------------------------------------- */

typedef struct probe_cands {
    const world *w;
    uint32_t self;
    aabb box;
    mover_candidate *out;
    uint32_t count;
} probe_cands;

static bool probe_cand_visit(const world *w, uint32_t j, void *vctx) {
    probe_cands *p = vctx;
    const world_mover *o = &w->movers[j];
    if (j == p->self || p->count == CHAR_PROBE_CANDS) return true;
    if (!aabb_overlaps(box_at(o->position, o->lo, o->hi), p->box)) return true;
    p->out[p->count].view = mover_view(o, o->position);
    p->out[p->count].d = v2(0.0f, 0.0f);
    p->out[p->count].index = j;
    p->count++;
    return true;
}

/* The velocity along up after the step: a stopped motion keeps only what it achieved. */
static float vertical_after(const world *w, const world_character *c, vec2 own, bool stopped,
                            const char_frame *f) {
    if (c->walking) return 0.0f;
    float vy = c->vy;
    if (!stopped) return vy;
    float u = v2_dot(own, f->up) / w->dt;
    if (vy < 0.0f && u > vy) return u < 0.0f ? u : 0.0f;
    if (vy > 0.0f && u < vy) return u > 0.0f ? u : 0.0f;
    return vy;
}

static void finish_character(world *w, uint32_t i, const char_frame *f, bool movers, vec2 start) {
    world_mover *m = &w->movers[i];
    world_character *c = &w->characters[m->slot];
    vec2 end = m->position;
    mover_candidate cands[CHAR_PROBE_CANDS];
    aabb box = box_at(end, m->lo, m->hi);
    probe_cands pc = {w, i, aabb_inflate(box, 4.0f * GEOM_SKIN), cands, 0};
    if (movers) world_grid_query(w, &w->cache->grid, pc.box, probe_cand_visit, &pc);
    char_ctx x;
    char_ctx_init(&x, w, i, c, f, cands, pc.count);
    uint32_t slot = c->settled_slot;
    vec2 n = c->settled_normal;
    bool grounded = WORLD_FAST_PATHS && !movers && vec_eq(end, c->moved_to)
                        ? c->settled
                        : char_probe(&x, end, &slot, &n);
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

/* A carrier the discrete pass pushed back (a platform pressing on a body below it) moved less
 * than the carry that took its riders with it: each rider follows the push too, as a straight
 * move to the first contact (the carrier left out), so it keeps its place on the carrier (I10). */
static void follow_pushed_carriers(world *w, const char_frame *f) {
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (!world_is_character(w, m->slot)) continue;
        world_character *c = &w->characters[m->slot];
        if (c->carrier == UINT32_MAX) continue;
        uint32_t gi = w->slots[c->carrier].index;
        vec2 push = v2_sub(w->movers[gi].position, w->scratch.p2[gi]);
        if (push.x == 0.0f && push.y == 0.0f) continue;
        char_ctx x;
        char_ctx_init(&x, w, i, c, f, NULL, 0);
        x.skip = gi;
        vec2 to = char_slide(&x, m->position, push, CHAR_DROP);
        c->carried = v2_add(c->carried, v2_sub(to, m->position));
        m->position = to;
    }
}

void world_character_end_step(world *w) {
    uint32_t n = w->mover_count;
    bool movers = w->movers_collide && n >= 2;
    char_frame f = frame_of(w);
    if (movers) follow_pushed_carriers(w, &f);
    /* the probe's movers where the step left them */
    if (movers) world_grid_build_current(w, WORLD_PUSH_ALLOWANCE);
    for (uint32_t i = 0; i < n; i++) {
        if (world_is_character(w, w->movers[i].slot))
            finish_character(w, i, &f, movers, w->scratch.p0[i]);
        else
            finish_mover(w, i, w->scratch.p0[i], w->movers[i].position);
    }
}

/* ---- movers that ignore each other ------------------------------------------------------- */

/* A walker the last step left where it was, grounded and pressed still (against a wall, or with
 * no intent), with nothing changed since that it reads (its place, its intent and options, the
 * statics, the rules of filters and one-way bodies, no jump pending): the step would give the
 * same answer again, so it is done without one (as world_turn_still does for turning bodies).
 * Only where movers ignore each other: then a character reads nothing of the others. */
static bool char_still(const world *w, const world_mover *m, const world_character *c) {
    return WORLD_FAST_PATHS && c->still_epoch == w->statics_epoch &&
           c->still_rules == w->rules_epoch && c->jump_until == 0 &&
           m->pending_seq == c->still_seq && vec_eq(m->position, c->still_pos);
}

static void note_still(const world *w, const world_mover *m, world_character *c, vec2 start,
                       vec2 end) {
    /* the same plan next step: the same ground normal as this step's walk followed */
    bool still = c->walking && c->grounded && c->carrier == UINT32_MAX && vec_eq(start, end) &&
                 vec_eq(c->ground_normal, c->plan_normal);
    c->still_epoch = still ? w->statics_epoch : 0u;
    c->still_rules = w->rules_epoch;
    c->still_pos = end;
    c->still_seq = m->applied_seq;
}

void world_character_step_alone(world *w) {
    char_frame f = frame_of(w);
    float dt = w->dt;
    const uint32_t ahead = 4; /* records are per slot, met in the movers' order: fetch early */
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (i + ahead < w->mover_count) {
            const char *next = (const char *)&w->characters[w->movers[i + ahead].slot];
            for (size_t line = 0; line < sizeof(world_character); line += 64)
                __builtin_prefetch(next + line);
        }
        vec2 start = m->position;
        w->scratch.p0[i] = start;
        if (!world_is_character(w, m->slot)) {
            aabb unused;
            vec2 r = v2_scale(m->intent, dt);
            finish_mover(w, i, start,
                         mover_turning(w, m) ? world_turn_slide(w, i, start, r, NULL, 0)
                                             : world_slide(w, i, start, r, NULL, 0, &unused));
            continue;
        }
        world_character *c = &w->characters[m->slot];
        if (char_still(w, m, c)) {
            /* its plan stands; the one-way rule (contacts) reads it as the plan would set it */
            if (w->one_way_count)
                w->one_way[m->slot].disp =
                    v2_mul_add(c->plan, -f.g * c->opt.gravity_scale * dt * dt, f.up);
            w->swept_hits += c->still_hits; /* what its slides would have counted */
            continue;
        }
        uint64_t hits = w->swept_hits;
        plan_character(w, m, c, &f);
        m->position = char_move(w, i, NULL, 0, &f);
        finish_character(w, i, &f, false, start);
        note_still(w, m, c, start, m->position);
        c->still_hits = (uint32_t)(w->swept_hits - hits);
    }
}

/* ---- the API ------------------------------------------------------------------------------ */

/* The options with the defaults filled in; false for a non-finite one. Negative lengths and
 * speeds are taken as 0 (their defaults), as is a non-positive gravity scale. */
static bool fill_options(const world_character_options *in, world_character_options *o) {
    *o = in ? *in : (world_character_options){0};
    float v[5] = {o->max_slope, o->step_height, o->snap_distance, o->jump_speed, o->gravity_scale};
    for (int k = 0; k < 5; k++)
        if (!isfinite(v[k])) return false;
    if (!(o->max_slope > 0.0f)) o->max_slope = WORLD_CHARACTER_MAX_SLOPE;
    if (o->max_slope > 1.5533430f) o->max_slope = 1.5533430f; /* 89 degrees */
    if (!(o->step_height > 0.0f)) o->step_height = 0.0f;
    if (!(o->snap_distance > 0.0f)) o->snap_distance = 0.0f;
    if (!(o->jump_speed > 0.0f)) o->jump_speed = 0.0f;
    if (!(o->gravity_scale > 0.0f)) o->gravity_scale = 1.0f;
    if (!o->jump_buffer_ms) o->jump_buffer_ms = WORLD_CHARACTER_BUFFER_MS;
    if (!o->coyote_ms) o->coyote_ms = WORLD_CHARACTER_BUFFER_MS;
    return true;
}

world_status world_body_set_character(world *w, world_body_id id,
                                      const world_character_options *opt) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (w->slots[slot].kind != WORLD_BODY_MOVING) return WORLD_ERR_NOT_MOVING;
    world_character_options o;
    if (!fill_options(opt, &o)) return WORLD_ERR_NOT_FINITE;
    /* Bounds that keep a hostile option from costing: a step or a snap taller than the character
     * is none (a step of 1e30 would sweep the whole map each blocked step), and a pull a thousand
     * times the world's is past any game's. */
    const world_mover *m = &w->movers[w->slots[slot].index];
    vec2 size = v2_sub(m->hi, m->lo);
    vec2 g = w->cfg.gravity;
    float glen = sqrtf(v2_dot(g, g));
    float tall =
        glen > 0.0f ? (fabsf(g.x) * size.x + fabsf(g.y) * size.y) / glen : wmax(size.x, size.y);
    o.step_height = wmin(o.step_height, tall);
    o.snap_distance = wmin(o.snap_distance, tall);
    o.gravity_scale = wmin(o.gravity_scale, WORLD_CHARACTER_MAX_GRAVITY_SCALE);
    if (!w->characters) {
        w->characters = world_alloc(w, w->capacity, sizeof *w->characters);
        if (!w->characters) return WORLD_ERR_NO_MEMORY;
    }
    world_character *c = &w->characters[slot];
    if (!c->on) {
        memset(c, 0, sizeof *c);
        c->on = 1;
        c->carrier = UINT32_MAX;
        w->character_count++;
    }
    c->opt = o;
    c->still_epoch = 0;
    c->cos_slope = geom_cos_sin(o.max_slope).x;
    double rate = w->cfg.tick_rate_hz;
    c->buffer_ticks = (uint32_t)ceil((double)o.jump_buffer_ms * rate / 1000.0);
    c->coyote_ticks = (uint32_t)floor((double)o.coyote_ms * rate / 1000.0);
    if (w->turns && w->turns[slot].in_use) w->turns[slot].spin = 0.0f; /* characters do not turn */
    return WORLD_OK;
}

world_status world_character_jump(world *w, world_body_id id) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (!world_is_character(w, slot)) return WORLD_OK;
    world_character *c = &w->characters[slot];
    /* the next step applies it: steps tick+1 .. tick+buffer_ticks may take it */
    c->jump_until = w->tick + c->buffer_ticks;
    return WORLD_OK;
}

bool world_body_character(const world *w, world_body_id id, world_character_state *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX || !world_is_character(w, slot)) return false;
    const world_character *c = &w->characters[slot];
    out->grounded = c->grounded;
    out->ground = c->ground;
    out->vertical = c->vy;
    out->options = c->opt;
    return true;
}

uint32_t world_character_count(const world *w) { return w->character_count; }
uint32_t world_one_way_count(const world *w) { return w->one_way_count; }

void world_character_despawn(world *w, uint32_t slot) {
    if (!world_is_character(w, slot)) return;
    w->characters[slot].on = 0;
    w->character_count--;
}

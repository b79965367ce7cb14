/* world_character_alone: steps 1-4 of a world with characters whose movers ignore each other
 * (world_character_step_alone): each mover's plan, move and step 4 in one walk over them, since
 * no mover reads another's. Two shortcuts, each held to the general step by test_world_fastpaths
 * (the state hashes of side-on scenes with and without WORLD_FAST_PATHS):
 *   - a walker pressed still, with nothing changed that it reads, is not stepped (char_still);
 *   - the fused step of a box character among box statics (box_step), the common case of a level
 *     of tiles: the general step's walk, snap, flight and ground probe over the statics it
 *     remembers, with no carrier, candidates, bounds or grid walks to consider. It is the general
 *     step's arithmetic in the general step's order (its slide is char_slide's loop, its probe
 *     probe_within's; a change to either is a change to both), and it gives up, having written
 *     nothing, where the general step does more (a step up, a sweep leaving what it remembers).
 *     Why it exists: with one or two statics near (the usual count), the general step's cost is
 *     its plumbing, not its sweeps (docs/performance.md, S1c). */
#include "world_character_impl.h"

/* ---- the fused step of a box character among box statics --------------------------------- */

typedef struct box_step {
    const world *w;
    const world_mover *m;
    const world_character *c;
    const world_character_near *nc; /* what it remembers: every static its move can meet */
    char_frame f;
    aabb lim;       /* the remembered area within the inner bounds (no bounds to sweep) */
    uint32_t asked; /* one-way entries of nc whose step-start answer is in above (a bit each) */
    uint32_t above; /* world_one_way_above's answers */
    vec2 up[WORLD_CHARACTER_NEAR]; /* and the up direction each gave */
    uint32_t hits; /* sweeps that hit (world_stats.swept_hits, added when the step is kept) */
    bool hit;      /* a sweep of its own motion hit something */
    bool out;      /* a sweep or a probe left lim: the general step takes it */
    /* the last probe's answer (a walk's snap and the settle probe often ask at one place) */
    bool memo_valid, memo_ground;
    vec2 memo_pos, memo_normal;
    uint32_t memo_slot;
} box_step;

/* Whether the one-way entry k blocks a sweep by r: the character lay above it at the step's
 * start (asked once for the step) and r runs against its up (char_sweep's rule). */
WORLD_HOT bool bs_one_way_blocks(box_step *s, uint32_t k, vec2 r) {
    uint32_t bit = 1u << k;
    if (!(s->asked & bit)) {
        s->asked |= bit;
        uint32_t slot = s->w->statics[s->nc->statics[k]].slot;
        if (world_one_way_above(s->w, s->m->slot, slot, &s->up[k])) s->above |= bit;
    }
    return (s->above & bit) && v2_dot(r, s->up[k]) < 0.0f;
}

/* char_sweep over the remembered boxes: the earliest hit of the character at pos moving by r
 * (hit_offer's rule: the first of equal times), into *t (> 1 for none) and *n. */
WORLD_HOT void bs_sweep(box_step *s, vec2 pos, vec2 r, float *t, vec2 *n) {
    float best_t = WORLD_NO_HIT;
    vec2 best_n = v2(0.0f, 0.0f);
    aabb box = box_at(pos, s->m->lo, s->m->hi);
    aabb swept = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
    if (!aabb_contains(s->lim, swept)) {
        s->out = true;
    } else {
        const world_character_near *nc = s->nc;
        vec2 inv = recip(r);
        for (uint32_t k = 0; k < nc->count; k++) {
            if (!aabb_overlaps(swept, nc->box[k])) continue;
            if ((nc->flags[k] & CHAR_NEAR_ONE_WAY) && !bs_one_way_blocks(s, k, r)) continue;
            geom_toi toi;
            if (box_sweep(box, r, inv, nc->box[k], &toi) && toi.t < best_t)
                best_t = toi.t, best_n = toi.normal;
        }
    }
    *t = best_t, *n = best_n;
}

/* char_slide's loop (no movers: nothing it hits moves). */
WORLD_HOT vec2 bs_slide(box_step *s, vec2 pos, vec2 r, char_motion how) {
    vec2 first = r;
    for (int it = 0; it < s->w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        float best_t;
        vec2 best_n;
        bs_sweep(s, pos, r, &best_t, &best_n);
        if (s->out) return pos;
        if (best_t > 1.0f) return v2_add(pos, r);
        s->hit = true;
        s->hits++;
        vec2 n = how == CHAR_WALK ? walker_normal(best_n, s->f.up, s->c->cos_slope) : best_n;
        vec2 d = r;
        /* (char_slide's arguments for a static: nothing moving, solid) */
        float t = slide_respond(&pos, &r, best_t, n, true, v2(0.0f, 0.0f), true, true, first);
        if (how == CHAR_DROP) break;
        if (how == CHAR_WALK && -v2_dot(n, s->f.up) >= s->c->cos_slope)
            r = walk_along(v2_neg(n), s->f.right, v2_dot(d, s->f.right) * (1.0f - t));
    }
    return pos;
}

/* char_probe over the remembered boxes: whether a walkable surface lies within the contact
 * band's begin distance below the character at pos, its slot and normal. */
WORLD_HOT bool bs_probe(box_step *s, vec2 pos, uint32_t *slot, vec2 *normal) {
    if (!(s->memo_valid && vec_eq(pos, s->memo_pos))) {
        const world *w = s->w;
        const world_mover *m = s->m;
        probe_ask p = {w,       m,
                       pos,     v2_scale(s->f.up, -2.0f * GEOM_SKIN),
                       {0, 0},  box_at(pos, m->lo, m->hi),
                       s->f.up, s->c->cos_slope};
        p.inv = recip(p.d);
        aabb swept = aabb_inflate(aabb_sweep(p.box, p.d), WORLD_QUERY_MARGIN);
        if (!aabb_contains(s->lim, swept)) {
            s->out = true;
            return false;
        }
        probe_hit best = {WORLD_NO_HIT, {0, 0}, CHAR_NONE};
        const world_character_near *nc = s->nc;
        probe_near(&p, swept, true, nc->statics, nc->box, nc->flags, nc->count, &best);
        s->memo_valid = true;
        s->memo_pos = pos;
        s->memo_slot = best.slot;
        s->memo_normal = best.normal;
        s->memo_ground = best.t <= 1.0f;
    }
    *slot = s->memo_slot, *normal = s->memo_normal;
    return s->memo_ground;
}

/* The move of character i (its plan made) by the fused step: true with its end in *end, the
 * ground probe's answer there in *ground (its slot and normal in *slot, *normal) and its record's
 * move fields written, or false with nothing written (the general step takes it). */
static bool box_step_move(world *w, uint32_t i, world_character *c, const char_frame *f, vec2 *end,
                          bool *ground, uint32_t *slot, vec2 *normal) {
    const world_mover *m = &w->movers[i];
    const world_character_near *nc = &c->near;
    if (!WORLD_FAST_PATHS || c->carrier != UINT32_MAX || ref_kind(m->shape) != GEOM_SHAPE_BOX)
        return false;
    vec2 pos = m->position;
    if (nc->epoch != w->statics_epoch || nc->rules != w->rules_epoch) return false;
    for (uint32_t k = 0; k < nc->count; k++)
        if (!(nc->flags[k] & CHAR_NEAR_BOX)) return false;
    /* Each sweep and probe tests its own box against the remembered area (lim), and the general
     * step gives the same answers from a walk of its own when one leaves it. (Its fields are set
     * one by one: up[] is written before it is read, and zeroing it each step cost more than the
     * sweeps.) */
    box_step s;
    s.w = w, s.m = m, s.c = c, s.nc = nc, s.f = *f;
    s.asked = 0, s.above = 0, s.hits = 0;
    s.hit = false, s.out = false, s.memo_valid = false;
    s.lim = aabb_make(v2_max(nc->area.min, w->inner_bounds.min),
                      v2_min(nc->area.max, w->inner_bounds.max));
    if (c->walking) {
        vec2 to = bs_slide(&s, pos, c->plan, CHAR_WALK);
        float want = v2_dot(c->plan, f->right), got = v2_dot(v2_sub(to, pos), f->right);
        if (c->opt.step_height > 0.0f && fabsf(got) < 0.99f * fabsf(want))
            return false; /* blocked: a step up, the general step's */
        uint32_t slot;
        vec2 n;
        if (c->opt.snap_distance > 0.0f && !bs_probe(&s, to, &slot, &n)) {
            /* char_snap: down by at most snap_distance onto a walkable surface */
            vec2 down = bs_slide(&s, to, v2_scale(f->up, -c->opt.snap_distance), CHAR_DROP);
            if (bs_probe(&s, down, &slot, &n)) to = down;
        }
        pos = to;
    } else {
        pos = bs_slide(&s, pos, c->plan, CHAR_FLY);
    }
    *ground = bs_probe(&s, pos, slot, normal);
    if (s.out) return false;
    c->carried = v2(0.0f, 0.0f);
    c->hit = s.hit;
    c->moved_to = pos;
    w->swept_hits += s.hits;
    *end = pos;
    return true;
}

/* ---- the tick ----------------------------------------------------------------------------- */

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
            /* every line of the record, unrolled (a loop of seven cost half as much again) */
            const char *next = (const char *)&w->characters[w->movers[i + ahead].slot];
#define CHAR_PREFETCH(k)                                                                           \
    if ((k)*64 < sizeof(world_character)) __builtin_prefetch(next + (k)*64)
            CHAR_PREFETCH(0);
            CHAR_PREFETCH(1);
            CHAR_PREFETCH(2);
            CHAR_PREFETCH(3);
            CHAR_PREFETCH(4);
            CHAR_PREFETCH(5);
            CHAR_PREFETCH(6);
            CHAR_PREFETCH(7);
#undef CHAR_PREFETCH
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
        char_plan(w, m, c, &f);
        vec2 end, n;
        uint32_t slot;
        bool ground;
        if (box_step_move(w, i, c, &f, &end, &ground, &slot, &n)) {
            m->position = end;
            char_record_step(w, m, c, &f, start, ground, slot, n); /* step 4, probed there */
        } else {
            m->position = world_character_move_one(w, i, NULL, 0, &f);
            world_character_finish(w, i, &f, false, start);
        }
        note_still(w, m, c, start, m->position);
        c->still_hits = (uint32_t)(w->swept_hits - hits);
    }
}

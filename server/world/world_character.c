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
#include "world_character_impl.h"
#include "world_movers.h"
#include "world_slide.h"
#include "world_statics.h"

#define CHAR_NEAR 48 /* statics gathered once for a character's whole move */
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
/* Walks the static grid around region, grown ahead along c's plan, into c->near (the statics the
 * character of slot self may meet there); false when more lie there than it holds (then nothing
 * is remembered). */
static bool remember(const world *w, uint32_t self, world_character *c, aabb region) {
    world_character_near *nc = &c->near;
    aabb area =
        aabb_inflate(aabb_sweep(region, v2_scale(c->plan, 4.0f)), 0.25f * w->levels[0].cell);
    gather_ctx g = {self, nc->statics, 0, WORLD_CHARACTER_NEAR};
    world_static_walk(w, area, gather_visit, &g);
    nc->epoch = 0;
    if (g.count > WORLD_CHARACTER_NEAR) return false;
    nc->area = area, nc->count = g.count;
    nc->epoch = w->statics_epoch, nc->rules = w->rules_epoch;
    for (uint32_t k = 0; k < g.count; k++) {
        const world_static *st = &w->statics[nc->statics[k]];
        nc->box[k] = st->box;
        nc->flags[k] = near_flags_of(w, st);
    }
    return true;
}

static void gather(char_ctx *x, world_character *c, aabb region) {
    world *w = x->w;
    world_character_near *nc = &c->near;
    if (!(WORLD_FAST_PATHS && nc->epoch == w->statics_epoch && nc->rules == w->rules_epoch &&
          aabb_contains(nc->area, region)) &&
        !remember(w, x->m->slot, c, region)) {
        /* too many to remember: the region alone */
        gather_ctx g = {x->m->slot, x->near_buf, 0, CHAR_NEAR};
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
        vec2 n =
            how == CHAR_WALK ? walker_normal(best.normal, x->f.up, x->c->cos_slope) : best.normal;
        vec2 d = r;
        float t = slide_respond(&pos, &r, best.t, n, true, best.other_d, !best.mover, true, first);
        if (how == CHAR_DROP) break;
        if (how == CHAR_WALK && !best.mover && -v2_dot(n, x->f.up) >= x->c->cos_slope)
            r = walk_along(v2_neg(n), x->f.right, v2_dot(d, x->f.right) * (1.0f - t));
        tau += t * (1.0f - tau);
    }
    return pos;
}

typedef struct probe_walk {
    const probe_ask *p;
    probe_hit *best;
} probe_walk;

static bool probe_visit(const world *w, uint32_t s, void *vctx) {
    probe_walk *pw = vctx;
    body_view b = static_view(&w->statics[s]);
    probe_offer(pw->p, &b, w->statics[s].slot, PROBE_ASK, pw->best);
    return true;
}

/* The nearest walkable surface within dist below the character at pos (candidates where they
 * end the step): its best hit (t > 1 for none; slot CHAR_BOUNDS for the bounds). */
static probe_hit probe_within(const char_ctx *x, vec2 pos, float dist) {
    const world *w = x->w;
    probe_ask p = {w,       x->m,
                   pos,     v2_scale(x->f.up, -dist),
                   {0, 0},  box_at(pos, x->m->lo, x->m->hi),
                   x->f.up, x->c->cos_slope};
    p.inv = recip(p.d);
    probe_hit best = {WORLD_NO_HIT, {0, 0}, CHAR_NONE};
    sweep_hit bounds = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
    aabb swept = aabb_inflate(aabb_sweep(p.box, p.d), WORLD_QUERY_MARGIN);
    if (!aabb_contains(w->inner_bounds, swept)) sweep_bounds(w, p.box, p.d, &bounds);
    if (bounds.t <= 1.0f && -v2_dot(bounds.normal, x->f.up) >= x->c->cos_slope)
        best = (probe_hit){bounds.t, v2_neg(bounds.normal), CHAR_BOUNDS};
    for (uint32_t k = 0; k < x->count; k++) {
        if (x->cands[k].index == x->skip) continue;
        body_view b = x->cands[k].view;
        b.pos = v2_add(b.pos, x->cands[k].d);
        probe_offer(&p, &b, w->movers[x->cands[k].index].slot, PROBE_ASK, &best);
    }
    if (gathered_for(x, swept)) {
        probe_near(&p, swept, ref_kind(x->m->shape) == GEOM_SHAPE_BOX, x->near, x->near_box,
                   x->near_flags, (uint32_t)x->near_count, &best);
    } else {
        probe_walk pw = {&p, &best};
        world_static_walk(w, swept, probe_visit, &pw);
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

/* The region everything a move can reach lies in (the carry, the plan, a step up, a snap and the
 * probe), carry the carrier's motion of the character: what gather walks. */
static aabb move_reach(const world_character *c, aabb box, vec2 carry, const char_frame *f) {
    /* the plan turned by a slope is never longer; then up by a step, down by a snap and the
     * probe */
    aabb reach = aabb_sweep(aabb_sweep(box, carry), v2_add(carry, c->plan));
    reach = aabb_sweep(reach, v2_scale(f->up, c->opt.step_height));
    reach = aabb_sweep(reach, v2_scale(f->up, -(c->opt.snap_distance + 2.0f * GEOM_SKIN)));
    return aabb_inflate(reach, fabsf(c->plan.x) + fabsf(c->plan.y) + WORLD_QUERY_MARGIN);
}

vec2 world_character_move_one(world *w, uint32_t i, const mover_candidate *cands, uint32_t count,
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
    gather(&x, c, move_reach(c, box_at(pos, m->lo, m->hi), carry, f));
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
     * move it from here before step 4, whose probe this answer then is (world_character_finish). */
    if (!(w->movers_collide && w->mover_count >= 2))
        c->settled = char_probe(&x, pos, &c->settled_slot, &c->settled_normal);
    return pos;
}

vec2 world_character_move(world *w, uint32_t i, const mover_candidate *cands, uint32_t count) {
    char_frame f = frame_of(w);
    return world_character_move_one(w, i, cands, count, &f);
}

/* ---- the plan (before step 1) ------------------------------------------------------------ */

void world_character_begin_step(world *w) {
    if (!world_characters_active(w)) return;
    char_frame f = frame_of(w);
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (world_is_character(w, m->slot)) char_plan(w, m, &w->characters[m->slot], &f);
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

void world_character_finish(world *w, uint32_t i, const char_frame *f, bool movers, vec2 start) {
    world_mover *m = &w->movers[i];
    world_character *c = &w->characters[m->slot];
    vec2 end = m->position;
    uint32_t slot = c->settled_slot;
    vec2 n = c->settled_normal;
    bool grounded = c->settled;
    if (!(WORLD_FAST_PATHS && !movers && vec_eq(end, c->moved_to))) {
        mover_candidate cands[CHAR_PROBE_CANDS];
        aabb box = box_at(end, m->lo, m->hi);
        probe_cands pc = {w, i, aabb_inflate(box, 4.0f * GEOM_SKIN), cands, 0};
        if (movers) world_grid_query(w, &w->cache->grid, pc.box, probe_cand_visit, &pc);
        char_ctx x;
        char_ctx_init(&x, w, i, c, f, cands, pc.count);
        grounded = char_probe(&x, end, &slot, &n);
    }
    char_record_step(w, m, c, f, start, grounded, slot, n);
}

/* The movers a rider following its carrier may meet (follow_pushed_carriers): every mover near
 * the follow's path that blocks it, where it stands now, its carrier too. */
typedef struct follow_cands {
    uint32_t self; /* the rider's dense index */
    aabb box;      /* the follow's path, grown by the margin */
    mover_candidate *out;
    uint32_t count;
    bool overflow; /* more than fit: the rider does not follow */
} follow_cands;

static bool follow_cand_visit(const world *w, uint32_t j, void *vctx) {
    follow_cands *p = vctx;
    const world_mover *o = &w->movers[j];
    if (j == p->self || !aabb_overlaps(box_at(o->position, o->lo, o->hi), p->box) ||
        !slots_block(w, w->movers[p->self].slot, o->slot))
        return true;
    if (p->count == CHAR_PROBE_CANDS) {
        p->overflow = true;
        return false;
    }
    p->out[p->count].view = mover_view(o, o->position);
    p->out[p->count].d = v2(0.0f, 0.0f);
    p->out[p->count].index = j;
    p->count++;
    return true;
}

/* A carrier the discrete pass pushed back (a platform pressing on a body below it) moved less
 * than the carry that took its riders with it: each rider follows the push too, as a straight
 * move to the first contact, back to where the mover pass left it on the carrier (I10). The move
 * meets statics and every other mover where it stands now, the carrier too (the grid holds them
 * where they are): a rider that followed blindly, its carrier left out, walked into its
 * neighbours in a crowd, and into the carrier's top from a corner it had stepped onto, past what
 * the discrete pass had just parted (I3; test_world_character's crowd found both). Returns
 * whether any rider moved. */
static bool follow_pushed_carriers(world *w, const char_frame *f) {
    bool moved = false;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (!world_is_character(w, m->slot)) continue;
        world_character *c = &w->characters[m->slot];
        if (c->carrier == UINT32_MAX) continue;
        uint32_t gi = w->slots[c->carrier].index;
        /* back to where the mover pass left it on the carrier: the carrier's push less what the
         * pass gave the rider itself (pushed along with it by their neighbours, a rider that
         * followed the whole push again went twice as far, into its carrier's top) */
        vec2 push = v2_sub(w->movers[gi].position, w->scratch.p2[gi]);
        if (push.x == 0.0f && push.y == 0.0f) continue; /* its carrier kept its place */
        vec2 back = v2_sub(push, v2_sub(m->position, w->scratch.p2[i]));
        if (back.x == 0.0f && back.y == 0.0f) continue;
        mover_candidate cands[CHAR_PROBE_CANDS];
        aabb path = aabb_sweep(box_at(m->position, m->lo, m->hi), back);
        follow_cands fc = {i, aabb_inflate(path, WORLD_QUERY_MARGIN), cands, 0, false};
        world_grid_query(w, &w->cache->grid, fc.box, follow_cand_visit, &fc);
        if (fc.overflow) continue; /* a crowd too thick to judge: it stays */
        char_ctx x;
        char_ctx_init(&x, w, i, c, f, cands, fc.count);
        vec2 to = char_slide(&x, m->position, back, CHAR_DROP);
        c->carried = v2_add(c->carried, v2_sub(to, m->position));
        moved = moved || !vec_eq(to, m->position);
        m->position = to;
    }
    return moved;
}

void world_character_end_step(world *w) {
    uint32_t n = w->mover_count;
    bool movers = w->movers_collide && n >= 2;
    char_frame f = frame_of(w);
    /* the movers where the step left them: for the riders' follow, then for the probe (again
     * when a rider followed) */
    if (movers) {
        world_grid_build_current(w, WORLD_PUSH_ALLOWANCE);
        if (follow_pushed_carriers(w, &f)) world_grid_build_current(w, WORLD_PUSH_ALLOWANCE);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (world_is_character(w, w->movers[i].slot))
            world_character_finish(w, i, &f, movers, w->scratch.p0[i]);
        else
            finish_mover(w, i, w->scratch.p0[i], w->movers[i].position);
    }
}

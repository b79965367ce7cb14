/* world_turn: rotation in the tick (COLLISION.md "Rotation", PROTOCOL.md "Rotation").
 *
 * A turning mover moves and turns together until its first contact along the combined motion:
 * conservative advancement (geom_toi_turning, the seed's bound |v_rel . n| + |w| r) against the
 * statics, the bounds and the mover candidates near the disc its turn sweeps. It stops turning
 * there for the tick (its angle is the angle reached at the contact) and slides on with what is
 * left of its translation through the ordinary collide-and-slide, with its shape as it now
 * stands. The angle is kept per slot (world_turn) as an angle and its cos/sin, taken afresh from
 * the angle each tick, so nothing accumulates rounding. */
#include "world_slide.h"
#include "world_statics.h"

/* The gap the advancement stops at, and how far above it counts as arrived: under the skin the
 * linear slide keeps (so a body resting a skin from a wall can still turn a little), above the
 * float rounding of positions. */
#define TURN_TARGET (0.5f * GEOM_SKIN)
#define TURN_TOLERANCE (0.25f * GEOM_SKIN)

typedef struct turn_ctx {
    uint32_t self;           /* the turning mover's slot */
    vec2 mid;                /* the middle of its path */
    float reach;             /* how far from mid any point of it gets over the tick (+ margin) */
    aabb swept;              /* a box that holds it over the tick (+ margin) */
    const geom_shape *local; /* its body-local shape */
    const geom_motion *ma;   /* its motion over the tick */
    float t;                 /* earliest contact so far, fraction of the tick */
    bool box;                /* its shape is a box (box statics: geom_toi_turning_box_fixed) */
    geom_turning_box box_a;  /* a box mover as geom_toi_turning_box_fixed takes it (its q0 the
                              * turn record's q: geom_turn_start of its angle) */
} turn_ctx;

static void turn_offer(turn_ctx *c, const geom_shape *b, vec2 pb, vec2 db, float dab) {
    /* only an earlier contact than the one found matters: none at all once it is at the start,
     * and the advancement stops at it (the same earliest contact, fewer steps) */
    if (c->t == 0.0f) return;
    geom_motion mb = {pb, 0.0f, db, dab};
    geom_toi_result r;
    if (geom_toi_turning_leaving(c->local, c->ma, b, &mb, TURN_TARGET, TURN_TOLERANCE, c->t, &r) &&
        r.t < c->t)
        c->t = r.t;
}

/* The advancement against static index, whose AABB is box (a visit of world_static_query, and
 * of the gathered statics inlined, their copy of the box). */
WORLD_HOT void turn_static(const world *w, turn_ctx *c, uint32_t index, aabb box) {
    if (c->t == 0.0f) return; /* a contact at the start: nothing comes earlier */
    if (!aabb_meets(box, c->swept)) return;
    /* beyond the disc the turning shape sweeps (a circle against the static's AABB): the corners
     * of the query box hold most of what it finds, and no advancement is needed for them */
    float dx = wmax(wmax(box.min.x - c->mid.x, c->mid.x - box.max.x), 0.0f);
    float dy = wmax(wmax(box.min.y - c->mid.y, c->mid.y - box.max.y), 0.0f);
    if (dx * dx + dy * dy > c->reach * c->reach) return;
    const world_static *st = &w->statics[index];
    if (!slots_block(w, c->self, st->slot)) return;
    if (WORLD_FAST_PATHS && c->box && ref_kind(st->shape) == GEOM_SHAPE_BOX) {
        /* a box static stands still, unturned: geom_toi_turning_leaving's time without its
         * general motion of B (the same floats), the mover's terms taken once per tick */
        float t = geom_toi_turning_box_fixed(&c->box_a, box.max.x - st->position.x,
                                             box.max.y - st->position.y, st->position.x,
                                             st->position.y, TURN_TARGET, TURN_TOLERANCE, c->t);
        if (t < c->t) c->t = t;
        return;
    }
    geom_shape tmp;
    turn_offer(c, ref_shape(w, st->shape, static_hi(st), &tmp), st->position, v2(0.0f, 0.0f), 0.0f);
}

static bool turn_static_visit(const world *w, uint32_t index, void *vctx) {
    turn_static(w, vctx, index, w->statics[index].box);
    return true;
}

/* The bounds as four walls, each a unit-thick box just outside them along the part the turn can
 * reach (short boxes: GJK stays precise near the body). */
static void turn_bounds(const world *w, aabb reach, turn_ctx *c) {
    if (aabb_contains(w->inner_bounds, reach)) return;
    const aabb b = w->cfg.bounds;
    vec2 mid = v2_scale(v2_add(reach.min, reach.max), 0.5f);
    vec2 half = v2_add(v2_scale(v2_sub(reach.max, reach.min), 0.5f), v2(1.0f, 1.0f));
    geom_shape wall;
    wall.kind = GEOM_SHAPE_BOX;
    wall.u.half_extents = v2(0.5f, half.y);
    if (reach.max.x > w->inner_bounds.max.x)
        turn_offer(c, &wall, v2(b.max.x + 0.5f, mid.y), v2(0, 0), 0.0f);
    if (reach.min.x < w->inner_bounds.min.x)
        turn_offer(c, &wall, v2(b.min.x - 0.5f, mid.y), v2(0, 0), 0.0f);
    wall.u.half_extents = v2(half.x, 0.5f);
    if (reach.max.y > w->inner_bounds.max.y)
        turn_offer(c, &wall, v2(mid.x, b.max.y + 0.5f), v2(0, 0), 0.0f);
    if (reach.min.y < w->inner_bounds.min.y)
        turn_offer(c, &wall, v2(mid.x, b.min.y - 0.5f), v2(0, 0), 0.0f);
}

/* Statics a turning mover's tick may touch, gathered by one grid walk for both its advancement
 * and the slide after it (WORLD_FAST_PATHS; without, each walks the grid itself): their indices
 * into statics, which both read from there. */
#define TURN_NEAR 64

typedef struct turn_gather_ctx {
    uint32_t self; /* the turning mover's slot */
    uint32_t *out; /* TURN_NEAR entries */
    int n;         /* gathered so far */
    bool full;     /* one more blocked than out holds */
} turn_gather_ctx;

static bool turn_gather_visit(const world *w, uint32_t s, void *vctx) {
    turn_gather_ctx *g = vctx;
    const world_static *st = &w->statics[s];
    if (!slots_block(w, g->self, st->slot)) return true;
    if (g->n == TURN_NEAR) {
        g->full = true;
        return false;
    }
    g->out[g->n++] = s;
    return true;
}

/* The statics meeting region that block the mover of slot self, in the grid walk's order
 * (world_static_walk, inlined with its visitor), into out (at most TURN_NEAR); -1 when there are
 * more. */
static int turn_walk(const world *w, uint32_t self, aabb region, uint32_t *out) {
    turn_gather_ctx g = {self, out, 0, false};
    world_static_walk(w, region, turn_gather_visit, &g);
    return g.full ? -1 : g.n;
}

/* turn_gather when the near cache does not hold region: a walk of region's cells grown ahead of
 * the motion (near_cache_grow) that remembers them for the next ticks. Out of line: 7% of the
 * turning mover-ticks of S1r come here. */
static __attribute__((noinline)) int turn_refill(world *w, uint32_t mi, uint32_t self, aabb region,
                                                 vec2 r, uint32_t *out) {
    const world_level *lv = &w->levels[0];
    const world_static *statics = w->statics;
    world_near_cache *nc = &w->near_cache[mi];
    int n = 0;
    cell_range cr = level_range_inside(w, lv, region);
    cell_range g = near_cache_grow(cr, r, lv->nx, lv->ny);
    uint32_t len = (uint32_t)(g.x1 - g.x0 + 1);
    if (len > 32) return turn_walk(w, self, region, out);
    nc->area = (aabb){{NAN, NAN}, {NAN, NAN}}; /* void while it is refilled */
    uint32_t found = 0;                        /* statics in the walked cells */
    bool full = false;
    for (int32_t cy = g.y0; cy <= g.y1; cy++) {
        /* the row's cells g.x0..g.x1 as bits: one word, or the tail of one and head of the next
         * (g.x1 < nx, so the next word exists) */
        uint32_t c0 = (uint32_t)(cy * lv->nx + g.x0), sh = c0 & 63;
        uint64_t bits = lv->occupied[c0 >> 6] >> sh;
        if (sh + len > 64) bits |= lv->occupied[(c0 >> 6) + 1] << (64 - sh);
        bits &= (1ull << len) - 1;
        bool row_in = cy >= cr.y0 && cy <= cr.y1;
        while (bits) {
            int32_t cx = g.x0 + __builtin_ctzll(bits);
            uint32_t c = c0 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            bool cell_in = row_in && cx >= cr.x0 && cx <= cr.x1;
            for (int32_t s = lv->heads[c]; s >= 0; s = statics[s].next) {
                if (found < WORLD_NEAR_CACHE) nc->statics[found] = s;
                found++;
                const world_static *st = &statics[s];
                if (!cell_in || full || !aabb_meets(st->box, region) ||
                    !slots_block(w, self, st->slot))
                    continue;
                if (n == TURN_NEAR)
                    full = true;
                else
                    out[n++] = (uint32_t)s;
            }
        }
    }
    if (found <= WORLD_NEAR_CACHE) {
        nc->count = found;
        nc->area = near_cache_area(w, g);
    }
    return full ? -1 : n;
}

/* turn_walk's answer for the mover of dense index mi moving by r, through the statics its last
 * walk remembered (world_near_cache, S1a's entries: a fact about cells, shared with
 * world_step_alone) when region lies inside the cells they cover; otherwise turn_refill. The
 * statics of the remembered cells are kept in walk order (rows, then cells, then list order), so
 * those whose home cell lies in region's own cells, meeting region, come out in the order the
 * walk of region finds them. Only when every static sits in level 0 (the remembered cells are
 * level 0's), every static is a box (world_step_alone reads the same entries as boxes) and
 * region lies inside the inner bounds (no clamping of cell coordinates). */
WORLD_HOT int turn_gather(world *w, uint32_t mi, uint32_t self, aabb region, vec2 r,
                          uint32_t *out) {
    if (!w->statics_in_finest || w->nonbox_statics || !aabb_contains(w->inner_bounds, region))
        return turn_walk(w, self, region, out);
    if (w->active_level_count == 0) return 0;
    const world_near_cache *nc = &w->near_cache[mi];
    if (!near_cache_holds(nc, region)) return turn_refill(w, mi, self, region, r, out);
    const world_static *statics = w->statics;
    const world_level *lv = &w->levels[0];
    const vec2 o = w->cfg.bounds.min;
    const cell_range cr = level_range_inside(w, lv, region);
    const bool filtered = world_pair_rules(w);
    int n = 0;
    /* Each remembered static is kept or not without a branch: whether one meets region, and
     * where its home cell lies, are coin tosses from one entry to the next (a branch per test
     * was ~3 simulated mispredicts per turning mover-tick, a tenth of S1r's time). Every entry
     * is written at out[n] and counted only when kept, so the kept ones come out in order. */
    for (uint32_t k = 0; k < nc->count; k++) {
        uint32_t s = (uint32_t)nc->statics[k];
        const world_static *st = &statics[s];
        /* In region's own cells: what its walk visits. Cells grow with the coordinate, and a
         * static meeting region has its min corner at most region's max: its home cell (that of
         * its min corner, level_cell's) is never past region's last cells, so it is in them when
         * it is not before region's first cell along either axis. */
        int keep = aabb_meets_all(st->box, region) &
                   (level_cell_clamped(st->box.min.x, o.x, lv->inv_cell, lv->nx) >= cr.x0) &
                   (level_cell_clamped(st->box.min.y, o.y, lv->inv_cell, lv->ny) >= cr.y0);
        if (filtered) keep = keep && slots_block(w, self, st->slot);
        out[n] = s; /* n < WORLD_NEAR_CACHE < TURN_NEAR */
        n += keep;
    }
    return n;
}

/* world_turn_slide, with cand_count a constant in each of its two copies (none: S1r's movers,
 * which ignore each other; some). */
WORLD_HOT vec2 turn_impl(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                         uint32_t cand_count) {
    world_mover *m = &w->movers[mi];
    world_turn *tr = &w->turns[m->slot];
    COLLIDE_ASSERT(ref_kind(m->shape) == WORLD_REF_TURNED && tr->in_use);
    float da = tr->spin * w->dt, a0 = tr->angle;
    /* the part of the tick it moves and turns before it slides: all of it until a contact; none
     * when it does not turn (its turning intent 0 after a tick that turned), so that the whole
     * translation slides, as any other body's does */
    float ft = da != 0.0f ? 1.0f : 0.0f;
    geom_shape ltmp;
    const geom_shape *local = turn_local(w, tr, &ltmp);
    /* One walk for the advancement and the slide. Turned by up to |da|, no point of the shape
     * moves more than |da| radius along an axis, so its AABB at any angle of the tick lies within
     * the start's grown by that much: the start's AABB swept by r and so grown holds the shape
     * over the whole tick (a box tighter than the disc for a tick's small turn: 2 pi rad/s at
     * 60 Hz is 0.1 rad). Statics beyond it by more than the margin (above the advancement's
     * target and tolerance) cannot come near; the slide after the contact gathers within its
     * box there grown by at most the L1 length of r. The walk covers both, with a margin to
     * spare for rounding. */
    aabb swept = aabb_inflate(aabb_sweep(box_at(pos, m->lo, m->hi), r),
                              fabsf(da) * tr->radius + WORLD_QUERY_MARGIN);
    uint32_t gathered[TURN_NEAR];
    int gathered_count = -1;
    if (WORLD_FAST_PATHS)
        gathered_count = turn_gather(
            w, mi, m->slot, aabb_inflate(swept, fabsf(r.x) + fabsf(r.y) + WORLD_QUERY_MARGIN), r,
            gathered);
    if (da != 0.0f) {
        aabb reach = aabb_inflate(aabb_sweep(disc_box(pos, tr->radius), r), WORLD_QUERY_MARGIN);
        /* nothing gathered, no candidates, far from the bounds: nothing to advance against
         * (the contact time stays 1) */
        if (gathered_count != 0 || cand_count || !aabb_contains(w->inner_bounds, reach)) {
            geom_motion ma = {pos, a0, r, da};
            turn_ctx c = {m->slot,
                          v2_mul_add(pos, 0.5f, r),
                          tr->radius + 0.5f * v2_len(r) + WORLD_QUERY_MARGIN,
                          swept,
                          local,
                          &ma,
                          1.0f,
                          local->kind == GEOM_SHAPE_BOX,
                          {local->u.half_extents, tr->radius, tr->q, ma}};
            if (gathered_count >= 0) {
                /* what world_static_query would visit (the earliest contact does not depend on the
                 * order) */
                for (int k = 0; k < gathered_count; k++) {
                    const world_static *st = &w->statics[gathered[k]];
                    if (aabb_meets_all(st->box, reach)) turn_static(w, &c, gathered[k], st->box);
                }
            } else {
                world_static_query(w, reach, turn_static_visit, &c);
            }
            if (!aabb_contains(w->inner_bounds, reach)) turn_bounds(w, reach, &c);
            for (uint32_t k = 0; k < cand_count; k++) {
                const body_view *v = &cands[k].view;
                if (!aabb_meets(aabb_sweep(box_at(v->pos, v->lo, v->hi), cands[k].d), reach))
                    continue;
                /* a candidate that has not moved yet turns too (its shape as it stands now, turned
                 * further by its own turn of the tick): head-on turning bodies meet symmetrically
                 */
                const world_mover *o = &w->movers[cands[k].index];
                float dab = cands[k].index > mi && mover_turning(w, o)
                                ? w->turns[o->slot].spin * w->dt
                                : 0.0f;
                geom_shape tmp;
                turn_offer(&c, ref_shape(w, v->ref, v->hi, &tmp), v->pos, cands[k].d, dab);
            }
            ft = c.t;
        }
    }
    /* turned up to the contact (all of the turn when there is none), then stopped for the tick */
    float turned = ft * da;
    float a1 = world_wrap_angle(a0 + turned), vel = turned * w->cfg.tick_rate_hz;
    if (a1 != a0 || vel != tr->ang_vel) {
        m->changed_tick = w->tick;
        w->moved_bits[m->slot >> 6] |= 1ull << (m->slot & 63);
    }
    /* the shape as it now stands, built once for its AABB and the slide */
    geom_shape turned_shape;
    bool built = false;
    if (a1 != a0) {
        tr->angle = a1;
        w->turn_still[m->slot].epoch = 0; /* its box changes: the remembered tick is void */
        tr->q = geom_turn_start(a1);      /* the next tick's advancement starts from it as it is */
        aabb box;
        if (WORLD_FAST_PATHS && local->kind == GEOM_SHAPE_BOX) {
            /* the same AABB without the turned shape, which only a slide needs */
            box = geom_box_turned_aabb(local->u.half_extents, tr->q);
        } else {
            geom_shape_orient(local, tr->q, &turned_shape);
            built = true;
            box = geom_shape_aabb(&turned_shape, v2(0.0f, 0.0f));
        }
        m->lo = box.min;
        m->hi = box.max;
    }
    tr->ang_vel = vel;
    /* the rest of the translation, with the candidates where they stand at that time */
    vec2 p1 = v2_mul_add(pos, ft, r);
    vec2 rest = v2_scale(r, 1.0f - ft);
    if (rest.x == 0.0f && rest.y == 0.0f) {
        /* nothing left to slide: where world_slide would return at once, its statics unread */
        return p1;
    }
    mover_candidate moved[WORLD_MAX_MOVER_CANDIDATES];
    for (uint32_t k = 0; k < cand_count; k++) {
        moved[k] = cands[k];
        moved[k].view.pos = v2_mul_add(cands[k].view.pos, ft, cands[k].d);
        moved[k].d = v2_scale(cands[k].d, 1.0f - ft);
    }
    aabb slid; /* the slides want somewhere to put their path box; the step keeps its own */
    if (gathered_count < 0) return world_slide(w, mi, p1, rest, moved, cand_count, &slid);
    /* the slide's own region, filtered from the walk above in the walk's order: what its gather
     * would find */
    aabb region = world_slide_region(box_at(p1, m->lo, m->hi), rest);
    /* a turned box alone among box tiles (the slide gathers them: r within a fine cell):
     * world_slide_turned_box, without the turned polygon. Its cos and sin nonzero (a box turned
     * by (1, 0) stays a box, which the general slide sweeps as one; sinf is 0 only at 0, and no
     * float angle has a cosine of 0). */
    if (cand_count == 0 && local->kind == GEOM_SHAPE_BOX && tr->q.x != 0.0f && tr->q.y != 0.0f &&
        fabsf(rest.x) + fabsf(rest.y) <= w->levels[0].cell) {
        slide_tile tiles[WORLD_NEAR_STATICS];
        int tile_count = 0;
        for (int k = 0; k < gathered_count; k++) {
            const world_static *st = &w->statics[gathered[k]];
            if (!aabb_overlaps(region, st->box)) continue;
            if (tile_count == WORLD_NEAR_STATICS || ref_kind(st->shape) != GEOM_SHAPE_BOX) {
                tile_count = -1;
                break;
            }
            tiles[tile_count++] = (slide_tile){st->position, static_hi(st)};
        }
        if (tile_count >= 0)
            return world_slide_turned_box(w, mi, p1, rest, tiles, tile_count, local->u.half_extents,
                                          tr->q);
    }
    near_static near[WORLD_NEAR_STATICS];
    int near_count = 0;
    for (int k = 0; k < gathered_count; k++) {
        const world_static *st = &w->statics[gathered[k]];
        if (!aabb_overlaps(region, st->box)) continue;
        if (near_count == WORLD_NEAR_STATICS) {
            near_count = -1;
            break;
        }
        near[near_count++] = (near_static){
            .box = st->box, .index = gathered[k], .is_box = ref_kind(st->shape) == GEOM_SHAPE_BOX};
    }
    if (!built) geom_shape_orient(local, tr->q, &turned_shape);
    return world_slide_gathered(w, mi, p1, rest, moved, cand_count, &slid, near, near_count,
                                &turned_shape);
}

/* The turning mover of no candidates (S1r's: movers that ignore each other), out of line once
 * for world_turn_step_alone and world_turn_slide. */
static __attribute__((noinline)) vec2 turn_alone(world *w, uint32_t mi, vec2 pos, vec2 r) {
    return turn_impl(w, mi, pos, r, NULL, 0);
}

vec2 world_turn_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                      uint32_t cand_count) {
    if (cand_count == 0) return turn_alone(w, mi, pos, r);
    return turn_impl(w, mi, pos, r, cands, cand_count);
}

void world_turn_step_alone(world *w) {
    uint32_t n = w->mover_count;
    float dt = w->dt;
    world_near_cache_begin(w, n);
    /* with filters the general slide decides what blocks what: no remembered ticks then */
    const bool remember = !world_pair_rules(w);
    const uint32_t epoch = w->statics_epoch;
    uint32_t turning = 0; /* movers still turning or just stopped after their tick */
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        /* the turn records go by slot, which the movers' spatial order does not follow */
        if (i + 8 < n) {
            uint32_t ahead = w->movers[i + 8].slot;
            __builtin_prefetch(&w->turns[ahead]);
            __builtin_prefetch(&w->turn_still[ahead]);
        }
        vec2 start = m->position, r = v2_scale(m->intent, dt);
        if (!mover_turning(w, m)) {
            /* world_step_alone's fallback: world_slide's results */
            finish_mover(w, i, start, world_slide_box(w, i, start, r, NULL, 0));
            continue;
        }
        world_turn *tr = &w->turns[m->slot];
        world_turn_still *still = &w->turn_still[m->slot];
        if (remember && still->epoch == epoch && tr->ang_vel == 0.0f && vec_eq(start, still->pos)) {
            /* the remembered tick again: it stays, unturned (its angle, cos/sin, box and turning
             * speed as they are), and its slide counts the same hits */
            w->swept_hits += still->hits;
            finish_mover(w, i, start, start);
            turning++; /* its turning intent is not 0 */
            continue;
        }
        const float a0 = tr->angle;
        const uint64_t hits = w->swept_hits;
        vec2 end = turn_alone(w, i, start, r);
        if (remember && vec_eq(end, start) && tr->angle == a0 && tr->ang_vel == 0.0f) {
            still->pos = start;
            still->epoch = epoch;
            still->hits = (uint32_t)(w->swept_hits - hits);
        }
        finish_mover(w, i, start, end);
        turning += tr->spin != 0.0f || tr->ang_vel != 0.0f;
    }
    /* world_turn_recount's count (a mover that did not turn now has spin and speed 0) */
    w->turning_hint = turning;
}

void world_turn_recount(world *w) {
    if (!w->turning_hint) return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        const world_mover *m = &w->movers[i];
        if (ref_kind(m->shape) != WORLD_REF_TURNED) continue;
        const world_turn *t = &w->turns[m->slot];
        n += t->spin != 0.0f || t->ang_vel != 0.0f;
    }
    w->turning_hint = n;
}

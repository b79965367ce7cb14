/* world_separate: the discrete pass (COLLISION.md step 3). Spawned movers are pushed out of
 * statics first; then the mover pairs of the mover pass (and of bodies that left their path box)
 * are pushed apart, Gauss-Seidel in pair order, for up to separation_passes passes. Every push is
 * a short collide-and-slide against statics, so a push never goes through one (I2); what is still
 * overlapping after the last pass is pinned and reported as jammed (I3). */
#include "world_character.h"
#include "world_movers.h"
#include "world_separate.h"
#include "world_slide.h"
#include "world_statics.h"

/* Moves a mover by push with collide-and-slide against statics and bounds (so a body pushed into
 * a wall or a corner slides along it instead of stopping dead). Returns the fraction of the push
 * achieved along its own direction. Never passes through a static: how the discrete pass keeps I2.
 * Through world_slide_box: a push is short, so a box among box statics takes the gathered fast path
 * (the same hits as slide(); anything else falls back to slide()). */
static float safe_move(world *w, uint32_t mi, vec2 push) {
    world_mover *m = &w->movers[mi];
    float len_sq = v2_dot(push, push);
    if (!(len_sq > 0.0f)) return 1.0f;
    vec2 end = world_slide_box(w, mi, m->position, push, NULL, 0);
    float done = v2_dot(v2_sub(end, m->position), push) / len_sq;
    m->position = end;
    return done < 0.0f ? 0.0f : done > 1.0f ? 1.0f : done;
}

typedef struct static_push_ctx {
    world *w;    /* the world */
    uint32_t mi; /* mover index */
    bool moved;  /* something was pushed */
} static_push_ctx;

static bool static_push_visit(const world *cw, uint32_t si, void *vctx) {
    static_push_ctx *c = vctx;
    (void)cw;
    world *w = c->w;
    world_mover *m = &w->movers[c->mi];
    body_view a = mover_view(m, m->position);
    if (!slots_block(w, m->slot, w->statics[si].slot)) return true;
    body_view b = static_view(&w->statics[si]);
    geom_contact ct;
    if (pair_overlap(w, &a, &b, &ct) && ct.depth > 0.0f) {
        /* out along the MTV, all of it, plus the skin */
        safe_move(w, c->mi, v2_scale(ct.normal, -(ct.depth + GEOM_SKIN)));
        w->separations++;
        c->moved = true;
    }
    return true;
}

typedef struct pair_ctx {
    world *w;    /* the world */
    uint32_t ai; /* mover index of A */
    aabb box;    /* A's box, grown by the margin */
    bool all;    /* any partner (A was pushed), not only higher indices */
} pair_ctx;

/* Collects mover pairs whose boxes (grown by a margin) overlap, each pair once. */
static bool pair_collect(const world *cw, uint32_t bi, void *vctx) {
    pair_ctx *c = vctx;
    world *w = c->w;
    (void)cw;
    if (bi == c->ai) return true;
    /* first pass: every pair from its lower index; later: pairs of pushed bodies, once */
    if (c->all ? ((w->scratch.pushed[bi] & WORLD_PUSHED_NOW) && bi < c->ai) : bi < c->ai)
        return true;
    const world_mover *b = &w->movers[bi];
    if (!aabb_overlaps(box_at(b->position, b->lo, b->hi), c->box)) return true;
    if (w->scratch.pair_count == w->scratch.pair_cap)
        return false; /* the rest waits for the next tick */
    w->scratch.pairs[w->scratch.pair_count][0] = c->ai;
    w->scratch.pairs[w->scratch.pair_count][1] = bi;
    w->scratch.pair_count++;
    return true;
}

/* Pushes one overlapping pair apart along the MTV, half each; what a static stops one body from
 * taking goes to the other. Returns whether they overlapped. */
/* Pushes a apart from b along n (from a towards b) by total, half each; what a static stops one
 * body from taking goes to the other. Returns the fraction of total achieved. */
/* Pushes first by all of total away from other (n from first towards other); what a static stops
 * it from taking goes to other. Returns the fraction of total achieved. */
static float push_first(world *w, uint32_t first, uint32_t other, vec2 n, float total) {
    float f1 = safe_move(w, first, v2_scale(n, -total));
    float rest = (1.0f - f1) * total;
    /* (the rounding of a push taken whole is not a rest for the other to take) */
    float f2 = rest > WORLD_SKIN_RESTORE ? safe_move(w, other, v2_scale(n, rest)) : 0.0f;
    return (f1 * total + f2 * rest) / total;
}

static float push_apart(world *w, uint32_t ai, uint32_t bi, vec2 n, float total) {
    /* a character standing on the other is pushed out of it whole, as its platform tilts under
     * it: a platform is not moved by its riders (PROTOCOL.md "Carried") */
    if (w->character_count) {
        uint32_t sa = w->movers[ai].slot, sb = w->movers[bi].slot;
        if (world_character_rides(w, sa, sb)) return push_first(w, ai, bi, n, total);
        if (world_character_rides(w, sb, sa)) return push_first(w, bi, ai, v2_neg(n), total);
    }
    float half = 0.5f * total;
    float fa = safe_move(w, ai, v2_scale(n, -half));
    float want_b = half + (1.0f - fa) * half;
    float fb = safe_move(w, bi, v2_scale(n, want_b));
    float rest = (1.0f - fb) * want_b;
    float fa2 = rest > 0.0f ? safe_move(w, ai, v2_scale(n, -rest)) : 0.0f;
    return (fa * half + fb * want_b + fa2 * rest) / total;
}

static bool pair_push(world *w, uint32_t ai, uint32_t bi) {
    world_mover *a = &w->movers[ai], *b = &w->movers[bi];
    if (!slots_block(w, a->slot, b->slot)) return false;
    body_view va = mover_view(a, a->position), vb = mover_view(b, b->position);
    geom_contact ct;
    if (!pair_overlap(w, &va, &vb, &ct) || !(ct.depth > 0.0f)) return false;
    w->separations++;
    if (push_apart(w, ai, bi, ct.normal, ct.depth + GEOM_SKIN) > 0.5f) return true;
    /* Pinned along the MTV (two bodies in a one-cell corridor, stacked across it): part their
     * boxes along the other axis instead, which the corridor may leave free. */
    aabb ba = box_at(a->position, a->lo, a->hi), bb = box_at(b->position, b->lo, b->hi);
    bool along_x = fabsf(ct.normal.y) > fabsf(ct.normal.x);
    vec2 n;
    float depth;
    if (along_x) {
        float ca = ba.min.x + ba.max.x, cb = bb.min.x + bb.max.x;
        n = v2(cb >= ca ? 1.0f : -1.0f, 0.0f);
        depth = n.x > 0.0f ? ba.max.x - bb.min.x : bb.max.x - ba.min.x;
    } else {
        float ca = ba.min.y + ba.max.y, cb = bb.min.y + bb.max.y;
        n = v2(0.0f, cb >= ca ? 1.0f : -1.0f);
        depth = n.y > 0.0f ? ba.max.y - bb.min.y : bb.max.y - ba.min.y;
    }
    if (depth > 0.0f) push_apart(w, ai, bi, n, depth + GEOM_SKIN);
    return true;
}

/* A pushed body that left the box the grid holds for it goes to the unindexed list, which every
 * query checks, so queries need no slack. escaped marks bodies already listed. */
static void grid_note_moved(const world *w, world_grid *g, uint32_t i) {
    const world_mover *m = &w->movers[i];
    if (w->scratch.pushed[i] & WORLD_PUSHED_ESCAPED) return;
    aabb now = box_at(m->position, m->lo, m->hi), then = g->boxes[i];
    if (now.min.x >= then.min.x && now.min.y >= then.min.y && now.max.x <= then.max.x &&
        now.max.y <= then.max.y)
        return;
    w->scratch.pushed[i] |= WORLD_PUSHED_ESCAPED;
    g->unindexed[g->unindexed_count++] = i;
}

/* Many bodies off the grid make every query walk the unindexed list: rebuild it instead, over
 * where the bodies are now (pairs are kept as indices, so they stay valid). */
static void grid_refresh(world *w, world_grid *g) {
    if (g->unindexed_count <= WORLD_MAX_UNINDEXED) return;
    world_grid_build_current(w, WORLD_PUSH_ALLOWANCE);
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->scratch.pushed[i] &= (uint8_t)~WORLD_PUSHED_ESCAPED;
}

/* The pairs of the bodies pushed in a pass (moved[], flagged WORLD_PUSHED_NOW), each pair of two
 * pushed bodies from the lower index: the next pass's list. */
static void collect_moved_pairs(world *w, world_grid *g, const uint32_t *moved,
                                uint32_t moved_count) {
    w->scratch.pair_count = 0;
    for (uint32_t k = 0; k < moved_count; k++) {
        uint32_t i = moved[k];
        const world_mover *m = &w->movers[i];
        pair_ctx c = {w, i, aabb_inflate(box_at(m->position, m->lo, m->hi), WORLD_PAIR_MARGIN),
                      true};
        world_grid_query(w, g, c.box, pair_collect, &c);
    }
}

/* The last pass's pairs still overlapping by more than the skin: pinned (between statics, directly
 * or through other bodies), left as they are and reported (I3), each pair once. */
static void report_jams(world *w) {
    for (uint32_t k = 0; k < w->scratch.pair_count; k++) {
        const uint32_t *pk = w->scratch.pairs[k];
        world_mover *a = &w->movers[pk[0]], *b = &w->movers[pk[1]];
        body_view va = mover_view(a, a->position), vb = mover_view(b, b->position);
        geom_contact ct;
        if (!slots_block(w, a->slot, b->slot) ||
            !(pair_overlap(w, &va, &vb, &ct) && ct.depth > GEOM_SKIN))
            continue;
        /* once per pair: the grid may give a pair twice (a body in its cells and on the
         * unindexed list), always within the one query of its first body, whose pairs
         * sit together (each pushed body is queried once, and a pair of two pushed
         * bodies only from the lower index): a look back over that query's pairs, not
         * the whole list, so a pinned crowd costs its neighbourhoods, not its square */
        bool again = false;
        for (uint32_t j = k; j-- > 0 && w->scratch.pairs[j][0] == pk[0] && !again;)
            again = w->scratch.pairs[j][1] == pk[1];
        if (again) continue;
        w->jammed++;
        if (w->jam_count < WORLD_MAX_JAM_REPORT) {
            world_body_id ia = slot_id(w, a->slot), ib = slot_id(w, b->slot);
            w->jams[w->jam_count][0] = ia < ib ? ia : ib;
            w->jams[w->jam_count][1] = ia < ib ? ib : ia;
        }
        w->jam_count++;
    }
}

/* Spawned movers may sit in a static: take them out first (all of the MTV). */
static void push_spawned_out(world *w) {
    w->static_checks_pending = false;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (!(m->flags & WORLD_MOVER_CHECK_STATICS)) continue;
        m->flags &= ~WORLD_MOVER_CHECK_STATICS;
        for (int pass = 0; pass < 4; pass++) {
            static_push_ctx c = {w, i, false};
            world_static_query(w, box_at(m->position, m->lo, m->hi), static_push_visit, &c);
            if (!c.moved) break;
        }
    }
}

void world_separate(world *w) {
    push_spawned_out(w);
    if (!w->movers_collide || w->cfg.separation_passes == 0) return;
    world_grid *g = &w->cache->grid;
    if (!g->valid) return; /* fewer than two movers: no pairs */
    /* the pairs come from this step's mover grid (world_grid_pairs) */
    scratch_held(w, WORLD_SCRATCH_PAIRS, WORLD_OWNER_PAIRS);
    /* The pairs come from the mover pass (paths that came near), on its grid of path boxes. A
     * body that ended outside its path box (the redone slide, a push out of a static) goes on
     * the unindexed list and looks for its pairs now. Then each pass pushes its pairs apart
     * (Gauss-Seidel, in pair order: deterministic) and the next pass looks again around the
     * bodies it pushed. */
    memset(w->scratch.pushed, 0, w->mover_count);
    uint32_t escaped = 0;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        grid_note_moved(w, g, i);
        if (w->scratch.pushed[i] & WORLD_PUSHED_ESCAPED)
            w->scratch.pushed[i] |= WORLD_PUSHED_NOW, escaped++;
    }
    if (g->unindexed_count > WORLD_MAX_UNINDEXED) {
        world_grid_build_current(w, WORLD_PUSH_ALLOWANCE);
        for (uint32_t i = 0; i < w->mover_count; i++)
            w->scratch.pushed[i] &= (uint8_t)~WORLD_PUSHED_ESCAPED;
    }
    for (uint32_t i = 0; escaped && i < w->mover_count; i++) {
        if (!(w->scratch.pushed[i] & WORLD_PUSHED_NOW)) continue;
        const world_mover *m = &w->movers[i];
        pair_ctx c = {w, i, aabb_inflate(box_at(m->position, m->lo, m->hi), WORLD_PAIR_MARGIN),
                      true};
        world_grid_query(w, g, c.box, pair_collect, &c);
    }
    for (uint32_t i = 0; escaped && i < w->mover_count; i++)
        w->scratch.pushed[i] &= (uint8_t)~WORLD_PUSHED_NOW;
    /* bodies pushed in the current pass, in push order (the adjacency lists are free by now) */
    scratch_take(w, WORLD_SCRATCH_ADJ, WORLD_OWNER_PAIRS, WORLD_OWNER_SEPARATE);
    uint32_t *moved = w->scratch.adj, moved_count = 0;
    for (int pass = 0; pass < w->cfg.separation_passes && w->scratch.pair_count > 0; pass++) {
        bool last = pass + 1 == w->cfg.separation_passes;
        for (uint32_t k = 0; k < moved_count; k++)
            w->scratch.pushed[moved[k]] &= (uint8_t)~WORLD_PUSHED_NOW;
        moved_count = 0;
        for (uint32_t k = 0; k < w->scratch.pair_count; k++) {
            uint32_t ab[2] = {w->scratch.pairs[k][0], w->scratch.pairs[k][1]};
            if (!pair_push(w, ab[0], ab[1])) continue;
            for (int q = 0; q < 2; q++) {
                /* noted at every push, wherever it ends: a body pushed twice in a pass and noted
                 * at its first push only could lie outside both its grid box and the unindexed
                 * list, and the next pass's pairs, and the last pass's jam report, missed every
                 * pair it was still overlapping (the turning soak's hunts: two circles left 0.85
                 * apart, unreported) */
                grid_note_moved(w, g, ab[q]);
                if (w->scratch.pushed[ab[q]] & WORLD_PUSHED_NOW) continue;
                w->scratch.pushed[ab[q]] |= WORLD_PUSHED_NOW;
                moved[moved_count++] = ab[q];
            }
        }
        if (moved_count == 0) break;
        grid_refresh(w, g);
        if (last) {
            /* Out of passes with pushes still happening: what overlaps now is pinned (between
             * statics, directly or through other bodies). Leave it, and report it (I3). Not only
             * the pairs this pass was given: a push may have moved a body into one it was not
             * paired with, so the pairs around every body this pass pushed, as the next pass
             * would take them (a pair of bodies this pass left alone overlaps now only if it did
             * before, and then it was given to the pass and pushed). */
            collect_moved_pairs(w, g, moved, moved_count);
            report_jams(w);
            break;
        }
        collect_moved_pairs(w, g, moved, moved_count);
    }
}

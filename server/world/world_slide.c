/* world_slide: collide-and-slide, the general slide and its fast paths side by side.
 *
 *   world_slide      the general slide: any shapes, candidates with relative motion; a sweep
 *                    walks its path chunk by chunk over the static grid (sweep_statics), a short
 *                    move gathers its statics once for all its iterations (gather_statics)
 *   slide_box_impl   a box among boxes moving less than a cell: statics of its swept region
 *                    gathered from level 0, box sweeps only (the common case)
 *   world_step_alone the S1a tick: slide_box_impl's path inlined in the mover loop, with the
 *                    occupancy bits read a row-word at a time and each mover's near statics
 *                    remembered between ticks (world_near_cache)
 * Each fast path must give bit-identical results to the general slide: WORLD_FAST_PATHS=0
 * compiles them out, and test_world_fastpaths compares the state hashes over random scenes. */
#include "world_slide.h"
#include "world_statics.h"

/* Statics overlapping region that block the mover of slot self, into out (at most
 * WORLD_NEAR_STATICS); -1 when there are more. */
static int gather_statics(const world *w, uint32_t self, aabb region, near_static *out) {
    int n = 0;
    for (int al = 0; al < w->active_level_count; al++) {
        const world_level *lv = &w->levels[w->active_levels[al]];
        cell_range cr = level_range(w, lv, region);
        WORLD_FOR_STATICS_IN_CELLS(w, lv, cr, s) {
            const world_static *st = &w->statics[s];
            if (!aabb_overlaps(region, st->box) || !slots_block(w, self, st->slot)) continue;
            if (n == WORLD_NEAR_STATICS) return -1;
            out[n].box = st->box;
            out[n].index = (uint32_t)s;
            out[n].is_box = ref_kind(st->shape) == GEOM_SHAPE_BOX;
            n++;
        }
    }
    return n;
}

/* pair_sweep for the slide's body a, whose shape a turned body brings built (a_shape, turned
 * once per slide rather than once per pair; NULL for every other body). The same answer. */
static inline bool slide_pair(const world *w, const geom_shape *a_shape, const body_view *a,
                              vec2 da, const body_view *b, vec2 db, geom_toi *out) {
    if (!a_shape) return pair_sweep(w, a, da, b, db, out);
    geom_shape tb;
    return geom_sweep(a_shape, a->pos, da, ref_shape(w, b->ref, b->hi, &tb), b->pos, db, out);
}

/* Sweeps body a (at a->pos, AABB box, slot self) by r against every static that blocks it,
 * walking each level's cells along the path chunk by chunk; keeps the earliest hit in best. */
WORLD_HOT void sweep_statics(const world *w, uint32_t self, const body_view *a,
                             const geom_shape *a_shape, aabb box, vec2 r, sweep_hit *best) {
    bool a_box = ref_kind(a->ref) == GEOM_SHAPE_BOX;
    vec2 inv = recip(r);
    float len = wmax(fabsf(r.x), fabsf(r.y));
    /* The filter is the whole sweep's box, not the chunk's: a static is tested from its one home
     * cell, which may lie in an earlier chunk than the part of the path it reaches. */
    aabb swept = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
    for (int al = 0; al < w->active_level_count; al++) {
        const world_level *lv = &w->levels[w->active_levels[al]];
        float chunks_f = len * lv->inv_cell;
        int32_t chunks = chunks_f <= 1.0f ? 1 : chunks_f > 1e6f ? 1000000 : iceil(chunks_f);
        float inv_chunks = 1.0f / (float)chunks;
        int32_t px0 = 1, px1 = 0, py0 = 1, py1 = 0; /* previous chunk's cells (none yet) */
        for (int32_t k = 0; k < chunks; k++) {
            float ts = (float)k * inv_chunks;
            if (ts >= best->t) break;
            float te = k + 1 == chunks ? 1.0f : (float)(k + 1) * inv_chunks;
            aabb cb = aabb_union(aabb_translate(box, v2_scale(r, ts)),
                                 aabb_translate(box, v2_scale(r, te)));
            cb = aabb_inflate(cb, WORLD_QUERY_MARGIN);
            cell_range cr = level_range(w, lv, cb);
            WORLD_FOR_STATICS_IN_CELLS(w, lv, cr, s) {
                /* cells the previous chunk walked: their statics were tested already */
                if (WORLD_WALK_CELL_Y >= py0 && WORLD_WALK_CELL_Y <= py1 &&
                    WORLD_WALK_CELL_X >= px0 && WORLD_WALK_CELL_X <= px1)
                    break;
                const world_static *st = &w->statics[s];
                if (!aabb_overlaps(swept, st->box) || !slots_block(w, self, st->slot)) continue;
                geom_toi toi;
                bool hit;
                if (a_box && ref_kind(st->shape) == GEOM_SHAPE_BOX) {
                    hit = box_sweep(box, r, inv, st->box, &toi);
                } else {
                    body_view b = static_view(st);
                    hit = slide_pair(w, a_shape, a, r, &b, v2(0.0f, 0.0f), &toi);
                }
                if (hit) hit_offer(best, &toi, v2(0.0f, 0.0f), false);
            }
            px0 = cr.x0, px1 = cr.x1, py0 = cr.y0, py1 = cr.y1;
        }
    }
}

void world_sweep_statics(const world *w, uint32_t self, const body_view *a, aabb box, vec2 r,
                         sweep_hit *best) {
    sweep_statics(w, self, a, NULL, box, r, best);
}

/* Collide-and-slide of one mover from pos by r (COLLISION.md step 2). Candidates move along their
 * own displacement over the same tick (relative motion). Returns the end position and grows
 * *path by every point the body passes. given: the statics world_slide_region's region holds
 * (gathered by the caller, given_count of them, -1 for more than WORLD_NEAR_STATICS), or NULL
 * to gather them here. turned: a turned body's shape as it stands (geom_shape_orient of its
 * local shape by its cos/sin), or NULL to build it here. prepared (a constant in each caller):
 * a turned shape sweeps box statics through geom_poly_sweep, its per-edge terms computed once
 * (the turning tick's slide); otherwise through geom_sweep_polygon_box (the same answers; the
 * general slide keeps its code as it was, S1a-fast's path). */
WORLD_HOT vec2 slide_impl(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                          uint32_t cand_count, aabb *path, const near_static *given,
                          int given_count, const geom_shape *turned, bool prepared) {
    const world_mover *m = &w->movers[mi];
    body_view a = mover_view(m, pos);
    float tau = 0.0f; /* fraction of the tick used so far */
    aabb pbox = box_at(pos, m->lo, m->hi);
    /* A short move (within one fine cell) gathers its statics once: every iteration stays within
     * the start box grown by the L1 length of r, since sliding never lengthens the motion. */
    near_static near_buf[WORLD_NEAR_STATICS];
    const near_static *near = near_buf;
    int near_count = -1;
    float reach = fabsf(r.x) + fabsf(r.y);
    if (WORLD_FAST_PATHS && reach <= w->levels[0].cell) {
        if (given) {
            near = given;
            near_count = given_count;
        } else {
            near_count = gather_statics(w, m->slot, world_slide_region(pbox, r), near_buf);
        }
    }
    bool a_box = ref_kind(m->shape) == GEOM_SHAPE_BOX;
    geom_shape a_tmp;
    const geom_shape *a_shape = turned;
    if (!a_shape && ref_kind(m->shape) == WORLD_REF_TURNED)
        a_shape = ref_shape(w, m->shape, m->hi, &a_tmp);
    bool a_poly = WORLD_FAST_PATHS && a_shape && a_shape->kind == GEOM_SHAPE_POLYGON;
    /* far from the bounds (the whole slide stays a skin inside them): no need to sweep them */
    bool check_bounds =
        !WORLD_FAST_PATHS || !aabb_contains(w->inner_bounds, aabb_inflate(pbox, reach));
    /* a turned shape against box statics: its per-edge terms once for the slide */
    bool poly_sweeps = prepared && a_poly && near_count > 0;
    geom_poly_sweep ps;
    if (poly_sweeps) geom_poly_sweep_prepare(&ps, &a_shape->u.polygon);
    vec2 first = r;
    for (int it = 0; it < w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        a.pos = pos;
        aabb box = box_at(pos, m->lo, m->hi);
        sweep_hit best = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
        if (check_bounds) sweep_bounds(w, box, r, &best);
        vec2 inv = near_count > 0 ? recip(r) : v2(0.0f, 0.0f);
        for (uint32_t c = 0; c < cand_count; c++) {
            body_view b = cands[c].view;
            b.pos = v2_mul_add(b.pos, tau, cands[c].d);
            vec2 db = v2_scale(cands[c].d, 1.0f - tau);
            geom_toi toi;
            if (slide_pair(w, a_shape, &a, r, &b, db, &toi)) hit_offer(&best, &toi, db, true);
        }
        if (near_count >= 0) {
            /* a turned shape against box statics: its closing speeds once for this motion */
            if (poly_sweeps) geom_poly_sweep_motion(&ps, r);
            for (int k = 0; k < near_count; k++) {
                geom_toi toi;
                bool hit;
                if (a_box && near[k].is_box) {
                    hit = box_sweep(box, r, inv, near[k].box, &toi);
                } else if (a_poly && near[k].is_box) {
                    /* a turned box against a box static: pair_sweep's answer without the
                     * dispatch, nor the work that is the same for every static */
                    const world_static *st = &w->statics[near[k].index];
                    if (prepared)
                        hit = geom_poly_sweep_box(&ps, pos, static_hi(st), st->position, &toi);
                    else
                        hit = geom_sweep_polygon_box(&a_shape->u.polygon, pos, r, static_hi(st),
                                                     st->position, &toi);
                } else {
                    body_view b = static_view(&w->statics[near[k].index]);
                    hit = slide_pair(w, a_shape, &a, r, &b, v2(0.0f, 0.0f), &toi);
                }
                if (hit) hit_offer(&best, &toi, v2(0.0f, 0.0f), false);
            }
        } else {
            sweep_statics(w, m->slot, &a, a_shape, box, r, &best);
        }
        if (best.t > 1.0f) {
            pos = v2_add(pos, r);
            pbox = aabb_union(pbox, box_at(pos, m->lo, m->hi));
            break;
        }
        w->swept_hits++;
        /* a static or the bounds leave other_d 0, and r - 0 is r: one response for every hit */
        float t = slide_respond(&pos, &r, best.t, best.normal, true, best.other_d, !best.mover,
                                true, first);
        pbox = aabb_union(pbox, box_at(pos, m->lo, m->hi));
        tau += t * (1.0f - tau);
    }
    *path = pbox;
    return pos;
}

vec2 world_slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                 uint32_t cand_count, aabb *path) {
    return slide_impl(w, mi, pos, r, cands, cand_count, path, NULL, 0, NULL, false);
}

vec2 world_slide_gathered(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                          uint32_t cand_count, aabb *path, const near_static *near, int near_count,
                          const geom_shape *turned) {
    return slide_impl(w, mi, pos, r, cands, cand_count, path, near, near_count, turned, true);
}

/* ---- A turned box among box statics (the turning tick's slide) -----------------------------
 *
 * geom_poly_sweep_box's decision (bp_sweep with the turned box as the polygon Y, each tile the
 * box X, offset r = pos - tile and relative motion d = -r_motion), specialised for a polygon
 * that is a box. Along the 4 world axes the gaps come from the turned box's bounds; along its
 * own 4 edge normals n_j the opposite edges pair up: n_2 and n_3 are -n_0 and -n_1 (the same
 * values: geom_rotate of opposite unit vectors), so dot(n_2, r) is -dot(n_0, r) and a tile's
 * support |n_2| . h is |n_0| . h; 2 dot products and 2 supports per tile instead of 4 and 4,
 * every gap still the same float (the sign of a zero product aside, which vanishes against the
 * edge's nonzero offset). The motion fixes for each axis whether it closes, so a tile the sweep
 * would reject for a miss (most of them: the mover slides along or away) is rejected by one
 * compare per axis against a threshold kept per motion; the others go through the sweep's
 * decision in its order, the same floats, the same answer. */
vec2 world_slide_turned_box(world *w, uint32_t mi, vec2 pos, vec2 r, const slide_tile *tiles,
                            int tile_count, vec2 h, vec2 q) {
    const world_mover *m = &w->movers[mi];
    float reach = fabsf(r.x) + fabsf(r.y);
    /* far from the bounds (the whole slide stays a skin inside them): no need to sweep them */
    bool check_bounds =
        !aabb_contains(w->inner_bounds, aabb_inflate(box_at(pos, m->lo, m->hi), reach));
    /* slide_impl's geom_poly_sweep_* on the turned polygon, specialised for a box (prepared
     * even without tiles, which the turning tick's slide hardly ever lacks) */
    geom_obox_sweep s;
    geom_obox_sweep_prepare(&s, h, q);
    vec2 first = r;
    for (int it = 0; it < w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        float best_t = WORLD_NO_HIT;
        vec2 best_n = v2(0.0f, 0.0f);
        if (check_bounds) {
            sweep_hit bounds = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
            sweep_bounds(w, box_at(pos, m->lo, m->hi), r, &bounds);
            best_t = bounds.t, best_n = bounds.normal;
        }
        if (tile_count > 0) {
            geom_obox_sweep_motion(&s, r);
            for (int k = 0; k < tile_count; k++) {
                geom_toi toi;
                if (geom_obox_sweep_box(&s, pos, tiles[k].hi, tiles[k].position, &toi) &&
                    toi.t < best_t) {
                    best_t = toi.t, best_n = toi.normal;
                    /* hit_offer keeps the first of equal times: nothing comes before one at
                     * the start */
                    if (best_t == 0.0f) break;
                }
            }
        }
        if (best_t > 1.0f) {
            pos = v2_add(pos, r);
            break;
        }
        w->swept_hits++;
        /* a static or the bounds: other_d 0, which with_mover = false reads as such (the same
         * floats as slide_impl's response, where it subtracts that 0) */
        slide_respond(&pos, &r, best_t, best_n, false, v2(0.0f, 0.0f), true, true, first);
    }
    return pos;
}

/* The slide of a box mover moving less than a cell, among statics that are all boxes in the
 * finest level and candidate movers that are all boxes: the common case (S1a, and most of S1b),
 * without the bookkeeping the general slide carries for path boxes and other shapes. A box among
 * boxes only ever slides along an axis (each response shrinks one component of the motion and
 * never flips it), so the statics it can touch all lie in its box swept by r. Candidates move
 * along their own displacement over the tick, as in slide(). Anything else goes to slide(). */
WORLD_HOT vec2 slide_box_impl(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                              uint32_t cand_count) {
    const world_mover *m = &w->movers[mi];
    const world_level *lv = &w->levels[0];
    aabb unused;
    /* filters: only the general slide asks which statics block this body */
    if (world_pair_rules(w) || !w->statics_in_finest || ref_kind(m->shape) != GEOM_SHAPE_BOX ||
        wmax(fabsf(r.x), fabsf(r.y)) > lv->cell)
        return world_slide(w, mi, pos, r, cands, cand_count, &unused);
    for (uint32_t c = 0; c < cand_count; c++)
        if (ref_kind(cands[c].view.ref) != GEOM_SHAPE_BOX)
            return world_slide(w, mi, pos, r, cands, cand_count, &unused);
    aabb box = box_at(pos, m->lo, m->hi);
    aabb region = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
    aabb near[WORLD_NEAR_STATICS];
    int count = 0;
    /* inside the bounds by a skin: no bounds sweep, and cell coordinates need no clamping */
    bool check_bounds = !aabb_contains(w->inner_bounds, region);
    if (w->active_level_count) {
        cell_range cr =
            check_bounds ? level_range(w, lv, region) : level_range_inside(w, lv, region);
        if (!w->events) {
            WORLD_FOR_STATICS_IN_CELLS(w, lv, cr, s) {
                const world_static *st = &w->statics[s];
                if (!aabb_overlaps(region, st->box)) continue;
                if (ref_kind(st->shape) != GEOM_SHAPE_BOX || count == WORLD_NEAR_STATICS)
                    return world_slide(w, mi, pos, r, cands, cand_count, &unused);
                near[count++] = st->box;
            }
        } else {
            /* the same walk, which also tells contact tracking which statics it found: it then
             * needs no static query of its own for this mover (world_events_noted) */
            uint32_t *index = world_events_note_at(w, mi);
            WORLD_FOR_STATICS_IN_CELLS(w, lv, cr, s) {
                const world_static *st = &w->statics[s];
                if (!aabb_overlaps(region, st->box)) continue;
                if (ref_kind(st->shape) != GEOM_SHAPE_BOX || count == WORLD_NEAR_STATICS)
                    return world_slide(w, mi, pos, r, cands, cand_count, &unused);
                if ((uint32_t)count < WORLD_EVENTS_NEAR) index[count] = (uint32_t)s;
                near[count++] = st->box;
            }
            world_events_noted(w, mi, region, (uint32_t)count);
        }
    } else if (w->events) {
        world_events_noted(w, mi, region, 0);
    }
    float tau = 0.0f; /* fraction of the tick used so far (candidates' clock) */
    vec2 first = r;
    for (int it = 0; it < w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        sweep_hit best = {WORLD_NO_HIT, {0, 0}, {0, 0}, false};
        if (check_bounds) sweep_bounds(w, box, r, &best);
        for (uint32_t c = 0; c < cand_count; c++) {
            const body_view *b = &cands[c].view;
            vec2 db = v2_scale(cands[c].d, 1.0f - tau), rel = v2_sub(r, db);
            geom_toi toi;
            if (box_sweep(box, rel, recip(rel),
                          box_at(v2_mul_add(b->pos, tau, cands[c].d), b->lo, b->hi), &toi))
                hit_offer(&best, &toi, db, true);
        }
        vec2 inv = count ? recip(r) : v2(0.0f, 0.0f);
        for (int k = 0; k < count; k++) {
            geom_toi toi;
            if (box_sweep(box, r, inv, near[k], &toi))
                hit_offer(&best, &toi, v2(0.0f, 0.0f), false);
        }
        if (best.t > 1.0f) return v2_add(pos, r);
        w->swept_hits++;
        /* with no candidates other_d is 0: cand_count != 0 is a constant in the specialisation
         * below (cand_count a constant 0), which so drops the mover arithmetic */
        float t = slide_respond(&pos, &r, best.t, best.normal, cand_count != 0, best.other_d,
                                !best.mover, false, first);
        box = box_at(pos, m->lo, m->hi);
        if (cand_count) tau += t * (1.0f - tau);
    }
    return pos;
}

/* slide_box_impl compiled twice: alone (S1a, and S1b movers with nobody near) and with
 * candidates. */
vec2 world_slide_box(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                     uint32_t cand_count) {
    if (!WORLD_FAST_PATHS) {
        aabb unused;
        return world_slide(w, mi, pos, r, cands, cand_count, &unused);
    }
    if (cand_count == 0) return slide_box_impl(w, mi, pos, r, NULL, 0);
    return slide_box_impl(w, mi, pos, r, cands, cand_count);
}

#if WORLD_FAST_PATHS /* world_step_alone's fast path's own helpers (unused without it) */
/* What world_step_alone's cell walk reads, held once per tick (walk_cells). */
typedef struct alone_grid {
    world *w;
    const uint64_t *occ;
    const int32_t *heads;
    const world_static *statics;
    vec2 o;
    float inv_cell;
    int32_t nx, ny, extra;
    bool use_cache;
} alone_grid;

/* world_step_alone's walk of the finest level's occupied cells around region: the boxes that
 * overlap it into near (*count of them), the walked cells remembered in nc. False when the mover
 * must take the general slide (a non-box static, too many, a range too wide). Always inlined:
 * the loop's constants stay in registers as when this was written in the loop. */
WORLD_HOT bool walk_cells(const alone_grid *g, world_near_cache *nc, aabb region, vec2 r,
                          aabb *near, int *count) {
    int32_t x0 = (int32_t)((region.min.x - g->o.x) * g->inv_cell) - g->extra;
    int32_t y0 = (int32_t)((region.min.y - g->o.y) * g->inv_cell) - g->extra;
    int32_t x1 = (int32_t)((region.max.x - g->o.x) * g->inv_cell);
    int32_t y1 = (int32_t)((region.max.y - g->o.y) * g->inv_cell);
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    uint32_t len = (uint32_t)(x1 - x0 + 1);
    if (len > 32) return false;
    /* Walk a range grown ahead of the motion, so the next ticks find it remembered.
     * Statics outside the region's own cells cannot overlap the region, so the filter
     * below keeps exactly what a walk of those cells would keep, in the same order. */
    int32_t gx0 = x0, gy0 = y0, gx1 = x1, gy1 = y1;
    if (g->use_cache) {
        const aabb no_area = {{NAN, NAN}, {NAN, NAN}};
        nc->area = no_area; /* void while it is refilled (the walk may leave) */
        cell_range cr = near_cache_grow((cell_range){x0, y0, x1, y1}, r, g->nx, g->ny);
        gx0 = cr.x0, gy0 = cr.y0, gx1 = cr.x1, gy1 = cr.y1;
        len = (uint32_t)(gx1 - gx0 + 1);
    }
    uint64_t len_mask = (1ull << len) - 1;
    uint32_t found = 0; /* statics in the walked cells */
    for (int32_t cy = gy0; cy <= gy1; cy++) {
        /* the row's cells gx0..gx1 as bits: one word, or the tail of one and head of the
         * next (gx1 < nx, so the next word exists) */
        uint32_t c0 = (uint32_t)(cy * g->nx + gx0), sh = c0 & 63;
        uint64_t bits = g->occ[c0 >> 6] >> sh;
        if (sh + len > 64) bits |= g->occ[(c0 >> 6) + 1] << (64 - sh);
        bits &= len_mask;
        while (bits) {
            uint32_t c = c0 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            for (int32_t s = g->heads[c]; s >= 0; s = g->statics[s].next) {
                if (found < WORLD_NEAR_CACHE) nc->statics[found] = s;
                found++;
                const world_static *st = &g->statics[s];
                if (!aabb_overlaps(region, st->box)) continue;
                if (ref_kind(st->shape) != GEOM_SHAPE_BOX || *count == WORLD_NEAR_STATICS)
                    return false;
                near[(*count)++] = st->box;
            }
        }
    }
    if (g->use_cache && found <= WORLD_NEAR_CACHE && len <= 32) {
        nc->count = found;
        nc->area = near_cache_area(g->w, (cell_range){gx0, gy0, gx1, gy1});
    }
    return true;
}

/* world_step_alone's slide of a box mover among the count boxes in near: where it ends. */
WORLD_HOT vec2 slide_among_boxes(const world_mover *m, vec2 pos, vec2 r, aabb box, const aabb *near,
                                 int count, int iterations, uint64_t *hits) {
    if (count == 0) {
        /* nothing within reach: the slide is the whole move */
        if (r.x != 0.0f || r.y != 0.0f) pos = v2_add(pos, r);
        return pos;
    }
    vec2 first = r;
    for (int it = 0; it < iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        float best_t = WORLD_NO_HIT;
        vec2 best_n = v2(0.0f, 0.0f);
        /* box_sweep reads inv.x only when r.x != 0 (same for y): no zero test */
        vec2 inv = v2(1.0f / r.x, 1.0f / r.y);
        for (int k = 0; k < count; k++) {
            geom_toi toi;
            if (box_sweep(box, r, inv, near[k], &toi) && toi.t < best_t)
                best_t = toi.t, best_n = toi.normal;
        }
        if (best_t > 1.0f) return v2_add(pos, r);
        (*hits)++;
        slide_respond(&pos, &r, best_t, best_n, false, v2(0.0f, 0.0f), true, false, first);
        box = box_at(pos, m->lo, m->hi);
    }
    return pos;
}

#endif

/* The tick of movers that ignore each other when every static sits in the finest level (S1a):
 * slide_box_impl's box-among-boxes path inlined into the mover loop, with the world's constants
 * held in locals (the mover stores would otherwise force reloading them per mover), the
 * occupancy bits read a row at a time, and a mover whose swept region meets no occupied cell
 * done without the slide loop. The same arithmetic as slide_box_impl with no candidates, so the
 * same results; anything it does not cover (other shapes, long moves, near the bounds, non-box
 * or many statics) goes through world_slide_box. */
void world_step_alone(world *w) {
    /* the general slide: without the fast paths, or with filters (which only it applies) */
    if (!WORLD_FAST_PATHS || world_pair_rules(w)) {
        for (uint32_t i = 0; i < w->mover_count; i++) {
            const world_mover *m = &w->movers[i];
            vec2 start = m->position;
            aabb unused;
            finish_mover(w, i, start,
                         world_slide(w, i, start, v2_scale(m->intent, w->dt), NULL, 0, &unused));
        }
        return;
    }
#if WORLD_FAST_PATHS
    uint32_t n = w->mover_count;
    float dt = w->dt;
    const world_level *lv = &w->levels[0];
    const float cell = lv->cell;
    const world_static *statics = w->statics;
    const aabb inner = w->inner_bounds;
    const bool fast_ok = w->statics_in_finest;
    const bool any_statics = w->active_level_count > 0;
    const int iterations = w->cfg.slide_iterations;
    world_near_cache_begin(w, n);
    world_near_cache *near_cache = w->near_cache;
    /* with a circle or polygon among the statics the walk decides whether to leave
     * the fast path, so it is always done */
    const alone_grid g = {w,
                          lv->occupied,
                          lv->heads,
                          statics,
                          w->cfg.bounds.min,
                          lv->inv_cell,
                          lv->nx,
                          lv->ny,
                          lv->extra,
                          w->nonbox_statics == 0};
    uint64_t hits = 0;
    for (uint32_t i = 0; i < n; i++) {
        world_mover *m = &w->movers[i];
        vec2 pos = m->position, start = pos;
        vec2 r = v2_scale(m->intent, dt);
        if (!fast_ok || ref_kind(m->shape) != GEOM_SHAPE_BOX || wmax(fabsf(r.x), fabsf(r.y)) > cell)
            goto general_slide; /* what slide_box_impl would do first */
        aabb box = box_at(pos, m->lo, m->hi);
        aabb region = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
        aabb near[WORLD_NEAR_STATICS];
        int count = 0;
        world_near_cache *nc = &near_cache[i];
        /* a region inside the cells walked last: their statics, filtered as the walk would
         * (the area lies inside the inner bounds, so no bounds test either; NaN fails) */
        if (near_cache_holds(nc, region)) {
            /* kept or not without a branch (turn_gather's reason: the test waits on a load of
             * the static, and its answer is a coin toss) */
            for (uint32_t k = 0; k < nc->count; k++) {
                const world_static *st = &statics[nc->statics[k]];
                near[count] = st->box; /* count <= k < WORLD_NEAR_CACHE < WORLD_NEAR_STATICS */
                count += aabb_overlaps_all(region, st->box);
            }
            goto walked;
        }
        if (!aabb_contains(inner, region)) goto general;
        if (any_statics && !walk_cells(&g, nc, region, r, near, &count)) goto general;
    walked:
        pos = slide_among_boxes(m, pos, r, box, near, count, iterations, &hits);
        finish_mover(w, i, start, pos);
        continue;
    general:
        finish_mover(w, i, start, world_slide_box(w, i, start, r, NULL, 0));
        continue;
    general_slide:;
        aabb unused;
        finish_mover(w, i, start, world_slide(w, i, start, r, NULL, 0, &unused));
    }
    w->swept_hits += hits;
#endif
}

/* world_statics: the static grid. A static lives in the one cell holding its AABB's min corner, at
 * the level whose cells are at least its size; a walk over a box reaches `extra` cells further on
 * the min side. Every walk of the cell lists goes through WORLD_FOR_STATICS_IN_CELLS, except the
 * S1a loop's (world_slide.c), which reads the occupancy bits a row-word at a time and remembers
 * what it found: a fast path, checked against the general walk by test_world_fastpaths; and
 * world_static_walk below (world_static_query's), which also reads them a row-word at a time and
 * visits the same statics in the same order. */
#ifndef COLLIDE_WORLD_STATICS_H
#define COLLIDE_WORLD_STATICS_H

#include "world_internal.h"

static inline int32_t level_cell(float v, float origin, float inv, int32_t n) {
    float f = (v - origin) * inv;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    return (int32_t)f;
}

/* level_cell without a branch: the same cell for every v (a NaN or a v below the origin gives
 * 0, one at or past the last cell n - 1), by clamping the float before its conversion. */
static inline int32_t level_cell_clamped(float v, float origin, float inv, int32_t n) {
    float f = (v - origin) * inv;
    f = f > 0.0f ? f : 0.0f;
    float last = (float)(n - 1);
    return (int32_t)(f < last ? f : last);
}

/* The home cell of a static at its level: the cell holding its AABB's min corner. */
int32_t world_static_home(const world *w, const world_static *s);

/* The cells of level lv a query over box visits: box's cells, reaching `extra` cells further on
 * the min side (a static lives in the cell of its min corner), clamped to the grid. */
typedef struct cell_range {
    int32_t x0, y0, x1, y1; /* inclusive */
} cell_range;
WORLD_HOT cell_range level_range(const world *w, const world_level *lv, aabb box) {
    vec2 o = w->cfg.bounds.min;
    cell_range c = {level_cell(box.min.x, o.x, lv->inv_cell, lv->nx) - lv->extra,
                    level_cell(box.min.y, o.y, lv->inv_cell, lv->ny) - lv->extra,
                    level_cell(box.max.x, o.x, lv->inv_cell, lv->nx),
                    level_cell(box.max.y, o.y, lv->inv_cell, lv->ny)};
    if (c.x0 < 0) c.x0 = 0;
    if (c.y0 < 0) c.y0 = 0;
    return c;
}

/* level_range for a box inside the world's inner bounds: its cells lie inside the grid, so the
 * max side needs no clamping (nor the min side's float test). Same cells as level_range. */
WORLD_HOT cell_range level_range_inside(const world *w, const world_level *lv, aabb box) {
#if WORLD_FAST_PATHS
    vec2 o = w->cfg.bounds.min;
    cell_range c = {(int32_t)((box.min.x - o.x) * lv->inv_cell) - lv->extra,
                    (int32_t)((box.min.y - o.y) * lv->inv_cell) - lv->extra,
                    (int32_t)((box.max.x - o.x) * lv->inv_cell),
                    (int32_t)((box.max.y - o.y) * lv->inv_cell)};
    if (c.x0 < 0) c.x0 = 0;
    if (c.y0 < 0) c.y0 = 0;
    return c;
#else
    return level_range(w, lv, box);
#endif
}

WORLD_HOT bool cell_occupied(const world_level *lv, uint32_t cell) {
    return lv->occupied[cell >> 6] >> (cell & 63) & 1u;
}

/* The one walk over the static grid's cells: s runs over every static listed in the cells cr of
 * level lv, in walk order (rows, then cells, then list order; empty cells skipped by their
 * occupancy bit). The body may `continue` (next static), `break` (next cell) or return. */
#define WORLD_FOR_STATICS_IN_CELLS(w, lv, cr, s)                                                   \
    for (int32_t cy_ = (cr).y0; cy_ <= (cr).y1; cy_++)                                             \
        for (int32_t cx_ = (cr).x0; cx_ <= (cr).x1; cx_++)                                         \
            if (cell_occupied((lv), (uint32_t)(cy_ * (lv)->nx + cx_)))                             \
                for (int32_t s = (lv)->heads[cy_ * (lv)->nx + cx_], next_##s;                      \
                     s >= 0 && ((next_##s = (w)->statics[s].next), 1); s = next_##s)

/* The cell (x, y) of the walk in progress (inside WORLD_FOR_STATICS_IN_CELLS). */
#define WORLD_WALK_CELL_X cx_
#define WORLD_WALK_CELL_Y cy_

/* Links static index into the grid (spawn) / replaces the link that points at `from` with `to`
 * (-1 unlinks when to == next; a despawn also moves the last static into the hole). */
void world_static_link(world *w, uint32_t index);
void world_static_relink(world *w, uint32_t from, int32_t to);
/* The levels that hold statics, after a level's count changed. */
void world_update_active_levels(world *w);

/* Calls visit for every static whose AABB overlaps box (inclusive of touching), each once; stops
 * when visit returns false. */
typedef bool (*static_visit_fn)(const world *w, uint32_t index, void *ctx);
void world_static_query(const world *w, aabb box, static_visit_fn visit, void *ctx);

/* world_static_query inline, for a hot caller whose visit the compiler can then inline (the game
 * queries). Same statics in the same order as WORLD_FOR_STATICS_IN_CELLS (rows, then cells, then
 * list order); each row's occupancy bits are read a word at a time, so the empty cells of a
 * sparse map cost a bit scan rather than a test each. */
WORLD_HOT void world_static_walk(const world *w, aabb box, static_visit_fn visit, void *ctx) {
    for (int al = 0; al < w->active_level_count; al++) {
        const world_level *lv = &w->levels[w->active_levels[al]];
        cell_range cr = level_range(w, lv, box);
        for (int32_t cy = cr.y0; cy <= cr.y1; cy++) {
            uint32_t c = (uint32_t)(cy * lv->nx + cr.x0), last = (uint32_t)(cy * lv->nx + cr.x1);
            while (c <= last) {
                /* the bits of cells c.. in c's word, cut at `last` */
                uint32_t span = 64u - (c & 63u);
                uint64_t bits = lv->occupied[c >> 6] >> (c & 63u);
                if (last - c + 1u < span) {
                    span = last - c + 1u;
                    bits &= (1ull << span) - 1u;
                }
                for (; bits; bits &= bits - 1u) {
                    uint32_t cell = c + (uint32_t)__builtin_ctzll(bits);
                    for (int32_t s = lv->heads[cell]; s >= 0; s = w->statics[s].next) {
                        if (!aabb_meets(w->statics[s].box, box)) continue;
                        if (!visit(w, (uint32_t)s, ctx)) return;
                    }
                }
                c += span;
            }
        }
    }
}

/* ---- the remembered statics (world_near_cache; the fast paths only) ------------------------ */
/* Cells a remembered walk reaches past the swept region in the direction of motion. */
#define WORLD_NEAR_GROW 1

/* Makes the near cache usable for this step's first n dense indices: every entry void once a
 * static was linked or unlinked since the last use, entries never used before void too (a NaN
 * area holds nothing). Called once per step by each loop that reads it. */
void world_near_cache_begin(world *w, uint32_t n);

/* The cell range (of level 0, whose cells' coordinates are computed as level_range_inside does)
 * a remembered walk covers: cr grown by WORLD_NEAR_GROW ahead of the motion r, within the grid. */
WORLD_HOT cell_range near_cache_grow(cell_range cr, vec2 r, int32_t nx, int32_t ny) {
    if (r.x > 0.0f) cr.x1 = cr.x1 + WORLD_NEAR_GROW < nx ? cr.x1 + WORLD_NEAR_GROW : nx - 1;
    if (r.x < 0.0f) cr.x0 = cr.x0 > WORLD_NEAR_GROW ? cr.x0 - WORLD_NEAR_GROW : 0;
    if (r.y > 0.0f) cr.y1 = cr.y1 + WORLD_NEAR_GROW < ny ? cr.y1 + WORLD_NEAR_GROW : ny - 1;
    if (r.y < 0.0f) cr.y0 = cr.y0 > WORLD_NEAR_GROW ? cr.y0 - WORLD_NEAR_GROW : 0;
    return cr;
}

/* The float next to v towards +inf / -inf, for finite nonzero v (the callers fall back to
 * nextafterf otherwise): one integer step on the bits, no libm call. */
static inline float float_up(float v) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    b = v > 0.0f ? b + 1u : b - 1u;
    memcpy(&v, &b, sizeof v);
    return v;
}
static inline float float_down(float v) { return -float_up(-v); }

/* A float v from which on every coordinate's level-0 cell, computed as world_step_alone computes
 * it, is at least c: cells grow with v, so checking v itself suffices. It starts at the cell's edge
 * and steps up by a doubling step (the origin's rounding may need many ulps of v), so it may lie
 * a little inside the cell: the remembered area is then a little smaller, never wrong. */
static inline float cell_edge_lo(float o, float cell, float inv_cell, int32_t c) {
    float v = o + (float)c * cell, step = 0.0f;
    for (int k = 0; k < 64 && (int32_t)((v - o) * inv_cell) < c; k++) {
        float up = v != 0.0f && isfinite(v) ? float_up(v) : nextafterf(v, INFINITY);
        step = wmax(step * 2.0f, up - v);
        v += step;
    }
    return (int32_t)((v - o) * inv_cell) < c ? INFINITY : v;
}

/* A float v up to which every coordinate's level-0 cell is at most c (as cell_edge_lo; the
 * cell's far edge itself belongs to the next cell, so it always steps at least once). */
static inline float cell_edge_hi(float o, float cell, float inv_cell, int32_t c) {
    float v = o + (float)(c + 1) * cell, step = 0.0f;
    for (int k = 0; k < 64 && (int32_t)((v - o) * inv_cell) > c; k++) {
        float down = v != 0.0f && isfinite(v) ? float_down(v) : nextafterf(v, -INFINITY);
        step = wmax(step * 2.0f, v - down);
        v -= step;
    }
    return (int32_t)((v - o) * inv_cell) > c ? -INFINITY : v;
}

/* The area of an entry that remembers the level-0 cells g: the floats whose cells (with the
 * level's `extra` reach on the min side) lie in g, within the inner bounds. Out of line: the
 * refill is rare, and inlined it made world_step_alone's loop hold fewer values in registers. */
__attribute__((noinline, unused)) static aabb near_cache_area(const world *w, cell_range g) {
    const world_level *lv = &w->levels[0];
    const vec2 o = w->cfg.bounds.min;
    aabb a;
    /* x0 >= g.x0 needs a home cell >= g.x0 + extra (none below 0: x0 is clamped) */
    a.min.x = g.x0 > 0 ? cell_edge_lo(o.x, lv->cell, lv->inv_cell, g.x0 + lv->extra) : -INFINITY;
    a.min.y = g.y0 > 0 ? cell_edge_lo(o.y, lv->cell, lv->inv_cell, g.y0 + lv->extra) : -INFINITY;
    a.max.x = cell_edge_hi(o.x, lv->cell, lv->inv_cell, g.x1);
    a.max.y = cell_edge_hi(o.y, lv->cell, lv->inv_cell, g.y1);
    a.min = v2_max(a.min, w->inner_bounds.min);
    a.max = v2_min(a.max, w->inner_bounds.max);
    return a;
}

/* Whether region lies inside the cells entry nc remembers (NaN, a void entry, fails). */
WORLD_HOT bool near_cache_holds(const world_near_cache *nc, aabb region) {
    return nc->area.min.x <= region.min.x && nc->area.min.y <= region.min.y &&
           region.max.x <= nc->area.max.x && region.max.y <= nc->area.max.y;
}

/* Checks the grid links: every static listed exactly once, in its home cell, at its level; counts
 * and occupancy bits agree. NULL when consistent, else what is broken (world_validate). */
const char *world_statics_validate(const world *w);

#endif

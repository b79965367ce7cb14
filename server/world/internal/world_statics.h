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

/* Checks the grid links: every static listed exactly once, in its home cell, at its level; counts
 * and occupancy bits agree. NULL when consistent, else what is broken (world_validate). */
const char *world_statics_validate(const world *w);

#endif

/* world_statics: linking statics into the multi-level grid, the query walk, and the grid's
 * validation (see world_statics.h). */
#include "world_statics.h"

static int level_for_size(const world *w, float size) {
    int l = 0;
    while (l + 1 < w->level_count && w->levels[l].cell < size)
        l++;
    return l;
}

/* The levels that hold statics: the loops skip the empty ones without looking. */
void world_update_active_levels(world *w) {
    w->active_level_count = 0;
    for (int l = 0; l < w->level_count; l++)
        if (w->levels[l].count) w->active_levels[w->active_level_count++] = l;
    w->statics_in_finest =
        w->active_level_count == 0 || (w->active_level_count == 1 && w->active_levels[0] == 0);
}

int32_t world_static_home(const world *w, const world_static *s) {
    const world_level *lv = &w->levels[s->level];
    vec2 o = w->cfg.bounds.min;
    int32_t hx = level_cell(s->box.min.x, o.x, lv->inv_cell, lv->nx);
    int32_t hy = level_cell(s->box.min.y, o.y, lv->inv_cell, lv->ny);
    return hy * lv->nx + hx;
}

void world_static_link(world *w, uint32_t index) {
    COLLIDE_ASSERT(index < w->static_count);
    world_static *s = &w->statics[index];
    vec2 size = v2_sub(s->box.max, s->box.min);
    int l = level_for_size(w, wmax(size.x, size.y));
    world_level *lv = &w->levels[l];
    vec2 o = w->cfg.bounds.min;
    int32_t hx = level_cell(s->box.min.x, o.x, lv->inv_cell, lv->nx);
    int32_t hy = level_cell(s->box.min.y, o.y, lv->inv_cell, lv->ny);
    /* last covered cell: the cell holding max, unless max sits exactly on a cell border */
    int32_t ex = (int32_t)ceilf((s->box.max.x - o.x) * lv->inv_cell) - 1 - hx;
    int32_t ey = (int32_t)ceilf((s->box.max.y - o.y) * lv->inv_cell) - 1 - hy;
    int32_t extra = ex > ey ? ex : ey;
    if (extra > lv->extra) lv->extra = extra;
    int32_t cell = hy * lv->nx + hx;
    s->level = (uint32_t)l;
    s->next = lv->heads[cell];
    lv->heads[cell] = (int32_t)index;
    lv->occupied[cell >> 6] |= 1ull << (cell & 63);
    if (++w->statics_epoch == 0) w->statics_epoch = 1; /* near_cache void, still ticks too */
    if (lv->count++ == 0) world_update_active_levels(w);
}

void world_static_relink(world *w, uint32_t from, int32_t to) {
    COLLIDE_ASSERT(from < w->static_count);
    world_static *s = &w->statics[from];
    world_level *lv = &w->levels[s->level];
    int32_t cell = world_static_home(w, s);
    int32_t *link = &lv->heads[cell];
    while (*link != (int32_t)from) {
        /* a static missing from its home cell's list: the grid links are broken */
        COLLIDE_ASSERT(*link >= 0);
        if (*link < 0) return;
        link = &w->statics[*link].next;
    }
    *link = to;
    if (++w->statics_epoch == 0) w->statics_epoch = 1; /* indices move, lists change */
    if (lv->heads[cell] < 0) lv->occupied[cell >> 6] &= ~(1ull << (cell & 63));
}

void world_near_cache_begin(world *w, uint32_t n) {
    if (w->near_cache_epoch != w->statics_epoch) {
        memset(w->near_cache, 0xff, w->near_cache_used * sizeof *w->near_cache);
        w->near_cache_epoch = w->statics_epoch;
    }
    if (n > w->near_cache_used) {
        memset(w->near_cache + w->near_cache_used, 0xff,
               (n - w->near_cache_used) * sizeof *w->near_cache);
        w->near_cache_used = n;
    }
}

void world_static_query(const world *w, aabb box, static_visit_fn visit, void *ctx) {
    world_static_walk(w, box, visit, ctx);
}

const char *world_statics_validate(const world *w) {
    uint32_t listed = 0;
    for (int l = 0; l < w->level_count; l++) {
        const world_level *lv = &w->levels[l];
        uint32_t in_level = 0;
        int32_t cells = lv->nx * lv->ny;
        for (int32_t c = 0; c < cells; c++) {
            if (cell_occupied(lv, (uint32_t)c) != (lv->heads[c] >= 0))
                return "static grid: occupancy bit disagrees with the cell list";
            for (int32_t s = lv->heads[c]; s >= 0; s = w->statics[s].next) {
                if ((uint32_t)s >= w->static_count) return "static grid: link past the statics";
                const world_static *st = &w->statics[s];
                if (st->level != (uint32_t)l) return "static grid: static listed at another level";
                if (world_static_home(w, st) != c)
                    return "static grid: static outside its home cell";
                if (++in_level > w->static_count) return "static grid: a cell list loops";
            }
        }
        if (in_level != lv->count) return "static grid: level count disagrees with its lists";
        listed += in_level;
    }
    if (listed != w->static_count) return "static grid: not every static is listed once";
    for (int al = 0; al < w->active_level_count; al++)
        if (w->levels[w->active_levels[al]].count == 0) return "static grid: empty level active";
    return NULL;
}

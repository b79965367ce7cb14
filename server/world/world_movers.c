/* world_movers: the mover hash, its pairs and the spatial sort (see world_movers.h).
 *
 * Why rebuilt from scratch: mover boxes change every tick, so a counting-sort rebuild beats
 * updating. Cells are numbered row-major (nearby cells, nearby buckets), and the movers are
 * re-sorted by space every few ticks, so walks over them stay in cache. */
#include "world_movers.h"
#include "world_statics.h"

/* Cells are numbered row-major over the bounds and folded into the table: nearby cells land in
 * nearby buckets, so a walk over spatially sorted movers stays in cache (a scattering hash made
 * every insert and query a cache miss). */
static inline uint32_t grid_hash(const world_grid *g, int32_t x, int32_t y) {
    return ((uint32_t)y * g->row + (uint32_t)x) & g->mask;
}
static inline int32_t grid_coord(float v, float origin, float inv, int32_t n) {
    float f = (v - origin) * inv;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    return (int32_t)f;
}

/* Rebuilds the grid over the movers with the given per-dense-index boxes (kept by reference:
 * the array must not change while the grid is in use). */
void world_grid_build(const world *w, world_grid *g, const aabb *boxes) {
    uint32_t n = w->mover_count;
    /* Cell: the power of two at or above the median box size, so most boxes span 1-4 cells. */
    uint32_t hist[64] = {0};
    for (uint32_t i = 0; i < n; i++) {
        vec2 s = v2_sub(boxes[i].max, boxes[i].min);
        /* frexpf's exponent straight from the bits (no libm call): size in [2^(e-1), 2^e) */
        float size = wmax(wmax(s.x, s.y), 1e-6f);
        uint32_t bits;
        memcpy(&bits, &size, sizeof bits);
        int e = (int)((bits >> 23) & 0xffu) - 126 + 32;
        hist[e < 0 ? 0 : e > 63 ? 63 : e]++;
    }
    int e = 32;
    for (uint32_t acc = 0, k = 0; k < 64; k++) {
        acc += hist[k];
        if (acc * 2 >= n) {
            e = (int)k;
            break;
        }
    }
    vec2 ext = v2_sub(w->cfg.bounds.max, w->cfg.bounds.min);
    g->cell = ldexpf(1.0f, e - 32);
    /* not finer than 1/64 unit, and at most 2^15 cells across */
    float min_cell = wmax(1.0f / 64.0f, wmax(ext.x, ext.y) / 32768.0f);
    while (g->cell < min_cell)
        g->cell *= 2.0f;
    g->inv_cell = 1.0f / g->cell;
    g->origin = w->cfg.bounds.min;
    g->nx = (int32_t)(ext.x * g->inv_cell) + 1;
    g->ny = (int32_t)(ext.y * g->inv_cell) + 1;
    g->row = (uint32_t)g->nx;
    uint32_t table = 64;
    while (table < n && table < g->table_cap)
        table <<= 1;
    g->mask = table - 1;
    g->boxes = boxes;
    memset(g->start, 0, (table + 1) * sizeof *g->start);
    g->big_count = 0;
    uint64_t items = 0;
    for (uint32_t i = 0; i < n; i++) {
        aabb b = boxes[i];
        int32_t x0 = grid_coord(b.min.x, g->origin.x, g->inv_cell, g->nx);
        int32_t x1 = grid_coord(b.max.x, g->origin.x, g->inv_cell, g->nx);
        int32_t y0 = grid_coord(b.min.y, g->origin.y, g->inv_cell, g->ny);
        int32_t y1 = grid_coord(b.max.y, g->origin.y, g->inv_cell, g->ny);
        /* kept for the fill pass: coordinates fit 16 bits (at most 2^15 cells across) */
        g->ranges[i] = (uint64_t)(uint16_t)x0 | (uint64_t)(uint16_t)x1 << 16 |
                       (uint64_t)(uint16_t)y0 << 32 | (uint64_t)(uint16_t)y1 << 48;
        uint64_t cells = (uint64_t)(x1 - x0 + 1) * (uint64_t)(y1 - y0 + 1);
        if (cells > WORLD_GRID_MAX_CELLS_PER_ITEM || items + cells > g->item_cap) {
            g->big[g->big_count++] = i;
            continue;
        }
        items += cells;
        for (int32_t y = y0; y <= y1; y++)
            for (int32_t x = x0; x <= x1; x++)
                g->start[grid_hash(g, x, y)]++;
    }
    uint32_t acc = 0;
    for (uint32_t h = 0; h <= table; h++) {
        uint32_t c = g->start[h];
        g->start[h] = acc;
        acc += c;
    }
    /* fill: start[h] runs up to the bucket end; shifted back below */
    uint32_t big_i = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (big_i < g->big_count && g->big[big_i] == i) {
            big_i++;
            continue;
        }
        uint64_t rg = g->ranges[i];
        int32_t x0 = (int32_t)(rg & 0xffffu), x1 = (int32_t)(rg >> 16 & 0xffffu);
        int32_t y0 = (int32_t)(rg >> 32 & 0xffffu), y1 = (int32_t)(rg >> 48 & 0xffffu);
        for (int32_t y = y0; y <= y1; y++)
            for (int32_t x = x0; x <= x1; x++)
                g->items[g->start[grid_hash(g, x, y)]++] = i;
    }
    for (uint32_t h = table; h > 0; h--)
        g->start[h] = g->start[h - 1];
    g->start[0] = 0;
    g->valid = true;
    g->unindexed_count = 0;
}

/* Calls visit(index) once for every indexed mover whose build box overlaps box (inclusive), and
 * for every big or unindexed mover (the visitor checks those itself). Indices are dense mover
 * indices, valid until a despawn or the next step (both invalidate the grid). */
void world_grid_query(const world *w, const world_grid *g, aabb box, mover_visit_fn visit,
                      void *ctx) {
    int32_t x0 = grid_coord(box.min.x, g->origin.x, g->inv_cell, g->nx);
    int32_t x1 = grid_coord(box.max.x, g->origin.x, g->inv_cell, g->nx);
    int32_t y0 = grid_coord(box.min.y, g->origin.y, g->inv_cell, g->ny);
    int32_t y1 = grid_coord(box.max.y, g->origin.y, g->inv_cell, g->ny);
    int64_t cells = (int64_t)(x1 - x0 + 1) * (int64_t)(y1 - y0 + 1);
    if (cells > (int64_t)g->mask + 1) {
        /* Bigger than the table: every bucket once, dedupe by the first overlapping cell. */
        for (uint32_t h = 0; h <= g->mask; h++)
            for (uint32_t i = g->start[h]; i < g->start[h + 1]; i++) {
                uint32_t item = g->items[i];
                const aabb *b = &g->boxes[item];
                if (!aabb_meets(*b, box)) continue;
                int32_t fx = grid_coord(wmax(b->min.x, box.min.x), g->origin.x, g->inv_cell, g->nx);
                int32_t fy = grid_coord(wmax(b->min.y, box.min.y), g->origin.y, g->inv_cell, g->ny);
                if (grid_hash(g, fx, fy) != h) continue;
                /* several cells of one box may share a bucket: visiting twice is harmless */
                if (!visit(w, item, ctx)) return;
            }
    } else {
        for (int32_t y = y0; y <= y1; y++)
            for (int32_t x = x0; x <= x1; x++) {
                uint32_t h = grid_hash(g, x, y);
                for (uint32_t i = g->start[h]; i < g->start[h + 1]; i++) {
                    uint32_t item = g->items[i];
                    const aabb *b = &g->boxes[item];
                    if (!aabb_meets(*b, box)) continue;
                    /* visit from the first cell both boxes share: once per mover */
                    int32_t fx = grid_coord(b->min.x, g->origin.x, g->inv_cell, g->nx);
                    int32_t fy = grid_coord(b->min.y, g->origin.y, g->inv_cell, g->ny);
                    if ((fx > x0 ? fx : x0) != x || (fy > y0 ? fy : y0) != y) continue;
                    if (!visit(w, item, ctx)) return;
                }
            }
    }
    for (uint32_t i = 0; i < g->big_count; i++)
        if (!visit(w, g->big[i], ctx)) return;
    for (uint32_t i = 0; i < g->unindexed_count; i++)
        if (!visit(w, g->unindexed[i], ctx)) return;
}

/* Builds the mover grid over the current boxes grown by allowance: a body may then move that far
 * (the discrete pass's pushes) and still be found through its cells. */
void world_grid_build_current(const world *w, float allowance) {
    world_grid *g = &w->cache->grid;
    if (w->events) world_events_keep_path(w); /* it may still read the mover pass's boxes there */
    aabb *boxes = w->scratch.path; /* the grid keeps boxes by reference: rebuilt right below */
    for (uint32_t i = 0; i < w->mover_count; i++) {
        const world_mover *m = &w->movers[i];
        boxes[i] = aabb_inflate(box_at(m->position, m->lo, m->hi), allowance);
    }
    world_grid_build(w, g, boxes);
}

/* Reorders the dense mover array by 8x8 tiles of the finest static cells (a stable counting sort,
 * so deterministic): neighbours in space become neighbours in memory, and the tick's walk over
 * movers touches the static grid coherently instead of at random. */
void world_sort_movers(world *w) {
    uint32_t n = w->mover_count;
    const world_level *lv = &w->levels[0];
    uint32_t tx = (uint32_t)(lv->nx + 7) / 8, ty = (uint32_t)(lv->ny + 7) / 8;
    if (n < 2 || (uint64_t)tx * ty > w->scratch.sort_tile_cap) return;
    scratch_take(w, WORLD_SCRATCH_PAIRS, WORLD_OWNER_FREE, WORLD_OWNER_SORT);
    uint32_t tiles = tx * ty;
    uint32_t *count = w->scratch.sort_counts;
    memset(count, 0, (tiles + 1) * sizeof *count);
    vec2 o = w->cfg.bounds.min;
    for (uint32_t i = 0; i < n; i++) {
        vec2 p = w->movers[i].position;
        uint32_t cx = (uint32_t)level_cell(p.x, o.x, lv->inv_cell, lv->nx) / 8;
        uint32_t cy = (uint32_t)level_cell(p.y, o.y, lv->inv_cell, lv->ny) / 8;
        uint32_t key = cy * tx + cx;
        w->scratch.pairs[i][0] = key;
        count[key + 1]++;
    }
    for (uint32_t t = 0; t < tiles; t++)
        count[t + 1] += count[t];
    for (uint32_t i = 0; i < n; i++)
        w->scratch.pairs[count[w->scratch.pairs[i][0]]++][1] = i; /* new -> old */
    for (uint32_t i = 0; i < n; i++) {
        if (w->scratch.pairs[i][1] == i) continue;
        world_mover tmp = w->movers[i];
        uint32_t j = i;
        for (;;) {
            uint32_t k = w->scratch.pairs[j][1];
            w->scratch.pairs[j][1] = j;
            if (k == i) {
                w->movers[j] = tmp;
                break;
            }
            w->movers[j] = w->movers[k];
            j = k;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        w->slots[w->movers[i].slot].index = i;
    w->mover_sorts++;
    scratch_give(w, WORLD_SCRATCH_PAIRS, WORLD_OWNER_SORT);
}

/* The mover pairs whose grid boxes overlap, from the grid itself (a self-join of each bucket,
 * each pair taken in the bucket of the first cell both boxes share), into w->scratch.pairs, and as
 * adjacency lists (w->scratch.adj from w->scratch.adj_start[i]) for the mover pass. Costs about one
 * pass over the grid's items instead of a query per mover. Pairs past pair_cap are dropped: the
 * discrete pass still separates what they leave overlapped. */
void world_grid_pairs(world *w, const world_grid *g) {
    scratch_take(w, WORLD_SCRATCH_PAIRS, WORLD_OWNER_FREE, WORLD_OWNER_PAIRS);
    scratch_take(w, WORLD_SCRATCH_ADJ, WORLD_OWNER_FREE, WORLD_OWNER_PAIRS);
    w->scratch.pair_count = 0;
    for (uint32_t h = 0; h <= g->mask; h++) {
        uint32_t end = g->start[h + 1];
        for (uint32_t x = g->start[h]; x < end; x++) {
            uint32_t a = g->items[x];
            const aabb *ba = &g->boxes[a];
            for (uint32_t y = x + 1; y < end; y++) {
                uint32_t b = g->items[y];
                const aabb *bb = &g->boxes[b];
                if (a == b || ba->min.x > bb->max.x || bb->min.x > ba->max.x ||
                    ba->min.y > bb->max.y || bb->min.y > ba->max.y)
                    continue;
                int32_t fx =
                    grid_coord(wmax(ba->min.x, bb->min.x), g->origin.x, g->inv_cell, g->nx);
                int32_t fy =
                    grid_coord(wmax(ba->min.y, bb->min.y), g->origin.y, g->inv_cell, g->ny);
                if (grid_hash(g, fx, fy) != h) continue;
                if (w->scratch.pair_count == w->scratch.pair_cap) goto adjacency;
                w->scratch.pairs[w->scratch.pair_count][0] = a < b ? a : b;
                w->scratch.pairs[w->scratch.pair_count][1] = a < b ? b : a;
                w->scratch.pair_count++;
            }
        }
    }
    /* big items meet everything by brute force (there are few: see WORLD_GRID_MAX_CELLS_PER_ITEM)
     */
    for (uint32_t k = 0; k < g->big_count; k++) {
        uint32_t a = g->big[k];
        for (uint32_t b = 0; b < w->mover_count; b++) {
            if (b == a || !aabb_overlaps(g->boxes[a], g->boxes[b])) continue;
            bool b_big = false;
            for (uint32_t q = 0; q < g->big_count && !b_big; q++)
                b_big = g->big[q] == b;
            if (b_big && b < a) continue;
            if (w->scratch.pair_count == w->scratch.pair_cap) goto adjacency;
            w->scratch.pairs[w->scratch.pair_count][0] = a < b ? a : b;
            w->scratch.pairs[w->scratch.pair_count][1] = a < b ? b : a;
            w->scratch.pair_count++;
        }
    }
adjacency:
    memset(w->scratch.adj_start, 0, ((size_t)w->mover_count + 1) * sizeof *w->scratch.adj_start);
    for (uint32_t k = 0; k < w->scratch.pair_count; k++) {
        w->scratch.adj_start[w->scratch.pairs[k][0] + 1]++;
        w->scratch.adj_start[w->scratch.pairs[k][1] + 1]++;
    }
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->scratch.adj_start[i + 1] += w->scratch.adj_start[i];
    /* fill from the back so each list ends up in pair order (deterministic either way) */
    for (uint32_t k = w->scratch.pair_count; k-- > 0;) {
        uint32_t a = w->scratch.pairs[k][0], b = w->scratch.pairs[k][1];
        w->scratch.adj[--w->scratch.adj_start[a + 1]] = b;
        w->scratch.adj[--w->scratch.adj_start[b + 1]] = a;
    }
    /* adj_start[i + 1] now holds list i's start: shift down */
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->scratch.adj_start[i] = w->scratch.adj_start[i + 1];
    w->scratch.adj_start[w->mover_count] = 2 * w->scratch.pair_count;
}

const char *world_movers_validate(const world *w) {
    for (uint32_t i = 0; i < w->mover_count; i++) {
        uint32_t slot = w->movers[i].slot;
        if (slot >= w->capacity) return "movers: slot out of range";
        if (w->slots[slot].kind != WORLD_BODY_MOVING) return "movers: slot is not a moving body";
        if (w->slots[slot].index != i) return "movers: dense index and slot disagree";
    }
    const world_grid *g = &w->cache->grid;
    if (!g->valid) return NULL;
    /* Every mover is found by a query: its box within its build box (in its cells), or on the
     * big or unindexed lists, which every query visits. */
    for (uint32_t i = 0; i < w->mover_count; i++) {
        const world_mover *m = &w->movers[i];
        bool listed = false;
        for (uint32_t k = 0; k < g->big_count && !listed; k++)
            listed = g->big[k] == i;
        for (uint32_t k = 0; k < g->unindexed_count && !listed; k++)
            listed = g->unindexed[k] == i;
        if (listed) continue;
        if (!aabb_contains(g->boxes[i], box_at(m->position, m->lo, m->hi)))
            return "mover grid: a mover left its grid box without being listed as unindexed";
        int32_t x = grid_coord(g->boxes[i].min.x, g->origin.x, g->inv_cell, g->nx);
        int32_t y = grid_coord(g->boxes[i].min.y, g->origin.y, g->inv_cell, g->ny);
        uint32_t h = grid_hash(g, x, y);
        bool found = false;
        for (uint32_t k = g->start[h]; k < g->start[h + 1] && !found; k++)
            found = g->items[k] == i;
        if (!found) return "mover grid: a mover missing from its first cell's bucket";
    }
    return NULL;
}

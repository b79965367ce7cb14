#include "net_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int32_t cell_coord(float x, float origin, float inv_cell, int32_t n) {
    float f = floorf((x - origin) * inv_cell);
    if (!(f >= 0.0f)) return 0; /* also NaN */
    if (f >= (float)(n - 1)) return n - 1;
    return (int32_t)f;
}

static size_t raw_varint(uint8_t *out, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80u) {
        out[n++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static size_t raw_float(uint8_t *out, uint8_t tag, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    out[0] = tag;
    for (int i = 0; i < 4; i++)
        out[1 + i] = (uint8_t)(u >> (8 * i)); /* fixed32 is little-endian */
    return 5;
}

/* A Vec2 as a length-delimited field; zero components are left out, as proto3 does. */
static size_t raw_vec2_field(uint8_t *out, uint8_t tag, vec2 v) {
    size_t n = 2;
    if (v.x != 0.0f) n += raw_float(out + n, 0x0d, v.x);
    if (v.y != 0.0f) n += raw_float(out + n, 0x15, v.y);
    out[0] = tag;
    out[1] = (uint8_t)(n - 2);
    return n;
}

/* Hand-encoded: the same bytes protobuf-c writes for these four fields of BodyState, without its
 * descriptor walk; the unit tests decode them with protobuf-c. */
size_t net_view_encode_delta(const world_body_info *info, uint8_t *out) {
    size_t n = 0;
    out[n++] = 0x08; /* id */
    n += raw_varint(out + n, info->id);
    n += raw_vec2_field(out + n, 0x12, info->position);
    n += raw_vec2_field(out + n, 0x1a, info->velocity);
    if (info->last_input_seq) {
        out[n++] = 0x20;
        n += raw_varint(out + n, info->last_input_seq);
    }
    return n;
}

bool net_view_init(net_view_index *v, const world *w, float cell_hint) {
    memset(v, 0, sizeof *v);
    const world_config *cfg = world_get_config(w);
    vec2 ext = v2_sub(cfg->bounds.max, cfg->bounds.min);
    float cell = cell_hint > 1.0f ? cell_hint : 1.0f;
    if (ext.x / cell > NET_VIEW_MAX_DIM) cell = ext.x / NET_VIEW_MAX_DIM;
    if (ext.y / cell > NET_VIEW_MAX_DIM) cell = ext.y / NET_VIEW_MAX_DIM;
    v->origin = cfg->bounds.min;
    v->cell = cell;
    v->inv_cell = 1.0f / cell;
    v->nx = (int32_t)ceilf(ext.x / cell);
    v->ny = (int32_t)ceilf(ext.y / cell);
    if (v->nx < 1) v->nx = 1;
    if (v->ny < 1) v->ny = 1;
    size_t ncells = (size_t)v->nx * (size_t)v->ny + 1u;
    v->statics.start = calloc(ncells, sizeof *v->statics.start);
    v->movers.start = calloc(ncells, sizeof *v->movers.start);
    world_stats st;
    world_get_stats(w, &st);
    v->ids_cap = st.capacity ? st.capacity : 1;
    v->ids = malloc(v->ids_cap * sizeof *v->ids);
    v->ids_tmp = malloc(v->ids_cap * sizeof *v->ids_tmp);
    v->statics_dirty = true;
    return v->statics.start && v->movers.start && v->ids && v->ids_tmp;
}

static void grid_free(net_view_grid *g) {
    free(g->items);
    free(g->start);
    free(g->stage);
    free(g->cell_of);
    free(g->big);
    memset(g, 0, sizeof *g);
}

void net_view_free(net_view_index *v) {
    grid_free(&v->statics);
    grid_free(&v->movers);
    free(v->ids);
    free(v->ids_tmp);
    free(v->arena);
    memset(v, 0, sizeof *v);
}

static bool big_push(net_view_grid *g, const net_view_item *it) {
    if (g->big_count == g->big_cap) {
        uint32_t cap = g->big_cap ? g->big_cap * 2u : 16u;
        net_view_item *p = realloc(g->big, (size_t)cap * sizeof *p);
        if (!p) return false;
        g->big = p;
        g->big_cap = cap;
    }
    g->big[g->big_count++] = *it;
    return true;
}

/* The world lists ids in ascending slot order, which is ascending id order today; should that
 * change, an LSD radix sort (three 11-bit digits) restores it: the grid's runs depend on it. */
static void sort_ids(world_body_id *ids, world_body_id *tmp, size_t n) {
    size_t i = 1;
    while (i < n && ids[i - 1] < ids[i])
        i++;
    if (i >= n) return;
    uint32_t count[2049];
    world_body_id *src = ids, *dst = tmp;
    for (int shift = 0; shift < 33; shift += 11) {
        memset(count, 0, sizeof count);
        for (size_t k = 0; k < n; k++)
            count[((src[k] >> shift) & 0x7ffu) + 1u]++;
        for (size_t k = 0; k < 2048u; k++)
            count[k + 1] += count[k];
        for (size_t k = 0; k < n; k++)
            dst[count[(src[k] >> shift) & 0x7ffu]++] = src[k];
        world_body_id *t = src;
        src = dst;
        dst = t;
    }
    if (src != ids) memcpy(ids, src, n * sizeof *ids);
}

static bool grid_reserve(net_view_grid *g, size_t n) {
    if (n <= g->cap) return true;
    size_t cap = g->cap ? g->cap : 64u;
    while (cap < n)
        cap *= 2u;
    net_view_item *items = realloc(g->items, cap * sizeof *items);
    if (items) g->items = items;
    net_view_item *stage = realloc(g->stage, cap * sizeof *stage);
    if (stage) g->stage = stage;
    uint32_t *cell_of = realloc(g->cell_of, cap * sizeof *cell_of);
    if (cell_of) g->cell_of = cell_of;
    if (!items || !stage || !cell_of) return false;
    g->cap = (uint32_t)cap;
    return true;
}

/* Counting sort of the bodies (given in ascending id order) into the cells of their min corners:
 * stable, so each cell's items stay in id order. */
static bool grid_build(net_view_index *v, net_view_grid *g, const world *w,
                       const world_body_id *ids, size_t n, bool deltas) {
    if (!grid_reserve(g, n)) return false;
    if (deltas) {
        if (n * NET_VIEW_RECORD_MAX > v->arena_cap) {
            uint8_t *p = realloc(v->arena, n * NET_VIEW_RECORD_MAX);
            if (!p) return false;
            v->arena = p;
            v->arena_cap = n * NET_VIEW_RECORD_MAX;
        }
        v->arena_len = 0;
    }
    size_t ncells = (size_t)v->nx * (size_t)v->ny;
    memset(g->start, 0, (ncells + 1u) * sizeof *g->start);
    g->big_count = 0;
    vec2 reach = v2(0.0f, 0.0f);
    uint32_t staged = 0;
    for (size_t i = 0; i < n; i++) {
        world_body_info info;
        if (!world_body_get(w, ids[i], &info)) continue;
        net_view_item it;
        it.e.id = ids[i];
        it.e.changed_tick = info.changed_tick;
        it.e.delta_off = NET_VIEW_NO_DELTA;
        it.box = info.bounds;
        if (deltas && info.kind == WORLD_BODY_MOVING) {
            uint8_t *rec = v->arena + v->arena_len;
            size_t len = net_view_encode_delta(&info, rec + 2);
            rec[0] = 0x12; /* Snapshot.bodies, length-delimited */
            rec[1] = (uint8_t)len;
            it.e.delta_off = (uint32_t)v->arena_len;
            v->arena_len += len + 2u;
        }
        vec2 size = v2_sub(it.box.max, it.box.min);
        if (size.x > v->cell || size.y > v->cell) {
            /* Filing it under its min corner would make every query look a long way back. */
            if (!big_push(g, &it)) return false;
            continue;
        }
        if (size.x > reach.x) reach.x = size.x;
        if (size.y > reach.y) reach.y = size.y;
        int32_t cx = cell_coord(it.box.min.x, v->origin.x, v->inv_cell, v->nx);
        int32_t cy = cell_coord(it.box.min.y, v->origin.y, v->inv_cell, v->ny);
        uint32_t c = (uint32_t)cy * (uint32_t)v->nx + (uint32_t)cx;
        g->cell_of[staged] = c;
        g->start[c + 1u]++;
        g->stage[staged++] = it;
    }
    /* Rounding in max - min must not hide a body from a query that starts just past it. */
    g->reach = v2(reach.x * 1.001f + 1e-3f, reach.y * 1.001f + 1e-3f);
    for (size_t c = 0; c < ncells; c++)
        g->start[c + 1] += g->start[c];
    g->count = staged;
    for (uint32_t i = 0; i < staged; i++)
        g->items[g->start[g->cell_of[i]]++] = g->stage[i];
    for (size_t c = ncells; c > 0; c--)
        g->start[c] = g->start[c - 1];
    g->start[0] = 0;
    return true;
}

bool net_view_rebuild(net_view_index *v, const world *w) {
    const world_config *cfg = world_get_config(w);
    aabb all = aabb_inflate(cfg->bounds, 1.0f);
    if (v->statics_dirty) {
        size_t n = world_query_aabb(w, all, 1u << WORLD_BODY_STATIC, v->ids, v->ids_cap);
        if (n > v->ids_cap) n = v->ids_cap;
        sort_ids(v->ids, v->ids_tmp, n);
        if (!grid_build(v, &v->statics, w, v->ids, n, false)) return false;
        v->statics_dirty = false;
    }
    size_t n = world_query_aabb(w, all, 1u << WORLD_BODY_MOVING, v->ids, v->ids_cap);
    if (n > v->ids_cap) n = v->ids_cap;
    sort_ids(v->ids, v->ids_tmp, n);
    return grid_build(v, &v->movers, w, v->ids, n, true);
}

static inline bool overlaps(aabb a, aabb b) {
    return !(a.min.x > b.max.x || b.min.x > a.max.x || a.min.y > b.max.y || b.min.y > a.max.y);
}

static size_t grid_query(const net_view_index *v, const net_view_grid *g, aabb box,
                         net_view_entry *out, size_t max) {
    size_t n = 0;
    /* A body is filed under its min corner, at most reach before its max corner. */
    int32_t x0 = cell_coord(box.min.x - g->reach.x, v->origin.x, v->inv_cell, v->nx);
    int32_t y0 = cell_coord(box.min.y - g->reach.y, v->origin.y, v->inv_cell, v->ny);
    int32_t x1 = cell_coord(box.max.x, v->origin.x, v->inv_cell, v->nx);
    int32_t y1 = cell_coord(box.max.y, v->origin.y, v->inv_cell, v->ny);
    for (int32_t y = y0; y <= y1; y++) {
        size_t row = (size_t)y * (size_t)v->nx;
        /* The cells of one row are adjacent in items: one contiguous span per row. */
        const net_view_item *it = g->items + g->start[row + (size_t)x0];
        const net_view_item *end = g->items + g->start[row + (size_t)x1 + 1u];
        for (; it < end; it++) {
            if (!overlaps(it->box, box)) continue;
            if (n == max) return n;
            out[n++] = it->e;
        }
    }
    for (uint32_t i = 0; i < g->big_count; i++) {
        const net_view_item *it = &g->big[i];
        if (!overlaps(it->box, box)) continue;
        if (n == max) return n;
        out[n++] = it->e;
    }
    return n;
}

size_t net_view_query(const net_view_index *v, aabb box, net_view_entry *out, size_t max) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return 0;
    size_t n = grid_query(v, &v->statics, box, out, max);
    return n + grid_query(v, &v->movers, box, out + n, max - n);
}

/* Length of the ascending run starting at i. */
static size_t run_end(const net_view_entry *a, size_t i, size_t n) {
    size_t j = i + 1;
    while (j < n && a[j - 1].id <= a[j].id)
        j++;
    return j;
}

size_t net_view_sort_unique(net_view_entry *a, size_t n, net_view_entry *tmp) {
    if (n < 2) return n;
    /* Natural merge sort: a query yields one ascending run per cell row and grid, so a few passes
     * of pairwise run merges sort it; an already sorted list costs one scan. */
    net_view_entry *src = a, *dst = tmp;
    while (run_end(src, 0, n) < n) {
        size_t i = 0;
        while (i < n) {
            size_t m = run_end(src, i, n);
            size_t e = m < n ? run_end(src, m, n) : n;
            size_t p = i, q = m, o = i;
            while (p < m && q < e)
                dst[o++] = src[q].id < src[p].id ? src[q++] : src[p++];
            while (p < m)
                dst[o++] = src[p++];
            while (q < e)
                dst[o++] = src[q++];
            i = e;
        }
        net_view_entry *t = src;
        src = dst;
        dst = t;
    }
    size_t k = 1;
    for (size_t i = 1; i < n; i++) {
        if (src[i].id != src[k - 1].id) src[k++] = src[i];
    }
    if (src != a) memcpy(a, src, k * sizeof *a);
    return k;
}

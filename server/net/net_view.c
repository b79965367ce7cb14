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

static bool grow_u32(uint32_t **arr, uint32_t *cap, uint32_t need) {
    if (need <= *cap) return true;
    uint32_t n = *cap ? *cap : 64u;
    while (n < need)
        n *= 2u;
    uint32_t *p = realloc(*arr, (size_t)n * sizeof *p);
    if (!p) return false;
    *arr = p;
    *cap = n;
    return true;
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
    v->statics_dirty = true;
    return v->statics.start && v->movers.start && v->ids;
}

static void grid_free(net_view_grid *g) {
    free(g->bodies);
    free(g->start);
    free(g->items);
    free(g->big);
    memset(g, 0, sizeof *g);
}

void net_view_free(net_view_index *v) {
    grid_free(&v->statics);
    grid_free(&v->movers);
    free(v->ids);
    memset(v, 0, sizeof *v);
}

static void cell_range(const net_view_index *v, aabb b, int32_t *x0, int32_t *y0, int32_t *x1,
                       int32_t *y1) {
    *x0 = cell_coord(b.min.x, v->origin.x, v->inv_cell, v->nx);
    *y0 = cell_coord(b.min.y, v->origin.y, v->inv_cell, v->ny);
    *x1 = cell_coord(b.max.x, v->origin.x, v->inv_cell, v->nx);
    *y1 = cell_coord(b.max.y, v->origin.y, v->inv_cell, v->ny);
}

/* Counting sort of the bodies into cells (compressed rows): two passes, no per-body allocation. */
static bool grid_build(net_view_index *v, net_view_grid *g, const world *w,
                       const world_body_id *ids, size_t n) {
    if (n > g->body_cap) {
        net_view_item *p = realloc(g->bodies, n * sizeof *p);
        if (!p) return false;
        g->bodies = p;
        g->body_cap = (uint32_t)n;
    }
    g->body_count = 0;
    g->big_count = 0;
    size_t ncells = (size_t)v->nx * (size_t)v->ny;
    memset(g->start, 0, (ncells + 1u) * sizeof *g->start);
    uint32_t total = 0;
    for (size_t i = 0; i < n; i++) {
        world_body_info info;
        if (!world_body_get(w, ids[i], &info)) continue;
        uint32_t bi = g->body_count++;
        g->bodies[bi].id = ids[i];
        g->bodies[bi].box = info.bounds;
        g->bodies[bi].changed_tick = info.changed_tick;
        int32_t x0, y0, x1, y1;
        cell_range(v, info.bounds, &x0, &y0, &x1, &y1);
        g->bodies[bi].cx = x0;
        g->bodies[bi].cy = y0;
        g->bodies[bi].delta_len = info.kind == WORLD_BODY_MOVING
                                      ? (uint8_t)net_view_encode_delta(&info, g->bodies[bi].delta)
                                      : 0;
        uint64_t cells = (uint64_t)(x1 - x0 + 1) * (uint64_t)(y1 - y0 + 1);
        if (cells > NET_VIEW_BIG_CELLS) {
            if (!grow_u32(&g->big, &g->big_cap, g->big_count + 1u)) return false;
            g->big[g->big_count++] = bi;
            continue;
        }
        for (int32_t y = y0; y <= y1; y++)
            for (int32_t x = x0; x <= x1; x++)
                g->start[(size_t)y * (size_t)v->nx + (size_t)x + 1u]++;
        total += (uint32_t)cells;
    }
    for (size_t c = 0; c < ncells; c++)
        g->start[c + 1] += g->start[c];
    if (!grow_u32(&g->items, &g->item_cap, total)) return false;
    /* Fill: start[c] walks forward as items are placed, then is shifted back by one cell. */
    for (uint32_t bi = 0; bi < g->body_count; bi++) {
        int32_t x0, y0, x1, y1;
        cell_range(v, g->bodies[bi].box, &x0, &y0, &x1, &y1);
        if ((uint64_t)(x1 - x0 + 1) * (uint64_t)(y1 - y0 + 1) > NET_VIEW_BIG_CELLS) continue;
        for (int32_t y = y0; y <= y1; y++)
            for (int32_t x = x0; x <= x1; x++)
                g->items[g->start[(size_t)y * (size_t)v->nx + (size_t)x]++] = bi;
    }
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
        if (!grid_build(v, &v->statics, w, v->ids, n)) return false;
        v->statics_dirty = false;
    }
    size_t n = world_query_aabb(w, all, 1u << WORLD_BODY_MOVING, v->ids, v->ids_cap);
    if (n > v->ids_cap) n = v->ids_cap;
    return grid_build(v, &v->movers, w, v->ids, n);
}

static bool overlaps(aabb a, aabb b) {
    return !(a.min.x > b.max.x || b.min.x > a.max.x || a.min.y > b.max.y || b.min.y > a.max.y);
}

static size_t grid_query(const net_view_index *v, const net_view_grid *g, aabb box,
                         const net_view_item **out, size_t max) {
    size_t n = 0;
    int32_t x0, y0, x1, y1;
    cell_range(v, box, &x0, &y0, &x1, &y1);
    for (int32_t y = y0; y <= y1; y++)
        for (int32_t x = x0; x <= x1; x++) {
            size_t c = (size_t)y * (size_t)v->nx + (size_t)x;
            for (uint32_t i = g->start[c]; i < g->start[c + 1]; i++) {
                const net_view_item *it = &g->bodies[g->items[i]];
                if (!overlaps(it->box, box)) continue;
                /* Report from the first cell the body and the box share: once per body. */
                if ((it->cx > x0 ? it->cx : x0) != x || (it->cy > y0 ? it->cy : y0) != y) continue;
                if (n == max) return n;
                out[n++] = it;
            }
        }
    for (uint32_t i = 0; i < g->big_count; i++) {
        const net_view_item *it = &g->bodies[g->big[i]];
        if (!overlaps(it->box, box)) continue;
        if (n == max) return n;
        out[n++] = it;
    }
    return n;
}

size_t net_view_query(const net_view_index *v, aabb box, const net_view_item **out, size_t max) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return 0;
    size_t n = grid_query(v, &v->statics, box, out, max);
    return n + grid_query(v, &v->movers, box, out + n, max - n);
}

#include "net_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collide_assert.h"

static int32_t cell_coord(float x, float origin, float inv_cell, int32_t n) {
    float f = floorf((x - origin) * inv_cell);
    if (!(f >= 0.0f)) return 0; /* also NaN */
    if (f >= (float)(n - 1)) return n - 1;
    return (int32_t)f;
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
    v->stage_entries = malloc(v->ids_cap * sizeof *v->stage_entries);
    v->stage_boxes = malloc(v->ids_cap * sizeof *v->stage_boxes);
    v->statics_dirty = true;
    v->movers_dirty = true;
    return v->statics.start && v->movers.start && v->ids && v->ids_tmp && v->stage_entries &&
           v->stage_boxes;
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
    free(v->stage_entries);
    free(v->stage_boxes);
    free(v->mirror);
    free(v->mirror_box);
    free(v->mirror_next);
    free(v->mirror_box_next);
    free(v->mirror_pos);
    free(v->mirror_pos_next);
    free(v->ranked);
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

/* The world lists ids in ascending id order (world_query_aabb); the check costs one pass, and an
 * LSD radix sort (three 11-bit digits) would restore the order: the grid's runs depend on it. */
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

/* The capacity to grow an array of cap entries to for n: doubling from 64, so a steady load
 * stops allocating. */
static size_t grown_cap(size_t cap, size_t n) {
    if (cap == 0) cap = 64u;
    while (cap < n)
        cap *= 2u;
    return cap;
}

static bool grid_reserve(net_view_grid *g, size_t n) {
    if (n <= g->cap) return true;
    size_t cap = grown_cap(g->cap, n);
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

/* memcpy of n entries, none read when n is 0 (src may then be NULL) */
static void copy_run(void *dst, const void *src, size_t n, size_t size) {
    if (n) memcpy(dst, src, n * size);
}

/* Counting sort of the bodies (given in ascending id order) into the cells of their min corners;
 * their entries go to v->ranked from first_rank on, in the same id order. */
static bool grid_build(net_view_index *v, net_view_grid *g, const net_view_entry *entries,
                       const aabb *boxes, size_t n, uint32_t first_rank) {
    if (!grid_reserve(g, n)) return false;
    if (first_rank + n > v->ranked_cap) {
        size_t cap = first_rank + n;
        net_view_entry *p = realloc(v->ranked, cap * sizeof *p);
        if (!p) return false;
        v->ranked = p;
        v->ranked_cap = cap;
    }
    size_t ncells = (size_t)v->nx * (size_t)v->ny;
    memset(g->start, 0, (ncells + 1u) * sizeof *g->start);
    g->big_count = 0;
    g->first_rank = first_rank;
    if (n) memcpy(v->ranked + first_rank, entries, n * sizeof *entries); /* ranked: NULL if empty */
    vec2 reach = v2(0.0f, 0.0f);
    uint32_t staged = 0;
    for (size_t i = 0; i < n; i++) {
        net_view_item it;
        it.box = boxes[i];
        it.rank = first_rank + (uint32_t)i;
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
    g->ranks = (uint32_t)n;
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

/* Every body of the kind the world holds, ascending id, into v->ids; returns the count. */
static size_t query_all(net_view_index *v, const world *w, world_body_kind kind) {
    aabb all = aabb_inflate(world_get_config(w)->bounds, 1.0f);
    size_t n = world_query_aabb(w, all, 1u << kind, v->ids, v->ids_cap);
    if (n > v->ids_cap) n = v->ids_cap;
    sort_ids(v->ids, v->ids_tmp, n);
    return n;
}

static bool mirror_reserve(net_view_index *v, size_t n) {
    if (n <= v->mirror_cap) return true;
    size_t cap = grown_cap(v->mirror_cap, n);
    net_view_entry *e = realloc(v->mirror, cap * sizeof *e);
    if (e) v->mirror = e;
    aabb *b = realloc(v->mirror_box, cap * sizeof *b);
    if (b) v->mirror_box = b;
    net_view_entry *en = realloc(v->mirror_next, cap * sizeof *en);
    if (en) v->mirror_next = en;
    aabb *bn = realloc(v->mirror_box_next, cap * sizeof *bn);
    if (bn) v->mirror_box_next = bn;
    vec2 *p = realloc(v->mirror_pos, cap * sizeof *p);
    if (p) v->mirror_pos = p;
    vec2 *pn = realloc(v->mirror_pos_next, cap * sizeof *pn);
    if (pn) v->mirror_pos_next = pn;
    if (!e || !b || !en || !bn || !p || !pn) return false;
    v->mirror_cap = cap;
    return true;
}

/* The mirror's entry, box and position at index i of the arrays given (the mirror, or the one
 * being rewritten) for a mover's row: its handle recorded (kept when it had one). */
static void mirror_set(net_view_entry *e, aabb *box, vec2 *pos, size_t i, const world_body_row *r,
                       uint32_t handle, const net_view_movers_hook *hook) {
    e[i].id = r->id;
    e[i].changed_tick = r->changed_tick;
    e[i].delta_off = hook ? hook->record(hook->ctx, r, handle) : 0u;
    COLLIDE_ASSERT(e[i].delta_off != NET_VIEW_NO_DELTA);
    box[i] = r->bounds;
    pos[i] = r->position;
}

/* The mirror read anew from the whole world (the first update, or a step it did not see). */
static bool mirror_resync(net_view_index *v, const world *w, const net_view_movers_hook *hook) {
    v->synced = false;
    v->mirror_count = 0;
    if (hook) hook->clear(hook->ctx);
    size_t n = query_all(v, w, WORLD_BODY_MOVING);
    if (!mirror_reserve(v, n) || (hook && !hook->reserve(hook->ctx, n))) return false;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        world_body_row r;
        if (!world_body_get(w, v->ids[i], &r)) continue;
        mirror_set(v->mirror, v->mirror_box, v->mirror_pos, m, &r, NET_VIEW_NO_DELTA, hook);
        m++;
    }
    v->mirror_count = m;
    v->statics_dirty = true;
    v->movers_dirty = true;
    v->synced = true;
    return true;
}

/* n movers of the mirror from index `from` on, copied as they are to index `to` on of the mirror
 * being rewritten (mirror_next and its boxes and positions). */
static void mirror_copy_run(net_view_index *v, size_t to, size_t from, size_t n) {
    copy_run(v->mirror_next + to, v->mirror + from, n, sizeof *v->mirror);
    copy_run(v->mirror_box_next + to, v->mirror_box + from, n, sizeof *v->mirror_box);
    copy_run(v->mirror_pos_next + to, v->mirror_pos + from, n, sizeof *v->mirror_pos);
}

/* The mirror rewritten (count movers) becomes the mirror; the old one, the next scratch. */
static void mirror_swap(net_view_index *v, size_t count) {
    net_view_entry *e = v->mirror;
    aabb *box = v->mirror_box;
    vec2 *pos = v->mirror_pos;
    v->mirror = v->mirror_next;
    v->mirror_box = v->mirror_box_next;
    v->mirror_pos = v->mirror_pos_next;
    v->mirror_next = e;
    v->mirror_box_next = box;
    v->mirror_pos_next = pos;
    v->mirror_count = count;
}

/* One step's rows applied to the mirror: a merge of two id-ordered lists. False when a row
 * contradicts the mirror (then the caller reads the whole world) or memory runs out. */
static bool mirror_apply(net_view_index *v, const world_body_row *rows, size_t nrows,
                         const net_view_movers_hook *hook) {
    size_t inserts = 0, removals = 0, movers = 0;
    for (size_t k = 0; k < nrows; k++) {
        const world_body_row *r = &rows[k];
        if (r->kind == WORLD_BODY_STATIC) {
            if (r->flags & (WORLD_ROW_SPAWNED | WORLD_ROW_DESPAWNED)) v->statics_dirty = true;
            continue;
        }
        movers++;
        if (r->flags & WORLD_ROW_DESPAWNED)
            removals++;
        else if (r->flags & WORLD_ROW_SPAWNED)
            inserts++;
    }
    if (movers == 0) return true;
    v->movers_dirty = true;
    net_view_entry *mir = v->mirror;
    aabb *box = v->mirror_box;
    vec2 *pos = v->mirror_pos;
    size_t count = v->mirror_count, i = 0;
    if (inserts == 0 && removals == 0) {
        /* Changes only: updated in place. */
        for (size_t k = 0; k < nrows; k++) {
            const world_body_row *r = &rows[k];
            if (r->kind != WORLD_BODY_MOVING) continue;
            while (i < count && mir[i].id < r->id)
                i++;
            if (i == count || mir[i].id != r->id) return false;
            mirror_set(mir, box, pos, i, r, mir[i].delta_off, hook);
            i++;
        }
        return true;
    }
    if (!mirror_reserve(v, count + inserts) || (hook && !hook->reserve(hook->ctx, count + inserts)))
        return false;
    mir = v->mirror;
    net_view_entry *out = v->mirror_next;
    aabb *out_box = v->mirror_box_next;
    vec2 *out_pos = v->mirror_pos_next;
    size_t o = 0;
    for (size_t k = 0; k < nrows; k++) {
        const world_body_row *r = &rows[k];
        if (r->kind != WORLD_BODY_MOVING) continue;
        size_t run = i;
        while (i < count && mir[i].id < r->id)
            i++;
        mirror_copy_run(v, o, run, i - run); /* unchanged movers between rows */
        o += i - run;
        bool known = i < count && mir[i].id == r->id;
        if (r->flags & WORLD_ROW_DESPAWNED) {
            if (!known) return false;
            if (hook) hook->release(hook->ctx, mir[i].delta_off);
            i++;
        } else if (known) {
            if (r->flags & WORLD_ROW_SPAWNED) return false;
            mirror_set(out, out_box, out_pos, o, r, mir[i].delta_off, hook);
            o++;
            i++;
        } else {
            if (!(r->flags & WORLD_ROW_SPAWNED)) return false;
            mirror_set(out, out_box, out_pos, o, r, NET_VIEW_NO_DELTA, hook);
            o++;
        }
    }
    mirror_copy_run(v, o, i, count - i);
    mirror_swap(v, o + (count - i));
    return true;
}

bool net_view_update(net_view_index *v, const world *w, const net_view_movers_hook *hook) {
    uint64_t tick = world_tick(w);
    if (v->synced && v->tick == tick) return true;
    bool ok;
    if (v->synced && v->tick + 1u == tick) {
        const world_body_row *rows;
        size_t n = world_body_table(w, &rows);
        ok = rows && mirror_apply(v, rows, n, hook);
        /* A contradiction (or a failed allocation half way): the whole world again. */
        if (!ok) ok = mirror_resync(v, w, hook);
    } else {
        ok = mirror_resync(v, w, hook);
    }
    v->tick = tick;
    if (!ok) v->synced = false;
    return ok;
}

bool net_view_rebuild(net_view_index *v, const world *w, const net_view_movers_hook *hook) {
    if (!net_view_update(v, w, hook)) return false;
    if (v->statics_dirty) {
        size_t n = query_all(v, w, WORLD_BODY_STATIC), m = 0;
        for (size_t i = 0; i < n; i++) {
            world_body_row info;
            if (!world_body_get(w, v->ids[i], &info)) continue;
            v->stage_entries[m].id = info.id;
            v->stage_entries[m].delta_off = NET_VIEW_NO_DELTA;
            v->stage_entries[m].changed_tick = info.changed_tick;
            v->stage_boxes[m++] = info.bounds;
        }
        if (!grid_build(v, &v->statics, v->stage_entries, v->stage_boxes, m, 0)) return false;
        v->statics_dirty = false;
        v->statics_gen++;
        v->movers_dirty = true; /* the movers' first rank moved */
    }
    if (v->movers_dirty) {
        if (!grid_build(v, &v->movers, v->mirror, v->mirror_box, v->mirror_count, v->statics.ranks))
            return false;
        v->movers_dirty = false;
    }
    return true;
}

bool net_view_mover_position(const net_view_index *v, world_body_id id, vec2 *position) {
    const net_view_entry *mir = v->mirror;
    size_t lo = 0, hi = v->mirror_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if (mir[mid].id < id)
            lo = mid + 1u;
        else
            hi = mid;
    }
    if (lo == v->mirror_count || mir[lo].id != id) return false;
    *position = v->mirror_pos[lo];
    return true;
}

bool net_view_marks_init(net_view_marks *m, const world *w) {
    world_stats st;
    world_get_stats(w, &st);
    m->words = (st.capacity + 63u) / 64u + 1u;
    m->bits = calloc(m->words, sizeof *m->bits);
    m->lo = m->words;
    m->hi = 0;
    m->taken = 0;
    return m->bits != NULL;
}

void net_view_marks_free(net_view_marks *m) {
    free(m->bits);
    memset(m, 0, sizeof *m);
}

/* Sets the bits of the items that overlap box: no branch per item, whether in view or not. */
static void mark_items(const net_view_item *it, const net_view_item *end, aabb box,
                       uint64_t *bits) {
    for (; it < end; it++) {
        uint64_t in = (uint64_t)((it->box.min.x <= box.max.x) & (box.min.x <= it->box.max.x) &
                                 (it->box.min.y <= box.max.y) & (box.min.y <= it->box.max.y));
        bits[it->rank >> 6] |= in << (it->rank & 63u);
    }
}

static void grid_mark(const net_view_index *v, const net_view_grid *g, aabb box,
                      net_view_marks *m) {
    if (g->ranks == 0) return;
    /* A body is filed under its min corner, at most reach before its max corner. */
    int32_t x0 = cell_coord(box.min.x - g->reach.x, v->origin.x, v->inv_cell, v->nx);
    int32_t y0 = cell_coord(box.min.y - g->reach.y, v->origin.y, v->inv_cell, v->ny);
    int32_t x1 = cell_coord(box.max.x, v->origin.x, v->inv_cell, v->nx);
    int32_t y1 = cell_coord(box.max.y, v->origin.y, v->inv_cell, v->ny);
    for (int32_t y = y0; y <= y1; y++) {
        size_t row = (size_t)y * (size_t)v->nx;
        /* The cells of one row are adjacent in items: one contiguous span per row. */
        mark_items(g->items + g->start[row + (size_t)x0],
                   g->items + g->start[row + (size_t)x1 + 1u], box, m->bits);
    }
    if (g->big_count) /* g->big may be NULL: no pointer arithmetic on it then */
        mark_items(g->big, g->big + g->big_count, box, m->bits);
    /* The take scans this grid's whole span of words: cheaper than tracking the touched words
     * per item in the loop above (measured), and the span is one bit per body. */
    size_t lo = g->first_rank / 64u, hi = (g->first_rank + g->ranks + 63u) / 64u;
    if (lo < m->lo) m->lo = lo;
    if (hi > m->hi) m->hi = hi;
}

void net_view_mark(const net_view_index *v, aabb box, net_view_marks *m) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return;
    grid_mark(v, &v->statics, box, m);
    grid_mark(v, &v->movers, box, m);
}

void net_view_mark_movers(const net_view_index *v, aabb box, net_view_marks *m) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return;
    grid_mark(v, &v->movers, box, m);
}

size_t net_view_take(const net_view_index *v, net_view_marks *m, net_view_entry *out, size_t max) {
    size_t n = 0;
    for (size_t w = m->lo; w < m->hi; w++) {
        uint64_t bits = m->bits[w];
        m->bits[w] = 0;
        while (bits && n < max) {
            size_t rank = w * 64u + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1u;
            out[n++] = v->ranked[rank];
        }
    }
    m->lo = m->words;
    m->hi = 0;
    m->taken += n;
    return n;
}

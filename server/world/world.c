/* world: bodies, the static grid, the mover grid, the tick (COLLISION.md), change tracking.
 *
 * Layout, and why:
 *   - Statics are stored once, compactly (44 bytes), in a multi-level grid: a static lives in the
 *     one cell holding its AABB min corner, at the level whose cells are at least its size. A
 *     query reaches back `extra` cells on the min side. No per-cell entry pool to run out of, and
 *     a 1x1 tile on a cell-1 grid costs one list link.
 *   - A sweep walks its path in chunks of one cell length (a DDA over the swept footprint), and
 *     stops as soon as the best hit lies before the next chunk; cells already seen in the previous
 *     chunk are skipped. Fast bodies therefore visit only cells along their path.
 *   - A short move (under a cell) gathers its few statics once for all its slide iterations.
 *   - Boxes (the common case) take an AABB fast path; every other pair goes through geom.
 *   - Movers that collide: a spatial hash (row-major cell numbering, counting-sort rebuild each
 *     tick, dense mover indices) over each mover's expected path. Each mover then slides once,
 *     in order, against statics, bounds and the movers near its path: those already moved stand
 *     where they ended, the others move along their expected displacement, so two bodies meeting
 *     head-on meet in the middle whatever their order (relative motion, I7). Expected path: a
 *     slow mover's intent if new, else its last achieved velocity; a fast mover's slide against
 *     statics alone (kept as its result unless a neighbour is in its way).
 *   - A discrete pass then separates what still overlaps (pairs from the mover pass), pushing
 *     with collide-and-slide against statics so a push never goes through one (I2); what cannot
 *     be separated in the allotted passes is pinned, and is reported as jammed (I3).
 *   - Movers are re-sorted by space every few ticks (stable counting sort): neighbours in space
 *     are neighbours in memory, which keeps every walk over them cache-friendly.
 *   - Everything is float32 and processed in a deterministic order (I6). */
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

/* Query boxes grow by this so contacts at exactly a cell border or within the skin are seen. */
#define WORLD_QUERY_MARGIN (4.0f * GEOM_SKIN)
#define WORLD_NO_HIT 2.0f
/* Mover pairs closer than this are checked by the discrete pass (pushes move bodies a little). */
#define WORLD_PAIR_MARGIN 0.05f
/* Ticks between spatial re-sorts of the mover array. */
#define WORLD_SORT_INTERVAL 16
/* The discrete pass's grid holds each box grown by this, so small pushes keep bodies findable. */
#define WORLD_PUSH_ALLOWANCE 0.1f
#define WORLD_PUSHED_NOW 1u     /* pushed in the current pass */
#define WORLD_PUSHED_ESCAPED 2u /* moved out of its grid box: on the unindexed list */
/* More bodies than this off the grid and it is rebuilt. */
#define WORLD_MAX_UNINDEXED 64u
/* Movers off their expected path that later movers check by hand, per tick (more wait for the
 * discrete pass). */
#define WORLD_MAX_LATE 256u

const char *world_status_str(world_status status) {
    switch (status) {
    case WORLD_OK:
        return "ok";
    case WORLD_STALE_INPUT:
        return "stale input sequence";
    case WORLD_ERR_INVALID_SHAPE:
        return "invalid shape";
    case WORLD_ERR_OUT_OF_BOUNDS:
        return "outside the world bounds";
    case WORLD_ERR_FULL:
        return "world is full";
    case WORLD_ERR_NOT_FOUND:
        return "unknown or stale body id";
    case WORLD_ERR_NOT_FINITE:
        return "non-finite value";
    case WORLD_ERR_NOT_MOVING:
        return "body is not moving";
    }
    return "unknown status";
}

void world_config_default(world_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->bounds = aabb_make(v2(-500.0f, -500.0f), v2(500.0f, 500.0f));
    cfg->tick_rate_hz = 60.0f;
    cfg->max_speed = 10000.0f;
    cfg->max_bodies = 65536;
    cfg->cell_size = 0.0f;
    cfg->slide_iterations = 4;
    cfg->separation_passes = 8;
    cfg->max_shape_size = 1000.0f;
    cfg->max_moving_bodies = 0;
}

/* ---- small helpers ------------------------------------------------------------------------ */

/* Small functions of the per-body loop: inlined whatever the compiler's budget says. */
#if defined(__GNUC__)
#define WORLD_HOT static inline __attribute__((always_inline))
#else
#define WORLD_HOT static inline
#endif

/* Plain compares: fminf/fmaxf carry NaN rules that make gcc call libm; our inputs are finite. */
static inline float wmin(float a, float b) { return a < b ? a : b; }
static inline float wmax(float a, float b) { return a > b ? a : b; }
/* ceil to int without a libm call (no SSE4.1 roundss at the baseline ISA). */
static inline int32_t iceil(float f) {
    int32_t i = (int32_t)f;
    return i + (f > (float)i);
}

static inline uint32_t ref_kind(uint32_t ref) { return ref >> WORLD_REF_KIND_SHIFT; }
static inline uint32_t ref_index(uint32_t ref) { return ref & WORLD_REF_INDEX_MASK; }
static inline aabb box_at(vec2 p, vec2 lo, vec2 hi) {
    return aabb_make(v2_add(p, lo), v2_add(p, hi));
}
static inline bool vec_eq(vec2 a, vec2 b) { return memcmp(&a, &b, sizeof a) == 0; }

static inline world_body_id make_id(const world *w, uint32_t slot, uint32_t gen) {
    return (slot << w->gen_bits) | gen;
}

/* The slot of a live id, or UINT32_MAX. */
static uint32_t id_slot(const world *w, world_body_id id) {
    uint32_t gen = id & w->gen_max;
    uint32_t slot = (uint32_t)((uint64_t)id >> w->gen_bits);
    if (gen == 0 || slot >= w->capacity) return UINT32_MAX;
    const world_slot *s = &w->slots[slot];
    if (s->kind == 0 || s->gen != gen) return UINT32_MAX;
    return slot;
}

static inline world_body_id slot_id(const world *w, uint32_t slot) {
    return make_id(w, slot, w->slots[slot].gen);
}

/* Builds a geom_shape for a reference; boxes and circles into tmp, polygons from the pool. */
static const geom_shape *ref_shape(const world *w, uint32_t ref, vec2 hi, geom_shape *tmp) {
    switch (ref_kind(ref)) {
    case GEOM_SHAPE_BOX:
        tmp->kind = GEOM_SHAPE_BOX;
        tmp->u.half_extents = hi;
        return tmp;
    case GEOM_SHAPE_CIRCLE:
        tmp->kind = GEOM_SHAPE_CIRCLE;
        tmp->u.radius = hi.x;
        return tmp;
    default:
        return &w->polys[ref_index(ref)];
    }
}

static inline vec2 static_hi(const world_static *s) { return v2_sub(s->box.max, s->position); }

/* ---- box fast paths (must agree with geom's conventions) --------------------------------- */

/* Sweep of box a by d against a fixed box b (relative frame); normal from a towards b. The same
 * rules as geom_box_box_sweep (geom_box.h): starting within GEOM_LINEAR_SLOP, the MTV axis is
 * the one with the smaller penetration, ties going to y (a box touching a floor of tiles exactly
 * at a seam slides on instead of catching on the next tile's side, I4). Specialised for the
 * world's loops: boxes as AABBs (no centre/half conversion) and inv, the reciprocal of d per
 * axis (0 where d is 0), computed once per slide iteration for every box it tests, so the slab
 * test multiplies instead of dividing; geom's version is ~20% more instructions on S1. */
WORLD_HOT bool box_sweep(aabb a, vec2 d, vec2 inv, aabb b, geom_toi *out) {
    float px = wmin(a.max.x - b.min.x, b.max.x - a.min.x);
    float py = wmin(a.max.y - b.min.y, b.max.y - a.min.y);
    if (px > -GEOM_LINEAR_SLOP && py > -GEOM_LINEAR_SLOP) {
        /* Starting in contact. At most touching along an axis the motion does not close along:
         * never a hit (geom's rule; a box resting on tiles slides past their seams). Else stop
         * only if the motion goes further in along the MTV axis. */
        float dcx = (b.min.x + b.max.x) - (a.min.x + a.max.x);
        float dcy = (b.min.y + b.max.y) - (a.min.y + a.max.y);
        if ((px < GEOM_LINEAR_SLOP && !(d.x * dcx > 0.0f)) ||
            (py < GEOM_LINEAR_SLOP && !(d.y * dcy > 0.0f)))
            return false;
        vec2 n =
            px < py ? v2(dcx >= 0.0f ? 1.0f : -1.0f, 0.0f) : v2(0.0f, dcy >= 0.0f ? 1.0f : -1.0f);
        if (v2_dot(d, n) > 0.0f) {
            out->t = 0.0f;
            out->normal = n;
            return true;
        }
        return false;
    }
    float t_enter = -1.0f, t_exit = 2.0f;
    vec2 n = v2(0.0f, 0.0f);
    if (d.x > 0.0f) {
        float te = (b.min.x - a.max.x) * inv.x, tx = (b.max.x - a.min.x) * inv.x;
        if (te > t_enter) t_enter = te, n = v2(1.0f, 0.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (d.x < 0.0f) {
        float te = (b.max.x - a.min.x) * inv.x, tx = (b.min.x - a.max.x) * inv.x;
        if (te > t_enter) t_enter = te, n = v2(-1.0f, 0.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (px <= 0.0f) {
        return false;
    }
    if (d.y > 0.0f) {
        float te = (b.min.y - a.max.y) * inv.y, tx = (b.max.y - a.min.y) * inv.y;
        if (te > t_enter) t_enter = te, n = v2(0.0f, 1.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (d.y < 0.0f) {
        float te = (b.max.y - a.min.y) * inv.y, tx = (b.min.y - a.max.y) * inv.y;
        if (te > t_enter) t_enter = te, n = v2(0.0f, -1.0f);
        if (tx < t_exit) t_exit = tx;
    } else if (py <= 0.0f) {
        return false;
    }
    if (!(t_enter < t_exit) || t_enter > 1.0f || t_enter < 0.0f) return false;
    out->t = t_enter;
    out->normal = n;
    return true;
}

static inline vec2 recip(vec2 d) {
    return v2(d.x != 0.0f ? 1.0f / d.x : 0.0f, d.y != 0.0f ? 1.0f / d.y : 0.0f);
}

/* A body as the narrow phase needs it. */
typedef struct body_view {
    uint32_t ref; /* shape reference */
    vec2 pos;     /* position */
    vec2 lo, hi;  /* AABB offsets */
} body_view;

static bool pair_sweep(const world *w, const body_view *a, vec2 da, const body_view *b, vec2 db,
                       geom_toi *out) {
    if (ref_kind(a->ref) == GEOM_SHAPE_BOX && ref_kind(b->ref) == GEOM_SHAPE_BOX)
        return box_sweep(box_at(a->pos, a->lo, a->hi), v2_sub(da, db), recip(v2_sub(da, db)),
                         box_at(b->pos, b->lo, b->hi), out);
    geom_shape ta, tb;
    const geom_shape *sa = ref_shape(w, a->ref, a->hi, &ta);
    const geom_shape *sb = ref_shape(w, b->ref, b->hi, &tb);
    return geom_sweep(sa, a->pos, da, sb, b->pos, db, out);
}

static bool pair_overlap(const world *w, const body_view *a, const body_view *b,
                         geom_contact *out) {
    if (ref_kind(a->ref) == GEOM_SHAPE_BOX && ref_kind(b->ref) == GEOM_SHAPE_BOX)
        return geom_box_box_overlap(a->hi, a->pos, b->hi, b->pos, out);
    geom_shape ta, tb;
    const geom_shape *sa = ref_shape(w, a->ref, a->hi, &ta);
    const geom_shape *sb = ref_shape(w, b->ref, b->hi, &tb);
    return geom_overlap(sa, a->pos, sb, b->pos, out);
}

static inline body_view static_view(const world_static *s) {
    body_view v = {s->shape, s->position, v2_sub(s->box.min, s->position), static_hi(s)};
    return v;
}
static inline body_view mover_view(const world_mover *m, vec2 pos) {
    body_view v = {m->shape, pos, m->lo, m->hi};
    return v;
}

/* ---- static grid ----------------------------------------------------------------------------- */

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

static int level_for_size(const world *w, float size) {
    int l = 0;
    while (l + 1 < w->level_count && w->levels[l].cell < size)
        l++;
    return l;
}

/* The levels that hold statics: the loops skip the empty ones without looking. */
static void update_active_levels(world *w) {
    w->active_level_count = 0;
    for (int l = 0; l < w->level_count; l++)
        if (w->levels[l].count) w->active_levels[w->active_level_count++] = l;
    w->statics_in_finest =
        w->active_level_count == 0 || (w->active_level_count == 1 && w->active_levels[0] == 0);
}

static void static_link(world *w, uint32_t index) {
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
    w->near_cache_stale = true;
    if (lv->count++ == 0) update_active_levels(w);
}

/* Replaces the link that points at `from` with `to` (-1 unlinks when to == next). */
static void static_relink(world *w, uint32_t from, int32_t to) {
    world_static *s = &w->statics[from];
    world_level *lv = &w->levels[s->level];
    vec2 o = w->cfg.bounds.min;
    int32_t hx = level_cell(s->box.min.x, o.x, lv->inv_cell, lv->nx);
    int32_t hy = level_cell(s->box.min.y, o.y, lv->inv_cell, lv->ny);
    int32_t cell = hy * lv->nx + hx;
    int32_t *link = &lv->heads[cell];
    while (*link != (int32_t)from)
        link = &w->statics[*link].next;
    *link = to;
    w->near_cache_stale = true; /* indices move, lists change */
    if (lv->heads[cell] < 0) lv->occupied[cell >> 6] &= ~(1ull << (cell & 63));
}

/* Calls visit for every static whose AABB overlaps box (inclusive of touching), each once. */
typedef bool (*static_visit_fn)(const world *w, uint32_t index, void *ctx);
static void static_query(const world *w, aabb box, static_visit_fn visit, void *ctx) {
    for (int al = 0; al < w->active_level_count; al++) {
        const world_level *lv = &w->levels[w->active_levels[al]];
        cell_range cr = level_range(w, lv, box);
        int32_t x0 = cr.x0, y0 = cr.y0, x1 = cr.x1, y1 = cr.y1;
        for (int32_t cy = y0; cy <= y1; cy++)
            for (int32_t cx = x0; cx <= x1; cx++)
                for (int32_t s = lv->heads[cy * lv->nx + cx]; s >= 0; s = w->statics[s].next) {
                    const aabb *b = &w->statics[s].box;
                    if (b->min.x > box.max.x || box.min.x > b->max.x || b->min.y > box.max.y ||
                        box.min.y > b->max.y)
                        continue;
                    if (!visit(w, (uint32_t)s, ctx)) return;
                }
    }
}

/* The best hit of one sweep. */
typedef struct sweep_hit {
    float t;      /* fraction of the displacement; WORLD_NO_HIT when nothing */
    vec2 normal;  /* from the body towards what it hit */
    vec2 other_d; /* the other body's displacement over the remaining time (movers) */
} sweep_hit;

WORLD_HOT void hit_offer(sweep_hit *best, const geom_toi *toi, vec2 other_d) {
    if (toi->t < best->t) {
        best->t = toi->t;
        best->normal = toi->normal;
        best->other_d = other_d;
    }
}

/* Sweeps body a (at a->pos, AABB box) by r against every static, walking each level's cells
 * along the path chunk by chunk; keeps the earliest hit in best. */
static void sweep_statics(const world *w, const body_view *a, aabb box, vec2 r, sweep_hit *best) {
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
            int32_t x0 = cr.x0, y0 = cr.y0, x1 = cr.x1, y1 = cr.y1;
            for (int32_t cy = y0; cy <= y1; cy++) {
                bool row_seen = cy >= py0 && cy <= py1;
                const int32_t *row = &lv->heads[cy * lv->nx];
                for (int32_t cx = x0; cx <= x1; cx++) {
                    if (row_seen && cx >= px0 && cx <= px1) continue;
                    for (int32_t s = row[cx]; s >= 0;) {
                        const world_static *st = &w->statics[s];
                        s = st->next;
                        if (!aabb_overlaps(swept, st->box)) continue;
                        geom_toi toi;
                        bool hit;
                        if (a_box && ref_kind(st->shape) == GEOM_SHAPE_BOX) {
                            hit = box_sweep(box, r, inv, st->box, &toi);
                        } else {
                            body_view b = static_view(st);
                            hit = pair_sweep(w, a, r, &b, v2(0.0f, 0.0f), &toi);
                        }
                        if (hit) hit_offer(best, &toi, v2(0.0f, 0.0f));
                    }
                }
            }
            px0 = x0, px1 = x1, py0 = y0, py1 = y1;
        }
    }
}

/* The bounds as four walls: the AABB must stay inside. A motion that would end within half a skin
 * of a wall counts as reaching it, so the stop keeps a gap and rounding (position + offset) never
 * puts a box an ulp outside. */
WORLD_HOT void sweep_bounds(const world *w, aabb box, vec2 r, sweep_hit *best) {
    const aabb *b = &w->cfg.bounds;
    const float near = 0.5f * GEOM_SKIN;
    geom_toi toi;
    if (r.x > 0.0f && box.max.x + r.x > b->max.x - near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->max.x - box.max.x) / r.x)), toi.normal = v2(1.0f, 0.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f));
    } else if (r.x < 0.0f && box.min.x + r.x < b->min.x + near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->min.x - box.min.x) / r.x)), toi.normal = v2(-1.0f, 0.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f));
    }
    if (r.y > 0.0f && box.max.y + r.y > b->max.y - near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->max.y - box.max.y) / r.y)), toi.normal = v2(0.0f, 1.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f));
    } else if (r.y < 0.0f && box.min.y + r.y < b->min.y + near) {
        toi.t = wmin(1.0f, wmax(0.0f, (b->min.y - box.min.y) / r.y)), toi.normal = v2(0.0f, -1.0f);
        hit_offer(best, &toi, v2(0.0f, 0.0f));
    }
}

/* ---- mover grid ------------------------------------------------------------------------------ */

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
static void grid_build(const world *w, world_grid *g, const aabb *boxes) {
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
typedef bool (*mover_visit_fn)(const world *w, uint32_t index, void *ctx);
static void grid_query(const world *w, const world_grid *g, aabb box, mover_visit_fn visit,
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
                if (b->min.x > box.max.x || box.min.x > b->max.x || b->min.y > box.max.y ||
                    box.min.y > b->max.y)
                    continue;
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
                    if (b->min.x > box.max.x || box.min.x > b->max.x || b->min.y > box.max.y ||
                        box.min.y > b->max.y)
                        continue;
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
static void grid_build_current(const world *w, float allowance) {
    world_grid *g = &w->cache->grid;
    aabb *boxes = w->path; /* scratch: free outside the mover pass */
    for (uint32_t i = 0; i < w->mover_count; i++) {
        const world_mover *m = &w->movers[i];
        boxes[i] = aabb_inflate(box_at(m->position, m->lo, m->hi), allowance);
    }
    grid_build(w, g, boxes);
}

/* ---- create / destroy ------------------------------------------------------------------------ */

static void *world_alloc(world *w, size_t count, size_t size) {
    if (count == 0) count = 1;
    void *p = calloc(count, size);
    if (p) w->bytes += count * size;
    return p;
}

world *world_create(const world_config *cfg_in) {
    world_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        world_config_default(&cfg);
    aabb b = cfg.bounds;
    if (!v2_is_finite(b.min) || !v2_is_finite(b.max) || !(b.min.x < b.max.x) ||
        !(b.min.y < b.max.y))
        return NULL;
    if (!(cfg.tick_rate_hz > 0.0f) || !isfinite(cfg.tick_rate_hz) || !(cfg.max_speed > 0.0f) ||
        !isfinite(cfg.max_speed))
        return NULL;
    if (cfg.max_bodies == 0 || cfg.max_bodies > (1u << 24)) return NULL;
    if (!(cfg.cell_size >= 0.0f) || !isfinite(cfg.cell_size)) return NULL;
    if (cfg.slide_iterations <= 0) cfg.slide_iterations = 4;
    if (cfg.slide_iterations > 16) cfg.slide_iterations = 16;
    if (cfg.separation_passes < 0) cfg.separation_passes = 0;
    if (cfg.separation_passes > 16) cfg.separation_passes = 16;
    if (!(cfg.max_shape_size > 0.0f) || !isfinite(cfg.max_shape_size)) cfg.max_shape_size = 1000.0f;
    if (cfg.max_shape_size > GEOM_MAX_SIZE) cfg.max_shape_size = GEOM_MAX_SIZE;

    world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->bytes = sizeof *w;
    w->cfg = cfg;
    w->dt = 1.0f / cfg.tick_rate_hz;
    w->inner_bounds = aabb_inflate(cfg.bounds, -GEOM_SKIN);
    w->capacity = cfg.max_bodies;
    w->movers_collide = true;
    w->statics_in_finest = true;
    uint32_t slot_bits = 1;
    while (slot_bits < 24 && (1u << slot_bits) < cfg.max_bodies)
        slot_bits++;
    w->gen_bits = 32 - slot_bits;
    w->gen_max = (uint32_t)((1ull << w->gen_bits) - 1u);

    uint32_t cap = w->capacity;
    /* Polygons need a pool entry; boxes and circles do not. A quarter of the bodies, at least 64.
     */
    /* Movers may be fewer than the bodies (a map of statics): their arrays are sized apart. */
    uint32_t mcap =
        cfg.max_moving_bodies == 0 || cfg.max_moving_bodies > cap ? cap : cfg.max_moving_bodies;
    w->mover_cap = mcap;
    w->poly_cap = cap / 16 < 256 ? 256 : cap / 16;
    w->slots = world_alloc(w, cap, sizeof *w->slots);
    w->free_slots = world_alloc(w, cap, sizeof *w->free_slots);
    w->statics = world_alloc(w, cap, sizeof *w->statics);
    w->movers = world_alloc(w, mcap, sizeof *w->movers);
    w->polys = world_alloc(w, w->poly_cap, sizeof *w->polys);
    w->free_polys = world_alloc(w, w->poly_cap, sizeof *w->free_polys);
    w->p0 = world_alloc(w, mcap, sizeof *w->p0);
    w->d1 = world_alloc(w, mcap, sizeof *w->d1);
    w->path = world_alloc(w, mcap, sizeof *w->path);
    w->p2 = world_alloc(w, mcap, sizeof *w->p2);
    w->near_cache = world_alloc(w, mcap, sizeof *w->near_cache);
    w->near_cache_stale = true;
    size_t words = (cap + 63) / 64;
    w->moved_bits = world_alloc(w, words, sizeof *w->moved_bits);
    w->spawn_bits = world_alloc(w, words, sizeof *w->spawn_bits);
    w->moved = world_alloc(w, mcap, sizeof *w->moved);
    w->spawned = world_alloc(w, cap, sizeof *w->spawned);
    w->despawned = world_alloc(w, cap, sizeof *w->despawned);
    w->pending_despawned = world_alloc(w, cap, sizeof *w->pending_despawned);
    w->pending_spawned = world_alloc(w, cap, sizeof *w->pending_spawned);
    w->cache = world_alloc(w, 1, sizeof *w->cache);
    w->pair_cap = 4 * mcap;
    w->pairs = world_alloc(w, w->pair_cap, sizeof *w->pairs);
    w->adj = world_alloc(w, 2 * (size_t)w->pair_cap, sizeof *w->adj);
    w->adj_start = world_alloc(w, (size_t)mcap + 1, sizeof *w->adj_start);
    w->pushed = world_alloc(w, mcap, sizeof *w->pushed);
    w->sort_tile_cap = mcap + 1024;
    w->sort_counts = world_alloc(w, w->sort_tile_cap + 1, sizeof *w->sort_counts);
    bool ok = w->slots && w->free_slots && w->statics && w->movers && w->polys && w->free_polys &&
              w->p0 && w->d1 && w->path && w->p2 && w->near_cache && w->moved_bits &&
              w->spawn_bits && w->moved && w->spawned && w->despawned && w->pending_despawned &&
              w->pending_spawned && w->cache && w->pairs && w->adj && w->adj_start &&
              w->sort_counts && w->pushed;
    if (ok) {
        world_grid *g = &w->cache->grid;
        g->table_cap = 64;
        while (g->table_cap < 2 * mcap)
            g->table_cap <<= 1;
        g->item_cap = 4 * mcap + 1024;
        g->start = world_alloc(w, g->table_cap + 1, sizeof *g->start);
        g->items = world_alloc(w, g->item_cap, sizeof *g->items);
        g->big = world_alloc(w, mcap, sizeof *g->big);
        g->ranges = world_alloc(w, mcap, sizeof *g->ranges);
        g->unindexed = world_alloc(w, mcap, sizeof *g->unindexed);
        w->cache->result_cap = cap + 2 * mcap;
        w->cache->results = world_alloc(w, w->cache->result_cap, sizeof *w->cache->results);
        ok = g->start && g->items && g->big && g->ranges && g->unindexed && w->cache->results;
    }
    /* Static grid levels: finest cell = cell_size, or the power of two from 1 up that keeps the
     * finest level within 4 cells per body slot; then doubling up to twice the largest shape. */
    vec2 ext = v2_sub(b.max, b.min);
    float cell = cfg.cell_size;
    if (cell <= 0.0f) {
        cell = 1.0f;
        double limit = 4.0 * (double)cap + 4096.0;
        while (((double)ext.x / cell + 1.0) * ((double)ext.y / cell + 1.0) > limit)
            cell *= 2.0f;
    }
    while (ok && w->level_count < WORLD_MAX_LEVELS) {
        double nx = ceil((double)ext.x / cell) + 1.0, ny = ceil((double)ext.y / cell) + 1.0;
        if (nx * ny > (double)(1u << 26)) {
            /* too fine for memory: this cell size is not usable, try twice as coarse */
            cell *= 2.0f;
            continue;
        }
        world_level *lv = &w->levels[w->level_count++];
        lv->cell = cell;
        lv->inv_cell = 1.0f / cell;
        lv->nx = (int32_t)nx;
        lv->ny = (int32_t)ny;
        lv->heads = world_alloc(w, (size_t)(nx * ny), sizeof *lv->heads);
        if (!lv->heads) {
            ok = false;
            break;
        }
        memset(lv->heads, 0xff, (size_t)(nx * ny) * sizeof *lv->heads);
        lv->occupied = world_alloc(w, ((size_t)(nx * ny) + 63) / 64, sizeof *lv->occupied);
        if (!lv->occupied) {
            ok = false;
            break;
        }
        if (cell >= 2.0f * cfg.max_shape_size || (lv->nx <= 2 && lv->ny <= 2)) break;
        cell *= 2.0f;
    }
    if (!ok) {
        world_destroy(w);
        return NULL;
    }
    for (uint32_t i = 0; i < cap; i++)
        w->free_slots[i] = cap - 1 - i;
    w->free_count = cap;
    for (uint32_t i = 0; i < w->poly_cap; i++)
        w->free_polys[i] = w->poly_cap - 1 - i;
    w->free_poly_count = w->poly_cap;
    return w;
}

void world_destroy(world *w) {
    if (!w) return;
    for (int l = 0; l < w->level_count; l++) {
        free(w->levels[l].heads);
        free(w->levels[l].occupied);
    }
    if (w->cache) {
        world_grid *g = &w->cache->grid;
        free(g->start);
        free(g->items);
        free(g->big);
        free(g->ranges);
        free(g->unindexed);
        free(w->cache->results);
        free(w->cache);
    }
    free(w->slots);
    free(w->free_slots);
    free(w->statics);
    free(w->movers);
    free(w->polys);
    free(w->free_polys);
    free(w->p0);
    free(w->d1);
    free(w->path);
    free(w->p2);
    free(w->near_cache);
    free(w->moved_bits);
    free(w->spawn_bits);
    free(w->moved);
    free(w->spawned);
    free(w->despawned);
    free(w->pending_despawned);
    free(w->pending_spawned);
    free(w->pairs);
    free(w->adj);
    free(w->adj_start);
    free(w->sort_counts);
    free(w->pushed);
    free(w);
}

const world_config *world_get_config(const world *w) { return &w->cfg; }

void world_set_mover_collisions(world *w, bool enabled) { w->movers_collide = enabled; }

/* ---- spawn / despawn / intents ------------------------------------------------------------- */

world_status world_spawn(world *w, world_body_kind kind, const geom_shape *shape, vec2 position,
                         uint32_t owner, world_body_id *out_id, geom_shape_error *shape_error) {
    if (out_id) *out_id = WORLD_NULL_BODY;
    if (shape_error) *shape_error = GEOM_OK;
    if (kind != WORLD_BODY_STATIC && kind != WORLD_BODY_MOVING) return WORLD_ERR_INVALID_SHAPE;
    if (!v2_is_finite(position)) return WORLD_ERR_NOT_FINITE;
    geom_shape_error err = shape ? geom_shape_validate(shape) : GEOM_ERR_UNKNOWN_KIND;
    aabb local = {{0, 0}, {0, 0}};
    if (!err) {
        local = geom_shape_aabb(shape, v2(0.0f, 0.0f));
        float size = wmax(wmax(-local.min.x, -local.min.y), wmax(local.max.x, local.max.y));
        if (!(size <= w->cfg.max_shape_size)) err = GEOM_ERR_SIZE_OUT_OF_RANGE;
    }
    if (err) {
        if (shape_error) *shape_error = err;
        return WORLD_ERR_INVALID_SHAPE;
    }
    /* PROTOCOL.md refuses a spawn whose *position* is outside the world. A moving body whose
     * position is inside but whose shape pokes through a wall is shifted inward instead (as a spawn
     * onto a static is pushed out), so a client spawning anywhere in the bounds is never refused.
     * Statics are the world's own geometry and must fit as given. */
    const aabb bounds = w->cfg.bounds;
    if (position.x < bounds.min.x || position.x > bounds.max.x || position.y < bounds.min.y ||
        position.y > bounds.max.y)
        return WORLD_ERR_OUT_OF_BOUNDS;
    if (kind == WORLD_BODY_MOVING) {
        if (position.x + local.min.x < bounds.min.x) position.x = bounds.min.x - local.min.x;
        if (position.x + local.max.x > bounds.max.x) position.x = bounds.max.x - local.max.x;
        if (position.y + local.min.y < bounds.min.y) position.y = bounds.min.y - local.min.y;
        if (position.y + local.max.y > bounds.max.y) position.y = bounds.max.y - local.max.y;
    }
    aabb box = aabb_translate(local, position);
    if (!aabb_contains(bounds, box)) return WORLD_ERR_OUT_OF_BOUNDS; /* wider than the world */
    if (w->free_count == 0) return WORLD_ERR_FULL;
    if (kind == WORLD_BODY_MOVING && w->mover_count == w->mover_cap) return WORLD_ERR_FULL;
    uint32_t ref = (uint32_t)shape->kind << WORLD_REF_KIND_SHIFT;
    if (shape->kind == GEOM_SHAPE_POLYGON) {
        if (w->free_poly_count == 0) return WORLD_ERR_FULL;
        uint32_t p = w->free_polys[--w->free_poly_count];
        w->polys[p] = *shape;
        ref |= p;
    }
    uint32_t slot = w->free_slots[--w->free_count];
    world_slot *s = &w->slots[slot];
    s->gen++;
    s->kind = (uint8_t)kind;
    s->flags = WORLD_SLOT_SPAWNED;
    w->pending_spawned[w->pending_spawned_count++] = slot;
    if (kind == WORLD_BODY_STATIC) {
        uint32_t i = w->static_count++;
        world_static *st = &w->statics[i];
        st->box = box;
        st->position = position;
        st->slot = slot;
        st->shape = ref;
        st->spawn_tick = w->tick + 1 < UINT32_MAX ? (uint32_t)(w->tick + 1) : UINT32_MAX;
        s->index = i;
        if (ref_kind(ref) != GEOM_SHAPE_BOX) w->nonbox_statics++;
        static_link(w, i);
    } else {
        uint32_t i = w->mover_count++;
        world_mover *m = &w->movers[i];
        memset(m, 0, sizeof *m);
        m->position = position;
        m->lo = local.min;
        m->hi = local.max;
        m->slot = slot;
        m->shape = ref;
        m->owner = owner;
        m->flags = WORLD_MOVER_CHECK_STATICS;
        w->static_checks_pending = true;
        m->changed_tick = w->tick + 1;
        s->index = i;
        world_grid *g = &w->cache->grid;
        if (g->valid && g->unindexed_count < w->mover_cap)
            g->unindexed[g->unindexed_count++] = i;
        else
            g->valid = false; /* rebuilt by the next query that needs it */
    }
    if (out_id) *out_id = make_id(w, slot, s->gen);
    return WORLD_OK;
}

world_status world_despawn(world *w, world_body_id id) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    world_slot *s = &w->slots[slot];
    uint32_t ref;
    if (s->kind == WORLD_BODY_STATIC) {
        uint32_t i = s->index, last = w->static_count - 1;
        ref = w->statics[i].shape;
        if (ref_kind(ref) != GEOM_SHAPE_BOX) w->nonbox_statics--;
        static_relink(w, i, w->statics[i].next);
        if (--w->levels[w->statics[i].level].count == 0) update_active_levels(w);
        if (i != last) {
            /* move the last static into the hole, fixing the link that pointed at it */
            static_relink(w, last, (int32_t)i);
            w->statics[i] = w->statics[last];
            w->slots[w->statics[i].slot].index = i;
        }
        w->static_count--;
    } else {
        uint32_t i = s->index, last = w->mover_count - 1;
        ref = w->movers[i].shape;
        w->cache->grid.valid = false; /* dense indices change: rebuilt by the next query */
        if (i != last) {
            w->movers[i] = w->movers[last];
            w->slots[w->movers[i].slot].index = i;
        }
        w->mover_count--;
    }
    if (ref_kind(ref) == GEOM_SHAPE_POLYGON) w->free_polys[w->free_poly_count++] = ref_index(ref);
    if (s->flags & WORLD_SLOT_SPAWNED) {
        /* never seen by a step: it neither appeared nor vanishes */
        for (size_t k = 0; k < w->pending_spawned_count; k++)
            if (w->pending_spawned[k] == slot) {
                w->pending_spawned[k] = w->pending_spawned[--w->pending_spawned_count];
                break;
            }
    } else {
        w->pending_despawned[w->pending_despawned_count++] = id;
    }
    s->kind = 0;
    s->flags = 0;
    if (s->gen >= w->gen_max)
        s->flags = WORLD_SLOT_RETIRED; /* its ids would wrap: never reuse it */
    else
        w->free_slots[w->free_count++] = slot;
    return WORLD_OK;
}

world_status world_set_intent(world *w, world_body_id id, vec2 velocity, uint32_t input_seq) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (w->slots[slot].kind != WORLD_BODY_MOVING) return WORLD_ERR_NOT_MOVING;
    if (!v2_is_finite(velocity)) return WORLD_ERR_NOT_FINITE;
    world_mover *m = &w->movers[w->slots[slot].index];
    if (input_seq <= m->pending_seq) return WORLD_STALE_INPUT;
    /* in double: a finite float32 squared may overflow float */
    double len = sqrt((double)velocity.x * velocity.x + (double)velocity.y * velocity.y);
    if (len > (double)w->cfg.max_speed)
        velocity = v2((float)(velocity.x * (w->cfg.max_speed / len)),
                      (float)(velocity.y * (w->cfg.max_speed / len)));
    m->intent = velocity;
    m->pending_seq = input_seq;
    return WORLD_OK;
}

/* ---- the tick -------------------------------------------------------------------------------- */

/* Movers another mover considers in its mover pass. */
typedef struct mover_candidate {
    body_view view; /* shape and start position */
    vec2 d;         /* its first-pass displacement this tick */
    uint32_t index; /* dense index */
} mover_candidate;

/* A static near a short sweep, copied so the slide's iterations loop over a small array. */
typedef struct near_static {
    aabb box;        /* its AABB */
    uint32_t index;  /* into statics */
    uint32_t is_box; /* box shape: the AABB fast path applies */
} near_static;
#define WORLD_NEAR_STATICS 32
/* Cells a remembered walk reaches past the swept region in the direction of motion. */
#define WORLD_NEAR_GROW 1

/* Statics overlapping region, into out (at most WORLD_NEAR_STATICS); -1 when there are more. */
static int gather_statics(const world *w, aabb region, near_static *out) {
    int n = 0;
    for (int al = 0; al < w->active_level_count; al++) {
        const world_level *lv = &w->levels[w->active_levels[al]];
        cell_range cr = level_range(w, lv, region);
        int32_t x0 = cr.x0, y0 = cr.y0, x1 = cr.x1, y1 = cr.y1;
        for (int32_t cy = y0; cy <= y1; cy++) {
            const int32_t *row = &lv->heads[cy * lv->nx];
            for (int32_t cx = x0; cx <= x1; cx++) {
                uint32_t cell = (uint32_t)(cy * lv->nx + cx);
                if (!(lv->occupied[cell >> 6] >> (cell & 63) & 1u)) continue; /* most cells */
                for (int32_t s = row[cx]; s >= 0;) {
                    const world_static *st = &w->statics[s];
                    int32_t index = s;
                    s = st->next;
                    if (!aabb_overlaps(region, st->box)) continue;
                    if (n == WORLD_NEAR_STATICS) return -1;
                    out[n].box = st->box;
                    out[n].index = (uint32_t)index;
                    out[n].is_box = ref_kind(st->shape) == GEOM_SHAPE_BOX;
                    n++;
                }
            }
        }
    }
    return n;
}

/* The contact response every slide shares (slide, slide_box_impl, step_alone): stop GEOM_SKIN
 * short of the contact along the closing speed (never before the start), advance *pos, and keep of
 * the remaining motion all but its component into the normal n, less what the other body moves
 * away by. other_d is the other body's displacement over the rest of the tick; with_mover must be
 * a compile-time constant (false: a static or the bounds, other_d unread) so the inlined copy
 * carries no mover arithmetic (0 * x is not folded for floats). Returns the fraction t of *r
 * used; *r becomes the remaining motion. */
WORLD_HOT float slide_respond(vec2 *pos, vec2 *r, float t, vec2 n, bool with_mover, vec2 other_d) {
    vec2 d = *r;
    float closing = with_mover ? v2_dot(v2_sub(d, other_d), n) : v2_dot(d, n);
    if (closing > 0.0f) t -= GEOM_SKIN / closing;
    if (t < 0.0f) t = 0.0f;
    *pos = v2_mul_add(*pos, t, d);
    vec2 rem = v2_scale(d, 1.0f - t);
    float rn = v2_dot(rem, n);
    if (with_mover) {
        float allowed = wmax(0.0f, v2_dot(v2_scale(other_d, 1.0f - t), n));
        if (rn > allowed) rem = v2_mul_add(rem, -(rn - allowed), n);
    } else if (rn > 0.0f) {
        rem = v2_mul_add(rem, -rn, n);
    }
    *r = rem;
    return t;
}

/* Collide-and-slide of one mover from pos by r (COLLISION.md step 2). Candidates move along their
 * own displacement over the same tick (relative motion). Returns the end position and grows
 * *path by every point the body passes. */
static vec2 slide(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                  uint32_t cand_count, aabb *path) {
    const world_mover *m = &w->movers[mi];
    body_view a = mover_view(m, pos);
    float tau = 0.0f; /* fraction of the tick used so far */
    aabb pbox = box_at(pos, m->lo, m->hi);
    /* A short move (within one fine cell) gathers its statics once: every iteration stays within
     * the start box grown by the L1 length of r, since sliding never lengthens the motion. */
    near_static near[WORLD_NEAR_STATICS];
    int near_count = -1;
    float reach = fabsf(r.x) + fabsf(r.y);
    if (reach <= w->levels[0].cell)
        near_count = gather_statics(w, aabb_inflate(pbox, reach + WORLD_QUERY_MARGIN), near);
    bool a_box = ref_kind(m->shape) == GEOM_SHAPE_BOX;
    /* far from the bounds (the whole slide stays a skin inside them): no need to sweep them */
    bool check_bounds = !aabb_contains(w->inner_bounds, aabb_inflate(pbox, reach));
    for (int it = 0; it < w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        a.pos = pos;
        aabb box = box_at(pos, m->lo, m->hi);
        sweep_hit best = {WORLD_NO_HIT, {0, 0}, {0, 0}};
        if (check_bounds) sweep_bounds(w, box, r, &best);
        vec2 inv = near_count > 0 ? recip(r) : v2(0.0f, 0.0f);
        for (uint32_t c = 0; c < cand_count; c++) {
            body_view b = cands[c].view;
            b.pos = v2_mul_add(b.pos, tau, cands[c].d);
            vec2 db = v2_scale(cands[c].d, 1.0f - tau);
            geom_toi toi;
            if (pair_sweep(w, &a, r, &b, db, &toi)) hit_offer(&best, &toi, db);
        }
        if (near_count >= 0) {
            for (int k = 0; k < near_count; k++) {
                geom_toi toi;
                bool hit;
                if (a_box && near[k].is_box) {
                    hit = box_sweep(box, r, inv, near[k].box, &toi);
                } else {
                    body_view b = static_view(&w->statics[near[k].index]);
                    hit = pair_sweep(w, &a, r, &b, v2(0.0f, 0.0f), &toi);
                }
                if (hit) hit_offer(&best, &toi, v2(0.0f, 0.0f));
            }
        } else {
            sweep_statics(w, &a, box, r, &best);
        }
        if (best.t > 1.0f) {
            pos = v2_add(pos, r);
            pbox = aabb_union(pbox, box_at(pos, m->lo, m->hi));
            break;
        }
        w->swept_hits++;
        /* a static or the bounds leave other_d 0, and r - 0 is r: one response for every hit */
        float t = slide_respond(&pos, &r, best.t, best.normal, true, best.other_d);
        pbox = aabb_union(pbox, box_at(pos, m->lo, m->hi));
        tau += t * (1.0f - tau);
    }
    *path = pbox;
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
    if (!w->statics_in_finest || ref_kind(m->shape) != GEOM_SHAPE_BOX ||
        wmax(fabsf(r.x), fabsf(r.y)) > lv->cell)
        return slide(w, mi, pos, r, cands, cand_count, &unused);
    for (uint32_t c = 0; c < cand_count; c++)
        if (ref_kind(cands[c].view.ref) != GEOM_SHAPE_BOX)
            return slide(w, mi, pos, r, cands, cand_count, &unused);
    aabb box = box_at(pos, m->lo, m->hi);
    aabb region = aabb_inflate(aabb_sweep(box, r), WORLD_QUERY_MARGIN);
    aabb near[WORLD_NEAR_STATICS];
    int count = 0;
    /* inside the bounds by a skin: no bounds sweep, and cell coordinates need no clamping */
    bool check_bounds = !aabb_contains(w->inner_bounds, region);
    if (w->active_level_count) {
        vec2 o = w->cfg.bounds.min;
        int32_t x0, y0, x1, y1;
        if (check_bounds) {
            cell_range cr = level_range(w, lv, region);
            x0 = cr.x0, y0 = cr.y0, x1 = cr.x1, y1 = cr.y1;
        } else {
            x0 = (int32_t)((region.min.x - o.x) * lv->inv_cell) - lv->extra;
            y0 = (int32_t)((region.min.y - o.y) * lv->inv_cell) - lv->extra;
            x1 = (int32_t)((region.max.x - o.x) * lv->inv_cell);
            y1 = (int32_t)((region.max.y - o.y) * lv->inv_cell);
            if (x0 < 0) x0 = 0;
            if (y0 < 0) y0 = 0;
        }
        for (int32_t cy = y0; cy <= y1; cy++)
            for (int32_t cx = x0; cx <= x1; cx++) {
                uint32_t cell = (uint32_t)(cy * lv->nx + cx);
                if (!(lv->occupied[cell >> 6] >> (cell & 63) & 1u)) continue;
                for (int32_t s = lv->heads[cell]; s >= 0; s = w->statics[s].next) {
                    const world_static *st = &w->statics[s];
                    if (!aabb_overlaps(region, st->box)) continue;
                    if (ref_kind(st->shape) != GEOM_SHAPE_BOX || count == WORLD_NEAR_STATICS)
                        return slide(w, mi, pos, r, cands, cand_count, &unused);
                    near[count++] = st->box;
                }
            }
    }
    float tau = 0.0f; /* fraction of the tick used so far (candidates' clock) */
    for (int it = 0; it < w->cfg.slide_iterations; it++) {
        if (r.x == 0.0f && r.y == 0.0f) break;
        sweep_hit best = {WORLD_NO_HIT, {0, 0}, {0, 0}};
        if (check_bounds) sweep_bounds(w, box, r, &best);
        for (uint32_t c = 0; c < cand_count; c++) {
            const body_view *b = &cands[c].view;
            vec2 db = v2_scale(cands[c].d, 1.0f - tau), rel = v2_sub(r, db);
            geom_toi toi;
            if (box_sweep(box, rel, recip(rel),
                          box_at(v2_mul_add(b->pos, tau, cands[c].d), b->lo, b->hi), &toi))
                hit_offer(&best, &toi, db);
        }
        vec2 inv = count ? recip(r) : v2(0.0f, 0.0f);
        for (int k = 0; k < count; k++) {
            geom_toi toi;
            if (box_sweep(box, r, inv, near[k], &toi) && toi.t < best.t)
                best.t = toi.t, best.normal = toi.normal, best.other_d = v2(0.0f, 0.0f);
        }
        if (best.t > 1.0f) return v2_add(pos, r);
        w->swept_hits++;
        /* with no candidates other_d is 0: cand_count != 0 is a constant in the specialisation
         * below (cand_count a constant 0), which so drops the mover arithmetic */
        float t = slide_respond(&pos, &r, best.t, best.normal, cand_count != 0, best.other_d);
        box = box_at(pos, m->lo, m->hi);
        if (cand_count) tau += t * (1.0f - tau);
    }
    return pos;
}

/* slide_box_impl compiled twice: alone (S1a, and S1b movers with nobody near) and with
 * candidates. */
static vec2 slide_box(world *w, uint32_t mi, vec2 pos, vec2 r, const mover_candidate *cands,
                      uint32_t cand_count) {
    if (cand_count == 0) return slide_box_impl(w, mi, pos, r, NULL, 0);
    return slide_box_impl(w, mi, pos, r, cands, cand_count);
}

typedef struct cand_ctx {
    const world *w;       /* the world */
    uint32_t self;        /* the querying mover's slot */
    uint32_t self_index;  /* its dense index: lower ones already stand where they end */
    aabb box;             /* its path box */
    mover_candidate *out; /* candidates */
    uint32_t count;       /* found */
    uint32_t overflow;    /* not kept */
} cand_ctx;

static bool cand_visit(const world *w, uint32_t i, void *vctx) {
    cand_ctx *c = vctx;
    if (i == c->self_index) return true;
    if (!aabb_overlaps(w->path[i], c->box)) return true;
    const world_mover *m = &w->movers[i];
    /* What the slide will see of it (its path box is grown by the push allowance, and a slow
     * mover's holds its intent too): skip it when that misses this mover's reach. */
    vec2 at = i < c->self_index ? w->p2[i] : w->p0[i];
    vec2 d = i < c->self_index ? v2(0.0f, 0.0f) : w->d1[i];
    if (!aabb_overlaps(aabb_sweep(box_at(at, m->lo, m->hi), d), c->box)) return true;
    if (c->count == WORLD_MAX_MOVER_CANDIDATES) {
        c->overflow++;
        return true;
    }
    /* already moved this pass: it stands where it ended; not yet: it moves along its expected
     * displacement (relative motion) */
    c->out[c->count].view = mover_view(m, at);
    c->out[c->count].d = d;
    c->out[c->count].index = i;
    c->count++;
    return true;
}

/* Moves a mover by push with collide-and-slide against statics and bounds (so a body pushed into
 * a wall or a corner slides along it instead of stopping dead). Returns the fraction of the push
 * achieved along its own direction. Never passes through a static: how the discrete pass keeps I2.
 * Through slide_box: a push is short, so a box among box statics takes the gathered fast path
 * (the same hits as slide(); anything else falls back to slide()). */
static float safe_move(world *w, uint32_t mi, vec2 push) {
    world_mover *m = &w->movers[mi];
    float len_sq = v2_dot(push, push);
    if (!(len_sq > 0.0f)) return 1.0f;
    vec2 end = slide_box(w, mi, m->position, push, NULL, 0);
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
    if (c->all ? ((w->pushed[bi] & WORLD_PUSHED_NOW) && bi < c->ai) : bi < c->ai) return true;
    const world_mover *b = &w->movers[bi];
    if (!aabb_overlaps(box_at(b->position, b->lo, b->hi), c->box)) return true;
    if (w->pair_count == w->pair_cap) return false; /* the rest waits for the next tick */
    w->pairs[w->pair_count][0] = c->ai;
    w->pairs[w->pair_count][1] = bi;
    w->pair_count++;
    return true;
}

/* Pushes one overlapping pair apart along the MTV, half each; what a static stops one body from
 * taking goes to the other. Returns whether they overlapped. */
/* Pushes a apart from b along n (from a towards b) by total, half each; what a static stops one
 * body from taking goes to the other. Returns the fraction of total achieved. */
static float push_apart(world *w, uint32_t ai, uint32_t bi, vec2 n, float total) {
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
    if (w->pushed[i] & WORLD_PUSHED_ESCAPED) return;
    aabb now = box_at(m->position, m->lo, m->hi), then = g->boxes[i];
    if (now.min.x >= then.min.x && now.min.y >= then.min.y && now.max.x <= then.max.x &&
        now.max.y <= then.max.y)
        return;
    w->pushed[i] |= WORLD_PUSHED_ESCAPED;
    g->unindexed[g->unindexed_count++] = i;
}

/* Many bodies off the grid make every query walk the unindexed list: rebuild it instead, over
 * where the bodies are now (pairs are kept as indices, so they stay valid). */
static void grid_refresh(world *w, world_grid *g) {
    if (g->unindexed_count <= WORLD_MAX_UNINDEXED) return;
    grid_build_current(w, WORLD_PUSH_ALLOWANCE);
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->pushed[i] &= (uint8_t)~WORLD_PUSHED_ESCAPED;
}

static void separate(world *w) {
    /* Spawned movers may sit in a static: take them out first (all of the MTV). */
    w->static_checks_pending = false;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        world_mover *m = &w->movers[i];
        if (!(m->flags & WORLD_MOVER_CHECK_STATICS)) continue;
        m->flags &= ~WORLD_MOVER_CHECK_STATICS;
        for (int pass = 0; pass < 4; pass++) {
            static_push_ctx c = {w, i, false};
            static_query(w, box_at(m->position, m->lo, m->hi), static_push_visit, &c);
            if (!c.moved) break;
        }
    }
    if (!w->movers_collide || w->cfg.separation_passes == 0) return;
    world_grid *g = &w->cache->grid;
    if (!g->valid) return; /* fewer than two movers: no pairs */
    /* The pairs come from the mover pass (paths that came near), on its grid of path boxes. A
     * body that ended outside its path box (the redone slide, a push out of a static) goes on
     * the unindexed list and looks for its pairs now. Then each pass pushes its pairs apart
     * (Gauss-Seidel, in pair order: deterministic) and the next pass looks again around the
     * bodies it pushed. */
    memset(w->pushed, 0, w->mover_count);
    uint32_t escaped = 0;
    for (uint32_t i = 0; i < w->mover_count; i++) {
        grid_note_moved(w, g, i);
        if (w->pushed[i] & WORLD_PUSHED_ESCAPED) w->pushed[i] |= WORLD_PUSHED_NOW, escaped++;
    }
    if (g->unindexed_count > WORLD_MAX_UNINDEXED) {
        grid_build_current(w, WORLD_PUSH_ALLOWANCE);
        for (uint32_t i = 0; i < w->mover_count; i++)
            w->pushed[i] &= (uint8_t)~WORLD_PUSHED_ESCAPED;
    }
    for (uint32_t i = 0; escaped && i < w->mover_count; i++) {
        if (!(w->pushed[i] & WORLD_PUSHED_NOW)) continue;
        const world_mover *m = &w->movers[i];
        pair_ctx c = {w, i, aabb_inflate(box_at(m->position, m->lo, m->hi), WORLD_PAIR_MARGIN),
                      true};
        grid_query(w, g, c.box, pair_collect, &c);
    }
    for (uint32_t i = 0; escaped && i < w->mover_count; i++)
        w->pushed[i] &= (uint8_t)~WORLD_PUSHED_NOW;
    /* bodies pushed in the current pass, in push order (the adjacency lists are free by now) */
    uint32_t *moved = w->adj, moved_count = 0;
    for (int pass = 0; pass < w->cfg.separation_passes && w->pair_count > 0; pass++) {
        bool last = pass + 1 == w->cfg.separation_passes;
        for (uint32_t k = 0; k < moved_count; k++)
            w->pushed[moved[k]] &= (uint8_t)~WORLD_PUSHED_NOW;
        moved_count = 0;
        for (uint32_t k = 0; k < w->pair_count; k++) {
            uint32_t ab[2] = {w->pairs[k][0], w->pairs[k][1]};
            if (!pair_push(w, ab[0], ab[1])) continue;
            for (int q = 0; q < 2; q++) {
                if (w->pushed[ab[q]] & WORLD_PUSHED_NOW) continue;
                w->pushed[ab[q]] |= WORLD_PUSHED_NOW;
                moved[moved_count++] = ab[q];
                grid_note_moved(w, g, ab[q]);
            }
        }
        if (moved_count == 0) break;
        grid_refresh(w, g);
        if (last) {
            /* Out of passes with pushes still happening: what overlaps now is pinned (between
             * statics, directly or through other bodies). Leave it, and report it (I3). */
            for (uint32_t k = 0; k < w->pair_count; k++) {
                world_mover *a = &w->movers[w->pairs[k][0]], *b = &w->movers[w->pairs[k][1]];
                body_view va = mover_view(a, a->position), vb = mover_view(b, b->position);
                geom_contact ct;
                if (!(pair_overlap(w, &va, &vb, &ct) && ct.depth > GEOM_SKIN)) continue;
                w->jammed++;
                if (w->jam_count < WORLD_MAX_JAM_REPORT) {
                    world_body_id ia = slot_id(w, a->slot), ib = slot_id(w, b->slot);
                    w->jams[w->jam_count][0] = ia < ib ? ia : ib;
                    w->jams[w->jam_count][1] = ia < ib ? ib : ia;
                }
                w->jam_count++;
            }
            break;
        }
        w->pair_count = 0;
        for (uint32_t k = 0; k < moved_count; k++) {
            uint32_t i = moved[k];
            const world_mover *m = &w->movers[i];
            pair_ctx c = {w, i, aabb_inflate(box_at(m->position, m->lo, m->hi), WORLD_PAIR_MARGIN),
                          true};
            grid_query(w, g, c.box, pair_collect, &c);
        }
    }
}

static void bits_to_ids(const world *w, const uint64_t *bits, world_body_id *out, size_t *count) {
    size_t n = 0, words = (w->capacity + 63) / 64;
    for (size_t k = 0; k < words; k++) {
        uint64_t b = bits[k];
        while (b) {
            int bit = __builtin_ctzll(b);
            b &= b - 1;
            uint32_t slot = (uint32_t)(k * 64 + (size_t)bit);
            out[n++] = slot_id(w, slot);
        }
    }
    *count = n;
}

/* In-place heapsort of ids or slots: O(n log n), no allocation (glibc's qsort may malloc a
 * merge buffer), the same result on every platform. */
static void sort_u32(uint32_t *v, size_t n) {
    if (n < 2) return;
    for (size_t start = n / 2; start-- > 0;) {
        for (size_t root = start;;) {
            size_t child = 2 * root + 1;
            if (child >= n) break;
            if (child + 1 < n && v[child] < v[child + 1]) child++;
            if (v[root] >= v[child]) break;
            uint32_t t = v[root];
            v[root] = v[child], v[child] = t;
            root = child;
        }
    }
    for (size_t end = n - 1; end > 0; end--) {
        uint32_t t = v[0];
        v[0] = v[end], v[end] = t;
        for (size_t root = 0;;) {
            size_t child = 2 * root + 1;
            if (child >= end) break;
            if (child + 1 < end && v[child] < v[child + 1]) child++;
            if (v[root] >= v[child]) break;
            t = v[root];
            v[root] = v[child], v[child] = t;
            root = child;
        }
    }
}

/* Reorders the dense mover array by 8x8 tiles of the finest static cells (a stable counting sort,
 * so deterministic): neighbours in space become neighbours in memory, and the tick's walk over
 * movers touches the static grid coherently instead of at random. */
static void sort_movers(world *w) {
    uint32_t n = w->mover_count;
    const world_level *lv = &w->levels[0];
    uint32_t tx = (uint32_t)(lv->nx + 7) / 8, ty = (uint32_t)(lv->ny + 7) / 8;
    if (n < 2 || (uint64_t)tx * ty > w->sort_tile_cap) return;
    uint32_t tiles = tx * ty;
    uint32_t *count = w->sort_counts;
    memset(count, 0, (tiles + 1) * sizeof *count);
    vec2 o = w->cfg.bounds.min;
    for (uint32_t i = 0; i < n; i++) {
        vec2 p = w->movers[i].position;
        uint32_t cx = (uint32_t)level_cell(p.x, o.x, lv->inv_cell, lv->nx) / 8;
        uint32_t cy = (uint32_t)level_cell(p.y, o.y, lv->inv_cell, lv->ny) / 8;
        uint32_t key = cy * tx + cx;
        w->pairs[i][0] = key;
        count[key + 1]++;
    }
    for (uint32_t t = 0; t < tiles; t++)
        count[t + 1] += count[t];
    for (uint32_t i = 0; i < n; i++)
        w->pairs[count[w->pairs[i][0]]++][1] = i; /* new -> old */
    for (uint32_t i = 0; i < n; i++) {
        if (w->pairs[i][1] == i) continue;
        world_mover tmp = w->movers[i];
        uint32_t j = i;
        for (;;) {
            uint32_t k = w->pairs[j][1];
            w->pairs[j][1] = j;
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
}

/* The mover pairs whose grid boxes overlap, from the grid itself (a self-join of each bucket,
 * each pair taken in the bucket of the first cell both boxes share), into w->pairs, and as
 * adjacency lists (w->adj from w->adj_start[i]) for the mover pass. Costs about one pass over
 * the grid's items instead of a query per mover. Pairs past pair_cap are dropped: the discrete
 * pass still separates what they leave overlapped. */
static void grid_pairs(world *w, const world_grid *g) {
    w->pair_count = 0;
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
                if (w->pair_count == w->pair_cap) goto adjacency;
                w->pairs[w->pair_count][0] = a < b ? a : b;
                w->pairs[w->pair_count][1] = a < b ? b : a;
                w->pair_count++;
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
            if (w->pair_count == w->pair_cap) goto adjacency;
            w->pairs[w->pair_count][0] = a < b ? a : b;
            w->pairs[w->pair_count][1] = a < b ? b : a;
            w->pair_count++;
        }
    }
adjacency:
    memset(w->adj_start, 0, ((size_t)w->mover_count + 1) * sizeof *w->adj_start);
    for (uint32_t k = 0; k < w->pair_count; k++) {
        w->adj_start[w->pairs[k][0] + 1]++;
        w->adj_start[w->pairs[k][1] + 1]++;
    }
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->adj_start[i + 1] += w->adj_start[i];
    /* fill from the back so each list ends up in pair order (deterministic either way) */
    for (uint32_t k = w->pair_count; k-- > 0;) {
        uint32_t a = w->pairs[k][0], b = w->pairs[k][1];
        w->adj[--w->adj_start[a + 1]] = b;
        w->adj[--w->adj_start[b + 1]] = a;
    }
    /* adj_start[i + 1] now holds list i's start: shift down */
    for (uint32_t i = 0; i < w->mover_count; i++)
        w->adj_start[i] = w->adj_start[i + 1];
    w->adj_start[w->mover_count] = 2 * w->pair_count;
}

/* Step 4 for one mover: its new position, achieved velocity, applied sequence, change bit. */
WORLD_HOT void finish_mover(world *w, uint32_t i, vec2 start, vec2 end) {
    world_mover *m = &w->movers[i];
    vec2 vel = v2_scale(v2_sub(end, start), w->cfg.tick_rate_hz);
    bool changed =
        !vec_eq(end, start) || !vec_eq(vel, m->velocity) || m->applied_seq != m->pending_seq;
    m->position = end;
    m->velocity = vel;
    m->applied_seq = m->pending_seq;
    if (changed) {
        m->changed_tick = w->tick;
        w->moved_bits[m->slot >> 6] |= 1ull << (m->slot & 63);
    }
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

/* A float v from which on every coordinate's level-0 cell, computed as step_alone computes it,
 * is at least c: cells grow with v, so checking v itself suffices. It starts at the cell's edge
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

/* The tick of movers that ignore each other when every static sits in the finest level (S1a):
 * slide_box_impl's box-among-boxes path inlined into the mover loop, with the world's constants
 * held in locals (the mover stores would otherwise force reloading them per mover), the
 * occupancy bits read a row at a time, and a mover whose swept region meets no occupied cell
 * done without the slide loop. The same arithmetic as slide_box_impl with no candidates, so the
 * same results; anything it does not cover (other shapes, long moves, near the bounds, non-box
 * or many statics) goes through slide_box. */
static void step_alone(world *w) {
    uint32_t n = w->mover_count;
    float dt = w->dt;
    const world_level *lv = &w->levels[0];
    const vec2 o = w->cfg.bounds.min;
    const float cell = lv->cell, inv_cell = lv->inv_cell;
    const int32_t nx = lv->nx, extra = lv->extra;
    const uint64_t *occ = lv->occupied;
    const int32_t *heads = lv->heads;
    const world_static *statics = w->statics;
    const aabb inner = w->inner_bounds;
    const bool fast_ok = w->statics_in_finest;
    const bool any_statics = w->active_level_count > 0;
    const int iterations = w->cfg.slide_iterations;
    const int32_t ny = lv->ny;
    world_near_cache *near_cache = w->near_cache;
    if (w->near_cache_stale) {
        memset(near_cache, 0xff, w->mover_cap * sizeof *near_cache);
        w->near_cache_stale = false;
    }
    /* with a circle or polygon among the statics the walk decides whether to leave
     * the fast path, so it is always done */
    const bool use_cache = w->nonbox_statics == 0;
    const aabb no_area = {{NAN, NAN}, {NAN, NAN}};
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
        if (nc->area.min.x <= region.min.x && nc->area.min.y <= region.min.y &&
            region.max.x <= nc->area.max.x && region.max.y <= nc->area.max.y) {
            for (uint32_t k = 0; k < nc->count; k++) {
                const world_static *st = &statics[nc->statics[k]];
                if (aabb_overlaps(region, st->box)) near[count++] = st->box;
            }
            goto walked;
        }
        if (!aabb_contains(inner, region)) goto general;
        if (any_statics) {
            int32_t x0 = (int32_t)((region.min.x - o.x) * inv_cell) - extra;
            int32_t y0 = (int32_t)((region.min.y - o.y) * inv_cell) - extra;
            int32_t x1 = (int32_t)((region.max.x - o.x) * inv_cell);
            int32_t y1 = (int32_t)((region.max.y - o.y) * inv_cell);
            if (x0 < 0) x0 = 0;
            if (y0 < 0) y0 = 0;
            uint32_t len = (uint32_t)(x1 - x0 + 1);
            if (len > 32) goto general;
            /* Walk a range grown ahead of the motion, so the next ticks find it remembered.
             * Statics outside the region's own cells cannot overlap the region, so the filter
             * below keeps exactly what a walk of those cells would keep, in the same order. */
            int32_t gx0 = x0, gy0 = y0, gx1 = x1, gy1 = y1;
            if (use_cache) {
                nc->area = no_area; /* void while it is refilled (the walk may leave) */
                if (r.x > 0.0f) gx1 = x1 + WORLD_NEAR_GROW < nx ? x1 + WORLD_NEAR_GROW : nx - 1;
                if (r.x < 0.0f) gx0 = x0 > WORLD_NEAR_GROW ? x0 - WORLD_NEAR_GROW : 0;
                if (r.y > 0.0f) gy1 = y1 + WORLD_NEAR_GROW < ny ? y1 + WORLD_NEAR_GROW : ny - 1;
                if (r.y < 0.0f) gy0 = y0 > WORLD_NEAR_GROW ? y0 - WORLD_NEAR_GROW : 0;
                len = (uint32_t)(gx1 - gx0 + 1);
            }
            uint64_t len_mask = (1ull << len) - 1;
            uint32_t found = 0; /* statics in the walked cells */
            for (int32_t cy = gy0; cy <= gy1; cy++) {
                /* the row's cells gx0..gx1 as bits: one word, or the tail of one and head of the
                 * next (gx1 < nx, so the next word exists) */
                uint32_t c0 = (uint32_t)(cy * nx + gx0), sh = c0 & 63;
                uint64_t bits = occ[c0 >> 6] >> sh;
                if (sh + len > 64) bits |= occ[(c0 >> 6) + 1] << (64 - sh);
                bits &= len_mask;
                while (bits) {
                    uint32_t c = c0 + (uint32_t)__builtin_ctzll(bits);
                    bits &= bits - 1;
                    for (int32_t s = heads[c]; s >= 0; s = statics[s].next) {
                        if (found < WORLD_NEAR_CACHE) nc->statics[found] = s;
                        found++;
                        const world_static *st = &statics[s];
                        if (!aabb_overlaps(region, st->box)) continue;
                        if (ref_kind(st->shape) != GEOM_SHAPE_BOX || count == WORLD_NEAR_STATICS)
                            goto general;
                        near[count++] = st->box;
                    }
                }
            }
            if (use_cache && found <= WORLD_NEAR_CACHE && len <= 32) {
                nc->count = found;
                /* x0 >= gx0 needs a home cell >= gx0 + extra (none below 0: x0 is clamped) */
                nc->area.min.x =
                    gx0 > 0 ? cell_edge_lo(o.x, cell, inv_cell, gx0 + extra) : -INFINITY;
                nc->area.min.y =
                    gy0 > 0 ? cell_edge_lo(o.y, cell, inv_cell, gy0 + extra) : -INFINITY;
                nc->area.max.x = cell_edge_hi(o.x, cell, inv_cell, gx1);
                nc->area.max.y = cell_edge_hi(o.y, cell, inv_cell, gy1);
                nc->area.min = v2_max(nc->area.min, inner.min);
                nc->area.max = v2_min(nc->area.max, inner.max);
            }
        }
    walked:
        if (count == 0) {
            /* nothing within reach: the slide is the whole move */
            if (r.x != 0.0f || r.y != 0.0f) pos = v2_add(pos, r);
        } else {
            vec2 end = pos;
            bool done = false;
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
                if (best_t > 1.0f) {
                    end = v2_add(pos, r);
                    done = true;
                    break;
                }
                hits++;
                slide_respond(&pos, &r, best_t, best_n, false, v2(0.0f, 0.0f));
                box = box_at(pos, m->lo, m->hi);
            }
            if (done) pos = end;
        }
        finish_mover(w, i, start, pos);
        continue;
    general:
        finish_mover(w, i, start, slide_box(w, i, start, r, NULL, 0));
        continue;
    general_slide:;
        aabb unused;
        finish_mover(w, i, start, slide(w, i, start, r, NULL, 0, &unused));
    }
    w->swept_hits += hits;
}

void world_step(world *w) {
    w->tick++;
    w->jam_count = 0;
    if (w->tick % WORLD_SORT_INTERVAL == 1) sort_movers(w);
    uint32_t n = w->mover_count;
    float dt = w->dt;
    world_grid *g = &w->cache->grid;
    g->valid = false;
    memset(w->moved_bits, 0, ((w->capacity + 63) / 64) * sizeof *w->moved_bits);

    /* Movers that ignore each other, none waiting for a push out of a static: each is done
     * after its slide (one walk over the movers instead of three). */
    bool finished = (!w->movers_collide || n < 2) && !w->static_checks_pending;
    if (finished) {
        step_alone(w);
    } else if (!w->movers_collide || n < 2) {
        /* 1-2: every mover against statics and bounds */
        for (uint32_t i = 0; i < n; i++) {
            world_mover *m = &w->movers[i];
            aabb unused;
            w->p0[i] = m->position;
            w->p2[i] = slide(w, i, m->position, v2_scale(m->intent, dt), NULL, 0, &unused);
        }
    } else {
        /* 1: where each mover is expected to go. A slow one (moving less than a cell): its
         * intent if new, else what it achieved last tick (a body pressed against a wall keeps
         * pressing and stays put). A fast one: its slide against statics and bounds alone, so its
         * expected path stops at walls instead of crossing the map. The grid holds each expected
         * path's box, grown by an allowance for the small moves of the passes. */
        float cell = w->levels[0].cell;
        for (uint32_t i = 0; i < n; i++) {
            const world_mover *m = &w->movers[i];
            vec2 want = v2_scale(m->intent, dt);
            aabb box = box_at(m->position, m->lo, m->hi);
            w->p0[i] = m->position;
            if (wmax(fabsf(want.x), fabsf(want.y)) > cell) {
                w->p2[i] = slide(w, i, m->position, want, NULL, 0, &w->path[i]);
                w->d1[i] = v2_sub(w->p2[i], m->position);
            } else {
                w->d1[i] = m->applied_seq != m->pending_seq ? want : v2_scale(m->velocity, dt);
                w->path[i] = aabb_union(aabb_sweep(box, want), aabb_sweep(box, w->d1[i]));
            }
            w->path[i] = aabb_inflate(w->path[i], WORLD_PUSH_ALLOWANCE);
        }
        grid_build(w, g, w->path);
        /* 2: one collide-and-slide per mover, in order, against statics, bounds and the movers
         * near its path: those already moved stand where they ended, the others move along their
         * expected displacement (relative motion: head-on bodies meet in the middle, I7). A fast
         * mover keeps its static-only slide unless a neighbour is in the way of it. */
        grid_pairs(w, g);
        mover_candidate cands[WORLD_MAX_MOVER_CANDIDATES];
        uint32_t late[WORLD_MAX_LATE], late_count = 0;
        bool boxes_only = w->nonbox_statics == 0;
        for (uint32_t i = 0; i < n; i++) {
            const world_mover *m = &w->movers[i];
            vec2 want = v2_scale(m->intent, dt);
            bool fast = wmax(fabsf(want.x), fabsf(want.y)) > cell;
            aabb reach = fast ? w->path[i]
                              : aabb_inflate(aabb_sweep(box_at(m->position, m->lo, m->hi), want),
                                             WORLD_QUERY_MARGIN);
            cand_ctx c = {w, m->slot, i, reach, cands, 0, 0};
            for (uint32_t k = w->adj_start[i]; k < w->adj_start[i + 1]; k++)
                cand_visit(w, w->adj[k], &c);
            /* movers that ended outside their expected path: the grid does not know where they
             * are, so every later mover looks at them where they ended */
            for (uint32_t k = 0; k < late_count; k++) {
                uint32_t j = late[k];
                const world_mover *o = &w->movers[j];
                if (!aabb_overlaps(box_at(w->p2[j], o->lo, o->hi), reach) ||
                    c.count == WORLD_MAX_MOVER_CANDIDATES)
                    continue;
                c.out[c.count].view = mover_view(o, w->p2[j]);
                c.out[c.count].d = v2(0.0f, 0.0f);
                c.out[c.count].index = j;
                c.count++;
            }
            if (fast) {
                /* Its static-only slide left it where it was: every component of its motion
                 * is stopped at once by statics or the bounds. Among boxes every contact normal
                 * is an axis and each response only shrinks a component (never flips or adds
                 * one), so mover contacts cannot free it either: p2 already holds the answer. */
                if (boxes_only && ref_kind(m->shape) == GEOM_SHAPE_BOX && w->d1[i].x == 0.0f &&
                    w->d1[i].y == 0.0f) {
                    bool all_boxes = true;
                    for (uint32_t k = 0; k < c.count && all_boxes; k++)
                        all_boxes = ref_kind(cands[k].view.ref) == GEOM_SHAPE_BOX;
                    if (all_boxes) continue;
                }
                /* a chord test along the static-only path: the path is nearly straight */
                body_view a = mover_view(m, m->position);
                bool in_way = false;
                for (uint32_t k = 0; k < c.count && !in_way; k++) {
                    geom_toi toi;
                    in_way = pair_sweep(w, &a, w->d1[i], &cands[k].view, cands[k].d, &toi);
                }
                if (!in_way) continue; /* p2 already holds the static-only slide */
            }
            w->p2[i] = slide_box(w, i, m->position, want, cands, c.count);
            if (late_count < WORLD_MAX_LATE &&
                !aabb_contains(w->path[i], box_at(w->p2[i], m->lo, m->hi)))
                late[late_count++] = i;
        }
    }
    if (!finished) {
        for (uint32_t i = 0; i < n; i++)
            w->movers[i].position = w->p2[i];
        /* 3: discrete separation */
        separate(w);
    }
    /* 4: velocities, sequences, change tracking */
    if (!finished)
        for (uint32_t i = 0; i < n; i++)
            finish_mover(w, i, w->p0[i], w->movers[i].position);
    bits_to_ids(w, w->moved_bits, w->moved, &w->moved_count);
    memset(w->spawn_bits, 0, ((w->capacity + 63) / 64) * sizeof *w->spawn_bits);
    for (size_t k = 0; k < w->pending_spawned_count; k++) {
        uint32_t slot = w->pending_spawned[k];
        w->slots[slot].flags &= (uint8_t)~WORLD_SLOT_SPAWNED;
        w->spawn_bits[slot >> 6] |= 1ull << (slot & 63);
    }
    w->pending_spawned_count = 0;
    bits_to_ids(w, w->spawn_bits, w->spawned, &w->spawned_count);
    memcpy(w->despawned, w->pending_despawned, w->pending_despawned_count * sizeof *w->despawned);
    w->despawned_count = w->pending_despawned_count;
    w->pending_despawned_count = 0;
    sort_u32(w->despawned, w->despawned_count);
}

uint64_t world_tick(const world *w) { return w->tick; }

void world_last_changes(const world *w, world_changes *out) {
    out->moved = w->moved;
    out->moved_count = w->moved_count;
    out->spawned = w->spawned;
    out->spawned_count = w->spawned_count;
    out->despawned = w->despawned;
    out->despawned_count = w->despawned_count;
}

/* ---- queries --------------------------------------------------------------------------------- */

bool world_body_alive(const world *w, world_body_id id) { return id_slot(w, id) != UINT32_MAX; }

bool world_body_get(const world *w, world_body_id id, world_body_info *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    const world_slot *s = &w->slots[slot];
    memset(out, 0, sizeof *out);
    out->id = id;
    out->kind = (world_body_kind)s->kind;
    if (s->kind == WORLD_BODY_STATIC) {
        const world_static *st = &w->statics[s->index];
        out->position = st->position;
        out->bounds = st->box;
        out->changed_tick = st->spawn_tick;
    } else {
        const world_mover *m = &w->movers[s->index];
        out->owner = m->owner;
        out->position = m->position;
        out->velocity = m->velocity;
        out->intent = m->intent;
        out->last_input_seq = m->applied_seq;
        out->changed_tick = m->changed_tick;
        out->bounds = box_at(m->position, m->lo, m->hi);
    }
    return true;
}

bool world_body_shape(const world *w, world_body_id id, geom_shape *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    const world_slot *s = &w->slots[slot];
    uint32_t ref;
    vec2 hi;
    if (s->kind == WORLD_BODY_STATIC) {
        ref = w->statics[s->index].shape;
        hi = static_hi(&w->statics[s->index]);
    } else {
        ref = w->movers[s->index].shape;
        hi = w->movers[s->index].hi;
    }
    geom_shape tmp;
    *out = *ref_shape(w, ref, hi, &tmp);
    return true;
}

typedef struct collect_ctx {
    aabb box;       /* the query box */
    uint32_t count; /* slots collected */
    bool exact;     /* world_query_box: the body's shape must overlap the box, not only its AABB */
    geom_shape box_shape; /* exact: the query box as a shape centred on box_centre */
    vec2 box_centre;      /* exact: centre of the query box */
} collect_ctx;

/* The exact test of world_query_box, after the AABB test passed. Boxes too go through
 * geom_overlap, so the result is exactly what the header promises, rounding included. */
static bool collect_exact(const world *w, const collect_ctx *c, uint32_t ref, vec2 pos, vec2 hi) {
    if (!c->exact) return true;
    geom_shape tmp;
    return geom_overlap(ref_shape(w, ref, hi, &tmp), pos, &c->box_shape, c->box_centre, NULL);
}

static bool collect_static(const world *w, uint32_t si, void *vctx) {
    collect_ctx *c = vctx;
    const world_static *s = &w->statics[si];
    if (c->count < w->cache->result_cap && aabb_overlaps(s->box, c->box) &&
        collect_exact(w, c, s->shape, s->position, static_hi(s)))
        w->cache->results[c->count++] = s->slot;
    return true;
}

static bool collect_mover(const world *w, uint32_t i, void *vctx) {
    collect_ctx *c = vctx;
    if (i >= w->mover_count) return true;
    const world_mover *m = &w->movers[i];
    if (c->count < w->cache->result_cap &&
        aabb_overlaps(box_at(m->position, m->lo, m->hi), c->box) &&
        collect_exact(w, c, m->shape, m->position, m->hi))
        w->cache->results[c->count++] = m->slot;
    return true;
}

static void ensure_grid(const world *w) {
    if (!w->cache->grid.valid) grid_build_current(w, 0.0f);
}

static size_t query_collect(const world *w, collect_ctx c, unsigned kinds, world_body_id *out,
                            size_t max) {
    aabb box = c.box;
    if (kinds == 0) kinds = (1u << WORLD_BODY_STATIC) | (1u << WORLD_BODY_MOVING);
    if (kinds & (1u << WORLD_BODY_STATIC)) static_query(w, box, collect_static, &c);
    if (kinds & (1u << WORLD_BODY_MOVING)) {
        ensure_grid(w);
        const world_grid *g = &w->cache->grid;
        grid_query(w, g, box, collect_mover, &c);
    }
    uint32_t *r = w->cache->results;
    sort_u32(r, c.count);
    size_t unique = 0;
    for (uint32_t i = 0; i < c.count; i++) {
        if (unique > 0 && r[unique - 1] == r[i]) continue;
        r[unique++] = r[i];
    }
    for (size_t i = 0; i < unique && i < max; i++)
        out[i] = slot_id(w, r[i]);
    return unique;
}

size_t world_query_aabb(const world *w, aabb box, unsigned kinds, world_body_id *out, size_t max) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return 0;
    collect_ctx c = {.box = box};
    return query_collect(w, c, kinds, out, max);
}

size_t world_query_box(const world *w, aabb box, unsigned kinds, world_body_id *out, size_t max) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return 0;
    if (!(box.min.x < box.max.x) || !(box.min.y < box.max.y)) return 0; /* empty: nothing inside */
    collect_ctx c = {.box = box, .exact = true};
    c.box_shape.kind = GEOM_SHAPE_BOX;
    c.box_shape.u.half_extents = v2_scale(v2_sub(box.max, box.min), 0.5f);
    c.box_centre = v2_scale(v2_add(box.min, box.max), 0.5f);
    return query_collect(w, c, kinds, out, max);
}

typedef struct ray_ctx {
    vec2 origin, d;        /* the segment */
    uint32_t ignore_slot;  /* skipped */
    world_ray_result best; /* closest so far (t = WORLD_NO_HIT when none) */
} ray_ctx;

static void ray_offer(const world *w, ray_ctx *c, uint32_t slot, uint32_t ref, vec2 pos, vec2 hi) {
    if (slot == c->ignore_slot) return;
    geom_shape tmp;
    geom_ray_hit h;
    if (geom_ray_cast(ref_shape(w, ref, hi, &tmp), pos, c->origin, c->d, &h) && h.t < c->best.t) {
        c->best.t = h.t;
        c->best.normal = h.normal;
        c->best.id = slot_id(w, slot);
    }
}

static bool ray_static(const world *w, uint32_t si, void *vctx) {
    const world_static *s = &w->statics[si];
    ray_offer(w, vctx, s->slot, s->shape, s->position, static_hi(s));
    return true;
}

static bool ray_mover(const world *w, uint32_t i, void *vctx) {
    if (i >= w->mover_count) return true;
    const world_mover *m = &w->movers[i];
    ray_offer(w, vctx, m->slot, m->shape, m->position, m->hi);
    return true;
}

bool world_ray_cast(const world *w, vec2 origin, vec2 displacement, world_body_id ignore,
                    world_ray_result *out) {
    if (!v2_is_finite(origin) || !v2_is_finite(displacement)) return false;
    ray_ctx c;
    memset(&c, 0, sizeof c);
    c.origin = origin;
    c.d = displacement;
    c.ignore_slot = id_slot(w, ignore);
    c.best.t = WORLD_NO_HIT;
    /* bounds: the segment leaving the box from inside */
    const aabb *b = &w->cfg.bounds;
    float tb = WORLD_NO_HIT;
    vec2 nb = v2(0, 0);
    if (displacement.x > 0.0f && origin.x + displacement.x > b->max.x)
        tb = (b->max.x - origin.x) / displacement.x, nb = v2(-1.0f, 0.0f);
    if (displacement.x < 0.0f && origin.x + displacement.x < b->min.x)
        tb = (b->min.x - origin.x) / displacement.x, nb = v2(1.0f, 0.0f);
    if (displacement.y > 0.0f && origin.y + displacement.y > b->max.y) {
        float t = (b->max.y - origin.y) / displacement.y;
        if (t < tb) tb = t, nb = v2(0.0f, -1.0f);
    }
    if (displacement.y < 0.0f && origin.y + displacement.y < b->min.y) {
        float t = (b->min.y - origin.y) / displacement.y;
        if (t < tb) tb = t, nb = v2(0.0f, 1.0f);
    }
    if (tb <= 1.0f) {
        c.best.t = tb < 0.0f ? 0.0f : tb;
        c.best.normal = nb;
        c.best.id = WORLD_NULL_BODY;
    }
    /* Walk the segment in chunks so a long ray visits only the cells along it. */
    float len = wmax(fabsf(displacement.x), fabsf(displacement.y));
    float cell = w->levels[0].cell;
    float chunks_f = ceilf(len / (4.0f * cell));
    int32_t chunks = chunks_f < 1.0f ? 1 : chunks_f > 1e5f ? 100000 : (int32_t)chunks_f;
    ensure_grid(w);
    const world_grid *g = &w->cache->grid;
    for (int32_t k = 0; k < chunks; k++) {
        float ts = (float)k / (float)chunks, te = (float)(k + 1) / (float)chunks;
        if (ts > c.best.t) break;
        vec2 a = v2_mul_add(origin, ts, displacement), e = v2_mul_add(origin, te, displacement);
        aabb q = aabb_inflate(aabb_make(v2_min(a, e), v2_max(a, e)), WORLD_QUERY_MARGIN);
        static_query(w, q, ray_static, &c);
        grid_query(w, g, q, ray_mover, &c);
    }
    if (c.best.t > 1.0f) return false;
    c.best.point = v2_mul_add(origin, c.best.t, displacement);
    *out = c.best;
    return true;
}

void world_get_stats(const world *w, world_stats *out) {
    memset(out, 0, sizeof *out);
    out->static_bodies = w->static_count;
    out->moving_bodies = w->mover_count;
    out->capacity = w->capacity;
    out->swept_hits = w->swept_hits;
    out->separations = w->separations;
    out->jammed = w->jammed;
    out->bytes = w->bytes;
}

size_t world_last_jams(const world *w, world_body_id (*out)[2], size_t max) {
    size_t stored = w->jam_count < WORLD_MAX_JAM_REPORT ? w->jam_count : WORLD_MAX_JAM_REPORT;
    for (size_t k = 0; k < stored && k < max; k++) {
        out[k][0] = w->jams[k][0];
        out[k][1] = w->jams[k][1];
    }
    return w->jam_count;
}

/* FNV-1a over the state in slot order. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t world_state_hash(const world *w) {
    uint64_t h = 14695981039346656037ull;
    h = hash_bytes(h, &w->tick, sizeof w->tick);
    for (uint32_t slot = 0; slot < w->capacity; slot++) {
        const world_slot *s = &w->slots[slot];
        if (!s->kind) continue;
        world_body_id id = slot_id(w, slot);
        h = hash_bytes(h, &id, sizeof id);
        h = hash_bytes(h, &s->kind, sizeof s->kind);
        if (s->kind == WORLD_BODY_STATIC) {
            h = hash_bytes(h, &w->statics[s->index].position, sizeof(vec2));
        } else {
            const world_mover *m = &w->movers[s->index];
            h = hash_bytes(h, &m->position, sizeof m->position);
            h = hash_bytes(h, &m->velocity, sizeof m->velocity);
            h = hash_bytes(h, &m->intent, sizeof m->intent);
            h = hash_bytes(h, &m->pending_seq, sizeof m->pending_seq);
            h = hash_bytes(h, &m->applied_seq, sizeof m->applied_seq);
        }
    }
    return h;
}

/* world_query: the spatial queries. The game queries (world_query_ray, _overlap, _shape_cast:
 * turned shapes, filters, the first hit or all, the present or a tick kept in world_history) and
 * world_query_aabb, the box query net's view index reads. All are const: they share the lazily
 * built mover grid and a result buffer in world_cache. */
#include "world_history.h"
#include "world_movers.h"
#include "world_statics.h"

typedef struct collect_ctx {
    aabb box;       /* the query box */
    uint32_t count; /* slots collected */
} collect_ctx;

static bool collect_static(const world *w, uint32_t si, void *vctx) {
    collect_ctx *c = vctx;
    const world_static *s = &w->statics[si];
    if (c->count < w->cache->result_cap && aabb_overlaps(s->box, c->box))
        w->cache->results[c->count++] = s->slot;
    return true;
}

static bool collect_mover(const world *w, uint32_t i, void *vctx) {
    collect_ctx *c = vctx;
    if (i >= w->mover_count) return true;
    const world_mover *m = &w->movers[i];
    if (c->count < w->cache->result_cap && aabb_overlaps(box_at(m->position, m->lo, m->hi), c->box))
        w->cache->results[c->count++] = m->slot;
    return true;
}

static void ensure_grid(const world *w) {
    if (!w->cache->grid.valid) world_grid_build_current(w, 0.0f);
}

static size_t query_collect(const world *w, collect_ctx c, unsigned kinds, world_body_id *out,
                            size_t max) {
    aabb box = c.box;
    if (kinds == 0) kinds = (1u << WORLD_BODY_STATIC) | (1u << WORLD_BODY_MOVING);
    if (kinds & (1u << WORLD_BODY_STATIC)) world_static_query(w, box, collect_static, &c);
    if (kinds & (1u << WORLD_BODY_MOVING)) {
        ensure_grid(w);
        const world_grid *g = &w->cache->grid;
        world_grid_query(w, g, box, collect_mover, &c);
    }
    uint32_t *r = w->cache->results;
    world_sort_u32(r, c.count);
    size_t unique = 0;
    for (uint32_t i = 0; i < c.count; i++) {
        if (unique > 0 && r[unique - 1] == r[i]) continue;
        r[unique++] = r[i];
    }
    /* Slot order is id order only within one generation (make_id): sorted again as ids. */
    bool sorted = true;
    for (size_t i = 0; i < unique; i++) {
        r[i] = slot_id(w, r[i]);
        sorted &= i == 0 || r[i - 1] < r[i];
    }
    if (!sorted) world_sort_u32(r, unique);
    for (size_t i = 0; i < unique && i < max; i++)
        out[i] = r[i];
    return unique;
}

size_t world_query_aabb(const world *w, aabb box, unsigned kinds, world_body_id *out, size_t max) {
    if (!v2_is_finite(box.min) || !v2_is_finite(box.max)) return 0;
    collect_ctx c = {.box = box};
    return query_collect(w, c, kinds, out, max);
}

/* ---- Game queries (world.h "Game queries") -------------------------------------------------
 *
 * One walk for the three kinds: the candidate region (the shape's box, or the ray or sweep cut in
 * chunks of a few cells, only the part inside the bounds where bodies can be) is handed to the
 * static grid and to the movers (the present grid, or a history frame), each candidate passes the
 * filter, then its exact test, and the hits are kept in `out`, sorted, at most `max` of them. */

typedef enum game_query_kind { GQ_RAY, GQ_OVERLAP, GQ_CAST } game_query_kind;

/* The weights of world_query_result.work, in units of one finest-level cell covered (an
 * occupancy bit, a bucket of the mover grid or of a history frame; the cheapest step): a region
 * walked (each chunk of a ray or sweep, an overlap's one box: every active level, the movers'
 * index) costs about 256 cells, a candidate visited or an exact test 16, a kept hit moved aside
 * for a better one (a big overlap's sorted answer) 2. Measured with bench_query_work on the
 * default arena with 1,000 and 5,000 players: a unit then costs 0.3-1.0 ns from a 10-cell ray to
 * an overlap of the whole arena (docs/perf/world.md, issue 32), so work tracks time within ~3x;
 * the whole-arena overlaps are the cheap end, charged on the safe side. */
#define WORLD_QUERY_WORK_REGION 256u
#define WORLD_QUERY_WORK_BODY 16u
#define WORLD_QUERY_WORK_MOVED 2u

typedef struct game_query {
    game_query_kind kind;
    world_query_filter filter;
    const geom_shape *shape; /* overlap and cast: the query shape, turned already */
    vec2 origin;             /* the ray's origin or the shape's position */
    vec2 d;                  /* the translation (zero for an overlap) */
    size_t cap;              /* hits kept: 1 for a first-hit cast, else max */
    bool multi;              /* `all` or an overlap: truncation is reported */
    bool filtering;          /* the filter can refuse a body (else query_passes is skipped) */
    aabb region;             /* the current chunk's box: candidates whose box misses it wait */
    const world_hist_frame *frame; /* the movers' frame, NULL for the mover grid */
    world_hit *out;                /* kept hits, sorted (see hit_before) */
    size_t count;                  /* entries in out */
    bool truncated;                /* a hit was dropped for the cap */
    uint64_t work;                 /* cells, regions, candidates and tests, weighted */
    bool one_way; /* the body under test is one-way and the ray or cast runs against its up
                   * direction: a start inside it is no hit (world_one_way.c) */
} game_query;

/* A body's category and sensor flag (world_body_set_filter); the defaults while no body has
 * another filter. */
static inline uint32_t query_body_category(const world *w, uint32_t slot) {
    return w->filtered_count ? w->filters[slot].category : WORLD_DEFAULT_CATEGORY;
}
static inline bool query_body_sensor(const world *w, uint32_t slot) {
    return slot_is_sensor(w, slot);
}

static bool query_passes(const world *w, const game_query *q, uint32_t slot, world_body_id id) {
    const world_query_filter *f = &q->filter;
    if (f->category_mask && !(query_body_category(w, slot) & f->category_mask)) return false;
    if (!f->include_sensors && query_body_sensor(w, slot)) return false;
    size_t lo = 0, hi = f->exclude_count; /* sorted: a binary search, whatever the list's length */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->exclude[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !(lo < f->exclude_count && f->exclude[lo] == id);
}

/* Casts order by fraction then id, overlaps by id. */
static bool hit_before(const game_query *q, const world_hit *a, const world_hit *b) {
    if (q->kind != GQ_OVERLAP && a->fraction != b->fraction) return a->fraction < b->fraction;
    return a->id < b->id;
}

static void keep_hit(game_query *q, const world_hit *h) {
    if (q->count < q->cap && (q->count == 0 || hit_before(q, &q->out[q->count - 1], h))) {
        q->out[q->count++] = *h; /* after every kept hit (the walks often find them in order) */
        return;
    }
    size_t lo = 0, hi = q->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hit_before(q, &q->out[mid], h))
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The same body again (a neighbouring chunk): its test gives the same hit, found here. */
    if (lo < q->count && q->out[lo].id == h->id) return;
    if (lo >= q->cap) {
        q->truncated = q->multi;
        return;
    }
    if (q->count == q->cap) {
        q->count--; /* the last one goes */
        q->truncated = q->multi;
    }
    q->work += WORLD_QUERY_WORK_MOVED * (q->count - lo); /* a big overlap's main cost */
    memmove(&q->out[lo + 1], &q->out[lo], (q->count - lo) * sizeof *q->out);
    q->out[lo] = *h;
    q->count++;
}

/* support_mid and surface_point for a box of half extents he at pos: the general functions' box
 * case, and the box-box overlap's fast path (so both give the same bits). */
static inline vec2 box_support_mid(vec2 he, vec2 pos, vec2 n) {
    const float tie = 1e-6f;
    return v2(pos.x + (n.x > tie    ? he.x
                       : n.x < -tie ? -he.x
                                    : 0.0f),
              pos.y + (n.y > tie    ? he.y
                       : n.y < -tie ? -he.y
                                    : 0.0f));
}

static inline vec2 box_surface_point(vec2 he, vec2 pos, vec2 q) {
    vec2 lo = v2_sub(pos, he), hi = v2_add(pos, he);
    vec2 c = v2_max(lo, v2_min(hi, q));
    if (c.x != q.x || c.y != q.y) return c; /* outside: the clamp is on the boundary */
    float dl = q.x - lo.x, dr = hi.x - q.x, db = q.y - lo.y, dt = hi.y - q.y;
    float m = wmin(wmin(dl, dr), wmin(db, dt));
    if (m == dl) return v2(lo.x, q.y);
    if (m == dr) return v2(hi.x, q.y);
    if (m == db) return v2(q.x, lo.y);
    return v2(q.x, hi.y);
}

/* The point of shape s at pos farthest along n; on a tie (a face along n) the middle of the tied
 * points, so a face contact is reported in the middle of the face rather than at one corner. */
static vec2 support_mid(const geom_shape *s, vec2 pos, vec2 n) {
    switch (s->kind) {
    case GEOM_SHAPE_CIRCLE:
        return v2_mul_add(pos, s->u.radius, n);
    case GEOM_SHAPE_BOX:
        return box_support_mid(s->u.half_extents, pos, n);
    default: {
        const geom_polygon *p = &s->u.polygon;
        float best = -INFINITY, scale = 0.0f;
        for (int i = 0; i < p->count; i++) {
            best = wmax(best, v2_dot(p->vertices[i], n));
            scale = wmax(scale, fabsf(p->vertices[i].x) + fabsf(p->vertices[i].y));
        }
        vec2 sum = v2(0.0f, 0.0f);
        int k = 0;
        for (int i = 0; i < p->count; i++)
            if (v2_dot(p->vertices[i], n) >= best - 1e-6f * scale)
                sum = v2_add(sum, p->vertices[i]), k++;
        return v2_add(pos, v2_scale(sum, 1.0f / (float)k));
    }
    }
}

/* The point of the boundary of shape s at pos closest to q. */
static vec2 surface_point(const geom_shape *s, vec2 pos, vec2 q) {
    switch (s->kind) {
    case GEOM_SHAPE_CIRCLE: {
        vec2 n = v2_normalize(v2_sub(q, pos));
        if (n.x == 0.0f && n.y == 0.0f) n = v2(0.0f, 1.0f);
        return v2_mul_add(pos, s->u.radius, n);
    }
    case GEOM_SHAPE_BOX:
        return box_surface_point(s->u.half_extents, pos, q);
    default: {
        const geom_polygon *p = &s->u.polygon;
        vec2 best = v2_add(pos, p->vertices[0]);
        float best_d = INFINITY;
        for (int i = 0; i < p->count; i++) {
            vec2 a = v2_add(pos, p->vertices[i]), b = v2_add(pos, p->vertices[(i + 1) % p->count]);
            vec2 e = v2_sub(b, a);
            float len_sq = v2_len_sq(e);
            float t = len_sq > 0.0f ? v2_dot(v2_sub(q, a), e) / len_sq : 0.0f;
            t = wmax(0.0f, wmin(1.0f, t));
            vec2 c = v2_mul_add(a, t, e);
            float d = v2_len_sq(v2_sub(q, c));
            if (d < best_d) best_d = d, best = c;
        }
        return best;
    }
    }
}

/* The exact test of one candidate that passed the filter: the body `id` of shape s at pos. */
static void query_test(game_query *q, world_body_id id, const geom_shape *s, vec2 pos) {
    world_hit h = {.id = id};
    q->work += WORLD_QUERY_WORK_BODY;
    geom_contact c;
    switch (q->kind) {
    case GQ_RAY:
        if (geom_shape_contains_point(s, pos, q->origin)) {
            if (q->one_way) return;
            h.point = q->origin; /* starts inside: fraction 0, no direction pushes a point out */
        } else {
            geom_ray_hit r;
            if (!geom_ray_cast(s, pos, q->origin, q->d, &r)) return;
            h.fraction = r.t;
            h.normal = r.normal;
            h.point = v2_mul_add(q->origin, r.t, q->d);
        }
        break;
    case GQ_OVERLAP:
        /* boxes among boxes (a tile map): the fast path, identical to geom_overlap (geom.h) and
         * to the general hit point below */
        if (s->kind == GEOM_SHAPE_BOX && q->shape->kind == GEOM_SHAPE_BOX) {
            vec2 qhe = q->shape->u.half_extents, hi = s->u.half_extents;
            if (!geom_box_box_overlap(qhe, q->origin, hi, pos, &c)) return;
            h.normal = v2_neg(c.normal);
            h.depth = c.depth;
            h.point = box_surface_point(
                hi, pos, v2_mul_add(box_support_mid(qhe, q->origin, c.normal), -c.depth, c.normal));
            break;
        }
        if (!geom_overlap(q->shape, q->origin, s, pos, &c)) return;
        h.normal = v2_neg(c.normal);
        h.depth = c.depth;
        h.point = surface_point(
            s, pos, v2_mul_add(support_mid(q->shape, q->origin, c.normal), -c.depth, c.normal));
        break;
    case GQ_CAST:
        if (geom_overlap(q->shape, q->origin, s, pos, &c)) {
            if (q->one_way) return;
            h.point = q->origin; /* starts inside: fraction 0, pushed out along the MTV */
            h.normal = v2_neg(c.normal);
            h.depth = c.depth;
        } else {
            geom_toi toi;
            if (!geom_sweep(q->shape, q->origin, q->d, s, pos, v2(0.0f, 0.0f), &toi)) return;
            h.fraction = toi.t;
            h.normal = v2_neg(toi.normal);
            /* where the cast shape, placed at the time of impact, touches the body */
            h.point =
                geom_touch_point(q->shape, v2_mul_add(q->origin, toi.t, q->d), s, pos, toi.normal);
        }
        break;
    }
    keep_hit(q, &h);
}

/* query_test for a ray or cast and a one-way body (angle q: (1, 0) unturned): a hit only when it
 * runs against the body's up direction, and not from a start inside it. */
static void query_test_one_way(const world *w, game_query *q, uint32_t slot, vec2 qa,
                               world_body_id id, const geom_shape *s, vec2 pos) {
    if (world_one_way_ray_passes(w, slot, qa, q->d)) return;
    q->one_way = true;
    query_test(q, id, s, pos);
    q->one_way = false;
}
static inline bool query_one_way(const world *w, const game_query *q, uint32_t slot) {
    return w->one_way_count && q->kind != GQ_OVERLAP && w->one_way[slot].on;
}

/* The exact test of one candidate: the body `id` (in `slot`) of shape `ref` at pos. */
static inline void query_offer(const world *w, game_query *q, uint32_t slot, world_body_id id,
                               uint32_t ref, vec2 pos, vec2 hi) {
    if (q->filtering && !query_passes(w, q, slot, id)) return;
    geom_shape tmp;
    const geom_shape *s = ref_shape(w, ref, hi, &tmp);
    if (query_one_way(w, q, slot)) {
        vec2 qa = ref_kind(ref) == WORLD_REF_TURNED ? w->turns[slot].q : v2(1.0f, 0.0f);
        query_test_one_way(w, q, slot, qa, id, s, pos);
        return;
    }
    query_test(q, id, s, pos);
}

static bool query_static(const world *w, uint32_t si, void *vctx) {
    game_query *q = vctx;
    q->work += WORLD_QUERY_WORK_BODY;
    const world_static *s = &w->statics[si];
    /* the walk tested the static's box against q->region already (query_region) */
    query_offer(w, q, s->slot, slot_id(w, s->slot), s->shape, s->position, static_hi(s));
    return true;
}

static bool query_mover(const world *w, uint32_t i, void *vctx) {
    game_query *q = vctx;
    q->work += WORLD_QUERY_WORK_BODY;
    if (i >= w->mover_count) return true;
    const world_mover *m = &w->movers[i];
    if (aabb_meets(box_at(m->position, m->lo, m->hi), q->region))
        query_offer(w, q, m->slot, slot_id(w, m->slot), m->shape, m->position, m->hi);
    return true;
}

/* A mover as a history frame recorded it: its shape from the live body (shapes never change), a
 * turned body's turned by the angle it had then. */
static bool query_record(const world *w, const world_hist_rec *r, void *vctx) {
    game_query *q = vctx;
    q->work += WORLD_QUERY_WORK_BODY;
    uint32_t slot = id_slot(w, r->id);
    if (slot == UINT32_MAX) return true; /* despawned since: its shape is gone */
    const world_mover *m = &w->movers[w->slots[slot].index];
    if (ref_kind(m->shape) == WORLD_REF_TURNED) {
        geom_shape local, s;
        vec2 qa = geom_turn_start(r->angle); /* as world_turn's q */
        geom_shape_orient(turn_local(w, &w->turns[slot], &local), qa, &s);
        if (!aabb_meets(geom_shape_aabb(&s, r->position), q->region) ||
            (q->filtering && !query_passes(w, q, slot, r->id)))
            return true;
        if (query_one_way(w, q, slot))
            query_test_one_way(w, q, slot, qa, r->id, &s, r->position);
        else
            query_test(q, r->id, &s, r->position);
        return true;
    }
    if (aabb_meets(box_at(r->position, m->lo, m->hi), q->region))
        query_offer(w, q, slot, r->id, m->shape, r->position, m->hi);
    return true;
}

/* query_record for a frame of live movers of one shape (world_history_frame_same_shape): the
 * record alone says all, no lookup of the mover (two dependent loads from large arrays). */
static bool query_record_same_shape(const world *w, const world_hist_rec *r, void *vctx) {
    game_query *q = vctx;
    q->work += WORLD_QUERY_WORK_BODY;
    const world_hist_frame *f = q->frame;
    if (aabb_meets(box_at(r->position, v2_neg(f->hi), f->hi), q->region))
        query_offer(w, q, id_slot_bits(w, r->id), r->id, f->shape, r->position, f->hi);
    return true;
}

/* The finest level's cells of box inside the bounds: the walks' cost that grows with the area
 * even where no body is (the occupancy bits, the mover grid's buckets, the history's cells). */
static uint64_t region_cells(const world *w, aabb box) {
    aabb b = w->cfg.bounds;
    float inv = w->levels[0].inv_cell;
    float dx = wmin(box.max.x, b.max.x) - wmax(box.min.x, b.min.x);
    float dy = wmin(box.max.y, b.max.y) - wmax(box.min.y, b.min.y);
    if (!(dx >= 0.0f) || !(dy >= 0.0f)) return 1;
    return (uint64_t)(floorf(dx * inv) + 1.0f) * (uint64_t)(floorf(dy * inv) + 1.0f);
}

static void query_region(const world *w, game_query *q, const world_hist_frame *frame, aabb box) {
    unsigned kinds = q->filter.kinds;
    q->region = box;
    q->work += WORLD_QUERY_WORK_REGION + region_cells(w, box);
    if (kinds & (1u << WORLD_BODY_STATIC)) world_static_walk(w, box, query_static, q);
    if (!(kinds & (1u << WORLD_BODY_MOVING))) return;
    if (frame && world_history_frame_same_shape(w, frame)) {
        q->frame = frame;
        world_history_walk(w, frame, box, query_record_same_shape, q);
    } else if (frame) {
        world_history_walk(w, frame, box, query_record, q);
    } else {
        ensure_grid(w);
        world_grid_query(w, &w->cache->grid, box, query_mover, q);
    }
}

/* The part [t0, t1] of the motion of box along d during which it meets `area`; false if none. */
static bool clip_motion(aabb box, vec2 d, aabb area, float *t0, float *t1) {
    float a = 0.0f, b = 1.0f;
    const float lo[2] = {area.min.x - box.max.x, area.min.y - box.max.y};
    const float hi[2] = {area.max.x - box.min.x, area.max.y - box.min.y};
    const float dd[2] = {d.x, d.y};
    for (int k = 0; k < 2; k++) {
        if (dd[k] == 0.0f) {
            if (lo[k] > 0.0f || hi[k] < 0.0f) return false;
            continue;
        }
        float ta = lo[k] / dd[k], tb = hi[k] / dd[k];
        if (ta > tb) {
            float t = ta;
            ta = tb, tb = t;
        }
        a = wmax(a, ta), b = wmin(b, tb);
    }
    *t0 = a, *t1 = b;
    return a <= b;
}

/* Rays and casts: the sweep of `box` (the query's box at the start) along d, in chunks of a few
 * cells from the start, stopping once no later hit can change the answer. */
static void query_walk(const world *w, game_query *q, const world_hist_frame *frame, aabb box) {
    float t0, t1;
    aabb area = aabb_inflate(w->cfg.bounds, WORLD_QUERY_MARGIN);
    if (!clip_motion(box, q->d, area, &t0, &t1)) return;
    float len = (t1 - t0) * wmax(fabsf(q->d.x), fabsf(q->d.y));
    float chunks_f = ceilf(len / w->levels[0].cell);
    int32_t chunks = !(chunks_f >= 1.0f) ? 1 : chunks_f > 1e5f ? 100000 : (int32_t)chunks_f;
    for (int32_t k = 0; k < chunks; k++) {
        float ts = t0 + (t1 - t0) * (float)k / (float)chunks;
        float te = k + 1 == chunks ? t1 : t0 + (t1 - t0) * (float)(k + 1) / (float)chunks;
        /* Every body touched before ts was met by an earlier chunk: when the kept hits are full
         * and (for `all`) one more is known to exist, nothing later can enter the answer. */
        if (q->count == q->cap && (!q->multi || q->truncated) && ts > q->out[q->count - 1].fraction)
            break;
        aabb a = aabb_translate(box, v2_scale(q->d, ts)),
             e = aabb_translate(box, v2_scale(q->d, te));
        query_region(w, q, frame, aabb_inflate(aabb_union(a, e), WORLD_QUERY_MARGIN));
    }
}

/* Checks at_tick; the history frame to answer from (NULL: the present) and the tick. */
static world_status query_tick(const world *w, uint64_t at_tick, const world_hist_frame **frame,
                               uint64_t *tick) {
    *frame = NULL;
    *tick = w->tick;
    if (at_tick == 0 || at_tick == w->tick) {
        /* The present is the newest frame while no body has been spawned since the step (movers
         * move only in steps; a despawned one is skipped by its stale id): the frame's cells are
         * a tighter index than the mover grid, built for the step's expected paths. */
        if (w->pending_spawned_count == 0) *frame = world_history_frame(w, w->tick);
        return WORLD_OK;
    }
    if (at_tick > w->tick) return WORLD_ERR_FUTURE_TICK;
    *frame = world_history_frame(w, at_tick);
    if (!*frame) return WORLD_ERR_HISTORY_EXPIRED;
    *tick = at_tick;
    return WORLD_OK;
}

static world_status query_begin(const world *w, game_query *q, game_query_kind kind,
                                uint64_t at_tick, const world_query_filter *filter, bool all,
                                world_hit *out, size_t max, world_query_result *result,
                                const world_hist_frame **frame) {
    memset(result, 0, sizeof *result);
    memset(q, 0, sizeof *q);
    q->kind = kind;
    if (filter) q->filter = *filter;
    if (q->filter.kinds == 0)
        q->filter.kinds = (1u << WORLD_BODY_STATIC) | (1u << WORLD_BODY_MOVING);
    if (!q->filter.exclude) q->filter.exclude_count = 0;
    q->filtering = q->filter.category_mask || q->filter.exclude_count ||
                   (!q->filter.include_sensors && w->sensor_count);
#if COLLIDE_ASSERTS
    for (size_t i = 1; i < q->filter.exclude_count; i++)
        COLLIDE_ASSERT(q->filter.exclude[i - 1] <= q->filter.exclude[i]);
#endif
    q->multi = all || kind == GQ_OVERLAP;
    q->cap = max == 0 ? 0 : q->multi ? max : 1;
    q->out = out;
    return query_tick(w, at_tick, frame, &result->tick);
}

static void query_end(const game_query *q, world_query_result *result) {
    result->count = q->count;
    result->truncated = q->truncated;
    result->work = q->work;
}

world_status world_query_ray(const world *w, uint64_t at_tick, vec2 origin, vec2 translation,
                             const world_query_filter *filter, bool all, world_hit *out, size_t max,
                             world_query_result *result) {
    game_query q;
    const world_hist_frame *frame;
    world_status st = query_begin(w, &q, GQ_RAY, at_tick, filter, all, out, max, result, &frame);
    if (st != WORLD_OK) return st;
    if (!v2_is_finite(origin) || !v2_is_finite(translation)) return WORLD_ERR_NOT_FINITE;
    if (q.cap == 0) return WORLD_OK;
    q.origin = origin;
    q.d = translation;
    query_walk(w, &q, frame, aabb_make(origin, origin));
    query_end(&q, result);
    return WORLD_OK;
}

world_status world_query_overlap(const world *w, uint64_t at_tick, const geom_shape *shape,
                                 vec2 position, const world_query_filter *filter, world_hit *out,
                                 size_t max, world_query_result *result) {
    game_query q;
    const world_hist_frame *frame;
    world_status st =
        query_begin(w, &q, GQ_OVERLAP, at_tick, filter, true, out, max, result, &frame);
    if (st != WORLD_OK) return st;
    if (!shape || geom_shape_validate(shape) != GEOM_OK) return WORLD_ERR_INVALID_SHAPE;
    if (!v2_is_finite(position)) return WORLD_ERR_NOT_FINITE;
    if (q.cap == 0) return WORLD_OK;
    q.shape = shape;
    q.origin = position;
    query_region(w, &q, frame, aabb_inflate(geom_shape_aabb(shape, position), WORLD_QUERY_MARGIN));
    query_end(&q, result);
    return WORLD_OK;
}

world_status world_query_shape_cast(const world *w, uint64_t at_tick, const geom_shape *shape,
                                    vec2 position, vec2 translation,
                                    const world_query_filter *filter, bool all, world_hit *out,
                                    size_t max, world_query_result *result) {
    game_query q;
    const world_hist_frame *frame;
    world_status st = query_begin(w, &q, GQ_CAST, at_tick, filter, all, out, max, result, &frame);
    if (st != WORLD_OK) return st;
    if (!shape || geom_shape_validate(shape) != GEOM_OK) return WORLD_ERR_INVALID_SHAPE;
    if (!v2_is_finite(position) || !v2_is_finite(translation)) return WORLD_ERR_NOT_FINITE;
    if (q.cap == 0) return WORLD_OK;
    q.shape = shape;
    q.origin = position;
    q.d = translation;
    query_walk(w, &q, frame, geom_shape_aabb(shape, position));
    query_end(&q, result);
    return WORLD_OK;
}

/* world_query: AABB and box queries and ray casts (const: they share the lazily built mover grid
 * and a result buffer in world_cache). */
#include "world_movers.h"
#include "world_statics.h"

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
        world_static_query(w, q, ray_static, &c);
        world_grid_query(w, g, q, ray_mover, &c);
    }
    if (c.best.t > 1.0f) return false;
    c.best.point = v2_mul_add(origin, c.best.t, displacement);
    *out = c.best;
    return true;
}

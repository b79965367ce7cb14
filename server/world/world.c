/* world: create/destroy, spawn/despawn/intents, getters, stats, the state hash and validation;
 * the tick and the structures it walks live in the files world_internal.h lists. */
#include "world_character.h"
#include "world_history.h"
#include "world_movers.h"
#include "world_statics.h"

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
    case WORLD_ERR_HISTORY_EXPIRED:
        return "tick older than the kept history";
    case WORLD_ERR_FUTURE_TICK:
        return "tick in the future";
    case WORLD_ERR_NO_MEMORY:
        return "out of memory";
    case WORLD_ERR_NOT_OWNER:
        return "body is not the caller's to move";
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
    cfg->max_angular_speed = WORLD_DEFAULT_MAX_ANGULAR_SPEED;
}

/* ---- create / destroy ------------------------------------------------------------------------ */

void *world_alloc(world *w, size_t count, size_t size) {
    if (count == 0) count = 1;
    void *p = calloc(count, size);
    if (p) w->bytes += count * size;
    return p;
}

/* A config world_create refuses (bounds, tick rate, speed, body count, cell size): false. The
 * rest is clamped into range, a bad value taking its default. */
static bool config_check(world_config *cfg) {
    aabb b = cfg->bounds;
    if (!v2_is_finite(b.min) || !v2_is_finite(b.max) || !(b.min.x < b.max.x) ||
        !(b.min.y < b.max.y))
        return false;
    /* A tick and a speed whose step is beyond any world's size would carry sweeps past what the
     * grids' int32 cells hold (the daemon's flags stay inside: --tick-rate 1..1000, --max-speed up
     * to 1e7). */
    if (!(cfg->tick_rate_hz >= WORLD_MIN_TICK_RATE) || !(cfg->tick_rate_hz <= 1e6f) ||
        !(cfg->max_speed > 0.0f) || !(cfg->max_speed <= WORLD_MAX_SPEED))
        return false;
    if (cfg->max_bodies == 0 || cfg->max_bodies > (1u << 24)) return false;
    if (!(cfg->cell_size >= 0.0f) || !isfinite(cfg->cell_size)) return false;
    if (cfg->slide_iterations <= 0) cfg->slide_iterations = 4;
    if (cfg->slide_iterations > 16) cfg->slide_iterations = 16;
    if (cfg->separation_passes < 0) cfg->separation_passes = 0;
    if (cfg->separation_passes > 16) cfg->separation_passes = 16;
    if (!(cfg->max_shape_size > 0.0f) || !isfinite(cfg->max_shape_size))
        cfg->max_shape_size = 1000.0f;
    if (cfg->max_shape_size > GEOM_MAX_SIZE) cfg->max_shape_size = GEOM_MAX_SIZE;
    if (!(cfg->max_angular_speed > 0.0f) || !isfinite(cfg->max_angular_speed))
        cfg->max_angular_speed = WORLD_DEFAULT_MAX_ANGULAR_SPEED;
    if (!v2_is_finite(cfg->gravity)) return false;
    /* none, or strong enough to give a direction: a gravity whose length squared underflows (a
     * denormal) would make "up" infinite (found by fuzz_journal through a damaged image) */
    double gx = cfg->gravity.x, gy = cfg->gravity.y, g = sqrt(gx * gx + gy * gy);
    if (g != 0.0 && !(g >= WORLD_MIN_GRAVITY)) return false;
    return true;
}

/* The per-body arrays, the movers' scratch, the change bits and the cache: false when one is
 * missing (world_destroy frees what was made). */
static bool bodies_alloc(world *w) {
    uint32_t cap = w->capacity, mcap = w->mover_cap;
    /* Polygons need a pool entry; boxes and circles do not. A sixteenth of the bodies, at least
     * 256. */
    w->poly_cap = cap / 16 < 256 ? 256 : cap / 16;
    w->slots = world_alloc(w, cap, sizeof *w->slots);
    w->free_slots = world_alloc(w, cap, sizeof *w->free_slots);
    w->statics = world_alloc(w, cap, sizeof *w->statics);
    w->movers = world_alloc(w, mcap, sizeof *w->movers);
    w->polys = world_alloc(w, w->poly_cap, sizeof *w->polys);
    w->free_polys = world_alloc(w, w->poly_cap, sizeof *w->free_polys);
    w->scratch.p0 = world_alloc(w, mcap, sizeof *w->scratch.p0);
    w->scratch.d1 = world_alloc(w, mcap, sizeof *w->scratch.d1);
    w->scratch.path = world_alloc(w, mcap, sizeof *w->scratch.path);
    w->scratch.p2 = world_alloc(w, mcap, sizeof *w->scratch.p2);
    w->near_cache = world_alloc(w, mcap, sizeof *w->near_cache);
    w->statics_epoch = 1; /* near_cache_epoch 0: the cache starts void */
    size_t words = (cap + 63) / 64;
    w->moved_bits = world_alloc(w, words, sizeof *w->moved_bits);
    w->spawn_bits = world_alloc(w, words, sizeof *w->spawn_bits);
    w->despawn_bits = world_alloc(w, words, sizeof *w->despawn_bits);
    w->pending_despawn_bits = world_alloc(w, words, sizeof *w->pending_despawn_bits);
    w->pending_spawned = world_alloc(w, cap, sizeof *w->pending_spawned);
    w->cache = world_alloc(w, 1, sizeof *w->cache);
    w->scratch.pair_cap = 4 * mcap;
    w->scratch.pairs = world_alloc(w, w->scratch.pair_cap, sizeof *w->scratch.pairs);
    w->scratch.adj = world_alloc(w, 2 * (size_t)w->scratch.pair_cap, sizeof *w->scratch.adj);
    w->scratch.adj_start = world_alloc(w, (size_t)mcap + 1, sizeof *w->scratch.adj_start);
    w->scratch.pushed = world_alloc(w, mcap, sizeof *w->scratch.pushed);
    w->scratch.sort_tile_cap = mcap + 1024;
    w->scratch.sort_counts =
        world_alloc(w, w->scratch.sort_tile_cap + 1, sizeof *w->scratch.sort_counts);
    return w->slots && w->free_slots && w->statics && w->movers && w->polys && w->free_polys &&
           w->scratch.p0 && w->scratch.d1 && w->scratch.path && w->scratch.p2 && w->near_cache &&
           w->moved_bits && w->spawn_bits && w->despawn_bits && w->pending_despawn_bits &&
           w->pending_spawned && w->cache && w->scratch.pairs && w->scratch.adj &&
           w->scratch.adj_start && w->scratch.sort_counts && w->scratch.pushed;
}

/* The mover hash (world_movers.c) and the query results, in the cache. */
static bool mover_grid_alloc(world *w) {
    uint32_t cap = w->capacity, mcap = w->mover_cap;
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
    return g->start && g->items && g->big && g->ranges && g->unindexed && w->cache->results;
}

float world_static_cell(const world_config *cfg) {
    vec2 ext = v2_sub(cfg->bounds.max, cfg->bounds.min);
    float cell = cfg->cell_size;
    if (cell <= 0.0f) {
        cell = 1.0f;
        double limit = 4.0 * (double)cfg->max_bodies + 4096.0;
        while (((double)ext.x / cell + 1.0) * ((double)ext.y / cell + 1.0) > limit)
            cell *= 2.0f;
    }
    return cell;
}

/* Static grid levels: finest cell = world_static_cell; then doubling up to twice the largest
 * shape. */
static bool static_levels_alloc(world *w) {
    const world_config *cfg = &w->cfg;
    vec2 ext = v2_sub(cfg->bounds.max, cfg->bounds.min);
    float cell = world_static_cell(cfg);
    while (w->level_count < WORLD_MAX_LEVELS) {
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
        if (!lv->heads) return false;
        memset(lv->heads, 0xff, (size_t)(nx * ny) * sizeof *lv->heads);
        lv->occupied = world_alloc(w, ((size_t)(nx * ny) + 63) / 64, sizeof *lv->occupied);
        if (!lv->occupied) return false;
        if (cell >= 2.0f * cfg->max_shape_size || (lv->nx <= 2 && lv->ny <= 2)) break;
        cell *= 2.0f;
    }
    return true;
}

world *world_create(const world_config *cfg_in) {
    world_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        world_config_default(&cfg);
    if (!config_check(&cfg)) return NULL;

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
    w->slot_bits = slot_bits;
    w->gen_max = (uint32_t)((1ull << (32 - slot_bits)) - 1u);

    uint32_t cap = w->capacity;
    /* Movers may be fewer than the bodies (a map of statics): their arrays are sized apart. */
    w->mover_cap =
        cfg.max_moving_bodies == 0 || cfg.max_moving_bodies > cap ? cap : cfg.max_moving_bodies;
    if (!bodies_alloc(w) || !mover_grid_alloc(w) || !static_levels_alloc(w)) {
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
    world_history_free(w);
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
        free(w->cache->rows);
        free(w->cache->row_keys);
        free(w->cache);
    }
    free(w->slots);
    free(w->free_slots);
    free(w->statics);
    free(w->movers);
    free(w->polys);
    free(w->free_polys);
    free(w->scratch.p0);
    free(w->scratch.d1);
    free(w->scratch.path);
    free(w->scratch.p2);
    free(w->near_cache);
    free(w->moved_bits);
    free(w->spawn_bits);
    free(w->despawn_bits);
    free(w->pending_despawn_bits);
    free(w->pending_spawned);
    free(w->scratch.pairs);
    free(w->scratch.adj);
    free(w->scratch.adj_start);
    free(w->scratch.sort_counts);
    free(w->scratch.pushed);
    free(w->filters);
    free(w->turns);
    free(w->turn_still);
    free(w->one_way);
    free(w->characters);
    world_events_free(w);
    free(w);
}

const world_config *world_get_config(const world *w) { return &w->cfg; }

void world_set_mover_collisions(world *w, bool enabled) { w->movers_collide = enabled; }

/* ---- spawn / despawn / intents ------------------------------------------------------------- */

/* The per-slot turn table, allocated by the first turned body. */
bool world_turns_ready(world *w) {
    if (!w->turns) {
        w->turns = world_alloc(w, w->capacity, sizeof *w->turns);
        w->turn_still = world_alloc(w, w->capacity, sizeof *w->turn_still);
        if (!w->turns || !w->turn_still) {
            if (w->turns) w->bytes -= (size_t)w->capacity * sizeof *w->turns;
            if (w->turn_still) w->bytes -= (size_t)w->capacity * sizeof *w->turn_still;
            free(w->turns);
            free(w->turn_still);
            w->turns = NULL;
            w->turn_still = NULL;
        }
    }
    return w->turns != NULL;
}

uint32_t world_turn_begin(world *w, uint32_t slot, uint32_t ref, const geom_shape *local,
                          float angle) {
    world_turn *t = &w->turns[slot];
    memset(t, 0, sizeof *t);
    memset(&w->turn_still[slot], 0, sizeof w->turn_still[slot]);
    t->angle = angle;
    t->q = geom_turn_start(angle); /* the advancement's own (cos, sin): world_turn's q0 */
    t->radius = geom_shape_radius(local);
    t->local = ref;
    if (local->kind == GEOM_SHAPE_BOX) t->half = local->u.half_extents;
    if (local->kind == GEOM_SHAPE_CIRCLE) t->half = v2(local->u.radius, local->u.radius);
    t->in_use = 1;
    return (WORLD_REF_TURNED << WORLD_REF_KIND_SHIFT) | slot;
}

world_status world_spawn(world *w, world_body_kind kind, const geom_shape *shape, vec2 position,
                         uint32_t owner, world_body_id *out_id, geom_shape_error *shape_error) {
    return world_spawn_turned(w, kind, shape, position, 0.0f, owner, out_id, shape_error);
}

world_status world_spawn_turned(world *w, world_body_kind kind, const geom_shape *shape,
                                vec2 position, float angle, uint32_t owner, world_body_id *out_id,
                                geom_shape_error *shape_error) {
    if (out_id) *out_id = WORLD_NULL_BODY;
    if (shape_error) *shape_error = GEOM_OK;
    if (kind != WORLD_BODY_STATIC && kind != WORLD_BODY_MOVING) return WORLD_ERR_INVALID_SHAPE;
    if (!v2_is_finite(position) || !isfinite(angle)) return WORLD_ERR_NOT_FINITE;
    angle = world_wrap_angle(angle);
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
    /* A spawn angle is the initial angle: the shape stays body-local, its AABB is the turned one */
    bool turned = angle != 0.0f;
    if (turned) {
        if (!world_turns_ready(w)) return WORLD_ERR_NO_MEMORY;
        local = geom_shape_aabb_xf(shape, geom_xf_make(v2(0.0f, 0.0f), angle));
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
    COLLIDE_ASSERT(slot < w->capacity && s->kind == 0 && !(s->flags & WORLD_SLOT_RETIRED));
    if (turned) ref = world_turn_begin(w, slot, ref, shape, angle);
    s->gen++;
    w->spawns++;
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
        world_static_link(w, i);
        world_events_rescan(w); /* movers at rest may now touch it */
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
    /* The last step's table, if anyone reads it, is fixed before the body goes: its rows stay
     * what the step left (world_body_table). */
    if (w->cache->rows && !w->cache->rows_built) world_table_build(w);
    world_slot *s = &w->slots[slot];
    uint32_t ref;
    /* the dense index: a slot names its body's record, and the record names the slot back */
    bool indexed = s->kind == WORLD_BODY_STATIC
                       ? s->index < w->static_count && w->statics[s->index].slot == slot
                       : s->index < w->mover_count && w->movers[s->index].slot == slot;
    COLLIDE_ASSERT(indexed);
    if (!indexed) return WORLD_ERR_NOT_FOUND;
    if (s->kind == WORLD_BODY_STATIC) {
        uint32_t i = s->index, last = w->static_count - 1;
        ref = w->statics[i].shape;
        if (ref_kind(ref) != GEOM_SHAPE_BOX) w->nonbox_statics--;
        if (ref_kind(ref) == WORLD_REF_TURNED) {
            w->turns[slot].in_use = 0;
            ref = w->turns[slot].local;
        }
        world_static_relink(w, i, w->statics[i].next);
        if (--w->levels[w->statics[i].level].count == 0) world_update_active_levels(w);
        if (i != last) {
            /* move the last static into the hole, fixing the link that pointed at it */
            world_static_relink(w, last, (int32_t)i);
            w->statics[i] = w->statics[last];
            w->slots[w->statics[i].slot].index = i;
        }
        w->static_count--;
    } else {
        uint32_t i = s->index, last = w->mover_count - 1;
        ref = w->movers[i].shape;
        w->mover_despawns++;
        if (ref_kind(ref) == WORLD_REF_TURNED) {
            w->turns[slot].in_use = 0;
            ref = w->turns[slot].local;
        }
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
        /* one per slot per interval: a body spawned into the slot since is never reported */
        w->pending_despawn_bits[slot >> 6] |= 1ull << (slot & 63);
        s->dead_gen = s->gen;
        s->dead_kind = s->kind;
    }
    world_one_way_despawn(w, slot);
    world_character_despawn(w, slot);
    if (w->filters) {
        /* the slot's next body starts with the defaults */
        if (!filter_is_default(&w->filters[slot])) w->filtered_count--;
        if (w->filters[slot].sensor) w->sensor_count--;
        w->filters[slot] = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
    }
    s->kind = 0;
    s->flags = 0;
    if (s->gen >= w->gen_max) {
        s->flags = WORLD_SLOT_RETIRED; /* its ids would wrap: never reuse it */
        w->slots_retired++;
    } else {
        w->free_slots[w->free_count++] = slot;
    }
    return WORLD_OK;
}

world_status world_body_set_filter(world *w, world_body_id id, const world_filter *filter) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    world_filter f = {WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
    if (filter) {
        f = *filter;
        if (!f.category) f.category = WORLD_DEFAULT_CATEGORY;
        if (!f.mask) f.mask = WORLD_DEFAULT_MASK;
    }
    if (!w->filters) {
        if (filter_is_default(&f)) return WORLD_OK;
        w->filters = world_alloc(w, w->capacity, sizeof *w->filters);
        if (!w->filters) return WORLD_ERR_NO_MEMORY;
        for (uint32_t k = 0; k < w->capacity; k++)
            w->filters[k] = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
    }
    bool was = !filter_is_default(&w->filters[slot]), now = !filter_is_default(&f);
    w->filtered_count += (uint32_t)now - (uint32_t)was;
    w->sensor_count += (uint32_t)f.sensor - (uint32_t)w->filters[slot].sensor;
    w->filters[slot] = f;
    w->rules_epoch++;
    world_events_rescan(w); /* pairs of this body may start or stop interacting */
    return WORLD_OK;
}

bool world_body_filter(const world *w, world_body_id id, world_filter *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    if (w->filters)
        *out = w->filters[slot];
    else
        *out = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
    return true;
}

/* Serial-number arithmetic (RFC 1982) on the 32-bit input_seq, so a client's counter may wrap
 * from 2^32 - 1 to 0: seq is newer than last when it is 1 .. 2^31 - 1 ahead of it, modulo 2^32.
 * One 2^31 or more ahead reads as behind. */
static bool input_seq_newer(uint32_t seq, uint32_t last) {
    return seq != last && seq - last < 0x80000000u;
}

/* The intent of the moving body in slot (its id looked up and its kind checked by the caller). */
static world_status intent_set(world *w, uint32_t slot, vec2 velocity, uint32_t input_seq) {
    if (!v2_is_finite(velocity)) return WORLD_ERR_NOT_FINITE;
    world_mover *m = &w->movers[w->slots[slot].index];
    /* A body's first intent has nothing to be newer than: any input_seq but 0 (the "none yet" of
     * last_input_seq) starts it, so a client may number from anywhere. */
    bool first = !(m->flags & WORLD_MOVER_HAS_INPUT);
    if (first ? input_seq == 0 : !input_seq_newer(input_seq, m->pending_seq))
        return WORLD_STALE_INPUT;
    /* in double: a finite float32 squared may overflow float */
    double len = sqrt((double)velocity.x * velocity.x + (double)velocity.y * velocity.y);
    if (len > (double)w->cfg.max_speed)
        velocity = v2((float)(velocity.x * (w->cfg.max_speed / len)),
                      (float)(velocity.y * (w->cfg.max_speed / len)));
    m->intent = velocity;
    m->pending_seq = input_seq;
    /* (a turning intent comes through here too) */
    if (ref_kind(m->shape) == WORLD_REF_TURNED) w->turn_still[slot].epoch = 0;
    m->flags |= WORLD_MOVER_HAS_INPUT;
    return WORLD_OK;
}

world_status world_set_intent(world *w, world_body_id id, vec2 velocity, uint32_t input_seq) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (w->slots[slot].kind != WORLD_BODY_MOVING) return WORLD_ERR_NOT_MOVING;
    return intent_set(w, slot, velocity, input_seq);
}

world_status world_set_intent_turning(world *w, world_body_id id, vec2 velocity,
                                      float angular_velocity, uint32_t input_seq) {
    return world_set_intent_as(w, 0, id, velocity, angular_velocity, input_seq);
}

world_status world_set_intent_as(world *w, uint32_t owner, world_body_id id, vec2 velocity,
                                 float angular_velocity, uint32_t input_seq) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    bool moving = w->slots[slot].kind == WORLD_BODY_MOVING;
    if (owner != 0 && (!moving || w->movers[w->slots[slot].index].owner != owner))
        return WORLD_ERR_NOT_OWNER;
    if (!moving) return WORLD_ERR_NOT_MOVING;
    if (!isfinite(angular_velocity)) return WORLD_ERR_NOT_FINITE;
    if (world_is_character(w, slot)) angular_velocity = 0.0f; /* characters do not turn */
    world_mover *m = &w->movers[w->slots[slot].index];
    /* A body that starts turning becomes a turned one (before the intent, so a failed table
     * allocation changes nothing). */
    if (angular_velocity != 0.0f && ref_kind(m->shape) != WORLD_REF_TURNED) {
        if (!world_turns_ready(w)) return WORLD_ERR_NO_MEMORY;
    }
    world_status st = intent_set(w, slot, velocity, input_seq);
    if (st != WORLD_OK) return st;
    float lim = w->cfg.max_angular_speed;
    float spin = angular_velocity > lim ? lim : angular_velocity < -lim ? -lim : angular_velocity;
    if (ref_kind(m->shape) != WORLD_REF_TURNED) {
        if (spin == 0.0f) return WORLD_OK;
        geom_shape tmp;
        const geom_shape *local = ref_shape(w, m->shape, m->hi, &tmp);
        geom_shape copy = *local;
        m->shape = world_turn_begin(w, slot, m->shape, &copy, 0.0f);
    }
    w->turns[slot].spin = spin;
    if (spin != 0.0f) w->turning_hint++;
    return WORLD_OK;
}

bool world_body_local_shape(const world *w, world_body_id id, geom_shape *out, float *angle) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    const world_slot *s = &w->slots[slot];
    uint32_t ref =
        s->kind == WORLD_BODY_STATIC ? w->statics[s->index].shape : w->movers[s->index].shape;
    if (ref_kind(ref) != WORLD_REF_TURNED) {
        if (angle) *angle = 0.0f;
        return world_body_shape(w, id, out);
    }
    geom_shape tmp;
    *out = *turn_local(w, &w->turns[slot], &tmp);
    if (angle) *angle = w->turns[slot].angle;
    return true;
}

/* ---- queries --------------------------------------------------------------------------------- */

bool world_body_alive(const world *w, world_body_id id) { return id_slot(w, id) != UINT32_MAX; }

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

bool world_body_intent(const world *w, world_body_id id, vec2 *velocity, float *turning) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    const world_slot *s = &w->slots[slot];
    vec2 v = {0.0f, 0.0f};
    if (s->kind == WORLD_BODY_MOVING) v = w->movers[s->index].intent;
    if (velocity) *velocity = v;
    if (turning) *turning = w->turns && w->turns[slot].in_use ? w->turns[slot].spin : 0.0f;
    return true;
}

uint32_t world_body_input_seq(const world *w, world_body_id id) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX || w->slots[slot].kind != WORLD_BODY_MOVING) return 0;
    const world_mover *m = &w->movers[w->slots[slot].index];
    return m->flags & WORLD_MOVER_HAS_INPUT ? m->pending_seq : 0;
}

/* In-place heapsort of ids or slots: O(n log n), no allocation (glibc's qsort may malloc a
 * merge buffer), the same result on every platform. */
void world_sort_u32(uint32_t *v, size_t n) {
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

void world_get_stats(const world *w, world_stats *out) {
    memset(out, 0, sizeof *out);
    out->static_bodies = w->static_count;
    out->moving_bodies = w->mover_count;
    out->capacity = w->capacity;
    out->swept_hits = w->swept_hits;
    out->separations = w->separations;
    out->jammed = w->jammed;
    out->events_lost = world_events_lost(w);
    out->bytes = w->bytes;
    if (w->cache->rows)
        out->bytes += 2 * (size_t)w->capacity * sizeof *w->cache->rows +
                      4 * (size_t)w->capacity * sizeof *w->cache->row_keys;
    out->slots_retired = w->slots_retired;
    /* every spawn used one generation of one slot; a retired slot has used all of its own */
    uint64_t ids = (uint64_t)w->capacity * w->gen_max;
    out->ids_left = w->spawns < ids ? ids - w->spawns : 0;
    if (w->history) {
        const world_history *h = w->history;
        out->history_bytes = h->bytes;
        out->history_ticks = h->filled;
        for (uint32_t k = 0; k < h->filled; k++)
            out->history_records += h->ring[(h->head + h->frames - k) % h->frames].count;
    }
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
        /* bodies that never turned add nothing: hashes of worlds without rotation are unchanged */
        if (w->turns && w->turns[slot].in_use) {
            const world_turn *t = &w->turns[slot];
            h = hash_bytes(h, &t->angle, sizeof t->angle);
            h = hash_bytes(h, &t->spin, sizeof t->spin);
            h = hash_bytes(h, &t->ang_vel, sizeof t->ang_vel);
        }
        /* what a character carries to its next step; plain bodies add nothing */
        if (world_is_character(w, slot)) {
            const world_character *c = &w->characters[slot];
            h = hash_bytes(h, &c->vy, sizeof c->vy);
            h = hash_bytes(h, &c->ground, sizeof c->ground);
            h = hash_bytes(h, &c->jump_until, sizeof c->jump_until);
            h = hash_bytes(h, &c->air_ticks, sizeof c->air_ticks);
            uint8_t flags[2] = {c->grounded, c->coyote};
            h = hash_bytes(h, flags, sizeof flags);
        }
        /* a default filter adds nothing: hashes of worlds without filters are unchanged */
        if (w->filters && !filter_is_default(&w->filters[slot])) {
            const world_filter *f = &w->filters[slot];
            uint8_t sensor = f->sensor;
            h = hash_bytes(h, &f->category, sizeof f->category);
            h = hash_bytes(h, &f->mask, sizeof f->mask);
            h = hash_bytes(h, &sensor, sizeof sensor);
        }
    }
    return h;
}

/* The body-local shape reference of a body (a turned body's is in its turn record). */
static uint32_t local_ref(const world *w, uint32_t ref, uint32_t slot) {
    return ref_kind(ref) == WORLD_REF_TURNED ? w->turns[slot].local : ref;
}

const char *world_validate(const world *w) {
    if (!w) return "no world";
    /* slots against the dense index */
    uint32_t statics = 0, movers = 0, retired = 0;
    uint64_t gens = 0;
    for (uint32_t slot = 0; slot < w->capacity; slot++) {
        const world_slot *s = &w->slots[slot];
        gens += s->gen;
        if (s->kind == 0) {
            retired += (s->flags & WORLD_SLOT_RETIRED) != 0;
            continue;
        }
        if (s->gen == 0 || s->gen > w->gen_max) return "slots: live slot with a bad generation";
        if (s->kind == WORLD_BODY_STATIC) {
            statics++;
            if (s->index >= w->static_count || w->statics[s->index].slot != slot)
                return "slots: static slot and dense index disagree";
        } else if (s->kind == WORLD_BODY_MOVING) {
            movers++;
            if (s->index >= w->mover_count || w->movers[s->index].slot != slot)
                return "slots: mover slot and dense index disagree";
        } else {
            return "slots: unknown kind";
        }
    }
    if (statics != w->static_count || movers != w->mover_count)
        return "slots: live slots and dense arrays differ in number";
    /* one-way flags only on live bodies, and counted (world_one_way.c) */
    uint32_t one_way = 0;
    for (uint32_t slot = 0; w->one_way && slot < w->capacity; slot++) {
        if (w->one_way[slot].on && w->slots[slot].kind == 0) return "one-way: a free slot's flag";
        one_way += w->one_way[slot].on != 0;
    }
    if (one_way != w->one_way_count) return "one-way: flags and their count differ";
    uint32_t characters = 0;
    for (uint32_t slot = 0; w->characters && slot < w->capacity; slot++) {
        if (!w->characters[slot].on) continue;
        if (w->slots[slot].kind != WORLD_BODY_MOVING) return "characters: a flag on no mover";
        characters++;
    }
    if (characters != w->character_count) return "characters: flags and their count differ";
    /* the id space's accounting (world_stats): a spawn takes the slot's next generation */
    if (retired != w->slots_retired) return "slots: retired slots and their count differ";
    if (gens != w->spawns) return "slots: generations used and spawns differ";
    /* free lists: every free slot once, none live or retired; the rest are live or retired */
    if (w->free_count + statics + movers + retired != w->capacity)
        return "free slots: live + free + retired is not the capacity";
    uint64_t *seen = calloc((w->capacity + 63) / 64, sizeof *seen);
    if (!seen) return "out of memory (validate)";
    const char *bad = NULL;
    for (uint32_t k = 0; k < w->free_count && !bad; k++) {
        uint32_t slot = w->free_slots[k];
        if (slot >= w->capacity) {
            bad = "free slots: slot out of range";
            break;
        }
        const world_slot *s = &w->slots[slot];
        if (s->kind != 0 || (s->flags & WORLD_SLOT_RETIRED) ||
            (seen[slot >> 6] >> (slot & 63) & 1u))
            bad = "free slots: a live, retired or repeated slot";
        seen[slot >> 6] |= 1ull << (slot & 63);
    }
    free(seen);
    if (bad) return bad;
    /* the polygon pool: pool entries in use by polygon shapes plus free entries fill it */
    uint32_t polys = 0;
    for (uint32_t i = 0; i < w->static_count; i++)
        polys +=
            ref_kind(local_ref(w, w->statics[i].shape, w->statics[i].slot)) == GEOM_SHAPE_POLYGON;
    for (uint32_t i = 0; i < w->mover_count; i++)
        polys +=
            ref_kind(local_ref(w, w->movers[i].shape, w->movers[i].slot)) == GEOM_SHAPE_POLYGON;
    if (polys + w->free_poly_count != w->poly_cap) return "polygon pool: entries lost or doubled";
    for (uint32_t k = 0; k < w->free_poly_count; k++)
        if (w->free_polys[k] >= w->poly_cap) return "polygon pool: free entry out of range";
    uint32_t nonbox = 0;
    for (uint32_t i = 0; i < w->static_count; i++)
        nonbox += ref_kind(w->statics[i].shape) != GEOM_SHAPE_BOX;
    if (nonbox != w->nonbox_statics) return "statics: non-box count is wrong";
    const char *err = world_statics_validate(w);
    if (!err) err = world_movers_validate(w);
    return err;
}

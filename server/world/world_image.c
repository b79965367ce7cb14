/* world_image: a world's whole state between two steps as bytes, and a world made from them
 * (world.h "World images"; docs/recording.md "The world image").
 *
 * Why the world's own records rather than a re-spawn of its bodies: a step's result depends on
 * more than what the bodies are. The dense order of the movers (the mover pass goes in it), the
 * order of each static cell's list (ties go to the first static met), the free-slot stack (the id
 * the next spawn gets) and the generations of free slots all come from the world's history, and
 * a world re-spawned from its bodies would step to other bits. So the image copies the records
 * that carry state from step to step, as the world lays them out, and the loader puts them back
 * where they were; its layout version and the size of every record it copies are in its header,
 * and a build whose layout differs refuses the image by name.
 *
 * What it leaves out, and why the next step is the same without it:
 *   - the memos of the fast paths (each mover's remembered statics, a turning body's or a
 *     character's "still" memo): they only save work, and a step without them gives the same
 *     bits (test_world_fastpaths holds every fast path to the general code); the loaded world
 *     starts with them void, as a fresh world does;
 *   - the per-step scratch, the mover grid (rebuilt by the step), the last step's body table and
 *     counters (world_stats), the jam report, and the event and query-history state: events and
 *     the history read the step, never steer it. A caller that wants them turns them on again.
 *
 * The loader trusts nothing in the image: every count, index and reference is checked against the
 * capacity it names before it is used, and the loaded world must pass world_validate. */
#include <math.h>

#include "world_character.h"
#include "world_statics.h"

#define IMAGE_MAGIC "CWIMAGE"
/* Bumped whenever a record the image copies changes its layout or meaning. */
#define IMAGE_VERSION 1u

/* The record sizes the image copies: a build whose sizes differ cannot read the image. */
enum { IMAGE_SIZES = 9 };
static void image_sizes(uint32_t out[IMAGE_SIZES]) {
    const uint32_t s[IMAGE_SIZES] = {
        sizeof(world_config),    sizeof(world_slot),   sizeof(world_static),
        sizeof(world_mover),     sizeof(geom_shape),   sizeof(world_turn),
        sizeof(world_character), sizeof(world_filter), sizeof(world_one_way_slot)};
    memcpy(out, s, sizeof s);
}

/* ---- writing: a growable buffer ---------------------------------------------------------- */

typedef struct image_out {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} image_out;

static void put(image_out *o, const void *p, size_t n) {
    if (o->failed) return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        uint8_t *d = realloc(o->data, cap);
        if (!d) {
            o->failed = true;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    if (n) memcpy(o->data + o->len, p, n);
    o->len += n;
}
static void put_u32(image_out *o, uint32_t v) { put(o, &v, sizeof v); }
static void put_u64(image_out *o, uint64_t v) { put(o, &v, sizeof v); }

/* The polygon pool entry a shape reference names, if any. */
static bool ref_polygon(uint32_t ref, uint32_t *index) {
    if (ref_kind(ref) != GEOM_SHAPE_POLYGON) return false;
    *index = ref_index(ref);
    return true;
}

/* Every pool entry a live body uses: as its shape, or as a turned body's local shape. */
static void put_polygons(image_out *o, const world *w) {
    uint32_t used = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) put_u32(o, used);
        for (uint32_t slot = 0; slot < w->capacity; slot++) {
            const world_slot *s = &w->slots[slot];
            if (!s->kind) continue;
            uint32_t ref = s->kind == WORLD_BODY_STATIC ? w->statics[s->index].shape
                                                        : w->movers[s->index].shape;
            if (ref_kind(ref) == WORLD_REF_TURNED) ref = w->turns[slot].local;
            uint32_t p;
            if (!ref_polygon(ref, &p)) continue;
            if (!pass) {
                used++;
                continue;
            }
            put_u32(o, p);
            put(o, &w->polys[p], sizeof w->polys[p]);
        }
    }
    put_u32(o, w->free_poly_count);
    put(o, w->free_polys, (size_t)w->free_poly_count * sizeof *w->free_polys);
}

/* The slots, sparsely: most of a world's capacity has never held a body (an all-zero record), and
 * the free stack's bottom is the order world_create left it in (capacity - 1 - i), so the image
 * holds the slots that were ever used and the free stack above that untouched bottom. */
static void put_slots(image_out *o, const world *w) {
    static const world_slot zero;
    uint32_t used = 0;
    for (uint32_t slot = 0; slot < w->capacity; slot++)
        used += memcmp(&w->slots[slot], &zero, sizeof zero) != 0;
    put_u32(o, used);
    for (uint32_t slot = 0; slot < w->capacity; slot++) {
        if (!memcmp(&w->slots[slot], &zero, sizeof zero)) continue;
        put_u32(o, slot);
        put(o, &w->slots[slot], sizeof w->slots[slot]);
    }
    uint32_t bottom = 0;
    while (bottom < w->free_count && w->free_slots[bottom] == w->capacity - 1u - bottom)
        bottom++;
    put_u32(o, w->free_count);
    put_u32(o, bottom);
    put(o, w->free_slots + bottom, (size_t)(w->free_count - bottom) * sizeof *w->free_slots);
}

/* Per-slot records of live bodies that have one (filters, turns, one-way flags, characters):
 * a count, then (slot, record) pairs. */
static void put_slot_records(image_out *o, const world *w, const void *table, size_t size,
                             bool (*has)(const world *, uint32_t)) {
    uint32_t n = 0;
    for (uint32_t slot = 0; table && slot < w->capacity; slot++)
        n += w->slots[slot].kind && has(w, slot);
    put_u32(o, n);
    for (uint32_t slot = 0; table && slot < w->capacity; slot++) {
        if (!w->slots[slot].kind || !has(w, slot)) continue;
        put_u32(o, slot);
        put(o, (const uint8_t *)table + (size_t)slot * size, size);
    }
}
static bool has_filter(const world *w, uint32_t slot) {
    return !filter_is_default(&w->filters[slot]);
}
static bool has_turn(const world *w, uint32_t slot) { return w->turns[slot].in_use != 0; }
static bool has_one_way(const world *w, uint32_t slot) { return w->one_way[slot].on != 0; }
static bool has_character(const world *w, uint32_t slot) { return w->characters[slot].on != 0; }

void *world_image_save(const world *w, size_t *len) {
    image_out o = {0};
    uint32_t sizes[IMAGE_SIZES];
    image_sizes(sizes);
    put(&o, IMAGE_MAGIC, 8);
    put_u32(&o, IMAGE_VERSION);
    put(&o, sizes, sizeof sizes);
    put(&o, &w->cfg, sizeof w->cfg);
    put_u64(&o, w->tick);
    put_u64(&o, w->spawns);
    put_u64(&o, w->mover_despawns);
    put_u64(&o, w->mover_sorts);
    put_u32(&o, w->slots_retired);
    put_u32(&o, (uint32_t)w->static_checks_pending | (uint32_t)w->movers_collide << 1);
    put_u32(&o, w->turning_hint);
    put_u32(&o, w->statics_epoch);
    put_u32(&o, w->rules_epoch);
    put_slots(&o, w);
    put_u32(&o, w->static_count);
    put(&o, w->statics, (size_t)w->static_count * sizeof *w->statics);
    put_u32(&o, w->mover_count);
    put(&o, w->movers, (size_t)w->mover_count * sizeof *w->movers);
    put_u32(&o, (uint32_t)w->level_count);
    for (int l = 0; l < w->level_count; l++)
        put_u32(&o, (uint32_t)w->levels[l].extra);
    put_polygons(&o, w);
    put_slot_records(&o, w, w->filters, sizeof *w->filters, has_filter);
    put_slot_records(&o, w, w->turns, sizeof *w->turns, has_turn);
    put_slot_records(&o, w, w->one_way, sizeof *w->one_way, has_one_way);
    put_slot_records(&o, w, w->characters, sizeof *w->characters, has_character);
    if (o.failed) {
        free(o.data);
        return NULL;
    }
    *len = o.len;
    return o.data;
}

/* ---- reading: every read checked against what is left ------------------------------------ */

typedef struct image_in {
    const uint8_t *p;
    size_t left;
    const char *err; /* the first thing wrong */
    uint8_t *pool;   /* per polygon pool entry: POOL_* (each entry used once, or free once) */
} image_in;
enum { POOL_UNSET, POOL_LOADED, POOL_USED, POOL_FREE };

static bool get(image_in *in, void *out, size_t n, const char *what) {
    if (in->err) return false;
    if (n > in->left) {
        in->err = what;
        return false;
    }
    if (n) memcpy(out, in->p, n);
    in->p += n;
    in->left -= n;
    return true;
}
static uint32_t get_u32(image_in *in, const char *what) {
    uint32_t v = 0;
    get(in, &v, sizeof v, what);
    return v;
}
static uint64_t get_u64(image_in *in, const char *what) {
    uint64_t v = 0;
    get(in, &v, sizeof v, what);
    return v;
}
static void fail(image_in *in, const char *why) {
    if (!in->err) in->err = why;
}
/* A count of records of `size` bytes that the rest of the image could hold, at most `max`. */
static uint32_t get_count(image_in *in, uint32_t max, size_t size, const char *what) {
    uint32_t n = get_u32(in, what);
    if (!in->err && (n > max || (size && (uint64_t)n * size > in->left))) fail(in, what);
    return in->err ? 0 : n;
}

/* A shape reference an image may hold for a live body of this slot. */
static bool ref_ok(const world *w, uint32_t ref, uint32_t slot, bool turned_ok) {
    switch (ref_kind(ref)) {
    case WORLD_REF_TURNED:
        return turned_ok && ref_index(ref) == slot;
    case GEOM_SHAPE_POLYGON:
        return ref_index(ref) < w->poly_cap;
    default:
        return ref_index(ref) == 0;
    }
}

static void load_polygons(image_in *in, world *w) {
    uint32_t used = get_count(in, w->poly_cap, sizeof(uint32_t) + sizeof(geom_shape),
                              "the polygons are cut short");
    for (uint32_t k = 0; k < used && !in->err; k++) {
        uint32_t p = get_u32(in, "the polygons are cut short");
        geom_shape s;
        if (!get(in, &s, sizeof s, "the polygons are cut short")) break;
        if (p >= w->poly_cap || in->pool[p] != POOL_UNSET || s.kind != GEOM_SHAPE_POLYGON ||
            geom_shape_validate(&s)) {
            fail(in, "a polygon is not a valid polygon, or its pool entry is taken twice");
            break;
        }
        w->polys[p] = s;
        in->pool[p] = POOL_LOADED;
    }
    w->free_poly_count = get_count(in, w->poly_cap, sizeof(uint32_t), "the free polygons");
    get(in, w->free_polys, (size_t)w->free_poly_count * sizeof *w->free_polys, "free polygons");
    for (uint32_t k = 0; k < w->free_poly_count && !in->err; k++) {
        uint32_t p = w->free_polys[k];
        if (p >= w->poly_cap || in->pool[p] != POOL_UNSET)
            fail(in, "a free polygon entry is out of range, in use or free twice");
        else
            in->pool[p] = POOL_FREE;
    }
}

/* A body's polygon (its shape, or a turned body's local shape): an entry the image loaded, used
 * by no other body. */
static void use_polygon(image_in *in, uint32_t ref) {
    if (ref_kind(ref) != GEOM_SHAPE_POLYGON || in->err) return;
    uint32_t p = ref_index(ref); /* < poly_cap: ref_ok said so */
    if (in->pool[p] != POOL_LOADED)
        fail(in, "a body's polygon was not loaded, or another body uses it");
    else
        in->pool[p] = POOL_USED;
}

static void load_slots(image_in *in, world *w) {
    uint32_t used = get_count(in, w->capacity, sizeof(uint32_t) + sizeof(world_slot), "the slots");
    for (uint32_t k = 0; k < used && !in->err; k++) {
        uint32_t slot = get_u32(in, "the slots are cut short");
        if (slot >= w->capacity) {
            fail(in, "a slot out of range");
            break;
        }
        get(in, &w->slots[slot], sizeof w->slots[slot], "the slots are cut short");
        /* taken between steps: nothing is waiting to be shown by the next one */
        w->slots[slot].flags &= WORLD_SLOT_RETIRED;
    }
    w->free_count = get_count(in, w->capacity, 0, "the free slots");
    uint32_t bottom = get_count(in, w->free_count, 0, "the free slots");
    get(in, w->free_slots + bottom, (size_t)(w->free_count - bottom) * sizeof *w->free_slots,
        "the free slots are cut short");
    /* world_create wrote the bottom (capacity - 1 - i) already */
}

/* A filter table as world_body_set_filter starts it: every slot the default but the ones read. */
static void default_filters(world *w) {
    for (uint32_t slot = 0; slot < w->capacity; slot++) {
        world_filter *f = &w->filters[slot];
        /* the bool came as a byte: read as a byte, anything but 0 is true */
        uint8_t *sensor = (uint8_t *)&f->sensor;
        *sensor = *sensor != 0;
        if (!w->slots[slot].kind || (f->category == 0 && f->mask == 0))
            *f = (world_filter){WORLD_DEFAULT_CATEGORY, WORLD_DEFAULT_MASK, false};
    }
}

/* Reads (slot, record) pairs into a per-slot table, allocating it as the world would. */
static void *load_slot_records(image_in *in, world *w, void *table, size_t size, const char *what) {
    uint32_t n = get_count(in, w->capacity, sizeof(uint32_t) + size, what);
    if (!n || in->err) return table;
    if (!table) table = world_alloc(w, w->capacity, size);
    if (!table) {
        fail(in, "out of memory");
        return NULL;
    }
    for (uint32_t k = 0; k < n && !in->err; k++) {
        uint32_t slot = get_u32(in, what);
        if (slot >= w->capacity || !w->slots[slot].kind) {
            fail(in, what);
            break;
        }
        get(in, (uint8_t *)table + (size_t)slot * size, size, what);
    }
    return table;
}

/* The grid's heads from the statics' own links: a static no other static links to heads its
 * home cell's list; then the occupancy bits and each level's count. */
static void relink_statics(image_in *in, world *w) {
    uint8_t *linked = calloc(w->static_count + 1u, 1);
    if (!linked) {
        fail(in, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < w->static_count; i++) {
        const world_static *s = &w->statics[i];
        if (s->level >= (uint32_t)w->level_count || s->next >= (int32_t)w->static_count ||
            s->next < -1 || (s->next >= 0 && linked[s->next]++)) {
            fail(in, "a static's grid link is wrong");
            break;
        }
    }
    for (uint32_t i = 0; i < w->static_count && !in->err; i++) {
        world_static *s = &w->statics[i];
        world_level *lv = &w->levels[s->level];
        lv->count++;
        if (linked[i]) continue;
        int32_t cell = world_static_home(w, s);
        if (lv->heads[cell] >= 0) {
            fail(in, "two static lists start in one cell");
            break;
        }
        lv->heads[cell] = (int32_t)i;
        lv->occupied[cell >> 6] |= 1ull << (cell & 63);
    }
    free(linked);
    world_update_active_levels(w);
}

/* A carrier a character's record names: none, or a live mover. */
static bool carrier_ok(const world *w, uint32_t slot) {
    return slot == UINT32_MAX || (slot < w->capacity && w->slots[slot].kind == WORLD_BODY_MOVING);
}

/* The checks world_validate does not make, on the records copied as they were. */
/* A turned body's turn record: there, and its numbers finite. */
static bool turn_ok(const world *w, uint32_t slot) {
    if (!w->turns || !w->turns[slot].in_use) return false;
    const world_turn *t = &w->turns[slot];
    return v2_is_finite(t->q) && v2_is_finite(t->half) && isfinite(t->angle) && isfinite(t->spin) &&
           isfinite(t->ang_vel) && isfinite(t->radius);
}

static void check_bodies(image_in *in, world *w) {
    for (uint32_t i = 0; i < w->static_count && !in->err; i++) {
        const world_static *s = &w->statics[i];
        if (s->slot >= w->capacity || !ref_ok(w, s->shape, s->slot, true) ||
            !aabb_contains(w->cfg.bounds, s->box) || !v2_is_finite(s->position))
            fail(in, "a static's record is wrong");
        else if (ref_kind(s->shape) == WORLD_REF_TURNED && !turn_ok(w, s->slot))
            fail(in, "a turned static has no turn record");
        else
            use_polygon(in, s->shape);
    }
    for (uint32_t i = 0; i < w->mover_count && !in->err; i++) {
        const world_mover *m = &w->movers[i];
        if (m->slot >= w->capacity || !ref_ok(w, m->shape, m->slot, true) ||
            !v2_is_finite(m->position) || !v2_is_finite(m->intent) || !v2_is_finite(m->velocity) ||
            !v2_is_finite(m->lo) || !v2_is_finite(m->hi) ||
            !(m->lo.x <= m->hi.x && m->lo.y <= m->hi.y))
            fail(in, "a mover's record is wrong");
        else if (ref_kind(m->shape) == WORLD_REF_TURNED && !turn_ok(w, m->slot))
            fail(in, "a turned mover has no turn record");
        else
            use_polygon(in, m->shape);
    }
    for (uint32_t slot = 0; w->turns && slot < w->capacity && !in->err; slot++) {
        if (!w->turns[slot].in_use) continue;
        if (!turn_ok(w, slot) || !ref_ok(w, w->turns[slot].local, slot, false))
            fail(in, "a turn record's shape is wrong");
        else
            use_polygon(in, w->turns[slot].local);
    }
    for (uint32_t slot = 0; w->characters && slot < w->capacity && !in->err; slot++) {
        world_character *c = &w->characters[slot];
        if (c->on && (!isfinite(c->vy) || !v2_is_finite(c->ground_normal)))
            fail(in, "a character's record is wrong");
        /* the carrier is the step's own (char_plan sets it before any read), as are the rest of
         * the step's notes (settled_slot, moved_to: written before they are read): a carrier
         * gone since the last step is left behind in the record, and is none */
        if (c->on && !carrier_ok(w, c->carrier)) c->carrier = UINT32_MAX;
    }
    for (uint32_t slot = 0; slot < w->capacity && !in->err; slot++)
        if (w->slots[slot].gen > w->gen_max) fail(in, "a slot's generation is out of range");
}

/* Counts the world keeps of what the per-slot records say. */
static void recount(world *w) {
    w->filtered_count = w->sensor_count = w->one_way_count = w->character_count = 0;
    w->nonbox_statics = 0;
    for (uint32_t slot = 0; slot < w->capacity; slot++) {
        if (!w->slots[slot].kind) continue;
        if (w->filters) {
            w->filtered_count += !filter_is_default(&w->filters[slot]);
            w->sensor_count += w->filters[slot].sensor;
        }
        if (w->one_way) w->one_way_count += w->one_way[slot].on != 0;
        if (w->characters) w->character_count += w->characters[slot].on != 0;
    }
    for (uint32_t i = 0; i < w->static_count; i++)
        w->nonbox_statics += ref_kind(w->statics[i].shape) != GEOM_SHAPE_BOX;
}

/* The memos start void, as in a fresh world (see the top of the file). */
static void clear_memos(world *w) {
    for (uint32_t slot = 0; w->characters && slot < w->capacity; slot++) {
        w->characters[slot].still_epoch = 0;
        w->characters[slot].near.epoch = 0;
    }
    /* each mover's remembered cells need nothing: near_cache_used is world_create's 0, so the
     * first walk that uses an entry starts it void (world_near_cache_begin) */
}

static bool load_header(image_in *in, world_config *cfg) {
    char magic[8];
    uint32_t sizes[IMAGE_SIZES], want[IMAGE_SIZES];
    if (!get(in, magic, sizeof magic, "not a world image (too short)")) return false;
    if (memcmp(magic, IMAGE_MAGIC, 8) != 0) {
        fail(in, "not a world image (bad magic)");
        return false;
    }
    uint32_t version = get_u32(in, "the image header is cut short");
    if (!in->err && version != IMAGE_VERSION) {
        fail(in, "the world image is of another layout version");
        return false;
    }
    image_sizes(want);
    get(in, sizes, sizeof sizes, "the image header is cut short");
    if (!in->err && memcmp(sizes, want, sizeof sizes) != 0)
        fail(in, "the world image's records are of another size than this build's");
    get(in, cfg, sizeof *cfg, "the image header is cut short");
    return !in->err;
}

static void load_state(image_in *in, world *w) {
    w->tick = get_u64(in, "the counters are cut short");
    w->spawns = get_u64(in, "the counters are cut short");
    w->mover_despawns = get_u64(in, "the counters are cut short");
    w->mover_sorts = get_u64(in, "the counters are cut short");
    w->slots_retired = get_u32(in, "the counters are cut short");
    uint32_t flags = get_u32(in, "the counters are cut short");
    w->static_checks_pending = flags & 1u;
    w->movers_collide = (flags >> 1) & 1u;
    w->turning_hint = get_u32(in, "the counters are cut short");
    w->statics_epoch = get_u32(in, "the counters are cut short");
    w->rules_epoch = get_u32(in, "the counters are cut short");
    if (!in->err && w->statics_epoch == 0) fail(in, "the statics epoch is 0");
    load_slots(in, w);
    w->static_count = get_count(in, w->capacity, sizeof(world_static), "the statics");
    get(in, w->statics, (size_t)w->static_count * sizeof *w->statics, "the statics");
    w->mover_count = get_count(in, w->mover_cap, sizeof(world_mover), "the movers");
    get(in, w->movers, (size_t)w->mover_count * sizeof *w->movers, "the movers");
    uint32_t levels = get_u32(in, "the levels are cut short");
    if (!in->err && levels != (uint32_t)w->level_count)
        fail(in, "the image's static grid has another number of levels");
    for (int l = 0; l < w->level_count && !in->err; l++) {
        uint32_t extra = get_u32(in, "the levels are cut short");
        if (extra > (uint32_t)(w->levels[l].nx + w->levels[l].ny))
            fail(in, "a level's reach is out of range");
        w->levels[l].extra = (int32_t)extra;
    }
    load_polygons(in, w);
    w->filters = load_slot_records(in, w, NULL, sizeof *w->filters, "the filters");
    if (w->filters) default_filters(w);
    world_turn *turns = load_slot_records(in, w, NULL, sizeof *w->turns, "the turns");
    if (turns) {
        w->turns = turns;
        w->turn_still = world_alloc(w, w->capacity, sizeof *w->turn_still);
        if (!w->turn_still) fail(in, "out of memory");
    }
    w->one_way = load_slot_records(in, w, w->one_way, sizeof *w->one_way, "the one-way flags");
    w->characters =
        load_slot_records(in, w, w->characters, sizeof *w->characters, "the characters");
    if (!in->err && in->left) fail(in, "bytes after the image's end");
}

world *world_image_load(const void *image, size_t len, char *err, size_t err_size) {
    image_in in = {image, len, NULL, NULL};
    world_config cfg;
    world *w = NULL;
    if (load_header(&in, &cfg)) {
        w = world_create(&cfg);
        if (!w) fail(&in, "the image's configuration is not a valid world configuration");
    }
    if (w) {
        in.pool = calloc(w->poly_cap, 1);
        if (!in.pool) fail(&in, "out of memory");
    }
    if (w && !in.err) load_state(&in, w);
    if (w && !in.err) check_bodies(&in, w);
    if (w && !in.err) relink_statics(&in, w);
    if (w && !in.err) {
        recount(w);
        clear_memos(w);
        const char *bad = world_validate(w);
        if (bad) fail(&in, bad);
    }
    free(in.pool);
    if (in.err) {
        if (err && err_size) snprintf(err, err_size, "world image: %s", in.err);
        world_destroy(w);
        return NULL;
    }
    return w;
}

/* world_sensors: sensor overlap events (COLLISION.md step 4, world.h "Contact and sensor
 * events"), the part of world_events_end_step after the contacts. Sensor overlaps are few: a set
 * hashed by pair, rebuilt after the pass that removes pairs. Each step the held overlaps are
 * rechecked, and new ones looked for along each mover's straight move of the step (its swept box),
 * so a visitor crossing a sensor within one step is seen. */
#include "world_events_internal.h"
#include "world_movers.h"
#include "world_statics.h"

/* ---- the pair sets ------------------------------------------------------------------------ */

static inline uint32_t pair_hash(uint32_t a, uint32_t b) {
    uint64_t k = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(k >> 32);
}

/* The pair of key (a, b) (ev_pair.slot_a, slot_b), by index, or -1. */
static int64_t set_find(const ev_set *s, uint32_t a, uint32_t b) {
    if (!s->hash) return -1;
    for (uint32_t h = pair_hash(a, b) & s->hash_mask;; h = (h + 1) & s->hash_mask) {
        uint32_t v = s->hash[h];
        if (!v) return -1;
        if (s->pairs[v - 1].slot_a == a && s->pairs[v - 1].slot_b == b) return (int64_t)v - 1;
    }
}

static void set_rehash(ev_set *s) {
    if (!s->hash) return;
    memset(s->hash, 0, ((size_t)s->hash_mask + 1) * sizeof *s->hash);
    for (uint32_t i = 0; i < s->count; i++) {
        uint32_t h = pair_hash(s->pairs[i].slot_a, s->pairs[i].slot_b) & s->hash_mask;
        while (s->hash[h])
            h = (h + 1) & s->hash_mask;
        s->hash[h] = i + 1;
    }
}

/* Adds a pair known to be absent; false when the set could not grow. */
static bool set_add(ev_set *s, const ev_pair *p) {
    if (s->count == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 64;
        ev_pair *pairs = realloc(s->pairs, (size_t)cap * sizeof *pairs);
        if (!pairs) return false;
        s->pairs = pairs;
        uint32_t *hash = calloc(2 * (size_t)cap, sizeof *hash);
        if (!hash) return false;
        free(s->hash);
        s->hash = hash;
        s->hash_mask = 2 * cap - 1;
        s->cap = cap;
        set_rehash(s);
    }
    s->pairs[s->count] = *p;
    uint32_t h = pair_hash(p->slot_a, p->slot_b) & s->hash_mask;
    while (s->hash[h])
        h = (h + 1) & s->hash_mask;
    s->hash[h] = ++s->count;
    return true;
}

static void set_free(ev_set *s) {
    free(s->pairs);
    free(s->hash);
    memset(s, 0, sizeof *s);
}

static bool emit_sensor(world *w, const ev_pair *p, bool begin) {
    world_events *ev = w->events;
    world_sensor_event *sev = grow(ev->sev, &ev->sev_cap, ev->sev_count + 1, sizeof *sev);
    if (!sev) return false;
    ev->sev = sev;
    world_sensor_event e = {p->a, p->b, p->owner_a, p->owner_b, begin};
    sev[ev->sev_count++] = e;
    return true;
}

/* ---- sensors ------------------------------------------------------------------------------- */

/* Where a body began the step (movers: ev->start) and its straight move over it. */
static void slot_motion(const world *w, uint32_t slot, vec2 *start, vec2 *d) {
    const world_slot *s = &w->slots[slot];
    if (s->kind == WORLD_BODY_STATIC) {
        *start = w->statics[s->index].position;
        *d = v2(0.0f, 0.0f);
        return;
    }
    const world_mover *m = &w->movers[s->index];
    /* every mover of the step was there at its start (spawns wait for the next step) */
    *start = w->events->p0_valid ? w->events->start[s->index] : m->position;
    *d = v2_sub(m->position, *start);
}

/* A body that turned in the step (its achieved turning speed is not 0): its body-local shape
 * into or from tmp, and the angle it began the step at and its turn over it; NULL otherwise. */
static const geom_shape *view_turn(const world *w, const body_view *v, geom_shape *tmp, float *a0,
                                   float *da) {
    if (ref_kind(v->ref) != WORLD_REF_TURNED) return NULL;
    const world_turn *t = &w->turns[ref_index(v->ref)];
    if (t->ang_vel == 0.0f) return NULL;
    *da = t->ang_vel * w->dt;
    *a0 = t->angle - *da;
    return turn_local(w, t, tmp);
}

/* How close a turning pair must come within the step to count as touched: the advancement needs
 * a gap to stop at; this one is below any distance the world keeps between bodies. */
#define SENSOR_TURN_TOUCH GEOM_LINEAR_SLOP

static bool views_overlap(const world *w, const body_view *a, const body_view *b) {
    geom_shape ta, tb;
    return geom_overlap(ref_shape(w, a->ref, a->hi, &ta), a->pos, ref_shape(w, b->ref, b->hi, &tb),
                        b->pos, NULL);
}

/* 1 for sensors: the tracked overlaps whose bodies moved or went. */
static void overlaps_recheck(world *w) {
    world_events *ev = w->events;
    ev_set *s = &ev->overlaps;
    for (uint32_t k = 0; k < s->count; k++) {
        ev_pair p = s->pairs[k];
        uint32_t ss = id_slot(w, p.a), sv = id_slot(w, p.b);
        bool end;
        if (ss == UINT32_MAX || sv == UINT32_MAX) {
            end = true;
        } else if (!ev->rescan && !slot_changed(w, ss) && !slot_changed(w, sv)) {
            end = false;
        } else if (!slot_is_sensor(w, ss) || slot_is_sensor(w, sv) || !slots_interact(w, ss, sv)) {
            end = true;
        } else {
            body_view a = slot_view(w, ss), b = slot_view(w, sv);
            end = !views_overlap(w, &a, &b);
        }
        if (end && emit_sensor(w, &p, false)) p.ended = true;
        s->pairs[k] = p;
    }
}

/* Drops the overlaps that ended in this step. */
static void overlaps_compact(world *w) {
    ev_set *s = &w->events->overlaps;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < s->count; k++)
        if (!s->pairs[k].ended) s->pairs[kept++] = s->pairs[k];
    if (kept == s->count) return;
    s->count = kept;
    set_rehash(s);
}

/* A candidate pair: sensor of slot ss, visitor of slot sv (not a sensor). Begins when they
 * overlap now; a crossing within the step (apart at its end, overlapping at its start or touched
 * along the two straight moves) is a begin and an end at once. */
static void overlap_offer(world *w, uint32_t ss, uint32_t sv) {
    if (ss == sv || !slots_interact(w, ss, sv)) return;
    world_events *ev = w->events;
    world_body_id a = slot_id(w, ss), b = slot_id(w, sv);
    if (set_find(&ev->overlaps, a, b) >= 0) return;
    body_view vs = slot_view(w, ss), vv = slot_view(w, sv);
    /* keyed by ids; the overlaps' rechecks find their bodies by id: no hints */
    ev_pair p = {a,
                 b,
                 a,
                 b,
                 UINT32_MAX,
                 UINT32_MAX,
                 slot_owner(w, ss),
                 slot_owner(w, sv),
                 0,
                 0,
                 v2(0.0f, 0.0f),
                 false,
                 false};
    if (views_overlap(w, &vs, &vv)) {
        if (!set_add(&ev->overlaps, &p) || !emit_sensor(w, &p, true)) {
            ev->lost++;
            int64_t k = set_find(&ev->overlaps, a, b);
            if (k >= 0) {
                ev->overlaps.pairs[k] = ev->overlaps.pairs[--ev->overlaps.count];
                set_rehash(&ev->overlaps);
            }
        }
        return;
    }
    vec2 s0, ds, v0, dv;
    slot_motion(w, ss, &s0, &ds);
    slot_motion(w, sv, &v0, &dv);
    geom_shape ta, tb, la, lb;
    float sa0 = 0.0f, sda = 0.0f, va0 = 0.0f, vda = 0.0f;
    const geom_shape *turn_s = view_turn(w, &vs, &la, &sa0, &sda);
    const geom_shape *turn_v = view_turn(w, &vv, &lb, &va0, &vda);
    bool crossed;
    if (turn_s || turn_v) {
        /* a turn within the step: the shapes as they turned along their moves, by conservative
         * advancement from the start (a body that did not turn keeps its shape as it stands) */
        if (!turn_s) turn_s = ref_shape(w, vs.ref, vs.hi, &ta);
        if (!turn_v) turn_v = ref_shape(w, vv.ref, vv.hi, &tb);
        geom_motion ms = {s0, sa0, ds, sda}, mv = {v0, va0, dv, vda};
        geom_toi_result r;
        crossed =
            geom_toi_turning(turn_s, &ms, turn_v, &mv, SENSOR_TURN_TOUCH, SENSOR_TURN_TOUCH, &r) &&
            r.distance <= 2.0f * SENSOR_TURN_TOUCH;
    } else {
        if (ds.x == dv.x && ds.y == dv.y) return; /* no relative motion: apart all step */
        const geom_shape *sh_s = ref_shape(w, vs.ref, vs.hi, &ta);
        const geom_shape *sh_v = ref_shape(w, vv.ref, vv.hi, &tb);
        geom_toi toi;
        crossed =
            geom_overlap(sh_s, s0, sh_v, v0, NULL) || geom_sweep(sh_s, s0, ds, sh_v, v0, dv, &toi);
    }
    if (!crossed) return;
    if (!emit_sensor(w, &p, true) || !emit_sensor(w, &p, false)) ev->lost++;
}

typedef struct overlap_ctx {
    world *w;
    uint32_t slot; /* the mover looking */
    bool sensor;   /* it is a sensor */
    aabb box;      /* its swept box */
} overlap_ctx;

static bool overlap_static_visit(const world *cw, uint32_t si, void *vctx) {
    overlap_ctx *c = vctx;
    (void)cw;
    const world_static *st = &c->w->statics[si];
    if (!aabb_overlaps(st->box, c->box)) return true;
    bool st_sensor = slot_is_sensor(c->w, st->slot);
    /* a sensor sees statics that are not sensors; a visitor sees static sensors */
    if (c->sensor && !st_sensor) overlap_offer(c->w, c->slot, st->slot);
    if (!c->sensor && st_sensor) overlap_offer(c->w, st->slot, c->slot);
    return true;
}

static bool overlap_mover_visit(const world *cw, uint32_t i, void *vctx) {
    overlap_ctx *c = vctx;
    (void)cw;
    world *w = c->w;
    if (i >= w->mover_count) return true;
    const world_mover *m = &w->movers[i];
    if (!aabb_overlaps(w->events->swept[i], c->box)) return true;
    bool m_sensor = slot_is_sensor(w, m->slot);
    if (!c->sensor && m_sensor) overlap_offer(w, m->slot, c->slot);
    /* a moving sensor offers only visitors that did not move: those that did offer themselves
     * (in a rescan every mover offers itself) */
    if (c->sensor && !m_sensor && !w->events->rescan && !slot_changed(w, m->slot))
        overlap_offer(w, c->slot, m->slot);
    return true;
}

/* 2 for sensors: new overlaps along the moves of the movers that moved. */
static void overlaps_find(world *w) {
    world_events *ev = w->events;
    uint32_t n = w->mover_count;
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        vec2 start, d;
        slot_motion(w, m->slot, &start, &d);
        ev->swept[i] = aabb_sweep(box_at(start, m->lo, m->hi), d);
        /* a body that turned reaches anywhere in the disc of its shape along its move */
        if (mover_turning(w, m))
            ev->swept[i] =
                aabb_union(ev->swept[i], aabb_sweep(disc_box(start, w->turns[m->slot].radius), d));
    }
    world_grid *g = &w->cache->grid;
    world_grid_build(w, g, ev->swept);
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        /* a mover that stood still is offered by the sensors that moved, statics excepted: a
         * static next to a still body changes nothing unless a rescan asks */
        if (!ev->rescan && !slot_changed(w, m->slot)) continue;
        overlap_ctx c = {w, m->slot, slot_is_sensor(w, m->slot), ev->swept[i]};
        world_static_query(w, c.box, overlap_static_visit, &c);
        world_grid_query(w, g, c.box, overlap_mover_visit, &c);
    }
    /* the grid holds swept boxes, which the queries after the step do not expect */
    g->valid = false;
}

void world_sensors_step(world *w) {
    world_events *ev = w->events;
    overlaps_recheck(w);
    if (w->sensor_count && ev->p0_valid)
        overlaps_find(w);
    else if (w->sensor_count)
        ev->lost++; /* no room to sweep: this step's new overlaps are not looked for */
    overlaps_compact(w);
}

void world_sensors_free(world_events *ev) { set_free(&ev->overlaps); }

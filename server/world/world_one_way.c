/* world_one_way: one-way bodies (PROTOCOL.md "Characters: side-on games", SpawnBody.one_way).
 *
 * A one-way body blocks a mover in a step only if, at the step's start, the mover lay wholly on
 * the body's up side (the body-local +y turned by its angle), within the skin, and its intended
 * motion relative to the body ran against that direction. The answer is fixed for the whole step:
 * it reads only the state each mover had when the step began (world_one_way_begin_step), so every
 * slide iteration, the separation pass and the contacts ask the same question and get the same
 * answer. It enters the tick through slots_block, beside the filters: the fast paths that know
 * nothing of either gate on world_pair_rules, so a world without one-way bodies takes exactly the
 * paths it took before.
 *
 * Decisions the rule leaves open:
 *   - The rule is about the movers a one-way body lets through: a static (and the bounds) still
 *     blocks a one-way mover (statics win, I2), whatever side it lies on.
 *   - Two one-way movers: the pair blocks only when each one blocks the other ("One-way bodies
 *     take part in a pair's sweep and separation only when the rule in PROTOCOL.md says they
 *     block", COLLISION.md).
 *   - "Moved against that direction" is the intended displacement of the step (intent x dt, a
 *     static's 0) of the mover less the one-way body's, strictly against up: no relative motion,
 *     or motion along the surface, is not blocked. */
#include "world_internal.h"

/* The low and high ends of shape s at pos along the direction n. */
static void shape_extent(const geom_shape *s, vec2 pos, vec2 n, float *lo, float *hi) {
    float c = v2_dot(pos, n), r;
    switch (s->kind) {
    case GEOM_SHAPE_BOX:
        r = fabsf(n.x) * s->u.half_extents.x + fabsf(n.y) * s->u.half_extents.y;
        break;
    case GEOM_SHAPE_CIRCLE:
        r = s->u.radius * sqrtf(v2_dot(n, n));
        break;
    default: {
        const geom_polygon *p = &s->u.polygon;
        float mn = v2_dot(p->vertices[0], n), mx = mn;
        for (int i = 1; i < p->count; i++) {
            float d = v2_dot(p->vertices[i], n);
            mn = wmin(mn, d), mx = wmax(mx, d);
        }
        *lo = c + mn, *hi = c + mx;
        return;
    }
    }
    *lo = c - r, *hi = c + r;
}

/* A body as it stood at the step's start: its shape (into tmp), position, angle and motion. */
typedef struct one_way_view {
    const geom_shape *shape;
    vec2 pos, q, disp;
} one_way_view;

static one_way_view start_view(const world *w, uint32_t slot, geom_shape *tmp) {
    const world_slot *s = &w->slots[slot];
    one_way_view v = {.q = v2(1.0f, 0.0f)};
    uint32_t ref;
    vec2 hi;
    if (s->kind == WORLD_BODY_STATIC) {
        const world_static *st = &w->statics[s->index];
        ref = st->shape, hi = static_hi(st), v.pos = st->position;
        if (ref_kind(ref) == WORLD_REF_TURNED) v.q = w->turns[slot].q;
    } else {
        const world_mover *m = &w->movers[s->index];
        const world_one_way_slot *o = &w->one_way[slot];
        ref = m->shape, hi = m->hi, v.pos = o->start, v.q = o->q, v.disp = o->disp;
    }
    if (ref_kind(ref) == WORLD_REF_TURNED) {
        geom_shape local;
        geom_shape_orient(turn_local(w, &w->turns[slot], &local), v.q, tmp);
        v.shape = tmp;
    } else {
        v.shape = ref_shape(w, ref, hi, tmp);
    }
    return v;
}

/* Whether body a lies wholly on the up side of body b (within the skin): the one-way rule's place
 * half, shared by the step's rule, the characters' sweeps and their ground probe. */
static bool lies_above(const one_way_view *va, const one_way_view *vb, vec2 up) {
    float alo, ahi, blo, bhi;
    shape_extent(va->shape, va->pos, up, &alo, &ahi);
    shape_extent(vb->shape, vb->pos, up, &blo, &bhi);
    return alo >= bhi - GEOM_SKIN;
}

/* Whether the one-way body of slot b blocks the mover of slot a in this step. */
static bool one_way_blocks(const world *w, uint32_t a, uint32_t b) {
    geom_shape ta, tb;
    one_way_view va = start_view(w, a, &ta), vb = start_view(w, b, &tb);
    vec2 up = v2(-vb.q.y, vb.q.x);
    if (!(v2_dot(v2_sub(va.disp, vb.disp), up) < 0.0f)) return false;
    return lies_above(&va, &vb, up);
}

bool world_one_way_above(const world *w, uint32_t a, uint32_t b, vec2 *up) {
    geom_shape ta, tb;
    one_way_view va = start_view(w, a, &ta), vb = start_view(w, b, &tb);
    *up = v2(-vb.q.y, vb.q.x);
    return lies_above(&va, &vb, *up);
}

bool world_one_way_pair_blocks(const world *w, uint32_t a, uint32_t b) {
    const world_one_way_slot *o = w->one_way;
    if (o[b].on && w->slots[a].kind == WORLD_BODY_MOVING && !one_way_blocks(w, a, b)) return false;
    if (o[a].on && w->slots[b].kind == WORLD_BODY_MOVING && !one_way_blocks(w, b, a)) return false;
    return true;
}

bool world_one_way_bears(const world *w, uint32_t a, vec2 apos, uint32_t b, vec2 bpos) {
    if (!w->one_way_count || !w->one_way[b].on) return true;
    geom_shape ta, tb;
    one_way_view va = start_view(w, a, &ta), vb = start_view(w, b, &tb);
    /* the start views' shapes and angles, at the places asked about: a mover's angle does not
     * change in the steps a character stands (characters do not turn) */
    va.pos = apos, vb.pos = bpos;
    if (w->slots[b].kind == WORLD_BODY_MOVING &&
        ref_kind(w->movers[w->slots[b].index].shape) == WORLD_REF_TURNED) {
        geom_shape local;
        vb.q = w->turns[b].q;
        geom_shape_orient(turn_local(w, &w->turns[b], &local), vb.q, &tb);
        vb.shape = &tb;
    }
    vec2 up = v2(-vb.q.y, vb.q.x);
    return lies_above(&va, &vb, up);
}

/* Notes every mover's position and angle, and its motion of the step scaled by dt (0: none). */
static void note_starts(world *w, float dt) {
    for (uint32_t i = 0; i < w->mover_count; i++) {
        const world_mover *m = &w->movers[i];
        world_one_way_slot *o = &w->one_way[m->slot];
        o->start = m->position;
        o->q = ref_kind(m->shape) == WORLD_REF_TURNED ? w->turns[m->slot].q : v2(1.0f, 0.0f);
        o->disp = v2_scale(m->intent, dt);
    }
}

void world_one_way_begin_step(world *w) {
    if (w->one_way_count) note_starts(w, w->dt);
}

void world_one_way_despawn(world *w, uint32_t slot) {
    if (!w->one_way || !w->one_way[slot].on) return;
    w->one_way[slot].on = 0;
    w->one_way_count--;
}

bool world_one_way_ray_passes(const world *w, uint32_t slot, vec2 q, vec2 d) {
    if (!w->one_way_count || !w->one_way[slot].on) return false;
    return !(v2_dot(d, v2(-q.y, q.x)) < 0.0f);
}

world_status world_body_set_one_way(world *w, world_body_id id, bool one_way) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (!w->one_way) {
        if (!one_way) return WORLD_OK;
        w->one_way = world_alloc(w, w->capacity, sizeof *w->one_way);
        if (!w->one_way) return WORLD_ERR_NO_MEMORY;
    }
    world_one_way_slot *o = &w->one_way[slot];
    if (o->on == (uint32_t)one_way) return WORLD_OK;
    /* the first one-way body: every mover's place, unmoving, for anything that asks before the
     * next step notes them */
    if (!w->one_way_count) note_starts(w, 0.0f);
    o->on = one_way;
    w->one_way_count += one_way ? 1u : (uint32_t)-1;
    w->rules_epoch++;
    world_events_rescan(w); /* pairs of this body may start or stop blocking */
    return WORLD_OK;
}

bool world_body_one_way(const world *w, world_body_id id) {
    uint32_t slot = id_slot(w, id);
    return slot != UINT32_MAX && w->one_way && w->one_way[slot].on;
}

/* world_events: contact and sensor events (COLLISION.md step 4, world.h "Contact and sensor
 * events"). Two pair sets carried from step to step: contacts in the band (begin at a gap of at
 * most 2 x skin, end past 4 x skin: the hysteresis keeps a resting contact from flickering) and
 * sensor overlaps. Each step, for contacts:
 *   1. the search: each mover that changed place (every one in a rescan: a static spawned, a
 *      filter changed), in dense order, looks at the bodies within 2 x skin of its box: the
 *      statics its slide noted (else the static grid), the movers of the mover pass's pair list
 *      (else the mover grid). A held pair it comes across is rechecked there (its gap from a to b,
 *      the normal kept, an end past 4 x skin); another begins at 2 x skin. Boxes among boxes with
 *      filters off (S1b) take the same arithmetic without building views;
 *   2. the other held pairs with a body that moved or went are rechecked (a pair whose bodies
 *      both stood still keeps its gap), and the step's begins are listed after its ends.
 * Then sensor overlaps (world_sensors.c): rechecked, and looked for along each mover's straight
 * move of the step (its swept box), so a visitor crossing a sensor within one step is seen.
 * Contacts are kept grouped by a home mover (one of their own, by dense index: the movers are
 * sorted by space, so the walks read the bodies in memory order and a mover's held pairs sit
 * together); whether a pair is held is a scan of its movers' groups (a few pairs), no hash. New
 * pairs wait in a tail, ended ones stay in place with their key cleared, until the groups are
 * rebuilt (a counting sort, world_contacts.c, which keeps that store): when dense indices moved (a
 * re-sort of the movers, a despawn, a spawn) or the tail and the ended pairs outgrow half the
 * groups. Nothing here runs while events are off (w->events NULL), so the step without them costs
 * what it did. The types and helpers both files share are in internal/world_events_internal.h. */
#include "world_events_internal.h"
#include "world_movers.h"

/* ---- API ----------------------------------------------------------------------------------- */

void world_events_free(world *w) {
    world_events *ev = w->events;
    if (!ev) return;
    free(ev->contacts.pairs);
    free(ev->contacts.spare);
    free(ev->contacts.start);
    free(ev->contacts.tail_head);
    free(ev->contacts.tail);
    free(ev->contacts.begins);
    free(ev->contacts.seen);
    free(ev->contacts.tail_seen);
    world_sensors_free(ev);
    free(ev->cev);
    free(ev->sev);
    free(ev->p0);
    free(ev->swept);
    free(ev->pairs);
    free(ev->path);
    free(ev->changed);
    free(ev->changed_bits);
    free(ev->note);
    free(ev);
    w->events = NULL;
    memset(&w->event_notes, 0, sizeof w->event_notes);
}

void world_set_events(world *w, bool enabled) {
    if (!enabled) {
        world_events_free(w);
        return;
    }
    if (w->events) return;
    world_events *ev = calloc(1, sizeof *ev);
    uint64_t *changed_bits = calloc(((size_t)w->capacity + 63) / 64, sizeof *changed_bits);
    if (!ev || !changed_bits) {
        free(ev);
        free(changed_bits);
        return;
    }
    ev->changed_bits = changed_bits;
    ev->rescan = true; /* pairs that touch already begin at the next step */
    w->events = ev;
}

void world_events_rescan(world *w) {
    if (w->events) w->events->rescan = true;
}

size_t world_contact_events(const world *w, const world_contact_event **out) {
    *out = w->events ? w->events->cev : NULL;
    return w->events ? w->events->cev_count : 0;
}
size_t world_sensor_events(const world *w, const world_sensor_event **out) {
    *out = w->events ? w->events->sev : NULL;
    return w->events ? w->events->sev_count : 0;
}
size_t world_contact_count(const world *w) { return w->events ? w->events->contacts.live : 0; }
size_t world_sensor_overlap_count(const world *w) {
    return w->events ? w->events->overlaps.count : 0;
}
uint64_t world_events_lost(const world *w) { return w->events ? w->events->lost : 0; }

/* ---- the step ------------------------------------------------------------------------------ */

void world_events_begin_step(world *w, bool start_noted) {
    world_events *ev = w->events;
    if (!ev) return;
    ev->cev_count = 0;
    ev->sev_count = 0;
    /* where each mover began: a body that did not move cannot begin or end a pair by itself
     * (its partner moved, or neither did), and sensors sweep from here */
    if (w->mover_count > ev->mover_room) {
        size_t room = ev->mover_room ? ev->mover_room : 64;
        while (room < w->mover_count)
            room *= 2;
        /* each array keeps at least mover_room entries whichever realloc fails */
        vec2 *p0 = realloc(ev->p0, room * sizeof *p0);
        if (p0) ev->p0 = p0;
        aabb *swept = p0 ? realloc(ev->swept, room * sizeof *swept) : NULL;
        if (swept) ev->swept = swept;
        aabb *path = swept ? realloc(ev->path, room * sizeof *path) : NULL;
        if (path) ev->path = path;
        uint8_t *changed = path ? realloc(ev->changed, room) : NULL;
        if (changed) ev->changed = changed;
        world_event_note *note = changed ? realloc(ev->note, room * sizeof *note) : NULL;
        if (note) ev->note = note, ev->mover_room = room;
    }
    ev->pairs_valid = false;
    ev->path_live = false;
    /* out of memory: this step's pairs are measured as if every mover had moved, straight */
    ev->p0_valid = w->mover_count <= ev->mover_room;
    if (ev->p0_valid) {
        ev->start = start_noted ? w->scratch.p0 : ev->p0;
        if (!start_noted)
            for (uint32_t i = 0; i < w->mover_count; i++)
                ev->p0[i] = w->movers[i].position;
        if (w->mover_count) memset(ev->changed, 0, w->mover_count); /* NULL while no mover yet */
    }
    w->event_notes.note = ev->note;
    w->event_notes.changed = ev->changed;
    w->event_notes.valid = ev->p0_valid;
}

void world_events_note_pairs(world *w) {
    world_events *ev = w->events;
    if (!ev || !ev->p0_valid) return;
    uint32_t n = w->scratch.pair_count;
    /* a full pair list may have dropped pairs (world_grid_pairs stops there): not complete */
    if (n >= w->scratch.pair_cap) return;
    if (n > ev->pair_room) {
        size_t room = ev->pair_room ? ev->pair_room : 256;
        while (room < n)
            room *= 2;
        uint32_t(*pairs)[2] = realloc(ev->pairs, room * sizeof *pairs);
        if (!pairs) return;
        ev->pairs = pairs;
        ev->pair_room = room;
    }
    /* Both may still be NULL (nothing recorded yet): memcpy takes no NULL, even for 0 bytes. */
    if (n) memcpy(ev->pairs, w->scratch.pairs, (size_t)n * sizeof *ev->pairs);
    /* the path boxes stay where they are unless the mover grid is rebuilt over the current boxes
     * (world_events_keep_path): most steps copy none */
    ev->path_live = true;
    ev->pair_count = n;
    ev->pairs_valid = true;
}

void world_events_keep_path(const world *w) {
    world_events *ev = w->events;
    if (!ev->path_live) return;
    if (w->mover_count)
        memcpy(ev->path, w->scratch.path, (size_t)w->mover_count * sizeof *ev->path);
    ev->path_live = false;
}

/* a if c, else b, through the bits: the compiler keeps no branch (it turns a ?: of floats into
 * one, which here a coin toss decides) */
static inline float pick(bool c, float a, float b) {
    uint32_t ua, ub, m = 0u - (uint32_t)c;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    uint32_t u = (ua & m) | (ub & ~m);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* geom_distance of two boxes, from their AABBs: the common case (S1b's every pair), without
 * building shapes or walking polygon vertices. Without branches: whether the boxes are apart
 * along both axes, along one, or overlap, and which side each lies on, is a coin toss from one
 * pair to the next (a mispredicted branch costs more than the arithmetic of every case). */
WORLD_HOT float box_distance(aabb a, aabb b, vec2 *n) {
    float dx = wmax(b.min.x - a.max.x, a.min.x - b.max.x);
    float dy = wmax(b.min.y - a.max.y, a.min.y - b.max.y);
    float sx = pick((b.min.x + b.max.x) >= (a.min.x + a.max.x), 1.0f, -1.0f);
    float sy = pick((b.min.y + b.max.y) >= (a.min.y + a.max.y), 1.0f, -1.0f);
    /* apart along both axes: the corners' distance, the normal (sx dx, sy dy) / d; else apart
     * along one axis, or overlapping: the axis of least penetration (ties go to y), the normal
     * (sx, 0) or (0, sy). Each component is s times its size: exactly the same floats (s is 1 or
     * -1, and sx dx / d is sx (dx / d)), but for the 0 of an axis normal, which -1 x 0 makes -0:
     * adding 0 makes it 0 again, where adding -0 (the corner's case) changes nothing at all. */
    bool corner = (dx > 0.0f) & (dy > 0.0f);
    float d = sqrtf(dx * dx + dy * dy);
    float along_x = pick(dx > dy, 1.0f, 0.0f);
    float ex = pick(corner, dx / d, along_x), ey = pick(corner, dy / d, 1.0f - along_x);
    float zero = pick(corner, -0.0f, 0.0f);
    *n = v2(sx * ex + zero, sy * ey + zero);
    return pick(corner, d, wmax(dx, dy));
}

WORLD_HOT float view_distance(const world *w, const body_view *a, const body_view *b, vec2 *n) {
    if (ref_kind(a->ref) == GEOM_SHAPE_BOX && ref_kind(b->ref) == GEOM_SHAPE_BOX)
        return box_distance(box_at(a->pos, a->lo, a->hi), box_at(b->pos, b->lo, b->hi), n);
    geom_shape ta, tb;
    const geom_shape *sa = ref_shape(w, a->ref, a->hi, &ta);
    const geom_shape *sb = ref_shape(w, b->ref, b->hi, &tb);
    return geom_distance(sa, a->pos, sb, b->pos, n);
}

static bool emit_contact(world *w, const ev_pair *p, float speed, bool begin) {
    world_events *ev = w->events;
    world_contact_event *cev = grow(ev->cev, &ev->cev_cap, ev->cev_count + 1, sizeof *cev);
    if (!cev) return false;
    ev->cev = cev;
    world_contact_event e = {p->a, p->b, p->owner_a, p->owner_b, p->normal, speed, begin};
    cev[ev->cev_count++] = e;
    return true;
}

/* Fills ev->changed_bits from the step's change bits, but for the movers (note_mover): what
 * slot_changed says of each body, computed once; and ev->gone_any. */
static void note_changes(world *w) {
    world_events *ev = w->events;
    size_t words = ((size_t)w->capacity + 63) / 64;
    if (ev->rescan) {
        memset(ev->changed_bits, 0xff, words * sizeof *ev->changed_bits);
    } else {
        /* a body gone marks its slot too: a held pair then needs one look at two bits */
        for (size_t k = 0; k < words; k++)
            ev->changed_bits[k] = w->spawn_bits[k] | w->pending_despawn_bits[k];
    }
    uint64_t gone = 0;
    for (size_t k = 0; k < words; k++)
        gone |= w->pending_despawn_bits[k];
    ev->gone_any = gone != 0;
}

/* Whether the pair of ids a, b (both alive at the last step) may have changed: a body went
 * (every despawn of a body a step has seen marks its slot until the next step ends), or one of
 * them changed place or was shown for the first time. Reads two bitmaps, no body. */
static inline bool pair_may_change(const world *w, const ev_pair *p) {
    const uint64_t *changed = w->events->changed_bits; /* gone bodies included (note_changes) */
    uint32_t sa = p->slot_a, sb = p->slot_b;
    return ((changed[sa >> 6] >> (sa & 63)) | (changed[sb >> 6] >> (sb & 63))) & 1u;
}

/* The live body of slot as the narrow phase sees it, and its intent, found through *hint (its
 * dense index when last seen, corrected when the movers were reordered or a despawn moved a body
 * into its place). */
WORLD_HOT body_view hinted_view(const world *w, uint32_t slot, bool is_static, uint32_t *hint,
                                vec2 *intent) {
    COLLIDE_ASSERT(w->slots[slot].kind == (is_static ? WORLD_BODY_STATIC : WORLD_BODY_MOVING));
    if (is_static) {
        if (*hint >= w->static_count || w->statics[*hint].slot != slot)
            *hint = w->slots[slot].index;
        *intent = v2(0.0f, 0.0f);
        return static_view(&w->statics[*hint]);
    }
    if (*hint >= w->mover_count || w->movers[*hint].slot != slot) *hint = w->slots[slot].index;
    const world_mover *m = &w->movers[*hint];
    *intent = m->intent;
    return mover_view(m, m->position);
}

static void contact_end(world *w, ev_pair *p, float speed);
static void contacts_list_begins(world *w);

/* Rechecks one held pair, both bodies there (va, vb and their intents ia, ib; a static's is 0),
 * and ends it if due: its key is cleared, and it stays where it is until the next grouping. */
WORLD_HOT void contact_update(world *w, ev_pair *p, const body_view *va, const body_view *vb,
                              vec2 ia, vec2 ib) {
    bool ended;
    float speed;
    /* a held contact ends by its gap alone, a one-way body's too (it begins only where it
     * blocks: contact_offer) */
    if (!slots_filter_block(w, p->slot_a, p->slot_b)) {
        ended = true;
        speed = v2_dot(v2_sub(ia, ib), p->normal);
    } else {
        vec2 nrm;
        float gap = view_distance(w, va, vb, &nrm);
        ended = gap > EV_END_GAP;
        if (!ended) p->normal = nrm;
        speed = v2_dot(v2_sub(ia, ib), ended ? p->normal : nrm);
    }
    if (ended) contact_end(w, p, speed);
}

/* Lists the end of a held pair and clears its key (it stays where it is until the next grouping,
 * found by nothing). */
static void contact_end(world *w, ev_pair *p, float speed) {
    if (!emit_contact(w, p, speed, false)) return;
    ev_contacts *s = &w->events->contacts;
    p->slot_a = p->slot_b = UINT32_MAX;
    s->dead++;
    s->live--;
}

/* Rechecks one held pair the search did not (gone: it is in the last group, a body went). */
WORLD_HOT void contact_recheck(world *w, ev_pair *p, bool gone) {
    if (gone || (w->events->gone_any && (bit_set(w->pending_despawn_bits, p->slot_a) ||
                                         bit_set(w->pending_despawn_bits, p->slot_b)))) {
        contact_end(w, p, 0.0f); /* a body went (its slot may hold another by now) */
        return;
    }
    COLLIDE_ASSERT(id_slot(w, p->a) == p->slot_a && id_slot(w, p->b) == p->slot_b);
    vec2 ia, ib;
    body_view va = hinted_view(w, p->slot_a, false, &p->hint_a, &ia);
    body_view vb = hinted_view(w, p->slot_b, p->b_static, &p->hint_b, &ib);
    contact_update(w, p, &va, &vb, ia, ib);
}

/* 1 for contacts, after the search (which rechecked the held pairs it came across): the other
 * held pairs whose bodies moved or went, the groups in order, then the tail of earlier steps; and
 * the step's begins are listed after its ends. Reads the seen bytes, and a pair only when unseen;
 * then clears them for the next step. */
static void contacts_recheck(world *w) {
    ev_contacts *s = &w->events->contacts;
    uint32_t gone_from = s->start[s->homes], count = s->count;
    const uint8_t *seen = s->seen;
    /* the seen bytes eight at a time, the unseen ones taken from the bits: whether a pair was
     * seen is a coin toss from one to the next, a mispredicted branch each time */
    uint32_t k = 0;
    for (; k + 8 <= count; k += 8) {
        uint64_t bytes;
        memcpy(&bytes, seen + k, sizeof bytes);
        for (uint64_t unseen = ~bytes & 0x0101010101010101ull; unseen; unseen &= unseen - 1) {
            uint32_t j = k + (uint32_t)__builtin_ctzll(unseen) / 8u;
            ev_pair *p = &s->pairs[j];
            if (p->slot_a == UINT32_MAX) continue;
            bool gone = j >= gone_from;
            if (gone || pair_may_change(w, p)) contact_recheck(w, p, gone);
        }
    }
    for (; k < count; k++) {
        if (seen[k]) continue;
        ev_pair *p = &s->pairs[k];
        if (p->slot_a == UINT32_MAX) continue;
        bool gone = k >= gone_from;
        if (gone || pair_may_change(w, p)) contact_recheck(w, p, gone);
    }
    for (uint32_t k = 0; k < s->tail_old; k++) {
        if (s->tail_seen[k]) continue;
        ev_pair *p = &s->tail[k];
        if (p->slot_a != UINT32_MAX && pair_may_change(w, p)) contact_recheck(w, p, false);
    }
    /* NULL while nothing was held yet: memset takes no NULL, even for 0 bytes */
    if (s->count) memset(s->seen, 0, s->count);
    if (s->tail_count) memset(s->tail_seen, 0, s->tail_count);
    contacts_list_begins(w);
}

/* The step's begins, after its ends. When they cannot be listed, their pairs are taken back (no
 * end without a begin): they are the tail past tail_old, in the same order. */
static void contacts_list_begins(world *w) {
    world_events *ev = w->events;
    ev_contacts *s = &ev->contacts;
    if (!s->begin_count) return;
    world_contact_event *cev =
        grow(ev->cev, &ev->cev_cap, ev->cev_count + s->begin_count, sizeof *cev);
    if (cev) {
        ev->cev = cev;
        memcpy(cev + ev->cev_count, s->begins, s->begin_count * sizeof *cev);
        ev->cev_count += s->begin_count;
    } else {
        ev->lost += s->begin_count;
        for (uint32_t k = s->tail_old; k < s->tail_count; k++) {
            s->tail[k].slot_a = s->tail[k].slot_b = UINT32_MAX;
            s->dead++;
            s->live--;
        }
    }
    s->begin_count = 0;
}

/* The scan behind contact_held and contact_held_movers: the pair of slots sa, sb (movers of dense
 * indices ia, ib, or ib the static's UINT32_MAX) in its group, then in the tail under either
 * mover. either: match the slots in either order, and a match that is a static's pair is stale
 * (*stale set, NULL): contact_held_movers' case. Inlined with either a constant. */
WORLD_HOT ev_pair *contact_scan(ev_contacts *s, uint32_t sa, uint32_t sb, uint32_t ia, uint32_t ib,
                                bool either, uint8_t **seen, bool *stale) {
    /* the bounds in locals: the pairs' fields and start are both uint32_t, so each store the
     * compiler cannot see past would otherwise reload them */
    ev_pair *pairs = s->pairs, *tail = s->tail;
    const uint32_t *start = s->start, *head = s->tail_head;
    uint32_t homes = s->homes;
    /* grouped: under the lower dense index of its movers (contact_home), which has not moved
     * since the grouping (contacts_group regroups when any did): one group to scan, not two */
    uint32_t g = ia < ib ? ia : ib;
    if (g < homes)
        for (uint32_t k = start[g], end = start[g + 1]; k < end; k++) {
            uint32_t a = pairs[k].slot_a, b = pairs[k].slot_b;
            if ((a == sa && b == sb) || (either && a == sb && b == sa)) {
                if (either && pairs[k].b_static) goto stale;
                *seen = &s->seen[k];
                return &pairs[k];
            }
        }
    /* begun since: listed under the mover that found it, either */
    for (int side = 0; side < 2; side++) {
        uint32_t h = side ? ib : ia;
        if (h >= homes) continue;
        for (uint32_t f = head[h]; f; f = tail[f - 1].next) {
            uint32_t a = tail[f - 1].slot_a, b = tail[f - 1].slot_b;
            if ((a == sa && b == sb) || (either && a == sb && b == sa)) {
                if (either && tail[f - 1].b_static) goto stale;
                *seen = &s->tail_seen[f - 1];
                return &tail[f - 1];
            }
        }
    }
    return NULL;
stale:
    /* a stale static pair met: the lookup in id order decides, as it always did */
    *stale = true;
    return NULL;
}

/* Whether the pair of key (sa, sb) is held: the group of its movers (dense indices ia, and ib
 * or UINT32_MAX for a static), and their lists in the tail; *seen: its seen byte. */
WORLD_HOT ev_pair *contact_held(ev_contacts *s, uint32_t sa, uint32_t sb, uint32_t ia, uint32_t ib,
                                uint8_t **seen) {
    return contact_scan(s, sa, sb, ia, ib, false, seen, NULL);
}

typedef struct contact_ctx {
    world *w;
    uint32_t slot;  /* the mover looking */
    uint32_t index; /* its dense index */
    body_view view; /* it, where it ended */
    vec2 intent;    /* its intent */
    aabb box;       /* its box grown by the begin gap */
} contact_ctx;

static void contact_begin(const contact_ctx *c, uint32_t sa, uint32_t sb, uint32_t other_index,
                          vec2 normal, bool swap, bool other_static);

/* A candidate pair for a begin: the mover c->slot and the body of slot other (dense index
 * other_index among the movers or the statics). */
WORLD_HOT void contact_offer(contact_ctx *c, uint32_t other, uint32_t other_index,
                             const body_view *ov, bool other_static) {
    world *w = c->w;
    if (other == c->slot || !slots_block(w, c->slot, other)) return;
    /* a is the mover of a mover-static pair, else the lower id */
    bool swap = !other_static && slot_id(w, other) < slot_id(w, c->slot);
    uint32_t sa = swap ? other : c->slot, sb = swap ? c->slot : other;
    ev_contacts *s = &w->events->contacts;
    uint8_t *seen = NULL;
    ev_pair *held =
        contact_held(s, sa, sb, c->index, other_static ? UINT32_MAX : other_index, &seen);
    if (held && w->events->gone_any &&
        (bit_set(w->pending_despawn_bits, sa) || bit_set(w->pending_despawn_bits, sb))) {
        /* a pair of a body that went, whose slot holds this new one: it ends (as contacts_recheck
         * would end it), and this one may begin */
        contact_end(w, held, 0.0f);
        if (held->slot_a != UINT32_MAX) return; /* its end could not be listed: still held */
        held = NULL;
    }
    if (held) {
        /* its recheck, here (a body of it moved: this one), unless done or it began in this step
         * (seen from its start); from a to b as contacts_recheck would */
        if (!*seen) {
            *seen = 1;
            vec2 ic = c->intent, io = other_static ? v2(0.0f, 0.0f) : w->movers[other_index].intent;
            if (swap)
                contact_update(w, held, ov, &c->view, io, ic);
            else
                contact_update(w, held, &c->view, ov, ic, io);
        }
        return;
    }
    vec2 n;
    float gap = view_distance(w, &c->view, ov, &n);
    if (!(gap <= EV_BEGIN_GAP)) return;
    contact_begin(c, sa, sb, other_index, swap ? v2_neg(n) : n, swap, other_static);
}

/* A new pair of the step (contact_offer): held from now, and its begin listed. The owners and
 * intents are read from the movers by their dense indices (slot_owner's answers without its read of
 * the slot table, at random: ~330 begins a step on S1b-slow); the approach speed is the closing
 * speed of the intents along the normal, from a towards b. */
static EV_COLD void contact_begin(const contact_ctx *c, uint32_t sa, uint32_t sb,
                                  uint32_t other_index, vec2 normal, bool swap, bool other_static) {
    world *w = c->w;
    ev_contacts *s = &w->events->contacts;
    const world_mover *looker = &w->movers[c->index];
    const world_mover *other = other_static ? NULL : &w->movers[other_index];
    uint32_t owner_c = looker->owner, owner_o = other ? other->owner : 0u;
    vec2 intent_o = other ? other->intent : v2(0.0f, 0.0f);
    ev_pair p = {slot_id(w, sa),
                 slot_id(w, sb),
                 sa,
                 sb,
                 swap ? other_index : c->index,
                 swap ? c->index : other_index,
                 swap ? owner_o : owner_c,
                 swap ? owner_c : owner_o,
                 c->index,
                 0,
                 normal,
                 false,
                 other_static};
    if (!contact_add(s, &p)) {
        w->events->lost++;
        return;
    }
    /* a pair whose begin could not be listed is taken back: no end without a begin */
    world_contact_event *b = grow(s->begins, &s->begin_cap, s->begin_count + 1, sizeof *b);
    if (!b) {
        w->events->lost++;
        contact_unadd(s);
        return;
    }
    s->begins = b;
    vec2 ia = swap ? intent_o : looker->intent, ib = swap ? looker->intent : intent_o;
    world_contact_event e = {
        p.a, p.b, p.owner_a, p.owner_b, p.normal, v2_dot(v2_sub(ia, ib), p.normal), true};
    b[s->begin_count++] = e;
}

WORLD_HOT bool contact_static_visit(const world *cw, uint32_t si, void *vctx) {
    contact_ctx *c = vctx;
    (void)cw;
    const world_static *st = &c->w->statics[si];
    if (!aabb_overlaps(st->box, c->box)) return true;
    body_view v = static_view(st);
    contact_offer(c, st->slot, si, &v, true);
    return true;
}

static inline bool mover_looks(const world *w, uint32_t i) {
    const world_events *ev = w->events;
    return ev->p0_valid ? ev->changed[i] & EV_LOOKS
                        : ev->rescan || slot_changed(w, w->movers[i].slot);
}
static inline bool mover_queried(const world *w, uint32_t i) {
    const world_events *ev = w->events;
    return ev->p0_valid ? ev->changed[i] & EV_QUERIED : mover_looks(w, i);
}

static bool contact_mover_visit(const world *cw, uint32_t i, void *vctx) {
    contact_ctx *c = vctx;
    (void)cw;
    if (i >= c->w->mover_count) return true;
    const world_mover *m = &c->w->movers[i];
    if (!aabb_overlaps(box_at(m->position, m->lo, m->hi), c->box)) return true;
    body_view v = mover_view(m, m->position);
    if (i < c->index && mover_looks(c->w, i) && !slot_is_sensor(c->w, m->slot)) {
        /* a partner that came earlier and looks too offers the pair, from its side (the normal's
         * sign of zero depends on the side): it has already when it queried the grid, not when
         * it took its partners from the pair list (this mover left its path box: the pair may
         * not be listed) */
        if (mover_queried(c->w, i)) return true;
        contact_ctx other = {
            c->w, m->slot,   i,
            v,    m->intent, aabb_inflate(box_at(m->position, m->lo, m->hi), EV_BEGIN_GAP)};
        contact_offer(&other, c->slot, c->index, &c->view, false);
        return true;
    }
    contact_offer(c, m->slot, i, &v, false);
    return true;
}

/* A contact_ctx for the mover of dense index i where it ended. */
WORLD_HOT contact_ctx contact_looker(world *w, uint32_t i) {
    const world_mover *m = &w->movers[i];
    contact_ctx c = {w,         m->slot,
                     i,         mover_view(m, m->position),
                     m->intent, aabb_inflate(box_at(m->position, m->lo, m->hi), EV_BEGIN_GAP)};
    return c;
}

/* held (or NULL), unless a body of it went this step, its slot perhaps another's by now: then
 * it ends as contacts_recheck would end it, and NULL when it did (the pair is no longer held: the
 * new body may begin); held still when its end could not be listed. */
WORLD_HOT ev_pair *contact_unless_gone(world *w, ev_pair *held) {
    if (held && w->events->gone_any &&
        (bit_set(w->pending_despawn_bits, held->slot_a) ||
         bit_set(w->pending_despawn_bits, held->slot_b))) {
        contact_end(w, held, 0.0f);
        if (held->slot_a == UINT32_MAX) return NULL;
    }
    return held;
}

/* The held pair (sa, sb) of movers (dense indices) ia and ib (UINT32_MAX for a static) a body of
 * which went, its slot now another's: it ends as contacts_recheck would end it. NULL when it
 * did (the pair is not held: the new body may begin), else the pair (its end could not be
 * listed: still held); *seen: its seen byte. */
WORLD_HOT ev_pair *contact_held_live(world *w, uint32_t sa, uint32_t sb, uint32_t ia, uint32_t ib,
                                     uint8_t **seen) {
    return contact_unless_gone(w, contact_held(&w->events->contacts, sa, sb, ia, ib, seen));
}

/* contact_static_visit and contact_offer for a box mover (dense index i, its box lb, grown by the
 * begin gap: box) and a box static, filters off: the same arithmetic, without the views. */
WORLD_HOT void contact_static_box(world *w, uint32_t i, const world_mover *m, aabb lb, aabb box,
                                  uint32_t si) {
    const world_static *st = &w->statics[si];
    if (!aabb_overlaps(st->box, box)) return;
    uint8_t *seen = NULL;
    ev_pair *held = contact_held_live(w, m->slot, st->slot, i, UINT32_MAX, &seen);
    if (held && *seen) return;
    /* static_view's box: its offsets from the position, added back */
    aabb sb = box_at(st->position, v2_sub(st->box.min, st->position), static_hi(st));
    vec2 n;
    float gap = box_distance(lb, sb, &n);
    if (held) {
        *seen = 1;
        if (gap > EV_END_GAP)
            contact_end(w, held, v2_dot(v2_sub(m->intent, v2(0.0f, 0.0f)), held->normal));
        else
            held->normal = n;
        return;
    }
    if (!(gap <= EV_BEGIN_GAP)) return;
    contact_ctx c = contact_looker(w, i);
    contact_begin(&c, m->slot, st->slot, si, n, false, true);
}

/* Whether the movers of slots si, sj (dense indices ia, ib) hold a contact, whichever of them is
 * its a: contact_held without the bodies' ids (a held pair of two movers says which is a). A
 * pair of two live movers is the only one under either order: the pairs of a mover that went
 * sort into the last group, which no scan reads (contacts_group). A mover-static pair whose
 * static went, its slot now a mover's, may still be listed: NULL with *stale set then, and the
 * caller asks contact_held in id order as before. */
WORLD_HOT ev_pair *contact_held_movers(ev_contacts *s, uint32_t si, uint32_t sj, uint32_t ia,
                                       uint32_t ib, uint8_t **seen, bool *stale) {
    return contact_scan(s, si, sj, ia, ib, true, seen, stale);
}

/* contact_offer for box movers, filters off, from the pair list: looker i (its box lb), partner j
 * (its box jb). The ids, which order a and b, are read only for a begin (or a stale pair): each
 * is a read of the slot table at random, where perf put most of this walk's samples when it was
 * done for every pair (its time did not change measurably without them). */
WORLD_HOT void contact_mover_box(world *w, uint32_t i, uint32_t j, aabb lb, aabb jb) {
    const world_mover *mi = &w->movers[i], *mj = &w->movers[j];
    uint8_t *seen = NULL;
    bool stale = false;
    ev_pair *held =
        contact_held_movers(&w->events->contacts, mi->slot, mj->slot, i, j, &seen, &stale);
    bool swap;
    uint32_t sa, sb;
    if (held) {
        swap = held->slot_a != mi->slot;
        sa = held->slot_a, sb = held->slot_b;
        held = contact_unless_gone(w, held);
    } else {
        swap = false, sa = sb = 0; /* decided below, where they are needed */
    }
    if (stale) {
        swap = slot_id(w, mj->slot) < slot_id(w, mi->slot); /* a: the lower id */
        sa = swap ? mj->slot : mi->slot, sb = swap ? mi->slot : mj->slot;
        held = contact_held_live(w, sa, sb, i, j, &seen);
    }
    if (held && *seen) return;
    vec2 n;
    if (held) {
        *seen = 1;
        float gap = swap ? box_distance(jb, lb, &n) : box_distance(lb, jb, &n);
        vec2 ia = swap ? mj->intent : mi->intent, ib = swap ? mi->intent : mj->intent;
        if (gap > EV_END_GAP)
            contact_end(w, held, v2_dot(v2_sub(ia, ib), held->normal));
        else
            held->normal = n;
        return;
    }
    float gap = box_distance(lb, jb, &n);
    if (!(gap <= EV_BEGIN_GAP)) return;
    if (!stale) {
        swap = slot_id(w, mj->slot) < slot_id(w, mi->slot); /* a: the lower id */
        sa = swap ? mj->slot : mi->slot, sb = swap ? mi->slot : mj->slot;
    }
    contact_ctx c = contact_looker(w, i);
    contact_begin(&c, sa, sb, j, swap ? v2_neg(n) : n, swap, false);
}

/* The rest of contacts_find's look for mover i past the box path (statics_done: its noted statics
 * were offered there): statics through the ones its slide noted or the static grid, movers through
 * the mover grid unless the mover pass's pairs cover it (*paths: the path boxes, moved aside when
 * the grid is built over scratch.path; *grid_ready: built). Out of line: rare among boxes, and the
 * search's loop keeps its registers. */
static EV_COLD void contacts_look_rest(world *w, uint32_t i, bool statics_done, const aabb **paths,
                                       bool *grid_ready) {
    world_events *ev = w->events;
    world_grid *g = &w->cache->grid;
    contact_ctx c = contact_looker(w, i);
    if (statics_done) {
        /* done in contacts_find */
    } else if (ev->p0_valid && (ev->changed[i] & EV_NOTED) &&
               aabb_contains(ev->note[i].region, c.box)) {
        /* its slide walked the statics of a region holding this box: the same statics, in the
         * same order, as the static query would find */
        uint32_t count = (uint32_t)ev->changed[i] >> EV_NOTED_SHIFT;
        for (uint32_t k = 0; k < count; k++)
            contact_static_visit(w, ev->note[i].near[k], &c);
    } else {
        world_static_query(w, c.box, contact_static_visit, &c);
    }
    if (w->mover_count < 2) return;
    if (ev->pairs_valid && aabb_contains((*paths)[i], c.box)) return;
    if (!*grid_ready && !g->valid) {
        world_grid_build_current(w, 0.0f);
        /* it kept the path boxes aside first (world_events_keep_path) */
        if (ev->pairs_valid) *paths = ev->path_live ? w->scratch.path : ev->path;
    }
    *grid_ready = true;
    if (ev->p0_valid) ev->changed[i] |= EV_QUERIED;
    world_grid_query(w, g, c.box, contact_mover_visit, &c);
}

/* 2 for contacts: new pairs around the movers that moved. Statics through the static grid; movers
 * from the mover pass's pairs (world_events_note_pairs) when the looker stayed inside its path
 * box, else through the mover grid the step left. */
static void contacts_find(world *w) {
    world_events *ev = w->events;
    uint32_t n = w->mover_count;
    bool grid_ready = false;
    /* boxes among boxes, filters off (S1b): the pairs take contact_static_box, contact_mover_box */
    bool boxes = !world_pair_rules(w) && !w->nonbox_statics && ev->p0_valid;
    /* in locals: the stores of the walk (a byte of ev->changed, a pair's flag) may alias anything
     * to the compiler, which would reload each of these after every one */
    const bool pairs_valid = ev->pairs_valid;
    const world_event_note *notes = ev->note;
    const aabb *paths = pairs_valid ? (ev->path_live ? w->scratch.path : ev->path) : NULL;
    /* note_mover's reads, for the movers as the step left them (p0_valid: no mover is added or
     * moved while the search runs) */
    const world_mover *movers = w->movers;
    const vec2 *start = ev->start;
    uint8_t *changed = ev->changed;
    uint64_t *changed_bits = ev->changed_bits;
    const uint64_t *spawn_bits = w->spawn_bits;
    const bool p0_valid = ev->p0_valid, rescan = ev->rescan, sensors = w->filtered_count != 0;
    const bool turns = w->turns != NULL; /* a turn in place changes no position */
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &movers[i];
        uint32_t noted;
        if (p0_valid) {
            /* note_mover, its arrays in locals */
            uint32_t slot = m->slot;
            bool looks = !vec_eq(m->position, start[i]) || rescan || bit_set(spawn_bits, slot) ||
                         (turns && bit_set(w->moved_bits, slot));
            noted = ((uint32_t)changed[i] & ~(EV_LOOKS | EV_QUERIED)) | (looks ? EV_LOOKS : 0u);
            changed[i] = (uint8_t)noted;
            if (!looks) continue;
            changed_bits[slot >> 6] |= 1ull << (slot & 63);
        } else {
            noted = note_mover(w, i);
        }
        if (!(noted & EV_LOOKS) || (sensors && slot_is_sensor(w, m->slot))) continue;
        bool statics_done = false;
        uint32_t flags = boxes ? noted : 0u;
        if ((flags & EV_NOTED) && ref_kind(m->shape) == GEOM_SHAPE_BOX) {
            aabb lb = box_at(m->position, m->lo, m->hi), box = aabb_inflate(lb, EV_BEGIN_GAP);
            const world_event_note *note = &notes[i];
            if (aabb_contains(note->region, box)) {
                uint32_t count = flags >> EV_NOTED_SHIFT;
                for (uint32_t k = 0; k < count; k++)
                    contact_static_box(w, i, m, lb, box, note->near[k]);
                if (n < 2 || (pairs_valid && aabb_contains(paths[i], box))) continue;
                statics_done = true;
            }
        }
        contacts_look_rest(w, i, statics_done, &paths, &grid_ready);
    }
    if (!ev->pairs_valid) return;
    uint32_t(*pairs)[2] = ev->pairs;
    for (uint32_t k = 0, count = ev->pair_count; k < count; k++) {
        uint32_t i = pairs[k][0], j = pairs[k][1];
        bool li = (changed[i] & EV_LOOKS) && !(sensors && slot_is_sensor(w, movers[i].slot));
        bool lj = (changed[j] & EV_LOOKS) && !(sensors && slot_is_sensor(w, movers[j].slot));
        if (!li && !lj) continue;
        if (!li) {
            uint32_t t = i;
            i = j, j = t;
        }
        const world_mover *mi = &w->movers[i], *mj = &w->movers[j];
        aabb lb = box_at(mi->position, mi->lo, mi->hi), jb = box_at(mj->position, mj->lo, mj->hi);
        if (!aabb_overlaps(jb, aabb_inflate(lb, EV_BEGIN_GAP))) continue;
        if (boxes && ref_kind(mi->shape) == GEOM_SHAPE_BOX &&
            ref_kind(mj->shape) == GEOM_SHAPE_BOX) {
            contact_mover_box(w, i, j, lb, jb);
            continue;
        }
        contact_ctx c = contact_looker(w, i);
        body_view v = mover_view(mj, mj->position);
        contact_offer(&c, mj->slot, j, &v, false);
    }
}

void world_events_end_step(world *w) {
    world_events *ev = w->events;
    if (!ev) return;
    note_changes(w);
    if (contacts_group(w)) {
        ev->contacts.tail_old = ev->contacts.tail_count;
        contacts_find(w); /* note_changes for each mover too */
        contacts_recheck(w);
    } else {
        for (uint32_t i = 0; i < w->mover_count; i++)
            note_mover(w, i);
        ev->lost++; /* no room to group: this step's contacts are not looked at */
    }
    world_sensors_step(w);
    ev->rescan = false;
    ev->path_live = false; /* the queries after the step may rebuild the grid over scratch.path */
}

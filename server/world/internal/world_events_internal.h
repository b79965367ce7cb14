/* The state world_events.c (contacts) and world_sensors.c (sensor overlaps) share: the event
 * pair types, the per-step bookkeeping (world_events) and the helpers both read bodies through.
 * Private to those two files. */
#ifndef COLLIDE_WORLD_EVENTS_INTERNAL_H
#define COLLIDE_WORLD_EVENTS_INTERNAL_H

#include "world_internal.h"
#include "world_pair.h"
#include "world_statics.h"

#define EV_BEGIN_GAP (2.0f * GEOM_SKIN)
/* ev->changed: the mover looks for new pairs in this step (it changed place, or a rescan) */
#define EV_LOOKS 1u
/* ev->changed: it queried the mover grid (it did not take its partners from the pair list) */
#define EV_QUERIED 2u
/* ev->changed: its slide noted its statics in this step (their count in the bits above) */
#define EV_NOTED WORLD_EVENTS_NOTED
#define EV_NOTED_SHIFT WORLD_EVENTS_NOTED_SHIFT

/* Statics remembered per mover from its slide: a box under a cell wide, grown by a slow move and
 * the margins, meets at most 2 x 2 cells of unit tiles. */
#define EV_END_GAP (4.0f * GEOM_SKIN)

/* The rare path of a hot loop: kept out of line so the loop stays small. */
#if defined(__GNUC__)
#define EV_COLD __attribute__((noinline))
#else
#define EV_COLD
#endif

/* A tracked pair: a contact (a, b) or a sensor overlap (a = the sensor, b = the visitor). */
typedef struct ev_pair {
    world_body_id a, b;
    /* The key. Contacts: the slots (a slot holds one body at a time; a pair that lost a body is
     * never taken for the slot's new body's: a despawned mover's pairs wait in the last group,
     * which no search scans, until contacts_recheck ends them; a static's, found under its slot's
     * new body, is ended there, contact_held_live). Sensor overlaps: the ids
     * (a pair ended in the step stays until after the search, and must not hide a new body that
     * took the slot of one that went). */
    uint32_t slot_a, slot_b;
    uint32_t hint_a, hint_b; /* dense indices (movers or statics) where the bodies were last seen:
                              * the rechecks read the bodies without the slot table */
    uint32_t owner_a, owner_b;
    uint32_t home; /* contacts in ev_contacts.tail: the dense index of the mover that found it */
    uint32_t next; /* contacts in the tail: the previous one with the same home + 1, 0 none */
    vec2 normal;   /* contacts: from a towards b, as last seen */
    bool ended;    /* sensor overlaps: ended in this step, dropped after the step's search, so the
                    * search does not take a visitor that just left for a new crossing (contacts
                    * clear their key instead) */
    bool b_static; /* contacts: b is a static (a is always a mover) */
} ev_pair;

typedef struct ev_set {
    ev_pair *pairs;     /* dense */
    uint32_t count;     /* pairs */
    uint32_t cap;       /* capacity of pairs */
    uint32_t *hash;     /* open addressing: index + 1, 0 empty */
    uint32_t hash_mask; /* hash size - 1 (a power of two >= 2 x cap) */
} ev_set;

/* The held contacts. Grouped by home mover (a mover of the pair: the one of lower dense index),
 * homes ascending: the pairs of home i are pairs[start[i] .. start[i + 1]); pairs whose body went
 * sort into a last group, `homes`, which the recheck empties. Pairs begun since the grouping wait
 * in `tail`, listed per home (the finder: one of the pair's movers) through tail_head and next.
 * An ended pair stays where it is with its key cleared (slot_a UINT32_MAX: nothing finds it) until
 * the next grouping: a step copies no pair unless the grouping is due (the movers' dense indices
 * moved, or the tail and the ended pairs outgrow a fraction of the groups). */
typedef struct ev_contacts {
    ev_pair *pairs;      /* grouped */
    ev_pair *spare;      /* the other buffer: the grouping writes into it, then they swap */
    uint32_t count;      /* entries in pairs, ended ones included */
    uint32_t cap;        /* capacity of pairs and of spare (>= count + tail_count) */
    uint32_t *start;     /* homes + 2 entries */
    uint32_t *tail_head; /* per dense mover index: its newest pair in tail + 1, 0 none */
    size_t room;         /* entries start and tail_head hold */
    uint32_t homes;      /* w->mover_count when grouped */
    uint64_t sorts;      /* w->mover_sorts when grouped */
    uint64_t despawns;   /* w->mover_despawns when grouped */
    bool grouped;        /* start describes pairs for the movers as they are */
    ev_pair *tail;       /* begun since the grouping */
    uint32_t tail_count; /* entries in tail, ended ones included */
    uint32_t tail_cap;   /* capacity of tail */
    uint32_t tail_old;   /* tail_count at the step's start: pairs past it began in this step */
    /* Per entry of pairs (cap) and of tail (tail_cap): rechecked in this step's search already
     * (or, in the tail, begun in it). Apart from the pairs, so the recheck after the search reads
     * a byte per pair and only the pairs not seen, and writes none; all zero between steps. */
    uint8_t *seen, *tail_seen;
    uint32_t dead;               /* ended pairs still in pairs or tail */
    uint32_t live;               /* held pairs: count + tail_count - dead */
    world_contact_event *begins; /* the step's begins, listed after its ends once both are known */
    size_t begin_count, begin_cap;
} ev_contacts;

typedef struct world_events {
    ev_contacts contacts;
    ev_set overlaps;
    world_contact_event *cev; /* the last step's contact events */
    size_t cev_count, cev_cap;
    world_sensor_event *sev; /* the last step's sensor events */
    size_t sev_count, sev_cap;
    vec2 *p0;          /* per dense mover index: its position at the start of the step, when
                        * the step does not note it itself (start) */
    const vec2 *start; /* where each mover began the step (p0_valid): p0, or the step's own
                        * scratch.p0 when its mover passes fill it (no copy) */
    aabb *swept;       /* per dense mover index: its box swept along the step's straight move */
    size_t mover_room; /* entries p0 and swept hold: grown with the movers, not sized to
                        * mover_cap (a daemon holds many rooms: issue 13's memory per room) */
    bool p0_valid;     /* p0 was filled at the start of this step */
    /* The mover pass's pairs (dense indices, path boxes that meet) and its path boxes, copied
     * before the discrete pass reuses those arrays: a mover whose final box grown by the begin
     * gap lies in its path box meets every mover within that gap among its pairs (or the other
     * one left its path, and looks itself), so it needs no grid query of its own. */
    uint32_t (*pairs)[2];
    uint32_t pair_count;
    size_t pair_room;
    aabb *path;             /* per dense mover index, mover_room entries: a copy of the path
                             * boxes, once the step overwrote scratch.path */
    bool path_live;         /* scratch.path still holds the mover pass's path boxes */
    bool pairs_valid;       /* pairs and path describe this step's mover pass, complete */
    uint8_t *changed;       /* per dense mover index: EV_* bits, mover_room entries */
    uint64_t *changed_bits; /* per slot: changed place in this step or shown for the first time
                             * (slot_changed), or its body went (a live body in such a slot is
                             * new, so shown first anyway), a bit each: the rechecks read only
                             * these */
    world_event_note *note; /* per dense mover index: the region its slide walked and the
                             * statics it found there (EV_NOTED) */
    bool rescan;            /* look for new pairs around every body */
    bool gone_any;          /* a body went since the last step (pending_despawn_bits) */
    uint64_t lost;          /* world_stats.events_lost */
} world_events;

/* ---- helpers both files use ----------------------------------------------------------- */

static inline bool bit_set(const uint64_t *bits, uint32_t slot) {
    return (bits[slot >> 6] >> (slot & 63)) & 1u;
}
/* Changed place in this step, or shown for the first time (a static's first step too), or every
 * body in a rescan: from ev->changed_bits (note_changes, at the start of the step's events). */
static inline bool slot_changed(const world *w, uint32_t slot) {
    return bit_set(w->events->changed_bits, slot);
}

/* A live body as the narrow phase sees it (slot known to be live). */
static inline body_view slot_view(const world *w, uint32_t slot) {
    const world_slot *s = &w->slots[slot];
    if (s->kind == WORLD_BODY_STATIC) return static_view(&w->statics[s->index]);
    const world_mover *m = &w->movers[s->index];
    return mover_view(m, m->position);
}
static inline uint32_t slot_owner(const world *w, uint32_t slot) {
    const world_slot *s = &w->slots[slot];
    return s->kind == WORLD_BODY_MOVING ? w->movers[s->index].owner : 0u;
}

static inline void *grow(void *p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * size);
    if (q) *cap = c;
    return q;
}

/* The mover of dense index i's part of note_changes (contacts_find does it as it goes; each
 * mover before any later one reads it): its ev->changed bits, returned so the caller need not
 * read them back (EV_LOOKS: it looks for new pairs; only that bit without p0_valid). */
WORLD_HOT uint32_t note_mover(world *w, uint32_t i) {
    world_events *ev = w->events;
    const world_mover *m = &w->movers[i];
    uint32_t slot = m->slot;
    bool looks;
    uint32_t flags;
    if (ev->p0_valid) {
        /* a mover whose position changed was marked moved (finish_mover): its position says
         * it, but for a turn in place (its angle alone changed: world_turn marked it moved) */
        looks = !vec_eq(m->position, ev->start[i]) || ev->rescan || bit_set(w->spawn_bits, slot) ||
                (w->turns && bit_set(w->moved_bits, slot));
        flags = ((uint32_t)ev->changed[i] & ~(EV_LOOKS | EV_QUERIED)) | (looks ? EV_LOOKS : 0u);
        ev->changed[i] = (uint8_t)flags;
    } else {
        looks = ev->rescan || bit_set(w->spawn_bits, slot) || bit_set(w->moved_bits, slot);
        flags = looks ? EV_LOOKS : 0u;
    }
    if (looks) ev->changed_bits[slot >> 6] |= 1ull << (slot & 63);
    return flags;
}

/* ---- world_contacts.c ------------------------------------------------------------------ */

/* Groups the held pairs, those of the tail too, by their home for the movers as they are now,
 * when it is due; false when there was no room (the step's contacts are then not looked at). */
bool contacts_group(world *w);
/* Adds a new pair to the tail, listed under its home (p->home); false when there was no room. */
bool contact_add(ev_contacts *s, ev_pair *p);
/* Takes back the pair contact_add added last. */
void contact_unadd(ev_contacts *s);

/* ---- world_sensors.c ------------------------------------------------------------------- */

/* Ends the step's sensor overlaps that no longer hold, and begins the new ones along each
 * mover's straight move (when the step's start positions are known); then compacts the set. */
void world_sensors_step(world *w);
void world_sensors_free(world_events *ev);

#endif

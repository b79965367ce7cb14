/* world_contacts: the store of held contact pairs (world_events_internal.h's ev_contacts): its
 * buffers' room, the grouping of the pairs by their home mover (a counting sort, when dense
 * indices moved or the tail and the ended pairs outgrew half the groups), and the tail new pairs
 * wait in until then. The lookups the search makes on every step (contact_held and its kin) stay
 * in world_events.c, inlined into its walks. */
#include "world_events_internal.h"

/* Room for the groups of n movers (start: n + 2 entries, tail_head: n); false when it could not
 * grow. */
static bool contacts_room(ev_contacts *s, uint32_t n) {
    if ((size_t)n + 2 <= s->room) return true;
    size_t room = s->room ? s->room : 64;
    while (room < (size_t)n + 2)
        room *= 2;
    uint32_t *start = realloc(s->start, room * sizeof *start);
    if (!start) return false;
    s->start = start;
    uint32_t *head = realloc(s->tail_head, room * sizeof *head);
    if (!head) return false;
    /* tail_head is all zero but for the homes of the tail (the grouping clears those) */
    memset(head + s->room, 0, (room - s->room) * sizeof *head);
    s->tail_head = head;
    s->room = room;
    return true;
}

/* A buffer of pairs and its seen bytes grown from `old` entries to `cap` (the new bytes clear);
 * false when either could not grow (the caller then keeps `old` as their room). */
static bool pairs_grow(ev_pair **pairs, uint8_t **seen, uint32_t old, uint32_t cap) {
    ev_pair *p = realloc(*pairs, (size_t)cap * sizeof *p);
    if (!p) return false;
    *pairs = p;
    uint8_t *sn = realloc(*seen, cap);
    if (!sn) return false;
    memset(sn + old, 0, cap - old);
    *seen = sn;
    return true;
}

/* Room for `need` pairs in both buffers; false when they could not grow. */
static bool contacts_cap(ev_contacts *s, uint32_t need) {
    if (need <= s->cap) return true;
    uint32_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    if (!pairs_grow(&s->pairs, &s->seen, s->cap, cap)) return false;
    ev_pair *spare = realloc(s->spare, (size_t)cap * sizeof *spare);
    if (!spare) return false;
    s->spare = spare;
    s->cap = cap;
    return true;
}

/* The home of a held pair for the movers as they are now: the lower dense index of its movers
 * (hints refreshed), or `n`, the last group, when a body went. */
static uint32_t contact_home(const world *w, ev_pair *p, uint32_t n) {
    uint32_t sa = id_slot(w, p->a), sb = id_slot(w, p->b);
    if (sa == UINT32_MAX || sb == UINT32_MAX || bit_set(w->pending_despawn_bits, sa) ||
        bit_set(w->pending_despawn_bits, sb))
        return n;
    p->hint_a = w->slots[sa].index;
    if (!p->b_static) p->hint_b = w->slots[sb].index;
    return p->b_static || p->hint_a < p->hint_b ? p->hint_a : p->hint_b;
}

/* Groups the held pairs, those of the tail too, by their home for the movers as they are now (a
 * counting sort into the spare buffer, ended pairs dropped), when it is due: dense indices may
 * have moved since the last grouping, or the tail and the ended pairs outgrew half the
 * groups. False when there was no room (nothing changed: the step's contacts are then not looked
 * at). */
bool contacts_group(world *w) {
    ev_contacts *s = &w->events->contacts;
    uint32_t n = w->mover_count;
    if (s->grouped && s->homes == n && s->sorts == w->mover_sorts &&
        s->despawns == w->mover_despawns && s->tail_count + s->dead <= s->count / 2 + 64)
        return true;
    if (!contacts_room(s, n)) return false;
    COLLIDE_ASSERT(s->count + s->tail_count <= s->cap);
    uint32_t *start = s->start;
    memset(start, 0, ((size_t)n + 2) * sizeof *start);
    for (uint32_t k = 0; k < s->count; k++)
        if (s->pairs[k].slot_a != UINT32_MAX)
            start[(s->pairs[k].home = contact_home(w, &s->pairs[k], n)) + 1]++;
    for (uint32_t k = 0; k < s->tail_count; k++) {
        ev_pair *p = &s->tail[k];
        s->tail_head[p->home] = 0; /* the old home, a dense index of the last grouping's */
        if (p->slot_a != UINT32_MAX) start[(p->home = contact_home(w, p, n)) + 1]++;
    }
    for (uint32_t h = 0; h <= n; h++)
        start[h + 1] += start[h];
    for (uint32_t k = 0; k < s->count; k++)
        if (s->pairs[k].slot_a != UINT32_MAX) s->spare[start[s->pairs[k].home]++] = s->pairs[k];
    for (uint32_t k = 0; k < s->tail_count; k++)
        if (s->tail[k].slot_a != UINT32_MAX) s->spare[start[s->tail[k].home]++] = s->tail[k];
    /* start[h] now ends group h: shift back so it starts it */
    memmove(start + 1, start, ((size_t)n + 1) * sizeof *start);
    start[0] = 0;
    ev_pair *t = s->pairs;
    s->pairs = s->spare;
    s->spare = t;
    s->count = start[n + 1];
    COLLIDE_ASSERT(s->count == s->live);
    s->tail_count = 0;
    s->dead = 0;
    s->homes = n;
    s->sorts = w->mover_sorts;
    s->despawns = w->mover_despawns;
    s->grouped = true;
    return true;
}

/* Adds a new pair to the tail, listed under its home (p->home); false when there was no room
 * (both buffers grow here, so the grouping never has to). */
bool contact_add(ev_contacts *s, ev_pair *p) {
    if (!contacts_cap(s, s->count + s->tail_count + 1)) return false;
    if (s->tail_count == s->tail_cap) {
        uint32_t cap = s->tail_cap ? s->tail_cap * 2 : 64;
        if (!pairs_grow(&s->tail, &s->tail_seen, s->tail_cap, cap)) return false;
        s->tail_cap = cap;
    }
    p->next = s->tail_head[p->home];
    s->tail_seen[s->tail_count] = 1; /* seen from its start: no recheck in this step */
    s->tail[s->tail_count++] = *p;
    s->tail_head[p->home] = s->tail_count;
    s->live++;
    return true;
}

/* Takes back the pair contact_add added last. */
void contact_unadd(ev_contacts *s) {
    const ev_pair *p = &s->tail[--s->tail_count];
    s->tail_seen[s->tail_count] = 0;
    s->tail_head[p->home] = p->next;
    s->live--;
}

#include "net_known.h"

#include <stdlib.h>
#include <string.h>

#define NET_KNOWN_MIN_CAP 16u

static uint32_t slot_of(uint32_t id, uint32_t cap) {
    /* Fibonacci hashing: ids from the world are slot-plus-generation, so their low bits are dense
     * and a multiplicative mix spreads them. */
    return (uint32_t)((id * 2654435769u) >> 7) & (cap - 1u);
}

net_known_entry *net_known_find(const net_known *set, uint32_t id) {
    if (!set->cap || id == 0) return NULL;
    uint32_t mask = set->cap - 1u;
    for (uint32_t i = slot_of(id, set->cap), n = 0; n < set->cap; i = (i + 1u) & mask, n++) {
        net_known_entry *e = &set->slots[i];
        if (e->id == id) return e;
        if (e->id == 0 && e->stamp != NET_KNOWN_TOMB) return NULL;
    }
    return NULL;
}

static void place(net_known_entry *slots, uint32_t cap, const net_known_entry *src) {
    uint32_t mask = cap - 1u;
    uint32_t i = slot_of(src->id, cap);
    while (slots[i].id != 0)
        i = (i + 1u) & mask;
    slots[i] = *src;
}

/* Rebuilds the table at new_cap, dropping tombstones. Same size: through the scratch, no
 * allocation once the scratch is warm. */
static bool rehash(net_known *set, net_known_scratch *scratch, uint32_t new_cap) {
    if (new_cap == set->cap) {
        if (scratch->cap < set->cap) {
            net_known_entry *grown = realloc(scratch->entries, (size_t)set->cap * sizeof *grown);
            if (!grown) return false;
            scratch->entries = grown;
            scratch->cap = set->cap;
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < set->cap; i++) {
            if (set->slots[i].id != 0) scratch->entries[n++] = set->slots[i];
        }
        memset(set->slots, 0, (size_t)set->cap * sizeof *set->slots);
        for (uint32_t i = 0; i < n; i++)
            place(set->slots, set->cap, &scratch->entries[i]);
        set->tombs = 0;
        return true;
    }
    net_known_entry *slots = calloc(new_cap, sizeof *slots);
    if (!slots) return false;
    for (uint32_t i = 0; i < set->cap; i++) {
        if (set->slots[i].id != 0) place(slots, new_cap, &set->slots[i]);
    }
    free(set->slots);
    set->slots = slots;
    set->cap = new_cap;
    set->tombs = 0;
    return true;
}

bool net_known_reserve(net_known *set, net_known_scratch *scratch, uint32_t extra) {
    /* Keep the load (live + tombstones) under 3/4 so probes stay short and always end. */
    if ((uint64_t)(set->live + set->tombs + extra) * 4u <= (uint64_t)set->cap * 3u) return true;
    uint32_t cap = set->cap ? set->cap : NET_KNOWN_MIN_CAP;
    while ((uint64_t)(set->live + extra) * 2u > cap)
        cap *= 2u;
    return rehash(set, scratch, cap);
}

net_known_entry *net_known_insert(net_known *set, net_known_scratch *scratch, uint32_t id) {
    net_known_entry *found = net_known_find(set, id);
    if (found) return found;
    if (!net_known_reserve(set, scratch, 1u)) return NULL;
    uint32_t mask = set->cap - 1u;
    uint32_t i = slot_of(id, set->cap);
    while (set->slots[i].id != 0)
        i = (i + 1u) & mask;
    if (set->slots[i].stamp == NET_KNOWN_TOMB) set->tombs--;
    set->slots[i].id = id;
    set->slots[i].stamp = 0;
    set->slots[i].sent_tick = 0;
    set->live++;
    return &set->slots[i];
}

void net_known_delete(net_known *set, net_known_entry *entry) {
    entry->id = 0;
    entry->stamp = NET_KNOWN_TOMB;
    entry->sent_tick = 0;
    set->live--;
    set->tombs++;
}

void net_known_free(net_known *set) {
    free(set->slots);
    memset(set, 0, sizeof *set);
}

void net_known_scratch_free(net_known_scratch *scratch) {
    free(scratch->entries);
    scratch->entries = NULL;
    scratch->cap = 0;
}

#include "net_known.h"

#include <stdlib.h>
#include <string.h>

#define NET_KNOWN_MIN_CAP 16u

bool net_known_reserve(net_known *set, uint32_t n) {
    if (n <= set->cap) return true;
    uint32_t cap = set->cap ? set->cap : NET_KNOWN_MIN_CAP;
    while (cap < n)
        cap *= 2u;
    net_known_entry *p = realloc(set->entries, (size_t)cap * sizeof *p);
    if (!p) return false;
    set->entries = p;
    set->cap = cap;
    return true;
}

const net_known_entry *net_known_find(const net_known *set, uint64_t key) {
    uint32_t lo = 0, hi = set->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (net_known_key(&set->entries[mid]) < key)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo < set->count && net_known_key(&set->entries[lo]) == key ? &set->entries[lo] : NULL;
}

void net_known_free(net_known *set) {
    free(set->entries);
    memset(set, 0, sizeof *set);
}

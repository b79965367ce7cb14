/* net_baselines: a datagram client's last states, a ring (net_baselines.h). */
#include "net_baselines.h"

#include <stdlib.h>
#include <string.h>

#include "collide_assert.h"

/* The slot i places after the oldest held (0: the oldest). */
static uint32_t slot_at(const net_baselines *b, uint32_t i) {
    uint32_t oldest = (b->newest + b->slots + 1u - b->used) % b->slots;
    return (oldest + i) % b->slots;
}

const net_baseline *net_baselines_base(const net_baselines *b) {
    return b->has_base ? &b->ring[b->base] : NULL;
}

const net_baseline *net_baselines_newest(const net_baselines *b) {
    return b->used ? &b->ring[b->newest] : NULL;
}

void net_baselines_ack(net_baselines *b, uint64_t tick) {
    if (!b->used || tick == 0) return;
    if (b->has_base && tick <= b->ring[b->base].tick) return; /* not newer: the base stands */
    /* The held ticks ascend from the oldest slot: a binary search in ring order. */
    uint32_t lo = 0, hi = b->used;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (b->ring[slot_at(b, mid)].tick < tick)
            lo = mid + 1u;
        else
            hi = mid;
    }
    if (lo == b->used || b->ring[slot_at(b, lo)].tick != tick) return; /* unknown or forgotten */
    b->base = slot_at(b, lo);
    b->has_base = true;
}

bool net_baselines_push(net_baselines *b, uint32_t slots, uint64_t tick,
                        const net_baseline_body *bodies, uint32_t count) {
    if (!b->ring) {
        COLLIDE_ASSERT(slots >= 1u && slots <= NET_BASELINES_MAX);
        b->ring = calloc(slots, sizeof *b->ring);
        if (!b->ring) return false;
        b->slots = slots;
        b->newest = slots - 1u; /* the first push lands in slot 0 */
    }
    COLLIDE_ASSERT(tick > 0 && (!b->used || tick > b->ring[b->newest].tick));
    uint32_t at = (b->newest + 1u) % b->slots;
    net_baseline *s = &b->ring[at];
    if (count > s->cap) {
        uint32_t cap = s->cap ? s->cap : 16u;
        while (cap < count)
            cap *= 2u;
        net_baseline_body *p = realloc(s->bodies, (size_t)cap * sizeof *p);
        if (!p) return false;
        s->bodies = p;
        s->cap = cap;
    }
    /* The oldest slot goes: when it was the baseline, every acknowledged one older went before. */
    if (b->has_base && b->base == at) b->has_base = false;
    if (count) memcpy(s->bodies, bodies, (size_t)count * sizeof *bodies);
    s->count = count;
    s->tick = tick;
    b->newest = at;
    if (b->used < b->slots) b->used++;
    return true;
}

size_t net_baselines_bytes(const net_baselines *b) {
    if (!b->ring) return 0;
    size_t n = (size_t)b->slots * sizeof *b->ring;
    for (uint32_t i = 0; i < b->slots; i++)
        n += (size_t)b->ring[i].cap * sizeof *b->ring[i].bodies;
    return n;
}

void net_baselines_free(net_baselines *b) {
    if (b->ring)
        for (uint32_t i = 0; i < b->slots; i++)
            free(b->ring[i].bodies);
    free(b->ring);
    memset(b, 0, sizeof *b);
}

#include "hist.h"

#include <string.h>

#include "collide_assert.h"

void cc_hist_init(cc_hist *h) {
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

uint32_t cc_hist_index(uint64_t value) {
    if (value > CC_HIST_MAX_VALUE) value = CC_HIST_MAX_VALUE;
    if (value < CC_HIST_SUB_COUNT) return (uint32_t)value;
    unsigned msb = 63u - (unsigned)__builtin_clzll(value);
    unsigned shift = msb - (CC_HIST_SUB_BITS - 1u); /* >= 1 here */
    uint64_t sub = value >> shift;                  /* in [HALF, SUB_COUNT) */
    uint32_t index =
        CC_HIST_SUB_COUNT + (shift - 1u) * CC_HIST_HALF + (uint32_t)(sub - CC_HIST_HALF);
    /* the clamp to CC_HIST_MAX_VALUE is what keeps cc_hist_record inside counts[] */
    COLLIDE_ASSERT(index < CC_HIST_SLOTS);
    return index;
}

void cc_hist_slot_range(uint32_t index, uint64_t *lo, uint64_t *width) {
    if (index < CC_HIST_SUB_COUNT) {
        *lo = index;
        *width = 1;
        return;
    }
    uint32_t rel = index - CC_HIST_SUB_COUNT;
    unsigned shift = rel / CC_HIST_HALF + 1u;
    uint64_t sub = rel % CC_HIST_HALF + CC_HIST_HALF;
    *lo = sub << shift;
    *width = UINT64_C(1) << shift;
}

void cc_hist_record(cc_hist *h, uint64_t value) {
    h->counts[cc_hist_index(value)]++;
    h->total++;
    if (value < h->min) h->min = value;
    if (value > h->max) h->max = value;
    h->sum += (double)value;
}

void cc_hist_merge(cc_hist *into, const cc_hist *from) {
    if (from->total == 0) return;
    for (uint32_t i = 0; i < CC_HIST_SLOTS; i++)
        into->counts[i] += from->counts[i];
    into->total += from->total;
    if (from->min < into->min) into->min = from->min;
    if (from->max > into->max) into->max = from->max;
    into->sum += from->sum;
}

uint64_t cc_hist_percentile(const cc_hist *h, double p) {
    if (h->total == 0) return 0;
    if (p >= 100.0) return h->max;
    if (p < 0.0) p = 0.0;
    uint64_t rank = (uint64_t)((p / 100.0) * (double)h->total + 0.999999999);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < CC_HIST_SLOTS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t lo, width;
            cc_hist_slot_range(i, &lo, &width);
            uint64_t mid = lo + width / 2;
            if (mid < h->min) mid = h->min;
            if (mid > h->max) mid = h->max;
            return mid;
        }
    }
    return h->max;
}

double cc_hist_mean(const cc_hist *h) { return h->total ? h->sum / (double)h->total : 0.0; }

/* cc_hist: a log-linear latency histogram in the manner of HdrHistogram.
 *
 * Why: percentiles of millions of samples must come from bounded memory, with a relative error
 * that does not depend on the magnitude. Values (microseconds) below 256 get exact slots; above,
 * each power of two is split into 128 linear slots, so a slot is at most 1/128 of its value wide
 * and the midpoint reported is within 0.4% of any sample in it. Values are clamped below 2^40 us.
 * 4,352 counters (34 KiB) per histogram, kept per worker thread and merged at the end. */
#ifndef COLLIDE_CLIENT_HIST_H
#define COLLIDE_CLIENT_HIST_H

#include <stdint.h>

#define CC_HIST_SUB_BITS 8
#define CC_HIST_SUB_COUNT (1u << CC_HIST_SUB_BITS)
#define CC_HIST_HALF (CC_HIST_SUB_COUNT / 2u)
#define CC_HIST_MAX_BITS 40
#define CC_HIST_SLOTS (CC_HIST_SUB_COUNT + (CC_HIST_MAX_BITS - CC_HIST_SUB_BITS) * CC_HIST_HALF)
#define CC_HIST_MAX_VALUE ((UINT64_C(1) << CC_HIST_MAX_BITS) - 1)

typedef struct cc_hist {
    uint64_t counts[CC_HIST_SLOTS]; /* samples per slot */
    uint64_t total;                 /* samples recorded */
    uint64_t min;                   /* smallest sample (UINT64_MAX when empty) */
    uint64_t max;                   /* largest sample, exact */
    double sum;                     /* sum of samples, for the mean */
} cc_hist;

void cc_hist_init(cc_hist *h);
void cc_hist_record(cc_hist *h, uint64_t value);
void cc_hist_merge(cc_hist *into, const cc_hist *from);
/* The value at percentile p (0..100): the midpoint of the slot holding the ceil(p% * total)-th
 * sample, clamped to [min, max]; 0 when empty. */
uint64_t cc_hist_percentile(const cc_hist *h, double p);
double cc_hist_mean(const cc_hist *h);
/* Slot index and slot bounds, exposed for the tests. */
uint32_t cc_hist_index(uint64_t value);
void cc_hist_slot_range(uint32_t index, uint64_t *lo, uint64_t *width);

#endif

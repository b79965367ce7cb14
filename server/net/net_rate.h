/* net_rate: admission checks of a client's requests that hold no protocol state: the token bucket
 * with its abuse tracking (docs/net-design.md "Rate limit"), and the constant-time compare of a
 * presented secret. */
#ifndef COLLIDE_NET_RATE_H
#define COLLIDE_NET_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_ABUSE_SECONDS 5 /* consecutive seconds with drops before the cut */
#define NET_ABUSE_BURSTS 4  /* drops above this many bursts in one second: cut */

typedef struct net_rate {
    double tokens;            /* messages still allowed now */
    uint64_t last_us;         /* monotonic time of the last refill */
    uint64_t window_start_us; /* start of the current one-second abuse window */
    uint32_t window_drops;    /* messages dropped in the current window */
    uint32_t abusive_windows; /* consecutive windows (seconds) with drops */
    double byte_tokens;       /* frame bytes still allowed now (--rate-limit-bytes) */
    uint64_t byte_last_us;    /* monotonic time of the last refill of byte_tokens */
} net_rate;

/* Token bucket of rate_per_s, burst 2 s worth: true when a message may pass at now_us. Inline:
 * it runs once per frame read; out of line it cost bench_net 1000 ~8% of its intents phase. */
static inline bool net_rate_take(net_rate *r, double rate_per_s, uint64_t now_us) {
    double burst = 2.0 * rate_per_s;
    if (r->last_us == 0) {
        r->tokens = burst;
        r->last_us = now_us;
    } else if (now_us > r->last_us) {
        r->tokens += (double)(now_us - r->last_us) * 1e-6 * rate_per_s;
        if (r->tokens > burst) r->tokens = burst;
        r->last_us = now_us;
    }
    if (r->tokens >= 1.0 - 1e-9) { /* tolerance: refills summed from parts must make a whole */
        r->tokens -= 1.0;
        return true;
    }
    return false;
}

/* Charges n more messages after the fact (a query's work beyond the one its frame paid,
 * net_queries.c): the bucket may go into debt, so the client's next messages wait until it has
 * refilled, but never below minus one burst, so one query silences a client for at most about
 * 2 s. Call after net_rate_take (the bucket is initialised). */
static inline void net_rate_charge(net_rate *r, double rate_per_s, double n) {
    double floor = -2.0 * rate_per_s;
    r->tokens -= n;
    if (r->tokens < floor) r->tokens = floor;
}

/* The byte bucket: bytes_per_s, burst 2 s worth or `largest` (one max frame) if that is more, so
 * a frame the server accepts can always pass a full bucket. True when a frame of n bytes may pass
 * at now_us; it is then charged. Inline for the same reason as net_rate_take. */
static inline bool net_rate_take_bytes(net_rate *r, double bytes_per_s, double largest, size_t n,
                                       uint64_t now_us) {
    double burst = 2.0 * bytes_per_s;
    if (burst < largest) burst = largest;
    if (r->byte_last_us == 0) {
        r->byte_tokens = burst;
        r->byte_last_us = now_us;
    } else if (now_us > r->byte_last_us) {
        r->byte_tokens += (double)(now_us - r->byte_last_us) * 1e-6 * bytes_per_s;
        if (r->byte_tokens > burst) r->byte_tokens = burst;
        r->byte_last_us = now_us;
    }
    if (r->byte_tokens >= (double)n - 1e-6) {
        r->byte_tokens -= (double)n;
        return true;
    }
    return false;
}

/* Records a dropped message; true when the client has crossed into sustained abuse: drops in
 * NET_ABUSE_SECONDS consecutive seconds, or more than NET_ABUSE_BURSTS bursts' worth of drops
 * within one second. */
bool net_rate_note_drop(net_rate *r, double rate_per_s, uint64_t now_us);

/* Constant-time equality of two byte strings: the time depends on the lengths only, never on
 * where they differ. */
bool net_secret_equal(const char *a, size_t a_len, const char *b, size_t b_len);

#endif

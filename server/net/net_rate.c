#include "net_rate.h"

bool net_secret_equal(const char *a, size_t a_len, const char *b, size_t b_len) {
    /* Walk the longer length, comparing against a zero byte past the end of the shorter, and
     * fold the length difference in: no early exit, so timing reveals only the lengths. */
    size_t n = a_len > b_len ? a_len : b_len;
    volatile unsigned char diff = (unsigned char)(a_len != b_len);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < a_len ? (unsigned char)a[i] : 0;
        unsigned char y = i < b_len ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

bool net_rate_note_drop(net_rate *r, double rate_per_s, uint64_t now_us) {
    if (r->window_drops == 0 || now_us - r->window_start_us >= 1000000u) {
        /* A new one-second window: consecutive only if the previous window directly precedes. */
        bool consecutive = r->window_drops > 0 && now_us - r->window_start_us < 2000000u;
        r->abusive_windows = consecutive ? r->abusive_windows + 1u : 1u;
        r->window_start_us = now_us;
        r->window_drops = 0;
    }
    r->window_drops++;
    return r->abusive_windows >= NET_ABUSE_SECONDS ||
           (double)r->window_drops > NET_ABUSE_BURSTS * 2.0 * rate_per_s;
}

#include "net_partial.h"

void net_partial_init(net_partial_budget *b, size_t max) {
    atomic_init(&b->held, 0);
    b->max = max;
}

size_t net_partial_change(net_partial_budget *b, size_t was, size_t now) {
    /* Relaxed: the counter orders nothing else; each thread sees its own changes in order and
     * the others' within a loop turn, which is all the bound needs (net_server.c). */
    if (now >= was)
        return atomic_fetch_add_explicit(&b->held, now - was, memory_order_relaxed) + (now - was);
    return atomic_fetch_sub_explicit(&b->held, was - now, memory_order_relaxed) - (was - now);
}

size_t net_partial_held(const net_partial_budget *b) {
    return atomic_load_explicit(&((net_partial_budget *)b)->held, memory_order_relaxed);
}

bool net_partial_over(const net_partial_budget *b) { return net_partial_held(b) > b->max; }

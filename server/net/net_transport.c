#include "net_transport.h"

#include <string.h>

/* The registration of the built-ins: one line per transport, in id order. */
static const net_transport *table[NET_TRANSPORT_MAX] = {&net_tcp_transport, &net_ws_transport,
                                                        &net_udp_transport};
static uint32_t table_count = 3;

const net_transport *net_transport_at(uint32_t id) { return id < table_count ? table[id] : NULL; }

uint32_t net_transport_count(void) { return table_count; }

const net_transport *net_transport_find(const char *name) {
    for (uint32_t i = 0; name && i < table_count; i++)
        if (strcmp(table[i]->name, name) == 0) return table[i];
    return NULL;
}

bool net_transport_register(net_transport *t) {
    if (table_count == NET_TRANSPORT_MAX || !t->name || net_transport_find(t->name)) return false;
    t->id = table_count;
    table[table_count++] = t;
    return true;
}

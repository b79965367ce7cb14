#include "net_tick.h"

#include <stdlib.h>

#include "net_internal.h"
#include "net_server.h"
#include "net_snapshot.h"

void net_tick_run(net_server *srv, unsigned steps) {
    for (unsigned i = 0; i < steps; i++) {
        world_step(srv->world);
        net_events_collect(srv); /* each step's events, whatever snapshot carries them */
        /* The snapshots read the last step's body table: the steps before it are taken in now
         * (out of memory: the next snapshots read the whole world instead). */
        if (i + 1 < steps) (void)net_snapshot_observe(srv->snapshot, srv->world);
    }
    srv->metrics.ticks_total += steps;
    net_server_sweep(srv);
    if (steps > 0) net_snapshot_all(srv);
}

net_server *net_server_create(const net_config *cfg, world *w) {
    net_server *srv = net_server_registry_create(cfg, w);
    if (!srv || !w) return srv;
    srv->snapshot = calloc(1, sizeof *srv->snapshot);
    if (!srv->snapshot || !net_snapshot_writer_init(srv->snapshot, cfg, w)) {
        net_server_destroy(srv);
        return NULL;
    }
    return srv;
}

void net_server_destroy(net_server *srv) {
    if (!srv) return;
    if (srv->snapshot) net_snapshot_writer_free(srv->snapshot);
    free(srv->snapshot);
    srv->snapshot = NULL;
    net_queries_free(srv);
    net_events_free(srv);
    net_server_registry_destroy(srv);
}

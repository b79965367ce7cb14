#include "net_tick.h"

#include <stdlib.h>

#include "net_internal.h"
#include "net_log.h"
#include "net_server.h"
#include "net_snapshot.h"

void net_tick_run(net_server *srv, unsigned steps) {
    for (unsigned i = 0; i < steps; i++) {
        journal_step(srv->journal, srv->world); /* and noted, when the room records */
        net_events_collect(srv); /* each step's events, whatever snapshot carries them */
        /* The snapshots read the last step's body table: the steps before it are taken in now
         * (out of memory: the next snapshots read the whole world instead). */
        if (i + 1 < steps) (void)net_snapshot_observe(srv->snapshot, srv->world);
    }
    srv->metrics.ticks_total += steps;
    net_server_sweep(srv);
    if (steps > 0) net_tick_snapshots(srv);
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

void net_tick_snapshots(net_server *srv) {
    net_snapshot_writer *sw = srv->snapshot;
    if (!net_snapshot_rebuild(sw, srv->world)) {
        net_log(NET_LOG_ERROR, "out_of_memory", 0, NULL,
                "view index rebuild failed: snapshots skipped this tick");
        return;
    }
    uint64_t tick = world_tick(srv->world);
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->state != NET_CLIENT_ACTIVE || c->kill) continue;
        if (c->snap.snapshot_every > 1u) {
            /* A reduced rate: the ticks of the client's phase (net_snapshot_next_tick). A
             * snapshot dropped for a slow reader waits for the next such tick too. */
            if (tick < c->snap.next_snapshot_tick) continue;
            c->snap.next_snapshot_tick =
                net_snapshot_next_tick(tick, c->snap.snapshot_every, c->id);
        }
        if (c->transport->datagram)
            net_snapshot_datagram(srv, c);
        else
            net_snapshot_client(srv, c);
    }
}

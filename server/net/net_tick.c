#include "net_tick.h"

#include "net_internal.h"
#include "net_snapshot.h"

void net_tick_run(net_server *srv, unsigned steps) {
    for (unsigned i = 0; i < steps; i++) {
        world_step(srv->world);
        net_events_collect(srv); /* each step's events, whatever snapshot carries them */
        /* The snapshots read the last step's body table: the steps before it are taken in now
         * (out of memory: the next snapshots read the whole world instead). */
        if (i + 1 < steps) (void)net_snapshot_observe(&srv->snapshot, srv->world);
    }
    srv->metrics.ticks_total += steps;
    net_server_sweep(srv);
    if (steps > 0) net_server_snapshots(srv);
}

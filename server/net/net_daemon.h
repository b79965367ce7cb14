/* net_daemon: the libuv side of collided. Listeners (game and HTTP), the game connections (on one
 * net_conn host, all clients of one net_server), the tick timer, the Redis-style flush of dirty
 * clients before the loop sleeps, signals and the drain. All protocol decisions are in
 * net_server/net_session/net_snapshot; this file only moves bytes, through their functions, and
 * carries out the closes the server asks for. */
#ifndef COLLIDE_NET_DAEMON_H
#define COLLIDE_NET_DAEMON_H

#include "net_config.h"
#include "world.h"

/* Runs the daemon until SIGTERM/SIGINT and the drain complete, placing spawns without a position
 * at the world's spawn points (count 0: none; see net_server_set_spawn_points). Returns the
 * process exit code: 0 after a clean drain, 1 when a listener cannot be bound or the loop fails to
 * close. */
int net_daemon_run(const net_config *cfg, world *w, const vec2 *spawn_points,
                   size_t spawn_point_count);

#endif

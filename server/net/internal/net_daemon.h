/* net_daemon: the libuv side of collided, its front: listeners (game, WebSocket and ops), the game
 * connections until their Hello (one world-less net_server), the hand-off of each placed client
 * to the worker that owns its room (net_host.h), the Redis-style flush of dirty clients before
 * the loop sleeps, signals and the drain. The ops port's connections are net_ops.h's. All
 * protocol decisions are in net_server/net_session/net_snapshot; this file only moves bytes,
 * through their functions, and carries out the closes the server asks for. */
#ifndef COLLIDE_NET_DAEMON_H
#define COLLIDE_NET_DAEMON_H

#include "net_config.h"
#include <stddef.h>

/* Runs the daemon until SIGTERM/SIGINT and the drain complete: the front loop on this thread
 * (listeners, connections until their Hello, the ops port, signals) and --threads worker threads
 * owning the rooms (net_host.h). world_text (malloc'ed, NUL-terminated, world_len bytes; taken
 * over) is the default world, already validated, with `statics` static bodies: the room
 * `default` and every auto room are built from it. Returns the process exit code: 0 after a clean
 * drain, 1 when a listener cannot be bound, a thread cannot start or the loop fails to close. */
int net_daemon_run(const net_config *cfg, char *world_text, size_t world_len, size_t statics);

#endif

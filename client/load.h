/* collide-client load: simulated players on libuv event loops (one per --threads), a fixed intent
 * schedule, latency histograms, live invariant checks and a pass/fail verdict. */
#ifndef COLLIDE_CLIENT_LOAD_H
#define COLLIDE_CLIENT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load_options.h"

int cc_load_main(int argc, char **argv);
/* The run of options cc_load_parse has read (play-bots sets its own defaults first): players,
 * backend, report; returns the exit code. */
int cc_load_run(const load_opts *o);
/* The room of the player with global index i: round robin over rooms (rooms > 0). */
uint32_t cc_load_room_of(uint32_t player, uint32_t rooms);

#endif

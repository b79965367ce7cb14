/* collide-client load: simulated players on libuv event loops (one per --threads), a fixed intent
 * schedule, latency histograms, live invariant checks and a pass/fail verdict. */
#ifndef COLLIDE_CLIENT_LOAD_H
#define COLLIDE_CLIENT_LOAD_H

int cc_load_main(int argc, char **argv);

#endif

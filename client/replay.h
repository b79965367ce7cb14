/* collide-client replay: a recorded journal through the world code (client/replay.c). */
#ifndef COLLIDE_CLIENT_REPLAY_H
#define COLLIDE_CLIENT_REPLAY_H

int cc_replay_main(int argc, char **argv);

#endif

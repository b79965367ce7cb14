/* collide-client play-bots N: bots for the play page (GET /play on collided's WebSocket port). */
#ifndef COLLIDE_CLIENT_PLAY_BOTS_H
#define COLLIDE_CLIENT_PLAY_BOTS_H

int cc_play_bots_main(int argc, char **argv);

#endif

/* collide-client watch: a spectator that prints what the server streams. */
#ifndef COLLIDE_CLIENT_WATCH_H
#define COLLIDE_CLIENT_WATCH_H

int cc_watch_main(int argc, char **argv);

#endif

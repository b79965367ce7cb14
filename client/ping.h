/* collide-client ping: one round trip, exit 0/1 (the Docker HEALTHCHECK). */
#ifndef COLLIDE_CLIENT_PING_H
#define COLLIDE_CLIENT_PING_H

int cc_ping_main(int argc, char **argv);

#endif

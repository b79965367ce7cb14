/* The ENet side of cc_conn (conn_udp.c), called by conn.c's functions when c->udp. */
#ifndef COLLIDE_CLIENT_CONN_UDP_H
#define COLLIDE_CLIENT_CONN_UDP_H

#include "conn.h"

bool conn_udp_queue(cc_conn *c, const Collide__V1__ClientMessage *msg);
void conn_udp_flush(cc_conn *c);
void conn_udp_close(cc_conn *c);
/* The channel a message goes on: 1 for MoveIntent, MoveIntents and SnapshotAck, else 0. */
uint8_t conn_udp_channel(const Collide__V1__ClientMessage *msg);

#endif

/* net_room: one room on its owner thread (docs/rooms-design.md): its world, built here from the
 * directory's world text, its net_server, its tick timer on the owner's loop, its idle close, and
 * the figures it publishes to the directory. Everything here runs on the owner's thread. */
#ifndef COLLIDE_NET_ROOM_H
#define COLLIDE_NET_ROOM_H

#include <stdbool.h>
#include <uv.h>

#include "net_config.h"
#include "net_record.h"
#include "net_rooms.h"
#include "net_server.h"
#include "net_tick.h"
#include "world_load.h"

typedef struct net_room net_room;

struct net_room {
    net_room_id id;
    char name[NET_ROOM_NAME_MAX + 1];
    bool auto_created;             /* closes when idle (--room-idle-ms) */
    world *world;                  /* built on this thread, from the directory's text */
    world_spawn_points *spawns;    /* the world file's spawn points (the server borrows them) */
    net_server *srv;               /* clients, views, snapshots */
    net_recorder *rec;             /* its recording (--record-dir; NULL: none) */
    net_rooms *dir;                /* the directory (shared) */
    uv_timer_t tick_timer;         /* one-shot, re-armed against the schedule */
    net_tick_schedule schedule;    /* when the world's steps are due */
    uint64_t empty_since_ns;       /* when the last client left (0: it has clients) */
    uint64_t idle_ns;              /* --room-idle-ms */
    bool closing;                  /* Goodbye sent: waiting for the clients to go */
    void (*on_closed)(net_room *); /* when closed and its handles are released */
    bool overloaded;               /* its overload detector's state, as last seen */
    /* The detector changed state (net_server_note_tick); may be NULL. The owner tells the
     * directory at once, so the Hello after the change is placed by the new state. */
    void (*on_overload)(net_room *);
    void *data; /* the owner's */
};

/* Builds the room `id` (named name) from the directory's text on loop's thread and starts its
 * tick. NULL when the room is no longer in the directory or its world does not load (err says
 * why). */
net_room *net_room_open(uv_loop_t *loop, net_rooms *dir, net_room_id id, const char *name,
                        const net_config *cfg, char *err, size_t err_size);
/* Sends Goodbye{reason} to every client (each closing for `why`: NET_DISC_ROOM_CLOSED, or
 * NET_DISC_SHUTDOWN in the drain), stops stepping the world and ends its recording; once its
 * clients are gone (the owner's connection layer releases them; one that does not read is cut
 * after the closing timeout) and the recording's last bytes are written and its file closed, the
 * timer is closed and on_closed runs, after which the owner frees the room with net_room_free.
 * Idempotent. */
void net_room_close(net_room *r, const char *reason, net_disconnect_reason why);
/* Called by the owner after a client of this room was released. */
void net_room_client_left(net_room *r);
void net_room_free(net_room *r);

#endif

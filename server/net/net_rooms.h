/* net_rooms: the room directory (PROTOCOL.md "Rooms"): which rooms exist, by name, which worker
 * thread owns each, and how many clients each holds or is about to receive. It is shared by the
 * thread that reads Hellos and the workers that own the rooms, behind one mutex; every call is a
 * short hash lookup and none touches a world (a world is only ever touched by its owner thread).
 *
 * Across threads a room is named by its id, a 64-bit number never reused, not by a pointer: a
 * hand-off or a close addressed to a room that is gone meanwhile finds no room, and the caller
 * refuses the connection instead of touching freed memory.
 *
 * The life of a room:
 *  - created on join (auto, from the default world; when --room-auto-create is on) or by an admin
 *    (CreateRoom), on the least loaded thread (fewest clients, then fewest rooms, then lowest
 *    number), and OPEN from then on;
 *  - closed by an admin (CloseRoom) or, for an auto room, by its owner once it has had no client
 *    and no join in flight for --room-idle-ms: either way it leaves the directory at once, so the
 *    name is free again and a later join creates a fresh room (its statics anew) while the old
 *    room's clients are still being said Goodbye on its thread.
 * The room `default` exists from the start, on thread 0, and is never closed (PROTOCOL.md).
 *
 * Admission: a join counts against the room's own max_clients (admin rooms; 0 = none) and the
 * daemon's --max-clients, each counting the joins still in flight to the owner thread, so a burst
 * of Hellos cannot overshoot a limit while the hand-offs travel. */
#ifndef COLLIDE_NET_ROOMS_H
#define COLLIDE_NET_ROOMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_ROOM_NAME_MAX 64       /* bytes */
#define NET_ROOM_DEFAULT "default" /* the room of Hello.room "" */

typedef uint64_t net_room_id; /* never 0, never reused in a process */

/* A world's JSON text, immutable and shared by reference count: the directory keeps one per room
 * (the default world's for auto rooms), and the owner thread takes a reference to build the
 * room's world from it, so a room closed meanwhile frees nothing under the builder's feet. */
typedef struct net_world_text net_world_text;
/* Takes ownership of text (malloc'ed, NUL-terminated, len bytes); one reference. NULL (text freed)
 * when out of memory. */
net_world_text *net_world_text_make(char *text, size_t len);
net_world_text *net_world_text_ref(net_world_text *t);
void net_world_text_unref(net_world_text *t); /* NULL allowed */
const char *net_world_text_data(const net_world_text *t);

typedef enum net_room_status {
    NET_ROOM_OK = 0,
    NET_ROOM_BAD_NAME,      /* not 1..64 bytes of [A-Za-z0-9_.:-] */
    NET_ROOM_NOT_FOUND,     /* no such room (and auto-create is off, for a join) */
    NET_ROOM_TOO_MANY,      /* --max-rooms reached */
    NET_ROOM_EXISTS,        /* CreateRoom of a name in use */
    NET_ROOM_FULL,          /* the room's max_clients reached */
    NET_ROOM_SERVER_FULL,   /* --max-clients reached */
    NET_ROOM_FORBIDDEN,     /* closing `default` */
    NET_ROOM_SHUTTING_DOWN, /* the drain began */
    NET_ROOM_AT_CAPACITY,   /* the owner thread's ticks are persistently late (issue 12) */
} net_room_status;

const char *net_room_status_str(net_room_status st);
/* The ErrorCode (collide.proto) a refused join, CreateRoom or CloseRoom answers with, per
 * PROTOCOL.md "Rooms": the one table, so the Hello path and the admin calls cannot drift apart.
 * An int so this header stays free of protobuf-c; 0 (UNSPECIFIED) for NET_ROOM_OK. */
int net_rooms_status_error_code(net_room_status st);

typedef struct net_rooms_config {
    uint32_t threads;              /* worker threads that own rooms, >= 1 */
    uint32_t max_rooms;            /* rooms besides `default` */
    uint32_t max_clients;          /* welcomed sessions in all rooms together */
    bool auto_create;              /* an unknown room is created on join */
    net_world_text *default_world; /* auto rooms' world; the directory takes a reference */
} net_rooms_config;

/* Where a room lives. */
typedef struct net_room_ref {
    net_room_id id;  /* the room */
    uint32_t thread; /* its owner, < threads */
    bool created;    /* this call created it: the owner must be told to build it */
} net_room_ref;

/* What the directory knows of a room, for ListRooms and GET /rooms. The owner publishes the
 * figures it alone can measure (net_rooms_publish). */
typedef struct net_room_info {
    char name[NET_ROOM_NAME_MAX + 1];
    net_room_id id;
    uint32_t thread;
    uint32_t clients;  /* welcomed, plus joins in flight */
    bool auto_created; /* created on join: closes when idle */
    uint32_t max_clients;
    uint64_t bodies;    /* as last published by the owner */
    uint64_t tick;      /* as last published by the owner */
    double tick_p99_ms; /* as last published by the owner */
} net_room_info;

/* A welcomed client, for GET /rooms' "players" (net_rooms_render_players): who is in which room,
 * under which name. Copied on the room's thread (net_host.c). */
#define NET_ROOM_PLAYER_NAME 48 /* bytes of a client's name, NUL included (net_client.name) */
typedef struct net_room_player {
    char room[NET_ROOM_NAME_MAX + 1]; /* its room's name */
    uint32_t id;                      /* its Welcome.client_id (ids are per room) */
    char name[NET_ROOM_PLAYER_NAME];  /* a ticket's sub, else Hello.name; sanitised, may be "" */
    bool admin;                       /* an admin (of its room only, when by ticket) */
    bool ticket;                      /* came in with a ticket */
} net_room_player;

typedef struct net_rooms net_rooms;

/* The directory, with `default` on thread 0. NULL when out of memory or threads is 0. */
net_rooms *net_rooms_create(const net_rooms_config *cfg);
void net_rooms_destroy(net_rooms *r);

/* Whether name (len bytes, not NUL-terminated) is a valid room name. "" is not: callers map the
 * empty Hello.room to NET_ROOM_DEFAULT first (net_room_name_of). */
bool net_room_name_valid(const char *name, size_t len);
/* Hello.room as a room name: "" is `default`; *len is updated. */
const char *net_room_name_of(const char *room, size_t *len);

/* A Hello for room `name`: finds it or, with auto-create on, creates it; then admits one client
 * in flight. A non-admin is refused AT_CAPACITY when the room's thread is overloaded (a new room
 * goes to a thread that is not, when one is). OK fills *out. */
net_room_status net_rooms_join(net_rooms *r, const char *name, size_t len, bool admin,
                               net_room_ref *out);
/* The owner took the client in flight (it is welcomed): true; false when the room is gone (closed
 * meanwhile): the client counts nowhere then, and the caller refuses it. */
bool net_rooms_arrived(net_rooms *r, net_room_id id);
/* A client in flight never arrived (its connection closed on the way). */
void net_rooms_abandon(net_rooms *r, net_room_id id);
/* A welcomed client left its room (whether or not the room is still in the directory). */
void net_rooms_left(net_rooms *r, net_room_id id);

/* An admin's CreateRoom: a room that stays until closed (not auto), max_clients 0 = only
 * --max-clients, built from `world` (NULL: the default world; the directory takes a reference). */
net_room_status net_rooms_create_room(net_rooms *r, const char *name, size_t len,
                                      uint32_t max_clients, net_world_text *world,
                                      net_room_ref *out);
/* The room's world text, as a new reference (the caller unrefs it); NULL when the room is gone. */
net_world_text *net_rooms_world(net_rooms *r, net_room_id id);
/* The owner thread's overload detector changed state (net_server_note_tick). */
void net_rooms_set_overloaded(net_rooms *r, uint32_t thread, bool overloaded);
/* An admin's CloseRoom: the room leaves the directory; *info is how it was (for RoomInfo) and
 * out says where to send the close. */
net_room_status net_rooms_close(net_rooms *r, const char *name, size_t len, net_room_info *info,
                                net_room_ref *out);
/* The owner of an auto room found it without clients: the room leaves the directory unless a
 * join is in flight or a client arrived meanwhile. True when it left (the owner closes it). */
bool net_rooms_close_if_idle(net_rooms *r, net_room_id id);

/* The owner's figures for the room (ignored when the room is gone). */
void net_rooms_publish(net_rooms *r, net_room_id id, uint64_t tick, uint64_t bodies,
                       double tick_p99_ms);

/* The drain: every later join and create gets NET_ROOM_SHUTTING_DOWN. */
void net_rooms_begin_drain(net_rooms *r);

/* Rooms in the directory, `default` first and then by name; writes at most max, returns how many
 * there are. */
size_t net_rooms_list(net_rooms *r, net_room_info *out, size_t max);
/* The room's info by name; false when there is none. */
bool net_rooms_find(net_rooms *r, const char *name, size_t len, net_room_info *out);
/* Rooms (default included) and welcomed-or-in-flight clients in all of them. */
void net_rooms_counts(net_rooms *r, uint32_t *rooms, uint32_t *clients);

#endif

/* net_host: the rooms daemon's worker threads (docs/rooms-design.md). Each worker thread runs one
 * host: its own loop, the rooms the directory placed on it (worlds, servers, tick timers), their
 * connections, and a "lobby", a world-less server that only refuses the hand-offs it cannot
 * honour. A host is only ever touched by its thread; other threads talk to it by message
 * (net_worker.h), naming rooms by id, never by pointer.
 *
 * net_hosts is what every thread shares: the settings, the directory (its own lock), the
 * workers' inboxes, and the notifications back to the front (drained, metrics collected), under
 * one mutex, with the front's uv_async to wake it. It is fixed once started. */
#ifndef COLLIDE_NET_HOST_H
#define COLLIDE_NET_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net_config.h"
#include "net_metrics.h"
#include "net_rooms.h"
#include "net_server.h"
#include "net_udp_relay.h"
#include "net_worker.h"

/* One room's figures for /metrics, copied on its thread. */
typedef struct net_room_sample {
    char name[NET_ROOM_NAME_MAX + 1];
    net_metrics m;        /* its counters */
    uint32_t clients;     /* welcomed sessions in the room */
    size_t static_bodies; /* its world's statics */
    size_t moving_bodies; /* its world's moving bodies */
    uint64_t slots_retired;
    uint64_t ids_left;
    uint64_t tick;            /* its world's tick */
    net_room_id id;           /* the directory's id */
    size_t history_bytes;     /* its query history's memory */
    uint64_t history_records; /* mover states that history holds */
} net_room_sample;

/* A worker's answer to a collection: its rooms, and the counters of what is not a room any more
 * (rooms closed on this thread) or never was (its lobby), so the daemon-wide sums never go back. */
typedef struct net_host_sample {
    net_metrics retired;      /* closed rooms' and the lobby's counters */
    uint32_t connections;     /* connections open on the thread that are in no room (the lobby's) */
    size_t count;             /* entries in rooms */
    net_room_player *players; /* its rooms' welcomed clients, for GET /rooms: at most
                                 NET_ROOMS_JSON_PLAYERS, after rooms[] in the same block */
    size_t player_count;      /* entries in players */
    size_t players_total;     /* its rooms' welcomed clients, listed or not */
    net_room_sample rooms[];
} net_host_sample;

typedef struct net_hosts {
    net_config cfg;            /* settings (threads resolved: >= 1) */
    net_rooms *dir;            /* the directory */
    uint32_t threads;          /* workers */
    net_worker **workers;      /* [threads]; index i owns the rooms the directory put on thread i */
    struct net_host **hosts;   /* [threads]; hosts[i] is only touched on workers[i]'s thread */
    size_t default_statics;    /* the default world's static bodies (RoomInfo of CreateRoom "") */
    net_room_admin room_admin; /* admins' CreateRoom, CloseRoom, ListRooms (set by start) */
    net_udp_sink udp_sink;     /* the front ENet host's outbox for the relays (net_udp_relay.h);
                                  post NULL: UDP off */
    /* The front's side, under lock: */
    uv_mutex_t lock;
    uv_async_t *front_wake;      /* woken (any thread) when drained or collected changes */
    uint32_t drained;            /* workers whose drain finished */
    uint32_t collect_left;       /* workers yet to answer the collection in flight */
    net_host_sample **collected; /* [threads] their answers (NULL: none: the worker had stopped) */
} net_hosts;

/* Starts cfg->threads workers (h: cfg, dir, front_wake set; threads and workers filled here) and
 * opens the room `default` on thread 0. False when a thread could not start (those started are
 * stopped again). */
bool net_hosts_start(net_hosts *h);
/* Sets h->room_admin: the admins' room calls on h->dir (called by net_hosts_start). Without
 * workers (h->workers NULL: the fuzz target) the directory changes and nothing is built. */
void net_hosts_init_admin(net_hosts *h);
/* Stops and joins every worker: after the drain, or when the start failed half way. */
void net_hosts_stop(net_hosts *h);

/* The front's hand-off: the placed client p's socket (fd, taken over either way) and the bytes
 * that followed its Hello go to the room's thread, which welcomes it there, or refuses it when
 * the room closed meanwhile or the drain began. The directory's join is settled either way. */
void net_hosts_hand_off(net_hosts *h, const net_hello_placement *p, const char *name, int fd,
                        const uint8_t *leftover, size_t leftover_len);

/* The UDP side of a hand-off (net_udp_host.h): the placed peer key stays on the front's host;
 * its room's thread makes a relay client of it (under addr), welcomes it there (or refuses it as
 * net_hosts_hand_off would) and feeds it the packets held since its Hello (net_udp_feed_held's
 * form). False when it could not be posted (the directory's join is settled then). */
bool net_hosts_udp_hand_off(net_hosts *h, const net_hello_placement *p, const char *name,
                            uint64_t key, const char *addr, const uint8_t *held, size_t held_len);
/* A packet ([channel][message]) of the peer key, relayed to its room's thread. False when it was
 * not: the thread's inbox holds --udp-relay-bytes already (or the worker is stopping). */
bool net_hosts_udp_packet(net_hosts *h, uint32_t thread, uint64_t key, const uint8_t *data,
                          size_t len);
/* The peer key is gone on the front: its relay client on thread is closed for reason. */
void net_hosts_udp_gone(net_hosts *h, uint32_t thread, uint64_t key, net_disconnect_reason reason);

/* SIGTERM: every worker says Goodbye to its clients and closes its rooms; the front's wake
 * counts h->drained up to h->threads. */
void net_hosts_drain(net_hosts *h);

/* Asks every worker for its figures; h->collected fills and the front is woken when
 * h->collect_left reaches 0 (at once when no worker can answer). One collection at a time: false
 * when one is in flight. */
bool net_hosts_collect(net_hosts *h);
/* Frees the answers of the last collection (under no lock: the collection must be complete). */
void net_hosts_collect_free(net_hosts *h);

#endif

/* net_session_rooms: an admin's CreateRoom, CloseRoom and ListRooms as requests of a session
 * (PROTOCOL.md "Rooms"), answered through the directory's calls the daemon installs
 * (net_room_admin, net_host.c); and StartRecording / StopRecording of the admin's room, answered
 * by its recorder (net_recording_hook, net_record.c). Dispatched by net_session.c. */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "net_server.h"
#include "net_session.h"

/* ---- Rooms (admins: PROTOCOL.md "Rooms") ---------------------------------------------------- */

static void room_info_pb(const net_room_info *in, Collide__V1__RoomInfo *out) {
    collide__v1__room_info__init(out);
    out->name = (char *)in->name;
    out->clients = in->clients;
    out->bodies = in->bodies > UINT32_MAX ? UINT32_MAX : (uint32_t)in->bodies;
    out->tick = in->tick;
    out->auto_ = in->auto_created;
}

static void send_room_info(net_server *srv, net_client *c, uint32_t rid, const net_room_info *in) {
    Collide__V1__RoomInfo ri;
    room_info_pb(in, &ri);
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_ROOM_INFO;
    m.room_info = &ri;
    net_server_append(srv, c, &m);
}

/* Common to the three: admins only (FORBIDDEN, non-fatal, for others), and a server with rooms.
 * An admin by ticket is an admin of its own room and of nothing else (PROTOCOL.md 1.2 "Tickets"):
 * the rooms of the daemon, its own included, are the admin token's. Every other message a
 * session sends is about its own room: a session lives in one room's server, and ids are per
 * room, so no query or move can reach another room. */
static bool room_admin_allowed(net_server *srv, net_client *c, uint32_t rid) {
    if (!c->admin) {
        net_server_send_error(srv, c, rid, NET_ERR(FORBIDDEN), false, "rooms are for admins");
        return false;
    }
    if (c->admin_room_only) {
        net_server_send_error(srv, c, rid, NET_ERR(FORBIDDEN), false,
                              "an admin by ticket manages its own room only: rooms are for the "
                              "admin token");
        return false;
    }
    if (!srv->room_admin) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false, "no rooms here");
        return false;
    }
    return true;
}

/* A failed room call's Error: SHUTTING_DOWN is fatal (PROTOCOL.md "Shutting down"), the rest
 * leave the admin's session as it was. */
static void room_error(net_server *srv, net_client *c, uint32_t rid, int code, const char *err) {
    net_server_send_error(srv, c, rid, (Collide__V1__ErrorCode)code, code == NET_ERR(SHUTTING_DOWN),
                          "%s", err);
}

void net_session_create_room(net_server *srv, net_client *c, uint32_t rid,
                             const Collide__V1__CreateRoom *cr) {
    if (!room_admin_allowed(srv, c, rid)) return;
    const char *name = cr->name ? cr->name : "", *world = cr->world ? cr->world : "";
    net_room_info info;
    char err[256] = "";
    int code = srv->room_admin->create(srv->room_admin->ctx, name, strlen(name), world,
                                       strlen(world), cr->max_clients, &info, err, sizeof err);
    if (code != 0)
        room_error(srv, c, rid, code, err);
    else
        send_room_info(srv, c, rid, &info);
}

void net_session_close_room(net_server *srv, net_client *c, uint32_t rid,
                            const Collide__V1__CloseRoom *cr) {
    if (!room_admin_allowed(srv, c, rid)) return;
    const char *name = cr->name ? cr->name : "";
    net_room_info info;
    char err[256] = "";
    int code = srv->room_admin->close(srv->room_admin->ctx, name, strlen(name),
                                      cr->reason ? cr->reason : "", &info, err, sizeof err);
    if (code != 0)
        room_error(srv, c, rid, code, err);
    else
        send_room_info(srv, c, rid, &info);
}

void net_session_list_rooms(net_server *srv, net_client *c, uint32_t rid) {
    if (!room_admin_allowed(srv, c, rid)) return;
    /* Not a hot path: an admin's occasional question, bounded by --max-rooms + 1 entries. */
    size_t cap = (size_t)srv->cfg.max_rooms + 1u, n;
    net_room_info *infos = malloc(cap * sizeof *infos);
    Collide__V1__RoomInfo *ris = malloc(cap * sizeof *ris);
    Collide__V1__RoomInfo **ptrs = malloc(cap * sizeof *ptrs);
    if (!infos || !ris || !ptrs) {
        net_server_send_error(srv, c, rid, NET_ERR(INTERNAL), false, "out of memory");
    } else {
        n = srv->room_admin->list(srv->room_admin->ctx, infos, cap);
        if (n > cap) n = cap;
        for (size_t i = 0; i < n; i++) {
            room_info_pb(&infos[i], &ris[i]);
            ptrs[i] = &ris[i];
        }
        Collide__V1__RoomList rl = COLLIDE__V1__ROOM_LIST__INIT;
        rl.n_rooms = n;
        rl.rooms = ptrs;
        net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
        m.request_id = rid;
        m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_ROOM_LIST;
        m.room_list = &rl;
        net_server_append(srv, c, &m);
    }
    free(infos);
    free(ris);
    free(ptrs);
}

/* ---- Recordings (admins: PROTOCOL.md "Recordings") ------------------------------------------- */

static void send_recording_info(net_server *srv, net_client *c, uint32_t rid,
                                const net_recording_info *in) {
    Collide__V1__RecordingInfo ri = COLLIDE__V1__RECORDING_INFO__INIT;
    ri.file = (char *)in->file;
    ri.start_tick = in->start_tick;
    ri.bytes = in->bytes;
    ri.active = in->active;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_RECORDING_INFO;
    m.recording_info = &ri;
    net_server_append(srv, c, &m);
}

/* Any admin, an admin by ticket too: a recording is of the admin's own room, which is what a
 * ticket's admin claim grants (PROTOCOL.md 1.2 "Tickets"); it reaches no other room. */
void net_session_recording(net_server *srv, net_client *c, uint32_t rid, bool start) {
    if (!c->admin) {
        net_server_send_error(srv, c, rid, NET_ERR(FORBIDDEN), false, "recordings are for admins");
        return;
    }
    if (!srv->cfg.record_dir[0]) {
        net_server_send_error(srv, c, rid, NET_ERR(NOT_FOUND), false,
                              "recordings are off: the daemon has no --record-dir");
        return;
    }
    if (!srv->recording) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false, "no recordings here");
        return;
    }
    net_recording_info info;
    memset(&info, 0, sizeof info);
    if (srv->recording->request(srv->recording->ctx, start, c->id, rid, &info))
        send_recording_info(srv, c, rid, &info);
}

void net_session_recording_reply(net_server *srv, uint32_t client_id, uint32_t rid,
                                 const net_recording_info *info) {
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->id != client_id) continue;
        if (c->state == NET_CLIENT_ACTIVE && !c->kill) send_recording_info(srv, c, rid, info);
        return;
    }
}

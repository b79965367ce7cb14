/* net_session: the protocol v1 state machine's input side (PROTOCOL.md "Session"): bytes read
 * from a client are split into frames, each ClientMessage is unpacked and handled, and the replies
 * are appended to the client's output (net_server.c). */
#include "net_session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "net_internal.h"
#include "net_server.h"
#include "net_log.h"
#include "net_rooms.h"
#include "wire.h"

/* ---- Requests ----------------------------------------------------------------------------------
 */

static void on_hello(net_server *srv, net_client *c, uint32_t rid, const Collide__V1__Hello *h,
                     const uint8_t *frame, size_t frame_len) {
    if (c->state == NET_CLIENT_ACTIVE) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false, "already said Hello");
        return;
    }
    if (h->protocol_version != NET_PROTOCOL_VERSION) {
        net_server_send_error(srv, c, rid, NET_ERR(VERSION_MISMATCH), true,
                              "protocol version %u not supported; this server speaks %d",
                              h->protocol_version, NET_PROTOCOL_VERSION);
        return;
    }
    net_session_set_name(c, h->name);
    size_t room_len = h->room ? strlen(h->room) : 0;
    const char *room = net_room_name_of(h->room, &room_len);
    /* The tokens and the tickets (net_session_auth.c); a ticket's sub renames the client. */
    net_grant grant;
    if (!net_session_authenticate(srv, c, rid, frame, frame_len, room, room_len, &grant)) return;
    if (srv->hello_hook) {
        /* Front mode: the room is chosen (and its limits checked) by the hook. */
        if (!net_room_name_valid(room, room_len)) {
            net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), true,
                                  "room name must be 1..%d bytes of [A-Za-z0-9_.:-]",
                                  NET_ROOM_NAME_MAX);
            return;
        }
        net_hello_request t = {.request_id = rid,
                               .grant = grant,
                               .name = c->name,
                               .room = room,
                               .room_len = room_len,
                               .all_events = h->all_events,
                               .snapshot_rate_hz = h->snapshot_rate_hz,
                               .quantized = h->quantized};
        srv->hello_hook(srv, c, &t, srv->hello_ctx);
        return;
    }
    /* Admins are let in: an operator must still reach a server that is shedding players. */
    if (!grant.admin && net_server_refuse_hello_at_capacity(srv, c, rid)) return;
    if (!net_server_admit_session(srv, c, rid)) return;
    c->ev.all_events = grant.admin && h->all_events;
    c->snap.snapshot_rate_hz = h->snapshot_rate_hz;
    c->snap.quantized = h->quantized;
    net_session_welcome(srv, c, rid, &grant, c->name, NET_ROOM_DEFAULT);
}

void net_session_refuse_room(net_server *srv, net_client *c, uint32_t rid, int status) {
    net_room_status st = (net_room_status)status;
    Collide__V1__ErrorCode code = (Collide__V1__ErrorCode)net_rooms_status_error_code(st);
    if (st == NET_ROOM_AT_CAPACITY) {
        net_server_refuse_at_capacity(srv, c, rid);
        return;
    }
    if (st == NET_ROOM_SERVER_FULL) {
        net_log(NET_LOG_WARN, "client_refused", c->id, c->addr, "max clients (%u) reached",
                srv->cfg.max_clients);
        net_server_send_error(srv, c, rid, code, true, "server full: %u clients",
                              srv->cfg.max_clients);
        c->reason = NET_DISC_SERVER_FULL; /* after the fatal Error, which sets its own */
        return;
    }
    net_server_send_error(srv, c, rid, code, true, "%s", net_room_status_str(st));
}

void net_session_welcome(net_server *srv, net_client *c, uint32_t rid, const net_grant *g,
                         const char *name, const char *room) {
    COLLIDE_ASSERT(srv->world != NULL);
    net_server_mark_welcomed(srv, c);
    bool admin = g->admin;
    c->admin = admin;
    c->admin_room_only = admin && g->room_only;
    c->ticket_key = g->ticket_key;
    /* A ticket's max_bodies lowers the limit, never raises it (PROTOCOL.md 1.2 "Tickets"). */
    c->max_bodies = srv->cfg.max_bodies_per_client;
    if (g->limited && g->max_bodies < c->max_bodies) c->max_bodies = g->max_bodies;
    /* An admin's bucket (--admin-rate-limit) starts afresh at its own burst, not at what is left
     * of the player's bucket its Hello was counted in. */
    if (admin) memset(&c->rate, 0, sizeof c->rate);
    c->state = NET_CLIENT_ACTIVE;
    if (name != c->name) snprintf(c->name, sizeof c->name, "%s", name);
    /* A datagram's snapshot must fit a packet: always the quantized form (PROTOCOL.md
     * "Datagrams"), whatever Hello.quantized said. */
    if (c->transport->datagram) c->snap.quantized = true;

    const world_config *wc = world_get_config(srv->world);
    Collide__V1__Vec2 wmin = net_pb_vec2(wc->bounds.min), wmax = net_pb_vec2(wc->bounds.max);
    Collide__V1__Welcome w = COLLIDE__V1__WELCOME__INIT;
    w.client_id = c->id;
    w.protocol_version = NET_PROTOCOL_VERSION;
    w.tick_rate_hz = (uint32_t)lrintf(srv->cfg.tick_rate_hz);
    w.tick = world_tick(srv->world);
    w.world_min = &wmin;
    w.world_max = &wmax;
    w.max_speed = wc->max_speed;
    w.max_bodies_per_client = c->max_bodies;
    w.admin = admin;
    w.room = (char *)room;
    /* The snapshot rate granted, in whole Hz (tick_rate / interval, rounded), and the quanta of
     * a quantized client's Snapshot.packed. */
    c->snap.snapshot_every = net_snapshot_interval(srv->cfg.tick_rate_hz, c->snap.snapshot_rate_hz);
    /* Its first snapshot is at the first tick of its phase after this one, like all that follow
     * (net_tick_snapshots). */
    c->snap.next_snapshot_tick = net_snapshot_next_tick(w.tick, c->snap.snapshot_every, c->id);
    w.snapshot_rate_hz = (uint32_t)lrint((double)w.tick_rate_hz / c->snap.snapshot_every);
    if (c->snap.quantized) {
        w.position_quantum = srv->cfg.position_quantum;
        w.velocity_quantum = srv->cfg.velocity_quantum;
    }
    /* What of protocol 1.1 this server implements (PROTOCOL.md "Additions"); a client tests for a
     * name, never for a version. */
    static char feature_batch[] = "batch", feature_rooms[] = "rooms", feature_queries[] = "queries",
                feature_history[] = "history";
    static char feature_filters[] = "filters", feature_sensors[] = "sensors",
                feature_events[] = "events", feature_websocket[] = "websocket",
                feature_quantized[] = "quantized", feature_rotation[] = "rotation",
                feature_udp[] = "udp", feature_tickets[] = "tickets";
    static char feature_characters[] = "characters", feature_one_way[] = "one_way";
    char *features[16];
    size_t nf = 0;
    /* "rooms" only where a client can reach them: a server with the directory behind it. */
    if (srv->room_admin) features[nf++] = feature_rooms;
    features[nf++] = feature_batch;
    features[nf++] = feature_filters;
    features[nf++] = feature_sensors;
    features[nf++] = feature_events;
    features[nf++] = feature_queries;
    features[nf++] = feature_quantized;
    features[nf++] = feature_rotation;
    /* 1.2: SpawnBody.character and .one_way, MoveIntent.jump, BodyState 13-15, quantized bits 7
     * and 8: every room has them (a room without gravity has characters that never stand) */
    features[nf++] = feature_characters;
    features[nf++] = feature_one_way;
    /* "history" when at_tick can reach back at least one tick (--history-ms) */
    if (floor((double)srv->cfg.history_ms * (double)srv->cfg.tick_rate_hz / 1000.0) >= 1.0)
        features[nf++] = feature_history;
    /* "websocket" when the daemon listens for it (--ws-port), whichever transport this client
     * came by: an SDK that connected over TCP may switch its browser build to it. */
    if (srv->cfg.ws_port != 0) features[nf++] = feature_websocket;
    /* "udp" and its port, the same way: a TCP or WebSocket client can find the datagram port. */
    if (srv->cfg.udp_port != 0) features[nf++] = feature_udp;
    /* "tickets" when a ticket key is set (--ticket-key): Hello.token may be one. */
    if (srv->cfg.ticket_key_count > 0) features[nf++] = feature_tickets;
    w.udp_port = srv->cfg.udp_port;
    /* 1.2: the room's gravity; left out when zero (it reads as (0, 0)), so that a world without
     * gravity says the Welcome it said in 1.1 */
    Collide__V1__Vec2 gravity = net_pb_vec2(wc->gravity);
    if (wc->gravity.x != 0.0f || wc->gravity.y != 0.0f) w.gravity = &gravity;
    COLLIDE_ASSERT(nf <= sizeof features / sizeof features[0]);
    w.n_features = nf;
    w.features = features;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
    m.welcome = &w;
    net_server_append(srv, c, &m);
    net_log(NET_LOG_INFO, "client_hello", c->id, c->addr, "name=%s admin=%d room=%s ticket=%u",
            c->name[0] ? c->name : "-", (int)admin, room, (unsigned)c->ticket_key);
}

/* True when shape at p overlaps a body of the world (touching is not overlap). A crowd too large
 * to list counts as overlap: such a point is not free anyway. */
static bool spawn_point_taken(const world *w, const geom_shape *shape, vec2 p) {
    world_body_id near[64];
    size_t n = world_query_aabb(w, geom_shape_aabb(shape, p), 0, near, 64);
    if (n > 64) return true;
    for (size_t i = 0; i < n; i++) {
        world_body_row info;
        geom_shape other;
        if (world_body_get(w, near[i], &info) && world_body_shape(w, near[i], &other) &&
            geom_overlap(shape, p, &other, info.position, NULL))
            return true;
    }
    return false;
}

/* Where a moving body spawned without a position goes: the world file's spawn points in turn
 * (round robin), skipping those where it would overlap a static or another body; when every one
 * is taken, the next in turn anyway (the next tick's discrete pass pushes it out, as for any spawn
 * onto occupied space). With no spawn points: the origin, where an absent Vec2 has always put it
 * (docs/protocol.md). */
static vec2 spawn_point_for(net_server *srv, const geom_shape *shape) {
    size_t n = srv->spawn_point_count;
    if (n == 0) return v2(0.0f, 0.0f);
    size_t first = srv->next_spawn_point % n, pick = first;
    for (size_t k = 0; k < n; k++) {
        size_t i = (first + k) % n;
        if (!spawn_point_taken(srv->world, shape, srv->spawn_points[i])) {
            pick = i;
            break;
        }
    }
    srv->next_spawn_point = (pick + 1) % n;
    return srv->spawn_points[pick];
}

/* The world slots players may not take (--admin-reserved-bodies), so that players alone cannot
 * fill the world and lock its admins out (PROTOCOL.md 3: admins are bounded only by the world's
 * capacity). At most half the capacity, so a small world still takes players. */
static uint32_t player_reserve(const net_server *srv) {
    size_t capacity = world_get_config(srv->world)->max_bodies;
    size_t half = capacity / 2;
    return (uint32_t)(srv->cfg.admin_reserved_bodies < half ? srv->cfg.admin_reserved_bodies
                                                            : half);
}

/* Whether a player's spawn leaves the reserve intact. */
static bool player_slot_left(const net_server *srv, uint32_t reserved) {
    world_stats ws;
    world_get_stats(srv->world, &ws);
    return ws.static_bodies + ws.moving_bodies + reserved < ws.capacity;
}

/* CharacterOptions as the world takes them: zeros are the defaults on both sides. */
static world_character_options character_options_of(const Collide__V1__CharacterOptions *o) {
    world_character_options w = {o->max_slope,  o->step_height,   o->snap_distance,
                                 o->jump_speed, o->gravity_scale, o->jump_buffer_ms,
                                 o->coyote_ms};
    return w;
}

/* SpawnBody.character (1.2) checked before the spawn, so that a refusal leaves nothing behind:
 * only a moving body is a character (BAD_REQUEST, as a kind the spawn cannot have: the request
 * is wrong whoever sends it, where FORBIDDEN would say who may), and its options are finite and
 * not negative (a negative slope, step, snap, jump speed or gravity scale has no meaning the
 * contract gives; zero is the default). */
static bool spawn_character_valid(net_server *srv, net_client *c, uint32_t rid,
                                  world_body_kind kind, const Collide__V1__CharacterOptions *o) {
    if (!o) return true;
    if (kind != WORLD_BODY_MOVING) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                              "character is for moving bodies: a static cannot be one");
        return false;
    }
    float f[] = {o->max_slope, o->step_height, o->snap_distance, o->jump_speed, o->gravity_scale};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!isfinite(f[i]) || f[i] < 0.0f) {
            net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                                  "character options must be finite and not negative");
            return false;
        }
    }
    return true;
}

/* What SpawnBody sets on the body just spawned, each by its world call: the filters (1.1),
 * one_way and character (1.2). A failure (only running out of memory for a table the first such
 * body allocates: the rest was checked before the spawn) despawns it, so a spawn is whole or not
 * at all, and answers the request. */
static bool spawn_options(net_server *srv, net_client *c, uint32_t rid, world_body_id id,
                          const Collide__V1__SpawnBody *s) {
    world_status st = WORLD_OK;
    const char *what = NULL;
    if (s->category || s->mask || s->sensor) {
        world_filter f = {s->category, s->mask, s->sensor};
        st = journal_set_filter(srv->journal, srv->world, id, &f);
        what = "its filter";
    }
    if (st == WORLD_OK && s->one_way) {
        st = journal_set_one_way(srv->journal, srv->world, id, true);
        what = "one_way";
    }
    if (st == WORLD_OK && s->character) {
        world_character_options o = character_options_of(s->character);
        st = journal_set_character(srv->journal, srv->world, id, &o);
        what = "its character";
    }
    if (st == WORLD_OK) return true;
    journal_despawn(srv->journal, srv->world, id);
    char text[NET_ERROR_TEXT];
    if (st == WORLD_ERR_NO_MEMORY)
        snprintf(text, sizeof text, "spawn failed: out of memory for %s", what);
    else
        snprintf(text, sizeof text, "spawn failed: %s: %s", what, world_status_str(st));
    net_request_world_error(srv, c, rid, st, text);
    return false;
}

/* Room for one more id in c's owned list (an admin's is pruned of gone bodies first); false,
 * answered INTERNAL, when out of memory. */
static bool owned_make_room(net_server *srv, net_client *c, uint32_t rid) {
    if (c->owned_count < c->owned_cap) return true;
    if (c->admin) net_client_prune_owned(srv, c);
    if (c->owned_count < c->owned_cap) return true;
    uint32_t cap = c->owned_cap ? c->owned_cap * 2u : (c->admin ? 8u : c->max_bodies);
    if (cap == 0) cap = 1;
    world_body_id *owned = realloc(c->owned, cap * sizeof *owned);
    if (!owned) {
        net_server_send_error(srv, c, rid, NET_ERR(INTERNAL), false, "out of memory");
        return false;
    }
    c->owned = owned;
    c->owned_cap = cap;
    return true;
}

static void on_spawn(net_server *srv, net_client *c, uint32_t rid,
                     const Collide__V1__SpawnBody *s) {
    world_body_kind kind;
    if (s->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING) {
        kind = WORLD_BODY_MOVING;
    } else if (s->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC) {
        if (!c->admin) {
            net_server_send_error(srv, c, rid, NET_ERR(FORBIDDEN), false,
                                  "static bodies are for admins");
            return;
        }
        kind = WORLD_BODY_STATIC;
    } else {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                              "kind must be BODY_KIND_MOVING or BODY_KIND_STATIC");
        return;
    }
    if (kind == WORLD_BODY_MOVING && !c->admin) {
        net_client_prune_owned(srv, c);
        if (c->owned_count >= c->max_bodies) {
            net_server_send_error(srv, c, rid, NET_ERR(LIMIT_EXCEEDED), false,
                                  "at most %u bodies per client", c->max_bodies);
            return;
        }
        uint32_t reserved = player_reserve(srv);
        if (reserved > 0 && !player_slot_left(srv, reserved)) {
            net_server_send_error(srv, c, rid, NET_ERR(LIMIT_EXCEEDED), false,
                                  "world is full for players (%u slots kept for admins)", reserved);
            return;
        }
    }
    geom_shape shape;
    geom_shape_error serr = net_request_shape(s->shape, &shape);
    /* 1.1: the spawn angle is the body's initial angle; the shape stays body-local (PROTOCOL.md
     * "Rotation"), no longer baked. */
    if (serr != GEOM_OK) {
        net_server_send_error(srv, c, rid, NET_ERR(INVALID_SHAPE), false, "invalid shape: %s",
                              s->shape ? geom_shape_error_str(serr) : "shape missing");
        return;
    }
    /* proto3 tells an absent message field from a zero one: a moving body spawned without a
     * position goes to a spawn point (chosen after the checks below, which do not depend on it) */
    bool at_spawn_point = kind == WORLD_BODY_MOVING && !s->position;
    vec2 pos = net_vec2_of(s->position);
    if (!v2_is_finite(pos) || !isfinite(s->angle)) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                              "position and angle must be finite");
        return;
    }
    if (!spawn_character_valid(srv, c, rid, kind, s->character)) return;
    /* Make room in the owned list first, so a spawned body is never left untracked. */
    if (kind == WORLD_BODY_MOVING && !owned_make_room(srv, c, rid)) return;
    if (at_spawn_point) pos = spawn_point_for(srv, &shape);
    world_body_id id = WORLD_NULL_BODY;
    geom_shape_error werr = GEOM_OK;
    world_status st =
        journal_spawn(srv->journal, srv->world, kind, &shape, pos, s->angle, c->id, &id, &werr);
    if (st != WORLD_OK) {
        char text[NET_ERROR_TEXT];
        if (st == WORLD_ERR_INVALID_SHAPE)
            snprintf(text, sizeof text, "invalid shape: %s", geom_shape_error_str(werr));
        else if (st == WORLD_ERR_OUT_OF_BOUNDS)
            snprintf(text, sizeof text, "position (%g, %g) is outside the world", (double)pos.x,
                     (double)pos.y);
        else if (st == WORLD_ERR_FULL)
            snprintf(text, sizeof text, "world is full");
        else if (st == WORLD_ERR_NOT_FINITE)
            snprintf(text, sizeof text, "non-finite value");
        else
            snprintf(text, sizeof text, "spawn failed: %s", world_status_str(st));
        net_request_world_error(srv, c, rid, st, text);
        return;
    }
    if (!spawn_options(srv, c, rid, id, s)) return;
    if (kind == WORLD_BODY_MOVING) c->owned[c->owned_count++] = id;
    world_body_row info;
    vec2 at = world_body_get(srv->world, id, &info) ? info.position : pos;
    Collide__V1__Vec2 pv = net_pb_vec2(at);
    Collide__V1__Spawned sp = COLLIDE__V1__SPAWNED__INIT;
    sp.body_id = id;
    sp.position = &pv;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED;
    m.spawned = &sp;
    net_server_append(srv, c, &m);
}

/* NOT_FOUND / FORBIDDEN checks of a despawn (an intent has them in world_set_intent_as, in the
 * same order and words); true when c may act on the body. */
static bool check_body_access(net_server *srv, net_client *c, uint32_t rid, world_body_id id,
                              world_body_row *info) {
    if (id == WORLD_NULL_BODY || !world_body_get(srv->world, id, info)) {
        net_server_send_error(srv, c, rid, NET_ERR(NOT_FOUND), false, "no body %u", id);
        return false;
    }
    if (!c->admin && (info->owner != c->id || info->kind != WORLD_BODY_MOVING)) {
        net_server_send_error(srv, c, rid, NET_ERR(FORBIDDEN), false, "body %u is not yours", id);
        return false;
    }
    return true;
}

/* The intent is validated once, by the world, in one id lookup (body alive, the client's to move,
 * moving, velocity finite, input_seq newer): a player may move only the moving bodies it spawned
 * (owner = its id), an admin any (owner 0). */
static void on_move(net_server *srv, net_client *c, uint32_t rid,
                    const Collide__V1__MoveIntent *mv) {
    /* 1.2: a jump rides the intent it came with, so only an accepted one carries it (a stale
     * input_seq's jump is dropped with it: one jump per input_seq); a body that is not a
     * character ignores it (the world's rule). journal_intent makes both calls. */
    world_status st =
        journal_intent(srv->journal, srv->world, c->admin ? 0u : c->id, mv->body_id,
                       net_vec2_of(mv->velocity), mv->angular_velocity, mv->input_seq, mv->jump);
    if (st == WORLD_OK || st == WORLD_STALE_INPUT) return; /* older or equal input_seq: ignored */
    char text[NET_ERROR_TEXT];
    if (st == WORLD_ERR_NOT_OWNER)
        snprintf(text, sizeof text, "body %u is not yours", mv->body_id);
    else if (st == WORLD_ERR_NOT_FINITE)
        snprintf(text, sizeof text, "velocity and angular_velocity must be finite");
    else if (st == WORLD_ERR_NOT_FOUND)
        snprintf(text, sizeof text, "no body %u", mv->body_id);
    else if (st == WORLD_ERR_NOT_MOVING)
        snprintf(text, sizeof text, "body %u is static", mv->body_id);
    else
        snprintf(text, sizeof text, "cannot move body %u: %s", mv->body_id, world_status_str(st));
    net_request_world_error(srv, c, rid, st, text);
}

/* MoveIntents: each item exactly as a MoveIntent of its own, in order; a failing item's Error
 * carries the batch's request_id and Error.index = its position + 1, and the others still apply.
 * Each item counts as one message against the rate limit: dispatch charged the frame for the
 * first, the rest are charged here, and the items past the budget are dropped with one
 * RATE_LIMITED at the first dropped item's index (counted as one drop towards the abuse cut). */
static void on_move_batch(net_server *srv, net_client *c, uint32_t rid,
                          const Collide__V1__MoveIntents *b) {
    double rate = net_request_message_rate(srv, c);
    for (size_t i = 0; i < b->n_intents && net_client_accepts_input(c); i++) {
        srv->error_index = (uint32_t)(i + 1);
        if (i > 0 && rate > 0.0 && !net_rate_take(&c->rate, rate, srv->now_us)) {
            if (net_rate_note_drop(&c->rate, rate, srv->now_us))
                net_server_send_error(srv, c, rid, NET_ERR(RATE_LIMITED), true,
                                      "sustained flood: disconnected");
            else
                net_server_send_error(srv, c, rid, NET_ERR(RATE_LIMITED), false,
                                      "over %g messages per second: items %zu to %zu dropped", rate,
                                      i + 1, b->n_intents);
            break;
        }
        on_move(srv, c, rid, b->intents[i]);
    }
    srv->error_index = 0;
}

static void on_despawn(net_server *srv, net_client *c, uint32_t rid,
                       const Collide__V1__DespawnBody *d) {
    world_body_row info;
    if (!check_body_access(srv, c, rid, d->body_id, &info)) return;
    world_status st = journal_despawn(srv->journal, srv->world, d->body_id);
    if (st != WORLD_OK) {
        char text[NET_ERROR_TEXT];
        snprintf(text, sizeof text, "no body %u", d->body_id);
        net_request_world_error(srv, c, rid, st, text);
        return;
    }
    for (uint32_t i = 0; i < c->owned_count; i++) {
        if (c->owned[i] == d->body_id) {
            c->owned[i] = c->owned[--c->owned_count];
            break;
        }
    }
}

/* SnapshotAck (1.2): the client applied the snapshot of that tick. Kept as the newest tick acked
 * (a UDP client's baselines are chosen from it); no reply, and on TCP and WebSocket nothing else
 * (PROTOCOL.md "Datagrams": accepted and ignored there). A tick not yet sent proves nothing. */
static void on_snapshot_ack(net_client *c, const Collide__V1__SnapshotAck *a, uint64_t now_tick) {
    if (a->tick <= now_tick && a->tick > c->snap.acked_tick) c->snap.acked_tick = a->tick;
    /* A datagram client's baseline: any snapshot still held, not only a newer acked_tick (an
     * ack for a tick never sent moved acked_tick and must not hide the real ones). */
    net_baselines_ack(&c->snap.baselines, a->tick);
}

static void on_ping(net_server *srv, net_client *c, uint32_t rid, const Collide__V1__Ping *p) {
    Collide__V1__Pong pong = COLLIDE__V1__PONG__INIT;
    pong.client_time_us = p->client_time_us;
    pong.server_time_us = srv->wall_us;
    pong.tick = world_tick(srv->world);
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_PONG;
    m.pong = &pong;
    net_server_append(srv, c, &m);
}

static void on_set_view(net_server *srv, net_client *c, uint32_t rid,
                        const Collide__V1__SetView *v) {
    vec2 center = net_vec2_of(v->center), half = net_vec2_of(v->half_extents);
    if (!v2_is_finite(center) || !v2_is_finite(half) || half.x < 0.0f || half.y < 0.0f) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                              "view must be finite with half extents >= 0");
        return;
    }
    if (half.x == 0.0f && half.y == 0.0f) {
        c->has_view = false; /* back to the default view */
        return;
    }
    /* Each view costs the tick per body it holds (movers every tick, statics when they come
     * in): a whole-world view over a large map is for admins. The old view stays. */
    float cap = srv->cfg.max_view_extent;
    if (!c->admin && (2.0f * half.x > cap || 2.0f * half.y > cap)) {
        net_server_send_error(srv, c, rid, NET_ERR(LIMIT_EXCEEDED), false,
                              "view wider or taller than --max-view-extent %g units", (double)cap);
        return;
    }
    c->has_view = true;
    c->view = aabb_make(v2_sub(center, half), v2_add(center, half));
}

/* The request_id of a frame that is not unpacked (refused by a limit), 0 when unreadable. */
static uint32_t request_id_raw(const uint8_t *body, size_t len) {
    uint64_t rid = 0;
    if (!wire_scan(body, len, WIRE_CLIENT_REQUEST_ID, WIRE_VARINT, NULL, &rid) || rid > UINT32_MAX)
        return 0;
    return (uint32_t)rid;
}

/* A SnapshotAck frame, from its bytes: short, and holding nothing but a request_id and the ack
 * (every top-level field is one of the two). Anything else in it, another message that protobuf's
 * last-oneof rule would unpack instead, makes it an ordinary frame, charged as one: a free ack
 * cannot carry a free request. */
static bool is_snapshot_ack(const uint8_t *body, size_t len) {
    if (len > 24) return false;
    wire_reader r = wire_reader_of(body, len);
    bool ack = false;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_read_key(&r, &field, &type) || !wire_skip(&r, type)) return false;
        if (field == WIRE_CLIENT_SNAPSHOT_ACK && type == WIRE_LEN)
            ack = true;
        else if (field != WIRE_CLIENT_REQUEST_ID)
            return false;
    }
    return ack;
}

/* The rate limits, charged before the unpack: a dropped frame costs a field scan for its
 * request_id, not a parse and its allocations, so a flood pays for nothing it is refused. The byte
 * bucket too (--rate-limit-bytes): a message's cost grows with its size, so a client within the
 * message rate cannot send max frames back to back. Admins pay neither bucket, only
 * --admin-rate-limit when set (net_request_message_rate). False when the frame is dropped
 * (RATE_LIMITED sent, fatal once the drops are abusive). */
static bool charge_frame(net_server *srv, net_client *c, const uint8_t *body, size_t len) {
    if (c->snap.free_acks > 0 && is_snapshot_ack(body, len)) {
        c->snap.free_acks--;
        return true;
    }
    size_t wire_len = len + frame_prefix_size((uint32_t)len);
    double rate = net_request_message_rate(srv, c);
    bool over_msgs = rate > 0.0 && !net_rate_take(&c->rate, rate, srv->now_us);
    if (!over_msgs &&
        (c->admin ||
         net_rate_take_bytes(&c->rate, srv->cfg.rate_limit_bytes,
                             (double)srv->cfg.max_frame + FRAME_MAX_PREFIX, wire_len, srv->now_us)))
        return true;
    uint32_t rid = request_id_raw(body, len);
    bool abusive = net_rate_note_drop(&c->rate, rate, srv->now_us);
    if (abusive)
        net_server_send_error(srv, c, rid, NET_ERR(RATE_LIMITED), true,
                              "sustained flood: disconnected");
    else if (over_msgs)
        net_server_send_error(srv, c, rid, NET_ERR(RATE_LIMITED), false,
                              "over %g messages per second", rate);
    else
        net_server_send_error(srv, c, rid, NET_ERR(RATE_LIMITED), false, "over %g bytes per second",
                              (double)srv->cfg.rate_limit_bytes);
    return false;
}

/* What grows the unpack's structs is bounded before anything is allocated for it, from one walk
 * of the frame's raw bytes (net_arena_census_of), into *census. Only an active client's: before
 * its Welcome a client may send only a Hello (capped by --max-hello-frame), which holds neither.
 * False when the frame is refused (its Error sent). */
static bool census_fits(net_server *srv, net_client *c, const uint8_t *body, size_t len,
                        net_arena_census *census) {
    size_t max_items = net_arena_batch_max(srv->cfg.max_frame);
    *census = (net_arena_census){0, 0};
    if (c->state == NET_CLIENT_ACTIVE) *census = net_arena_census_of(body, len, max_items);
    /* Polygons: the clear INVALID_SHAPE of on_spawn for a polygon too large, not a parse error. */
    if (census->vertices > GEOM_MAX_POLYGON_VERTICES) {
        net_server_send_error(srv, c, request_id_raw(body, len), NET_ERR(INVALID_SHAPE), false,
                              "invalid shape: %s",
                              geom_shape_error_str(GEOM_ERR_TOO_MANY_VERTICES));
        return false;
    }
    /* A batch over the most a --max-frame frame may hold is refused whole; within it, its budget
     * grows per intent (net_arena.h). */
    if (census->intents > max_items) {
        net_server_send_error(srv, c, request_id_raw(body, len), NET_ERR(LIMIT_EXCEEDED), false,
                              "batch of more than %zu intents (--max-frame / %u)", max_items,
                              NET_ARENA_BATCH_BYTES_PER_ITEM);
        return false;
    }
    return true;
}

/* A frame that did not unpack: before Hello that ends the session; after it, the arena's limit
 * or a malformed message, both non-fatal. */
static void refuse_unreadable(net_server *srv, net_client *c, const uint8_t *body, size_t len) {
    if (c->state == NET_CLIENT_AWAIT_HELLO)
        net_server_send_error(srv, c, 0, NET_ERR(UNAUTHENTICATED), true,
                              "first message must be Hello");
    else if (srv->arena.over)
        net_server_send_error(srv, c, request_id_raw(body, len), NET_ERR(BAD_REQUEST), false,
                              "frame needs more than %zu bytes to unpack", srv->arena.limit);
    else
        net_server_send_error(srv, c, 0, NET_ERR(BAD_REQUEST), false,
                              "frame is not a valid ClientMessage");
}

/* One unpacked message to its handler: the Hello, the world requests (net_session.c), the queries
 * (net_queries.c) and the rooms (net_session_rooms.c). */
static void route(net_server *srv, net_client *c, const net_client_msg *msg, const uint8_t *body,
                  size_t len) {
    uint32_t rid = msg->request_id;
    switch (msg->msg_case) {
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO:
        on_hello(srv, c, rid, msg->hello, body, len);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN:
        on_spawn(srv, c, rid, msg->spawn);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE:
        on_move(srv, c, rid, msg->move);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE_BATCH:
        on_move_batch(srv, c, rid, msg->move_batch);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_DESPAWN:
        on_despawn(srv, c, rid, msg->despawn);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_PING:
        on_ping(srv, c, rid, msg->ping);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW:
        on_set_view(srv, c, rid, msg->set_view);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_RAY_CAST:
        net_session_ray_cast(srv, c, rid, msg->ray_cast);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_OVERLAP:
        net_session_overlap(srv, c, rid, msg->overlap);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SHAPE_CAST:
        net_session_shape_cast(srv, c, rid, msg->shape_cast);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_CREATE_ROOM:
        net_session_create_room(srv, c, rid, msg->create_room);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_CLOSE_ROOM:
        net_session_close_room(srv, c, rid, msg->close_room);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_LIST_ROOMS:
        net_session_list_rooms(srv, c, rid);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_START_RECORDING:
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_STOP_RECORDING:
        net_session_recording(srv, c, rid,
                              msg->msg_case == COLLIDE__V1__CLIENT_MESSAGE__MSG_START_RECORDING);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SNAPSHOT_ACK:
        on_snapshot_ack(c, msg->snapshot_ack, srv->world ? world_tick(srv->world) : 0);
        break;
    default:
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false, "empty or unknown message");
        break;
    }
}

/* One frame: counted, charged to the rate limits, its size census checked, unpacked into the
 * server's arena and handled. */
static void dispatch(net_server *srv, net_client *c, const uint8_t *body, size_t len) {
    srv->metrics.frames_in_total++;
    srv->metrics.transports[c->transport->id].frames_in++;
    if (!charge_frame(srv, c, body, len)) return;
    net_arena_census census;
    if (!census_fits(srv, c, body, len, &census)) return;
    net_arena_begin(&srv->arena, len);
    net_arena_allow_batch(&srv->arena, census.intents);
    net_client_msg *msg = collide__v1__client_message__unpack(srv->pb_alloc, len, body);
    if (!msg)
        refuse_unreadable(srv, c, body, len);
    else if (c->state == NET_CLIENT_AWAIT_HELLO &&
             msg->msg_case != COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO)
        net_server_send_error(srv, c, msg->request_id, NET_ERR(UNAUTHENTICATED), true,
                              "first message must be Hello");
    else
        route(srv, c, msg, body, len);
    /* No pointer into msg survives this call. With the server's own arena the walk of
     * free_unpacked is skipped: net_arena_end takes everything back at once. */
    if (msg && srv->pb_alloc != &srv->arena.pb)
        collide__v1__client_message__free_unpacked(msg, srv->pb_alloc);
    net_arena_end(&srv->arena);
}

/* The largest frame c may send now: before Hello only --max-hello-frame (a Hello is small, and an
 * unauthenticated peer gets no more to parse than that), after it --max-frame. */
static uint32_t frame_limit(const net_server *srv, const net_client *c) {
    uint32_t max = srv->cfg.max_frame;
    if (c->state == NET_CLIENT_AWAIT_HELLO && srv->cfg.max_hello_frame < max)
        max = srv->cfg.max_hello_frame;
    return max;
}

uint32_t net_session_frame_limit(const net_server *srv, const net_client *c) {
    return frame_limit(srv, c);
}

void net_session_message(net_server *srv, net_client *c, const uint8_t *body, size_t len) {
    if (!net_client_accepts_input(c)) return;
    dispatch(srv, c, body, len);
}

void net_session_refuse_message(net_server *srv, net_client *c, const uint8_t *body, size_t len,
                                const char *why) {
    if (!net_client_accepts_input(c)) return;
    srv->metrics.frames_in_total++;
    srv->metrics.transports[c->transport->id].frames_in++;
    /* Charged as any message: a refusal that cost nothing would be a free reply generator. */
    if (!charge_frame(srv, c, body, len)) return;
    net_server_send_error(srv, c, request_id_raw(body, len), NET_ERR(BAD_REQUEST), false, "%s",
                          why);
}

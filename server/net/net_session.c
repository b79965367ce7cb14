#include "net_session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "net_log.h"
#include "varint.h"

typedef Collide__V1__ClientMessage client_msg;
typedef Collide__V1__ServerMessage server_msg;

#define ERR(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name

/* ---- Small helpers ------------------------------------------------------------------------- */

bool net_secret_equal(const char *a, size_t a_len, const char *b, size_t b_len) {
    /* Walk the longer length, comparing against a zero byte past the end of the shorter, and
     * fold the length difference in: no early exit, so timing reveals only the lengths. */
    size_t n = a_len > b_len ? a_len : b_len;
    volatile unsigned char diff = (unsigned char)(a_len != b_len);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < a_len ? (unsigned char)a[i] : 0;
        unsigned char y = i < b_len ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

bool net_rate_take(net_rate *r, double rate_per_s, uint64_t now_us) {
    double burst = 2.0 * rate_per_s;
    if (r->last_us == 0) {
        r->tokens = burst;
        r->last_us = now_us;
    } else if (now_us > r->last_us) {
        r->tokens += (double)(now_us - r->last_us) * 1e-6 * rate_per_s;
        if (r->tokens > burst) r->tokens = burst;
        r->last_us = now_us;
    }
    if (r->tokens >= 1.0 - 1e-9) { /* tolerance: refills summed from parts must make a whole */
        r->tokens -= 1.0;
        return true;
    }
    return false;
}

/* Records a drop; true when the client has crossed into sustained abuse. */
static bool rate_note_drop(net_rate *r, double rate_per_s, uint64_t now_us) {
    if (r->window_drops == 0 || now_us - r->window_start_us >= 1000000u) {
        /* A new one-second window: consecutive only if the previous window directly precedes. */
        bool consecutive = r->window_drops > 0 && now_us - r->window_start_us < 2000000u;
        r->abusive_windows = consecutive ? r->abusive_windows + 1u : 1u;
        r->window_start_us = now_us;
        r->window_drops = 0;
    }
    r->window_drops++;
    return r->abusive_windows >= NET_ABUSE_SECONDS ||
           (double)r->window_drops > NET_ABUSE_BURSTS * 2.0 * rate_per_s;
}

void net_server_mark_dirty(net_server *srv, net_client *c) {
    if (c->dirty || c->index == UINT32_MAX) return;
    c->dirty = true;
    c->dirty_index = srv->dirty_count;
    srv->dirty[srv->dirty_count++] = c;
}

net_client *net_server_pop_dirty(net_server *srv) {
    if (srv->dirty_count == 0) return NULL;
    net_client *c = srv->dirty[--srv->dirty_count];
    c->dirty = false;
    return c;
}

static void kill_client(net_server *srv, net_client *c, net_disconnect_reason reason) {
    if (!c->kill) {
        c->kill = true;
        c->reason = reason;
    }
    net_server_mark_dirty(srv, c);
}

/* The hard output limit, enforced where output is appended (Redis-style), not only once a tick: a
 * client that pipelines requests and never reads cannot grow its buffer past the bound in between
 * two ticks, whatever --rate-limit allows. True when the client is over it and now being closed. */
static bool over_hard_limit(net_server *srv, net_client *c) {
    size_t queued = net_client_queued(c);
    if (queued <= srv->cfg.max_queued_bytes) return false;
    if (!c->kill) {
        srv->metrics.slow_client_disconnects_total++;
        net_log(NET_LOG_WARN, "slow_client_disconnect", c->id, c->addr,
                "%zu bytes queued, limit %zu", queued, srv->cfg.max_queued_bytes);
        kill_client(srv, c, NET_DISC_SLOW_CLIENT);
    }
    return true;
}

/* Appends one framed ServerMessage. */
static bool append_msg(net_server *srv, net_client *c, const server_msg *m) {
    if (c->kill) return false; /* being closed: whatever it is owed will never be read */
    size_t size = collide__v1__server_message__get_packed_size(m);
    uint8_t prefix[FRAME_MAX_PREFIX];
    size_t plen = frame_write_prefix((uint32_t)size, prefix);
    if (!net_buf_reserve(&c->out, plen + size)) {
        kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    memcpy(c->out.data + c->out.len, prefix, plen);
    collide__v1__server_message__pack(m, c->out.data + c->out.len + plen);
    c->out.len += plen + size;
    srv->metrics.frames_out_total++;
    net_server_mark_dirty(srv, c);
    return !over_hard_limit(srv, c);
}

static void enter_closing(net_server *srv, net_client *c, net_disconnect_reason reason) {
    if (c->state == NET_CLIENT_CLOSING) return;
    c->state = NET_CLIENT_CLOSING;
    c->reason = reason;
    c->closing_us = srv->now_us;
    net_server_mark_dirty(srv, c);
}

static void send_error(net_server *srv, net_client *c, uint32_t request_id,
                       Collide__V1__ErrorCode code, bool fatal, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void send_error(net_server *srv, net_client *c, uint32_t request_id,
                       Collide__V1__ErrorCode code, bool fatal, const char *fmt, ...) {
    char text[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    Collide__V1__Error err = COLLIDE__V1__ERROR__INIT;
    err.code = code;
    err.message = text;
    err.fatal = fatal;
    server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = request_id;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR;
    m.error = &err;
    if ((unsigned)code < NET_ERROR_CODE_COUNT) srv->metrics.errors_total[code]++;
    net_log(fatal ? NET_LOG_INFO : NET_LOG_DEBUG, "client_error", c->id, c->addr,
            "code=%d fatal=%d %s", (int)code, (int)fatal, text);
    append_msg(srv, c, &m);
    if (fatal) enter_closing(srv, c, NET_DISC_FATAL_ERROR);
}

static Collide__V1__Vec2 pb_vec2(vec2 v) {
    Collide__V1__Vec2 r = COLLIDE__V1__VEC2__INIT;
    r.x = v.x;
    r.y = v.y;
    return r;
}

static vec2 vec2_of(const Collide__V1__Vec2 *v) { return v ? v2(v->x, v->y) : v2(0.0f, 0.0f); }

/* ---- Server and client lifetime -------------------------------------------------------------- */

net_server *net_server_create(const net_config *cfg, world *w) {
    net_server *srv = calloc(1, sizeof *srv);
    if (!srv) return NULL;
    srv->cfg = *cfg;
    srv->world = w;
    srv->next_client_id = 1;
    world_stats stats;
    world_get_stats(w, &stats);
    srv->query_cap = stats.capacity ? stats.capacity : 1;
    /* A BodyState takes at least 4 bytes on the wire, and a removed id at least 1: these bound
     * how many entries one snapshot frame can hold. */
    srv->scratch_cap = cfg->max_frame / 4u + 1u;
    srv->query = malloc(srv->query_cap * sizeof *srv->query);
    srv->removed = malloc(srv->scratch_cap * sizeof *srv->removed);
    srv->deferred = malloc(2 * srv->query_cap * sizeof *srv->deferred);
    bool view_ok = net_view_init(&srv->view, w, cfg->view_radius);
    bool marks_ok = net_view_marks_init(&srv->marks, w);
    if (!view_ok || !marks_ok || !srv->query || !srv->removed || !srv->deferred ||
        !net_buf_reserve(&srv->snap, cfg->max_frame + NET_VIEW_RECORD_COPY)) {
        net_server_destroy(srv);
        return NULL;
    }
    return srv;
}

void net_server_destroy(net_server *srv) {
    if (!srv) return;
    free(srv->clients);
    free(srv->dirty);
    free(srv->query);
    net_view_marks_free(&srv->marks);
    free(srv->removed);
    free(srv->deferred);
    net_known_free(&srv->known_next);
    net_buf_free(&srv->snap);
    net_view_free(&srv->view);
    free(srv);
}

bool net_client_open(net_server *srv, net_client *c, const char *addr) {
    if (srv->client_count == srv->client_cap) {
        uint32_t cap = srv->client_cap ? srv->client_cap * 2u : 64u;
        net_client **clients = realloc(srv->clients, cap * sizeof *clients);
        if (!clients) return false;
        srv->clients = clients;
        net_client **dirty = realloc(srv->dirty, cap * sizeof *dirty);
        if (!dirty) return false;
        srv->dirty = dirty;
        srv->client_cap = cap;
    }
    c->id = srv->next_client_id++;
    if (srv->next_client_id == 0) srv->next_client_id = 1; /* ids are never 0 */
    snprintf(c->addr, sizeof c->addr, "%s", addr ? addr : "-");
    c->connected_us = srv->now_us;
    c->state = NET_CLIENT_AWAIT_HELLO;
    c->index = srv->client_count;
    srv->clients[srv->client_count++] = c;
    srv->metrics.connections_total++;
    if (srv->client_count - srv->refusing > srv->cfg.max_clients) {
        c->refused = true;
        srv->refusing++;
        net_log(NET_LOG_WARN, "client_refused", c->id, c->addr, "max clients (%u) reached",
                srv->cfg.max_clients);
        if (srv->refusing > NET_MAX_REFUSING) {
            kill_client(srv, c, NET_DISC_SERVER_FULL);
        } else {
            send_error(srv, c, 0, ERR(LIMIT_EXCEEDED), true, "server full: %u clients",
                       srv->cfg.max_clients);
            c->reason = NET_DISC_SERVER_FULL;
        }
        return true;
    }
    net_log(NET_LOG_INFO, "client_connected", c->id, c->addr, "connected");
    return true;
}

void net_client_release(net_server *srv, net_client *c) {
    if (c->index == UINT32_MAX) return;
    /* PROTOCOL.md 8: the client's moving bodies go with it; statics belong to the world. */
    for (uint32_t i = 0; i < c->owned_count; i++) {
        world_body_info info;
        if (world_body_get(srv->world, c->owned[i], &info) && info.kind == WORLD_BODY_MOVING &&
            info.owner == c->id) {
            world_despawn(srv->world, c->owned[i]);
        }
    }
    if (c->dirty) {
        net_client *last = srv->dirty[--srv->dirty_count];
        srv->dirty[c->dirty_index] = last;
        last->dirty_index = c->dirty_index;
        c->dirty = false;
    }
    net_client *last = srv->clients[--srv->client_count];
    srv->clients[c->index] = last;
    last->index = c->index;
    c->index = UINT32_MAX;
    if (c->refused) srv->refusing--;
    srv->metrics.disconnects_total[c->reason < NET_DISC_REASON_COUNT ? c->reason : 0]++;
    if (!c->refused) {
        net_log(NET_LOG_INFO, "client_disconnected", c->id, c->addr, "reason=%s name=%s",
                net_disconnect_reason_str(c->reason), c->name[0] ? c->name : "-");
    }
    net_buf_free(&c->in);
    net_buf_free(&c->out);
    free(c->owned);
    c->owned = NULL;
    c->owned_count = c->owned_cap = 0;
    net_known_free(&c->known);
}

/* ---- Raw field scan ---------------------------------------------------------------------------
 */

/* Finds the last occurrence of field `field` with wire type `wire_type` (0 varint, 2 length-
 * delimited) in a message's bytes. *value gets a varint's value or a length-delimited field's
 * length, *out (wire type 2 only) its first byte. False when absent or malformed. */
static bool scan_field(const uint8_t *buf, size_t len, uint32_t field, unsigned wire_type,
                       const uint8_t **out, uint64_t *value) {
    const uint8_t *p = buf, *end = buf + len;
    bool found = false;
    while (p < end) {
        uint64_t key, n = 0;
        if (!varint_read(&p, end, &key)) return false;
        bool match = (key >> 3) == field && (key & 7u) == wire_type;
        switch (key & 7u) {
        case 0:
            if (!varint_read(&p, end, &n)) return false;
            break;
        case 1:
            if (end - p < 8) return false;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return false;
            p += 4;
            break;
        case 2:
            if (!varint_read(&p, end, &n) || n > (uint64_t)(end - p)) return false;
            if (match) *out = p;
            p += n;
            break;
        default:
            return false;
        }
        if (match) {
            *value = n;
            found = true;
        }
    }
    return found;
}

/* The Hello token as the raw bytes on the wire. protobuf-c hands strings over NUL-terminated, so
 * "secret\0" would compare equal to "secret" through strlen: the token is compared from its true
 * length instead. (Hello is ClientMessage field 10, token is Hello field 3; for repeated
 * occurrences the last wins, as protobuf merging does.) */
static void hello_token_raw(const uint8_t *frame, size_t len, const uint8_t **tok,
                            size_t *tok_len) {
    const uint8_t *hello = NULL;
    size_t hello_len = 0;
    *tok = (const uint8_t *)"";
    *tok_len = 0;
    const uint8_t *raw = NULL;
    uint64_t n = 0;
    if (!scan_field(frame, len, 10, 2, &hello, &n)) return;
    hello_len = (size_t)n;
    if (scan_field(hello, hello_len, 3, 2, &raw, &n)) {
        *tok = raw;
        *tok_len = (size_t)n;
    }
}

/* ---- Requests ----------------------------------------------------------------------------------
 */

static void on_hello(net_server *srv, net_client *c, uint32_t rid, const Collide__V1__Hello *h,
                     const uint8_t *frame, size_t frame_len) {
    if (c->state == NET_CLIENT_ACTIVE) {
        send_error(srv, c, rid, ERR(BAD_REQUEST), false, "already said Hello");
        return;
    }
    if (h->protocol_version != NET_PROTOCOL_VERSION) {
        send_error(srv, c, rid, ERR(VERSION_MISMATCH), true,
                   "protocol version %u not supported; this server speaks %d", h->protocol_version,
                   NET_PROTOCOL_VERSION);
        return;
    }
    const uint8_t *raw = NULL;
    size_t token_len = 0;
    hello_token_raw(frame, frame_len, &raw, &token_len);
    const char *token = (const char *)raw;
    bool is_admin =
        srv->cfg.admin_token_len > 0 &&
        net_secret_equal(token, token_len, srv->cfg.admin_token, srv->cfg.admin_token_len);
    /* Both compares always run, so timing does not tell which secret was close. */
    bool is_client = srv->cfg.token_len == 0 ||
                     net_secret_equal(token, token_len, srv->cfg.token, srv->cfg.token_len);
    if (!is_client && !is_admin) {
        send_error(srv, c, rid, ERR(UNAUTHENTICATED), true, "bad token");
        return;
    }
    c->admin = is_admin;
    c->state = NET_CLIENT_ACTIVE;
    size_t n = 0;
    for (const char *p = h->name ? h->name : ""; *p && n < sizeof c->name - 1; p++) {
        unsigned char ch = (unsigned char)*p;
        c->name[n++] = (ch >= 0x21 && ch < 0x7f && ch != '"' && ch != '\\') ? (char)ch : '_';
    }
    c->name[n] = '\0';

    const world_config *wc = world_get_config(srv->world);
    Collide__V1__Vec2 wmin = pb_vec2(wc->bounds.min), wmax = pb_vec2(wc->bounds.max);
    Collide__V1__Welcome w = COLLIDE__V1__WELCOME__INIT;
    w.client_id = c->id;
    w.protocol_version = NET_PROTOCOL_VERSION;
    w.tick_rate_hz = (uint32_t)lrintf(srv->cfg.tick_rate_hz);
    w.tick = world_tick(srv->world);
    w.world_min = &wmin;
    w.world_max = &wmax;
    w.max_speed = wc->max_speed;
    w.max_bodies_per_client = srv->cfg.max_bodies_per_client;
    w.admin = is_admin;
    server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
    m.welcome = &w;
    append_msg(srv, c, &m);
    net_log(NET_LOG_INFO, "client_hello", c->id, c->addr, "name=%s admin=%d",
            c->name[0] ? c->name : "-", (int)is_admin);
}

/* Drops ids of bodies that are gone (despawned by an admin) so the count is of live bodies. */
static void prune_owned(net_server *srv, net_client *c) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->owned_count; i++) {
        if (world_body_alive(srv->world, c->owned[i])) c->owned[kept++] = c->owned[i];
    }
    c->owned_count = kept;
}

/* Converts a wire shape; GEOM_OK or the reason it is refused. */
static geom_shape_error shape_from_pb(const Collide__V1__Shape *s, geom_shape *out) {
    if (!s) return GEOM_ERR_UNKNOWN_KIND;
    switch (s->kind_case) {
    case COLLIDE__V1__SHAPE__KIND_BOX:
        return geom_make_box(vec2_of(s->box ? s->box->half_extents : NULL), out);
    case COLLIDE__V1__SHAPE__KIND_CIRCLE:
        return geom_make_circle(s->circle ? s->circle->radius : 0.0f, out);
    case COLLIDE__V1__SHAPE__KIND_POLYGON: {
        if (!s->polygon) return GEOM_ERR_TOO_FEW_VERTICES;
        size_t n = s->polygon->n_vertices;
        if (n > GEOM_MAX_POLYGON_VERTICES) return GEOM_ERR_TOO_MANY_VERTICES;
        vec2 verts[GEOM_MAX_POLYGON_VERTICES];
        for (size_t i = 0; i < n; i++)
            verts[i] = vec2_of(s->polygon->vertices[i]);
        return geom_make_polygon(verts, (int)n, out);
    }
    default:
        return GEOM_ERR_UNKNOWN_KIND;
    }
}

static void on_spawn(net_server *srv, net_client *c, uint32_t rid,
                     const Collide__V1__SpawnBody *s) {
    world_body_kind kind;
    if (s->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING) {
        kind = WORLD_BODY_MOVING;
    } else if (s->kind == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC) {
        if (!c->admin) {
            send_error(srv, c, rid, ERR(FORBIDDEN), false, "static bodies are for admins");
            return;
        }
        kind = WORLD_BODY_STATIC;
    } else {
        send_error(srv, c, rid, ERR(BAD_REQUEST), false,
                   "kind must be BODY_KIND_MOVING or BODY_KIND_STATIC");
        return;
    }
    if (kind == WORLD_BODY_MOVING && !c->admin) {
        prune_owned(srv, c);
        if (c->owned_count >= srv->cfg.max_bodies_per_client) {
            send_error(srv, c, rid, ERR(LIMIT_EXCEEDED), false, "at most %u bodies per client",
                       srv->cfg.max_bodies_per_client);
            return;
        }
    }
    geom_shape shape;
    geom_shape_error serr = shape_from_pb(s->shape, &shape);
    /* Bodies do not turn while they move, so the spawn angle is baked into the shape here; the
     * body is then reported in world orientation with angle 0 (docs/net-design.md). */
    if (serr == GEOM_OK && s->angle != 0.0f && isfinite(s->angle))
        serr = geom_shape_rotate(&shape, s->angle, &shape);
    if (serr != GEOM_OK) {
        send_error(srv, c, rid, ERR(INVALID_SHAPE), false, "invalid shape: %s",
                   s->shape ? geom_shape_error_str(serr) : "shape missing");
        return;
    }
    vec2 pos = vec2_of(s->position);
    if (!v2_is_finite(pos) || !isfinite(s->angle)) {
        send_error(srv, c, rid, ERR(BAD_REQUEST), false, "position and angle must be finite");
        return;
    }
    /* Make room in the owned list first, so a spawned body is never left untracked. */
    if (kind == WORLD_BODY_MOVING && c->owned_count == c->owned_cap) {
        if (c->admin) prune_owned(srv, c);
        if (c->owned_count == c->owned_cap) {
            uint32_t cap =
                c->owned_cap ? c->owned_cap * 2u : (c->admin ? 8u : srv->cfg.max_bodies_per_client);
            if (cap == 0) cap = 1;
            world_body_id *owned = realloc(c->owned, cap * sizeof *owned);
            if (!owned) {
                send_error(srv, c, rid, ERR(INTERNAL), false, "out of memory");
                return;
            }
            c->owned = owned;
            c->owned_cap = cap;
        }
    }
    world_body_id id = WORLD_NULL_BODY;
    geom_shape_error werr = GEOM_OK;
    world_status st = world_spawn(srv->world, kind, &shape, pos, c->id, &id, &werr);
    switch (st) {
    case WORLD_OK:
        break;
    case WORLD_ERR_INVALID_SHAPE:
        send_error(srv, c, rid, ERR(INVALID_SHAPE), false, "invalid shape: %s",
                   geom_shape_error_str(werr));
        return;
    case WORLD_ERR_OUT_OF_BOUNDS:
        send_error(srv, c, rid, ERR(OUT_OF_BOUNDS), false, "position (%g, %g) is outside the world",
                   (double)pos.x, (double)pos.y);
        return;
    case WORLD_ERR_FULL:
        send_error(srv, c, rid, ERR(LIMIT_EXCEEDED), false, "world is full");
        return;
    case WORLD_ERR_NOT_FINITE:
        send_error(srv, c, rid, ERR(BAD_REQUEST), false, "non-finite value");
        return;
    default:
        send_error(srv, c, rid, ERR(INTERNAL), false, "spawn failed: %s", world_status_str(st));
        return;
    }
    if (kind == WORLD_BODY_MOVING)
        c->owned[c->owned_count++] = id;
    else
        srv->view.statics_dirty = true;
    world_body_info info;
    vec2 at = world_body_get(srv->world, id, &info) ? info.position : pos;
    Collide__V1__Vec2 pv = pb_vec2(at);
    Collide__V1__Spawned sp = COLLIDE__V1__SPAWNED__INIT;
    sp.body_id = id;
    sp.position = &pv;
    server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED;
    m.spawned = &sp;
    append_msg(srv, c, &m);
}

/* NOT_FOUND / FORBIDDEN checks shared by move and despawn; true when c may act on the body. */
static bool check_body_access(net_server *srv, net_client *c, uint32_t rid, world_body_id id,
                              world_body_info *info) {
    if (id == WORLD_NULL_BODY || !world_body_get(srv->world, id, info)) {
        send_error(srv, c, rid, ERR(NOT_FOUND), false, "no body %u", id);
        return false;
    }
    if (!c->admin && (info->owner != c->id || info->kind != WORLD_BODY_MOVING)) {
        send_error(srv, c, rid, ERR(FORBIDDEN), false, "body %u is not yours", id);
        return false;
    }
    return true;
}

static void on_move(net_server *srv, net_client *c, uint32_t rid,
                    const Collide__V1__MoveIntent *mv) {
    world_body_info info;
    if (!check_body_access(srv, c, rid, mv->body_id, &info)) return;
    if (info.kind != WORLD_BODY_MOVING) {
        send_error(srv, c, rid, ERR(FORBIDDEN), false, "body %u is static", mv->body_id);
        return;
    }
    vec2 vel = vec2_of(mv->velocity);
    if (!v2_is_finite(vel)) {
        send_error(srv, c, rid, ERR(BAD_REQUEST), false, "velocity must be finite");
        return;
    }
    world_status st = world_set_intent(srv->world, mv->body_id, vel, mv->input_seq);
    if (st == WORLD_OK || st == WORLD_STALE_INPUT) return; /* older or equal input_seq: ignored */
    if (st == WORLD_ERR_NOT_FINITE)
        send_error(srv, c, rid, ERR(BAD_REQUEST), false, "velocity must be finite");
    else if (st == WORLD_ERR_NOT_FOUND)
        send_error(srv, c, rid, ERR(NOT_FOUND), false, "no body %u", mv->body_id);
    else
        send_error(srv, c, rid, ERR(FORBIDDEN), false, "cannot move body %u: %s", mv->body_id,
                   world_status_str(st));
}

static void on_despawn(net_server *srv, net_client *c, uint32_t rid,
                       const Collide__V1__DespawnBody *d) {
    world_body_info info;
    if (!check_body_access(srv, c, rid, d->body_id, &info)) return;
    if (world_despawn(srv->world, d->body_id) != WORLD_OK) {
        send_error(srv, c, rid, ERR(NOT_FOUND), false, "no body %u", d->body_id);
        return;
    }
    if (info.kind == WORLD_BODY_STATIC) srv->view.statics_dirty = true;
    for (uint32_t i = 0; i < c->owned_count; i++) {
        if (c->owned[i] == d->body_id) {
            c->owned[i] = c->owned[--c->owned_count];
            break;
        }
    }
}

static void on_ping(net_server *srv, net_client *c, uint32_t rid, const Collide__V1__Ping *p) {
    Collide__V1__Pong pong = COLLIDE__V1__PONG__INIT;
    pong.client_time_us = p->client_time_us;
    pong.server_time_us = srv->wall_us;
    pong.tick = world_tick(srv->world);
    server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_PONG;
    m.pong = &pong;
    append_msg(srv, c, &m);
}

static void on_set_view(net_server *srv, net_client *c, uint32_t rid,
                        const Collide__V1__SetView *v) {
    vec2 center = vec2_of(v->center), half = vec2_of(v->half_extents);
    if (!v2_is_finite(center) || !v2_is_finite(half) || half.x < 0.0f || half.y < 0.0f) {
        send_error(srv, c, rid, ERR(BAD_REQUEST), false,
                   "view must be finite with half extents >= 0");
        return;
    }
    if (half.x == 0.0f && half.y == 0.0f) {
        c->has_view = false; /* back to the default view */
        return;
    }
    c->has_view = true;
    c->view = aabb_make(v2_sub(center, half), v2_add(center, half));
}

static void dispatch(net_server *srv, net_client *c, const uint8_t *body, size_t len) {
    srv->metrics.frames_in_total++;
    /* The bucket is consulted before the unpack: a dropped frame costs a field scan for its
     * request_id, not a parse and its allocations, so a flood pays for nothing it is refused. */
    if (!net_rate_take(&c->rate, srv->cfg.rate_limit, srv->now_us)) {
        uint64_t rid = 0;
        if (!scan_field(body, len, 1, 0, NULL, &rid) || rid > UINT32_MAX) rid = 0;
        bool abusive = rate_note_drop(&c->rate, srv->cfg.rate_limit, srv->now_us);
        send_error(srv, c, (uint32_t)rid, ERR(RATE_LIMITED), abusive,
                   abusive ? "sustained flood: disconnected" : "over %g messages per second",
                   (double)srv->cfg.rate_limit);
        return;
    }
    client_msg *msg = collide__v1__client_message__unpack(srv->pb_alloc, len, body);
    uint32_t rid = msg ? msg->request_id : 0;
    if (!msg) {
        if (c->state == NET_CLIENT_AWAIT_HELLO)
            send_error(srv, c, 0, ERR(UNAUTHENTICATED), true, "first message must be Hello");
        else
            send_error(srv, c, 0, ERR(BAD_REQUEST), false, "frame is not a valid ClientMessage");
    } else if (c->state == NET_CLIENT_AWAIT_HELLO &&
               msg->msg_case != COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO) {
        send_error(srv, c, rid, ERR(UNAUTHENTICATED), true, "first message must be Hello");
    } else {
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
        case COLLIDE__V1__CLIENT_MESSAGE__MSG_DESPAWN:
            on_despawn(srv, c, rid, msg->despawn);
            break;
        case COLLIDE__V1__CLIENT_MESSAGE__MSG_PING:
            on_ping(srv, c, rid, msg->ping);
            break;
        case COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW:
            on_set_view(srv, c, rid, msg->set_view);
            break;
        default:
            send_error(srv, c, rid, ERR(BAD_REQUEST), false, "empty or unknown message");
            break;
        }
    }
    /* No pointer into msg survives this call. */
    if (msg) collide__v1__client_message__free_unpacked(msg, srv->pb_alloc);
}

static bool accepts_input(const net_client *c) {
    return !c->kill && (c->state == NET_CLIENT_AWAIT_HELLO || c->state == NET_CLIENT_ACTIVE);
}

/* Dispatches every whole frame at the start of buf; returns the bytes consumed. */
static size_t parse_frames(net_server *srv, net_client *c, const uint8_t *buf, size_t len) {
    size_t off = 0;
    while (off < len && accepts_input(c)) {
        size_t plen = 0, blen = 0;
        frame_status st = frame_peek(buf + off, len - off, srv->cfg.max_frame, &plen, &blen);
        if (st == FRAME_NEED_MORE) break;
        if (st == FRAME_TOO_LARGE) {
            send_error(srv, c, 0, ERR(FRAME_TOO_LARGE), true, "frame over %u bytes",
                       srv->cfg.max_frame);
            return len;
        }
        dispatch(srv, c, buf + off + plen, blen);
        off += plen + blen;
    }
    return accepts_input(c) ? off : len;
}

/* Bytes still missing from the partial frame in c->in: the rest of its body once the prefix is
 * whole, one byte while the prefix itself is incomplete (at most FRAME_MAX_PREFIX times), 0 when
 * c->in already holds a whole frame or a refused prefix that parse_frames must see. */
static size_t pending_need(const net_server *srv, const net_client *c) {
    size_t plen = 0, blen = 0;
    frame_status st = frame_peek(c->in.data, c->in.len, srv->cfg.max_frame, &plen, &blen);
    if (st != FRAME_NEED_MORE) return 0;
    return plen == 0 ? 1u : plen + blen - c->in.len;
}

void net_session_feed(net_server *srv, net_client *c, const uint8_t *data, size_t len) {
    if (!accepts_input(c) || len == 0) return;
    /* A partial frame is waiting: move over only the bytes that complete it, then parse the rest
     * straight from the read. c->in so never holds more than one frame (at most max_frame plus
     * its prefix), and the whole frames after it are not copied. */
    while (c->in.len > 0) {
        size_t need = pending_need(srv, c);
        if (need > 0) {
            size_t n = need < len ? need : len;
            if (!net_buf_append(&c->in, data, n)) {
                kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
                return;
            }
            data += n;
            len -= n;
            if (n < need) return; /* still partial; the read is used up */
            continue;
        }
        net_buf_consume(&c->in, parse_frames(srv, c, c->in.data, c->in.len));
        net_buf_trim(&c->in, 4096);
        if (!accepts_input(c)) return;
    }
    if (len == 0) return;
    /* The common case: whole frames straight from the read, no copy. */
    size_t used = parse_frames(srv, c, data, len);
    if (used < len && accepts_input(c) && !net_buf_append(&c->in, data + used, len - used))
        kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
}

/* ---- Snapshots ---------------------------------------------------------------------------------
 */

/* Appends v to b; the caller has reserved room (net_buf_reserve). */
static void put_varint(net_buf *b, uint64_t v) { b->len += varint_write(b->data + b->len, v); }

/* Collects the bodies in c's view into srv->query, in key order, each once; returns the count. */
static size_t collect_view(net_server *srv, net_client *c) {
    if (c->has_view) {
        net_view_mark(&srv->view, c->view, &srv->marks);
    } else {
        prune_owned(srv, c);
        float r = srv->cfg.view_radius;
        aabb boxes[NET_MAX_VIEW_BOXES];
        size_t nboxes = 0;
        aabb all = {{0, 0}, {0, 0}};
        for (uint32_t i = 0; i < c->owned_count; i++) {
            world_body_info info;
            if (!world_body_get(srv->world, c->owned[i], &info)) continue;
            aabb box = aabb_make(v2(info.position.x - r, info.position.y - r),
                                 v2(info.position.x + r, info.position.y + r));
            all = nboxes == 0 ? box : aabb_union(all, box);
            if (nboxes < NET_MAX_VIEW_BOXES) boxes[nboxes] = box;
            nboxes++;
        }
        if (nboxes > NET_MAX_VIEW_BOXES) {
            /* Many bodies (an admin): one enclosing box keeps the query count bounded. */
            boxes[0] = all;
            nboxes = 1;
        }
        for (size_t b = 0; b < nboxes; b++)
            net_view_mark(&srv->view, boxes[b], &srv->marks);
    }
    return net_view_take(&srv->view, &srv->marks, srv->query, srv->query_cap);
}

/* Packs the full BodyState (shape, kind, owner) of a body new to the client as a Snapshot.bodies
 * field into srv->snap, if it fits in budget bytes. Stack-built message: no allocation. New
 * bodies are the rare case (they enter a view once); changed ones take the arena's records. */
static bool encode_new_body(net_server *srv, world_body_id id, size_t budget,
                            uint64_t *changed_tick) {
    world_body_info info;
    geom_shape gs;
    if (!world_body_get(srv->world, id, &info) || !world_body_shape(srv->world, id, &gs))
        return false;
    Collide__V1__Vec2 pos = pb_vec2(info.position), vel = pb_vec2(info.velocity);
    Collide__V1__BodyState bs = COLLIDE__V1__BODY_STATE__INIT;
    bs.id = id;
    bs.position = &pos;
    bs.velocity = &vel;
    bs.last_input_seq = info.last_input_seq;
    Collide__V1__Shape shape = COLLIDE__V1__SHAPE__INIT;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    Collide__V1__Circle circle = COLLIDE__V1__CIRCLE__INIT;
    Collide__V1__Polygon poly = COLLIDE__V1__POLYGON__INIT;
    Collide__V1__Vec2 half, verts[GEOM_MAX_POLYGON_VERTICES];
    Collide__V1__Vec2 *vert_ptrs[GEOM_MAX_POLYGON_VERTICES];
    bs.kind = info.kind == WORLD_BODY_STATIC ? COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
                                             : COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    bs.owner = info.owner;
    bs.shape = &shape;
    switch (gs.kind) {
    case GEOM_SHAPE_BOX:
        half = pb_vec2(gs.u.half_extents);
        box.half_extents = &half;
        shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        shape.box = &box;
        break;
    case GEOM_SHAPE_CIRCLE:
        circle.radius = gs.u.radius;
        shape.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        shape.circle = &circle;
        break;
    case GEOM_SHAPE_POLYGON: {
        int n = gs.u.polygon.count;
        if (n < 0) n = 0;
        if (n > GEOM_MAX_POLYGON_VERTICES) n = GEOM_MAX_POLYGON_VERTICES;
        for (int i = 0; i < n; i++) {
            verts[i] = pb_vec2(gs.u.polygon.vertices[i]);
            vert_ptrs[i] = &verts[i];
        }
        poly.n_vertices = (size_t)n;
        poly.vertices = vert_ptrs;
        shape.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
        shape.polygon = &poly;
        break;
    }
    }
    size_t size = collide__v1__body_state__get_packed_size(&bs);
    size_t need = 1 + varint_size(size) + size;
    if (need > budget) return false;
    srv->snap.data[srv->snap.len++] = 0x12; /* field 2, length-delimited */
    put_varint(&srv->snap, size);
    srv->snap.len += collide__v1__body_state__pack(&bs, srv->snap.data + srv->snap.len);
    *changed_tick = info.changed_tick;
    return true;
}

void net_session_snapshot(net_server *srv, net_client *c) {
    if (c->state != NET_CLIENT_ACTIVE || c->kill) return;
    if (over_hard_limit(srv, c)) return;
    if (net_client_queued(c) > srv->cfg.max_queued_bytes / 4u) {
        /* Stale state is dropped, not queued: the next snapshot that goes out is computed against
         * what was actually sent, so it carries everything that changed meanwhile. */
        srv->metrics.slow_client_drops_total++;
        return;
    }
    uint64_t tick = world_tick(srv->world);
    const net_view_entry *view = srv->query;
    size_t nview = collect_view(srv, c);
    const net_known_entry *known = c->known.entries;
    size_t nknown = c->known.count;
    /* The rewritten set holds at most every old entry plus every body in view. */
    if (!net_known_reserve(&srv->known_next, (uint32_t)(nknown + nview))) {
        kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }

    /* 1. Removed: known ids not in view, in id order, while they fit half a frame. Those that do
     *    not fit stay known and go next time. Both lists are sorted: one merge. */
    size_t frame_budget = srv->cfg.max_frame - 16u; /* ServerMessage tag, length and slack */
    size_t removed_budget = frame_budget / 2u;
    size_t nremoved = 0, removed_bytes = 0;
    for (size_t i = 0, j = 0; j < nknown;) {
        uint64_t kk = net_known_key(&known[j]);
        if (i < nview && net_view_key(&view[i]) < kk) {
            i++;
        } else if (i < nview && net_view_key(&view[i]) == kk) {
            i++;
            j++;
        } else {
            size_t sz = varint_size(known[j].id);
            if (removed_bytes + sz > removed_budget || nremoved >= srv->scratch_cap) break;
            srv->removed[nremoved++] = known[j].id;
            removed_bytes += sz;
            j++;
        }
    }

    /* 2. Merge view and known set again: new bodies in full, changed ones as their arena record,
     *    while they fit; write the next known set as we go. Unchanged bodies cost the compare.
     *    Round robin: when the last snapshot ran out of room, this one serves the bodies from
     *    where it stopped (c->resume_key) first and those before it afterwards, from what room is
     *    left. Filling every frame from the lowest key instead starved the highest keys for as
     *    long as the low ones kept changing (seconds, under churn in a crowded view). */
    net_buf *s = &srv->snap;
    s->len = 0;
    s->data[s->len++] = 0x08; /* Snapshot.tick, varint */
    put_varint(s, tick);
    size_t removed_field = nremoved ? 1 + varint_size(removed_bytes) + removed_bytes : 0;
    size_t limit = frame_budget - removed_field; /* s->len may not pass this */
    net_known_entry *next = srv->known_next.entries;
    size_t nnext = 0, dropped = 0, ndeferred = 0;
    const uint8_t *arena = srv->view.arena;
    uint64_t resume = c->resume_key, stop_key = 0;
    bool stopped = false; /* something had no room: stop_key is the first such key */
    for (size_t i = 0, j = 0; i < nview || j < nknown;) {
        uint64_t vk = i < nview ? net_view_key(&view[i]) : UINT64_MAX;
        uint64_t kk = j < nknown ? net_known_key(&known[j]) : UINT64_MAX;
        if (vk < kk) {
            /* In view, not known: announce it. What does not fit is retried next tick. */
            uint64_t changed_tick = 0;
            if (vk < resume) {
                /* Its turn comes after the bodies from resume on: held in place, unsent. */
                srv->deferred[2 * ndeferred] = (uint32_t)i;
                srv->deferred[2 * ndeferred + 1] = (uint32_t)nnext;
                ndeferred++;
                next[nnext].id = view[i].id;
                next[nnext].moving = view[i].delta_off != NET_VIEW_NO_DELTA;
                next[nnext].sent_tick = NET_KNOWN_UNSENT;
                nnext++;
            } else if (s->len < limit &&
                       encode_new_body(srv, view[i].id, limit - s->len, &changed_tick)) {
                next[nnext].id = view[i].id;
                next[nnext].moving = view[i].delta_off != NET_VIEW_NO_DELTA;
                next[nnext].sent_tick = tick > changed_tick ? tick : changed_tick;
                nnext++;
            } else if (!stopped) {
                stopped = true;
                stop_key = vk;
            }
            i++;
        } else if (kk < vk) {
            /* Known, out of view: the first nremoved of these were listed in step 1. */
            if (dropped < nremoved)
                dropped++;
            else
                next[nnext++] = known[j];
            j++;
        } else {
            net_known_entry e = known[j];
            const net_view_entry *v = &view[i];
            if (v->changed_tick > e.sent_tick && v->delta_off != NET_VIEW_NO_DELTA) {
                const uint8_t *rec = arena + v->delta_off;
                size_t n = (size_t)rec[1] + 2u;
                if (vk < resume) {
                    srv->deferred[2 * ndeferred] = (uint32_t)i;
                    srv->deferred[2 * ndeferred + 1] = (uint32_t)nnext;
                    ndeferred++;
                } else if (s->len + n <= limit) {
                    memcpy(s->data + s->len, rec, NET_VIEW_RECORD_COPY);
                    s->len += n;
                    e.sent_tick = tick > v->changed_tick ? tick : v->changed_tick;
                } else if (!stopped) {
                    stopped = true;
                    stop_key = vk;
                }
            }
            next[nnext++] = e;
            i++;
            j++;
        }
    }
    /* The bodies before resume, in key order, from the room left. A new body with no room is
     * taken out of the next known set again (it was held there to keep the set in order). */
    size_t unsent_new = 0;
    for (size_t d = 0; d < ndeferred; d++) {
        const net_view_entry *v = &view[srv->deferred[2 * d]];
        net_known_entry *e = &next[srv->deferred[2 * d + 1]];
        bool sent = false;
        if (e->sent_tick == NET_KNOWN_UNSENT) {
            uint64_t changed_tick = 0;
            sent = s->len < limit && encode_new_body(srv, v->id, limit - s->len, &changed_tick);
            if (sent)
                e->sent_tick = tick > changed_tick ? tick : changed_tick;
            else
                unsent_new++;
        } else {
            const uint8_t *rec = arena + v->delta_off;
            size_t n = (size_t)rec[1] + 2u;
            sent = s->len + n <= limit;
            if (sent) {
                memcpy(s->data + s->len, rec, NET_VIEW_RECORD_COPY);
                s->len += n;
                e->sent_tick = tick > v->changed_tick ? tick : v->changed_tick;
            }
        }
        if (!sent && !stopped) {
            stopped = true;
            stop_key = net_view_key(v);
        }
    }
    if (unsent_new) {
        size_t kept = 0;
        for (size_t k = 0; k < nnext; k++)
            if (next[k].sent_tick != NET_KNOWN_UNSENT) next[kept++] = next[k];
        nnext = kept;
    }
    c->resume_key = stopped ? stop_key : 0;
    if (nremoved) {
        s->data[s->len++] = 0x1a; /* Snapshot.removed, packed varints */
        put_varint(s, removed_bytes);
        for (size_t i = 0; i < nremoved; i++)
            put_varint(s, srv->removed[i]);
    }
    if (!net_known_reserve(&c->known, (uint32_t)nnext)) {
        kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    if (nnext) memcpy(c->known.entries, next, nnext * sizeof *next);
    c->known.count = (uint32_t)nnext;

    /* ServerMessage { snapshot = 12 } around it, framed. */
    size_t msg_len = 1 + varint_size(s->len) + s->len;
    uint8_t prefix[FRAME_MAX_PREFIX];
    size_t plen = frame_write_prefix((uint32_t)msg_len, prefix);
    if (!net_buf_reserve(&c->out, plen + msg_len)) {
        kill_client(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    memcpy(c->out.data + c->out.len, prefix, plen);
    c->out.len += plen;
    c->out.data[c->out.len++] = 0x62; /* field 12, length-delimited */
    put_varint(&c->out, s->len);
    memcpy(c->out.data + c->out.len, s->data, s->len);
    c->out.len += s->len;
    srv->metrics.frames_out_total++;
    net_server_mark_dirty(srv, c);
}

void net_server_snapshots(net_server *srv) {
    if (!net_view_rebuild(&srv->view, srv->world)) {
        net_log(NET_LOG_ERROR, "out_of_memory", 0, NULL,
                "view index rebuild failed: snapshots skipped this tick");
        return;
    }
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->state == NET_CLIENT_ACTIVE && !c->kill) net_session_snapshot(srv, c);
    }
}

void net_server_tick(net_server *srv, unsigned steps) {
    for (unsigned i = 0; i < steps; i++)
        world_step(srv->world);
    srv->metrics.ticks_total += steps;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->kill) continue;
        if (c->state == NET_CLIENT_AWAIT_HELLO &&
            srv->now_us - c->connected_us >= (uint64_t)srv->cfg.hello_timeout_ms * 1000u) {
            net_log(NET_LOG_INFO, "hello_timeout", c->id, c->addr, "no Hello within %u ms",
                    srv->cfg.hello_timeout_ms);
            kill_client(srv, c, NET_DISC_HELLO_TIMEOUT);
        } else if (c->state == NET_CLIENT_CLOSING) {
            if (srv->now_us - c->closing_us >= NET_CLOSING_TIMEOUT_US ||
                net_client_queued(c) > srv->cfg.max_queued_bytes) {
                kill_client(srv, c, c->reason);
            }
        }
    }
    if (steps > 0) net_server_snapshots(srv);
}

void net_server_drain(net_server *srv) {
    srv->draining = true;
    Collide__V1__Goodbye bye = COLLIDE__V1__GOODBYE__INIT;
    bye.reason = "server shutting down";
    server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_GOODBYE;
    m.goodbye = &bye;
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->kill || c->state == NET_CLIENT_CLOSING) continue;
        append_msg(srv, c, &m);
        enter_closing(srv, c, NET_DISC_SHUTDOWN);
    }
}

/* net_events: the world's contact and sensor events of each step (PROTOCOL.md "Filters, sensors,
 * contact events") queued, already encoded as Snapshot fields, for the clients that get them
 * (the owners of the moving bodies, admins with Hello.all_events), and moved into each client's
 * next snapshot within a budget (net_snapshot.c): never dropped, bounded per client by
 * --max-pending-events. */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "net_server.h"
#include "net_log.h"
#include "varint.h"
#include "wire.h"

/* The server's event state (net_server.events), made by the first step with events. */
typedef struct net_events_state {
    net_buf scratch;           /* one event encoded, for each of its recipients */
    uint64_t *client_by_id;    /* (id << 32 | index) of the clients, sorted: event owners */
    uint32_t client_by_id_cap; /* entries allocated */
} net_events_state;

void net_events_free(net_server *srv) {
    net_events_state *ev = srv->events;
    if (!ev) return;
    net_buf_free(&ev->scratch);
    free(ev->client_by_id);
    free(ev);
    srv->events = NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The client of a welcomed id, through the sorted table; NULL when none. */
static net_client *client_of(net_server *srv, uint32_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t mid_id = (uint32_t)(srv->events->client_by_id[mid] >> 32);
        if (mid_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || (uint32_t)(srv->events->client_by_id[lo] >> 32) != id) return NULL;
    return srv->clients[(uint32_t)srv->events->client_by_id[lo]];
}

/* Queues the event in srv->events->scratch for c, once. */
static void queue_event(net_server *srv, net_client *c) {
    if (!c || c->kill || c->state != NET_CLIENT_ACTIVE) return;
    if (c->ev.event_count >= srv->cfg.max_pending_events) {
        net_log(NET_LOG_WARN, "events_backlog", c->id, c->addr,
                "%u events waiting for a snapshot, limit %u", c->ev.event_count,
                srv->cfg.max_pending_events);
        net_server_kill(srv, c, NET_DISC_EVENTS_BACKLOG);
        return;
    }
    if (!net_buf_append(&c->ev.events, srv->events->scratch.data, srv->events->scratch.len)) {
        net_server_kill(srv, c, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    c->ev.event_count++;
    srv->metrics.events_total++;
}

/* Encodes one Snapshot field (4 contacts or 5 sensor_events) of packed size n into the scratch. */
static bool scratch_field(net_server *srv, uint32_t field, size_t n) {
    net_buf *b = &srv->events->scratch;
    b->len = 0;
    if (!net_buf_reserve(b, 1 + 10 + n)) return false;
    b->len += wire_put_key(b->data, field, WIRE_LEN);
    b->len += varint_write(b->data + b->len, n);
    return true;
}

/* The recipients of an event: the owners of its moving bodies (0 for a static), then every
 * all_events admin that is not one of them. */
static void deliver(net_server *srv, uint32_t n, uint32_t owner_a, uint32_t owner_b) {
    net_client *a = owner_a ? client_of(srv, n, owner_a) : NULL;
    net_client *b = owner_b && owner_b != owner_a ? client_of(srv, n, owner_b) : NULL;
    queue_event(srv, a);
    queue_event(srv, b);
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->ev.all_events && c != a && c != b) queue_event(srv, c);
    }
}

/* One Events message being written: a run of queued fields of c, their keys renumbered. */
typedef struct events_run {
    uint64_t tick;       /* Events.tick */
    const uint8_t *data; /* the queued fields (Snapshot.contacts / sensor_events, encoded) */
    size_t len;          /* their bytes */
} events_run;

static size_t events_body_size(const events_run *r) { return 1 + varint_size(r->tick) + r->len; }

/* The whole ServerMessage: its two-byte key, the length, the body. */
static size_t events_size(const events_run *r) {
    size_t body = events_body_size(r);
    return 2 + varint_size(body) + body;
}

/* Writes ServerMessage{events: Events{tick, contacts, sensor_events}} (net_msg_write): the
 * queued fields are Snapshot's (4, 5) and become Events' (2, 3), whose one-byte keys differ only
 * in the field number. */
static void events_write_message(const void *ctx, uint8_t *out, size_t size) {
    const events_run *r = ctx;
    size_t body = events_body_size(r);
    /* ServerMessage field 20: a two-byte key, past wire_put_key's one */
    size_t n = varint_write(out, (uint64_t)WIRE_SERVER_EVENTS << 3 | WIRE_LEN);
    n += varint_write(out + n, body);
    n += wire_put_key(out + n, WIRE_EVENTS_TICK, WIRE_VARINT);
    n += varint_write(out + n, r->tick);
    const uint8_t *end = r->data + r->len;
    for (const uint8_t *p = r->data; p < end;) {
        uint64_t len = 0;
        const uint8_t *q = p + 1;
        bool ok = varint_read(&q, end, &len);
        COLLIDE_ASSERT(ok);
        (void)ok;
        size_t rec = (size_t)(q - p) + (size_t)len;
        memcpy(out + n, p, rec);
        out[n] = p[0] == WIRE_KEY(WIRE_SNAPSHOT_CONTACTS, WIRE_LEN)
                     ? WIRE_KEY(WIRE_EVENTS_CONTACTS, WIRE_LEN)
                     : WIRE_KEY(WIRE_EVENTS_SENSOR_EVENTS, WIRE_LEN);
        n += rec;
        p += rec;
    }
    COLLIDE_ASSERT(n == size);
    (void)size;
}

/* A datagram client's events of this step, at once, as one Events message (PROTOCOL.md "Events
 * stay reliable": its snapshots may be lost, so they carry none). Split only where one message
 * would pass --max-frame, at an event's boundary. Never dropped: a client over its output limit
 * is cut, as one over --max-pending-events is at queue_event. */
static void flush_client_events(net_server *srv, net_client *c) {
    net_buf *q = &c->ev.events;
    size_t budget = srv->cfg.max_frame - 16u; /* the ServerMessage's key, length and Events.tick */
    events_run r = {world_tick(srv->world), q->data, 0};
    const uint8_t *end = q->data + q->len;
    for (const uint8_t *p = q->data; p < end;) {
        uint64_t len = 0;
        const uint8_t *v = p + 1;
        if (!varint_read(&v, end, &len)) break;
        size_t rec = (size_t)(v - p) + (size_t)len;
        if (r.len && r.len + rec > budget) {
            if (!net_server_append_with(srv, c, events_size(&r), events_write_message, &r)) break;
            r.data = p;
            r.len = 0;
        }
        r.len += rec;
        p += rec;
    }
    if (r.len && !c->kill)
        net_server_append_with(srv, c, events_size(&r), events_write_message, &r);
    q->len = 0;
    c->ev.event_count = 0;
}

static void flush_datagram_events(net_server *srv) {
    for (uint32_t i = 0; i < srv->client_count; i++) {
        net_client *c = srv->clients[i];
        if (c->ev.event_count && c->transport->datagram && !c->kill) flush_client_events(srv, c);
    }
}

void net_events_collect(net_server *srv) {
    const world_contact_event *ce;
    const world_sensor_event *se;
    size_t nc = world_contact_events(srv->world, &ce), ns = world_sensor_events(srv->world, &se);
    if (nc + ns == 0) return;
    if (!srv->events && !(srv->events = calloc(1, sizeof *srv->events))) {
        net_log(NET_LOG_ERROR, "out_of_memory", 0, NULL, "event delivery table");
        return;
    }
    if (srv->events->client_by_id_cap < srv->client_count) {
        uint64_t *t = realloc(srv->events->client_by_id, srv->client_count * sizeof *t);
        if (!t) {
            net_log(NET_LOG_ERROR, "out_of_memory", 0, NULL, "event delivery table");
            return;
        }
        srv->events->client_by_id = t;
        srv->events->client_by_id_cap = srv->client_count;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < srv->client_count; i++)
        if (srv->clients[i]->state == NET_CLIENT_ACTIVE)
            srv->events->client_by_id[n++] = (uint64_t)srv->clients[i]->id << 32 | i;
    qsort(srv->events->client_by_id, n, sizeof *srv->events->client_by_id, cmp_u64);
    for (size_t k = 0; k < nc; k++) {
        Collide__V1__ContactEvent e = COLLIDE__V1__CONTACT_EVENT__INIT;
        Collide__V1__Vec2 normal = net_pb_vec2(ce[k].normal);
        e.a = ce[k].a;
        e.b = ce[k].b;
        e.begin = ce[k].begin;
        e.normal = &normal;
        e.approach_speed = ce[k].approach_speed;
        size_t sz = collide__v1__contact_event__get_packed_size(&e);
        if (!scratch_field(srv, WIRE_SNAPSHOT_CONTACTS, sz)) continue;
        srv->events->scratch.len += collide__v1__contact_event__pack(
            &e, srv->events->scratch.data + srv->events->scratch.len);
        deliver(srv, n, ce[k].owner_a, ce[k].owner_b);
    }
    for (size_t k = 0; k < ns; k++) {
        Collide__V1__SensorEvent e = COLLIDE__V1__SENSOR_EVENT__INIT;
        e.sensor = se[k].sensor;
        e.visitor = se[k].visitor;
        e.begin = se[k].begin;
        size_t sz = collide__v1__sensor_event__get_packed_size(&e);
        if (!scratch_field(srv, WIRE_SNAPSHOT_SENSOR_EVENTS, sz)) continue;
        srv->events->scratch.len += collide__v1__sensor_event__pack(
            &e, srv->events->scratch.data + srv->events->scratch.len);
        deliver(srv, n, se[k].owner_sensor, se[k].owner_visitor);
    }
    flush_datagram_events(srv);
}

/* Moves the client's waiting events into the snapshot body s, whole fields, oldest first, while
 * they fit in budget bytes; the rest wait for the next snapshot. */
void net_events_take(net_client *c, net_buf *s, size_t budget) {
    size_t used = 0, taken = 0;
    const uint8_t *p = c->ev.events.data;
    const uint8_t *end = p + c->ev.events.len;
    while (used < c->ev.events.len) {
        uint64_t len = 0;
        const uint8_t *q = p + used + 1; /* past the one-byte key */
        if (!varint_read(&q, end, &len)) break;
        size_t rec = (size_t)(q - (p + used)) + (size_t)len;
        if (used + rec > budget) break;
        used += rec;
        taken++;
    }
    if (!used) return;
    memcpy(s->data + s->len, p, used);
    s->len += used;
    net_buf_consume(&c->ev.events, used);
    c->ev.event_count -= (uint32_t)taken;
}

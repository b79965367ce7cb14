/* net_queries: RayCast, OverlapQuery and ShapeCast as requests of a session (PROTOCOL.md "Queries,
 * history and lag compensation"): the filter and the shape from the wire, the world's answer
 * (world_query.c, world_history.c) as a QueryResult. Dispatched by net_session.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "net_server.h"

/* ---- Queries (PROTOCOL.md "Queries, history and lag compensation") --------------------------- */

/* The hits of one answer: the world's, then as protobuf structs pointing into each other. Made by
 * the first query, at --max-query-results entries, and kept: a query allocates nothing. */
typedef struct net_query_buf {
    size_t cap;              /* entries in each array */
    world_hit *hits;         /* the world's answer */
    Collide__V1__Hit *pb;    /* the same as Hit messages */
    Collide__V1__Hit **ptrs; /* QueryResult.hits */
    Collide__V1__Vec2 *vecs; /* two per hit: point, normal */
} net_query_buf;

void net_queries_free(net_server *srv) {
    net_query_buf *q = srv->query;
    if (!q) return;
    free(q->hits);
    free(q->pb);
    free(q->ptrs);
    free(q->vecs);
    free(q);
    srv->query = NULL;
}

static net_query_buf *query_buf(net_server *srv) {
    if (srv->query) return srv->query;
    size_t cap = srv->cfg.max_query_results ? srv->cfg.max_query_results : 1;
    net_query_buf *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    srv->query = q;
    q->cap = cap;
    q->hits = malloc(cap * sizeof *q->hits);
    q->pb = malloc(cap * sizeof *q->pb);
    q->ptrs = malloc(cap * sizeof *q->ptrs);
    q->vecs = malloc(2 * cap * sizeof *q->vecs);
    if (!q->hits || !q->pb || !q->ptrs || !q->vecs) {
        net_queries_free(srv);
        return NULL;
    }
    return q;
}

/* The most Hit messages a QueryResult may carry and still fit --max-frame: a Hit is at most 50
 * bytes on the wire (id 6, two Vec2 of 12 + 2, two floats of 5, its own key and length 2). */
#define NET_HIT_MAX_WIRE 50u
#define NET_QUERY_RESULT_OVERHEAD 32u

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* QueryFilter to the world's filter, and the cap on hits it asks for; false after a BAD_REQUEST. */
static bool filter_from_pb(net_server *srv, net_client *c, uint32_t rid,
                           const Collide__V1__QueryFilter *f, world_query_filter *out,
                           size_t *cap) {
    memset(out, 0, sizeof *out);
    *cap = srv->cfg.max_query_results;
    size_t fit = srv->cfg.max_frame > NET_QUERY_RESULT_OVERHEAD
                     ? (srv->cfg.max_frame - NET_QUERY_RESULT_OVERHEAD) / NET_HIT_MAX_WIRE
                     : 1;
    if (fit < *cap) *cap = fit ? fit : 1;
    if (!f) return true;
    for (size_t i = 0; i < f->n_kinds; i++) {
        if (f->kinds[i] == COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC)
            out->kinds |= 1u << WORLD_BODY_STATIC;
        else if (f->kinds[i] == COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING)
            out->kinds |= 1u << WORLD_BODY_MOVING;
        else {
            net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false,
                                  "filter kinds must be BODY_KIND_STATIC or BODY_KIND_MOVING");
            return false;
        }
    }
    out->category_mask = f->category_mask;
    out->include_sensors = f->include_sensors;
    /* The ids are the arena's copy of this frame: sorted in place for the world's binary search. */
    if (f->n_exclude_ids > 1)
        qsort(f->exclude_ids, f->n_exclude_ids, sizeof *f->exclude_ids, cmp_u32);
    out->exclude = f->exclude_ids;
    out->exclude_count = f->n_exclude_ids;
    if (f->max_results && f->max_results < *cap) *cap = f->max_results;
    return true;
}

/* The query shape, turned by angle; false after the Error (INVALID_SHAPE or BAD_REQUEST). */
static bool query_shape(net_server *srv, net_client *c, uint32_t rid, const Collide__V1__Shape *s,
                        float angle, geom_shape *out) {
    if (!isfinite(angle)) {
        net_server_send_error(srv, c, rid, NET_ERR(BAD_REQUEST), false, "angle must be finite");
        return false;
    }
    geom_shape_error err = net_request_shape(s, out);
    if (err == GEOM_OK && angle != 0.0f) err = geom_shape_rotate(out, angle, out);
    if (err != GEOM_OK) {
        net_server_send_error(srv, c, rid, NET_ERR(INVALID_SHAPE), false, "invalid shape: %s",
                              s ? geom_shape_error_str(err) : "shape missing");
        return false;
    }
    return true;
}

/* The world's answer as a QueryResult, or its refusal as a non-fatal Error. */
static void send_query_result(net_server *srv, net_client *c, uint32_t rid, world_status st,
                              const net_query_buf *q, const world_query_result *res) {
    if (st != WORLD_OK) {
        char text[NET_ERROR_TEXT];
        if (st == WORLD_ERR_HISTORY_EXPIRED)
            snprintf(text, sizeof text, "at_tick older than the history (from tick %llu on)",
                     (unsigned long long)world_history_oldest(srv->world));
        else if (st == WORLD_ERR_FUTURE_TICK)
            snprintf(text, sizeof text, "at_tick after the newest tick %llu",
                     (unsigned long long)world_tick(srv->world));
        else if (st == WORLD_ERR_NOT_FINITE)
            snprintf(text, sizeof text, "positions and translations must be finite");
        else
            snprintf(text, sizeof text, "query refused: %s", world_status_str(st));
        net_request_world_error(srv, c, rid, st, text);
        return;
    }
    for (size_t i = 0; i < res->count; i++) {
        const world_hit *h = &q->hits[i];
        Collide__V1__Hit *pb = &q->pb[i];
        collide__v1__hit__init(pb);
        q->vecs[2 * i] = net_pb_vec2(h->point);
        q->vecs[2 * i + 1] = net_pb_vec2(h->normal);
        pb->body_id = h->id;
        pb->point = &q->vecs[2 * i];
        pb->normal = &q->vecs[2 * i + 1];
        pb->fraction = h->fraction;
        pb->depth = h->depth;
        q->ptrs[i] = pb;
    }
    Collide__V1__QueryResult qr = COLLIDE__V1__QUERY_RESULT__INIT;
    qr.tick = res->tick;
    qr.n_hits = res->count;
    qr.hits = q->ptrs;
    qr.truncated = res->truncated;
    net_server_msg m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_QUERY_RESULT;
    m.query_result = &qr;
    net_server_append(srv, c, &m);
}

/* A query is charged by the work it did (issue 32; docs/protocol.md "Rate limits"): ceil(work /
 * --query-work-per-message) messages, at least the one its frame paid (charge_frame), the rest
 * taken now. After the answer, not before: the work is known only once the walk is done, and
 * guessing it first would cost a second walk. The bucket goes into debt instead (net_rate_charge),
 * so a client sending whole-arena overlaps answers for each with silence until it has paid. */
static void charge_query(net_server *srv, net_client *c, world_status st,
                         const world_query_result *res) {
    uint64_t per = srv->cfg.query_work_per_message;
    double rate = net_request_message_rate(srv, c);
    if (st != WORLD_OK || per == 0 || rate <= 0.0) return;
    uint64_t msgs = res->work / per + (res->work % per != 0);
    if (msgs > 1) net_rate_charge(&c->rate, rate, (double)(msgs - 1));
}

/* The buffer, the filter and the cap every query needs; false after the Error. */
static bool query_setup(net_server *srv, net_client *c, uint32_t rid,
                        const Collide__V1__QueryFilter *f, world_query_filter *filter, size_t *cap,
                        net_query_buf **q) {
    *q = query_buf(srv);
    if (!*q) {
        net_server_send_error(srv, c, rid, NET_ERR(INTERNAL), false, "out of memory");
        return false;
    }
    if (!filter_from_pb(srv, c, rid, f, filter, cap)) return false;
    if (*cap > (*q)->cap) *cap = (*q)->cap;
    return true;
}

void net_session_ray_cast(net_server *srv, net_client *c, uint32_t rid,
                          const Collide__V1__RayCast *r) {
    world_query_filter filter;
    size_t cap;
    net_query_buf *q;
    if (!query_setup(srv, c, rid, r->filter, &filter, &cap, &q)) return;
    world_query_result res;
    world_status st =
        world_query_ray(srv->world, r->at_tick, net_vec2_of(r->origin), net_vec2_of(r->translation),
                        &filter, r->all, q->hits, cap, &res);
    charge_query(srv, c, st, &res);
    send_query_result(srv, c, rid, st, q, &res);
}

void net_session_overlap(net_server *srv, net_client *c, uint32_t rid,
                         const Collide__V1__OverlapQuery *o) {
    world_query_filter filter;
    size_t cap;
    net_query_buf *q;
    geom_shape shape;
    if (!query_shape(srv, c, rid, o->shape, o->angle, &shape)) return;
    if (!query_setup(srv, c, rid, o->filter, &filter, &cap, &q)) return;
    world_query_result res;
    world_status st = world_query_overlap(srv->world, o->at_tick, &shape, net_vec2_of(o->position),
                                          &filter, q->hits, cap, &res);
    charge_query(srv, c, st, &res);
    send_query_result(srv, c, rid, st, q, &res);
}

void net_session_shape_cast(net_server *srv, net_client *c, uint32_t rid,
                            const Collide__V1__ShapeCast *sc) {
    world_query_filter filter;
    size_t cap;
    net_query_buf *q;
    geom_shape shape;
    if (!query_shape(srv, c, rid, sc->shape, sc->angle, &shape)) return;
    if (!query_setup(srv, c, rid, sc->filter, &filter, &cap, &q)) return;
    world_query_result res;
    world_status st =
        world_query_shape_cast(srv->world, sc->at_tick, &shape, net_vec2_of(sc->position),
                               net_vec2_of(sc->translation), &filter, sc->all, q->hits, cap, &res);
    charge_query(srv, c, st, &res);
    send_query_result(srv, c, rid, st, q, &res);
}

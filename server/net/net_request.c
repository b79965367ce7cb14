/* net_request: what the request handlers of a session share (net_session.c, net_queries.c): the
 * one table of world statuses to wire error codes, and a wire shape made a geom shape. Below
 * every handler file, above the registry (it sends through net_server_send_error). */
#include "net_internal.h"
#include "net_server.h"

/* The one mapping of world statuses to wire error codes. A status the world does not document
 * for the call is INTERNAL (see net_request_world_error). */
static Collide__V1__ErrorCode world_error_code(world_status st) {
    switch (st) {
    case WORLD_ERR_INVALID_SHAPE:
        return NET_ERR(INVALID_SHAPE);
    case WORLD_ERR_OUT_OF_BOUNDS:
        return NET_ERR(OUT_OF_BOUNDS);
    case WORLD_ERR_FULL:
        return NET_ERR(LIMIT_EXCEEDED);
    case WORLD_ERR_NOT_FOUND:
        return NET_ERR(NOT_FOUND);
    case WORLD_ERR_NOT_FINITE:
        return NET_ERR(BAD_REQUEST);
    case WORLD_ERR_NOT_MOVING:
    case WORLD_ERR_NOT_OWNER:
        return NET_ERR(FORBIDDEN);
    case WORLD_ERR_HISTORY_EXPIRED:
        return NET_ERR(HISTORY_EXPIRED);
    case WORLD_ERR_FUTURE_TICK:
        return NET_ERR(BAD_REQUEST);
    case WORLD_OK:
    case WORLD_STALE_INPUT:
    case WORLD_ERR_NO_MEMORY:
        break;
    }
    return NET_ERR(INTERNAL);
}

/* The message rate c is held to: --rate-limit for a player, --admin-rate-limit for an admin,
 * where 0 is none (PROTOCOL.md "Backends and batches": a backend driving thousands of NPCs must
 * not be throttled). Read by the frame's charge (net_session.c) and a query's (net_queries.c). */
double net_request_message_rate(const net_server *srv, const net_client *c) {
    return c->admin ? (double)srv->cfg.admin_rate_limit : (double)srv->cfg.rate_limit;
}

/* A refused world call as a non-fatal Error: its code from the table, the handler's text. */
void net_request_world_error(net_server *srv, net_client *c, uint32_t rid, world_status st,
                             const char *text) {
    COLLIDE_ASSERT(st != WORLD_OK && st != WORLD_STALE_INPUT);
    net_server_send_error(srv, c, rid, world_error_code(st), false, "%s", text);
}

/* Converts a wire shape; GEOM_OK or the reason it is refused. */
geom_shape_error net_request_shape(const Collide__V1__Shape *s, geom_shape *out) {
    if (!s) return GEOM_ERR_UNKNOWN_KIND;
    switch (s->kind_case) {
    case COLLIDE__V1__SHAPE__KIND_BOX:
        return geom_make_box(net_vec2_of(s->box ? s->box->half_extents : NULL), out);
    case COLLIDE__V1__SHAPE__KIND_CIRCLE:
        return geom_make_circle(s->circle ? s->circle->radius : 0.0f, out);
    case COLLIDE__V1__SHAPE__KIND_POLYGON: {
        if (!s->polygon) return GEOM_ERR_TOO_FEW_VERTICES;
        size_t n = s->polygon->n_vertices;
        if (n > GEOM_MAX_POLYGON_VERTICES) return GEOM_ERR_TOO_MANY_VERTICES;
        vec2 verts[GEOM_MAX_POLYGON_VERTICES];
        for (size_t i = 0; i < n; i++)
            verts[i] = net_vec2_of(s->polygon->vertices[i]);
        return geom_make_polygon(verts, (int)n, out);
    }
    default:
        return GEOM_ERR_UNKNOWN_KIND;
    }
}

/* net_http: the request side of the tiny HTTP/1.x servers of collided: the ops port (/metrics,
 * /healthz, /rooms) and the WebSocket upgrade (net_ws.c). Both read requests with Debian's
 * http_parser (libhttp-parser-dev: Node's parser before llhttp, which Debian 12 does not ship);
 * nothing here parses by hand.
 *
 * Bounded: a request whose headers have not ended within `max` bytes is TOO_LARGE (431); the
 * parser runs over the bytes received so far each time more arrive (a request is a few hundred
 * bytes and nearly always arrives in one read), never allocates and never reads past len. Each
 * connection answers one request: what follows it is not looked at here. Headers may be reported
 * for a request that then turns out incomplete: a caller collects them afresh at each call. */
#ifndef COLLIDE_NET_HTTP_H
#define COLLIDE_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define NET_HTTP_MAX_REQUEST 4096 /* ops port: request line plus headers */
#define NET_HTTP_MAX_PATH 256     /* longest path we bother to look at */

typedef enum net_http_status {
    NET_HTTP_NEED_MORE = 0, /* no end of headers yet and still under the bound */
    NET_HTTP_GET = 1,       /* a GET (or HEAD) request; path written */
    NET_HTTP_BAD = 2,       /* malformed: 400 */
    NET_HTTP_METHOD = 3,    /* not GET/HEAD: 405 */
    NET_HTTP_TOO_LARGE = 4, /* no end of headers within the bound: 431 */
} net_http_status;

/* One request's head, as net_http_read saw it. Pointers are into the caller's buffer. */
typedef struct net_http_request {
    const char *path;  /* the target's path, without query string or fragment */
    size_t path_len;   /* bytes at path */
    bool get, head;    /* the method was GET, HEAD */
    bool http11;       /* HTTP/1.1 or later */
    bool upgrade;      /* Connection: upgrade with an Upgrade header (header_end exact then) */
    size_t header_end; /* bytes of the buffer the request line and headers took */
} net_http_request;

/* Called once per header line (name and value as sent, value trimmed by the parser). */
typedef void (*net_http_header_fn)(void *ctx, const char *name, size_t name_len, const char *value,
                                   size_t value_len);

/* Reads the request line and headers at buf[0..len), each header given to on_header (may be
 * NULL). NET_HTTP_GET here means "whole and well formed", whatever the method (see req->get). */
net_http_status net_http_read(const char *buf, size_t len, size_t max, net_http_request *req,
                              net_http_header_fn on_header, void *ctx);

/* The ops port's request: on NET_HTTP_GET, path holds the path without the query string, and
 * *head is set for HEAD. Bounded by NET_HTTP_MAX_REQUEST. */
net_http_status net_http_parse(const char *buf, size_t len, char *path, size_t path_size,
                               int *head);

#endif

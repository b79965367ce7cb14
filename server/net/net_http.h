/* net_http: the request side of the tiny HTTP/1.x server behind /metrics, /healthz and /rooms.
 *
 * Why hand-written rather than a library (llhttp, picohttpparser are not in Debian 12 as -dev
 * packages we can rely on, and libmicrohttpd brings its own threads and sockets): we serve three
 * fixed GET paths to Prometheus and health probes. All we need is the request line; headers are
 * skipped. The parser is bounded (NET_HTTP_MAX_REQUEST bytes, then 431), never allocates, never
 * reads past len, and each connection answers one request and closes. */
#ifndef COLLIDE_NET_HTTP_H
#define COLLIDE_NET_HTTP_H

#include <stddef.h>

#define NET_HTTP_MAX_REQUEST 4096 /* request line plus headers */
#define NET_HTTP_MAX_PATH 256     /* longest path we bother to look at */

typedef enum net_http_status {
    NET_HTTP_NEED_MORE = 0, /* no blank line yet and still under the bound */
    NET_HTTP_GET = 1,       /* a GET (or HEAD) request; path written */
    NET_HTTP_BAD = 2,       /* malformed: 400 */
    NET_HTTP_METHOD = 3,    /* not GET/HEAD: 405 */
    NET_HTTP_TOO_LARGE = 4, /* no end of headers within the bound: 431 */
} net_http_status;

/* Parses buf[0..len). On NET_HTTP_GET, path holds the path without the query string, and *head
 * is set for HEAD. */
net_http_status net_http_parse(const char *buf, size_t len, char *path, size_t path_size,
                               int *head);

#endif

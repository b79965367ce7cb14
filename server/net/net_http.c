#include "net_http.h"

#include <http_parser.h>
#include <string.h>

typedef struct http_read_ctx {
    net_http_request *req;
    const char *url;   /* the request target */
    size_t url_len;    /* bytes at url */
    const char *field; /* the header name being read */
    size_t field_len;  /* bytes at field */
    bool in_value;     /* the last piece was a value (the next field starts a header) */
    const char *value; /* its value */
    size_t value_len;  /* bytes at value */
    bool headers_done; /* on_headers_complete was called */
    net_http_header_fn on_header;
    void *ctx;
} http_read_ctx;

/* The parser may hand an element over in pieces (when it spans two http_parser_execute calls;
 * here there is one call over a contiguous buffer, so pieces are adjacent): they are joined. */
static void join(const char **at, size_t *len, const char *piece, size_t n) {
    if (*at == NULL) *at = piece;
    *len = (size_t)(piece + n - *at);
}

static void emit_header(http_read_ctx *x) {
    if (x->field && x->on_header)
        x->on_header(x->ctx, x->field, x->field_len, x->value ? x->value : "", x->value_len);
    x->field = x->value = NULL;
    x->field_len = x->value_len = 0;
}

static int on_url(http_parser *p, const char *at, size_t n) {
    http_read_ctx *x = p->data;
    join(&x->url, &x->url_len, at, n);
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n) {
    http_read_ctx *x = p->data;
    if (x->in_value) {
        emit_header(x);
        x->in_value = false;
    }
    join(&x->field, &x->field_len, at, n);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n) {
    http_read_ctx *x = p->data;
    x->in_value = true;
    join(&x->value, &x->value_len, at, n);
    return 0;
}

static int on_headers_complete(http_parser *p) {
    http_read_ctx *x = p->data;
    emit_header(x);
    x->headers_done = true;
    return 0;
}

/* One request per connection: stop at its end, before any pipelined request. (An upgrade stops
 * by itself, right after the headers: what follows is another protocol.) */
static int on_message_complete(http_parser *p) {
    http_parser_pause(p, 1);
    return 0;
}

net_http_status net_http_read(const char *buf, size_t len, size_t max, net_http_request *req,
                              net_http_header_fn on_header, void *ctx) {
    memset(req, 0, sizeof *req);
    if (len > max) len = max;
    http_read_ctx x = {.req = req, .on_header = on_header, .ctx = ctx};
    http_parser_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.on_url = on_url;
    settings.on_header_field = on_header_field;
    settings.on_header_value = on_header_value;
    settings.on_headers_complete = on_headers_complete;
    settings.on_message_complete = on_message_complete;
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    p.data = &x;
    size_t used = http_parser_execute(&p, &settings, buf, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&p);
    if (e != HPE_OK && e != HPE_PAUSED) return NET_HTTP_BAD;
    if (!x.headers_done) return len >= max ? NET_HTTP_TOO_LARGE : NET_HTTP_NEED_MORE;
    req->header_end = used; /* exact for an upgrade, which http_parser leaves right there */
    req->upgrade = p.upgrade;
    req->get = p.method == HTTP_GET;
    req->head = p.method == HTTP_HEAD;
    req->http11 = p.http_major > 1 || (p.http_major == 1 && p.http_minor >= 1);
    if (x.url_len == 0 || x.url[0] != '/') return NET_HTTP_BAD; /* origin-form only */
    size_t path_len = 0;
    while (path_len < x.url_len && x.url[path_len] != '?' && x.url[path_len] != '#')
        path_len++;
    req->path = x.url;
    req->path_len = path_len;
    return NET_HTTP_GET;
}

net_http_status net_http_parse(const char *buf, size_t len, char *path, size_t path_size,
                               int *head) {
    net_http_request req;
    net_http_status st = net_http_read(buf, len, NET_HTTP_MAX_REQUEST, &req, NULL, NULL);
    if (st != NET_HTTP_GET) return st;
    if (!req.get && !req.head) return NET_HTTP_METHOD;
    size_t n = req.path_len < path_size ? req.path_len : path_size - 1; /* a long path matches
                                                                          nothing we serve */
    memcpy(path, req.path, n);
    path[n] = '\0';
    *head = req.head;
    return NET_HTTP_GET;
}

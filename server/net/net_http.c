#include "net_http.h"

#include <string.h>

static const char *find_end(const char *buf, size_t len) {
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] == '\n' && buf[i + 1] == '\n') return buf + i + 2;
        if (i + 3 < len && buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' &&
            buf[i + 3] == '\n')
            return buf + i + 4;
    }
    return NULL;
}

net_http_status net_http_parse(const char *buf, size_t len, char *path, size_t path_size,
                               int *head) {
    if (len > NET_HTTP_MAX_REQUEST) len = NET_HTTP_MAX_REQUEST;
    if (!find_end(buf, len))
        return len >= NET_HTTP_MAX_REQUEST ? NET_HTTP_TOO_LARGE : NET_HTTP_NEED_MORE;
    const char *line_end = memchr(buf, '\n', len);
    size_t line_len = (size_t)(line_end - buf);
    if (line_len > 0 && buf[line_len - 1] == '\r') line_len--;
    const char *sp1 = memchr(buf, ' ', line_len);
    if (!sp1) return NET_HTTP_BAD;
    size_t method_len = (size_t)(sp1 - buf);
    const char *target = sp1 + 1;
    size_t rest = line_len - method_len - 1;
    const char *sp2 = memchr(target, ' ', rest);
    if (!sp2) return NET_HTTP_BAD;
    size_t target_len = (size_t)(sp2 - target);
    size_t version_len = rest - target_len - 1;
    if (version_len < 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) return NET_HTTP_BAD;
    if (target_len == 0 || target[0] != '/') return NET_HTTP_BAD;
    int is_head = method_len == 4 && memcmp(buf, "HEAD", 4) == 0;
    int is_get = method_len == 3 && memcmp(buf, "GET", 3) == 0;
    if (!is_get && !is_head) return NET_HTTP_METHOD;
    const char *q = memchr(target, '?', target_len);
    if (q) target_len = (size_t)(q - target);
    if (target_len >= path_size)
        target_len = path_size - 1; /* a long path matches nothing we serve */
    memcpy(path, target, target_len);
    path[target_len] = '\0';
    *head = is_head;
    return NET_HTTP_GET;
}

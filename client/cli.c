#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <uv.h>

#include "conn.h"
#include "frame.h"

void cc_common_defaults(cc_common_opts *o) {
    o->host = "127.0.0.1";
    o->port = 7777;
    o->token = "";
    o->max_frame = FRAME_DEFAULT_MAX_SIZE;
    o->ws = false;
    o->port_set = false;
    o->udp = false;
    o->udp_baselines = 32;
}

int cc_common_option(const char *cmd, int code, const char *arg, cc_common_opts *o) {
    uint32_t v;
    switch (code) {
    case CC_OPT_HOST:
        if (!arg[0]) {
            fprintf(stderr, "collide-client %s: --host: must not be empty\n", cmd);
            return -1;
        }
        o->host = arg;
        return 1;
    case CC_OPT_PORT:
        if (!cc_parse_u32(cmd, "--port", arg, 1, 65535, &v)) return -1;
        o->port = (uint16_t)v;
        o->port_set = true;
        return 1;
    case CC_OPT_TOKEN:
        o->token = arg;
        return 1;
    case CC_OPT_TRANSPORT:
        if (strcmp(arg, "tcp") != 0 && strcmp(arg, "ws") != 0 && strcmp(arg, "udp") != 0) {
            fprintf(stderr, "collide-client %s: --transport: '%s' is not tcp, ws or udp\n", cmd,
                    arg);
            return -1;
        }
        o->ws = arg[0] == 'w';
        o->udp = arg[0] == 'u';
        if (!o->port_set) o->port = o->ws ? 7778 : o->udp ? 7779 : 7777;
        return 1;
    case CC_OPT_MAX_FRAME:
        if (!cc_parse_u32(cmd, "--max-frame", arg, 64, 64u * 1024u * 1024u, &v)) return -1;
        o->max_frame = v;
        return 1;
    case CC_OPT_UDP_BASELINES:
        if (!cc_parse_u32(cmd, "--udp-baselines", arg, 1, 1024, &v)) return -1;
        o->udp_baselines = v;
        return 1;
    default:
        return 0;
    }
}

int cc_common_connect(const cc_common_opts *o, cc_conn *c, uv_loop_t *loop,
                      const struct sockaddr *addr, const cc_conn_hooks *hooks, void *user) {
    if (o->udp) return cc_conn_start_udp(c, loop, addr, hooks, user, o->max_frame);
    return o->ws ? cc_conn_start_ws(c, loop, addr, hooks, user, o->max_frame)
                 : cc_conn_start(c, loop, addr, hooks, user, o->max_frame);
}

bool cc_parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    if (!s[0] || s[0] == '-') goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) goto bad;
    *out = v;
    return true;
bad:
    fprintf(stderr, "collide-client %s: %s: expected a non-negative integer, got '%s'\n", cmd, flag,
            s);
    return false;
}

bool cc_parse_u32(const char *cmd, const char *flag, const char *s, uint32_t lo, uint32_t hi,
                  uint32_t *out) {
    char *end;
    errno = 0;
    long long v = s[0] ? strtoll(s, &end, 10) : 0;
    if (!s[0] || errno || *end || v < (long long)lo || v > (long long)hi) {
        fprintf(stderr, "collide-client %s: %s: expected an integer in [%u, %u], got '%s'\n", cmd,
                flag, lo, hi, s);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool cc_parse_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
                     double *out) {
    char *end;
    errno = 0;
    double v = s[0] ? strtod(s, &end) : NAN;
    if (!s[0] || errno || *end || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "collide-client %s: %s: expected a number in [%g, %g], got '%s'\n", cmd,
                flag, lo, hi, s);
        return false;
    }
    *out = v;
    return true;
}

bool cc_parse_duration(const char *cmd, const char *flag, const char *s, double lo, double hi,
                       double *out) {
    char *end;
    errno = 0;
    double v = s[0] ? strtod(s, &end) : NAN;
    double scale = 1.0;
    if (s[0] && !errno) {
        if (strcmp(end, "ms") == 0)
            scale = 0.001;
        else if (strcmp(end, "s") == 0 || *end == '\0')
            scale = 1.0;
        else if (strcmp(end, "m") == 0)
            scale = 60.0;
        else
            v = NAN;
    }
    v *= scale;
    if (!s[0] || errno || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr,
                "collide-client %s: %s: expected a duration in [%g s, %g s] such as 30, 30s, "
                "500ms or 2m, got '%s'\n",
                cmd, flag, lo, hi, s);
        return false;
    }
    *out = v;
    return true;
}

bool cc_parse_floats(const char *cmd, const char *flag, const char *s, float *out, int n) {
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v)) goto bad;
        out[i] = (float)v;
        if (i + 1 < n) {
            if (*end != ',') goto bad;
            p = end + 1;
        } else if (*end) {
            goto bad;
        }
    }
    return true;
bad:
    fprintf(stderr, "collide-client %s: %s: expected %d comma-separated numbers, got '%s'\n", cmd,
            flag, n, s);
    return false;
}

int cc_resolve(const char *host, uint16_t port, struct sockaddr_storage *out) {
    uv_loop_t loop;
    int rc = uv_loop_init(&loop);
    if (rc) return rc;
    uv_getaddrinfo_t req;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    rc = uv_getaddrinfo(&loop, &req, NULL, host, service, &hints); /* synchronous without cb */
    if (rc == 0) {
        /* IPv4 first: "localhost" often resolves to ::1 first, while the daemon's default bind
         * (0.0.0.0) listens on IPv4 only. */
        const struct addrinfo *pick = req.addrinfo;
        for (const struct addrinfo *ai = req.addrinfo; ai; ai = ai->ai_next)
            if (ai->ai_family == AF_INET) {
                pick = ai;
                break;
            }
        memset(out, 0, sizeof *out);
        memcpy(out, pick->ai_addr, pick->ai_addrlen);
        uv_freeaddrinfo(req.addrinfo);
    }
    if (!cc_loop_close(&loop, "resolve") && rc == 0) rc = UV_EBUSY;
    return rc;
}

bool cc_room_name_valid(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > CC_ROOM_NAME_MAX) return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.' || *c == ':' || *c == '-'))
            return false;
    return true;
}

bool cc_no_operands(const char *cmd, int argc, char **argv, int first) {
    if (first >= argc) return true;
    fprintf(stderr, "collide-client %s: unexpected argument '%s'\n", cmd, argv[first]);
    return false;
}

bool cc_resolve_common(const char *cmd, const cc_common_opts *o, struct sockaddr_storage *out) {
    int rc = cc_resolve(o->host, o->port, out);
    if (rc == 0) return true;
    fprintf(stderr, "collide-client %s: cannot resolve '%s': %s\n", cmd, o->host, uv_strerror(rc));
    return false;
}

void cc_connect_failure(char *msg, size_t msg_size, const cc_common_opts *o, int status) {
    snprintf(msg, msg_size, "cannot connect to %s:%u: %s", o->host, (unsigned)o->port,
             uv_strerror(status));
}

static void cc_name_open_handle(uv_handle_t *h, void *arg) {
    fprintf(stderr, "collide-client %s: internal error: a %s handle was left open\n",
            (const char *)arg, uv_handle_type_name(uv_handle_get_type(h)));
}

bool cc_loop_close(uv_loop_t *loop, const char *cmd) {
    if (uv_loop_close(loop) == 0) return true;
    uv_walk(loop, cc_name_open_handle, (void *)cmd);
    return false;
}

uint64_t cc_now_us(void) { return uv_hrtime() / 1000u; }

uint64_t cc_wall_us(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

bool cc_fd_limit_ensure(uint64_t needed, char *msg, size_t msg_size) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        snprintf(msg, msg_size, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
        return false;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= needed) return true;
    if (rl.rlim_cur == RLIM_INFINITY) return true;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed) {
        snprintf(msg, msg_size,
                 "%llu file descriptors are needed but the hard limit is %llu; raise it (as root: "
                 "ulimit -Hn %llu, or LimitNOFILE= / docker --ulimit nofile=%llu) or use fewer "
                 "--clients",
                 (unsigned long long)needed, (unsigned long long)rl.rlim_max,
                 (unsigned long long)needed, (unsigned long long)needed);
        return false;
    }
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = (rlim_t)needed;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        snprintf(msg, msg_size, "could not raise the file descriptor limit from %llu to %llu: %s",
                 (unsigned long long)old, (unsigned long long)needed, strerror(errno));
        return false;
    }
    return true;
}

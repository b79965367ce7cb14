/* collide-client ping: connect, Hello, Ping, print the round trip, exit 0 or 1. Small and strict
 * so it can serve as a container HEALTHCHECK: any failure (refused, timeout, Error, a closed
 * connection) exits 1 with one line saying why. */
#include "ping.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "conn.h"
#include "session.h"
#include "wire_read.h"

#define CMD "ping"

typedef struct ping_ctx {
    cc_conn conn;            /* the connection */
    uv_timer_t timeout;      /* overall deadline */
    const cc_common_opts *o; /* connection options */
    uint64_t sent_us;        /* Ping send time */
    int result;              /* exit code once decided, -1 before */
    bool quiet;              /* --quiet: no output on success */
    char message[256];       /* the line to print */
} ping_ctx;

static void ping_finish(ping_ctx *x, int result) {
    if (x->result >= 0) return;
    x->result = result;
    uv_timer_stop(&x->timeout);
    uv_close((uv_handle_t *)&x->timeout, NULL);
    cc_conn_close(&x->conn);
}

static void ping_connected(cc_conn *c, int status) {
    ping_ctx *x = c->user;
    if (status != 0) {
        cc_connect_failure(x->message, sizeof x->message, x->o, status);
        ping_finish(x, CC_EXIT_FAIL);
        return;
    }
    /* Pipelined: replies come back in request order, so the Pong follows the Welcome. */
    x->sent_us = cc_now_us();
    cc_session_hello(c, 1, "collide-client-ping", x->o->token);
    cc_session_ping(c, 2, x->sent_us);
    cc_conn_flush(c);
}

static void ping_frame(cc_conn *c, const uint8_t *body, size_t len) {
    ping_ctx *x = c->user;
    cc_wire_envelope env;
    if (x->result >= 0) return;
    if (!cc_wire_envelope_read(body, len, &env)) {
        snprintf(x->message, sizeof x->message, "malformed frame from the server");
        ping_finish(x, CC_EXIT_FAIL);
        return;
    }
    if (env.kind == CC_MSG_PONG) {
        uint64_t now = cc_now_us(), sent, tick;
        cc_wire_pong_read(env.inner, env.inner_len, &sent, &tick);
        snprintf(x->message, sizeof x->message, "pong from %s:%u: rtt %.3f ms (tick %llu)",
                 x->o->host, (unsigned)x->o->port, (double)(now - x->sent_us) / 1000.0,
                 (unsigned long long)tick);
        ping_finish(x, CC_EXIT_OK);
    } else if (env.kind == CC_MSG_ERROR || env.kind == CC_MSG_GOODBYE) {
        Collide__V1__ServerMessage *m = collide__v1__server_message__unpack(NULL, len, body);
        if (m && m->error)
            snprintf(x->message, sizeof x->message, "server error %d (%s)", (int)m->error->code,
                     m->error->message ? m->error->message : "");
        else if (m && m->goodbye)
            snprintf(x->message, sizeof x->message, "server said goodbye: %s",
                     m->goodbye->reason ? m->goodbye->reason : "");
        else
            snprintf(x->message, sizeof x->message, "malformed frame from the server");
        if (m) collide__v1__server_message__free_unpacked(m, NULL);
        ping_finish(x, CC_EXIT_FAIL);
    }
}

static void ping_failed(cc_conn *c, int status, const char *reason) {
    (void)status;
    ping_ctx *x = c->user;
    snprintf(x->message, sizeof x->message, "connection lost before the pong: %s", reason);
    ping_finish(x, CC_EXIT_FAIL);
}

static void ping_closed(cc_conn *c) { (void)c; }

static void ping_timeout(uv_timer_t *t) {
    ping_ctx *x = t->data;
    snprintf(x->message, sizeof x->message, "no pong from %s:%u within the timeout", x->o->host,
             (unsigned)x->o->port);
    ping_finish(x, CC_EXIT_FAIL);
}

static const cc_conn_hooks ping_hooks = {ping_connected, ping_frame, ping_failed, ping_closed};

static void ping_usage(FILE *f) {
    fprintf(f, "usage: collide-client ping [options]\n"
               "Connects, sends Hello and Ping, prints the round trip; exit 0 on a pong, 1 "
               "otherwise.\n\n"
               "  --timeout-ms MS     give up after MS (default 2000)\n"
               "  -q, --quiet         print nothing on success\n" CC_COMMON_HELP);
}

int cc_ping_main(int argc, char **argv) {
    enum { OPT_TIMEOUT = CC_OPT_FIRST_FREE };
    static const struct option longs[] = {
        CC_COMMON_LONG_OPTIONS,
        {"timeout-ms", 1, NULL, OPT_TIMEOUT},
        {"quiet", 0, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    cc_common_opts o;
    cc_common_defaults(&o);
    uint32_t timeout_ms = 2000;
    bool quiet = false;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "hq", longs, NULL)) != -1) {
        int common = cc_common_option(CMD, c, optarg, &o);
        if (common < 0) return CC_EXIT_USAGE;
        if (common > 0) continue;
        if (c == 'h') {
            ping_usage(stdout);
            return CC_EXIT_OK;
        } else if (c == 'q') {
            quiet = true;
        } else if (c == OPT_TIMEOUT) {
            if (!cc_parse_u32(CMD, "--timeout-ms", optarg, 1, 3600000, &timeout_ms))
                return CC_EXIT_USAGE;
        } else {
            fprintf(stderr, "collide-client " CMD ": see 'collide-client ping --help'\n");
            return CC_EXIT_USAGE;
        }
    }
    if (!cc_no_operands(CMD, argc, argv, optind)) return CC_EXIT_USAGE;
    struct sockaddr_storage addr;
    if (!cc_resolve_common(CMD, &o, &addr)) return CC_EXIT_FAIL;
    uv_loop_t loop;
    uv_loop_init(&loop);
    static ping_ctx x;
    memset(&x, 0, sizeof x);
    x.o = &o;
    x.result = -1;
    x.quiet = quiet;
    uv_timer_init(&loop, &x.timeout);
    x.timeout.data = &x;
    uv_timer_start(&x.timeout, ping_timeout, timeout_ms, 0);
    int rc = cc_common_connect(&o, &x.conn, &loop, (const struct sockaddr *)&addr, &ping_hooks, &x);
    if (rc != 0) {
        cc_connect_failure(x.message, sizeof x.message, &o, rc);
        ping_finish(&x, CC_EXIT_FAIL);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!cc_loop_close(&loop, "ping")) x.result = CC_EXIT_FAIL;
    if (x.result != CC_EXIT_OK)
        fprintf(stderr, "collide-client ping: %s\n", x.message);
    else if (!quiet)
        printf("%s\n", x.message);
    return x.result < 0 ? CC_EXIT_FAIL : x.result;
}

/* bench_ticket: the cost of a ticket per Hello (PERFORMANCE.md "tickets": verify <= 5 us per
 * Hello; issue 31). net_ticket_verify alone on the tickets a backend mints (a typical one under
 * the current key; one under the second key of a rotation, which libjwt verifies once per key;
 * refusals: another key, expired, over the size bound), and a whole Hello through the session
 * (net_client_feed of the frame, Welcome and all, the client released) with a ticket against the
 * same Hello with the shared token: their difference is what tickets add to a join.
 *
 * Usage: bench_ticket [verifies_per_run (default 20000)] [runs (default 5)] [KIND]
 * One JSON line per kind: the median of the runs' us per call, and the verdict. KIND: only the
 * kinds whose name contains it. Exit 1 when the typical ticket's median is over the target. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "net_ticket.h"
#include "ticket_mint.h"

#define KEY "bench-ticket-key-0123456789abcdef"
#define OLD_KEY "bench-previous-key-fedcba98765432"
#define NOW 1800000000LL
#define TARGET_US 5.0 /* PERFORMANCE.md */
#define MAX_RUNS 64

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A ticket as a backend mints one: room, exp, sub, iat, and what else is given. */
static size_t mint(const char *key, long long exp, const char *rest, char *out, size_t cap) {
    char payload[512];
    snprintf(payload, sizeof payload,
             "{\"room\":\"arena-17\",\"exp\":%lld,\"iat\":%lld,\"sub\":\"player-123456\"%s}", exp,
             NOW - 10, rest);
    return tm_mint(TM_HS256_HEADER, payload, key, strlen(key), TM_HS256, out, cap);
}

typedef struct bench_case {
    const char *kind;
    char token[2048];
    size_t len;
} bench_case;

static net_ticket_rules rules(void) {
    net_ticket_rules r = {.keys = {(const unsigned char *)KEY, (const unsigned char *)OLD_KEY},
                          .key_lens = {sizeof KEY - 1, sizeof OLD_KEY - 1},
                          .key_count = 2,
                          .now_s = NOW,
                          .leeway_s = 5,
                          .max_bytes = 1024};
    return r;
}

/* us per net_ticket_verify of c, median of runs runs of n; *st the verdict. */
static double time_verify(const bench_case *c, int n, int runs, net_ticket_status *st) {
    net_ticket_rules r = rules();
    double per[MAX_RUNS];
    net_ticket_claims claims;
    char why[NET_TICKET_WHY];
    /* Untimed first: the caches, the allocator's free lists and the CPU's clock come up to speed
     * (the first kind measured was a third slower without it). */
    for (int i = 0; i < n / 4; i++)
        net_ticket_verify(&r, (const uint8_t *)c->token, c->len, "arena-17", 8, &claims, why,
                          sizeof why);
    for (int k = 0; k < runs; k++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            *st = net_ticket_verify(&r, (const uint8_t *)c->token, c->len, "arena-17", 8, &claims,
                                    why, sizeof why);
        per[k] = (now_ns() - t0) / n / 1000.0;
    }
    qsort(per, (size_t)runs, sizeof per[0], cmp_double);
    return per[runs / 2];
}

/* us per whole Hello (open, feed the frame, take the Welcome, release) with token, median of
 * runs runs of n; *welcomed whether the last one was welcomed. */
static double time_hello(const char *token, int n, int runs, bool *welcomed) {
    net_config cfg;
    net_config_default(&cfg);
    memcpy(cfg.ticket_keys[0], KEY, sizeof KEY);
    cfg.ticket_key_lens[0] = sizeof KEY - 1;
    cfg.ticket_key_count = 1;
    cfg.token_len = (size_t)snprintf(cfg.token, sizeof cfg.token, "shared-token");
    cfg.rate_limit = 1e7f;
    world_config wc;
    world_config_default(&wc);
    world *w = world_create(&wc);
    net_server *srv = net_server_create(&cfg, w);
    if (!w || !srv) abort();
    srv->now_us = 1000000;
    srv->wall_us = (uint64_t)NOW * 1000000u;
    uint8_t frame[4096];
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"bench";
    h.token = (char *)token;
    h.room = (char *)"arena-17";
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    size_t len = tu_frame(&m, frame, sizeof frame);
    double per[MAX_RUNS];
    static net_client c;
    for (int k = 0; k < runs; k++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++) {
            memset(&c, 0, sizeof c);
            if (!net_client_open(srv, &c, "127.0.0.1:1")) abort();
            net_client_feed(srv, &c, frame, len);
            *welcomed = c.state == NET_CLIENT_ACTIVE;
            c.out.len = 0; /* as if written */
            net_client_release(srv, &c);
        }
        per[k] = (now_ns() - t0) / n / 1000.0;
    }
    net_server_destroy(srv);
    world_destroy(w);
    qsort(per, (size_t)runs, sizeof per[0], cmp_double);
    return per[runs / 2];
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    const char *only = argc > 3 ? argv[3] : NULL;
    if (n < 1 || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_ticket [verifies_per_run] [runs <= %d] [KIND]\n", MAX_RUNS);
        return 2;
    }
    net_log_set_level(NET_LOG_ERROR);
    static bench_case cases[5] = {{.kind = "verify_typical"},
                                  {.kind = "verify_second_key"},
                                  {.kind = "refuse_other_key"},
                                  {.kind = "refuse_expired"},
                                  {.kind = "refuse_size"}};
    cases[0].len =
        mint(KEY, NOW + 3600, ",\"max_bodies\":4", cases[0].token, sizeof cases[0].token);
    cases[1].len = mint(OLD_KEY, NOW + 3600, "", cases[1].token, sizeof cases[1].token);
    cases[2].len = mint("an-attacker's-guess-of-the-key!!", NOW + 3600, "", cases[2].token,
                        sizeof cases[2].token);
    cases[3].len = mint(KEY, NOW - 3600, "", cases[3].token, sizeof cases[3].token);
    memset(cases[4].token, 'A', 1100);
    cases[4].len = 1100;
    double typical = 0.0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (only && !strstr(cases[i].kind, only)) continue;
        net_ticket_status st = NET_TICKET_OK;
        double us = time_verify(&cases[i], n, runs, &st);
        if (i == 0) typical = us;
        printf("{\"kind\":\"%s\",\"token_bytes\":%zu,\"us_per_call\":%.3f,\"verdict\":\"%s\"}\n",
               cases[i].kind, cases[i].len, us, net_ticket_status_str(st));
    }
    int hellos = n / 4 > 0 ? n / 4 : 1;
    const char *tokens[2] = {cases[0].token, "shared-token"};
    const char *kinds[2] = {"hello_with_ticket", "hello_with_token"};
    for (int i = 0; i < 2; i++) {
        if (only && !strstr(kinds[i], only)) continue;
        bool welcomed = false;
        double us = time_hello(tokens[i], hellos, runs, &welcomed);
        printf("{\"kind\":\"%s\",\"us_per_hello\":%.3f,\"welcomed\":%s}\n", kinds[i], us,
               welcomed ? "true" : "false");
    }
    if (typical > 0.0)
        printf("{\"target_us\":%.1f,\"verify_typical_us\":%.3f,\"within\":%s}\n", TARGET_US,
               typical, typical <= TARGET_US ? "true" : "false");
    return typical > TARGET_US ? 1 : 0;
}

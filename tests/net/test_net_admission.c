/* Unit tests of admission control (issue 12): --max-clients counts welcomed sessions and is
 * checked at Hello; connections that have not said Hello are capped by --max-pending and
 * --max-pending-per-address, and at a cap the oldest silent one is evicted, never the newcomer.
 * A real server and world, no sockets: connections are opened with their "ip:port" string. */
#include <stdio.h>

#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"

#define E(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name
#define NCLIENTS 160

typedef struct fixture {
    world *w;
    net_server *srv;
    net_client *c;    /* NCLIENTS clients, opened on demand */
    uint8_t buf[256]; /* frame scratch */
} fixture;

static void fx_init(fixture *f, uint32_t max_clients, uint32_t max_pending, uint32_t per_address) {
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.max_clients = max_clients;
    cfg.max_pending = max_pending;
    cfg.max_pending_per_address = per_address;
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 64;
    f->w = world_create(&wc);
    f->srv = net_server_create(&cfg, f->w);
    f->srv->now_us = 1000000;
    f->c = calloc(NCLIENTS, sizeof *f->c);
}

/* Releases what a flush would close (killed clients), as the daemon does every loop turn. */
static void fx_flush(fixture *f) {
    net_client *c;
    while ((c = net_server_pop_dirty(f->srv)) != NULL) {
        if (c->kill) net_client_release(f->srv, c);
    }
}

static void fx_free(fixture *f) {
    for (int i = 0; i < NCLIENTS; i++)
        if (f->c[i].id) net_client_release(f->srv, &f->c[i]);
    net_server_destroy(f->srv);
    world_destroy(f->w);
    free(f->c);
}

static net_client *fx_open(fixture *f, int i, const char *addr) {
    /* each past the eviction grace of the one before, so that a cap crossed evicts at once (the
     * grace itself: test_burst_within_grace) */
    f->srv->now_us += NET_PENDING_GRACE_US + 1000u;
    bool ok = net_client_open(f->srv, &f->c[i], addr);
    return ok ? &f->c[i] : NULL;
}

/* Sends Hello; true when it was welcomed. */
static bool fx_hello(fixture *f, int i) {
    net_client *c = &f->c[i];
    net_client_feed(f->srv, c, f->buf, tu_hello(5, 1, NULL, f->buf, sizeof f->buf));
    tu_msgs msgs;
    tu_take(c, &msgs);
    bool welcomed =
        msgs.count >= 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
    tu_free(&msgs);
    return welcomed;
}

static bool evicted(const net_client *c) {
    return c->kill && c->reason == NET_DISC_PENDING_EVICTED;
}

/* Silent connections do not count against --max-clients: with 2 slots and 40 connections that
 * never say Hello, two players are still welcomed; the third Hello is refused. */
static void test_pending_not_counted_against_max_clients(void) {
    fixture f;
    fx_init(&f, 2, 256, 64);
    for (int i = 0; i < 40; i++)
        CHECK(fx_open(&f, i, "10.0.0.9:1000") != NULL);
    CHECK(net_server_pending_count(f.srv) == 40);
    CHECK(fx_open(&f, 40, "10.0.0.1:1") && fx_hello(&f, 40));
    CHECK(fx_open(&f, 41, "10.0.0.2:1") && fx_hello(&f, 41));
    CHECK(net_server_pending_count(f.srv) == 40);
    CHECK(fx_open(&f, 42, "10.0.0.3:1") && !fx_hello(&f, 42));
    CHECK(f.c[42].admission.refused && f.c[42].reason == NET_DISC_SERVER_FULL);
    for (int i = 0; i < 40; i++)
        CHECK(!f.c[i].kill);
    fx_free(&f);
}

/* At --max-clients the Hello gets Error{LIMIT_EXCEEDED, fatal} "server full: N clients" with its
 * request_id; a slot freed by a welcomed client is taken by the next Hello. Past NET_MAX_REFUSING
 * refusals in flight, a refused one is cut without its Error. */
static void test_refused_at_hello_when_full(void) {
    fixture f;
    fx_init(&f, 1, 256, 256);
    CHECK(fx_open(&f, 0, "10.0.0.1:1") && fx_hello(&f, 0));
    net_client *c = fx_open(&f, 1, "10.0.0.2:1");
    CHECK(c && c->out.len == 0 && !c->admission.refused);
    net_client_feed(f.srv, c, f.buf, tu_hello(42, 1, NULL, f.buf, sizeof f.buf));
    tu_msgs msgs;
    tu_take(c, &msgs);
    CHECK(msgs.count == 1 && msgs.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR);
    const Collide__V1__Error *err = msgs.m[0]->error;
    bool ok = err->code == E(LIMIT_EXCEEDED) && err->fatal && msgs.m[0]->request_id == 42 &&
              strcmp(err->message, "server full: 1 clients") == 0;
    tu_free(&msgs);
    CHECK(ok);
    CHECK(c->state == NET_CLIENT_CLOSING && c->reason == NET_DISC_SERVER_FULL && !c->kill);
    CHECK(net_server_pending_count(f.srv) == 0);
    /* The welcomed client leaves: its slot goes to the next Hello. */
    net_client_release(f.srv, &f.c[0]);
    CHECK(fx_open(&f, 2, "10.0.0.3:1") && fx_hello(&f, 2));
    /* NET_MAX_REFUSING refusals queue their Error; the next is cut without one. */
    for (int i = 0; i < NET_MAX_REFUSING - 1; i++) {
        CHECK(fx_open(&f, 3 + i, "10.0.0.4:1") && !fx_hello(&f, 3 + i));
        CHECK(!f.c[3 + i].kill && f.c[3 + i].state == NET_CLIENT_CLOSING);
    }
    net_client *over = fx_open(&f, 3 + NET_MAX_REFUSING, "10.0.0.4:1");
    CHECK(over && !fx_hello(&f, 3 + NET_MAX_REFUSING));
    CHECK(over->kill && over->reason == NET_DISC_SERVER_FULL);
    fx_flush(&f);
    uint64_t full = f.srv->metrics.disconnects_total[NET_DISC_SERVER_FULL];
    CHECK_MSG(full == 1, "%llu", (unsigned long long)full);
    fx_free(&f);
}

/* --max-pending 3: each newcomer over it evicts the oldest silent connection, whatever its
 * address; a client that said Hello has left the queue and is never evicted. */
static void test_global_cap_evicts_oldest(void) {
    fixture f;
    fx_init(&f, 100, 3, 64);
    CHECK(fx_open(&f, 0, "10.0.0.1:1") && fx_open(&f, 1, "10.0.0.2:1") &&
          fx_open(&f, 2, "10.0.0.3:1"));
    CHECK(!f.c[0].kill && net_server_pending_count(f.srv) == 3);
    CHECK(fx_open(&f, 3, "10.0.0.4:1"));
    CHECK(evicted(&f.c[0]) && !f.c[1].kill && !f.c[2].kill && !f.c[3].kill);
    CHECK(net_server_pending_count(f.srv) == 3);
    CHECK(fx_hello(&f, 1)); /* welcomed: out of the queue */
    CHECK(net_server_pending_count(f.srv) == 2);
    CHECK(fx_open(&f, 4, "10.0.0.5:1"));
    CHECK(!f.c[2].kill); /* 3 pending again: no eviction yet */
    CHECK(fx_open(&f, 5, "10.0.0.6:1"));
    CHECK(evicted(&f.c[2]) && !f.c[1].kill && !f.c[3].kill && !f.c[4].kill && !f.c[5].kill);
    fx_flush(&f);
    CHECK(f.srv->metrics.disconnects_total[NET_DISC_PENDING_EVICTED] == 2);
    /* A pending client cut for another reason leaves the queue at once: the next newcomer has a
     * free slot and evicts nobody. */
    net_server_kill(f.srv, &f.c[3], NET_DISC_READ_ERROR);
    CHECK(net_server_pending_count(f.srv) == 2);
    CHECK(fx_open(&f, 6, "10.0.0.7:1"));
    CHECK(!f.c[4].kill && !f.c[5].kill && !f.c[6].kill);
    fx_free(&f);
}

/* --max-pending-per-address 2: the third silent connection of one IP (any port) evicts that IP's
 * oldest, even when another IP's connection is older; other IPs are untouched. */
static void test_per_address_cap_evicts_that_address_oldest(void) {
    fixture f;
    fx_init(&f, 100, 100, 2);
    CHECK(fx_open(&f, 0, "10.0.0.2:7000")); /* B, the oldest of all */
    CHECK(fx_open(&f, 1, "10.0.0.1:5000")); /* A1 */
    CHECK(fx_open(&f, 2, "10.0.0.1:5001")); /* A2 */
    CHECK(!f.c[1].kill);
    CHECK(fx_open(&f, 3, "10.0.0.1:5002")); /* A3: over 2 for A */
    CHECK(evicted(&f.c[1]) && !f.c[0].kill && !f.c[2].kill && !f.c[3].kill);
    CHECK(fx_open(&f, 4, "10.0.0.1:5003")); /* A4 */
    CHECK(evicted(&f.c[2]) && !f.c[0].kill && !f.c[3].kill && !f.c[4].kill);
    /* B can still open its second */
    CHECK(fx_open(&f, 5, "10.0.0.2:7001"));
    CHECK(!f.c[0].kill && !f.c[5].kill);
    /* An A connection that said Hello no longer counts for A. */
    CHECK(fx_hello(&f, 3));
    CHECK(fx_open(&f, 6, "10.0.0.1:5004"));
    CHECK(!f.c[4].kill && !f.c[6].kill);
    CHECK(net_server_pending_count(f.srv) == 4);
    fx_free(&f);
}

/* The per-address key is the IP alone: an IPv4 peer and the same peer as an IPv4-mapped IPv6
 * address (a dual-stack listener) are one address; the IPv6 loopback is not 127.0.0.1. */
static void test_ipv4_mapped_is_its_ipv4(void) {
    uint8_t a[NET_IP_KEY_BYTES], b[NET_IP_KEY_BYTES];
    CHECK(net_ip_key("10.1.2.3:5", a) && net_ip_key("[::ffff:10.1.2.3]:6", b));
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(net_ip_key("[2001:db8::1]:1", a) && net_ip_key("[2001:db8:0:0::1]:2", b));
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(net_ip_key("[::1]:5", a) && net_ip_key("127.0.0.1:5", b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK(net_ip_key("10.1.2.3:5", a) && net_ip_key("10.1.2.4:5", b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK(!net_ip_key("-", a) && !net_ip_key(NULL, b) && memcmp(a, b, sizeof a) == 0);

    fixture f;
    fx_init(&f, 100, 100, 1);
    CHECK(fx_open(&f, 0, "10.1.2.3:5"));
    CHECK(fx_open(&f, 1, "[::1]:5")); /* another address: no eviction */
    CHECK(!f.c[0].kill);
    CHECK(fx_open(&f, 2, "[::ffff:10.1.2.3]:6"));
    CHECK(evicted(&f.c[0]) && !f.c[1].kill && !f.c[2].kill);
    fx_free(&f);
}

/* A burst of connections accepted in one loop turn may all be over the cap before any of their
 * Hellos is read: a connection younger than NET_PENDING_GRACE_US is not evicted for a newcomer,
 * up to NET_PENDING_HARD_FACTOR x the cap, and those still silent and over the cap are trimmed,
 * oldest first, at the first tick after they age past the grace. */
static void test_burst_within_grace(void) {
    fixture f;
    fx_init(&f, 100, 100, 4);
    /* 16 from one IP within a millisecond: 4x the per-address cap, nobody evicted */
    for (int i = 0; i < 16; i++) {
        f.srv->now_us += 50;
        CHECK(net_client_open(f.srv, &f.c[i], "10.0.0.1:1"));
    }
    for (int i = 0; i < 16; i++)
        CHECK_MSG(!f.c[i].kill, "client %d of a burst evicted within the grace", i);
    /* the 17th crosses the hard ceiling: the oldest goes at once */
    f.srv->now_us += 50;
    CHECK(net_client_open(f.srv, &f.c[16], "10.0.0.1:1"));
    CHECK(evicted(&f.c[0]) && !f.c[1].kill);
    /* half of the burst says Hello in the next loop turn: welcomed, out of the queue */
    for (int i = 1; i < 9; i++)
        CHECK(fx_hello(&f, i));
    CHECK(net_server_pending_count(f.srv) == 8);
    /* a tick inside the grace trims nothing */
    f.srv->now_us += NET_PENDING_GRACE_US / 2;
    net_tick_run(f.srv, 0);
    CHECK(net_server_pending_count(f.srv) == 8);
    /* past the grace: the 4 oldest still silent go, the 4 newest stay (the cap) */
    f.srv->now_us += NET_PENDING_GRACE_US;
    net_tick_run(f.srv, 0);
    for (int i = 9; i < 13; i++)
        CHECK_MSG(evicted(&f.c[i]), "client %d: over the cap past the grace, not evicted", i);
    for (int i = 13; i < 17; i++)
        CHECK_MSG(!f.c[i].kill, "client %d: within the cap, evicted", i);
    CHECK(net_server_pending_count(f.srv) == 4);
    fx_flush(&f);
    fx_free(&f);
}

/* A fixed-seed walk of opens from 6 IPs, Hellos, closes and cuts against a plain model (a list of
 * pending ids, oldest first): after every step the same clients are pending and the same were
 * evicted. Covers unlinking from the middle, the head and the tail of both queues, and entries of
 * an IP freed and created again. */
static void test_matches_a_model(void) {
    fixture f;
    fx_init(&f, 1000, 12, 4);
    int order[NCLIENTS]; /* model: pending ids, oldest first */
    int n = 0;
    int ip_of[NCLIENTS];
    bool model_evicted[NCLIENTS] = {0};
    uint64_t seed = 12345;
    int opened = 0, by_address = 0, by_total = 0;
    for (int step = 0; step < 2000 && opened < NCLIENTS; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(seed >> 33);
        if (r % 3 != 0 || n == 0) { /* open */
            int i = opened++;
            ip_of[i] = (int)((r / 3) % 6);
            char addr[32];
            snprintf(addr, sizeof addr, (r / 18) % 2 ? "192.0.2.%d:%d" : "[::ffff:192.0.2.%d]:%d",
                     ip_of[i], 1000 + i);
            CHECK(fx_open(&f, i, addr));
            order[n++] = i;
            int same = 0, oldest_same = -1;
            for (int k = 0; k < n; k++) {
                if (ip_of[order[k]] == ip_of[i]) {
                    if (oldest_same < 0) oldest_same = k;
                    same++;
                }
            }
            if (same > 4) {
                by_address++;
                model_evicted[order[oldest_same]] = true;
                memmove(&order[oldest_same], &order[oldest_same + 1],
                        (size_t)(n - oldest_same - 1) * sizeof *order);
                n--;
            }
            if (n > 12) {
                by_total++;
                model_evicted[order[0]] = true;
                memmove(&order[0], &order[1], (size_t)(n - 1) * sizeof *order);
                n--;
            }
        } else { /* a pending client leaves the queue: Hello, close or a cut */
            int k = (int)((r / 3) % (unsigned)n);
            int i = order[k];
            switch ((r / 7) % 3) {
            case 0:
                CHECK(fx_hello(&f, i));
                break;
            case 1:
                net_client_release(f.srv, &f.c[i]);
                break;
            default:
                net_server_kill(f.srv, &f.c[i], NET_DISC_HELLO_TIMEOUT);
                break;
            }
            memmove(&order[k], &order[k + 1], (size_t)(n - k - 1) * sizeof *order);
            n--;
        }
        CHECK_MSG(net_server_pending_count(f.srv) == (uint32_t)n, "step %d: %u pending, model %d",
                  step, net_server_pending_count(f.srv), n);
        /* the server's queue, oldest first, is the model's */
        int k = 0;
        for (const net_client *c = f.srv->pending_head; c; c = c->admission.pending_next, k++)
            CHECK_MSG(k < n && c == &f.c[order[k]], "step %d: queue position %d", step, k);
        for (int i = 0; i < opened; i++)
            CHECK_MSG(evicted(&f.c[i]) == model_evicted[i], "step %d: client %d", step, i);
        fx_flush(&f);
    }
    CHECK(opened == NCLIENTS);
    CHECK_MSG(by_address >= 10 && by_total >= 10, "the walk must cross both caps often: %d, %d",
              by_address, by_total);
    fx_free(&f);
}

TEST_MAIN(TEST(test_pending_not_counted_against_max_clients), TEST(test_refused_at_hello_when_full),
          TEST(test_global_cap_evicts_oldest),
          TEST(test_per_address_cap_evicts_that_address_oldest), TEST(test_ipv4_mapped_is_its_ipv4),
          TEST(test_burst_within_grace), TEST(test_matches_a_model))

/* Unit tests of the partial-frame budget (--max-partial-bytes, issue 32): a read buffer grows with
 * the bytes that came, not with the length a prefix announced; every server counts against one
 * daemon-wide budget; past it the client holding the oldest partial frame is cut
 * (NET_DISC_PARTIAL_FRAMES), its buffer freed at once, until the budget is back under. A real
 * server and world, no sockets. */
#include <stdio.h>

#include "frame.h"
#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"

#define NCLIENTS 8

typedef struct fixture {
    world *w;
    net_server *srv;
    net_client c[NCLIENTS];
    uint8_t buf[256];
} fixture;

static void fx_init(fixture *f, size_t max_partial, net_partial_budget *shared) {
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.max_partial_bytes = max_partial;
    cfg.partial_budget = shared;
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 64;
    f->w = world_create(&wc);
    f->srv = net_server_create(&cfg, f->w);
    f->srv->now_us = 1000000;
}

static void fx_free(fixture *f) {
    for (int i = 0; i < NCLIENTS; i++)
        if (f->c[i].id) net_client_release(f->srv, &f->c[i]);
    net_server_destroy(f->srv);
    world_destroy(f->w);
}

/* Opens client i and says Hello (a frame before Hello is capped at --max-hello-frame). */
static net_client *fx_welcome(fixture *f, int i) {
    net_client *c = &f->c[i];
    char addr[32];
    snprintf(addr, sizeof addr, "10.0.0.%d:1000", i + 1);
    if (!net_client_open(f->srv, c, addr)) return NULL;
    net_client_feed(f->srv, c, f->buf, tu_hello(1, 1, NULL, f->buf, sizeof f->buf));
    c->out.len = 0; /* the Welcome is not what these tests read */
    return c;
}

/* Feeds c the varint prefix announcing `announced` bytes and then `sent` bytes of body. */
static void feed_partial(fixture *f, net_client *c, uint32_t announced, size_t sent) {
    uint8_t prefix[FRAME_MAX_PREFIX];
    size_t p = frame_write_prefix(announced, prefix);
    net_client_feed(f->srv, c, prefix, p);
    uint8_t zeros[4096] = {0};
    while (sent > 0) {
        size_t n = sent < sizeof zeros ? sent : sizeof zeros;
        net_client_feed(f->srv, c, zeros, n);
        sent -= n;
    }
}

static void test_budget_counts(void) {
    net_partial_budget b;
    net_partial_init(&b, 100);
    CHECK(net_partial_change(&b, 0, 60) == 60);
    CHECK(!net_partial_over(&b));
    CHECK(net_partial_change(&b, 0, 40) == 100);
    CHECK(!net_partial_over(&b)); /* at the bound is not over it */
    CHECK(net_partial_change(&b, 40, 41) == 101);
    CHECK(net_partial_over(&b));
    CHECK(net_partial_change(&b, 60, 0) == 41);
    CHECK(net_partial_held(&b) == 41 && !net_partial_over(&b));
}

/* A prefix announcing 64 KiB and 10 bytes of body: the buffer holds its first allocation, not the
 * announced length, and that is what the budget counts. */
static void test_buffer_grows_with_the_bytes_that_came(void) {
    fixture f;
    fx_init(&f, 1u << 20, NULL);
    net_client *c = fx_welcome(&f, 0);
    CHECK(c != NULL);
    feed_partial(&f, c, 65535, 10);
    CHECK(!c->kill);
    CHECK(c->in.len == 3 + 10);
    CHECK(c->in.cap <= 256);
    CHECK(c->in_held == c->in.cap);
    CHECK(net_partial_held(f.srv->partial) == c->in.cap);
    /* 30 KiB more: it grows by doubling with what came, never past what the frame needs. */
    uint8_t zeros[30 * 1024] = {0};
    net_client_feed(f.srv, c, zeros, sizeof zeros);
    CHECK(c->in.len == 3 + 10 + sizeof zeros && c->in.cap == 32768);
    CHECK(net_partial_held(f.srv->partial) == 32768);
    fx_free(&f);
}

/* Five clients of 2 KiB each against a bound of 8 KiB: the fifth's read takes the total over, and
 * the client that began first is cut, its buffer freed at once; the rest are served on. */
static void test_oldest_is_cut_first(void) {
    fixture f;
    fx_init(&f, 8192, NULL);
    for (int i = 0; i < 5; i++) {
        net_client *c = fx_welcome(&f, i);
        CHECK(c != NULL);
        f.srv->now_us += 1000;
        feed_partial(&f, c, 4000, 2000); /* 2003 bytes: a 2048-byte buffer */
        CHECK(c->in.cap == 2048);
    }
    CHECK(f.c[0].kill && f.c[0].reason == NET_DISC_PARTIAL_FRAMES);
    CHECK(f.c[0].in.cap == 0 && f.c[0].in_held == 0);
    for (int i = 1; i < 5; i++)
        CHECK(!f.c[i].kill);
    CHECK(net_partial_held(f.srv->partial) == 4 * 2048);
    CHECK(f.srv->partial_head == &f.c[1] && f.srv->partial_tail == &f.c[4]);
    /* One more grows a buffer past the bound again: the next oldest goes, not the grower. */
    net_client_feed(f.srv, &f.c[4], f.buf, 100); /* 2103 bytes: 4096 */
    CHECK(f.c[1].kill && f.c[1].reason == NET_DISC_PARTIAL_FRAMES);
    CHECK(!f.c[4].kill && !f.c[2].kill && !f.c[3].kill);
    CHECK(net_partial_held(f.srv->partial) == 2 * 2048 + 4096);
    net_client_release(f.srv, &f.c[0]);
    net_client_release(f.srv, &f.c[1]);
    CHECK(f.srv->metrics.disconnects_total[NET_DISC_PARTIAL_FRAMES] == 2);
    /* Released, the rest take their bytes out of the budget. */
    net_client_release(f.srv, &f.c[2]);
    CHECK(net_partial_held(f.srv->partial) == 2048 + 4096);
    net_buf m = {0};
    CHECK(net_server_render_metrics(f.srv, &m) && net_buf_append(&m, "", 1));
    CHECK(strstr((const char *)m.data, "\ncollide_partial_frame_bytes 6144\n"));
    CHECK(strstr((const char *)m.data, "\ncollide_max_partial_bytes 8192\n"));
    CHECK(strstr((const char *)m.data, "collide_disconnects_total{reason=\"partial_frames\"} 2\n"));
    net_buf_free(&m);
    fx_free(&f);
}

/* A frame completed and the next begun within one read makes the client young again: a client
 * that streams frames across reads is not the oldest for as long as it keeps busy. */
static void test_a_newer_frame_goes_to_the_back(void) {
    fixture f;
    fx_init(&f, 4096, NULL);
    net_client *a = fx_welcome(&f, 0);
    net_client *b = fx_welcome(&f, 1);
    uint8_t ping[64];
    size_t n = tu_ping(9, 1, ping, sizeof ping);
    net_client_feed(f.srv, a, ping, n - 1); /* a begins a ping */
    CHECK(f.srv->partial_head == a);
    f.srv->now_us += 1000;
    feed_partial(&f, b, 4000, 2000); /* b begins later */
    f.srv->now_us += 1000;
    uint8_t two[128];
    memcpy(two, ping + n - 1, 1); /* a's ping completes ... */
    memcpy(two + 1, ping, n - 1); /* ... and the next begins in the same read */
    net_client_feed(f.srv, a, two, n);
    CHECK(f.srv->partial_head == b && f.srv->partial_tail == a);
    /* b grows past the bound: b is now the oldest, and goes; a, busy, stays. */
    uint8_t zeros[1500] = {0};
    net_client_feed(f.srv, b, zeros, sizeof zeros);
    CHECK(b->kill && b->reason == NET_DISC_PARTIAL_FRAMES);
    CHECK(!a->kill);
    fx_free(&f);
}

/* Two servers (the front and a room, or two rooms on two threads) count against one budget: the
 * server whose read crosses the bound cuts its own oldest. */
static void test_servers_share_one_budget(void) {
    net_partial_budget shared;
    net_partial_init(&shared, 4096);
    fixture f1, f2;
    fx_init(&f1, 4096, &shared);
    fx_init(&f2, 4096, &shared);
    net_client *a = fx_welcome(&f1, 0);
    net_client *b = fx_welcome(&f2, 0);
    feed_partial(&f1, a, 4000, 2000);
    CHECK(net_partial_held(&shared) == 2048);
    feed_partial(&f2, b, 4000, 2000);
    CHECK(net_partial_held(&shared) == 4096 && !a->kill && !b->kill);
    net_client_feed(f2.srv, b, f2.buf, 100);                /* b grows to 4096: 6144 in all */
    CHECK(b->kill && b->reason == NET_DISC_PARTIAL_FRAMES); /* f2's only, so its oldest */
    CHECK(!a->kill);
    CHECK(net_partial_held(&shared) == 2048);
    fx_free(&f1);
    fx_free(&f2);
    CHECK(net_partial_held(&shared) == 0);
}

TEST_MAIN(TEST(test_budget_counts), TEST(test_buffer_grows_with_the_bytes_that_came),
          TEST(test_oldest_is_cut_first), TEST(test_a_newer_frame_goes_to_the_back),
          TEST(test_servers_share_one_budget))

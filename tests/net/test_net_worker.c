/* Unit tests of net_worker (server/net/net_worker.c): messages from several threads arrive whole
 * and in each sender's order, a socket handed over by fd is served on the worker's loop, and the
 * stop ends the thread after everything posted before it. Labelled `threads`: run under TSan too.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "net_worker.h"

enum { SENDERS = 3, PER_SENDER = 5000, KIND_COUNT = 1, KIND_SOCKET = 2 };

typedef struct order_ctx {
    uint64_t next[SENDERS]; /* next sequence number expected from each sender */
    uint64_t received;
    uint64_t bad; /* out of order or corrupted */
    bool stopped; /* NET_WORKER_STOP seen, after everything else */
    uint64_t after_stop;
} order_ctx;

static void order_handler(net_worker *w, void *p, net_worker_msg *m) {
    (void)w;
    order_ctx *c = p;
    if (m->kind == NET_WORKER_STOP) {
        c->stopped = true;
        return;
    }
    if (c->stopped) c->after_stop++;
    uint32_t sender = (uint32_t)(m->id >> 32), seq = (uint32_t)m->id;
    bool ok = sender < SENDERS && seq == c->next[sender] && m->len == 8 &&
              memcmp(m->bytes, &m->id, 8) == 0 && m->fd == -1;
    if (ok)
        c->next[sender]++;
    else
        c->bad++;
    c->received++;
    free(m->bytes);
}

typedef struct sender_arg {
    net_worker *w;
    uint32_t sender;
    int refused;
} sender_arg;

static void *sender_main(void *p) {
    sender_arg *a = p;
    for (uint32_t i = 0; i < PER_SENDER; i++) {
        uint64_t id = ((uint64_t)a->sender << 32) | i;
        net_worker_msg m = {KIND_COUNT, id, -1, (uint8_t *)&id, 8};
        if (!net_worker_post(a->w, &m)) a->refused++;
    }
    return NULL;
}

static void test_order_per_sender(void) {
    order_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    net_worker *w = net_worker_start(3, order_handler, NULL, &ctx);
    CHECK(w && net_worker_index(w) == 3);
    pthread_t t[SENDERS];
    sender_arg args[SENDERS];
    for (uint32_t i = 0; i < SENDERS; i++) {
        args[i] = (sender_arg){w, i, 0};
        CHECK(pthread_create(&t[i], NULL, sender_main, &args[i]) == 0);
    }
    for (int i = 0; i < SENDERS; i++)
        pthread_join(t[i], NULL);
    net_worker_stop(w); /* after every post above: all of them are handled first */
    for (int i = 0; i < SENDERS; i++)
        CHECK_MSG(args[i].refused == 0, "sender %d: %d posts refused", i, args[i].refused);
    CHECK_MSG(ctx.received == (uint64_t)SENDERS * PER_SENDER && ctx.bad == 0,
              "received %llu, %llu out of order", (unsigned long long)ctx.received,
              (unsigned long long)ctx.bad);
    CHECK(ctx.stopped && ctx.after_stop == 0);
}

/* The hand-off: a connection accepted on this thread is served by the worker's loop. */
typedef struct echo_ctx {
    uv_tcp_t tcp;
    bool open;
    char buf[64];
    uv_write_t wr;
    uv_buf_t out;
} echo_ctx;

static void echo_alloc(uv_handle_t *h, size_t n, uv_buf_t *b) {
    (void)n;
    echo_ctx *e = h->data;
    *b = uv_buf_init(e->buf, sizeof e->buf);
}

static void echo_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
    echo_ctx *e = s->data;
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; i++) /* answer in upper case: proof the worker read it */
        if (b->base[i] >= 'a' && b->base[i] <= 'z') b->base[i] = (char)(b->base[i] - 32);
    e->out = uv_buf_init(b->base, (unsigned)n);
    uv_write(&e->wr, s, &e->out, 1, NULL);
}

static void echo_handler(net_worker *w, void *p, net_worker_msg *m) {
    echo_ctx *e = p;
    if (m->kind == NET_WORKER_STOP) {
        if (e->open) uv_close((uv_handle_t *)&e->tcp, NULL);
        e->open = false;
        return;
    }
    if (m->kind == KIND_SOCKET && !e->open) {
        uv_tcp_init(net_worker_loop(w), &e->tcp);
        e->tcp.data = e;
        if (uv_tcp_open(&e->tcp, m->fd) == 0) {
            e->open = true;
            uv_read_start((uv_stream_t *)&e->tcp, echo_alloc, echo_read);
        } else {
            uv_close((uv_handle_t *)&e->tcp, NULL);
            close(m->fd);
        }
    }
}

static void test_socket_handed_over(void) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 4) == 0 &&
          getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
    int cfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(cfd, (struct sockaddr *)&a, sizeof a) == 0);
    int sfd = accept(lfd, NULL, NULL);
    CHECK(sfd >= 0);
    CHECK(write(cfd, "hello", 5) == 5); /* already waiting when the worker takes the socket */
    echo_ctx e;
    memset(&e, 0, sizeof e);
    net_worker *w = net_worker_start(0, echo_handler, NULL, &e);
    CHECK(w);
    net_worker_msg m = {KIND_SOCKET, 7, sfd, NULL, 0};
    CHECK(net_worker_post(w, &m));
    char got[8] = {0};
    struct timeval tv = {5, 0};
    setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t have = 0;
    while (have < 5) {
        ssize_t n = read(cfd, got + have, 5 - have);
        if (n <= 0) break;
        have += (size_t)n;
    }
    net_worker_stop(w);
    CHECK_MSG(have == 5 && memcmp(got, "HELLO", 5) == 0, "got %zu bytes '%s'", have, got);
    /* the worker closed the handed-over socket at its stop: the peer sees EOF */
    char c;
    CHECK(read(cfd, &c, 1) == 0);
    close(cfd);
    close(lfd);
}

/* net_worker_post_within (the UDP relay's bound): while the worker is busy, its inbox takes
 * messages up to max_bytes of payload and refuses the next; an unbounded post still goes in;
 * once the worker has taken its inbox, the bound has room again. */
typedef struct gate_ctx {
    pthread_mutex_t gate;  /* held by the test: the first message's handler waits on it */
    volatile int entered;  /* the first handler is running (and waiting) */
    volatile int received; /* messages handled */
} gate_ctx;

static void gate_handler(net_worker *w, void *p, net_worker_msg *m) {
    (void)w;
    gate_ctx *g = p;
    if (m->kind == NET_WORKER_STOP) return;
    if (__atomic_fetch_add(&g->entered, 1, __ATOMIC_SEQ_CST) == 0) {
        pthread_mutex_lock(&g->gate);
        pthread_mutex_unlock(&g->gate);
    }
    free(m->bytes);
    __atomic_fetch_add(&g->received, 1, __ATOMIC_SEQ_CST);
}

static void wait_for(volatile int *v, int want) {
    for (int i = 0; i < 10000 && __atomic_load_n(v, __ATOMIC_SEQ_CST) < want; i++)
        usleep(1000);
}

static void test_post_within_bound(void) {
    static gate_ctx g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.gate, NULL);
    pthread_mutex_lock(&g.gate);
    net_worker *w = net_worker_start(0, gate_handler, NULL, &g);
    CHECK(w != NULL);
    uint8_t payload[8] = {0};
    net_worker_msg m = {KIND_COUNT, 0, -1, payload, sizeof payload};
    CHECK(net_worker_post_within(w, &m, 64));
    wait_for(&g.entered, 1); /* the worker holds the first message: the inbox is empty again */
    CHECK(g.entered == 1);
    for (int i = 0; i < 8; i++)
        CHECK_MSG(net_worker_post_within(w, &m, 64), "post %d of 8 bytes within 64", i);
    CHECK_MSG(!net_worker_post_within(w, &m, 64), "a ninth 8-byte post passes the 64-byte bound");
    CHECK(net_worker_post(w, &m)); /* the other messages are not bounded */
    pthread_mutex_unlock(&g.gate);
    wait_for(&g.received, 10);
    CHECK(g.received == 10);
    CHECK(net_worker_post_within(w, &m, 64)); /* taken: room again */
    wait_for(&g.received, 11);
    net_worker_stop(w);
    CHECK(g.received == 11);
    pthread_mutex_destroy(&g.gate);
}

TEST_MAIN(TEST(test_order_per_sender), TEST(test_socket_handed_over), TEST(test_post_within_bound))

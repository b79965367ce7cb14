/* collide-client-bench-server: a stand-in server that does as little as possible, to measure the
 * load generator's own cost where collided cannot (yet) keep up with the load.
 *
 * It is NOT a collision server: it answers Hello with Welcome, SpawnBody with Spawned, Ping with
 * Pong, remembers each client's newest input_seq, and every tick (60 Hz) sends every spawned
 * client one Snapshot holding --bodies - 1 fixed neighbours plus the client's own body with its
 * last_input_seq: the same bytes and the same message rate a client of collided gets, so the
 * client's receive, scan and ack work is the real one. Snapshots are pre-encoded once; only the
 * tick and the own body are written per client. One thread, epoll, non-blocking sockets.
 *
 * Usage: collide-client-bench-server [--port N] [--bodies K] [--tick-rate HZ]
 * Prints "port=N" once listening on 127.0.0.1; runs until SIGTERM/SIGINT, then prints a summary. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "varint.h"
#include "wire.h"

#define BS_MAX_FD 65536
#define BS_OUT_CAP 16384u /* per-connection output; a snapshot that does not fit is dropped */
#define BS_IN_CAP 4096u

typedef struct bs_conn {
    bool open;               /* fd in use */
    bool spawned;            /* has a body: receives snapshots */
    uint32_t body_id;        /* its body */
    uint32_t last_seq;       /* newest input_seq received */
    uint32_t in_len;         /* bytes in in */
    uint32_t out_len;        /* bytes in out */
    uint8_t in[BS_IN_CAP];   /* partial frames */
    uint8_t out[BS_OUT_CAP]; /* not yet written */
} bs_conn;

static bs_conn *conns;
static int ep;
static volatile sig_atomic_t stop;
static uint64_t snapshots_sent, snapshots_dropped, frames_in;

static void conn_close(int fd) {
    conns[fd].open = false;
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

static void conn_flush(int fd) {
    bs_conn *c = &conns[fd];
    while (c->out_len) {
        ssize_t n = write(fd, c->out, c->out_len);
        if (n < 0) {
            if (errno == EAGAIN) break;
            conn_close(fd);
            return;
        }
        memmove(c->out, c->out + n, c->out_len - (size_t)n);
        c->out_len -= (uint32_t)n;
    }
    struct epoll_event ev = {.events = EPOLLIN | (c->out_len ? EPOLLOUT : 0u), .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static void queue_msg(int fd, const Collide__V1__ServerMessage *m) {
    bs_conn *c = &conns[fd];
    size_t body = collide__v1__server_message__get_packed_size(m);
    if (c->out_len + body + FRAME_MAX_PREFIX > BS_OUT_CAP) return;
    c->out_len += (uint32_t)frame_write_prefix((uint32_t)body, c->out + c->out_len);
    collide__v1__server_message__pack(m, c->out + c->out_len);
    c->out_len += (uint32_t)body;
}

static uint64_t tick = 1;
static uint32_t tick_rate = 60;

static void handle(int fd, const Collide__V1__ClientMessage *cm) {
    Collide__V1__ServerMessage r = COLLIDE__V1__SERVER_MESSAGE__INIT;
    Collide__V1__Welcome w = COLLIDE__V1__WELCOME__INIT;
    Collide__V1__Spawned sp = COLLIDE__V1__SPAWNED__INIT;
    Collide__V1__Pong pong = COLLIDE__V1__PONG__INIT;
    Collide__V1__Vec2 lo = COLLIDE__V1__VEC2__INIT, hi = COLLIDE__V1__VEC2__INIT;
    r.request_id = cm->request_id;
    switch (cm->msg_case) {
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO:
        lo.x = lo.y = -500.0f;
        hi.x = hi.y = 500.0f;
        w.client_id = (uint32_t)fd;
        w.protocol_version = 1;
        w.tick_rate_hz = tick_rate;
        w.tick = tick;
        w.world_min = &lo;
        w.world_max = &hi;
        w.max_speed = 10000.0f;
        w.max_bodies_per_client = 8;
        r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
        r.welcome = &w;
        queue_msg(fd, &r);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN:
        sp.body_id = 100000u + (uint32_t)fd;
        sp.position = cm->spawn->position;
        conns[fd].spawned = true;
        conns[fd].body_id = sp.body_id;
        r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED;
        r.spawned = &sp;
        queue_msg(fd, &r);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE:
        if (cm->move->input_seq > conns[fd].last_seq) conns[fd].last_seq = cm->move->input_seq;
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_PING:
        pong.client_time_us = cm->ping->client_time_us;
        pong.tick = tick;
        r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_PONG;
        r.pong = &pong;
        queue_msg(fd, &r);
        break;
    default:
        break;
    }
}

static void conn_read(int fd) {
    bs_conn *c = &conns[fd];
    for (;;) {
        ssize_t n = read(fd, c->in + c->in_len, BS_IN_CAP - c->in_len);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            conn_close(fd);
            return;
        }
        if (n < 0) break;
        c->in_len += (uint32_t)n;
        size_t off = 0, pre, body;
        frame_status st;
        while ((st = frame_peek(c->in + off, c->in_len - off, BS_IN_CAP - 8, &pre, &body)) ==
               FRAME_OK) {
            Collide__V1__ClientMessage *cm =
                collide__v1__client_message__unpack(NULL, body, c->in + off + pre);
            frames_in++;
            if (cm) {
                handle(fd, cm);
                collide__v1__client_message__free_unpacked(cm, NULL);
            }
            off += pre + body;
        }
        if (st == FRAME_TOO_LARGE) {
            conn_close(fd);
            return;
        }
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= (uint32_t)off;
        if ((size_t)n < BS_IN_CAP) break;
    }
    if (c->out_len) conn_flush(fd);
}

/* Pre-encoded BodyState entries (key + length + body) of the fixed neighbours. */
static uint8_t others[65536];
static size_t others_len;

static void build_others(uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        Collide__V1__BodyState b = COLLIDE__V1__BODY_STATE__INIT;
        Collide__V1__Vec2 p = COLLIDE__V1__VEC2__INIT, v = COLLIDE__V1__VEC2__INIT;
        b.id = 1 + i;
        p.x = (float)i * 1.7f;
        p.y = (float)i * -0.9f;
        v.x = 3.0f;
        v.y = -4.0f;
        b.position = &p;
        b.velocity = &v;
        b.last_input_seq = 1000 + i;
        uint8_t tmp[256];
        size_t n = collide__v1__body_state__pack(&b, tmp);
        others[others_len++] = WIRE_KEY(WIRE_SNAPSHOT_BODIES, WIRE_LEN);
        others_len += varint_write(others + others_len, n);
        memcpy(others + others_len, tmp, n);
        others_len += n;
    }
}

static void send_snapshots(void) {
    tick++;
    for (int fd = 0; fd < BS_MAX_FD; fd++) {
        bs_conn *c = &conns[fd];
        if (!c->open || !c->spawned) continue;
        /* own body: id, position, last_input_seq */
        uint8_t own[64], snap_head[16], msg_head[16];
        size_t ob = 0;
        own[ob++] = WIRE_KEY(WIRE_BODY_ID, WIRE_VARINT);
        ob += varint_write(own + ob, c->body_id);
        own[ob++] = WIRE_KEY(WIRE_BODY_POSITION, WIRE_LEN);
        own[ob++] = 10; /* Vec2 {x, y} as two fixed32 */
        own[ob++] = WIRE_KEY(WIRE_VEC2_X, WIRE_I32);
        memset(own + ob, 0, 4), ob += 4;
        own[ob++] = WIRE_KEY(WIRE_VEC2_Y, WIRE_I32);
        memset(own + ob, 0, 4), ob += 4;
        own[ob++] = WIRE_KEY(WIRE_BODY_LAST_INPUT_SEQ, WIRE_VARINT);
        ob += varint_write(own + ob, c->last_seq);
        uint8_t own_entry[80];
        size_t oe = 0;
        own_entry[oe++] = WIRE_KEY(WIRE_SNAPSHOT_BODIES, WIRE_LEN);
        oe += varint_write(own_entry + oe, ob);
        memcpy(own_entry + oe, own, ob);
        oe += ob;
        size_t sh = 0;
        snap_head[sh++] = WIRE_KEY(WIRE_SNAPSHOT_TICK, WIRE_VARINT);
        sh += varint_write(snap_head + sh, tick);
        size_t snap_len = sh + others_len + oe;
        size_t mh = 0;
        msg_head[mh++] = WIRE_KEY(WIRE_SERVER_SNAPSHOT, WIRE_LEN);
        mh += varint_write(msg_head + mh, snap_len);
        size_t body = mh + snap_len;
        if (c->out_len + body + FRAME_MAX_PREFIX > BS_OUT_CAP) {
            snapshots_dropped++;
            continue;
        }
        uint8_t *p = c->out + c->out_len;
        p += frame_write_prefix((uint32_t)body, p);
        memcpy(p, msg_head, mh), p += mh;
        memcpy(p, snap_head, sh), p += sh;
        memcpy(p, others, others_len), p += others_len;
        memcpy(p, own_entry, oe), p += oe;
        c->out_len = (uint32_t)(p - c->out);
        snapshots_sent++;
        conn_flush(fd);
    }
}

static void on_signal(int s) {
    (void)s;
    stop = 1;
}

int main(int argc, char **argv) {
    int port = 0, bodies = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0)
            port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--bodies") == 0)
            bodies = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--tick-rate") == 0)
            tick_rate = (uint32_t)atoi(argv[i + 1]);
    }
    if (bodies < 1 || bodies > 1000 || tick_rate < 1 || tick_rate > 1000) {
        fprintf(stderr, "usage: collide-client-bench-server [--port N] [--bodies 1..1000] "
                        "[--tick-rate HZ]\n");
        return 2;
    }
    build_others((uint32_t)bodies - 1u);
    conns = calloc(BS_MAX_FD, sizeof *conns);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (!conns || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4096) ||
        getsockname(ls, (struct sockaddr *)&a, &alen)) {
        perror("bench-server");
        return 1;
    }
    printf("port=%u\n", (unsigned)ntohs(a.sin_port));
    fflush(stdout);
    ep = epoll_create1(0);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    long ns = 1000000000L / (long)tick_rate;
    struct itimerspec its = {{0, ns}, {0, ns}};
    timerfd_settime(tfd, 0, &its, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    ev.data.fd = tfd;
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    struct epoll_event evs[256];
    while (!stop) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                int cfd;
                while ((cfd = accept(ls, NULL, NULL)) >= 0) {
                    fcntl(cfd, F_SETFL, O_NONBLOCK);
                    if (cfd >= BS_MAX_FD) {
                        close(cfd);
                        continue;
                    }
                    memset(&conns[cfd], 0, sizeof conns[cfd]);
                    conns[cfd].open = true;
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = cfd};
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
                }
            } else if (fd == tfd) {
                uint64_t expirations;
                if (read(tfd, &expirations, sizeof expirations) > 0) send_snapshots();
            } else if (conns[fd].open) {
                if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) conn_read(fd);
                if (conns[fd].open && (evs[i].events & EPOLLOUT)) conn_flush(fd);
            }
        }
    }
    printf("ticks %llu snapshots_sent %llu snapshots_dropped %llu frames_in %llu\n",
           (unsigned long long)tick, (unsigned long long)snapshots_sent,
           (unsigned long long)snapshots_dropped, (unsigned long long)frames_in);
    return 0;
}

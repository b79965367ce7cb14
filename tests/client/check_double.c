/* A test double for the server side, only where the real daemon cannot serve: `--check` must catch
 * a wrong snapshot stream, which the real daemon (rightly) never sends. It speaks just enough
 * protocol v1 for one load client: Welcome, Spawned, Pong, and snapshots that ack the intents. In
 * --mode bad the stream holds three planted violations (two moving boxes overlapping, a box sunk
 * into a static, and the client's own body jumping straight through the static between consecutive
 * ticks); in
 * --mode good the same scene without them, so the test shows the checker can pass as well.
 *
 * A spectator's SetView starts the same stream as a spawn does, so `watch --check` is tested too.
 * In --mode oversize it answers Hello with nothing but a length prefix declaring a 1 GiB frame:
 * the client must refuse it from the prefix alone.
 *
 * A Hello with `quantized` gets the same snapshots as Snapshot.packed (proto/quant.c's encoder,
 * against what was last sent), so `--check` is tested on both forms.
 *
 * Usage: check_double --mode bad|good|oversize. Prints "port=N" on stdout once listening on
 * 127.0.0.1, serves one connection, exits when it closes (or after 30 s). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "quant.h"
#include "varint.h"

#define OWN_BODY 1u
#define STATIC_BODY 100u
#define CLIENT_ID 7u

static int client_fd = -1;
static bool quantized;              /* the Hello asked for Snapshot.packed */
static quant_state sent_state[128]; /* by id: what the packed form last sent */
#define PQ (1.0 / 256.0)

static void send_msg(const Collide__V1__ServerMessage *m) {
    uint8_t buf[4096];
    size_t body = collide__v1__server_message__get_packed_size(m);
    if (body + FRAME_MAX_PREFIX > sizeof buf) abort();
    size_t pre = frame_write_prefix((uint32_t)body, buf);
    collide__v1__server_message__pack(m, buf + pre);
    size_t off = 0;
    while (off < pre + body) {
        ssize_t n = write(client_fd, buf + off, pre + body - off);
        if (n <= 0) exit(0);
        off += (size_t)n;
    }
}

typedef struct body_spec {
    uint32_t id;
    int kind;
    float x, y, half;
} body_spec;

static void send_snapshot(uint64_t tick, const body_spec *specs, size_t n, bool with_shape,
                          uint32_t last_seq) {
    Collide__V1__ServerMessage m = COLLIDE__V1__SERVER_MESSAGE__INIT;
    Collide__V1__Snapshot s = COLLIDE__V1__SNAPSHOT__INIT;
    Collide__V1__BodyState st[8], *ptrs[8];
    Collide__V1__Vec2 pos[8], half[8];
    Collide__V1__Shape shape[8];
    Collide__V1__Box box[8];
    for (size_t i = 0; i < n; i++) {
        collide__v1__body_state__init(&st[i]);
        collide__v1__vec2__init(&pos[i]);
        collide__v1__vec2__init(&half[i]);
        collide__v1__shape__init(&shape[i]);
        collide__v1__box__init(&box[i]);
        st[i].id = specs[i].id;
        pos[i].x = specs[i].x;
        pos[i].y = specs[i].y;
        st[i].position = &pos[i];
        if (specs[i].id == OWN_BODY) st[i].last_input_seq = last_seq;
        if (with_shape) {
            half[i].x = half[i].y = specs[i].half;
            box[i].half_extents = &half[i];
            shape[i].kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
            shape[i].box = &box[i];
            st[i].shape = &shape[i];
            st[i].kind = (Collide__V1__BodyKind)specs[i].kind;
            st[i].owner = specs[i].kind == COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING ? CLIENT_ID : 0;
        }
        ptrs[i] = &st[i];
    }
    s.tick = tick;
    s.n_bodies = n;
    s.bodies = ptrs;
    uint8_t packed[1024];
    if (quantized) {
        /* The same bodies as records, in ascending id order. */
        size_t order[8], len = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = i;
            while (k > 0 && specs[order[k - 1]].id > specs[i].id) {
                order[k] = order[k - 1];
                k--;
            }
            order[k] = i;
        }
        uint32_t prev = 0;
        for (size_t k = 0; k < n; k++) {
            const body_spec *b = &specs[order[k]];
            quant_state q;
            memset(&q, 0, sizeof q);
            q.px = quant_of(b->x, PQ);
            q.py = quant_of(b->y, PQ);
            q.last_input_seq = st[order[k]].last_input_seq;
            len += varint_write(packed + len, b->id - prev);
            prev = b->id;
            if (with_shape) {
                uint8_t shape_bytes[64];
                size_t sl = collide__v1__shape__pack(&shape[order[k]], shape_bytes);
                /* the filters as the float form has them (0 reads as the default) */
                const Collide__V1__BodyState *bs = &st[order[k]];
                quant_filter f = {bs->category ? bs->category : QUANT_DEFAULT_CATEGORY,
                                  bs->mask ? bs->mask : QUANT_DEFAULT_MASK, bs->sensor};
                len += quant_encode_new(&q, (uint32_t)b->kind, bs->owner, shape_bytes, sl, &f,
                                        bs->one_way, packed + len);
            } else {
                size_t r = quant_encode_change(&q, &sent_state[b->id % 128], packed + len);
                if (r == 0) packed[len++] = 0; /* flags 0: nothing changed */
                len += r;
            }
            sent_state[b->id % 128] = q;
        }
        s.n_bodies = 0;
        s.bodies = NULL;
        s.packed.data = packed;
        s.packed.len = len;
    }
    m.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SNAPSHOT;
    m.snapshot = &s;
    send_msg(&m);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The double's session, shared by the message handler and the tick loop. */
typedef struct dbl_state {
    bool oversize;     /* --mode oversize: Hello is answered by a 1 GiB length prefix */
    bool spawned;      /* a spawn or a SetView came: the snapshots flow */
    uint64_t tick;     /* the tick of the last snapshot */
    uint32_t last_seq; /* the newest input_seq, acknowledged by every snapshot */
} dbl_state;

static void send_welcome(uint32_t rid, uint64_t tick) {
    Collide__V1__ServerMessage r = COLLIDE__V1__SERVER_MESSAGE__INIT;
    Collide__V1__Welcome w = COLLIDE__V1__WELCOME__INIT;
    Collide__V1__Vec2 lo = COLLIDE__V1__VEC2__INIT, hi = COLLIDE__V1__VEC2__INIT;
    lo.x = lo.y = -50.0f;
    hi.x = hi.y = 50.0f;
    w.client_id = CLIENT_ID;
    w.protocol_version = 1;
    w.tick_rate_hz = 60;
    w.tick = tick;
    w.world_min = &lo;
    w.world_max = &hi;
    w.max_speed = 100.0f;
    w.max_bodies_per_client = 1;
    if (quantized) {
        w.position_quantum = (float)PQ;
        w.velocity_quantum = 1.0f / 64.0f;
    }
    r.request_id = rid;
    r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_WELCOME;
    r.welcome = &w;
    send_msg(&r);
}

/* One ClientMessage answered as the daemon would; false when the double must give up. */
static bool on_message(dbl_state *st, const Collide__V1__ClientMessage *cm) {
    Collide__V1__ServerMessage r = COLLIDE__V1__SERVER_MESSAGE__INIT;
    r.request_id = cm->request_id;
    Collide__V1__Spawned sp = COLLIDE__V1__SPAWNED__INIT;
    Collide__V1__Pong pong = COLLIDE__V1__PONG__INIT;
    Collide__V1__Vec2 at = COLLIDE__V1__VEC2__INIT;
    switch (cm->msg_case) {
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO:
        quantized = cm->hello->quantized;
        if (st->oversize) {
            const uint8_t gib[5] = {0x80, 0x80, 0x80, 0x80, 0x04}; /* 1 << 30 */
            return write(client_fd, gib, sizeof gib) == (ssize_t)sizeof gib;
        }
        send_welcome(cm->request_id, st->tick);
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SPAWN:
        sp.body_id = OWN_BODY;
        at.x = -5.0f;
        sp.position = &at;
        r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED;
        r.spawned = &sp;
        send_msg(&r);
        st->spawned = true;
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_SET_VIEW:
        st->spawned = true;
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_MOVE:
        if (cm->move->input_seq > st->last_seq) st->last_seq = cm->move->input_seq;
        break;
    case COLLIDE__V1__CLIENT_MESSAGE__MSG_PING:
        pong.client_time_us = cm->ping->client_time_us;
        pong.tick = st->tick;
        r.msg_case = COLLIDE__V1__SERVER_MESSAGE__MSG_PONG;
        r.pong = &pong;
        send_msg(&r);
        break;
    default:
        break;
    }
    return true;
}

/* Every whole frame of rx handled and taken out; false when the double must give up. */
static bool on_frames(dbl_state *st, uint8_t *rx, size_t *rx_len) {
    for (;;) {
        size_t pre, body;
        frame_status fs = frame_peek(rx, *rx_len, 65536, &pre, &body);
        if (fs == FRAME_TOO_LARGE) return false;
        if (fs != FRAME_OK) return true;
        Collide__V1__ClientMessage *cm = collide__v1__client_message__unpack(NULL, body, rx + pre);
        if (!cm) return false;
        bool ok = on_message(st, cm);
        collide__v1__client_message__free_unpacked(cm, NULL);
        if (!ok) return false;
        memmove(rx, rx + pre + body, *rx_len - pre - body);
        *rx_len -= pre + body;
    }
}

/* Listens on an ephemeral loopback port, prints "port=N", accepts one connection into client_fd.
 * Returns the listening socket, or -1. */
static int accept_one(void) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) != 0) {
        perror("check_double: listen");
        return -1;
    }
    printf("port=%u\n", (unsigned)ntohs(a.sin_port));
    fflush(stdout);
    struct pollfd pl = {ls, POLLIN, 0};
    if (poll(&pl, 1, 30000) <= 0) return -1;
    client_fd = accept(ls, NULL, NULL);
    return client_fd < 0 ? -1 : ls;
}

int main(int argc, char **argv) {
    bool bad = argc == 3 && strcmp(argv[1], "--mode") == 0 && strcmp(argv[2], "bad") == 0;
    bool good = argc == 3 && strcmp(argv[1], "--mode") == 0 && strcmp(argv[2], "good") == 0;
    bool oversize = argc == 3 && strcmp(argv[1], "--mode") == 0 && strcmp(argv[2], "oversize") == 0;
    if (!bad && !good && !oversize) {
        fprintf(stderr, "usage: check_double --mode bad|good|oversize\n");
        return 2;
    }
    int ls = accept_one();
    if (ls < 0) return 1;

    /* Scene: a static 2x2 box at the origin, our body at (-5, 0), two more movers. */
    body_spec scene[4] = {
        {STATIC_BODY, COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC, 0.0f, 0.0f, 1.0f},
        {OWN_BODY, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, -5.0f, 0.0f, 0.5f},
        {2, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, 5.0f, 3.0f, 0.5f},
        {3, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, bad ? 5.6f : 7.0f, 3.0f, 0.5f},
    };
    body_spec sunk = {4, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, bad ? 1.3f : 3.0f,
                      bad ? 0.0f : -3.0f, 0.5f};

    static uint8_t rx[65536];
    size_t rx_len = 0;
    dbl_state st = {oversize, false, 1000, 0};
    uint64_t step = 0, next_tick = now_ms() + 16, deadline = now_ms() + 30000;
    while (now_ms() < deadline) {
        struct pollfd p = {client_fd, POLLIN, 0};
        int wait = (int)(next_tick > now_ms() ? next_tick - now_ms() : 0);
        if (poll(&p, 1, wait) > 0) {
            ssize_t n = read(client_fd, rx + rx_len, sizeof rx - rx_len);
            if (n <= 0) break;
            rx_len += (size_t)n;
            if (!on_frames(&st, rx, &rx_len)) return 1;
        }
        if (now_ms() < next_tick) continue;
        next_tick += 16;
        st.tick++;
        if (!st.spawned) continue;
        if (step == 0) {
            body_spec all[5] = {scene[0], scene[1], scene[2], scene[3], sunk};
            send_snapshot(st.tick, all, 5, true, st.last_seq);
        } else if (step == 1) {
            /* The next tick: our body either stays on its side or jumps through the static. */
            body_spec own = scene[1];
            own.x = bad ? 3.0f : -4.9f;
            scene[1] = own;
            send_snapshot(st.tick, &own, 1, false, st.last_seq);
        } else {
            send_snapshot(st.tick, &scene[1], 1, false, st.last_seq);
        }
        step++;
    }
    close(client_fd);
    close(ls);
    return 0;
}

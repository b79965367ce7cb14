/* bench_parse: the daemon's read path per frame (issue 12 finding 1, "parse-cost amplification"):
 * frames of each kind are fed to a welcomed client of a real net_server through net_client_feed,
 * in process and without sockets, the replies dropped as if written. For each kind: ns per frame
 * and ns per KB of frame, the median of RUNS runs, and how the server answered.
 *
 * The kinds are the worst frames we could build against protobuf-c's unpack next to a plain
 * MoveIntent: 21,000 empty Vec2 in one polygon (refused by the vertex count before unpack), a
 * SpawnBody of 20,000 empty shapes (the count walks them all, unpack merges them), 20,000 empty
 * SetViews merged into one, a SetView with 20,000 empty centers, a Ping with 20,000 unknown
 * fields, one 60,000-byte unknown field, a 60,000-byte Hello.name and a run of start-group tags
 * (protobuf-c refuses groups). Both buckets are set out of reach so every frame is parsed.
 *
 * Usage: bench_parse [frames_per_run (default 2000)] [runs (default 5)] [arena|malloc] [KIND]
 * "malloc" unpacks with protobuf-c's default allocator instead of the parse arena (no budget), as
 * before the arena, for comparison. KIND: only the kinds whose name contains it. One JSON line per
 * kind. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide.pb-c.h"
#include "frame.h"
#include "net_log.h"
#include "net_session.h"
#include "net_test_util.h"
#include "wire.h"
#include "net_tick.h"

#define MAX_BODY 65000

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static size_t put_len_hdr(uint8_t *o, uint32_t field, size_t n) {
    o[0] = WIRE_KEY(field, WIRE_LEN);
    return 1 + varint_write(o + 1, n);
}

/* One framed ClientMessage. */
typedef struct frame_buf {
    uint8_t data[MAX_BODY + 64];
    size_t len;
} frame_buf;

/* Wraps body (len bytes at b + off) in LEN field `field`: writes the header just before it. */
static size_t wrap(uint8_t *b, size_t *off, size_t len, uint32_t field) {
    uint8_t hdr[8];
    size_t h = put_len_hdr(hdr, field, len);
    *off -= h;
    memcpy(b + *off, hdr, h);
    return len + h;
}

/* Builds count repetitions of elem (elen bytes), wrapped in the LEN fields path[0..depth) from the
 * innermost out, after `lead` bytes inside the innermost; then request_id and the frame prefix. */
static void build(frame_buf *f, const uint8_t *lead, size_t lead_len, const uint8_t *elem,
                  size_t elen, size_t count, const uint32_t *path, int depth) {
    static uint8_t b[MAX_BODY + 256];
    size_t off = 128; /* room for the headers in front */
    size_t len = 0;
    memcpy(b + off, lead, lead_len);
    len += lead_len;
    for (size_t i = 0; i < count; i++, len += elen)
        memcpy(b + off + len, elem, elen);
    for (int d = depth - 1; d >= 0; d--)
        len = wrap(b, &off, len, path[d]);
    uint8_t rid[2] = {WIRE_KEY(WIRE_CLIENT_REQUEST_ID, WIRE_VARINT), 7};
    off -= 2;
    memcpy(b + off, rid, 2);
    len += 2;
    f->len = frame_write_prefix((uint32_t)len, f->data);
    memcpy(f->data + f->len, b + off, len);
    f->len += len;
}

typedef struct kind {
    const char *name;
    frame_buf frame;
} kind;

int main(int argc, char **argv) {
    int per_run = argc > 1 ? atoi(argv[1]) : 2000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    bool use_malloc = argc > 3 && strcmp(argv[3], "malloc") == 0;
    const char *only = argc > 4 ? argv[4] : NULL;
    if (per_run < 1 || runs < 1) return 2;
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    cfg.rate_limit = 1e7f;        /* out of reach: every frame is parsed */
    cfg.rate_limit_bytes = 1e10f; /* likewise */
    world_config wc;
    world_config_default(&wc);
    world *w = world_create(&wc);
    net_server *srv = net_server_create(&cfg, w);
    if (!w || !srv) return 1;
    if (use_malloc) srv->pb_alloc = NULL;
    srv->now_us = 1000000;
    static net_client c;
    net_client_open(srv, &c, "bench");
    uint8_t buf[256];
    net_client_feed(srv, &c, buf, tu_hello(1, 1, NULL, buf, sizeof buf));
    net_client_feed(
        srv, &c, buf,
        tu_spawn_box(2, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, 0, 0, 1, 1, buf, sizeof buf));
    uint32_t body = 0;
    {
        tu_msgs m;
        tu_take(&c, &m);
        if (m.count == 2 && m.m[1]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            body = m.m[1]->spawned->body_id;
        tu_free(&m);
    }
    if (!body) return 1;

    static kind kinds[9];
    int nk = 0;
    const uint8_t empty_len[2] = {WIRE_KEY(1, WIRE_LEN), 0};
    const uint8_t unknown_varint[2] = {WIRE_KEY(15, WIRE_VARINT), 0};
    const uint8_t start_group[1] = {WIRE_KEY(15, 3)};
    const uint8_t spawn_lead[2] = {WIRE_KEY(1, WIRE_VARINT), 2}; /* kind MOVING */
    const uint8_t ping_lead[2] = {WIRE_KEY(1, WIRE_VARINT), 1};  /* client_time_us */
    static uint8_t filler[MAX_BODY];
    memset(filler, 'x', sizeof filler);

    kinds[nk].name = "move_intent";
    kinds[nk].frame.len =
        tu_move(7, body, 1, 1, 0, kinds[nk].frame.data, sizeof kinds[nk].frame.data);
    nk++;
    {
        /* spawn { kind, shape { polygon { 21000 x vertices {} } } } */
        static uint8_t inner[MAX_BODY];
        size_t n = 0;
        memcpy(inner, spawn_lead, 2);
        n = 2;
        size_t poly = 2 * 21000;
        size_t shape = 1 + varint_size(poly) + poly; /* polygon's key, length, vertices */
        n += put_len_hdr(inner + n, WIRE_SPAWN_SHAPE, shape);
        n += put_len_hdr(inner + n, WIRE_SHAPE_POLYGON, poly);
        const uint32_t path[] = {WIRE_CLIENT_SPAWN};
        kinds[nk].name = "polygon_21000_empty_vec2";
        build(&kinds[nk].frame, inner, n, empty_len, 2, 21000, path, 1);
        nk++;
    }
    {
        /* spawn { kind, 20000 x shape {} }: the vertex count walks every shape, then unpack merges
         * them */
        const uint8_t shape[2] = {WIRE_KEY(WIRE_SPAWN_SHAPE, WIRE_LEN), 0};
        const uint32_t path[] = {WIRE_CLIENT_SPAWN};
        kinds[nk].name = "spawn_shape_x20000_merged";
        build(&kinds[nk].frame, spawn_lead, 2, shape, 2, 20000, path, 1);
        nk++;
    }
    {
        /* 20,000 empty set_view (field 15) at the top level: merged into one by protobuf-c */
        uint8_t sv[2] = {WIRE_KEY(15, WIRE_LEN), 0};
        kinds[nk].name = "setview_x20000_merged";
        build(&kinds[nk].frame, NULL, 0, sv, 2, 20000, NULL, 0);
        nk++;
    }
    {
        const uint32_t path[] = {15}; /* set_view { 20000 x center {} } */
        kinds[nk].name = "setview_center_x20000";
        build(&kinds[nk].frame, NULL, 0, empty_len, 2, 20000, path, 1);
        nk++;
    }
    {
        const uint32_t path[] = {14}; /* ping { client_time_us, 20000 x unknown varint } */
        kinds[nk].name = "ping_20000_unknown_fields";
        build(&kinds[nk].frame, ping_lead, 2, unknown_varint, 2, 20000, path, 1);
        nk++;
    }
    {
        /* ping { client_time_us, one unknown LEN field of 60,000 bytes } */
        static uint8_t lead[16];
        memcpy(lead, ping_lead, 2);
        size_t n = 2 + put_len_hdr(lead + 2, 15, 60000);
        const uint32_t path[] = {14};
        kinds[nk].name = "ping_60000_byte_unknown";
        build(&kinds[nk].frame, lead, n, filler, 60000, 1, path, 1);
        nk++;
    }
    {
        /* hello { name: 60,000 bytes }: unpacked, then "already said Hello" */
        static uint8_t lead[16];
        size_t n = put_len_hdr(lead, 2, 60000);
        const uint32_t path[] = {WIRE_CLIENT_HELLO};
        kinds[nk].name = "hello_60000_byte_name";
        build(&kinds[nk].frame, lead, n, filler, 60000, 1, path, 1);
        nk++;
    }
    {
        const uint32_t path[] = {14}; /* ping { 30000 x start group } */
        kinds[nk].name = "ping_30000_start_groups";
        build(&kinds[nk].frame, NULL, 0, start_group, 1, 30000, path, 1);
        nk++;
    }

    double *ns = calloc((size_t)runs, sizeof *ns);
    for (int k = 0; k < nk; k++) {
        const frame_buf *f = &kinds[k].frame;
        if (only && !strstr(kinds[k].name, only)) continue;
        /* how it is answered: one frame, its reply */
        net_client_feed(srv, &c, f->data, f->len);
        char answer[96] = "no reply";
        tu_msgs m;
        tu_take(&c, &m);
        if (m.count > 0 && m.m[0]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_ERROR)
            snprintf(answer, sizeof answer, "error %d: %s", (int)m.m[0]->error->code,
                     m.m[0]->error->message);
        else if (m.count > 0)
            snprintf(answer, sizeof answer, "msg case %d", (int)m.m[0]->msg_case);
        tu_free(&m);
        srv->arena.high_water = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ns();
            for (int i = 0; i < per_run; i++) {
                net_client_feed(srv, &c, f->data, f->len);
                c.out.len = 0; /* replies dropped as if written */
            }
            ns[r] = (now_ns() - t0) / per_run;
            while (net_server_pop_dirty(srv)) {
            }
        }
        qsort(ns, (size_t)runs, sizeof *ns, cmp_double);
        double med = ns[runs / 2];
        printf("{\"kind\":\"%s\",\"alloc\":\"%s\",\"frame_bytes\":%zu,\"ns_per_frame\":%.0f,"
               "\"ns_per_kb\":%.0f,\"min_ns_per_frame\":%.0f,\"arena_high_water\":%zu,"
               "\"answer\":\"%s\"}\n",
               kinds[k].name, use_malloc ? "malloc" : "arena", f->len, med,
               med * 1024.0 / (double)f->len, ns[0], srv->arena.high_water, answer);
        fflush(stdout);
    }
    free(ns);
    net_client_release(srv, &c);
    net_server_destroy(srv);
    world_destroy(w);
    return 0;
}

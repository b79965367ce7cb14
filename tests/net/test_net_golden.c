/* The golden session (issue 29): a scripted session through the socket-free server, every byte
 * each client is sent compared with a recording made before server/net was restructured. The
 * restructuring must not change the wire; this test is how it shows it did not.
 *
 * The script (run_script): six clients over one world of 60 Hz, 60 ticks at a controlled clock:
 *  - admin:    admin token, all_events, float snapshots of the whole world; spawns a static of
 *              every shape (box, triangle, circle, a box turned 0.5 rad), a static sensor and a
 *              mover of its own, moves that mover;
 *  - player:   float snapshots of the default view, then a SetView, then the default again;
 *              movers of every shape (a pentagon spawned at 0.7 rad and turning); a box runs into
 *              the wall (contact begin, later end), a circle crosses the sensor (sensor begin and
 *              end) and is despawned, a box spawned late meets another mover; MoveIntents with a
 *              failing item (NOT_FOUND at index 2, FORBIDDEN at 5, one stale item); the three
 *              queries (RayCast all, OverlapQuery with sensors, ShapeCast first), a RayCast at a
 *              past tick and one past --history-ms; Ping; the errors of a static spawn, a bad
 *              shape, a frame that does not unpack and a despawn of an unknown body;
 *  - quant:    Hello.snapshot_rate_hz 20 and quantized: Snapshot.packed every third tick;
 *  - ws:       the WebSocket transport (net_client_feed, no socket): the 101, a spawn, a move, a
 * Ping, its frames, and at the end the close frame after the Goodbye;
 *  - leaver:   spawns a mover and disconnects at tick 30 (the others see the body removed);
 *  - intruder: sends a Ping before Hello: UNAUTHENTICATED, fatal, closed.
 * Then the drain: Goodbye to all, flushed, closed. Output is taken the way net_daemon.c takes it
 * (net_server_pop_dirty, net_client_take_output, net_client_written), after every step.
 *
 * The recording is tests/net/golden/<client>.bin, one file per client: the concatenation of the
 * bytes it was sent, in order (COLLIDE_NET_GOLDEN_DIR). On a mismatch the test names the client,
 * the first byte that differs, the frame holding it (index, message, request id, tick) in both
 * streams, and the script step that produced it.
 *
 * Determinism: the clock, the wall clock (Pong.server_time_us) and every input are fixed; the
 * test computes no float and calls no libm (every coordinate is a literal, so no compiler folds
 * a sinf its own way). The server's floats do not depend on the compiler over this run: the
 * build has -ffp-contract=off, and rotations use geom_rot.c's polynomial, not libm. One
 * recording serves every build: the same bytes came out of gcc 12 and clang 14, Release, ASan
 * and TSan (scripts/test builds Release with gcc, the sanitizers with clang). Should a compiler
 * ever disagree, find the float that differs (COLLIDE_GOLDEN_DUMP below) rather than keep a
 * recording per compiler: the run is short (60 ticks) so that it does not drift.
 *
 * COLLIDE_GOLDEN_DUMP=1 lists every frame sent, with its script step.
 *
 * Regenerating: COLLIDE_GOLDEN_WRITE=1 ./test_net_golden writes the files instead of comparing.
 * Only for an intentional change of the wire (a new field, a protocol version), never to make a
 * refactor pass: a refactor that changes these bytes changed the protocol. Commit the new files
 * with the change that explains them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "net_log.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "net_transport.h"
#include "net_ws.h"

#ifndef COLLIDE_NET_GOLDEN_DIR
#error "COLLIDE_NET_GOLDEN_DIR: the directory of the recordings (tests/net/CMakeLists.txt)"
#endif

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name
#define C(name) COLLIDE__V1__CLIENT_MESSAGE__MSG_##name
#define E(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name
#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING
#define STATIC COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC

#define TICKS 60
#define TICK_US 16667u                    /* one tick of 60 Hz, to the microsecond */
#define START_US 1000000u                 /* the monotonic clock at the start */
#define WALL_BASE_US 1700000000000000ull  /* the wall clock is this plus the monotonic one */
#define MAX_MARKS 256                     /* script steps that produced output, per client */
#define MAX_FRAMES 1024                   /* frames one client's stream may hold */
#define WS_KEY "dGhlIHNhbXBsZSBub25jZQ==" /* RFC 6455's sample key: a fixed Accept */

enum { ADMIN, PLAYER, QUANT, WS, LEAVER, INTRUDER, NCLIENTS };
static const char *const client_names[NCLIENTS] = {"admin", "player", "quant",
                                                   "ws",    "leaver", "intruder"};

/* Where one script step's output to a client began: names the step behind a differing byte. */
typedef struct mark {
    size_t offset;  /* first byte of the step's output in the client's stream */
    char label[40]; /* the step, as the script named it */
} mark;

/* Everything one client was sent, in order. */
typedef struct recording {
    net_buf bytes;         /* the stream */
    mark marks[MAX_MARKS]; /* where each step's output began, in order */
    size_t mark_count;     /* entries in marks */
    unsigned last_step;    /* the step of the last mark (session.step_no) */
    bool closed;           /* the server closed it (NET_IO_CLOSE) and it was released */
    bool cut;              /* ... or cut it (NET_IO_CUT): never expected here */
} recording;

typedef struct session {
    world *w;                     /* 200 x 200 units, 64 bodies, 60 Hz */
    net_server *srv;              /* the server under test */
    net_client c[NCLIENTS];       /* the clients, indexed by the enum above */
    bool open[NCLIENTS];          /* registered and not yet released */
    recording rec[NCLIENTS];      /* what each was sent */
    char step[40];                /* the step being run: labels the output it produces */
    unsigned step_no;             /* increments with each step */
    uint64_t now_us;              /* the monotonic clock the server was last given */
    uint8_t buf[4096];            /* a framed ClientMessage being built */
    uint8_t wsbuf[4096 + 16];     /* the same as a masked WebSocket frame (the ws client) */
    uint32_t box, circle, pent;   /* the player's movers (ids from their Spawned replies) */
    uint32_t late_box;            /* the player's box spawned at tick 50 */
    uint32_t admin_mover;         /* the admin's own mover */
    uint32_t ws_box, leaver_body; /* the ws client's and the leaver's movers */
} session;

/* ---- Building ClientMessages ----------------------------------------------------------------- */

/* A Shape and the sub-messages it points to, built in place. */
typedef struct pb_shape {
    Collide__V1__Shape shape;     /* what SpawnBody / queries point at */
    Collide__V1__Box box;         /* a box's */
    Collide__V1__Circle circle;   /* a circle's */
    Collide__V1__Polygon polygon; /* a polygon's */
    Collide__V1__Vec2 half;       /* the box's half extents */
    Collide__V1__Vec2 v[8];       /* the polygon's vertices */
    Collide__V1__Vec2 *vp[8];     /* pointers to them, for Polygon.vertices */
} pb_shape;

static Collide__V1__Vec2 pb_vec(float x, float y) {
    Collide__V1__Vec2 v = COLLIDE__V1__VEC2__INIT;
    v.x = x;
    v.y = y;
    return v;
}

static Collide__V1__Shape *pb_box(pb_shape *s, float hx, float hy) {
    *s = (pb_shape){.shape = COLLIDE__V1__SHAPE__INIT, .box = COLLIDE__V1__BOX__INIT};
    s->half = pb_vec(hx, hy);
    s->box.half_extents = &s->half;
    s->shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
    s->shape.box = &s->box;
    return &s->shape;
}

static Collide__V1__Shape *pb_circle(pb_shape *s, float r) {
    *s = (pb_shape){.shape = COLLIDE__V1__SHAPE__INIT, .circle = COLLIDE__V1__CIRCLE__INIT};
    s->circle.radius = r;
    s->shape.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
    s->shape.circle = &s->circle;
    return &s->shape;
}

/* n vertices (at most 8) from xy[2 * i], xy[2 * i + 1]. */
static Collide__V1__Shape *pb_polygon(pb_shape *s, const float *xy, size_t n) {
    *s = (pb_shape){.shape = COLLIDE__V1__SHAPE__INIT, .polygon = COLLIDE__V1__POLYGON__INIT};
    for (size_t i = 0; i < n; i++) {
        s->v[i] = pb_vec(xy[2 * i], xy[2 * i + 1]);
        s->vp[i] = &s->v[i];
    }
    s->polygon.n_vertices = n;
    s->polygon.vertices = s->vp;
    s->shape.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
    s->shape.polygon = &s->polygon;
    return &s->shape;
}

/* What a SpawnBody carries besides its shape. */
typedef struct spawn_args {
    Collide__V1__BodyKind kind; /* MOVING or STATIC */
    float x, y;                 /* position */
    float angle;                /* initial angle, radians */
    bool sensor;                /* a sensor (category and mask stay default) */
} spawn_args;

static size_t msg_spawn(uint32_t rid, const Collide__V1__Shape *shape, spawn_args a, uint8_t *out,
                        size_t cap) {
    Collide__V1__Vec2 pos = pb_vec(a.x, a.y);
    Collide__V1__SpawnBody s = COLLIDE__V1__SPAWN_BODY__INIT;
    s.kind = a.kind;
    s.shape = (Collide__V1__Shape *)shape;
    s.position = &pos;
    s.angle = a.angle;
    s.sensor = a.sensor;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(SPAWN);
    m.spawn = &s;
    return tu_frame(&m, out, cap);
}

/* Hello as named, with the admin token "adm" when admin, and the 1.1 fields. */
typedef struct hello_args {
    const char *name; /* Hello.name */
    bool admin;       /* present the admin token */
    bool all_events;  /* Hello.all_events */
    uint32_t rate_hz; /* Hello.snapshot_rate_hz */
    bool quantized;   /* Hello.quantized */
} hello_args;

static size_t msg_hello(uint32_t rid, hello_args a, uint8_t *out, size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)a.name;
    h.token = (char *)(a.admin ? "adm" : "");
    h.all_events = a.all_events;
    h.snapshot_rate_hz = a.rate_hz;
    h.quantized = a.quantized;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(HELLO);
    m.hello = &h;
    return tu_frame(&m, out, cap);
}

/* MoveIntents of n items: body ids, input_seqs and velocities (vxy[2 * i], vxy[2 * i + 1]). */
static size_t msg_batch(uint32_t rid, const uint32_t *ids, const uint32_t *seqs, const float *vxy,
                        size_t n, uint8_t *out, size_t cap) {
    Collide__V1__MoveIntent items[8], *ptrs[8];
    Collide__V1__Vec2 v[8];
    for (size_t i = 0; i < n && i < 8; i++) {
        Collide__V1__MoveIntent z = COLLIDE__V1__MOVE_INTENT__INIT;
        v[i] = pb_vec(vxy[2 * i], vxy[2 * i + 1]);
        z.body_id = ids[i];
        z.input_seq = seqs[i];
        z.velocity = &v[i];
        items[i] = z;
        ptrs[i] = &items[i];
    }
    Collide__V1__MoveIntents b = COLLIDE__V1__MOVE_INTENTS__INIT;
    b.n_intents = n < 8 ? n : 8;
    b.intents = ptrs;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(MOVE_BATCH);
    m.move_batch = &b;
    return tu_frame(&m, out, cap);
}

static size_t msg_ray(uint32_t rid, float ox, float oy, float tx, float ty, bool all,
                      uint64_t at_tick, uint8_t *out, size_t cap) {
    Collide__V1__Vec2 o = pb_vec(ox, oy), t = pb_vec(tx, ty);
    Collide__V1__RayCast r = COLLIDE__V1__RAY_CAST__INIT;
    r.origin = &o;
    r.translation = &t;
    r.all = all;
    r.at_tick = at_tick;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(RAY_CAST);
    m.ray_cast = &r;
    return tu_frame(&m, out, cap);
}

/* OverlapQuery of shape at (x, y), sensors included. */
static size_t msg_overlap(uint32_t rid, const Collide__V1__Shape *shape, float x, float y,
                          uint8_t *out, size_t cap) {
    Collide__V1__Vec2 p = pb_vec(x, y);
    Collide__V1__QueryFilter f = COLLIDE__V1__QUERY_FILTER__INIT;
    f.include_sensors = true;
    Collide__V1__OverlapQuery q = COLLIDE__V1__OVERLAP_QUERY__INIT;
    q.shape = (Collide__V1__Shape *)shape;
    q.position = &p;
    q.filter = &f;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(OVERLAP);
    m.overlap = &q;
    return tu_frame(&m, out, cap);
}

/* ShapeCast of shape from (x, y), turned by angle, along (tx, ty); the first hit. */
static size_t msg_shape_cast(uint32_t rid, const Collide__V1__Shape *shape, float x, float y,
                             float angle, float tx, float ty, uint8_t *out, size_t cap) {
    Collide__V1__Vec2 p = pb_vec(x, y), t = pb_vec(tx, ty);
    Collide__V1__ShapeCast q = COLLIDE__V1__SHAPE_CAST__INIT;
    q.shape = (Collide__V1__Shape *)shape;
    q.position = &p;
    q.angle = angle;
    q.translation = &t;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = rid;
    m.msg_case = C(SHAPE_CAST);
    m.shape_cast = &q;
    return tu_frame(&m, out, cap);
}

/* ---- The session: clients in, output out ------------------------------------------------------
 */

/* Names the step that runs next and sets the clock (the wall clock follows the monotonic one). */
static void set_step(session *s, const char *label, int tick) {
    s->step_no++;
    if (tick >= 0)
        snprintf(s->step, sizeof s->step, "%s %d", label, tick);
    else
        snprintf(s->step, sizeof s->step, "%s", label);
    net_server_set_clock(s->srv, s->now_us, WALL_BASE_US + s->now_us);
}

static void record(session *s, int ci, const net_buf *wire) {
    recording *r = &s->rec[ci];
    if (r->mark_count == 0 || r->last_step != s->step_no) {
        if (r->mark_count < MAX_MARKS) {
            r->marks[r->mark_count].offset = r->bytes.len;
            snprintf(r->marks[r->mark_count].label, sizeof r->marks[0].label, "%s", s->step);
            r->mark_count++;
        }
        r->last_step = s->step_no;
    }
    if (!net_buf_append(&r->bytes, wire->data, wire->len)) abort(); /* a test machine's OOM */
}

/* What net_daemon.c does between reads: every dirty client's output written (and recorded), the
 * clients the server is done with closed and released. */
static void flush(session *s) {
    net_client *c;
    while ((c = net_server_pop_dirty(s->srv)) != NULL) {
        int ci = (int)(c - s->c);
        net_io io = net_client_next_io(c);
        if (io == NET_IO_WRITE) {
            net_buf wire = {0};
            net_client_take_output(c, &wire);
            record(s, ci, &wire);
            net_buf_free(&wire);
            net_client_written(s->srv, c); /* marks it dirty again if it must close */
        } else if (io == NET_IO_CLOSE || io == NET_IO_CUT) {
            s->rec[ci].closed = io == NET_IO_CLOSE;
            s->rec[ci].cut = io == NET_IO_CUT;
            net_client_close(s->srv, c, NET_DISC_CLIENT_CLOSED);
            s->open[ci] = false;
        }
    }
}

/* Sends the n framed bytes in s->buf from client ci in its transport, then flushes. */
static void send_buf(session *s, int ci, size_t n) {
    net_client *c = &s->c[ci];
    if (!s->open[ci] || n == 0) return;
    if (c->transport == &net_ws_transport) {
        size_t pl = 0, bl = 0;
        if (frame_peek(s->buf, n, UINT32_MAX, &pl, &bl) != FRAME_OK) abort(); /* a test bug */
        net_client_feed(s->srv, c, s->wsbuf, tu_ws_frame(0x2, true, s->buf + pl, bl, s->wsbuf));
    } else {
        net_client_feed(s->srv, c, s->buf, n);
    }
    flush(s);
}

/* Opens client ci (a WebSocket one after its upgrade request) and sends its Hello. */
static void connect_client(session *s, int ci, hello_args h, bool ws) {
    net_client *c = &s->c[ci];
    if (ws) c->transport = &net_ws_transport;
    char addr[32];
    snprintf(addr, sizeof addr, "10.0.0.%d:%d", ci + 1, 40000 + ci);
    if (!net_client_open(s->srv, c, addr)) abort();
    s->open[ci] = true;
    if (ws) {
        static const char upgrade[] = "GET /v1 HTTP/1.1\r\nHost: collide.test\r\n"
                                      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                      "Sec-WebSocket-Key: " WS_KEY "\r\n"
                                      "Sec-WebSocket-Protocol: collide.v1\r\n"
                                      "Sec-WebSocket-Version: 13\r\n\r\n";
        net_client_feed(s->srv, c, (const uint8_t *)upgrade, sizeof upgrade - 1);
        flush(s);
    }
    if (h.name) send_buf(s, ci, msg_hello(1, h, s->buf, sizeof s->buf));
}

/* ---- Reading streams back: frames and what they are ----------------------------------------- */

/* One frame of a client's stream. */
typedef struct frame_span {
    size_t off;      /* where the frame starts in the stream */
    size_t len;      /* its length, header included */
    size_t body;     /* where its payload (a ServerMessage for opcode 2) starts */
    size_t body_len; /* payload bytes */
    int opcode;      /* WebSocket opcode; 2 for a length-prefixed frame; -1 for the HTTP 101 */
} frame_span;

/* A WebSocket server frame's header at p (n bytes left): header length and payload length, or
 * false when incomplete or masked (a server never masks). */
static bool ws_header(const uint8_t *p, size_t n, size_t *hlen, size_t *plen) {
    if (n < 2 || (p[1] & 0x80)) return false;
    size_t len = p[1] & 0x7f, h = 2;
    if (len >= 126) {
        size_t extra = len == 126 ? 2 : 8;
        if (n < 2 + extra) return false;
        len = 0;
        for (size_t i = 0; i < extra; i++)
            len = len << 8 | p[2 + i];
        h += extra;
    }
    if (n - h < len) return false;
    *hlen = h;
    *plen = len;
    return true;
}

/* Splits a stream (a WebSocket one: the HTTP response first) into frames; returns their count.
 * *parsed is the bytes covered: short of n when the stream ends in a partial frame. */
static size_t split_frames(const uint8_t *p, size_t n, bool ws, frame_span *out, size_t max,
                           size_t *parsed) {
    size_t off = 0, k = 0;
    if (ws && n >= 9 && memcmp(p, "HTTP/1.1 ", 9) == 0) {
        size_t len = n; /* up to the blank line that ends the headers */
        for (size_t i = 0; i + 4 <= n && len == n; i++)
            if (memcmp(p + i, "\r\n\r\n", 4) == 0) len = i + 4;
        if (k < max) out[k++] = (frame_span){0, len, 0, len, -1};
        off = len;
    }
    while (off < n && k < max) {
        size_t hl = 0, bl = 0;
        int op = 2;
        if (ws) {
            if (!ws_header(p + off, n - off, &hl, &bl)) break;
            op = p[off] & 0x0f;
        } else if (frame_peek(p + off, n - off, UINT32_MAX, &hl, &bl) != FRAME_OK) {
            break;
        }
        out[k++] = (frame_span){off, hl + bl, off + hl, bl, op};
        off += hl + bl;
    }
    *parsed = off;
    return k;
}

static const char *msg_case_name(const tu_smsg *m) {
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(
        &collide__v1__server_message__descriptor, (unsigned)m->msg_case);
    return f ? f->name : "?";
}

/* One line saying what frame f of stream p is: its message, request id, tick or error. */
static void describe_frame(const uint8_t *p, const frame_span *f, char *out, size_t cap) {
    if (f->opcode == -1) {
        snprintf(out, cap, "the HTTP response (%zu bytes)", f->len);
        return;
    }
    if (f->opcode == 0x8) {
        unsigned code = f->body_len >= 2 ? (unsigned)p[f->body] << 8 | p[f->body + 1] : 0;
        snprintf(out, cap, "a WebSocket close frame, code %u", code);
        return;
    }
    if (f->opcode != 0x2) {
        snprintf(out, cap, "a WebSocket frame of opcode %d", f->opcode);
        return;
    }
    tu_smsg *m = collide__v1__server_message__unpack(NULL, f->body_len, p + f->body);
    if (!m) {
        snprintf(out, cap, "a frame of %zu bytes that does not unpack", f->len);
        return;
    }
    uint64_t tick = m->msg_case == S(SNAPSHOT)       ? m->snapshot->tick
                    : m->msg_case == S(QUERY_RESULT) ? m->query_result->tick
                    : m->msg_case == S(PONG)         ? m->pong->tick
                                                     : 0;
    int n =
        snprintf(out, cap, "%s (request_id %u, %zu bytes", msg_case_name(m), m->request_id, f->len);
    if (n > 0 && (size_t)n < cap && tick)
        n += snprintf(out + n, cap - (size_t)n, ", tick %llu", (unsigned long long)tick);
    if (n > 0 && (size_t)n < cap && m->msg_case == S(ERROR))
        n += snprintf(out + n, cap - (size_t)n, ", code %d, index %u: %s", (int)m->error->code,
                      m->error->index, m->error->message);
    if (n > 0 && (size_t)n < cap) snprintf(out + n, cap - (size_t)n, ")");
    collide__v1__server_message__free_unpacked(m, NULL);
}

/* The frame of stream p (n bytes) holding byte `at`; its index, or the count when past the end. */
static size_t frame_at(const uint8_t *p, size_t n, bool ws, size_t at, frame_span *f) {
    static frame_span spans[MAX_FRAMES];
    size_t parsed = 0, k = split_frames(p, n, ws, spans, MAX_FRAMES, &parsed);
    for (size_t i = 0; i < k; i++) {
        if (at < spans[i].off + spans[i].len) {
            *f = spans[i];
            return i;
        }
    }
    return k;
}

/* The script step whose output holds byte `at` of a client's stream as sent now. */
static const char *step_at(const recording *r, size_t at) {
    const char *label = "?";
    for (size_t i = 0; i < r->mark_count && r->marks[i].offset <= at; i++)
        label = r->marks[i].label;
    return label;
}

/* The body id of the Spawned answering request rid among what client ci was sent during the
 * current step (0: none). */
static uint32_t spawned_id(session *s, int ci, uint32_t rid) {
    const recording *r = &s->rec[ci];
    if (r->mark_count == 0 || r->last_step != s->step_no) return 0;
    size_t from = r->marks[r->mark_count - 1].offset;
    static frame_span spans[MAX_FRAMES];
    size_t parsed = 0;
    size_t k = split_frames(r->bytes.data, r->bytes.len, ci == WS, spans, MAX_FRAMES, &parsed);
    uint32_t id = 0;
    for (size_t i = 0; i < k; i++) {
        if (spans[i].off < from || spans[i].opcode != 2) continue;
        tu_smsg *m = collide__v1__server_message__unpack(NULL, spans[i].body_len,
                                                         r->bytes.data + spans[i].body);
        if (m && m->msg_case == S(SPAWNED) && m->request_id == rid) id = m->spawned->body_id;
        if (m) collide__v1__server_message__free_unpacked(m, NULL);
    }
    return id;
}

/* ---- The script -------------------------------------------------------------------------------
 */

static void session_init(session *s) {
    memset(s, 0, sizeof *s);
    net_log_set_level(NET_LOG_ERROR);
    net_config cfg;
    net_config_default(&cfg);
    snprintf(cfg.admin_token, sizeof cfg.admin_token, "adm");
    cfg.admin_token_len = 3;
    /* The recording is of TCP and WebSocket sessions with the UDP port off: its Welcome has no
     * udp_port and no "udp" feature (those are test_udp.py's, over real UDP). */
    cfg.udp_port = 0;
    world_config wc;
    world_config_default(&wc);
    wc.bounds = aabb_make(v2(-100.0f, -100.0f), v2(100.0f, 100.0f));
    wc.max_bodies = 64;
    wc.tick_rate_hz = 60.0f;
    s->w = world_create(&wc);
    s->srv = s->w ? net_server_create(&cfg, s->w) : NULL;
    if (!s->srv) abort();
    s->now_us = START_US;
}

static void session_free(session *s) {
    for (int ci = 0; ci < NCLIENTS; ci++) {
        if (s->open[ci]) net_client_release(s->srv, &s->c[ci]);
        net_buf_free(&s->rec[ci].bytes);
    }
    net_server_destroy(s->srv);
    world_destroy(s->w);
}

/* Hello from everyone; the intruder's Ping before it. */
static void script_connect(session *s) {
    set_step(s, "connect", -1);
    connect_client(s, ADMIN, (hello_args){.name = "admin", .admin = true, .all_events = true},
                   false);
    send_buf(s, ADMIN, tu_set_view(2, 0, 0, 100, 100, s->buf, sizeof s->buf));
    connect_client(s, PLAYER, (hello_args){.name = "player"}, false);
    connect_client(s, QUANT, (hello_args){.name = "quant", .rate_hz = 20, .quantized = true},
                   false);
    send_buf(s, QUANT, tu_set_view(2, 0, 0, 100, 100, s->buf, sizeof s->buf));
    connect_client(s, WS, (hello_args){.name = "ws"}, true);
    connect_client(s, LEAVER, (hello_args){.name = "leaver"}, false);
    connect_client(s, INTRUDER, (hello_args){0}, false);
    send_buf(s, INTRUDER, tu_ping(1, 5, s->buf, sizeof s->buf));
}

/* The admin's statics of every shape, its sensor and its own mover. */
static void script_statics(session *s) {
    set_step(s, "statics", -1);
    static const float triangle[] = {-2, -2, 2, -2, 0, 3};
    pb_shape sh;
    spawn_args st = {.kind = STATIC};
    st.x = 20, st.y = 0;
    send_buf(s, ADMIN, msg_spawn(10, pb_box(&sh, 1, 30), st, s->buf, sizeof s->buf)); /* wall */
    st.x = -20, st.y = 20;
    send_buf(s, ADMIN, msg_spawn(11, pb_polygon(&sh, triangle, 3), st, s->buf, sizeof s->buf));
    st.x = -20, st.y = -20;
    send_buf(s, ADMIN, msg_spawn(12, pb_circle(&sh, 3), st, s->buf, sizeof s->buf));
    st.x = 0, st.y = 30, st.angle = 0.5f;
    send_buf(s, ADMIN, msg_spawn(13, pb_box(&sh, 4, 1), st, s->buf, sizeof s->buf));
    st.x = 0, st.y = -15, st.angle = 0, st.sensor = true;
    send_buf(s, ADMIN, msg_spawn(14, pb_box(&sh, 3, 3), st, s->buf, sizeof s->buf));
    spawn_args mv = {.kind = MOVING, .x = -40, .y = 0};
    send_buf(s, ADMIN, msg_spawn(15, pb_circle(&sh, 1), mv, s->buf, sizeof s->buf));
    s->admin_mover = spawned_id(s, ADMIN, 15);
}

/* The players' movers, and the two spawns a player is refused. */
static void script_spawns(session *s) {
    set_step(s, "spawns", -1);
    /* a regular pentagon of radius 1.5, counter-clockwise from 18 degrees */
    static const float pentagon[] = {1.4266f, 0.4635f,  0,        1.5f,    -1.4266f,
                                     0.4635f, -0.8817f, -1.2135f, 0.8817f, -1.2135f};
    static const float segment[] = {0, 0, 1, 0};
    pb_shape sh;
    spawn_args mv = {.kind = MOVING, .x = 10, .y = 0};
    send_buf(s, PLAYER, msg_spawn(20, pb_box(&sh, 1, 1), mv, s->buf, sizeof s->buf));
    s->box = spawned_id(s, PLAYER, 20);
    mv.x = 0, mv.y = -5;
    send_buf(s, PLAYER, msg_spawn(21, pb_circle(&sh, 1), mv, s->buf, sizeof s->buf));
    s->circle = spawned_id(s, PLAYER, 21);
    mv.x = -10, mv.y = 5, mv.angle = 0.7f;
    send_buf(s, PLAYER, msg_spawn(22, pb_polygon(&sh, pentagon, 5), mv, s->buf, sizeof s->buf));
    s->pent = spawned_id(s, PLAYER, 22);
    spawn_args st = {.kind = STATIC, .x = 50, .y = 50}; /* FORBIDDEN: statics are for admins */
    send_buf(s, PLAYER, msg_spawn(23, pb_box(&sh, 1, 1), st, s->buf, sizeof s->buf));
    mv.angle = 0; /* INVALID_SHAPE: two vertices */
    send_buf(s, PLAYER, msg_spawn(24, pb_polygon(&sh, segment, 2), mv, s->buf, sizeof s->buf));
    spawn_args w = {.kind = MOVING, .x = 30, .y = 30};
    send_buf(s, WS, msg_spawn(2, pb_box(&sh, 2, 1), w, s->buf, sizeof s->buf));
    s->ws_box = spawned_id(s, WS, 2);
    spawn_args l = {.kind = MOVING, .x = -30, .y = -30};
    send_buf(s, LEAVER, msg_spawn(2, pb_circle(&sh, 2), l, s->buf, sizeof s->buf));
    s->leaver_body = spawned_id(s, LEAVER, 2);
}

/* The queries: the three kinds at tick 15, the history at 20 and 40. */
static void script_queries(session *s, int tick) {
    pb_shape sh;
    uint64_t now = world_tick(s->w);
    if (tick == 15) {
        send_buf(s, PLAYER, msg_ray(60, -50, 0, 100, 0, true, 0, s->buf, sizeof s->buf));
        send_buf(s, PLAYER, msg_overlap(61, pb_circle(&sh, 5), 0, -15, s->buf, sizeof s->buf));
        send_buf(
            s, PLAYER,
            msg_shape_cast(62, pb_box(&sh, 1, 1), 0, 40, 0.25f, 0, -80, s->buf, sizeof s->buf));
    } else if (tick == 20) { /* where the box was ten ticks ago */
        send_buf(s, PLAYER, msg_ray(63, 0, 0, 30, 0, false, now - 10, s->buf, sizeof s->buf));
    } else if (tick == 40) { /* past --history-ms (30 ticks): HISTORY_EXPIRED */
        send_buf(s, PLAYER, msg_ray(64, 0, 0, 30, 0, false, 2, s->buf, sizeof s->buf));
    }
}

/* A frame that does not unpack: BAD_REQUEST, not fatal (the prefix kept the stream in sync). */
static void send_garbage(session *s, int ci) {
    s->buf[0] = 3;
    s->buf[1] = s->buf[2] = s->buf[3] = 0xff;
    send_buf(s, ci, 4);
}

/* What the clients send before tick t's step. */
static void script_inputs(session *s, int t) {
    uint8_t *b = s->buf;
    size_t cap = sizeof s->buf;
    if (t == 1) {
        send_buf(s, PLAYER, tu_move(0, s->box, 1, 30, 0, b, cap));
        send_buf(s, PLAYER, tu_move(0, s->circle, 1, 0, -20, b, cap));
        send_buf(s, PLAYER, tu_move_turning(0, s->pent, 1, 5, 0, 2, b, cap));
        send_buf(s, WS, tu_move(0, s->ws_box, 1, -10, 0, b, cap));
    } else if (t == 5) {
        send_buf(s, PLAYER, tu_set_view(30, 0, 0, 40, 40, b, cap));
    } else if (t == 8) { /* NOT_FOUND at index 2, a stale item, FORBIDDEN at index 5 */
        const uint32_t ids[5] = {s->box, 9999, s->circle, s->box, s->admin_mover};
        const uint32_t seqs[5] = {2, 1, 2, 1, 1};
        const float vxy[10] = {30, 0, 1, 0, 0, -20, -30, 0, 1, 0};
        send_buf(s, PLAYER, msg_batch(40, ids, seqs, vxy, 5, b, cap));
    } else if (t == 10) {
        send_buf(s, PLAYER, tu_ping(50, 123456, b, cap));
        send_buf(s, WS, tu_ping(51, 654321, b, cap));
        send_buf(s, QUANT, tu_ping(52, 42, b, cap));
    } else if (t == 12) {
        send_garbage(s, PLAYER);
    } else if (t == 25) {
        send_buf(s, ADMIN, tu_move(0, s->admin_mover, 1, 10, 0, b, cap));
    } else if (t == 30) { /* the leaver's socket closes: its mover goes */
        net_client_close(s->srv, &s->c[LEAVER], NET_DISC_CLIENT_CLOSED);
        s->open[LEAVER] = false;
    } else if (t == 40) {
        send_buf(s, PLAYER, tu_move(0, s->box, 3, -30, 0, b, cap));
        send_buf(s, WS, tu_move_turning(0, s->ws_box, 2, 0, 10, -1, b, cap));
    } else if (t == 45) {
        send_buf(s, PLAYER, tu_set_view(31, 0, 0, 0, 0, b, cap)); /* back to the default view */
    } else if (t == 50) {
        pb_shape sh;
        spawn_args mv = {.kind = MOVING, .x = 8, .y = 0}; /* the box meets it at tick 55 */
        send_buf(s, PLAYER, msg_spawn(25, pb_box(&sh, 1, 1), mv, b, cap));
        s->late_box = spawned_id(s, PLAYER, 25);
        send_buf(s, PLAYER, tu_despawn(70, s->circle, b, cap));
        send_buf(s, PLAYER, tu_despawn(71, 9998, b, cap)); /* NOT_FOUND */
    }
    script_queries(s, t);
}

/* The whole script; s holds every client's stream afterwards. */
static void run_script(session *s) {
    session_init(s);
    script_connect(s);
    script_statics(s);
    script_spawns(s);
    for (int t = 1; t <= TICKS; t++) {
        set_step(s, "inputs before tick", t);
        script_inputs(s, t);
        s->now_us += TICK_US;
        set_step(s, "tick", t);
        net_tick_run(s->srv, 1);
        flush(s);
    }
    set_step(s, "drain", -1);
    net_server_drain(s->srv);
    flush(s);
}

/* ---- What the streams must hold: the script did what it says ----------------------------------
 */

/* Counts of what one client's stream holds. */
typedef struct tally {
    unsigned msgs[32];       /* ServerMessages by msg_case (its field number) */
    unsigned errors[16];     /* Errors by code */
    unsigned fatal_errors;   /* Errors with fatal set */
    uint32_t batch_indexes;  /* bit i (1..31): an Error with index i came */
    unsigned hit_results;    /* QueryResults with at least one hit */
    unsigned contact_begins; /* ContactEvents, begin set */
    unsigned contact_ends;   /* ... and not */
    unsigned sensor_begins;  /* SensorEvents, begin set */
    unsigned sensor_ends;    /* ... and not */
    unsigned removed;        /* ids in Snapshot.removed */
    unsigned packed;         /* snapshots carrying Snapshot.packed */
    unsigned turned;         /* BodyStates with a non-zero angle */
    unsigned http;           /* HTTP responses (the 101) */
    unsigned close_code;     /* the last WebSocket close frame's code */
    uint64_t pong_wall_us;   /* the last Pong's server_time_us */
    bool malformed;          /* a frame did not split or unpack */
} tally;

static void tally_snapshot(tally *t, const Collide__V1__Snapshot *sn) {
    for (size_t i = 0; i < sn->n_contacts; i++)
        sn->contacts[i]->begin ? t->contact_begins++ : t->contact_ends++;
    for (size_t i = 0; i < sn->n_sensor_events; i++)
        sn->sensor_events[i]->begin ? t->sensor_begins++ : t->sensor_ends++;
    for (size_t i = 0; i < sn->n_bodies; i++)
        t->turned += sn->bodies[i]->angle != 0.0f;
    t->removed += (unsigned)sn->n_removed;
    t->packed += sn->packed.len > 0;
}

static void tally_message(tally *t, const tu_smsg *m) {
    t->msgs[(unsigned)m->msg_case & 31u]++;
    if (m->msg_case == S(ERROR)) {
        t->errors[(unsigned)m->error->code & 15u]++;
        t->fatal_errors += m->error->fatal;
        if (m->error->index > 0 && m->error->index < 32) t->batch_indexes |= 1u << m->error->index;
    } else if (m->msg_case == S(QUERY_RESULT)) {
        t->hit_results += m->query_result->n_hits > 0;
    } else if (m->msg_case == S(PONG)) {
        t->pong_wall_us = m->pong->server_time_us;
    } else if (m->msg_case == S(SNAPSHOT)) {
        tally_snapshot(t, m->snapshot);
    }
}

static void tally_stream(const net_buf *b, bool ws, tally *t) {
    static frame_span spans[MAX_FRAMES];
    memset(t, 0, sizeof *t);
    size_t parsed = 0, k = split_frames(b->data, b->len, ws, spans, MAX_FRAMES, &parsed);
    t->malformed = parsed != b->len;
    for (size_t i = 0; i < k; i++) {
        const frame_span *f = &spans[i];
        if (f->opcode == -1) t->http++;
        if (f->opcode == 0x8 && f->body_len >= 2)
            t->close_code = (unsigned)b->data[f->body] << 8 | b->data[f->body + 1];
        if (f->opcode != 0x2) continue;
        tu_smsg *m = collide__v1__server_message__unpack(NULL, f->body_len, b->data + f->body);
        if (!m) {
            t->malformed = true;
            continue;
        }
        tally_message(t, m);
        collide__v1__server_message__free_unpacked(m, NULL);
    }
}

/* Every client: well formed, welcomed once (but the intruder), told Goodbye, closed cleanly. */
static void check_clients(const session *s, const tally *t) {
    for (int ci = 0; ci < NCLIENTS; ci++) {
        const char *n = client_names[ci];
        CHECK_MSG(!t[ci].malformed, "%s: a frame did not split or unpack", n);
        CHECK_MSG(!s->rec[ci].cut, "%s: cut, not closed", n);
        CHECK_MSG(s->rec[ci].closed || ci == LEAVER, "%s: never closed by the server", n);
        if (ci == INTRUDER) continue;
        CHECK_MSG(t[ci].msgs[S(WELCOME)] == 1, "%s: %u Welcomes", n, t[ci].msgs[S(WELCOME)]);
        CHECK_MSG(t[ci].msgs[S(GOODBYE)] == (ci != LEAVER), "%s: Goodbyes", n);
        CHECK_MSG(t[ci].msgs[S(SNAPSHOT)] >= (ci == QUANT    ? 20u
                                              : ci == LEAVER ? 29u
                                                             : 60u),
                  "%s: %u snapshots", n, t[ci].msgs[S(SNAPSHOT)]);
    }
    CHECK(t[INTRUDER].msgs[S(ERROR)] == 1 && t[INTRUDER].errors[E(UNAUTHENTICATED)] == 1 &&
          t[INTRUDER].fatal_errors == 1);
}

/* The stream holds what the script is meant to cover: otherwise a script that silently stopped
 * doing something (a spawn out of bounds, a sensor that no one crosses) would still match. */
static void check_coverage(const session *s) {
    static tally t[NCLIENTS];
    for (int ci = 0; ci < NCLIENTS; ci++)
        tally_stream(&s->rec[ci].bytes, ci == WS, &t[ci]);
    int before = harness_failed_checks;
    check_clients(s, t);
    if (harness_failed_checks != before) return;
    CHECK(s->box && s->circle && s->pent && s->late_box && s->admin_mover && s->ws_box &&
          s->leaver_body);
    const tally *a = &t[ADMIN], *p = &t[PLAYER];
    CHECK_MSG(a->msgs[S(SPAWNED)] == 6 && a->turned > 0, "admin: statics and a turned one");
    CHECK_MSG(a->contact_begins >= 2 && a->contact_ends >= 1 && a->sensor_begins >= 1 &&
                  a->sensor_ends >= 1,
              "admin (all_events): contacts %u/%u, sensor events %u/%u", a->contact_begins,
              a->contact_ends, a->sensor_begins, a->sensor_ends);
    CHECK_MSG(a->removed >= 2, "admin: the leaver's body and the despawned circle removed");
    CHECK_MSG(p->contact_begins >= 2 && p->sensor_begins >= 1 && p->turned > 0,
              "player: its contacts, its sensor visit, its turned pentagon");
    CHECK_MSG(p->errors[E(FORBIDDEN)] == 2 && p->errors[E(INVALID_SHAPE)] == 1 &&
                  p->errors[E(NOT_FOUND)] == 2 && p->errors[E(BAD_REQUEST)] == 1 &&
                  p->errors[E(HISTORY_EXPIRED)] == 1 && p->fatal_errors == 0,
              "player: the errors of the script");
    CHECK_MSG(p->batch_indexes == (1u << 2 | 1u << 5), "player: batch errors at 2 and 5 (%#x)",
              p->batch_indexes);
    CHECK_MSG(p->msgs[S(QUERY_RESULT)] == 4 && p->hit_results == 4, "player: 4 queries, %u hit",
              p->hit_results);
    CHECK(p->msgs[S(PONG)] == 1 && p->pong_wall_us > WALL_BASE_US);
    CHECK_MSG(t[QUANT].packed >= 20 && t[QUANT].msgs[S(SNAPSHOT)] <= 21,
              "quant: %u packed of %u snapshots", t[QUANT].packed, t[QUANT].msgs[S(SNAPSHOT)]);
    CHECK_MSG(t[WS].http == 1 && t[WS].msgs[S(PONG)] == 1 && t[WS].close_code == 1001,
              "ws: the 101, its Pong, the close frame 1001 after the Goodbye (%u)",
              t[WS].close_code);
}

/* ---- The recording ----------------------------------------------------------------------------
 */

static void golden_path(int ci, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.bin", COLLIDE_NET_GOLDEN_DIR, client_names[ci]);
}

/* Reads a whole file into *out; false (errno set) when it cannot. */
static bool read_file(const char *path, net_buf *out) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    uint8_t chunk[4096];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ok = net_buf_append(out, chunk, n);
    ok = ok && !ferror(f);
    fclose(f);
    return ok;
}

static bool write_file(const char *path, const net_buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

/* Says where stream `now` of client ci first differs from the recording `was`. */
static void report_mismatch(const session *s, int ci, const net_buf *was) {
    const net_buf *now = &s->rec[ci].bytes;
    size_t at = 0;
    while (at < now->len && at < was->len && now->data[at] == was->data[at])
        at++;
    frame_span fn = {0}, fw = {0};
    size_t kn = frame_at(now->data, now->len, ci == WS, at, &fn);
    size_t kw = frame_at(was->data, was->len, ci == WS, at, &fw);
    char dn[256] = "past the end of the stream", dw[256] = "past the end of the stream";
    if (at < now->len) describe_frame(now->data, &fn, dn, sizeof dn);
    if (at < was->len) describe_frame(was->data, &fw, dw, sizeof dw);
    fprintf(stderr,
            "golden: client %s: %zu bytes sent, %zu recorded; first difference at byte %zu\n"
            "  frame %zu now:      %s (byte %zu of it)\n"
            "  frame %zu recorded: %s (byte %zu of it)\n"
            "  sent during script step \"%s\"\n",
            client_names[ci], now->len, was->len, at, kn, dn, at - fn.off, kw, dw, at - fw.off,
            step_at(&s->rec[ci], at < now->len ? at
                                 : now->len    ? now->len - 1
                                               : 0));
}

/* Compares client ci's stream with its recording, or writes it (COLLIDE_GOLDEN_WRITE=1). */
static void compare_or_write(const session *s, int ci, bool write) {
    char path[1024];
    golden_path(ci, path, sizeof path);
    const net_buf *now = &s->rec[ci].bytes;
    if (write) {
        CHECK_MSG(write_file(path, now), "cannot write %s: %s", path, strerror(errno));
        printf("golden: wrote %s (%zu bytes)\n", path, now->len);
        return;
    }
    net_buf was = {0};
    bool read = read_file(path, &was);
    int err = errno;
    bool same = read && was.len == now->len && memcmp(was.data, now->data, now->len) == 0;
    if (read && !same) report_mismatch(s, ci, &was);
    net_buf_free(&was);
    CHECK_MSG(read, "cannot read %s (%s): record it with COLLIDE_GOLDEN_WRITE=1", path,
              strerror(err));
    CHECK_MSG(same, "client %s: the bytes sent differ from %s", client_names[ci], path);
}

/* COLLIDE_GOLDEN_DUMP=1: every frame of every stream, one line each, with the step that sent it
 * (to read what the recording holds, or to diff two runs' listings). */
static void dump_streams(const session *s) {
    static frame_span spans[MAX_FRAMES];
    for (int ci = 0; ci < NCLIENTS; ci++) {
        const net_buf *b = &s->rec[ci].bytes;
        size_t parsed = 0, k = split_frames(b->data, b->len, ci == WS, spans, MAX_FRAMES, &parsed);
        for (size_t i = 0; i < k; i++) {
            char d[256];
            describe_frame(b->data, &spans[i], d, sizeof d);
            printf("%s #%zu @%zu [%s] %s\n", client_names[ci], i, spans[i].off,
                   step_at(&s->rec[ci], spans[i].off), d);
        }
    }
}

/* ---- Tests ------------------------------------------------------------------------------------
 */

/* The scripted session, byte for byte against the recording. */
static void test_session_matches_recording(void) {
    static session s;
    run_script(&s);
    const char *env = getenv("COLLIDE_GOLDEN_WRITE"), *dump = getenv("COLLIDE_GOLDEN_DUMP");
    bool write = env && strcmp(env, "1") == 0;
    if (dump && strcmp(dump, "1") == 0) dump_streams(&s);
    int before = harness_failed_checks;
    check_coverage(&s);
    bool covered = harness_failed_checks == before;
    /* a script that does not cover what it claims is never recorded; every client is compared,
     * so a failure lists all the streams that changed */
    for (int ci = 0; ci < NCLIENTS && covered; ci++)
        compare_or_write(&s, ci, write);
    session_free(&s);
}

/* The same script twice in one process gives the same bytes: nothing depends on addresses,
 * allocation order or state left over from a previous server. */
static void test_session_is_repeatable(void) {
    static session a, b;
    run_script(&a);
    run_script(&b);
    bool same = true;
    for (int ci = 0; ci < NCLIENTS; ci++) {
        const net_buf *x = &a.rec[ci].bytes, *y = &b.rec[ci].bytes;
        bool eq = x->len == y->len && memcmp(x->data, y->data, x->len) == 0;
        if (!eq) report_mismatch(&a, ci, y);
        same &= eq;
    }
    session_free(&a);
    session_free(&b);
    CHECK_MSG(same, "two runs of the script sent different bytes");
}

TEST_MAIN(TEST(test_session_matches_recording), TEST(test_session_is_repeatable))

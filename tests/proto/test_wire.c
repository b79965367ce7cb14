/* proto/wire.h: every hand-written field number against the descriptors protoc-c generated from
 * collide.proto (a renumbered field fails here, not only in an integration test), and the scanner
 * and writers against protobuf-c's own packing. */
#include "collide.pb-c.h"
#include "harness.h"
#include "wire.h"

/* The wire type protobuf-c uses for a field. */
static int wire_type_of(const ProtobufCFieldDescriptor *f) {
    if (f->label == PROTOBUF_C_LABEL_REPEATED && (f->flags & PROTOBUF_C_FIELD_FLAG_PACKED))
        return WIRE_LEN;
    switch (f->type) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_BOOL:
    case PROTOBUF_C_TYPE_ENUM:
        return WIRE_VARINT;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_FIXED32:
        return WIRE_I32;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return WIRE_LEN;
    default:
        return -1;
    }
}

static void test_field_numbers_match_descriptors(void) {
    static const struct {
        const ProtobufCMessageDescriptor *msg;
        const char *field;
        unsigned number;
        int type; /* how the hand-written code writes or reads it */
    } cases[] = {
        {&collide__v1__vec2__descriptor, "x", WIRE_VEC2_X, WIRE_I32},
        {&collide__v1__vec2__descriptor, "y", WIRE_VEC2_Y, WIRE_I32},
        {&collide__v1__client_message__descriptor, "request_id", WIRE_CLIENT_REQUEST_ID,
         WIRE_VARINT},
        {&collide__v1__client_message__descriptor, "hello", WIRE_CLIENT_HELLO, WIRE_LEN},
        {&collide__v1__hello__descriptor, "token", WIRE_HELLO_TOKEN, WIRE_LEN},
        {&collide__v1__client_message__descriptor, "spawn", WIRE_CLIENT_SPAWN, WIRE_LEN},
        {&collide__v1__client_message__descriptor, "move", WIRE_CLIENT_MOVE, WIRE_LEN},
        {&collide__v1__spawn_body__descriptor, "shape", WIRE_SPAWN_SHAPE, WIRE_LEN},
        {&collide__v1__shape__descriptor, "polygon", WIRE_SHAPE_POLYGON, WIRE_LEN},
        {&collide__v1__polygon__descriptor, "vertices", WIRE_POLYGON_VERTICES, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "request_id", WIRE_SERVER_REQUEST_ID,
         WIRE_VARINT},
        {&collide__v1__server_message__descriptor, "welcome", WIRE_SERVER_WELCOME, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "spawned", WIRE_SERVER_SPAWNED, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "snapshot", WIRE_SERVER_SNAPSHOT, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "pong", WIRE_SERVER_PONG, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "error", WIRE_SERVER_ERROR, WIRE_LEN},
        {&collide__v1__server_message__descriptor, "goodbye", WIRE_SERVER_GOODBYE, WIRE_LEN},
        {&collide__v1__snapshot__descriptor, "tick", WIRE_SNAPSHOT_TICK, WIRE_VARINT},
        {&collide__v1__snapshot__descriptor, "bodies", WIRE_SNAPSHOT_BODIES, WIRE_LEN},
        {&collide__v1__snapshot__descriptor, "removed", WIRE_SNAPSHOT_REMOVED, WIRE_LEN},
        {&collide__v1__snapshot__descriptor, "packed", WIRE_SNAPSHOT_PACKED, WIRE_LEN},
        {&collide__v1__body_state__descriptor, "id", WIRE_BODY_ID, WIRE_VARINT},
        {&collide__v1__body_state__descriptor, "position", WIRE_BODY_POSITION, WIRE_LEN},
        {&collide__v1__body_state__descriptor, "velocity", WIRE_BODY_VELOCITY, WIRE_LEN},
        {&collide__v1__body_state__descriptor, "last_input_seq", WIRE_BODY_LAST_INPUT_SEQ,
         WIRE_VARINT},
        {&collide__v1__pong__descriptor, "client_time_us", WIRE_PONG_CLIENT_TIME_US, WIRE_VARINT},
        {&collide__v1__pong__descriptor, "tick", WIRE_PONG_TICK, WIRE_VARINT},
        {&collide__v1__error__descriptor, "code", WIRE_ERROR_CODE, WIRE_VARINT},
        {&collide__v1__error__descriptor, "fatal", WIRE_ERROR_FATAL, WIRE_VARINT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(cases[i].msg, cases[i].field);
        CHECK_MSG(f != NULL, "%s.%s missing", cases[i].msg->name, cases[i].field);
        CHECK_MSG(f->id == cases[i].number, "%s.%s is field %u in collide.proto, wire.h says %u",
                  cases[i].msg->name, cases[i].field, f->id, cases[i].number);
        CHECK_MSG(wire_type_of(f) == cases[i].type, "%s.%s has wire type %d, wire.h assumes %d",
                  cases[i].msg->name, cases[i].field, wire_type_of(f), cases[i].type);
        /* One-byte keys: the writers store WIRE_KEY as a single byte. */
        CHECK(f->id <= 15);
    }
}

/* A Hello's token, found by the scan in a ClientMessage packed by protobuf-c, the last of two. */
static void test_scan_finds_last_occurrence(void) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)"n";
    h.token = (char *)"first";
    Collide__V1__ClientMessage m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 300;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    uint8_t buf[256];
    size_t n = collide__v1__client_message__pack(&m, buf);
    h.token = (char *)"second!";
    m.request_id = 7;
    n += collide__v1__client_message__pack(&m, buf + n); /* concatenation = protobuf merge */
    uint64_t v = 0;
    const uint8_t *d = NULL;
    CHECK(wire_scan(buf, n, WIRE_CLIENT_REQUEST_ID, WIRE_VARINT, NULL, &v) && v == 7);
    CHECK(wire_scan(buf, n, WIRE_CLIENT_HELLO, WIRE_LEN, &d, &v));
    const uint8_t *tok = NULL;
    uint64_t tok_len = 0;
    CHECK(wire_scan(d, (size_t)v, WIRE_HELLO_TOKEN, WIRE_LEN, &tok, &tok_len));
    CHECK(tok_len == 7 && memcmp(tok, "second!", 7) == 0);
    /* Absent, wrong type, truncated: false. */
    CHECK(!wire_scan(buf, n, 14, WIRE_LEN, &d, &v));
    CHECK(!wire_scan(buf, n, WIRE_CLIENT_HELLO, WIRE_VARINT, NULL, &v));
    for (size_t cut = 1; cut < n; cut++) {
        uint64_t rid = 0;
        bool ok = wire_scan(buf, cut, WIRE_CLIENT_REQUEST_ID, WIRE_VARINT, NULL, &rid);
        /* Cut inside a field: malformed, never a read past the cut (ASan would see it). */
        CHECK(!ok || rid == 300 || rid == 7);
    }
    const uint8_t group[] = {0x0b, 0x08, 0x01}; /* wire type 3: refused */
    CHECK(!wire_scan(group, sizeof group, 1, WIRE_VARINT, NULL, &v));
}

/* The writers produce the bytes protobuf-c does. */
static void test_writers_match_protobuf_c(void) {
    Collide__V1__Vec2 vec = COLLIDE__V1__VEC2__INIT;
    vec.x = -1.5f;
    vec.y = 1e-30f;
    uint8_t want[32], got[32];
    size_t wn = collide__v1__vec2__pack(&vec, want);
    size_t gn = wire_put_float(got, WIRE_VEC2_X, vec.x);
    gn += wire_put_float(got + gn, WIRE_VEC2_Y, vec.y);
    CHECK(gn == wn && memcmp(got, want, wn) == 0);
    Collide__V1__Snapshot s = COLLIDE__V1__SNAPSHOT__INIT;
    s.tick = 5;
    wn = collide__v1__snapshot__pack(&s, want);
    gn = wire_put_key(got, WIRE_SNAPSHOT_TICK, WIRE_VARINT);
    gn += varint_write(got + gn, 5);
    CHECK(gn == wn && memcmp(got, want, wn) == 0);
    /* The reader takes back what the writer wrote. */
    wire_reader r = wire_reader_of(got, gn);
    uint32_t field = 0;
    unsigned type = 9;
    uint64_t v = 0;
    CHECK(wire_read_key(&r, &field, &type) && field == WIRE_SNAPSHOT_TICK && type == WIRE_VARINT);
    CHECK(wire_read_varint(&r, &v) && v == 5 && r.p == r.end);
    uint8_t f32[5];
    wire_put_float(f32, WIRE_VEC2_X, -1.5f);
    r = wire_reader_of(f32, sizeof f32);
    uint32_t bits = 0;
    CHECK(wire_read_key(&r, &field, &type) && type == WIRE_I32);
    CHECK(wire_read_fixed32(&r, &bits) && wire_float_of_bits(bits) == -1.5f);
    CHECK(!wire_skip(&r, WIRE_I32)); /* nothing left */
}

TEST_MAIN(TEST(test_field_numbers_match_descriptors), TEST(test_scan_finds_last_occurrence),
          TEST(test_writers_match_protobuf_c))

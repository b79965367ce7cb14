/* proto/: the varint codec and the frame prefix rules of PROTOCOL.md ("Transport and framing"),
 * checked against known encodings and against protobuf-c's own packing of the same values. */
#include "collide.pb-c.h"
#include "frame.h"
#include "harness.h"
#include "varint.h"

static void test_varint_known_vectors(void) {
    static const struct {
        uint64_t v;
        uint8_t bytes[VARINT_MAX_BYTES];
        size_t n;
    } cases[] = {
        {0, {0x00}, 1},
        {1, {0x01}, 1},
        {127, {0x7f}, 1},
        {128, {0x80, 0x01}, 2},
        {300, {0xac, 0x02}, 2},
        {65536, {0x80, 0x80, 0x04}, 3},
        {UINT32_MAX, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5},
        {UINT64_MAX, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[VARINT_MAX_BYTES];
        size_t n = varint_write(out, cases[i].v);
        CHECK_MSG(n == cases[i].n && varint_size(cases[i].v) == n, "case %zu: %zu bytes", i, n);
        CHECK_MSG(memcmp(out, cases[i].bytes, n) == 0, "case %zu bytes differ", i);
        const uint8_t *p = out;
        uint64_t back = 0;
        CHECK(varint_read(&p, out + n, &back) && back == cases[i].v && p == out + n);
        /* Truncated by one byte: refused, never read past the end. */
        p = out;
        CHECK(n == 1 || !varint_read(&p, out + n - 1, &back));
    }
    uint8_t eleven[11];
    memset(eleven, 0x80, sizeof eleven);
    const uint8_t *p = eleven;
    uint64_t v;
    CHECK(!varint_read(&p, eleven + sizeof eleven, &v)); /* longer than any uint64 */
}

/* Our encoder agrees with protobuf-c's on every width: a Ping's client_time_us is a uint64 field
 * 1, so its packed form is 0x08 followed by the varint. */
static void test_varint_matches_protobuf_c(void) {
    collide_rng rng = {4242};
    for (int i = 0; i < 5000; i++) {
        uint64_t v = ((uint64_t)collide_rng_next(&rng) << 32 | collide_rng_next(&rng)) >>
                     (collide_rng_next(&rng) % 64);
        Collide__V1__Ping ping = COLLIDE__V1__PING__INIT;
        ping.client_time_us = v;
        uint8_t pb[16], ours[VARINT_MAX_BYTES];
        size_t pn = collide__v1__ping__pack(&ping, pb);
        size_t on = varint_write(ours, v);
        if (v == 0) {
            CHECK(pn == 0); /* proto3 omits a zero field */
            continue;
        }
        CHECK_MSG(pn == on + 1 && pb[0] == 0x08 && memcmp(pb + 1, ours, on) == 0, "v=%llu",
                  (unsigned long long)v);
    }
}

static void test_frame_peek_rules(void) {
    size_t plen, blen;
    uint8_t buf[16] = {0};
    CHECK(frame_peek(buf, 0, 100, &plen, &blen) == FRAME_NEED_MORE);
    /* A 3-byte body announced, 2 present: more needed, and the declared size is known. */
    buf[0] = 3;
    CHECK(frame_peek(buf, 3, 100, &plen, &blen) == FRAME_NEED_MORE && blen == 3);
    CHECK(frame_peek(buf, 4, 100, &plen, &blen) == FRAME_OK && plen == 1 && blen == 3);
    /* Exactly the bound is accepted; one over is refused from the prefix alone. */
    size_t n = frame_write_prefix(65536, buf);
    CHECK(frame_peek(buf, n, 65536, &plen, &blen) == FRAME_NEED_MORE && blen == 65536);
    n = frame_write_prefix(65537, buf);
    CHECK(frame_peek(buf, n, 65536, &plen, &blen) == FRAME_TOO_LARGE);
    /* Refused before the prefix is even complete once it already exceeds the bound. */
    uint8_t big_partial[2] = {0xff, 0xff}; /* 16383 so far, and more bytes to come */
    CHECK(frame_peek(big_partial, 2, 1000, &plen, &blen) == FRAME_TOO_LARGE);
    CHECK(frame_peek(big_partial, 2, 1u << 20, &plen, &blen) == FRAME_NEED_MORE);
    /* Over-long prefixes: six bytes are refused whatever they say, five zero-padded are fine. */
    uint8_t six[6] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    CHECK(frame_peek(six, sizeof six, UINT32_MAX, &plen, &blen) == FRAME_TOO_LARGE);
    uint8_t five[5] = {0x80, 0x80, 0x80, 0x80, 0x00};
    CHECK(frame_peek(five, sizeof five, 10, &plen, &blen) == FRAME_OK && plen == 5 && blen == 0);
    CHECK(frame_prefix_size(127) == 1 && frame_prefix_size(128) == 2 &&
          frame_prefix_size(UINT32_MAX) == FRAME_MAX_PREFIX);
}

TEST_MAIN(TEST(test_varint_known_vectors), TEST(test_varint_matches_protobuf_c),
          TEST(test_frame_peek_rules))

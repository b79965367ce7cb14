#include "wire_read.h"

#include <string.h>

#include "wire.h"

/* Reads a field key; field 0 is malformed (protobuf never writes it). */
static bool wire_key(wire_reader *r, uint32_t *field, unsigned *type) {
    return wire_read_key(r, field, type) && *field != 0;
}

bool cc_wire_envelope_read(const uint8_t *buf, size_t len, cc_wire_envelope *out) {
    if (buf == NULL && len > 0) return false; /* wire_reader_of asserts it */
    wire_reader r = wire_reader_of(buf, len);
    memset(out, 0, sizeof *out);
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == WIRE_SERVER_REQUEST_ID && type == WIRE_VARINT) {
            uint64_t v;
            if (!wire_read_varint(&r, &v)) return false;
            out->request_id = (uint32_t)v;
        } else if (field >= CC_MSG_WELCOME && field <= CC_MSG_QUERY_RESULT && type == WIRE_LEN) {
            /* Last one wins, as protobuf parses a repeated oneof. */
            if (!wire_read_len(&r, &out->inner, &out->inner_len)) return false;
            out->kind = (int)field;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

static bool wire_vec2(const uint8_t *buf, size_t len, float *x, float *y) {
    wire_reader r = wire_reader_of(buf, len);
    *x = 0.0f;
    *y = 0.0f;
    while (r.p < r.end) {
        uint32_t field, bits;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if ((field == WIRE_VEC2_X || field == WIRE_VEC2_Y) && type == WIRE_I32) {
            if (!wire_read_fixed32(&r, &bits)) return false;
            *(field == WIRE_VEC2_X ? x : y) = wire_float_of_bits(bits);
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

/* Reads the id of a BodyState and, when it is the wanted one, the rest of what the load needs. */
static bool wire_body(const uint8_t *buf, size_t len, uint32_t want, cc_wire_body *out,
                      bool *match) {
    wire_reader r = wire_reader_of(buf, len);
    cc_wire_body b = {0};
    bool have_id = false;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == WIRE_BODY_ID && type == WIRE_VARINT) {
            uint64_t v;
            if (!wire_read_varint(&r, &v)) return false;
            b.id = (uint32_t)v;
            have_id = true;
            /* Fields come in number order from every encoder we know, so a foreign body is
             * dropped here without reading further; the outer loop skips it by length. */
            if (b.id != want) {
                *match = false;
                return true;
            }
        } else if (field == WIRE_BODY_POSITION && type == WIRE_LEN) {
            const uint8_t *d;
            size_t n;
            if (!wire_read_len(&r, &d, &n) || !wire_vec2(d, n, &b.x, &b.y)) return false;
            b.has_position = true;
        } else if (field == WIRE_BODY_VELOCITY && type == WIRE_LEN) {
            const uint8_t *d;
            size_t n;
            if (!wire_read_len(&r, &d, &n) || !wire_vec2(d, n, &b.vx, &b.vy)) return false;
        } else if (field == WIRE_BODY_LAST_INPUT_SEQ && type == WIRE_VARINT) {
            uint64_t v;
            if (!wire_read_varint(&r, &v)) return false;
            b.last_input_seq = (uint32_t)v;
        } else if ((field == WIRE_BODY_GROUNDED || field == WIRE_BODY_GROUND_ID) &&
                   type == WIRE_VARINT) {
            uint64_t v;
            if (!wire_read_varint(&r, &v)) return false;
            if (field == WIRE_BODY_GROUNDED)
                b.grounded = v != 0;
            else
                b.ground_id = (uint32_t)v;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    *match = have_id ? b.id == want : want == 0;
    if (*match) *out = b;
    return true;
}

bool cc_wire_snapshot_scan_for(const uint8_t *buf, size_t len, uint32_t body_id,
                               cc_wire_snapshot_scan *out) {
    if (buf == NULL && len > 0) return false; /* wire_reader_of asserts it */
    wire_reader r = wire_reader_of(buf, len);
    memset(out, 0, sizeof *out);
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == WIRE_SNAPSHOT_TICK && type == WIRE_VARINT) {
            if (!wire_read_varint(&r, &out->tick)) return false;
        } else if (field == WIRE_SNAPSHOT_BODIES && type == WIRE_LEN) {
            const uint8_t *d;
            size_t n;
            if (!wire_read_len(&r, &d, &n)) return false;
            out->bodies++;
            if (!out->found) {
                bool match = false;
                if (!wire_body(d, n, body_id, &out->body, &match)) return false;
                out->found = match;
            }
        } else if (field == WIRE_SNAPSHOT_REMOVED && type == WIRE_LEN) { /* packed removed ids */
            const uint8_t *d;
            size_t n;
            if (!wire_read_len(&r, &d, &n)) return false;
            wire_reader pr = wire_reader_of(d, n);
            uint64_t v;
            while (pr.p < pr.end) {
                if (!wire_read_varint(&pr, &v)) return false;
                out->removed++;
            }
        } else if (field == WIRE_SNAPSHOT_REMOVED && type == WIRE_VARINT) { /* unpacked */
            uint64_t v;
            if (!wire_read_varint(&r, &v)) return false;
            out->removed++;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

bool cc_wire_pong_read(const uint8_t *buf, size_t len, uint64_t *client_time_us, uint64_t *tick) {
    wire_reader r = wire_reader_of(buf, len);
    *client_time_us = 0;
    *tick = 0;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == WIRE_PONG_CLIENT_TIME_US && type == WIRE_VARINT) {
            if (!wire_read_varint(&r, client_time_us)) return false;
        } else if (field == WIRE_PONG_TICK && type == WIRE_VARINT) {
            if (!wire_read_varint(&r, tick)) return false;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

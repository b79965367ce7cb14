#include "wire.h"

#include <string.h>

#include "varint.h"

typedef struct wire_reader {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last byte */
} wire_reader;

static bool wire_varint(wire_reader *r, uint64_t *out) { return varint_read(&r->p, r->end, out); }

/* Reads a field key; wire type in *type, number in *field. */
static bool wire_key(wire_reader *r, uint32_t *field, unsigned *type) {
    uint64_t key;
    if (!wire_varint(r, &key)) return false;
    *field = (uint32_t)(key >> 3);
    *type = (unsigned)(key & 7u);
    return *field != 0;
}

static bool wire_len(wire_reader *r, const uint8_t **data, size_t *len) {
    uint64_t n;
    if (!wire_varint(r, &n)) return false;
    if (n > (uint64_t)(r->end - r->p)) return false;
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return true;
}

static bool wire_fixed32(wire_reader *r, uint32_t *out) {
    if (r->end - r->p < 4) return false;
    *out = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
           (uint32_t)r->p[3] << 24;
    r->p += 4;
    return true;
}

static bool wire_skip(wire_reader *r, unsigned type) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (type) {
    case 0:
        return wire_varint(r, &v);
    case 1:
        if (r->end - r->p < 8) return false;
        r->p += 8;
        return true;
    case 2:
        return wire_len(r, &d, &n);
    case 5:
        if (r->end - r->p < 4) return false;
        r->p += 4;
        return true;
    default:
        return false; /* groups are not used by proto3 */
    }
}

static float wire_float(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

bool cc_wire_envelope_read(const uint8_t *buf, size_t len, cc_wire_envelope *out) {
    wire_reader r = {buf, buf + len};
    memset(out, 0, sizeof *out);
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == 1 && type == 0) {
            uint64_t v;
            if (!wire_varint(&r, &v)) return false;
            out->request_id = (uint32_t)v;
        } else if (field >= CC_MSG_WELCOME && field <= CC_MSG_GOODBYE && type == 2) {
            /* Last one wins, as protobuf parses a repeated oneof. */
            if (!wire_len(&r, &out->inner, &out->inner_len)) return false;
            out->kind = (int)field;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

static bool wire_vec2(const uint8_t *buf, size_t len, float *x, float *y) {
    wire_reader r = {buf, buf + len};
    *x = 0.0f;
    *y = 0.0f;
    while (r.p < r.end) {
        uint32_t field, bits;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if ((field == 1 || field == 2) && type == 5) {
            if (!wire_fixed32(&r, &bits)) return false;
            *(field == 1 ? x : y) = wire_float(bits);
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

/* Reads the id of a BodyState and, when it is the wanted one, the rest of what the load needs. */
static bool wire_body(const uint8_t *buf, size_t len, uint32_t want, cc_wire_body *out,
                      bool *match) {
    wire_reader r = {buf, buf + len};
    cc_wire_body b = {0};
    bool have_id = false;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == 1 && type == 0) {
            uint64_t v;
            if (!wire_varint(&r, &v)) return false;
            b.id = (uint32_t)v;
            have_id = true;
            /* Fields come in number order from every encoder we know, so a foreign body is
             * dropped here without reading further; the outer loop skips it by length. */
            if (b.id != want) {
                *match = false;
                return true;
            }
        } else if (field == 2 && type == 2) {
            const uint8_t *d;
            size_t n;
            if (!wire_len(&r, &d, &n) || !wire_vec2(d, n, &b.x, &b.y)) return false;
            b.has_position = true;
        } else if (field == 4 && type == 0) {
            uint64_t v;
            if (!wire_varint(&r, &v)) return false;
            b.last_input_seq = (uint32_t)v;
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
    wire_reader r = {buf, buf + len};
    memset(out, 0, sizeof *out);
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == 1 && type == 0) {
            if (!wire_varint(&r, &out->tick)) return false;
        } else if (field == 2 && type == 2) {
            const uint8_t *d;
            size_t n;
            if (!wire_len(&r, &d, &n)) return false;
            out->bodies++;
            if (!out->found) {
                bool match = false;
                if (!wire_body(d, n, body_id, &out->body, &match)) return false;
                out->found = match;
            }
        } else if (field == 3 && type == 2) { /* packed removed ids */
            const uint8_t *d;
            size_t n;
            if (!wire_len(&r, &d, &n)) return false;
            wire_reader pr = {d, d + n};
            uint64_t v;
            while (pr.p < pr.end) {
                if (!wire_varint(&pr, &v)) return false;
                out->removed++;
            }
        } else if (field == 3 && type == 0) { /* unpacked removed id */
            uint64_t v;
            if (!wire_varint(&r, &v)) return false;
            out->removed++;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

bool cc_wire_pong_read(const uint8_t *buf, size_t len, uint64_t *client_time_us, uint64_t *tick) {
    wire_reader r = {buf, buf + len};
    *client_time_us = 0;
    *tick = 0;
    while (r.p < r.end) {
        uint32_t field;
        unsigned type;
        if (!wire_key(&r, &field, &type)) return false;
        if (field == 1 && type == 0) {
            if (!wire_varint(&r, client_time_us)) return false;
        } else if (field == 3 && type == 0) {
            if (!wire_varint(&r, tick)) return false;
        } else if (!wire_skip(&r, type)) {
            return false;
        }
    }
    return true;
}

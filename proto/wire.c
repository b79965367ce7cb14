#include "wire.h"

bool wire_scan(const uint8_t *buf, size_t len, uint32_t field, unsigned type, const uint8_t **data,
               uint64_t *value) {
    COLLIDE_ASSERT(type == WIRE_VARINT || (type == WIRE_LEN && data != NULL));
    if ((type == WIRE_LEN && data == NULL) || (buf == NULL && len > 0)) return false;
    wire_reader r = wire_reader_of(buf, len);
    bool found = false;
    while (r.p < r.end) {
        uint32_t f;
        unsigned t;
        if (!wire_read_key(&r, &f, &t)) return false;
        bool match = f == field && t == type;
        uint64_t n = 0;
        if (match && t == WIRE_VARINT) {
            if (!wire_read_varint(&r, &n)) return false;
        } else if (match) {
            const uint8_t *d;
            size_t dn;
            if (!wire_read_len(&r, &d, &dn)) return false;
            *data = d;
            n = dn;
        } else if (!wire_skip(&r, t)) {
            return false;
        }
        if (match) {
            *value = n;
            found = true;
        }
    }
    return found;
}

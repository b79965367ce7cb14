#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "varint.h"

int32_t quant_of(double value, double quantum) {
    double q = round(value / quantum); /* round(): half away from zero, as the contract says */
    if (!(q == q) || !isfinite(q)) return 0;
    if (q >= (double)INT32_MAX) return INT32_MAX;
    if (q <= (double)INT32_MIN) return INT32_MIN;
    return (int32_t)q;
}

uint32_t quant_angle_of(double radians) {
    if (!isfinite(radians)) return 0;
    double turns = radians / (2.0 * 3.14159265358979323846);
    turns -= floor(turns); /* [0, 1) */
    double q = round(turns * QUANT_ANGLE_STEPS);
    return (uint32_t)q % QUANT_ANGLE_STEPS; /* 1.0 turn rounds to 65536: that is 0 */
}

static size_t put_zz(uint8_t *out, int64_t d) { return varint_write(out, quant_zigzag(d)); }

/* The angle delta modulo 65536, into [-32768, 32767]. */
static int64_t angle_delta(uint32_t cur, uint32_t base) {
    int64_t d = ((int64_t)cur - (int64_t)base) & 0xffff;
    return d >= 32768 ? d - 65536 : d;
}

/* The flags of cur against base: bits 0-4, and 7 when grounded or ground_id differs. */
static unsigned change_flags(const quant_state *cur, const quant_state *base) {
    unsigned flags = 0;
    if (cur->px != base->px || cur->py != base->py) flags |= QUANT_POSITION;
    if (cur->vx != base->vx || cur->vy != base->vy) flags |= QUANT_VELOCITY;
    if (cur->angle != base->angle) flags |= QUANT_ANGLE;
    if (cur->last_input_seq != base->last_input_seq) flags |= QUANT_INPUT_SEQ;
    if (cur->w != base->w) flags |= QUANT_ANGULAR_VELOCITY;
    if (cur->grounded != base->grounded || cur->ground_id != base->ground_id) flags |= QUANT_GROUND;
    return flags;
}

/* The parts of bits 0-4, in bit order. */
static size_t encode_parts(const quant_state *cur, const quant_state *base, unsigned flags,
                           uint8_t *out) {
    size_t n = 0;
    if (flags & QUANT_POSITION) {
        n += put_zz(out + n, (int64_t)cur->px - base->px);
        n += put_zz(out + n, (int64_t)cur->py - base->py);
    }
    if (flags & QUANT_VELOCITY) {
        n += put_zz(out + n, (int64_t)cur->vx - base->vx);
        n += put_zz(out + n, (int64_t)cur->vy - base->vy);
    }
    if (flags & QUANT_ANGLE) n += put_zz(out + n, angle_delta(cur->angle, base->angle));
    if (flags & QUANT_INPUT_SEQ) n += varint_write(out + n, cur->last_input_seq);
    if (flags & QUANT_ANGULAR_VELOCITY) n += put_zz(out + n, (int64_t)cur->w - base->w);
    return n;
}

/* Bit 7's part, after bit 6's: absolute values, not deltas (two small numbers; a lost baseline
 * cannot skew them). */
static size_t encode_ground(const quant_state *cur, unsigned flags, uint8_t *out) {
    if (!(flags & QUANT_GROUND)) return 0;
    size_t n = varint_write(out, cur->grounded ? 1u : 0u);
    return n + varint_write(out + n, cur->ground_id);
}

size_t quant_encode_change(const quant_state *cur, const quant_state *base, uint8_t *out) {
    unsigned flags = change_flags(cur, base);
    if (!flags) return 0;
    size_t n = varint_write(out, flags);
    n += encode_parts(cur, base, flags, out + n);
    return n + encode_ground(cur, flags, out + n);
}

size_t quant_encode_new(const quant_state *cur, uint32_t kind, uint32_t owner, const uint8_t *shape,
                        size_t shape_len, const quant_filter *filter, bool one_way, uint8_t *out) {
    static const quant_state zero;
    bool filtered = filter && (filter->category != QUANT_DEFAULT_CATEGORY ||
                               filter->mask != QUANT_DEFAULT_MASK || filter->sensor);
    /* Against zero: a new grounded character sets bit 7, one in the air has nothing to say. */
    unsigned flags = change_flags(cur, &zero) | QUANT_NEW | (filtered ? QUANT_FILTER : 0u) |
                     (one_way ? QUANT_ONE_WAY : 0u);
    size_t n = varint_write(out, flags);
    n += encode_parts(cur, &zero, flags, out + n);
    n += varint_write(out + n, kind);
    n += varint_write(out + n, owner);
    n += varint_write(out + n, shape_len);
    if (shape_len) memcpy(out + n, shape, shape_len);
    n += shape_len;
    if (filtered) {
        n += varint_write(out + n, filter->category);
        n += varint_write(out + n, filter->mask);
        n += varint_write(out + n, filter->sensor ? 1u : 0u);
    }
    return n + encode_ground(cur, flags, out + n);
}

/* ---- Reading ------------------------------------------------------------------------------- */

bool quant_table_copy(quant_table *to, const quant_table *from) {
    if (to->cap < from->count) {
        quant_body *grown = realloc(to->b, from->count * sizeof *grown);
        if (!grown) return false;
        to->b = grown;
        to->cap = from->count;
    }
    if (from->count) memcpy(to->b, from->b, from->count * sizeof *from->b);
    to->count = from->count;
    return true;
}

void quant_table_free(quant_table *t) {
    free(t->b);
    memset(t, 0, sizeof *t);
}

static size_t lower(const quant_table *t, uint32_t id) {
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->b[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const quant_body *quant_table_find(const quant_table *t, uint32_t id) {
    size_t i = lower(t, id);
    return i < t->count && t->b[i].id == id ? &t->b[i] : NULL;
}

void quant_table_remove(quant_table *t, uint32_t id) {
    size_t i = lower(t, id);
    if (i >= t->count || t->b[i].id != id) return;
    memmove(&t->b[i], &t->b[i + 1], (t->count - i - 1) * sizeof *t->b);
    t->count--;
}

static bool read_zz(const uint8_t **p, const uint8_t *end, int64_t *out) {
    uint64_t u;
    if (!varint_read(p, end, &u)) return false;
    *out = quant_unzigzag(u);
    return true;
}

/* base + d into *out, false when the sum leaves int32 (the server never sends one). */
static bool add_i32(int32_t base, int64_t d, int32_t *out) {
    if (d > (int64_t)UINT32_MAX || d < -(int64_t)UINT32_MAX) return false;
    int64_t s = (int64_t)base + d;
    if (s > INT32_MAX || s < INT32_MIN) return false;
    *out = (int32_t)s;
    return true;
}

static bool read_u32(const uint8_t **p, const uint8_t *end, uint32_t *out) {
    uint64_t u;
    if (!varint_read(p, end, &u) || u > UINT32_MAX) return false;
    *out = (uint32_t)u;
    return true;
}

/* The parts of bits 0-4 added to *q. */
static bool read_parts(const uint8_t **p, const uint8_t *end, unsigned flags, quant_state *q) {
    int64_t a, b;
    if (flags & QUANT_POSITION) {
        if (!read_zz(p, end, &a) || !read_zz(p, end, &b) || !add_i32(q->px, a, &q->px) ||
            !add_i32(q->py, b, &q->py))
            return false;
    }
    if (flags & QUANT_VELOCITY) {
        if (!read_zz(p, end, &a) || !read_zz(p, end, &b) || !add_i32(q->vx, a, &q->vx) ||
            !add_i32(q->vy, b, &q->vy))
            return false;
    }
    if (flags & QUANT_ANGLE) {
        if (!read_zz(p, end, &a) || a < -32768 || a > 32767) return false;
        q->angle = (uint16_t)(((int64_t)q->angle + a) & 0xffff);
    }
    if ((flags & QUANT_INPUT_SEQ) && !read_u32(p, end, &q->last_input_seq)) return false;
    if (flags & QUANT_ANGULAR_VELOCITY) {
        if (!read_zz(p, end, &a) || !add_i32(q->w, a, &q->w)) return false;
    }
    return true;
}

/* Bit 5's part (kind, owner, the Shape's bytes into rec) and bit 6's (into rec). */
static bool read_new(const uint8_t **p, const uint8_t *end, unsigned flags, quant_body *nb,
                     quant_record *rec) {
    uint64_t slen;
    if (!read_u32(p, end, &nb->kind) || !read_u32(p, end, &nb->owner) ||
        !varint_read(p, end, &slen) || slen > (uint64_t)(end - *p))
        return false;
    rec->shape = *p;
    rec->shape_len = (size_t)slen;
    *p += slen;
    if (flags & QUANT_FILTER) {
        uint32_t sensor;
        if (!read_u32(p, end, &rec->category) || !read_u32(p, end, &rec->mask) ||
            !read_u32(p, end, &sensor) || sensor > 1)
            return false;
        rec->sensor = sensor != 0;
    }
    nb->one_way = (flags & QUANT_ONE_WAY) != 0;
    return true;
}

/* Bit 7's part: grounded (0 or 1) and ground_id, absolute. */
static bool read_ground(const uint8_t **p, const uint8_t *end, quant_state *q) {
    uint32_t grounded;
    if (!read_u32(p, end, &grounded) || grounded > 1 || !read_u32(p, end, &q->ground_id))
        return false;
    q->grounded = (uint16_t)grounded;
    return true;
}

/* Room for one more body at index i of the table, which gets nb. */
static bool table_insert(quant_table *t, size_t i, const quant_body *nb) {
    if (t->count >= QUANT_TABLE_MAX) return false;
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        quant_body *grown = realloc(t->b, cap * sizeof *grown);
        if (!grown) return false;
        t->b = grown;
        t->cap = cap;
    }
    memmove(&t->b[i + 1], &t->b[i], (t->count - i) * sizeof *t->b);
    t->count++;
    t->b[i] = *nb;
    return true;
}

bool quant_apply(quant_table *t, const uint8_t *packed, size_t len, quant_record_fn fn, void *ctx) {
    if (len == 0) return true;
    const uint8_t *p = packed, *end = packed + len;
    uint64_t id = 0;
    bool first = true;
    while (p < end) {
        uint64_t gap, flags64;
        if (!varint_read(&p, end, &gap) || !varint_read(&p, end, &flags64)) return false;
        if ((!first && gap == 0) || gap > UINT32_MAX || id + gap > UINT32_MAX || id + gap == 0)
            return false;
        id += gap;
        first = false;
        if (flags64 & ~(uint64_t)QUANT_KNOWN_FLAGS) return false;
        unsigned flags = (unsigned)flags64;
        /* bits 6 and 8 describe a body as it comes: only in its new record */
        if ((flags & (QUANT_FILTER | QUANT_ONE_WAY)) && !(flags & QUANT_NEW)) return false;
        size_t i = lower(t, (uint32_t)id);
        bool present = i < t->count && t->b[i].id == id;
        if (present == ((flags & QUANT_NEW) != 0)) return false; /* new and known, or neither */
        quant_body nb;
        memset(&nb, 0, sizeof nb);
        nb.id = (uint32_t)id;
        quant_state q = present ? t->b[i].q : nb.q;
        quant_record rec;
        memset(&rec, 0, sizeof rec);
        rec.flags = flags;
        if (!read_parts(&p, end, flags, &q)) return false;
        if ((flags & QUANT_NEW) && !read_new(&p, end, flags, &nb, &rec)) return false;
        if ((flags & QUANT_GROUND) && !read_ground(&p, end, &q)) return false;
        if ((flags & QUANT_NEW) && !table_insert(t, i, &nb)) return false;
        t->b[i].q = q;
        rec.body = &t->b[i];
        if (fn) fn(ctx, &rec);
    }
    return true;
}

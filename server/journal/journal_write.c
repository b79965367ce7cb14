/* journal_write: the journaled calls and the bytes they append (journal.h; the encoding in
 * journal_format.h, described in docs/recording.md).
 *
 * Why the encoding is as it is (figures in docs/recording.md): at L1 almost every record is an
 * intent, and a player's next intent is usually its body's sequence + 1, often with the same
 * velocity. So an intent's tag carries flags saying what follows; the id is a zigzag delta from
 * the previous intent's (a tick's intents come in bursts of nearby ids); the sequence is implied
 * when it is the next one; an unchanged velocity or turning speed is left out, and the replay
 * takes the body's own, which the world holds bit for bit as the call gave it when it was not
 * clamped (the writer compares bits, so a clamped one is always written out). Floats are never
 * quantized: the replay must make the very calls the daemon made. */
#include <stdlib.h>

#include "journal_format.h"

struct journal {
    journal_buf cur;       /* appended, not yet taken */
    journal_buf spare;     /* a taken buffer given back: the next take's */
    size_t max_pending;    /* bound on cur.len */
    bool overflowed;       /* max_pending crossed, or out of memory: nothing more appended */
    uint32_t steps;        /* steps not yet written (one JTAG_STEP when the next record comes) */
    uint32_t hash_every;   /* a JTAG_HASH after each step whose tick is a multiple */
    world_body_id last_id; /* the previous intent's body */
    journal_stats stats;
};

/* ---- appending ------------------------------------------------------------------------------ */

static bool reserve(journal *j, size_t n) {
    if (j->overflowed) return false;
    if (j->cur.len + n > j->max_pending) {
        j->overflowed = true;
        return false;
    }
    if (j->cur.len + n <= j->cur.cap) return true;
    size_t cap = j->cur.cap ? j->cur.cap : 64 * 1024;
    while (cap < j->cur.len + n)
        cap *= 2;
    if (cap > j->max_pending) cap = j->max_pending;
    uint8_t *d = realloc(j->cur.data, cap);
    if (!d) {
        j->overflowed = true;
        return false;
    }
    j->cur.data = d;
    j->cur.cap = cap;
    return true;
}
/* Within a record (reserved up front, at most 64 bytes past a polygon's vertices). */
static inline uint8_t *put_u8(uint8_t *p, uint8_t v) {
    *p = v;
    return p + 1;
}
static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}
static inline uint8_t *put_f32(uint8_t *p, float v) {
    memcpy(p, &v, 4);
    return p + 4;
}
static inline uint8_t *put_u32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4);
    return p + 4;
}
static inline uint8_t *put_u64(uint8_t *p, uint64_t v) {
    memcpy(p, &v, 8);
    return p + 8;
}
/* Room for a record of at most n bytes, after the steps it must follow; NULL when the journal
 * takes no more. The record ends with record_end. */
static uint8_t *record_begin(journal *j, size_t n);
static void record_end(journal *j, uint8_t *end) {
    j->cur.len = (size_t)(end - j->cur.data);
    j->stats.records++;
}
static void flush_steps(journal *j) {
    if (!j->steps || !reserve(j, 11)) return;
    uint8_t *p = j->cur.data + j->cur.len;
    p = put_u8(p, JTAG_STEP);
    p = put_varint(p, j->steps);
    j->steps = 0;
    record_end(j, p);
}
static uint8_t *record_begin(journal *j, size_t n) {
    flush_steps(j);
    if (!reserve(j, n)) return NULL;
    return j->cur.data + j->cur.len;
}

static uint8_t *put_shape(uint8_t *p, const geom_shape *s) {
    p = put_u8(p, (uint8_t)s->kind);
    switch (s->kind) {
    case GEOM_SHAPE_BOX:
        return put_f32(put_f32(p, s->u.half_extents.x), s->u.half_extents.y);
    case GEOM_SHAPE_CIRCLE:
        return put_f32(p, s->u.radius);
    default:
        p = put_u8(p, (uint8_t)s->u.polygon.count);
        for (int i = 0; i < s->u.polygon.count; i++)
            p = put_f32(put_f32(p, s->u.polygon.vertices[i].x), s->u.polygon.vertices[i].y);
        return p;
    }
}

static uint8_t *put_string(uint8_t *p, const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n > JOURNAL_MAX_NAME) n = JOURNAL_MAX_NAME;
    p = put_u8(p, (uint8_t)n);
    if (n) memcpy(p, s, n);
    return p + n;
}

/* ---- the journal ----------------------------------------------------------------------------- */

journal *journal_start(const world *w, const journal_meta *meta, size_t max_pending) {
    size_t image_len = 0;
    void *image = world_image_save(w, &image_len);
    journal *j = calloc(1, sizeof *j);
    size_t header = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + 3 * (1 + JOURNAL_MAX_NAME) + 8;
    if (!image || !j) {
        free(image);
        free(j);
        return NULL;
    }
    /* the header always fits, whatever the bound: a journal without one is no journal */
    j->max_pending = (max_pending > header + image_len ? max_pending : header + image_len) + 64;
    j->hash_every = meta->hash_every;
    j->stats.start_tick = world_tick(w);
    if (!reserve(j, header + image_len)) {
        journal_free(j);
        free(image);
        return NULL;
    }
    uint8_t *p = j->cur.data, *fields;
    memcpy(p, JOURNAL_MAGIC, 8);
    p = put_u32(p + 8, JOURNAL_FORMAT_VERSION);
    fields = p + 4; /* the fields' length, written once they are */
    p = put_u64(fields, world_tick(w));
    p = put_u64(p, meta->unix_ms);
    p = put_u32(p, meta->hash_every);
    p = put_u32(p, meta->history_ticks);
    p = put_u32(p, meta->events ? 1u : 0u);
    p = put_string(p, meta->daemon_version);
    p = put_string(p, meta->room);
    p = put_string(p, meta->world_name);
    put_u32(fields - 4, (uint32_t)(p - fields));
    p = put_u64(p, image_len);
    memcpy(p, image, image_len);
    p += image_len;
    free(image);
    j->cur.len = (size_t)(p - j->cur.data);
    j->stats.header_bytes = j->cur.len;
    return j;
}

void journal_free(journal *j) {
    if (!j) return;
    free(j->cur.data);
    free(j->spare.data);
    free(j);
}

world_status journal_spawn(journal *j, world *w, world_body_kind kind, const geom_shape *shape,
                           vec2 position, float angle, uint32_t owner, world_body_id *out_id,
                           geom_shape_error *shape_error) {
    world_body_id id = WORLD_NULL_BODY;
    world_status st = world_spawn_turned(w, kind, shape, position, angle, owner, &id, shape_error);
    if (out_id) *out_id = id;
    if (st != WORLD_OK || !j) return st;
    uint8_t *p = record_begin(j, 2 + 2 + 8 * GEOM_MAX_POLYGON_VERTICES + 12 + 10);
    if (!p) return st;
    p = put_u8(p, JTAG_SPAWN);
    p = put_u8(p, (uint8_t)kind);
    p = put_shape(p, shape);
    p = put_f32(put_f32(put_f32(p, position.x), position.y), angle);
    p = put_varint(put_varint(p, owner), id);
    record_end(j, p);
    return st;
}

/* A record of a tag and an id (despawn), or with a byte (one-way). */
static void put_id_record(journal *j, uint8_t tag, world_body_id id, int byte) {
    uint8_t *p = record_begin(j, 1 + 5 + 1);
    if (!p) return;
    p = put_varint(put_u8(p, tag), id);
    if (byte >= 0) p = put_u8(p, (uint8_t)byte);
    record_end(j, p);
}

world_status journal_despawn(journal *j, world *w, world_body_id id) {
    world_status st = world_despawn(w, id);
    if (st == WORLD_OK && j) put_id_record(j, JTAG_DESPAWN, id, -1);
    return st;
}

world_status journal_set_one_way(journal *j, world *w, world_body_id id, bool one_way) {
    world_status st = world_body_set_one_way(w, id, one_way);
    if (st == WORLD_OK && j) put_id_record(j, JTAG_ONE_WAY, id, one_way);
    return st;
}

world_status journal_set_filter(journal *j, world *w, world_body_id id, const world_filter *f) {
    world_status st = world_body_set_filter(w, id, f);
    if (st != WORLD_OK || !j) return st;
    world_filter d = {0, 0, false};
    if (f) d = *f;
    uint8_t *p = record_begin(j, 1 + 5 + 9);
    if (!p) return st;
    p = put_varint(put_u8(p, JTAG_FILTER), id);
    p = put_u8(put_u32(put_u32(p, d.category), d.mask), d.sensor);
    record_end(j, p);
    return st;
}

world_status journal_set_character(journal *j, world *w, world_body_id id,
                                   const world_character_options *opt) {
    world_status st = world_body_set_character(w, id, opt);
    if (st != WORLD_OK || !j) return st;
    world_character_options o = {0};
    if (opt) o = *opt;
    uint8_t *p = record_begin(j, 1 + 5 + 20 + 10);
    if (!p) return st;
    p = put_varint(put_u8(p, JTAG_CHARACTER), id);
    p = put_f32(put_f32(put_f32(p, o.max_slope), o.step_height), o.snap_distance);
    p = put_f32(put_f32(p, o.jump_speed), o.gravity_scale);
    p = put_varint(put_varint(p, o.jump_buffer_ms), o.coyote_ms);
    record_end(j, p);
    return st;
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

world_status journal_intent(journal *j, world *w, uint32_t owner, world_body_id id, vec2 velocity,
                            float angular_velocity, uint32_t input_seq, bool jump) {
    /* what the world holds before the call: what the record may leave out */
    vec2 held = {0.0f, 0.0f};
    float held_spin = 0.0f;
    uint32_t newest = 0;
    if (j) {
        world_body_intent(w, id, &held, &held_spin);
        newest = world_body_input_seq(w, id);
    }
    world_status st = world_set_intent_as(w, owner, id, velocity, angular_velocity, input_seq);
    if (st != WORLD_OK) return st;
    if (jump) world_character_jump(w, id);
    if (!j) return st;
    uint8_t *p = record_begin(j, 1 + 5 + 5 + 12), *start = p;
    if (!p) return st;
    uint8_t tag = JTAG_INTENT | (jump ? JINTENT_JUMP : 0);
    bool vel = !same_bits(velocity.x, held.x) || !same_bits(velocity.y, held.y);
    bool spin = !same_bits(angular_velocity, held_spin);
    bool seq = input_seq != newest + 1u;
    tag |= (vel ? JINTENT_VELOCITY : 0) | (spin ? JINTENT_SPIN : 0) | (seq ? JINTENT_SEQ : 0);
    p = put_u8(p, tag);
    p = put_varint(p, journal_zigzag((int32_t)(id - j->last_id)));
    if (seq) p = put_varint(p, input_seq - newest);
    if (vel) p = put_f32(put_f32(p, velocity.x), velocity.y);
    if (spin) p = put_f32(p, angular_velocity);
    j->last_id = id;
    j->stats.intents++;
    j->stats.intent_bytes += (uint64_t)(p - start);
    record_end(j, p);
    return st;
}

void journal_set_mover_collisions(journal *j, world *w, bool enabled) {
    world_set_mover_collisions(w, enabled);
    if (!j) return;
    uint8_t *p = record_begin(j, 2);
    if (!p) return;
    record_end(j, put_u8(put_u8(p, JTAG_COLLISIONS), enabled));
}

void journal_step(journal *j, world *w) {
    world_step(w);
    if (!j) return;
    if (++j->steps == JOURNAL_MAX_STEPS) flush_steps(j);
    if (j->hash_every && world_tick(w) % j->hash_every == 0) {
        uint8_t *p = record_begin(j, 9);
        if (p) record_end(j, put_u64(put_u8(p, JTAG_HASH), world_state_hash(w)));
    }
}

void journal_finish(journal *j) {
    uint8_t *p = record_begin(j, 1);
    if (p) record_end(j, put_u8(p, JTAG_END));
}

journal_buf journal_take(journal *j) {
    flush_steps(j);
    journal_buf out = j->cur;
    j->stats.bytes += out.len;
    j->cur = j->spare;
    j->cur.len = 0;
    j->spare = (journal_buf){0};
    return out;
}

void journal_recycle(journal *j, journal_buf b) {
    /* one spare is all a writer with one write in flight needs */
    if (j->spare.data || !b.data) {
        free(b.data);
        return;
    }
    b.len = 0;
    j->spare = b;
}

size_t journal_pending(const journal *j) { return j->cur.len; }
bool journal_overflowed(const journal *j) { return j->overflowed; }

void journal_get_stats(const journal *j, journal_stats *out) {
    *out = j->stats;
    out->bytes += j->cur.len;
}

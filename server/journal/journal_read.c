/* journal_read: the header, the records, and the replay (journal.h).
 *
 * One decoder (read_record) serves both passes: the scan at open, which only checks that every
 * record is whole and well formed and finds the last whole tick, and the replay, which applies
 * them. Replay stops at the scan's end: inputs after the last step (a cut journal's unfinished
 * tick) are never applied, so a cut journal replays exactly up to its last whole tick. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "journal_format.h"

/* ---- bytes in ----------------------------------------------------------------------------- */

typedef struct cursor {
    const uint8_t *p, *end;
    bool bad; /* ran past the end, or a varint too long */
} cursor;

static uint8_t get_u8(cursor *c) {
    if (c->p >= c->end) {
        c->bad = true;
        return 0;
    }
    return *c->p++;
}
static uint64_t get_varint(cursor *c) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b = get_u8(c);
        if (c->bad) return 0;
        v |= (uint64_t)(b & 0x7fu) << shift;
        if (!(b & 0x80u)) return v;
    }
    c->bad = true;
    return 0;
}
static uint32_t get_varint32(cursor *c) {
    uint64_t v = get_varint(c);
    if (v > UINT32_MAX) c->bad = true;
    return (uint32_t)v;
}
static void get_bytes(cursor *c, void *out, size_t n) {
    if ((size_t)(c->end - c->p) < n) {
        c->bad = true;
        c->p = c->end;
        memset(out, 0, n);
        return;
    }
    memcpy(out, c->p, n);
    c->p += n;
}
static float get_f32(cursor *c) {
    float v;
    get_bytes(c, &v, 4);
    return v;
}
static uint32_t get_u32(cursor *c) {
    uint32_t v;
    get_bytes(c, &v, 4);
    return v;
}
static uint64_t get_u64(cursor *c) {
    uint64_t v;
    get_bytes(c, &v, 8);
    return v;
}

/* ---- the header --------------------------------------------------------------------------- */

static void get_string(cursor *c, char *out) {
    uint8_t n = get_u8(c);
    get_bytes(c, out, n);
    out[c->bad ? 0 : n] = 0;
}

bool journal_read_header(const uint8_t *data, size_t len, journal_header *h, char *err,
                         size_t err_size) {
    memset(h, 0, sizeof *h);
    cursor c = {data, data + len, false};
    char magic[8];
    get_bytes(&c, magic, sizeof magic);
    const char *why = NULL;
    if (c.bad || memcmp(magic, JOURNAL_MAGIC, 8) != 0) {
        why = "not a collide journal (no COLLIDEJ at its start)";
    } else if ((h->version = get_u32(&c)), c.bad) {
        why = "the header is cut short";
    } else if (h->version != JOURNAL_FORMAT_VERSION) {
        snprintf(err, err_size, "journal format version %" PRIu32 ", this build reads only %u",
                 h->version, JOURNAL_FORMAT_VERSION);
        return false;
    } else {
        uint32_t fields = get_u32(&c);
        /* the length checked before a pointer is made from it */
        bool fits = !c.bad && fields <= (size_t)(c.end - c.p);
        cursor f = {c.p, fits ? c.p + fields : c.p, false};
        if (!fits) {
            why = "the header is cut short";
        } else {
            h->start_tick = get_u64(&f);
            h->unix_ms = get_u64(&f);
            h->hash_every = get_u32(&f);
            h->history_ticks = get_u32(&f);
            h->events = get_u32(&f) & 1u;
            get_string(&f, h->daemon_version);
            get_string(&f, h->room);
            get_string(&f, h->world_name);
            c.p += fields; /* fields a later version of 1 appends are skipped */
            uint64_t image_len = get_u64(&c);
            if (f.bad)
                why = "the header's fields are cut short";
            else if (c.bad || image_len > (uint64_t)(c.end - c.p))
                why = "the world image is cut short";
            else {
                h->image = c.p;
                h->image_len = (size_t)image_len;
                h->header_len = (size_t)(c.p - data) + h->image_len;
            }
        }
    }
    if (why) snprintf(err, err_size, "%s", why);
    return why == NULL;
}

/* ---- records ------------------------------------------------------------------------------ */

typedef struct jrecord {
    uint8_t tag; /* JTAG_*; intents: the whole tag byte */
    world_body_id id;
    uint64_t n; /* STEP: steps; HASH: the hash */
    world_body_kind kind;
    geom_shape shape;
    vec2 v;      /* SPAWN: position; INTENT: velocity */
    float angle; /* SPAWN: angle; INTENT: turning speed */
    uint32_t owner;
    uint32_t seq_delta;
    world_filter filter;
    world_character_options opt;
    bool flag; /* ONE_WAY, COLLISIONS */
} jrecord;

/* A shape as the daemon made it: through geom_make_*, which derive what the payload leaves out
 * (a polygon's normals) exactly as they did live. A shape they refuse is a malformed record. */
static void get_shape(cursor *c, geom_shape *s, bool *malformed) {
    memset(s, 0, sizeof *s);
    uint8_t kind = get_u8(c);
    geom_shape_error err = GEOM_ERR_UNKNOWN_KIND;
    if (kind == GEOM_SHAPE_BOX) {
        vec2 half;
        half.x = get_f32(c);
        half.y = get_f32(c);
        err = geom_make_box(half, s);
    } else if (kind == GEOM_SHAPE_CIRCLE) {
        err = geom_make_circle(get_f32(c), s);
    } else if (kind == GEOM_SHAPE_POLYGON) {
        uint8_t n = get_u8(c);
        vec2 v[GEOM_MAX_POLYGON_VERTICES];
        if (n > GEOM_MAX_POLYGON_VERTICES) n = 0;
        for (int i = 0; i < n; i++) {
            v[i].x = get_f32(c);
            v[i].y = get_f32(c);
        }
        if (n) err = geom_make_polygon(v, n, s);
    }
    if (!c->bad && err) *malformed = true;
}

/* Decodes one record; false when it is malformed or cut (c->bad says which: cut). prev_id is the
 * previous intent's body, updated by an intent. */
static bool read_record(cursor *c, jrecord *r, world_body_id *prev_id, bool *malformed) {
    *malformed = false;
    r->tag = get_u8(c);
    if (c->bad) return false;
    if (r->tag & JTAG_INTENT) {
        if (r->tag & JINTENT_RESERVED) goto malformed;
        r->id = *prev_id + (uint32_t)journal_unzigzag(get_varint32(c));
        r->seq_delta = r->tag & JINTENT_SEQ ? get_varint32(c) : 1u;
        if (r->tag & JINTENT_VELOCITY) {
            r->v.x = get_f32(c); /* two statements: argument order is unspecified */
            r->v.y = get_f32(c);
        }
        if (r->tag & JINTENT_SPIN) r->angle = get_f32(c);
        if (!c->bad) *prev_id = r->id;
        return !c->bad;
    }
    switch (r->tag) {
    case JTAG_STEP:
        r->n = get_varint(c);
        if (!c->bad && (r->n == 0 || r->n > JOURNAL_MAX_STEPS)) goto malformed;
        break;
    case JTAG_HASH:
        r->n = get_u64(c);
        break;
    case JTAG_SPAWN: {
        uint8_t kind = get_u8(c);
        get_shape(c, &r->shape, malformed);
        float x = get_f32(c), y = get_f32(c);
        r->v = v2(x, y);
        r->angle = get_f32(c);
        r->owner = get_varint32(c);
        r->id = get_varint32(c);
        r->kind = (world_body_kind)kind;
        if (!c->bad && kind != WORLD_BODY_STATIC && kind != WORLD_BODY_MOVING) goto malformed;
        if (*malformed) return false;
        break;
    }
    case JTAG_DESPAWN:
        r->id = get_varint32(c);
        break;
    case JTAG_FILTER:
        r->id = get_varint32(c);
        r->filter.category = get_u32(c);
        r->filter.mask = get_u32(c);
        r->filter.sensor = get_u8(c) != 0;
        break;
    case JTAG_ONE_WAY:
        r->id = get_varint32(c);
        r->flag = get_u8(c) != 0;
        break;
    case JTAG_CHARACTER:
        r->id = get_varint32(c);
        r->opt.max_slope = get_f32(c);
        r->opt.step_height = get_f32(c);
        r->opt.snap_distance = get_f32(c);
        r->opt.jump_speed = get_f32(c);
        r->opt.gravity_scale = get_f32(c);
        r->opt.jump_buffer_ms = get_varint32(c);
        r->opt.coyote_ms = get_varint32(c);
        break;
    case JTAG_COLLISIONS:
        r->flag = get_u8(c) != 0;
        break;
    case JTAG_END:
        break;
    default:
        goto malformed;
    }
    return !c->bad;
malformed:
    *malformed = true;
    return false;
}

/* ---- the replay --------------------------------------------------------------------------- */

struct journal_replay {
    journal_header header;
    const uint8_t *data; /* the journal's first byte */
    world *w;
    const uint8_t *records, *end; /* the records the scan found whole, up to the last tick */
    cursor at;                    /* the next record to apply */
    uint32_t steps_left;          /* of a STEP record begun */
    world_body_id prev_id;
    uint64_t last_tick;
    char truncated[160];
    char error[200];
    journal_replay_stats stats;
};

/* The scan: every record whole and well formed up to the last step or hash; the end is set
 * after it. */
static bool scan(journal_replay *r, const uint8_t *from, const uint8_t *to, char *err,
                 size_t err_size) {
    cursor c = {from, to, false};
    world_body_id prev = 0;
    uint64_t tick = r->header.start_tick;
    r->end = from;
    r->last_tick = tick;
    while (c.p < c.end) {
        const uint8_t *at = c.p;
        jrecord rec;
        bool malformed;
        if (!read_record(&c, &rec, &prev, &malformed)) {
            if (malformed) {
                snprintf(err, err_size,
                         "a malformed record (tag 0x%02x) at byte %zu, after tick %" PRIu64,
                         rec.tag, (size_t)(at - r->data), tick);
                return false;
            }
            snprintf(r->truncated, sizeof r->truncated,
                     "the journal is cut inside a record after tick %" PRIu64, tick);
            return true;
        }
        if (rec.tag == JTAG_END) {
            r->end = c.p;
            r->truncated[0] = 0;
            return true;
        }
        if (rec.tag == JTAG_STEP && tick > UINT64_MAX - rec.n) {
            snprintf(err, err_size, "the journal's ticks run past 2^64 at byte %zu",
                     (size_t)(at - r->data));
            return false;
        }
        if (rec.tag == JTAG_STEP) tick += rec.n;
        if (rec.tag == JTAG_STEP || rec.tag == JTAG_HASH) {
            r->end = c.p;
            r->last_tick = tick;
        }
    }
    snprintf(r->truncated, sizeof r->truncated,
             "the journal ends after tick %" PRIu64 " without its end record", tick);
    return true;
}

journal_replay *journal_replay_open(const uint8_t *data, size_t len, char *err, size_t err_size) {
    journal_replay *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    if (!journal_read_header(data, len, &r->header, err, err_size)) {
        free(r);
        return NULL;
    }
    r->w = world_image_load(r->header.image, r->header.image_len, err, err_size);
    if (!r->w) {
        free(r);
        return NULL;
    }
    if (world_tick(r->w) != r->header.start_tick) {
        snprintf(err, err_size, "the header's start tick is not the world image's");
        journal_replay_free(r);
        return NULL;
    }
    if (r->header.events) world_set_events(r->w, true);
    if (r->header.history_ticks && !world_set_history(r->w, r->header.history_ticks)) {
        snprintf(err, err_size, "out of memory (query history)");
        journal_replay_free(r);
        return NULL;
    }
    r->data = data;
    r->records = data + r->header.header_len;
    if (!scan(r, r->records, data + len, err, err_size)) {
        journal_replay_free(r);
        return NULL;
    }
    r->at = (cursor){r->records, r->end, false};
    return r;
}

void journal_replay_free(journal_replay *r) {
    if (!r) return;
    world_destroy(r->w);
    free(r);
}

world *journal_replay_world(journal_replay *r) { return r->w; }
const journal_header *journal_replay_header(const journal_replay *r) { return &r->header; }
uint64_t journal_replay_last_tick(const journal_replay *r) { return r->last_tick; }
const char *journal_replay_truncated(const journal_replay *r) {
    return r->truncated[0] ? r->truncated : NULL;
}
const char *journal_replay_error(const journal_replay *r) { return r->error; }
void journal_replay_get_stats(const journal_replay *r, journal_replay_stats *out) {
    *out = r->stats;
}

static journal_result diverged(journal_replay *r, const char *what, world_body_id id,
                               world_status st) {
    snprintf(r->error, sizeof r->error,
             "tick %" PRIu64 ": %s of body %" PRIu32 " answered %s, not as it did live",
             world_tick(r->w) + 1, what, id, world_status_str(st));
    return JOURNAL_DIVERGED;
}

/* One input record, as the daemon called the world. */
static journal_result apply(journal_replay *r, const jrecord *rec) {
    world *w = r->w;
    world_status st = WORLD_OK;
    if (rec->tag & JTAG_INTENT) {
        vec2 vel;
        float spin;
        if (!world_body_intent(w, rec->id, &vel, &spin))
            return diverged(r, "an intent", rec->id, WORLD_ERR_NOT_FOUND);
        if (rec->tag & JINTENT_VELOCITY) vel = rec->v;
        if (rec->tag & JINTENT_SPIN) spin = rec->angle;
        uint32_t seq = world_body_input_seq(w, rec->id) + rec->seq_delta;
        st = world_set_intent_as(w, 0, rec->id, vel, spin, seq);
        if (st == WORLD_OK && (rec->tag & JINTENT_JUMP)) world_character_jump(w, rec->id);
        r->stats.intents++;
        return st == WORLD_OK ? JOURNAL_OK : diverged(r, "an intent", rec->id, st);
    }
    switch (rec->tag) {
    case JTAG_SPAWN: {
        world_body_id id = WORLD_NULL_BODY;
        st = world_spawn_turned(w, rec->kind, &rec->shape, rec->v, rec->angle, rec->owner, &id,
                                NULL);
        if (st == WORLD_OK && id != rec->id) {
            snprintf(r->error, sizeof r->error,
                     "tick %" PRIu64 ": a spawn gave id %" PRIu32 ", the journal's was %" PRIu32,
                     world_tick(w) + 1, id, rec->id);
            return JOURNAL_DIVERGED;
        }
        return st == WORLD_OK ? JOURNAL_OK : diverged(r, "a spawn", rec->id, st);
    }
    case JTAG_DESPAWN:
        st = world_despawn(w, rec->id);
        break;
    case JTAG_FILTER:
        st = world_body_set_filter(w, rec->id, &rec->filter);
        break;
    case JTAG_ONE_WAY:
        st = world_body_set_one_way(w, rec->id, rec->flag);
        break;
    case JTAG_CHARACTER:
        st = world_body_set_character(w, rec->id, &rec->opt);
        break;
    case JTAG_COLLISIONS:
        world_set_mover_collisions(w, rec->flag);
        break;
    default:
        break;
    }
    return st == WORLD_OK ? JOURNAL_OK : diverged(r, "a call", rec->id, st);
}

/* A hash record: the world must hash to it now. */
static journal_result check_hash(journal_replay *r, uint64_t want) {
    uint64_t got = world_state_hash(r->w);
    r->stats.hashes_checked++;
    if (got == want) return JOURNAL_OK;
    snprintf(r->error, sizeof r->error,
             "tick %" PRIu64 ": state hash %016" PRIx64 ", the journal's is %016" PRIx64,
             world_tick(r->w), got, want);
    return JOURNAL_MISMATCH;
}

journal_result journal_replay_to(journal_replay *r, uint64_t tick) {
    if (r->error[0]) return JOURNAL_MISMATCH;
    for (;;) {
        while (r->steps_left && world_tick(r->w) < tick) {
            world_step(r->w);
            r->steps_left--;
        }
        if (r->steps_left) return JOURNAL_OK; /* at the tick, inside a run of steps */
        if (r->at.p >= r->at.end) return world_tick(r->w) >= tick ? JOURNAL_OK : JOURNAL_END;
        /* at the tick: its hash, if stored, is checked; its next inputs are not applied */
        cursor peek = r->at;
        jrecord rec;
        bool malformed;
        world_body_id prev = r->prev_id;
        if (!read_record(&peek, &rec, &prev, &malformed)) return JOURNAL_CORRUPT;
        if (world_tick(r->w) >= tick && rec.tag != JTAG_HASH) return JOURNAL_OK;
        r->at = peek;
        r->prev_id = prev;
        r->stats.records++;
        journal_result res = JOURNAL_OK;
        if (rec.tag == JTAG_STEP)
            r->steps_left = (uint32_t)rec.n;
        else if (rec.tag == JTAG_HASH)
            res = check_hash(r, rec.n);
        else
            res = apply(r, &rec);
        if (res != JOURNAL_OK) return res;
    }
}

void journal_replay_position(const journal_replay *r, journal_position *out) {
    out->tick = world_tick(r->w);
    out->offset = (size_t)(r->at.p - r->data);
    out->steps_left = r->steps_left;
    out->prev_id = r->prev_id;
}

bool journal_replay_resume(journal_replay *r, world *w, const journal_position *pos, char *err,
                           size_t err_size) {
    const char *why = NULL;
    if (pos->offset < r->header.header_len || pos->offset > (size_t)(r->end - r->data))
        why = "the position lies outside the journal's records";
    else if (pos->tick < r->header.start_tick || pos->tick > r->last_tick ||
             pos->steps_left > r->last_tick - pos->tick)
        why = "the position lies outside the journal's ticks";
    else if (world_tick(w) != pos->tick)
        why = "the world is not at the position's tick";
    else if (r->header.history_ticks && !world_set_history(w, r->header.history_ticks))
        why = "out of memory (query history)";
    if (why) {
        snprintf(err, err_size, "%s", why);
        return false;
    }
    if (r->header.events) world_set_events(w, true);
    world_destroy(r->w);
    r->w = w;
    r->at = (cursor){r->data + pos->offset, r->end, false};
    r->steps_left = pos->steps_left;
    r->prev_id = pos->prev_id;
    r->error[0] = 0;
    return true;
}

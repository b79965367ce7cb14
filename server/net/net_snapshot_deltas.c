/* net_snapshot_deltas: the snapshot writer's per-tick side, shared by every client (see
 * net_snapshot.h): its memory, and each changed mover's delta record (its BodyState fields, and
 * its quantized state) encoded once per tick as the view index's mirror takes the world's body
 * table in. net_snapshot.c writes each client's snapshot from these. */
#include "net_snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "collide_assert.h"
#include "varint.h"
#include "wire.h"

_Static_assert(NET_SNAPSHOT_RECORD_COPY >= NET_SNAPSHOT_RECORD_MAX,
               "a record copy covers any record");

/* ---- The writer's memory ------------------------------------------------------------------- */

bool net_snapshot_writer_init(net_snapshot_writer *sw, const net_config *cfg, const world *w) {
    memset(sw, 0, sizeof *sw);
    world_stats stats;
    world_get_stats(w, &stats);
    sw->query_cap = stats.capacity ? stats.capacity : 1;
    /* A removed id takes at least 1 byte, and removed ids fill at most half a frame: this bounds
     * how many one snapshot holds (ids of a slot's first generation are slot + 1, often 1 byte). */
    sw->removed_cap = cfg->max_frame / 2u + 1u;
    sw->query = malloc(sw->query_cap * sizeof *sw->query);
    sw->removed = malloc(sw->removed_cap * sizeof *sw->removed);
    sw->deferred = malloc(2 * sw->query_cap * sizeof *sw->deferred);
    bool view_ok = net_view_init(&sw->view, w, cfg->view_radius);
    bool marks_ok = net_view_marks_init(&sw->marks, w);
    sw->position_quantum = cfg->position_quantum;
    sw->velocity_quantum = cfg->velocity_quantum;
    sw->qrecs = malloc(sw->query_cap * sizeof *sw->qrecs);
    return view_ok && marks_ok && sw->query && sw->removed && sw->deferred && sw->qrecs &&
           net_buf_reserve(&sw->body, cfg->max_frame + NET_SNAPSHOT_RECORD_COPY) &&
           net_buf_reserve(&sw->qbytes, cfg->max_frame + NET_SNAPSHOT_QUANT_SLACK);
}

void net_snapshot_writer_free(net_snapshot_writer *sw) {
    free(sw->query);
    net_view_marks_free(&sw->marks);
    free(sw->removed);
    free(sw->deferred);
    net_known_free(&sw->known_next);
    net_buf_free(&sw->body);
    net_buf_free(&sw->deltas);
    free(sw->free_records);
    net_view_free(&sw->view);
    free(sw->qslot);
    free(sw->qknown_next);
    free(sw->qrecs);
    net_buf_free(&sw->qbytes);
    free(sw->dg_next);
    free(sw->dg_cands);
    free(sw->dg_owned);
}

/* ---- Delta records ------------------------------------------------------------------------- */

/* A Vec2 as a length-delimited field; zero components are left out, as proto3 does. */
static size_t put_vec2_field(uint8_t *out, uint32_t field, vec2 v) {
    size_t n = 2;
    if (v.x != 0.0f) n += wire_put_float(out + n, WIRE_VEC2_X, v.x);
    if (v.y != 0.0f) n += wire_put_float(out + n, WIRE_VEC2_Y, v.y);
    out[0] = WIRE_KEY(field, WIRE_LEN);
    out[1] = (uint8_t)(n - 2);
    return n;
}

/* Hand-encoded: the same bytes protobuf-c writes for these fields of BodyState (id, position,
 * velocity, last_input_seq, angle, angular_velocity, grounded, ground_id), without its
 * descriptor walk; the unit tests decode every snapshot with protobuf-c. */
size_t net_snapshot_encode_delta(const world_body_row *info, const net_ground *ground,
                                 uint8_t *out) {
    size_t n = 0;
    out[n++] = WIRE_KEY(WIRE_BODY_ID, WIRE_VARINT);
    n += varint_write(out + n, info->id);
    n += put_vec2_field(out + n, WIRE_BODY_POSITION, info->position);
    n += put_vec2_field(out + n, WIRE_BODY_VELOCITY, info->velocity);
    if (info->last_input_seq) {
        out[n++] = WIRE_KEY(WIRE_BODY_LAST_INPUT_SEQ, WIRE_VARINT);
        n += varint_write(out + n, info->last_input_seq);
    }
    /* 1.1 rotation: left out at 0, so a body that never turned costs the bytes it did before */
    if (info->angle != 0.0f) n += wire_put_float(out + n, WIRE_BODY_ANGLE, info->angle);
    if (info->angular_velocity != 0.0f)
        n += wire_put_float(out + n, WIRE_BODY_ANGULAR_VELOCITY, info->angular_velocity);
    /* 1.2 characters: left out at false and 0 like the rest, so that a plain body's record is
     * 1.1's; a record is a body's whole state for its fields, so one without them says "not
     * grounded" to a character's watcher */
    if (ground->grounded) {
        out[n++] = WIRE_KEY(WIRE_BODY_GROUNDED, WIRE_VARINT);
        out[n++] = 1;
    }
    if (ground->ground_id) {
        out[n++] = WIRE_KEY(WIRE_BODY_GROUND_ID, WIRE_VARINT);
        n += varint_write(out + n, ground->ground_id);
    }
    COLLIDE_ASSERT(n <= NET_SNAPSHOT_DELTA_MAX);
    return n;
}

/* net_view's hook: one fixed slot of NET_SNAPSHOT_RECORD_COPY bytes per mover in the arena, each
 * a whole Snapshot.bodies field that a snapshot carries with one fixed-size copy. A changed mover
 * is re-encoded in its slot; a despawned one's slot goes to a free stack for the next new one. */
static bool reserve_deltas(void *ctx, size_t movers) {
    net_snapshot_writer *sw = ctx;
    size_t need = movers * NET_SNAPSHOT_RECORD_COPY;
    if (need > sw->deltas.len && !net_buf_reserve(&sw->deltas, need - sw->deltas.len)) return false;
    if (movers > sw->free_cap) {
        uint32_t *p = realloc(sw->free_records, movers * sizeof *p);
        if (!p) return false;
        sw->free_records = p;
        sw->free_cap = movers;
    }
    if (movers > sw->qslots) {
        net_qslot *q = realloc(sw->qslot, movers * sizeof *q);
        if (!q) return false;
        sw->qslot = q;
        sw->qslots = movers;
    }
    return true;
}

static uint32_t record_delta(void *ctx, const world_body_row *row, uint32_t handle) {
    net_snapshot_writer *sw = ctx;
    if (handle == NET_VIEW_NO_DELTA) {
        size_t slot = sw->free_count ? sw->free_records[--sw->free_count] : sw->record_slots++;
        COLLIDE_ASSERT((slot + 1u) * NET_SNAPSHOT_RECORD_COPY <= sw->deltas.cap);
        handle = (uint32_t)(slot * NET_SNAPSHOT_RECORD_COPY);
        if (sw->deltas.len < handle + NET_SNAPSHOT_RECORD_COPY)
            sw->deltas.len = handle + NET_SNAPSHOT_RECORD_COPY;
    }
    uint8_t *rec = sw->deltas.data + handle;
    net_ground ground = net_snapshot_ground(sw->world, row->id);
    size_t len = net_snapshot_encode_delta(row, &ground, rec + 2);
    rec[0] = WIRE_KEY(WIRE_SNAPSHOT_BODIES, WIRE_LEN);
    rec[1] = (uint8_t)len;
    /* The quantized form of the same state; records encoded against the old one are stale. */
    size_t slot = handle / NET_SNAPSHOT_RECORD_COPY;
    COLLIDE_ASSERT(slot < sw->qslots);
    quant_state *q = &sw->qslot[slot].cur;
    *q = net_snapshot_quantize(sw, row->position, row->velocity, row->last_input_seq, row->angle,
                               row->angular_velocity);
    q->grounded = ground.grounded;
    q->ground_id = ground.ground_id;
    sw->qslot[slot].valid = false;
    return handle;
}

static void release_delta(void *ctx, uint32_t handle) {
    net_snapshot_writer *sw = ctx;
    COLLIDE_ASSERT(sw->free_count < sw->free_cap);
    sw->free_records[sw->free_count++] = handle / NET_SNAPSHOT_RECORD_COPY;
}

static void clear_deltas(void *ctx) {
    net_snapshot_writer *sw = ctx;
    sw->deltas.len = 0;
    sw->free_count = 0;
    sw->record_slots = 0;
}

static net_view_movers_hook deltas_hook(net_snapshot_writer *sw) {
    net_view_movers_hook hook = {reserve_deltas, record_delta, release_delta, clear_deltas, sw};
    return hook;
}

net_ground net_snapshot_ground(const world *w, world_body_id id) {
    net_ground g = {false, 0};
    world_character_state cs;
    /* The count first: a world without characters asks nothing per body. */
    if (w && world_character_count(w) && world_body_character(w, id, &cs)) {
        g.grounded = cs.grounded;
        g.ground_id = cs.grounded ? cs.ground : WORLD_NULL_BODY;
    }
    return g;
}

bool net_snapshot_observe(net_snapshot_writer *sw, const world *w) {
    net_view_movers_hook hook = deltas_hook(sw);
    sw->world = w; /* record_delta asks it for the characters' ground */
    return net_view_update(&sw->view, w, &hook);
}

bool net_snapshot_rebuild(net_snapshot_writer *sw, const world *w) {
    net_view_movers_hook hook = deltas_hook(sw);
    sw->world = w;
    return net_view_rebuild(&sw->view, w, &hook);
}

#include "net_snapshot.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "net_internal.h"
#include "net_snapshot_internal.h"
#include "net_server.h"
#include "net_log.h"
#include "varint.h"
#include "wire.h"

/* A body's state in the quanta of the writer: the angle in 1/65536 turn ([0, 65536)), the
 * angular velocity in 1/1024 rad/s (PROTOCOL.md "Snapshot rate and quantized snapshots"). */
quant_state net_snapshot_quantize(const net_snapshot_writer *sw, vec2 position, vec2 velocity,
                                  uint32_t last_input_seq, float angle, float angular_velocity) {
    quant_state q;
    memset(&q, 0, sizeof q);
    q.px = quant_of(position.x, sw->position_quantum);
    q.py = quant_of(position.y, sw->position_quantum);
    q.vx = quant_of(velocity.x, sw->velocity_quantum);
    q.vy = quant_of(velocity.y, sw->velocity_quantum);
    q.last_input_seq = last_input_seq;
    q.angle = quant_angle_of(angle);
    q.w = quant_of(angular_velocity, 1.0 / QUANT_ANGULAR_VELOCITY_PER_RAD);
    return q;
}

bool net_snapshot_one_way(const world *w, world_body_id id) {
    return world_one_way_count(w) && world_body_one_way(w, id); /* the count first, as the ground */
}

/* ---- One client's snapshot ----------------------------------------------------------------- */

/* Appends v to b; the caller has reserved room (net_buf_reserve). */
static void put_varint(net_buf *b, uint64_t v) { b->len += varint_write(b->data + b->len, v); }

/* The box of view_radius r around an own body at p. */
static aabb own_box(vec2 p, float r) {
    return aabb_make(v2(p.x - r, p.y - r), v2(p.x + r, p.y + r));
}

/* The boxes of c's view: the SetView box, else a box of view_radius around each own body, or
 * their enclosing box past NET_MAX_VIEW_BOXES of them (an admin's many bodies: the query count
 * stays bounded). A non-admin's enclosing box is held to --max-view-extent like a SetView box:
 * when it would be wider or taller (bodies far apart, with --max-bodies-per-client raised past
 * NET_MAX_VIEW_BOXES), each own body keeps its own box instead (*per_body: the boxes are not
 * listed, mark_own_bodies marks them), at most --max-bodies-per-client of them. Returns the count
 * in boxes. The positions are the view mirror's, which is the world's movers as of this tick:
 * no world call per own body. */
static size_t view_boxes(net_server *srv, net_client *c, aabb boxes[NET_MAX_VIEW_BOXES],
                         bool *per_body) {
    *per_body = false;
    if (c->has_view) {
        boxes[0] = c->view;
        return 1;
    }
    const net_view_index *v = &srv->snapshot->view;
    float r = srv->cfg.view_radius;
    size_t nboxes = 0;
    uint32_t kept = 0;
    aabb all = {{0, 0}, {0, 0}};
    for (uint32_t i = 0; i < c->owned_count; i++) {
        vec2 p;
        /* Own bodies are movers: one the mirror lacks is gone (despawned by an admin), and leaves
         * the list as net_client_prune_owned would drop it. */
        if (!net_view_mover_position(v, c->owned[i], &p)) continue;
        c->owned[kept++] = c->owned[i];
        aabb box = own_box(p, r);
        all = nboxes == 0 ? box : aabb_union(all, box);
        if (nboxes < NET_MAX_VIEW_BOXES) boxes[nboxes] = box;
        nboxes++;
    }
    c->owned_count = kept;
    if (nboxes <= NET_MAX_VIEW_BOXES) return nboxes;
    vec2 ext = v2_sub(all.max, all.min);
    if (!c->admin && (ext.x > srv->cfg.max_view_extent || ext.y > srv->cfg.max_view_extent)) {
        *per_body = true;
        return 0;
    }
    boxes[0] = all;
    return 1;
}

/* Marks a box of view_radius around each of c's own bodies (view_boxes' per_body case, which
 * left only live ones in the list). */
static void mark_own_bodies(net_server *srv, const net_client *c) {
    net_snapshot_writer *sw = srv->snapshot;
    for (uint32_t i = 0; i < c->owned_count; i++) {
        vec2 p;
        if (net_view_mover_position(&sw->view, c->owned[i], &p))
            net_view_mark(&sw->view, own_box(p, srv->cfg.view_radius), &sw->marks);
    }
}

/* Whether c's known set already holds exactly the statics in its view: its view boxes and the
 * statics grid are those of the last snapshot that walked the statics, and that one left them
 * settled. Then this snapshot has nothing to say about statics (a static never changes after
 * its spawn: no delta, no removal), and the merge leaves them out. A resume_key among the
 * statics means one had no room: never settled, checked anyway. */
static bool statics_unchanged(const net_server *srv, const net_client *c, const aabb *boxes,
                              size_t nboxes) {
    const net_snapshot_writer *sw = srv->snapshot;
    return !sw->always_walk_statics && c->snap.statics_settled &&
           c->snap.statics_gen == sw->view.statics_gen && c->snap.statics_box_count == nboxes &&
           (nboxes == 0 || memcmp(c->snap.statics_boxes, boxes, nboxes * sizeof *boxes) == 0) &&
           (c->snap.resume_key == 0 || c->snap.resume_key > UINT32_MAX);
}

/* A body's Shape as a stack-built protobuf-c message (no allocation): every part it points at
 * lives in the struct. */
typedef struct pb_shape {
    Collide__V1__Shape shape;
    Collide__V1__Box box;
    Collide__V1__Circle circle;
    Collide__V1__Polygon poly;
    Collide__V1__Vec2 half, verts[GEOM_MAX_POLYGON_VERTICES];
    Collide__V1__Vec2 *vert_ptrs[GEOM_MAX_POLYGON_VERTICES];
} pb_shape;

static void pb_shape_fill(pb_shape *b, const geom_shape *gs) {
    Collide__V1__Shape shape = COLLIDE__V1__SHAPE__INIT;
    Collide__V1__Box box = COLLIDE__V1__BOX__INIT;
    Collide__V1__Circle circle = COLLIDE__V1__CIRCLE__INIT;
    Collide__V1__Polygon poly = COLLIDE__V1__POLYGON__INIT;
    b->shape = shape;
    b->box = box;
    b->circle = circle;
    b->poly = poly;
    switch (gs->kind) {
    case GEOM_SHAPE_BOX:
        b->half = net_pb_vec2(gs->u.half_extents);
        b->box.half_extents = &b->half;
        b->shape.kind_case = COLLIDE__V1__SHAPE__KIND_BOX;
        b->shape.box = &b->box;
        break;
    case GEOM_SHAPE_CIRCLE:
        b->circle.radius = gs->u.radius;
        b->shape.kind_case = COLLIDE__V1__SHAPE__KIND_CIRCLE;
        b->shape.circle = &b->circle;
        break;
    case GEOM_SHAPE_POLYGON: {
        int n = gs->u.polygon.count;
        if (n < 0) n = 0;
        if (n > GEOM_MAX_POLYGON_VERTICES) n = GEOM_MAX_POLYGON_VERTICES;
        for (int i = 0; i < n; i++) {
            b->verts[i] = net_pb_vec2(gs->u.polygon.vertices[i]);
            b->vert_ptrs[i] = &b->verts[i];
        }
        b->poly.n_vertices = (size_t)n;
        b->poly.vertices = b->vert_ptrs;
        b->shape.kind_case = COLLIDE__V1__SHAPE__KIND_POLYGON;
        b->shape.polygon = &b->poly;
        break;
    }
    }
}

/* Packs the full BodyState (shape, kind, owner) of a body new to the client as a Snapshot.bodies
 * field into sw->body, if it fits in budget bytes. Stack-built message: no allocation. New
 * bodies are the rare case (they enter a view once); changed ones take the arena's records. */
static bool encode_new_body(net_server *srv, world_body_id id, size_t budget,
                            uint64_t *changed_tick) {
    net_snapshot_writer *sw = srv->snapshot;
    world_body_row info;
    geom_shape gs;
    float angle = 0.0f;
    /* the shape as spawned, body-local, with the current angle (PROTOCOL.md "Rotation") */
    if (!world_body_get(srv->world, id, &info) ||
        !world_body_local_shape(srv->world, id, &gs, &angle))
        return false;
    Collide__V1__Vec2 pos = net_pb_vec2(info.position), vel = net_pb_vec2(info.velocity);
    Collide__V1__BodyState bs = COLLIDE__V1__BODY_STATE__INIT;
    bs.id = id;
    bs.position = &pos;
    bs.velocity = &vel;
    bs.last_input_seq = info.last_input_seq;
    bs.angle = angle;
    bs.angular_velocity = info.angular_velocity;
    pb_shape shape;
    pb_shape_fill(&shape, &gs);
    bs.kind = info.kind == WORLD_BODY_STATIC ? COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
                                             : COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    bs.owner = info.owner;
    bs.shape = &shape.shape;
    /* Filters as on SpawnBody: a field at its default is left out (0 reads as the default), so a
     * world without filters sends the same bytes as before them. */
    world_filter f;
    if (world_body_filter(srv->world, id, &f)) {
        bs.category = f.category != WORLD_DEFAULT_CATEGORY ? f.category : 0u;
        bs.mask = f.mask != WORLD_DEFAULT_MASK ? f.mask : 0u;
        bs.sensor = f.sensor;
    }
    /* 1.2: a character's ground as its change records carry it, and one_way (new bodies only,
     * as the filters: it never changes after the spawn) */
    net_ground ground = net_snapshot_ground(srv->world, id);
    bs.grounded = ground.grounded;
    bs.ground_id = ground.ground_id;
    bs.one_way = net_snapshot_one_way(srv->world, id);
    size_t size = collide__v1__body_state__get_packed_size(&bs);
    size_t need = 1 + varint_size(size) + size;
    if (need > budget) return false;
    sw->body.len += wire_put_key(sw->body.data + sw->body.len, WIRE_SNAPSHOT_BODIES, WIRE_LEN);
    put_varint(&sw->body, size);
    sw->body.len += collide__v1__body_state__pack(&bs, sw->body.data + sw->body.len);
    *changed_tick = info.changed_tick;
    return true;
}

/* ---- Where a snapshot's bodies go: BodyStates, or quantized records ------------------------- */

/* The most an id_gap adds to a record: a varint of up to 32 bits, or of the id itself when the
 * writer counts by id (a gap is at most the id: net_snap_out.gap_by_id). */
#define QUANT_GAP_MAX 5
static inline size_t q_gap(const net_snap_out *o, uint32_t id) {
    return o->gap_by_id ? varint_size(id) : QUANT_GAP_MAX;
}

/* Records are written to sw->qbytes as the packed field will hold them, each behind its id_gap
 * from the record before: in the usual snapshot (movers only, no round robin) they come in id
 * order and qbytes goes out as it is. q_begin writes the gap and returns where the record's own
 * bytes go; q_end notes them (for the sort when they did not come in order). */
static size_t q_begin(net_snapshot_writer *sw, net_snap_out *o, uint32_t id) {
    if (id <= o->last_id) o->unsorted = true;
    sw->qbytes.len += varint_write(sw->qbytes.data + sw->qbytes.len, id - o->last_id);
    o->last_id = id;
    return sw->qbytes.len;
}

static void q_end(net_snapshot_writer *sw, net_snap_out *o, uint32_t id, size_t off, size_t len) {
    COLLIDE_ASSERT(o->nrecs < sw->query_cap);
    net_qrec r = {id, (uint32_t)off, (uint32_t)len};
    sw->qrecs[o->nrecs++] = r;
    sw->qbytes.len = off + len;
    o->used += len + q_gap(o, id);
}

/* A body new to a quantized client: its state against zero, kind, owner and shape. *sent gets
 * the state sent. False when it does not fit (or is gone). */
bool net_snapshot_q_new(net_server *srv, net_snap_out *o, const net_view_entry *v,
                        uint64_t *changed_tick, quant_state *sent) {
    net_snapshot_writer *sw = srv->snapshot;
    world_body_row info;
    geom_shape gs;
    float angle = 0.0f;
    /* the shape as spawned, body-local; the angle goes in the record (PROTOCOL.md "Rotation") */
    if (o->used >= o->limit || !world_body_get(srv->world, v->id, &info) ||
        !world_body_local_shape(srv->world, v->id, &gs, &angle))
        return false;
    pb_shape shape;
    pb_shape_fill(&shape, &gs);
    uint8_t shape_bytes[NET_SNAPSHOT_QUANT_SLACK];
    size_t slen = collide__v1__shape__get_packed_size(&shape.shape);
    COLLIDE_ASSERT(slen + QUANT_CHANGE_MAX + QUANT_NEW_EXTRA_MAX <= sizeof shape_bytes);
    if (o->used + q_gap(o, v->id) + QUANT_CHANGE_MAX + QUANT_NEW_EXTRA_MAX + slen > o->limit)
        return false;
    collide__v1__shape__pack(&shape.shape, shape_bytes);
    /* A mover's state is the mirror's, the one its change records are made from. */
    quant_state q = v->delta_off != NET_VIEW_NO_DELTA
                        ? sw->qslot[v->delta_off / NET_SNAPSHOT_RECORD_COPY].cur
                        : net_snapshot_quantize(sw, info.position, info.velocity,
                                                info.last_input_seq, angle, info.angular_velocity);
    uint32_t kind = info.kind == WORLD_BODY_STATIC ? COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC
                                                   : COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING;
    size_t off = q_begin(sw, o, v->id);
    /* Filters as on the float path: sent only off the defaults (bit 6). */
    world_filter f;
    quant_filter filter = {QUANT_DEFAULT_CATEGORY, QUANT_DEFAULT_MASK, false};
    if (world_body_filter(srv->world, v->id, &f))
        filter = (quant_filter){f.category, f.mask, f.sensor};
    size_t len = quant_encode_new(&q, kind, info.owner, shape_bytes, slen, &filter,
                                  net_snapshot_one_way(srv->world, v->id), sw->qbytes.data + off);
    q_end(sw, o, v->id, off, len);
    *changed_tick = info.changed_tick;
    *sent = q;
    return true;
}

/* A known mover that changed, for a quantized client whose last-sent state is *base: its record
 * against that baseline, copied when another client with the same baseline had it encoded this
 * tick. Nothing when the change is below a quantum. *base becomes the state sent. False when it
 * does not fit. */
bool net_snapshot_q_changed(net_server *srv, net_snap_out *o, const net_view_entry *v,
                            quant_state *base) {
    net_snapshot_writer *sw = srv->snapshot;
    net_qslot *qs = &sw->qslot[v->delta_off / NET_SNAPSHOT_RECORD_COPY];
    if (memcmp(&qs->cur, base, sizeof *base) == 0) return true;
    if (qs->valid && memcmp(&qs->base, base, sizeof *base) == 0) {
        srv->metrics.quantized_records_copied_total++;
    } else if (!qs->valid) {
        /* The first baseline of the tick keeps the slot: clients at the same rate that missed
         * no snapshot all share it. */
        qs->len = (uint8_t)quant_encode_change(&qs->cur, base, qs->rec);
        qs->base = *base;
        qs->valid = true;
        srv->metrics.quantized_records_encoded_total++;
    } else {
        uint8_t tmp[QUANT_CHANGE_MAX];
        size_t len = quant_encode_change(&qs->cur, base, tmp);
        srv->metrics.quantized_records_encoded_total++;
        if (o->used + len + q_gap(o, v->id) > o->limit) return false;
        size_t off = q_begin(sw, o, v->id);
        memcpy(sw->qbytes.data + off, tmp, QUANT_CHANGE_MAX);
        q_end(sw, o, v->id, off, len);
        *base = qs->cur;
        return true;
    }
    if (o->used + qs->len + q_gap(o, v->id) > o->limit) return false;
    size_t off = q_begin(sw, o, v->id);
    /* A fixed-size copy, as the float path's records (the scratch has the slack). */
    memcpy(sw->qbytes.data + off, qs->rec, QUANT_CHANGE_MAX);
    q_end(sw, o, v->id, off, qs->len);
    *base = qs->cur;
    return true;
}

/* A body new to the client, in full. */
static inline bool out_new(net_server *srv, net_snap_out *o, const net_view_entry *v,
                           uint64_t *changed_tick, quant_state *sent) {
    if (o->quant) return net_snapshot_q_new(srv, o, v, changed_tick, sent);
    return o->s->len < o->limit && encode_new_body(srv, v->id, o->limit - o->s->len, changed_tick);
}

/* A known mover that changed: a copy of its arena record, or its quantized record. */
static inline bool out_changed(net_server *srv, net_snap_out *o, const net_view_entry *v,
                               quant_state *base) {
    if (o->quant) return net_snapshot_q_changed(srv, o, v, base);
    const uint8_t *rec = srv->snapshot->deltas.data + v->delta_off;
    size_t n = (size_t)rec[1] + 2u;
    if (o->s->len + n > o->limit) return false;
    memcpy(o->s->data + o->s->len, rec, NET_SNAPSHOT_RECORD_COPY);
    o->s->len += n;
    return true;
}

static int qrec_cmp(const void *a, const void *b) {
    uint32_t x = ((const net_qrec *)a)->id, y = ((const net_qrec *)b)->id;
    return (x > y) - (x < y);
}

/* Appends Snapshot.packed: the records in ascending id order, each behind its id_gap. */
void net_snapshot_q_packed(net_snapshot_writer *sw, net_snap_out *o) {
    if (!o->nrecs) return;
    net_buf *s = o->s;
    s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_PACKED, WIRE_LEN);
    if (!o->unsorted) {
        put_varint(s, sw->qbytes.len);
        memcpy(s->data + s->len, sw->qbytes.data, sw->qbytes.len);
        s->len += sw->qbytes.len;
        return;
    }
    /* New statics before movers, or a round robin's wrap: out of id order. Sorted, and the gaps
     * written anew. */
    net_qrec *r = sw->qrecs;
    qsort(r, o->nrecs, sizeof *r, qrec_cmp);
    size_t total = 0;
    uint32_t prev = 0;
    for (size_t i = 0; i < o->nrecs; i++) {
        total += varint_size(r[i].id - prev) + r[i].len;
        prev = r[i].id;
    }
    put_varint(s, total);
    prev = 0;
    for (size_t i = 0; i < o->nrecs; i++) {
        put_varint(s, r[i].id - prev);
        memcpy(s->data + s->len, sw->qbytes.data + r[i].off, r[i].len);
        s->len += r[i].len;
        prev = r[i].id;
    }
}

/* ---- One client's snapshot, phase by phase -------------------------------------------------- */

/* One client's snapshot being written: what each phase leaves for the next. */
typedef struct snap_pass {
    net_server *srv;
    net_client *c;
    net_snapshot_writer *sw;
    uint64_t tick;                /* the world's step the snapshot reports */
    size_t nboxes;                /* entries in boxes */
    bool per_body;                /* one box per own body instead, not listed */
    bool skip_statics;            /* the known statics stand as they are (statics_unchanged) */
    const net_view_entry *view;   /* the bodies in view, in key order (sw->query) */
    size_t nview;                 /* entries in view */
    const net_known_entry *known; /* the known set the merge reads: past kept_statics */
    size_t nknown;                /* entries in known */
    size_t kept_statics;          /* known statics left out of the merge, unread */
    bool quant;                   /* the client's bodies go as quantized records */
    quant_state *qnext;           /* quantized: last-sent states, rewritten beside next */
    const quant_state *qknown;    /* quantized: the old ones, beside known */
    size_t frame_budget;          /* the Snapshot body's room in one frame */
    size_t nremoved;              /* ids in sw->removed */
    size_t removed_bytes;         /* their varints' bytes */
    net_snap_out out;             /* where the bodies go (s: sw->body) */
    size_t limit;                 /* the body may not pass this, removed field aside */
    net_known_entry *next;        /* the known set being written (sw->known_next) */
    size_t nnext;                 /* entries in next */
    size_t ndeferred;             /* pairs in sw->deferred */
    uint64_t stop_key;            /* the first key that had no room, when stopped */
    bool stopped;                 /* something had no room */
    bool static_kept_out;         /* a known static out of view stays known (removed was full) */
    size_t head_len;              /* the body's length after the tick and the events */
    /* Last, and not zeroed with the rest (snapshot_view writes the nboxes it reads): at 8 boxes
     * it is a third of the struct, cleared for every client on every tick otherwise. */
    aabb boxes[NET_MAX_VIEW_BOXES]; /* the client's view boxes (view_boxes) */
} snap_pass;

/* Whether c gets a snapshot now: welcomed and not being closed, under the hard output limit, and
 * not already a quarter of it behind. */
static bool snapshot_begin(net_server *srv, net_client *c) {
    if (c->state != NET_CLIENT_ACTIVE || c->kill) return false;
    if (net_server_over_hard_limit(srv, c)) return false;
    if (net_client_queued(c) > srv->cfg.max_queued_bytes / 4u) {
        /* Stale state is dropped, not queued: the next snapshot that goes out is computed against
         * what was actually sent, so it carries everything that changed meanwhile. */
        srv->metrics.slow_client_drops_total++;
        return false;
    }
    return true;
}

/* The bodies in view, in key order: the view boxes' marks taken from the index. Statics
 * unchanged: only the movers are marked and merged; the statics part of the known set (its first
 * known_statics entries) stays as it is, unread. */
static void snapshot_view(snap_pass *p) {
    net_snapshot_writer *sw = p->sw;
    p->nboxes = view_boxes(p->srv, p->c, p->boxes, &p->per_body);
    p->skip_statics = !p->per_body && statics_unchanged(p->srv, p->c, p->boxes, p->nboxes);
    for (size_t b = 0; b < p->nboxes; b++) {
        if (p->skip_statics)
            net_view_mark_movers(&sw->view, p->boxes[b], &sw->marks);
        else
            net_view_mark(&sw->view, p->boxes[b], &sw->marks);
    }
    if (p->per_body) mark_own_bodies(p->srv, p->c);
    p->view = sw->query;
    p->nview = net_view_take(&sw->view, &sw->marks, sw->query, sw->query_cap);
}

/* The known set the merge reads, and room for the one it writes: at most every old entry plus
 * every body in view (quantized: the last-sent states beside it, same index). False when out of
 * memory: c is killed. */
static bool snapshot_scratch(snap_pass *p) {
    net_snapshot_writer *sw = p->sw;
    net_client *c = p->c;
    p->kept_statics = p->skip_statics ? c->snap.known_statics : 0;
    COLLIDE_ASSERT(p->kept_statics <= c->snap.known.count);
    p->known = c->snap.known.entries;
    if (p->kept_statics) p->known += p->kept_statics; /* entries may be NULL: no offset on it */
    p->nknown = c->snap.known.count - p->kept_statics;
    size_t most = p->nknown + p->nview;
    bool ok = net_known_reserve(&sw->known_next, (uint32_t)most);
    p->next = sw->known_next.entries;
    p->quant = c->snap.quantized;
    if (ok && p->quant && most > sw->qknown_next_cap) {
        quant_state *q = realloc(sw->qknown_next, 2 * most * sizeof *q);
        ok = q != NULL;
        if (ok) {
            sw->qknown_next = q;
            sw->qknown_next_cap = 2 * most;
        }
    }
    if (!ok) {
        net_server_kill(p->srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    p->qnext = p->quant ? sw->qknown_next : NULL;
    p->qknown = p->quant && c->snap.qknown ? c->snap.qknown + p->kept_statics : NULL;
    return true;
}

/* Removed: known ids not in view, in id order, while they fit half a frame. Those that do not
 * fit stay known and go next time. Both lists are sorted: one merge. */
static void snapshot_removed(snap_pass *p) {
    net_snapshot_writer *sw = p->sw;
    const net_view_entry *view = p->view;
    const net_known_entry *known = p->known;
    size_t removed_budget = p->frame_budget / 2u;
    size_t nremoved = 0, removed_bytes = 0;
    for (size_t i = 0, j = 0; j < p->nknown;) {
        uint64_t kk = net_known_key(&known[j]);
        if (i < p->nview && net_view_key(&view[i]) < kk) {
            i++;
        } else if (i < p->nview && net_view_key(&view[i]) == kk) {
            i++;
            j++;
        } else {
            size_t sz = varint_size(known[j].id);
            if (removed_bytes + sz > removed_budget || nremoved >= sw->removed_cap) break;
            sw->removed[nremoved++] = known[j].id;
            removed_bytes += sz;
            j++;
        }
    }
    p->nremoved = nremoved;
    p->removed_bytes = removed_bytes;
}

/* The Snapshot body up to its bodies: the tick, then the client's waiting events, up to a quarter
 * of the frame (they are never dropped; what does not fit goes in the next snapshot, ahead of
 * what comes later). The bodies' limit leaves room for the removed field. */
static void snapshot_events(snap_pass *p) {
    net_buf *s = &p->sw->body;
    s->len = 0;
    s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_TICK, WIRE_VARINT);
    put_varint(s, p->tick);
    if (p->c->ev.event_count) net_events_take(p->c, s, p->frame_budget / 4u);
    size_t removed_field = p->nremoved ? 1 + varint_size(p->removed_bytes) + p->removed_bytes : 0;
    p->limit = p->frame_budget - removed_field;
    net_snap_out out = {s, p->limit, p->quant, s->len + 1 + varint_size(p->limit),
                        0, 0,        false,    false};
    p->out = out;
    p->head_len = s->len;
    p->sw->qbytes.len = 0;
}

/* A body before the resume key: its turn comes after those from the key on (snapshot_deferred),
 * held in place in the next known set at index at. */
static inline void snapshot_defer(snap_pass *p, size_t view_index, size_t at) {
    p->sw->deferred[2 * p->ndeferred] = (uint32_t)view_index;
    p->sw->deferred[2 * p->ndeferred + 1] = (uint32_t)at;
    p->ndeferred++;
}

/* The first key that had no room: the next snapshot resumes there. */
static inline void snapshot_no_room(snap_pass *p, uint64_t key) {
    if (!p->stopped) {
        p->stopped = true;
        p->stop_key = key;
    }
}

/* The later of the tick and a body's change: the known set's sent_tick for what was just sent. */
static inline uint64_t sent_tick_of(uint64_t tick, uint64_t changed_tick) {
    return tick > changed_tick ? tick : changed_tick;
}

/* A body in view that the client does not know: announced in full, or deferred before the resume
 * key, as entry `at` of the next known set. What does not fit is retried next tick. Returns the
 * entries it added to the next known set (0: no room). */
static inline size_t snapshot_new(snap_pass *p, size_t i, size_t at, uint64_t vk, uint64_t resume) {
    const net_view_entry *v = &p->view[i];
    net_known_entry *e = &p->next[at];
    uint64_t changed_tick = 0;
    if (vk < resume) {
        snapshot_defer(p, i, at);
        e->sent_tick = NET_KNOWN_UNSENT;
    } else if (out_new(p->srv, &p->out, v, &changed_tick, p->quant ? &p->qnext[at] : NULL)) {
        e->sent_tick = sent_tick_of(p->tick, changed_tick);
    } else {
        snapshot_no_room(p, vk);
        return 0;
    }
    e->id = v->id;
    e->moving = v->delta_off != NET_VIEW_NO_DELTA;
    return 1;
}

/* A body in view that the client knows, as entry `at` of the next known set: a mover changed
 * since it was sent goes as its record (or is deferred before the resume key). */
static inline void snapshot_known(snap_pass *p, size_t i, size_t j, size_t at, uint64_t vk,
                                  uint64_t resume) {
    net_known_entry e = p->known[j];
    const net_view_entry *v = &p->view[i];
    if (p->quant) p->qnext[at] = p->qknown[j];
    if (v->changed_tick > e.sent_tick && v->delta_off != NET_VIEW_NO_DELTA) {
        if (vk < resume)
            snapshot_defer(p, i, at);
        else if (out_changed(p->srv, &p->out, v, p->quant ? &p->qnext[at] : NULL))
            e.sent_tick = sent_tick_of(p->tick, v->changed_tick);
        else
            snapshot_no_room(p, vk);
    }
    p->next[at] = e;
}

/* The movers (and the statics, when walked): view and known set merged again, new bodies in full,
 * changed ones as their arena record, while they fit; the next known set written as we go.
 * Unchanged bodies cost the compare. Round robin: when the last snapshot ran out of room, this
 * one serves the bodies from where it stopped (c->snap.resume_key) first and those before it
 * afterwards (snapshot_deferred), from what room is left. Filling every frame from the lowest key
 * instead starved the highest keys for as long as the low ones kept changing (seconds, under
 * churn in a crowded view). The loop's counts are locals: the entries it stores could alias them
 * in *p. */
static void snapshot_bodies(snap_pass *p) {
    const net_view_entry *view = p->view;
    const net_known_entry *known = p->known;
    size_t nview = p->nview, nknown = p->nknown, nnext = 0, dropped = 0;
    uint64_t resume = p->c->snap.resume_key;
    for (size_t i = 0, j = 0; i < nview || j < nknown;) {
        uint64_t vk = i < nview ? net_view_key(&view[i]) : UINT64_MAX;
        uint64_t kk = j < nknown ? net_known_key(&known[j]) : UINT64_MAX;
        if (vk < kk) {
            nnext += snapshot_new(p, i++, nnext, vk, resume);
        } else if (kk < vk) {
            /* Known, out of view: the first nremoved of these were listed (snapshot_removed). */
            if (dropped < p->nremoved) {
                dropped++;
            } else {
                p->static_kept_out |= !known[j].moving;
                if (p->quant) p->qnext[nnext] = p->qknown[j];
                p->next[nnext++] = known[j];
            }
            j++;
        } else {
            snapshot_known(p, i++, j++, nnext++, vk, resume);
        }
    }
    p->nnext = nnext;
}

/* The bodies before the resume key, in key order, from the room left. A new body with no room is
 * taken out of the next known set again (it was held there to keep the set in order). */
static void snapshot_deferred(snap_pass *p) {
    net_snapshot_writer *sw = p->sw;
    size_t unsent_new = 0;
    for (size_t d = 0; d < p->ndeferred; d++) {
        const net_view_entry *v = &p->view[sw->deferred[2 * d]];
        size_t at = sw->deferred[2 * d + 1];
        net_known_entry *e = &p->next[at];
        quant_state *qe = p->quant ? &p->qnext[at] : NULL;
        bool sent = false;
        if (e->sent_tick == NET_KNOWN_UNSENT) {
            uint64_t changed_tick = 0;
            sent = out_new(p->srv, &p->out, v, &changed_tick, qe);
            if (sent)
                e->sent_tick = sent_tick_of(p->tick, changed_tick);
            else
                unsent_new++;
        } else {
            sent = out_changed(p->srv, &p->out, v, qe);
            if (sent) e->sent_tick = sent_tick_of(p->tick, v->changed_tick);
        }
        if (!sent) snapshot_no_room(p, net_view_key(v));
    }
    if (unsent_new) {
        size_t kept = 0;
        for (size_t k = 0; k < p->nnext; k++) {
            if (p->next[k].sent_tick == NET_KNOWN_UNSENT) continue;
            if (p->quant) p->qnext[kept] = p->qnext[k];
            p->next[kept++] = p->next[k];
        }
        p->nnext = kept;
    }
}

/* The Snapshot body's last fields: the quantized records (Snapshot.packed), then the removed ids
 * (packed). Where the next snapshot resumes. */
static void snapshot_left(snap_pass *p) {
    net_buf *s = p->out.s;
    if (p->quant) {
        COLLIDE_ASSERT(p->out.used <= p->limit);
        net_snapshot_q_packed(p->sw, &p->out);
    }
    COLLIDE_ASSERT(s->len <= p->limit && p->nnext <= p->nknown + p->nview);
    p->c->snap.resume_key = p->stopped ? p->stop_key : 0;
    if (p->nremoved) {
        s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_REMOVED, WIRE_LEN);
        put_varint(s, p->removed_bytes);
        for (size_t i = 0; i < p->nremoved; i++)
            put_varint(s, p->sw->removed[i]);
    }
}

/* The client's known set becomes the one written (behind the statics kept), and its quantized
 * last-sent states beside it. False when out of memory: c is killed. */
static bool snapshot_remember(snap_pass *p) {
    net_client *c = p->c;
    size_t count = p->kept_statics + p->nnext;
    if (!net_known_reserve(&c->snap.known, (uint32_t)count)) {
        net_server_kill(p->srv, c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    if (p->nnext)
        memcpy(c->snap.known.entries + p->kept_statics, p->next, p->nnext * sizeof *p->next);
    c->snap.known.count = (uint32_t)count;
    if (!p->quant) return true;
    if (count > c->snap.qknown_cap) {
        uint32_t cap = c->snap.known.cap; /* what known grew to: doubling, like it */
        quant_state *q = realloc(c->snap.qknown, (size_t)cap * sizeof *q);
        if (!q) {
            net_server_kill(p->srv, c, NET_DISC_OUT_OF_MEMORY);
            return false;
        }
        c->snap.qknown = q;
        c->snap.qknown_cap = cap;
    }
    if (p->nnext) memcpy(c->snap.qknown + p->kept_statics, p->qnext, p->nnext * sizeof *p->qnext);
    return true;
}

/* After a walk of the statics in view: whether the known statics are exactly those (the next
 * snapshot may skip them, statics_unchanged), and the boxes and grid that holds for. */
static void snapshot_statics(snap_pass *p) {
    net_client *c = p->c;
    /* Both lists hold the statics first. With no static kept out of view, the known statics are
     * a subset of those in view: equal counts, equal sets. */
    size_t view_statics = 0, next_statics = 0;
    while (view_statics < p->nview && p->view[view_statics].delta_off == NET_VIEW_NO_DELTA)
        view_statics++;
    while (next_statics < p->nnext && !p->next[next_statics].moving)
        next_statics++;
    c->snap.known_statics = (uint32_t)next_statics;
    c->snap.statics_settled = !p->per_body && !p->static_kept_out && next_statics == view_statics;
    c->snap.statics_gen = p->sw->view.statics_gen;
    c->snap.statics_box_count = (uint32_t)p->nboxes;
    if (p->nboxes) memcpy(c->snap.statics_boxes, p->boxes, p->nboxes * sizeof *p->boxes);
}

/* Writes ServerMessage { snapshot: body } (net_msg_write). */
static void snapshot_write_message(const void *ctx, uint8_t *out, size_t size) {
    const net_buf *body = ctx;
    size_t n = wire_put_key(out, WIRE_SERVER_SNAPSHOT, WIRE_LEN);
    n += varint_write(out + n, body->len);
    memcpy(out + n, body->data, body->len);
    COLLIDE_ASSERT(n + body->len == size);
    (void)size;
}

/* --empty-snapshot-ms: PROTOCOL.md rule 6 sends a snapshot every snapshot tick even when empty,
 * which is nearly all an idle client costs (one write each: ~8 us of kernel here, so 10,000 idle
 * clients at 60 Hz would need 4.8 cores). Set, an empty snapshot goes only when the client has
 * had none for that long: a heartbeat. Off by default until the contract takes it (issue 32's
 * proposal, docs/protocol.md "Empty snapshots as a heartbeat"). */
bool net_snapshot_hold_empty(net_server *srv, const net_client *c) {
    uint64_t every_us = (uint64_t)srv->cfg.empty_snapshot_ms * 1000u;
    if (!every_us || !c->snap.sent_us || srv->now_us - c->snap.sent_us >= every_us) return false;
    srv->metrics.empty_snapshots_held_total++;
    return true;
}

void net_snapshot_send(net_server *srv, net_client *c, const net_buf *body) {
    size_t size = 1 + varint_size(body->len) + body->len;
    if (net_server_append_with(srv, c, size, snapshot_write_message, body)) {
        c->out_snapshots++;
        c->snap.sent_us = srv->now_us ? srv->now_us : 1u;
        /* each snapshot sent makes its acknowledgement free (charge_frame, net_session.c) */
        if (c->snap.free_acks < NET_FREE_ACKS_MAX) c->snap.free_acks++;
    }
}

void net_snapshot_client(net_server *srv, net_client *c) {
    if (!snapshot_begin(srv, c)) return;
    snap_pass p;
    memset(&p, 0, offsetof(snap_pass, boxes));
    p.srv = srv;
    p.c = c;
    p.sw = srv->snapshot;
    p.tick = world_tick(srv->world);
    p.frame_budget = srv->cfg.max_frame - 16u; /* ServerMessage tag, length and slack */
    snapshot_view(&p);
    if (!snapshot_scratch(&p)) return;
    snapshot_removed(&p);
    snapshot_events(&p);
    snapshot_bodies(&p);
    snapshot_deferred(&p);
    snapshot_left(&p);
    if (!snapshot_remember(&p)) return;
    if (!p.skip_statics) snapshot_statics(&p);
    /* Empty: the tick alone (no events were taken, nothing was written after them). */
    bool empty = p.out.s->len == p.head_len && p.head_len == 1u + varint_size(p.tick);
    if (empty && net_snapshot_hold_empty(srv, c)) return;
    net_snapshot_send(srv, c, p.out.s);
}

bool net_snapshot_view(net_server *srv, net_client *c, const net_view_entry **view, size_t *nview) {
    if (!snapshot_begin(srv, c)) return false;
    snap_pass p;
    memset(&p, 0, offsetof(snap_pass, boxes));
    p.srv = srv;
    p.c = c;
    p.sw = srv->snapshot;
    p.tick = world_tick(srv->world);
    snapshot_view(&p);
    *view = p.view;
    *nview = p.nview;
    return true;
}

uint64_t net_snapshot_next_tick(uint64_t after, uint32_t every, uint32_t client_id) {
    uint64_t phase = client_id % every;
    uint64_t d = (after + every - phase) % every; /* (after - phase) mod every */
    return after - d + every;
}

uint32_t net_snapshot_interval(float tick_rate_hz, uint32_t rate_hz) {
    long t = lrintf(tick_rate_hz);
    if (rate_hz == 0 || t <= 0 || rate_hz >= (uint64_t)t) return 1;
    uint64_t T = (uint64_t)t, k1 = T / rate_hz, k2 = k1 + 1u;
    /* |T/k - r| = |T - r k| / k: compare the two candidates without division; a tie goes to
     * the higher rate, k1. */
    uint64_t e1 = T - rate_hz * k1, e2 = rate_hz * k2 - T;
    return (uint32_t)(e1 * k2 <= e2 * k1 ? k1 : k2);
}

/* net_snapshot_datagram: the snapshot of a datagram client (PROTOCOL.md "Datagrams: UDP through
 * ENet": "Snapshots against the last acknowledged state", "A snapshot fits in one packet"). A
 * packet may be lost, so each snapshot is a delta against a state the client said it holds: the
 * newest acknowledged one still kept (net_baselines.h), or none (a full snapshot, baseline_tick
 * 0). Always quantized; records in 1.1's layout, each delta against that body's baseline value.
 *
 * In phases, over the view (key order) merged with the baseline and the last snapshot's state:
 *   dg_reserve   the scratch: the next state, the candidates, the client's own ids (grown once)
 *   dg_merge     the next state as if nothing were sent (baseline values, new bodies not held),
 *                and the candidates: bodies that differ from the baseline, new ones, removals
 *   dg_serve     the budget: own bodies first, then removals (up to half the room), then the
 *                others by accumulated priority; what is sent is written into the next state
 *   dg_write     Snapshot{tick, packed, removed, baseline_tick}, sent as one ServerMessage
 *   dg_remember  the next state (removals sent taken out) pushed onto the client's ring
 *
 * The budget's bound. Each candidate a snapshot leaves out has its wait raised by one (saturating
 * at NET_BASELINE_WAIT_MAX); one it carries, or that no longer differs, goes back to 0. The others
 * are served by wait, highest first, ties by key. Once a change is left out, every body served
 * ahead of it has waited at least as long: it is one of the at most M - 1 other candidates that
 * were ahead of it (M: the candidates other than own bodies and removals), since any that becomes
 * a candidate later, or is served and changes again, starts behind it at wait 0. A snapshot whose
 * room after the own bodies and the removals holds k records serves the k first, so a change
 * waits at most ceil((M - 1) / k) snapshots and goes in the next one at the latest: every change
 * is sent within ceil(M / k) snapshots of the first that could carry it. The room is at least
 * half of --udp-snapshot-bytes less the own bodies' records (removals take at most half), and a
 * record at most NET_DG_RECORD_MAX bytes, so k >= 1 whenever the own bodies leave that much
 * (docs/net-design.md "Datagram snapshots: baselines and the budget"; test_net_baselines checks
 * the bound). */
#include <stdlib.h>
#include <string.h>

#include "net_server.h"
#include "net_snapshot_internal.h"
#include "varint.h"
#include "wire.h"

/* The most one record takes: a new body with the largest shape (a 16-vertex polygon) and its
 * filters, behind its id_gap. */
#define NET_DG_RECORD_MAX (5 + NET_SNAPSHOT_QUANT_SLACK)

/* One datagram snapshot being written: what each phase leaves for the next. */
typedef struct dg_pass {
    net_server *srv;
    net_client *c;
    net_snapshot_writer *sw;
    uint64_t tick;              /* the world's step the snapshot reports */
    const net_view_entry *view; /* the bodies in view, in key order */
    size_t nview;               /* entries in view */
    const net_baseline *base;   /* the acknowledged state the deltas are against; NULL: full */
    const net_baseline *prev;   /* the state after the last snapshot (its waits); NULL: none */
    net_baseline_body *next;    /* the state the client holds after this one (sw->dg_next) */
    size_t nnext;               /* entries in next */
    net_dg_cand *cands;         /* what this snapshot may carry (sw->dg_cands) */
    size_t ncands;              /* entries in cands */
    size_t nowned;              /* ids in sw->dg_owned */
    size_t nremoved;            /* removals carried (their next entries have id 0) */
    size_t removed_bytes;       /* their varints' bytes */
    net_snap_out out;           /* the records (sw->qbytes), then the body (sw->body) */
} dg_pass;

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Room for the next state and the candidates (at most every body in view plus every baseline
 * body), and the client's own ids sorted. False when out of memory: c is killed. */
static bool dg_reserve(dg_pass *p) {
    net_snapshot_writer *sw = p->sw;
    size_t most = p->nview + (p->base ? p->base->count : 0u);
    if (most > sw->dg_cap) {
        size_t cap = sw->dg_cap ? sw->dg_cap : 64u;
        while (cap < most)
            cap *= 2u;
        net_baseline_body *n = realloc(sw->dg_next, cap * sizeof *n);
        if (n) sw->dg_next = n;
        net_dg_cand *k = n ? realloc(sw->dg_cands, cap * sizeof *k) : NULL;
        if (k) sw->dg_cands = k;
        if (!n || !k) goto oom;
        sw->dg_cap = cap;
    }
    if (p->c->owned_count > sw->dg_owned_cap) {
        uint32_t *o = realloc(sw->dg_owned, 2u * p->c->owned_count * sizeof *o);
        if (!o) goto oom;
        sw->dg_owned = o;
        sw->dg_owned_cap = 2u * p->c->owned_count;
    }
    if (p->c->owned_count) memcpy(sw->dg_owned, p->c->owned, p->c->owned_count * sizeof(uint32_t));
    p->nowned = p->c->owned_count;
    if (p->nowned > 1) /* none: dg_owned may still be NULL, which qsort may not be given */
        qsort(sw->dg_owned, p->nowned, sizeof *sw->dg_owned, cmp_u32);
    p->next = sw->dg_next;
    p->cands = sw->dg_cands;
    return true;
oom:
    net_server_kill(p->srv, p->c, NET_DISC_OUT_OF_MEMORY);
    return false;
}

static bool dg_own(const dg_pass *p, uint32_t id) {
    return p->nowned && bsearch(&id, p->sw->dg_owned, p->nowned, sizeof id, cmp_u32) != NULL;
}

/* A mover's current quantized state (the mirror's, as its change records are made from). */
static inline const quant_state *dg_cur(const dg_pass *p, const net_view_entry *v) {
    return &p->sw->qslot[v->delta_off / NET_SNAPSHOT_RECORD_COPY].cur;
}

static inline uint64_t dg_key(const net_baseline_body *b) {
    return b ? net_baseline_key(b) : UINT64_MAX;
}

/* Next entry `at` for the body of key k: in view (v), held at the baseline (b), and its wait
 * from the last snapshot (w). A candidate when it is new, differs from the baseline, or is gone. */
static void dg_entry(dg_pass *p, const net_view_entry *v, size_t vi, const net_baseline_body *b,
                     uint16_t w) {
    net_baseline_body *e = &p->next[p->nnext];
    net_dg_cand *k = &p->cands[p->ncands];
    memset(e, 0, sizeof *e);
    e->id = v ? v->id : b->id;
    e->moving = v ? v->delta_off != NET_VIEW_NO_DELTA : b->moving;
    e->held = b != NULL;
    if (b) e->q = b->q;
    bool pending = !v || !b || (e->moving && memcmp(dg_cur(p, v), &b->q, sizeof b->q) != 0);
    if (pending) {
        e->wait = w;
        k->next = (uint32_t)p->nnext;
        k->view = v ? (uint32_t)vi : NET_DG_REMOVAL;
        k->wait = w;
        k->rank = !v ? NET_DG_REMOVE : e->moving && dg_own(p, e->id) ? NET_DG_OWN : NET_DG_OTHER;
        p->ncands++;
    }
    p->nnext++;
}

/* The view, the baseline's held bodies and the last state merged by key: one entry of the next
 * state per body in view or held, the candidates beside. */
static void dg_merge(dg_pass *p) {
    const net_baseline_body *bb = p->base ? p->base->bodies : NULL;
    const net_baseline_body *pb = p->prev ? p->prev->bodies : NULL;
    size_t nb = p->base ? p->base->count : 0, np = p->prev ? p->prev->count : 0;
    size_t i = 0, j = 0, k = 0;
    p->nnext = p->ncands = 0;
    for (;;) {
        while (j < nb && !bb[j].held)
            j++; /* in view and never sent at that snapshot: not on the client */
        uint64_t vk = i < p->nview ? net_view_key(&p->view[i]) : UINT64_MAX;
        uint64_t bk = j < nb ? dg_key(&bb[j]) : UINT64_MAX;
        uint64_t key = vk < bk ? vk : bk;
        if (key == UINT64_MAX) break;
        while (k < np && dg_key(&pb[k]) < key)
            k++;
        uint16_t w = k < np && dg_key(&pb[k]) == key ? pb[k].wait : 0u;
        const net_view_entry *v = vk == key ? &p->view[i] : NULL;
        const net_baseline_body *b = bk == key ? &bb[j] : NULL;
        dg_entry(p, v, i, b, w);
        i += v != NULL;
        j += b != NULL;
    }
}

/* Own bodies, then removals, then the rest; within a rank the longest wait first, then key. */
static int cmp_cand(const void *a, const void *b) {
    const net_dg_cand *x = a, *y = b;
    if (x->rank != y->rank) return (int)x->rank - (int)y->rank;
    if (x->wait != y->wait) return (int)y->wait - (int)x->wait;
    return (x->next > y->next) - (x->next < y->next);
}

/* One candidate served, if it fits: its record (or its removal) goes out and the next state
 * holds what was sent. */
static bool dg_serve_one(dg_pass *p, const net_dg_cand *k, size_t removed_room) {
    net_baseline_body *e = &p->next[k->next];
    if (k->view == NET_DG_REMOVAL) {
        size_t sz = varint_size(e->id);
        if (p->removed_bytes + sz > removed_room || p->out.used + sz > p->out.limit) return false;
        p->sw->removed[p->nremoved++] = e->id;
        p->removed_bytes += sz;
        p->out.used += sz;
        e->id = 0; /* gone from the next state (dg_remember) */
        return true;
    }
    const net_view_entry *v = &p->view[k->view];
    if (!e->held) {
        uint64_t changed_tick = 0;
        quant_state sent;
        if (!net_snapshot_q_new(p->srv, &p->out, v, &changed_tick, &sent)) return false;
        e->q = sent;
        e->held = 1;
        return true;
    }
    return net_snapshot_q_changed(p->srv, &p->out, v, &e->q);
}

/* The room: the whole ServerMessage within --udp-snapshot-bytes (--max-frame caps it), less the
 * fields around the records and removed ids, each counted at its longest. */
static void dg_budget(dg_pass *p) {
    size_t bytes = p->srv->cfg.udp_snapshot_bytes;
    if (bytes > p->srv->cfg.max_frame) bytes = p->srv->cfg.max_frame;
    uint64_t base_tick = p->base ? p->base->tick : 0u;
    size_t fixed = 1 + 3                                           /* ServerMessage.snapshot */
                   + 1 + varint_size(p->tick)                      /* tick */
                   + (base_tick ? 1 + varint_size(base_tick) : 0u) /* baseline_tick */
                   + 1 + 3 + 1 + 3;                                /* packed, removed */
    net_snap_out out = {&p->sw->body, bytes > fixed ? bytes - fixed : 0u, true, 0, 0, 0, false,
                        true};
    p->out = out;
    p->sw->qbytes.len = 0;
    p->nremoved = p->removed_bytes = 0;
}

/* The candidates in the budget's order, each served while it fits: own bodies, removals within
 * half the room, the others by wait. A candidate left out waits one snapshot more. */
static void dg_serve(dg_pass *p) {
    if (p->ncands > 1) /* none: cands may still be NULL, which qsort may not be given */
        qsort(p->cands, p->ncands, sizeof *p->cands, cmp_cand);
    size_t removed_room = p->out.limit / 2u;
    if (removed_room > p->sw->removed_cap) removed_room = p->sw->removed_cap;
    for (size_t i = 0; i < p->ncands; i++) {
        const net_dg_cand *k = &p->cands[i];
        net_baseline_body *e = &p->next[k->next];
        if (dg_serve_one(p, k, removed_room))
            e->wait = 0;
        else if (k->wait < NET_BASELINE_WAIT_MAX)
            e->wait = (uint16_t)(k->wait + 1u);
    }
}

/* Snapshot{tick, packed, removed, baseline_tick}: no events (they go reliable, net_events.c). */
static void dg_write(dg_pass *p) {
    net_buf *s = &p->sw->body;
    s->len = 0;
    s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_TICK, WIRE_VARINT);
    s->len += varint_write(s->data + s->len, p->tick);
    net_snapshot_q_packed(p->sw, &p->out);
    if (p->nremoved) {
        s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_REMOVED, WIRE_LEN);
        s->len += varint_write(s->data + s->len, p->removed_bytes);
        for (size_t i = 0; i < p->nremoved; i++)
            s->len += varint_write(s->data + s->len, p->sw->removed[i]);
    }
    if (p->base) {
        s->len += wire_put_key(s->data + s->len, WIRE_SNAPSHOT_BASELINE_TICK, WIRE_VARINT);
        s->len += varint_write(s->data + s->len, p->base->tick);
    }
}

/* The next state, without the removals carried, becomes the ring's newest. False when out of
 * memory: c is killed. */
static bool dg_remember(dg_pass *p) {
    size_t kept = 0;
    for (size_t i = 0; i < p->nnext; i++)
        if (p->next[i].id != 0) p->next[kept++] = p->next[i];
    if (!net_baselines_push(&p->c->snap.baselines, p->srv->cfg.udp_baselines, p->tick, p->next,
                            (uint32_t)kept)) {
        net_server_kill(p->srv, p->c, NET_DISC_OUT_OF_MEMORY);
        return false;
    }
    return true;
}

void net_snapshot_datagram(net_server *srv, net_client *c) {
    /* Packets that may be lost: deltas against what the client acknowledged, not against what
     * was sent (its known set stays empty, so its statics are always walked). */
    const net_view_entry *view;
    size_t nview;
    if (!net_snapshot_view(srv, c, &view, &nview)) return;
    dg_pass p;
    memset(&p, 0, sizeof p);
    p.srv = srv;
    p.c = c;
    p.sw = srv->snapshot;
    p.tick = world_tick(srv->world);
    p.view = view;
    p.nview = nview;
    p.base = net_baselines_base(&c->snap.baselines);
    p.prev = net_baselines_newest(&c->snap.baselines);
    /* Two snapshots in one tick (a test's extra call) would share a tick: the ring wants them
     * ascending, and the client could not tell them apart. */
    if (p.prev && p.prev->tick >= p.tick) return;
    if (!dg_reserve(&p)) return;
    dg_merge(&p);
    dg_budget(&p);
    dg_serve(&p);
    dg_write(&p);
    COLLIDE_ASSERT(p.sw->body.len + 1 + varint_size(p.sw->body.len) <=
                   (srv->cfg.udp_snapshot_bytes < srv->cfg.max_frame ? srv->cfg.udp_snapshot_bytes
                                                                     : srv->cfg.max_frame));
    /* Held back before it joins the ring: a state the client never gets would push its
     * acknowledged baseline out. */
    if (p.out.nrecs == 0 && p.nremoved == 0 && net_snapshot_hold_empty(srv, c)) return;
    if (!dg_remember(&p)) return;
    net_snapshot_send(srv, c, &p.sw->body);
}

#include "qbase.h"

#include <stdlib.h>
#include <string.h>

bool cc_qbase_init(cc_qbase *b, uint32_t n) {
    memset(b, 0, sizeof *b);
    if (n == 0 || n > CC_QBASE_MAX) return false;
    b->slots = calloc(n, sizeof *b->slots);
    if (!b->slots) return false;
    b->n = n;
    b->prune_at = 64;
    return true;
}

void cc_qbase_free(cc_qbase *b) {
    for (uint32_t i = 0; i < b->n; i++)
        quant_table_free(&b->slots[i].t);
    for (size_t i = 0; i < b->nshapes; i++)
        free(b->shapes[i].bytes);
    free(b->slots);
    free(b->shapes);
    quant_table_free(&b->work);
    memset(b, 0, sizeof *b);
}

const quant_table *cc_qbase_find(const cc_qbase *b, uint64_t tick) {
    if (tick == 0) return NULL;
    for (uint32_t i = 0; i < b->n; i++)
        if (b->slots[i].tick == tick) return &b->slots[i].t;
    return NULL;
}

const quant_table *cc_qbase_newest(const cc_qbase *b) {
    static const quant_table empty;
    const quant_table *t = cc_qbase_find(b, b->newest);
    return t ? t : &empty;
}

static size_t shape_lower(const cc_qbase *b, uint32_t id) {
    size_t lo = 0, hi = b->nshapes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->shapes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const cc_qbase_shape *cc_qbase_shape_of(const cc_qbase *b, uint32_t id) {
    size_t i = shape_lower(b, id);
    return i < b->nshapes && b->shapes[i].id == id ? &b->shapes[i] : NULL;
}

/* A new record's shape replaces whatever the id had: ids are unique among live bodies only, so a
 * reused id's older body, still in an older held state, would be drawn with the newer shape
 * (the server never names so old a baseline once the newer one is acknowledged). */
static bool shape_keep(cc_qbase *b, const quant_record *r) {
    size_t i = shape_lower(b, r->body->id);
    if (i == b->nshapes || b->shapes[i].id != r->body->id) {
        if (b->nshapes == b->shapes_cap) {
            size_t cap = b->shapes_cap ? 2 * b->shapes_cap : 64;
            cc_qbase_shape *grown = realloc(b->shapes, cap * sizeof *grown);
            if (!grown) return false;
            b->shapes = grown;
            b->shapes_cap = cap;
        }
        memmove(&b->shapes[i + 1], &b->shapes[i], (b->nshapes - i) * sizeof *b->shapes);
        b->nshapes++;
        b->shapes[i] = (cc_qbase_shape){.id = r->body->id};
    }
    cc_qbase_shape *s = &b->shapes[i];
    uint8_t *bytes = malloc(r->shape_len ? r->shape_len : 1);
    if (!bytes) return false;
    if (r->shape_len) memcpy(bytes, r->shape, r->shape_len);
    free(s->bytes);
    s->bytes = bytes;
    s->len = (uint32_t)r->shape_len;
    s->filter = (r->flags & QUANT_FILTER)
                    ? (quant_filter){r->category, r->mask, r->sensor}
                    : (quant_filter){QUANT_DEFAULT_CATEGORY, QUANT_DEFAULT_MASK, false};
    return true;
}

/* Drops the shapes of ids no held state has: the store stays as large as the states. */
static void shape_prune(cc_qbase *b) {
    size_t kept = 0;
    for (size_t i = 0; i < b->nshapes; i++) {
        bool held = false;
        for (uint32_t k = 0; k < b->n && !held; k++)
            held = b->slots[k].tick && quant_table_find(&b->slots[k].t, b->shapes[i].id);
        if (held)
            b->shapes[kept++] = b->shapes[i];
        else
            free(b->shapes[i].bytes);
    }
    b->nshapes = kept;
    b->prune_at = 2 * kept + 64;
}

typedef struct apply_ctx {
    cc_qbase *b;
    quant_record_fn fn;
    void *ctx;
    bool failed; /* a shape could not be kept (out of memory) */
} apply_ctx;

static void on_apply_record(void *ctx, const quant_record *r) {
    apply_ctx *a = ctx;
    if ((r->flags & QUANT_NEW) && !shape_keep(a->b, r)) a->failed = true;
    if (a->fn) a->fn(a->ctx, r);
}

cc_qbase_result cc_qbase_apply(cc_qbase *b, uint64_t tick, uint64_t baseline_tick,
                               const uint32_t *removed, size_t nremoved, const uint8_t *packed,
                               size_t len, quant_record_fn fn, void *ctx) {
    /* Sequenced delivery drops older packets; a replay or an equal tick would step back. */
    if (tick == 0 || tick <= b->newest || baseline_tick >= tick) return CC_QBASE_IGNORED;
    const quant_table *base = cc_qbase_find(b, baseline_tick);
    if (baseline_tick && !base) return CC_QBASE_IGNORED;
    static const quant_table empty;
    if (!quant_table_copy(&b->work, base ? base : &empty)) return CC_QBASE_MALFORMED;
    for (size_t i = 0; i < nremoved; i++)
        quant_table_remove(&b->work, removed[i]);
    apply_ctx a = {b, fn, ctx, false};
    if (!quant_apply(&b->work, packed, len, on_apply_record, &a) || a.failed)
        return CC_QBASE_MALFORMED;
    /* The work table becomes the slot's: swap buffers rather than copy. */
    cc_qbase_slot *s = &b->slots[b->next];
    quant_table old = s->t;
    s->t = b->work;
    s->tick = tick;
    b->work = old;
    b->work.count = 0;
    b->next = (b->next + 1) % b->n;
    b->newest = tick;
    if (b->nshapes > b->prune_at) shape_prune(b);
    return CC_QBASE_APPLIED;
}

/* world_step: the tick (COLLISION.md "One tick"). 1: each mover's expected path; 2: one
 * collide-and-slide per mover, in order, against statics, bounds and the movers near its path
 * (relative motion, I7); 3: the discrete pass (world_separate.c); 4: velocities, sequences and
 * change tracking. Movers that ignore each other take world_step_alone (world_slide.c). Everything
 * runs in a deterministic order (I6). */
#include "world_character.h"
#include "world_history.h"
#include "world_movers.h"
#include "world_separate.h"
#include "world_slide.h"
#include "world_statics.h"

/* The end of a step: the pair list and adjacency lists are free again, whoever held them. */
static void scratch_close_step(world *w) {
    COLLIDE_ASSERT(w->scratch.owner[WORLD_SCRATCH_PAIRS] == WORLD_OWNER_FREE ||
                   w->scratch.owner[WORLD_SCRATCH_PAIRS] == WORLD_OWNER_PAIRS);
    COLLIDE_ASSERT(w->scratch.owner[WORLD_SCRATCH_ADJ] == WORLD_OWNER_FREE ||
                   w->scratch.owner[WORLD_SCRATCH_ADJ] == WORLD_OWNER_PAIRS ||
                   w->scratch.owner[WORLD_SCRATCH_ADJ] == WORLD_OWNER_SEPARATE);
    memset(w->scratch.owner, WORLD_OWNER_FREE, sizeof w->scratch.owner);
}

typedef struct cand_ctx {
    const world *w;       /* the world */
    uint32_t self;        /* the querying mover's slot */
    uint32_t self_index;  /* its dense index: lower ones already stand where they end */
    aabb box;             /* its path box */
    mover_candidate *out; /* candidates */
    uint32_t count;       /* found */
    uint32_t overflow;    /* not kept */
    bool chars;           /* characters move by their rules (world_characters_active) */
} cand_ctx;

static bool cand_visit(const world *w, uint32_t i, void *vctx) {
    cand_ctx *c = vctx;
    if (i == c->self_index) return true;
    if (!aabb_overlaps(w->scratch.path[i], c->box)) return true;
    const world_mover *m = &w->movers[i];
    if (!slots_block(w, c->self, m->slot)) return true;
    /* a body's own motion never meets the characters standing on it */
    if (c->chars && world_character_rides(w, m->slot, c->self)) return true;
    /* What the slide will see of it (its path box is grown by the push allowance, and a slow
     * mover's holds its intent too): skip it when that misses this mover's reach. */
    bool moved = c->chars ? world_moved_before(w, i, c->self_index) : i < c->self_index;
    vec2 at = moved ? w->scratch.p2[i] : w->scratch.p0[i];
    vec2 d = moved ? v2(0.0f, 0.0f) : w->scratch.d1[i];
    if (!aabb_overlaps(aabb_sweep(box_at(at, m->lo, m->hi), d), c->box)) return true;
    if (c->count == WORLD_MAX_MOVER_CANDIDATES) {
        c->overflow++;
        return true;
    }
    /* already moved this pass: it stands where it ended; not yet: it moves along its expected
     * displacement (relative motion) */
    c->out[c->count].view = mover_view(m, at);
    c->out[c->count].d = d;
    c->out[c->count].index = i;
    c->count++;
    return true;
}

/* 1-2 when movers ignore each other (or there is one): every mover against statics and bounds. */
static inline void step_slide_alone(world *w, uint32_t n, float dt) {
    bool chars = world_characters_active(w);
    for (uint32_t i = 0; i < n; i++) {
        world_mover *m = &w->movers[i];
        aabb unused;
        w->scratch.p0[i] = m->position;
        if (chars && world_is_character(w, m->slot)) {
            w->scratch.p2[i] = world_character_move(w, i, NULL, 0);
            continue;
        }
        /* (a turning mover's path is not asked for: NULL spares its computation) */
        w->scratch.p2[i] =
            mover_turning(w, m)
                ? world_turn_slide(w, i, m->position, v2_scale(m->intent, dt), NULL, 0)
                : world_slide(w, i, m->position, v2_scale(m->intent, dt), NULL, 0, &unused);
    }
}

/* 1: where each mover is expected to go. A slow one (moving less than a cell): its intent if
 * new, else what it achieved last tick (a body pressed against a wall keeps pressing and stays
 * put). A fast one: its slide against statics and bounds alone, so its expected path stops at
 * walls instead of crossing the map. The grid holds each expected path's box, grown by an
 * allowance for the small moves of the passes. */
static inline void step_expected_paths(world *w, world_grid *g, uint32_t n, float dt) {
    float cell = w->levels[0].cell;
    COLLIDE_ASSERT(!g->valid); /* the grid reads scratch.path by reference */
    bool chars = world_characters_active(w);
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        vec2 want = v2_scale(m->intent, dt);
        aabb box = box_at(m->position, m->lo, m->hi);
        w->scratch.p0[i] = m->position;
        if (chars && world_is_character(w, m->slot)) {
            float reach;
            w->scratch.d1[i] = world_character_expected(w, i, &reach);
            w->scratch.path[i] =
                aabb_inflate(aabb_sweep(box, w->scratch.d1[i]), reach + WORLD_PUSH_ALLOWANCE);
            continue;
        }
        if (wmax(fabsf(want.x), fabsf(want.y)) > cell) {
            w->scratch.p2[i] = world_slide(w, i, m->position, want, NULL, 0, &w->scratch.path[i]);
            w->scratch.d1[i] = v2_sub(w->scratch.p2[i], m->position);
        } else {
            w->scratch.d1[i] = m->applied_seq != m->pending_seq ? want : v2_scale(m->velocity, dt);
            w->scratch.path[i] =
                aabb_union(aabb_sweep(box, want), aabb_sweep(box, w->scratch.d1[i]));
        }
        w->scratch.path[i] = aabb_inflate(w->scratch.path[i], WORLD_PUSH_ALLOWANCE);
        /* a turning body reaches anywhere in the disc of its shape around its path */
        if (mover_turning(w, m)) {
            float rad = w->turns[m->slot].radius;
            aabb disc = disc_box(m->position, rad);
            w->scratch.path[i] = aabb_union(
                w->scratch.path[i], aabb_inflate(aabb_sweep(disc, want), WORLD_PUSH_ALLOWANCE));
        }
    }
    world_grid_build(w, g, w->scratch.path);
}

/* Mover i's candidates within reach: its neighbours on the grid, then the late movers. */
WORLD_HOT uint32_t mover_candidates(const world *w, uint32_t i, aabb reach, const uint32_t *late,
                                    uint32_t late_count, mover_candidate *cands) {
    const world_mover *m = &w->movers[i];
    cand_ctx c = {w, m->slot, i, reach, cands, 0, 0, world_characters_active(w)};
    for (uint32_t k = w->scratch.adj_start[i]; k < w->scratch.adj_start[i + 1]; k++)
        cand_visit(w, w->scratch.adj[k], &c);
    /* movers that ended outside their expected path: the grid does not know where they
     * are, so every later mover looks at them where they ended */
    for (uint32_t k = 0; k < late_count; k++) {
        uint32_t j = late[k];
        const world_mover *o = &w->movers[j];
        if (!aabb_overlaps(box_at(w->scratch.p2[j], o->lo, o->hi), reach) ||
            c.count == WORLD_MAX_MOVER_CANDIDATES || !slots_block(w, m->slot, o->slot))
            continue;
        c.out[c.count].view = mover_view(o, w->scratch.p2[j]);
        c.out[c.count].d = v2(0.0f, 0.0f);
        c.out[c.count].index = j;
        c.count++;
    }
    return c.count;
}

/* A fast mover that does not turn: true when it keeps its static-only slide (scratch.p2). */
WORLD_HOT bool fast_keeps_slide(const world *w, uint32_t i, const mover_candidate *cands,
                                uint32_t count, bool boxes_only) {
    const world_mover *m = &w->movers[i];
    /* Its static-only slide left it where it was: every component of its motion
     * is stopped at once by statics or the bounds. Among boxes every contact normal
     * is an axis and each response only shrinks a component (never flips or adds
     * one), so mover contacts cannot free it: it keeps p2. Not a fast path of the
     * slide (test_world_fastpaths found it): a candidate closing faster than the
     * wall is hit at an earlier t, and the full slide would then advance the body by
     * up to a skin toward the wall it is pressed against (1.4e-6 units in the scene
     * found). A rule of the mover pass, kept as it is. */
    if (boxes_only && ref_kind(m->shape) == GEOM_SHAPE_BOX && w->scratch.d1[i].x == 0.0f &&
        w->scratch.d1[i].y == 0.0f) {
        bool all_boxes = true;
        for (uint32_t k = 0; k < count && all_boxes; k++)
            all_boxes = ref_kind(cands[k].view.ref) == GEOM_SHAPE_BOX;
        if (all_boxes) return true;
    }
    /* a chord test along the static-only path: the path is nearly straight */
    body_view a = mover_view(m, m->position);
    bool in_way = false;
    for (uint32_t k = 0; k < count && !in_way; k++) {
        geom_toi toi;
        in_way = pair_sweep(w, &a, w->scratch.d1[i], &cands[k].view, cands[k].d, &toi);
    }
    return !in_way; /* not in the way: p2 already holds the static-only slide */
}

/* 2 for characters, after every plain mover (which they may stand on): each in dense order
 * against statics, bounds and the movers near its path. */
static void step_character_pass(world *w, uint32_t n, mover_candidate *cands, uint32_t *late,
                                uint32_t late_count) {
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        if (!world_is_character(w, m->slot)) continue;
        uint32_t count = mover_candidates(w, i, w->scratch.path[i], late, late_count, cands);
        w->scratch.p2[i] = world_character_move(w, i, cands, count);
        if (late_count < WORLD_MAX_LATE &&
            !aabb_contains(w->scratch.path[i], box_at(w->scratch.p2[i], m->lo, m->hi)))
            late[late_count++] = i;
    }
}

/* 2: one collide-and-slide per mover, in order, against statics, bounds and the movers near its
 * path: those already moved stand where they ended, the others move along their expected
 * displacement (relative motion: head-on bodies meet in the middle, I7). A fast mover keeps its
 * static-only slide unless a neighbour is in the way of it. */
static inline void step_mover_pass(world *w, world_grid *g, uint32_t n, float dt) {
    float cell = w->levels[0].cell;
    world_grid_pairs(w, g);
    if (w->events) world_events_note_pairs(w);
    mover_candidate cands[WORLD_MAX_MOVER_CANDIDATES];
    uint32_t late[WORLD_MAX_LATE], late_count = 0;
    bool boxes_only = w->nonbox_statics == 0;
    bool chars = world_characters_active(w);
    for (uint32_t i = 0; i < n; i++) {
        const world_mover *m = &w->movers[i];
        if (chars && world_is_character(w, m->slot)) continue; /* after every plain mover */
        vec2 want = v2_scale(m->intent, dt);
        bool fast = wmax(fabsf(want.x), fabsf(want.y)) > cell;
        bool turning = mover_turning(w, m);
        aabb reach = fast || turning
                         ? w->scratch.path[i]
                         : aabb_inflate(aabb_sweep(box_at(m->position, m->lo, m->hi), want),
                                        WORLD_QUERY_MARGIN);
        uint32_t count = mover_candidates(w, i, reach, late, late_count, cands);
        if (fast && !turning && fast_keeps_slide(w, i, cands, count, boxes_only)) continue;
        if (turning) {
            w->scratch.p2[i] = world_turn_slide(w, i, m->position, want, cands, count);
        } else {
            w->scratch.p2[i] = world_slide_box(w, i, m->position, want, cands, count);
        }
        if (late_count < WORLD_MAX_LATE &&
            !aabb_contains(w->scratch.path[i], box_at(w->scratch.p2[i], m->lo, m->hi)))
            late[late_count++] = i;
    }
    if (chars) step_character_pass(w, n, cands, late, late_count);
}

/* 4, after the movers' own records: what changed for the snapshots and the events, and the
 * history. The body table is built from these bits by its first read (world_body_table). */
static inline void step_record_changes(world *w, bool finished) {
    size_t words = (w->capacity + 63) / 64;
    memset(w->spawn_bits, 0, words * sizeof *w->spawn_bits);
    for (size_t k = 0; k < w->pending_spawned_count; k++) {
        uint32_t slot = w->pending_spawned[k];
        w->slots[slot].flags &= (uint8_t)~WORLD_SLOT_SPAWNED;
        w->spawn_bits[slot >> 6] |= 1ull << (slot & 63);
    }
    w->pending_spawned_count = 0;
    /* (world_turn_step_alone counted them as it went) */
    if (!finished || !w->turning_hint) world_turn_recount(w);
    /* step 4's events: what touches what now, against the step before */
    world_events_end_step(w);
    uint64_t *despawned = w->despawn_bits;
    w->despawn_bits = w->pending_despawn_bits;
    w->pending_despawn_bits = despawned;
    memset(w->pending_despawn_bits, 0, words * sizeof *w->pending_despawn_bits);
    w->cache->rows_built = false;
    /* after step 4: the movers as this tick left them, for queries that rewind (COLLISION.md) */
    world_history_record(w);
}

void world_step(world *w) {
    w->tick++;
    w->jam_count = 0;
    if (w->tick % WORLD_SORT_INTERVAL == 1) world_sort_movers(w);
    uint32_t n = w->mover_count;
    /* Movers that ignore each other, none waiting for a push out of a static: each is done
     * after its slide (one walk over the movers instead of three). */
    /* (with turning movers too, on the fast paths: world_turn_step_alone; the general code keeps
     * the passes, which give the same results since these movers read nobody else's state) */
    bool chars = world_characters_active(w);
    bool finished = (!w->movers_collide || n < 2) && !w->static_checks_pending &&
                    (WORLD_FAST_PATHS || !w->turning_hint) && !chars;
    /* characters among movers that ignore each other: plan, move and finish in one walk */
    bool chars_alone =
        WORLD_FAST_PATHS && chars && (!w->movers_collide || n < 2) && !w->static_checks_pending;
    world_one_way_begin_step(w); /* before anything moves or asks which pairs block */
    if (chars && !chars_alone) world_character_begin_step(w); /* plans, one-way notes */
    world_events_begin_step(w, !finished); /* the passes below note each start in scratch.p0 */
    float dt = w->dt;
    world_grid *g = &w->cache->grid;
    g->valid = false;
    memset(w->moved_bits, 0, ((w->capacity + 63) / 64) * sizeof *w->moved_bits);

    /* turning movers remember their statics as world_step_alone's do (world_turn.c) */
    if (WORLD_FAST_PATHS && !finished && w->turning_hint) world_near_cache_begin(w, n);
    if (finished) {
        if (w->turning_hint)
            world_turn_step_alone(w);
        else
            world_step_alone(w);
    } else if (chars_alone) {
        world_character_step_alone(w);
    } else if (!w->movers_collide || n < 2) {
        step_slide_alone(w, n, dt);
    } else {
        step_expected_paths(w, g, n, dt);
        step_mover_pass(w, g, n, dt);
    }
    if (!finished && !chars_alone) {
        for (uint32_t i = 0; i < n; i++)
            w->movers[i].position = w->scratch.p2[i];
        /* 3: discrete separation */
        world_separate(w);
    }
    scratch_close_step(w);
    /* 4: velocities, sequences, change tracking */
    if (chars && !chars_alone)
        world_character_end_step(w);
    else if (!finished && !chars)
        for (uint32_t i = 0; i < n; i++)
            finish_mover(w, i, w->scratch.p0[i], w->movers[i].position);
    step_record_changes(w, finished);
}

uint64_t world_tick(const world *w) { return w->tick; }

/* ---- the body table ------------------------------------------------------------------------ */

/* A live body's record, flags left 0: the one filler of world_body_get and the table's rows, so
 * the two cannot drift apart. */
static void row_of_body(const world *w, uint32_t slot, world_body_row *r) {
    const world_slot *s = &w->slots[slot];
    memset(r, 0, sizeof *r);
    r->id = make_id(w, slot, s->gen);
    r->kind = s->kind;
    if (s->kind == WORLD_BODY_STATIC) {
        const world_static *st = &w->statics[s->index];
        r->position = st->position;
        r->bounds = st->box;
        r->changed_tick = st->spawn_tick;
    } else {
        const world_mover *m = &w->movers[s->index];
        r->owner = m->owner;
        r->position = m->position;
        r->velocity = m->velocity;
        r->last_input_seq = m->applied_seq;
        r->changed_tick = m->changed_tick;
        r->bounds = box_at(m->position, m->lo, m->hi);
    }
    if (w->turns && w->turns[slot].in_use) {
        r->angle = w->turns[slot].angle;
        r->angular_velocity = w->turns[slot].ang_vel;
    }
}

bool world_body_get(const world *w, world_body_id id, world_body_row *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return false;
    row_of_body(w, slot, out);
    return true;
}

/* Rows come from the slot walk in slot order; an id orders by generation first (make_id), so rows
 * of mixed generations are put in id order by a stable sort on the generation alone (LSD radix,
 * a byte per pass, a pass skipped when every row has the same byte), then moved in place along
 * the permutation's cycles. A world whose changed bodies share one generation (no slot reused
 * since) pays the sortedness check alone. */
static void table_sort_by_id(const world *w, world_cache *cache, size_t n) {
    world_body_row *rows = cache->rows;
    size_t i = 1;
    while (i < n && rows[i - 1].id < rows[i].id)
        i++;
    if (i >= n) return;
    uint64_t *key = cache->row_keys, *tmp = cache->row_keys + 2 * (size_t)w->capacity;
    for (size_t k = 0; k < n; k++)
        key[k] = (uint64_t)((rows[k].id - 1u) >> w->slot_bits) << 32 | k;
    for (uint32_t shift = 32; shift < 64 - w->slot_bits; shift += 8) {
        size_t count[257] = {0};
        for (size_t k = 0; k < n; k++)
            count[((key[k] >> shift) & 0xffu) + 1u]++;
        if (count[((key[0] >> shift) & 0xffu) + 1u] == n) continue;
        for (size_t d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (size_t k = 0; k < n; k++)
            tmp[count[(key[k] >> shift) & 0xffu]++] = key[k];
        uint64_t *t = key;
        key = tmp;
        tmp = t;
    }
    /* Position p takes the row at key[p]'s low half; a done position points at itself. */
    for (size_t p = 0; p < n; p++) {
        size_t from = (uint32_t)key[p];
        if (from == p) continue;
        world_body_row held = rows[p];
        size_t j = p;
        for (;;) {
            from = (uint32_t)key[j];
            key[j] = j;
            if (from == p) break;
            rows[j] = rows[from];
            j = from;
        }
        rows[j] = held;
    }
}

/* One walk over the slots the step marked, in slot order (within a slot the despawned generation
 * before the live one), then into id order. */
void world_table_build(const world *w) {
    world_cache *cache = w->cache;
    COLLIDE_ASSERT(cache->rows);
    size_t n = 0, words = (w->capacity + 63) / 64;
    for (size_t k = 0; k < words; k++) {
        uint64_t moved = w->moved_bits[k], spawned = w->spawn_bits[k], dead = w->despawn_bits[k];
        /* A body despawned since the step is not the one the step marked (a table read only
         * after the despawn; world_despawn builds the table first once it has been read). */
        uint64_t live = (moved | spawned) & ~w->pending_despawn_bits[k];
        uint64_t b = live | dead;
        while (b) {
            int bit = __builtin_ctzll(b);
            uint64_t one = 1ull << bit;
            b &= b - 1;
            uint32_t slot = (uint32_t)(k * 64 + (size_t)bit);
            if (dead & one) {
                world_body_row *r = &cache->rows[n++];
                const world_slot *s = &w->slots[slot];
                memset(r, 0, sizeof *r);
                r->id = make_id(w, slot, s->dead_gen);
                r->kind = s->dead_kind;
                r->flags = WORLD_ROW_DESPAWNED;
            }
            if (live & one) {
                world_body_row *r = &cache->rows[n++];
                COLLIDE_ASSERT(w->slots[slot].kind != 0);
                row_of_body(w, slot, r);
                r->flags = (uint8_t)(((spawned & one) ? WORLD_ROW_SPAWNED : 0u) |
                                     ((moved & one) ? WORLD_ROW_MOVED : 0u));
            }
        }
    }
    COLLIDE_ASSERT(n <= 2 * (size_t)w->capacity);
    table_sort_by_id(w, cache, n);
    cache->row_count = n;
    cache->rows_built = true;
}

size_t world_body_table(const world *w, const world_body_row **rows) {
    world_cache *cache = w->cache;
    *rows = NULL;
    if (w->tick == 0) return 0;
    if (!cache->rows) {
        /* The bound, allocated once: no later read or despawn allocates. */
        cache->rows = malloc(2 * (size_t)w->capacity * sizeof *cache->rows);
        cache->row_keys = malloc(4 * (size_t)w->capacity * sizeof *cache->row_keys);
        if (!cache->rows || !cache->row_keys) {
            free(cache->rows);
            free(cache->row_keys);
            cache->rows = NULL;
            cache->row_keys = NULL;
            return 0;
        }
    }
    if (!cache->rows_built) world_table_build(w);
    *rows = cache->rows;
    return cache->row_count;
}

/* Scene S1 through the product's world: build, run, check. Shared by the benchmark programs so
 * every ratio is measured against the same code in the same process. */
#ifndef COLLIDE_BENCH_S1_WORLD_H
#define COLLIDE_BENCH_S1_WORLD_H

#include "s1.h"
#include "world.h"

/* ---- the product ---------------------------------------------------------------------------- */

typedef struct s1_world {
    world *w;                        /* the world */
    world_body_id movers[S1_MOVERS]; /* mover ids in creation order */
} s1_world;

static inline world_config s1_config(uint32_t capacity, uint32_t max_moving) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP));
    cfg.max_bodies = capacity;
    cfg.max_moving_bodies = max_moving;
    cfg.cell_size = 1.0f;
    cfg.max_speed = 1000.0f;
    return cfg;
}

/* S1's movers into a world that holds its map (s1_world_build's statics, or the same map loaded
 * from a file: bench_tiled): false when one does not fit. */
static inline bool s1_world_spawn_movers(world *w, const s1_layout *l, world_body_id *movers) {
    geom_shape mover;
    if (geom_make_box(v2(0.4f, 0.4f), &mover)) return false;
    for (int i = 0; i < S1_MOVERS; i++)
        if (world_spawn(w, WORLD_BODY_MOVING, &mover,
                        v2((float)l->start_cell[i][0] + 0.5f, (float)l->start_cell[i][1] + 0.5f), 1,
                        &movers[i], NULL) != WORLD_OK)
            return false;
    return true;
}

static inline world *s1_world_build(const s1_layout *l, uint32_t capacity, uint32_t max_moving,
                                    world_body_id *movers) {
    world_config cfg = s1_config(capacity, max_moving);
    world *w = world_create(&cfg);
    geom_shape tile;
    if (!w || geom_make_box(v2(0.5f, 0.5f), &tile)) return NULL;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++)
            if (l->solid[y * S1_MAP + x] &&
                world_spawn(w, WORLD_BODY_STATIC, &tile, v2((float)x + 0.5f, (float)y + 0.5f), 0,
                            NULL, NULL) != WORLD_OK)
                return NULL;
    if (movers && !s1_world_spawn_movers(w, l, movers)) return NULL;
    return w;
}

/* Invariant counters by brute force over each mover's neighbourhood, through the public API. */
/* Mover pairs overlapping by more than 0.01 (I3's view of S1b), by brute force over the map's
 * cells, independent of the world's own broad phase. Movers are 0.8 boxes: any pair that
 * overlaps has its centres in the same or adjacent cells. */
static inline int s1_mover_overlaps(const s1_world *s) {
    static int head[S1_MAP * S1_MAP], next[S1_MOVERS];
    static vec2 pos[S1_MOVERS];
    for (int c = 0; c < S1_MAP * S1_MAP; c++)
        head[c] = -1;
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_row info;
        world_body_get(s->w, s->movers[i], &info);
        pos[i] = info.position;
        int cx = (int)pos[i].x, cy = (int)pos[i].y;
        cx = cx < 0 ? 0 : cx >= S1_MAP ? S1_MAP - 1 : cx;
        cy = cy < 0 ? 0 : cy >= S1_MAP ? S1_MAP - 1 : cy;
        next[i] = head[cy * S1_MAP + cx];
        head[cy * S1_MAP + cx] = i;
    }
    int count = 0;
    for (int i = 0; i < S1_MOVERS; i++) {
        int cx = (int)pos[i].x, cy = (int)pos[i].y;
        for (int y = cy - 1; y <= cy + 1; y++)
            for (int x = cx - 1; x <= cx + 1; x++) {
                if (x < 0 || y < 0 || x >= S1_MAP || y >= S1_MAP) continue;
                for (int j = head[y * S1_MAP + x]; j >= 0; j = next[j]) {
                    if (j <= i) continue;
                    float ox = 0.8f - fabsf(pos[i].x - pos[j].x),
                          oy = 0.8f - fabsf(pos[i].y - pos[j].y);
                    if (ox > 0.01f && oy > 0.01f) count++;
                }
            }
    }
    return count;
}

static inline void s1_world_check(const s1_world *s, int *overlaps, int *outside) {
    *overlaps = *outside = 0;
    world_body_id near[64];
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_row info, si;
        geom_shape ms, ss;
        world_body_get(s->w, s->movers[i], &info);
        world_body_shape(s->w, s->movers[i], &ms);
        if (!aabb_contains(aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP)), info.bounds)) (*outside)++;
        size_t n = world_query_aabb(s->w, aabb_inflate(info.bounds, 0.02f), 1u << WORLD_BODY_STATIC,
                                    near, 64);
        for (size_t k = 0; k < n && k < 64; k++) {
            world_body_get(s->w, near[k], &si);
            world_body_shape(s->w, near[k], &ss);
            geom_contact c;
            if (geom_overlap(&ms, info.position, &ss, si.position, &c) && c.depth > 0.01f) {
                (*overlaps)++;
                break;
            }
        }
    }
}

static inline size_t s1_world_bytes(const s1_layout *l, uint32_t capacity, uint32_t max_moving) {
    world *w = s1_world_build(l, capacity, max_moving, NULL);
    world_stats st;
    world_get_stats(w, &st);
    world_destroy(w);
    return st.bytes;
}

/* Adds the step's events to r's count and to its digest: a sum of per-event hashes, so the order
 * of the events within a step does not matter, but every field does (the floats bit for bit). */
static inline void s1_digest_events(const world *w, uint64_t tick, s1_result *r) {
    const world_contact_event *ce;
    const world_sensor_event *se;
    size_t nc = world_contact_events(w, &ce), ns = world_sensor_events(w, &se);
    for (size_t k = 0; k < nc + ns; k++) {
        uint64_t h = tick * 0x9e3779b97f4a7c15ull;
        uint32_t f[7];
        if (k < nc) {
            const world_contact_event *e = &ce[k];
            f[0] = (uint32_t)e->a, f[1] = (uint32_t)e->b, f[2] = e->begin ? 1u : 2u;
            memcpy(&f[3], &e->normal.x, 4), memcpy(&f[4], &e->normal.y, 4);
            memcpy(&f[5], &e->approach_speed, 4), f[6] = e->owner_a ^ (e->owner_b << 16);
        } else {
            const world_sensor_event *e = &se[k - nc];
            f[0] = (uint32_t)e->sensor, f[1] = (uint32_t)e->visitor, f[2] = e->begin ? 3u : 4u;
            f[3] = f[4] = f[5] = 0u, f[6] = e->owner_sensor ^ (e->owner_visitor << 16);
        }
        for (int q = 0; q < 7; q++)
            h = (h ^ f[q]) * 0x100000001b3ull;
        r->events_digest += h ^ (h >> 29);
    }
    r->events += nc + ns;
}

/* One run of an S1 scene through the world, steppable so that two runs can share a process tick
 * block by tick block (s1_run_paired). events: contact and sensor tracking on
 * (world_set_events), for its cost on S1b. spin > 0: scene S1r (docs/performance.md): with each
 * velocity draw a mover also draws its turning speed, w = (2 unit() - 1) * spin, right after its
 * heading a. */
typedef struct s1_run {
    float speed;
    double spin;
    bool events;
    int ticks;     /* timed ticks, after S1_WARMUP */
    int k;         /* ticks stepped so far, warm-up included */
    uint32_t seq;  /* the intents' sequence number */
    s1_rng rng;    /* the intents' draws, continuing the layout's */
    s1_world *s;   /* the world */
    double *times; /* per timed tick */
    s1_result r;   /* events digested so far */
} s1_run;

/* A run on map_world, a world holding S1's map and no movers (NULL: s1_world_build's), which the
 * run then owns: the movers are spawned into it. */
static inline void s1_run_start_on(s1_run *run, const s1_layout *l, world *map_world, float speed,
                                   int movers_collide, int ticks, bool events, double spin) {
    memset(run, 0, sizeof *run);
    run->speed = speed, run->spin = spin, run->events = events, run->ticks = ticks;
    run->s = calloc(1, sizeof *run->s);
    run->times = calloc((size_t)ticks, sizeof *run->times);
    if (run->s && !map_world)
        map_world = s1_world_build(l, S1_STATICS + S1_MOVERS, S1_MOVERS, NULL);
    if (!run->s || !run->times || !(run->s->w = map_world) ||
        !s1_world_spawn_movers(run->s->w, l, run->s->movers)) {
        fprintf(stderr, "S1: setup failed\n");
        exit(1);
    }
    world_set_mover_collisions(run->s->w, movers_collide != 0);
    world_set_events(run->s->w, events);
    s1_layout again;
    s1_make_layout(&again, &run->rng); /* the intents continue the layout's draws */
}

static inline void s1_run_start(s1_run *run, const s1_layout *l, float speed, int movers_collide,
                                int ticks, bool events, double spin) {
    s1_run_start_on(run, l, NULL, speed, movers_collide, ticks, events, spin);
}

/* Steps up to n more ticks (fewer at the end of the run); the number stepped. */
static inline int s1_run_ticks(s1_run *run, int n) {
    s1_world *s = run->s;
    int done = 0;
    for (; done < n && run->k < S1_WARMUP + run->ticks; done++, run->k++) {
        int k = run->k;
        if (k % 60 == 0) {
            run->seq++;
            for (int i = 0; i < S1_MOVERS; i++) {
                double a = s1_unit(&run->rng) * 2.0 * S1_PI;
                vec2 v = v2((float)(run->speed * cos(a)), (float)(run->speed * sin(a)));
                if (run->spin > 0.0)
                    world_set_intent_turning(s->w, s->movers[i], v,
                                             (float)((2.0 * s1_unit(&run->rng) - 1.0) * run->spin),
                                             run->seq);
                else
                    world_set_intent(s->w, s->movers[i], v, run->seq);
            }
        }
        double t0 = s1_now_ms();
        world_step(s->w);
        double t1 = s1_now_ms();
        if (k >= S1_WARMUP) run->times[k - S1_WARMUP] = t1 - t0;
        if (k >= S1_WARMUP && run->events) s1_digest_events(s->w, (uint64_t)k, &run->r);
    }
    return done;
}

/* The result of a run stepped to its end; frees it. */
static inline s1_result s1_run_finish(s1_run *run, world_stats *stats) {
    s1_result r = run->r;
    s1_world_check(run->s, &r.overlaps, &r.outside);
    r.mover_overlaps = s1_mover_overlaps(run->s);
    r.state_hash = world_state_hash(run->s->w);
    qsort(run->times, (size_t)run->ticks, sizeof *run->times, s1_cmp_double);
    r.median_ms = run->times[run->ticks / 2];
    r.min_ms = run->times[0];
    world_get_stats(run->s->w, stats);
    world_destroy(run->s->w);
    free(run->times);
    free(run->s);
    return r;
}

/* Two runs in one process, their timed ticks in alternating blocks of `block` (after both warm
 * up): a ratio of their medians that a load coming and going on a shared machine moves far less
 * than one of two runs made one after the other, since both see it alike. Each run steps exactly
 * as it would alone (its own world and draws): the same state hashes. */
static inline void s1_run_paired(s1_run *a, s1_run *b, int block) {
    s1_run_ticks(a, S1_WARMUP);
    s1_run_ticks(b, S1_WARMUP);
    while (s1_run_ticks(a, block) + s1_run_ticks(b, block) > 0) {
    }
}

static inline s1_result run_world_full(const s1_layout *l, float speed, int movers_collide,
                                       int ticks, world_stats *stats, bool events, double spin) {
    s1_run run;
    s1_run_start(&run, l, speed, movers_collide, ticks, events, spin);
    s1_run_ticks(&run, S1_WARMUP + ticks);
    return s1_run_finish(&run, stats);
}

static inline s1_result run_world_events(const s1_layout *l, float speed, int movers_collide,
                                         int ticks, world_stats *stats, bool events) {
    return run_world_full(l, speed, movers_collide, ticks, stats, events, 0.0);
}

static inline s1_result run_world(const s1_layout *l, float speed, int movers_collide, int ticks,
                                  world_stats *stats) {
    return run_world_events(l, speed, movers_collide, ticks, stats, false);
}

#endif

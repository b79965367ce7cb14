/* bench_world: scene S1 of PERFORMANCE.md (movers in a 256 x 256 tile map), exactly as specified,
 * through the product's world (server/world), and, in the same run, the anchor PERFORMANCE.md
 * names: a plain uniform grid (cell 1) with an exact swept-AABB slide in double, AABB-only. One
 * JSON line per scene, then the ratios product / anchor (below 1 means the product is faster).
 *
 * Usage: bench_world [timed_ticks (default 600)] [scene filter substring] */
#include "s1.h"
#include "world.h"

/* ---- the product ---------------------------------------------------------------------------- */

typedef struct s1_world {
    world *w;                        /* the world */
    world_body_id movers[S1_MOVERS]; /* mover ids in creation order */
} s1_world;

static world_config s1_config(uint32_t capacity) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP));
    cfg.max_bodies = capacity;
    cfg.cell_size = 1.0f;
    cfg.max_speed = 1000.0f;
    return cfg;
}

static world *s1_world_build(const s1_layout *l, uint32_t capacity, world_body_id *movers) {
    world_config cfg = s1_config(capacity);
    world *w = world_create(&cfg);
    geom_shape tile, mover;
    if (!w || geom_make_box(v2(0.5f, 0.5f), &tile) || geom_make_box(v2(0.4f, 0.4f), &mover))
        return NULL;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++)
            if (l->solid[y * S1_MAP + x] &&
                world_spawn(w, WORLD_BODY_STATIC, &tile, v2((float)x + 0.5f, (float)y + 0.5f), 0,
                            NULL, NULL) != WORLD_OK)
                return NULL;
    for (int i = 0; movers && i < S1_MOVERS; i++)
        if (world_spawn(w, WORLD_BODY_MOVING, &mover,
                        v2((float)l->start_cell[i][0] + 0.5f, (float)l->start_cell[i][1] + 0.5f), 1,
                        &movers[i], NULL) != WORLD_OK)
            return NULL;
    return w;
}

/* Invariant counters by brute force over each mover's neighbourhood, through the public API. */
static void s1_world_check(const s1_world *s, int *overlaps, int *outside) {
    *overlaps = *outside = 0;
    world_body_id near[64];
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_info info, si;
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

static size_t s1_world_bytes(const s1_layout *l, uint32_t capacity) {
    world *w = s1_world_build(l, capacity, NULL);
    world_stats st;
    world_get_stats(w, &st);
    world_destroy(w);
    return st.bytes;
}

static s1_result run_world(const s1_layout *l, float speed, int movers_collide, int ticks,
                           world_stats *stats) {
    s1_result r = {0, 0, 0, 0};
    s1_world *s = calloc(1, sizeof *s);
    double *times = calloc((size_t)ticks, sizeof *times);
    if (!s || !times || !(s->w = s1_world_build(l, S1_STATICS + S1_MOVERS, s->movers))) {
        fprintf(stderr, "S1: setup failed\n");
        exit(1);
    }
    world_set_mover_collisions(s->w, movers_collide != 0);
    s1_rng rng;
    s1_layout again;
    s1_make_layout(&again, &rng); /* the intents continue the layout's draws */
    uint32_t seq = 0;
    for (int k = 0; k < S1_WARMUP + ticks; k++) {
        if (k % 60 == 0) {
            seq++;
            for (int i = 0; i < S1_MOVERS; i++) {
                double a = s1_unit(&rng) * 2.0 * S1_PI;
                world_set_intent(s->w, s->movers[i],
                                 v2((float)(speed * cos(a)), (float)(speed * sin(a))), seq);
            }
        }
        double t0 = s1_now_ms();
        world_step(s->w);
        double t1 = s1_now_ms();
        if (k >= S1_WARMUP) times[k - S1_WARMUP] = t1 - t0;
    }
    s1_world_check(s, &r.overlaps, &r.outside);
    qsort(times, (size_t)ticks, sizeof *times, s1_cmp_double);
    r.median_ms = times[ticks / 2];
    r.min_ms = times[0];
    world_get_stats(s->w, stats);
    world_destroy(s->w);
    free(times);
    free(s);
    return r;
}

/* ---- the anchor: the map's solid cells are the grid; AABB-only; double ---------------------- */

static double anchor_sweep(void *ctx, double x0, double y0, double x1, double y1, double rx,
                           double ry, double *nx, double *ny) {
    const s1_layout *l = ctx;
    double sx0 = fmin(x0, x0 + rx) - S1_SKIN, sx1 = fmax(x1, x1 + rx) + S1_SKIN;
    double sy0 = fmin(y0, y0 + ry) - S1_SKIN, sy1 = fmax(y1, y1 + ry) + S1_SKIN;
    int cx0 = (int)floor(sx0), cx1 = (int)floor(sx1), cy0 = (int)floor(sy0), cy1 = (int)floor(sy1);
    if (cx0 < 0) cx0 = 0;
    if (cy0 < 0) cy0 = 0;
    if (cx1 > S1_MAP - 1) cx1 = S1_MAP - 1;
    if (cy1 > S1_MAP - 1) cy1 = S1_MAP - 1;
    double best = 2.0;
    for (int cy = cy0; cy <= cy1; cy++)
        for (int cx = cx0; cx <= cx1; cx++) {
            if (!l->solid[cy * S1_MAP + cx]) continue;
            double hx = 0, hy = 0;
            double t = s1_box_sweep(x0, y0, x1, y1, rx, ry, cx, cy, cx + 1, cy + 1, &hx, &hy);
            if (t < best) best = t, *nx = hx, *ny = hy;
        }
    return best;
}

static void anchor_step(void *ctx, s1_plain *m, double dt) {
    for (int i = 0; i < S1_MOVERS; i++)
        s1_plain_slide(ctx, anchor_sweep, &m->x[i], &m->y[i], m->vx[i] * dt, m->vy[i] * dt);
}

static void print_result(const char *scene, s1_result r, const char *extra) {
    printf(
        "{\"scene\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,\"overlaps\":%d,\"outside\":%d%s}\n",
        scene, r.median_ms, r.min_ms, r.overlaps, r.outside, extra);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int ticks = argc > 1 ? atoi(argv[1]) : 600;
    const char *filter = argc > 2 ? argv[2] : NULL;
    if (ticks < 1) ticks = 1;
    static s1_layout layout;
    s1_rng rng;
    if (s1_make_layout(&layout, &rng) != 0) return 1;
    /* memory: a statics-only world (the map), and what 10,000 more body slots cost */
    size_t map_bytes = s1_world_bytes(&layout, S1_STATICS);
    size_t full_bytes = s1_world_bytes(&layout, S1_STATICS + S1_MOVERS);
    char mem[160];
    snprintf(mem, sizeof mem, ",\"bytes_per_static\":%.1f,\"bytes_per_mover\":%.1f",
             (double)map_bytes / S1_STATICS, (double)(full_bytes - map_bytes) / S1_MOVERS);
    struct {
        const char *name; /* scene */
        float speed;      /* V */
        int collide;      /* S1b */
    } scenes[] = {{"S1a-slow", 5.0f, 0},
                  {"S1a-fast", 600.0f, 0},
                  {"S1b-slow", 5.0f, 1},
                  {"S1b-fast", 600.0f, 1}};
    double product[4] = {0, 0, 0, 0}, anchor[2] = {0, 0};
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        if (filter && !strstr(scenes[i].name, filter)) continue;
        world_stats st;
        s1_result r = run_world(&layout, scenes[i].speed, scenes[i].collide, ticks, &st);
        char extra[400];
        snprintf(extra, sizeof extra,
                 ",\"engine\":\"collide\",\"ticks\":%d,\"statics\":%zu,\"movers\":%zu%s,\"swept_"
                 "hits\":%llu,"
                 "\"separations\":%llu,\"jammed\":%llu",
                 ticks, st.static_bodies, st.moving_bodies, mem, (unsigned long long)st.swept_hits,
                 (unsigned long long)st.separations, (unsigned long long)st.jammed);
        print_result(scenes[i].name, r, extra);
        product[i] = r.median_ms;
        bad |= r.overlaps || r.outside;
        if (i < 2) {
            char name[64];
            snprintf(name, sizeof name, "%s-anchor", scenes[i].name);
            s1_result a = s1_run_plain(&layout, anchor_step, &layout, scenes[i].speed, ticks);
            print_result(name, a, ",\"engine\":\"plain grid, cell 1, swept AABB, double\"");
            anchor[i] = a.median_ms;
        }
    }
    if (product[0] > 0 && anchor[0] > 0 && product[1] > 0 && anchor[1] > 0)
        printf("{\"scene\":\"ratios\",\"S1a-slow_vs_anchor\":%.3f,\"S1a-fast_vs_anchor\":%.3f",
               product[0] / anchor[0], product[1] / anchor[1]);
    if (product[0] > 0 && product[2] > 0 && product[1] > 0 && product[3] > 0)
        printf(",\"S1b-slow_vs_S1a\":%.3f,\"S1b-fast_vs_S1a\":%.3f", product[2] / product[0],
               product[3] / product[1]);
    if (product[0] > 0 && anchor[0] > 0) printf("}\n");
    return bad;
}

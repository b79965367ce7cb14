/* bench_world: scene S1 of PERFORMANCE.md (movers in a 256 x 256 tile map), exactly as specified,
 * through the product's world (server/world), and, in the same run, the anchor PERFORMANCE.md
 * names: a plain uniform grid (cell 1) with an exact swept-AABB slide in double, AABB-only. One
 * JSON line per scene, then the ratios product / anchor (below 1 means the product is faster).
 *
 * Usage: bench_world [timed_ticks (default 600)] [scene filter substring, or "arena" for the
 * default arena with 1,000 and 5,000 players, or "events" for S1b with and without contact
 * tracking: "S1b-slow-events", "S1b-fast-events", "events" for both, "S1r" for the turning
 * scene next to S1a-slow, or "S1c" for the side-on scene (s1c.h) next to S1a-slow] */
#include "s1c.h"
#include "s1_world.h"
#include "world_load.h"

/* ---- the anchor: the map's solid cells are the grid; AABB-only; double ---------------------- */

static double anchor_sweep(void *ctx, double x0, double y0, double x1, double y1, double rx,
                           double ry, double *nx, double *ny) {
    const s1_layout *l = ctx;
    double sx0 = s1_min(x0, x0 + rx) - S1_SKIN, sx1 = s1_max(x1, x1 + rx) + S1_SKIN;
    double sy0 = s1_min(y0, y0 + ry) - S1_SKIN, sy1 = s1_max(y1, y1 + ry) + S1_SKIN;
    int cx0 = s1_floor(sx0), cx1 = s1_floor(sx1), cy0 = s1_floor(sy0), cy1 = s1_floor(sy1);
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

/* Not S1: the daemon's default arena with players, the world side of load L1/L2
 * (PERFORMANCE.md): n moving 1x1 boxes spawned on free spots, each re-aiming at random (speed up
 * to 20 units/s) on alternate ticks, as clients sending intents at 30 Hz into a 60 Hz tick would.
 * Reports the median and p99 of the tick. */
static int run_arena(int players, int ticks) {
    world_config cfg;
    world_config_default(&cfg);
    char err[256];
    world *w = world_load_json(world_default_arena_json, "arena", &cfg, NULL, err, sizeof err);
    if (!w) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    world_body_id *ids = calloc((size_t)players, sizeof *ids);
    double *times = calloc((size_t)ticks, sizeof *times);
    geom_shape box;
    if (!ids || !times || geom_make_box(v2(0.5f, 0.5f), &box)) return 1;
    s1_rng rng = {777};
    world_body_id probe[1];
    for (int i = 0; i < players;) {
        vec2 p = v2((float)(s1_unit(&rng) * 980.0 - 490.0), (float)(s1_unit(&rng) * 980.0 - 490.0));
        if (world_query_aabb(w, aabb_make(v2(p.x - 0.6f, p.y - 0.6f), v2(p.x + 0.6f, p.y + 0.6f)),
                             0, probe, 1))
            continue;
        if (world_spawn(w, WORLD_BODY_MOVING, &box, p, (uint32_t)i + 1, &ids[i], NULL) != WORLD_OK)
            return 1;
        i++;
    }
    uint32_t seq = 0;
    for (int k = 0; k < S1_WARMUP + ticks; k++) {
        seq++;
        for (int i = k & 1; i < players; i += 2) {
            double a = s1_unit(&rng) * 2.0 * S1_PI, v = s1_unit(&rng) * 20.0;
            world_set_intent(w, ids[i], v2((float)(v * cos(a)), (float)(v * sin(a))), seq);
        }
        double t0 = s1_now_ms();
        world_step(w);
        double t1 = s1_now_ms();
        if (k >= S1_WARMUP) times[k - S1_WARMUP] = t1 - t0;
    }
    qsort(times, (size_t)ticks, sizeof *times, s1_cmp_double);
    world_stats st;
    world_get_stats(w, &st);
    printf("{\"scene\":\"arena-%d\",\"median_ms\":%.4f,\"p99_ms\":%.4f,\"min_ms\":%.4f,\"statics\":"
           "%zu,"
           "\"movers\":%zu,\"jammed\":%llu}\n",
           players, times[ticks / 2], times[ticks * 99 / 100], times[0], st.static_bodies,
           st.moving_bodies, (unsigned long long)st.jammed);
    world_destroy(w);
    free(ids);
    free(times);
    return 0;
}

/* S1c's line: the time, the invariant counters and what the run did (the checks' population). */
static void print_s1c(const s1c_run *c, s1_result r) {
    double steps = (double)S1_MOVERS * (S1_WARMUP + c->ticks);
    char extra[400];
    snprintf(extra, sizeof extra,
             ",\"engine\":\"collide\",\"falls_through\":%llu,\"crossed_down\":%llu,\"one_way\":%d,"
             "\"stood_on_one_way\":"
             "%llu,\"jumps\":%llu,\"grounded_share\":%.3f,\"state_hash\":\"%016llx\"",
             c->falls_through, c->crossed_down, c->one_way, c->stood_ticks, c->jumps,
             (double)c->grounded_ticks / steps, r.state_hash);
    print_result("S1c", r, extra);
}

/* S1c (issue 34) next to S1a-slow, one after the other and then in alternating blocks of 10
 * ticks (as S1r): the target is <= 2x S1a-slow with 0 overlaps, 0 outside, 0 falls through. */
static int run_s1c(const s1_layout *layout, int ticks) {
    world_stats st;
    s1_result a = run_world(layout, 5.0f, 0, ticks, &st);
    print_result("S1a-slow", a, ",\"engine\":\"collide\"");
    s1c_run *c = calloc(1, sizeof *c);
    if (!c) return 1;
    s1c_run_start(c, layout, ticks);
    s1c_run_ticks(c, S1_WARMUP + ticks);
    s1_result r = s1c_run_finish(c);
    print_s1c(c, r);
    unsigned long long falls = c->falls_through + c->crossed_down;
    s1_run pa;
    s1_run_start(&pa, layout, 5.0f, 0, ticks, false, 0.0);
    s1c_run_start(c, layout, ticks);
    s1_run_ticks(&pa, S1_WARMUP);
    s1c_run_ticks(c, S1_WARMUP);
    while (s1_run_ticks(&pa, 10) + s1c_run_ticks(c, 10) > 0) {
    }
    s1_result a2 = s1_run_finish(&pa, &st), r2 = s1c_run_finish(c);
    printf("{\"scene\":\"ratios\",\"S1c_vs_S1a-slow\":%.3f,\"paired\":%.3f,"
           "\"paired_ms\":[%.4f,%.4f],\"same_state\":%d}\n",
           r.median_ms / a.median_ms, r2.median_ms / a2.median_ms, a2.median_ms, r2.median_ms,
           r2.state_hash == r.state_hash && a2.state_hash == a.state_hash);
    int bad = r.overlaps || r.outside || falls || r2.overlaps || r2.outside || c->falls_through ||
              c->crossed_down || r2.state_hash != r.state_hash || a2.state_hash != a.state_hash;
    free(c);
    return bad;
}

int main(int argc, char **argv) {
    int ticks = argc > 1 ? atoi(argv[1]) : 600;
    const char *filter = argc > 2 ? argv[2] : NULL;
    if (ticks < 1) ticks = 1;
    static s1_layout layout;
    s1_rng rng;
    if (s1_make_layout(&layout, &rng) != 0) return 1;
    /* memory: the map alone (room for one mover), and what room for 10,000 movers adds */
    size_t map_bytes = s1_world_bytes(&layout, S1_STATICS + 1, 1);
    size_t full_bytes = s1_world_bytes(&layout, S1_STATICS + S1_MOVERS, S1_MOVERS);
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
    /* Contact tracking's cost (PERFORMANCE.md: <= 1.15x S1b without it), measured in the same
     * run as S1b: scenes S1b-slow-events and S1b-fast-events. */
    for (int i = 2; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-events", scenes[i].name);
        if (!filter || !strstr(name, filter) || !strstr(filter, "events")) continue;
        world_stats st;
        s1_result plain = run_world(&layout, scenes[i].speed, 1, ticks, &st);
        s1_result ev = run_world_events(&layout, scenes[i].speed, 1, ticks, &st, true);
        print_result(scenes[i].name, plain, "");
        print_result(name, ev, "");
        /* again in alternating blocks of 10 ticks (s1_run_paired) */
        s1_run pp, pe;
        s1_run_start(&pp, &layout, scenes[i].speed, 1, ticks, false, 0.0);
        s1_run_start(&pe, &layout, scenes[i].speed, 1, ticks, true, 0.0);
        s1_run_paired(&pp, &pe, 10);
        s1_result plain2 = s1_run_finish(&pp, &st), ev2 = s1_run_finish(&pe, &st);
        printf("{\"scene\":\"%s\",\"events_vs_plain\":%.3f,\"paired\":%.3f,\"same_state\":%d,"
               "\"events\":%llu,\"events_digest\":\"%016llx\"}\n",
               name, ev.median_ms / plain.median_ms, ev2.median_ms / plain2.median_ms,
               ev.state_hash == plain.state_hash, ev.events, ev.events_digest);
        bad |= ev.overlaps || ev.outside || ev.state_hash != plain.state_hash ||
               ev2.state_hash != ev.state_hash || ev2.events_digest != ev.events_digest;
    }
    if (filter && strstr(filter, "events")) return bad;
    /* S1r (issue 16): S1a-slow's map and speed, every mover a box turning at a random speed up
     * to 2 pi rad/s; measured next to S1a-slow in the same run (target <= 3x). */
    if (filter && strstr(filter, "S1r")) {
        world_stats st;
        s1_result a = run_world(&layout, 5.0f, 0, ticks, &st);
        s1_result r = run_world_full(&layout, 5.0f, 0, ticks, &st, false, 2.0 * S1_PI);
        print_result("S1a-slow", a, ",\"engine\":\"collide\"");
        char extra[200];
        snprintf(extra, sizeof extra,
                 ",\"engine\":\"collide\",\"swept_hits\":%llu,\"state_hash\":\"%016llx\"",
                 (unsigned long long)st.swept_hits, r.state_hash);
        print_result("S1r", r, extra);
        /* the same two runs again, in alternating blocks of 10 ticks: the ratio a passing load
         * moves least (s1_run_paired) */
        s1_run pa, pr;
        s1_run_start(&pa, &layout, 5.0f, 0, ticks, false, 0.0);
        s1_run_start(&pr, &layout, 5.0f, 0, ticks, false, 2.0 * S1_PI);
        s1_run_paired(&pa, &pr, 10);
        s1_result a2 = s1_run_finish(&pa, &st), r2 = s1_run_finish(&pr, &st);
        printf("{\"scene\":\"ratios\",\"S1r_vs_S1a-slow\":%.3f,\"paired\":%.3f,"
               "\"paired_ms\":[%.4f,%.4f]}\n",
               r.median_ms / a.median_ms, r2.median_ms / a2.median_ms, a2.median_ms, r2.median_ms);
        return r.overlaps || r.outside || a.overlaps || a.outside ||
               r2.state_hash != r.state_hash || a2.state_hash != a.state_hash;
    }
    if (filter && strstr(filter, "S1c")) return run_s1c(&layout, ticks);
    if (filter && strstr(filter, "arena")) return run_arena(1000, ticks) | run_arena(5000, ticks);
    for (int i = 0; i < 4; i++) {
        if (filter && !strstr(scenes[i].name, filter)) continue;
        world_stats st;
        s1_result r = run_world(&layout, scenes[i].speed, scenes[i].collide, ticks, &st);
        char extra[400];
        snprintf(extra, sizeof extra,
                 ",\"engine\":\"collide\",\"mover_overlaps\":%d,\"ticks\":%d,\"statics\":%zu,"
                 "\"movers\":%zu%s,\"swept_"
                 "hits\":%llu,"
                 "\"separations\":%llu,\"jammed\":%llu,\"state_hash\":\"%016llx\"",
                 r.mover_overlaps, ticks, st.static_bodies, st.moving_bodies, mem,
                 (unsigned long long)st.swept_hits, (unsigned long long)st.separations,
                 (unsigned long long)st.jammed, r.state_hash);
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

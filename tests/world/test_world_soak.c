/* Randomized soak: random worlds (boxes, polygons, circles), random intents up to the max speed,
 * random spawns and despawns, thousands of ticks in all; after every tick a brute-force scan of
 * every pair checks I1/I2 (no mover in a static beyond the skin, none outside the bounds) and I3
 * (mover pairs within tolerance unless the world reported that very pair jammed), and I1 along
 * the way: each mover's straight chord through the tick must not cross a static's interior.
 * world_validate() checks the world's own bookkeeping (slots, dense index, free lists, grid links)
 * before and after every step, and a point query inside each mover must find it. Every measurement
 * is world_oracle.h's (double precision, no geom query), so a geom bug that the world inherits
 * shows up here instead of being measured away. */
#include "world_test_util.h"

#define SOAK_WORLDS 12
#define SOAK_TICKS 300
#define SOAK_MAX_STATICS 60
#define SOAK_MAX_MOVERS 40
#define SOAK_I3_TOLERANCE 0.01f

static geom_shape random_shape(harness_rng *rng, float scale) {
    switch (harness_rng_next(rng) % 3) {
    case 0:
        return wt_box(scale * harness_rng_range(rng, 0.2f, 1.0f),
                      scale * harness_rng_range(rng, 0.2f, 1.0f));
    case 1:
        return wt_circle(scale * harness_rng_range(rng, 0.2f, 1.0f));
    default:
        return wt_ngon(3 + (int)(harness_rng_next(rng) % 6),
                       scale * harness_rng_range(rng, 0.3f, 1.0f),
                       harness_rng_range(rng, 0, 6.28f));
    }
}

/* A free spot for a new mover (no static under it), or false. */
static bool free_spot(const world *w, const geom_shape *s, const world_body_id *statics, int ns,
                      harness_rng *rng, float half, vec2 *out) {
    for (int tries = 0; tries < 50; tries++) {
        vec2 p = v2(harness_rng_range(rng, -half + 2, half - 2),
                    harness_rng_range(rng, -half + 2, half - 2));
        bool ok = true;
        wo_body body = wo_make(s, p);
        for (int k = 0; k < ns && ok; k++) {
            wo_body st;
            if (!wt_body(w, statics[k], &st) || wo_depth(&body, &st) > 0.0) ok = false;
        }
        if (ok) {
            *out = p;
            return true;
        }
    }
    return false;
}

/* Chords are sampled this far apart: well under the thinnest static (0.2 across) plus the
 * thinnest mover (0.24), so a tunnelling chord has dozens of samples deep inside the static. */
#define SOAK_CHORD_STEP 0.01

static void test_soak_random_worlds(void) {
    int total_ticks = 0, jam_ticks = 0;
    long mover_ticks = 0;    /* movers scanned, summed over the ticks */
    long jams_reported = 0;  /* pairs world_last_jams() named */
    long chords_checked = 0; /* mover-static chords that came near enough to be swept */
    long straight = 0;       /* mover ticks that moved their whole intent (chord-checked) */
    float worst_jam = 0.0f;
    for (unsigned seed = 1; seed <= SOAK_WORLDS; seed++) {
        harness_rng rng = {seed * 2654435761u};
        float half = harness_rng_range(&rng, 15.0f, 40.0f);
        world_config cfg;
        world_config_default(&cfg);
        cfg.bounds = aabb_make(v2(-half, -half), v2(half, half));
        cfg.max_bodies = 256;
        cfg.tick_rate_hz = seed % 3 == 0 ? 20.0f : 60.0f;
        world *w = world_create(&cfg);
        CHECK(w);
        world_set_mover_collisions(w, seed % 4 != 0);
        world_body_id statics[SOAK_MAX_STATICS], movers[SOAK_MAX_MOVERS];
        int ns = 0, nm = 0;
        int want_statics = 10 + (int)(harness_rng_next(&rng) % (SOAK_MAX_STATICS - 10));
        float scale = harness_rng_range(&rng, 0.5f, 4.0f);
        while (ns < want_statics) {
            geom_shape s = random_shape(&rng, scale);
            vec2 p = v2(harness_rng_range(&rng, -half + 5, half - 5),
                        harness_rng_range(&rng, -half + 5, half - 5));
            world_body_id id = wt_spawn(w, WORLD_BODY_STATIC, s, p);
            CHECK(id);
            statics[ns++] = id;
        }
        geom_shape static_shapes[SOAK_MAX_STATICS];
        vec2 static_pos[SOAK_MAX_STATICS];
        aabb static_bounds[SOAK_MAX_STATICS];
        wo_body static_body[SOAK_MAX_STATICS];
        for (int k = 0; k < ns; k++) {
            world_body_info si;
            CHECK(world_body_shape(w, statics[k], &static_shapes[k]) &&
                  world_body_get(w, statics[k], &si));
            static_pos[k] = si.position;
            static_bounds[k] = si.bounds;
            static_body[k] = wo_make(&static_shapes[k], static_pos[k]);
        }
        uint32_t seq = 0;
        for (int t = 0; t < SOAK_TICKS; t++) {
            /* churn: spawn into free space, despawn at random */
            if (nm < SOAK_MAX_MOVERS && harness_rng_unit(&rng) < 0.3f) {
                geom_shape s = random_shape(&rng, 0.6f);
                vec2 p;
                if (free_spot(w, &s, statics, ns, &rng, half, &p)) {
                    world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, s, p);
                    CHECK(id);
                    movers[nm++] = id;
                }
            }
            if (nm > 0 && harness_rng_unit(&rng) < 0.05f) {
                int k = (int)(harness_rng_next(&rng) % (uint32_t)nm);
                CHECK(world_despawn(w, movers[k]) == WORLD_OK);
                movers[k] = movers[--nm];
            }
            for (int i = 0; i < nm; i++) {
                if (harness_rng_unit(&rng) > 0.1f) continue;
                float a = harness_rng_range(&rng, 0, 6.2831853f);
                float u = harness_rng_unit(&rng);
                float speed = u < 0.15f  ? 1e4f
                              : u < 0.5f ? harness_rng_range(&rng, 100, 2000)
                                         : harness_rng_range(&rng, 0, 30);
                CHECK(world_set_intent(w, movers[i], v2(speed * cosf(a), speed * sinf(a)), ++seq) ==
                      WORLD_OK);
            }
            /* chord check: where every mover was before the tick, and what it overlapped then */
            vec2 p_before[SOAK_MAX_MOVERS];
            uint64_t overlapped[SOAK_MAX_MOVERS]; /* a bit per static (ns <= 64) */
            for (int i = 0; i < nm; i++) {
                p_before[i] = wt_pos(w, movers[i]);
                overlapped[i] = 0;
                for (int k = 0; k < ns; k++)
                    if (wt_depth(w, movers[i], statics[k]) > 0.0f) overlapped[i] |= 1ull << k;
            }
            world_stats before;
            world_get_stats(w, &before);
            const char *broken = world_validate(w);
            CHECK_MSG(!broken, "seed %u tick %d, before the step: %s", seed, t, broken);
            world_step(w);
            broken = world_validate(w);
            CHECK_MSG(!broken, "seed %u tick %d: %s", seed, t, broken);
            /* a query at a point inside a mover finds it (a corner a little inside its box, a
             * different corner each tick) */
            for (int i = 0; i < nm; i++) {
                world_body_info bi;
                CHECK(world_body_get(w, movers[i], &bi));
                int corner = (t + i) % 4;
                vec2 c = v2(corner & 1 ? bi.bounds.max.x - 1e-3f : bi.bounds.min.x + 1e-3f,
                            corner & 2 ? bi.bounds.max.y - 1e-3f : bi.bounds.min.y + 1e-3f);
                world_body_id found[SOAK_MAX_STATICS + SOAK_MAX_MOVERS];
                size_t nf = world_query_aabb(w, aabb_make(c, c), 0, found,
                                             SOAK_MAX_STATICS + SOAK_MAX_MOVERS);
                bool hit = false;
                for (size_t q = 0; q < nf; q++)
                    hit |= found[q] == movers[i];
                CHECK_MSG(hit, "seed %u tick %d: a query at (%g, %g) misses mover %u", seed, t,
                          (double)c.x, (double)c.y, movers[i]);
            }
            for (int i = 0; i < nm; i++) {
                geom_shape ms;
                CHECK(world_body_shape(w, movers[i], &ms));
                vec2 p_after = wt_pos(w, movers[i]);
                /* Only an unobstructed path is known to be the chord: a slide that bent at a
                 * hit can legitimately pass beside a static its chord cuts (one lying between
                 * the leg into the hit and the leg along the surface), and every bend shortens
                 * the motion. A body that tunnelled through a static met nothing there, so it
                 * moved its whole intent in a straight line: that is the case checked here. */
                world_body_info mi;
                CHECK(world_body_get(w, movers[i], &mi));
                vec2 d = v2_sub(p_after, p_before[i]);
                vec2 want = v2_scale(mi.intent, 1.0f / cfg.tick_rate_hz);
                if (!(v2_len(v2_sub(d, want)) <= 1e-4f * v2_len(want) + 1e-5f)) continue;
                straight++;
                aabb path = aabb_make(v2_min(p_before[i], p_after), v2_max(p_before[i], p_after));
                for (int k = 0; k < ns; k++) {
                    if (overlapped[i] >> k & 1u) continue;
                    /* cheap reject: the static's box grown by the mover's reach misses the path */
                    vec2 reach = v2_sub(mi.bounds.max, mi.bounds.min);
                    aabb grown = aabb_make(v2_sub(static_bounds[k].min, reach),
                                           v2_add(static_bounds[k].max, reach));
                    if (!(path.min.x <= grown.max.x && grown.min.x <= path.max.x &&
                          path.min.y <= grown.max.y && grown.min.y <= path.max.y))
                        continue;
                    float depth = (float)wo_chord_depth(&ms, p_before[i], p_after, &static_body[k],
                                                        SOAK_CHORD_STEP);
                    chords_checked++;
                    CHECK_MSG(depth <= GEOM_SKIN,
                              "seed %u tick %d: mover %u's chord (%g,%g)->(%g,%g) crosses static "
                              "%d by %g",
                              seed, t, movers[i], (double)p_before[i].x, (double)p_before[i].y,
                              (double)p_after.x, (double)p_after.y, k, (double)depth);
                }
            }
            total_ticks++;
            world_stats after;
            world_get_stats(w, &after);
            wt_scan s = wt_scan_all(w, movers, nm, statics, ns);
            CHECK_MSG(s.static_depth <= GEOM_SKIN, "seed %u tick %d: mover in a static by %g", seed,
                      t, (double)s.static_depth);
            CHECK_MSG(s.outside == 0, "seed %u tick %d: %d outside", seed, t, s.outside);
            mover_ticks += nm;
            size_t jams = world_last_jams(w, NULL, 0);
            CHECK(jams == after.jammed - before.jammed);
            jams_reported += (long)jams;
            if (seed % 4 != 0) {
                /* an overlap is excused only for the very pair reported jammed */
                world_body_id ja = 0, jb = 0;
                bool bogus;
                float unexcused =
                    wt_unexcused_mover_depth(w, movers, nm, SOAK_I3_TOLERANCE, &ja, &jb, &bogus);
                CHECK_MSG(unexcused == 0.0f,
                          "seed %u tick %d: movers %u and %u overlap by %g, not reported jammed",
                          seed, t, ja, jb, (double)unexcused);
                CHECK_MSG(!bogus, "seed %u tick %d: a reported jam that does not overlap", seed, t);
                if (s.mover_depth > SOAK_I3_TOLERANCE) {
                    jam_ticks++;
                    if (s.mover_depth > worst_jam) worst_jam = s.mover_depth;
                }
            }
        }
        CHECK_MSG(world_tick(w) == SOAK_TICKS, "seed %u: %llu ticks stepped", seed,
                  (unsigned long long)world_tick(w));
        world_destroy(w);
    }
    printf("soak: %d ticks, %ld mover ticks, %d with a reported jam above tolerance, worst %g, "
           "%ld jammed pairs reported, %ld unobstructed paths, %ld chords sampled\n",
           total_ticks, mover_ticks, jam_ticks, (double)worst_jam, jams_reported, straight,
           chords_checked);
    /* The checks above ran on a real population, not on empty worlds (the churn fills them to
     * about half of SOAK_MAX_MOVERS), and near statics. */
    CHECK_MSG(mover_ticks > (long)total_ticks * SOAK_MAX_MOVERS / 4, "%ld mover ticks",
              mover_ticks);
    CHECK(chords_checked > 1000 && straight > 10000);
    /* The per-pair excuse was exercised: some pairs were reported jammed and excused (if the world
     * ever stops jamming at all here, this scene no longer tests the excuse: make it denser). */
    CHECK_MSG(jams_reported > 0 && jam_ticks > 0, "%ld jams, %d jammed ticks", jams_reported,
              jam_ticks);
    /* Jams are reported, but must stay rare and shallow: the discrete pass does converge. */
    CHECK_MSG(jam_ticks * 20 <= total_ticks, "%d of %d ticks jammed", jam_ticks, total_ticks);
    CHECK_MSG(worst_jam <= 0.25f, "worst jammed overlap %g", (double)worst_jam);
}

TEST_MAIN(TEST(test_soak_random_worlds))

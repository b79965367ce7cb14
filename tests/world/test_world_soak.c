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

static geom_shape random_shape(collide_rng *rng, float scale) {
    switch (collide_rng_next(rng) % 3) {
    case 0:
        return wt_box(scale * collide_rng_range(rng, 0.2f, 1.0f),
                      scale * collide_rng_range(rng, 0.2f, 1.0f));
    case 1:
        return wt_circle(scale * collide_rng_range(rng, 0.2f, 1.0f));
    default:
        return wt_ngon(3 + (int)(collide_rng_next(rng) % 6),
                       scale * collide_rng_range(rng, 0.3f, 1.0f),
                       collide_rng_range(rng, 0, 6.28f));
    }
}

/* A free spot for a new mover of shape s turned by angle (no static under it), or false. */
static bool free_spot(const world *w, const geom_shape *s, float angle,
                      const world_body_id *statics, int ns, collide_rng *rng, float half,
                      vec2 *out) {
    for (int tries = 0; tries < 50; tries++) {
        vec2 p = v2(collide_rng_range(rng, -half + 2, half - 2),
                    collide_rng_range(rng, -half + 2, half - 2));
        bool ok = true;
        wo_body body = wo_make_turned(s, p.x, p.y, angle);
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
        collide_rng rng = {seed * 2654435761u};
        float half = collide_rng_range(&rng, 15.0f, 40.0f);
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
        int want_statics = 10 + (int)(collide_rng_next(&rng) % (SOAK_MAX_STATICS - 10));
        float scale = collide_rng_range(&rng, 0.5f, 4.0f);
        while (ns < want_statics) {
            geom_shape s = random_shape(&rng, scale);
            vec2 p = v2(collide_rng_range(&rng, -half + 5, half - 5),
                        collide_rng_range(&rng, -half + 5, half - 5));
            world_body_id id = wt_spawn(w, WORLD_BODY_STATIC, s, p);
            CHECK(id);
            statics[ns++] = id;
        }
        geom_shape static_shapes[SOAK_MAX_STATICS];
        vec2 static_pos[SOAK_MAX_STATICS];
        aabb static_bounds[SOAK_MAX_STATICS];
        wo_body static_body[SOAK_MAX_STATICS];
        for (int k = 0; k < ns; k++) {
            world_body_row si;
            CHECK(world_body_shape(w, statics[k], &static_shapes[k]) &&
                  world_body_get(w, statics[k], &si));
            static_pos[k] = si.position;
            static_bounds[k] = si.bounds;
            static_body[k] = wo_make(&static_shapes[k], static_pos[k]);
        }
        uint32_t seq = 0;
        for (int t = 0; t < SOAK_TICKS; t++) {
            /* churn: spawn into free space, despawn at random */
            if (nm < SOAK_MAX_MOVERS && collide_rng_unit(&rng) < 0.3f) {
                geom_shape s = random_shape(&rng, 0.6f);
                vec2 p;
                if (free_spot(w, &s, 0.0f, statics, ns, &rng, half, &p)) {
                    world_body_id id = wt_spawn(w, WORLD_BODY_MOVING, s, p);
                    CHECK(id);
                    movers[nm++] = id;
                }
            }
            if (nm > 0 && collide_rng_unit(&rng) < 0.05f) {
                int k = (int)(collide_rng_next(&rng) % (uint32_t)nm);
                CHECK(world_despawn(w, movers[k]) == WORLD_OK);
                movers[k] = movers[--nm];
            }
            for (int i = 0; i < nm; i++) {
                if (collide_rng_unit(&rng) > 0.1f) continue;
                float a = collide_rng_range(&rng, 0, 6.2831853f);
                float u = collide_rng_unit(&rng);
                float speed = u < 0.15f  ? 1e4f
                              : u < 0.5f ? collide_rng_range(&rng, 100, 2000)
                                         : collide_rng_range(&rng, 0, 30);
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
                world_body_row bi;
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
                world_body_row mi;
                vec2 held;
                CHECK(world_body_get(w, movers[i], &mi) &&
                      world_body_intent(w, movers[i], &held, NULL));
                vec2 d = v2_sub(p_after, p_before[i]);
                vec2 want = v2_scale(held, 1.0f / cfg.tick_rate_hz);
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
                CHECK_MSG(
                    !bogus,
                    "seed %u tick %d: a reported jam that does not overlap, or one named twice",
                    seed, t);
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

/* ---- the turning soak ------------------------------------------------------------------------
 * Random worlds as above, with thin walls and statics turned at random angles among the boxes,
 * circles and polygons, and movers of every kind spawned at random angles that turn: every tick
 * some movers get a new intent, turning (world_set_intent_turning) at speeds up to and beyond the
 * clamp, switching to 0 and back, pure turning with no translation, pressing into walls and
 * corners, and new velocities for the movers that are stuck; statics near stuck movers are
 * despawned (the pin goes: a remembered still tick must not hold the mover) and spawned (a new
 * pin beside it). Worlds with mover collisions on, off, switched on and off along the way, and
 * with one mover (world_turn_step_alone). After every tick, by the oracle (each body's local
 * shape turned by its reported angle in double, never the world's own geometry):
 *   - no mover in a static by more than the skin, none outside the bounds (by 1e-4: the turned
 *     box's float AABB), mover pairs within SOAK_I3_TOLERANCE unless reported jammed;
 *   - no tunnelling: a mover that made its whole translation went along a known path (moving and
 *     turning together up to the angle it reached, then straight on at that angle), sampled
 *     finely against every static it did not overlap before; a pure turn likewise;
 *   - free motion is exact: a mover farther from everything than its tick can reach moves its
 *     whole translation and turns its whole turn; a mover that stays put (neither moves nor turns)
 *     while it wants to has something within TS_NEAR of it;
 *   - world_validate before and after the step.
 * Each world's state hashes are chained over the run; the first worlds run twice (I6). */
#ifndef TS_WORLDS /* (a longer hunt: -DTS_WORLDS=...) */
#define TS_WORLDS 12
#endif
#ifndef TS_TICKS
#define TS_TICKS 300
#endif
#define TS_MAX_STATICS 72
#define TS_MAX_MOVERS 24
#define TS_NEAR 0.02 /* a stuck mover has something this close (skins are 1e-3) */
#define TS_PI 3.14159265358979323846

typedef struct ts_stats {
    long ticks, mover_ticks, turning_ticks, stuck_ticks, paths, turning_paths, free_checked;
    long unpinned, pinned, switched_off, beyond_clamp, pure_turns, sides;
} ts_stats;

static double ts_wrap(double a) {
    while (a > TS_PI)
        a -= 2 * TS_PI;
    while (a < -TS_PI)
        a += 2 * TS_PI;
    return a;
}

/* The largest distance of a point of the local shape from its origin. */
static double ts_radius(const wo_body *local) {
    if (local->circle) return local->r;
    double r = 0.0;
    for (int i = 0; i < local->n; i++)
        r = fmax(r, sqrt(local->x[i] * local->x[i] + local->y[i] * local->y[i]));
    return r;
}

/* Distance between two axis-aligned boxes (0 when they meet). */
static double ts_box_gap(const wo_body *a, const wo_body *b) {
    double dx = fmax(0.0, fmax(a->minx - b->maxx, b->minx - a->maxx));
    double dy = fmax(0.0, fmax(a->miny - b->maxy, b->miny - a->maxy));
    return sqrt(dx * dx + dy * dy);
}

/* The deepest the body (local shape s, circumradius rad) goes into st along the path of a tick:
 * from p0 at angle a0, moving by r and turning by turned together up to fraction ft, then on
 * along r at angle a0 + turned. Only where the disc around the path meets st's box is sampled,
 * at most `step` of travel apart (any point's). */
static double ts_path_depth(const geom_shape *s, double rad, vec2 p0, vec2 r, double a0,
                            double turned, double ft, const wo_body *st, double step) {
    const double lo[2] = {st->minx - rad - p0.x, st->miny - rad - p0.y};
    const double hi[2] = {st->maxx + rad - p0.x, st->maxy + rad - p0.y};
    const double d[2] = {r.x, r.y};
    double t0, t1;
    if (!wo_slab_times(lo, hi, d, true, &t0, &t1)) return 0.0;
    double travel = sqrt((double)r.x * r.x + (double)r.y * r.y) + rad * fabs(turned);
    int samples = 1 + (int)ceil((t1 - t0) * travel / step);
    double worst = 0.0;
    for (int i = 0; i <= samples; i++) {
        double t = t0 + (t1 - t0) * i / samples;
        double a = a0 + (ft > 0.0 ? fmin(t / ft, 1.0) : 1.0) * turned;
        wo_body at = wo_make_turned(s, p0.x + t * r.x, p0.y + t * r.y, a);
        worst = fmax(worst, wo_depth(&at, st));
    }
    return worst;
}

static geom_shape ts_static_shape(collide_rng *rng, float scale, bool *thin) {
    *thin = collide_rng_unit(rng) < 0.3f;
    if (*thin) /* a thin wall: thinner than most movers, long */
        return wt_box(collide_rng_range(rng, 0.02f, 0.06f), collide_rng_range(rng, 1.0f, 5.0f));
    return random_shape(rng, scale);
}

static geom_shape ts_mover_shape(collide_rng *rng) {
    if (collide_rng_unit(rng) < 0.2f) /* a thin bar: its ends sweep far when it turns */
        return wt_box(collide_rng_range(rng, 0.3f, 0.9f), collide_rng_range(rng, 0.03f, 0.08f));
    return random_shape(rng, 0.6f);
}

typedef struct ts_world {
    world *w;
    world_body_id statics[TS_MAX_STATICS], movers[TS_MAX_MOVERS];
    wo_body static_body[TS_MAX_STATICS];
    /* a thin wall's frame: centre, long axis u, normal n, half length and half thickness (0 for
     * other statics) */
    double wall_cx[TS_MAX_STATICS], wall_cy[TS_MAX_STATICS], wall_u[TS_MAX_STATICS][2],
        wall_n[TS_MAX_STATICS][2], wall_len[TS_MAX_STATICS], wall_half[TS_MAX_STATICS];
    bool still[TS_MAX_MOVERS]; /* stayed put last tick while it wanted to move or turn */
    int ns, nm;
} ts_world;

static bool ts_add_static(ts_world *tw, geom_shape s, vec2 p, float angle, bool thin) {
    if (tw->ns == TS_MAX_STATICS) return false;
    /* never onto a mover: a static spawned into one is outside what the tick promises */
    wo_body b = wo_make_turned(&s, p.x, p.y, angle);
    for (int i = 0; i < tw->nm; i++) {
        wo_body m;
        if (!wt_body(tw->w, tw->movers[i], &m) || !(wo_gap(&b, &m) > TS_NEAR)) return false;
    }
    world_body_id id = WORLD_NULL_BODY;
    if (world_spawn_turned(tw->w, WORLD_BODY_STATIC, &s, p, angle, 0, &id, NULL) != WORLD_OK)
        return false;
    tw->statics[tw->ns] = id;
    if (!wt_body(tw->w, id, &tw->static_body[tw->ns])) return false; /* (just spawned) */
    int k = tw->ns++;
    /* ts_static_shape's thin wall is thin along its local x, long along its local y */
    tw->wall_len[k] = thin ? s.u.half_extents.y : 0.0;
    tw->wall_half[k] = thin ? s.u.half_extents.x : 0.0;
    tw->wall_cx[k] = p.x, tw->wall_cy[k] = p.y;
    tw->wall_n[k][0] = cos(angle), tw->wall_n[k][1] = sin(angle);
    tw->wall_u[k][0] = -sin(angle), tw->wall_u[k][1] = cos(angle);
    return true;
}

static void ts_remove_static(ts_world *tw, int k) {
    CHECK(world_despawn(tw->w, tw->statics[k]) == WORLD_OK);
    tw->ns--;
    tw->statics[k] = tw->statics[tw->ns];
    tw->static_body[k] = tw->static_body[tw->ns];
    tw->wall_cx[k] = tw->wall_cx[tw->ns], tw->wall_cy[k] = tw->wall_cy[tw->ns];
    tw->wall_u[k][0] = tw->wall_u[tw->ns][0], tw->wall_u[k][1] = tw->wall_u[tw->ns][1];
    tw->wall_n[k][0] = tw->wall_n[tw->ns][0], tw->wall_n[k][1] = tw->wall_n[tw->ns][1];
    tw->wall_len[k] = tw->wall_len[tw->ns], tw->wall_half[k] = tw->wall_half[tw->ns];
}

/* A new intent for mover i: translation (none, slow, fast, the max; now and then into the
 * corner it is nearest, pressing it into walls) and turning (kept, 0, up to the clamp, beyond). */
static void ts_intent(ts_world *tw, int i, collide_rng *rng, uint32_t *seq, float max_w,
                      ts_stats *st) {
    vec2 pos = wt_pos(tw->w, tw->movers[i]);
    float u = collide_rng_unit(rng);
    float speed = u < 0.15f   ? 1e4f
                  : u < 0.35f ? collide_rng_range(rng, 100, 2000)
                  : u < 0.55f ? 0.0f
                              : collide_rng_range(rng, 0, 30);
    vec2 dir;
    if (collide_rng_unit(rng) < 0.25f) {
        dir = v2(pos.x >= 0 ? 0.7071f : -0.7071f, pos.y >= 0 ? 0.7071f : -0.7071f);
    } else {
        float a = collide_rng_range(rng, 0, 6.2831853f);
        dir = v2(cosf(a), sinf(a));
    }
    vec2 v = v2_scale(dir, speed);
    float k = collide_rng_unit(rng);
    world_status status;
    if (k < 0.2f) {
        status = world_set_intent(tw->w, tw->movers[i], v, ++*seq); /* the turn is kept */
    } else {
        float spin;
        if (k < 0.4f) {
            spin = 0.0f;
            st->switched_off++;
        } else if (k < 0.5f) {
            spin = (collide_rng_unit(rng) < 0.5f ? -1.0f : 1.0f) *
                   collide_rng_range(rng, max_w, 1000.0f);
            st->beyond_clamp++;
        } else {
            spin = collide_rng_range(rng, -max_w, max_w);
        }
        if (speed == 0.0f && spin != 0.0f) st->pure_turns++;
        status = world_set_intent_turning(tw->w, tw->movers[i], v, spin, ++*seq);
    }
    CHECK(status == WORLD_OK);
}

/* A mover before the step. */
typedef struct ts_before {
    vec2 p;
    float angle, spin; /* angle, and turning intent (clamped) */
    vec2 r;            /* translation intent of the tick */
    double reach;      /* how far its tick can take any of its points: |r| + |turn| x rad */
    double rad;        /* its circumradius */
    double clearance;  /* its gap to statics, bounds and (less their reach) movers, capped */
    geom_shape local;
    wo_body body;
    uint64_t overlapped[(TS_MAX_STATICS + 63) / 64];
} ts_before;

/* The body's extent along the unit axis (ax, ay) from the point (cx, cy). */
static void ts_project(const wo_body *b, double cx, double cy, double ax, double ay, double *lo,
                       double *hi) {
    if (b->circle) {
        double c = (b->cx - cx) * ax + (b->cy - cy) * ay;
        *lo = c - b->r, *hi = c + b->r;
        return;
    }
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < b->n; i++) {
        double d = (b->x[i] - cx) * ax + (b->y[i] - cy) * ay;
        *lo = fmin(*lo, d), *hi = fmax(*hi, d);
    }
}

/* Runs world `seed`, checking every tick; *hash: its state hashes chained over the ticks. */
static void ts_run(unsigned seed, ts_stats *st, uint64_t *hash) {
    *hash = 0;
    collide_rng rng = {seed * 2246822519u + 7u};
    float half = collide_rng_range(&rng, 12.0f, 30.0f);
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-half, -half), v2(half, half));
    cfg.max_bodies = 256;
    cfg.tick_rate_hz = seed % 3 == 0 ? 20.0f : 60.0f;
    cfg.max_angular_speed = seed % 5 == 2 ? 4.0f : 0.0f;
    ts_world tw = {0};
    tw.w = world_create(&cfg);
    CHECK(tw.w);
    const float max_w = world_get_config(tw.w)->max_angular_speed;
    const float dt = 1.0f / cfg.tick_rate_hz;
    /* 0: movers ignore each other; 1: they collide; 2: one mover; 3: switched every 50 ticks */
    const int mode = (int)(seed % 4);
    const int max_movers = mode == 2 ? 1 : TS_MAX_MOVERS;
    bool collide = mode != 0;
    world_set_mover_collisions(tw.w, collide);
    int want_statics = 15 + (int)(collide_rng_next(&rng) % 35);
    float scale = collide_rng_range(&rng, 0.5f, 3.0f);
    for (int tries = 0; tw.ns < want_statics && tries < 500; tries++) {
        bool thin;
        geom_shape s = ts_static_shape(&rng, scale, &thin);
        float angle = collide_rng_unit(&rng) < 0.5f ? 0.0f : collide_rng_range(&rng, -3.14f, 3.14f);
        vec2 p = v2(collide_rng_range(&rng, -half + 6, half - 6),
                    collide_rng_range(&rng, -half + 6, half - 6));
        ts_add_static(&tw, s, p, angle, thin);
    }
    uint32_t seq = 0;
    uint64_t chain = 0;
    static ts_before before[TS_MAX_MOVERS];
    for (int t = 0; t < TS_TICKS; t++) {
        if (mode == 3 && t % 50 == 49) world_set_mover_collisions(tw.w, collide = !collide);
        /* churn: movers at random angles into free space, and out */
        if (tw.nm < max_movers && collide_rng_unit(&rng) < 0.3f) {
            geom_shape s = ts_mover_shape(&rng);
            float angle =
                collide_rng_unit(&rng) < 0.7f ? collide_rng_range(&rng, -3.14f, 3.14f) : 0.0f;
            vec2 p;
            if (free_spot(tw.w, &s, angle, tw.statics, tw.ns, &rng, half, &p)) {
                world_body_id id = WORLD_NULL_BODY;
                CHECK(world_spawn_turned(tw.w, WORLD_BODY_MOVING, &s, p, angle, 7u, &id, NULL) ==
                      WORLD_OK);
                tw.still[tw.nm] = false;
                tw.movers[tw.nm++] = id;
            }
        }
        if (tw.nm > 0 && collide_rng_unit(&rng) < (mode == 2 ? 0.01f : 0.04f)) {
            int k = (int)(collide_rng_next(&rng) % (uint32_t)tw.nm);
            CHECK(world_despawn(tw.w, tw.movers[k]) == WORLD_OK);
            tw.nm--;
            tw.movers[k] = tw.movers[tw.nm];
            tw.still[k] = tw.still[tw.nm];
        }
        for (int i = 0; i < tw.nm; i++)
            if (collide_rng_unit(&rng) < (tw.still[i] ? 0.25f : 0.1f))
                ts_intent(&tw, i, &rng, &seq, max_w, st);
        /* statics near a stuck mover: the one pinning it goes, or a new one comes beside it */
        for (int i = 0; i < tw.nm; i++) {
            if (!tw.still[i] || collide_rng_unit(&rng) > 0.15f) continue;
            wo_body m;
            CHECK(wt_body(tw.w, tw.movers[i], &m));
            int nearest = -1;
            double best = INFINITY;
            for (int k = 0; k < tw.ns; k++) {
                double g =
                    ts_box_gap(&m, &tw.static_body[k]) > 0.1 ? 1.0 : wo_gap(&m, &tw.static_body[k]);
                if (g < best) best = g, nearest = k;
            }
            if (nearest >= 0 && best <= TS_NEAR && collide_rng_unit(&rng) < 0.6f) {
                ts_remove_static(&tw, nearest);
                st->unpinned++;
            } else {
                bool thin;
                geom_shape s = ts_static_shape(&rng, 0.3f, &thin);
                float a = collide_rng_range(&rng, 0, 6.2831853f);
                vec2 c = v2_scale(
                    v2_add(v2((float)m.minx, (float)m.miny), v2((float)m.maxx, (float)m.maxy)),
                    0.5f);
                float away = 0.5f * (float)fmax(m.maxx - m.minx, m.maxy - m.miny) +
                             collide_rng_range(&rng, 0.05f, 0.8f);
                vec2 p = v2_add(c, v2(away * cosf(a), away * sinf(a)));
                if (ts_add_static(&tw, s, p, collide_rng_range(&rng, -3.14f, 3.14f), thin))
                    st->pinned++;
            }
        }
        /* before the step: where each mover is, what it wants, how clear its way is */
        aabb bounds = cfg.bounds;
        for (int i = 0; i < tw.nm; i++) {
            ts_before *b = &before[i];
            world_body_row info;
            vec2 held;
            CHECK(world_body_get(tw.w, tw.movers[i], &info) &&
                  world_body_intent(tw.w, tw.movers[i], &held, &b->spin));
            CHECK(world_body_local_shape(tw.w, tw.movers[i], &b->local, NULL));
            b->p = info.position;
            b->angle = info.angle;
            b->r = v2_scale(held, dt);
            CHECK(wt_body(tw.w, tw.movers[i], &b->body));
            wo_body local = wo_make_at(&b->local, 0.0, 0.0);
            b->rad = ts_radius(&local);
            b->reach = v2_len(b->r) + b->rad * fabs((double)b->spin * dt);
        }
        for (int i = 0; i < tw.nm; i++) {
            ts_before *b = &before[i];
            double far = b->reach + 0.2;
            double c = fmin(far, wo_bounds_gap(&b->body, bounds));
            memset(b->overlapped, 0, sizeof b->overlapped);
            for (int k = 0; k < tw.ns; k++) {
                if (ts_box_gap(&b->body, &tw.static_body[k]) >= far) continue;
                double g = wo_gap(&b->body, &tw.static_body[k]);
                if (g < 0.0) b->overlapped[k / 64] |= 1ull << (k % 64);
                c = fmin(c, g);
            }
            if (collide)
                for (int j = 0; j < tw.nm; j++) {
                    if (j == i ||
                        ts_box_gap(&b->body, &before[j].body) >= far + before[j].reach + 0.5)
                        continue;
                    /* the other moves too, and pushes may carry it a little further */
                    c = fmin(c, wo_gap(&b->body, &before[j].body) - before[j].reach - 0.5);
                }
            b->clearance = c;
        }
        world_stats stats_before;
        world_get_stats(tw.w, &stats_before);
        const char *broken = world_validate(tw.w);
        CHECK_MSG(!broken, "seed %u tick %d, before the step: %s", seed, t, broken);
        world_step(tw.w);
        broken = world_validate(tw.w);
        CHECK_MSG(!broken, "seed %u tick %d: %s", seed, t, broken);
        st->ticks++;
        st->mover_ticks += tw.nm;
        for (int i = 0; i < tw.nm; i++) {
            const ts_before *b = &before[i];
            world_body_row info;
            CHECK(world_body_get(tw.w, tw.movers[i], &info));
            wo_body now;
            CHECK(wt_body(tw.w, tw.movers[i], &now));
            double da = (double)b->spin * dt;
            double turned = ts_wrap((double)info.angle - b->angle);
            vec2 d = v2_sub(info.position, b->p);
            bool moved_all = v2_len(v2_sub(d, b->r)) <= 1e-4f * v2_len(b->r) + 1e-5f;
            bool put =
                info.position.x == b->p.x && info.position.y == b->p.y && info.angle == b->angle;
            if (b->spin != 0.0f) st->turning_ticks++;
            /* a thin wall's side is kept by every vertex: a body wholly on one side, too far
             * inside the wall's length to get round an end in the tick (its reach, and pushes
             * when movers collide), ends with no vertex past the near face beyond the skin */
            double bound = b->reach + (collide ? 2.0 : 0.05);
            for (int k = 0; k < tw.ns; k++) {
                if (tw.wall_len[k] == 0.0) continue;
                double nlo, nhi, ulo, uhi;
                ts_project(&b->body, tw.wall_cx[k], tw.wall_cy[k], tw.wall_u[k][0], tw.wall_u[k][1],
                           &ulo, &uhi);
                if (!(ulo - bound > -tw.wall_len[k] && uhi + bound < tw.wall_len[k])) continue;
                ts_project(&b->body, tw.wall_cx[k], tw.wall_cy[k], tw.wall_n[k][0], tw.wall_n[k][1],
                           &nlo, &nhi);
                double h = tw.wall_half[k];
                int side = nlo >= h - 1e-4 ? 1 : nhi <= -h + 1e-4 ? -1 : 0;
                if (side == 0 || (side > 0 ? nlo : -nhi) - h > bound + 0.5) continue;
                ts_project(&now, tw.wall_cx[k], tw.wall_cy[k], tw.wall_n[k][0], tw.wall_n[k][1],
                           &nlo, &nhi);
                st->sides++;
                CHECK_MSG(side > 0 ? nlo >= h - GEOM_SKIN - 1e-4 : nhi <= -h + GEOM_SKIN + 1e-4,
                          "seed %u tick %d: mover %u crossed thin wall %u (side %d, now %g..%g "
                          "of +-%g)",
                          seed, t, tw.movers[i], tw.statics[k], side, nlo, nhi, h);
            }
            /* I1 and I2 by the oracle */
            for (int k = 0; k < tw.ns; k++) {
                if (ts_box_gap(&now, &tw.static_body[k]) > 0.0) continue;
                double depth = wo_depth(&now, &tw.static_body[k]);
                CHECK_MSG(depth <= GEOM_SKIN,
                          "seed %u tick %d: mover %u (angle %g -> %g, spin %g) in static %u by %g",
                          seed, t, tw.movers[i], (double)b->angle, (double)info.angle,
                          (double)b->spin, tw.statics[k], depth);
            }
            CHECK_MSG(wo_bounds_gap(&now, bounds) >= -1e-4, "seed %u tick %d: mover %u outside",
                      seed, t, tw.movers[i]);
            /* tunnelling: the path is known when it made its whole translation (turning with it
             * up to the angle reached) or turned in place */
            bool in_place = b->r.x == 0.0f && b->r.y == 0.0f && put == false &&
                            info.position.x == b->p.x && info.position.y == b->p.y;
            if (moved_all || in_place) {
                double ft = da != 0.0 ? fmin(fmax(turned / da, 0.0), 1.0) : 0.0;
                /* the angle's float rounding misplaces where the turn stopped along r */
                double slack = da != 0.0 ? 1e-6 * v2_len(b->r) / fabs(da) : 0.0;
                if (slack <= 0.01) {
                    st->paths++;
                    if (turned != 0.0) st->turning_paths++;
                    for (int k = 0; k < tw.ns; k++) {
                        if (b->overlapped[k / 64] >> (k % 64) & 1u) continue;
                        double depth =
                            ts_path_depth(&b->local, b->rad, b->p, b->r, b->angle, turned, ft,
                                          &tw.static_body[k], SOAK_CHORD_STEP);
                        CHECK_MSG(depth <= GEOM_SKIN + slack,
                                  "seed %u tick %d: mover %u's path (%g,%g)->(%g,%g), angle %g "
                                  "turned %g of %g, crosses static %u by %g",
                                  seed, t, tw.movers[i], (double)b->p.x, (double)b->p.y,
                                  (double)info.position.x, (double)info.position.y,
                                  (double)b->angle, turned, da, tw.statics[k], depth);
                    }
                }
            }
            /* free motion is exact; staying put needs something near */
            if (b->clearance > b->reach + 0.05) {
                st->free_checked++;
                CHECK_MSG(moved_all && fabs(turned - da) <= 1e-5 + 1e-5 * fabs(da),
                          "seed %u tick %d: mover %u, clear by %g, moved (%g,%g) of (%g,%g) and "
                          "turned %g of %g",
                          seed, t, tw.movers[i], b->clearance, (double)d.x, (double)d.y,
                          (double)b->r.x, (double)b->r.y, turned, da);
            }
            bool wants = v2_len(b->r) > 1e-3f || b->rad * fabs(da) > 1e-3;
            tw.still[i] = put && wants;
            if (tw.still[i]) {
                st->stuck_ticks++;
                CHECK_MSG(b->clearance <= TS_NEAR,
                          "seed %u tick %d: mover %u stays put (wants (%g,%g), turn %g) with "
                          "nothing within %g",
                          seed, t, tw.movers[i], (double)b->r.x, (double)b->r.y, da, b->clearance);
            }
        }
        if (collide) {
            world_body_id ja = 0, jb = 0;
            bool bogus;
            float unexcused = wt_unexcused_mover_depth(tw.w, tw.movers, tw.nm, SOAK_I3_TOLERANCE,
                                                       &ja, &jb, &bogus);
            CHECK_MSG(unexcused == 0.0f,
                      "seed %u tick %d: movers %u and %u overlap by %g, not reported jammed", seed,
                      t, ja, jb, (double)unexcused);
            CHECK_MSG(!bogus,
                      "seed %u tick %d: a reported jam that does not overlap, or one named twice",
                      seed, t);
        }
        chain = chain * 0x100000001b3ull ^ world_state_hash(tw.w);
    }
    world_destroy(tw.w);
    *hash = chain;
}

static void test_soak_turning_worlds(void) {
    ts_stats st = {0};
    uint64_t hash[TS_WORLDS];
    for (unsigned seed = 1; seed <= TS_WORLDS; seed++)
        ts_run(seed, &st, &hash[seed - 1]);
    printf("turning soak: %ld ticks, %ld mover ticks, %ld turning, %ld stuck, %ld known paths "
           "sampled (%ld turning), %ld free moves checked, %ld thin-wall sides; intents: %ld "
           "turning 0, %ld beyond the "
           "clamp, %ld pure turns; statics by stuck movers: %ld pins despawned, %ld spawned\n",
           st.ticks, st.mover_ticks, st.turning_ticks, st.stuck_ticks, st.paths, st.turning_paths,
           st.free_checked, st.sides, st.switched_off, st.beyond_clamp, st.pure_turns, st.unpinned,
           st.pinned);
    /* I6: the same seed again gives the same states, tick by tick; another seed others */
    for (unsigned seed = 1; seed <= 4; seed++) {
        ts_stats again = {0};
        uint64_t h;
        ts_run(seed, &again, &h);
        CHECK_MSG(h == hash[seed - 1], "seed %u: another run, other states", seed);
    }
    CHECK(hash[0] != hash[1]);
    /* the checks ran on what they are meant for */
    CHECK(st.turning_ticks > st.mover_ticks / 3 && st.stuck_ticks > 500);
    CHECK(st.turning_paths > 5000 && st.free_checked > 5000);
    CHECK(st.unpinned > 50 && st.pinned > 50 && st.sides > 300);
}

/* Worlds that longer hunts (2,400 seeds) caught failing, kept here by seed. 51, 1081 and 2059: a
 * mover pushed twice in one pass of the discrete pass was noted in the grid at its first push
 * only, so later passes and the jam report missed the pairs it still overlapped (two circles left
 * 0.85 apart, unreported); 19: a mover's path crossing a static in the same world. Each fails
 * without world_separate noting a body at every push. */
static void test_soak_turning_found_seeds(void) {
    static const unsigned seeds[] = {19, 51, 1081, 2059};
    ts_stats st = {0};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        uint64_t hash;
        ts_run(seeds[k], &st, &hash);
    }
    CHECK(st.ticks == 4 * TS_TICKS);
}

TEST_MAIN(TEST(test_soak_random_worlds), TEST(test_soak_turning_worlds),
          TEST(test_soak_turning_found_seeds))

/* geom: randomized property tests against the brute-force oracles of oracle.h, for every ordered
 * pair of shape kinds and every query. Fixed seeds: a failure prints the pair and case number,
 * and rerunning reproduces it. Set GEOM_PROPS_SCALE=N to run N times the cases. */
#include "geom.h"
#include "harness.h"
#include "oracle.h"

#include <float.h>

static const geom_shape_kind kinds[3] = {GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON, GEOM_SHAPE_CIRCLE};
static const char *kind_names[4] = {"?", "box", "polygon", "circle"};

/* Cases per ordered pair and per query. Thousands per pair kind (each kind pair is also run in
 * both argument orders, and every case checks the mirrored query). */
static int cases_per_pair(void) {
    const char *env = getenv("GEOM_PROPS_SCALE");
    int scale = env ? atoi(env) : 1;
    return 2000 * (scale > 0 ? scale : 1);
}

/* Distances here are in units of shapes 0.2..2 across, positions within ~10 of the origin. */
#define TOL 2e-4

static dvec to_d(vec2 a) { return dv(a.x, a.y); }
static dvec at_time(vec2 p, vec2 d, double t) { return dv(p.x + t * d.x, p.y + t * d.y); }
static bool unit_length(vec2 n) {
    return fabs(sqrt((double)n.x * n.x + (double)n.y * n.y) - 1) < 1e-5;
}

static geom_shape random_shape(collide_rng *rng, geom_shape_kind kind) {
    /* Polygons of 3..12 vertices, 8 most often (the benchmark's size). */
    int n = (collide_rng_next(rng) & 1) ? 8 : 3 + (int)(collide_rng_next(rng) % 10);
    return oracle_random_shape(rng, kind, n);
}

static vec2 random_vec(collide_rng *rng, float extent) {
    return v2(collide_rng_range(rng, -extent, extent), collide_rng_range(rng, -extent, extent));
}

/* A translation far from the origin: 1e3..1e4 in each coordinate, either sign. */
static vec2 far_translation(collide_rng *rng) {
    float x = collide_rng_range(rng, 1e3f, 1e4f), y = collide_rng_range(rng, 1e3f, 1e4f);
    return v2((collide_rng_next(rng) & 1) ? x : -x, (collide_rng_next(rng) & 1) ? y : -y);
}

/* ---- Overlap + MTV ----------------------------------------------------------------------------
 */

static void check_overlap_pair(geom_shape_kind ka, geom_shape_kind kb, unsigned seed) {
    collide_rng rng = {seed};
    int n = cases_per_pair(), hits = 0;
    for (int i = 0; i < n; i++) {
        geom_shape a = random_shape(&rng, ka), b = random_shape(&rng, kb);
        float reach = oracle_bound_radius(&a) + oracle_bound_radius(&b);
        vec2 pa = random_vec(&rng, 5);
        /* Offsets in a random direction up to 1.4 bounding reaches: about half the cases
         * overlap, for every kind pair. */
        float ang = collide_rng_range(&rng, 0, 6.2831853f);
        float len = collide_rng_range(&rng, 0, 1.4f * reach);
        vec2 pb = v2_add(pa, v2(len * cosf(ang), len * sinf(ang)));
        geom_contact c;
        bool hit = geom_overlap(&a, pa, &b, pb, &c);
        dvec best;
        double g = oracle_gap(&a, to_d(pa), &b, to_d(pb), &best);
        if (fabs(g) > TOL)
            CHECK_MSG(hit == (g < 0), "%s-%s case %d: hit %d, oracle gap %g", kind_names[ka],
                      kind_names[kb], i, hit, g);
        if (hit) {
            hits++;
            CHECK_MSG(unit_length(c.normal) && c.depth > 0, "case %d", i);
            /* The depth is the least penetration over every candidate axis... */
            CHECK_MSG(fabs(c.depth + g) <= TOL, "%s-%s case %d: depth %g, oracle %g",
                      kind_names[ka], kind_names[kb], i, c.depth, -g);
            /* ...and moving B by the MTV leaves the two touching. */
            vec2 moved = v2_mul_add(pb, c.depth, c.normal);
            double after = oracle_gap(&a, to_d(pa), &b, to_d(moved), NULL);
            CHECK_MSG(fabs(after) <= TOL, "%s-%s case %d: gap %g after the MTV", kind_names[ka],
                      kind_names[kb], i, after);
        }
        /* Mirror: same answer, opposite normal (or an equally deep axis on a tie). */
        geom_contact m;
        bool mhit = geom_overlap(&b, pb, &a, pa, &m);
        CHECK_MSG(mhit == hit, "%s-%s case %d: mirror disagrees", kind_names[ka], kind_names[kb],
                  i);
        if (hit) {
            CHECK_NEAR(m.depth, c.depth, 1e-5);
            if (fabs(m.normal.x + c.normal.x) > 1e-5 || fabs(m.normal.y + c.normal.y) > 1e-5) {
                vec2 back = v2_mul_add(pa, m.depth, m.normal);
                double after = oracle_gap(&b, to_d(pb), &a, to_d(back), NULL);
                CHECK_MSG(fabs(after) <= TOL, "%s-%s case %d: mirrored normal not a tie",
                          kind_names[ka], kind_names[kb], i);
            }
        }
        /* Far from the origin: the same relative placement gives the same answer. */
        vec2 t = far_translation(&rng);
        vec2 fa = v2_add(pa, t), fb = v2_add(pb, t);
        geom_contact f, rel;
        bool fhit = geom_overlap(&a, fa, &b, fb, &f);
        bool rhit = geom_overlap(&a, v2(0, 0), &b, v2_sub(fb, fa), &rel);
        CHECK(fhit == rhit);
        if (fhit)
            CHECK(f.depth == rel.depth && f.normal.x == rel.normal.x && f.normal.y == rel.normal.y);
        /* And against the original placement, within the rounding of the translation. */
        double tol_far = 4 * 1e4 * FLT_EPSILON;
        if (fabs(g) > 4 * tol_far) {
            CHECK_MSG(fhit == hit, "%s-%s case %d: far translation changed the answer",
                      kind_names[ka], kind_names[kb], i);
            if (hit) CHECK_NEAR(f.depth, c.depth, tol_far);
        }
    }
    /* The generator must exercise both outcomes. */
    CHECK_MSG(hits > n / 5 && hits < n * 4 / 5, "%s-%s: %d of %d overlap", kind_names[ka],
              kind_names[kb], hits, n);
}

static void test_overlap_every_pair(void) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int before = harness_failed_checks;
            check_overlap_pair(kinds[i], kinds[j], 1000u + 17u * (unsigned)(i * 3 + j));
            if (harness_failed_checks != before) return;
        }
}

/* ---- Sweep --------------------------------------------------------------------------------- */

#define SUBSTEPS 160

static void check_sweep_pair(geom_shape_kind ka, geom_shape_kind kb, unsigned seed) {
    collide_rng rng = {seed};
    int n = cases_per_pair(), hits = 0, separated = 0, started = 0;
    for (int i = 0; i < n; i++) {
        geom_shape a = random_shape(&rng, ka), b = random_shape(&rng, kb);
        float reach = oracle_bound_radius(&a) + oracle_bound_radius(&b);
        vec2 pa = random_vec(&rng, 5);
        /* A quarter of the cases start close (many overlapping), the rest up to 2.5 reaches. */
        vec2 off = random_vec(&rng, reach * ((collide_rng_next(&rng) & 3) ? 2.5f : 0.8f));
        vec2 pb = v2_add(pa, off);
        /* Aim A roughly at B, with some scatter and a random reach; B moves half the time. */
        vec2 da =
            v2_add(v2_scale(off, collide_rng_range(&rng, 0.0f, 2.0f)), random_vec(&rng, 1.5f));
        vec2 db = (collide_rng_next(&rng) & 1) ? random_vec(&rng, 2.0f) : v2(0, 0);
        vec2 d = v2_sub(da, db);
        geom_toi hit;
        bool got = geom_sweep(&a, pa, da, &b, pb, db, &hit);
        double g0 = oracle_gap(&a, to_d(pa), &b, to_d(pb), NULL);
        if (got) {
            hits++;
            CHECK_MSG(hit.t >= 0 && hit.t <= 1 && unit_length(hit.normal), "case %d", i);
            CHECK_MSG(v2_dot(hit.normal, d) > 0, "%s-%s case %d: normal does not oppose the motion",
                      kind_names[ka], kind_names[kb], i);
        }
        if (g0 < -1e-3) {
            /* Overlapping at the start: t = 0 exactly when the motion closes along the MTV. */
            started++;
            geom_contact c;
            CHECK(geom_overlap(&a, pa, &b, pb, &c));
            double closing = v2_dot(d, c.normal);
            if (fabs(closing) > 1e-4)
                CHECK_MSG(got == (closing > 0) && (!got || hit.t == 0.0f),
                          "%s-%s case %d: start overlap, closing %g, hit %d", kind_names[ka],
                          kind_names[kb], i, closing, got);
        } else if (g0 > 1e-3) {
            /* Separated at the start: compare with fine sub-stepping. */
            separated++;
            double t_hit = got ? hit.t : 2.0;
            double first_overlap = 2.0;
            for (int k = 0; k <= SUBSTEPS; k++) {
                double t = (double)k / SUBSTEPS;
                double g = oracle_gap(&a, at_time(pa, da, t), &b, at_time(pb, db, t), NULL);
                if (g < -TOL) {
                    first_overlap = t;
                    break;
                }
            }
            CHECK_MSG(first_overlap >= t_hit, "%s-%s case %d: overlap at %g before the hit at %g",
                      kind_names[ka], kind_names[kb], i, first_overlap, t_hit);
            if (got) {
                dvec qa = at_time(pa, da, hit.t), qb = at_time(pb, db, hit.t);
                double g = oracle_gap(&a, qa, &b, qb, NULL);
                CHECK_MSG(fabs(g) <= TOL, "%s-%s case %d: gap %g at the hit t=%g", kind_names[ka],
                          kind_names[kb], i, g, hit.t);
                /* The reported normal is a touching axis at the impact. */
                double gn = oracle_gap_dir(&a, qa, &b, qb, to_d(hit.normal));
                CHECK_MSG(fabs(gn) <= TOL,
                          "%s-%s case %d: gap %g along the normal (%.9g %.9g) at t=%.9g; pa %.9g "
                          "%.9g da %.9g %.9g pb %.9g %.9g db %.9g %.9g; a %.9g %.9g b %.9g %.9g",
                          kind_names[ka], kind_names[kb], i, gn, hit.normal.x, hit.normal.y, hit.t,
                          pa.x, pa.y, da.x, da.y, pb.x, pb.y, db.x, db.y, a.u.half_extents.x,
                          a.u.half_extents.y, b.u.half_extents.x, b.u.half_extents.y);
            }
        }
        /* Mirror: B swept against A is the same event. */
        geom_toi m;
        bool mgot = geom_sweep(&b, pb, db, &a, pa, da, &m);
        CHECK_MSG(mgot == got, "%s-%s case %d: mirror disagrees", kind_names[ka], kind_names[kb],
                  i);
        if (got) {
            CHECK_NEAR(m.t, hit.t, 1e-6);
            if (fabs(m.normal.x + hit.normal.x) > 1e-5 || fabs(m.normal.y + hit.normal.y) > 1e-5) {
                dvec qa = at_time(pa, da, hit.t), qb = at_time(pb, db, hit.t);
                double gn = oracle_gap_dir(&a, qa, &b, qb, dv(-m.normal.x, -m.normal.y));
                CHECK_MSG(fabs(gn) <= TOL, "%s-%s case %d: mirrored normal not a tie",
                          kind_names[ka], kind_names[kb], i);
            }
        }
        /* Far from the origin: identical to the same relative placement. */
        vec2 t = far_translation(&rng);
        vec2 fa = v2_add(pa, t), fb = v2_add(pb, t);
        geom_toi f, rel;
        bool fgot = geom_sweep(&a, fa, da, &b, fb, db, &f);
        bool rgot = geom_sweep(&a, v2(0, 0), da, &b, v2_sub(fb, fa), db, &rel);
        CHECK(fgot == rgot);
        if (fgot) CHECK(f.t == rel.t && f.normal.x == rel.normal.x && f.normal.y == rel.normal.y);
        if (fgot && got && g0 > 1e-3) {
            /* Within the rounding of the translation, converted to time by the closing speed. */
            double speed = fmax(fabs(v2_dot(d, hit.normal)), 1e-3);
            CHECK_NEAR(f.t, hit.t, 8 * 1e4 * FLT_EPSILON / speed + 1e-6);
        }
    }
    CHECK_MSG(hits > n / 5 && hits < n * 4 / 5 && separated > n / 4 && started > n / 20,
              "%s-%s: %d hits, %d separated, %d overlapping of %d", kind_names[ka], kind_names[kb],
              hits, separated, started, n);
}

static void test_sweep_every_pair(void) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int before = harness_failed_checks;
            check_sweep_pair(kinds[i], kinds[j], 5000u + 31u * (unsigned)(i * 3 + j));
            if (harness_failed_checks != before) return;
        }
}

/* The same box as a 4-vertex polygon: its queries run through the general separating-axis code
 * (geom_pair.c), while box-box pairs take the specialised slab code (geom_box.h). */
static geom_shape box_as_polygon(vec2 h) {
    vec2 v[4] = {{-h.x, -h.y}, {h.x, -h.y}, {h.x, h.y}, {-h.x, h.y}};
    geom_shape s;
    if (geom_make_polygon(v, 4, &s)) abort();
    return s;
}

/* Boxes exactly on a lattice, so ties, exact touching and zero speeds along an axis are common:
 * the specialised box-box code must agree with the general polygon code, the fast path with the
 * general entry point bit for bit, and every answer must be finite. */
static void test_box_box_lattice(void) {
    collide_rng rng = {777};
    int ties = 0;
    for (int i = 0; i < 20000; i++) {
        vec2 ha = v2((float)(1 + collide_rng_next(&rng) % 4) * 0.25f,
                     (float)(1 + collide_rng_next(&rng) % 4) * 0.25f);
        vec2 hb = v2((float)(1 + collide_rng_next(&rng) % 4) * 0.25f,
                     (float)(1 + collide_rng_next(&rng) % 4) * 0.25f);
        vec2 pa = v2((float)(collide_rng_next(&rng) % 9) * 0.25f,
                     (float)(collide_rng_next(&rng) % 9) * 0.25f);
        vec2 pb = v2((float)(collide_rng_next(&rng) % 9) * 0.25f,
                     (float)(collide_rng_next(&rng) % 9) * 0.25f);
        vec2 da = v2((float)((int)(collide_rng_next(&rng) % 9) - 4) * 0.5f,
                     (float)((int)(collide_rng_next(&rng) % 9) - 4) * 0.5f);
        geom_shape a, b;
        CHECK(geom_make_box(ha, &a) == GEOM_OK && geom_make_box(hb, &b) == GEOM_OK);
        geom_shape pa_poly = box_as_polygon(ha), pb_poly = box_as_polygon(hb);
        geom_contact c1, c2, c3;
        bool o1 = geom_overlap(&a, pa, &b, pb, &c1), o2 = geom_box_box_overlap(ha, pa, hb, pb, &c2);
        bool o3 = geom_overlap(&pa_poly, pa, &pb_poly, pb, &c3);
        CHECK(o1 == o2 && o1 == o3);
        if (o1) {
            CHECK(!memcmp(&c1, &c2, sizeof c1) && c1.depth > 0 && unit_length(c1.normal));
            CHECK(c1.depth == c3.depth);
        }
        geom_toi t1, t2, t3;
        bool s1 = geom_sweep(&a, pa, da, &b, pb, v2(0, 0), &t1);
        bool s2 = geom_box_box_sweep(ha, pa, da, hb, pb, v2(0, 0), &t2);
        bool s3 = geom_sweep(&pa_poly, pa, da, &pb_poly, pb, v2(0, 0), &t3);
        CHECK(s1 == s2);
        /* Overlapping shapes with two equally deep axes (here: coincident centres) may pick
         * different MTV axes in the two codes, and the start rule follows the MTV axis. */
        bool tie = o1 && (c1.normal.x != c3.normal.x || c1.normal.y != c3.normal.y);
        ties += tie;
        if (tie) continue;
        CHECK_MSG(s1 == s3,
                  "case %d: box %d polygon %d; ha %g %g pa %g %g hb %g %g pb %g %g da %g %g", i, s1,
                  s3, ha.x, ha.y, pa.x, pa.y, hb.x, hb.y, pb.x, pb.y, da.x, da.y);
        if (s1) {
            CHECK(!memcmp(&t1, &t2, sizeof t1) && t1.t >= 0 && t1.t <= 1 && unit_length(t1.normal));
            CHECK(t1.t == t3.t);
            CHECK(v2_dot(t1.normal, da) > 0 && v2_dot(t3.normal, da) > 0);
        }
        /* Exactly touching on the lattice never counts as overlap. */
        double g = oracle_gap(&a, to_d(pa), &b, to_d(pb), NULL);
        CHECK(o1 == (g < 0));
    }
    printf("     lattice: %d of 20000 cases skipped as MTV ties\n", ties);
    CHECK(ties < 2000);
}

/* ---- Ray cast, containment, AABB ------------------------------------------------------------ */

#define RAY_SAMPLES 256

static void check_ray_kind(geom_shape_kind kind, unsigned seed) {
    collide_rng rng = {seed};
    int n = 3 * cases_per_pair(), hits = 0;
    for (int i = 0; i < n; i++) {
        geom_shape s = random_shape(&rng, kind);
        vec2 pos = random_vec(&rng, 5);
        vec2 origin = v2_add(pos, random_vec(&rng, 5));
        vec2 disp = v2_add(v2_scale(v2_sub(pos, origin), collide_rng_range(&rng, 0, 2)),
                           random_vec(&rng, 1.5f));
        double sd0 = oracle_point_sd(&s, to_d(pos), to_d(origin));
        if (fabs(sd0) < 1e-4) continue; /* starting on the boundary: measure zero, skipped */
        geom_ray_hit h;
        bool got = geom_ray_cast(&s, pos, origin, disp, &h);
        if (sd0 < 0) {
            CHECK_MSG(!got, "%s case %d: hit from inside", kind_names[kind], i);
            continue;
        }
        double first_inside = 2.0, deepest = 0.0;
        for (int k = 0; k <= RAY_SAMPLES; k++) {
            double t = (double)k / RAY_SAMPLES;
            double sd = oracle_point_sd(&s, to_d(pos), at_time(origin, disp, t));
            if (sd < -TOL && first_inside > 1.0) first_inside = t;
            deepest = fmin(deepest, sd);
        }
        double t_hit = got ? h.t : 2.0;
        CHECK_MSG(first_inside >= t_hit, "%s case %d: inside at %g before the hit at %g",
                  kind_names[kind], i, first_inside, t_hit);
        if (got) {
            hits++;
            dvec p = at_time(origin, disp, h.t);
            CHECK_MSG(h.t >= 0 && h.t <= 1 && unit_length(h.normal), "case %d", i);
            CHECK_MSG(fabs(oracle_point_sd(&s, to_d(pos), p)) <= TOL, "%s case %d: not on boundary",
                      kind_names[kind], i);
            /* The normal supports the shape at the hit point and faces the ray. */
            double sup = oracle_support(&s, to_d(pos), to_d(h.normal));
            CHECK_MSG(fabs(sup - dv_dot(to_d(h.normal), p)) <= TOL, "%s case %d: normal",
                      kind_names[kind], i);
            CHECK(v2_dot(h.normal, disp) <= 0);
        }
        /* Far from the origin, within the rounding of the translation. */
        vec2 t = far_translation(&rng);
        geom_ray_hit f;
        bool fgot = geom_ray_cast(&s, v2_add(pos, t), v2_add(origin, t), disp, &f);
        if (deepest < -0.01) CHECK(fgot);
        if (fgot && got) {
            double speed = fmax(fabs(v2_dot(disp, h.normal)), 1e-3);
            CHECK_NEAR(f.t, h.t, 8 * 1e4 * FLT_EPSILON / speed + 1e-6);
        }
    }
    CHECK_MSG(hits > n / 5 && hits < n * 4 / 5, "%s: %d ray hits of %d", kind_names[kind], hits, n);
}

static void test_ray_cast_every_kind(void) {
    for (int i = 0; i < 3; i++) {
        int before = harness_failed_checks;
        check_ray_kind(kinds[i], 9000u + (unsigned)i);
        if (harness_failed_checks != before) return;
    }
}

static void test_contains_and_aabb_every_kind(void) {
    collide_rng rng = {4242};
    for (int kind = 0; kind < 3; kind++)
        for (int i = 0; i < cases_per_pair(); i++) {
            geom_shape s = random_shape(&rng, kinds[kind]);
            vec2 pos = random_vec(&rng, 5);
            aabb box = geom_shape_aabb(&s, pos);
            /* The AABB is the support in the four axis directions. */
            CHECK_NEAR(box.max.x, oracle_support(&s, to_d(pos), dv(1, 0)), 1e-5);
            CHECK_NEAR(box.max.y, oracle_support(&s, to_d(pos), dv(0, 1)), 1e-5);
            CHECK_NEAR(box.min.x, -oracle_support(&s, to_d(pos), dv(-1, 0)), 1e-5);
            CHECK_NEAR(box.min.y, -oracle_support(&s, to_d(pos), dv(0, -1)), 1e-5);
            for (int k = 0; k < 16; k++) {
                vec2 p = v2(collide_rng_range(&rng, box.min.x - 0.5f, box.max.x + 0.5f),
                            collide_rng_range(&rng, box.min.y - 0.5f, box.max.y + 0.5f));
                double sd = oracle_point_sd(&s, to_d(pos), to_d(p));
                bool in = geom_shape_contains_point(&s, pos, p);
                if (fabs(sd) > 1e-5)
                    CHECK_MSG(in == (sd < 0), "%s case %d point %d: sd %g", kind_names[kinds[kind]],
                              i, k, sd);
                if (in)
                    CHECK(p.x >= box.min.x && p.x <= box.max.x && p.y >= box.min.y &&
                          p.y <= box.max.y);
            }
        }
}

/* Determinism: the same inputs give bit-identical outputs (hash of many results). */
static void test_deterministic(void) {
    unsigned hashes[2];
    for (int run = 0; run < 2; run++) {
        collide_rng rng = {99};
        unsigned hsh = 2166136261u;
        for (int i = 0; i < 3000; i++) {
            geom_shape a = random_shape(&rng, kinds[i % 3]),
                       b = random_shape(&rng, kinds[(i / 3) % 3]);
            vec2 pa = random_vec(&rng, 3), pb = random_vec(&rng, 3), da = random_vec(&rng, 4);
            geom_toi t = {0, {0, 0}};
            geom_contact c = {{0, 0}, 0};
            bool s = geom_sweep(&a, pa, da, &b, pb, v2(0, 0), &t);
            bool o = geom_overlap(&a, pa, &b, pb, &c);
            unsigned char bytes[sizeof t + sizeof c + 2];
            memcpy(bytes, &t, sizeof t);
            memcpy(bytes + sizeof t, &c, sizeof c);
            bytes[sizeof t + sizeof c] = (unsigned char)s;
            bytes[sizeof t + sizeof c + 1] = (unsigned char)o;
            for (size_t k = 0; k < sizeof bytes; k++)
                hsh = (hsh ^ bytes[k]) * 16777619u;
        }
        hashes[run] = hsh;
    }
    CHECK(hashes[0] == hashes[1]);
}

/* ---- Prepared polygon sweep against boxes ------------------------------------------------
 * geom_poly_sweep_box (a turned box's slide among box tiles: one polygon, one motion, many
 * boxes): every answer is geom_sweep's, bit for bit, and the sub-stepped oracle agrees with it.
 * Half the movers are turned boxes (the slide's case), half random polygons; each prepared
 * polygon answers four boxes under two motions in turn, some placed touching the polygon's side (a
 * body pressed against a wall, sliding along it or into it). */
static void test_poly_sweep_box_prepared(void) {
    collide_rng rng = {7301};
    int n = cases_per_pair(), hits = 0, starts = 0, separated = 0, touching = 0;
    for (int i = 0; i < n; i++) {
        geom_shape a;
        if (i & 1) {
            a = random_shape(&rng, GEOM_SHAPE_POLYGON);
        } else {
            geom_shape local = random_shape(&rng, GEOM_SHAPE_BOX);
            float ang = collide_rng_range(&rng, -3.2f, 3.2f);
            geom_shape_orient(&local, v2(cosf(ang), sinf(ang)), &a);
            if (a.kind != GEOM_SHAPE_POLYGON) continue; /* an angle of exactly 0: no polygon */
        }
        vec2 pa = random_vec(&rng, 5);
        geom_poly_sweep ps;
        geom_poly_sweep_prepare(&ps, &a.u.polygon);
        vec2 da = v2(0, 0);
        for (int k = 0; k < 4; k++) {
            if (k == 0 || k == 2) { /* two motions for each prepared polygon */
                da = random_vec(&rng, 1.5f);
                geom_poly_sweep_motion(&ps, da);
            }
            vec2 hb = v2(collide_rng_range(&rng, 0.1f, 1.0f), collide_rng_range(&rng, 0.1f, 1.0f));
            geom_shape b = {.kind = GEOM_SHAPE_BOX, .u.half_extents = hb};
            float reach = oracle_bound_radius(&a) + oracle_bound_radius(&b);
            vec2 pb;
            if (k == 3) {
                /* touching the polygon's bounds along x or y, within the slop either way */
                aabb box = geom_shape_aabb(&a, pa);
                float slop = collide_rng_range(&rng, -GEOM_LINEAR_SLOP, GEOM_LINEAR_SLOP);
                float along = collide_rng_range(&rng, -1.0f, 1.0f);
                switch (collide_rng_next(&rng) & 3) {
                case 0:
                    pb = v2(box.max.x + hb.x + slop, pa.y + along);
                    break;
                case 1:
                    pb = v2(box.min.x - hb.x - slop, pa.y + along);
                    break;
                case 2:
                    pb = v2(pa.x + along, box.max.y + hb.y + slop);
                    break;
                default:
                    pb = v2(pa.x + along, box.min.y - hb.y - slop);
                    break;
                }
            } else {
                pb = v2_add(pa, random_vec(&rng, reach * (k == 0 ? 0.8f : 1.5f)));
            }
            geom_toi want, got;
            bool w_hit = geom_sweep(&a, pa, da, &b, pb, v2(0, 0), &want);
            bool g_hit = geom_poly_sweep_box(&ps, pa, hb, pb, &got);
            CHECK_MSG(w_hit == g_hit, "case %d/%d: hit %d, geom_sweep %d", i, k, g_hit, w_hit);
            if (!g_hit) continue;
            hits++;
            CHECK_MSG(got.t == want.t && got.normal.x == want.normal.x &&
                          got.normal.y == want.normal.y,
                      "case %d/%d: t %.9g n (%.9g %.9g), geom_sweep t %.9g n (%.9g %.9g)", i, k,
                      got.t, got.normal.x, got.normal.y, want.t, want.normal.x, want.normal.y);
            CHECK_MSG(v2_dot(got.normal, da) > 0, "case %d/%d: normal does not oppose", i, k);
            double g0 = oracle_gap(&a, to_d(pa), &b, to_d(pb), NULL);
            if (fabs(g0) <= GEOM_LINEAR_SLOP) touching++;
            if (g0 < -1e-3) {
                starts++;
                CHECK_MSG(got.t == 0.0f, "case %d/%d: overlapping at the start, t %g", i, k, got.t);
            } else if (g0 > 1e-3) {
                separated++;
                for (int s = 0; s <= SUBSTEPS; s++) {
                    double t = (double)s / SUBSTEPS;
                    if (t >= got.t) break;
                    double g = oracle_gap(&a, at_time(pa, da, t), &b, to_d(pb), NULL);
                    CHECK_MSG(g >= -TOL, "case %d/%d: overlap %g at %g before the hit at %g", i, k,
                              g, t, got.t);
                }
                double g = oracle_gap(&a, at_time(pa, da, got.t), &b, to_d(pb), NULL);
                CHECK_MSG(fabs(g) <= TOL, "case %d/%d: gap %g at the hit t=%g", i, k, g, got.t);
            }
        }
    }
    CHECK_MSG(hits > n / 2 && starts > n / 10 && separated > n / 4 && touching > n / 20,
              "%d hits, %d overlapping, %d separated, %d touching of %d", hits, starts, separated,
              touching, n);
}

/* ---- Turned box against boxes ------------------------------------------------------------
 * geom_obox_sweep_box (the turning tick's slide of a turned box among box tiles) answers every
 * case as geom_poly_sweep_box does on geom_shape_orient's polygon, bit for bit: hit or not, t,
 * and the normal's bits (the sign of a zero included). The cases lean on the sweep's edges: boxes
 * touching the turned box's bounds or one of its faces within the slop either way, motions along
 * an axis exactly, along a face, or with a component below the slop (a closing axis that enters
 * after the end within the slop), and quarter-turn angles. */
static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static vec2 obox_motion(collide_rng *rng, const geom_polygon *p) {
    vec2 da = random_vec(rng, 1.5f);
    switch (collide_rng_next(rng) % 6) {
    case 0: /* along an axis */
        return (collide_rng_next(rng) & 1) ? v2(da.x, 0.0f) : v2(0.0f, da.y);
    case 1: /* along a face of the turned box */
        return v2_scale(v2_perp(p->normals[0]), da.x);
    case 2: /* one component within the slop */
        return (collide_rng_next(rng) & 1) ? v2(da.x * 1e-5f, da.y) : v2(da.x, da.y * 1e-5f);
    case 3: /* short */
        return v2_scale(da, 1e-4f);
    case 4: /* now and then beyond GEOM_MAX_COORD: never a hit */
        return (collide_rng_next(rng) % 8) ? da : v2(da.x, 2e18f);
    default:
        return da;
    }
}

static vec2 obox_place(collide_rng *rng, const geom_polygon *p, vec2 pa, aabb box, vec2 hb) {
    float slop = collide_rng_range(rng, -2.0f * GEOM_LINEAR_SLOP, 2.0f * GEOM_LINEAR_SLOP);
    float along = collide_rng_range(rng, -1.5f, 1.5f);
    bool flip = collide_rng_next(rng) & 1;
    switch (collide_rng_next(rng) % 6) {
    case 0: /* touching the bounds along x */
        return flip ? v2(box.max.x + hb.x + slop, pa.y + along)
                    : v2(box.min.x - hb.x - slop, pa.y + along);
    case 1: /* along y */
        return flip ? v2(pa.x + along, box.max.y + hb.y + slop)
                    : v2(pa.x + along, box.min.y - hb.y - slop);
    case 2: { /* a corner of the box on a face of the turned one */
        int e = (int)(collide_rng_next(rng) % 4);
        vec2 n = p->normals[e];
        vec2 on = v2_add(v2_add(pa, p->vertices[e]),
                         v2_add(v2_scale(v2_perp(n), -0.5f * along), v2_scale(n, slop)));
        return v2_sub(on, v2(n.x > 0.0f ? -hb.x : hb.x, n.y > 0.0f ? -hb.y : hb.y));
    }
    case 3: /* diagonal, at a corner of the bounds */
        return v2(box.max.x + hb.x + slop, box.max.y + hb.y + along * 1e-4f);
    default:
        return v2_add(pa, random_vec(rng, 3.0f));
    }
}

static void test_obox_sweep(void) {
    collide_rng rng = {7411};
    int n = 20 * cases_per_pair(), hits = 0, starts = 0, misses = 0;
    for (int i = 0; i < n; i++) {
        vec2 h = v2(collide_rng_range(&rng, 0.1f, 1.0f), collide_rng_range(&rng, 0.1f, 1.0f));
        float ang = (i % 8 == 0) ? (float)(collide_rng_next(&rng) % 4) * 1.5707964f
                                 : collide_rng_range(&rng, -3.2f, 3.2f);
        vec2 q = v2(cosf(ang), sinf(ang));
        if (q.x == 0.0f || q.y == 0.0f) continue; /* geom_obox_sweep_prepare's precondition */
        geom_shape local = {.kind = GEOM_SHAPE_BOX, .u.half_extents = h}, a;
        geom_shape_orient(&local, q, &a);
        const geom_polygon *p = &a.u.polygon;
        geom_poly_sweep ps;
        geom_poly_sweep_prepare(&ps, p);
        geom_obox_sweep os;
        geom_obox_sweep_prepare(&os, h, q);
        vec2 pa = (i & 1) ? random_vec(&rng, 5) : far_translation(&rng);
        aabb box = geom_shape_aabb(&a, pa);
        for (int k = 0; k < 6; k++) {
            vec2 da = obox_motion(&rng, p);
            geom_poly_sweep_motion(&ps, da);
            geom_obox_sweep_motion(&os, da);
            for (int j = 0; j < 5; j++) {
                vec2 hb =
                    v2(collide_rng_range(&rng, 0.1f, 1.0f), collide_rng_range(&rng, 0.1f, 1.0f));
                vec2 pb = obox_place(&rng, p, pa, box, hb);
                if (j == 4) {
                    /* A box to the right within the slop (gap gx > 0) and above, which the
                     * motion reaches along y while along x it closes slower than gx: the x axis
                     * enters after the end, within the slop (no miss), so no hit. */
                    float sy = collide_rng_range(&rng, 0.0f, 0.3f);
                    pb = v2(box.max.x + hb.x + 0.5f * GEOM_LINEAR_SLOP, box.max.y + hb.y + sy);
                    float gx = (pb.x - pa.x) - (box.max.x - pa.x) - hb.x;
                    da = v2(collide_rng_range(&rng, 0.1f, 0.9f) * gx, 4.0f * sy + 0.5f);
                    geom_poly_sweep_motion(&ps, da);
                    geom_obox_sweep_motion(&os, da);
                }
                geom_toi want = {0}, got = {0};
                bool w_hit = geom_poly_sweep_box(&ps, pa, hb, pb, &want);
                bool g_hit = geom_obox_sweep_box(&os, pa, hb, pb, &got);
                CHECK_MSG(w_hit == g_hit, "case %d/%d/%d: hit %d, geom_poly_sweep_box %d", i, k, j,
                          g_hit, w_hit);
                if (!w_hit || !g_hit) {
                    misses++;
                    continue;
                }
                hits++;
                starts += want.t == 0.0f;
                CHECK_MSG(same_bits(got.t, want.t) && same_bits(got.normal.x, want.normal.x) &&
                              same_bits(got.normal.y, want.normal.y),
                          "case %d/%d/%d: t %.9g n (%g %g), geom_poly_sweep_box t %.9g n (%g %g)",
                          i, k, j, got.t, got.normal.x, got.normal.y, want.t, want.normal.x,
                          want.normal.y);
            }
        }
    }
    CHECK_MSG(hits > n && starts > n / 10 && misses > n, "%d hits (%d at the start), %d misses",
              hits, starts, misses);
}

TEST_MAIN(TEST(test_overlap_every_pair), TEST(test_sweep_every_pair), TEST(test_box_box_lattice),
          TEST(test_ray_cast_every_kind), TEST(test_contains_and_aabb_every_kind),
          TEST(test_deterministic), TEST(test_poly_sweep_box_prepared), TEST(test_obox_sweep))

/* geom: turning shapes against brute force. geom_toi_turning (conservative advancement) is
 * checked by sub-stepping each motion 10^4 times and testing overlap exactly with oracle.h's
 * separating-axis gap in double (shapes turned by geom_shape_rotate, in double); GJK distances
 * against a vertex-edge brute force in double. Every ordered pair of shape kinds, spinning and
 * moving, spinning alone, thin and long shapes, starting in contact, and grazing. Fixed seeds. */
#include "geom.h"
#include "harness.h"
#include "oracle.h"

static const geom_shape_kind kinds[3] = {GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON, GEOM_SHAPE_CIRCLE};
static const char *kind_names[4] = {"?", "box", "polygon", "circle"};

/* A setup step that cannot fail (CHECK returns void; these helpers return values). */
#define MUST(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: setup failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define SUBSTEPS 10000
#define TARGET (0.5f * GEOM_SKIN)
#define TOLERANCE (0.25f * GEOM_SKIN)

/* Thin and long shapes come in every third case: a 4 x 0.2 bar, a 3 x 0.05 sliver. */
static geom_shape shape_for(collide_rng *rng, geom_shape_kind kind, int i) {
    geom_shape s;
    if (i % 3 == 2 && kind == GEOM_SHAPE_BOX) {
        MUST(geom_make_box(i % 2 ? v2(2.0f, 0.1f) : v2(1.5f, 0.025f), &s) == GEOM_OK);
        return s;
    }
    if (i % 3 == 2 && kind == GEOM_SHAPE_POLYGON) {
        vec2 v[4] = {{-2.0f, -0.05f}, {2.0f, -0.1f}, {2.2f, 0.1f}, {-1.8f, 0.05f}};
        MUST(geom_make_polygon(v, 4, &s) == GEOM_OK);
        return s;
    }
    if (i % 3 == 2 && kind == GEOM_SHAPE_CIRCLE) {
        MUST(geom_make_circle(0.05f, &s) == GEOM_OK);
        return s;
    }
    int n = (collide_rng_next(rng) & 1) ? 8 : 3 + (int)(collide_rng_next(rng) % 6);
    return oracle_random_shape(rng, kind, n);
}

/* The shape at angle a, in world orientation, for the oracle (double-precision turn). */
static geom_shape turned(const geom_shape *s, double a) {
    geom_shape o;
    MUST(geom_shape_rotate(s, (float)a, &o) == GEOM_OK);
    return o;
}

/* Exact separating-axis gap at time t of the two motions: < 0 overlapping. */
static double gap_at(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                     const geom_motion *mb, double t) {
    geom_shape ta = turned(a, ma->a0 + t * ma->da), tb = turned(b, mb->a0 + t * mb->da);
    dvec pa = dv(ma->p0.x + t * ma->dp.x, ma->p0.y + t * ma->dp.y);
    dvec pb = dv(mb->p0.x + t * mb->dp.x, mb->p0.y + t * mb->dp.y);
    return oracle_gap(&ta, pa, &tb, pb, NULL);
}

/* ---- brute-force distance: vertex against edge, both ways, in double ---------------------- */

static double point_segment(dvec p, dvec a, dvec b) {
    dvec e = dv(b.x - a.x, b.y - a.y), ap = dv(p.x - a.x, p.y - a.y);
    double l = dv_dot(e, e), t = l > 0 ? dv_dot(ap, e) / l : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    dvec c = dv(a.x + t * e.x - p.x, a.y + t * e.y - p.y);
    return sqrt(dv_dot(c, c));
}

/* Distance from point p to the (closed) polygon of n corners; 0 inside. */
static double point_polygon(dvec p, const dvec *v, int n) {
    bool inside = true;
    double best = 1e300;
    for (int i = 0; i < n; i++) {
        dvec a = v[i], b = v[(i + 1) % n];
        if ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x) < 0) inside = false;
        best = fmin(best, point_segment(p, a, b));
    }
    return inside ? 0 : best;
}

/* Distance between two shapes that do not overlap (turned shapes, world orientation). */
static double brute_distance(const geom_shape *a, dvec pa, const geom_shape *b, dvec pb) {
    dvec va[GEOM_MAX_POLYGON_VERTICES], vb[GEOM_MAX_POLYGON_VERTICES];
    int na = oracle_points(a, pa, va), nb = oracle_points(b, pb, vb);
    double ra = a->kind == GEOM_SHAPE_CIRCLE ? a->u.radius : 0;
    double rb = b->kind == GEOM_SHAPE_CIRCLE ? b->u.radius : 0;
    if (na == 0) va[0] = pa, na = 1;
    if (nb == 0) vb[0] = pb, nb = 1;
    double best = 1e300;
    if (nb >= 3)
        for (int i = 0; i < na; i++)
            best = fmin(best, point_polygon(va[i], vb, nb));
    if (na >= 3)
        for (int i = 0; i < nb; i++)
            best = fmin(best, point_polygon(vb[i], va, na));
    if (na == 1 && nb == 1)
        best = sqrt(dv_dot(dv(pb.x - pa.x, pb.y - pa.y), dv(pb.x - pa.x, pb.y - pa.y)));
    return fmax(0, best - ra - rb);
}

/* ---- the TOI against sub-stepping ----------------------------------------------------------- */

typedef enum scenario { MOVE_AND_SPIN, SPIN_ONLY, START_IN_CONTACT, GRAZING } scenario;
static const char *scenario_names[4] = {"move+spin", "spin only", "start in contact", "grazing"};

typedef struct tally {
    int hits, separated, start, iterations, brute_overlaps;
} tally;

/* What every random case starts with, drawn in this order: motions cleared, A's start, both
 * start angles, and the direction u from A towards where B is put. */
static vec2 start_case(collide_rng *rng, geom_motion *ma, geom_motion *mb) {
    memset(ma, 0, sizeof *ma);
    memset(mb, 0, sizeof *mb);
    ma->p0 = v2(collide_rng_range(rng, -5, 5), collide_rng_range(rng, -5, 5));
    ma->a0 = collide_rng_range(rng, -3.2f, 3.2f);
    mb->a0 = collide_rng_range(rng, -3.2f, 3.2f);
    float dir = collide_rng_range(rng, 0, 6.2831853f);
    vec2 u = v2(cosf(dir), sinf(dir));
    return u;
}

static void make_case(collide_rng *rng, scenario sc, const geom_shape *a, const geom_shape *b,
                      geom_motion *ma, geom_motion *mb) {
    float ra = geom_shape_radius(a), rb = geom_shape_radius(b), reach = ra + rb;
    vec2 u = start_case(rng, ma, mb);
    switch (sc) {
    case MOVE_AND_SPIN: {
        float dist = collide_rng_range(rng, 1.05f, 3.0f) * reach;
        mb->p0 = v2_mul_add(ma->p0, dist, u);
        /* aimed at B give or take a reach, covering 0.5..2 times the distance */
        vec2 aim = v2_add(v2_sub(mb->p0, ma->p0), v2(collide_rng_range(rng, -reach, reach),
                                                     collide_rng_range(rng, -reach, reach)));
        ma->dp = v2_scale(aim, collide_rng_range(rng, 0.5f, 2.0f));
        ma->da = collide_rng_range(rng, -4.0f, 4.0f);
        mb->dp = v2(collide_rng_range(rng, -1, 1), collide_rng_range(rng, -1, 1));
        mb->da = collide_rng_range(rng, -2.0f, 2.0f);
        break;
    }
    case SPIN_ONLY: {
        /* close enough that a turn of up to 5 rad may sweep A into B */
        float dist = collide_rng_range(rng, 0.7f, 1.0f) * reach;
        mb->p0 = v2_mul_add(ma->p0, dist, u);
        ma->da = collide_rng_range(rng, -5.0f, 5.0f);
        break;
    }
    case START_IN_CONTACT: {
        float dist = collide_rng_range(rng, 0.05f, 0.6f) * reach;
        mb->p0 = v2_mul_add(ma->p0, dist, u);
        ma->dp = v2_scale(u, collide_rng_range(rng, 0.1f, 2.0f));
        ma->da = collide_rng_range(rng, -2.0f, 2.0f);
        break;
    }
    case GRAZING: {
        /* A slides along x under B: B's lowest point sits eps above A's highest (no turning:
         * the AABBs are the exact extents), eps in [-1e-3, 1e-3]. */
        aabb ba = geom_shape_aabb_xf(a, geom_xf_make(ma->p0, ma->a0));
        aabb bb = geom_shape_aabb_xf(b, geom_xf_make(v2(0, 0), mb->a0));
        float eps = collide_rng_range(rng, -1e-3f, 1e-3f);
        mb->p0 =
            v2(ma->p0.x + collide_rng_range(rng, 1.5f, 3.0f) * reach, ba.max.y - bb.min.y + eps);
        ma->dp = v2(4.0f * reach, 0.0f);
        break;
    }
    }
}

static void check_case_n(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                         const geom_motion *mb, scenario sc, const char *label, int i, tally *tl,
                         int substeps) {
    geom_toi_result r;
    bool hit = geom_toi_turning(a, ma, b, mb, TARGET, TOLERANCE, &r);
    CHECK_MSG(r.t >= 0.0f && r.t <= 1.0f && isfinite(r.normal.x) && isfinite(r.normal.y),
              "%s %s case %d: t %g", label, scenario_names[sc], i, (double)r.t);
    CHECK_MSG(hit == (r.state != GEOM_TOI_SEPARATED), "%s case %d", label, i);
    /* brute force: the first sub-step that overlaps */
    int first = -1;
    for (int k = 0; k <= substeps; k++) {
        double t = (double)k / substeps;
        if (gap_at(a, ma, b, mb, t) < 0) {
            first = k;
            break;
        }
    }
    double t_first = first < 0 ? 2.0 : (double)first / substeps;
    /* Sound: nothing overlaps up to and including the reported time. */
    CHECK_MSG(t_first > r.t || (r.state == GEOM_TOI_START_CONTACT && r.t == 0.0f),
              "%s %s case %d: overlap at %.5f before toi %.5f (state %d)", label,
              scenario_names[sc], i, t_first, (double)r.t, (int)r.state);
    /* Complete: an overlap the sub-steps found is reported, at or before it. */
    if (first >= 0) {
        tl->brute_overlaps++;
        CHECK_MSG(hit && r.t <= t_first, "%s %s case %d: missed overlap at %.5f (t %.5f)", label,
                  scenario_names[sc], i, t_first, (double)r.t);
    }
    /* Tight: a hit stands within target + tolerance, by the brute-force distance. */
    if (r.state == GEOM_TOI_HIT) {
        double t = r.t;
        geom_shape ta = turned(a, ma->a0 + t * ma->da), tb = turned(b, mb->a0 + t * mb->da);
        double d = brute_distance(&ta, dv(ma->p0.x + t * ma->dp.x, ma->p0.y + t * ma->dp.y), &tb,
                                  dv(mb->p0.x + t * mb->dp.x, mb->p0.y + t * mb->dp.y));
        CHECK_MSG(d <= TARGET + TOLERANCE + 2e-5 && d >= TARGET - 2e-5,
                  "%s %s case %d: gap %.6f at the hit", label, scenario_names[sc], i, d);
    }
    /* geom_toi_turning_before at horizons below, at and above the answer: the same answer when
     * it comes before the horizon (bit for bit), else no contact */
    const float horizons[4] = {0.5f * r.t, r.t, nextafterf(r.t, 2.0f), 0.25f + 0.5f * r.t};
    for (int h = 0; h < 4; h++) {
        geom_toi_result rb;
        bool hit_b = geom_toi_turning_before(a, ma, b, mb, TARGET, TOLERANCE, horizons[h], &rb);
        if (hit && r.t < horizons[h])
            CHECK_MSG(hit_b && rb.state == r.state && rb.t == r.t && rb.iterations == r.iterations,
                      "%s %s case %d: before %g: state %d t %g, not %d %g", label,
                      scenario_names[sc], i, (double)horizons[h], (int)rb.state, (double)rb.t,
                      (int)r.state, (double)r.t);
        else
            CHECK_MSG(!hit_b && rb.state == GEOM_TOI_SEPARATED,
                      "%s %s case %d: before %g: state %d t %g (answer %d at %g)", label,
                      scenario_names[sc], i, (double)horizons[h], (int)rb.state, (double)rb.t,
                      (int)r.state, (double)r.t);
    }
    tl->hits += r.state == GEOM_TOI_HIT;
    tl->separated += r.state == GEOM_TOI_SEPARATED;
    tl->start += r.state == GEOM_TOI_START_CONTACT;
    tl->iterations += r.state == GEOM_TOI_ITERATIONS;
}

static void check_case(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                       const geom_motion *mb, scenario sc, const char *label, int i, tally *tl) {
    check_case_n(a, ma, b, mb, sc, label, i, tl, SUBSTEPS);
}

static void run_scenario(scenario sc, int cases, unsigned seed) {
    tally total = {0, 0, 0, 0, 0};
    for (int ka = 0; ka < 3; ka++)
        for (int kb = 0; kb < 3; kb++) {
            collide_rng rng = {seed + (unsigned)(ka * 3 + kb)};
            char label[32];
            snprintf(label, sizeof label, "%s-%s", kind_names[kinds[ka]], kind_names[kinds[kb]]);
            for (int i = 0; i < cases; i++) {
                geom_shape a = shape_for(&rng, kinds[ka], i), b = shape_for(&rng, kinds[kb], i + 1);
                geom_motion ma, mb;
                make_case(&rng, sc, &a, &b, &ma, &mb);
                check_case(&a, &ma, &b, &mb, sc, label, i, &total);
            }
        }
    printf("  %s: %d hits, %d separated, %d in contact at the start, %d at the iteration bound, "
           "%d with a brute-force overlap\n",
           scenario_names[sc], total.hits, total.separated, total.start, total.iterations,
           total.brute_overlaps);
    /* The cases exercise what they claim to. */
    if (sc == MOVE_AND_SPIN) CHECK(total.hits > 9 * cases / 5);
    if (sc == SPIN_ONLY) CHECK(total.hits > 9 * cases / 6);
    if (sc == MOVE_AND_SPIN) CHECK(total.separated > 0);
    if (sc == START_IN_CONTACT) CHECK(total.start > 9 * cases * 4 / 5);
    if (sc == GRAZING) CHECK(total.hits > 0 && total.separated > 0);
    CHECK(total.iterations <= 9 * cases / 20);
}

static void test_toi_move_and_spin(void) { run_scenario(MOVE_AND_SPIN, 24, 1601); }
static void test_toi_spin_only(void) { run_scenario(SPIN_ONLY, 16, 1602); }
static void test_toi_start_in_contact(void) { run_scenario(START_IN_CONTACT, 8, 1603); }
static void test_toi_grazing(void) { run_scenario(GRAZING, 12, 1604); }

/* ---- leaving a start in contact (geom_toi_turning_leaving) ---------------------------------- */

/* The brute-force distance at time t of the two motions: 0 when they overlap. */
static double dist_at(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                      const geom_motion *mb, double t) {
    if (gap_at(a, ma, b, mb, t) <= 0) return 0;
    geom_shape ta = turned(a, ma->a0 + t * ma->da), tb = turned(b, mb->a0 + t * mb->da);
    return brute_distance(&ta, dv(ma->p0.x + t * ma->dp.x, ma->p0.y + t * ma->dp.y), &tb,
                          dv(mb->p0.x + t * mb->dp.x, mb->p0.y + t * mb->dp.y));
}

typedef struct leave_tally {
    int left, stayed, opened, hits, separated, bound, brute_overlaps;
} leave_tally;

/* One start in contact: B placed along u from A at a brute-force gap of g0 (bisection on the
 * offset: the distance to a convex set grows along a ray once it is positive), then A (and B in
 * a third of the cases) turning, A moving away, along, into B or not at all. */
static void make_leave_case(collide_rng *rng, const geom_shape *a, const geom_shape *b, int i,
                            geom_motion *ma, geom_motion *mb) {
    vec2 u = start_case(rng, ma, mb);
    float g0 = collide_rng_range(rng, 0.15f * TARGET, TARGET + TOLERANCE);
    double lo = 0, hi = geom_shape_radius(a) + geom_shape_radius(b) + 1.0;
    for (int k = 0; k < 60; k++) {
        double mid = 0.5 * (lo + hi);
        mb->p0 = v2_mul_add(ma->p0, (float)mid, u);
        if (dist_at(a, ma, b, mb, 0) < g0)
            lo = mid;
        else
            hi = mid;
    }
    mb->p0 = v2_mul_add(ma->p0, (float)hi, u);
    ma->da = i % 8 == 0 ? 0.0f : collide_rng_range(rng, -0.3f, 0.3f);
    float speed = collide_rng_range(rng, 0.0f, 0.2f);
    switch (i % 4) {
    case 0:
        break;
    case 1:
        ma->dp = v2_scale(u, -speed); /* away */
        break;
    case 2:
        ma->dp = v2_scale(v2_perp(u), speed - 0.1f); /* along */
        break;
    default:
        ma->dp = v2_scale(u, speed); /* into B */
    }
    if (i % 3 == 0) mb->da = collide_rng_range(rng, -0.3f, 0.3f);
}

static void check_leave_case(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                             const geom_motion *mb, const char *label, int i, leave_tally *tl) {
    const int substeps = 2000;
    double d0 = dist_at(a, ma, b, mb, 0);
    geom_toi_result r, rs;
    bool hit = geom_toi_turning_leaving(a, ma, b, mb, TARGET, TOLERANCE, 2.0f, &r);
    bool hit_s = geom_toi_turning_before(a, ma, b, mb, TARGET, TOLERANCE, 2.0f, &rs);
    CHECK_MSG(r.t >= 0.0f && r.t <= 1.0f && hit == (r.state != GEOM_TOI_SEPARATED),
              "%s case %d: state %d t %g", label, i, (int)r.state, (double)r.t);
    /* away from a start in contact, the same answer as geom_toi_turning_before, bit for bit */
    if (!(hit_s && rs.state == GEOM_TOI_START_CONTACT))
        CHECK_MSG(hit == hit_s && r.state == rs.state && r.t == rs.t,
                  "%s case %d: %d %g, not %d %g", label, i, (int)r.state, (double)r.t,
                  (int)rs.state, (double)rs.t);
    /* Sound: up to the answer, never closer than half the start gap (nor the target), give or
     * take the float rounding of positions and shapes */
    double floor = fmin(TARGET, 0.5 * d0) - 2e-5;
    int first = -1;
    for (int k = 0; k <= substeps; k++) {
        double t = (double)k / substeps;
        if (t <= r.t) {
            double d = dist_at(a, ma, b, mb, t);
            CHECK_MSG(d >= floor, "%s case %d: gap %.7f at %.4f before toi %.5f (start %.7f)",
                      label, i, d, t, (double)r.t, d0);
        }
        if (first < 0 && gap_at(a, ma, b, mb, t) < 0) first = k;
    }
    /* Complete: an overlap the sub-steps find is reported at or before it */
    if (first >= 0) {
        tl->brute_overlaps++;
        CHECK_MSG(hit && r.t <= (double)first / substeps, "%s case %d: missed overlap at %.5f",
                  label, i, (double)first / substeps);
    }
    /* Not stuck: when the sub-steps see the gap open from the start, the answer goes on */
    const double e = 0.02;
    bool opens = true;
    for (int k = 1; k <= 4; k++)
        opens = opens && dist_at(a, ma, b, mb, e * k / 4) > d0 + 1e-5;
    if (opens) {
        tl->opened++;
        CHECK_MSG(r.state != GEOM_TOI_START_CONTACT && r.t > 0.0f,
                  "%s case %d: the gap opens (%.7f -> %.7f) but it stays (start %.7f)", label, i,
                  d0, dist_at(a, ma, b, mb, e), (double)r.distance);
    }
    /* Tight: a contact met while leaving stands within the caller's target + tolerance */
    if (r.state == GEOM_TOI_HIT) {
        double d = dist_at(a, ma, b, mb, r.t);
        CHECK_MSG(d <= TARGET + TOLERANCE + 2e-5 && d >= floor, "%s case %d: gap %.7f at the hit",
                  label, i, d);
    }
    bool start_s = hit_s && rs.state == GEOM_TOI_START_CONTACT;
    tl->left += start_s && r.state != GEOM_TOI_START_CONTACT;
    tl->stayed += r.state == GEOM_TOI_START_CONTACT;
    tl->hits += r.state == GEOM_TOI_HIT;
    tl->separated += r.state == GEOM_TOI_SEPARATED;
    tl->bound += r.state == GEOM_TOI_ITERATIONS;
}

/* geom_toi_turning_leaving from starts in contact (a gap from 0.15 to 1.5 times the target:
 * where the tick leaves a body it stopped), every ordered pair of shape kinds, thin and long
 * shapes among them: sound (never closer than half the start gap before its answer, by the
 * brute-force distance at 2,000 sub-steps), complete (every overlap found), not stuck (a motion
 * the sub-steps see opening the gap goes on), tight (a contact met stands within the target and
 * tolerance), and geom_toi_turning_before's answer wherever that is not a start in contact. */
static void test_toi_leaving_every_pair(void) {
    leave_tally total = {0, 0, 0, 0, 0, 0, 0};
    const int cases = 60;
    for (int ka = 0; ka < 3; ka++)
        for (int kb = 0; kb < 3; kb++) {
            collide_rng rng = {2201u + (unsigned)(ka * 3 + kb)};
            char label[32];
            snprintf(label, sizeof label, "%s-%s", kind_names[kinds[ka]], kind_names[kinds[kb]]);
            for (int i = 0; i < cases; i++) {
                geom_shape a = shape_for(&rng, kinds[ka], i), b = shape_for(&rng, kinds[kb], i + 1);
                geom_motion ma, mb;
                make_leave_case(&rng, &a, &b, i, &ma, &mb);
                check_leave_case(&a, &ma, &b, &mb, label, i, &total);
            }
        }
    printf("  leaving: %d left a start in contact, %d stayed, %d opening by sub-steps; %d hits, "
           "%d separated, %d at the bound, %d with a brute-force overlap\n",
           total.left, total.stayed, total.opened, total.hits, total.separated, total.bound,
           total.brute_overlaps);
    /* the cases exercise what they claim to */
    CHECK(total.left > 9 * cases / 4 && total.stayed > 9 * cases / 8 &&
          total.opened > 9 * cases / 8 && total.hits + total.bound > 9 * cases / 20);
}

/* A box resting on a corner against a wall, rocked: turned towards flat and on until its other
 * corner comes in, then back until the first does, 40 times, each interval's answer applied (as
 * the tick applies it). Every turn away from the wall goes on (about 0.04 rad, from one corner's
 * contact to the other's), and the gap never creeps below the target: each turn back keeps half
 * the gap it opened, which flat against the wall is far above the target. */
static void test_toi_leaving_rocking(void) {
    geom_shape box, wall;
    MUST(geom_make_box(v2(1.0f, 0.5f), &box) == GEOM_OK);
    MUST(geom_make_box(v2(0.5f, 5.0f), &wall) == GEOM_OK);
    /* turned by 0.02 rad, its nearest corner 0.6 skin from the wall's left face */
    const float a0 = 0.02f;
    float reach = cosf(a0) * 1.0f + sinf(a0) * 0.5f;
    geom_motion mb = {v2(reach + 0.5f + 0.6f * GEOM_SKIN, 0.0f), 0.0f, v2(0, 0), 0.0f};
    float angle = a0;
    double least = INFINITY;
    for (int k = 0; k < 40; k++) {
        geom_motion ma = {v2(0, 0), angle, v2(0, 0), k % 2 ? 0.05f : -0.05f};
        geom_toi_result r;
        bool hit = geom_toi_turning_leaving(&box, &ma, &wall, &mb, TARGET, TOLERANCE, 2.0f, &r);
        CHECK_MSG(hit && r.state != GEOM_TOI_START_CONTACT && r.t * 0.05f > 0.035f,
                  "rock %d: state %d t %g", k, (int)r.state, (double)r.t);
        angle += r.t * ma.da;
        geom_motion at = {v2(0, 0), angle, v2(0, 0), 0.0f};
        double d = dist_at(&box, &at, &wall, &mb, 0);
        least = fmin(least, d);
        CHECK_MSG(d >= TARGET - 2e-5, "rock %d: gap %.7f (angle %g)", k, d, (double)angle);
    }
    printf("  rocking: least gap %.3g skins\n", least / GEOM_SKIN);
}

/* A turned box pressed onto a tile (a box at angle 0 that stands still), by its face on the tile's
 * corner and by its corner on the tile's face, 0.6 skin apart: turning into it is held at the
 * start, interval after interval, by the tick's advancement against a tile
 * (geom_toi_turning_box_fixed) and by the general one (geom_toi_turning_leaving), so it never
 * creeps in; turning off it (and moving off it while turning into it) goes on. */
static void test_toi_leaving_pressed(void) {
    const float theta = 0.3f, gap = 0.6f * GEOM_SKIN;
    const vec2 ha = v2(1.0f, 0.25f), hb = v2(0.5f, 0.5f);
    geom_shape a, b;
    MUST(geom_make_box(ha, &a) == GEOM_OK && geom_make_box(hb, &b) == GEOM_OK);
    const vec2 q = v2(cosf(theta), sinf(theta));
    for (int face = 0; face < 2; face++) {
        vec2 pb, n; /* the tile's centre; the normal from A to the tile */
        if (face) {
            /* A's lower face on the tile's upper left corner (the tile's point nearest A's face,
             * which rises to the right) */
            n = geom_rotate(q, v2(0.0f, -1.0f));
            vec2 corner = v2_mul_add(geom_rotate(q, v2(0.2f, -ha.y)), gap, n);
            pb = v2_add(corner, v2(hb.x, -hb.y));
        } else {
            /* A's lower left corner on the tile's upper face */
            n = v2(0.0f, -1.0f);
            vec2 corner = geom_rotate(q, v2(-ha.x, -ha.y));
            pb = v2(corner.x + 0.3f, corner.y - gap - hb.y);
        }
        geom_motion ma0 = {v2(0, 0), theta, v2(0, 0), 0.0f}, mb = {pb, 0.0f, v2(0, 0), 0.0f};
        double d0 = dist_at(&a, &ma0, &b, &mb, 0);
        CHECK_MSG(fabs(d0 - gap) < 2e-5, "face %d: start gap %.7f", face, d0);
        /* which way closes: the contact point's velocity under a turn da > 0 */
        vec2 contact = face ? geom_rotate(q, v2(0.2f, -ha.y)) : geom_rotate(q, v2(-ha.x, -ha.y));
        float into = v2_dot(v2(-contact.y, contact.x), n) > 0.0f ? 0.05f : -0.05f;
        for (int way = 0; way < 3; way++) {
            /* 0: turning into it; 1: turning off it; 2: turning into it, moving off it faster */
            geom_motion ma = ma0;
            ma.da = way == 1 ? -into : into;
            if (way == 2) ma.dp = v2_scale(n, -0.2f);
            geom_toi_result r;
            geom_turning_box tb = {ha, geom_shape_radius(&a), geom_turn_start(theta), ma};
            for (int k = 0; k < 40; k++) {
                bool hit = geom_toi_turning_leaving(&a, &ma, &b, &mb, TARGET, TOLERANCE, 2.0f, &r);
                float fixed = geom_toi_turning_box_fixed(&tb, hb.x, hb.y, pb.x, pb.y, TARGET,
                                                         TOLERANCE, 2.0f);
                CHECK_MSG(fixed == (hit ? r.t : 2.0f), "face %d way %d: fixed %g, general %g", face,
                          way, (double)fixed, (double)r.t);
                if (way == 0) {
                    CHECK_MSG(hit && r.state == GEOM_TOI_START_CONTACT,
                              "face %d, turning into the tile, interval %d: state %d t %g", face, k,
                              (int)r.state, (double)r.t);
                } else {
                    CHECK_MSG(r.state != GEOM_TOI_START_CONTACT && r.t > 0.5f,
                              "face %d way %d: state %d t %g", face, way, (int)r.state,
                              (double)r.t);
                    break;
                }
                /* the answer applied, as the tick applies it: a start held stays where it is */
                ma.a0 += r.t * ma.da;
                tb.m.a0 = ma.a0;
                tb.q0 = geom_turn_start(ma.a0);
            }
            double d = dist_at(&a, &ma, &b, &mb, 0);
            CHECK_MSG(d >= gap - 2e-5, "face %d way %d: gap %.7f after 40 intervals", face, way, d);
        }
    }
}

/* GJK: distance and closest points against the vertex-edge brute force, turned shapes. */
static void test_distance_every_pair(void) {
    for (int ka = 0; ka < 3; ka++)
        for (int kb = 0; kb < 3; kb++) {
            collide_rng rng = {1700u + (unsigned)(ka * 3 + kb)};
            int apart = 0;
            for (int i = 0; i < 400; i++) {
                geom_shape a = shape_for(&rng, kinds[ka], i), b = shape_for(&rng, kinds[kb], i);
                float reach = geom_shape_radius(&a) + geom_shape_radius(&b);
                geom_xf xa = geom_xf_make(v2(collide_rng_range(&rng, -5, 5), 0.5f),
                                          collide_rng_range(&rng, -3.2f, 3.2f));
                float dir = collide_rng_range(&rng, 0, 6.2831853f);
                float len = collide_rng_range(&rng, 0.2f, 1.6f) * reach;
                geom_xf xb = geom_xf_make(v2_add(xa.p, v2(len * cosf(dir), len * sinf(dir))),
                                          collide_rng_range(&rng, -3.2f, 3.2f));
                geom_closest c;
                float d = geom_distance_xf(&a, xa, &b, xb, &c);
                geom_shape ta = turned(&a, atan2(xa.q.y, xa.q.x)),
                           tb = turned(&b, atan2(xb.q.y, xb.q.x));
                dvec pa = dv(xa.p.x, xa.p.y), pb = dv(xb.p.x, xb.p.y);
                double gap = oracle_gap(&ta, pa, &tb, pb, NULL);
                if (gap < -1e-4) {
                    CHECK_MSG(c.overlap && d == 0.0f, "%s-%s case %d: overlap missed",
                              kind_names[kinds[ka]], kind_names[kinds[kb]], i);
                    continue;
                }
                if (gap < 1e-4) continue; /* touching: either answer */
                apart++;
                double bd = brute_distance(&ta, pa, &tb, pb);
                CHECK_MSG(!c.overlap && fabs(d - bd) < 1e-4, "%s-%s case %d: %g vs %g",
                          kind_names[kinds[ka]], kind_names[kinds[kb]], i, (double)d, bd);
                /* the closest points are that far apart, along the normal */
                vec2 gapv = v2_sub(c.point_b, c.point_a);
                CHECK(fabs(v2_len(gapv) - d) < 1e-4);
                CHECK(v2_dot(gapv, c.normal) > 0.99f * d);
                CHECK(fabs(v2_len(c.normal) - 1.0) < 1e-5);
            }
            CHECK(apart > 100);
        }
}

/* ---- box - box: the specialised paths, thousands of cases -------------------------------- */

/* A random box for the box-box properties: sizes from slivers (0.02) to 2, a fifth of them square;
 * turned at random, or (one case in four) by a multiple of a quarter turn, so parallel edges and
 * exact ties between corners come up. */
static geom_shape box_for(collide_rng *rng) {
    geom_shape s;
    float hx = collide_rng_range(rng, 0.02f, 2.0f);
    float hy = collide_rng_next(rng) % 5 == 0 ? hx : collide_rng_range(rng, 0.02f, 2.0f);
    MUST(geom_make_box(v2(hx, hy), &s) == GEOM_OK);
    return s;
}
static float angle_for(collide_rng *rng) {
    if (collide_rng_next(rng) % 4 == 0)
        return 1.5707963f * (float)(int)(collide_rng_next(rng) % 4) - 3.1415927f;
    return collide_rng_range(rng, -3.2f, 3.2f);
}

/* The least corner-to-corner distance: equal to the distance when the closest points are two
 * corners (the box distance's corner path), else larger (its corner-against-face path). */
static double corner_corner(const geom_shape *a, dvec pa, const geom_shape *b, dvec pb) {
    dvec va[4], vb[4];
    oracle_points(a, pa, va);
    oracle_points(b, pb, vb);
    double best = 1e300;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++)
            best = fmin(best, hypot(va[i].x - vb[k].x, va[i].y - vb[k].y));
    return best;
}

/* geom_distance_xf for two boxes (separating axes, then corner against face or the eight corners
 * against boxes): distance, closest points and normal against the vertex-edge brute force, in
 * 6,000 cases from overlapping to apart; both ways to the answer must come up. */
static void test_box_distance_many(void) {
    collide_rng rng = {1801};
    int apart = 0, overlapping = 0, by_corners = 0, by_face = 0;
    for (int i = 0; i < 6000; i++) {
        geom_shape a = box_for(&rng), b = box_for(&rng);
        float reach = geom_shape_radius(&a) + geom_shape_radius(&b);
        geom_xf xa = geom_xf_make(
            v2(collide_rng_range(&rng, -5, 5), collide_rng_range(&rng, -5, 5)), angle_for(&rng));
        float dir = collide_rng_range(&rng, 0, 6.2831853f);
        float len = collide_rng_range(&rng, 0.2f, 1.5f) * reach;
        geom_xf xb =
            geom_xf_make(v2_add(xa.p, v2(len * cosf(dir), len * sinf(dir))), angle_for(&rng));
        geom_closest c;
        float d = geom_distance_xf(&a, xa, &b, xb, &c);
        geom_shape ta = turned(&a, atan2(xa.q.y, xa.q.x)), tb = turned(&b, atan2(xb.q.y, xb.q.x));
        dvec pa = dv(xa.p.x, xa.p.y), pb = dv(xb.p.x, xb.p.y);
        double gap = oracle_gap(&ta, pa, &tb, pb, NULL);
        if (gap < -1e-4) {
            overlapping++;
            CHECK_MSG(c.overlap && d == 0.0f, "box case %d: overlap missed (gap %g, d %g)", i, gap,
                      (double)d);
            continue;
        }
        if (gap < 1e-4) continue; /* touching: either answer */
        apart++;
        double bd = brute_distance(&ta, pa, &tb, pb);
        CHECK_MSG(!c.overlap && fabs(d - bd) < 1e-4, "box case %d: %.7f vs %.7f", i, (double)d, bd);
        vec2 gapv = v2_sub(c.point_b, c.point_a);
        CHECK_MSG(fabs(v2_len(gapv) - d) < 1e-4, "box case %d: points %g apart, distance %g", i,
                  (double)v2_len(gapv), (double)d);
        CHECK_MSG(v2_dot(gapv, c.normal) > 0.99f * d, "box case %d: normal", i);
        CHECK(fabs(v2_len(c.normal) - 1.0) < 1e-5);
        /* the closest points lie on the shapes (within rounding of their boundary) */
        dvec va[4], vb[4];
        oracle_points(&ta, pa, va);
        oracle_points(&tb, pb, vb);
        CHECK_MSG(point_polygon(dv(c.point_a.x, c.point_a.y), va, 4) < 1e-4 &&
                      point_polygon(dv(c.point_b.x, c.point_b.y), vb, 4) < 1e-4,
                  "box case %d: closest points off the boxes", i);
        if (fabs(corner_corner(&ta, pa, &tb, pb) - bd) < 1e-6)
            by_corners++;
        else
            by_face++;
    }
    printf("  %d apart (%d corner to corner, %d corner to face), %d overlapping\n", apart,
           by_corners, by_face, overlapping);
    CHECK(apart > 3000 && overlapping > 1000 && by_corners > 300 && by_face > 2000);
}

/* Two boxes whose corners meet head-on: A's farthest corner along a random u runs at B's farthest
 * corner along -u (give or take 1e-3 across), turning a little, so the last steps of the
 * advancement see a corner against a corner, where the face separation is less than the
 * distance and only the exact distance may decide the arrival. */
static void make_corner_case(collide_rng *rng, const geom_shape *a, const geom_shape *b,
                             geom_motion *ma, geom_motion *mb) {
    vec2 u = start_case(rng, ma, mb);
    vec2 ca = v2(0, 0), cb = v2(0, 0);
    float best_a = -INFINITY, best_b = INFINITY;
    for (int k = 0; k < 4; k++) {
        vec2 sgn = v2(k & 1 ? 1.0f : -1.0f, k & 2 ? 1.0f : -1.0f);
        vec2 pa = geom_rotate(v2(cosf(ma->a0), sinf(ma->a0)),
                              v2(sgn.x * a->u.half_extents.x, sgn.y * a->u.half_extents.y));
        vec2 pb = geom_rotate(v2(cosf(mb->a0), sinf(mb->a0)),
                              v2(sgn.x * b->u.half_extents.x, sgn.y * b->u.half_extents.y));
        if (v2_dot(pa, u) > best_a) best_a = v2_dot(pa, u), ca = pa;
        if (v2_dot(pb, u) < best_b) best_b = v2_dot(pb, u), cb = pb;
    }
    float gap = collide_rng_range(rng, 0.05f, 0.5f);
    vec2 across = v2_scale(v2_perp(u), collide_rng_range(rng, -1e-3f, 1e-3f));
    mb->p0 = v2_add(v2_add(ma->p0, v2_sub(ca, cb)), v2_add(v2_scale(u, gap), across));
    ma->dp = v2_scale(u, gap + collide_rng_range(rng, 0.01f, 0.3f));
    ma->da = collide_rng_range(rng, -0.05f, 0.05f);
}

/* geom_toi_turning for two boxes (the separation steps, the corner-against-face answer, and the
 * discs' entry time that skips the approach): 3,600 cases, moving and spinning (from far apart
 * to just apart), spinning only, starting in contact, and corners meeting head-on, each against
 * 2,000 sub-steps of the exact overlap test, and a hit's gap by the brute-force distance. */
static void test_toi_box_box_many(void) {
    static const scenario scs[3] = {MOVE_AND_SPIN, SPIN_ONLY, START_IN_CONTACT};
    for (int k = 0; k < 3; k++) {
        collide_rng rng = {1900u + (unsigned)k};
        tally total = {0, 0, 0, 0, 0};
        int cases = 900;
        for (int i = 0; i < cases; i++) {
            geom_shape a = box_for(&rng), b = box_for(&rng);
            geom_motion ma, mb;
            make_case(&rng, scs[k], &a, &b, &ma, &mb);
            check_case_n(&a, &ma, &b, &mb, scs[k], "box-box many", i, &total, 2000);
        }
        printf("  box-box %s: %d hits, %d separated, %d in contact at the start, %d at the bound, "
               "%d with a brute-force overlap\n",
               scenario_names[scs[k]], total.hits, total.separated, total.start, total.iterations,
               total.brute_overlaps);
        if (scs[k] == MOVE_AND_SPIN) CHECK(total.hits > cases / 2 && total.separated > cases / 20);
        if (scs[k] == SPIN_ONLY) CHECK(total.hits > cases / 5);
        if (scs[k] == START_IN_CONTACT) CHECK(total.start > cases / 2);
        CHECK(total.iterations <= cases / 20);
    }
    /* corners head-on: every hit must still stand within target + tolerance by the brute-force
     * distance (check_case_n's tightness) */
    collide_rng rng = {1950u};
    tally total = {0, 0, 0, 0, 0};
    for (int i = 0; i < 900; i++) {
        geom_shape a = box_for(&rng), b = box_for(&rng);
        geom_motion ma, mb;
        make_corner_case(&rng, &a, &b, &ma, &mb);
        check_case_n(&a, &ma, &b, &mb, MOVE_AND_SPIN, "box-box corners", i, &total, 2000);
    }
    printf("  box-box corners head-on: %d hits, %d separated, %d at the bound\n", total.hits,
           total.separated, total.iterations);
    CHECK(total.hits > 800);
}

/* A defined answer at the iteration bound: a motion whose gap shrinks more slowly than the
 * bound says (a fast spin next to a wall it does not reach) stops at a safe time, flagged. */
static void test_iteration_bound(void) {
    geom_shape bar, wall;
    CHECK(geom_make_box(v2(2.0f, 0.1f), &bar) == GEOM_OK);
    CHECK(geom_make_box(v2(10.0f, 0.05f), &wall) == GEOM_OK);
    /* the bar's ends pass 0.01 under the wall while it turns half a turn */
    geom_motion ma = {v2(0, 0), 0.0f, v2(0, 0), 3.14159265f};
    geom_motion mb = {v2(0, 2.0f + 0.05f + 0.01f), 0.0f, v2(0, 0), 0.0f};
    geom_toi_result r;
    CHECK(geom_toi_turning(&bar, &ma, &wall, &mb, TARGET, TOLERANCE, &r));
    CHECK(r.state == GEOM_TOI_ITERATIONS);
    CHECK(r.t > 0.0f && r.t < 0.5f);
    for (int k = 0; k <= SUBSTEPS; k++)
        if ((double)k / SUBSTEPS <= r.t)
            CHECK(gap_at(&bar, &ma, &wall, &mb, (double)k / SUBSTEPS) > 0);
}

/* geom_box_turned_aabb (a turning box's AABB each tick, without its turned shape) against the
 * shape it stands for: geom_shape_aabb of geom_shape_orient's polygon, bit for bit, and the
 * corners turned in double within float rounding; 8,000 boxes from slivers to 2 across at random
 * angles and at quarter turns (where cos or sin is 0 or -0). */
static void test_box_turned_aabb(void) {
    collide_rng rng = {1901};
    for (int i = 0; i < 8000; i++) {
        geom_shape box = box_for(&rng);
        float ang = angle_for(&rng);
        vec2 q = v2(cosf(ang), sinf(ang)), h = box.u.half_extents;
        geom_shape turned;
        geom_shape_orient(&box, q, &turned);
        aabb want = geom_shape_aabb(&turned, v2(0.0f, 0.0f)), got = geom_box_turned_aabb(h, q);
        CHECK_MSG(got.min.x == want.min.x && got.min.y == want.min.y && got.max.x == want.max.x &&
                      got.max.y == want.max.y,
                  "case %d: h %.9g %.9g angle %.9g: (%.9g %.9g %.9g %.9g), shape's (%.9g %.9g "
                  "%.9g %.9g)",
                  i, h.x, h.y, ang, got.min.x, got.min.y, got.max.x, got.max.y, want.min.x,
                  want.min.y, want.max.x, want.max.y);
        double ex = 0, ey = 0;
        for (int k = 0; k < 4; k++) {
            double x = (k & 1 ? 1 : -1) * (double)h.x, y = (k & 2 ? 1 : -1) * (double)h.y;
            ex = fmax(ex, fabs((double)q.x * x - (double)q.y * y));
            ey = fmax(ey, fabs((double)q.y * x + (double)q.x * y));
        }
        CHECK_MSG(fabs(got.max.x - ex) <= 1e-6 && fabs(got.max.y - ey) <= 1e-6 &&
                      got.min.x == -got.max.x && got.min.y == -got.max.y,
                  "case %d: extents %.9g %.9g, corners %.9g %.9g", i, got.max.x, got.max.y, ex, ey);
    }
}

/* geom_toi_turning_box_fixed (the turning tick's advancement against a box tile) against
 * geom_toi_turning_leaving on the same case with B's motion {pb, 0, (0, 0), 0}: the same time
 * bit for bit where the general answer is true, 2 where it is false. 20,000 cases: a box of any
 * size at any angle (quarter turns included, where cos or sin is 0) moving and turning by up to
 * 0.3 rad near a box from a unit tile to a bar, from overlapping through touching at the target
 * (a mover resting where the last tick's advancement stopped) to a body length apart, with the
 * caller's horizon `before` anywhere in (0, 1] or absent. */
static void test_toi_box_fixed_same(void) {
    collide_rng rng = {2101};
    int hits = 0, starts = 0, leaves = 0;
    for (int i = 0; i < 20000; i++) {
        geom_shape a = box_for(&rng), b;
        MUST(geom_make_box(i % 3 ? v2(0.5f, 0.5f)
                                 : v2(collide_rng_range(&rng, 0.05f, 3.0f),
                                      collide_rng_range(&rng, 0.05f, 3.0f)),
                           &b) == GEOM_OK);
        vec2 ha = a.u.half_extents, hb = b.u.half_extents;
        float ra = geom_shape_radius(&a);
        vec2 pb =
            v2(collide_rng_range(&rng, -20.0f, 20.0f), collide_rng_range(&rng, -20.0f, 20.0f));
        if (i % 4 == 0) pb = v2(floorf(pb.x) + 0.5f, floorf(pb.y) + 0.5f); /* a tile's centre */
        geom_motion ma;
        ma.a0 = angle_for(&rng);
        vec2 q = v2(cosf(ma.a0), sinf(ma.a0));
        /* A beside a face of B, the gap along that face's normal from overlap to far; every
         * fourth exactly at the target (the start in contact of a resting mover) */
        int side = (int)(collide_rng_next(&rng) % 4);
        vec2 n = side == 0 ? v2(1, 0) : side == 1 ? v2(-1, 0) : side == 2 ? v2(0, 1) : v2(0, -1);
        float ext = fabsf(q.x * ha.x) * fabsf(n.x) + fabsf(q.y * ha.y) * fabsf(n.x) +
                    fabsf(q.y * ha.x) * fabsf(n.y) + fabsf(q.x * ha.y) * fabsf(n.y);
        float gap = i % 4 == 1 ? TARGET : collide_rng_range(&rng, -0.05f, 1.5f);
        float across = collide_rng_range(&rng, -1.0f, 1.0f) * (n.x != 0.0f ? hb.y : hb.x);
        ma.p0 = v2_add(pb, v2_add(v2_scale(n, (n.x != 0.0f ? hb.x : hb.y) + ext + gap),
                                  v2(n.y != 0.0f ? across : 0.0f, n.x != 0.0f ? across : 0.0f)));
        float speed = collide_rng_range(&rng, 0.0f, 0.3f),
              dir = collide_rng_range(&rng, 0, 6.2832f);
        ma.dp = i % 10 == 0 ? v2(0, 0) : v2(speed * cosf(dir), speed * sinf(dir));
        if (i % 3 == 0) ma.dp = v2_add(ma.dp, v2_scale(n, -0.1f)); /* towards B */
        ma.da = i % 25 == 0 ? 0.0f : collide_rng_range(&rng, -0.3f, 0.3f);
        float before = i % 5 == 0 ? 2.0f : i % 5 == 1 ? 1.0f : collide_rng_range(&rng, 0.0f, 1.0f);
        geom_motion mb = {pb, 0.0f, v2(0, 0), 0.0f};
        geom_toi_result r;
        bool hit = geom_toi_turning_leaving(&a, &ma, &b, &mb, TARGET, TOLERANCE, before, &r);
        float want = hit ? r.t : 2.0f;
        geom_toi_result rs;
        leaves += geom_toi_turning_before(&a, &ma, &b, &mb, TARGET, TOLERANCE, before, &rs) &&
                  rs.state == GEOM_TOI_START_CONTACT && r.state != GEOM_TOI_START_CONTACT;
        geom_turning_box tb = {ha, ra, geom_turn_start(ma.a0), ma};
        float got =
            geom_toi_turning_box_fixed(&tb, hb.x, hb.y, pb.x, pb.y, TARGET, TOLERANCE, before);
        CHECK_MSG(memcmp(&got, &want, sizeof got) == 0,
                  "case %d: box_fixed %.9g, general %.9g (state %d, %d steps)", i, (double)got,
                  (double)want, (int)r.state, r.iterations);
        hits += hit;
        starts += hit && r.state == GEOM_TOI_START_CONTACT;
    }
    /* the cases reach every answer: contacts during the motion, starts in contact that stay and
     * that leave, and none (4,530 hits of which 2,180 at the start, 1,370 starts left, when
     * written) */
    CHECK_MSG(hits - starts > 500 && starts > 1000 && leaves > 500 && hits < 15000,
              "hits %d, starts in contact %d, left %d", hits, starts, leaves);
}

TEST_MAIN(TEST(test_distance_every_pair), TEST(test_toi_move_and_spin), TEST(test_toi_spin_only),
          TEST(test_toi_start_in_contact), TEST(test_toi_grazing), TEST(test_iteration_bound),
          TEST(test_box_distance_many), TEST(test_toi_box_box_many), TEST(test_box_turned_aabb),
          TEST(test_toi_box_fixed_same), TEST(test_toi_leaving_every_pair),
          TEST(test_toi_leaving_rocking), TEST(test_toi_leaving_pressed))

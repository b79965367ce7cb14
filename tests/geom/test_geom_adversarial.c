/* geom: property tests aimed where geometry code breaks, judged by the double-precision oracles
 * of oracle.h.
 *
 * test_geom_props.c draws uniform random placements; they almost never land within a few ulps of
 * a face, which is where a circle-polygon normal was once up to 1.5 rad off (issue 10: the normal
 * came from a cancelling float difference). The generators here place one shape's support point
 * (a vertex, a corner, a circle's rim) exactly on the other's face, edge point or vertex, then
 * nudge it across by 0, +-1, +-10 or +-1000 ulps; they also place identical shapes at one spot,
 * tiny shapes against huge ones, bodies 1e4-1e5 from the origin, slivers, nearly collinear polygons
 * and 16-vertex near-circles, and move them parallel to, into and away from the contact face.
 *
 * The rules checked (geom.h's contract):
 *   overlap: hit exactly when the oracle gap is negative (outside a tolerance); the depth is the
 *            oracle's least penetration, and the normal is an axis of least penetration.
 *   sweep:   a motion that takes the shapes deeper than they start (or than the slop) is reported,
 *            no later than that deeper overlap first appears; a motion that opens every
 *            near-touching axis is never reported (nothing sticks); a hit at t = 0 carries a
 *            least-penetration axis that the motion closes; a hit from a separated start is a
 *            touching placement with a touching normal.
 *   ray:     as in test_geom_props.c, plus "a ray that goes clearly inside from clearly outside
 *            hits".
 * Tolerances scale with the coordinates' ulp and the shapes' size, so the far and huge cases are
 * judged as strictly as float allows and no more. GEOM_PROPS_SCALE=N multiplies the cases. */
#include "geom.h"
#include "harness.h"
#include "oracle.h"

#include <float.h>

static const geom_shape_kind kinds[3] = {GEOM_SHAPE_BOX, GEOM_SHAPE_POLYGON, GEOM_SHAPE_CIRCLE};
static const char *kind_names[4] = {"?", "box", "polygon", "circle"};

static int cases_scale(void) {
    const char *env = getenv("GEOM_PROPS_SCALE");
    int scale = env ? atoi(env) : 1;
    return scale > 0 ? scale : 1;
}

static dvec to_d(vec2 a) { return dv(a.x, a.y); }
static dvec at_time(vec2 p, vec2 d, double t) { return dv(p.x + t * d.x, p.y + t * d.y); }
static bool unit_length(vec2 n) {
    return fabs(sqrt((double)n.x * n.x + (double)n.y * n.y) - 1) < 1e-5;
}

/* ---- Shapes -------------------------------------------------------------------------------- */

typedef enum shape_style {
    STYLE_PLAIN,       /* the props generator's shapes */
    STYLE_SLIVER,      /* a triangle or box 1e-3..1e-2 as thick as it is long */
    STYLE_FLAT,        /* a polygon of many nearly collinear vertices on a shallow arc */
    STYLE_NEAR_CIRCLE, /* 16 vertices on a circle */
    STYLE_COUNT
} shape_style;

static const char *style_names[STYLE_COUNT] = {"plain", "sliver", "flat", "near-circle"};

static vec2 rotated(vec2 p, float c, float s) { return v2(p.x * c - p.y * s, p.x * s + p.y * c); }

/* A polygon from points (any order): the hull, or false when geom refuses it. */
static bool hull_of(vec2 *pts, int n, float scale, geom_shape *out) {
    for (int i = 0; i < n; i++)
        pts[i] = v2_scale(pts[i], scale);
    return geom_make_hull(pts, n, out) == GEOM_OK;
}

static bool try_shape(collide_rng *rng, geom_shape_kind kind, shape_style style, float scale,
                      geom_shape *out) {
    float rot = collide_rng_range(rng, 0, 6.2831853f), c = cosf(rot), s = sinf(rot);
    vec2 pts[GEOM_MAX_POLYGON_VERTICES];
    if (kind == GEOM_SHAPE_CIRCLE)
        return geom_make_circle(scale * collide_rng_range(rng, 0.2f, 2.0f), out) == GEOM_OK;
    if (kind == GEOM_SHAPE_BOX) {
        float hx = collide_rng_range(rng, 0.2f, 2.0f), hy = collide_rng_range(rng, 0.2f, 2.0f);
        if (style == STYLE_SLIVER) hy = hx * collide_rng_range(rng, 1e-3f, 1e-2f);
        vec2 h = v2_scale(v2(hx, hy), scale);
        if (collide_rng_next(rng) & 1) h = v2(h.y, h.x);
        return geom_make_box(h, out) == GEOM_OK;
    }
    int n = 0;
    switch (style) {
    case STYLE_PLAIN: {
        geom_shape p =
            oracle_random_shape(rng, GEOM_SHAPE_POLYGON, 3 + (int)(collide_rng_next(rng) % 10));
        n = p.u.polygon.count;
        for (int i = 0; i < n; i++)
            pts[i] = p.u.polygon.vertices[i];
        break;
    }
    case STYLE_SLIVER: {
        float thick = collide_rng_range(rng, 1e-3f, 1e-2f), apex = collide_rng_range(rng, -1, 1);
        pts[0] = v2(-1, 0);
        pts[1] = v2(1, 0);
        pts[2] = v2(apex, 2 * thick);
        n = 3;
        if (collide_rng_next(rng) & 1) pts[n++] = v2(-apex * 0.5f, -thick);
        break;
    }
    case STYLE_FLAT: {
        /* n points on a shallow arc stretched ten times along x: consecutive edges turn by a few
         * thousandths of a radian, far above the collinearity tolerance yet nearly straight, and
         * the lens stays thicker than GEOM_MIN_SIZE. */
        n = 5 + (int)(collide_rng_next(rng) % 8);
        double span = collide_rng_range(rng, 0.1f, 0.3f);
        for (int i = 0; i < n; i++) {
            /* 1 - cos(a) as 2 sin^2(a/2): no cancellation near a = 0. */
            double a = -span / 2 + span * i / (n - 1), sa = sin(a / 2), se = sin(span / 4);
            pts[i] = v2((float)(10 * sin(a)), (float)(2 * se * se - 2 * sa * sa));
        }
        break;
    }
    default: { /* STYLE_NEAR_CIRCLE */
        n = 16;
        for (int i = 0; i < n; i++) {
            float a = 6.2831853f * ((float)i + collide_rng_range(rng, -0.05f, 0.05f)) / 16.0f;
            pts[i] = v2(cosf(a), sinf(a));
        }
        break;
    }
    }
    for (int i = 0; i < n; i++)
        pts[i] = rotated(pts[i], c, s);
    return hull_of(pts, n, scale * collide_rng_range(rng, 0.5f, 2.0f), out);
}

static geom_shape adversarial_shape(collide_rng *rng, geom_shape_kind kind, shape_style style,
                                    float scale) {
    geom_shape s;
    /* A sliver of a tiny shape would be thinner than GEOM_MIN_SIZE, which geom refuses. */
    if (scale < 1 && style != STYLE_NEAR_CIRCLE) style = STYLE_PLAIN;
    for (int tries = 0; !try_shape(rng, kind, style, scale, &s); tries++)
        if (tries == 100) abort(); /* a generator geom always refuses is a bug in this test */
    return s;
}

/* Corners in body-local coordinates (a box's four, a polygon's vertices); 0 for a circle. */
static int local_points(const geom_shape *s, dvec *out) { return oracle_points(s, dv(0, 0), out); }

/* The point of shape s (local) furthest along u, and for a circle its rim point. */
static dvec local_support_point(const geom_shape *s, dvec u) {
    if (s->kind == GEOM_SHAPE_CIRCLE) return dv(u.x * s->u.radius, u.y * s->u.radius);
    dvec pts[GEOM_MAX_POLYGON_VERTICES] = {{0, 0}};
    int n = local_points(s, pts), best = 0;
    for (int i = 1; i < n; i++)
        if (dv_dot(u, pts[i]) > dv_dot(u, pts[best])) best = i;
    return pts[best];
}

/* ---- Placements ------------------------------------------------------------------------------ */

/* One case: A at pa, B at pb, and the contact frame the placement was built around (n from A
 * towards B, tangent t) for the motions. */
typedef struct placement {
    geom_shape a, b;
    vec2 pa, pb;
    dvec n, t;
    dvec contact; /* the point on A's boundary the placement was built on (world) */
    int nudge;    /* ulps B was moved along n (sign: away from A) */
    shape_style sa, sb;
    const char *how; /* for failure messages */
} placement;

static const int nudges[7] = {0, 1, -1, 10, -10, 1000, -1000};

/* Moves p by k ulps per coordinate in the direction of n's significant components. */
static vec2 nudge_ulps(vec2 p, dvec n, int k) {
    int steps = k < 0 ? -k : k;
    for (int i = 0; i < steps; i++) {
        if (fabs(n.x) > 0.3) p.x = nextafterf(p.x, (n.x > 0) == (k > 0) ? INFINITY : -INFINITY);
        if (fabs(n.y) > 0.3) p.y = nextafterf(p.y, (n.y > 0) == (k > 0) ? INFINITY : -INFINITY);
    }
    return p;
}

static vec2 far_or_near_position(collide_rng *rng, bool far, float scale) {
    if (!far)
        return v2(collide_rng_range(rng, -5, 5) * scale, collide_rng_range(rng, -5, 5) * scale);
    float x = collide_rng_range(rng, 1e4f, 1e5f), y = collide_rng_range(rng, 1e4f, 1e5f);
    return v2((collide_rng_next(rng) & 1) ? x : -x, (collide_rng_next(rng) & 1) ? y : -y);
}

/* Builds case `i` of the ordered pair (ka, kb). The case number picks the family, so every
 * family runs for every pair. */
static placement make_placement(collide_rng *rng, geom_shape_kind ka, geom_shape_kind kb, int i) {
    placement p;
    int family = i % 8;
    float scale_a = 1, scale_b = 1;
    bool far = false;
    p.how = "face";
    if (family == 5) { /* tiny against huge, either way round */
        p.how = "tiny-huge";
        if (collide_rng_next(rng) & 1)
            scale_a = 1e3f, scale_b = 1e-2f;
        else
            scale_a = 1e-2f, scale_b = 1e3f;
    } else if (family == 6) {
        p.how = "far";
        far = true;
    }
    shape_style sa = (shape_style)(collide_rng_next(rng) % STYLE_COUNT);
    shape_style sb = (shape_style)(collide_rng_next(rng) % STYLE_COUNT);
    p.sa = sa;
    p.sb = sb;
    p.a = adversarial_shape(rng, ka, sa, scale_a);
    p.b = adversarial_shape(rng, kb, sb, scale_b);
    p.pa = far_or_near_position(rng, far, scale_a);
    if (family == 7) { /* identical shapes at one place (kinds permitting) */
        p.how = "identical";
        if (ka == kb) p.b = p.a;
        p.pb = p.pa;
        p.contact = to_d(p.pa);
        p.nudge = 0;
        double ang = collide_rng_range(rng, 0, 6.2831853f);
        p.n = dv(cos(ang), sin(ang));
        p.t = dv(-p.n.y, p.n.x);
        return p;
    }
    /* A point on A's boundary and the outward normal there: a point along an edge (its ends a
     * fifth of the time, so vertex-vertex and rim-corner contacts come up), or a rim point. */
    dvec on, n;
    if (ka == GEOM_SHAPE_CIRCLE) {
        double ang = collide_rng_range(rng, 0, 6.2831853f);
        n = dv(cos(ang), sin(ang));
        on = dv(n.x * p.a.u.radius, n.y * p.a.u.radius);
    } else {
        dvec pts[GEOM_MAX_POLYGON_VERTICES];
        int count = local_points(&p.a, pts), e = (int)(collide_rng_next(rng) % (unsigned)count);
        dvec v0 = pts[e], v1 = pts[(e + 1) % count];
        unsigned pick = collide_rng_next(rng) % 10;
        double u = pick == 0 ? 0.0 : pick == 1 ? 1.0 : collide_rng_unit(rng);
        on = dv(v0.x + u * (v1.x - v0.x), v0.y + u * (v1.y - v0.y));
        n = dv_unit(dv(v1.y - v0.y, v0.x - v1.x));
    }
    /* B's support point towards A (along -n), or now and then any corner of B, put on it. */
    dvec sb_local = local_support_point(&p.b, dv(-n.x, -n.y));
    if (kb != GEOM_SHAPE_CIRCLE && collide_rng_next(rng) % 6 == 0) {
        dvec pts[GEOM_MAX_POLYGON_VERTICES];
        int count = local_points(&p.b, pts);
        sb_local = pts[collide_rng_next(rng) % (unsigned)count];
        p.how = "corner-on-face";
    }
    dvec pb = dv(p.pa.x + on.x - sb_local.x, p.pa.y + on.y - sb_local.y);
    p.nudge = nudges[collide_rng_next(rng) % 7];
    p.pb = nudge_ulps(v2((float)pb.x, (float)pb.y), n, p.nudge);
    p.n = n;
    p.t = dv(-n.y, n.x);
    p.contact = dv(p.pa.x + on.x, p.pa.y + on.y);
    return p;
}

/* The tolerance of a case: what rounding the positions to float and differencing them in float
 * can move a gap by, plus float arithmetic over the shapes' sizes. */
static double tolerance(const placement *p) {
    double coord = fmax(fmax(fabs(p->pa.x), fabs(p->pa.y)), fmax(fabs(p->pb.x), fabs(p->pb.y)));
    double reach = oracle_bound_radius(&p->a) + oracle_bound_radius(&p->b);
    return 4 * coord * FLT_EPSILON + 64 * reach * FLT_EPSILON + 1e-7;
}

static bool describe_fail(const placement *p, geom_shape_kind ka, geom_shape_kind kb, int i) {
    fprintf(stderr, "  %s (%s) - %s (%s) case %d (%s, nudge %d ulps): pa %.9g %.9g pb %.9g %.9g\n",
            kind_names[ka], style_names[p->sa], kind_names[kb], style_names[p->sb], i, p->how,
            p->nudge, p->pa.x, p->pa.y, p->pb.x, p->pb.y);
    const geom_shape *shapes[2] = {&p->a, &p->b};
    for (int k = 0; k < 2; k++) {
        const geom_shape *sh = shapes[k];
        fprintf(stderr, "  %c: ", "AB"[k]);
        if (sh->kind == GEOM_SHAPE_CIRCLE) fprintf(stderr, "radius %.9g", sh->u.radius);
        if (sh->kind == GEOM_SHAPE_BOX)
            fprintf(stderr, "half %.9g %.9g", sh->u.half_extents.x, sh->u.half_extents.y);
        if (sh->kind == GEOM_SHAPE_POLYGON)
            for (int v = 0; v < sh->u.polygon.count; v++)
                fprintf(stderr, "(%.9g, %.9g) ", sh->u.polygon.vertices[v].x,
                        sh->u.polygon.vertices[v].y);
        fputc('\n', stderr);
    }
    return false;
}

/* ---- Overlap ----------------------------------------------------------------------------- */

static void check_overlap_case(const placement *p, geom_shape_kind ka, geom_shape_kind kb, int i,
                               int *hits) {
    double tol = tolerance(p);
    geom_contact c;
    bool hit = geom_overlap(&p->a, p->pa, &p->b, p->pb, &c);
    double g = oracle_gap(&p->a, to_d(p->pa), &p->b, to_d(p->pb), NULL);
    if (fabs(g) > tol)
        CHECK_MSG(hit == (g < 0) || describe_fail(p, ka, kb, i), "hit %d, oracle gap %g", hit, g);
    if (!hit) return;
    (*hits)++;
    CHECK_MSG((unit_length(c.normal) && c.depth > 0 && isfinite(c.depth)) ||
                  describe_fail(p, ka, kb, i),
              "normal %g %g depth %g", c.normal.x, c.normal.y, c.depth);
    CHECK_MSG(fabs(c.depth + g) <= tol || describe_fail(p, ka, kb, i), "depth %.9g, oracle %.9g",
              c.depth, -g);
    /* The normal is an axis of least penetration: along it the gap is the oracle's gap. This is
     * the check the issue-10 normal failed by up to 1.6 units. */
    double gn = oracle_gap_dir(&p->a, to_d(p->pa), &p->b, to_d(p->pb), to_d(c.normal));
    CHECK_MSG(fabs(gn - g) <= tol || describe_fail(p, ka, kb, i),
              "gap %.9g along the normal (%.9g %.9g), oracle %.9g", gn, c.normal.x, c.normal.y, g);
    /* Mirrored: the same depth (touching within float may go either way). */
    if (fabs(g) <= tol) return;
    geom_contact m;
    CHECK_MSG(geom_overlap(&p->b, p->pb, &p->a, p->pa, &m) || describe_fail(p, ka, kb, i),
              "mirror misses");
    CHECK_MSG(fabs(m.depth - c.depth) <= tol || describe_fail(p, ka, kb, i), "mirror depth %g/%g",
              m.depth, c.depth);
}

/* ---- Sweep ----------------------------------------------------------------------------------- */

#define SUBSTEPS 96

typedef struct motion {
    vec2 da, db;
    const char *how;
} motion;

/* Motion `j` for a placement: along the contact face (exactly, or tilted by 1e-3 / 1e-2 rad
 * either way), into it, away from it, or anything; A, B or both move. */
static motion make_motion(collide_rng *rng, const placement *p, int j) {
    double len = fmax(oracle_bound_radius(&p->a), oracle_bound_radius(&p->b));
    len = fmin(len, 4 * fmin(oracle_bound_radius(&p->a), oracle_bound_radius(&p->b)) + 1e-2);
    len *= collide_rng_range(rng, 0.05f, 2.0f);
    dvec dir;
    motion m;
    double side = (collide_rng_next(rng) & 1) ? 1 : -1;
    switch (j % 4) {
    case 0: {
        static const double tilts[5] = {0, 1e-3, -1e-3, 1e-2, -1e-2};
        double tilt = tilts[collide_rng_next(rng) % 5];
        dir = dv(side * p->t.x + tilt * p->n.x, side * p->t.y + tilt * p->n.y);
        m.how = "parallel";
        break;
    }
    case 1: { /* relative motion of A towards B: closing along n */
        double a = collide_rng_range(rng, -1.4f, 1.4f);
        dir = dv(cos(a) * p->n.x + sin(a) * p->t.x, cos(a) * p->n.y + sin(a) * p->t.y);
        m.how = "closing";
        break;
    }
    case 2: {
        double a = collide_rng_range(rng, -1.4f, 1.4f);
        dir = dv(-cos(a) * p->n.x + sin(a) * p->t.x, -cos(a) * p->n.y + sin(a) * p->t.y);
        m.how = "opening";
        break;
    }
    default: {
        double a = collide_rng_range(rng, 0, 6.2831853f);
        dir = dv(cos(a), sin(a));
        m.how = "any";
        break;
    }
    }
    vec2 d = v2((float)(dir.x * len), (float)(dir.y * len));
    unsigned who = collide_rng_next(rng) % 3;
    if (who == 0) {
        m.da = d;
        m.db = v2(0, 0);
    } else if (who == 1) {
        m.da = v2(0, 0);
        m.db = v2_neg(d);
    } else {
        m.da = v2_scale(d, 0.5f);
        m.db = v2_scale(d, -0.5f);
    }
    return m;
}

static double gap_at(const placement *p, const motion *m, double t) {
    return oracle_gap(&p->a, at_time(p->pa, m->da, t), &p->b, at_time(p->pb, m->db, t), NULL);
}

/* How the motion meets the oracle axes within `tie` of the largest gap at the start: whether
 * every one of them is opened at a clear rate (then the gap only grows, being convex in t, and no
 * hit is allowed), and whether some close while others do not (a tie the start rule may break
 * either way, so the mirrored query may differ). */
typedef struct near_axes {
    bool all_open;
    bool mixed;
} near_axes;

static near_axes classify_near_axes(const placement *p, vec2 d, double g0, double tie) {
    oracle_dirs dirs;
    oracle_dirs_for(&dirs, &p->a, to_d(p->pa), &p->b, to_d(p->pb));
    double speed = sqrt((double)d.x * d.x + (double)d.y * d.y);
    bool any_close = false, any_not = false, all_open = true;
    for (int k = 0; k < dirs.count; k++) {
        double gk = oracle_gap_dir(&p->a, to_d(p->pa), &p->b, to_d(p->pb), dirs.dir[k]);
        if (gk < g0 - tie) continue;
        double v = dv_dot(dirs.dir[k], to_d(d));
        if (!(v < -0.02 * speed)) all_open = false;
        if (v > 0)
            any_close = true;
        else
            any_not = true;
    }
    near_axes r = {all_open, any_close && any_not};
    return r;
}

static void check_sweep_case(const placement *p, const motion *m, geom_shape_kind ka,
                             geom_shape_kind kb, int i, int *hits, int *stuck_checks) {
    double tol = tolerance(p);
    vec2 d = v2_sub(m->da, m->db);
    geom_toi hit;
    bool got = geom_sweep(&p->a, p->pa, m->da, &p->b, p->pb, m->db, &hit);
    double g0 = gap_at(p, m, 0);
    if (got) {
        (*hits)++;
        CHECK_MSG(
            (hit.t >= 0 && hit.t <= 1 && unit_length(hit.normal) && v2_dot(hit.normal, d) > 0) ||
                describe_fail(p, ka, kb, i),
            "%s motion da %.9g %.9g db %.9g %.9g: t %g normal %g %g", m->how, m->da.x, m->da.y,
            m->db.x, m->db.y, hit.t, hit.normal.x, hit.normal.y);
    }
    /* Deeper than the start (or than the slop) somewhere along the motion: must be reported by
     * then. */
    double limit = fmin(g0, -(double)GEOM_LINEAR_SLOP) - tol;
    double first_deep = 2.0;
    for (int k = 0; k <= SUBSTEPS; k++) {
        double t = (double)k / SUBSTEPS;
        if (gap_at(p, m, t) < limit) {
            first_deep = t;
            break;
        }
    }
    if (first_deep <= 1.0)
        CHECK_MSG((got && hit.t <= first_deep + 1e-6) || describe_fail(p, ka, kb, i),
                  "%s motion goes %.3g deep at t=%g; hit %d t %g (start gap %.3g)", m->how,
                  -gap_at(p, m, first_deep), first_deep, got, got ? hit.t : -1.0, g0);
    /* Opening every near-touching axis: nothing sticks. */
    near_axes axes = classify_near_axes(p, d, g0, 4 * tol);
    if (axes.all_open) {
        (*stuck_checks)++;
        CHECK_MSG(!got || describe_fail(p, ka, kb, i),
                  "%s motion opens the contact (start gap %.3g) but hit at t=%g normal %g %g",
                  m->how, g0, hit.t, hit.normal.x, hit.normal.y);
    }
    if (!got) return;
    if (hit.t == 0.0f) {
        /* A start hit names an axis of least penetration at the start. */
        double gn = oracle_gap_dir(&p->a, to_d(p->pa), &p->b, to_d(p->pb), to_d(hit.normal));
        CHECK_MSG(gn >= g0 - 4 * tol || g0 > GEOM_LINEAR_SLOP + tol || describe_fail(p, ka, kb, i),
                  "%s motion: start-hit normal (%g %g) has gap %.9g, oracle %.9g", m->how,
                  hit.normal.x, hit.normal.y, gn, g0);
    }
    if (g0 > GEOM_LINEAR_SLOP + tol) {
        /* From a separated start: touching at the hit, along the reported normal. */
        dvec qa = at_time(p->pa, m->da, hit.t), qb = at_time(p->pb, m->db, hit.t);
        double speed = sqrt((double)d.x * d.x + (double)d.y * d.y);
        double tol_t = tol + 1e-6 * speed; /* the hit time's float rounding, as distance */
        double g = oracle_gap(&p->a, qa, &p->b, qb, NULL);
        CHECK_MSG(fabs(g) <= tol_t || describe_fail(p, ka, kb, i), "%s motion: gap %g at the hit",
                  m->how, g);
        double gn = oracle_gap_dir(&p->a, qa, &p->b, qb, to_d(hit.normal));
        CHECK_MSG(fabs(gn) <= tol_t || describe_fail(p, ka, kb, i),
                  "%s motion: gap %g along the normal at the hit", m->how, gn);
    }
    /* Mirrored: the same event where the oracle forces one (a hit that the motion's depth demands
     * and no tie at the start); elsewhere, within float of touching, either answer is right in
     * each order. check_pair runs the mirrored case through the oracle's rules on its own. */
    if (first_deep > 1.0 || (hit.t == 0.0f && axes.mixed)) return;
    geom_toi mh;
    bool mgot = geom_sweep(&p->b, p->pb, m->db, &p->a, p->pa, m->da, &mh);
    CHECK_MSG(mgot || describe_fail(p, ka, kb, i), "%s motion: mirror misses", m->how);
    /* Times are as precise as gaps divided by the closing speed along the normal, the slower of
     * the two orders' normals: a start gap at the slop may be "touching" (t = 0, one axis) in one
     * order and "separated" in the other, entered along another axis that a grazing motion
     * closes slowly (seen in the x30 audit: 1.0045e-5 apart, closing 0.05 along the entry axis,
     * t = 2e-4). */
    double closing = fmin(fabs(v2_dot(d, hit.normal)), fabs(v2_dot(d, mh.normal)));
    CHECK_MSG(fabs(mh.t - hit.t) <= 1e-6 + (4 * tol + GEOM_LINEAR_SLOP) / closing ||
                  describe_fail(p, ka, kb, i),
              "%s motion da %.9g %.9g db %.9g %.9g: mirror t %g/%g, normals %g %g / %g %g, start "
              "gap %.9g, closing %g",
              m->how, m->da.x, m->da.y, m->db.x, m->db.y, mh.t, hit.t, mh.normal.x, mh.normal.y,
              hit.normal.x, hit.normal.y, g0, closing);
}

static void check_pair(geom_shape_kind ka, geom_shape_kind kb, unsigned seed) {
    collide_rng rng = {seed};
    int n = 1200 * cases_scale(), overlaps = 0, sweep_hits = 0, sweeps = 0, stuck_checks = 0;
    for (int i = 0; i < n; i++) {
        placement p = make_placement(&rng, ka, kb, i);
        int before = harness_failed_checks;
        check_overlap_case(&p, ka, kb, i, &overlaps);
        if (harness_failed_checks != before) return;
        for (int j = 0; j < 4; j++) {
            motion m = make_motion(&rng, &p, j);
            check_sweep_case(&p, &m, ka, kb, i, &sweep_hits, &stuck_checks);
            sweeps++;
            if (harness_failed_checks != before) return;
        }
        /* The same placement asked the other way round, judged on its own. */
        placement q = p;
        q.a = p.b;
        q.b = p.a;
        q.pa = p.pb;
        q.pb = p.pa;
        q.n = dv(-p.n.x, -p.n.y);
        q.t = dv(-p.t.x, -p.t.y);
        motion m = make_motion(&rng, &q, i);
        check_sweep_case(&q, &m, kb, ka, i, &sweep_hits, &stuck_checks);
        sweeps++;
        if (harness_failed_checks != before) return;
    }
    printf("     %s-%s: %d cases, %d overlapping; %d sweeps, %d hits, %d must-not-stick\n",
           kind_names[ka], kind_names[kb], n, overlaps, sweeps, sweep_hits, stuck_checks);
    /* The generators must reach both sides of every rule. */
    CHECK_MSG(overlaps > n / 10 && overlaps < n * 9 / 10, "%d of %d overlap", overlaps, n);
    CHECK_MSG(sweep_hits > sweeps / 10 && stuck_checks > sweeps / 20, "%d hits, %d stuck checks",
              sweep_hits, stuck_checks);
}

static void test_adversarial_every_pair(void) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int before = harness_failed_checks;
            check_pair(kinds[i], kinds[j], 31337u + 101u * (unsigned)(i * 3 + j));
            if (harness_failed_checks != before) return;
        }
}

/* ---- Rays --------------------------------------------------------------------------------------
 */

#define RAY_SAMPLES 256

static void check_rays(geom_shape_kind kind, unsigned seed) {
    collide_rng rng = {seed};
    int n = 3000 * cases_scale(), hits = 0, must_hit = 0;
    for (int i = 0; i < n; i++) {
        /* The shape is A of a placement against a point-sized circle: its rim point is the ray's
         * origin, on a face, an edge end or a rim, nudged by ulps. */
        placement p = make_placement(&rng, kind, GEOM_SHAPE_CIRCLE, i);
        vec2 origin = nudge_ulps(v2((float)p.contact.x, (float)p.contact.y), p.n, p.nudge);
        if (i % 8 == 7) origin = p.pa; /* from the centre: inside */
        /* B's motion relative to A: along, into or away from the face. */
        motion m = make_motion(&rng, &p, i / 8);
        vec2 disp = v2_sub(m.db, m.da);
        double tol = tolerance(&p);
        double sd0 = oracle_point_sd(&p.a, to_d(p.pa), to_d(origin));
        geom_ray_hit h;
        bool got = geom_ray_cast(&p.a, p.pa, origin, disp, &h);
        if (got) {
            hits++;
            CHECK_MSG(h.t >= 0 && h.t <= 1 && unit_length(h.normal) && v2_dot(h.normal, disp) <= 0,
                      "%s case %d (%s, %d ulps): t %g normal %g %g; pos %.9g %.9g origin %.9g "
                      "%.9g disp %.9g %.9g sd0 %g",
                      kind_names[kind], i, p.how, p.nudge, h.t, h.normal.x, h.normal.y, p.pa.x,
                      p.pa.y, origin.x, origin.y, disp.x, disp.y,
                      oracle_point_sd(&p.a, to_d(p.pa), to_d(origin)));
        }
        if (sd0 < -tol) {
            CHECK_MSG(!got, "%s case %d: hit from inside", kind_names[kind], i);
            continue;
        }
        if (sd0 <= tol) continue; /* on the boundary within float: either answer */
        double first_inside = 2.0;
        for (int k = 0; k <= RAY_SAMPLES; k++) {
            double t = (double)k / RAY_SAMPLES;
            if (oracle_point_sd(&p.a, to_d(p.pa), at_time(origin, disp, t)) < -4 * tol) {
                first_inside = t;
                break;
            }
        }
        if (first_inside <= 1.0) {
            must_hit++;
            CHECK_MSG(got && h.t <= first_inside + 1e-6,
                      "%s case %d (%s, %d ulps): inside at %g, hit %d at %g", kind_names[kind], i,
                      p.how, p.nudge, first_inside, got, got ? h.t : -1.0);
        }
        if (got) {
            dvec q = at_time(origin, disp, h.t);
            double speed = sqrt((double)disp.x * disp.x + (double)disp.y * disp.y);
            CHECK_MSG(fabs(oracle_point_sd(&p.a, to_d(p.pa), q)) <= tol + 1e-6 * speed,
                      "%s case %d: hit point off the boundary", kind_names[kind], i);
            double sup = oracle_support(&p.a, to_d(p.pa), to_d(h.normal));
            CHECK_MSG(fabs(sup - dv_dot(to_d(h.normal), q)) <= tol + 1e-6 * speed,
                      "%s case %d: the normal does not support the shape at the hit",
                      kind_names[kind], i);
        }
    }
    printf("     %s rays: %d cases, %d hits, %d must hit\n", kind_names[kind], n, hits, must_hit);
    CHECK(hits > n / 10 && must_hit > n / 40);
}

static void test_adversarial_rays(void) {
    for (int k = 0; k < 3; k++) {
        int before = harness_failed_checks;
        check_rays(kinds[k], 777u + (unsigned)k);
        if (harness_failed_checks != before) return;
    }
}

/* ---- The cases of issue 10, by name ------------------------------------------------------- */

static geom_shape polygon3(vec2 a, vec2 b, vec2 c) {
    vec2 v[3] = {a, b, c};
    geom_shape s;
    if (geom_make_polygon(v, 3, &s)) abort();
    return s;
}

static geom_shape circle_of(float r) {
    geom_shape s;
    if (geom_make_circle(r, &s)) abort();
    return s;
}

/* Checks an overlap against the oracle: depth and a least-penetration normal. */
static void check_overlap_exact(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb) {
    geom_contact c;
    double g = oracle_gap(a, to_d(pa), b, to_d(pb), NULL);
    CHECK(g < 0);
    CHECK(geom_overlap(a, pa, b, pb, &c));
    CHECK_NEAR(c.depth, -g, 1e-5);
    CHECK_NEAR(oracle_gap_dir(a, to_d(pa), b, to_d(pb), to_d(c.normal)), g, 1e-5);
    /* Separating by the MTV leaves the shapes touching, not overlapping. */
    vec2 moved = v2_mul_add(pb, c.depth, c.normal);
    CHECK(oracle_gap(a, to_d(pa), b, to_d(moved), NULL) > -1e-5);
    /* The same in the mirrored order. */
    geom_contact m;
    CHECK(geom_overlap(b, pb, a, pa, &m));
    CHECK_NEAR(oracle_gap_dir(b, to_d(pb), a, to_d(pa), to_d(m.normal)), g, 1e-5);
}

/* A circle whose centre is 1e-6 outside the sloped edge y = 0.3x of a triangle. The normal was
 * (0, -1); the true one is the edge's outward normal. */
static void test_issue10_circle_near_sloped_face(void) {
    geom_shape a = polygon3(v2(0, 0), v2(10, 3), v2(0, 5)), b = circle_of(1);
    vec2 pa = v2(0, 0), pb = v2(2.0999999f, 0.629998982f);
    geom_contact c;
    CHECK(geom_overlap(&a, pa, &b, pb, &c));
    CHECK_NEAR(c.depth, 0.999999046, 1e-6);
    CHECK_NEAR(c.normal.x, 0.287347886, 1e-6);
    CHECK_NEAR(c.normal.y, -0.957826285, 1e-6);
    check_overlap_exact(&a, pa, &b, pb);
    /* Moving away along the face (separating): no hit. Moving 0.048 deeper: a hit at t = 0. */
    geom_toi t;
    CHECK(!geom_sweep(&b, pb, v2(0.5f, 0.1f), &a, pa, v2(0, 0), &t));
    CHECK(!geom_sweep(&a, pa, v2(0, 0), &b, pb, v2(0.5f, 0.1f), &t));
    CHECK(geom_sweep(&b, pb, v2(-0.5f, -0.1f), &a, pa, v2(0, 0), &t));
    CHECK(t.t == 0.0f);
    CHECK_NEAR(t.normal.x, -0.287347886, 1e-6);
    CHECK_NEAR(t.normal.y, 0.957826285, 1e-6);
    CHECK(geom_sweep(&a, pa, v2(0, 0), &b, pb, v2(-0.5f, -0.1f), &t));
    CHECK(t.t == 0.0f);
}

static void test_issue10_random_polygon_circle(void) {
    geom_shape a = polygon3(v2(1.06807446f, -1.38114989f), v2(0.44634226f, 1.10019493f),
                            v2(-0.779750228f, 0.986586452f));
    geom_shape b = circle_of(0.926390648f);
    check_overlap_exact(&a, v2(8.21553516f, -3.84732723f), &b, v2(7.73939323f, -2.8326087f));
}

static void test_issue10_tiny_circle_long_polygon(void) {
    geom_shape a = circle_of(0.00251313369f);
    geom_shape b = polygon3(v2(-4.23037624f, -25.5653477f), v2(4.23037624f, 25.5653477f),
                            v2(1.68116581f, 10.1855373f));
    check_overlap_exact(&a, v2(10.880106f, -18.3248119f), &b, v2(10.8796101f, -18.3247375f));
}

/* Found by the x30 audit of these generators, kept by name. A polygon 1e-2 across against a
 * circle of radius 1873 whose centre is in a vertex's region: the nearest vertex was picked in
 * float, wrongly, and the normal came out 4 degrees off. */
static void test_audit_tiny_polygon_far_circle(void) {
    vec2 v[6] = {{-0.00587154226f, -0.00889112335f}, {0.00464162324f, -0.00109298609f},
                 {0.00714939367f, 0.00575063238f},   {0.00624311063f, 0.00688747503f},
                 {-0.00247993902f, 0.00301606255f},  {-0.00839855243f, -0.00709163724f}};
    geom_shape poly;
    CHECK(geom_make_polygon(v, 6, &poly) == GEOM_OK);
    geom_shape c = circle_of(1873.41321f);
    vec2 pc = v2(885.199524f, 1481.9126f), pp = v2(-494.032532f, 214.096176f);
    geom_contact ct;
    CHECK(geom_overlap(&c, pc, &poly, pp, &ct));
    double g = oracle_gap(&c, to_d(pc), &poly, to_d(pp), NULL);
    /* positions ~1e3: float rounding of the offset alone is ~1e-4 */
    CHECK_NEAR(oracle_gap_dir(&c, to_d(pc), &poly, to_d(pp), to_d(ct.normal)), g, 1e-3);
    CHECK_NEAR(ct.depth, -g, 1e-3);
}

/* The same audit: a sliver 1,200 long swept against a circle of radius 0.014 near its acute
 * vertex. A vertex-circle hit was snapped to the adjacent edge's normal, which faced away from
 * the motion. */
static void test_audit_sliver_acute_vertex_sweep(void) {
    geom_shape sliver = polygon3(v2(-605.625671f, -208.828217f), v2(451.870972f, 150.332611f),
                                 v2(605.625671f, 208.828217f));
    geom_shape c = circle_of(0.01433546f);
    vec2 pa = v2(3862.55078f, -739.161499f), pb = v2(3256.92017f, -947.976074f);
    vec2 da = v2(-0.113232732f, -0.00193676678f);
    /* The motion reaches the circle (the generator's "closing" case): a hit is required, and
     * its normal must face the motion, in both orders. */
    geom_toi t;
    CHECK(geom_sweep(&sliver, pa, da, &c, pb, v2(0, 0), &t));
    CHECK_MSG(v2_dot(t.normal, da) > 0, "normal %g %g", t.normal.x, t.normal.y);
    dvec qa = at_time(pa, da, t.t);
    CHECK(fabs(oracle_gap(&sliver, qa, &c, to_d(pb), NULL)) <= 2e-3);
    CHECK(geom_sweep(&c, pb, v2(0, 0), &sliver, pa, da, &t));
    CHECK_MSG(v2_dot(t.normal, v2_neg(da)) > 0, "mirrored normal %g %g", t.normal.x, t.normal.y);
}

TEST_MAIN(TEST(test_audit_tiny_polygon_far_circle), TEST(test_audit_sliver_acute_vertex_sweep),
          TEST(test_issue10_circle_near_sloped_face), TEST(test_issue10_random_polygon_circle),
          TEST(test_issue10_tiny_circle_long_polygon), TEST(test_adversarial_every_pair),
          TEST(test_adversarial_rays))

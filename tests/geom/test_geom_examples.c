/* geom: worked examples, validation reasons, hull construction and degenerate inputs.
 * The randomized oracle comparisons live in test_geom_props.c. */
#include "geom.h"
#include "harness.h"

#include <float.h>

static geom_shape box(float hx, float hy) {
    geom_shape s;
    geom_shape_error err = geom_make_box(v2(hx, hy), &s);
    if (err) abort();
    return s;
}

static geom_shape circle(float r) {
    geom_shape s;
    if (geom_make_circle(r, &s)) abort();
    return s;
}

static bool finite_contact(geom_contact c) { return v2_is_finite(c.normal) && isfinite(c.depth); }
static bool finite_toi(geom_toi t) { return v2_is_finite(t.normal) && isfinite(t.t); }

/* Box A (half 1,1) at the origin, box B (half 2,1) at (2.5, 0.5): M = B (-) A is the box centred
 * at (2.5, 0.5) with half extents (3, 2), i.e. [-0.5, 5.5] x [-1.5, 2.5]. The origin lies inside,
 * 0.5 from the left edge (the closest), so the MTV is 0.5 along x, from A towards B. */
static void test_box_box_minkowski_difference(void) {
    geom_shape a = box(1, 1), b = box(2, 1);
    geom_contact c;
    CHECK(geom_overlap(&a, v2(0, 0), &b, v2(2.5f, 0.5f), &c));
    CHECK_NEAR(c.normal.x, 1.0, 0);
    CHECK_NEAR(c.normal.y, 0.0, 0);
    CHECK_NEAR(c.depth, 0.5, 1e-6);
    /* Just outside M's left edge and corners: no overlap; exactly on an edge: touching only. */
    CHECK(!geom_overlap(&a, v2(0, 0), &b, v2(3.0f, 0.5f), NULL));
    CHECK(!geom_overlap(&a, v2(0, 0), &b, v2(3.01f, 0.5f), NULL));
    CHECK(!geom_overlap(&a, v2(0, 0), &b, v2(2.5f, 2.0f), NULL));
    CHECK(geom_overlap(&a, v2(0, 0), &b, v2(2.5f, 1.9f), &c));
    /* Now the closest M edge is the bottom one (origin 0.1 above it): MTV along +y. */
    CHECK_NEAR(c.normal.x, 0.0, 0);
    CHECK_NEAR(c.normal.y, 1.0, 0);
    CHECK_NEAR(c.depth, 0.1, 1e-6);
    /* The AABB of M as the world would build it from the two shapes' AABBs. */
    aabb ba = geom_shape_aabb(&a, v2(0, 0)), bb = geom_shape_aabb(&b, v2(2.5f, 0.5f));
    CHECK_NEAR(bb.min.x - ba.max.x, -0.5, 1e-6);
    CHECK_NEAR(bb.max.x - ba.min.x, 5.5, 1e-6);
}

/* The penetration vector along each axis and each sign. */
static void test_penetration_each_axis(void) {
    geom_shape a = box(1, 1), b = box(1, 1);
    struct {
        vec2 pb, normal;
        float depth;
    } cases[] = {
        {{1.5f, 0.2f}, {1, 0}, 0.5f},
        {{-1.5f, 0.2f}, {-1, 0}, 0.5f},
        {{0.2f, 1.75f}, {0, 1}, 0.25f},
        {{-0.2f, -1.75f}, {0, -1}, 0.25f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        geom_contact c, m;
        CHECK(geom_overlap(&a, v2(0, 0), &b, cases[i].pb, &c));
        CHECK_NEAR(c.normal.x, cases[i].normal.x, 0);
        CHECK_NEAR(c.normal.y, cases[i].normal.y, 0);
        CHECK_NEAR(c.depth, cases[i].depth, 1e-6);
        /* Mirrored order: same depth, opposite normal. */
        CHECK(geom_overlap(&b, cases[i].pb, &a, v2(0, 0), &m));
        CHECK_NEAR(m.normal.x, -c.normal.x, 0);
        CHECK_NEAR(m.normal.y, -c.normal.y, 0);
        CHECK_NEAR(m.depth, c.depth, 0);
        /* Applying the MTV leaves them touching, not overlapping. */
        vec2 moved = v2_mul_add(cases[i].pb, c.depth, c.normal);
        CHECK(!geom_overlap(&a, v2(0, 0), &b, moved, NULL));
        CHECK(geom_overlap(&a, v2(0, 0), &b, v2_mul_add(moved, -1e-3f, c.normal), NULL));
    }
}

/* A box of half 0.5 at the origin swept by (10, 0) towards a box of half 1 at (5, 0.3): the
 * Minkowski sum edge is at x = 5 - 1.5 = 3.5, so the ray from the origin stops at t = 0.35 with
 * the normal +x. */
static void test_swept_box_stops_at_minkowski_edge(void) {
    geom_shape a = box(0.5f, 0.5f), b = box(1, 1);
    geom_toi hit;
    CHECK(geom_sweep(&a, v2(0, 0), v2(10, 0), &b, v2(5, 0.3f), v2(0, 0), &hit));
    CHECK_NEAR(hit.t, 0.35, 1e-6);
    CHECK_NEAR(hit.normal.x, 1.0, 0);
    CHECK_NEAR(hit.normal.y, 0.0, 0);
    /* Both moving: A by (5,0) and B by (-5,0) is the same relative motion. */
    CHECK(geom_sweep(&a, v2(0, 0), v2(5, 0), &b, v2(5, 0.3f), v2(-5, 0), &hit));
    CHECK_NEAR(hit.t, 0.35, 1e-6);
    /* Too short a motion: no hit; missing the sum's top edge: no hit. */
    CHECK(!geom_sweep(&a, v2(0, 0), v2(3.4f, 0), &b, v2(5, 0.3f), v2(0, 0), &hit));
    CHECK(!geom_sweep(&a, v2(0, 0), v2(10, 0), &b, v2(5, 1.6f), v2(0, 0), &hit));
    /* Diagonal into the corner region: enters through the bottom face (later entry wins). */
    CHECK(geom_sweep(&a, v2(0, 0), v2(10, 10), &b, v2(4, 5), v2(0, 0), &hit));
    CHECK_NEAR(hit.t, 0.35, 1e-6);
    CHECK_NEAR(hit.normal.y, 1.0, 0);
    /* The fast path agrees bit for bit. */
    geom_toi fast;
    CHECK(geom_box_box_sweep(v2(0.5f, 0.5f), v2(0, 0), v2(10, 10), v2(1, 1), v2(4, 5), v2(0, 0),
                             &fast));
    CHECK(fast.t == hit.t && fast.normal.x == hit.normal.x && fast.normal.y == hit.normal.y);
}

/* Starting in contact: t = 0 and the normal only when the motion closes. */
static void test_sweep_start_contact(void) {
    geom_shape a = box(1, 1), b = box(1, 1);
    geom_toi hit;
    /* Touching exactly on x. */
    CHECK(geom_sweep(&a, v2(0, 0), v2(1, 0), &b, v2(2, 0), v2(0, 0), &hit));
    CHECK(hit.t == 0.0f && hit.normal.x == 1.0f);
    CHECK(!geom_sweep(&a, v2(0, 0), v2(-1, 0), &b, v2(2, 0), v2(0, 0), &hit)); /* separates */
    CHECK(!geom_sweep(&a, v2(0, 0), v2(0, 3), &b, v2(2, 0), v2(0, 0), &hit));  /* slides */
    /* Resting on a floor made of two tiles, sliding across the seam: no catch. */
    geom_shape tile = box(0.5f, 0.5f);
    CHECK(!geom_sweep(&a, v2(0, 1.5f), v2(3, 0), &tile, v2(1.5f, 0), v2(0, 0), &hit));
    CHECK(!geom_sweep(&a, v2(0, 1.5f), v2(3, 0), &tile, v2(0.5f, 0), v2(0, 0), &hit));
    /* Overlapping by 0.5 along x, moving deeper: t = 0, normal +x. Moving out: no hit. */
    CHECK(geom_sweep(&a, v2(0, 0), v2(0.1f, 0.05f), &b, v2(1.5f, 0), v2(0, 0), &hit));
    CHECK(hit.t == 0.0f && hit.normal.x == 1.0f);
    CHECK(!geom_sweep(&a, v2(0, 0), v2(-0.1f, 0.05f), &b, v2(1.5f, 0), v2(0, 0), &hit));
    /* Zero relative motion: never a hit (nothing closes), overlapping or not. */
    CHECK(!geom_sweep(&a, v2(0, 0), v2(1, 1), &b, v2(1.5f, 0), v2(1, 1), &hit));
    CHECK(!geom_sweep(&a, v2(0, 0), v2(0, 0), &b, v2(5, 0), v2(0, 0), &hit));
    /* A gap within GEOM_LINEAR_SLOP counts as touching. */
    CHECK(geom_sweep(&a, v2(0, 0), v2(1e-7f, 0), &b, v2(2 + 0.5f * GEOM_LINEAR_SLOP, 0), v2(0, 0),
                     &hit));
    CHECK(hit.t == 0.0f);
}

static void test_circle_examples(void) {
    geom_shape c1 = circle(1), c2 = circle(0.5f), b = box(1, 1);
    geom_contact c;
    CHECK(geom_overlap(&c1, v2(0, 0), &c2, v2(1.2f, 0), &c));
    CHECK_NEAR(c.depth, 0.3, 1e-6);
    CHECK_NEAR(c.normal.x, 1, 1e-6);
    /* Coincident centres: the fixed fallback normal (0, 1). */
    CHECK(geom_overlap(&c1, v2(3, 3), &c2, v2(3, 3), &c));
    CHECK(c.normal.x == 0.0f && c.normal.y == 1.0f);
    CHECK_NEAR(c.depth, 1.5, 1e-6);
    /* Circle near a box corner: the closest point is the corner, the normal is diagonal. */
    CHECK(geom_overlap(&b, v2(0, 0), &c2, v2(1.3f, 1.3f), &c));
    CHECK_NEAR(c.normal.x, sqrt(0.5), 1e-6);
    CHECK_NEAR(c.normal.y, sqrt(0.5), 1e-6);
    CHECK_NEAR(c.depth, 0.5 - sqrt(0.18), 1e-6);
    /* Circle centre inside a box: pushed out through the nearest face. */
    CHECK(geom_overlap(&b, v2(0, 0), &c2, v2(0.1f, -0.8f), &c));
    CHECK_NEAR(c.normal.y, -1, 0);
    CHECK_NEAR(c.depth, 0.7, 1e-6);
    /* Circle swept at a box corner hits the rounded corner, not the inflated square's corner:
     * from (-3,-3) along (1,1) the centre meets the corner circle at distance 0.5 from (-1,-1). */
    geom_toi hit;
    CHECK(geom_sweep(&c2, v2(-3, -3), v2(4, 4), &b, v2(0, 0), v2(0, 0), &hit));
    double expect = (2 * sqrt(2.0) - 0.5) / (4 * sqrt(2.0));
    CHECK_NEAR(hit.t, expect, 1e-6);
    CHECK_NEAR(hit.normal.x, sqrt(0.5), 1e-6);
    /* Circle-circle head-on. */
    CHECK(geom_sweep(&c1, v2(0, 0), v2(10, 0), &c2, v2(5, 0), v2(0, 0), &hit));
    CHECK_NEAR(hit.t, 0.35, 1e-6);
    CHECK_NEAR(hit.normal.x, 1, 1e-6);
}

static void test_ray_cast_examples(void) {
    geom_shape b = box(1, 2), c = circle(1);
    geom_ray_hit h;
    CHECK(geom_ray_cast(&b, v2(5, 0), v2(0, 0), v2(10, 0), &h));
    CHECK_NEAR(h.t, 0.4, 1e-6);
    CHECK(h.normal.x == -1.0f && h.normal.y == 0.0f);
    CHECK(!geom_ray_cast(&b, v2(5, 0), v2(0, 0), v2(3.9f, 0), &h));  /* too short */
    CHECK(!geom_ray_cast(&b, v2(5, 0), v2(5, 0), v2(10, 0), &h));    /* starts inside */
    CHECK(!geom_ray_cast(&b, v2(5, 0), v2(0, 2.5f), v2(10, 0), &h)); /* passes above */
    CHECK(!geom_ray_cast(&b, v2(5, 0), v2(0, 0), v2(0, 0), &h));     /* zero length */
    CHECK(geom_ray_cast(&c, v2(0, 5), v2(0, 0), v2(0, 10), &h));
    CHECK_NEAR(h.t, 0.4, 1e-6);
    CHECK_NEAR(h.normal.y, -1, 1e-6);
    vec2 tri[] = {{0, 0}, {2, 0}, {0, 2}};
    geom_shape p;
    CHECK(geom_make_polygon(tri, 3, &p) == GEOM_OK);
    CHECK(geom_ray_cast(&p, v2(0, 0), v2(3, 3), v2(-3, -3), &h));
    CHECK_NEAR(h.t, 2.0 / 3.0, 1e-6);
    CHECK_NEAR(h.normal.x, sqrt(0.5), 1e-6);
    CHECK(geom_shape_contains_point(&p, v2(0, 0), v2(0.5f, 0.5f)));
    CHECK(!geom_shape_contains_point(&p, v2(0, 0), v2(1.5f, 1.5f)));
    aabb bb = geom_shape_aabb(&p, v2(1, 1));
    CHECK(bb.min.x == 1 && bb.min.y == 1 && bb.max.x == 3 && bb.max.y == 3);
}

static void test_validation_reasons(void) {
    geom_shape s;
    /* Boxes and circles. */
    CHECK(geom_make_box(v2(NAN, 1), &s) == GEOM_ERR_NON_FINITE);
    CHECK(geom_make_box(v2(1, INFINITY), &s) == GEOM_ERR_NON_FINITE);
    CHECK(geom_make_box(v2(0, 1), &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    CHECK(geom_make_box(v2(-1, 1), &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    CHECK(geom_make_box(v2(1, 2e4f), &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    CHECK(geom_make_box(v2(GEOM_MIN_SIZE, GEOM_MAX_SIZE), &s) == GEOM_OK);
    CHECK(geom_make_circle(NAN, &s) == GEOM_ERR_NON_FINITE);
    CHECK(geom_make_circle(1e-4f, &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    CHECK(geom_make_circle(1e5f, &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    /* Polygons: one case per reason. */
    vec2 ok[] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    CHECK(geom_make_polygon(ok, 4, &s) == GEOM_OK);
    CHECK(geom_make_polygon(ok, 2, &s) == GEOM_ERR_TOO_FEW_VERTICES);
    CHECK(geom_make_polygon(NULL, 3, &s) == GEOM_ERR_TOO_FEW_VERTICES);
    vec2 many[17];
    for (int i = 0; i < 17; i++)
        many[i] = v2(cosf(6.2831853f * (float)i / 17), sinf(6.2831853f * (float)i / 17));
    CHECK(geom_make_polygon(many, 17, &s) == GEOM_ERR_TOO_MANY_VERTICES);
    CHECK(geom_make_polygon(many, 16, &s) == GEOM_OK);
    vec2 nan_v[] = {{0, 0}, {1, NAN}, {0, 1}};
    CHECK(geom_make_polygon(nan_v, 3, &s) == GEOM_ERR_NON_FINITE);
    vec2 dup[] = {{0, 0}, {1, 0}, {1, 0}, {0, 1}};
    CHECK(geom_make_polygon(dup, 4, &s) == GEOM_ERR_DUPLICATE_VERTEX);
    vec2 collinear[] = {{0, 0}, {1, 0}, {2, 0}, {1, 1}};
    CHECK(geom_make_polygon(collinear, 4, &s) == GEOM_ERR_COLLINEAR);
    vec2 cw[] = {{0, 0}, {0, 1}, {1, 1}, {1, 0}};
    CHECK(geom_make_polygon(cw, 4, &s) == GEOM_ERR_CLOCKWISE);
    vec2 concave[] = {{0, 0}, {2, 0}, {1, 0.5f}, {2, 2}, {0, 2}};
    CHECK(geom_make_polygon(concave, 5, &s) == GEOM_ERR_NON_CONVEX);
    /* A pentagram turns left at every vertex yet is not convex. */
    vec2 star[5];
    for (int i = 0; i < 5; i++)
        star[i] = v2(cosf(6.2831853f * (float)(2 * i) / 5), sinf(6.2831853f * (float)(2 * i) / 5));
    CHECK(geom_make_polygon(star, 5, &s) == GEOM_ERR_NON_CONVEX);
    vec2 flat[] = {{0, 0}, {1, 0}, {2, 0}};
    CHECK(geom_make_polygon(flat, 3, &s) == GEOM_ERR_ZERO_AREA);
    vec2 far[] = {{0, 0}, {2e4f, 0}, {0, 1}};
    CHECK(geom_make_polygon(far, 3, &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    vec2 thin[] = {{0, 0}, {1, 0}, {1, 5e-4f}, {0, 5e-4f}};
    CHECK(geom_make_polygon(thin, 4, &s) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    /* A refused shape leaves *out untouched. */
    geom_shape before = box(3, 3);
    s = before;
    CHECK(geom_make_polygon(cw, 4, &s) == GEOM_ERR_CLOCKWISE);
    CHECK(s.kind == GEOM_SHAPE_BOX && s.u.half_extents.x == 3.0f);
    /* Re-validation of hand-filled shapes, including an unknown kind. */
    geom_shape hand = box(1, 1);
    CHECK(geom_shape_validate(&hand) == GEOM_OK);
    hand.u.half_extents.x = -2;
    CHECK(geom_shape_validate(&hand) == GEOM_ERR_SIZE_OUT_OF_RANGE);
    hand.kind = (geom_shape_kind)9;
    CHECK(geom_shape_validate(&hand) == GEOM_ERR_UNKNOWN_KIND);
    CHECK(geom_shape_validate(NULL) == GEOM_ERR_UNKNOWN_KIND);
    geom_shape poly;
    CHECK(geom_make_polygon(ok, 4, &poly) == GEOM_OK);
    CHECK(geom_shape_validate(&poly) == GEOM_OK);
    poly.u.polygon.count = 40;
    CHECK(geom_shape_validate(&poly) == GEOM_ERR_TOO_MANY_VERTICES);
    /* Every reason has a distinct, non-empty message. */
    for (int e = GEOM_OK; e <= GEOM_ERR_UNKNOWN_KIND; e++) {
        const char *msg = geom_shape_error_str((geom_shape_error)e);
        CHECK(msg && msg[0]);
        for (int f = GEOM_OK; f < e; f++)
            CHECK(strcmp(msg, geom_shape_error_str((geom_shape_error)f)));
    }
}

static void test_hull(void) {
    geom_shape s;
    /* Square corners plus interior points, duplicates and points on the edges. */
    vec2 cloud[] = {{0.5f, 0.5f}, {1, 1},    {0, 0}, {1, 0},       {0, 1},
                    {0.5f, 0},    {1, 0.5f}, {0, 0}, {0.2f, 0.7f}, {1, 1}};
    CHECK(geom_make_hull(cloud, 10, &s) == GEOM_OK);
    CHECK(s.kind == GEOM_SHAPE_POLYGON && s.u.polygon.count == 4);
    CHECK(geom_shape_validate(&s) == GEOM_OK);
    vec2 line[] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};
    CHECK(geom_make_hull(line, 4, &s) == GEOM_ERR_ZERO_AREA);
    vec2 same[] = {{1, 1}, {1, 1}, {1, 1}};
    CHECK(geom_make_hull(same, 3, &s) == GEOM_ERR_ZERO_AREA);
    CHECK(geom_make_hull(cloud, 2, &s) == GEOM_ERR_TOO_FEW_VERTICES);
    vec2 bad[] = {{0, 0}, {1, 0}, {INFINITY, 1}};
    CHECK(geom_make_hull(bad, 3, &s) == GEOM_ERR_NON_FINITE);
    vec2 ring[40];
    for (int i = 0; i < 40; i++)
        ring[i] = v2(cosf(6.2831853f * (float)i / 40), sinf(6.2831853f * (float)i / 40));
    CHECK(geom_make_hull(ring, 40, &s) == GEOM_ERR_TOO_MANY_VERTICES);
    /* Random clouds: the hull contains every point and every hull vertex is an input point. */
    collide_rng rng = {2024};
    for (int iter = 0; iter < 2000; iter++) {
        vec2 pts[64];
        int n = 3 + (int)(collide_rng_next(&rng) % 60);
        for (int i = 0; i < n; i++)
            pts[i] = v2(collide_rng_range(&rng, -3, 3), collide_rng_range(&rng, -2, 2));
        geom_shape_error err = geom_make_hull(pts, n, &s);
        if (err == GEOM_ERR_TOO_MANY_VERTICES) continue;
        CHECK_MSG(err == GEOM_OK, "iter %d: %s", iter, geom_shape_error_str(err));
        const geom_polygon *p = &s.u.polygon;
        for (int i = 0; i < n; i++) {
            /* Inside or within float noise of the boundary, by the vertex cross products. */
            for (int k = 0; k < p->count; k++) {
                vec2 a = p->vertices[k], b = p->vertices[(k + 1) % p->count];
                float cr = v2_cross(v2_sub(b, a), v2_sub(pts[i], a));
                CHECK_MSG(cr >= -1e-5f, "iter %d point %d outside edge %d", iter, i, k);
            }
        }
        for (int k = 0; k < p->count; k++) {
            bool found = false;
            for (int i = 0; i < n; i++)
                found |= pts[i].x == p->vertices[k].x && pts[i].y == p->vertices[k].y;
            CHECK(found);
        }
    }
}

/* Degenerate and extreme inputs: defined answers, never NaN or Inf. */
static void test_degenerate_inputs(void) {
    geom_shape shapes[3] = {box(1, 1), circle(1), box(1, 1)};
    vec2 tri[] = {{-1, -1}, {1, -1}, {0, 1}};
    CHECK(geom_make_polygon(tri, 3, &shapes[2]) == GEOM_OK);
    vec2 positions[] = {{0, 0},     {1e-30f, 0}, {2, 0},   {1e6f, 1e6f},  {-3e7f, 2e7f},
                        {1e17f, 0}, {1e30f, 0},  {NAN, 0}, {INFINITY, 0}, {FLT_MAX, FLT_MAX}};
    size_t np = sizeof positions / sizeof positions[0];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (size_t p = 0; p < np; p++)
                for (size_t q = 0; q < np; q++) {
                    geom_contact c = {{0, 0}, 0};
                    if (geom_overlap(&shapes[i], positions[p], &shapes[j], positions[q], &c))
                        CHECK(finite_contact(c) && c.depth > 0);
                    geom_toi t = {0, {0, 0}};
                    if (geom_sweep(&shapes[i], v2(0, 0), positions[p], &shapes[j], positions[q],
                                   v2(0, 0), &t))
                        CHECK(finite_toi(t) && t.t >= 0 && t.t <= 1);
                    if (geom_sweep(&shapes[i], positions[p], positions[q], &shapes[j], positions[p],
                                   v2(0, 0), &t))
                        CHECK(finite_toi(t) && t.t >= 0 && t.t <= 1);
                    geom_ray_hit h = {0, {0, 0}};
                    if (geom_ray_cast(&shapes[i], positions[p], positions[q],
                                      v2_sub(positions[p], positions[q]), &h))
                        CHECK(isfinite(h.t) && v2_is_finite(h.normal));
                }
    /* Coincident shapes overlap with the fallback normal for boxes too. */
    geom_contact c;
    CHECK(geom_overlap(&shapes[0], v2(7, 7), &shapes[0], v2(7, 7), &c));
    CHECK(c.normal.x == 0.0f && c.normal.y == 1.0f && c.depth == 2.0f);
    /* A circle centred exactly on a polygon vertex. */
    CHECK(geom_overlap(&shapes[1], v2(1, -1), &shapes[2], v2(0, 0), &c));
    CHECK(finite_contact(c));
    /* Parallel edges, sliding exactly along: no hit. */
    geom_toi t;
    CHECK(!geom_sweep(&shapes[0], v2(0, 2), v2(5, 0), &shapes[0], v2(3, 0), v2(0, 0), &t));
}

/* A spawn angle is baked into the shape: quarter turns keep boxes, other angles give polygons
 * whose points are the turned points of the original (checked by containment), circles are
 * unchanged, and a non-finite angle is refused. */
static void test_shape_rotate(void) {
    geom_shape b = box(2, 1), out;
    CHECK(geom_shape_rotate(&b, 0.0f, &out) == GEOM_OK);
    CHECK(out.kind == GEOM_SHAPE_BOX && out.u.half_extents.x == 2 && out.u.half_extents.y == 1);
    CHECK(geom_shape_rotate(&b, 1.5707963267948966f, &out) == GEOM_OK);
    CHECK(out.kind == GEOM_SHAPE_BOX && out.u.half_extents.x == 1 && out.u.half_extents.y == 2);
    CHECK(geom_shape_rotate(&b, -3.1415926535897932f, &out) == GEOM_OK);
    CHECK(out.kind == GEOM_SHAPE_BOX && out.u.half_extents.x == 2);
    collide_rng rng = {777};
    for (int k = 0; k < 200; k++) {
        float angle = collide_rng_range(&rng, -10.0f, 10.0f);
        if (geom_shape_rotate(&b, angle, &out) != GEOM_OK)
            CHECK_MSG(false, "angle %g", (double)angle);
        if (out.kind == GEOM_SHAPE_BOX) continue; /* a quarter turn drawn by chance */
        CHECK(out.kind == GEOM_SHAPE_POLYGON && out.u.polygon.count == 4);
        for (int i = 0; i < 50; i++) {
            /* A point of the unturned box, turned, lies in the turned shape (shrunk by a hair). */
            float px = collide_rng_range(&rng, -1.99f, 1.99f),
                  py = collide_rng_range(&rng, -0.99f, 0.99f);
            double c = cos(angle), s = sin(angle);
            vec2 q = v2((float)(c * px - s * py), (float)(s * px + c * py));
            CHECK_MSG(geom_shape_contains_point(&out, v2(0, 0), q), "angle %g point %g,%g",
                      (double)angle, (double)px, (double)py);
        }
        aabb bb = geom_shape_aabb(&out, v2(0, 0));
        float ext = sqrtf(5.0f) + 1e-4f;
        CHECK(bb.max.x <= ext && bb.max.y <= ext && bb.min.x >= -ext && bb.min.y >= -ext);
    }
    geom_shape c = circle(3);
    CHECK(geom_shape_rotate(&c, 0.7f, &out) == GEOM_OK && out.kind == GEOM_SHAPE_CIRCLE &&
          out.u.radius == 3);
    vec2 tri[3] = {{-2, 0}, {2, 0}, {0, 3}};
    geom_shape t;
    CHECK(geom_make_polygon(tri, 3, &t) == GEOM_OK);
    CHECK(geom_shape_rotate(&t, 0.5f, &out) == GEOM_OK && out.kind == GEOM_SHAPE_POLYGON);
    CHECK(geom_shape_rotate(&t, NAN, &out) == GEOM_ERR_NON_FINITE);
    CHECK(geom_shape_rotate(&t, INFINITY, &out) == GEOM_ERR_NON_FINITE);
}

/* The vertices geom_shape_rotate produces, against the originals turned here independently (in
 * double, the standard counter-clockwise rotation x' = x cos a - y sin a, y' = x sin a + y cos a):
 * asymmetric polygons (so a turn the wrong way, or a mirror, cannot match) and boxes, at many
 * angles. The output keeps the counter-clockwise order; it may start at another vertex, so the
 * expected cycle is matched at any rotation of the indices. A box turned by a quarter turn stays
 * a box whose extents are those of the turned corners. */
static bool rotated_vertices_match(const vec2 *src, int n, double angle, const geom_shape *out,
                                   double *worst) {
    double c = cos(angle), s = sin(angle);
    double ex[GEOM_MAX_POLYGON_VERTICES], ey[GEOM_MAX_POLYGON_VERTICES];
    for (int i = 0; i < n; i++) {
        ex[i] = c * src[i].x - s * src[i].y;
        ey[i] = s * src[i].x + c * src[i].y;
    }
    if (out->kind == GEOM_SHAPE_BOX) {
        double mx = 0, my = 0;
        for (int i = 0; i < n; i++) {
            mx = fmax(mx, fabs(ex[i]));
            my = fmax(my, fabs(ey[i]));
        }
        *worst = fmax(fabs(out->u.half_extents.x - mx), fabs(out->u.half_extents.y - my));
        return *worst <= 1e-5 * fmax(1.0, fmax(mx, my));
    }
    if (out->kind != GEOM_SHAPE_POLYGON || out->u.polygon.count != n) return false;
    const vec2 *v = out->u.polygon.vertices;
    for (int shift = 0; shift < n; shift++) {
        double err = 0.0, scale = 1.0;
        for (int i = 0; i < n; i++) {
            vec2 got = v[(shift + i) % n];
            err = fmax(err, fmax(fabs(got.x - ex[i]), fabs(got.y - ey[i])));
            scale = fmax(scale, fmax(fabs(ex[i]), fabs(ey[i])));
        }
        if (err <= 1e-6 * scale) {
            *worst = err;
            return true;
        }
        if (shift == 0 || err < *worst) *worst = err;
    }
    return false;
}

static void test_shape_rotate_vertices_exact(void) {
    const vec2 tri[3] = {{-2.0f, -0.5f}, {3.0f, 0.25f}, {0.5f, 1.75f}};
    const vec2 penta[5] = {{1.0f, -1.0f}, {4.0f, 0.0f}, {3.5f, 2.0f}, {1.5f, 3.0f}, {0.2f, 1.0f}};
    geom_shape shapes[3];
    CHECK(geom_make_polygon(tri, 3, &shapes[0]) == GEOM_OK);
    CHECK(geom_make_polygon(penta, 5, &shapes[1]) == GEOM_OK);
    shapes[2] = box(2.5f, 0.75f);
    const vec2 box_corners[4] = {{-2.5f, -0.75f}, {2.5f, -0.75f}, {2.5f, 0.75f}, {-2.5f, 0.75f}};
    const vec2 *srcs[3] = {tri, penta, box_corners};
    const int counts[3] = {3, 5, 4};
    collide_rng rng = {4711};
    int boxes_kept = 0;
    for (int k = 0; k < 400; k++) {
        /* a sweep over [-2pi, 2pi] that hits the quarter turns exactly, then random angles */
        float angle = k < 65 ? (float)((k - 32) * (3.14159265358979323846 / 16.0))
                             : collide_rng_range(&rng, -20.0f, 20.0f);
        for (int si = 0; si < 3; si++) {
            geom_shape out;
            CHECK_MSG(geom_shape_rotate(&shapes[si], angle, &out) == GEOM_OK, "shape %d angle %.9g",
                      si, (double)angle);
            double worst = 0.0;
            CHECK_MSG(rotated_vertices_match(srcs[si], counts[si], (double)angle, &out, &worst),
                      "shape %d angle %.9g: vertices off by %g", si, (double)angle, worst);
            if (si == 2 && out.kind == GEOM_SHAPE_BOX) boxes_kept++;
            /* the turned polygon is valid in its own right (normals computed for its vertices) */
            CHECK(geom_shape_validate(&out) == GEOM_OK);
        }
    }
    /* the quarter turns of the sweep (k = 0, 8, ..., 64: nine of them) stayed boxes */
    CHECK_MSG(boxes_kept >= 9, "%d boxes kept", boxes_kept);
}

/* geom_touch_point (a shape cast's hit point, issue 28): where two touching shapes meet, on B's
 * boundary; along two faces, the middle of the stretch they share. */
static void test_touch_point(void) {
    geom_shape a = box(1, 1), b = box(1, 1), c = circle(0.5f), turned;
    /* face on face: A's right face x = 1 against B's left face, B raised by 0.5: they share
     * y in [-0.5, 1], whose middle is 0.25 */
    vec2 p = geom_touch_point(&a, v2(0, 0), &b, v2(2, 0.5f), v2(1, 0));
    CHECK_NEAR(p.x, 1.0f, 1e-6);
    CHECK_NEAR(p.y, 0.25f, 1e-6);
    /* a small box resting on a wide one: the whole bottom face touches, its middle is the point */
    geom_shape wide = box(5, 1);
    p = geom_touch_point(&a, v2(0.5f, 2), &wide, v2(0, 0), v2(0, -1));
    CHECK_NEAR(p.x, 0.5f, 1e-6);
    CHECK_NEAR(p.y, 1.0f, 1e-6);
    /* a corner of A (turned an eighth) on B's left face: the corner, not A's centre's height */
    CHECK(geom_shape_rotate(&a, 0.7853982f, &turned) == GEOM_OK);
    float reach = sqrtf(2.0f);
    p = geom_touch_point(&turned, v2(0, 3), &b, v2(reach + 1.0f, 3.6f), v2(1, 0));
    CHECK_NEAR(p.x, reach, 1e-5);
    CHECK_NEAR(p.y, 3.0f, 1e-5);
    /* a corner of B on a face of A turned: B's corner, wherever A's centre is */
    p = geom_touch_point(&b, v2(-reach - 1.0f, 0.4f), &turned, v2(0, 0), v2(1, 0));
    CHECK_NEAR(p.x, -reach, 1e-5);
    CHECK_NEAR(p.y, 0.0f, 1e-5);
    /* circles: on the circle facing A, or the body's point nearest the circle's centre */
    p = geom_touch_point(&a, v2(0, 0), &c, v2(1.5f, 0.2f), v2(1, 0));
    CHECK_NEAR(p.x, 1.0f, 1e-6);
    CHECK_NEAR(p.y, 0.2f, 1e-6);
    p = geom_touch_point(&c, v2(-1.5f, 0.3f), &a, v2(0, 0), v2(1, 0));
    CHECK_NEAR(p.x, -1.0f, 1e-6);
    CHECK_NEAR(p.y, 0.3f, 1e-6);
}

TEST_MAIN(TEST(test_shape_rotate), TEST(test_shape_rotate_vertices_exact),
          TEST(test_box_box_minkowski_difference), TEST(test_penetration_each_axis),
          TEST(test_swept_box_stops_at_minkowski_edge), TEST(test_sweep_start_contact),
          TEST(test_circle_examples), TEST(test_ray_cast_examples), TEST(test_validation_reasons),
          TEST(test_hull), TEST(test_degenerate_inputs), TEST(test_touch_point))

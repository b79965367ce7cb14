/* tiled_merge_cells (issue 33) against brute-force oracles on random grids (fixed seeds): painting
 * the rectangles reproduces the grid, each rectangle is the greedy one the header documents, the
 * cap is honoured; and a world of merged boxes answers every query as the world of one box per
 * cell does (points, rays, short box casts). */
#include "harness.h"
#include "tiled_merge.h"
#include "world.h"

#define MAX_W 64
#define MAX_CELLS (MAX_W * MAX_W)

static uint32_t grid[MAX_CELLS];
static tiled_rect rects[MAX_CELLS];
static int paint[MAX_CELLS];

static int rand_int(collide_rng *rng, int lo, int hi) { /* [lo, hi] */
    return lo + (int)(collide_rng_next(rng) % (uint32_t)(hi - lo + 1));
}

/* A random layer: cells at a random density, of up to four classes (one of them the largest
 * uint32), then on half the grids a few filled rectangles on top, as level layers have (walls,
 * floors, platforms), so merges are long and tall as well as single cells. */
static void random_grid(collide_rng *rng, int *w, int *h) {
    /* small grids often: the corner cases live there */
    *w = (collide_rng_next(rng) & 1) ? rand_int(rng, 1, 6) : rand_int(rng, 1, MAX_W);
    *h = (collide_rng_next(rng) & 1) ? rand_int(rng, 1, 6) : rand_int(rng, 1, MAX_W);
    static const uint32_t classes[4] = {1, 2, 7, 0xffffffffu};
    int kinds = rand_int(rng, 1, 4);
    uint32_t density = collide_rng_next(rng) % 101; /* percent, 0 and 100 included */
    for (int i = 0; i < *w * *h; i++)
        grid[i] = collide_rng_next(rng) % 100 < density ? classes[rand_int(rng, 0, kinds - 1)] : 0;
    if (collide_rng_next(rng) & 1) {
        int blocks = rand_int(rng, 1, 8);
        for (int b = 0; b < blocks; b++) {
            int x0 = rand_int(rng, 0, *w - 1), y0 = rand_int(rng, 0, *h - 1);
            int x1 = rand_int(rng, x0, *w - 1), y1 = rand_int(rng, y0, *h - 1);
            uint32_t c = (collide_rng_next(rng) % 4) ? classes[rand_int(rng, 0, kinds - 1)] : 0;
            for (int y = y0; y <= y1; y++)
                for (int x = x0; x <= x1; x++)
                    grid[y * *w + x] = c;
        }
    }
}

/* The oracle: every rectangle inside the grid and of one class with its cells; painted, the
 * rectangles cover every non-zero cell exactly once and no zero cell. Greedy as documented:
 * each is as wide as its run (stopped by the grid's edge, another class, or a cell an earlier
 * rectangle took) and as tall as the run repeats (stopped by the edge or a cell of another class
 * below). Returns false after printing the case. */
static bool check_rects(int w, int h, size_t n, int ci) {
    size_t nonzero = 0;
    for (int i = 0; i < w * h; i++) {
        nonzero += grid[i] != 0;
        paint[i] = 0;
    }
    if (n > nonzero) {
        fprintf(stderr, "case %d: %zu rectangles for %zu cells\n", ci, n, nonzero);
        return false;
    }
    for (size_t r = 0; r < n; r++) {
        tiled_rect t = rects[r];
        if (t.w < 1 || t.h < 1 || t.x < 0 || t.y < 0 || t.x + t.w > w || t.y + t.h > h ||
            t.cls == 0) {
            fprintf(stderr, "case %d: rectangle %zu (%d,%d %dx%d) outside %dx%d\n", ci, r, t.x, t.y,
                    t.w, t.h, w, h);
            return false;
        }
        /* the run's right end: the edge, another class, or a cell painted before (the row's
         * earlier rectangles and those from above are all earlier in the list) */
        int xe = t.x + t.w;
        if (xe < w && grid[t.y * w + xe] == t.cls && paint[t.y * w + xe] == 0) {
            fprintf(stderr, "case %d: rectangle %zu stops short at column %d\n", ci, r, xe);
            return false;
        }
        for (int y = t.y; y < t.y + t.h; y++)
            for (int x = t.x; x < xe; x++) {
                if (grid[y * w + x] != t.cls) {
                    fprintf(stderr, "case %d: rectangle %zu covers (%d,%d) of class %u as %u\n", ci,
                            r, x, y, grid[y * w + x], t.cls);
                    return false;
                }
                paint[y * w + x]++;
            }
        int yb = t.y + t.h;
        if (yb < h) {
            bool repeats = true;
            for (int x = t.x; x < xe; x++)
                repeats = repeats && grid[yb * w + x] == t.cls;
            if (repeats) {
                fprintf(stderr, "case %d: rectangle %zu stops short at row %d\n", ci, r, yb);
                return false;
            }
        }
    }
    for (int i = 0; i < w * h; i++)
        if (paint[i] != (grid[i] != 0)) {
            fprintf(stderr, "case %d: cell (%d,%d) of class %u painted %d times\n", ci, i % w,
                    i / w, grid[i], paint[i]);
            return false;
        }
    return true;
}

static void test_merge_oracle(void) {
    collide_rng rng = {0x7113d001u};
    size_t cells_total = 0, rects_total = 0;
    for (int ci = 0; ci < 5000; ci++) {
        int w, h;
        random_grid(&rng, &w, &h);
        size_t nonzero = 0;
        for (int i = 0; i < w * h; i++)
            nonzero += grid[i] != 0;
        size_t n = tiled_merge_cells(grid, w, h, rects, nonzero);
        CHECK_MSG(n != (size_t)-1, "case %d: cap = the cells refused", ci);
        CHECK(check_rects(w, h, n, ci));
        /* the cap: exactly enough works, one fewer is refused */
        CHECK(tiled_merge_cells(grid, w, h, rects, n) == n);
        if (n > 0)
            CHECK_MSG(tiled_merge_cells(grid, w, h, rects, n - 1) == (size_t)-1, "case %d", ci);
        cells_total += nonzero;
        rects_total += n;
    }
    printf("  %zu cells in %zu rectangles\n", cells_total, rects_total);
}

static void test_merge_edges(void) {
    /* nothing to cover: 0 rectangles, whatever the cap */
    uint32_t empty[6] = {0};
    CHECK(tiled_merge_cells(empty, 3, 2, rects, 0) == 0);
    CHECK(tiled_merge_cells(empty, 0, 2, rects, 4) == 0);
    /* a full grid of one class is one rectangle */
    for (int i = 0; i < MAX_CELLS; i++)
        grid[i] = 5;
    CHECK(tiled_merge_cells(grid, MAX_W, MAX_W, rects, 1) == 1);
    CHECK(rects[0].x == 0 && rects[0].y == 0 && rects[0].w == MAX_W && rects[0].h == MAX_W);
    CHECK(tiled_merge_cells(grid, MAX_W, MAX_W, rects, 0) == (size_t)-1);
    /* a layer wider than the stack scratch (it allocates): 3000 x 3, random */
    static uint32_t wide[3000 * 3];
    static tiled_rect wide_out[3000 * 3];
    collide_rng rng = {0x7113d002u};
    for (int i = 0; i < 3000 * 3; i++)
        wide[i] = collide_rng_next(&rng) % 3;
    size_t n = tiled_merge_cells(wide, 3000, 3, wide_out, 9000);
    CHECK(n != (size_t)-1 && n > 0);
    static int wide_paint[3000 * 3];
    for (size_t r = 0; r < n; r++)
        for (int y = wide_out[r].y; y < wide_out[r].y + wide_out[r].h; y++)
            for (int x = wide_out[r].x; x < wide_out[r].x + wide_out[r].w; x++) {
                CHECK(wide[y * 3000 + x] == wide_out[r].cls);
                wide_paint[y * 3000 + x]++;
            }
    for (int i = 0; i < 3000 * 3; i++)
        CHECK(wide_paint[i] == (wide[i] != 0));
}

/* ---- The same world, merged or not ---------------------------------------------------------- */

#define CELL 1.0f
#define ORIGIN_X (-40.0f)
#define ORIGIN_Y (-30.0f)

static world *make_world(void) {
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-100, -100), v2(100, 100));
    cfg.max_bodies = MAX_CELLS + 8;
    cfg.max_moving_bodies = 4;
    return world_create(&cfg);
}

/* A rectangle of cells as a static box; cell edges land on exact floats (whole units, centres on
 * halves), so both worlds place every shared face at the same float. */
static bool spawn_rect(world *w, int x, int y, int cw, int ch) {
    geom_shape s;
    if (geom_make_box(v2(cw * CELL / 2, ch * CELL / 2), &s)) return false;
    vec2 c = v2(ORIGIN_X + (x + cw / 2.0f) * CELL, ORIGIN_Y + (y + ch / 2.0f) * CELL);
    return world_spawn(w, WORLD_BODY_STATIC, &s, c, 0, NULL, NULL) == WORLD_OK;
}

static bool same_normal(vec2 a, vec2 b) { return fabsf(a.x - b.x) + fabsf(a.y - b.y) <= 1e-5f; }

static vec2 random_point(collide_rng *rng, int w, int h) {
    /* the grid's area and a margin round it */
    return v2(collide_rng_range(rng, ORIGIN_X - 3, ORIGIN_X + w * CELL + 3),
              collide_rng_range(rng, ORIGIN_Y - 3, ORIGIN_Y + h * CELL + 3));
}

static void test_merge_world_equivalence(void) {
    collide_rng rng = {0x7113d003u};
    geom_shape probe, caster;
    CHECK(geom_make_circle(0.01f, &probe) == GEOM_OK);
    CHECK(geom_make_box(v2(0.2f, 0.3f), &caster) == GEOM_OK);
    long points = 0, rays = 0, casts = 0, hits = 0;
    for (int ci = 0; ci < 200; ci++) {
        int w, h;
        random_grid(&rng, &w, &h);
        size_t n = tiled_merge_cells(grid, w, h, rects, MAX_CELLS);
        CHECK(n != (size_t)-1);
        world *cells = make_world(), *merged = make_world();
        CHECK(cells && merged);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (grid[y * w + x]) CHECK(spawn_rect(cells, x, y, 1, 1));
        for (size_t r = 0; r < n; r++)
            CHECK(spawn_rect(merged, rects[r].x, rects[r].y, rects[r].w, rects[r].h));

        for (int q = 0; q < 400; q++) {
            world_hit ha, hb;
            world_query_result ra, rb;
            /* a point (a small circle): inside something or not */
            vec2 p = random_point(&rng, w, h);
            CHECK(world_query_overlap(cells, 0, &probe, p, NULL, &ha, 1, &ra) == WORLD_OK);
            CHECK(world_query_overlap(merged, 0, &probe, p, NULL, &hb, 1, &rb) == WORLD_OK);
            CHECK_MSG((ra.count > 0) == (rb.count > 0), "case %d point (%.9g, %.9g): %zu vs %zu",
                      ci, p.x, p.y, ra.count, rb.count);
            points++;

            /* a ray: half of them axis-aligned, as a game's often are */
            vec2 o = random_point(&rng, w, h), d = v2_sub(random_point(&rng, w, h), o);
            if (q & 1) d = (q & 2) ? v2(d.x, 0) : v2(0, d.y);
            CHECK(world_query_ray(cells, 0, o, d, NULL, false, &ha, 1, &ra) == WORLD_OK);
            CHECK(world_query_ray(merged, 0, o, d, NULL, false, &hb, 1, &rb) == WORLD_OK);
            CHECK_MSG(ra.count == rb.count, "case %d ray (%.9g, %.9g) + (%.9g, %.9g): %zu vs %zu",
                      ci, o.x, o.y, d.x, d.y, ra.count, rb.count);
            if (ra.count) {
                CHECK_MSG(
                    fabsf(ha.fraction - hb.fraction) <= 1e-5f && same_normal(ha.normal, hb.normal),
                    "case %d ray (%.9g, %.9g) + (%.9g, %.9g): t %.9g (%g, %g) vs %.9g (%g, %g)", ci,
                    o.x, o.y, d.x, d.y, ha.fraction, ha.normal.x, ha.normal.y, hb.fraction,
                    hb.normal.x, hb.normal.y);
                hits++;
            }
            rays++;

            /* a short box cast; from inside (fraction 0) the push-out normal is a property of
             * the one box hit, not of the union, so only the fraction is compared there */
            if (q % 4 == 0) {
                vec2 s = random_point(&rng, w, h);
                vec2 m = v2(collide_rng_range(&rng, -4, 4), collide_rng_range(&rng, -4, 4));
                CHECK(world_query_shape_cast(cells, 0, &caster, s, m, NULL, false, &ha, 1, &ra) ==
                      WORLD_OK);
                CHECK(world_query_shape_cast(merged, 0, &caster, s, m, NULL, false, &hb, 1, &rb) ==
                      WORLD_OK);
                CHECK_MSG(ra.count == rb.count, "case %d cast (%.9g, %.9g) + (%.9g, %.9g)", ci, s.x,
                          s.y, m.x, m.y);
                if (ra.count) {
                    CHECK_MSG(fabsf(ha.fraction - hb.fraction) <= 1e-5f &&
                                  (ha.fraction == 0 || same_normal(ha.normal, hb.normal)),
                              "case %d cast (%.9g, %.9g) + (%.9g, %.9g): t %.9g vs %.9g", ci, s.x,
                              s.y, m.x, m.y, ha.fraction, hb.fraction);
                }
                casts++;
            }
        }
        world_destroy(cells);
        world_destroy(merged);
    }
    printf("  %ld points, %ld rays (%ld hit), %ld box casts\n", points, rays, hits, casts);
}

/* COLLISION.md I4 on a floor of cells of several classes (seams between classes stay after the
 * merge): a box pressed into it and driven along it keeps >= 99% of its free distance, merged or
 * not, and never sinks into it or hops off it. */
static void test_merge_world_sliding(void) {
    collide_rng rng = {0x7113d004u};
    for (int rep = 0; rep < 10; rep++) {
        const int w = MAX_W, h = 3;
        for (int x = 0; x < w;) {
            int run = rand_int(&rng, 1, 6);
            uint32_t c = (uint32_t)rand_int(&rng, 1, 3);
            for (; run > 0 && x < w; run--, x++)
                for (int y = 0; y < h; y++)
                    grid[y * w + x] = c;
        }
        size_t n = tiled_merge_cells(grid, w, h, rects, MAX_CELLS);
        CHECK(n != (size_t)-1 && n < (size_t)(w * h));
        float top = ORIGIN_Y + h * CELL, along[2];
        for (int merged = 0; merged < 2; merged++) {
            world *wd = make_world();
            CHECK(wd);
            if (merged)
                for (size_t r = 0; r < n; r++)
                    CHECK(spawn_rect(wd, rects[r].x, rects[r].y, rects[r].w, rects[r].h));
            else
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        CHECK(spawn_rect(wd, x, y, 1, 1));
            geom_shape box;
            CHECK(geom_make_box(v2(0.4f, 0.4f), &box) == GEOM_OK);
            vec2 start = v2(ORIGIN_X + 2, top + 0.41f);
            world_body_id id = WORLD_NULL_BODY;
            CHECK(world_spawn(wd, WORLD_BODY_MOVING, &box, start, 1, &id, NULL) == WORLD_OK);
            CHECK(world_set_intent(wd, id, v2(12, -4), 1) == WORLD_OK);
            for (int t = 0; t < 240; t++) {
                world_step(wd);
                world_body_row row;
                CHECK(world_body_get(wd, id, &row));
                float gap = row.position.y - 0.4f - top;
                CHECK_MSG(gap >= -GEOM_SKIN && gap <= 0.02f, "rep %d merged %d tick %d: gap %g",
                          rep, merged, t, (double)gap);
                along[merged] = row.position.x - start.x;
            }
            world_destroy(wd);
            CHECK_MSG(along[merged] >= 0.99f * 48.0f, "rep %d merged %d: %g of 48", rep, merged,
                      (double)along[merged]);
        }
    }
}

TEST_MAIN(TEST(test_merge_edges), TEST(test_merge_oracle), TEST(test_merge_world_equivalence),
          TEST(test_merge_world_sliding))

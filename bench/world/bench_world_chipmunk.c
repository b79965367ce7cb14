/* bench_world_chipmunk: scene S1a of PERFORMANCE.md with Chipmunk2D 7's spatial indexes as the
 * broad phase (its spatial hash and its dynamic AABB tree, cpBBTree), each with the same exact
 * swept-AABB slide, next to the product's world in the same process run, so the ratios survive a
 * noisy machine. Also how the decision "uniform grid or AABB tree" was measured
 * (docs/perf/world.md). Optional: built only when libchipmunk-dev is installed; never a dependency
 * of the product.
 *
 * Usage: bench_world_chipmunk [timed_ticks (default 600)] */
#include <chipmunk/chipmunk.h>

#include "s1_world.h"

typedef struct cp_static {
    cpBB bb; /* the tile's box */
} cp_static;

static cpBB cp_static_bb(void *obj) { return ((cp_static *)obj)->bb; }

typedef struct cp_query {
    double x0, y0, x1, y1; /* the mover's box */
    double rx, ry;         /* its displacement */
    double best, nx, ny;   /* earliest hit */
} cp_query;

static cpCollisionID cp_visit(void *obj1, void *obj2, cpCollisionID id, void *data) {
    (void)obj1;
    cp_query *q = data;
    const cp_static *s = obj2;
    double nx = 0, ny = 0;
    double t = s1_box_sweep(q->x0, q->y0, q->x1, q->y1, q->rx, q->ry, s->bb.l, s->bb.b, s->bb.r,
                            s->bb.t, &nx, &ny);
    if (t < q->best) q->best = t, q->nx = nx, q->ny = ny;
    return id;
}

static double cp_sweep(void *ctx, double x0, double y0, double x1, double y1, double rx, double ry,
                       double *nx, double *ny) {
    cpSpatialIndex *index = ctx;
    cp_query q = {x0, y0, x1, y1, rx, ry, 2.0, 0, 0};
    cpBB bb = cpBBNew(s1_min(x0, x0 + rx) - S1_SKIN, s1_min(y0, y0 + ry) - S1_SKIN,
                      s1_max(x1, x1 + rx) + S1_SKIN, s1_max(y1, y1 + ry) + S1_SKIN);
    cpSpatialIndexQuery(index, NULL, bb, cp_visit, &q);
    *nx = q.nx, *ny = q.ny;
    return q.best;
}

static void cp_step(void *ctx, s1_plain *m, double dt) {
    for (int i = 0; i < S1_MOVERS; i++)
        s1_plain_slide(ctx, cp_sweep, &m->x[i], &m->y[i], m->vx[i] * dt, m->vy[i] * dt);
}

static void print_line(const char *scene, const char *engine, s1_result r) {
    printf("{\"scene\":\"%s\",\"engine\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,\"overlaps\":%d,"
           "\"outside\":%d}\n",
           scene, engine, r.median_ms, r.min_ms, r.overlaps, r.outside);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int ticks = argc > 1 ? atoi(argv[1]) : 600;
    if (ticks < 1) ticks = 1;
    static s1_layout layout;
    s1_rng rng;
    if (s1_make_layout(&layout, &rng) != 0) return 1;
    cp_static *tiles = calloc(S1_STATICS, sizeof *tiles);
    if (!tiles) return 1;
    int k = 0;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++)
            if (layout.solid[y * S1_MAP + x]) tiles[k++].bb = cpBBNew(x, y, x + 1, y + 1);
    cpSpatialIndex *hash = cpSpaceHashNew(1.0, 4 * S1_STATICS, cp_static_bb, NULL);
    cpSpatialIndex *tree = cpBBTreeNew(cp_static_bb, NULL);
    for (int i = 0; i < S1_STATICS; i++) {
        cpSpatialIndexInsert(hash, &tiles[i], (cpHashValue)i);
        cpSpatialIndexInsert(tree, &tiles[i], (cpHashValue)i);
    }
    cpBBTreeOptimize(tree);
    const struct {
        const char *name; /* scene */
        float speed;      /* V */
    } scenes[] = {{"S1a-slow", 5.0f}, {"S1a-fast", 600.0f}};
    int bad = 0;
    for (int s = 0; s < 2; s++) {
        world_stats st;
        s1_result mine = run_world(&layout, scenes[s].speed, 0, ticks, &st);
        s1_result h = s1_run_plain(&layout, cp_step, hash, scenes[s].speed, ticks);
        s1_result t = s1_run_plain(&layout, cp_step, tree, scenes[s].speed, ticks);
        print_line(scenes[s].name, "collide", mine);
        print_line(scenes[s].name, "chipmunk cpSpaceHash + exact swept AABB", h);
        print_line(scenes[s].name, "chipmunk cpBBTree (optimized) + exact swept AABB", t);
        printf("{\"scene\":\"%s\",\"ratio_collide_vs_chipmunk_hash\":%.3f,\"ratio_collide_vs_"
               "chipmunk_tree\":%.3f,"
               "\"ratio_chipmunk_tree_vs_hash\":%.3f}\n",
               scenes[s].name, mine.median_ms / h.median_ms, mine.median_ms / t.median_ms,
               t.median_ms / h.median_ms);
        bad |= mine.overlaps || mine.outside || h.overlaps || h.outside || t.overlaps || t.outside;
    }
    cpSpatialIndexFree(hash);
    cpSpatialIndexFree(tree);
    free(tiles);
    return bad;
}

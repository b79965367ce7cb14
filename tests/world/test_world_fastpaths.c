/* The world's fast paths against the general code: random scenes (tile maps of unit boxes, mixed
 * boxes, circles and polygons, large statics on coarser levels, movers slow and fast, colliding or
 * not, spawns and despawns of movers and statics along the way) run for a few hundred ticks, and
 * the state hash is printed at checkpoints, and the counters at the end (swept_hits too: a tick
 * a fast path remembers instead of sliding counts its slide's hits). This source is built twice:
 * against collide_world (the product, every fast path on) and against collide_world_reference
 * (WORLD_FAST_PATHS=0: the box-among-boxes slide, the S1a loop and its remembered statics, the
 * gathered statics of a short slide and the bounds skip compiled out; COLLIDE_ASSERT on).
 * compare_fastpaths.cmake runs both and requires the two outputs to be identical line for line.
 * world_validate() runs after every step: statics come and go here, so it checks the static grid's
 * links, which the soak test (movers only) does not.
 *
 * Usage: test_world_fastpaths_{product,reference} [scene_count]. */
#include "world_test_util.h"

#define FP_SCENES 40
/* scenes 0 .. FP_SCENES_PLAIN - 1 never turn; later ones do; from FP_SCENES_SWITCH on they also
 * switch turning off and back, turn in place, ask beyond the clamp, spawn turned bodies, and
 * change statics every few ticks (world_turn_step_alone's remembered still ticks against the
 * general passes, which the reference takes for every turning tick) */
#define FP_SCENES_PLAIN 96
#define FP_SCENES_SWITCH 144
/* from FP_SCENES_CHAR on, a side-on world: gravity, characters among the movers (jumping now and
 * then), a share of one-way statics (world_character.c's fast paths: the walk that plans, moves
 * and finishes each character at once, the still walkers, the remembered statics, the probe kept
 * from the move) */
#define FP_SCENES_CHAR 168
#define FP_TICKS 240
#define FP_CHECK_EVERY 40
#define FP_MAX_BODIES 1024

typedef struct fp_scene {
    world *w;
    world_body_id movers[FP_MAX_BODIES];
    int nm;
    world_body_id statics[FP_MAX_BODIES];
    int ns;
    collide_rng rng;
    float half;       /* bounds are [-half, half]^2 */
    int style;        /* 0 tile map (unit boxes), 1 mixed shapes, 2 big boxes on coarse levels */
    bool boxes;       /* movers are boxes only */
    bool round_tiles; /* style 0: a fifth of the tiles are circles (no remembered statics) */
    float fast;       /* share of fast intents */
    float spin;       /* share of turning intents (scenes from FP_SCENES_PLAIN on) */
    bool switches;    /* scenes from FP_SCENES_SWITCH on */
    bool chars;       /* scenes from FP_SCENES_CHAR on */
    uint32_t seq;     /* input sequence */
} fp_scene;

static geom_shape fp_shape(fp_scene *s, float scale, bool boxes_only) {
    collide_rng *rng = &s->rng;
    unsigned k = boxes_only ? 0 : collide_rng_next(rng) % 3;
    if (k == 0)
        return wt_box(scale * collide_rng_range(rng, 0.2f, 0.6f),
                      scale * collide_rng_range(rng, 0.2f, 0.6f));
    if (k == 1) return wt_circle(scale * collide_rng_range(rng, 0.2f, 0.6f));
    return wt_ngon(3 + (int)(collide_rng_next(rng) % 6), scale * collide_rng_range(rng, 0.3f, 0.7f),
                   collide_rng_range(rng, 0, 6.28f));
}

static void fp_static(fp_scene *s) {
    if (s->ns == FP_MAX_BODIES / 2) return;
    collide_rng *rng = &s->rng;
    geom_shape shape;
    vec2 p;
    if (s->style == 0) {
        /* a unit tile on integer coordinates: the S1 case (seams, all in the finest level) */
        shape =
            s->round_tiles && collide_rng_unit(rng) < 0.2f ? wt_circle(0.5f) : wt_box(0.5f, 0.5f);
        p = v2((float)(int)collide_rng_range(rng, -s->half + 1, s->half - 1) + 0.5f,
               (float)(int)collide_rng_range(rng, -s->half + 1, s->half - 1) + 0.5f);
    } else if (s->style == 1) {
        shape = fp_shape(s, collide_rng_range(rng, 1.0f, 3.0f), collide_rng_unit(rng) < 0.5f);
        p = v2(collide_rng_range(rng, -s->half + 4, s->half - 4),
               collide_rng_range(rng, -s->half + 4, s->half - 4));
    } else {
        /* boxes from a cell to many cells: several levels of the static grid */
        float size = collide_rng_unit(rng) < 0.3f ? collide_rng_range(rng, 3.0f, 9.0f) : 0.5f;
        shape = wt_box(size * collide_rng_range(rng, 0.3f, 1.0f), size);
        p = v2(collide_rng_range(rng, -s->half + 10, s->half - 10),
               collide_rng_range(rng, -s->half + 10, s->half - 10));
    }
    /* a switch scene's mixed statics stand at random angles now and then */
    float angle = s->switches && s->style == 1 && collide_rng_unit(rng) < 0.3f
                      ? collide_rng_range(rng, -3.14f, 3.14f)
                      : 0.0f;
    world_body_id id = WORLD_NULL_BODY;
    world_spawn_turned(s->w, WORLD_BODY_STATIC, &shape, p, angle, 0, &id, NULL);
    if (id && s->chars && collide_rng_unit(rng) < 0.15f) world_body_set_one_way(s->w, id, true);
    if (id) s->statics[s->ns++] = id;
}

static void fp_mover(fp_scene *s) {
    if (s->nm == FP_MAX_BODIES / 2) return;
    collide_rng *rng = &s->rng;
    geom_shape shape = fp_shape(s, collide_rng_range(rng, 0.8f, 1.6f), s->boxes);
    /* anywhere inside, statics included (the next tick pushes it out), some against the bounds */
    float edge = collide_rng_unit(rng) < 0.1f ? s->half - 0.3f : s->half - 1.0f;
    vec2 p = v2(collide_rng_range(rng, -edge, edge), collide_rng_range(rng, -edge, edge));
    float angle =
        s->switches && collide_rng_unit(rng) < 0.6f ? collide_rng_range(rng, -3.14f, 3.14f) : 0.0f;
    world_body_id id = WORLD_NULL_BODY;
    world_spawn_turned(s->w, WORLD_BODY_MOVING, &shape, p, angle, 7u, &id, NULL);
    if (id && s->chars && collide_rng_unit(rng) < 0.6f) {
        world_character_options o = {
            .step_height = collide_rng_unit(rng) < 0.5f ? collide_rng_range(rng, 0.1f, 0.6f) : 0,
            .snap_distance = collide_rng_unit(rng) < 0.5f ? collide_rng_range(rng, 0.1f, 0.6f) : 0,
            .jump_speed = collide_rng_range(rng, 0.0f, 15.0f),
            .max_slope = collide_rng_range(rng, 0.0f, 1.2f)};
        world_body_set_character(s->w, id, &o);
    }
    if (id) s->movers[s->nm++] = id;
}

static void fp_intent(fp_scene *s, int i) {
    collide_rng *rng = &s->rng;
    float u = collide_rng_unit(rng);
    float speed =
        u < s->fast ? collide_rng_range(rng, 100.0f, 900.0f) : collide_rng_range(rng, 0.0f, 8.0f);
    vec2 v;
    if (collide_rng_unit(rng) < 0.4f) {
        /* along an axis: sliding along walls and seams, the pinned cases */
        float sign = collide_rng_unit(rng) < 0.5f ? -1.0f : 1.0f;
        v = collide_rng_unit(rng) < 0.5f ? v2(sign * speed, 0) : v2(0, sign * speed);
    } else {
        float a = collide_rng_range(rng, 0, 6.2831853f);
        v = v2(speed * cosf(a), speed * sinf(a));
    }
    if (s->switches && collide_rng_unit(rng) < s->spin) {
        /* off (the tick after turns its whole translation through the slide), beyond the clamp,
         * any speed up to it; a quarter of them in place */
        float k = collide_rng_unit(rng);
        float w = k < 0.25f  ? 0.0f
                  : k < 0.4f ? (collide_rng_unit(rng) < 0.5f ? -1.0f : 1.0f) *
                                   collide_rng_range(rng, 30.0f, 1000.0f)
                             : collide_rng_range(rng, -25.0f, 25.0f);
        if (collide_rng_unit(rng) < 0.25f) v = v2(0.0f, 0.0f);
        world_set_intent_turning(s->w, s->movers[i], v, w, ++s->seq);
    } else if (s->spin > 0.0f && collide_rng_unit(rng) < s->spin)
        world_set_intent_turning(s->w, s->movers[i], v, collide_rng_range(rng, -12.0f, 12.0f),
                                 ++s->seq);
    else if (world_set_intent(s->w, s->movers[i], v, ++s->seq) == WORLD_OK && s->chars &&
             collide_rng_unit(rng) < 0.3f)
        world_character_jump(s->w, s->movers[i]);
}

/* Runs scene k and prints its checkpoints; false when the world could not be built. */
static bool fp_run(int k) {
    fp_scene *s = calloc(1, sizeof *s);
    if (!s) return false;
    s->rng.state = 0x9e3779b9u * (unsigned)(k + 1);
    s->style = k % 3;
    s->boxes = s->style != 1 || (k / 2) % 2 == 0;
    s->round_tiles = (k / 2) % 2 == 1;
    s->fast = (k / 6) % 3 == 0 ? 0.0f : (k / 6) % 3 == 1 ? 0.05f : 0.3f;
    /* the scenes past the plain ones turn some of their movers (the turning tick's shared walk
     * of the statics against each part walking its own) */
    s->spin = k < FP_SCENES_PLAIN ? 0.0f : (k / 3) % 2 ? 0.7f : 0.3f;
    s->switches = k >= FP_SCENES_SWITCH;
    s->chars = k >= FP_SCENES_CHAR;
    s->half = collide_rng_range(&s->rng, 12.0f, 40.0f);
    world_config cfg;
    world_config_default(&cfg);
    cfg.bounds = aabb_make(v2(-s->half, -s->half), v2(s->half, s->half));
    cfg.max_bodies = FP_MAX_BODIES;
    cfg.tick_rate_hz = k % 5 == 4 ? 20.0f : 60.0f;
    cfg.cell_size = k % 7 == 3 ? 2.0f : k % 7 == 5 ? 0.5f : 0.0f;
    /* down, mostly; now and then sideways or slanted (up is whatever gravity says) */
    if (s->chars)
        cfg.gravity = k % 4 == 3   ? v2(-12.0f, -25.0f)
                      : k % 8 == 5 ? v2(30.0f, 0.0f)
                                   : v2(0, -30.0f);
    s->w = world_create(&cfg);
    if (!s->w) {
        free(s);
        return false;
    }
    /* collisions off in half of the scenes (every style): world_step_alone, the S1a loop */
    bool collide = k % 2 == 0;
    world_set_mover_collisions(s->w, collide);
    int statics = (int)(s->half * s->half * (s->style == 0 ? 0.25f : 0.03f));
    for (int i = 0; i < statics; i++)
        fp_static(s);
    if (s->chars && s->style == 0) {
        /* a floor of unit tiles whose tops step up and down by a quarter: walkers step up and
         * snap down along it (the fused step of world_character_alone.c and its give-ups) */
        geom_shape tile = wt_box(0.5f, 0.5f);
        float y = -0.5f * s->half;
        for (float x = -s->half + 1.5f; x < s->half - 1.0f && s->ns < FP_MAX_BODIES / 2;
             x += 1.0f) {
            y += 0.25f * (float)((int)(collide_rng_next(&s->rng) % 3) - 1);
            world_body_id id = wt_spawn(s->w, WORLD_BODY_STATIC, tile, v2(x, y));
            if (id) s->statics[s->ns++] = id;
        }
    }
    int movers = 20 + (int)(collide_rng_next(&s->rng) % 120);
    for (int i = 0; i < movers; i++)
        fp_mover(s);
    printf("scene %d (style %d, %s, fast %.2f, spin %.1f%s%s, %d statics, %d movers):", k, s->style,
           collide ? "colliding" : "alone", (double)s->fast, (double)s->spin,
           s->switches ? " switching" : "", s->chars ? " characters" : "", s->ns, s->nm);
    for (int t = 1; t <= FP_TICKS; t++) {
        for (int i = 0; i < s->nm; i++)
            if (t == 1 || collide_rng_unit(&s->rng) < 0.08f) fp_intent(s, i);
        /* churn: movers come and go; now and then a static (the remembered statics go stale) */
        if (collide_rng_unit(&s->rng) < 0.2f) fp_mover(s);
        if (s->nm > 2 && collide_rng_unit(&s->rng) < 0.15f) {
            int i = (int)(collide_rng_next(&s->rng) % (unsigned)s->nm);
            world_despawn(s->w, s->movers[i]);
            s->movers[i] = s->movers[--s->nm];
        }
        /* (a switch scene's every 10 ticks: movers pinned still by a static get freed) */
        int every = s->switches ? 10 : 50;
        if (t % every == every / 2) fp_static(s);
        if (t % every == 0 && s->ns > 1) {
            int i = (int)(collide_rng_next(&s->rng) % (unsigned)s->ns);
            world_despawn(s->w, s->statics[i]);
            s->statics[i] = s->statics[--s->ns];
        }
        world_step(s->w);
        const char *broken = world_validate(s->w);
        if (broken) {
            fprintf(stderr, "scene %d tick %d: %s\n", k, t, broken);
            exit(1);
        }
        if (t % FP_CHECK_EVERY == 0) printf(" %016llx", (unsigned long long)world_state_hash(s->w));
    }
    world_stats st;
    world_get_stats(s->w, &st);
    printf(" separations %llu jammed %llu swept_hits %llu\n", (unsigned long long)st.separations,
           (unsigned long long)st.jammed, (unsigned long long)st.swept_hits);
    world_destroy(s->w);
    free(s);
    return true;
}

int main(int argc, char **argv) {
    int scenes = argc > 1 ? atoi(argv[1]) : FP_SCENES;
    for (int k = 0; k < scenes; k++)
        if (!fp_run(k)) {
            fprintf(stderr, "scene %d: world_create failed\n", k);
            return 1;
        }
    return 0;
}

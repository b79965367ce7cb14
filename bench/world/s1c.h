/* Scene S1c (PERFORMANCE.md, the protocol 1.2 figures): S1a-slow's map as a side-on level.
 *
 * - Map: S1's 13,798 solid cells, each a static 1 x 1 box, exactly as S1 builds them. Of them,
 *   S1C_ONE_WAY (10%, 1,380) are one-way (up = +y), all interior: the border stays solid so the
 *   level stays closed. They are chosen by selection sampling (Knuth's algorithm S) over the
 *   interior solid cells in S1's row-major order, drawing from a second xorshift32 seeded
 *   S1C_SEED, so S1's own draws (the start cells, the intents) are untouched.
 * - Gravity (0, -S1C_GRAVITY). S1's 10,000 movers, at S1's start cells, are characters
 *   (step_height 0.3, snap_distance 0.3, jump_speed 9: a jump rises 1.35, more than a cell; the
 *   rest the defaults). Mover collisions off, as S1a.
 * - Intents as S1a-slow: at every tick k with k % 60 == 0 each mover draws a = unit() 2 pi and
 *   intends 5 (cos a, sin a) (a character keeps only the part across gravity, 5 cos a). At every
 *   tick k with k % S1C_JUMP_EVERY == 0, after that, each mover draws u = unit() and presses jump
 *   when u < S1C_JUMP_CHANCE: its intent again under a new input_seq, then world_character_jump.
 * - Timed: world_step alone, 10 warm-up ticks then the timed ones, as S1. The checks run between
 *   steps, untimed:
 *   - overlaps: at the end, movers overlapping a static that is not one-way by more than 0.01 (a
 *     character may be inside a one-way cell it is passing up or across through); outside: at
 *     the end, movers outside the map;
 *   - falls through, after every step: a character grounded on a one-way body after step t that
 *     after step t+1 still spans more than 0.01 of that body's width, its lowest point more than
 *     0.01 below the body's top, with its velocity along up <= 0, and no jump pressed within the
 *     jump buffer (100 ms: 6 ticks) before step t+1 (so it cannot have taken one);
 *   - crossed down, after every step: a character that began the step wholly above a one-way
 *     cell (its lowest point at most GEOM_SKIN below the cell's top) and ends it below (more than
 *     0.01), spanning more than 0.01 of the cell's width at both ends: the one-way rule's own
 *     promise, found by the bench's map of the one-way cells, not by the world's broad phase.
 *     "Falls through" asks for a stand first, so it misses a character that falls through a
 *     platform it was landing on; this catches that too. */
#ifndef COLLIDE_BENCH_S1C_H
#define COLLIDE_BENCH_S1C_H

#include "s1_world.h"

#define S1C_ONE_WAY 1380 /* 10% of S1_STATICS */
#define S1C_SEED 777u
#define S1C_GRAVITY 30.0f
#define S1C_JUMP_SPEED 9.0f
#define S1C_JUMP_EVERY 20
#define S1C_JUMP_CHANCE 0.25
#define S1C_BUFFER_TICKS 6 /* the default jump_buffer_ms, 100, at 60 Hz */
#define S1C_TOL 0.01f

typedef struct s1c_run {
    int ticks;                       /* timed ticks, after S1_WARMUP */
    int k;                           /* ticks stepped so far, warm-up included */
    uint32_t seq;                    /* the intents' sequence number */
    s1_rng rng;                      /* the intents' draws, continuing the layout's */
    world *w;                        /* the world */
    world_body_id movers[S1_MOVERS]; /* characters in S1's order */
    vec2 intent[S1_MOVERS];          /* each one's velocity intent */
    int pressed[S1_MOVERS];          /* the tick of its last jump press + 1; 0 none */
    world_body_id stood[S1_MOVERS];  /* the one-way body it stood on after the last step */
    float up[S1_MOVERS];             /* its velocity along up after the last step */
    aabb at[S1_MOVERS];              /* its bounds after the last step (before the next) */
    unsigned char one_way_cell[S1_MAP * S1_MAP]; /* the one-way cells, row-major */
    int one_way;                                 /* one-way statics made */
    double *times;                               /* per timed tick */
    unsigned long long stood_ticks;    /* character-steps that began grounded on a one-way body */
    unsigned long long falls_through;  /* of them, the ones that fell through it */
    unsigned long long crossed_down;   /* character-steps that crossed a one-way cell's top down */
    unsigned long long jumps;          /* jumps seen taken (velocity along up past half a jump's) */
    unsigned long long grounded_ticks; /* character-steps that ended grounded */
} s1c_run;

/* S1's map, 10% of it one-way (marked in cells), into a world with gravity; NULL on failure. */
static inline world *s1c_world_build(const s1_layout *l, unsigned char *cells, int *one_way) {
    world_config cfg = s1_config(S1_STATICS + S1_MOVERS, S1_MOVERS);
    cfg.gravity = v2(0.0f, -S1C_GRAVITY);
    world *w = world_create(&cfg);
    geom_shape tile;
    if (!w || geom_make_box(v2(0.5f, 0.5f), &tile)) return NULL;
    int interior = 0;
    for (int y = 1; y < S1_MAP - 1; y++)
        for (int x = 1; x < S1_MAP - 1; x++)
            interior += l->solid[y * S1_MAP + x];
    s1_rng pick = {S1C_SEED};
    int seen = 0;
    *one_way = 0;
    for (int y = 0; y < S1_MAP; y++)
        for (int x = 0; x < S1_MAP; x++) {
            if (!l->solid[y * S1_MAP + x]) continue;
            world_body_id id;
            if (world_spawn(w, WORLD_BODY_STATIC, &tile, v2((float)x + 0.5f, (float)y + 0.5f), 0,
                            &id, NULL) != WORLD_OK)
                return NULL;
            if (x == 0 || y == 0 || x == S1_MAP - 1 || y == S1_MAP - 1) continue;
            /* algorithm S: take this one with probability (still wanted) / (still to visit) */
            if (s1_unit(&pick) * (interior - seen++) < S1C_ONE_WAY - *one_way) {
                if (world_body_set_one_way(w, id, true) != WORLD_OK) return NULL;
                cells[y * S1_MAP + x] = 1;
                ++*one_way;
            }
        }
    return w;
}

static inline void s1c_run_start(s1c_run *run, const s1_layout *l, int ticks) {
    memset(run, 0, sizeof *run);
    run->ticks = ticks;
    run->times = calloc((size_t)ticks, sizeof *run->times);
    run->w = s1c_world_build(l, run->one_way_cell, &run->one_way);
    world_character_options opt = {0};
    opt.step_height = 0.3f;
    opt.snap_distance = 0.3f;
    opt.jump_speed = S1C_JUMP_SPEED;
    if (!run->times || !run->w || run->one_way != S1C_ONE_WAY ||
        !s1_world_spawn_movers(run->w, l, run->movers)) {
        fprintf(stderr, "S1c: setup failed\n");
        exit(1);
    }
    for (int i = 0; i < S1_MOVERS; i++)
        if (world_body_set_character(run->w, run->movers[i], &opt) != WORLD_OK) {
            fprintf(stderr, "S1c: world_body_set_character failed\n");
            exit(1);
        }
    world_set_mover_collisions(run->w, false);
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_row r;
        world_body_get(run->w, run->movers[i], &r);
        run->at[i] = r.bounds;
    }
    s1_layout again;
    s1_make_layout(&again, &run->rng); /* the intents continue the layout's draws */
}

/* The intents of tick k: S1a-slow's velocity draws, then the jump presses. */
static inline void s1c_intents(s1c_run *run, int k) {
    if (k % 60 == 0) {
        run->seq++;
        for (int i = 0; i < S1_MOVERS; i++) {
            double a = s1_unit(&run->rng) * 2.0 * S1_PI;
            run->intent[i] = v2((float)(5.0 * cos(a)), (float)(5.0 * sin(a)));
            world_set_intent(run->w, run->movers[i], run->intent[i], run->seq);
        }
    }
    if (k % S1C_JUMP_EVERY != 0) return;
    run->seq++;
    for (int i = 0; i < S1_MOVERS; i++) {
        if (s1_unit(&run->rng) >= S1C_JUMP_CHANCE) continue;
        if (world_set_intent(run->w, run->movers[i], run->intent[i], run->seq) == WORLD_OK &&
            world_character_jump(run->w, run->movers[i]) == WORLD_OK)
            run->pressed[i] = k + 1;
    }
}

/* Whether a character that was at `from` before a step and is at `to` after it crossed the top
 * of a one-way cell downwards while over it (s1c_run's "crossed down"). */
static inline bool s1c_crossed_down(const s1c_run *run, aabb from, aabb to) {
    int x0 = s1_floor(fmin(from.min.x, to.min.x)), x1 = s1_floor(fmax(from.max.x, to.max.x));
    int y0 = s1_floor(to.min.y + S1C_TOL), y1 = s1_floor(from.min.y + GEOM_SKIN);
    for (int top = y0 + 1; top <= y1; top++) /* the tops strictly above to.min.y + tol */
        for (int x = x0 < 0 ? 0 : x0; x <= x1 && x < S1_MAP; x++) {
            if (top < 1 || top > S1_MAP || !run->one_way_cell[(top - 1) * S1_MAP + x]) continue;
            float a = fminf(from.max.x, (float)x + 1) - fmaxf(from.min.x, (float)x);
            float b = fminf(to.max.x, (float)x + 1) - fmaxf(to.min.x, (float)x);
            if (a > S1C_TOL && b > S1C_TOL && from.min.y >= (float)top - GEOM_SKIN &&
                to.min.y < (float)top - S1C_TOL)
                return true;
        }
    return false;
}

/* After step k: the falls-through check against what each character stood on after step k-1,
 * then what it stands on now. */
static inline void s1c_after_step(s1c_run *run, int k) {
    for (int i = 0; i < S1_MOVERS; i++) {
        world_character_state cs;
        world_body_row r, g;
        if (!world_body_character(run->w, run->movers[i], &cs) ||
            !world_body_get(run->w, run->movers[i], &r)) {
            fprintf(stderr, "S1c: character %d lost\n", i);
            exit(1);
        }
        if (run->stood[i] && world_body_get(run->w, run->stood[i], &g)) {
            run->stood_ticks++;
            float span =
                fminf(r.bounds.max.x, g.bounds.max.x) - fmaxf(r.bounds.min.x, g.bounds.min.x);
            bool may_jump = run->pressed[i] && k - (run->pressed[i] - 1) <= S1C_BUFFER_TICKS;
            if (span > S1C_TOL && r.bounds.min.y < g.bounds.max.y - S1C_TOL &&
                cs.vertical <= 0.0f && !may_jump)
                run->falls_through++;
        }
        run->crossed_down += s1c_crossed_down(run, run->at[i], r.bounds);
        run->at[i] = r.bounds;
        if (cs.vertical > 0.5f * S1C_JUMP_SPEED && run->up[i] <= 0.5f * S1C_JUMP_SPEED)
            run->jumps++;
        run->up[i] = cs.vertical;
        run->grounded_ticks += cs.grounded;
        run->stood[i] = cs.grounded && cs.ground && world_body_one_way(run->w, cs.ground)
                            ? cs.ground
                            : WORLD_NULL_BODY;
    }
}

/* Steps up to n more ticks (fewer at the end of the run); the number stepped. */
static inline int s1c_run_ticks(s1c_run *run, int n) {
    int done = 0;
    for (; done < n && run->k < S1_WARMUP + run->ticks; done++, run->k++) {
        int k = run->k;
        s1c_intents(run, k);
        double t0 = s1_now_ms();
        world_step(run->w);
        double t1 = s1_now_ms();
        if (k >= S1_WARMUP) run->times[k - S1_WARMUP] = t1 - t0;
        s1c_after_step(run, k);
    }
    return done;
}

/* Overlaps with the statics that are not one-way, and movers outside the map. */
static inline void s1c_check(const s1c_run *run, int *overlaps, int *outside) {
    *overlaps = *outside = 0;
    world_body_id near[64];
    for (int i = 0; i < S1_MOVERS; i++) {
        world_body_row info, si;
        geom_shape ms, ss;
        world_body_get(run->w, run->movers[i], &info);
        world_body_shape(run->w, run->movers[i], &ms);
        if (!aabb_contains(aabb_make(v2(0, 0), v2(S1_MAP, S1_MAP)), info.bounds)) (*outside)++;
        size_t n = world_query_aabb(run->w, aabb_inflate(info.bounds, 0.02f),
                                    1u << WORLD_BODY_STATIC, near, 64);
        for (size_t q = 0; q < n && q < 64; q++) {
            if (world_body_one_way(run->w, near[q])) continue;
            world_body_get(run->w, near[q], &si);
            world_body_shape(run->w, near[q], &ss);
            geom_contact c;
            if (geom_overlap(&ms, info.position, &ss, si.position, &c) && c.depth > S1C_TOL) {
                (*overlaps)++;
                break;
            }
        }
    }
}

/* The result of a run stepped to its end (the counters stay in run); frees the world. */
static inline s1_result s1c_run_finish(s1c_run *run) {
    s1_result r = {0, 0, 0, 0, 0, 0, 0, 0};
    s1c_check(run, &r.overlaps, &r.outside);
    r.state_hash = world_state_hash(run->w);
    qsort(run->times, (size_t)run->ticks, sizeof *run->times, s1_cmp_double);
    r.median_ms = run->times[run->ticks / 2];
    r.min_ms = run->times[0];
    world_destroy(run->w);
    run->w = NULL;
    free(run->times);
    run->times = NULL;
    return r;
}

#endif

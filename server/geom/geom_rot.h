/* geom_rot: turning shapes (PROTOCOL.md "Rotation", COLLISION.md "sweep with rotation").
 *
 * A shape stays body-local; where it stands is a transform (position and rotation kept as
 * cos/sin), applied to the vertices as a query reads them. Nothing here re-bakes a stored shape.
 *   - geom_distance_xf: GJK distance between two convex shapes with the closest points (two
 *     boxes: their face axes, then a corner against a face or the eight corners against the
 *     other box, exact and without GJK).
 *   - geom_toi_turning: time of impact under combined linear and angular motion by conservative
 *     advancement (Mirtich; the seed's "Collision detection for dummies"): from the closest points'
 *     direction n, no point can close the gap faster than |v_rel . n| + |w_a| r_a + |w_b| r_b
 *     (r = the farthest point of the shape from its body origin, which it turns about; a circle,
 *     centred on its origin, adds nothing: its turn moves no part of it), so
 *     advancing by (distance - target) / that bound never overshoots. It starts when the discs
 *     of radius r around the two origins come near (before, the shapes cannot), and two boxes
 *     advance by their separation along a face axis (a lower bound of the distance, safe with
 *     the same bound along that axis) until the exact distance decides. Included by geom.h. */
#ifndef COLLIDE_GEOM_ROT_H
#define COLLIDE_GEOM_ROT_H

/* Position plus rotation, q = (cos angle, sin angle): world = rotate(q) * local + p. */
typedef struct geom_xf {
    vec2 p;
    vec2 q;
} geom_xf;

/* cos and sin, the same bits on every machine and in WebAssembly (geom_trig.c: no libm, whose
 * answers differ in the last bit between glibc and musl, and between CPUs). geom_sincos in
 * double; geom_cos_sin rounds its answer to float (the correctly rounded cosf and sinf but for
 * inputs within about 2^-50 of a tie). Every cos and sin of geom and the world is one of these. */
void geom_sincos(double a, double *c, double *s);
vec2 geom_cos_sin(float a);

static inline geom_xf geom_xf_make(vec2 p, float angle) {
    geom_xf x = {p, geom_cos_sin(angle)};
    return x;
}
static inline vec2 geom_rotate(vec2 q, vec2 v) {
    return v2(q.x * v.x - q.y * v.y, q.y * v.x + q.x * v.y);
}
static inline vec2 geom_xf_apply(geom_xf x, vec2 v) { return v2_add(x.p, geom_rotate(x.q, v)); }

/* The farthest any point of the shape lies from its body origin (what it turns about). */
float geom_shape_radius(const geom_shape *shape);
/* The shape as it stands turned by q, in the body's frame (not validated again: a turn keeps a
 * valid shape valid). A box stays a box only for q = (1, 0); otherwise it becomes the 4-vertex
 * polygon; polygons get their vertices and normals turned; circles are unchanged. A working copy
 * for a query or a world's cache of "the shape at its current angle", always made from the
 * body-local shape (never from an earlier turned copy, so no rounding accumulates). */
void geom_shape_orient(const geom_shape *local, vec2 q, geom_shape *out);
aabb geom_shape_aabb_xf(const geom_shape *shape, geom_xf xf);
/* The AABB about the origin of a box of half extents h turned by q: geom_shape_aabb (at the
 * origin) of geom_shape_orient's shape, the same floats, without building it. Along x the
 * corners reach +-(c hx) -+ (s hy), each product rounded alike whatever its sign, so the extreme
 * is |c hx| + |s hy| rounded once (and the least its negation); along y |s hx| + |c hy|. */
static inline aabb geom_box_turned_aabb(vec2 h, vec2 q) {
    float ex = fabsf(q.x * h.x) + fabsf(q.y * h.y), ey = fabsf(q.y * h.x) + fabsf(q.x * h.y);
    return aabb_make(v2(-ex, -ey), v2(ex, ey));
}
/* geom_overlap for transformed shapes (same rules: touching is not overlap, normal A to B). */
bool geom_overlap_xf(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                     geom_contact *out);

typedef struct geom_closest {
    float distance; /* >= 0 apart; 0 when touching or overlapping (no depth: geom_overlap_xf) */
    vec2 point_a;   /* closest point on A (world) */
    vec2 point_b;   /* closest point on B (world) */
    vec2 normal;    /* unit, from A towards B (0, 1) when they overlap */
    bool overlap;   /* the shapes overlap or touch within GJK's tolerance */
    int iterations; /* GJK iterations */
} geom_closest;

/* GJK distance (Minkowski difference B (-) A, simplex of 1-3 support points, at most
 * GEOM_GJK_MAX_ITERATIONS); circles are a point plus a radius. Returns out->distance. */
#define GEOM_GJK_MAX_ITERATIONS 32
float geom_distance_xf(const geom_shape *a, geom_xf xa, const geom_shape *b, geom_xf xb,
                       geom_closest *out);

/* A body's motion over the interval [0,1]: it starts at p0 turned by a0 and ends at p0 + dp
 * turned by a0 + da, both linearly in t (constant velocities). */
typedef struct geom_motion {
    vec2 p0;
    float a0;
    vec2 dp;
    float da;
} geom_motion;

typedef enum geom_toi_state {
    GEOM_TOI_SEPARATED = 0, /* no contact in [0,1]: t = 1 */
    GEOM_TOI_HIT,           /* within target + tolerance at t */
    GEOM_TOI_START_CONTACT, /* within target + tolerance (or overlapping) at t = 0 */
    GEOM_TOI_ITERATIONS,    /* the iteration bound was hit: t is the last safe time reached */
} geom_toi_state;

typedef struct geom_toi_result {
    geom_toi_state state;
    float t;        /* fraction of the interval; every earlier time is at least `target` apart */
    vec2 normal;    /* unit, from A towards B at t (along the closest points) */
    float distance; /* gap at t */
    int iterations; /* advancement steps taken */
} geom_toi_result;

#define GEOM_CA_MAX_ITERATIONS 40
/* Conservative advancement. Target: the gap to stop at (> 0, e.g. half the skin); tolerance: how
 * far above it a gap counts as arrived. Guarantee: at every time before out->t the shapes are at
 * least `target` apart (up to float rounding of the distance); the answer is defined at the
 * iteration bound (GEOM_TOI_ITERATIONS, t = the safe time reached). Returns true unless
 * GEOM_TOI_SEPARATED. */
bool geom_toi_turning(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                      const geom_motion *mb, float target, float tolerance, geom_toi_result *out);
/* The same, for a caller that only wants a contact earlier than `before` (the earliest among
 * several pairs): once the advancement reaches `before` it stops and answers
 * GEOM_TOI_SEPARATED. Below `before` the steps and the answer are geom_toi_turning's. */
bool geom_toi_turning_before(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                             const geom_motion *mb, float target, float tolerance, float before,
                             geom_toi_result *out);
/* geom_toi_turning_before for a body that may start its interval in contact, as a body the tick
 * stopped against something starts the next (the tick's advancement; a sensor, which asks whether
 * two shapes touch at all, keeps geom_toi_turning). Where geom_toi_turning_before answers
 * GEOM_TOI_START_CONTACT at t = 0 whatever the motion, this goes on when the motion opens the gap
 * there (toi_opens: the closest points' relative velocity along the normal is not negative), the
 * start apart by more than target / 8: it advances towards a lowered target, half the largest gap
 * it has met so far and never above `target` (the tolerance in the same proportion), and answers
 * GEOM_TOI_HIT where another part closes in, or GEOM_TOI_SEPARATED. So a body resting against a
 * wall can turn away from it, and a corner that swings back in still stops short. Guarantee: at
 * every time before out->t the shapes are at least min(target, half the start gap) apart. A start
 * that overlaps, that the motion closes, or that is closer than target / 8, answers
 * GEOM_TOI_START_CONTACT as geom_toi_turning_before does. Away from a start in contact the
 * answer is geom_toi_turning_before's, bit for bit. */
bool geom_toi_turning_leaving(const geom_shape *a, const geom_motion *ma, const geom_shape *b,
                              const geom_motion *mb, float target, float tolerance, float before,
                              geom_toi_result *out);

/* The start angle's (cos, sin) as the advancement takes it (a quarter-turn reduction and a
 * series, within about 1e-7 of geom_cos_sin; exactly (1, 0) for 0). */
vec2 geom_turn_start(float a);
/* A turning box as geom_toi_turning_box_fixed takes it: what does not depend on the other box,
 * set once for all the boxes it is advanced against. */
typedef struct geom_turning_box {
    vec2 h;        /* half extents */
    float radius;  /* geom_shape_radius of the box */
    vec2 q0;       /* geom_turn_start(m.a0) */
    geom_motion m; /* its motion */
} geom_turning_box;
/* geom_toi_turning_leaving for the box a against a box B of half extents (hbx, hby) that stands
 * still at (pbx, pby), unturned (B's motion {pb, 0, (0, 0), 0}), when only the time is wanted:
 * the contact time t of its answer when that is true (t < before), otherwise 2. The same floats
 * as the general loop. (Scalars, not vec2s: no packing at the call.) */
float geom_toi_turning_box_fixed(const geom_turning_box *a, float hbx, float hby, float pbx,
                                 float pby, float target, float tolerance, float before);

#endif

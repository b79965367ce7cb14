/* geom: 2D collision queries for boxes, convex polygons and circles.
 *
 * Pure, allocation-free and deterministic: no I/O, no clock, no globals that change. Every query
 * is built on the Minkowski difference M = B (-) A = { b - a }: A (moved by t*d) overlaps B exactly
 * when t*d lies in M. So overlap is "is the origin in M, and which edge of M is closest" (the MTV),
 * and a sweep is "where does the ray from the origin along d enter M".
 *
 * Conventions (hold for every function below):
 *   - float32, y up, positions in world units. A shape is defined in body-local coordinates and
 *     placed by a position, or by a transform (position and rotation) in geom_rot.h.
 *   - Every normal a pair query returns points from A towards B, and is unit length.
 *   - Degenerate input (zero motion, touching, coincident centres, parallel edges, huge
 *     coordinates) gives a defined answer, never NaN or Inf.
 */
#ifndef COLLIDE_GEOM_H
#define COLLIDE_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include "vec2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Tolerances: the only place they are defined. ------------------------------------------ */

/* Gap the tick leaves between a stopped body and what it hit, and the overlap against a static
 * that still counts as "not penetrating" (COLLISION.md I2). */
#define GEOM_SKIN 1e-3f
/* Two points closer than this are the same point (duplicate vertex check, touching contacts). */
#define GEOM_LINEAR_SLOP 1e-5f
/* Cross products (twice the triangle area, relative to squared edge length) below this make three
 * vertices collinear. */
#define GEOM_COLLINEAR_TOL 1e-6f
/* Sizes the validator accepts: a half extent, radius or vertex coordinate outside
 * [GEOM_MIN_SIZE, GEOM_MAX_SIZE] is refused. The world may narrow these further. */
#define GEOM_MIN_SIZE 1e-3f
#define GEOM_MAX_SIZE 1e4f
#define GEOM_MAX_POLYGON_VERTICES 16
/* Relative offsets (pb - pa, origin - position) and displacements with a component beyond this
 * (or non-finite) are out of contract: every query answers "no overlap / no hit" for them instead
 * of overflowing. Far beyond any world, yet small enough that squares stay finite. */
#define GEOM_MAX_COORD 1e18f

/* ---- Shapes ---------------------------------------------------------------------------------- */

typedef enum geom_shape_kind {
    GEOM_SHAPE_BOX = 1,     /* axis-aligned box centred on the body position */
    GEOM_SHAPE_POLYGON = 2, /* convex, counter-clockwise, body-local vertices */
    GEOM_SHAPE_CIRCLE = 3,  /* centred on the body position */
} geom_shape_kind;

typedef struct geom_polygon {
    int count;                                /* 3..GEOM_MAX_POLYGON_VERTICES */
    vec2 vertices[GEOM_MAX_POLYGON_VERTICES]; /* CCW, body-local */
    vec2 normals[GEOM_MAX_POLYGON_VERTICES];  /* outward unit normal of edge i -> i+1 */
} geom_polygon;

typedef struct geom_shape {
    geom_shape_kind kind; /* which member of the union is live */
    union {
        vec2 half_extents;    /* GEOM_SHAPE_BOX */
        float radius;         /* GEOM_SHAPE_CIRCLE */
        geom_polygon polygon; /* GEOM_SHAPE_POLYGON */
    } u;
} geom_shape;

/* Why a shape was refused. GEOM_OK is zero so `if (err)` reads naturally. */
typedef enum geom_shape_error {
    GEOM_OK = 0,
    GEOM_ERR_NON_FINITE, /* a NaN or Inf anywhere */
    GEOM_ERR_TOO_FEW_VERTICES,
    GEOM_ERR_TOO_MANY_VERTICES,
    GEOM_ERR_DUPLICATE_VERTEX,
    GEOM_ERR_COLLINEAR, /* three consecutive vertices on one line */
    GEOM_ERR_CLOCKWISE,
    GEOM_ERR_NON_CONVEX,
    GEOM_ERR_ZERO_AREA,
    GEOM_ERR_SIZE_OUT_OF_RANGE,
    GEOM_ERR_UNKNOWN_KIND,
} geom_shape_error;

/* A short, stable, human-readable reason ("polygon is not convex"); never NULL. */
const char *geom_shape_error_str(geom_shape_error err);

/* Constructors validate and, on success, fill *out (polygons get their normals computed).
 * On failure *out is left untouched and the reason is returned. */
geom_shape_error geom_make_box(vec2 half_extents, geom_shape *out);
geom_shape_error geom_make_circle(float radius, geom_shape *out);
geom_shape_error geom_make_polygon(const vec2 *vertices, int count, geom_shape *out);
/* Builds the convex hull of a point cloud (any order, duplicates and interior points allowed) and
 * then validates it as a polygon. Hulls with more than GEOM_MAX_POLYGON_VERTICES vertices are
 * refused with GEOM_ERR_TOO_MANY_VERTICES. */
geom_shape_error geom_make_hull(const vec2 *points, int count, geom_shape *out);
/* The shape turned by `angle` radians counter-clockwise about the body origin, validated. A body
 * turns by its transform (geom_rot.h) and keeps its shape body-local; this bakes an angle into
 * the shape itself, for a shape that never turns afterwards (a query's shape given with an
 * angle, net_queries.c): circles are unchanged, a box turned by a multiple of a quarter turn
 * stays a box (extents swapped on odd quarters), any other box becomes a 4-vertex polygon, and a
 * polygon's vertices are rotated (counter-clockwise order is kept). Non-finite angles:
 * GEOM_ERR_NON_FINITE. */
geom_shape_error geom_shape_rotate(const geom_shape *shape, float angle, geom_shape *out);
/* Re-checks an already built shape (e.g. one decoded from the wire and filled in by hand). */
geom_shape_error geom_shape_validate(const geom_shape *shape);

/* ---- Single-shape queries -------------------------------------------------------------------- */

aabb geom_shape_aabb(const geom_shape *shape, vec2 position);
bool geom_shape_contains_point(const geom_shape *shape, vec2 position, vec2 point);

typedef struct geom_ray_hit {
    float t;     /* fraction of the ray's displacement, in [0,1] */
    vec2 normal; /* the surface normal at the hit, pointing out of the shape (towards the ray) */
} geom_ray_hit;

/* Casts the segment origin -> origin + displacement against the shape. A ray that starts inside
 * the shape reports no hit (line-of-sight semantics: you cannot hit the wall you stand in). */
bool geom_ray_cast(const geom_shape *shape, vec2 position, vec2 origin, vec2 displacement,
                   geom_ray_hit *out);

/* ---- Pair queries ---------------------------------------------------------------------------- */

typedef struct geom_contact {
    vec2 normal; /* unit, from A towards B: moving B by normal*depth (or A by -normal*depth)
                  * separates them; the MTV is normal*depth */
    float depth; /* penetration depth, > 0 when overlapping */
} geom_contact;

/* True when A and B overlap by more than zero; then *out holds the minimum translation.
 * Touching exactly (depth 0) is not overlap. out may be NULL for a yes/no test. */
bool geom_overlap(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, geom_contact *out);

/* Signed distance between A and B: the Euclidean distance between the shapes when apart (the
 * closest pair of points: for convex shapes one of them is a vertex of either shape, or a circle's
 * centre), minus the penetration depth when overlapping (geom_overlap's MTV), 0 when touching.
 * *normal (may be NULL) gets the unit direction from A towards B: apart, along the closest
 * points; overlapping, geom_overlap's normal. The contact band of the world's events uses it. */
float geom_distance(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, vec2 *normal);

/* Where A (at pa) touches B (at pb), the two touching or a rounding error apart (a sweep's time of
 * impact, normal = its geom_toi.normal, from A towards B): a point of B's boundary that lies on
 * A's boundary within rounding. Where a face of one lies along a face of the other, the middle of
 * the stretch they share. A shape query's hit point (world_query_shape_cast). */
vec2 geom_touch_point(const geom_shape *a, vec2 pa, const geom_shape *b, vec2 pb, vec2 normal);

typedef struct geom_toi {
    float t;     /* time of impact as a fraction of the displacement, in [0,1] */
    vec2 normal; /* unit, from A towards B at impact (the direction A must stop moving in) */
} geom_toi;

/* Linear sweep: A moves by da and B by db over the same interval. Reports the first time in
 * [0,1] at which they touch, with the contact normal. Equivalent to a ray from the origin along
 * the relative displacement d = da - db against M = B (-) A.
 *   - Starting overlapped or touching (within GEOM_LINEAR_SLOP): t = 0 and the separating normal,
 *     but only when the relative motion does not separate them (dot(d, normal) > 0); a motion that
 *     separates or slides along the contact reports no hit.
 *   - Zero relative motion: a hit (t = 0) only if they already overlap.
 * Returns false when they do not touch during the interval. */
bool geom_sweep(const geom_shape *a, vec2 pa, vec2 da, const geom_shape *b, vec2 pb, vec2 db,
                geom_toi *out);
/* geom_sweep of polygon A (at pa, moving by da) against a fixed box B (half extents hb, at pb):
 * the same answer, without the dispatch (a turned box sliding among box tiles). */
bool geom_sweep_polygon_box(const geom_polygon *a, vec2 pa, vec2 da, vec2 hb, vec2 pb,
                            geom_toi *out);
/* geom_sweep_polygon_box for one polygon against many fixed boxes, with one or several
 * motions in turn (a turned box's slide among box tiles): what does not depend on the box (the
 * polygon's bounds, each edge's offset along its normal; each edge's closing speed for the
 * motion) is computed once, by geom_poly_sweep_prepare for the polygon and geom_poly_sweep_motion
 * for each motion, and geom_poly_sweep_box answers each box with the same floats fed to the same
 * decision in the same order: geom_sweep_polygon_box's answer, bit for bit. */
typedef struct geom_poly_sweep {
    const geom_polygon *poly;
    vec2 d;                              /* the relative motion as bp_sweep takes it: -da */
    bool d_ok;                           /* geom_coord_ok(da) */
    float min_x, max_x, min_y, max_y;    /* the polygon's local bounds */
    float nv[GEOM_MAX_POLYGON_VERTICES]; /* dot(n_j, v_j): edge j's offset along its normal */
    float nd[GEOM_MAX_POLYGON_VERTICES]; /* -dot(n_j, d): closing speed along -n_j */
    vec2 an[GEOM_MAX_POLYGON_VERTICES];  /* |n_j| componentwise: a box's support along n_j */
} geom_poly_sweep;
/* the polygon's terms (it must outlive s); then geom_poly_sweep_motion before any sweep */
void geom_poly_sweep_prepare(geom_poly_sweep *s, const geom_polygon *a);
/* the motion of the polygon (da; the boxes stand still) for the sweeps that follow */
void geom_poly_sweep_motion(geom_poly_sweep *s, vec2 da);
bool geom_poly_sweep_box(const geom_poly_sweep *s, vec2 pa, vec2 hb, vec2 pb, geom_toi *out);

/* ---- Precise answers at the edges of the contract (what the implementation guarantees) ------
 *   - geom_overlap: boxes and polygons by separating axes over both shapes' edge normals (exact
 *     MTV for convex shapes); circles by the closest point. Ties between axes go to the first in
 *     a fixed order (box-box: y before x); a zero offset picks the + direction, so coincident
 *     centres give the fallback normal (0, 1) (circle-circle and box-box alike). query(B,A) is
 *     the mirror of query(A,B) (same depth or time, opposite normal) except at exact ties, where
 *     it may pick the other, equally good axis (coincident centres: (0, 1) both ways).
 *   - geom_sweep, separated at the start (gap > GEOM_LINEAR_SLOP): the exact first time of
 *     contact (Cyrus-Beck over the same axes; a ray against the shape inflated by the radius,
 *     with rounded corners, for circles). Grazing contact counts: a ray touching M only at a
 *     vertex may report a hit.
 *   - geom_sweep, touching or overlapping at the start: t = 0 with the MTV normal if
 *     dot(d, normal) > 0, else no hit. For boxes and polygons, additionally: no hit when some
 *     axis along which the shapes overlap by less than GEOM_LINEAR_SLOP is not closed by the
 *     motion (so a body resting on a tiled floor and moving along it never catches on a seam,
 *     even where two axes tie); the same rule drops hits that could only ever overlap by less
 *     than GEOM_LINEAR_SLOP when starting separated.
 *   - Zero relative motion (da == db) never reports a hit: nothing closes. Use geom_overlap for
 *     "are they overlapping now".
 *   - geom_ray_cast: a ray starting inside or on the boundary of the shape reports no hit.
 *   - geom_shape_contains_point: the boundary counts as inside.
 *   - geom_shape_validate checks a polygon's vertices, not its normals: build polygons with
 *     geom_make_polygon / geom_make_hull, which compute the normals.
 *   - Polygon validation also refuses (GEOM_ERR_SIZE_OUT_OF_RANGE) a vertex coordinate beyond
 *     GEOM_MAX_SIZE in absolute value and a polygon thinner than GEOM_MIN_SIZE across any edge.
 */

/* ---- Fast paths (same semantics as the general queries, for callers that know the kinds) ---- */

/* geom_overlap / geom_sweep for two axis-aligned boxes given by half extents, without building
 * geom_shape values or dispatching on kinds: the world's AABB fast path. Static inline (in
 * geom_box.h) so they compile into the caller's loop; results are identical to the general
 * functions called with boxes of these half extents:
 *   bool geom_box_box_overlap(vec2 half_a, vec2 pa, vec2 half_b, vec2 pb, geom_contact *out);
 *   bool geom_box_box_sweep(vec2 half_a, vec2 pa, vec2 da, vec2 half_b, vec2 pb, vec2 db,
 *                           geom_toi *out); */
#include "geom_box.h"
#include "geom_rot.h"
/* geom_poly_sweep for a turned box (geom_shape_orient of a box) against boxes, static inline
 * (geom_obox.h): geom_obox_sweep_prepare / _motion / _box, geom_poly_sweep_box's answers. */
#include "geom_obox.h"

#ifdef __cplusplus
}
#endif
#endif

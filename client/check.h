/* cc_check: invariants verified live from the snapshots a client receives (COLLISION.md I1-I3).
 *
 * Each checked client keeps its own view: every body it was told about, with the shape that came
 * the first time the body was seen. After each snapshot, every body that changed is tested against
 * every other body in view:
 *   - overlap: two solid bodies whose shapes interpenetrate by more than the tolerance (split into
 *     moving-vs-static, I2, and moving-vs-moving, I3);
 *   - tunnel: between two consecutive ticks, the centre of a moving body travelled straight
 *     through a static in view (shrunk by the tolerance), although it is outside it at both ends.
 * Views are bounded (CC_CHECK_MAX_BODIES); bodies past that are counted, not checked. */
#ifndef COLLIDE_CLIENT_CHECK_H
#define COLLIDE_CLIENT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "collide.pb-c.h"

#define CC_CHECK_MAX_BODIES 2048u
#define CC_CHECK_MAX_VERTS 16u
#define CC_CHECK_EXAMPLES 16u

typedef enum cc_shape_kind { CC_SHAPE_NONE = 0, CC_SHAPE_POLY, CC_SHAPE_CIRCLE } cc_shape_kind;

typedef struct cc_shape {
    uint8_t kind;                 /* cc_shape_kind; boxes become 4-vertex polygons */
    uint8_t count;                /* vertices of a polygon */
    float radius;                 /* circle radius */
    float vx[CC_CHECK_MAX_VERTS]; /* body-local vertices, counter-clockwise */
    float vy[CC_CHECK_MAX_VERTS];
} cc_shape;

typedef struct cc_check_body {
    uint32_t id;     /* body id */
    uint8_t kind;    /* BodyKind */
    bool known_prev; /* prev_x/prev_y hold the position at the previous tick */
    float x, y;      /* position */
    float angle;     /* radians */
    float prev_x;    /* position before this tick's update */
    float prev_y;
    float prev_angle; /* angle before this tick's update */
    uint64_t tick;  /* tick of the last update */
    cc_shape shape; /* as sent the first time the body was seen */
} cc_check_body;

typedef enum cc_violation_kind {
    CC_VIOL_OVERLAP_STATIC = 0, /* I2 */
    CC_VIOL_OVERLAP_MOVING = 1, /* I3 */
    CC_VIOL_TUNNEL = 2,         /* I1 */
    CC_VIOL_KINDS = 3,
} cc_violation_kind;

typedef struct cc_violation {
    uint8_t kind;  /* cc_violation_kind */
    uint32_t a, b; /* body ids (a moving; b the other) */
    uint64_t tick; /* snapshot tick */
    float depth;   /* penetration depth (0 for a tunnel) */
} cc_violation;

typedef struct cc_check_stats {
    uint64_t snapshots;                       /* snapshots checked */
    uint64_t pairs;                           /* pair tests run */
    uint64_t counts[CC_VIOL_KINDS];           /* violations by kind */
    uint64_t overflow;                        /* bodies not tracked: view full */
    uint64_t unknown_shape;                   /* bodies whose shape never arrived */
    uint32_t examples_len;                    /* entries used in examples */
    cc_violation examples[CC_CHECK_EXAMPLES]; /* the first violations seen */
} cc_check_stats;

typedef struct cc_check_view {
    uint32_t count;                            /* bodies in view */
    uint64_t last_tick;                        /* tick of the previous snapshot */
    bool have_tick;                            /* last_tick is valid */
    float tolerance;                           /* allowed overlap depth */
    cc_check_body bodies[CC_CHECK_MAX_BODIES]; /* the view (unordered) */
    uint8_t changed[CC_CHECK_MAX_BODIES];      /* scratch: body changed in this snapshot */
} cc_check_view;

void cc_check_view_init(cc_check_view *v, float tolerance);
void cc_check_stats_init(cc_check_stats *s);
void cc_check_stats_merge(cc_check_stats *into, const cc_check_stats *from);
uint64_t cc_check_total(const cc_check_stats *s);
/* Applies one snapshot to the view and checks it. */
void cc_check_snapshot(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s);

/* Geometry, exposed for the tests. A shape is placed at (x, y) rotated by angle. */
bool cc_shape_from_proto(const Collide__V1__Shape *in, cc_shape *out);
/* Penetration depth of two placed shapes: > 0 when they overlap, <= 0 when apart. */
float cc_shape_depth(const cc_shape *a, float ax, float ay, float aa, const cc_shape *b, float bx,
                     float by, float ba);
/* Does the segment p0->p1 pass through the placed shape shrunk by margin? */
bool cc_segment_crosses(const cc_shape *s, float x, float y, float angle, float margin, float x0,
                        float y0, float x1, float y1);
const char *cc_violation_name(int kind);

#endif

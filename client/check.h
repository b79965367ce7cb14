/* cc_check: invariants verified live from the snapshots a client receives (COLLISION.md I1-I3).
 *
 * Each checked client keeps its own view: every body it was told about, with the shape that came
 * the first time the body was seen. After each snapshot, every body that changed is tested against
 * every other body in view:
 *   - overlap: two solid bodies that block each other (neither a sensor, filters that interact)
 *     whose shapes interpenetrate by more than the tolerance (split into moving-vs-static, I2,
 *     and moving-vs-moving, I3);
 *   - tunnel: between two consecutive ticks, the centre of a moving body travelled straight
 *     through a static in view (shrunk by the tolerance), although it is outside it at both ends.
 * Views are bounded (CC_CHECK_MAX_BODIES); bodies past that are counted, not checked.
 *
 * The contact and sensor events a client receives (docs/protocol.md "Filters, sensors, contact
 * events") are checked against the same view, per client, for the pairs it is told about:
 *   - pairing: no begin of a pair already begun, no end of a pair not begun;
 *   - geometry, on a snapshot one tick after the previous one (a snapshot that follows a gap may
 *     carry the events of the ticks in between, measured on bodies that have moved since) with
 *     both bodies in view: a contact begins only within 2 x skin (gap <= CC_CONTACT_BEGIN_GAP +
 *     tolerance), ends only past 4 x skin (gap > CC_CONTACT_END_GAP - tolerance) or when a body
 *     is removed in that snapshot; a begun contact whose bodies are past 4 x skin (+ tolerance)
 *     with no end is not ended, as is one with a body removed in a snapshot that does not end it
 *     (only when the removed body was last seen within a gap of CC_GONE_NEAR of the other, still
 *     in view: then it did not merely leave the view, with a view of the default radius around
 *     one's own body, which every event a player gets involves). A sensor begins overlapping
 *     (depth > -tolerance) and ends apart
 *     (depth <= tolerance) or on a removal, except a crossing within the tick (a begin followed
 *     by the end of the same pair in the same snapshot); a begun overlap whose bodies are apart
 *     by more than the tolerance with no end is not ended.
 * The tolerance (cc_event_tolerance) covers the float rounding between the daemon's geometry (in
 * float, on the same float positions) and the checker's (in double): 1e-4 units plus 16 float
 * ulps of the largest coordinate involved; the thresholds are 2e-3 and 4e-3 apart from 0. */
#ifndef COLLIDE_CLIENT_CHECK_H
#define COLLIDE_CLIENT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "collide.pb-c.h"

#define CC_CHECK_MAX_BODIES 2048u
#define CC_CHECK_MAX_VERTS 16u
#define CC_CHECK_EXAMPLES 16u
#define CC_CHECK_MAX_OPEN 1024u     /* begun pairs tracked per client */
#define CC_CONTACT_BEGIN_GAP 0.002f /* 2 x skin (GEOM_SKIN 1e-3) */
#define CC_CONTACT_END_GAP 0.004f   /* 4 x skin */
#define CC_GONE_NEAR 1.0f           /* see "removed" above */

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
    float prev_angle;        /* angle before this tick's update */
    uint64_t tick;           /* tick of the last update */
    cc_shape shape;          /* as sent the first time the body was seen */
    uint32_t category, mask; /* its filter (BodyState 10, 11; 0 reads as the default) */
    bool sensor;             /* a sensor (BodyState 12): it blocks nothing */
    bool one_way;            /* one-way (BodyState 15): whether it blocks depends on the side a
                                body comes from at the start of a tick, which a snapshot does not
                                show; its pairs are not checked for overlap or tunnelling */
} cc_check_body;

typedef enum cc_violation_kind {
    CC_VIOL_OVERLAP_STATIC = 0,          /* I2 */
    CC_VIOL_OVERLAP_MOVING = 1,          /* I3 */
    CC_VIOL_TUNNEL = 2,                  /* I1 */
    CC_VIOL_CONTACT_BEGIN_FAR = 3,       /* a contact begin with the bodies past 2 x skin */
    CC_VIOL_CONTACT_END_NEAR = 4,        /* a contact end within 4 x skin, nobody removed */
    CC_VIOL_CONTACT_DUPLICATE_BEGIN = 5, /* a begin of a contact already begun */
    CC_VIOL_CONTACT_END_WITHOUT_BEGIN = 6,
    CC_VIOL_CONTACT_NOT_ENDED = 7,      /* begun, the bodies past 4 x skin, no end */
    CC_VIOL_SENSOR_BEGIN_APART = 8,     /* a sensor begin with the bodies apart */
    CC_VIOL_SENSOR_END_OVERLAPPING = 9, /* a sensor end with the bodies overlapping */
    CC_VIOL_SENSOR_DUPLICATE_BEGIN = 10,
    CC_VIOL_SENSOR_END_WITHOUT_BEGIN = 11,
    CC_VIOL_SENSOR_NOT_ENDED = 12, /* begun, the bodies apart, no end */
    CC_VIOL_KINDS = 13,
} cc_violation_kind;

typedef struct cc_violation {
    uint8_t kind;  /* cc_violation_kind */
    uint32_t a, b; /* body ids (a moving; b the other) */
    uint64_t tick; /* snapshot tick */
    float depth;   /* penetration depth (0 for a tunnel; events: minus the gap, NAN unmeasured) */
} cc_violation;

/* A pair begun and not yet ended, as this client was told. */
typedef struct cc_open_pair {
    uint32_t a, b;  /* contact a, b; sensor: sensor, visitor */
    bool sensor;    /* a sensor overlap, else a contact */
    bool reported;  /* already counted as not ended */
    bool gone;      /* scratch: a body of it was removed in this snapshot */
    uint64_t since; /* tick of the snapshot with its begin (measured there, not again) */
} cc_open_pair;

typedef struct cc_check_stats {
    uint64_t snapshots;                       /* snapshots checked */
    uint64_t pairs;                           /* pair tests run */
    uint64_t counts[CC_VIOL_KINDS];           /* violations by kind */
    uint64_t overflow;                        /* bodies not tracked: view full */
    uint64_t unknown_shape;                   /* bodies whose shape never arrived */
    uint64_t contact_events;                  /* ContactEvents received */
    uint64_t sensor_events;                   /* SensorEvents received */
    uint64_t events_measured;                 /* events whose geometry was checked */
    uint64_t open_overflow;                   /* begins not tracked: too many pairs open */
    uint32_t examples_len;                    /* entries used in examples */
    cc_violation examples[CC_CHECK_EXAMPLES]; /* the first violations seen */
} cc_check_stats;

typedef struct cc_check_view {
    uint32_t count;      /* bodies in view */
    uint64_t last_tick;  /* tick of the previous snapshot */
    bool have_tick;      /* last_tick is valid */
    bool events_apart;   /* UDP: events come in Events messages (cc_check_events), not snapshots */
    float tolerance;     /* allowed overlap depth */
    uint32_t open_count; /* entries of open */
    cc_open_pair open[CC_CHECK_MAX_OPEN];      /* begun pairs (unordered) */
    cc_check_body bodies[CC_CHECK_MAX_BODIES]; /* the view (unordered) */
    uint8_t changed[CC_CHECK_MAX_BODIES];      /* scratch: body changed in this snapshot */
} cc_check_view;

void cc_check_view_init(cc_check_view *v, float tolerance);
void cc_check_stats_init(cc_check_stats *s);
void cc_check_stats_merge(cc_check_stats *into, const cc_check_stats *from);
uint64_t cc_check_total(const cc_check_stats *s);
/* Applies one snapshot to the view and checks it. */
void cc_check_snapshot(cc_check_view *v, const Collide__V1__Snapshot *snap, cc_check_stats *s);

/* UDP's Events message of one tick: the pairing rules only. Its geometry is not measured: the
 * events travel apart from the snapshots (reliable channel 0, unsent state on channel 1), and a
 * UDP state is quantized (1/256 unit by default), coarser than the skin thresholds. Sets
 * v->events_apart, so snapshots no longer judge begun pairs as not ended either. */
void cc_check_events(cc_check_view *v, const Collide__V1__Events *e, cc_check_stats *s);

/* Geometry, exposed for the tests. A shape is placed at (x, y) rotated by angle. */
bool cc_shape_from_proto(const Collide__V1__Shape *in, cc_shape *out);
/* Penetration depth of two placed shapes: > 0 when they overlap, <= 0 when apart. */
float cc_shape_depth(const cc_shape *a, float ax, float ay, float aa, const cc_shape *b, float bx,
                     float by, float ba);
/* Signed distance of two placed shapes: the gap when apart, minus the penetration depth when they
 * overlap (exact for convex shapes, as the daemon measures a contact's gap). */
double cc_shape_gap(const cc_shape *a, float ax, float ay, float aa, const cc_shape *b, float bx,
                    float by, float ba);
/* The float tolerance of an event check between bodies at (ax, ay) and (bx, by). */
double cc_event_tolerance(float ax, float ay, float bx, float by);
/* Does the segment p0->p1 pass through the placed shape shrunk by margin? */
bool cc_segment_crosses(const cc_shape *s, float x, float y, float angle, float margin, float x0,
                        float y0, float x1, float y1);
const char *cc_violation_name(int kind);

#endif

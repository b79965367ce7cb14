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
 * ulps of the largest coordinate involved; the thresholds are 2e-3 and 4e-3 apart from 0.
 *
 * Characters (protocol 1.2, COLLISION.md I8-I10 and the jump rule), for the client's own
 * character only (cc_check_own_character): the checks need the intent it moved with, which only
 * its sender knows. The intent in force during tick T is the one BodyState.last_input_seq names
 * after T; over an interval of snapshots, every intent from the previous snapshot's
 * last_input_seq to this one's may have been in force, so "still" means all of them were sent
 * with no velocity across gravity and no jump (an intent the client never recorded is not
 * still). "Up" is minus Welcome.gravity (cc_check_world; no gravity, no character checks).
 *   - jump rule: the velocity along up only falls in the air (gravity; a floor or a ceiling
 *     takes the part into it away, to 0 at most) and is 0 on the ground, so it rising above both
 *     0 and its previous value by more than CC_JUMP_DV (plus a velocity quantum) is a jump taken
 *     in the interval. On consecutive snapshots (tick T after T - 1) it must have been grounded
 *     at T - 1, or have walked off the ground (not jumped off) at most coyote time before: its
 *     last grounded tick G with T - 1 - G <= floor(coyote_ms x rate / 1000), every snapshot since
 *     G consecutive (else unjudged); jump_airborne. Each jump must also follow a press: a jump
 *     intent applied (by last_input_seq) at most jump_buffer (rounded up) + 1 ticks before it,
 *     each press good for one jump; jump_unasked. Jumps over a gap are counted, not judged.
 *   - I8 rest: grounded at T - 1 on a static (or the bounds, ground_id 0) and still during T,
 *     no jump, no other body that blocks it near (below): its position at T is bit-identical to
 *     T - 1's (quantized: the same quanta); rest_moved. Consecutive snapshots only.
 *   - I9 one-way: once seen grounded on a one-way body P, until it is grounded on something else,
 *     a jump is pressed or seen, or its extent across gravity no longer overlaps P's (it walked or
 *     was pushed off the edge), or P leaves the view: its lowest point along up is never below
 *     P's top by more than CC_ONE_WAY_SINK (I3's tolerance) plus a position quantum; one_way_fell.
 *     Gaps do not matter: it is a state, judged on every snapshot.
 *   - I10 carried: grounded on the same moving body M at both ends of the interval (k ticks),
 *     M not a character (seen grounded once: a rider of a character is carried only when that
 *     one moves first, docs/characters.md), still, no jump, no other body near: its position in M's
 * frame (relative to M's position, turned by minus M's angle) changed by at most CC_CARRY_PER_TICK
 * x k, plus two position quanta (each end's relative position is off by up to one: quantized
 * snapshots) and 16 float ulps of the coordinates; carry_slipped.
 * "Near": another body that blocks it (a mover, not the ground, filters as for the overlaps) whose
 * gap to it is at most CC_CHAR_CLEAR plus two ticks of its speed, at either end of the interval:
 * a body that might have pushed it (characters bump, land on each other's heads, and the discrete
 * pass pushes them apart), so the interval is not judged. A body near the mover it stands on
 * does not spare the interval: a carrier the discrete pass pushes back takes its riders with it
 * (this check found the daemon leaving them behind, 0.044 units a tick, a ferry pressing on a
 * character in the pit beneath it; mended in world_character.c's follow_pushed_carriers). The
 * interval of I10 may span ticks (--snapshot-rate), and a body that came and went within it is not
 * seen: a load run's players move at a few units a second, two ticks of speed covering one tick's
 * approach. */
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
#define CC_CHECK_INTENTS 256u       /* the own character's intents remembered, by input_seq */
#define CC_JUMP_DV 1e-3f            /* a rise of the velocity along up that is a jump (u/s) */
#define CC_CARRY_PER_TICK 1e-4f     /* I10: drift allowed in the carrier's frame per tick */
#define CC_CHAR_CLEAR 0.25f         /* "near" (above): the gap, before the speed is added */
#define CC_ONE_WAY_SINK 0.01f       /* I9: how far below a one-way top still counts as on it */

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
    bool grounded;           /* a character standing (BodyState 13, every record of it) */
    uint32_t ground_id;      /* what it stands on (14; 0: nothing or the bounds) */
    bool character;          /* seen grounded once: a character (BodyState does not say) */
    uint32_t last_input_seq; /* BodyState 4 */
    float vx, vy;            /* velocity */
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
    CC_VIOL_REST_MOVED = 13,       /* I8: a still character on a static moved (a: it, b: ground) */
    CC_VIOL_ONE_WAY_FELL = 14,     /* I9: below the one-way body it stood on (b: that body) */
    CC_VIOL_CARRY_SLIPPED = 15,    /* I10: a still rider moved in its carrier's frame */
    CC_VIOL_JUMP_AIRBORNE = 16,    /* a jump not from the ground nor in coyote time */
    CC_VIOL_JUMP_UNASKED = 17,     /* a jump with no press of the client's before it */
    CC_VIOL_KINDS = 18,
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
    uint64_t rest_checks;                     /* I8 intervals judged */
    uint64_t one_way_checks;                  /* I9 snapshots judged */
    uint64_t carry_checks;                    /* I10 intervals judged */
    uint64_t jumps_seen;                      /* jumps of the own character seen */
    uint64_t jumps_checked;                   /* of those, judged by the jump rule */
    uint32_t examples_len;                    /* entries used in examples */
    cc_violation examples[CC_CHECK_EXAMPLES]; /* the first violations seen */
} cc_check_stats;

/* An intent the client sent for its own character. */
typedef struct cc_check_intent {
    uint32_t seq; /* input_seq (0: slot unused) */
    float vx, vy; /* velocity */
    bool jump;    /* MoveIntent.jump */
} cc_check_intent;

/* The client's own character and what the character checks remember of it (check.h's top). */
typedef struct cc_check_own {
    uint32_t id;           /* body id (0: none) */
    float jump_speed;      /* CharacterOptions */
    uint32_t coyote_ms;    /* (0 read as the default, 100) */
    uint32_t buffer_ms;    /* jump_buffer_ms (0: 100) */
    bool have_last;        /* last_* hold its state after the previous snapshot */
    float last_x, last_y;  /* position */
    float last_up;         /* velocity along up */
    bool last_grounded;    /* grounded */
    uint32_t last_ground;  /* ground_id */
    uint32_t last_seq;     /* last_input_seq */
    bool last_crowded;     /* another body near it */
    bool ground_known;     /* its ground was in view: ground_* hold that body's state */
    uint8_t ground_kind;   /* BodyKind */
    bool ground_character; /* that body had been seen grounded (a character) */
    float ground_x, ground_y, ground_angle;
    uint64_t grounded_tick; /* the last tick it was seen grounded */
    bool coyote_open;       /* it walked off the ground since (not jumped) */
    bool air_known;         /* every snapshot since grounded_tick was consecutive */
    uint32_t one_way_id;    /* I9: the one-way body it stood on (0: not watched) */
    uint32_t presses;       /* jump presses applied and not yet taken */
    uint64_t press_until;   /* the newest press's last tick */
    cc_check_intent intents[CC_CHECK_INTENTS]; /* by seq % CC_CHECK_INTENTS */
} cc_check_own;

typedef struct cc_check_view {
    uint32_t count;      /* bodies in view */
    uint64_t last_tick;  /* tick of the previous snapshot */
    bool have_tick;      /* last_tick is valid */
    bool events_apart;   /* UDP: events come in Events messages (cc_check_events), not snapshots */
    float tolerance;     /* allowed overlap depth */
    float up_x, up_y;    /* minus gravity, unit (0, 0: no gravity, no character checks) */
    uint32_t tick_hz;    /* the room's tick rate */
    float pos_quantum;   /* quantized snapshots' position step (0: floats) */
    float vel_quantum;   /* their velocity step (0: floats) */
    cc_check_own own;    /* the client's own character */
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

/* The room's gravity and tick rate (Welcome), and the quanta of quantized snapshots (0 for
 * float ones): the character checks' frame and tolerances. */
void cc_check_world(cc_check_view *v, float gx, float gy, uint32_t tick_hz, float pos_quantum,
                    float vel_quantum);
/* body_id is the client's own character, spawned with these options (NULL: the defaults). */
void cc_check_own_character(cc_check_view *v, uint32_t body_id,
                            const Collide__V1__CharacterOptions *opt);
/* The client sent this intent for its own character. */
void cc_check_own_intent(cc_check_view *v, uint32_t seq, float vx, float vy, bool jump);
/* A jump between two velocities along up (check.h's top): shared with load's count of jumps. */
bool cc_check_jumped(float up_before, float up_after, float vel_quantum);

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

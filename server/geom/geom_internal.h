/* Helpers shared by the geom translation units; not part of the public API. */
#ifndef COLLIDE_GEOM_INTERNAL_H
#define COLLIDE_GEOM_INTERNAL_H

#include "geom.h"

/* Inputs beyond GEOM_MAX_COORD (or non-finite) get the defined "no overlap / no hit" answer
 * before any arithmetic that could overflow; NaN fails both comparisons. */
static inline bool geom_coord_ok(vec2 a) {
    return fabsf(a.x) <= GEOM_MAX_COORD && fabsf(a.y) <= GEOM_MAX_COORD;
}

/* Segment o + t*d (t in [0,1]) against the circle of `radius` at the origin, from outside.
 * On a hit: the entry time and the outward unit normal there. */
bool geom_ray_circle(vec2 o, vec2 d, float radius, float *t_out, vec2 *n_out);
/* The same in double, for callers that compare its time with other double-precision hits. */
bool geom_ray_circle_d(double ox, double oy, double dx, double dy, double r, double *t_out,
                       vec2 *n_out);

#endif

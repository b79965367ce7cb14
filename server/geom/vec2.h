/* vec2 and aabb: the small value types every layer shares. Header-only, static inline, no
 * allocation. Normalising a zero vector yields zero, never NaN (as Box2D does). */
#ifndef COLLIDE_VEC2_H
#define COLLIDE_VEC2_H

#include <math.h>
#include <stdbool.h>

typedef struct vec2 {
    float x, y;
} vec2;

/* Axis-aligned bounding box, min <= max on both axes. */
typedef struct aabb {
    vec2 min, max;
} aabb;

static inline vec2 v2(float x, float y) {
    vec2 r = {x, y};
    return r;
}
static inline vec2 v2_add(vec2 a, vec2 b) { return v2(a.x + b.x, a.y + b.y); }
static inline vec2 v2_sub(vec2 a, vec2 b) { return v2(a.x - b.x, a.y - b.y); }
static inline vec2 v2_neg(vec2 a) { return v2(-a.x, -a.y); }
static inline vec2 v2_scale(vec2 a, float s) { return v2(a.x * s, a.y * s); }
static inline vec2 v2_mul_add(vec2 a, float s, vec2 b) { return v2(a.x + s * b.x, a.y + s * b.y); }
static inline float v2_dot(vec2 a, vec2 b) { return a.x * b.x + a.y * b.y; }
static inline float v2_cross(vec2 a, vec2 b) { return a.x * b.y - a.y * b.x; }
static inline vec2 v2_perp(vec2 a) { return v2(-a.y, a.x); } /* CCW quarter turn */
static inline vec2 v2_right_perp(vec2 a) {
    return v2(a.y, -a.x);
} /* outward normal of a CCW edge */
static inline float v2_len_sq(vec2 a) { return v2_dot(a, a); }
static inline float v2_len(vec2 a) { return sqrtf(v2_dot(a, a)); }
static inline vec2 v2_min(vec2 a, vec2 b) {
    return v2(a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y);
}
static inline vec2 v2_max(vec2 a, vec2 b) {
    return v2(a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y);
}
static inline bool v2_is_finite(vec2 a) { return isfinite(a.x) && isfinite(a.y); }
static inline vec2 v2_normalize(vec2 a) {
    float len = v2_len(a);
    if (!(len > 0.0f) || !isfinite(len)) return v2(0.0f, 0.0f);
    return v2_scale(a, 1.0f / len);
}

static inline aabb aabb_make(vec2 min, vec2 max) {
    aabb r = {min, max};
    return r;
}
static inline bool aabb_overlaps(aabb a, aabb b) {
    return a.min.x < b.max.x && b.min.x < a.max.x && a.min.y < b.max.y && b.min.y < a.max.y;
}
/* Like aabb_overlaps, touching included: what a query that must not miss a neighbour wants. */
static inline bool aabb_meets(aabb a, aabb b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y;
}
/* aabb_overlaps and aabb_meets with their four tests evaluated together (no short circuit): the
 * same answers, at most one branch where the caller uses them, for tests whose answer is a coin
 * toss to the branch predictor (which of a mover's near statics it meets), or waits on a load. */
static inline int aabb_overlaps_all(aabb a, aabb b) {
    return (a.min.x < b.max.x) & (b.min.x < a.max.x) & (a.min.y < b.max.y) & (b.min.y < a.max.y);
}
static inline int aabb_meets_all(aabb a, aabb b) {
    return (a.min.x <= b.max.x) & (b.min.x <= a.max.x) & (a.min.y <= b.max.y) &
           (b.min.y <= a.max.y);
}
static inline bool aabb_contains(aabb outer, aabb inner) {
    return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && inner.max.x <= outer.max.x &&
           inner.max.y <= outer.max.y;
}
static inline aabb aabb_union(aabb a, aabb b) {
    return aabb_make(v2_min(a.min, b.min), v2_max(a.max, b.max));
}
static inline aabb aabb_translate(aabb a, vec2 d) {
    return aabb_make(v2_add(a.min, d), v2_add(a.max, d));
}
static inline aabb aabb_inflate(aabb a, float r) {
    return aabb_make(v2(a.min.x - r, a.min.y - r), v2(a.max.x + r, a.max.y + r));
}
/* The box covered by `a` moving along `d` (the swept AABB the broad phase queries). */
static inline aabb aabb_sweep(aabb a, vec2 d) { return aabb_union(a, aabb_translate(a, d)); }

#endif

/* geom_box: the box-box queries as static inline functions, so the world's AABB fast path
 * compiles into its loops without a call or any dispatch on kinds. Included by geom.h; the
 * general geom_overlap / geom_sweep use these same functions for two boxes, so the answers are
 * identical bit for bit. */
#ifndef COLLIDE_GEOM_BOX_H
#define COLLIDE_GEOM_BOX_H

/* geom_overlap for two axis-aligned boxes given by half extents. */
static inline bool geom_box_box_overlap(vec2 ha, vec2 pa, vec2 hb, vec2 pb, geom_contact *out) {
    /* No range check needed: a NaN or beyond-GEOM_MAX_COORD offset fails the overlap test. */
    vec2 r = v2_sub(pb, pa);
    float dx = ha.x + hb.x - fabsf(r.x); /* penetration along x */
    float dy = ha.y + hb.y - fabsf(r.y);
    if (!(dx > 0.0f) || !(dy > 0.0f)) return false;
    if (out) {
        /* Ties go to y, and a zero offset to +: coincident centres give (0, 1). */
        if (dx < dy) {
            out->normal = v2(r.x >= 0.0f ? 1.0f : -1.0f, 0.0f);
            out->depth = dx;
        } else {
            out->normal = v2(0.0f, r.y >= 0.0f ? 1.0f : -1.0f);
            out->depth = dy;
        }
    }
    return true;
}

/* geom_sweep for two axis-aligned boxes given by half extents.
 * It is the separating-axis sweep of geom_pair.c over the four box axes, specialised: along each
 * of x and y one axis closes (gap sc, speed |d|) and the opposite one opens (gap so), which turns
 * the decision into a slab test with early exits. Same answers as the general rules documented
 * in geom.h (start rule, slop, ties to y). */
static inline bool geom_box_box_sweep(vec2 ha, vec2 pa, vec2 da, vec2 hb, vec2 pb, vec2 db,
                                      geom_toi *out) {
    vec2 r = v2_sub(pb, pa), d = v2_sub(da, db);
    if (!(fabsf(r.x) <= GEOM_MAX_COORD && fabsf(r.y) <= GEOM_MAX_COORD &&
          fabsf(d.x) <= GEOM_MAX_COORD && fabsf(d.y) <= GEOM_MAX_COORD))
        return false;
    const float slop = GEOM_LINEAR_SLOP;
    float hx = ha.x + hb.x, hy = ha.y + hb.y;
    float sgx = copysignf(1.0f, d.x), sgy = copysignf(1.0f, d.y);
    float vx = fabsf(d.x), vy = fabsf(d.y);
    float scx = sgx * r.x - hx, sox = -sgx * r.x - hx; /* closing / opening gaps on x */
    float scy = sgy * r.y - hy, soy = -sgy * r.y - hy;
    /* At most touching along an axis the motion does not close: never a hit. */
    if (sox > -slop || soy > -slop) return false;
    if ((vx == 0.0f && scx > -slop) || (vy == 0.0f && scy > -slop)) return false;
    float t;
    vec2 n;
    if ((scx > scy ? scx : scy) <= slop) {
        /* Start rule: the MTV axis is a closing one (the opening gaps are below -slop), with
         * y winning ties and + winning at a zero offset, as in bb_overlap. */
        bool use_y = fabsf(r.y) - hy >= fabsf(r.x) - hx;
        n = use_y ? v2(0.0f, r.y >= 0.0f ? 1.0f : -1.0f) : v2(r.x >= 0.0f ? 1.0f : -1.0f, 0.0f);
        if (!(v2_dot(n, d) > 0.0f)) return false;
        t = 0.0f;
    } else {
        if (scx > vx || scy > vy) return false; /* enters after t = 1 */
        float tx = scx > 0.0f ? scx / vx : 0.0f, ty = scy > 0.0f ? scy / vy : 0.0f;
        float t_out = 1.0f;
        if (vx > 0.0f) t_out = -sox / vx < t_out ? -sox / vx : t_out;
        if (vy > 0.0f) t_out = -soy / vy < t_out ? -soy / vy : t_out;
        bool enter_y = ty >= tx;
        t = enter_y ? ty : tx;
        if (t > t_out) return false;
        n = enter_y ? v2(0.0f, sgy) : v2(sgx, 0.0f);
    }
    if (out) {
        out->t = t;
        out->normal = n;
    }
    return true;
}

#endif

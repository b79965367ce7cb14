/* world_tiled_tmx_attrs: what every element handler of the TMX parser uses: errors at the parse's
 * line (naming the layer, tile and object being read), the map's budget of items, typed and
 * bounded attributes, and growable arrays. Apart from the handlers (tilesets, layers, objects,
 * properties, the driver's), so that they all stand on these and these on none of them. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmx.h"

/* ---- errors ---------------------------------------------------------------------------------- */

int tmx_line_of(const px *p) { return (int)XML_GetCurrentLineNumber(p->xp); }

/* "FILE:LINE: [where: ]reason", where naming the layer, the tileset's tile and the object. */
void tmx_fail_at(px *p, int line, const char *fmt, ...) {
    tmx *t = p->t;
    if (t->failed) return;
    t->failed = true;
    char where[300] = "";
    size_t w = 0;
#define WHERE(...)                                                                                 \
    do {                                                                                           \
        if (w < sizeof where) w += (size_t)snprintf(where + w, sizeof where - w, __VA_ARGS__);     \
    } while (0)
    if (p->layer_open) WHERE("layer '%s' ", p->layer.name ? p->layer.name : "");
    if (p->ts_open) WHERE("tileset '%s' ", p->ts.name ? p->ts.name : "");
    if (p->tile_open) WHERE("tile %u ", (unsigned)p->tile.id);
    if (p->obj_open) WHERE("object %d ", p->obj.id);
#undef WHERE
    if (w > 0 && w < sizeof where) where[w - 1] = ':'; /* "layer 'x' object 3:" */
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(t->err, t->err_size, "%s:%d: %s%s%s", p->file, line, where, w ? " " : "", reason);
    XML_StopParser(p->xp, XML_FALSE);
}

/* Stops this parse after a nested file's failure (the error is already written). */
void tmx_stop(px *p) {
    p->t->failed = true;
    XML_StopParser(p->xp, XML_FALSE);
}

bool tmx_spend(px *p, size_t n) {
    if (p->t->items + n > TMX_MAX_ITEMS) {
        FAIL(p, "more than %u objects, tiles, properties and vertices in the map", TMX_MAX_ITEMS);
        return false;
    }
    p->t->items += n;
    return true;
}

/* ---- attributes ------------------------------------------------------------------------------ */

const char *tmx_attr(const XML_Char **a, const char *name) {
    for (; a[0]; a += 2)
        if (strcmp(a[0], name) == 0) return a[1];
    return NULL;
}

static bool to_long(const char *s, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* An integer attribute in [lo, hi]; def when absent. */
bool tmx_attr_int(px *p, const XML_Char **a, const char *name, long def, long lo, long hi,
                  long *out) {
    const char *s = tmx_attr(a, name);
    if (!s) {
        *out = def;
        return true;
    }
    if (!to_long(s, out) || *out < lo || *out > hi) {
        FAIL(p, "%s=\"%s\": not an integer in [%ld, %ld]", name, s, lo, hi);
        return false;
    }
    return true;
}

bool tmx_to_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end || !isfinite(v) || fabs(v) > TMX_MAX_COORD)
        return false;
    *out = v;
    return true;
}

bool tmx_attr_double(px *p, const XML_Char **a, const char *name, double def, double *out) {
    const char *s = tmx_attr(a, name);
    if (!s) {
        *out = def;
        return true;
    }
    if (!tmx_to_double(s, out)) {
        FAIL(p, "%s=\"%s\": not a number within +-%g", name, s, TMX_MAX_COORD);
        return false;
    }
    return true;
}

bool tmx_attr_u32(px *p, const XML_Char **a, const char *name, uint32_t *out) {
    const char *s = tmx_attr(a, name);
    *out = 0;
    if (!s) return true;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > UINT32_MAX) {
        FAIL(p, "%s=\"%s\": not a 32-bit tile id", name, s);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

char *tmx_dup_or_fail(px *p, const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) FAIL(p, "out of memory");
    return d;
}
/* ---- growable arrays ------------------------------------------------------------------------- */

/* Room for one more element in *items (count used); false (error written) when out of memory. */
bool tmx_grow(px *p, void **items, size_t count, size_t size) {
    /* powers of two: realloc when count is 0 or one */
    if (count & (count - 1) && count != 0) return true;
    size_t cap = count ? count * 2 : 1;
    void *n = realloc(*items, cap * size);
    if (!n) {
        FAIL(p, "out of memory");
        return false;
    }
    *items = n;
    return true;
}

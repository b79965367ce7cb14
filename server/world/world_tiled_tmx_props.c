/* world_tiled_tmx_props: <properties> of the map, a layer, a group, a tile or an object: read,
 * only collide: names kept (the converter reads no others), and merged under a child's own (a
 * group's under its layers', a template's under its instance's). Apart because every owner has
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmx.h"

/* Appends to dst a copy of each of src's properties whose name dst does not have (a child's own
 * properties win over its group's, an instance's over its template's). */
bool tmx_props_merge_under(px *p, tiled_props *dst, const tiled_props *src) {
    for (size_t i = 0; i < src->count; i++) {
        if (tiled_prop_find(dst, src->items[i].name)) continue;
        if (!tmx_spend(p, 1) || !tmx_grow(p, (void **)&dst->items, dst->count, sizeof *dst->items))
            return false;
        tiled_prop *np = &dst->items[dst->count];
        np->type = src->items[i].type;
        np->name = tmx_dup_or_fail(p, src->items[i].name);
        np->value = np->name ? tmx_dup_or_fail(p, src->items[i].value) : NULL;
        if (!np->name || !np->value) {
            free(np->name);
            return false;
        }
        dst->count++;
    }
    return true;
}

void tmx_start_property(px *p, const XML_Char **a) {
    const char *name = tmx_attr(a, "name");
    if (!name) {
        FAIL(p, "<property> without a name");
        return;
    }
    p->prop_keep = strncmp(name, "collide:", 8) == 0;
    if (!p->prop_keep) return;
    const char *type = tmx_attr(a, "type");
    tiled_prop_type pt = TILED_PROP_OTHER;
    if (!type || strcmp(type, "string") == 0)
        pt = TILED_PROP_STRING;
    else if (strcmp(type, "int") == 0)
        pt = TILED_PROP_INT;
    else if (strcmp(type, "float") == 0)
        pt = TILED_PROP_FLOAT;
    else if (strcmp(type, "bool") == 0)
        pt = TILED_PROP_BOOL;
    p->prop = (tiled_prop){tmx_dup_or_fail(p, name), pt, NULL};
    if (!p->prop.name) return;
    const char *value = tmx_attr(a, "value");
    if (value) {
        p->prop.value = tmx_dup_or_fail(p, value);
    } else { /* a multi-line string is written as the element's text */
        p->collecting = true;
        p->text_len = 0;
    }
}

void tmx_end_property(px *p) {
    p->collecting = false;
    if (!p->prop_keep) return;
    p->prop_keep = false;
    tiled_prop pr = p->prop;
    memset(&p->prop, 0, sizeof p->prop);
    if (!pr.value) {
        pr.value = malloc(p->text_len + 1);
        if (pr.value) {
            if (p->text_len) memcpy(pr.value, p->text, p->text_len);
            pr.value[p->text_len] = '\0';
        }
    }
    if (!pr.value || !pr.name) {
        free(pr.name);
        free(pr.value);
        FAIL(p, "out of memory");
        return;
    }
    tiled_prop *old = (tiled_prop *)tiled_prop_find(&p->props, pr.name);
    if (old) { /* a name given twice: the last, as Tiled would read it */
        free(old->name);
        free(old->value);
        *old = pr;
        return;
    }
    if (!tmx_spend(p, 1) ||
        !tmx_grow(p, (void **)&p->props.items, p->props.count, sizeof *p->props.items)) {
        free(pr.name);
        free(pr.value);
        return;
    }
    p->props.items[p->props.count++] = pr;
}

void tmx_end_properties(px *p, elem owner) {
    tiled_props got = p->props;
    p->props = (tiled_props){0};
    tiled_props *dst = NULL;
    switch (owner) {
    case EL_MAP:
        dst = &p->t->m->props;
        break;
    case EL_TILE:
        dst = &p->tile.props;
        break;
    case EL_LAYER:
    case EL_OBJECTGROUP:
        dst = &p->layer.props;
        break;
    case EL_GROUP:
        dst = &p->groups[p->ngroups - 1].props;
        break;
    case EL_OBJECT:
        /* the instance's own over its template's */
        tmx_props_merge_under(p, &got, &p->obj.props);
        dst = &p->obj.props;
        break;
    default:
        break;
    }
    if (!dst) {
        tiled_props_free(&got);
        return;
    }
    tiled_props_free(dst);
    *dst = got;
}

/* world_tiled_tmx_layers: a TMX map's layers: tile and object layers, the group layers they are
 * flattened out of (offsets added, properties inherited), and a tile layer's <data>: finite or in
 * chunks, encoded (decoded by tiled_decode_data) or as <tile> elements. Apart because the cells
 * are the bulk of a map and their bounds (TMX_MAX_LAYER_CELLS, TMX_MAX_MAP_CELLS) are theirs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled_tmx.h"

void tmx_layer_free(tiled_layer *l) {
    free(l->name);
    tiled_props_free(&l->props);
    for (size_t i = 0; i < l->nchunks; i++)
        free(l->chunks[i].gids);
    free(l->chunks);
    for (size_t i = 0; i < l->nobjects; i++)
        tiled_object_free(&l->objects[i]);
    free(l->objects);
    memset(l, 0, sizeof *l);
}

static const group_frame *group_top(const px *p) {
    return p->ngroups ? &p->groups[p->ngroups - 1] : NULL;
}

void tmx_start_layer(px *p, const XML_Char **a, tiled_layer_kind kind) {
    long id;
    double ox, oy;
    memset(&p->layer, 0, sizeof p->layer);
    p->layer.kind = kind;
    p->layer.place = (tiled_place){p->file, tmx_line_of(p)};
    p->layer.name = tmx_dup_or_fail(p, tmx_attr(a, "name"));
    if (!p->layer.name) return;
    p->layer_open = true;
    if (!tmx_attr_int(p, a, "id", 0, 0, INT32_MAX, &id)) return;
    p->layer.id = (int)id;
    if (!tmx_attr_double(p, a, "offsetx", 0, &ox) || !tmx_attr_double(p, a, "offsety", 0, &oy))
        return;
    const group_frame *g = group_top(p);
    p->layer_offx = ox + (g ? g->offx : 0);
    p->layer_offy = oy + (g ? g->offy : 0);
    p->layer.offsetx = p->layer_offx;
    p->layer.offsety = p->layer_offy;
    if (kind == TILED_LAYER_TILES && !p->t->m->infinite) {
        /* a finite map's layers are the map's size (Tiled writes it); anything else is corrupt */
        long w, h;
        if (!tmx_attr_int(p, a, "width", p->t->m->width, 0, INT32_MAX, &w) ||
            !tmx_attr_int(p, a, "height", p->t->m->height, 0, INT32_MAX, &h))
            return;
        if (w != p->t->m->width || h != p->t->m->height)
            FAIL(p, "%ld x %ld tiles in a %d x %d map", w, h, p->t->m->width, p->t->m->height);
    }
}

void tmx_end_layer(px *p) {
    tiled_map *m = p->t->m;
    if (!tmx_spend(p, 1) || !tmx_grow(p, (void **)&m->layers, m->nlayers, sizeof *m->layers))
        return;
    m->layers[m->nlayers++] = p->layer;
    memset(&p->layer, 0, sizeof p->layer);
    p->layer_open = false;
}

void tmx_start_group(px *p, const XML_Char **a) {
    double ox, oy;
    if (!tmx_attr_double(p, a, "offsetx", 0, &ox) || !tmx_attr_double(p, a, "offsety", 0, &oy))
        return;
    const group_frame *g = group_top(p);
    group_frame *f = &p->groups[p->ngroups++]; /* depth-bounded: at most TMX_MAX_DEPTH */
    f->offx = ox + (g ? g->offx : 0);
    f->offy = oy + (g ? g->offy : 0);
    f->first_layer = p->t->m->nlayers;
    f->props = (tiled_props){0};
}

void tmx_end_group(px *p) {
    group_frame *f = &p->groups[--p->ngroups];
    tiled_map *m = p->t->m;
    /* inner groups end first, so a layer's nearest group's properties come before outer ones' */
    for (size_t i = f->first_layer; i < m->nlayers && !p->t->failed; i++)
        tmx_props_merge_under(p, &m->layers[i].props, &f->props);
    tiled_props_free(&f->props);
}

/* Allocates the chunk being read, width x height cells, within the layer's and the map's caps. */
static bool open_chunk(px *p, long x, long y, long w, long h) {
    uint64_t cells = (uint64_t)w * (uint64_t)h;
    uint64_t layer_cells = cells;
    for (size_t i = 0; i < p->layer.nchunks; i++)
        layer_cells += (uint64_t)p->layer.chunks[i].width * (uint64_t)p->layer.chunks[i].height;
    if (layer_cells > TMX_MAX_LAYER_CELLS) {
        FAIL(p, "%llu cells, more than the %u a layer may have", (unsigned long long)layer_cells,
             TMX_MAX_LAYER_CELLS);
        return false;
    }
    if (p->t->cells + cells > TMX_MAX_MAP_CELLS) {
        FAIL(p, "the map's tile layers have more than %u cells", TMX_MAX_MAP_CELLS);
        return false;
    }
    if (!tmx_spend(p, 1) ||
        !tmx_grow(p, (void **)&p->layer.chunks, p->layer.nchunks, sizeof *p->layer.chunks))
        return false;
    tiled_chunk *c = &p->layer.chunks[p->layer.nchunks];
    *c = (tiled_chunk){(int)x, (int)y, (int)w, (int)h, NULL};
    c->gids = calloc(cells ? (size_t)cells : 1, sizeof *c->gids);
    if (!c->gids) {
        FAIL(p, "out of memory");
        return false;
    }
    p->layer.nchunks++;
    p->t->cells += cells;
    p->chunk = c;
    p->chunk_cells = (size_t)cells;
    p->chunk_filled = 0;
    return true;
}

void tmx_start_data(px *p, const XML_Char **a) {
    const char *enc = tmx_attr(a, "encoding"), *comp = tmx_attr(a, "compression");
    if ((enc && strlen(enc) >= sizeof p->encoding) ||
        (comp && strlen(comp) >= sizeof p->compression)) {
        FAIL(p, "unknown data encoding '%s' / compression '%s'", enc ? enc : "", comp ? comp : "");
        return;
    }
    snprintf(p->encoding, sizeof p->encoding, "%s", enc ? enc : "");
    snprintf(p->compression, sizeof p->compression, "%s", comp ? comp : "");
    if (!enc && comp) {
        FAIL(p, "compression '%s' without an encoding", comp);
        return;
    }
    p->data_line = tmx_line_of(p);
    p->chunk = NULL;
    if (p->layer.nchunks) {
        FAIL(p, "a second <data>");
        return;
    }
    tiled_map *m = p->t->m;
    if (!m->infinite) {
        if (!open_chunk(p, 0, 0, m->width, m->height)) return;
        p->collecting = enc != NULL;
        p->text_len = 0;
    }
}

/* The gids of the chunk being read from the collected text (encoded) or its <tile> elements. */
void tmx_finish_chunk(px *p, int line) {
    if (!p->chunk) return;
    if (p->encoding[0]) {
        char why[256];
        if (!tiled_decode_data(p->text ? p->text : "", p->text_len, p->encoding, p->compression,
                               p->chunk->gids, p->chunk_cells, why, sizeof why))
            tmx_fail_at(p, line, "data: %s", why);
    } else if (p->chunk_filled != p->chunk_cells) {
        tmx_fail_at(p, line, "data: %zu <tile> elements where %zu are expected", p->chunk_filled,
                    p->chunk_cells);
    }
    p->collecting = false;
    p->chunk = NULL;
}

void tmx_start_chunk(px *p, const XML_Char **a) {
    if (!p->t->m->infinite) {
        FAIL(p, "a <chunk> in a finite map");
        return;
    }
    long x, y, w, h;
    const long pos = TMX_MAX_CHUNK_POS, size = TMX_MAX_LAYER_CELLS;
    if (!tmx_attr(a, "width") || !tmx_attr(a, "height")) {
        FAIL(p, "<chunk> without width and height");
        return;
    }
    if (!tmx_attr_int(p, a, "x", 0, -pos, pos, &x) || !tmx_attr_int(p, a, "y", 0, -pos, pos, &y) ||
        !tmx_attr_int(p, a, "width", 0, 1, size, &w) ||
        !tmx_attr_int(p, a, "height", 0, 1, size, &h))
        return;
    if (!open_chunk(p, x, y, w, h)) return;
    p->data_line = tmx_line_of(p);
    p->collecting = p->encoding[0] != '\0';
    p->text_len = 0;
}

void tmx_start_data_tile(px *p, const XML_Char **a) {
    if (!p->chunk || p->encoding[0]) {
        FAIL(p, "a <tile> in %s data", p->encoding[0] ? "encoded" : "chunked");
        return;
    }
    uint32_t gid;
    if (!tmx_attr_u32(p, a, "gid", &gid)) return;
    if (p->chunk_filled == p->chunk_cells) {
        FAIL(p, "data: more <tile> elements than the %zu cells", p->chunk_cells);
        return;
    }
    p->chunk->gids[p->chunk_filled++] = gid;
}

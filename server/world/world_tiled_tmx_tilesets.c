/* world_tiled_tmx_tilesets: a TMX map's tilesets: inline, in a TSX file (read by a nested parse),
 * or in a JSON file (read by the TMJ parser through tiled_source.other_tileset), and their tiles.
 * A tileset is what a gid means; the map's layers and objects only name gids, so this is apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tiled_tmx.h"

void tmx_tile_free(tiled_tile *tl) {
    for (size_t i = 0; i < tl->nshapes; i++)
        tiled_object_free(&tl->shapes[i]);
    free(tl->shapes);
    tiled_props_free(&tl->props);
    memset(tl, 0, sizeof *tl);
}

void tmx_tileset_free(tiled_tileset *ts) {
    free(ts->name);
    for (size_t i = 0; i < ts->ntiles; i++)
        tmx_tile_free(&ts->tiles[i]);
    free(ts->tiles);
    memset(ts, 0, sizeof *ts);
}

/* A tileset's own attributes (inline, or the TSX's root). */
void tmx_start_tileset_body(px *p, const XML_Char **a) {
    long v;
    memset(&p->ts, 0, sizeof p->ts);
    p->ts_open = true;
    p->ts.place = (tiled_place){p->file, tmx_line_of(p)};
    p->ts.name = tmx_dup_or_fail(p, tmx_attr(a, "name"));
    if (!p->ts.name) return;
    if (!tmx_attr_int(p, a, "tilewidth", 0, 0, 1 << 20, &v)) return;
    p->ts.tilewidth = (int)v;
    if (!tmx_attr_int(p, a, "tileheight", 0, 0, 1 << 20, &v)) return;
    p->ts.tileheight = (int)v;
    if (!tmx_attr_int(p, a, "tilecount", 0, 0, TILED_GID_MASK, &v)) return;
    p->ts.tilecount = (int)v;
    if (!tmx_attr_int(p, a, "columns", 0, 0, TILED_GID_MASK, &v)) return;
    p->ts.columns = (int)v;
}

void tmx_push_tileset(px *p, tiled_tileset *ts, const char *source) {
    tmx *t = p->t;
    tiled_map *m = t->m;
    char *src_copy = NULL;
    if (source && !(src_copy = tmx_dup_or_fail(p, source))) return;
    if (!tmx_spend(p, 1) ||
        !tmx_grow(p, (void **)&m->tilesets, m->ntilesets, sizeof *m->tilesets) ||
        !tmx_grow(p, (void **)&t->ts_sources, m->ntilesets, sizeof *t->ts_sources)) {
        free(src_copy);
        return;
    }
    m->tilesets[m->ntilesets] = *ts;
    t->ts_sources[m->ntilesets] = src_copy;
    m->ntilesets++;
    memset(ts, 0, sizeof *ts);
}

static bool is_json_name(const char *name) {
    size_t n = strlen(name);
    return (n >= 4 && strcasecmp(name + n - 4, ".tsj") == 0) ||
           (n >= 5 && strcasecmp(name + n - 5, ".json") == 0);
}

/* Without tiled_read's reader for JSON tilesets (a caller of tiled_read_tmx alone). */
static bool fail_refused_json_tileset(px *p, tiled_place from, const char *source) {
    tmx_fail_at(p, from.line, "tileset '%s' is JSON: read this map through tiled_read", source);
    return false;
}

void tmx_start_tileset_in_map(px *p, const XML_Char **a) {
    long firstgid;
    if (!tmx_attr_int(p, a, "firstgid", 1, 1, TILED_GID_MASK, &firstgid)) return;
    const char *source = tmx_attr(a, "source");
    if (!source) {
        tmx_start_tileset_body(p, a);
        p->ts.firstgid = (uint32_t)firstgid;
        return;
    }
    const char *file;
    tiled_place from = {p->file, tmx_line_of(p)};
    tiled_tileset ts;
    memset(&ts, 0, sizeof ts);
    if (is_json_name(source)) { /* a tileset Tiled saved as JSON: the TMJ parser reads it */
        tiled_tileset_reader read = p->t->src->other_tileset;
        bool ok =
            read ? read(p->t->src, p->dir, source, p->t->m, from, &ts, p->t->err, p->t->err_size)
                 : fail_refused_json_tileset(p, from, source);
        size_t items = ts.ntiles;
        for (size_t i = 0; i < ts.ntiles; i++)
            items += ts.tiles[i].nshapes + ts.tiles[i].props.count;
        if (!ok || !tmx_spend(p, items)) {
            tmx_tileset_free(&ts);
            tmx_stop(p);
            return;
        }
        ts.firstgid = (uint32_t)firstgid;
        tmx_push_tileset(p, &ts, ts.place.file);
        tmx_tileset_free(&ts);
        return;
    }
    char *text = tiled_read_file(p->t->src, p->dir, source, "tileset", p->t->m, from, &file,
                                 p->t->err, p->t->err_size);
    if (!text) {
        tmx_stop(p);
        return;
    }
    bool ok = p->t->read_nested(p->t, FILE_TSX, file, text, &ts, NULL);
    free(text);
    if (!ok) {
        tmx_stop(p);
        return;
    }
    ts.firstgid = (uint32_t)firstgid;
    tmx_push_tileset(p, &ts, file);
    tmx_tileset_free(&ts);
}

void tmx_start_tile(px *p, const XML_Char **a) {
    long id;
    memset(&p->tile, 0, sizeof p->tile);
    p->tile.place = (tiled_place){p->file, tmx_line_of(p)};
    if (!tmx_attr(a, "id")) {
        FAIL(p, "<tile> without an id");
        return;
    }
    if (!tmx_attr_int(p, a, "id", 0, 0, TILED_GID_MASK, &id)) return;
    p->tile.id = (uint32_t)id;
    p->tile_open = true;
}

void tmx_end_tile(px *p) {
    p->tile_open = false;
    if (p->tile.nshapes == 0 && p->tile.props.count == 0) return; /* says nothing to us */
    if (!tmx_spend(p, 1) ||
        !tmx_grow(p, (void **)&p->ts.tiles, p->ts.ntiles, sizeof *p->ts.tiles)) {
        tmx_tile_free(&p->tile);
        return;
    }
    p->ts.tiles[p->ts.ntiles++] = p->tile;
    memset(&p->tile, 0, sizeof p->tile);
}

static int tile_cmp(const void *a, const void *b) {
    uint32_t x = ((const tiled_tile *)a)->id, y = ((const tiled_tile *)b)->id;
    return x < y ? -1 : x > y;
}

void tmx_end_tileset(px *p) {
    if (p->ts.ntiles > 1) qsort(p->ts.tiles, p->ts.ntiles, sizeof *p->ts.tiles, tile_cmp);
    for (size_t i = 1; i < p->ts.ntiles; i++)
        if (p->ts.tiles[i].id == p->ts.tiles[i - 1].id) {
            tmx_fail_at(p, p->ts.tiles[i].place.line, "tileset '%s': tile %u given twice",
                        p->ts.name, (unsigned)p->ts.tiles[i].id);
            return;
        }
    p->ts_open = false;
    if (p->kind == FILE_TSX)
        p->tileset_done = true;
    else
        tmx_push_tileset(p, &p->ts, NULL);
}

/* TEMPORARY: replaced by the TMX branch's implementations at merge (delete this file and its line
 * in server/world/CMakeLists.txt then).
 *
 * Just enough of the shared Tiled functions (tiled.h) for the TMJ parser to build and be tested on
 * its own branch: tiled_free, tiled_prop_find, tiled_read_file (the confined reader, simplified:
 * any ".." and any absolute path are refused, files are read relative to the map's directory) and
 * tiled_decode_data for CSV and uncompressed base64 only. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiled.h"
#include "world_load.h"

/* Declared by world_tiled_tmj.c; the TMX branch's shared reader provides the real one. */
char *tiled_read_file(const tiled_source *src, const char *ref_from_map_dir, tiled_map *m,
                      tiled_place from, char *err, size_t err_size);

static void free_props(tiled_props *p) {
    for (size_t i = 0; i < p->count; i++) {
        free(p->items[i].name);
        free(p->items[i].value);
    }
    free(p->items);
}

static void free_objects(tiled_object *o, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(o[i].points);
        free(o[i].type);
        free(o[i].name);
        free_props(&o[i].props);
    }
    free(o);
}

void tiled_free(tiled_map *m) {
    if (!m) return;
    free(m->orientation);
    free_props(&m->props);
    for (size_t i = 0; i < m->ntilesets; i++) {
        tiled_tileset *ts = &m->tilesets[i];
        free(ts->name);
        for (size_t t = 0; t < ts->ntiles; t++) {
            free_objects(ts->tiles[t].shapes, ts->tiles[t].nshapes);
            free_props(&ts->tiles[t].props);
        }
        free(ts->tiles);
    }
    free(m->tilesets);
    for (size_t i = 0; i < m->nlayers; i++) {
        tiled_layer *l = &m->layers[i];
        free(l->name);
        free_props(&l->props);
        for (size_t c = 0; c < l->nchunks; c++)
            free(l->chunks[c].gids);
        free(l->chunks);
        free_objects(l->objects, l->nobjects);
    }
    free(m->layers);
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i]);
    free(m->files);
    free(m);
}

const tiled_prop *tiled_prop_find(const tiled_props *props, const char *name) {
    for (size_t i = 0; props && i < props->count; i++)
        if (strcmp(props->items[i].name, name) == 0) return &props->items[i];
    return NULL;
}

char *tiled_read_file(const tiled_source *src, const char *ref, tiled_map *m, tiled_place from,
                      char *err, size_t err_size) {
    const char *file = from.file ? from.file : src->path;
    bool climbs = strcmp(ref, "..") == 0 || strncmp(ref, "../", 3) == 0 || strstr(ref, "/../") ||
                  (strlen(ref) >= 3 && strcmp(ref + strlen(ref) - 3, "/..") == 0);
    if (ref[0] == '/' || climbs) {
        snprintf(err, err_size, "%s:%d: \"%s\" is outside the map's directory", file, from.line,
                 ref);
        return NULL;
    }
    const char *slash = strrchr(src->path, '/');
    size_t dirlen = slash ? (size_t)(slash - src->path) + 1 : 0;
    size_t len = dirlen + strlen(ref) + 1;
    char *path = malloc(len);
    char **files = realloc(m->files, (m->nfiles + 1) * sizeof *files);
    char *name = strdup(ref);
    if (files) m->files = files;
    if (!path || !files || !name) {
        free(path);
        free(name);
        snprintf(err, err_size, "%s:%d: out of memory", file, from.line);
        return NULL;
    }
    memcpy(path, src->path, dirlen);
    strcpy(path + dirlen, ref);
    char why[512];
    char *text = world_read_text(src->dir_fd, path, src->no_follow, why, sizeof why);
    free(path);
    if (!text) {
        /* world_read_text says "PATH:0:0: reason"; keep the reason */
        const char *reason = strstr(why, ":0:0: ");
        snprintf(err, err_size, "%s:%d: \"%s\": %s", file, from.line, ref,
                 reason ? reason + 6 : why);
        free(name);
        return NULL;
    }
    m->files[m->nfiles++] = name;
    return text;
}

static int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

bool tiled_decode_data(const char *text, size_t len, const char *encoding, const char *compression,
                       uint32_t *out, size_t count, char *err, size_t err_size) {
    if (compression && compression[0]) {
        snprintf(err, err_size, "compression \"%s\" is not in the shim", compression);
        return false;
    }
    size_t n = 0;
    if (strcmp(encoding, "csv") == 0) {
        size_t i = 0;
        while (i < len) {
            while (i < len && strchr(" \t\r\n,", text[i]))
                i++;
            if (i >= len) break;
            uint64_t v = 0;
            size_t start = i;
            while (i < len && text[i] >= '0' && text[i] <= '9' && v <= 0xffffffffu)
                v = v * 10 + (uint64_t)(text[i++] - '0');
            if (i == start || v > 0xffffffffu || n >= count) {
                snprintf(err, err_size, "bad CSV data");
                return false;
            }
            out[n++] = (uint32_t)v;
        }
    } else if (strcmp(encoding, "base64") == 0) {
        uint32_t acc = 0;
        int bits = 0;
        uint8_t bytes[4];
        int nb = 0;
        for (size_t i = 0; i < len; i++) {
            char c = text[i];
            if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
            int v = b64_value(c);
            if (v < 0) {
                snprintf(err, err_size, "bad base64");
                return false;
            }
            acc = (acc << 6) | (uint32_t)v;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                bytes[nb++] = (uint8_t)(acc >> bits);
                if (nb == 4) {
                    if (n >= count) {
                        snprintf(err, err_size, "more than %zu tiles", count);
                        return false;
                    }
                    out[n++] = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 |
                               (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24;
                    nb = 0;
                }
            }
        }
        if (nb) {
            snprintf(err, err_size, "base64 data is not whole 32-bit tiles");
            return false;
        }
    } else {
        snprintf(err, err_size, "unknown encoding \"%s\"", encoding);
        return false;
    }
    if (n != count) {
        snprintf(err, err_size, "%zu tiles where the layer has %zu", n, count);
        return false;
    }
    return true;
}

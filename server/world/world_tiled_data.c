/* world_tiled_data: what both Tiled parsers share that is not about files: tile layer data decoding
 * (CSV, base64, base64 with zlib, gzip or zstd), property lookup and freeing the model. */
#include "tiled.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

const tiled_prop *tiled_prop_find(const tiled_props *props, const char *name) {
    if (!props || !name) return NULL;
    for (size_t i = 0; i < props->count; i++)
        if (strcmp(props->items[i].name, name) == 0) return &props->items[i];
    return NULL;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Tiled writes "1,2,0,\n3,4,1": numbers separated by commas, whitespace anywhere between. */
static bool decode_csv(const char *text, size_t len, uint32_t *out, size_t count, char *err,
                       size_t err_size) {
    size_t n = 0, i = 0;
    for (;;) {
        while (i < len && is_space(text[i]))
            i++;
        if (i == len && n == 0 && count == 0) return true;
        if (i == len || text[i] < '0' || text[i] > '9') {
            snprintf(err, err_size, "csv: expected a tile id at byte %zu", i);
            return false;
        }
        uint64_t v = 0;
        while (i < len && text[i] >= '0' && text[i] <= '9') {
            v = v * 10 + (uint64_t)(text[i++] - '0');
            if (v > UINT32_MAX) {
                snprintf(err, err_size, "csv: tile id %zu exceeds 32 bits", n + 1);
                return false;
            }
        }
        if (n == count) {
            snprintf(err, err_size, "csv: more than the %zu tile ids expected", count);
            return false;
        }
        out[n++] = (uint32_t)v;
        while (i < len && is_space(text[i]))
            i++;
        if (i == len) break;
        if (text[i] != ',') {
            snprintf(err, err_size, "csv: unexpected '%c' at byte %zu", text[i], i);
            return false;
        }
        i++;
        /* a trailing comma ends the list as well */
        size_t j = i;
        while (j < len && is_space(text[j]))
            j++;
        if (j == len) break;
    }
    if (n != count) {
        snprintf(err, err_size, "csv: %zu tile ids where %zu are expected", n, count);
        return false;
    }
    return true;
}

static int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Strict RFC 4648 base64 (whitespace ignored, '=' padding only at the end, no stray bits). out
 * holds at least len / 4 * 3 + 3 bytes; *out_len the bytes decoded. */
static bool decode_base64(const char *text, size_t len, unsigned char *out, size_t *out_len,
                          char *err, size_t err_size) {
    uint32_t acc = 0;
    int nbits = 0;
    size_t n = 0, pad = 0, symbols = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (is_space(c)) continue;
        if (c == '=') {
            pad++;
            symbols++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad) {
            snprintf(err, err_size, "base64: %s at byte %zu",
                     v < 0 ? "invalid character" : "data after '=' padding", i);
            return false;
        }
        symbols++;
        acc = (acc << 6) | (uint32_t)v;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            out[n++] = (unsigned char)(acc >> nbits);
            acc &= (1u << nbits) - 1;
        }
    }
    if (symbols % 4 != 0 || pad > 2 || acc != 0) {
        snprintf(err, err_size, "base64: truncated or badly padded (%zu symbols)", symbols);
        return false;
    }
    *out_len = n;
    return true;
}

static bool inflate_exact(const unsigned char *in, size_t in_len, bool gzip, unsigned char *out,
                          size_t out_len, char *err, size_t err_size) {
    const char *what = gzip ? "gzip" : "zlib";
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, gzip ? 15 + 16 : 15) != Z_OK) {
        snprintf(err, err_size, "%s: cannot initialise inflate", what);
        return false;
    }
    /* both lengths are bounded by the file size (64 MiB) and the layer cap, within uInt */
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)in_len;
    zs.next_out = out;
    zs.avail_out = (uInt)out_len;
    int rc = inflate(&zs, Z_FINISH);
    size_t produced = zs.total_out;
    bool input_left = zs.avail_in != 0;
    char why[128];
    snprintf(why, sizeof why, "%s", zs.msg ? zs.msg : "corrupt");
    inflateEnd(&zs);
    if (rc == Z_STREAM_END && produced == out_len && !input_left) return true;
    if (rc == Z_STREAM_END && input_left)
        snprintf(err, err_size, "%s: data after the end of the stream", what);
    else if (rc == Z_STREAM_END)
        snprintf(err, err_size, "%s: %zu bytes where %zu are expected", what, produced, out_len);
    else if (rc == Z_BUF_ERROR && !input_left) /* the input ran out before the stream's end */
        snprintf(err, err_size, "%s: truncated stream (%zu bytes of the %zu expected)", what,
                 produced, out_len);
    else if (rc == Z_BUF_ERROR) /* the output is full and the stream goes on */
        snprintf(err, err_size, "%s: more than the %zu bytes expected", what, out_len);
    else
        snprintf(err, err_size, "%s: the stream does not inflate (%s)", what, why);
    return false;
}

static bool zstd_exact(const unsigned char *in, size_t in_len, unsigned char *out, size_t out_len,
                       char *err, size_t err_size) {
    unsigned long long declared = ZSTD_getFrameContentSize(in, in_len);
    if (declared == ZSTD_CONTENTSIZE_ERROR) {
        snprintf(err, err_size, "zstd: not a zstd frame");
        return false;
    }
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != out_len) {
        snprintf(err, err_size, "zstd: %llu bytes where %zu are expected", declared, out_len);
        return false;
    }
    /* the output buffer is the bound: a frame that says less or more fails here */
    size_t got = ZSTD_decompress(out, out_len, in, in_len);
    if (ZSTD_isError(got)) {
        snprintf(err, err_size, "zstd: %s", ZSTD_getErrorName(got));
        return false;
    }
    if (got != out_len) {
        snprintf(err, err_size, "zstd: %zu bytes where %zu are expected", got, out_len);
        return false;
    }
    return true;
}

bool tiled_decode_data(const char *text, size_t len, const char *encoding, const char *compression,
                       uint32_t *out, size_t count, char *err, size_t err_size) {
    if (!encoding) encoding = "";
    if (!compression) compression = "";
    if (count > SIZE_MAX / 4) {
        snprintf(err, err_size, "too many tiles");
        return false;
    }
    if (strcmp(encoding, "csv") == 0) {
        if (compression[0]) {
            snprintf(err, err_size, "csv data cannot be compressed ('%s')", compression);
            return false;
        }
        return decode_csv(text, len, out, count, err, err_size);
    }
    if (strcmp(encoding, "base64") != 0) {
        snprintf(err, err_size, "unknown data encoding '%s'", encoding);
        return false;
    }
    bool zlib_ = strcmp(compression, "zlib") == 0, gzip = strcmp(compression, "gzip") == 0;
    bool zstd = strcmp(compression, "zstd") == 0;
    if (compression[0] && !zlib_ && !gzip && !zstd) {
        snprintf(err, err_size, "unsupported data compression '%s'", compression);
        return false;
    }
    size_t bytes = count * 4;
    unsigned char *raw = malloc(len / 4 * 3 + 3);
    if (!raw) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    size_t raw_len = 0;
    bool ok = decode_base64(text, len, raw, &raw_len, err, err_size);
    unsigned char *bytes_out = (unsigned char *)out;
    if (ok && !compression[0]) {
        ok = raw_len == bytes;
        if (ok)
            memcpy(bytes_out, raw, bytes);
        else
            snprintf(err, err_size, "base64: %zu bytes where %zu (%zu tiles) are expected", raw_len,
                     bytes, count);
    } else if (ok && zstd) {
        ok = zstd_exact(raw, raw_len, bytes_out, bytes, err, err_size);
    } else if (ok) {
        ok = inflate_exact(raw, raw_len, gzip, bytes_out, bytes, err, err_size);
    }
    free(raw);
    if (!ok) return false;
    /* little-endian on disk, whatever the host */
    for (size_t i = 0; i < count; i++) {
        const unsigned char *b = bytes_out + 4 * i;
        out[i] = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    }
    return true;
}

bool tiled_sort_tilesets(tiled_map *m, char **paths, uint32_t *dup) {
    /* insertion sort: the count is bounded and usually already in order */
    for (size_t i = 1; i < m->ntilesets; i++)
        for (size_t k = i; k > 0 && m->tilesets[k].firstgid < m->tilesets[k - 1].firstgid; k--) {
            tiled_tileset t = m->tilesets[k];
            m->tilesets[k] = m->tilesets[k - 1];
            m->tilesets[k - 1] = t;
            if (!paths) continue;
            char *p = paths[k];
            paths[k] = paths[k - 1];
            paths[k - 1] = p;
        }
    for (size_t i = 1; i < m->ntilesets; i++)
        if (m->tilesets[i].firstgid == m->tilesets[i - 1].firstgid) {
            *dup = m->tilesets[i].firstgid;
            return false;
        }
    return true;
}

void tiled_props_free(tiled_props *p) {
    for (size_t i = 0; i < p->count; i++) {
        free(p->items[i].name);
        free(p->items[i].value);
    }
    free(p->items);
    p->items = NULL;
    p->count = 0;
}

void tiled_object_free(tiled_object *o) {
    free(o->points);
    free(o->type);
    free(o->name);
    tiled_props_free(&o->props);
    memset(o, 0, sizeof *o);
}

static void free_objects(tiled_object *objs, size_t n) {
    for (size_t i = 0; i < n; i++)
        tiled_object_free(&objs[i]);
    free(objs);
}

void tiled_free(tiled_map *m) {
    if (!m) return;
    free(m->orientation);
    tiled_props_free(&m->props);
    for (size_t i = 0; i < m->ntilesets; i++) {
        tiled_tileset *ts = &m->tilesets[i];
        free(ts->name);
        for (size_t j = 0; j < ts->ntiles; j++) {
            free_objects(ts->tiles[j].shapes, ts->tiles[j].nshapes);
            tiled_props_free(&ts->tiles[j].props);
        }
        free(ts->tiles);
    }
    free(m->tilesets);
    for (size_t i = 0; i < m->nlayers; i++) {
        tiled_layer *l = &m->layers[i];
        free(l->name);
        tiled_props_free(&l->props);
        for (size_t j = 0; j < l->nchunks; j++)
            free(l->chunks[j].gids);
        free(l->chunks);
        free_objects(l->objects, l->nobjects);
    }
    free(m->layers);
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i]);
    free(m->files);
    free(m);
}

/* tiled: a map saved by the Tiled editor, as read from its file (ARCHITECTURE.md "World files:
 * Tiled maps"). The parsers (world_tiled_tmx.c for TMX/TSX/TX through expat, world_tiled_tmj.c
 * for TMJ/TSJ/TJ through jansson) fill the same model, in Tiled's own units (pixels, y down) and
 * with nothing interpreted beyond what the file says: the external tilesets and templates are
 * already read in (resolved relative to the map, confined to its tree), templates are applied to
 * their instances, tile layer data is decoded to global tile ids (flip bits kept), and group layers
 * are flattened into their children (offsets added, properties inherited where the child has none).
 * world_tiled.c turns a model into a world (units, the y flip, flips, merging, splitting,
 * properties). Parsing is separate from meaning so that TMX and TMJ give the same world by
 * construction, and each parser is tested against the other on Tiled's own exports. */
#ifndef COLLIDE_TILED_H
#define COLLIDE_TILED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tiled's flip bits in a global tile id (gid); the low 28 bits are the id. Bit 28 (hexagonal
 * 120-degree rotation) is refused: only orthogonal maps are read. */
#define TILED_FLIP_H 0x80000000u
#define TILED_FLIP_V 0x40000000u
#define TILED_FLIP_D 0x20000000u
#define TILED_ROTATE_HEX 0x10000000u
#define TILED_GID_MASK 0x0fffffffu

/* Where something came from, for errors and warnings: the file (the map or an external tileset or
 * template, as the map names it), and a line where the format gives one (TMX: expat's line; TMJ:
 * 0, the error then names the layer and object or tile id). */
typedef struct tiled_place {
    const char *file; /* owned by the map's string pool (tiled_map.files) */
    int line;         /* 1-based; 0 unknown */
} tiled_place;

/* A custom property, as Tiled wrote it. Only the `collide:` ones are kept (others are not read). */
typedef enum tiled_prop_type {
    TILED_PROP_STRING,
    TILED_PROP_INT,
    TILED_PROP_FLOAT,
    TILED_PROP_BOOL,
    TILED_PROP_OTHER /* color, file, object, class: kept so that a wrong type is refused by name */
} tiled_prop_type;

typedef struct tiled_prop {
    char *name; /* e.g. "collide:solid" */
    tiled_prop_type type;
    char *value; /* as written: "true", "12", "0x80000000", "0,-30" */
} tiled_prop;

typedef struct tiled_props {
    tiled_prop *items;
    size_t count;
} tiled_props;

typedef enum tiled_object_kind {
    TILED_OBJ_RECT,     /* x, y top-left, width, height (a rectangle with 0 x 0 size is a point
                           only when Tiled marks it <point/> / "point": true) */
    TILED_OBJ_ELLIPSE,  /* x, y top-left of its bounding box, width, height */
    TILED_OBJ_POINT,    /* x, y */
    TILED_OBJ_POLYGON,  /* points relative to x, y */
    TILED_OBJ_POLYLINE, /* points relative to x, y: skipped with a warning */
    TILED_OBJ_TEXT,     /* skipped with a warning */
    TILED_OBJ_TILE      /* gid set: a tile placed as an object (x, y its bottom-left) */
} tiled_object_kind;

typedef struct tiled_point {
    double x, y;
} tiled_point;

typedef struct tiled_object {
    int id; /* Tiled's object id (0 inside a tile's collision group if absent) */
    tiled_object_kind kind;
    double x, y;          /* pixels, y down, layer offsets already added */
    double width, height; /* pixels */
    double rotation;      /* degrees, clockwise in Tiled's y-down view, about (x, y) */
    tiled_point *points;  /* polygon / polyline, relative to (x, y) */
    size_t npoints;
    uint32_t gid; /* TILED_OBJ_TILE: the gid with flip bits */
    char *type;   /* "type" (1.8 TMX/TMJ) or "class": "" when none */
    char *name;
    tiled_props props; /* its own, with the template's merged under them */
    tiled_place place;
} tiled_object;

/* A tile of a tileset that says something: collision shapes or properties. */
typedef struct tiled_tile {
    uint32_t id;          /* local id in its tileset */
    tiled_object *shapes; /* its collision group (objectgroup), in tile pixels, y down */
    size_t nshapes;
    tiled_props props;
    tiled_place place;
} tiled_tile;

typedef struct tiled_tileset {
    uint32_t firstgid;
    char *name;
    int tilewidth, tileheight; /* pixels */
    int tilecount, columns;
    tiled_tile *tiles; /* sorted by id; tiles with neither shapes nor properties are absent */
    size_t ntiles;
    tiled_place place; /* the map's <tileset> / "tilesets" entry (its source file when external) */
} tiled_tileset;

/* A rectangle of tile layer data: a finite map's layer is one chunk at (0, 0) of the map's size;
 * an infinite map's are its chunks (x, y in tiles, may be negative). */
typedef struct tiled_chunk {
    int x, y, width, height;
    uint32_t *gids; /* width * height, row-major from the top-left, flip bits kept; 0 = empty */
} tiled_chunk;

typedef enum tiled_layer_kind { TILED_LAYER_TILES, TILED_LAYER_OBJECTS } tiled_layer_kind;

typedef struct tiled_layer {
    tiled_layer_kind kind;
    int id;
    char *name;
    double offsetx, offsety; /* pixels, groups' offsets added (tile layers: applied by the
                                converter; object layers: already in each object's x, y) */
    tiled_props props;       /* its own, then its groups' for names it does not have */
    tiled_chunk *chunks;     /* TILED_LAYER_TILES */
    size_t nchunks;
    tiled_object *objects; /* TILED_LAYER_OBJECTS */
    size_t nobjects;
    tiled_place place;
} tiled_layer;

typedef struct tiled_map {
    char *orientation; /* refused unless "orthogonal" (by the converter, with the reason) */
    bool infinite;
    int width, height;         /* tiles (finite maps) */
    int tilewidth, tileheight; /* pixels */
    tiled_props props;
    tiled_tileset *tilesets; /* in firstgid order */
    size_t ntilesets;
    tiled_layer *layers; /* in file order, groups flattened */
    size_t nlayers;
    char **files; /* every file read (the map first): the strings tiled_place points at */
    size_t nfiles;
    tiled_place place;
} tiled_map;

/* Where a map's files are read from. A map given by path is read relative to dir_fd (AT_FDCWD or
 * --world-dir's descriptor); its tilesets and templates are resolved against the map's own
 * directory and must stay inside the tree rooted there: no absolute path, no ".." that climbs out
 * of it, no symbolic link (O_NOFOLLOW on every component read), each file at most
 * WORLD_LOAD_MAX_FILE_BYTES. */
typedef struct tiled_source tiled_source;
/* Reads a tileset saved in the other format than the map's (a .tsj named by a TMX map, a .tsx by
 * a TMJ map, both of which Tiled writes): ref relative to base_dir as for tiled_read_file, into
 * *out (firstgid left 0 for the caller; on failure *out may hold what was read, for the caller
 * to free). False with err as tiled_read_file's, or "FILE:LINE: reason" for the tileset's own. */
typedef bool (*tiled_tileset_reader)(const tiled_source *src, const char *base_dir, const char *ref,
                                     tiled_map *m, tiled_place from, tiled_tileset *out, char *err,
                                     size_t err_size);
struct tiled_source {
    int dir_fd;       /* AT_FDCWD or a directory */
    const char *path; /* the map, relative to dir_fd (or absolute when dir_fd is AT_FDCWD) */
    bool no_follow;   /* refuse symbolic links (CreateRoom's --world-dir) */
    /* The other parser's tileset reader, set by tiled_read (NULL: such a tileset is refused).
     * Handed down rather than called by name so that neither parser depends on the other. */
    tiled_tileset_reader other_tileset;
};

/* Reads a map: TMX when path ends in ".tmx", else TMJ. On failure NULL, and err holds
 * "FILE:LINE: reason" (FILE as the map names it; LINE 0 when unknown) with the layer and the
 * object or tile id in the reason where there is one. */
tiled_map *tiled_read(const tiled_source *src, char *err, size_t err_size);
tiled_map *tiled_read_tmx(const tiled_source *src, char *err, size_t err_size);
tiled_map *tiled_read_tmj(const tiled_source *src, char *err, size_t err_size);
void tiled_free(tiled_map *m);
/* m->tilesets in firstgid order, as the model promises (the converter finds a gid's tileset by
 * it), whatever order the file gave; paths (NULL, or one per tileset) move with them. False, and
 * *dup the gid, when two tilesets start at the same gid: which one a tile of it names would be
 * the file's order, not the map's meaning. Shared by both parsers. */
bool tiled_sort_tilesets(tiled_map *m, char **paths, uint32_t *dup);

/* What the parsers free on their own way (a template's copy, a failed object). */
void tiled_props_free(tiled_props *props);
void tiled_object_free(tiled_object *o); /* its strings, points and props; *o zeroed */

/* A property of props by name, or NULL. */
const tiled_prop *tiled_prop_find(const tiled_props *props, const char *name);

/* Tile layer data as Tiled writes it (TMX <data>, TMJ "data"): encoding "csv" or "base64" (TMJ's
 * array form is the parser's), compression "" / "zlib" / "gzip" / "zstd". Exactly `count` gids
 * (little-endian 32-bit after decoding) into out; false with a reason in err otherwise (bad
 * base64, a stream that does not inflate, a wrong length). */
bool tiled_decode_data(const char *text, size_t len, const char *encoding, const char *compression,
                       uint32_t *out, size_t count, char *err, size_t err_size);

/* ---- Shared by the parsers (world_tiled_files.c): reading the map and the files it names. ---- */

/* At most this many files per map (the map, its external tilesets and templates). */
#define TILED_MAX_FILES 256

/* Adds a copy of name to m->files (the strings tiled_place points at); the copy, or NULL when out
 * of memory or over TILED_MAX_FILES. */
const char *tiled_pool_file(tiled_map *m, const char *name);

/* Reads src's map itself (world_read_text's rules: a regular file of at most
 * WORLD_LOAD_MAX_FILE_BYTES, no NUL byte; src->no_follow refuses a symbolic link) and pools its
 * path as m->files[0] and m->place.file. The NUL-terminated text (the caller frees it), or NULL
 * with "PATH:0: reason" in err. */
char *tiled_read_map_text(const tiled_source *src, tiled_map *m, char *err, size_t err_size);

/* Reads a file the map refers to (a tileset's or a template's `source`): ref is relative to
 * base_dir, the directory of the file naming it relative to the map's directory ("" for the map
 * itself, "tpl" for "tpl/crate.tx"). Confined to the map's directory tree: an absolute ref, a ".."
 * that climbs above the map's directory, a symbolic link on any component, anything but a regular
 * file or a file over WORLD_LOAD_MAX_FILE_BYTES is refused. On success the NUL-terminated text (the
 * caller frees it) and *file, the file's path relative to the map's directory ("sub/tiles.tsx"),
 * pooled in m->files. On failure NULL and err holds "FROM.file:FROM.line: WHAT 'ref': reason". */
char *tiled_read_file(const tiled_source *src, const char *base_dir, const char *ref,
                      const char *what, tiled_map *m, tiled_place from, const char **file,
                      char *err, size_t err_size);

/* The two tileset readers tiled_read hands to the other parser (tiled_tileset_reader): an XML
 * tileset (.tsx; Tiled's own JSON export keeps its maps' .tsx references) with the TMX parser's
 * rules, a JSON one (.tsj, .json; Tiled lets a TMX map use one) with the TMJ parser's. */
bool tiled_read_tsx(const tiled_source *src, const char *base_dir, const char *ref, tiled_map *m,
                    tiled_place from, tiled_tileset *out, char *err, size_t err_size);
bool tiled_read_tsj(const tiled_source *src, const char *base_dir, const char *ref, tiled_map *m,
                    tiled_place from, tiled_tileset *out, char *err, size_t err_size);

/* ref joined to base_dir and normalised ("." and "dir/.." removed) into out, relative to the map's
 * directory; false when ref is absolute, climbs above the map's directory or does not fit. Lets a
 * parser tell that a template's tileset is one of the map's. */
bool tiled_resolve_path(const char *base_dir, const char *ref, char *out, size_t out_size);

/* The model as native world JSON text (world_tiled.c): NULL with err on a refusal. base (may be
 * NULL: the defaults) is the configuration of the world to be built, whose static grid bounds the
 * merged boxes. notes (may be NULL) receives the counts and the warnings. */
struct world_file_notes;
struct world_config;
char *world_tiled_json(const tiled_map *m, const struct world_config *base,
                       struct world_file_notes *notes, char *err, size_t err_size);

#endif

/* world_load: builds a world from a JSON world file (ARCHITECTURE.md "The world file is JSON").
 * Kept apart from world.h so the simulation itself stays free of I/O: this is the one part of the
 * world layer that reads files (and links jansson). */
#ifndef COLLIDE_WORLD_LOAD_H
#define COLLIDE_WORLD_LOAD_H

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WORLD_MAX_SPAWN_POINTS 1024

typedef struct world_spawn_points {
    size_t count;
    vec2 points[WORLD_MAX_SPAWN_POINTS];
} world_spawn_points;

/* The strongest gravity a world file may give (the length of "gravity", units/s^2). */
#define WORLD_MAX_GRAVITY 1e6

/* Builds a world from a JSON file or string. base supplies everything except the bounds and the
 * gravity, which the file sets (a file without "gravity" has none, whatever base holds). On
 * failure returns NULL and writes "FILE:LINE:COLUMN: reason" into err. spawn_points may be NULL. */
world *world_load_file(const char *path, const world_config *base, world_spawn_points *spawn_points,
                       char *err, size_t err_size);
world *world_load_json(const char *json, const char *name, const world_config *base,
                       world_spawn_points *spawn_points, char *err, size_t err_size);
/* Reads a world file's text for world_load_json: a regular file (a FIFO, a device or a directory is
 * refused without blocking), at most 64 MiB, no NUL byte; NUL-terminated, the caller frees it.
 * dir_fd: AT_FDCWD or a directory that a relative path is opened from; no_follow: a symbolic link
 * as the last component is refused (the rooms' --world-dir must not lead out of itself). NULL on
 * failure, err as above. */
char *world_read_text(int dir_fd, const char *path, bool no_follow, char *err, size_t err_size);
/* What reading a world file found beside the world itself: for a Tiled map, where its statics
 * came from and what was skipped (collided logs it at load; --check-world prints it). */
typedef struct world_file_notes {
    bool tiled;                      /* read from a Tiled map (TMX, TMJ) */
    size_t tiles_collidable;         /* cells whose tile has collision shapes or collide:solid */
    size_t tile_statics;             /* the statics those became, full cells merged */
    size_t boxes, polygons, circles; /* the map's statics by shape */
    size_t concave_split;            /* polygons split into several convex pieces */
    size_t warnings;                 /* all of them counted */
    char text[2048];                 /* the first warnings, one "FILE:LINE: what" per line */
} world_file_notes;

/* Reads a world file of any format as native world JSON text for world_load_json: a native file
 * as it is, a Tiled map (".tmx"; ".tmj", or ".json" with a top-level "tiledversion") converted
 * (world_tiled.c), its tilesets and templates read from the map's directory tree. dir_fd and
 * no_follow as for world_read_text; base (may be NULL: the defaults) is the configuration the
 * text will be built with (world_load_json's), which bounds a Tiled map's merged boxes. notes may
 * be NULL. NULL on failure, err "FILE:LINE[:COL]: reason". */
char *world_read_any(int dir_fd, const char *path, bool no_follow, const world_config *base,
                     world_file_notes *notes, char *err, size_t err_size);

/* After world_load_json failed on text world_read_any converted from a Tiled map: its message
 * points at a line and column of that converted text, which nobody wrote; this rewrites
 * "NAME:LINE:COL: reason" into "NAME: the map's converted world: reason" (a full world adds what
 * to raise). Nothing for a native file. */
void world_notes_explain(const world_file_notes *notes, char *err, size_t err_size);

/* The embedded default arena (a bounded map of boxes, polygons and circles with room for thousands
 * of players), as JSON: examples/worlds/arena.json, compiled in at build time. */
extern const char world_default_arena_json[];

#ifdef __cplusplus
}
#endif
#endif

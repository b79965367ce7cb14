/* net_worlds: the world files an admin's CreateRoom may name (PROTOCOL.md "Rooms": `world` is a
 * file name in --world-dir with its extension; a name with a path separator or `..` is
 * BAD_REQUEST, no such file NOT_FOUND). The file is read once, on the admin's thread, and
 * validated by loading it into a throwaway world, so the admin gets the file's error in its reply;
 * the room's owner thread later builds the room's world from the same text (docs/rooms-design.md).
 * The folder is never left: the name has no separator, and a symbolic link is refused. */
#ifndef COLLIDE_NET_WORLDS_H
#define COLLIDE_NET_WORLDS_H

#include <stdbool.h>
#include <stddef.h>

#include "world.h"

#define NET_WORLD_NAME_MAX 255 /* bytes, as a file name */

typedef enum net_world_status {
    NET_WORLD_OK = 0,
    NET_WORLD_BAD_NAME,  /* empty, too long, a separator, `..`, a NUL: BAD_REQUEST */
    NET_WORLD_NOT_FOUND, /* no such file, or no --world-dir: NOT_FOUND */
    NET_WORLD_BAD_FILE,  /* not a regular file, a symbolic link, too big, not a valid world:
                            BAD_REQUEST with the reason */
} net_world_status;

bool net_world_name_ok(const char *name, size_t len);

/* Reads and validates `name` (len bytes) in world_dir against base (the daemon's world settings).
 * OK: *text is the file's text (free() it) and *statics its static bodies; otherwise err says why
 * (the file, the place and the reason for a bad world). */
net_world_status net_world_read(const char *world_dir, const char *name, size_t len,
                                const world_config *base, char **text, size_t *statics, char *err,
                                size_t err_size);

#endif

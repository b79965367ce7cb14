/* net_worlds: CreateRoom's world files (see net_worlds.h). */
#include "net_worlds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "world_load.h"

bool net_world_name_ok(const char *name, size_t len) {
    if (len == 0 || len > NET_WORLD_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '/' || name[i] == '\\' || name[i] == '\0') return false;
        if (name[i] == '.' && i + 1 < len && name[i + 1] == '.') return false;
    }
    return true;
}

net_world_status net_world_read(const char *world_dir, const char *name, size_t len,
                                const world_config *base, char **text, size_t *statics, char *err,
                                size_t err_size) {
    *text = NULL;
    *statics = 0;
    if (err_size) err[0] = '\0';
    if (!net_world_name_ok(name, len)) {
        snprintf(err, err_size, "world name must be a file name (no separator, no '..')");
        return NET_WORLD_BAD_NAME;
    }
    if (!world_dir || !world_dir[0]) {
        snprintf(err, err_size, "no world files: the daemon has no --world-dir");
        return NET_WORLD_NOT_FOUND;
    }
    char file[NET_WORLD_NAME_MAX + 1];
    memcpy(file, name, len);
    file[len] = '\0';
    int dir = open(world_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        snprintf(err, err_size, "--world-dir %s: %s", world_dir, strerror(errno));
        return NET_WORLD_NOT_FOUND;
    }
    /* Told apart before the read: a missing file is NOT_FOUND, anything else about it is bad. */
    struct stat st;
    bool missing = fstatat(dir, file, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
    world_file_notes notes;
    char *t = missing ? NULL : world_read_any(dir, file, true, base, &notes, err, err_size);
    close(dir);
    if (missing) {
        snprintf(err, err_size, "no world file '%s'", file);
        return NET_WORLD_NOT_FOUND;
    }
    if (!t) return NET_WORLD_BAD_FILE;
    world *w = world_load_json(t, file, base, NULL, err, err_size);
    if (!w) {
        world_notes_explain(&notes, err, err_size);
        free(t);
        return NET_WORLD_BAD_FILE;
    }
    world_stats ws;
    world_get_stats(w, &ws);
    world_destroy(w);
    *text = t;
    *statics = ws.static_bodies;
    return NET_WORLD_OK;
}

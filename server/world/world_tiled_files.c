/* world_tiled_files: the files a Tiled map is made of, read for both parsers. The map names its
 * tilesets and templates by relative path; they are read confined to the map's directory tree
 * (ARCHITECTURE.md "World files: Tiled maps"), so that a map handed to CreateRoom cannot make the
 * daemon read outside --world-dir: the path is normalised lexically and then opened one component
 * at a time with O_NOFOLLOW, which makes the lexical ".." check sound (no link can lead back out).
 */
#include "tiled.h"
#include "world_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Long enough for any path Tiled writes; longer ones are refused, not truncated. */
#define TILED_PATH_MAX 1024

const char *tiled_pool_file(tiled_map *m, const char *name) {
    if (m->nfiles >= TILED_MAX_FILES) return NULL;
    char **files = realloc(m->files, (m->nfiles + 1) * sizeof *files);
    if (!files) return NULL;
    m->files = files;
    char *copy = strdup(name);
    if (!copy) return NULL;
    files[m->nfiles++] = copy;
    return copy;
}

/* world_read_text's errors read "NAME:0:0: reason": the reason alone, for our own prefix. */
static const char *read_reason(const char *err, const char *name) {
    size_t n = strlen(name);
    if (strncmp(err, name, n) == 0 && strncmp(err + n, ":0:0: ", 6) == 0) return err + n + 6;
    return err;
}

char *tiled_read_map_text(const tiled_source *src, tiled_map *m, char *err, size_t err_size) {
    char why[512];
    char *text = world_read_text(src->dir_fd, src->path, src->no_follow, why, sizeof why);
    if (!text) {
        snprintf(err, err_size, "%s:0: %s", src->path, read_reason(why, src->path));
        return NULL;
    }
    const char *name = tiled_pool_file(m, src->path);
    if (!name) {
        free(text);
        snprintf(err, err_size, "%s:0: out of memory", src->path);
        return NULL;
    }
    m->place.file = name;
    m->place.line = 0;
    return text;
}

bool tiled_resolve_path(const char *base_dir, const char *ref, char *out, size_t out_size) {
    if (!ref || !ref[0] || ref[0] == '/' || out_size == 0) return false;
    char joined[2 * TILED_PATH_MAX + 2];
    int n = snprintf(joined, sizeof joined, "%s%s%s", base_dir ? base_dir : "",
                     base_dir && base_dir[0] ? "/" : "", ref);
    if (n < 0 || (size_t)n >= sizeof joined) return false;
    /* components pushed onto out, ".." pops one; nothing to pop means it climbs out */
    size_t len = 0;
    out[0] = '\0';
    for (char *save = NULL, *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0) continue;
        if (strcmp(c, "..") == 0) {
            if (len == 0) return false;
            char *slash = strrchr(out, '/');
            len = slash ? (size_t)(slash - out) : 0;
            out[len] = '\0';
            continue;
        }
        size_t cl = strlen(c);
        if (len + (len ? 1 : 0) + cl + 1 > out_size) return false;
        if (len) out[len++] = '/';
        memcpy(out + len, c, cl + 1);
        len += cl;
    }
    return len > 0;
}

/* The map's directory, opened from src->dir_fd (its own path is trusted as the map's is). */
static int open_map_dir(const tiled_source *src) {
    const char *slash = strrchr(src->path, '/');
    if (!slash) return openat(src->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char dir[TILED_PATH_MAX];
    size_t n = slash == src->path ? 1 : (size_t)(slash - src->path);
    if (n >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, src->path, n);
    dir[n] = '\0';
    return openat(src->dir_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

char *tiled_read_file(const tiled_source *src, const char *base_dir, const char *ref,
                      const char *what, tiled_map *m, tiled_place from, const char **file,
                      char *err, size_t err_size) {
    char path[TILED_PATH_MAX];
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        char reason_[TILED_PATH_MAX + 600];                                                        \
        snprintf(reason_, sizeof reason_, __VA_ARGS__);                                            \
        snprintf(err, err_size, "%s:%d: %s '%s': %s", from.file ? from.file : "?", from.line,      \
                 what, ref ? ref : "", reason_);                                                   \
        return NULL;                                                                               \
    } while (0)
    if (!ref || !ref[0]) FAIL("empty path");
    if (ref[0] == '/') FAIL("an absolute path (files must lie in the map's directory tree)");
    if (!tiled_resolve_path(base_dir, ref, path, sizeof path))
        FAIL("outside the map's directory tree (or too long)");
    if (m->nfiles >= TILED_MAX_FILES) FAIL("more than %d files in one map", TILED_MAX_FILES);
    int dir = open_map_dir(src);
    if (dir < 0) FAIL("cannot open the map's directory: %s", strerror(errno));
    /* every directory on the way with O_NOFOLLOW: a link anywhere could lead out of the tree */
    char *comp = path;
    for (char *slash; (slash = strchr(comp, '/')) != NULL; comp = slash + 1) {
        *slash = '\0';
        int next = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dir);
        if (next < 0) {
            FAIL("directory '%s': %s", comp,
                 e == ELOOP || e == ENOTDIR ? "a symbolic link or not a directory" : strerror(e));
        }
        *slash = '/';
        dir = next;
    }
    char why[512];
    char *text = world_read_text(dir, comp, true, why, sizeof why);
    close(dir);
    if (!text) FAIL("%s", read_reason(why, comp));
    const char *pooled = tiled_pool_file(m, path);
    if (!pooled) {
        free(text);
        FAIL("out of memory");
    }
    *file = pooled;
    return text;
#undef FAIL
}

/* world_read_text: a world file's bytes, read with the bounds every reader of world files keeps
 * (world_load.h). Apart from world_load.c because the Tiled parsers read their files through it
 * too: a leaf both sides use, so that neither depends on the other. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "world_load.h"

/* A world file larger than this is refused before reading (a bounded read). */
#define WORLD_LOAD_MAX_FILE_BYTES (64u * 1024u * 1024u)

char *world_read_text(int dir_fd, const char *path, bool no_follow, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, silently, before
     * fstat could tell us it is not a file. A regular file ignores the flag. */
    int fd = openat(dir_fd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0));
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (err && err_size)
            snprintf(err, err_size, "%s:0:0: cannot open: %s", path,
                     no_follow && errno == ELOOP ? "a symbolic link" : strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        if (err && err_size) {
            if (S_ISDIR(st.st_mode))
                snprintf(err, err_size, "%s:0:0: is a directory", path);
            else
                snprintf(err, err_size, "%s:0:0: not a regular file (%s)", path,
                         S_ISFIFO(st.st_mode)                         ? "a FIFO"
                         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                         : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                      : "unknown type");
        }
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        if (err && err_size)
            snprintf(err, err_size, "%s:0:0: cannot open: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    /* size first, so the buffer is exactly what the file needs (bounded) */
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    bool too_big = size > (long)WORLD_LOAD_MAX_FILE_BYTES;
    if (size < 0 || too_big || fseek(f, 0, SEEK_SET) != 0) size = 0;
    char *text = too_big ? NULL : malloc((size_t)size + 1);
    size_t n = text ? fread(text, 1, (size_t)size, f) : 0;
    bool read_error = ferror(f) != 0 || (text && n != (size_t)size);
    fclose(f);
    if (too_big) {
        if (err && err_size)
            snprintf(err, err_size, "%s:0:0: larger than %u bytes", path,
                     WORLD_LOAD_MAX_FILE_BYTES);
    } else if (!text) {
        if (err && err_size) snprintf(err, err_size, "%s:0:0: out of memory", path);
    } else if (read_error) {
        if (err && err_size) snprintf(err, err_size, "%s:0:0: read error", path);
    } else if (memchr(text, '\0', n)) {
        if (err && err_size) snprintf(err, err_size, "%s:0:0: contains a NUL byte", path);
    } else {
        text[n] = '\0';
        return text;
    }
    free(text);
    return NULL;
}

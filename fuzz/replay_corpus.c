/* Replays a fuzz corpus through the fuzz target without libFuzzer: every regular file of each
 * directory argument (or each file argument) is fed once to LLVMFuzzerTestOneInput, in name order.
 * Linked with fuzz_session.c into the normal builds, so every ctest run (Release and ASan) keeps
 * the committed seeds and every crash the fuzzer ever found (fuzz/corpus) passing. The target
 * aborts on a broken invariant; ASan/UBSan abort on memory errors and undefined behaviour.
 * Usage: replay_corpus DIR_OR_FILE...   Fails when nothing was replayed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole file; NULL on error. */
static uint8_t *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)len + 1u); /* + 1: a zero-length file still gets a buffer */
        if (data && fread(data, 1, (size_t)len, f) != (size_t)len) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    *size = len > 0 ? (size_t)len : 0u;
    return data;
}

static int replay_file(const char *path) {
    size_t size = 0;
    uint8_t *data = read_all(path, &size);
    if (!data) {
        fprintf(stderr, "replay_corpus: cannot read %s\n", path);
        return -1;
    }
    printf("replay %s (%zu bytes)\n", path, size);
    fflush(stdout); /* the name is out before a crash in the target */
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 1;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of dir, in name order; returns the count, or -1 on error. */
static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay_corpus: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? cap * 2u : 64u;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = -1;
                break;
            }
            names = grown;
        }
        size_t len = strlen(dir) + 1u + strlen(e->d_name) + 1u;
        names[count] = malloc(len);
        if (!names[count]) {
            rc = -1;
            break;
        }
        snprintf(names[count++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (count > 1) qsort(names, count, sizeof *names, cmp_names);
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (rc >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            int r = replay_file(names[i]);
            rc = r < 0 ? -1 : rc + r;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay_corpus: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        int n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
        if (n < 0) return 1;
        total += n;
    }
    printf("%d inputs replayed\n", total);
    if (total == 0) {
        fprintf(stderr, "replay_corpus: no inputs: an empty corpus checks nothing\n");
        return 1;
    }
    return 0;
}

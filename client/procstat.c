#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "procstat.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cc_pin_cpu(uint32_t cpu, char *why, size_t why_size) {
    if (cpu >= CPU_SETSIZE) {
        snprintf(why, why_size, "CPU %u is past the largest this build knows (%d)", cpu,
                 CPU_SETSIZE - 1);
        return false;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    /* pid 0: this thread; threads started later inherit its mask, so pinning before the workers
     * start pins them all (and libuv's pool, started lazily) without a call per thread. */
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        snprintf(why, why_size, "cannot pin to CPU %u: %s", cpu, strerror(errno));
        return false;
    }
    return true;
}

bool cc_proc_stat_cpu_ticks(const char *stat, uint64_t *utime, uint64_t *stime) {
    const char *p = strrchr(stat, ')');
    if (!p) return false;
    p++;
    /* After the ')': field 3 (state) is the first; utime is field 14, stime 15. */
    for (int field = 3; field <= 15; field++) {
        while (*p == ' ')
            p++;
        if (!*p) return false;
        if (field >= 14) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p || errno) return false;
            *(field == 14 ? utime : stime) = v;
            p = end;
            continue;
        }
        while (*p && *p != ' ')
            p++;
    }
    return true;
}

bool cc_proc_cpu_s(uint32_t pid, double *cpu_s) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    uint64_t ut, st;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || !cc_proc_stat_cpu_ticks(buf, &ut, &st)) return false;
    *cpu_s = (double)(ut + st) / (double)hz;
    return true;
}

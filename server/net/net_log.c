#include "net_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static net_log_level log_min_level = NET_LOG_INFO; /* process-wide: set once from the config */

void net_log_set_level(net_log_level level) { log_min_level = level; }
bool net_log_enabled(net_log_level level) { return level >= log_min_level; }

static void log_line(net_log_level level, const char *event, uint32_t client, const char *addr,
                     const char *kv, const char *msg) {
    char line[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s event=%s",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L, net_log_level_str(level), event);
    if (client && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " client=%u", client);
    if (addr && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " addr=%s", addr);
    if (kv && n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, " %s", kv);
    size_t pos = n < (int)sizeof line ? (size_t)n : sizeof line - 1;
    const char *prefix = " msg=\"";
    for (const char *p = prefix; *p && pos < sizeof line - 4; p++)
        line[pos++] = *p;
    for (const char *p = msg; *p && pos < sizeof line - 4; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\') {
            line[pos++] = '\\';
            line[pos++] = (char)ch;
        } else {
            line[pos++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
        }
    }
    line[pos++] = '"';
    line[pos++] = '\n';
    /* One fwrite per line so lines from one process never interleave mid-line. */
    fwrite(line, 1, pos, stderr);
    fflush(stderr);
}

void net_log(net_log_level level, const char *event, uint32_t client, const char *addr,
             const char *fmt, ...) {
    if (!net_log_enabled(level)) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line(level, event, client, addr, NULL, msg);
}

void net_log_kv(net_log_level level, const char *event, const char *kv, const char *fmt, ...) {
    /* Not filtered by level: tools read these lines (event=listening gives the bound ports even
     * under --log-level warn). */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line(level, event, 0, NULL, kv, msg);
}

#include "net_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 1024 /* longest line, newline included */

static net_log_level log_min_level = NET_LOG_INFO; /* process-wide: set once from the config */

void net_log_set_level(net_log_level level) { log_min_level = level; }
bool net_log_enabled(net_log_level level) { return level >= log_min_level; }

/* The asynchronous sink (net_log_start). The loop thread appends whole lines to a ring under the
 * mutex and never does I/O; the writer thread takes the oldest run, writes it to fd 2 with the
 * mutex released, and only then frees the space. A line that does not fit is dropped and counted.
 * The lock is held for a memcpy on one side and index updates on the other, never across a
 * write, so a stalled reader of stderr stalls only the writer thread. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;       /* writer: there is data, or stop */
    pthread_cond_t drained;    /* net_log_stop: the ring emptied */
    pthread_t thread;          /* the writer */
    bool running;              /* the writer thread exists: lines go to the ring */
    bool stopping;             /* net_log_stop: write what is left and exit */
    char *ring;                /* cap bytes */
    size_t cap;                /* ring size */
    size_t head;               /* next byte the loop writes (mod cap) */
    size_t len;                /* bytes queued: the oldest is at head - len */
    uint64_t dropped;          /* lines dropped since the start, for /metrics */
    uint64_t dropped_reported; /* of those, already told in an event=log_dropped line */
} sink = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .drained = PTHREAD_COND_INITIALIZER};

/* Blocking write of all n bytes to stderr's descriptor; gives up on an error other than EINTR
 * (a closed pipe: the lines are lost, as they were with fwrite). */
static void write_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* One line into line[LOG_LINE_MAX]; returns its length, newline included. */
static size_t format_line(char *line, net_log_level level, const char *event, uint32_t client,
                          const char *addr, const char *kv, const char *msg) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n =
        snprintf(line, LOG_LINE_MAX, "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s event=%s",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000000L, net_log_level_str(level), event);
    if (client && n < (int)LOG_LINE_MAX)
        n += snprintf(line + n, LOG_LINE_MAX - (size_t)n, " client=%u", client);
    if (addr && n < (int)LOG_LINE_MAX)
        n += snprintf(line + n, LOG_LINE_MAX - (size_t)n, " addr=%s", addr);
    if (kv && n < (int)LOG_LINE_MAX) n += snprintf(line + n, LOG_LINE_MAX - (size_t)n, " %s", kv);
    size_t pos = n < (int)LOG_LINE_MAX ? (size_t)n : LOG_LINE_MAX - 1;
    const char *prefix = " msg=\"";
    for (const char *p = prefix; *p && pos < LOG_LINE_MAX - 4; p++)
        line[pos++] = *p;
    for (const char *p = msg; *p && pos < LOG_LINE_MAX - 4; p++) {
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
    return pos;
}

static void log_line(net_log_level level, const char *event, uint32_t client, const char *addr,
                     const char *kv, const char *msg) {
    char line[LOG_LINE_MAX];
    size_t n = format_line(line, level, event, client, addr, kv, msg);
    pthread_mutex_lock(&sink.mu);
    if (!sink.running) {
        pthread_mutex_unlock(&sink.mu);
        /* before net_log_start or after net_log_stop: synchronous, one write per line so lines
         * never interleave mid-line */
        write_all(line, n);
        return;
    }
    if (sink.cap - sink.len < n) {
        sink.dropped++;
    } else {
        size_t first = sink.cap - sink.head < n ? sink.cap - sink.head : n;
        memcpy(sink.ring + sink.head, line, first);
        memcpy(sink.ring, line + first, n - first);
        sink.head = (sink.head + n) % sink.cap;
        sink.len += n;
        pthread_cond_signal(&sink.wake);
    }
    pthread_mutex_unlock(&sink.mu);
}

static void *writer_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&sink.mu);
    for (;;) {
        while (sink.len == 0 && !sink.stopping)
            pthread_cond_wait(&sink.wake, &sink.mu);
        if (sink.len == 0) break; /* stopping, and all written */
        /* the oldest contiguous run; its space stays taken until it is written */
        size_t tail = (sink.head + sink.cap - sink.len) % sink.cap;
        size_t n = sink.cap - tail < sink.len ? sink.cap - tail : sink.len;
        pthread_mutex_unlock(&sink.mu);
        write_all(sink.ring + tail, n);
        pthread_mutex_lock(&sink.mu);
        sink.len -= n;
        if (sink.len > 0) continue;
        /* the reader caught up: say how many lines it missed, once */
        uint64_t missed = sink.dropped - sink.dropped_reported;
        sink.dropped_reported = sink.dropped;
        pthread_cond_broadcast(&sink.drained);
        if (missed) {
            pthread_mutex_unlock(&sink.mu);
            char line[LOG_LINE_MAX], msg[200];
            snprintf(msg, sizeof msg,
                     "%llu log lines dropped: stderr was not read fast enough "
                     "(--log-buffer-bytes %zu)",
                     (unsigned long long)missed, sink.cap);
            write_all(line, format_line(line, NET_LOG_WARN, "log_dropped", 0, NULL, NULL, msg));
            pthread_mutex_lock(&sink.mu);
        }
    }
    pthread_mutex_unlock(&sink.mu);
    return NULL;
}

bool net_log_start(size_t buffer_bytes) {
    if (buffer_bytes < LOG_LINE_MAX) buffer_bytes = LOG_LINE_MAX;
    char *ring = malloc(buffer_bytes);
    if (!ring) return false;
    pthread_mutex_lock(&sink.mu);
    sink.ring = ring;
    sink.cap = buffer_bytes;
    sink.head = sink.len = 0;
    sink.stopping = false;
    int rc = pthread_create(&sink.thread, NULL, writer_main, NULL);
    sink.running = rc == 0;
    if (rc != 0) sink.ring = NULL;
    pthread_mutex_unlock(&sink.mu);
    if (rc != 0) free(ring);
    return rc == 0;
}

bool net_log_stop(uint32_t timeout_ms) {
    pthread_mutex_lock(&sink.mu);
    if (!sink.running) {
        pthread_mutex_unlock(&sink.mu);
        return true;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000u);
    until.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (sink.len > 0)
        if (pthread_cond_timedwait(&sink.drained, &sink.mu, &until) == ETIMEDOUT) break;
    bool flushed = sink.len == 0;
    sink.stopping = true;
    sink.running = false; /* later lines are written synchronously */
    pthread_cond_signal(&sink.wake);
    pthread_mutex_unlock(&sink.mu);
    if (!flushed) {
        /* the writer is stuck in write(): leave it and its ring (still reachable from `sink`) to
         * the process exit rather than wait without bound */
        pthread_detach(sink.thread);
        return false;
    }
    pthread_join(sink.thread, NULL);
    free(sink.ring);
    sink.ring = NULL;
    return true;
}

uint64_t net_log_dropped_total(void) {
    pthread_mutex_lock(&sink.mu);
    uint64_t n = sink.dropped;
    pthread_mutex_unlock(&sink.mu);
    return n;
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

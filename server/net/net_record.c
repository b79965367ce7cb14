/* net_record: a room's recording (see net_record.h).
 *
 * The recorder is a queue of files, oldest first, and one file operation at a time: pump() looks
 * at the state after every event (a tick, a callback, a request) and starts the next operation.
 * The oldest file is served first (its open, its writes, once finished its last bytes and its
 * close), then the deletions the keep scan decided. Only the newest file may be unfinished: its
 * journal is srv->journal. */
#include "net_record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide_assert.h"
#include "journal.h"
#include "net_log.h"
#include "net_session.h"

#define NET_RECORD_FILES 4       /* files in the queue at once (one recording, the finishing) */
#define NET_RECORD_WAITERS 16    /* StartRecordings waiting for their answer */
#define NET_RECORD_OPEN_TRIES 16 /* file numbers tried when the next one exists already */

typedef struct rec_file {
    journal *j;                     /* its journal; NULL once the recording was dropped */
    char name[NET_RECORD_FILE_MAX]; /* DIR-relative */
    uint64_t seq;                   /* its number */
    uint64_t start_tick;            /* the tick its journal starts at */
    uv_file fd;                     /* -1 until opened */
    bool opened;                    /* the open succeeded: fd is the file's */
    bool finished;                  /* no more records: write the rest, then close */
    uint32_t open_tries;            /* opens that found the file there already */
    uint64_t written;               /* bytes written to the file */
    journal_buf out;                /* the bytes being written (taken from j) */
    size_t out_off;                 /* of out, written so far */
} rec_file;

typedef enum rec_op {
    OP_NONE = 0,  /* idle */
    OP_SCAN_SEQ,  /* the directory read for the room's highest file number */
    OP_OPEN,      /* files[0] being created */
    OP_WRITE,     /* files[0].out being written */
    OP_CLOSE,     /* files[0] being closed */
    OP_SCAN_KEEP, /* the directory read for the room's files beyond --record-keep */
    OP_UNLINK,    /* one of those being deleted */
} rec_op;

typedef struct rec_waiter {
    uint32_t client_id; /* who asked (StartRecording) */
    uint32_t rid;       /* its request_id */
} rec_waiter;

struct net_recorder {
    uv_loop_t *loop;         /* the room's */
    net_server *srv;         /* the room's: its world, metrics and journal pointer */
    net_recording_hook hook; /* srv->recording */
    char room[NET_ROOM_NAME_MAX + 1];
    char prefix[3 * NET_ROOM_NAME_MAX + 1]; /* the room's name escaped (net_record_escape) */
    char dir[sizeof(((net_config *)0)->record_dir)];
    uint32_t hash_every;    /* --record-hash-every */
    uint32_t history_ticks; /* the room's query history, as the server set it (net_config) */
    size_t max_bytes;       /* --record-max-bytes */
    uint32_t keep;          /* --record-keep */
    size_t buffer_bytes;    /* --record-buffer-bytes */
    size_t chunk;           /* pending bytes that make a write due */
    uint32_t flush_ticks;   /* ... or ticks since the last take */
    uv_fs_t req;            /* the operation in flight */
    rec_op op;              /* which (OP_NONE: none) */
    char path[sizeof(((net_config *)0)->record_dir) + NET_RECORD_FILE_MAX + 2]; /* of req */
    rec_file files[NET_RECORD_FILES]; /* the queue, oldest first */
    unsigned nfiles;                  /* entries in files */
    bool armed;        /* a journal starts at the next step end (asked for, or a rotation) */
    bool seq_known;    /* next_seq was read from the directory */
    uint64_t next_seq; /* the number of the room's next file */
    bool keep_due;     /* a file was opened: the room's oldest beyond --record-keep go */
    char (*doomed)[NET_RECORD_FILE_MAX];    /* those, to delete in order */
    size_t ndoomed, doomed_at;              /* entries in doomed, deleted so far */
    bool flush_due;                         /* the unfinished file's bytes are to be taken */
    uint32_t ticks_since_take;              /* of the unfinished file */
    rec_waiter waiters[NET_RECORD_WAITERS]; /* StartRecordings answered once the file is open */
    unsigned nwaiters;                      /* entries in waiters */
    net_recording_info last;                /* the last file's, answered when nothing records */
    bool closing;                           /* net_record_close: finish, write out, close */
    void (*drained)(void *ctx);             /* then this, once */
    void *drained_ctx;
};

static void pump(net_recorder *r);

/* ---- Names --------------------------------------------------------------------------------- */

bool net_record_escape(const char *room, char *out, size_t out_size) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)room; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';
        if (o + (plain ? 1 : 3) >= out_size) return false;
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '~';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o == 0 || o >= out_size) return false;
    out[o] = '\0';
    return true;
}

bool net_record_parse_name(const char *name, uint64_t *seq, size_t *room_len) {
    size_t n = strlen(name), suffix = strlen(NET_RECORD_SUFFIX);
    if (n >= NET_RECORD_FILE_MAX || n <= suffix || strcmp(name + n - suffix, NET_RECORD_SUFFIX))
        return false;
    const char *dot = strchr(name, '.');
    size_t room = (size_t)(dot - name), digits = n - suffix - room - 1;
    if (room == 0 || digits < 6 || digits > 19) return false;
    for (size_t i = 0; i < room; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (c == '~') /* an escape: two lower-case hex digits */
            ok = i + 2 < room && strchr("0123456789abcdef", name[i + 1]) && name[i + 1] &&
                 strchr("0123456789abcdef", name[i + 2]) && name[i + 2];
        if (!ok) return false;
        if (c == '~') i += 2;
    }
    uint64_t v = 0;
    for (size_t i = room + 1; i < room + 1 + digits; i++) {
        if (name[i] < '0' || name[i] > '9') return false;
        v = v * 10u + (uint64_t)(name[i] - '0');
    }
    *seq = v;
    *room_len = room;
    return true;
}

/* The sequence number of name when it is one of this room's files. */
static bool own_file(const net_recorder *r, const char *name, uint64_t *seq) {
    size_t room_len;
    return net_record_parse_name(name, seq, &room_len) && room_len == strlen(r->prefix) &&
           memcmp(name, r->prefix, room_len) == 0;
}

static void name_file(const net_recorder *r, rec_file *f) {
    snprintf(f->name, sizeof f->name, "%s.%06" PRIu64 "%s", r->prefix, f->seq, NET_RECORD_SUFFIX);
}

static const char *path_of(net_recorder *r, const char *name) {
    snprintf(r->path, sizeof r->path, "%s/%s", r->dir, name);
    return r->path;
}

/* ---- What a RecordingInfo says --------------------------------------------------------------- */

/* The file still being recorded into, if any: the newest, unfinished. */
static rec_file *current(net_recorder *r) {
    rec_file *f = r->nfiles ? &r->files[r->nfiles - 1] : NULL;
    return f && !f->finished ? f : NULL;
}

static void info_of_file(const rec_file *f, bool active, net_recording_info *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", f->name);
    out->start_tick = f->start_tick;
    out->bytes = f->written;
    if (f->j) {
        journal_stats st;
        journal_get_stats(f->j, &st);
        out->bytes = st.bytes;
    }
    out->active = active;
}

static void info_of(net_recorder *r, net_recording_info *out) {
    rec_file *f = current(r);
    if (f) {
        info_of_file(f, true, out);
    } else {
        *out = r->last;
        out->active = false;
    }
}

/* The StartRecordings waiting for the file to open: answered with where it stands now. */
static void answer_waiters(net_recorder *r) {
    net_recording_info info;
    info_of(r, &info);
    for (unsigned i = 0; i < r->nwaiters; i++)
        net_session_recording_reply(r->srv, r->waiters[i].client_id, r->waiters[i].rid, &info);
    r->nwaiters = 0;
}

/* ---- Starting, finishing, dropping ------------------------------------------------------------
 */

static uint64_t unix_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The journal of the current file ends here: its last bytes are written, then it is closed. */
static void finish_current(net_recorder *r, const char *why) {
    rec_file *f = current(r);
    if (!f) return;
    journal_finish(f->j);
    f->finished = true;
    r->srv->journal = NULL;
    r->srv->metrics.recordings_active = 0;
    info_of_file(f, false, &r->last);
    net_log(NET_LOG_INFO, "recording_finished", 0, NULL,
            "room=%s file=%s start_tick=%" PRIu64 " end_tick=%" PRIu64 " bytes=%" PRIu64 " why=%s",
            r->room, f->name, f->start_tick, world_tick(r->srv->world), r->last.bytes, why);
}

/* A journal starts now, right after a step: the world's image, and from now on every call the
 * room's server makes (srv->journal). Its file is created next (pump). */
static void start_journal(net_recorder *r) {
    if (!r->armed || !r->seq_known || r->closing || current(r) || r->nfiles == NET_RECORD_FILES)
        return;
    r->armed = false;
    journal_meta meta = {.unix_ms = unix_ms(),
                         .hash_every = r->hash_every,
                         .history_ticks = r->history_ticks,
                         .events = true, /* every room's server turns them on */
                         .daemon_version = COLLIDE_VERSION,
                         .room = r->room,
                         .world_name = ""};
    journal *j = journal_start(r->srv->world, &meta, r->buffer_bytes);
    if (!j) {
        r->srv->metrics.recordings_dropped_total[NET_RECORD_OPEN_FAILED]++;
        net_log(NET_LOG_WARN, "recording_dropped", 0, NULL,
                "room=%s reason=open_failed: out of memory for the journal", r->room);
        answer_waiters(r);
        return;
    }
    rec_file *f = &r->files[r->nfiles++];
    memset(f, 0, sizeof *f);
    f->j = j;
    f->fd = -1;
    f->seq = r->next_seq++;
    f->start_tick = world_tick(r->srv->world);
    name_file(r, f);
    r->srv->journal = j;
    r->srv->metrics.recordings_active = 1;
    r->flush_due = true; /* the image goes out at once */
    r->ticks_since_take = 0;
}

/* The drop: every file's journal goes (nothing more is appended or taken), each file is closed as
 * it stands once its write in flight is back. Off until the next StartRecording. */
static void drop(net_recorder *r, net_record_drop_reason why, const char *file,
                 const char *detail) {
    rec_file *cur = current(r);
    if (cur) info_of_file(cur, false, &r->last);
    /* a file that was never created is named to nobody (a waiting StartRecording is answered
     * with no file) */
    if (why == NET_RECORD_OPEN_FAILED) memset(&r->last, 0, sizeof r->last);
    for (unsigned i = 0; i < r->nfiles; i++) {
        rec_file *f = &r->files[i];
        journal_free(f->j);
        f->j = NULL;
        f->finished = true;
    }
    r->srv->journal = NULL;
    r->armed = false;
    r->srv->metrics.recordings_active = 0;
    r->srv->metrics.recordings_dropped_total[why]++;
    net_log(NET_LOG_WARN, "recording_dropped", 0, NULL,
            "room=%s file=%s reason=%s: %s; the room goes on unrecorded until StartRecording",
            r->room, file && file[0] ? file : "-", net_record_drop_reason_str(why), detail);
    answer_waiters(r);
}

/* Rotation: the current file reached --record-max-bytes (and its records outweigh its image). */
static bool rotation_due(const net_recorder *r, const rec_file *f) {
    journal_stats st;
    journal_get_stats(f->j, &st);
    return st.bytes >= r->max_bytes && st.bytes - st.header_bytes >= st.header_bytes;
}

void net_record_tick(net_recorder *r, unsigned steps) {
    if (!r || r->closing) return;
    rec_file *f = current(r);
    if (f && journal_overflowed(f->j)) {
        char detail[128];
        snprintf(detail, sizeof detail,
                 "more than %zu bytes waited for the disk (--record-buffer-bytes)",
                 r->buffer_bytes);
        drop(r, NET_RECORD_BUFFER_FULL, f->name, detail);
        f = NULL;
    }
    if (steps > 0) {
        if (f && rotation_due(r, f) && r->nfiles == NET_RECORD_FILES) {
            /* no room to queue one more file: rather than leave ticks out between two files,
             * the recording goes, as when one file's bytes outgrow the buffer */
            drop(r, NET_RECORD_BUFFER_FULL, f->name,
                 "a rotation found the files before it still waiting for the disk");
            f = NULL;
        }
        if (f && rotation_due(r, f)) {
            finish_current(r, "rotated");
            r->armed = true;
            f = NULL;
        }
        start_journal(r);
        f = current(r);
    }
    r->ticks_since_take += steps;
    if (f && (journal_pending(f->j) >= r->chunk || r->ticks_since_take >= r->flush_ticks))
        r->flush_due = true;
    pump(r);
}

/* ---- The file operations ------------------------------------------------------------------- */

static void on_fs(uv_fs_t *req);

static void drop_queue_head(net_recorder *r) {
    rec_file *f = &r->files[0];
    if (f->out.data) free(f->out.data);
    journal_free(f->j);
    memmove(&r->files[0], &r->files[1], (r->nfiles - 1) * sizeof r->files[0]);
    r->nfiles--;
}

static void start_op(net_recorder *r, rec_op op, int rc) {
    r->op = op;
    if (rc < 0) { /* refused at once: the callback will not come; handled as if it had */
        r->req.result = rc;
        r->req.data = r;
        on_fs(&r->req);
    }
}

static void write_out(net_recorder *r, rec_file *f) {
    uv_buf_t b = uv_buf_init((char *)f->out.data + f->out_off, (unsigned)(f->out.len - f->out_off));
    start_op(r, OP_WRITE, uv_fs_write(r->loop, &r->req, f->fd, &b, 1, (int64_t)f->written, on_fs));
}

/* The written buffer goes back to its journal for the next take (or is freed, the journal gone). */
static void give_back(rec_file *f) {
    if (f->j)
        journal_recycle(f->j, f->out);
    else
        free(f->out.data);
    f->out = (journal_buf){0};
    f->out_off = 0;
}

/* The oldest file's next operation; false when it has none now. */
static bool pump_file(net_recorder *r) {
    rec_file *f = &r->files[0];
    if (!f->opened) {
        if (!f->j) { /* dropped before it was ever created */
            drop_queue_head(r);
            return r->nfiles > 0 && pump_file(r);
        }
        start_op(r, OP_OPEN,
                 uv_fs_open(r->loop, &r->req, path_of(r, f->name),
                            O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644, on_fs));
        return true;
    }
    if (f->out.data && f->out_off < f->out.len) {
        write_out(r, f);
        return true;
    }
    if (f->out.data || f->out.cap) give_back(f);
    bool newest = r->nfiles == 1;
    if (f->j && (f->finished || (newest && r->flush_due))) {
        if (!f->finished) {
            r->flush_due = false;
            r->ticks_since_take = 0;
        }
        f->out = journal_take(f->j);
        if (f->out.len > 0) {
            write_out(r, f);
            return true;
        }
        give_back(f);
    }
    if (f->finished) {
        start_op(r, OP_CLOSE, uv_fs_close(r->loop, &r->req, f->fd, on_fs));
        return true;
    }
    return false;
}

static void pump(net_recorder *r) {
    if (r->op != OP_NONE) return;
    if (!r->seq_known && r->armed && !r->closing) {
        start_op(r, OP_SCAN_SEQ, uv_fs_scandir(r->loop, &r->req, r->dir, 0, on_fs));
        return;
    }
    if (r->nfiles > 0 && pump_file(r)) return;
    if (r->doomed_at < r->ndoomed) {
        start_op(r, OP_UNLINK,
                 uv_fs_unlink(r->loop, &r->req, path_of(r, r->doomed[r->doomed_at]), on_fs));
        return;
    }
    if (r->keep_due) { /* a closing room's too: its files stay within --record-keep */
        r->keep_due = false;
        start_op(r, OP_SCAN_KEEP, uv_fs_scandir(r->loop, &r->req, r->dir, 0, on_fs));
        return;
    }
}

/* ---- Their callbacks ------------------------------------------------------------------------ */

static void scanned_seq(net_recorder *r, ssize_t result) {
    if (result < 0) {
        char detail[320];
        snprintf(detail, sizeof detail, "cannot read --record-dir %.200s: %s", r->dir,
                 uv_strerror((int)result));
        drop(r, NET_RECORD_OPEN_FAILED, NULL, detail);
        return;
    }
    uint64_t top = 0, seq;
    uv_dirent_t e;
    while (uv_fs_scandir_next(&r->req, &e) != UV_EOF)
        if (own_file(r, e.name, &seq) && seq > top) top = seq;
    r->next_seq = top + 1;
    r->seq_known = true;
}

static void opened(net_recorder *r, ssize_t result) {
    rec_file *f = &r->files[0];
    if (result == UV_EEXIST && f->j && ++f->open_tries < NET_RECORD_OPEN_TRIES) {
        /* another writer's file (a daemon sharing the directory): the next number */
        f->seq = r->next_seq++;
        name_file(r, f);
        return;
    }
    if (result < 0) {
        if (f->j) {
            char detail[320];
            snprintf(detail, sizeof detail, "cannot create it in %.200s: %s", r->dir,
                     uv_strerror((int)result));
            char name[NET_RECORD_FILE_MAX];
            snprintf(name, sizeof name, "%s", f->name);
            drop(r, NET_RECORD_OPEN_FAILED, name, detail);
        }
        drop_queue_head(r);
        return;
    }
    f->fd = (uv_file)result;
    f->opened = true;
    r->keep_due = true;
    if (f->j)
        net_log(NET_LOG_INFO, "recording_started", 0, NULL, "room=%s file=%s start_tick=%" PRIu64,
                r->room, f->name, f->start_tick);
    if (current(r) == f) answer_waiters(r);
}

static void wrote(net_recorder *r, ssize_t result) {
    rec_file *f = &r->files[0];
    if (result <= 0) {
        int e = result == 0 ? UV_EIO : (int)result;
        f->out_off = f->out.len; /* abandoned with the file */
        if (f->j) {
            char detail[320];
            snprintf(detail, sizeof detail, "write at byte %" PRIu64 ": %s", f->written,
                     uv_strerror(e));
            char name[NET_RECORD_FILE_MAX];
            snprintf(name, sizeof name, "%s", f->name);
            drop(r, e == UV_ENOSPC || e == -EDQUOT ? NET_RECORD_DISK_FULL : NET_RECORD_WRITE_ERROR,
                 name, detail);
        }
        return;
    }
    f->written += (uint64_t)result;
    f->out_off += (size_t)result;
    r->srv->metrics.record_bytes_total += (uint64_t)result;
}

static void closed(net_recorder *r, ssize_t result) {
    rec_file *f = &r->files[0];
    if (result < 0)
        net_log(NET_LOG_WARN, "recording_close_error", 0, NULL, "room=%s file=%s: %s", r->room,
                f->name, uv_strerror((int)result));
    if (!f->j && r->last.file[0] && strcmp(r->last.file, f->name) == 0) r->last.bytes = f->written;
    drop_queue_head(r);
}

static int by_seq(const void *a, const void *b) {
    uint64_t x = 0, y = 0;
    size_t n;
    net_record_parse_name(a, &x, &n);
    net_record_parse_name(b, &y, &n);
    return x < y ? -1 : x > y;
}

/* The room's files, oldest first: those beyond --record-keep are deleted, oldest first. */
static void scanned_keep(net_recorder *r, ssize_t result) {
    free(r->doomed);
    r->doomed = NULL;
    r->ndoomed = r->doomed_at = 0;
    if (result < 0) {
        net_log(NET_LOG_WARN, "recording_keep_error", 0, NULL, "room=%s: cannot read %s: %s",
                r->room, r->dir, uv_strerror((int)result));
        return;
    }
    size_t n = 0, cap = 0;
    char(*names)[NET_RECORD_FILE_MAX] = NULL;
    uv_dirent_t e;
    uint64_t seq;
    while (uv_fs_scandir_next(&r->req, &e) != UV_EOF) {
        if (!own_file(r, e.name, &seq)) continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 16;
            char(*more)[NET_RECORD_FILE_MAX] = realloc(names, c * sizeof *names);
            if (!more) break; /* out of memory: fewer go this time */
            names = more;
            cap = c;
        }
        snprintf(names[n++], NET_RECORD_FILE_MAX, "%s", e.name);
    }
    if (n <= r->keep) {
        free(names);
        return;
    }
    qsort(names, n, sizeof *names, by_seq);
    r->doomed = names;
    r->ndoomed = n - r->keep; /* the oldest */
}

static void unlinked(net_recorder *r, ssize_t result) {
    const char *name = r->doomed[r->doomed_at++];
    if (result < 0 && result != UV_ENOENT)
        net_log(NET_LOG_WARN, "recording_keep_error", 0, NULL, "room=%s: cannot delete %s: %s",
                r->room, name, uv_strerror((int)result));
    else
        net_log(NET_LOG_INFO, "recording_deleted", 0, NULL, "room=%s file=%s keep=%u", r->room,
                name, r->keep);
    if (r->doomed_at == r->ndoomed) {
        free(r->doomed);
        r->doomed = NULL;
        r->ndoomed = r->doomed_at = 0;
    }
}

static void on_fs(uv_fs_t *req) {
    net_recorder *r = req->data;
    rec_op op = r->op;
    ssize_t result = req->result;
    r->op = OP_NONE;
    switch (op) {
    case OP_SCAN_SEQ:
        scanned_seq(r, result);
        break;
    case OP_OPEN:
        opened(r, result);
        break;
    case OP_WRITE:
        wrote(r, result);
        break;
    case OP_CLOSE:
        closed(r, result);
        break;
    case OP_SCAN_KEEP:
        scanned_keep(r, result);
        break;
    case OP_UNLINK:
        unlinked(r, result);
        break;
    case OP_NONE:
        break;
    }
    uv_fs_req_cleanup(req);
    req->data = r;
    pump(r);
    if (r->op == OP_NONE && r->closing && r->nfiles == 0 && r->drained) {
        void (*drained)(void *) = r->drained;
        r->drained = NULL;
        drained(r->drained_ctx);
    }
}

/* ---- Requests, life ------------------------------------------------------------------------- */

static bool on_request(void *ctx, bool start, uint32_t client_id, uint32_t rid,
                       net_recording_info *out) {
    net_recorder *r = ctx;
    rec_file *f = current(r);
    if (start) {
        /* recording (its file open): its info, no restart; closing: the room is going */
        if ((f && f->opened) || r->closing || r->nwaiters == NET_RECORD_WAITERS) {
            info_of(r, out);
            return true;
        }
        r->waiters[r->nwaiters++] = (rec_waiter){client_id, rid};
        if (!f) r->armed = true; /* at the next step's end */
        pump(r);                 /* the directory scan, if the room never recorded */
        return false;
    }
    r->armed = false;
    finish_current(r, "stopped");
    info_of(r, out);
    answer_waiters(r); /* a start asked for meanwhile is not coming */
    pump(r);
    return true;
}

net_recorder *net_record_create(uv_loop_t *loop, net_server *srv, const char *room,
                                const net_config *cfg) {
    if (!cfg->record_dir[0]) return NULL;
    net_recorder *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (!net_record_escape(room, r->prefix, sizeof r->prefix)) {
        free(r);
        return NULL;
    }
    r->loop = loop;
    r->srv = srv;
    snprintf(r->room, sizeof r->room, "%s", room);
    snprintf(r->dir, sizeof r->dir, "%s", cfg->record_dir);
    r->hash_every = cfg->record_hash_every;
    r->history_ticks = net_config_history_ticks(cfg);
    r->max_bytes = cfg->record_max_bytes;
    r->keep = cfg->record_keep ? cfg->record_keep : 1;
    r->buffer_bytes = cfg->record_buffer_bytes;
    r->chunk = r->buffer_bytes / 4 < NET_RECORD_CHUNK ? r->buffer_bytes / 4 : NET_RECORD_CHUNK;
    double ticks = (double)cfg->tick_rate_hz * NET_RECORD_FLUSH_MS / 1000.0;
    r->flush_ticks = ticks < 1.0 ? 1u : (uint32_t)ticks;
    r->req.data = r;
    r->hook = (net_recording_hook){on_request, r};
    srv->recording = &r->hook;
    r->armed = cfg->record_rooms;
    pump(r); /* --record-rooms all: the directory scan, so the first step can start it */
    return r;
}

void net_record_close(net_recorder *r, void (*drained)(void *ctx), void *ctx) {
    if (!r || r->closing) return;
    r->closing = true;
    r->armed = false;
    r->nwaiters = 0; /* their sessions are saying Goodbye */
    finish_current(r, "room closed");
    r->drained = drained;
    r->drained_ctx = ctx;
    pump(r);
}

bool net_record_drained(const net_recorder *r) {
    return !r || (r->op == OP_NONE && r->nfiles == 0);
}

void net_record_free(net_recorder *r) {
    if (!r) return;
    COLLIDE_ASSERT(net_record_drained(r));
    if (r->srv->recording == &r->hook) r->srv->recording = NULL;
    free(r->doomed);
    free(r);
}

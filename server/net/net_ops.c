#include "net_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "net_buf.h"
#include "net_conn.h"
#include "net_http.h"
#include "net_log.h"
#include "net_record.h"

#define NET_OPS_FILE_CHUNK 65536u /* a journal is sent in reads of this many bytes */
#define NET_OPS_LIST_MAX 10000u   /* GET /recordings lists at most this many files */
#define NET_OPS_RECORDINGS "/recordings"

struct net_ops_conn {
    uv_tcp_t tcp;                   /* the socket */
    uv_write_t wreq;                /* the response write */
    char req[NET_HTTP_MAX_REQUEST]; /* request bytes so far */
    size_t len;                     /* bytes in req */
    char head[256];                 /* response status line and headers */
    net_buf body;                   /* response body */
    uint64_t start_us;              /* accept time, for the timeout */
    struct sockaddr_storage peer;   /* remote address (port ignored), for the per-address cap */
    bool responded;                 /* a response was written: ignore further input */
    bool want_metrics;              /* GET /metrics or /rooms: waits for the next collection */
    bool rooms;                     /* ... for /rooms */
    bool in_collection;             /* ... and that collection is the one in flight */
    bool head_only;                 /* HEAD: the response without its body */
    bool closing;                   /* uv_close called */
    /* GET /recordings[/NAME] (--record-http): the listing made and the file read off the loop
     * (the thread pool), one operation at a time; the connection's memory outlives its socket
     * until that operation is back. */
    uv_fs_t fs;                       /* the file's open, fstat or read in flight */
    uv_work_t list;                   /* the listing in flight */
    bool io_busy;                     /* fs or list in flight */
    bool tcp_closed;                  /* the socket's close callback came while io_busy */
    uv_file fd;                       /* the file served, or -1 */
    uint64_t file_off;                /* bytes of it sent */
    uint64_t file_left;               /* bytes of it still to send (its size at the open) */
    uint8_t *chunk;                   /* NET_OPS_FILE_CHUNK bytes read, being written */
    net_ops *ops;                     /* owner */
    struct net_ops_conn *prev, *next; /* in ops->conns */
};

static void collect_start(net_ops *ops);

/* ---- One connection ---------------------------------------------------------------------- */

static void conn_free(net_ops_conn *hc) {
    net_ops *ops = hc->ops;
    if (hc->fd >= 0) {
        uv_fs_t req; /* a read-only file's close: nothing to wait for */
        uv_fs_close(ops->loop, &req, hc->fd, NULL);
        uv_fs_req_cleanup(&req);
    }
    free(hc->chunk);
    if (hc->prev)
        hc->prev->next = hc->next;
    else
        ops->conns = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    net_buf_free(&hc->body);
    free(hc);
    ops->count--;
    if (ops->on_freed) ops->on_freed(ops);
}

static void on_conn_closed(uv_handle_t *h) {
    net_ops_conn *hc = h->data;
    if (hc->io_busy)
        hc->tcp_closed = true; /* freed when its file operation is back */
    else
        conn_free(hc);
}

static void conn_close(net_ops_conn *hc) {
    if (hc->closing) return;
    hc->closing = true;
    hc->ops->open--;
    uv_close((uv_handle_t *)&hc->tcp, on_conn_closed);
}

static void on_conn_written(uv_write_t *req, int status) {
    (void)status;
    conn_close(req->data);
}

/* The recordings' responses may be read by a page of the WebSocket port (the viewer), another
 * origin: they say anyone may. */
#define NET_OPS_CORS "Access-Control-Allow-Origin: *\r\n"

static void conn_respond_with(net_ops_conn *hc, int code, const char *reason, const char *type,
                              const char *extra, bool head_only) {
    hc->responded = true;
    uv_read_stop((uv_stream_t *)&hc->tcp);
    int n = snprintf(hc->head, sizeof hc->head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: "
                     "close\r\n\r\n",
                     code, reason, type, hc->body.len, extra);
    uv_buf_t bufs[2] = {uv_buf_init(hc->head, (unsigned)n),
                        uv_buf_init((char *)hc->body.data, (unsigned)hc->body.len)};
    hc->wreq.data = hc;
    if (uv_write(&hc->wreq, (uv_stream_t *)&hc->tcp, bufs, head_only || hc->body.len == 0 ? 1 : 2,
                 on_conn_written) < 0)
        conn_close(hc);
}

static void conn_respond(net_ops_conn *hc, int code, const char *reason, const char *type,
                         bool head_only) {
    conn_respond_with(hc, code, reason, type, "", head_only);
}

static void conn_text(net_ops_conn *hc, int code, const char *reason, const char *text,
                      bool head_only) {
    hc->body.len = 0;
    if (!net_buf_append(&hc->body, text, strlen(text))) {
        conn_close(hc);
        return;
    }
    conn_respond(hc, code, reason, "text/plain; charset=utf-8", head_only);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    net_ops_conn *hc = h->data;
    buf->base = hc->req + hc->len;
    buf->len = sizeof hc->req - hc->len;
}

static bool recordings_route(net_ops_conn *hc, const char *path, bool head);

/* A whole GET or HEAD of `path`. */
static void conn_route(net_ops_conn *hc, const char *path, bool head) {
    if (recordings_route(hc, path, head)) return;
    if (strcmp(path, "/healthz") == 0) {
        if (*hc->ops->draining)
            conn_text(hc, 503, "Service Unavailable", "draining\n", head);
        else
            conn_text(hc, 200, "OK", "ok\n", head);
    } else if (strcmp(path, "/metrics") == 0 || strcmp(path, "/rooms") == 0) {
        /* The figures live on the rooms' threads: answered once each has sent a copy, taken
         * after this request arrived (what a client just saw counted is in it). */
        hc->want_metrics = true;
        hc->rooms = path[1] == 'r';
        hc->head_only = head;
        uv_read_stop((uv_stream_t *)&hc->tcp);
        collect_start(hc->ops);
    } else {
        conn_text(hc, 404, "Not Found", "not found\n", head);
    }
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    net_ops_conn *hc = s->data;
    if (hc->closing || hc->responded) return;
    if (nread < 0) {
        conn_close(hc);
        return;
    }
    hc->len += (size_t)nread;
    char path[NET_HTTP_MAX_PATH];
    int head = 0;
    switch (net_http_parse(hc->req, hc->len, path, sizeof path, &head)) {
    case NET_HTTP_NEED_MORE:
        return;
    case NET_HTTP_BAD:
        conn_text(hc, 400, "Bad Request", "bad request\n", false);
        return;
    case NET_HTTP_METHOD:
        conn_text(hc, 405, "Method Not Allowed", "method not allowed\n", false);
        return;
    case NET_HTTP_TOO_LARGE:
        conn_text(hc, 431, "Request Header Fields Too Large", "request too large\n", false);
        return;
    case NET_HTTP_GET:
        break;
    }
    conn_route(hc, path, head);
}

/* ---- GET /recordings[/NAME] (--record-http) --------------------------------------------------
 *
 * Off unless --record-http on (and --record-dir set): 404 then, as any unknown path. A name that
 * is not a recording's (net_record_parse_name: no '/', no "..", nothing but the naming) is 404
 * too, before the disk is asked anything. Nothing is read on the loop: the listing is made in the
 * thread pool (uv_queue_work), a file is opened, measured and read through uv_fs, a chunk at a
 * time, each written before the next is read, so a connection holds at most NET_OPS_FILE_CHUNK
 * bytes. A file is sent as long as it was when opened (a recording still growing is sent up to
 * there: it replays to its last whole tick). --http-timeout-ms counts from the last chunk written:
 * a reader that stalls is cut, one that keeps reading is not, whatever the file's size. */

/* An operation of the connection's is back: false when its socket closed meanwhile (it is freed
 * now and must not be touched). */
static bool io_back(net_ops_conn *hc) {
    hc->io_busy = false;
    if (!hc->tcp_closed) return true;
    conn_free(hc);
    return false;
}

typedef struct list_entry {
    char name[NET_RECORD_FILE_MAX];
    uint64_t bytes;
} list_entry;

static int entry_order(const void *a, const void *b) {
    return strcmp(((const list_entry *)a)->name, ((const list_entry *)b)->name);
}

/* In the thread pool: the recordings in --record-dir as a JSON array of {name, bytes}, by name.
 * The names need no escaping: the naming's bytes are [A-Za-z0-9_~.-]. */
static void list_work(uv_work_t *w) {
    net_ops_conn *hc = w->data;
    const char *dir = net_server_config(hc->ops->srv)->record_dir;
    hc->body.len = 0;
    DIR *d = opendir(dir);
    list_entry *e = malloc(NET_OPS_LIST_MAX * sizeof *e);
    size_t n = 0;
    struct dirent *de;
    while (d && e && n < NET_OPS_LIST_MAX && (de = readdir(d)) != NULL) {
        uint64_t seq;
        size_t room_len;
        struct stat st;
        if (!net_record_parse_name(de->d_name, &seq, &room_len) ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        snprintf(e[n].name, sizeof e[n].name, "%s", de->d_name);
        e[n++].bytes = (uint64_t)st.st_size;
    }
    if (d) closedir(d);
    bool ok = e != NULL && net_buf_append(&hc->body, "[", 1);
    if (ok) qsort(e, n, sizeof *e, entry_order);
    for (size_t i = 0; ok && i < n; i++) {
        char line[NET_RECORD_FILE_MAX + 64];
        int len = snprintf(line, sizeof line, "%s{\"name\": \"%s\", \"bytes\": %llu}",
                           i ? ", " : "", e[i].name, (unsigned long long)e[i].bytes);
        ok = net_buf_append(&hc->body, line, (size_t)len);
    }
    ok = ok && net_buf_append(&hc->body, "]\n", 2);
    if (!ok) hc->body.len = 0; /* out of memory: the connection is closed unanswered */
    free(e);
}

static void list_done(uv_work_t *w, int status) {
    net_ops_conn *hc = w->data;
    if (!io_back(hc) || hc->closing) return;
    if (status != 0 || hc->body.len == 0)
        conn_close(hc);
    else
        conn_respond_with(hc, 200, "OK", "application/json", NET_OPS_CORS, hc->head_only);
}

static void file_read(net_ops_conn *hc);

static void on_chunk_written(uv_write_t *req, int status) {
    net_ops_conn *hc = req->data;
    if (hc->closing) return; /* cut meanwhile (the timeout, the drain) */
    if (status < 0 || hc->file_left == 0) {
        conn_close(hc);
        return;
    }
    net_conn_set_clock(hc->ops->srv); /* progress: the timeout counts from here */
    hc->start_us = net_server_now_us(hc->ops->srv);
    file_read(hc);
}

static void on_file_read(uv_fs_t *req) {
    net_ops_conn *hc = req->data;
    ssize_t got = req->result;
    uv_fs_req_cleanup(req);
    if (!io_back(hc) || hc->closing) return;
    if (got <= 0) { /* an error, or the file shrank: the response is cut, the peer sees it short */
        conn_close(hc);
        return;
    }
    if ((uint64_t)got > hc->file_left) got = (ssize_t)hc->file_left;
    hc->file_off += (uint64_t)got;
    hc->file_left -= (uint64_t)got;
    uv_buf_t b = uv_buf_init((char *)hc->chunk, (unsigned)got);
    hc->wreq.data = hc;
    if (uv_write(&hc->wreq, (uv_stream_t *)&hc->tcp, &b, 1, on_chunk_written) < 0) conn_close(hc);
}

static void file_read(net_ops_conn *hc) {
    size_t want = hc->file_left < NET_OPS_FILE_CHUNK ? (size_t)hc->file_left : NET_OPS_FILE_CHUNK;
    uv_buf_t b = uv_buf_init((char *)hc->chunk, (unsigned)want);
    hc->fs.data = hc;
    hc->io_busy =
        uv_fs_read(hc->ops->loop, &hc->fs, hc->fd, &b, 1, (int64_t)hc->file_off, on_file_read) == 0;
    if (!hc->io_busy) conn_close(hc);
}

static void on_file_stat(uv_fs_t *req) {
    net_ops_conn *hc = req->data;
    int result = (int)req->result;
    uint64_t size = (uint64_t)req->statbuf.st_size;
    bool regular = (req->statbuf.st_mode & S_IFMT) == S_IFREG;
    uv_fs_req_cleanup(req);
    if (!io_back(hc) || hc->closing) return;
    if (result < 0) {
        conn_text(hc, 500, "Internal Server Error", "cannot read the file\n", hc->head_only);
        return;
    }
    if (!regular) { /* a FIFO, a directory under a recording's name: none */
        conn_text(hc, 404, "Not Found", "not found\n", hc->head_only);
        return;
    }
    hc->file_left = hc->head_only ? 0 : size;
    hc->chunk = hc->file_left ? malloc(NET_OPS_FILE_CHUNK) : NULL;
    if (hc->file_left && !hc->chunk) {
        conn_close(hc);
        return;
    }
    /* the head alone first: the body follows a chunk at a time (on_chunk_written) */
    hc->responded = true;
    uv_read_stop((uv_stream_t *)&hc->tcp);
    int n = snprintf(hc->head, sizeof hc->head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                     "%llu\r\n" NET_OPS_CORS "Connection: close\r\n\r\n",
                     (unsigned long long)size);
    uv_buf_t b = uv_buf_init(hc->head, (unsigned)n);
    hc->wreq.data = hc;
    if (uv_write(&hc->wreq, (uv_stream_t *)&hc->tcp, &b, 1, on_chunk_written) < 0) conn_close(hc);
}

static void on_file_open(uv_fs_t *req) {
    net_ops_conn *hc = req->data;
    int result = (int)req->result;
    uv_fs_req_cleanup(req);
    if (result >= 0) hc->fd = result; /* closed with the connection, whatever happens next */
    if (!io_back(hc) || hc->closing) return;
    if (result < 0) {
        bool none = result == UV_ENOENT || result == UV_ELOOP;
        conn_text(hc, none ? 404 : 500, none ? "Not Found" : "Internal Server Error",
                  none ? "not found\n" : "cannot open the file\n", hc->head_only);
        return;
    }
    hc->fs.data = hc;
    hc->io_busy = uv_fs_fstat(hc->ops->loop, &hc->fs, hc->fd, on_file_stat) == 0;
    if (!hc->io_busy) conn_close(hc);
}

/* GET /recordings and /recordings/NAME; false for any other path. */
static bool recordings_route(net_ops_conn *hc, const char *path, bool head) {
    size_t len = strlen(NET_OPS_RECORDINGS);
    if (strncmp(path, NET_OPS_RECORDINGS, len) != 0 || (path[len] != '\0' && path[len] != '/'))
        return false;
    const net_config *cfg = net_server_config(hc->ops->srv);
    const char *name = path[len] ? path + len + 1 : NULL;
    uint64_t seq;
    size_t room_len;
    if (!cfg->record_http || !cfg->record_dir[0] ||
        (name && !net_record_parse_name(name, &seq, &room_len))) {
        conn_text(hc, 404, "Not Found", "not found\n", head);
        return true;
    }
    hc->head_only = head;
    uv_read_stop((uv_stream_t *)&hc->tcp);
    if (!name) {
        hc->list.data = hc;
        hc->io_busy = uv_queue_work(hc->ops->loop, &hc->list, list_work, list_done) == 0;
    } else {
        char file[sizeof cfg->record_dir + NET_RECORD_FILE_MAX + 2];
        snprintf(file, sizeof file, "%s/%s", cfg->record_dir, name);
        hc->fs.data = hc;
        /* O_NOFOLLOW: a link dropped into the directory under a recording's name is no
         * recording (ELOOP: 404, as for any name that is not one) */
        hc->io_busy =
            uv_fs_open(hc->ops->loop, &hc->fs, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                       0, on_file_open) == 0;
    }
    if (!hc->io_busy) conn_close(hc);
    return true;
}

/* ---- /metrics and /rooms across threads -------------------------------------------------- */

/* The collected copy of room `id`; NULL when none (not built yet, or gone since). */
static const net_room_sample *sample_of(const net_hosts *hs, uint32_t thread, net_room_id id) {
    const net_host_sample *smp = thread < hs->threads ? hs->collected[thread] : NULL;
    for (size_t j = 0; smp && j < smp->count; j++)
        if (smp->rooms[j].id == id) return &smp->rooms[j];
    return NULL;
}

static int player_order(const void *pa, const void *pb) {
    const net_room_player *a = pa, *b = pb;
    int by_room = strcmp(a->room, b->room);
    if (by_room != 0) return by_room;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* GET /rooms' players: the collection's, every thread's, by room name and then id (the threads
 * answer in any order). Each thread lists at most NET_ROOMS_JSON_PLAYERS of its own and the
 * renderer the first NET_ROOMS_JSON_PLAYERS of all; past that `players_truncated` says so. */
static bool render_players(const net_hosts *hs, net_buf *out) {
    size_t n = 0, total = 0;
    for (uint32_t i = 0; hs && i < hs->threads; i++) {
        if (!hs->collected[i]) continue;
        n += hs->collected[i]->player_count;
        total += hs->collected[i]->players_total;
    }
    net_room_player *all = malloc((n ? n : 1) * sizeof *all);
    if (!all) return false;
    size_t k = 0;
    for (uint32_t i = 0; hs && i < hs->threads; i++) {
        const net_host_sample *smp = hs->collected[i];
        if (!smp) continue;
        memcpy(all + k, smp->players, smp->player_count * sizeof *all);
        k += smp->player_count;
    }
    qsort(all, n, sizeof *all, player_order);
    bool ok = net_rooms_render_players(all, n, total, out);
    free(all);
    return ok;
}

/* GET /rooms: the directory's rooms (clients counted with the joins in flight), with the figures
 * of the collection just made, and who is in them. */
static bool render_rooms(net_ops *ops, net_buf *out) {
    size_t cap = (size_t)net_server_config(ops->srv)->max_rooms + 1u;
    net_room_info *infos = malloc(cap * sizeof *infos);
    if (!infos) return false;
    size_t n = net_rooms_list(ops->dir, infos, cap);
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) {
        const net_room_sample *r = sample_of(ops->hosts, infos[i].thread, infos[i].id);
        if (!r) continue;
        infos[i].bodies = r->static_bodies + r->moving_bodies;
        infos[i].tick = r->tick;
        infos[i].tick_p99_ms = 1000.0 * net_metrics_tick_quantile(&r->m, 0.99);
    }
    out->len = 0;
    bool ok = net_rooms_render_json(infos, n, out);
    free(infos);
    /* The players join the object: {..., "players": [...], ...}. */
    if (ok && out->len >= 2) {
        out->len -= 2; /* "}\n" */
        ok = net_buf_append(out, ", ", 2) && render_players(ops->hosts, out) &&
             net_buf_append(out, "}\n", 2);
    }
    /* With Agones, the GameServer's state and labels join the object: {..., "agones": {...}}. */
    if (ok && ops->agones && out->len >= 2) {
        out->len -= 2; /* "}\n" */
        ok = net_buf_append(out, ", ", 2) && net_agones_render_json(ops->agones, out) &&
             net_buf_append(out, "}\n", 2);
    }
    return ok;
}

/* Starts a collection for the requests that want one, unless one is in flight (those requests
 * then wait for the next: the one in flight may have been asked before they arrived). */
static void collect_start(net_ops *ops) {
    if (ops->collecting || !ops->hosts) return;
    bool wanted = false;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (h->want_metrics && !h->closing) {
            h->want_metrics = false;
            h->in_collection = true;
            wanted = true;
        }
    }
    if (!wanted) return;
    ops->collecting = net_hosts_collect(ops->hosts);
}

static int room_row_order(const void *pa, const void *pb) {
    const net_room_metrics *a = pa, *b = pb;
    bool da = strcmp(a->name, NET_ROOM_DEFAULT) == 0, db = strcmp(b->name, NET_ROOM_DEFAULT) == 0;
    if (da != db) return da ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The /metrics exposition from the collected copies: the daemon-wide series sum the front, every
 * room and every thread's retired counters; the collide_room_* families label the rooms. */
static bool render_metrics(net_ops *ops, net_buf *out) {
    net_hosts *hs = ops->hosts;
    size_t n = 0;
    for (uint32_t i = 0; i < hs->threads; i++)
        if (hs->collected[i]) n += hs->collected[i]->count;
    net_room_metrics *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return false;
    net_metrics front = ops->srv->metrics;
    front.overloaded = false;
    net_gauges g = {net_server_client_count(ops->srv), 0, 0, net_log_dropped_total(), 0, UINT64_MAX,
                    net_server_pending_count(ops->srv), 0, 0,
                    /* The budget every thread counts against, read as it is now, not collected. */
                    net_partial_held(ops->srv->partial), ops->srv->partial->max};
    size_t k = 0;
    for (uint32_t i = 0; i < hs->threads; i++) {
        const net_host_sample *smp = hs->collected[i];
        if (!smp) continue;
        net_metrics_add(&front, &smp->retired);
        g.clients += smp->connections;
        for (size_t j = 0; j < smp->count; j++) {
            const net_room_sample *r = &smp->rooms[j];
            rows[k++] =
                (net_room_metrics){r->name, &r->m, r->clients, r->static_bodies, r->moving_bodies};
            g.clients += r->clients;
            g.static_bodies += r->static_bodies;
            g.moving_bodies += r->moving_bodies;
            g.body_slots_retired += r->slots_retired;
            /* The room nearest to running out is the one to watch. */
            if (r->ids_left < g.body_ids_left) g.body_ids_left = r->ids_left;
            g.history_bytes += r->history_bytes;
            g.history_records += r->history_records;
        }
    }
    if (g.body_ids_left == UINT64_MAX) g.body_ids_left = 0;
    /* The renderer breaks ties in the top 64 by position: in the directory's order (`default`
     * first, then by name; docs/operations.md), not in the order the threads answered. */
    qsort(rows, k, sizeof *rows, room_row_order);
    out->len = 0;
    bool ok = net_metrics_render_rooms(rows, k, &front, &g, out);
    if (ok && ops->agones) ok = net_agones_render_metrics(ops->agones, out);
    free(rows);
    return ok;
}

void net_ops_collected(net_ops *ops) {
    if (!ops->collecting) return;
    ops->collecting = false;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (!h->in_collection || h->closing) continue;
        h->in_collection = false;
        if (!(h->rooms ? render_rooms(ops, &h->body) : render_metrics(ops, &h->body))) {
            conn_close(h);
            continue;
        }
        conn_respond(h, 200, "OK",
                     h->rooms ? "application/json" : "text/plain; version=0.0.4; charset=utf-8",
                     h->head_only);
    }
    net_hosts_collect_free(ops->hosts);
    collect_start(ops); /* those that asked meanwhile */
}

/* ---- Admission and timeouts -------------------------------------------------------------- */

/* Same remote address, port ignored. */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
    if (a->ss_family != b->ss_family) return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

/* Makes room for one more connection (from `from`, or any address when NULL) by closing the
 * oldest open one that has not sent a whole request yet. A socket that holds a slot without
 * asking anything is the cheapest to drop and the likeliest attacker; one already being answered
 * is kept, so a flood cannot cut a scrape mid-response. False when every slot is answering. */
static bool evict_oldest_idle(net_ops *ops, const net_ops_conn *except,
                              const struct sockaddr_storage *from) {
    net_ops_conn *oldest = NULL; /* the list is newest first: the last match is the oldest */
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        if (h != except && !h->closing && !h->responded && (!from || same_host(&h->peer, from)))
            oldest = h;
    if (!oldest) return false;
    net_server_note_http_close(ops->srv, NET_HTTP_EVICTED);
    conn_close(oldest);
    return true;
}

/* At a cap, the newcomer is admitted and the oldest silent connection goes, rather than the
 * newcomer being refused: otherwise sockets that connect and never ask (reconnecting when cut)
 * hold every slot and /healthz goes unanswered. The per-address cap evicts within the address
 * first, so one host cannot push out everyone else's connections either. */
static bool admit(net_ops *ops, net_ops_conn *hc) {
    const net_config *cfg = net_server_config(ops->srv);
    uint32_t same = 0;
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        if (h != hc && !h->closing && same_host(&h->peer, &hc->peer)) same++;
    if (same >= cfg->http_max_per_address && !evict_oldest_idle(ops, hc, &hc->peer)) return false;
    if (ops->open > cfg->http_max_connections && !evict_oldest_idle(ops, hc, NULL)) return false;
    return true;
}

void net_ops_accept(net_ops *ops, uv_stream_t *listener) {
    net_ops_conn *hc = calloc(1, sizeof *hc);
    if (!hc) return;
    hc->ops = ops;
    hc->fd = -1;
    uv_tcp_init(ops->loop, &hc->tcp);
    hc->tcp.data = hc;
    hc->next = ops->conns;
    if (hc->next) hc->next->prev = hc;
    ops->conns = hc;
    ops->count++;
    ops->open++;
    net_conn_set_clock(ops->srv);
    hc->start_us = net_server_now_us(ops->srv);
    if (uv_accept(listener, (uv_stream_t *)&hc->tcp) != 0) {
        conn_close(hc);
        return;
    }
    int len = sizeof hc->peer;
    uv_tcp_getpeername(&hc->tcp, (struct sockaddr *)&hc->peer, &len);
    if (!admit(ops, hc)) {
        net_server_note_http_close(ops->srv, NET_HTTP_REFUSED);
        conn_close(hc);
        return;
    }
    uv_read_start((uv_stream_t *)&hc->tcp, conn_alloc, conn_read);
}

void net_ops_sweep(net_ops *ops) {
    uint64_t timeout_us = (uint64_t)net_server_config(ops->srv)->http_timeout_ms * 1000u;
    for (net_ops_conn *h = ops->conns; h; h = h->next) {
        if (!h->closing && net_server_now_us(ops->srv) - h->start_us > timeout_us) {
            if (!h->responded) net_server_note_http_close(ops->srv, NET_HTTP_TIMEOUT);
            conn_close(h);
        }
    }
}

void net_ops_close_all(net_ops *ops) {
    for (net_ops_conn *h = ops->conns; h; h = h->next)
        conn_close(h);
}

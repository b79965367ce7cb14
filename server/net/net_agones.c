#include "net_agones.h"

#include <curl/curl.h>
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_log.h"

#define LINE_MAX_BYTES 65536u  /* one watch line (a GameServer as JSON); longer ones are skipped */
#define LABELS_MAX_BYTES 4096u /* the labels kept for /rooms and the log */

typedef enum call_kind {
    CALL_READY,
    CALL_HEALTH,
    CALL_SYNC,
    CALL_SHUTDOWN,
    CALL_WATCH,
    CALLS
} call_kind;
static const char *const call_names[CALLS] = {"ready", "health", "sync", "shutdown", "watch"};

/* What a sync call carries. */
typedef enum sync_op { SYNC_COUNTER, SYNC_ADD, SYNC_REMOVE } sync_op;

typedef char room_name[NET_ROOM_NAME_MAX + 1];

/* One kind of call: at most one of each in flight. */
typedef struct call {
    net_agones *a;
    call_kind kind;
    CURL *easy;             /* reused, so its connection to the sidecar is kept alive */
    bool busy;              /* in the multi handle */
    uint32_t failures;      /* consecutive failed attempts */
    uint32_t backoff_ms;    /* the delay before the next attempt after a failure */
    uint64_t not_before_ms; /* loop time before which no new attempt starts (sync) */
    uv_timer_t timer;       /* the period (health, sync) or the retry (ready, shutdown, watch) */
    char body[160];         /* the request body (curl reads it from here while in flight) */
    char resp[256];         /* the start of the answer, for the log */
    size_t resp_len;
    bool got_line;     /* watch: this stream delivered a whole line */
    sync_op op;        /* sync: what the call in flight carries */
    room_name room;    /* ... the room added or removed */
    uint32_t players;  /* ... the count sent */
    uint32_t capacity; /* ... the capacity sent */
} call;

/* A socket libcurl asked us to watch. */
typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    net_agones *a;
    struct sock_ctx *prev, *next; /* in a->socks */
} sock_ctx;

struct net_agones {
    uv_loop_t *loop;
    net_rooms *dir;
    net_agones_config cfg;
    CURLM *multi;
    uv_timer_t curl_timer; /* the timeout libcurl asked for */
    struct curl_slist *headers;
    sock_ctx *socks;
    call calls[CALLS];
    char base[48]; /* http://localhost:PORT */
    bool listening, ready, shutting_down, closing;
    /* What the sidecar was last told (the difference with the directory is what is sent). */
    bool counter_sent;
    uint32_t sent_players, sent_capacity;
    room_name *sent_rooms; /* sorted by strcmp */
    size_t sent_count;
    room_name *cur_rooms; /* scratch: the directory's rooms, sorted */
    net_room_info *infos; /* scratch for net_rooms_list */
    size_t rooms_cap;     /* entries in each of the three */
    /* The watch. */
    char *line; /* the line being received */
    size_t line_len;
    bool line_skipping; /* the current line is too long: dropped up to its newline */
    char state[32];     /* the GameServer's state last seen ("" before the first) */
    bool allocated;
    char *labels; /* its labels as compact JSON (NULL before the first) */
    uint64_t errors;
    void (*done)(void *ctx); /* the end of Shutdown */
    void *done_ctx;
    uint64_t shutdown_deadline_ms;
};

static void call_start(call *c, const char *method, const char *path);
static void sync_step(net_agones *a, bool lists_only);
static void ready_step(net_agones *a);
static void watch_step(net_agones *a);
static void shutdown_step(net_agones *a);
static void call_failed(call *c, CURLcode res, long code);
static void on_call_timer(uv_timer_t *t);

/* ---- libcurl on the libuv loop --------------------------------------------------------------- */

static void process_done(net_agones *a);

static void on_sock_closed(uv_handle_t *h) { free(h->data); }

static void sock_close(net_agones *a, sock_ctx *sc) {
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        a->socks = sc->next;
    if (sc->next) sc->next->prev = sc->prev;
    uv_close((uv_handle_t *)&sc->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *h, int status, int events) {
    sock_ctx *sc = h->data;
    net_agones *a = sc->a;
    int flags = 0;
    if (status < 0) flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    int running = 0;
    if (a->multi) curl_multi_socket_action(a->multi, sc->fd, flags, &running);
    process_done(a);
}

/* CURLMOPT_SOCKETFUNCTION: watch s for what curl asks, or stop. */
static int on_curl_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)easy;
    net_agones *a = userp;
    sock_ctx *sc = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sc) {
            sock_close(a, sc);
            if (!a->closing) curl_multi_assign(a->multi, s, NULL);
        }
        return 0;
    }
    if (!sc) {
        sc = calloc(1, sizeof *sc);
        if (!sc) return -1;
        if (uv_poll_init_socket(a->loop, &sc->poll, s) != 0) {
            free(sc);
            return -1;
        }
        sc->fd = s;
        sc->a = a;
        sc->poll.data = sc;
        sc->next = a->socks;
        if (sc->next) sc->next->prev = sc;
        a->socks = sc;
        curl_multi_assign(a->multi, s, sc);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    uv_poll_start(&sc->poll, events, on_poll);
    return 0;
}

static void on_curl_timer(uv_timer_t *t) {
    net_agones *a = t->data;
    int running = 0;
    if (a->multi) curl_multi_socket_action(a->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    process_done(a);
}

/* CURLMOPT_TIMERFUNCTION: curl wants to be called back in timeout_ms (-1: no more). */
static int on_curl_timer_change(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    net_agones *a = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&a->curl_timer);
    else
        uv_timer_start(&a->curl_timer, on_curl_timer, (uint64_t)timeout_ms, 0);
    return 0;
}

/* ---- Calls --------------------------------------------------------------------------------- */

static size_t on_unary_data(char *ptr, size_t size, size_t n, void *userdata) {
    call *c = userdata;
    size_t len = size * n;
    size_t room = sizeof c->resp - 1 - c->resp_len;
    size_t keep = len < room ? len : room;
    memcpy(c->resp + c->resp_len, ptr, keep);
    c->resp_len += keep;
    c->resp[c->resp_len] = '\0';
    return len;
}

static void watch_line(net_agones *a, const char *s, size_t n);

static size_t on_watch_data(char *ptr, size_t size, size_t n, void *userdata) {
    call *c = userdata;
    net_agones *a = c->a;
    size_t len = size * n;
    for (size_t i = 0; i < len; i++) {
        if (ptr[i] == '\n') {
            if (!a->line_skipping && a->line_len > 0) {
                watch_line(a, a->line, a->line_len);
                c->got_line = true;
            }
            a->line_len = 0;
            a->line_skipping = false;
        } else if (a->line_len < LINE_MAX_BYTES) {
            a->line[a->line_len++] = ptr[i];
        } else if (!a->line_skipping) {
            a->line_skipping = true;
            a->errors++;
            net_log(NET_LOG_WARN, "agones_error", 0, NULL,
                    "call=watch: a line over %u bytes skipped", LINE_MAX_BYTES);
        }
    }
    return len;
}

/* Starts c's request: method NULL is POST with c->body, "GET" a body-less GET, "PATCH" a PATCH
 * with c->body. */
static void call_start(call *c, const char *method, const char *path) {
    net_agones *a = c->a;
    if (c->busy || a->closing || !a->multi) return;
    char url[160];
    snprintf(url, sizeof url, "%s%s", a->base, path);
    CURL *e = c->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    bool get = method && strcmp(method, "GET") == 0;
    if (get) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(c->body));
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    }
    c->resp_len = 0;
    c->resp[0] = '\0';
    c->got_line = false;
    if (c->kind == CALL_WATCH) {
        a->line_len = 0;
        a->line_skipping = false;
    }
    if (curl_multi_add_handle(a->multi, e) != CURLM_OK) {
        call_failed(c, CURLE_FAILED_INIT, 0); /* retried like any failure */
        return;
    }
    c->busy = true;
}

/* A failed attempt: counted, logged at the first of a streak, and the next one backed off. */
static void call_failed(call *c, CURLcode res, long code) {
    net_agones *a = c->a;
    a->errors++;
    c->failures++;
    if (c->failures == 1) {
        if (res != CURLE_OK)
            net_log(NET_LOG_WARN, "agones_error", 0, NULL, "call=%s: %s (retrying with backoff)",
                    call_names[c->kind], curl_easy_strerror(res));
        else
            net_log(NET_LOG_WARN, "agones_error", 0, NULL, "call=%s: HTTP %ld %s (retrying)",
                    call_names[c->kind], code, c->resp);
    } else {
        net_log(NET_LOG_DEBUG, "agones_error", 0, NULL, "call=%s: attempt %u failed",
                call_names[c->kind], c->failures);
    }
    c->not_before_ms = uv_now(a->loop) + c->backoff_ms;
    uint32_t delay = c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > NET_AGONES_BACKOFF_MAX_MS ? NET_AGONES_BACKOFF_MAX_MS
                                                                  : c->backoff_ms * 2;
    /* Health and sync have their own periodic timers; the others retry on theirs. */
    if (c->kind == CALL_READY || c->kind == CALL_WATCH || c->kind == CALL_SHUTDOWN)
        uv_timer_start(&c->timer, on_call_timer, delay, 0);
}

static void call_succeeded(call *c) {
    if (c->failures > 0)
        net_log(NET_LOG_INFO, "agones_recovered", 0, NULL, "call=%s after %u failed attempts",
                call_names[c->kind], c->failures);
    c->failures = 0;
    c->backoff_ms = NET_AGONES_BACKOFF_MIN_MS;
    c->not_before_ms = 0;
}

static void finish_shutdown(net_agones *a) {
    void (*done)(void *) = a->done;
    a->done = NULL;
    net_agones_close(a);
    if (done) done(a->done_ctx);
}

/* What the sidecar was told, once it accepted (or refused for good) a sync call. */
static void sync_sent(net_agones *a, const call *c) {
    if (c->op == SYNC_COUNTER) {
        a->counter_sent = true;
        a->sent_players = c->players;
        a->sent_capacity = c->capacity;
        return;
    }
    size_t i = 0;
    while (i < a->sent_count && strcmp(a->sent_rooms[i], c->room) < 0)
        i++;
    bool present = i < a->sent_count && strcmp(a->sent_rooms[i], c->room) == 0;
    if (c->op == SYNC_ADD && !present && a->sent_count < a->rooms_cap) {
        memmove(&a->sent_rooms[i + 1], &a->sent_rooms[i], (a->sent_count - i) * sizeof(room_name));
        memcpy(a->sent_rooms[i], c->room, sizeof(room_name));
        a->sent_count++;
    } else if (c->op == SYNC_REMOVE && present) {
        memmove(&a->sent_rooms[i], &a->sent_rooms[i + 1],
                (a->sent_count - i - 1) * sizeof(room_name));
        a->sent_count--;
    }
}

static void call_done(call *c, CURLcode res, long code) {
    net_agones *a = c->a;
    bool ok = res == CURLE_OK && code >= 200 && code < 300;
    switch (c->kind) {
    case CALL_READY:
        if (!ok) {
            call_failed(c, res, code);
            return;
        }
        call_succeeded(c);
        a->ready = true;
        net_log(NET_LOG_INFO, "agones_ready", 0, NULL, "the sidecar accepted Ready");
        uv_timer_start(&a->calls[CALL_SYNC].timer, on_call_timer, 0, NET_AGONES_SYNC_MS);
        return;
    case CALL_HEALTH:
        if (ok)
            call_succeeded(c);
        else
            call_failed(c, res, code);
        return;
    case CALL_SYNC: {
        /* The value already there (409 on add) or already gone (404 on remove) is what we
         * wanted; another 4xx is a refusal that retrying cannot change (the list at capacity,
         * the counter not declared in the Fleet): logged and counted, not retried. */
        bool converged =
            (c->op == SYNC_ADD && code == 409) || (c->op == SYNC_REMOVE && code == 404);
        bool refused = res == CURLE_OK && code >= 400 && code < 500 && !converged;
        if (!ok && !converged) {
            call_failed(c, res, code);
            if (!refused) return;
            net_log(NET_LOG_WARN, "agones_refused", 0, NULL, "call=sync op=%s room=%s: HTTP %ld %s",
                    c->op == SYNC_COUNTER ? "counter"
                    : c->op == SYNC_ADD   ? "add"
                                          : "remove",
                    c->op == SYNC_COUNTER ? "" : c->room, code, c->resp);
            c->not_before_ms = 0;
        } else {
            call_succeeded(c);
        }
        sync_sent(a, c);
        sync_step(a, true); /* the next room at once; the counter waits for its period */
        return;
    }
    case CALL_SHUTDOWN:
        if (ok) {
            call_succeeded(c);
            net_log(NET_LOG_INFO, "agones_shutdown", 0, NULL, "the sidecar accepted Shutdown");
            finish_shutdown(a);
            return;
        }
        if (uv_now(a->loop) + c->backoff_ms >= a->shutdown_deadline_ms) {
            a->errors++;
            net_log(NET_LOG_WARN, "agones_error", 0, NULL,
                    "call=shutdown: not accepted within %u ms, exiting anyway",
                    NET_AGONES_SHUTDOWN_BUDGET_MS);
            finish_shutdown(a);
            return;
        }
        call_failed(c, res, code);
        return;
    case CALL_WATCH:
        /* A stream that ends, cleanly or not, is opened again: the state may change later. */
        if (ok && c->got_line) {
            call_succeeded(c);
            c->backoff_ms = NET_AGONES_BACKOFF_MIN_MS;
            uv_timer_start(&c->timer, on_call_timer, c->backoff_ms, 0);
        } else {
            call_failed(c, res, code);
        }
        return;
    case CALLS:
        break;
    }
}

static void process_done(net_agones *a) {
    if (!a->multi) return;
    CURLMsg *msg;
    int left = 0;
    while (a->multi && (msg = curl_multi_info_read(a->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL *e = msg->easy_handle;
        CURLcode res = msg->data.result;
        call *c = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
        long code = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        curl_multi_remove_handle(a->multi, e);
        if (!c) continue;
        c->busy = false;
        call_done(c, res, code);
    }
}

/* ---- The calls' own steps ------------------------------------------------------------------ */

static void on_call_timer(uv_timer_t *t) {
    call *c = t->data;
    net_agones *a = c->a;
    switch (c->kind) {
    case CALL_READY:
        ready_step(a);
        break;
    case CALL_HEALTH:
        if (!a->shutting_down && !c->busy) {
            snprintf(c->body, sizeof c->body, "{}");
            call_start(c, NULL, "/health");
        }
        break;
    case CALL_SYNC:
        sync_step(a, false);
        break;
    case CALL_SHUTDOWN:
        shutdown_step(a);
        break;
    case CALL_WATCH:
        watch_step(a);
        break;
    case CALLS:
        break;
    }
}

/* Ready once the listeners are up and `default` has ticked (its world is built and running). */
static void ready_step(net_agones *a) {
    call *c = &a->calls[CALL_READY];
    if (a->ready || a->shutting_down || a->closing || c->busy || !a->listening) return;
    net_room_info def;
    if (!net_rooms_find(a->dir, NET_ROOM_DEFAULT, strlen(NET_ROOM_DEFAULT), &def) ||
        def.tick == 0) {
        uv_timer_start(&c->timer, on_call_timer, 10, 0);
        return;
    }
    snprintf(c->body, sizeof c->body, "{}");
    call_start(c, NULL, "/ready");
}

static void watch_step(net_agones *a) {
    call *c = &a->calls[CALL_WATCH];
    if (a->shutting_down || a->closing || c->busy) return;
    call_start(c, "GET", "/watch/gameserver");
}

static void shutdown_step(net_agones *a) {
    call *c = &a->calls[CALL_SHUTDOWN];
    if (a->closing || c->busy) return;
    snprintf(c->body, sizeof c->body, "{}");
    call_start(c, NULL, "/shutdown");
}

static int name_cmp(const void *x, const void *y) { return strcmp(x, y); }

/* Sends the first difference between the directory and what the sidecar was told: the players
 * counter (not when lists_only: it is sent by the period, so a burst makes one call a period),
 * then the rooms added, then those removed. */
static void sync_step(net_agones *a, bool lists_only) {
    call *c = &a->calls[CALL_SYNC];
    if (!a->ready || a->shutting_down || a->closing || c->busy) return;
    if (uv_now(a->loop) < c->not_before_ms) return;
    uint32_t rooms = 0, clients = 0;
    net_rooms_counts(a->dir, &rooms, &clients);
    if (!lists_only && (!a->counter_sent || clients != a->sent_players ||
                        a->cfg.max_clients != a->sent_capacity)) {
        c->op = SYNC_COUNTER;
        c->players = clients;
        c->capacity = a->cfg.max_clients;
        /* int64 values as JSON strings: the REST gateway's convention (proto3 JSON). */
        snprintf(c->body, sizeof c->body, "{\"count\": \"%u\", \"capacity\": \"%u\"}", clients,
                 a->cfg.max_clients);
        call_start(c, "PATCH", "/v1beta1/counters/players");
        return;
    }
    size_t n = net_rooms_list(a->dir, a->infos, a->rooms_cap);
    if (n > a->rooms_cap) n = a->rooms_cap;
    for (size_t i = 0; i < n; i++)
        memcpy(a->cur_rooms[i], a->infos[i].name, sizeof(room_name));
    qsort(a->cur_rooms, n, sizeof(room_name), name_cmp);
    const char *add = NULL, *remove = NULL;
    size_t i = 0, j = 0;
    while ((i < n || j < a->sent_count) && !add) {
        int d = i == n ? 1 : j == a->sent_count ? -1 : strcmp(a->cur_rooms[i], a->sent_rooms[j]);
        if (d < 0)
            add = a->cur_rooms[i++];
        else if (d > 0) {
            if (!remove) remove = a->sent_rooms[j];
            j++;
        } else {
            i++;
            j++;
        }
    }
    const char *name = add ? add : remove;
    if (!name) return;
    c->op = add ? SYNC_ADD : SYNC_REMOVE;
    snprintf(c->room, sizeof c->room, "%s", name);
    /* Room names are [A-Za-z0-9_.:-]: nothing to escape in JSON or in the URL's body. */
    snprintf(c->body, sizeof c->body, "{\"value\": \"%s\"}", c->room);
    call_start(c, NULL, add ? "/v1beta1/lists/rooms:addValue" : "/v1beta1/lists/rooms:removeValue");
}

/* ---- The watch stream ---------------------------------------------------------------------- */

/* One line of GET /watch/gameserver: {"result": <GameServer>} (or {"error": ...}). */
static void watch_line(net_agones *a, const char *s, size_t n) {
    json_error_t jerr;
    json_t *root = json_loadb(s, n, 0, &jerr);
    json_t *gs = root ? json_object_get(root, "result") : NULL;
    if (!json_is_object(gs)) {
        net_log(NET_LOG_DEBUG, "agones_watch", 0, NULL, "a line without a result skipped");
        json_decref(root);
        return;
    }
    json_t *meta = json_object_get(gs, "object_meta");
    if (!meta) meta = json_object_get(gs, "objectMeta");
    json_t *labels = json_object_get(meta, "labels");
    const char *state = json_string_value(json_object_get(json_object_get(gs, "status"), "state"));
    bool labels_changed = false;
    if (json_is_object(labels)) {
        char *text = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        if (text && strlen(text) <= LABELS_MAX_BYTES) {
            labels_changed = a->labels && strcmp(a->labels, text) != 0;
            free(a->labels);
            a->labels = text;
        } else {
            free(text);
        }
    }
    if (state) {
        /* States are words (Ready, Allocated, Shutdown...): anything else is kept out of the
         * log and /rooms. */
        char clean[sizeof a->state];
        size_t k = 0;
        for (const char *p = state; *p && k + 1 < sizeof clean; p++)
            if (isalnum((unsigned char)*p)) clean[k++] = *p;
        clean[k] = '\0';
        if (strcmp(clean, a->state) != 0) {
            snprintf(a->state, sizeof a->state, "%s", clean);
            bool allocated = strcmp(clean, "Allocated") == 0;
            if (allocated && !a->allocated)
                net_log(NET_LOG_INFO, "agones_allocated", 0, NULL, "state=Allocated labels=%s",
                        a->labels ? a->labels : "{}");
            else
                net_log(NET_LOG_INFO, "agones_state", 0, NULL, "state=%s", a->state);
            a->allocated = allocated;
            labels_changed = false;
        }
    }
    /* Allocated again (a matchmaker packing another match into this server): the allocation's
     * labels replace the last ones' without a change of state. */
    if (labels_changed && a->allocated)
        net_log(NET_LOG_INFO, "agones_allocated", 0, NULL, "state=Allocated again labels=%s",
                a->labels);
    json_decref(root);
}

/* ---- Lifecycle ----------------------------------------------------------------------------- */

net_agones *net_agones_start(uv_loop_t *loop, net_rooms *dir, const net_agones_config *cfg) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        net_log(NET_LOG_ERROR, "agones_error", 0, NULL,
                "libcurl cannot start: running without Agones");
        return NULL;
    }
    net_agones *a = calloc(1, sizeof *a);
    size_t cap = (size_t)cfg->max_rooms + 1u;
    if (a) {
        a->rooms_cap = cap;
        a->sent_rooms = calloc(cap, sizeof(room_name));
        a->cur_rooms = calloc(cap, sizeof(room_name));
        a->infos = calloc(cap, sizeof(net_room_info));
        a->line = malloc(LINE_MAX_BYTES);
        a->multi = curl_multi_init();
        a->headers = curl_slist_append(NULL, "Content-Type: application/json");
    }
    bool ok = a && a->sent_rooms && a->cur_rooms && a->infos && a->line && a->multi && a->headers;
    for (int k = 0; ok && k < CALLS; k++) {
        a->calls[k].easy = curl_easy_init();
        ok = a->calls[k].easy != NULL;
    }
    if (!ok) {
        net_log(NET_LOG_ERROR, "agones_error", 0, NULL, "out of memory: running without Agones");
        if (a) {
            for (int k = 0; k < CALLS; k++)
                curl_easy_cleanup(a->calls[k].easy);
            curl_multi_cleanup(a->multi);
            curl_slist_free_all(a->headers);
            free(a->sent_rooms);
            free(a->cur_rooms);
            free(a->infos);
            free(a->line);
            free(a);
        }
        curl_global_cleanup();
        return NULL;
    }
    a->loop = loop;
    a->dir = dir;
    a->cfg = *cfg;
    snprintf(a->base, sizeof a->base, "http://localhost:%u", cfg->port);
    curl_multi_setopt(a->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(a->multi, CURLMOPT_SOCKETDATA, a);
    curl_multi_setopt(a->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer_change);
    curl_multi_setopt(a->multi, CURLMOPT_TIMERDATA, a);
    uv_timer_init(loop, &a->curl_timer);
    a->curl_timer.data = a;
    for (int k = 0; k < CALLS; k++) {
        call *c = &a->calls[k];
        c->a = a;
        c->kind = (call_kind)k;
        c->backoff_ms = NET_AGONES_BACKOFF_MIN_MS;
        uv_timer_init(loop, &c->timer);
        c->timer.data = c;
        CURL *e = c->easy;
        curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)c);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); /* the sidecar is local: never a proxy */
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->headers);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, k == CALL_WATCH ? on_watch_data : on_unary_data);
        if (k != CALL_WATCH)
            curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)NET_AGONES_CALL_TIMEOUT_MS);
    }
    net_log(NET_LOG_INFO, "agones_start", 0, NULL, "sidecar %s health_ms=%u libcurl=%s", a->base,
            cfg->health_ms, curl_version_info(CURLVERSION_NOW)->version);
    uv_timer_start(&a->calls[CALL_HEALTH].timer, on_call_timer, 0, cfg->health_ms);
    watch_step(a);
    return a;
}

void net_agones_listening(net_agones *a) {
    if (!a) return;
    a->listening = true;
    ready_step(a);
}

void net_agones_shutdown(net_agones *a, void (*done)(void *ctx), void *ctx) {
    if (a->closing) {
        done(ctx);
        return;
    }
    if (a->shutting_down) return;
    a->shutting_down = true;
    a->done = done;
    a->done_ctx = ctx;
    /* Nothing but Shutdown from now on: the other calls in flight are abandoned. */
    for (int k = 0; k < CALLS; k++) {
        call *c = &a->calls[k];
        if (k == CALL_SHUTDOWN) continue;
        uv_timer_stop(&c->timer);
        if (c->busy) {
            curl_multi_remove_handle(a->multi, c->easy);
            c->busy = false;
        }
    }
    a->shutdown_deadline_ms = uv_now(a->loop) + NET_AGONES_SHUTDOWN_BUDGET_MS;
    shutdown_step(a);
}

void net_agones_close(net_agones *a) {
    if (!a || a->closing) return;
    a->closing = true;
    for (int k = 0; k < CALLS; k++) {
        call *c = &a->calls[k];
        if (c->busy) curl_multi_remove_handle(a->multi, c->easy);
        c->busy = false;
        curl_easy_cleanup(c->easy);
        c->easy = NULL;
        uv_close((uv_handle_t *)&c->timer, NULL);
    }
    CURLM *multi = a->multi;
    curl_multi_cleanup(multi); /* may still ask to stop watching sockets: a->multi is set */
    a->multi = NULL;
    while (a->socks)
        sock_close(a, a->socks);
    uv_close((uv_handle_t *)&a->curl_timer, NULL);
}

void net_agones_free(net_agones *a) {
    if (!a) return;
    curl_slist_free_all(a->headers);
    free(a->sent_rooms);
    free(a->cur_rooms);
    free(a->infos);
    free(a->line);
    free(a->labels);
    free(a);
    curl_global_cleanup();
}

/* ---- /metrics and /rooms ------------------------------------------------------------------- */

static bool append(net_buf *out, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < sizeof line && net_buf_append(out, line, (size_t)n);
}

bool net_agones_render_metrics(const net_agones *a, net_buf *out) {
    return append(out,
                  "# HELP collide_agones_errors_total Agones SDK calls that failed (sidecar down, "
                  "late or refusing); the game goes on\n"
                  "# TYPE collide_agones_errors_total counter\n"
                  "collide_agones_errors_total %llu\n",
                  (unsigned long long)a->errors) &&
           append(out,
                  "# HELP collide_agones_ready 1 once the sidecar accepted Ready\n"
                  "# TYPE collide_agones_ready gauge\n"
                  "collide_agones_ready %d\n",
                  a->ready ? 1 : 0) &&
           append(out,
                  "# HELP collide_agones_allocated 1 while the GameServer is Allocated (seen on "
                  "the watch stream)\n"
                  "# TYPE collide_agones_allocated gauge\n"
                  "collide_agones_allocated %d\n",
                  a->allocated ? 1 : 0);
}

bool net_agones_render_json(const net_agones *a, net_buf *out) {
    const char *labels = a->labels ? a->labels : "{}";
    return append(out,
                  "\"agones\": {\"state\": \"%s\", \"ready\": %s, \"allocated\": %s, \"labels\": ",
                  a->state, a->ready ? "true" : "false", a->allocated ? "true" : "false") &&
           net_buf_append(out, labels, strlen(labels)) && net_buf_append(out, "}", 1);
}

/* net_worker: a thread, its loop and its inbox (see net_worker.h). */
#include "net_worker.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct net_worker {
    uint32_t index;
    uv_loop_t loop;
    uv_async_t wake; /* posted to by other threads */
    uv_thread_t thread;
    uv_mutex_t lock; /* guards queue, count, cap, stopping */
    net_worker_msg *queue;
    size_t count, cap;
    size_t queued_bytes;   /* the payload bytes in queue (net_worker_post_within's bound) */
    net_worker_msg *batch; /* the worker's side: the messages being handled (swapped with queue) */
    size_t batch_cap;
    bool stopping; /* NET_WORKER_STOP is queued: posts are refused */
    net_worker_handler handler;
    void (*on_start)(net_worker *w, void *ctx);
    void *ctx;
};

/* A message nobody will handle: what it carries is released. */
static void drop(net_worker_msg *m) {
    if (m->fd >= 0) close(m->fd);
    free(m->bytes);
    m->fd = -1;
    m->bytes = NULL;
}

static void on_wake(uv_async_t *a) {
    net_worker *w = a->data;
    /* Take the whole inbox at once: the lock is held for a swap, not while handling. */
    uv_mutex_lock(&w->lock);
    net_worker_msg *batch = w->queue;
    size_t n = w->count, cap = w->cap;
    w->queue = w->batch;
    w->cap = w->batch_cap;
    w->count = 0;
    w->queued_bytes = 0;
    uv_mutex_unlock(&w->lock);
    w->batch = batch;
    w->batch_cap = cap;
    for (size_t i = 0; i < n; i++)
        w->handler(w, w->ctx, &batch[i]);
    /* The stop comes after every message posted before it: posts are refused once it is asked
     * for, so an empty inbox under the flag stays empty. */
    uv_mutex_lock(&w->lock);
    bool stop = w->stopping && w->count == 0;
    uv_mutex_unlock(&w->lock);
    if (stop && !uv_is_closing((uv_handle_t *)&w->wake)) {
        net_worker_msg m = {NET_WORKER_STOP, 0, -1, NULL, 0};
        w->handler(w, w->ctx, &m);
        uv_close((uv_handle_t *)&w->wake, NULL);
    }
}

static void worker_main(void *arg) {
    net_worker *w = arg;
    if (w->on_start) w->on_start(w, w->ctx);
    uv_run(&w->loop, UV_RUN_DEFAULT);
}

net_worker *net_worker_start(uint32_t index, net_worker_handler handler,
                             void (*on_start)(net_worker *w, void *ctx), void *ctx) {
    net_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->index = index;
    w->handler = handler;
    w->on_start = on_start;
    w->ctx = ctx;
    if (uv_loop_init(&w->loop) != 0) {
        free(w);
        return NULL;
    }
    /* Made here, before the thread exists: the thread's creation orders these writes before
     * everything the loop does on it. */
    if (uv_mutex_init(&w->lock) != 0 || uv_async_init(&w->loop, &w->wake, on_wake) != 0) {
        uv_loop_close(&w->loop);
        free(w);
        return NULL;
    }
    w->wake.data = w;
    if (uv_thread_create(&w->thread, worker_main, w) != 0) {
        uv_close((uv_handle_t *)&w->wake, NULL);
        uv_run(&w->loop, UV_RUN_DEFAULT);
        uv_loop_close(&w->loop);
        uv_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

/* Appends to the inbox; the lock is held. */
static bool enqueue(net_worker *w, const net_worker_msg *m) {
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2u : 64u;
        net_worker_msg *q = realloc(w->queue, cap * sizeof *q);
        if (!q) return false;
        w->queue = q;
        w->cap = cap;
    }
    w->queue[w->count++] = *m;
    return true;
}

bool net_worker_post(net_worker *w, const net_worker_msg *m) {
    return net_worker_post_within(w, m, SIZE_MAX);
}

bool net_worker_post_within(net_worker *w, const net_worker_msg *m, size_t max_bytes) {
    net_worker_msg copy = *m;
    copy.bytes = NULL;
    if (m->len) {
        copy.bytes = malloc(m->len);
        if (!copy.bytes) return false;
        memcpy(copy.bytes, m->bytes, m->len);
    }
    uv_mutex_lock(&w->lock);
    bool ok = !w->stopping && m->kind != NET_WORKER_STOP && m->len <= max_bytes &&
              w->queued_bytes <= max_bytes - m->len && enqueue(w, &copy);
    if (ok) w->queued_bytes += m->len;
    uv_mutex_unlock(&w->lock);
    if (!ok) {
        free(copy.bytes);
        return false;
    }
    uv_async_send(&w->wake);
    return true;
}

void net_worker_stop(net_worker *w) {
    if (!w) return;
    uv_mutex_lock(&w->lock);
    w->stopping = true;
    uv_mutex_unlock(&w->lock);
    uv_async_send(&w->wake);
    uv_thread_join(&w->thread);
    /* Nothing can be left (the last wake saw an empty inbox), but an fd must never leak. */
    for (size_t i = 0; i < w->count; i++)
        drop(&w->queue[i]);
    uv_loop_close(&w->loop);
    uv_mutex_destroy(&w->lock);
    free(w->queue);
    free(w->batch);
    free(w);
}

uv_loop_t *net_worker_loop(net_worker *w) { return &w->loop; }
uint32_t net_worker_index(const net_worker *w) { return w->index; }

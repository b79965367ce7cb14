/* net_worker: one worker thread of the rooms daemon (docs/rooms-design.md): its own libuv loop,
 * and an inbox other threads post to. A message is copied into the inbox under a mutex and the
 * loop is woken with uv_async_send; the loop drains the inbox in order and hands each message to
 * the worker's handler, on the worker's thread. Messages from one sender arrive in the order it
 * posted them. Nothing else is shared: whatever the handler owns (rooms, worlds, connections)
 * lives on that thread only.
 *
 * A message can carry an open socket (fd): the sender gives up the fd when the post succeeds,
 * and the handler owns it from then on (uv_tcp_open). A message that is still in the inbox when
 * the worker stops has its fd closed and its bytes freed, so a hand-off racing a shutdown leaks
 * nothing. */
#ifndef COLLIDE_NET_WORKER_H
#define COLLIDE_NET_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct net_worker net_worker;

typedef struct net_worker_msg {
    uint32_t kind;  /* the handler's message kinds; NET_WORKER_STOP is the worker's own */
    uint64_t id;    /* a room id, a request id: the handler's business */
    int fd;         /* an open socket handed over, or -1 */
    uint8_t *bytes; /* copied on post, owned by the handler when it receives the message (free()) */
    size_t len;     /* bytes in `bytes` */
} net_worker_msg;

#define NET_WORKER_STOP UINT32_MAX /* last message the handler sees: close every handle it owns */

/* Called on the worker's thread for each message, in inbox order. On NET_WORKER_STOP the handler
 * closes its handles; the loop then runs until they are closed and the thread ends. */
typedef void (*net_worker_handler)(net_worker *w, void *ctx, net_worker_msg *m);

/* Starts the thread. `on_start`, if given, runs first on the worker's thread (to create timers
 * and the like on its loop). NULL when the thread or the loop could not be made. */
net_worker *net_worker_start(uint32_t index, net_worker_handler handler,
                             void (*on_start)(net_worker *w, void *ctx), void *ctx);
/* Posts a copy of m (and of m->bytes); any thread. False when the worker is stopping or out of
 * memory: the caller keeps its fd then. */
bool net_worker_post(net_worker *w, const net_worker_msg *m);
/* net_worker_post, refused also when the inbox would then hold more than max_bytes of payload:
 * the bound on what another thread can queue for this one faster than it handles it (the UDP
 * relay's packets, --udp-relay-bytes). */
bool net_worker_post_within(net_worker *w, const net_worker_msg *m, size_t max_bytes);
/* Posts NET_WORKER_STOP, waits for the thread to end, frees the worker. Messages posted after
 * the stop are refused; those still queued are dropped (fds closed). */
void net_worker_stop(net_worker *w);

/* The worker's loop and index; for the handler, on the worker's thread. */
uv_loop_t *net_worker_loop(net_worker *w);
uint32_t net_worker_index(const net_worker *w);

#endif

#include "net_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <unistd.h>
#include <time.h>

#include "net_log.h"
#include "net_session.h"

#define NET_OUT_KEEP_CAP                                                                           \
    (16u * 1024u) /* empty output buffers above this are released: a burst must not pin memory on  \
                     thousands of idle clients */
/* Kernel send buffer per game socket. Left to autotuning it grows to megabytes (tcp_wmem), which
 * for a client that stops reading means seconds of stale snapshots queued where our byte count
 * cannot see them, and the slow-reader limits would only act once megabytes sit in the kernel.
 * Capped, the backlog shows up in our own queue, where stale snapshots are dropped instead of
 * delivered late. 128 KiB (Linux doubles it) still covers a 64 KiB snapshot per tick to a
 * client that keeps up, and the bandwidth-delay product of a 100 Mb/s, 20 ms link. What the
 * kernel does hold still counts toward a client's lag ("What waits in the kernel" below). */
#define NET_SNDBUF_BYTES (128 * 1024)

/* The bytes the kernel took, in runs by queue time (conn_kernel_took): enough runs for twice the
 * lag at NET_KERNEL_RUNS / 2 runs per lag, which the sweep's refresh never lets pile up further
 * for a client it would not cut. */
#define NET_KERNEL_RUNS 32u

typedef struct net_kernel_run {
    uint64_t end;      /* the byte count written to the socket at the run's end */
    uint64_t since_us; /* monotonic queue time of the run's oldest byte */
} net_kernel_run;

typedef struct net_conn {
    uv_tcp_t tcp;         /* the socket; tcp.data points back here */
    uv_write_t wreq;      /* the one write in flight */
    net_buf inflight;     /* bytes handed to uv_write, alive until its callback */
    bool writing;         /* wreq is in flight */
    bool closing;         /* uv_close has been called */
    bool lingering;       /* WebSocket closed by us: reading and discarding until the peer's EOF */
    size_t inflight_sent; /* of inflight, what uv_try_write wrote before uv_write took the rest */
    uv_shutdown_t shutdown_req;           /* the FIN after the close frame, while lingering */
    net_conn_host *host;                  /* the loop's owner */
    net_server *srv;                      /* the server this client belongs to */
    net_client client;                    /* protocol state */
    uint64_t written;                     /* bytes the kernel took from us, ever */
    net_kernel_run runs[NET_KERNEL_RUNS]; /* a ring: those the peer may not have acknowledged */
    uint32_t run_head;                    /* the oldest run's slot */
    uint32_t run_count;                   /* runs in the ring */
} net_conn;

void net_conn_set_clock(net_server *srv) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    net_server_set_clock(srv, uv_hrtime() / 1000u,
                         (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
}

static void addr_str(const struct sockaddr_storage *ss, char *out, size_t size) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof ip);
        port = ntohs(a->sin_port);
        snprintf(out, size, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof ip);
        port = ntohs(a->sin6_port);
        snprintf(out, size, "[%s]:%d", ip, port);
    } else {
        snprintf(out, size, "-");
    }
}

/* The connection a client is embedded in: the server hands back the net_client it was given. */
static net_conn *conn_of(net_client *c) {
    return (net_conn *)(void *)((char *)c - offsetof(net_conn, client));
}

/* ---- What waits in the kernel ----------------------------------------------------------------
 * The kernel's send buffer holds what a slow reader has not taken yet, 256 KiB at most
 * (NET_SNDBUF_BYTES), which at 10 kB/s is 25 s of stale snapshots our own queue never sees. So
 * every write is remembered by its queue time and where it ends in the byte stream, and the
 * kernel says (SIOCOUTQ) how many bytes it still holds unacknowledged: the oldest of those gives
 * the client's lag (docs/net-design.md, "Slow readers"). */

/* n more bytes taken by the kernel, the oldest of them queued at since_us. Runs closer in queue
 * time than a sixteenth of the lag are merged, the merged run keeping the older time (a lag
 * overstated, never understated); so is a run that finds the ring full. */
static void conn_kernel_took(net_conn *conn, size_t n, uint64_t since_us) {
    if (n == 0) return;
    conn->written += n;
    uint64_t merge_us = (uint64_t)conn->srv->cfg.max_snapshot_lag_ms * 1000u / 16u;
    if (conn->run_count > 0) {
        net_kernel_run *last =
            &conn->runs[(conn->run_head + conn->run_count - 1u) % NET_KERNEL_RUNS];
        if (conn->run_count == NET_KERNEL_RUNS || since_us <= last->since_us + merge_us) {
            last->end = conn->written;
            return;
        }
    }
    net_kernel_run *r = &conn->runs[(conn->run_head + conn->run_count) % NET_KERNEL_RUNS];
    r->end = conn->written;
    r->since_us = since_us;
    if (conn->run_count++ == 0) conn->client.kernel_since_us = since_us;
}

/* net_client.io_kernel_refresh: the runs the peer acknowledged are dropped. */
static void conn_kernel_refresh(net_client *c) {
    net_conn *conn = conn_of(c);
    uv_os_fd_t fd;
    int unacked = 0;
    if (conn->closing || uv_fileno((uv_handle_t *)&conn->tcp, &fd) != 0 ||
        ioctl(fd, SIOCOUTQ, &unacked) != 0 || unacked < 0)
        return; /* nothing learnt: the lag stays as known */
    /* A socket taken over from the front may still hold bytes the front wrote (a WebSocket's
     * 101): counted unacknowledged here too, they only make the lag look longer, never shorter. */
    uint64_t acked = conn->written > (uint64_t)unacked ? conn->written - (uint64_t)unacked : 0;
    while (conn->run_count > 0 && conn->runs[conn->run_head].end <= acked) {
        conn->run_head = (conn->run_head + 1u) % NET_KERNEL_RUNS;
        conn->run_count--;
    }
    c->kernel_since_us = conn->run_count > 0 ? conn->runs[conn->run_head].since_us : 0;
}

static void on_conn_closed(uv_handle_t *h) {
    net_conn *conn = h->data;
    net_conn_host *host = conn->host;
    net_buf_free(&conn->inflight);
    free(conn);
    host->conn_count--;
    if (host->on_freed) host->on_freed(host);
}

/* The one close path: idempotent; memory is freed in the close callback. reason counts only when
 * the server had not decided on the close itself (net_client_close). */
static void conn_close(net_conn *conn, net_disconnect_reason reason) {
    if (conn->closing) return;
    conn->closing = true;
    bool welcomed = conn->client.admission.admitted;
    net_client_close(conn->srv, &conn->client, reason);
    if (conn->host->on_client_closed) conn->host->on_client_closed(conn->host, conn->srv, welcomed);
    /* Cut for lag: what the kernel still holds is stale by definition, and a FIN would come after
     * it, as late as the reader is slow. A reset discards it: the reader learns now. */
    if (net_client_reason(&conn->client) == NET_DISC_SNAPSHOT_LAG && !conn->lingering &&
        uv_tcp_close_reset(&conn->tcp, on_conn_closed) == 0)
        return;
    uv_close((uv_handle_t *)&conn->tcp, on_conn_closed);
}

/* Front mode: the socket moves to its room's thread. libuv has no detach, so the descriptor is
 * duplicated for the worker and the handle closed here (uv_close takes its epoll registration
 * out, by descriptor, before closing it; the socket lives on in the duplicate). */
static void conn_hand_off(net_conn *conn) {
    net_client *c = &conn->client;
    uv_os_fd_t fd;
    int dup_fd = -1;
    if (conn->host->on_hand_off && uv_fileno((uv_handle_t *)&conn->tcp, &fd) == 0)
        dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
        net_log(NET_LOG_WARN, "hand_off_error", c->id, c->addr, "cannot hand the socket over");
        conn_close(conn, NET_DISC_OUT_OF_MEMORY);
        return;
    }
    uv_read_stop((uv_stream_t *)&conn->tcp);
    conn->host->on_hand_off(conn->host, conn->srv, c, dup_fd);
    conn_close(conn, NET_DISC_CLIENT_CLOSED); /* counts no disconnect: it moved */
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

static void on_shutdown(uv_shutdown_t *req, int status) {
    net_conn *conn = req->data;
    if (status < 0 && !conn->closing) conn_close(conn, NET_DISC_WRITE_ERROR);
}

static void conn_linger(net_conn *conn) {
    conn->lingering = true;
    conn->shutdown_req.data = conn;
    uv_read_stop((uv_stream_t *)&conn->tcp);
    if (uv_shutdown(&conn->shutdown_req, (uv_stream_t *)&conn->tcp, on_shutdown) != 0 ||
        uv_read_start((uv_stream_t *)&conn->tcp, on_alloc, on_read) != 0)
        conn_close(conn, NET_DISC_WRITE_ERROR);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    net_conn *conn = h->data;
    buf->base = (char *)conn->host->read_buf;
    buf->len = conn->host->read_buf_size;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    net_conn *conn = s->data;
    if (conn->closing) return;
    if (conn->lingering) { /* what the peer sends after our close frame is not read */
        if (nread < 0) conn_close(conn, NET_DISC_CLIENT_CLOSED);
        return;
    }
    if (nread < 0) {
        conn_close(conn, nread == UV_EOF ? NET_DISC_CLIENT_CLOSED : NET_DISC_READ_ERROR);
        return;
    }
    if (nread == 0) return;
    net_conn_set_clock(conn->srv);
    net_client *c = &conn->client;
    net_client_feed(conn->srv, c, (const uint8_t *)buf->base, (size_t)nread);
    if (!net_client_accepts_input(c)) uv_read_stop(s); /* nothing more is read */
}

static void on_write(uv_write_t *req, int status) {
    net_conn *conn = req->data;
    conn->writing = false;
    if (conn->closing) return; /* cancelled by uv_close; the close callback frees */
    net_client *c = &conn->client;
    if (status < 0) {
        conn_close(conn, NET_DISC_WRITE_ERROR);
        return;
    }
    conn_kernel_took(conn, c->inflight - conn->inflight_sent, c->inflight_since_us);
    conn->inflight.len = 0;
    net_buf_trim(&conn->inflight, NET_OUT_KEEP_CAP);
    net_client_written(conn->srv, c);
}

/* One uv_write per client per loop iteration: everything appended since the last one goes out
 * together, in append (= request) order. */
static void flush_client(net_client *c) {
    net_conn *conn = conn_of(c);
    if (conn->closing) return;
    net_io io = net_client_next_io(c);
    if (io == NET_IO_CUT) {
        conn_close(conn, net_client_reason(c));
        return;
    }
    if (conn->writing || io == NET_IO_NONE) return; /* on_write marks it dirty again */
    if (io == NET_IO_HAND_OFF) {
        conn_hand_off(conn);
        return;
    }
    if (io == NET_IO_CLOSE) {
        /* A transport that sent a goodbye of its own (a WebSocket's close frame, an HTTP
         * refusal) lingers: a close with unread input would reset the connection, and a reset
         * can destroy it before the peer reads it. The FIN says we are done; the peer's EOF (or
         * the CLOSING timeout, a kill) ends it. */
        if (c->transport->linger(c)) {
            if (!conn->lingering) conn_linger(conn);
            return;
        }
        conn_close(conn, net_client_reason(c)); /* fatal error or Goodbye flushed */
        return;
    }
    net_client_take_output(c, &conn->inflight);
    uv_buf_t b = uv_buf_init((char *)conn->inflight.data, (unsigned)conn->inflight.len);
    /* The kernel nearly always takes a tick's output whole: write it directly. uv_write would
     * do the same write() and then, on completion, re-arm the socket's epoll registration
     * (uv__drain), one epoll_ctl per client per tick for nothing, plus a deferred callback.
     * Only what the kernel did not take goes through uv_write and waits for POLLOUT. */
    int sent = uv_try_write((uv_stream_t *)&conn->tcp, &b, 1);
    if (sent > 0) conn_kernel_took(conn, (size_t)sent, c->inflight_since_us);
    conn->inflight_sent = sent > 0 ? (size_t)sent : 0;
    if (sent == (int)b.len) {
        conn->inflight.len = 0;
        net_buf_trim(&conn->inflight, NET_OUT_KEEP_CAP);
        net_client_written(conn->srv, c);
        return;
    }
    if (sent < 0 && sent != UV_EAGAIN) {
        conn_close(conn, NET_DISC_WRITE_ERROR);
        return;
    }
    if (sent > 0) b = uv_buf_init(b.base + sent, b.len - (unsigned)sent);
    conn->wreq.data = conn;
    int rc = uv_write(&conn->wreq, (uv_stream_t *)&conn->tcp, &b, 1, on_write);
    if (rc < 0) {
        conn_close(conn, NET_DISC_WRITE_ERROR);
        return;
    }
    conn->writing = true;
}

bool net_conn_flush(net_server *srv) {
    net_client *c;
    bool flushed = false;
    while ((c = net_server_pop_dirty(srv)) != NULL) {
        if (c->io_flush)
            c->io_flush(c);
        else
            flush_client(c);
        flushed = true;
    }
    return flushed;
}

/* Registers an open socket with its server under its peer's address; false when the server would
 * not (out of memory): the connection is then closing and frees itself. adopted: handed over by
 * the front, which counted it already (and did its transport's handshake, if any). */
static bool conn_register(net_conn *conn, bool adopted, const net_transport *t) {
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char addr[64] = "-";
    if (uv_tcp_getpeername(&conn->tcp, (struct sockaddr *)&ss, &len) == 0)
        addr_str(&ss, addr, sizeof addr);
    net_conn_set_clock(conn->srv);
    conn->client.transport = t;
    conn->client.io_kernel_refresh = conn_kernel_refresh;
    bool ok = adopted ? net_client_open_adopted(conn->srv, &conn->client, addr)
                      : net_client_open(conn->srv, &conn->client, addr);
    if (!ok) {
        conn->closing = true;
        uv_close((uv_handle_t *)&conn->tcp, on_conn_closed);
    }
    return ok;
}

void net_conn_accept(net_conn_host *host, net_server *srv, uv_stream_t *listener,
                     const net_transport *t) {
    net_conn *conn = calloc(1, sizeof *conn);
    if (!conn) {
        net_log(NET_LOG_ERROR, "accept_error", 0, NULL, "out of memory");
        return;
    }
    conn->host = host;
    conn->srv = srv;
    uv_tcp_init(host->loop, &conn->tcp);
    conn->tcp.data = conn;
    host->conn_count++;
    if (uv_accept(listener, (uv_stream_t *)&conn->tcp) != 0) {
        conn->closing = true;
        uv_close((uv_handle_t *)&conn->tcp, on_conn_closed);
        return;
    }
    uv_tcp_nodelay(&conn->tcp, 1);
    int sndbuf = NET_SNDBUF_BYTES;
    uv_send_buffer_size((uv_handle_t *)&conn->tcp, &sndbuf);
    if (!conn_register(conn, false, t)) return;
    uv_read_start((uv_stream_t *)&conn->tcp, on_alloc, on_read);
}

/* A socket handed over by descriptor (taken over: closed on failure), registered with srv as a
 * connection already counted by the front. NULL when it could not be (the connection is then
 * closing and frees itself). */
static net_conn *conn_open_fd(net_conn_host *host, net_server *srv, int fd,
                              const net_transport *t) {
    net_conn *conn = calloc(1, sizeof *conn);
    if (!conn) {
        close(fd);
        return NULL;
    }
    conn->host = host;
    conn->srv = srv;
    uv_tcp_init(host->loop, &conn->tcp);
    conn->tcp.data = conn;
    host->conn_count++;
    /* The socket options (TCP_NODELAY, the send buffer cap) were set at accept, on the front:
     * they belong to the socket, not to the descriptor, and come along. */
    if (!t || uv_tcp_open(&conn->tcp, (uv_os_sock_t)fd) != 0) {
        close(fd);
        conn->closing = true;
        uv_close((uv_handle_t *)&conn->tcp, on_conn_closed);
        return NULL;
    }
    return conn_register(conn, true, t) ? conn : NULL;
}

bool net_conn_adopt(net_conn_host *host, net_server *srv, int fd, const net_hello_request *t,
                    const uint8_t *leftover, size_t leftover_len) {
    net_conn *conn = conn_open_fd(host, srv, fd, net_transport_at(t->transport));
    if (!conn) return false;
    conn->client.ev.all_events = t->grant.admin && t->all_events;
    conn->client.snap.snapshot_rate_hz = t->snapshot_rate_hz;
    conn->client.snap.quantized = t->quantized;
    net_session_welcome(srv, &conn->client, t->request_id, &t->grant, t->name, t->room);
    if (leftover_len) net_client_feed(srv, &conn->client, leftover, leftover_len);
    if (net_client_accepts_input(&conn->client))
        uv_read_start((uv_stream_t *)&conn->tcp, on_alloc, on_read);
    return true;
}

void net_conn_refuse(net_conn_host *host, net_server *srv, int fd, uint32_t request_id, int status,
                     uint32_t transport) {
    net_conn *conn = conn_open_fd(host, srv, fd, net_transport_at(transport));
    if (!conn) return;
    net_session_refuse_room(srv, &conn->client, request_id, status);
    /* Reads go on so that a peer's reset is seen; what it sends is ignored (CLOSING). */
    uv_read_start((uv_stream_t *)&conn->tcp, on_alloc, on_read);
}

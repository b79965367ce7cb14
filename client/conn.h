/* cc_conn: one TCP connection to collided, with protocol framing (proto/frame.h), or WebSocket
 * (--transport ws: PROTOCOL.md "WebSocket transport"): the upgrade to /v1 first, then one masked
 * binary frame per ClientMessage; the server's frames are read with wslay and reassembled in rx
 * (bounded by max_frame, checked from each frame's declared length).
 *
 * Reads land in a per-connection buffer that starts small and grows only up to the frame bound,
 * which is checked from the length prefix before a body byte is kept. Writes are packed straight
 * into two fixed send buffers (no allocation per message): one may be in flight with uv_write
 * while the other collects the next frames; a flush first tries uv_try_write, so a connection
 * whose socket has room never needs a write request at all.
 *
 * --transport udp (PROTOCOL.md "Datagrams: UDP through ENet", conn_udp.c): an ENet client host
 * with 2 channels whose socket libuv polls; one message per packet, no prefix; requests on channel
 * 0 (reliable), MoveIntent, MoveIntents and SnapshotAck on channel 1 (unreliable, sequenced). The
 * same hooks: connected() on ENet's connect, frame() per packet, failed() on a disconnect (its
 * data, the server's error code, in the reason). */
#ifndef COLLIDE_CLIENT_CONN_H
#define COLLIDE_CLIENT_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "collide.pb-c.h"

#define CC_CONN_RX_INITIAL 4096u /* receive buffer to start with; grows to the frame bound */
#define CC_CONN_TX_CAP 2048u     /* each of the two send buffers: about 3 s of intents */

typedef struct cc_conn cc_conn;
struct _ENetHost;
struct _ENetPeer;

typedef struct cc_conn_hooks {
    void (*connected)(cc_conn *c, int status);                  /* status 0 or a uv error */
    void (*frame)(cc_conn *c, const uint8_t *body, size_t len); /* one ServerMessage */
    void (*failed)(cc_conn *c, int status, const char *reason); /* EOF, read error, bad frame */
    void (*closed)(cc_conn *c);                                 /* handle closed: memory free */
} cc_conn_hooks;

struct cc_conn {
    uv_tcp_t tcp;                          /* the socket; tcp.data points back to this struct */
    uv_connect_t connect_req;              /* the pending connect */
    uv_write_t write_req;                  /* the single write in flight, if any */
    const cc_conn_hooks *hooks;            /* callbacks into the owner */
    void *user;                            /* owner's context */
    uint8_t *rx;                           /* received bytes not yet consumed (heap, grows) */
    uint32_t rx_len;                       /* bytes held in rx */
    uint32_t rx_cap;                       /* capacity of rx */
    uint32_t max_frame;                    /* largest frame body accepted */
    uint8_t tx[2][CC_CONN_TX_CAP];         /* send buffers: one in flight, one filling */
    uint32_t tx_len[2];                    /* bytes held in each */
    uint8_t tx_active;                     /* index of the buffer that collects new frames */
    bool writing;                          /* a uv_write is in flight from tx[!tx_active] */
    bool initialised;                      /* tcp was uv_tcp_init'ed, so it must be uv_close'd */
    bool closing;                          /* uv_close was called */
    bool failed_reported;                  /* failed() was already called: report once */
    uint64_t bytes_in;                     /* bytes read from the socket */
    uint64_t bytes_out;                    /* bytes accepted for sending */
    uint64_t frames_dropped;               /* frames refused because both send buffers were full */
    bool ws;                               /* WebSocket transport */
    bool ws_open;                          /* the 101 came: frames from here on */
    char ws_key[32];                       /* the Sec-WebSocket-Key sent */
    struct wslay_frame_context *ws_frames; /* the server's frames */
    const uint8_t *ws_feed;                /* bytes offered to wslay ... */
    size_t ws_feed_len;                    /* ... and how many are left */
    bool ws_in_frame;                      /* a frame's payload is being returned in chunks */
    uint64_t ws_frame_off;                 /* payload bytes of it so far */
    uint32_t ws_msg_len;                   /* bytes of the binary message reassembled in rx */
    uint64_t ws_rng;            /* masking keys (collide_xorshift64: a load tool, not a browser) */
    uint8_t *ws_read;           /* read buffer once open (rx holds messages then) */
    bool udp;                   /* ENet transport (conn_udp.c) */
    bool udp_connected;         /* ENet's connect event came */
    uint8_t udp_handles;        /* libuv handles still to close before closed() */
    struct _ENetHost *udp_host; /* the client host: one peer, 2 channels */
    struct _ENetPeer *udp_peer; /* the server */
    uv_poll_t udp_poll;         /* the host's socket, readable */
    uv_timer_t udp_timer;       /* ENet's own clock: retransmissions, pings, timeouts */
    char udp_reason[64];        /* failed()'s reason for a disconnect with data */
};

/* Starts connecting. Returns 0 or a uv error; on an error after the handle was initialised,
 * hooks->closed still follows (and nothing else) when c->initialised is true. */
int cc_conn_start(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                  const cc_conn_hooks *hooks, void *user, uint32_t max_frame);
/* The same over WebSocket: hooks->connected follows the 101 (a refused or broken upgrade is
 * reported there, as UV_EPROTO). */
int cc_conn_start_ws(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                     const cc_conn_hooks *hooks, void *user, uint32_t max_frame);
/* The same over ENet (IPv4 only, as libenet 1.3): hooks->connected follows ENet's connect; a
 * connect that times out or is refused is reported there as UV_ETIMEDOUT. */
int cc_conn_start_udp(cc_conn *c, uv_loop_t *loop, const struct sockaddr *addr,
                      const cc_conn_hooks *hooks, void *user, uint32_t max_frame);
/* Packs msg behind a length prefix into the send buffer. Returns false (and counts a drop) when
 * the buffer has no room: the peer is not reading. Nothing is written until cc_conn_flush. */
bool cc_conn_queue(cc_conn *c, const Collide__V1__ClientMessage *msg);
/* Hands queued bytes to the socket. */
void cc_conn_flush(cc_conn *c);
/* Bytes queued and not yet handed to the kernel. */
uint32_t cc_conn_pending(const cc_conn *c);
/* Closes the connection (idempotent); hooks->closed follows from the loop. */
void cc_conn_close(cc_conn *c);

#endif

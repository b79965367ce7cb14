/* cc_cli: command-line helpers shared by the subcommands: strict number parsing with messages
 * that name the flag and the accepted range, address resolution, the clock, and the file
 * descriptor limit. */
#ifndef COLLIDE_CLIENT_CLI_H
#define COLLIDE_CLIENT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#define CC_EXIT_OK 0
#define CC_EXIT_FAIL 1  /* thresholds crossed, server unreachable, ping failed */
#define CC_EXIT_USAGE 2 /* bad parameters */

typedef struct cc_common_opts {
    const char *host;       /* --host */
    uint16_t port;          /* --port */
    const char *token;      /* --token ("" when none): the shared token or a ticket, sent as is */
    uint32_t max_frame;     /* --max-frame: largest server frame accepted */
    bool ws;                /* --transport ws: WebSocket (default port then 7778) */
    bool port_set;          /* --port was given */
    bool udp;               /* --transport udp: ENet (default port then 7779) */
    uint32_t udp_baselines; /* --udp-baselines: snapshot states kept for UDP deltas */
} cc_common_opts;

/* getopt_long codes of the common flags, above any single-letter option. */
enum {
    CC_OPT_HOST = 1000,
    CC_OPT_PORT,
    CC_OPT_TOKEN,
    CC_OPT_MAX_FRAME,
    CC_OPT_TRANSPORT,
    CC_OPT_UDP_BASELINES,
    CC_OPT_FIRST_FREE
};

#define CC_COMMON_LONG_OPTIONS                                                                     \
    {"host", 1, NULL, CC_OPT_HOST}, {"port", 1, NULL, CC_OPT_PORT},                                \
        {"token", 1, NULL, CC_OPT_TOKEN}, {"max-frame", 1, NULL, CC_OPT_MAX_FRAME},                \
        {"transport", 1, NULL, CC_OPT_TRANSPORT},                                                  \
        {"udp-baselines", 1, NULL, CC_OPT_UDP_BASELINES}, {                                        \
        "help", 0, NULL, 'h'                                                                       \
    }

#define CC_COMMON_HELP                                                                             \
    "  --host HOST         server address or name (default 127.0.0.1)\n"                           \
    "  --port N            game port (default 7777; 7778 with --transport ws, 7779 with udp)\n"    \
    "  --transport tcp|ws|udp  length-prefixed TCP, WebSocket on /v1, or UDP through ENet 1.3\n"   \
    "                      (snapshots quantized, each a delta against an acknowledged one)\n"      \
    "                      (default tcp)\n"                                                        \
    "  --udp-baselines N   UDP: snapshot states kept as baselines (default 32, 1..1024)\n"         \
    "  --token SECRET      Hello.token, when the server requires one: its shared token, or a\n"    \
    "                      ticket (collide-client ticket --room default)\n"                        \
    "  --max-frame BYTES   largest frame accepted from the server (default 65536)\n"               \
    "  -h, --help          this text\n"

void cc_common_defaults(cc_common_opts *o);
/* Handles one common option; returns 1 when handled, 0 when not a common option, -1 on a bad
 * value (message printed). */
int cc_common_option(const char *cmd, int code, const char *arg, cc_common_opts *o);
struct cc_conn;
struct cc_conn_hooks;
/* cc_conn_start, cc_conn_start_ws or cc_conn_start_udp, as --transport says. */
int cc_common_connect(const cc_common_opts *o, struct cc_conn *c, uv_loop_t *loop,
                      const struct sockaddr *addr, const struct cc_conn_hooks *hooks, void *user);

bool cc_parse_u32(const char *cmd, const char *flag, const char *s, uint32_t lo, uint32_t hi,
                  uint32_t *out);
bool cc_parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out);
bool cc_parse_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
                     double *out);
/* "10", "10s", "250ms", "2m": seconds, in [lo, hi]. */
bool cc_parse_duration(const char *cmd, const char *flag, const char *s, double lo, double hi,
                       double *out);
/* n comma-separated finite numbers. */
bool cc_parse_floats(const char *cmd, const char *flag, const char *s, float *out, int n);

#define CC_ROOM_NAME_MAX 64u /* PROTOCOL.md: a room name is 1..64 bytes */
/* A room name as PROTOCOL.md has it: 1..64 bytes of [A-Za-z0-9_.:-] ("" is not one: a Hello's
 * empty room means `default`). */
bool cc_room_name_valid(const char *name);

/* Refuses the words left after the options (none are taken): prints the first and returns false.
 * first is getopt's optind. */
bool cc_no_operands(const char *cmd, int argc, char **argv, int first);

/* Resolves host:port (numeric or by name). Returns 0 or a uv error; prints nothing. */
int cc_resolve(const char *host, uint16_t port, struct sockaddr_storage *out);
/* cc_resolve of the common --host/--port; on failure says why on stderr and returns false. */
bool cc_resolve_common(const char *cmd, const cc_common_opts *o, struct sockaddr_storage *out);
/* Writes "cannot connect to HOST:PORT: why" for a failed connect (uv status) into msg. */
void cc_connect_failure(char *msg, size_t msg_size, const cc_common_opts *o, int status);

/* Monotonic microseconds. */
/* uv_loop_close, loudly: a handle still open at the end is a bug in the tool (every handle must be
 * closed, STYLE.md), so it is named on stderr and false is returned for the caller to fail on. */
bool cc_loop_close(uv_loop_t *loop, const char *cmd);

uint64_t cc_now_us(void);
/* Wall-clock microseconds since the epoch, for reports. */
uint64_t cc_wall_us(void);

/* Makes sure `needed` descriptors can be open, raising the soft limit up to the hard one. On
 * failure writes an explanation into msg and returns false. */
bool cc_fd_limit_ensure(uint64_t needed, char *msg, size_t msg_size);

#endif

/* net_log: one logfmt line per event on stderr:
 *   ts=2026-11-21T00:31:23.123Z level=info event=client_connected client=7 addr=127.0.0.1:50432
 * msg="..." client is omitted when 0 and addr when NULL; msg is quoted with " and \ escaped and
 * control characters replaced, so a client-chosen string (a Hello name) cannot forge a line. */
#ifndef COLLIDE_NET_LOG_H
#define COLLIDE_NET_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "net_config.h"

void net_log_set_level(net_log_level level);

/* Moves the writing off the calling thread: lines go to a ring of buffer_bytes (at least one
 * line) that a writer thread drains to stderr with blocking writes, so a reader of stderr that
 * stalls never stalls the event loop. A line that does not fit is dropped and counted
 * (net_log_dropped_total); once the writer catches up it writes one event=log_dropped line with
 * the number missed. Without it (tests, tools) each line is one synchronous write. We do not set
 * O_NONBLOCK on stderr instead: the flag belongs to the open file description, which a shell,
 * a supervisor or docker shares with us, and would make their own writes fail with EAGAIN.
 * False if the thread or the ring cannot be made (logging stays synchronous). */
bool net_log_start(size_t buffer_bytes);

/* Waits up to timeout_ms for the ring to be written, then stops the writer; later lines are
 * synchronous again. False if the ring was not emptied in time (stderr still stalled): the rest
 * is left behind rather than the exit held up. */
bool net_log_stop(uint32_t timeout_ms);

/* Lines dropped because the ring was full, since the start. Any thread. */
uint64_t net_log_dropped_total(void);
bool net_log_enabled(net_log_level level);

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
void net_log(net_log_level level, const char *event, uint32_t client, const char *addr,
             const char *fmt, ...);

/* Like net_log, with preformatted `key=value` pairs (kv, no quoting applied) placed before msg,
 * and written whatever the log level: for lines tools parse, such as event=listening with
 * game_port= and http_port=. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void net_log_kv(net_log_level level, const char *event, const char *kv, const char *fmt, ...);

#endif

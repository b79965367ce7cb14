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

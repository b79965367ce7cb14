/* net_record: a room's recording (PROTOCOL.md "Recordings", docs/operations.md "Recordings"): the
 * journal of its run (server/journal), begun between two steps and fed by the journaled calls of
 * the room's server (srv->journal), written to --record-dir off the room's loop.
 *
 * Files: DIR/ROOM.SEQ.cjournal. ROOM is the room's name with every byte outside [A-Za-z0-9_-]
 * written as ~ and two lower-case hex digits ('.' is ~2e, ':' is ~3a): a file name never holds a
 * '/', never starts with a '.', and holds exactly two dots, so a room's files are told from any
 * other room's by their name alone. SEQ is the room's file number, at least 6 digits, one more
 * than the highest of the room's files the directory held when the room first recorded: a room's
 * files sort by time, across restarts of the daemon. Every file stands alone (its header, the
 * world's image, then the records): it replays without the files before it.
 *
 * The disk: every file operation is a uv_fs_* call with a callback (libuv's thread pool), one at a
 * time per room and in order: the directory scan, the open, the writes, the close, the deletion of
 * the room's files beyond --record-keep. The journal's bytes are taken after a tick, when
 * NET_RECORD_CHUNK bytes piled up or NET_RECORD_FLUSH_MS passed, and only while no write is in
 * flight; the buffer written goes back to the journal (journal_recycle), so the steady state
 * allocates nothing. What waits for the disk meanwhile is bounded by --record-buffer-bytes.
 *
 * Rotation: at the end of a step where the file's journal reached --record-max-bytes (and holds
 * at least as many bytes of records as of header and image, so a world larger than the bound is
 * not written out again every tick), it is finished and a new journal, with a new image, starts
 * at once: the old file ends at the tick the new one starts at.
 *
 * Failure: a file that cannot be created (open_failed), a write that fails (ENOSPC, EDQUOT:
 * disk_full; EIO, EFBIG and the rest: write_error), or more bytes waiting than
 * --record-buffer-bytes (buffer_full) drops the recording: one log line, a count in
 * collide_recordings_dropped_total{reason}, the file closed as it stands (it replays to its last
 * whole tick), and the room ticks on as if nothing happened. It records again only after an
 * admin's StartRecording.
 *
 * Everything here runs on the room's thread. */
#ifndef COLLIDE_NET_RECORD_H
#define COLLIDE_NET_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net_config.h"
#include "net_server.h"

#define NET_RECORD_SUFFIX ".cjournal"
#define NET_RECORD_CHUNK 65536u  /* journal bytes that make a write due */
#define NET_RECORD_FLUSH_MS 250u /* ... or this long since the last one */

typedef struct net_recorder net_recorder;

/* The recorder of the room `room` whose server is srv (its world, its metrics, its journal
 * pointer), on loop; it installs itself as srv->recording. With --record-rooms all it records from
 * the end of the room's first step. NULL when cfg has no --record-dir, or out of memory. */
net_recorder *net_record_create(uv_loop_t *loop, net_server *srv, const char *room,
                                const net_config *cfg);
/* After each tick callback of the room, with the steps it ran (0: none, the world is not right
 * after a step and no journal starts): drops a recording over its buffer, rotates, starts one
 * asked for, and writes what is due. */
void net_record_tick(net_recorder *r, unsigned steps);
/* The room closes: the journal is finished and written out, its file closed. drained(ctx) is
 * called once nothing is left in flight: from a callback of the loop, or from within this call
 * when a file operation is refused at once (the room's close tolerates both); a room also checks
 * net_record_drained after calling this. Idempotent. */
void net_record_close(net_recorder *r, void (*drained)(void *ctx), void *ctx);
/* Nothing in flight and no file open (NULL: true). */
bool net_record_drained(const net_recorder *r);
/* Frees a drained recorder (NULL is a no-op). */
void net_record_free(net_recorder *r);

/* A room's name as it starts its files' names (the escaping above); false when out does not hold
 * it. */
bool net_record_escape(const char *room, char *out, size_t out_size);
/* Whether name is a recording's file name (ESCAPED.SEQ.cjournal, as above), and if so its
 * sequence number and the length of its room part. */
bool net_record_parse_name(const char *name, uint64_t *seq, size_t *room_len);

#endif

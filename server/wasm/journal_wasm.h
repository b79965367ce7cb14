/* journal_wasm: journals replayed in the WebAssembly module (the viewer's recordings: PROTOCOL.md
 * "Recordings", docs/wasm.md "Journals"), and the same API natively.
 *
 * The binding copies a journal's bytes into the module (wasm_journal_create gives the room, which
 * the handle keeps while the replay reads them in place), opens it, and seeks: to any tick from
 * the journal's start to its last whole tick, forwards or backwards. The world of the replay is
 * read through the world's own rows (wasm_body, wasm_shape: world_wasm.h).
 *
 * Seeking back without replaying from the start: while it replays forwards, the handle keeps
 * checkpoints, the world's image (world_image_save) and the replay's position
 * (journal_replay_position) every `every` ticks from the start; a seek goes on from the nearest
 * checkpoint at or before its tick that lies past where the world stands, or before it
 * (world_image_load, journal_replay_resume). The start is a checkpoint of its own, the header's
 * image, which costs nothing. Their memory is bounded: a checkpoint that would pass the budget
 * first thins them (every other one dropped, `every` doubled), so they stay evenly spread over
 * what was played.
 *
 * Seek results are journal_result codes (JOURNAL_OK 0; JOURNAL_MISMATCH 2, JOURNAL_DIVERGED 3,
 * JOURNAL_CORRUPT 4 with wasm_journal_error saying at which tick and what), and
 * WASM_JOURNAL_ERR_MEMORY when the module ran out of memory. A seek past the failure gives the
 * failure again, the world where the replay stopped; a seek before it goes on from a checkpoint
 * and plays as before. Not thread-safe, as the world. */
#ifndef COLLIDE_JOURNAL_WASM_H
#define COLLIDE_JOURNAL_WASM_H

#include <stdint.h>

#include "journal.h"
#include "world_wasm.h"

#define WASM_JOURNAL_ERR_MEMORY 100 /* out of memory in the module */
/* Defaults for wasm_journal_open's 0 arguments. */
#define WASM_JOURNAL_CHECKPOINT_EVERY 300u
#define WASM_JOURNAL_CHECKPOINT_BUDGET (64u << 20)

/* What the header and the journal's world say (fields of 8, then 4 bytes: 72 in all). */
typedef struct wasm_journal_info {
    uint64_t start_tick;
    uint64_t last_tick; /* the last whole tick */
    uint64_t unix_ms;   /* the wall clock when the recording started */
    uint32_t version;   /* the format's */
    uint32_t hash_every;
    uint32_t truncated; /* 1: it ends without its end record (wasm_journal_truncated says how) */
    uint32_t max_bodies;
    float tick_rate_hz;
    float min_x, min_y, max_x, max_y; /* the world's bounds */
    float gravity_x, gravity_y;
    uint32_t pad;
} wasm_journal_info;

/* The checkpoints and what the seeks did (fields of 8, then 4 bytes: 48 in all). */
typedef struct wasm_journal_stats {
    uint64_t checkpoint_bytes; /* images kept (the start's, in the journal's bytes, not counted) */
    uint64_t ticks_replayed;   /* ticks the seeks stepped in all */
    uint64_t restores;         /* seeks that went on from a checkpoint */
    uint64_t restored_tick;    /* the last of those checkpoints' tick */
    uint32_t checkpoints;      /* kept, the start's included */
    uint32_t every;            /* ticks between them now (0: none past the start) */
    uint32_t budget;           /* bytes the images may take */
    uint32_t pad;
} wasm_journal_stats;

typedef struct wasm_journal wasm_journal;

/* A handle with room for a journal of len bytes (wasm_journal_bytes), which the binding fills
 * before wasm_journal_open; NULL when out of memory. */
wasm_journal *WASM_EXPORT(wasm_journal_create)(uint32_t len);
uint8_t *WASM_EXPORT(wasm_journal_bytes)(wasm_journal *j);
/* Opens the bytes (journal_replay_open): 0, or 1 with the reason in wasm_journal_error (not a
 * journal, another format version, a bad header or world image, a malformed record). checkpoint_
 * every and checkpoint_budget (bytes) 0 take the defaults above. Once per handle. */
int32_t WASM_EXPORT(wasm_journal_open)(wasm_journal *j, uint32_t checkpoint_every,
                                       uint32_t checkpoint_budget);
void WASM_EXPORT(wasm_journal_free)(wasm_journal *j); /* NULL is a no-op */

const wasm_journal_info *WASM_EXPORT(wasm_journal_get_info)(const wasm_journal *j);
/* The header's strings: 0 the room, 1 the world's name, 2 the daemon's version. */
const char *WASM_EXPORT(wasm_journal_header_text)(const wasm_journal *j, int32_t which);
/* How the journal ends short (journal_replay_truncated), "" for a clean end. */
const char *WASM_EXPORT(wasm_journal_truncated)(const wasm_journal *j);
/* The last failure's reason ("tick 120: state hash ..."), "" for none. */
const char *WASM_EXPORT(wasm_journal_error)(const wasm_journal *j);

/* The replay to `tick`, clamped to [start_tick, last_tick]: a seek result (above). */
int32_t WASM_EXPORT(wasm_journal_seek)(wasm_journal *j, uint64_t tick);
uint64_t WASM_EXPORT(wasm_journal_tick)(const wasm_journal *j);
uint64_t WASM_EXPORT(wasm_journal_state_hash)(const wasm_journal *j);
const wasm_journal_stats *WASM_EXPORT(wasm_journal_get_stats)(const wasm_journal *j);

/* The replay's world as wasm_world_bodies / _rows / _shape read a world: every live body whose
 * kind is in kinds (0 = both), ascending ids, into the handle's table (UINT32_MAX when it cannot
 * grow); a body's shape into the handle's shape row (NULL for an unknown or stale id). */
uint32_t WASM_EXPORT(wasm_journal_bodies)(wasm_journal *j, uint32_t kinds);
const wasm_body *WASM_EXPORT(wasm_journal_rows)(const wasm_journal *j);
const wasm_shape *WASM_EXPORT(wasm_journal_shape)(wasm_journal *j, uint32_t id);

#endif

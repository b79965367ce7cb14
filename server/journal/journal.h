/* journal: a room's run as bytes that replay it bit-exactly (PROTOCOL.md "Recordings",
 * docs/recording.md), and the replay.
 *
 * Writing: journal_start takes the world as it stands right after a step (its image, world.h),
 * then every call that changes the world between steps goes through the journaled calls below,
 * which make the world call and, when the world took it, append what replays it; journal_step
 * steps the world and notes the step (and a state hash every hash_every steps). Between steps
 * the owner takes the bytes (journal_take) and writes them wherever it likes: the journal does no
 * I/O, has no clock and no thread, and in its steady state allocates nothing (the taken buffer
 * comes back through journal_recycle). With j NULL the calls are the plain world calls, so a room
 * not recording takes the same path.
 *
 * Reading: journal_replay_open loads the image and scans the records once (so it knows the last
 * whole tick, and whether the bytes were cut short), then journal_replay_to runs the world to a
 * tick, calling the world as the daemon did and checking every stored hash and every spawned id.
 * The bytes are never trusted: anything malformed is refused with the place and the reason.
 *
 * Neither side is thread-safe; one journal per room, one replay per world. */
#ifndef COLLIDE_JOURNAL_H
#define COLLIDE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format this code writes and the only one it reads (docs/recording.md). */
#define JOURNAL_FORMAT_VERSION 1u
#define JOURNAL_MAGIC "COLLIDEJ"
/* Longest room, world and version strings the header carries (longer ones are cut). */
#define JOURNAL_MAX_NAME 255u

/* What the header says besides the world (informative: replay needs none of it but the flags). */
typedef struct journal_meta {
    uint64_t unix_ms;           /* wall clock at the start */
    uint32_t hash_every;        /* a state hash every this many steps (0: none) */
    uint32_t history_ticks;     /* the room's query history (replay sets the same) */
    bool events;                /* contact and sensor events were on (replay turns them on) */
    const char *daemon_version; /* NULL: "" */
    const char *room;
    const char *world_name;
} journal_meta;

typedef struct journal journal;

/* Bytes handed out by journal_take. */
typedef struct journal_buf {
    uint8_t *data;
    size_t len, cap;
} journal_buf;

/* Starts a journal of w as it stands (take it right after a step: world.h "World images"): its
 * header and the world's image are the first bytes journal_take gives. max_pending bounds the
 * bytes not yet taken: past it the journal stops appending and says so (journal_overflowed), and
 * its owner drops the recording. NULL when out of memory. */
journal *journal_start(const world *w, const journal_meta *meta, size_t max_pending);
void journal_free(journal *j); /* NULL is a no-op */

/* The journaled calls: the world call, and, when the world took it, its record. */
world_status journal_spawn(journal *j, world *w, world_body_kind kind, const geom_shape *shape,
                           vec2 position, float angle, uint32_t owner, world_body_id *out_id,
                           geom_shape_error *shape_error);
world_status journal_despawn(journal *j, world *w, world_body_id id);
world_status journal_set_filter(journal *j, world *w, world_body_id id, const world_filter *f);
world_status journal_set_one_way(journal *j, world *w, world_body_id id, bool one_way);
world_status journal_set_character(journal *j, world *w, world_body_id id,
                                   const world_character_options *opt);
/* world_set_intent_as, and when it took the intent and `jump` is set, world_character_jump. */
world_status journal_intent(journal *j, world *w, uint32_t owner, world_body_id id, vec2 velocity,
                            float angular_velocity, uint32_t input_seq, bool jump);
void journal_set_mover_collisions(journal *j, world *w, bool enabled);
/* world_step, noted (steps without inputs between them cost nothing until the next record). */
void journal_step(journal *j, world *w);
/* A clean end: what follows the last step is an end record (a journal without one was cut). */
void journal_finish(journal *j);

/* The bytes appended since the last take (pending steps noted first). The caller owns them until
 * it gives the buffer back with journal_recycle (or frees data). */
journal_buf journal_take(journal *j);
void journal_recycle(journal *j, journal_buf b);
/* Bytes appended and not yet taken. */
size_t journal_pending(const journal *j);
/* max_pending was crossed (or memory ran out): what was appended since is lost. */
bool journal_overflowed(const journal *j);

typedef struct journal_stats {
    uint64_t bytes; /* appended in all, header included */
    uint64_t header_bytes;
    uint64_t intents; /* intents recorded */
    uint64_t intent_bytes;
    uint64_t records; /* records of every kind */
    uint64_t start_tick;
} journal_stats;
void journal_get_stats(const journal *j, journal_stats *out);

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct journal_header {
    uint32_t version;
    uint64_t start_tick;
    uint64_t unix_ms;
    uint32_t hash_every;
    uint32_t history_ticks;
    bool events;
    char daemon_version[JOURNAL_MAX_NAME + 1];
    char room[JOURNAL_MAX_NAME + 1];
    char world_name[JOURNAL_MAX_NAME + 1];
    const uint8_t *image; /* into the caller's bytes */
    size_t image_len;
    size_t header_len; /* bytes before the first record */
} journal_header;

/* Reads the header: false, with the reason, for what is not a journal of this format version. */
bool journal_read_header(const uint8_t *data, size_t len, journal_header *out, char *err,
                         size_t err_size);

typedef enum journal_result {
    JOURNAL_OK = 0,   /* at the tick asked for */
    JOURNAL_END,      /* the journal has no more ticks (journal_replay_truncated says how) */
    JOURNAL_MISMATCH, /* a stored hash differs: the replay is not the run */
    JOURNAL_DIVERGED, /* the world answered a call otherwise than it did live */
    JOURNAL_CORRUPT,  /* a record is malformed */
} journal_result;

typedef struct journal_replay journal_replay;

/* Loads the header's world and scans the records: NULL with the reason for a bad header or image.
 * `data` must outlive the replay (it is read in place). */
journal_replay *journal_replay_open(const uint8_t *data, size_t len, char *err, size_t err_size);
void journal_replay_free(journal_replay *r);
world *journal_replay_world(journal_replay *r);
const journal_header *journal_replay_header(const journal_replay *r);
/* The last tick the journal holds whole: start_tick + its steps. */
uint64_t journal_replay_last_tick(const journal_replay *r);
/* Whether the journal ends without its end record, and if so why (cut inside a record, or
 * after a whole one), as a sentence; NULL for a clean end. */
const char *journal_replay_truncated(const journal_replay *r);
/* Runs the world to `tick` (at most the last tick), checking every hash on the way and the one
 * stored at `tick`. JOURNAL_OK there; past the last tick, JOURNAL_END at the last; else the
 * failure, with journal_replay_error saying at which tick and what. A tick before the world's
 * is JOURNAL_OK with nothing done (open the journal again to go back). */
journal_result journal_replay_to(journal_replay *r, uint64_t tick);
const char *journal_replay_error(const journal_replay *r);

/* Where a replay stands between two ticks: with an image of its world taken at that moment
 * (world_image_save), enough to go on from there later without replaying from the start (the
 * viewer's checkpoints: server/wasm/journal_wasm.c). */
typedef struct journal_position {
    uint64_t tick;         /* the world's tick */
    size_t offset;         /* of the next record to apply, from the journal's first byte */
    uint32_t steps_left;   /* of a run of steps begun */
    world_body_id prev_id; /* the previous intent's body (an intent's id is coded from it) */
} journal_position;
/* Where r stands now. Take it where journal_replay_to returned JOURNAL_OK (or on open): a replay
 * that failed stands inside a tick. */
void journal_replay_position(const journal_replay *r, journal_position *out);
/* Puts r at pos with w as its world: w must be a world loaded from an image of r's world taken
 * where r stood at pos (world_image_load). On true r owns w (its world before is destroyed), the
 * journal's events and history settings are applied to it as at open, and a failure recorded
 * before is forgotten (the replay stands before it again). False, with the reason and nothing
 * changed (w still the caller's), for a position outside the journal's records or ticks, or a
 * world at another tick. */
bool journal_replay_resume(journal_replay *r, world *w, const journal_position *pos, char *err,
                           size_t err_size);
typedef struct journal_replay_stats {
    uint64_t hashes_checked;
    uint64_t records;
    uint64_t intents;
} journal_replay_stats;
void journal_replay_get_stats(const journal_replay *r, journal_replay_stats *out);

#ifdef __cplusplus
}
#endif
#endif

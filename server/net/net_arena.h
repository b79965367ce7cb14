/* net_arena: the allocator protobuf-c unpacks every ClientMessage into (docs/net-design.md
 * "Parse arena"). One block per server, allocated at create and sized from --max-frame; each frame
 * gets a budget of NET_ARENA_PER_BYTE bytes per frame byte plus NET_ARENA_BASE, allocations are
 * bumped off the block, free is a no-op and the whole block is taken back after the frame. So the
 * read path does no malloc, and no frame can make the server allocate more than a fixed multiple of
 * its own length: a frame that needs more fails to unpack (BAD_REQUEST) instead. */
#ifndef COLLIDE_NET_ARENA_H
#define COLLIDE_NET_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why 8 per byte plus 4 KiB holds for every message the server accepts: the only repeated field of
 * a ClientMessage that builds a struct per element is Polygon.vertices, at most
 * GEOM_MAX_POLYGON_VERTICES (16) of them (counted before the unpack, net_arena_census_of), so the
 * structs of an accepted message are a fixed set whose largest case (a SpawnBody of 16 vertices
 * with position: 20 structs, their pointer array and protobuf-c's scan slab) took 880 bytes when
 * measured, a 1024-byte Hello 1,072: NET_ARENA_BASE covers either four times over. What grows with
 * the frame is then only copied bytes (Hello's strings, an unknown field's payload from a newer
 * client), one arena byte per wire byte plus one alignment unit each: well inside 8 per byte. What
 * does not fit is a frame of many tiny elements (empty sub-messages or unknown fields, 2 wire bytes
 * each) at 50-60 arena bytes per wire byte. tests/net checks the largest legitimate messages use
 * under half their budget. */
#define NET_ARENA_PER_BYTE 8u
#define NET_ARENA_BASE 4096u
/* A MoveIntents batch (protocol 1.1) is the one message whose structs grow with the frame: each
 * intent costs a MoveIntent and a Vec2 struct, a pointer and protobuf-c's scan slab (slabs double,
 * so up to two scan entries of 32 bytes per item), about 150 bytes, against as few as 4 wire bytes
 * (`0a 02 08 01`). Such a frame's budget gets this much more per intent, counted on the raw bytes
 * before the unpack (net_session.c), and a batch holds at most NET_ARENA_BATCH_BYTES_PER_ITEM
 * frame bytes' worth of intents: --max-frame / 16, 4,096 at the default 64 KiB (an intent with a
 * velocity of two nonzero components is 18-20 wire bytes, so a frame of them never reaches it).
 * tests/net checks the largest batch of the costliest items uses under half its budget. */
#define NET_ARENA_PER_BATCH_ITEM 320u
#define NET_ARENA_BATCH_BYTES_PER_ITEM 16u
#define NET_ARENA_ALIGN 16u /* max_align_t on the targets we build for */

typedef struct net_arena {
    uint8_t *base;         /* the block (one malloc, at init) */
    size_t cap;            /* bytes in the block: the budget of a max-frame frame */
    size_t limit;          /* the current frame's budget (<= cap) */
    size_t used;           /* bytes handed out for the current frame */
    size_t high_water;     /* most bytes one frame has used, for tests and the benchmark */
    bool over;             /* an allocation of the current frame was refused */
    ProtobufCAllocator pb; /* alloc/free over this arena, allocator_data = the arena */
} net_arena;

/* The budget of a frame of frame_len bytes. */
static inline size_t net_arena_budget(size_t frame_len) {
    return NET_ARENA_BASE + NET_ARENA_PER_BYTE * frame_len;
}

/* The most intents a MoveIntents batch may hold under a --max-frame of max_frame. */
static inline size_t net_arena_batch_max(uint32_t max_frame) {
    return max_frame / NET_ARENA_BATCH_BYTES_PER_ITEM;
}

/* Allocates the block for frames of at most max_frame bytes (and batches of at most
 * net_arena_batch_max(max_frame) intents). False when out of memory. */
bool net_arena_init(net_arena *a, uint32_t max_frame);
void net_arena_free(net_arena *a);

/* Starts a frame of frame_len bytes: everything handed out before is taken back. */
static inline void net_arena_begin(net_arena *a, size_t frame_len) {
    size_t budget = net_arena_budget(frame_len);
    a->limit = budget < a->cap ? budget : a->cap;
    a->used = 0;
    a->over = false;
}

/* Raises the current frame's budget for a batch of `items` intents (at most
 * net_arena_batch_max of the block's max frame, so it stays within the block). */
static inline void net_arena_allow_batch(net_arena *a, size_t items) {
    size_t budget = a->limit + NET_ARENA_PER_BATCH_ITEM * items;
    a->limit = budget < a->cap ? budget : a->cap;
}

/* What the budget above rests on, counted on a frame's raw bytes before anything is unpacked, in
 * one walk of its top-level keys. Every occurrence counts (protobuf merges repeated sub-messages
 * and concatenates their repeated fields), so the sums bound what the unpack would build. A
 * malformed frame is counted up to where it breaks and left to the unpack, which refuses it. */
typedef struct net_arena_census {
    unsigned vertices; /* Polygon.vertices under every Shape a ClientMessage carries (SpawnBody,
                        * OverlapQuery, ShapeCast), counted up to GEOM_MAX_POLYGON_VERTICES + 1:
                        * the walk stops there */
    size_t intents;    /* MoveIntents.intents over every batch, counted up to max_intents + 1 */
} net_arena_census;
net_arena_census net_arena_census_of(const uint8_t *frame, size_t len, size_t max_intents);

/* Ends the frame: records its use, takes everything back. */
static inline void net_arena_end(net_arena *a) {
    if (a->used > a->high_water) a->high_water = a->used;
    a->used = 0;
}

/* True when p was handed out by the arena (inside its block). */
static inline bool net_arena_owns(const net_arena *a, const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return a->base != NULL && b >= a->base && b < a->base + a->cap;
}

#endif

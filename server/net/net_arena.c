#include "net_arena.h"

#include <stdlib.h>
#include <string.h>

static void *arena_alloc(void *data, size_t size) {
    net_arena *a = data;
    if (size == 0) size = 1; /* a distinct, valid pointer all the same */
    size_t n = (size + (NET_ARENA_ALIGN - 1)) & ~(size_t)(NET_ARENA_ALIGN - 1);
    if (n < size || n > a->limit - a->used) {
        a->over = true; /* protobuf-c then fails the unpack and frees what it had: no-ops */
        return NULL;
    }
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

/* Everything is taken back at once by net_arena_end. */
static void arena_free(void *data, void *p) {
    (void)data;
    (void)p;
}

bool net_arena_init(net_arena *a, uint32_t max_frame) {
    memset(a, 0, sizeof *a);
    /* Pages past a frame's high water are never touched, so a large --max-frame costs address
     * space, not resident memory. */
    a->cap =
        net_arena_budget(max_frame) + NET_ARENA_PER_BATCH_ITEM * net_arena_batch_max(max_frame);
    a->base = malloc(a->cap);
    if (!a->base) return false;
    a->pb.alloc = arena_alloc;
    a->pb.free = arena_free;
    a->pb.allocator_data = a;
    return true;
}

void net_arena_free(net_arena *a) {
    free(a->base);
    a->base = NULL;
    a->cap = 0;
}

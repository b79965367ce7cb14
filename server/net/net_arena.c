#include "net_arena.h"

#include <stdlib.h>
#include <string.h>

#include "geom.h"
#include "wire.h"

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

/* The vertices of the polygons under the Shape field shape_field of a message's bytes, added to n;
 * stops past GEOM_MAX_POLYGON_VERTICES. */
static unsigned census_vertices(const uint8_t *msg, size_t len, uint32_t shape_field, unsigned n) {
    const uint8_t *sh, *pg, *v;
    size_t shn, pgn, vn;
    wire_reader carrier = wire_reader_of(msg, len);
    while (wire_next_len(&carrier, shape_field, &sh, &shn)) {
        wire_reader shape = wire_reader_of(sh, shn);
        while (wire_next_len(&shape, WIRE_SHAPE_POLYGON, &pg, &pgn)) {
            wire_reader poly = wire_reader_of(pg, pgn);
            while (wire_next_len(&poly, WIRE_POLYGON_VERTICES, &v, &vn))
                if (++n > GEOM_MAX_POLYGON_VERTICES) return n;
        }
    }
    return n;
}

/* The intents of a MoveIntents' bytes, added to n; stops past max. */
static size_t census_intents(const uint8_t *batch, size_t len, size_t n, size_t max) {
    const uint8_t *it;
    size_t itn;
    wire_reader r = wire_reader_of(batch, len);
    while (n <= max && wire_next_len(&r, WIRE_MOVE_INTENTS_INTENTS, &it, &itn))
        n++;
    return n;
}

net_arena_census net_arena_census_of(const uint8_t *frame, size_t len, size_t max_intents) {
    net_arena_census c = {0, 0};
    wire_reader r = wire_reader_of(frame, len);
    /* Past the vertex bound nothing else matters: that refusal comes first. The intents stop
     * being counted past theirs, the vertices still are. */
    while (r.p < r.end && c.vertices <= GEOM_MAX_POLYGON_VERTICES) {
        uint32_t f;
        unsigned t;
        const uint8_t *d;
        size_t n;
        if (!wire_read_key(&r, &f, &t)) break;
        if (t != WIRE_LEN) {
            if (!wire_skip(&r, t)) break;
            continue;
        }
        if (!wire_read_len(&r, &d, &n)) break;
        /* Every ClientMessage field whose message holds a Shape (tests/net/test_net_session.c
         * finds them in collide.proto's descriptors and checks each is counted here). */
        if (f == WIRE_CLIENT_SPAWN)
            c.vertices = census_vertices(d, n, WIRE_SPAWN_SHAPE, c.vertices);
        else if (f == WIRE_CLIENT_OVERLAP || f == WIRE_CLIENT_SHAPE_CAST)
            c.vertices = census_vertices(d, n, WIRE_QUERY_SHAPE, c.vertices);
        else if (f == WIRE_CLIENT_MOVE_BATCH)
            c.intents = census_intents(d, n, c.intents, max_intents);
    }
    return c;
}

/* journal_sample: writes a journal of a seeded random run through the journal calls (every kind
 * of input, as world_ops.h makes them), for the tests of collide-client replay, and prints the
 * live world's bodies at a tick in replay --dump's format, so the test can hold the replay's
 * dump to the live run's.
 *
 *   journal_sample OUT [--ticks N] [--seed S] [--hash-every K] [--dump-at T] [--plant T]
 *
 * --plant T gives one body an intent past the journal as tick T's last input (the replay must
 * then fail at tick T). */
#include <inttypes.h>

#include "harness.h"
#include "journal.h"
#include "journal_ops.h"

static void dump(world *w) {
    printf("tick %" PRIu64 " hash %016" PRIx64 "\n", world_tick(w), world_state_hash(w));
    world_body_id ids[WO_MAX_BODIES + 8];
    size_t n = world_query_aabb(w, world_get_config(w)->bounds, 0, ids, WO_MAX_BODIES + 8);
    for (size_t i = 0; i < n; i++) {
        world_body_row b;
        if (!world_body_get(w, ids[i], &b)) continue;
        printf("body %" PRIu32 " %s owner %" PRIu32 " x %.9g y %.9g angle %.9g vx %.9g vy %.9g "
               "seq %" PRIu32 "\n",
               b.id, b.kind == WORLD_BODY_STATIC ? "static" : "moving", b.owner,
               (double)b.position.x, (double)b.position.y, (double)b.angle, (double)b.velocity.x,
               (double)b.velocity.y, b.last_input_seq);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: journal_sample OUT [--ticks N] [--seed S] [--hash-every K] "
                        "[--dump-at T] [--plant T]\n");
        return 2;
    }
    long ticks = 600, seed = 1, hash_every = 60, dump_at = -1, plant = -1;
    for (int i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--ticks"))
            ticks = v;
        else if (!strcmp(argv[i], "--seed"))
            seed = v;
        else if (!strcmp(argv[i], "--hash-every"))
            hash_every = v;
        else if (!strcmp(argv[i], "--dump-at"))
            dump_at = v;
        else if (!strcmp(argv[i], "--plant"))
            plant = v;
        else
            return 2;
    }
    world *w = wo_world(24.0f, seed % 2 == 0);
    wo_gen g;
    wo_init(&g, (uint32_t)seed, 24.0f);
    journal_meta meta = {.hash_every = (uint32_t)hash_every,
                         .room = "sample",
                         .world_name = "world_ops",
                         .daemon_version = "journal_sample"};
    journal *j = journal_start(w, &meta, 1u << 28);
    FILE *out = fopen(argv[1], "wb");
    if (!j || !out) return 1;
    for (long t = 1; t <= ticks; t++) {
        int calls = 1 + (int)(collide_rng_next(&g.rng) % 8);
        for (int k = 0; k < calls; k++) {
            wo_op op;
            wo_next(&g, &op);
            world_body_id id;
            world_status st = wo_apply_journaled(j, w, &op, &id);
            wo_result(&g, &op, st, id);
        }
        for (int i = 0; t == plant && i < g.count; i++)
            if (g.moving[i] &&
                world_set_intent(w, g.live[i], v2(1.0f, 2.0f), ++g.seq[i]) == WORLD_OK)
                break;
        journal_step(j, w);
        if (t == dump_at) dump(w);
        journal_buf b = journal_take(j);
        fwrite(b.data, 1, b.len, out);
        journal_recycle(j, b);
    }
    journal_finish(j);
    journal_buf b = journal_take(j);
    fwrite(b.data, 1, b.len, out);
    journal_recycle(j, b);
    int bad = fclose(out) != 0;
    journal_free(j);
    world_destroy(w);
    return bad;
}

/* The journal (server/journal, docs/recording.md): a run recorded through the journaled calls
 * replays to the same state hash at every tick, with every kind of record (spawns of every kind
 * and shape, despawns, filters, one-way flags, characters, intents with turning and jumps, stale
 * ones, mover collisions switched); a journal started mid-run stands alone; an input that skipped
 * the journal makes the replay fail at the first stored hash after it, naming that tick; a cut
 * journal replays up to its last whole tick and says so; another format version, a damaged
 * header and damaged records are refused with a reason. */
#include "harness.h"
#include "journal.h"
#include "journal_ops.h"

#define RUN_TICKS 240

/* The bytes of a recording, gathered from journal_take at random moments. */
typedef struct file {
    uint8_t *data;
    size_t len;
} file;
static void take(journal *j, file *f) {
    journal_buf b = journal_take(j);
    f->data = realloc(f->data, f->len + b.len + 1);
    memcpy(f->data + f->len, b.data, b.len);
    f->len += b.len;
    journal_recycle(j, b);
}

typedef struct run {
    file f;
    uint64_t start_tick;
    uint64_t hash[RUN_TICKS + 1]; /* the live world's hash at start_tick + k */
    uint64_t planted_tick;        /* the tick whose step first saw an input the journal missed */
} run;

/* Records `ticks` ticks of a random run on w from its current state; plant > 0 gives a body an
 * intent straight through the world, past the journal, as that tick's last input. */
static void record(world *w, wo_gen *g, run *out, int ticks, int hash_every, int plant) {
    journal_meta meta = {.hash_every = (uint32_t)hash_every, .room = "test", .world_name = "ops"};
    journal *j = journal_start(w, &meta, 1u << 24);
    CHECK(j != NULL);
    out->start_tick = world_tick(w);
    out->hash[0] = world_state_hash(w);
    collide_rng takes = {77u};
    for (int t = 1; t <= ticks; t++) {
        int calls = 1 + (int)(collide_rng_next(&g->rng) % 10);
        for (int k = 0; k < calls; k++) {
            wo_op op;
            wo_next(g, &op);
            world_body_id id;
            world_status st;
            st = wo_apply_journaled(j, w, &op, &id);
            wo_result(g, &op, st, id);
        }
        for (int i = 0; t == plant && i < g->count && !out->planted_tick; i++)
            if (g->moving[i] &&
                world_set_intent(w, g->live[i], v2(1.0f, 2.0f), ++g->seq[i]) == WORLD_OK)
                out->planted_tick = world_tick(w) + 1;
        if (t % 50 == 0) journal_set_mover_collisions(j, w, (t / 50) % 2 == 0);
        journal_step(j, w);
        out->hash[t] = world_state_hash(w);
        if (collide_rng_next(&takes) % 7 == 0) take(j, &out->f);
    }
    journal_finish(j);
    take(j, &out->f);
    CHECK(!journal_overflowed(j));
    journal_free(j);
}

/* Replays f tick by tick against the live hashes: the number of ticks that matched. */
static int replay_matches(const run *rn, int ticks) {
    char err[200];
    journal_replay *r = journal_replay_open(rn->f.data, rn->f.len, err, sizeof err);
    if (!r) {
        fprintf(stderr, "open: %s\n", err);
        return -1;
    }
    int matched = 0;
    for (int t = 0; t <= ticks; t++) {
        journal_result res = journal_replay_to(r, rn->start_tick + (uint64_t)t);
        if (res != JOURNAL_OK || world_state_hash(journal_replay_world(r)) != rn->hash[t]) {
            fprintf(stderr, "tick %d: result %d %s\n", t, res, journal_replay_error(r));
            break;
        }
        matched++;
    }
    journal_replay_free(r);
    return matched;
}

static void test_replay_equals_the_run(void) {
    for (uint32_t seed = 1; seed <= 8; seed++) {
        for (int gravity = 0; gravity < 2; gravity++) {
            world *w = wo_world(20.0f, gravity);
            wo_gen g;
            wo_init(&g, seed * 31u + (uint32_t)gravity, 20.0f);
            /* half the runs start mid-run: the journal must stand alone */
            if (seed % 2 == 0) {
                run warm = {0};
                record(w, &g, &warm, 60, 0, 0);
                free(warm.f.data);
            }
            static run rn;
            memset(&rn, 0, sizeof rn);
            record(w, &g, &rn, RUN_TICKS, 1 + (int)(seed % 4) * 20, 0);
            CHECK(replay_matches(&rn, RUN_TICKS) == RUN_TICKS + 1);
            /* straight to the end: every hash checked, the end clean */
            char err[200];
            journal_replay *r = journal_replay_open(rn.f.data, rn.f.len, err, sizeof err);
            CHECK(r != NULL);
            CHECK(journal_replay_to(r, UINT64_MAX) == JOURNAL_END);
            CHECK(journal_replay_truncated(r) == NULL);
            CHECK(journal_replay_last_tick(r) == rn.start_tick + RUN_TICKS);
            journal_replay_stats st;
            journal_replay_get_stats(r, &st);
            CHECK(st.hashes_checked >= RUN_TICKS / 61);
            CHECK(world_state_hash(journal_replay_world(r)) == rn.hash[RUN_TICKS]);
            journal_replay_free(r);
            free(rn.f.data);
            world_destroy(w);
        }
    }
}

/* An intent applied past the journal: the replay fails at the tick whose step first saw it, and
 * names that tick. */
static void test_unjournaled_input_fails_at_its_tick(void) {
    for (uint32_t seed = 1; seed <= 6; seed++) {
        world *w = wo_world(20.0f, seed % 2);
        wo_gen g;
        wo_init(&g, 1000u + seed, 20.0f);
        static run rn;
        memset(&rn, 0, sizeof rn);
        record(w, &g, &rn, RUN_TICKS, 1, 40 + (int)seed * 17);
        CHECK(rn.planted_tick != 0);
        char err[200];
        journal_replay *r = journal_replay_open(rn.f.data, rn.f.len, err, sizeof err);
        CHECK(r != NULL);
        journal_result res = journal_replay_to(r, UINT64_MAX);
        /* a hash after every step: the first one after the planted input differs */
        char want[64];
        snprintf(want, sizeof want, "tick %llu: state hash", (unsigned long long)rn.planted_tick);
        CHECK(res == JOURNAL_MISMATCH);
        CHECK(strncmp(journal_replay_error(r), want, strlen(want)) == 0);
        journal_replay_free(r);
        free(rn.f.data);
        world_destroy(w);
    }
}

/* Every cut past the header replays to its last whole tick, with that tick's live hash, and says
 * it was cut; cuts inside the header are refused. */
static void test_cut_journal_replays_to_its_last_whole_tick(void) {
    world *w = wo_world(20.0f, true);
    wo_gen g;
    wo_init(&g, 4242u, 20.0f);
    static run rn;
    memset(&rn, 0, sizeof rn);
    record(w, &g, &rn, RUN_TICKS, 30, 0);
    journal_header h;
    char err[200];
    CHECK(journal_read_header(rn.f.data, rn.f.len, &h, err, sizeof err));
    for (size_t cut = 0; cut < rn.f.len; cut += 1 + cut / 50) {
        journal_replay *r = journal_replay_open(rn.f.data, cut, err, sizeof err);
        if (cut < h.header_len) {
            CHECK(r == NULL);
            continue;
        }
        CHECK(r != NULL);
        if (!r) continue;
        CHECK(journal_replay_truncated(r) != NULL);
        uint64_t last = journal_replay_last_tick(r);
        CHECK(journal_replay_to(r, UINT64_MAX) == JOURNAL_END);
        CHECK(world_tick(journal_replay_world(r)) == last);
        CHECK(world_state_hash(journal_replay_world(r)) == rn.hash[last - rn.start_tick]);
        journal_replay_free(r);
    }
    free(rn.f.data);
    world_destroy(w);
}

static void test_bad_journals_are_refused(void) {
    world *w = wo_world(20.0f, true);
    wo_gen g;
    wo_init(&g, 99u, 20.0f);
    static run rn;
    memset(&rn, 0, sizeof rn);
    record(w, &g, &rn, 120, 1, 0);
    char err[200];
    uint8_t *copy = malloc(rn.f.len);
    memcpy(copy, rn.f.data, rn.f.len);
    copy[8] = 2; /* format version 2 */
    CHECK(journal_replay_open(copy, rn.f.len, err, sizeof err) == NULL);
    CHECK(strstr(err, "format version 2") != NULL);
    memcpy(copy, rn.f.data, rn.f.len);
    copy[0] = 'X';
    CHECK(journal_replay_open(copy, rn.f.len, err, sizeof err) == NULL);
    CHECK(strstr(err, "not a collide journal") != NULL);
    /* damage anywhere: refused at open, or a replay that stops with a reason; never a crash */
    journal_header h;
    CHECK(journal_read_header(rn.f.data, rn.f.len, &h, err, sizeof err));
    collide_rng rng = {555u};
    int caught = 0;
    for (int trial = 0; trial < 300; trial++) {
        memcpy(copy, rn.f.data, rn.f.len);
        size_t at = h.header_len + collide_rng_next(&rng) % (rn.f.len - h.header_len);
        copy[at] ^= (uint8_t)(1u << (collide_rng_next(&rng) % 8));
        journal_replay *r = journal_replay_open(copy, rn.f.len, err, sizeof err);
        if (!r) {
            caught++;
            continue;
        }
        journal_result res = journal_replay_to(r, UINT64_MAX);
        if (res != JOURNAL_END || journal_replay_truncated(r)) caught++;
        if (res != JOURNAL_END) CHECK(journal_replay_error(r)[0] != 0 || res == JOURNAL_CORRUPT);
        journal_replay_free(r);
    }
    /* with a hash after every step, most single-bit flips show (237 of 300 when written); the
     * rest change nothing a hash covers (an owner, a jump of a body that is no character) */
    CHECK(caught > 200);
    free(copy);
    free(rn.f.data);
    world_destroy(w);
}

/* Checkpoints (journal_replay_position / _resume, the viewer's seek): a replay resumed anywhere
 * from its world's image and position goes on to the live hash at every later tick, from inside a
 * run of quiet steps too; a failure is forgotten by a resume before it, and found again past it;
 * a world at another tick and a position outside the journal are refused. */
#define RESUME_TICKS 300
static void test_resume_from_a_checkpoint(void) {
    world *w = wo_world(20.0f, true);
    wo_gen g;
    wo_init(&g, 777u, 20.0f);
    journal_meta meta = {.hash_every = 7, .history_ticks = 4, .events = true};
    journal *j = journal_start(w, &meta, 1u << 24);
    CHECK(j != NULL);
    static struct {
        file f;
        uint64_t start_tick, planted_tick;
        uint64_t hash[RESUME_TICKS + 1];
    } rn;
    memset(&rn, 0, sizeof rn);
    rn.start_tick = world_tick(w);
    rn.hash[0] = world_state_hash(w);
    for (int t = 1; t <= RESUME_TICKS; t++) {
        /* inputs for 20 ticks, then 25 quiet ones: runs of steps to stand inside */
        for (int k = 0; t % 45 < 20 && k < 4; k++) {
            wo_op op;
            wo_next(&g, &op);
            world_body_id id;
            wo_result(&g, &op, wo_apply_journaled(j, w, &op, &id), id);
        }
        /* an input the journal misses at tick 250: the hash stored at 252 differs */
        for (int i = 0; t == 250 && i < g.count && !rn.planted_tick; i++)
            if (g.moving[i] &&
                world_set_intent(w, g.live[i], v2(3.0f, 1.0f), ++g.seq[i]) == WORLD_OK)
                rn.planted_tick = world_tick(w) + 1;
        journal_step(j, w);
        rn.hash[t] = world_state_hash(w);
    }
    journal_finish(j);
    take(j, &rn.f);
    journal_free(j);
    CHECK(rn.planted_tick == rn.start_tick + 250);

    char err[200];
    journal_replay *r = journal_replay_open(rn.f.data, rn.f.len, err, sizeof err);
    CHECK(r != NULL);
    /* a checkpoint at every tick before the planted input */
    static journal_position pos[RESUME_TICKS + 1];
    static void *image[RESUME_TICKS + 1];
    static size_t image_len[RESUME_TICKS + 1];
    int inside_steps = 0;
    for (int t = 0; t < 250; t++) {
        CHECK(journal_replay_to(r, rn.start_tick + (uint64_t)t) == JOURNAL_OK);
        journal_replay_position(r, &pos[t]);
        CHECK(pos[t].tick == rn.start_tick + (uint64_t)t);
        inside_steps += pos[t].steps_left > 0;
        image[t] = world_image_save(journal_replay_world(r), &image_len[t]);
        CHECK(image[t] != NULL);
    }
    CHECK(inside_steps > 50);
    /* on to the planted input: the replay fails at the next stored hash */
    CHECK(journal_replay_to(r, UINT64_MAX) == JOURNAL_MISMATCH);
    uint64_t fail_tick = world_tick(journal_replay_world(r));
    CHECK(fail_tick >= rn.planted_tick && fail_tick < rn.planted_tick + 7);
    /* back to checkpoints, in a scrambled order: the live hashes from each on */
    collide_rng rng = {31u};
    for (int trial = 0; trial < 40; trial++) {
        int t = (int)(collide_rng_next(&rng) % 250);
        world *cw = world_image_load(image[t], image_len[t], err, sizeof err);
        CHECK(cw != NULL);
        CHECK(journal_replay_resume(r, cw, &pos[t], err, sizeof err));
        CHECK(journal_replay_error(r)[0] == 0);
        int to = t + 1 + (int)(collide_rng_next(&rng) % (uint32_t)(250 - t));
        for (int k = t + 1; k <= to && k < 250; k++) {
            CHECK(journal_replay_to(r, rn.start_tick + (uint64_t)k) == JOURNAL_OK);
            CHECK(world_state_hash(journal_replay_world(r)) == rn.hash[k]);
        }
    }
    /* past the planted input again: the same failure */
    CHECK(journal_replay_to(r, UINT64_MAX) == JOURNAL_MISMATCH);
    CHECK(world_tick(journal_replay_world(r)) == fail_tick);
    /* refused: a world at another tick, a position outside the records or the ticks */
    world *cw = world_image_load(image[10], image_len[10], err, sizeof err);
    CHECK(!journal_replay_resume(r, cw, &pos[11], err, sizeof err));
    CHECK(strstr(err, "not at the position's tick") != NULL);
    journal_position bad = pos[10];
    bad.offset = rn.f.len + 1;
    CHECK(!journal_replay_resume(r, cw, &bad, err, sizeof err));
    CHECK(strstr(err, "outside the journal's records") != NULL);
    bad = pos[10];
    bad.steps_left = RESUME_TICKS;
    CHECK(!journal_replay_resume(r, cw, &bad, err, sizeof err));
    CHECK(journal_replay_error(r)[0] != 0); /* the failure stands: nothing changed */
    world_destroy(cw);
    for (int t = 0; t < 250; t++)
        free(image[t]);
    journal_replay_free(r);
    free(rn.f.data);
    world_destroy(w);
}

/* The bound on bytes not taken: crossed, the journal says so and appends nothing more. */
static void test_pending_bound(void) {
    world *w = wo_world(20.0f, false);
    journal_meta meta = {.hash_every = 1};
    journal *j = journal_start(w, &meta, 1);
    CHECK(j != NULL);
    journal_buf head = journal_take(j); /* the header always fits */
    CHECK(head.len > 8 && !journal_overflowed(j));
    journal_recycle(j, head);
    /* the bound is the header's size when that is more (the header always fits): crossed after
     * a few thousand steps of 11 bytes */
    for (int t = 0; t < 5000 && !journal_overflowed(j); t++)
        journal_step(j, w);
    CHECK(journal_overflowed(j));
    size_t pending = journal_pending(j);
    journal_step(j, w);
    CHECK(journal_pending(j) == pending);
    journal_free(j);
    world_destroy(w);
}

TEST_MAIN(TEST(test_replay_equals_the_run), TEST(test_unjournaled_input_fails_at_its_tick),
          TEST(test_cut_journal_replays_to_its_last_whole_tick),
          TEST(test_bad_journals_are_refused), TEST(test_resume_from_a_checkpoint),
          TEST(test_pending_bound))

/* Unit tests of net_record on a real libuv loop and a real directory: the file names (escaped, and
 * nothing else parsed as one), a room recording from its first step whose file, once the room
 * closes, is whole and replays (the room's on_closed waits for the recorder's last write and
 * close), StartRecording answered once the file is open and StopRecording at once, and a
 * directory gone before the start: dropped (open_failed) while the room ticks on. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "journal.h"
#include "net_conn.h"
#include "net_log.h"
#include "net_record.h"
#include "net_room.h"
#include "net_room_test_util.h"
#include "net_test_util.h"

static void test_names(void) {
    char out[256];
    CHECK(net_record_escape("default", out, sizeof out) && strcmp(out, "default") == 0);
    CHECK(net_record_escape("r.2:x", out, sizeof out) && strcmp(out, "r~2e2~3ax") == 0);
    CHECK(net_record_escape("A-b_9", out, sizeof out) && strcmp(out, "A-b_9") == 0);
    CHECK(!net_record_escape("", out, sizeof out));
    CHECK(!net_record_escape("abc", out, 3)); /* no room for the NUL */
    /* every byte a name may hold (and the rest) escapes into a name that parses back */
    for (int b = 1; b < 256; b++) {
        char room[4] = {'a', (char)b, 'z', 0}, name[300];
        CHECK(net_record_escape(room, out, sizeof out));
        CHECK(!strchr(out, '.') && !strchr(out, '/'));
        snprintf(name, sizeof name, "%s.%06d.cjournal", out, b);
        uint64_t seq = 0;
        size_t len = 0;
        CHECK_MSG(net_record_parse_name(name, &seq, &len) && seq == (uint64_t)b &&
                      len == strlen(out),
                  "byte %d: %s", b, name);
    }
    uint64_t seq;
    size_t len;
    CHECK(net_record_parse_name("default.000123.cjournal", &seq, &len) && seq == 123 && len == 7);
    CHECK(net_record_parse_name("x.1234567.cjournal", &seq, &len) && seq == 1234567);
    const char *bad[] = {"default.00001.cjournal", "default.000001.cjournal.x",
                         "../a.000001.cjournal",   "a/b.000001.cjournal",
                         ".a.000001.cjournal",     "a~2.000001.cjournal",
                         "a~zz.000001.cjournal",   "a~2E.000001.cjournal",
                         "a.b.000001.cjournal",    "a.000001.journal",
                         "a.000001x.cjournal",     "a.00000000000000000001.cjournal",
                         ".000001.cjournal",       "a..000001.cjournal",
                         "a.000001.cjournal/",     ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(!net_record_parse_name(bad[i], &seq, &len), "%s parsed as a recording", bad[i]);
}

typedef struct fixture {
    uv_loop_t loop;
    net_rooms *dir;
    net_config cfg;
    char dirname[64];
} fixture;

static bool fixture_init(fixture *f, bool record_all) {
    net_log_set_level(NET_LOG_ERROR);
    if (uv_loop_init(&f->loop) != 0) return false;
    net_config_default(&f->cfg);
    f->cfg.tick_rate_hz = 200.0f;
    f->cfg.record_hash_every = 1;
    f->cfg.record_rooms = record_all;
    f->cfg.max_bodies = 256;
    snprintf(f->dirname, sizeof f->dirname, "/tmp/collide-test-record-XXXXXX");
    if (!mkdtemp(f->dirname)) return false;
    snprintf(f->cfg.record_dir, sizeof f->cfg.record_dir, "%s", f->dirname);
    net_world_text *text = net_world_text_make(strdup(WORLD), sizeof WORLD - 1);
    net_rooms_config rc = {1, 8, 100, true, text};
    f->dir = net_rooms_create(&rc);
    net_world_text_unref(text);
    return f->dir != NULL;
}

static net_room *fixture_room(fixture *f, const char *name) {
    net_room_ref ref;
    if (net_rooms_create_room(f->dir, name, strlen(name), 0, NULL, &ref) != NET_ROOM_OK)
        return NULL;
    char err[256];
    net_room *r = net_room_open(&f->loop, f->dir, ref.id, name, &f->cfg, err, sizeof err);
    if (r) r->on_closed = on_closed;
    return r;
}

static void fixture_remove_files(fixture *f) {
    uv_fs_t req;
    uv_dirent_t e;
    if (uv_fs_scandir(NULL, &req, f->dirname, 0, NULL) >= 0) {
        while (uv_fs_scandir_next(&req, &e) != UV_EOF) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", f->dirname, e.name);
            unlink(path);
        }
    }
    uv_fs_req_cleanup(&req);
    rmdir(f->dirname);
}

/* The file's bytes, malloc'd. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    *len = d ? fread(d, 1, (size_t)n, fp) : 0;
    fclose(fp);
    return d;
}

static void feed(net_server *srv, net_client *c, const uint8_t *b, size_t n) {
    net_client_feed(srv, c, b, n);
}

static void test_room_records_and_close_waits(void) {
    fixture f;
    CHECK(fixture_init(&f, true));
    closed_calls = 0;
    net_room *r = fixture_room(&f, "r.1");
    CHECK(r && r->rec);
    net_client p;
    memset(&p, 0, sizeof p);
    net_conn_set_clock(r->srv); /* the client's queue times are the room's clock's */
    CHECK(net_client_open(r->srv, &p, "10.0.0.2:1"));
    net_session_welcome(r->srv, &p, 1, &(net_grant){0}, "pat", "r.1");
    run_for(&f.loop, 100); /* the journal starts at the end of a step */
    CHECK(r->srv->journal != NULL && r->srv->metrics.recordings_active == 1);
    uint8_t b[256];
    feed(r->srv, &p, b,
         tu_spawn_box(2, COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING, 1, 2, 1, 1, b, sizeof b));
    tu_msgs msgs;
    tu_take(&p, &msgs);
    uint32_t id = 0;
    for (size_t i = 0; i < msgs.count; i++)
        if (msgs.m[i]->msg_case == COLLIDE__V1__SERVER_MESSAGE__MSG_SPAWNED)
            id = msgs.m[i]->spawned->body_id;
    tu_free(&msgs);
    CHECK(id != 0);
    for (uint32_t k = 1; k <= 20; k++) {
        feed(r->srv, &p, b, tu_move_turning(0, id, k, (float)k, -(float)k, 0.5f, b, sizeof b));
        run_for(&f.loop, 10);
        tu_take(&p, &msgs);
        tu_free(&msgs);
    }
    net_client_release(r->srv, &p); /* its body goes: a despawn the journal records */
    net_room_close(r, "test over", NET_DISC_ROOM_CLOSED);
    CHECK(r->srv->journal == NULL);
    CHECK(closed_calls == 0); /* the journal's last bytes are not on disk yet */
    for (int i = 0; i < 200 && closed_calls == 0; i++)
        run_for(&f.loop, 5);
    CHECK(closed_calls == 1 && net_record_drained(r->rec));
    CHECK(r->srv->metrics.recordings_active == 0);
    char path[256];
    snprintf(path, sizeof path, "%s/r~2e1.000001.cjournal", f.dirname);
    size_t len = 0;
    uint8_t *data = slurp(path, &len);
    CHECK_MSG(data && len > 0, "%s", path);
    CHECK(r->srv->metrics.record_bytes_total == len);
    char err[256];
    journal_replay *jr = journal_replay_open(data, len, err, sizeof err);
    CHECK_MSG(jr, "%s", err);
    CHECK(journal_replay_truncated(jr) == NULL); /* ended with END */
    journal_result res = journal_replay_to(jr, journal_replay_last_tick(jr));
    journal_replay_stats st;
    journal_replay_get_stats(jr, &st);
    CHECK_MSG(res == JOURNAL_OK, "%s", journal_replay_error(jr));
    CHECK(st.intents == 20 && st.hashes_checked > 20);
    CHECK(strcmp(journal_replay_header(jr)->room, "r.1") == 0);
    journal_replay_free(jr);
    free(data);
    net_room_free(r);
    net_rooms_destroy(f.dir);
    CHECK(uv_loop_close(&f.loop) == 0);
    fixture_remove_files(&f);
}

/* The RecordingInfo in c's output, if any. */
static bool take_info(net_client *c, net_recording_info *out) {
    tu_msgs msgs;
    tu_take(c, &msgs);
    bool got = false;
    for (size_t i = 0; i < msgs.count; i++) {
        if (msgs.m[i]->msg_case != COLLIDE__V1__SERVER_MESSAGE__MSG_RECORDING_INFO) continue;
        const Collide__V1__RecordingInfo *ri = msgs.m[i]->recording_info;
        snprintf(out->file, sizeof out->file, "%s", ri->file);
        out->start_tick = ri->start_tick;
        out->bytes = ri->bytes;
        out->active = ri->active;
        got = true;
    }
    tu_free(&msgs);
    return got;
}

static void test_start_answered_once_open_stop_at_once(void) {
    fixture f;
    CHECK(fixture_init(&f, false));
    closed_calls = 0;
    net_room *r = fixture_room(&f, "quiet");
    CHECK(r && r->srv->recording);
    net_client a;
    memset(&a, 0, sizeof a);
    net_conn_set_clock(r->srv);
    CHECK(net_client_open(r->srv, &a, "10.0.0.3:1"));
    net_session_welcome(r->srv, &a, 1, &(net_grant){.admin = true}, "boss", "quiet");
    run_for(&f.loop, 50);
    CHECK(r->srv->journal == NULL); /* --record-rooms none */
    net_recording_info info;
    take_info(&a, &info);
    /* StartRecording: no answer until the journal began and its file is open */
    CHECK(!r->srv->recording->request(r->srv->recording->ctx, true, a.id, 7, &info));
    CHECK(!take_info(&a, &info));
    for (int i = 0; i < 100 && !take_info(&a, &info); i++)
        run_for(&f.loop, 5);
    CHECK(info.active && strcmp(info.file, "quiet.000001.cjournal") == 0 && info.start_tick > 0);
    /* again: the same recording, at once */
    net_recording_info again;
    CHECK(r->srv->recording->request(r->srv->recording->ctx, true, a.id, 8, &again));
    CHECK(again.active && again.start_tick == info.start_tick);
    run_for(&f.loop, 50);
    CHECK(r->srv->recording->request(r->srv->recording->ctx, false, a.id, 9, &again));
    CHECK(!again.active && strcmp(again.file, info.file) == 0 && again.bytes >= info.bytes);
    CHECK(r->srv->journal == NULL);
    net_client_release(r->srv, &a);
    net_room_close(r, "done", NET_DISC_ROOM_CLOSED);
    for (int i = 0; i < 200 && closed_calls == 0; i++)
        run_for(&f.loop, 5);
    CHECK(closed_calls == 1);
    net_room_free(r);
    net_rooms_destroy(f.dir);
    CHECK(uv_loop_close(&f.loop) == 0);
    fixture_remove_files(&f);
}

static void test_directory_gone_drops_not_the_room(void) {
    fixture f;
    CHECK(fixture_init(&f, true));
    closed_calls = 0;
    rmdir(f.dirname); /* gone before the room's first file */
    net_room *r = fixture_room(&f, "lost");
    CHECK(r);
    uint64_t t0 = world_tick(r->world);
    run_for(&f.loop, 150);
    CHECK(r->srv->metrics.recordings_dropped_total[NET_RECORD_OPEN_FAILED] == 1);
    CHECK(r->srv->journal == NULL && r->srv->metrics.recordings_active == 0);
    CHECK_MSG(world_tick(r->world) >= t0 + 10, "the room ticks on: %llu",
              (unsigned long long)world_tick(r->world));
    net_room_close(r, "done", NET_DISC_ROOM_CLOSED);
    for (int i = 0; i < 200 && closed_calls == 0; i++)
        run_for(&f.loop, 5);
    CHECK(closed_calls == 1);
    net_room_free(r);
    net_rooms_destroy(f.dir);
    CHECK(uv_loop_close(&f.loop) == 0);
}

TEST_MAIN(TEST(test_names), TEST(test_room_records_and_close_waits),
          TEST(test_start_answered_once_open_stop_at_once),
          TEST(test_directory_gone_drops_not_the_room))

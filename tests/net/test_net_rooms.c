/* Unit tests of the room directory (server/net/net_rooms.c): names, auto-create, limits,
 * placement, closes with joins in flight, the name index against a model, and a threaded run
 * (meant for the ThreadSanitizer build) whose counts must balance. */
#include <pthread.h>

#include "collide.pb-c.h"
#include "harness.h"
#include "net_rooms.h"

static const char DEFAULT_WORLD[] = "{\"bounds\": {\"min\": [-10, -10], \"max\": [10, 10]}}";

static net_world_text *text_of(const char *s) { return net_world_text_make(strdup(s), strlen(s)); }

static net_rooms *make(uint32_t threads, uint32_t max_rooms, uint32_t max_clients, bool auto_on) {
    net_world_text *def = text_of(DEFAULT_WORLD);
    net_rooms_config cfg = {threads, max_rooms, max_clients, auto_on, def};
    net_rooms *r = net_rooms_create(&cfg);
    net_world_text_unref(def); /* the directory keeps its own reference */
    return r;
}

static net_room_status join(net_rooms *r, const char *name, net_room_ref *ref) {
    return net_rooms_join(r, name, strlen(name), false, ref);
}

static void test_names(void) {
    CHECK(net_room_name_valid("a", 1));
    CHECK(net_room_name_valid("Match-7_eu.west:2", 17));
    char name[66];
    memset(name, 'x', sizeof name);
    CHECK(net_room_name_valid(name, 64));
    CHECK(!net_room_name_valid(name, 65));
    CHECK(!net_room_name_valid("", 0));
    CHECK(!net_room_name_valid("a/b", 3));
    CHECK(!net_room_name_valid("a b", 3));
    CHECK(!net_room_name_valid("a\0b", 3));
    CHECK(!net_room_name_valid("\xc3\xa9", 2));
    size_t len = 0;
    const char *n = net_room_name_of("", &len);
    CHECK(len == 7 && memcmp(n, "default", 7) == 0);
    len = 3;
    CHECK(net_room_name_of("abc", &len)[0] == 'a' && len == 3);
}

/* PROTOCOL.md "Rooms": each status's ErrorCode, the one table the Hello refusal and the admin
 * calls share (they once had a table each, which disagreed on EXISTS and FORBIDDEN). */
static void test_status_error_codes(void) {
#define CODE(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name
    static const struct {
        net_room_status st;
        int code;
    } want[] = {
        {NET_ROOM_OK, 0},
        {NET_ROOM_BAD_NAME, CODE(BAD_REQUEST)},        /* join and CreateRoom */
        {NET_ROOM_NOT_FOUND, CODE(NOT_FOUND)},         /* auto-create off; CloseRoom unknown */
        {NET_ROOM_TOO_MANY, CODE(LIMIT_EXCEEDED)},     /* --max-rooms */
        {NET_ROOM_EXISTS, CODE(BAD_REQUEST)},          /* "the room exists already: BAD_REQUEST" */
        {NET_ROOM_FULL, CODE(LIMIT_EXCEEDED)},         /* the room's max_clients */
        {NET_ROOM_SERVER_FULL, CODE(LIMIT_EXCEEDED)},  /* --max-clients */
        {NET_ROOM_FORBIDDEN, CODE(FORBIDDEN)},         /* "default cannot be closed: FORBIDDEN" */
        {NET_ROOM_SHUTTING_DOWN, CODE(SHUTTING_DOWN)}, /* the drain */
        {NET_ROOM_AT_CAPACITY, CODE(LIMIT_EXCEEDED)},  /* late ticks (issue 12) */
    };
#undef CODE
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(net_rooms_status_error_code(want[i].st) == want[i].code, "%s: %d, want %d",
                  net_room_status_str(want[i].st), net_rooms_status_error_code(want[i].st),
                  want[i].code);
}

static void test_default_room(void) {
    net_rooms *r = make(2, 0, 10, true);
    CHECK(r);
    net_room_info info;
    CHECK(net_rooms_find(r, "default", 7, &info) && info.thread == 0 && !info.auto_created);
    net_room_ref ref;
    /* --max-rooms 0: the default room does not count against it */
    CHECK(join(r, "default", &ref) == NET_ROOM_OK && !ref.created && ref.id == info.id);
    CHECK(join(r, "other", &ref) == NET_ROOM_TOO_MANY);
    net_room_ref out;
    CHECK(net_rooms_close(r, "default", 7, &info, &out) == NET_ROOM_FORBIDDEN);
    /* never idle-closed, even without clients */
    net_rooms_abandon(r, info.id);
    CHECK(!net_rooms_close_if_idle(r, info.id));
    net_rooms_destroy(r);
}

static void test_auto_create_and_limits(void) {
    net_rooms *r = make(2, 2, 5, true);
    net_room_ref a, b, c;
    CHECK(join(r, "a", &a) == NET_ROOM_OK && a.created);
    CHECK(join(r, "a", &c) == NET_ROOM_OK && !c.created && c.id == a.id);
    CHECK(join(r, "b", &b) == NET_ROOM_OK && b.created && b.id != a.id);
    CHECK(join(r, "c", &c) == NET_ROOM_TOO_MANY);
    CHECK(join(r, "bad name", &c) == NET_ROOM_BAD_NAME);
    /* 3 joins in flight so far; --max-clients 5 counts them */
    CHECK(join(r, "default", &c) == NET_ROOM_OK);
    CHECK(join(r, "a", &c) == NET_ROOM_OK);
    CHECK(join(r, "a", &c) == NET_ROOM_SERVER_FULL);
    CHECK(net_rooms_arrived(r, a.id));
    CHECK(join(r, "a", &c) == NET_ROOM_SERVER_FULL);
    net_rooms_left(r, a.id);
    CHECK(join(r, "a", &c) == NET_ROOM_OK);
    net_rooms_destroy(r);

    r = make(1, 4, 100, false);
    CHECK(join(r, "nowhere", &c) == NET_ROOM_NOT_FOUND);
    CHECK(net_rooms_create_room(r, "arena", 5, 2, NULL, &a) == NET_ROOM_OK && a.created);
    CHECK(net_rooms_create_room(r, "arena", 5, 2, NULL, &b) == NET_ROOM_EXISTS);
    CHECK(join(r, "arena", &c) == NET_ROOM_OK && !c.created && c.id == a.id);
    CHECK(join(r, "arena", &c) == NET_ROOM_OK);
    CHECK(join(r, "arena", &c) == NET_ROOM_FULL); /* its own max_clients 2 */
    net_room_info info;
    CHECK(net_rooms_find(r, "arena", 5, &info) && info.clients == 2 && !info.auto_created);
    /* an admin room is not closed for being idle */
    net_rooms_abandon(r, a.id);
    net_rooms_abandon(r, a.id);
    CHECK(!net_rooms_close_if_idle(r, a.id));
    net_rooms_begin_drain(r);
    CHECK(join(r, "arena", &c) == NET_ROOM_SHUTTING_DOWN);
    CHECK(net_rooms_create_room(r, "x", 1, 0, NULL, &c) == NET_ROOM_SHUTTING_DOWN);
    net_rooms_destroy(r);
}

static void test_close_with_joins_in_flight(void) {
    net_rooms *r = make(2, 8, 100, true);
    net_room_ref a, late;
    CHECK(join(r, "m", &a) == NET_ROOM_OK);
    CHECK(net_rooms_arrived(r, a.id));
    CHECK(join(r, "m", &late) == NET_ROOM_OK); /* in flight when the admin closes it */
    net_room_info info;
    net_room_ref where;
    CHECK(net_rooms_close(r, "m", 1, &info, &where) == NET_ROOM_OK);
    CHECK(where.id == a.id && where.thread == a.thread && info.clients == 2 && info.auto_created);
    /* the late join finds its room gone, and no longer counts */
    CHECK(!net_rooms_arrived(r, late.id));
    uint32_t rooms = 0, clients = 0;
    net_rooms_counts(r, &rooms, &clients);
    CHECK_MSG(rooms == 1 && clients == 1, "rooms %u clients %u", rooms, clients);
    /* a join now creates a fresh room under the same name, with a new id */
    net_room_ref fresh;
    CHECK(join(r, "m", &fresh) == NET_ROOM_OK && fresh.created && fresh.id != a.id);
    /* the closed room's client leaves: counted out globally, the fresh room untouched */
    net_rooms_left(r, a.id);
    CHECK(net_rooms_find(r, "m", 1, &info) && info.clients == 1 && info.id == fresh.id);
    net_rooms_counts(r, &rooms, &clients);
    CHECK_MSG(rooms == 2 && clients == 1, "rooms %u clients %u", rooms, clients);
    /* idle close waits for the join in flight and for the client */
    CHECK(!net_rooms_close_if_idle(r, fresh.id));
    CHECK(net_rooms_arrived(r, fresh.id));
    CHECK(!net_rooms_close_if_idle(r, fresh.id));
    net_rooms_left(r, fresh.id);
    CHECK(net_rooms_close_if_idle(r, fresh.id));
    CHECK(!net_rooms_close_if_idle(r, fresh.id)); /* once */
    CHECK(!net_rooms_find(r, "m", 1, &info));
    net_rooms_counts(r, &rooms, &clients);
    CHECK_MSG(rooms == 1 && clients == 0, "rooms %u clients %u", rooms, clients);
    net_rooms_destroy(r);
}

static void test_placement_least_loaded(void) {
    net_rooms *r = make(3, 100, 1000, true);
    net_room_ref ref;
    /* default is on thread 0; empty rooms then spread by room count */
    CHECK(join(r, "r1", &ref) == NET_ROOM_OK && ref.thread == 1);
    CHECK(join(r, "r2", &ref) == NET_ROOM_OK && ref.thread == 2);
    /* now thread 0 has no clients: it takes the next room */
    CHECK(join(r, "r3", &ref) == NET_ROOM_OK && ref.thread == 0);
    for (int i = 0; i < 5; i++)
        CHECK(join(r, "r1", &ref) == NET_ROOM_OK && ref.thread == 1);
    /* clients: t0 1, t1 6, t2 1; rooms: t0 2, t1 1, t2 1 -> t2 */
    CHECK(join(r, "r4", &ref) == NET_ROOM_OK && ref.thread == 2);
    net_room_info list[8];
    size_t n = net_rooms_list(r, list, 8);
    CHECK(n == 5 && strcmp(list[0].name, "default") == 0 && strcmp(list[1].name, "r1") == 0 &&
          strcmp(list[4].name, "r4") == 0 && list[1].clients == 6);
    net_rooms_destroy(r);
}

/* Each room's world text by reference: the default one for auto rooms, an admin's own for its
 * room, still readable by a builder holding it after the room closed (ASan checks the reads). */
static void test_world_text(void) {
    net_rooms *r = make(2, 8, 100, true);
    net_room_ref a, b;
    CHECK(join(r, "auto", &a) == NET_ROOM_OK);
    net_world_text *own = text_of("{\"bounds\": {\"min\": [0, 0], \"max\": [5, 5]}}");
    CHECK(net_rooms_create_room(r, "mine", 4, 0, own, &b) == NET_ROOM_OK);
    net_world_text_unref(own);
    net_world_text *ta = net_rooms_world(r, a.id), *tb = net_rooms_world(r, b.id);
    CHECK(ta && strcmp(net_world_text_data(ta), DEFAULT_WORLD) == 0);
    CHECK(tb && strstr(net_world_text_data(tb), "[5, 5]"));
    net_room_info info;
    net_room_ref where;
    CHECK(net_rooms_close(r, "mine", 4, &info, &where) == NET_ROOM_OK);
    CHECK(net_rooms_world(r, b.id) == NULL);          /* gone for everyone else */
    CHECK(strstr(net_world_text_data(tb), "[5, 5]")); /* but not for the builder holding it */
    net_world_text_unref(tb);
    net_world_text_unref(ta);
    net_rooms_destroy(r);
}

/* An overloaded thread takes no new player (admins still enter) and no new room while another
 * thread is not overloaded. */
static void test_overloaded_thread(void) {
    net_rooms *r = make(2, 8, 100, true);
    net_room_ref ref;
    CHECK(join(r, "a", &ref) == NET_ROOM_OK && ref.thread == 1);
    net_rooms_set_overloaded(r, 1, true);
    CHECK(join(r, "a", &ref) == NET_ROOM_AT_CAPACITY);
    CHECK(net_rooms_join(r, "a", 1, true, &ref) == NET_ROOM_OK); /* an admin */
    /* thread 1 has fewer clients than thread 0 would after these joins, but it is overloaded */
    CHECK(join(r, "default", &ref) == NET_ROOM_OK && ref.thread == 0);
    CHECK(join(r, "b", &ref) == NET_ROOM_OK && ref.thread == 0);
    net_rooms_set_overloaded(r, 0, true);
    CHECK(join(r, "c", &ref) == NET_ROOM_AT_CAPACITY);
    net_rooms_set_overloaded(r, 1, false);
    CHECK(join(r, "a", &ref) == NET_ROOM_OK && ref.thread == 1);
    net_rooms_destroy(r);
}

/* Many rooms made and closed at random against a plain array: the name index (linear probing
 * with backward-shift deletion) must find exactly the rooms that exist. */
static void test_index_against_model(void) {
    enum { NAMES = 300, STEPS = 20000 };
    net_rooms *r = make(2, NAMES, 1000000, true);
    bool exists[NAMES] = {false};
    net_room_id ids[NAMES] = {0};
    collide_rng rng = {0x5eed1234u};
    char name[16];
    for (int step = 0; step < STEPS; step++) {
        int k = (int)(collide_rng_next(&rng) % NAMES);
        int len = snprintf(name, sizeof name, "room%d", k);
        net_room_ref ref;
        net_room_info info;
        if (collide_rng_next(&rng) % 2) {
            CHECK(net_rooms_create_room(r, name, (size_t)len, 0, NULL, &ref) ==
                  (exists[k] ? NET_ROOM_EXISTS : NET_ROOM_OK));
            if (!exists[k]) {
                for (int j = 0; j < NAMES; j++)
                    CHECK_MSG(ref.id != ids[j], "step %d: id reused", step);
                ids[k] = ref.id;
            }
            exists[k] = true;
        } else {
            CHECK(net_rooms_close(r, name, (size_t)len, &info, &ref) ==
                  (exists[k] ? NET_ROOM_OK : NET_ROOM_NOT_FOUND));
            if (exists[k]) CHECK(ref.id == ids[k]);
            exists[k] = false;
        }
        if (step % 1000 == 0) {
            for (int j = 0; j < NAMES; j++) {
                int l = snprintf(name, sizeof name, "room%d", j);
                CHECK_MSG(net_rooms_find(r, name, (size_t)l, &info) == exists[j], "step %d room%d",
                          step, j);
            }
        }
    }
    net_rooms_destroy(r);
}

/* Threads join, arrive, leave, and close and idle-close rooms at once; at the end every count
 * balances. Run under ThreadSanitizer, this is the directory's race test. */
typedef struct stress_arg {
    net_rooms *r;
    unsigned seed;
} stress_arg;

static void *stress(void *p) {
    stress_arg *a = p;
    collide_rng rng = {a->seed};
    char name[16];
    for (int i = 0; i < 20000; i++) {
        int len = snprintf(name, sizeof name, "s%u", collide_rng_next(&rng) % 16);
        net_room_ref ref;
        unsigned what = collide_rng_next(&rng) % 10;
        if (what < 7) {
            if (net_rooms_join(a->r, name, (size_t)len, false, &ref) != NET_ROOM_OK) continue;
            if (what == 0) {
                net_rooms_abandon(a->r, ref.id);
            } else if (net_rooms_arrived(a->r, ref.id)) {
                net_rooms_left(a->r, ref.id);
                (void)net_rooms_close_if_idle(a->r, ref.id);
            }
        } else if (what < 9) {
            net_room_info info;
            (void)net_rooms_close(a->r, name, (size_t)len, &info, &ref);
        } else {
            net_room_info list[32];
            (void)net_rooms_list(a->r, list, 32);
        }
    }
    return NULL;
}

static void test_threads_balance(void) {
    net_rooms *r = make(4, 64, 1000000, true);
    pthread_t t[4];
    stress_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (stress_arg){r, 0x9e3779b9u * (unsigned)(i + 1)};
        CHECK(pthread_create(&t[i], NULL, stress, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    uint32_t rooms = 0, clients = 0;
    net_rooms_counts(r, &rooms, &clients);
    CHECK_MSG(clients == 0, "clients %u left over", clients);
    net_room_info list[80];
    size_t n = net_rooms_list(r, list, 80);
    CHECK(n == rooms);
    for (size_t i = 0; i < n && i < 80; i++)
        CHECK_MSG(list[i].clients == 0, "room %s has %u clients", list[i].name, list[i].clients);
    net_rooms_destroy(r);
}

TEST_MAIN(TEST(test_names), TEST(test_status_error_codes), TEST(test_default_room),
          TEST(test_auto_create_and_limits), TEST(test_close_with_joins_in_flight),
          TEST(test_placement_least_loaded), TEST(test_world_text), TEST(test_overloaded_thread),
          TEST(test_index_against_model), TEST(test_threads_balance))

/* Tickets in the session (PROTOCOL.md 1.2 "Tickets"), with a real world and no sockets: what a
 * verified ticket grants (the room, admin of that room only, max_bodies, sub as the name), the
 * fatal refusals, the tokens beside tickets and --ticket-required, the feature word, the front's
 * hand-off carrying the grant to the room; and the flags (--ticket-key twice, --ticket-key-file,
 * the environment, net_config_wipe). The verifier's own rules are test_net_ticket.c's. */
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "net_log.h"
#include "net_rooms.h"
#include "net_test_util.h"
#include "net_tick.h"
#include "ticket_mint.h"

#define S(name) COLLIDE__V1__SERVER_MESSAGE__MSG_##name
#define E(name) COLLIDE__V1__ERROR_CODE__ERROR_CODE_##name
#define MOVING COLLIDE__V1__BODY_KIND__BODY_KIND_MOVING
#define STATIC COLLIDE__V1__BODY_KIND__BODY_KIND_STATIC

#define NOW 1800000000LL
#define KEY "session-test-key-of-32-bytes-...."
#define SHARED "shared-token"
#define ADMIN "admin-token"

typedef struct fixture {
    world *w;
    net_server *srv;
    net_client c[4];
    uint8_t buf[4096];
} fixture;

static net_config ticket_config(const char *token, bool required) {
    net_config cfg;
    net_config_default(&cfg);
    cfg.max_bodies_per_client = 4;
    snprintf(cfg.ticket_keys[0], sizeof cfg.ticket_keys[0], "%s", KEY);
    cfg.ticket_key_lens[0] = strlen(KEY);
    cfg.ticket_key_count = 1;
    cfg.ticket_required = required;
    if (token) cfg.token_len = (size_t)snprintf(cfg.token, sizeof cfg.token, "%s", token);
    cfg.admin_token_len = (size_t)snprintf(cfg.admin_token, sizeof cfg.admin_token, "%s", ADMIN);
    return cfg;
}

static void fx_init(fixture *f, const net_config *cfg) {
    memset(f, 0, sizeof *f);
    net_log_set_level(NET_LOG_ERROR);
    world_config wc;
    world_config_default(&wc);
    wc.max_bodies = 256;
    f->w = world_create(&wc);
    f->srv = net_server_create(cfg, f->w);
    f->srv->now_us = 1000000;
    f->srv->wall_us = (uint64_t)NOW * 1000000u;
}

static void fx_free(fixture *f) {
    for (int i = 0; i < 4; i++)
        if (f->c[i].id) net_client_release(f->srv, &f->c[i]);
    net_server_destroy(f->srv);
    world_destroy(f->w);
}

static size_t hello_with(const char *token, const char *name, const char *room, uint8_t *out,
                         size_t cap) {
    Collide__V1__Hello h = COLLIDE__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.name = (char *)name;
    h.token = (char *)token;
    h.room = (char *)room;
    tu_cmsg m = COLLIDE__V1__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return tu_frame(&m, out, cap);
}

/* The first reply that is not a snapshot, copied out. */
typedef struct reply {
    int kind; /* a ServerMessage msg_case, -1: none */
    int code;
    bool fatal;
    char message[160];
    bool admin;
    uint32_t max_bodies;
    bool tickets; /* Welcome.features holds "tickets" */
} reply;

static reply take(net_client *c) {
    tu_msgs msgs;
    tu_take(c, &msgs);
    reply r = {.kind = -1};
    for (size_t i = 0; i < msgs.count && r.kind < 0; i++) {
        tu_smsg *m = msgs.m[i];
        if (m->msg_case == S(SNAPSHOT)) continue;
        r.kind = (int)m->msg_case;
        if (m->msg_case == S(ERROR)) {
            r.code = (int)m->error->code;
            r.fatal = m->error->fatal;
            snprintf(r.message, sizeof r.message, "%s", m->error->message);
        } else if (m->msg_case == S(WELCOME)) {
            r.admin = m->welcome->admin;
            r.max_bodies = m->welcome->max_bodies_per_client;
            for (size_t k = 0; k < m->welcome->n_features; k++)
                r.tickets |= strcmp(m->welcome->features[k], "tickets") == 0;
        }
    }
    tu_free(&msgs);
    return r;
}

static net_client *open_client(fixture *f, int i) {
    memset(&f->c[i], 0, sizeof f->c[i]);
    net_client_open(f->srv, &f->c[i], "127.0.0.1:1");
    return &f->c[i];
}

static reply say_hello(fixture *f, int i, const char *token, const char *name, const char *room) {
    net_client *c = open_client(f, i);
    net_client_feed(f->srv, c, f->buf, hello_with(token, name, room, f->buf, sizeof f->buf));
    return take(c);
}

static const char *ticket(const char *room, long long exp, const char *rest) {
    static char payload[512], out[2048];
    snprintf(payload, sizeof payload, "{\"room\":\"%s\",\"exp\":%lld%s%s}", room, exp,
             rest[0] ? "," : "", rest);
    if (!tm_mint(TM_HS256_HEADER, payload, KEY, strlen(KEY), TM_HS256, out, sizeof out)) abort();
    return out;
}

static reply request(fixture *f, int i, size_t n) {
    net_client_feed(f->srv, &f->c[i], f->buf, n);
    return take(&f->c[i]);
}

static void test_ticket_welcomes_with_its_claims(void) {
    net_config cfg = ticket_config(NULL, false);
    fixture f;
    fx_init(&f, &cfg);
    reply r = say_hello(&f, 0, ticket("default", NOW + 60, "\"sub\":\"p-42\",\"max_bodies\":2"),
                        "self-named", "");
    CHECK_MSG(r.kind == S(WELCOME), "%d %s", r.kind, r.message);
    CHECK(!r.admin && r.max_bodies == 2 && r.tickets);
    net_client *c = &f.c[0];
    CHECK(strcmp(c->name, "p-42") == 0 && c->ticket_key == 1 && !c->admin);
    /* max_bodies lowers the per-client limit: the third spawn is over it. */
    for (uint32_t k = 0; k < 2; k++)
        CHECK(request(&f, 0,
                      tu_spawn_box(10 + k, MOVING, (float)k * 10, 0, 1, 1, f.buf, sizeof f.buf))
                  .kind == S(SPAWNED));
    r = request(&f, 0, tu_spawn_box(20, MOVING, 40, 0, 1, 1, f.buf, sizeof f.buf));
    CHECK(r.kind == S(ERROR) && r.code == E(LIMIT_EXCEEDED) && !r.fatal);
    CHECK(strstr(r.message, "at most 2"));
    /* ... and never raises it: --max-bodies-per-client is 4. */
    r = say_hello(&f, 1, ticket("default", NOW + 60, "\"max_bodies\":100"), "x", "default");
    CHECK(r.kind == S(WELCOME) && r.max_bodies == 4);
    /* Without sub, the Hello's own name; without max_bodies, the server's limit. */
    r = say_hello(&f, 2, ticket("", NOW + 60, ""), "carol", NULL);
    CHECK(r.kind == S(WELCOME) && r.max_bodies == 4 && strcmp(f.c[2].name, "carol") == 0);
    /* A sub is sanitised as a name is. */
    r = say_hello(&f, 3, ticket("default", NOW + 60, "\"sub\":\"a b\\\"c\""), "x", NULL);
    CHECK(r.kind == S(WELCOME) && strcmp(f.c[3].name, "a_b_c") == 0);
    fx_free(&f);
}

static void test_refusals_are_fatal_and_named(void) {
    net_config cfg = ticket_config(NULL, false);
    fixture f;
    fx_init(&f, &cfg);
    static const struct {
        long long exp;
        const char *rest, *room, *word;
    } cases[] = {
        {NOW - 60, "", "default", "expired"},
        {NOW + 60, "\"nbf\":1800000100", "default", "not yet valid"},
        {NOW + 60, "\"iat\":1800000100", "default", "issued in the future"},
        {NOW + 60, "", "elsewhere", "room"},
        {NOW + 60, "\"admin\":\"yes\"", "default", "format"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reply r = say_hello(&f, 0, ticket(cases[i].room, cases[i].exp, cases[i].rest), "x", "");
        CHECK_MSG(r.kind == S(ERROR) && r.code == E(UNAUTHENTICATED) && r.fatal &&
                      strncmp(r.message, "ticket refused: ", 16) == 0 &&
                      strstr(r.message, cases[i].word) && !strstr(r.message, KEY),
                  "case %zu: %s", i, r.message);
        CHECK(f.c[0].state == NET_CLIENT_CLOSING);
        net_client_release(f.srv, &f.c[0]);
    }
    /* Under another key: signature. */
    char forged[2048];
    CHECK(tm_mint(TM_HS256_HEADER, "{\"room\":\"default\",\"exp\":1900000000}", "not-the-key", 11,
                  TM_HS256, forged, sizeof forged));
    reply r = say_hello(&f, 0, forged, "x", "");
    CHECK(r.code == E(UNAUTHENTICATED) && r.fatal && strstr(r.message, "signature"));
    net_client_release(f.srv, &f.c[0]);
    /* No --token: an empty token is a player of an open server; any other is a ticket. */
    r = say_hello(&f, 0, "", "x", "");
    CHECK(r.kind == S(WELCOME));
    r = say_hello(&f, 1, "guess", "x", "");
    CHECK(r.code == E(UNAUTHENTICATED) && r.fatal && strstr(r.message, "format"));
    fx_free(&f);
}

static void test_tokens_beside_tickets(void) {
    net_config cfg = ticket_config(SHARED, false);
    fixture f;
    fx_init(&f, &cfg);
    reply r = say_hello(&f, 0, SHARED, "p", "");
    CHECK(r.kind == S(WELCOME) && !r.admin && r.tickets);
    r = say_hello(&f, 1, ADMIN, "a", "");
    CHECK(r.kind == S(WELCOME) && r.admin && !f.c[1].admin_room_only);
    r = say_hello(&f, 2, ticket("default", NOW + 60, ""), "t", "");
    CHECK(r.kind == S(WELCOME));
    r = say_hello(&f, 3, "", "n", "");
    CHECK(r.code == E(UNAUTHENTICATED) && strstr(r.message, "bad token"));
    fx_free(&f);

    /* --ticket-required on: the shared token admits no player; the admin token still works. */
    cfg = ticket_config(SHARED, true);
    fx_init(&f, &cfg);
    r = say_hello(&f, 0, SHARED, "p", "");
    CHECK(r.code == E(UNAUTHENTICATED) && r.fatal && strstr(r.message, "ticket is required"));
    r = say_hello(&f, 1, ADMIN, "a", "");
    CHECK(r.kind == S(WELCOME) && r.admin);
    r = say_hello(&f, 2, ticket("default", NOW + 60, ""), "t", "");
    CHECK(r.kind == S(WELCOME));
    r = say_hello(&f, 3, "", "n", "");
    CHECK(r.code == E(UNAUTHENTICATED) && strstr(r.message, "ticket is required"));
    fx_free(&f);

    /* No key: no feature word, and a ticket-looking token is only a wrong token. */
    cfg = ticket_config(SHARED, false);
    cfg.ticket_key_count = 0;
    fx_init(&f, &cfg);
    r = say_hello(&f, 0, SHARED, "p", "");
    CHECK(r.kind == S(WELCOME) && !r.tickets);
    r = say_hello(&f, 1, ticket("default", NOW + 60, ""), "t", "");
    CHECK(r.code == E(UNAUTHENTICATED) && strstr(r.message, "bad token"));
    fx_free(&f);
}

/* An admin by ticket: admin of its room (statics, others' bodies), never of the rooms. */
static void test_admin_of_its_room_only(void) {
    net_config cfg = ticket_config(NULL, false);
    fixture f;
    fx_init(&f, &cfg);
    reply r = say_hello(&f, 0, ticket("default", NOW + 60, "\"admin\":true"), "boss", "");
    CHECK(r.kind == S(WELCOME) && r.admin && f.c[0].admin_room_only);
    r = say_hello(&f, 1, ticket("default", NOW + 60, ""), "p", "");
    CHECK(r.kind == S(WELCOME));
    r = request(&f, 1, tu_spawn_box(5, MOVING, 0, 0, 1, 1, f.buf, sizeof f.buf));
    CHECK(r.kind == S(SPAWNED));
    uint32_t body = 0;
    for (uint32_t id = 1; id < 1000 && !body; id++)
        if (world_body_alive(f.w, id)) body = id;
    CHECK(body != 0);
    CHECK(request(&f, 0, tu_spawn_box(6, STATIC, 50, 50, 1, 1, f.buf, sizeof f.buf)).kind ==
          S(SPAWNED));
    CHECK(request(&f, 0, tu_move(7, body, 1, 1, 0, f.buf, sizeof f.buf)).kind == -1);
    Collide__V1__ListRooms lr = COLLIDE__V1__LIST_ROOMS__INIT;
    Collide__V1__CreateRoom cr = COLLIDE__V1__CREATE_ROOM__INIT;
    Collide__V1__CloseRoom cl = COLLIDE__V1__CLOSE_ROOM__INIT;
    cr.name = (char *)"new";
    cl.name = (char *)"default";
    tu_cmsg m[3] = {COLLIDE__V1__CLIENT_MESSAGE__INIT, COLLIDE__V1__CLIENT_MESSAGE__INIT,
                    COLLIDE__V1__CLIENT_MESSAGE__INIT};
    m[0].msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_LIST_ROOMS;
    m[0].list_rooms = &lr;
    m[1].msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_CREATE_ROOM;
    m[1].create_room = &cr;
    m[2].msg_case = COLLIDE__V1__CLIENT_MESSAGE__MSG_CLOSE_ROOM;
    m[2].close_room = &cl;
    for (int i = 0; i < 3; i++) {
        m[i].request_id = 30 + (uint32_t)i;
        r = request(&f, 0, tu_frame(&m[i], f.buf, sizeof f.buf));
        CHECK_MSG(r.kind == S(ERROR) && r.code == E(FORBIDDEN) && !r.fatal, "message %d: %s", i,
                  r.message);
    }
    CHECK(f.c[0].state == NET_CLIENT_ACTIVE);
    fx_free(&f);
}

/* Front mode: the front verifies, the hook gets the grant, the room applies it. */
typedef struct hook_seen {
    int calls;
    net_hello_request last;
    char name[48];
} hook_seen;

static void hook(net_server *srv, net_client *c, const net_hello_request *t, void *ctx) {
    (void)srv;
    (void)c;
    hook_seen *h = ctx;
    h->calls++;
    h->last = *t;
    snprintf(h->name, sizeof h->name, "%s", t->name);
}

static void test_front_carries_the_grant(void) {
    net_config cfg = ticket_config(NULL, false);
    cfg.ticket_keys[1][0] = 'z';
    cfg.ticket_key_lens[1] = 1;
    cfg.ticket_key_count = 2;
    net_server *front = net_server_create(&cfg, NULL);
    CHECK(front);
    front->now_us = 1000000;
    front->wall_us = (uint64_t)NOW * 1000000u;
    hook_seen seen = {0};
    net_server_set_hello_hook(front, hook, &seen);
    net_client c[3];
    memset(c, 0, sizeof c);
    uint8_t buf[4096];
    char t[2048];
    CHECK(tm_mint(TM_HS256_HEADER,
                  "{\"room\":\"arena\",\"exp\":1800000060,\"admin\":true,\"max_bodies\":1,"
                  "\"sub\":\"npc-boss\"}",
                  "z", 1, TM_HS256, t, sizeof t));
    CHECK(net_client_open(front, &c[0], "127.0.0.1:1"));
    net_client_feed(front, &c[0], buf, hello_with(t, "x", "arena", buf, sizeof buf));
    CHECK(seen.calls == 1);
    const net_grant *g = &seen.last.grant;
    CHECK(g->admin && g->room_only && g->ticket_key == 2 && g->limited && g->max_bodies == 1);
    CHECK(strcmp(seen.name, "npc-boss") == 0);
    CHECK(seen.last.room_len == 5 && memcmp(seen.last.room, "arena", 5) == 0);
    /* The same ticket for another room never reaches the hook. */
    CHECK(net_client_open(front, &c[1], "127.0.0.1:2"));
    net_client_feed(front, &c[1], buf, hello_with(t, "x", "lobby", buf, sizeof buf));
    CHECK(seen.calls == 1);
    reply r = take(&c[1]);
    CHECK(r.code == E(UNAUTHENTICATED) && r.fatal && strstr(r.message, "room"));
    /* The room's side: the grant as carried. */
    world_config wc;
    world_config_default(&wc);
    world *w = world_create(&wc);
    net_server *room = net_server_create(&cfg, w);
    CHECK(w && room);
    CHECK(net_client_open(room, &c[2], "127.0.0.1:3"));
    net_session_welcome(room, &c[2], 1, g, seen.name, "arena");
    r = take(&c[2]);
    CHECK(r.kind == S(WELCOME) && r.admin && r.max_bodies == 1 && r.tickets);
    CHECK(c[2].admin_room_only && c[2].ticket_key == 2 && strcmp(c[2].name, "npc-boss") == 0);
    for (int i = 0; i < 2; i++)
        net_client_release(front, &c[i]);
    net_client_release(room, &c[2]);
    net_server_destroy(room);
    world_destroy(w);
    net_server_destroy(front);
}

/* ---- The flags ---------------------------------------------------------------------------- */

static const char *key_file(const char *text, size_t n) {
    static char path[] = "/tmp/collide-test-ticket-keys-XXXXXX";
    memcpy(path + sizeof path - 7, "XXXXXX", 6);
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n) abort();
    close(fd);
    return path;
}

static bool key_is(const net_config *cfg, uint32_t k, const char *want) {
    return k < cfg->ticket_key_count && cfg->ticket_key_lens[k] == strlen(want) &&
           memcmp(cfg->ticket_keys[k], want, strlen(want)) == 0;
}

static void test_flags(void) {
    net_config cfg;
    char err[256];
    net_config_default(&cfg);
    CHECK(cfg.ticket_key_count == 0 && !cfg.ticket_required && cfg.ticket_leeway_s == 5 &&
          cfg.ticket_max_bytes == 1024);
    char *two[] = {
        "collided", "--ticket-key",       "new-key", "--ticket-key=old-key", "--ticket-leeway-s",
        "0",        "--ticket-max-bytes", "64",      "--ticket-required",    NULL};
    CHECK(net_config_parse(&cfg, 9, two, err, sizeof err, NULL) == NET_CONFIG_OK);
    CHECK(key_is(&cfg, 0, "new-key") && key_is(&cfg, 1, "old-key") && cfg.ticket_required);
    CHECK(cfg.ticket_leeway_s == 0 && cfg.ticket_max_bytes == 64);
    net_config_default(&cfg);
    char *three[] = {"collided", "--ticket-key", "a", "--ticket-key",
                     "b",        "--ticket-key", "c", NULL};
    CHECK(net_config_parse(&cfg, 7, three, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    CHECK(strstr(err, "more than 2") && !strstr(err, "\"c\""));
    net_config_default(&cfg);
    char *required[] = {"collided", "--ticket-required", "on", NULL};
    CHECK(net_config_parse(&cfg, 3, required, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    char *range[] = {"collided", "--ticket-max-bytes", "16385", NULL};
    CHECK(net_config_parse(&cfg, 3, range, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    char *leeway[] = {"collided", "--ticket-leeway-s", "3601", NULL};
    CHECK(net_config_parse(&cfg, 3, leeway, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    /* The environment's key, replaced by the flags' (a flag wins over its variable). */
    setenv("COLLIDE_TICKET_KEY", "env-key", 1);
    net_config_default(&cfg);
    char *none[] = {"collided", NULL};
    CHECK(net_config_parse(&cfg, 1, none, err, sizeof err, NULL) == NET_CONFIG_OK);
    CHECK(cfg.ticket_key_count == 1 && key_is(&cfg, 0, "env-key"));
    char *one[] = {"collided", "--ticket-key", "flag-key", NULL};
    CHECK(net_config_parse(&cfg, 3, one, err, sizeof err, NULL) == NET_CONFIG_OK);
    CHECK(cfg.ticket_key_count == 1 && key_is(&cfg, 0, "flag-key"));
    setenv("COLLIDE_TICKET_KEY", "", 1); /* empty: none */
    CHECK(net_config_parse(&cfg, 1, none, err, sizeof err, NULL) == NET_CONFIG_OK);
    CHECK(cfg.ticket_key_count == 0);
    unsetenv("COLLIDE_TICKET_KEY");
    char long_key[NET_MAX_SECRET + 1];
    memset(long_key, 'k', NET_MAX_SECRET);
    long_key[NET_MAX_SECRET] = '\0';
    char *too_long[] = {"collided", "--ticket-key", long_key, NULL};
    CHECK(net_config_parse(&cfg, 3, too_long, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    CHECK(!strstr(err, "kkkk"));
}

static void test_key_file(void) {
    net_config cfg;
    char err[256];
    /* One key per line: CRLF and LF stripped, blank lines skipped, the last newline optional;
     * spaces inside a key are the key's. */
    static const char text[] = "\r\n  first key \r\n\nsecond\n";
    char *file[] = {"collided", "--ticket-key-file", (char *)key_file(text, sizeof text - 1), NULL};
    net_config_default(&cfg);
    CHECK_MSG(net_config_parse(&cfg, 3, file, err, sizeof err, NULL) == NET_CONFIG_OK, "%s", err);
    CHECK(key_is(&cfg, 0, "  first key ") && key_is(&cfg, 1, "second"));
    unlink(file[2]);
    /* With a flag's key: one from each. */
    char *both[] = {
        "collided", "--ticket-key", "flag", "--ticket-key-file", (char *)key_file("file", 4), NULL};
    net_config_default(&cfg);
    CHECK(net_config_parse(&cfg, 5, both, err, sizeof err, NULL) == NET_CONFIG_OK);
    CHECK(key_is(&cfg, 0, "flag") && key_is(&cfg, 1, "file"));
    unlink(both[4]);
    static const struct {
        const char *text;
        size_t len;
        const char *says;
    } bad[] = {
        {"", 0, "no key"},
        {"\n\r\n\n", 4, "no key"},
        {"a\nb\nc\n", 6, "more than 2"},
        {"a\0b\n", 4, "NUL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"collided", "--ticket-key-file", (char *)key_file(bad[i].text, bad[i].len),
                        NULL};
        net_config_default(&cfg);
        net_config_result res = net_config_parse(&cfg, 3, argv, err, sizeof err, NULL);
        unlink(argv[2]);
        CHECK_MSG(res == NET_CONFIG_ERROR && strstr(err, bad[i].says), "case %zu: %s", i, err);
    }
    /* Too long to be a key file; missing. Neither error quotes the file's bytes. */
    static char big[NET_TICKET_KEY_FILE_MAX + 2];
    memset(big, 'q', sizeof big);
    char *large[] = {"collided", "--ticket-key-file", (char *)key_file(big, sizeof big), NULL};
    net_config_default(&cfg);
    CHECK(net_config_parse(&cfg, 3, large, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    CHECK(strstr(err, "longer than") && !strstr(err, "qqq"));
    unlink(large[2]);
    char *missing[] = {"collided", "--ticket-key-file", "/nonexistent/collide-keys", NULL};
    CHECK(net_config_parse(&cfg, 3, missing, err, sizeof err, NULL) == NET_CONFIG_ERROR);
    CHECK(strstr(err, "/nonexistent/collide-keys"));
}

static void test_wipe(void) {
    net_config cfg = ticket_config(SHARED, true);
    net_config_wipe(&cfg);
    CHECK(cfg.ticket_key_count == 0 && cfg.token_len == 0 && cfg.admin_token_len == 0);
    static const char zero[NET_MAX_SECRET];
    CHECK(memcmp(cfg.ticket_keys[0], zero, NET_MAX_SECRET) == 0);
    CHECK(memcmp(cfg.token, zero, NET_MAX_SECRET) == 0);
    CHECK(memcmp(cfg.admin_token, zero, NET_MAX_SECRET) == 0);
}

TEST_MAIN(TEST(test_ticket_welcomes_with_its_claims), TEST(test_refusals_are_fatal_and_named),
          TEST(test_tokens_beside_tickets), TEST(test_admin_of_its_room_only),
          TEST(test_front_carries_the_grant), TEST(test_flags), TEST(test_key_file),
          TEST(test_wipe))

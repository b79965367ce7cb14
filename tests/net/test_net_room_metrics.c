/* Unit tests of the per-room observability (server/net/net_metrics.c): the collide_room_*
 * families for many rooms (the top 64 by clients labelled, the rest summed exactly under
 * room="other", the daemon-wide series the sum over rooms), the tick quantile behind
 * tick_p99_ms, and the bounded JSON of GET /rooms. */
#include <stdint.h>

#include "harness.h"
#include "net_metrics.h"
#include "net_rooms.h"

#define ROOMS 100

static uint32_t lcg_state;

static uint32_t lcg(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

/* The value of the sample whose series (name and labels, exactly as rendered) is `series`;
 * -1 when absent, -2 when present twice. */
static double sample(const char *text, const char *series) {
    size_t len = strlen(series);
    double found = -1;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        if ((size_t)(end - line) > len && strncmp(line, series, len) == 0 && line[len] == ' ') {
            if (found != -1) return -2;
            found = strtod(line + len + 1, NULL);
        }
        line = *end ? end + 1 : end;
    }
    return found;
}

/* Lines that start with prefix. */
static int count_lines(const char *text, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *line = text; *line;) {
        if (strncmp(line, prefix, len) == 0) n++;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    return n;
}

static char names[ROOMS][16];
static net_metrics metrics[ROOMS];
static net_room_metrics rooms[ROOMS];

/* 100 rooms with seeded counters and tick observations; clients in 0..39, so many ties. */
static void make_rooms(void) {
    lcg_state = 20261124u;
    memset(metrics, 0, sizeof metrics);
    for (int i = 0; i < ROOMS; i++) {
        snprintf(names[i], sizeof names[i], "room-%03d", i);
        net_metrics *m = &metrics[i];
        m->ticks_total = lcg() % 100000u;
        m->ticks_skipped_total = lcg() % 50u;
        m->steps_late_total = lcg() % 70u;
        m->steps_coalesced_total = lcg() % 30u;
        m->snapshots_sent_total = lcg() % 1000000u;
        m->frames_in_total = lcg() % 5000u;
        int obs = 1 + (int)(lcg() % 40u);
        for (int k = 0; k < obs; k++) {
            net_metrics_observe_tick(m, (double)(lcg() % 300000u) * 1e-6); /* 0..0.3 s */
            net_metrics_observe_lag(m, (double)(lcg() % 3000000u) * 1e-6); /* 0..3 s */
        }
        rooms[i] = (net_room_metrics){names[i], m, lcg() % 40u, lcg() % 500u, lcg() % 2000u};
    }
}

/* The fields the tests read, summed here rather than by net_metrics_add (which is under test). */
static void add_by_hand(net_metrics *acc, const net_metrics *m) {
    acc->ticks_total += m->ticks_total;
    acc->ticks_skipped_total += m->ticks_skipped_total;
    acc->steps_late_total += m->steps_late_total;
    acc->steps_coalesced_total += m->steps_coalesced_total;
    acc->snapshots_sent_total += m->snapshots_sent_total;
    acc->frames_in_total += m->frames_in_total;
    acc->connections_total += m->connections_total;
    for (int b = 0; b < NET_TICK_BUCKET_COUNT; b++)
        acc->tick_buckets[b] += m->tick_buckets[b];
    for (int b = 0; b < NET_LAG_BUCKET_COUNT; b++)
        acc->lag_buckets[b] += m->lag_buckets[b];
    acc->tick_count += m->tick_count;
    acc->lag_count += m->lag_count;
    acc->tick_sum_seconds += m->tick_sum_seconds;
    acc->lag_sum_seconds += m->lag_sum_seconds;
}

/* Indices of the rooms that must be labelled: most clients first, ties by index. */
static void expected_top(bool labelled[ROOMS]) {
    memset(labelled, 0, ROOMS * sizeof labelled[0]);
    for (int k = 0; k < NET_METRICS_ROOM_LABELS; k++) {
        int best = -1;
        for (int i = 0; i < ROOMS; i++)
            if (!labelled[i] && (best < 0 || rooms[i].clients > rooms[best].clients)) best = i;
        labelled[best] = true;
    }
}

static void test_top_64_labelled_rest_other_exact(void) {
    make_rooms();
    net_gauges g = {0};
    net_buf out = {0};
    CHECK(net_metrics_render_rooms(rooms, ROOMS, NULL, &g, &out));
    CHECK(net_buf_append(&out, "", 1)); /* NUL */
    const char *text = (const char *)out.data;
    bool labelled[ROOMS];
    expected_top(labelled);

    CHECK_MSG(count_lines(text, "collide_room_clients{") == NET_METRICS_ROOM_LABELS + 1, "%d rows",
              count_lines(text, "collide_room_clients{"));
    CHECK(count_lines(text, "# TYPE collide_room_ticks_total ") == 1);
    CHECK(count_lines(text, "collide_room_tick_duration_seconds_bucket{room=\"other\",") ==
          NET_TICK_BUCKET_COUNT + 1);

    net_metrics other = {0};
    uint64_t other_clients = 0, other_static = 0, other_moving = 0;
    char series[160];
    for (int i = 0; i < ROOMS; i++) {
        snprintf(series, sizeof series, "collide_room_clients{room=\"%s\"}", names[i]);
        double clients = sample(text, series);
        if (!labelled[i]) {
            CHECK_MSG(clients == -1, "%s (%u clients) must not be labelled", names[i],
                      rooms[i].clients);
            add_by_hand(&other, &metrics[i]);
            other_clients += rooms[i].clients;
            other_static += rooms[i].static_bodies;
            other_moving += rooms[i].moving_bodies;
            continue;
        }
        CHECK_MSG(clients == rooms[i].clients, "%s: %g clients, want %u", names[i], clients,
                  rooms[i].clients);
        snprintf(series, sizeof series, "collide_room_ticks_total{room=\"%s\"}", names[i]);
        CHECK(sample(text, series) == (double)metrics[i].ticks_total);
        snprintf(series, sizeof series, "collide_room_bodies{room=\"%s\",kind=\"moving\"}",
                 names[i]);
        CHECK(sample(text, series) == (double)rooms[i].moving_bodies);
        snprintf(series, sizeof series,
                 "collide_room_tick_duration_seconds_bucket{room=\"%s\",le=\"+Inf\"}", names[i]);
        CHECK(sample(text, series) == (double)metrics[i].tick_count);
    }

    /* The `other` row: every field summed exactly. */
    CHECK(sample(text, "collide_room_clients{room=\"other\"}") == (double)other_clients);
    CHECK(sample(text, "collide_room_bodies{room=\"other\",kind=\"static\"}") ==
          (double)other_static);
    CHECK(sample(text, "collide_room_bodies{room=\"other\",kind=\"moving\"}") ==
          (double)other_moving);
    CHECK(sample(text, "collide_room_ticks_total{room=\"other\"}") == (double)other.ticks_total);
    CHECK(sample(text, "collide_room_ticks_skipped_total{room=\"other\"}") ==
          (double)other.ticks_skipped_total);
    CHECK(sample(text, "collide_room_steps_late_total{room=\"other\"}") ==
          (double)other.steps_late_total);
    CHECK(sample(text, "collide_room_steps_coalesced_total{room=\"other\"}") ==
          (double)other.steps_coalesced_total);
    CHECK(sample(text, "collide_room_snapshots_sent_total{room=\"other\"}") ==
          (double)other.snapshots_sent_total);
    uint64_t cumulative = 0;
    for (int b = 0; b < NET_TICK_BUCKET_COUNT; b++) {
        cumulative += other.tick_buckets[b];
        snprintf(series, sizeof series,
                 "collide_room_tick_duration_seconds_bucket{room=\"other\",le=\"%g\"}",
                 net_tick_bucket_bounds[b]);
        CHECK_MSG(sample(text, series) == (double)cumulative, "%s: %g, want %llu", series,
                  sample(text, series), (unsigned long long)cumulative);
    }
    cumulative = 0;
    for (int b = 0; b < NET_LAG_BUCKET_COUNT; b++) {
        cumulative += other.lag_buckets[b];
        snprintf(series, sizeof series,
                 "collide_room_tick_lag_seconds_bucket{room=\"other\",le=\"%g\"}",
                 net_lag_bucket_bounds[b]);
        CHECK_MSG(sample(text, series) == (double)cumulative, "%s", series);
    }
    CHECK(sample(text, "collide_room_tick_lag_seconds_count{room=\"other\"}") ==
          (double)other.lag_count);
    CHECK_NEAR(sample(text, "collide_room_tick_duration_seconds_sum{room=\"other\"}"),
               other.tick_sum_seconds, 1e-6);
    net_buf_free(&out);
}

static void test_daemon_wide_is_the_sum(void) {
    make_rooms();
    net_metrics front = {0};
    front.connections_total = 777; /* counted before any room: must reach the daemon-wide sum */
    front.frames_in_total = 5;
    net_metrics sum = front;
    for (int i = 0; i < ROOMS; i++)
        add_by_hand(&sum, &metrics[i]);
    net_gauges g = {.clients = 1234, .static_bodies = 1, .moving_bodies = 2};
    net_buf out = {0};
    CHECK(net_metrics_render_rooms(rooms, ROOMS, &front, &g, &out));
    CHECK(net_buf_append(&out, "", 1));
    const char *text = (const char *)out.data;
    CHECK(sample(text, "collide_ticks_total") == (double)sum.ticks_total);
    CHECK(sample(text, "collide_ticks_skipped_total") == (double)sum.ticks_skipped_total);
    CHECK(sample(text, "collide_steps_coalesced_total") == (double)sum.steps_coalesced_total);
    CHECK(sample(text, "collide_snapshots_sent_total") == (double)sum.snapshots_sent_total);
    CHECK(sample(text, "collide_frames_in_total") == (double)sum.frames_in_total);
    CHECK(sample(text, "collide_connections_total") == 777);
    CHECK(sample(text, "collide_clients") == 1234);
    CHECK(sample(text, "collide_tick_duration_seconds_count") == (double)sum.tick_count);
    uint64_t cumulative = 0;
    char series[160];
    for (int b = 0; b < NET_TICK_BUCKET_COUNT; b++) {
        cumulative += sum.tick_buckets[b];
        snprintf(series, sizeof series, "collide_tick_duration_seconds_bucket{le=\"%g\"}",
                 net_tick_bucket_bounds[b]);
        CHECK_MSG(sample(text, series) == (double)cumulative, "%s", series);
    }
    /* And the rows of each room family add up to the daemon-wide series (front has none). */
    static const char *const families[][2] = {
        {"collide_room_ticks_total{room=\"", "collide_ticks_total"},
        {"collide_room_snapshots_sent_total{room=\"", "collide_snapshots_sent_total"},
        {"collide_room_tick_lag_seconds_count{room=\"", "collide_tick_lag_seconds_count"},
    };
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        double total = 0;
        int rows = 0;
        for (const char *line = text; (line = strstr(line, families[f][0])) != NULL; line++) {
            total += strtod(strchr(line, ' ') + 1, NULL);
            rows++;
        }
        CHECK(rows == NET_METRICS_ROOM_LABELS + 1);
        CHECK_MSG(total == sample(text, families[f][1]), "%s: rows sum %g, daemon-wide %g",
                  families[f][1], total, sample(text, families[f][1]));
    }
    net_buf_free(&out);
}

static void test_few_rooms_no_other_and_named_other(void) {
    make_rooms();
    net_gauges g = {0};
    net_buf out = {0};
    /* 3 rooms: all labelled, no `other` row. */
    CHECK(net_metrics_render_rooms(rooms, 3, NULL, &g, &out));
    CHECK(net_buf_append(&out, "", 1));
    CHECK(count_lines((const char *)out.data, "collide_room_clients{") == 3);
    CHECK(!strstr((const char *)out.data, "room=\"other\""));
    /* A room named `other`, the busiest: never a row of its own next to the sum, which holds
     * it (one row, no duplicate series). */
    rooms[5].name = "other";
    rooms[5].clients = 1000;
    out.len = 0;
    CHECK(net_metrics_render_rooms(rooms, ROOMS, NULL, &g, &out));
    CHECK(net_buf_append(&out, "", 1));
    const char *text = (const char *)out.data;
    CHECK(count_lines(text, "collide_room_clients{room=\"other\"}") == 1);
    CHECK(count_lines(text, "collide_room_clients{") == NET_METRICS_ROOM_LABELS + 1);
    CHECK(sample(text, "collide_room_clients{room=\"other\"}") >= 1000);
    /* Alone, it is its own `other`. */
    out.len = 0;
    CHECK(net_metrics_render_rooms(&rooms[5], 1, NULL, &g, &out));
    CHECK(net_buf_append(&out, "", 1));
    CHECK(sample((const char *)out.data, "collide_room_clients{room=\"other\"}") == 1000);
    /* A name that is not valid still renders as a well-formed label. */
    rooms[0].name = "a\"b\\c\nd";
    out.len = 0;
    CHECK(net_metrics_render_rooms(rooms, 1, NULL, &g, &out));
    CHECK(net_buf_append(&out, "", 1));
    CHECK(sample((const char *)out.data, "collide_room_ticks_total{room=\"a\\\"b\\\\c\\nd\"}") ==
          (double)metrics[0].ticks_total);
    net_buf_free(&out);
}

static void test_tick_quantile(void) {
    net_metrics m = {0};
    CHECK(net_metrics_tick_quantile(&m, 0.99) == 0.0);
    for (int i = 0; i < 98; i++)
        net_metrics_observe_tick(&m, 0.0001); /* first bucket, (0, 0.25 ms] */
    net_metrics_observe_tick(&m, 0.0045);     /* (4, 5 ms] */
    net_metrics_observe_tick(&m, 0.0045);
    /* rank 99 of 100: the middle of the (4, 5 ms] bucket's 2 */
    CHECK_NEAR(net_metrics_tick_quantile(&m, 0.99), 0.0045, 1e-12);
    /* rank 49: 49/98 of the first bucket, from 0 */
    CHECK_NEAR(net_metrics_tick_quantile(&m, 0.49), 0.000125, 1e-12);
    net_metrics_observe_tick(&m, 5.0); /* past every finite bound */
    for (int i = 0; i < 200; i++)
        net_metrics_observe_tick(&m, 9.0);
    CHECK_NEAR(net_metrics_tick_quantile(&m, 0.99), 0.25, 1e-12);
}

static void test_rooms_json(void) {
    net_room_info r[2] = {
        {.name = "default", .clients = 3, .bodies = 17, .tick = 600, .tick_p99_ms = 1.25},
        {.name = "a\"b",
         .clients = 0,
         .bodies = 0,
         .tick = 1,
         .auto_created = true,
         .tick_p99_ms = 0}};
    net_buf out = {0};
    CHECK(net_rooms_render_json(r, 2, &out));
    CHECK(net_buf_append(&out, "", 1));
    const char *want =
        "{\"rooms\": [{\"name\": \"default\", \"clients\": 3, \"bodies\": 17, \"tick\": 600, "
        "\"auto\": false, \"tick_p99_ms\": 1.250}, {\"name\": \"a\\\"b\", \"clients\": 0, "
        "\"bodies\": 0, \"tick\": 1, \"auto\": true, \"tick_p99_ms\": 0.000}], \"total\": 2, "
        "\"truncated\": false}\n";
    CHECK_MSG(strcmp((const char *)out.data, want) == 0, "got %s", (const char *)out.data);

    /* Many rooms: capped at NET_ROOMS_JSON_MAX entries, the total still told. */
    enum { MANY = NET_ROOMS_JSON_MAX + 500 };
    net_room_info *many = calloc(MANY, sizeof *many);
    CHECK(many);
    for (int i = 0; i < MANY; i++) {
        memset(many[i].name, 'x', NET_ROOM_NAME_MAX); /* the longest name */
        many[i].clients = UINT32_MAX;
        many[i].bodies = UINT64_MAX;
        many[i].tick = UINT64_MAX;
    }
    out.len = 0;
    bool ok = net_rooms_render_json(many, MANY, &out);
    free(many);
    CHECK(ok);
    CHECK(net_buf_append(&out, "", 1));
    const char *text = (const char *)out.data;
    int entries = 0;
    for (const char *p = text; (p = strstr(p, "{\"name\": ")) != NULL; p++)
        entries++;
    CHECK_MSG(entries == NET_ROOMS_JSON_MAX, "%d entries", entries);
    CHECK(strstr(text, "], \"total\": 1500, \"truncated\": true}\n"));
    CHECK_MSG(out.len < NET_ROOMS_JSON_MAX * 256u, "%zu bytes", out.len);
    net_buf_free(&out);
}

/* GET /rooms' players (issue 31: a ticket's sub is the name shown): exact text, escaped, and
 * capped at NET_ROOMS_JSON_PLAYERS with the total told. */
static void test_rooms_players_json(void) {
    net_room_player p[2] = {{.room = "arena", .id = 3, .name = "player-7", .ticket = true},
                            {.room = "default", .id = 1, .name = "a\"b", .admin = true}};
    net_buf out = {0};
    CHECK(net_rooms_render_players(p, 2, 2, &out));
    CHECK(net_buf_append(&out, "", 1));
    const char *want = "\"players\": [{\"room\": \"arena\", \"id\": 3, \"name\": \"player-7\", "
                       "\"admin\": false, \"ticket\": true}, {\"room\": \"default\", \"id\": 1, "
                       "\"name\": \"a\\\"b\", \"admin\": true, \"ticket\": false}], "
                       "\"players_total\": 2, \"players_truncated\": false";
    CHECK_MSG(strcmp((const char *)out.data, want) == 0, "got %s", (const char *)out.data);
    out.len = 0;
    CHECK(net_rooms_render_players(p, 0, 0, &out));
    CHECK(net_buf_append(&out, "", 1));
    CHECK(strcmp((const char *)out.data,
                 "\"players\": [], \"players_total\": 0, \"players_truncated\": false") == 0);
    enum { MANY = NET_ROOMS_JSON_PLAYERS + 10 };
    net_room_player *many = calloc(MANY, sizeof *many);
    CHECK(many);
    for (int i = 0; i < MANY; i++) {
        memset(many[i].room, 'r', NET_ROOM_NAME_MAX);
        memset(many[i].name, 'n', NET_ROOM_PLAYER_NAME - 1);
        many[i].id = UINT32_MAX;
    }
    out.len = 0;
    bool ok = net_rooms_render_players(many, MANY, 5000, &out);
    free(many);
    CHECK(ok && net_buf_append(&out, "", 1));
    int entries = 0;
    for (const char *q = (const char *)out.data; (q = strstr(q, "{\"room\": ")) != NULL; q++)
        entries++;
    CHECK_MSG(entries == NET_ROOMS_JSON_PLAYERS, "%d entries", entries);
    CHECK(strstr((const char *)out.data, "\"players_total\": 5000, \"players_truncated\": true"));
    net_buf_free(&out);
}

TEST_MAIN(TEST(test_top_64_labelled_rest_other_exact), TEST(test_daemon_wide_is_the_sum),
          TEST(test_few_rooms_no_other_and_named_other), TEST(test_tick_quantile),
          TEST(test_rooms_json), TEST(test_rooms_players_json))

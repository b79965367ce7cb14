#include "load_options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define CMD "load"

const char *const cc_load_pattern_names[5] = {"walk", "bounce", "swarm", "platformer", "play"};
const cc_platform cc_load_sideon_platforms[2] = {
    {{102.0f, 1.75f}, {122.0f, 1.75f}, {1.9f, 0.25f}, 4.0f},  /* the ferry, across the pit */
    {{142.0f, 1.75f}, {142.0f, 13.75f}, {1.9f, 0.25f}, 3.0f}, /* the lift, up the shaft */
};
const char *const cc_load_shape_names[3] = {"box", "polygon", "circle"};

/* The headings of --help, in their order there. */
typedef enum load_section {
    SEC_PLAYERS,
    SEC_ROOMS,
    SEC_TICKETS,
    SEC_SNAPSHOTS,
    SEC_CHECKS,
    SEC_OUTPUT,
    SEC_COUNT
} load_section;

static const char *const section_titles[SEC_COUNT] = {
    "Players:", "Rooms and backend:", "Tickets:", "Snapshots:", "Checks and gates:", "Output:"};

typedef struct load_flag load_flag;

/* Reads the flag's value (arg; NULL for a flag without one) into its field of o. name is the flag
 * as typed, "--clients", for the message on stderr when the value is refused (false). */
typedef bool (*load_flag_parse)(const load_flag *f, const char *name, const char *arg,
                                load_opts *o);

struct load_flag {
    const char *flag;         /* without the leading "--" */
    bool has_arg;             /* takes a value */
    load_flag_parse parse;    /* reads the value into the field */
    size_t offset;            /* the field in load_opts */
    size_t given;             /* a bool in load_opts set once the flag is seen (0: none; offset 0 is
                                 the common options, never a bool) */
    double min, max;          /* accepted range, for numbers */
    int count;                /* --spawn-box, --target: numbers in the list; choices: names; a flag
                                 without a value: the int it stores */
    const char *const *names; /* choices: the accepted words */
    load_section section;     /* its heading in --help */
    /* Its --help entry: "META  text", the value's name (empty for a flag without one) and the
     * text, whose further lines follow '\n'; NULL: described in the entry before. */
    const char *help;
};

static void *field(const load_flag *f, load_opts *o) { return (char *)o + f->offset; }

static bool parse_u32(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    return cc_parse_u32(CMD, name, arg, (uint32_t)f->min, (uint32_t)f->max, field(f, o));
}
static bool parse_u64(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    return cc_parse_u64(CMD, name, arg, field(f, o));
}
static bool parse_double(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    return cc_parse_double(CMD, name, arg, f->min, f->max, field(f, o));
}
static bool parse_duration(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    return cc_parse_duration(CMD, name, arg, f->min, f->max, field(f, o));
}
static bool parse_floats(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    return cc_parse_floats(CMD, name, arg, field(f, o), f->count);
}
static bool parse_spawn_box(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    if (!parse_floats(f, name, arg, o)) return false;
    if (o->spawn_box[2] < o->spawn_box[0] || o->spawn_box[3] < o->spawn_box[1]) {
        fprintf(stderr, "collide-client " CMD ": --spawn-box: need x0 <= x1 and y0 <= y1\n");
        return false;
    }
    return true;
}
/* --platform x0,y0,x1,y1,hx,hy,speed: one more platform, up to CC_LOAD_MAX_PLATFORMS. */
static bool parse_platform(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    (void)f;
    float v[7];
    if (o->n_platforms >= CC_LOAD_MAX_PLATFORMS) {
        fprintf(stderr, "collide-client " CMD ": %s: at most %u platforms\n", name,
                CC_LOAD_MAX_PLATFORMS);
        return false;
    }
    if (!cc_parse_floats(CMD, name, arg, v, 7)) return false;
    if (!(v[4] > 0.0f) || !(v[5] > 0.0f) || !(v[6] > 0.0f)) {
        fprintf(stderr, "collide-client " CMD ": %s: half extents and speed must be > 0\n", name);
        return false;
    }
    o->platforms[o->n_platforms++] = (cc_platform){{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, v[6]};
    return true;
}
/* One of f->names, stored as its index. */
static bool parse_choice(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    int *out = field(f, o);
    for (int i = 0; i < f->count; i++) {
        if (strcmp(arg, f->names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    *out = -1;
    fprintf(stderr, "collide-client " CMD ": %s: unknown value '%s' (one of:", name, arg);
    for (int i = 0; i < f->count; i++)
        fprintf(stderr, " %s", f->names[i]);
    fprintf(stderr, ")\n");
    return false;
}
static bool parse_string(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    (void)name;
    *(const char **)field(f, o) = arg;
    return true;
}
static bool parse_true(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    (void)name, (void)arg;
    *(bool *)field(f, o) = true;
    return true;
}
static bool parse_int_value(const load_flag *f, const char *name, const char *arg, load_opts *o) {
    (void)name, (void)arg;
    *(int *)field(f, o) = f->count;
    return true;
}

/* In getopt's order (which orders the possibilities of an ambiguous abbreviation); --help lists
 * them by section, in this order within each. */
#define F(member) offsetof(load_opts, member)
static const load_flag flags[] = {
    {"clients", true, parse_u32, F(clients), 0, 1, 1000000, 0, NULL, SEC_PLAYERS,
     "N  simulated players (default 100)"},
    {"threads", true, parse_u32, F(threads), 0, 1, 256, 0, NULL, SEC_PLAYERS,
     "N  event loops, one per thread; clients split across them (default 1)"},
    {"ramp", true, parse_duration, F(ramp_s), 0, 0, 3600, 0, NULL, SEC_PLAYERS,
     "DURATION  spread the connects over this time (default 1s)"},
    {"duration", true, parse_duration, F(duration_s), 0, 0.001, 86400, 0, NULL, SEC_PLAYERS,
     "DURATION  whole run, ramp included (default 10s); e.g. 30, 30s, 500ms, 2m"},
    {"rate", true, parse_double, F(rate_hz), 0, 0.1, 1000, 0, NULL, SEC_PLAYERS,
     "HZ  intents per second per player (default 30)"},
    {"pattern", true, parse_choice, F(pattern), 0, 0, 0, 5, cc_load_pattern_names, SEC_PLAYERS,
     "P  walk | bounce | swarm | platformer | play (default walk); platformer:\neach player is a "
     "character (a box --size x 2 --size) that walks left\nand right, rests, turns at walls "
     "and jumps; a backend drives the\nmoving platforms (--platform), so it needs "
     "--admin-token; play: the\nplay page's bots (play-bots): each wanders within 25 units of "
     "where\nit spawned (without --spawn-box, within 20 of the world's centre,\nwhere the page "
     "puts its players), dodges across its way now and\nthen, and turns when a static stops it"},
    {"jumps", true, parse_double, F(jumps_hz), 0, 0, 1000, 0, NULL, SEC_PLAYERS,
     "R  platformer: jumps per second per walking player (default 0.5)"},
    {"platform", true, parse_platform, 0, 0, 0, 0, 7, NULL, SEC_PLAYERS,
     "x0,y0,x1,y1,hx,hy,speed  platformer: a moving platform (a box of half\nextents hx, hy) "
     "the backend spawns at x0,y0 and drives to x1,y1\nand back; repeat for more (default: "
     "the side-on level's ferry\nand lift, examples/worlds/sideon.json)"},
    {"no-platforms", false, parse_true, F(no_platforms), 0, 0, 0, 0, NULL, SEC_PLAYERS,
     "  platformer: no moving platforms, no backend needed"},
    {"speed", true, parse_double, F(speed), 0, 0, 1e6, 0, NULL, SEC_PLAYERS,
     "UNITS_PER_S  intent speed (default 5)"},
    {"hold", false, parse_true, F(hold), 0, 0, 0, 0, NULL, SEC_PLAYERS,
     "  send an intent only when its velocity changes (intents hold until\nreplaced): with "
     "--speed 0, players at rest that send nothing after\ntheir first"},
    {"shape", true, parse_choice, F(shape), 0, 0, 0, 3, cc_load_shape_names, SEC_PLAYERS,
     "S  box | polygon | circle (default box)"},
    {"size", true, parse_double, F(size), 0, 0.001, 1e4, 0, NULL, SEC_PLAYERS,
     "UNITS  half extent / circumradius / radius (default 0.4)"},
    {"spawn-box", true, parse_spawn_box, F(spawn_box), F(spawn_box_set), 0, 0, 4, NULL, SEC_PLAYERS,
     "x0,y0,x1,y1  where to spawn (default: the world bounds from Welcome)"},
    {"target", true, parse_floats, F(target), F(target_set), 0, 0, 2, NULL, SEC_PLAYERS,
     "x,y  the swarm's meeting point (default: the world centre)"},
    {"seed", true, parse_u32, F(seed), 0, 1, UINT32_MAX, 0, NULL, SEC_PLAYERS,
     "N  random seed (default 1)"},
    {"check", false, parse_true, F(check), 0, 0, 0, 0, NULL, SEC_CHECKS,
     "  verify collision invariants and the contact/sensor events\nfrom the received snapshots"},
    {"quantized", false, parse_true, F(quantized), 0, 0, 0, 0, NULL, SEC_SNAPSHOTS,
     "  ask for quantized snapshots (Snapshot.packed) and decode them"},
    {"snapshot-rate", true, parse_u32, F(snapshot_rate), 0, 0, 100000, 0, NULL, SEC_SNAPSHOTS,
     "HZ  ask for HZ snapshots a second, the nearest tick rate / k (default 0:\nevery tick)"},
    {"check-clients", true, parse_u32, F(check_clients), 0, 1, 1000000, 0, NULL, SEC_CHECKS,
     "N  clients that run the checker (default 16)"},
    {"check-tolerance", true, parse_double, F(check_tolerance), 0, 0, 1e3, 0, NULL, SEC_CHECKS,
     "U  allowed overlap depth (default 0.01)"},
    {"max-p99-ms", true, parse_double, F(thresholds.max_p99_ms), F(thresholds.has_p99), 0, 1e9, 0,
     NULL, SEC_CHECKS, "MS  fail when the intent-to-ack p99 is above MS"},
    {"max-errors", true, parse_u64, F(thresholds.max_errors), F(thresholds.has_errors), 0, 0, 0,
     NULL, SEC_CHECKS, "N  fail when more than N Error messages arrive"},
    {"max-disconnects", true, parse_u64, F(thresholds.max_disconnects),
     F(thresholds.has_disconnects), 0, 0, 0, NULL, SEC_CHECKS,
     "N  fail when more than N clients drop or cannot connect"},
    {"max-violations", true, parse_u64, F(thresholds.max_violations), 0, 0, 0, 0, NULL, SEC_CHECKS,
     "N  with --check, fail above N violations (default 0)"},
    {"stall-timeout", true, parse_duration, F(stall_s), 0, 0.01, 3600, 0, NULL, SEC_CHECKS,
     "DURATION  give a silent connection up (default 5s)"},
    {"drain", true, parse_duration, F(drain_s), 0, 0, 600, 0, NULL, SEC_CHECKS,
     "DURATION  after the run, wait this long for the last acks (default 1s)"},
    {"json", true, parse_string, F(json_path), 0, 0, 0, 0, NULL, SEC_OUTPUT,
     "FILE  write the report as JSON"},
    {"pin", true, parse_u32, F(pin_cpu), F(pin_set), 0, 1023, 0, NULL, SEC_OUTPUT,
     "CPU  run every thread of this tool on CPU only (sched_setaffinity), so\nit does not share "
     "the daemon's core (see --daemon-pid)"},
    {"daemon-pid", true, parse_u32, F(daemon_pid), 0, 1, 4194304, 0, NULL, SEC_OUTPUT,
     "PID  report the daemon's CPU share over the run (user + system time of\n/proc/PID/stat "
     "over the wall time, in cores): a daemon on its own\ncore (taskset) gives players per core"},
    {"progress", false, parse_int_value, F(progress), 0, 0, 0, 1, NULL, SEC_OUTPUT,
     "/ --no-progress  one line per second (default: when stderr is a terminal)"},
    {"no-progress", false, parse_int_value, F(progress), 0, 0, 0, 0, NULL, SEC_OUTPUT, NULL},
    {"rooms", true, parse_u32, F(rooms), 0, 0, CC_LOAD_MAX_ROOMS, 0, NULL, SEC_ROOMS,
     "N  spread the players round robin over N rooms (Hello.room), reported\nper room; 0 = the "
     "default room, Hello.room empty (default 0, at most 1000)"},
    {"room-prefix", true, parse_string, F(room_prefix), 0, 0, 0, 0, NULL, SEC_ROOMS,
     "P  room names are P0 .. P{N-1} (default load-)"},
    {"room", true, parse_string, F(room), 0, 0, 0, 0, NULL, SEC_ROOMS,
     "NAME  every player (and the backend) joins the room NAME; not with\n--rooms (default: the "
     "room default)"},
    {"backend", true, parse_u32, F(backend_npcs), 0, 0, 100000, 0, NULL, SEC_ROOMS,
     "M  one admin connection spawns M NPCs and drives them at --rate Hz\nwith one MoveIntents "
     "batch per tick (default 0: none)"},
    {"admin-token", true, parse_string, F(admin_token), 0, 0, 0, 0, NULL, SEC_ROOMS,
     "SECRET  the backend's Hello.token (required with --backend)"},
    {"queries", true, parse_double, F(queries_hz), 0, 0, 1000, 0, NULL, SEC_ROOMS,
     "R  each player also sends R first-hit ray casts per second, 20\nunits from its body in a "
     "random direction; their answer\nlatency is reported (default 0: none)"},
    {"backend-queries", true, parse_double, F(backend_queries_hz), 0, 0, 1e6, 0, NULL, SEC_ROOMS,
     "R  the backend also sends R first-hit ray casts per second in\nall, from its NPCs in "
     "turn, "
     "as --queries does (default 0)"},
    {"spin", true, parse_double, F(spin), 0, 0, 1000, 0, NULL, SEC_ROOMS,
     "W  each player's body also turns, at a speed drawn uniformly\nfrom [-W, W] rad/s "
     "(MoveIntent.angular_velocity; default 0)"},
    {"ticket-key", true, parse_string, F(ticket_key), 0, 0, 0, 0, NULL, SEC_TICKETS,
     "SECRET  the daemon's --ticket-key: each player says Hello with its own\nticket (its "
     "room, "
     "sub = its name load-N), made as it connects;\nwith --backend and no --admin-token the "
     "backend gets an admin\nticket for its room. Replaces --token. Visible in the "
     "process\nlist: "
     "prefer --ticket-key-file"},
    {"ticket-key-file", true, parse_string, F(ticket_key_file), 0, 0, 0, 0, NULL, SEC_TICKETS,
     "PATH  the same, read from a file (trailing newlines are not part of it)"},
    {"ticket-ttl", true, parse_duration, F(ticket_ttl_s), F(ticket_ttl_set), 1, 86400, 0, NULL,
     SEC_TICKETS,
     "DURATION  each ticket expires this long after its player connects\n(default 60s: a "
     "ticket "
     "is checked once, at Hello)"},
};
#undef F
#define FLAG_COUNT (sizeof flags / sizeof flags[0])

#define HELP_COLUMN 20 /* "--flag META" padded to it, then the text: 23 columns in all */

/* One entry: "  --flag META  text", its further lines under the text. */
static void print_flag(FILE *f, const load_flag *fl) {
    const char *sep = strstr(fl->help, "  ");
    char left[64];
    snprintf(left, sizeof left, "--%s%s%.*s", fl->flag, sep == fl->help ? "" : " ",
             (int)(sep - fl->help), fl->help);
    fprintf(f, strlen(left) <= HELP_COLUMN ? "  %-20s " : "  %s  ", left);
    for (const char *s = sep + 2; *s; s++) {
        fputc(*s, f);
        if (*s == '\n') fprintf(f, "%*s", HELP_COLUMN + 3, "");
    }
    fputc('\n', f);
}

static void load_usage(FILE *f) {
    fprintf(f, "usage: collide-client load [options]\n"
               "Drives simulated players against collided and reports latency, throughput and "
               "errors.\n"
               "With --transport udp each player is an ENet peer: it builds every snapshot from "
               "its\nbaseline, acknowledges what it applied, and the report adds a udp: line.\n\n");
    for (int s = 0; s < SEC_COUNT; s++) {
        fprintf(f, "%s\n", section_titles[s]);
        for (size_t i = 0; i < FLAG_COUNT; i++)
            if (flags[i].section == (load_section)s && flags[i].help) print_flag(f, &flags[i]);
    }
    fprintf(f, "Connection:\n" CC_COMMON_HELP
               "Exit status: 0 pass, 1 a threshold crossed or no client connected, 2 bad "
               "parameters.\n");
}

bool cc_load_room_name(char *out, size_t size, const char *prefix, uint32_t room) {
    int n = snprintf(out, size, "%s%u", prefix, room);
    /* The daemon ends the session of a Hello whose room is not a valid name. */
    return n > 0 && (size_t)n < size && cc_room_name_valid(out);
}

static void load_defaults(load_opts *o) {
    memset(o, 0, sizeof *o);
    cc_common_defaults(&o->common);
    o->clients = 100;
    o->threads = 1;
    o->ramp_s = 1.0;
    o->duration_s = 10.0;
    o->rate_hz = 30.0;
    o->speed = 5.0;
    o->size = 0.4;
    o->check_clients = 16;
    o->check_tolerance = 0.01;
    o->stall_s = 5.0;
    o->drain_s = 1.0;
    o->seed = 1;
    o->progress = -1;
    o->room_prefix = "load-";
    o->name_prefix = "load-";
    o->ticket_ttl_s = 60.0;
    o->jumps_hz = 0.5;
}

/* The ticket flags, checked last since a key read here must be freed by the caller: -1 with the
 * key in o->ticket (or none), or CC_EXIT_USAGE after a message and no key. */
static int load_check_tickets(load_opts *o) {
    bool keyed = o->ticket_key != NULL || o->ticket_key_file != NULL;
    if (keyed && o->common.token[0]) {
        fprintf(stderr,
                "collide-client " CMD ": --ticket-key gives each player its own Hello.token: "
                "leave --token out\n");
        return CC_EXIT_USAGE;
    }
    if (o->ticket_ttl_set && !keyed) {
        fprintf(stderr, "collide-client " CMD ": --ticket-ttl needs --ticket-key or "
                        "--ticket-key-file\n");
        return CC_EXIT_USAGE;
    }
    /* No environment: a load run in a shell that exported the daemon's COLLIDE_TICKET_KEY must
     * not start sending tickets unasked. */
    cc_ticket_key_source src = {.value_flag = "--ticket-key",
                                .value = o->ticket_key,
                                .file_flag = "--ticket-key-file",
                                .file = o->ticket_key_file};
    if (!cc_ticket_key_load(CMD, &src, &o->ticket)) return CC_EXIT_USAGE;
    return -1;
}

/* The checks across flags, once all are read; -1 or CC_EXIT_USAGE after a message. */
static int load_check(load_opts *o) {
    if (o->ramp_s >= o->duration_s) {
        fprintf(stderr,
                "collide-client " CMD ": --ramp (%g s) must be shorter than --duration (%g s), "
                "which includes it\n",
                o->ramp_s, o->duration_s);
        return CC_EXIT_USAGE;
    }
    if (o->rooms > 0) {
        /* The longest name is the last room's: if it is valid, all are. */
        char name[CC_LOAD_ROOM_NAME + 1];
        if (!cc_load_room_name(name, sizeof name, o->room_prefix, o->rooms - 1u)) {
            fprintf(stderr,
                    "collide-client " CMD ": --room-prefix '%s': room names must be 1..%u bytes of "
                    "[A-Za-z0-9_.:-]\n",
                    o->room_prefix, CC_LOAD_ROOM_NAME);
            return CC_EXIT_USAGE;
        }
    }
    if (o->room && (o->rooms > 0 || !cc_room_name_valid(o->room))) {
        fprintf(stderr, "collide-client " CMD ": --room '%s': %s\n", o->room,
                o->rooms > 0 ? "one room, or --rooms N, not both"
                             : "a room name is 1..64 bytes of [A-Za-z0-9_.:-]");
        return CC_EXIT_USAGE;
    }
    bool keyed = o->ticket_key != NULL || o->ticket_key_file != NULL;
    if (o->pattern != PATTERN_PLATFORMER && (o->n_platforms > 0 || o->no_platforms)) {
        fprintf(stderr, "collide-client " CMD ": --platform and --no-platforms go with --pattern "
                        "platformer\n");
        return CC_EXIT_USAGE;
    }
    if (o->pattern == PATTERN_PLATFORMER && !o->no_platforms && o->n_platforms == 0) {
        memcpy(o->platforms, cc_load_sideon_platforms, sizeof cc_load_sideon_platforms);
        o->n_platforms = 2;
    }
    if (o->no_platforms) o->n_platforms = 0;
    if (o->n_platforms > 0 && (!o->admin_token || !o->admin_token[0]) && !keyed) {
        fprintf(stderr,
                "collide-client " CMD ": the platformer's moving platforms are a backend's: "
                "give --admin-token (or --ticket-key), or --no-platforms\n");
        return CC_EXIT_USAGE;
    }
    if (o->n_platforms > 0 && o->common.udp) {
        fprintf(stderr,
                "collide-client " CMD ": the platformer's moving platforms need --transport "
                "tcp or ws (or --no-platforms)\n");
        return CC_EXIT_USAGE;
    }
    if (o->backend_npcs > 0 && (!o->admin_token || !o->admin_token[0]) && !keyed) {
        fprintf(stderr, "collide-client " CMD ": --backend needs --admin-token (or --ticket-key: "
                        "an admin ticket for its room)\n");
        return CC_EXIT_USAGE;
    }
    if (o->backend_npcs > 0 && o->common.udp) {
        /* The backend is a game server's admin link: it speaks TCP or WebSocket, and the --port
         * of a UDP run is the daemon's ENet port. */
        fprintf(stderr, "collide-client " CMD ": --backend needs --transport tcp or ws\n");
        return CC_EXIT_USAGE;
    }
    if (o->backend_queries_hz > 0 && o->backend_npcs == 0) {
        fprintf(stderr, "collide-client " CMD ": --backend-queries needs --backend\n");
        return CC_EXIT_USAGE;
    }
    if (o->threads > o->clients) o->threads = o->clients;
    if (o->check_clients > o->clients) o->check_clients = o->clients;
    return load_check_tickets(o);
}

/* One flag of the table was given, with arg as its value. False after a message on stderr. */
static bool load_flag_read(const load_flag *f, const char *arg, load_opts *o) {
    char name[40];
    snprintf(name, sizeof name, "--%s", f->flag);
    bool ok = f->parse(f, name, arg, o);
    if (f->given) *(bool *)((char *)o + f->given) = true;
    return ok;
}

int cc_load_parse(int argc, char **argv, load_opts *o) {
    static const struct option common[] = {CC_COMMON_LONG_OPTIONS};
    enum { COMMON_COUNT = sizeof common / sizeof common[0] };
    struct option longs[COMMON_COUNT + FLAG_COUNT + 1];
    memcpy(longs, common, sizeof common);
    for (size_t i = 0; i < FLAG_COUNT; i++)
        longs[COMMON_COUNT + i] =
            (struct option){flags[i].flag, flags[i].has_arg, NULL, CC_OPT_FIRST_FREE + (int)i};
    longs[COMMON_COUNT + FLAG_COUNT] = (struct option){NULL, 0, NULL, 0};
    load_defaults(o);
    optind = 1;
    opterr = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        int common_rc = cc_common_option(CMD, c, optarg, &o->common);
        if (common_rc < 0) return CC_EXIT_USAGE;
        if (common_rc > 0) continue;
        if (c == 'h') {
            load_usage(stdout);
            return CC_EXIT_OK;
        }
        if (c < CC_OPT_FIRST_FREE || c >= CC_OPT_FIRST_FREE + (int)FLAG_COUNT) {
            fprintf(stderr, "collide-client " CMD ": see 'collide-client load --help'\n");
            return CC_EXIT_USAGE;
        }
        if (!load_flag_read(&flags[c - CC_OPT_FIRST_FREE], optarg, o)) return CC_EXIT_USAGE;
    }
    if (!cc_no_operands(CMD, argc, argv, optind)) return CC_EXIT_USAGE;
    return load_check(o);
}

/* load_options: collide-client load's flags, one table (load_options.c) of flag name, parser,
 * field, range and --help line, on the idea of the daemon's net_config.c (the load tool reads no
 * environment). The table gives getopt its long options, the parse its dispatch and --help its
 * text, so a flag is added in one place. */
#ifndef COLLIDE_CLIENT_LOAD_OPTIONS_H
#define COLLIDE_CLIENT_LOAD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "cli.h"
#include "report.h"
#include "ticket.h"

#define CC_LOAD_MAX_ROOMS 1000u /* --rooms bound: each room keeps a histogram per worker */
#define CC_LOAD_ROOM_NAME CC_ROOM_NAME_MAX

#define CC_LOAD_MAX_PLATFORMS 16u /* --platform given this many times at most */

typedef enum load_pattern {
    PATTERN_WALK,
    PATTERN_BOUNCE,
    PATTERN_SWARM,
    PATTERN_PLATFORMER,
    PATTERN_PLAY
} load_pattern;

/* --pattern's and --shape's values, by load_opts.pattern and load_opts.shape. */
extern const char *const cc_load_pattern_names[5];
/* The side-on example level's platforms (docs/operations.md "A side-on level"): the ferry and
 * the lift, what --pattern platformer drives when no --platform is given. */
extern const cc_platform cc_load_sideon_platforms[2];
extern const char *const cc_load_shape_names[3];

typedef struct load_opts {
    cc_common_opts common;     /* --host --port --token --max-frame */
    uint32_t clients;          /* --clients */
    uint32_t threads;          /* --threads */
    double ramp_s;             /* --ramp */
    double duration_s;         /* --duration: total run time, ramp included */
    double rate_hz;            /* --rate: intents per second per client */
    double speed;              /* --speed: units per second */
    double size;               /* --size: half extent / radius / circumradius */
    int pattern;               /* load_pattern */
    int shape;                 /* index in cc_load_shape_names */
    bool hold;                 /* --hold: an intent only when its velocity changes */
    bool check;                /* --check */
    uint32_t check_clients;    /* --check-clients: how many clients run the checker */
    double check_tolerance;    /* --check-tolerance */
    const char *json_path;     /* --json */
    cc_thresholds thresholds;  /* --max-p99-ms --max-errors --max-disconnects --max-violations */
    double stall_s;            /* --stall-timeout: silence before a client is given up */
    double drain_s;            /* --drain: wait for the last acks after the run */
    uint32_t seed;             /* --seed */
    bool spawn_box_set;        /* --spawn-box given */
    float spawn_box[4];        /* x0,y0,x1,y1 */
    bool target_set;           /* --target given */
    float target[2];           /* swarm point */
    int progress;              /* -1 auto (TTY), 0 off, 1 on */
    uint32_t rooms;            /* --rooms: players spread over this many rooms (0: Hello.room "") */
    const char *room_prefix;   /* --room-prefix: rooms are PREFIX0 .. PREFIX{rooms-1} */
    const char *room;          /* --room: every player and the backend join it (NULL: not given) */
    uint32_t backend_npcs;     /* --backend: NPCs of the admin connection (0: none) */
    const char *admin_token;   /* --admin-token: the backend's Hello.token */
    double queries_hz;         /* --queries: ray casts per second per player (0: none) */
    bool quantized;            /* --quantized: Hello.quantized, Snapshot.packed decoded */
    uint32_t snapshot_rate;    /* --snapshot-rate: Hello.snapshot_rate_hz (0: every tick) */
    double backend_queries_hz; /* --backend-queries: ray casts per second from the backend */
    double jumps_hz;           /* --jumps: platformer jumps per second per player (walking) */
    cc_platform platforms[CC_LOAD_MAX_PLATFORMS]; /* --platform, in order given */
    uint32_t n_platforms;                         /* --platform count (then the defaults) */
    bool no_platforms;                            /* --no-platforms */
    double spin;                 /* --spin: each player turns at a fixed speed drawn uniformly from
                                  * [-spin, spin] rad/s (0: no turning) */
    const char *ticket_key;      /* --ticket-key: the daemon's --ticket-key (NULL: not given) */
    const char *ticket_key_file; /* --ticket-key-file: a file holding it (NULL: not given) */
    double ticket_ttl_s;         /* --ticket-ttl: each ticket's life from its player's connect */
    bool ticket_ttl_set;         /* --ticket-ttl given */
    uint32_t pin_cpu;            /* --pin: the CPU every thread of the tool runs on */
    bool pin_set;                /* --pin given */
    uint32_t daemon_pid;         /* --daemon-pid: the daemon whose CPU share is reported (0: no) */
    cc_ticket_key ticket;        /* the key read from either flag by cc_load_parse (bytes NULL: no
                                  * tickets); the caller frees it with cc_ticket_key_free */
    bool brief;                  /* no flag: a one-line summary instead of the report (play-bots) */
    const char *name_prefix;     /* no flag: player i says Hello with the name PREFIXi ("load-") */
} load_opts;

/* Parses the load options into o. Returns -1 on success, else the exit code (usage printed on
 * --help, a message on stderr for a bad value); o->ticket holds a key only after a -1. */
int cc_load_parse(int argc, char **argv, load_opts *o);
/* Writes PREFIX<room> into out; false when it does not fit or would not be a valid room name. */
bool cc_load_room_name(char *out, size_t size, const char *prefix, uint32_t room);

#endif

/* collide-client ticket: prints one ticket, so an operator can try the daemon's --ticket-key by
 * hand (collide-client ping --token "$(collide-client ticket --room default)"). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ticket.h"

#define CMD "ticket"
#define TTL_MAX_S (366.0 * 86400.0) /* a ticket is a join pass, not an account: at most a year */
/* A Hello carries the ticket with the name and the room; the daemon's --max-hello-frame (default
 * 1024 bytes) caps the whole frame. Above this a warning says so. */
#define LONG_TICKET 900u

/* What the command line asks. */
typedef struct ticket_args {
    cc_ticket_key_source src; /* --key, --key-file, $COLLIDE_TICKET_KEY */
    const char *room;         /* --room (NULL: not given) */
    const char *sub;          /* --sub (NULL: none) */
    double ttl_s;             /* --ttl */
    bool has_nbf;             /* --nbf given */
    double nbf_s;             /* --nbf: valid from this long after the issue */
    bool admin;               /* --admin */
    bool has_max_bodies;      /* --max-bodies given */
    uint32_t max_bodies;      /* --max-bodies */
} ticket_args;

static void ticket_usage(FILE *f) {
    fprintf(f, "usage: collide-client ticket --room ROOM [options]\n"
               "Prints a ticket (PROTOCOL.md 1.2): an HS256 JWT signed with the daemon's "
               "--ticket-key,\nfor one player and one room, to pass as Hello.token "
               "(collide-client ping/watch --token).\n\n"
               "  --room ROOM         the room it admits to (claim \"room\"; \"\" or default: the "
               "default room)\n"
               "  --ttl DURATION      valid for this long from now (claim \"exp\"; default 60s; "
               "whole\n"
               "                      seconds, rounded up; at most 366 days)\n"
               "  --sub NAME          the player's name (claim \"sub\"), logged by the daemon\n"
               "  --admin             an admin of that room only (claim \"admin\": true)\n"
               "  --max-bodies N      lowers the per-client body limit for this player (claim "
               "\"max_bodies\")\n"
               "  --nbf DELAY         not valid until DELAY after now (claim \"nbf\"; e.g. 30s)\n"
               "The key (never printed): one of the two flags, else the environment:\n"
               "  --key-file PATH     a file holding the key: its first line (the daemon's\n"
               "                      --ticket-key-file format; line ends are not part of it)\n"
               "  --key SECRET        the key itself (visible to local users in the process list: "
               "prefer\n"
               "                      the file or the environment)\n"
               "  " CC_TICKET_KEY_ENV "  (environment) the key itself, as the daemon reads it\n"
               "  -h, --help          this text\n"
               "Claim \"iat\" is the time of issue. Exit status: 0 printed, 1 failed, 2 bad "
               "parameters.\n");
}

/* One option of the table below; false after a message on stderr. */
static bool ticket_option(int c, const char *arg, ticket_args *a) {
    switch (c) {
    case 'k':
        a->src.value = arg;
        return true;
    case 'f':
        a->src.file = arg;
        return true;
    case 'r':
        if (arg[0] && !cc_room_name_valid(arg)) {
            fprintf(stderr,
                    "collide-client " CMD ": --room '%s': a room name is 1..%u bytes of "
                    "[A-Za-z0-9_.:-] (\"\" is the default room)\n",
                    arg, CC_ROOM_NAME_MAX);
            return false;
        }
        a->room = arg;
        return true;
    case 's':
        a->sub = arg;
        return true;
    case 't':
        return cc_parse_duration(CMD, "--ttl", arg, 1.0, TTL_MAX_S, &a->ttl_s);
    case 'n':
        a->has_nbf = true;
        return cc_parse_duration(CMD, "--nbf", arg, 0.0, TTL_MAX_S, &a->nbf_s);
    case 'a':
        a->admin = true;
        return true;
    case 'm':
        a->has_max_bodies = true;
        return cc_parse_u32(CMD, "--max-bodies", arg, 0, UINT32_MAX, &a->max_bodies);
    default:
        fprintf(stderr, "collide-client " CMD ": see 'collide-client ticket --help'\n");
        return false;
    }
}

/* -1 to go on, else the exit status (--help, a usage error). */
static int ticket_parse(int argc, char **argv, ticket_args *a) {
    static const struct option longs[] = {
        {"key", 1, NULL, 'k'},   {"key-file", 1, NULL, 'f'},   {"room", 1, NULL, 'r'},
        {"sub", 1, NULL, 's'},   {"ttl", 1, NULL, 't'},        {"nbf", 1, NULL, 'n'},
        {"admin", 0, NULL, 'a'}, {"max-bodies", 1, NULL, 'm'}, {"help", 0, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->src = (cc_ticket_key_source){
        .value_flag = "--key", .file_flag = "--key-file", .env = CC_TICKET_KEY_ENV};
    a->ttl_s = 60.0;
    optind = 1;
    int c;
    /* No short options: "h" only, so that a value such as "-k" is never taken for a flag. */
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 'h') {
            ticket_usage(stdout);
            return CC_EXIT_OK;
        }
        if (!ticket_option(c, optarg, a)) return CC_EXIT_USAGE;
    }
    if (!cc_no_operands(CMD, argc, argv, optind)) return CC_EXIT_USAGE;
    if (!a->room) {
        fprintf(stderr, "collide-client " CMD ": --room is required (--room default for the "
                        "default room)\n");
        return CC_EXIT_USAGE;
    }
    if (a->has_nbf && ceil(a->nbf_s) >= ceil(a->ttl_s)) {
        fprintf(stderr,
                "collide-client " CMD ": --nbf (%g s) must come before the expiry (--ttl "
                "%g s): the ticket would never be valid\n",
                a->nbf_s, a->ttl_s);
        return CC_EXIT_USAGE;
    }
    return -1;
}

int cc_ticket_main(int argc, char **argv) {
    ticket_args a;
    int rc = ticket_parse(argc, argv, &a);
    if (rc >= 0) return rc;
    cc_ticket_key key;
    if (!cc_ticket_key_load(CMD, &a.src, &key)) return CC_EXIT_USAGE;
    if (!key.bytes) {
        fprintf(stderr,
                "collide-client " CMD ": no key: give --key-file PATH, set " CC_TICKET_KEY_ENV
                ", or --key SECRET\n");
        return CC_EXIT_USAGE;
    }
    int64_t now = (int64_t)time(NULL);
    cc_ticket_claims claims = {
        .room = a.room,
        .sub = a.sub,
        .iat = now,
        .exp = now + (int64_t)ceil(a.ttl_s),
        .has_nbf = a.has_nbf,
        .nbf = now + (int64_t)ceil(a.nbf_s),
        .admin = a.admin,
        .has_max_bodies = a.has_max_bodies,
        .max_bodies = a.max_bodies,
    };
    char why[128];
    char *ticket = cc_ticket_mint(&key, &claims, why, sizeof why);
    cc_ticket_key_free(&key);
    if (!ticket) {
        fprintf(stderr, "collide-client " CMD ": cannot make the ticket: %s\n", why);
        return errno == EILSEQ ? CC_EXIT_USAGE : CC_EXIT_FAIL;
    }
    size_t len = strlen(ticket);
    printf("%s\n", ticket);
    free(ticket);
    if (len > LONG_TICKET)
        fprintf(stderr,
                "collide-client " CMD ": note: this ticket is %zu bytes; a Hello carrying it may "
                "pass the daemon's --max-hello-frame (default 1024 bytes): shorten --sub\n",
                len);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "collide-client " CMD ": cannot write the ticket: %s\n", strerror(errno));
        return CC_EXIT_FAIL;
    }
    return CC_EXIT_OK;
}

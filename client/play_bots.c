/* collide-client play-bots N: N bots for the play page, each the load tool's player (load.c) with
 * --pattern play: a circle that spawns near the world's centre, where the page puts its players,
 * wanders about, dodges now and then, and leaves with its connection (a player's bodies go with
 * it), until Ctrl-C or --duration. Every load option applies: play-bots only sets other defaults
 * before the caller's options (the last of a flag given wins) and reports in one line. */
#include "play_bots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load.h"

#define CMD "play-bots"
#define PLAY_BOTS_MAX 10000u

/* load's flags as play-bots sets them; the caller's come after, so theirs win. */
static const char *const play_defaults[] = {
    "--pattern", "play", "--shape",    "circle", "--size",  "1", "--speed",         "8",
    "--ramp",    "0.5s", "--duration", "86400",  "--drain", "0", "--stall-timeout", "10s",
};
#define PLAY_DEFAULTS (sizeof play_defaults / sizeof play_defaults[0])

static void play_bots_usage(FILE *f) {
    fprintf(f,
            "usage: collide-client play-bots N [load options]\n"
            "Connects N bots for the play page (http://HOST:7778/play): each spawns a circle of\n"
            "radius 1 within 20 units of the world's centre (where the page puts its players),\n"
            "wanders within 25 units of its spawn at 8 units/s and dodges across its way now and\n"
            "then, until Ctrl-C (or --duration, default a day). Its bodies go with it.\n\n"
            "The bots are load's players with --pattern play: every 'collide-client load' option\n"
            "applies (see load --help), e.g.\n"
            "  --room NAME         the room the page plays in (the page's ?room=; default: the\n"
            "                      room default)\n"
            "  --duration D        stop after D (e.g. 30s, 5m)\n"
            "  --speed U           wandering speed, units/s (default 8; a dodge is twice that)\n"
            "  --spawn-box x0,y0,x1,y1  where they spawn (default: the world's centre +-20)\n"
            "  --token SECRET      the daemon's --token, when it has one\n"
            "  --transport ws --port 7778  through the WebSocket port\n"
            "It prints one line when it ends: the bots that played, errors and disconnects.\n"
            "Exit status: 0, 1 when no bot reached the server, 2 bad parameters.\n");
}

int cc_play_bots_main(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        play_bots_usage(stdout);
        return CC_EXIT_OK;
    }
    uint32_t n = 0;
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "collide-client " CMD ": how many bots? (play-bots N [options])\n");
        return CC_EXIT_USAGE;
    }
    if (!cc_parse_u32(CMD, "N", argv[1], 1, PLAY_BOTS_MAX, &n)) return CC_EXIT_USAGE;
    /* load's command line: the defaults, --clients N, then the caller's options. */
    char **args = malloc((PLAY_DEFAULTS + (size_t)argc + 2u) * sizeof *args);
    if (!args) return CC_EXIT_FAIL;
    int k = 0;
    args[k++] = (char *)CMD;
    for (size_t i = 0; i < PLAY_DEFAULTS; i++)
        args[k++] = (char *)play_defaults[i];
    args[k++] = (char *)"--clients";
    args[k++] = argv[1];
    for (int i = 2; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    static load_opts opts;
    int rc = cc_load_parse(k, args, &opts);
    if (rc < 0) {
        opts.brief = true;
        opts.name_prefix = "bot-";
        rc = cc_load_run(&opts);
    }
    cc_ticket_key_free(&opts.ticket);
    free(args);
    return rc;
}

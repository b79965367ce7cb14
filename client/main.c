/* collide-client: the load tester, spectator and health probe for collided, a ticket maker for
 * trying the daemon's tickets by hand, and bots for the play page. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "load.h"
#include "ping.h"
#include "play_bots.h"
#include "replay.h"
#include "ticket.h"
#include "watch.h"

static void usage(FILE *f) {
    fprintf(f, "usage: collide-client <command> [options]\n\n"
               "Commands:\n"
               "  load    drive simulated players against collided; report latency, throughput, "
               "errors\n"
               "  watch   join as a spectator and print the snapshots\n"
               "  ping    one Hello + Ping round trip; exit 0/1 (a health check)\n"
               "  ticket  print a ticket (a JWT signed with the daemon's --ticket-key) for one "
               "room\n"
               "  play-bots N  N bots that wander and dodge where the play page (GET /play) "
               "plays\n"
               "  replay FILE  run a recorded journal (collided --record-dir) through the world "
               "code,\n          checking its hashes; print the bodies at a tick\n\n"
               "Common options: --host HOST (127.0.0.1), --port N (7777), --token SECRET (the "
               "shared\ntoken or a ticket).\n"
               "'collide-client <command> --help' describes a command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return CC_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CC_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("collide-client %s (protocol 1)\n", COLLIDE_VERSION);
        return CC_EXIT_OK;
    }
    if (strcmp(cmd, "load") == 0) return cc_load_main(argc - 1, argv + 1);
    if (strcmp(cmd, "watch") == 0) return cc_watch_main(argc - 1, argv + 1);
    if (strcmp(cmd, "ping") == 0) return cc_ping_main(argc - 1, argv + 1);
    if (strcmp(cmd, "ticket") == 0) return cc_ticket_main(argc - 1, argv + 1);
    if (strcmp(cmd, "play-bots") == 0) return cc_play_bots_main(argc - 1, argv + 1);
    if (strcmp(cmd, "replay") == 0) return cc_replay_main(argc - 1, argv + 1);
    fprintf(stderr, "collide-client: unknown command '%s'\n", cmd);
    usage(stderr);
    return CC_EXIT_USAGE;
}

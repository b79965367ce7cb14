/* net_session_auth: who a Hello is (PROTOCOL.md "Session" 2 and 1.2 "Tickets: who may join which
 * room"), in the session, so that TCP, WebSocket and UDP clients are all checked by this one path
 * (each transport only hands the session whole messages).
 *
 *  - Hello.token equal to --admin-token: an admin, of every room.
 *  - equal to --token: a player of any room; refused under --ticket-required on.
 *  - with a ticket key set (--ticket-key), any other non-empty token is a ticket (net_ticket.h):
 *    verified, it admits a player (or, with its `admin` claim, an admin of that room alone) to
 *    the room it names, under its `max_bodies` and its `sub` as the client's name; refused, it
 *    ends the session with Error{UNAUTHENTICATED, fatal} naming the check that failed.
 *  - otherwise, with no --token (and tickets not required), anyone is a player.
 * The tokens are compared in constant time, both always, so the timing does not tell which
 * secret was close; the ticket keys are read by net_ticket.c alone and never written anywhere. */
#include <stdio.h>
#include <string.h>

#include "net_internal.h"
#include "net_log.h"
#include "net_rate.h"
#include "net_server.h"
#include "net_ticket.h"
#include "wire.h"

_Static_assert(NET_MAX_TICKET_KEYS == NET_TICKET_KEYS_MAX, "net_config.h and net_ticket.h agree");
_Static_assert(16384 == NET_TICKET_BYTES_LIMIT, "--ticket-max-bytes' maximum is the verifier's");

/* The Hello token as the raw bytes on the wire. protobuf-c hands strings over NUL-terminated, so
 * "secret\0" would compare equal to "secret" through strlen: the token is compared from its true
 * length instead. (For repeated occurrences the last wins, as protobuf merging does.) */
static void hello_token_raw(const uint8_t *frame, size_t len, const uint8_t **tok,
                            size_t *tok_len) {
    const uint8_t *hello = NULL;
    size_t hello_len = 0;
    *tok = (const uint8_t *)"";
    *tok_len = 0;
    const uint8_t *raw = NULL;
    uint64_t n = 0;
    if (!wire_scan(frame, len, WIRE_CLIENT_HELLO, WIRE_LEN, &hello, &n)) return;
    hello_len = (size_t)n;
    if (wire_scan(hello, hello_len, WIRE_HELLO_TOKEN, WIRE_LEN, &raw, &n)) {
        *tok = raw;
        *tok_len = (size_t)n;
    }
}

/* The rules a ticket is checked against now: the server's keys (borrowed: they stay in its
 * settings), its wall clock, --ticket-leeway-s and --ticket-max-bytes. */
static net_ticket_rules ticket_rules(const net_server *srv) {
    const net_config *cfg = &srv->cfg;
    net_ticket_rules r = {.now_s = (int64_t)(srv->wall_us / 1000000u),
                          .leeway_s = cfg->ticket_leeway_s,
                          .max_bytes = cfg->ticket_max_bytes};
    for (uint32_t k = 0; k < cfg->ticket_key_count && k < NET_TICKET_KEYS_MAX; k++) {
        r.keys[k] = (const unsigned char *)cfg->ticket_keys[k];
        r.key_lens[k] = cfg->ticket_key_lens[k];
        r.key_count = k + 1;
    }
    return r;
}

/* Here, beside the ticket's sub that may rename a client, so that the session (which names it
 * first, from Hello.name) calls down into this file and nothing here calls back up. */
void net_session_set_name(net_client *c, const char *name) {
    size_t n = 0;
    for (const char *p = name ? name : ""; *p && n < sizeof c->name - 1; p++) {
        unsigned char ch = (unsigned char)*p;
        c->name[n++] = (ch >= 0x21 && ch < 0x7f && ch != '"' && ch != '\\') ? (char)ch : '_';
    }
    c->name[n] = '\0';
}

/* A ticket: verified for the Hello's room, its claims become the grant (and the name); refused,
 * the session ends with the check that failed. */
static bool ticket_grant(net_server *srv, net_client *c, uint32_t rid, const uint8_t *tok,
                         size_t len, const char *room, size_t room_len, net_grant *g) {
    net_ticket_rules rules = ticket_rules(srv);
    net_ticket_claims claims;
    char why[NET_TICKET_WHY];
    net_ticket_status st =
        net_ticket_verify(&rules, tok, len, room, room_len, &claims, why, sizeof why);
    if (st != NET_TICKET_OK) {
        net_log(NET_LOG_INFO, "ticket_refused", c->id, c->addr, "%s", why);
        /* Out of memory is the server's trouble, not the ticket's: INTERNAL, as elsewhere. */
        Collide__V1__ErrorCode code =
            st == NET_TICKET_NO_MEMORY ? NET_ERR(INTERNAL) : NET_ERR(UNAUTHENTICATED);
        net_server_send_error(srv, c, rid, code, true, "ticket refused: %s", why);
        return false;
    }
    g->admin = claims.admin;
    g->room_only = true;
    g->ticket_key = (uint8_t)(claims.key_index + 1);
    g->limited = claims.has_max_bodies;
    g->max_bodies = claims.max_bodies;
    /* The backend vouches for sub; Hello.name is the client's own say. */
    if (claims.has_sub) net_session_set_name(c, claims.sub);
    return true;
}

bool net_session_authenticate(net_server *srv, net_client *c, uint32_t rid, const uint8_t *frame,
                              size_t frame_len, const char *room, size_t room_len, net_grant *g) {
    const net_config *cfg = &srv->cfg;
    memset(g, 0, sizeof *g);
    const uint8_t *raw = NULL;
    size_t len = 0;
    hello_token_raw(frame, frame_len, &raw, &len);
    const char *token = (const char *)raw;
    /* Both compares always run, so timing does not tell which secret was close. */
    bool is_admin = cfg->admin_token_len > 0 &&
                    net_secret_equal(token, len, cfg->admin_token, cfg->admin_token_len);
    bool is_token = cfg->token_len > 0 && net_secret_equal(token, len, cfg->token, cfg->token_len);
    if (is_admin) {
        g->admin = true;
        return true;
    }
    if (is_token && !cfg->ticket_required) return true;
    if (!is_token && cfg->ticket_key_count > 0 && len > 0)
        return ticket_grant(srv, c, rid, raw, len, room, room_len, g);
    if (cfg->token_len == 0 && !cfg->ticket_required) return true; /* an open server */
    /* Under --ticket-required the shared token admits no player: saying so (rather than "bad
     * token") tells a developer what to fix, and gives away nothing the token still guards. */
    if (cfg->ticket_required)
        net_server_send_error(srv, c, rid, NET_ERR(UNAUTHENTICATED), true,
                              "a ticket is required (--ticket-required on)");
    else
        net_server_send_error(srv, c, rid, NET_ERR(UNAUTHENTICATED), true, "bad token");
    return false;
}

/* net_ticket: the tickets of PROTOCOL.md "Tickets: who may join which room" (protocol 1.2). A
 * ticket is a JWT (RFC 7519, compact form) that a game's backend signs with HS256 under the key it
 * shares with the daemon (--ticket-key), for one player and one room, until it expires.
 *
 * One pure function: the token's bytes, the keys, the wall clock and the leeway in; the claims
 * out, or the check that failed. No socket, no clock of its own, no log line: the session
 * (net_session.c) calls it for every transport alike, and the unit test (test_net_ticket.c), the
 * fuzz target and bench_ticket call it directly.
 *
 * The rules, in the order they are checked (the first that fails is the answer):
 *  1. size: longer than max_bytes: refused before anything is parsed;
 *  2. format: three non-empty base64url parts (no padding, no other byte) joined by two dots;
 *     header and payload JSON objects; `typ`, when present, "JWT"; no `crit` header;
 *  3. algorithm: the header's `alg` exactly "HS256" (not `none`, HS384, HS512, RS256, "hs256");
 *  4. signature: HMAC-SHA256 under one of the keys (two during a rotation: either verifies);
 *  5. format: the claims' types: `exp` (required) an integer, `nbf` and `iat` integers, `room`
 *     (required) a string, `sub` a string, `admin` a boolean, `max_bodies` a non-negative integer;
 *  6. expired: now >= exp + leeway;
 *  7. not yet valid: now < nbf - leeway;
 *  8. issued in the future: iat > now + leeway;
 *  9. room: the claim is not the Hello's room ("" is `default` on either side).
 * The same ticket verifies again until it expires (a reconnect); nothing is remembered here.
 *
 * The keys are secrets: they are read here, copied nowhere but into an HMAC state wiped after
 * use, and no message this file writes holds a byte of them (the reasons name the check and the
 * token's own claims only). */
#ifndef COLLIDE_NET_TICKET_H
#define COLLIDE_NET_TICKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_TICKET_KEYS_MAX 2         /* the current key and the one it replaces (rotation) */
#define NET_TICKET_BYTES_LIMIT 16384u /* the largest --ticket-max-bytes may be */
#define NET_TICKET_SUB_MAX 63         /* bytes of `sub` kept (the client's name keeps fewer) */
#define NET_TICKET_WHY 160            /* room for a refusal's reason */

/* What a ticket is checked against. The keys are borrowed, raw bytes (the flag's text as given,
 * not decoded); a key of length 0 never verifies anything. */
typedef struct net_ticket_rules {
    const unsigned char *keys[NET_TICKET_KEYS_MAX]; /* HS256 keys; the first is the current one */
    size_t key_lens[NET_TICKET_KEYS_MAX];           /* their lengths in bytes */
    size_t key_count;                               /* keys in use: 0 = no ticket verifies */
    int64_t now_s;                                  /* the wall clock, seconds since the epoch */
    uint32_t leeway_s;  /* clock skew allowed on exp, nbf and iat (--ticket-leeway-s) */
    uint32_t max_bytes; /* longer tokens are refused unread (--ticket-max-bytes) */
} net_ticket_rules;

/* Why a ticket was refused: each value is one check of PROTOCOL.md, named by
 * net_ticket_status_str. */
typedef enum net_ticket_status {
    NET_TICKET_OK = 0,
    NET_TICKET_SIZE,      /* longer than max_bytes */
    NET_TICKET_FORMAT,    /* not a compact JWS of JSON objects, or a claim missing or mistyped */
    NET_TICKET_ALGORITHM, /* alg is not HS256 */
    NET_TICKET_SIGNATURE, /* no key verifies it */
    NET_TICKET_EXPIRED,   /* exp (+ leeway) has passed */
    NET_TICKET_NOT_YET,   /* nbf (- leeway) is still to come */
    NET_TICKET_FUTURE,    /* iat is later than now (+ leeway) */
    NET_TICKET_ROOM,      /* for another room than the Hello's */
    NET_TICKET_NO_MEMORY, /* the parser ran out of memory: not the ticket's fault */
} net_ticket_status;

/* What a verified ticket says (PROTOCOL.md: the claims). */
typedef struct net_ticket_claims {
    int64_t exp;                      /* seconds since the epoch */
    bool admin;                       /* `admin`: rights in its room only */
    bool has_max_bodies;              /* `max_bodies` was given... */
    uint32_t max_bodies;              /* ... this many (a larger claim is clamped here) */
    bool has_sub;                     /* `sub` was given, non-empty */
    char sub[NET_TICKET_SUB_MAX + 1]; /* `sub`, cut at NET_TICKET_SUB_MAX bytes, NUL-terminated */
    uint32_t key_index;               /* which key verified it (0 = the first): rotation's logs */
} net_ticket_claims;

/* Verifies token (len bytes, not NUL-terminated) for the Hello's room (room_len bytes; ""
 * means `default`). NET_TICKET_OK fills *out. Otherwise *out is zeroed and why (when why_size >
 * 0) holds "<check>: <detail>", the check being net_ticket_status_str's word; the detail quotes
 * only the token's own claims, never a key. Memory is allocated (by libjwt) in proportion to len,
 * which is at most rules->max_bytes, and all of it freed before the return. */
net_ticket_status net_ticket_verify(const net_ticket_rules *rules, const uint8_t *token, size_t len,
                                    const char *room, size_t room_len, net_ticket_claims *out,
                                    char *why, size_t why_size);

/* The check's name: "size", "format", "algorithm", "signature", "expired", "not yet valid",
 * "issued in the future", "room", "out of memory" ("ok" for NET_TICKET_OK). */
const char *net_ticket_status_str(net_ticket_status st);

#endif

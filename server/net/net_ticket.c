/* net_ticket: the tickets' verifier (net_ticket.h), on Debian's libjwt 1.10.
 *
 * What libjwt does here: the split, base64url and JSON of header and payload, the `typ` check,
 * and the signature (jwt_decode with a key: HMAC under the header's algorithm, compared in
 * constant time since Debian's 1.10.2-1+deb12u1, CVE-2024-25189). What it cannot say, and this
 * file adds:
 *  - which algorithm is allowed: jwt_decode verifies whatever `alg` names (HS512 under our key
 *    passes, `alg` is matched without case), so the algorithm it used (jwt_get_alg) and the
 *    header's own text are both checked for HS256;
 *  - the claims' types: libjwt 1.10's jwt_get_grant_int reads a string or a real as 0 and
 *    jwt_get_grant_bool reads "yes" as false, so each claim is read from its own JSON
 *    (jwt_get_grants_json), which keeps the type jansson parsed;
 *  - what is not a token at all: jwt_decode strdup()s a NUL-terminated string and alloca()s its
 *    length, and its base64 decoder skips bytes outside the alphabet, so the bytes are checked
 *    (bounded, the alphabet, two dots) before it sees them;
 *  - why a token failed: jwt_decode says EINVAL for a bad signature, a bad format and a refused
 *    algorithm alike, so a refused token is decoded once more without a key to tell which.
 * Every jwt_t is freed with jwt_free (which also wipes its copy of the key), every string
 * jwt_get_grants_json returns with free. */
#include "net_ticket.h"

#include <errno.h>
#include <jwt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_rooms.h"

const char *net_ticket_status_str(net_ticket_status st) {
    switch (st) {
    case NET_TICKET_OK:
        return "ok";
    case NET_TICKET_SIZE:
        return "size";
    case NET_TICKET_FORMAT:
        return "format";
    case NET_TICKET_ALGORITHM:
        return "algorithm";
    case NET_TICKET_SIGNATURE:
        return "signature";
    case NET_TICKET_EXPIRED:
        return "expired";
    case NET_TICKET_NOT_YET:
        return "not yet valid";
    case NET_TICKET_FUTURE:
        return "issued in the future";
    case NET_TICKET_ROOM:
        return "room";
    case NET_TICKET_NO_MEMORY:
        return "out of memory";
    }
    return "format";
}

/* The verdict, with "<check>: <detail>" in why. */
static net_ticket_status refuse(net_ticket_status st, char *why, size_t why_size, const char *fmt,
                                ...) {
    if (why_size == 0) return st;
    int n = snprintf(why, why_size, "%s: ", net_ticket_status_str(st));
    if (n < 0 || (size_t)n >= why_size) return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, why_size - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

static bool base64url_byte(uint8_t b) {
    return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-' ||
           b == '_';
}

/* The compact form's shape, from the bytes alone: three non-empty parts of the base64url
 * alphabet (RFC 7515: no padding), none of a length base64 cannot have (4k + 1). */
static bool compact_shape(const uint8_t *t, size_t len) {
    size_t dots = 0, part = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            if (part == 0 || part % 4 == 1 || ++dots > 2) return false;
            part = 0;
        } else if (base64url_byte(t[i])) {
            part++;
        } else {
            return false;
        }
    }
    return dots == 2 && part > 0 && part % 4 != 1;
}

/* The refusal of a token no key verified: decoded again without a key (parsed, not verified),
 * to say whether it is not a token, names another algorithm, or is signed under another key. */
static net_ticket_status diagnose(const char *text, char *why, size_t why_size) {
    jwt_t *j = NULL;
    int rc = jwt_decode(&j, text, NULL, 0);
    if (rc == ENOMEM) return refuse(NET_TICKET_NO_MEMORY, why, why_size, "parsing the ticket");
    if (rc != 0 || !j)
        return refuse(
            NET_TICKET_FORMAT, why, why_size,
            "header or payload is not base64url JSON (or typ is not JWT, or alg unknown)");
    /* Without a key libjwt forgets the algorithm (jwt_get_alg says none): the header says it.
     * jwt_str_alg accepted it, so it is one of libjwt's short ASCII names. */
    const char *alg = jwt_get_header(j, "alg");
    net_ticket_status st =
        alg && strcmp(alg, "HS256") == 0
            ? refuse(NET_TICKET_SIGNATURE, why, why_size, "no ticket key verifies it")
            : refuse(NET_TICKET_ALGORITHM, why, why_size, "alg %.8s, only HS256 is accepted",
                     alg ? alg : "?");
    jwt_free(j);
    return st;
}

/* A claim read from its own JSON text. */
typedef enum claim_read {
    CLAIM_ABSENT = 0,
    CLAIM_OK = 1,
    CLAIM_MISTYPED = 2,
    CLAIM_NO_MEMORY = 3,
} claim_read;

/* An integer claim (not a real, a string or a boolean): jansson writes an integer as an optional
 * minus and digits, and a real always with a '.' or an exponent. */
static claim_read claim_integer(jwt_t *j, const char *name, long long *v) {
    errno = 0;
    char *text = jwt_get_grants_json(j, name);
    if (!text) return errno == EINVAL ? CLAIM_ABSENT : CLAIM_NO_MEMORY;
    const char *p = text + (text[0] == '-');
    bool digits = *p != '\0';
    for (; *p; p++)
        digits &= *p >= '0' && *p <= '9';
    char *end = NULL;
    errno = 0;
    *v = digits ? strtoll(text, &end, 10) : 0;
    bool ok = digits && errno == 0 && end && *end == '\0';
    free(text);
    return ok ? CLAIM_OK : CLAIM_MISTYPED;
}

static claim_read claim_bool(jwt_t *j, const char *name, bool *v) {
    errno = 0;
    char *text = jwt_get_grants_json(j, name);
    if (!text) return errno == EINVAL ? CLAIM_ABSENT : CLAIM_NO_MEMORY;
    bool t = strcmp(text, "true") == 0, f = strcmp(text, "false") == 0;
    free(text);
    *v = t;
    return t || f ? CLAIM_OK : CLAIM_MISTYPED;
}

/* A string claim: jwt_get_grant gives a claim's text only when it is a JSON string; a claim of
 * another type reads NULL with errno 0, a missing one NULL with ENOENT. */
static claim_read claim_string(jwt_t *j, const char *name, const char **v) {
    errno = 0;
    *v = jwt_get_grant(j, name);
    if (*v) return CLAIM_OK;
    return errno == ENOENT ? CLAIM_ABSENT : CLAIM_MISTYPED;
}

/* The claims of the protocol, as read from a verified token. */
enum { C_EXP, C_NBF, C_IAT, C_ROOM, C_SUB, C_ADMIN, C_MAX_BODIES, C_COUNT };
static const struct {
    const char *name, *type; /* the claim, and what it must be (for the refusal) */
} claim_spec[C_COUNT] = {
    {"exp", "an integer"},
    {"nbf", "an integer"},
    {"iat", "an integer"},
    {"room", "a string"},
    {"sub", "a string"},
    {"admin", "a boolean"},
    {"max_bodies", "a non-negative integer"},
};
typedef struct raw_claims {
    claim_read read[C_COUNT];            /* how each read */
    long long exp, nbf, iat, max_bodies; /* the integers */
    const char *room, *sub;              /* the strings, borrowed from the jwt_t */
    bool admin;                          /* the boolean */
} raw_claims;

/* Step 5 of net_ticket.h: every claim of the protocol that is present has its type; exp and
 * room are present. */
static net_ticket_status read_claims(jwt_t *j, raw_claims *c, char *why, size_t why_size) {
    c->read[C_EXP] = claim_integer(j, "exp", &c->exp);
    c->read[C_NBF] = claim_integer(j, "nbf", &c->nbf);
    c->read[C_IAT] = claim_integer(j, "iat", &c->iat);
    c->read[C_ROOM] = claim_string(j, "room", &c->room);
    c->read[C_SUB] = claim_string(j, "sub", &c->sub);
    c->read[C_ADMIN] = claim_bool(j, "admin", &c->admin);
    c->read[C_MAX_BODIES] = claim_integer(j, "max_bodies", &c->max_bodies);
    if (c->read[C_MAX_BODIES] == CLAIM_OK && c->max_bodies < 0)
        c->read[C_MAX_BODIES] = CLAIM_MISTYPED;
    for (int i = 0; i < C_COUNT; i++) {
        if (c->read[i] == CLAIM_NO_MEMORY)
            return refuse(NET_TICKET_NO_MEMORY, why, why_size, "reading claim %s",
                          claim_spec[i].name);
        if (c->read[i] == CLAIM_MISTYPED)
            return refuse(NET_TICKET_FORMAT, why, why_size, "claim %s must be %s",
                          claim_spec[i].name, claim_spec[i].type);
    }
    if (c->read[C_EXP] == CLAIM_ABSENT)
        return refuse(NET_TICKET_FORMAT, why, why_size, "claim exp missing");
    if (c->read[C_ROOM] == CLAIM_ABSENT)
        return refuse(NET_TICKET_FORMAT, why, why_size, "claim room missing");
    return NET_TICKET_OK;
}

/* Steps 6 to 9 of net_ticket.h: the clock and the room. */
static net_ticket_status check_claims(const raw_claims *c, const net_ticket_rules *rules,
                                      const char *room, size_t room_len, char *why,
                                      size_t why_size) {
    /* Written so that no claim, however large or small, overflows: now and the leeway are both
     * small and positive. */
    long long now = (long long)rules->now_s, leeway = (long long)rules->leeway_s;
    if (now - leeway >= c->exp)
        return refuse(NET_TICKET_EXPIRED, why, why_size, "exp %lld, now %lld, leeway %lld s",
                      c->exp, now, leeway);
    if (c->read[C_NBF] == CLAIM_OK && c->nbf > now + leeway)
        return refuse(NET_TICKET_NOT_YET, why, why_size, "nbf %lld, now %lld, leeway %lld s",
                      c->nbf, now, leeway);
    if (c->read[C_IAT] == CLAIM_OK && c->iat > now + leeway)
        return refuse(NET_TICKET_FUTURE, why, why_size, "iat %lld, now %lld, leeway %lld s", c->iat,
                      now, leeway);
    size_t want_len = strlen(c->room);
    const char *want = net_room_name_of(c->room, &want_len);
    if (want_len != room_len || memcmp(want, room, room_len) != 0) {
        /* The ticket's room is quoted only when it is a room name: a claim is the token's own
         * text, but not necessarily printable. */
        if (net_room_name_valid(want, want_len))
            return refuse(NET_TICKET_ROOM, why, why_size, "the ticket is for room %s, not %.*s",
                          want, (int)room_len, room);
        return refuse(NET_TICKET_ROOM, why, why_size, "the ticket is not for room %.*s",
                      (int)room_len, room);
    }
    return NET_TICKET_OK;
}

/* Steps 5 to 9 on a token whose signature verified; *out filled when it passes. */
static net_ticket_status accept_claims(jwt_t *j, const net_ticket_rules *rules, const char *room,
                                       size_t room_len, net_ticket_claims *out, char *why,
                                       size_t why_size) {
    raw_claims c;
    memset(&c, 0, sizeof c);
    net_ticket_status st = read_claims(j, &c, why, why_size);
    if (st == NET_TICKET_OK) st = check_claims(&c, rules, room, room_len, why, why_size);
    if (st != NET_TICKET_OK) return st;
    out->exp = c.exp;
    out->admin = c.read[C_ADMIN] == CLAIM_OK && c.admin;
    out->has_max_bodies = c.read[C_MAX_BODIES] == CLAIM_OK;
    out->max_bodies = c.max_bodies > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)c.max_bodies;
    if (c.sub && c.sub[0]) {
        out->has_sub = true;
        snprintf(out->sub, sizeof out->sub, "%s", c.sub);
    }
    return NET_TICKET_OK;
}

net_ticket_status net_ticket_verify(const net_ticket_rules *rules, const uint8_t *token, size_t len,
                                    const char *room, size_t room_len, net_ticket_claims *out,
                                    char *why, size_t why_size) {
    memset(out, 0, sizeof *out);
    if (why_size) why[0] = '\0';
    uint32_t max =
        rules->max_bytes < NET_TICKET_BYTES_LIMIT ? rules->max_bytes : NET_TICKET_BYTES_LIMIT;
    if (len > max)
        return refuse(NET_TICKET_SIZE, why, why_size, "%zu bytes, over --ticket-max-bytes %u", len,
                      max);
    if (!compact_shape(token, len))
        return refuse(NET_TICKET_FORMAT, why, why_size, "not three base64url parts joined by dots");
    char text[NET_TICKET_BYTES_LIMIT + 1];
    memcpy(text, token, len);
    text[len] = '\0';
    jwt_t *j = NULL;
    for (size_t k = 0; k < rules->key_count && k < NET_TICKET_KEYS_MAX && !j; k++) {
        /* Never a key of length 0: jwt_decode takes that as no key, and checks no signature. */
        if (rules->key_lens[k] == 0 || rules->key_lens[k] > (size_t)INT32_MAX) continue;
        if (jwt_decode(&j, text, rules->keys[k], (int)rules->key_lens[k]) != 0) j = NULL;
        out->key_index = (uint32_t)k;
    }
    if (!j) {
        net_ticket_status st = diagnose(text, why, why_size);
        memset(out, 0, sizeof *out);
        return st;
    }
    /* Verified, but under the algorithm the token chose: HS256 alone is accepted. */
    const char *alg = jwt_get_header(j, "alg");
    net_ticket_status st = NET_TICKET_OK;
    if (jwt_get_alg(j) != JWT_ALG_HS256 || !alg || strcmp(alg, "HS256") != 0) {
        st = refuse(NET_TICKET_ALGORITHM, why, why_size, "alg %.8s, only HS256 is accepted",
                    alg ? alg : "?");
    } else {
        /* RFC 7515 4.1.11: a `crit` extension is one this verifier does not understand. */
        char *crit = jwt_get_headers_json(j, "crit");
        if (crit) {
            free(crit);
            st = refuse(NET_TICKET_FORMAT, why, why_size, "crit header not supported");
        } else {
            st = accept_claims(j, rules, room, room_len, out, why, why_size);
        }
    }
    jwt_free(j);
    if (st != NET_TICKET_OK) memset(out, 0, sizeof *out);
    return st;
}

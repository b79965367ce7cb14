/* net_ticket: the tickets' verifier (net_ticket.h), on Debian's libjwt 1.10 and nettle.
 *
 * libjwt parses: jwt_decode without a key splits the token, decodes the base64url of header and
 * payload, parses both JSON objects, refuses an unknown `alg` or a `typ` other than JWT, and then
 * answers for the header and the claims. Around it, this file checks what libjwt 1.10 does not:
 *  - the bytes before jwt_decode sees them (bounded, the alphabet, two dots): it strdup()s a
 *    NUL-terminated string, alloca()s its length, and its base64 decoder skips bytes outside the
 *    alphabet;
 *  - the algorithm, from the header's own text: "HS256" exactly (libjwt matches names without
 *    case, and with a key it verifies whatever `alg` names: HS512 under our key passes);
 *  - the claims' types: jwt_get_grant_int reads a string or a real as 0 and jwt_get_grant_bool
 *    reads "yes" as false, so a claim they cannot vouch for is read from its own JSON text
 *    (jwt_get_grants_json), which keeps the type jansson parsed;
 *  - the signature, here and not by jwt_decode with a key, for three reasons measured or read
 *    in its source: (1) its HMAC goes through OpenSSL 3's one-shot HMAC(), which fetches the digest
 *    on every call, and a BIO base64 chain: a keyed jwt_decode took 4.4 us of PERFORMANCE.md's
 *    5 us per Hello on this machine alone and 8 us with its 2 cores shared, against 0.3 us for
 *    nettle's HMAC-SHA256 (bench_ticket); (2) it verifies one key per decode, so a ticket under
 *    the second key of a rotation, or a forged one, would cost a whole parse per key (and one
 *    more to tell which check failed); (3) upstream 1.10.2 compares the signature with strcmp
 *    (CVE-2024-25189), constant-time only in Debian's patched build: here the compare is
 *    nettle's memeql_sec whatever libjwt is linked. nettle is already linked (the WebSocket
 *    handshake's SHA-1), and its HMAC state, which is as good as the key, is wiped after use.
 * Every jwt_t is freed with jwt_free, every string jwt_get_grants_json returns with free. */
#include "net_ticket.h"

#include <errno.h>
#include <math.h>
#include <jwt.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
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

/* base64url (RFC 7515: no padding) of the n bytes at in, NUL-terminated; out holds
 * 4 * ceil(n / 3) + 1 bytes. */
static void base64url(const uint8_t *in, size_t n, char *out) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = abc[(v >> 18) & 63];
        out[o++] = abc[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = abc[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = abc[v & 63];
    }
    out[o] = '\0';
}

#define SIG_CHARS 43 /* base64url of an HMAC-SHA256: 32 bytes, unpadded */

/* Step 4 of net_ticket.h: the third part of text (len bytes) is the base64url HMAC-SHA256 of the
 * first two under one of the keys. Each key is tried, in constant time for its signature: the
 * keys' own number and lengths are all the timing tells. *key_index says which verified. */
static bool signature_verifies(const net_ticket_rules *rules, const char *text, size_t len,
                               uint32_t *key_index) {
    const char *last_dot = memchr(text, '.', len);
    last_dot = last_dot ? memchr(last_dot + 1, '.', len - (size_t)(last_dot + 1 - text)) : NULL;
    if (!last_dot) return false;
    size_t signing_len = (size_t)(last_dot - text), sig_len = len - signing_len - 1;
    bool found = false;
    for (size_t k = 0; k < rules->key_count && k < NET_TICKET_KEYS_MAX; k++) {
        /* A key of length 0 is no key: it would sign anything anyone can sign. */
        if (rules->key_lens[k] == 0) continue;
        struct hmac_sha256_ctx ctx;
        uint8_t mac[SHA256_DIGEST_SIZE];
        char want[SIG_CHARS + 2];
        hmac_sha256_set_key(&ctx, rules->key_lens[k], rules->keys[k]);
        hmac_sha256_update(&ctx, signing_len, (const uint8_t *)text);
        hmac_sha256_digest(&ctx, sizeof mac, mac);
        base64url(mac, sizeof mac, want);
        bool match = sig_len == SIG_CHARS && memeql_sec(want, last_dot + 1, SIG_CHARS);
        explicit_bzero(&ctx, sizeof ctx);
        explicit_bzero(mac, sizeof mac);
        explicit_bzero(want, sizeof want);
        if (match && !found) *key_index = (uint32_t)k;
        found |= match;
    }
    return found;
}

/* A claim read from its own JSON text. */
typedef enum claim_read {
    CLAIM_ABSENT = 0,
    CLAIM_OK = 1,
    CLAIM_MISTYPED = 2,
    CLAIM_NO_MEMORY = 3,
} claim_read;

/* An integer claim (not a real, a string or a boolean). libjwt's reading (json_integer_value)
 * is the integer itself when the claim is one and 0 for any other JSON value, so a value other
 * than 0 is an integer as read; a 0 is looked at in its JSON text, where jansson writes an
 * integer as an optional minus and digits and a real always with a '.' or an exponent. */
static claim_read claim_integer(jwt_t *j, const char *name, long long *v) {
    errno = 0;
    long quick = jwt_get_grant_int(j, name);
    if (errno == ENOENT) return CLAIM_ABSENT;
    if (quick != 0) {
        *v = quick;
        return CLAIM_OK;
    }
    errno = 0;
    char *text = jwt_get_grants_json(j, name);
    if (!text) return errno == EINVAL ? CLAIM_ABSENT : CLAIM_NO_MEMORY;
    bool zero = strcmp(text, "0") == 0 || strcmp(text, "-0") == 0;
    free(text);
    *v = 0;
    return zero ? CLAIM_OK : CLAIM_MISTYPED;
}

/* A time claim (exp, nbf, iat): RFC 7519's NumericDate, seconds since the epoch, "non-integer
 * values can be represented", and backends send them (PyJWT passes a float from time.time()
 * through as it is). An integer reads as claim_integer does; a real is taken from its JSON text
 * and rounded the strict way: exp down, nbf and iat up, so a fraction never buys a ticket time.
 * Beyond +-2^62 it is clamped, which no clock reaches. */
static claim_read claim_time(jwt_t *j, const char *name, bool round_up, long long *v) {
    claim_read r = claim_integer(j, name, v);
    if (r != CLAIM_MISTYPED) return r;
    errno = 0;
    char *text = jwt_get_grants_json(j, name);
    if (!text) return errno == EINVAL ? CLAIM_ABSENT : CLAIM_NO_MEMORY;
    char *end = NULL;
    /* jansson writes a number as digits, '.', 'e' and signs only: anything else (a string's
     * quote, true, null, a bracket) stops strtod before the end */
    double d = (text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) ? strtod(text, &end) : 0.0;
    bool number = end && *end == '\0' && isfinite(d);
    free(text);
    if (!number) return CLAIM_MISTYPED;
    d = round_up ? ceil(d) : floor(d);
    const double limit = 4611686018427387904.0; /* 2^62 */
    *v = d > limit ? (long long)limit : d < -limit ? -(long long)limit : (long long)d;
    return CLAIM_OK;
}

/* A boolean claim: libjwt reads true as 1 and every other value as 0, so anything but a 1 is
 * looked at in its JSON text. */
static claim_read claim_bool(jwt_t *j, const char *name, bool *v) {
    errno = 0;
    int quick = jwt_get_grant_bool(j, name);
    if (errno == ENOENT) return CLAIM_ABSENT;
    *v = quick == 1;
    if (*v) return CLAIM_OK;
    errno = 0;
    char *text = jwt_get_grants_json(j, name);
    if (!text) return errno == EINVAL ? CLAIM_ABSENT : CLAIM_NO_MEMORY;
    bool f = strcmp(text, "false") == 0;
    free(text);
    return f ? CLAIM_OK : CLAIM_MISTYPED;
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
    {"exp", "a number (NumericDate)"},
    {"nbf", "a number (NumericDate)"},
    {"iat", "a number (NumericDate)"},
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
    c->read[C_EXP] = claim_time(j, "exp", false, &c->exp);
    c->read[C_NBF] = claim_time(j, "nbf", true, &c->nbf);
    c->read[C_IAT] = claim_time(j, "iat", true, &c->iat);
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

/* Step 2's last rule and step 3 of net_ticket.h, from the parsed header: alg exactly HS256
 * (jwt_str_alg accepted it, so it is one of libjwt's short ASCII names, safe to quote), and no
 * `crit`. */
static net_ticket_status check_header(jwt_t *j, char *why, size_t why_size) {
    const char *alg = jwt_get_header(j, "alg");
    if (!alg || strcmp(alg, "HS256") != 0)
        return refuse(NET_TICKET_ALGORITHM, why, why_size, "alg %.8s, only HS256 is accepted",
                      alg ? alg : "?");
    /* RFC 7515 4.1.11: a `crit` extension is one this verifier does not understand. */
    char *crit = jwt_get_headers_json(j, "crit");
    if (crit) {
        free(crit);
        return refuse(NET_TICKET_FORMAT, why, why_size, "crit header not supported");
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
    /* Parsed, not verified: without a key jwt_decode checks no signature (and forgets the
     * algorithm: jwt_get_alg says none); the header's alg and the signature are checked below. */
    jwt_t *j = NULL;
    int rc = jwt_decode(&j, text, NULL, 0);
    if (rc == ENOMEM) return refuse(NET_TICKET_NO_MEMORY, why, why_size, "parsing the ticket");
    if (rc != 0 || !j)
        return refuse(
            NET_TICKET_FORMAT, why, why_size,
            "header or payload is not base64url JSON (or typ is not JWT, or alg unknown)");
    net_ticket_status st = check_header(j, why, why_size);
    uint32_t key_index = 0;
    if (st == NET_TICKET_OK && !signature_verifies(rules, text, len, &key_index))
        st = refuse(NET_TICKET_SIGNATURE, why, why_size, "no ticket key verifies it");
    if (st == NET_TICKET_OK) st = accept_claims(j, rules, room, room_len, out, why, why_size);
    jwt_free(j);
    if (st != NET_TICKET_OK)
        memset(out, 0, sizeof *out);
    else
        out->key_index = key_index;
    return st;
}

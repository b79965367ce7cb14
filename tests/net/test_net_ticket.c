/* Unit tests of the tickets' verifier (net_ticket.h, PROTOCOL.md "Tickets: who may join which
 * room"): each rule alone, the algorithms refused, the size bound before any parsing, two keys,
 * malformed tokens; every refusal names its check and never holds a byte of a key. Tokens are
 * minted by hand (ticket_mint.h) and, once, by libjwt itself. */
#include <jwt.h>
#include <stdio.h>

#include "harness.h"
#include "net_ticket.h"
#include "ticket_mint.h"

#define NOW 1800000000LL
#define KEY "k3y-0f-the-game-backend-32-bytes!"
#define OLD_KEY "the-previous-key-still-in-use-xyz"
#define OTHER_KEY "somebody-else's-key-not-ours-000"

static net_ticket_rules rules_with(const char *k0, const char *k1) {
    net_ticket_rules r = {.now_s = NOW, .leeway_s = 5, .max_bytes = 1024};
    if (k0) {
        r.keys[r.key_count] = (const unsigned char *)k0;
        r.key_lens[r.key_count++] = strlen(k0);
    }
    if (k1) {
        r.keys[r.key_count] = (const unsigned char *)k1;
        r.key_lens[r.key_count++] = strlen(k1);
    }
    return r;
}

typedef struct verdict {
    net_ticket_status st;
    net_ticket_claims claims;
    char why[NET_TICKET_WHY];
} verdict;

static verdict verify_for(const net_ticket_rules *r, const char *token, const char *room) {
    verdict v;
    memset(&v, 0xa5, sizeof v); /* what the verifier leaves unwritten shows */
    v.st = net_ticket_verify(r, (const uint8_t *)token, strlen(token), room, strlen(room),
                             &v.claims, v.why, sizeof v.why);
    return v;
}

/* A ticket for `payload`, HS256 under key. */
static const char *mint(const char *payload, const char *key) {
    static char out[4096];
    if (!tm_mint(TM_HS256_HEADER, payload, key, strlen(key), TM_HS256, out, sizeof out)) abort();
    return out;
}

/* A payload: room and exp, then the rest as given (a JSON fragment, or ""). */
static const char *claims(const char *room, long long exp, const char *rest) {
    static char out[2048];
    snprintf(out, sizeof out, "{\"room\":\"%s\",\"exp\":%lld%s%s}", room, exp, rest[0] ? "," : "",
             rest);
    return out;
}

/* The refusal names its check first ("<check>: ..."), and no key is in it. */
static bool names_check(const verdict *v, net_ticket_status st) {
    const char *word = net_ticket_status_str(st);
    if (v->st != st || strncmp(v->why, word, strlen(word)) != 0) return false;
    return !strstr(v->why, KEY) && !strstr(v->why, OLD_KEY) && !strstr(v->why, OTHER_KEY) &&
           !strstr(v->why, "k3y");
}

#define EXPECT_REFUSED(v, status)                                                                  \
    CHECK_MSG(names_check(&(v), status), "want %s, got %s: \"%s\"", net_ticket_status_str(status), \
              net_ticket_status_str((v).st), (v).why)

#define EXPECT_OK(v) CHECK_MSG((v).st == NET_TICKET_OK, "refused: \"%s\"", (v).why)

static void test_valid_ticket_and_its_claims(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    verdict v = verify_for(&r, mint(claims("arena", NOW + 60, ""), KEY), "arena");
    EXPECT_OK(v);
    CHECK(v.why[0] == '\0');
    CHECK(v.claims.exp == NOW + 60 && !v.claims.admin && !v.claims.has_sub &&
          !v.claims.has_max_bodies && v.claims.key_index == 0);
    v = verify_for(&r,
                   mint(claims("arena", NOW + 60,
                               "\"sub\":\"player-7\",\"admin\":true,\"max_bodies\":3,"
                               "\"iat\":1799999990,\"nbf\":1799999990,\"extra\":[1,{}]"),
                        KEY),
                   "arena");
    EXPECT_OK(v);
    CHECK(v.claims.admin && v.claims.has_sub && strcmp(v.claims.sub, "player-7") == 0);
    CHECK(v.claims.has_max_bodies && v.claims.max_bodies == 3);
    /* admin false and max_bodies 0 are values, not absences. */
    v = verify_for(&r, mint(claims("arena", NOW + 60, "\"admin\":false,\"max_bodies\":0"), KEY),
                   "arena");
    EXPECT_OK(v);
    CHECK(!v.claims.admin && v.claims.has_max_bodies && v.claims.max_bodies == 0);
    /* A claim past 32 bits is clamped: it can only lower the server's limit anyway. */
    v = verify_for(&r, mint(claims("arena", NOW + 60, "\"max_bodies\":99999999999"), KEY), "arena");
    EXPECT_OK(v);
    CHECK(v.claims.max_bodies == UINT32_MAX);
    /* The same ticket again (a reconnect): nothing is remembered, it verifies until exp. */
    const char *t = mint(claims("arena", NOW + 60, ""), KEY);
    for (int i = 0; i < 3; i++) {
        v = verify_for(&r, t, "arena");
        EXPECT_OK(v);
    }
}

/* A token libjwt itself encodes: the verifier reads what a JWT library writes. */
static void test_libjwt_minted_ticket(void) {
    jwt_t *j = NULL;
    CHECK(jwt_new(&j) == 0);
    CHECK(jwt_set_alg(j, JWT_ALG_HS256, (const unsigned char *)KEY, (int)strlen(KEY)) == 0);
    CHECK(jwt_add_grant(j, "room", "lobby") == 0 && jwt_add_grant_int(j, "exp", NOW + 5) == 0 &&
          jwt_add_grant(j, "sub", "bob") == 0 && jwt_add_grant_bool(j, "admin", 1) == 0);
    char *token = jwt_encode_str(j);
    jwt_free(j);
    CHECK(token);
    net_ticket_rules r = rules_with(KEY, NULL);
    verdict v = verify_for(&r, token, "lobby");
    free(token);
    EXPECT_OK(v);
    CHECK(v.claims.admin && strcmp(v.claims.sub, "bob") == 0);
}

static void test_room_rule(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    verdict v = verify_for(&r, mint("{\"exp\":1800000060}", KEY), "arena");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    CHECK(strstr(v.why, "room"));
    v = verify_for(&r, mint(claims("arena", NOW + 60, ""), KEY), "other");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
    CHECK(strstr(v.why, "arena") && strstr(v.why, "other"));
    /* "" is `default` on either side (the session hands over Hello.room already mapped). */
    v = verify_for(&r, mint(claims("", NOW + 60, ""), KEY), "default");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("default", NOW + 60, ""), KEY), "default");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("", NOW + 60, ""), KEY), "arena");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
    /* Names compare as bytes: no case folding, no prefix. */
    v = verify_for(&r, mint(claims("Arena", NOW + 60, ""), KEY), "arena");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
    v = verify_for(&r, mint(claims("arena2", NOW + 60, ""), KEY), "arena");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
    /* A claim that is no room name is not quoted. */
    v = verify_for(&r, mint(claims("a b\\u0007", NOW + 60, ""), KEY), "arena");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
    CHECK(!strchr(v.why, '\a'));
}

static void test_exp_rule_and_leeway(void) {
    net_ticket_rules r = rules_with(KEY, NULL); /* leeway 5 s */
    verdict v = verify_for(&r, mint("{\"room\":\"a\"}", KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    CHECK(strstr(v.why, "exp"));
    v = verify_for(&r, mint(claims("a", NOW - 60, ""), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_EXPIRED);
    /* Within the leeway: exp + leeway must still be ahead of now. */
    v = verify_for(&r, mint(claims("a", NOW - 4, ""), KEY), "a");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("a", NOW - 5, ""), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_EXPIRED);
    r.leeway_s = 0; /* RFC 7519: not on or after exp */
    v = verify_for(&r, mint(claims("a", NOW, ""), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_EXPIRED);
    v = verify_for(&r, mint(claims("a", NOW + 1, ""), KEY), "a");
    EXPECT_OK(v);
    /* Extreme values neither overflow nor pass. */
    v = verify_for(&r, mint(claims("a", -9223372036854775807LL - 1, ""), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_EXPIRED);
    v = verify_for(&r, mint(claims("a", 9223372036854775807LL, ""), KEY), "a");
    EXPECT_OK(v);
}

static void test_nbf_and_iat_rules(void) {
    net_ticket_rules r = rules_with(KEY, NULL); /* leeway 5 s */
    verdict v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1800000010"), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_NOT_YET);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1800000005"), KEY), "a");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1800000006"), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_NOT_YET);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1"), KEY), "a");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"iat\":1800000010"), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_FUTURE);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"iat\":1800000005"), KEY), "a");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"iat\":1800000006"), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_FUTURE);
    r.leeway_s = 0;
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1800000000,\"iat\":1800000000"), KEY),
                   "a");
    EXPECT_OK(v);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"nbf\":1800000001"), KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_NOT_YET);
}

/* Every claim of the protocol with a value of another type: format, naming the claim. */
static void test_claim_types(void) {
    static const struct {
        const char *payload;
        const char *claim;
    } cases[] = {
        {"{\"room\":\"a\",\"exp\":\"1900000000\"}", "exp"},
        {"{\"room\":\"a\",\"exp\":true}", "exp"},
        {"{\"room\":\"a\",\"exp\":null}", "exp"},
        {"{\"room\":\"a\",\"exp\":[1900000000]}", "exp"},
        {"{\"room\":\"a\",\"exp\":99999999999999999999}", ""}, /* past 64 bits: not JSON */
        {"{\"room\":5,\"exp\":1900000000}", "room"},
        {"{\"room\":null,\"exp\":1900000000}", "room"},
        {"{\"room\":[\"a\"],\"exp\":1900000000}", "room"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"nbf\":\"0\"}", "nbf"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"iat\":false}", "iat"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"iat\":{}}", "iat"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"sub\":7}", "sub"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"sub\":{\"id\":\"x\"}}", "sub"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"admin\":\"true\"}", "admin"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"admin\":1}", "admin"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"admin\":null}", "admin"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"max_bodies\":-1}", "max_bodies"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"max_bodies\":2.5}", "max_bodies"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"max_bodies\":\"3\"}", "max_bodies"},
        {"{\"room\":\"a\",\"exp\":1900000000,\"max_bodies\":true}", "max_bodies"},
    };
    net_ticket_rules r = rules_with(KEY, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        verdict v = verify_for(&r, mint(cases[i].payload, KEY), "a");
        CHECK_MSG(names_check(&v, NET_TICKET_FORMAT) && strstr(v.why, cases[i].claim),
                  "%s: got %s \"%s\"", cases[i].payload, net_ticket_status_str(v.st), v.why);
    }
}

/* RFC 7519's NumericDate may be a real: exp rounds down, nbf and iat up (never in the ticket's
 * favour). NOW is the rules' clock; the leeway is 0 here. */
static void test_times_as_reals(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    r.leeway_s = 0;
    char p[160];
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":%.1f}", (double)NOW + 60.5);
    verdict v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(v.st == NET_TICKET_OK, "exp now + 60.5 is good: %s", v.why);
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":%.1f}", (double)NOW + 0.5);
    v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(names_check(&v, NET_TICKET_EXPIRED), "exp now + 0.5 rounds down to now: %s", v.why);
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":1.9e9}");
    v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(v.st == NET_TICKET_OK, "an exponent is a number too: %s", v.why);
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":%lld,\"nbf\":%.1f}", (long long)NOW + 60,
             (double)NOW + 0.5);
    v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(names_check(&v, NET_TICKET_NOT_YET), "nbf now + 0.5 rounds up: %s", v.why);
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":%lld,\"iat\":%.1f}", (long long)NOW + 60,
             (double)NOW - 0.5);
    v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(v.st == NET_TICKET_OK, "iat now - 0.5 rounds up to now: %s", v.why);
    snprintf(p, sizeof p, "{\"room\":\"a\",\"exp\":1e300}");
    v = verify_for(&r, mint(p, KEY), "a");
    CHECK_MSG(v.st == NET_TICKET_OK, "a far exp is clamped, not overflowed: %s", v.why);
}

static void test_sub_kept_and_cut(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    char rest[256], want[NET_TICKET_SUB_MAX + 1];
    memset(want, 's', NET_TICKET_SUB_MAX);
    want[NET_TICKET_SUB_MAX] = '\0';
    snprintf(rest, sizeof rest, "\"sub\":\"%sTAIL\"", want);
    verdict v = verify_for(&r, mint(claims("a", NOW + 60, rest), KEY), "a");
    EXPECT_OK(v);
    CHECK(v.claims.has_sub && strcmp(v.claims.sub, want) == 0);
    v = verify_for(&r, mint(claims("a", NOW + 60, "\"sub\":\"\""), KEY), "a");
    EXPECT_OK(v);
    CHECK(!v.claims.has_sub);
}

static void test_signature(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    const char *payload = claims("a", NOW + 60, "");
    verdict v = verify_for(&r, mint(payload, OTHER_KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* A prefix of the key, the key with one more byte: other keys. */
    v = verify_for(&r, mint(payload, "k3y-0f-the-game-backend-32-bytes"), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    v = verify_for(&r, mint(payload, KEY "!"), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* One character of the payload changed (admin false -> true), the signature kept. */
    char t[4200];
    snprintf(t, sizeof t, "%s", mint(claims("a", NOW + 60, "\"admin\":false"), KEY));
    char forged[4096];
    size_t n = tm_mint(TM_HS256_HEADER, claims("a", NOW + 60, "\"admin\":true "), KEY, strlen(KEY),
                       TM_HS256, forged, sizeof forged);
    CHECK(n > 0);
    strcpy(strrchr(forged, '.'), strrchr(t, '.'));
    v = verify_for(&r, forged, "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* The signature cut short, or with one more character. */
    snprintf(t, sizeof t, "%s", mint(payload, KEY));
    size_t len = strlen(t);
    t[len - 4] = '\0';
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    snprintf(t, sizeof t, "%sA", mint(payload, KEY));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* No keys at all: nothing verifies. */
    net_ticket_rules none = rules_with(NULL, NULL);
    v = verify_for(&none, mint(payload, KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
}

/* A key of length 0 signs what anyone can sign: it is no key, and verifies nothing. */
static void test_empty_key_verifies_nothing(void) {
    net_ticket_rules r = rules_with("", NULL);
    CHECK(r.key_count == 1 && r.key_lens[0] == 0);
    const char *payload = claims("a", NOW + 60, "");
    verdict v = verify_for(&r, mint(payload, ""), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    v = verify_for(&r, mint(payload, KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
}

static void test_algorithms_refused(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    const char *payload = claims("a", NOW + 60, "\"admin\":true");
    char t[4096];
    /* alg none: with no signature the token is not even of the compact form we take... */
    CHECK(tm_mint("{\"alg\":\"none\"}", payload, KEY, strlen(KEY), TM_NONE, t, sizeof t));
    verdict v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    /* ... and with any signature, it names an algorithm we refuse. */
    CHECK(tm_mint("{\"alg\":\"none\",\"typ\":\"JWT\"}", payload, KEY, strlen(KEY), TM_HS256, t,
                  sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    CHECK(tm_mint("{\"alg\":\"None\"}", payload, KEY, strlen(KEY), TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    /* HS512 and HS384 under our own key (which libjwt, given the key, would verify): refused. */
    CHECK(tm_mint("{\"alg\":\"HS512\",\"typ\":\"JWT\"}", payload, KEY, strlen(KEY), TM_HS512, t,
                  sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    CHECK(strstr(v.why, "HS512"));
    CHECK(tm_mint("{\"alg\":\"HS384\"}", payload, KEY, strlen(KEY), TM_HS384, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    /* An RS256 label on an HMAC under our key (the key-confusion attack). */
    CHECK(tm_mint("{\"alg\":\"RS256\",\"typ\":\"JWT\"}", payload, KEY, strlen(KEY), TM_HS256, t,
                  sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    CHECK(tm_mint("{\"alg\":\"ES256\"}", payload, KEY, strlen(KEY), TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    /* "hs256": libjwt matches names without case; JWA's are case-sensitive. */
    CHECK(tm_mint("{\"alg\":\"hs256\"}", payload, KEY, strlen(KEY), TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_ALGORITHM);
    /* No alg, an unknown one, one that is not a string: not a JWS we can read. */
    static const char *const odd[] = {"{\"typ\":\"JWT\"}", "{\"alg\":\"HS257\"}", "{\"alg\":256}",
                                      "{\"alg\":null}"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        CHECK(tm_mint(odd[i], payload, KEY, strlen(KEY), TM_HS256, t, sizeof t));
        v = verify_for(&r, t, "a");
        CHECK_MSG(names_check(&v, NET_TICKET_FORMAT), "%s: %s", odd[i], v.why);
    }
    /* A critical extension we do not understand (RFC 7515 4.1.11). */
    CHECK(tm_mint("{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", payload, KEY, strlen(KEY), TM_HS256, t,
                  sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    /* typ other than JWT (libjwt's rule), and without typ at all (fine). */
    CHECK(tm_mint("{\"alg\":\"HS256\",\"typ\":\"at+jwt\"}", payload, KEY, strlen(KEY), TM_HS256, t,
                  sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    CHECK(tm_mint("{\"alg\":\"HS256\"}", payload, KEY, strlen(KEY), TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_OK(v);
}

static void test_size_bound_before_parsing(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    const char *good = mint(claims("a", NOW + 60, ""), KEY);
    size_t len = strlen(good);
    r.max_bytes = (uint32_t)len;
    verdict v = verify_for(&r, good, "a");
    EXPECT_OK(v);
    r.max_bytes = (uint32_t)len - 1;
    v = verify_for(&r, good, "a");
    EXPECT_REFUSED(v, NET_TICKET_SIZE);
    /* Refused from its length alone: what is past the bound is never read. The bytes after the
     * bound are not even a token. */
    static char big[NET_TICKET_BYTES_LIMIT + 64];
    memset(big, '!', sizeof big);
    r.max_bytes = 1024;
    net_ticket_claims c;
    char why[NET_TICKET_WHY];
    net_ticket_status st =
        net_ticket_verify(&r, (const uint8_t *)big, 1025, "a", 1, &c, why, sizeof why);
    CHECK(st == NET_TICKET_SIZE && strncmp(why, "size", 4) == 0);
    /* The flag cannot raise the bound past NET_TICKET_BYTES_LIMIT. */
    r.max_bytes = UINT32_MAX;
    st = net_ticket_verify(&r, (const uint8_t *)big, NET_TICKET_BYTES_LIMIT + 1, "a", 1, &c, why,
                           sizeof why);
    CHECK(st == NET_TICKET_SIZE);
    /* why_size 0: no reason written, the verdict still given. */
    st = net_ticket_verify(&r, (const uint8_t *)big, 10, "a", 1, &c, NULL, 0);
    CHECK(st == NET_TICKET_FORMAT);
}

/* Rotation: either of two keys verifies; a third does not. */
static void test_two_keys(void) {
    net_ticket_rules r = rules_with(KEY, OLD_KEY);
    const char *payload = claims("a", NOW + 60, "");
    verdict v = verify_for(&r, mint(payload, KEY), "a");
    EXPECT_OK(v);
    CHECK(v.claims.key_index == 0);
    v = verify_for(&r, mint(payload, OLD_KEY), "a");
    EXPECT_OK(v);
    CHECK(v.claims.key_index == 1);
    v = verify_for(&r, mint(payload, OTHER_KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* The old key retired: its tickets are refused. */
    net_ticket_rules now = rules_with(KEY, NULL);
    v = verify_for(&now, mint(payload, OLD_KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_SIGNATURE);
    /* The rules on claims hold under the second key as under the first. */
    v = verify_for(&r, mint(claims("a", NOW - 60, ""), OLD_KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_EXPIRED);
    v = verify_for(&r, mint(claims("b", NOW + 60, ""), OLD_KEY), "a");
    EXPECT_REFUSED(v, NET_TICKET_ROOM);
}

static void test_malformed(void) {
    net_ticket_rules r = rules_with(KEY, NULL);
    char good[4096];
    snprintf(good, sizeof good, "%s", mint(claims("a", NOW + 60, ""), KEY));
    char *dot1 = strchr(good, '.'), *dot2 = strrchr(good, '.');
    char t[4200];
    static const char *const bad[] = {
        "",
        "abc",
        "abc.def",
        "a.b.c.d",
        "..",
        "abcd..abcd",
        ".abcd.abcd",
        "abcd.abcd.",
        "abcd.abcd.abcd.",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb29tIjoiYSJ9!.abcd",
        "eyJhbGciOiJIUzI1NiJ9+.eyJyb29tIjoiYSJ9.abcd",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb29tIjoiYSJ9.ab/d",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb29tIjoiYSJ9.abc=",
        "eyJhbGciOiJIUzI1NiJ9 .eyJyb29tIjoiYSJ9.abcd",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb29tIjoiYSJ9a.abcd", /* a part of 4k + 1 characters */
        "aGVsbG8.aGVsbG8.aGVsbG8",                     /* "hello": not JSON */
        "W10.W10.abcd",                                /* "[]": arrays */
        "e30.e30.abcd",                                /* "{}": no alg */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        verdict v = verify_for(&r, bad[i], "a");
        CHECK_MSG(names_check(&v, NET_TICKET_FORMAT), "%s: %s \"%s\"", bad[i],
                  net_ticket_status_str(v.st), v.why);
    }
    /* A valid header with a payload that is not JSON, or a JSON array. */
    char body[64];
    tm_b64url("not json", 8, body);
    snprintf(t, sizeof t, "%.*s.%s%s", (int)(dot1 - good), good, body, dot2);
    verdict v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    CHECK(tm_mint(TM_HS256_HEADER, "not json", KEY, strlen(KEY), TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    CHECK(tm_mint(TM_HS256_HEADER, "[{\"room\":\"a\",\"exp\":1900000000}]", KEY, strlen(KEY),
                  TM_HS256, t, sizeof t));
    v = verify_for(&r, t, "a");
    EXPECT_REFUSED(v, NET_TICKET_FORMAT);
    /* A NUL inside the bytes: the token is not cut there (strdup would), it is refused. */
    char withnul[4096];
    size_t n = strlen(good);
    memcpy(withnul, good, n);
    withnul[n] = '\0';
    withnul[10] = '\0';
    net_ticket_claims c;
    char why[NET_TICKET_WHY];
    CHECK(net_ticket_verify(&r, (const uint8_t *)withnul, n, "a", 1, &c, why, sizeof why) ==
          NET_TICKET_FORMAT);
    /* The good token, intact, still verifies (nothing above changed it). */
    v = verify_for(&r, good, "a");
    EXPECT_OK(v);
}

/* Every status has its word, as PROTOCOL.md names the checks. */
static void test_check_names(void) {
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_SIGNATURE), "signature") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_EXPIRED), "expired") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_NOT_YET), "not yet valid") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_ROOM), "room") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_FORMAT), "format") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_ALGORITHM), "algorithm") == 0);
    CHECK(strcmp(net_ticket_status_str(NET_TICKET_SIZE), "size") == 0);
}

TEST_MAIN(TEST(test_valid_ticket_and_its_claims), TEST(test_libjwt_minted_ticket),
          TEST(test_room_rule), TEST(test_exp_rule_and_leeway), TEST(test_nbf_and_iat_rules),
          TEST(test_claim_types), TEST(test_times_as_reals), TEST(test_sub_kept_and_cut),
          TEST(test_signature), TEST(test_empty_key_verifies_nothing),
          TEST(test_algorithms_refused), TEST(test_size_bound_before_parsing), TEST(test_two_keys),
          TEST(test_malformed), TEST(test_check_names))

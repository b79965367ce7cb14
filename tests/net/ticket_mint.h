/* Tickets made by hand (PROTOCOL.md "Tickets"), for the unit tests, the fuzz target and
 * bench_ticket: any header and payload text, base64url-encoded and signed with HMAC-SHA256,
 * -384 or -512 (nettle), or left unsigned. Hand-built so that a test can make what no JWT library
 * would: alg none, an RS256 label on an HMAC, "hs256", claims of the wrong type. */
#ifndef COLLIDE_TICKET_MINT_H
#define COLLIDE_TICKET_MINT_H

#include <nettle/hmac.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* base64url of n bytes, without padding (RFC 7515), NUL-terminated; returns its length. out needs
 * 4 * ceil(n / 3) + 1 bytes. */
static inline size_t tm_b64url(const void *in, size_t n, char *out) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const uint8_t *p = in;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        out[o++] = abc[(v >> 18) & 63];
        out[o++] = abc[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = abc[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = abc[v & 63];
    }
    out[o] = '\0';
    return o;
}

/* How the signing input is signed. */
typedef enum tm_sig { TM_NONE = 0, TM_HS256 = 256, TM_HS384 = 384, TM_HS512 = 512 } tm_sig;

/* base64url(header) "." base64url(payload) "." signature, into out (cap bytes); the signature
 * is the base64url MAC of the first two parts under key (TM_NONE: empty). Returns the length, 0
 * when it does not fit. */
static inline size_t tm_mint(const char *header, const char *payload, const char *key,
                             size_t key_len, tm_sig sig, char *out, size_t cap) {
    size_t hl = strlen(header), pl = strlen(payload);
    if (4 * (hl + pl) / 3 + 8 + 2 * 88 > cap) return 0;
    size_t n = tm_b64url(header, hl, out);
    out[n++] = '.';
    n += tm_b64url(payload, pl, out + n);
    uint8_t mac[64];
    size_t mac_len = 0;
    if (sig == TM_HS256) {
        struct hmac_sha256_ctx c;
        hmac_sha256_set_key(&c, key_len, (const uint8_t *)key);
        hmac_sha256_update(&c, n, (const uint8_t *)out);
        hmac_sha256_digest(&c, SHA256_DIGEST_SIZE, mac);
        mac_len = SHA256_DIGEST_SIZE;
    } else if (sig == TM_HS384) {
        struct hmac_sha384_ctx c;
        hmac_sha384_set_key(&c, key_len, (const uint8_t *)key);
        hmac_sha384_update(&c, n, (const uint8_t *)out);
        hmac_sha384_digest(&c, SHA384_DIGEST_SIZE, mac);
        mac_len = SHA384_DIGEST_SIZE;
    } else if (sig == TM_HS512) {
        struct hmac_sha512_ctx c;
        hmac_sha512_set_key(&c, key_len, (const uint8_t *)key);
        hmac_sha512_update(&c, n, (const uint8_t *)out);
        hmac_sha512_digest(&c, SHA512_DIGEST_SIZE, mac);
        mac_len = SHA512_DIGEST_SIZE;
    }
    out[n++] = '.';
    n += tm_b64url(mac, mac_len, out + n);
    return n;
}

/* The usual header. */
#define TM_HS256_HEADER "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

#endif

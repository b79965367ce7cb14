#include "ticket.h"

#include <errno.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* memset through a volatile pointer: a plain memset before free() may be optimised away. */
static void wipe(void *p, size_t n) {
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

static bool key_set(const char *cmd, const char *from, const void *bytes, size_t len,
                    cc_ticket_key *out) {
    if (len == 0) {
        fprintf(stderr, "collide-client %s: the ticket key from %s is empty\n", cmd, from);
        return false;
    }
    if (len > CC_TICKET_KEY_MAX) {
        fprintf(stderr, "collide-client %s: the ticket key from %s is longer than %u bytes\n", cmd,
                from, CC_TICKET_KEY_MAX);
        return false;
    }
    out->bytes = malloc(len);
    if (!out->bytes) {
        fprintf(stderr, "collide-client %s: out of memory for the ticket key\n", cmd);
        return false;
    }
    memcpy(out->bytes, bytes, len);
    out->len = len;
    return true;
}

static bool key_read_file(const char *cmd, const char *flag, const char *path, cc_ticket_key *out) {
    char from[512];
    snprintf(from, sizeof from, "%s '%s'", flag, path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "collide-client %s: %s: %s\n", cmd, from, strerror(errno));
        return false;
    }
    /* One byte past the bound tells a key that is too long from one that just fits. */
    unsigned char *buf = malloc(CC_TICKET_KEY_MAX + 1u);
    size_t n = buf ? fread(buf, 1, CC_TICKET_KEY_MAX + 1u, f) : 0;
    bool read_failed = !buf || ferror(f);
    fclose(f);
    bool ok = false;
    if (read_failed) {
        fprintf(stderr, "collide-client %s: %s: %s\n", cmd, from,
                buf ? "read error" : "out of memory");
    } else {
        /* The daemon's --ticket-key-file format: one key per line, blank lines skipped (a
         * rotation's file holds two). The first key is the one tickets are signed with, so the
         * same file serves both; put the new key first when rotating. */
        size_t start = 0;
        while (start < n && (buf[start] == '\n' || buf[start] == '\r'))
            start++;
        size_t end = start;
        while (end < n && buf[end] != '\n' && buf[end] != '\r')
            end++;
        ok = key_set(cmd, from, buf + start, end - start, out);
    }
    if (buf) wipe(buf, CC_TICKET_KEY_MAX + 1u);
    free(buf);
    return ok;
}

bool cc_ticket_key_load(const char *cmd, const cc_ticket_key_source *src, cc_ticket_key *out) {
    out->bytes = NULL;
    out->len = 0;
    if (src->value && src->file) {
        fprintf(stderr, "collide-client %s: give %s or %s, not both\n", cmd, src->value_flag,
                src->file_flag);
        return false;
    }
    if (src->value) return key_set(cmd, src->value_flag, src->value, strlen(src->value), out);
    if (src->file) return key_read_file(cmd, src->file_flag, src->file, out);
    const char *env = src->env ? getenv(src->env) : NULL;
    if (env && env[0]) return key_set(cmd, src->env, env, strlen(env), out);
    return true;
}

void cc_ticket_key_free(cc_ticket_key *k) {
    if (k->bytes) wipe(k->bytes, k->len);
    free(k->bytes);
    k->bytes = NULL;
    k->len = 0;
}

/* The claims into j; 0 or the errno of the grant that failed, named in why. */
static int claims_add(jwt_t *j, const cc_ticket_claims *c, char *why, size_t why_size) {
    int rc = jwt_add_grant(j, "room", c->room);
    if (rc == 0 && c->sub) {
        rc = jwt_add_grant(j, "sub", c->sub);
        /* libjwt's JSON (jansson) refuses a string that is not UTF-8. */
        if (rc == EINVAL) {
            snprintf(why, why_size, "sub is not valid UTF-8");
            return EILSEQ;
        }
    }
    if (rc == 0) rc = jwt_add_grant_int(j, "iat", (long)c->iat);
    if (rc == 0) rc = jwt_add_grant_int(j, "exp", (long)c->exp);
    if (rc == 0 && c->has_nbf) rc = jwt_add_grant_int(j, "nbf", (long)c->nbf);
    if (rc == 0 && c->admin) rc = jwt_add_grant_bool(j, "admin", 1);
    if (rc == 0 && c->has_max_bodies) rc = jwt_add_grant_int(j, "max_bodies", (long)c->max_bodies);
    if (rc) snprintf(why, why_size, "libjwt: %s", strerror(rc));
    return rc;
}

char *cc_ticket_mint(const cc_ticket_key *key, const cc_ticket_claims *c, char *why,
                     size_t why_size) {
    if (!key->bytes || key->len == 0 || key->len > CC_TICKET_KEY_MAX) {
        snprintf(why, why_size, "no ticket key");
        errno = EINVAL;
        return NULL;
    }
    jwt_t *j = NULL;
    int rc = jwt_new(&j);
    /* libjwt keeps its own copy of the key and wipes it in jwt_free. It writes the header
     * {"alg":"HS256","typ":"JWT"} itself and adds no claim of its own (not even iat). */
    if (rc == 0) rc = jwt_set_alg(j, JWT_ALG_HS256, key->bytes, (int)key->len);
    if (rc) {
        snprintf(why, why_size, "libjwt: %s", strerror(rc));
        jwt_free(j);
        errno = rc;
        return NULL;
    }
    char *out = NULL;
    rc = claims_add(j, c, why, why_size);
    if (rc == 0) {
        out = jwt_encode_str(j);
        if (!out) {
            rc = errno ? errno : ENOMEM;
            snprintf(why, why_size, "libjwt: %s", strerror(rc));
        }
    }
    jwt_free(j);
    if (!out) errno = rc;
    return out;
}

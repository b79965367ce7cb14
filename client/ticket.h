/* cc_ticket: tickets (PROTOCOL.md 1.2, "Tickets: who may join which room"), made the way a game's
 * backend makes them: an HS256 JWT (RFC 7519, compact form) signed with the daemon's
 * --ticket-key, through Debian's libjwt. `collide-client ticket` prints one; `load --ticket-key`
 * gives each simulated player its own. The key is read from a flag, a file or the environment and
 * never printed: every message names where the key came from, not what it is. */
#ifndef COLLIDE_CLIENT_TICKET_H
#define COLLIDE_CLIENT_TICKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key longer than this is a mistake (a wrong file), not a secret: HMAC keys past 64 bytes are
 * hashed down anyway. */
#define CC_TICKET_KEY_MAX (64u * 1024u)
/* The environment variable the daemon reads its key from; `ticket` reads it too, so a shell that
 * runs both needs the key once. */
#define CC_TICKET_KEY_ENV "COLLIDE_TICKET_KEY"

typedef struct cc_ticket_key {
    unsigned char *bytes; /* the secret, malloc'd; NULL when none was given */
    size_t len;           /* its length in bytes (a file's key may hold any byte) */
} cc_ticket_key;

/* Where a key may come from: the value of flag value_flag, the file named by flag file_flag, or
 * (when env is not NULL) that environment variable, tried last. */
typedef struct cc_ticket_key_source {
    const char *value_flag; /* "--key": its value is the key itself */
    const char *value;      /* NULL: not given */
    const char *file_flag;  /* "--key-file": its value names a file holding the key */
    const char *file;       /* NULL: not given */
    const char *env;        /* an environment variable holding the key, NULL: none consulted */
} cc_ticket_key_source;

/* Reads the key from src into *out. A file's trailing newlines (LF, CR) are not part of the key:
 * `echo secret > key` and a Kubernetes secret mounted as a file both give "secret". Returns false
 * after a message on stderr (prefixed "collide-client CMD: ") when the flags conflict, the file
 * cannot be read, or the key is empty or longer than CC_TICKET_KEY_MAX; *out is then empty.
 * Giving no source at all is not an error here: out->bytes stays NULL. */
bool cc_ticket_key_load(const char *cmd, const cc_ticket_key_source *src, cc_ticket_key *out);
/* Wipes and frees the key; idempotent. */
void cc_ticket_key_free(cc_ticket_key *k);

typedef struct cc_ticket_claims {
    const char *room;    /* "room": the room it admits to ("" = default); required */
    const char *sub;     /* "sub": the player's name (NULL: left out) */
    int64_t iat;         /* "iat": issued at, seconds since the epoch */
    int64_t exp;         /* "exp": expires at, seconds since the epoch */
    bool has_nbf;        /* "nbf" is set */
    int64_t nbf;         /* "nbf": not valid before, seconds since the epoch */
    bool admin;          /* "admin": true makes the player an admin of that room only (false:
                            left out) */
    bool has_max_bodies; /* "max_bodies" is set */
    uint32_t max_bodies; /* "max_bodies": lowers the per-client body limit */
} cc_ticket_claims;

/* Signs the claims with key (HS256; the header is {"alg":"HS256","typ":"JWT"}) and returns the
 * compact JWT, malloc'd (free() it), or NULL with the reason in why and errno set: EILSEQ for a
 * sub that is not UTF-8 (the caller's mistake), ENOMEM and others for the library's failures. */
char *cc_ticket_mint(const cc_ticket_key *key, const cc_ticket_claims *c, char *why,
                     size_t why_size);

/* `collide-client ticket`: prints one ticket on stdout. */
int cc_ticket_main(int argc, char **argv);

#endif

/* ticket_verify KEY_FILE TOKEN: libjwt's verdict on a ticket, for ticket_tests.py, which holds
 * tickets made by the Python example's mint_ticket to it (and the C tool's to its own Python
 * check). The key is the file's bytes as they are (no newline is stripped: the test writes the
 * key it means). Prints the header and the claims as JSON, one line each, and exits 0 when the
 * signature checks under HS256; exits 1 with the reason otherwise, 2 on bad arguments. */
#include <errno.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ticket_verify KEY_FILE TOKEN\n");
        return 2;
    }
    unsigned char key[4096];
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "ticket_verify: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    size_t len = fread(key, 1, sizeof key, f);
    fclose(f);
    jwt_t *j = NULL;
    int rc = jwt_decode(&j, argv[2], key, (int)len);
    if (rc != 0) {
        printf("refused: %s\n", strerror(rc));
        return 1;
    }
    /* libjwt takes the algorithm from the token's header: a ticket must name HS256 there. */
    if (jwt_get_alg(j) != JWT_ALG_HS256) {
        printf("refused: alg %s\n", jwt_alg_str(jwt_get_alg(j)));
        jwt_free(j);
        return 1;
    }
    char *header = jwt_get_headers_json(j, NULL);
    char *claims = jwt_get_grants_json(j, NULL);
    printf("%s\n%s\n", header ? header : "null", claims ? claims : "null");
    free(header);
    free(claims);
    jwt_free(j);
    return 0;
}

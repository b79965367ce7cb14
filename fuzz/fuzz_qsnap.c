/* libFuzzer target over the C client's decoder of quantized snapshots (client/qsnap.c on
 * proto/quant.c): what a hostile or broken server could send. The input is a run of Snapshot
 * messages, each behind one length byte, applied in order to one client's table, through both
 * entries the client has: cc_qsnap_scan (load's, in place) and cc_qsnap_expand (watch's and
 * --check's, after protobuf-c's unpack) on a second table.
 * Checked: nothing is read out of bounds or leaked (ASan/LSan), no undefined behaviour (UBSan),
 * and after every snapshot both tables hold ids in strictly ascending order; when the expanded
 * form decoded, its records are in ascending id order, each the table's state. */
#include <stdlib.h>
#include <string.h>

#include "collide.pb-c.h"
#include "qsnap.h"

static void check_table(const quant_table *t) {
    for (size_t i = 1; i < t->count; i++)
        if (t->b[i].id <= t->b[i - 1].id) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cc_qsnap scan, expand;
    cc_qsnap_init(&scan, 1.0f / 256.0f, 1.0f / 64.0f);
    cc_qsnap_init(&expand, 1.0f / 256.0f, 1.0f / 64.0f);
    size_t i = 0;
    while (i < size) {
        size_t n = data[i++];
        if (n > size - i) n = size - i;
        const uint8_t *msg = data + i;
        i += n;
        cc_wire_snapshot_scan out;
        cc_qsnap_scan(&scan, msg, n, 1, &out);
        check_table(&scan.t);
        Collide__V1__Snapshot *s = collide__v1__snapshot__unpack(NULL, n, msg);
        if (!s) continue;
        size_t own_bodies = s->n_bodies;
        if (cc_qsnap_expand(&expand, s) && expand.n) {
            if (s->n_bodies != expand.n) abort();
            for (size_t k = 0; k < s->n_bodies; k++) {
                const quant_body *b = quant_table_find(&expand.t, s->bodies[k]->id);
                if (!b || (k && s->bodies[k]->id <= s->bodies[k - 1]->id)) abort();
                if (b->q.last_input_seq != s->bodies[k]->last_input_seq) abort();
            }
        }
        check_table(&expand.t);
        cc_qsnap_done(&expand, s);
        if (s->n_bodies != own_bodies) abort(); /* its own BodyStates given back */
        collide__v1__snapshot__free_unpacked(s, NULL);
    }
    cc_qsnap_free(&scan);
    cc_qsnap_free(&expand);
    return 0;
}

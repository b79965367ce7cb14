/* libFuzzer target over the journal reader (server/journal/journal_read.c) and the world image
 * loader under it: a journal file is what an operator hands collide-client replay or the viewer,
 * from anywhere. The input is a journal's bytes; it is opened and replayed.
 * Checked: nothing is read out of bounds or leaked (ASan/LSan), no undefined behaviour (UBSan);
 * a journal that opens gives a world that validates, and replaying it ends in one of the
 * documented results with a reason for every failure.
 * Bounded: images asking for more than 4,096 bodies are skipped (their worlds are big
 * allocations, not bugs), and the replay stops 2,000 ticks in (a STEP record may name 2^32 - 1). */
#include <stdlib.h>
#include <string.h>

#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    journal_header h;
    char err[256];
    if (!journal_read_header(data, size, &h, err, sizeof err)) return 0;
    world_config cfg;
    /* the image's config sits after its magic, version and nine record sizes */
    size_t at = 8 + 4 + 9 * 4;
    if (h.image_len < at + sizeof cfg) return 0;
    memcpy(&cfg, h.image + at, sizeof cfg);
    if (cfg.max_bodies > 4096) return 0;
    journal_replay *r = journal_replay_open(data, size, err, sizeof err);
    if (!r) {
        if (!err[0]) abort();
        return 0;
    }
    if (world_validate(journal_replay_world(r))) abort();
    const journal_header *rh = journal_replay_header(r);
    journal_result res = journal_replay_to(r, rh->start_tick + 2000);
    if (res != JOURNAL_OK && res != JOURNAL_END && res != JOURNAL_CORRUPT &&
        !journal_replay_error(r)[0])
        abort();
    journal_replay_free(r);
    return 0;
}

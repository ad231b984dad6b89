/*
 * Fuzz target: the reader of libsimcrawl's journal (filter/journal.c: INDEX.journal, one
 * record per page reported new, replayed at open). The input is a whole journal file:
 * its header is checked, then its records are walked. Every record the scanner accepts
 * must be well-formed (an id of at least one byte with no NUL, at most FJ_BLOCKS_MAX
 * blocks) and must encode back to exactly the bytes it was read from; the scanner must
 * stop at the first bad record with a reason, never read past the input, and count as
 * good only whole records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filter/filter_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
    const uint8_t *records; /* the input after the header */
    size_t off;             /* where the next record starts */
    uint8_t *buf;
    size_t cap;
};

static int record(void *userdata, const struct fj_rec *r)
{
    struct walk *w = userdata;
    if (r->id_len == 0 || memchr(r->id, 0, r->id_len) || r->n_blocks > FJ_BLOCKS_MAX)
        abort();
    size_t len = 0;
    if (fj_encode(r, &w->buf, &w->cap, &len) != DEDUP_OK)
        return 0; /* out of memory: nothing to compare */
    if (memcmp(w->buf, w->records + w->off, len) != 0)
        abort(); /* decode then encode must give the bytes back */
    w->off += len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned k = 0;
    if (fj_header_check(data, size, &k, NULL) != DEDUP_OK)
        return 0;
    if (k > 7)
        abort(); /* the header check accepts only a valid k */
    struct walk w = {data + FJ_HEADER_BYTES, 0, NULL, 0};
    size_t good = 0;
    const char *why = NULL;
    int stopped = 0;
    enum dedup_code rc =
        fj_scan(data + FJ_HEADER_BYTES, size - FJ_HEADER_BYTES, record, &w, &stopped, &good, &why);
    if (rc == DEDUP_OK && !stopped) {
        if (good != w.off || good > size - FJ_HEADER_BYTES)
            abort(); /* good counts exactly the whole records handed over */
        if (good < size - FJ_HEADER_BYTES && !why)
            abort(); /* stopping early always says why */
    }
    free(w.buf);
    return 0;
}

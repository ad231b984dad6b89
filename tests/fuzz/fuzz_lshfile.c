/*
 * Fuzz target: the minhash index-file loader (dedup/minhash_file.c) with the checksums
 * skipped, so mutated files reach the structural checks; an index that loads is then used
 * as the commands use it (a query with a signature taken from the input, all pairs,
 * clusters, stats, an add, and serialising it back), and must neither crash nor read out
 * of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/minhash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ud, uint32_t a, uint32_t b, double j)
{
    (void)a;
    (void)b;
    (void)j;
    return ++*(unsigned *)ud > 100000; /* a forged file may hold many pairs: stop early */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dedup_lsh *l = NULL;
    struct dedup_file_error err;
    if (dedup_lsh_load_mem(data, size, DEDUP_INDEX_LOAD_NO_CHECKSUM, &l, &err) != DEDUP_OK)
        return 0;
    const struct dedup_lsh_params *p = dedup_lsh_get_params(l);
    uint32_t *sig = calloc(p->h, sizeof *sig);
    if (sig) {
        for (unsigned i = 0; i < p->h && i * 4 + 4 <= size; i++)
            memcpy(&sig[i], data + size - 4 - 4 * (size_t)i, 4);
        unsigned rcs = 0; /* the codes do not matter, only that nothing breaks */
        struct dedup_lsh_matches m = {0};
        rcs += (unsigned)dedup_lsh_query(l, sig, p->threshold, 5, &m, NULL);
        dedup_lsh_matches_release(&m);
        unsigned n = 0;
        rcs += (unsigned)dedup_lsh_pairs(l, p->threshold, 0, count, &n, NULL, NULL);
        if (dedup_lsh_doc_count(l) <= 2000) {
            struct dedup_clusters *c = NULL;
            if (dedup_lsh_clusters(l, p->threshold, &c) == DEDUP_OK)
                dedup_clusters_free(c);
        }
        struct dedup_lsh_stats st;
        dedup_lsh_stats(l, &st);
        rcs += (unsigned)dedup_lsh_add(l, sig, "fuzz", 4, NULL);
        (void)rcs;
        uint8_t *out = NULL;
        size_t len = 0;
        if (dedup_lsh_serialize(l, &out, &len) == DEDUP_OK) {
            struct dedup_lsh *again = NULL;
            if (dedup_lsh_load_mem(out, len, 0, &again, &err) != DEDUP_OK)
                abort(); /* what we write we must read */
            dedup_lsh_free(again);
        }
        free(out);
        free(sig);
    }
    dedup_lsh_free(l);
    return 0;
}

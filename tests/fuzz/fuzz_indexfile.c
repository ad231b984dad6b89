/*
 * Fuzz target: the index-file loader (dedup/indexfile.c) with the checksums skipped, so
 * mutated files reach the structural checks; an index that loads is then used as the
 * commands use it (queries, stats, pairs, clusters, an add and a query after it, which
 * copies the mapped arrays), its template table looked up, written back and extended, and
 * must neither crash nor read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/dedup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ud, uint32_t a, uint32_t b, unsigned d)
{
    (void)a;
    (void)b;
    (void)d;
    return ++*(unsigned *)ud > 100000; /* a forged file may claim many pairs: stop early */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t *buf = calloc(size / 8 + 2, 8); /* 8-aligned, as a mapping is */
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    struct dedup_index *idx = NULL;
    struct dedup_file_error err;
    if (dedup_index_load_mem(buf, size, DEDUP_INDEX_LOAD_NO_CHECKSUM, &idx, &err) ==
        DEDUP_OK) {
        unsigned k = dedup_index_k(idx);
        unsigned rcs = 0; /* the codes do not matter, only that nothing breaks */
        struct dedup_matches m = {0};
        uint64_t probe = size >= 8 ? buf[0] ^ buf[(size - 8) / 8] : 0;
        rcs += (unsigned)dedup_index_query(idx, probe, k, &m);
        for (uint32_t d = 0; d < dedup_index_doc_count(idx) && d < 64; d++)
            rcs += (unsigned)dedup_index_query(idx, dedup_index_fingerprint(idx, d), k, &m);
        struct dedup_index_stats st;
        rcs += (unsigned)dedup_index_stats(idx, &st);
        unsigned n = 0;
        rcs += (unsigned)dedup_index_pairs(idx, k, 1, 0, count, &n, NULL);
        struct dedup_clusters *c = NULL;
        if (dedup_index_clusters(idx, k, 1, &c) == DEDUP_OK)
            dedup_clusters_free(c);
        /* the template section: look blocks up, write it back, count one more page */
        struct dedup_templates *t = dedup_index_templates(idx);
        uint64_t blocks[2] = {probe, probe >> 7};
        uint32_t toks[2] = {3, 5};
        unsigned char marks[2];
        (void)dedup_templates_mark(t, "", 0, blocks, toks, 2, marks);
        uint8_t *ser = NULL;
        size_t ser_len = 0;
        rcs += (unsigned)dedup_templates_serialize(t, &ser, &ser_len);
        free(ser);
        if (t)
            rcs += (unsigned)dedup_templates_add_doc(t, "", 0, probe, blocks, 2, NULL);
        rcs += (unsigned)dedup_index_add(idx, probe, "fuzz", 4, NULL);
        rcs += (unsigned)dedup_index_query(idx, probe, k, &m);
        dedup_matches_release(&m);
        dedup_index_free(idx);
        (void)rcs;
    }
    free(buf);
    return 0;
}

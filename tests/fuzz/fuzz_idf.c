/*
 * libFuzzer target for the IDF file parser (dedup_idf_parse, docs/FINGERPRINT.md
 * section 5). Any input must give DEDUP_OK or DEDUP_EFORMAT/ETOOLARGE with a line number
 * inside the input, never a crash. A table that parses is written back with
 * dedup_idf_write() and parsed again: the document count and the entries with df >= 2
 * must survive the round trip. The input is also fed to dedup_features_from_tokens()
 * as a token string (with the table as IDF), checking the fast simhash against the
 * literal per-bit loop. Seed corpus: tests/fuzz/corpus/idf/.
 */
#include "dedup/dedup_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct dedup_idf *idf = NULL;
    struct dedup_parse_error err;
    enum dedup_code rc = dedup_idf_parse(s, size, &idf, &err);
    if (rc != DEDUP_OK) {
        if (idf != NULL || err.what == NULL || err.line == 0 || err.offset > size)
            abort();
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += s[i] == '\n';
        if (err.line > lines + 1)
            abort();
    } else {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (mem) {
            enum dedup_code wrc = dedup_idf_write(idf, mem);
            fclose(mem);
            if (wrc == DEDUP_OK) {
                struct dedup_idf *back = NULL;
                if (dedup_idf_parse(buf, len, &back, &err) != DEDUP_OK)
                    abort();
                if (dedup_idf_doc_count(back) != dedup_idf_doc_count(idf) ||
                    dedup_idf_entry_count(back) > dedup_idf_entry_count(idf))
                    abort();
                dedup_idf_free(back);
            }
            free(buf);
        }
    }
    struct dedup_features *f = dedup_features_new();
    if (f) {
        struct dedup_opts o = {0};
        o.idf = idf;
        o.min_tokens = 1;
        if (dedup_features_from_tokens(f, s, size, &o) == DEDUP_OK) {
            size_t n = dedup_features_count(f);
            uint64_t *h = malloc((n + 1) * sizeof *h);
            uint32_t *w = malloc((n + 1) * sizeof *w);
            if (h && w) {
                for (size_t i = 0; i < n; i++) {
                    h[i] = dedup_features_hash(f, i);
                    w[i] = dedup_features_weight(f, i);
                }
                /* the kernel against the literal loop; a text under DEDUP_SHORT_TOKENS
                 * tokens has the hash of its token string instead (FINGERPRINT.md s. 4) */
                if (dedup__simhash_fast(h, w, n) != dedup__simhash_naive(h, w, n))
                    abort();
                if (dedup_features_token_count(f) >= DEDUP_SHORT_TOKENS &&
                    dedup_simhash(f) != dedup__simhash_naive(h, w, n))
                    abort();
            }
            free(h);
            free(w);
        }
        dedup_features_free(f);
    }
    dedup_idf_free(idf);
    return 0;
}

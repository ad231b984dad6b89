#ifndef DEDUP_DEDUP_INT_H
#define DEDUP_DEDUP_INT_H
/*
 * Internal to dedup/: the layout of the feature set and the simhash kernels, shared by
 * shingle.c (features), simhash.c (accumulation) and idf.c. Tests and benchmarks may
 * include it for white-box checks; nothing outside dedup/ and tests/ should. Internal
 * functions are dedup__ (libuv's uv__ tier): dedup_ is dedup.h's API only. They return as
 * the API does (the conventions in dedup.h, after enum dedup_code).
 */
#include "dedup/dedup.h"

/*
 * The weighted distinct shingles of one document, as parallel arrays (n entries), plus
 * the open-addressing table (slot = hash & mask, linear probing; a slot holds index + 1,
 * 0 = empty) used to count term frequencies and to look features up for cosine/Jaccard.
 * Buffers are kept across refills; cap_* are their allocated sizes.
 */
struct dedup_features {
    uint64_t *hash;    /* shingle hashes, XXH3_64bits_withSeed(shingle, DEDUP_SEED) */
    uint32_t *tf;      /* occurrences of each distinct shingle */
    uint32_t *weight;  /* dedup__weight(tf, idf): docs/FINGERPRINT.md section 5 */
    size_t n;          /* distinct shingles */
    size_t cap;        /* entries allocated in hash/tf/weight */
    uint32_t *slot;    /* mask + 1 slots */
    size_t mask;       /* slots - 1 (a power of two minus one), 0 before the first fill */
    size_t n_tokens;   /* tokens in the last input (also set on DEDUP_ETOOSHORT) */
    size_t n_shingles; /* shingles in the last input, counting repeats */
    int is_short;      /* fewer than DEDUP_SHORT_TOKENS tokens: the fingerprint is exact */
    uint64_t exact;    /* ... and is this hash of the token string (FINGERPRINT.md s. 4) */
};

/* Index of hash h in f, or (size_t)-1 when absent. */
size_t dedup__features_find(const struct dedup_features *f, uint64_t h);

/* The fixed-point weight of a shingle counted tf >= 1 times (already capped by
 * dedup__tf_cap()), with idf factor (1.0 when no IDF): the formula of docs/FINGERPRINT.md
 * section 5, at least 1, at most DEDUP_WEIGHT_MAX. */
#define DEDUP_WEIGHT_MAX (1u << 24)

/* The one way a file parser (indexfile.c, template.c) fails: it records the byte offset
 * and what was wrong in its struct dedup_file_error *err, sets its rc and jumps to its
 * fail label. */
#define DEDUP_PARSE_FAIL(code, off, msg)                                                           \
    do {                                                                                           \
        err->offset = (off);                                                                       \
        err->what = (msg);                                                                         \
        rc = (code);                                                                               \
        goto fail;                                                                                 \
    } while (0)
uint32_t dedup__weight(uint32_t tf, double idf);

/* The most times a shingle counts in a document of n_distinct distinct shingles
 * (docs/FINGERPRINT.md section 5: the cap that follows the size of the page). */
uint32_t dedup__tf_cap(size_t n_distinct);

/* The idf factor of shingle h in a table (docs/FINGERPRINT.md section 5, "IDF"; 1.0
 * when idf is NULL). */
double dedup__idf_factor(const struct dedup_idf *idf, uint64_t h);

/*
 * The simhash of n features (hash[i], weight[i]): the fast kernel used by dedup_simhash(),
 * and the literal per-bit loop of docs/FINGERPRINT.md. Both must give the same bits for
 * every input (tests/test_simhash.c checks it; tests/bench/bench_simhash.c times them).
 */

/* The MinHash kernel of mh: scalar = 1 forces the portable loop, 0 takes the AVX2 one when
 * the CPU has it (the default). Returns whether it was scalar. For the tests, which check
 * that both give the same signatures (dedup/minhash.c). */
struct dedup_minhash;
int dedup__minhash_use_scalar(struct dedup_minhash *mh, int scalar);

uint64_t dedup__simhash_fast(const uint64_t *hash, const uint32_t *weight, size_t n);
uint64_t dedup__simhash_naive(const uint64_t *hash, const uint32_t *weight, size_t n);

#endif

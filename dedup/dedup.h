#ifndef DEDUP_DEDUP_H
#define DEDUP_DEDUP_H
/*
 * dedup: shingle features, the 64-bit simhash (docs/FINGERPRINT.md), the block-permuted
 * table index (Manku, Jain, Das Sarma, WWW 2007), all pairs within k, clusters, and the
 * saved index file. Needs only libc and xxHash. Knows nothing of HTML or HTTP.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DEDUP_WARN_UNUSED __attribute__((warn_unused_result))

/* ==== errors ==== (0 is OK; codes only ever appended) */

enum dedup_code {
    DEDUP_OK = 0,
    DEDUP_ENOMEM,    /* out of memory; the object is unchanged and still usable */
    DEDUP_EINVAL,    /* a bad argument (programmer error), e.g. a malformed token string */
    DEDUP_ETOOSHORT, /* fewer tokens than the minimum: too little text to fingerprint */
    DEDUP_ETOOLARGE, /* over a cap (tokens, IDF entries, ...) */
    DEDUP_EFORMAT,   /* input does not follow its documented format (detail: line/offset) */
    DEDUP_EIO,       /* a read or write failed */
    /* the index helper appends its codes here */
};

/* A short lower-case description of code, e.g. "too little text to fingerprint". */
const char *dedup_strerror(enum dedup_code code);

/* Where a parsed file went wrong (IDF file, index file): 1-based line (0 when not
 * line-based), byte offset, and a static lower-case description. */
struct dedup_parse_error {
    size_t line;
    size_t offset;
    const char *what; /* static string, never freed; "" when none */
};

/* ==== features and the simhash ==== */
/*
 * docs/FINGERPRINT.md (version 1) is the specification. In short: the input is the token
 * string of extract_tokens() (tokens separated by exactly one space); the features are
 * the word 3-shingles "w1 w2 w3" hashed with XXH3_64bits_withSeed(DEDUP_SEED); each
 * distinct shingle weighs round(256 * (1 + ln tf) [* idf]); bit i of the simhash is 1 iff
 * the weighted sum of +w (bit i of the hash set) / -w (clear) is > 0. Bit 0 is the least
 * significant bit; printed as 16 lower-case hex digits.
 */
#define DEDUP_FINGERPRINT_VERSION 1
#define DEDUP_SHINGLE_K 3                     /* words per shingle */
#define DEDUP_SEED 0x73696d6372617731ull      /* "simcraw1" in ASCII */
#define DEDUP_WEIGHT_ONE 256u                 /* fixed-point 1.0 of a weight */
#define DEDUP_MIN_TOKENS 5u                   /* default minimum: 5 tokens = 3 shingles */
#define DEDUP_DEFAULT_MAX_TOKENS (1u << 22)   /* default cap on tokens per document */
#define DEDUP_IDF_MAX_ENTRIES (1u << 24)      /* cap on shingles in an IDF table */

struct dedup_features; /* opaque: the weighted distinct shingles of one document */
struct dedup_idf;      /* opaque: document frequencies of shingles over a corpus */

/* Options; zero-initialise and set what you need (0 means the default). */
struct dedup_opts {
    const struct dedup_idf *idf; /* borrowed, or NULL: weights without IDF */
    size_t min_tokens;           /* fewer -> DEDUP_ETOOSHORT; default DEDUP_MIN_TOKENS */
    size_t max_tokens;           /* more -> DEDUP_ETOOLARGE; default DEDUP_DEFAULT_MAX_TOKENS */
};

/* A new empty feature set; caller frees with dedup_features_free(). NULL when out of memory.
 * One object may be refilled by dedup_features_from_tokens() any number of times (its
 * buffers are reused). */
struct dedup_features *dedup_features_new(void);
void dedup_features_free(struct dedup_features *f); /* NULL-safe */

/*
 * Replaces the contents of f with the features of tokens[0..len) (the token string of
 * extract_tokens(): no leading, trailing or double space; need not be NUL-terminated;
 * tokens is borrowed only during the call). opts may be NULL.
 * Errors: DEDUP_ETOOSHORT (fewer than min_tokens tokens; f is empty but
 * dedup_features_token_count() tells how many there were), DEDUP_ETOOLARGE, DEDUP_EINVAL
 * (an empty token), DEDUP_ENOMEM. On any error f holds no features.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_features_from_tokens(struct dedup_features *f,
                                                             const char *tokens, size_t len,
                                                             const struct dedup_opts *opts);

size_t dedup_features_token_count(const struct dedup_features *f);   /* tokens seen */
size_t dedup_features_shingle_count(const struct dedup_features *f); /* with repeats */
size_t dedup_features_count(const struct dedup_features *f);         /* distinct shingles */
/* The i-th distinct feature (i < dedup_features_count(f)); order is unspecified. */
uint64_t dedup_features_hash(const struct dedup_features *f, size_t i);
uint32_t dedup_features_weight(const struct dedup_features *f, size_t i);
uint32_t dedup_features_tf(const struct dedup_features *f, size_t i);

/* The 64-bit simhash of f (0 for an empty set). Pure; fast (docs/FINGERPRINT.md). */
uint64_t dedup_simhash(const struct dedup_features *f);

/* Hamming distance of two fingerprints, 0..64. */
static inline unsigned dedup_distance(uint64_t a, uint64_t b)
{
    return (unsigned)__builtin_popcountll(a ^ b);
}

/* Exact similarities of two feature sets, in [0, 1] (both empty: 1).
 * cosine: over the integer weight vectors; jaccard: over the sets of distinct shingles. */
double dedup_features_cosine(const struct dedup_features *a, const struct dedup_features *b);
double dedup_features_jaccard(const struct dedup_features *a, const struct dedup_features *b);

/* Writes the 16 lower-case hex digits of fp and a NUL into buf[17]; returns buf. */
char *dedup_fingerprint_format(uint64_t fp, char buf[17]);
/* Parses exactly 16 hex digits (either case); 0 on success, -1 otherwise. */
int dedup_fingerprint_parse(const char *s, size_t len, uint64_t *out);

/*
 * IDF tables (docs/FINGERPRINT.md, "IDF file"). Text, one shingle a line:
 *     # simcrawl idf 1
 *     # docs N
 *     <16 hex digits of the shingle hash><TAB><document frequency>
 * Shingles absent from the table have df 1; idf = 1 + ln((N + 1) / (df + 1)).
 */
/* Parses data[0..len). On success *out is a new table: caller frees with dedup_idf_free().
 * On DEDUP_EFORMAT / DEDUP_ETOOLARGE, err (may be NULL) says which line and what. */
DEDUP_WARN_UNUSED enum dedup_code dedup_idf_parse(const char *data, size_t len,
                                                  struct dedup_idf **out,
                                                  struct dedup_parse_error *err);
/* A new empty table counting documents; caller frees with dedup_idf_free(). NULL: no memory. */
struct dedup_idf *dedup_idf_new(void);
void dedup_idf_free(struct dedup_idf *idf); /* NULL-safe */
/* Counts one more document containing the distinct shingles of f. */
DEDUP_WARN_UNUSED enum dedup_code dedup_idf_add_doc(struct dedup_idf *idf,
                                                    const struct dedup_features *f);
uint64_t dedup_idf_doc_count(const struct dedup_idf *idf);
size_t dedup_idf_entry_count(const struct dedup_idf *idf);
/* df of the shingle with hash h (1 when absent). */
uint64_t dedup_idf_df(const struct dedup_idf *idf, uint64_t h);
/* Writes the table in the IDF file format (entries with df >= 2, sorted by hash) to out.
 * DEDUP_EIO on a write error, DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_idf_write(const struct dedup_idf *idf, FILE *out);

/* ==== the index, pairs, clusters ==== */

/* ==== the index file ==== */

#endif

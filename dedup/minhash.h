#ifndef DEDUP_MINHASH_H
#define DEDUP_MINHASH_H
/*
 * dedup/minhash: the second near-duplicate method beside the simhash of dedup.h. Jaccard
 * similarity of the sets of word k-shingles of two token strings, estimated from MinHash
 * signatures (Broder, "On the resemblance and containment of documents", 1997) and
 * searched with locality-sensitive hashing over bands of the signature (Indyk and Motwani
 * 1998; Leskovec, Rajaraman and Ullman, "Mining of Massive Datasets", chapter 3).
 * docs/MINHASH.md (version 1) is the specification; tests/data/minhash/vectors.txt holds
 * its golden vectors. Needs only libc and xxHash, like the rest of dedup/, and returns as
 * it does (the conventions in dedup.h, after enum dedup_code).
 *
 * The input is the same token string the simhash uses (extract_tokens(), after the site's
 * template blocks are left out). A shingle is k consecutive tokens as the byte substring
 * of the token string (their single spaces included), hashed once with
 * XXH3_64bits_withSeed(seed); permutation i of h maps a shingle hash x to
 *     (uint32_t)((a_i * x + b_i) >> 32)      (mod 2^64; a_i odd, from splitmix64(seed))
 * and the signature holds the h minima. A text of fewer than k tokens is one shingle.
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"

#define DEDUP_MINHASH_VERSION 3                  /* docs/MINHASH.md version */
#define DEDUP_MINHASH_SEED 0x73696d6d6e683031ull /* "simmnh01" in ASCII */
#define DEDUP_MINHASH_K_DEFAULT 5u               /* words per shingle (MINHASH.md s. 2) */
#define DEDUP_MINHASH_K_MAX 32u
#define DEDUP_MINHASH_H_DEFAULT 128u /* values per signature */
#define DEDUP_MINHASH_H_MAX 1024u
#define DEDUP_MINHASH_THRESHOLD_DEFAULT 0.8
#define DEDUP_LSH_FP_WEIGHT 0.1 /* weights of the banding's false-positive and false- */
#define DEDUP_LSH_FN_WEIGHT 0.9 /* negative areas when b x r is chosen (MINHASH.md s. 4) */

/* ==== signatures ==== */

/* The parameters and the h permutations' coefficients: immutable once made, so one
 * object may be shared by threads. */
struct dedup_minhash;

/* A new hasher for word k-shingles (1..DEDUP_MINHASH_K_MAX) and h values
 * (1..DEDUP_MINHASH_H_MAX) drawn from seed (DEDUP_MINHASH_SEED is the specified one).
 * *out: caller frees with dedup_minhash_free(). DEDUP_EINVAL, DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_minhash_new(unsigned k, unsigned h, uint64_t seed,
                                                    struct dedup_minhash **out);
void dedup_minhash_free(struct dedup_minhash *mh); /* NULL-safe */
unsigned dedup_minhash_k(const struct dedup_minhash *mh);
unsigned dedup_minhash_h(const struct dedup_minhash *mh);
uint64_t dedup_minhash_seed(const struct dedup_minhash *mh);

/* The hash of one shingle: XXH3_64bits_withSeed(bytes, len, seed). */
uint64_t dedup_minhash_shingle_hash(const struct dedup_minhash *mh, const char *bytes, size_t len);
/* Value of permutation i (< h) for shingle hash x. */
uint32_t dedup_minhash_permute(const struct dedup_minhash *mh, unsigned i, uint64_t x);

/*
 * The signature of tokens[0..len) (a token string: tokens separated by exactly one space,
 * no leading or trailing space; borrowed during the call) into sig[0..h). *n_shingles (may
 * be NULL) receives the number of shingles, repeats counted.
 * DEDUP_ETOOSHORT: no token (sig is all 0xffffffff); DEDUP_EINVAL: a malformed string
 * (an empty token). Pure: no allocation.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_minhash_signature(const struct dedup_minhash *mh,
                                                          const char *tokens, size_t len,
                                                          uint32_t *sig, size_t *n_shingles);
/* The signature of a set (or multiset) of shingle hashes x[0..n) into sig[0..h); n = 0
 * gives all 0xffffffff. For generated sets and benchmarks. */
void dedup_minhash_signature_hashes(const struct dedup_minhash *mh, const uint64_t *x, size_t n,
                                    uint32_t *sig);

/* The estimated Jaccard similarity: the share of the h positions where a and b are equal. */
double dedup_minhash_estimate(const uint32_t *a, const uint32_t *b, unsigned h);

/*
 * The distinct shingle hashes of tokens[0..len), sorted ascending, in a new array *out
 * of *n entries (caller frees with free()). DEDUP_ETOOSHORT, DEDUP_EINVAL, DEDUP_ENOMEM.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_minhash_shingle_set(const struct dedup_minhash *mh,
                                                            const char *tokens, size_t len,
                                                            uint64_t **out, size_t *n);
/* Exact Jaccard of two sorted distinct hash sets (1 when both are empty). */
double dedup_minhash_jaccard_sets(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);

/* ==== LSH: b bands of r rows ==== */

/* Every parameter of an LSH index; recorded in its file. */
struct dedup_lsh_params {
    unsigned k, h;    /* shingle words, signature values */
    unsigned b, r;    /* bands and rows per band, b * r <= h */
    double threshold; /* Jaccard estimate a pair must reach, in (0, 1] */
    uint64_t seed;    /* of the shingle hash and the permutations */
};

/*
 * b x r for threshold t and h values, as datasketch's MinHashLSH._optimal_param() chooses
 * them (ekzhu/datasketch, datasketch/lsh.py): the (b, r) with b * r <= h that minimises
 * fp_weight * FP + fn_weight * FN, where FP is the area under the S-curve
 * P(s) = 1 - (1 - s^r)^b on [0, t] and FN the area above it on [t, 1] (Simpson's rule,
 * 256 intervals each). DEDUP_EINVAL: t outside (0, 1], h outside 1..DEDUP_MINHASH_H_MAX,
 * or a negative weight.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_optimal(double t, unsigned h, double fp_weight,
                                                    double fn_weight, unsigned *b, unsigned *r);
/* The probability that two documents of Jaccard s share a band: 1 - (1 - s^r)^b. */
double dedup_lsh_probability(double s, unsigned b, unsigned r);

/* Fills p with the defaults for threshold t (k DEDUP_MINHASH_K_DEFAULT, h
 * DEDUP_MINHASH_H_DEFAULT, seed DEDUP_MINHASH_SEED, b x r from dedup_lsh_optimal() with
 * the default weights). DEDUP_EINVAL for t outside (0, 1]. */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_params_default(double t, struct dedup_lsh_params *p);
/* DEDUP_OK when p is a valid set of parameters, else DEDUP_EINVAL. */
enum dedup_code dedup_lsh_params_check(const struct dedup_lsh_params *p);

#define DEDUP_LSH_MAX_DOCS 0xfffffff0u          /* cap on documents of one LSH index */
#define DEDUP_LSH_MAX_PAIRS ((uint64_t)1 << 30) /* cap on pairs listed by one call */

/* opaque: signatures, ids, one bucket table per band. Not thread-safe: a query marks the
 * candidates it has seen in the index (a stamp per document), so queries and adds on one
 * index need the caller's lock (as dedup_index does); dedup_minhash objects are
 * immutable and may be shared. */
struct dedup_lsh;

/* A new empty index with parameters p (copied); *out: caller frees with dedup_lsh_free().
 * DEDUP_EINVAL (bad parameters), DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_new(const struct dedup_lsh_params *p,
                                                struct dedup_lsh **out);
void dedup_lsh_free(struct dedup_lsh *l); /* NULL-safe */
const struct dedup_lsh_params *dedup_lsh_get_params(const struct dedup_lsh *l);
/* The hasher of l's parameters (borrowed: valid until dedup_lsh_free(l)). */
const struct dedup_minhash *dedup_lsh_minhash(const struct dedup_lsh *l);
uint32_t dedup_lsh_doc_count(const struct dedup_lsh *l);
/* Id of doc, NUL-terminated (*len may be NULL). Borrowed: valid until the next add. */
const char *dedup_lsh_id(const struct dedup_lsh *l, uint32_t doc, size_t *len);
/* Signature of doc (h values). Borrowed: valid until the next add. */
const uint32_t *dedup_lsh_signature(const struct dedup_lsh *l, uint32_t doc);

/*
 * Adds a document: its signature sig[0..h) (copied) and id[0..id_len) (copied; no NUL
 * inside). *doc (may be NULL) receives its number (0, 1, 2, ... in the order of adding).
 * DEDUP_ETOOLARGE (DEDUP_LSH_MAX_DOCS, or an id over DEDUP_INDEX_MAX_ID_BYTES),
 * DEDUP_EINVAL (NUL in the id), DEDUP_ENOMEM. On error l is unchanged.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_add(struct dedup_lsh *l, const uint32_t *sig,
                                                const char *id, size_t id_len, uint32_t *doc);

struct dedup_lsh_match {
    uint32_t doc;
    double jaccard; /* the signatures' estimate */
};
/* A growing list of matches; zero-initialise, release with dedup_lsh_matches_release(). */
struct dedup_lsh_matches {
    struct dedup_lsh_match *v;
    size_t n, cap;
};
void dedup_lsh_matches_release(struct dedup_lsh_matches *m);

/*
 * The indexed documents that share a band with sig and whose estimate is >= threshold,
 * most similar first (ties: lower document number), at most limit of them (0: all),
 * replacing the contents of out. *candidates (may be NULL): documents that shared a band.
 * DEDUP_EINVAL (threshold outside [0, 1]), DEDUP_ENOMEM.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_query(struct dedup_lsh *l, const uint32_t *sig,
                                                  double threshold, size_t limit,
                                                  struct dedup_lsh_matches *out,
                                                  size_t *candidates);

/*
 * Every pair of documents a < b with b >= min_b that share a band and whose estimate is
 * >= threshold, each pair once, in increasing (a, b) order: fn(userdata, a, b, jaccard);
 * a non-zero return stops and is passed back in *stopped (may be NULL). *candidates (may
 * be NULL): distinct candidate pairs verified. DEDUP_ETOOLARGE (over DEDUP_LSH_MAX_PAIRS),
 * DEDUP_ENOMEM, DEDUP_EINVAL.
 */
typedef int (*dedup_lsh_pair_fn)(void *userdata, uint32_t a, uint32_t b, double jaccard);
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_pairs(struct dedup_lsh *l, double threshold,
                                                  uint32_t min_b, dedup_lsh_pair_fn fn,
                                                  void *userdata, int *stopped,
                                                  uint64_t *candidates);

/* The threads dedup_lsh_pairs() and dedup_lsh_clusters() scan the bands with (0 or 1:
 * the caller's alone; capped at 16). The same pairs in the same order whatever it is. */
void dedup_lsh_set_threads(struct dedup_lsh *l, unsigned threads);

/* Clusters (connected components of the pairs of dedup_lsh_pairs()), with the same
 * ordering rules as dedup_index_clusters(). Caller frees with dedup_clusters_free(). */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_clusters(struct dedup_lsh *l, double threshold,
                                                     struct dedup_clusters **out);

/* Buckets of the band tables, for `index stats`. */
struct dedup_lsh_stats {
    uint64_t docs;
    uint64_t buckets;    /* distinct (band, key) buckets */
    uint64_t bucket_max; /* documents in the largest bucket */
    uint64_t shared;     /* buckets holding 2 or more documents */
    uint64_t bytes;      /* signatures, ids and tables in memory */
};
void dedup_lsh_stats(const struct dedup_lsh *l, struct dedup_lsh_stats *st);

/* The site template table saved with the index (as dedup_index_templates()): borrowed,
 * made empty on first use (NULL only when out of memory); set takes ownership. */
struct dedup_templates *dedup_lsh_templates(struct dedup_lsh *l);
void dedup_lsh_set_templates(struct dedup_lsh *l, struct dedup_templates *t);
/* Hands l's template table over to the caller (caller frees with dedup_templates_free();
 * NULL when l has none); l has none afterwards. Moving the table to a rebuilt index. */
struct dedup_templates *dedup_lsh_take_templates(struct dedup_lsh *l);

/* The generation `simcrawl dedup --index FILE` gives the pair FILE + FILE.digests (as
 * dedup_index_pair_generation() for a simhash index; 0: none), saved in the file
 * (docs/MINHASH.md, offset 80) and kept by every save. */
uint64_t dedup_lsh_pair_generation(const struct dedup_lsh *l);
void dedup_lsh_set_pair_generation(struct dedup_lsh *l, uint64_t gen);

/* ==== the MinHash index file (docs/MINHASH.md, "Index file") ==== */
#define DEDUP_LSH_MAGIC "SIMCRMHX"
#define DEDUP_LSH_FORMAT_VERSION 1u

/* Which method an index file holds, from its first 8 bytes (len >= 8): */
enum dedup_method { DEDUP_METHOD_UNKNOWN = 0, DEDUP_METHOD_SIMHASH, DEDUP_METHOD_MINHASH };
enum dedup_method dedup_file_method(const void *head, size_t len);

/* Writes l to path atomically (path.tmp.PID, fsync, rename, fsync of the directory).
 * DEDUP_EIO (err->os_error), DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_save(struct dedup_lsh *l, const char *path,
                                                 struct dedup_file_error *err);
/* Reads and validates path; *out: caller frees with dedup_lsh_free(). DEDUP_EIO,
 * DEDUP_EFORMAT (not a MinHash index, a field out of range: err->offset, err->what),
 * DEDUP_EVERSION, DEDUP_ETRUNCATED, DEDUP_ECHECKSUM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_load(const char *path, struct dedup_lsh **out,
                                                 struct dedup_file_error *err);
/* The same from memory data[0..len) (copied). flags: DEDUP_INDEX_LOAD_NO_CHECKSUM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_load_mem(const void *data, size_t len, unsigned flags,
                                                     struct dedup_lsh **out,
                                                     struct dedup_file_error *err);
/* The serialised file in a new buffer *out of *len bytes (caller frees with free()). */
DEDUP_WARN_UNUSED enum dedup_code dedup_lsh_serialize(struct dedup_lsh *l, uint8_t **out,
                                                      size_t *len);

#endif

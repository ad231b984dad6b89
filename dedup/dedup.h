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
    DEDUP_EVERSION,   /* an index file of another format version */
    DEDUP_ETRUNCATED, /* a file shorter than its header says */
    DEDUP_ECHECKSUM,  /* a file whose checksum does not match its contents */
    DEDUP_ELOCKED,    /* another writer holds the index file's lock (waited lock_wait) */
};

/* A short lower-case description of code, e.g. "too little text to fingerprint". */
const char *dedup_strerror(enum dedup_code code);

/*
 * Return conventions, one for all of dedup/ (this header, minhash.h, worddiff.h and the
 * internal dedup_int.h and index_int.h):
 *  - a call that can fail returns enum dedup_code (DEDUP_WARN_UNUSED) and gives its
 *    results through out-parameters;
 *  - "found or not" is an int *found out-flag beside DEDUP_OK (dedup_index_nearest), never
 *    a return value of its own;
 *  - a call that cannot fail returns its value: a count, a hash or fingerprint, a
 *    similarity, a borrowed pointer, the buffer it wrote (dedup_fingerprint_format), or an
 *    int 1/0 for a yes/no question;
 *  - x_new() of an object made without arguments returns it, NULL when out of memory (and
 *    so do the tables made on first use: dedup_index_templates);
 *  - a callback's non-zero return stops the walk and comes back in *stopped
 *    (dedup_index_pairs) or as the result of the feeding call (dedup_fplist_feed, which
 *    cannot fail otherwise);
 *  - errno never crosses: a failed system call is DEDUP_EIO, its errno in
 *    dedup_file_error.os_error or an int *os_error (dedup_fsync_dir).
 */

/* Where a parsed file went wrong (IDF file, index file): 1-based line (0 when not
 * line-based), byte offset, and a static lower-case description. */
struct dedup_parse_error {
    size_t line;
    size_t offset;
    const char *what; /* static string, never freed; "" when none */
};

/* ==== features and the simhash ==== */
/*
 * docs/FINGERPRINT.md (version 12) is the specification. In short: the input is the token
 * string of extract_tokens() (tokens separated by exactly one space); the features are
 * its words and its pairs of consecutive words ("w1 w2", the space included), hashed with
 * XXH3_64bits_withSeed(DEDUP_SEED); each distinct one weighs
 * round(256 * min(tf, c)^(7/8) [* idf]), c = floor(sqrt(number of distinct features))
 * within [1, 64];
 * bit i of the simhash is 1 iff the weighted sum of +w (bit i of the hash set) / -w (clear)
 * is > 0. Bit 0 is the least significant bit; printed as 16 lower-case hex digits.
 * (Why words + pairs and this cap: the measurements in docs/FINGERPRINT.md sections 3
 * and 5.)
 */
#define DEDUP_FINGERPRINT_VERSION 12
#define DEDUP_TF_CAP 64u /* a shingle counts at most 64 times (FINGERPRINT.md section 5) */
#define DEDUP_SEED 0x73696d6372617731ull /* "simcraw1" in ASCII */
#define DEDUP_WEIGHT_ONE 256u            /* fixed-point 1.0 of a weight */
#define DEDUP_MIN_TOKENS 5u              /* default minimum: 5 tokens (words) */
#define DEDUP_SHORT_TOKENS                                                                         \
    80u /* fewer tokens: the fingerprint is the hash of the token                                  \
         * string, near-duplicate only of the same text (s. 4) */
#define DEDUP_SHORT_SEED 0x73696d7368727431ull  /* "simshrt1" in ASCII */
#define DEDUP_NAME_SEED 0x73696d6e616d6531ull   /* "simname1" in ASCII */
#define DEDUP_SYMBOL_SEED 0x73696d73796d6231ull /* "simsymb1" in ASCII */
#define DEDUP_NAME_MAX_TOKENS 32u /* a longer heading names nothing (FINGERPRINT.md s. 6) */
#define DEDUP_DEFAULT_MAX_TOKENS (1u << 22) /* default cap on tokens per document */
#define DEDUP_IDF_MAX_ENTRIES (1u << 24)    /* cap on shingles in an IDF table */

struct dedup_features; /* opaque: the weighted distinct shingles of one document */
struct dedup_idf;      /* opaque: document frequencies of shingles over a corpus */

/* Options; zero-initialise and set what you need (0 means the default). */
struct dedup_opts {
    const struct dedup_idf *idf; /* borrowed, or NULL: weights without IDF */
    size_t min_tokens;           /* fewer -> DEDUP_ETOOSHORT; default DEDUP_MIN_TOKENS */
    size_t max_tokens;           /* more -> DEDUP_ETOOLARGE; default DEDUP_DEFAULT_MAX_TOKENS */
    size_t text_tokens;          /* the tokens of the text this token string stands for, when
                                  * more (a study that leaves a page's repeated blocks out:
                                  * docs/BENCHMARKS.md, "Blocks repeated within a page
                                  * (rep11p)"); min_tokens and the short-text bound apply to
                                  * it. 0: the token string's own */
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

/* The fingerprint of f: its 64-bit simhash (0 for an empty set), or, for a text of fewer
 * than DEDUP_SHORT_TOKENS tokens, the hash of its token string (docs/FINGERPRINT.md
 * section 4). Pure; fast. */
uint64_t dedup_simhash(const struct dedup_features *f);

/* The hash of a page's name (docs/FINGERPRINT.md section 6, "The page's name"), which
 * the page's fingerprint is XORed with, so that two pages of different names are never
 * near-duplicates: tokens (n_tokens, as extract_name_tokens() gives them: its symbols
 * and operators in, version 10) are the token string of the page's own heading
 * (extract_doc_heading()), or of a headless page's <title> (dedup_title_tokens(), version
 * 12); XXH3_64bits_withSeed(tokens, len,
 * DEDUP_NAME_SEED) when 1 <= n_tokens <= DEDUP_NAME_MAX_TOKENS, else 0 (no name). */
uint64_t dedup_name_hash(const char *tokens, size_t len, size_t n_tokens);

/* The key of a text's symbols (docs/FINGERPRINT.md section 4, "A short text's symbols",
 * version 11), which the fingerprint of a page keyed on its token string (a short text, a
 * stub) is XORed with, so that two such texts that differ only in their symbols (`<<<x>>>!`
 * and `x.`) are two pages: sym (sym_len bytes) is the text's token string with its
 * symbols (extract_name_tokens() over the whole text), tokens (len) its token string
 * (extract_tokens()); XXH3_64bits_withSeed(sym, sym_len, DEDUP_SYMBOL_SEED) when the two
 * differ, else 0 (a text without symbols: its fingerprint is version 10's). Pure. */
uint64_t dedup_symbol_key(const char *sym, size_t sym_len, const char *tokens, size_t len);

/* The name of a page without a heading of its own is its <title>'s (docs/FINGERPRINT.md
 * section 6, "A page without a heading", version 12): the title's token string
 * (extract_name_tokens(), its label left out) without the tokens that hold an ASCII digit,
 * which are the site's release ("Python 3.11 documentation", "Node.js v18"), a build date
 * or a counter, not the page's name. Drops those tokens from tokens[0..len) in place and
 * returns the new length; *n_tokens is how many are left (0: no name). Pure. */
size_t dedup_title_tokens(char *tokens, size_t len, size_t *n_tokens);

/* The length of the label that opens a heading (docs/FINGERPRINT.md section 6, "A
 * heading's label"), which the page's name leaves out: a generated number that changes
 * when a manual's chapters are renumbered ("Chapter 13. ", "Appendix B. ", "Part IV. ",
 * "8.3. ", "F.1. ", "13.2 "); 0 when the heading has none, or nothing but the label.
 * heading is len bytes of UTF-8 (extract_doc_heading()); pure. */
size_t dedup_name_label(const char *heading, size_t len);

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
/* Parses exactly 16 hex digits (either case) into *out. DEDUP_EFORMAT otherwise. */
DEDUP_WARN_UNUSED enum dedup_code dedup_fingerprint_parse(const char *s, size_t len, uint64_t *out);

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

/* ==== site templates (docs/FINGERPRINT.md, "Template blocks") ==== */
/*
 * Text blocks that repeat on many pages of one host (or one collection of files) are the
 * site's template, whatever their markup (Bar-Yossef and Rajagopalan, "Template detection
 * via data mining and its applications", WWW 2002; Yi, Liu and Li, KDD 2003). A table
 * counts, per host key (any bytes: a host name, or "" for a collection of files), how many
 * distinct documents contain each block, where a block is the token string of one line
 * ("\n" separated) of the main text: a paragraph, a heading, a list item, one line of a
 * code listing and its key is
 *     dedup_template_block_hash(tokens) = XXH3_64bits_withSeed(tokens, DEDUP_TEMPLATE_SEED)
 * (0 is replaced by 1: 0 marks an empty slot). A block is TEMPLATE for a host when its
 * count is >= DEDUP_TEMPLATE_MIN_DOCS and >= DEDUP_TEMPLATE_MIN_SHARE percent of the
 * documents counted for the host. The fingerprint leaves template blocks out.
 *
 * Bounded and deterministic: at most DEDUP_TEMPLATE_HOST_MAX_ENTRIES blocks per host,
 * DEDUP_TEMPLATE_MAX_ENTRIES in all and DEDUP_TEMPLATE_MAX_HOSTS hosts. A host whose table
 * is full drops its blocks with the lowest counts (count 1 first, then 2, ... until at most
 * half the cap is left: lossy counting); at the total cap all hosts do the same until at
 * most half the total cap is left; at the host cap the host with the fewest documents
 * (ties: the smallest key) is dropped.
 * The same calls in the same order give the same table, byte for byte (HOW IT WORKS in
 * dedup/template.c). Not thread-safe: the caller locks.
 */
#define DEDUP_TEMPLATE_SEED 0x73696d74706c3031ull /* "simtpl01" in ASCII */
#define DEDUP_TEMPLATE_MIN_DOCS 3u                /* a template block is on >= 3 documents */
#define DEDUP_TEMPLATE_MIN_SHARE 20u              /* ... and on >= 20% of the host's */
#define DEDUP_TEMPLATE_MIN_TOKENS                                                                  \
    6u                                         /* a run of template blocks is left out             \
                                                * when it has >= 6 tokens */
#define DEDUP_TEMPLATE_HOST_MAX_ENTRIES 65536u /* cap on blocks counted per host */
#define DEDUP_TEMPLATE_MAX_ENTRIES (1u << 21)  /* cap on blocks counted in all */
#define DEDUP_TEMPLATE_MAX_HOSTS 65536u        /* cap on hosts */
#define DEDUP_TEMPLATE_MAX_KEY 255u            /* cap on a host key, in bytes */
#define DEDUP_TEMPLATE_MAX_SEEN (1u << 20)     /* exact-duplicate documents remembered */
/* A stream counts the blocks of a page it drops as a near-duplicate too while the page's
 * host has fewer documents counted than this (docs/FINGERPRINT.md, "Where T comes from":
 * a young host's menu must reach 3 counted pages even when the pages under it are
 * dropped). 0: never. A -D at build time overrides it (the measurements of
 * docs/BENCHMARKS.md, "counting near-duplicates"). */
#ifndef DEDUP_TEMPLATE_YOUNG_DOCS
#define DEDUP_TEMPLATE_YOUNG_DOCS 16u
#endif

struct dedup_templates; /* opaque */

/* The key of a block: its token string tokens[0..len) (need not be NUL-terminated). */
uint64_t dedup_template_block_hash(const char *tokens, size_t len);

/* A new empty table; caller frees with dedup_templates_free(). NULL when out of memory. */
struct dedup_templates *dedup_templates_new(void);
void dedup_templates_free(struct dedup_templates *t); /* NULL-safe */

/*
 * Counts one document of host key host[0..host_len) (at most DEDUP_TEMPLATE_MAX_KEY bytes,
 * else DEDUP_EINVAL) whose blocks have the keys blocks[0..n) (repeats count once). doc is a
 * hash of the document's whole token string: a document whose (host, doc) was counted
 * before is not counted again (*counted = 0), so that an exact copy of a page (a mirror)
 * never makes its own text a template; 0 means "do not check". Up to
 * DEDUP_TEMPLATE_MAX_SEEN (host, doc) pairs are remembered, then the memory of them starts
 * again empty (in memory only; not saved).
 * *counted (may be NULL) is 1 when the document was counted.
 * DEDUP_ENOMEM leaves t unchanged (every allocation comes first: dedup_templates_reserve()).
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_templates_add_doc(struct dedup_templates *t,
                                                          const char *host, size_t host_len,
                                                          uint64_t doc, const uint64_t *blocks,
                                                          size_t n, int *counted);
/*
 * dedup_templates_add_doc() for a page a stream dropped as a near-duplicate
 * (filter/decide.h, FILTER_DECIDE_LEARN_NEAR): counted as a document is, and remembered in
 * the host's table by an entry of its own (a key no block has, count 1: saved with the
 * table, never a template), so that the same near-duplicate fed again, after a restart too,
 * counts once. *counted (may be NULL) 1 when counted. DEDUP_ENOMEM leaves t unchanged.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_templates_add_near(struct dedup_templates *t,
                                                           const char *host, size_t host_len,
                                                           uint64_t doc, const uint64_t *blocks,
                                                           size_t n, int *counted);
/*
 * Whether dedup_templates_add_near() would count a document of host with whole-text hash
 * doc now: 1, or 0 when (host, doc) was counted before (an exact copy, or a near-duplicate
 * counted; doc 0 is never one). Changes nothing. */
int dedup_templates_would_count(const struct dedup_templates *t, const char *host, size_t host_len,
                                uint64_t doc);
/*
 * Makes room for counting one document of host host[0..host_len) with at most n blocks:
 * after DEDUP_OK, the next dedup_templates_add_doc() of that host with at most n blocks
 * allocates nothing and cannot fail with DEDUP_ENOMEM. Only capacity grows: what t counts
 * does not change (the same serialised bytes). DEDUP_EINVAL as dedup_templates_add_doc();
 * DEDUP_ENOMEM (t unchanged). A caller that adds a page to an index and counts its blocks
 * reserves before the add, so that both happen or neither (filter/decide.c).
 */
DEDUP_WARN_UNUSED enum dedup_code
dedup_templates_reserve(struct dedup_templates *t, const char *host, size_t host_len, size_t n);
/*
 * The template blocks of one page of host: blocks[0..n) are its blocks in text order and
 * n_tokens[i] their token counts. A block is a candidate when its count passes the two
 * thresholds above; a maximal run of consecutive candidates is left out (is_template[i] =
 * 1 for each of its blocks) when it holds at least DEDUP_TEMPLATE_MIN_TOKENS tokens, so a
 * short heading that many pages share ("Introduction", "Parameters") stays, while a menu,
 * a footer, or a menu cut into one-word blocks goes. Returns how many blocks are left out.
 * A host never counted has none. t may be NULL (none).
 */
size_t dedup_templates_mark(const struct dedup_templates *t, const char *host, size_t host_len,
                            const uint64_t *blocks, const uint32_t *n_tokens, size_t n,
                            unsigned char *is_template);

/* The same rule over counts kept elsewhere (a table shared by several processes, in Redis:
 * filter/redisidx.h): docs documents counted for the host, counts[i] the count of
 * blocks[i] (0 when absent). */
size_t dedup_templates_mark_counts(uint64_t docs, const uint32_t *counts, const uint32_t *n_tokens,
                                   size_t n, unsigned char *is_template);

/* Counts: hosts, block entries in all, documents counted for host (0 when unknown), and
 * the count of one block of host (0 when absent). For stats and tests. */
size_t dedup_templates_host_count(const struct dedup_templates *t);
size_t dedup_templates_entry_count(const struct dedup_templates *t);
uint64_t dedup_templates_docs(const struct dedup_templates *t, const char *host, size_t host_len);
uint32_t dedup_templates_block_count(const struct dedup_templates *t, const char *host,
                                     size_t host_len, uint64_t block);
/* Template blocks of all hosts (what dedup_templates_mark() would mark). */
size_t dedup_templates_template_count(const struct dedup_templates *t);

/*
 * The serialised table (the template section of docs/INDEX-FORMAT.md):
 * dedup_templates_serialize() writes it to a new buffer *out of *len bytes (a multiple of
 * 8; caller frees with free()); dedup_templates_parse() checks data[0..len) and builds a
 * new table (caller frees), or returns DEDUP_EFORMAT / DEDUP_ETOOLARGE with err->offset
 * (relative to data) and err->what. Equal tables serialise to equal bytes.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_templates_serialize(const struct dedup_templates *t,
                                                            uint8_t **out, size_t *len);
DEDUP_WARN_UNUSED enum dedup_code dedup_templates_parse(const uint8_t *data, size_t len,
                                                        struct dedup_templates **out,
                                                        struct dedup_parse_error *err);

/* ==== the index, pairs, clusters ==== */
/*
 * The block-permuted table index of Manku, Jain and Das Sarma (WWW 2007, section 3); the
 * HOW IT WORKS comment in dedup/index.c explains the designs. Exact for every k in
 * 0..DEDUP_K_MAX: a query returns precisely the indexed documents within Hamming distance
 * k, each once; dedup_index_pairs() returns every pair within k once.
 *
 * Documents are numbered 0, 1, 2, ... in the order they were added (input order); each has
 * a fingerprint and an id string. Identical fingerprints are stored once in the tables
 * (their documents form a list), so empty or boilerplate-only pages cost one slot.
 * An index is not thread-safe: queries absorb pending adds, so they mutate it too.
 */
#define DEDUP_K_MAX 7 /* largest supported Hamming distance */
#define DEDUP_K_DEFAULT 3
#define DEDUP_MAX_TABLES 64                          /* cap on tables of a design */
#define DEDUP_INDEX_MAX_DOCS 0xfffffff0u             /* cap on documents in one index */
#define DEDUP_INDEX_MAX_ID_BYTES 65536u              /* cap on one id, in bytes */
#define DEDUP_INDEX_MAX_QUERY_MATCHES (1u << 26)     /* cap on matches of one query */
#define DEDUP_PAIRS_MAX_DISTINCT ((uint64_t)1 << 30) /* cap on distinct-fingerprint pairs */

/* A table design: `levels` (1 or 2) rounds of splitting into blocks[level] blocks, each
 * table keyed on (blocks - k) blocks of each level; tables = prod C(blocks[l], k). */
struct dedup_design {
    unsigned k;
    unsigned levels;
    unsigned blocks[2];
    unsigned tables;
    unsigned key_bits_min, key_bits_max; /* leading bits a probe must match exactly */
};

/* The design for k and about n fingerprints (the HOW IT WORKS cost model), or with
 * tables != 0 the design with exactly that many tables (of those, the longest keys).
 * DEDUP_EINVAL: k > DEDUP_K_MAX, or no design for k has that many tables. */
DEDUP_WARN_UNUSED enum dedup_code dedup_design_choose(unsigned k, uint64_t n, unsigned tables,
                                                      struct dedup_design *out);
/* Writes e.g. "10 tables: 5 blocks of 13,13,13,13,12 bits, key 25-26 bits" (NUL-terminated,
 * truncated to len). Returns buf. */
char *dedup_design_describe(const struct dedup_design *d, char *buf, size_t len);
/* The key bits of each table of design d, in the original bit order: masks[t] for t <
 * d->tables. Two fingerprints within d->k agree on every key bit of at least one table
 * (what an index kept elsewhere, such as filter/redisidx.c's buckets, is keyed on).
 * DEDUP_OK, DEDUP_EINVAL (an invalid shape), DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_design_keymasks(const struct dedup_design *d,
                                                        uint64_t masks[DEDUP_MAX_TABLES]);

struct dedup_index; /* opaque */

/* A new empty index with the shape of d (k, levels, blocks; tables and key lengths are
 * derived from it); caller frees with dedup_index_free(). DEDUP_EINVAL for an invalid
 * shape, DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_new(const struct dedup_design *d,
                                                  struct dedup_index **out);
void dedup_index_free(struct dedup_index *idx); /* NULL-safe */

/* Adds document (fp, id[0..id_len)) (id is copied; it need not be NUL-terminated and must
 * not contain NUL). *doc (may be NULL) receives its number. Ids are not checked for
 * uniqueness here (the caller decides). O(1): the tables absorb adds at the next query.
 * DEDUP_ETOOLARGE: DEDUP_INDEX_MAX_DOCS documents or an id over DEDUP_INDEX_MAX_ID_BYTES;
 * DEDUP_EINVAL: an id with a NUL byte; DEDUP_ENOMEM. On error idx is unchanged. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_add(struct dedup_index *idx, uint64_t fp,
                                                  const char *id, size_t id_len, uint32_t *doc);

/* Adds n documents at once, as n calls of dedup_index_add() would (numbers ndocs.. in
 * order): fp[i] and the id ids[start_i .. id_end[i] - 1) followed by its NUL at
 * ids[id_end[i] - 1], where start_0 = 0 and start_i = id_end[i - 1] (the ids back to back,
 * each NUL-terminated, as a reader collects them). One reservation and block copies: for
 * a batch parsed on another thread; up to `threads` threads (0 or 1: the caller only)
 * check and copy a large batch, each prefaulting its own stretch of the arrays. Same
 * errors as dedup_index_add (DEDUP_EINVAL also for id_end not increasing or an id without
 * its NUL); on error idx is unchanged. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_add_many(struct dedup_index *idx, size_t n,
                                                       const uint64_t *fp, const char *ids,
                                                       const uint64_t *id_end, unsigned threads);

/* Documents written in place by another thread: a span is a stretch of the index's own
 * arrays, from document `doc_at` and id byte `id_at` on, reserved above what the adds
 * fill, so a reader's second thread parses straight into the index (nothing is copied
 * afterwards). While a span is open, dedup_index_add() keeps below it (DEDUP_ETOOLARGE
 * rather than reach it) and the arrays do not move; one thread adds to a span
 * with dedup_index_span_add() (the same checks and errors as dedup_index_add(), and
 * DEDUP_ETOOLARGE past the span's room); no query, pairs, stats, save or
 * dedup_index_add_many() until dedup_index_span_close(). The fields are the span's own
 * (read them, do not write them). */
struct dedup_index_span {
    uint64_t *fp, *id_off; /* the index's arrays, copied when the span opened */
    uint32_t *next;
    char *ids;
    uint64_t first;             /* the span's first document number */
    uint64_t n, cap;            /* documents added, room */
    uint64_t id_from, id_len;   /* where its ids start; its id bytes so far */
    uint64_t id_cap;            /* room in id bytes */
    uint64_t pf_docs, pf_bytes; /* prefaulted ahead so far */
};

/* Opens a span of room for `docs` documents and `bytes` id bytes (each id's length + 1)
 * above room for `docs_below` more adds and `bytes_below` more id bytes: the span starts
 * at document ndocs + docs_below and id byte (the index's id bytes) + bytes_below. The
 * arrays are grown once to hold both. One span at a time. DEDUP_EINVAL (a span is open),
 * DEDUP_ETOOLARGE, DEDUP_ENOMEM; idx unchanged on error (but for the room). */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_span_open(struct dedup_index *idx,
                                                        uint64_t docs_below, uint64_t bytes_below,
                                                        uint64_t docs, uint64_t bytes,
                                                        struct dedup_index_span *s);
/* Adds a document to the span (document number s->first + s->n). */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_span_add(struct dedup_index_span *s, uint64_t fp,
                                                       const char *id, size_t id_len);
/* Closes the span: its documents become the index's next ones, numbered from the
 * index's document count, as if each had been added by dedup_index_add() after the adds
 * below it. When the adds filled the room below exactly, nothing moves; otherwise the
 * span's documents are moved down over the gap (block moves). DEDUP_ETOOLARGE when the whole would
 * pass DEDUP_INDEX_MAX_DOCS (then the span's documents are dropped); the span is closed in any
 * case. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_span_close(struct dedup_index *idx,
                                                         struct dedup_index_span *s);
/* Closes the span without taking its documents (after a failed read). */
void dedup_index_span_drop(struct dedup_index *idx, struct dedup_index_span *s);

/* Changes the design of an index that has absorbed nothing yet (every document still
 * pending: no query, pairs, stats or save since dedup_index_new()), so documents can be
 * added before their number, which the design depends on, is known. DEDUP_EINVAL for an
 * invalid shape or an index past that point, DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_set_design(struct dedup_index *idx,
                                                         const struct dedup_design *d);
/* Removes pending documents (added, not yet absorbed): docs[0..n) ascending, each once;
 * the later documents move down (document numbers change). DEDUP_EINVAL if one is not
 * pending or the list is not ascending (then nothing changed). */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_drop_pending(struct dedup_index *idx,
                                                           const uint32_t *docs, size_t n);
/* Hands idx a block from malloc() that the caller is done with and whose first `bytes`
 * bytes were written (their pages faulted in): the next compaction and all pairs take
 * their working arrays from such blocks before fresh memory, and idx frees what is left
 * after them (or in dedup_index_free). Cheaper than free() then malloc() of fresh pages
 * when large arrays end just before dedup_index_pairs(); p is the index's in any case. */
void dedup_index_give_scratch(struct dedup_index *idx, void *p, size_t bytes);
const struct dedup_design *dedup_index_design(const struct dedup_index *idx);
/* The site template table of idx (docs/FINGERPRINT.md, "Template blocks"), saved and loaded with
 * it: borrowed, valid until dedup_index_free(idx) or dedup_index_set_templates(); made empty on
 * first use (NULL only when out of memory). set: idx takes ownership of t (NULL: none) and
 * frees the table it had. */
struct dedup_templates *dedup_index_templates(struct dedup_index *idx);
void dedup_index_set_templates(struct dedup_index *idx, struct dedup_templates *t);
/* Hands idx's template table over (NULL: none made yet): caller frees it, or gives it to
 * another index with dedup_index_set_templates(); idx has none afterwards. */
struct dedup_templates *dedup_index_take_templates(struct dedup_index *idx);
/* The probe's lines (dedup/index.c, "the probe's lines"): off by default. On, an index whose
 * main holds at least 2^21 fingerprints builds them once it has answered a quarter as many
 * queries as it holds: one query reads one line a table whose address its key gives, instead
 * of a directory line and then a bucket line. Measured (docs/BENCHMARKS.md, perf19h): one
 * call a query against 10M 1.12x the rate without them at the median (0.97-1.33x), half
 * the last-level misses, for about 141 bytes more a fingerprint (1.4 GB at 10M) and 3.6-5.3
 * CPU s to build at 10M. For a long-running process with memory to spare; off, the memory
 * of lines already built is freed. Not saved: a loaded index starts with them off. */
void dedup_index_set_probe_lines(struct dedup_index *idx, int on);
/* When the lines (on) are built: for a main of at least min_fingerprints (default 2^21;
 * a main of fewer mostly fits in the caches, where the directories cost little), and only
 * while their bytes (dedup_index_probe_lines_bytes_for) are at most max_bytes (0, the
 * default: no cap); lines over the cap are not built and older lines' blocks are freed,
 * the directories serving as with the lines off. Kept when the lines are turned off and on. */
void dedup_index_set_probe_lines_limits(struct dedup_index *idx, uint64_t min_fingerprints,
                                        uint64_t max_bytes);
/* The bytes the lines take for a main of n distinct fingerprints in idx's design: a slot of
 * 8 bytes a table and 4 more (table 0's heads) for each of 8 * 2^bits + 16 slots, bits the
 * fewest with at most 0.8 fingerprints a slot (1.25-2.5 slots a fingerprint: at 10
 * tables 105-210 bytes a fingerprint, 141 at 10M: 1.41 GB). 0 when the design's keys are too short
 * for lines (the 4-table design of 16-bit keys: none are built). */
uint64_t dedup_index_probe_lines_bytes_for(const struct dedup_index *idx, uint64_t n);
/* The state of the lines, for stats: why they serve or not. */
enum dedup_lines_state {
    DEDUP_LINES_OFF = 0,    /* not turned on */
    DEDUP_LINES_BUILT,      /* built for the current main: they serve the queries */
    DEDUP_LINES_SMALL,      /* the main holds fewer than min_fingerprints */
    DEDUP_LINES_WARMING,    /* due once the main has answered a quarter as many queries
                             * as it holds */
    DEDUP_LINES_OVER_CAP,   /* need_bytes is over max_bytes: not built */
    DEDUP_LINES_SHORT_KEYS, /* the design's keys are too short for lines at this size */
};
/* A lower-case word for s: "off", "built", "small", "warming", "over-cap", "short-keys". */
const char *dedup_lines_state_name(enum dedup_lines_state s);
struct dedup_lines_info {
    int on;    /* turned on (dedup_index_set_probe_lines) */
    int built; /* lines of the current main serve the queries now */
    enum dedup_lines_state state;
    uint64_t need_bytes;       /* dedup_index_probe_lines_bytes_for the current main */
    uint64_t bytes;            /* bytes their blocks hold (built, or kept for the next build) */
    uint64_t min_fingerprints; /* dedup_index_set_probe_lines_limits */
    uint64_t max_bytes;
};
void dedup_index_probe_lines(const struct dedup_index *idx, struct dedup_lines_info *out);
/* dst's lines turned on or off, with the limits, as src's (an index rebuilt from another). */
void dedup_index_copy_probe_lines(struct dedup_index *dst, const struct dedup_index *src);
unsigned dedup_index_k(const struct dedup_index *idx); /* largest k a query may ask for */
uint32_t dedup_index_doc_count(const struct dedup_index *idx);
/* Distinct fingerprints (absorbs pending adds first; DEDUP_ENOMEM leaves them pending and
 * counts them as distinct). */
uint64_t dedup_index_distinct_count(struct dedup_index *idx);
/* Id of document doc (< doc count), NUL-terminated; *len (may be NULL) its length.
 * Borrowed: valid until the next add, load or free on idx. */
const char *dedup_index_id(const struct dedup_index *idx, uint32_t doc, size_t *len);
uint64_t dedup_index_fingerprint(const struct dedup_index *idx, uint32_t doc);

struct dedup_match {
    uint32_t doc;
    unsigned distance;
};
/* A growing list of matches; zero-initialise, release with dedup_matches_release(). */
struct dedup_matches {
    struct dedup_match *v;
    size_t n, cap;
};
void dedup_matches_release(struct dedup_matches *m);

/*
 * Every indexed document within distance k (<= dedup_index_k(idx)) of fp, each once,
 * nearest first (ties: lower document number first), replacing the contents of out.
 * DEDUP_EINVAL: k too large; DEDUP_ETOOLARGE: more than DEDUP_INDEX_MAX_QUERY_MATCHES;
 * DEDUP_ENOMEM.
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_query(struct dedup_index *idx, uint64_t fp,
                                                    unsigned k, struct dedup_matches *out);
/*
 * The nearest indexed document within k of fp (ties: the lowest document number) without
 * allocating per query: *found = 1 with *doc and *distance set, or *found = 0 when there
 * is none. DEDUP_EINVAL: k too large; DEDUP_ENOMEM absorbing pending adds (*found 0).
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_nearest(struct dedup_index *idx, uint64_t fp,
                                                      unsigned k, uint32_t *doc, unsigned *distance,
                                                      int *found);

/*
 * The same for n fingerprints at once: the answers of dedup_index_nearest() for each fp[i]
 * in found[i] (1/0), doc[i] and distance[i] (0 when not found). The probes of later
 * fingerprints are started while earlier ones are scanned, so a batch answers faster than
 * one call a fingerprint. DEDUP_EINVAL: k too large; DEDUP_ENOMEM (all found[i] 0).
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_nearest_many(struct dedup_index *idx, size_t n,
                                                           const uint64_t *fp, unsigned k,
                                                           uint32_t *doc, unsigned *distance,
                                                           unsigned char *found);
/*
 * dedup_index_query() for n fingerprints at once, pipelined as dedup_index_nearest_many():
 * fn(userdata, i, rc, m) for i = 0..n-1 in order, with m the matches of fp[i] nearest
 * first (borrowed during the call), or rc DEDUP_ETOOLARGE / DEDUP_ENOMEM and no matches
 * when that query failed (the others still run). A non-zero return of fn stops and is
 * passed back in *stopped (may be NULL). DEDUP_EINVAL: k too large; DEDUP_ENOMEM
 * absorbing pending adds (fn not called).
 */
typedef int (*dedup_query_fn)(void *userdata, size_t i, enum dedup_code rc,
                              const struct dedup_matches *m);
DEDUP_WARN_UNUSED enum dedup_code dedup_index_query_many(struct dedup_index *idx, size_t n,
                                                         const uint64_t *fp, unsigned k,
                                                         dedup_query_fn fn, void *userdata,
                                                         int *stopped);

/*
 * Every pair of documents (a < b) within distance k (<= dedup_index_k(idx)) with
 * b >= min_b, each once, in increasing (a, b) order: fn(userdata, a, b, distance) for each;
 * a non-zero return from fn stops and is passed back in *stopped (may be NULL).
 * Uses up to `threads` threads (0 or 1: the calling thread only).
 * DEDUP_ENOMEM, DEDUP_ETOOLARGE (over DEDUP_PAIRS_MAX_DISTINCT distinct pairs), DEDUP_EINVAL.
 */
typedef int (*dedup_pair_fn)(void *userdata, uint32_t a, uint32_t b, unsigned distance);
DEDUP_WARN_UNUSED enum dedup_code dedup_index_pairs(struct dedup_index *idx, unsigned k,
                                                    unsigned threads, uint32_t min_b,
                                                    dedup_pair_fn fn, void *userdata, int *stopped);
/*
 * The same pairs in the same order, handed over as one array when they are few enough to
 * hold (at most 2^24): array_fn(userdata, pairs, n) once, pairs[i] = a << 32 | b increasing
 * (the distance is dedup_distance() of the two documents' fingerprints), so the caller
 * may format them on several threads; past that, fn(userdata, a, b, distance) for each as
 * dedup_index_pairs() does. A non-zero return of either is passed back in *stopped.
 */
typedef int (*dedup_pair_array_fn)(void *userdata, const uint64_t *pairs, size_t n);
DEDUP_WARN_UNUSED enum dedup_code dedup_index_pairs_array(struct dedup_index *idx, unsigned k,
                                                          unsigned threads, uint32_t min_b,
                                                          dedup_pair_array_fn array_fn,
                                                          dedup_pair_fn fn, void *userdata,
                                                          int *stopped);

/*
 * Near-duplicate clusters: connected components (union-find) of the pairs within k, of
 * two or more documents. Deterministic: the representative is the member added first;
 * members are in document order (the representative first); clusters are ordered largest
 * first, ties by the representative's number. Caller frees with dedup_clusters_free().
 */
struct dedup_clusters; /* opaque */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_clusters(struct dedup_index *idx, unsigned k,
                                                       unsigned threads,
                                                       struct dedup_clusters **out);
void dedup_clusters_free(struct dedup_clusters *c); /* NULL-safe */
size_t dedup_clusters_count(const struct dedup_clusters *c);
size_t dedup_clusters_size(const struct dedup_clusters *c, size_t i); /* members, >= 2 */
/* Member j of cluster i (j = 0 is the representative). */
uint32_t dedup_clusters_member(const struct dedup_clusters *c, size_t i, size_t j);
uint32_t dedup_clusters_doc_total(const struct dedup_clusters *c); /* docs in all clusters */
/* Clusters of ndocs documents from given pairs (a << 32 | b, a < b), ordered as
 * dedup_index_clusters() orders them: for links found otherwise than by distance (the
 * MinHash index's LSH buckets, a crawl's duplicate_of). DEDUP_EINVAL: a document >= ndocs. */
DEDUP_WARN_UNUSED enum dedup_code dedup_clusters_from_pairs(uint32_t ndocs, const uint64_t *pairs,
                                                            size_t npairs,
                                                            struct dedup_clusters **out);

/* What dedup_index_stats() reports (bucket sizes are over every directory bucket of every
 * table; a bucket is the run of entries sharing the top dir_bits bits). */
struct dedup_index_stats {
    uint64_t docs, distinct, pending;
    unsigned tables, dir_bits;
    uint64_t bucket_min, bucket_median, bucket_p99, bucket_max;
    double candidates_per_probe; /* mean distinct entries sharing a probe's key, estimated */
    uint64_t table_bytes;        /* tables + directories */
    uint64_t doc_bytes;          /* fingerprints, lists, id offsets and id strings */
};
/* Absorbs pending adds, then fills st. DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_stats(struct dedup_index *idx,
                                                    struct dedup_index_stats *st);

/*
 * Fingerprint lists (the --fingerprints FILE of the commands): lines "HEX ID", 16 hex
 * digits, spaces or tabs, the id (the rest of the line); the escaped form of `simcrawl
 * fingerprint` ("\HEX  ID" with \n and \\ in the id) is read back; blank lines and
 * lines starting with '#' are skipped. A streaming reader: feed chunks of any size.
 */
#define DEDUP_FPLIST_LINE_MAX 65536u /* cap on one line; a longer one is reported, skipped */

struct dedup_fplist; /* opaque reader state */
/* One entry: id[0..id_len) NUL-terminated, borrowed during the call. Non-zero stops. */
typedef int (*dedup_fplist_fn)(void *userdata, uint64_t fp, const char *id, size_t id_len,
                               size_t line);
/* A malformed line (1-based number, static lower-case description); reading goes on. */
typedef void (*dedup_fplist_error_fn)(void *userdata, size_t line, const char *what);

/* A new reader; caller frees with dedup_fplist_free(). NULL when out of memory. */
struct dedup_fplist *dedup_fplist_new(void);
void dedup_fplist_free(struct dedup_fplist *p); /* NULL-safe */
/* Feeds data[0..len); calls fn per entry and err per bad line. Returns fn's non-zero. */
int dedup_fplist_feed(struct dedup_fplist *p, const char *data, size_t len, dedup_fplist_fn fn,
                      dedup_fplist_error_fn err, void *userdata);
/* The same for a writable chunk: whole lines are parsed in place (data is modified: ids
 * are unescaped and NUL-terminated where they lie), without a copy. */
int dedup_fplist_feed_inplace(struct dedup_fplist *p, char *data, size_t len, dedup_fplist_fn fn,
                              dedup_fplist_error_fn err, void *userdata);
/* The number of the line being read (1 + the newlines fed so far). */
size_t dedup_fplist_line(const struct dedup_fplist *p);
/* Ends the input (a last line without a newline). Returns fn's non-zero. */
int dedup_fplist_finish(struct dedup_fplist *p, dedup_fplist_fn fn, dedup_fplist_error_fn err,
                        void *userdata);

/* ==== the index file ==== */
/*
 * docs/INDEX-FORMAT.md (format version 5) is the specification: magic "SIMCRIDX", version,
 * little-endian fields, a header with the design, counts and XXH3-64 checksums, then the
 * sections documents, ids, fingerprint lists, tables and (optional) the site templates. Loading
 * maps the file read-only (mmap; or reads it, DEDUP_INDEX_LOAD_OWN); adding to a loaded index
 * copies what it extends. Saving writes a
 * temporary file beside the target and renames it over, so a reader never sees half a file.
 */
#define DEDUP_INDEX_MAGIC "SIMCRIDX"
#define DEDUP_INDEX_FORMAT_VERSION 5u   /* written and read: 5; 1 to 4 hold older fingerprints */
#define DEDUP_INDEX_LOAD_NO_CHECKSUM 1u /* skip the body checksum (fuzzing, tests only) */
/* For an index that answers many queries (a filter, a server): a file from 4 MiB on is read
 * into memory of its own, in huge pages, instead of mapped. The page cache maps a file in
 * 4 KiB pages, so a query's random reads miss the TLB: one call a query against a loaded
 * 10M index answered 0.43-0.77M/s mapped and 0.70-0.87M/s read (docs/BENCHMARKS.md, "A
 * loaded index in huge pages"). The price is the load: fresh memory for the whole file
 * (on this project's VM 2.4-3.3 CPU s more at 10M), where a mapping reuses the page cache,
 * so one-shot commands map. */
#define DEDUP_INDEX_LOAD_OWN 2u

/* Where loading or saving went wrong. */
struct dedup_file_error {
    uint64_t offset;  /* byte offset in the file of the field or section at fault */
    const char *what; /* static lower-case description, "" when none */
    int os_error;     /* errno of a failed system call (DEDUP_EIO), else 0 */
};

/* The pair generation (docs/INDEX-FORMAT.md, "The index and its digests"): the generation
 * of the PATH.digests file that `simcrawl dedup` saved with this index, 0 when none (a new
 * index). Other writers (index add, pairs --index)
 * load and save it unchanged, so their documents do not break the pair. */
uint64_t dedup_index_pair_generation(const struct dedup_index *idx);
void dedup_index_set_pair_generation(struct dedup_index *idx, uint64_t gen);

/*
 * Named crash points for kill tests: when the environment variable SIMCRAWL_CRASH_AT
 * equals name (or is "name:N": the Nth time the point is passed), the process kills
 * itself with SIGKILL (no cleanup, no atexit, no flush:
 * what kill -9 does). Compiled into the simcrawl binary: a getenv() per point, a handful
 * per save, so the binary that is tested is the binary that ships. libsimcrawl (.so and
 * .a) is built with DEDUP_NO_CRASH_POINTS: there it does nothing, since a library loaded
 * into another program must not read an environment variable that kills it. The names
 * are listed in docs/INDEX-FORMAT.md ("Crash points").
 */
void dedup_crash_point(const char *name);

/* fsyncs the directory that holds path, so that a rename into it survives a power cut.
 * Allocates nothing. DEDUP_EIO with *os_error (the errno value) when it cannot. */
DEDUP_WARN_UNUSED enum dedup_code dedup_fsync_dir(const char *path, int *os_error);

/* Compacts idx and writes it to path atomically (path.tmp.PID, fsync, rename, fsync of the
 * directory); the caller holds the lock (dedup_lock_acquire) for its load-add-save.
 * DEDUP_EIO (err->os_error says why), DEDUP_ENOMEM. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_save(struct dedup_index *idx, const char *path,
                                                   struct dedup_file_error *err);
/* Maps path read-only and validates it; *out: caller frees with dedup_index_free().
 * DEDUP_EIO (cannot open/map), DEDUP_EFORMAT (not an index file, or a field out of range),
 * DEDUP_EVERSION, DEDUP_ETRUNCATED, DEDUP_ECHECKSUM; err says where and what. */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_load(const char *path, unsigned flags,
                                                   struct dedup_index **out,
                                                   struct dedup_file_error *err);
/* The same from memory data[0..len): borrowed, must stay valid and unchanged until
 * dedup_index_free(*out). */
DEDUP_WARN_UNUSED enum dedup_code dedup_index_load_mem(const void *data, size_t len, unsigned flags,
                                                       struct dedup_index **out,
                                                       struct dedup_file_error *err);

/* ==== the writers' lock of an index file ==== */
/*
 * Every writer of an index file X (load, add, save: a read-modify-write) holds X's lock
 * for the whole cycle, so that two writers never both start from the same old file and
 * the second rename throws the first one's documents away. The lock is flock(2) on the
 * lock file X.lock beside X (X itself is replaced by rename at every save: a lock on it
 * would be on an inode that is no longer the index). X.lock is never deleted (why: in
 * dedup/indexlock.c). A lock never outlives its process: the kernel drops it when the
 * process ends, however it ends. Readers take no lock: a save writes a temporary file,
 * fsyncs it, renames it over X and fsyncs the directory, so a reader maps the old file or
 * the new one, never part of one. Holding the lock, a writer removes the temporary files
 * a killed writer left (X.tmp.PID, X.digests.tmp.PID, X.digests.tmp).
 */
struct dedup_lock; /* opaque: a held lock */

/* Called once when the lock is busy and the caller will wait: lock_path is the lock
 * file, holder_pid the pid its holder wrote in it (0 when unknown). */
typedef void (*dedup_lock_wait_fn)(void *userdata, const char *lock_path, long holder_pid);

/*
 * Takes the writers' lock of the index file index_path (which need not exist yet),
 * creating index_path.lock when missing. Busy: waits up to wait_ms milliseconds (0: not
 * at all), calling on_wait (may be NULL) once before it waits, then gives DEDUP_ELOCKED.
 * Once held, removes leftover temporary files of index_path (how many: *removed, may be
 * NULL). DEDUP_EIO: the lock file cannot be opened or locked (err->os_error says why);
 * DEDUP_ENOMEM. *out: release with dedup_lock_release().
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_lock_acquire(const char *index_path, unsigned long wait_ms,
                                                     dedup_lock_wait_fn on_wait, void *userdata,
                                                     struct dedup_lock **out, unsigned *removed,
                                                     struct dedup_file_error *err);
/* Releases the lock and frees l (NULL-safe). The lock file stays. */
void dedup_lock_release(struct dedup_lock *l);

#endif

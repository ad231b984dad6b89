#ifndef FILTER_PIPELINE_H
#define FILTER_PIPELINE_H
/*
 * The page pipeline, internal to libsimcrawl and shared by every command that
 * fingerprints a page (fingerprint, compare, query, index, pairs, clusters, dedup, crawl)
 * and by the filter of <simcrawl.h>: bytes -> extract_doc_parse() (main text) ->
 * extract_tokens() -> dedup_features_from_tokens() -> dedup_simhash().
 * With a template table (docs/FINGERPRINT.md, "Template blocks") the main text is tokenised block
 * by block (line by line, "\n" separated), the host's template blocks are left out and the token
 * strings of the others, joined by one space, are fingerprinted; with no template block
 * that is exactly the token string of the whole text, so the fingerprint is unchanged.
 *
 * Errors never print: they come back in struct filter_fp_result (stage, library code and
 * a lower-case message without the file name; the return conventions of filter/ are in
 * filter/decide.h), so each caller words its own diagnostic:
 *     simcrawl fingerprint: page.html: too little text to fingerprint (2 words)
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"
#include "extract/extract.h"

#define FILTER_MESSAGE_MAX 256

/* Which of blocks[0..n) (block hashes, dedup_template_block_hash(); n_tokens[i] their
 * tokens) are template blocks of host, as dedup_templates_mark(): sets is_template[i];
 * returns how many. The crawler's locks the shared table around that call. */
typedef size_t (*filter_template_mark_fn)(void *userdata, const char *host, size_t host_len,
                                          const uint64_t *blocks, const uint32_t *n_tokens,
                                          size_t n, unsigned char *is_template);

/* Options; zero-initialise and set what you need. */
struct filter_fp_opts {
    const struct dedup_templates *templates; /* borrowed: leave out host's template blocks */
    filter_template_mark_fn mark; /* or ask this (mark_userdata) which blocks are template */
    void *mark_userdata;
    const char *host;            /* host key of the page for templates; NULL = "" */
    int keep_blocks;             /* keep the page's block hashes and doc hash in the result */
    int blocks_only;             /* stop after the blocks: out->blocks, no fingerprint */
    const struct dedup_idf *idf; /* borrowed IDF table, or NULL */
    int text;                    /* input is plain UTF-8 text (no HTML parsing) */
    int keep_features;           /* keep the dedup_features in the result */
    int keep_tokens;             /* keep the token string in the result */
    int keep_doc;                /* keep the extract_doc in the result (HTML input only) */
    size_t max_bytes;            /* page size cap; 0 = 64 MiB (extract's default) */
    size_t min_tokens;           /* 0 = DEDUP_MIN_TOKENS */
    unsigned max_depth;          /* extract_opts.max_depth; 0 = EXTRACT_DEFAULT_MAX_DEPTH */
    size_t max_links;            /* extract_opts.max_links; 0 = EXTRACT_DEFAULT_MAX_LINKS */
};

/* Where the pipeline stopped. */
enum filter_fp_stage {
    FILTER_FP_DONE = 0, /* fingerprinted */
    FILTER_FP_READ,     /* reading the input (set by callers that read files) */
    FILTER_FP_EXTRACT,  /* extract_doc_parse (extract_code says why) */
    FILTER_FP_TOKENS,   /* invalid UTF-8 in --text input, or extract_tokens failed */
    FILTER_FP_DEDUP,    /* features (dedup_code says why, e.g. DEDUP_ETOOSHORT) */
};

/*
 * The outcome. Release with filter_fp_result_release() after every call, success or not
 * (it frees what the keep_* options kept; NULL members are fine).
 */
struct filter_fp_result {
    uint64_t fingerprint;             /* valid when stage == FILTER_FP_DONE */
    size_t n_tokens;                  /* tokens of the main text (also on DEDUP_ETOOSHORT) */
    size_t n_features;                /* distinct shingles */
    enum filter_fp_stage stage;       /* FILTER_FP_DONE on success */
    enum extract_code extract_code;   /* when stage == FILTER_FP_EXTRACT / FILTER_FP_TOKENS */
    enum dedup_code dedup_code;       /* when stage == FILTER_FP_DEDUP */
    char message[FILTER_MESSAGE_MAX]; /* lower-case reason when failed, "" on success */
    struct dedup_features *features;  /* keep_features: owned by the result */
    char *tokens;                     /* keep_tokens: owned by the result, NUL-terminated */
    size_t tokens_len;
    struct extract_doc *doc; /* keep_doc: owned by the result; also when the page
                              * parsed but could not be fingerprinted (its links) */
    uint64_t *blocks;        /* keep_blocks: hashes of the blocks with tokens, in
                              * text order (repeats kept), owned by the result */
    size_t n_blocks;
    uint64_t doc_hash;        /* keep_blocks: hash of the whole token string */
    size_t n_template_blocks; /* blocks left out as template */
    size_t n_template_tokens; /* their tokens (not in n_tokens) */
    uint64_t stub_hash;       /* a stub fingerprinted whole: its fingerprint, the hash of
                               * its whole token string (docs/FINGERPRINT.md); 0 otherwise */
    uint64_t name_hash;       /* the page's name, XORed into the simhash (dedup_name_hash():
                               * 0 when the page has none, and for a stub or a text) */
    unsigned truncated;       /* HTML pages: EXTRACT_CUT_* bits, what the caps cut */
    struct extract_cuts cuts; /* ... and how much (extract_doc_truncated()) */
};

/* The host key of a URL for templates: the lower-case host of "scheme://[user@]host[:port]
 * ..." (IPv6 literals with their brackets), "" when url has no such authority. Writes at
 * most DEDUP_TEMPLATE_MAX_KEY bytes and a NUL into out; returns the length. */
size_t filter_url_host_key(const char *url, char out[DEDUP_TEMPLATE_MAX_KEY + 1]);

/*
 * Fingerprints one page held in memory: html[0..len) (borrowed for the call),
 * content_type (HTTP header value for the charset, or NULL), base_url (or NULL).
 * Returns 0 when out->stage == FILTER_FP_DONE, -1 otherwise (details in out).
 * out is overwritten (not released first).
 */
int filter_fingerprint_page(const char *html, size_t len, const char *content_type,
                            const char *base_url, const struct filter_fp_opts *opts,
                            struct filter_fp_result *out) __attribute__((warn_unused_result));

/*
 * 1 when the page was read but has too little text to fingerprint: empty, no main text,
 * or fewer than the minimum of words. `simcrawl fingerprint` reports such pages on stderr
 * without failing the run (exit 0); other failures (unreadable, binary, too large) exit 2.
 */
int filter_fp_result_too_little_text(const struct filter_fp_result *out);

/* Frees what out owns and zeroes it. NULL-safe. */
void filter_fp_result_release(struct filter_fp_result *out);

#endif

#ifndef CLI_PIPELINE_H
#define CLI_PIPELINE_H
/*
 * The page pipeline shared by every command that fingerprints a page (fingerprint,
 * compare, query, index, pairs, clusters, dedup, crawl): bytes -> extract_doc_parse()
 * (main text) -> extract_tokens() -> dedup_features_from_tokens() -> dedup_simhash().
 * With a template table (docs/FINGERPRINT.md, "Template blocks") the main text is tokenised block
 * by block ("\n\n" separated), the host's template blocks are left out and the token
 * strings of the others, joined by one space, are fingerprinted; with no template block
 * that is exactly the token string of the whole text, so the fingerprint is unchanged.
 * Also the capped whole-file reader every command uses for its inputs.
 *
 * Errors never print: they come back in struct cli_fp_result (stage, library code and a
 * lower-case message without the file name), so each command words its own diagnostic:
 *     simcrawl fingerprint: page.html: too little text to fingerprint (2 words)
 * The one exception is cli_idf_load(), the --idf FILE loader of fingerprint and compare,
 * which prints its diagnostic itself under the command's name.
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"
#include "extract/extract.h"

#define CLI_READ_MAX_BYTES (64u * 1024 * 1024) /* default cap on one input file */
#define CLI_MESSAGE_MAX 256
#define CLI_IDF_MAX_BYTES (512u * 1024 * 1024) /* cap on an IDF file read by --idf */

/*
 * Reads the whole of path ("-" is standard input) into a new NUL-terminated buffer:
 * *out (caller frees with free()), *len without the NUL. max_bytes 0 means
 * CLI_READ_MAX_BYTES; a larger input is an error, never truncated.
 * Returns 0, or -1 with a lower-case reason in err[errlen] (e.g. "is a directory",
 * "No such file or directory", "larger than 67108864 bytes").
 */
int cli_read_file(const char *path, size_t max_bytes, char **out, size_t *len, char *err,
                  size_t errlen) __attribute__((warn_unused_result));

/*
 * Loads the IDF file of --idf FILE (docs/FINGERPRINT.md section 5; "-" is standard input,
 * read up to CLI_IDF_MAX_BYTES) for `simcrawl cmd`. Returns a new table (caller frees with
 * dedup_idf_free()), or NULL after printing the reason on stderr with cli_error(cmd, ...):
 *     simcrawl compare: cannot read idf file FILE: No such file or directory
 *     simcrawl compare: FILE:3: <what is wrong on line 3>
 */
struct dedup_idf *cli_idf_load(const char *cmd, const char *path);

/* Which of blocks[0..n) (block hashes, dedup_template_block_hash(); n_tokens[i] their
 * tokens) are template blocks of host, as dedup_templates_mark(): sets is_template[i];
 * returns how many. The crawler's locks the shared table around that call. */
typedef size_t (*cli_template_mark_fn)(void *userdata, const char *host, size_t host_len,
                                       const uint64_t *blocks, const uint32_t *n_tokens,
                                       size_t n, unsigned char *is_template);

/* Options; zero-initialise and set what you need. */
struct cli_fp_opts {
    const struct dedup_templates *templates; /* borrowed: leave out host's template blocks */
    cli_template_mark_fn mark;   /* or ask this (mark_userdata) which blocks are template */
    void *mark_userdata;
    const char *host;            /* host key of the page for templates; NULL = "" */
    int keep_blocks;             /* keep the page's block hashes and doc hash in the result */
    int blocks_only;             /* stop after the blocks: out->blocks, no fingerprint */
    const struct dedup_idf *idf; /* borrowed IDF table, or NULL */
    int text;                    /* input is plain UTF-8 text (no HTML parsing) */
    int keep_features;           /* keep the dedup_features in the result */
    int keep_tokens;             /* keep the token string in the result */
    int keep_doc;                /* keep the extract_doc in the result (HTML input only) */
    size_t max_bytes;            /* cli_fingerprint_file: read cap; 0 = CLI_READ_MAX_BYTES */
    size_t min_tokens;           /* 0 = DEDUP_MIN_TOKENS */
    unsigned max_depth;          /* extract_opts.max_depth; 0 = EXTRACT_DEFAULT_MAX_DEPTH */
    size_t max_links;            /* extract_opts.max_links; 0 = EXTRACT_DEFAULT_MAX_LINKS */
};

/* Where the pipeline stopped. */
enum cli_fp_stage {
    CLI_FP_DONE = 0, /* fingerprinted */
    CLI_FP_READ,     /* reading the file */
    CLI_FP_EXTRACT,  /* extract_doc_parse (extract_code says why) */
    CLI_FP_TOKENS,   /* invalid UTF-8 in --text input, or extract_tokens failed */
    CLI_FP_DEDUP,    /* features (dedup_code says why, e.g. DEDUP_ETOOSHORT) */
};

/*
 * The outcome. Release with cli_fp_result_release() after every call, success or not
 * (it frees what the keep_* options kept; NULL members are fine).
 */
struct cli_fp_result {
    uint64_t fingerprint;            /* valid when stage == CLI_FP_DONE */
    size_t n_tokens;                 /* tokens of the main text (also on DEDUP_ETOOSHORT) */
    size_t n_features;               /* distinct shingles */
    enum cli_fp_stage stage;         /* CLI_FP_DONE on success */
    enum extract_code extract_code;  /* when stage == CLI_FP_EXTRACT / CLI_FP_TOKENS */
    enum dedup_code dedup_code;      /* when stage == CLI_FP_DEDUP */
    char message[CLI_MESSAGE_MAX];   /* lower-case reason when failed, "" on success */
    struct dedup_features *features; /* keep_features: owned by the result */
    char *tokens;                    /* keep_tokens: owned by the result, NUL-terminated */
    size_t tokens_len;
    struct extract_doc *doc;         /* keep_doc: owned by the result; also when the page
                                      * parsed but could not be fingerprinted (its links) */
    uint64_t *blocks;                /* keep_blocks: hashes of the blocks with tokens, in
                                      * text order (repeats kept), owned by the result */
    size_t n_blocks;
    uint64_t doc_hash;               /* keep_blocks: hash of the whole token string */
    size_t n_template_blocks;        /* blocks left out as template */
    size_t n_template_tokens;        /* their tokens (not in n_tokens) */
    unsigned truncated;              /* HTML pages: EXTRACT_CUT_* bits, what the caps cut */
    struct extract_cuts cuts;        /* ... and how much (extract_doc_truncated()) */
};

/* The host key of a URL for templates: the lower-case host of "scheme://[user@]host[:port]
 * ..." (IPv6 literals with their brackets), "" when url has no such authority. Writes at
 * most DEDUP_TEMPLATE_MAX_KEY bytes and a NUL into out; returns the length. */
size_t cli_url_host_key(const char *url, char out[DEDUP_TEMPLATE_MAX_KEY + 1]);

/*
 * Fingerprints one page held in memory: html[0..len) (borrowed for the call),
 * content_type (HTTP header value for the charset, or NULL), base_url (or NULL).
 * Returns 0 when out->stage == CLI_FP_DONE, -1 otherwise (details in out).
 * out is overwritten (not released first).
 */
int cli_fingerprint_page(const char *html, size_t len, const char *content_type,
                         const char *base_url, const struct cli_fp_opts *opts,
                         struct cli_fp_result *out) __attribute__((warn_unused_result));

/* Reads path ("-" = stdin) with cli_read_file() and fingerprints it; as above. */
int cli_fingerprint_file(const char *path, const struct cli_fp_opts *opts,
                         struct cli_fp_result *out) __attribute__((warn_unused_result));

/*
 * 1 when the page was read but has too little text to fingerprint: empty, no main text,
 * or fewer than the minimum of words. `simcrawl fingerprint` reports such pages on stderr
 * without failing the run (exit 0); other failures (unreadable, binary, too large) exit 2.
 */
int cli_fp_result_too_little_text(const struct cli_fp_result *out);

/* Frees what out owns and zeroes it. NULL-safe. */
void cli_fp_result_release(struct cli_fp_result *out);

/*
 * The extractor's caps as options (README, "Caps"): --max-links N and --max-depth N
 * (--max-nesting N in crawl, whose --max-depth is the link depth).
 */
#define CLI_MAX_LINKS_LIMIT 100000000L /* --max-links N: 1..this */

/* Parses the value of --max-links (1..CLI_MAX_LINKS_LIMIT) or --max-depth
 * (1..EXTRACT_MAX_DEPTH_LIMIT) into *out; 0, or -1 after a usage diagnostic for cmd
 * naming opt (the caller exits 1). */
int cli_parse_cap(const char *cmd, const char *opt, const char *value, long max, long *out);

/*
 * One warning on stderr for each cap that cut something from the page `name` (a file or
 * a URL), e.g.
 *     simcrawl extract: page.html: links after the 100000th dropped (--max-links)
 *     simcrawl extract: page.html: 12 elements nested deeper than 256 skipped, with 300
 *         bytes of text (--max-depth)
 * depth_opt names the option of the depth cap. Returns the EXTRACT_CUT_* bits.
 */
unsigned cli_warn_cuts(const char *cmd, const char *name, const struct extract_doc *doc,
                       const char *depth_opt);
/* The same from a cli_fp_result's truncated and cuts, for the cuts in `which` only
 * (EXTRACT_CUT_* bits: the fingerprinting commands name the depth cap alone, as they
 * print no links). */
void cli_warn_cut(const char *cmd, const char *name, unsigned cut, const struct extract_cuts *c,
                  unsigned which, const char *depth_opt);

#endif

#ifndef CLI_INPUTS_H
#define CLI_INPUTS_H
/*
 * The INPUT iterator shared by pairs, clusters, query, index and dedup (README.md,
 * "simcrawl pairs"): each INPUT is an HTML file, a WARC file (.warc, .warc.gz: every HTML response
 * record, cli/inputs_warc.c), a directory (walked recursively, in byte order of the names,
 * for those kinds), "-" (one HTML page on standard input), or, given with
 * --fingerprints FILE, a list of precomputed "HEX ID" lines. Every document found is handed
 * to a callback as (id, fingerprint); ids are the path as reached (DIR/sub/page.html), the
 * WARC-Target-URI, or the list's ID. A new kind is one more entry of the table in inputs.c.
 *
 * Nothing fails the whole run but the callback: an input that cannot be read or
 * fingerprinted, a malformed list line or a duplicate id gets one diagnostic on stderr
 * ("simcrawl CMD: FILE:LINE: ..."), is skipped and counted in `failed`, and the command
 * exits 2 at the end. A page with too little text to fingerprint is named and skipped but
 * not counted (as `simcrawl fingerprint` does). Duplicate ids: the first one is kept.
 * In a WARC file the same target URI may be captured again (a revisit, a re-fetch, two
 * crawls in one file): a later capture of a URI already read is skipped without a
 * diagnostic and counted in `recaptures`; a document whose id a loaded index already has
 * (cli_inputs_mark_index: `index add` or `pairs --index` run again) is skipped and
 * counted in `already`. cli_inputs_run() says each count in one line (unless quiet);
 * neither is a failure.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/pipeline.h"

#define CLI_FPLIST_LINE_MAX 65536u /* cap on one --fingerprints line, in bytes */
#define CLI_INPUT_WARN_MAX 20u     /* diagnostics per list before they are summarised */
#define CLI_IDSET_MAX (1u << 31)   /* cap on ids remembered for the duplicate check */

/* One document. Borrowed: valid during the callback only. */
struct cli_doc {
    const char *id; /* NUL-terminated */
    size_t id_len;
    uint64_t fp;
    /* pages only (NULL / 0 for --fingerprints lines); set in the counting pass */
    const char *host;       /* template host key: "" for files, the URI's host in WARCs */
    const uint64_t *blocks; /* block hashes of the page (filter_fp_result.blocks) */
    size_t n_blocks;
    uint64_t doc_hash; /* hash of the page's whole token string */
    /* pages only, when fp_opts.keep_tokens: the token string that was fingerprinted
     * (template blocks left out), for the MinHash signature (cli/minhash.c) */
    const char *tokens;
    size_t tokens_len;
    /* pages only, when fp_opts.keep_doc: the page's title and main text (the cluster
     * report, cli/report_html.c) */
    const char *title;
    const char *text;
    size_t text_len;
    /* --fingerprints lines only (NULL / 0 otherwise): the list's name and the line */
    const char *list;
    size_t line;
    /* a MinHash signature list's line only (cli/minhash.c; NULL / 0 otherwise): the
     * signature, sig_h values */
    const uint32_t *sig;
    unsigned sig_h;
};

/* Returns 0 to go on; non-zero stops the iteration (a fatal error the callback reported). */
typedef int (*cli_doc_fn)(void *userdata, const struct cli_doc *doc);
/* A page that gets no fingerprint (too little text, not a page, unreadable): its id and
 * the reason, as the diagnostic says it (pass 2 only). */
typedef void (*cli_skip_fn)(void *userdata, const char *id, const char *reason);

struct cli_idset; /* opaque: 128-bit hashes of the ids seen */

struct cli_inputs {
    const char *cmd;               /* command name for diagnostics */
    struct filter_fp_opts fp_opts; /* how HTML pages are fingerprinted */
    /* Templates (docs/FINGERPRINT.md, "Template blocks"). templates (borrowed): pages are
     * fingerprinted without their host's template blocks. learn: cli_inputs_run() first
     * reads every INPUT (not the --fingerprints lists) once to count its pages' blocks into
     * templates (pass 1, quiet: diagnostics come in pass 2), then runs as usual (pass 2):
     * the same inputs in the same order give the same table, so the same fingerprints. */
    struct dedup_templates *templates;
    int learn;
    int counting;     /* set during pass 1 */
    char *stdin_data; /* "-" read in pass 1, kept for pass 2 */
    size_t stdin_len;
    int stdin_read;
    int check_duplicates;     /* skip (and report) a second document with an id */
    unsigned long docs;       /* documents handed to the callback */
    unsigned long failed;     /* inputs, lines and duplicates skipped */
    unsigned long recaptures; /* later WARC captures of a URI already read: skipped */
    struct cli_idset *ids;
    struct cli_idset *index_ids; /* ids of a loaded index (cli_inputs_mark_index) */
    unsigned long already;       /* documents whose id was in that index: skipped */
    int quiet;                   /* --quiet: cli_inputs_run() does not say its counts */
    cli_skip_fn skip;            /* told of every page without a fingerprint (or NULL) */
    void *skip_userdata;
};

/* *d = the page id (borrowed, like host and res's arrays) as fingerprinted in res: its
 * fingerprint, blocks, hashes, tokens, and title and main text when res->doc was kept
 * (fp_opts.keep_doc); the other fields 0 / NULL. */
void cli_doc_page(struct cli_doc *d, const char *id, const char *host,
                  const struct filter_fp_result *res);
/* Tells in->skip (pass 2 only) that the page id got no fingerprint, and why. */
void cli_inputs_skipped(const struct cli_inputs *in, const char *id, const char *reason);

/* The page options for a page of host under in's mode (pass 1 or 2, templates). */
void cli_inputs_page_opts(const struct cli_inputs *in, const char *host, struct filter_fp_opts *o);

/* Zeroes in and sets the command name; duplicates are checked. */
void cli_inputs_init(struct cli_inputs *in, const char *cmd);
void cli_inputs_release(struct cli_inputs *in);
/* Records an id as already in a loaded index: a document with it is then skipped and
 * counted in `already`, not a failure. 0, or -1 when out of memory. */
int cli_inputs_mark_id(struct cli_inputs *in, const char *id, size_t len);
/* Records every id of idx as present (a later document with one of them is a duplicate).
 * 0, or -1 when out of memory (the diagnostic is printed). */
int cli_inputs_mark_index(struct cli_inputs *in, const struct dedup_index *idx);

/* One INPUT argument (file, directory or "-"). 0, or -1 if the callback stopped. */
int cli_inputs_path(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata);
/* A --fingerprints list (a file, or "-" for standard input). 0, or -1 if stopped. */
int cli_inputs_fplist(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata);
/* The list reader on an open stream; name is used in diagnostics. 0, or -1 if stopped. */
int cli_inputs_fplist_stream(struct cli_inputs *in, FILE *f, const char *name, cli_doc_fn fn,
                             void *userdata);

/* A malformed line of list `name` (its *warned-th): counted in in->failed and named on
 * stderr, the first CLI_INPUT_WARN_MAX of a list, then once "more malformed lines". For
 * a reader of its own (cmd_pairs.c's two-thread one) to say what the stream reader says. */
void cli_inputs_list_warn(struct cli_inputs *in, const char *name, unsigned *warned, size_t line,
                          const char *what);

/* The stream reader's callbacks for dedup_fplist_feed*(), userdata a struct cli_list_ctx
 * (warned 0 at the list's start): an entry is delivered to fn (cli_inputs_deliver), a
 * malformed line said (cli_inputs_list_warn). For readers of their own (cmd_pairs.c). */
struct cli_list_ctx {
    struct cli_inputs *in;
    const char *name;
    unsigned warned;
    cli_doc_fn fn;
    void *userdata;
};
void cli_list_warn(void *userdata, size_t line, const char *what);
int cli_list_entry(void *userdata, uint64_t fp, const char *id, size_t id_len, size_t line);

/* Hands d (a document read by the caller: a MinHash signature list's line) to fn as the
 * inputs' own documents are: counted, and skipped as a duplicate or already indexed id
 * under in's rules. 0, or -1 if fn stopped or memory ran out. */
int cli_inputs_deliver(struct cli_inputs *in, const struct cli_doc *d, cli_doc_fn fn,
                       void *userdata);

/* Runs every --fingerprints list, then every INPUT, in command-line order. 0, or -1. */
int cli_inputs_run(struct cli_inputs *in, char **fplists, int nfplists, char **paths, int npaths,
                   cli_doc_fn fn, void *userdata);

/* Length of the valid UTF-8 sequence at s[0..n) (RFC 3629), or 0 if s[0] starts none. */
size_t cli_utf8_seq_len(const unsigned char *s, size_t n);

/* Output helpers. A JSON string with quotes: control characters as \u00XX, invalid UTF-8
 * bytes as \ufffd (so every line is valid JSON). */
void cli_put_json_string(FILE *out, const char *s, size_t len);
/* An id in text output: bytes below 0x20, 0x7f and backslash as \xHH / \\, the rest as
 * is, so one record stays on one line and tab-separated fields stay separable. */
void cli_put_text_id(FILE *out, const char *s, size_t len);
/* The line of a pair of ids (pairs of both methods): jsonl {"a": A, "b": B, "NAME": VALUE},
 * text VALUE<TAB>A<TAB>B, the ids escaped as above; value is already formatted. */
void cli_put_pair_line(FILE *out, int jsonl, const char *ia, size_t la, const char *ib, size_t lb,
                       const char *name, const char *value);

/* ---- command-line arguments shared by pairs, clusters, query and index add ---- */

#define CLI_ARG_FORMAT 1u     /* --format NAME */
#define CLI_ARG_INDEX 2u      /* --index FILE */
#define CLI_ARG_TABLES 4u     /* --tables N */
#define CLI_ARG_NEED_INPUT 8u /* at least one INPUT or --fingerprints FILE */
#define CLI_ARG_TEMPLATES 16u /* --no-templates */
#define CLI_ARG_LOCK_WAIT 32u /* --lock-wait SECONDS (commands that write an index) */
#define CLI_ARG_MAX_DEPTH 64u /* --max-depth N: the extractor's nesting cap (README, Caps) */
#define CLI_ARG_METHOD                                                                             \
    128u                 /* --method simhash|minhash, --threshold J, --shingle-words N,            \
                          * --num-perm N (cli/minhash.h) */
#define CLI_ARG_TOP 256u /* --top N (query) */
#define CLI_ARG_QUIET                                                                              \
    512u                         /* --quiet: no summary lines on stderr (the counts of             \
                                  * cli_inputs_run, index add's totals) */
#define CLI_ARG_FROM_INDEX 1024u /* --from-index FILE (pairs): counts as an input */

#define CLI_TOP_MAX 1000000L       /* --top N cap */
#define CLI_LOCK_WAIT_DEFAULT 30L  /* seconds a writer waits for the index lock */
#define CLI_LOCK_WAIT_MAX 1000000L /* --lock-wait cap, in seconds (11.5 days) */

/* The minhash options every command spells alike: --method simhash|minhash, --threshold
 * J, --shingle-words N, --num-perm N (0: not given). */
struct cli_mh_opts {
    int minhash;      /* --method minhash */
    double threshold; /* --threshold J; threshold_set when given */
    int threshold_set;
    long shingle_words; /* --shingle-words N, or 0 */
    long num_perm;      /* --num-perm N, or 0 */
};
struct cli_args {
    long k; /* --k N, 0..DEDUP_K_MAX; DEDUP_K_DEFAULT when not given */
    int k_set;
    const char *format; /* --format NAME, "text" when not given */
    const char *index;  /* --index FILE, or NULL */
    long tables;        /* --tables N, 0 when not given */
    char **fplists;     /* --fingerprints FILE (repeatable); owned, free with cli_args_release */
    int nfplists;
    char **paths; /* the INPUT arguments (borrowed from argv) */
    int npaths;
    int help;               /* --help was given and printed: exit 0 */
    int no_templates;       /* --no-templates: fingerprint whole main texts */
    long lock_wait;         /* --lock-wait SECONDS, CLI_LOCK_WAIT_DEFAULT when not given */
    long max_depth;         /* --max-depth N, 1..EXTRACT_MAX_DEPTH_LIMIT; 0 when not given */
    struct cli_mh_opts mh;  /* --method, --threshold (DEDUP_MINHASH_THRESHOLD_DEFAULT if not
                               given), --shingle-words, --num-perm (cli/minhash.h) */
    long top;               /* --top N, 0 when not given (all) */
    int quiet;              /* --quiet */
    const char *from_index; /* --from-index FILE, or NULL */
};

/*
 * Parses options and INPUT arguments in any order ("--" ends the options; cli_getopt). formats:
 * NULL-terminated names accepted by --format. usage() prints the command's help. Returns CLI_OK
 * (check a->help) or CLI_USAGE after a diagnostic (unknown option, --k out of 0..7, bad format,
 * "-" read twice). Options not in `allowed` are unknown.
 */
int cli_args_parse(const char *cmd, int argc, char **argv, unsigned allowed,
                   const char *const *formats, void (*usage)(FILE *out), struct cli_args *a);
void cli_args_release(struct cli_args *a);

/* ---- documents staged before an index is made (its design depends on their number) ---- */

struct cli_stage {
    const char *cmd; /* for diagnostics */
    uint64_t *fp;
    uint64_t *off; /* n + 1 offsets into ids (each id NUL-terminated) */
    char *ids;
    size_t n, cap, ids_len, ids_cap;
};
/* A cli_doc_fn that appends to a struct cli_stage (userdata); non-zero when out of memory
 * (it prints the diagnostic). */
int cli_stage_add(void *stage, const struct cli_doc *doc);
void cli_stage_release(struct cli_stage *s);

/*
 * Loads the index at path. With create_k >= 0 a missing file is not an error: *out is
 * NULL and *missing 1. Prints "simcrawl CMD: cannot load index FILE: ..." (the offset and
 * field for a bad file) and returns CLI_RUNTIME on failure; CLI_OK otherwise.
 */
int cli_index_load(const char *cmd, const char *path, int missing_ok, struct dedup_index **out,
                   int *missing);
/* A new index for k and n documents (tables 0: the cost model). CLI_OK / CLI_RUNTIME. */
int cli_index_create(const char *cmd, unsigned k, uint64_t n, unsigned tables,
                     struct dedup_index **out);
/* Adds the staged documents. CLI_OK / CLI_RUNTIME (diagnostic printed). */
int cli_index_add_stage(const char *cmd, struct dedup_index *idx, const struct cli_stage *s);
/*
 * Takes the writers' lock of the index at path (dedup_lock_acquire: path.lock, held from
 * before the load until after the save), waiting up to wait_s seconds; says once on stderr
 * that it waits, and names leftover temporary files it removed. On timeout prints
 * "simcrawl CMD: PATH is locked by another writer (waited N s)". CLI_OK with *out
 * (release with dedup_lock_release()), or CLI_RUNTIME after a diagnostic.
 */
int cli_index_lock(const char *cmd, const char *path, long wait_s, struct dedup_lock **out);
/* Saves atomically; CLI_OK / CLI_RUNTIME (diagnostic printed). */
int cli_index_save(const char *cmd, struct dedup_index *idx, const char *path);
/* Words for an index error code (dedup_strerror() plus the index codes). */
const char *cli_index_strerror(enum dedup_code code);

/*
 * Sets in up for a collection (pairs, clusters, index add): unless no_templates, pages are
 * fingerprinted with templates learned over the inputs first (two passes, cli_inputs_run).
 * t is the table to count into and use (borrowed: an index's, or one the caller owns).
 */
void cli_inputs_use_templates(struct cli_inputs *in, struct dedup_templates *t, int learn);
/*
 * cli_inputs_use_templates() with learning, into idx's table, or when idx is NULL into a
 * new table returned in *own (caller frees with dedup_templates_free()). CLI_OK, or
 * CLI_RUNTIME after printing "out of memory" under in's command name.
 */
int cli_inputs_learn_templates(struct cli_inputs *in, struct dedup_index *idx,
                               struct dedup_templates **own);

/* Threads for batch work: the online processors, at most 8. */
unsigned cli_threads(void);

#endif

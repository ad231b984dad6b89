#ifndef CLI_CRAWL_REPORT_H
#define CLI_CRAWL_REPORT_H
/*
 * What a crawl dropped and why, as near-duplicate clusters: each kept page with the pages
 * dropped as its near or exact duplicates (the crawl's own decisions: duplicate_of and
 * distance, not a clustering done again), for `crawl --report FILE` and for `simcrawl
 * clusters` over a crawl's log (JSON Lines) or state directory. The clusters are written
 * by the one cluster report (cli/report_html.c) or by clusters' text and jsonl formats.
 *
 * Memory: per page its URL, title (CLI_HTML_TITLE_MAX bytes), duplicate_of and reason in
 * an arena plus about 60 bytes, up to CLI_CRAWL_REPORT_MAX_PAGES pages (later ones are
 * counted and named once on stderr); the main texts (for the word diffs) go to an
 * unlinked temporary file under $TMPDIR and only those of clustered pages are read back,
 * within the report's CLI_HTML_TEXT_BUDGET.
 */
#include <stddef.h>
#include <stdint.h>

#include "cli/report_html.h"
#include "dedup/dedup.h"

#define CLI_CRAWL_REPORT_MAX_PAGES 4000000u   /* pages held for the report at most */
#define CLI_CRAWL_REPORT_MAX_TEXT (16u << 20) /* bytes of one page's text kept */
/* bytes of packed (zlib) page texts a crawl's --state keeps in all, for the word diffs of
 * the report of a resumed crawl and of `clusters STATE_DIR`; past it a page's text is not
 * kept and the report says so (about 300,000 pages of python3.11-doc's: 20 KB of main
 * text a page, 7 KB packed) */
#define CLI_CRAWL_REPORT_STATE_TEXTS (2ull << 30)

/* One URL of the crawl as the report needs it. Everything borrowed for the call. */
struct cli_crawl_page {
    const char *url;
    int decision;  /* enum crawl_decision */
    int processed; /* the page was parsed (a filtered one: not a page, noindex) */
    int has_fp;
    uint64_t fp;
    const char *duplicate_of; /* or NULL */
    int distance;             /* -1 when none */
    const char *title;        /* or NULL */
    const char *text;         /* the main text, or NULL */
    size_t text_len;
    int text_status;    /* with text NULL: why (enum crawl_text_status of a state's record;
                         * 0, CRAWL_TEXT_KEPT, and CRAWL_TEXT_NONE: nothing to say) */
    const char *reason; /* why not fingerprinted, the error; or NULL */
};

struct cli_crawl_report;

/* A new, empty collection; cmd names the command in diagnostics. NULL when out of memory. */
struct cli_crawl_report *cli_crawl_report_new(const char *cmd);
void cli_crawl_report_free(struct cli_crawl_report *r); /* NULL-safe */

/* Adds one URL: pages (new, near-, exact-duplicate) are kept; errors and parsed pages
 * filtered out are listed as not fingerprinted; anything else is left out. 0, or -1 when
 * out of memory or the text file cannot be written (the diagnostic is printed). */
int cli_crawl_report_add(struct cli_crawl_report *r, const struct cli_crawl_page *p);

/* The state record of p (what cli_crawl_report_add keeps of it, without the text), for
 * crawl_state_page_add(): *out malloc'd (caller frees), *len its bytes. -1 out of memory. */
int cli_crawl_report_blob(const struct cli_crawl_page *p, unsigned char **out, size_t *len);
/* 1 when data is such a record. */
int cli_crawl_report_is_blob(const void *data, size_t len);
/* Adds the URL of a state record: 0, 1 when data is not one, -1 out of memory. */
int cli_crawl_report_add_blob(struct cli_crawl_report *r, const void *data, size_t len);
/* The same with the page's text as the state has it (crawl_state_foreach_page_text). */
int cli_crawl_report_add_blob_text(struct cli_crawl_report *r, const void *data, size_t len,
                                   int text_status, const char *text, size_t text_len);
struct crawl_state;
/* Adds every page record of a crawl's state with its text (the pages of a resumed crawl's
 * earlier runs; a damaged text is said on stderr, once). A crawl_code: on failure
 * crawl_state_error(s) says why. */
int cli_crawl_report_from_state(struct cli_crawl_report *r, struct crawl_state *s);

/* What path is: 1 a crawl log (a file named *.jsonl or *.ndjson, or starting with '{'),
 * 2 a crawl state directory (holding state.db), 0 neither. */
int cli_crawl_input(const char *path);
/* Adds every URL of a crawl log or state (cli_crawl_input). CLI_OK, or CLI_RUNTIME after
 * a diagnostic (a line that is not JSON is named with its number and skipped). */
int cli_crawl_report_load(struct cli_crawl_report *r, const char *path);

/*
 * The clusters: an index whose documents are the kept pages (those with a fingerprint or
 * a duplicate) in crawl order, then their duplicates, and the clusters of the crawl's
 * duplicate_of links (the kept page is the representative; a member's distance is its
 * fingerprint's to it, which is the logged distance). With html (may be NULL) every
 * document, in that order, and every page not fingerprinted are handed to it. *idx and
 * *c: caller frees. CLI_OK, CLI_RUNTIME after a diagnostic.
 */
int cli_crawl_report_clusters(struct cli_crawl_report *r, unsigned k, struct cli_report *html,
                              struct dedup_index **idx, struct dedup_clusters **c);

/* Before the crawl: CLI_OK when the report can be written to path (its path.tmp can be
 * created), else CLI_RUNTIME after a diagnostic naming path and why. */
int cli_crawl_report_check_path(const char *cmd, const char *path);
/* The HTML report of r into path (written to path.tmp, then renamed), for inputs (the
 * seeds, or the logs) at distance k. CLI_OK, or CLI_RUNTIME after a diagnostic. */
int cli_crawl_report_write(struct cli_crawl_report *r, const char *path, unsigned k, char **inputs,
                           int ninputs);

#endif

#ifndef CLI_REPORT_HTML_H
#define CLI_REPORT_HTML_H
/*
 * The self-contained HTML cluster report of `simcrawl clusters --format html`: one page,
 * inline CSS, no script, no external resource; every id, title and word is HTML-escaped.
 * It says what was analysed (inputs, when, method and k), lists the clusters with each
 * page's title as a link, marks exact copies and near-duplicates, sorts members by
 * distance, shows why they matched (a word diff against the representative, collapsed),
 * and names the pages that got no fingerprint and why.
 *
 * Use: cli_report_new(); hand it every document in the order they are staged for the
 * index (cli_report_doc, a cli_doc_fn) and every page skipped (cli_report_skip, a
 * cli_skip_fn); then cli_report_write() after clustering.
 */
#include <stdio.h>

#include "cli/inputs.h"
#include "dedup/dedup.h"
#include "dedup/minhash.h"

#define CLI_HTML_MAX_MEMBERS 2000u       /* members listed per cluster; the rest counted */
#define CLI_HTML_MAX_TOC 500u            /* clusters in the table of contents */
#define CLI_HTML_TOC_OPEN 20u            /* up to this many, the contents start open */
#define CLI_HTML_MAX_SKIPPED 2000u       /* pages without a fingerprint listed */
#define CLI_HTML_TEXT_BUDGET (64u << 20) /* bytes of main text kept for the word diffs */
#define CLI_HTML_TITLE_MAX 300u          /* bytes of a title kept */
#define CLI_HTML_DIFF_MAX_EDITS 2000u    /* a pair further apart gets no word diff */
#define CLI_HTML_DIFF_CONTEXT 6u         /* shared words shown around a change */
#define CLI_HTML_DIFF_MAX_CHANGED 400u   /* changed words shown per member */
#define CLI_HTML_MAX_NOTES 8u            /* notes in the header (cli_report_note) */

struct cli_report; /* opaque */

/* A new, empty report for command cmd (diagnostics); NULL when out of memory. */
struct cli_report *cli_report_new(const char *cmd);
void cli_report_free(struct cli_report *r); /* NULL-safe */

/* The inputs the report says it analysed (borrowed until cli_report_write()). */
void cli_report_inputs(struct cli_report *r, char **fplists, int nfplists, char **paths,
                       int npaths);
/* A cli_doc_fn: records the title and (within CLI_HTML_TEXT_BUDGET) the main text of the
 * next document; non-zero when out of memory (the diagnostic is printed). */
int cli_report_doc(void *report, const struct cli_doc *doc);
/* A cli_skip_fn: a page that got no fingerprint. */
void cli_report_skip(void *report, const char *id, const char *reason);
/* A note for the header, in plain text (escaped when written; up to CLI_HTML_MAX_NOTES).
 * 0, or -1 out of memory (the diagnostic is printed). */
int cli_report_note(struct cli_report *r, const char *text);

/*
 * Writes the report of clusters c over idx (whose documents are those given to
 * cli_report_doc, in the same order) for distance k. The date is now, or
 * SOURCE_DATE_EPOCH (reproducible-builds.org) when set, so a test can compare bytes.
 */
void cli_report_write(FILE *out, struct cli_report *r, struct dedup_index *idx,
                      const struct dedup_clusters *c, unsigned k);
/* The same over the MinHash LSH index lsh (clusters at threshold): members most similar
 * first with the signatures' estimate, and the exact Jaccard of the shingle sets when the
 * documents' token strings were given (cli_doc.tokens); the histogram over similarity. */
void cli_report_write_minhash(FILE *out, struct cli_report *r, struct dedup_lsh *lsh,
                              const struct dedup_clusters *c, double threshold);

#endif

/*
 * The HTML cluster report (cli/report_html.h).
 *
 * HOW IT WORKS: while the inputs are read, each staged document leaves its title and main
 * text here (texts up to CLI_HTML_TEXT_BUDGET bytes in all; past it the rest of the
 * documents get no word diff and the report says so), and each page without a fingerprint
 * its id and reason. cli_report_write() then makes two passes over the clusters: the
 * first diffs every member against its representative to know which are exact copies
 * (the same words; distance 0 alone could be a collision or a page with different
 * spacing), for the counts in the header; the second writes each cluster, members sorted
 * by distance, and diffs each again to render it (a diff is cheap for near-duplicates, and
 * keeping all of them would hold every word of every cluster at once).
 * Everything from the inputs is escaped (& < > " ' and control bytes) and invalid UTF-8
 * becomes U+FFFD, so the page is valid UTF-8 whatever the ids hold; an id becomes a link
 * only as an http(s)/ftp/file URL or as a percent-encoded file path, never a
 * "javascript:" one.
 *
 * The same report is written over a MinHash LSH index (cli_report_write_minhash()): the
 * members' closeness is the signatures' estimated Jaccard similarity instead of the
 * Hamming distance (most similar first), with the exact Jaccard of the two shingle sets
 * when both token strings were kept, and the histogram is over similarity with the
 * threshold marked. Both go through struct rsrc below.
 */
#include "cli/report_html.h"

#include "cli/cli.h"
#include "dedup/minhash.h"
#include "dedup/worddiff.h"
#include "filter/simcrawl.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define NO_TEXT SIZE_MAX

struct report_doc {
    size_t title_off, title_len;
    size_t text_off, text_len; /* text_len NO_TEXT: not kept */
    size_t tok_off, tok_len;   /* the token string (minhash: the exact Jaccard); NO_TEXT */
};

/* What the report is over: a simhash index and k, or a MinHash LSH index and its
 * threshold (lsh set). */
struct rsrc {
    struct dedup_index *idx;
    unsigned k;
    struct dedup_lsh *lsh;
    double threshold;
};

static uint32_t src_docs(const struct rsrc *s)
{
    return s->lsh ? dedup_lsh_doc_count(s->lsh) : dedup_index_doc_count(s->idx);
}

static const char *src_id(const struct rsrc *s, uint32_t doc, size_t *len)
{
    return s->lsh ? dedup_lsh_id(s->lsh, doc, len) : dedup_index_id(s->idx, doc, len);
}

/* How far m is from rep, nearer first: the Hamming distance, or 1 - the estimate. */
static double src_far(const struct rsrc *s, uint32_t rep, uint32_t m)
{
    if (s->lsh)
        return 1.0 - dedup_minhash_estimate(dedup_lsh_signature(s->lsh, rep),
                                            dedup_lsh_signature(s->lsh, m),
                                            dedup_lsh_get_params(s->lsh)->h);
    return dedup_distance(dedup_index_fingerprint(s->idx, rep), dedup_index_fingerprint(s->idx, m));
}

struct report_skip {
    size_t id_off, reason_off; /* NUL-terminated strings in the arena */
};

struct cli_report {
    const char *cmd;
    char *arena;
    size_t arena_len, arena_cap;
    struct report_doc *docs;
    size_t n, cap;
    size_t text_bytes;
    size_t texts_dropped; /* documents whose text did not fit the budget */
    struct report_skip *skips;
    size_t nskips, skips_cap;
    unsigned long skipped; /* all skipped pages, listed or not */
    char **fplists, **paths;
    int nfplists, npaths;
    size_t notes[CLI_HTML_MAX_NOTES]; /* arena offsets of the header's notes */
    unsigned nnotes;
};

struct cli_report *cli_report_new(const char *cmd)
{
    struct cli_report *r = calloc(1, sizeof *r);
    if (r)
        r->cmd = cmd;
    return r;
}

void cli_report_free(struct cli_report *r)
{
    if (!r)
        return;
    free(r->arena);
    free(r->docs);
    free(r->skips);
    free(r);
}

void cli_report_inputs(struct cli_report *r, char **fplists, int nfplists, char **paths, int npaths)
{
    r->fplists = fplists;
    r->nfplists = nfplists;
    r->paths = paths;
    r->npaths = npaths;
}

/* Appends s[0..len) and a NUL to the arena; its offset in *off. -1 when out of memory. */
static int arena_put(struct cli_report *r, const char *s, size_t len, size_t *off)
{
    if (r->arena_len + len + 1 > r->arena_cap) {
        size_t cap = r->arena_cap ? r->arena_cap : 65536;
        while (cap < r->arena_len + len + 1)
            cap *= 2;
        char *a = realloc(r->arena, cap);
        if (!a)
            return -1;
        r->arena = a;
        r->arena_cap = cap;
    }
    *off = r->arena_len;
    if (len)
        memcpy(r->arena + r->arena_len, s, len);
    r->arena[r->arena_len + len] = '\0';
    r->arena_len += len + 1;
    return 0;
}

/* The length of s[0..len) cut to at most max bytes at a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    return max;
}

int cli_report_doc(void *report, const struct cli_doc *doc)
{
    struct cli_report *r = report;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        struct report_doc *d = realloc(r->docs, cap * sizeof *d);
        if (!d)
            goto oom;
        r->docs = d;
        r->cap = cap;
    }
    struct report_doc *d = &r->docs[r->n];
    const char *title = doc->title ? doc->title : "";
    d->title_len = utf8_cut(title, strlen(title), CLI_HTML_TITLE_MAX);
    if (arena_put(r, title, d->title_len, &d->title_off) != 0)
        goto oom;
    d->text_len = NO_TEXT;
    d->text_off = 0;
    d->tok_len = NO_TEXT;
    d->tok_off = 0;
    if (doc->tokens && r->text_bytes + doc->tokens_len <= CLI_HTML_TEXT_BUDGET) {
        if (arena_put(r, doc->tokens, doc->tokens_len, &d->tok_off) != 0)
            goto oom;
        d->tok_len = doc->tokens_len;
        r->text_bytes += doc->tokens_len;
    }
    if (doc->text && r->text_bytes + doc->text_len <= CLI_HTML_TEXT_BUDGET) {
        if (arena_put(r, doc->text, doc->text_len, &d->text_off) != 0)
            goto oom;
        d->text_len = doc->text_len;
        r->text_bytes += doc->text_len;
    } else if (doc->text) {
        r->texts_dropped++;
    }
    r->n++;
    return 0;
oom:
    cli_error(r->cmd, "out of memory keeping the pages' texts for the report");
    return 1;
}

int cli_report_note(struct cli_report *r, const char *text)
{
    if (r->nnotes == CLI_HTML_MAX_NOTES)
        return 0;
    if (arena_put(r, text, strlen(text), &r->notes[r->nnotes]) != 0) {
        cli_error(r->cmd, "out of memory");
        return -1;
    }
    r->nnotes++;
    return 0;
}

void cli_report_skip(void *report, const char *id, const char *reason)
{
    struct cli_report *r = report;
    r->skipped++;
    if (r->nskips == CLI_HTML_MAX_SKIPPED)
        return;
    if (r->nskips == r->skips_cap) {
        size_t cap = r->skips_cap ? r->skips_cap * 2 : 64;
        struct report_skip *s = realloc(r->skips, cap * sizeof *s);
        if (!s)
            return; /* counted, not listed */
        r->skips = s;
        r->skips_cap = cap;
    }
    struct report_skip *s = &r->skips[r->nskips];
    if (arena_put(r, id, strlen(id), &s->id_off) != 0 ||
        arena_put(r, reason, strlen(reason), &s->reason_off) != 0)
        return;
    r->nskips++;
}

/* ---- escaping ---- */

/* HTML text or attribute value; with wbr, a <wbr> after each '/', so long paths and URLs
 * wrap between their parts, never inside a word. */
static void put_html_wbr(FILE *out, const char *s, size_t len, int wbr)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '&':
            fputs("&amp;", out);
            continue;
        case '<':
            fputs("&lt;", out);
            continue;
        case '>':
            fputs("&gt;", out);
            continue;
        case '"':
            fputs("&quot;", out);
            continue;
        case '\'':
            fputs("&#39;", out);
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            fputs("&#xfffd;", out);
            continue;
        }
        if (c < 0x80) {
            putc(c, out);
            if (wbr && c == '/' && i + 1 < len)
                fputs("<wbr>", out);
            continue;
        }
        /* copy a valid UTF-8 sequence, replace a bad byte */
        size_t n = cli_utf8_seq_len(p + i, len - i);
        if (!n) {
            fputs("&#xfffd;", out);
            continue;
        }
        fwrite(p + i, 1, n, out);
        i += n - 1;
    }
}

static void put_html(FILE *out, const char *s, size_t len)
{
    put_html_wbr(out, s, len, 0);
}

static int has_scheme(const char *s, size_t len, const char *scheme)
{
    size_t n = strlen(scheme);
    return len > n && strncasecmp(s, scheme, n) == 0;
}

/* The href of an id: a web or file URL as it is; the path of a file that exists,
 * percent-encoded (relative stays relative: to the directory the report is opened from;
 * absolute becomes file://). Anything else (an id of a --fingerprints list, a URL of
 * another scheme such as javascript:) gets no link: returns 0. */
static int put_href(FILE *out, const char *id, size_t len)
{
    if (has_scheme(id, len, "http://") || has_scheme(id, len, "https://") ||
        has_scheme(id, len, "ftp://") || has_scheme(id, len, "file://")) {
        fputs(" href=\"", out);
        put_html(out, id, len);
        putc('"', out);
        return 1;
    }
    struct stat st;
    if (len == 0 || strcmp(id, "-") == 0 || strlen(id) != len || stat(id, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return 0;
    fputs(" href=\"", out);
    if (id[0] == '/')
        fputs("file://", out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)id[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
            putc(c, out);
        else
            fprintf(out, "%%%02X", c);
    }
    putc('"', out);
    return 1;
}

/* ---- the word diff of a member against its representative ---- */

enum member_kind { KIND_REP, KIND_EXACT, KIND_NEAR, KIND_SAME_FP };

static const char *doc_text(const struct cli_report *r, uint32_t doc, size_t *len)
{
    if (doc >= r->n || r->docs[doc].text_len == NO_TEXT)
        return NULL;
    *len = r->docs[doc].text_len;
    return r->arena + r->docs[doc].text_off;
}

/* The diff of member m against rep into *d (released by the caller): 0, or -1 when a text
 * is missing, the pair is too far apart or memory ran out. */
static int diff_member(const struct cli_report *r, uint32_t rep, uint32_t m,
                       struct dedup_word_diff *d)
{
    size_t la = 0, lb = 0;
    const char *a = doc_text(r, rep, &la), *b = doc_text(r, m, &lb);
    memset(d, 0, sizeof *d);
    if (!a || !b)
        return -1;
    return dedup_word_diff(a, la, b, lb, CLI_HTML_DIFF_MAX_EDITS, d) == DEDUP_OK ? 0 : -1;
}

static enum member_kind kind_of_member(const struct cli_report *r, const struct rsrc *s,
                                       uint32_t rep, uint32_t m)
{
    struct dedup_word_diff d;
    enum member_kind k;
    if (diff_member(r, rep, m, &d) == 0)
        k = d.deleted + d.inserted == 0 ? KIND_EXACT : KIND_NEAR;
    else if (src_far(s, rep, m) == 0)
        k = KIND_SAME_FP;
    else
        k = KIND_NEAR;
    dedup_word_diff_release(&d);
    return k;
}

static void put_words(FILE *out, const struct dedup_word *w, size_t from, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            putc(' ', out);
        put_html(out, w[from + i].p, w[from + i].len);
    }
}

/* The compact diff: changes in full (up to CLI_HTML_DIFF_MAX_CHANGED words), shared runs
 * cut to CLI_HTML_DIFF_CONTEXT words on each side of a change. */
static void put_diff(FILE *out, const struct dedup_word_diff *d)
{
    const size_t ctx = CLI_HTML_DIFF_CONTEXT;
    size_t changed = 0;
    fputs("<p class=\"diff\">", out);
    for (size_t i = 0; i < d->nruns; i++) {
        const struct dedup_diff_run *run = &d->runs[i];
        if (i)
            putc(' ', out);
        if (run->op == DEDUP_DIFF_EQUAL) {
            size_t head = i ? ctx : 0, tail = i + 1 < d->nruns ? ctx : 0;
            if (head + tail + 3 >= run->n) {
                put_words(out, d->wa, run->a, run->n);
            } else {
                put_words(out, d->wa, run->a, head);
                fprintf(out, "%s<span class=\"gap\">&hellip; %zu shared words &hellip;</span>%s",
                        head ? " " : "", run->n - head - tail, tail ? " " : "");
                put_words(out, d->wa, run->a + run->n - tail, tail);
            }
            continue;
        }
        if (changed >= CLI_HTML_DIFF_MAX_CHANGED) {
            fputs("<span class=\"gap\">&hellip; more changes not shown &hellip;</span>", out);
            break;
        }
        size_t n = run->n;
        if (n > CLI_HTML_DIFF_MAX_CHANGED - changed)
            n = CLI_HTML_DIFF_MAX_CHANGED - changed;
        changed += n;
        if (run->op == DEDUP_DIFF_DELETE) {
            fputs("<del>", out);
            put_words(out, d->wa, run->a, n);
            fputs("</del>", out);
        } else {
            fputs("<ins>", out);
            put_words(out, d->wb, run->b, n);
            fputs("</ins>", out);
        }
    }
    fputs("</p>\n", out);
}

/* ---- the page ---- */

static const char style[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;"
    "color:#222;background:#fff}\n"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin:1.6em 0 .4em}\n"
    "p.lead{margin-top:0;color:#444}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "td,th{text-align:left;padding:.25em .6em;border-bottom:1px solid #e4e4e4;"
    "vertical-align:top}\n"
    "td.d,th.d{width:4.5em;text-align:right;font-variant-numeric:tabular-nums}\n"
    ".id{font-family:ui-monospace,monospace;font-size:.85em;color:#555;"
    "overflow-wrap:normal;word-break:normal}\n"
    "a.doc{font-weight:500}\n"
    "table.members{table-layout:fixed}col.cd{width:5.5em}col.ck{width:9.5em}col.cdoc{width:34%}\n"
    "tr.rep td{background:#f3f7ff}\n"
    ".badge{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.8em;"
    "white-space:nowrap}\n"
    ".badge.rep{background:#dde8fb}.badge.exact{background:#f7d9d9}"
    ".badge.near{background:#fbeed0}.badge.samefp{background:#eee}\n"
    ".summary,.hist{width:auto}.summary td{border:0;padding:.1em 1.2em .1em 0}\n"
    ".bar{display:inline-block;height:.9em;background:#4a7bd0;vertical-align:middle}\n"
    ".hist td{border:0;padding:.05em .6em}.hist td.d{white-space:nowrap}\n"
    ".jexact{white-space:nowrap;font-size:.8em}\n"
    ".hist tr.k td{border-bottom:2px dashed #c33}\n"
    ".hist tr.far .bar{background:#9bb3df}\n"
    ".note{color:#666}\n"
    "details summary{cursor:pointer;color:#444}\n"
    "p.diff{font-size:.9em;margin:.3em 0;max-width:60em}\n"
    "del{background:#fbe0e0;text-decoration:line-through}ins{background:#dcf5dc;"
    "text-decoration:none}\n"
    ".gap{color:#888;font-style:italic;white-space:nowrap}\n"
    "nav{margin-top:1.2em}nav ol{columns:2;padding-left:2em}.count{white-space:nowrap}\n"
    "@media print{body{margin:0;max-width:none}tr{break-inside:avoid}"
    "h2{break-after:avoid}.bar{print-color-adjust:exact;-webkit-print-color-adjust:exact}"
    "nav{display:none}}\n";

static void put_title_or_id(FILE *out, const struct cli_report *r, const struct rsrc *s,
                            uint32_t doc)
{
    size_t len;
    if (doc < r->n && r->docs[doc].title_len) {
        put_html(out, r->arena + r->docs[doc].title_off, r->docs[doc].title_len);
        return;
    }
    const char *id = src_id(s, doc, &len);
    put_html_wbr(out, id, len, 1);
}

static void put_header(FILE *out, const struct cli_report *r, const struct rsrc *s,
                       const struct dedup_clusters *c, size_t exact, size_t near)
{
    uint32_t docs = src_docs(s);
    size_t ncl = dedup_clusters_count(c);
    char when[64] = "";
    time_t now = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        long long v = strtoll(sde, &end, 10);
        if (!*end && v >= 0)
            now = (time_t)v;
    }
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"generator\" content=\"simcrawl %s\">\n"
            "<title>Near-duplicate clusters</title>\n<style>\n%s</style>\n</head>\n"
            "<body>\n<header>\n<h1>Near-duplicate clusters</h1>\n<p class=\"lead\">",
            simcrawl_version(), style);
    fprintf(out, "%u documents from ", docs);
    int listed = 0, total = r->npaths + r->nfplists;
    for (int i = 0; i < total && listed < 10; i++, listed++) {
        const char *name = i < r->nfplists ? r->fplists[i] : r->paths[i - r->nfplists];
        fputs(listed ? ", <span class=\"id\">" : "<span class=\"id\">", out);
        put_html_wbr(out, name, strlen(name), 1);
        fputs("</span>", out);
    }
    if (total > listed)
        fprintf(out, " and %d more inputs", total - listed);
    if (!total)
        fputs("no input", out);
    char design[160];
    if (s->lsh) {
        const struct dedup_lsh_params *p = dedup_lsh_get_params(s->lsh);
        fprintf(out,
                ", analysed %s by simcrawl %s: MinHash signatures (%u values over %u-word "
                "shingles, docs/MINHASH.md), near-duplicates at an estimated Jaccard "
                "similarity <b class=\"k\">&ge; %g</b>.</p>\n",
                when, simcrawl_version(), p->h, p->k, s->threshold);
        snprintf(design, sizeof design, "MinHash LSH: %u bands of %u rows (chosen for %g)", p->b,
                 p->r, p->threshold);
    } else {
        fprintf(out,
                ", analysed %s by simcrawl %s: simhash fingerprints (64 bits), near-duplicates "
                "within Hamming distance <b class=\"k\">k = %u</b>.</p>\n",
                when, simcrawl_version(), s->k);
        dedup_design_describe(dedup_index_design(s->idx), design, sizeof design);
    }
    fprintf(out,
            "<table class=\"summary\">\n"
            "<tr><td>documents</td><td id=\"n-docs\">%u</td></tr>\n"
            "<tr><td>clusters (2 or more documents)</td><td id=\"n-clusters\">%zu</td></tr>\n"
            "<tr><td>documents in clusters</td><td id=\"n-in-clusters\">%u</td></tr>\n"
            "<tr><td>&nbsp;&nbsp;exact copies of their representative (same words)</td>"
            "<td id=\"n-exact\">%zu</td></tr>\n"
            "<tr><td>&nbsp;&nbsp;near-duplicates</td><td id=\"n-near\">%zu</td></tr>\n"
            "<tr><td>documents without a near-duplicate</td><td>%u</td></tr>\n"
            "<tr><td>pages not fingerprinted</td><td id=\"n-skipped\">%lu</td></tr>\n"
            "<tr><td>index</td><td>",
            docs, ncl, dedup_clusters_doc_total(c), exact, near, docs - dedup_clusters_doc_total(c),
            r->skipped);
    put_html(out, design, strlen(design));
    fputs("</td></tr>\n</table>\n", out);
    if (r->texts_dropped)
        fprintf(out,
                "<p class=\"note\">The texts of %zu documents did not fit the report's "
                "%u MiB budget: their members show no word diff.</p>\n",
                r->texts_dropped, CLI_HTML_TEXT_BUDGET >> 20);
    for (unsigned i = 0; i < r->nnotes; i++) {
        const char *note = r->arena + r->notes[i];
        fputs("<p class=\"note\">", out);
        put_html(out, note, strlen(note));
        fputs("</p>\n", out);
    }
    fputs("</header>\n", out);
}

/* minhash: the members' estimates in bins of 0.05 (1 alone on top), most similar first,
 * the line under the bin that holds the threshold. */
static void put_histogram_jaccard(FILE *out, const struct rsrc *s, const struct dedup_clusters *c)
{
    uint64_t hist[21] = {0}, maxc = 0;
    size_t ncl = dedup_clusters_count(c);
    for (size_t i = 0; i < ncl; i++) {
        uint32_t rep = dedup_clusters_member(c, i, 0);
        for (size_t j = 1; j < dedup_clusters_size(c, i); j++) {
            double e = 1.0 - src_far(s, rep, dedup_clusters_member(c, i, j));
            int b = (int)floor(e * 20 + 1e-9);
            hist[b < 0 ? 0 : b > 20 ? 20 : b]++;
        }
    }
    int tb = (int)floor(s->threshold * 20 + 1e-9), low = tb > 20 ? 20 : tb;
    for (int b = 0; b <= 20; b++) {
        if (hist[b] && b < low)
            low = b;
        if (hist[b] > maxc)
            maxc = hist[b];
    }
    fprintf(out,
            "<h2>Similarity of members to their representative</h2>\n"
            "<p class=\"note\">The share of the %u signature values two pages have in common: "
            "the estimate of the Jaccard similarity of their sets of word shingles. A page at "
            "&ge; %g of a page already seen is a near-duplicate (above the dashed line); a "
            "cluster links pages through such pairs, so a member can be less similar to its "
            "representative.</p>\n<table class=\"hist\">\n"
            "<tr><th class=\"d\">Jaccard</th><th>members</th></tr>\n",
            dedup_lsh_get_params(s->lsh)->h, s->threshold);
    for (int b = 20; b >= low; b--) {
        unsigned w = maxc ? (unsigned)((hist[b] * 400 + maxc - 1) / maxc) : 0;
        char label[32];
        if (b == 20)
            snprintf(label, sizeof label, "1");
        else
            snprintf(label, sizeof label, "%.2f&ndash;%.2f", b / 20.0, (b + 1) / 20.0);
        fprintf(out,
                "<tr%s><td class=\"d\">%s</td><td><span class=\"bar\" style=\"width:%upx\">"
                "</span> %llu%s</td></tr>\n",
                b == tb  ? " class=\"k\""
                : b < tb ? " class=\"far\""
                         : "",
                label, w, (unsigned long long)hist[b],
                b == tb ? " <span class=\"note\">&larr; threshold</span>" : "");
    }
    fputs("</table>\n", out);
}

static void put_histogram(FILE *out, struct dedup_index *idx, const struct dedup_clusters *c,
                          unsigned k)
{
    uint64_t hist[65] = {0};
    size_t ncl = dedup_clusters_count(c);
    for (size_t i = 0; i < ncl; i++) {
        uint64_t rep = dedup_index_fingerprint(idx, dedup_clusters_member(c, i, 0));
        for (size_t j = 1; j < dedup_clusters_size(c, i); j++)
            hist[dedup_distance(rep,
                                dedup_index_fingerprint(idx, dedup_clusters_member(c, i, j)))]++;
    }
    unsigned maxd = k;
    uint64_t maxc = 0;
    for (unsigned d = 0; d <= 64; d++) {
        if (hist[d] && d > maxd)
            maxd = d;
        if (hist[d] > maxc)
            maxc = hist[d];
    }
    fprintf(out,
            "<h2>Distance of members to their representative</h2>\n"
            "<p class=\"note\">Bits in which the fingerprints differ. A page within k = %u of "
            "a page already seen is a near-duplicate (the dashed line); a cluster links pages "
            "through such pairs, so a member can be farther than k from its "
            "representative.</p>\n<table class=\"hist\">\n"
            "<tr><th class=\"d\">distance</th><th>members</th></tr>\n",
            k);
    for (unsigned d = 0; d <= maxd; d++) {
        unsigned w = maxc ? (unsigned)((hist[d] * 400 + maxc - 1) / maxc) : 0;
        fprintf(out,
                "<tr%s><td class=\"d\">%u</td><td><span class=\"bar\" style=\"width:%upx\">"
                "</span> %llu%s</td></tr>\n",
                d == k  ? " class=\"k\""
                : d > k ? " class=\"far\""
                        : "",
                d, w, (unsigned long long)hist[d],
                d == k ? " <span class=\"note\">&larr; k</span>" : "");
    }
    fputs("</table>\n", out);
}

struct by_distance {
    double d; /* src_far() */
    size_t j;
};

static int cmp_by_distance(const void *x, const void *y)
{
    const struct by_distance *a = x, *b = y;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* minhash: the exact Jaccard of the shingle sets of docs a and b when both token strings
 * were kept, else a negative value. */
static double exact_jaccard(const struct cli_report *r, const struct rsrc *s, uint32_t a,
                            uint32_t b)
{
    uint64_t *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    double j = -1;
    if (a >= r->n || b >= r->n || r->docs[a].tok_len == NO_TEXT || r->docs[b].tok_len == NO_TEXT)
        return -1;
    const struct dedup_minhash *mh = dedup_lsh_minhash(s->lsh);
    if (dedup_minhash_shingle_set(mh, r->arena + r->docs[a].tok_off, r->docs[a].tok_len, &sa,
                                  &na) == DEDUP_OK &&
        dedup_minhash_shingle_set(mh, r->arena + r->docs[b].tok_off, r->docs[b].tok_len, &sb,
                                  &nb) == DEDUP_OK)
        j = dedup_minhash_jaccard_sets(sa, na, sb, nb);
    free(sa);
    free(sb);
    return j;
}

/* The first cell of a member's row: the distance, or the estimate (and the exact Jaccard). */
static void put_closeness(FILE *out, const struct cli_report *r, const struct rsrc *s, uint32_t rep,
                          uint32_t m, double far)
{
    if (!s->lsh) {
        fprintf(out, "%u", (unsigned)far);
        return;
    }
    double ex = rep == m ? -1 : exact_jaccard(r, s, rep, m);
    fprintf(out, "<span title=\"estimated Jaccard similarity\">%.3f</span>", 1.0 - far);
    if (ex >= 0)
        fprintf(out,
                "<br><span class=\"note jexact\" title=\"exact Jaccard similarity of the "
                "shingle sets\">exact %.3f</span>",
                ex);
}

static void put_member(FILE *out, const struct cli_report *r, const struct rsrc *s, uint32_t rep,
                       uint32_t m, double far, enum member_kind kind)
{
    static const char *const badge[] = {"<span class=\"badge rep\">representative</span>",
                                        "<span class=\"badge exact\">exact copy</span>",
                                        "<span class=\"badge near\">near-duplicate</span>",
                                        "<span class=\"badge samefp\">same fingerprint</span>",
                                        "<span class=\"badge samefp\">same signature</span>"};
    static const char *const cls[] = {"rep", "member exact", "member near", "member samefp"};
    size_t len;
    const char *id = src_id(s, m, &len);
    fprintf(out, "<tr class=\"%s\"><td class=\"d\">", cls[kind]);
    put_closeness(out, r, s, rep, m, far);
    fprintf(out, "</td><td>%s</td><td><a class=\"doc\"",
            badge[kind == KIND_SAME_FP && s->lsh ? 4 : kind]);
    put_href(out, id, len);
    putc('>', out);
    put_title_or_id(out, r, s, m);
    fputs("</a><div class=\"id\">", out);
    put_html_wbr(out, id, len, 1);
    fputs("</div></td><td>", out);
    if (kind != KIND_REP) {
        struct dedup_word_diff d;
        if (diff_member(r, rep, m, &d) == 0) {
            size_t total = d.shared + d.deleted;
            unsigned pct = total ? (unsigned)(d.shared * 100 / total) : 100;
            if (d.deleted + d.inserted == 0) {
                fprintf(out, "<span class=\"note\">the same %zu words</span>", d.shared);
            } else {
                fprintf(out,
                        "<details><summary>%u%% of words shared: %zu only in the "
                        "representative, %zu only here</summary>\n",
                        pct, d.deleted, d.inserted);
                put_diff(out, &d);
                fputs("</details>", out);
            }
        } else {
            fputs("<span class=\"note\">no word diff (text not kept, or too different)</span>",
                  out);
        }
        dedup_word_diff_release(&d);
    }
    fputs("</td></tr>\n", out);
}

/* The members of cluster i but its representative, nearest first (ties: input order),
 * into order[]; returns how many. */
static size_t cluster_order(const struct rsrc *s, const struct dedup_clusters *c, size_t i,
                            struct by_distance *order)
{
    size_t n = dedup_clusters_size(c, i);
    uint32_t rep = dedup_clusters_member(c, i, 0);
    for (size_t j = 1; j < n; j++)
        order[j - 1] = (struct by_distance){src_far(s, rep, dedup_clusters_member(c, i, j)), j};
    qsort(order, n - 1, sizeof *order, cmp_by_distance);
    return n - 1;
}

static void put_cluster(FILE *out, const struct cli_report *r, const struct rsrc *s,
                        const struct dedup_clusters *c, size_t i, const unsigned char *kinds,
                        struct by_distance *order)
{
    size_t n = dedup_clusters_size(c, i), ex = 0;
    uint32_t rep = dedup_clusters_member(c, i, 0);
    size_t shown = cluster_order(s, c, i, order);
    for (size_t k = 0; k < shown; k++)
        ex += kinds[dedup_clusters_member(c, i, order[k].j)] == KIND_EXACT;
    fprintf(out,
            "<section class=\"cluster\" id=\"c%zu\">\n<h2>Cluster %zu: %zu documents "
            "<span class=\"note\">(%zu exact %s, %zu near-duplicate%s)</span></h2>\n",
            i + 1, i + 1, n, ex, ex == 1 ? "copy" : "copies", n - 1 - ex,
            n - 1 - ex == 1 ? "" : "s");
    fputs("<table class=\"members\">\n<colgroup><col class=\"cd\"><col class=\"ck\">"
          "<col class=\"cdoc\"><col></colgroup>\n<tr><th class=\"d\">",
          out);
    fputs(s->lsh ? "Jaccard" : "distance", out);
    fputs("</th><th>kind</th><th>document</th><th>why: words against the representative</th>"
          "</tr>\n",
          out);
    put_member(out, r, s, rep, rep, 0, KIND_REP);
    for (size_t k = 0; k < shown && k + 1 < CLI_HTML_MAX_MEMBERS; k++) {
        uint32_t m = dedup_clusters_member(c, i, order[k].j);
        put_member(out, r, s, rep, m, order[k].d, (enum member_kind)kinds[m]);
    }
    if (n > CLI_HTML_MAX_MEMBERS)
        fprintf(out,
                "<tr><td></td><td></td><td class=\"note\">and %zu more (see --format jsonl)"
                "</td><td></td></tr>\n",
                n - CLI_HTML_MAX_MEMBERS);
    fputs("</table>\n</section>\n", out);
}

static void put_skipped(FILE *out, const struct cli_report *r)
{
    if (!r->skipped)
        return;
    fprintf(out,
            "<section id=\"not-fingerprinted\">\n<h2>Pages not fingerprinted (%lu)</h2>\n"
            "<p class=\"note\">Never a near-duplicate of anything: too little text of their "
            "own, or not a page.</p>\n<table>\n<tr><th>page</th><th>reason</th></tr>\n",
            r->skipped);
    for (size_t i = 0; i < r->nskips; i++) {
        const char *id = r->arena + r->skips[i].id_off;
        const char *why = r->arena + r->skips[i].reason_off;
        fputs("<tr class=\"skipped\"><td class=\"id\"><a", out);
        put_href(out, id, strlen(id));
        putc('>', out);
        put_html_wbr(out, id, strlen(id), 1);
        fputs("</a></td><td>", out);
        put_html(out, why, strlen(why));
        fputs("</td></tr>\n", out);
    }
    if (r->skipped > r->nskips)
        fprintf(out,
                "<tr><td class=\"note\" colspan=\"2\">and %lu more (named on stderr)"
                "</td></tr>\n",
                r->skipped - r->nskips);
    fputs("</table>\n</section>\n", out);
}

static void report_write(FILE *out, struct cli_report *r, const struct rsrc *s,
                         const struct dedup_clusters *c)
{
    size_t ncl = dedup_clusters_count(c), exact = 0, near = 0, maxn = 1;
    uint32_t docs = src_docs(s);
    for (size_t i = 0; i < ncl; i++)
        if (dedup_clusters_size(c, i) > maxn)
            maxn = dedup_clusters_size(c, i);
    unsigned char *kinds = calloc(docs ? docs : 1, 1);
    struct by_distance *order = malloc(maxn * sizeof *order);
    /* pass 1: the kind of each member listed (exact copy or near-duplicate), for the
     * counts; members past CLI_HTML_MAX_MEMBERS are counted as near-duplicates */
    for (size_t i = 0; kinds && order && i < ncl; i++) {
        uint32_t rep = dedup_clusters_member(c, i, 0);
        size_t n = cluster_order(s, c, i, order);
        for (size_t k = 0; k < n; k++) {
            uint32_t m = dedup_clusters_member(c, i, order[k].j);
            kinds[m] = (unsigned char)(k + 1 < CLI_HTML_MAX_MEMBERS ? kind_of_member(r, s, rep, m)
                                                                    : KIND_NEAR);
            if (kinds[m] == KIND_EXACT)
                exact++;
            else
                near++;
        }
    }
    put_header(out, r, s, c, exact, near);
    if (ncl) {
        /* a long list is collapsed, so the histogram and the clusters stay in view */
        fprintf(out, "<nav>\n<details%s><summary><b>Clusters (%zu)</b></summary>\n<ol>\n",
                ncl <= CLI_HTML_TOC_OPEN ? " open" : "", ncl);
        for (size_t i = 0; i < ncl && i < CLI_HTML_MAX_TOC; i++) {
            fprintf(out, "<li><a href=\"#c%zu\">", i + 1);
            put_title_or_id(out, r, s, dedup_clusters_member(c, i, 0));
            fprintf(out, "</a> <span class=\"note count\">%zu documents</span></li>\n",
                    dedup_clusters_size(c, i));
        }
        fputs("</ol>\n", out);
        if (ncl > CLI_HTML_MAX_TOC)
            fprintf(out, "<p class=\"note\">and %zu more clusters below</p>\n",
                    ncl - CLI_HTML_MAX_TOC);
        fputs("</details>\n</nav>\n", out);
    }
    if (s->lsh)
        put_histogram_jaccard(out, s, c);
    else
        put_histogram(out, s->idx, c, s->k);
    if (!ncl)
        fputs(s->lsh ? "<p>No two documents are at the threshold of each other.</p>\n"
                     : "<p>No two documents are within k of each other.</p>\n",
              out);
    if (!kinds || !order) {
        fputs("<p class=\"note\">Out of memory: the clusters are not listed; use --format "
              "jsonl.</p>\n",
              out);
        cli_error(r->cmd, "out of memory writing the report");
    } else {
        /* pass 2: each cluster, its members diffed again as they are written */
        for (size_t i = 0; i < ncl; i++)
            put_cluster(out, r, s, c, i, kinds, order);
    }
    put_skipped(out, r);
    fputs("</body>\n</html>\n", out);
    free(order);
    free(kinds);
}

void cli_report_write(FILE *out, struct cli_report *r, struct dedup_index *idx,
                      const struct dedup_clusters *c, unsigned k)
{
    struct rsrc s = {.idx = idx, .k = k};
    report_write(out, r, &s, c);
}

void cli_report_write_minhash(FILE *out, struct cli_report *r, struct dedup_lsh *lsh,
                              const struct dedup_clusters *c, double threshold)
{
    struct rsrc s = {.lsh = lsh, .threshold = threshold};
    report_write(out, r, &s, c);
}

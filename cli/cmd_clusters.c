/*
 * simcrawl clusters [--k N] [--format text|jsonl|html] [--fingerprints FILE] INPUT...
 *
 * Near-duplicate clusters: the connected components of the pairs within k (union-find in
 * dedup/cluster.c), each with its representative (the member that came first in input
 * order) and every member's distance to it; clusters largest first, ties by input order
 * of the representative. The same input gives the same output byte for byte.
 * Formats: text for reading, jsonl (one cluster a line) for programs, html for a
 * self-contained report page (cli/report_html.c).
 */
#include "cli/cli.h"
#include "cli/crawl_report.h"
#include "cli/inputs.h"
#include "cli/minhash.h"
#include "cli/report_html.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "clusters"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl clusters [options] INPUT...\n"
            "\n"
            "Groups near-duplicate documents: documents are linked when their fingerprints\n"
            "are within Hamming distance k, and each connected group of 2 or more is a\n"
            "cluster. The representative is the member that came first in input order.\n"
            "Clusters are listed largest first (ties: input order of the representative).\n"
            "INPUT is an HTML file, a directory (walked for *.html, *.htm, *.warc,\n"
            "*.warc.gz), a WARC file (ids: the target URIs) or -. Or INPUT is a crawl's\n"
            "log (JSON Lines, simcrawl crawl --log) or state directory (--state DIR): the\n"
            "clusters are then the crawl's own decisions, each kept page with the pages\n"
            "dropped as its near or exact duplicates (duplicate_of), as crawl --report.\n"
            "\n"
            "options:\n"
            "  --k N                      the largest distance of a link, 0..7 (default 3)\n"
            "  --method simhash|minhash   minhash: documents are linked when the estimated\n"
            "                             Jaccard similarity of their word shingles is >=\n"
            "                             --threshold; members show their estimate against\n"
            "                             the representative instead of the distance (text\n"
            "                             and jsonl; html: a Jaccard column, with the exact\n"
            "                             Jaccard of the shingle sets, and the histogram\n"
            "                             over similarity; see simcrawl pairs --help)\n"
            "  --threshold J              minhash: the Jaccard threshold (default 0.8)\n"
            "  --shingle-words N          minhash: words per shingle (default 5)\n"
            "  --num-perm N               minhash: values per signature (default 128)\n"
            "  --format text|jsonl|html   text (default):\n"
            "                               cluster 1: 3 documents\n"
            "                                 0<TAB>REPRESENTATIVE\n"
            "                                 2<TAB>MEMBER   (distance to the representative)\n"
            "                             jsonl: one cluster a line, {\"cluster\": 1,\n"
            "                               \"size\": 3, \"representative\": ID, \"members\":\n"
            "                               [{\"id\": ID, \"distance\": D}, ...]}\n"
            "                             html: one self-contained report page (no script,\n"
            "                               nothing fetched): what was analysed, when, k;\n"
            "                               each cluster with titles linked to the pages,\n"
            "                               exact copies and near-duplicates marked, members\n"
            "                               nearest first, a word diff against the\n"
            "                               representative; pages not fingerprinted and why.\n"
            "                               Its date is SOURCE_DATE_EPOCH when set\n"
            "  --fingerprints FILE        also read \"HEX ID\" lines (see simcrawl pairs; with\n"
            "                             --method minhash a MinHash signature list)\n"
            "  --max-depth N              skip elements nested deeper than N (default 256);\n"
            "                             a page cut so is named on stderr. It changes the\n"
            "                             fingerprints: keep it the same for one index\n"
            "  --no-templates             fingerprint the whole main text of each page (by\n"
            "                             default the blocks repeated on many pages of a host\n"
            "                             are left out: see simcrawl pairs --help)\n"
            "  --quiet                    no counts of skipped documents on stderr\n"
            "  -h, --help                 this help\n"
            "  --                         end of options\n"
            "\n"
            "A member can be farther than k from its representative (it is linked through\n"
            "others). exit status: 0 success, 1 usage error, 2 some input failed (named on\n"
            "stderr; the others are still clustered), or an error.\n");
}

static void print_text(struct dedup_index *idx, const struct dedup_clusters *c)
{
    for (size_t i = 0; i < dedup_clusters_count(c); i++) {
        size_t n = dedup_clusters_size(c, i);
        uint64_t rep = dedup_index_fingerprint(idx, dedup_clusters_member(c, i, 0));
        printf("cluster %zu: %zu documents\n", i + 1, n);
        for (size_t j = 0; j < n; j++) {
            uint32_t m = dedup_clusters_member(c, i, j);
            size_t len;
            const char *id = dedup_index_id(idx, m, &len);
            printf("  %u\t", dedup_distance(rep, dedup_index_fingerprint(idx, m)));
            cli_put_text_id(stdout, id, len);
            putchar('\n');
        }
    }
}

static void print_jsonl(struct dedup_index *idx, const struct dedup_clusters *c)
{
    for (size_t i = 0; i < dedup_clusters_count(c); i++) {
        size_t n = dedup_clusters_size(c, i), len;
        uint32_t r = dedup_clusters_member(c, i, 0);
        uint64_t rep = dedup_index_fingerprint(idx, r);
        const char *id = dedup_index_id(idx, r, &len);
        printf("{\"cluster\": %zu, \"size\": %zu, \"representative\": ", i + 1, n);
        cli_put_json_string(stdout, id, len);
        fputs(", \"members\": [", stdout);
        for (size_t j = 0; j < n; j++) {
            uint32_t m = dedup_clusters_member(c, i, j);
            id = dedup_index_id(idx, m, &len);
            fputs(j ? ", {\"id\": " : "{\"id\": ", stdout);
            cli_put_json_string(stdout, id, len);
            printf(", \"distance\": %u}", dedup_distance(rep, dedup_index_fingerprint(idx, m)));
        }
        fputs("]}\n", stdout);
    }
}

/* The html format's callback: the index's stage and the report's texts, in one order. */
struct html_stage {
    struct cli_stage *stage;
    struct cli_report *report;
};

static int stage_and_report(void *userdata, const struct cli_doc *doc)
{
    struct html_stage *h = userdata;
    return cli_stage_add(h->stage, doc) || cli_report_doc(h->report, doc);
}

/* clusters over crawl logs and states (cli/crawl_report.c): the crawl's decisions. */
static int crawl_clusters(const struct cli_args *a)
{
    if (a->mh.minhash || a->nfplists)
        return cli_usage_error(CMD, "a crawl's log or state holds its simhash decisions: "
                                    "no --method minhash or --fingerprints with it");
    for (int i = 0; i < a->npaths; i++)
        if (!cli_crawl_input(a->paths[i]))
            return cli_usage_error(CMD,
                                   "%s is not a crawl log or state: give crawl logs and "
                                   "states only, or pages and WARCs only",
                                   a->paths[i]);
    struct cli_crawl_report *r = cli_crawl_report_new(CMD);
    struct cli_report *report = NULL;
    struct dedup_index *idx = NULL;
    struct dedup_clusters *c = NULL;
    int html = strcmp(a->format, "html") == 0, status = CLI_RUNTIME;
    if (!r || (html && !(report = cli_report_new(CMD)))) {
        cli_error(CMD, "out of memory");
        goto done;
    }
    if (html)
        cli_report_inputs(report, NULL, 0, a->paths, a->npaths);
    int failed = 0;
    for (int i = 0; i < a->npaths; i++)
        failed |= cli_crawl_report_load(r, a->paths[i]) != CLI_OK;
    if (cli_crawl_report_clusters(r, (unsigned)a->k, report, &idx, &c) != CLI_OK)
        goto done;
    if (strcmp(a->format, "jsonl") == 0)
        print_jsonl(idx, c);
    else if (html)
        cli_report_write(stdout, report, idx, c, (unsigned)a->k);
    else
        print_text(idx, c);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        goto done;
    }
    status = failed ? CLI_RUNTIME : CLI_OK;
done:
    dedup_clusters_free(c);
    dedup_index_free(idx);
    cli_report_free(report);
    cli_crawl_report_free(r);
    return status;
}

int cmd_clusters(int argc, char **argv)
{
    static const char *const formats[] = {"text", "jsonl", "html", NULL};
    struct cli_args a;
    struct cli_inputs in;
    struct cli_stage st = {.cmd = CMD};
    struct dedup_index *idx = NULL;
    struct dedup_clusters *c = NULL;
    struct dedup_templates *own = NULL;
    struct cli_report *report = NULL;
    int status = cli_args_parse(CMD, argc, argv,
                                CLI_ARG_FORMAT | CLI_ARG_NEED_INPUT | CLI_ARG_TEMPLATES |
                                    CLI_ARG_MAX_DEPTH | CLI_ARG_METHOD | CLI_ARG_QUIET,
                                formats, usage, &a);
    if (status == CLI_OK && !a.help && a.npaths && cli_crawl_input(a.paths[0])) {
        status = crawl_clusters(&a); /* a crawl's log or state */
        cli_args_release(&a);
        return status;
    }
    if (status != CLI_OK || a.help || a.mh.minhash) {
        if (status == CLI_OK && !a.help)
            status = cli_mh_clusters(&a); /* cli/minhash.c */
        cli_args_release(&a);
        return status;
    }
    cli_inputs_init(&in, CMD);
    in.fp_opts.max_depth = (unsigned)a.max_depth;
    in.quiet = a.quiet;
    int html = strcmp(a.format, "html") == 0;
    if (html) {
        if (!(report = cli_report_new(CMD))) {
            cli_error(CMD, "out of memory");
            status = CLI_RUNTIME;
            goto done;
        }
        cli_report_inputs(report, a.fplists, a.nfplists, a.paths, a.npaths);
        in.fp_opts.keep_doc = 1; /* titles and main texts for the report */
        in.skip = cli_report_skip;
        in.skip_userdata = report;
    }
    struct html_stage hs = {&st, report};
    if (!a.no_templates && cli_inputs_learn_templates(&in, NULL, &own) != CLI_OK) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (cli_inputs_run(&in, a.fplists, a.nfplists, a.paths, a.npaths,
                       html ? stage_and_report : cli_stage_add, html ? (void *)&hs : &st) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (st.n == 0) {
        cli_error(CMD, "no documents to cluster: the inputs held no pages or fingerprints");
        status = CLI_RUNTIME;
        goto done;
    }
    status = cli_index_create(CMD, (unsigned)a.k, st.n, 0, &idx);
    if (status == CLI_OK)
        status = cli_index_add_stage(CMD, idx, &st);
    if (status != CLI_OK)
        goto done;
    cli_stage_release(&st);
    enum dedup_code rc = dedup_index_clusters(idx, (unsigned)a.k, cli_threads(), &c);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot cluster: %s", dedup_strerror(rc));
        status = CLI_RUNTIME;
        goto done;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    if (strcmp(a.format, "jsonl") == 0)
        print_jsonl(idx, c);
    else if (html)
        cli_report_write(stdout, report, idx, c, (unsigned)a.k);
    else
        print_text(idx, c);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
        goto done;
    }
    if (in.failed)
        status = CLI_RUNTIME;
done:
    cli_report_free(report);
    dedup_templates_free(own);
    dedup_clusters_free(c);
    dedup_index_free(idx);
    cli_stage_release(&st);
    cli_inputs_release(&in);
    cli_args_release(&a);
    return status;
}

/*
 * bench_pipeline: the extraction pipeline against libxml2 parsing alone, on the same pages
 * held in memory, in one run (docs/BENCHMARKS.md "## Extraction pipeline").
 *
 *   parse     htmlReadMemory() (tree parser, recover, no network, no messages, COMPACT)
 *             + xmlFreeDoc(): the ceiling of a tree-based design
 *   extract   extract_doc_parse() (charset, SAX walk, boilerplate scoring, links)
 *   pipeline  extract_doc_parse + extract_tokens + dedup_features_from_tokens +
 *             dedup_simhash: what `simcrawl fingerprint` does per page
 *   sax       libxml2's SAX tokenizer with empty handlers: the floor of any design on
 *             libxml2 (for reference; extract/ runs on it)
 *
 * Each is timed over all pages, --runs times (default 5); the median run is reported in
 * MB/s and pages/s, with the pipeline/parse ratio. usage: bench_pipeline [--runs N] LIST
 * (LIST: a file naming one HTML page a line).
 *
 * bench_pipeline --sax-files FILE...: reads and SAX-parses each file once (text and
 * element handlers set but empty, extract/'s options) and exits: the libxml2-only floor
 * row of tests/bench/bench_crawl.sh, timed from outside like the crawl.
 */
#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dedup/dedup.h"
#include "extract/extract.h"
#include "extract/extract_int.h" /* EX_HTML_PARSE_OPTIONS: the parse extract/ does */

#include "tests/bench/bench.h"

#define MAX_PAGES 100000
#define MAX_RUNS 101

static unsigned long sink; /* keeps the work observable */

static int run_parse(const struct bench_page *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        htmlDocPtr doc = htmlReadMemory(p[i].data, (int)p[i].len, NULL, NULL,
                                        HTML_PARSE_RECOVER | HTML_PARSE_NONET |
                                            HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                            HTML_PARSE_COMPACT);
        if (!doc)
            return -1;
        sink += (unsigned long)(uintptr_t)doc->children;
        xmlFreeDoc(doc);
    }
    return 0;
}

/* libxml2's SAX tokenizer with empty handlers: the floor under any libxml2-based design */
static void sax_nothing(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    (void)ctx;
    (void)name;
    (void)atts;
}

static int run_sax(const struct bench_page *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(p[i].data, (int)p[i].len);
        if (!ctxt)
            return -1;
        htmlSAXHandler sax;
        memset(&sax, 0, sizeof sax);
        sax.startElement = sax_nothing;
        memcpy(ctxt->sax, &sax, sizeof sax);
        htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NONET | HTML_PARSE_NOERROR |
                                     HTML_PARSE_NOWARNING);
        htmlParseDocument(ctxt);
        sink += (unsigned long)ctxt->nbChars;
        htmlFreeParserCtxt(ctxt);
    }
    return 0;
}

static void sax_text(void *ctx, const xmlChar *ch, int len)
{
    (void)ctx;
    (void)ch;
    sink += (unsigned long)len;
}

static void sax_end(void *ctx, const xmlChar *name)
{
    (void)ctx;
    (void)name;
}

/* Each file read and parsed once as extract/walk.c parses (same options, UTF-8, handlers
 * for elements and text that do nothing). */
static int sax_files(char **files, int n)
{
    xmlInitParser();
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *data = bench_slurp(files[i], &len);
        if (!data || len > INT32_MAX) {
            fprintf(stderr, "cannot read %s\n", files[i]);
            free(data);
            return 2;
        }
        htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(data, (int)len);
        if (!ctxt) {
            free(data);
            return 2;
        }
        htmlSAXHandler sax;
        memset(&sax, 0, sizeof sax);
        sax.startElement = sax_nothing;
        sax.endElement = sax_end;
        sax.characters = sax_text;
        sax.ignorableWhitespace = sax_text;
        sax.initialized = 1;
        memcpy(ctxt->sax, &sax, sizeof sax);
        htmlCtxtUseOptions(ctxt, EX_HTML_PARSE_OPTIONS);
        xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8);
        htmlParseDocument(ctxt);
        htmlFreeParserCtxt(ctxt);
        free(data);
    }
    return sink == 1; /* (never: keeps the handlers' work observable) */
}

static int run_extract(const struct bench_page *p, size_t n, int full, struct dedup_features *feat)
{
    for (size_t i = 0; i < n; i++) {
        struct extract_doc *doc = NULL;
        enum extract_code rc = extract_doc_parse(p[i].data, p[i].len, NULL, &doc);
        if (rc != EXTRACT_OK) {
            if (rc == EXTRACT_ENOTEXT || rc == EXTRACT_EEMPTY)
                continue;
            return -1;
        }
        size_t len = 0;
        const char *text = extract_doc_text(doc, &len);
        sink += len;
        if (full) {
            char *tok = NULL;
            size_t tl = 0, nt = 0;
            if (extract_tokens(text, len, &tok, &tl, &nt) != EXTRACT_OK) {
                extract_doc_free(doc);
                return -1;
            }
            enum dedup_code dc = dedup_features_from_tokens(feat, tok, tl, NULL);
            if (dc == DEDUP_OK)
                sink += (unsigned long)dedup_simhash(feat);
            else if (dc != DEDUP_ETOOSHORT) {
                free(tok);
                extract_doc_free(doc);
                return -1;
            }
            free(tok);
        }
        extract_doc_free(doc);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 5;
    const char *list = NULL;
    extract_xml_alloc_setup(); /* as simcrawl's main() does */
    if (argc >= 2 && strcmp(argv[1], "--sax-files") == 0) {
        int first = argc >= 3 && strcmp(argv[2], "--") == 0 ? 3 : 2;
        return sax_files(argv + first, argc - first);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else
            list = argv[i];
    }
    if (!list || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_pipeline [--runs N] LIST\n");
        return 1;
    }
    static struct bench_page pages[MAX_PAGES];
    size_t bytes = 0;
    size_t n = bench_read_pages("bench_pipeline", list, pages, MAX_PAGES, &bytes);
    if (n == 0)
        return 2;
    xmlInitParser();
    struct dedup_features *feat = dedup_features_new();
    if (!feat)
        return 2;
    double t[4][MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        /* interleaved, so drift on a shared machine hits all stages alike */
        double t0 = bench_now();
        if (run_parse(pages, n) != 0)
            return 2;
        double t1 = bench_now();
        if (run_extract(pages, n, 0, feat) != 0)
            return 2;
        double t2 = bench_now();
        if (run_extract(pages, n, 1, feat) != 0)
            return 2;
        double t3 = bench_now();
        if (run_sax(pages, n) != 0)
            return 2;
        double t4 = bench_now();
        t[0][r] = t1 - t0;
        t[1][r] = t2 - t1;
        t[2][r] = t3 - t2;
        t[3][r] = t4 - t3;
    }
    static const char *const names[4] = {"libxml2 htmlReadMemory + xmlFreeDoc",
                                         "extract_doc_parse",
                                         "extract + tokens + features + simhash",
                                         "(libxml2 SAX parse, empty handlers)"};
    double med[4];
    printf("%zu pages, %.1f MB, median of %d runs\n", n, bytes / 1e6, runs);
    printf("%-40s %8s %10s %10s %7s\n", "stage", "seconds", "MB/s", "pages/s", "ratio");
    for (int k = 0; k < 4; k++) {
        qsort(t[k], (size_t)runs, sizeof t[k][0], bench_cmp_double);
        med[k] = t[k][runs / 2];
        printf("%-40s %8.3f %10.1f %10.0f %7.2f\n", names[k], med[k], bytes / 1e6 / med[k],
               n / med[k], med[0] / med[k]);
    }
    dedup_features_free(feat);
    bench_pages_free(pages, n);
    fprintf(stderr, "(checksum %lu)\n", sink);
    return 0;
}

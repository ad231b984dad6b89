/*
 * simcrawl: the one binary. Dispatches `simcrawl CMD ...` to cmd_CMD() in cli/cmd_*.c;
 * the subcommands are thin: options, wiring of the extract/, dedup/ and crawler/
 * libraries, output. The command line is a contract: options, output formats and exit
 * statuses are only ever added to (README.md documents each subcommand; tests/cli/ checks it).
 * The small helpers of cli/cli.h the commands share (diagnostics, number parsing, the
 * option parser) are cli/options.c's, so that the fuzz targets link them without main().
 */
#include "cli/cli.h"
#include "extract/extract.h"
#include "filter/simcrawl.h"

#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    /* each subcommand adds its line here when it lands */
    {"extract", cmd_extract, "main text, links and metadata of one HTML page"},
    {"fingerprint", cmd_fingerprint, "64-bit simhash of each page, one line each (like sha256sum)"},
    {"compare", cmd_compare, "how similar two pages are: distance, cosine, Jaccard, verdict"},
    {"query", cmd_query, "which indexed documents are near-duplicates of a page"},
    {"index", cmd_index, "build, extend (add) or describe (stats) a saved index"},
    {"pairs", cmd_pairs, "every pair of documents within k, each once"},
    {"clusters", cmd_clusters, "near-duplicate clusters with representatives (text, jsonl, html)"},
    {"dedup", cmd_dedup,
     "drop near-duplicate pages from WARC archives, keep the first of each group"},
    {"crawl", cmd_crawl, "crawl from seed URLs, politely, dropping near-duplicates (WARC + log)"},
    {"serve", cmd_serve, "the HTTP dedup service: check pages against one shared index"},
    {"robots", cmd_robots, "is a URL allowed by a robots.txt (exit 0 allowed, 1 disallowed)"},
    {NULL, NULL, NULL}};

static void usage(FILE *out)
{
    fprintf(out, "usage: simcrawl [--help] [--version] COMMAND [ARGS]\n\n"
                 "A near-duplicate-aware web crawler and dedup filter.\n\ncommands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(out, "  %-12s %s\n", c->name, c->summary);
    fprintf(out, "\n'simcrawl COMMAND --help' describes one command. Options may come before\n"
                 "or after the operands; '--' ends them; long options are spelled out in full.\n"
                 "--quiet: no progress and no summary on stderr (results and errors stay).\n"
                 "exit status: 0 success, 1 usage error, 2 runtime error\n"
                 "(robots: 0 allowed, 1 disallowed, 2 usage or runtime error).\n");
}

/* The process-wide setup the libraries leave to the program: libcurl's global state
 * (crawl, dedup's robots and fetches) and libxml2's allocators (speed only). */
static int run(const struct command *c, int argc, char **argv)
{
    extract_xml_alloc_setup();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "simcrawl %s: cannot initialise libcurl\n", c->name);
        return CLI_RUNTIME;
    }
    int rc = c->run(argc, argv);
    curl_global_cleanup();
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("simcrawl %s\n", simcrawl_version());
        return CLI_OK;
    }
    for (const struct command *c = commands; c->name; c++) {
        if (strcmp(argv[1], c->name) != 0)
            continue;
        /* --version after any command, as before it (up to "--": after it, a name) */
        for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
            if (strcmp(argv[i], "--version") == 0) {
                printf("simcrawl %s\n", simcrawl_version());
                return CLI_OK;
            }
        return run(c, argc - 1, argv + 1);
    }
    fprintf(stderr, "simcrawl: '%s' is not a command; see 'simcrawl --help'\n", argv[1]);
    return CLI_USAGE;
}

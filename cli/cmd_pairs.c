/*
 * simcrawl pairs [--k N] [--format text|jsonl] [--index FILE] [--fingerprints FILE] INPUT...
 *
 * Problem 3 of DESIGN.md: every pair of documents within Hamming distance k, each pair once,
 * a before b in input order, sorted by (a, b). The fingerprints go into a block-permuted
 * table index (dedup/index.c) whose design is chosen for their number, and
 * dedup_index_pairs() lists the pairs using both cores.
 * With --index FILE the saved index's documents come first (they are "earlier"), only the
 * pairs involving a new input are printed, and the new inputs are added to FILE.
 * Output is written through a 1 MiB stdout buffer with a small JSON string escaper of our
 * own (cli_put_json_string): one line per pair at millions of lines a second.
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/minhash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "pairs"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl pairs [options] INPUT...\n"
            "\n"
            "Prints every pair of documents whose fingerprints are within Hamming distance k,\n"
            "each pair once, the earlier input first, sorted by input order.\n"
            "INPUT is an HTML file, a directory (walked in name order for *.html, *.htm,\n"
            "*.warc, *.warc.gz), a WARC file (each HTML response record; the id is its\n"
            "WARC-Target-URI) or - (a page on standard input); other ids are the paths.\n"
            "\n"
            "options:\n"
            "  --k N                 the largest distance, 0..7 (default 3)\n"
            "  --method simhash|minhash\n"
            "                        simhash (default): fingerprints within --k;\n"
            "                        minhash: pairs whose estimated Jaccard similarity of\n"
            "                        their word-shingle sets is >= --threshold (MinHash\n"
            "                        signatures, LSH bands; docs/MINHASH.md); text output\n"
            "                        is JACCARD<TAB>A<TAB>B, jsonl {\"a\", \"b\", \"jaccard\"}\n"
            "  --threshold J         minhash: the Jaccard threshold, above 0 and at most 1\n"
            "                        (default 0.8; with --index: the index's)\n"
            "  --shingle-words N     minhash: words per shingle, 1..32 (default 5)\n"
            "  --num-perm N          minhash: values per signature, 1..1024 (default 128)\n"
            "  --format text|jsonl   text (default): DISTANCE<TAB>A<TAB>B per line;\n"
            "                        jsonl: {\"a\": A, \"b\": B, \"distance\": D} per line\n"
            "  --fingerprints FILE   also read precomputed fingerprints: lines \"HEX ID\"\n"
            "                        (16 hex digits, spaces, the id; the output of\n"
            "                        'simcrawl fingerprint'); - is standard input; repeatable.\n"
            "                        Lists are read before the INPUTs.\n"
            "  --index FILE          compare with a saved index too (its documents count as\n"
            "                        earlier), print only pairs with a new input, then add the\n"
            "                        new inputs to FILE (made if missing); --k defaults to\n"
            "                        the index's k when that is smaller than 3; the\n"
            "                        index's template table is extended and saved with it\n"
            "  --lock-wait SECONDS   with --index: how long to wait while another writer\n"
            "                        holds FILE.lock (default %ld; 0: fail at once, exit 2)\n"
            "  --max-depth N         skip elements nested deeper than N (default 256);\n"
            "                        a page cut so is named on stderr. It changes the\n"
            "                        fingerprints: keep it the same for one index\n"
            "  --no-templates        fingerprint the whole main text of each page; by default\n"
            "                        text blocks on >= 3 pages and >= 20%% of the pages of\n"
            "                        one host (files: of all the inputs) are the site's\n"
            "                        template and left out (two passes over the inputs;\n"
            "                        docs/FINGERPRINT.md, Template blocks)\n"
            "  -h, --help            this help\n"
            "  --                    end of options\n"
            "\n"
            "In text output, control characters and backslashes in ids are written as \\xHH\n"
            "and \\\\. A second document with an id already seen is skipped (the first is\n"
            "kept).\n"
            "exit status: 0 success, 1 usage error, 2 some input could not be read or\n"
            "fingerprinted (named on stderr; the others are still compared), or an error\n"
            "(the --index FILE stayed locked by another writer, ...).\n",
            CLI_LOCK_WAIT_DEFAULT);
}

struct out_ctx {
    struct dedup_index *idx;
    int jsonl;
};

static int print_pair(void *userdata, uint32_t a, uint32_t b, unsigned distance)
{
    struct out_ctx *o = userdata;
    size_t la, lb;
    const char *ia = dedup_index_id(o->idx, a, &la), *ib = dedup_index_id(o->idx, b, &lb);
    if (o->jsonl) {
        fputs("{\"a\": ", stdout);
        cli_put_json_string(stdout, ia, la);
        fputs(", \"b\": ", stdout);
        cli_put_json_string(stdout, ib, lb);
        fprintf(stdout, ", \"distance\": %u}\n", distance);
    } else {
        fprintf(stdout, "%u\t", distance);
        cli_put_text_id(stdout, ia, la);
        putc('\t', stdout);
        cli_put_text_id(stdout, ib, lb);
        putc('\n', stdout);
    }
    return ferror(stdout) ? 1 : 0;
}

int cmd_pairs(int argc, char **argv)
{
    static const char *const formats[] = {"text", "jsonl", NULL};
    struct cli_args a;
    struct cli_inputs in;
    struct cli_stage st = {.cmd = CMD};
    struct dedup_index *idx = NULL;
    struct dedup_templates *own = NULL; /* the table until there is an index to hold it */
    struct dedup_lock *lock = NULL;
    int status = cli_args_parse(CMD, argc, argv,
                                CLI_ARG_FORMAT | CLI_ARG_INDEX | CLI_ARG_NEED_INPUT |
                                    CLI_ARG_TEMPLATES | CLI_ARG_MAX_DEPTH | CLI_ARG_LOCK_WAIT |
                                    CLI_ARG_METHOD,
                                formats, usage, &a);
    if (status != CLI_OK || a.help || a.minhash) {
        if (status == CLI_OK && !a.help)
            status = cli_mh_pairs(&a); /* cli/minhash.c */
        cli_args_release(&a);
        return status;
    }
    cli_inputs_init(&in, CMD);
    in.fp_opts.max_depth = (unsigned)a.max_depth;
    uint32_t old_docs = 0;
    int missing = 0;
    if (a.index) {
        /* held until after the save (a read-modify-write of the file) */
        status = cli_index_lock(CMD, a.index, a.lock_wait, &lock);
        if (status != CLI_OK)
            goto done;
        status = cli_index_load(CMD, a.index, 1, &idx, &missing);
        if (status != CLI_OK)
            goto done;
        if (idx && !a.k_set && (unsigned)a.k > dedup_index_k(idx))
            a.k = dedup_index_k(idx); /* default: the index's k when it is smaller */
        if (idx && (unsigned)a.k > dedup_index_k(idx)) {
            status = cli_usage_error(CMD, "index %s answers k <= %u only, not --k %ld",
                                     a.index, dedup_index_k(idx), a.k);
            goto done;
        }
        if (idx) {
            old_docs = dedup_index_doc_count(idx);
            if (cli_inputs_mark_index(&in, idx) != 0) {
                status = CLI_RUNTIME;
                goto done;
            }
        }
    }
    if (!a.no_templates && cli_inputs_learn_templates(&in, idx, &own) != CLI_OK) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (cli_inputs_run(&in, a.fplists, a.nfplists, a.paths, a.npaths, cli_stage_add, &st) !=
        0) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (st.n == 0 && old_docs == 0) {
        cli_error(CMD, "no documents to compare: the inputs held no pages or fingerprints");
        status = CLI_RUNTIME;
        goto done;
    }
    if (!idx) {
        status = cli_index_create(CMD, (unsigned)a.k, st.n, 0, &idx);
        if (status != CLI_OK)
            goto done;
        dedup_index_set_templates(idx, own); /* saved with it (--index) */
        own = NULL;
    }
    status = cli_index_add_stage(CMD, idx, &st);
    if (status != CLI_OK)
        goto done;
    cli_stage_release(&st);

    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    struct out_ctx o = {idx, strcmp(a.format, "jsonl") == 0};
    int stopped = 0;
    enum dedup_code rc = dedup_index_pairs(idx, (unsigned)a.k, cli_threads(), old_docs,
                                           print_pair, &o, &stopped);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot list the pairs: %s", dedup_strerror(rc));
        status = CLI_RUNTIME;
        goto done;
    }
    if (fflush(stdout) != 0 || ferror(stdout) || stopped) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
        goto done;
    }
    if (a.index) {
        status = cli_index_save(CMD, idx, a.index);
        if (status != CLI_OK)
            goto done;
    }
    if (in.failed)
        status = CLI_RUNTIME;
done:
    fflush(stdout);
    dedup_lock_release(lock);
    dedup_templates_free(own);
    dedup_index_free(idx);
    cli_stage_release(&st);
    cli_inputs_release(&in);
    cli_args_release(&a);
    return status;
}

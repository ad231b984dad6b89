/*
 * simcrawl query --index FILE [--k N] [--format text|jsonl] [--fingerprints FILE] PAGE...
 *
 * Which documents of a saved index are near-duplicates of this page (README.md, "simcrawl
 * query")? Each PAGE (an HTML file, a directory of them, -, or a --fingerprints list) is
 * fingerprinted and looked up with dedup_index_query_many() (pages in batches of 4,096;
 * with --top one at a time, dedup_index_query()): every indexed id within k, with
 * its distance, nearest first (ties: the earlier indexed document first). The index is
 * mapped read-only and not changed.
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/minhash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "query"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl query --index FILE [options] PAGE...\n"
            "\n"
            "For each PAGE, lists every document of the saved index FILE whose fingerprint\n"
            "is within Hamming distance k, nearest first. PAGE is an HTML file, a directory\n"
            "(walked for *.html, *.htm, *.warc, *.warc.gz), a WARC file (each HTML\n"
            "response) or - (standard input).\n"
            "\n"
            "options:\n"
            "  --index FILE          the index (made by 'simcrawl index add'); required\n"
            "  --k N                 the largest distance, 0..7, at most the index's k\n"
            "                        (default 3, or the index's k if smaller)\n"
            "  --top N               the N nearest only (1..1000000); a page with fewer\n"
            "                        says so on stderr (jsonl: \"top\" and \"found\")\n"
            "  --method simhash|minhash\n"
            "                        minhash: FILE is a minhash index ('index add --method\n"
            "                        minhash'); matches are the documents whose estimated\n"
            "                        Jaccard similarity is >= --threshold, most similar\n"
            "                        first, as PAGE<TAB>JACCARD<TAB>ID (jsonl: \"jaccard\")\n"
            "  --threshold J         minhash: the threshold (default: the index's)\n"
            "  --format text|jsonl   text (default): PAGE<TAB>DISTANCE<TAB>ID per match,\n"
            "                        nothing for a page without a match;\n"
            "                        jsonl: one line per page, {\"page\": PAGE, \"fingerprint\":\n"
            "                        HEX, \"matches\": [{\"id\": ID, \"distance\": D}, ...]}\n"
            "  --fingerprints FILE   query with precomputed \"HEX ID\" lines too (with\n"
            "                        --method minhash a MinHash signature list)\n"
            "  --max-depth N         skip elements nested deeper than N (default 256);\n"
            "                        a page cut so is named on stderr. It changes the\n"
            "                        fingerprints: keep it the same for one index\n"
            "  --no-templates        fingerprint whole main texts; by default the template\n"
            "                        blocks saved in the index are left out, as when the\n"
            "                        index was made (the index is not changed)\n"
            "  --quiet               no counts of skipped documents on stderr\n"
            "  -h, --help            this help\n"
            "  --                    end of options\n"
            "\n"
            "exit status: 0 success (with or without matches), 1 usage error, 2 a page or\n"
            "the index could not be read (named on stderr).\n");
}

#define QUERY_BATCH 4096 /* pages asked at once (dedup_index_query_many's pipeline) */

struct query_ctx {
    struct dedup_index *idx;
    unsigned k;
    size_t top; /* --top N, 0: all */
    int jsonl;
    struct dedup_matches m;
    /* the pages waiting for their batch (without --top): fingerprint, id (in ids) */
    uint64_t fp[QUERY_BATCH];
    size_t id_off[QUERY_BATCH + 1];
    size_t n;
    char *ids;
    size_t ids_cap;
};

/* The lines of one page's matches m (nearest first). 0, or 1 on a write error. */
static int print_matches(struct query_ctx *q, const char *pid, size_t plen, uint64_t fp,
                         const struct dedup_matches *m)
{
    size_t n = q->top && m->n > q->top ? q->top : m->n; /* nearest first: the N nearest */
    if (q->jsonl) {
        char hex[17];
        fputs("{\"page\": ", stdout);
        cli_put_json_string(stdout, pid, plen);
        printf(", \"fingerprint\": \"%s\", \"matches\": [", dedup_fingerprint_format(fp, hex));
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *id = dedup_index_id(q->idx, m->v[i].doc, &len);
        if (q->jsonl) {
            fputs(i ? ", {\"id\": " : "{\"id\": ", stdout);
            cli_put_json_string(stdout, id, len);
            printf(", \"distance\": %u}", m->v[i].distance);
        } else {
            cli_put_text_id(stdout, pid, plen);
            printf("\t%u\t", m->v[i].distance);
            cli_put_text_id(stdout, id, len);
            putchar('\n');
        }
    }
    if (q->jsonl && q->top)
        printf("], \"top\": %zu, \"found\": %zu}\n", q->top, n);
    else if (q->jsonl)
        fputs("]}\n", stdout);
    if (q->top && n < q->top)
        cli_error(CMD, "%s: %zu of --top %zu: only %zu indexed document%s within k = %u", pid, n,
                  q->top, n, n == 1 ? "" : "s", q->k);
    return ferror(stdout) ? 1 : 0;
}

/* dedup_query_fn: page i of the batch answered. */
static int batch_answer(void *userdata, size_t i, enum dedup_code rc, const struct dedup_matches *m)
{
    struct query_ctx *q = userdata;
    const char *pid = q->ids + q->id_off[i];
    if (rc != DEDUP_OK) {
        cli_error(CMD, "%s: %s", pid, dedup_strerror(rc));
        return 1;
    }
    return print_matches(q, pid, q->id_off[i + 1] - q->id_off[i] - 1, q->fp[i], m);
}

/* Asks the index about the waiting pages and prints their answers in order. 0, or 1. */
static int query_flush(struct query_ctx *q)
{
    if (!q->n)
        return 0;
    int stopped = 0;
    enum dedup_code rc =
        dedup_index_query_many(q->idx, q->n, q->fp, q->k, batch_answer, q, &stopped);
    if (rc != DEDUP_OK)
        cli_error(CMD, "%s: %s", q->ids, dedup_strerror(rc));
    q->n = 0;
    return rc != DEDUP_OK || stopped;
}

static int query_one(void *userdata, const struct cli_doc *doc)
{
    struct query_ctx *q = userdata;
    if (!q->top) {
        /* batched: the probes of many pages overlap their memory reads; with --top one at
         * a time, so that its notes on stderr keep their place among the inputs' */
        size_t at = q->id_off[q->n], need = at + doc->id_len + 1;
        if (need > q->ids_cap) {
            size_t cap = q->ids_cap ? q->ids_cap : 65536;
            while (cap < need)
                cap *= 2;
            char *p = realloc(q->ids, cap);
            if (!p) {
                cli_error(CMD, "%s: %s", doc->id, dedup_strerror(DEDUP_ENOMEM));
                return 1;
            }
            q->ids = p;
            q->ids_cap = cap;
        }
        memcpy(q->ids + at, doc->id, doc->id_len + 1);
        q->fp[q->n++] = doc->fp;
        q->id_off[q->n] = need;
        return q->n == QUERY_BATCH ? query_flush(q) : 0;
    }
    enum dedup_code rc = dedup_index_query(q->idx, doc->fp, q->k, &q->m);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "%s: %s", doc->id, dedup_strerror(rc));
        return 1;
    }
    return print_matches(q, doc->id, doc->id_len, doc->fp, &q->m);
}

int cmd_query(int argc, char **argv)
{
    static const char *const formats[] = {"text", "jsonl", NULL};
    struct cli_args a;
    struct cli_inputs in;
    struct query_ctx *q;
    int status =
        cli_args_parse(CMD, argc, argv,
                       CLI_ARG_FORMAT | CLI_ARG_INDEX | CLI_ARG_TEMPLATES | CLI_ARG_MAX_DEPTH |
                           CLI_ARG_METHOD | CLI_ARG_TOP | CLI_ARG_QUIET,
                       formats, usage, &a);
    if (status != CLI_OK || a.help) {
        cli_args_release(&a);
        return status;
    }
    if (!a.index) {
        cli_args_release(&a);
        return cli_usage_error(CMD, "--index FILE is required");
    }
    if (a.npaths == 0 && a.nfplists == 0) {
        cli_args_release(&a);
        return cli_usage_error(CMD, "no page (give PAGE... or --fingerprints FILE)");
    }
    if (a.mh.minhash) {
        status = cli_mh_query(&a); /* cli/minhash.c */
        cli_args_release(&a);
        return status;
    }
    if (!(q = calloc(1, sizeof *q))) { /* its batch is 100 KB: not on the stack */
        cli_args_release(&a);
        cli_error(CMD, "%s", dedup_strerror(DEDUP_ENOMEM));
        return CLI_RUNTIME;
    }
    cli_inputs_init(&in, CMD);
    in.fp_opts.max_depth = (unsigned)a.max_depth;
    in.quiet = a.quiet;
    in.check_duplicates = 0; /* asking twice about a page is harmless */
    status = cli_index_load(CMD, a.index, 0, &q->idx, NULL);
    if (status != CLI_OK)
        goto done;
    unsigned ik = dedup_index_k(q->idx);
    if (a.k_set && (unsigned)a.k > ik) {
        status =
            cli_usage_error(CMD, "index %s answers k <= %u only, not --k %ld", a.index, ik, a.k);
        goto done;
    }
    q->k = a.k_set ? (unsigned)a.k : (ik < DEDUP_K_DEFAULT ? ik : DEDUP_K_DEFAULT);
    q->jsonl = strcmp(a.format, "jsonl") == 0;
    q->top = (size_t)a.top;
    if (!a.no_templates) /* the index's table, read-only: pages are fingerprinted as it was */
        cli_inputs_use_templates(&in, dedup_index_templates(q->idx), 0);
    if (cli_inputs_run(&in, a.fplists, a.nfplists, a.paths, a.npaths, query_one, q) != 0 ||
        query_flush(q) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
        goto done;
    }
    if (in.failed)
        status = CLI_RUNTIME;
done:
    dedup_matches_release(&q->m);
    dedup_index_free(q->idx);
    free(q->ids);
    free(q);
    cli_inputs_release(&in);
    cli_args_release(&a);
    return status;
}

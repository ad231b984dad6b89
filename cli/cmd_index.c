/*
 * simcrawl index add FILE [--k N] [--tables N] [--lock-wait SECONDS] [--fingerprints LIST]
 *                   [INPUT...]
 * simcrawl index stats [--format text|jsonl] FILE|REDIS-URL
 *
 * Builds, extends and describes a saved index (docs/INDEX-FORMAT.md). `add` loads FILE
 * when it exists (mapped, then copied as it grows) or makes a new one whose table design
 * suits the number of inputs (or --tables), adds every input whose id is not in it yet,
 * and saves it atomically (temporary file + rename), holding FILE.lock from the load to the
 * save (cli_index_lock) so that concurrent writers lose nothing. `stats` reports the file
 * size, documents, distinct fingerprints, the design, the directory bucket sizes
 * (min/median/p99/max), candidates per probe and bytes per fingerprint.
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/minhash.h"
#include "filter/redisidx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "index"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl index add FILE [options] [INPUT...]\n"
            "       simcrawl index stats [--format text|jsonl] FILE|REDIS-URL\n"
            "\n"
            "add: adds the documents of INPUT... (HTML files, WARC files, directories\n"
            "walked for *.html/*.htm/*.warc/*.warc.gz, -, or --fingerprints lists) to the\n"
            "index FILE, which is made\n"
            "when missing, and saves it atomically. Ids already in the index are skipped\n"
            "with a warning (the first document with an id is kept); in WARC files a later\n"
            "capture of a URI already read or indexed is skipped quietly (and counted).\n"
            "stats: describes FILE: size, documents, distinct fingerprints, table design,\n"
            "bucket sizes, candidates per probe, bytes per fingerprint; or an index on\n"
            "Redis (redis://HOST[:PORT][/DB][?prefix=NAME], unix:///PATH; as simcrawl serve\n"
            "--index and the library take): documents, k, design, buckets, Redis memory.\n"
            "\n"
            "options of add:\n"
            "  --k N                 a new index answers queries up to k, 0..7 (default 3);\n"
            "                        for an existing index it must match\n"
            "  --method simhash|minhash\n"
            "                        minhash: FILE is a minhash index (signatures and LSH\n"
            "                        bands, docs/MINHASH.md), which records its method and\n"
            "                        parameters; adding with the other method is an error.\n"
            "                        stats reads either kind\n"
            "  --threshold J         minhash: a new index's Jaccard threshold, which\n"
            "                        chooses its bands (default 0.8)\n"
            "  --shingle-words N     minhash: words per shingle, 1..32 (default 5)\n"
            "  --num-perm N          minhash: values per signature, 1..1024 (default 128)\n"
            "  --tables N            a new index uses the design with N tables (k=3: 4, 10,\n"
            "                        16 or 20); default: chosen for the number of inputs\n"
            "  --fingerprints FILE   add precomputed \"HEX ID\" lines (see simcrawl pairs;\n"
            "                        with --method minhash a MinHash signature list)\n"
            "  --max-depth N         skip elements nested deeper than N (default 256);\n"
            "                        a page cut so is named on stderr. It changes the\n"
            "                        fingerprints: keep it the same for one index\n"
            "  --no-templates        fingerprint whole main texts; by default the blocks\n"
            "                        repeated on many pages of a host are counted into the\n"
            "                        index's template table (this batch first, then the\n"
            "                        pages are fingerprinted without them) and saved with it\n"
            "  --lock-wait SECONDS   how long to wait for another writer of FILE (default\n"
            "                        %ld; 0: fail at once). A writer holds FILE.lock from\n"
            "                        loading FILE to saving it, so concurrent adds lose\n"
            "                        nothing; stats and query take no lock\n"
            "  --quiet               no summary on stderr (documents added, ids already\n"
            "                        there, captures skipped); errors are still said\n"
            "  -h, --help            this help\n"
            "  --                    end of options\n"
            "\n"
            "exit status: 0 success, 1 usage error, 2 an input or the index could not be\n"
            "read or written, or FILE stayed locked by another writer (named on stderr).\n",
            CLI_LOCK_WAIT_DEFAULT);
}

static int cmd_add(int argc, char **argv)
{
    struct cli_args a;
    struct cli_inputs in;
    struct cli_stage st = {.cmd = CMD};
    struct dedup_index *idx = NULL;
    struct dedup_templates *own = NULL;
    struct dedup_lock *lock = NULL;
    int status = cli_args_parse(CMD, argc, argv,
                                CLI_ARG_TABLES | CLI_ARG_TEMPLATES | CLI_ARG_MAX_DEPTH |
                                    CLI_ARG_LOCK_WAIT | CLI_ARG_METHOD | CLI_ARG_QUIET,
                                NULL, usage, &a);
    if (status != CLI_OK || a.help) {
        cli_args_release(&a);
        return status;
    }
    if (a.npaths == 0) {
        cli_args_release(&a);
        return cli_usage_error(CMD, "add needs the index FILE");
    }
    if (a.mh.minhash) {
        if (a.tables)
            status = cli_usage_error(CMD, "--tables is for simhash indexes; minhash bands "
                                          "follow --threshold");
        else
            status = cli_mh_index_add(&a); /* cli/minhash.c */
        cli_args_release(&a);
        return status;
    }
    const char *file = a.paths[0];
    cli_inputs_init(&in, CMD);
    in.fp_opts.max_depth = (unsigned)a.max_depth;
    in.quiet = a.quiet;
    int missing = 0;
    /* held from before the load until after the save: another writer's documents are
     * either in what we load or added after our save, never overwritten */
    status = cli_index_lock(CMD, file, a.lock_wait, &lock);
    if (status != CLI_OK)
        goto done;
    status = cli_index_load(CMD, file, 1, &idx, &missing);
    if (status != CLI_OK)
        goto done;
    if (idx) {
        if (a.k_set && (unsigned)a.k != dedup_index_k(idx)) {
            status = cli_usage_error(CMD, "index %s was made for k=%u, not --k %ld", file,
                                     dedup_index_k(idx), a.k);
            goto done;
        }
        if (a.tables && (unsigned)a.tables != dedup_index_design(idx)->tables) {
            status = cli_usage_error(CMD,
                                     "index %s has %u tables; --tables applies to a new "
                                     "index only",
                                     file, dedup_index_design(idx)->tables);
            goto done;
        }
        if (cli_inputs_mark_index(&in, idx) != 0) {
            status = CLI_RUNTIME;
            goto done;
        }
    }
    if (!a.no_templates && cli_inputs_learn_templates(&in, idx, &own) != CLI_OK) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (cli_inputs_run(&in, a.fplists, a.nfplists, a.paths + 1, a.npaths - 1, cli_stage_add, &st) !=
        0) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (!idx) {
        status = cli_index_create(CMD, (unsigned)a.k, st.n, (unsigned)a.tables, &idx);
        if (status != CLI_OK)
            goto done;
        dedup_index_set_templates(idx, own);
        own = NULL;
    }
    uint32_t before = dedup_index_doc_count(idx);
    status = cli_index_add_stage(CMD, idx, &st);
    if (status != CLI_OK)
        goto done;
    status = cli_index_save(CMD, idx, file);
    if (status != CLI_OK)
        goto done;
    if (!a.quiet)
        fprintf(stderr,
                "simcrawl index: %s: %s %u documents, now %u (%llu distinct fingerprints)\n", file,
                missing ? "made with" : "added", dedup_index_doc_count(idx) - before,
                dedup_index_doc_count(idx), (unsigned long long)dedup_index_distinct_count(idx));
    if (in.failed)
        status = CLI_RUNTIME;
done:
    dedup_lock_release(lock);
    dedup_templates_free(own);
    dedup_index_free(idx);
    cli_stage_release(&st);
    cli_inputs_release(&in);
    cli_args_release(&a);
    return status;
}

/* stats of an index on Redis (filter/redisidx.h): read only, never made. */
static int redis_stats(const struct cli_args *a, const char *url)
{
    char err[512];
    struct redisidx *ix = NULL;
    struct redisidx_opts o = {.no_create = 1};
    struct redisidx_stats s;
    enum redisidx_code c = redisidx_open(url, &o, &ix, err, sizeof err);
    if (c == REDISIDX_OK && (c = redisidx_stats(ix, &s)) != REDISIDX_OK)
        snprintf(err, sizeof err, "%s", redisidx_errmsg(ix));
    redisidx_close(ix);
    if (c != REDISIDX_OK) {
        cli_error(CMD, "%s", err);
        return CLI_RUNTIME;
    }
    if (strcmp(a->format, "jsonl") == 0) {
        printf("{\"index\": ");
        cli_put_json_string(stdout, url, strlen(url));
        printf(", \"documents\": %llu, \"k\": %u, \"tables\": %u, \"design\": ",
               (unsigned long long)s.documents, s.k, s.tables);
        cli_put_json_string(stdout, s.design, strlen(s.design));
        printf(", \"bucket_bits\": %u, \"fingerprint_version\": %u, "
               "\"redis_used_memory\": %llu}\n",
               s.bucket_bits, s.fingerprint_version, (unsigned long long)s.used_memory);
    } else {
        printf("index: %s\n", url);
        printf("documents: %llu\n", (unsigned long long)s.documents);
        printf("k: %u\n", s.k);
        printf("design: %s\n", s.design);
        printf("buckets: %u key bits (%llu per table)\n", s.bucket_bits, 1ull << s.bucket_bits);
        printf("fingerprint version: %u\n", s.fingerprint_version);
        printf("redis used memory: %llu bytes (the whole server)\n",
               (unsigned long long)s.used_memory);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

static int cmd_stats(int argc, char **argv)
{
    static const char *const formats[] = {"text", "jsonl", NULL};
    struct cli_args a;
    struct dedup_index *idx = NULL;
    struct dedup_index_stats s;
    struct stat fst;
    int status = cli_args_parse(CMD, argc, argv, CLI_ARG_FORMAT, formats, usage, &a);
    if (status != CLI_OK || a.help) {
        cli_args_release(&a);
        return status;
    }
    if (a.npaths != 1 || a.nfplists || a.k_set) {
        cli_args_release(&a);
        return cli_usage_error(CMD, "stats takes one index FILE and no other input");
    }
    const char *file = a.paths[0];
    if (cli_is_redis_url(file)) {
        status = redis_stats(&a, file);
        goto done;
    }
    if (cli_file_method(file) == DEDUP_METHOD_MINHASH) {
        status = cli_mh_index_stats(&a, file); /* cli/minhash.c */
        goto done;
    }
    status = cli_index_load(CMD, file, 0, &idx, NULL);
    if (status != CLI_OK)
        goto done;
    enum dedup_code rc = dedup_index_stats(idx, &s);
    if (rc != DEDUP_OK || stat(file, &fst) != 0) {
        cli_error(CMD, "%s: %s", file, rc != DEDUP_OK ? dedup_strerror(rc) : strerror(errno));
        status = CLI_RUNTIME;
        goto done;
    }
    char design[160];
    dedup_design_describe(dedup_index_design(idx), design, sizeof design);
    double per_fp = s.distinct ? (double)s.table_bytes / (double)s.distinct : 0;
    double per_doc = s.docs ? (double)fst.st_size / (double)s.docs : 0;
    if (strcmp(a.format, "jsonl") == 0) {
        printf("{\"file\": ");
        cli_put_json_string(stdout, file, strlen(file));
        printf(", \"format_version\": %u, \"bytes\": %lld, \"documents\": %llu, "
               "\"distinct_fingerprints\": %llu, \"k\": %u, \"tables\": %u, \"design\": ",
               DEDUP_INDEX_FORMAT_VERSION, (long long)fst.st_size, (unsigned long long)s.docs,
               (unsigned long long)s.distinct, dedup_index_k(idx), s.tables);
        cli_put_json_string(stdout, design, strlen(design));
        printf(", \"directory_bits\": %u, \"bucket_min\": %llu, \"bucket_median\": %llu, "
               "\"bucket_p99\": %llu, \"bucket_max\": %llu, \"candidates_per_probe\": %.3f, "
               "\"table_bytes_per_fingerprint\": %.2f, \"file_bytes_per_document\": %.2f, "
               "\"pair_generation\": %llu}\n",
               s.dir_bits, (unsigned long long)s.bucket_min, (unsigned long long)s.bucket_median,
               (unsigned long long)s.bucket_p99, (unsigned long long)s.bucket_max,
               s.candidates_per_probe, per_fp, per_doc,
               (unsigned long long)dedup_index_pair_generation(idx));
    } else {
        printf("file: %s\n", file);
        printf("format version: %u\n", DEDUP_INDEX_FORMAT_VERSION);
        printf("size: %lld bytes\n", (long long)fst.st_size);
        printf("documents: %llu\n", (unsigned long long)s.docs);
        /* the generation of FILE.digests saved with it by dedup (0: none) */
        printf("pair generation: %llu\n", (unsigned long long)dedup_index_pair_generation(idx));
        printf("distinct fingerprints: %llu\n", (unsigned long long)s.distinct);
        printf("k: %u\n", dedup_index_k(idx));
        printf("design: %s\n", design);
        printf("directory: %u bits (%llu buckets per table)\n", s.dir_bits, 1ull << s.dir_bits);
        printf("bucket sizes: min %llu, median %llu, p99 %llu, max %llu\n",
               (unsigned long long)s.bucket_min, (unsigned long long)s.bucket_median,
               (unsigned long long)s.bucket_p99, (unsigned long long)s.bucket_max);
        printf("candidates per probe: %.3f (mean entries sharing a probe's key)\n",
               s.candidates_per_probe);
        printf("table bytes per fingerprint: %.2f (%u tables of 8 bytes + directories)\n", per_fp,
               s.tables);
        printf("file bytes per document: %.2f (tables, lists, ids)\n", per_doc);
        struct dedup_templates *t = dedup_index_templates(idx);
        printf("template hosts: %zu, blocks counted: %zu, template blocks: %zu\n",
               dedup_templates_host_count(t), dedup_templates_entry_count(t),
               dedup_templates_template_count(t));
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
    }
done:
    dedup_index_free(idx);
    cli_args_release(&a);
    return status;
}

int cmd_index(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(CMD, "give a subcommand: add or stats");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "add") == 0)
        return cmd_add(argc - 1, argv + 1);
    if (strcmp(argv[1], "stats") == 0)
        return cmd_stats(argc - 1, argv + 1);
    return cli_usage_error(CMD, "unknown subcommand '%s' (add or stats)", argv[1]);
}

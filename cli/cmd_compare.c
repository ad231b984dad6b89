/*
 * simcrawl compare [--k N] [--text] [--idf FILE] [--json] [--] A B
 *
 * How similar are two pages? Fingerprints both (cli/pipeline.c) keeping their features,
 * and prints one "key: value" line each (or, with --json, one JSON object):
 *   a, b                         the inputs as given
 *   fingerprint_a, fingerprint_b 16 hex digits (docs/FINGERPRINT.md)
 *   words_a, words_b             tokens of the main text
 *   shingles_a, shingles_b       distinct shingles (words, FINGERPRINT.md)
 *   distance                     Hamming distance of the fingerprints, 0..64
 *   simhash_similarity           1 - distance / 64
 *   cosine                       exact cosine of the weighted shingle vectors
 *   jaccard                      exact Jaccard of the sets of distinct shingles
 *   k                            the threshold
 *   verdict                      identical (same token string) | near-duplicate
 *                                (distance <= k) | different
 * Exit 0 whatever the verdict (the question was answered), 1 usage, 2 an input failed.
 */
#include "cli/cli.h"
#include "cli/pipeline.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "compare"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl compare [options] A B\n"
            "\n"
            "How similar are two pages: their fingerprints, Hamming distance, simhash\n"
            "similarity (1 - d/64), exact cosine and Jaccard of their shingle sets, and the\n"
            "verdict at k: identical, near-duplicate (distance <= k) or different.\n"
            "\n"
            "options:\n"
            "  --k N           near-duplicate threshold, 0..64 (default 3)\n"
            "  --text          inputs are plain UTF-8 text, not HTML\n"
            "  --idf FILE      weight shingles by inverse document frequency from FILE\n"
            "  --json          one JSON object instead of 'key: value' lines\n"
            "  -h, --help      this help\n"
            "  --              end of options\n"
            "\n"
            "exit status: 0 compared (whatever the verdict), 1 usage error, 2 an input\n"
            "could not be fingerprinted.\n");
}

int cmd_compare(int argc, char **argv)
{
    struct filter_fp_opts opts = {0};
    const char *idf_path = NULL;
    long k = 3;
    int json = 0, i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        enum cli_opt_kind kind = cli_opt_kind(argv, &i);
        if (kind == CLI_OPT_END)
            break;
        if (kind == CLI_OPT_HELP) {
            usage(stdout);
            return CLI_OK;
        }
        if (strcmp(a, "--text") == 0) {
            opts.text = 1;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--k") == 0) {
            const char *v = cli_opt_value(argc, argv, &i);
            if (!v || cli_parse_long(v, 0, 64, &k) != 0)
                return cli_usage_error(CMD, "--k needs a number from 0 to 64");
        } else if (strcmp(a, "--idf") == 0) {
            idf_path = cli_opt_value(argc, argv, &i);
            if (!idf_path)
                return cli_usage_error(CMD, "--idf needs a FILE");
        } else {
            return cli_usage_error(CMD, "unknown option '%s'", a);
        }
    }
    if (argc - i != 2)
        return cli_usage_error(CMD, "need exactly two inputs A B (got %d)", argc - i);
    const char *pa = argv[i], *pb = argv[i + 1];
    if (strcmp(pa, "-") == 0 && strcmp(pb, "-") == 0)
        return cli_usage_error(CMD, "standard input ('-') can be read only once");

    struct dedup_idf *idf = NULL;
    if (idf_path) {
        idf = cli_idf_load(CMD, idf_path);
        if (!idf)
            return CLI_RUNTIME;
        opts.idf = idf;
    }
    opts.keep_features = 1;
    opts.keep_tokens = 1;
    struct filter_fp_result ra, rb;
    int status = CLI_OK;
    int fa = cli_fingerprint_file(pa, &opts, &ra);
    if (fa != 0) {
        cli_error(CMD, "%s: %s", pa, ra.message);
        status = CLI_RUNTIME;
    }
    int fb = cli_fingerprint_file(pb, &opts, &rb);
    if (fb != 0) {
        cli_error(CMD, "%s: %s", pb, rb.message);
        status = CLI_RUNTIME;
    }
    if (status != CLI_OK)
        goto done;

    unsigned d = dedup_distance(ra.fingerprint, rb.fingerprint);
    double sim = 1.0 - d / 64.0;
    double cosine = dedup_features_cosine(ra.features, rb.features);
    double jaccard = dedup_features_jaccard(ra.features, rb.features);
    const char *verdict = (ra.tokens_len == rb.tokens_len &&
                           memcmp(ra.tokens, rb.tokens, ra.tokens_len) == 0)
                              ? "identical"
                          : d <= (unsigned)k ? "near-duplicate"
                                             : "different";
    char ha[17], hb[17];
    dedup_fingerprint_format(ra.fingerprint, ha);
    dedup_fingerprint_format(rb.fingerprint, hb);
    if (json) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:f, s:f, s:f, s:i, s:s}",
                              "a", pa, "b", pb, "fingerprint_a", ha, "fingerprint_b", hb,
                              "words_a", (json_int_t)ra.n_tokens, "words_b", (json_int_t)rb.n_tokens,
                              "shingles_a", (json_int_t)ra.n_features, "shingles_b",
                              (json_int_t)rb.n_features, "distance", (int)d,
                              "simhash_similarity", sim, "cosine", cosine, "jaccard", jaccard,
                              "k", (int)k, "verdict", verdict);
        char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
        if (!s) {
            cli_error(CMD, "cannot format json (is a path not valid UTF-8?)");
            status = CLI_RUNTIME;
        } else
            printf("%s\n", s);
        free(s);
        json_decref(o);
    } else {
        printf("a: %s\nb: %s\n", pa, pb);
        printf("fingerprint_a: %s\nfingerprint_b: %s\n", ha, hb);
        printf("words_a: %zu\nwords_b: %zu\n", ra.n_tokens, rb.n_tokens);
        printf("shingles_a: %zu\nshingles_b: %zu\n", ra.n_features, rb.n_features);
        printf("distance: %u\n", d);
        printf("simhash_similarity: %.6f\n", sim);
        printf("cosine: %.6f\njaccard: %.6f\n", cosine, jaccard);
        printf("k: %ld\nverdict: %s\n", k, verdict);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
    }
done:
    filter_fp_result_release(&ra);
    filter_fp_result_release(&rb);
    dedup_idf_free(idf);
    return status;
}

/*
 * simcrawl compare [--k N] [--text] [--idf FILE] [--json] [--] A B (options anywhere)
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
 * and with --method minhash (cli/minhash.c, docs/MINHASH.md) also
 *   shingle_words, num_perm      the MinHash parameters
 *   minhash_shingles_a, _b       distinct word k-shingles
 *   minhash_jaccard              exact Jaccard of the k-shingle sets
 *   minhash_estimate             the signatures' estimate of it
 *   threshold                    the Jaccard threshold (instead of k)
 *   verdict                      identical (same token string) | near-duplicate
 *                                (distance <= k; minhash: estimate >= threshold) | different
 * Exit 0 whatever the verdict (the question was answered), 1 usage, 2 an input failed.
 */
#include "cli/cli.h"
#include "cli/minhash.h"
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
            "  --k N           near-duplicate threshold, 0..7 as in every command (default 3)\n"
            "  --method simhash|minhash\n"
            "                  minhash: also the exact Jaccard of the pages' word\n"
            "                  k-shingle sets and its MinHash estimate; the verdict is\n"
            "                  near-duplicate when the estimate is >= --threshold\n"
            "  --threshold J   minhash: the Jaccard threshold, above 0 and at most 1\n"
            "                  (default 0.8)\n"
            "  --shingle-words N  minhash: words per shingle, 1..32 (default 5)\n"
            "  --num-perm N    minhash: values per signature, 1..1024 (default 128)\n"
            "  --text          inputs are plain UTF-8 text, not HTML\n"
            "  --idf FILE      weight shingles by inverse document frequency from FILE\n"
            "  --json          one JSON object instead of 'key: value' lines\n"
            "  -h, --help      this help\n"
            "  --              end of options\n"
            "\n"
            "exit status: 0 compared (whatever the verdict), 1 usage error, 2 an input\n"
            "could not be fingerprinted.\n");
}

enum {
    OPT_TEXT = 256,
    OPT_JSON,
    OPT_K,
    OPT_MH, /* --method, --threshold, --shingle-words, --num-perm: cli_mh_option() */
    OPT_IDF
};
static const struct option longopts[] = {{"text", no_argument, NULL, OPT_TEXT},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"k", required_argument, NULL, OPT_K},
                                         {"method", required_argument, NULL, OPT_MH},
                                         {"threshold", required_argument, NULL, OPT_MH},
                                         {"shingle-words", required_argument, NULL, OPT_MH},
                                         {"num-perm", required_argument, NULL, OPT_MH},
                                         {"idf", required_argument, NULL, OPT_IDF},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

int cmd_compare(int argc, char **argv)
{
    struct filter_fp_opts opts = {0};
    const char *idf_path = NULL;
    long k = 3;
    int json = 0, k_set = 0;
    struct cli_mh_opts mo = {.threshold = DEDUP_MINHASH_THRESHOLD_DEFAULT};
    struct cli_getopt g;
    cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        const char *v = g.value;
        switch (c) {
        case CLI_GETOPT_HELP:
            return CLI_OK;
        case OPT_TEXT:
            opts.text = 1;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_K:
            if (!v || cli_parse_long(v, 0, DEDUP_K_MAX, &k) != 0)
                return cli_usage_error(CMD, "--k must be a whole number from 0 to %d, not '%s'",
                                       DEDUP_K_MAX, v ? v : "");
            k_set = 1;
            break;
        case OPT_MH:
            if (!v)
                return cli_usage_error(CMD, "%s needs a value", g.name);
            if (cli_mh_option(CMD, g.name, v, &mo) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_IDF:
            idf_path = v;
            if (!idf_path)
                return cli_usage_error(CMD, "--idf needs a FILE");
            break;
        default: /* CLI_GETOPT_ERROR: said why */
            return CLI_USAGE;
        }
    }
    int i = g.optind, minhash = mo.minhash;
    if (minhash && k_set)
        return cli_usage_error(CMD, "--k is the simhash distance; --method minhash takes "
                                    "--threshold J instead");
    if (!minhash && (mo.threshold_set || mo.shingle_words || mo.num_perm))
        return cli_usage_error(CMD, "--threshold, --shingle-words and --num-perm apply to "
                                    "--method minhash");
    struct dedup_lsh_params mp;
    if (minhash && cli_mh_params(CMD, &mo, &mp) != CLI_OK)
        return CLI_USAGE;
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
    struct cli_mh_compare mc = {0};
    if (minhash && cli_mh_compare(CMD, &mp, ra.tokens, ra.tokens_len, rb.tokens, rb.tokens_len,
                                  &mc) != CLI_OK) {
        status = CLI_RUNTIME;
        goto done;
    }
    int near = minhash ? mc.estimate >= mp.threshold : d <= (unsigned)k;
    const char *verdict =
        (ra.tokens_len == rb.tokens_len && memcmp(ra.tokens, rb.tokens, ra.tokens_len) == 0)
            ? "identical"
        : near ? "near-duplicate"
               : "different";
    char ha[17], hb[17];
    dedup_fingerprint_format(ra.fingerprint, ha);
    dedup_fingerprint_format(rb.fingerprint, hb);
    if (json && minhash) {
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:f, s:f, s:f, "
            "s:i, s:i, s:I, s:I, s:f, s:f, s:f, s:s}",
            "a", pa, "b", pb, "method", "minhash", "fingerprint_a", ha, "fingerprint_b", hb,
            "words_a", (json_int_t)ra.n_tokens, "words_b", (json_int_t)rb.n_tokens, "shingles_a",
            (json_int_t)ra.n_features, "shingles_b", (json_int_t)rb.n_features, "distance", (int)d,
            "simhash_similarity", sim, "cosine", cosine, "jaccard", jaccard, "shingle_words",
            (int)mp.k, "num_perm", (int)mp.h, "minhash_shingles_a", (json_int_t)mc.shingles_a,
            "minhash_shingles_b", (json_int_t)mc.shingles_b, "minhash_jaccard", mc.exact,
            "minhash_estimate", mc.estimate, "threshold", mp.threshold, "verdict", verdict);
        char *s =
            o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
        if (!s) {
            cli_error(CMD, "cannot format json (is a path not valid UTF-8?)");
            status = CLI_RUNTIME;
        } else
            printf("%s\n", s);
        free(s);
        json_decref(o);
    } else if (json) {
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:f, s:f, s:f, s:i, s:s}", "a", pa, "b",
            pb, "fingerprint_a", ha, "fingerprint_b", hb, "words_a", (json_int_t)ra.n_tokens,
            "words_b", (json_int_t)rb.n_tokens, "shingles_a", (json_int_t)ra.n_features,
            "shingles_b", (json_int_t)rb.n_features, "distance", (int)d, "simhash_similarity", sim,
            "cosine", cosine, "jaccard", jaccard, "k", (int)k, "verdict", verdict);
        char *s =
            o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
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
        if (minhash) {
            printf("method: minhash\nshingle_words: %u\nnum_perm: %u\n", mp.k, mp.h);
            printf("minhash_shingles_a: %zu\nminhash_shingles_b: %zu\n", mc.shingles_a,
                   mc.shingles_b);
            printf("minhash_jaccard: %.6f\nminhash_estimate: %.6f\n", mc.exact, mc.estimate);
            printf("threshold: %g\nverdict: %s\n", mp.threshold, verdict);
        } else {
            printf("k: %ld\nverdict: %s\n", k, verdict);
        }
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

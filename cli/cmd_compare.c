/*
 * simcrawl compare [--k N] [--text] [--idf FILE] [--json] [--] A B (options anywhere)
 *
 * How similar are two pages? Fingerprints both (cli/pipeline.c) keeping their features,
 * and prints one "key: value" line each (or, with --json, one JSON object):
 *   a, b                         the inputs as given
 *   fingerprint_a, fingerprint_b 16 hex digits (docs/FINGERPRINT.md)
 *   words_a, words_b             tokens of the main text
 *   shingles_a, shingles_b       distinct shingles (words, FINGERPRINT.md)
 *   names                        same | different | none: the pages' own headings,
 *                                XORed into the fingerprints (FINGERPRINT.md section 6)
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
            "names: same, different or none, the pages' own headings: pages of different\n"
            "names are never near-duplicates (docs/FINGERPRINT.md, \"The page's name\").\n"
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

/* One run of the command: its options, the two inputs and their fingerprints. */
struct compare_run {
    struct filter_fp_opts opts;
    const char *idf_path;
    long k; /* --k N */
    int json, k_set;
    struct cli_mh_opts mo;      /* --method, --threshold, --shingle-words, --num-perm */
    struct dedup_lsh_params mp; /* with --method minhash: from mo */
    const char *pa, *pb;        /* the inputs A and B as given */
    struct dedup_idf *idf;      /* --idf as loaded */
    struct filter_fp_result ra, rb;
};

/* What the command prints about A and B beside their results. */
struct compare_figures {
    unsigned d; /* Hamming distance */
    double sim, cosine, jaccard;
    struct cli_mh_compare mc; /* --method minhash */
    const char *verdict;
    const char *names;   /* same | different | none (neither page has a name) */
    char ha[17], hb[17]; /* the fingerprints written */
};

/* Step 1, the options. CLI_OK with *help 0, CLI_OK with *help 1 after --help, or the exit
 * status (said why). */
static int parse_options(struct compare_run *r, int argc, char **argv, int *help, int *first)
{
    struct cli_getopt g;
    *help = 0;
    cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        const char *v = g.value;
        switch (c) {
        case CLI_GETOPT_HELP:
            *help = 1;
            return CLI_OK;
        case OPT_TEXT:
            r->opts.text = 1;
            break;
        case OPT_JSON:
            r->json = 1;
            break;
        case OPT_K:
            if (!v || cli_parse_long(v, 0, DEDUP_K_MAX, &r->k) != 0)
                return cli_usage_error(CMD, "--k must be a whole number from 0 to %d, not '%s'",
                                       DEDUP_K_MAX, v ? v : "");
            r->k_set = 1;
            break;
        case OPT_MH:
            if (!v)
                return cli_usage_error(CMD, "%s needs a value", g.name);
            if (cli_mh_option(CMD, g.name, v, &r->mo) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_IDF:
            r->idf_path = v;
            if (!r->idf_path)
                return cli_usage_error(CMD, "--idf needs a FILE");
            break;
        default: /* CLI_GETOPT_ERROR: said why */
            return CLI_USAGE;
        }
    }
    *first = g.optind;
    return CLI_OK;
}

/* Step 2, the options together and the two inputs: CLI_OK or CLI_USAGE (said why). */
static int check_args(struct compare_run *r, int argc, char **argv, int i)
{
    if (cli_mh_check(CMD, &r->mo, r->k_set, "") != CLI_OK)
        return CLI_USAGE;
    if (r->mo.minhash && cli_mh_params(CMD, &r->mo, &r->mp) != CLI_OK)
        return CLI_USAGE;
    if (argc - i != 2)
        return cli_usage_error(CMD, "need exactly two inputs A B (got %d)", argc - i);
    r->pa = argv[i];
    r->pb = argv[i + 1];
    if (strcmp(r->pa, "-") == 0 && strcmp(r->pb, "-") == 0)
        return cli_usage_error(CMD, "standard input ('-') can be read only once");
    return CLI_OK;
}

/* Step 3, --idf loaded and both inputs fingerprinted with their features and tokens:
 * CLI_OK or CLI_RUNTIME (each failure said). */
static int fingerprint_both(struct compare_run *r)
{
    if (r->idf_path) {
        r->idf = cli_idf_load(CMD, r->idf_path);
        if (!r->idf)
            return CLI_RUNTIME;
        r->opts.idf = r->idf;
    }
    r->opts.keep_features = 1;
    r->opts.keep_tokens = 1;
    int status = CLI_OK;
    if (cli_fingerprint_file(r->pa, &r->opts, &r->ra) != 0) {
        cli_error(CMD, "%s: %s", r->pa, r->ra.message);
        status = CLI_RUNTIME;
    }
    if (cli_fingerprint_file(r->pb, &r->opts, &r->rb) != 0) {
        cli_error(CMD, "%s: %s", r->pb, r->rb.message);
        status = CLI_RUNTIME;
    }
    return status;
}

/* Step 4, the measures and the verdict: CLI_OK or CLI_RUNTIME (said). */
static int measure(const struct compare_run *r, struct compare_figures *f)
{
    const struct filter_fp_result *ra = &r->ra, *rb = &r->rb;
    f->d = dedup_distance(ra->fingerprint, rb->fingerprint);
    f->sim = 1.0 - f->d / 64.0;
    f->cosine = dedup_features_cosine(ra->features, rb->features);
    f->jaccard = dedup_features_jaccard(ra->features, rb->features);
    if (r->mo.minhash && cli_mh_compare(CMD, &r->mp, ra->tokens, ra->tokens_len, rb->tokens,
                                        rb->tokens_len, &f->mc) != CLI_OK)
        return CLI_RUNTIME;
    int near = r->mo.minhash ? f->mc.estimate >= r->mp.threshold : f->d <= (unsigned)r->k;
    f->verdict =
        (ra->tokens_len == rb->tokens_len && memcmp(ra->tokens, rb->tokens, ra->tokens_len) == 0)
            ? "identical"
        : near ? "near-duplicate"
               : "different";
    f->names = !ra->name_hash && !rb->name_hash ? "none"
               : ra->name_hash == rb->name_hash ? "same"
                                                : "different";
    dedup_fingerprint_format(ra->fingerprint, f->ha);
    dedup_fingerprint_format(rb->fingerprint, f->hb);
    return CLI_OK;
}

/* Step 5 with --json: the figures as one JSON object. CLI_OK or CLI_RUNTIME (said). */
static int print_json(const struct compare_run *r, const struct compare_figures *f)
{
    const struct filter_fp_result *ra = &r->ra, *rb = &r->rb;
    const struct cli_mh_compare *mc = &f->mc;
    json_t *o;
    if (r->mo.minhash)
        o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:i, s:f, s:f, s:f, "
                      "s:i, s:i, s:I, s:I, s:f, s:f, s:f, s:s}",
                      "a", r->pa, "b", r->pb, "method", "minhash", "fingerprint_a", f->ha,
                      "fingerprint_b", f->hb, "words_a", (json_int_t)ra->n_tokens, "words_b",
                      (json_int_t)rb->n_tokens, "shingles_a", (json_int_t)ra->n_features,
                      "shingles_b", (json_int_t)rb->n_features, "names", f->names, "distance",
                      (int)f->d, "simhash_similarity", f->sim, "cosine", f->cosine, "jaccard",
                      f->jaccard, "shingle_words", (int)r->mp.k, "num_perm", (int)r->mp.h,
                      "minhash_shingles_a", (json_int_t)mc->shingles_a, "minhash_shingles_b",
                      (json_int_t)mc->shingles_b, "minhash_jaccard", mc->exact, "minhash_estimate",
                      mc->estimate, "threshold", r->mp.threshold, "verdict", f->verdict);
    else
        o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:i, s:f, s:f, s:f, s:i, s:s}",
                      "a", r->pa, "b", r->pb, "fingerprint_a", f->ha, "fingerprint_b", f->hb,
                      "words_a", (json_int_t)ra->n_tokens, "words_b", (json_int_t)rb->n_tokens,
                      "shingles_a", (json_int_t)ra->n_features, "shingles_b",
                      (json_int_t)rb->n_features, "names", f->names, "distance", (int)f->d,
                      "simhash_similarity", f->sim, "cosine", f->cosine, "jaccard", f->jaccard, "k",
                      (int)r->k, "verdict", f->verdict);
    char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    int status = CLI_OK;
    if (!s) {
        cli_error(CMD, "cannot format json (is a path not valid UTF-8?)");
        status = CLI_RUNTIME;
    } else
        printf("%s\n", s);
    free(s);
    json_decref(o);
    return status;
}

/* Step 5 without --json: one "key: value" line each. */
static void print_lines(const struct compare_run *r, const struct compare_figures *f)
{
    const struct filter_fp_result *ra = &r->ra, *rb = &r->rb;
    printf("a: %s\nb: %s\n", r->pa, r->pb);
    printf("fingerprint_a: %s\nfingerprint_b: %s\n", f->ha, f->hb);
    printf("words_a: %zu\nwords_b: %zu\n", ra->n_tokens, rb->n_tokens);
    printf("shingles_a: %zu\nshingles_b: %zu\n", ra->n_features, rb->n_features);
    printf("names: %s\n", f->names);
    printf("distance: %u\n", f->d);
    printf("simhash_similarity: %.6f\n", f->sim);
    printf("cosine: %.6f\njaccard: %.6f\n", f->cosine, f->jaccard);
    if (r->mo.minhash) {
        printf("method: minhash\nshingle_words: %u\nnum_perm: %u\n", r->mp.k, r->mp.h);
        printf("minhash_shingles_a: %zu\nminhash_shingles_b: %zu\n", f->mc.shingles_a,
               f->mc.shingles_b);
        printf("minhash_jaccard: %.6f\nminhash_estimate: %.6f\n", f->mc.exact, f->mc.estimate);
        printf("threshold: %g\nverdict: %s\n", r->mp.threshold, f->verdict);
    } else {
        printf("k: %ld\nverdict: %s\n", r->k, f->verdict);
    }
}

static void compare_run_release(struct compare_run *r)
{
    filter_fp_result_release(&r->ra);
    filter_fp_result_release(&r->rb);
    dedup_idf_free(r->idf);
}

int cmd_compare(int argc, char **argv)
{
    struct compare_run r = {.k = 3, .mo = {.threshold = DEDUP_MINHASH_THRESHOLD_DEFAULT}};
    int help, first = 0;
    int status = parse_options(&r, argc, argv, &help, &first);
    if (status != CLI_OK || help)
        return status;
    if ((status = check_args(&r, argc, argv, first)) != CLI_OK)
        return status;
    struct compare_figures f = {0};
    if ((status = fingerprint_both(&r)) != CLI_OK || (status = measure(&r, &f)) != CLI_OK)
        goto done;
    if (r.json)
        status = print_json(&r, &f);
    else
        print_lines(&r, &f);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
    }
done:
    compare_run_release(&r);
    return status;
}

/*
 * Simhash benchmark and golden-vector generator (docs/FINGERPRINT.md, docs/BENCHMARKS.md
 * "## Simhash").
 *
 *   bench_simhash [--runs N]      times, on the same features held in memory, the fast
 *                                 kernel (dedup__simhash_fast) against the literal per-bit
 *                                 loop (dedup__simhash_naive), in features/s, for three
 *                                 weight mixes; then token string -> features -> simhash
 *                                 in tokens/s. Checks that both kernels agree on every
 *                                 document (exit 1 otherwise). Prints medians of N runs.
 *   bench_simhash --vectors DIR   writes DIR/idf.txt and DIR/vectors.txt, the golden
 *                                 vectors that tests/test_simhash.c checks the library
 *                                 against (regenerate only when the spec version changes).
 *   bench_simhash --tokens FILE...  prints "FILE<TAB>token string" for each UTF-8 text
 *                                 file (extract_tokens(), FINGERPRINT.md section 2): the
 *                                 input of tests/bench/neardup_study.py.
 *
 * All inputs come from a fixed 64-bit LCG (Knuth's MMIX constants), so every run and
 * every machine sees the same data.
 */
#include "dedup/dedup_int.h"
#include "extract/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tests/bench/bench.h"

static uint64_t lcg_next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* ---- golden vectors ---- */

static const char *const VOCAB[40] = {
    "the", "of", "and", "a", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on",
    "are", "as", "with", "his", "they", "i", "at", "be", "this", "have", "from", "or", "one",
    "had", "by", "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said"};

/* Writes a token string of n words drawn from VOCAB into buf (cap bytes); returns length. */
static size_t vocab_string(uint64_t *x, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *w = VOCAB[lcg_next(x) % 40];
        size_t wl = strlen(w);
        if (len + wl + 2 > cap)
            break;
        if (i)
            buf[len++] = ' ';
        memcpy(buf + len, w, wl);
        len += wl;
    }
    buf[len] = '\0';
    return len;
}

static const char *const SENTENCES[] = {
    "the quick brown fox jumps over the lazy dog",
    "python 3 11 2 documentation the python standard library os_path join",
    "strasse cafe naive resume uber grosse strasse cafe",
    "съешь же еще этих мягких французских булок да выпеи чаю",
    "東 京 は 日 本 の 首 都 で す",
    "a b a b a b a b a b a b",
    "one two three four five",
    "x x x x x x x x x x x x x x x x x x x x",
    "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    /* version 7 token strings hold code punctuation (FINGERPRINT.md section 2, rule 3);
     * this one is 80 tokens or more, so it is simhashed (section 4) */
    "db->get_flags the db->get_flags method returns the current flags db->get_flags int "
    "db->get_flags db u_int32_t flagsp description the db->get_flags method returns the "
    "current flags the db->get_flags method may be called at any time during the life of "
    "the application parameters flagsp the db->get_flags method returns the current flags "
    "in flagsp class db see also databases and related methods db::get_flags ~db db::~db "
    "os path join index html std::vector::push_back p->next the std::vector::push_back "
    "method appends a copy of value to the end of the container ~vector destroys the "
    "elements and p->next points to the next element see os path join",
};

/* Texts and their version 7 token strings (tokens records): the token rule itself,
 * pinned beside the fingerprints (no TAB or newline in a text). */
static const char *const TOKEN_TEXTS[] = {
    "The quick brown fox",
    "Stra\xc3\x9f" "e \xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c-width "
    "\xef\xac\x81le_2 na\xc3\xafve caf\xc3\xa9",
    "\xe6\x9d\xb1\xe4\xba\xac\xe3\x82\xbf\xe3\x83\xaf\xe3\x83\xbc 3.14",
    "int DB->get_flags(DB *db, u_int32_t *flagsp);",
    "Db::get_flags() and Db::~Db(), ~vector(), p->~T()",
    "os.path.join(a, b) or String.valueOf(x). See index.html, e.g. v1.2.3 and python3.11.",
    "a~b ~100 a:b a::b ::c a:::b a->>b a-b a-> b:: c. a..b",
};

static int fp_line(FILE *out, const char *kind, const char *s, const struct dedup_opts *o)
{
    struct dedup_features *f = dedup_features_new();
    if (!f)
        return -1;
    enum dedup_code rc = dedup_features_from_tokens(f, s, strlen(s), o);
    char hex[17];
    if (rc == DEDUP_OK)
        fprintf(out, "%s\t%s\t%zu\t%s\n", kind, dedup_fingerprint_format(dedup_simhash(f), hex),
                dedup_features_token_count(f), s);
    else if (rc == DEDUP_ETOOSHORT)
        fprintf(out, "short\t%zu\t%s\n", dedup_features_token_count(f), s);
    else {
        fprintf(stderr, "bench_simhash: %s: %s\n", s, dedup_strerror(rc));
        dedup_features_free(f);
        return -1;
    }
    dedup_features_free(f);
    return 0;
}

/* version 11: texts whose fingerprint is keyed on their symbols when short
 * (FINGERPRINT.md section 4, "A short text's symbols"); plain texts, as `--text` reads them */
static const char *const SYMBOL_TEXTS[] = {
    "<<<Header>>>! Content goes here. >>>\"Footer!\"<<<",
    "Header. Content goes here. Footer.",
    "x \xe2\x8a\xa5 y -- bottom of the order",
    "x \xe2\x8a\xa4 y -- bottom of the order",
    "x \xe2\x86\x92 y -- an arrow is no symbol",
    "a->b and x-y and p/q join or part, no symbol",
    "operator<< writes and operator>> reads a value",
    "Alpha Widget\xc2\xb6 has no symbol of its own here",
};

/* The fingerprint of the plain text s (version 11: a short text XORed with the key of its
 * symbols), from the primitives; 0 when it has too little text. */
static int text_line(FILE *out, const char *s)
{
    char *tok = NULL, *sym = NULL, hex[17];
    size_t tl = 0, tn = 0, sl = 0, sn = 0;
    int rc = -1;
    struct dedup_features *f = dedup_features_new();
    if (!f || extract_tokens(s, strlen(s), &tok, &tl, &tn) != EXTRACT_OK ||
        extract_name_tokens(s, strlen(s), &sym, &sl, &sn) != EXTRACT_OK ||
        dedup_features_from_tokens(f, tok, tl, NULL) != DEDUP_OK)
        goto done;
    uint64_t fp = dedup_simhash(f);
    if (tn < DEDUP_SHORT_TOKENS)
        fp ^= dedup_symbol_key(sym, sl, tok, tl);
    fprintf(out, "text\t%s\t%s\n", dedup_fingerprint_format(fp, hex), s);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "bench_simhash: text '%s' has no fingerprint\n", s);
    dedup_features_free(f);
    free(tok);
    free(sym);
    return rc;
}

/* The `name` record of heading h, or (title) the `title` record of a headless page's
 * <title> h: its label left out, its symbols in (version 10), and for a title its tokens
 * that hold a digit left out (version 12). */
static int name_line(FILE *out, const char *h, int title)
{
    size_t label = dedup_name_label(h, strlen(h));
    char *tok = NULL, hex[17];
    size_t tok_len = 0, n_tok = 0;
    if (extract_name_tokens(h + label, strlen(h) - label, &tok, &tok_len, &n_tok) != EXTRACT_OK)
        return -1;
    if (title)
        tok_len = dedup_title_tokens(tok, tok_len, &n_tok);
    fprintf(out, "%s\t%s\t%s\n", title ? "title" : "name",
            dedup_fingerprint_format(dedup_name_hash(tok, tok_len, n_tok), hex), h);
    free(tok);
    return 0;
}

#define N_RANDOM 48

static int write_vectors(const char *dir)
{
    char path[4096], *buf = malloc(1 << 16);
    static char *random_strings[N_RANDOM];
    struct dedup_idf *counted = dedup_idf_new(), *idf = NULL;
    struct dedup_features *f = dedup_features_new();
    FILE *out = NULL;
    int rc = 1;
    if (!buf || !counted || !f)
        goto done;

    /* random token strings; their document frequencies make the IDF file */
    uint64_t x = 1;
    for (int i = 0; i < N_RANDOM; i++) {
        size_t n = 5 + lcg_next(&x) % (i < N_RANDOM / 2 ? 30 : 400);
        size_t len = vocab_string(&x, n, buf, 1 << 16);
        random_strings[i] = strdup(buf);
        if (!random_strings[i] || dedup_features_from_tokens(f, buf, len, NULL) != DEDUP_OK ||
            dedup_idf_add_doc(counted, f) != DEDUP_OK)
            goto done;
    }
    snprintf(path, sizeof path, "%s/idf.txt", dir);
    out = fopen(path, "w");
    if (!out || dedup_idf_write(counted, out) != DEDUP_OK || fclose(out) != 0) {
        perror(path);
        out = NULL;
        goto done;
    }
    out = NULL;
    /* read it back: the fp-idf vectors use the table as parsed from the file */
    FILE *in = fopen(path, "rb");
    size_t len = in ? fread(buf, 1, (1 << 16) - 1, in) : 0;
    if (in)
        fclose(in);
    struct dedup_parse_error perr;
    if (len == 0 || len == (1 << 16) - 1 || dedup_idf_parse(buf, len, &idf, &perr) != DEDUP_OK) {
        fprintf(stderr, "bench_simhash: %s: cannot read back\n", path);
        goto done;
    }

    snprintf(path, sizeof path, "%s/vectors.txt", dir);
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        goto done;
    }
    fprintf(out, "# simcrawl fingerprint golden vectors, docs/FINGERPRINT.md version %d\n"
                 "# generated by: build/bench/bench_simhash --vectors tests/data/fingerprint\n"
                 "# (records and fields: docs/FINGERPRINT.md section 8; fields are TAB-separated)\n",
            DEDUP_FINGERPRINT_VERSION);
    /* version 2 shingles are words and pairs of words (FINGERPRINT.md section 3) */
    static const char *const SHINGLES[] = {"the",         "quick", "x",     "",
                                           "東",          "strasse", "café", "python",
                                           "3",           "the quick", "東 京", "python 3",
                                           "café strasse", "db->get_flags", "db::~db",
                                           "db::get_flags ~db"};
    for (size_t i = 0; i < sizeof SHINGLES / sizeof SHINGLES[0]; i++) {
        char hex[17];
        fprintf(out, "hash\t%s\t%s\n",
                dedup_fingerprint_format(
                    XXH3_64bits_withSeed(SHINGLES[i], strlen(SHINGLES[i]), DEDUP_SEED), hex),
                SHINGLES[i]);
    }
    static const uint32_t TFS[] = {1, 2, 3, 4, 5, 10, 50, 63, 64, 65, 100, 1000, 65535};
    static const double IDFS[] = {1.0, 1.5, 2.0794415416798357, 4.25};
    for (size_t i = 0; i < sizeof TFS / sizeof TFS[0]; i++)
        for (size_t j = 0; j < sizeof IDFS / sizeof IDFS[0]; j++)
            fprintf(out, "weight\t%u\t%.17g\t%u\n", TFS[i], IDFS[j], dedup__weight(TFS[i], IDFS[j]));

    struct dedup_opts min1 = {0};
    min1.min_tokens = 1;
    struct dedup_opts with_idf = {0};
    with_idf.idf = idf;
    static const char *const SHORT[] = {"", "hello", "hello world", "a b c", "a b c d"};
    for (size_t i = 0; i < sizeof SHORT / sizeof SHORT[0]; i++)
        if (fp_line(out, "fp", SHORT[i], NULL) != 0)
            goto done;
    for (size_t i = 1; i < sizeof SHORT / sizeof SHORT[0]; i++)
        if (fp_line(out, "fp-min1", SHORT[i], &min1) != 0)
            goto done;
    for (size_t i = 0; i < sizeof SENTENCES / sizeof SENTENCES[0]; i++)
        if (fp_line(out, "fp", SENTENCES[i], NULL) != 0)
            goto done;
    for (size_t i = 0; i < sizeof TOKEN_TEXTS / sizeof TOKEN_TEXTS[0]; i++) {
        char *tok = NULL;
        size_t tok_len = 0, n_tok = 0;
        if (extract_tokens(TOKEN_TEXTS[i], strlen(TOKEN_TEXTS[i]), &tok, &tok_len, &n_tok) !=
            EXTRACT_OK)
            goto done;
        fprintf(out, "tokens\t%s\t%zu\t%s\n", TOKEN_TEXTS[i], n_tok, tok);
        free(tok);
    }
    /* version 9: a heading's name, its label left out; version 10: its symbols
     * (FINGERPRINT.md section 6) */
    static const char *const HEADINGS[] = {
        "Alpha Widget",      "Chapter 13. Boost.Date_Time", "Chapter 11. Boost.Date_Time",
        "8.3. Character Types", "F.1. adminpack",          "Appendix B. Date/Time Support",
        "Part IV. Client Interfaces", "Глава 3. Введение",  "A. Lincoln",
        "Chapter 13.",       "Django 3.2.19 release notes", "13.2 Title",
        "DB->get_flags",
        /* version 10: a heading's operator runs */
        "@@ -- a binary operator", "==> -- a binary operator", "operator<< and x-y",
        "Alpha Widget\xc2\xb6", "\xe2\x8a\xa5 -- bottom", "\xe2\x8a\xa4 -- top",
        "x \xe2\x89\xa4 y \xe2\x86\x92 z"};
    for (size_t i = 0; i < sizeof HEADINGS / sizeof HEADINGS[0]; i++)
        if (name_line(out, HEADINGS[i], 0) != 0)
            goto done;
    for (size_t i = 0; i < sizeof SYMBOL_TEXTS / sizeof SYMBOL_TEXTS[0]; i++)
        if (text_line(out, SYMBOL_TEXTS[i]) != 0)
            goto done;
    /* version 12: the name of a page without a heading, from its <title>: its label left
     * out, its symbols in, its tokens that hold a digit left out */
    static const char *const TITLES[] = {
        "Relation.Nullary.Implication", "Relation.Nullary.Product",
        "ghc-prim-0.7.0: GHC primitives (Index - D)", "base-4.18.1.0: Basic libraries (Index - D)",
        "Node.js v18.19.0 Documentation", "Chapter 13. Boost.Date_Time",
        "jQuery UI Tabs - Content via Ajax", "2026-11-28", "\xe2\x8a\xa5 -- bottom"};
    for (size_t i = 0; i < sizeof TITLES / sizeof TITLES[0]; i++)
        if (name_line(out, TITLES[i], 1) != 0)
            goto done;
    for (int i = 0; i < N_RANDOM; i++)
        if (fp_line(out, "fp", random_strings[i], NULL) != 0)
            goto done;
    for (size_t i = 0; i < sizeof SENTENCES / sizeof SENTENCES[0]; i++)
        if (fp_line(out, "fp-idf", SENTENCES[i], &with_idf) != 0)
            goto done;
    for (int i = 0; i < N_RANDOM; i += 3)
        if (fp_line(out, "fp-idf", random_strings[i], &with_idf) != 0)
            goto done;
    if (fclose(out) != 0) {
        out = NULL;
        perror(path);
        goto done;
    }
    out = NULL;
    rc = 0;
done:
    if (out)
        fclose(out);
    for (int i = 0; i < N_RANDOM; i++)
        free(random_strings[i]);
    free(buf);
    dedup_idf_free(counted);
    dedup_idf_free(idf);
    dedup_features_free(f);
    return rc;
}

/* ---- benchmark ---- */

#define DOC_FEATURES 2000 /* distinct words: python3.11-doc median 329, p90 1,222, max 3,052 */
#define N_DOCS 2000

enum mix { MIX_TF1, MIX_TF, MIX_IDF };
static const char *const MIX_NAME[] = {"all tf=1 (w=256)", "tf mix (90% tf=1)",
                                       "idf (distinct weights)"};

static void make_features(enum mix m, uint64_t *h, uint32_t *w, size_t n)
{
    uint64_t x = 42 + (uint64_t)m;
    for (size_t i = 0; i < n; i++) {
        h[i] = lcg_next(&x) << 33 ^ lcg_next(&x) << 2 ^ lcg_next(&x);
        uint32_t tf = 1;
        if (m != MIX_TF1 && lcg_next(&x) % 10 == 0)
            tf = 2 + (uint32_t)(lcg_next(&x) % 6);
        w[i] = m == MIX_IDF ? dedup__weight(tf, 1.0 + (double)(lcg_next(&x) % 4000) / 1000.0)
                            : dedup__weight(tf, 1.0);
    }
}

static int bench(int runs)
{
    size_t n = (size_t)DOC_FEATURES * N_DOCS;
    uint64_t *h = malloc(n * sizeof *h);
    uint32_t *w = malloc(n * sizeof *w);
    double *t_fast = malloc((size_t)runs * sizeof(double)), *t_naive = malloc((size_t)runs * sizeof(double));
    int rc = 0;
    if (!h || !w || !t_fast || !t_naive) {
        fprintf(stderr, "bench_simhash: out of memory\n");
        return 1;
    }
    printf("simhash accumulation: %d documents x %d features, median of %d runs\n", N_DOCS,
           DOC_FEATURES, runs);
    printf("%-24s %14s %14s %8s\n", "weights", "fast feat/s", "naive feat/s", "ratio");
    for (int m = MIX_TF1; m <= MIX_IDF; m++) {
        make_features((enum mix)m, h, w, n);
        uint64_t sink_fast = 0, sink_naive = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = bench_now();
            for (size_t d = 0; d < N_DOCS; d++)
                sink_fast ^= dedup__simhash_fast(h + d * DOC_FEATURES, w + d * DOC_FEATURES,
                                                DOC_FEATURES) + d;
            double t1 = bench_now();
            for (size_t d = 0; d < N_DOCS; d++)
                sink_naive ^= dedup__simhash_naive(h + d * DOC_FEATURES, w + d * DOC_FEATURES,
                                                  DOC_FEATURES) + d;
            double t2 = bench_now();
            t_fast[r] = t1 - t0;
            t_naive[r] = t2 - t1;
        }
        for (size_t d = 0; d < N_DOCS; d++)
            if (dedup__simhash_fast(h + d * DOC_FEATURES, w + d * DOC_FEATURES, DOC_FEATURES) !=
                dedup__simhash_naive(h + d * DOC_FEATURES, w + d * DOC_FEATURES, DOC_FEATURES)) {
                fprintf(stderr, "bench_simhash: fast and naive differ on document %zu\n", d);
                rc = 1;
            }
        double f = bench_median(t_fast, runs), nv = bench_median(t_naive, runs);
        printf("%-24s %14.3g %14.3g %7.1fx\n", MIX_NAME[m], (double)n / f, (double)n / nv,
               nv / f);
        if (sink_fast != sink_naive)
            rc = 1;
    }

    /* token string -> features -> simhash, on a 5,000-word synthetic vocabulary */
    size_t words = 2000000, cap = words * 12;
    char *text = malloc(cap);
    struct dedup_features *fs = dedup_features_new();
    if (!text || !fs) {
        fprintf(stderr, "bench_simhash: out of memory\n");
        return 1;
    }
    uint64_t x = 7;
    size_t len = 0;
    for (size_t i = 0; i < words; i++) {
        if (i)
            text[len++] = ' ';
        len += (size_t)snprintf(text + len, cap - len, "w%llx",
                                (unsigned long long)(lcg_next(&x) % 5000));
    }
    /* documents of 3,000 tokens: cut at spaces */
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        size_t pos = 0, toks = 0;
        uint64_t sink = 0;
        while (pos < len) {
            size_t end = pos, k = 0;
            while (end < len && k < 3000) {
                const char *sp = memchr(text + end, ' ', len - end);
                end = sp ? (size_t)(sp - text) + 1 : len;
                k++;
            }
            size_t dl = end - pos;
            if (text[pos + dl - 1] == ' ')
                dl--;
            if (dedup_features_from_tokens(fs, text + pos, dl, NULL) == DEDUP_OK)
                sink ^= dedup_simhash(fs);
            toks += k;
            pos = end;
        }
        t_fast[r] = bench_now() - t0;
        t_naive[r] = (double)toks + (double)(sink & 1) * 0;
    }
    double t = bench_median(t_fast, runs);
    printf("%-24s %14.3g tokens/s (%.1f MB/s of token string)\n", "tokens->features->simhash",
           t_naive[0] / t, (double)len / t / 1e6);
    free(text);
    dedup_features_free(fs);
    free(h);
    free(w);
    free(t_fast);
    free(t_naive);
    return rc;
}

/* ---- token strings of text files (for tests/bench/neardup_study.py) ---- */

#define TOKENS_MAX_FILE_BYTES (64u << 20) /* cap on one text file */

static int print_tokens(int n, char **paths)
{
    int rc = 0;
    char *buf = malloc(TOKENS_MAX_FILE_BYTES + 1);
    if (!buf) {
        fprintf(stderr, "bench_simhash: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        FILE *in = fopen(paths[i], "rb");
        if (!in) {
            perror(paths[i]);
            rc = 1;
            continue;
        }
        size_t len = fread(buf, 1, TOKENS_MAX_FILE_BYTES + 1, in);
        int bad = ferror(in);
        fclose(in);
        if (bad || len > TOKENS_MAX_FILE_BYTES) {
            fprintf(stderr, "bench_simhash: %s: %s\n", paths[i],
                    bad ? "read error" : "larger than the 64 MiB cap");
            rc = 1;
            continue;
        }
        char *tokens = NULL;
        size_t tokens_len = 0, n_tokens = 0;
        enum extract_code ec = extract_tokens(buf, len, &tokens, &tokens_len, &n_tokens);
        if (ec != EXTRACT_OK) {
            fprintf(stderr, "bench_simhash: %s: cannot tokenise (not valid UTF-8?)\n", paths[i]);
            rc = 1;
            continue;
        }
        printf("%s\t%.*s\n", paths[i], (int)tokens_len, tokens ? tokens : "");
        free(tokens);
    }
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--vectors") == 0)
        return write_vectors(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "--tokens") == 0)
        return print_tokens(argc - 2, argv + 2);
    int runs = 5;
    if (argc == 3 && strcmp(argv[1], "--runs") == 0)
        runs = atoi(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: bench_simhash [--runs N] | --vectors DIR | --tokens FILE...\n");
        return 1;
    }
    if (runs < 1 || runs > 1000)
        runs = 5;
    return bench(runs);
}

/*
 * Suite "simhash": the fingerprint of docs/FINGERPRINT.md (dedup/shingle.c, simhash.c,
 * idf.c). The library is checked three ways: against the committed golden vectors
 * (tests/data/fingerprint/vectors.txt, written by `bench_simhash --vectors`), against a
 * second implementation in this file written from FINGERPRINT.md alone (slow and literal:
 * copies each shingle of K words, counts tf by comparing every pair, runs the per-bit
 * loop; K is a parameter of the reference, 1 in version 1), and
 * on hand-checked cases (tie rule, bit order, weights, shingle edge cases, IDF files).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "dedup/dedup_int.h"
#include "tests/testutil.h"

extern void test_simhash_register(void);

#define VECTORS "tests/data/fingerprint/vectors.txt"
#define IDF_FILE "tests/data/fingerprint/idf.txt"

/* ---- the independent reference: docs/FINGERPRINT.md, read literally ---- */


/* Returns 0 and the fingerprint, or -1 when fewer than min_tokens tokens. Token strings
 * here are well-formed (single spaces). idf may be NULL. text_n: the tokens of the text s
 * stands for when more than its own (dedup_opts.text_tokens), 0 otherwise. */
static int ref_fingerprint_n(const char *s, size_t min_tokens, const struct dedup_idf *idf,
                             size_t text_n, uint64_t *out)
{
    /* tokens */
    size_t len = strlen(s), n = 0;
    const char *tok[4096];
    size_t tlen[4096];
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && s[j] != ' ')
            j++;
        CU_ASSERT_FATAL(n < 4096);
        tok[n] = s + i;
        tlen[n] = j - i;
        n++;
        i = j + 1;
    }
    size_t counted = text_n > n ? text_n : n;
    if (n == 0 || counted < min_tokens)
        return -1;
    /* a short text (fewer than 80 tokens): the hash of the token string (section 4) */
    if (counted < 80) {
        *out = XXH3_64bits_withSeed(s, len, 0x73696d7368727431ull);
        return 0;
    }
    /* shingles: every word, then every pair of consecutive words "w1 w2", copied out and
     * hashed (the order does not matter to the result) */
    size_t ns = 2 * n - 1;
    uint64_t *h = malloc(ns * sizeof *h);
    CU_ASSERT_FATAL(h != NULL);
    char buf[1 << 14];
    for (size_t i = 0; i < n; i++)
        h[i] = XXH3_64bits_withSeed(tok[i], tlen[i], 0x73696d6372617731ull);
    for (size_t i = 0; i + 1 < n; i++) {
        size_t bl = 0;
        memcpy(buf, tok[i], tlen[i]);
        bl += tlen[i];
        buf[bl++] = ' ';
        memcpy(buf + bl, tok[i + 1], tlen[i + 1]);
        bl += tlen[i + 1];
        h[n + i] = XXH3_64bits_withSeed(buf, bl, 0x73696d6372617731ull);
    }
    /* distinct features, tf by comparing every pair, weights, the per-bit loop; a shingle
     * counts at most c times, c = floor(sqrt(distinct shingles)) within [1, 64] */
    size_t distinct = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t j = 0;
        while (j < i && h[j] != h[i])
            j++;
        distinct += j == i;
    }
    unsigned cap = 64;
    while (cap > 1 && (size_t)cap * cap > distinct)
        cap--;
    long long v[64] = {0};
    for (size_t i = 0; i < ns; i++) {
        int first = 1;
        unsigned tf = 0;
        for (size_t j = 0; j < ns; j++) {
            if (h[j] == h[i]) {
                if (j < i)
                    first = 0;
                tf++;
            }
        }
        if (!first)
            continue;
        double idfv = 1.0;
        if (idf) {
            double N = (double)dedup_idf_doc_count(idf), df = (double)dedup_idf_df(idf, h[i]);
            idfv = 1.0 + log((N + 1.0) / (df + 1.0));
        }
        /* min(tf, c)^(7/8) as the product of the 2nd, 4th and 8th roots (section 5) */
        double r2 = sqrt((double)(tf < cap ? tf : cap)), r4 = sqrt(r2), r8 = sqrt(r4);
        long long w = (long long)round(256.0 * (r2 * r4 * r8) * idfv);
        for (int b = 0; b < 64; b++)
            v[b] += ((h[i] >> b) & 1) ? w : -w;
    }
    free(h);
    uint64_t fp = 0;
    for (int b = 0; b < 64; b++)
        if (v[b] > 0)
            fp |= 1ull << b;
    *out = fp;
    return 0;
}

static int ref_fingerprint(const char *s, size_t min_tokens, const struct dedup_idf *idf,
                           uint64_t *out)
{
    return ref_fingerprint_n(s, min_tokens, idf, 0, out);
}

/* The library's fingerprint of s, or -1 with *code set. */
static int lib_fingerprint(const char *s, const struct dedup_opts *o, uint64_t *out,
                           enum dedup_code *code, size_t *n_tokens)
{
    struct dedup_features *f = dedup_features_new();
    CU_ASSERT_FATAL(f != NULL);
    *code = dedup_features_from_tokens(f, s, strlen(s), o);
    if (n_tokens)
        *n_tokens = dedup_features_token_count(f);
    if (*code == DEDUP_OK)
        *out = dedup_simhash(f);
    dedup_features_free(f);
    return *code == DEDUP_OK ? 0 : -1;
}

static struct dedup_idf *load_idf_file(void)
{
    size_t len;
    char *data = test_slurp(IDF_FILE, &len);
    CU_ASSERT_FATAL(data != NULL);
    struct dedup_idf *idf = NULL;
    struct dedup_parse_error err;
    ASSERT_EQ_FATAL(dedup_idf_parse(data, len, &idf, &err), DEDUP_OK);
    free(data);
    return idf;
}

/* Splits line at TABs into at most max fields (the last keeps any further TABs). */
static int split_tabs(char *line, char **field, int max)
{
    int n = 0;
    field[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            field[n++] = p + 1;
        }
    return n;
}

static void test_simhash_golden_vectors(void)
{
    size_t len;
    char *data = test_slurp(VECTORS, &len);
    CU_ASSERT_FATAL(data != NULL);
    struct dedup_idf *idf = load_idf_file();
    struct dedup_opts min1 = {0}, with_idf = {0};
    min1.min_tokens = 1;
    with_idf.idf = idf;
    unsigned n_hash = 0, n_weight = 0, n_fp = 0, n_short = 0, n_idf = 0, n_ref = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[5] = {0};
        int nf = split_tabs(line, f, 5);
        uint64_t want, got;
        enum dedup_code code;
        size_t ntok;
        if (strcmp(f[0], "hash") == 0 && nf == 3) {
            ASSERT_EQ(dedup_fingerprint_parse(f[1], strlen(f[1]), &want), DEDUP_OK);
            /* a string of one token is one shingle: its one feature is its hash; in a
             * string of two tokens the pair is the third feature (word, word, pair) */
            const char *sp = strchr(f[2], ' ');
            if (f[2][0] && (!sp || !strchr(sp + 1, ' '))) {
                struct dedup_features *fs = dedup_features_new();
                ASSERT_EQ_FATAL(dedup_features_from_tokens(fs, f[2], strlen(f[2]), &min1),
                                      DEDUP_OK);
                ASSERT_EQ(dedup_features_count(fs), sp ? 3 : 1);
                ASSERT_EQ(dedup_features_hash(fs, sp ? 2 : 0), want);
                dedup_features_free(fs);
            }
            ASSERT_EQ(XXH3_64bits_withSeed(f[2], strlen(f[2]), DEDUP_SEED), want);
            n_hash++;
        } else if (strcmp(f[0], "weight") == 0 && nf == 4) {
            ASSERT_EQ(dedup__weight((uint32_t)strtoul(f[1], NULL, 10), strtod(f[2], NULL)),
                            strtoul(f[3], NULL, 10));
            n_weight++;
        } else if ((strcmp(f[0], "fp") == 0 || strcmp(f[0], "fp-min1") == 0 ||
                    strcmp(f[0], "fp-idf") == 0) &&
                   nf == 4) {
            int is_min1 = f[0][2] == '-' && f[0][3] == 'm', is_idf = f[0][2] == '-' && f[0][3] == 'i';
            ASSERT_EQ(dedup_fingerprint_parse(f[1], strlen(f[1]), &want), DEDUP_OK);
            int rc = lib_fingerprint(f[3], is_min1 ? &min1 : is_idf ? &with_idf : NULL, &got,
                                     &code, &ntok);
            ASSERT_EQ(rc, 0);
            if (rc == 0 && got != want)
                fprintf(stderr, "\nvector %s %s: got %016llx\n", f[0], f[3], (unsigned long long)got);
            ASSERT_EQ(got, want);
            ASSERT_EQ(ntok, strtoul(f[2], NULL, 10));
            /* and the independent reference agrees with the committed vector */
            uint64_t ref = 0;
            ASSERT_EQ(ref_fingerprint(f[3], is_min1 ? 1 : DEDUP_MIN_TOKENS,
                                            is_idf ? idf : NULL, &ref),
                            0);
            ASSERT_EQ(ref, want);
            n_ref++;
            if (is_idf)
                n_idf++;
            else
                n_fp++;
        } else if (strcmp(f[0], "tokens") == 0 && nf == 4) {
            continue; /* the token rule: tests/test_extract.c checks these */
        } else if (strcmp(f[0], "name") == 0 && nf == 3) {
            continue; /* a heading's name: tests/test_template.c checks these */
        } else if (strcmp(f[0], "text") == 0 && nf == 3) {
            continue; /* a plain text's fingerprint: tests/test_template.c checks these */
        } else if (strcmp(f[0], "title") == 0 && nf == 3) {
            continue; /* a headless page's name from its title: tests/test_template.c */
        } else if (strcmp(f[0], "short") == 0 && nf == 3) {
            ASSERT_EQ(lib_fingerprint(f[2], NULL, &got, &code, &ntok), -1);
            ASSERT_EQ(code, DEDUP_ETOOSHORT);
            ASSERT_EQ(ntok, strtoul(f[1], NULL, 10));
            n_short++;
        } else {
            CU_FAIL("unknown record in " VECTORS);
        }
    }
    /* the file really was read: every record type present in numbers */
    CU_ASSERT(n_hash >= 5);
    CU_ASSERT(n_weight >= 20);
    CU_ASSERT(n_fp >= 40);
    CU_ASSERT(n_short >= 3);
    CU_ASSERT(n_idf >= 10);
    CU_ASSERT(n_ref >= 50);
    dedup_idf_free(idf);
    free(data);
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void test_simhash_reference_random(void)
{
    /* random token strings, small and large vocabularies (tf > 1 and all distinct) */
    static const char *const words[] = {"alpha", "beta", "gamma", "δέλτα", "東", "x", "y_z",
                                        "42", "the", "of", "é", "zz"};
    uint64_t x = 2026;
    char buf[8192];
    struct dedup_idf *idf = load_idf_file();
    for (int t = 0; t < 300; t++) {
        size_t n = 1 + lcg(&x) % 200, len = 0;
        unsigned vocab = t % 2 ? 12 : 3;
        for (size_t i = 0; i < n; i++) {
            const char *w = words[lcg(&x) % vocab];
            if (i)
                buf[len++] = ' ';
            memcpy(buf + len, w, strlen(w));
            len += strlen(w);
        }
        buf[len] = '\0';
        struct dedup_opts o = {0};
        o.min_tokens = 1 + t % 6;
        o.idf = t % 3 == 0 ? idf : NULL;
        uint64_t a = 0, b = 0;
        enum dedup_code code;
        int ra = lib_fingerprint(buf, &o, &a, &code, NULL);
        int rb = ref_fingerprint(buf, o.min_tokens, o.idf, &b);
        ASSERT_EQ(ra, rb);
        ASSERT_EQ(a, b);
    }
    dedup_idf_free(idf);
}

static void test_simhash_naive_equals_fast(void)
{
    enum { MAXN = 5000 };
    uint64_t *h = malloc(MAXN * sizeof *h);
    uint32_t *w = malloc(MAXN * sizeof *w);
    CU_ASSERT_FATAL(h && w);
    uint64_t x = 99;
    for (int t = 0; t < 400; t++) {
        size_t n = t < 10 ? (size_t)t : lcg(&x) % MAXN;
        for (size_t i = 0; i < n; i++) {
            h[i] = lcg(&x) << 40 ^ lcg(&x) << 20 ^ lcg(&x);
            switch (t % 6) {
            case 0: w[i] = 256; break;                                  /* one class */
            case 1: w[i] = dedup__weight(1 + (uint32_t)(lcg(&x) % 8), 1.0); break;
            case 2: w[i] = 1 + (uint32_t)(lcg(&x) % DEDUP_WEIGHT_MAX); break; /* bit planes */
            case 3: w[i] = lcg(&x) % 2 ? 1 : DEDUP_WEIGHT_MAX; break;   /* extremes */
            case 4: w[i] = 1 + (uint32_t)(lcg(&x) % 40); break;         /* slot collisions */
            default: w[i] = i % 11 ? (uint32_t)(lcg(&x) << 1 | (i & 1)) : 0; /* any uint32, 0 */
            }
        }
        /* runs of one hash make lanes count past 255 between flushes */
        if (t % 7 == 0)
            for (size_t i = 0; i < n; i++)
                h[i] = i % 3 ? 0xffffffffffffffffull : 0x00000000ffffffffull;
        ASSERT_EQ(dedup__simhash_fast(h, w, n), dedup__simhash_naive(h, w, n));
    }
    free(h);
    free(w);
}

static void test_simhash_tie_rule(void)
{
    uint64_t h[2] = {0xf0f0f0f0f0f0f0f0ull, 0xff00ff00ff00ff00ull};
    uint32_t same[2] = {256, 256}, heavier[2] = {257, 256};
    /* equal weights: where the two hashes disagree V[i] = 0, which gives bit 0 */
    ASSERT_EQ(dedup__simhash_fast(h, same, 2), h[0] & h[1]);
    ASSERT_EQ(dedup__simhash_naive(h, same, 2), h[0] & h[1]);
    /* the heavier feature wins every disagreement */
    ASSERT_EQ(dedup__simhash_fast(h, heavier, 2), h[0]);
    /* "a b": three features of weight 256 (a, b, "a b"), no tie possible: each bit is the
     * majority of the three hashes' bits */
    struct dedup_features *f = dedup_features_new();
    struct dedup_opts min1 = {0};
    min1.min_tokens = 1;
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, "a b", 3, &min1), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_features_count(f), 3);
    uint64_t x = dedup_features_hash(f, 0), y = dedup_features_hash(f, 1), z = dedup_features_hash(f, 2);
    ASSERT_EQ(dedup_features_weight(f, 2), 256);
    uint64_t hs[3] = {x, y, z};
    uint32_t ws[3] = {256, 256, 256};
    ASSERT_EQ(dedup__simhash_fast(hs, ws, 3), (x & y) | (x & z) | (y & z));
    /* ... but a text that short is fingerprinted by the hash of its token string */
    ASSERT_EQ(dedup_simhash(f), XXH3_64bits_withSeed("a b", 3, DEDUP_SHORT_SEED));
    dedup_features_free(f);
}

static void test_simhash_bit_order(void)
{
    uint64_t h = 1;
    uint32_t w = 256;
    ASSERT_EQ(dedup__simhash_fast(&h, &w, 1), 1); /* bit 0 = least significant */
    char buf[17];
    CU_ASSERT_STRING_EQUAL(dedup_fingerprint_format(1, buf), "0000000000000001");
    CU_ASSERT_STRING_EQUAL(dedup_fingerprint_format(0x8000000000000001ull, buf), "8000000000000001");
    CU_ASSERT_STRING_EQUAL(dedup_fingerprint_format(0x0123456789abcdefull, buf), "0123456789abcdef");
    uint64_t v;
    ASSERT_EQ(dedup_fingerprint_parse("0123456789ABCDEF", 16, &v), DEDUP_OK);
    ASSERT_EQ(v, 0x0123456789abcdefull);
    ASSERT_EQ(dedup_fingerprint_parse("0123456789abcde", 15, &v), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_fingerprint_parse("0123456789abcdef0", 17, &v), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_fingerprint_parse("0123456789abcdeg", 16, &v), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_fingerprint_parse(" 123456789abcdef", 16, &v), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_distance(0, ~0ull), 64);
    ASSERT_EQ(dedup_distance(0x5, 0x3), 2);
    ASSERT_EQ(dedup_distance(42, 42), 0);
}

static void test_simhash_weights(void)
{
    /* 256 * min(tf, 64)^(7/8) */
    ASSERT_EQ(dedup__weight(1, 1.0), 256);
    ASSERT_EQ(dedup__weight(2, 1.0), 470);  /* 469.51 */
    ASSERT_EQ(dedup__weight(3, 1.0), 669);  /* 669.45 */
    ASSERT_EQ(dedup__weight(4, 1.0), 861);  /* 861.08 */
    ASSERT_EQ(dedup__weight(5, 1.0), 1047); /* 1046.74 */
    ASSERT_EQ(dedup__weight(63, 1.0), 9609);  /* 9608.66 */
    ASSERT_EQ(dedup__weight(64, 1.0), 9742);  /* 9741.98: the cap */
    ASSERT_EQ(dedup__weight(65, 1.0), 9742);
    ASSERT_EQ(dedup__weight(100, 1.0), 9742);
    ASSERT_EQ(dedup__weight(UINT32_MAX, 1.0), 9742);
    ASSERT_EQ(dedup__weight(1, 2.0), 512);
    ASSERT_EQ(dedup__weight(2, 1.5), 704); /* 704.26 */
    ASSERT_EQ(dedup__weight(UINT32_MAX, 1e9), DEDUP_WEIGHT_MAX); /* clamped */
    /* the cap on tf: floor(sqrt(distinct shingles)) within [1, 64] */
    ASSERT_EQ(dedup__tf_cap(0), 1);
    ASSERT_EQ(dedup__tf_cap(3), 1);
    ASSERT_EQ(dedup__tf_cap(4), 2);
    ASSERT_EQ(dedup__tf_cap(8), 2);
    ASSERT_EQ(dedup__tf_cap(9), 3);
    ASSERT_EQ(dedup__tf_cap(4095), 63);
    ASSERT_EQ(dedup__tf_cap(4096), 64);
    ASSERT_EQ(dedup__tf_cap((size_t)1 << 40), 64);
    /* "a b a b a b a b a": words a x5, b x4; pairs "a b" x4, "b a" x4; 4 distinct
     * shingles, so each counts at most twice */
    struct dedup_features *f = dedup_features_new();
    const char *s = "a b a b a b a b a";
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, s, strlen(s), NULL), DEDUP_OK);
    ASSERT_EQ(dedup_features_shingle_count(f), 17);
    ASSERT_EQ_FATAL(dedup_features_count(f), 4);
    ASSERT_EQ(dedup_features_hash(f, 0), XXH3_64bits_withSeed("a", 1, DEDUP_SEED));
    ASSERT_EQ(dedup_features_tf(f, 0), 5);
    ASSERT_EQ(dedup_features_weight(f, 0), 470);
    ASSERT_EQ(dedup_features_hash(f, 1), XXH3_64bits_withSeed("b", 1, DEDUP_SEED));
    ASSERT_EQ(dedup_features_tf(f, 1), 4);
    ASSERT_EQ(dedup_features_weight(f, 1), 470);
    size_t ab = dedup__features_find(f, XXH3_64bits_withSeed("a b", 3, DEDUP_SEED));
    size_t ba = dedup__features_find(f, XXH3_64bits_withSeed("b a", 3, DEDUP_SEED));
    CU_ASSERT_FATAL(ab != (size_t)-1 && ba != (size_t)-1);
    ASSERT_EQ(dedup_features_tf(f, ab), 4);
    ASSERT_EQ(dedup_features_weight(f, ba), 470);
    uint64_t want;
    ASSERT_EQ(ref_fingerprint(s, 5, NULL, &want), 0);
    ASSERT_EQ(dedup_simhash(f), want);
    dedup_features_free(f);
}

static void test_simhash_shingle_edges(void)
{
    struct dedup_features *f = dedup_features_new();
    struct dedup_opts min1 = {0};
    min1.min_tokens = 1;
    /* n tokens make n words and n - 1 pairs */
    static const struct {
        const char *s;
        size_t tokens, shingles;
        size_t distinct;
    } cases[] = {{"w", 1, 1, 1},         {"w v", 2, 3, 3},         {"w v u", 3, 5, 5},
                 {"w v u t", 4, 7, 7},   {"w v u t s", 5, 9, 9},   {"東 京", 2, 3, 3},
                 {"w w w", 3, 5, 2},     {"w v w v w", 5, 9, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *s = cases[i].s;
        ASSERT_EQ_FATAL(dedup_features_from_tokens(f, s, strlen(s), &min1), DEDUP_OK);
        ASSERT_EQ(dedup_features_token_count(f), cases[i].tokens);
        ASSERT_EQ(dedup_features_shingle_count(f), cases[i].shingles);
        ASSERT_EQ(dedup_features_count(f), cases[i].distinct);
        /* the first feature is the first word, hashed alone (no trailing space) */
        size_t w0 = strcspn(s, " ");
        ASSERT_EQ(dedup_features_hash(f, 0), XXH3_64bits_withSeed(s, w0, DEDUP_SEED));
    }
    /* "w v u t": words "w", "v", "u", "t" and pairs "w v", "v u", "u t", in text order */
    ASSERT_EQ(dedup_features_from_tokens(f, "w v u t", 7, &min1), DEDUP_OK);
    static const char *const want[] = {"w", "v", "w v", "u", "v u", "t", "u t"};
    for (size_t i = 0; i < 7; i++)
        ASSERT_EQ(dedup_features_hash(f, i),
                        XXH3_64bits_withSeed(want[i], strlen(want[i]), DEDUP_SEED));
    ASSERT_EQ(dedup__features_find(f, XXH3_64bits_withSeed("w v u", 5, DEDUP_SEED)), (size_t)-1);
    ASSERT_EQ(dedup__features_find(f, XXH3_64bits_withSeed("v w", 3, DEDUP_SEED)), (size_t)-1);
    /* word order counts through the pairs: a permutation has other pairs */
    uint64_t fa, fb, fc;
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, "w v u t s", 9, NULL), DEDUP_OK);
    fa = dedup_simhash(f);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, "s t u v w", 9, NULL), DEDUP_OK);
    fb = dedup_simhash(f);
    CU_ASSERT_NOT_EQUAL(fa, fb);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, "w v u t s", 9, NULL), DEDUP_OK);
    fc = dedup_simhash(f);
    ASSERT_EQ(fa, fc);
    /* the token string need not be NUL-terminated: only [0, len) counts */
    ASSERT_EQ(dedup_features_from_tokens(f, "w v u t s r", 9, NULL), DEDUP_OK);
    ASSERT_EQ(dedup_features_token_count(f), 5);
    dedup_features_free(f);
}

static void test_simhash_too_short(void)
{
    struct dedup_features *f = dedup_features_new();
    ASSERT_EQ(dedup_features_from_tokens(f, "", 0, NULL), DEDUP_ETOOSHORT);
    ASSERT_EQ(dedup_features_token_count(f), 0);
    ASSERT_EQ(dedup_features_from_tokens(f, NULL, 0, NULL), DEDUP_ETOOSHORT);
    ASSERT_EQ(dedup_features_from_tokens(f, "page not found", 14, NULL), DEDUP_ETOOSHORT);
    ASSERT_EQ(dedup_features_token_count(f), 3);
    ASSERT_EQ(dedup_features_count(f), 0);
    ASSERT_EQ(dedup_simhash(f), 0);
    const char *s = "a b c d";
    ASSERT_EQ(dedup_features_from_tokens(f, s, strlen(s), NULL), DEDUP_ETOOSHORT);
    s = "title and a short sentence"; /* 5 tokens: enough */
    ASSERT_EQ(dedup_features_from_tokens(f, s, strlen(s), NULL), DEDUP_OK);
    struct dedup_opts o = {0};
    o.min_tokens = 8;
    ASSERT_EQ(dedup_features_from_tokens(f, s, strlen(s), &o), DEDUP_ETOOSHORT);
    dedup_features_free(f);
}

static void test_simhash_bad_token_strings(void)
{
    struct dedup_features *f = dedup_features_new();
    static const char *const bad[] = {" a b c d e", "a b c d e ", "a b  c d e", " ", "  "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ASSERT_EQ(dedup_features_from_tokens(f, bad[i], strlen(bad[i]), NULL), DEDUP_EINVAL);
        ASSERT_EQ(dedup_features_count(f), 0);
    }
    ASSERT_EQ(dedup_features_from_tokens(f, NULL, 5, NULL), DEDUP_EINVAL);
    ASSERT_EQ(dedup_features_from_tokens(NULL, "a", 1, NULL), DEDUP_EINVAL);
    struct dedup_opts o = {0};
    o.max_tokens = 10;
    const char *s = "a b c d e f g h i j k";
    ASSERT_EQ(dedup_features_from_tokens(f, s, strlen(s), &o), DEDUP_ETOOLARGE);
    ASSERT_EQ(dedup_features_from_tokens(f, s, strlen(s) - 2, &o), DEDUP_OK);
    dedup_features_free(f);
}

static void test_simhash_reuse(void)
{
    /* a refilled object gives what a fresh one gives, big then small then big */
    char *big = malloc(200000);
    CU_ASSERT_FATAL(big != NULL);
    uint64_t x = 5;
    size_t len = 0;
    for (int i = 0; i < 20000; i++)
        len += (size_t)sprintf(big + len, i ? " t%llu" : "t%llu", (unsigned long long)(lcg(&x) % 3000));
    const char *small = "one two three four five six";
    struct dedup_features *f = dedup_features_new();
    uint64_t a, b, c;
    enum dedup_code code;
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, big, len, NULL), DEDUP_OK);
    a = dedup_simhash(f);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, small, strlen(small), NULL), DEDUP_OK);
    b = dedup_simhash(f);
    ASSERT_EQ(lib_fingerprint(small, NULL, &c, &code, NULL), 0);
    ASSERT_EQ(b, c);
    ASSERT_EQ(lib_fingerprint(big, NULL, &c, &code, NULL), 0);
    ASSERT_EQ(a, c);
    ASSERT_EQ(ref_fingerprint(small, 5, NULL, &c), 0);
    ASSERT_EQ(b, c);
    dedup_features_free(f);
    free(big);
}

/* A list page: n entries "file NAME hpp code" (a Doxygen directory page), names drawn
 * with the LCG from *x. */
static char *list_page(uint64_t *x, int n)
{
    char *s = malloc((size_t)n * 32 + 1), *p = s;
    CU_ASSERT_FATAL(s != NULL);
    for (int i = 0; i < n; i++) {
        p += sprintf(p, "%sfile ", i ? " " : "");
        for (int k = 0; k < 8; k++)
            *p++ = (char)('a' + lcg(x) % 26);
        p += sprintf(p, " hpp code");
    }
    *p = '\0';
    return s;
}

/* Two list pages of one shape with no entry in common are not near-duplicates: the four
 * words and pairs every entry repeats count at most sqrt(distinct) times (version 3),
 * so the names decide. With the fixed cap of version 2 (tf up to 64) these pages were
 * at cosine 0.96, distance 1 (the Doxygen dir_*.html false drops). */
static void test_simhash_list_pages(void)
{
    uint64_t x = 7;
    char *a = list_page(&x, 40), *b = list_page(&x, 40);
    struct dedup_features *fa = dedup_features_new(), *fb = dedup_features_new();
    ASSERT_EQ_FATAL(dedup_features_from_tokens(fa, a, strlen(a), NULL), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(fb, b, strlen(b), NULL), DEDUP_OK);
    /* file, hpp, code, "hpp code" x40, "code file" x39; 40 names x3: 125 distinct */
    ASSERT_EQ(dedup_features_count(fa), 125);
    size_t i = dedup__features_find(fa, XXH3_64bits_withSeed("hpp code", 8, DEDUP_SEED));
    CU_ASSERT_FATAL(i != (size_t)-1);
    ASSERT_EQ(dedup_features_tf(fa, i), 40);
    ASSERT_EQ(dedup_features_weight(fa, i), dedup__weight(11, 1.0)); /* sqrt(125) */
    CU_ASSERT(dedup_features_cosine(fa, fb) < 0.8);
    CU_ASSERT(dedup_distance(dedup_simhash(fa), dedup_simhash(fb)) > 3);
    dedup_features_free(fa);
    dedup_features_free(fb);
    free(a);
    free(b);
}

static void test_simhash_similarities(void)
{
    struct dedup_features *a = dedup_features_new(), *b = dedup_features_new();
    const char *sa = "a b c d e", *sb = "a b c d f", *sc = "p q r s t";
    ASSERT_EQ_FATAL(dedup_features_from_tokens(a, sa, strlen(sa), NULL), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(b, sb, strlen(sb), NULL), DEDUP_OK);
    /* words {a, b, c, d, e} + pairs {ab, bc, cd, de} vs {a, b, c, d, f} + {ab, bc, cd, df}:
     * 7 shared of 11; cosine 7/9 with equal weights */
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(a, b), 7.0 / 11.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(a, b), 7.0 / 9.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(a, a), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(a, a), 1.0, 1e-12);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(b, sc, strlen(sc), NULL), DEDUP_OK);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(a, b), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(a, b), 0.0, 1e-12);
    /* weighted: "x y z x y z x" = {x:3, y:2, z:2, xy:2, yz:2, zx:2} vs "x y z w" =
     * {x, y, z, w, xy, yz, zw: 1 each} */
    const char *sd = "x y z x y z x", *se = "x y z w";
    struct dedup_opts min1 = {0};
    min1.min_tokens = 1;
    ASSERT_EQ_FATAL(dedup_features_from_tokens(a, sd, strlen(sd), NULL), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(b, se, strlen(se), &min1), DEDUP_OK);
    /* 6 distinct shingles in sd: each counts at most floor(sqrt(6)) = 2 times, so x
     * weighs as much as the others (470, not 669) */
    double w2 = 470, w1 = 256;
    double want = (5 * w2) * w1 / (sqrt(6 * w2 * w2) * sqrt(7 * w1 * w1));
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(a, b), want, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(b, a), want, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(a, b), 5.0 / 8.0, 1e-12);
    /* empty sets */
    struct dedup_features *e = dedup_features_new();
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(e, e), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_jaccard(e, a), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_features_cosine(a, e), 0.0, 1e-12);
    dedup_features_free(e);
    dedup_features_free(a);
    dedup_features_free(b);
}

static void test_simhash_idf_parse(void)
{
    static const char good[] = "# simcrawl idf 1\n# docs 10\n"
                               "00000000000000ff\t10\n# a comment\n\n"
                               "ABCDEF0123456789\t3";
    struct dedup_idf *idf = NULL;
    struct dedup_parse_error err;
    ASSERT_EQ_FATAL(dedup_idf_parse(good, sizeof good - 1, &idf, &err), DEDUP_OK);
    ASSERT_EQ(dedup_idf_doc_count(idf), 10);
    ASSERT_EQ(dedup_idf_entry_count(idf), 2);
    ASSERT_EQ(dedup_idf_df(idf, 0xff), 10);
    ASSERT_EQ(dedup_idf_df(idf, 0xabcdef0123456789ull), 3);
    ASSERT_EQ(dedup_idf_df(idf, 0x1234), 1); /* absent: df 1 */
    CU_ASSERT_DOUBLE_EQUAL(dedup__idf_factor(idf, 0xff), 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(dedup__idf_factor(idf, 0x1234), 1.0 + log(11.0 / 2.0), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(dedup__idf_factor(idf, 0xabcdef0123456789ull), 1.0 + log(11.0 / 4.0), 1e-15);
    dedup_idf_free(idf);

    static const struct {
        const char *data;
        size_t line;
        const char *what; /* a substring of err.what */
    } bad[] = {
        {"", 1, "empty"},
        {"hello\n", 1, "not an idf file"},
        {"# simcrawl idf 2\n# docs 3\n", 1, "version"},
        {"# simcrawl idf 1\n", 2, "missing"},
        {"# simcrawl idf 1\n# documents 3\n", 2, "# docs N"},
        {"# simcrawl idf 1\n# docs 0\n", 2, "document count"},
        {"# simcrawl idf 1\n# docs 99999999999\n", 2, "document count"},
        {"# simcrawl idf 1\n# docs x\n", 2, "document count"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff 2\n", 3, "16 hex digits"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000f\t2\n", 3, "16 hex digits"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000fg\t2\n", 3, "16 hex digits"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t\n", 3, "16 hex digits"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t2x\n", 3, "not a decimal"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t2\r\n", 3, "not a decimal"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t-2\n", 3, "not a decimal"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t0\n", 3, "between 1 and"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t6\n", 3, "between 1 and"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t99999999999999999999999\n", 3, "not a decimal"},
        {"# simcrawl idf 1\n# docs 5\n00000000000000ff\t2\n# ok\n00000000000000FF\t3\n", 5, "duplicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        idf = (struct dedup_idf *)&err; /* must be reset to NULL */
        enum dedup_code rc = dedup_idf_parse(bad[i].data, strlen(bad[i].data), &idf, &err);
        ASSERT_EQ(rc, DEDUP_EFORMAT);
        CU_ASSERT_PTR_NULL(idf);
        ASSERT_EQ(err.line, bad[i].line);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, bad[i].what));
        if (err.line != bad[i].line || !strstr(err.what, bad[i].what))
            fprintf(stderr, "\nidf case %zu: line %zu: %s\n", i, err.line, err.what);
    }
    /* a NUL byte inside a line */
    static const char nul[] = "# simcrawl idf 1\n# docs 5\n00000000000000ff\t2\0\n";
    ASSERT_EQ(dedup_idf_parse(nul, sizeof nul - 1, &idf, &err), DEDUP_EFORMAT);
    ASSERT_EQ(err.line, 3);
    ASSERT_EQ(err.offset, 26);
}

static void test_simhash_idf_roundtrip(void)
{
    struct dedup_idf *counted = dedup_idf_new();
    struct dedup_features *f = dedup_features_new();
    /* words: a, b, c in 3 documents; d, q, r in 2; pairs: "a b", "b c" in 3; "c d", "q r" in
     * 2; the others in 1 */
    static const char *const docs[] = {"a b c d e f", "a b c d x y", "a b c q r s", "m n o p q r"};
    for (size_t i = 0; i < 4; i++) {
        ASSERT_EQ_FATAL(dedup_features_from_tokens(f, docs[i], strlen(docs[i]), NULL), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_idf_add_doc(counted, f), DEDUP_OK);
    }
    uint64_t ha = XXH3_64bits_withSeed("a", 1, DEDUP_SEED);
    uint64_t hd = XXH3_64bits_withSeed("d", 1, DEDUP_SEED);
    ASSERT_EQ(dedup_idf_doc_count(counted), 4);
    ASSERT_EQ(dedup_idf_df(counted, ha), 3);
    ASSERT_EQ(dedup_idf_df(counted, hd), 2);
    FILE *tmp = tmpfile();
    CU_ASSERT_FATAL(tmp != NULL);
    ASSERT_EQ_FATAL(dedup_idf_write(counted, tmp), DEDUP_OK);
    long size = ftell(tmp);
    rewind(tmp);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, tmp);
    fclose(tmp);
    ASSERT_EQ(n, (size_t)size);
    /* two lines of header and the df >= 2 entries only: a, b, c, d, q, r, ab, bc, cd, qr */
    ASSERT_EQ(n, 17 + 9 + 10 * 19);
    CU_ASSERT(memcmp(buf, "# simcrawl idf 1\n# docs 4\n", 26) == 0);
    struct dedup_idf *parsed = NULL;
    struct dedup_parse_error err;
    ASSERT_EQ_FATAL(dedup_idf_parse(buf, n, &parsed, &err), DEDUP_OK);
    ASSERT_EQ(dedup_idf_doc_count(parsed), 4);
    ASSERT_EQ(dedup_idf_entry_count(parsed), 10);
    ASSERT_EQ(dedup_idf_df(parsed, XXH3_64bits_withSeed("c d", 3, DEDUP_SEED)), 2);
    ASSERT_EQ(dedup_idf_df(parsed, ha), 3);
    ASSERT_EQ(dedup_idf_df(parsed, hd), 2);
    ASSERT_EQ(dedup_idf_df(parsed, XXH3_64bits_withSeed("m", 1, DEDUP_SEED)), 1);
    /* weights with the IDF: a idf = 1 + ln(5/4) -> round(256 * 1.2231) = 313 */
    struct dedup_opts o = {0};
    o.idf = parsed;
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, docs[0], strlen(docs[0]), &o), DEDUP_OK);
    size_t k = dedup__features_find(f, ha);
    CU_ASSERT_FATAL(k != (size_t)-1);
    ASSERT_EQ(dedup_features_weight(f, k), 313);
    k = dedup__features_find(f, XXH3_64bits_withSeed("f", 1, DEDUP_SEED)); /* df 1 */
    CU_ASSERT_FATAL(k != (size_t)-1);
    ASSERT_EQ(dedup_features_weight(f, k), (uint32_t)round(256 * (1 + log(5.0 / 2.0))));
    dedup_idf_free(parsed);
    dedup_idf_free(counted);
    dedup_features_free(f);
}

static void test_simhash_strerror(void)
{
    for (int c = DEDUP_OK; c <= DEDUP_ECHECKSUM; c++) {
        const char *s = dedup_strerror((enum dedup_code)c);
        CU_ASSERT_PTR_NOT_NULL(s);
        CU_ASSERT_STRING_NOT_EQUAL(s, "unknown error");
    }
    CU_ASSERT_STRING_EQUAL(dedup_strerror(DEDUP_ETOOSHORT), "too little text to fingerprint");
    CU_ASSERT_STRING_EQUAL(dedup_strerror((enum dedup_code)9999), "unknown error");
}

/* dedup_opts.text_tokens (the study of blocks repeated within a page, docs/BENCHMARKS.md
 * "Blocks repeated within a page (rep11p)"): a token string that stands for a longer text
 * (its repeats left out) is short, or too short, by the text's count, not its own. */
static void test_simhash_text_tokens(void)
{
    const char *t = "alpha beta gamma delta epsilon zeta";
    uint64_t got = 0, want = 0;
    enum dedup_code code;
    size_t ntok = 0;
    struct dedup_opts o = {0};
    /* alone, six tokens are a short text: the hash of the token string */
    ASSERT_EQ(lib_fingerprint(t, &o, &got, &code, &ntok), 0);
    ASSERT_EQ(got, XXH3_64bits_withSeed(t, strlen(t), DEDUP_SHORT_SEED));
    /* standing for a text of DEDUP_SHORT_TOKENS tokens: the simhash of their shingles */
    o.text_tokens = DEDUP_SHORT_TOKENS;
    ASSERT_EQ(lib_fingerprint(t, &o, &got, &code, &ntok), 0);
    ASSERT_EQ(ref_fingerprint_n(t, DEDUP_MIN_TOKENS, NULL, DEDUP_SHORT_TOKENS, &want), 0);
    ASSERT_EQ(got, want);
    CU_ASSERT(got != XXH3_64bits_withSeed(t, strlen(t), DEDUP_SHORT_SEED));
    ASSERT_EQ(ntok, 6); /* the tokens fingerprinted */
    /* one token is no text, two stand for five: fingerprinted */
    ASSERT_EQ(lib_fingerprint("one two", NULL, &got, &code, &ntok), -1);
    ASSERT_EQ(code, DEDUP_ETOOSHORT);
    o.text_tokens = DEDUP_MIN_TOKENS;
    ASSERT_EQ(lib_fingerprint("one two", &o, &got, &code, &ntok), 0);
    /* a count below the string's own changes nothing */
    o.text_tokens = 2;
    ASSERT_EQ(lib_fingerprint(t, &o, &got, &code, &ntok), 0);
    ASSERT_EQ(got, XXH3_64bits_withSeed(t, strlen(t), DEDUP_SHORT_SEED));
}

void test_simhash_register(void)
{
    CU_pSuite s = CU_add_suite("simhash", NULL, NULL);
    CU_add_test(s, "test_simhash_golden_vectors", test_simhash_golden_vectors);
    CU_add_test(s, "test_simhash_reference_random", test_simhash_reference_random);
    CU_add_test(s, "test_simhash_naive_equals_fast", test_simhash_naive_equals_fast);
    CU_add_test(s, "test_simhash_tie_rule", test_simhash_tie_rule);
    CU_add_test(s, "test_simhash_bit_order", test_simhash_bit_order);
    CU_add_test(s, "test_simhash_weights", test_simhash_weights);
    CU_add_test(s, "test_simhash_shingle_edges", test_simhash_shingle_edges);
    CU_add_test(s, "test_simhash_too_short", test_simhash_too_short);
    CU_add_test(s, "test_simhash_bad_token_strings", test_simhash_bad_token_strings);
    CU_add_test(s, "test_simhash_reuse", test_simhash_reuse);
    CU_add_test(s, "test_simhash_similarities", test_simhash_similarities);
    CU_add_test(s, "test_simhash_list_pages", test_simhash_list_pages);
    CU_add_test(s, "test_simhash_idf_parse", test_simhash_idf_parse);
    CU_add_test(s, "test_simhash_idf_roundtrip", test_simhash_idf_roundtrip);
    CU_add_test(s, "test_simhash_strerror", test_simhash_strerror);
    CU_add_test(s, "test_simhash_text_tokens", test_simhash_text_tokens);
}

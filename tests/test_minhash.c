/*
 * Tests of dedup/minhash*.c (docs/MINHASH.md): the golden vectors of
 * tests/data/minhash/vectors.txt (written by `bench_minhash --vectors`), a second, naive
 * implementation written from the spec alone, the estimate against the exact Jaccard on
 * generated sets, the LSH index against brute force over the signatures, the choice of
 * b x r, clusters, and the index file: round trip, every truncation, flipped bytes,
 * forged fields and the other method's file.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "dedup/dedup_int.h"
#include "dedup/minhash.h"
#include "tests/testutil.h"

extern void test_minhash_register(void);

#define VECTORS "tests/data/minhash/vectors.txt"
#define H DEDUP_MINHASH_H_DEFAULT

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 11;
}
static uint64_t rnd64(uint64_t *x) { return lcg(x) << 11 ^ lcg(x); }

static struct dedup_minhash *default_mh(void)
{
    struct dedup_minhash *mh = NULL;
    CU_ASSERT_FATAL(dedup_minhash_new(DEDUP_MINHASH_K_DEFAULT, H, DEDUP_MINHASH_SEED, &mh) ==
                    DEDUP_OK);
    return mh;
}

/* ---- a naive implementation from docs/MINHASH.md alone ---- */

static uint64_t naive_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The signature by the spec's words: split on spaces, join k tokens, hash, permute. */
static void naive_signature(const char *text, unsigned k, unsigned h, uint32_t *sig)
{
    uint64_t a[DEDUP_MINHASH_H_MAX], b[DEDUP_MINHASH_H_MAX], s = DEDUP_MINHASH_SEED;
    for (unsigned i = 0; i < h; i++) {
        a[i] = naive_splitmix(&s) | 1;
        b[i] = naive_splitmix(&s);
    }
    char *copy = strdup(text);
    char *tok[512];
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && n < 512;
         t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    for (unsigned i = 0; i < h; i++)
        sig[i] = 0xffffffffu;
    size_t nsh = n < k ? 1 : n - k + 1;
    for (size_t j = 0; j < nsh; j++) {
        char sh[4096] = "";
        size_t m = n < k ? n : k;
        for (size_t t = 0; t < m; t++) {
            if (t)
                strcat(sh, " ");
            strcat(sh, tok[j + t]);
        }
        uint64_t x = XXH3_64bits_withSeed(sh, strlen(sh), DEDUP_MINHASH_SEED);
        for (unsigned i = 0; i < h; i++) {
            uint32_t v = (uint32_t)((a[i] * x + b[i]) >> 32);
            if (v < sig[i])
                sig[i] = v;
        }
    }
    free(copy);
}

static int parse_sig(const char *s, uint32_t *sig, unsigned h)
{
    for (unsigned i = 0; i < h; i++) {
        char *end;
        sig[i] = (uint32_t)strtoul(s, &end, 16);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static void test_minhash_golden_vectors(void)
{
    size_t len;
    char *data = test_slurp(VECTORS, &len);
    CU_ASSERT_FATAL(data != NULL);
    struct dedup_minhash *mh = default_mh();
    unsigned counts[6] = {0};
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[8] = {0};
        int nf = 0;
        for (char *p = line; nf < 8;) {
            f[nf++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (strcmp(f[0], "hash") == 0 && nf == 3) {
            uint64_t want = strtoull(f[1], NULL, 16);
            ASSERT_EQ(dedup_minhash_shingle_hash(mh, f[2], strlen(f[2])), want);
            ASSERT_EQ(XXH3_64bits_withSeed(f[2], strlen(f[2]), DEDUP_MINHASH_SEED), want);
            counts[0]++;
        } else if (strcmp(f[0], "permute") == 0 && nf == 4) {
            unsigned i = (unsigned)atoi(f[1]);
            uint64_t x = strtoull(f[2], NULL, 16);
            ASSERT_EQ(dedup_minhash_permute(mh, i, x), (uint32_t)strtoul(f[3], NULL, 16));
            counts[1]++;
        } else if (strcmp(f[0], "sig") == 0 && nf == 4) {
            uint32_t want[H], got[H], naive[H];
            size_t nsh;
            CU_ASSERT_FATAL(parse_sig(f[2], want, H) == 0);
            ASSERT_EQ(dedup_minhash_signature(mh, f[3], strlen(f[3]), got, &nsh), DEDUP_OK);
            ASSERT_EQ(nsh, (size_t)atoi(f[1]));
            CU_ASSERT(memcmp(got, want, sizeof want) == 0);
            naive_signature(f[3], DEDUP_MINHASH_K_DEFAULT, H, naive);
            CU_ASSERT(memcmp(naive, want, sizeof want) == 0);
            counts[2]++;
        } else if (strcmp(f[0], "jaccard") == 0 && nf == 5) {
            uint32_t sa[H], sb[H];
            uint64_t *ha, *hb;
            size_t na, nb;
            CU_ASSERT_FATAL(dedup_minhash_signature(mh, f[3], strlen(f[3]), sa, NULL) == DEDUP_OK);
            CU_ASSERT_FATAL(dedup_minhash_signature(mh, f[4], strlen(f[4]), sb, NULL) == DEDUP_OK);
            CU_ASSERT_FATAL(dedup_minhash_shingle_set(mh, f[3], strlen(f[3]), &ha, &na) == DEDUP_OK);
            CU_ASSERT_FATAL(dedup_minhash_shingle_set(mh, f[4], strlen(f[4]), &hb, &nb) == DEDUP_OK);
            CU_ASSERT_DOUBLE_EQUAL(dedup_minhash_jaccard_sets(ha, na, hb, nb), strtod(f[1], NULL), 1e-15);
            CU_ASSERT_DOUBLE_EQUAL(dedup_minhash_estimate(sa, sb, H), strtod(f[2], NULL), 1e-15);
            free(ha);
            free(hb);
            counts[3]++;
        } else if (strcmp(f[0], "bands") == 0 && nf == 7) {
            unsigned b, r;
            ASSERT_EQ(dedup_lsh_optimal(strtod(f[1], NULL), (unsigned)atoi(f[2]),
                                              strtod(f[3], NULL), strtod(f[4], NULL), &b, &r),
                            DEDUP_OK);
            ASSERT_EQ(b, (unsigned)atoi(f[5]));
            ASSERT_EQ(r, (unsigned)atoi(f[6]));
            counts[4]++;
        } else {
            CU_FAIL("unknown record in " VECTORS);
        }
    }
    CU_ASSERT(counts[0] >= 5 && counts[1] >= 10 && counts[2] >= 5 && counts[3] >= 5 &&
              counts[4] >= 20);
    dedup_minhash_free(mh);
    free(data);
}

/* The AVX2 kernel (when the CPU has it) and the scalar loop give the same signatures, for
 * every h from 1 to 70 (the tail past a multiple of 8 included) and random sets. */
static void test_minhash_kernels_agree(void)
{
    uint64_t x = 3, set[300];
    for (unsigned h = 1; h <= 70; h++) {
        struct dedup_minhash *mh = NULL;
        CU_ASSERT_FATAL(dedup_minhash_new(5, h, x, &mh) == DEDUP_OK);
        uint32_t fast[70], slow[70];
        for (int t = 0; t < 5; t++) {
            size_t n = (size_t)(lcg(&x) % 300);
            for (size_t i = 0; i < n; i++)
                set[i] = rnd64(&x);
            dedup__minhash_use_scalar(mh, 0);
            dedup_minhash_signature_hashes(mh, set, n, fast);
            dedup__minhash_use_scalar(mh, 1);
            dedup_minhash_signature_hashes(mh, set, n, slow);
            CU_ASSERT(memcmp(fast, slow, h * sizeof *fast) == 0);
            for (unsigned i = 0; i < h && n; i++) { /* and both are the minimum of the spec */
                uint32_t want = 0xffffffffu;
                for (size_t j = 0; j < n; j++) {
                    uint32_t v = dedup_minhash_permute(mh, i, set[j]);
                    want = v < want ? v : want;
                }
                ASSERT_EQ(slow[i], want);
            }
        }
        dedup_minhash_free(mh);
    }
}

/* Shingle edges: fewer than k tokens is one shingle (the whole string); k tokens one;
 * k + 1 two; malformed strings are refused; a sig depends on order. */
static void test_minhash_shingles(void)
{
    struct dedup_minhash *mh = default_mh();
    uint32_t s1[H], s2[H];
    size_t n;
    ASSERT_EQ(dedup_minhash_signature(mh, "", 0, s1, &n), DEDUP_ETOOSHORT);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(dedup_minhash_signature(mh, "a  b", 4, s1, NULL), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_signature(mh, " a", 2, s1, NULL), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_signature(mh, "a ", 2, s1, NULL), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_signature(mh, "one two", 7, s1, &n), DEDUP_OK);
    ASSERT_EQ(n, 1);
    uint64_t x = XXH3_64bits_withSeed("one two", 7, DEDUP_MINHASH_SEED);
    dedup_minhash_signature_hashes(mh, &x, 1, s2);
    CU_ASSERT(memcmp(s1, s2, sizeof s1) == 0);
    ASSERT_EQ(dedup_minhash_signature(mh, "a b c d e", 9, s1, &n), DEDUP_OK);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(dedup_minhash_signature(mh, "a b c d e f", 11, s1, &n), DEDUP_OK);
    ASSERT_EQ(n, 2);
    uint64_t hs[2] = {XXH3_64bits_withSeed("a b c d e", 9, DEDUP_MINHASH_SEED),
                      XXH3_64bits_withSeed("b c d e f", 9, DEDUP_MINHASH_SEED)};
    dedup_minhash_signature_hashes(mh, hs, 2, s2);
    CU_ASSERT(memcmp(s1, s2, sizeof s1) == 0);
    /* the token string need not be NUL-terminated: only len bytes are read */
    ASSERT_EQ(dedup_minhash_signature(mh, "a b c d e fXXX", 11, s2, NULL), DEDUP_OK);
    CU_ASSERT(memcmp(s1, s2, sizeof s1) == 0);
    /* order matters (shingles are sequences) */
    ASSERT_EQ(dedup_minhash_signature(mh, "f e d c b a", 11, s2, NULL), DEDUP_OK);
    CU_ASSERT(dedup_minhash_estimate(s1, s2, H) < 0.1);
    /* repeats do not change a signature (a min over a set) */
    ASSERT_EQ(dedup_minhash_signature(mh, "a b c d e f a b c d e f", 23, s2, NULL), DEDUP_OK);
    uint64_t *set;
    size_t ns;
    ASSERT_EQ(dedup_minhash_shingle_set(mh, "a b c d e f a b c d e f", 23, &set, &ns), DEDUP_OK);
    ASSERT_EQ(ns, 6); /* 8 shingles, "a b c d e" and "b c d e f" twice */
    free(set);
    struct dedup_minhash *bad = NULL;
    ASSERT_EQ(dedup_minhash_new(0, 128, 1, &bad), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_new(5, 0, 1, &bad), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_new(5, DEDUP_MINHASH_H_MAX + 1, 1, &bad), DEDUP_EINVAL);
    ASSERT_EQ(dedup_minhash_new(DEDUP_MINHASH_K_MAX + 1, 128, 1, &bad), DEDUP_EINVAL);
    CU_ASSERT_PTR_NULL(bad);
    dedup_minhash_free(mh);
}

/* Two generated sets with `shared` common hashes and `only` hashes of their own each. */
static void gen_pair(uint64_t *x, size_t shared, size_t only_a, size_t only_b, uint64_t *a,
                     uint64_t *b)
{
    for (size_t i = 0; i < shared; i++)
        a[i] = b[i] = rnd64(x);
    for (size_t i = 0; i < only_a; i++)
        a[shared + i] = rnd64(x);
    for (size_t i = 0; i < only_b; i++)
        b[shared + i] = rnd64(x);
}

/* The estimate is within 4.5 standard deviations of the exact Jaccard on every pair and
 * unbiased on average over 40 draws per level (sd of the mean: sqrt(J(1-J)/128/40)). */
static void test_minhash_estimate_vs_exact(void)
{
    struct dedup_minhash *mh = default_mh();
    static const double levels[] = {0.0, 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0};
    uint64_t x = 7, a[600], b[600];
    uint32_t sa[H], sb[H];
    for (size_t li = 0; li < sizeof levels / sizeof *levels; li++) {
        double sum = 0, j = 0;
        int trials = 40;
        for (int t = 0; t < trials; t++) {
            size_t uni = 100 + (size_t)(lcg(&x) % 400);
            size_t shared = (size_t)llround(levels[li] * (double)uni);
            size_t rest = uni - shared, oa = rest / 2, ob = rest - oa;
            gen_pair(&x, shared, oa, ob, a, b);
            j = (double)shared / (double)uni;
            dedup_minhash_signature_hashes(mh, a, shared + oa, sa);
            dedup_minhash_signature_hashes(mh, b, shared + ob, sb);
            double e = dedup_minhash_estimate(sa, sb, H);
            double sd = sqrt(j * (1 - j) / H);
            CU_ASSERT(fabs(e - j) <= 4.5 * sd + 1.0 / H);
            sum += e - j;
        }
        double sdm = sqrt(levels[li] * (1 - levels[li]) / H / trials);
        CU_ASSERT(fabs(sum / trials) <= 4 * sdm + 0.5 / H);
    }
    /* exact Jaccard of sorted sets */
    uint64_t p[] = {1, 2, 3, 4}, q[] = {3, 4, 5};
    CU_ASSERT_DOUBLE_EQUAL(dedup_minhash_jaccard_sets(p, 4, q, 3), 2.0 / 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_minhash_jaccard_sets(p, 0, q, 0), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_minhash_jaccard_sets(p, 4, q, 0), 0.0, 1e-12);
    dedup_minhash_free(mh);
}

/* b x r: datasketch's documented choice for 0.8 and 128 permutations with equal weights
 * is 9 x 13; the defaults; the S-curve; bad arguments. */
static void test_minhash_lsh_params(void)
{
    unsigned b, r;
    ASSERT_EQ(dedup_lsh_optimal(0.8, 128, 0.5, 0.5, &b, &r), DEDUP_OK);
    ASSERT_EQ(b, 9);
    ASSERT_EQ(r, 13);
    struct dedup_lsh_params p;
    ASSERT_EQ(dedup_lsh_params_default(0.8, &p), DEDUP_OK);
    ASSERT_EQ(p.b, 14);
    ASSERT_EQ(p.r, 9);
    CU_ASSERT(p.b * p.r <= p.h);
    CU_ASSERT(dedup_lsh_probability(0.9, p.b, p.r) > 0.99);
    CU_ASSERT(dedup_lsh_probability(0.5, p.b, p.r) < 0.03);
    CU_ASSERT_DOUBLE_EQUAL(dedup_lsh_probability(1.0, 3, 4), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(dedup_lsh_probability(0.0, 3, 4), 0.0, 1e-12);
    /* every threshold gives a valid design, lower thresholds shorter bands */
    unsigned prev_r = 0;
    for (int t = 1; t <= 10; t++) {
        ASSERT_EQ(dedup_lsh_optimal(t / 10.0, 128, 0.1, 0.9, &b, &r), DEDUP_OK);
        CU_ASSERT(b * r <= 128 && b >= 1 && r >= 1);
        CU_ASSERT(r >= prev_r);
        prev_r = r;
    }
    ASSERT_EQ(dedup_lsh_optimal(0.0, 128, 0.5, 0.5, &b, &r), DEDUP_EINVAL);
    ASSERT_EQ(dedup_lsh_optimal(1.5, 128, 0.5, 0.5, &b, &r), DEDUP_EINVAL);
    ASSERT_EQ(dedup_lsh_optimal(NAN, 128, 0.5, 0.5, &b, &r), DEDUP_EINVAL);
    ASSERT_EQ(dedup_lsh_optimal(0.8, 0, 0.5, 0.5, &b, &r), DEDUP_EINVAL);
    ASSERT_EQ(dedup_lsh_optimal(0.8, 128, -1, 0.5, &b, &r), DEDUP_EINVAL);
    ASSERT_EQ(dedup_lsh_params_default(0.0, &p), DEDUP_EINVAL);
    p.b = 100;
    p.r = 2;
    p.threshold = 0.8;
    ASSERT_EQ(dedup_lsh_params_check(&p), DEDUP_EINVAL);
}

/* An index of N documents: groups of near-duplicates at various Jaccards. */
#define NDOC 600
static struct dedup_lsh *build_index(double t)
{
    struct dedup_lsh_params p;
    struct dedup_lsh *l = NULL;
    CU_ASSERT_FATAL(dedup_lsh_params_default(t, &p) == DEDUP_OK);
    CU_ASSERT_FATAL(dedup_lsh_new(&p, &l) == DEDUP_OK);
    const struct dedup_minhash *mh = dedup_lsh_minhash(l);
    uint64_t x = 42, base[150], set[150];
    uint32_t sig[H];
    for (uint32_t d = 0; d < NDOC;) {
        for (int i = 0; i < 150; i++)
            base[i] = rnd64(&x);
        int group = 1 + (int)(lcg(&x) % 5);
        for (int g = 0; g < group && d < NDOC; g++, d++) {
            memcpy(set, base, sizeof set);
            int change = g ? (int)(lcg(&x) % 40) : 0;
            for (int c = 0; c < change; c++)
                set[lcg(&x) % 150] = rnd64(&x);
            dedup_minhash_signature_hashes(mh, set, 150, sig);
            char id[32];
            snprintf(id, sizeof id, "doc-%u", d);
            uint32_t got;
            CU_ASSERT_FATAL(dedup_lsh_add(l, sig, id, strlen(id), &got) == DEDUP_OK);
            ASSERT_EQ(got, d);
        }
    }
    return l;
}

struct pairs_seen {
    uint32_t a[20000], b[20000];
    double j[20000];
    size_t n;
};

static int keep_pair(void *ud, uint32_t a, uint32_t b, double j)
{
    struct pairs_seen *s = ud;
    if (s->n < 20000) {
        s->a[s->n] = a;
        s->b[s->n] = b;
        s->j[s->n] = j;
        s->n++;
    }
    return 0;
}

/* LSH against brute force on the signatures: every reported pair is a brute-force pair
 * with the same estimate, in (a, b) order, each once; recall of the banding >= 0.95 of
 * the pairs at >= t (the S-curve of 14 x 9 at J >= 0.8 is >= 0.87, and most pairs lie
 * well above t); queries agree with pairs. */
static void test_minhash_lsh_vs_brute_force(void)
{
    struct dedup_lsh *l = build_index(0.8);
    unsigned h = dedup_lsh_get_params(l)->h;
    static struct pairs_seen s;
    s.n = 0;
    uint64_t cand = 0;
    int stopped = 0;
    ASSERT_EQ(dedup_lsh_pairs(l, 0.8, 0, keep_pair, &s, &stopped, &cand), DEDUP_OK);
    ASSERT_EQ(stopped, 0);
    size_t brute = 0, above9 = 0, found9 = 0;
    for (uint32_t a = 0; a < NDOC; a++)
        for (uint32_t b = a + 1; b < NDOC; b++) {
            double e = dedup_minhash_estimate(dedup_lsh_signature(l, a), dedup_lsh_signature(l, b), h);
            if (e < 0.8)
                continue;
            brute++;
            int found = 0;
            for (size_t i = 0; i < s.n; i++)
                if (s.a[i] == a && s.b[i] == b)
                    found = 1;
            if (e >= 0.9) {
                above9++;
                found9 += found;
            }
        }
    CU_ASSERT(brute > 100);
    CU_ASSERT(s.n <= brute);
    CU_ASSERT((double)s.n >= 0.95 * (double)brute);
    ASSERT_EQ(found9, above9);
    CU_ASSERT(cand >= s.n);
    for (size_t i = 0; i < s.n; i++) {
        CU_ASSERT(s.a[i] < s.b[i]);
        if (i)
            CU_ASSERT(s.a[i - 1] < s.a[i] || (s.a[i - 1] == s.a[i] && s.b[i - 1] < s.b[i]));
        CU_ASSERT_DOUBLE_EQUAL(s.j[i], dedup_minhash_estimate(dedup_lsh_signature(l, s.a[i]),
                                                              dedup_lsh_signature(l, s.b[i]), h),
                               1e-12);
        CU_ASSERT(s.j[i] >= 0.8);
    }
    /* min_b: only pairs whose later document is >= 300 */
    static struct pairs_seen s2;
    s2.n = 0;
    ASSERT_EQ(dedup_lsh_pairs(l, 0.8, 300, keep_pair, &s2, NULL, NULL), DEDUP_OK);
    size_t want = 0;
    for (size_t i = 0; i < s.n; i++)
        want += s.b[i] >= 300;
    ASSERT_EQ(s2.n, want);
    /* queries: each document finds itself first (1.0) and exactly its pair partners */
    struct dedup_lsh_matches m = {0};
    for (uint32_t d = 0; d < NDOC; d += 7) {
        size_t c;
        ASSERT_EQ(dedup_lsh_query(l, dedup_lsh_signature(l, d), 0.8, 0, &m, &c), DEDUP_OK);
        CU_ASSERT_FATAL(m.n >= 1);
        ASSERT_EQ(m.v[0].doc, d);
        CU_ASSERT_DOUBLE_EQUAL(m.v[0].jaccard, 1.0, 1e-12);
        size_t partners = 0;
        for (size_t i = 0; i < s.n; i++)
            partners += s.a[i] == d || s.b[i] == d;
        ASSERT_EQ(m.n, partners + 1);
        for (size_t i = 1; i < m.n; i++)
            CU_ASSERT(m.v[i - 1].jaccard > m.v[i].jaccard ||
                      (m.v[i - 1].jaccard == m.v[i].jaccard && m.v[i - 1].doc < m.v[i].doc));
        CU_ASSERT(c >= m.n);
        if (m.n > 1) { /* the limit keeps the most similar */
            double second = m.v[1].jaccard;
            ASSERT_EQ(dedup_lsh_query(l, dedup_lsh_signature(l, d), 0.8, 2, &m, NULL), DEDUP_OK);
            ASSERT_EQ(m.n, 2);
            CU_ASSERT_DOUBLE_EQUAL(m.v[1].jaccard, second, 1e-12);
        }
    }
    ASSERT_EQ(dedup_lsh_query(l, dedup_lsh_signature(l, 0), 1.5, 0, &m, NULL), DEDUP_EINVAL);
    dedup_lsh_matches_release(&m);
    /* clusters: every pair's documents are in one cluster */
    struct dedup_clusters *c = NULL;
    ASSERT_EQ_FATAL(dedup_lsh_clusters(l, 0.8, &c), DEDUP_OK);
    uint32_t *cl = malloc(NDOC * sizeof *cl);
    for (uint32_t d = 0; d < NDOC; d++)
        cl[d] = 0xffffffffu;
    for (size_t i = 0; i < dedup_clusters_count(c); i++) {
        CU_ASSERT(dedup_clusters_size(c, i) >= 2);
        if (i)
            CU_ASSERT(dedup_clusters_size(c, i - 1) >= dedup_clusters_size(c, i));
        for (size_t j = 0; j < dedup_clusters_size(c, i); j++) {
            uint32_t d = dedup_clusters_member(c, i, j);
            if (j)
                CU_ASSERT(d > dedup_clusters_member(c, i, j - 1));
            cl[d] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < s.n; i++)
        CU_ASSERT(cl[s.a[i]] != 0xffffffffu && cl[s.a[i]] == cl[s.b[i]]);
    free(cl);
    dedup_clusters_free(c);
    struct dedup_lsh_stats st;
    dedup_lsh_stats(l, &st);
    ASSERT_EQ(st.docs, NDOC);
    CU_ASSERT(st.buckets > 0 && st.shared > 0 && st.bucket_max >= 2);
    dedup_lsh_free(l);
}

/* All pairs and clusters on several threads: the same pairs in the same order, with the
 * same estimates and candidate counts, and the same clusters, as on one thread (also with
 * min_b, and with more threads than bands' tasks could use). */
static void test_minhash_lsh_threads(void)
{
    struct dedup_lsh *l = build_index(0.8);
    static struct pairs_seen one, many;
    struct dedup_clusters *c1 = NULL, *cn = NULL;
    for (uint32_t min_b = 0; min_b <= 300; min_b += 300) {
        uint64_t cand1 = 0, candn = 0;
        one.n = 0;
        dedup_lsh_set_threads(l, 1);
        ASSERT_EQ(dedup_lsh_pairs(l, 0.8, min_b, keep_pair, &one, NULL, &cand1), DEDUP_OK);
        CU_ASSERT(one.n > 50);
        for (unsigned th = 2; th <= 17; th += 15) {
            many.n = 0;
            dedup_lsh_set_threads(l, th);
            ASSERT_EQ(dedup_lsh_pairs(l, 0.8, min_b, keep_pair, &many, NULL, &candn),
                            DEDUP_OK);
            ASSERT_EQ(many.n, one.n);
            ASSERT_EQ(candn, cand1);
            CU_ASSERT(memcmp(many.a, one.a, one.n * sizeof *one.a) == 0);
            CU_ASSERT(memcmp(many.b, one.b, one.n * sizeof *one.b) == 0);
            CU_ASSERT(memcmp(many.j, one.j, one.n * sizeof *one.j) == 0);
        }
    }
    dedup_lsh_set_threads(l, 1);
    ASSERT_EQ_FATAL(dedup_lsh_clusters(l, 0.8, &c1), DEDUP_OK);
    dedup_lsh_set_threads(l, 4);
    ASSERT_EQ_FATAL(dedup_lsh_clusters(l, 0.8, &cn), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_clusters_count(cn), dedup_clusters_count(c1));
    for (size_t i = 0; i < dedup_clusters_count(c1); i++) {
        ASSERT_EQ_FATAL(dedup_clusters_size(cn, i), dedup_clusters_size(c1, i));
        for (size_t j = 0; j < dedup_clusters_size(c1, i); j++)
            ASSERT_EQ(dedup_clusters_member(cn, i, j), dedup_clusters_member(c1, i, j));
    }
    dedup_clusters_free(c1);
    dedup_clusters_free(cn);
    dedup_lsh_free(l);
}

static void test_minhash_lsh_add_errors(void)
{
    struct dedup_lsh_params p;
    struct dedup_lsh *l = NULL;
    CU_ASSERT_FATAL(dedup_lsh_params_default(0.8, &p) == DEDUP_OK);
    CU_ASSERT_FATAL(dedup_lsh_new(&p, &l) == DEDUP_OK);
    uint32_t sig[H];
    memset(sig, 0, sizeof sig);
    ASSERT_EQ(dedup_lsh_add(l, sig, "a\0b", 3, NULL), DEDUP_EINVAL);
    char *big = calloc(1, DEDUP_INDEX_MAX_ID_BYTES + 2);
    memset(big, 'x', DEDUP_INDEX_MAX_ID_BYTES + 1);
    ASSERT_EQ(dedup_lsh_add(l, sig, big, DEDUP_INDEX_MAX_ID_BYTES + 1, NULL), DEDUP_ETOOLARGE);
    free(big);
    ASSERT_EQ(dedup_lsh_doc_count(l), 0);
    struct dedup_lsh_matches m = {0};
    ASSERT_EQ(dedup_lsh_query(l, sig, 0.8, 0, &m, NULL), DEDUP_OK); /* empty index */
    ASSERT_EQ(m.n, 0);
    ASSERT_EQ(dedup_lsh_add(l, sig, "", 0, NULL), DEDUP_OK); /* an empty id is an id */
    size_t len;
    CU_ASSERT_STRING_EQUAL(dedup_lsh_id(l, 0, &len), "");
    ASSERT_EQ(len, 0);
    dedup_lsh_matches_release(&m);
    p.b = 0;
    struct dedup_lsh *bad = NULL;
    ASSERT_EQ(dedup_lsh_new(&p, &bad), DEDUP_EINVAL);
    CU_ASSERT_PTR_NULL(bad);
    dedup_lsh_free(l);
}

/* Save, load, compare: parameters, ids, signatures, pairs and the template table. */
static void test_minhash_file_roundtrip(void)
{
    struct dedup_lsh *l = build_index(0.8);
    struct dedup_templates *t = dedup_lsh_templates(l);
    uint64_t blocks[3] = {11, 12, 13};
    CU_ASSERT_FATAL(t != NULL);
    ASSERT_EQ(dedup_templates_add_doc(t, "example.org", 11, 0, blocks, 3, NULL), DEDUP_OK);
    char path[] = "/tmp/test_minhash_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    struct dedup_file_error err;
    ASSERT_EQ_FATAL(dedup_lsh_save(l, path, &err), DEDUP_OK);
    struct dedup_lsh *m = NULL;
    ASSERT_EQ_FATAL(dedup_lsh_load(path, &m, &err), DEDUP_OK);
    const struct dedup_lsh_params *pa = dedup_lsh_get_params(l), *pb = dedup_lsh_get_params(m);
    CU_ASSERT(pa->k == pb->k && pa->h == pb->h && pa->b == pb->b && pa->r == pb->r &&
              pa->threshold == pb->threshold && pa->seed == pb->seed);
    ASSERT_EQ_FATAL(dedup_lsh_doc_count(m), NDOC);
    for (uint32_t d = 0; d < NDOC; d++) {
        CU_ASSERT_STRING_EQUAL(dedup_lsh_id(l, d, NULL), dedup_lsh_id(m, d, NULL));
        CU_ASSERT(memcmp(dedup_lsh_signature(l, d), dedup_lsh_signature(m, d), H * 4) == 0);
    }
    ASSERT_EQ(dedup_templates_docs(dedup_lsh_templates(m), "example.org", 11), 1);
    static struct pairs_seen s1, s2;
    s1.n = s2.n = 0;
    ASSERT_EQ(dedup_lsh_pairs(l, 0.8, 0, keep_pair, &s1, NULL, NULL), DEDUP_OK);
    ASSERT_EQ(dedup_lsh_pairs(m, 0.8, 0, keep_pair, &s2, NULL, NULL), DEDUP_OK);
    ASSERT_EQ(s1.n, s2.n);
    CU_ASSERT(memcmp(s1.a, s2.a, s1.n * 4) == 0 && memcmp(s1.b, s2.b, s1.n * 4) == 0);
    /* the same bytes again */
    uint8_t *b1, *b2;
    size_t n1, n2;
    ASSERT_EQ(dedup_lsh_serialize(l, &b1, &n1), DEDUP_OK);
    ASSERT_EQ(dedup_lsh_serialize(m, &b2, &n2), DEDUP_OK);
    CU_ASSERT(n1 == n2 && memcmp(b1, b2, n1) == 0);
    free(b1);
    free(b2);
    /* the file method */
    ASSERT_EQ(dedup_file_method("SIMCRMHX", 8), DEDUP_METHOD_MINHASH);
    ASSERT_EQ(dedup_file_method("SIMCRIDX", 8), DEDUP_METHOD_SIMHASH);
    ASSERT_EQ(dedup_file_method("SIMCR", 5), DEDUP_METHOD_UNKNOWN);
    /* a simhash loader refuses a minhash file by name, and the other way round */
    struct dedup_index *idx = NULL;
    CU_ASSERT_NOT_EQUAL(dedup_index_load(path, 0, &idx, &err), DEDUP_OK);
    CU_ASSERT_PTR_NULL(idx);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "minhash"));
    unlink(path);
    dedup_lsh_free(m);
    dedup_lsh_free(l);
    /* an empty index round-trips */
    struct dedup_lsh_params p;
    CU_ASSERT_FATAL(dedup_lsh_params_default(0.5, &p) == DEDUP_OK);
    CU_ASSERT_FATAL(dedup_lsh_new(&p, &l) == DEDUP_OK);
    ASSERT_EQ(dedup_lsh_serialize(l, &b1, &n1), DEDUP_OK);
    ASSERT_EQ(dedup_lsh_load_mem(b1, n1, 0, &m, &err), DEDUP_OK);
    ASSERT_EQ(dedup_lsh_doc_count(m), 0);
    CU_ASSERT_DOUBLE_EQUAL(dedup_lsh_get_params(m)->threshold, 0.5, 0);
    free(b1);
    dedup_lsh_free(m);
    dedup_lsh_free(l);
}

static void wr32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Damaged files: every truncation, every flipped byte (checksums on), forged fields with
 * the checksums off, a simhash file and garbage: an error code and a description, never
 * a crash (ASan runs this too). */
static void test_minhash_file_damaged(void)
{
    struct dedup_lsh_params p;
    struct dedup_lsh *l = NULL, *m = NULL;
    CU_ASSERT_FATAL(dedup_lsh_params_default(0.8, &p) == DEDUP_OK);
    p.h = 16;
    p.b = 4;
    p.r = 4;
    CU_ASSERT_FATAL(dedup_lsh_new(&p, &l) == DEDUP_OK);
    uint32_t sig[16];
    for (int d = 0; d < 3; d++) {
        for (int i = 0; i < 16; i++)
            sig[i] = (uint32_t)(d * 100 + i);
        char id[16];
        snprintf(id, sizeof id, "id%d", d);
        CU_ASSERT_FATAL(dedup_lsh_add(l, sig, id, strlen(id), NULL) == DEDUP_OK);
    }
    uint8_t *buf;
    size_t len;
    CU_ASSERT_FATAL(dedup_lsh_serialize(l, &buf, &len) == DEDUP_OK);
    struct dedup_file_error err;
    ASSERT_EQ(dedup_lsh_load_mem(buf, len, 0, &m, &err), DEDUP_OK);
    dedup_lsh_free(m);
    for (size_t cut = 0; cut < len; cut++) {
        m = NULL;
        enum dedup_code rc = dedup_lsh_load_mem(buf, cut, 0, &m, &err);
        CU_ASSERT(rc == DEDUP_ETRUNCATED || rc == DEDUP_EFORMAT);
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT(err.what && *err.what);
    }
    uint8_t *copy = malloc(len + 8);
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, buf, len);
        copy[i] ^= 0x40;
        m = NULL;
        enum dedup_code rc = dedup_lsh_load_mem(copy, len, 0, &m, &err);
        CU_ASSERT_NOT_EQUAL(rc, DEDUP_OK);
        CU_ASSERT_PTR_NULL(m);
        /* and with checksums off: whatever happens, nothing breaks */
        rc = dedup_lsh_load_mem(copy, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &m, &err);
        dedup_lsh_free(m);
    }
    /* forged fields (checksums off): each gives EFORMAT / EVERSION naming the field */
    struct {
        size_t off;
        uint32_t v;
        enum dedup_code rc;
        const char *what;
    } forged[] = {
        {8, 2, DEDUP_EVERSION, "format version"},
        {16, DEDUP_MINHASH_VERSION - 1, DEDUP_EVERSION, "MINHASH.md version"}, /* the one before */
        {20, 0, DEDUP_EFORMAT, "shingle size"},
        {24, 5000, DEDUP_EFORMAT, "signature size"},
        {28, 17, DEDUP_EFORMAT, "bands"},
        {56, 1000, DEDUP_EFORMAT, "file size"},
    };
    for (size_t i = 0; i < sizeof forged / sizeof *forged; i++) {
        memcpy(copy, buf, len);
        wr32le(copy + forged[i].off, forged[i].v);
        m = NULL;
        ASSERT_EQ(dedup_lsh_load_mem(copy, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &m, &err),
                        forged[i].rc);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, forged[i].what));
        dedup_lsh_free(m);
    }
    /* a threshold of 2.0 and of NaN */
    memcpy(copy, buf, len);
    double two = 2.0;
    memcpy(copy + 40, &two, 8);
    ASSERT_EQ(dedup_lsh_load_mem(copy, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &m, &err), DEDUP_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "threshold"));
    /* bytes after the end */
    memcpy(copy, buf, len);
    memset(copy + len, 0, 8);
    ASSERT_EQ(dedup_lsh_load_mem(copy, len + 8, DEDUP_INDEX_LOAD_NO_CHECKSUM, &m, &err), DEDUP_EFORMAT);
    /* simhash magic, garbage */
    memcpy(copy, buf, len);
    memcpy(copy, "SIMCRIDX", 8);
    ASSERT_EQ(dedup_lsh_load_mem(copy, len, 0, &m, &err), DEDUP_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "simhash"));
    ASSERT_EQ(dedup_lsh_load_mem("hello world", 11, 0, &m, &err), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_lsh_load("/nonexistent/x.idx", &m, &err), DEDUP_EIO);
    ASSERT_EQ(dedup_lsh_load("/tmp", &m, &err), DEDUP_EIO);
    CU_ASSERT_PTR_NULL(m);
    free(copy);
    free(buf);
    dedup_lsh_free(l);
}

void test_minhash_register(void)
{
    CU_pSuite s = CU_add_suite("minhash", NULL, NULL);
    CU_add_test(s, "test_minhash_golden_vectors", test_minhash_golden_vectors);
    CU_add_test(s, "test_minhash_shingles", test_minhash_shingles);
    CU_add_test(s, "test_minhash_kernels_agree", test_minhash_kernels_agree);
    CU_add_test(s, "test_minhash_estimate_vs_exact", test_minhash_estimate_vs_exact);
    CU_add_test(s, "test_minhash_lsh_params", test_minhash_lsh_params);
    CU_add_test(s, "test_minhash_lsh_vs_brute_force", test_minhash_lsh_vs_brute_force);
    CU_add_test(s, "test_minhash_lsh_threads", test_minhash_lsh_threads);
    CU_add_test(s, "test_minhash_lsh_add_errors", test_minhash_lsh_add_errors);
    CU_add_test(s, "test_minhash_file_roundtrip", test_minhash_file_roundtrip);
    CU_add_test(s, "test_minhash_file_damaged", test_minhash_file_damaged);
}

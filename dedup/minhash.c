/*
 * MinHash signatures of word k-shingles and the choice of LSH bands (docs/MINHASH.md,
 * version 1).
 *
 * A shingle is k consecutive tokens of the token string, taken in place as the byte range
 * from the first byte of its first token to the last byte of its last (no copy), and
 * hashed once with XXH3_64bits_withSeed (xxHash, doc/xxhash_spec.md). The h "permutations"
 * are multiply-add-shift hashes of that 64-bit value (Dietzfelbinger, "Universal hashing
 * and k-wise independent random variables via integer multiplication", STACS 1996):
 *     v_i(x) = (uint32_t)((a_i * x + b_i) mod 2^64 >> 32),  a_i odd
 * with a_i, b_i drawn from the seed by splitmix64 (Steele, Lea and Flood, OOPSLA 2014).
 * One XXH3 per shingle and one multiply-add per value: the inner loop over i has no
 * branch but a min, which the compiler vectorises. Why not one-permutation hashing with
 * densification (Shrivastava, ICML 2017), which is O(n + h) instead of O(n * h): its
 * rows are not independent for short texts, so the S-curve that chooses b x r (section 4
 * of the spec) would no longer describe the banding; the measured cost of the h
 * multiplies is in docs/BENCHMARKS.md ("MinHash").
 *
 * The band choice follows datasketch's MinHashLSH._optimal_param (ekzhu/datasketch,
 * datasketch/lsh.py): minimise the weighted areas of false positives and false negatives
 * under the S-curve 1 - (1 - s^r)^b, here integrated with Simpson's rule.
 */
#include "dedup/dedup_int.h"
#include "dedup/minhash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

struct dedup_minhash {
    unsigned k, h;
    uint64_t seed;
    uint64_t *a, *b; /* h coefficients each */
    int avx2;        /* fold with the AVX2 kernel (the CPU has it; not forced off) */
};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MH_HAVE_AVX2 1
#endif

/* splitmix64 (the reference generator of Steele et al.; java.util.SplittableRandom). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

enum dedup_code dedup_minhash_new(unsigned k, unsigned h, uint64_t seed, struct dedup_minhash **out)
{
    *out = NULL;
    if (k < 1 || k > DEDUP_MINHASH_K_MAX || h < 1 || h > DEDUP_MINHASH_H_MAX)
        return DEDUP_EINVAL;
    struct dedup_minhash *mh = calloc(1, sizeof *mh);
    if (!mh)
        return DEDUP_ENOMEM;
    mh->a = malloc(h * sizeof *mh->a);
    mh->b = malloc(h * sizeof *mh->b);
    if (!mh->a || !mh->b) {
        dedup_minhash_free(mh);
        return DEDUP_ENOMEM;
    }
    mh->k = k;
    mh->h = h;
    mh->seed = seed;
#ifdef MH_HAVE_AVX2
    mh->avx2 = __builtin_cpu_supports("avx2");
#endif
    uint64_t state = seed;
    for (unsigned i = 0; i < h; i++) {
        mh->a[i] = splitmix64(&state) | 1u;
        mh->b[i] = splitmix64(&state);
    }
    *out = mh;
    return DEDUP_OK;
}

void dedup_minhash_free(struct dedup_minhash *mh)
{
    if (!mh)
        return;
    free(mh->a);
    free(mh->b);
    free(mh);
}

unsigned dedup_minhash_k(const struct dedup_minhash *mh)
{
    return mh->k;
}
unsigned dedup_minhash_h(const struct dedup_minhash *mh)
{
    return mh->h;
}
uint64_t dedup_minhash_seed(const struct dedup_minhash *mh)
{
    return mh->seed;
}

uint64_t dedup_minhash_shingle_hash(const struct dedup_minhash *mh, const char *bytes, size_t len)
{
    return XXH3_64bits_withSeed(bytes, len, mh->seed);
}

uint32_t dedup_minhash_permute(const struct dedup_minhash *mh, unsigned i, uint64_t x)
{
    return (uint32_t)((mh->a[i] * x + mh->b[i]) >> 32);
}

/* sig[i] = min(sig[i], v_i(x)) for i in [from, h): the portable kernel. */
static inline void fold_scalar(const struct dedup_minhash *mh, unsigned from, uint64_t x,
                               uint32_t *restrict sig)
{
    const uint64_t *restrict a = mh->a, *restrict b = mh->b;
    unsigned h = mh->h;
    for (unsigned i = from; i < h; i++) {
        uint32_t v = (uint32_t)((a[i] * x + b[i]) >> 32);
        sig[i] = v < sig[i] ? v : sig[i];
    }
}

#ifdef MH_HAVE_AVX2
/*
 * The same 8 values at a time. AVX2 has no 64 x 64-bit multiply, but only bits 32..63 of
 * a x + b (mod 2^64) are wanted: with a = ah 2^32 + al and x = xh 2^32 + xl,
 *     (a x + b) >> 32 = ((al xl + b) mod 2^64 >> 32) + ah xl + al xh    (mod 2^32)
 * (the ah xh 2^64 term vanishes and the cross terms only reach bits 32 and up), which is
 * three 32 x 32 -> 64-bit multiplies (vpmuludq) per 4 values. The tests check it against
 * the scalar kernel and the golden vectors.
 */
__attribute__((target("avx2"))) static void fold_avx2(const struct dedup_minhash *mh, uint64_t x,
                                                      uint32_t *sig)
{
    const __m256i xl = _mm256_set1_epi64x((long long)(x & 0xffffffffu));
    const __m256i xh = _mm256_set1_epi64x((long long)(x >> 32));
    const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    unsigned h = mh->h, i = 0;
    for (; i + 8 <= h; i += 8) {
        __m256i r[2];
        for (int q = 0; q < 2; q++) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(mh->a + i + 4 * q));
            __m256i b = _mm256_loadu_si256((const __m256i *)(mh->b + i + 4 * q));
            __m256i s = _mm256_add_epi64(_mm256_mul_epu32(a, xl), b);
            __m256i c = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), xl),
                                         _mm256_mul_epu32(a, xh));
            __m256i v = _mm256_add_epi64(_mm256_srli_epi64(s, 32), c);
            r[q] = _mm256_permutevar8x32_epi32(v, low); /* low dwords into the low half */
        }
        __m256i v8 = _mm256_permute2x128_si256(r[0], r[1], 0x20);
        __m256i cur = _mm256_loadu_si256((const __m256i *)(sig + i));
        _mm256_storeu_si256((__m256i *)(sig + i), _mm256_min_epu32(cur, v8));
    }
    fold_scalar(mh, i, x, sig);
}
#endif

int dedup__minhash_use_scalar(struct dedup_minhash *mh, int scalar)
{
    int was = !mh->avx2;
#ifdef MH_HAVE_AVX2
    mh->avx2 = !scalar && __builtin_cpu_supports("avx2");
#else
    (void)scalar;
#endif
    return was;
}

/* sig[i] = min(sig[i], v_i(x)) for every i: the hot loop. */
static inline void fold(const struct dedup_minhash *mh, uint64_t x, uint32_t *restrict sig)
{
#ifdef MH_HAVE_AVX2
    if (mh->avx2) {
        fold_avx2(mh, x, sig);
        return;
    }
#endif
    fold_scalar(mh, 0, x, sig);
}

void dedup_minhash_signature_hashes(const struct dedup_minhash *mh, const uint64_t *x, size_t n,
                                    uint32_t *sig)
{
    memset(sig, 0xff, mh->h * sizeof *sig);
    for (size_t j = 0; j < n; j++)
        fold(mh, x[j], sig);
}

/*
 * Walks the shingles of a token string: calls emit(ctx, hash) for each. Token starts are
 * kept in a ring of k positions, so a shingle is [start of token j - k + 1, end of token j).
 * Returns the number of shingles, or (size_t)-1 for a malformed string.
 */
typedef void (*shingle_fn)(void *ctx, uint64_t x);

static size_t each_shingle(const struct dedup_minhash *mh, const char *s, size_t len,
                           shingle_fn emit, void *ctx)
{
    size_t ring[DEDUP_MINHASH_K_MAX];
    unsigned k = mh->k;
    size_t ntok = 0, nsh = 0, pos = 0;
    if (len == 0)
        return 0;
    while (pos <= len) {
        const char *sp = memchr(s + pos, ' ', len - pos);
        size_t end = sp ? (size_t)(sp - s) : len;
        if (end == pos)
            return (size_t)-1; /* an empty token: leading, trailing or double space */
        ring[ntok % k] = pos;
        ntok++;
        if (ntok >= k) {
            size_t start = ring[(ntok - k) % k];
            emit(ctx, XXH3_64bits_withSeed(s + start, end - start, mh->seed));
            nsh++;
        }
        pos = end + 1;
    }
    if (ntok < k) { /* fewer than k tokens: the whole string is the one shingle */
        emit(ctx, XXH3_64bits_withSeed(s, len, mh->seed));
        nsh = 1;
    }
    return nsh;
}

static void emit_fold(void *ctx, uint64_t x)
{
    const struct dedup_minhash **pmh = ctx;
    fold(pmh[0], x, (uint32_t *)pmh[1]);
}

enum dedup_code dedup_minhash_signature(const struct dedup_minhash *mh, const char *tokens,
                                        size_t len, uint32_t *sig, size_t *n_shingles)
{
    const void *ctx[2] = {mh, sig};
    memset(sig, 0xff, mh->h * sizeof *sig);
    if (n_shingles)
        *n_shingles = 0;
    size_t n = each_shingle(mh, tokens, len, emit_fold, (void *)ctx);
    if (n == (size_t)-1) {
        memset(sig, 0xff, mh->h * sizeof *sig);
        return DEDUP_EINVAL;
    }
    if (n_shingles)
        *n_shingles = n;
    return n == 0 ? DEDUP_ETOOSHORT : DEDUP_OK;
}

double dedup_minhash_estimate(const uint32_t *a, const uint32_t *b, unsigned h)
{
    unsigned eq = 0;
    for (unsigned i = 0; i < h; i++)
        eq += a[i] == b[i];
    return h ? (double)eq / h : 1.0;
}

struct collect {
    uint64_t *v;
    size_t n, cap;
    int failed;
};

static void emit_collect(void *ctx, uint64_t x)
{
    struct collect *c = ctx;
    if (c->failed)
        return;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        uint64_t *nv = realloc(c->v, ncap * sizeof *nv);
        if (!nv) {
            c->failed = 1;
            return;
        }
        c->v = nv;
        c->cap = ncap;
    }
    c->v[c->n++] = x;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

enum dedup_code dedup_minhash_shingle_set(const struct dedup_minhash *mh, const char *tokens,
                                          size_t len, uint64_t **out, size_t *n)
{
    struct collect c = {0};
    *out = NULL;
    *n = 0;
    size_t got = each_shingle(mh, tokens, len, emit_collect, &c);
    if (got == (size_t)-1 || c.failed || got == 0) {
        free(c.v);
        return got == (size_t)-1 ? DEDUP_EINVAL : c.failed ? DEDUP_ENOMEM : DEDUP_ETOOSHORT;
    }
    qsort(c.v, c.n, sizeof *c.v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < c.n; i++)
        if (u == 0 || c.v[u - 1] != c.v[i])
            c.v[u++] = c.v[i];
    *out = c.v;
    *n = u;
    return DEDUP_OK;
}

double dedup_minhash_jaccard_sets(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    if (na == 0 && nb == 0)
        return 1.0;
    size_t i = 0, j = 0, both = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j]) {
            both++;
            i++;
            j++;
        } else if (a[i] < b[j]) {
            i++;
        } else {
            j++;
        }
    }
    return (double)both / (double)(na + nb - both);
}

/* ---- the choice of b x r ---- */

double dedup_lsh_probability(double s, unsigned b, unsigned r)
{
    return 1.0 - pow(1.0 - pow(s, (double)r), (double)b);
}

/* Simpson's rule over [lo, hi] with 256 intervals of f(s) = P(s) (miss = 0) or 1 - P(s). */
static double area(double lo, double hi, unsigned b, unsigned r, int miss)
{
    const int n = 256;
    double step = (hi - lo) / n, sum = 0;
    for (int i = 0; i <= n; i++) {
        double p = dedup_lsh_probability(lo + i * step, b, r);
        double f = miss ? 1.0 - p : p;
        sum += (i == 0 || i == n) ? f : (i % 2 ? 4 * f : 2 * f);
    }
    return sum * step / 3;
}

enum dedup_code dedup_lsh_optimal(double t, unsigned h, double fp_weight, double fn_weight,
                                  unsigned *b, unsigned *r)
{
    if (!(t > 0 && t <= 1) || h < 1 || h > DEDUP_MINHASH_H_MAX || !(fp_weight >= 0) ||
        !(fn_weight >= 0))
        return DEDUP_EINVAL;
    double best = INFINITY;
    unsigned bb = 1, br = 1;
    for (unsigned nb = 1; nb <= h; nb++) {
        for (unsigned nr = 1; nr <= h / nb; nr++) {
            double e = fp_weight * area(0, t, nb, nr, 0) + fn_weight * area(t, 1, nb, nr, 1);
            if (e < best) {
                best = e;
                bb = nb;
                br = nr;
            }
        }
    }
    *b = bb;
    *r = br;
    return DEDUP_OK;
}

enum dedup_code dedup_lsh_params_default(double t, struct dedup_lsh_params *p)
{
    memset(p, 0, sizeof *p);
    p->k = DEDUP_MINHASH_K_DEFAULT;
    p->h = DEDUP_MINHASH_H_DEFAULT;
    p->seed = DEDUP_MINHASH_SEED;
    p->threshold = t;
    return dedup_lsh_optimal(t, p->h, DEDUP_LSH_FP_WEIGHT, DEDUP_LSH_FN_WEIGHT, &p->b, &p->r);
}

enum dedup_code dedup_lsh_params_check(const struct dedup_lsh_params *p)
{
    if (p->k < 1 || p->k > DEDUP_MINHASH_K_MAX || p->h < 1 || p->h > DEDUP_MINHASH_H_MAX ||
        p->b < 1 || p->r < 1 || (uint64_t)p->b * p->r > p->h ||
        !(p->threshold > 0 && p->threshold <= 1))
        return DEDUP_EINVAL;
    return DEDUP_OK;
}

enum dedup_method dedup_file_method(const void *head, size_t len)
{
    if (len < 8)
        return DEDUP_METHOD_UNKNOWN;
    if (memcmp(head, DEDUP_INDEX_MAGIC, 8) == 0)
        return DEDUP_METHOD_SIMHASH;
    if (memcmp(head, DEDUP_LSH_MAGIC, 8) == 0)
        return DEDUP_METHOD_MINHASH;
    return DEDUP_METHOD_UNKNOWN;
}

/*
 * Shingle features of a document (docs/FINGERPRINT.md, version 7, sections "Shingles"
 * and "Weights").
 *
 * The input is the token string of extract_tokens(): tokens separated by exactly one
 * space. The shingles are every token (a word) and every byte substring "w1 w2" of two
 * consecutive tokens (a word pair), each hashed in place (no copy) with
 * XXH3_64bits_withSeed(ptr, len, DEDUP_SEED) (xxHash, doc/xxhash_spec.md); a word and a
 * pair never have the same bytes (a pair holds a space). FINGERPRINT.md section 3 says
 * why version 2 takes words and pairs. Term frequencies are counted in an
 * open-addressing table keyed by the hash itself (XXH3 output is already uniform: slot =
 * hash & mask); each distinct shingle then weighs round(256 * min(tf, c)^(7/8) * idf),
 * c = min(64, floor(sqrt(distinct shingles))) (dedup__tf_cap()),
 * an integer computed with three IEEE-754 square roots (each exactly rounded, so every
 * platform gets the same weights), and the simhash accumulates exactly.
 * Also the exact cosine and Jaccard similarities of two feature sets (for `compare`).
 */
#include "dedup/dedup_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

struct dedup_features *dedup_features_new(void)
{
    return calloc(1, sizeof(struct dedup_features));
}

void dedup_features_free(struct dedup_features *f)
{
    if (!f)
        return;
    free(f->hash);
    free(f->tf);
    free(f->weight);
    free(f->slot);
    free(f);
}

size_t dedup_features_token_count(const struct dedup_features *f)
{
    return f->n_tokens;
}
size_t dedup_features_shingle_count(const struct dedup_features *f)
{
    return f->n_shingles;
}
size_t dedup_features_count(const struct dedup_features *f)
{
    return f->n;
}
uint64_t dedup_features_hash(const struct dedup_features *f, size_t i)
{
    return f->hash[i];
}
uint32_t dedup_features_weight(const struct dedup_features *f, size_t i)
{
    return f->weight[i];
}
uint32_t dedup_features_tf(const struct dedup_features *f, size_t i)
{
    return f->tf[i];
}

/* min(tf, DEDUP_TF_CAP)^(7/8) = t^(1/2) * t^(1/4) * t^(1/8), multiplied in this order:
 * square roots and products are exactly rounded in IEEE-754, pow() is not required to be. */
static double tf_power(uint32_t tf)
{
    uint32_t t = tf == 0 ? 1 : tf > DEDUP_TF_CAP ? DEDUP_TF_CAP : tf;
    double s1 = sqrt((double)t);
    double s2 = sqrt(s1);
    double s3 = sqrt(s2);
    double p = s1 * s2;
    return p * s3;
}

/* floor(sqrt(n)) clamped to [1, DEDUP_TF_CAP], in integers (exact everywhere): a list
 * page's per-entry words ("file", "[code]") recur about as often as there are entries,
 * and at the fixed cap alone they outweigh the entries' names together. */
uint32_t dedup__tf_cap(size_t n_distinct)
{
    uint32_t r = 1;
    while (r < DEDUP_TF_CAP && (uint64_t)(r + 1) * (r + 1) <= n_distinct)
        r++;
    return r;
}

uint32_t dedup__weight(uint32_t tf, double idf)
{
    if (tf <= 1 && idf == 1.0)
        return DEDUP_WEIGHT_ONE;
    double t = tf_power(tf);
    double w = round((double)DEDUP_WEIGHT_ONE * t * idf);
    if (!(w >= 1.0)) /* also catches NaN */
        return 1;
    if (w > (double)DEDUP_WEIGHT_MAX)
        return DEDUP_WEIGHT_MAX;
    return (uint32_t)w;
}

size_t dedup__features_find(const struct dedup_features *f, uint64_t h)
{
    if (!f || f->n == 0)
        return (size_t)-1;
    size_t i = (size_t)h & f->mask;
    while (f->slot[i] != 0) {
        size_t k = f->slot[i] - 1;
        if (f->hash[k] == h)
            return k;
        i = (i + 1) & f->mask;
    }
    return (size_t)-1;
}

/* Makes room for n distinct features and a table of at least 2n slots (load <= 1/2).
 * On failure the arrays that were grown stay valid; f->n is 0 either way. */
static enum dedup_code reserve(struct dedup_features *f, size_t n)
{
    f->n = 0;
    if (n > f->cap) {
        uint64_t *h = realloc(f->hash, n * sizeof *h);
        if (!h)
            return DEDUP_ENOMEM;
        f->hash = h;
        uint32_t *t = realloc(f->tf, n * sizeof *t);
        if (!t)
            return DEDUP_ENOMEM;
        f->tf = t;
        uint32_t *w = realloc(f->weight, n * sizeof *w);
        if (!w)
            return DEDUP_ENOMEM;
        f->weight = w;
        f->cap = n;
    }
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    if (slots > f->mask + 1 || !f->slot) {
        uint32_t *s = malloc(slots * sizeof *s);
        if (!s)
            return DEDUP_ENOMEM;
        free(f->slot);
        f->slot = s;
    } else {
        slots = f->mask + 1;                  /* keep the larger table: clearing it is cheap */
        if (slots > 64 * n && slots > 4096) { /* ... unless far too large */
            slots = 16;
            while (slots < 2 * n)
                slots *= 2;
        }
    }
    f->mask = slots - 1;
    memset(f->slot, 0, slots * sizeof *f->slot);
    return DEDUP_OK;
}

/* The shingle hash's seed. A build made with -DDEDUP_BENCH_SEEDS (tests/bench/run.sh's
 * build/bench-seed, never a shipped one: it changes every fingerprint) XORs the number in
 * SIMCRAWL_BENCH_SEED into it, another draw of the hash function, so that the benchmarks
 * can tell what a quality figure owes to one draw. */
static uint64_t shingle_seed(void)
{
#ifdef DEDUP_BENCH_SEEDS
    const char *e = getenv("SIMCRAWL_BENCH_SEED");
    return DEDUP_SEED ^ (e ? strtoull(e, NULL, 0) : 0);
#else
    return DEDUP_SEED;
#endif
}

/* HOW IT WORKS: linear probing from slot hash & mask; a hit counts one more occurrence,
 * an empty slot appends a new distinct feature. reserve() guarantees free slots. */
static void add_shingle(struct dedup_features *f, const char *p, size_t len, uint64_t seed)
{
    uint64_t h = XXH3_64bits_withSeed(p, len, seed);
    size_t i = (size_t)h & f->mask;
    while (f->slot[i] != 0) {
        size_t k = f->slot[i] - 1;
        if (f->hash[k] == h) {
            if (f->tf[k] < UINT32_MAX)
                f->tf[k]++;
            return;
        }
        i = (i + 1) & f->mask;
    }
    f->slot[i] = (uint32_t)(f->n + 1);
    f->hash[f->n] = h;
    f->tf[f->n] = 1;
    f->n++;
}

enum dedup_code dedup_features_from_tokens(struct dedup_features *f, const char *tokens, size_t len,
                                           const struct dedup_opts *opts)
{
    if (!f)
        return DEDUP_EINVAL;
    f->n = 0;
    f->n_tokens = 0;
    f->n_shingles = 0;
    f->exact = 0;
    f->is_short = 0;
    if (!tokens && len > 0)
        return DEDUP_EINVAL;
    size_t min_tokens = opts && opts->min_tokens ? opts->min_tokens : DEDUP_MIN_TOKENS;
    size_t max_tokens = opts && opts->max_tokens ? opts->max_tokens : DEDUP_DEFAULT_MAX_TOKENS;
    if (max_tokens > UINT32_MAX - 1)
        max_tokens = UINT32_MAX - 1; /* slot indices are 32-bit */
    const struct dedup_idf *idf = opts ? opts->idf : NULL;

    /* Pass 1: validate and count the tokens (memchr speed); nothing allocated yet. */
    size_t n_tokens = 0;
    if (len > 0) {
        if (tokens[0] == ' ' || tokens[len - 1] == ' ')
            return DEDUP_EINVAL;
        const char *p = tokens, *end = tokens + len;
        for (;;) {
            const char *sp = memchr(p, ' ', (size_t)(end - p));
            n_tokens++;
            if (n_tokens > max_tokens) {
                f->n_tokens = n_tokens;
                return DEDUP_ETOOLARGE;
            }
            if (!sp)
                break;
            if (sp + 1 < end && sp[1] == ' ')
                return DEDUP_EINVAL;
            p = sp + 1;
        }
    }
    f->n_tokens = n_tokens;
    /* a token string that stands for a longer text is short by the text's count */
    size_t text_tokens = opts && opts->text_tokens > n_tokens ? opts->text_tokens : n_tokens;
    if (n_tokens == 0 || text_tokens < min_tokens)
        return DEDUP_ETOOSHORT;
    size_t n_shingles = 2 * n_tokens - 1; /* n words and n - 1 word pairs */

    enum dedup_code rc = reserve(f, n_shingles);
    if (rc != DEDUP_OK)
        return rc;

    /* Pass 2: each token, then the pair it ends (from the previous token's start to its
     * own end, the space between included), hashed in place. */
    {
        const char *end = tokens + len;
        const char *p = tokens, *prev = NULL;
        uint64_t seed = shingle_seed();
        for (;;) {
            const char *sp = memchr(p, ' ', (size_t)(end - p));
            const char *tok_end = sp ? sp : end;
            add_shingle(f, p, (size_t)(tok_end - p), seed);
            if (prev)
                add_shingle(f, prev, (size_t)(tok_end - prev), seed);
            if (!sp)
                break;
            prev = p;
            p = sp + 1;
        }
    }
    f->n_shingles = n_shingles;
    /* a short text is near-duplicate only of itself: its fingerprint is the hash of its
     * token string (FINGERPRINT.md section 4) */
    f->exact = 0;
    f->is_short = text_tokens < DEDUP_SHORT_TOKENS;
    if (f->is_short) {
        uint64_t draw = shingle_seed() ^ DEDUP_SEED; /* 0 but in a DEDUP_BENCH_SEEDS build */
        f->exact = XXH3_64bits_withSeed(tokens, len, DEDUP_SHORT_SEED ^ draw);
    }

    uint32_t cap = dedup__tf_cap(f->n);
    for (size_t i = 0; i < f->n; i++) {
        uint32_t tf = f->tf[i] < cap ? f->tf[i] : cap;
        f->weight[i] = (tf == 1 && !idf) ? DEDUP_WEIGHT_ONE
                                         : dedup__weight(tf, dedup__idf_factor(idf, f->hash[i]));
    }
    return DEDUP_OK;
}

double dedup_features_cosine(const struct dedup_features *a, const struct dedup_features *b)
{
    if (a->n == 0 && b->n == 0)
        return 1.0;
    if (a->n == 0 || b->n == 0)
        return 0.0;
    if (a->n > b->n) { /* probe the larger table with the smaller set */
        const struct dedup_features *t = a;
        a = b;
        b = t;
    }
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < a->n; i++) {
        double wa = a->weight[i];
        na += wa * wa;
        size_t k = dedup__features_find(b, a->hash[i]);
        if (k != (size_t)-1)
            dot += wa * (double)b->weight[k];
    }
    for (size_t i = 0; i < b->n; i++)
        nb += (double)b->weight[i] * (double)b->weight[i];
    double c = dot / (sqrt(na) * sqrt(nb));
    return c > 1.0 ? 1.0 : c;
}

double dedup_features_jaccard(const struct dedup_features *a, const struct dedup_features *b)
{
    if (a->n == 0 && b->n == 0)
        return 1.0;
    if (a->n > b->n) {
        const struct dedup_features *t = a;
        a = b;
        b = t;
    }
    size_t inter = 0;
    for (size_t i = 0; i < a->n; i++)
        if (dedup__features_find(b, a->hash[i]) != (size_t)-1)
            inter++;
    return (double)inter / (double)(a->n + b->n - inter);
}

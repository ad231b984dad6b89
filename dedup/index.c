/*
 * The block-permuted table index of Manku, Jain and Das Sarma, "Detecting Near-Duplicates
 * for Web Crawling" (WWW 2007), section 3: table designs, bit permutations, the sorted
 * tables with bucket directories, online adds and queries (a small delta merged into the
 * main tables LSM-style), and the radix sort everything is built with.
 * All pairs are in pairs.c, clusters in cluster.c, the file format in indexfile.c.
 *
 * HOW IT WORKS
 *
 * Designs. Two fingerprints within Hamming distance k differ in at most k bits. Split the
 * 64 bits into b contiguous blocks: at most k blocks contain a differing bit, so at least
 * b - k blocks agree exactly. Keep one table per choice of b - k blocks (C(b, k) tables);
 * in table t every fingerprint is stored with its bits permuted so that the chosen blocks
 * come first (the "key", most significant), the other blocks after them, each in their
 * original order. Two fingerprints within k then have equal keys in at least one table,
 * and a query probes, in each table, the run of entries whose key equals its own.
 * The two-level scheme of the paper splits once more: after choosing b1 - k of b1 blocks,
 * the remaining bits still hold at most k differences, so they are split into b2 blocks
 * and b2 - k of those are added to the key: C(b1, k) * C(b2, k) tables, longer keys.
 * For k = 3 the paper's designs are 4 tables (4 blocks of 16 bits, key 16 bits),
 * 10 tables (5 blocks, key 25-26), 16 tables (4 x 4, key 28) and 20 tables (6 blocks, key
 * 31-33). Every design here is one of these shapes (k = 0: one table keyed on all bits).
 *
 * Choosing. A probe costs about one cache miss, so a design costs per probe (or per
 * fingerprint when building) about T * (32 + n / 2^key) in units of one candidate
 * check; dedup_design_choose() takes the cheapest design with at most DEDUP_MAX_TABLES
 * tables for the expected n: 4 tables up to ~3M fingerprints at k = 3, 10 tables beyond.
 *
 * Exactly once. A pair differing in bits d is reported only from the FIRST table whose
 * key bits (keymask, in the original bit order) are all zero in d: ix_first_table().
 * Every pair within k has such a table, and no other table reports it, so neither a query
 * nor all-pairs needs a set of results seen.
 *
 * Storage. Table 0 is always the identity permutation, so tab[0] doubles as the sorted
 * array of distinct fingerprints ("primary") and head/tail, parallel to it, are the first
 * and last document with that fingerprint (documents of one fingerprint form a list
 * through doc_next, in document order). Identical fingerprints take one entry per table,
 * however many documents share them. Tables hold only the permuted 64-bit value (8 bytes);
 * the permutation is inverted to recover the fingerprint of a candidate. A directory of
 * (1 << dir_bits) + 1 offsets over the top dir_bits bits (dir_bits <= every key length,
 * about log2(n) - 2, so 4-8 entries a bucket) makes a probe one directory read plus a
 * short scan: a candidate is any entry of the bucket within k that passes the first-table
 * rule (the rule implies the keys are equal).
 *
 * Online. dedup_index_add() only appends the document (O(1)). Pending documents are
 * absorbed before the next query: into the delta (a tagged hash of fingerprint -> slot
 * plus, per table, buckets of permuted fingerprints and their heads over the top dd_bits,
 * their blocks from a slab kept across merges) one by one, or, when the
 * delta would exceed max(IX_DELTA_MIN, main / IX_DELTA_FRACTION), by merging everything
 * into the main tables (ix_compact: sort the new entries per table, merge, rebuild the
 * directories; amortised O(T) element moves per add). A fingerprint is in exactly one of
 * main and delta, so a query probing both still reports each document once.
 *
 * Batches. A probe waits for memory: a directory line, then bucket lines, then table 0's
 * head. One query overlaps only its own tables' reads; dedup_index_nearest_many and
 * dedup_index_query_many run the probe's stages as a software pipeline over many queries
 * (probe_many: directory lines IX_BATCH_DEPTH queries ahead, bucket lines half as far),
 * the same stages and scan as one query's, so the answers are the same.
 *
 * Lazy tables. All pairs of a fresh index (dedup_index_pairs, clusters) needs only table
 * 0: the first compaction then builds table 0 alone (compact_fresh: two arrays sorted by a
 * parallel stable scatter, 16 bytes a document at the peak) and marks the index lazy, and
 * pairs.c streams the other tables through one buffer. A query, stats or a save builds
 * the missing tables first (ix_tables_ready); a compaction of a lazy index merges into
 * table 0 only.
 */
#define _GNU_SOURCE /* madvise(MADV_POPULATE_WRITE), mremap() under -D_POSIX_C_SOURCE */
#include "dedup/index_int.h"

#include <pthread.h>
#include <stddef.h> /* max_align_t */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

/* ---- designs ---- */

static uint64_t binom(unsigned n, unsigned k)
{
    uint64_t r = 1;
    if (k > n)
        return 0;
    for (unsigned i = 1; i <= k; i++) {
        r = r * (n - k + i) / i;
        if (r > (1u << 20))
            return r; /* far above any cap; avoid overflow */
    }
    return r;
}

/* Splits `bits` bit positions (list[0..bits), MSB-first) into nb blocks: the first
 * (bits % nb) blocks are one bit wider. start[i], width[i] index into list. */
static void split_blocks(unsigned bits, unsigned nb, unsigned *start, unsigned *width)
{
    unsigned pos = 0;
    for (unsigned i = 0; i < nb; i++) {
        width[i] = bits / nb + (i < bits % nb ? 1 : 0);
        start[i] = pos;
        pos += width[i];
    }
}

/* Advances a combination c[0..r) of {0..n-1} in lexicographic order; 0 at the end. */
static int next_combo(unsigned *c, unsigned r, unsigned n)
{
    int i = (int)r - 1;
    while (i >= 0 && c[i] == n - r + (unsigned)i)
        i--;
    if (i < 0)
        return 0;
    c[i]++;
    for (unsigned j = (unsigned)i + 1; j < r; j++)
        c[j] = c[j - 1] + 1;
    return 1;
}

/* Reorders in[0..bits) (MSB-first source positions) by the chosen blocks of combo c
 * (r of nb blocks) first, then the others: out[0..bits); returns the key length. */
static unsigned arrange(const uint8_t *in, unsigned bits, unsigned nb, const unsigned *c,
                        unsigned r, uint8_t *out)
{
    unsigned start[64], width[64], o = 0, key = 0;
    bool chosen[64] = {false};
    split_blocks(bits, nb, start, width);
    for (unsigned i = 0; i < r; i++)
        chosen[c[i]] = true;
    for (unsigned i = 0; i < nb; i++)
        if (chosen[i])
            for (unsigned j = 0; j < width[i]; j++)
                out[o++] = in[start[i] + j];
    key = o;
    for (unsigned i = 0; i < nb; i++)
        if (!chosen[i])
            for (unsigned j = 0; j < width[i]; j++)
                out[o++] = in[start[i] + j];
    return key;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#ifndef IX_WIDE
#define IX_WIDE 1 /* -DIX_WIDE=0: the scalar bucket scan everywhere (the comparison build) */
#endif
#if IX_WIDE && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#define IX_HAVE_WIDE 1
#endif
#ifndef IX_HEAD_PREFETCH
#define IX_HEAD_PREFETCH                                                                           \
    1 /* -DIX_HEAD_PREFETCH=0: main_find without the head's prefetch (comparison) */
#endif

#ifndef IX_PEXT
#define IX_PEXT 1 /* -DIX_PEXT=0: the rotation groups everywhere (the comparison build) */
#endif

bool ix_pext_fast(void)
{
#if defined(IX_HAVE_PEXT) && IX_PEXT
    static int fast = -1; /* computed once; a race writes the same value */
    if (fast < 0) {
        unsigned a, b, c, d, f = 0;
        bool amd = false, bmi2 = false;
        if (__get_cpuid(0, &a, &b, &c, &d)) {
            /* "AuthenticAMD" or "HygonGenuine": ebx "Auth"/"Hygo" */
            amd = b == 0x68747541u || b == 0x6f677948u;
            if (a >= 7) {
                unsigned a7, b7, c7, d7;
                __cpuid_count(7, 0, a7, b7, c7, d7);
                bmi2 = (b7 >> 8) & 1u;
            }
        }
        if (__get_cpuid(1, &a, &b, &c, &d)) {
            f = (a >> 8) & 0xfu;
            if (f == 0xfu)
                f += (a >> 20) & 0xffu;
        }
        fast = bmi2 && (!amd || f >= 0x19u); /* AMD before Zen 3 (0x19): microcode */
    }
    return fast == 1;
#else
    return false;
#endif
}

/* list[p] = source position (MSB-first) of destination position p (MSB-first). */
static void perm_from_list(struct ix_perm *p, const uint8_t *list, unsigned key_bits)
{
    p->nseg = 0;
    p->key_bits = key_bits;
    p->keymask = 0;
    for (unsigned i = 0; i < key_bits; i++)
        p->keymask |= (uint64_t)1 << (63 - list[i]);
    unsigned ps = 0;
    while (ps < 64) {
        unsigned pe = ps;
        while (pe + 1 < 64 && list[pe + 1] == list[pe] + 1)
            pe++;
        struct ix_seg *s = &p->seg[p->nseg++];
        s->width = (uint8_t)(pe - ps + 1);
        s->src = (uint8_t)(63 - list[pe]);
        s->dst = (uint8_t)(63 - pe);
        s->mask = s->width == 64 ? ~(uint64_t)0 : (((uint64_t)1 << s->width) - 1);
        ps = pe + 1;
    }
    p->keyhi = key_bits ? ~(uint64_t)0 << (64 - key_bits) : 0;
    /* the rotation groups: a segment moves its bits left by (dst - src) mod 64 */
    p->nrot = 0;
    for (unsigned i = 0; i < p->nseg; i++) {
        const struct ix_seg *s = &p->seg[i];
        uint8_t r = (uint8_t)((s->dst - s->src) & 63);
        unsigned g = 0;
        while (g < p->nrot && p->rot[g] != r)
            g++;
        if (g == p->nrot) {
            p->rot[g] = r;
            p->rmask[g] = 0;
            p->nrot++;
        }
        p->rmask[g] |= s->mask << s->src;
    }
    /* PEXT where the key bits and the others each keep their order */
    bool ordered = key_bits > 0 && key_bits <= 64;
    for (unsigned i = 1; i < 64 && ordered; i++)
        if (i != key_bits && list[i] < list[i - 1])
            ordered = false;
    p->pext = ordered && ix_pext_fast();
}

static int valid_shape(const struct dedup_design *d)
{
    if (d->k > DEDUP_K_MAX || d->levels < 1 || d->levels > 2)
        return 0;
    if (d->k == 0)
        return d->levels == 1 && d->blocks[0] == 1;
    if (d->blocks[0] < d->k + 1 || d->blocks[0] > 64)
        return 0;
    uint64_t t = binom(d->blocks[0], d->k);
    if (d->levels == 2) {
        /* the remaining bits (k blocks of level 1, at least k * floor(64 / b1)) must hold
         * b2 blocks */
        if (d->blocks[1] < d->k + 1 || d->blocks[1] > d->k * (64 / d->blocks[0]))
            return 0;
        t *= binom(d->blocks[1], d->k);
    }
    return t >= 1 && t <= DEDUP_MAX_TABLES;
}

/* Builds the permutations of a valid shape; returns the number of tables. */
static unsigned build_perms(const struct dedup_design *d, struct ix_perm *perm)
{
    uint8_t ident[64], l1[64], l2[64];
    unsigned c1[64], c2[64], nt = 0;
    for (unsigned i = 0; i < 64; i++)
        ident[i] = (uint8_t)i;
    unsigned b1 = d->blocks[0], r1 = b1 - d->k;
    for (unsigned i = 0; i < r1; i++)
        c1[i] = i;
    do {
        unsigned key1 = arrange(ident, 64, b1, c1, r1, l1);
        if (d->levels == 1) {
            perm_from_list(&perm[nt++], l1, key1);
            continue;
        }
        unsigned b2 = d->blocks[1], r2 = b2 - d->k;
        for (unsigned i = 0; i < r2; i++)
            c2[i] = i;
        do {
            memcpy(l2, l1, key1);
            unsigned key2 = arrange(l1 + key1, 64 - key1, b2, c2, r2, l2 + key1);
            perm_from_list(&perm[nt++], l2, key1 + key2);
        } while (next_combo(c2, r2, b2));
    } while (next_combo(c1, r1, b1));
    return nt;
}

/* Completes d (tables, key bits) from its shape; -1 if invalid. */
static int design_complete(struct dedup_design *d, struct ix_perm *perm)
{
    if (!valid_shape(d))
        return -1;
    if (d->levels == 1)
        d->blocks[1] = 0;
    d->tables = build_perms(d, perm);
    d->key_bits_min = 64;
    d->key_bits_max = 0;
    for (unsigned t = 0; t < d->tables; t++) {
        if (perm[t].key_bits < d->key_bits_min)
            d->key_bits_min = perm[t].key_bits;
        if (perm[t].key_bits > d->key_bits_max)
            d->key_bits_max = perm[t].key_bits;
    }
    return 0;
}

enum dedup_code ix_design_build(struct dedup_index *idx, const struct dedup_design *d)
{
    struct dedup_design c = *d;
    if (design_complete(&c, idx->perm) != 0 || c.tables != d->tables)
        return DEDUP_EINVAL;
    idx->design = c;
    idx->ntables = c.tables;
    return DEDUP_OK;
}

static double design_cost(const struct dedup_design *d, const struct ix_perm *perm, double n)
{
    double cand = 0;
    for (unsigned t = 0; t < d->tables; t++) {
        double keyspace = 1.0;
        for (unsigned i = 0; i < perm[t].key_bits; i++)
            keyspace *= 2.0;
        cand += n / keyspace;
    }
    return 32.0 * d->tables + cand;
}

enum dedup_code dedup_design_choose(unsigned k, uint64_t n, unsigned tables,
                                    struct dedup_design *out)
{
    struct ix_perm *scratch = malloc(sizeof(struct ix_perm) * DEDUP_MAX_TABLES);
    if (!scratch)
        return DEDUP_ENOMEM;
    enum dedup_code rc = DEDUP_EINVAL;
    struct dedup_design best = {0};
    double best_cost = 0;
    bool have = false;
    if (k > DEDUP_K_MAX)
        goto done;
    for (unsigned levels = 1; levels <= 2; levels++) {
        for (unsigned b1 = k == 0 ? 1 : k + 1; b1 <= 64; b1++) {
            if (binom(b1, k) > DEDUP_MAX_TABLES)
                break;
            unsigned b2lo = levels == 1 ? 0 : k + 1, b2hi = levels == 1 ? 0 : 64;
            for (unsigned b2 = b2lo; b2 <= b2hi; b2++) {
                struct dedup_design d = {.k = k, .levels = levels, .blocks = {b1, b2}};
                if (design_complete(&d, scratch) != 0) {
                    if (levels == 2 && binom(b2, k) * binom(b1, k) > DEDUP_MAX_TABLES)
                        break;
                    continue;
                }
                bool better;
                double cost = design_cost(&d, scratch, (double)n);
                if (tables) {
                    if (d.tables != tables)
                        continue;
                    better = !have || d.key_bits_min > best.key_bits_min;
                } else {
                    better =
                        !have || cost < best_cost || (cost == best_cost && d.tables < best.tables);
                }
                if (better) {
                    best = d;
                    best_cost = cost;
                    have = true;
                }
            }
            if (k == 0)
                break;
        }
        if (k == 0)
            break;
    }
    if (have) {
        *out = best;
        rc = DEDUP_OK;
    }
done:
    free(scratch);
    return rc;
}

enum dedup_code dedup_design_keymasks(const struct dedup_design *d,
                                      uint64_t masks[DEDUP_MAX_TABLES])
{
    struct ix_perm *scratch = malloc(sizeof(struct ix_perm) * DEDUP_MAX_TABLES);
    if (!scratch)
        return DEDUP_ENOMEM;
    struct dedup_design c = *d;
    enum dedup_code rc = DEDUP_EINVAL;
    if (design_complete(&c, scratch) == 0 && c.tables == d->tables) {
        for (unsigned t = 0; t < c.tables; t++)
            masks[t] = scratch[t].keymask;
        rc = DEDUP_OK;
    }
    free(scratch);
    return rc;
}

char *dedup_design_describe(const struct dedup_design *d, char *buf, size_t len)
{
    unsigned start[64], width[64];
    size_t o = 0;
    if (!len)
        return buf;
    buf[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf + o, len - o, __VA_ARGS__);                                          \
        if (w_ < 0 || (size_t)w_ >= len - o)                                                       \
            return buf;                                                                            \
        o += (size_t)w_;                                                                           \
    } while (0)
    PUT("%u table%s: ", d->tables, d->tables == 1 ? "" : "s");
    split_blocks(64, d->blocks[0], start, width);
    PUT("%u block%s of ", d->blocks[0], d->blocks[0] == 1 ? "" : "s");
    for (unsigned i = 0; i < d->blocks[0]; i++)
        PUT("%s%u", i ? "," : "", width[i]);
    PUT(" bits");
    if (d->levels == 2)
        PUT(", then the other bits in %u blocks", d->blocks[1]);
    if (d->key_bits_min == d->key_bits_max)
        PUT(", key %u bits", d->key_bits_min);
    else
        PUT(", key %u-%u bits", d->key_bits_min, d->key_bits_max);
#undef PUT
    return buf;
}

/* ---- sorting: MSD radix, 11 bits a digit, insertion sort below SORT_SMALL ---- */

#define SORT_SMALL 48
/* fewer records than this are sorted on one thread (sort_recs, compact_fresh): below it
 * starting the team costs more than it saves (commit 6a8ce85) */
#define IX_PAR_SORT_MIN 65536
#define DIGIT_BITS 11

struct ix_rec {
    uint64_t fp;
    uint32_t doc;
    uint32_t pad;
};

#define KEY_REC(x) ((x).fp)
#define DEFINE_MSD(name, type, KEY)                                                                \
    static void name##_insertion(type *a, size_t n)                                                \
    {                                                                                              \
        for (size_t i = 1; i < n; i++) {                                                           \
            type x = a[i];                                                                         \
            size_t j = i;                                                                          \
            while (j > 0 && KEY(a[j - 1]) > KEY(x)) {                                              \
                a[j] = a[j - 1];                                                                   \
                j--;                                                                               \
            }                                                                                      \
            a[j] = x;                                                                              \
        }                                                                                          \
    }                                                                                              \
    static void name(type *a, type *tmp, size_t n, unsigned hi)                                    \
    {                                                                                              \
        while (n > SORT_SMALL && hi > 0) {                                                         \
            /* digit width ~ log2(n): small buckets do not pay for 2048 counters */                \
            unsigned w = 4;                                                                        \
            while (w < DIGIT_BITS && ((size_t)1 << (w + 1)) <= n)                                  \
                w++;                                                                               \
            if (w > hi)                                                                            \
                w = hi;                                                                            \
            unsigned shift = hi - w;                                                               \
            uint64_t m = ((uint64_t)1 << w) - 1;                                                   \
            size_t cnt[(1u << DIGIT_BITS) + 1];                                                    \
            memset(cnt, 0, sizeof(size_t) * ((size_t)m + 2));                                      \
            for (size_t i = 0; i < n; i++)                                                         \
                cnt[((KEY(a[i]) >> shift) & m) + 1]++;                                             \
            size_t nonempty = 0;                                                                   \
            for (size_t b = 1; b <= m + 1; b++)                                                    \
                nonempty += cnt[b] != 0;                                                           \
            hi = shift;                                                                            \
            if (nonempty == 1)                                                                     \
                continue; /* all share this digit: next digit, no move */                          \
            for (size_t b = 1; b <= m + 1; b++)                                                    \
                cnt[b] += cnt[b - 1];                                                              \
            for (size_t i = 0; i < n; i++)                                                         \
                tmp[cnt[(KEY(a[i]) >> shift) & m]++] = a[i];                                       \
            memcpy(a, tmp, n * sizeof(type));                                                      \
            /* cnt[b] is now the end of bucket b */                                                \
            size_t lo = 0;                                                                         \
            for (size_t b = 0; b <= m; b++) {                                                      \
                size_t end = cnt[b];                                                               \
                if (end - lo > 1)                                                                  \
                    name(a + lo, tmp + lo, end - lo, shift);                                       \
                lo = end;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        if (hi > 0)                                                                                \
            name##_insertion(a, n);                                                                \
    }

DEFINE_MSD(msd_rec, struct ix_rec, KEY_REC)

/* In-place MSD radix sort of 64-bit keys (American flag sort, McIlroy, Bostic and McIlroy
 * 1993): per digit, count, then cycle every element straight into its bucket; no scratch
 * buffer, so building a table of n entries touches n * 8 bytes once. Not stable, which
 * does not matter for plain keys. */
static void flag_insertion(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void flag_sort(uint64_t *a, size_t n, unsigned hi)
{
    while (n > SORT_SMALL && hi > 0) {
        unsigned w = 4;
        while (w < DIGIT_BITS && ((size_t)1 << (w + 1)) <= n)
            w++;
        if (w > hi)
            w = hi;
        unsigned shift = hi - w;
        size_t m = ((size_t)1 << w) - 1;
        size_t next[(1u << DIGIT_BITS) + 1], end[(1u << DIGIT_BITS) + 1];
        memset(end, 0, sizeof(size_t) * (m + 1));
        for (size_t i = 0; i < n; i++)
            end[(a[i] >> shift) & m]++;
        size_t nonempty = 0, acc = 0;
        for (size_t b = 0; b <= m; b++) {
            nonempty += end[b] != 0;
            next[b] = acc;
            acc += end[b];
            end[b] = acc;
        }
        hi = shift;
        if (nonempty == 1)
            continue; /* all share this digit: next digit, nothing moves */
        for (size_t b = 0; b <= m; b++) {
            while (next[b] < end[b]) {
                uint64_t x = a[next[b]];
                size_t d = (x >> shift) & m;
                while (d != b) {
                    uint64_t y = a[next[d]];
                    a[next[d]++] = x;
                    x = y;
                    d = (x >> shift) & m;
                }
                a[next[b]++] = x;
            }
        }
        size_t lo = 0;
        for (size_t b = 0; b <= m; b++) {
            if (end[b] - lo > 1)
                flag_sort(a + lo, end[b] - lo, shift);
            lo = end[b];
        }
        return;
    }
    if (hi > 0)
        flag_insertion(a, n);
}

void ix_sort_u64_below(uint64_t *a, size_t n, unsigned hi)
{
    flag_sort(a, n, hi);
}

void ix_sort_u64(uint64_t *a, size_t n)
{
    flag_sort(a, n, 64);
}

/* Sorts a bucket whose entries share every bit above `shift`: an out-of-place counting
 * scatter on the next digit through scr (cache-resident for a bucket), about one entry per
 * sub-bucket, so the insertion sorts after it are trivial. */
#define PERM_SORT_BITS2                                                                            \
    13u /* The width of a counting pass's digit over n entries: about log2(n) bits (small          \
         * buckets do not pay for 2048 counters), 4 to max, at most the bits left (shift). */
static unsigned digit_width(size_t n, unsigned max, unsigned shift)
{
    unsigned w = 4;
    while (w < max && ((size_t)1 << (w + 1)) <= n)
        w++;
    return w > shift ? shift : w;
}

/* widest second digit (8192 counters, 32 KiB) */

void ix_sort_bucket(uint64_t *a, size_t nb, unsigned shift, uint64_t *scr)
{
    if (nb <= SORT_SMALL || !scr || shift == 0) {
        flag_sort(a, nb, shift);
        return;
    }
    unsigned w = digit_width(nb, PERM_SORT_BITS2, shift);
    unsigned sh2 = shift - w;
    size_t m = ((size_t)1 << w) - 1;
    uint32_t c2[(1u << PERM_SORT_BITS2) + 1];
    memcpy(scr, a, nb * sizeof *scr);
    ix_digit_starts(scr, nb, sh2, m, c2);
    for (size_t i = 0; i < nb; i++)
        a[c2[(scr[i] >> sh2) & m]++] = scr[i];
    size_t l2 = 0;
    for (size_t d = 0; d <= m; d++) {
        size_t n2 = c2[d] - l2;
        if (n2 > SORT_SMALL)
            flag_sort(a + l2, n2, sh2);
        else if (n2 > 1)
            flag_insertion(a + l2, n2);
        l2 = c2[d];
    }
}

/* dst[0..n) = perm(src[i]) sorted. The first digit (PERM_SORT_BITS) is a counting
 * scatter from src straight into dst, computing the permutation twice instead of storing
 * it (the count needs only its top bits: one shift, ix_perm_top): the writes go to
 * 2^PERM_SORT_BITS sequential streams, far cheaper than in-place swaps over a large
 * array; each bucket (a few thousand entries, cache-resident) is then sorted in place. */
#define PERM_SORT_BITS 10u
#define PERM_SORT_SMALL 8192u

void ix_permute_sort(const struct ix_perm *p, const uint64_t *src, size_t n, uint64_t *dst)
{
    if (n <= PERM_SORT_SMALL) {
        for (size_t i = 0; i < n; i++)
            dst[i] = ix_permute(p, src[i]);
        flag_sort(dst, n, 64);
        return;
    }
    const unsigned shift = 64 - PERM_SORT_BITS;
    size_t cnt[(1u << PERM_SORT_BITS) + 1] = {0};
    for (size_t i = 0; i < n; i++)
        cnt[ix_perm_top(p, src[i], PERM_SORT_BITS) + 1]++;
    for (size_t b = 1; b <= (1u << PERM_SORT_BITS); b++)
        cnt[b] += cnt[b - 1];
    for (size_t i = 0; i < n; i++) {
        uint64_t x = ix_permute(p, src[i]);
        dst[cnt[x >> shift]++] = x;
    }
    size_t maxb = cnt[0];
    for (size_t b = 1; b < (1u << PERM_SORT_BITS); b++)
        if (cnt[b] - cnt[b - 1] > maxb)
            maxb = cnt[b] - cnt[b - 1];
    uint64_t *scr = malloc((maxb ? maxb : 1) * sizeof *scr);
    size_t lo = 0;
    for (size_t b = 0; b < (1u << PERM_SORT_BITS); b++) {
        ix_sort_bucket(dst + lo, cnt[b] - lo, shift, scr);
        lo = cnt[b];
    }
    free(scr);
}

/* ---- memory ----
 *
 * First touches of fresh memory dominate a large run on this project's machine (a VM):
 * writing 512 MiB of fresh pages one fault at a time takes 4.6-5.4 s, 131,072 faults;
 * the same pages prefaulted in one call (MADV_POPULATE_WRITE) take 0.27-0.5 s, then 1.0 s
 * to fill. So large blocks are prefaulted when they are made or grown, and ask for huge
 * pages (ix_huge_advise): one 512 MiB run in huge pages took 3.3 s (perf19), probably the
 * host backing memory it had given back; in the runs after, huge pages are written about
 * 50x faster than fresh 4 KiB pages (pairs19l). */

#ifndef IX_POPULATE_MIN
#define IX_POPULATE_MIN ((size_t)1 << 20) /* prefault blocks from 1 MiB on */
#endif

/* Prefaults the whole pages of [p, p + bytes); advice only: failure is harmless. */
static void prefault_pages(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    if (!p)
        return;
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Transparent huge pages asked for on the pages of [p, p + bytes), for blocks from
 * IX_HUGE_MIN on (the kernel makes huge pages of the aligned 2 MiB stretches); advice
 * only: failure, or THP off, is harmless. On this project's VM the first write to a fresh
 * 4 KiB page costs about 10 us, prefaulted or not (the hypervisor's shadow page tables), and
 * a fresh 2 MiB page about as much as one 4 KiB page once the host has the memory: 32 MiB
 * written once took 0.13-0.27 s in 4 KiB pages, 0.003 s in huge pages (pairs19l,
 * docs/BENCHMARKS.md). -DIX_HUGE_MIN=0 turns it off (index_int.h). */
void ix_huge_advise(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE) && IX_HUGE_MIN > 0 /* a #if: "bytes < 0" would not build */
    if (!p || bytes < IX_HUGE_MIN)
        return;
    /* every page of the block, not its aligned 2 MiB part: advice on part of a mapping
     * splits it, and mremap (arr_resize, glibc's realloc) cannot grow a split mapping */
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    uintptr_t e = ((uintptr_t)p + bytes + 4095) & ~(uintptr_t)4095;
    (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* A large block (small ones are mostly faulted already: malloc's own heap). */
static void prefault(void *p, size_t bytes)
{
    ix_huge_advise(p, bytes);
    if (bytes >= IX_POPULATE_MIN)
        prefault_pages(p, bytes);
}

/* A stretch of the adds' arrays, ahead of their use. */
static void prefault_range(void *p, size_t bytes)
{
    if (bytes >= 65536)
        prefault_pages(p, bytes);
}

/* A block of `bytes` at a multiple of `align` (a power of two; 0: malloc's), or NULL. A
 * block from IX_HUGE_MIN on starts at a 2 MiB boundary: the kernel makes huge pages of the
 * aligned 2 MiB stretches of an advised range only, and malloc's large blocks start 16 bytes
 * into a page, so an 8 MiB directory of a 10M index got 6 of its 8 MiB in huge pages and a
 * quarter of the probe's directory reads walked the page tables (docs/BENCHMARKS.md,
 * "Huge pages from the first byte"). The slack before the boundary is never written: it
 * costs address space, no memory. */
static void *aligned_block(size_t bytes, size_t align)
{
#if IX_HUGE_MIN > 0
    if (bytes >= IX_HUGE_MIN && align < IX_HUGE_PAGE)
        align = IX_HUGE_PAGE;
#endif
    if (align <= _Alignof(max_align_t))
        return malloc(bytes ? bytes : 1);
    void *p = NULL;
    return posix_memalign(&p, align, bytes ? bytes : 1) == 0 ? p : NULL;
}

void *ix_big_alloc(size_t bytes)
{
    void *p = aligned_block(bytes, 0);
    prefault(p, bytes);
    return p;
}

/* ---- scratch: written blocks reused before fresh memory ----
 *
 * On this project's VM the first write to a fresh page costs about 10 us (3 s a GB,
 * prefaulted or not: the hypervisor's shadow page tables), the bytes themselves next to
 * nothing; a block whose pages were written already costs nothing more. A caller done with
 * large arrays just before the pairs (simcrawl pairs: the duplicate-id check's hashes)
 * hands them over, and the compaction and the streamed tables take their arrays from them:
 * at 10M documents 200 MB fewer fresh pages. */
void dedup_index_give_scratch(struct dedup_index *idx, void *p, size_t bytes)
{
    if (!p)
        return;
    for (unsigned i = 0; i < IX_SCRATCH_MAX; i++)
        if (!idx->scratch[i]) {
            idx->scratch[i] = p;
            idx->scratch_bytes[i] = bytes;
            return;
        }
    free(p);
}

void *ix_scratch_take(struct dedup_index *idx, size_t bytes, size_t most)
{
    unsigned best = IX_SCRATCH_MAX;
    for (unsigned i = 0; i < IX_SCRATCH_MAX; i++)
        if (idx->scratch[i] && idx->scratch_bytes[i] >= bytes && idx->scratch_bytes[i] <= most &&
            (best == IX_SCRATCH_MAX || idx->scratch_bytes[i] < idx->scratch_bytes[best]))
            best = i;
    if (best == IX_SCRATCH_MAX)
        return ix_big_alloc(bytes);
    void *p = idx->scratch[best];
    idx->scratch[best] = NULL;
    return p;
}

void ix_scratch_release(struct dedup_index *idx)
{
    for (unsigned i = 0; i < IX_SCRATCH_MAX; i++) {
        free(idx->scratch[i]);
        idx->scratch[i] = NULL;
    }
}

/* The document arrays grow by doubling up to billions of entries. malloc's realloc copies
 * blocks below its (moving) mmap threshold, and each copy faults in fresh pages: 20% of a
 * 10M all-pairs run. From IX_MAP_MIN bytes on they are mappings of their own, grown with
 * mremap (the pages move, nothing is copied). A block's size decides which kind it is, so
 * the caller passes the sizes it allocated. Their room is not prefaulted (that would fault
 * in up to twice what is used): docs_reserve prefaults ahead of the adds, an eighth of
 * what is there at a time. */
#define IX_MAP_MIN ((size_t)256 << 10)

static void *arr_resize(void *p, size_t old_bytes, size_t new_bytes)
{
    if (new_bytes < IX_MAP_MIN)
        return realloc(p, new_bytes ? new_bytes : 1); /* only ever grows: old is small too */
    void *q;
#ifdef MREMAP_MAYMOVE
    if (p && old_bytes >= IX_MAP_MIN) {
        q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
        if (q == MAP_FAILED)
            return NULL;
        ix_huge_advise(q, new_bytes);
        return q;
    }
#endif
    q = mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return NULL;
    ix_huge_advise(q, new_bytes);
    if (p) {
        /* the copy's pages in one call: memcpy would fault them one at a time (a quarter
         * of the page faults of `simcrawl pairs` on 1M lines) */
        prefault_pages(q, old_bytes);
        memcpy(q, p, old_bytes);
        if (old_bytes >= IX_MAP_MIN)
            munmap(p, old_bytes);
        else
            free(p);
    }
    return q;
}

static void arr_free(void *p, size_t bytes)
{
    if (p && bytes >= IX_MAP_MIN)
        munmap(p, bytes);
    else
        free(p);
}

/* ---- threads ---- */

struct par {
    void (*fn)(void *arg, unsigned i);
    void *arg;
    unsigned n, threads, tid;
};

static void *par_run(void *p)
{
    struct par *w = p;
    for (unsigned i = w->tid; i < w->n; i += w->threads)
        w->fn(w->arg, i);
    return NULL;
}

#define IX_THREADS_MAX 16u

unsigned ix_parallel(unsigned threads, unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
    pthread_t th[IX_THREADS_MAX];
    struct par w[IX_THREADS_MAX];
    if (threads > IX_THREADS_MAX)
        threads = IX_THREADS_MAX;
    if (threads > n)
        threads = n;
    if (threads <= 1) {
        for (unsigned i = 0; i < n; i++)
            fn(arg, i);
        return 1;
    }
    unsigned started = 0;
    for (unsigned t = 0; t < threads; t++)
        w[t] = (struct par){fn, arg, n, threads, t};
    for (unsigned t = 1; t < threads; t++) {
        if (pthread_create(&th[t], NULL, par_run, &w[t]) != 0)
            break;
        started++;
    }
    if (started + 1 < threads) {
        /* could not start them all: let the started ones finish, run the rest here */
        for (unsigned t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        for (unsigned i = 0; i < n; i++) {
            unsigned owner = i % threads;
            if (owner == 0 || owner > started)
                fn(arg, i);
        }
        return started + 1;
    }
    par_run(&w[0]);
    for (unsigned t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    return threads;
}

/* A team: threads started once that meet at barriers between the phases of one job (the
 * phases of a table build are each split between all threads). The workers wait for "go"
 * until the caller knows how many could be started, so the barrier counts right. */
struct ix_team {
    void (*fn)(void *arg, unsigned tid, struct ix_team *team);
    void *arg;
    unsigned n;
    int go;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_barrier_t bar;
};

struct team_member {
    struct ix_team *team;
    unsigned tid;
};

static void *team_main(void *p)
{
    struct team_member *m = p;
    struct ix_team *t = m->team;
    pthread_mutex_lock(&t->mu);
    while (!t->go)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    t->fn(t->arg, m->tid, t);
    return NULL;
}

unsigned ix_team_size(const struct ix_team *team)
{
    return team->n;
}

void ix_team_sync(struct ix_team *team)
{
    if (team->n > 1)
        (void)pthread_barrier_wait(&team->bar);
}

unsigned ix_team_run(unsigned threads, void (*fn)(void *arg, unsigned tid, struct ix_team *team),
                     void *arg)
{
    pthread_t th[IX_THREADS_MAX];
    struct team_member m[IX_THREADS_MAX];
    struct ix_team t;
    if (threads < 1)
        threads = 1;
    if (threads > IX_THREADS_MAX)
        threads = IX_THREADS_MAX;
    t.fn = fn;
    t.arg = arg;
    t.go = 0;
    t.n = 1;
    if (threads == 1) {
        fn(arg, 0, &t);
        return 1;
    }
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    unsigned started = 0;
    for (unsigned i = 1; i < threads; i++) {
        m[i] = (struct team_member){&t, i};
        if (pthread_create(&th[i], NULL, team_main, &m[i]) != 0)
            break;
        started++;
    }
    t.n = started + 1;
    if (t.n > 1)
        pthread_barrier_init(&t.bar, NULL, t.n);
    pthread_mutex_lock(&t.mu);
    t.go = 1;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
    fn(arg, 0, &t);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(th[i], NULL);
    if (t.n > 1)
        pthread_barrier_destroy(&t.bar);
    pthread_cond_destroy(&t.cv);
    pthread_mutex_destroy(&t.mu);
    return t.n;
}

/* ---- lifecycle, documents ---- */

enum dedup_code ix_new(const struct dedup_design *d, struct dedup_index **out)
{
    struct dedup_index *idx = calloc(1, sizeof *idx);
    if (!idx)
        return DEDUP_ENOMEM;
    enum dedup_code rc = ix_design_build(idx, d);
    if (rc != DEDUP_OK) {
        free(idx);
        return rc;
    }
    idx->docs_owned = idx->main_owned = idx->tail_owned = true;
    idx->lines_min = UINT32_MAX; /* the probe's lines: off (dedup_index_set_probe_lines) */
    idx->lines_min_on = IX_LINES_MIN;
    idx->lines_per = IX_LINES_PER;
    idx->delta_per = IX_DELTA_PER;
    *out = idx;
    return DEDUP_OK;
}

enum dedup_code dedup_index_new(const struct dedup_design *d, struct dedup_index **out)
{
    struct dedup_design c;
    if (!d || !out)
        return DEDUP_EINVAL;
    c = *d;
    struct ix_perm *scratch = malloc(sizeof(struct ix_perm) * DEDUP_MAX_TABLES);
    if (!scratch)
        return DEDUP_ENOMEM;
    int bad = design_complete(&c, scratch);
    free(scratch);
    if (bad)
        return DEDUP_EINVAL;
    struct dedup_index *idx;
    enum dedup_code rc = ix_new(&c, &idx);
    if (rc != DEDUP_OK)
        return rc;
    /* directories exist even for an empty main */
    for (unsigned t = 0; t < idx->ntables; t++) {
        idx->dir[t] = calloc(2, sizeof(uint32_t));
        if (!idx->dir[t]) {
            dedup_index_free(idx);
            return DEDUP_ENOMEM;
        }
    }
    *out = idx;
    return DEDUP_OK;
}

/* ---- the delta buckets' blocks (struct ix_slab) ---- */

/* chunks of 64 KiB, doubling with each new chunk up to 4 MiB (from 1 MiB on prefaulted in
 * one call: ix_big_alloc) */
#define SLAB_CHUNK_MIN ((size_t)64 << 10)
#define SLAB_CHUNK_MAX ((size_t)4 << 20)

static size_t slab_bytes(unsigned c)
{
    return ((size_t)4 << c) * (sizeof(uint64_t) + sizeof(uint32_t));
}

/* A block for 4 << c entries (their fingerprints and heads), or NULL. */
static uint64_t *slab_get(struct ix_slab *s, unsigned c)
{
    if (c >= IX_SLAB_CLASSES)
        return NULL;
    if (s->free[c]) {
        void *p = s->free[c];
        memcpy(&s->free[c], p, sizeof p);
        return p;
    }
    size_t bytes = slab_bytes(c);
    while ((size_t)(s->end - s->at) < bytes) {
        if (s->cur + 1 < s->nchunks) { /* a chunk of an earlier delta: pages written */
            s->cur++;
        } else {
            if (s->nchunks == s->cap_chunks) {
                size_t cap = s->cap_chunks ? s->cap_chunks * 2 : 16;
                struct ix_chunk *nc = realloc(s->chunk, cap * sizeof *nc);
                if (!nc)
                    return NULL;
                s->chunk = nc;
                s->cap_chunks = cap;
            }
            size_t size = s->nchunks < 6 ? SLAB_CHUNK_MIN << s->nchunks : SLAB_CHUNK_MAX;
            if (size < bytes)
                size = bytes;
            char *p = ix_big_alloc(size);
            if (!p)
                return NULL;
            s->chunk[s->nchunks] = (struct ix_chunk){p, size};
            s->cur = s->nchunks++;
        }
        s->at = s->chunk[s->cur].p;
        s->end = s->at + s->chunk[s->cur].size;
    }
    void *p = s->at;
    s->at += bytes; /* a multiple of 16: every block stays aligned as malloc's */
    return p;
}

static void slab_put(struct ix_slab *s, unsigned c, void *p)
{
    memcpy(p, &s->free[c], sizeof p);
    s->free[c] = p;
}

/* Every block free again (a merge emptied the delta); the chunks are kept for the next
 * delta: their pages are written already (a fresh page costs ~10 us to fault here). */
static void slab_reset(struct ix_slab *s)
{
    memset(s->free, 0, sizeof s->free);
    s->cur = 0;
    s->at = s->nchunks ? s->chunk[0].p : NULL;
    s->end = s->nchunks ? s->at + s->chunk[0].size : NULL;
}

static void slab_free(struct ix_slab *s)
{
    for (size_t i = 0; i < s->nchunks; i++)
        free(s->chunk[i].p);
    free(s->chunk);
    memset(s, 0, sizeof *s);
}

static void delta_clear(struct dedup_index *idx)
{
    idx->qc_on = false;
    for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++) {
        free(idx->dbucket[t]);
        idx->dbucket[t] = NULL;
    }
    slab_reset(&idx->dslab);
    free(idx->dfp);
    free(idx->dhead);
    free(idx->dtail);
    idx->dfp = NULL;
    idx->dhead = idx->dtail = NULL;
    idx->ndelta = idx->cap_delta = 0;
    idx->dd_bits = 0;
}

static void lines_free(struct dedup_index *idx)
{
    for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++) {
        free(idx->line[t]);
        idx->line[t] = NULL;
        idx->line_end[t] = idx->line_cap[t] = 0;
    }
    free(idx->line_head);
    idx->line_head = NULL;
    idx->head_cap = 0;
    idx->line_of = NULL;
    idx->line_of_n = 0;
}

void dedup_index_set_probe_lines(struct dedup_index *idx, int on)
{
    idx->lines_min = on ? idx->lines_min_on : UINT32_MAX;
    if (!on)
        lines_free(idx);
}

void dedup_index_set_probe_lines_limits(struct dedup_index *idx, uint64_t min_fingerprints,
                                        uint64_t max_bytes)
{
    const bool on = idx->lines_min != UINT32_MAX;
    idx->lines_min_on = min_fingerprints < UINT32_MAX ? (uint32_t)min_fingerprints : UINT32_MAX - 1;
    idx->lines_max_bytes = max_bytes;
    if (on)
        idx->lines_min = idx->lines_min_on;
}

static size_t lines_blocks_bytes(const struct dedup_index *idx)
{
    size_t b = idx->head_cap * sizeof *idx->line_head;
    for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++)
        b += idx->line_cap[t] * sizeof *idx->line[t];
    return b;
}

const char *dedup_lines_state_name(enum dedup_lines_state s)
{
    switch (s) {
    case DEDUP_LINES_OFF:
        return "off";
    case DEDUP_LINES_BUILT:
        return "built";
    case DEDUP_LINES_SMALL:
        return "small";
    case DEDUP_LINES_WARMING:
        return "warming";
    case DEDUP_LINES_OVER_CAP:
        return "over-cap";
    case DEDUP_LINES_SHORT_KEYS:
        return "short-keys";
    }
    return "off";
}

void dedup_index_probe_lines(const struct dedup_index *idx, struct dedup_lines_info *out)
{
    memset(out, 0, sizeof *out);
    out->on = idx->lines_min != UINT32_MAX;
    out->min_fingerprints = idx->lines_min_on;
    out->max_bytes = idx->lines_max_bytes;
    out->built = idx->line_of != NULL && !idx->lines_paused && idx->line_of == idx->tab[0] &&
                 idx->line_of_n == idx->nmain;
    out->bytes = lines_blocks_bytes(idx);
    out->need_bytes = dedup_index_probe_lines_bytes_for(idx, idx->nmain); /* 0: short keys */
    if (!out->on)
        out->state = DEDUP_LINES_OFF;
    else if (out->built)
        out->state = DEDUP_LINES_BUILT;
    else if (idx->nmain < idx->lines_min || !idx->nmain)
        out->state = DEDUP_LINES_SMALL;
    else if (!out->need_bytes)
        out->state = DEDUP_LINES_SHORT_KEYS;
    else if (idx->lines_max_bytes && out->need_bytes > idx->lines_max_bytes)
        out->state = DEDUP_LINES_OVER_CAP;
    else
        out->state = DEDUP_LINES_WARMING;
}

void dedup_index_copy_probe_lines(struct dedup_index *dst, const struct dedup_index *src)
{
    dedup_index_set_probe_lines_limits(dst, src->lines_min_on, src->lines_max_bytes);
    dedup_index_set_probe_lines(dst, src->lines_min != UINT32_MAX);
}

static void main_free(struct dedup_index *idx)
{
    idx->qc_on = false;
    idx->line_of = NULL; /* the lines' blocks stay for the next build (lines_ready) */
    idx->asked = 0;
    for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++) {
        if (idx->main_owned) {
            free(idx->tab[t]);
            free(idx->dir[t]);
        }
        idx->tab[t] = NULL;
        idx->dir[t] = NULL;
    }
    if (idx->main_owned)
        free(idx->head);
    if (idx->tail_owned)
        free(idx->tail);
    idx->head = idx->tail = NULL;
}

void dedup_index_free(struct dedup_index *idx)
{
    if (!idx)
        return;
    dedup_templates_free(idx->templates);
    delta_clear(idx);
    slab_free(&idx->dslab);
    main_free(idx);
    lines_free(idx);
    ix_scratch_release(idx);
    free(idx->tail_buf);
    free(idx->tail_fix);
    if (idx->docs_owned) {
        arr_free(idx->doc_fp, idx->fp_bytes);
        arr_free(idx->doc_next, idx->next_bytes);
        arr_free(idx->id_off, idx->off_bytes);
        arr_free(idx->id_bytes, idx->id_cap);
    }
    ix_unmap(idx);
    free(idx);
}

struct dedup_templates *dedup_index_templates(struct dedup_index *idx)
{
    if (!idx->templates)
        idx->templates = dedup_templates_new();
    return idx->templates;
}

void dedup_index_set_templates(struct dedup_index *idx, struct dedup_templates *t)
{
    if (idx->templates != t)
        dedup_templates_free(idx->templates);
    idx->templates = t;
}

struct dedup_templates *dedup_index_take_templates(struct dedup_index *idx)
{
    struct dedup_templates *t = idx->templates;
    idx->templates = NULL;
    return t;
}

enum dedup_code dedup_index_set_design(struct dedup_index *idx, const struct dedup_design *d)
{
    if (!idx || !d || idx->absorbed || idx->nmain || idx->ndelta || idx->lazy || !idx->main_owned)
        return DEDUP_EINVAL;
    struct dedup_design c = *d;
    struct ix_perm *perm = malloc(sizeof(struct ix_perm) * DEDUP_MAX_TABLES);
    if (!perm)
        return DEDUP_ENOMEM;
    uint32_t *dir[DEDUP_MAX_TABLES] = {NULL};
    enum dedup_code rc = DEDUP_EINVAL;
    if (design_complete(&c, perm) != 0)
        goto done;
    rc = DEDUP_ENOMEM;
    for (unsigned t = 0; t < c.tables; t++)
        if (!(dir[t] = calloc(2, sizeof(uint32_t))))
            goto done;
    main_free(idx); /* the empty main's directories */
    memcpy(idx->perm, perm, sizeof(struct ix_perm) * c.tables);
    for (unsigned t = 0; t < c.tables; t++) {
        idx->dir[t] = dir[t];
        dir[t] = NULL;
    }
    idx->design = c;
    idx->ntables = c.tables;
    idx->main_owned = idx->tail_owned = true;
    rc = DEDUP_OK;
done:
    for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++)
        free(dir[t]);
    free(perm);
    return rc;
}

enum dedup_code dedup_index_drop_pending(struct dedup_index *idx, const uint32_t *docs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (docs[i] < idx->absorbed || docs[i] >= idx->ndocs || (i && docs[i] <= docs[i - 1]))
            return DEDUP_EINVAL;
    if (!n)
        return DEDUP_OK;
    /* pending documents are owned (added) and each is alone on its list */
    uint32_t o = docs[0], next = 0;
    uint64_t ob = idx->id_off[o];
    for (uint32_t d = docs[0]; d < idx->ndocs; d++) {
        if (next < n && docs[next] == d) {
            next++;
            continue;
        }
        uint64_t s = idx->id_off[d], len = idx->id_off[d + 1] - s;
        memmove(idx->id_bytes + ob, idx->id_bytes + s, len);
        ob += len;
        idx->doc_fp[o] = idx->doc_fp[d];
        idx->doc_next[o] = IX_NONE;
        idx->id_off[o + 1] = ob;
        o++;
    }
    idx->ndocs = o;
    idx->id_len = ob;
    return DEDUP_OK;
}

const struct dedup_design *dedup_index_design(const struct dedup_index *idx)
{
    return &idx->design;
}

unsigned dedup_index_k(const struct dedup_index *idx)
{
    return idx->design.k;
}

uint32_t dedup_index_doc_count(const struct dedup_index *idx)
{
    return idx->ndocs;
}

const char *dedup_index_id(const struct dedup_index *idx, uint32_t doc, size_t *len)
{
    if (doc >= idx->ndocs) {
        if (len)
            *len = 0;
        return "";
    }
    if (len)
        *len = (size_t)(idx->id_off[doc + 1] - idx->id_off[doc] - 1);
    return idx->id_bytes + idx->id_off[doc];
}

uint64_t dedup_index_fingerprint(const struct dedup_index *idx, uint32_t doc)
{
    return doc < idx->ndocs ? idx->doc_fp[doc] : 0;
}

/* Makes the document arrays writable copies with room for `docs` documents and `bytes`
 * id bytes. */
static enum dedup_code docs_room(struct dedup_index *idx, uint64_t docs, uint64_t bytes)
{
    if (!idx->docs_owned || docs > idx->cap_docs) {
        uint64_t cap = idx->cap_docs ? idx->cap_docs : 1024;
        while (cap < docs)
            cap *= 2;
        if (cap > DEDUP_INDEX_MAX_DOCS)
            cap = DEDUP_INDEX_MAX_DOCS;
        if (idx->docs_owned) {
            /* each array is stored as soon as it moved, so a failure leaves the index as
             * it was (only with more room in some arrays) */
            uint64_t *fp = arr_resize(idx->doc_fp, idx->fp_bytes, cap * sizeof *fp);
            if (!fp)
                return DEDUP_ENOMEM;
            idx->doc_fp = fp;
            idx->fp_bytes = cap * sizeof *fp;
            uint32_t *next = arr_resize(idx->doc_next, idx->next_bytes, cap * sizeof *next);
            if (!next)
                return DEDUP_ENOMEM;
            idx->doc_next = next;
            idx->next_bytes = cap * sizeof *next;
            uint64_t *off = arr_resize(idx->id_off, idx->off_bytes, (cap + 1) * sizeof *off);
            if (!off)
                return DEDUP_ENOMEM;
            if (!idx->id_off)
                off[0] = 0;
            idx->id_off = off;
            idx->off_bytes = (cap + 1) * sizeof *off;
            idx->cap_docs = (uint32_t)cap;
        } else {
            /* the arrays point into a mapped file: copy them, the ids too */
            uint64_t idcap = idx->id_len ? idx->id_len : 1;
            uint64_t *fp = arr_resize(NULL, 0, cap * sizeof *fp);
            uint32_t *next = arr_resize(NULL, 0, cap * sizeof *next);
            uint64_t *off = arr_resize(NULL, 0, (cap + 1) * sizeof *off);
            char *ids = arr_resize(NULL, 0, idcap);
            if (!fp || !next || !off || !ids) {
                arr_free(fp, cap * sizeof *fp);
                arr_free(next, cap * sizeof *next);
                arr_free(off, (cap + 1) * sizeof *off);
                arr_free(ids, idcap);
                return DEDUP_ENOMEM;
            }
            if (idx->ndocs) {
                memcpy(fp, idx->doc_fp, idx->ndocs * sizeof *fp);
                memcpy(next, idx->doc_next, idx->ndocs * sizeof *next);
            }
            if (idx->id_off)
                memcpy(off, idx->id_off, ((size_t)idx->ndocs + 1) * sizeof *off);
            else
                off[0] = 0;
            if (idx->id_len)
                memcpy(ids, idx->id_bytes, idx->id_len);
            idx->doc_fp = fp;
            idx->doc_next = next;
            idx->id_off = off;
            idx->id_bytes = ids;
            idx->fp_bytes = cap * sizeof *fp;
            idx->next_bytes = cap * sizeof *next;
            idx->off_bytes = (cap + 1) * sizeof *off;
            idx->id_cap = idcap;
            idx->cap_docs = (uint32_t)cap;
            idx->docs_owned = true;
        }
    }
    if (bytes > idx->id_cap) {
        uint64_t cap = idx->id_cap ? idx->id_cap : 65536;
        while (cap < bytes)
            cap *= 2;
        char *ids = arr_resize(idx->id_bytes, idx->id_cap, cap);
        if (!ids)
            return DEDUP_ENOMEM;
        idx->id_bytes = ids;
        idx->id_cap = cap;
    }
    return DEDUP_OK;
}

/* How far the adds prefault: the next stretch of each array, an eighth of what is there
 * ahead of the need (at least 131072 documents, 1 MiB of ids), in one call each; for
 * dedup_index_add (docs_reserve) and a span's writer (dedup_index_span_add) alike. */
static uint64_t pf_docs_to(uint64_t need)
{
    return need + (need / 8 > 131072 ? need / 8 : 131072);
}

static uint64_t pf_bytes_to(uint64_t need)
{
    return need + (need / 8 > ((uint64_t)1 << 20) ? need / 8 : ((uint64_t)1 << 20));
}

/* Documents [from, to) of the three document arrays prefaulted. */
static void prefault_docs(uint64_t *fp, uint32_t *next, uint64_t *id_off, uint64_t from,
                          uint64_t to)
{
    prefault_range(fp + from, (to - from) * sizeof *fp);
    prefault_range(next + from, (to - from) * sizeof *next);
    prefault_range(id_off + from + 1, (to - from) * sizeof *id_off);
}

/* docs_room, then the next stretch of each array prefaulted (pf_docs_to, pf_bytes_to). */
static enum dedup_code docs_reserve(struct dedup_index *idx, uint64_t docs, uint64_t bytes)
{
    enum dedup_code rc = docs_room(idx, docs, bytes);
    if (rc != DEDUP_OK)
        return rc;
    if (docs > idx->pf_docs) {
        uint64_t from = idx->pf_docs, to = pf_docs_to(docs);
        if (from > docs)
            from = docs;
        if (to > idx->cap_docs)
            to = idx->cap_docs;
        if (idx->span_open && to > idx->span_doc)
            to = idx->span_doc; /* the span's writer faults its own */
        if (to > from)
            prefault_docs(idx->doc_fp, idx->doc_next, idx->id_off, from, to);
        idx->pf_docs = to > docs ? to : docs;
    }
    if (bytes > idx->pf_ids) {
        uint64_t to = pf_bytes_to(bytes);
        if (to > idx->id_cap)
            to = idx->id_cap;
        if (idx->span_open && to > idx->span_id)
            to = idx->span_id;
        if (to > idx->pf_ids)
            prefault_range(idx->id_bytes + idx->pf_ids, to - idx->pf_ids);
        idx->pf_ids = to > bytes ? to : bytes;
    }
    return DEDUP_OK;
}

enum dedup_code dedup_index_add(struct dedup_index *idx, uint64_t fp, const char *id, size_t id_len,
                                uint32_t *doc)
{
    if (idx->ndocs >= DEDUP_INDEX_MAX_DOCS || id_len > DEDUP_INDEX_MAX_ID_BYTES ||
        idx->id_len + id_len + 1 > IX_ID_BYTES_MAX)
        return DEDUP_ETOOLARGE;
    if (id_len && memchr(id, '\0', id_len))
        return DEDUP_EINVAL;
    uint64_t docs = (uint64_t)idx->ndocs + 1, bytes = idx->id_len + id_len + 1;
    if (idx->span_open && (docs > idx->span_doc || bytes > idx->span_id))
        return DEDUP_ETOOLARGE; /* would reach the open span */
    if (!idx->docs_owned || docs > idx->cap_docs || docs > idx->pf_docs || bytes > idx->id_cap ||
        bytes > idx->pf_ids) { /* else room reserved and prefaulted: docs_reserve does nothing */
        enum dedup_code rc = docs_reserve(idx, docs, bytes);
        if (rc != DEDUP_OK)
            return rc;
    }
    uint32_t n = idx->ndocs;
    idx->doc_fp[n] = fp;
    idx->doc_next[n] = IX_NONE;
    if (id_len)
        memcpy(idx->id_bytes + idx->id_len, id, id_len);
    idx->id_bytes[idx->id_len + id_len] = '\0';
    idx->id_len += id_len + 1;
    idx->id_off[n + 1] = idx->id_len;
    idx->ndocs = n + 1;
    if (doc)
        *doc = n;
    return DEDUP_OK;
}

/* A batch add split between threads: part i checks, then copies, the documents
 * [n * i / parts, n * (i + 1) / parts) of the batch. */
#define ADD_MANY_SPLIT_MIN 65536u /* documents: below, one thread does it all */

struct add_many_job {
    struct dedup_index *idx;
    size_t n;
    const uint64_t *fp, *id_end;
    const char *ids;
    uint32_t base;   /* the first new document's number */
    uint64_t id_len; /* the index's id bytes before the batch */
    unsigned parts;
    enum dedup_code rc[IX_THREADS_MAX];
};

static size_t add_many_bound(const struct add_many_job *j, unsigned i)
{
    return (size_t)((uint64_t)j->n * i / j->parts);
}

static void add_many_check(void *arg, unsigned part)
{
    struct add_many_job *j = arg;
    size_t lo = add_many_bound(j, part), hi = add_many_bound(j, part + 1);
    j->rc[part] = DEDUP_OK;
    for (size_t i = lo, start = lo ? j->id_end[lo - 1] : 0; i < hi; start = j->id_end[i++]) {
        if (j->id_end[i] <= start || j->ids[j->id_end[i] - 1] != '\0') {
            j->rc[part] = DEDUP_EINVAL;
            return;
        }
        size_t len = j->id_end[i] - 1 - start;
        if (len > DEDUP_INDEX_MAX_ID_BYTES) {
            j->rc[part] = DEDUP_ETOOLARGE;
            return;
        }
        if (len && memchr(j->ids + start, '\0', len)) {
            j->rc[part] = DEDUP_EINVAL;
            return;
        }
    }
}

/* A part's documents copied, its stretch of each array prefaulted first in one call. */
static void add_many_copy(void *arg, unsigned part)
{
    struct add_many_job *j = arg;
    struct dedup_index *idx = j->idx;
    size_t lo = add_many_bound(j, part), hi = add_many_bound(j, part + 1), m = hi - lo;
    uint64_t from = lo ? j->id_end[lo - 1] : 0, to = hi ? j->id_end[hi - 1] : 0;
    uint32_t d = j->base + (uint32_t)lo;
    if (!m)
        return;
    prefault_range(idx->doc_fp + d, m * sizeof *idx->doc_fp);
    prefault_range(idx->doc_next + d, m * sizeof *idx->doc_next);
    prefault_range(idx->id_off + d + 1, m * sizeof *idx->id_off);
    prefault_range(idx->id_bytes + j->id_len + from, to - from);
    memcpy(idx->doc_fp + d, j->fp + lo, m * sizeof *j->fp);
    memset(idx->doc_next + d, 0xff, m * sizeof *idx->doc_next); /* IX_NONE */
    memcpy(idx->id_bytes + j->id_len + from, j->ids + from, to - from);
    for (size_t i = lo; i < hi; i++)
        idx->id_off[j->base + 1 + i] = j->id_len + j->id_end[i];
}

enum dedup_code dedup_index_add_many(struct dedup_index *idx, size_t n, const uint64_t *fp,
                                     const char *ids, const uint64_t *id_end, unsigned threads)
{
    if (n == 0)
        return DEDUP_OK;
    if (idx->span_open)
        return DEDUP_EINVAL;
    uint64_t bytes = id_end[n - 1];
    if (n > DEDUP_INDEX_MAX_DOCS - idx->ndocs || idx->id_len + bytes > IX_ID_BYTES_MAX)
        return DEDUP_ETOOLARGE;
    struct add_many_job j = {.idx = idx, .n = n, .fp = fp, .id_end = id_end, .ids = ids};
    j.parts = threads < 1 || n < ADD_MANY_SPLIT_MIN ? 1 : threads;
    if (j.parts > IX_THREADS_MAX)
        j.parts = IX_THREADS_MAX;
    (void)ix_parallel(j.parts, j.parts, add_many_check, &j);
    for (unsigned i = 0; i < j.parts; i++)
        if (j.rc[i] != DEDUP_OK)
            return j.rc[i]; /* nothing changed yet */
    /* room only: each part prefaults its own stretch (the page clearing split too) */
    enum dedup_code rc = docs_room(idx, (uint64_t)idx->ndocs + n, idx->id_len + bytes);
    if (rc != DEDUP_OK)
        return rc;
    j.base = idx->ndocs;
    j.id_len = idx->id_len;
    (void)ix_parallel(j.parts, j.parts, add_many_copy, &j);
    idx->id_len += bytes;
    idx->ndocs = j.base + (uint32_t)n;
    if (idx->pf_docs < idx->ndocs)
        idx->pf_docs = idx->ndocs;
    if (idx->pf_ids < idx->id_len)
        idx->pf_ids = idx->id_len;
    return DEDUP_OK;
}

/* ---- spans: documents written in place by another thread ---- */

enum dedup_code dedup_index_span_open(struct dedup_index *idx, uint64_t docs_below,
                                      uint64_t bytes_below, uint64_t docs, uint64_t bytes,
                                      struct dedup_index_span *s)
{
    if (idx->span_open)
        return DEDUP_EINVAL;
    if (docs_below > DEDUP_INDEX_MAX_DOCS || bytes_below > IX_ID_BYTES_MAX)
        return DEDUP_ETOOLARGE;
    uint64_t doc_at = idx->ndocs + docs_below, id_at = idx->id_len + bytes_below;
    if (doc_at > DEDUP_INDEX_MAX_DOCS || docs > DEDUP_INDEX_MAX_DOCS - doc_at ||
        id_at > IX_ID_BYTES_MAX || bytes > IX_ID_BYTES_MAX - id_at)
        return DEDUP_ETOOLARGE;
    /* the arrays grown once, to hold the adds below the span and the span itself */
    enum dedup_code rc = docs_room(idx, doc_at + docs, id_at + bytes);
    if (rc != DEDUP_OK)
        return rc;
    *s = (struct dedup_index_span){.fp = idx->doc_fp,
                                   .id_off = idx->id_off,
                                   .next = idx->doc_next,
                                   .ids = idx->id_bytes,
                                   .first = doc_at,
                                   .cap = docs,
                                   .id_from = id_at,
                                   .id_cap = bytes};
    idx->span_open = true;
    idx->span_doc = doc_at;
    idx->span_id = id_at;
    return DEDUP_OK;
}

enum dedup_code dedup_index_span_add(struct dedup_index_span *s, uint64_t fp, const char *id,
                                     size_t id_len)
{
    if (id_len > DEDUP_INDEX_MAX_ID_BYTES || s->n == s->cap || id_len + 1 > s->id_cap - s->id_len)
        return DEDUP_ETOOLARGE;
    if (id_len && memchr(id, '\0', id_len))
        return DEDUP_EINVAL;
    uint64_t d = s->first + s->n, at = s->id_from + s->id_len;
    if (s->n + 1 > s->pf_docs) {
        uint64_t to = pf_docs_to(s->n);
        if (to > s->cap)
            to = s->cap;
        prefault_docs(s->fp, s->next, s->id_off, d, s->first + to);
        s->pf_docs = to;
    }
    if (s->id_len + id_len + 1 > s->pf_bytes) {
        uint64_t to = pf_bytes_to(s->id_len + id_len + 1);
        if (to > s->id_cap)
            to = s->id_cap;
        prefault_range(s->ids + s->id_from + s->pf_bytes, to - s->pf_bytes);
        s->pf_bytes = to;
    }
    s->fp[d] = fp;
    s->next[d] = IX_NONE;
    if (id_len)
        memcpy(s->ids + at, id, id_len);
    s->ids[at + id_len] = '\0';
    s->id_len += id_len + 1;
    s->id_off[d + 1] = s->id_from + s->id_len;
    s->n++;
    return DEDUP_OK;
}

void dedup_index_span_drop(struct dedup_index *idx, struct dedup_index_span *s)
{
    idx->span_open = false;
    s->n = s->id_len = 0;
}

enum dedup_code dedup_index_span_close(struct dedup_index *idx, struct dedup_index_span *s)
{
    idx->span_open = false;
    if (s->n == 0)
        return DEDUP_OK;
    if (s->n > DEDUP_INDEX_MAX_DOCS - idx->ndocs)
        return DEDUP_ETOOLARGE;
    uint64_t base = idx->ndocs, shift = s->first - base, id_shift = s->id_from - idx->id_len;
    if (shift || id_shift) {
        /* the adds stopped short of the span (lines that held no document): close the gap */
        memmove(idx->doc_fp + base, idx->doc_fp + s->first, s->n * sizeof *idx->doc_fp);
        memmove(idx->doc_next + base, idx->doc_next + s->first, s->n * sizeof *idx->doc_next);
        memmove(idx->id_bytes + idx->id_len, idx->id_bytes + s->id_from, s->id_len);
        for (uint64_t i = 1; i <= s->n; i++)
            idx->id_off[base + i] = idx->id_off[s->first + i] - id_shift;
    }
    idx->ndocs = (uint32_t)(base + s->n);
    idx->id_len += s->id_len;
    if (idx->pf_docs < idx->ndocs)
        idx->pf_docs = idx->ndocs;
    if (idx->pf_ids < idx->id_len)
        idx->pf_ids = idx->id_len;
    return DEDUP_OK;
}

/* ---- the main tables ---- */

unsigned ix_dir_bits_for(const struct dedup_index *idx, uint64_t n)
{
    unsigned lg = 0;
    while (lg < 63 && ((uint64_t)1 << (lg + 1)) <= n)
        lg++;
    unsigned d = lg > 2 ? lg - 2 : 0;
    if (d > idx->design.key_bits_min)
        d = idx->design.key_bits_min;
    if (d > IX_DIR_BITS_MAX)
        d = IX_DIR_BITS_MAX;
    return d;
}

void ix_dir_fill(uint32_t *dir, unsigned bits, const uint64_t *v, uint32_t n)
{
    /* dir[b] is the first entry whose top bits are b or more: each entry writes the
     * entries of the buckets up to its own that are not written yet (one shift and one
     * test an entry; a bucket a test and a write) */
    size_t nb = (size_t)1 << bits, b = 0;
    dir[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        for (size_t t = ix_top_below64(v[i], bits); b < t;)
            dir[++b] = i;
    while (b < nb)
        dir[++b] = n;
}

/* The slot of fp in table 0 (fp is in the main tables), or IX_NONE: a binary search of
 * its bucket. With head set, the head's line is requested as soon as the directory gives
 * the bucket, so that a query's match first found in table t >= 1 waits for two misses
 * after its own (the directory, then the bucket and its heads together) instead of three. */
static inline __attribute__((always_inline)) uint32_t main_find(const struct dedup_index *idx,
                                                                uint64_t fp, int head)
{
    const uint32_t *dir = idx->dir[0];
    const uint64_t *v = idx->tab[0];
    uint64_t b = ix_top_below64(fp, idx->dir_bits);
    uint32_t lo = dir[b], end = dir[b + 1], hi = end;
    if (head)
        __builtin_prefetch(&idx->head[lo]);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && v[lo] == fp ? lo : IX_NONE;
}

uint32_t ix_main_find(const struct dedup_index *idx, uint64_t fp)
{
    return idx->nmain ? main_find(idx, fp, 0) : IX_NONE;
}

static enum dedup_code tail_own(struct dedup_index *idx)
{
    if (idx->tail_owned || !idx->nmain)
        return DEDUP_OK;
    uint32_t *t = malloc(idx->nmain * sizeof *t);
    if (!t)
        return DEDUP_ENOMEM;
    memcpy(t, idx->tail, idx->nmain * sizeof *t);
    idx->tail = t;
    idx->tail_owned = true;
    return DEDUP_OK;
}

/* ---- the delta ---- */

/* The slot of fingerprint fp in the delta, or IX_NONE: table 0's permutation is the
 * identity, so its bucket of the delta holds fp itself, beside its slot (the other tables'
 * hold heads). A few entries (IX_DELTA_PER), on lines the query before the add has just
 * read; a hash of the slots (8 MB at the last merges of 1M, zeroed at each doubling and
 * written at random by every add) was a sixth of absorb_one's instructions and most of its
 * last-level write misses (docs/BENCHMARKS.md, perf19i). */
static uint32_t delta_find(const struct dedup_index *idx, uint64_t fp)
{
    if (!idx->ndelta)
        return IX_NONE;
    const struct ix_vec *v = &idx->dbucket[0][ix_top_below64(fp, idx->dd_bits)];
    for (uint32_t i = 0, n = v->n; i < n; i++)
        if (v->v[i] == fp)
            return ix_vec_heads(v)[i];
    return IX_NONE;
}

static uint64_t delta_threshold(const struct dedup_index *idx)
{
    uint64_t t = idx->nmain / IX_DELTA_FRACTION;
    return t > IX_DELTA_MIN ? t : IX_DELTA_MIN;
}

static enum dedup_code delta_grow(struct dedup_index *idx)
{
    if (!idx->dbucket[0]) {
        uint64_t th = delta_threshold(idx);
        unsigned lg = 0;
        while (((uint64_t)1 << (lg + 1)) <= th)
            lg++;
        unsigned dd = lg > idx->delta_per ? lg - idx->delta_per : 0;
        if (dd > idx->design.key_bits_min)
            dd = idx->design.key_bits_min;
        idx->dd_bits = dd;
        for (unsigned t = 0; t < idx->ntables; t++) {
            idx->dbucket[t] = calloc((size_t)1 << dd, sizeof(struct ix_vec));
            if (!idx->dbucket[t]) {
                for (unsigned u = 0; u < t; u++) {
                    free(idx->dbucket[u]);
                    idx->dbucket[u] = NULL;
                }
                return DEDUP_ENOMEM;
            }
        }
    }
    if (idx->ndelta == idx->cap_delta) {
        uint32_t cap = idx->cap_delta ? idx->cap_delta * 2 : 256;
        uint64_t *fp = realloc(idx->dfp, cap * sizeof *fp);
        if (!fp)
            return DEDUP_ENOMEM;
        idx->dfp = fp;
        uint32_t *h = realloc(idx->dhead, cap * sizeof *h);
        if (!h)
            return DEDUP_ENOMEM;
        idx->dhead = h;
        uint32_t *tl = realloc(idx->dtail, cap * sizeof *tl);
        if (!tl)
            return DEDUP_ENOMEM;
        idx->dtail = tl;
        idx->cap_delta = cap;
    }
    return DEDUP_OK;
}

/* Moves pending document `doc` into the delta (or onto the list of its fingerprint). */
static enum dedup_code absorb_one(struct dedup_index *idx, uint32_t doc)
{
    uint64_t fp = idx->doc_fp[doc];
    /* the query just before this add probed fp against the index as it is now and found no
     * exact match: fp is new, and its permuted values are known (qc_on, index_int.h). "As
     * it is now": doc was the first pending document then and still is, so nothing was
     * absorbed since (a merge turns qc_on off) */
    bool known = idx->qc_on && idx->qc_doc == doc && idx->qc_fp == fp;
    idx->qc_on = false;
    if (!known) {
        if (idx->ndelta) /* its line is on the way while table 0 is searched */
            __builtin_prefetch(&idx->dbucket[0][ix_top_below64(fp, idx->dd_bits)]);
        uint32_t pos = ix_main_find(idx, fp);
        if (pos != IX_NONE) {
            enum dedup_code rc = tail_own(idx);
            if (rc != DEDUP_OK)
                return rc;
            idx->doc_next[idx->tail[pos]] = doc;
            idx->tail[pos] = doc;
            return DEDUP_OK;
        }
        uint32_t s = delta_find(idx, fp);
        if (s != IX_NONE) {
            idx->doc_next[idx->dtail[s]] = doc;
            idx->dtail[s] = doc;
            return DEDUP_OK;
        }
    }
    enum dedup_code rc = delta_grow(idx);
    if (rc != DEDUP_OK)
        return rc;
    uint64_t pfp[DEDUP_MAX_TABLES];
    for (unsigned t = 0; t < idx->ntables; t++) {
        pfp[t] = known ? idx->qc_pq[t] : ix_permute(&idx->perm[t], fp);
        struct ix_vec *v = &idx->dbucket[t][ix_top_below64(pfp[t], idx->dd_bits)];
        if (v->n == v->cap) {
            unsigned c = v->cap ? (unsigned)__builtin_ctz(v->cap) - 1 : 0; /* cap 4 << c */
            uint64_t *nv = slab_get(&idx->dslab, c);
            if (!nv)
                return DEDUP_ENOMEM; /* nothing inserted yet: consistent */
            uint32_t cap = (uint32_t)4 << c;
            if (v->n) {
                memcpy(nv, v->v, v->n * sizeof *nv);
                memcpy(nv + cap, ix_vec_heads(v), v->n * sizeof(uint32_t));
                slab_put(&idx->dslab, c - 1, v->v);
            }
            v->v = nv;
            v->cap = cap;
        }
    }
    uint32_t s = idx->ndelta++;
    for (unsigned t = 0; t < idx->ntables; t++) {
        struct ix_vec *v = &idx->dbucket[t][ix_top_below64(pfp[t], idx->dd_bits)];
        v->v[v->n] = pfp[t];
        ix_vec_heads(v)[v->n++] = t ? doc : s; /* table 0: the slot (delta_find) */
    }
    idx->dfp[s] = fp;
    idx->dhead[s] = idx->dtail[s] = doc;
    return DEDUP_OK;
}

/* Brings every pending document into the tables (the delta, or a compaction). */
static enum dedup_code absorb(struct dedup_index *idx)
{
    uint64_t pending = idx->ndocs - idx->absorbed;
    if (!pending)
        return DEDUP_OK;
    if (idx->ndelta + pending > delta_threshold(idx))
        return ix_compact(idx, 1);
    while (idx->absorbed < idx->ndocs) {
        enum dedup_code rc = absorb_one(idx, idx->absorbed);
        if (rc != DEDUP_OK)
            return rc;
        idx->absorbed++;
    }
    return DEDUP_OK;
}

/* ---- compaction ---- */

struct compact_job {
    struct dedup_index *idx;
    const uint64_t *newfp; /* the new distinct fingerprints, sorted */
    uint32_t nnew;
    uint32_t ntotal;
    unsigned dir_bits;
    uint64_t *out_tab[DEDUP_MAX_TABLES];
    uint32_t *out_dir[DEDUP_MAX_TABLES];
    bool failed[DEDUP_MAX_TABLES]; /* one flag per table: each thread writes its own */
    bool from_delta;               /* newfp is the delta's fingerprints (no pending one) */
};

/* Table t's entries of the delta, sorted, into out[0..ndelta): the delta's buckets are in
 * the order of their top bits already, so each is sorted alone (a few entries: an
 * insertion sort) and the permutation is not computed again (ix_permute_sort of the new
 * fingerprints was a third of a merge's instructions, docs/BENCHMARKS.md, perf19i). */
static void delta_sorted(const struct dedup_index *idx, unsigned t, uint64_t *out)
{
    const struct ix_vec *bk = idx->dbucket[t];
    size_t o = 0;
    const size_t nb = (size_t)1 << idx->dd_bits, ahead = 8;
    for (size_t b = 0; b < nb; b++) {
        if (b + ahead < nb) /* the blocks lie anywhere in the slab: a miss each */
            __builtin_prefetch(bk[b + ahead].v);
        const uint64_t *v = bk[b].v;
        uint32_t n = bk[b].n;
        if (n > 32) { /* crowded (fingerprints alike in their top bits) */
            memcpy(out + o, v, n * sizeof *v);
            ix_sort_u64(out + o, n);
            o += n;
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t x = v[i];
            size_t at = o + i;
            for (; at > o && out[at - 1] > x; at--)
                out[at] = out[at - 1];
            out[at] = x;
        }
        o += n;
    }
}

static void compact_table(void *arg, unsigned t)
{
    struct compact_job *j = arg;
    struct dedup_index *idx = j->idx;
    if (t > 0 && idx->lazy)
        return; /* built when first needed (ix_tables_ready) */
    uint32_t *dir = ix_big_alloc((((size_t)1 << j->dir_bits) + 1) * sizeof *dir);
    if (!dir) {
        j->failed[t] = true;
        return;
    }
    if (t > 0) {
        const struct ix_perm *p = &idx->perm[t];
        uint64_t *out = ix_big_alloc((size_t)j->ntotal * sizeof *out);
        /* a fresh build sorts straight into the table; otherwise sort the new entries
         * and merge them with the old table */
        uint64_t *nv = idx->nmain ? ix_big_alloc((size_t)j->nnew * sizeof *nv) : out;
        if (!out || !nv) {
            free(out);
            if (nv != out)
                free(nv);
            free(dir);
            j->failed[t] = true;
            return;
        }
        if (j->from_delta)
            delta_sorted(idx, t, nv);
        else
            ix_permute_sort(p, j->newfp, j->nnew, nv);
        if (nv != out) {
            const uint64_t *ov = idx->tab[t];
            uint32_t a = 0, b = 0, o = 0, na = idx->nmain;
            while (a < na && b < j->nnew)
                out[o++] = ov[a] <= nv[b] ? ov[a++] : nv[b++];
            while (a < na)
                out[o++] = ov[a++];
            while (b < j->nnew)
                out[o++] = nv[b++];
            free(nv);
        }
        j->out_tab[t] = out;
    }
    ix_dir_fill(dir, j->dir_bits, j->out_tab[t], j->ntotal);
    j->out_dir[t] = dir;
}

/* Sorts records by fingerprint, stably; large inputs on `threads` threads: one counting
 * scatter on the top digit, then the 2^DIGIT_BITS buckets are sorted independently.
 * *a and *tmp may be swapped (the result is in *a). */
struct recsort_job {
    struct ix_rec *a, *tmp;
    size_t *end;
    unsigned shift;
};

static void recsort_bucket(void *arg, unsigned b)
{
    struct recsort_job *j = arg;
    size_t lo = b ? j->end[b - 1] : 0, hi = j->end[b];
    if (hi - lo > 1)
        msd_rec(j->a + lo, j->tmp + lo, hi - lo, j->shift);
}

static void sort_recs(struct ix_rec **a, struct ix_rec **tmp, size_t n, unsigned threads)
{
    if (threads <= 1 || n < IX_PAR_SORT_MIN) {
        msd_rec(*a, *tmp, n, 64);
        return;
    }
    const unsigned shift = 64 - DIGIT_BITS;
    size_t end[1u << DIGIT_BITS] = {0}, next[1u << DIGIT_BITS];
    struct ix_rec *src = *a, *dst = *tmp;
    for (size_t i = 0; i < n; i++)
        end[src[i].fp >> shift]++;
    size_t acc = 0;
    for (size_t b = 0; b < (1u << DIGIT_BITS); b++) {
        next[b] = acc;
        acc += end[b];
        end[b] = acc;
    }
    for (size_t i = 0; i < n; i++)
        dst[next[src[i].fp >> shift]++] = src[i];
    *a = dst;
    *tmp = src;
    struct recsort_job j = {dst, src, end, shift};
    (void)ix_parallel(threads, 1u << DIGIT_BITS, recsort_bucket, &j);
}

/* Builds tables 1.. of a lazy index from table 0, the tables shared out among threads. */
struct ready_job {
    struct dedup_index *idx;
    uint64_t *tab[DEDUP_MAX_TABLES];
    uint32_t *dir[DEDUP_MAX_TABLES];
};

static void ready_table(void *arg, unsigned i)
{
    struct ready_job *j = arg;
    struct dedup_index *idx = j->idx;
    unsigned t = i + 1;
    j->tab[t] = ix_big_alloc((size_t)idx->nmain * sizeof(uint64_t));
    j->dir[t] = ix_big_alloc((((size_t)1 << idx->dir_bits) + 1) * sizeof(uint32_t));
    if (!j->tab[t] || !j->dir[t])
        return;
    ix_permute_sort(&idx->perm[t], idx->tab[0], idx->nmain, j->tab[t]);
    ix_dir_fill(j->dir[t], idx->dir_bits, j->tab[t], idx->nmain);
}

enum dedup_code ix_tables_ready(struct dedup_index *idx, unsigned threads)
{
    if (!idx->lazy)
        return DEDUP_OK;
    struct ready_job j;
    memset(&j, 0, sizeof j);
    j.idx = idx;
    if (idx->ntables > 1)
        (void)ix_parallel(threads, idx->ntables - 1, ready_table, &j);
    bool failed = false;
    for (unsigned t = 1; t < idx->ntables; t++)
        failed |= !j.tab[t] || !j.dir[t];
    if (failed) {
        for (unsigned t = 1; t < idx->ntables; t++) {
            free(j.tab[t]);
            free(j.dir[t]);
        }
        return DEDUP_ENOMEM; /* still lazy: consistent */
    }
    for (unsigned t = 1; t < idx->ntables; t++) {
        idx->tab[t] = j.tab[t];
        idx->dir[t] = j.dir[t];
    }
    idx->lazy = false;
    return DEDUP_OK;
}

/* The first compaction of an index (empty main, empty delta): the documents' fingerprints
 * are sorted as (fingerprint, document) pairs in two arrays instead of 16-byte records:
 * a stable counting scatter on the top FRESH_BITS bits from doc_fp (each thread scatters
 * its share of the documents into its own slice of every bucket, so the order of documents
 * is kept), then every bucket (a few thousand entries, cache-resident) is sorted as records
 * in a per-thread scratch, the buckets shared out among threads, and folded while still in
 * cache: equal fingerprints become one entry (the first document its head, the others
 * linked after it), at the start of the bucket. One serial pass then closes the gaps
 * between the buckets (block moves): the fingerprints become table 0, the documents its
 * heads. 16 bytes a document at the peak instead of 48. */
#define FRESH_BITS 11u
#define FRESH_BUCKETS (1u << FRESH_BITS)

struct fresh_job {
    const uint64_t *fp;
    uint32_t base;
    size_t n;
    uint64_t *sfp;
    uint32_t *sdoc, *tail, *doc_next;
    size_t end[FRESH_BUCKETS];
    size_t distinct[FRESH_BUCKETS]; /* bucket b's entries after folding */
    size_t cnt[IX_THREADS_MAX][FRESH_BUCKETS];
    bool oom[IX_THREADS_MAX];
    /* tail == NULL (a lazy index for all pairs): the groups of several documents, (bucket,
     * place in it, last document) each, by thread; the others' tails are their heads */
    struct fresh_fix {
        uint32_t b, at, doc;
    } * fix[IX_THREADS_MAX];
    size_t nfix[IX_THREADS_MAX], capfix[IX_THREADS_MAX];
};

/* Group at (of bucket b, place at) ends with document last: its tail; thread tid. 0, or -1
 * out of memory. */
static int fresh_close(struct fresh_job *j, unsigned tid, size_t b, size_t s, size_t at,
                       uint32_t last, bool multi)
{
    if (j->tail) {
        j->tail[s + at] = last;
        return 0;
    }
    if (!multi)
        return 0;
    if (j->nfix[tid] == j->capfix[tid]) {
        size_t nc = j->capfix[tid] ? j->capfix[tid] * 2 : 1024;
        struct fresh_fix *nv = realloc(j->fix[tid], nc * sizeof *nv);
        if (!nv)
            return -1;
        j->fix[tid] = nv;
        j->capfix[tid] = nc;
    }
    j->fix[tid][j->nfix[tid]++] = (struct fresh_fix){(uint32_t)b, (uint32_t)at, last};
    return 0;
}

/* Bucket [s, s + nb) (nb >= 2) sorted by fingerprint, stably, and folded: one counting
 * scatter on the next digit below shift from sfp/sdoc into rec (scratch of nb), each
 * digit's group sorted there (insertion, or msd_rec when large), then folded from rec
 * straight back to sfp/sdoc/tail. Returns its distinct count. */
static size_t fresh_bucket(struct fresh_job *j, unsigned tid, size_t b, size_t s, size_t nb,
                           unsigned shift, struct ix_rec *rec, struct ix_rec *tmp)
{
    const uint64_t *fp = j->sfp + s;
    const uint32_t *doc = j->sdoc + s;
    unsigned w = digit_width(nb, DIGIT_BITS, shift);
    unsigned sh = shift - w;
    size_t mask = ((size_t)1 << w) - 1;
    uint32_t cnt[(1u << DIGIT_BITS) + 1];
    ix_digit_starts(fp, nb, sh, mask, cnt);
    for (size_t i = 0; i < nb; i++) /* stable: documents stay in order */
        rec[cnt[(fp[i] >> sh) & mask]++] = (struct ix_rec){fp[i], doc[i], 0};
    size_t lo = 0;
    for (size_t d = 0; d <= mask; d++) { /* cnt[d]: the end of digit d */
        size_t m = cnt[d] - lo;
        if (m > SORT_SMALL)
            msd_rec(rec + lo, tmp + lo, m, sh);
        else if (m > 1)
            msd_rec_insertion(rec + lo, m);
        lo = cnt[d];
    }
    uint64_t *ofp = j->sfp + s;
    uint32_t *odoc = j->sdoc + s, last = 0;
    size_t o = 0;
    bool multi = false;
    for (size_t i = 0; i < nb; i++) {
        if (o && ofp[o - 1] == rec[i].fp) {
            j->doc_next[last] = rec[i].doc;
            last = rec[i].doc;
            multi = true;
        } else {
            if (o && fresh_close(j, tid, b, s, o - 1, last, multi) != 0)
                j->oom[tid] = true;
            ofp[o] = rec[i].fp;
            odoc[o] = rec[i].doc;
            last = rec[i].doc;
            multi = false;
            o++;
        }
    }
    if (o && fresh_close(j, tid, b, s, o - 1, last, multi) != 0)
        j->oom[tid] = true;
    return o;
}

static void fresh_run(void *arg, unsigned tid, struct ix_team *team)
{
    struct fresh_job *j = arg;
    unsigned nt = ix_team_size(team);
    const unsigned shift = 64 - FRESH_BITS;
    size_t lo = j->n * tid / nt, hi = j->n * (tid + 1) / nt;
    size_t *c = j->cnt[tid];
    size_t off[FRESH_BUCKETS];
    memset(c, 0, sizeof j->cnt[tid]);
    for (size_t i = lo; i < hi; i++)
        c[j->fp[i] >> shift]++;
    ix_team_sync(team);
    size_t acc = 0;
    for (size_t b = 0; b < FRESH_BUCKETS; b++) {
        for (unsigned u = 0; u < nt; u++) {
            if (u == tid)
                off[b] = acc;
            acc += j->cnt[u][b];
        }
        if (tid == 0)
            j->end[b] = acc;
    }
    for (size_t i = lo; i < hi; i++) {
        size_t p = off[j->fp[i] >> shift]++;
        j->sfp[p] = j->fp[i];
        j->sdoc[p] = j->base + (uint32_t)i;
    }
    ix_team_sync(team);
    size_t maxb = 0;
    for (size_t b = 0; b < FRESH_BUCKETS; b++) {
        size_t nb = j->end[b] - (b ? j->end[b - 1] : 0);
        if (nb > maxb)
            maxb = nb;
    }
    struct ix_rec *rec = malloc((maxb ? maxb : 1) * sizeof *rec);
    struct ix_rec *tmp = malloc((maxb ? maxb : 1) * sizeof *tmp);
    if (!rec || !tmp) {
        j->oom[tid] = true;
        free(rec);
        free(tmp);
        return;
    }
    for (size_t b = tid; b < FRESH_BUCKETS; b += nt) {
        size_t s = b ? j->end[b - 1] : 0, nb = j->end[b] - s;
        if (nb >= 2)
            j->distinct[b] = fresh_bucket(j, tid, b, s, nb, shift, rec, tmp);
        else if ((j->distinct[b] = nb) == 1 && j->tail)
            j->tail[s] = j->sdoc[s];
    }
    free(rec);
    free(tmp);
}

static void fresh_job_free(struct fresh_job *j)
{
    if (!j)
        return;
    for (unsigned u = 0; u < IX_THREADS_MAX; u++)
        free(j->fix[u]);
    free(j);
}

static enum dedup_code compact_fresh(struct dedup_index *idx, unsigned threads)
{
    uint32_t n = idx->ndocs - idx->absorbed;
    bool want_lazy = idx->lazy;
    struct fresh_job *j = calloc(1, sizeof *j);
    size_t b8 = (size_t)n * sizeof(uint64_t), b4 = (size_t)n * sizeof(uint32_t);
    uint64_t *sfp = ix_scratch_take(idx, b8, IX_SCRATCH_KEEP(b8));
    uint32_t *sdoc = ix_scratch_take(idx, b4, IX_SCRATCH_KEEP(b4));
    /* all pairs (lazy): no tail array until the tables have been streamed; it is made
     * then in their buffer's pages (ix_tails_finish): 4 bytes a fingerprint fewer fresh */
    uint32_t *tail = want_lazy ? NULL : ix_scratch_take(idx, b4, IX_SCRATCH_KEEP(b4));
    uint32_t *dir = NULL, *fix = NULL;
    void *tbuf = NULL;
    size_t nfix = 0;
    if (!j || !sfp || !sdoc || (!want_lazy && !tail))
        goto fail;
    j->fp = idx->doc_fp + idx->absorbed;
    j->base = idx->absorbed;
    j->n = n;
    j->sfp = sfp;
    j->sdoc = sdoc;
    j->tail = tail;
    j->doc_next = idx->doc_next;
    if (n < IX_PAR_SORT_MIN)
        threads = 1;
    unsigned ran = ix_team_run(threads, fresh_run, j);
    bool oom = false;
    for (unsigned u = 0; u < ran; u++) {
        oom |= j->oom[u];
        nfix += j->nfix[u];
    }
    if (oom)
        goto unlink;
    uint32_t o = 0;
    for (size_t b = 0; b < FRESH_BUCKETS; b++) { /* the gaps between the buckets closed */
        size_t s = b ? j->end[b - 1] : 0, m = j->distinct[b];
        if (m && s != o) {
            memmove(sfp + o, sfp + s, m * sizeof *sfp);
            memmove(sdoc + o, sdoc + s, m * sizeof *sdoc);
            if (tail)
                memmove(tail + o, tail + s, m * sizeof *tail);
        }
        j->distinct[b] = o; /* now the bucket's start */
        o += (uint32_t)m;
    }
    unsigned dir_bits = ix_dir_bits_for(idx, o);
    dir = ix_big_alloc((((size_t)1 << dir_bits) + 1) * sizeof *dir);
    if (!dir)
        goto unlink;
    if (want_lazy) {
        /* the streamed tables' buffer, to be the tails after them, and the tails that are
         * not the heads: (position, document) */
        tbuf = ix_scratch_take(idx, (size_t)(o ? o : 1) * sizeof(uint64_t), SIZE_MAX);
        fix = malloc((nfix ? nfix : 1) * 2 * sizeof *fix);
        if (!tbuf || !fix)
            goto unlink;
        size_t f = 0;
        for (unsigned u = 0; u < ran; u++)
            for (size_t i = 0; i < j->nfix[u]; i++, f++) {
                fix[2 * f] = (uint32_t)j->distinct[j->fix[u][i].b] + j->fix[u][i].at;
                fix[2 * f + 1] = j->fix[u][i].doc;
            }
    }
    ix_dir_fill(dir, dir_bits, sfp, o);
    fresh_job_free(j);
    /* shrinking cannot fail in practice; keep the larger block if it does */
    uint64_t *t0 = realloc(sfp, (size_t)(o ? o : 1) * sizeof *t0);
    uint32_t *head = realloc(sdoc, (size_t)(o ? o : 1) * sizeof *head);
    uint32_t *tl = tail ? realloc(tail, (size_t)(o ? o : 1) * sizeof *tl) : NULL;
    main_free(idx);
    delta_clear(idx);
    idx->tab[0] = t0 ? t0 : sfp;
    idx->dir[0] = dir;
    idx->head = head ? head : sdoc;
    idx->tail = tl ? tl : tail;
    idx->tail_buf = tbuf;
    idx->tail_fix = fix;
    idx->ntail_fix = nfix;
    idx->main_owned = idx->tail_owned = true;
    idx->nmain = o;
    idx->dir_bits = dir_bits;
    idx->absorbed = idx->ndocs;
    idx->lazy = true;
    return want_lazy ? DEDUP_OK : ix_tables_ready(idx, threads);
unlink:
    /* undo the links of the buckets folded: every pending list is one document again */
    for (uint32_t d = idx->absorbed; d < idx->ndocs; d++)
        idx->doc_next[d] = IX_NONE;
fail:
    fresh_job_free(j);
    free(sfp);
    free(sdoc);
    free(tail);
    free(dir);
    free(tbuf);
    free(fix);
    return DEDUP_ENOMEM;
}

void ix_tails_finish(struct dedup_index *idx)
{
    if (!idx->tail_buf)
        return;
    uint32_t *t = idx->tail_buf;
    if (idx->nmain)
        memcpy(t, idx->head, (size_t)idx->nmain * sizeof *t);
    for (size_t i = 0; i < idx->ntail_fix; i++)
        t[idx->tail_fix[2 * i]] = idx->tail_fix[2 * i + 1];
    uint32_t *tl = realloc(t, (size_t)(idx->nmain ? idx->nmain : 1) * sizeof *tl);
    free(idx->tail);
    idx->tail = tl ? tl : t;
    idx->tail_owned = true;
    idx->tail_buf = NULL;
    free(idx->tail_fix);
    idx->tail_fix = NULL;
    idx->ntail_fix = 0;
}

/* The delta's (fingerprint, slot) records, sorted, into D[0..ndelta) (tmp: room for as
 * many): table 0's buckets of the delta are in the order of their top bits and hold the
 * slots, so each bucket is sorted alone (delta_sorted). */
static void delta_records(const struct dedup_index *idx, struct ix_rec *D, struct ix_rec *tmp)
{
    const struct ix_vec *bk = idx->dbucket[0];
    size_t o = 0;
    const size_t nb = idx->ndelta ? (size_t)1 << idx->dd_bits : 0, ahead = 8;
    for (size_t b = 0; b < nb; b++) {
        if (b + ahead < nb)
            __builtin_prefetch(bk[b + ahead].v);
        const uint64_t *v = bk[b].v;
        const uint32_t *sl = ix_vec_heads(&bk[b]);
        uint32_t n = bk[b].n;
        for (uint32_t i = 0; i < n; i++)
            D[o + i] = (struct ix_rec){v[i], sl[i], 0};
        if (n > 32) {
            msd_rec(D + o, tmp + o, n, 64);
        } else {
            for (uint32_t i = 1; i < n; i++) {
                struct ix_rec x = D[o + i];
                size_t at = o + i;
                for (; at > o && D[at - 1].fp > x.fp; at--)
                    D[at] = D[at - 1];
                D[at] = x;
            }
        }
        o += n;
    }
}

/* 1. The pending documents (*P, by fingerprint; stable, so documents stay in order per
 * fingerprint) and the delta's lists (*D, by fingerprint), sorted. Returns DEDUP_OK, or
 * DEDUP_ENOMEM with nothing allocated. */
static enum dedup_code compact_sort(const struct dedup_index *idx, unsigned threads,
                                    struct ix_rec **Pp, struct ix_rec **Dp)
{
    uint32_t np = idx->ndocs - idx->absorbed, nd = idx->ndelta;
    size_t ntmp = np > nd ? np : nd;
    struct ix_rec *P = ix_big_alloc(np * sizeof *P);
    struct ix_rec *D = ix_big_alloc(nd * sizeof *D);
    struct ix_rec *tmp = ix_big_alloc(ntmp * sizeof *tmp);
    if (!P || !D || !tmp) {
        free(P);
        free(D);
        free(tmp);
        return DEDUP_ENOMEM;
    }
    for (uint32_t i = 0; i < np; i++)
        P[i] = (struct ix_rec){idx->doc_fp[idx->absorbed + i], idx->absorbed + i, 0};
    sort_recs(&P, &tmp, np, threads);
    delta_records(idx, D, tmp);
    free(tmp);
    *Pp = P;
    *Dp = D;
    return DEDUP_OK;
}

/* 2. Merges the main table, the delta (D, nd) and the pending documents (P, np) into the
 * new table 0 (t0) with its lists (nhead, ntail), linking the pending documents onto
 * their lists; newfp receives the fingerprints that are new to the main table (*nn of
 * them). Returns the new distinct count. Cannot fail. */
static uint32_t compact_merge(struct dedup_index *idx, const struct ix_rec *P, uint32_t np,
                              const struct ix_rec *D, uint32_t nd, uint64_t *t0, uint32_t *nhead,
                              uint32_t *ntail, uint64_t *newfp, uint32_t *nn)
{
    uint32_t a = 0, b = 0, c = 0, o = 0, nm = idx->nmain;
    const uint64_t *mv = idx->tab[0];
    *nn = 0;
    while (a < nm || b < nd || c < np) {
        uint64_t fp = UINT64_MAX;
        int src = -1;
        if (a < nm) {
            fp = mv[a];
            src = 0;
        }
        if (b < nd && (src < 0 || D[b].fp < fp)) {
            fp = D[b].fp;
            src = 1;
        }
        if (c < np && (src < 0 || P[c].fp < fp)) {
            fp = P[c].fp;
            src = 2;
        }
        uint32_t h = IX_NONE, tl = IX_NONE;
        if (src == 0) {
            h = idx->head[a];
            tl = idx->tail[a];
            a++;
        } else if (src == 1) {
            h = idx->dhead[D[b].doc];
            tl = idx->dtail[D[b].doc];
            b++;
            newfp[(*nn)++] = fp;
        } else {
            newfp[(*nn)++] = fp;
        }
        while (c < np && P[c].fp == fp) {
            uint32_t doc = P[c++].doc;
            if (tl == IX_NONE)
                h = doc;
            else
                idx->doc_next[tl] = doc;
            tl = doc;
        }
        t0[o] = fp;
        nhead[o] = h;
        ntail[o] = tl;
        o++;
    }
    return o;
}

/* 3. Builds the other tables and every directory from table 0 and the new fingerprints,
 * one table per thread. Returns 0, or -1 out of memory (what was built is freed). */
static int compact_tables(struct compact_job *j, unsigned threads)
{
    unsigned ntables = j->idx->ntables;
    (void)ix_parallel(threads, ntables, compact_table, j);
    bool failed = false;
    for (unsigned t = 0; t < ntables; t++)
        failed |= j->failed[t];
    if (!failed)
        return 0;
    for (unsigned t = 1; t < ntables; t++)
        free(j->out_tab[t]);
    for (unsigned t = 0; t < ntables; t++)
        free(j->out_dir[t]);
    return -1;
}

/* Undoes compact_merge's links: cuts every list at its old tail (pending documents are
 * all after the old tails, so cutting restores the state before the merge). */
static void compact_unlink(struct dedup_index *idx)
{
    for (uint32_t i = 0; i < idx->nmain; i++)
        idx->doc_next[idx->tail[i]] = IX_NONE;
    for (uint32_t s = 0; s < idx->ndelta; s++)
        idx->doc_next[idx->dtail[s]] = IX_NONE;
    for (uint32_t d = idx->absorbed; d < idx->ndocs; d++)
        idx->doc_next[d] = IX_NONE;
}

/* Absorbs the delta and the pending documents into the main tables: sorts them
 * (compact_sort), merges them with table 0 and the lists (compact_merge), builds the
 * other tables (compact_tables), then installs the new main. Out of memory at any step
 * leaves the index as it was, but for the few pending documents that may have joined the
 * delta first (as the absorb of a query takes them: the same answers). */
enum dedup_code ix_compact(struct dedup_index *idx, unsigned threads)
{
    uint32_t np = idx->ndocs - idx->absorbed, nd = idx->ndelta;
    struct ix_rec *P = NULL, *D = NULL;
    uint64_t *newfp = NULL, *t0 = NULL;
    uint32_t *nhead = NULL, *ntail = NULL;
    if (!np && !nd)
        return DEDUP_OK;
    if (!idx->nmain && !nd) {
        enum dedup_code rc = compact_fresh(idx, threads);
        if (!idx->lazy)
            ix_scratch_release(idx); /* else all pairs streams the tables: kept for them */
        return rc;
    }
    /* A few pending documents (query then add: one) join the delta first, so that the new
     * fingerprints are the delta's, in its buckets by table (delta_sorted). Out of memory
     * there leaves the rest pending, for the sort below. */
    if (nd && np <= IX_COMPACT_ABSORB) {
        while (idx->absorbed < idx->ndocs && absorb_one(idx, idx->absorbed) == DEDUP_OK)
            idx->absorbed++;
        np = idx->ndocs - idx->absorbed;
        nd = idx->ndelta;
    }
    if (compact_sort(idx, threads, &P, &D) != DEDUP_OK)
        return DEDUP_ENOMEM;

    /* upper bound of the new distinct count */
    uint64_t bound = (uint64_t)idx->nmain + nd + np;
    if (bound > DEDUP_INDEX_MAX_DOCS)
        bound = DEDUP_INDEX_MAX_DOCS;
    /* prefaulted in one call each (ix_big_alloc): the online pattern compacts every
     * quarter of growth, and faulting the new arrays page by page was 10% of its time */
    t0 = ix_big_alloc(bound * sizeof *t0);
    nhead = ix_big_alloc(bound * sizeof *nhead);
    ntail = ix_big_alloc(bound * sizeof *ntail);
    /* the new distinct fingerprints, in order; with an empty main that is all of table 0
     * (written twice, same value, same place) */
    newfp = idx->nmain ? ix_big_alloc(((uint64_t)nd + np) * sizeof *newfp) : t0;
    if (!t0 || !nhead || !ntail || !newfp)
        goto fail;

    /* From here on nothing can fail before the document lists are rewritten, so the
     * lists are only written once every allocation above succeeded. */
    struct compact_job j;
    memset(&j, 0, sizeof j);
    uint32_t o = compact_merge(idx, P, np, D, nd, t0, nhead, ntail, newfp, &j.nnew);
    free(P);
    free(D);
    P = D = NULL;

    j.idx = idx;
    j.newfp = newfp;
    j.from_delta = !np; /* then the new fingerprints are the delta's (nnew == nd) */
    j.ntotal = o;
    j.dir_bits = ix_dir_bits_for(idx, o);
    j.out_tab[0] = t0;
    if (compact_tables(&j, threads) != 0) {
        compact_unlink(idx);
        goto fail;
    }
    main_free(idx);
    for (unsigned t = 0; t < idx->ntables; t++) {
        idx->tab[t] = j.out_tab[t];
        idx->dir[t] = j.out_dir[t];
    }
    idx->head = nhead;
    idx->tail = ntail;
    idx->main_owned = idx->tail_owned = true;
    idx->nmain = o;
    idx->dir_bits = j.dir_bits;
    delta_clear(idx);
    idx->absorbed = idx->ndocs;
    if (newfp != t0)
        free(newfp);
    ix_scratch_release(idx);
    return DEDUP_OK;
fail:
    free(P);
    free(D);
    if (newfp != t0)
        free(newfp);
    free(t0);
    free(nhead);
    free(ntail);
    return DEDUP_ENOMEM;
}

/* ---- the probe's lines ----
 *
 * HOW IT WORKS: the lines. A probe of the sorted tables reads table t's directory entry
 * for the query's key, and only then the bucket it points to: two reads in a row a table,
 * each a miss against a large index (a dependent random read costs ~0.5 us on this
 * project's VM, independent ones overlap: docs/BENCHMARKS.md, perf19g and perf19h). The
 * lines hold table t's entries once more, sorted as in tab[t], but placed so that an
 * entry whose top line_bits are b sits at slot b * IX_LINE_SLOTS or, when earlier entries
 * have filled that, at the next free slot after them (a sorted array with gaps: its
 * buckets spill forward into the next ones as a bucket-level linear probing would). With
 * at most 0.8 entries a slot, bucket b's entries almost always lie within the line at
 * b * IX_LINE_SLOTS and the one after it: addresses the key gives, so every table's two
 * lines are requested at once and a query waits for one round of misses. The scan of
 * bucket b runs from its first slot, skips earlier buckets' spilled entries (their top
 * bits differ, so the key test rejects them: line_bits <= the design's shortest key), and
 * stops at the first value above bucket b's range. A gap before slot (r + 1) * SLOTS
 * holds (r + 1) << (64 - line_bits), the least value of bucket r + 1: above every bucket
 * whose scan can reach it, and never read by bucket r + 1's own scan, which starts after
 * it; the slots after the last entry are not scanned (line_end). Table 0's slots carry
 * their heads (line_head), so a match of table 0 needs no other read, and a match first
 * found in table t >= 1 finds its head with one more line of table 0 (lines_find0)
 * instead of a directory, a bucket and the head in a row. Off unless the caller turns them
 * on (dedup_index_set_probe_lines: the memory below is the caller's to spend); then built by
 * a query of a main of
 * at least lines_min fingerprints once that main has answered nmain / lines_per queries
 * (a short run of queries against a large saved index never pays for them: 3.6-5.3 CPU s
 * at 10M here, mostly fresh pages): 8 bytes a slot a table and 4 a slot of table 0 (about
 * 1.25-2.5 slots a distinct fingerprint: 1.4 GB beside 1.2 GB at 10M), beside the tables,
 * which the rest of the index (all pairs, saves, merges) keeps using. Where the design's
 * key is too short for 0.8 entries a slot (the 4-table design of 1M), no lines are built
 * and the directories serve. One call a query against 10M: 1.12x main's rate at the median
 * of 5 alternating processes at load 10-12, half the last-level misses (perf19h). */

#ifndef IX_LINES_PREFETCH2
#define IX_LINES_PREFETCH2 1
#endif

struct lines_job {
    struct dedup_index *idx;
    unsigned bits;
    bool failed[DEDUP_MAX_TABLES];
};

/* The slots that the entries of sorted v[0..n) use, by the rule above (the last one's + 1). */
static size_t lines_end(const uint64_t *v, uint32_t n, unsigned bits)
{
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t s = (size_t)(v[i] >> (64 - bits)) * IX_LINE_SLOTS;
        at = (at > s ? at : s) + 1;
    }
    return at;
}

/* A block for lines of `slots` slots of `size` bytes, line-aligned (bucket b is the line at
 * b * IX_LINE_SLOTS), prefaulted; the old block when large enough (its pages are written:
 * on this project's VM a fresh page costs about 10 us, 4 s for a 10M index's lines), else
 * a new one and the old freed. NULL when out of memory (the old one kept). */
static void *lines_block(void *old, size_t *cap, size_t slots, size_t size)
{
    if (old && *cap >= slots)
        return old;
    void *p = aligned_block(slots * size, 64);
    if (!p)
        return NULL;
    prefault(p, slots * size);
    free(old);
    *cap = slots;
    return p;
}

static void lines_table(void *arg, unsigned t)
{
    struct lines_job *j = arg;
    struct dedup_index *idx = j->idx;
    const uint64_t *v = idx->tab[t];
    const unsigned sh = 64 - j->bits;
    size_t cap = ((size_t)IX_LINE_SLOTS << j->bits) + 2 * IX_LINE_SLOTS;
    size_t end = lines_end(v, idx->nmain, j->bits);
    if (end + 2 * IX_LINE_SLOTS > cap)
        cap = end + 2 * IX_LINE_SLOTS;
    uint64_t *g = lines_block(idx->line[t], &idx->line_cap[t], cap, sizeof *g);
    uint32_t *h = t == 0 ? lines_block(idx->line_head, &idx->head_cap, cap, sizeof *h) : NULL;
    if (g)
        idx->line[t] = g;
    if (h)
        idx->line_head = h;
    if (!g || (t == 0 && !h)) {
        j->failed[t] = true;
        return;
    }
    size_t at = 0;
    for (uint32_t i = 0; i < idx->nmain; i++) {
        size_t b = (size_t)(v[i] >> sh), s = b * IX_LINE_SLOTS;
        for (; at < s; at++) {
            g[at] = (uint64_t)(at / IX_LINE_SLOTS + 1) << sh;
            if (h)
                h[at] = IX_NONE;
        }
        g[at] = v[i];
        if (h)
            h[at] = idx->head[i];
        at++;
    }
    for (; at < cap; at++) { /* never scanned (past line_end): only prefetched */
        g[at] = UINT64_MAX;
        if (h)
            h[at] = IX_NONE;
    }
    idx->line_end[t] = end;
}

/* Line bits for n entries: the fewest with at most 0.8 entries a slot, 0 when the design's
 * shortest key is too short for that (no lines then). */
static unsigned lines_bits_for(const struct dedup_index *idx, uint64_t n)
{
    unsigned bits = 1;
    while (bits < 40 && ((uint64_t)IX_LINE_SLOTS << bits) * 4 < n * 5)
        bits++;
    return bits <= idx->design.key_bits_min && bits <= 32 ? bits : 0;
}

/* The bytes of lines of `bits` bits for idx's tables: the least blocks lines_table makes
 * (a spill past the last bucket adds a few lines more). */
static uint64_t lines_bytes_bits(const struct dedup_index *idx, unsigned bits)
{
    const uint64_t slots = ((uint64_t)IX_LINE_SLOTS << bits) + 2 * IX_LINE_SLOTS;
    return slots * (sizeof(uint64_t) * idx->ntables + sizeof(uint32_t));
}

uint64_t dedup_index_probe_lines_bytes_for(const struct dedup_index *idx, uint64_t n)
{
    unsigned bits = n ? lines_bits_for(idx, n) : 0;
    return bits ? lines_bytes_bits(idx, bits) : 0;
}

/* Builds the lines of the main tables when they are worth it and not built yet (or built
 * for another main). Out of memory leaves the index without lines: the directories serve
 * every query as before, so it is not an error; so do lines over lines_max_bytes (the
 * blocks of older lines are then freed: they count against the same cap). */
static void lines_ready(struct dedup_index *idx)
{
    if (idx->lines_paused ||
        (idx->line_of && idx->line_of == idx->tab[0] && idx->line_of_n == idx->nmain))
        return;
    idx->line_of = NULL;
    if (idx->nmain < idx->lines_min || !idx->nmain || idx->lazy ||
        (idx->lines_per && idx->asked < idx->nmain / idx->lines_per))
        return;
    unsigned bits = lines_bits_for(idx, idx->nmain);
    if (!bits)
        return;
    if (idx->lines_max_bytes && lines_bytes_bits(idx, bits) > idx->lines_max_bytes) {
        lines_free(idx);
        return;
    }
    struct lines_job j;
    memset(&j, 0, sizeof j);
    j.idx = idx;
    j.bits = bits;
    (void)ix_parallel(1, idx->ntables, lines_table, &j); /* one thread, as a query's merge */
    for (unsigned t = 0; t < idx->ntables; t++)
        if (j.failed[t])
            return; /* no lines (the blocks made are kept for the next try) */
    idx->line_bits = bits;
    idx->line_of = idx->tab[0];
    idx->line_of_n = idx->nmain;
}

/* The slot of fp in table 0's lines, or SIZE_MAX. */
static inline size_t lines_find0(const struct dedup_index *idx, uint64_t fp)
{
    const uint64_t *g = idx->line[0];
    for (size_t i = (size_t)(fp >> (64 - idx->line_bits)) * IX_LINE_SLOTS, e = idx->line_end[0];
         i < e && g[i] <= fp; i++)
        if (g[i] == fp)
            return i;
    return SIZE_MAX;
}

/* ---- queries ---- */

/* Calls found(arg, x, distance, doc_head) for every distinct indexed fingerprint x within
 * k of q, each once. */
typedef int (*match_fn)(void *arg, uint64_t x, unsigned distance, uint32_t head);

/* A query between the stages of its probe: its key in every table and, once the
 * directories are read, every table's bucket bounds. */
struct probe_state {
    uint64_t q;
    uint64_t pq[DEDUP_MAX_TABLES];
    uint32_t lo[DEDUP_MAX_TABLES], hi[DEDUP_MAX_TABLES]; /* lo: the directory entry's number
                                                          * until probe_bounds reads it */
    uint32_t dd[DEDUP_MAX_TABLES];                       /* the key's delta bucket in each table */
};

/* The probe in three stages, so that a batch can run them for different queries at once
 * (probe_many): 1. the keys, each table's directory line requested; 2. the directory
 * read, the bucket's first and last lines requested; 3. the buckets scanned. probe_all
 * runs them back to back for one query: the tables are independent, so every directory
 * read, then every bucket read, is requested before any is used and the misses overlap. */
static inline __attribute__((always_inline)) void probe_keys(const struct dedup_index *idx,
                                                             uint64_t q, struct probe_state *st)
{
    unsigned nt = idx->ntables;
    st->q = q;
    for (unsigned t = 0; t < nt; t++)
        st->pq[t] = ix_permute(&idx->perm[t], q);
    /* the delta's buckets are small arrays of their own: their headers' reads start with
     * the directories' and their first lines' with the tables' */
    if (idx->ndelta)
        for (unsigned t = 0; t < nt; t++) {
            st->dd[t] = (uint32_t)ix_top_below64(st->pq[t], idx->dd_bits);
            __builtin_prefetch(&idx->dbucket[t][st->dd[t]]);
        }
    if (idx->line_of && !idx->lines_paused) {
        /* the lines: every line the scan will read, requested now (no directory) */
        const unsigned sh = 64 - idx->line_bits;
        for (unsigned t = 0; t < nt; t++) {
            const uint64_t *g = idx->line[t] + (size_t)(st->pq[t] >> sh) * IX_LINE_SLOTS;
            __builtin_prefetch(g);
            if (IX_LINES_PREFETCH2)
                __builtin_prefetch(g + IX_LINE_SLOTS);
        }
        __builtin_prefetch(idx->line_head + (size_t)(q >> sh) * IX_LINE_SLOTS);
    } else if (idx->nmain) {
        for (unsigned t = 0; t < nt; t++) {
            st->lo[t] = (uint32_t)ix_top_below64(st->pq[t], idx->dir_bits);
            __builtin_prefetch(&idx->dir[t][st->lo[t]]);
        }
    }
}

static inline __attribute__((always_inline)) void probe_bounds(const struct dedup_index *idx,
                                                               struct probe_state *st)
{
    unsigned nt = idx->ntables;
    if (idx->nmain && (!idx->line_of || idx->lines_paused))
        for (unsigned t = 0; t < nt; t++) {
            uint32_t b = st->lo[t];
            uint32_t lo = idx->dir[t][b], hi = idx->dir[t][b + 1];
            st->lo[t] = lo;
            st->hi[t] = hi;
            __builtin_prefetch(&idx->tab[t][lo]);
            if (hi > lo)
                __builtin_prefetch(&idx->tab[t][hi - 1]);
            if (t == 0 && hi > lo) /* a match of table 0 reads its head at once */
                __builtin_prefetch(&idx->head[lo]);
        }
    if (idx->ndelta)
        for (unsigned t = 0; t < nt; t++)
            __builtin_prefetch(idx->dbucket[t][st->dd[t]].v);
}

/* Entry i of table t's bucket, within dist <= k of the query and of its key: reported when
 * t is the first table whose key it shares with the query. */
static inline __attribute__((always_inline)) int main_match(const struct dedup_index *idx,
                                                            const struct probe_state *st,
                                                            unsigned t, uint32_t i, unsigned dist,
                                                            match_fn found, void *arg)
{
    const uint64_t v = idx->tab[t][i];
    uint64_t x = t ? ix_unpermute(&idx->perm[t], v) : v;
    if (ix_first_table(idx, x ^ st->q) != t)
        return 0;
    uint32_t pos = t ? main_find(idx, x, IX_HEAD_PREFETCH) : i;
    if (pos == IX_NONE)
        return 0; /* only in a forged file: a table entry not in table 0 */
    return found(arg, x, dist, idx->head[pos]);
}

/* Table t's bucket of the main tables (probe_bounds found it); keytest: whether entries of
 * other keys may be in it. */
static inline __attribute__((always_inline)) int scan_main(const struct dedup_index *idx,
                                                           const struct probe_state *st, unsigned t,
                                                           unsigned k, match_fn found, void *arg,
                                                           bool keytest)
{
    const uint64_t *v = idx->tab[t];
    const uint64_t pt = st->pq[t], keyhi = idx->perm[t].keyhi;
    for (uint32_t i = st->lo[t], e = st->hi[t]; i < e; i++) {
        /* entries of other keys are never reported from table t (the first-table rule
         * needs equal keys), so one AND skips them */
        uint64_t d = v[i] ^ pt;
        if (keytest && (d & keyhi))
            continue;
        unsigned dist = (unsigned)__builtin_popcountll(d);
        if (dist > k)
            continue;
        if (main_match(idx, st, t, i, dist, found, arg))
            return 1;
    }
    return 0;
}

#ifdef IX_HAVE_WIDE
/* Every table's bucket of the main tables, 8 entries an instruction (AVX-512 with
 * VPOPCNTDQ): the key test and the distance of a whole bucket (about 5 entries at 10M)
 * give one mask, so a bucket without a match costs a few instructions and no branch of
 * its length (the scalar loop's exit is mispredicted about once a table). The matches
 * are scan_main's, in the same order. */
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) static int
scan_main_wide(const struct dedup_index *idx, const struct probe_state *st, unsigned k,
               match_fn found, void *arg)
{
    const __m512i kk = _mm512_set1_epi64((long long)k);
    for (unsigned t = 0, nt = idx->ntables; t < nt; t++) {
        const uint64_t *v = idx->tab[t];
        const __m512i pt = _mm512_set1_epi64((long long)st->pq[t]);
        /* a bucket of one key when the directory's bits cover it: no key test */
        const __m512i kh = _mm512_set1_epi64(
            idx->perm[t].key_bits <= idx->dir_bits ? 0 : (long long)idx->perm[t].keyhi);
        for (uint32_t i = st->lo[t], e = st->hi[t]; i < e; i += 8) {
            __mmask8 lanes = e - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (e - i)) - 1);
            __m512i d = _mm512_xor_si512(_mm512_maskz_loadu_epi64(lanes, v + i), pt);
            __mmask8 hit = _mm512_mask_cmple_epu64_mask(_mm512_mask_testn_epi64_mask(lanes, d, kh),
                                                        _mm512_popcnt_epi64(d), kk);
            while (hit) {
                unsigned j = (unsigned)__builtin_ctz(hit);
                hit &= (__mmask8)(hit - 1);
                unsigned dist = (unsigned)__builtin_popcountll(v[i + j] ^ st->pq[t]);
                if (main_match(idx, st, t, i + j, dist, found, arg))
                    return 1;
            }
        }
    }
    return 0;
}
#define IX_PROBE_WIDE (atomic_load_explicit(&ix_probe_wide, memory_order_relaxed) > 0)
#else
#define IX_PROBE_WIDE 0
#define scan_main_wide(idx, st, k, found, arg) 0
#endif

_Atomic int ix_probe_wide = -1;

bool ix_wide_fast(void)
{
#ifdef IX_HAVE_WIDE
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
#else
    return false;
#endif
}

static inline __attribute__((always_inline)) int probe_scan(const struct dedup_index *idx,
                                                            const struct probe_state *st,
                                                            unsigned k, match_fn found, void *arg)
{
    unsigned nt = idx->ntables;
    const uint64_t q = st->q;
    if (idx->line_of && !idx->lines_paused) {
        const unsigned sh = 64 - idx->line_bits;
        const uint64_t low = UINT64_MAX >> idx->line_bits;
        for (unsigned t = 0; t < nt; t++) {
            const struct ix_perm *p = &idx->perm[t];
            const uint64_t *g = idx->line[t];
            const uint64_t pt = st->pq[t], keyhi = p->keyhi, lim = pt | low;
            for (size_t i = (size_t)(pt >> sh) * IX_LINE_SLOTS, e = idx->line_end[t]; i < e; i++) {
                /* the bucket ends at the first value above its range (an entry of a later
                 * bucket or a gap); earlier buckets' spilled entries fail the key test */
                uint64_t v = g[i];
                if (v > lim)
                    break;
                uint64_t d = v ^ pt;
                if (d & keyhi)
                    continue;
                unsigned dist = (unsigned)__builtin_popcountll(d);
                if (dist > k)
                    continue;
                uint64_t x = t ? ix_unpermute(p, v) : v;
                if (ix_first_table(idx, x ^ q) != t)
                    continue;
                size_t at = t ? lines_find0(idx, x) : i;
                if (at == SIZE_MAX)
                    continue; /* only in a forged file: a table entry not in table 0 */
                if (found(arg, x, dist, idx->line_head[at]))
                    return 1;
            }
        }
    } else if (idx->nmain && IX_PROBE_WIDE) {
        if (scan_main_wide(idx, st, k, found, arg))
            return 1;
    } else if (idx->nmain) {
        for (unsigned t = 0; t < nt; t++) {
            /* a bucket holds other keys too, unless the directory's bits cover the key (the
             * 4 tables of 16-bit keys from 256K fingerprints on) */
            int r = idx->perm[t].key_bits <= idx->dir_bits
                        ? scan_main(idx, st, t, k, found, arg, false)
                        : scan_main(idx, st, t, k, found, arg, true);
            if (r)
                return 1;
        }
    }
    if (idx->ndelta) {
        for (unsigned t = 0; t < nt; t++) {
            const struct ix_perm *p = &idx->perm[t];
            const struct ix_vec *vec = &idx->dbucket[t][st->dd[t]];
            const uint64_t *dv = vec->v, pt = st->pq[t];
            for (uint32_t i = 0, e = vec->n; i < e; i++) {
                unsigned dist = (unsigned)__builtin_popcountll(dv[i] ^ pt);
                if (dist > k)
                    continue;
                uint64_t x = ix_unpermute(p, dv[i]);
                if (ix_first_table(idx, x ^ q) != t)
                    continue;
                /* the head is stored beside the entry (table 0: the slot, whose head is one
                 * read away) */
                uint32_t h = ix_vec_heads(vec)[i];
                if (found(arg, x, dist, t ? h : idx->dhead[h]))
                    return 1;
            }
        }
    }
    return 0;
}

IX_HOT static int probe_all(const struct dedup_index *idx, uint64_t q, unsigned k, match_fn found,
                            void *arg, struct probe_state *st)
{
    probe_keys(idx, q, st);
    probe_bounds(idx, st);
    return probe_scan(idx, st, k, found, arg);
}

/* After a one-call query (st: its probe): when it found no exact match (new), what the
 * add of its fingerprint that usually follows needs from it (qc_on; absorb_one). */
static void probe_keep(struct dedup_index *idx, const struct probe_state *st, bool new)
{
    idx->qc_on = new;
    if (!new)
        return;
    idx->qc_doc = idx->ndocs;
    idx->qc_fp = st->q;
    memcpy(idx->qc_pq, st->pq, idx->ntables * sizeof st->pq[0]);
}

/* Batched probes: a software pipeline over the queries q[0..n). While query i is scanned,
 * the directory lines of query i + IX_BATCH_DEPTH and the bucket lines of query
 * i + IX_BATCH_DEPTH / 2 are on their way, so the misses of many queries overlap (one
 * query alone overlaps only its own tables'). The answers are probe_all's: the same
 * scan, only earlier reads. done(arg, i) runs after query i's matches (found) and may
 * stop the batch (non-zero: returned). */
#ifndef IX_BATCH_DEPTH
#define IX_BATCH_DEPTH 8u /* queries ahead (chosen by measurement: docs/BENCHMARKS.md) */
#endif
#define IX_BATCH_RING 64u /* a power of two > IX_BATCH_DEPTH */
_Static_assert(IX_BATCH_DEPTH >= 2 && IX_BATCH_DEPTH < IX_BATCH_RING, "IX_BATCH_DEPTH 2..63");

typedef int (*done_fn)(void *arg, size_t i);

IX_HOT static int probe_many(const struct dedup_index *idx, size_t n, const uint64_t *q, unsigned k,
                             match_fn found, done_fn done, void *arg)
{
    struct probe_state ring[IX_BATCH_RING];
    const size_t d1 = IX_BATCH_DEPTH, d2 = IX_BATCH_DEPTH / 2, m = IX_BATCH_RING - 1;
    for (size_t j = 0; j < d1 && j < n; j++)
        probe_keys(idx, q[j], &ring[j & m]);
    for (size_t j = 0; j < d2 && j < n; j++)
        probe_bounds(idx, &ring[j & m]);
    for (size_t i = 0; i < n; i++) {
        if (i + d1 < n)
            probe_keys(idx, q[i + d1], &ring[(i + d1) & m]);
        if (i + d2 < n)
            probe_bounds(idx, &ring[(i + d2) & m]);
        if (probe_scan(idx, &ring[i & m], k, found, arg) || done(arg, i))
            return 1;
    }
    return 0;
}

struct query_acc {
    const struct dedup_index *idx;
    struct dedup_matches *out;
    enum dedup_code rc;
};

static int query_found(void *arg, uint64_t x, unsigned distance, uint32_t head)
{
    struct query_acc *q = arg;
    (void)x;
    for (uint32_t d = head; d != IX_NONE; d = q->idx->doc_next[d]) {
        struct dedup_matches *m = q->out;
        if (m->n == m->cap) {
            if (m->cap >= DEDUP_INDEX_MAX_QUERY_MATCHES) {
                q->rc = DEDUP_ETOOLARGE;
                return 1;
            }
            size_t cap = m->cap ? m->cap * 2 : 16;
            struct dedup_match *nv = realloc(m->v, cap * sizeof *nv);
            if (!nv) {
                q->rc = DEDUP_ENOMEM;
                return 1;
            }
            m->v = nv;
            m->cap = cap;
        }
        m->v[m->n++] = (struct dedup_match){d, distance};
    }
    return 0;
}

static int match_cmp(const void *a, const void *b)
{
    const struct dedup_match *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* A query's matches as answered: none when it failed (rc), else by distance then
 * document (match_cmp). */
static void matches_finish(struct dedup_matches *m, enum dedup_code rc)
{
    if (rc != DEDUP_OK)
        m->n = 0;
    else if (m->n > 1)
        qsort(m->v, m->n, sizeof *m->v, match_cmp);
}

void dedup_matches_release(struct dedup_matches *m)
{
    if (!m)
        return;
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* Before n queries: k within the design's, the pending adds absorbed, the tables built,
 * the lines built when due (counting these queries). */
static enum dedup_code query_ready(struct dedup_index *idx, unsigned k, uint64_t n)
{
    if (k > idx->design.k)
        return DEDUP_EINVAL;
    /* once; threads racing here store the same value (atomic: no data race) */
    if (atomic_load_explicit(&ix_probe_wide, memory_order_relaxed) < 0)
        atomic_store_explicit(&ix_probe_wide, ix_wide_fast(), memory_order_relaxed);
    enum dedup_code rc = absorb(idx);
    if (rc == DEDUP_OK)
        rc = ix_tables_ready(idx, 1);
    if (rc == DEDUP_OK) {
        idx->asked += n;
        lines_ready(idx);
    }
    return rc;
}

enum dedup_code dedup_index_query(struct dedup_index *idx, uint64_t fp, unsigned k,
                                  struct dedup_matches *out)
{
    enum dedup_code rc = query_ready(idx, k, 1);
    if (rc != DEDUP_OK)
        return rc;
    out->n = 0;
    struct query_acc acc = {idx, out, DEDUP_OK};
    struct probe_state st;
    probe_all(idx, fp, k, query_found, &acc, &st);
    matches_finish(out, acc.rc);
    probe_keep(idx, &st, acc.rc == DEDUP_OK && (!out->n || out->v[0].distance));
    return acc.rc;
}

struct nearest_acc {
    uint32_t doc;
    unsigned distance;
};

static int nearest_found(void *arg, uint64_t x, unsigned distance, uint32_t head)
{
    struct nearest_acc *n = arg;
    (void)x;
    if (distance < n->distance || (distance == n->distance && head < n->doc)) {
        n->distance = distance;
        n->doc = head;
    }
    return 0;
}

enum dedup_code dedup_index_nearest(struct dedup_index *idx, uint64_t fp, unsigned k, uint32_t *doc,
                                    unsigned *distance, int *found)
{
    *found = 0;
    enum dedup_code rc = query_ready(idx, k, 1);
    if (rc != DEDUP_OK)
        return rc;
    struct nearest_acc acc = {IX_NONE, 65};
    struct probe_state st;
    probe_all(idx, fp, k, nearest_found, &acc, &st);
    probe_keep(idx, &st, acc.distance != 0);
    if (acc.doc == IX_NONE)
        return DEDUP_OK;
    *doc = acc.doc;
    *distance = acc.distance;
    *found = 1;
    return DEDUP_OK;
}

struct nearest_many_acc {
    struct nearest_acc cur;
    uint32_t *doc;
    unsigned *distance;
    unsigned char *found;
};

static int nearest_many_found(void *arg, uint64_t x, unsigned distance, uint32_t head)
{
    return nearest_found(&((struct nearest_many_acc *)arg)->cur, x, distance, head);
}

static int nearest_many_done(void *arg, size_t i)
{
    struct nearest_many_acc *a = arg;
    a->found[i] = a->cur.doc != IX_NONE;
    a->doc[i] = a->found[i] ? a->cur.doc : 0;
    a->distance[i] = a->found[i] ? a->cur.distance : 0;
    a->cur = (struct nearest_acc){IX_NONE, 65};
    return 0;
}

enum dedup_code dedup_index_nearest_many(struct dedup_index *idx, size_t n, const uint64_t *fp,
                                         unsigned k, uint32_t *doc, unsigned *distance,
                                         unsigned char *found)
{
    if (n)
        memset(found, 0, n);
    enum dedup_code rc = query_ready(idx, k, n);
    if (rc != DEDUP_OK)
        return rc;
    struct nearest_many_acc acc = {{IX_NONE, 65}, doc, distance, found};
    probe_many(idx, n, fp, k, nearest_many_found, nearest_many_done, &acc);
    return DEDUP_OK;
}

struct query_many_acc {
    struct query_acc q;
    dedup_query_fn fn;
    void *userdata;
    int stopped;
};

static int query_many_found(void *arg, uint64_t x, unsigned distance, uint32_t head)
{
    struct query_many_acc *a = arg;
    if (a->q.rc != DEDUP_OK)
        return 0; /* this query failed: the rest of its matches are not wanted */
    query_found(&a->q, x, distance, head);
    return 0;
}

static int query_many_done(void *arg, size_t i)
{
    struct query_many_acc *a = arg;
    struct dedup_matches *m = a->q.out;
    matches_finish(m, a->q.rc);
    a->stopped = a->fn(a->userdata, i, a->q.rc, m);
    a->q.rc = DEDUP_OK;
    m->n = 0;
    return a->stopped;
}

enum dedup_code dedup_index_query_many(struct dedup_index *idx, size_t n, const uint64_t *fp,
                                       unsigned k, dedup_query_fn fn, void *userdata, int *stopped)
{
    if (stopped)
        *stopped = 0;
    enum dedup_code rc = query_ready(idx, k, n);
    if (rc != DEDUP_OK)
        return rc;
    struct dedup_matches m = {0};
    struct query_many_acc acc = {{idx, &m, DEDUP_OK}, fn, userdata, 0};
    probe_many(idx, n, fp, k, query_many_found, query_many_done, &acc);
    dedup_matches_release(&m);
    if (stopped)
        *stopped = acc.stopped;
    return DEDUP_OK;
}

uint64_t dedup_index_distinct_count(struct dedup_index *idx)
{
    if (absorb(idx) != DEDUP_OK)
        return (uint64_t)idx->nmain + idx->ndelta + (idx->ndocs - idx->absorbed);
    return (uint64_t)idx->nmain + idx->ndelta;
}

/* ---- statistics ---- */

enum dedup_code dedup_index_stats(struct dedup_index *idx, struct dedup_index_stats *st)
{
    enum dedup_code rc = absorb(idx);
    if (rc == DEDUP_OK)
        rc = ix_tables_ready(idx, 1);
    if (rc != DEDUP_OK)
        return rc;
    memset(st, 0, sizeof *st);
    st->docs = idx->ndocs;
    st->distinct = (uint64_t)idx->nmain + idx->ndelta;
    st->pending = idx->ndelta;
    st->tables = idx->ntables;
    st->dir_bits = idx->dir_bits;
    size_t nb = (size_t)1 << idx->dir_bits, total = nb * idx->ntables;
    uint64_t *sizes = malloc(total * sizeof *sizes);
    if (!sizes)
        return DEDUP_ENOMEM;
    double cand = 0;
    for (unsigned t = 0; t < idx->ntables; t++) {
        for (size_t b = 0; b < nb; b++)
            sizes[t * nb + b] = idx->dir[t][b + 1] - idx->dir[t][b];
        /* candidates a probe with an indexed fingerprint meets: sum of run sizes squared
         * over the runs of equal key, divided by n */
        unsigned kb = idx->perm[t].key_bits;
        const uint64_t *v = idx->tab[t];
        double sq = 0;
        for (uint32_t i = 0; i < idx->nmain;) {
            uint32_t e = i + 1;
            while (e < idx->nmain && ix_top(v[e], kb) == ix_top(v[i], kb))
                e++;
            sq += (double)(e - i) * (double)(e - i);
            i = e;
        }
        if (idx->nmain)
            cand += sq / idx->nmain;
    }
    st->candidates_per_probe = idx->ntables ? cand / idx->ntables : 0;
    ix_sort_u64(sizes, total);
    st->bucket_min = sizes[0];
    st->bucket_median = sizes[total / 2];
    st->bucket_p99 = sizes[(total * 99) / 100 < total ? (total * 99) / 100 : total - 1];
    st->bucket_max = sizes[total - 1];
    free(sizes);
    st->table_bytes = (uint64_t)idx->ntables * ((uint64_t)idx->nmain * 8 + (nb + 1) * 4);
    st->doc_bytes = (uint64_t)idx->ndocs * (8 + 4 + 8) + idx->id_len + (uint64_t)idx->nmain * 8;
    return DEDUP_OK;
}

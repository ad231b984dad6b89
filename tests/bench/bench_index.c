/*
 * Benchmarks of the block-permuted index (docs/BENCHMARKS.md "## Index"), all in one
 * process on the same data: fingerprints from a fixed-seed generator, 90% random and 10%
 * planted near-duplicates (a copy of an earlier fingerprint with 0..3 bits flipped).
 *
 *   all pairs at k = 3: 1M (1 and 2 threads) and 10M (2 threads), add + compact + pairs;
 *   each paper design (4, 10, 16, 20 tables): all pairs of 1M, table bytes per
 *     fingerprint, candidates per probe, and single-core query rate on a 1M and 10M index;
 *   online: query-then-add from empty to 1M (the crawler's pattern);
 *   the peer: Moz simhash-cpp's find_all algorithm (10 permuted sorted tables of every
 *     fingerprint, probe each, collect the pairs in a global hash set, one core), written
 *     here in C because its source cannot be fetched on this machine;
 *   brute force over 50K fingerprints (all n^2/2 distances).
 * Every figure is the median of --runs runs (default 5). Usage: bench_index [--runs N]
 * [--big N] (the large size, default 10000000).
 * BENCH_PEER_HUGE=1 in the environment: the peer's table buffer asks for transparent huge
 * pages as the engine's large blocks do (index.c, ix_huge_advise), to see what that is worth
 * to it. --pairs-only 1: the 1M all-pairs rows and the peer's only (then stop).
 * bench_index --peer-list FILE: the peer as a whole process on a `HEX ID` list (the input
 * of `simcrawl pairs --fingerprints FILE`): reads the hex values line by line with fgets and
 * strtoull, as simhash-cpp's simhash-find-all reads its input, runs find_all at k = 3 and
 * prints the number of distinct-value pairs (tests/bench/run.sh times it beside pairs).
 * bench_index --shape W1 W2 W3 P3 [huge|4k]: the one-call query's memory shape without the
 * index (rounds of dependent random lines over 1 GiB): this machine's floor for it.
 */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) under -D_POSIX_C_SOURCE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "dedup/dedup.h"
#include "dedup/index_int.h"

#include "tests/bench/bench.h"

static uint64_t rng;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t *gen(size_t n, uint64_t seed)
{
    uint64_t *v = malloc(n * sizeof *v);
    rng = seed;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && rnd() % 10 == 0) {
            uint64_t x = v[rnd() % i];
            unsigned d = (unsigned)(rnd() % 4);
            for (unsigned b = 0; b < d; b++)
                x ^= (uint64_t)1 << (rnd() % 64);
            v[i] = x;
        } else {
            v[i] = rnd();
        }
    }
    return v;
}

static double bench_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double bench_max(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct dedup_index *build(const uint64_t *v, size_t n, unsigned tables)
{
    struct dedup_design d;
    struct dedup_index *idx;
    if (dedup_design_choose(3, n, tables, &d) != DEDUP_OK || dedup_index_new(&d, &idx) != DEDUP_OK)
        exit(2);
    for (size_t i = 0; i < n; i++)
        if (dedup_index_add(idx, v[i], "", 0, NULL) != DEDUP_OK)
            exit(2);
    return idx;
}

static int count_pair(void *ud, uint32_t a, uint32_t b, unsigned distance)
{
    (void)a;
    (void)b;
    (void)distance;
    (*(uint64_t *)ud)++;
    return 0;
}

static double last_cpu; /* CPU seconds of the last run_pairs (all threads) */

/* add + compaction + all pairs, threads; returns wall seconds, *pairs the count */
static double run_pairs(const uint64_t *v, size_t n, unsigned tables, unsigned threads,
                        uint64_t *pairs, struct dedup_index_stats *st)
{
    double c0 = cpu_now();
    double t0 = bench_now();
    struct dedup_index *idx = build(v, n, tables);
    uint64_t c = 0;
    if (dedup_index_pairs(idx, 3, threads, 0, count_pair, &c, NULL) != DEDUP_OK)
        exit(2);
    double t = bench_now() - t0;
    last_cpu = cpu_now() - c0;
    *pairs = c;
    if (st && dedup_index_stats(idx, st) != DEDUP_OK)
        exit(2);
    dedup_index_free(idx);
    return t;
}

#define QUERY_BATCH 4096 /* fingerprints a dedup_index_nearest_many call (simcrawl query's) */

static size_t last_found; /* queries answered "found" by the last query_rate */

/* single-core queries per second against idx: half near-duplicates of v, half random;
 * batched: dedup_index_nearest_many over QUERY_BATCH at a time, else one call a query */
static double query_rate(struct dedup_index *idx, const uint64_t *v, size_t n, size_t nq,
                         int batched)
{
    uint64_t *q = malloc(nq * sizeof *q);
    uint32_t bdoc[QUERY_BATCH];
    unsigned bdist[QUERY_BATCH];
    unsigned char bfound[QUERY_BATCH];
    if (!q)
        exit(2);
    rng = 777;
    for (size_t i = 0; i < nq; i++)
        q[i] = i % 2 ? rnd() : v[rnd() % n] ^ ((uint64_t)1 << (rnd() % 64));
    uint32_t doc;
    unsigned dist;
    int hit;
    size_t found = 0;
    idx->lines_per = 0; /* the probe's lines, where the design has them, before timing too */
    if (dedup_index_nearest(idx, 0, 3, &doc, &dist, &hit) != DEDUP_OK) /* absorb before timing */
        exit(2);
    double t0 = cpu_now();
    if (batched)
        for (size_t i = 0; i < nq; i += QUERY_BATCH) {
            size_t m = nq - i < QUERY_BATCH ? nq - i : QUERY_BATCH;
            if (dedup_index_nearest_many(idx, m, q + i, 3, bdoc, bdist, bfound) != DEDUP_OK)
                exit(2);
            for (size_t j = 0; j < m; j++)
                found += bfound[j];
        }
    else
        for (size_t i = 0; i < nq; i++)
            found +=
                (size_t)(dedup_index_nearest(idx, q[i], 3, &doc, &dist, &hit) == DEDUP_OK && hit);
    double t = cpu_now() - t0; /* one thread: its CPU time, robust to a busy machine */
    free(q);
    if (found < nq / 2)
        fprintf(stderr, "bench_index: only %zu of %zu near-duplicate queries found\n", found,
                nq / 2);
    last_found = found;
    return (double)nq / t;
}

/* ---- the peer: Moz simhash-cpp find_all, in C ---- */

struct pairset {
    uint64_t *a, *b; /* a = 0 && b = 0 is empty; pairs of distinct values, a < b */
    size_t mask, n;
    int has_zero_pair;
};

static void ps_insert(struct pairset *s, uint64_t a, uint64_t b);

static void ps_grow(struct pairset *s)
{
    size_t size = s->a ? (s->mask + 1) * 2 : 1 << 16;
    struct pairset ns = {calloc(size, 8), calloc(size, 8), size - 1, 0, s->has_zero_pair};
    for (size_t i = 0; s->a && i <= s->mask; i++)
        if (s->a[i] || s->b[i])
            ps_insert(&ns, s->a[i], s->b[i]);
    free(s->a);
    free(s->b);
    *s = ns;
}

static void ps_insert(struct pairset *s, uint64_t a, uint64_t b)
{
    if (!s->a || (s->n + 1) * 2 > s->mask + 1)
        ps_grow(s);
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
    for (size_t i = (size_t)(h >> 20) & s->mask;; i = (i + 1) & s->mask) {
        if (!s->a[i] && !s->b[i]) {
            s->a[i] = a;
            s->b[i] = b;
            s->n++;
            return;
        }
        if (s->a[i] == a && s->b[i] == b)
            return;
    }
}

static int peer_huge; /* BENCH_PEER_HUGE=1: the peer's table buffer in huge pages too */

/* find_all: every table holds every fingerprint (duplicates included), sorted; pairs of
 * distinct values within k go into one global set. Returns the set size. */
IX_HOT static uint64_t moz_find_all(const uint64_t *v, size_t n, unsigned k)
{
    struct dedup_design d;
    struct dedup_index *idx;
    if (dedup_design_choose(k, n, 10, &d) != DEDUP_OK || dedup_index_new(&d, &idx) != DEDUP_OK)
        exit(2);
    uint64_t *arr = malloc(n * 8);
    if (peer_huge && arr) /* the engine's huge-page advice given to the peer too (pairs19l) */
        (void)madvise((void *)((uintptr_t)arr & ~(uintptr_t)4095),
                      (((uintptr_t)arr + n * 8 + 4095) & ~(uintptr_t)4095) -
                          ((uintptr_t)arr & ~(uintptr_t)4095),
                      MADV_HUGEPAGE);
    struct pairset s = {0};
    for (unsigned t = 0; t < idx->ntables; t++) {
        const struct ix_perm *p = &idx->perm[t];
        for (size_t i = 0; i < n; i++)
            arr[i] = ix_permute(p, v[i]);
        ix_sort_u64(arr, n);
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1;
                 j < n && ix_top(arr[j], p->key_bits) == ix_top(arr[i], p->key_bits); j++)
                if ((unsigned)__builtin_popcountll(arr[i] ^ arr[j]) <= k && arr[i] != arr[j]) {
                    uint64_t x = ix_unpermute(p, arr[i]), y = ix_unpermute(p, arr[j]);
                    ps_insert(&s, x < y ? x : y, x < y ? y : x);
                }
    }
    uint64_t r = s.n;
    free(s.a);
    free(s.b);
    free(arr);
    dedup_index_free(idx);
    return r;
}

/* distinct-value pairs within k by brute force */
IX_HOT static uint64_t brute(const uint64_t *v, size_t n, unsigned k)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            c += (unsigned)__builtin_popcountll(v[i] ^ v[j]) <= k;
    return c;
}

static int peer_list(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 2;
    }
    size_t n = 0, cap = 1 << 20;
    uint64_t *v = malloc(cap * sizeof *v);
    char line[65600];
    while (v && fgets(line, sizeof line, f)) {
        char *end;
        uint64_t x = strtoull(line, &end, 16);
        if (end == line)
            continue;
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                break;
        }
        v[n++] = x;
    }
    fclose(f);
    if (!v)
        return 2;
    printf("%llu\n", (unsigned long long)moz_find_all(v, n, 3));
    free(v);
    return 0;
}

/* CPU seconds of the crawler's pattern: query then add v[0..n), from an empty index of the
 * auto design for n; delta_per: the delta's IX_DELTA_PER (0: the default) */
static double online_cpu_per(const uint64_t *v, size_t n, unsigned delta_per)
{
    struct dedup_design d;
    struct dedup_index *idx;
    if (dedup_design_choose(3, n, 0, &d) != DEDUP_OK || dedup_index_new(&d, &idx) != DEDUP_OK)
        exit(2);
    if (delta_per)
        idx->delta_per = delta_per;
    uint32_t doc;
    unsigned dist;
    int hit;
    double s0 = cpu_now();
    for (size_t i = 0; i < n; i++) {
        if (dedup_index_nearest(idx, v[i], 3, &doc, &dist, &hit) != DEDUP_OK ||
            dedup_index_add(idx, v[i], "", 0, NULL) != DEDUP_OK)
            exit(2);
    }
    double t = cpu_now() - s0;
    dedup_index_free(idx);
    return t;
}

static double online_cpu(const uint64_t *v, size_t n)
{
    return online_cpu_per(v, n, 0);
}

/* The one-call query's memory shape without the index (--shape): a 1 GiB array (huge pages
 * asked for when huge), then per "query" a first round of w1 random lines, a second of w2
 * lines whose addresses depend on the first's values, and in p3 % of queries a third of w3
 * lines depending on the second; each query's first round depends on the previous query's
 * answer, as one call after another does. A 10M index's query is about 10 directory
 * lines, then 16-17 bucket and head lines, then for the matches first found in a table
 * t >= 1 (a fifth of bench_index's queries) table 0's directory and bucket
 * (docs/BENCHMARKS.md, q19m). dir (a power of two, 0: the whole array): the first round's
 * lines from the array's first dir bytes only, as directories of dir bytes in all would be
 * read (q19n: how much a cache-sized directory saves). Returns the best of 3 rounds of 1M,
 * CPU ns a query. */
static double shape_ns(unsigned w1, unsigned w2, unsigned w3, unsigned p3, int huge, size_t dir)
{
    const size_t bytes = (size_t)1 << 30, m = bytes / 8 - 1;
    const size_t m1 = dir >= 64 && dir <= bytes ? dir / 8 - 1 : m; /* the first round's lines */
    uint64_t *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED || w1 > 64 || w2 > 64 || w3 > 64)
        exit(2);
    madvise(a, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    rng = 99;
    for (size_t i = 0; i <= m; i++)
        a[i] = rnd();
    uint64_t sum = 0;
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
        double c0 = cpu_now();
        for (size_t q = 0; q < 1000000; q++) {
            uint64_t x[64], y = 0;
            for (unsigned t = 0; t < w1; t++)
                x[t] = a[(rnd() ^ sum) & m1];
            for (unsigned t = 0; t < w2; t++)
                y += a[(x[t % (w1 ? w1 : 1)] * (t + 1)) & m];
            if (w3 && rnd() % 100 < p3)
                for (unsigned t = 0; t < w3; t++)
                    y += a[(y * (t + 3)) & m];
            sum += (y & 1) + (w1 ? x[0] & 1 : 0);
        }
        double ns = (cpu_now() - c0) * 1e3;
        if (ns < best)
            best = ns;
    }
    munmap(a, bytes);
    if (sum == 42) /* keep the loads */
        printf(" ");
    return best;
}

int main(int argc, char **argv)
{
    int runs = 5;
    const char *ph = getenv("BENCH_PEER_HUGE");
    peer_huge = ph && strcmp(ph, "1") == 0;
    if (argc == 3 && strcmp(argv[1], "--peer-list") == 0)
        return peer_list(argv[2]);
    size_t big = 10000000, m1 = 1000000;
    int pairs_only = 0; /* --pairs-only 1: the 1M all-pairs rows and the peer's, then stop */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--big") == 0)
            big = (size_t)atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--pairs-only") == 0)
            pairs_only = atoi(argv[i + 1]) != 0;
    }
    if (argc > 5 && strcmp(argv[1], "--shape") == 0) {
        /* bench_index --shape W1 W2 W3 P3 [huge|4k [DIR_BYTES]]: the one-call query's memory
         * shape alone (shape_ns): CPU ns a query, the best of 3 rounds of 1M */
        unsigned w1 = (unsigned)atoi(argv[2]), w2 = (unsigned)atoi(argv[3]);
        unsigned w3 = (unsigned)atoi(argv[4]), p3 = (unsigned)atoi(argv[5]);
        int huge = argc <= 6 || strcmp(argv[6], "4k") != 0;
        size_t dir = argc > 7 ? (size_t)strtoull(argv[7], NULL, 10) : 0;
        if (dir & (dir - 1))
            return 2; /* a power of two */
        printf("shape %u %u %u %u%% %s dir %zu: %.0f ns a query\n", w1, w2, w3, p3,
               huge ? "huge" : "4k", dir, shape_ns(w1, w2, w3, p3, huge, dir));
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--profile") == 0) {
        /* bench_index --profile [N [THREADS]]: all pairs of N only, for perf */
        size_t pn = argc > 2 ? (size_t)atoll(argv[2]) : m1;
        unsigned pt = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
        uint64_t *v = gen(pn, 42), c;
        for (int r = 0; r < 3; r++) {
            double c0 = cpu_now();
            double w = run_pairs(v, pn, 0, pt, &c, NULL);
            printf("%.3f s wall, %.3f s cpu\n", w, cpu_now() - c0);
        }
        free(v);
        return 0;
    }
    if (argc > 5 && strcmp(argv[1], "--online-per") == 0) {
        /* bench_index --online-per N ROUNDS P1 P2 ...: the online loop (empty to N) in one
         * process, the delta's buckets of 2^P entries (IX_DELTA_PER) each way in turn a
         * round (the first way first in even rounds, last in odd ones) */
        size_t on = (size_t)atoll(argv[2]);
        int orounds = atoi(argv[3]), nw = argc - 4;
        uint64_t *v = gen(on, 42);
        for (int r = 0; r < orounds; r++) {
            for (int w0 = 0; w0 < nw; w0++) {
                int w = r % 2 ? nw - 1 - w0 : w0;
                unsigned per = (unsigned)atoi(argv[4 + w]);
                printf("round %d per %u: %.3f cpu s\n", r, per, online_cpu_per(v, on, per));
            }
        }
        free(v);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--online") == 0) {
        /* bench_index --online [N [QUERIES_INDEX [ROUNDS]]]: CPU seconds of the online loop
         * (query then add, empty to N, default 1M) and of 1M queries against an index of
         * QUERIES_INDEX fingerprints (default 10M, 0: none), ROUNDS rounds each (default 3;
         * 1 for callgrind), for comparing builds (-DIX_DELTA_FRACTION=...) in alternating
         * processes */
        size_t on = argc > 2 ? (size_t)atoll(argv[2]) : m1;
        size_t qn = argc > 3 ? (size_t)atoll(argv[3]) : big;
        int orounds = argc > 4 ? atoi(argv[4]) : 3;
        if (orounds < 1 || orounds > 99)
            orounds = 3;
        uint64_t *v = gen(on, 42);
        for (int r = 0; r < orounds; r++)
            printf("online %zu: %.3f cpu s\n", on, online_cpu(v, on));
        free(v);
        if (qn) {
            uint64_t *vb = gen(qn, 4242);
            struct dedup_index *idx = build(vb, qn, 0);
            if (ix_compact(idx, 2) != DEDUP_OK)
                return 2;
            for (int r = 0; r < orounds; r++)
                printf("queries against %zu: %.0f /s\n", qn, query_rate(idx, vb, qn, 1000000, 0));
            dedup_index_free(idx);
            free(vb);
        }
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--queries") == 0) {
        /* bench_index --queries [N [ROUNDS [LINES_MIN [paired]]]]: 1M queries against an
         * index of N fingerprints (default 10M) a round, ROUNDS rounds (default 5), one call
         * a query and batched (dedup_index_nearest_many) alternating in blocks of 50,000
         * (the same queries every way), CPU time of each summed over the round: for choosing
         * IX_BATCH_DEPTH. The probe's lines (index.c) are built at the first query; LINES_MIN
         * "-" measures the index as a caller gets it by default (no lines: the directories).
         * With "paired", the same blocks run again with the lines paused (the directories)
         * and the ratios are printed: the two ways evict each other's lines, so a process of
         * one way against main's build is the figure to quote (docs/BENCHMARKS.md, perf19h) */
        size_t qn = argc > 2 ? (size_t)atoll(argv[2]) : big;
        int rounds = argc > 3 ? atoi(argv[3]) : 5;
        uint64_t *vb = gen(qn, 4242);
        struct dedup_index *idx = build(vb, qn, 0);
        if (ix_compact(idx, 2) != DEDUP_OK)
            return 2;
        if (argc <= 4 || strcmp(argv[4], "-") != 0) { /* "-": no lines, the default */
            dedup_index_set_probe_lines(idx, 1); /* off by default: this measures them */
            if (argc > 4) /* LINES_MIN: lines from a main of this many (default IX_LINES_MIN) */
                idx->lines_min = (uint32_t)strtoul(argv[4], NULL, 10);
        }
        idx->lines_per = 0; /* lines at the first query: a long-running index's steady state */
        const size_t nq = 1000000, blk = 50000;
        uint64_t *q = malloc(nq * sizeof *q);
        uint32_t *bdoc = malloc(blk * sizeof *bdoc);
        unsigned *bdist = malloc(blk * sizeof *bdist);
        unsigned char *bfound = malloc(blk);
        if (!q || !bdoc || !bdist || !bfound)
            return 2;
        rng = 777;
        for (size_t i = 0; i < nq; i++)
            q[i] = i % 2 ? rnd() : vb[rnd() % qn] ^ ((uint64_t)1 << (rnd() % 64));
        {
            uint32_t doc;
            unsigned dist;
            int hit;
            double c0 = cpu_now(); /* the first query builds the lines, if any */
            if (dedup_index_nearest(idx, 0, 3, &doc, &dist, &hit) != DEDUP_OK)
                return 2;
            if (idx->line_of)
                printf("lines: %u bits, %.3f cpu s to build\n", idx->line_bits, cpu_now() - c0);
        }
        const int ways = /* way 1: the lines paused */
            idx->line_of && argc > 5 && strcmp(argv[5], "paired") == 0 ? 2 : 1;
        for (int r = 0; r < rounds; r++) {
            double one[2] = {0, 0}, many[2] = {0, 0};
            size_t f1[2] = {0, 0}, f2[2] = {0, 0};
            for (size_t b = 0; b < nq; b += blk)
                for (int w0 = 0; w0 < ways; w0++) {
                    int w = (int)((b / blk + (size_t)w0) % (size_t)ways); /* alternate first */
                    idx->lines_paused = w == 1;
                    uint32_t doc;
                    unsigned dist;
                    int hit;
                    double c0 = cpu_now();
                    for (size_t i = b; i < b + blk; i++)
                        f1[w] += (size_t)(dedup_index_nearest(idx, q[i], 3, &doc, &dist, &hit) ==
                                              DEDUP_OK &&
                                          hit);
                    double c1 = cpu_now();
                    for (size_t i = b; i < b + blk; i += QUERY_BATCH) {
                        size_t m = b + blk - i < QUERY_BATCH ? b + blk - i : QUERY_BATCH;
                        if (dedup_index_nearest_many(idx, m, q + i, 3, bdoc, bdist, bfound) !=
                            DEDUP_OK)
                            return 2;
                        for (size_t j = 0; j < m; j++)
                            f2[w] += bfound[j];
                    }
                    one[w] += c1 - c0;
                    many[w] += cpu_now() - c1;
                }
            idx->lines_paused = false;
            if (f1[0] != f2[0] || (ways == 2 && (f1[1] != f1[0] || f2[1] != f2[0]))) {
                fprintf(stderr, "bench_index: found %zu %zu (lines), %zu %zu (directories)\n",
                        f1[0], f2[0], f1[1], f2[1]);
                return 2;
            }
            printf("queries against %zu: one at a time %.0f /s, batched %.0f /s (%.3fx)\n", qn,
                   (double)nq / one[0], (double)nq / many[0], one[0] / many[0]);
            if (ways == 2)
                printf("  lines paused: one at a time %.0f /s, batched %.0f /s; time lines / "
                       "paused: one at a time %.3fx, batched %.3fx\n",
                       (double)nq / one[1], (double)nq / many[1], one[0] / one[1],
                       many[0] / many[1]);
            fflush(stdout);
        }
        free(q);
        free(bdoc);
        free(bdist);
        free(bfound);
        dedup_index_free(idx);
        free(vb);
        return 0;
    }
    if (runs < 1 || runs > 99)
        runs = 5;
    double t[100], cpu[100];
    uint64_t pairs = 0;
    struct dedup_index_stats st;
    uint64_t *v1 = gen(m1, 42);

    printf("%-58s %10s %12s\n", "benchmark (median of runs)", "seconds", "result");
    /* alternating rounds: ours (auto design, 1 and 2 threads; 10 tables, 1 thread) and the
     * peer, one of each per round, so a busy machine weighs on all alike; the ratios are
     * per round (ours / peer), median and range */
    double w_auto1[100], c_auto1[100], w_auto2[100], c_auto2[100], w_t10[100], c_t10[100];
    double peer_wall[100], peer[100], r_auto[100], r_t10[100], r_auto_w[100];
    uint64_t mozpairs = 0, pairs10 = 0;
    unsigned auto_tables = 0;
    for (int r = 0; r < runs; r++) {
        w_auto1[r] = run_pairs(v1, m1, 0, 1, &pairs, r ? NULL : &st);
        c_auto1[r] = last_cpu;
        if (!r)
            auto_tables = st.tables;
        w_auto2[r] = run_pairs(v1, m1, 0, 2, &pairs, NULL);
        c_auto2[r] = last_cpu;
        w_t10[r] = run_pairs(v1, m1, 10, 1, &pairs10, NULL);
        c_t10[r] = last_cpu;
        double t0 = bench_now(), c0 = cpu_now();
        mozpairs = moz_find_all(v1, m1, 3);
        peer_wall[r] = bench_now() - t0;
        peer[r] = cpu_now() - c0;
        r_auto[r] = c_auto1[r] / peer[r];
        r_auto_w[r] = w_auto1[r] / peer_wall[r];
        r_t10[r] = c_t10[r] / peer[r];
    }
#define RANGE(v) bench_min(v, runs), bench_max(v, runs)
    printf("all pairs k=3, 1M, auto design (%u tables), 1 thread %9s %10.3f %9llu pairs"
           " (cpu %.3f s, %.3f-%.3f)\n",
           auto_tables, "", bench_median(w_auto1, runs), (unsigned long long)pairs,
           bench_median(c_auto1, runs), RANGE(c_auto1));
    printf("all pairs k=3, 1M, auto design (%u tables), 2 threads %8s %10.3f %9llu pairs"
           " (cpu %.3f s)\n",
           auto_tables, "", bench_median(w_auto2, runs), (unsigned long long)pairs,
           bench_median(c_auto2, runs));
    printf("all pairs k=3, 1M, 10 tables, 1 thread %19s %10.3f %9llu pairs (cpu %.3f s, "
           "%.3f-%.3f)\n",
           "", bench_median(w_t10, runs), (unsigned long long)pairs10, bench_median(c_t10, runs),
           RANGE(c_t10));
    printf("peer: Moz find_all algorithm, 1M, 10 tables, 1 thread %4s %10.3f %9llu pairs*"
           " (cpu %.3f s, %.3f-%.3f)\n",
           "", bench_median(peer_wall, runs), (unsigned long long)mozpairs,
           bench_median(peer, runs), RANGE(peer));
    printf("  (* distinct fingerprint pairs; ours counts document pairs, identical copies too)\n");
    printf("  ours / peer, per round, cpu: auto design 1 thread %.3fx (%.3f-%.3f), wall %.3fx "
           "(%.3f-%.3f); 10 tables 1 thread %.3fx (%.3f-%.3f)\n",
           bench_median(r_auto, runs), RANGE(r_auto), bench_median(r_auto_w, runs), RANGE(r_auto_w),
           bench_median(r_t10, runs), RANGE(r_t10));
    if (pairs_only) {
        free(v1);
        return 0;
    }

    size_t nb = 50000;
    double t0 = cpu_now();
    uint64_t bp = brute(v1, nb, 3);
    double tb = cpu_now() - t0;
    printf("brute force k=3, 50K (n^2/2 distances), cpu %14s %10.3f %9llu pairs\n", "", tb,
           (unsigned long long)bp);
    printf("  brute force extrapolated to 1M: %.0f s\n", tb * 400.0);

    printf("\nper design, k=3, 1M fingerprints:\n");
    printf("%-8s %14s %14s %16s %14s\n", "tables", "pairs 1thr cpu", "bytes/fp", "cand/probe",
           "queries/s 1M");
    static const unsigned designs[] = {4, 10, 16, 20};
    for (unsigned di = 0; di < 4; di++) {
        for (int r = 0; r < runs; r++) {
            run_pairs(v1, m1, designs[di], 1, &pairs, r ? NULL : &st);
            t[r] = last_cpu;
        }
        double tp = bench_median(t, runs);
        struct dedup_index *idx = build(v1, m1, designs[di]);
        double q[100];
        for (int r = 0; r < runs; r++)
            q[r] = query_rate(idx, v1, m1, 1000000, 0);
        dedup_index_free(idx);
        printf("%-8u %14.3f %14.2f %16.3f %14.0f\n", designs[di], tp,
               (double)st.table_bytes / (double)st.distinct, st.candidates_per_probe,
               bench_median(q, runs));
    }

    printf("\nonline, query then add, from empty to 1M (auto design for 1M):\n");
    for (int r = 0; r < runs; r++)
        t[r] = online_cpu(v1, m1);
    double tq = bench_median(t, runs);
    printf("  %.3f cpu s for 1M query+add steps: %.2f M steps/s\n", tq, 1.0 / tq);
    free(v1);

    if (big) {
        uint64_t *vb = gen(big, 4242);
        printf("\n%zu fingerprints:\n", big);
        for (int r = 0; r < runs; r++) {
            t[r] = run_pairs(vb, big, 0, 2, &pairs, r ? NULL : &st);
            cpu[r] = last_cpu;
        }
        printf("all pairs k=3, auto design (%u tables), 2 threads %9s %10.3f %9llu pairs"
               " (wall %.3f-%.3f; cpu %.3f s)\n",
               st.tables, "", bench_median(t, runs), (unsigned long long)pairs, RANGE(t),
               bench_median(cpu, runs));
        printf("  table bytes per fingerprint %.2f, other bytes per document %.2f "
               "(ids empty here)\n",
               (double)st.table_bytes / (double)st.distinct,
               (double)st.doc_bytes / (double)st.docs);
        printf("%-8s %16s %16s %16s\n", "tables", "cand/probe", "queries/s 1 core", "batched /s");
        for (unsigned di = 0; di < 4; di++) {
            struct dedup_index *idx = build(vb, big, designs[di]);
            if (ix_compact(idx, 2) != DEDUP_OK || dedup_index_stats(idx, &st) != DEDUP_OK)
                return 2;
            double q[100], qb[100];
            for (int r = 0; r < runs; r++) { /* alternating: one call a query, batched */
                q[r] = query_rate(idx, vb, big, 1000000, 0);
                qb[r] = query_rate(idx, vb, big, 1000000, 1);
            }
            printf("%-8u %16.3f %16.0f %16.0f\n", designs[di], st.candidates_per_probe,
                   bench_median(q, runs), bench_median(qb, runs));
            dedup_index_free(idx);
        }
        free(vb);
    }
    return 0;
}

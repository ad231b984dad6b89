/*
 * bench_redisidx URL N BATCH ROUNDS [SINGLE]: the near-duplicate index on Redis
 * (filter/redisidx.h) against the in-process decision (filter/decide.h over dedup/index.c)
 * on the same N synthetic fingerprints (a third fresh, two thirds variants of an earlier
 * one with 0..k+2 bits flipped: ~60% near-duplicates), k 3, in the same run, ROUNDS
 * alternating rounds (median and range):
 *   - identical decisions (verdict, original, distance) page by page, i.e. identical pairs;
 *   - checks/s: in-process; Redis with check_many in batches of BATCH (pipelined) on the
 *     first N - SINGLE pages, then one check at a time on the last SINGLE (default 20000)
 *     on the same, nearly full, index;
 *   - round trips per check (the index's own count), conflicts;
 *   - Redis memory per indexed fingerprint (INFO memory used_memory after - before, over
 *     the pages added).
 * URL: a Redis the caller started for this (tests/bench/run.sh: section redis); each round
 * uses prefixes of its own (the caller throws the server away after).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/dedup.h"
#include "filter/decide.h"
#include "filter/redisidx.h"
#include "tests/bench/bench.h"

#define K 3

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct ref {
    int near;    /* 1 near, 0 new */
    uint32_t dup;   /* page number of the original */
    unsigned dist;
};

static uint32_t page_of(const char *id)
{
    const char *s = strrchr(id, '/');
    return s ? (uint32_t)strtoul(s + 1, NULL, 10) : UINT32_MAX;
}

static struct redisidx *open_ix(const char *url, const char *prefix, size_t n)
{
    char u[512], err[512];
    struct redisidx *ix = NULL;
    struct redisidx_opts o = {.k = K};
    snprintf(u, sizeof u, "%s?prefix=%s&expect=%zu&timeout=60", url, prefix, n);
    if (redisidx_open(u, &o, &ix, err, sizeof err) != REDISIDX_OK) {
        fprintf(stderr, "bench_redisidx: %s\n", err);
        exit(2);
    }
    return ix;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_redisidx URL N BATCH ROUNDS [SINGLE]\n");
        return 1;
    }
    const char *url = argv[1];
    size_t n = strtoul(argv[2], NULL, 10), batch = strtoul(argv[3], NULL, 10);
    int rounds = atoi(argv[4]);
    size_t single = argc > 5 ? strtoul(argv[5], NULL, 10) : 20000;
    if (!n || !batch || rounds < 1 || batch > 4096) {
        fprintf(stderr, "bench_redisidx: bad arguments\n");
        return 1;
    }
    if (single >= n)
        single = n / 2;
    uint64_t *fps = malloc(n * sizeof *fps);
    char *idbuf = malloc(n * 48);
    struct redisidx_page *pages = calloc(n, sizeof *pages);
    struct redisidx_result *res = calloc(batch, sizeof *res);
    struct ref *ref = calloc(n, sizeof *ref);
    double *t_in = calloc((size_t)rounds, sizeof(double));
    double *t_rb = calloc((size_t)rounds, sizeof(double));
    double *t_r1 = calloc((size_t)rounds, sizeof(double));
    double *mem = calloc((size_t)rounds, sizeof(double));
    double *rt = calloc((size_t)rounds, sizeof(double));
    double *rt1 = calloc((size_t)rounds, sizeof(double));
    if (!fps || !idbuf || !pages || !res || !ref || !t_in || !t_rb || !t_r1 || !mem || !rt ||
        !rt1) {
        fprintf(stderr, "bench_redisidx: out of memory\n");
        return 2;
    }
    uint64_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = mix(&seed);
        if (i > 0 && x % 3 != 0) {
            uint64_t fp = fps[mix(&seed) % i];
            unsigned flips = (unsigned)(mix(&seed) % (K + 3));
            for (unsigned b = 0; b < flips; b++)
                fp ^= 1ull << (mix(&seed) % 64);
            fps[i] = fp;
        } else
            fps[i] = mix(&seed);
        char *id = idbuf + i * 48;
        snprintf(id, 48, "https://host%zu.example/page/%zu", i % 1000, i);
        pages[i] = (struct redisidx_page){.id = id, .id_len = strlen(id), .fp = fps[i]};
    }
    size_t mismatches = 0, kept = 0, conflicts = 0;
    for (int r = 0; r < rounds; r++) {
        /* in-process */
        struct dedup_design des;
        struct dedup_index *idx = NULL;
        struct filter_decide *dec = NULL;
        struct filter_decide_result dr = {0};
        if (dedup_design_choose(K, n, 0, &des) != DEDUP_OK ||
            dedup_index_new(&des, &idx) != DEDUP_OK) {
            fprintf(stderr, "bench_redisidx: cannot make the index\n");
            return 2;
        }
        struct filter_decide_opts dopts = {.index = idx, .k = K, .by_id = 1};
        if (filter_decide_new(&dopts, &dec) != DEDUP_OK)
            return 2;
        double t0 = bench_now();
        kept = 0;
        for (size_t i = 0; i < n; i++) {
            struct filter_decide_page p = {.id = pages[i].id, .id_len = pages[i].id_len,
                                           .has_fp = 1, .fp = fps[i], .host = ""};
            if (filter_decide_page(dec, &p, &dr) != 0)
                return 2;
            ref[i].near = dr.verdict == FILTER_VERDICT_NEAR;
            ref[i].dup = ref[i].near ? page_of(dr.dup_id) : 0;
            ref[i].dist = dr.distance;
            kept += !ref[i].near;
        }
        t_in[r] = bench_now() - t0;
        filter_decide_result_release(&dr);
        filter_decide_free(dec);
        dedup_index_free(idx);

        /* Redis, pipelined batches */
        char prefix[32];
        snprintf(prefix, sizeof prefix, "bench%d", r);
        struct redisidx *ix = open_ix(url, prefix, n);
        struct redisidx_stats st0, st1;
        if (redisidx_stats(ix, &st0) != REDISIDX_OK)
            return 2;
        t0 = bench_now();
        size_t nb = n - single; /* then the last SINGLE one at a time, on the same index */
        for (size_t i = 0; i < nb; i += batch) {
            size_t m = nb - i < batch ? nb - i : batch;
            if (redisidx_check_many(ix, &pages[i], m, res) != REDISIDX_OK) {
                fprintf(stderr, "bench_redisidx: %s\n", redisidx_errmsg(ix));
                return 2;
            }
            for (size_t j = 0; j < m; j++) {
                const struct ref *rf = &ref[i + j];
                int near = res[j].verdict == REDISIDX_NEAR;
                if (near != rf->near ||
                    (near && (page_of(res[j].dup_id) != rf->dup || res[j].distance != rf->dist)))
                    mismatches++;
            }
        }
        t_rb[r] = bench_now() - t0;
        struct redisidx_stats stm;
        if (redisidx_stats(ix, &stm) != REDISIDX_OK)
            return 2;
        rt[r] = (double)(stm.round_trips - st0.round_trips - 1) / (double)(nb ? nb : 1);
        t0 = bench_now();
        for (size_t i = nb; i < n; i++) {
            if (redisidx_check(ix, &pages[i], &res[0]) != REDISIDX_OK) {
                fprintf(stderr, "bench_redisidx: %s\n", redisidx_errmsg(ix));
                return 2;
            }
            const struct ref *rf = &ref[i];
            int near = res[0].verdict == REDISIDX_NEAR;
            if (near != rf->near ||
                (near && (page_of(res[0].dup_id) != rf->dup || res[0].distance != rf->dist)))
                mismatches++;
        }
        t_r1[r] = bench_now() - t0;
        if (redisidx_stats(ix, &st1) != REDISIDX_OK)
            return 2;
        mem[r] = (double)(st1.used_memory - st0.used_memory) / (double)(kept ? kept : 1);
        rt1[r] = (double)(st1.round_trips - stm.round_trips - 1) / (double)(single ? single : 1);
        conflicts += st1.conflicts;
        redisidx_close(ix);
        fprintf(stderr, "round %d: in-process %.2f s, redis batched %.2f s, redis single %.2f s (%zu), %.0f bytes/fingerprint\n",
                r + 1, t_in[r], t_rb[r], t_r1[r], single, mem[r]);
    }
    double lo, hi;
#define REPORT(label, v, scale, fmt)                                                         \
    do {                                                                                     \
        for (int i = 0; i < rounds; i++)                                                     \
            v[i] = scale / v[i];                                                             \
        double med = bench_median(v, rounds);                                                \
        lo = v[0];                                                                           \
        hi = v[rounds - 1];                                                                  \
        printf(label ": " fmt " (range " fmt " - " fmt ")\n", med, lo, hi);                  \
    } while (0)
    printf("redis index vs in-process, %zu synthetic fingerprints, k %d, %zu kept, %d rounds\n",
           n, K, kept, rounds);
    printf("decisions differing from the in-process index: %zu of %zu\n", mismatches,
           n * (size_t)rounds);
    REPORT("in-process checks/s", t_in, (double)n, "%.0f");
    REPORT("redis checks/s, pipelined batches", t_rb, (double)(n - single), "%.0f");
    REPORT("redis checks/s, one at a time", t_r1, (double)single, "%.0f");
    for (int i = 0; i < rounds; i++) {
        rt[i] = 1.0 / rt[i];
        rt1[i] = 1.0 / rt1[i];
        mem[i] = 1.0 / mem[i];
    }
    REPORT("round trips per check, batched", rt, 1.0, "%.4f");
    REPORT("round trips per check, one at a time", rt1, 1.0, "%.3f");
    REPORT("redis memory per indexed fingerprint, bytes", mem, 1.0, "%.0f");
    printf("batch size %zu; conflicts (retried transactions): %zu\n", batch, conflicts);
    free(fps);
    free(idbuf);
    free(pages);
    for (size_t i = 0; i < batch; i++)
        redisidx_result_release(&res[i]);
    free(res);
    free(ref);
    free(t_in);
    free(t_rb);
    free(t_r1);
    free(mem);
    free(rt);
    free(rt1);
    return mismatches ? 3 : 0;
}

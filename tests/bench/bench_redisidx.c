/*
 * bench_redisidx URL N BATCH ROUNDS [SINGLE [BLOCKS]]: the near-duplicate index on Redis
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
 *     the pages added);
 *   - bytes sent to Redis per check (INFO stats total_net_input_bytes) and Redis's CPU
 *     per check (INFO cpu used_cpu_user + used_cpu_sys), this the only client;
 *   - Redis's own time per check in the commands the client sends (INFO commandstats,
 *     reset before each phase: WATCH, MULTI, EXEC, HGETALL, HMGET over the checks; a
 *     command run inside EXEC or a script is counted both in its own line and in its
 *     caller's, so those lines are left out of the sum: every page here has a
 *     fingerprint, so every script runs inside a check's EXEC), steadier under load than
 *     the process's CPU, which counts its event loop too; and by command (calls and us per
 *     check, on stderr with each round).
 * BLOCKS > 0: every page also carries what crawl --redis sends: a payload key (16 bytes)
 * and BLOCKS template blocks of its host (half the host's own on every page, half the
 * page's), counted in the check's transaction by the learn script.
 * bench_redisidx URL sweep HOSTS: an index written by the older template counting (HOSTS
 * hosts' t: hashes and ts: sets of 16 documents, beside 1M bucket-like keys), unswept: the
 * time of the redisidx_open() that sweeps it, its round trips, and Redis's time per SCAN
 * and per sweep script (INFO commandstats).
 * URL: a Redis the caller started for this (tests/bench/run.sh: section redis); each round
 * uses prefixes of its own (the caller throws the server away after).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis.h>
#include <xxhash.h>

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
    int near;     /* 1 near, 0 new */
    uint32_t dup; /* page number of the original */
    unsigned dist;
};

static uint32_t page_of(const char *id)
{
    const char *s = strrchr(id, '/');
    return s ? (uint32_t)strtoul(s + 1, NULL, 10) : UINT32_MAX;
}

/* The port of redis://127.0.0.1:PORT (the bench's own server). */
static int url_port(const char *url)
{
    const char *c = strrchr(url, ':');
    return c ? atoi(c + 1) : 6379;
}

/* A number of INFO section: the digits after field ("\nFIELD"), 0 when absent. */
static double info_num(redisContext *c, const char *section, const char *field)
{
    redisReply *x = redisCommand(c, "INFO %s", section);
    double v = 0;
    if (x && x->type == REDIS_REPLY_STRING) {
        char want[128];
        snprintf(want, sizeof want, "\n%s", field);
        const char *f = strstr(x->str, want);
        v = f ? strtod(f + strlen(want), NULL) : 0;
    }
    if (x)
        freeReplyObject(x);
    return v;
}

/* Redis's time in the commands the client sends since the last CONFIG RESETSTAT (INFO
 * commandstats: WATCH, MULTI, EXEC, HGETALL, HMGET; the others run inside EXEC or a
 * script, counted there too), in us per check over checks; with tag, every command's
 * calls and us per check on stderr. */
static double cmd_usec(redisContext *c, double checks, const char *tag)
{
    redisReply *x = redisCommand(c, "INFO commandstats");
    double total = 0;
    if (x && x->type == REDIS_REPLY_STRING) {
        for (const char *l = strstr(x->str, "cmdstat_"); l; l = strstr(l + 1, "\ncmdstat_")) {
            if (*l == '\n')
                l++;
            const char *name = l + 8, *colon = strchr(name, ':');
            const char *calls = colon ? strstr(colon, "calls=") : NULL;
            const char *us = colon ? strstr(colon, "usec=") : NULL;
            if (!colon || !calls || !us)
                break;
            int len = (int)(colon - name);
            static const char *const top[] = {"watch", "multi", "exec", "hgetall", "hmget"};
            double u = strtod(us + 5, NULL);
            for (size_t t = 0; t < sizeof top / sizeof *top; t++)
                if ((size_t)len == strlen(top[t]) && !strncmp(name, top[t], (size_t)len))
                    total += u;
            if (tag)
                fprintf(stderr, "  %s %.*s: %.3f calls, %.1f us per check\n", tag, len, name,
                        strtod(calls + 6, NULL) / checks, u / checks);
        }
    }
    if (x)
        freeReplyObject(x);
    return total / checks;
}

static void reset_stats(redisContext *c)
{
    redisReply *x = redisCommand(c, "CONFIG RESETSTAT");
    if (x)
        freeReplyObject(x);
}

/* Redis's CPU seconds so far (user + system). */
static double redis_cpu(redisContext *c)
{
    return info_num(c, "cpu", "used_cpu_user:") + info_num(c, "cpu", "used_cpu_sys:");
}

static redisContext *raw_connect(const char *url)
{
    struct timeval tv = {60, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", url_port(url), tv);
    if (!c || c->err) {
        fprintf(stderr, "bench_redisidx: cannot connect to %s\n", url);
        exit(2);
    }
    return c;
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

/* Sends n commands of argv[0..argc) built by fn(i, ...) in pipelines of 1,000. */
static void pipe_cmds(redisContext *c, size_t n,
                      void (*fn)(size_t i, int *argc, const char **argv, char (*buf)[64]))
{
    for (size_t i = 0; i < n; i += 1000) {
        size_t m = n - i < 1000 ? n - i : 1000;
        for (size_t j = 0; j < m; j++) {
            const char *argv[24];
            char buf[24][64];
            int argc = 0;
            fn(i + j, &argc, argv, buf);
            redisAppendCommandArgv(c, argc, argv, NULL);
        }
        for (size_t j = 0; j < m; j++) {
            void *r = NULL;
            if (redisGetReply(c, &r) != REDIS_OK) {
                fprintf(stderr, "bench_redisidx: %s\n", c->errstr);
                exit(2);
            }
            freeReplyObject(r);
        }
    }
}

/* The older layout's key what (t, ts) of host i into buf. */
static void old_key(size_t i, const char *what, char *buf)
{
    char host[32];
    snprintf(host, sizeof host, "h%zu.example", i);
    snprintf(buf, 64, "sweep:%s:%016llx", what,
             (unsigned long long)XXH3_64bits(host, strlen(host)));
}

/* The older layout: host i's counts t:XXH3 and its documents ts:XXH3 (16 members). */
static void old_t(size_t i, int *argc, const char **argv, char (*buf)[64])
{
    static const char *rest[4] = {"docs", "16", "0000000000000001", "16"};
    old_key(i, "t", buf[0]);
    argv[0] = "HSET";
    argv[1] = buf[0];
    memcpy(argv + 2, rest, sizeof rest);
    *argc = 6;
}

static void old_ts(size_t i, int *argc, const char **argv, char (*buf)[64])
{
    old_key(i, "ts", buf[0]);
    argv[0] = "SADD";
    argv[1] = buf[0];
    for (int d = 0; d < 16; d++) {
        snprintf(buf[1 + d], 64, "%016llx", (unsigned long long)(i * 16 + (size_t)d + 1));
        argv[2 + d] = buf[1 + d];
    }
    *argc = 18;
}

/* 1M other keys, as buckets are (a hash of one field each). */
static void other(size_t i, int *argc, const char **argv, char (*buf)[64])
{
    snprintf(buf[0], 64, "sweep:b:%zu:%04zx", i & 3, i >> 2);
    argv[0] = "HSET";
    argv[1] = buf[0];
    argv[2] = "1";
    argv[3] = "1";
    *argc = 4;
}

/* bench_redisidx URL sweep HOSTS */
static int sweep_main(const char *url, size_t hosts)
{
    redisContext *c = raw_connect(url);
    struct redisidx *ix = open_ix(url, "sweep", 1000000);
    redisidx_close(ix);
    pipe_cmds(c, hosts, old_t);
    pipe_cmds(c, hosts, old_ts);
    pipe_cmds(c, 1000000, other);
    redisReply *x = redisCommand(c, "DEL sweep:tsclean");
    freeReplyObject(x);
    x = redisCommand(c, "CONFIG RESETSTAT");
    freeReplyObject(x);
    double keys = 0;
    x = redisCommand(c, "DBSIZE");
    if (x && x->type == REDIS_REPLY_INTEGER)
        keys = (double)x->integer;
    freeReplyObject(x);
    double took[4096], total = 0;
    unsigned long long rts = 0;
    int opens = 0;
    for (; opens < 4096; opens++) {
        x = redisCommand(c, "GET sweep:tsclean");
        int done = x && x->type == REDIS_REPLY_STRING && !strcmp(x->str, "1");
        freeReplyObject(x);
        if (done)
            break;
        double t0 = bench_now();
        ix = open_ix(url, "sweep", 1000000);
        took[opens] = bench_now() - t0;
        total += took[opens];
        struct redisidx_stats st;
        if (redisidx_stats(ix, &st) != REDISIDX_OK)
            return 2;
        rts += st.round_trips;
        redisidx_close(ix);
    }
    double longest = 0;
    for (int i = 0; i < opens; i++)
        longest = took[i] > longest ? took[i] : longest;
    double scans = info_num(c, "commandstats", "cmdstat_scan:calls=");
    redisReply *cs = redisCommand(c, "INFO commandstats");
    double scan_per = 0, sweep_per = 0;
    const char *f = cs && cs->type == REDIS_REPLY_STRING ? strstr(cs->str, "cmdstat_scan:") : NULL;
    const char *u = f ? strstr(f, "usec_per_call=") : NULL;
    if (u)
        scan_per = strtod(u + 14, NULL);
    f = cs && cs->type == REDIS_REPLY_STRING ? strstr(cs->str, "cmdstat_evalsha:") : NULL;
    if (!f && cs && cs->type == REDIS_REPLY_STRING)
        f = strstr(cs->str, "cmdstat_eval:");
    u = f ? strstr(f, "usec_per_call=") : NULL;
    if (u)
        sweep_per = strtod(u + 14, NULL);
    freeReplyObject(cs);
    x = redisCommand(c, "EVAL %s 0", "return #redis.call('KEYS', 'sweep:ts:*')");
    long long left = x && x->type == REDIS_REPLY_INTEGER ? x->integer : -1;
    freeReplyObject(x);
    printf("sweep of an older index: %zu hosts (t: and ts: keys), %.0f keys in Redis\n", hosts,
           keys);
    printf("swept by %d opens (1 s budget each): the longest %.2f s, all %.2f s, %llu round "
           "trips, %.0f SCAN steps (%.0f us each in Redis), sweep script %.0f us a step; ts: keys "
           "left %lld\n",
           opens, longest, total, rts, scans, scan_per, sweep_per, left);
    redisFree(c);
    return left == 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[2], "sweep"))
        return sweep_main(argv[1], strtoul(argv[3], NULL, 10));
    if (argc < 5) {
        fprintf(stderr, "usage: bench_redisidx URL N BATCH ROUNDS [SINGLE [BLOCKS]]\n"
                        "       bench_redisidx URL sweep HOSTS\n");
        return 1;
    }
    const char *url = argv[1];
    size_t n = strtoul(argv[2], NULL, 10), batch = strtoul(argv[3], NULL, 10);
    int rounds = atoi(argv[4]);
    size_t single = argc > 5 ? strtoul(argv[5], NULL, 10) : 20000;
    size_t nblk = argc > 6 ? strtoul(argv[6], NULL, 10) : 0;
    if (!n || !batch || rounds < 1 || batch > 4096) {
        fprintf(stderr, "bench_redisidx: bad arguments\n");
        return 1;
    }
    if (single >= n)
        single = n / 2;
    uint64_t *fps = malloc(n * sizeof *fps);
    char *idbuf = malloc(n * 48);
    struct redisidx_page *pages = calloc(n, sizeof *pages);
    uint64_t *blk = calloc(n * (nblk ? nblk : 1), sizeof *blk);
    unsigned char *keys = malloc(n * 16);
    char *hostbuf = malloc(1000 * 24);
    struct redisidx_result *res = calloc(batch, sizeof *res);
    struct ref *ref = calloc(n, sizeof *ref);
    double *t_in = calloc((size_t)rounds, sizeof(double));
    double *t_rb = calloc((size_t)rounds, sizeof(double));
    double *t_r1 = calloc((size_t)rounds, sizeof(double));
    double *mem = calloc((size_t)rounds, sizeof(double));
    double *rt = calloc((size_t)rounds, sizeof(double));
    double *rt1 = calloc((size_t)rounds, sizeof(double));
    double *by_b = calloc((size_t)rounds, sizeof(double));
    double *by_1 = calloc((size_t)rounds, sizeof(double));
    double *cpu_b = calloc((size_t)rounds, sizeof(double));
    double *cpu_1 = calloc((size_t)rounds, sizeof(double));
    double *us_b = calloc((size_t)rounds, sizeof(double));
    double *us_1 = calloc((size_t)rounds, sizeof(double));
    if (!us_b || !us_1 || !fps || !idbuf || !pages || !res || !ref || !t_in || !t_rb || !t_r1 ||
        !mem || !rt || !rt1 || !blk || !keys || !hostbuf || !by_b || !by_1 || !cpu_b || !cpu_1) {
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
        if (!nblk)
            continue;
        char *host = hostbuf + (i % 1000) * 24;
        snprintf(host, 24, "host%zu.example", i % 1000);
        XXH128_hash_t h = XXH3_128bits(id, strlen(id));
        memcpy(keys + i * 16, &h, 16);
        for (size_t b = 0; b < nblk; b++)
            blk[i * nblk + b] = b < nblk / 2 ? ((i % 1000) << 20 | (b + 1)) : mix(&seed);
        pages[i].key = keys + i * 16;
        pages[i].key_len = 16;
        pages[i].host = host;
        pages[i].host_len = strlen(host);
        pages[i].doc_hash = i + 1;
        pages[i].blocks = blk + i * nblk;
        pages[i].n_blocks = nblk;
    }
    redisContext *raw = raw_connect(url);
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
            struct filter_decide_page p = {.id = pages[i].id,
                                           .id_len = pages[i].id_len,
                                           .has_fp = 1,
                                           .fp = fps[i],
                                           .host = ""};
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
        reset_stats(raw);
        double in0 = info_num(raw, "stats", "total_net_input_bytes:");
        double c0 = redis_cpu(raw);
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
        double in1 = info_num(raw, "stats", "total_net_input_bytes:");
        by_b[r] = (in1 - in0) / (double)(nb ? nb : 1);
        double c1 = redis_cpu(raw);
        cpu_b[r] = (c1 - c0) * 1e6 / (double)(nb ? nb : 1);
        us_b[r] = cmd_usec(raw, (double)(nb ? nb : 1), "batched");
        reset_stats(raw);
        in1 = info_num(raw, "stats", "total_net_input_bytes:");
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
        by_1[r] = (info_num(raw, "stats", "total_net_input_bytes:") - in1) /
                  (double)(single ? single : 1);
        cpu_1[r] = (redis_cpu(raw) - c1) * 1e6 / (double)(single ? single : 1);
        us_1[r] = cmd_usec(raw, (double)(single ? single : 1), "single");
        mem[r] = (double)(st1.used_memory - st0.used_memory) / (double)(kept ? kept : 1);
        rt1[r] = (double)(st1.round_trips - stm.round_trips - 1) / (double)(single ? single : 1);
        conflicts += st1.conflicts;
        redisidx_close(ix);
        fprintf(stderr,
                "round %d: in-process %.2f s, redis batched %.2f s, redis single %.2f s (%zu), "
                "%.0f bytes/fingerprint\n",
                r + 1, t_in[r], t_rb[r], t_r1[r], single, mem[r]);
    }
    double lo, hi;
/* the median and range of v[0..rounds), as they are */
#define REPORT_VALUE(label, v, fmt)                                                                \
    do {                                                                                           \
        double med = bench_median(v, rounds);                                                      \
        lo = v[0];                                                                                 \
        hi = v[rounds - 1];                                                                        \
        printf(label ": " fmt " (range " fmt " - " fmt ")\n", med, lo, hi);                        \
    } while (0)
/* the same of scale / v[i] (a rate from a time) */
#define REPORT(label, v, scale, fmt)                                                               \
    do {                                                                                           \
        for (int i = 0; i < rounds; i++)                                                           \
            v[i] = scale / v[i];                                                                   \
        REPORT_VALUE(label, v, fmt);                                                               \
    } while (0)
    printf("redis index vs in-process, %zu synthetic fingerprints, k %d, %zu kept, %d rounds%s\n",
           n, K, kept, rounds, nblk ? "" : ", no payload keys or template blocks");
    if (nblk)
        printf("each page with a 16-byte payload key and %zu template blocks of its host\n", nblk);
    printf("decisions differing from the in-process index: %zu of %zu\n", mismatches,
           n * (size_t)rounds);
    REPORT("in-process checks/s", t_in, (double)n, "%.0f");
    REPORT("redis checks/s, pipelined batches", t_rb, (double)(n - single), "%.0f");
    REPORT("redis checks/s, one at a time", t_r1, (double)single, "%.0f");
    REPORT_VALUE("round trips per check, batched", rt, "%.4f");
    REPORT_VALUE("round trips per check, one at a time", rt1, "%.3f");
    REPORT_VALUE("redis memory per indexed fingerprint, bytes", mem, "%.0f");
    REPORT_VALUE("bytes sent per check, batched", by_b, "%.0f");
    REPORT_VALUE("bytes sent per check, one at a time", by_1, "%.0f");
    REPORT_VALUE("redis cpu per check, us, batched", cpu_b, "%.1f");
    REPORT_VALUE("redis cpu per check, us, one at a time", cpu_1, "%.1f");
    REPORT_VALUE("redis time in commands per check, us, batched", us_b, "%.1f");
    REPORT_VALUE("redis time in commands per check, us, one at a time", us_1, "%.1f");
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
    free(by_b);
    free(by_1);
    free(cpu_b);
    free(cpu_1);
    free(us_b);
    free(us_1);
    free(blk);
    free(keys);
    free(hostbuf);
    redisFree(raw);
    return mismatches ? 3 : 0;
}

/*
 * bench_serve: the in-process side of the HTTP service benchmark (tests/bench/run.sh
 * section "serve", docs/BENCHMARKS.md "## HTTP service"), and the documents that the
 * service and Redis are loaded with, so that every peer gets the same ones.
 *
 *   bench_serve pages [--threads T] [--seconds S] [--index FILE] [--fsync MODE] --root DIR LIST
 *       libsimcrawl's simcrawl_filter_check() on T threads (default 2) sharing one filter
 *       for S seconds (default 5), on exactly the requests that tests/bench/serve_pages.lua
 *       makes wrk send to `simcrawl serve`: thread t's j-th check is page j % n of LIST
 *       (pages under DIR, held in memory), cycle c = j / n, id
 *       "http://cC-tT.docs.example/PATH" (PATH: the page's path under DIR; one host per
 *       cycle and thread, so that site templates learn each host once, as with one pass)
 *       and the page's bytes followed by "\n<!-- cC tT -->\n" (so that no request is an
 *       exact duplicate of another: the whole pipeline runs for every one).
 *   bench_serve memory N
 *       adds documents 0..N-1 (below) with simcrawl_filter_check_fingerprint() to an
 *       in-memory filter; prints VmRSS before and after and VmHWM (/proc/self/status),
 *       the bytes per document and the adds per second.
 *   bench_serve ndjson START COUNT
 *       documents START..START+COUNT-1 as NDJSON lines {"id":ID,"fingerprint":HEX16} for
 *       POST /v1/check.
 *   bench_serve redis mset|sadd START COUNT
 *       the same documents as Redis protocol for `redis-cli --pipe`: MSET ID FP (the id as
 *       key, the fingerprint's 8 bytes as value) or SADD fps FP (8-byte members of one
 *       set), 1000 a command.
 *
 * Document i: id "https://example.org/page/I.html", fingerprint splitmix64(i) (random:
 * nearly every one is new at k = 3).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "filter/simcrawl.h"

#include "tests/bench/bench.h"

#define MAX_PAGES 100000
#define MAX_THREADS 16
#define REDIS_BATCH 1000

/* ---- the documents ---- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static uint64_t doc_fp(uint64_t i)
{
    return splitmix64(i);
}

static int doc_id(uint64_t i, char *buf, size_t size)
{
    return snprintf(buf, size, "https://example.org/page/%" PRIu64 ".html", i);
}

/* User + system CPU seconds of this process so far. */
static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* VmRSS and VmHWM of this process in kB (0 when unreadable). */
static void proc_mem(unsigned long *rss_kb, unsigned long *hwm_kb)
{
    *rss_kb = *hwm_kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss_kb = strtoul(line + 6, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            *hwm_kb = strtoul(line + 6, NULL, 10);
    }
    fclose(f);
}

static int cmd_memory(uint64_t n)
{
    unsigned long rss0, hwm0, rss1, hwm1;
    struct simcrawl_filter *f = NULL;
    struct simcrawl_match *m = simcrawl_match_new();
    int rc = simcrawl_filter_open(&f, NULL, 3);
    if (rc != 0 || !m) {
        fprintf(stderr, "bench_serve: cannot open a filter: %s\n", simcrawl_strerror(rc));
        return 1;
    }
    proc_mem(&rss0, &hwm0);
    size_t counts[8] = {0};
    char id[64];
    double t0 = bench_now();
    for (uint64_t i = 0; i < n; i++) {
        doc_id(i, id, sizeof id);
        rc = simcrawl_filter_check_fingerprint(f, id, doc_fp(i), 0, m);
        if (rc < 0) {
            fprintf(stderr, "bench_serve: check %" PRIu64 ": %s\n", i, simcrawl_strerror(rc));
            return 1;
        }
        counts[rc & 7]++;
    }
    double dt = bench_now() - t0;
    proc_mem(&rss1, &hwm1);
    printf("library: %" PRIu64 " documents (new %zu, near %zu): VmRSS empty %lu kB, full %lu kB, "
           "VmHWM %lu kB; %.1f bytes/document (RSS), %.1f (HWM); %.0f adds/s on 1 thread\n",
           n, counts[SIMCRAWL_NEW], counts[SIMCRAWL_NEAR_DUPLICATE], rss0, rss1, hwm1,
           (double)(rss1 - rss0) * 1024.0 / (double)n, (double)(hwm1 - rss0) * 1024.0 / (double)n,
           (double)n / dt);
    simcrawl_match_free(m);
    if (simcrawl_filter_count(f) != counts[SIMCRAWL_NEW])
        fprintf(stderr, "bench_serve: the filter counts %" PRIu64 " documents\n",
                simcrawl_filter_count(f));
    simcrawl_filter_close(f);
    return 0;
}

static int cmd_ndjson(uint64_t start, uint64_t count)
{
    char id[64];
    for (uint64_t i = start; i < start + count; i++) {
        doc_id(i, id, sizeof id);
        printf("{\"id\":\"%s\",\"fingerprint\":\"%016" PRIx64 "\"}\n", id, doc_fp(i));
    }
    return fflush(stdout) != 0;
}

/* One RESP bulk string. */
static void resp_bulk(const void *s, size_t n)
{
    printf("$%zu\r\n", n);
    fwrite(s, 1, n, stdout);
    fputs("\r\n", stdout);
}

static int cmd_redis(const char *kind, uint64_t start, uint64_t count)
{
    int mset = strcmp(kind, "mset") == 0;
    if (!mset && strcmp(kind, "sadd") != 0) {
        fprintf(stderr, "bench_serve: redis mset|sadd, not %s\n", kind);
        return 1;
    }
    char id[64];
    for (uint64_t b = start; b < start + count; b += REDIS_BATCH) {
        uint64_t e = b + REDIS_BATCH < start + count ? b + REDIS_BATCH : start + count;
        if (mset) {
            printf("*%" PRIu64 "\r\n", 1 + 2 * (e - b));
            resp_bulk("MSET", 4);
        } else {
            printf("*%" PRIu64 "\r\n", 2 + (e - b));
            resp_bulk("SADD", 4);
            resp_bulk("fps", 3);
        }
        for (uint64_t i = b; i < e; i++) {
            uint64_t fp = doc_fp(i);
            if (mset) {
                int l = doc_id(i, id, sizeof id);
                resp_bulk(id, (size_t)l);
            }
            resp_bulk(&fp, sizeof fp);
        }
    }
    return fflush(stdout) != 0;
}

/* ---- pages ---- */

struct pages_job {
    const struct bench_page *pages;
    const char *const *rel; /* each page's path under the root */
    size_t n;
    unsigned t;
    struct simcrawl_filter *f;
    double deadline, end;
    size_t done, counts[8], failed;
};

static void *pages_run(void *arg)
{
    struct pages_job *j = arg;
    struct simcrawl_match *m = simcrawl_match_new();
    size_t maxlen = 0;
    for (size_t i = 0; i < j->n; i++)
        if (j->pages[i].len > maxlen)
            maxlen = j->pages[i].len;
    char *body = malloc(maxlen + 64);
    char id[4200];
    if (!m || !body) {
        j->failed++;
        goto done;
    }
    for (size_t k = 0;; k++) {
        size_t i = k % j->n, c = k / j->n;
        const struct bench_page *p = &j->pages[i];
        snprintf(id, sizeof id, "http://c%zu-t%u.docs.example/%s", c, j->t, j->rel[i]);
        memcpy(body, p->data, p->len);
        int sl = snprintf(body + p->len, 64, "\n<!-- c%zu t%u -->\n", c, j->t);
        int rc = simcrawl_filter_check(j->f, id, body, p->len + (size_t)sl, "text/html", m);
        if (rc < 0)
            j->failed++;
        else
            j->counts[rc & 7]++;
        j->done++;
        if (bench_now() >= j->deadline)
            break;
    }
done:
    j->end = bench_now();
    free(body);
    simcrawl_match_free(m);
    return NULL;
}

static int cmd_pages(int argc, char **argv)
{
    unsigned threads = 2;
    double seconds = 5;
    const char *index = NULL, *fsync = NULL, *root = NULL, *list = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc)
            index = argv[++i];
        else if (strcmp(argv[i], "--fsync") == 0 && i + 1 < argc)
            fsync = argv[++i];
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else
            list = argv[i];
    }
    if (!list || !root || threads < 1 || threads > MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: bench_serve pages [--threads T] [--seconds S] [--index FILE] "
                        "[--fsync MODE] --root DIR LIST\n");
        return 1;
    }
    struct bench_page *pages = calloc(MAX_PAGES, sizeof *pages);
    size_t bytes = 0;
    size_t n = pages ? bench_read_pages("bench_serve", list, pages, MAX_PAGES, &bytes) : 0;
    if (n == 0)
        return 1;
    const char **rel = calloc(n, sizeof *rel);
    size_t rl = strlen(root);
    for (size_t i = 0; rel && i < n; i++) {
        const char *p = pages[i].path;
        rel[i] = strncmp(p, root, rl) == 0 && p[rl] == '/' ? p + rl + 1 : p;
    }
    struct simcrawl_options *o = simcrawl_options_new();
    struct simcrawl_filter *f = NULL;
    int rc = !o || !rel ? SIMCRAWL_ENOMEM : 0;
    if (rc == 0 && fsync)
        rc = simcrawl_options_set_fsync(o, fsync);
    if (rc == 0)
        rc = simcrawl_filter_open_opts(&f, index, o);
    simcrawl_options_free(o);
    if (rc != 0) {
        fprintf(stderr, "bench_serve: cannot open the filter: %s\n", simcrawl_strerror(rc));
        return 1;
    }
    struct pages_job jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    double c0 = cpu_seconds(), t0 = bench_now();
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (struct pages_job){
            .pages = pages, .rel = rel, .n = n, .t = t, .f = f, .deadline = t0 + seconds};
        if (pthread_create(&tid[t], NULL, pages_run, &jobs[t]) != 0) {
            fprintf(stderr, "bench_serve: cannot start a thread\n");
            return 1;
        }
    }
    size_t done = 0, failed = 0, counts[8] = {0};
    double end = t0;
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        done += jobs[t].done;
        failed += jobs[t].failed;
        for (int k = 0; k < 8; k++)
            counts[k] += jobs[t].counts[k];
        if (jobs[t].end > end)
            end = jobs[t].end;
    }
    double cpu = cpu_seconds() - c0;
    rc = simcrawl_filter_close(f);
    printf("library: %zu checks in %.3f s, %.1f pages/s, %u threads, %.0f CPU us/page, %zu pages "
           "(%.1f MB); new %zu, near %zu, exact %zu, short %zu, not html %zu, errors %zu\n",
           done, end - t0, (double)done / (end - t0), threads, cpu * 1e6 / (double)done, n,
           (double)bytes / 1e6, counts[SIMCRAWL_NEW], counts[SIMCRAWL_NEAR_DUPLICATE],
           counts[SIMCRAWL_EXACT_DUPLICATE], counts[SIMCRAWL_TOO_SHORT], counts[SIMCRAWL_NOT_HTML],
           failed);
    free(rel);
    bench_pages_free(pages, n);
    free(pages);
    return rc != 0 || failed != 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "pages") == 0)
        return cmd_pages(argc - 2, argv + 2);
    if (argc == 3 && strcmp(argv[1], "memory") == 0)
        return cmd_memory(strtoull(argv[2], NULL, 10));
    if (argc == 4 && strcmp(argv[1], "ndjson") == 0)
        return cmd_ndjson(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
    if (argc == 5 && strcmp(argv[1], "redis") == 0)
        return cmd_redis(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
    fprintf(stderr, "usage: bench_serve pages [options] --root DIR LIST | memory N | "
                    "ndjson START COUNT | redis mset|sadd START COUNT\n");
    return 1;
}

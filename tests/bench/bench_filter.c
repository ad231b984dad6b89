/*
 * bench_filter: libsimcrawl's check rate against its stateless fingerprint on the same
 * pages held in memory, 1 and 2 threads, in one run (docs/BENCHMARKS.md "## libsimcrawl";
 * issue 13: "the decision is free").
 *
 *   fingerprint  simcrawl_fingerprint() on every page: extract + tokens + features +
 *                simhash, what `simcrawl fingerprint` does per page, no state
 *   check        simcrawl_filter_check() on every page against one in-memory filter
 *                (templates on, the default): the same pipeline plus the host's template
 *                blocks, the exact-payload and id maps, the near-duplicate lookup and the
 *                add under the filter's lock
 *   check, no templates   the same with simcrawl_options_set_templates(o, 0): what the
 *                template table costs
 *   check, minhash  the check of a minhash filter (simcrawl_options_set_method(o,
 *                "minhash"), threshold 0.8, templates on): the same pipeline's token string
 *                made a 128-value MinHash signature of 5-word shingles, looked up in and
 *                added to the LSH index (issue 16); its ratio to the simhash check is
 *                printed after each thread count
 *
 * With T threads the pages are dealt round-robin to T threads sharing one filter. Each row
 * runs --runs times (default 5) with a new filter each time; the median is reported, with
 * the check/fingerprint ratio at the same thread count.
 * usage: bench_filter [--runs N] LIST   (LIST: a file naming one HTML page a line)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter/simcrawl.h"

#include "tests/bench/bench.h"

#define MAX_PAGES 100000
#define MAX_RUNS 101

struct job {
    const struct bench_page *pages;
    char *const *ids; /* a URL per page: the filter keys site templates by its host */
    size_t n, start, step;
    struct simcrawl_filter *f; /* NULL: fingerprint only */
    size_t counts[8];
    int failed;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    struct simcrawl_match *m = j->f ? simcrawl_match_new() : NULL;
    for (size_t i = j->start; i < j->n; i += j->step) {
        const struct bench_page *p = &j->pages[i];
        int rc;
        if (j->f) {
            rc = simcrawl_filter_check(j->f, j->ids[i], p->data, p->len, "text/html", m);
        } else {
            uint64_t fp;
            rc = simcrawl_fingerprint(p->data, p->len, "text/html", &fp);
        }
        if (rc < 0)
            j->failed++;
        else if (rc < 8)
            j->counts[rc]++;
    }
    simcrawl_match_free(m);
    return NULL;
}

/* One timed pass with threads threads; with_filter 1: check against a new filter, 2: the
 * same without site templates, 3: a minhash filter, 0: fingerprint only. Returns
 * seconds, or -1. counts (8 entries) gets the decisions of the pass. */
static double pass(const struct bench_page *pages, char *const *ids, size_t n,
                   unsigned threads, int with_filter, size_t counts[8])
{
    struct simcrawl_filter *f = NULL;
    if (with_filter) {
        struct simcrawl_options *o = simcrawl_options_new();
        int rc = !o || simcrawl_options_set_templates(o, with_filter != 2) != 0 ||
                 (with_filter == 3 && simcrawl_options_set_method(o, "minhash") != 0) ||
                 simcrawl_filter_open_opts(&f, NULL, o) != 0;
        simcrawl_options_free(o);
        if (rc)
            return -1;
    }
    struct job jobs[2];
    pthread_t tid[2];
    memset(jobs, 0, sizeof jobs);
    double t0 = bench_now();
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (struct job){.pages = pages, .ids = ids, .n = n, .start = t, .step = threads,
                               .f = f};
        if (pthread_create(&tid[t], NULL, run_job, &jobs[t]) != 0)
            return -1;
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double dt = bench_now() - t0;
    memset(counts, 0, 8 * sizeof counts[0]);
    for (unsigned t = 0; t < threads; t++)
        for (int k = 0; k < 8; k++)
            counts[k] += jobs[t].counts[k];
    if (simcrawl_filter_close(f) != 0)
        return -1;
    return dt;
}

int main(int argc, char **argv)
{
    int runs = 5;
    const char *list = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else
            list = argv[i];
    }
    if (!list || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_filter [--runs N] LIST\n");
        return 1;
    }
    struct bench_page *pages = calloc(MAX_PAGES, sizeof *pages);
    size_t bytes = 0;
    size_t n = pages ? bench_read_pages("bench_filter", list, pages, MAX_PAGES, &bytes) : 0;
    if (n == 0)
        return 1; /* bench_read_pages said why (or calloc failed) */
    char **ids = calloc(n, sizeof *ids);
    for (size_t i = 0; ids && i < n; i++) {
        size_t l = strlen(pages[i].path) + sizeof "http://docs.example/";
        if ((ids[i] = malloc(l)) == NULL) {
            fprintf(stderr, "bench_filter: out of memory\n");
            return 1;
        }
        snprintf(ids[i], l, "http://docs.example/%s", pages[i].path);
    }
    if (!ids) {
        fprintf(stderr, "bench_filter: out of memory\n");
        return 1;
    }
    double mb = (double)bytes / 1e6;
    printf("%zu pages, %.1f MB, median of %d runs\n", n, mb, runs);
    printf("%-40s %9s %9s %9s   %s\n", "stage", "seconds", "pages/s", "ratio", "decisions");
    double fp_median[3] = {0}, check_median[3] = {0}, mh_median[3] = {0};
    for (unsigned threads = 1; threads <= 2; threads++) {
        for (int with_filter = 0; with_filter <= 3; with_filter++) {
            double t[MAX_RUNS];
            size_t counts[8];
            for (int r = 0; r < runs; r++) {
                t[r] = pass(pages, ids, n, threads, with_filter, counts);
                if (t[r] < 0) {
                    fprintf(stderr, "bench_filter: a pass failed\n");
                    return 1;
                }
            }
            qsort(t, (size_t)runs, sizeof t[0], bench_cmp_double);
            double med = t[runs / 2];
            char name[64];
            snprintf(name, sizeof name, "%s, %u thread%s",
                     with_filter == 0   ? "simcrawl_fingerprint"
                     : with_filter == 1 ? "simcrawl_filter_check"
                     : with_filter == 2 ? "filter_check, no templates"
                                        : "filter_check, minhash",
                     threads, threads > 1 ? "s" : "");
            if (!with_filter)
                fp_median[threads] = med;
            if (with_filter == 1)
                check_median[threads] = med;
            if (with_filter == 3)
                mh_median[threads] = med;
            printf("%-40s %9.3f %9.0f %9.3f   ", name, med, (double)n / med,
                   med / fp_median[threads]);
            if (with_filter)
                printf("new %zu, near %zu, exact %zu, short %zu, not html %zu", counts[0],
                       counts[1], counts[2], counts[3], counts[4]);
            else
                printf("fingerprinted %zu, short %zu, not html %zu", counts[0], counts[3],
                       counts[4]);
            printf("\n");
        }
        printf("%-40s %9s %9s %9.3f   (pages/s: minhash check / simhash check)\n",
               "minhash / simhash check", "", "", check_median[threads] / mh_median[threads]);
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    bench_pages_free(pages, n);
    free(pages);
    return 0;
}

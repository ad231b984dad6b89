#ifndef TESTS_BENCH_BENCH_H
#define TESTS_BENCH_BENCH_H
/*
 * What every benchmark program of tests/bench/ needs: a monotonic clock, sorting and the
 * median of timings, and reading a page into memory. Header-only (static inline): each
 * bench_NAME.c is its own program (Makefile: tests/bench/bench_NAME.c ->
 * $(BUILD)/bench/bench_NAME).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* qsort comparator for doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n >= 1; sorts v): the middle value, or the mean of the two
 * middle values when n is even. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The whole of a regular file in a new buffer (caller frees), its size in *len; NULL when
 * it cannot be read. */
static inline char *bench_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        *len = (size_t)n;
    return buf;
}

/* A page held in memory: its bytes and the path it was read from. */
struct bench_page {
    char *data;
    size_t len;
    char *path;
};

/* Reads the pages that the file list names (one path a line, blank lines skipped) into
 * pages[0..n), at most max of them. Returns n >= 1 with their total size in *bytes, or 0
 * after a message on stderr under prog's name (the list or a page cannot be read, or the
 * list names none). Release with bench_pages_free(). */
static inline size_t bench_read_pages(const char *prog, const char *list,
                                      struct bench_page *pages, size_t max, size_t *bytes)
{
    FILE *lf = fopen(list, "r");
    if (!lf) {
        fprintf(stderr, "%s: cannot open %s\n", prog, list);
        return 0;
    }
    size_t n = 0;
    int failed = 0;
    *bytes = 0;
    char path[4096];
    while (n < max && fgets(path, sizeof path, lf)) {
        path[strcspn(path, "\n")] = '\0';
        if (!path[0])
            continue;
        pages[n].path = strdup(path);
        pages[n].data = pages[n].path ? bench_slurp(path, &pages[n].len) : NULL;
        if (!pages[n].data) {
            fprintf(stderr, "%s: cannot read %s\n", prog, path);
            free(pages[n].path);
            failed = 1;
            break;
        }
        *bytes += pages[n].len;
        n++;
    }
    fclose(lf);
    if (failed || n == 0) {
        if (!failed)
            fprintf(stderr, "%s: %s names no pages\n", prog, list);
        for (size_t i = 0; i < n; i++) {
            free(pages[i].data);
            free(pages[i].path);
        }
        return 0;
    }
    return n;
}

static inline void bench_pages_free(struct bench_page *pages, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(pages[i].data);
        free(pages[i].path);
    }
}

#endif /* TESTS_BENCH_BENCH_H */

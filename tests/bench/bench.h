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

#endif /* TESTS_BENCH_BENCH_H */

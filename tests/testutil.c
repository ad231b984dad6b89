/*
 * Small helpers shared by the CUnit suites (tests/testutil.h): reading a fixture file
 * whole. Reads in growing chunks, so a file whose size changes while it is read, or a
 * pipe, still comes back whole.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

unsigned test_each_record(const char *path, const char *type, unsigned nfields,
                          void (*fn)(char **fields, void *userdata), void *userdata)
{
    size_t len, tl = strlen(type);
    char *data = test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    unsigned n = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, type, tl) != 0 || line[tl] != '\t')
            continue;
        char *f[8], *p = line + tl + 1;
        unsigned nf = 0;
        for (;;) {
            if (nf < 8)
                f[nf] = p;
            nf++;
            char *t = strchr(p, '\t');
            if (!t)
                break;
            *t = '\0';
            p = t + 1;
        }
        CU_ASSERT(nf == nfields);
        if (nf == nfields) {
            fn(f, userdata);
            n++;
        }
    }
    free(data);
    return n;
}

void tu_fmt_i(char *buf, size_t cap, long long v)
{
    snprintf(buf, cap, "%lld", v);
}

void tu_fmt_u(char *buf, size_t cap, unsigned long long v)
{
    if (v > 0xffff)
        snprintf(buf, cap, "%llu (0x%llx)", v, v);
    else
        snprintf(buf, cap, "%llu", v);
}

void tu_fmt_d(char *buf, size_t cap, double v)
{
    snprintf(buf, cap, "%.17g", v);
}

void tu_fmt_p(char *buf, size_t cap, const volatile void *v)
{
    snprintf(buf, cap, "%p", (const void *)v);
}

void tu_assert_eq(int ok, char *msg, size_t cap, const char *expr, const char *a,
                  const char *b, unsigned line, const char *file, int fatal)
{
    if (ok)
        snprintf(msg, cap, "%s", expr);
    else
        snprintf(msg, cap, "%s (%s vs %s)", expr, a, b);
    /* CUnit copies the message into its failure record */
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, file, "", fatal ? CU_TRUE : CU_FALSE);
}

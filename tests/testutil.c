/*
 * Small helpers shared by the CUnit suites (tests/testutil.h): reading a fixture file
 * whole. Reads in growing chunks, so a file whose size changes while it is read, or a
 * pipe, still comes back whole.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>

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

#ifndef TESTS_TESTUTIL_H
#define TESTS_TESTUTIL_H
/*
 * Small helpers shared by the CUnit suites of tests/ (linked into build/test_runner).
 */
#include <stddef.h>

/* The whole of the file at path in a new buffer with a NUL after its last byte (caller
 * frees with free()), its size without the NUL in *len; NULL when it cannot be opened or
 * memory runs out. */
char *test_slurp(const char *path, size_t *len);

#endif

#ifndef TESTS_FAILALLOC_H
#define TESTS_FAILALLOC_H
/*
 * Allocation failure on demand, for the out-of-memory tests (tests/test_nomem.c), as
 * curl's torture tests and jq's inject_errors do it. build/test_runner is linked with
 * -Wl,--wrap for malloc, calloc, realloc, strdup and strndup, so every call the project's
 * own code makes (the libraries are linked in statically) goes through the wrappers in
 * tests/failalloc.c; calls inside shared libraries (libxml2, libcurl, CUnit) do not.
 *
 * failalloc_arm(n): the n-th allocation from now fails (returns NULL, errno ENOMEM), and
 * only that one; failalloc_arm(0) disarms. Counting is atomic (the index's threads
 * allocate too). The usual loop (failalloc_each in test_nomem.c): for n = 1, 2, ... run
 * the call with allocation n failing until a run completes without reaching n.
 */
#include <stdbool.h>

void failalloc_arm(unsigned long n);
bool failalloc_fired(void);         /* did the armed allocation fail? */
unsigned long failalloc_seen(void); /* allocations counted since the last arm */

#endif

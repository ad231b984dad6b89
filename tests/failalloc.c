/*
 * The allocation wrappers behind tests/failalloc.h: __wrap_malloc and friends count each
 * call while armed and fail the chosen one; the real allocator (__real_*, which under
 * make asan is AddressSanitizer's) does the rest. FAILALLOC_TRACE=1 in the environment
 * prints the stack of each failing allocation (addr2line -e build/test_runner turns the
 * addresses into lines).
 */
#define _GNU_SOURCE /* strndup */
#include "tests/failalloc.h"

#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_ulong target; /* 0: disarmed */
static atomic_ulong count;
static atomic_bool fired;

void failalloc_arm(unsigned long n)
{
    atomic_store(&target, 0);
    atomic_store(&count, 0);
    atomic_store(&fired, false);
    atomic_store(&target, n);
}

bool failalloc_fired(void)
{
    return atomic_load(&fired);
}

unsigned long failalloc_seen(void)
{
    return atomic_load(&count);
}

/* true when this allocation is the one to fail */
static bool fail_now(void)
{
    unsigned long t = atomic_load(&target);
    if (!t)
        return false;
    if (atomic_fetch_add(&count, 1) + 1 != t)
        return false;
    atomic_store(&fired, true);
    if (getenv("FAILALLOC_TRACE")) { /* where the failing allocation was made */
        void *frames[16];
        int n = backtrace(frames, 16);
        backtrace_symbols_fd(frames, n, STDERR_FILENO);
    }
    errno = ENOMEM;
    return true;
}

void *__wrap_malloc(size_t size)
{
    return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    return fail_now() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = __wrap_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

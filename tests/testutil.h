#ifndef TESTS_TESTUTIL_H
#define TESTS_TESTUTIL_H
/*
 * Small helpers shared by the CUnit suites of tests/ (linked into build/test_runner).
 */
#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdio.h>

/* The whole of the file at path in a new buffer with a NUL after its last byte (caller
 * frees with free()), its size without the NUL in *len; NULL when it cannot be opened or
 * memory runs out. */
char *test_slurp(const char *path, size_t *len);

/* Calls fn(fields, userdata) for each line of the TAB-separated file at path (the golden
 * vectors' layout, docs/FINGERPRINT.md section 8) whose first field is type and which has
 * exactly nfields fields after it (at most 8): fields[0 .. nfields) are those, NUL-ended,
 * valid during the call. Returns how many lines it called fn for; a line of that type with
 * another number of fields is a test failure. A file that cannot be read fails fatally. */
unsigned test_each_record(const char *path, const char *type, unsigned nfields,
                          void (*fn)(char **fields, void *userdata), void *userdata);

/*
 * ASSERT_EQ(actual, expected) and ASSERT_EQ_FATAL: CU_ASSERT_EQUAL that says what both
 * sides were when they differ (libuv's ASSERT_EQ): "dedup_index_doc_count(idx) == 6000
 * (5999 vs 6000)". Each side is evaluated once. The comparison is the one CU_ASSERT_EQUAL
 * makes, on the two values (__auto_type, so arrays decay as they do in ==); the warning
 * about comparing signed and unsigned variables is silenced inside the macro, because the
 * sides were expressions (often constants) where CU_ASSERT_EQUAL compared them.
 */
void tu_fmt_i(char *buf, size_t cap, long long v);
void tu_fmt_u(char *buf, size_t cap, unsigned long long v);
void tu_fmt_d(char *buf, size_t cap, double v);
void tu_fmt_p(char *buf, size_t cap, const volatile void *v);
void tu_assert_eq(int ok, char *msg, size_t cap, const char *expr, const char *a, const char *b,
                  unsigned line, const char *file, int fatal);

#define TU_FMT(buf, x)                                                                             \
    _Generic((x), _Bool                                                                            \
             : tu_fmt_i, char                                                                      \
             : tu_fmt_i, signed char                                                               \
             : tu_fmt_i, short                                                                     \
             : tu_fmt_i, int                                                                       \
             : tu_fmt_i, long                                                                      \
             : tu_fmt_i, long long                                                                 \
             : tu_fmt_i, unsigned char                                                             \
             : tu_fmt_u, unsigned short                                                            \
             : tu_fmt_u, unsigned                                                                  \
             : tu_fmt_u, unsigned long                                                             \
             : tu_fmt_u, unsigned long long                                                        \
             : tu_fmt_u, float                                                                     \
             : tu_fmt_d, double                                                                    \
             : tu_fmt_d, default                                                                   \
             : tu_fmt_p)(buf, sizeof buf, x)

#define TU_ASSERT_EQ(actual, expected, fatal)                                                      \
    do {                                                                                           \
        __auto_type tu_a_ = (actual);                                                              \
        __auto_type tu_b_ = (expected);                                                            \
        _Pragma("GCC diagnostic push")                                                             \
            _Pragma("GCC diagnostic ignored \"-Wsign-compare\"") int tu_ok_ = tu_a_ == tu_b_;      \
        _Pragma("GCC diagnostic pop") char tu_x_[48] = "", tu_y_[48] = "", tu_m_[640];             \
        if (!tu_ok_) {                                                                             \
            TU_FMT(tu_x_, tu_a_);                                                                  \
            TU_FMT(tu_y_, tu_b_);                                                                  \
        }                                                                                          \
        tu_assert_eq(tu_ok_, tu_m_, sizeof tu_m_, #actual " == " #expected, tu_x_, tu_y_,          \
                     __LINE__, __FILE__, fatal);                                                   \
    } while (0)
#define ASSERT_EQ(actual, expected) TU_ASSERT_EQ(actual, expected, 0)
#define ASSERT_EQ_FATAL(actual, expected) TU_ASSERT_EQ(actual, expected, 1)

#endif

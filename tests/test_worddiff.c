/*
 * The word diff (dedup/worddiff.h) of the cluster report: runs that rebuild both texts,
 * a shortest script (checked against the LCS by dynamic programming on random texts), the
 * edit cap, empty and whitespace-only texts.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/worddiff.h"
#include "tests/testutil.h"

/* The words of one side rebuilt from the runs, joined by one space. */
static void rebuild(const struct dedup_word_diff *d, int side_b, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t r = 0; r < d->nruns; r++) {
        const struct dedup_diff_run *run = &d->runs[r];
        if (run->op == (side_b ? DEDUP_DIFF_DELETE : DEDUP_DIFF_INSERT))
            continue;
        for (size_t i = 0; i < run->n; i++) {
            const struct dedup_word *w = side_b ? &d->wb[run->b + i] : &d->wa[run->a + i];
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? " " : "", (int)w->len, w->p);
        }
    }
}

static void check_pair(const char *a, const char *b, size_t want_edits)
{
    struct dedup_word_diff d;
    char ra[4096], rb[4096], na[4096], nb[4096];
    ASSERT_EQ_FATAL(dedup_word_diff(a, strlen(a), b, strlen(b), 1000, &d), DEDUP_OK);
    rebuild(&d, 0, ra, sizeof ra);
    rebuild(&d, 1, rb, sizeof rb);
    /* the texts with their spacing normalised */
    size_t o = 0;
    na[0] = nb[0] = '\0';
    for (size_t i = 0; i < d.na; i++)
        o += (size_t)snprintf(na + o, sizeof na - o, "%s%.*s", i ? " " : "", (int)d.wa[i].len,
                              d.wa[i].p);
    o = 0;
    for (size_t i = 0; i < d.nb; i++)
        o += (size_t)snprintf(nb + o, sizeof nb - o, "%s%.*s", i ? " " : "", (int)d.wb[i].len,
                              d.wb[i].p);
    CU_ASSERT_STRING_EQUAL(ra, na);
    CU_ASSERT_STRING_EQUAL(rb, nb);
    ASSERT_EQ(d.shared + d.deleted, d.na);
    ASSERT_EQ(d.shared + d.inserted, d.nb);
    ASSERT_EQ(d.deleted + d.inserted, want_edits);
    for (size_t r = 1; r < d.nruns; r++)
        CU_ASSERT(d.runs[r].op != d.runs[r - 1].op);
    dedup_word_diff_release(&d);
}

static void test_worddiff_small(void)
{
    check_pair("a b c d", "a b c d", 0);
    check_pair("  a\tb\n\nc d ", "a b c d", 0); /* spacing is not a difference */
    check_pair("a b c d", "a x c d e", 3);
    check_pair("", "one two", 2);
    check_pair("one two", " \n ", 2);
    check_pair("", "", 0);
    check_pair("x a b c", "a b c x", 2);
    check_pair("the quick brown fox jumps", "the slow brown dog jumps high", 5);
    struct dedup_word_diff d;
    ASSERT_EQ(dedup_word_diff("a b", 3, "a b", 3, 0, &d), DEDUP_OK); /* no edit needed */
    ASSERT_EQ(d.nruns, 1);
    ASSERT_EQ(d.runs[0].op, DEDUP_DIFF_EQUAL);
    dedup_word_diff_release(&d);
    dedup_word_diff_release(NULL);
}

static void test_worddiff_cap(void)
{
    struct dedup_word_diff d;
    ASSERT_EQ(dedup_word_diff("a b c", 5, "x y z", 5, 5, &d), DEDUP_ETOOLARGE);
    dedup_word_diff_release(&d);
    ASSERT_EQ(dedup_word_diff("a b c", 5, "x y z", 5, 6, &d), DEDUP_OK);
    ASSERT_EQ(d.deleted + d.inserted, 6);
    dedup_word_diff_release(&d);
    /* too many words */
    size_t n = (DEDUP_DIFF_MAX_WORDS + 1) * 2;
    char *big = malloc(n + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    for (size_t i = 0; i < n; i += 2) {
        big[i] = 'w';
        big[i + 1] = ' ';
    }
    big[n] = '\0';
    ASSERT_EQ(dedup_word_diff(big, n, "w", 1, 10, &d), DEDUP_ETOOLARGE);
    dedup_word_diff_release(&d);
    free(big);
}

/* Random texts over a 4-word alphabet: the edit count must be n + m - 2 LCS. */
static void test_worddiff_random_shortest(void)
{
    static const char *const voc[] = {"a", "bb", "c", "dd"};
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        char a[512], b[512];
        int wa[60], wb[60];
        size_t n = (size_t)(rand_r(&seed) % 40), m = (size_t)(rand_r(&seed) % 40), o = 0;
        a[0] = b[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            wa[i] = rand_r(&seed) % 4;
            o += (size_t)snprintf(a + o, sizeof a - o, "%s ", voc[wa[i]]);
        }
        o = 0;
        for (size_t i = 0; i < m; i++) {
            /* b is a mutated copy of a most of the time, so the diff has long runs */
            wb[i] = (i < n && rand_r(&seed) % 4) ? wa[i] : rand_r(&seed) % 4;
            o += (size_t)snprintf(b + o, sizeof b - o, "%s\n", voc[wb[i]]);
        }
        static unsigned short L[61][61];
        for (size_t i = 0; i <= n; i++)
            for (size_t j = 0; j <= m; j++)
                L[i][j] = (i == 0 || j == 0) ? 0
                          : wa[i - 1] == wb[j - 1]
                              ? (unsigned short)(L[i - 1][j - 1] + 1)
                              : (L[i - 1][j] > L[i][j - 1] ? L[i - 1][j] : L[i][j - 1]);
        check_pair(a, b, n + m - 2u * L[n][m]);
    }
}

extern void test_worddiff_register(void);
void test_worddiff_register(void)
{
    CU_pSuite s = CU_add_suite("worddiff", NULL, NULL);
    CU_add_test(s, "test_worddiff_small", test_worddiff_small);
    CU_add_test(s, "test_worddiff_cap", test_worddiff_cap);
    CU_add_test(s, "test_worddiff_random_shortest", test_worddiff_random_shortest);
}

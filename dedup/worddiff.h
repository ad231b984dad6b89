#ifndef DEDUP_WORDDIFF_H
#define DEDUP_WORDDIFF_H
/*
 * dedup/worddiff: why two near-duplicates matched, in words. A word diff of two texts
 * (words: maximal runs of bytes other than ASCII space, tab, CR, LF, FF, VT; compared
 * byte for byte) as runs of shared words, words only in A and words only in B, in text
 * order, for the cluster report (`simcrawl clusters --format html`).
 *
 * HOW IT WORKS: the common prefix and suffix are taken off, and the rest goes through
 * Myers' greedy O((N+M)D) shortest-edit-script algorithm (E. W. Myers, "An O(ND)
 * difference algorithm and its variations", Algorithmica 1, 1986), keeping each round's
 * furthest-reaching diagonals to walk the path back. Near-duplicates differ in few words,
 * so D is small; a pair that needs more than max_edits insertions and deletions is
 * refused (DEDUP_ETOOLARGE) rather than diffed in O(D^2) memory. Returns as the rest of
 * dedup/ does (the conventions in dedup.h, after enum dedup_code).
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"

#define DEDUP_DIFF_MAX_WORDS 200000u /* words of one text a diff accepts */

struct dedup_word {
    const char *p; /* into the caller's text */
    uint32_t len;
    uint32_t hash;
};

enum dedup_diff_op {
    DEDUP_DIFF_EQUAL = 0, /* words a[a..a+n) equal b[b..b+n) */
    DEDUP_DIFF_DELETE,    /* words a[a..a+n) only in A */
    DEDUP_DIFF_INSERT,    /* words b[b..b+n) only in B */
};

struct dedup_diff_run {
    enum dedup_diff_op op;
    size_t a, b, n; /* start in A's words, start in B's words, number of words */
};

/* A diff. Words point into the texts given to dedup_word_diff(), which must outlive it. */
struct dedup_word_diff {
    struct dedup_word *wa, *wb;
    size_t na, nb;
    struct dedup_diff_run *runs; /* in text order; adjacent runs differ in op */
    size_t nruns;
    size_t shared, deleted, inserted; /* words in EQUAL, DELETE, INSERT runs */
};

/*
 * The word diff of a[0..alen) and b[0..blen) into *out (zeroed first; release with
 * dedup_word_diff_release(), also after an error). DEDUP_ETOOLARGE: more than max_edits
 * words deleted plus inserted, or a text of more than DEDUP_DIFF_MAX_WORDS words;
 * DEDUP_ENOMEM. The script is a shortest one (deleted + inserted is the least possible).
 */
DEDUP_WARN_UNUSED enum dedup_code dedup_word_diff(const char *a, size_t alen, const char *b,
                                                  size_t blen, size_t max_edits,
                                                  struct dedup_word_diff *out);
void dedup_word_diff_release(struct dedup_word_diff *d); /* NULL-safe; zeroes d */

#endif

#ifndef TESTS_FILTER_PAGES_H
#define TESTS_FILTER_PAGES_H
/*
 * Generated pages for the filter's tests (tests/test_filter.c) and its kill-test driver
 * (tests/tools/filter_driver.c): page (group, variant) is 150 pseudo-words drawn from a
 * 4,096-word vocabulary with a generator seeded by the group, in three paragraphs, under
 * a menu and a first paragraph shared by every page of its host (a site template). Variant 0 is the
 * group's original; variant v > 0 changes one word (its place and its new word follow from v),
 * which keeps the simhash within a few bits of the original's (a near-duplicate at k = 3 most of
 * the time); pages of different groups are unrelated (distance about 32). Deterministic.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FP_WORDS 150

static uint64_t fp_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Word w (0..4095) as three syllables into out (at least 16 bytes). */
static void fp_word(unsigned w, char *out)
{
    static const char *const syl[16] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                        "pe", "da", "gu", "ho", "ze", "fi", "bo", "wa"};
    snprintf(out, 16, "%s%s%s", syl[w & 15], syl[(w >> 4) & 15], syl[(w >> 8) & 15]);
}

/* Writes page (group, variant) of host into buf[cap]; returns its length. */
static size_t fp_page(char *buf, size_t cap, unsigned host, unsigned group, unsigned variant)
{
    unsigned words[FP_WORDS];
    uint64_t s = 0x5eed0000ull + group;
    for (unsigned i = 0; i < FP_WORDS; i++)
        words[i] = (unsigned)(fp_next(&s) & 4095);
    if (variant) {
        uint64_t v = 0xabcd0000ull + group * 1000003ull + variant;
        unsigned at = (unsigned)(fp_next(&v) % FP_WORDS);
        words[at] = (words[at] + 1 + (unsigned)(fp_next(&v) % 4000)) & 4095;
    }
    size_t n = (size_t)snprintf(buf, cap,
                                "<!DOCTYPE html><html><head><title>page %u</title></head><body>"
                                "<nav><ul><li><a href=\"/\">home of site %u</a></li><li><a "
                                "href=\"/a\">about this site</a></li></ul></nav><main>"
                                "<p>This page belongs to the documentation of site number "
                                "%u, published under the usual license.</p>\n",
                                group, host, host);
    for (unsigned i = 0; i < FP_WORDS && n + 64 < cap; i++) {
        char w[16];
        fp_word(words[i], w);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s%s", i % 50 == 0 ? "<p>" : " ", w,
                              i % 50 == 49 ? ".</p>\n" : "");
    }
    n += (size_t)snprintf(buf + n, cap - n,
                          "</main><footer><p>copyright site %u, all rights reserved, "
                          "contact the webmaster of this site</p></footer></body></html>\n",
                          host);
    return n < cap ? n : cap - 1;
}

#endif

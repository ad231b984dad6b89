/*
 * Fuzz target: the fingerprint-list reader (dedup/fplist.c, the --fingerprints FILE of
 * pairs, clusters, query and index). The input is fed whole and then again in chunks cut
 * at bytes taken from the input itself, and both runs must see the same entries and the
 * same malformed lines: the line assembly across chunk borders must not change anything.
 * A third run feeds a writable copy in chunks to dedup_fplist_feed_inplace() (whole lines
 * parsed where they lie, cut ones through the buffer): the same again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/dedup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tally {
    uint64_t sum;
    size_t entries, errors;
};

static int entry(void *ud, uint64_t fp, const char *id, size_t len, size_t line)
{
    struct tally *t = ud;
    if (strlen(id) != len) /* NUL-terminated, no NUL inside */
        abort();
    t->sum += fp ^ len ^ line;
    for (size_t i = 0; i < len; i++)
        t->sum = t->sum * 31 + (unsigned char)id[i];
    t->entries++;
    return 0;
}

static void error(void *ud, size_t line, const char *what)
{
    struct tally *t = ud;
    t->sum += line * 7 + strlen(what);
    t->errors++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tally whole = {0}, parts = {0};
    struct dedup_fplist *p = dedup_fplist_new();
    if (!p)
        return 0;
    (void)dedup_fplist_feed(p, (const char *)data, size, entry, error, &whole);
    (void)dedup_fplist_finish(p, entry, error, &whole);
    dedup_fplist_free(p);
    p = dedup_fplist_new();
    if (!p)
        return 0;
    size_t off = 0, step = size ? (size_t)data[0] % 7 + 1 : 1;
    while (off < size) {
        size_t n = step < size - off ? step : size - off;
        (void)dedup_fplist_feed(p, (const char *)data + off, n, entry, error, &parts);
        off += n;
        step = (size_t)data[off % size] % 13 + 1;
    }
    (void)dedup_fplist_finish(p, entry, error, &parts);
    dedup_fplist_free(p);
    if (whole.sum != parts.sum || whole.entries != parts.entries || whole.errors != parts.errors)
        abort();
    struct tally inplace = {0};
    char *copy = malloc(size ? size : 1);
    p = dedup_fplist_new();
    if (!p || !copy) {
        free(copy);
        dedup_fplist_free(p);
        return 0;
    }
    if (size)
        memcpy(copy, data, size);
    off = 0;
    step = size ? (size_t)data[size - 1] % 97 + 1 : 1;
    while (off < size) {
        size_t n = step < size - off ? step : size - off;
        (void)dedup_fplist_feed_inplace(p, copy + off, n, entry, error, &inplace);
        off += n;
        step = (size_t)data[(off * 7) % size] % 89 + 1;
    }
    (void)dedup_fplist_finish(p, entry, error, &inplace);
    dedup_fplist_free(p);
    free(copy);
    if (whole.sum != inplace.sum || whole.entries != inplace.entries ||
        whole.errors != inplace.errors)
        abort();
    return 0;
}

/*
 * IDF tables: in how many documents of a corpus each shingle occurs (docs/FINGERPRINT.md,
 * section "IDF file"). A table is either parsed from an IDF file or counted from feature
 * sets (`simcrawl fingerprint --idf-out`) and written back in the same format.
 *
 * The file is text: "# simcrawl idf 1", "# docs N", then one "HEX16<TAB>DF" line per
 * shingle with 2 <= DF <= N (DF 1 lines are accepted but redundant: an absent shingle has
 * df 1, the document it occurs in). idf = 1 + ln((N + 1) / (df + 1)), the smoothed IDF of
 * Sparck Jones (1972) as scikit-learn computes it; never below 1, so IDF only ever
 * raises the weight of rarer shingles.
 * The table is an open-addressing hash (slot = hash & mask, linear probing, df 0 = empty)
 * capped at DEDUP_IDF_MAX_ENTRIES entries.
 */
#include "dedup/dedup_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dedup_idf {
    uint64_t docs; /* N */
    uint64_t *key; /* shingle hashes */
    uint32_t *df;  /* 0 = empty slot */
    size_t mask;   /* slots - 1 */
    size_t count;  /* entries */
};

#define IDF_MAX_DOCS UINT32_MAX

static struct dedup_idf *idf_alloc(size_t slots)
{
    struct dedup_idf *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->key = malloc(slots * sizeof *t->key);
    t->df = calloc(slots, sizeof *t->df);
    if (!t->key || !t->df) {
        dedup_idf_free(t);
        return NULL;
    }
    t->mask = slots - 1;
    return t;
}

struct dedup_idf *dedup_idf_new(void)
{
    return idf_alloc(1024);
}

void dedup_idf_free(struct dedup_idf *idf)
{
    if (!idf)
        return;
    free(idf->key);
    free(idf->df);
    free(idf);
}

uint64_t dedup_idf_doc_count(const struct dedup_idf *idf)
{
    return idf->docs;
}
size_t dedup_idf_entry_count(const struct dedup_idf *idf)
{
    return idf->count;
}

static size_t idf_slot(const struct dedup_idf *t, uint64_t h)
{
    size_t i = (size_t)h & t->mask;
    while (t->df[i] != 0 && t->key[i] != h)
        i = (i + 1) & t->mask;
    return i;
}

uint64_t dedup_idf_df(const struct dedup_idf *idf, uint64_t h)
{
    size_t i = idf_slot(idf, h);
    return idf->df[i] ? idf->df[i] : 1;
}

double dedup__idf_factor(const struct dedup_idf *idf, uint64_t h)
{
    if (!idf)
        return 1.0;
    double df = (double)dedup_idf_df(idf, h);
    double n = (double)idf->docs;
    if (df > n) /* a counting table always has df <= N; keep idf >= 1 regardless */
        df = n;
    return 1.0 + log((n + 1.0) / (df + 1.0));
}

/* Makes room for `more` new entries at load <= 1/2; DEDUP_ENOMEM leaves t unchanged. */
static enum dedup_code idf_reserve(struct dedup_idf *t, size_t more)
{
    if (t->count + more > DEDUP_IDF_MAX_ENTRIES)
        return DEDUP_ETOOLARGE;
    size_t need = 2 * (t->count + more);
    if (need <= t->mask + 1)
        return DEDUP_OK;
    size_t slots = t->mask + 1;
    while (slots < need)
        slots *= 2;
    uint64_t *key = malloc(slots * sizeof *key);
    uint32_t *df = calloc(slots, sizeof *df);
    if (!key || !df) {
        free(key);
        free(df);
        return DEDUP_ENOMEM;
    }
    size_t mask = slots - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->df[i] == 0)
            continue;
        size_t j = (size_t)t->key[i] & mask;
        while (df[j] != 0)
            j = (j + 1) & mask;
        key[j] = t->key[i];
        df[j] = t->df[i];
    }
    free(t->key);
    free(t->df);
    t->key = key;
    t->df = df;
    t->mask = mask;
    return DEDUP_OK;
}

enum dedup_code dedup_idf_add_doc(struct dedup_idf *idf, const struct dedup_features *f)
{
    if (!idf || !f)
        return DEDUP_EINVAL;
    if (idf->docs >= IDF_MAX_DOCS)
        return DEDUP_ETOOLARGE;
    enum dedup_code rc = idf_reserve(idf, f->n);
    if (rc != DEDUP_OK)
        return rc;
    for (size_t i = 0; i < f->n; i++) {
        size_t s = idf_slot(idf, f->hash[i]);
        if (idf->df[s] == 0) {
            idf->key[s] = f->hash[i];
            idf->count++;
        }
        idf->df[s]++; /* <= docs + 1 <= UINT32_MAX */
    }
    idf->docs++;
    return DEDUP_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

enum dedup_code dedup_idf_write(const struct dedup_idf *idf, FILE *out)
{
    if (!idf || !out)
        return DEDUP_EINVAL;
    size_t n = 0;
    for (size_t i = 0; i <= idf->mask; i++)
        if (idf->df[i] >= 2)
            n++;
    uint64_t *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return DEDUP_ENOMEM;
    n = 0;
    for (size_t i = 0; i <= idf->mask; i++)
        if (idf->df[i] >= 2)
            keys[n++] = idf->key[i];
    qsort(keys, n, sizeof *keys, cmp_u64);
    int bad = fprintf(out, "# simcrawl idf 1\n# docs %llu\n", (unsigned long long)idf->docs) < 0;
    for (size_t i = 0; i < n && !bad; i++) {
        char hex[17];
        bad = fprintf(out, "%s\t%llu\n", dedup_fingerprint_format(keys[i], hex),
                      (unsigned long long)idf->df[idf_slot(idf, keys[i])]) < 0;
    }
    free(keys);
    if (bad || fflush(out) != 0 || ferror(out))
        return DEDUP_EIO;
    return DEDUP_OK;
}

/* ---- parsing ---- */

static int parse_u64(const char *p, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static enum dedup_code fail_at(struct dedup_parse_error *err, size_t line, size_t offset,
                               const char *what, enum dedup_code code)
{
    if (err) {
        err->line = line;
        err->offset = offset;
        err->what = what;
    }
    return code;
}

#define IDF_MAGIC "# simcrawl idf "

enum dedup_code dedup_idf_parse(const char *data, size_t len, struct dedup_idf **out,
                                struct dedup_parse_error *err)
{
    if (err) {
        err->line = 0;
        err->offset = 0;
        err->what = "";
    }
    if (!out || (!data && len > 0))
        return DEDUP_EINVAL;
    *out = NULL;
    struct dedup_idf *t = dedup_idf_new();
    if (!t)
        return DEDUP_ENOMEM;
    enum dedup_code rc = DEDUP_OK;
    size_t line = 0, pos = 0;
    int have_docs = 0;
    while (pos < len) {
        const char *p = data + pos;
        const char *nl = memchr(p, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - p) : len - pos;
        size_t off = pos;
        pos += n + (nl ? 1 : 0);
        line++;
        if (memchr(p, '\0', n)) {
            rc = fail_at(err, line, off, "NUL byte in line", DEDUP_EFORMAT);
            goto fail;
        }
        if (line == 1) {
            size_t m = sizeof IDF_MAGIC - 1;
            if (n < m || memcmp(p, IDF_MAGIC, m) != 0) {
                rc = fail_at(err, line, off,
                             "not an idf file (first line must be '# simcrawl idf 1')",
                             DEDUP_EFORMAT);
                goto fail;
            }
            if (n != m + 1 || p[m] != '1') {
                rc = fail_at(err, line, off, "unsupported idf file version (this reads version 1)",
                             DEDUP_EFORMAT);
                goto fail;
            }
            continue;
        }
        if (line == 2) {
            uint64_t docs;
            if (n < 7 || memcmp(p, "# docs ", 7) != 0) {
                rc = fail_at(err, line, off, "expected '# docs N' on line 2", DEDUP_EFORMAT);
                goto fail;
            }
            if (parse_u64(p + 7, n - 7, IDF_MAX_DOCS, &docs) != 0 || docs == 0) {
                rc = fail_at(err, line, off, "bad document count (want 1 to 4294967295)",
                             DEDUP_EFORMAT);
                goto fail;
            }
            t->docs = docs;
            have_docs = 1;
            continue;
        }
        if (n == 0 || p[0] == '#') /* blank lines and comments */
            continue;
        uint64_t h, df;
        if (n < 18 || p[16] != '\t' || dedup_fingerprint_parse(p, 16, &h) != DEDUP_OK) {
            rc = fail_at(err, line, off, "expected 16 hex digits, a tab and a document frequency",
                         DEDUP_EFORMAT);
            goto fail;
        }
        if (parse_u64(p + 17, n - 17, UINT64_MAX, &df) != 0) {
            rc = fail_at(err, line, off, "document frequency is not a decimal number",
                         DEDUP_EFORMAT);
            goto fail;
        }
        if (df == 0 || df > t->docs) {
            rc = fail_at(err, line, off,
                         "document frequency must be between 1 and the document count",
                         DEDUP_EFORMAT);
            goto fail;
        }
        rc = idf_reserve(t, 1);
        if (rc != DEDUP_OK) {
            fail_at(err, line, off, rc == DEDUP_ETOOLARGE ? "too many entries" : "out of memory",
                    rc);
            goto fail;
        }
        size_t s = idf_slot(t, h);
        if (t->df[s] != 0) {
            rc = fail_at(err, line, off, "duplicate shingle hash", DEDUP_EFORMAT);
            goto fail;
        }
        t->key[s] = h;
        t->df[s] = (uint32_t)df;
        t->count++;
    }
    if (!have_docs) {
        rc = fail_at(err, line == 0 ? 1 : 2, len,
                     line == 0 ? "empty file (not an idf file)" : "missing '# docs N' line",
                     DEDUP_EFORMAT);
        goto fail;
    }
    *out = t;
    return DEDUP_OK;
fail:
    dedup_idf_free(t);
    return rc;
}

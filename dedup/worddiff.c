/*
 * The word diff of dedup/worddiff.h: split into words, take off the common prefix and
 * suffix, Myers' greedy forward search over the middle with each round's V array kept,
 * then the path walked back into runs.
 */
#include "dedup/worddiff.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The words of s[0..len) into a new array *out of *n. */
static enum dedup_code split_words(const char *s, size_t len, struct dedup_word **out, size_t *n)
{
    size_t cap = 0, cnt = 0;
    struct dedup_word *w = NULL;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && is_space((unsigned char)s[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !is_space((unsigned char)s[i]))
            i++;
        if (cnt == DEDUP_DIFF_MAX_WORDS || i - start > UINT32_MAX) {
            free(w);
            return DEDUP_ETOOLARGE;
        }
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct dedup_word *nw = realloc(w, nc * sizeof *nw);
            if (!nw) {
                free(w);
                return DEDUP_ENOMEM;
            }
            w = nw;
            cap = nc;
        }
        w[cnt].p = s + start;
        w[cnt].len = (uint32_t)(i - start);
        w[cnt].hash = (uint32_t)XXH3_64bits(s + start, i - start);
        cnt++;
    }
    *out = w;
    *n = cnt;
    return DEDUP_OK;
}

static int same(const struct dedup_word *x, const struct dedup_word *y)
{
    return x->hash == y->hash && x->len == y->len && memcmp(x->p, y->p, x->len) == 0;
}

/* Appends n words of op at (a, b), merged with the last run when it has the same op. */
static enum dedup_code push_run(struct dedup_word_diff *d, size_t *cap, enum dedup_diff_op op,
                                size_t a, size_t b, size_t n)
{
    if (!n)
        return DEDUP_OK;
    if (d->nruns && d->runs[d->nruns - 1].op == op) {
        d->runs[d->nruns - 1].n += n;
    } else {
        if (d->nruns == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            struct dedup_diff_run *nr = realloc(d->runs, nc * sizeof *nr);
            if (!nr)
                return DEDUP_ENOMEM;
            d->runs = nr;
            *cap = nc;
        }
        d->runs[d->nruns++] = (struct dedup_diff_run){op, a, b, n};
    }
    if (op == DEDUP_DIFF_EQUAL)
        d->shared += n;
    else if (op == DEDUP_DIFF_DELETE)
        d->deleted += n;
    else
        d->inserted += n;
    return DEDUP_OK;
}

/* One step of the path walked back: a single word, in reverse order. */
struct step {
    unsigned char op;
    size_t a, b;
};

/*
 * Myers over a[0..n) and b[0..m) (the middle, offsets already applied by the caller):
 * the shortest edit script as single-word steps in reverse text order into *steps.
 * DEDUP_ETOOLARGE past max_edits.
 */
static enum dedup_code myers(const struct dedup_word *a, size_t n, const struct dedup_word *b,
                             size_t m, size_t max_edits, struct step **steps, size_t *nsteps)
{
    *steps = NULL;
    *nsteps = 0;
    size_t dmax = n + m;
    if (dmax > max_edits)
        dmax = max_edits;
    /* V[k] for k in -d..d lives at v[k + off]; trace keeps V of each round, rounds of
     * (2d + 1) entries one after the other. */
    size_t off = dmax + 1, vlen = 2 * dmax + 3;
    long *v = calloc(vlen, sizeof *v);
    long *trace = NULL;
    size_t tlen = 0, tcap = 0;
    enum dedup_code rc = DEDUP_ETOOLARGE;
    if (!v)
        return DEDUP_ENOMEM;
    size_t dfound = 0;
    int found = 0;
    for (size_t d = 0; d <= dmax && !found; d++) {
        size_t need = tlen + 2 * d + 1;
        if (need > tcap) {
            size_t nc = tcap ? tcap * 2 : 1024;
            while (nc < need)
                nc *= 2;
            long *nt = realloc(trace, nc * sizeof *nt);
            if (!nt) {
                rc = DEDUP_ENOMEM;
                goto out;
            }
            trace = nt;
            tcap = nc;
        }
        memcpy(trace + tlen, v + off - d, (2 * d + 1) * sizeof *v);
        tlen = need;
        for (long k = -(long)d; k <= (long)d; k += 2) {
            long x;
            if (k == -(long)d || (k != (long)d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1]; /* down: a word of b inserted */
            else
                x = v[off + k - 1] + 1; /* right: a word of a deleted */
            long y = x - k;
            while ((size_t)x < n && (size_t)y < m && y >= 0 && same(&a[x], &b[y])) {
                x++;
                y++;
            }
            v[off + k] = x;
            if ((size_t)x >= n && (size_t)y >= m) {
                found = 1;
                dfound = d;
                break;
            }
        }
    }
    if (!found)
        goto out;
    struct step *s = malloc((n + m + 1) * sizeof *s);
    if (!s) {
        rc = DEDUP_ENOMEM;
        goto out;
    }
    size_t ns = 0;
    long x = (long)n, y = (long)m;
    size_t base = tlen;
    for (size_t d = dfound; d > 0; d--) {
        base -= 2 * d + 1;
        const long *vd = trace + base; /* V at the start of round d: k at vd[k + d] */
        long k = x - y, pk;
        if (k == -(long)d || (k != (long)d && vd[k - 1 + (long)d] < vd[k + 1 + (long)d]))
            pk = k + 1;
        else
            pk = k - 1;
        long px = vd[pk + (long)d], py = px - pk;
        while (x > px && y > py) {
            s[ns++] = (struct step){DEDUP_DIFF_EQUAL, (size_t)x - 1, (size_t)y - 1};
            x--;
            y--;
        }
        if (pk == k + 1)
            s[ns++] = (struct step){DEDUP_DIFF_INSERT, (size_t)x, (size_t)y - 1};
        else
            s[ns++] = (struct step){DEDUP_DIFF_DELETE, (size_t)x - 1, (size_t)y};
        x = px;
        y = py;
    }
    while (x > 0 && y > 0) {
        s[ns++] = (struct step){DEDUP_DIFF_EQUAL, (size_t)x - 1, (size_t)y - 1};
        x--;
        y--;
    }
    *steps = s;
    *nsteps = ns;
    rc = DEDUP_OK;
out:
    free(v);
    free(trace);
    return rc;
}

enum dedup_code dedup_word_diff(const char *a, size_t alen, const char *b, size_t blen,
                                size_t max_edits, struct dedup_word_diff *out)
{
    memset(out, 0, sizeof *out);
    enum dedup_code rc = split_words(a, alen, &out->wa, &out->na);
    if (rc == DEDUP_OK)
        rc = split_words(b, blen, &out->wb, &out->nb);
    if (rc != DEDUP_OK)
        return rc;
    size_t na = out->na, nb = out->nb, pre = 0, suf = 0, cap = 0;
    while (pre < na && pre < nb && same(&out->wa[pre], &out->wb[pre]))
        pre++;
    while (suf < na - pre && suf < nb - pre && same(&out->wa[na - 1 - suf], &out->wb[nb - 1 - suf]))
        suf++;
    struct step *s = NULL;
    size_t ns = 0;
    rc = myers(out->wa + pre, na - pre - suf, out->wb + pre, nb - pre - suf, max_edits, &s, &ns);
    if (rc != DEDUP_OK)
        return rc;
    rc = push_run(out, &cap, DEDUP_DIFF_EQUAL, 0, 0, pre);
    /* steps are in reverse order; delete before insert at a change is Myers' own order
     * walked forward (right moves are preferred on ties) */
    for (size_t i = ns; rc == DEDUP_OK && i-- > 0;)
        rc = push_run(out, &cap, (enum dedup_diff_op)s[i].op, s[i].a + pre, s[i].b + pre, 1);
    if (rc == DEDUP_OK)
        rc = push_run(out, &cap, DEDUP_DIFF_EQUAL, na - suf, nb - suf, suf);
    free(s);
    return rc;
}

void dedup_word_diff_release(struct dedup_word_diff *d)
{
    if (!d)
        return;
    free(d->wa);
    free(d->wb);
    free(d->runs);
    memset(d, 0, sizeof *d);
}

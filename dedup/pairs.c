/*
 * All pairs within Hamming distance k (Manku, Jain, Das Sarma, WWW 2007, section 3, the
 * batch case): after compaction every table is sorted by its permuted fingerprint, so the
 * fingerprints sharing a key form a run; each run is checked pair by pair.
 *
 * HOW IT WORKS. A pair differing in bits d is kept only by the first table whose key bits
 * are all zero in d (ix_first_table), so each pair of distinct fingerprints comes out once
 * with no set of pairs seen, and the tables can be scanned independently: the tables are
 * shared out among threads, each collects its pairs of positions in table 0, and the
 * collected pairs are sorted. Documents are expanded last: for each document a in order,
 * the later documents with the same fingerprint (distance 0) and those of the neighbouring
 * fingerprints are gathered, sorted and reported, so the output is in (a, b) order and its
 * memory is one document's neighbours, however many pairs the identical pages make.
 */
#include "dedup/index_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct pairs_job {
    const struct dedup_index *idx;
    unsigned k;
    uint64_t *out[DEDUP_MAX_TABLES];
    size_t n[DEDUP_MAX_TABLES];
    enum dedup_code rc[DEDUP_MAX_TABLES];
};

static int push_pair(struct pairs_job *j, unsigned t, size_t *cap, uint32_t x, uint32_t y)
{
    if (j->n[t] == *cap) {
        if (*cap >= DEDUP_PAIRS_MAX_DISTINCT) {
            j->rc[t] = DEDUP_ETOOLARGE;
            return -1;
        }
        size_t nc = *cap ? *cap * 2 : 1024;
        uint64_t *nv = realloc(j->out[t], nc * sizeof *nv);
        if (!nv) {
            j->rc[t] = DEDUP_ENOMEM;
            return -1;
        }
        j->out[t] = nv;
        *cap = nc;
    }
    uint32_t lo = x < y ? x : y, hi = x < y ? y : x;
    j->out[t][j->n[t]++] = (uint64_t)lo << 32 | hi;
    return 0;
}

IX_HOT static void pairs_table(void *arg, unsigned t)
{
    struct pairs_job *j = arg;
    const struct dedup_index *idx = j->idx;
    const struct ix_perm *p = &idx->perm[t];
    const uint64_t *v = idx->tab[t];
    unsigned kb = p->key_bits, k = j->k;
    uint32_t n = idx->nmain;
    size_t cap = 0;
    for (uint32_t i = 0; i < n;) {
        uint64_t key = ix_top(v[i], kb);
        uint32_t e = i + 1;
        while (e < n && ix_top(v[e], kb) == key)
            e++;
        for (uint32_t x = i; x + 1 < e; x++) {
            uint64_t vx = v[x];
            for (uint32_t y = x + 1; y < e; y++) {
                if ((unsigned)__builtin_popcountll(vx ^ v[y]) > k)
                    continue;
                uint64_t ox = t ? ix_unpermute(p, vx) : vx;
                uint64_t oy = t ? ix_unpermute(p, v[y]) : v[y];
                if (ix_first_table(idx, ox ^ oy) != t)
                    continue;
                uint32_t px = t ? ix_main_find(idx, ox) : x;
                uint32_t py = t ? ix_main_find(idx, oy) : y;
                if (px == IX_NONE || py == IX_NONE || px == py)
                    continue; /* only in a forged file */
                if (push_pair(j, t, &cap, px, py) != 0)
                    return;
            }
        }
        i = e;
    }
}

enum dedup_code ix_distinct_pairs(struct dedup_index *idx, unsigned k, unsigned threads,
                                  uint64_t **pairs, size_t *npairs)
{
    struct pairs_job j;
    enum dedup_code rc;
    uint64_t *all = NULL;
    *pairs = NULL;
    *npairs = 0;
    if (k > idx->design.k)
        return DEDUP_EINVAL;
    rc = ix_compact(idx, threads);
    if (rc != DEDUP_OK)
        return rc;
    memset(&j, 0, sizeof j);
    j.idx = idx;
    j.k = k;
    (void)ix_parallel(threads, idx->ntables, pairs_table, &j);
    size_t total = 0;
    for (unsigned t = 0; t < idx->ntables; t++) {
        if (j.rc[t] != DEDUP_OK && rc == DEDUP_OK)
            rc = j.rc[t];
        total += j.n[t];
    }
    if (rc == DEDUP_OK && total > DEDUP_PAIRS_MAX_DISTINCT)
        rc = DEDUP_ETOOLARGE;
    if (rc != DEDUP_OK)
        goto done;
    all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        rc = DEDUP_ENOMEM;
        goto done;
    }
    size_t o = 0;
    for (unsigned t = 0; t < idx->ntables; t++) {
        if (j.n[t])
            memcpy(all + o, j.out[t], j.n[t] * sizeof *all);
        o += j.n[t];
    }
    ix_sort_u64(all, total);
    *pairs = all;
    *npairs = total;
    all = NULL;
done:
    for (unsigned t = 0; t < idx->ntables; t++)
        free(j.out[t]);
    free(all);
    return rc;
}

uint32_t *ix_doc_positions(const struct dedup_index *idx)
{
    uint32_t *pos = malloc((idx->ndocs ? idx->ndocs : 1) * sizeof *pos);
    if (!pos)
        return NULL;
    for (uint32_t i = 0; i < idx->nmain; i++)
        for (uint32_t d = idx->head[i]; d != IX_NONE; d = idx->doc_next[d])
            pos[d] = i;
    return pos;
}

/* The position of each document that is in some pair (its fingerprint has a neighbour or
 * another document), IX_NONE for the others: the expansion skips those. */
static uint32_t *paired_positions(const struct dedup_index *idx, const uint32_t *off)
{
    uint32_t *pos = malloc((idx->ndocs ? idx->ndocs : 1) * sizeof *pos);
    if (!pos)
        return NULL;
    memset(pos, 0xff, (size_t)idx->ndocs * sizeof *pos);
    for (uint32_t i = 0; i < idx->nmain; i++)
        if (off[i] != off[i + 1] || idx->head[i] != idx->tail[i])
            for (uint32_t d = idx->head[i]; d != IX_NONE; d = idx->doc_next[d])
                pos[d] = i;
    return pos;
}

struct cand {
    uint32_t b;
    unsigned distance;
};

static int cand_cmp(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* What the expansion reads: the adjacency of distinct fingerprints and the position of
 * each paired document. */
struct expand {
    const struct dedup_index *idx;
    const uint32_t *off, *adj, *pos;
    uint32_t min_b;
};

/* One worker's state: its candidate buffer and where it stopped. */
struct expand_run {
    struct cand *cand;
    size_t capcand;
    uint32_t next_a; /* the first document not completely reported */
    int oom;
};

#define EXPAND_BUFFER_FULL 0x7fff0001 /* a buffer sink's "stop": not an error */

/* Reports the pairs (a, b) for a in [lo, hi) in order through fn; returns fn's non-zero
 * value (run->next_a is then the a being reported), or 0 (next_a = hi). */
static int expand_range(const struct expand *e, uint32_t lo, uint32_t hi, dedup_pair_fn fn,
                        void *userdata, struct expand_run *run)
{
    const struct dedup_index *idx = e->idx;
    const uint32_t *off = e->off, *adj = e->adj, *pos = e->pos;
    for (uint32_t a = lo; a < hi; a++) {
        uint32_t pa = pos[a];
        size_t ncand = 0;
        run->next_a = a;
        if (a + 16 < hi && pos[a + 16] != IX_NONE)
            __builtin_prefetch(&off[pos[a + 16]]); /* the lists ahead are random reads */
        if (pa == IX_NONE)
            continue;
        uint64_t fa = idx->doc_fp[a];
        for (uint32_t i = off[pa]; i <= off[pa + 1]; i++) {
            /* i == off[pa + 1] stands for a's own fingerprint (the later documents) */
            uint32_t d = i < off[pa + 1] ? idx->head[adj[i]] : idx->doc_next[a];
            for (; d != IX_NONE; d = idx->doc_next[d]) {
                if (d <= a || d < e->min_b)
                    continue;
                if (ncand == run->capcand) {
                    size_t nc = run->capcand ? run->capcand * 2 : 64;
                    struct cand *nv = realloc(run->cand, nc * sizeof *nv);
                    if (!nv) {
                        run->oom = 1;
                        return EXPAND_BUFFER_FULL;
                    }
                    run->cand = nv;
                    run->capcand = nc;
                }
                run->cand[ncand++] = (struct cand){d, dedup_distance(fa, idx->doc_fp[d])};
            }
        }
        if (ncand > 1)
            qsort(run->cand, ncand, sizeof *run->cand, cand_cmp);
        for (size_t i = 0; i < ncand; i++) {
            int r = fn(userdata, a, run->cand[i].b, run->cand[i].distance);
            if (r)
                return r;
        }
    }
    run->next_a = hi;
    return 0;
}

/* A second thread expands the upper half of the documents into a capped buffer of
 * (a, b, distance) while the caller reports the lower half; the buffer is then replayed,
 * and if it filled up (a huge group of identical pages), the rest is expanded here. */
#define EXPAND_BUFFER_MAX ((size_t)1 << 20) /* triples buffered by the second thread */

struct triple {
    uint32_t a, b, distance;
};

struct buffer_sink {
    struct triple *v;
    size_t n, cap, a_start; /* a_start: index where the current document's pairs begin */
    uint32_t cur_a;
};

static int buffer_push(void *userdata, uint32_t a, uint32_t b, unsigned distance)
{
    struct buffer_sink *s = userdata;
    if (a != s->cur_a || s->n == 0) {
        s->cur_a = a;
        s->a_start = s->n;
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        struct triple *nv = nc <= EXPAND_BUFFER_MAX ? realloc(s->v, nc * sizeof *nv) : NULL;
        if (!nv) {
            s->n = s->a_start; /* drop the partial document: it is redone by the caller */
            return EXPAND_BUFFER_FULL;
        }
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = (struct triple){a, b, distance};
    return 0;
}

struct upper_job {
    const struct expand *e;
    uint32_t lo, hi;
    struct buffer_sink sink;
    struct expand_run run;
};

static void *upper_half(void *arg)
{
    struct upper_job *j = arg;
    (void)expand_range(j->e, j->lo, j->hi, buffer_push, &j->sink, &j->run);
    return NULL;
}

/* The expansion of every document, in (a, b) order, on up to two threads. */
static int expand_all(const struct expand *e, unsigned threads, dedup_pair_fn fn,
                      void *userdata, int *oom)
{
    struct expand_run run = {NULL, 0, 0, 0};
    uint32_t n = e->idx->ndocs, mid = n / 2;
    struct upper_job j;
    memset(&j, 0, sizeof j);
    pthread_t th;
    int r = 0, started = threads > 1 && n > 1;
    if (started) {
        j.e = e;
        j.lo = mid;
        j.hi = n;
        started = pthread_create(&th, NULL, upper_half, &j) == 0;
    }
    uint32_t from = 0;
    if (started) {
        r = expand_range(e, 0, mid, fn, userdata, &run);
        pthread_join(th, NULL);
        /* replay what the other thread buffered, then go on where it stopped */
        for (size_t i = 0; r == 0 && !run.oom && i < j.sink.n; i++)
            r = fn(userdata, j.sink.v[i].a, j.sink.v[i].b, j.sink.v[i].distance);
        from = j.run.next_a;
        free(j.sink.v);
        free(j.run.cand);
    }
    if (r == 0 && !run.oom)
        r = expand_range(e, from, n, fn, userdata, &run);
    free(run.cand);
    *oom = run.oom;
    return run.oom ? 0 : r;
}

enum dedup_code dedup_index_pairs(struct dedup_index *idx, unsigned k, unsigned threads,
                                  uint32_t min_b, dedup_pair_fn fn, void *userdata,
                                  int *stopped)
{
    uint64_t *pairs = NULL;
    size_t npairs = 0;
    uint32_t *off = NULL, *adj = NULL, *pos = NULL;
    if (stopped)
        *stopped = 0;
    enum dedup_code rc = ix_distinct_pairs(idx, k, threads, &pairs, &npairs);
    if (rc != DEDUP_OK)
        return rc;
    rc = DEDUP_ENOMEM;
    uint32_t n = idx->nmain;
    off = calloc((size_t)n + 1, sizeof *off);
    adj = malloc((npairs ? npairs * 2 : 1) * sizeof *adj);
    if (!off || !adj)
        goto done;
    /* adjacency lists of distinct fingerprints (CSR) */
    for (size_t i = 0; i < npairs; i++) {
        off[pairs[i] >> 32]++;
        off[(uint32_t)pairs[i]]++;
    }
    uint32_t acc = 0;
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t c = i < n ? off[i] : 0;
        off[i] = acc;
        acc += c;
    }
    for (size_t i = 0; i < npairs; i++) {
        uint32_t x = (uint32_t)(pairs[i] >> 32), y = (uint32_t)pairs[i];
        adj[off[x]++] = y;
        adj[off[y]++] = x;
    }
    for (uint32_t i = n; i > 0; i--)
        off[i] = off[i - 1];
    off[0] = 0;
    free(pairs);
    pairs = NULL;
    pos = paired_positions(idx, off);
    if (!pos)
        goto done;

    struct expand e = {idx, off, adj, pos, min_b};
    int oom = 0;
    int r = expand_all(&e, threads, fn, userdata, &oom);
    if (oom)
        goto done;
    if (r && stopped)
        *stopped = r;
    rc = DEDUP_OK;
done:
    free(pairs);
    free(off);
    free(adj);
    free(pos);
    return rc;
}

/*
 * The in-memory MinHash LSH index (docs/MINHASH.md section 4): signatures of h values cut
 * into b bands of r rows, each band hashed to a bucket; documents that share a bucket in
 * any band are candidates, and a candidate is kept when the signatures' Jaccard estimate
 * reaches the threshold (Leskovec, Rajaraman and Ullman, "Mining of Massive Datasets",
 * section 3.4; datasketch's MinHashLSH does the same with one dict per band).
 *
 * HOW IT WORKS. Per band j there is an open-addressing table (linear probing, load <= 1/2)
 * from the band's 64-bit key to the newest document with that key, and per (document,
 * band) a link to the next older document with the same key: a bucket is a chain, adding
 * is O(b), a query walks b chains. Band keys of every document are kept (8 bytes each),
 * so that a pair met in band j is reported only when no earlier band j' < j holds both
 * documents in one bucket: each candidate pair is verified once without a set of pairs.
 * A query de-duplicates its candidates with a per-document stamp. dedup_lsh_pairs()
 * walks every bucket of every band, collects the verified pairs and sorts them by (a, b),
 * so the output is the same whatever the table layout.
 */
#include "dedup/dedup_int.h"
#include "dedup/index_int.h" /* ix_parallel */
#include "dedup/minhash.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define NONE 0xffffffffu

struct band_table {
    uint64_t *key;  /* 0: empty slot (a key of 0 is stored as 1) */
    uint32_t *head; /* newest document in the bucket */
    size_t mask, used;
};

struct dedup_lsh {
    struct dedup_lsh_params p;
    struct dedup_minhash *mh;
    uint32_t n, cap;
    uint32_t *sig;   /* n * h */
    uint64_t *bkey;  /* n * b */
    uint32_t *next;  /* n * b: older document with the same key in the band, or NONE */
    uint32_t *stamp; /* n: query de-duplication */
    uint32_t epoch;
    uint64_t *id_off; /* n + 1 */
    char *ids;
    size_t ids_len, ids_cap;
    struct band_table *tab; /* b */
    struct dedup_templates *templates;
    uint64_t pair_gen; /* `dedup --index`'s generation of FILE + FILE.digests; 0 none */
    unsigned threads;  /* all pairs: the band scan on this many threads (0, 1: the caller's) */
};

static uint64_t band_key(const struct dedup_lsh *l, const uint32_t *sig, unsigned j)
{
    uint64_t k = XXH3_64bits_withSeed(sig + (size_t)j * l->p.r, (size_t)l->p.r * 4, j);
    return k ? k : 1;
}

enum dedup_code dedup_lsh_new(const struct dedup_lsh_params *p, struct dedup_lsh **out)
{
    *out = NULL;
    if (dedup_lsh_params_check(p) != DEDUP_OK)
        return DEDUP_EINVAL;
    struct dedup_lsh *l = calloc(1, sizeof *l);
    if (!l)
        return DEDUP_ENOMEM;
    l->p = *p;
    enum dedup_code rc = dedup_minhash_new(p->k, p->h, p->seed, &l->mh);
    l->tab = calloc(p->b, sizeof *l->tab);
    l->id_off = calloc(1, sizeof *l->id_off);
    if (rc != DEDUP_OK || !l->tab || !l->id_off) {
        dedup_lsh_free(l);
        return DEDUP_ENOMEM;
    }
    *out = l;
    return DEDUP_OK;
}

void dedup_lsh_free(struct dedup_lsh *l)
{
    if (!l)
        return;
    dedup_minhash_free(l->mh);
    free(l->sig);
    free(l->bkey);
    free(l->next);
    free(l->stamp);
    free(l->id_off);
    free(l->ids);
    if (l->tab)
        for (unsigned j = 0; j < l->p.b; j++) {
            free(l->tab[j].key);
            free(l->tab[j].head);
        }
    free(l->tab);
    dedup_templates_free(l->templates);
    free(l);
}

const struct dedup_lsh_params *dedup_lsh_get_params(const struct dedup_lsh *l)
{
    return &l->p;
}
const struct dedup_minhash *dedup_lsh_minhash(const struct dedup_lsh *l)
{
    return l->mh;
}
uint32_t dedup_lsh_doc_count(const struct dedup_lsh *l)
{
    return l->n;
}

const char *dedup_lsh_id(const struct dedup_lsh *l, uint32_t doc, size_t *len)
{
    if (len)
        *len = (size_t)(l->id_off[doc + 1] - l->id_off[doc]) - 1;
    return l->ids + l->id_off[doc];
}

const uint32_t *dedup_lsh_signature(const struct dedup_lsh *l, uint32_t doc)
{
    return l->sig + (size_t)doc * l->p.h;
}

struct dedup_templates *dedup_lsh_templates(struct dedup_lsh *l)
{
    if (!l->templates)
        l->templates = dedup_templates_new();
    return l->templates;
}

void dedup_lsh_set_threads(struct dedup_lsh *l, unsigned threads)
{
    l->threads = threads;
}

uint64_t dedup_lsh_pair_generation(const struct dedup_lsh *l)
{
    return l->pair_gen;
}

void dedup_lsh_set_pair_generation(struct dedup_lsh *l, uint64_t gen)
{
    l->pair_gen = gen;
}

void dedup_lsh_set_templates(struct dedup_lsh *l, struct dedup_templates *t)
{
    if (l->templates != t)
        dedup_templates_free(l->templates);
    l->templates = t;
}

struct dedup_templates *dedup_lsh_take_templates(struct dedup_lsh *l)
{
    struct dedup_templates *t = l->templates;
    l->templates = NULL;
    return t;
}

/* Room for one more document in the per-document arrays. */
static int grow_docs(struct dedup_lsh *l)
{
    if (l->n < l->cap)
        return 0;
    uint64_t ncap64 = l->cap ? (uint64_t)l->cap * 2 : 64;
    if (ncap64 > DEDUP_LSH_MAX_DOCS)
        ncap64 = DEDUP_LSH_MAX_DOCS;
    size_t ncap = (size_t)ncap64;
    uint32_t *s = realloc(l->sig, ncap * l->p.h * sizeof *s);
    if (!s)
        return -1;
    l->sig = s;
    uint64_t *k = realloc(l->bkey, ncap * l->p.b * sizeof *k);
    if (!k)
        return -1;
    l->bkey = k;
    uint32_t *nx = realloc(l->next, ncap * l->p.b * sizeof *nx);
    if (!nx)
        return -1;
    l->next = nx;
    uint32_t *st = realloc(l->stamp, ncap * sizeof *st);
    if (!st)
        return -1;
    memset(st + l->cap, 0, (ncap - l->cap) * sizeof *st);
    l->stamp = st;
    uint64_t *o = realloc(l->id_off, (ncap + 1) * sizeof *o);
    if (!o)
        return -1;
    l->id_off = o;
    l->cap = (uint32_t)ncap;
    return 0;
}

/* The slot of key in t (its own, or the empty one where it would go). */
static size_t slot_of(const struct band_table *t, uint64_t key)
{
    size_t i = (size_t)(key ^ (key >> 29)) & t->mask;
    while (t->key[i] != 0 && t->key[i] != key)
        i = (i + 1) & t->mask;
    return i;
}

/* Room for one more key in t (load <= 1/2). */
static int grow_table(struct band_table *t)
{
    size_t slots = t->key ? t->mask + 1 : 0;
    if (t->key && (t->used + 1) * 2 <= slots)
        return 0;
    size_t nslots = slots ? slots * 2 : 64;
    struct band_table nt = {calloc(nslots, sizeof *nt.key), malloc(nslots * sizeof *nt.head),
                            nslots - 1, t->used};
    if (!nt.key || !nt.head) {
        free(nt.key);
        free(nt.head);
        return -1;
    }
    for (size_t i = 0; i < slots; i++) {
        if (t->key[i] == 0)
            continue;
        size_t s = slot_of(&nt, t->key[i]);
        nt.key[s] = t->key[i];
        nt.head[s] = t->head[i];
    }
    free(t->key);
    free(t->head);
    *t = nt;
    return 0;
}

enum dedup_code dedup_lsh_add(struct dedup_lsh *l, const uint32_t *sig, const char *id,
                              size_t id_len, uint32_t *doc)
{
    if (l->n >= DEDUP_LSH_MAX_DOCS || id_len > DEDUP_INDEX_MAX_ID_BYTES)
        return DEDUP_ETOOLARGE;
    if (memchr(id, '\0', id_len))
        return DEDUP_EINVAL;
    if (grow_docs(l) != 0)
        return DEDUP_ENOMEM;
    if (l->ids_len + id_len + 1 > l->ids_cap) {
        size_t ncap = l->ids_cap ? l->ids_cap : 4096;
        while (ncap < l->ids_len + id_len + 1)
            ncap *= 2;
        char *ni = realloc(l->ids, ncap);
        if (!ni)
            return DEDUP_ENOMEM;
        l->ids = ni;
        l->ids_cap = ncap;
    }
    for (unsigned j = 0; j < l->p.b; j++)
        if (grow_table(&l->tab[j]) != 0)
            return DEDUP_ENOMEM;
    /* nothing can fail from here on */
    uint32_t d = l->n;
    memcpy(l->sig + (size_t)d * l->p.h, sig, l->p.h * sizeof *sig);
    for (unsigned j = 0; j < l->p.b; j++) {
        uint64_t key = band_key(l, sig, j);
        struct band_table *t = &l->tab[j];
        size_t s = slot_of(t, key);
        if (t->key[s] == 0) {
            t->key[s] = key;
            t->used++;
            l->next[(size_t)d * l->p.b + j] = NONE;
        } else {
            l->next[(size_t)d * l->p.b + j] = t->head[s];
        }
        t->head[s] = d;
        l->bkey[(size_t)d * l->p.b + j] = key;
    }
    l->stamp[d] = 0;
    memcpy(l->ids + l->ids_len, id, id_len);
    l->ids[l->ids_len + id_len] = '\0';
    l->ids_len += id_len + 1;
    l->id_off[d + 1] = l->ids_len;
    l->n = d + 1;
    if (doc)
        *doc = d;
    return DEDUP_OK;
}

void dedup_lsh_matches_release(struct dedup_lsh_matches *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

static int match_cmp(const void *x, const void *y)
{
    const struct dedup_lsh_match *a = x, *b = y;
    if (a->jaccard != b->jaccard)
        return a->jaccard > b->jaccard ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

static unsigned equal_count(const uint32_t *a, const uint32_t *b, unsigned h)
{
    unsigned eq = 0;
    for (unsigned i = 0; i < h; i++)
        eq += a[i] == b[i];
    return eq;
}

/* The least number of equal values out of h that reaches threshold t. */
static unsigned min_equal(double t, unsigned h)
{
    unsigned e = 0;
    while (e < h && (double)e / h < t)
        e++;
    return e;
}

enum dedup_code dedup_lsh_query(struct dedup_lsh *l, const uint32_t *sig, double threshold,
                                size_t limit, struct dedup_lsh_matches *out, size_t *candidates)
{
    out->n = 0;
    if (candidates)
        *candidates = 0;
    if (!(threshold >= 0 && threshold <= 1))
        return DEDUP_EINVAL;
    if (++l->epoch == 0) { /* wrapped: start the stamps again */
        if (l->n)
            memset(l->stamp, 0, (size_t)l->n * sizeof *l->stamp);
        l->epoch = 1;
    }
    unsigned need = min_equal(threshold, l->p.h);
    size_t cand = 0;
    for (unsigned j = 0; j < l->p.b && l->n; j++) {
        const struct band_table *t = &l->tab[j];
        size_t s = slot_of(t, band_key(l, sig, j));
        if (t->key[s] == 0)
            continue;
        for (uint32_t d = t->head[s]; d != NONE; d = l->next[(size_t)d * l->p.b + j]) {
            if (l->stamp[d] == l->epoch)
                continue;
            l->stamp[d] = l->epoch;
            cand++;
            unsigned eq = equal_count(sig, l->sig + (size_t)d * l->p.h, l->p.h);
            if (eq < need)
                continue;
            if (out->n == out->cap) {
                size_t ncap = out->cap ? out->cap * 2 : 16;
                struct dedup_lsh_match *nv = realloc(out->v, ncap * sizeof *nv);
                if (!nv)
                    return DEDUP_ENOMEM;
                out->v = nv;
                out->cap = ncap;
            }
            out->v[out->n++] = (struct dedup_lsh_match){d, (double)eq / l->p.h};
        }
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, match_cmp);
    if (limit && out->n > limit)
        out->n = limit;
    if (candidates)
        *candidates = cand;
    return DEDUP_OK;
}

struct pair {
    uint64_t ab; /* a << 32 | b */
    uint32_t eq;
};

static int pair_cmp(const void *x, const void *y)
{
    uint64_t a = ((const struct pair *)x)->ab, b = ((const struct pair *)y)->ab;
    return a < b ? -1 : a > b;
}

/*
 * HOW IT WORKS (all pairs on several threads). A pair is verified in exactly one band: the
 * first it shares (a pair that shares band j is skipped there when its band keys agree in
 * an earlier band). So the bands' buckets can be scanned in any order and on any thread:
 * the scan is cut into tasks, a range of the slots of one band's table each (SCAN_CHUNKS
 * per band with several threads), every task keeps its own pairs, candidates and scratch,
 * and the tasks run on ix_parallel()'s threads (dedup/index.c). The tasks' pairs are then
 * put together and sorted by (a, b): the same pairs in the same order, byte for byte,
 * whatever the number of threads. The index is only read meanwhile.
 */
#define SCAN_CHUNKS 32u /* tasks per band with more than one thread */

struct scan_task {
    struct pair *v;
    size_t n, cap;
    uint64_t cand;
    enum dedup_code rc;
};

struct scan_job {
    const struct dedup_lsh *l;
    unsigned need, chunks;
    uint32_t min_b;
    struct scan_task *task; /* b * chunks, task i: band i / chunks, chunk i % chunks */
};

/* Task i of the job (an ix_parallel function). */
static void scan_task(void *arg, unsigned i)
{
    const struct scan_job *job = arg;
    const struct dedup_lsh *l = job->l;
    struct scan_task *tk = &job->task[i];
    unsigned j = i / job->chunks, c = i % job->chunks, nb = l->p.b, need = job->need;
    uint32_t min_b = job->min_b;
    const struct band_table *t = &l->tab[j];
    size_t slots = t->key ? t->mask + 1 : 0;
    size_t from = slots / job->chunks * c,
           to = c + 1 == job->chunks ? slots : slots / job->chunks * (c + 1);
    size_t mcap = 0;
    uint32_t *mem = NULL;
    struct pair *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t cand = 0;
    enum dedup_code rc = DEDUP_OK;
    for (size_t s = from; s < to; s++) {
        if (t->key[s] == 0)
            continue;
        uint32_t d = t->head[s];
        if (l->next[(size_t)d * nb + j] == NONE)
            continue; /* a bucket of one */
        size_t m = 0;
        for (; d != NONE; d = l->next[(size_t)d * nb + j]) {
            if (m == mcap) {
                size_t ncap = mcap ? mcap * 2 : 64;
                uint32_t *nm = realloc(mem, ncap * sizeof *nm);
                if (!nm) {
                    rc = DEDUP_ENOMEM;
                    goto fail;
                }
                mem = nm;
                mcap = ncap;
            }
            mem[m++] = d; /* newest first: descending document numbers */
        }
        for (size_t x = 0; x < m; x++) {
            uint32_t b = mem[x];
            if (b < min_b)
                break; /* the rest are smaller still */
            for (size_t y = x + 1; y < m; y++) {
                uint32_t a = mem[y];
                const uint64_t *ka = l->bkey + (size_t)a * nb, *kb = l->bkey + (size_t)b * nb;
                unsigned e = 0;
                while (e < j && ka[e] != kb[e])
                    e++;
                if (e < j)
                    continue; /* met in an earlier band */
                cand++;
                unsigned eq =
                    equal_count(l->sig + (size_t)a * l->p.h, l->sig + (size_t)b * l->p.h, l->p.h);
                if (eq < need)
                    continue;
                if (n == cap) {
                    if (n >= DEDUP_LSH_MAX_PAIRS) {
                        rc = DEDUP_ETOOLARGE; /* this task's alone */
                        goto fail;
                    }
                    size_t ncap = cap ? cap * 2 : 1024;
                    struct pair *nv = realloc(v, ncap * sizeof *nv);
                    if (!nv) {
                        rc = DEDUP_ENOMEM;
                        goto fail;
                    }
                    v = nv;
                    cap = ncap;
                }
                v[n++] = (struct pair){(uint64_t)a << 32 | b, eq};
            }
        }
    }
    free(mem);
    *tk = (struct scan_task){v, n, cap, cand, DEDUP_OK};
    return;
fail:
    free(mem);
    free(v);
    *tk = (struct scan_task){NULL, 0, 0, 0, rc};
}

/* Every verified pair, sorted by (a, b), in a new array *out of *np (caller frees). */
static enum dedup_code collect_pairs(struct dedup_lsh *l, double threshold, uint32_t min_b,
                                     struct pair **out, size_t *np, uint64_t *candidates)
{
    unsigned threads = l->threads > 1 ? l->threads : 1;
    struct scan_job job = {l, min_equal(threshold, l->p.h), threads > 1 ? SCAN_CHUNKS : 1, min_b,
                           NULL};
    unsigned ntasks = l->p.b * job.chunks;
    enum dedup_code rc = DEDUP_OK;
    uint64_t cand = 0;
    size_t n = 0;
    struct pair *v = NULL;
    *out = NULL;
    *np = 0;
    job.task = calloc(ntasks, sizeof *job.task);
    if (!job.task)
        return DEDUP_ENOMEM;
    (void)ix_parallel(threads, ntasks, scan_task, &job); /* it runs every task, threads or not */
    for (unsigned i = 0; i < ntasks; i++) {
        if (job.task[i].rc != DEDUP_OK && rc == DEDUP_OK)
            rc = job.task[i].rc;
        n += job.task[i].n;
        cand += job.task[i].cand;
    }
    if (rc == DEDUP_OK && n > DEDUP_LSH_MAX_PAIRS)
        rc = DEDUP_ETOOLARGE;
    if (rc == DEDUP_OK && !(v = malloc((n ? n : 1) * sizeof *v)))
        rc = DEDUP_ENOMEM;
    size_t at = 0;
    for (unsigned i = 0; i < ntasks; i++) {
        if (rc == DEDUP_OK && job.task[i].n)
            memcpy(v + at, job.task[i].v, job.task[i].n * sizeof *v);
        at += job.task[i].n;
        free(job.task[i].v);
    }
    free(job.task);
    if (rc != DEDUP_OK) {
        free(v);
        return rc;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, pair_cmp);
    *out = v;
    *np = n;
    if (candidates)
        *candidates = cand;
    return DEDUP_OK;
}

enum dedup_code dedup_lsh_pairs(struct dedup_lsh *l, double threshold, uint32_t min_b,
                                dedup_lsh_pair_fn fn, void *userdata, int *stopped,
                                uint64_t *candidates)
{
    if (stopped)
        *stopped = 0;
    if (candidates)
        *candidates = 0;
    if (!(threshold >= 0 && threshold <= 1))
        return DEDUP_EINVAL;
    struct pair *v;
    size_t n;
    enum dedup_code rc = collect_pairs(l, threshold, min_b, &v, &n, candidates);
    if (rc != DEDUP_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        int r =
            fn(userdata, (uint32_t)(v[i].ab >> 32), (uint32_t)v[i].ab, (double)v[i].eq / l->p.h);
        if (r) {
            if (stopped)
                *stopped = r;
            break;
        }
    }
    free(v);
    return DEDUP_OK;
}

enum dedup_code dedup_lsh_clusters(struct dedup_lsh *l, double threshold,
                                   struct dedup_clusters **out)
{
    *out = NULL;
    if (!(threshold >= 0 && threshold <= 1))
        return DEDUP_EINVAL;
    struct pair *v;
    size_t n;
    enum dedup_code rc = collect_pairs(l, threshold, 0, &v, &n, NULL);
    if (rc != DEDUP_OK)
        return rc;
    uint64_t *ab = malloc((n ? n : 1) * sizeof *ab);
    if (!ab) {
        free(v);
        return DEDUP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        ab[i] = v[i].ab;
    free(v);
    rc = dedup_clusters_from_pairs(l->n, ab, n, out);
    free(ab);
    return rc;
}

void dedup_lsh_stats(const struct dedup_lsh *l, struct dedup_lsh_stats *st)
{
    memset(st, 0, sizeof *st);
    st->docs = l->n;
    st->bytes = (uint64_t)l->cap * (l->p.h * 4 + l->p.b * 12 + 4 + 8) + l->ids_cap;
    for (unsigned j = 0; j < l->p.b; j++) {
        const struct band_table *t = &l->tab[j];
        size_t slots = t->key ? t->mask + 1 : 0;
        st->bytes += slots * 12;
        for (size_t s = 0; s < slots; s++) {
            if (t->key[s] == 0)
                continue;
            st->buckets++;
            uint64_t m = 0;
            for (uint32_t d = t->head[s]; d != NONE; d = l->next[(size_t)d * l->p.b + j])
                m++;
            if (m > st->bucket_max)
                st->bucket_max = m;
            if (m >= 2)
                st->shared++;
        }
    }
}

/*
 * Suite "index": the block-permuted table index (dedup/index.c, pairs.c, cluster.c,
 * indexfile.c). Every answer is compared with brute force over the same fingerprints, on
 * random sets and on planted near-duplicates at distances 0..k+1, for each k in 0..7 and
 * for every paper design at k = 3; then online interleaving, exactly-once pairs, identical
 * fingerprints, deterministic clusters, and the index file (round trip, reopen + add,
 * corrupt, truncated and other-version files).
 */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) under -D_POSIX_C_SOURCE */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dedup/dedup.h"
#include "dedup/index_int.h"
#include "tests/testutil.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t flip_bits(uint64_t x, unsigned d)
{
    uint64_t mask = 0;
    while ((unsigned)__builtin_popcountll(mask) < d)
        mask |= (uint64_t)1 << (rnd() % 64);
    return x ^ mask;
}

/* n fingerprints: a third random, the rest planted around bases at distance 0..k+1. */
static uint64_t *make_set(size_t n, unsigned k)
{
    uint64_t *v = malloc(n * sizeof *v);
    size_t i = 0;
    while (i < n) {
        if (i % 3 == 0) {
            v[i++] = rnd();
            continue;
        }
        uint64_t base = rnd();
        v[i++] = base;
        for (unsigned d = 0; d <= k + 1 && i < n; d++)
            v[i++] = flip_bits(base, d);
    }
    /* shuffle so planted families are spread over the document numbers */
    for (size_t j = n - 1; j > 0; j--) {
        size_t r = rnd() % (j + 1);
        uint64_t t = v[j];
        v[j] = v[r];
        v[r] = t;
    }
    return v;
}

/* make_set's fingerprints with the buckets a scan finds hardest: every fourth shares its
 * top 10 bits (crowded buckets, more entries than a line or a vector holds), some sit in
 * the first and the last bucket, and some repeat the one before. */
static uint64_t *make_edge_set(size_t n, unsigned k)
{
    uint64_t *v = make_set(n, k);
    for (size_t i = 0; i < n; i += 4)
        v[i] = (v[i] & (UINT64_MAX >> 10)) | ((uint64_t)0x2a5 << 54);
    for (size_t i = 1; i < n; i += 50)
        v[i] = i % 100 == 1 ? v[i] >> 12 : v[i] | ((uint64_t)0xfff << 52);
    for (size_t i = 2; i < n; i += 41)
        v[i] = v[i - 1];
    return v;
}

static struct dedup_index *build(const uint64_t *v, size_t n, unsigned k, unsigned tables)
{
    struct dedup_design d;
    struct dedup_index *idx = NULL;
    ASSERT_EQ_FATAL(dedup_design_choose(k, n, tables, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        int len = snprintf(id, sizeof id, "doc%zu", i);
        ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], id, (size_t)len, NULL), DEDUP_OK);
    }
    return idx;
}

/* Query q against docs v[0..n) by brute force vs the index; returns mismatches. */
static int check_query(struct dedup_index *idx, const uint64_t *v, size_t n, uint64_t q, unsigned k)
{
    struct dedup_matches m = {0};
    int bad = 0;
    if (dedup_index_query(idx, q, k, &m) != DEDUP_OK)
        return 1;
    size_t want = 0;
    for (size_t i = 0; i < n; i++)
        if (dedup_distance(v[i], q) <= k)
            want++;
    if (m.n != want)
        bad++;
    for (size_t i = 0; i < m.n; i++) {
        if (m.v[i].doc >= n || dedup_distance(v[m.v[i].doc], q) != m.v[i].distance ||
            m.v[i].distance > k)
            bad++;
        if (i && (m.v[i - 1].distance > m.v[i].distance ||
                  (m.v[i - 1].distance == m.v[i].distance && m.v[i - 1].doc >= m.v[i].doc)))
            bad++; /* nearest first, each document once */
    }
    uint32_t doc;
    unsigned dist;
    int r;
    if (dedup_index_nearest(idx, q, k, &doc, &dist, &r) != DEDUP_OK)
        bad++;
    if (r != (m.n > 0) || (r == 1 && (doc != m.v[0].doc || dist != m.v[0].distance)))
        bad++;
    dedup_matches_release(&m);
    return bad;
}

struct pair_check {
    const uint64_t *v;
    unsigned k;
    uint64_t count;
    uint32_t last_a, last_b;
    int bad;
};

static int pair_cb(void *ud, uint32_t a, uint32_t b, unsigned distance)
{
    struct pair_check *c = ud;
    if (a >= b || distance != dedup_distance(c->v[a], c->v[b]) || distance > c->k)
        c->bad++;
    if (c->count && (a < c->last_a || (a == c->last_a && b <= c->last_b)))
        c->bad++; /* strictly increasing (a, b): each pair once, in order */
    c->last_a = a;
    c->last_b = b;
    c->count++;
    return 0;
}

static uint64_t brute_pairs(const uint64_t *v, size_t n, unsigned k)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            c += dedup_distance(v[i], v[j]) <= k;
    return c;
}

static void check_pairs(struct dedup_index *idx, const uint64_t *v, size_t n, unsigned k,
                        unsigned threads)
{
    struct pair_check c = {v, k, 0, 0, 0, 0};
    ASSERT_EQ(dedup_index_pairs(idx, k, threads, 0, pair_cb, &c, NULL), DEDUP_OK);
    ASSERT_EQ(c.bad, 0);
    ASSERT_EQ(c.count, brute_pairs(v, n, k));
}

static void test_index_design_shapes(void)
{
    static const unsigned tables[] = {4, 10, 16, 20};
    static const unsigned keymin[] = {16, 25, 28, 31};
    rng_state = 1;
    for (unsigned i = 0; i < 4; i++) {
        struct dedup_design d;
        ASSERT_EQ_FATAL(dedup_design_choose(3, 1000000, tables[i], &d), DEDUP_OK);
        ASSERT_EQ(d.tables, tables[i]);
        ASSERT_EQ(d.key_bits_min, keymin[i]);
        struct dedup_index *idx;
        ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
        for (unsigned t = 0; t < idx->ntables; t++) {
            const struct ix_perm *p = &idx->perm[t];
            ASSERT_EQ((unsigned)__builtin_popcountll(p->keymask), p->key_bits);
            for (int r = 0; r < 100; r++) {
                uint64_t x = rnd();
                uint64_t y = ix_permute(p, x);
                ASSERT_EQ(ix_unpermute(p, y), x);
                ASSERT_EQ(__builtin_popcountll(x), __builtin_popcountll(y));
                ASSERT_EQ(ix_top(y, p->key_bits),
                          ix_top(ix_permute(p, x & p->keymask), p->key_bits));
            }
            if (t == 0)
                ASSERT_EQ(ix_permute(p, 0x0123456789abcdefull), 0x0123456789abcdefull);
        }
        dedup_index_free(idx);
    }
    struct dedup_design d;
    ASSERT_EQ(dedup_design_choose(3, 1000, 0, &d), DEDUP_OK);
    ASSERT_EQ(d.tables, 4);
    ASSERT_EQ(dedup_design_choose(3, 20000000, 0, &d), DEDUP_OK);
    ASSERT_EQ(d.tables, 10);
    char buf[128];
    dedup_design_describe(&d, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "10 tables: 5 blocks of 13,13,13,13,12 bits, key 25-26 bits");
    ASSERT_EQ(dedup_design_choose(8, 1000, 0, &d), DEDUP_EINVAL);
    ASSERT_EQ(dedup_design_choose(3, 1000, 5, &d), DEDUP_EINVAL);
    for (unsigned k = 0; k <= DEDUP_K_MAX; k++)
        ASSERT_EQ(dedup_design_choose(k, 1000000, 0, &d), DEDUP_OK);
}

/* Every k 0..7, random + planted sets, the auto design and extra designs; queries with
 * indexed fingerprints, perturbed ones and random ones; all pairs. */
static void test_index_brute_force_every_k(void)
{
    for (unsigned k = 0; k <= DEDUP_K_MAX; k++) {
        rng_state = 100 + k;
        size_t n = 3000;
        uint64_t *v = make_set(n, k);
        unsigned designs[3] = {0, 0, 0};
        if (k == 3) {
            designs[1] = 10;
            designs[2] = 20;
        }
        for (unsigned di = 0; di < 3; di++) {
            if (di && !designs[di])
                continue;
            struct dedup_index *idx = build(v, n, k, designs[di]);
            int bad = 0;
            for (unsigned kq = 0; kq <= k; kq++)
                for (int q = 0; q < 150; q++) {
                    uint64_t x = v[rnd() % n];
                    bad += check_query(idx, v, n, flip_bits(x, (unsigned)(rnd() % (k + 2))), kq);
                    bad += check_query(idx, v, n, rnd(), kq);
                }
            ASSERT_EQ(bad, 0);
            check_pairs(idx, v, n, k, 2);
            if (k > 0)
                check_pairs(idx, v, n, k - 1, 1); /* a smaller k on the same tables */
            dedup_index_free(idx);
        }
        free(v);
    }
}

static void test_index_paper_designs_k3(void)
{
    static const unsigned tables[] = {4, 10, 16, 20};
    rng_state = 7;
    size_t n = 4000;
    uint64_t *v = make_set(n, 3);
    for (unsigned i = 0; i < 4; i++) {
        struct dedup_index *idx = build(v, n, 3, tables[i]);
        int bad = 0;
        for (int q = 0; q < 300; q++)
            bad += check_query(idx, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
        ASSERT_EQ(bad, 0);
        check_pairs(idx, v, n, 3, 2);
        dedup_index_free(idx);
    }
    free(v);
}

/* Every table count a design can have for k = 1..4 (one- and two-level shapes), each
 * against brute force on a small planted set. */
static void test_index_every_design_small(void)
{
    for (unsigned k = 1; k <= 4; k++) {
        rng_state = 300 + k;
        size_t n = 800;
        uint64_t *v = make_set(n, k);
        unsigned designs = 0;
        for (unsigned tables = 1; tables <= DEDUP_MAX_TABLES; tables++) {
            struct dedup_design d;
            if (dedup_design_choose(k, n, tables, &d) != DEDUP_OK)
                continue;
            designs++;
            struct dedup_index *idx = build(v, n, k, tables);
            int bad = 0;
            for (int q = 0; q < 100; q++)
                bad +=
                    check_query(idx, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % (k + 2))), k);
            ASSERT_EQ(bad, 0);
            check_pairs(idx, v, n, k, 2);
            dedup_index_free(idx);
        }
        CU_ASSERT(designs >= 3); /* e.g. k = 3: 4, 10, 16, 20, 35, ... tables */
        free(v);
    }
}

/* ix_permute and ix_unpermute (two PEXTs / PDEPs for one-level designs where the CPU has
 * a fast PEXT, else the segments grouped by rotation) against the segments moved one by
 * one, for every design the chooser makes for k = 0..7 and several sizes: the same value,
 * and the inverse gives the fingerprint back. */
static void test_index_permute_groups(void)
{
    static const uint64_t sizes[] = {1000, 1000000, 100000000};
    int bad = 0;
    unsigned npext = 0;
    rng_state = 900;
    for (unsigned k = 0; k <= DEDUP_K_MAX; k++) {
        for (unsigned si = 0; si < 3; si++) {
            struct dedup_design d;
            struct dedup_index *idx;
            ASSERT_EQ_FATAL(dedup_design_choose(k, sizes[si], 0, &d), DEDUP_OK);
            ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
            for (unsigned t = 0; t < idx->ntables; t++) {
                const struct ix_perm *p = &idx->perm[t];
                CU_ASSERT(p->nrot >= 1 && p->nrot <= p->nseg);
                if (d.levels == 1) /* one level: PEXT wherever the CPU has a fast one */
                    CU_ASSERT(p->pext == ix_pext_fast());
                npext += p->pext;
                for (int i = 0; i < 200; i++) {
                    uint64_t x = rnd(), y = 0;
                    for (unsigned g = 0; g < p->nseg; g++)
                        y |= ((x >> p->seg[g].src) & p->seg[g].mask) << p->seg[g].dst;
                    bad += ix_permute(p, x) != y || ix_unpermute(p, y) != x;
                    bad += (y & p->keyhi) != ix_permute(p, x & p->keymask);
                }
            }
            dedup_index_free(idx);
        }
    }
    ASSERT_EQ(bad, 0);
    if (ix_pext_fast())
        CU_ASSERT(npext > 0);
}

struct many_check {
    const uint64_t *v, *q;
    size_t n, calls, stop_at;
    unsigned k;
    int bad;
};

static int many_cb(void *ud, size_t i, enum dedup_code rc, const struct dedup_matches *m)
{
    struct many_check *c = ud;
    if (i != c->calls++ || rc != DEDUP_OK)
        c->bad++;
    size_t want = 0;
    for (size_t j = 0; j < c->n; j++)
        want += dedup_distance(c->v[j], c->q[i]) <= c->k;
    if (m->n != want)
        c->bad++;
    for (size_t j = 0; j < m->n; j++) {
        if (m->v[j].doc >= c->n || dedup_distance(c->v[m->v[j].doc], c->q[i]) != m->v[j].distance)
            c->bad++;
        if (j && (m->v[j - 1].distance > m->v[j].distance ||
                  (m->v[j - 1].distance == m->v[j].distance && m->v[j - 1].doc >= m->v[j].doc)))
            c->bad++;
    }
    return c->stop_at && i + 1 == c->stop_at;
}

/* The batched queries (dedup_index_nearest_many, dedup_index_query_many: a pipeline over
 * the batch) answer as brute force and as one query at a time, for k 0..7, with the main
 * tables alone and with a delta, batches shorter and longer than the pipeline's depth. */
static void test_index_batched_queries(void)
{
    for (unsigned k = 0; k <= DEDUP_K_MAX; k++) {
        rng_state = 300 + k;
        size_t n = 5000, nq = 300; /* 5000 > IX_DELTA_MIN: the first query compacts */
        uint64_t *v = make_set(n + 400, k);
        uint64_t *q = malloc(nq * sizeof *q);
        uint32_t *doc = malloc(nq * sizeof *doc);
        unsigned *dist = malloc(nq * sizeof *dist);
        unsigned char *found = malloc(nq);
        CU_ASSERT_FATAL(q && doc && dist && found);
        struct dedup_index *idx = build(v, n, k, 0);
        for (int delta = 0; delta < 2; delta++) {
            if (delta) { /* 400 more: in the delta, beside the main tables */
                for (size_t i = n; i < n + 400; i++)
                    ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "d", 1, NULL), DEDUP_OK);
                n += 400;
            }
            for (size_t i = 0; i < nq; i++)
                q[i] = i % 3 ? flip_bits(v[rnd() % n], (unsigned)(rnd() % (k + 2))) : rnd();
            size_t sizes[] = {0, 1, 3, 37, nq};
            for (unsigned kq = 0; kq <= k; kq++)
                for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                    size_t m = sizes[si];
                    int bad = 0;
                    ASSERT_EQ_FATAL(dedup_index_nearest_many(idx, m, q, kq, doc, dist, found),
                                    DEDUP_OK);
                    for (size_t i = 0; i < m; i++) {
                        uint32_t d1;
                        unsigned s1;
                        int f1;
                        ASSERT_EQ_FATAL(dedup_index_nearest(idx, q[i], kq, &d1, &s1, &f1),
                                        DEDUP_OK);
                        bad += found[i] != f1 || (f1 && (doc[i] != d1 || dist[i] != s1));
                        bad += check_query(idx, v, n, q[i], kq); /* one at a time: brute */
                    }
                    struct many_check c = {v, q, n, 0, 0, kq, 0};
                    int stopped = -1;
                    ASSERT_EQ_FATAL(dedup_index_query_many(idx, m, q, kq, many_cb, &c, &stopped),
                                    DEDUP_OK);
                    ASSERT_EQ(stopped, 0);
                    ASSERT_EQ(c.calls, m);
                    ASSERT_EQ(bad + c.bad, 0);
                }
            /* a callback's stop, and k above the index's */
            struct many_check c = {v, q, n, 0, 5, k, 0};
            int stopped = 0;
            ASSERT_EQ(dedup_index_query_many(idx, nq, q, k, many_cb, &c, &stopped), DEDUP_OK);
            ASSERT_EQ(stopped, 1);
            ASSERT_EQ(c.calls, 5);
            ASSERT_EQ(dedup_index_nearest_many(idx, nq, q, k + 1, doc, dist, found), DEDUP_EINVAL);
            ASSERT_EQ(dedup_index_query_many(idx, nq, q, k + 1, many_cb, &c, NULL), DEDUP_EINVAL);
            CU_ASSERT(idx->nmain > 0 && (delta ? idx->ndelta > 0 : idx->ndelta == 0));
        }
        dedup_index_free(idx);
        free(v);
        free(q);
        free(doc);
        free(dist);
        free(found);
    }
}

/* A crawler's pattern: query, then add; crosses several compactions. */
static void test_index_online_interleaved(void)
{
    rng_state = 11;
    size_t n = 14000;
    uint64_t *v = make_set(n, 3);
    struct dedup_design d;
    struct dedup_index *idx;
    ASSERT_EQ_FATAL(dedup_design_choose(3, 1000000, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 7 == 0 || i > n - 200)
            bad += check_query(idx, v, i, v[i], 3);
        uint32_t doc;
        ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, &doc), DEDUP_OK);
        ASSERT_EQ(doc, i);
    }
    ASSERT_EQ(bad, 0);
    CU_ASSERT(idx->nmain > 0); /* compactions happened */
    check_pairs(idx, v, n, 3, 1);
    dedup_index_free(idx);
    free(v);
}

/* The crawler's pattern, query then add, for every k = 0..7: every answer against brute
 * force, the delta's stored heads too (a copy of the document added just before is found
 * in the delta, its head that document), through the merges of the delta. */
static void test_index_online_every_k(void)
{
    for (unsigned k = 0; k <= 7; k++) {
        rng_state = 101 + k;
        size_t n = 9000;
        uint64_t *v = make_set(n, k);
        for (size_t i = 1; i < n; i += 41)
            v[i] = v[i - 1];
        struct dedup_design d;
        struct dedup_index *idx;
        ASSERT_EQ_FATAL(dedup_design_choose(k, n, 0, &d), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
        int bad = 0;
        size_t in_delta = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 3 == 0 || i % 41 == 1) {
                bad += check_query(idx, v, i, v[i], k);
                bad += check_query(idx, v, i, flip_bits(v[i], k), k);
                in_delta += idx->ndelta > 0;
            }
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, NULL), DEDUP_OK);
        }
        ASSERT_EQ(bad, 0);
        CU_ASSERT(in_delta > 0);
        CU_ASSERT(idx->nmain > 0); /* a merge happened */
        dedup_index_free(idx);
        free(v);
    }
}

/* Query then add of the same fingerprint, the crawler's pattern: the add reuses the
 * query's probe (qc_on) when the query found no exact match. k = 0..7 through the merges,
 * against brute force, with the cases around that reuse: exact copies (the query finds
 * them: no reuse), a query of one fingerprint then the add of another, two adds after one
 * query, a query whose add is dropped (dedup_index_drop_pending) and another document
 * added in its place, and both query calls. Every fingerprint's list is checked at the
 * end (its documents in order, by a query at distance 0). */
static void test_index_online_query_then_add(void)
{
    for (unsigned k = 0; k <= 7; k++) {
        rng_state = 707 + k;
        size_t n = 9000;
        uint64_t *v = make_set(n, k);
        for (size_t i = 1; i < n; i += 37)
            v[i] = v[i - 1];
        uint64_t *added = malloc(n * sizeof *added); /* the fingerprint of each document */
        CU_ASSERT_FATAL(added != NULL);
        struct dedup_design d;
        struct dedup_index *idx;
        ASSERT_EQ_FATAL(dedup_design_choose(k, n, 0, &d), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
        int bad = 0;
        size_t kept = 0, docs = 0;
        for (size_t i = 0; i < n; i++) {
            struct dedup_matches m = {0};
            uint32_t doc;
            unsigned dist;
            int hit;
            /* the query: of v[i] (one call or the other), or now and then of another value */
            uint64_t q = i % 11 == 5 ? flip_bits(v[i], 1 + (unsigned)(i % 3)) : v[i];
            if (i % 2) {
                ASSERT_EQ_FATAL(dedup_index_query(idx, q, k, &m), DEDUP_OK);
                hit = m.n > 0 && m.v[0].distance == 0;
            } else {
                ASSERT_EQ_FATAL(dedup_index_nearest(idx, q, k, &doc, &dist, &hit), DEDUP_OK);
                hit = hit && dist == 0;
            }
            dedup_matches_release(&m);
            if (idx->qc_on != !hit)
                bad++; /* kept exactly when no exact match was found */
            kept += idx->qc_on;
            if (i % 13 == 7) { /* the add dropped, another document in its place */
                uint32_t gone;
                ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "y", 1, &gone), DEDUP_OK);
                ASSERT_EQ_FATAL(dedup_index_drop_pending(idx, &gone, 1), DEDUP_OK);
                added[docs++] = v[n - 1 - i];
                ASSERT_EQ_FATAL(dedup_index_add(idx, v[n - 1 - i], "x", 1, NULL), DEDUP_OK);
                continue;
            }
            added[docs++] = v[i];
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, NULL), DEDUP_OK);
            if (i % 7 == 3 && i + 1 < n) { /* two adds after one query */
                i++;
                added[docs++] = v[i];
                ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, NULL), DEDUP_OK);
            }
            if (i % 97 == 0)
                bad += check_query(idx, added, docs, flip_bits(v[i], k), k);
        }
        CU_ASSERT(kept > n / 2);
        CU_ASSERT(idx->nmain > 0); /* merges happened */
        /* every document on its fingerprint's list, in order, once */
        for (size_t i = 0; i < docs; i += 1 + i % 3) {
            struct dedup_matches m = {0};
            ASSERT_EQ_FATAL(dedup_index_query(idx, added[i], 0, &m), DEDUP_OK);
            size_t want = 0, at = 0;
            for (size_t j = 0; j < docs; j++)
                if (added[j] == added[i]) {
                    want++;
                    if (at < m.n && m.v[at].doc == j)
                        at++;
                }
            if (m.n != want || at != want)
                bad++;
            dedup_matches_release(&m);
        }
        ASSERT_EQ(bad, 0);
        dedup_index_free(idx);
        free(added);
        free(v);
    }
}

/* The delta with crowded buckets: fingerprints sharing their top 24 bits (one bucket of
 * table 0's delta, and of every table whose key starts there), added one by one after a
 * query and in bursts absorbed at once, then merged (the buckets' sorts past 32 entries:
 * delta_records, delta_sorted), against brute force for k = 0..7, with copies. */
static void test_index_online_crowded(void)
{
    for (unsigned k = 0; k <= 7; k++) {
        rng_state = 909 + k;
        size_t n = 6000;
        uint64_t *v = malloc(n * sizeof *v);
        CU_ASSERT_FATAL(v != NULL);
        const uint64_t top = rnd() & ~(UINT64_MAX >> 24);
        for (size_t i = 0; i < n; i++)
            v[i] = i % 17 == 5 ? v[i - 3] : i % 5 == 1 ? flip_bits(v[i - 1], 1 + (unsigned)(i % 3)) & (UINT64_MAX >> 24) : rnd() >> 24;
        for (size_t i = 0; i < n; i++)
            v[i] |= top;
        struct dedup_design d;
        struct dedup_index *idx;
        ASSERT_EQ_FATAL(dedup_design_choose(k, n, 0, &d), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
        int bad = 0;
        size_t crowded = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 400 < 300 || i % 400 == 399) { /* query then add; else a burst */
                uint32_t doc;
                unsigned dist;
                int hit;
                ASSERT_EQ_FATAL(dedup_index_nearest(idx, v[i], k, &doc, &dist, &hit), DEDUP_OK);
                if (idx->ndelta &&
                    idx->dbucket[0][ix_top_below64(top, idx->dd_bits)].n > 32)
                    crowded++;
            }
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, NULL), DEDUP_OK);
            if (i % 101 == 0)
                bad += check_query(idx, v, i + 1, flip_bits(v[i], k % 3), k);
        }
        for (size_t i = 0; i < n; i += 7)
            bad += check_query(idx, v, n, v[i], k);
        ASSERT_EQ(bad, 0);
        CU_ASSERT(crowded > 0);
        CU_ASSERT(idx->nmain > 0);
        dedup_index_free(idx);
        free(v);
    }
}

/* dedup_index_add_many: the same documents as one dedup_index_add each (numbers, ids,
 * fingerprints, pairs), added after single adds, and bad batches refused unchanged; with
 * threads > 1 and a batch large enough to be split, a bad entry in the last part too. */
static void add_many_case(size_t n, unsigned threads)
{
    rng_state = 23;
    uint64_t *v = make_set(n, 3);
    struct dedup_design d;
    struct dedup_index *one, *many;
    ASSERT_EQ_FATAL(dedup_design_choose(3, n, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &one), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &many), DEDUP_OK);
    char *ids = malloc(n * 16);
    uint64_t *end = malloc(n * sizeof *end);
    CU_ASSERT_FATAL(ids && end);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char id[16];
        int l = i % 5 ? snprintf(id, sizeof id, "doc%zu", i) : 0; /* every 5th empty */
        id[l] = '\0';
        ASSERT_EQ_FATAL(dedup_index_add(one, v[i], id, (size_t)l, NULL), DEDUP_OK);
        memcpy(ids + len, id, (size_t)l + 1);
        len += (size_t)l + 1;
        end[i] = len;
    }
    /* 10 single adds first, then the rest in one batch */
    size_t first = 10, base = end[first - 1];
    for (size_t i = 0; i < first; i++) {
        size_t l;
        const char *id = dedup_index_id(one, (uint32_t)i, &l);
        ASSERT_EQ_FATAL(dedup_index_add(many, v[i], id, l, NULL), DEDUP_OK);
    }
    uint64_t *rel = malloc(n * sizeof *rel);
    CU_ASSERT_FATAL(rel != NULL);
    for (size_t i = first; i < n; i++)
        rel[i - first] = end[i] - base;
    /* refused: an id without its NUL, ends not increasing; the index unchanged */
    ids[end[first + 3] - 1] = 'x';
    ASSERT_EQ(dedup_index_add_many(many, n - first, v + first, ids + base, rel, threads),
              DEDUP_EINVAL);
    ids[end[first + 3] - 1] = '\0';
    uint64_t keep = rel[5];
    rel[5] = rel[4];
    ASSERT_EQ(dedup_index_add_many(many, n - first, v + first, ids + base, rel, threads),
              DEDUP_EINVAL);
    rel[5] = keep;
    ids[end[n - 3] - 1] = 'x'; /* the last part's */
    ASSERT_EQ(dedup_index_add_many(many, n - first, v + first, ids + base, rel, threads),
              DEDUP_EINVAL);
    ids[end[n - 3] - 1] = '\0';
    ASSERT_EQ(dedup_index_doc_count(many), first);
    ASSERT_EQ(dedup_index_add_many(many, 0, NULL, NULL, NULL, threads), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_add_many(many, n - first, v + first, ids + base, rel, threads),
                    DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_doc_count(many), n);
    int diff = 0;
    for (size_t i = 0; i < n; i++) {
        size_t la, lb;
        const char *a = dedup_index_id(one, (uint32_t)i, &la);
        const char *b = dedup_index_id(many, (uint32_t)i, &lb);
        diff += la != lb || memcmp(a, b, la) != 0 || b[lb] != '\0' ||
                dedup_index_fingerprint(many, (uint32_t)i) != v[i];
    }
    ASSERT_EQ(diff, 0);
    if (n <= 3000) /* checked against brute force: small sets only */
        check_pairs(many, v, n, 3, 1);
    dedup_index_free(one);
    dedup_index_free(many);
    free(ids);
    free(end);
    free(rel);
    free(v);
}

static void test_index_add_many(void)
{
    add_many_case(3000, 1);
    add_many_case(3000, 2);
    add_many_case(200000, 2); /* split in two parts */
    add_many_case(200000, 3);
}

/* Spans (dedup_index_span_open/add/close): documents written above room left for adds,
 * the adds then made below, the whole the same as one dedup_index_add each (numbers, ids,
 * fingerprints, pairs); `slack` documents and `slack_bytes` id bytes of the room left
 * unused, so the span is moved down when it closes (0, 0: nothing moves). The adds cannot
 * reach the span; another span or a batch is refused while one is open. */
static void span_case(size_t n, size_t below, uint64_t slack, uint64_t slack_bytes)
{
    rng_state = 29;
    uint64_t *v = make_set(n, 3);
    struct dedup_design d;
    struct dedup_index *one, *sp;
    ASSERT_EQ_FATAL(dedup_design_choose(3, n, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &one), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &sp), DEDUP_OK);
    char id[32];
    uint64_t bytes_below = 0;
    for (size_t i = 0; i < n; i++) {
        int l = i % 5 ? snprintf(id, sizeof id, "doc%zu", i) : 0; /* every 5th empty */
        ASSERT_EQ_FATAL(dedup_index_add(one, v[i], id, (size_t)l, NULL), DEDUP_OK);
        if (i >= 7 && i < 7 + below)
            bytes_below += (uint64_t)l + 1;
    }
    for (size_t i = 0; i < 7; i++) { /* a few documents before the span opens */
        size_t l;
        const char *x = dedup_index_id(one, (uint32_t)i, &l);
        ASSERT_EQ_FATAL(dedup_index_add(sp, v[i], x, l, NULL), DEDUP_OK);
    }
    struct dedup_index_span s, s2;
    size_t rest = n - 7 - below;
    ASSERT_EQ_FATAL(dedup_index_span_open(sp, below + slack, bytes_below + slack_bytes, rest + 1,
                                          rest * 16, &s),
                    DEDUP_OK);
    ASSERT_EQ(dedup_index_span_open(sp, 0, 0, 1, 1, &s2), DEDUP_EINVAL);
    ASSERT_EQ(dedup_index_add_many(sp, 0, NULL, NULL, NULL, 1), DEDUP_OK);
    for (size_t i = 7 + below; i < n; i++) {
        size_t l;
        const char *x = dedup_index_id(one, (uint32_t)i, &l);
        ASSERT_EQ_FATAL(dedup_index_span_add(&s, v[i], x, l), DEDUP_OK);
    }
    ASSERT_EQ(dedup_index_span_add(&s, v[0], "a\0b", 3), DEDUP_EINVAL);
    for (size_t i = 7; i < 7 + below; i++) {
        size_t l;
        const char *x = dedup_index_id(one, (uint32_t)i, &l);
        ASSERT_EQ_FATAL(dedup_index_add(sp, v[i], x, l, NULL), DEDUP_OK);
    }
    if (slack == 0) /* the room below is full: one more add would reach the span */
        ASSERT_EQ(dedup_index_add(sp, v[0], "more", 4, NULL), DEDUP_ETOOLARGE);
    ASSERT_EQ(dedup_index_doc_count(sp), 7 + below);
    ASSERT_EQ_FATAL(dedup_index_span_close(sp, &s), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_doc_count(sp), n);
    int diff = 0;
    for (size_t i = 0; i < n; i++) {
        size_t la, lb;
        const char *a = dedup_index_id(one, (uint32_t)i, &la);
        const char *b = dedup_index_id(sp, (uint32_t)i, &lb);
        diff += la != lb || memcmp(a, b, la) != 0 || b[lb] != '\0' ||
                dedup_index_fingerprint(sp, (uint32_t)i) != v[i];
    }
    ASSERT_EQ(diff, 0);
    if (n <= 3000) /* checked against brute force: small sets only */
        check_pairs(sp, v, n, 3, 1);
    /* adds go on after the span, and a dropped span leaves nothing */
    ASSERT_EQ_FATAL(dedup_index_add(sp, v[1], "after", 5, NULL), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_span_open(sp, 0, 0, 4, 64, &s2), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_span_add(&s2, v[2], "dropped", 7), DEDUP_OK);
    dedup_index_span_drop(sp, &s2);
    ASSERT_EQ(dedup_index_doc_count(sp), n + 1);
    size_t l;
    ASSERT_EQ(strcmp(dedup_index_id(sp, (uint32_t)n, &l), "after"), 0);
    dedup_index_free(one);
    dedup_index_free(sp);
    free(v);
}

static void test_index_span(void)
{
    span_case(3000, 1000, 0, 0);   /* exact: nothing moves */
    span_case(3000, 1000, 5, 100); /* a gap closed */
    span_case(3000, 0, 0, 7);      /* no adds below, id bytes only */
    span_case(200000, 90000, 3, 0);
}

static void test_index_pairs_once_threads(void)
{
    rng_state = 5;
    size_t n = 6000;
    uint64_t *v = make_set(n, 3);
    struct dedup_index *idx = build(v, n, 3, 4);
    check_pairs(idx, v, n, 3, 1);
    check_pairs(idx, v, n, 3, 2);
    /* min_b: only pairs whose later member is >= min_b */
    struct pair_check c = {v, 3, 0, 0, 0, 0};
    ASSERT_EQ(dedup_index_pairs(idx, 3, 2, 5000, pair_cb, &c, NULL), DEDUP_OK);
    uint64_t want = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            want += j >= 5000 && dedup_distance(v[i], v[j]) <= 3;
    ASSERT_EQ(c.count, want);
    ASSERT_EQ(c.bad, 0);
    dedup_index_free(idx);
    free(v);
}

/* Many documents with one fingerprint (empty pages): one table entry, lists in order. */
static void test_index_identical_fingerprints(void)
{
    rng_state = 9;
    size_t n = 3000;
    uint64_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = i % 3 == 0 ? rnd() : 0x5555aaaa5555aaaaull;
    struct dedup_index *idx = build(v, n, 3, 0);
    struct dedup_index_stats st;
    ASSERT_EQ_FATAL(dedup_index_stats(idx, &st), DEDUP_OK);
    ASSERT_EQ(st.docs, n);
    ASSERT_EQ(st.distinct, n / 3 + 1);
    CU_ASSERT(st.bucket_max < 64); /* the 2000 copies take one slot */
    struct dedup_matches m = {0};
    ASSERT_EQ(dedup_index_query(idx, 0x5555aaaa5555aaabull, 3, &m), DEDUP_OK);
    ASSERT_EQ(m.n, 2000);
    ASSERT_EQ(m.v[0].doc, 1);
    ASSERT_EQ(m.v[0].distance, 1);
    dedup_matches_release(&m);
    check_pairs(idx, v, n, 3, 2);
    dedup_index_free(idx);
    free(v);
}

/* More document pairs than the direct expansion takes (2^24), so the per-document
 * expansion runs, and more than its second thread may buffer (2^20): the rest is expanded
 * after the replay, and the order and count stay exact. */
static void test_index_pairs_buffer_overflow(void)
{
    rng_state = 13;
    size_t n = 8000; /* 6000 near-identical documents: 18M pairs, 4.5M in the upper half */
    uint64_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = i % 4 == 0 ? rnd() : 0x0123456789abcdefull ^ (i % 8 == 1 ? 1 : 0);
    struct dedup_index *idx = build(v, n, 3, 0);
    check_pairs(idx, v, n, 3, 2);
    dedup_index_free(idx);
    free(v);
}

/* All pairs of a fresh index above the threads' threshold (65,536 distinct): table 0
 * only, the other tables streamed through one buffer by two threads (pairs.c
 * stream_pairs), against the same documents paired over fully built tables (a query
 * first builds them), list for list; then a query on the streamed index builds its tables
 * (ix_tables_ready) and answers as brute force does; 600,000 documents also take the
 * document arrays past the size where they become mappings grown by mremap. */
struct pair_list {
    uint64_t *v;
    size_t n, cap;
};

static int list_cb(void *ud, uint32_t a, uint32_t b, unsigned distance)
{
    struct pair_list *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (uint64_t)a << 36 | (uint64_t)b << 4 | distance;
    return 0;
}

/* Two indexes of the same design (k 3, tables; 0: auto) holding v[0..n) with empty ids. */
static void twin_indexes(const uint64_t *v, size_t n, unsigned tables, struct dedup_index **a,
                         struct dedup_index **b)
{
    struct dedup_design d;
    ASSERT_EQ_FATAL(dedup_design_choose(3, n, tables, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, a), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, b), DEDUP_OK);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ_FATAL(dedup_index_add(*a, v[i], "", 0, NULL), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_index_add(*b, v[i], "", 0, NULL), DEDUP_OK);
    }
}

static void test_index_pairs_streamed_threads(void)
{
    rng_state = 21;
    size_t n = 600000;
    uint64_t *v = make_set(n, 3);
    for (unsigned k = 3; k <= 3; k++) {
        struct dedup_index *a, *b;
        twin_indexes(v, n, 10, &a, &b);
        struct dedup_matches m = {0};
        ASSERT_EQ(dedup_index_query(b, v[0], 3, &m), DEDUP_OK); /* builds b's tables */
        CU_ASSERT(!b->lazy);
        struct pair_list la = {0}, lb = {0};
        ASSERT_EQ(dedup_index_pairs(a, k, 2, 0, list_cb, &la, NULL), DEDUP_OK);
        CU_ASSERT(a->lazy); /* streamed: only table 0 was built */
        ASSERT_EQ(dedup_index_pairs(b, k, 1, 0, list_cb, &lb, NULL), DEDUP_OK);
        CU_ASSERT(la.n > 40000);
        ASSERT_EQ(la.n, lb.n);
        CU_ASSERT(la.n == lb.n && memcmp(la.v, lb.v, la.n * sizeof *la.v) == 0);
        int bad = 0;
        for (size_t i = 0; i + 1 < la.n; i++)
            bad += la.v[i] >= la.v[i + 1]; /* (a, b) strictly increasing */
        ASSERT_EQ(bad, 0);
        for (int q = 0; q < 20; q++)
            bad += check_query(a, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
        ASSERT_EQ(bad, 0);
        CU_ASSERT(!a->lazy);
        dedup_matches_release(&m);
        free(la.v);
        free(lb.v);
        dedup_index_free(a);
        dedup_index_free(b);
    }
    free(v);
}

/* The run check the CPU picks (AVX-512 VPOPCNTDQ where there is one) finds what the
 * scalar one does, pair for pair, for every run length 2..64 and k 0..7, on runs of
 * fingerprints a few bits apart (so every k has hits) and of random ones. */
static void test_index_near_pairs(void)
{
    ix_near_fn best = ix_near_pick();
    uint64_t s[64];
    uint32_t a[64 * 63 / 2], b[64 * 63 / 2];
    int bad = 0;
    size_t hits = 0;
    rng_state = 31;
    for (int round = 0; round < 40; round++) {
        uint64_t base = rnd();
        for (size_t i = 0; i < 64; i++)
            s[i] = round % 4 == 3 ? rnd() : flip_bits(base, (unsigned)(rnd() % 6));
        for (size_t n = 2; n <= 64; n++)
            for (unsigned k = 0; k <= 7; k++) {
                size_t na = best(s, n, k, a), nb = ix_near_pairs_scalar(s, n, k, b);
                hits += na;
                bad += na != nb || memcmp(a, b, na * sizeof *a) != 0;
            }
    }
    ASSERT_EQ(bad, 0);
    CU_ASSERT(hits > 100000);
}

/* A block of `bytes` filled with junk, as a caller's finished arrays would be. */
static void *junk_block(size_t bytes)
{
    unsigned char *p = malloc(bytes);
    for (size_t i = 0; p && i < bytes; i++)
        p[i] = (unsigned char)(i * 131 + 7);
    return p;
}

/* Scratch blocks handed over (dedup_index_give_scratch, as simcrawl pairs does with the
 * duplicate-id check's arrays) are what the compaction and the streamed tables work in:
 * the pairs are those of an index without them, list for list, and brute force's; blocks
 * too small or never used are freed (the sanitizer build checks for leaks). */
static void test_index_scratch(void)
{
    rng_state = 29;
    size_t n = 100000;
    uint64_t *v = make_set(n, 3);
    struct dedup_index *a, *b;
    twin_indexes(v, n, 0, &a, &b);
    dedup_index_give_scratch(a, junk_block(n * 8), n * 8);
    dedup_index_give_scratch(a, junk_block(n * 4), n * 4);
    dedup_index_give_scratch(a, junk_block(n * 8), n * 8);
    dedup_index_give_scratch(a, junk_block(64), 64);
    dedup_index_give_scratch(a, junk_block(64), 64); /* a fifth: freed at once */
    dedup_index_give_scratch(a, NULL, 0);
    struct pair_list la = {0}, lb = {0};
    ASSERT_EQ(dedup_index_pairs(a, 3, 2, 0, list_cb, &la, NULL), DEDUP_OK);
    ASSERT_EQ(dedup_index_pairs(b, 3, 2, 0, list_cb, &lb, NULL), DEDUP_OK);
    CU_ASSERT(la.n > 5000);
    ASSERT_EQ(la.n, lb.n);
    CU_ASSERT(la.n == lb.n && memcmp(la.v, lb.v, la.n * sizeof *la.v) == 0);
    for (unsigned i = 0; i < IX_SCRATCH_MAX; i++)
        CU_ASSERT(a->scratch[i] == NULL); /* used or freed by the pairs */
    int bad = 0;
    for (int q = 0; q < 20; q++)
        bad += check_query(a, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
    ASSERT_EQ(bad, 0);
    free(la.v);
    free(lb.v);
    dedup_index_free(a);
    dedup_index_free(b);

    /* brute force, one thread; then an index given blocks and freed unused */
    size_t m = 6000;
    struct dedup_index *c = build(v, m, 3, 0);
    dedup_index_give_scratch(c, junk_block(m * 8), m * 8);
    dedup_index_give_scratch(c, junk_block(m * 4), m * 4);
    check_pairs(c, v, m, 3, 1);
    dedup_index_free(c);
    c = build(v, m, 3, 0);
    dedup_index_give_scratch(c, junk_block(m * 8), m * 8);
    dedup_index_free(c);
    free(v);
}

/* 1 when the mapping holding p has the huge-page advice (VmFlags "hg" in
 * /proc/self/smaps), 0 when not, -1 when it cannot be told. */
static int vma_huge(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, r = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a >= lo && a < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            r = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return r;
}

/* Large blocks ask for transparent huge pages (ix_huge_advise: on this project's VM a
 * fresh 4 KiB page costs ~10 us at its first write, a huge page far less): the document
 * arrays, grown by mremap past the advice (advice on part of a mapping would split it and
 * the next mremap fail: every add must succeed), and table 0 after the compaction; the
 * answers stay exact (queries against brute force, pairs well formed and in order, the
 * same count on one and two threads). The flags are checked only where the kernel takes
 * the advice. */
static void test_index_huge_pages(void)
{
    rng_state = 41;
    size_t n = 1200000; /* the arrays pass 4 MiB and grow by mremap after it */
    uint64_t *v = make_set(n, 3);
    struct dedup_design d;
    struct dedup_index *a = NULL, *b = NULL;
    ASSERT_EQ_FATAL(dedup_design_choose(3, n, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &a), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &b), DEDUP_OK);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += dedup_index_add(a, v[i], "", 0, NULL) != DEDUP_OK;
        bad += dedup_index_add(b, v[i], "x", 1, NULL) != DEDUP_OK;
    }
    ASSERT_EQ(bad, 0);
    ASSERT_EQ(dedup_index_doc_count(a), n);
    long pg = sysconf(_SC_PAGESIZE);
    void *probe = malloc((size_t)8 << 20);
    int kernel_takes = 0;
#ifdef MADV_HUGEPAGE
    if (probe && pg > 0) {
        uintptr_t s = ((uintptr_t)probe + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
        kernel_takes = madvise((void *)s, (size_t)4 << 20, MADV_HUGEPAGE) == 0;
    }
#endif
    free(probe);
    if (kernel_takes) {
        CU_ASSERT_EQUAL(vma_huge(a->doc_fp), 1);
        CU_ASSERT_EQUAL(vma_huge(a->doc_next), 1);
        CU_ASSERT_EQUAL(vma_huge(a->id_off), 1);
    }
    struct pair_check ca = {v, 3, 0, 0, 0, 0}, cb = {v, 3, 0, 0, 0, 0};
    ASSERT_EQ(dedup_index_pairs(a, 3, 1, 0, pair_cb, &ca, NULL), DEDUP_OK);
    ASSERT_EQ(dedup_index_pairs(b, 3, 2, 0, pair_cb, &cb, NULL), DEDUP_OK);
    ASSERT_EQ(ca.bad, 0);
    ASSERT_EQ(cb.bad, 0);
    ASSERT_EQ(ca.count, cb.count);
    CU_ASSERT(ca.count > n / 2); /* the planted families */
#ifndef __SANITIZE_ADDRESS__ /* ASan's realloc moves the shrunk table 0 to a block of its own */
    if (kernel_takes)
        CU_ASSERT_EQUAL(vma_huge(a->tab[0]), 1);
#endif
    for (int q = 0; q < 30; q++)
        bad += check_query(a, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
    ASSERT_EQ(bad, 0);
    dedup_index_free(a);
    dedup_index_free(b);
    free(v);
}

/* Lists read straight into an index (cmd_pairs): the design set once the count is known,
 * and the later documents of a repeated id dropped while still pending. */
static void test_index_set_design_and_drop(void)
{
    rng_state = 23;
    size_t n = 4000;
    uint64_t *v = make_set(n, 3);
    struct dedup_design d0, d10;
    struct dedup_index *idx;
    ASSERT_EQ_FATAL(dedup_design_choose(3, 0, 0, &d0), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_design_choose(3, n, 10, &d10), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d0, &idx), DEDUP_OK);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        int len = snprintf(id, sizeof id, "doc%zu", i);
        ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], id, (size_t)len, NULL), DEDUP_OK);
    }
    ASSERT_EQ(dedup_index_set_design(idx, &d10), DEDUP_OK);
    ASSERT_EQ(dedup_index_design(idx)->tables, 10);
    /* drop three documents: the others move down, ids and fingerprints with them */
    uint32_t drop[3] = {2, 1000, (uint32_t)n - 1}, bad[2] = {5, 5};
    ASSERT_EQ(dedup_index_drop_pending(idx, bad, 2), DEDUP_EINVAL); /* not ascending */
    ASSERT_EQ(dedup_index_drop_pending(idx, drop, 3), DEDUP_OK);
    ASSERT_EQ(dedup_index_doc_count(idx), n - 3);
    uint64_t *w = malloc(n * sizeof *w);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != 2 && i != 1000 && i != n - 1)
            w[m++] = v[i];
    size_t len;
    CU_ASSERT_STRING_EQUAL(dedup_index_id(idx, 2, &len), "doc3");
    CU_ASSERT_STRING_EQUAL(dedup_index_id(idx, 999, &len), "doc1001");
    ASSERT_EQ(len, 7);
    ASSERT_EQ(dedup_index_fingerprint(idx, 999), v[1001]);
    check_pairs(idx, w, m, 3, 2);
    /* past the first absorb neither is allowed */
    ASSERT_EQ(dedup_index_set_design(idx, &d0), DEDUP_EINVAL);
    uint32_t one = 0;
    ASSERT_EQ(dedup_index_drop_pending(idx, &one, 1), DEDUP_EINVAL);
    int badq = 0;
    for (int q = 0; q < 50; q++)
        badq += check_query(idx, w, m, flip_bits(w[rnd() % m], (unsigned)(rnd() % 5)), 3);
    ASSERT_EQ(badq, 0);
    free(w);
    dedup_index_free(idx);
    free(v);
}

static void test_index_clusters_deterministic(void)
{
    /* docs: 0 A, 1 r, 2 A+1bit, 3 B, 4 A+2bits(from 2: chain), 5 B, 6 r, 7 C, 8 C+3 */
    uint64_t A = 0x0f0f0f0f0f0f0f0full, B = 0x123456789abcdef0ull, C = 0xfedcba9876543210ull;
    uint64_t v[9] = {A, 0x1111111111111111ull, A ^ 1, B,    A ^ 1 ^ 6,
                     B, 0x7777777777777777ull, C,     C ^ 7};
    struct dedup_clusters *c[2];
    for (unsigned th = 1; th <= 2; th++) {
        struct dedup_index *idx = build(v, 9, 3, 0);
        ASSERT_EQ_FATAL(dedup_index_clusters(idx, 3, th, &c[th - 1]), DEDUP_OK);
        dedup_index_free(idx);
    }
    struct dedup_clusters *x = c[0];
    ASSERT_EQ_FATAL(dedup_clusters_count(x), 3);
    ASSERT_EQ(dedup_clusters_size(x, 0), 3); /* A family, largest first */
    ASSERT_EQ(dedup_clusters_member(x, 0, 0), 0);
    ASSERT_EQ(dedup_clusters_member(x, 0, 1), 2);
    ASSERT_EQ(dedup_clusters_member(x, 0, 2), 4);
    ASSERT_EQ(dedup_clusters_size(x, 1), 2); /* ties by representative: B (3) then C */
    ASSERT_EQ(dedup_clusters_member(x, 1, 0), 3);
    ASSERT_EQ(dedup_clusters_member(x, 1, 1), 5);
    ASSERT_EQ(dedup_clusters_member(x, 2, 0), 7);
    ASSERT_EQ(dedup_clusters_doc_total(x), 7);
    ASSERT_EQ(dedup_clusters_count(c[1]), dedup_clusters_count(x));
    for (size_t i = 0; i < dedup_clusters_count(x); i++)
        for (size_t j = 0; j < dedup_clusters_size(x, i); j++)
            ASSERT_EQ(dedup_clusters_member(c[1], i, j), dedup_clusters_member(x, i, j));
    dedup_clusters_free(c[0]);
    dedup_clusters_free(c[1]);
}

static char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "/tmp/test_index_%ld_%s", (long)getpid(), name);
    return buf;
}

/* Every list of the main tables runs from head[i] through ascending documents to tail[i],
 * and the lists hold every document once: 0, else the number of faults. */
static int check_lists(const struct dedup_index *idx)
{
    int bad = 0;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < idx->nmain; i++) {
        uint32_t d = idx->head[i], last = d;
        for (; d != IX_NONE; d = idx->doc_next[d]) {
            bad += d < last || idx->doc_fp[d] != idx->tab[0][i];
            last = d;
            seen++;
        }
        bad += last != idx->tail[i];
    }
    return bad + (seen != idx->ndocs);
}

/* All pairs of a fresh index makes its tails after the streamed tables (compact_fresh,
 * ix_tails_finish: in the buffer's pages, from the heads and the groups of several
 * documents each thread noted): the lists and tails are whole, on one thread and two,
 * and the index then takes more documents of the same fingerprints, saves and loads
 * (the loader checks every list ends at its tail) and pairs as brute force does. */
static void test_index_tails_after_pairs(void)
{
    rng_state = 37;
    for (unsigned threads = 1; threads <= 2; threads++) {
        size_t n = 70000, m = 6000, extra = 800;
        uint64_t *v = make_set(n + extra, 3);
        for (size_t i = 1; i < n; i += 5)
            v[i] = v[rnd() % i]; /* groups of identical fingerprints */
        struct dedup_index *idx = build(v, n, 3, 0);
        struct pair_list l = {0};
        ASSERT_EQ(dedup_index_pairs(idx, 3, threads, 0, list_cb, &l, NULL), DEDUP_OK);
        CU_ASSERT(l.n > 10000);
        CU_ASSERT(idx->tail_buf == NULL && idx->tail_fix == NULL);
        ASSERT_EQ(check_lists(idx), 0);
        free(l.v);
        dedup_index_free(idx);

        /* a smaller one: more documents after the pairs, a save and a load */
        idx = build(v, m, 3, 0);
        check_pairs(idx, v, m, 3, threads);
        for (size_t i = m; i < m + extra; i++) {
            v[i] = i % 2 ? v[rnd() % m] : v[i];
            char id[32];
            int len = snprintf(id, sizeof id, "doc%zu", i);
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], id, (size_t)len, NULL), DEDUP_OK);
        }
        check_pairs(idx, v, m + extra, 3, threads);
        ASSERT_EQ(check_lists(idx), 0);
        char *path = tmp_path("tails.idx");
        ASSERT_EQ_FATAL(dedup_index_save(idx, path, NULL), DEDUP_OK);
        dedup_index_free(idx);
        ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, NULL), DEDUP_OK);
        check_pairs(idx, v, m + extra, 3, threads);
        dedup_index_free(idx);
        unlink(path);
        free(v);
    }
}

/* v[0..n) built into an index of 10 tables and saved as `name` in the tests' directory:
 * its path. */
static char *save_built(const uint64_t *v, size_t n, const char *name)
{
    struct dedup_index *idx = build(v, n, 3, 10);
    char *path = tmp_path(name);
    CU_ASSERT_FATAL(dedup_index_save(idx, path, NULL) == DEDUP_OK);
    dedup_index_free(idx);
    return path;
}

/* A loaded index answers as the one saved: 300 queries near its fingerprints, and all
 * pairs against brute force. */
static void check_answers(struct dedup_index *idx, const uint64_t *v, size_t n)
{
    int bad = 0;
    for (int q = 0; q < 300; q++)
        bad += check_query(idx, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
    ASSERT_EQ(bad, 0);
    check_pairs(idx, v, n, 3, 2);
}

static void test_index_save_load_roundtrip(void)
{
    rng_state = 21;
    size_t n = 5000;
    uint64_t *v = make_set(n, 3);
    char *path = save_built(v, n, "rt.idx");
    struct dedup_index *idx;
    struct dedup_file_error err;
    ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, &err), DEDUP_OK);
    ASSERT_EQ(dedup_index_doc_count(idx), n);
    ASSERT_EQ(dedup_index_design(idx)->tables, 10);
    ASSERT_EQ(dedup_index_pair_generation(idx), 0); /* none set */
    size_t len;
    CU_ASSERT_STRING_EQUAL(dedup_index_id(idx, 4321, &len), "doc4321");
    ASSERT_EQ(len, 7);
    ASSERT_EQ(dedup_index_fingerprint(idx, 17), v[17]);
    check_answers(idx, v, n);
    dedup_index_free(idx);
    unlink(path);
    free(v);
}

/* With DEDUP_INDEX_LOAD_OWN a file from 4 MiB on is read into a block of its own (huge
 * pages) instead of mapped: the same answers as the index it was saved from, and the same
 * errors for a cut or damaged file as the mapped road gives. */
static void test_index_load_large_file(void)
{
    rng_state = 29;
    size_t n = 60000;
    uint64_t *v = make_set(n, 3);
    char *path = save_built(v, n, "large.idx");
    struct dedup_index *idx;
    struct dedup_file_error err;
    struct stat st;
    ASSERT_EQ_FATAL(stat(path, &st), 0);
    CU_ASSERT_FATAL(st.st_size >= (off_t)4 << 20); /* else this tests the mapped road */
    ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, &err), DEDUP_OK);
    CU_ASSERT(idx->map_is_mmap && !idx->map_is_heap); /* without the flag: mapped */
    dedup_index_free(idx);
    ASSERT_EQ_FATAL(dedup_index_load(path, DEDUP_INDEX_LOAD_OWN, &idx, &err), DEDUP_OK);
    CU_ASSERT(idx->map_is_heap && !idx->map_is_mmap);
    ASSERT_EQ(dedup_index_doc_count(idx), n);
    CU_ASSERT_STRING_EQUAL(dedup_index_id(idx, 54321, NULL), "doc54321");
    check_answers(idx, v, n);
    dedup_index_free(idx);

    /* one byte in the body changed: the checksum names it */
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    ASSERT_EQ_FATAL(fseek(f, st.st_size / 2, SEEK_SET), 0);
    int c = fgetc(f);
    ASSERT_EQ_FATAL(fseek(f, st.st_size / 2, SEEK_SET), 0);
    fputc(c ^ 0x10, f);
    fclose(f);
    ASSERT_EQ(dedup_index_load(path, DEDUP_INDEX_LOAD_OWN, &idx, &err), DEDUP_ECHECKSUM);
    /* cut: shorter than its header says */
    ASSERT_EQ_FATAL(truncate(path, st.st_size - 4096), 0);
    ASSERT_EQ(dedup_index_load(path, DEDUP_INDEX_LOAD_OWN, &idx, &err), DEDUP_ETRUNCATED);
    ASSERT_EQ(err.offset, (uint64_t)st.st_size - 4096);
    unlink(path);
    free(v);
}

static void test_index_reopen_and_add(void)
{
    rng_state = 23;
    size_t n = 9000, first = 4000;
    uint64_t *v = make_set(n, 3);
    struct dedup_index *idx = build(v, first, 3, 0);
    char *path = tmp_path("reopen.idx");
    ASSERT_EQ_FATAL(dedup_index_save(idx, path, NULL), DEDUP_OK);
    dedup_index_free(idx);
    for (int round = 0; round < 2; round++) {
        size_t from = round ? 6500 : first, to = round ? n : 6500;
        ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, NULL), DEDUP_OK);
        int bad = 0;
        for (size_t i = from; i < to; i++) {
            if (i % 3 == 0)
                bad += check_query(idx, v, i, v[i], 3);
            char id[32];
            int len = snprintf(id, sizeof id, "doc%zu", i);
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], id, (size_t)len, NULL), DEDUP_OK);
        }
        ASSERT_EQ(bad, 0);
        CU_ASSERT_STRING_EQUAL(dedup_index_id(idx, 12, NULL), "doc12");
        /* the pair generation is kept by a writer that does not set it (round 1) */
        ASSERT_EQ(dedup_index_pair_generation(idx), round ? 0x123456789abcdefull : 0);
        if (!round)
            dedup_index_set_pair_generation(idx, 0x123456789abcdefull);
        ASSERT_EQ_FATAL(dedup_index_save(idx, path, NULL), DEDUP_OK);
        dedup_index_free(idx);
    }
    ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, NULL), DEDUP_OK);
    ASSERT_EQ(dedup_index_doc_count(idx), n);
    ASSERT_EQ(dedup_index_pair_generation(idx), 0x123456789abcdefull);
    check_pairs(idx, v, n, 3, 2);
    dedup_index_free(idx);
    unlink(path);
    free(v);
}

static enum dedup_code load_bytes(const uint8_t *b, size_t len, unsigned flags,
                                  struct dedup_file_error *err)
{
    struct dedup_index *idx = NULL;
    /* copy to an 8-aligned buffer as a mapped file would be */
    uint64_t *buf = malloc(len + 8);
    memcpy(buf, b, len);
    enum dedup_code rc = dedup_index_load_mem(buf, len, flags, &idx, err);
    dedup_index_free(idx);
    free(buf);
    return rc;
}

static void test_index_corrupt_files(void)
{
    rng_state = 31;
    size_t n = 500;
    uint64_t *v = make_set(n, 3);
    struct dedup_index *idx = build(v, n, 3, 0);
    char *path = tmp_path("bad.idx");
    ASSERT_EQ_FATAL(dedup_index_save(idx, path, NULL), DEDUP_OK);
    dedup_index_free(idx);
    size_t len = 0;
    uint8_t *b = (uint8_t *)test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    struct dedup_file_error err;
    ASSERT_EQ(load_bytes(b, len, 0, &err), DEDUP_OK);
    /* truncated anywhere */
    ASSERT_EQ(load_bytes(b, len - 1, 0, &err), DEDUP_ETRUNCATED);
    ASSERT_EQ(err.offset, len - 1);
    ASSERT_EQ(load_bytes(b, 100, 0, &err), DEDUP_ETRUNCATED);
    ASSERT_EQ(load_bytes(b, 4, 0, &err), DEDUP_EFORMAT);
    ASSERT_EQ(load_bytes(b, 0, 0, &err), DEDUP_EFORMAT);
    /* another version */
    uint8_t *c = malloc(len);
    memcpy(c, b, len);
    c[8] = 6;
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_EVERSION);
    ASSERT_EQ(err.offset, 8);
    for (uint8_t ver = 1; ver <= 4; ver++) { /* older fingerprints: rebuild */
        c[8] = ver;
        ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_EVERSION);
        ASSERT_EQ(err.offset, 8);
        CU_ASSERT(strstr(err.what, "rebuild") != NULL);
    }
    /* the pair generation at 96 is covered by the header checksum */
    memcpy(c, b, len);
    c[96] ^= 1;
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_ECHECKSUM);
    ASSERT_EQ(err.offset, 80);
    ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_OK);
    c[96] ^= 1;
    /* the fingerprint version at 104: another definition's fingerprints, rebuild */
    ASSERT_EQ(c[104], DEDUP_FINGERPRINT_VERSION);
    c[104] = 2;
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_ECHECKSUM);
    ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_EVERSION);
    ASSERT_EQ(err.offset, 104);
    CU_ASSERT(strstr(err.what, "rebuild") != NULL);
    c[104] = DEDUP_FINGERPRINT_VERSION - 1; /* the version before: its stubs differ */
    ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_EVERSION);
    ASSERT_EQ(err.offset, 104);
    c[104] = DEDUP_FINGERPRINT_VERSION;
    /* 108..128 reserved */
    c[108] = 1;
    ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_EFORMAT);
    ASSERT_EQ(err.offset, 108);
    /* a flipped body byte: checksum */
    memcpy(c, b, len);
    c[len / 2] ^= 0x40;
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_ECHECKSUM);
    ASSERT_EQ(err.offset, 72);
    /* not an index */
    memcpy(c, b, len);
    memcpy(c, "<html>  ", 8);
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_EFORMAT);
    /* structural checks behind the checksum (with the checksum skipped) */
    memcpy(c, b, len);
    /* corrupt a document list link (doc_next section starts after doc_fp) */
    uint64_t next_off = 128 + n * 8;
    uint32_t bogus = 0;
    memcpy(c + next_off + 4 * 10, &bogus, 4); /* doc 10 -> doc 0: not increasing */
    ASSERT_EQ(load_bytes(c, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &err), DEDUP_EFORMAT);
    ASSERT_EQ(err.offset, next_off + 40);
    ASSERT_EQ(load_bytes(c, len, 0, &err), DEDUP_ECHECKSUM);
    /* an empty file and a missing file */
    FILE *f = fopen(path, "wb");
    fclose(f);
    ASSERT_EQ(dedup_index_load(path, 0, &idx, &err), DEDUP_EFORMAT);
    unlink(path);
    ASSERT_EQ(dedup_index_load(path, 0, &idx, &err), DEDUP_EIO);
    CU_ASSERT(err.os_error != 0);
    free(c);
    free(b);
    free(v);
}

/* nearest_many with the lines and with them paused (the directories): the same answers. */
static int lines_vs_dirs(struct dedup_index *idx, const uint64_t *q, size_t nq, unsigned k)
{
    uint32_t *doc = malloc(2 * nq * sizeof *doc);
    unsigned *dist = malloc(2 * nq * sizeof *dist);
    unsigned char *found = malloc(2 * nq);
    int bad = 0;
    if (!doc || !dist || !found)
        bad++;
    for (int w = 0; w < 2 && !bad; w++) {
        idx->lines_paused = w == 1;
        bad += dedup_index_nearest_many(idx, nq, q, k, doc + w * nq, dist + w * nq,
                                        found + w * nq) != DEDUP_OK;
    }
    idx->lines_paused = false;
    for (size_t i = 0; i < nq && !bad; i++)
        bad += found[i] != found[nq + i] ||
               (found[i] && (doc[i] != doc[nq + i] || dist[i] != dist[nq + i]));
    free(doc);
    free(dist);
    free(found);
    return bad;
}

/* The bucket scan 8 entries at a time (index.c, scan_main_wide, where the CPU has AVX-512
 * VPOPCNTDQ) and the scalar scan, for every k = 0..7: queries one at a time and batched,
 * each way against brute force and against the other, on sets with crowded buckets (more
 * than 8 entries: the scan's full and partial blocks), fingerprints in the first and last
 * buckets and twice, on designs whose directory covers a table's key (no key test) and
 * designs where it does not; matches first found in tables t >= 1 find their heads in
 * table 0 (main_find_head). */
static void test_index_wide_scan_every_k(void)
{
    const int saved = atomic_load(&ix_probe_wide);
    const int ways = ix_wide_fast() ? 2 : 1; /* way 1: the wide scan, where it runs */
    unsigned keytest = 0, nokeytest = 0, crowded = 0;
    for (unsigned k = 0; k <= 7; k++) {
        rng_state = 1900 + k;
        size_t n = k == 7 ? 20000 : 6000, nq = 600;
        uint64_t *v = make_edge_set(n, k);
        struct dedup_index *idx = build(v, n, k, 0);
        ASSERT_EQ_FATAL(ix_compact(idx, 1), DEDUP_OK);
        CU_ASSERT_FATAL(idx->nmain > 0 && idx->ndelta == 0);
        for (unsigned t = 0; t < idx->ntables; t++) {
            if (idx->perm[t].key_bits <= idx->dir_bits)
                nokeytest++;
            else
                keytest++;
            uint32_t most = 0;
            for (size_t b = 0; b < ((size_t)1 << idx->dir_bits); b++)
                if (idx->dir[t][b + 1] - idx->dir[t][b] > most)
                    most = idx->dir[t][b + 1] - idx->dir[t][b];
            crowded += most > 16;
        }
        uint64_t *q = malloc(nq * sizeof *q);
        uint32_t *doc = malloc(2 * nq * sizeof *doc);
        unsigned *dist = malloc(2 * nq * sizeof *dist);
        unsigned char *found = malloc(2 * nq);
        CU_ASSERT_FATAL(q && doc && dist && found);
        for (size_t i = 0; i < nq; i++)
            q[i] = i % 4 == 0 ? rnd() : flip_bits(v[rnd() % n], (unsigned)(rnd() % (k + 2)));
        q[0] = 0;
        q[1] = UINT64_MAX;
        q[2] = v[0]; /* in the crowded bucket */
        int bad = 0;
        size_t hits = 0;
        for (int w = 0; w < 2; w++) {
            ix_probe_wide = w < ways ? w : 0;
            for (size_t i = 0; i < nq; i++)
                bad += check_query(idx, v, n, q[i], k);
            ASSERT_EQ_FATAL(dedup_index_nearest_many(idx, nq, q, k, doc + (size_t)w * nq,
                                                     dist + (size_t)w * nq, found + (size_t)w * nq),
                            DEDUP_OK);
            CU_ASSERT(ix_probe_wide == (w < ways ? w : 0)); /* the query kept the choice */
        }
        for (size_t i = 0; i < nq; i++) {
            bad += found[i] != found[nq + i] ||
                   (found[i] && (doc[i] != doc[nq + i] || dist[i] != dist[nq + i]));
            hits += found[i];
        }
        ASSERT_EQ(bad, 0);
        CU_ASSERT(hits > nq / 4);
        free(q);
        free(doc);
        free(dist);
        free(found);
        dedup_index_free(idx);
        free(v);
    }
    ix_probe_wide = saved;
    CU_ASSERT(keytest > 0);
    CU_ASSERT(nokeytest > 0);
    CU_ASSERT(crowded > 0);
}

/* The probe's lines (index.c, HOW IT WORKS: the lines) for every k = 0..7, built for every
 * main (lines_min 0): queries against brute force and against the directories, on sets
 * whose buckets spill into the next ones (a quarter of the fingerprints share their top 10
 * bits, others sit in the first and the last bucket), then query then add through the
 * merges (the lines rebuilt in the blocks of the last), then saved and loaded. */
static void test_index_lines_every_k(void)
{
    unsigned built = 0;
    for (unsigned k = 0; k <= 7; k++) {
        rng_state = 700 + k;
        size_t n = 6000, nq = 400;
        uint64_t *v = make_edge_set(n, k);
        struct dedup_index *idx = build(v, n, k, 0);
        idx->lines_min = 0;
        idx->lines_per = 0;
        uint64_t *q = malloc(nq * sizeof *q);
        CU_ASSERT_FATAL(q != NULL);
        for (size_t i = 0; i < nq; i++)
            q[i] = i % 4 == 0 ? rnd() : flip_bits(v[rnd() % n], (unsigned)(rnd() % (k + 2)));
        q[0] = 0;
        q[1] = UINT64_MAX;
        int bad = 0;
        for (size_t i = 0; i < nq; i++)
            bad += check_query(idx, v, n, q[i], k);
        ASSERT_EQ(bad, 0);
        ASSERT_EQ(lines_vs_dirs(idx, q, nq, k), 0);
        if (idx->line_of) { /* a bucket's least value and the value before it: as a gap's */
            const unsigned sh = 64 - idx->line_bits;
            for (size_t i = 0; i < 200; i++) {
                uint64_t b = v[rnd() % n] >> sh;
                bad += check_query(idx, v, n, b << sh, k);
                bad += check_query(idx, v, n, ((b + 1) << sh) - 1, k);
                bad += check_query(idx, v, n, (b + 1) << sh, k);
            }
            ASSERT_EQ(bad, 0);
        }
        const bool has_lines = idx->line_of != NULL;
        if (has_lines) { /* by default only once the main answered nmain / 4 queries */
            ASSERT_EQ_FATAL(ix_compact(idx, 1), DEDUP_OK);
            idx->lines_per = 4;
            idx->line_of = NULL; /* as a merge leaves them */
            idx->asked = 0;
            uint32_t qd[64];
            unsigned qs[64];
            unsigned char qf[64];
            size_t asked = 0;
            while (asked + 64 < idx->nmain / 4) {
                ASSERT_EQ_FATAL(dedup_index_nearest_many(idx, 64, q, k, qd, qs, qf), DEDUP_OK);
                asked += 64;
            }
            CU_ASSERT(idx->line_of == NULL);
            ASSERT_EQ_FATAL(dedup_index_nearest_many(idx, 64, q, k, qd, qs, qf), DEDUP_OK);
            CU_ASSERT(idx->line_of != NULL);
        }
        built += has_lines;
        dedup_index_free(idx);

        /* query then add: each merge's main gets lines at the next query */
        struct dedup_design d;
        ASSERT_EQ_FATAL(dedup_design_choose(k, n, 0, &d), DEDUP_OK);
        ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
        idx->lines_min = 0;
        idx->lines_per = 0;
        unsigned rebuilt = 0;
        const uint64_t *last = NULL;
        for (size_t i = 0; i < n; i++) {
            if (i % 5 == 0 || i % 41 == 2) {
                bad += check_query(idx, v, i, v[i], k);
                bad += check_query(idx, v, i, flip_bits(v[i], k), k);
                if (idx->line_of && idx->line_of != last) {
                    rebuilt++;
                    last = idx->line_of;
                }
            }
            ASSERT_EQ_FATAL(dedup_index_add(idx, v[i], "x", 1, NULL), DEDUP_OK);
        }
        ASSERT_EQ(bad, 0);
        CU_ASSERT(rebuilt >= (has_lines ? 1u : 0u));
        ASSERT_EQ(lines_vs_dirs(idx, q, nq, k), 0); /* the main's lines and the delta */
        ASSERT_EQ_FATAL(ix_compact(idx, 1), DEDUP_OK); /* the lines rebuilt in their blocks */
        for (size_t i = 0; i < nq; i++)
            bad += check_query(idx, v, n, q[i], k);
        ASSERT_EQ(bad, 0);
        CU_ASSERT(!has_lines || (idx->line_of != NULL && idx->ndelta == 0));
        ASSERT_EQ(lines_vs_dirs(idx, q, nq, k), 0);

        char *path = tmp_path("lines.idx");
        struct dedup_file_error err;
        ASSERT_EQ_FATAL(dedup_index_save(idx, path, &err), DEDUP_OK);
        dedup_index_free(idx);
        ASSERT_EQ_FATAL(dedup_index_load(path, 0, &idx, &err), DEDUP_OK);
        idx->lines_min = 0;
        idx->lines_per = 0;
        for (size_t i = 0; i < nq; i++)
            bad += check_query(idx, v, n, q[i], k);
        ASSERT_EQ(bad, 0);
        CU_ASSERT(!has_lines || idx->line_of != NULL);
        dedup_index_free(idx);
        unlink(path);
        free(q);
        free(v);
    }
    CU_ASSERT(built >= 6); /* the shortest keys of k = 7 may be too short for lines */
}

/* The lines' limits (dedup_index_set_probe_lines_limits) and their state: under min no
 * lines; over the cap none, and older lines' blocks freed; at the cap built; off frees
 * them; a copy keeps the choice. */
static void test_index_lines_limits(void)
{
    rng_state = 4242;
    size_t n = 6000;
    uint64_t *v = make_set(n, 3);
    struct dedup_index *idx = build(v, n, 3, 0);
    idx->lines_per = 0;
    struct dedup_lines_info li;
    dedup_index_probe_lines(idx, &li);
    ASSERT_EQ(li.state, DEDUP_LINES_OFF);
    ASSERT_EQ(li.on, 0);
    ASSERT_EQ(check_query(idx, v, n, v[6], 3), 0); /* the main tables built */
    uint64_t need = dedup_index_probe_lines_bytes_for(idx, idx->nmain);
    CU_ASSERT_FATAL(need > 0);
    /* 8 bytes a table and 4 a slot, 1.25-2.5 slots a fingerprint */
    CU_ASSERT(need >= (uint64_t)(n * 5 / 4) * (8 * idx->ntables + 4));
    CU_ASSERT(need <= (uint64_t)(n * 5 / 2 + 16) * (8 * idx->ntables + 4));
    dedup_index_set_probe_lines_limits(idx, n + 1, 0);
    dedup_index_set_probe_lines(idx, 1);
    ASSERT_EQ(check_query(idx, v, n, v[7], 3), 0);
    dedup_index_probe_lines(idx, &li);
    ASSERT_EQ(li.state, DEDUP_LINES_SMALL);
    CU_ASSERT(idx->line_of == NULL);
    dedup_index_set_probe_lines_limits(idx, 1, need);
    ASSERT_EQ(check_query(idx, v, n, v[8], 3), 0);
    dedup_index_probe_lines(idx, &li);
    ASSERT_EQ(li.state, DEDUP_LINES_BUILT);
    ASSERT_EQ(li.built, 1);
    ASSERT_EQ(li.need_bytes, need);
    CU_ASSERT(li.bytes >= need);
    struct dedup_index *copy = NULL;
    ASSERT_EQ_FATAL(dedup_index_new(dedup_index_design(idx), &copy), DEDUP_OK);
    dedup_index_copy_probe_lines(copy, idx);
    struct dedup_lines_info ci;
    dedup_index_probe_lines(copy, &ci);
    ASSERT_EQ(ci.on, 1);
    ASSERT_EQ(ci.min_fingerprints, 1);
    ASSERT_EQ(ci.max_bytes, need);
    dedup_index_free(copy);
    /* a cap one byte under: the next main gets none, and the old blocks go */
    dedup_index_set_probe_lines_limits(idx, 1, need - 1);
    idx->line_of = NULL; /* as a merge leaves them */
    ASSERT_EQ(check_query(idx, v, n, v[9], 3), 0);
    dedup_index_probe_lines(idx, &li);
    ASSERT_EQ(li.state, DEDUP_LINES_OVER_CAP);
    ASSERT_EQ(li.bytes, 0);
    CU_ASSERT(idx->line_of == NULL);
    int bad = 0;
    for (size_t i = 0; i < 300; i++)
        bad += check_query(idx, v, n, flip_bits(v[rnd() % n], (unsigned)(rnd() % 5)), 3);
    ASSERT_EQ(bad, 0);
    dedup_index_set_probe_lines_limits(idx, 1, 0);
    ASSERT_EQ(check_query(idx, v, n, v[10], 3), 0);
    CU_ASSERT(idx->line_of != NULL);
    dedup_index_set_probe_lines(idx, 0);
    dedup_index_probe_lines(idx, &li);
    ASSERT_EQ(li.state, DEDUP_LINES_OFF);
    ASSERT_EQ(li.bytes, 0);
    CU_ASSERT_STRING_EQUAL(dedup_lines_state_name(DEDUP_LINES_OVER_CAP), "over-cap");
    dedup_index_free(idx);
    free(v);
}

static void test_index_bad_arguments(void)
{
    struct dedup_design d;
    struct dedup_index *idx;
    ASSERT_EQ_FATAL(dedup_design_choose(2, 100, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
    struct dedup_matches m = {0};
    ASSERT_EQ(dedup_index_query(idx, 1, 3, &m), DEDUP_EINVAL); /* k above the index's */
    ASSERT_EQ(dedup_index_query(idx, 1, 2, &m), DEDUP_OK);     /* empty index */
    ASSERT_EQ(m.n, 0);
    ASSERT_EQ(dedup_index_add(idx, 1, "a\0b", 3, NULL), DEDUP_EINVAL);
    static char big[DEDUP_INDEX_MAX_ID_BYTES + 2];
    memset(big, 'x', sizeof big);
    ASSERT_EQ(dedup_index_add(idx, 1, big, sizeof big, NULL), DEDUP_ETOOLARGE);
    ASSERT_EQ(dedup_index_doc_count(idx), 0);
    ASSERT_EQ(dedup_index_add(idx, 1, "", 0, NULL), DEDUP_OK); /* empty id is fine */
    struct dedup_clusters *c;
    ASSERT_EQ(dedup_index_clusters(idx, 2, 1, &c), DEDUP_OK);
    ASSERT_EQ(dedup_clusters_count(c), 0);
    dedup_clusters_free(c);
    dedup_index_free(idx);
    d.tables = 3;                                   /* inconsistent with the shape */
    ASSERT_EQ(dedup_index_new(&d, &idx), DEDUP_OK); /* tables is recomputed */
    dedup_index_free(idx);
    d.blocks[0] = 2; /* 2 blocks cannot hold 2 errors */
    struct dedup_index *bad = NULL;
    ASSERT_EQ(dedup_index_new(&d, &bad), DEDUP_EINVAL);
    CU_ASSERT_PTR_NULL(bad);
    dedup_matches_release(&m);
}

extern void test_index_register(void);
void test_index_register(void)
{
    CU_pSuite s = CU_add_suite("index", NULL, NULL);
    CU_add_test(s, "test_index_design_shapes", test_index_design_shapes);
    CU_add_test(s, "test_index_brute_force_every_k", test_index_brute_force_every_k);
    CU_add_test(s, "test_index_paper_designs_k3", test_index_paper_designs_k3);
    CU_add_test(s, "test_index_every_design_small", test_index_every_design_small);
    CU_add_test(s, "test_index_permute_groups", test_index_permute_groups);
    CU_add_test(s, "test_index_batched_queries", test_index_batched_queries);
    CU_add_test(s, "test_index_add_many", test_index_add_many);
    CU_add_test(s, "test_index_span", test_index_span);
    CU_add_test(s, "test_index_online_interleaved", test_index_online_interleaved);
    CU_add_test(s, "test_index_online_every_k", test_index_online_every_k);
    CU_add_test(s, "test_index_online_query_then_add", test_index_online_query_then_add);
    CU_add_test(s, "test_index_online_crowded", test_index_online_crowded);
    CU_add_test(s, "test_index_wide_scan_every_k", test_index_wide_scan_every_k);
    CU_add_test(s, "test_index_lines_every_k", test_index_lines_every_k);
    CU_add_test(s, "test_index_lines_limits", test_index_lines_limits);
    CU_add_test(s, "test_index_pairs_once_threads", test_index_pairs_once_threads);
    CU_add_test(s, "test_index_identical_fingerprints", test_index_identical_fingerprints);
    CU_add_test(s, "test_index_pairs_buffer_overflow", test_index_pairs_buffer_overflow);
    CU_add_test(s, "test_index_pairs_streamed_threads", test_index_pairs_streamed_threads);
    CU_add_test(s, "test_index_near_pairs", test_index_near_pairs);
    CU_add_test(s, "test_index_scratch", test_index_scratch);
    CU_add_test(s, "test_index_huge_pages", test_index_huge_pages);
    CU_add_test(s, "test_index_set_design_and_drop", test_index_set_design_and_drop);
    CU_add_test(s, "test_index_clusters_deterministic", test_index_clusters_deterministic);
    CU_add_test(s, "test_index_save_load_roundtrip", test_index_save_load_roundtrip);
    CU_add_test(s, "test_index_load_large_file", test_index_load_large_file);
    CU_add_test(s, "test_index_tails_after_pairs", test_index_tails_after_pairs);
    CU_add_test(s, "test_index_reopen_and_add", test_index_reopen_and_add);
    CU_add_test(s, "test_index_corrupt_files", test_index_corrupt_files);
    CU_add_test(s, "test_index_bad_arguments", test_index_bad_arguments);
}

/*
 * Suite "redisidx": the near-duplicate index on Redis (filter/redisidx.h) against a real
 * redis-server started by the suite on 127.0.0.1 (tests/testredis.h) and stopped after.
 * The same decisions, originals, distances and neighbours as the in-process filter
 * (simcrawl_filter_check_fingerprint, simcrawl_filter_neighbors) on the same synthetic
 * fingerprints for k = 0..7, single checks and pipelined batches; exactly one of several
 * near-duplicates checked at once by several clients is kept; the URL and its errors; the
 * meta record (k, method, fingerprint version); and a Redis that holds or sends garbage:
 * keys of the wrong type or shape, a damaged meta record, a killed connection, a server
 * that never answers, a server that does not speak Redis: a clear error, never a crash.
 */
#include <CUnit/CUnit.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dedup/dedup.h"
#include "filter/decide.h"
#include "filter/redisidx.h"
#include "filter/simcrawl.h"
#include "tests/testredis.h"

/* "fingerprint=N" of this build's meta line */
#define FP_STR_(x) #x
#define FP_STR(x) FP_STR_(x)
#define FP_VERSION "fingerprint=" FP_STR(DEDUP_FINGERPRINT_VERSION)

#include <hiredis.h>
#include <xxhash.h>
#include "tests/testutil.h"

static struct test_redis srv;
static int srv_up;

static int suite_init(void)
{
    srv_up = test_redis_start(&srv, 0) == 0;
    return 0; /* each test fails on its own when the server is missing */
}

static redisContext *tconn;

static int suite_clean(void)
{
    if (tconn)
        redisFree(tconn);
    tconn = NULL;
    test_redis_stop(&srv, 0);
    return 0;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void url_of(char *out, size_t len, const char *prefix, const char *extra)
{
    snprintf(out, len, "%s?prefix=%s%s", srv.url, prefix, extra ? extra : "");
}

static struct redisidx *open_ix(const char *prefix, const char *extra, unsigned k)
{
    char url[256], err[256];
    struct redisidx *ix = NULL;
    struct redisidx_opts o = {.k = k};
    url_of(url, sizeof url, prefix, extra);
    enum redisidx_code c = redisidx_open(url, &o, &ix, err, sizeof err);
    if (c != REDISIDX_OK)
        fprintf(stderr, "redisidx_open %s: %s\n", url, err);
    return ix;
}

/* ---- the same decisions as the in-process filter ---- */

#define N_DOCS 1500
#define BATCH 64

struct ref_dec {
    int dec; /* SIMCRAWL_NEW / SIMCRAWL_NEAR_DUPLICATE */
    int added;
    char dup[32];
    unsigned dist;
};

static int same_as_ref(const struct ref_dec *rd, const struct redisidx_result *r)
{
    switch (r->verdict) {
    case REDISIDX_NEW:
        return rd->dec == SIMCRAWL_NEW && rd->added == r->added;
    case REDISIDX_KNOWN_ID:
        return rd->dec == SIMCRAWL_NEW && rd->added == 0;
    case REDISIDX_NEAR:
        return rd->dec == SIMCRAWL_NEAR_DUPLICATE && r->dup_id && !strcmp(rd->dup, r->dup_id) &&
               rd->dist == r->distance;
    default:
        return 0;
    }
}

struct nb_list {
    char ids[64][32];
    unsigned d[64];
    size_t n;
};

static int nb_add(void *ud, const char *id, uint64_t fp, unsigned distance)
{
    struct nb_list *l = ud;
    (void)fp;
    if (l->n < 64) {
        snprintf(l->ids[l->n], sizeof l->ids[0], "%s", id);
        l->d[l->n++] = distance;
    }
    return 0;
}

static void ref_nb(void *ud, const char *id, size_t id_len, uint64_t fp, unsigned distance)
{
    struct nb_list *l = ud;
    (void)fp;
    if (l->n < 64) {
        snprintf(l->ids[l->n], sizeof l->ids[0], "%.*s", (int)id_len, id);
        l->d[l->n++] = distance;
    }
}

/* The in-process decision (filter/decide.h, what the library's filter takes, by id) on
 * the same pages against the Redis index's, page by page: single checks, then batches. */
static void exact_for_k(unsigned k)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "exact%u", k);
    /* a small expected size: few buckets, so that buckets hold many candidates */
    struct redisidx_opts o = {.k = k, .k_zero = k == 0};
    char url[256], err[256];
    struct redisidx *ix = NULL;
    url_of(url, sizeof url, prefix, "&expect=4096");
    CU_ASSERT_FATAL(redisidx_open(url, &o, &ix, err, sizeof err) == REDISIDX_OK);
    struct dedup_design des;
    struct dedup_index *idx = NULL;
    struct filter_decide *dec = NULL;
    CU_ASSERT_FATAL(dedup_design_choose(k, N_DOCS, 0, &des) == DEDUP_OK);
    CU_ASSERT_FATAL(dedup_index_new(&des, &idx) == DEDUP_OK);
    struct filter_decide_opts dopts = {.index = idx, .k = k, .by_id = 1};
    CU_ASSERT_FATAL(filter_decide_new(&dopts, &dec) == DEDUP_OK);
    struct filter_decide_result dr = {0};
    uint64_t *fps = malloc(N_DOCS * sizeof *fps);
    char(*ids)[32] = malloc(N_DOCS * sizeof *ids);
    struct redisidx_page *pages = calloc(N_DOCS, sizeof *pages);
    struct redisidx_result *res = calloc(N_DOCS, sizeof *res);
    struct ref_dec *ref = calloc(N_DOCS, sizeof *ref);
    CU_ASSERT_FATAL(fps && ids && pages && res && ref);
    uint64_t seed = 1000 + k;
    size_t n_new = 0;
    for (size_t i = 0; i < N_DOCS; i++) {
        uint64_t x = mix(&seed);
        if (i > 0 && x % 3 != 0) { /* a variant of an earlier page: 0..k+2 bits flipped */
            uint64_t fp = fps[mix(&seed) % i];
            unsigned flips = (unsigned)(mix(&seed) % (k + 3));
            for (unsigned b = 0; b < flips; b++)
                fp ^= 1ull << (mix(&seed) % 64);
            fps[i] = fp;
        } else
            fps[i] = mix(&seed);
        if (i > 10 && i % 97 == 0) /* an id seen before, another fingerprint */
            snprintf(ids[i], sizeof ids[i], "%s", ids[i / 2]);
        else
            snprintf(ids[i], sizeof ids[i], "doc-%zu", i);
        pages[i] = (struct redisidx_page){.id = ids[i], .id_len = strlen(ids[i]), .fp = fps[i]};
        struct filter_decide_page p = {
            .id = ids[i], .id_len = strlen(ids[i]), .has_fp = 1, .fp = fps[i], .host = ""};
        CU_ASSERT_FATAL(filter_decide_page(dec, &p, &dr) == 0);
        ref[i].dec = dr.verdict == FILTER_VERDICT_NEAR ? SIMCRAWL_NEAR_DUPLICATE : SIMCRAWL_NEW;
        ref[i].added = dr.verdict == FILTER_VERDICT_NEW && dr.added;
        n_new += ref[i].added;
        if (dr.verdict == FILTER_VERDICT_NEAR) {
            snprintf(ref[i].dup, sizeof ref[i].dup, "%s", dr.dup_id);
            ref[i].dist = dr.distance;
        }
    }
    size_t bad = 0, near = 0;
    size_t single = N_DOCS / 4;
    for (size_t i = 0; i < single; i++)
        ASSERT_EQ(redisidx_check(ix, &pages[i], &res[i]), REDISIDX_OK);
    for (size_t i = single; i < N_DOCS; i += BATCH) {
        size_t n = N_DOCS - i < BATCH ? N_DOCS - i : BATCH;
        ASSERT_EQ(redisidx_check_many(ix, &pages[i], n, &res[i]), REDISIDX_OK);
    }
    for (size_t i = 0; i < N_DOCS; i++) {
        if (!same_as_ref(&ref[i], &res[i])) {
            if (bad++ < 5)
                fprintf(stderr, "k %u page %zu (%s %016llx): redis %d %s %u, in-process %d %s %u\n",
                        k, i, ids[i], (unsigned long long)fps[i], res[i].verdict,
                        res[i].dup_id ? res[i].dup_id : "-", res[i].distance, ref[i].dec,
                        ref[i].dup, ref[i].dist);
        }
        near += ref[i].dec == SIMCRAWL_NEAR_DUPLICATE;
    }
    ASSERT_EQ(bad, 0);
    CU_ASSERT(near > N_DOCS / 10); /* the data has near-duplicates to find */
    /* problem 2: the same neighbours, in the same order */
    size_t nb_bad = 0;
    for (size_t q = 0; q < 200; q++) {
        uint64_t fp = fps[mix(&seed) % N_DOCS] ^ (1ull << (mix(&seed) % 64));
        struct nb_list a = {0}, b = {0};
        size_t given = 0;
        ASSERT_EQ(redisidx_neighbors(ix, fp, k, 0, nb_add, &a, &given), REDISIDX_OK);
        ASSERT_EQ(filter_decide_neighbors(dec, fp, k, 0, ref_nb, &b), DEDUP_OK);
        int same = a.n == b.n && given == a.n;
        for (size_t j = 0; same && j < a.n; j++)
            same = !strcmp(a.ids[j], b.ids[j]) && a.d[j] == b.d[j];
        nb_bad += !same;
    }
    ASSERT_EQ(nb_bad, 0);
    struct redisidx_stats st;
    ASSERT_EQ(redisidx_stats(ix, &st), REDISIDX_OK);
    ASSERT_EQ(st.documents, n_new);
    ASSERT_EQ(st.k, k);
    for (size_t i = 0; i < N_DOCS; i++)
        redisidx_result_release(&res[i]);
    filter_decide_result_release(&dr);
    filter_decide_free(dec);
    dedup_index_free(idx);
    redisidx_close(ix);
    free(fps);
    free(ids);
    free(pages);
    free(res);
    free(ref);
}

static void test_redisidx_same_as_in_process(void)
{
    CU_ASSERT_FATAL(srv_up);
    for (unsigned k = 0; k <= 7; k++)
        exact_for_k(k);
}

/* ---- payloads, ids, dry runs, batches, deletion ---- */

static void test_redisidx_exact_known_delete(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("kinds", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct redisidx_result r = {0};
    struct redisidx_page a = {.id = "http://a.example/1",
                              .id_len = 18,
                              .fp = 0x0123456789abcdefull,
                              .key = "payload-a",
                              .key_len = 9};
    ASSERT_EQ(redisidx_check(ix, &a, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 1);
    /* the same id again: its stored decision, nothing added */
    ASSERT_EQ(redisidx_check(ix, &a, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    ASSERT_EQ(r.fp, a.fp);
    /* the same payload under another id, whatever its fingerprint: exact */
    struct redisidx_page b = a;
    b.id = "http://b.example/";
    b.id_len = strlen(b.id);
    b.fp = ~a.fp;
    ASSERT_EQ(redisidx_check(ix, &b, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.dup_id, "http://a.example/1");
    ASSERT_EQ(r.fp, a.fp);
    /* lookup without a fingerprint */
    ASSERT_EQ(redisidx_lookup(ix, &b, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    struct redisidx_page c = {.id = "http://c.example/", .id_len = 17};
    ASSERT_EQ(redisidx_lookup(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_UNKNOWN);
    /* a dry run adds nothing */
    c.fp = a.fp ^ 0xf000000000000000ull; /* distance 4: new at k 3 */
    c.flags = REDISIDX_NO_ADD;
    ASSERT_EQ(redisidx_check(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 0);
    ASSERT_EQ(redisidx_lookup(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_UNKNOWN);
    /* a batch of near-duplicates of each other: the first is kept */
    struct redisidx_page batch[4];
    struct redisidx_result br[4] = {{0}};
    const char *bid[4] = {"b0", "b1", "b2", "b0"};
    for (int i = 0; i < 4; i++)
        batch[i] = (struct redisidx_page){
            .id = bid[i], .id_len = 2, .fp = 0x5555000011112222ull ^ (1ull << (i * 9))};
    ASSERT_EQ(redisidx_check_many(ix, batch, 4, br), REDISIDX_OK);
    ASSERT_EQ(br[0].verdict, REDISIDX_NEW);
    ASSERT_EQ(br[1].verdict, REDISIDX_NEAR);
    CU_ASSERT_STRING_EQUAL(br[1].dup_id, "b0");
    ASSERT_EQ(br[1].distance, 2);
    ASSERT_EQ(br[2].verdict, REDISIDX_NEAR);
    ASSERT_EQ(br[3].verdict, REDISIDX_KNOWN_ID);
    for (int i = 0; i < 4; i++)
        redisidx_result_release(&br[i]);
    /* deletion: gone from the buckets, the id and the payload */
    int deleted = -1;
    ASSERT_EQ(redisidx_delete(ix, a.id, a.id_len, &deleted), REDISIDX_OK);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(redisidx_delete(ix, a.id, a.id_len, &deleted), REDISIDX_OK);
    ASSERT_EQ(deleted, 0);
    ASSERT_EQ(redisidx_check(ix, &b, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW); /* neither exact nor near now */
    struct redisidx_stats st;
    ASSERT_EQ(redisidx_stats(ix, &st), REDISIDX_OK);
    ASSERT_EQ(st.documents, 2); /* b0 and b */
    ASSERT_EQ(st.tables, 4);
    CU_ASSERT(st.used_memory > 0);
    CU_ASSERT(st.round_trips > 0);
    redisidx_result_release(&r);
    redisidx_close(ix);
}

/* ---- several clients at once ---- */

#define THREADS 6
#define ROUNDS 40

struct racer {
    int t;
    pthread_barrier_t *go;
    int news[ROUNDS];
    int errors;
};

static void *race(void *arg)
{
    struct racer *rc = arg;
    struct redisidx *ix = open_ix("race", NULL, 3);
    struct redisidx_result r = {0};
    uint64_t seed = 77;
    if (!ix)
        rc->errors++;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t base = mix(&seed);
        char id[32];
        snprintf(id, sizeof id, "r%d-t%d", round, rc->t);
        /* one bit of its own: any two of the threads' pages are at distance 2 */
        struct redisidx_page p = {
            .id = id, .id_len = strlen(id), .fp = base ^ (1ull << (rc->t * 10))};
        pthread_barrier_wait(rc->go);
        if (!ix)
            continue;
        if (redisidx_check(ix, &p, &r) != REDISIDX_OK)
            rc->errors++;
        else
            rc->news[round] = r.verdict == REDISIDX_NEW;
    }
    redisidx_result_release(&r);
    redisidx_close(ix);
    return NULL;
}

static void test_redisidx_clients_keep_one(void)
{
    CU_ASSERT_FATAL(srv_up);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS);
    struct racer rc[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        memset(&rc[t], 0, sizeof rc[t]);
        rc[t].t = t;
        rc[t].go = &go;
        pthread_create(&th[t], NULL, race, &rc[t]);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&go);
    int wrong = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int news = 0;
        for (int t = 0; t < THREADS; t++)
            news += rc[t].news[round];
        wrong += news != 1;
    }
    for (int t = 0; t < THREADS; t++)
        ASSERT_EQ(rc[t].errors, 0);
    ASSERT_EQ(wrong, 0);
}

/* ---- the URL, the meta record ---- */

static enum redisidx_code open_code(const char *url, unsigned k, const char *method, char *err,
                                    size_t errlen)
{
    struct redisidx *ix = NULL;
    struct redisidx_opts o = {.k = k, .method = method};
    enum redisidx_code c = redisidx_open(url, &o, &ix, err, errlen);
    CU_ASSERT((c == REDISIDX_OK) == (ix != NULL));
    redisidx_close(ix);
    return c;
}

static void test_redisidx_urls_and_meta(void)
{
    CU_ASSERT_FATAL(srv_up);
    char url[256], err[256];
    const char *bad[] = {"http://127.0.0.1/",
                         "redis://127.0.0.1:99999",
                         "redis://127.0.0.1:x",
                         "redis://127.0.0.1/abc",
                         "redis://127.0.0.1?prefix=a%20b",
                         "redis://127.0.0.1?nosuch=1",
                         "redis://127.0.0.1?timeout=-1",
                         "unix://relative",
                         "redis://127.0.0.1?prefix="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ASSERT_EQ(open_code(bad[i], 3, NULL, err, sizeof err), REDISIDX_EINVAL);
        CU_ASSERT(strstr(err, bad[i]) == err);
    }
    url_of(url, sizeof url, "meta", NULL);
    ASSERT_EQ(open_code(url, 0, "minhash", err, sizeof err), REDISIDX_EMETHOD);
    CU_ASSERT(strstr(err, "not supported on redis") != NULL);
    ASSERT_EQ(open_code(url, 5, NULL, err, sizeof err), REDISIDX_OK); /* made, k 5 */
    ASSERT_EQ(open_code(url, 0, NULL, err, sizeof err), REDISIDX_OK); /* the index's */
    ASSERT_EQ(open_code(url, 3, NULL, err, sizeof err), REDISIDX_EMISMATCH);
    CU_ASSERT(strstr(err, "k 5") != NULL);
    /* another prefix is another index */
    url_of(url, sizeof url, "meta2", "&db=1");
    ASSERT_EQ(open_code(url, 3, NULL, err, sizeof err), REDISIDX_OK);
    /* a server that is not there */
    ASSERT_EQ(open_code("redis://127.0.0.1:1?timeout=0.5", 3, NULL, err, sizeof err), REDISIDX_EIO);
    CU_ASSERT(strstr(err, "redis://127.0.0.1:1") != NULL && strstr(err, "connect") != NULL);
    /* meta records written by someone else */
    struct {
        const char *value;
        enum redisidx_code want;
        const char *says;
    } metas[] = {
        {"garbage", REDISIDX_ECORRUPT, "not a simcrawl index"},
        {"simcrawl-redisidx/1 method=simhash " FP_VERSION " k=3 levels=1 blocks=4,0 "
         "bucket_bits=16",
         REDISIDX_ECORRUPT, "damaged"},
        {"simcrawl-redisidx/1 method=simhash " FP_VERSION " k=9 levels=1 blocks=4,0 "
         "bucket_bits=16 shard_bits=4",
         REDISIDX_ECORRUPT, "damaged"},
        {"simcrawl-redisidx/1 method=simhash " FP_VERSION " k=3 levels=1 blocks=5,0 "
         "bucket_bits=40 shard_bits=4",
         REDISIDX_ECORRUPT, "bucket_bits"},
        {"simcrawl-redisidx/1 method=simhash " FP_VERSION " k=3 levels=1 blocks=2,0 "
         "bucket_bits=8 shard_bits=4",
         REDISIDX_ECORRUPT, "no design"},
        {"simcrawl-redisidx/1 method=simhash fingerprint=2 k=3 levels=1 blocks=4,0 "
         "bucket_bits=16 shard_bits=4",
         REDISIDX_EVERSION, "fingerprint version 2"},
        {"simcrawl-redisidx/2 method=simhash", REDISIDX_EVERSION, "format 2"},
        {"simcrawl-redisidx/1 method=minhash " FP_VERSION " k=3 levels=1 blocks=4,0 "
         "bucket_bits=16 shard_bits=4",
         REDISIDX_EMETHOD, "minhash"},
    };
    for (size_t i = 0; i < sizeof metas / sizeof *metas; i++) {
        const char *set[3] = {"SET", "hostile:meta", metas[i].value};
        ASSERT_EQ(test_redis_cmd(&srv, 3, set), 1);
        url_of(url, sizeof url, "hostile", NULL);
        ASSERT_EQ(open_code(url, 0, NULL, err, sizeof err), metas[i].want);
        if (!strstr(err, metas[i].says))
            fprintf(stderr, "meta '%s': %s\n", metas[i].value, err);
        CU_ASSERT(strstr(err, metas[i].says) != NULL);
    }
    const char *del[2] = {"DEL", "hostile:meta"};
    const char *hset[4] = {"HSET", "hostile:meta", "a", "b"};
    test_redis_cmd(&srv, 2, del);
    ASSERT_EQ(test_redis_cmd(&srv, 4, hset), 1);
    ASSERT_EQ(open_code(url, 0, NULL, err, sizeof err), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(err, "hostile:meta") != NULL && strstr(err, "wrong type") != NULL);
    test_redis_cmd(&srv, 2, del);
}

/* ---- keys damaged under a running index ---- */

static void test_redisidx_damaged_keys(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("damage", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct redisidx_result r = {0};
    uint64_t fp = 0x1111222233334444ull;
    struct redisidx_page p = {.id = "d1", .id_len = 2, .fp = fp};
    ASSERT_EQ(redisidx_check(ix, &p, &r), REDISIDX_OK);
    /* table 0's bucket of fp, a 16-bit bucket over the 4-table design: its key's name */
    char bkey[64];
    snprintf(bkey, sizeof bkey, "damage:b:0:%04llx", (unsigned long long)(fp >> 48));
    const char *ty[2] = {"EXISTS", bkey};
    ASSERT_EQ(test_redis_cmd(&srv, 2, ty), 1);
    /* an entry of the wrong shape */
    const char *h1[4] = {"HSET", bkey, "not-a-fingerprint", "1"};
    ASSERT_EQ(test_redis_cmd(&srv, 4, h1), 1);
    struct redisidx_page q = {.id = "d2", .id_len = 2, .fp = fp ^ 1};
    ASSERT_EQ(redisidx_check(ix, &q, &r), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(redisidx_errmsg(ix), bkey) != NULL);
    /* the wrong type */
    const char *del[2] = {"DEL", bkey};
    const char *set[3] = {"SET", bkey, "x"};
    test_redis_cmd(&srv, 2, del);
    test_redis_cmd(&srv, 3, set);
    ASSERT_EQ(redisidx_check(ix, &q, &r), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(redisidx_errmsg(ix), "wrong type") != NULL);
    ASSERT_EQ(redisidx_neighbors(ix, fp, 3, 0, nb_add, &(struct nb_list){0}, NULL),
              REDISIDX_ECORRUPT);
    test_redis_cmd(&srv, 2, del);
    /* a bucket entry naming a document that is not there: q's own fingerprint, the
     * nearest candidate, as document 999999 */
    char qdec[24];
    snprintf(qdec, sizeof qdec, "%lld", (long long)(int64_t)q.fp);
    const char *h2[4] = {"HSET", bkey, qdec, "999999"};
    ASSERT_EQ(test_redis_cmd(&srv, 4, h2), 1);
    ASSERT_EQ(redisidx_check(ix, &q, &r), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(redisidx_errmsg(ix), "missing") != NULL);
    test_redis_cmd(&srv, 2, del);
    /* a damaged id record */
    struct redisidx_page known = {.id = "d1", .id_len = 2, .fp = fp};
    char ikey[64];
    /* shard_bits 14 for the default expected size: the shard is XXH3's top 14 bits */
    snprintf(ikey, sizeof ikey, "damage:i:%llx", (unsigned long long)(XXH3_64bits("d1", 2) >> 50));
    const char *hid[4] = {"HSET", ikey, "d1", "garbage"};
    ASSERT_EQ(test_redis_cmd(&srv, 4, hid), 0 + 0 * 1); /* an update: 0 fields added */
    ASSERT_EQ(redisidx_check(ix, &known, &r), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(redisidx_errmsg(ix), ikey) != NULL &&
              strstr(redisidx_errmsg(ix), "damaged") != NULL);
    const char *hid2[4] = {"HSET", ikey, "d1", "1 1111222233334444"};
    ASSERT_EQ(test_redis_cmd(&srv, 4, hid2), 0);
    /* the sequence made a string */
    const char *seq[3] = {"SET", "damage:seq", "abc"};
    ASSERT_EQ(test_redis_cmd(&srv, 3, seq), 1);
    struct redisidx_page n3 = {.id = "d3", .id_len = 2, .fp = ~fp};
    CU_ASSERT_NOT_EQUAL(redisidx_check(ix, &n3, &r), REDISIDX_OK);
    CU_ASSERT(strstr(redisidx_errmsg(ix), "damage:seq") != NULL);
    const char *seq2[3] = {"SET", "damage:seq", "100"};
    test_redis_cmd(&srv, 3, seq2);
    /* after all that the index still works (reconnected) */
    ASSERT_EQ(redisidx_check(ix, &known, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    ASSERT_EQ(redisidx_check(ix, &n3, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    redisidx_result_release(&r);
    redisidx_close(ix);
}

/* ---- connections lost, servers that never answer or speak something else ---- */

struct fake {
    int fd;
    int port;
    const char *say; /* NULL: accept and never answer */
    pthread_t th;
};

static void *fake_run(void *arg)
{
    struct fake *fk = arg;
    for (int i = 0; i < 2; i++) {
        int c = accept(fk->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        if (fk->say) {
            char buf[256];
            ssize_t got = read(c, buf, sizeof buf);
            (void)got;
            ssize_t w = write(c, fk->say, strlen(fk->say));
            (void)w;
            close(c);
        } else {
            sleep(1); /* never answers within the client's timeout */
            close(c);
        }
    }
    return NULL;
}

static int fake_start(struct fake *fk, const char *say)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fk->say = say;
    fk->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fk->fd < 0 || bind(fk->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(fk->fd, 4) != 0 || getsockname(fk->fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    fk->port = ntohs(a.sin_port);
    return pthread_create(&fk->th, NULL, fake_run, fk);
}

static void fake_stop(struct fake *fk)
{
    shutdown(fk->fd, SHUT_RDWR);
    close(fk->fd);
    pthread_join(fk->th, NULL);
}

static void test_redisidx_connections(void)
{
    CU_ASSERT_FATAL(srv_up);
    char url[128], err[256];
    struct fake fk;
    /* a server that does not speak Redis */
    CU_ASSERT_FATAL(fake_start(&fk, "HTTP/1.1 400 Bad Request\r\n\r\n") == 0);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d?timeout=1", fk.port);
    ASSERT_EQ(open_code(url, 3, NULL, err, sizeof err), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(err, url) == err && strstr(err, "protocol") != NULL);
    fake_stop(&fk);
    /* one that never answers: the command timeout */
    CU_ASSERT_FATAL(fake_start(&fk, NULL) == 0);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d?timeout=0.3", fk.port);
    ASSERT_EQ(open_code(url, 3, NULL, err, sizeof err), REDISIDX_EIO);
    CU_ASSERT(strstr(err, url) == err);
    fake_stop(&fk);
    /* a connection killed under an open index: EIO naming the URL, then a reconnect */
    struct redisidx *ix = open_ix("conn", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct redisidx_result r = {0};
    struct redisidx_page p = {.id = "c1", .id_len = 2, .fp = 42};
    ASSERT_EQ(redisidx_check(ix, &p, &r), REDISIDX_OK);
    const char *kill[4] = {"CLIENT", "KILL", "TYPE", "normal"};
    CU_ASSERT(test_redis_cmd(&srv, 4, kill) >= 1);
    p.id = "c2";
    enum redisidx_code c = redisidx_check(ix, &p, &r);
    if (c != REDISIDX_OK) { /* the kill is seen at the next read */
        ASSERT_EQ(c, REDISIDX_EIO);
        CU_ASSERT(strstr(redisidx_errmsg(ix), srv.url) != NULL);
        ASSERT_EQ(redisidx_check(ix, &p, &r), REDISIDX_OK);
    }
    ASSERT_EQ(r.verdict, REDISIDX_NEAR); /* fp 42 is c1's */
    struct redisidx_stats st;
    ASSERT_EQ(redisidx_stats(ix, &st), REDISIDX_OK);
    CU_ASSERT(st.reconnects >= 1);
    redisidx_result_release(&r);
    redisidx_close(ix);
}

/* ---- a Redis that goes away: connected again, nothing done twice ---- */

/* The sent hook: at the armed EXEC, waits until Redis has run it (the probe, an integer
 * command on another connection, answers want), then kills the server (SIGKILL; the write
 * is in the AOF) and starts it again in place delay_ms later; the reply is lost (the
 * client's connection dropped unread). */
struct crash_at {
    struct test_redis *srv;
    const char *what; /* the step it fires at (NULL: "EXEC") */
    int armed, fired;
    long delay_ms;
    const char *probe[3];
    long long want;
};

static int crash_on_exec(void *userdata, const char *what)
{
    struct crash_at *c = userdata;
    if (!c->armed || strcmp(what, c->what ? c->what : "EXEC") != 0)
        return 0;
    c->armed = 0;
    struct timespec ms5 = {0, 5000000};
    for (int i = 0; i < 400 && test_redis_cmd(c->srv, 3, c->probe) != c->want; i++)
        nanosleep(&ms5, NULL);
    c->fired = test_redis_cmd(c->srv, 3, c->probe) == c->want &&
               test_redis_crash_restart(c->srv, c->delay_ms) == 0;
    return 1; /* the reply is lost with the server */
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_redisidx_reconnect(void)
{
    struct test_redis d = {.durable = 1};
    CU_ASSERT_FATAL(test_redis_start(&d, 0) == 0);
    char url[200], err[256];
    snprintf(url, sizeof url, "%s?prefix=rc&retry=20", d.url);
    struct redisidx *ix = NULL;
    struct redisidx_opts o = {.k = 3};
    ASSERT_EQ_FATAL(redisidx_open(url, &o, &ix, err, sizeof err), REDISIDX_OK);
    struct crash_at cr = {.srv = &d, .delay_ms = 300, .probe = {"INCRBY", "rc:count", "0"}};
    redisidx_set_sent_hook(ix, crash_on_exec, &cr);
    struct redisidx_result r = {0}, rb[2] = {{0}, {0}};
    struct redisidx_page p1 = {.id = "u1", .id_len = 2, .fp = 0x0123456789abcdefull},
                         p2 = {.id = "u2", .id_len = 2, .fp = 0xfedcba9876543210ull},
                         p3 = {.id = "u3", .id_len = 2, .fp = 0xfedcba9876543210ull ^ 5};
    ASSERT_EQ(redisidx_check(ix, &p1, &r), REDISIDX_OK);
    /* the server dies once it has added u2, before the client reads EXEC's reply, and is
     * down for 0.3 s: the check connects again, finds u2 by id, and says what it did */
    cr.armed = 1;
    cr.want = 2;
    double t0 = mono();
    ASSERT_EQ(redisidx_check(ix, &p2, &r), REDISIDX_OK);
    CU_ASSERT(cr.fired);
    CU_ASSERT(mono() - t0 >= 0.3);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 1);
    struct redisidx_stats st;
    ASSERT_EQ(redisidx_stats(ix, &st), REDISIDX_OK);
    ASSERT_EQ(st.documents, 2); /* added once */
    CU_ASSERT(st.reconnects >= 1);
    ASSERT_EQ(redisidx_check(ix, &p3, &r), REDISIDX_OK); /* u2 survived the crash */
    ASSERT_EQ(r.verdict, REDISIDX_NEAR);
    CU_ASSERT(r.dup_id && strcmp(r.dup_id, "u2") == 0);
    ASSERT_EQ(redisidx_check(ix, &p2, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    /* a batch: a NEW page and its near-duplicate, the reply lost the same way */
    struct redisidx_page batch[2] = {{.id = "u4", .id_len = 2, .fp = 0x00ff00ff00ff00ffull},
                                     {.id = "u5", .id_len = 2, .fp = 0x00ff00ff00ff00feull}};
    cr.armed = 1;
    cr.want = 3;
    ASSERT_EQ(redisidx_check_many(ix, batch, 2, rb), REDISIDX_OK);
    CU_ASSERT(cr.fired);
    ASSERT_EQ(rb[0].verdict, REDISIDX_NEW);
    ASSERT_EQ(rb[0].added, 1);
    ASSERT_EQ(rb[1].verdict, REDISIDX_NEAR);
    CU_ASSERT(rb[1].dup_id && strcmp(rb[1].dup_id, "u4") == 0);
    /* a delete whose reply is lost: deleted, once */
    int deleted = 0;
    cr.armed = 1;
    cr.want = 2;
    ASSERT_EQ(redisidx_delete(ix, "u2", 2, &deleted), REDISIDX_OK);
    CU_ASSERT(cr.fired);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(redisidx_delete(ix, "u2", 2, &deleted), REDISIDX_OK);
    ASSERT_EQ(deleted, 0);
    /* a payload claim whose reply is lost: its own claim, new, added; again: KNOWN_ID */
    ASSERT_EQ(redisidx_payload_claim(ix, "u7", 2, "pay-0", 5, "m0", 2, &r), REDISIDX_OK);
    char ckey[64];
    snprintf(ckey, sizeof ckey, "rc:c:%llx", (unsigned long long)(XXH3_64bits("pay-1", 5) >> 50));
    cr.what = "claim";
    cr.probe[0] = "HSTRLEN";
    cr.probe[1] = ckey;
    cr.probe[2] = "pay-1";
    cr.want = 2; /* the claimer's id, "u8", stored */
    cr.armed = 1;
    ASSERT_EQ(redisidx_payload_claim(ix, "u8", 2, "pay-1", 5, "m1", 2, &r), REDISIDX_OK);
    CU_ASSERT(cr.fired);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 1);
    ASSERT_EQ(redisidx_payload_claim(ix, "u8", 2, "pay-1", 5, "m1", 2, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    CU_ASSERT(r.meta && strcmp(r.meta, "m1") == 0);
    redisidx_close(ix);
    /* a server that stays down: an error naming the URL within the bound (retry=1) */
    snprintf(url, sizeof url, "%s?prefix=rc&retry=1", d.url);
    ASSERT_EQ_FATAL(redisidx_open(url, &o, &ix, err, sizeof err), REDISIDX_OK);
    test_redis_kill(&d);
    struct redisidx_page p6 = {.id = "u6", .id_len = 2, .fp = 42};
    t0 = mono();
    ASSERT_EQ(redisidx_check(ix, &p6, &r), REDISIDX_EIO);
    double took = mono() - t0;
    CU_ASSERT(took >= 0.9 && took < 5);
    CU_ASSERT(strstr(redisidx_errmsg(ix), url) == redisidx_errmsg(ix));
    CU_ASSERT(strstr(redisidx_errmsg(ix), "connecting again for") != NULL);
    redisidx_result_release(&r);
    redisidx_result_release(&rb[0]);
    redisidx_result_release(&rb[1]);
    redisidx_close(ix);
    /* a bad retry is refused */
    CU_ASSERT(open_code("redis://127.0.0.1:1?retry=x", 3, NULL, err, sizeof err) ==
              REDISIDX_EINVAL);
    CU_ASSERT(strstr(err, "bad retry 'x'") != NULL);
    test_redis_stop(&d, 0);
}

/* ---- revisit references and site templates ---- */

static void test_redisidx_payload_meta(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("pmeta", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct redisidx_result r = {0};
    struct redisidx_page a = {.id = "http://a.example/",
                              .id_len = 17,
                              .fp = 0x1111222233334444ull,
                              .key = "digest-a",
                              .key_len = 8,
                              .meta = "ref-a",
                              .meta_len = 5};
    ASSERT_EQ(redisidx_check(ix, &a, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.meta_len, 0);
    /* the same payload elsewhere: the first page's reference */
    struct redisidx_page b = a;
    b.id = "http://b.example/";
    b.fp = ~a.fp;
    b.meta = "ref-b";
    ASSERT_EQ(redisidx_check(ix, &b, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-a");
    /* the page itself again (a worker restarted): its own reference */
    ASSERT_EQ(redisidx_check(ix, &a, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-a");
    /* ... but not with another payload now: none */
    struct redisidx_page a2 = a;
    a2.key = "digest-z";
    ASSERT_EQ(redisidx_check(ix, &a2, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    ASSERT_EQ(r.meta_len, 0);
    /* a payload without a fingerprint: the same map */
    ASSERT_EQ(redisidx_payload_claim(ix, "u-c", 3, "digest-a", 8, "ref-c", 5, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-a");
    CU_ASSERT_STRING_EQUAL(r.dup_id, "http://a.example/");
    ASSERT_EQ(redisidx_payload_claim(ix, "u-c", 3, "digest-c", 8, "ref-c", 5, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 1);
    /* claimed again by its id (after a crash): its own claim back; another id's: exact */
    ASSERT_EQ(redisidx_payload_claim(ix, "u-c", 3, "digest-c", 8, "ref-x", 5, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-c");
    ASSERT_EQ(redisidx_payload_claim(ix, "u-d", 3, "digest-c", 8, "ref-d", 5, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-c");
    /* a claimed payload checked with a fingerprint: an exact duplicate of the claim (as
     * the in-process decision: filter_decide_page after FILTER_DECIDE_REMEMBER_UNFP),
     * nothing added, the claim's reference; the same in a batch and for a lookup */
    struct redisidx_page c = {.id = "http://c.example/",
                              .id_len = 17,
                              .fp = 0x0f0f0f0f00000000ull,
                              .key = "digest-c",
                              .key_len = 8,
                              .meta = "ref-e",
                              .meta_len = 5};
    ASSERT_EQ(redisidx_check(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    ASSERT_EQ(r.added, 0);
    ASSERT_EQ(r.dup_id_len, 0);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-c");
    ASSERT_EQ(redisidx_lookup(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-c");
    struct redisidx_page two[2] = {c, b};
    two[1].id = "http://d.example/";
    two[1].key = "digest-c";
    struct redisidx_result r2[2] = {{0}, {0}};
    ASSERT_EQ(redisidx_check_many(ix, two, 2, r2), REDISIDX_OK);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(r2[i].verdict, REDISIDX_EXACT);
        CU_ASSERT_STRING_EQUAL(r2[i].meta, "ref-c");
        redisidx_result_release(&r2[i]);
    }
    c.id = "http://c2.example/"; /* nothing of c was indexed: its near-duplicate is new */
    c.id_len = 18;
    c.key = "digest-h";
    c.fp ^= 1;
    ASSERT_EQ(redisidx_check(ix, &c, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    b.id = "http://d.example/";
    b.key = "digest-h";
    ASSERT_EQ(redisidx_check(ix, &b, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    CU_ASSERT_STRING_EQUAL(r.dup_id, "http://c2.example/");
    CU_ASSERT_STRING_EQUAL(r.meta, "ref-e");
    /* deleted with its page */
    int deleted = 0;
    ASSERT_EQ(redisidx_delete(ix, a.id, a.id_len, &deleted), REDISIDX_OK);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(redisidx_payload_claim(ix, "u-f", 3, "digest-a", 8, "ref-f", 5, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    /* a reference over the cap */
    static char big[REDISIDX_MAX_META_BYTES + 1];
    ASSERT_EQ(redisidx_payload_claim(ix, "u-g", 3, "digest-g", 8, big, sizeof big, &r),
              REDISIDX_ETOOLARGE);
    redisidx_result_release(&r);
    redisidx_close(ix);
}

/* A claim racer: thread 0 checks page "c{round}" with payload key "P{round}" (no
 * metadata, as the library adds pages), the others claim that payload under ids of their
 * own, all at once. */
struct claimer {
    int t;
    pthread_barrier_t *go;
    int news[ROUNDS], exacts[ROUNDS];
    int errors;
};

static void *claim_race(void *arg)
{
    struct claimer *c = arg;
    struct redisidx *ix = open_ix("claimrace", NULL, 3);
    struct redisidx_result r = {0};
    if (!ix)
        c->errors++;
    for (int round = 0; round < ROUNDS; round++) {
        char id[32], key[32];
        snprintf(id, sizeof id, "c%d-t%d", round, c->t);
        snprintf(key, sizeof key, "P%d", round);
        struct redisidx_page p = {.id = id,
                                  .id_len = strlen(id),
                                  .fp = 0x0123456789abcdefull * (uint64_t)(round + 1),
                                  .key = key,
                                  .key_len = strlen(key)};
        pthread_barrier_wait(c->go);
        if (!ix)
            continue;
        enum redisidx_code rc =
            c->t ? redisidx_payload_claim(ix, id, strlen(id), key, strlen(key), "m", 1, &r)
                 : redisidx_check(ix, &p, &r);
        if (rc != REDISIDX_OK)
            c->errors++;
        c->news[round] = rc == REDISIDX_OK && r.verdict == REDISIDX_NEW && r.added;
        c->exacts[round] = rc == REDISIDX_OK && r.verdict == REDISIDX_EXACT;
    }
    redisidx_result_release(&r);
    redisidx_close(ix);
    return NULL;
}

/*
 * A payload claimed without a fingerprint is found however its page was added: by a check
 * or a batch without metadata (the library's way; main's claim looked only at the
 * metadata and said new), or with it; claimed by the page's own id it is KNOWN_ID; and of
 * a check and claims of one payload sent at once by four clients, exactly one is new and
 * the others exact duplicates (the claim is one script; the check watches its shards).
 */
static void test_redisidx_claim_any_page(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("claim", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct redisidx_result r = {0}, rb[3] = {{0}, {0}, {0}};
    struct redisidx_page a = {
        .id = "lib-a", .id_len = 5, .fp = 0x123456789abcdef0ull, .key = "K-a", .key_len = 3};
    ASSERT_EQ(redisidx_check(ix, &a, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    for (int i = 0; i < 2; i++) { /* nothing stored by the first: the second the same */
        ASSERT_EQ(redisidx_payload_claim(ix, i ? "crawl-2" : "crawl-1", 7, "K-a", 3, "ref", 3, &r),
                  REDISIDX_OK);
        ASSERT_EQ(r.verdict, REDISIDX_EXACT);
        CU_ASSERT(r.dup_id && strcmp(r.dup_id, "lib-a") == 0);
        ASSERT_EQ(r.fp, a.fp);
        ASSERT_EQ(r.meta_len, 0);
        ASSERT_EQ(r.added, 0);
    }
    ASSERT_EQ(redisidx_payload_claim(ix, "lib-a", 5, "K-a", 3, "ref", 3, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    ASSERT_EQ(r.fp, a.fp);
    ASSERT_EQ(r.meta_len, 0);
    /* a batch without metadata */
    struct redisidx_page b[3];
    static const char *bid[3] = {"lib-b0", "lib-b1", "lib-b2"}, *bkey[3] = {"K-b0", "K-b1", "K-b2"};
    for (int i = 0; i < 3; i++)
        b[i] = (struct redisidx_page){.id = bid[i],
                                      .id_len = 6,
                                      .fp = 0xff00ff00ff00ff00ull >> (8 * i),
                                      .key = bkey[i],
                                      .key_len = 4};
    ASSERT_EQ(redisidx_check_many(ix, b, 3, rb), REDISIDX_OK);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(rb[i].verdict, REDISIDX_NEW);
        ASSERT_EQ(redisidx_payload_claim(ix, "crawl-b", 7, bkey[i], 4, "ref", 3, &r), REDISIDX_OK);
        ASSERT_EQ(r.verdict, REDISIDX_EXACT);
        CU_ASSERT(r.dup_id && strcmp(r.dup_id, bid[i]) == 0);
        ASSERT_EQ(r.fp, b[i].fp);
        redisidx_result_release(&rb[i]);
    }
    /* a claim without metadata, then its own id again and another's */
    ASSERT_EQ(redisidx_payload_claim(ix, "img-1", 5, "K-i", 3, NULL, 0, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    ASSERT_EQ(r.added, 1);
    ASSERT_EQ(redisidx_payload_claim(ix, "img-1", 5, "K-i", 3, NULL, 0, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_KNOWN_ID);
    ASSERT_EQ(redisidx_payload_claim(ix, "img-2", 5, "K-i", 3, NULL, 0, &r), REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_EXACT);
    ASSERT_EQ(redisidx_payload_claim(ix, "", 0, "K-i", 3, NULL, 0, &r), REDISIDX_EINVAL);
    redisidx_result_release(&r);
    redisidx_close(ix);

    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 4);
    struct claimer cl[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        memset(&cl[t], 0, sizeof cl[t]);
        cl[t].t = t;
        cl[t].go = &go;
        pthread_create(&th[t], NULL, claim_race, &cl[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&go);
    int wrong = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int news = 0, exacts = 0;
        for (int t = 0; t < 4; t++) {
            news += cl[t].news[round];
            exacts += cl[t].exacts[round];
        }
        wrong += news != 1 || exacts != 3;
    }
    for (int t = 0; t < 4; t++)
        ASSERT_EQ(cl[t].errors, 0);
    ASSERT_EQ(wrong, 0);
}

/* Documents of two hosts, blocks drawn from a pool where a few are on most documents (the
 * template), some documents repeated (a copy counts once): the marks read from Redis after
 * each document are dedup_templates_mark()'s over the in-process table given the same
 * documents; half of them counted by redisidx_check() (in its transaction), half by
 * redisidx_template_learn(), and each learn sent twice (as after a lost reply). */
static void test_redisidx_templates_as_in_process(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("tpl", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct dedup_templates *t = dedup_templates_new();
    CU_ASSERT_FATAL(t != NULL);
    const char *hosts[2] = {"a.example", "b.example"};
    uint64_t seed = 42, blocks[12], docs_seen[64];
    uint32_t ntok[12];
    unsigned char m1[12], m2[12];
    size_t differ = 0, marked = 0;
    struct redisidx_result r = {0};
    for (int d = 0; d < 120; d++) {
        const char *h = hosts[mix(&seed) % 2];
        size_t n = 0;
        for (int b = 0; b < 4; b++) /* the template: on ~90% of documents */
            if (mix(&seed) % 10)
                blocks[n++] = 1000 + (uint64_t)b + (h == hosts[1] ? 100 : 0);
        while (n < 12 && mix(&seed) % 4) /* own blocks, some shared by a few */
            blocks[n++] = 5000 + mix(&seed) % 300;
        for (size_t i = 0; i < n; i++)
            ntok[i] = 2 + (uint32_t)(mix(&seed) % 4);
        uint64_t doc =
            d > 8 && mix(&seed) % 8 == 0 ? docs_seen[mix(&seed) % 8] : 0x100000 + (uint64_t)d;
        docs_seen[d % 64] = doc;
        /* the marks before the document is counted, both sides */
        size_t k1 = dedup_templates_mark(t, h, strlen(h), blocks, ntok, n, m1), k2 = 99;
        ASSERT_EQ(redisidx_template_mark(ix, h, strlen(h), blocks, ntok, n, m2, &k2), REDISIDX_OK);
        ASSERT_EQ(k1, k2);
        differ += memcmp(m1, m2, n) != 0;
        marked += k1;
        CU_ASSERT_FATAL(dedup_templates_add_doc(t, h, strlen(h), doc, blocks, n, NULL) == DEDUP_OK);
        if (d % 2) {
            char id[32];
            snprintf(id, sizeof id, "doc%d", d);
            struct redisidx_page p = {.id = id,
                                      .id_len = strlen(id),
                                      .fp = mix(&seed),
                                      .host = h,
                                      .host_len = strlen(h),
                                      .doc_hash = doc,
                                      .blocks = blocks,
                                      .n_blocks = n};
            ASSERT_EQ(redisidx_check(ix, &p, &r), REDISIDX_OK);
            ASSERT_EQ(r.verdict, REDISIDX_NEW);
        } else {
            for (int again = 0; again < 2; again++)
                ASSERT_EQ(redisidx_template_learn(ix, h, strlen(h), doc, blocks, n), REDISIDX_OK);
        }
    }
    ASSERT_EQ(differ, 0);
    CU_ASSERT(marked > 100); /* the template was found, and then marked on most pages */
    /* a host never seen has none; a host key over the cap is refused */
    blocks[0] = 1000;
    ntok[0] = 10;
    size_t k = 9;
    ASSERT_EQ(redisidx_template_mark(ix, "c.example", 9, blocks, ntok, 1, m2, &k), REDISIDX_OK);
    ASSERT_EQ(k, 0);
    static char longhost[DEDUP_TEMPLATE_MAX_KEY + 2];
    memset(longhost, 'h', sizeof longhost - 1);
    ASSERT_EQ(redisidx_template_learn(ix, longhost, strlen(longhost), 1, blocks, 1),
              REDISIDX_EINVAL);
    redisidx_result_release(&r);
    dedup_templates_free(t);
    redisidx_close(ix);
}

/* An integer read from the suite's Redis: EVAL of a one-line script (KEYS[1] key). */
/* One connection (tconn) to the suite's Redis for the checks below (a connection a
 * command cost seconds over the thousands of counts they read): argv's reply (caller
 * frees), or NULL. */

static redisReply *tcmd(int argc, const char **argv)
{
    if (tconn && tconn->err) {
        redisFree(tconn);
        tconn = NULL;
    }
    if (!tconn) {
        struct timeval tv = {10, 0};
        tconn = redisConnectWithTimeout("127.0.0.1", srv.port, tv);
        if (!tconn || tconn->err)
            return NULL;
    }
    return redisCommandArgv(tconn, argc, argv, NULL);
}

/* An EVAL of script (KEYS[1] key) as test_redis_cmd() answers: the integer, 1 for a status
 * or string, 0 for nil, -1 for an error. */
static long long redis_int(const char *script, const char *key)
{
    const char *argv[4] = {"EVAL", script, "1", key};
    redisReply *x = tcmd(4, argv);
    long long v = !x                               ? -1
                  : x->type == REDIS_REPLY_INTEGER ? x->integer
                  : x->type == REDIS_REPLY_STATUS || x->type == REDIS_REPLY_STRING ||
                          x->type == REDIS_REPLY_ARRAY
                      ? 1
                  : x->type == REDIS_REPLY_NIL ? 0
                                               : -1;
    if (x)
        freeReplyObject(x);
    return v;
}

/* The host's counts key, as redisidx.c names it (PREFIX:t:XXH3-64 of the host key). */
static void tpl_key(char *out, size_t len, const char *prefix, const char *host)
{
    snprintf(out, len, "%s:t:%016llx", prefix, (unsigned long long)XXH3_64bits(host, strlen(host)));
}

/* One document counted both sides: in process and by redisidx_template_learn(). */
static void learn_both(struct redisidx *ix, struct dedup_templates *t, const char *h, uint64_t doc,
                       const uint64_t *blocks, size_t n)
{
    CU_ASSERT_FATAL(dedup_templates_add_doc(t, h, strlen(h), doc, blocks, n, NULL) == DEDUP_OK);
    enum redisidx_code c = redisidx_template_learn(ix, h, strlen(h), doc, blocks, n);
    if (c != REDISIDX_OK)
        fprintf(stderr, "redisidx_template_learn: %s\n", redisidx_errmsg(ix));
    ASSERT_EQ(c, REDISIDX_OK);
}

/* The counts of host h in Redis equal the in-process table's: its documents, its number of
 * blocks (HLEN less the docs field: want_entries, unless (size_t)-1) and the count of each
 * of blocks[0..n). */
static void same_counts(const char *prefix, struct dedup_templates *t, const char *h,
                        const uint64_t *blocks, size_t n, size_t want_entries)
{
    char key[128];
    tpl_key(key, sizeof key, prefix, h);
    ASSERT_EQ(redis_int("return tonumber(redis.call('HGET', KEYS[1], 'docs') or '0')", key),
              (long long)dedup_templates_docs(t, h, strlen(h)));
    if (want_entries != (size_t)-1)
        ASSERT_EQ(redis_int("return redis.call('HLEN', KEYS[1])", key) - 1,
                  (long long)want_entries);
    size_t differ = 0;
    const char **argv = malloc((n + 2) * sizeof *argv);
    char(*field)[17] = malloc((n ? n : 1) * sizeof *field);
    CU_ASSERT_FATAL(argv && field);
    argv[0] = "HMGET";
    argv[1] = key;
    for (size_t i = 0; i < n; i++) {
        snprintf(field[i], sizeof field[i], "%016llx", (unsigned long long)blocks[i]);
        argv[2 + i] = field[i];
    }
    redisReply *x = tcmd((int)n + 2, argv);
    CU_ASSERT_FATAL(x && x->type == REDIS_REPLY_ARRAY && x->elements == n);
    for (size_t i = 0; i < n; i++) {
        const redisReply *v = x->element[i];
        long long c = v->type == REDIS_REPLY_STRING ? strtoll(v->str, NULL, 10) : 0;
        differ += c != (long long)dedup_templates_block_count(t, h, strlen(h), blocks[i]);
    }
    freeReplyObject(x);
    free(argv);
    free(field);
    ASSERT_EQ(differ, 0);
}

/* A number of INFO section of the suite's Redis: the digits after field (e.g.
 * "cmdstat_eval:calls="); 0 when absent, -1 when Redis does not answer. */
static long long info_num(const char *section, const char *field)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", srv.port, tv);
    long long v = -1;
    redisReply *x = c && !c->err ? redisCommand(c, "INFO %s", section) : NULL;
    if (x && x->type == REDIS_REPLY_STRING) {
        char want[128];
        snprintf(want, sizeof want, "\n%s", field);
        const char *f = strstr(x->str, want);
        v = f ? strtoll(f + strlen(want), NULL, 10) : 0;
    }
    if (x)
        freeReplyObject(x);
    if (c)
        redisFree(c);
    return v;
}

/*
 * The learn script goes by its SHA-1 (EVALSHA), its text (EVAL, ~3 KB) only the first time
 * a connection runs it: checks with template blocks send a few hundred bytes, not the
 * script (main sent it with every check); after SCRIPT FLUSH (NOSCRIPT: in a check's EXEC,
 * and in a learn pipeline) the blocks are still counted, once.
 */
static void test_redisidx_scripts_by_sha(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("bysha", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct dedup_templates *t = dedup_templates_new();
    CU_ASSERT_FATAL(t != NULL);
    uint64_t blocks[8] = {11, 12, 13, 14, 15, 16, 17, 18}, seed = 5;
    struct redisidx_result r = {0};
    const char *h = "sha.example";
    long long in0 = 0, evals0 = 0, shas0 = 0;
    for (int d = 0; d < 12; d++) {
        char id[32];
        snprintf(id, sizeof id, "sha%d", d);
        if (d == 2) { /* the script there: from here the bytes a check sends */
            evals0 = info_num("commandstats", "cmdstat_eval:calls=");
            shas0 = info_num("commandstats", "cmdstat_evalsha:calls=");
            in0 = info_num("stats", "total_net_input_bytes:");
        }
        if (d == 8) { /* the scripts flushed under the connection */
            const char *fl[2] = {"SCRIPT", "FLUSH"};
            ASSERT_EQ(test_redis_cmd(&srv, 2, fl), 1);
        }
        struct redisidx_page p = {.id = id,
                                  .id_len = strlen(id),
                                  .fp = mix(&seed),
                                  .host = h,
                                  .host_len = strlen(h),
                                  .doc_hash = 100 + (uint64_t)d,
                                  .blocks = blocks,
                                  .n_blocks = 8};
        ASSERT_EQ(redisidx_check(ix, &p, &r), REDISIDX_OK);
        ASSERT_EQ(r.verdict, REDISIDX_NEW);
        CU_ASSERT_FATAL(dedup_templates_add_doc(t, h, strlen(h), 100 + (uint64_t)d, blocks, 8,
                                                NULL) == DEDUP_OK);
        if (d == 7) {
            long long in1 = info_num("stats", "total_net_input_bytes:");
            long long probe = info_num("stats", "total_net_input_bytes:") - in1;
            /* 6 checks and one INFO, whose own bytes are taken off */
            long long per_check = (in1 - in0 - probe) / 6;
            fprintf(stderr, "(%lld bytes a check with 8 blocks) ", per_check);
            CU_ASSERT(per_check > 0 && per_check < (long long)1500);
            ASSERT_EQ(info_num("commandstats", "cmdstat_eval:calls=") - evals0, 0);
            ASSERT_EQ(info_num("commandstats", "cmdstat_evalsha:calls=") - shas0, 6);
        }
    }
    same_counts("bysha", t, h, blocks, 8, 8);
    /* a learn pipeline after a flush: NOSCRIPT, then EVAL; each document counted once */
    const char *fl[2] = {"SCRIPT", "FLUSH"};
    ASSERT_EQ(test_redis_cmd(&srv, 2, fl), 1);
    struct redisidx_tpl_doc docs[3];
    for (int d = 0; d < 3; d++) {
        docs[d] = (struct redisidx_tpl_doc){h, strlen(h), 200 + (uint64_t)d, blocks, 4, 0};
        CU_ASSERT_FATAL(dedup_templates_add_doc(t, h, strlen(h), 200 + (uint64_t)d, blocks, 4,
                                                NULL) == DEDUP_OK);
    }
    ASSERT_EQ(redisidx_template_learn_many(ix, docs, 3), REDISIDX_OK);
    same_counts("bysha", t, h, blocks, 8, 8);
    redisidx_result_release(&r);
    dedup_templates_free(t);
    redisidx_close(ix);
}

/*
 * Per-host ts: sets of the template counting before its caps (PREFIX:ts:XXH3-HEX16, the
 * host's documents) laid out as that code wrote them, with its t: hashes, under an index
 * made before PREFIX:tsclean existed: the opens that follow unlink the sets (SCAN in
 * steps, each open within its budget, going on from the cursor the last one kept) and mark
 * the index swept; the t: hashes stay and are read; keys that only look alike (a
 * string of that name, another prefix's, the new tseen) stay; an index being swept by
 * another client (tsclean "sweeping") is left to it; a read-only open sweeps nothing.
 */
static void test_redisidx_old_ts_keys(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("oldts", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    redisidx_close(ix);
    ASSERT_EQ(redis_int("return redis.call('GET', KEYS[1])", "oldts:tsclean"), 1);
    enum { HOSTS = 300 };
    char key[128];
    for (int h = 0; h < HOSTS; h++) {
        char host[32];
        snprintf(host, sizeof host, "old%d.example", h);
        tpl_key(key, sizeof key, "oldts", host);
        const char *hs[6] = {"HSET", key, "docs", "20", "000000000000000b", "20"};
        ASSERT_EQ(test_redis_cmd(&srv, 6, hs), 2);
        snprintf(key, sizeof key, "oldts:ts:%016llx",
                 (unsigned long long)XXH3_64bits(host, strlen(host)));
        const char *sa[4] = {"SADD", key, "0000000000000001", "0000000000000002"};
        ASSERT_EQ(test_redis_cmd(&srv, 4, sa), 2);
    }
    const char *decoys[][4] = {{"SET", "oldts:ts:00000000000000ab", "not a set"},
                               {"SADD", "other:ts:00000000000000ab", "x"},
                               {"SADD", "oldts:ts:short", "x"},
                               {"SADD", "oldts:tseen", "x"}};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT(test_redis_cmd(&srv, 3, decoys[i]) == 1);
    const char *del[2] = {"DEL", "oldts:tsclean"}; /* an index of the older code */
    ASSERT_EQ(test_redis_cmd(&srv, 2, del), 1);
    const char *count = "return #redis.call('KEYS', KEYS[1])";
    /* read only (index stats): nothing swept */
    char url[256], err[256];
    struct redisidx_opts ro = {.k = 3, .no_create = 1};
    url_of(url, sizeof url, "oldts", NULL);
    ASSERT_EQ_FATAL(redisidx_open(url, &ro, &ix, err, sizeof err), REDISIDX_OK);
    redisidx_close(ix);
    ASSERT_EQ(redis_int(count, "oldts:ts:*"), HOSTS + 2);
    /* another client sweeping: left to it */
    const char *busy[3] = {"SET", "oldts:tsclean", "sweeping"};
    ASSERT_EQ(test_redis_cmd(&srv, 3, busy), 1);
    ix = open_ix("oldts", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    redisidx_close(ix);
    ASSERT_EQ(redis_int(count, "oldts:ts:*"), HOSTS + 2);
    ASSERT_EQ(test_redis_cmd(&srv, 2, del), 1);
    /* a damaged cursor: the open says which key */
    const char *badc[3] = {"SET", "oldts:tscursor", "abc"};
    ASSERT_EQ(test_redis_cmd(&srv, 3, badc), 1);
    ASSERT_EQ(redisidx_open(url, &ro, &ix, err, sizeof err), REDISIDX_OK);
    redisidx_close(ix);
    struct redisidx_opts rw = {.k = 3};
    ASSERT_EQ(redisidx_open(url, &rw, &ix, err, sizeof err), REDISIDX_ECORRUPT);
    CU_ASSERT(strstr(err, "oldts:tscursor: not a SCAN cursor") != NULL);
    const char *delc[2] = {"DEL", "oldts:tscursor"};
    ASSERT_EQ(test_redis_cmd(&srv, 2, delc), 1);
    ASSERT_EQ(test_redis_cmd(&srv, 2, del), 1); /* its lease */
    /* swept by the opens that follow, one SCAN step each (a budget of 1 ns): each goes on
     * from the cursor the one before kept */
    struct redisidx_opts one = {.k = 3, .sweep_budget = 1e-9};
    int opens = 0;
    while (opens < 10000 &&
           redis_int("return redis.call('GET', KEYS[1]) == '1' and 1 or 0", "oldts:tsclean") != 1) {
        ASSERT_EQ_FATAL(redisidx_open(url, &one, &ix, err, sizeof err), REDISIDX_OK);
        redisidx_close(ix);
        opens++;
    }
    CU_ASSERT(opens >= 2);
    ix = open_ix("oldts", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    ASSERT_EQ(redis_int(count, "oldts:ts:*"), 2); /* the string and "short" */
    ASSERT_EQ(redis_int("return redis.call('EXISTS', KEYS[1])", "oldts:tscursor"), 0);
    ASSERT_EQ(redis_int(count, "oldts:t:*"), HOSTS);
    ASSERT_EQ(redis_int(count, "other:ts:*"), 1);
    ASSERT_EQ(redis_int("return redis.call('EXISTS', KEYS[1])", "oldts:tseen"), 1);
    ASSERT_EQ(redis_int("return tonumber(redis.call('GET', KEYS[1]))", "oldts:tsclean"), 1);
    ASSERT_EQ(redis_int("return redis.call('TTL', KEYS[1])", "oldts:tsclean"), -1);
    /* the old counts are read: block 11, on all 20 documents of its host, is a template */
    uint64_t blk = 11;
    uint32_t ntok = 20;
    unsigned char m = 0;
    size_t marked = 0;
    ASSERT_EQ(redisidx_template_mark(ix, "old7.example", 12, &blk, &ntok, 1, &m, &marked),
              REDISIDX_OK);
    ASSERT_EQ(marked, 1);
    redisidx_close(ix);
}

/* The documents counted for host in Redis (the "docs" field of its counts), -1 on error. */
static long long tpl_docs(const char *prefix, const char *host)
{
    char key[128];
    tpl_key(key, sizeof key, prefix, host);
    const char *argv[3] = {"HGET", key, "docs"};
    redisReply *x = tcmd(3, argv);
    long long v = !x ? -1 : x->type == REDIS_REPLY_STRING ? atoll(x->str) : x->type == REDIS_REPLY_NIL ? 0 : -1;
    if (x)
        freeReplyObject(x);
    return v;
}

/* A near-duplicate's learn (redisidx_template_learn_young(), FILTER_DECIDE_LEARN_NEAR):
 * counted while the host has fewer documents counted than the bound, the check in the
 * script; past it nothing is counted and the document is not remembered (a later plain
 * learn of it counts); a document counted before is not counted again. */
static void test_redisidx_template_learn_young(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("young", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    const char *h = "y.example";
    uint64_t blocks[2] = {7, 0};
    uint32_t ntok[1] = {10};
    unsigned char m[1];
    size_t k = 9;
    for (uint64_t doc = 1; doc <= 3; doc++) {
        blocks[1] = 100 + doc;
        ASSERT_EQ(redisidx_template_learn_young(ix, h, strlen(h), doc, blocks, 2, 3), REDISIDX_OK);
        ASSERT_EQ(tpl_docs("young", h), (long long)doc);
    }
    ASSERT_EQ(redisidx_template_learn_young(ix, h, strlen(h), 1, blocks, 2, 0), REDISIDX_OK);
    ASSERT_EQ(tpl_docs("young", h), 3); /* counted before */
    ASSERT_EQ(redisidx_template_mark(ix, h, strlen(h), blocks, ntok, 1, m, &k), REDISIDX_OK);
    ASSERT_EQ(k, 1); /* on 3 of 3 documents */
    blocks[1] = 104;
    ASSERT_EQ(redisidx_template_learn_young(ix, h, strlen(h), 4, blocks, 2, 3), REDISIDX_OK);
    ASSERT_EQ(tpl_docs("young", h), 3); /* the host is not young any more */
    ASSERT_EQ(redisidx_template_learn(ix, h, strlen(h), 4, blocks, 2), REDISIDX_OK);
    ASSERT_EQ(tpl_docs("young", h), 4); /* not remembered by the young learn */
    redisidx_close(ix);
}

/*
 * The in-process table's caps hold in Redis, with the same counts: a host sent documents of
 * 32,768 blocks each (the most one counts) from a pool of shared and own blocks passes the
 * 65,536 blocks of a host and drops its lowest counts as the in-process table does (HLEN
 * stays at most the cap, the counts equal); then DEDUP_TEMPLATE_MAX_HOSTS + 40 hosts, some
 * of them with two documents: the hosts with the fewest documents (ties: the smallest key)
 * go, their keys deleted, as the in-process table drops them (the hosts kept, their counts
 * and documents equal), the keys of the template counts never more than the cap. The hosts
 * are sent 2,048 documents a pipeline (redisidx_template_learn_many): 75,000 documents one
 * round trip each took 21 s at load 7, pipelined 9 s (Redis's own time, one script each).
 */
static void test_redisidx_template_caps(void)
{
    CU_ASSERT_FATAL(srv_up);
    double t0 = mono();
    struct redisidx *ix = open_ix("tcap", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct dedup_templates *t = dedup_templates_new();
    CU_ASSERT_FATAL(t != NULL);
    size_t nb = DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2;
    uint64_t *blocks = malloc(nb * sizeof *blocks), seed = 7;
    CU_ASSERT_FATAL(blocks != NULL);
    /* one host past its cap: 6 documents */
    const char *big = "big.example";
    for (int d = 0; d < 6; d++) {
        for (size_t i = 0; i < nb; i++)
            blocks[i] = i < 64 ? 1 + i :                      /* on every document */
                            i % 3 ? 1000 + mix(&seed) % 40000 /* shared by a few */
                                  : ((uint64_t)d << 32) + i;  /* its own */
        learn_both(ix, t, big, 0x5000 + (uint64_t)d, blocks, nb);
        uint64_t sample[256];
        for (size_t i = 0; i < 256; i++)
            sample[i] = blocks[(i * 131) % nb];
        char key[128];
        tpl_key(key, sizeof key, "tcap", big);
        long long hlen = redis_int("return redis.call('HLEN', KEYS[1])", key);
        CU_ASSERT(hlen - 1 <= (long long)DEDUP_TEMPLATE_HOST_MAX_ENTRIES);
        same_counts("tcap", t, big, sample, 256, (size_t)(hlen - 1));
        ASSERT_EQ(hlen - 1, (long long)dedup_templates_entry_count(t));
    }
    double t_big = mono() - t0;
    /* past the host cap: hosts h0..hN, every seventh with two documents */
    size_t nh = DEDUP_TEMPLATE_MAX_HOSTS + 40;
    enum { PIPE = 2048 };
    static char hostname[PIPE][24];
    static uint64_t hb[PIPE][2];
    static struct redisidx_tpl_doc batch[PIPE];
    size_t nbatch = 0;
    for (size_t h = 0; h < nh; h++) {
        for (int d = 0; d < (h % 7 ? 1 : 2); d++) {
            char *host = hostname[nbatch];
            snprintf(host, sizeof hostname[0], "h%zu.example", h);
            hb[nbatch][0] = 1 + h % 5;
            hb[nbatch][1] = 100 + h;
            batch[nbatch] = (struct redisidx_tpl_doc){host, strlen(host), 1 + (uint64_t)d,
                                                      hb[nbatch], d ? 1 : 2, 0};
            CU_ASSERT_FATAL(dedup_templates_add_doc(t, host, strlen(host), 1 + (uint64_t)d,
                                                    hb[nbatch], d ? 1 : 2, NULL) == DEDUP_OK);
            if (++nbatch == PIPE || (h == nh - 1 && d == (h % 7 ? 0 : 1))) {
                ASSERT_EQ(redisidx_template_learn_many(ix, batch, nbatch), REDISIDX_OK);
                nbatch = 0;
            }
        }
    }
    ASSERT_EQ(dedup_templates_host_count(t), DEDUP_TEMPLATE_MAX_HOSTS);
    ASSERT_EQ(redis_int("return redis.call('ZCARD', KEYS[1])", "tcap:thosts"),
              DEDUP_TEMPLATE_MAX_HOSTS);
    ASSERT_EQ(redis_int("return #redis.call('KEYS', KEYS[1])", "tcap:t:*"),
              DEDUP_TEMPLATE_MAX_HOSTS);
    ASSERT_EQ(redis_int("return tonumber(redis.call('GET', KEYS[1]))", "tcap:tentries"),
              (long long)dedup_templates_entry_count(t));
    size_t gone = 0, differ = 0;
    /* a sample: kept hosts, and the first to go (one document, the smallest keys) */
    size_t sample[700], ns = 0;
    for (size_t h = 0; h < nh; h += 97)
        sample[ns++] = h;
    for (size_t h = 1; h <= 10000; h *= 10)
        sample[ns++] = h;
    for (size_t h = 10001; h < 10010; h++)
        sample[ns++] = h;
    for (size_t i = 0; i < ns; i++) {
        size_t h = sample[i];
        char host[32], key[128];
        snprintf(host, sizeof host, "h%zu.example", h);
        tpl_key(key, sizeof key, "tcap", host);
        uint64_t docs = dedup_templates_docs(t, host, strlen(host));
        gone += docs == 0;
        differ += redis_int("return tonumber(redis.call('HGET', KEYS[1], 'docs') or '0')", key) !=
                  (long long)docs;
    }
    ASSERT_EQ(differ, 0);
    CU_ASSERT(gone >= 10);                               /* the sample holds dropped hosts */
    same_counts("tcap", t, big, blocks, 64, (size_t)-1); /* the big host's template kept */
    fprintf(stderr, "(template caps: %.1f s, the big host %.1f s) ", mono() - t0, t_big);
    free(blocks);
    dedup_templates_free(t);
    redisidx_close(ix);
}

/*
 * The cap on blocks of all hosts (DEDUP_TEMPLATE_MAX_ENTRIES, 2M): 48 hosts, 2 documents
 * each of 32,768 blocks (16,384 the host's own on both, 16,384 the document's own). Until
 * the total first reaches the cap, the counts in Redis equal the in-process table's after
 * every document; past it Redis drops whole hosts (fewest documents first) where the
 * in-process table drops the blocks of count 1 of all hosts (redisidx.c, LEARN_LUA, step
 * 4): the total (PREFIX:tentries, and the sum of the hashes' sizes) stays at most the cap,
 * hosts went, and no document takes long. About 3M blocks sent: seconds of Redis time, so
 * only with REDISIDX_TOTAL_CAP=1 in the environment (make stress).
 */
static void test_redisidx_template_total_cap(void)
{
    if (!getenv("REDISIDX_TOTAL_CAP")) {
        fprintf(stderr, "(test_redisidx_template_total_cap: REDISIDX_TOTAL_CAP=1 runs it) ");
        return;
    }
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("ttot", NULL, 3);
    CU_ASSERT_FATAL(ix != NULL);
    struct dedup_templates *t = dedup_templates_new();
    CU_ASSERT_FATAL(t != NULL);
    size_t nb = DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2, last = 0;
    int evicted = 0;
    double slowest = 0;
    uint64_t *blocks = malloc(nb * sizeof *blocks);
    CU_ASSERT_FATAL(blocks != NULL);
    for (uint64_t d = 0; d < 96; d++) {
        char host[32];
        snprintf(host, sizeof host, "t%llu.example", (unsigned long long)(d / 2));
        for (size_t i = 0; i < nb; i++)
            blocks[i] = i < nb / 2 ? (d / 2) << 40 | (i + 1) : (d << 40 | 1ull << 39 | i);
        struct timespec a0, a1;
        clock_gettime(CLOCK_MONOTONIC, &a0);
        learn_both(ix, t, host, d + 1, blocks, nb);
        clock_gettime(CLOCK_MONOTONIC, &a1);
        double took = (double)(a1.tv_sec - a0.tv_sec) + (double)(a1.tv_nsec - a0.tv_nsec) / 1e9;
        slowest = took > slowest ? took : slowest;
        size_t total = dedup_templates_entry_count(t);
        evicted |= total < last;
        last = total;
        long long in_redis =
            redis_int("return tonumber(redis.call('GET', KEYS[1]))", "ttot:tentries");
        CU_ASSERT(in_redis > 0 && in_redis <= (long long)DEDUP_TEMPLATE_MAX_ENTRIES);
        if (evicted)
            continue;
        ASSERT_EQ(in_redis, (long long)total);
        uint64_t sample[64];
        for (size_t i = 0; i < 64; i++)
            sample[i] = blocks[(i * 1031) % nb];
        same_counts("ttot", t, host, sample, 64, (size_t)-1);
    }
    CU_ASSERT(evicted);
    CU_ASSERT(redis_int("return redis.call('ZCARD', KEYS[1])", "ttot:thosts") < 48);
    fprintf(stderr, "(the slowest document: %.2f s) ", slowest);
    /* the hashes hold what the total says */
    ASSERT_EQ(redis_int("local n = 0 for _, k in ipairs(redis.call('KEYS', KEYS[1])) do "
                        "n = n + redis.call('HLEN', k) - 1 end return n",
                        "ttot:t:*"),
              redis_int("return tonumber(redis.call('GET', KEYS[1]))", "ttot:tentries"));
    free(blocks);
    dedup_templates_free(t);
    redisidx_close(ix);
}

/* A script that keeps Redis busy for about 1.5 s (read-only, so that it ends by itself). */
static void *busy_script(void *arg)
{
    (void)arg;
    const char *argv[3] = {"EVAL",
                           "local t = redis.call('TIME') local end_us = t[1] * 1e6 + t[2] + 1.5e6 "
                           "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] >= end_us "
                           "return 1",
                           "0"};
    (void)test_redis_cmd(&srv, 3, argv);
    return NULL;
}

/* A Redis busy running a script (BUSY to every other command, as while a learn makes room
 * for a host past the caps) is waited for as a restart is: the check connects again and is
 * answered once the script ends, well within retry=. */
static void test_redisidx_busy_waits(void)
{
    CU_ASSERT_FATAL(srv_up);
    struct redisidx *ix = open_ix("busy", "&timeout=0.3", 3);
    CU_ASSERT_FATAL(ix != NULL);
    const char *lim[4] = {"CONFIG", "SET", "busy-reply-threshold", "100"};
    CU_ASSERT_FATAL(test_redis_cmd(&srv, 4, lim) == 1);
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, busy_script, NULL) == 0);
    struct timespec pause = {0, 400 * 1000000L}; /* the script running, past the threshold */
    nanosleep(&pause, NULL);
    struct redisidx_page p = {.id = "http://busy.example/", .id_len = 20, .fp = 0x1234ull};
    struct redisidx_result r = {0};
    enum redisidx_code c = redisidx_check(ix, &p, &r);
    if (c != REDISIDX_OK)
        fprintf(stderr, "redisidx_check: %s\n", redisidx_errmsg(ix));
    ASSERT_EQ(c, REDISIDX_OK);
    ASSERT_EQ(r.verdict, REDISIDX_NEW);
    struct redisidx_stats st;
    ASSERT_EQ(redisidx_stats(ix, &st), REDISIDX_OK);
    CU_ASSERT(st.reconnects >= 1); /* it did meet the script */
    pthread_join(th, NULL);
    const char *back[4] = {"CONFIG", "SET", "busy-reply-threshold", "5000"};
    CU_ASSERT(test_redis_cmd(&srv, 4, back) == 1);
    redisidx_result_release(&r);
    redisidx_close(ix);
}

extern void test_redisidx_register(void);
void test_redisidx_register(void)
{
    CU_pSuite s = CU_add_suite("redisidx", suite_init, suite_clean);
    CU_add_test(s, "test_redisidx_same_as_in_process", test_redisidx_same_as_in_process);
    CU_add_test(s, "test_redisidx_exact_known_delete", test_redisidx_exact_known_delete);
    CU_add_test(s, "test_redisidx_clients_keep_one", test_redisidx_clients_keep_one);
    CU_add_test(s, "test_redisidx_urls_and_meta", test_redisidx_urls_and_meta);
    CU_add_test(s, "test_redisidx_damaged_keys", test_redisidx_damaged_keys);
    CU_add_test(s, "test_redisidx_connections", test_redisidx_connections);
    CU_add_test(s, "test_redisidx_reconnect", test_redisidx_reconnect);
    CU_add_test(s, "test_redisidx_payload_meta", test_redisidx_payload_meta);
    CU_add_test(s, "test_redisidx_claim_any_page", test_redisidx_claim_any_page);
    CU_add_test(s, "test_redisidx_old_ts_keys", test_redisidx_old_ts_keys);
    CU_add_test(s, "test_redisidx_templates_as_in_process", test_redisidx_templates_as_in_process);
    CU_add_test(s, "test_redisidx_template_caps", test_redisidx_template_caps);
    CU_add_test(s, "test_redisidx_template_learn_young", test_redisidx_template_learn_young);
    CU_add_test(s, "test_redisidx_scripts_by_sha", test_redisidx_scripts_by_sha);
    CU_add_test(s, "test_redisidx_template_total_cap", test_redisidx_template_total_cap);
    CU_add_test(s, "test_redisidx_busy_waits", test_redisidx_busy_waits);
}

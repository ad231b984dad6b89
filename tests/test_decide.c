/*
 * Suite "decide": the one decision of filter/decide.h that `simcrawl crawl`, `simcrawl
 * dedup` and the library's filter share: new / exact duplicate (payload key, with the
 * caller's metadata) / near-duplicate (within k) in that order, what each page flag
 * changes (noindex, keep, remembering an unfingerprinted payload, learning from pages with
 * too little text or not fingerprinted at all), the id lookup, the payload cap, the
 * metadata replaced and listed in order, the hooks and their failures, and check-and-add
 * being atomic across threads.
 */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dedup/dedup.h"
#include "filter/decide.h"
#include "tests/testutil.h"

static struct dedup_index *new_index(unsigned k)
{
    struct dedup_design des;
    struct dedup_index *idx = NULL;
    if (dedup_design_choose(k, 1000, 0, &des) != DEDUP_OK ||
        dedup_index_new(&des, &idx) != DEDUP_OK)
        return NULL;
    return idx;
}

static struct filter_decide *new_decide(struct dedup_index *idx, unsigned k, int by_id,
                                        size_t max_payloads)
{
    struct filter_decide_opts o = {.index = idx, .k = k, .templates = 1, .by_id = by_id,
                                   .max_payloads = max_payloads};
    struct filter_decide *d = NULL;
    if (filter_decide_new(&o, &d) != DEDUP_OK)
        return NULL;
    return d;
}

/* A fingerprinted page with payload key and metadata strings. */
static struct filter_decide_page page(const char *id, uint64_t fp, const char *key,
                                      const char *meta)
{
    struct filter_decide_page p = {0};
    p.id = id;
    p.id_len = strlen(id);
    p.has_fp = 1;
    p.fp = fp;
    if (key) {
        p.key = key;
        p.key_len = strlen(key);
    }
    if (meta) {
        p.meta = meta;
        p.meta_len = strlen(meta) + 1;
    }
    return p;
}

static void test_decide_exact_near_new(void)
{
    int found;
    struct dedup_index *idx = new_index(3);
    struct filter_decide *d = new_decide(idx, 3, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct filter_decide_result r = {0};
    const uint64_t a = 0x0123456789abcdefull;

    struct filter_decide_page p = page("http://h/a", a, "sha1:A", "meta of a");
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    ASSERT_EQ(r.add_code, DEDUP_OK);
    ASSERT_EQ(r.stored, FILTER_STORED_YES);
    ASSERT_EQ(r.doc, 0);

    /* the same payload: exact, whatever the fingerprint; the metadata comes back */
    p = page("http://h/a-copy", ~a, "sha1:A", "other");
    ASSERT_EQ(filter_decide_lookup(d, &p, &r, &found), DEDUP_OK);
    ASSERT_EQ(found, 1);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_EXACT);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_EXACT);
    CU_ASSERT_STRING_EQUAL((const char *)r.meta, "meta of a");
    ASSERT_EQ(r.meta_len, strlen("meta of a") + 1);
    CU_ASSERT_TRUE(r.has_doc);
    CU_ASSERT_STRING_EQUAL(r.dup_id, "http://h/a");
    ASSERT_EQ(r.fp, a);

    /* within k: near, not added, its payload not remembered */
    p = page("http://h/b", a ^ 0x7, "sha1:B", "meta of b");
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.distance, 3);
    CU_ASSERT_STRING_EQUAL(r.dup_id, "http://h/a");
    ASSERT_EQ(r.stored, FILTER_STORED_NONE);
    ASSERT_EQ(filter_decide_lookup(d, &p, &r, &found), DEDUP_OK);
    ASSERT_EQ(found, 0);

    /* beyond k: new */
    p = page("http://h/c", a ^ 0xf, "sha1:C", "meta of c");
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    ASSERT_EQ(r.doc, 1);
    ASSERT_EQ(dedup_index_doc_count(idx), 2);
    ASSERT_EQ(filter_decide_payload_count(d), 2);

    filter_decide_result_release(&r);
    filter_decide_free(d);
    dedup_index_free(idx);
}

static void test_decide_flags(void)
{
    struct dedup_index *idx = new_index(3);
    struct filter_decide *d = new_decide(idx, 3, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct filter_decide_result r = {0};
    const uint64_t a = 0xfedcba9876543210ull;

    /* noindex: nothing looked up, nothing added, nothing remembered */
    struct filter_decide_page p = page("u1", a, "k1", "m1");
    p.flags = FILTER_DECIDE_NOINDEX;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NOINDEX);
    ASSERT_EQ(dedup_index_doc_count(idx), 0);
    ASSERT_EQ(filter_decide_payload_count(d), 0);

    /* not fingerprinted: not added; its payload remembered only when asked */
    p = page("u2", 0, "k2", "m2");
    p.has_fp = 0;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_UNFINGERPRINTED);
    ASSERT_EQ(filter_decide_payload_count(d), 0);
    p.flags = FILTER_DECIDE_REMEMBER_UNFP;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_UNFINGERPRINTED);
    ASSERT_EQ(r.stored, FILTER_STORED_YES);
    ASSERT_EQ(dedup_index_doc_count(idx), 0);
    p = page("u2-again", a, "k2", NULL); /* its payload again: exact, of no document */
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_EXACT);
    CU_ASSERT_FALSE(r.has_doc);
    CU_ASSERT_STRING_EQUAL((const char *)r.meta, "m2");

    /* keep: new even within k */
    p = page("u3", a, "k3", "m3");
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    p = page("u4", a, "k4", "m4");
    p.flags = FILTER_DECIDE_KEEP;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    ASSERT_EQ(dedup_index_doc_count(idx), 2);

    /* too little text: its blocks are learned with LEARN_SHORT only (3 documents of a
     * host with the same block make it a template block) */
    uint64_t block = 0x1111, blocks[1] = {block};
    uint32_t ntok = 10; /* >= DEDUP_TEMPLATE_MIN_TOKENS: a run long enough to leave out */
    unsigned char mark = 0;
    for (int learn = 0; learn < 2; learn++) {
        for (uint64_t doc = 1; doc <= 3; doc++) {
            p = page("http://short/", 0, NULL, NULL);
            p.has_fp = 0;
            p.too_little_text = 1;
            p.host = learn ? "short" : "other";
            p.host_len = strlen(p.host);
            p.doc_hash = doc;
            p.blocks = blocks;
            p.n_blocks = 1;
            p.flags = learn ? FILTER_DECIDE_LEARN_SHORT : 0;
            ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
            ASSERT_EQ(r.verdict, FILTER_VERDICT_UNFINGERPRINTED);
        }
    }
    /* not fingerprinted for another reason (too much text): LEARN_UNFP counts it, unless
     * its payload is known */
    ASSERT_EQ(filter_decide_remember(d, "dup", 3, UINT32_MAX, NULL, 0), FILTER_STORED_YES);
    for (int known = 0; known < 2; known++) {
        for (uint64_t doc = 1; doc <= 3; doc++) {
            char key[8];
            snprintf(key, sizeof key, "big%d", (int)doc);
            p = page("http://big/", 0, known ? "dup" : key, NULL);
            p.has_fp = 0;
            p.host = known ? "big-dup" : "big";
            p.host_len = strlen(p.host);
            p.doc_hash = doc;
            p.blocks = blocks;
            p.n_blocks = 1;
            p.flags = FILTER_DECIDE_LEARN_SHORT | FILTER_DECIDE_LEARN_UNFP;
            ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
            ASSERT_EQ(r.verdict,
                            known ? FILTER_VERDICT_EXACT : FILTER_VERDICT_UNFINGERPRINTED);
        }
    }
    ASSERT_EQ(filter_decide_mark(d, "big", 3, &block, &ntok, 1, &mark), 1);
    ASSERT_EQ(filter_decide_mark(d, "big-dup", 7, &block, &ntok, 1, &mark), 0);
    mark = 9;
    ASSERT_EQ(filter_decide_mark(d, "other", 5, &block, &ntok, 1, &mark), 0);
    ASSERT_EQ(mark, 0);
    ASSERT_EQ(filter_decide_mark(d, "short", 5, &block, &ntok, 1, &mark), 1);
    ASSERT_EQ(mark, 1);

    filter_decide_result_release(&r);
    filter_decide_free(d);
    dedup_index_free(idx);
}

struct seen {
    char keys[8][16];
    int n;
};

static void collect(void *userdata, const void *key, size_t key_len, uint32_t doc,
                    const void *meta, size_t meta_len)
{
    struct seen *s = userdata;
    (void)doc;
    (void)meta;
    (void)meta_len;
    if (s->n < 8)
        snprintf(s->keys[s->n++], sizeof s->keys[0], "%.*s", (int)key_len, (const char *)key);
}

static void test_decide_ids_cap_meta_order(void)
{
    int found;
    struct dedup_index *idx = new_index(3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
    uint32_t doc;
    ASSERT_EQ(dedup_index_add(idx, 0x5555, "old", 3, &doc), DEDUP_OK);
    struct filter_decide *d = new_decide(idx, 3, 1, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct filter_decide_result r = {0};

    /* an id indexed before the decision was made, and one added by it */
    struct filter_decide_page p = page("old", 0xffff0000ffff0000ull, NULL, NULL);
    ASSERT_EQ(filter_decide_lookup(d, &p, &r, &found), DEDUP_OK);
    ASSERT_EQ(found, 1);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_KNOWN_ID);
    ASSERT_EQ(r.fp, 0x5555);
    p = page("new", 0xffff0000ffff0000ull, "z", "1");
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    p.key = "other";
    p.key_len = 5;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_KNOWN_ID);
    ASSERT_EQ(r.doc, 1);

    /* the cap: remembered up to 3 keys, the first of a key stays, listed in order */
    ASSERT_EQ(filter_decide_remember(d, "y", 1, UINT32_MAX, "2", 2), FILTER_STORED_YES);
    ASSERT_EQ(filter_decide_remember(d, "z", 1, UINT32_MAX, "3", 2), FILTER_STORED_NONE);
    ASSERT_EQ(filter_decide_remember(d, "x", 1, UINT32_MAX, "4", 2), FILTER_STORED_YES);
    ASSERT_EQ(filter_decide_remember(d, "w", 1, UINT32_MAX, "5", 2), FILTER_STORED_FULL);
    struct seen s = {0};
    filter_decide_foreach(d, collect, &s);
    ASSERT_EQ(s.n, 3);
    CU_ASSERT_STRING_EQUAL(s.keys[0], "z");
    CU_ASSERT_STRING_EQUAL(s.keys[1], "y");
    CU_ASSERT_STRING_EQUAL(s.keys[2], "x");

    /* the metadata replaced (the WARC record id known after the write) */
    ASSERT_EQ(filter_decide_set_meta(d, "z", 1, "record-id", 10), DEDUP_OK);
    ASSERT_EQ(filter_decide_set_meta(d, "nope", 4, "x", 2), DEDUP_EINVAL);
    p = page("another", 0x1, "z", NULL);
    ASSERT_EQ(filter_decide_lookup(d, &p, &r, &found), DEDUP_OK);
    ASSERT_EQ(found, 1);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_EXACT);
    CU_ASSERT_STRING_EQUAL((const char *)r.meta, "record-id");
    CU_ASSERT_STRING_EQUAL(r.dup_id, "new");

    filter_decide_result_release(&r);
    filter_decide_free(d);
    dedup_index_free(idx);
}

struct hooks_log {
    int start_fail, reserve_fail, added_fail;
    int starts, reserves, added;
    uint32_t last_doc;
};

static int h_start(void *ud)
{
    struct hooks_log *h = ud;
    h->starts++;
    return h->start_fail;
}

static int h_reserve(void *ud, uint32_t docs, const struct filter_decide_page *p)
{
    (void)p;
    struct hooks_log *h = ud;
    (void)docs;
    h->reserves++;
    return h->reserve_fail;
}

static int h_added(void *ud, uint32_t doc, const struct filter_decide_page *p)
{
    struct hooks_log *h = ud;
    (void)p;
    h->added++;
    h->last_doc = doc;
    return h->added_fail;
}

static void test_decide_hooks(void)
{
    struct dedup_index *idx = new_index(3);
    struct hooks_log h = {0};
    struct filter_decide_opts o = {.index = idx, .k = 3,
                                   .hooks = {h_start, h_reserve, h_added, &h}};
    struct filter_decide *d = NULL;
    ASSERT_EQ_FATAL(filter_decide_new(&o, &d), DEDUP_OK);
    struct filter_decide_result r = {0};
    struct filter_decide_page p = page("a", 0xaaaa, "ka", NULL);

    h.start_fail = -7; /* nothing decided */
    ASSERT_EQ(filter_decide_page(d, &p, &r), -1);
    ASSERT_EQ(r.hook_code, -7);
    ASSERT_EQ(h.reserves, 0);
    h.start_fail = 0;
    h.reserve_fail = -8; /* nothing added */
    ASSERT_EQ(filter_decide_page(d, &p, &r), -1);
    ASSERT_EQ(r.hook_code, -8);
    ASSERT_EQ(dedup_index_doc_count(idx), 0);
    ASSERT_EQ(filter_decide_payload_count(d), 0);
    ASSERT_EQ(h.added, 0);
    h.reserve_fail = 0;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    ASSERT_EQ(h.added, 1);
    ASSERT_EQ(h.last_doc, 0);
    /* the added hook fails: the page is in, the failure handed back */
    h.added_fail = -9;
    p = page("b", 0x5555555555555555ull, "kb", NULL);
    ASSERT_EQ(filter_decide_page(d, &p, &r), -1);
    ASSERT_EQ(r.hook_code, -9);
    ASSERT_EQ(dedup_index_doc_count(idx), 2);
    /* filter_decide_add: the reserve hook, not the added one */
    uint32_t doc;
    enum dedup_code tc;
    p = page("c", 0x3333333333333333ull, NULL, NULL);
    ASSERT_EQ(filter_decide_add(d, &p, &doc, &tc), DEDUP_OK);
    ASSERT_EQ(doc, 2);
    ASSERT_EQ(h.added, 2);

    filter_decide_result_release(&r);
    filter_decide_free(d);
    dedup_index_free(idx);
}

/* Eight threads decide pages within k of each other at the same moment: one is new. */
struct racer {
    struct filter_decide *d;
    pthread_barrier_t *go;
    int i;
    enum filter_verdict verdict;
    int rc;
};

static void *race(void *arg)
{
    struct racer *t = arg;
    char id[16], key[16];
    snprintf(id, sizeof id, "page%d", t->i);
    snprintf(key, sizeof key, "key%d", t->i);
    struct filter_decide_page p = page(id, 0xc0ffee00c0ffee00ull ^ (1ull << t->i), key, NULL);
    struct filter_decide_result r = {0};
    pthread_barrier_wait(t->go);
    t->rc = filter_decide_page(t->d, &p, &r);
    t->verdict = r.verdict;
    filter_decide_result_release(&r);
    return NULL;
}

static void test_decide_threads_one_new(void)
{
    for (int round = 0; round < 20; round++) {
        struct dedup_index *idx = new_index(3);
        struct filter_decide *d = new_decide(idx, 3, 1, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 8);
        struct racer t[8];
        pthread_t th[8];
        for (int i = 0; i < 8; i++) {
            t[i] = (struct racer){d, &go, i, FILTER_VERDICT_NOINDEX, -1};
            pthread_create(&th[i], NULL, race, &t[i]);
        }
        int news = 0, nears = 0;
        for (int i = 0; i < 8; i++) {
            pthread_join(th[i], NULL);
            ASSERT_EQ(t[i].rc, 0);
            news += t[i].verdict == FILTER_VERDICT_NEW;
            nears += t[i].verdict == FILTER_VERDICT_NEAR;
        }
        ASSERT_EQ(news, 1);
        ASSERT_EQ(nears, 7);
        ASSERT_EQ(dedup_index_doc_count(idx), 1);
        pthread_barrier_destroy(&go);
        filter_decide_free(d);
        dedup_index_free(idx);
    }
}

static int learning_calls;
static int learning_fail;
static int on_learning(void *userdata, const struct filter_decide_page *p)
{
    (void)userdata;
    (void)p;
    learning_calls++;
    return learning_fail;
}

/* A near-duplicate page with blocks menu (shared) and own (its own), host h, whole-text
 * hash doc. */
static struct filter_decide_page near_page(const char *id, uint64_t fp, const char *host,
                                           uint64_t doc, const uint64_t *blocks, size_t n)
{
    struct filter_decide_page p = page(id, fp, NULL, NULL);
    p.host = host;
    p.host_len = strlen(host);
    p.doc_hash = doc;
    p.blocks = blocks;
    p.n_blocks = n;
    p.flags = FILTER_DECIDE_LEARN_NEAR;
    return p;
}

/*
 * LEARN_NEAR (docs/FINGERPRINT.md, "Where T comes from"): a page decided NEAR counts its
 * blocks while its host has fewer than DEDUP_TEMPLATE_YOUNG_DOCS documents counted, so a
 * menu that only near-duplicates carry becomes a template after 3 counted pages (the
 * young-host deadlock: a dropped page counted nothing, the menu never reached 3); never an
 * exact copy of a counted document (the same whole text), never without the flag, never
 * with NO_ADD, never on a host past the bound; the learning hook runs first and its failure
 * counts nothing; filter_decide_learn() counts as the decision did (a replay).
 */
static void test_decide_learn_near(void)
{
    struct dedup_index *idx = new_index(3);
    struct filter_decide_opts o = {.index = idx, .k = 3, .templates = 1};
    o.hooks.learning = on_learning;
    struct filter_decide *d = NULL;
    ASSERT_EQ_FATAL(filter_decide_new(&o, &d), DEDUP_OK);
    struct filter_decide_result r = {0};
    struct dedup_templates *t = dedup_index_templates(idx);
    const uint64_t fp = 0x5555aaaa3333ccccull, menu = 0x4d454e55;
    uint64_t bl[2] = {menu, 0};
    uint32_t ntok[1] = {600};
    unsigned char mark = 0;
    learning_calls = learning_fail = 0;

    /* page 1: new, counted */
    bl[1] = 1001;
    struct filter_decide_page p = near_page("h/1", fp, "h", 1, bl, 2);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEW);
    ASSERT_EQ(r.learned, 0);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 1);
    /* without the flag, with NO_ADD: near, nothing counted, no hook */
    bl[1] = 1002;
    p = near_page("h/2", fp ^ 1, "h", 2, bl, 2);
    p.flags = 0;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 0);
    p.flags = FILTER_DECIDE_LEARN_NEAR | FILTER_DECIDE_NO_ADD;
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 0);
    ASSERT_EQ(learning_calls, 0);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 1);
    /* the hook fails: the decision fails, nothing counted */
    learning_fail = -7;
    p.flags = FILTER_DECIDE_LEARN_NEAR;
    ASSERT_EQ(filter_decide_page(d, &p, &r), -1);
    ASSERT_EQ(r.hook_code, -7);
    ASSERT_EQ(r.learned, 0);
    ASSERT_EQ(learning_calls, 1);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 1);
    learning_fail = 0;
    /* page 2: near, counted; an exact copy of it (the same whole text) is not */
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 1);
    ASSERT_EQ(learning_calls, 2);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, menu), 2);
    p.id = "h/2-copy";
    p.id_len = strlen(p.id);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 0);
    ASSERT_EQ(learning_calls, 2);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 2);
    ASSERT_EQ(filter_decide_mark(d, "h", 1, bl, ntok, 1, &mark), 0);
    /* page 3: near, counted: the menu is on 3 of 3 documents, a template block now */
    bl[1] = 1003;
    p = near_page("h/3", fp ^ 2, "h", 3, bl, 2);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 1);
    ASSERT_EQ(filter_decide_mark(d, "h", 1, bl, ntok, 1, &mark), 1);
    ASSERT_EQ(mark, 1);
    /* filter_decide_learn() counts without deciding (a replay) */
    bl[1] = 1004;
    p = near_page("h/4", fp, "h", 4, bl, 2);
    ASSERT_EQ(filter_decide_learn(d, &p), DEDUP_OK);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 4);
    ASSERT_EQ(dedup_index_doc_count(idx), 1);
    /* a host past the bound counts no near-duplicate */
    for (uint64_t n = 5; n <= DEDUP_TEMPLATE_YOUNG_DOCS; n++) {
        bl[1] = 1000 + n;
        p = near_page("h/n", fp, "h", n, bl, 2);
        ASSERT_EQ(filter_decide_learn(d, &p), DEDUP_OK);
    }
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), DEDUP_TEMPLATE_YOUNG_DOCS);
    bl[1] = 999;
    p = near_page("h/old", fp ^ 4, "h", 999, bl, 2);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 0);
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), DEDUP_TEMPLATE_YOUNG_DOCS);
    /* another host is young on its own */
    p = near_page("g/1", fp ^ 8, "g", 1, bl, 2);
    ASSERT_EQ(filter_decide_page(d, &p, &r), 0);
    ASSERT_EQ(r.verdict, FILTER_VERDICT_NEAR);
    ASSERT_EQ(r.learned, 1);
    ASSERT_EQ(dedup_templates_docs(t, "g", 1), 1);

    filter_decide_result_release(&r);
    filter_decide_free(d);
    dedup_index_free(idx);
}

extern void test_decide_register(void);
void test_decide_register(void)
{
    CU_pSuite s = CU_add_suite("decide", NULL, NULL);
    CU_add_test(s, "test_decide_exact_near_new", test_decide_exact_near_new);
    CU_add_test(s, "test_decide_flags", test_decide_flags);
    CU_add_test(s, "test_decide_ids_cap_meta_order", test_decide_ids_cap_meta_order);
    CU_add_test(s, "test_decide_hooks", test_decide_hooks);
    CU_add_test(s, "test_decide_threads_one_new", test_decide_threads_one_new);
    CU_add_test(s, "test_decide_learn_near", test_decide_learn_near);
}

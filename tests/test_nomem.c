/*
 * Out of memory, on purpose (issue 20: "failure paths that run"). Every library promises
 * that out of memory leaves its object unchanged and usable; these tests make each
 * allocation of a call fail in turn (tests/failalloc.h: the n-th allocation of the
 * project's own code, n = 1, 2, ... until a run completes without reaching n) and check,
 * under make asan, that nothing crashes or leaks, that the error is the documented one,
 * and that the same object then gives exactly the answer a run without failures gives.
 *
 * The entry points: extract_doc_parse and extract_tokens (extract/), the features and
 * the index with its save and load (dedup/), the MinHash signature and LSH index, the
 * site template table, the library's filter (filter/: check, journal, close), and the
 * WARC writer (crawler/).
 * Allocations inside shared libraries (libxml2, zlib, libcurl) are not counted.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crawler/crawl.h"
#include "dedup/dedup.h"
#include "dedup/minhash.h"
#include "extract/extract.h"
#include "filter/simcrawl.h"
#include "tests/failalloc.h"
#include "tests/filter_pages.h"
#include "tests/testutil.h"

/* A failure run stops at this many allocations: far above what any scenario makes. */
#define NOMEM_MAX_RUNS 20000ul

/* Which allocations fail, run after run: every one of the first NOMEM_DENSE, then every
 * NOMEM_STRIDE-th (environment; default 29) so that `make test` stays in seconds; `make
 * stress` sets NOMEM_STRIDE=1 (every allocation of every scenario). NOMEM_FROM=N starts at
 * allocation N (with FAILALLOC_TRACE=1, to see where one fails). */
#define NOMEM_DENSE 200ul

static unsigned long nomem_first(void)
{
    const char *s = getenv("NOMEM_FROM");
    unsigned long n = s ? strtoul(s, NULL, 10) : 1;
    return n ? n : 1;
}

static unsigned long nomem_next(unsigned long n)
{
    static unsigned long stride;
    if (!stride) {
        const char *s = getenv("NOMEM_STRIDE");
        stride = s && strtoul(s, NULL, 10) ? strtoul(s, NULL, 10) : 29;
    }
    return n < NOMEM_DENSE ? n + 1 : n + stride;
}

/* NOMEM_TEST=NAME runs only that test of the suite (extract, features, index, lsh,
 * templates, filter, warc). */
static int nomem_skip(const char *name)
{
    const char *only = getenv("NOMEM_TEST");
    return only && strcmp(only, name) != 0;
}

static char page_buf[8192];

static const char *page(unsigned host, unsigned group, unsigned variant, size_t *len)
{
    *len = fp_page(page_buf, sizeof page_buf, host, group, variant);
    return page_buf;
}

/* ---- extract ---- */

struct parsed {
    char *text, *tokens;
    size_t links;
};

static void parsed_release(struct parsed *p)
{
    free(p->text);
    free(p->tokens);
    memset(p, 0, sizeof *p);
}

/* parse + tokens; returns the first error, *p filled on success */
static int parse_page(const char *html, size_t len, struct parsed *p)
{
    struct extract_opts o = {.base_url = "http://nomem.test/a/b.html"};
    struct extract_doc *doc = NULL;
    enum extract_code rc = extract_doc_parse(html, len, &o, &doc);
    if (rc != EXTRACT_OK) {
        CU_ASSERT_PTR_NULL(doc);
        return (int)rc;
    }
    size_t tl;
    const char *t = extract_doc_text(doc, &tl);
    char *tokens = NULL;
    size_t n_tokens, tok_len;
    rc = extract_tokens(t, tl, &tokens, &tok_len, &n_tokens);
    if (rc != EXTRACT_OK) {
        CU_ASSERT_PTR_NULL(tokens);
        extract_doc_free(doc);
        return (int)rc;
    }
    p->text = strndup(t, tl);
    p->tokens = tokens;
    p->links = extract_doc_link_count(doc);
    extract_doc_free(doc);
    return p->text ? 0 : (int)EXTRACT_ENOMEM; /* the test's own copy failed */
}

static void test_nomem_extract(void)
{
    if (nomem_skip("extract"))
        return;
    size_t len;
    const char *html = page(1, 7, 0, &len);
    struct parsed ref = {0};
    ASSERT_EQ_FATAL(parse_page(html, len, &ref), 0);
    unsigned long n, failures = 0;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        struct parsed got = {0};
        failalloc_arm(n);
        int rc = parse_page(html, len, &got);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc == 0) {
            if (strcmp(got.text, ref.text) != 0)
                fprintf(stderr, "\nextract, allocation %lu failing: the text differs:\n%s\n", n, got.text);
            CU_ASSERT_STRING_EQUAL(got.text, ref.text);
            CU_ASSERT_STRING_EQUAL(got.tokens, ref.tokens);
            ASSERT_EQ(got.links, ref.links);
        } else {
            CU_ASSERT(fired);
            if (rc != EXTRACT_ENOMEM)
                fprintf(stderr, "\nextract, allocation %lu failing: %s\n", n,
                        extract_strerror((enum extract_code)rc));
            CU_ASSERT(rc == EXTRACT_ENOMEM);
            failures++;
        }
        parsed_release(&got);
        if (!fired)
            break;
    }
    CU_ASSERT(n < NOMEM_MAX_RUNS);
    CU_ASSERT(failures > 0); /* the scenario allocates: the test reached its failure paths */
    parsed_release(&ref);
}

/* ---- dedup: features, the index, save and load ---- */

#define IX_DOCS 6000u /* past IX_DELTA_MIN (4,096): the adds go through a compaction */

static uint64_t ix_fp(unsigned i)
{
    uint64_t s = 0x12345ull + (i / 3); /* every third document a near copy of the one before */
    uint64_t fp = fp_next(&s);
    return i % 3 ? fp ^ ((uint64_t)1 << (i % 64)) : fp;
}

static int count_pair(void *userdata, uint32_t a, uint32_t b, unsigned distance)
{
    (void)a;
    (void)b;
    (void)distance;
    ++*(uint64_t *)userdata;
    return 0;
}

/* The scenario: every call that fails with DEDUP_ENOMEM is checked to have changed
 * nothing visible and then made again (the one armed failure has fired, so it succeeds). */
struct ix_result {
    uint64_t pairs;
    uint32_t nearest[64];
    uint32_t docs;
    unsigned ok;
};

static enum dedup_code ix_scenario(const char *path, struct ix_result *r)
{
    struct dedup_design d;
    enum dedup_code rc;
    while ((rc = dedup_design_choose(3, IX_DOCS, 0, &d)) == DEDUP_ENOMEM)
        ;
    if (rc != DEDUP_OK)
        return rc;
    struct dedup_index *idx = NULL;
    while ((rc = dedup_index_new(&d, &idx)) == DEDUP_ENOMEM)
        CU_ASSERT_PTR_NULL(idx);
    if (rc != DEDUP_OK)
        return rc;
    for (unsigned i = 0; i < IX_DOCS; i++) {
        char id[32];
        int n = snprintf(id, sizeof id, "doc-%u", i);
        /* a query every 64 adds makes the tables absorb them (delta, then compaction) */
        if (i % 64 == 63) {
            uint32_t doc;
            unsigned dist;
            enum dedup_code code;
            int got;
            while ((code = dedup_index_nearest(idx, ix_fp(i), 3, &doc, &dist, &got)) !=
                   DEDUP_OK) {
                ASSERT_EQ(code, DEDUP_ENOMEM);
                ASSERT_EQ(dedup_index_doc_count(idx), i);
                if (code != DEDUP_ENOMEM)
                    break;
            }
            r->nearest[(i / 64) % 64] = got == 1 ? doc : UINT32_MAX;
        }
        uint32_t before = dedup_index_doc_count(idx);
        while ((rc = dedup_index_add(idx, ix_fp(i), id, (size_t)n, NULL)) == DEDUP_ENOMEM)
            ASSERT_EQ(dedup_index_doc_count(idx), before);
        if (rc != DEDUP_OK)
            goto out;
    }
    while ((rc = dedup_index_pairs(idx, 3, 2, 0, count_pair, &r->pairs, NULL)) == DEDUP_ENOMEM)
        r->pairs = 0;
    if (rc != DEDUP_OK)
        goto out;
    while ((rc = dedup_index_save(idx, path, NULL)) == DEDUP_ENOMEM)
        ;
    if (rc != DEDUP_OK)
        goto out;
    struct dedup_index *back = NULL;
    while ((rc = dedup_index_load(path, 0, &back, NULL)) == DEDUP_ENOMEM)
        CU_ASSERT_PTR_NULL(back);
    if (rc != DEDUP_OK)
        goto out;
    r->docs = dedup_index_doc_count(back);
    size_t l1, l2;
    const char *a = dedup_index_id(idx, IX_DOCS - 1, &l1);
    const char *b = dedup_index_id(back, IX_DOCS - 1, &l2);
    r->ok = l1 == l2 && memcmp(a, b, l1) == 0 &&
            dedup_index_fingerprint(back, 17) == dedup_index_fingerprint(idx, 17);
    dedup_index_free(back);
out:
    dedup_index_free(idx);
    return rc;
}

static void test_nomem_index(void)
{
    if (nomem_skip("index"))
        return;
    char path[] = "/dev/shm/simcrawl-nomem-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    struct ix_result ref = {0};
    ASSERT_EQ_FATAL(ix_scenario(path, &ref), DEDUP_OK);
    CU_ASSERT(ref.pairs > IX_DOCS / 3);
    ASSERT_EQ(ref.docs, IX_DOCS);
    CU_ASSERT(ref.ok);
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        struct ix_result got = {0};
        failalloc_arm(n);
        enum dedup_code rc = ix_scenario(path, &got);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc != DEDUP_OK)
            fprintf(stderr, "\nindex, allocation %lu failing: %s\n", n, dedup_strerror(rc));
        ASSERT_EQ(rc, DEDUP_OK);
        ASSERT_EQ(got.pairs, ref.pairs);
        ASSERT_EQ(got.docs, ref.docs);
        CU_ASSERT(got.ok);
        CU_ASSERT(memcmp(got.nearest, ref.nearest, sizeof ref.nearest) == 0);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    unlink(path);
}

static void test_nomem_features(void)
{
    if (nomem_skip("features"))
        return;
    size_t len;
    const char *html = page(2, 9, 0, &len);
    struct parsed p = {0};
    ASSERT_EQ_FATAL(parse_page(html, len, &p), 0);
    struct dedup_features *f = dedup_features_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ASSERT_EQ_FATAL(dedup_features_from_tokens(f, p.tokens, strlen(p.tokens), NULL),
                          DEDUP_OK);
    uint64_t ref = dedup_simhash(f);
    size_t ref_n = dedup_features_count(f);
    dedup_features_free(f);
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        failalloc_arm(n);
        f = dedup_features_new();
        if (!f) {
            CU_ASSERT(failalloc_fired());
            failalloc_arm(0);
            continue;
        }
        enum dedup_code rc = dedup_features_from_tokens(f, p.tokens, strlen(p.tokens), NULL);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc == DEDUP_ENOMEM) {
            CU_ASSERT(fired);
            ASSERT_EQ(dedup_features_count(f), 0); /* "f holds no features" */
            rc = dedup_features_from_tokens(f, p.tokens, strlen(p.tokens), NULL);
        }
        ASSERT_EQ(rc, DEDUP_OK);
        ASSERT_EQ(dedup_simhash(f), ref);
        ASSERT_EQ(dedup_features_count(f), ref_n);
        dedup_features_free(f);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    parsed_release(&p);
}

/* ---- MinHash + LSH ---- */

#define LSH_DOCS 120u

static int count_lsh_pair(void *userdata, uint32_t a, uint32_t b, double jaccard)
{
    (void)a;
    (void)b;
    (void)jaccard;
    ++*(uint64_t *)userdata;
    return 0;
}

/* The token strings the signatures hash: pages (host 3, i / 2, i % 2), near pairs, through
 * the extractor (parse_page) once, before any allocation is made to fail. */
static char *lsh_tokens[LSH_DOCS];

struct lsh_result {
    uint64_t pairs;
    uint32_t near_of_last;
};

static enum dedup_code lsh_scenario(struct lsh_result *r)
{
    struct dedup_lsh_params prm;
    enum dedup_code rc = dedup_lsh_params_default(0.8, &prm);
    if (rc != DEDUP_OK)
        return rc;
    struct dedup_lsh *l = NULL;
    while ((rc = dedup_lsh_new(&prm, &l)) == DEDUP_ENOMEM)
        CU_ASSERT_PTR_NULL(l);
    if (rc != DEDUP_OK)
        return rc;
    uint32_t sig[1024];
    CU_ASSERT_FATAL(dedup_minhash_h(dedup_lsh_minhash(l)) <= 1024);
    struct dedup_lsh_matches m = {0};
    r->near_of_last = UINT32_MAX;
    for (unsigned i = 0; i < LSH_DOCS && rc == DEDUP_OK; i++) {
        rc = dedup_minhash_signature(dedup_lsh_minhash(l), lsh_tokens[i],
                                     strlen(lsh_tokens[i]), sig, NULL);
        if (rc != DEDUP_OK)
            break;
        while ((rc = dedup_lsh_query(l, sig, 0.8, 0, &m, NULL)) == DEDUP_ENOMEM)
            ;
        if (rc != DEDUP_OK)
            break;
        if (i == LSH_DOCS - 1 && m.n)
            r->near_of_last = m.v[0].doc;
        char id[16];
        int n = snprintf(id, sizeof id, "d%u", i);
        uint32_t before = dedup_lsh_doc_count(l);
        while ((rc = dedup_lsh_add(l, sig, id, (size_t)n, NULL)) == DEDUP_ENOMEM)
            ASSERT_EQ(dedup_lsh_doc_count(l), before);
    }
    if (rc == DEDUP_OK)
        while ((rc = dedup_lsh_pairs(l, 0.8, 0, count_lsh_pair, &r->pairs, NULL, NULL)) ==
               DEDUP_ENOMEM)
            r->pairs = 0;
    dedup_lsh_matches_release(&m);
    dedup_lsh_free(l);
    return rc;
}

static void test_nomem_lsh(void)
{
    if (nomem_skip("lsh"))
        return;
    for (unsigned i = 0; i < LSH_DOCS; i++) {
        size_t len;
        const char *html = page(3, i / 2, i % 2, &len);
        struct parsed p = {0};
        ASSERT_EQ_FATAL(parse_page(html, len, &p), 0);
        free(p.text);
        lsh_tokens[i] = p.tokens;
    }
    struct lsh_result ref = {0};
    ASSERT_EQ_FATAL(lsh_scenario(&ref), DEDUP_OK);
    CU_ASSERT(ref.pairs >= LSH_DOCS / 4);
    ASSERT_EQ(ref.near_of_last, LSH_DOCS - 2);
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        struct lsh_result got = {0};
        failalloc_arm(n);
        enum dedup_code rc = lsh_scenario(&got);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc != DEDUP_OK)
            fprintf(stderr, "\nLSH, allocation %lu failing: %s\n", n, dedup_strerror(rc));
        ASSERT_EQ(rc, DEDUP_OK);
        ASSERT_EQ(got.pairs, ref.pairs);
        ASSERT_EQ(got.near_of_last, ref.near_of_last);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    for (unsigned i = 0; i < LSH_DOCS; i++) {
        free(lsh_tokens[i]);
        lsh_tokens[i] = NULL;
    }
}

/* ---- the site template table: counting, up to an eviction at a host's cap ---- */

#define TPL_BIG_DOCS (DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2 + 64) /* 2 new blocks each: evicts */

/* What a failed count must leave as it was. */
struct tpl_seen {
    size_t hosts, entries;
    uint64_t docs;
};

static struct tpl_seen tpl_look(const struct dedup_templates *t, const char *host)
{
    return (struct tpl_seen){dedup_templates_host_count(t), dedup_templates_entry_count(t),
                             dedup_templates_docs(t, host, strlen(host))};
}

/* Counts pages of three small hosts (every fourth an exact copy, by its doc hash) and of
 * one host past its cap; a DEDUP_ENOMEM is checked to have changed nothing and the count
 * made again. *out: the serialised table (caller frees). */
static enum dedup_code tpl_scenario(uint8_t **out, size_t *len)
{
    struct dedup_templates *t;
    while (!(t = dedup_templates_new()))
        ;
    enum dedup_code rc = DEDUP_OK;
    for (unsigned i = 0; i < 600 + TPL_BIG_DOCS && rc == DEDUP_OK; i++) {
        char host[16];
        uint64_t b[4];
        size_t n;
        uint64_t doc;
        if (i < 600) {
            snprintf(host, sizeof host, "h%u.test", i % 3);
            b[0] = 11; /* the menu, on every page */
            b[1] = 12 + i % 5;
            b[2] = 1000 + i / 4; /* the page's own text */
            b[3] = 11;           /* a repeat counts once */
            n = 4;
            doc = 1 + i / 4 * 4 + i % 3; /* (host, doc) repeats: exact copies */
        } else {
            snprintf(host, sizeof host, "big.test");
            b[0] = 11;
            b[1] = 0x100000000ull + i * 2;
            b[2] = 0x100000000ull + i * 2 + 1;
            n = 3;
            doc = i + 1;
        }
        struct tpl_seen before = tpl_look(t, host);
        int counted;
        while ((rc = dedup_templates_add_doc(t, host, strlen(host), doc, b, n, &counted)) ==
               DEDUP_ENOMEM) {
            struct tpl_seen after = tpl_look(t, host);
            CU_ASSERT(!counted);
            ASSERT_EQ(after.hosts, before.hosts);
            ASSERT_EQ(after.entries, before.entries);
            ASSERT_EQ(after.docs, before.docs);
        }
    }
    if (rc == DEDUP_OK)
        while ((rc = dedup_templates_serialize(t, out, len)) == DEDUP_ENOMEM)
            ;
    dedup_templates_free(t);
    return rc;
}

static void test_nomem_templates(void)
{
    if (nomem_skip("templates"))
        return;
    uint8_t *ref;
    size_t ref_len;
    ASSERT_EQ_FATAL(tpl_scenario(&ref, &ref_len), DEDUP_OK);
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        uint8_t *got = NULL;
        size_t got_len = 0;
        failalloc_arm(n);
        enum dedup_code rc = tpl_scenario(&got, &got_len);
        int fired = failalloc_fired();
        failalloc_arm(0);
        ASSERT_EQ(rc, DEDUP_OK);
        CU_ASSERT(got_len == ref_len && memcmp(got, ref, ref_len) == 0);
        free(got);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    free(ref);
}

/* ---- the library's filter: open, check (journal), close (save), open again ---- */

#define FILTER_PAGES 40u

struct filter_result {
    int decision[FILTER_PAGES];
    char dup_of[FILTER_PAGES][32];
    int again; /* the decision of a page checked again after close and reopen */
};

/* templates: learn site templates (the count of a page added is reserved before the add,
 * so a failure leaves the index and the table unchanged: the decisions are compared with
 * templates too) */
static int filter_open(const char *path, int templates, struct simcrawl_filter **f)
{
    struct simcrawl_options *o;
    while (!(o = simcrawl_options_new()))
        ;
    int rc;
    while ((rc = simcrawl_options_set_fsync(o, "no")) == SIMCRAWL_ENOMEM)
        ;
    while ((rc = simcrawl_options_set_templates(o, templates)) == SIMCRAWL_ENOMEM)
        ;
    while ((rc = simcrawl_filter_open_opts(f, path, o)) == SIMCRAWL_ENOMEM)
        CU_ASSERT_PTR_NULL(*f);
    simcrawl_options_free(o);
    return rc;
}

static int filter_scenario(const char *path, int templates, struct filter_result *r)
{
    unlink(path);
    struct simcrawl_filter *f = NULL;
    int rc = filter_open(path, templates, &f);
    if (rc != 0)
        return rc;
    struct simcrawl_match *m;
    while (!(m = simcrawl_match_new()))
        ;
    for (unsigned i = 0; i < FILTER_PAGES; i++) {
        char id[48];
        snprintf(id, sizeof id, "http://host%u.test/p%u", i % 3, i);
        size_t len;
        const char *html = page(i % 3, i / 2, i % 2, &len); /* an original, then a copy */
        int d;
        while ((d = simcrawl_filter_check(f, id, html, len, "text/html", m)) == SIMCRAWL_ENOMEM)
            ;
        r->decision[i] = d;
        const char *of = d >= 0 ? simcrawl_match_duplicate_of(m) : NULL;
        snprintf(r->dup_of[i], sizeof r->dup_of[i], "%s", of ? of : "");
        if (d < 0) {
            rc = d;
            break;
        }
    }
    simcrawl_match_free(m);
    int crc = simcrawl_filter_close(f);
    if (rc == 0 && crc != 0) {
        /* close always frees; a failed save leaves the journal, which the next open
         * replays: nothing is lost, so this is not an error of the scenario */
        CU_ASSERT(crc == SIMCRAWL_ENOMEM);
    }
    if (rc != 0)
        return rc;
    if ((rc = filter_open(path, templates, &f)) != 0)
        return rc;
    size_t len;
    const char *html = page(0, 3, 0, &len); /* page 6, new: its id gives its decision back */
    while ((r->again = simcrawl_filter_check(f, "http://host0.test/p6", html, len, "text/html",
                                             NULL)) == SIMCRAWL_ENOMEM)
        ;
    crc = simcrawl_filter_close(f);
    CU_ASSERT(crc == 0 || crc == SIMCRAWL_ENOMEM);
    return 0;
}

static void rm_filter_files(const char *path)
{
    static const char *const ext[] = {"", ".journal", ".payloads", ".payloads.tmp", ".lock"};
    char p[256];
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(p, sizeof p, "%s%s", path, ext[i]);
        unlink(p);
    }
}

static void filter_sweep(int templates)
{
    char dir[] = "/dev/shm/simcrawl-nomem-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/index", dir);
    struct filter_result ref = {0};
    ASSERT_EQ_FATAL(filter_scenario(path, templates, &ref), 0);
    unsigned near = 0;
    for (unsigned i = 0; i < FILTER_PAGES; i++)
        near += ref.decision[i] == SIMCRAWL_NEAR_DUPLICATE;
    CU_ASSERT(near > 0);
    ASSERT_EQ(ref.decision[6], SIMCRAWL_NEW);
    ASSERT_EQ(ref.again, SIMCRAWL_NEW);
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        struct filter_result got = {0};
        rm_filter_files(path);
        failalloc_arm(n);
        int rc = filter_scenario(path, templates, &got);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc != 0)
            fprintf(stderr, "\nfilter, allocation %lu failing: %s\n", n, simcrawl_strerror(rc));
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(got.again, ref.again);
        for (unsigned i = 0; i < FILTER_PAGES; i++)
            if (got.decision[i] != ref.decision[i] || strcmp(got.dup_of[i], ref.dup_of[i]))
                fprintf(stderr, "\nfilter%s, allocation %lu failing: page %u: %s (%s), not %s (%s)\n",
                        templates ? " with templates" : "", n, i,
                        simcrawl_strerror(got.decision[i]), got.dup_of[i],
                        simcrawl_strerror(ref.decision[i]), ref.dup_of[i]);
        CU_ASSERT(memcmp(got.decision, ref.decision, sizeof ref.decision) == 0);
        CU_ASSERT(memcmp(got.dup_of, ref.dup_of, sizeof ref.dup_of) == 0);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    rm_filter_files(path);
    char p[256];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    ASSERT_EQ(system(p), 0);
}

static void test_nomem_filter(void)
{
    if (nomem_skip("filter"))
        return;
    filter_sweep(0);
    filter_sweep(1);
}

/* ---- the WARC writer ---- */

#define WARC_RECORDS 12u

/* Writes WARC_RECORDS responses (every third a revisit) to path; ids[] their record ids. */
static enum crawl_code warc_scenario(const char *path, char ids[][CRAWL_WARC_ID_SIZE])
{
    struct crawl_warc_writer *w = NULL;
    enum crawl_code rc;
    while ((rc = crawl_warc_writer_open(path, NULL, &w)) == CRAWL_ENOMEM)
        CU_ASSERT_PTR_NULL(w);
    if (rc != CRAWL_OK)
        return rc;
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    char first_id[CRAWL_WARC_ID_SIZE] = "";
    for (unsigned i = 0; i < WARC_RECORDS && rc == CRAWL_OK; i++) {
        char uri[64];
        snprintf(uri, sizeof uri, "http://w.test/%u", i);
        size_t len;
        const char *body = page(4, i, 0, &len);
        if (i % 3 == 2) {
            struct crawl_warc_revisit v = {
                .uri = uri, .date = "2026-11-26T00:00:00Z", .head = head,
                .head_len = sizeof head - 1,
                .payload_digest = "sha1:AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH",
                .refers_to = first_id, .refers_to_uri = "http://w.test/0",
                .refers_to_date = "2026-11-26T00:00:00Z"};
            while ((rc = crawl_warc_write_revisit(w, &v, ids[i])) == CRAWL_ENOMEM)
                ;
        } else {
            struct crawl_warc_exchange x = {.uri = uri, .date = "2026-11-26T00:00:00Z",
                                            .head = head, .head_len = sizeof head - 1,
                                            .body = body, .body_len = len};
            while ((rc = crawl_warc_write_response(w, &x, ids[i])) == CRAWL_ENOMEM)
                ;
            if (i == 0)
                memcpy(first_id, ids[0], sizeof first_id);
        }
    }
    enum crawl_code crc = crawl_warc_writer_close(w);
    return rc != CRAWL_OK ? rc : crc;
}

/* The target URIs and record types of path's records, one line each. */
static char *warc_listing(const char *path)
{
    struct crawl_warc_reader *r = NULL;
    if (crawl_warc_reader_open(path, NULL, &r) != CRAWL_OK)
        return NULL;
    char *out = calloc(1, 8192);
    size_t n = 0;
    const struct crawl_warc_record *rec;
    while (out && crawl_warc_next(r, &rec) == CRAWL_OK && n < 8000)
        n += (size_t)snprintf(out + n, 8192 - n, "%s %s\n", rec->type, rec->target_uri);
    crawl_warc_reader_free(r);
    return out;
}

static void test_nomem_warc_writer(void)
{
    if (nomem_skip("warc"))
        return;
    char dir[] = "/dev/shm/simcrawl-nomem-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/w.warc.gz", dir);
    char ids[WARC_RECORDS][CRAWL_WARC_ID_SIZE];
    ASSERT_EQ_FATAL(warc_scenario(path, ids), CRAWL_OK);
    char *ref = warc_listing(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    CU_ASSERT_PTR_NOT_NULL(strstr(ref, "revisit http://w.test/11"));
    unsigned long n;
    for (n = nomem_first(); n < NOMEM_MAX_RUNS; n = nomem_next(n)) {
        unlink(path);
        failalloc_arm(n);
        enum crawl_code rc = warc_scenario(path, ids);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (rc != CRAWL_OK)
            fprintf(stderr, "\nWARC writer, allocation %lu failing: %s\n", n,
                    crawl_strerror(rc));
        ASSERT_EQ(rc, CRAWL_OK);
        char *got = warc_listing(path);
        CU_ASSERT(got && strcmp(got, ref) == 0);
        free(got);
        if (!fired)
            break;
    }
    CU_ASSERT(n > 1 && n < NOMEM_MAX_RUNS);
    free(ref);
    unlink(path);
    rmdir(dir);
}

void test_nomem_register(void);
void test_nomem_register(void)
{
    CU_pSuite s = CU_add_suite("nomem", NULL, NULL);
    CU_add_test(s, "extract: every allocation of a parse fails once", test_nomem_extract);
    CU_add_test(s, "features: every allocation fails once", test_nomem_features);
    CU_add_test(s, "index: add, query, pairs, save, load under failures", test_nomem_index);
    CU_add_test(s, "minhash + LSH under failures", test_nomem_lsh);
    CU_add_test(s, "templates: counting and eviction under failures", test_nomem_templates);
    CU_add_test(s, "filter: check, journal, close, reopen under failures", test_nomem_filter);
    CU_add_test(s, "WARC writer under failures", test_nomem_warc_writer);
}

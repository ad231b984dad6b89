/*
 * Suite "filter_minhash": libsimcrawl's filter with the minhash method (<simcrawl.h>,
 * simcrawl_options_set_method(o, "minhash")): the options and what a minhash filter
 * refuses, every decision (new, near-duplicate by the signatures' Jaccard estimate, exact
 * duplicate by payload, idempotent by id, too short), neighbours by signature, delete; an
 * index kept across close and open and across a process that ended without closing (the
 * journal's MinHash records replayed), a torn journal tail, the index or journal of the
 * other method refused with SIMCRAWL_EMETHOD and a threshold other than the file's with
 * SIMCRAWL_EMISMATCH; and 8 threads racing check-and-add over generated near-duplicate
 * groups, the invariant asserted on the signatures each check reported: no two new pages
 * whose estimate reaches the threshold and that share an LSH band (the pairs that share
 * none are the banding's false negatives, 1 - P(J) of the S-curve: counted, and bounded),
 * every duplicate's original indexed and at the similarity said.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dedup/minhash.h"
#include "filter/simcrawl.h"
#include "tests/filter_pages.h"
#include "tests/testutil.h"

#define MH_H 128 /* the default signature length (docs/MINHASH.md) */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char p[256];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/simcrawl_fmh_XXXXXX");
        if (!mkdtemp(tmpdir))
            return NULL;
    }
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static void rm_index(const char *path)
{
    char p[512];
    const char *suffix[] = {"", ".journal", ".payloads", ".lock", NULL};
    for (int i = 0; suffix[i]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

struct logbuf {
    char text[4096];
    int n;
};

static void on_log(void *ud, const char *msg)
{
    struct logbuf *l = ud;
    size_t used = strlen(l->text);
    snprintf(l->text + used, sizeof l->text - used, "%s\n", msg);
    l->n++;
}

/* Opens a filter of method ("simhash" or "minhash") on path (NULL: in memory), threshold
 * (0: the file's or the default), lock_wait 0, fsync no, templates off (counting tests: a
 * page checked again after its host's template was learned may change). */
static int open_method(struct simcrawl_filter **f, const char *path, const char *method,
                       double threshold, struct logbuf *log)
{
    struct simcrawl_options *o = simcrawl_options_new();
    if (!o)
        return SIMCRAWL_ENOMEM;
    simcrawl_options_set_templates(o, 0);
    simcrawl_options_set_lock_wait(o, 0);
    simcrawl_options_set_fsync(o, "no");
    int rc = simcrawl_options_set_method(o, method);
    if (rc == 0)
        rc = simcrawl_options_set_threshold(o, threshold);
    if (rc == 0 && log)
        rc = simcrawl_options_set_log(o, on_log, log);
    if (rc == 0)
        rc = simcrawl_filter_open_opts(f, path, o);
    simcrawl_options_free(o);
    return rc;
}

static int check_file(struct simcrawl_filter *f, const char *id, const char *path,
                      struct simcrawl_match *m)
{
    size_t len;
    char *buf = test_slurp(path, &len);
    if (!buf)
        return -100;
    int d = simcrawl_filter_check(f, id, buf, len, "text/html", m);
    free(buf);
    return d;
}

/* Generated pages from..from+n-1 of three hosts into f; returns how many were new. */
static size_t check_generated(struct simcrawl_filter *f, unsigned from, unsigned n)
{
    static char buf[8192];
    size_t news = 0;
    for (unsigned i = from; i < from + n; i++) {
        char id[64];
        snprintf(id, sizeof id, "http://h%u.example/p%u", i % 3, i);
        size_t len = fp_page(buf, sizeof buf, i % 3, i / 2, i % 2);
        news += simcrawl_filter_check(f, id, buf, len, NULL, NULL) == SIMCRAWL_NEW;
    }
    return news;
}

/* A process that opens a minhash filter on path, checks generated pages from..from+n-1
 * and ends without closing, as a crash would: the number it reported new, or -1. */
static int crashed_child(const char *path, unsigned from, unsigned n)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        struct simcrawl_filter *cf;
        if (open_method(&cf, path, "minhash", 0, NULL) != 0)
            _exit(255);
        size_t news = check_generated(cf, from, n);
        _exit((int)(news > 200 ? 200 : news));
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
        return -1;
    return WEXITSTATUS(status);
}

static double estimate(const uint32_t *a, const uint32_t *b)
{
    unsigned eq = 0;
    for (unsigned i = 0; i < MH_H; i++)
        eq += a[i] == b[i];
    return (double)eq / MH_H;
}

static void test_filter_minhash_options(void)
{
    struct simcrawl_options *o = simcrawl_options_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    ASSERT_EQ(simcrawl_options_set_method(o, "minhash"), 0);
    ASSERT_EQ(simcrawl_options_set_method(o, "simhash"), 0);
    ASSERT_EQ(simcrawl_options_set_method(o, "MinHash"), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_method(o, ""), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_method(o, NULL), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_method(NULL, "minhash"), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_threshold(o, 0.9), 0);
    ASSERT_EQ(simcrawl_options_set_threshold(o, 1.0), 0);
    ASSERT_EQ(simcrawl_options_set_threshold(o, 0), 0);
    ASSERT_EQ(simcrawl_options_set_threshold(o, -0.1), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_threshold(o, 1.01), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_threshold(o, 0.0 / 0.0), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_threshold(NULL, 0.8), SIMCRAWL_EINVAL);
    simcrawl_options_free(o);
    CU_ASSERT_STRING_EQUAL(simcrawl_strerror(SIMCRAWL_EMETHOD),
                           "the index or its journal is of the other method");

    struct simcrawl_filter *f = NULL, *s = NULL;
    ASSERT_EQ_FATAL(open_method(&f, NULL, "minhash", 0, NULL), 0);
    CU_ASSERT_STRING_EQUAL(simcrawl_filter_method(f), "minhash");
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_filter_threshold(f), 0.8, 1e-12);
    ASSERT_EQ(simcrawl_filter_k(f), 0);
    ASSERT_EQ(simcrawl_filter_signature_size(f), MH_H);
    ASSERT_EQ_FATAL(open_method(&s, NULL, "simhash", 0.5, NULL), 0);
    CU_ASSERT_STRING_EQUAL(simcrawl_filter_method(s), "simhash");
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_filter_threshold(s), 0.0, 1e-12);
    ASSERT_EQ(simcrawl_filter_k(s), 3);
    ASSERT_EQ(simcrawl_filter_signature_size(s), 0);
    /* what needs a simhash, or a signature, is refused by the other method */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "a", 0x1234, 0, NULL),
                    SIMCRAWL_EMETHOD);
    uint32_t sig[MH_H] = {0};
    ASSERT_EQ(simcrawl_filter_signature(s, NULL, "<p>x</p>", 8, NULL, sig, MH_H),
                    SIMCRAWL_EMETHOD);
    ASSERT_EQ(simcrawl_filter_neighbors_signature(s, sig, MH_H, 0.8, 0, NULL, NULL),
                    SIMCRAWL_EMETHOD);
    ASSERT_EQ(simcrawl_filter_neighbors_signature(f, sig, MH_H - 1, 0.8, 0, NULL, NULL),
                    SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    ASSERT_EQ(simcrawl_filter_close(s), 0);
    ASSERT_EQ_FATAL(open_method(&f, NULL, "minhash", 0.95, NULL), 0);
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_filter_threshold(f), 0.95, 1e-12);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

struct hood {
    char ids[4][64];
    double sim[4];
    int n;
};

static int on_similar(void *ud, const char *id, double similarity)
{
    struct hood *h = ud;
    if (h->n < 4) {
        snprintf(h->ids[h->n], sizeof h->ids[0], "%s", id);
        h->sim[h->n] = similarity;
    }
    h->n++;
    return 0;
}

static void test_filter_minhash_decisions(void)
{
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_method(&f, NULL, "minhash", 0.8, NULL), 0);
    struct simcrawl_match *m = simcrawl_match_new(), *m2 = simcrawl_match_new();
    ASSERT_EQ(check_file(f, "http://example.org/page1", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    size_t h = 0;
    const uint32_t *sig = simcrawl_match_signature(m, &h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
    ASSERT_EQ_FATAL(h, MH_H);
    uint32_t s1[MH_H];
    memcpy(s1, sig, sizeof s1);
    CU_ASSERT_PTR_NULL(simcrawl_match_duplicate_of(m));
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_match_similarity(m), 0.0, 1e-12);
    /* `simcrawl compare --method minhash` says 0.945 for these two */
    ASSERT_EQ(check_file(f, "http://example.org/edit",
                               "tests/data/fingerprint/page1-edit.html", m2),
                    SIMCRAWL_NEAR_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m2), "http://example.org/page1");
    const uint32_t *s2 = simcrawl_match_signature(m2, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
    double est = estimate(s1, s2);
    CU_ASSERT(est >= 0.8 && est < 1.0);
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_match_similarity(m2), est, 1e-12);
    ASSERT_EQ(simcrawl_match_distance(m2), 0);
    ASSERT_EQ(simcrawl_match_added(m2), 0);
    CU_ASSERT_NOT_EQUAL(simcrawl_match_fingerprint(m2), 0); /* its own simhash */
    /* the same bytes: exact duplicate, similarity 1 */
    ASSERT_EQ(check_file(f, "http://mirror.example/page1",
                               "tests/data/fingerprint/page1.html", m), SIMCRAWL_EXACT_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/page1");
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_match_similarity(m), 1.0, 1e-12);
    /* an unrelated page; a page with too little text; not html */
    ASSERT_EQ(check_file(f, "http://example.org/other", "tests/data/fingerprint/other.html",
                               m), SIMCRAWL_NEW);
    ASSERT_EQ(check_file(f, "http://example.org/short", "tests/data/fingerprint/short.html",
                               m), SIMCRAWL_TOO_SHORT);
    CU_ASSERT_PTR_NULL(simcrawl_match_signature(m, &h));
    ASSERT_EQ(h, 0);
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.org/x.png", "\x89PNG", 4,
                                          "image/png", m), SIMCRAWL_NOT_HTML);
    /* idempotent by id: page1's id with other bytes is its stored decision, nothing added */
    ASSERT_EQ(check_file(f, "http://example.org/page1", "tests/data/fingerprint/other.html",
                               m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 0);
    ASSERT_EQ(simcrawl_filter_count(f), 2);
    /* a dry run */
    char *edit;
    size_t elen;
    edit = test_slurp("tests/data/fingerprint/page1-edit.html", &elen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(edit);
    ASSERT_EQ(simcrawl_filter_check_flags(f, "http://example.org/dry", edit, elen, NULL,
                                                SIMCRAWL_CHECK_NO_ADD, m),
                    SIMCRAWL_NEAR_DUPLICATE);

    /* the signature alone, as check() computed it (no templates here) */
    uint32_t alone[MH_H];
    ASSERT_EQ(simcrawl_filter_signature(f, "http://example.org/x", edit, elen, NULL, alone,
                                              MH_H), 0);
    ASSERT_EQ(memcmp(alone, s2, sizeof alone), 0);
    ASSERT_EQ(simcrawl_filter_signature(f, NULL, edit, elen, NULL, alone, MH_H - 1),
                    SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_filter_signature(f, NULL, "<p>hi</p>", 9, NULL, alone, MH_H),
                    SIMCRAWL_TOO_SHORT);
    ASSERT_EQ(simcrawl_filter_signature(f, NULL, "x", 1, "image/gif", alone, MH_H),
                    SIMCRAWL_NOT_HTML);
    ASSERT_EQ(simcrawl_filter_count(f), 2);

    /* neighbours by signature: page1 for the edit's, at the estimate */
    struct hood hd = {0};
    ASSERT_EQ(simcrawl_filter_neighbors_signature(f, s2, MH_H, 0.5, 0, on_similar, &hd), 1);
    CU_ASSERT_STRING_EQUAL(hd.ids[0], "http://example.org/page1");
    CU_ASSERT_DOUBLE_EQUAL(hd.sim[0], est, 1e-12);
    memset(&hd, 0, sizeof hd);
    ASSERT_EQ(simcrawl_filter_neighbors_signature(f, s2, MH_H, 0.999, 0, on_similar, &hd),
                    0);

    /* delete: page1 forgotten, the edit is then new (and becomes the original) */
    ASSERT_EQ(simcrawl_filter_delete(f, "http://example.org/page1"), 1);
    ASSERT_EQ(simcrawl_filter_delete(f, "http://example.org/page1"), 0);
    ASSERT_EQ(simcrawl_filter_count(f), 1);
    memset(&hd, 0, sizeof hd);
    ASSERT_EQ(simcrawl_filter_neighbors_signature(f, s2, MH_H, 0.5, 0, on_similar, &hd), 0);
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.org/edit", edit, elen, NULL, m),
                    SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    ASSERT_EQ(check_file(f, "http://example.org/page1", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_NEAR_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/edit");
    free(edit);
    simcrawl_match_free(m);
    simcrawl_match_free(m2);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

/* Close and open again; a process that ends without close (the journal's MinHash records
 * replayed); a delete made durable and compacted away; a torn last record. */
static void test_filter_minhash_reopen(void)
{
    char path[256], j[300];
    snprintf(path, sizeof path, "%s", tmp_path("mh.idx"));
    snprintf(j, sizeof j, "%s.journal", path);
    rm_index(path);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0.7, NULL), 0);
    ASSERT_EQ(check_file(f, "http://example.org/page1", "tests/data/fingerprint/page1.html",
                               NULL), SIMCRAWL_NEW);
    size_t news = 1 + check_generated(f, 0, 60);
    CU_ASSERT(news > 30 && news < 50); /* pairs of a page and its one-word variant */
    ASSERT_EQ(simcrawl_filter_count(f), news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    FILE *fp = fopen(path, "rb");
    char magic[9] = {0};
    ASSERT_EQ(fp ? fread(magic, 1, 8, fp) : 0, 8);
    if (fp)
        fclose(fp);
    CU_ASSERT_STRING_EQUAL(magic, "SIMCRMHX");

    /* threshold 0: the file's (0.7) */
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0, NULL), 0);
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_filter_threshold(f), 0.7, 1e-12);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    struct simcrawl_match *m = simcrawl_match_new();
    ASSERT_EQ(check_file(f, "http://example.org/copy", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_EXACT_DUPLICATE);
    ASSERT_EQ(check_file(f, "http://example.org/edit",
                               "tests/data/fingerprint/page1-edit.html", m),
                    SIMCRAWL_NEAR_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/page1");
    ASSERT_EQ(check_generated(f, 0, 60), news - 1);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    /* a process that adds pages and ends without close(): the journal has them */
    int child = crashed_child(path, 1000, 40);
    CU_ASSERT_FATAL(child > 4);
    size_t child_news = (size_t)child;
    ASSERT_EQ_FATAL(stat(j, &st), 0);
    CU_ASSERT(st.st_size > 16 + (off_t)child_news * 4 * MH_H);
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0.7, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news + child_news);
    ASSERT_EQ(check_generated(f, 1000, 40), child_news);
    /* the one-word variant of a page the child added: its near-duplicate */
    char buf[8192];
    size_t len = fp_page(buf, sizeof buf, 1, 1000 / 2, 7);
    ASSERT_EQ(simcrawl_filter_check(f, "http://h1.example/v7", buf, len, NULL, m),
                    SIMCRAWL_NEAR_DUPLICATE);
    /* a delete, durable in the journal, then compacted away at close */
    ASSERT_EQ(simcrawl_filter_delete(f, "http://example.org/page1"), 1);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    ASSERT_EQ(stat(j, &st), 0);
    ASSERT_EQ(st.st_size, 16);
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news + child_news - 1);
    ASSERT_EQ(check_file(f, "http://example.org/edit2",
                               "tests/data/fingerprint/page1-edit.html", m),
                    SIMCRAWL_NEW);
    ASSERT_EQ(check_file(f, "http://example.org/copy", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_NEAR_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/edit2");
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);

    /* a torn last record: dropped with a warning, the ones before it kept */
    child = crashed_child(path, 0, 20);
    CU_ASSERT_FATAL(child > 3);
    ASSERT_EQ_FATAL(stat(j, &st), 0);
    ASSERT_EQ(truncate(j, st.st_size - 9), 0);
    struct logbuf log = {{0}, 0};
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0, &log), 0);
    ASSERT_EQ(simcrawl_filter_count(f), (size_t)child - 1);
    ASSERT_EQ(log.n, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "mh.idx.journal: dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "cut short"));
    ASSERT_EQ(check_generated(f, 0, 20), (size_t)child);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    /* a flipped byte in the last record's signature: its checksum fails */
    child = crashed_child(path, 500, 6);
    CU_ASSERT_FATAL(child >= 2);
    ASSERT_EQ_FATAL(stat(j, &st), 0);
    int fd = open(j, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char c;
    ASSERT_EQ(pread(fd, &c, 1, st.st_size - 40), 1);
    c ^= 0x10;
    ASSERT_EQ(pwrite(fd, &c, 1, st.st_size - 40), 1);
    close(fd);
    memset(&log, 0, sizeof log);
    ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0, &log), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "checksum"));
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);
}

/* The index file or the journal of the other method: SIMCRAWL_EMETHOD with a message;
 * another threshold than the file's: SIMCRAWL_EMISMATCH. Nothing is changed by a refusal. */
static void test_filter_minhash_method_mismatch(void)
{
    char sp[256], mp[256];
    snprintf(sp, sizeof sp, "%s", tmp_path("sim.idx"));
    snprintf(mp, sizeof mp, "%s", tmp_path("min.idx"));
    rm_index(sp);
    rm_index(mp);
    struct simcrawl_filter *f = NULL;
    struct logbuf log = {{0}, 0};
    /* index files */
    ASSERT_EQ_FATAL(open_method(&f, sp, "simhash", 0, NULL), 0);
    check_generated(f, 0, 10);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    ASSERT_EQ(open_method(&f, sp, "minhash", 0, &log), SIMCRAWL_EMETHOD);
    CU_ASSERT_PTR_NULL(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "sim.idx is a simhash index; it cannot be opened "
                                            "with the minhash method"));
    ASSERT_EQ_FATAL(open_method(&f, mp, "minhash", 0.8, NULL), 0);
    size_t news = check_generated(f, 0, 10);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(open_method(&f, mp, "simhash", 0, &log), SIMCRAWL_EMETHOD);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "min.idx is a minhash index; it cannot be opened "
                                            "with the simhash method"));
    ASSERT_EQ(simcrawl_filter_open(&f, mp, 3), SIMCRAWL_EMETHOD);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(open_method(&f, mp, "minhash", 0.9, &log), SIMCRAWL_EMISMATCH);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "min.idx was made with threshold 0.8, not 0.9"));
    ASSERT_EQ_FATAL(open_method(&f, mp, "minhash", 0.8, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(sp);
    rm_index(mp);

    /* a journal alone (a process that ended without close, no index file yet) */
    int child = crashed_child(mp, 0, 10);
    CU_ASSERT_FATAL(child > 2);
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(mp, &st), 0);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(open_method(&f, mp, "simhash", 0, &log), SIMCRAWL_EMETHOD);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "min.idx.journal is the journal of a minhash filter, "
                                            "opened as a simhash one"));
    ASSERT_EQ_FATAL(open_method(&f, mp, "minhash", 0, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), (size_t)child);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(mp);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct simcrawl_filter *cf;
        if (open_method(&cf, sp, "simhash", 0, NULL) != 0)
            _exit(255);
        _exit((int)check_generated(cf, 0, 10));
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) > 2 && WEXITSTATUS(status) != 255);
    memset(&log, 0, sizeof log);
    ASSERT_EQ(open_method(&f, sp, "minhash", 0, &log), SIMCRAWL_EMETHOD);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "sim.idx.journal is the journal of a simhash filter, "
                                            "opened as a minhash one"));
    ASSERT_EQ_FATAL(open_method(&f, sp, "simhash", 0, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), (uint64_t)WEXITSTATUS(status));
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(sp);
}

/* ---- threads racing check-and-add ---- */

#define ST_THREADS 8
#define ST_GROUPS 150
#define ST_PER_GROUP 6
#define ST_PAGES (ST_GROUPS * ST_PER_GROUP)
#define ST_THRESHOLD 0.8

struct st_page {
    int decision;
    double similarity;
    int has_sig;
    uint32_t sig[MH_H];
    char dup[64];
};

struct st_ctx {
    struct simcrawl_filter *f;
    struct st_page *pages;
    unsigned tid;
    int errors;
};

/* Page i: group i % ST_GROUPS (a group's members are checked by different threads at
 * about the same time), member i / ST_GROUPS; member 4 is the original's bytes again. */
static size_t st_page(unsigned i, char *buf, size_t cap, char *id, size_t idcap)
{
    unsigned g = i % ST_GROUPS, member = i / ST_GROUPS;
    unsigned variant = member == 4 ? 0 : member;
    snprintf(id, idcap, "http://h%u.example/g%u/m%u", g % 4, g, member);
    return fp_page(buf, cap, g % 4, g, variant);
}

static void *st_run(void *arg)
{
    struct st_ctx *c = arg;
    struct simcrawl_match *m = simcrawl_match_new();
    char buf[8192], id[64];
    for (unsigned i = c->tid; i < ST_PAGES; i += ST_THREADS) {
        size_t len = st_page(i, buf, sizeof buf, id, sizeof id);
        int d = simcrawl_filter_check(c->f, id, buf, len, "text/html; charset=utf-8", m);
        struct st_page *p = &c->pages[i];
        p->decision = d;
        p->similarity = simcrawl_match_similarity(m);
        size_t h = 0;
        const uint32_t *sig = simcrawl_match_signature(m, &h);
        if (sig && h == MH_H) {
            memcpy(p->sig, sig, sizeof p->sig);
            p->has_sig = 1;
        }
        const char *dup = simcrawl_match_duplicate_of(m);
        snprintf(p->dup, sizeof p->dup, "%s", dup ? dup : "");
        if (d < 0)
            c->errors++;
    }
    simcrawl_match_free(m);
    return NULL;
}

static int st_index_of(const char *id)
{
    unsigned h, g, member;
    if (sscanf(id, "http://h%u.example/g%u/m%u", &h, &g, &member) != 3 || g >= ST_GROUPS ||
        member >= ST_PER_GROUP)
        return -1;
    return (int)(member * ST_GROUPS + g);
}

/* 1 when a and b share a band of the b x r the filter uses for threshold t (every row of
 * the band equal): the pair LSH is sure to verify. */
static int share_band(const uint32_t *a, const uint32_t *b, double t)
{
    struct dedup_lsh_params lp;
    if (dedup_lsh_params_default(t, &lp) != DEDUP_OK || lp.h != MH_H)
        return -1;
    for (unsigned j = 0; j < lp.b; j++)
        if (memcmp(a + j * lp.r, b + j * lp.r, lp.r * sizeof *a) == 0)
            return 1;
    return 0;
}

static void stress_once(const char *path)
{
    struct simcrawl_options *o = simcrawl_options_new();
    simcrawl_options_set_method(o, "minhash");
    simcrawl_options_set_threshold(o, ST_THRESHOLD);
    simcrawl_options_set_fsync(o, "no");
    simcrawl_options_set_journal_max(o, 96 * 1024); /* compactions during the run */
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open_opts(&f, path, o), 0);
    simcrawl_options_free(o);
    struct st_page *pages = calloc(ST_PAGES, sizeof *pages);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pages);
    pthread_t th[ST_THREADS];
    struct st_ctx ctx[ST_THREADS];
    for (unsigned t = 0; t < ST_THREADS; t++) {
        ctx[t] = (struct st_ctx){f, pages, t, 0};
        ASSERT_EQ_FATAL(pthread_create(&th[t], NULL, st_run, &ctx[t]), 0);
    }
    int errors = 0;
    for (unsigned t = 0; t < ST_THREADS; t++) {
        pthread_join(th[t], NULL);
        errors += ctx[t].errors;
    }
    ASSERT_EQ(errors, 0);
    size_t n_new = 0, n_near = 0, n_exact = 0, bad_pairs = 0, bad_dup = 0, missed = 0;
    size_t above = 0; /* pairs of pages (either decision) at J >= threshold: the base */
    for (unsigned i = 0; i < ST_PAGES; i++) {
        struct st_page *p = &pages[i];
        if (p->decision == SIMCRAWL_NEW) {
            n_new++;
            if (!p->has_sig) {
                bad_dup++;
                continue;
            }
            for (unsigned j = 0; j < i; j++)
                if (pages[j].decision == SIMCRAWL_NEW && pages[j].has_sig &&
                    estimate(pages[j].sig, p->sig) >= ST_THRESHOLD) {
                    if (share_band(pages[j].sig, p->sig, ST_THRESHOLD) != 0)
                        bad_pairs++;
                    else
                        missed++;
                }
            continue;
        }
        int o2 = st_index_of(p->dup);
        if (p->decision == SIMCRAWL_NEAR_DUPLICATE) {
            n_near++;
            /* the original was indexed (reported new), at the estimate said, >= threshold */
            if (o2 < 0 || pages[o2].decision != SIMCRAWL_NEW || !p->has_sig ||
                estimate(pages[o2].sig, p->sig) != p->similarity ||
                p->similarity < ST_THRESHOLD)
                bad_dup++;
        } else if (p->decision == SIMCRAWL_EXACT_DUPLICATE) {
            n_exact++;
            if (o2 < 0 || pages[o2].decision != SIMCRAWL_NEW || o2 % ST_GROUPS != (int)i % ST_GROUPS)
                bad_dup++;
        } else
            bad_dup++;
    }
    for (unsigned i = 0; i < ST_PAGES; i++)
        for (unsigned j = 0; j < i; j++)
            above += pages[i].has_sig && pages[j].has_sig &&
                     estimate(pages[i].sig, pages[j].sig) >= ST_THRESHOLD;
    printf("\n  minhash filter stress: %d threads, %d pages: %zu new, %zu near-duplicate, %zu "
           "exact duplicate; %zu pairs of new pages at J >= %.1f sharing a band, %zu sharing "
           "none (of %zu pairs at J >= %.1f), %zu bad duplicates ",
           ST_THREADS, ST_PAGES, n_new, n_near, n_exact, bad_pairs, ST_THRESHOLD, missed, above,
           ST_THRESHOLD, bad_dup);
    ASSERT_EQ(bad_pairs, 0);
    CU_ASSERT(missed * 50 <= above); /* the S-curve misses a few per cent near J = 0.8 */
    ASSERT_EQ(bad_dup, 0);
    ASSERT_EQ(simcrawl_filter_count(f), n_new);
    CU_ASSERT(n_new >= ST_GROUPS && n_new < ST_PAGES - ST_GROUPS);
    CU_ASSERT(n_near > ST_GROUPS);
    /* member 4 is member 0's bytes. They are never both new: the second decided finds the
     * first's payload. One is an exact duplicate only of the other, which is new. One new
     * and the other a near-duplicate happens only when the two got different signatures:
     * the near-duplicate was decided first (else it would be the exact one) and the
     * template table learnt blocks between the two extractions (the signature is taken
     * with the table as it is then); with equal signatures the second would have found
     * the same original. */
    size_t bad_exact = 0;
    for (unsigned g = 0; g < ST_GROUPS; g++) {
        const struct st_page *a = &pages[g], *b = &pages[4 * ST_GROUPS + g];
        char id_a[64], id_b[64], buf[8192];
        st_page(g, buf, sizeof buf, id_a, sizeof id_a);
        st_page(4 * ST_GROUPS + g, buf, sizeof buf, id_b, sizeof id_b);
        int new_a = a->decision == SIMCRAWL_NEW, new_b = b->decision == SIMCRAWL_NEW;
        if (new_a && new_b)
            bad_exact++;
        if (a->decision == SIMCRAWL_EXACT_DUPLICATE && (!new_b || strcmp(a->dup, id_b) != 0))
            bad_exact++;
        if (b->decision == SIMCRAWL_EXACT_DUPLICATE && (!new_a || strcmp(b->dup, id_a) != 0))
            bad_exact++;
        if (new_a + new_b == 1 &&
            (a->decision == SIMCRAWL_NEAR_DUPLICATE || b->decision == SIMCRAWL_NEAR_DUPLICATE) &&
            a->has_sig && b->has_sig && memcmp(a->sig, b->sig, sizeof a->sig) == 0)
            bad_exact++;
    }
    ASSERT_EQ(bad_exact, 0);
    CU_ASSERT(n_exact > 0);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    if (path) { /* everything reported new is there after a reopen */
        struct logbuf log = {{0}, 0};
        ASSERT_EQ_FATAL(open_method(&f, path, "minhash", 0, &log), 0);
        ASSERT_EQ(simcrawl_filter_count(f), n_new);
        char id[64], buf[8192];
        size_t again_new = 0;
        for (unsigned i = 0; i < ST_PAGES; i++) {
            if (pages[i].decision != SIMCRAWL_NEW)
                continue;
            st_page(i, buf, sizeof buf, id, sizeof id);
            again_new += simcrawl_filter_check(f, id, "<p>x</p>", 8, NULL, NULL) == SIMCRAWL_NEW;
        }
        ASSERT_EQ(again_new, n_new);
        ASSERT_EQ(simcrawl_filter_close(f), 0);
    }
    free(pages);
}

static void test_filter_minhash_threads(void)
{
    stress_once(NULL);
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("stress.idx"));
    rm_index(path);
    stress_once(path);
    rm_index(path);
}

static int suite_clean(void)
{
    if (tmpdir[0])
        rmdir(tmpdir);
    return 0;
}

extern void test_filter_minhash_register(void);
void test_filter_minhash_register(void)
{
    CU_pSuite s = CU_add_suite("filter_minhash", NULL, suite_clean);
    CU_add_test(s, "test_filter_minhash_options", test_filter_minhash_options);
    CU_add_test(s, "test_filter_minhash_decisions", test_filter_minhash_decisions);
    CU_add_test(s, "test_filter_minhash_reopen", test_filter_minhash_reopen);
    CU_add_test(s, "test_filter_minhash_method_mismatch", test_filter_minhash_method_mismatch);
    CU_add_test(s, "test_filter_minhash_threads", test_filter_minhash_threads);
}

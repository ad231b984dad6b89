/*
 * Suite "filter": libsimcrawl's filter (<simcrawl.h>, filter/filter.c): the version and
 * error strings, the stateless fingerprint (the same as `simcrawl fingerprint`), every
 * decision on the fixtures, idempotence by id, an index kept across close and open and
 * across a process that ended without closing (the journal replayed), a torn journal tail
 * dropped with a warning, the writer lock between processes (fork), k and version
 * mismatches, and the thread stress: 8 threads checking 3,000 generated pages with
 * near-duplicate groups, the invariant asserted (no two new pages within k; every
 * duplicate's original indexed and within k).
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

#include "filter/simcrawl.h"
#include "tests/filter_pages.h"
#include "tests/testutil.h"

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char p[256];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/simcrawl_filter_XXXXXX");
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

/* Collects the log callback's messages. */
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

static void test_filter_version_and_strings(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", SIMCRAWL_VERSION_MAJOR, SIMCRAWL_VERSION_MINOR,
             SIMCRAWL_VERSION_PATCH);
    CU_ASSERT_STRING_EQUAL(simcrawl_version(), want);
    CU_ASSERT_STRING_EQUAL(simcrawl_version(), "0.4.0");
    ASSERT_EQ(simcrawl_fingerprint_version(), 12);
    CU_ASSERT_STRING_EQUAL(simcrawl_strerror(SIMCRAWL_NEAR_DUPLICATE), "near-duplicate");
    CU_ASSERT_STRING_EQUAL(simcrawl_strerror(SIMCRAWL_ELOCKED),
                           "the index file is locked by another process");
    CU_ASSERT_STRING_EQUAL(simcrawl_strerror(-1000), "unknown code");
    for (int c = SIMCRAWL_EMETHOD; c <= SIMCRAWL_NOT_HTML; c++)
        CU_ASSERT(strcmp(simcrawl_strerror(c), "unknown code") != 0);
    struct simcrawl_options *o = simcrawl_options_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    ASSERT_EQ(simcrawl_options_set_k(o, 8), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_k(o, 7), 0);
    ASSERT_EQ(simcrawl_options_set_fsync(o, "sometimes"), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_fsync(o, "always"), 0);
    ASSERT_EQ(simcrawl_options_set_lock_wait(o, -1), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_templates(o, 2), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_max_bytes(o, 0), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_k(NULL, 3), SIMCRAWL_EINVAL);
    simcrawl_options_free(o);
    simcrawl_options_free(NULL);
    simcrawl_match_free(NULL);
    ASSERT_EQ(simcrawl_filter_close(NULL), 0);
}

/* The stateless fingerprint is `simcrawl fingerprint`'s (values from the command). */
static void test_filter_fingerprint_stateless(void)
{
    size_t len;
    char *p = test_slurp("tests/data/fingerprint/page1.html", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    uint64_t fp = 0;
    ASSERT_EQ(simcrawl_fingerprint(p, len, NULL, &fp), 0);
    ASSERT_EQ(fp, 0xf5ac66b1b5fa4f75ull);
    ASSERT_EQ(simcrawl_fingerprint(p, len, "text/html; charset=utf-8", &fp), 0);
    ASSERT_EQ(fp, 0xf5ac66b1b5fa4f75ull);
    fp = 7;
    ASSERT_EQ(simcrawl_fingerprint(p, len, "application/pdf", &fp), SIMCRAWL_NOT_HTML);
    ASSERT_EQ(fp, 7);
    free(p);
    p = test_slurp("tests/data/fingerprint/short.html", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ASSERT_EQ(simcrawl_fingerprint(p, len, NULL, &fp), SIMCRAWL_TOO_SHORT);
    free(p);
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10";
    ASSERT_EQ(simcrawl_fingerprint(png, sizeof png - 1, NULL, &fp), SIMCRAWL_NOT_HTML);
    ASSERT_EQ(simcrawl_fingerprint("", 0, NULL, &fp), SIMCRAWL_TOO_SHORT);
    ASSERT_EQ(simcrawl_fingerprint(NULL, 0, NULL, NULL), SIMCRAWL_EINVAL);
}

/* check() on a fixture file under id. */
static int check_file(struct simcrawl_filter *f, const char *id, const char *path,
                      struct simcrawl_match *m)
{
    size_t len;
    char *p = test_slurp(path, &len);
    if (!p)
        return -100;
    int d = simcrawl_filter_check(f, id, p, len, "text/html", m);
    free(p);
    return d;
}

/* Every decision, in memory, on the fingerprint fixtures; idempotence by id. */
/* On request a check keeps the page's main text and its links, resolved against the id as
 * the page's URL; not by default, and not for pages decided before parsing. */
static void test_filter_text_and_links(void)
{
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, NULL, 3), 0);
    struct simcrawl_match *m = simcrawl_match_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *page1 = "tests/data/fingerprint/page1.html";
    size_t len = 99;
    /* not asked for: nothing kept */
    ASSERT_EQ(check_file(f, "http://example.org/a/page1", page1, m), SIMCRAWL_NEW);
    CU_ASSERT_PTR_NULL(simcrawl_match_text(m, &len));
    ASSERT_EQ(len, 0);
    ASSERT_EQ(simcrawl_match_link_count(m), 0);
    CU_ASSERT_PTR_NULL(simcrawl_match_link(m, 0));
    ASSERT_EQ(simcrawl_match_want(m, 4), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_match_want(NULL, SIMCRAWL_MATCH_TEXT), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_match_want(m, SIMCRAWL_MATCH_TEXT | SIMCRAWL_MATCH_LINKS), 0);
    /* a near-duplicate is parsed: its text and links are there (the crawler may log them) */
    const char *edit = "tests/data/fingerprint/page1-edit.html";
    ASSERT_EQ(check_file(f, "http://example.org/b/edit", edit, m),
                    SIMCRAWL_NEAR_DUPLICATE);
    const char *t = simcrawl_match_text(m, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ASSERT_EQ(strlen(t), len);
    CU_ASSERT(strncmp(t, "The keepers of the light", 24) == 0);
    CU_ASSERT(strstr(t, "Updated in May 2026.") != NULL);
    CU_ASSERT(strstr(t, "Copyright") == NULL); /* the footer is boilerplate */
    size_t n = simcrawl_match_link_count(m);
    CU_ASSERT(n >= 6);
    int home = 0, privacy = 0;
    for (size_t i = 0; i < n; i++) {
        const char *u = simcrawl_match_link(m, i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(u);
        home += strcmp(u, "http://example.org/") == 0;
        privacy += strcmp(u, "http://example.org/privacy") == 0;
    }
    CU_ASSERT(home >= 1);
    ASSERT_EQ(privacy, 1);
    CU_ASSERT_PTR_NULL(simcrawl_match_link(m, n));
    /* an exact copy is decided before parsing: no text, no links */
    ASSERT_EQ(check_file(f, "http://example.org/c/copy", page1, m),
                    SIMCRAWL_EXACT_DUPLICATE);
    CU_ASSERT_PTR_NULL(simcrawl_match_text(m, NULL));
    ASSERT_EQ(simcrawl_match_link_count(m), 0);
    /* too little text: parsed, so the text (two words) is there */
    ASSERT_EQ(check_file(f, "http://example.org/short", "tests/data/fingerprint/short.html",
                               m), SIMCRAWL_TOO_SHORT);
    CU_ASSERT_PTR_NOT_NULL(simcrawl_match_text(m, NULL));
    /* asking again for nothing */
    ASSERT_EQ(simcrawl_match_want(m, 0), 0);
    ASSERT_EQ(check_file(f, "http://example.org/other", "tests/data/fingerprint/other.html",
                               m), SIMCRAWL_NEW);
    CU_ASSERT_PTR_NULL(simcrawl_match_text(m, NULL));
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

static void test_filter_decisions(void)
{
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, NULL, 3), 0);
    struct simcrawl_match *m = simcrawl_match_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *d = "tests/data/fingerprint/";
    char path[256];
    snprintf(path, sizeof path, "%spage1.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/page1", path, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_fingerprint(m), 0xf5ac66b1b5fa4f75ull);
    CU_ASSERT_PTR_NULL(simcrawl_match_duplicate_of(m));
    ASSERT_EQ(simcrawl_match_distance(m), 0);
    ASSERT_EQ(simcrawl_filter_count(f), 1);

    snprintf(path, sizeof path, "%spage1-edit.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/page1-edit", path, m),
                    SIMCRAWL_NEAR_DUPLICATE);
    ASSERT_EQ(simcrawl_match_fingerprint(m), 0xf5ac46b9b5fa4f75ull);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/page1");
    ASSERT_EQ(simcrawl_match_distance(m), 2);
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_match_similarity(m), 1.0 - 2.0 / 64, 1e-12);

    snprintf(path, sizeof path, "%spage1.html", d);
    ASSERT_EQ(check_file(f, "http://mirror.example.net/copy", path, m),
                    SIMCRAWL_EXACT_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/page1");
    ASSERT_EQ(simcrawl_match_distance(m), 0);
    CU_ASSERT_DOUBLE_EQUAL(simcrawl_match_similarity(m), 1.0, 1e-12);

    snprintf(path, sizeof path, "%sother.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/other", path, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_fingerprint(m), 0xf5e7e8d66c34371dull);
    snprintf(path, sizeof path, "%sshort.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/short", path, m), SIMCRAWL_TOO_SHORT);
    ASSERT_EQ(simcrawl_match_fingerprint(m), 0);
    ASSERT_EQ(check_file(f, "http://example.org/short", path, m), SIMCRAWL_TOO_SHORT);
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10";
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.org/i.png", png, sizeof png - 1,
                                          NULL, m), SIMCRAWL_NOT_HTML);
    snprintf(path, sizeof path, "%sother.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/other-copy", path, m),
                    SIMCRAWL_EXACT_DUPLICATE);
    size_t olen;
    char *other = test_slurp(path, &olen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.org/o.pdf", other, olen,
                                          "application/pdf", m), SIMCRAWL_NOT_HTML);
    free(other);
    ASSERT_EQ(simcrawl_filter_count(f), 2);

    /* the charset of the Content-Type is used: the same text in ISO-8859-1 and in UTF-8
     * is one page */
    static const char latin1[] = "<html><body><p>Caf\xe9 cr\xe8me, na\xefve fa\xe7" "ade: "
                                 "quelques mots de plus pour un texte assez long.</p></body>"
                                 "</html>";
    static const char utf8[] = "<html><body><p>Caf\xc3\xa9 cr\xc3\xa8me, na\xc3\xafve "
                               "fa\xc3\xa7" "ade: quelques mots de plus pour un texte assez "
                               "long.</p></body></html>";
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.fr/latin1", latin1,
                                          sizeof latin1 - 1, "text/html; charset=iso-8859-1",
                                          m), SIMCRAWL_NEW);
    uint64_t fp_latin1 = simcrawl_match_fingerprint(m);
    ASSERT_EQ(simcrawl_filter_check(f, "http://example.fr/utf8", utf8, sizeof utf8 - 1,
                                          "text/html; charset=utf-8", m),
                    SIMCRAWL_NEAR_DUPLICATE);
    ASSERT_EQ(simcrawl_match_fingerprint(m), fp_latin1);
    ASSERT_EQ(simcrawl_match_distance(m), 0);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.fr/latin1");
    ASSERT_EQ(simcrawl_filter_count(f), 3);

    /* idempotent by id: the stored decision, nothing added, whatever the bytes now */
    snprintf(path, sizeof path, "%sother.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/page1", path, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_fingerprint(m), 0xf5ac66b1b5fa4f75ull);
    CU_ASSERT_PTR_NULL(simcrawl_match_duplicate_of(m));
    snprintf(path, sizeof path, "%sshort.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/other", path, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_count(f), 3);
    /* match may be NULL; bad arguments */
    ASSERT_EQ(check_file(f, "http://example.org/other", path, NULL), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_check(f, NULL, "x", 1, NULL, m), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_filter_check(f, "", "x", 1, NULL, m), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_filter_check(NULL, "a", "x", 1, NULL, m), SIMCRAWL_EINVAL);
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    /* max_bytes: a larger page is ETOOLARGE, never truncated */
    struct simcrawl_options *o = simcrawl_options_new();
    ASSERT_EQ(simcrawl_options_set_max_bytes(o, 1000), 0);
    ASSERT_EQ_FATAL(simcrawl_filter_open_opts(&f, NULL, o), 0);
    simcrawl_options_free(o);
    snprintf(path, sizeof path, "%spage1.html", d);
    ASSERT_EQ(check_file(f, "http://example.org/page1", path, NULL), SIMCRAWL_ETOOLARGE);
    ASSERT_EQ(simcrawl_filter_count(f), 0);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

/* The extractor's fixtures, templates off: each page's fingerprint is the stateless one,
 * and each decision agrees with the distances to the pages indexed before it. */
static void test_filter_extract_fixtures(void)
{
    struct simcrawl_options *o = simcrawl_options_new();
    ASSERT_EQ(simcrawl_options_set_templates(o, 0), 0);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open_opts(&f, NULL, o), 0);
    simcrawl_options_free(o);
    struct simcrawl_match *m = simcrawl_match_new();
    uint64_t kept[64];
    char kept_id[64][32];
    size_t n_kept = 0, n_pages = 0;
    for (int i = 1; i < 64; i++) {
        char path[64], id[32];
        snprintf(path, sizeof path, "tests/data/extract/%03d.html", i);
        size_t len;
        char *p = test_slurp(path, &len);
        if (!p)
            continue;
        n_pages++;
        snprintf(id, sizeof id, "file:%03d", i);
        uint64_t want = 0;
        int s = simcrawl_fingerprint(p, len, NULL, &want);
        int dec = simcrawl_filter_check(f, id, p, len, NULL, m);
        free(p);
        if (s != 0) {
            ASSERT_EQ(dec, s);
            continue;
        }
        ASSERT_EQ(simcrawl_match_fingerprint(m), want);
        unsigned best = 65;
        for (size_t j = 0; j < n_kept; j++) {
            unsigned dd = (unsigned)__builtin_popcountll(kept[j] ^ want);
            if (dd < best)
                best = dd;
        }
        if (best <= 3) {
            CU_ASSERT(dec == SIMCRAWL_NEAR_DUPLICATE || dec == SIMCRAWL_EXACT_DUPLICATE);
            ASSERT_EQ(simcrawl_match_distance(m), dec == SIMCRAWL_EXACT_DUPLICATE ? 0 : best);
        } else {
            ASSERT_EQ(dec, SIMCRAWL_NEW);
            if (dec == SIMCRAWL_NEW) {
                kept[n_kept] = want;
                snprintf(kept_id[n_kept], sizeof kept_id[n_kept], "%s", id);
                n_kept++;
            }
        }
    }
    CU_ASSERT(n_pages >= 20);
    ASSERT_EQ(simcrawl_filter_count(f), n_kept);
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

/* Checks the fingerprint fixtures into a filter on path (lock_wait 0). */
static int open_path(struct simcrawl_filter **f, const char *path, unsigned k,
                     struct logbuf *log)
{
    struct simcrawl_options *o = simcrawl_options_new();
    /* templates off: a near-duplicate checked again after its host's template was learned
     * may be fingerprinted without the template and become new; these tests count */
    simcrawl_options_set_templates(o, 0);
    simcrawl_options_set_k(o, k);
    simcrawl_options_set_lock_wait(o, 0);
    simcrawl_options_set_fsync(o, "no");
    if (log)
        simcrawl_options_set_log(o, on_log, log);
    int rc = simcrawl_filter_open_opts(f, path, o);
    simcrawl_options_free(o);
    return rc;
}

/* Generated pages 0..n of three hosts into f; returns how many were new. */
static size_t check_generated(struct simcrawl_filter *f, unsigned from, unsigned n)
{
    static char buf[8192];
    size_t news = 0;
    for (unsigned i = from; i < from + n; i++) {
        char id[64];
        snprintf(id, sizeof id, "http://h%u.example/p%u", i % 3, i);
        size_t len = fp_page(buf, sizeof buf, i % 3, i / 2, i % 2);
        int d = simcrawl_filter_check(f, id, buf, len, NULL, NULL);
        news += d == SIMCRAWL_NEW;
    }
    return news;
}

/* Close and open again: pages, ids, payloads, templates kept; a process that ends without
 * closing (the journal only) too. */
/* A process that opens path, checks generated pages from..from+n-1 (check_generated) and
 * ends without closing, as a crash would: the number it reported new, or -1 when it could
 * not open the filter or did not exit normally. */
static int crashed_child(const char *path, unsigned from, unsigned n)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        struct simcrawl_filter *cf;
        if (open_path(&cf, path, 3, NULL) != 0)
            _exit(255);
        size_t news = check_generated(cf, from, n);
        _exit((int)(news > 200 ? 200 : news));
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
        return -1;
    return WEXITSTATUS(status);
}

/* Page n of a host of short pages under a 600-word menu the extractor keeps: the menu, 6
 * words of its own, a footer (tests/cli/crawl_young_host.sh's site). */
static size_t menu_page(char *buf, size_t cap, unsigned n)
{
    size_t len = (size_t)snprintf(buf, cap, "<html><head><title>Page %u</title></head><body>"
                                            "<div class=\"content\"><p>", n);
    for (unsigned i = 0; i < 600 && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "menu%03u ", i);
    len += (size_t)snprintf(buf + len, cap - len, "</p><p>");
    unsigned x = n * 2654435761u + 12345u;
    for (unsigned i = 0; i < 6 && len < cap; i++) {
        x = x * 1103515245u + 12345u;
        len += (size_t)snprintf(buf + len, cap - len, "w%03u ", (x >> 8) % 800);
    }
    len += (size_t)snprintf(buf + len, cap - len,
                            "</p><p>Copyright the example project all rights reserved terms of "
                            "use privacy policy</p></div></body></html>\n");
    return len;
}

/* A filter on path with the site templates (fsync off), or NULL: memory only. */
static int open_tpl(struct simcrawl_filter **f, const char *path)
{
    struct simcrawl_options *o = simcrawl_options_new();
    simcrawl_options_set_k(o, 3);
    simcrawl_options_set_lock_wait(o, 0);
    simcrawl_options_set_fsync(o, "no");
    int rc = simcrawl_filter_open_opts(f, path, o);
    simcrawl_options_free(o);
    return rc;
}

/*
 * A near-duplicate of a young host counts its template blocks (docs/FINGERPRINT.md, "Where
 * T comes from"), and its learn record in the journal brings the count back after a crash:
 * a host of short pages under a big menu loses its 2nd and 3rd page (within k of the first
 * by the menu) and keeps every later one, in one process and in a process that opens the
 * journal a crashed one left after those three pages (without the learn records the
 * reopened filter would count one document and drop every later page too).
 */
static void test_filter_learn_journal(void)
{
    enum { PAGES = 12 };
    static char buf[16384];
    char path[256], j[300];
    snprintf(path, sizeof path, "%s", tmp_path("learn.idx"));
    snprintf(j, sizeof j, "%s.journal", path);
    rm_index(path);
    int want[PAGES];
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_tpl(&f, NULL), 0);
    for (unsigned n = 0; n < PAGES; n++) {
        char id[64];
        snprintf(id, sizeof id, "http://young.example/p%u", n);
        size_t len = menu_page(buf, sizeof buf, n);
        want[n] = simcrawl_filter_check(f, id, buf, len, "text/html", NULL);
    }
    ASSERT_EQ(want[0], SIMCRAWL_NEW);
    ASSERT_EQ(want[1], SIMCRAWL_NEAR_DUPLICATE);
    ASSERT_EQ(want[2], SIMCRAWL_NEAR_DUPLICATE);
    for (unsigned n = 3; n < PAGES; n++)
        ASSERT_EQ(want[n], SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) { /* three pages, then an end without close() */
        struct simcrawl_filter *cf;
        if (open_tpl(&cf, path) != 0)
            _exit(255);
        int bad = 0;
        for (unsigned n = 0; n < 3; n++) {
            char id[64];
            snprintf(id, sizeof id, "http://young.example/p%u", n);
            size_t len = menu_page(buf, sizeof buf, n);
            bad += simcrawl_filter_check(cf, id, buf, len, "text/html", NULL) != want[n];
        }
        _exit(bad);
    }
    int status = 0;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    struct stat st;
    ASSERT_EQ(stat(path, &st), -1); /* never compacted: all of it is in the journal */
    ASSERT_EQ_FATAL(open_tpl(&f, path), 0);
    for (unsigned n = 3; n < PAGES; n++) {
        char id[64];
        snprintf(id, sizeof id, "http://young.example/p%u", n);
        size_t len = menu_page(buf, sizeof buf, n);
        ASSERT_EQ(simcrawl_filter_check(f, id, buf, len, "text/html", NULL), want[n]);
    }
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    int fd = open(j, O_RDONLY);
    unsigned char v[4] = {0};
    ASSERT_EQ(pread(fd, v, 4, 8), 4);
    ASSERT_EQ(v[0], 4);
    close(fd);
    rm_index(path);
}

/* The site templates learned are saved with the index: a page checked after close and
 * open is fingerprinted as in a filter that never closed. */
static void test_filter_templates_kept(void)
{
    char path[256], buf[8192];
    snprintf(path, sizeof path, "%s", tmp_path("tpl.idx"));
    rm_index(path);
    struct simcrawl_filter *a = NULL, *b = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&a, path, 3), 0);
    ASSERT_EQ_FATAL(simcrawl_filter_open(&b, NULL, 3), 0);
    check_generated(a, 0, 60);
    check_generated(b, 0, 60);
    ASSERT_EQ(simcrawl_filter_close(a), 0);
    ASSERT_EQ_FATAL(simcrawl_filter_open(&a, path, 3), 0);
    struct simcrawl_match *ma = simcrawl_match_new(), *mb = simcrawl_match_new();
    size_t len = fp_page(buf, sizeof buf, 1, 5000, 0);
    ASSERT_EQ(simcrawl_filter_check(a, "http://h1.example/new", buf, len, NULL, ma),
                    SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_check(b, "http://h1.example/new", buf, len, NULL, mb),
                    SIMCRAWL_NEW);
    uint64_t whole = 0;
    ASSERT_EQ(simcrawl_fingerprint(buf, len, NULL, &whole), 0);
    ASSERT_EQ(simcrawl_match_fingerprint(ma), simcrawl_match_fingerprint(mb));
    CU_ASSERT_NOT_EQUAL(simcrawl_match_fingerprint(ma), whole); /* the template left out */
    simcrawl_match_free(ma);
    simcrawl_match_free(mb);
    ASSERT_EQ(simcrawl_filter_close(a), 0);
    ASSERT_EQ(simcrawl_filter_close(b), 0);
    rm_index(path);
}

static void test_filter_reopen(void)
{
    const char *p = tmp_path("re.idx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char path[256];
    snprintf(path, sizeof path, "%s", p);
    rm_index(path);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    ASSERT_EQ(check_file(f, "http://example.org/page1",
                               "tests/data/fingerprint/page1.html", NULL), SIMCRAWL_NEW);
    size_t news = 1 + check_generated(f, 0, 60);
    CU_ASSERT(news > 30);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);

    ASSERT_EQ_FATAL(open_path(&f, path, 0, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    struct simcrawl_match *m = simcrawl_match_new();
    ASSERT_EQ(check_file(f, "http://example.org/copy", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_EXACT_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "http://example.org/page1");
    ASSERT_EQ(check_file(f, "http://example.org/edit",
                               "tests/data/fingerprint/page1-edit.html", m),
                    SIMCRAWL_NEAR_DUPLICATE);
    /* the same ids again: the new ones get their stored decision, nothing is added */
    ASSERT_EQ(check_generated(f, 0, 60), news - 1);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    /* a process that adds pages and ends without close(): the journal has them */
    int child = crashed_child(path, 1000, 40);
    CU_ASSERT_FATAL(child > 4);
    size_t child_news = (size_t)child;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news + child_news);
    ASSERT_EQ(check_generated(f, 1000, 40), child_news);
    ASSERT_EQ(simcrawl_filter_count(f), news + child_news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    /* and after that close, the index file alone holds them */
    char j[300];
    snprintf(j, sizeof j, "%s.journal", path);
    ASSERT_EQ(stat(j, &st), 0);
    ASSERT_EQ(st.st_size, 16);

    /* a damaged payloads file: reported, ignored; an exact copy is then found at distance
     * 0 by its fingerprint */
    char pay[300];
    snprintf(pay, sizeof pay, "%s.payloads", path);
    FILE *w = fopen(pay, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    fseek(w, 40, SEEK_SET);
    fputc('!', w);
    fclose(w);
    struct logbuf log = {{0}, 0};
    ASSERT_EQ_FATAL(open_path(&f, path, 3, &log), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "re.idx.payloads is damaged"));
    ASSERT_EQ(simcrawl_filter_count(f), news + child_news);
    m = simcrawl_match_new();
    ASSERT_EQ(check_file(f, "http://example.org/copy2", "tests/data/fingerprint/page1.html",
                               m), SIMCRAWL_NEAR_DUPLICATE);
    ASSERT_EQ(simcrawl_match_distance(m), 0);
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);
}

/* A torn last record (a kill during its write) and a damaged one are dropped with a
 * warning to the log callback; the records before them stay. */
static void test_filter_torn_journal(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("torn.idx"));
    rm_index(path);
    int child = crashed_child(path, 0, 20);
    CU_ASSERT_FATAL(child > 3);
    size_t news = (size_t)child;
    char j[300];
    snprintf(j, sizeof j, "%s.journal", path);
    struct stat st;
    ASSERT_EQ_FATAL(stat(j, &st), 0);
    off_t whole = st.st_size;
    /* cut the last record short, as a kill during its write() would */
    ASSERT_EQ(truncate(j, whole - 7), 0);
    struct logbuf log = {{0}, 0};
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, &log), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news - 1);
    ASSERT_EQ(log.n, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "torn.idx.journal: dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "cut short"));
    /* the page of the dropped record is new again; the others keep their decision */
    ASSERT_EQ(check_generated(f, 0, 20), news);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    /* no close: kill the state as a crash would, in a child that holds nothing */
    simcrawl_filter_close(f);

    /* a flipped byte inside the last record: its checksum fails */
    child = crashed_child(path, 500, 6);
    CU_ASSERT_FATAL(child >= 2);
    size_t more = (size_t)child;
    ASSERT_EQ_FATAL(stat(j, &st), 0);
    int fd = open(j, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char c;
    ASSERT_EQ(pread(fd, &c, 1, st.st_size - 3), 1);
    c ^= 0x40;
    ASSERT_EQ(pwrite(fd, &c, 1, st.st_size - 3), 1);
    close(fd);
    memset(&log, 0, sizeof log);
    ASSERT_EQ_FATAL(open_path(&f, path, 3, &log), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news + more - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "checksum"));
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);
}

/* A second writer in another process: ELOCKED after lock_wait; k and version checks. */
static void test_filter_lock_k_version(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("lock.idx"));
    rm_index(path);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    check_generated(f, 0, 10);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct simcrawl_filter *cf = NULL;
        int rc = open_path(&cf, path, 3, NULL);
        _exit(rc == SIMCRAWL_ELOCKED && cf == NULL ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t n = simcrawl_filter_count(f);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    /* released at close: the child gets it now */
    pid = fork();
    if (pid == 0) {
        struct simcrawl_filter *cf = NULL;
        int rc = open_path(&cf, path, 3, NULL);
        _exit(rc == 0 && simcrawl_filter_count(cf) == n && simcrawl_filter_close(cf) == 0 ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* k must be the file's */
    f = (struct simcrawl_filter *)1;
    ASSERT_EQ(open_path(&f, path, 4, NULL), SIMCRAWL_EMISMATCH);
    CU_ASSERT_PTR_NULL(f);
    ASSERT_EQ(simcrawl_filter_open(&f, path, 8), SIMCRAWL_EINVAL);
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, path, 0), 0);
    ASSERT_EQ(simcrawl_filter_count(f), n);
    ASSERT_EQ(simcrawl_filter_close(f), 0);

    /* a file of an older format version (4: fingerprint version 2): EVERSION */
    size_t len;
    char *data = test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    CU_ASSERT_FATAL(len > 16);
    char bad[300];
    snprintf(bad, sizeof bad, "%s", tmp_path("v4.idx"));
    rm_index(bad);
    data[8] = 4;
    data[9] = data[10] = data[11] = 0;
    FILE *w = fopen(bad, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    fwrite(data, 1, len, w);
    fclose(w);
    struct logbuf log = {{0}, 0};
    ASSERT_EQ(open_path(&f, bad, 0, &log), SIMCRAWL_EVERSION);
    CU_ASSERT(log.n >= 1);
    /* a damaged body: ECORRUPT */
    data[8] = 5;
    data[len - 1] ^= 0x55;
    w = fopen(bad, "wb");
    fwrite(data, 1, len, w);
    fclose(w);
    ASSERT_EQ(open_path(&f, bad, 0, NULL), SIMCRAWL_ECORRUPT);
    /* not an index file at all */
    w = fopen(bad, "wb");
    fputs("<html>not an index</html>\n", w);
    fclose(w);
    int rc = open_path(&f, bad, 0, NULL);
    CU_ASSERT(rc == SIMCRAWL_ECORRUPT || rc == SIMCRAWL_EVERSION);
    free(data);
    rm_index(bad);
    rm_index(path);
}

/* ---- the thread stress ---- */

#define ST_THREADS 8
#define ST_GROUPS 600
#define ST_PER_GROUP 5 /* original, 3 one-word edits, 1 exact copy */
#define ST_PAGES (ST_GROUPS * ST_PER_GROUP)

struct st_page {
    int decision;
    uint64_t fp;
    char dup[64];
    unsigned distance;
};

struct st_ctx {
    struct simcrawl_filter *f;
    struct st_page *pages;
    unsigned tid;
    int errors;
};

/* Page i: group i % ST_GROUPS (so a group's members are checked by different threads at
 * about the same time), member i / ST_GROUPS. */
static size_t st_page(unsigned i, char *buf, size_t cap, char *id, size_t idcap)
{
    unsigned g = i % ST_GROUPS, member = i / ST_GROUPS;
    unsigned variant = member == 4 ? 0 : member; /* member 4: the original's bytes again */
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
        p->fp = simcrawl_match_fingerprint(m);
        p->distance = simcrawl_match_distance(m);
        const char *dup = simcrawl_match_duplicate_of(m);
        snprintf(p->dup, sizeof p->dup, "%s", dup ? dup : "");
        if (d < 0)
            c->errors++;
    }
    simcrawl_match_free(m);
    return NULL;
}

/* The page number of an id of st_page(), or -1. */
static int st_index_of(const char *id)
{
    unsigned h, g, member;
    if (sscanf(id, "http://h%u.example/g%u/m%u", &h, &g, &member) != 3 || g >= ST_GROUPS ||
        member >= ST_PER_GROUP)
        return -1;
    return (int)(member * ST_GROUPS + g);
}

static void stress_once(const char *path)
{
    struct simcrawl_options *o = simcrawl_options_new();
    simcrawl_options_set_fsync(o, "no");
    simcrawl_options_set_journal_max(o, 64 * 1024); /* compactions during the run */
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
    size_t n_new = 0, n_near = 0, n_exact = 0, bad_pairs = 0, bad_dup = 0;
    for (unsigned i = 0; i < ST_PAGES; i++) {
        struct st_page *p = &pages[i];
        if (p->decision == SIMCRAWL_NEW) {
            n_new++;
            for (unsigned j = 0; j < i; j++)
                if (pages[j].decision == SIMCRAWL_NEW &&
                    __builtin_popcountll(pages[j].fp ^ p->fp) <= 3)
                    bad_pairs++;
            continue;
        }
        int o2 = st_index_of(p->dup);
        if (p->decision == SIMCRAWL_NEAR_DUPLICATE)
            n_near++;
        else if (p->decision == SIMCRAWL_EXACT_DUPLICATE)
            n_exact++;
        else {
            bad_dup++;
            continue;
        }
        /* the original is an indexed page (reported new), within k, at the distance said */
        if (o2 < 0 || pages[o2].decision != SIMCRAWL_NEW ||
            (unsigned)__builtin_popcountll(pages[o2].fp ^ p->fp) != p->distance ||
            p->distance > 3)
            bad_dup++;
        if (p->decision == SIMCRAWL_EXACT_DUPLICATE && (o2 < 0 || pages[o2].fp != p->fp))
            bad_dup++;
    }
    printf("\n  filter stress: %d threads, %d pages: %zu new, %zu near-duplicate, %zu exact "
           "duplicate; %zu pairs of new pages within k, %zu bad duplicates ",
           ST_THREADS, ST_PAGES, n_new, n_near, n_exact, bad_pairs, bad_dup);
    ASSERT_EQ(bad_pairs, 0);
    ASSERT_EQ(bad_dup, 0);
    ASSERT_EQ(simcrawl_filter_count(f), n_new);
    CU_ASSERT(n_new >= ST_GROUPS / 2 && n_new < ST_PAGES - ST_GROUPS);
    CU_ASSERT(n_near > ST_GROUPS);
    CU_ASSERT(n_exact >= ST_GROUPS / 2);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    if (path) { /* everything reported new is there after a reopen */
        ASSERT_EQ_FATAL(simcrawl_filter_open(&f, path, 0), 0);
        ASSERT_EQ(simcrawl_filter_count(f), n_new);
        char id[64], buf[8192];
        size_t again_new = 0;
        for (unsigned i = 0; i < ST_PAGES; i++) {
            if (pages[i].decision != SIMCRAWL_NEW)
                continue;
            st_page(i, buf, sizeof buf, id, sizeof id);
            /* another page's bytes under this id: the stored decision */
            again_new += simcrawl_filter_check(f, id, "<p>x</p>", 8, NULL, NULL) == SIMCRAWL_NEW;
        }
        ASSERT_EQ(again_new, n_new);
        ASSERT_EQ(simcrawl_filter_close(f), 0);
    }
    free(pages);
}

static void test_filter_threads_stress(void)
{
    stress_once(NULL);
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("stress.idx"));
    rm_index(path);
    stress_once(path);
    rm_index(path);
}

/* Checks by fingerprint (the service's NDJSON path): the same decision without a page;
 * idempotent by id; NO_ADD decides without adding. */
static void test_filter_check_fingerprint(void)
{
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, NULL, 3), 0);
    ASSERT_EQ(simcrawl_filter_k(f), 3);
    ASSERT_EQ(simcrawl_filter_journal_bytes(f), 0);
    struct simcrawl_match *m = simcrawl_match_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const uint64_t a = 0x0123456789abcdefull;
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "a", a, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    ASSERT_EQ(simcrawl_match_fingerprint(m), a);
    CU_ASSERT_PTR_NULL(simcrawl_match_duplicate_of(m));
    /* 3 bits away: a near-duplicate of a; nothing added */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "b", a ^ 0x1011, 0, m),
                    SIMCRAWL_NEAR_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "a");
    ASSERT_EQ(simcrawl_match_distance(m), 3);
    ASSERT_EQ(simcrawl_match_fingerprint(m), a ^ 0x1011);
    ASSERT_EQ(simcrawl_match_added(m), 0);
    /* 4 bits away: new */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "c", a ^ 0xf0000, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_count(f), 2);
    /* the same id again, whatever the fingerprint: its stored decision, nothing added */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "a", ~a, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 0);
    ASSERT_EQ(simcrawl_match_fingerprint(m), a);
    /* a dry run: decided, not added */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "d", ~a, SIMCRAWL_CHECK_NO_ADD, m),
                    SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 0);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "e", a ^ 1, SIMCRAWL_CHECK_NO_ADD, m),
                    SIMCRAWL_NEAR_DUPLICATE);
    ASSERT_EQ(simcrawl_filter_count(f), 2);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "d", ~a, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    ASSERT_EQ(simcrawl_filter_count(f), 3);
    /* a page checked with NO_ADD: not added either */
    ASSERT_EQ(check_file(f, "p1", "tests/data/fingerprint/page1.html", m), SIMCRAWL_NEW);
    size_t len;
    char *pg = test_slurp("tests/data/fingerprint/other.html", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pg);
    ASSERT_EQ(simcrawl_filter_check_flags(f, "o", pg, len, NULL, SIMCRAWL_CHECK_NO_ADD, m),
                    SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 0);
    ASSERT_EQ(simcrawl_filter_count(f), 4);
    ASSERT_EQ(simcrawl_filter_check_flags(f, "o", pg, len, NULL, 8, m), SIMCRAWL_EINVAL);
    free(pg);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "", a, 0, m), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(NULL, "x", a, 0, m), SIMCRAWL_EINVAL);
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

struct hood_seen {
    char ids[8][16];
    unsigned dist[8];
    int n, stop_after;
};

static int on_neighbor(void *ud, const char *id, uint64_t fp, unsigned distance)
{
    struct hood_seen *h = ud;
    (void)fp;
    if (h->n < 8) {
        snprintf(h->ids[h->n], sizeof h->ids[0], "%s", id);
        h->dist[h->n] = distance;
    }
    h->n++;
    return h->stop_after && h->n >= h->stop_after;
}

/* Neighbours nearest first, with a limit and an early stop; deleted pages are nobody's
 * neighbour and nobody's original; a deleted id may come back. */
static void test_filter_neighbors_and_delete(void)
{
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, NULL, 3), 0);
    const uint64_t a = 0xfedcba9876543210ull;
    /* three pages more than k apart from each other, then lookups between them */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "x0", a, 0, NULL), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "x4", a ^ 0xf, 0, NULL), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "y", ~a, 0, NULL), SIMCRAWL_NEW);
    /* from a ^ 0x3: x0 at 2, x4 at 2 (0xf ^ 0x3 = 0xc); ties: the page added first */
    struct hood_seen h = {0};
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x3, 3, 0, on_neighbor, &h), 2);
    ASSERT_EQ(h.n, 2);
    CU_ASSERT_STRING_EQUAL(h.ids[0], "x0");
    CU_ASSERT_STRING_EQUAL(h.ids[1], "x4");
    ASSERT_EQ(h.dist[0], 2);
    /* from a ^ 0x7: x4 at 1, x0 at 3: nearest first */
    memset(&h, 0, sizeof h);
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x7, 3, 0, on_neighbor, &h), 2);
    CU_ASSERT_STRING_EQUAL(h.ids[0], "x4");
    ASSERT_EQ(h.dist[0], 1);
    CU_ASSERT_STRING_EQUAL(h.ids[1], "x0");
    ASSERT_EQ(h.dist[1], 3);
    memset(&h, 0, sizeof h);
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x7, 3, 1, on_neighbor, &h), 1);
    memset(&h, 0, sizeof h);
    h.stop_after = 1;
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x7, 3, 0, on_neighbor, &h), 1);
    memset(&h, 0, sizeof h);
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x7, 0, 0, on_neighbor, &h), 0);
    ASSERT_EQ(simcrawl_filter_neighbors(f, a, 4, 0, on_neighbor, &h), SIMCRAWL_EINVAL);

    /* delete x4: gone from the neighbours; a page near it only is new now */
    ASSERT_EQ(simcrawl_filter_delete(f, "x4"), 1);
    ASSERT_EQ(simcrawl_filter_delete(f, "x4"), 0);
    ASSERT_EQ(simcrawl_filter_delete(f, "nobody"), 0);
    ASSERT_EQ(simcrawl_filter_count(f), 2);
    memset(&h, 0, sizeof h);
    ASSERT_EQ(simcrawl_filter_neighbors(f, a ^ 0x7, 3, 0, on_neighbor, &h), 1);
    CU_ASSERT_STRING_EQUAL(h.ids[0], "x0");
    struct simcrawl_match *m = simcrawl_match_new();
    /* x4's own fingerprint: 4 from x0, and x4 is gone: new */
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "z", a ^ 0xf, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    /* the deleted id may be added again, as a new page */
    ASSERT_EQ(simcrawl_filter_delete(f, "z"), 1);
    ASSERT_EQ(simcrawl_filter_check_fingerprint(f, "x4", a ^ 0xf, 0, m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    ASSERT_EQ(simcrawl_filter_count(f), 3);
    ASSERT_EQ(simcrawl_filter_delete(f, ""), SIMCRAWL_EINVAL);

    /* an exact duplicate of a deleted page is not one: its payload is forgotten too */
    ASSERT_EQ(check_file(f, "p1", "tests/data/fingerprint/page1.html", m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_filter_delete(f, "p1"), 1);
    ASSERT_EQ(check_file(f, "p2", "tests/data/fingerprint/page1.html", m), SIMCRAWL_NEW);
    ASSERT_EQ(simcrawl_match_added(m), 1);
    ASSERT_EQ(check_file(f, "p3", "tests/data/fingerprint/page1.html", m),
                    SIMCRAWL_EXACT_DUPLICATE);
    CU_ASSERT_STRING_EQUAL(simcrawl_match_duplicate_of(m), "p2");
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
}

/* Deletes are durable: replayed from the journal after a process ended without closing,
 * and dropped from the index file at compaction, where the payload hashes of the pages
 * after them are renumbered (an exact duplicate of a later page is still found). */
static void test_filter_delete_durable(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("del.idx"));
    rm_index(path);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    size_t news = check_generated(f, 0, 30);
    CU_ASSERT(news > 10);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) { /* deletes two pages and one added after, then ends without close */
        struct simcrawl_filter *cf;
        if (open_path(&cf, path, 3, NULL) != 0)
            _exit(3);
        if (simcrawl_filter_check_fingerprint(cf, "late", 0x5555aaaa5555aaaaull, 0, NULL) != 0)
            _exit(4);
        if (simcrawl_filter_delete(cf, "http://h0.example/p0") != 1 ||
            simcrawl_filter_delete(cf, "late") != 1)
            _exit(5);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT_FATAL(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct logbuf log = {{0}, 0};
    ASSERT_EQ_FATAL(open_path(&f, path, 3, &log), 0);
    ASSERT_EQ(log.n, 0);
    ASSERT_EQ(simcrawl_filter_count(f), news - 1);
    ASSERT_EQ(simcrawl_filter_delete(f, "late"), 0);
    ASSERT_EQ(simcrawl_filter_delete(f, "http://h0.example/p0"), 0);
    ASSERT_EQ(simcrawl_filter_close(f), 0); /* compaction: the index drops it */
    char j[300];
    struct stat st;
    snprintf(j, sizeof j, "%s.journal", path);
    ASSERT_EQ(stat(j, &st), 0);
    ASSERT_EQ(st.st_size, 16);
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    ASSERT_EQ(simcrawl_filter_count(f), news - 1);
    /* the other pages keep their decision (idempotent by id); p0 is new again */
    ASSERT_EQ(check_generated(f, 0, 30), news);
    ASSERT_EQ(simcrawl_filter_count(f), news);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);
}

/* A version 1 journal (libsimcrawl 0.2: add records only) and a version 2 one (0.4: no
 * learn records) are replayed and upgraded to version 4 in place, so that 0.2 and 0.4
 * refuse it once it may hold a delete or a learn record; 3 (a MinHash journal's number)
 * without the MinHash tag and 5 are refused. */
static void test_filter_journal_v1(void)
{
    for (unsigned char old = 1; old <= 5; old++) {
        char path[256], j[300];
        snprintf(path, sizeof path, "%s", tmp_path("v1.idx"));
        snprintf(j, sizeof j, "%s.journal", path);
        rm_index(path);
        int child = crashed_child(path, 0, 12);
        CU_ASSERT_FATAL(child > 3);
        size_t news = (size_t)child;
        int fd = open(j, O_RDWR);
        CU_ASSERT_FATAL(fd >= 0);
        unsigned char v[4] = {old, 0, 0, 0};
        ASSERT_EQ(pwrite(fd, v, 4, 8), 4);
        struct simcrawl_filter *f = NULL;
        if (old == 3 || old == 5) {
            ASSERT_EQ(open_path(&f, path, 3, NULL), SIMCRAWL_EVERSION);
            close(fd);
            rm_index(path);
            continue;
        }
        ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
        ASSERT_EQ(simcrawl_filter_count(f), news);
        ASSERT_EQ(pread(fd, v, 4, 8), 4);
        ASSERT_EQ(v[0], 4);
        close(fd);
        ASSERT_EQ(simcrawl_filter_close(f), 0);
        rm_index(path);
    }
}

/* Many deletes among many ids (the id table's deletion keeps every other id findable),
 * across a compaction: the live ids are known, the deleted ones come back new. */
static void test_filter_delete_many(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("many.idx"));
    rm_index(path);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
    struct simcrawl_match *m = simcrawl_match_new();
    enum { N = 3000 };
    char id[32];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint64_t fps[N];
    unsigned added = 0;
    for (unsigned i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fps[i] = x;
        snprintf(id, sizeof id, "doc-%u", i);
        added += simcrawl_filter_check_fingerprint(f, id, x, 0, m) == SIMCRAWL_NEW &&
                 simcrawl_match_added(m);
    }
    ASSERT_EQ(added, N);
    unsigned deleted = 0;
    for (unsigned i = 0; i < N; i += 1 + i % 3) {
        snprintf(id, sizeof id, "doc-%u", i);
        deleted += simcrawl_filter_delete(f, id) == 1;
    }
    ASSERT_EQ(simcrawl_filter_count(f), N - deleted);
    for (int round = 0; round < 2; round++) {
        unsigned known = 0, back = 0;
        for (unsigned i = 0; i < N; i++) {
            snprintf(id, sizeof id, "doc-%u", i);
            int d = simcrawl_filter_check_fingerprint(f, id, fps[i], SIMCRAWL_CHECK_NO_ADD, m);
            if (d == SIMCRAWL_NEW && !simcrawl_match_added(m) &&
                simcrawl_match_fingerprint(m) == fps[i]) {
                struct hood_seen h = {0};
                if (simcrawl_filter_neighbors(f, fps[i], 0, 0, on_neighbor, &h) == 1 &&
                    strcmp(h.ids[0], id) == 0)
                    known++;
                else
                    back++;
            }
        }
        ASSERT_EQ(known, N - deleted);
        ASSERT_EQ(back, deleted);
        /* again after a compaction: the index file holds the live ones only */
        ASSERT_EQ(simcrawl_filter_close(f), 0);
        ASSERT_EQ_FATAL(open_path(&f, path, 3, NULL), 0);
        ASSERT_EQ(simcrawl_filter_count(f), N - deleted);
    }
    simcrawl_match_free(m);
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    rm_index(path);
}

/* The probe's lines through the library (simcrawl_options_set_probe_lines): a filter with
 * them on and one with them off, given the same mixed workload (checks that add, dry runs,
 * merges of the adds into the main tables, then deletes, compactions that drop the deleted
 * pages, a close and a reopen), answer every call the same, and as brute force over the live pages says; the lines are built, and
 * built again after the index is rebuilt and reloaded. */
static int lines_open(struct simcrawl_filter **f, const char *path, const char *mode)
{
    struct simcrawl_options *o = simcrawl_options_new();
    if (!o)
        return SIMCRAWL_ENOMEM;
    int rc = simcrawl_options_set_probe_lines(o, mode);
    if (rc == 0)
        rc = simcrawl_options_set_probe_lines_min(o, 1);
    if (rc == 0)
        rc = simcrawl_options_set_journal_max(o, 96 * 1024); /* compactions as it runs */
    if (rc == 0)
        rc = simcrawl_options_set_fsync(o, "no");
    if (rc == 0)
        rc = simcrawl_filter_open_opts(f, path, o);
    simcrawl_options_free(o);
    return rc;
}

static void test_filter_probe_lines_same_answers(void)
{
    char path_on[256], path_off[256];
    snprintf(path_on, sizeof path_on, "%s", tmp_path("lines_on.idx"));
    snprintf(path_off, sizeof path_off, "%s", tmp_path("lines_off.idx"));
    rm_index(path_on);
    rm_index(path_off);
    struct simcrawl_filter *fon = NULL, *foff = NULL;
    ASSERT_EQ_FATAL(lines_open(&fon, path_on, "on"), 0);
    ASSERT_EQ_FATAL(lines_open(&foff, path_off, "off"), 0);
    const char *state = NULL;
    ASSERT_EQ(simcrawl_filter_probe_lines(foff, &state, NULL, NULL, NULL), 0);
    CU_ASSERT_STRING_EQUAL(state, "off");
    enum { N = 18000, DELETES_FROM = 9000, REOPEN_AT = 14500 };
    uint64_t *fp = calloc(N, sizeof *fp);
    unsigned char *live = calloc(N, 1);
    CU_ASSERT_FATAL(fp != NULL && live != NULL);
    struct simcrawl_match *mon = simcrawl_match_new(), *moff = simcrawl_match_new();
    uint64_t x = 0x2545f4914f6cdd1dull;
#define XS() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    unsigned bad = 0, same = 0, built_seen = 0, built_after_reopen = 0, deletes = 0;
    unsigned built_after_rebuild = 0;
    unsigned long long max_bytes = 0;
    char id[32];
    for (unsigned i = 0; i < N; i++) {
        if (i == REOPEN_AT) { /* saved and loaded: the lines come back on their own */
            ASSERT_EQ_FATAL(simcrawl_filter_close(fon), 0);
            ASSERT_EQ_FATAL(simcrawl_filter_close(foff), 0);
            ASSERT_EQ_FATAL(lines_open(&fon, path_on, "on"), 0);
            ASSERT_EQ_FATAL(lines_open(&foff, path_off, "off"), 0);
            CU_ASSERT(simcrawl_filter_probe_lines(fon, &state, NULL, NULL, NULL) == 0);
        }
        uint64_t r = XS();
        uint64_t q = i < 50 || r % 3 == 0 ? XS() : fp[XS() % i];
        if (i >= 50 && r % 3 != 0) /* near an earlier page: 0 to 5 bits off */
            for (unsigned b = (unsigned)(r >> 8) % 6; b > 0; b--)
                q ^= (uint64_t)1 << (XS() % 64);
        fp[i] = q;
        unsigned op = (unsigned)(r >> 20) % 10;
        if (op == 9 && i > DELETES_FROM) { /* forget an earlier page (merges before) */
            unsigned j = (unsigned)(XS() % i);
            snprintf(id, sizeof id, "p%u", j);
            int a = simcrawl_filter_delete(fon, id), b = simcrawl_filter_delete(foff, id);
            ASSERT_EQ(a, b);
            ASSERT_EQ(a, live[j] ? 1 : 0);
            live[j] = 0;
            deletes += a == 1;
            continue;
        }
        unsigned flags = op >= 7 ? SIMCRAWL_CHECK_NO_ADD : 0;
        snprintf(id, sizeof id, flags ? "q%u" : "p%u", i);
        int a = simcrawl_filter_check_fingerprint(fon, id, q, flags, mon);
        int b = simcrawl_filter_check_fingerprint(foff, id, q, flags, moff);
        /* brute force: the nearest live page */
        unsigned best = 65;
        for (unsigned j = 0; j < i; j++)
            if (live[j]) {
                unsigned d = (unsigned)__builtin_popcountll(fp[j] ^ q);
                best = d < best ? d : best;
            }
        int want = best <= 3 ? SIMCRAWL_NEAR_DUPLICATE : SIMCRAWL_NEW;
        if (a != b || a != want)
            bad++;
        else if (a == SIMCRAWL_NEAR_DUPLICATE) {
            if (simcrawl_match_distance(mon) != best || simcrawl_match_distance(moff) != best ||
                strcmp(simcrawl_match_duplicate_of(mon), simcrawl_match_duplicate_of(moff)) != 0)
                bad++;
            else
                same++;
        }
        if (a == SIMCRAWL_NEW && !flags)
            live[i] = 1;
        uint64_t bytes = 0;
        if (simcrawl_filter_probe_lines(fon, &state, &bytes, NULL, NULL) == 1) {
            built_seen++;
            built_after_reopen += i > REOPEN_AT;
            /* compactions since DELETES_FROM made new indexes of the live pages */
            built_after_rebuild += i > DELETES_FROM + 1500 && i < REOPEN_AT;
            CU_ASSERT(bytes > 0);
            CU_ASSERT_STRING_EQUAL(state, "built");
            max_bytes = bytes > max_bytes ? bytes : max_bytes;
        }
        CU_ASSERT(simcrawl_filter_probe_lines(foff, NULL, NULL, NULL, NULL) == 0);
    }
#undef XS
    ASSERT_EQ(bad, 0);
    CU_ASSERT(same > 500); /* near-duplicates found, not only new pages */
    CU_ASSERT(deletes > 200);
    CU_ASSERT(built_seen > N / 4); /* the lines served most of the run */
    CU_ASSERT(built_after_reopen > 0);
    CU_ASSERT(built_after_rebuild > 0);
    CU_ASSERT(max_bytes > 0);
    simcrawl_match_free(mon);
    simcrawl_match_free(moff);
    ASSERT_EQ(simcrawl_filter_close(fon), 0);
    ASSERT_EQ(simcrawl_filter_close(foff), 0);
    rm_index(path_on);
    rm_index(path_off);
    free(fp);
    free(live);
}

/* "auto" builds the lines only under its cap; "on" is refused for the minhash method. */
static void test_filter_probe_lines_auto(void)
{
    unsigned long long need = 0;
    for (int pass = 0; pass < 3; pass++) {
        struct simcrawl_options *o = simcrawl_options_new();
        ASSERT_EQ_FATAL(simcrawl_options_set_probe_lines(o, "auto"), 0);
        ASSERT_EQ(simcrawl_options_set_probe_lines_min(o, 1), 0);
        /* pass 0: the default cap (a quarter of memory); 1: one byte under the need; 2: it */
        if (pass)
            ASSERT_EQ(simcrawl_options_set_probe_lines_max_bytes(o, need - (pass == 1)), 0);
        struct simcrawl_filter *f = NULL;
        ASSERT_EQ_FATAL(simcrawl_filter_open_opts(&f, NULL, o), 0);
        simcrawl_options_free(o);
        struct simcrawl_match *m = simcrawl_match_new();
        uint64_t x = 99;
        char id[32];
        for (unsigned i = 0; i < 6000; i++) { /* past the first merge: a main of 4097 */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            snprintf(id, sizeof id, "a%u", i);
            CU_ASSERT(simcrawl_filter_check_fingerprint(f, id, x, 0, m) >= 0);
        }
        for (unsigned i = 0; i < 3000; i++) { /* dry runs: the queries that build them */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            CU_ASSERT(simcrawl_filter_check_fingerprint(f, "dry", x, SIMCRAWL_CHECK_NO_ADD, m) >=
                      0);
        }
        const char *state = NULL;
        uint64_t bytes = 0, nb = 0, cap = 0;
        int built = simcrawl_filter_probe_lines(f, &state, &bytes, &nb, &cap);
        CU_ASSERT(nb > 0);
        CU_ASSERT(cap > 0);
        if (pass == 0) {
            need = nb;
            ASSERT_EQ(built, 1);
            CU_ASSERT(cap >= nb);
        } else if (pass == 1) {
            ASSERT_EQ(built, 0);
            CU_ASSERT_STRING_EQUAL(state, "over-cap");
            ASSERT_EQ(bytes, 0);
            ASSERT_EQ(cap, need - 1);
        } else {
            ASSERT_EQ(built, 1);
            CU_ASSERT_STRING_EQUAL(state, "built");
            CU_ASSERT(bytes >= need);
        }
        simcrawl_match_free(m);
        ASSERT_EQ(simcrawl_filter_close(f), 0);
    }
    struct simcrawl_options *o = simcrawl_options_new();
    ASSERT_EQ(simcrawl_options_set_probe_lines(o, "sometimes"), SIMCRAWL_EINVAL);
    ASSERT_EQ(simcrawl_options_set_probe_lines(o, "on"), 0);
    ASSERT_EQ(simcrawl_options_set_method(o, "minhash"), 0);
    struct simcrawl_filter *f = NULL;
    ASSERT_EQ(simcrawl_filter_open_opts(&f, NULL, o), SIMCRAWL_EINVAL);
    CU_ASSERT_PTR_NULL(f);
    ASSERT_EQ(simcrawl_options_set_probe_lines(o, "auto"), 0); /* auto: off for minhash */
    ASSERT_EQ_FATAL(simcrawl_filter_open_opts(&f, NULL, o), 0);
    const char *state = NULL;
    ASSERT_EQ(simcrawl_filter_probe_lines(f, &state, NULL, NULL, NULL), 0);
    CU_ASSERT_STRING_EQUAL(state, "off");
    ASSERT_EQ(simcrawl_filter_close(f), 0);
    simcrawl_options_free(o);
}

static int suite_clean(void)
{
    if (tmpdir[0])
        rmdir(tmpdir);
    return 0;
}

extern void test_filter_register(void);
void test_filter_register(void)
{
    CU_pSuite s = CU_add_suite("filter", NULL, suite_clean);
    CU_add_test(s, "test_filter_version_and_strings", test_filter_version_and_strings);
    CU_add_test(s, "test_filter_fingerprint_stateless", test_filter_fingerprint_stateless);
    CU_add_test(s, "test_filter_decisions", test_filter_decisions);
    CU_add_test(s, "test_filter_text_and_links", test_filter_text_and_links);
    CU_add_test(s, "test_filter_extract_fixtures", test_filter_extract_fixtures);
    CU_add_test(s, "test_filter_reopen", test_filter_reopen);
    CU_add_test(s, "test_filter_templates_kept", test_filter_templates_kept);
    CU_add_test(s, "test_filter_torn_journal", test_filter_torn_journal);
    CU_add_test(s, "test_filter_lock_k_version", test_filter_lock_k_version);
    CU_add_test(s, "test_filter_threads_stress", test_filter_threads_stress);
    CU_add_test(s, "test_filter_check_fingerprint", test_filter_check_fingerprint);
    CU_add_test(s, "test_filter_neighbors_and_delete", test_filter_neighbors_and_delete);
    CU_add_test(s, "test_filter_delete_durable", test_filter_delete_durable);
    CU_add_test(s, "test_filter_journal_v1", test_filter_journal_v1);
    CU_add_test(s, "test_filter_learn_journal", test_filter_learn_journal);
    CU_add_test(s, "test_filter_delete_many", test_filter_delete_many);
    CU_add_test(s, "test_filter_probe_lines_same_answers", test_filter_probe_lines_same_answers);
    CU_add_test(s, "test_filter_probe_lines_auto", test_filter_probe_lines_auto);
}

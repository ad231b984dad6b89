/*
 * Suite "wget2_plugin": the wget2 plugin's logic (plugins/wget2/plugin.c) without wget2:
 * its options and their errors, the help text, which URLs and content types it checks,
 * what it does with a duplicate's file (removed, or kept with keep), its JSON Lines log,
 * and eight threads handing it copies of one page at once (exactly one passes, the log
 * has a whole line for each). The plugin inside the real wget2 is tests/cli/wget2_plugin.sh.
 */
#include "plugins/wget2/plugin.h"

#include <CUnit/CUnit.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/testutil.h"

/* A page with enough main text to fingerprint. */
static char *make_page(void)
{
    static const char *const words[] = {"harbour", "ferry",   "tide",   "lantern", "market",
                                        "bridge",  "orchard", "meadow", "glacier", "valley",
                                        "quarry",  "mill",    "chapel", "granary", "pier"};
    size_t cap = 8192, len = 0;
    char *p = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    len += (size_t)snprintf(p + len, cap - len,
                            "<!DOCTYPE html>\n<html><head><title>t</title></head><body><main>"
                            "<h1>Notes</h1><p>");
    for (int i = 0; i < 300; i++)
        len += (size_t)snprintf(p + len, cap - len, "%s%d ", words[(i * 7) % 15], i % 13);
    snprintf(p + len, cap - len, "</p></main></body></html>\n");
    return p;
}

/* Sends the plugin's diagnostics (refusals, the summary line) to /dev/null while on. */
static void quiet_stderr(int on)
{
    static int saved = -1;
    fflush(stderr);
    if (on && saved < 0) {
        int null = open("/dev/null", O_WRONLY);
        CU_ASSERT_FATAL(null >= 0);
        saved = dup(2);
        dup2(null, 2);
        close(null);
    } else if (!on && saved >= 0) {
        dup2(saved, 2);
        close(saved);
        saved = -1;
    }
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    if (buf)
        (void)fread(buf, 1, 65535, f);
    fclose(f);
    return buf;
}

static void test_wget2_plugin_options(void)
{
    struct sc_wget2 *p = sc_wget2_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    FILE *out = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    quiet_stderr(1); /* the refusals print their reason */
    ASSERT_EQ(sc_wget2_option(p, "k", "9", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "k", "-1", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "k", "3x", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "k", NULL, out), -1);
    ASSERT_EQ(sc_wget2_option(p, "keep", "maybe", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "index", NULL, out), -1);
    ASSERT_EQ(sc_wget2_option(p, "index", "", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "log", "/nonexistent-dir/x.jsonl", out), -1);
    ASSERT_EQ(sc_wget2_option(p, "nosuch", "1", out), -1);
    quiet_stderr(0);
    ASSERT_EQ(sc_wget2_option(p, "k", "0", out), 0);
    ASSERT_EQ(sc_wget2_option(p, "k", "7", out), 0);
    ASSERT_EQ(sc_wget2_option(p, "keep", NULL, out), 0);
    ASSERT_EQ(sc_wget2_option(p, "keep", "no", out), 0);
    ASSERT_EQ(sc_wget2_option(p, "help", NULL, out), 0);
    char help[4096] = "";
    rewind(out);
    CU_ASSERT(fread(help, 1, sizeof help - 1, out) > 0);
    for (const char *o = "index=FILE\0k=N\0log=FILE\0keep\0help\0"; *o; o += strlen(o) + 1)
        CU_ASSERT_PTR_NOT_NULL(strstr(help, o));
    fclose(out);
    ASSERT_EQ(sc_wget2_finish(p), 0); /* no filter was opened */
}

static void test_wget2_plugin_what_is_checked(void)
{
    CU_ASSERT(sc_wget2_is_robots("http://127.0.0.1:8080/robots.txt"));
    CU_ASSERT(sc_wget2_is_robots("https://example.org/robots.txt"));
    CU_ASSERT(!sc_wget2_is_robots("https://example.org/docs/robots.txt"));
    CU_ASSERT(!sc_wget2_is_robots("https://example.org/robots.txt?x=1"));
    CU_ASSERT(!sc_wget2_is_robots("https://example.org/"));
    CU_ASSERT(sc_wget2_is_html_type("text/html"));
    CU_ASSERT(sc_wget2_is_html_type("TEXT/HTML; charset=iso-8859-1"));
    CU_ASSERT(sc_wget2_is_html_type("application/xhtml+xml"));
    CU_ASSERT(!sc_wget2_is_html_type("text/htmlx"));
    CU_ASSERT(!sc_wget2_is_html_type("text/css"));
    CU_ASSERT(!sc_wget2_is_html_type("application/octet-stream"));
}

/* Two copies of one page under two URLs, each saved as a file: the second is dropped
 * (returns 0) and its file removed, or kept with keep; a binary file and robots.txt pass
 * (return 1) without a check; the log has one line per page checked. */
static void run_duplicate(int keep)
{
    char dir[] = "/tmp/test_wget2_pluginXXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char a[64], b[64], log[64];
    snprintf(a, sizeof a, "%s/a.html", dir);
    snprintf(b, sizeof b, "%s/b.html", dir);
    snprintf(log, sizeof log, "%s/log.jsonl", dir);
    char *page = make_page();
    for (const char *f = a; f; f = f == a ? b : NULL) {
        FILE *o = fopen(f, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        fputs(page, o);
        fclose(o);
    }
    struct sc_wget2 *p = sc_wget2_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ASSERT_EQ(sc_wget2_option(p, "log", log, stdout), 0);
    if (keep)
        ASSERT_EQ(sc_wget2_option(p, "keep", NULL, stdout), 0);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0};
    ASSERT_EQ(sc_wget2_page(p, "http://h.test/", a, page, strlen(page), NULL), 1);
    ASSERT_EQ(sc_wget2_page(p, "http://h.test/logo.png", NULL, png, sizeof png, NULL), 1);
    ASSERT_EQ(sc_wget2_page(p, "http://h.test/x.css", NULL, NULL, 10, "text/css"), 1);
    ASSERT_EQ(sc_wget2_page(p, "http://h.test/robots.txt", NULL, page, strlen(page), NULL),
                    1);
    ASSERT_EQ(
        sc_wget2_page(p, "http://h.test/copy", b, page, strlen(page), "text/html; charset=utf-8"),
        0);
    ASSERT_EQ(access(a, F_OK), 0);
    ASSERT_EQ(access(b, F_OK) == 0, keep);
    quiet_stderr(1); /* the summary line */
    ASSERT_EQ(sc_wget2_finish(p), 0);
    quiet_stderr(0);
    char *text = read_all(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "{\"url\":\"http://h.test/\",\"decision\":\"new\","));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "{\"url\":\"http://h.test/logo.png\",\"decision\":\"not-html\",\"size\":10}\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "{\"url\":\"http://h.test/x.css\",\"decision\":\"not-html\",\"content_type\":\"text/"
              "css\",\"size\":10}\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "robots.txt"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "{\"url\":\"http://h.test/copy\",\"decision\":\"exact-duplicate\","
                     "\"content_type\":\"text/html; charset=utf-8\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"duplicate_of\":\"http://h.test/\",\"distance\":0,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, keep ? "\"removed\":false}\n" : "\"removed\":true}\n"));
    free(text);
    free(page);
    unlink(a);
    unlink(b);
    unlink(log);
    rmdir(dir);
}

static void test_wget2_plugin_duplicate_removed(void)
{
    run_duplicate(0);
}

static void test_wget2_plugin_duplicate_kept(void)
{
    run_duplicate(1);
}

struct racer {
    struct sc_wget2 *p;
    const char *page;
    int id;
    int passed;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    char url[64];
    snprintf(url, sizeof url, "http://h%d.test/copy", r->id); /* one host each: no
                                                               * site template learned */
    r->passed = sc_wget2_page(r->p, url, NULL, r->page, strlen(r->page), NULL);
    return NULL;
}

/* Eight threads, eight copies of one page at once: one passes, seven are dropped, and
 * the log has eight whole lines. */
static void test_wget2_plugin_threads(void)
{
    char log[] = "/tmp/test_wget2_plugin_logXXXXXX";
    int fd = mkstemp(log);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    struct sc_wget2 *p = sc_wget2_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ASSERT_EQ(sc_wget2_option(p, "log", log, stdout), 0);
    enum { N = 8 };
    struct racer r[N];
    pthread_t t[N];
    char *pages[N];
    for (int i = 0; i < N; i++) {
        pages[i] = make_page();
        r[i] = (struct racer){.p = p, .page = pages[i], .id = i};
    }
    for (int i = 0; i < N; i++)
        ASSERT_EQ_FATAL(pthread_create(&t[i], NULL, race, &r[i]), 0);
    int passed = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        passed += r[i].passed;
        free(pages[i]);
    }
    ASSERT_EQ(passed, 1);
    quiet_stderr(1);
    ASSERT_EQ(sc_wget2_finish(p), 0);
    quiet_stderr(0);
    char *text = read_all(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int lines = 0, dups = 0;
    for (char *l = text; *l; l = strchr(l, '\n') + 1) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(strchr(l, '\n'));
        ASSERT_EQ(strncmp(l, "{\"url\":\"http://h", 16), 0);
        lines++;
        dups += strstr(l, "-duplicate\"") && strstr(l, "-duplicate\"") < strchr(l, '\n');
    }
    ASSERT_EQ(lines, N);
    ASSERT_EQ(dups, N - 1);
    free(text);
    unlink(log);
}

extern void test_wget2_plugin_register(void);
void test_wget2_plugin_register(void)
{
    CU_pSuite s = CU_add_suite("wget2_plugin", NULL, NULL);
    CU_add_test(s, "test_wget2_plugin_options", test_wget2_plugin_options);
    CU_add_test(s, "test_wget2_plugin_what_is_checked", test_wget2_plugin_what_is_checked);
    CU_add_test(s, "test_wget2_plugin_duplicate_removed", test_wget2_plugin_duplicate_removed);
    CU_add_test(s, "test_wget2_plugin_duplicate_kept", test_wget2_plugin_duplicate_kept);
    CU_add_test(s, "test_wget2_plugin_threads", test_wget2_plugin_threads);
}

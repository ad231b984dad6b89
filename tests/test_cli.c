/*
 * The command line's shared pieces that the commands' own tests (tests/cli/, the shell checks) cannot
 * drive to their edges: the directory walker (cli/walk.c: links to directories, link
 * loops, every allocation failing in turn) and the cap on remembered payload digests
 * (cli/digests.c: said once, also from several threads, at a cap lowered for the test).
 * build/test_runner links cli/walk.o and cli/digests.o; cli_error, which the simcrawl
 * binary has in cli/main.c, is this file's: it keeps the diagnostics for the assertions.
 */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/digests.h"
#include "cli/walk.h"
#include "dedup/dedup.h"
#include "filter/decide.h"
#include "tests/failalloc.h"
#include "tests/testutil.h"

/* ---- the diagnostics (cli/main.c's cli_error in the binary) ---- */

#define DIAG_MAX 16
static char diags[DIAG_MAX][512];
static unsigned n_diags;
static pthread_mutex_t diag_lock = PTHREAD_MUTEX_INITIALIZER;

void cli_error(const char *cmd, const char *fmt, ...)
{
    char msg[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&diag_lock);
    if (n_diags < DIAG_MAX)
        snprintf(diags[n_diags], sizeof diags[0], "simcrawl %s: %s", cmd, msg);
    n_diags++;
    pthread_mutex_unlock(&diag_lock);
}

static void diags_clear(void)
{
    n_diags = 0;
}

/* ---- the walker ---- */

#define WALK_FILES_MAX 32

struct seen {
    char files[WALK_FILES_MAX][256]; /* fixed room: the callbacks allocate nothing */
    unsigned n_files;
    char skips[WALK_FILES_MAX][512];
    unsigned n_skips, n_failed;
};

static int on_file(void *userdata, const char *path, const char *name)
{
    struct seen *s = userdata;
    (void)name;
    if (s->n_files < WALK_FILES_MAX)
        snprintf(s->files[s->n_files], sizeof s->files[0], "%s", path);
    s->n_files++;
    return 0;
}

static void on_skip(void *userdata, const char *path, const char *what, int failed)
{
    struct seen *s = userdata;
    if (s->n_skips < WALK_FILES_MAX)
        snprintf(s->skips[s->n_skips], sizeof s->skips[0], "%s: %s", path, what);
    s->n_skips++;
    s->n_failed += (unsigned)failed;
}

static const struct cli_walk_ops ops = {on_file, on_skip};

static char tree[64];

static void put_file(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tree, rel);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("<p>x</p>\n", f);
    fclose(f);
}

static void put_dir(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tree, rel);
    ASSERT_EQ_FATAL(mkdir(p, 0755), 0);
}

static void put_link(const char *target, const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tree, rel);
    ASSERT_EQ_FATAL(symlink(target, p), 0);
}

/*
 * The walks start at tree/in: in/b.html, in/deep/d.html; in/linked -> ../out, a link to a
 * directory outside the walked one (followed, as find -L does: out/c.html is read);
 * in/self -> . and in/deep/up -> .. (loops: named once, not entered); in/zagain -> ../out
 * (a second way to a directory read already: noted, not a failure); in/dangling (skipped
 * silently); tree/a.html is outside every walk.
 */
static void make_tree(void)
{
    snprintf(tree, sizeof tree, "/tmp/simcrawl-walk-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tree));
    put_dir("in");
    put_dir("in/deep");
    put_dir("out");
    put_file("a.html");
    put_file("in/b.html");
    put_file("in/deep/d.html");
    put_file("out/c.html");
    put_link("../out", "in/linked");
    put_link("../out", "in/zagain");
    put_link(".", "in/self");
    put_link("..", "in/deep/up");
    put_link("nowhere", "in/dangling");
}

static void remove_tree(void)
{
    static const char *const rel[] = {
        "in/linked", "in/zagain", "in/self", "in/deep/up", "in/dangling", "in/deep/d.html",
        "in/b.html", "out/c.html", "a.html", NULL};
    static const char *const dirs[] = {"in/deep", "in", "out", "", NULL};
    char p[256];
    for (size_t i = 0; rel[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", tree, rel[i]);
        unlink(p);
    }
    for (size_t i = 0; dirs[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", tree, dirs[i]);
        rmdir(p);
    }
}

/* The walk of tree/in as make_tree() made it, whole: the names in byte order. */
static void check_full_walk(const struct seen *s, const char *in)
{
    static const char *const want[] = {"/b.html", "/deep/d.html", "/linked/c.html"};
    ASSERT_EQ(s->n_files, 3);
    for (unsigned i = 0; i < 3 && i < s->n_files; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s%s", in, want[i]);
        CU_ASSERT_STRING_EQUAL(s->files[i], p);
    }
    /* deep/up and self are loops (failed), zagain a second way to out (noted) */
    ASSERT_EQ(s->n_skips, 3);
    ASSERT_EQ(s->n_failed, 2);
    char p[256];
    snprintf(p, sizeof p, "%s/deep/up: directory loop (the same directory as %s), skipped", in,
             in);
    CU_ASSERT_STRING_EQUAL(s->skips[0], p);
    snprintf(p, sizeof p, "%s/self: directory loop (the same directory as %s), skipped", in, in);
    CU_ASSERT_STRING_EQUAL(s->skips[1], p);
    snprintf(p, sizeof p, "%s/zagain: the same directory as one already read, skipped", in);
    CU_ASSERT_STRING_EQUAL(s->skips[2], p);
}

static void test_cli_walk_links(void)
{
    make_tree();
    char in[128];
    snprintf(in, sizeof in, "%s/in", tree);
    struct seen s;
    memset(&s, 0, sizeof s);
    diags_clear();
    ASSERT_EQ(cli_walk("test", in, &ops, &s), 0);
    check_full_walk(&s, in);
    ASSERT_EQ(n_diags, 0);

    /* a walk started at a link to a directory walks its target */
    char via[160];
    snprintf(via, sizeof via, "%s/in/linked", tree);
    memset(&s, 0, sizeof s);
    ASSERT_EQ(cli_walk("test", via, &ops, &s), 0);
    ASSERT_EQ(s.n_files, 1);
    char p[256];
    snprintf(p, sizeof p, "%s/c.html", via);
    CU_ASSERT_STRING_EQUAL(s.files[0], p);

    /* a directory that is not there is named, and the walk ends */
    snprintf(via, sizeof via, "%s/missing", tree);
    memset(&s, 0, sizeof s);
    ASSERT_EQ(cli_walk("test", via, &ops, &s), 0);
    ASSERT_EQ(s.n_files, 0);
    ASSERT_EQ(s.n_failed, 1);
    snprintf(p, sizeof p, "%s: cannot read directory: No such file or directory", via);
    CU_ASSERT_STRING_EQUAL(s.skips[0], p);
    remove_tree();
}

/* Every allocation of a walk fails in turn: the walk then stops with -1 and says "out of
 * memory" (it never drops a name and goes on), and leaks nothing (make asan). */
static void test_cli_walk_nomem(void)
{
    make_tree();
    char in[128];
    snprintf(in, sizeof in, "%s/in", tree);
    unsigned long n, failures = 0;
    for (n = 1; n < 10000; n++) {
        struct seen s;
        memset(&s, 0, sizeof s);
        diags_clear();
        failalloc_arm(n);
        int rc = cli_walk("test", in, &ops, &s);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (!fired) {
            ASSERT_EQ(rc, 0);
            check_full_walk(&s, in);
            break;
        }
        failures++;
        ASSERT_EQ(rc, -1);
        ASSERT_EQ(n_diags, 1);
        CU_ASSERT(strstr(diags[0], "simcrawl test: ") == diags[0] &&
                  strstr(diags[0], "out of memory") != NULL);
        CU_ASSERT(s.n_files <= 3);
    }
    CU_ASSERT(failures >= 4); /* names, their array, paths, the directory set at least */
    CU_ASSERT(n < 10000);
    remove_tree();
}

/* ---- the digest cap ---- */

static void test_cli_digests_cap(void)
{
    struct dedup_design des;
    struct dedup_index *idx = NULL;
    ASSERT_EQ_FATAL(dedup_design_choose(3, 1000, 0, &des), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&des, &idx), DEDUP_OK);
    struct filter_decide_opts o = {.index = idx, .k = 3, .max_payloads = 2};
    struct filter_decide *d = NULL;
    ASSERT_EQ(filter_decide_new(&o, &d), DEDUP_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct cli_digests_cap cap;
    cli_digests_cap_init(&cap, "dedup", "exact duplicates of later pages are lost", 2, 0);
    diags_clear();
    static const char *const keys[] = {"K1", "K2", "K3", "K4", "K2"};
    static const enum filter_decide_stored want[] = {FILTER_STORED_YES, FILTER_STORED_YES,
                                                     FILTER_STORED_FULL, FILTER_STORED_FULL,
                                                     FILTER_STORED_NONE};
    for (size_t i = 0; i < 5; i++) {
        enum filter_decide_stored st =
            filter_decide_remember(d, keys[i], 2, UINT32_MAX, "m", 2);
        if (i < 4)
            ASSERT_EQ(st, want[i]);
        ASSERT_EQ(cli_digests_stored(&cap, st), 0);
    }
    ASSERT_EQ(filter_decide_payload_count(d), 2);
    /* said once, with the cap and what is lost */
    ASSERT_EQ(n_diags, 1);
    CU_ASSERT_STRING_EQUAL(diags[0], "simcrawl dedup: more than 2 payload digests remembered: "
                                     "exact duplicates of later pages are lost");
    /* out of memory is the caller's to say */
    ASSERT_EQ(cli_digests_stored(&cap, FILTER_STORED_ENOMEM), -1);
    ASSERT_EQ(n_diags, 1);
    /* --quiet: not said */
    cli_digests_cap_init(&cap, "dedup", "lost", 2, 1);
    ASSERT_EQ(cli_digests_stored(&cap, FILTER_STORED_FULL), 0);
    ASSERT_EQ(n_diags, 1);
    filter_decide_free(d);
    dedup_index_free(idx);
}

struct racer {
    struct cli_digests_cap *cap;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int i = 0; i < 1000; i++)
        (void)cli_digests_stored(r->cap, FILTER_STORED_FULL);
    return NULL;
}

/* crawl decides pages on several threads: the cap is still said once */
static void test_cli_digests_cap_threads(void)
{
    struct cli_digests_cap cap;
    cli_digests_cap_init(&cap, "crawl", "lost", CLI_DIGESTS_MAX, 0);
    diags_clear();
    pthread_t t[4];
    struct racer r = {&cap};
    for (int i = 0; i < 4; i++)
        ASSERT_EQ_FATAL(pthread_create(&t[i], NULL, race, &r), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ASSERT_EQ(n_diags, 1);
    char want[128];
    snprintf(want, sizeof want, "simcrawl crawl: more than %u payload digests remembered: lost",
             CLI_DIGESTS_MAX);
    CU_ASSERT_STRING_EQUAL(diags[0], want);
}

extern void test_cli_register(void);
void test_cli_register(void)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    CU_add_test(s, "test_cli_walk_links", test_cli_walk_links);
    CU_add_test(s, "test_cli_walk_nomem", test_cli_walk_nomem);
    CU_add_test(s, "test_cli_digests_cap", test_cli_digests_cap);
    CU_add_test(s, "test_cli_digests_cap_threads", test_cli_digests_cap_threads);
}

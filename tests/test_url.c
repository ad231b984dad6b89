/*
 * Suite "url": URL canonicalisation and resolution (crawler/url.c), the origin/host split,
 * the SipHash-2-4 URL hash against the reference test vectors, and the seen set.
 * Canonicalisation cases are a table: input, base (or NULL), expected (NULL = rejected).
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler/crawl.h"
#include "crawler/crawler_int.h"
#include "tests/testutil.h"

extern void test_url_register(void);

struct canon_case {
    const char *url, *base, *want;
};

static const struct canon_case canon_cases[] = {
    /* case, default port, fragment, empty path */
    {"HTTP://ExAmple.COM:80/a/B#frag", NULL, "http://example.com/a/B"},
    {"https://example.com:443", NULL, "https://example.com/"},
    {"https://example.com:8443/", NULL, "https://example.com:8443/"},
    {"http://example.com:0080/x", NULL, "http://example.com/x"},
    {"http://example.com", NULL, "http://example.com/"},
    {"http://example.com?", NULL, "http://example.com/"},
    {"http://example.com/?a=1&b=2#x", NULL, "http://example.com/?a=1&b=2"},
    /* dot segments */
    {"http://a.com/a/./b/../c", NULL, "http://a.com/a/c"},
    {"http://a.com/../../x", NULL, "http://a.com/x"},
    {"http://a.com/a/%2e%2E/b", NULL, "http://a.com/b"},
    /* percent-encoding */
    {"http://a.com/%7euser/%41%62", NULL, "http://a.com/~user/Ab"},
    {"http://a.com/a%2fb?q=%3a%3A", NULL, "http://a.com/a%2Fb?q=%3A%3A"},
    {"http://a.com/a b", NULL, "http://a.com/a%20b"},
    {"http://a.com/100%", NULL, "http://a.com/100%25"},
    {"http://a.com/%zz", NULL, "http://a.com/%25zz"},
    {"http://a.com/caf\xc3\xa9", NULL, "http://a.com/caf%C3%A9"},
    {"http://a.com/x?a=<b>", NULL, "http://a.com/x?a=%3Cb%3E"},
    /* white space */
    {"  http://a.com/x\n", NULL, "http://a.com/x"},
    {"http://a.com/x\ty\r\nz", NULL, "http://a.com/xyz"},
    /* user info dropped */
    {"http://user:pw@a.com/x", NULL, "http://a.com/x"},
    /* IP hosts */
    {"http://127.0.0.1:8080/x", NULL, "http://127.0.0.1:8080/x"},
    {"http://[::1]:8080/", NULL, "http://[::1]:8080/"},
    /* IDN: in the C locale hosts stay UTF-8 (no punycode); ASCII letters are lowered */
    {"http://B\xc3\xbc" "cher.DE/", NULL, "http://b\xc3\xbc" "cher.de/"},
    {"", "http://a.com/x?y#z", "http://a.com/x?y"},
    /* resolution, RFC 3986 5.4.1 examples */
    {"g", "http://a/b/c/d;p?q", "http://a/b/c/g"},
    {"./g", "http://a/b/c/d;p?q", "http://a/b/c/g"},
    {"g/", "http://a/b/c/d;p?q", "http://a/b/c/g/"},
    {"/g", "http://a/b/c/d;p?q", "http://a/g"},
    {"//g", "http://a/b/c/d;p?q", "http://g/"},
    {"?y", "http://a/b/c/d;p?q", "http://a/b/c/d;p?y"},
    {"g?y", "http://a/b/c/d;p?q", "http://a/b/c/g?y"},
    {"#s", "http://a/b/c/d;p?q", "http://a/b/c/d;p?q"},
    {"../g", "http://a/b/c/d;p?q", "http://a/b/g"},
    {"../../g", "http://a/b/c/d;p?q", "http://a/g"},
    {"../../../g", "http://a/b/c/d;p?q", "http://a/g"},
    {"HTTPS://Other.example/Z", "http://a/b/", "https://other.example/Z"},
    {"a b.html", "http://a.com/dir/", "http://a.com/dir/a%20b.html"},
    /* rejected */
    {"ftp://a.com/x", NULL, NULL},
    {"mailto:someone@example.com", NULL, NULL},
    {"javascript:alert(1)", "http://a.com/", NULL},
    {"", NULL, NULL},
    {"#only", NULL, NULL},
    {"relative/only", NULL, NULL},
    {"http://", NULL, NULL},
    {"http://a.com:99999/", NULL, NULL},
    {"file:///etc/passwd", NULL, NULL},
};

static void test_url_canonicalise_table(void)
{
    for (size_t i = 0; i < sizeof canon_cases / sizeof canon_cases[0]; i++) {
        const struct canon_case *c = &canon_cases[i];
        char *out = NULL;
        enum crawl_code rc = crawl_url_canonicalise(c->url, c->base, &out);
        if (c->want) {
            if (rc != CRAWL_OK || !out || strcmp(out, c->want) != 0)
                fprintf(stderr, "\ncase %zu: %s (base %s): got %s (%s), want %s\n", i, c->url,
                        c->base ? c->base : "-", out ? out : "NULL", crawl_strerror(rc),
                        c->want);
            ASSERT_EQ(rc, CRAWL_OK);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            CU_ASSERT_STRING_EQUAL(out, c->want);
        } else {
            if (rc == CRAWL_OK)
                fprintf(stderr, "\ncase %zu: %s accepted as %s\n", i, c->url, out);
            ASSERT_EQ(rc, CRAWL_EURL);
            CU_ASSERT_PTR_NULL(out);
        }
        free(out);
    }
}

static void test_url_canonicalise_idempotent(void)
{
    for (size_t i = 0; i < sizeof canon_cases / sizeof canon_cases[0]; i++) {
        if (!canon_cases[i].want)
            continue;
        char *again = NULL;
        ASSERT_EQ_FATAL(crawl_url_canonicalise(canon_cases[i].want, NULL, &again),
                              CRAWL_OK);
        CU_ASSERT_STRING_EQUAL(again, canon_cases[i].want);
        free(again);
    }
}

static void test_url_canonicalise_too_long(void)
{
    size_t n = CRAWL_URL_MAX + 100;
    char *u = malloc(n + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    memcpy(u, "http://a.com/", 13);
    memset(u + 13, 'x', n - 13);
    u[n] = '\0';
    char *out = NULL;
    ASSERT_EQ(crawl_url_canonicalise(u, NULL, &out), CRAWL_EURL);
    CU_ASSERT_PTR_NULL(out);
    /* escapes that triple the length past the cap are refused too */
    memset(u + 13, ' ', CRAWL_URL_MAX - 100);
    u[13 + CRAWL_URL_MAX - 100] = 'x';
    u[14 + CRAWL_URL_MAX - 100] = '\0';
    ASSERT_EQ(crawl_url_canonicalise(u, NULL, &out), CRAWL_EURL);
    free(u);
}

static void test_url_split_parts(void)
{
    struct crawl_url_parts p;
    const char *u = "http://a.example.com:8080/x/y?q";
    ASSERT_EQ_FATAL(crawl_url_split(u, &p), CRAWL_OK);
    ASSERT_EQ(p.origin_len, strlen("http://a.example.com:8080"));
    ASSERT_EQ(p.host_len, strlen("a.example.com"));
    ASSERT_EQ(strncmp(u + p.host_off, "a.example.com", p.host_len), 0);
    ASSERT_EQ(strcmp(u + p.path_off, "/x/y?q"), 0);
    const char *v = "https://[::1]:99/";
    ASSERT_EQ_FATAL(crawl_url_split(v, &p), CRAWL_OK);
    ASSERT_EQ(strncmp(v + p.host_off, "[::1]", p.host_len), 0);
    ASSERT_EQ(p.host_len, 5);
    ASSERT_EQ(p.origin_len, strlen("https://[::1]:99"));
    ASSERT_EQ(crawl_url_split("no scheme", &p), CRAWL_EURL);
}

/* SipHash-2-4 reference vectors (Aumasson and Bernstein, vectors.h): key 00..0f,
 * message 00 01 02 .. (len-1). */
static void test_url_siphash_vectors(void)
{
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    ASSERT_EQ(crawl_siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
    ASSERT_EQ(crawl_siphash24(key, msg, 1), 0x74f839c593dc67fdULL);
    ASSERT_EQ(crawl_siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
    ASSERT_EQ(crawl_hash64(msg, 15), 0xa129ca6149be45e5ULL);
}

static void test_url_seen_add_contains(void)
{
    struct crawl_seen *s = NULL;
    ASSERT_EQ_FATAL(crawl_seen_new(0, &s), CRAWL_OK);
    int added = -1;
    char buf[64];
    /* 100k URLs: each new once, then found, and no false "new" */
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof buf, "http://h%d.example/p/%d", i % 97, i);
        ASSERT_EQ(crawl_seen_add(s, crawl_hash64(buf, (size_t)n), &added), CRAWL_OK);
        if (!added)
            CU_FAIL("a new URL was reported as seen");
    }
    ASSERT_EQ(crawl_seen_count(s), 100000);
    for (int i = 0; i < 100000; i += 7) {
        int n = snprintf(buf, sizeof buf, "http://h%d.example/p/%d", i % 97, i);
        CU_ASSERT(crawl_seen_contains(s, crawl_hash64(buf, (size_t)n)));
        ASSERT_EQ(crawl_seen_add(s, crawl_hash64(buf, (size_t)n), &added), CRAWL_OK);
        ASSERT_EQ(added, 0);
    }
    CU_ASSERT(!crawl_seen_contains(s, crawl_hash64("http://never/", 13)));
    /* load factor <= 3/4: at most 8 / 0.375 bytes per URL plus the struct */
    size_t bytes = crawl_seen_bytes(s);
    CU_ASSERT(bytes >= 100000 * 8);
    CU_ASSERT(bytes <= 100000 * 22 + 1024);
    /* hash value 0 is a valid key too */
    ASSERT_EQ(crawl_seen_add(s, 0, &added), CRAWL_OK);
    ASSERT_EQ(added, 1);
    CU_ASSERT(crawl_seen_contains(s, 0));
    crawl_seen_free(s);
}

static void test_url_seen_cap(void)
{
    struct crawl_seen *s = NULL;
    ASSERT_EQ_FATAL(crawl_seen_new(10, &s), CRAWL_OK);
    int added;
    for (uint64_t i = 1; i <= 10; i++)
        ASSERT_EQ(crawl_seen_add(s, i * 0x9e3779b97f4a7c15ULL, &added), CRAWL_OK);
    ASSERT_EQ(crawl_seen_add(s, 12345, &added), CRAWL_ETOOLARGE);
    ASSERT_EQ(added, 0);
    /* a known one still answers OK */
    ASSERT_EQ(crawl_seen_add(s, 0x9e3779b97f4a7c15ULL, &added), CRAWL_OK);
    ASSERT_EQ(added, 0);
    crawl_seen_free(s);
    crawl_seen_free(NULL);
}

/* ---- the fast path (canon_fast() in crawler/url.c) against curl's ---- */

/* URLs at the edge of what the fast path accepts: each, and each one-byte variant of it,
 * must come out of crawl_url_canonicalise() as out of crawl__url_canonicalise_curl(). */
static const char *const fast_seeds[] = {
    "http://127.0.0.1:8080/library/os.html#os.path",
    "https://docs.python.org/3/library/os.html?highlight=path&x=1#frag",
    "http://a.com/", "https://a.com/", "http://a-b.c.example/x/y/z.html",
    "http://1.2.3.4/", "http://0.0.0.0:1/", "http://255.255.255.255/", "http://256.1.1.1/",
    "http://127.1/", "http://010.0.0.1/", "http://0x7f.0.0.1/", "http://1.2.3.4.5/",
    "http://9/", "http://a9/", "http://a..b/", "http://a./", "http://.a/", "http://-a/",
    "http://h:80/", "https://h:443/", "https://h:80/", "http://h:443/", "http://h:0/",
    "http://h:08080/", "http://h:65535/", "http://h:65536/", "http://h:/", "http://h",
    "http://h?q", "http://h/./a", "http://h/a/..", "http://h/a/../b", "http://h/a/.../b",
    "http://h/a/./", "http://h/.a/b.", "http://h/..a/", "http://h/%7E", "http://h/%3a",
    "http://h/%3A/%2F?%41=%2B", "http://h/%", "http://h/%4", "http://h/?", "http://h/?#x",
    "http://h/?a?b/c", "http://h/#", "http://h/a#frag ment", "http://h/a#\x7f",
    "http://h/a@b:c;d=e,f+g$h!i*j'(k)", "http://h/[x]", "http://h/{x}", "http://h/a|b",
    "http://h/a\\b", "http://h/a b", "http://h/\xc3\xa9", "http://u@h/", "http://u:p@h/",
    "http://H/", "HTTP://h/", "http://h/A_B~c", "http://xn--bcher-kva.example/",
    "http://[::1]:8080/", "http://h//a//b", "http://h/a?b#c#d", "http://h_x/",
};

static void fast_check(const char *url, const char *base, size_t *same)
{
    char *fast = NULL, *slow = NULL;
    enum crawl_code rf = crawl_url_canonicalise(url, base, &fast);
    enum crawl_code rs = crawl__url_canonicalise_curl(url, base, &slow);
    int ok = rf == rs && ((!fast && !slow) || (fast && slow && strcmp(fast, slow) == 0));
    if (!ok)
        fprintf(stderr, "\nfast != slow for %s (base %s): %s (%s) vs %s (%s)\n", url,
                base ? base : "-", fast ? fast : "NULL", crawl_strerror(rf),
                slow ? slow : "NULL", crawl_strerror(rs));
    CU_ASSERT(ok);
    if (fast && strncmp(fast, url, strlen(fast)) == 0)
        (*same)++;
    free(fast);
    free(slow);
}

static void fast_check_bases(const char *url, size_t *same)
{
    static const char *const bases[] = {NULL, "", "http://example.com/a/b",
                                        "https://h:8443/x/?q", "http://[/", "ftp://a/"};
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        fast_check(url, bases[b], same);
}

static void test_url_fast_path_matches_curl(void)
{
    static const char subst[] = "./%:@?#&=-_~aAzZ09[]\\ \t";
    size_t same = 0, n = 0;
    for (size_t i = 0; i < sizeof fast_seeds / sizeof fast_seeds[0]; i++) {
        const char *seed = fast_seeds[i];
        size_t len = strlen(seed);
        char *v = malloc(len + 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        fast_check_bases(seed, &same);
        /* the seed as a base for the others */
        fast_check(fast_seeds[(i + 1) % (sizeof fast_seeds / sizeof fast_seeds[0])], seed,
                   &same);
        for (size_t k = 0; k < len; k++) {
            /* delete byte k */
            memcpy(v, seed, k);
            memcpy(v + k, seed + k + 1, len - k);
            fast_check(v, NULL, &same);
            /* replace it, and insert before it */
            for (size_t c = 0; c < sizeof subst - 1; c++) {
                memcpy(v, seed, len + 1);
                v[k] = subst[c];
                fast_check(v, NULL, &same);
                memcpy(v, seed, k);
                v[k] = subst[c];
                memcpy(v + k + 1, seed + k, len - k + 1);
                fast_check(v, NULL, &same);
                n += 2;
            }
        }
        free(v);
    }
    /* the fuzz corpus: "BASE\nREFERENCE" or a lone URL, as tests/fuzz/fuzz_url.c reads it */
    DIR *d = opendir("tests/fuzz/corpus/url");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "tests/fuzz/corpus/url/%s", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char buf[3 * CRAWL_URL_MAX + 1];
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = '\0';
        files++;
        fast_check_bases(buf, &same);
        char *nl = strchr(buf, '\n');
        if (nl) {
            *nl = '\0';
            fast_check(nl + 1, buf, &same);
            fast_check_bases(nl + 1, &same);
        }
    }
    closedir(d);
    CU_ASSERT(files > 100);
    /* the variants reached both paths: many canonical already, many not */
    CU_ASSERT(same > n / 10);
    CU_ASSERT(same < n);
}

void test_url_register(void)
{
    CU_pSuite s = CU_add_suite("url", NULL, NULL);
    CU_add_test(s, "test_url_canonicalise_table", test_url_canonicalise_table);
    CU_add_test(s, "test_url_canonicalise_idempotent", test_url_canonicalise_idempotent);
    CU_add_test(s, "test_url_canonicalise_too_long", test_url_canonicalise_too_long);
    CU_add_test(s, "test_url_split_parts", test_url_split_parts);
    CU_add_test(s, "test_url_siphash_vectors", test_url_siphash_vectors);
    CU_add_test(s, "test_url_seen_add_contains", test_url_seen_add_contains);
    CU_add_test(s, "test_url_seen_cap", test_url_seen_cap);
    CU_add_test(s, "test_url_fast_path_matches_curl", test_url_fast_path_matches_curl);
}

/*
 * Suite "url": URL canonicalisation and resolution (crawler/url.c), the origin/host split,
 * the SipHash-2-4 URL hash against the reference test vectors, and the seen set.
 * Canonicalisation cases are a table: input, base (or NULL), expected (NULL = rejected).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler/crawl.h"

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
            CU_ASSERT_EQUAL(rc, CRAWL_OK);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            CU_ASSERT_STRING_EQUAL(out, c->want);
        } else {
            if (rc == CRAWL_OK)
                fprintf(stderr, "\ncase %zu: %s accepted as %s\n", i, c->url, out);
            CU_ASSERT_EQUAL(rc, CRAWL_EURL);
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
        CU_ASSERT_EQUAL_FATAL(crawl_url_canonicalise(canon_cases[i].want, NULL, &again),
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
    CU_ASSERT_EQUAL(crawl_url_canonicalise(u, NULL, &out), CRAWL_EURL);
    CU_ASSERT_PTR_NULL(out);
    /* escapes that triple the length past the cap are refused too */
    memset(u + 13, ' ', CRAWL_URL_MAX - 100);
    u[13 + CRAWL_URL_MAX - 100] = 'x';
    u[14 + CRAWL_URL_MAX - 100] = '\0';
    CU_ASSERT_EQUAL(crawl_url_canonicalise(u, NULL, &out), CRAWL_EURL);
    free(u);
}

static void test_url_split_parts(void)
{
    struct crawl_url_parts p;
    const char *u = "http://a.example.com:8080/x/y?q";
    CU_ASSERT_EQUAL_FATAL(crawl_url_split(u, &p), CRAWL_OK);
    CU_ASSERT_EQUAL(p.origin_len, strlen("http://a.example.com:8080"));
    CU_ASSERT_EQUAL(p.host_len, strlen("a.example.com"));
    CU_ASSERT_EQUAL(strncmp(u + p.host_off, "a.example.com", p.host_len), 0);
    CU_ASSERT_EQUAL(strcmp(u + p.path_off, "/x/y?q"), 0);
    const char *v = "https://[::1]:99/";
    CU_ASSERT_EQUAL_FATAL(crawl_url_split(v, &p), CRAWL_OK);
    CU_ASSERT_EQUAL(strncmp(v + p.host_off, "[::1]", p.host_len), 0);
    CU_ASSERT_EQUAL(p.host_len, 5);
    CU_ASSERT_EQUAL(p.origin_len, strlen("https://[::1]:99"));
    CU_ASSERT_EQUAL(crawl_url_split("no scheme", &p), CRAWL_EURL);
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
    CU_ASSERT_EQUAL(crawl_siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
    CU_ASSERT_EQUAL(crawl_siphash24(key, msg, 1), 0x74f839c593dc67fdULL);
    CU_ASSERT_EQUAL(crawl_siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
    CU_ASSERT_EQUAL(crawl_hash64(msg, 15), 0xa129ca6149be45e5ULL);
}

static void test_url_seen_add_contains(void)
{
    struct crawl_seen *s = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_seen_new(0, &s), CRAWL_OK);
    int added = -1;
    char buf[64];
    /* 100k URLs: each new once, then found, and no false "new" */
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof buf, "http://h%d.example/p/%d", i % 97, i);
        CU_ASSERT_EQUAL(crawl_seen_add(s, crawl_hash64(buf, (size_t)n), &added), CRAWL_OK);
        if (!added)
            CU_FAIL("a new URL was reported as seen");
    }
    CU_ASSERT_EQUAL(crawl_seen_count(s), 100000);
    for (int i = 0; i < 100000; i += 7) {
        int n = snprintf(buf, sizeof buf, "http://h%d.example/p/%d", i % 97, i);
        CU_ASSERT(crawl_seen_contains(s, crawl_hash64(buf, (size_t)n)));
        CU_ASSERT_EQUAL(crawl_seen_add(s, crawl_hash64(buf, (size_t)n), &added), CRAWL_OK);
        CU_ASSERT_EQUAL(added, 0);
    }
    CU_ASSERT(!crawl_seen_contains(s, crawl_hash64("http://never/", 13)));
    /* load factor <= 3/4: at most 8 / 0.375 bytes per URL plus the struct */
    size_t bytes = crawl_seen_bytes(s);
    CU_ASSERT(bytes >= 100000 * 8);
    CU_ASSERT(bytes <= 100000 * 22 + 1024);
    /* hash value 0 is a valid key too */
    CU_ASSERT_EQUAL(crawl_seen_add(s, 0, &added), CRAWL_OK);
    CU_ASSERT_EQUAL(added, 1);
    CU_ASSERT(crawl_seen_contains(s, 0));
    crawl_seen_free(s);
}

static void test_url_seen_cap(void)
{
    struct crawl_seen *s = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_seen_new(10, &s), CRAWL_OK);
    int added;
    for (uint64_t i = 1; i <= 10; i++)
        CU_ASSERT_EQUAL(crawl_seen_add(s, i * 0x9e3779b97f4a7c15ULL, &added), CRAWL_OK);
    CU_ASSERT_EQUAL(crawl_seen_add(s, 12345, &added), CRAWL_ETOOLARGE);
    CU_ASSERT_EQUAL(added, 0);
    /* a known one still answers OK */
    CU_ASSERT_EQUAL(crawl_seen_add(s, 0x9e3779b97f4a7c15ULL, &added), CRAWL_OK);
    CU_ASSERT_EQUAL(added, 0);
    crawl_seen_free(s);
    crawl_seen_free(NULL);
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
}

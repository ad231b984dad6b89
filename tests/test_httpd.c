/*
 * Suite "httpd": the loopback test server (tests/httpd.c) does what the other suites
 * rely on: routes and 404, extra headers, the request log (paths, queries, headers,
 * times), the dynamic handler, gzip and chunked bodies, and each fault (hang, reset, drip,
 * endless) bounded in time. Fetches with libcurl's easy interface, 127.0.0.1 only.
 */
#include "tests/httpd.h"

#include <CUnit/CUnit.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tests/testutil.h"

struct fetch {
    CURLcode rc;
    long status;
    char *body;
    size_t len;
    size_t limit; /* abort the transfer after this many bytes (0: 4 MiB) */
    char location[256];
    char encoding[64];
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch *f = ud;
    size_t add = sz * n;
    size_t limit = f->limit ? f->limit : (size_t)4 << 20;
    if (f->len + add > limit)
        return 0; /* CURLE_WRITE_ERROR */
    char *nb = realloc(f->body, f->len + add + 1);
    if (!nb)
        return 0;
    f->body = nb;
    memcpy(f->body + f->len, p, add);
    f->len += add;
    f->body[f->len] = '\0';
    return add;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch *f = ud;
    size_t all = sz * n, len = all;
    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n'))
        len--;
    if (len >= 10 && strncasecmp(p, "Location:", 9) == 0)
        snprintf(f->location, sizeof f->location, "%.*s", (int)(len - 10), p + 10);
    if (len >= 18 && strncasecmp(p, "Content-Encoding:", 17) == 0)
        snprintf(f->encoding, sizeof f->encoding, "%.*s", (int)(len - 18), p + 18);
    return all;
}

/* GET url with an optional total timeout (ms) and Accept-Encoding (NULL: none). */
static void get(struct fetch *f, const char *url, long timeout_ms, const char *accept_encoding)
{
    CURL *c = curl_easy_init();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, f);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "httpd-test/1.0");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (timeout_ms)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (accept_encoding)
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, accept_encoding);
    f->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &f->status);
    curl_easy_cleanup(c);
}

static void fetch_release(struct fetch *f)
{
    free(f->body);
    memset(f, 0, sizeof *f);
}

static const char HELLO[] = "hello, loopback\n";

static const struct test_route basic_routes[] = {
    {"/hello", 0, {.status = 200, .content_type = "text/plain", .body = HELLO,
                   .body_len = sizeof HELLO - 1}},
    {"/moved", 0, {.status = 301, .headers = "Location: /hello\nX-Test: 1"}},
    {"/static/", TEST_ROUTE_PREFIX, {.status = 200, .body = "static", .body_len = 6}},
    {"/gone", 0, {.status = 410}},
};

static void test_httpd_routes_and_404(void)
{
    struct test_httpd *h = test_httpd_start(basic_routes, 4, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(test_httpd_port(h) > 0);
    char url[128];
    struct fetch f = {0};

    get(&f, test_httpd_url(h, "/hello?a=1&b=%20", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.rc, CURLE_OK);
    ASSERT_EQ(f.status, 200);
    ASSERT_EQ(f.len, sizeof HELLO - 1);
    CU_ASSERT(f.body && strcmp(f.body, HELLO) == 0);
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/moved", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 301);
    CU_ASSERT_STRING_EQUAL(f.location, "/hello");
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/static/a/b.css", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 200);
    CU_ASSERT(f.body && strcmp(f.body, "static") == 0);
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/gone", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 410);
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/nothing-here", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 404);
    fetch_release(&f);

    /* the log: raw path and query, method, headers */
    ASSERT_EQ(test_httpd_total(h), 5);
    ASSERT_EQ(test_httpd_count(h, "/hello"), 1);
    ASSERT_EQ(test_httpd_count(h, "/static/a/b.css"), 1);
    ASSERT_EQ(test_httpd_count(h, "/never"), 0);
    const struct test_httpd_request *r = test_httpd_request_at(h, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(r->method, "GET");
    CU_ASSERT_STRING_EQUAL(r->path, "/hello");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->query);
    CU_ASSERT_STRING_EQUAL(r->query, "a=1&b=%20");
    CU_ASSERT_STRING_EQUAL(test_httpd_header(r, "user-agent"), "httpd-test/1.0");
    CU_ASSERT_PTR_NULL(test_httpd_header(r, "X-Not-Sent"));
    CU_ASSERT_PTR_NULL(test_httpd_request_at(h, 5));
    CU_ASSERT_PTR_NULL(test_httpd_request_at(h, 4)->query);
    test_httpd_stop(h);
}

static void test_httpd_request_times(void)
{
    struct test_httpd *h = test_httpd_start(basic_routes, 4, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char url[128];
    double before = test_httpd_clock();
    for (int i = 0; i < 3; i++) {
        struct fetch f = {0};
        get(&f, test_httpd_url(h, "/hello", url, sizeof url), 5000, NULL);
        ASSERT_EQ(f.status, 200);
        fetch_release(&f);
    }
    double after = test_httpd_clock();
    double t[3] = {0};
    ASSERT_EQ(test_httpd_times(h, "/hello", t, 3), 3);
    CU_ASSERT(t[0] >= before && t[0] <= t[1] && t[1] <= t[2] && t[2] <= after);
    const struct test_httpd_request *last = test_httpd_last(h, "/hello");
    CU_ASSERT_PTR_NOT_NULL_FATAL(last);
    CU_ASSERT_DOUBLE_EQUAL(last->time, t[2], 1e-9);
    test_httpd_stop(h);
}

static int dynamic(void *userdata, const struct test_httpd_request *req,
                   struct test_response *out)
{
    int *calls = userdata;
    __atomic_add_fetch(calls, 1, __ATOMIC_SEQ_CST);
    if (strncmp(req->path, "/page/", 6) != 0)
        return -1;
    char *b = malloc(256);
    if (!b)
        return -1;
    int n = snprintf(b, 256, "<a href=\"/page/%d\">next</a>", atoi(req->path + 6) + 1);
    out->status = 200;
    out->content_type = "text/html";
    out->body = b;
    out->body_len = (size_t)n;
    out->body_free = 1;
    return 0;
}

static void test_httpd_dynamic_handler(void)
{
    int calls = 0;
    struct test_httpd *h = test_httpd_start(basic_routes, 4, dynamic, &calls);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char url[128];
    struct fetch f = {0};
    get(&f, test_httpd_url(h, "/page/41", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 200);
    CU_ASSERT(f.body && strcmp(f.body, "<a href=\"/page/42\">next</a>") == 0);
    fetch_release(&f);
    get(&f, test_httpd_url(h, "/other", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.status, 404);
    fetch_release(&f);
    get(&f, test_httpd_url(h, "/hello", url, sizeof url), 5000, NULL); /* route wins */
    ASSERT_EQ(f.status, 200);
    fetch_release(&f);
    ASSERT_EQ(calls, 2);
    test_httpd_stop(h);
}

static void test_httpd_gzip_and_chunked(void)
{
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 7);
    const struct test_route routes[] = {
        {"/gz", 0, {.status = 200, .body = big, .body_len = sizeof big, .gzip = 1}},
        {"/chunked", 0, {.status = 200, .body = big, .body_len = sizeof big, .chunked = 1}},
    };
    struct test_httpd *h = test_httpd_start(routes, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char url[128];
    struct fetch f = {0};
    get(&f, test_httpd_url(h, "/gz", url, sizeof url), 5000, "gzip");
    ASSERT_EQ(f.rc, CURLE_OK);
    CU_ASSERT(strncmp(f.encoding, "gzip", 4) == 0);
    ASSERT_EQ(f.len, sizeof big);
    CU_ASSERT(f.body && memcmp(f.body, big, sizeof big) == 0);
    fetch_release(&f);
    CU_ASSERT_STRING_EQUAL(test_httpd_header(test_httpd_last(h, "/gz"), "Accept-Encoding"), "gzip");

    get(&f, test_httpd_url(h, "/gz", url, sizeof url), 5000, NULL); /* raw: compressed bytes */
    ASSERT_EQ(f.rc, CURLE_OK);
    CU_ASSERT(f.len > 10 && f.len < sizeof big / 10);
    CU_ASSERT(f.body && (unsigned char)f.body[0] == 0x1f && (unsigned char)f.body[1] == 0x8b);
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/chunked", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.rc, CURLE_OK);
    ASSERT_EQ(f.len, sizeof big);
    CU_ASSERT(f.body && memcmp(f.body, big, sizeof big) == 0);
    fetch_release(&f);
    test_httpd_stop(h);
}

static void test_httpd_faults(void)
{
    static const char body[] = "0123456789abcdefghij0123456789abcdefghij";
    const struct test_route routes[] = {
        {"/hang", 0, {.fault = TEST_FAULT_HANG}},
        {"/reset", 0, {.status = 200, .body = body, .body_len = sizeof body - 1,
                       .fault = TEST_FAULT_RESET}},
        {"/drip", 0, {.status = 200, .body = "abcd", .body_len = 4, .fault = TEST_FAULT_DRIP,
                      .fault_ms = 50}},
        {"/endless", 0, {.status = 200, .body = "endless ", .body_len = 8,
                         .fault = TEST_FAULT_ENDLESS}},
    };
    struct test_httpd *h = test_httpd_start(routes, 4, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char url[128];
    struct fetch f = {0};

    get(&f, test_httpd_url(h, "/hang", url, sizeof url), 300, NULL);
    ASSERT_EQ(f.rc, CURLE_OPERATION_TIMEDOUT);
    ASSERT_EQ(f.len, 0);
    fetch_release(&f);

    get(&f, test_httpd_url(h, "/reset", url, sizeof url), 5000, NULL);
    CU_ASSERT_NOT_EQUAL(f.rc, CURLE_OK);
    CU_ASSERT(f.len < sizeof body - 1);
    fetch_release(&f);

    double t0 = test_httpd_clock();
    get(&f, test_httpd_url(h, "/drip", url, sizeof url), 5000, NULL);
    ASSERT_EQ(f.rc, CURLE_OK);
    CU_ASSERT(f.body && strcmp(f.body, "abcd") == 0);
    CU_ASSERT(test_httpd_clock() - t0 >= 0.15); /* three 50 ms pauses at least */
    fetch_release(&f);

    f.limit = 1 << 20;
    get(&f, test_httpd_url(h, "/endless", url, sizeof url), 10000, NULL);
    ASSERT_EQ(f.rc, CURLE_WRITE_ERROR); /* we hung up, the server never stopped */
    CU_ASSERT(f.len > 1000000 && f.len <= (size_t)1 << 20);
    CU_ASSERT(f.body && strncmp(f.body, "endless endless ", 16) == 0);
    fetch_release(&f);

    ASSERT_EQ(test_httpd_count(h, "/hang"), 1);
    ASSERT_EQ(test_httpd_count(h, "/endless"), 1);
    test_httpd_stop(h);
}

/* A hang in progress ends when the server stops: stop does not wait out fault_ms. */
static void test_httpd_stop_ends_faults(void)
{
    const struct test_route routes[] = {{"/hang", 0, {.fault = TEST_FAULT_HANG}}};
    struct test_httpd *h = test_httpd_start(routes, 1, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char url[128];
    struct fetch f = {0};
    get(&f, test_httpd_url(h, "/hang", url, sizeof url), 200, NULL); /* leaves it hanging */
    ASSERT_EQ(f.rc, CURLE_OPERATION_TIMEDOUT);
    fetch_release(&f);
    double t0 = test_httpd_clock();
    test_httpd_stop(h);
    CU_ASSERT(test_httpd_clock() - t0 < 10.0); /* far below the 30 s default hold */
}

extern void test_httpd_register(void);
void test_httpd_register(void)
{
    CU_pSuite s = CU_add_suite("httpd", NULL, NULL);
    CU_add_test(s, "test_httpd_routes_and_404", test_httpd_routes_and_404);
    CU_add_test(s, "test_httpd_request_times", test_httpd_request_times);
    CU_add_test(s, "test_httpd_dynamic_handler", test_httpd_dynamic_handler);
    CU_add_test(s, "test_httpd_gzip_and_chunked", test_httpd_gzip_and_chunked);
    CU_add_test(s, "test_httpd_faults", test_httpd_faults);
    CU_add_test(s, "test_httpd_stop_ends_faults", test_httpd_stop_ends_faults);
}

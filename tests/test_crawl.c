/*
 * Suite "crawl": the frontier (per-host queues, politeness, priorities), the fetcher
 * (libcurl multi) and the crawl loop, against real HTTP servers on 127.0.0.1
 * (tests/httpd.c). Every network test uses short timeouts so the suite stays bounded;
 * timing checks read the server's request log, never the wall clock of the test.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler/crawl.h"
#include "tests/httpd.h"

extern void test_crawl_register(void);

/* ---- frontier ---- */

static struct crawl_host *host_of(struct crawl_frontier *f, const char *url)
{
    struct crawl_url_parts p;
    struct crawl_host *h = NULL;
    if (crawl_url_split(url, &p) != CRAWL_OK)
        return NULL;
    if (crawl_frontier_host(f, url, p.origin_len, &h) != CRAWL_OK)
        return NULL;
    return h;
}

static void push(struct crawl_frontier *f, const char *url, unsigned depth, float prio,
                 double now)
{
    struct crawl_host *h = host_of(f, url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_EQUAL(crawl_frontier_push(f, h, url, depth, 0, prio, now), CRAWL_OK);
}

static void test_frontier_priority_within_host(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 2, -2, 0);
    push(f, "http://a/2", 1, -1, 0);
    push(f, "http://a/3", 1, -1, 0);
    push(f, "http://a/4", 0, 0, 0);
    CU_ASSERT_EQUAL(crawl_frontier_size(f), 4);
    const char *want[] = {"http://a/4", "http://a/2", "http://a/3", "http://a/1"};
    for (int i = 0; i < 4; i++) {
        struct crawl_item it;
        struct crawl_host *h;
        double wake;
        CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 1.0 + i, &it, &h, &wake), 1);
        CU_ASSERT_STRING_EQUAL(it.url, want[i]);
        /* per_host 1: busy until done */
        CU_ASSERT_EQUAL(crawl_frontier_pop(f, 1.0 + i, &it, &h, &wake), i < 3 ? 0 : 0);
        crawl_frontier_done(f, h, 1.0 + i);
        free(it.url);
    }
    CU_ASSERT_EQUAL(crawl_frontier_size(f), 0);
    crawl_frontier_free(f);
}

static void test_frontier_delay_per_host(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 2.0};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 0, 0, 0);
    push(f, "http://a/2", 0, 0, 0);
    push(f, "http://b/1", 0, 0, 0);
    struct crawl_item it;
    struct crawl_host *h1, *h2, *h;
    double wake;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 10.0, &it, &h1, &wake), 1);
    free(it.url);
    /* host b is not held up by a's delay */
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 10.0, &it, &h2, &wake), 1);
    CU_ASSERT_STRING_EQUAL(crawl_host_origin(h2),
                           strcmp(crawl_host_origin(h1), "http://a") == 0 ? "http://b"
                                                                          : "http://a");
    free(it.url);
    crawl_frontier_done(f, h1, 10.5);
    crawl_frontier_done(f, h2, 10.5);
    /* a's next request: 2 s after the end of the last one */
    int got = crawl_frontier_pop(f, 11.0, &it, &h, &wake);
    CU_ASSERT_EQUAL(got, 0);
    CU_ASSERT(fabs(wake - 12.5) < 1e-9);
    CU_ASSERT_EQUAL(crawl_frontier_pop(f, 12.5, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/2");
    free(it.url);
    crawl_frontier_done(f, h, 12.6);
    CU_ASSERT_EQUAL(crawl_frontier_pop(f, 100, &it, &h, &wake), 0);
    CU_ASSERT(isinf(wake));
    crawl_frontier_free(f);
}

static void test_frontier_crawl_delay_capped(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0.5, .max_delay = 5};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    struct crawl_host *h = host_of(f, "http://a/");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_DOUBLE_EQUAL(crawl_frontier_set_delay(f, h, 3, 0), 3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(crawl_frontier_set_delay(f, h, 600, 0), 5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(crawl_frontier_set_delay(f, h, 0.1, 0), 0.5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(crawl_frontier_set_delay(f, h, NAN, 0), 0.5, 1e-9);
    crawl_frontier_free(f);
}

static void test_frontier_hold_and_per_host(void)
{
    struct crawl_frontier_opts o = {.per_host = 2, .delay = 0};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    for (int i = 0; i < 5; i++) {
        char u[32];
        snprintf(u, sizeof u, "http://a/%d", i);
        push(f, u, 0, 0, 0);
    }
    struct crawl_host *a = host_of(f, "http://a/");
    crawl_frontier_hold(f, a, 1, 0);
    struct crawl_item it;
    struct crawl_host *h;
    double wake;
    CU_ASSERT_EQUAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 0);
    CU_ASSERT(isinf(wake));
    crawl_frontier_hold(f, a, 0, 1);
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    free(it.url);
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    free(it.url);
    CU_ASSERT_EQUAL(crawl_host_active(a), 2);
    CU_ASSERT_EQUAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 0); /* 2 in flight */
    crawl_frontier_done(f, a, 1);
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/2");
    free(it.url);
    crawl_frontier_free(f); /* frees the 2 still queued */
}

/* Many hosts, no delay: every host is served in turn, none starves. */
static void test_frontier_no_starvation(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    enum { HOSTS = 50, PER = 20 };
    for (int i = 0; i < PER; i++)
        for (int k = 0; k < HOSTS; k++) {
            char u[64];
            snprintf(u, sizeof u, "http://h%d.example/%d", k, i);
            push(f, u, 0, 0, 0);
        }
    CU_ASSERT_EQUAL(crawl_frontier_host_count(f), HOSTS);
    int served[HOSTS] = {0};
    double now = 1;
    /* the first HOSTS pops reach HOSTS different hosts */
    for (int n = 0; n < HOSTS * PER; n++) {
        struct crawl_item it;
        struct crawl_host *h;
        double wake;
        CU_ASSERT_EQUAL_FATAL(crawl_frontier_pop(f, now, &it, &h, &wake), 1);
        int k = atoi(crawl_host_origin(h) + strlen("http://h"));
        served[k]++;
        if (n == HOSTS - 1)
            for (int j = 0; j < HOSTS; j++)
                CU_ASSERT_EQUAL(served[j], 1);
        free(it.url);
        now += 0.001;
        crawl_frontier_done(f, h, now);
    }
    CU_ASSERT_EQUAL(crawl_frontier_size(f), 0);
    crawl_frontier_free(f);
}

static void test_frontier_cap(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .max_items = 3};
    struct crawl_frontier *f = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    struct crawl_host *h = host_of(f, "http://a/");
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(crawl_frontier_push(f, h, "http://a/x", 0, 0, 0, 0), CRAWL_OK);
    CU_ASSERT_EQUAL(crawl_frontier_push(f, h, "http://a/x", 0, 0, 0, 0), CRAWL_ETOOLARGE);
    CU_ASSERT_EQUAL(crawl_frontier_size(f), 3);
    crawl_frontier_free(f);
}


/* ---- the fetcher against tests/httpd ---- */

static char big_body[2 * 1024 * 1024];

static const char PAGE[] = "<html><head><title>t</title></head><body><p>hello</p></body></html>";

static const struct test_route fetch_routes[] = {
    {"/page.html", 0, {.status = 200, .content_type = "text/html; charset=utf-8", .body = PAGE,
                       .body_len = sizeof PAGE - 1}},
    {"/xhtml", 0, {.status = 200, .content_type = "application/xhtml+xml", .body = PAGE,
                   .body_len = sizeof PAGE - 1}},
    {"/gz.html", 0, {.status = 200, .content_type = "text/html", .body = PAGE,
                     .body_len = sizeof PAGE - 1, .gzip = 1}},
    {"/chunked.html", 0, {.status = 200, .content_type = "text/html", .body = PAGE,
                          .body_len = sizeof PAGE - 1, .chunked = 1}},
    {"/image.png", 0, {.status = 200, .content_type = "image/png", .body = big_body,
                       .body_len = sizeof big_body}},
    {"/missing", 0, {.status = 404, .content_type = "text/html", .body = "no", .body_len = 2}},
    {"/error", 0, {.status = 500, .content_type = "text/html", .body = "err", .body_len = 3}},
    {"/moved", 0, {.status = 301, .headers = "Location: /page.html"}},
    {"/big.html", 0, {.status = 200, .content_type = "text/html", .body = big_body,
                      .body_len = sizeof big_body}},
    {"/endless.html", 0, {.status = 200, .content_type = "text/html",
                          .fault = TEST_FAULT_ENDLESS}},
    {"/hang.html", 0, {.status = 200, .content_type = "text/html", .body = PAGE,
                       .body_len = sizeof PAGE - 1, .fault = TEST_FAULT_HANG,
                       .fault_ms = 10000}},
    {"/drip.html", 0, {.status = 200, .content_type = "text/html", .body = PAGE,
                       .body_len = sizeof PAGE - 1, .fault = TEST_FAULT_DRIP,
                       .fault_ms = 1000}},
    {"/reset.html", 0, {.status = 200, .content_type = "text/html", .body = big_body,
                        .body_len = 200000, .fault = TEST_FAULT_RESET}},
    {"/robots.txt", 0, {.status = 200, .content_type = "text/plain",
                        .body = "User-agent: *\nDisallow: /x\n", .body_len = 27}},
};

/* Fetches every path at once; responses land in out[] in the order of paths. */
static void fetch_all(struct test_httpd *h, const struct crawl_fetcher_opts *o,
                      const char *const *paths, size_t n, enum crawl_fetch_kind kind,
                      struct crawl_response **out)
{
    struct crawl_fetcher *fx = NULL;
    CU_ASSERT_EQUAL_FATAL(crawl_fetcher_new(o, &fx), CRAWL_OK);
    for (size_t i = 0; i < n; i++) {
        char url[256];
        out[i] = NULL;
        CU_ASSERT_EQUAL(crawl_fetcher_add(fx, test_httpd_url(h, paths[i], url, sizeof url),
                                          kind, (void *)(uintptr_t)i),
                        CRAWL_OK);
    }
    size_t got = 0;
    double until = crawl_clock() + 20; /* a bound for a broken fetcher, never reached */
    while (got < n && crawl_clock() < until) {
        CU_ASSERT_EQUAL_FATAL(crawl_fetcher_run(fx, 100), CRAWL_OK);
        struct crawl_response *r;
        while ((r = crawl_fetcher_next(fx)) != NULL) {
            out[(uintptr_t)r->userdata] = r;
            got++;
        }
    }
    CU_ASSERT_EQUAL(got, n);
    CU_ASSERT_EQUAL(crawl_fetcher_active(fx), 0);
    crawl_fetcher_free(fx);
}

static void test_fetch_outcomes(void)
{
    memset(big_body, 'a', sizeof big_body);
    struct test_httpd *h = test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_fetcher_opts o = {.concurrency = 16, .per_host = 16, .timeout = 3,
                                   .connect_timeout = 2, .low_speed_bytes = 100,
                                   .low_speed_time = 2, .max_body = 1024 * 1024,
                                   .user_agent = "simcrawl-test/1"};
    static const char *const paths[] = {
        "/page.html", "/xhtml", "/gz.html", "/chunked.html", "/image.png", "/missing",
        "/error", "/moved", "/big.html", "/endless.html", "/hang.html", "/drip.html",
        "/reset.html"};
    enum { N = sizeof paths / sizeof paths[0] };
    struct crawl_response *r[N];
    double t0 = crawl_clock();
    fetch_all(h, &o, paths, N, CRAWL_FETCH_PAGE, r);
    double took = crawl_clock() - t0;
    for (size_t i = 0; i < N; i++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);

    CU_ASSERT_EQUAL(r[0]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[0]->status, 200);
    CU_ASSERT_EQUAL(r[0]->len - r[0]->head_len, sizeof PAGE - 1);
    CU_ASSERT_EQUAL(memcmp(r[0]->data + r[0]->head_len, PAGE, sizeof PAGE - 1), 0);
    CU_ASSERT_EQUAL(strncmp(r[0]->data, "HTTP/1.1 200", 12), 0);
    CU_ASSERT(r[0]->head_len >= 4 && memcmp(r[0]->data + r[0]->head_len - 4, "\r\n\r\n", 4) == 0);
    CU_ASSERT_STRING_EQUAL(r[0]->content_type, "text/html; charset=utf-8");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[0]->request);
    CU_ASSERT(strstr(r[0]->request, "GET /page.html HTTP/1.1\r\n") == r[0]->request);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[0]->request, "User-Agent: simcrawl-test/1"));
    CU_ASSERT_STRING_EQUAL(r[0]->ip, "127.0.0.1");
    CU_ASSERT_STRING_EQUAL(r[0]->error, "");

    CU_ASSERT_EQUAL(r[1]->result, CRAWL_FETCH_DONE); /* xhtml is html */
    /* gzip: kept as the server coded it, for the WARC */
    CU_ASSERT_EQUAL(r[2]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_PTR_NOT_NULL(r[2]->content_encoding);
    CU_ASSERT(r[2]->len - r[2]->head_len >= 2 &&
              (unsigned char)r[2]->data[r[2]->head_len] == 0x1f);
    /* chunked: curl removed the coding, the head says so under another name */
    CU_ASSERT_EQUAL(r[3]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[3]->len - r[3]->head_len, sizeof PAGE - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[3]->data, "X-Crawler-Transfer-Encoding: chunked"));
    /* not html: aborted after the headers, before 2 MB were sent */
    CU_ASSERT_EQUAL(r[4]->result, CRAWL_FETCH_FILTERED);
    CU_ASSERT(r[4]->len - r[4]->head_len < sizeof big_body);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[4]->error, "image/png"));
    CU_ASSERT_EQUAL(r[5]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[5]->status, 404);
    CU_ASSERT_EQUAL(r[6]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[6]->status, 500);
    /* redirects are not followed: the loop follows them */
    CU_ASSERT_EQUAL(r[7]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[7]->status, 301);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[7]->location);
    CU_ASSERT_STRING_EQUAL(r[7]->location, "/page.html");
    /* body caps: announced length and endless body */
    CU_ASSERT_EQUAL(r[8]->result, CRAWL_FETCH_TOOLARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[8]->error, "too large"));
    CU_ASSERT_EQUAL(r[9]->result, CRAWL_FETCH_TOOLARGE);
    CU_ASSERT(r[9]->len - r[9]->head_len <= o.max_body);
    /* hang: total timeout; drip: low-speed or total timeout */
    CU_ASSERT_EQUAL(r[10]->result, CRAWL_FETCH_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[10]->error, "timeout"));
    CU_ASSERT_EQUAL(r[11]->result, CRAWL_FETCH_TIMEOUT);
    /* reset in the middle of the body */
    CU_ASSERT_EQUAL(r[12]->result, CRAWL_FETCH_FAILED);
    CU_ASSERT_NOT_EQUAL(r[12]->error[0], '\0');
    /* all at once: the slow ones overlapped (3 s timeout each, not 3 x 3 s) */
    CU_ASSERT(took < 8);
    for (size_t i = 0; i < N; i++)
        crawl_response_free(r[i]);
    test_httpd_stop(h);
}

static void test_fetch_robots_kind(void)
{
    struct test_httpd *h = test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_fetcher_opts o = {.timeout = 3};
    static const char *const paths[] = {"/robots.txt", "/moved", "/image.png"};
    struct crawl_response *r[3];
    fetch_all(h, &o, paths, 3, CRAWL_FETCH_ANY, r);
    CU_ASSERT_EQUAL(r[0]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[0]->status, 200);
    CU_ASSERT_EQUAL(strcmp(r[0]->data + r[0]->head_len, "User-agent: *\nDisallow: /x\n"), 0);
    /* robots fetches follow redirects */
    CU_ASSERT_EQUAL(r[1]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_EQUAL(r[1]->status, 200);
    /* any type, cut at the robots cap with what fit kept */
    CU_ASSERT_EQUAL(r[2]->result, CRAWL_FETCH_TOOLARGE);
    CU_ASSERT_EQUAL(r[2]->len - r[2]->head_len, CRAWL_ROBOTS_MAX_BYTES);
    for (int i = 0; i < 3; i++)
        crawl_response_free(r[i]);
    test_httpd_stop(h);
}

/* 40 pages over 4 connections: every page arrives, connections are reused. */
static void test_fetch_many_reuse(void)
{
    struct test_httpd *h = test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_fetcher_opts o = {.concurrency = 4, .per_host = 4, .timeout = 5};
    enum { N = 40 };
    const char *paths[N];
    for (int i = 0; i < N; i++)
        paths[i] = "/page.html";
    struct crawl_response *r[N];
    fetch_all(h, &o, paths, N, CRAWL_FETCH_PAGE, r);
    for (int i = 0; i < N; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);
        CU_ASSERT_EQUAL(r[i]->status, 200);
        crawl_response_free(r[i]);
    }
    CU_ASSERT_EQUAL(test_httpd_count(h, "/page.html"), N);
    test_httpd_stop(h);
}

void test_crawl_register(void)
{
    CU_pSuite s = CU_add_suite("crawl", NULL, NULL);
    CU_add_test(s, "test_frontier_priority_within_host", test_frontier_priority_within_host);
    CU_add_test(s, "test_frontier_delay_per_host", test_frontier_delay_per_host);
    CU_add_test(s, "test_frontier_crawl_delay_capped", test_frontier_crawl_delay_capped);
    CU_add_test(s, "test_frontier_hold_and_per_host", test_frontier_hold_and_per_host);
    CU_add_test(s, "test_frontier_no_starvation", test_frontier_no_starvation);
    CU_add_test(s, "test_frontier_cap", test_frontier_cap);
    CU_add_test(s, "test_fetch_outcomes", test_fetch_outcomes);
    CU_add_test(s, "test_fetch_robots_kind", test_fetch_robots_kind);
    CU_add_test(s, "test_fetch_many_reuse", test_fetch_many_reuse);
}

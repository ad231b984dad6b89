/*
 * Suite "crawl": the frontier (per-host queues, politeness, priorities), the fetcher
 * (libcurl multi) and the crawl loop, against real HTTP servers on 127.0.0.1
 * (tests/httpd.c). Every network test uses short timeouts so the suite stays bounded;
 * timing checks read the server's request log, never the wall clock of the test.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler/crawl.h"

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

void test_crawl_register(void)
{
    CU_pSuite s = CU_add_suite("crawl", NULL, NULL);
    CU_add_test(s, "test_frontier_priority_within_host", test_frontier_priority_within_host);
    CU_add_test(s, "test_frontier_delay_per_host", test_frontier_delay_per_host);
    CU_add_test(s, "test_frontier_crawl_delay_capped", test_frontier_crawl_delay_capped);
    CU_add_test(s, "test_frontier_hold_and_per_host", test_frontier_hold_and_per_host);
    CU_add_test(s, "test_frontier_no_starvation", test_frontier_no_starvation);
    CU_add_test(s, "test_frontier_cap", test_frontier_cap);
}

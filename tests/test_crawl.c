/*
 * Suite "crawl": the frontier (per-host queues, politeness, priorities), the fetcher
 * (libcurl multi) and the crawl loop, against real HTTP servers on 127.0.0.1
 * (tests/httpd.c). Every network test uses short timeouts so the suite stays bounded;
 * timing checks read the server's request log, never the wall clock of the test.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include "crawler/crawl.h"
#include "crawler/crawler_int.h"
#include "tests/failalloc.h"
#include "tests/httpd.h"
#include "tests/testutil.h"

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

static void push(struct crawl_frontier *f, const char *url, unsigned depth, float prio, double now)
{
    struct crawl_host *h = host_of(f, url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    ASSERT_EQ(crawl_frontier_push(f, h, url, depth, 0, prio, NULL, 0, now), CRAWL_OK);
}

static void test_frontier_priority_within_host(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 2, -2, 0);
    push(f, "http://a/2", 1, -1, 0);
    push(f, "http://a/3", 1, -1, 0);
    push(f, "http://a/4", 0, 0, 0);
    ASSERT_EQ(crawl_frontier_size(f), 4);
    const char *want[] = {"http://a/4", "http://a/2", "http://a/3", "http://a/1"};
    for (int i = 0; i < 4; i++) {
        struct crawl_item it;
        struct crawl_host *h;
        double wake;
        ASSERT_EQ_FATAL(crawl_frontier_pop(f, 1.0 + i, &it, &h, &wake), 1);
        CU_ASSERT_STRING_EQUAL(it.url, want[i]);
        /* per_host 1: busy until done */
        ASSERT_EQ(crawl_frontier_pop(f, 1.0 + i, &it, &h, &wake), i < 3 ? 0 : 0);
        crawl_frontier_done(f, h, 1.0 + i);
        free(it.url);
    }
    ASSERT_EQ(crawl_frontier_size(f), 0);
    crawl_frontier_free(f);
}

static void test_frontier_delay_per_host(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 2.0};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 0, 0, 0);
    push(f, "http://a/2", 0, 0, 0);
    push(f, "http://b/1", 0, 0, 0);
    struct crawl_item it;
    struct crawl_host *h1, *h2, *h;
    double wake;
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 10.0, &it, &h1, &wake), 1);
    free(it.url);
    /* host b is not held up by a's delay */
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 10.0, &it, &h2, &wake), 1);
    CU_ASSERT_STRING_EQUAL(crawl_host_origin(h2), strcmp(crawl_host_origin(h1), "http://a") == 0
                                                      ? "http://b"
                                                      : "http://a");
    free(it.url);
    crawl_frontier_done(f, h1, 10.5);
    crawl_frontier_done(f, h2, 10.5);
    /* a's next request: 2 s after the end of the last one */
    int got = crawl_frontier_pop(f, 11.0, &it, &h, &wake);
    ASSERT_EQ(got, 0);
    CU_ASSERT(fabs(wake - 12.5) < 1e-9);
    ASSERT_EQ(crawl_frontier_pop(f, 12.5, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/2");
    free(it.url);
    crawl_frontier_done(f, h, 12.6);
    ASSERT_EQ(crawl_frontier_pop(f, 100, &it, &h, &wake), 0);
    CU_ASSERT(isinf(wake));
    crawl_frontier_free(f);
}

static void test_frontier_crawl_delay_capped(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0.5, .max_delay = 5};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
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
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
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
    ASSERT_EQ(crawl_frontier_pop(f, 1, &it, &h, &wake), 0);
    CU_ASSERT(isinf(wake));
    crawl_frontier_hold(f, a, 0, 1);
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    free(it.url);
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    free(it.url);
    ASSERT_EQ(crawl_host_active(a), 2);
    ASSERT_EQ(crawl_frontier_pop(f, 1, &it, &h, &wake), 0); /* 2 in flight */
    crawl_frontier_done(f, a, 1);
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 1, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/2");
    free(it.url);
    crawl_frontier_free(f); /* frees the 2 still queued */
}

/* Many hosts, no delay: every host is served in turn, none starves. */
static void test_frontier_no_starvation(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 0};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    enum { HOSTS = 50, PER = 20 };
    for (int i = 0; i < PER; i++)
        for (int k = 0; k < HOSTS; k++) {
            char u[64];
            snprintf(u, sizeof u, "http://h%d.example/%d", k, i);
            push(f, u, 0, 0, 0);
        }
    ASSERT_EQ(crawl_frontier_host_count(f), HOSTS);
    int served[HOSTS] = {0};
    double now = 1;
    /* the first HOSTS pops reach HOSTS different hosts */
    for (int n = 0; n < HOSTS * PER; n++) {
        struct crawl_item it;
        struct crawl_host *h;
        double wake;
        ASSERT_EQ_FATAL(crawl_frontier_pop(f, now, &it, &h, &wake), 1);
        int k = atoi(crawl_host_origin(h) + strlen("http://h"));
        served[k]++;
        if (n == HOSTS - 1)
            for (int j = 0; j < HOSTS; j++)
                ASSERT_EQ(served[j], 1);
        free(it.url);
        now += 0.001;
        crawl_frontier_done(f, h, now);
    }
    ASSERT_EQ(crawl_frontier_size(f), 0);
    crawl_frontier_free(f);
}

/* cancel gives the turn back: no delay is spent on an item that was not fetched */
static void test_frontier_cancel_keeps_turn(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 5};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 0, 0, 0);
    push(f, "http://a/2", 0, 0, 0);
    struct crawl_item it;
    struct crawl_host *h;
    double wake;
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 10, &it, &h, &wake), 1);
    free(it.url);
    crawl_frontier_cancel(f, h, 10);
    ASSERT_EQ(crawl_host_active(h), 0);
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 10, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/2");
    free(it.url);
    crawl_frontier_free(f);
}

/* pause: a host waits for max(not_before, now + delay), other hosts do not, and a pause
 * never brings a host's turn forward */
static void test_frontier_pause(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .delay = 1};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    push(f, "http://a/1", 0, 0, 0);
    push(f, "http://b/1", 0, 0, 0);
    struct crawl_host *a = host_of(f, "http://a/");
    crawl_frontier_pause(f, a, 30, 10); /* a robots.txt retry due at 30 */
    struct crawl_item it;
    struct crawl_host *h;
    double wake;
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 10, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://b/1");
    free(it.url);
    crawl_frontier_done(f, h, 10);
    ASSERT_EQ(crawl_frontier_pop(f, 29.9, &it, &h, &wake), 0);
    CU_ASSERT_DOUBLE_EQUAL(wake, 30, 1e-9);
    crawl_frontier_pause(f, a, 20, 15); /* earlier: no effect */
    ASSERT_EQ(crawl_frontier_pop(f, 29.9, &it, &h, &wake), 0);
    crawl_frontier_pause(f, a, 0, 29.5); /* a transfer ended at 29.5: its delay runs to 30.5 */
    ASSERT_EQ(crawl_frontier_pop(f, 30.2, &it, &h, &wake), 0);
    CU_ASSERT_DOUBLE_EQUAL(wake, 30.5, 1e-9);
    ASSERT_EQ_FATAL(crawl_frontier_pop(f, 30.5, &it, &h, &wake), 1);
    CU_ASSERT_STRING_EQUAL(it.url, "http://a/1");
    free(it.url);
    crawl_frontier_free(f);
}

static void test_frontier_cap(void)
{
    struct crawl_frontier_opts o = {.per_host = 1, .max_items = 3};
    struct crawl_frontier *f = NULL;
    ASSERT_EQ_FATAL(crawl_frontier_new(&o, &f), CRAWL_OK);
    struct crawl_host *h = host_of(f, "http://a/");
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(crawl_frontier_push(f, h, "http://a/x", 0, 0, 0, NULL, 0, 0), CRAWL_OK);
    ASSERT_EQ(crawl_frontier_push(f, h, "http://a/x", 0, 0, 0, NULL, 0, 0), CRAWL_ETOOLARGE);
    ASSERT_EQ(crawl_frontier_size(f), 3);
    crawl_frontier_free(f);
}

/* ---- the fetcher against tests/httpd ---- */

static char big_body[2 * 1024 * 1024];

static const char PAGE[] = "<html><head><title>t</title></head><body><p>hello</p></body></html>";

static const struct test_route fetch_routes[] = {
    {"/page.html",
     0,
     {.status = 200,
      .content_type = "text/html; charset=utf-8",
      .body = PAGE,
      .body_len = sizeof PAGE - 1}},
    {"/xhtml",
     0,
     {.status = 200,
      .content_type = "application/xhtml+xml",
      .body = PAGE,
      .body_len = sizeof PAGE - 1}},
    {"/gz.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE,
      .body_len = sizeof PAGE - 1,
      .gzip = 1}},
    {"/chunked.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE,
      .body_len = sizeof PAGE - 1,
      .chunked = 1}},
    {"/image.png",
     0,
     {.status = 200, .content_type = "image/png", .body = big_body, .body_len = sizeof big_body}},
    {"/missing", 0, {.status = 404, .content_type = "text/html", .body = "no", .body_len = 2}},
    {"/error", 0, {.status = 500, .content_type = "text/html", .body = "err", .body_len = 3}},
    {"/moved", 0, {.status = 301, .headers = "Location: /page.html"}},
    {"/big.html",
     0,
     {.status = 200, .content_type = "text/html", .body = big_body, .body_len = sizeof big_body}},
    {"/endless.html", 0, {.status = 200, .content_type = "text/html", .fault = TEST_FAULT_ENDLESS}},
    {"/hang.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE,
      .body_len = sizeof PAGE - 1,
      .fault = TEST_FAULT_HANG,
      .fault_ms = 10000}},
    {"/drip.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE,
      .body_len = sizeof PAGE - 1,
      .fault = TEST_FAULT_DRIP,
      .fault_ms = 1000}},
    {"/reset.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = big_body,
      .body_len = 200000,
      .fault = TEST_FAULT_RESET}},
    {"/robots.txt",
     0,
     {.status = 200,
      .content_type = "text/plain",
      .body = "User-agent: *\nDisallow: /x\n",
      .body_len = 27}},
};

/* Fetches every path at once; responses land in out[] in the order of paths. */
static void fetch_all(struct test_httpd *h, const struct crawl_fetcher_opts *o,
                      const char *const *paths, size_t n, enum crawl_fetch_kind kind,
                      struct crawl_response **out)
{
    struct crawl_fetcher *fx = NULL;
    ASSERT_EQ_FATAL(crawl_fetcher_new(o, &fx), CRAWL_OK);
    for (size_t i = 0; i < n; i++) {
        char url[256];
        out[i] = NULL;
        ASSERT_EQ(crawl_fetcher_add(fx, test_httpd_url(h, paths[i], url, sizeof url), kind,
                                    (void *)(uintptr_t)i),
                  CRAWL_OK);
    }
    size_t got = 0;
    double until = crawl_clock() + 20; /* a bound for a broken fetcher, never reached */
    while (got < n && crawl_clock() < until) {
        ASSERT_EQ_FATAL(crawl_fetcher_run(fx, 100), CRAWL_OK);
        struct crawl_response *r;
        while ((r = crawl_fetcher_next(fx)) != NULL) {
            out[(uintptr_t)r->userdata] = r;
            got++;
        }
    }
    ASSERT_EQ(got, n);
    ASSERT_EQ(crawl_fetcher_active(fx), 0);
    crawl_fetcher_free(fx);
}

static void test_fetch_outcomes(void)
{
    memset(big_body, 'a', sizeof big_body);
    struct test_httpd *h =
        test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_fetcher_opts o = {.concurrency = 16,
                                   .per_host = 16,
                                   .timeout = 3,
                                   .connect_timeout = 2,
                                   .low_speed_bytes = 100,
                                   .low_speed_time = 2,
                                   .max_body = 1024 * 1024,
                                   .user_agent = "simcrawl-test/1"};
    static const char *const paths[] = {
        "/page.html", "/xhtml",     "/gz.html",   "/chunked.html", "/image.png",
        "/missing",   "/error",     "/moved",     "/big.html",     "/endless.html",
        "/hang.html", "/drip.html", "/reset.html"};
    enum { N = sizeof paths / sizeof paths[0] };
    struct crawl_response *r[N];
    double t0 = crawl_clock();
    fetch_all(h, &o, paths, N, CRAWL_FETCH_PAGE, r);
    double took = crawl_clock() - t0;
    for (size_t i = 0; i < N; i++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);

    ASSERT_EQ(r[0]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[0]->status, 200);
    ASSERT_EQ(r[0]->len - r[0]->head_len, sizeof PAGE - 1);
    ASSERT_EQ(memcmp(r[0]->data + r[0]->head_len, PAGE, sizeof PAGE - 1), 0);
    ASSERT_EQ(strncmp(r[0]->data, "HTTP/1.1 200", 12), 0);
    CU_ASSERT(r[0]->head_len >= 4 && memcmp(r[0]->data + r[0]->head_len - 4, "\r\n\r\n", 4) == 0);
    CU_ASSERT_STRING_EQUAL(r[0]->content_type, "text/html; charset=utf-8");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[0]->request);
    CU_ASSERT(strstr(r[0]->request, "GET /page.html HTTP/1.1\r\n") == r[0]->request);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[0]->request, "User-Agent: simcrawl-test/1"));
    CU_ASSERT_STRING_EQUAL(r[0]->ip, "127.0.0.1");
    CU_ASSERT_STRING_EQUAL(r[0]->error, "");

    ASSERT_EQ(r[1]->result, CRAWL_FETCH_DONE); /* xhtml is html */
    /* gzip: kept as the server coded it, for the WARC */
    ASSERT_EQ(r[2]->result, CRAWL_FETCH_DONE);
    CU_ASSERT_PTR_NOT_NULL(r[2]->content_encoding);
    CU_ASSERT(r[2]->len - r[2]->head_len >= 2 && (unsigned char)r[2]->data[r[2]->head_len] == 0x1f);
    /* chunked: curl removed the coding, the head says so under another name */
    ASSERT_EQ(r[3]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[3]->len - r[3]->head_len, sizeof PAGE - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[3]->data, "X-Crawler-Transfer-Encoding: chunked"));
    /* not html: aborted after the headers, before 2 MB were sent */
    ASSERT_EQ(r[4]->result, CRAWL_FETCH_FILTERED);
    CU_ASSERT(r[4]->len - r[4]->head_len < sizeof big_body);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[4]->error, "image/png"));
    ASSERT_EQ(r[5]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[5]->status, 404);
    ASSERT_EQ(r[6]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[6]->status, 500);
    /* redirects are not followed: the loop follows them */
    ASSERT_EQ(r[7]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[7]->status, 301);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[7]->location);
    CU_ASSERT_STRING_EQUAL(r[7]->location, "/page.html");
    /* body caps: announced length and endless body */
    ASSERT_EQ(r[8]->result, CRAWL_FETCH_TOOLARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[8]->error, "too large"));
    ASSERT_EQ(r[9]->result, CRAWL_FETCH_TOOLARGE);
    CU_ASSERT(r[9]->len - r[9]->head_len <= o.max_body);
    /* hang: total timeout; drip: low-speed or total timeout */
    ASSERT_EQ(r[10]->result, CRAWL_FETCH_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r[10]->error, "timeout"));
    ASSERT_EQ(r[11]->result, CRAWL_FETCH_TIMEOUT);
    /* reset in the middle of the body */
    ASSERT_EQ(r[12]->result, CRAWL_FETCH_FAILED);
    CU_ASSERT_NOT_EQUAL(r[12]->error[0], '\0');
    /* all at once: the slow ones overlapped (3 s timeout each, not 3 x 3 s) */
    CU_ASSERT(took < 8);
    for (size_t i = 0; i < N; i++)
        crawl_response_free(r[i]);
    test_httpd_stop(h);
}

/* A raw loopback server for heads no HTTP library would send: it answers every
 * connection with a status line and then `head_bytes` bytes of header, as one line
 * ("X-Big: aaaa...") or as 1 KB lines, and closes. Bounded: it serves until stopped. */
struct raw_server {
    int fd;
    int port;
    int one_line;
    size_t head_bytes;
    volatile int stop;
    pthread_t thread;
};

static void *raw_serve(void *arg)
{
    struct raw_server *rs = arg;
    char line[1024];
    memset(line, 'a', sizeof line);
    while (!rs->stop) {
        struct pollfd p = {rs->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int c = accept(rs->fd, NULL, NULL);
        if (c < 0)
            continue;
        char req[4096];
        (void)recv(c, req, sizeof req, 0);
        static const char start[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n";
        int ok = send(c, start, sizeof start - 1, MSG_NOSIGNAL) > 0;
        if (ok && rs->one_line)
            ok = send(c, "X-Big: ", 7, MSG_NOSIGNAL) > 0;
        for (size_t sent = 0, i = 0; ok && sent < rs->head_bytes && !rs->stop; i++) {
            if (rs->one_line) {
                ok = send(c, line, sizeof line, MSG_NOSIGNAL) > 0;
                sent += sizeof line;
            } else {
                char h[1100];
                int n = snprintf(h, sizeof h, "X-H%zu: %.1000s\r\n", i, line);
                ok = send(c, h, (size_t)n, MSG_NOSIGNAL) > 0;
                sent += (size_t)n;
            }
        }
        close(c);
    }
    return NULL;
}

static int raw_server_start(struct raw_server *rs, int one_line, size_t head_bytes)
{
    memset(rs, 0, sizeof *rs);
    rs->one_line = one_line;
    rs->head_bytes = head_bytes;
    rs->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (rs->fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(rs->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(rs->fd, 8) != 0 ||
        getsockname(rs->fd, (struct sockaddr *)&a, &al) != 0 ||
        pthread_create(&rs->thread, NULL, raw_serve, rs) != 0) {
        close(rs->fd);
        return -1;
    }
    rs->port = ntohs(a.sin_port);
    return 0;
}

static void raw_server_stop(struct raw_server *rs)
{
    rs->stop = 1;
    pthread_join(rs->thread, NULL);
    close(rs->fd);
}

/* A head over a cap is reported as over that cap, naming it, not as "Out of memory":
 * one 100 MB header line (libcurl's line cap) and 300 KB of short lines (ours). */
static void test_fetch_header_caps(void)
{
    struct raw_server line, many;
    ASSERT_EQ_FATAL(raw_server_start(&line, 1, 100u << 20), 0);
    ASSERT_EQ_FATAL(raw_server_start(&many, 0, 300u << 10), 0);
    struct crawl_fetcher_opts o = {.concurrency = 4,
                                   .per_host = 4,
                                   .timeout = 10,
                                   .connect_timeout = 2,
                                   .max_body = 1024 * 1024,
                                   .user_agent = "simcrawl-test/1"};
    struct crawl_fetcher *fx = NULL;
    ASSERT_EQ_FATAL(crawl_fetcher_new(&o, &fx), CRAWL_OK);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/line.html", line.port);
    ASSERT_EQ(crawl_fetcher_add(fx, url, CRAWL_FETCH_PAGE, (void *)(uintptr_t)0), CRAWL_OK);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/many.html", many.port);
    ASSERT_EQ(crawl_fetcher_add(fx, url, CRAWL_FETCH_PAGE, (void *)(uintptr_t)1), CRAWL_OK);
    struct crawl_response *r[2] = {NULL, NULL};
    size_t got = 0;
    double until = crawl_clock() + 20;
    while (got < 2 && crawl_clock() < until) {
        ASSERT_EQ_FATAL(crawl_fetcher_run(fx, 100), CRAWL_OK);
        struct crawl_response *x;
        while ((x = crawl_fetcher_next(fx)) != NULL) {
            r[(uintptr_t)x->userdata] = x;
            got++;
        }
    }
    crawl_fetcher_free(fx);
    raw_server_stop(&line);
    raw_server_stop(&many);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r[1]);
    ASSERT_EQ(r[0]->result, CRAWL_FETCH_FAILED);
    CU_ASSERT_STRING_EQUAL(r[0]->error,
                           "a response header line over 102400 bytes (libcurl's header line cap)");
    ASSERT_EQ(r[1]->result, CRAWL_FETCH_FAILED);
    CU_ASSERT_STRING_EQUAL(r[1]->error, "response headers over 262144 bytes (the header cap)");
    crawl_response_free(r[0]);
    crawl_response_free(r[1]);
}

static void test_fetch_robots_kind(void)
{
    struct test_httpd *h =
        test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_fetcher_opts o = {.timeout = 3};
    static const char *const paths[] = {"/robots.txt", "/moved", "/image.png"};
    struct crawl_response *r[3];
    fetch_all(h, &o, paths, 3, CRAWL_FETCH_ANY, r);
    ASSERT_EQ(r[0]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[0]->status, 200);
    ASSERT_EQ(strcmp(r[0]->data + r[0]->head_len, "User-agent: *\nDisallow: /x\n"), 0);
    /* robots fetches follow redirects */
    ASSERT_EQ(r[1]->result, CRAWL_FETCH_DONE);
    ASSERT_EQ(r[1]->status, 200);
    /* any type, cut at the robots cap with what fit kept */
    ASSERT_EQ(r[2]->result, CRAWL_FETCH_TOOLARGE);
    ASSERT_EQ(r[2]->len - r[2]->head_len, CRAWL_ROBOTS_MAX_BYTES);
    for (int i = 0; i < 3; i++)
        crawl_response_free(r[i]);
    test_httpd_stop(h);
}

/* 40 pages over 4 connections: every page arrives, connections are reused. */
static void test_fetch_many_reuse(void)
{
    struct test_httpd *h =
        test_httpd_start(fetch_routes, sizeof fetch_routes / sizeof fetch_routes[0], NULL, NULL);
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
        ASSERT_EQ(r[i]->status, 200);
        crawl_response_free(r[i]);
    }
    ASSERT_EQ(test_httpd_count(h, "/page.html"), N);
    test_httpd_stop(h);
}

/* ---- the crawl loop, with a test process() that finds href="..." links ---- */

struct log_line {
    char url[200];
    char error[200];
    char referrer[200]; /* "" for none */
    long status;
    unsigned depth;
    enum crawl_decision decision;
    long links;
};

struct loop_ctx {
    struct log_line lines[512];
    size_t n;
    pthread_mutex_t lock;
    unsigned processed;
};

static int test_process(void *userdata, const struct crawl_page *page, struct crawl_verdict *v)
{
    struct loop_ctx *ctx = userdata;
    pthread_mutex_lock(&ctx->lock);
    ctx->processed++;
    pthread_mutex_unlock(&ctx->lock);
    char *html = strndup(page->body, page->body_len);
    if (!html)
        return -1;
    if (strstr(html, "<!--dup-->")) {
        v->decision = CRAWL_DECISION_NEAR_DUPLICATE;
        v->distance = 1;
        if (crawl_verdict_set(&v->duplicate_of, "http://original/") != CRAWL_OK) {
            free(html);
            return -1;
        }
    }
    for (char *p = strstr(html, "href=\""); p; p = strstr(p, "href=\"")) {
        p += 6;
        char *e = strchr(p, '"');
        if (!e)
            break;
        *e = '\0';
        if (crawl_verdict_add_link(v, p, 0) != CRAWL_OK) {
            free(html);
            return -1;
        }
        p = e + 1;
    }
    free(html);
    return 0;
}

static void test_record(void *userdata, const struct crawl_record *rec)
{
    struct loop_ctx *ctx = userdata;
    if (ctx->n >= sizeof ctx->lines / sizeof ctx->lines[0])
        return;
    struct log_line *l = &ctx->lines[ctx->n++];
    snprintf(l->url, sizeof l->url, "%s", rec->url);
    snprintf(l->error, sizeof l->error, "%s", rec->error ? rec->error : "");
    snprintf(l->referrer, sizeof l->referrer, "%s", rec->referrer ? rec->referrer : "");
    l->status = rec->status;
    l->depth = rec->depth;
    l->decision = rec->decision;
    l->links = rec->links;
}

/* The log line of the URL whose path (and query) is exactly path. */
static const struct log_line *find_line(const struct loop_ctx *ctx, const char *path)
{
    for (size_t i = 0; i < ctx->n; i++) {
        struct crawl_url_parts p;
        if (crawl_url_split(ctx->lines[i].url, &p) == CRAWL_OK &&
            strcmp(ctx->lines[i].url + p.path_off, path) == 0)
            return &ctx->lines[i];
    }
    return NULL;
}

static const struct log_line *find_host(const struct loop_ctx *ctx, const char *needle)
{
    for (size_t i = 0; i < ctx->n; i++)
        if (strstr(ctx->lines[i].url, needle))
            return &ctx->lines[i];
    return NULL;
}

static size_t count_decision(const struct loop_ctx *ctx, enum crawl_decision d)
{
    size_t k = 0;
    for (size_t i = 0; i < ctx->n; i++)
        k += ctx->lines[i].decision == d;
    return k;
}

/* /t/N links to /t/2N+1 and /t/2N+2 while below 63: a binary tree of 63 pages. */
static int tree_handler(void *userdata, const struct test_httpd_request *req,
                        struct test_response *out)
{
    (void)userdata;
    int n;
    if (sscanf(req->path, "/t/%d", &n) != 1 || n < 0 || n >= 63)
        return 1;
    char *body = malloc(512);
    if (!body)
        return 1;
    int len = snprintf(body, 512,
                       "<html><body><h1>page %d</h1><a href=\"/t/%d\">a</a> "
                       "<a href=\"../t/%d#frag\">b</a> <a href=\"mailto:x@y\">m</a>"
                       "</body></html>",
                       n, 2 * n + 1, 2 * n + 2);
    out->status = 200;
    out->content_type = "text/html";
    out->body = body;
    out->body_len = (size_t)len;
    out->body_free = 1;
    return 0;
}

static struct crawl *loop_new3(struct loop_ctx *ctx, struct crawl_opts *o, int low_speed)
{
    memset(ctx, 0, sizeof *ctx);
    pthread_mutex_init(&ctx->lock, NULL);
    o->process = test_process;
    o->record = test_record;
    o->userdata = ctx;
    if (o->timeout == 0)
        o->timeout = 2;
    if (o->connect_timeout == 0)
        o->connect_timeout = 1;
    o->low_speed_time = low_speed ? 1 : 1000;
    o->low_speed_bytes = low_speed ? 100 : 1;
    o->user_agent = "simcrawl-test/1";
    struct crawl *c = NULL;
    char err[256];
    ASSERT_EQ(crawl_new(o, &c, err, sizeof err), CRAWL_OK);
    return c;
}

static struct crawl *loop_new(struct loop_ctx *ctx, struct crawl_opts *o)
{
    return loop_new3(ctx, o, 1);
}

static void test_loop_tree_coverage(void)
{
    struct test_httpd *h = test_httpd_start(NULL, 0, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0, .concurrency = 8, .per_host = 4, .max_depth = -1, .ignore_robots = 1};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    const struct crawl_stats *st = crawl_get_stats(c);
    /* 63 pages, each fetched once; the 64 links of the leaves are 404s */
    ASSERT_EQ(st->new_pages, 63);
    ASSERT_EQ(ctx.processed, 63);
    ASSERT_EQ(count_decision(&ctx, CRAWL_DECISION_NEW), 63);
    ASSERT_EQ(count_decision(&ctx, CRAWL_DECISION_ERROR), 64);
    char path[32];
    for (int i = 0; i < 63; i++) {
        snprintf(path, sizeof path, "/t/%d", i);
        ASSERT_EQ(test_httpd_count(h, path), 1);
    }
    ASSERT_EQ(st->errors, 64);
    ASSERT_EQ(test_httpd_total(h), 127);
    const struct log_line *l = find_line(&ctx, "/t/0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->links, 2);
    ASSERT_EQ(l->depth, 0);
    l = find_line(&ctx, "/t/70");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    ASSERT_EQ(l->status, 404);
    crawl_free(c);
    test_httpd_stop(h);
}

static void test_loop_depth_and_page_limits(void)
{
    struct test_httpd *h = test_httpd_start(NULL, 0, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0, .concurrency = 4, .max_depth = 2, .ignore_robots = 1};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_total(h), 7); /* depths 0, 1, 2 */
    ASSERT_EQ(test_httpd_count(h, "/t/7"), 0);
    crawl_free(c);
    test_httpd_stop(h);

    h = test_httpd_start(NULL, 0, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_opts o2 = {
        .delay = 0, .concurrency = 8, .max_pages = 10, .max_depth = -1, .ignore_robots = 1};
    c = loop_new(&ctx, &o2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_total(h), 10);
    ASSERT_EQ(crawl_get_stats(c)->fetched, 10);
    /* breadth-first: the 10 are depths 0..2 (7 pages) and 3 of depth 3 */
    for (int i = 0; i < 7; i++) {
        char path[16];
        snprintf(path, sizeof path, "/t/%d", i);
        ASSERT_EQ(test_httpd_count(h, path), 1);
    }
    crawl_free(c);
    test_httpd_stop(h);
}

/* Requests to one host are spaced by the delay (server-side times). */
static void test_loop_politeness_delay(void)
{
    static const struct test_route routes[] = {
        {"/robots.txt",
         0,
         {.status = 200,
          .content_type = "text/plain",
          .body = "User-agent: *\nCrawl-delay: 0.4\n",
          .body_len = 30}},
    };
    struct test_httpd *h = test_httpd_start(routes, 1, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0.2, .concurrency = 8, .per_host = 1, .max_pages = 6, .max_depth = -1};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/robots.txt"), 1);
    size_t n = test_httpd_total(h);
    ASSERT_EQ(n, 7);
    /* robots.txt first, then pages; Crawl-delay 0.4 raised the 0.2 delay */
    const struct test_httpd_request *first = test_httpd_request_at(h, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_STRING_EQUAL(first->path, "/robots.txt");
    for (size_t i = 2; i < n; i++) {
        double gap = test_httpd_request_at(h, i)->time - test_httpd_request_at(h, i - 1)->time;
        if (gap < 0.39)
            fprintf(stderr, "\nrequest %zu came %.3f s after the previous one\n", i, gap);
        CU_ASSERT(gap >= 0.39);
    }
    crawl_free(c);
    test_httpd_stop(h);
}

static void test_loop_robots_disallowed_never_fetched(void)
{
    static const char robots[] = "User-agent: *\nDisallow: /t/1\n";
    static const struct test_route routes[] = {
        {"/robots.txt",
         0,
         {.status = 200,
          .content_type = "text/plain",
          .body = robots,
          .body_len = sizeof robots - 1}},
    };
    struct test_httpd *h = test_httpd_start(routes, 1, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0, .concurrency = 4, .max_depth = 3};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    /* /t/1 and its subtree (and /t/1x) are never requested */
    for (size_t i = 0; i < test_httpd_total(h); i++)
        CU_ASSERT(strncmp(test_httpd_request_at(h, i)->path, "/t/1", 4) != 0);
    ASSERT_EQ(test_httpd_count(h, "/t/2"), 1);
    ASSERT_EQ(test_httpd_count(h, "/robots.txt"), 1);
    const struct log_line *l = find_line(&ctx, "/t/1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ROBOTS_DISALLOWED);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "Disallow: /t/1"));
    crawl_free(c);
    test_httpd_stop(h);
}

/* robots.txt cut by a TCP reset (an answer, cut short: the server failing, like a 5xx):
 * the host is held, retried, then given up at the outage limit, and the log says why in
 * curl's words, not only "unavailable" */
static void test_loop_robots_unreachable_says_why(void)
{
    static char robots[64 * 1024];
    memset(robots, '#', sizeof robots);
    static const struct test_route routes[] = {
        {"/robots.txt",
         0,
         {.status = 200,
          .content_type = "text/plain",
          .body = robots,
          .body_len = sizeof robots,
          .fault = TEST_FAULT_RESET}},
    };
    struct test_httpd *h = test_httpd_start(routes, 1, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0, .concurrency = 4, .max_depth = 3, .robots_outage = 1, .robots_backoff = 0.3};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/t/0"), 0);
    CU_ASSERT(test_httpd_count(h, "/robots.txt") >= 2); /* retried */
    const struct log_line *l = find_line(&ctx, "/t/0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ROBOTS_DISALLOWED);
    /* "robots.txt unavailable (<curl's error>) for 1 s" */
    const char *open = strstr(l->error, "robots.txt unavailable (");
    const char *close = strstr(l->error, ") for 1 s");
    CU_ASSERT_PTR_NOT_NULL_FATAL(open);
    CU_ASSERT_PTR_NOT_NULL_FATAL(close);
    const char *why = open + strlen("robots.txt unavailable (");
    CU_ASSERT(close - why >= 8);              /* a reason, not "" */
    CU_ASSERT(strncmp(why, "HTTP ", 5) != 0); /* a network error, not an HTTP status */
    crawl_free(c);
    test_httpd_stop(h);
}

/* robots.txt answers `status` to the first `failures` requests, then 200 allowing all;
 * everything else is the tree of tree_handler. */
struct flaky_robots {
    pthread_mutex_t lock;
    int status;
    unsigned failures;
    unsigned seen;
};

static int flaky_robots_handler(void *userdata, const struct test_httpd_request *req,
                                struct test_response *out)
{
    struct flaky_robots *fr = userdata;
    if (strcmp(req->path, "/robots.txt") != 0)
        return tree_handler(NULL, req, out);
    pthread_mutex_lock(&fr->lock);
    int fail = fr->seen++ < fr->failures;
    pthread_mutex_unlock(&fr->lock);
    static const char allow[] = "User-agent: *\nAllow: /\n";
    out->status = fail ? fr->status : 200;
    out->content_type = "text/plain";
    out->body = fail ? "down" : allow;
    out->body_len = fail ? 4 : sizeof allow - 1;
    return 0;
}

/* A server of the tree pages whose robots.txt fails with status the first failures times
 * (fr is the caller's, initialised here); stop it with flaky_stop(). */
static struct test_httpd *flaky_start(struct flaky_robots *fr, int status, unsigned failures)
{
    *fr = (struct flaky_robots){.status = status, .failures = failures};
    pthread_mutex_init(&fr->lock, NULL);
    return test_httpd_start(NULL, 0, flaky_robots_handler, fr);
}

static void flaky_stop(struct test_httpd *h, struct flaky_robots *fr)
{
    test_httpd_stop(h);
    pthread_mutex_destroy(&fr->lock);
}

/* Issue 12 item 5: robots.txt answers 500 once, then 200. The seed is held, not dropped:
 * robots.txt is fetched again after the backoff, and the seed and the pages it links to
 * are crawled and logged new. */
static void test_loop_robots_5xx_then_ok_crawls(void)
{
    struct flaky_robots fr;
    struct test_httpd *h = flaky_start(&fr, 500, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0, .concurrency = 4, .max_depth = 1, .robots_outage = 10, .robots_backoff = 0.5};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/robots.txt"), 2);
    double t[2];
    ASSERT_EQ(test_httpd_times(h, "/robots.txt", t, 2), 2);
    CU_ASSERT(t[1] - t[0] >= 0.45); /* the backoff was kept */
    const char *pages[] = {"/t/0", "/t/1", "/t/2"};
    for (size_t i = 0; i < 3; i++) {
        ASSERT_EQ(test_httpd_count(h, pages[i]), 1);
        const struct log_line *l = find_line(&ctx, pages[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        ASSERT_EQ(l->decision, CRAWL_DECISION_NEW);
    }
    ASSERT_EQ(count_decision(&ctx, CRAWL_DECISION_ROBOTS_DISALLOWED), 0);
    CU_ASSERT(crawl_get_stats(c)->elapsed < 5);
    crawl_free(c);
    flaky_stop(h, &fr);
}

/* The robots.txt retry and the page after it keep the host's delay, however short the
 * backoff. */
static void test_loop_robots_retry_keeps_delay(void)
{
    struct flaky_robots fr;
    struct test_httpd *h = flaky_start(&fr, 503, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0.5,
                           .concurrency = 4,
                           .max_depth = 0,
                           .robots_outage = 10,
                           .robots_backoff = 0.05};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_total(h), 3); /* robots.txt 503, robots.txt 200, /t/0 */
    for (size_t i = 1; i < test_httpd_total(h) && i < 3; i++) {
        double gap = test_httpd_request_at(h, i)->time - test_httpd_request_at(h, i - 1)->time;
        CU_ASSERT(gap >= 0.49);
    }
    const struct log_line *l = find_line(&ctx, "/t/0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_NEW);
    crawl_free(c);
    flaky_stop(h, &fr);
}

/* robots.txt always 503, outage limit 2 s: the seed is held and robots.txt retried with
 * backoff, then the seed is logged robots-disallowed with the reason after about 2 s, and
 * the crawl ends. */
static void test_loop_robots_5xx_outage_limit(void)
{
    static const struct test_route routes[] = {
        {"/robots.txt",
         0,
         {.status = 503, .content_type = "text/plain", .body = "down", .body_len = 4}},
    };
    struct test_httpd *h = test_httpd_start(routes, 1, tree_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0, .concurrency = 4, .max_depth = 3, .robots_outage = 2, .robots_backoff = 0.25};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/t/0"), 0);
    /* retries at 0.25, 0.75, 1.75 and at the limit, 2 s */
    double t[16];
    size_t n = test_httpd_times(h, "/robots.txt", t, 16);
    CU_ASSERT(n >= 4 && n <= 6);
    if (n >= 2 && n <= 16) {
        CU_ASSERT(t[1] - t[0] >= 0.2);
        CU_ASSERT(t[n - 1] - t[0] >= 1.9);
        CU_ASSERT(t[n - 1] - t[0] <= 2.5);
    }
    const struct log_line *l = find_line(&ctx, "/t/0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ROBOTS_DISALLOWED);
    CU_ASSERT_STRING_EQUAL(l->error, "robots.txt unavailable (HTTP 503) for 2 s");
    double el = crawl_get_stats(c)->elapsed;
    CU_ASSERT(el >= 1.9 && el < 4);
    crawl_free(c);
    test_httpd_stop(h);
}

/* A loopback TCP socket on a free port (*port) that no one serves: only bound (connecting
 * is refused) or, with listening, listening but never accepted from (the kernel completes
 * handshakes, nothing answers). Returns the fd (caller closes) or -1. */
static int dead_host_socket(int listening, unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || (listening && listen(fd, 16) != 0) ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* The log lines of the dead host whose seed is dead ("http://127.0.0.1:PORT/t/0"): each
 * must be an error saying the host was unreachable and holding want; returns how many. */
static size_t dead_host_errors(const struct loop_ctx *ctx, const char *dead, const char *want)
{
    size_t errors = 0;
    for (size_t i = 0; i < ctx->n; i++) {
        if (strncmp(ctx->lines[i].url, dead, strlen(dead) - 4) != 0)
            continue;
        ASSERT_EQ(ctx->lines[i].decision, CRAWL_DECISION_ERROR);
        CU_ASSERT_PTR_NOT_NULL(strstr(ctx->lines[i].error, "host unreachable: robots.txt: "));
        CU_ASSERT_PTR_NOT_NULL(strstr(ctx->lines[i].error, want));
        errors++;
    }
    return errors;
}

/* Seeds c with two URLs of the dead host on port (dead: the first, "http://127.0.0.1:PORT/
 * t/0", for dead_host_errors()) and the live host h's /t/0. */
static void dead_and_live_seeds(struct crawl *c, unsigned port, struct test_httpd *h,
                                char dead[128])
{
    char url[128], dead2[128];
    snprintf(dead, 128, "http://127.0.0.1:%u/t/0", port);
    snprintf(dead2, sizeof dead2, "http://127.0.0.1:%u/t/5", port);
    ASSERT_EQ(crawl_add_seed(c, dead), CRAWL_OK);
    ASSERT_EQ(crawl_add_seed(c, dead2), CRAWL_OK);
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/t/0", url, sizeof url)), CRAWL_OK);
}

/* A port that refuses connections: a short retry, then the host's URLs are errors and the
 * crawl goes on with the other host and ends quickly. */
static void test_loop_robots_refused_host_errors(void)
{
    /* bound, never listening: connecting to it is refused, and no one else gets the port */
    unsigned port = 0;
    int fd = dead_host_socket(0, &port);
    CU_ASSERT_FATAL(fd >= 0);
    struct flaky_robots fr;
    struct test_httpd *h = flaky_start(&fr, 500, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0,
                           .concurrency = 4,
                           .max_depth = 1,
                           .robots_backoff = 0.2,
                           .unreachable_retries = 2};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char dead[128];
    dead_and_live_seeds(c, port, h, dead);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    /* the live host is crawled */
    ASSERT_EQ(test_httpd_count(h, "/t/1"), 1);
    /* both URLs of the dead host: errors naming the host and the attempts */
    ASSERT_EQ(dead_host_errors(&ctx, dead, "(3 attempts in "), 2);
    ASSERT_EQ(count_decision(&ctx, CRAWL_DECISION_ROBOTS_DISALLOWED), 0);
    ASSERT_EQ(crawl_get_stats(c)->robots_fetched, 4); /* 3 refused + 1 live */
    double el = crawl_get_stats(c)->elapsed;
    CU_ASSERT(el >= 0.5 && el < 3); /* retries at 0.2 and 0.6 s */
    crawl_free(c);
    flaky_stop(h, &fr);
    close(fd);
}

/* Issue 12 item 5: a host that takes connections but never answers (a listening socket
 * no one accepts from), with connect and transfer timeouts far above --unreachable-time:
 * its URLs are logged as errors naming the time cap within about that time, and the
 * crawl goes on with the other host and ends. Before the cap it took 1 + retries
 * timeouts and their backoff. */
static void test_loop_robots_silent_host_time_cap(void)
{
    unsigned port = 0;
    int fd = dead_host_socket(1, &port); /* listening: the kernel completes the handshakes */
    CU_ASSERT_FATAL(fd >= 0);
    struct flaky_robots fr;
    struct test_httpd *h = flaky_start(&fr, 500, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0,
                           .concurrency = 4,
                           .max_depth = 1,
                           .robots_backoff = 0.2,
                           .unreachable_retries = 10,
                           .unreachable_time = 1,
                           .timeout = 20,
                           .connect_timeout = 20};
    struct crawl *c = loop_new3(&ctx, &o, 0); /* no low-speed abort either */
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char dead[128];
    dead_and_live_seeds(c, port, h, dead);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/t/1"), 1); /* the live host is crawled */
    ASSERT_EQ(dead_host_errors(&ctx, dead, "; --unreachable-time)"), 2);
    double el = crawl_get_stats(c)->elapsed;
    CU_ASSERT(el >= 0.9 && el < 2.5); /* about the cap, not 20 s */
    crawl_free(c);
    flaky_stop(h, &fr);
    close(fd);
}

static const char LINKS_PAGE[] =
    "<html><body>"
    "<a href=\"/r1\">r</a> <a href=\"/loop1\">l</a> <a href=\"/missing\">m</a> "
    "<a href=\"/error\">e</a> <a href=\"/image.png\">i</a> <a href=\"/hang.html\">h</a> "
    "<a href=\"/drip.html\">d</a> <a href=\"/reset.html\">x</a> "
    "<a href=\"/endless.html\">n</a> <a href=\"http://other.invalid/\">o</a>"
    "</body></html>";

static const struct test_route fault_routes[] = {
    {"/",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = LINKS_PAGE,
      .body_len = sizeof LINKS_PAGE - 1}},
    {"/r1", 0, {.status = 301, .headers = "Location: /r2"}},
    {"/r2", 0, {.status = 302, .headers = "Location: /final.html#top"}},
    {"/final.html",
     0,
     {.status = 200, .content_type = "text/html", .body = "<p>final</p>", .body_len = 12}},
    {"/loop1", 0, {.status = 302, .headers = "Location: /loop2"}},
    {"/loop2", 0, {.status = 302, .headers = "Location: /loop1"}},
    {"/missing", 0, {.status = 404, .content_type = "text/html", .body = "no", .body_len = 2}},
    {"/error", 0, {.status = 500, .content_type = "text/html", .body = "err", .body_len = 3}},
    {"/image.png",
     0,
     {.status = 200, .content_type = "image/png", .body = "\x89PNG", .body_len = 4}},
    {"/hang.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = "x",
      .body_len = 1,
      .fault = TEST_FAULT_HANG,
      .fault_ms = 20000}},
    {"/drip.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = LINKS_PAGE,
      .body_len = sizeof LINKS_PAGE - 1,
      .fault = TEST_FAULT_DRIP}},
    {"/reset.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = LINKS_PAGE,
      .body_len = sizeof LINKS_PAGE - 1,
      .fault = TEST_FAULT_RESET}},
    {"/endless.html", 0, {.status = 200, .content_type = "text/html", .fault = TEST_FAULT_ENDLESS}},
};

/* The memory budget (issue 12 item 6): many large bodies at once under a small budget.
 * Plain 1.5 MB pages wait for room (paused) and are all fetched; gzip pages that decode to
 * 200 KB are all decoded (two workers decode at once, within the quarter of the budget the
 * fetcher leaves them); one that decodes to 1.5 MB is decoded or fails naming the budget;
 * a page alone over the budget fails naming it. The most ever held stays within it. */
#define MEM_BIG (1536u * 1024)
#define MEM_BUDGET (4u * 1024 * 1024)

static char *mem_page(size_t size, unsigned n)
{
    char *b = malloc(size + 1);
    if (!b)
        return NULL;
    size_t len = (size_t)snprintf(b, size, "<html><body><h1>big %u</h1><p>", n);
    while (len + 60 < size) {
        memcpy(b + len, "the tide tables are pinned by the door ", 39);
        len += 39;
    }
    len += (size_t)snprintf(b + len, size - len, "</p></body></html>");
    memset(b + len, ' ', size - len);
    b[size] = '\0';
    return b;
}

static void test_loop_memory_budget(void)
{
    enum { N_PLAIN = 8, N_GZIP = 4 };
    char *bodies[N_PLAIN + N_GZIP + 1] = {0};
    char paths[N_PLAIN + N_GZIP + 1][32];
    struct test_route routes[N_PLAIN + N_GZIP + 2];
    char home[2048];
    size_t hl = (size_t)snprintf(home, sizeof home, "<html><body><h1>many big pages</h1>");
    for (unsigned i = 0; i < N_PLAIN + N_GZIP + 1; i++) {
        int huge = i == N_PLAIN + N_GZIP;
        size_t size = huge                                       ? MEM_BUDGET + 1024 * 1024
                      : i < N_PLAIN || i == N_PLAIN + N_GZIP - 1 ? MEM_BIG
                                                                 : 200u * 1024;
        bodies[i] = mem_page(size, i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bodies[i]);
        snprintf(paths[i], sizeof paths[i],
                 huge          ? "/huge.html"
                 : i < N_PLAIN ? "/big/%u.html"
                               : "/gz/%u.html",
                 i);
        memset(&routes[i + 1], 0, sizeof routes[i + 1]);
        routes[i + 1].path = paths[i];
        routes[i + 1].response.status = 200;
        routes[i + 1].response.content_type = "text/html";
        routes[i + 1].response.body = bodies[i];
        routes[i + 1].response.body_len = strlen(bodies[i]);
        routes[i + 1].response.gzip = i >= N_PLAIN && !huge;
        hl += (size_t)snprintf(home + hl, sizeof home - hl, "<a href=\"%s\">p</a> ", paths[i]);
    }
    snprintf(home + hl, sizeof home - hl, "</body></html>");
    memset(&routes[0], 0, sizeof routes[0]);
    routes[0].path = "/";
    routes[0].response.status = 200;
    routes[0].response.content_type = "text/html";
    routes[0].response.body = home;
    routes[0].response.body_len = strlen(home);
    struct test_httpd *h = test_httpd_start(routes, N_PLAIN + N_GZIP + 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);

    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0,
                           .concurrency = 16,
                           .per_host = 16,
                           .max_depth = -1,
                           .ignore_robots = 1,
                           .max_body = 8u << 20,
                           .timeout = 30,
                           .workers = 2,
                           .max_memory = MEM_BUDGET};
    struct crawl *c = loop_new3(&ctx, &o, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/", url, sizeof url)), CRAWL_OK);
    double t0 = crawl_clock();
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    CU_ASSERT(crawl_clock() - t0 < 20);
    const struct crawl_stats *st = crawl_get_stats(c);
    /* the counter: bodies were held (more than one page's worth), never over the budget */
    ASSERT_EQ(st->mem_limit, MEM_BUDGET);
    CU_ASSERT(st->mem_peak > MEM_BIG);
    CU_ASSERT(st->mem_peak <= MEM_BUDGET);
    ASSERT_EQ(st->mem_held, 0);
    /* every plain page was fetched whole: they waited for room, none failed */
    size_t waited_ok = 0, gz_ok = 0;
    for (unsigned i = 0; i < N_PLAIN + N_GZIP; i++) {
        const struct log_line *l = find_line(&ctx, paths[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        ASSERT_EQ(test_httpd_count(h, paths[i]), 1);
        if (getenv("TEST_VERBOSE"))
            fprintf(stderr, "%s: %d %s\n", paths[i], (int)l->decision, l->error);
        if (i < N_PLAIN) {
            ASSERT_EQ(l->decision, CRAWL_DECISION_NEW);
            waited_ok += l->decision == CRAWL_DECISION_NEW;
        } else if (l->decision == CRAWL_DECISION_NEW) {
            gz_ok++;
        } else {
            ASSERT_EQ(i, N_PLAIN + N_GZIP - 1); /* only the 1.5 MB one may fail */
            /* a decode that found no room says so, with the budget */
            ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
            CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "memory budget of 4194304 bytes"));
        }
    }
    ASSERT_EQ(waited_ok, N_PLAIN);
    CU_ASSERT(gz_ok >= N_GZIP - 1);
    /* a page alone over the budget fails, naming it */
    const struct log_line *l = find_line(&ctx, "/huge.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "over the memory budget of 4194304 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "--max-memory"));
    crawl_free(c);
    pthread_mutex_destroy(&ctx.lock);
    test_httpd_stop(h);
    for (unsigned i = 0; i < N_PLAIN + N_GZIP + 1; i++)
        free(bodies[i]);
}

/* The Bloom filter of the bounded seen set: never a false negative; false positives at
 * the rate of its design (5 bits a hash: (1 - e^-5/b)^5 with b bits per hash). */
/* ---- the state's page texts (crawl_state_page_add_text) ---- */

struct texts_seen {
    int n;
    int status[8];
    char text[8][64];
};

static int texts_row(void *userdata, const void *data, size_t len, enum crawl_text_status st,
                     const char *text, size_t text_len)
{
    struct texts_seen *t = userdata;
    (void)data;
    (void)len;
    if (t->n == 8)
        return 1;
    t->status[t->n] = (int)st;
    snprintf(t->text[t->n], sizeof t->text[0], "%.*s", text ? (int)text_len : 0, text ? text : "");
    t->n++;
    return 0;
}

/* Texts committed with their records and unpacked as given; over the cap a text is not
 * kept and says so; an uncommitted one is gone with its record; a state made before the
 * table (dropped here) has its earlier records CRAWL_TEXT_BEFORE; a damaged text is named. */
static void test_state_page_texts(void)
{
    char dir[] = "/tmp/simcrawl-texts-XXXXXX", err[256], db[300];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/state.db", dir);
    struct crawl_text a, b, c, big;
    const char *ta = "the first page's words", *tb = "a second page, other words";
    ASSERT_EQ_FATAL(crawl_text_pack(ta, strlen(ta), &a), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_text_pack(tb, strlen(tb), &b), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_text_pack("", 0, &c), CRAWL_OK);
    ASSERT_EQ(crawl_text_pack(ta, CRAWL_STATE_TEXT_MAX + 1u, &big), CRAWL_EINVAL);
    CU_ASSERT_PTR_NULL(big.z);
    struct crawl_state *st = NULL;
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    /* a cap that a's text fits and b's does not after it */
    uint64_t cap = a.zlen + b.zlen - 1;
    ASSERT_EQ(crawl_state_page_add_text(st, "r1", 2, &a, cap), CRAWL_OK);
    ASSERT_EQ(crawl_state_page_add_text(st, "r2", 2, &b, cap), CRAWL_OK);
    ASSERT_EQ(crawl_state_page_add_text(st, "r3", 2, NULL, cap), CRAWL_OK);
    ASSERT_EQ(crawl_state_page_add_text(st, "r4", 2, &c, 1u << 20), CRAWL_OK);
    uint64_t bytes = 0;
    ASSERT_EQ(crawl_state_text_bytes(st, &bytes), CRAWL_OK);
    ASSERT_EQ(bytes, a.zlen + c.zlen);
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    ASSERT_EQ(crawl_state_page_add_text(st, "r5", 2, &b, 1u << 20), CRAWL_OK);
    crawl_state_close(st); /* r5 not committed */
    struct texts_seen seen = {0};
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    ASSERT_EQ(crawl_state_foreach_page_text(st, texts_row, &seen), CRAWL_OK);
    ASSERT_EQ_FATAL(seen.n, 4);
    ASSERT_EQ(seen.status[0], CRAWL_TEXT_KEPT);
    CU_ASSERT_STRING_EQUAL(seen.text[0], ta);
    ASSERT_EQ(seen.status[1], CRAWL_TEXT_OVER_CAP);
    ASSERT_EQ(seen.status[2], CRAWL_TEXT_NONE);
    ASSERT_EQ(seen.status[3], CRAWL_TEXT_KEPT);
    CU_ASSERT_STRING_EQUAL(seen.text[3], "");
    ASSERT_EQ(crawl_state_text_bytes(st, &bytes), CRAWL_OK);
    ASSERT_EQ(bytes, a.zlen + c.zlen);
    crawl_state_close(st);
    /* an older state: no texts table; reopened, its records are older than the texts */
    sqlite3 *h = NULL;
    ASSERT_EQ_FATAL(sqlite3_open(db, &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "DROP TABLE texts; DELETE FROM meta WHERE key = 'texts.from'", NULL,
                           NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    ASSERT_EQ(crawl_state_page_add_text(st, "r5", 2, &b, 1u << 20), CRAWL_OK);
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    memset(&seen, 0, sizeof seen);
    ASSERT_EQ(crawl_state_foreach_page_text(st, texts_row, &seen), CRAWL_OK);
    ASSERT_EQ_FATAL(seen.n, 5);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(seen.status[i], CRAWL_TEXT_BEFORE);
    ASSERT_EQ(seen.status[4], CRAWL_TEXT_KEPT);
    CU_ASSERT_STRING_EQUAL(seen.text[4], tb);
    crawl_state_close(st);
    /* a damaged text: its record is read with CRAWL_TEXT_DAMAGED, the error names it */
    ASSERT_EQ_FATAL(sqlite3_open(db, &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "UPDATE texts SET z = x'789c0001' WHERE seq = 5", NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    memset(&seen, 0, sizeof seen);
    ASSERT_EQ(crawl_state_foreach_page_text(st, texts_row, &seen), CRAWL_OK);
    ASSERT_EQ(seen.status[4], CRAWL_TEXT_DAMAGED);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(crawl_state_error(st), "the text of page record 5 does not unpack"));
    crawl_state_close(st);
    crawl_text_release(&a);
    crawl_text_release(&b);
    crawl_text_release(&c);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ(system(cmd), 0);
}

/* len bytes of words, one byte in 7 changed (by salt) so that igzip finds matches and misses. */
static char *pack_text(size_t len, unsigned salt)
{
    char *t = malloc(len);
    for (size_t i = 0; t && i < len; i++)
        t[i] = (char)("the words of a page "[i % 20] + ((i * 2654435761u + salt) % 7 == 0));
    return t;
}

struct pack_job {
    const char *text;
    size_t len;
    struct crawl_text out;
    enum crawl_code rc;
};

static void *pack_thread(void *arg)
{
    struct pack_job *pj = arg;
    pj->rc = crawl_text_pack(pj->text, pj->len, &pj->out);
    return NULL;
}

/* crawl_text_pack reuses its thread's buffers: the same text packs to the same bytes after
 * another text was packed (the buffers full of it) and on a new thread (fresh buffers), and
 * unpacks to itself. */
static void test_state_text_pack_reuse(void)
{
    size_t len = 200000;
    char *text = pack_text(len, 1), *other = pack_text(len, 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    struct crawl_text a, b, o;
    ASSERT_EQ_FATAL(crawl_text_pack(text, len, &a), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_text_pack(other, len, &o), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_text_pack(text, len / 2, &b), CRAWL_OK);
    crawl_text_release(&b);
    ASSERT_EQ_FATAL(crawl_text_pack(text, len, &b), CRAWL_OK);
    CU_ASSERT(a.zlen < len / 2);
    ASSERT_EQ(b.zlen, a.zlen);
    CU_ASSERT(memcmp(a.z, b.z, a.zlen) == 0);
    struct pack_job pj = {.text = text, .len = len};
    pthread_t t;
    ASSERT_EQ_FATAL(pthread_create(&t, NULL, pack_thread, &pj), 0);
    pthread_join(t, NULL);
    ASSERT_EQ(pj.rc, CRAWL_OK);
    ASSERT_EQ(pj.out.zlen, a.zlen);
    CU_ASSERT(pj.out.z && memcmp(pj.out.z, a.z, a.zlen) == 0);
    char *back = malloc(len);
    uLongf got = (uLongf)len;
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    ASSERT_EQ(uncompress((Bytef *)back, &got, a.z, (uLong)a.zlen), Z_OK);
    ASSERT_EQ(got, len);
    CU_ASSERT(memcmp(back, text, len) == 0);
    free(back);
    crawl_text_release(&a);
    crawl_text_release(&b);
    crawl_text_release(&o);
    crawl_text_release(&pj.out);
    free(text);
    free(other);
}

static void test_seen_bloom(void)
{
    struct crawl_bloom *b = NULL;
    ASSERT_EQ_FATAL(crawl_bloom_new(1u << 20, &b), CRAWL_OK);
    ASSERT_EQ(crawl_bloom_bytes(b) >= (1u << 20), 1);
    char key[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(key, sizeof key, "in %d", i);
        crawl_bloom_add(b, crawl_hash64(key, (size_t)n));
    }
    ASSERT_EQ(crawl_bloom_count(b), 100000);
    int missed = 0, wrong = 0;
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(key, sizeof key, "in %d", i);
        missed += !crawl_bloom_maybe(b, crawl_hash64(key, (size_t)n));
        n = snprintf(key, sizeof key, "out %d", i);
        wrong += crawl_bloom_maybe(b, crawl_hash64(key, (size_t)n));
    }
    ASSERT_EQ(missed, 0);
    CU_ASSERT(wrong < 100); /* 84 bits a hash: about 1e-6 */
    crawl_bloom_free(b);
    /* 4096 bytes, 6553 hashes: 5 bits a hash, (1 - e^-1)^5 = 10 % */
    ASSERT_EQ_FATAL(crawl_bloom_new(4096, &b), CRAWL_OK);
    for (int i = 0; i < 6553; i++) {
        int n = snprintf(key, sizeof key, "in %d", i);
        crawl_bloom_add(b, crawl_hash64(key, (size_t)n));
    }
    wrong = 0;
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(key, sizeof key, "out %d", i);
        wrong += crawl_bloom_maybe(b, crawl_hash64(key, (size_t)n));
    }
    CU_ASSERT(wrong > 600 && wrong < 1400);
    /* a table spilled into it is empty after, and what it held is in the filter */
    struct crawl_seen *s = NULL;
    ASSERT_EQ_FATAL(crawl_seen_new(10, &s), CRAWL_OK);
    int added;
    for (uint64_t h = 1; h <= 10; h++)
        ASSERT_EQ(crawl_seen_add(s, h * 0x9e3779b97f4a7c15ULL, &added), CRAWL_OK);
    ASSERT_EQ(crawl_seen_add(s, 77, &added), CRAWL_ETOOLARGE);
    crawl_seen_spill(s, b);
    ASSERT_EQ(crawl_seen_count(s), 0);
    ASSERT_EQ(crawl_seen_contains(s, 0x9e3779b97f4a7c15ULL), 0);
    for (uint64_t h = 1; h <= 10; h++)
        ASSERT_EQ(crawl_bloom_maybe(b, h * 0x9e3779b97f4a7c15ULL), 1);
    ASSERT_EQ(crawl_seen_add(s, 77, &added), CRAWL_OK);
    crawl_seen_free(s);
    crawl_bloom_free(b);
}

/* A focused crawl over a state, stopped and resumed, takes the same order as one run
 * straight through: pages /f/0../f/(FOCUS_PAGES-1) link three children and one page
 * elsewhere, each link's priority a hash of (page, link), so a URL found again from
 * another page may come back with a higher priority (queued again in memory, raised in
 * the state). One transfer and one page at a time (queue 1): the order is the crawl's
 * alone. */
#define FOCUS_PAGES 90

static int focus_handler(void *userdata, const struct test_httpd_request *req,
                         struct test_response *out)
{
    (void)userdata;
    int n;
    if (sscanf(req->path, "/f/%d", &n) != 1 || n < 0 || n >= FOCUS_PAGES)
        return 1;
    char *body = malloc(512);
    if (!body)
        return 1;
    int len = snprintf(body, 512,
                       "<html><body><a href=\"/f/%d\">a</a> <a href=\"/f/%d\">b</a> "
                       "<a href=\"/f/%d\">c</a> <a href=\"/f/%d\">d</a></body></html>",
                       (3 * n + 1) % FOCUS_PAGES, (3 * n + 2) % FOCUS_PAGES,
                       (3 * n + 3) % FOCUS_PAGES, (7 * n + 5) % FOCUS_PAGES);
    out->status = 200;
    out->content_type = "text/html";
    out->body = body;
    out->body_len = (size_t)len;
    out->body_free = 1;
    return 0;
}

static int focus_process(void *userdata, const struct crawl_page *page, struct crawl_verdict *v)
{
    (void)userdata;
    char *html = strndup(page->body, page->body_len);
    if (!html)
        return -1;
    for (char *p = strstr(html, "href=\""); p; p = strstr(p, "href=\"")) {
        p += 6;
        char *e = strchr(p, '"');
        if (!e)
            break;
        *e = '\0';
        char key[512];
        int kl = snprintf(key, sizeof key, "%s %s", page->url, p);
        float prio = (float)(crawl_hash64(key, (size_t)kl) % 1000000) / 1e6f;
        if (crawl_verdict_add_link(v, p, prio) != CRAWL_OK) {
            free(html);
            return -1;
        }
        p = e + 1;
    }
    free(html);
    return 0;
}

static void focus_run(struct test_httpd *h, struct crawl_state *st, long max_pages,
                      struct loop_ctx *ctx, size_t seen_memory)
{
    struct crawl_opts o = {.delay = 0,
                           .concurrency = 1,
                           .per_host = 1,
                           .max_depth = -1,
                           .ignore_robots = 1,
                           .timeout = 5,
                           .workers = 1,
                           .queue = 1,
                           .focused = 1,
                           .max_pages = max_pages,
                           .state = st,
                           .seen_memory = seen_memory,
                           .process = focus_process,
                           .record = test_record,
                           .userdata = ctx,
                           .user_agent = "simcrawl-test/1"};
    struct crawl *c = NULL;
    char err[256];
    ASSERT_EQ_FATAL(crawl_new(&o, &c, err, sizeof err), CRAWL_OK);
    int resumed = 0;
    ASSERT_EQ(crawl_resume(c, &resumed), CRAWL_OK);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/f/0", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    crawl_free(c);
}

/* A focused crawl straight in memory, then over one state in three runs (stopped at 20
 * pages, at 50, then to the end) with a window of window URLs a host (0: the default) and
 * seen_memory: the same pages in the same order, each fetched once. */
static void focus_resume_check(size_t window, size_t seen_memory)
{
    struct test_httpd *h = test_httpd_start(NULL, 0, focus_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    static struct loop_ctx straight, resumed;
    memset(&straight, 0, sizeof straight);
    memset(&resumed, 0, sizeof resumed);
    pthread_mutex_init(&straight.lock, NULL);
    pthread_mutex_init(&resumed.lock, NULL);
    focus_run(h, NULL, 0, &straight, 0);
    ASSERT_EQ(straight.n, FOCUS_PAGES);
    char dir[] = "/tmp/simcrawl-focus-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char w[32];
    snprintf(w, sizeof w, "%zu", window);
    if (window)
        setenv("SIMCRAWL_STATE_WINDOW", w, 1);
    long budgets[3] = {20, 50, 0};
    for (int r = 0; r < 3; r++) {
        struct crawl_state *st = NULL;
        char err[256];
        ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
        focus_run(h, st, budgets[r], &resumed, seen_memory);
        crawl_state_close(st);
        ASSERT_EQ(resumed.n, budgets[r] ? (size_t)budgets[r] : FOCUS_PAGES);
    }
    unsetenv("SIMCRAWL_STATE_WINDOW");
    ASSERT_EQ(resumed.n, straight.n);
    size_t same = 0;
    for (size_t i = 0; i < straight.n && i < resumed.n; i++)
        same += strcmp(straight.lines[i].url, resumed.lines[i].url) == 0;
    ASSERT_EQ(same, straight.n);
    if (same != straight.n && getenv("TEST_VERBOSE"))
        for (size_t i = 0; i < straight.n && i < resumed.n; i++)
            fprintf(stderr, "%zu %s %s\n", i, straight.lines[i].url, resumed.lines[i].url);
    /* every page once */
    ASSERT_EQ(test_httpd_count(h, "/f/1"), 2);
    char path[300];
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    ASSERT_EQ(system(path), 0);
    pthread_mutex_destroy(&straight.lock);
    pthread_mutex_destroy(&resumed.lock);
    test_httpd_stop(h);
}

static void test_loop_focused_state_resume(void)
{
    focus_resume_check(0, 0);
}

/* The window of 4 URLs: nearly every link goes to the state only, the window is trimmed
 * and loaded again best first; a seen set of 1 KiB makes the priority map a cache of 12
 * URLs, so links found again are raised through the state. */
static void test_loop_focused_state_window(void)
{
    focus_resume_check(4, 1024);
}

/* The state's page records: batched (crawler/state.c, "batches"), yet read back in order
 * with their lengths (0 included) before and after a commit; a group not committed is
 * gone on reopening, the committed ones are there once. A new state has 8 KiB pages. */
struct page_seen {
    size_t n, bad;
};

static int page_check(void *userdata, const void *data, size_t len)
{
    struct page_seen *ps = userdata;
    char want[64];
    int wl = snprintf(want, sizeof want, "record %zu", ps->n);
    size_t exp = ps->n % 7 == 3 ? 0 : (size_t)wl; /* every 7th from 3 is empty */
    if (len != exp || (len && memcmp(data, want, len) != 0))
        ps->bad++;
    ps->n++;
    return 0;
}

static void add_records(struct crawl_state *st, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        char rec[64];
        int len = snprintf(rec, sizeof rec, "record %zu", i);
        ASSERT_EQ(crawl_state_page_add(st, rec, i % 7 == 3 ? 0 : (size_t)len), CRAWL_OK);
    }
}

static void test_state_page_records_batched(void)
{
    char dir[] = "/tmp/simcrawl-pages-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    struct crawl_state *st = NULL;
    char err[256];
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    add_records(st, 0, 150); /* 2 statements of 64 rows, then 22 of one */
    struct page_seen ps = {0};
    ASSERT_EQ(crawl_state_foreach_page(st, page_check, &ps), CRAWL_OK); /* not committed */
    ASSERT_EQ(ps.n, 150);
    ASSERT_EQ(ps.bad, 0);
    add_records(st, 150, 300);
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    add_records(st, 300, 400); /* never committed */
    crawl_state_close(st);
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    memset(&ps, 0, sizeof ps);
    ASSERT_EQ(crawl_state_foreach_page(st, page_check, &ps), CRAWL_OK);
    ASSERT_EQ(ps.n, 300);
    ASSERT_EQ(ps.bad, 0);
    crawl_state_close(st);
    char path[300];
    snprintf(path, sizeof path, "%s/state.db", dir);
    FILE *f = fopen(path, "rb");
    unsigned char hdr[18] = {0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ASSERT_EQ(fread(hdr, 1, sizeof hdr, f), sizeof hdr);
    fclose(f);
    ASSERT_EQ(hdr[16] << 8 | hdr[17], 8192); /* the page size, big-endian at offset 16 */
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    ASSERT_EQ(system(path), 0);
}

struct text_check {
    size_t n, bad;
};

/* Record i of add_text_records: its text, its status. */
static enum crawl_text_status text_of(size_t i, char *buf, size_t cap)
{
    snprintf(buf, cap, "the words of page %zu, %s", i, i % 2 ? "odd" : "even");
    return i % 3 == 0 ? CRAWL_TEXT_NONE : i % 5 == 4 ? CRAWL_TEXT_OVER_CAP : CRAWL_TEXT_KEPT;
}

static int text_check_row(void *userdata, const void *data, size_t len, enum crawl_text_status st,
                          const char *text, size_t text_len)
{
    struct text_check *tc = userdata;
    char rec[64], want[64];
    int rl = snprintf(rec, sizeof rec, "record %zu", tc->n);
    enum crawl_text_status ws = text_of(tc->n, want, sizeof want);
    if (len != (size_t)rl || memcmp(data, rec, len) != 0 || st != ws ||
        (ws == CRAWL_TEXT_KEPT && (text_len != strlen(want) || memcmp(text, want, text_len) != 0)))
        tc->bad++;
    tc->n++;
    return 0;
}

/* Records i in [from, to) with their texts (text_of: none, kept, or past a cap of 0). */
static void add_text_records(struct crawl_state *st, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        char rec[64], text[64];
        int len = snprintf(rec, sizeof rec, "record %zu", i);
        enum crawl_text_status ts = text_of(i, text, sizeof text);
        struct crawl_text t;
        ASSERT_EQ_FATAL(crawl_text_pack(text, strlen(text), &t), CRAWL_OK);
        ASSERT_EQ(crawl_state_page_add_text(st, rec, (size_t)len, ts == CRAWL_TEXT_NONE ? NULL : &t,
                                            ts == CRAWL_TEXT_OVER_CAP ? 0 : 1u << 20),
                  CRAWL_OK);
        crawl_text_release(&t);
    }
}

/* Records with and without texts wait together and go in batches (more than one statement
 * of 64 rows a kind): each text is read back with its own record, committed or not yet. */
static void test_state_page_texts_batched(void)
{
    char dir[] = "/tmp/simcrawl-ptexts-XXXXXX", err[256];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    struct crawl_state *st = NULL;
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    add_text_records(st, 0, 100);
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    add_text_records(st, 100, 250);
    struct text_check tc = {0};
    ASSERT_EQ(crawl_state_foreach_page_text(st, text_check_row, &tc), CRAWL_OK); /* uncommitted */
    ASSERT_EQ(tc.n, 250);
    ASSERT_EQ(tc.bad, 0);
    add_text_records(st, 250, 330);
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    add_text_records(st, 330, 400); /* never committed */
    crawl_state_close(st);
    ASSERT_EQ_FATAL(crawl_state_open(dir, 0, &st, NULL, err, sizeof err), CRAWL_OK);
    add_text_records(st, 330, 340); /* the seqs go on from the last committed */
    ASSERT_EQ(crawl_state_commit(st), CRAWL_OK);
    memset(&tc, 0, sizeof tc);
    ASSERT_EQ(crawl_state_foreach_page_text(st, text_check_row, &tc), CRAWL_OK);
    ASSERT_EQ(tc.n, 340);
    ASSERT_EQ(tc.bad, 0);
    crawl_state_close(st);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ(system(cmd), 0);
}

static void test_loop_redirects_errors_faults(void)
{
    struct test_httpd *h =
        test_httpd_start(fault_routes, sizeof fault_routes / sizeof fault_routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0,
                           .concurrency = 16,
                           .per_host = 16,
                           .max_depth = -1,
                           .ignore_robots = 1,
                           .max_body = 256 * 1024,
                           .timeout = 2};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/", url, sizeof url)), CRAWL_OK);
    double t0 = crawl_clock();
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    CU_ASSERT(crawl_clock() - t0 < 10);
    const struct log_line *l;
    /* a chain of redirects is followed hop by hop, the fragment dropped */
    l = find_line(&ctx, "/r1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_REDIRECT);
    ASSERT_EQ(l->status, 301);
    /* referrers: the page that linked /r1, then each redirecting URL (Heritrix's "via") */
    CU_ASSERT_STRING_EQUAL(l->referrer, url);
    ASSERT_EQ(test_httpd_count(h, "/final.html"), 1);
    l = find_line(&ctx, "/r2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->referrer, "/r1"));
    l = find_line(&ctx, "/final.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_NEW);
    ASSERT_EQ(l->depth, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->referrer, "/r2"));
    CU_ASSERT_STRING_EQUAL(find_line(&ctx, "/")->referrer, ""); /* the seed: none */
    /* a redirect loop ends: each URL once */
    ASSERT_EQ(test_httpd_count(h, "/loop1"), 1);
    ASSERT_EQ(test_httpd_count(h, "/loop2"), 1);
    l = find_line(&ctx, "/loop2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "already seen"));
    l = find_line(&ctx, "/missing");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    ASSERT_EQ(l->status, 404);
    l = find_line(&ctx, "/error");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->status, 500);
    l = find_line(&ctx, "/image.png");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_FILTERED);
    l = find_line(&ctx, "/hang.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "timeout"));
    l = find_line(&ctx, "/drip.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    l = find_line(&ctx, "/reset.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    l = find_line(&ctx, "/endless.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_FILTERED);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "too large"));
    /* scope host: the other host is never queued */
    CU_ASSERT_PTR_NULL(find_host(&ctx, "other.invalid"));
    ASSERT_EQ(crawl_get_stats(c)->links_out_of_scope, 1);
    crawl_free(c);
    test_httpd_stop(h);
}

/* Pages marked as duplicates by process(): their links are not enqueued, so the unique-
 * looking pages only they link to are never requested. */
static const char MIRROR_HOME[] =
    "<html><body><a href=\"/doc/a\">a</a> <a href=\"/mirror/a\">mirror</a></body></html>";
static const char MIRROR_A[] = "<html><body><!--dup--><a href=\"/mirror/only-here\">x</a>"
                               "</body></html>";
static const char DOC_A[] = "<html><body>original <a href=\"/doc/b\">b</a></body></html>";

static const struct test_route mirror_routes[] = {
    {"/",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = MIRROR_HOME,
      .body_len = sizeof MIRROR_HOME - 1}},
    {"/doc/a",
     0,
     {.status = 200, .content_type = "text/html", .body = DOC_A, .body_len = sizeof DOC_A - 1}},
    {"/doc/b", 0, {.status = 200, .content_type = "text/html", .body = "<p>b</p>", .body_len = 8}},
    {"/mirror/a",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = MIRROR_A,
      .body_len = sizeof MIRROR_A - 1}},
    {"/mirror/only-here",
     0,
     {.status = 200, .content_type = "text/html", .body = "<p>u</p>", .body_len = 8}},
};

static void test_loop_duplicate_links_not_enqueued(void)
{
    struct test_httpd *h = test_httpd_start(mirror_routes, 5, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {.delay = 0, .concurrency = 2, .max_depth = -1, .ignore_robots = 1};
    struct crawl *c = loop_new(&ctx, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/", url, sizeof url)), CRAWL_OK);
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    ASSERT_EQ(test_httpd_count(h, "/mirror/a"), 1);
    ASSERT_EQ(test_httpd_count(h, "/doc/b"), 1);
    ASSERT_EQ(test_httpd_count(h, "/mirror/only-here"), 0);
    const struct crawl_stats *st = crawl_get_stats(c);
    ASSERT_EQ(st->near_duplicates, 1);
    ASSERT_EQ(st->links_saved, 1);
    const struct log_line *l = find_line(&ctx, "/mirror/a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_NEAR_DUPLICATE);
    ASSERT_EQ(l->links, 0);
    crawl_free(c);
    test_httpd_stop(h);
}

struct stopper {
    struct crawl *c;
    double after;
};

static void *stop_later(void *arg)
{
    struct stopper *s = arg;
    struct timespec ts = {.tv_sec = (time_t)s->after,
                          .tv_nsec = (long)((s->after - (double)(time_t)s->after) * 1e9)};
    nanosleep(&ts, NULL);
    crawl_stop(s->c);
    return NULL;
}

/* crawl_stop() while a transfer hangs: the crawl ends after the grace period, the hung
 * transfer logged as aborted. */
static void test_loop_stop_aborts_in_flight(void)
{
    static const char home[] = "<a href=\"/hang.html\">h</a>";
    static const struct test_route routes[] = {
        {"/",
         0,
         {.status = 200, .content_type = "text/html", .body = home, .body_len = sizeof home - 1}},
        {"/hang.html",
         0,
         {.status = 200,
          .content_type = "text/html",
          .body = "x",
          .body_len = 1,
          .fault = TEST_FAULT_HANG,
          .fault_ms = 20000}},
    };
    struct test_httpd *h = test_httpd_start(routes, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct loop_ctx ctx;
    struct crawl_opts o = {
        .delay = 0, .max_depth = -1, .ignore_robots = 1, .timeout = 30, .stop_grace = 0.3};
    struct crawl *c = loop_new3(&ctx, &o, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    /* no low-speed abort here: only the stop can end the hang */
    char url[128];
    ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/", url, sizeof url)), CRAWL_OK);
    struct stopper s = {c, 1.5};
    pthread_t t;
    ASSERT_EQ_FATAL(pthread_create(&t, NULL, stop_later, &s), 0);
    double t0 = crawl_clock();
    ASSERT_EQ(crawl_run(c), CRAWL_OK);
    double took = crawl_clock() - t0;
    pthread_join(t, NULL);
    CU_ASSERT(took < 5);
    const struct log_line *l = find_line(&ctx, "/hang.html");

    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ASSERT_EQ(l->decision, CRAWL_DECISION_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->error, "aborted"));
    CU_ASSERT(took >= 1.5);
    crawl_free(c);
    test_httpd_stop(h);
}

static void test_loop_bad_regex(void)
{
    struct crawl_opts o = {.include = "(unclosed"};
    struct crawl *c = NULL;
    char err[256] = "";
    ASSERT_EQ(crawl_new(&o, &c, err, sizeof err), CRAWL_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--include"));
}

/* ---- the simcrawl binary ($SIMCRAWL) against the demo site served by tests/httpd ---- */

#define DEMO_SITE "tests/demo/site"

static int site_handler(void *userdata, const struct test_httpd_request *req,
                        struct test_response *out)
{
    (void)userdata;
    if (strstr(req->path, "..") || strlen(req->path) > 200)
        return 1;
    char path[512];
    snprintf(path, sizeof path, "%s%s", DEMO_SITE, req->path);
    if (path[strlen(path) - 1] == '/')
        strcat(path, "index.html");
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    char *body = malloc(1 << 20);
    size_t n = body ? fread(body, 1, 1 << 20, f) : 0;
    fclose(f);
    if (!body)
        return 1;
    out->status = 200;
    size_t pl = strlen(path);
    out->content_type = pl > 5 && strcmp(path + pl - 5, ".html") == 0  ? "text/html; charset=utf-8"
                        : pl > 4 && strcmp(path + pl - 4, ".pdf") == 0 ? "application/pdf"
                                                                       : "text/plain";
    out->body = body;
    out->body_len = n;
    out->body_free = 1;
    return 0;
}

static const char *simcrawl_bin(void)
{
    const char *s = getenv("SIMCRAWL");
    return s && *s ? s : "build/simcrawl";
}

/* Counts lines of file containing all of the needles. */
static int count_lines(const char *file, const char *a, const char *b)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, a) && (!b || strstr(line, b));
    fclose(f);
    return n;
}

static void test_cli_mirror_duplicates_dropped_with_links(void)
{
    FILE *probe = fopen(DEMO_SITE "/index.html", "r");
    if (!probe) {
        CU_FAIL("run the tests from the repository root (tests/demo/site)");
        return;
    }
    fclose(probe);
    struct test_httpd *h = test_httpd_start(NULL, 0, site_handler, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char tmpl[] = "/tmp/simcrawl-crawl-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpl));
    char cmd[1024], log[256], warc[256], url[128];
    snprintf(log, sizeof log, "%s/log.jsonl", tmpl);
    snprintf(warc, sizeof warc, "%s/out.warc.gz", tmpl);
    snprintf(cmd, sizeof cmd,
             "%s crawl --delay 0 --per-host 1 --workers 1 --timeout 5 --log %s --warc %s %s "
             "2>%s/err",
             simcrawl_bin(), log, warc, test_httpd_url(h, "/index.html", url, sizeof url), tmpl);
    ASSERT_EQ(system(cmd), 0);
    /* the mirror's pages were fetched and found to be near-duplicates ... */
    ASSERT_EQ(test_httpd_count(h, "/mirror/articles/owl.html"), 1);
    ASSERT_EQ(count_lines(log, "/mirror/articles/owl.html", "\"near-duplicate\""), 1);
    ASSERT_EQ(count_lines(log, "/print/owl.html", "\"near-duplicate\""), 1);
    ASSERT_EQ(count_lines(log, "/blog/owl-reposted.html", "\"near-duplicate\""), 1);
    ASSERT_EQ(count_lines(log, "heron.html?print=1", "\"exact-duplicate\""), 1);
    ASSERT_EQ(count_lines(log, "\"duplicate_of\"", "/articles/owl.html\",\"distance\""), 3);
    /* ... so the unique-looking pages only they link to were never requested */
    for (size_t i = 0; i < test_httpd_total(h); i++)
        CU_ASSERT(strncmp(test_httpd_request_at(h, i)->path, "/mirror/extra/", 14) != 0);
    /* robots.txt, 404 and non-HTML in the log; the originals are kept */
    ASSERT_EQ(test_httpd_count(h, "/private/minutes.html"), 0);
    ASSERT_EQ(count_lines(log, "/private/minutes.html", "\"robots-disallowed\""), 1);
    ASSERT_EQ(count_lines(log, "/articles/dodo.html", "\"status\":404"), 1);
    ASSERT_EQ(count_lines(log, "/files/checklist.pdf", "\"filtered\""), 1);
    ASSERT_EQ(count_lines(log, "/articles/owl.html\"", "\"new\""), 1);
    char errf[300];
    snprintf(errf, sizeof errf, "%s/err", tmpl);
    ASSERT_EQ(count_lines(errf, "not followed: 6 only on duplicate pages", NULL), 1);
    /* the WARC is complete (renamed from .open) */
    FILE *w = fopen(warc, "rb");
    CU_ASSERT_PTR_NOT_NULL(w);
    if (w)
        fclose(w);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    ASSERT_EQ(system(cmd), 0);
    test_httpd_stop(h);
}

/* --topic: with a budget of 5 pages, the focused crawl takes the on-topic links first (one
 * of them named twice on the home page, first with an off-topic anchor: it ranks by the
 * better one) and the on-topic page they lead to, and at most one of the gardening pages
 * listed before them (one fetch may run ahead of the parse that ranks the frontier); every
 * page's relevance is in the log. Breadth-first with the same budget takes the first four
 * links, the gardening pages, and none of the others. */
#define FOCUS_PAGE(words, links)                                                                   \
    "<html><body><p>" words "</p><p>" words "</p>" links "</body></html>"
#define ASYNC_WORDS                                                                                \
    "asyncio runs coroutine functions on an event loop; await suspends a coroutine "               \
    "until the awaited asyncio future is done, and the loop runs the others"
#define GARDEN_WORDS                                                                               \
    "roses want pruning in early spring, tomatoes want water every evening, "                      \
    "and the compost heap wants turning once a month in the garden"
static void test_cli_focused_crawl(void)
{
    static const char home[] = FOCUS_PAGE(
        "Welcome to the notes: some on gardening, some on programming, with many words here.",
        "<a href='/g1.html'>pruning roses</a> <a href='/g2.html'>watering tomatoes</a> "
        "<a href='/g3.html'>compost</a> <a href='/g4.html'>lawn care</a> "
        "<a href='/a2.html'>more</a> <a href='/a1.html'>asyncio event loop</a> "
        "<a href='/a2.html'>coroutine and await</a>");
    static const char a1[] = FOCUS_PAGE(ASYNC_WORDS, "<a href='/g5.html'>roses</a> "
                                                     "<a href='/a3.html'>asyncio tasks</a>");
    static const char a2[] = FOCUS_PAGE(
        "a coroutine declared with async def returns an awaitable object, and asyncio.run "
        "starts the loop that drives it; await hands control back while it waits",
        "");
    static const char a3[] = FOCUS_PAGE(
        "asyncio tasks wrap a coroutine so that it runs concurrently: create_task schedules "
        "it, and await on the task gives its result or raises what it raised",
        "");
    static const char g[] = FOCUS_PAGE(GARDEN_WORDS, "<a href='/g6.html'>more roses</a>");
#define R(p, b)                                                                                    \
    {                                                                                              \
        p, 0,                                                                                      \
        {                                                                                          \
            .status = 200, .content_type = "text/html", .body = b, .body_len = sizeof b - 1        \
        }                                                                                          \
    }
    static const struct test_route routes[] = {
        R("/", home),     R("/a1.html", a1), R("/a2.html", a2), R("/a3.html", a3), R("/g1.html", g),
        R("/g2.html", g), R("/g3.html", g),  R("/g4.html", g),  R("/g5.html", g),  R("/g6.html", g),
    };
#undef R
    for (int focused = 1; focused >= 0; focused--) {
        struct test_httpd *h =
            test_httpd_start(routes, sizeof routes / sizeof routes[0], NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(h);
        char tmpl[] = "/tmp/simcrawl-crawl-XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpl));
        char cmd[1024], log[256], url[128];
        snprintf(log, sizeof log, "%s/log.jsonl", tmpl);
        snprintf(cmd, sizeof cmd,
                 "%s crawl --quiet --delay 0 --robots no --concurrency 1 --per-host 1 "
                 "--workers 1 --max-pages 5 %s --log %s %s 2>%s/err",
                 simcrawl_bin(), focused ? "--topic 'asyncio coroutine await'" : "", log,
                 test_httpd_url(h, "/", url, sizeof url), tmpl);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(test_httpd_total(h), 5);
        if (focused) {
            ASSERT_EQ(test_httpd_count(h, "/a1.html"), 1);
            ASSERT_EQ(test_httpd_count(h, "/a2.html"), 1);
            ASSERT_EQ(test_httpd_count(h, "/a3.html"), 1);
            ASSERT_EQ(count_lines(log, "\"relevance\":", NULL), 5);
        } else {
            ASSERT_EQ(test_httpd_count(h, "/g4.html"), 1);
            ASSERT_EQ(test_httpd_count(h, "/a2.html"), 0);
            ASSERT_EQ(test_httpd_count(h, "/a1.html"), 0);
            ASSERT_EQ(test_httpd_count(h, "/a3.html"), 0);
            ASSERT_EQ(count_lines(log, "\"relevance\":", NULL), 0);
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
        ASSERT_EQ(system(cmd), 0);
        test_httpd_stop(h);
    }
}

/* SIGTERM during a crawl: the binary stops within the grace period, exits 0, and the log
 * and the WARC are complete. */
static void test_cli_sigterm_stops_cleanly(void)
{
    static const char home[] = "<html><body><p>home page with enough words to fingerprint it "
                               "well</p><a href=\"/hang.html\">h</a></body></html>";
    static const struct test_route routes[] = {
        {"/",
         0,
         {.status = 200, .content_type = "text/html", .body = home, .body_len = sizeof home - 1}},
        {"/hang.html",
         0,
         {.status = 200,
          .content_type = "text/html",
          .body = "x",
          .body_len = 1,
          .fault = TEST_FAULT_HANG,
          .fault_ms = 30000}},
    };
    struct test_httpd *h = test_httpd_start(routes, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char tmpl[] = "/tmp/simcrawl-crawl-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpl));
    char cmd[1024], log[256], warc[256], url[128];
    snprintf(log, sizeof log, "%s/log.jsonl", tmpl);
    snprintf(warc, sizeof warc, "%s/out.warc", tmpl);
    /* the crawler is signalled once the server has the hanging request (a fixed sleep
     * was too short on a loaded machine: the signal came before the request) */
    snprintf(cmd, sizeof cmd,
             "exec %s crawl --quiet --delay 0 --robots no --timeout 60 --log %s --warc %s %s "
             "2>%s/err",
             simcrawl_bin(), log, warc, test_httpd_url(h, "/", url, sizeof url), tmpl);
    double t0 = crawl_clock();
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    const struct timespec tick = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 600 && test_httpd_count(h, "/hang.html") == 0; i++)
        nanosleep(&tick, NULL);
    ASSERT_EQ(test_httpd_count(h, "/hang.html"), 1);
    nanosleep(&tick, NULL); /* the transfer is in curl's hands */
    kill(pid, SIGTERM);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    double took = crawl_clock() - t0;
    /* stopped cleanly, then dead by the signal (the shell's 143), not exit 0 */
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    CU_ASSERT(took < 40); /* well before the 60 s timeout: the signal stopped it */
    ASSERT_EQ(count_lines(log, "/hang.html", "aborted"), 1);
    ASSERT_EQ(count_lines(log, "\"decision\":\"new\"", NULL), 1);
    FILE *w = fopen(warc, "rb");
    CU_ASSERT_PTR_NOT_NULL(w);
    if (w)
        fclose(w);
    char errf[300];
    snprintf(errf, sizeof errf, "%s/err", tmpl);
    ASSERT_EQ(count_lines(errf, "stopped by a signal", NULL), 1);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    ASSERT_EQ(system(cmd), 0);
    test_httpd_stop(h);
}

/* ---- scope: crawl__scope_name(), the function in_scope() of crawl.c compares with ---- */

/* Are a and b in the same scope? (-1: a name could not be made) */
static int same_scope(const psl_ctx_t *psl, enum crawl_scope sc, const char *a, const char *b)
{
    char *na, *nb;
    enum crawl_code ra = crawl__scope_name(psl, sc, a, &na);
    enum crawl_code rb = crawl__scope_name(psl, sc, b, &nb);
    int r = ra == CRAWL_OK && rb == CRAWL_OK ? strcmp(na, nb) == 0 : -1;
    free(na);
    free(nb);
    return r;
}

static void test_scope_name_host_and_domain(void)
{
    psl_ctx_t *owned = psl_latest(NULL); /* as crawl_new() does */
    const psl_ctx_t *psl = owned ? owned : psl_builtin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(psl);
    const enum crawl_scope H = CRAWL_SCOPE_HOST, D = CRAWL_SCOPE_DOMAIN;
    static const struct {
        const char *a, *b;
        int host, domain; /* same scope under --scope host, --scope domain */
    } cases[] = {
        {"http://www.example.co.uk/", "https://shop.example.co.uk/x", 0, 1},
        {"http://www.example.co.uk/", "http://example.co.uk/", 0, 1},
        {"http://example.co.uk/", "http://other.co.uk/", 0, 0},
        {"http://example.co.uk/", "http://co.uk/", 0, 0},               /* a public suffix */
        {"http://a.example.com:8080/", "https://a.example.com/", 1, 1}, /* port, scheme */
        {"http://a.github.io/", "http://b.github.io/", 0, 0}, /* private suffix: owners differ */
        {"http://127.0.0.1:1/", "http://127.0.0.1:2/", 1, 1},
        {"http://127.0.0.1/", "http://10.0.0.1/", 0, 0},     /* libpsl alone: both "0.1" */
        {"http://192.168.1.10/", "http://10.0.1.10/", 0, 0}, /* libpsl alone: both "1.10" */
        {"http://[::1]:80/", "http://[::1]:81/", 1, 1},
        {"http://[::1]/", "http://[::2]/", 0, 0},
        {"http://localhost:1/", "http://localhost:2/", 1, 1},
        {"http://localhost/", "http://127.0.0.1/", 0, 0},
        {"http://a.localhost/", "http://b.localhost/", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int h = same_scope(psl, H, cases[i].a, cases[i].b);
        int d = same_scope(psl, D, cases[i].a, cases[i].b);
        if (h != cases[i].host || d != cases[i].domain)
            fprintf(stderr, "\nscope %s vs %s: host %d domain %d\n", cases[i].a, cases[i].b, h, d);
        ASSERT_EQ(h, cases[i].host);
        ASSERT_EQ(d, cases[i].domain);
    }
    /* the names themselves */
    static const struct {
        const char *url, *domain;
    } names[] = {
        {"http://www.example.co.uk/", "example.co.uk"},
        {"http://deep.www.example.com/", "example.com"},
        {"http://co.uk/", "co.uk"},
        {"http://127.0.0.1:8080/", "127.0.0.1"},
        {"http://127.1/", "127.1"},
        {"http://[::1]:8080/", "[::1]"},
        {"http://localhost/", "localhost"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *n;
        ASSERT_EQ(crawl__scope_name(psl, D, names[i].url, &n), CRAWL_OK);
        CU_ASSERT_PTR_NOT_NULL(n);
        if (n && strcmp(n, names[i].domain) != 0)
            fprintf(stderr, "\nscope name of %s: %s\n", names[i].url, n);
        CU_ASSERT_TRUE(n && strcmp(n, names[i].domain) == 0);
        free(n);
    }
    char *n;
    ASSERT_EQ(crawl__scope_name(psl, H, "http://www.example.co.uk:81/p", &n), CRAWL_OK);
    CU_ASSERT_TRUE(n && strcmp(n, "www.example.co.uk") == 0);
    free(n);
    /* the two failures told apart: no host, no memory (each allocation failing in turn) */
    ASSERT_EQ(crawl__scope_name(psl, D, "not a url", &n), CRAWL_EURL);
    CU_ASSERT_PTR_NULL(n);
    for (unsigned long k = 1;; k++) {
        failalloc_arm(k);
        enum crawl_code rc = crawl__scope_name(psl, D, "http://www.example.co.uk/", &n);
        int fired = failalloc_fired();
        failalloc_arm(0);
        if (!fired) {
            ASSERT_EQ(rc, CRAWL_OK);
            CU_ASSERT_TRUE(n && strcmp(n, "example.co.uk") == 0);
            ASSERT_EQ(k, 3); /* the host, then the domain: two allocations */
            free(n);
            break;
        }
        ASSERT_EQ(rc, CRAWL_ENOMEM);
        CU_ASSERT_PTR_NULL(n);
    }
    if (owned)
        psl_free(owned);
}

/* The crawl's own decision: a seed on 127.0.0.1 and links to other hosts. --max-pages 1
 * fetches the seed only, so nothing off 127.0.0.1 is ever requested whatever the scope
 * says; the stats tell what was queued and what was out of scope, each target once
 * however often the page names it (/a and d three times). */
static void test_loop_scope_decisions(void)
{
    struct test_httpd *h = test_httpd_start(NULL, 0, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    unsigned short port = test_httpd_port(h);
    test_httpd_stop(h);
    char page[1024];
    snprintf(page, sizeof page,
             "<a href=\"/a\">a</a> <a href=\"http://127.0.0.1:1/b\">b</a> "
             "<a href=\"http://10.0.0.1:%u/\">c</a> <a href=\"http://192.168.0.1/\">d</a> "
             "<a href=\"http://localhost:%u/\">e</a> <a href=\"http://www.example.co.uk/\">f</a>"
             "<a href=\"/a\">a</a> <a href=\"http://192.168.0.1/\">d</a> <a href=\"/a\">a</a>"
             "<a href=\"http://192.168.0.1/\">d</a>",
             port, port);
    const struct test_route routes[] = {
        {"/",
         0,
         {.status = 200, .content_type = "text/html", .body = page, .body_len = strlen(page)}},
    };
    static const struct {
        enum crawl_scope scope;
        uint64_t queued, out;
    } want[] = {{CRAWL_SCOPE_HOST, 2, 4}, {CRAWL_SCOPE_DOMAIN, 2, 4}, {CRAWL_SCOPE_ANY, 6, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        h = test_httpd_start(routes, 1, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(h);
        struct loop_ctx ctx;
        struct crawl_opts o = {.delay = 0,
                               .max_pages = 1,
                               .max_depth = -1,
                               .ignore_robots = 1,
                               .scope = want[i].scope};
        struct crawl *c = loop_new(&ctx, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        char url[128];
        ASSERT_EQ(crawl_add_seed(c, test_httpd_url(h, "/", url, sizeof url)), CRAWL_OK);
        ASSERT_EQ(crawl_run(c), CRAWL_OK);
        const struct crawl_stats *st = crawl_get_stats(c);
        ASSERT_EQ(st->links_enqueued, want[i].queued);
        ASSERT_EQ(st->links_out_of_scope, want[i].out);
        ASSERT_EQ(st->fetched, 1);
        ASSERT_EQ(test_httpd_total(h), 1);
        crawl_free(c);
        test_httpd_stop(h);
    }
}

/* ---- the binary: content codings and meta robots, read back from the log and WARC ---- */

/* Runs "$SIMCRAWL crawl --quiet --delay 0 --robots no --timeout 5 <extra> --log
 * dir/log.jsonl --warc dir/out.warc.gz <seed>" in a new temporary dir (written to dir);
 * returns the exit status (-1 when it could not run). */
static int run_binary_crawl(struct test_httpd *h, const char *seed_path, const char *extra,
                            char dir[32])
{
    snprintf(dir, 32, "/tmp/simcrawl-crawl-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char cmd[1024], url[128];
    snprintf(cmd, sizeof cmd,
             "%s crawl --quiet --delay 0 --robots no --timeout 5 %s --log %s/log.jsonl "
             "--warc %s/out.warc.gz %s 2>%s/err",
             simcrawl_bin(), extra, dir, dir, test_httpd_url(h, seed_path, url, sizeof url), dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ASSERT_EQ(system(cmd), 0);
}

/* The log lines (dir/log.jsonl) whose "url" ends in path and that contain needle. */
static int log_lines(const char *dir, const char *path, const char *needle)
{
    char file[64], key[160];
    snprintf(file, sizeof file, "%s/log.jsonl", dir);
    /* the url value ends here (the referrer's value ends with a quote and a comma too) */
    snprintf(key, sizeof key, "%s\",\"status\"", path);
    return count_lines(file, key, needle);
}

static int has_bytes(const char *d, size_t len, const char *needle, size_t nl)
{
    for (size_t i = 0; nl <= len && i <= len - nl; i++)
        if (memcmp(d + i, needle, nl) == 0)
            return 1;
    return 0;
}

/* Reads dir/out.warc.gz with the WARC reader: how many records of type have a target URI
 * ending in path; when block_needle is set, only those whose block contains it. */
static int warc_records(const char *dir, const char *type, const char *path,
                        const char *block_needle, size_t needle_len)
{
    char file[64];
    snprintf(file, sizeof file, "%s/out.warc.gz", dir);
    struct crawl_warc_opts o = {0};
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open(file, &o, &r) != CRAWL_OK)
        return -1;
    const struct crawl_warc_record *rec;
    int n = 0;
    size_t pl = strlen(path);
    while (crawl_warc_next(r, &rec) == CRAWL_OK) {
        size_t ul = strlen(rec->target_uri);
        if (strcmp(rec->type, type) != 0 || ul < pl || strcmp(rec->target_uri + ul - pl, path))
            continue;
        if (block_needle) {
            const char *d;
            size_t l;
            if (crawl_warc_block(r, &d, &l) != CRAWL_OK ||
                !has_bytes(d, l, block_needle, needle_len))
                continue;
        }
        n++;
    }
    crawl_warc_reader_free(r);
    return n;
}

#define PAGE(title, text, links)                                                                   \
    "<html><head><title>" title "</title></head><body><h1>" title "</h1><p>" text "</p>" links     \
    "</body></html>"

static const char Z_HOME[] =
    PAGE("Harbour tides",
         "The harbour master records the tides twice a day and pins the printed tables by the "
         "ferry gate, where the fishermen read them before dawn. Boats leave at high water, "
         "unload their catch at the stone quay and return with the evening flood.",
         "<a href=\"/z/one.html\">bees</a> <a href=\"/z/two.html\">trains</a> "
         "<a href=\"/z/bomb.html\">bomb</a>");
static const char Z_ONE[] =
    PAGE("Mountain bees",
         "Alpine bumblebees shiver their flight muscles to warm up on cold mornings, then visit "
         "gentians and saxifrage on the scree slopes above the tree line until the afternoon "
         "storms roll over the ridge and drive them back into their burrows.",
         "");
static const char Z_TWO[] =
    PAGE("Railway timetables",
         "The regional railway publishes a new timetable every December; the night train to the "
         "coast now leaves twenty minutes earlier, and two extra stopping services call at the "
         "small junction station on weekday evenings through the winter.",
         "");

/* A page served zstd-coded (Content-Encoding: zstd, compressed in the test) is decoded,
 * its links followed, and archived as sent; a zstd bomb is stopped at the decode cap and
 * logged with a clear error. */
static void test_cli_zstd_page_links_followed(void)
{
    size_t zl = ZSTD_compressBound(sizeof Z_HOME);
    char *z = malloc(zl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    zl = ZSTD_compress(z, zl, Z_HOME, sizeof Z_HOME - 1, 3);
    CU_ASSERT_FALSE_FATAL(ZSTD_isError(zl));
    size_t big = 4u * 1024 * 1024, bl = ZSTD_compressBound(big);
    char *zeros = calloc(1, big), *bomb = malloc(bl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(zeros);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bomb);
    bl = ZSTD_compress(bomb, bl, zeros, big, 3);
    free(zeros);
    CU_ASSERT_FALSE_FATAL(ZSTD_isError(bl));
    const struct test_route routes[] = {
        {"/",
         0,
         {.status = 200,
          .content_type = "text/html",
          .headers = "Content-Encoding: zstd",
          .body = z,
          .body_len = zl}},
        {"/z/one.html",
         0,
         {.status = 200, .content_type = "text/html", .body = Z_ONE, .body_len = sizeof Z_ONE - 1}},
        {"/z/two.html",
         0,
         {.status = 200, .content_type = "text/html", .body = Z_TWO, .body_len = sizeof Z_TWO - 1}},
        {"/z/bomb.html",
         0,
         {.status = 200,
          .content_type = "text/html",
          .headers = "Content-Encoding: zstd",
          .body = bomb,
          .body_len = bl}},
    };
    struct test_httpd *h = test_httpd_start(routes, 4, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char dir[32];
    /* --max-body 100000: decoded bodies are capped at 8 times that (crawl.c) */
    ASSERT_EQ(run_binary_crawl(h, "/", "--max-body 100000", dir), 0);
    /* zstd was offered, and the page's links were found in the decoded body */
    const struct test_httpd_request *req = test_httpd_last(h, "/");
    CU_ASSERT_PTR_NOT_NULL_FATAL(req);
    const char *ae = test_httpd_header(req, "Accept-Encoding");
    CU_ASSERT_PTR_NOT_NULL(ae);
    CU_ASSERT_PTR_NOT_NULL(ae ? strstr(ae, "zstd") : NULL);
    ASSERT_EQ(test_httpd_count(h, "/z/one.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/z/two.html"), 1);
    ASSERT_EQ(log_lines(dir, "/", "\"decision\":\"new\""), 1);
    ASSERT_EQ(log_lines(dir, "/", "\"links\":3"), 1);
    ASSERT_EQ(log_lines(dir, "/z/one.html", "\"decision\":\"new\""), 1);
    /* the bomb: an error naming the coding and the cap, not a page */
    ASSERT_EQ(test_httpd_count(h, "/z/bomb.html"), 1);
    ASSERT_EQ(log_lines(dir, "/z/bomb.html", "\"decision\":\"error\""), 1);
    ASSERT_EQ(log_lines(dir, "/z/bomb.html", "zstd body decodes to more than 800000"), 1);
    ASSERT_EQ(warc_records(dir, "response", "/z/bomb.html", NULL, 0), 0);
    /* the WARC keeps the body as sent: zstd-coded, with its Content-Encoding */
    ASSERT_EQ(warc_records(dir, "response", "/", "Content-Encoding: zstd", 22), 1);
    ASSERT_EQ(warc_records(dir, "response", "/", "\x28\xb5\x2f\xfd", 4), 1);
    ASSERT_EQ(warc_records(dir, "response", "/z/two.html", NULL, 0), 1);
    remove_dir(dir);
    test_httpd_stop(h);
    free(bomb);
    free(z);
}

/* The caps that cut a page (issue 12 item 6): lowered, they cut, and the log line and
 * stderr say so; under them nothing is said. */
static const char CAP_HOME[] =
    PAGE("Canal locks",
         "The canal climbs forty metres through a flight of seven locks, and the lock keeper "
         "logs every boat, its length and its draught in a ledger kept in the cottage.",
         "<a href=\"/c/1.html\">1</a> <a href=\"/c/2.html\">2</a> <a href=\"/c/3.html\">3</a> "
         "<a href=\"/c/4.html\">4</a> <a href=\"/c/5.html\">5</a>"
         "<div><div><div><div><div><div><div><div><div><div><div><div>"
         "<p>Deep in the page a note on the winter stoppages of the canal.</p>"
         "</div></div></div></div></div></div></div></div></div></div></div></div>");

static void test_cli_caps_logged(void)
{
    static const struct test_route routes[] = {
        {"/",
         0,
         {.status = 200,
          .content_type = "text/html",
          .body = CAP_HOME,
          .body_len = sizeof CAP_HOME - 1}},
        {"/c/",
         TEST_ROUTE_PREFIX,
         {.status = 404, .content_type = "text/plain", .body = "no", .body_len = 2}},
    };
    struct test_httpd *h = test_httpd_start(routes, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char dir[32], file[64];
    ASSERT_EQ(run_binary_crawl(h, "/", "--max-links 2 --max-nesting 10", dir), 0);
    ASSERT_EQ(log_lines(dir, "/", "\"truncated\":\"links,depth\""), 1);
    ASSERT_EQ(log_lines(dir, "/", "\"links\":2"), 1);
    ASSERT_EQ(test_httpd_count(h, "/c/1.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/c/2.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/c/3.html"), 0);
    snprintf(file, sizeof file, "%s/err", dir);
    ASSERT_EQ(count_lines(file, "/: links after the 2nd dropped (3 of them; --max-links)",
                          "simcrawl crawl: http://127.0.0.1:"),
              1);
    ASSERT_EQ(count_lines(file, "elements nested deeper than 10 skipped", "(--max-nesting)"), 1);
    remove_dir(dir);
    /* the defaults cut nothing here: no field, no warning, every link followed */
    ASSERT_EQ(run_binary_crawl(h, "/", "", dir), 0);
    ASSERT_EQ(log_lines(dir, "/", "truncated"), 0);
    ASSERT_EQ(log_lines(dir, "/", "\"links\":5"), 1);
    snprintf(file, sizeof file, "%s/err", dir);
    ASSERT_EQ(count_lines(file, "dropped", ""), 0);
    ASSERT_EQ(count_lines(file, "skipped", ""), 0);
    remove_dir(dir);
    /* bad values: exit 1 naming the option */
    ASSERT_EQ(run_binary_crawl(h, "/", "--max-links 0", dir), 1);
    snprintf(file, sizeof file, "%s/err", dir);
    ASSERT_EQ(count_lines(file, "--max-links", "1 to 100000000"), 1);
    remove_dir(dir);
    ASSERT_EQ(run_binary_crawl(h, "/", "--max-nesting x", dir), 1);
    remove_dir(dir);
    test_httpd_stop(h);
}

static const char R_HOME[] =
    PAGE("Garden diary",
         "In March the broad beans went in along the south wall, the onion sets followed a week "
         "later, and the first rhubarb was forced under an old chimney pot to keep it pale and "
         "sweet for the spring crumble.",
         "<a href=\"/noindex.html\">n</a> <a href=\"/nofollow.html\">f</a> "
         "<a href=\"/relnf.html\">r</a>");
static const char R_NOINDEX[] =
    "<html><head><title>Staging copy</title><meta name=\"robots\" content=\"noindex\"></head>"
    "<body><h1>Staging copy</h1><p>This staging page lists the opening hours of the municipal "
    "swimming pool, the lane booking rules, the price of a season ticket and the dates on which "
    "the sauna closes for its yearly maintenance.</p><a href=\"/from-noindex.html\">next</a>"
    "</body></html>";
static const char R_FROM_NOINDEX[] =
    PAGE("Lighthouse keepers",
         "Before automation the lighthouse keepers trimmed the wicks every four hours, wound the "
         "clockwork that turned the lens, and wrote the weather, the passing ships and the oil "
         "they burned into a leather log book.",
         "");
static const char R_NOFOLLOW[] =
    "<html><head><title>Guest book</title><meta name=\"robots\" content=\"nofollow\"></head>"
    "<body><h1>Guest book</h1><p>Visitors to the village museum leave notes about the restored "
    "water mill, the collection of hand looms, the school room with its slates and inkwells, and "
    "the tea room that serves scones on Sundays.</p><a href=\"/from-nofollow.html\">spam</a>"
    "</body></html>";
static const char R_RELNF[] =
    PAGE("Chess club",
         "The chess club meets on Thursday nights in the library annex; beginners play the "
         "Italian game against the coach, the rapid tournament starts at eight, and the results "
         "go up on the notice board the following morning.",
         "<a href=\"/followed.html\">results</a> "
         "<a rel=\"nofollow\" href=\"/not-followed.html\">sponsor</a>");
static const char R_FOLLOWED[] =
    PAGE("Volcano soils",
         "Soils on the lower flanks of the volcano are rich in potassium and phosphorus from "
         "weathered ash, which is why vineyards and citrus groves climb so high up its slopes "
         "despite the risk of another eruption.",
         "");
static const char R_OTHER[] =
    PAGE("Never fetched", "Nothing should ever request this page from the test server.", "");

/* meta robots noindex: fetched, links followed, not archived, logged as such; meta robots
 * nofollow: archived, links not followed; rel=nofollow: that one link not followed. */
static void test_cli_meta_robots_noindex_nofollow(void)
{
#define R(p, b)                                                                                    \
    {                                                                                              \
        p, 0,                                                                                      \
        {                                                                                          \
            .status = 200, .content_type = "text/html", .body = b, .body_len = sizeof b - 1        \
        }                                                                                          \
    }
    static const struct test_route routes[] = {
        R("/", R_HOME),
        R("/noindex.html", R_NOINDEX),
        R("/from-noindex.html", R_FROM_NOINDEX),
        R("/nofollow.html", R_NOFOLLOW),
        R("/from-nofollow.html", R_OTHER),
        R("/relnf.html", R_RELNF),
        R("/followed.html", R_FOLLOWED),
        R("/not-followed.html", R_OTHER),
    };
#undef R
    struct test_httpd *h = test_httpd_start(routes, sizeof routes / sizeof routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char dir[32];
    ASSERT_EQ(run_binary_crawl(h, "/", "", dir), 0);
    /* noindex: fetched once, its link followed; logged, not in the WARC */
    ASSERT_EQ(test_httpd_count(h, "/noindex.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/from-noindex.html"), 1);
    ASSERT_EQ(log_lines(dir, "/noindex.html", "\"decision\":\"filtered\""), 1);
    ASSERT_EQ(log_lines(dir, "/noindex.html", "meta robots noindex: not archived"), 1);
    ASSERT_EQ(log_lines(dir, "/noindex.html", "\"links\":1"), 1);
    ASSERT_EQ(log_lines(dir, "/from-noindex.html", "\"decision\":\"new\""), 1);
    ASSERT_EQ(warc_records(dir, "response", "/noindex.html", NULL, 0), 0);
    ASSERT_EQ(warc_records(dir, "request", "/noindex.html", NULL, 0), 0);
    ASSERT_EQ(warc_records(dir, "response", "/from-noindex.html", NULL, 0), 1);
    /* meta nofollow: archived, its link never requested */
    ASSERT_EQ(test_httpd_count(h, "/nofollow.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/from-nofollow.html"), 0);
    ASSERT_EQ(log_lines(dir, "/nofollow.html", "\"decision\":\"new\""), 1);
    ASSERT_EQ(log_lines(dir, "/from-nofollow.html", NULL), 0);
    ASSERT_EQ(warc_records(dir, "response", "/nofollow.html", NULL, 0), 1);
    /* rel=nofollow on one link: the other link of the page is followed */
    ASSERT_EQ(test_httpd_count(h, "/followed.html"), 1);
    ASSERT_EQ(test_httpd_count(h, "/not-followed.html"), 0);
    ASSERT_EQ(log_lines(dir, "/relnf.html", "\"links\":1"), 1);
    ASSERT_EQ(warc_records(dir, "response", "/followed.html", NULL, 0), 1);
    /* every request accounted for: the six pages, nothing else */
    ASSERT_EQ(test_httpd_total(h), 6);
    remove_dir(dir);
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
    CU_add_test(s, "test_frontier_pause", test_frontier_pause);
    CU_add_test(s, "test_frontier_cancel_keeps_turn", test_frontier_cancel_keeps_turn);
    CU_add_test(s, "test_fetch_outcomes", test_fetch_outcomes);
    CU_add_test(s, "test_fetch_header_caps", test_fetch_header_caps);
    CU_add_test(s, "test_fetch_robots_kind", test_fetch_robots_kind);
    CU_add_test(s, "test_fetch_many_reuse", test_fetch_many_reuse);
    CU_add_test(s, "test_loop_tree_coverage", test_loop_tree_coverage);
    CU_add_test(s, "test_loop_depth_and_page_limits", test_loop_depth_and_page_limits);
    CU_add_test(s, "test_loop_politeness_delay", test_loop_politeness_delay);
    CU_add_test(s, "test_loop_robots_disallowed_never_fetched",
                test_loop_robots_disallowed_never_fetched);
    CU_add_test(s, "test_loop_robots_unreachable_says_why", test_loop_robots_unreachable_says_why);
    CU_add_test(s, "test_loop_robots_silent_host_time_cap", test_loop_robots_silent_host_time_cap);
    CU_add_test(s, "test_loop_robots_5xx_then_ok_crawls", test_loop_robots_5xx_then_ok_crawls);
    CU_add_test(s, "test_loop_robots_retry_keeps_delay", test_loop_robots_retry_keeps_delay);
    CU_add_test(s, "test_loop_robots_5xx_outage_limit", test_loop_robots_5xx_outage_limit);
    CU_add_test(s, "test_loop_robots_refused_host_errors", test_loop_robots_refused_host_errors);
    CU_add_test(s, "test_loop_redirects_errors_faults", test_loop_redirects_errors_faults);
    CU_add_test(s, "test_loop_focused_state_resume", test_loop_focused_state_resume);
    CU_add_test(s, "test_loop_focused_state_window", test_loop_focused_state_window);
    CU_add_test(s, "test_state_page_texts", test_state_page_texts);
    CU_add_test(s, "test_state_text_pack_reuse", test_state_text_pack_reuse);
    CU_add_test(s, "test_state_page_records_batched", test_state_page_records_batched);
    CU_add_test(s, "test_state_page_texts_batched", test_state_page_texts_batched);
    CU_add_test(s, "test_seen_bloom", test_seen_bloom);
    CU_add_test(s, "test_loop_duplicate_links_not_enqueued",
                test_loop_duplicate_links_not_enqueued);
    CU_add_test(s, "test_loop_stop_aborts_in_flight", test_loop_stop_aborts_in_flight);
    CU_add_test(s, "test_loop_bad_regex", test_loop_bad_regex);
    CU_add_test(s, "test_scope_name_host_and_domain", test_scope_name_host_and_domain);
    CU_add_test(s, "test_loop_scope_decisions", test_loop_scope_decisions);
    CU_add_test(s, "test_cli_mirror_duplicates_dropped_with_links",
                test_cli_mirror_duplicates_dropped_with_links);
    CU_add_test(s, "test_cli_focused_crawl", test_cli_focused_crawl);
    CU_add_test(s, "test_cli_sigterm_stops_cleanly", test_cli_sigterm_stops_cleanly);
    CU_add_test(s, "test_cli_zstd_page_links_followed", test_cli_zstd_page_links_followed);
    CU_add_test(s, "test_cli_caps_logged", test_cli_caps_logged);
    CU_add_test(s, "test_loop_memory_budget", test_loop_memory_budget);
    CU_add_test(s, "test_cli_meta_robots_noindex_nofollow", test_cli_meta_robots_noindex_nofollow);
}

#ifndef TESTS_HTTPD_H
#define TESTS_HTTPD_H
/*
 * A real HTTP/1.1 server on 127.0.0.1 for the tests (libmicrohttpd, one thread per
 * connection, so a fault can sleep without stalling other clients). It binds a random
 * free port, serves a fixed table of routes plus an optional callback for dynamic content,
 * serves faults on purpose (hang, reset, drip, endless body, gzip) and logs every request
 * (method, raw path and query, monotonic time, headers) for the tests to inspect.
 *
 *   static const struct test_route routes[] = {
 *       {"/robots.txt", 0, {.status = 200, .content_type = "text/plain",
 *                           .body = "User-agent: *\nDisallow: /x\n", .body_len = 26}},
 *       {"/slow/", TEST_ROUTE_PREFIX, {.status = 200, .fault = TEST_FAULT_DRIP}},
 *   };
 *   struct test_httpd *h = test_httpd_start(routes, 2, NULL, NULL);
 *   ... fetch http://127.0.0.1:<test_httpd_port(h)>/robots.txt ...
 *   CU_ASSERT_EQUAL(test_httpd_count(h, "/robots.txt"), 1);
 *   test_httpd_stop(h);
 *
 * Every fault is bounded: a hang or drip ends when the server stops (test_httpd_stop
 * returns within ~0.1 s), an endless body stops at TEST_HTTPD_ENDLESS_MAX bytes or
 * TEST_HTTPD_ENDLESS_SECONDS. Loopback only: the socket is bound to 127.0.0.1.
 */
#include <stddef.h>

enum test_fault {
    TEST_FAULT_NONE = 0,
    TEST_FAULT_HANG,    /* read the request, never answer; close after fault_ms (default 30 s) */
    TEST_FAULT_RESET,   /* send headers and the first half of the body, then a TCP RST */
    TEST_FAULT_DRIP,    /* send the body one byte every fault_ms (default 1000 ms) */
    TEST_FAULT_ENDLESS, /* chunked body that repeats `body` (or "x") until the client leaves */
};

struct test_response {
    int status;               /* 0 means 200 */
    const char *content_type; /* NULL: no Content-Type header */
    const char *headers;      /* extra header lines "Name: value", separated by '\n'; NULL: none */
    const void *body;         /* may be NULL when body_len is 0 */
    size_t body_len;
    enum test_fault fault;
    unsigned fault_ms; /* HANG: how long to hold; DRIP: delay between bytes; 0: default */
    int gzip;          /* send body gzip-compressed with Content-Encoding: gzip */
    int chunked;       /* no Content-Length: chunked transfer encoding */
    int body_free;     /* callback responses only: the server free()s body after use */
};

#define TEST_ROUTE_PREFIX 1 /* route flag: path matches every request path starting with it */

struct test_route {
    const char *path; /* the raw request path (before '?'), compared byte for byte */
    int flags;        /* 0 (exact) or TEST_ROUTE_PREFIX */
    struct test_response response;
};

/* One logged request. Immutable once logged; valid until test_httpd_stop(). */
struct test_httpd_request {
    char *method;
    char *path;  /* raw path as sent, without the query */
    char *query; /* raw query after '?', NULL when there was no '?' */
    double time; /* test_httpd_clock() when the request line was received */
    size_t nheaders;
    char **names; /* header names and values as received */
    char **values;
};

/*
 * Dynamic content: called (on a server thread) for each request no route matched. Fill
 * *out and return 0, or return non-zero for a plain 404. out->body must stay valid until
 * the callback returns (the server copies it) unless body_free is set, in which case the
 * server takes ownership of body and frees it. Must be thread-safe: requests on
 * different connections run in parallel.
 */
typedef int (*test_httpd_handler)(void *userdata, const struct test_httpd_request *req,
                                  struct test_response *out);

struct test_httpd;

#define TEST_HTTPD_LOG_CAP ((size_t)1 << 20)     /* requests logged; later ones only counted */
#define TEST_HTTPD_ENDLESS_MAX ((size_t)1 << 30) /* ENDLESS fault: bytes sent at most */
#define TEST_HTTPD_ENDLESS_SECONDS 120           /* ENDLESS fault: seconds at most */
#define TEST_HTTPD_HANG_DEFAULT_MS 30000u
#define TEST_HTTPD_DRIP_DEFAULT_MS 1000u

/*
 * Starts a server on 127.0.0.1 and a random free port. routes (borrowed: must outlive the
 * server) are tried in order, the first match wins; then handler (may be NULL); then 404.
 * Returns NULL (with a message on stderr) when the server cannot start.
 */
struct test_httpd *test_httpd_start(const struct test_route *routes, size_t nroutes,
                                    test_httpd_handler handler, void *userdata);

/* The bound port; the base URL is "http://127.0.0.1:<port>". */
unsigned short test_httpd_port(const struct test_httpd *h);

/* Writes "http://127.0.0.1:<port><path>" into buf (truncated to size); returns buf. */
char *test_httpd_url(const struct test_httpd *h, const char *path, char *buf, size_t size);

/* Ends every fault in progress, closes every connection, joins the threads, frees h and
 * the request log. NULL-safe. */
void test_httpd_stop(struct test_httpd *h);

/* Monotonic clock in seconds (CLOCK_MONOTONIC): the time base of the request log. */
double test_httpd_clock(void);

/* Number of requests received in all (including those beyond TEST_HTTPD_LOG_CAP). */
size_t test_httpd_total(const struct test_httpd *h);

/* Number of logged requests whose raw path equals path (the query is ignored). */
size_t test_httpd_count(const struct test_httpd *h, const char *path);

/* The i-th logged request in arrival order, or NULL when i >= the number logged.
 * Borrowed: valid until test_httpd_stop(h). */
const struct test_httpd_request *test_httpd_request_at(const struct test_httpd *h, size_t i);

/* Fills times[0..max) with the arrival times of the requests for path, in order; returns
 * how many there were (may exceed max). */
size_t test_httpd_times(const struct test_httpd *h, const char *path, double *times, size_t max);

/* Value of the request header name (case-insensitive), or NULL. Borrowed from req. */
const char *test_httpd_header(const struct test_httpd_request *req, const char *name);

/* The most recent logged request for path, or NULL. Borrowed until test_httpd_stop(h). */
const struct test_httpd_request *test_httpd_last(const struct test_httpd *h, const char *path);

#endif

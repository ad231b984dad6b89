/*
 * The service's request counters and latency histogram, for GET /metrics (Prometheus
 * text exposition format 0.0.4) and GET /v1/stats. Every request answered adds one to a
 * counter per (endpoint, status code) and one to a latency bucket, with C11 atomics
 * (relaxed: counters only need to be eventually exact, not ordered with anything), so
 * that the worker threads never share a lock for them. The buckets are kept apart (one
 * counter each) and made cumulative when written, the count being their sum, so that a
 * scrape is self-consistent (count = the +Inf bucket) even while requests are counted.
 */
#include "server/server_int.h"

#include <string.h>

/* The status codes the service answers with, counted apart; the last slot is the rest. */
static const unsigned status_codes[SERVER_STATUS_SLOTS - 1] = {
    200, 400, 401, 403, 404, 405, 408, 411, 413, 414, 415, 431, 500, 501, 503,
};

/* The upper bounds of the latency buckets, in seconds. */
static const double bucket_le[SERVER_LATENCY_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

void server__metrics_init(struct server_metrics *m)
{
    for (size_t e = 0; e < SERVER_EP_COUNT; e++)
        for (size_t s = 0; s < SERVER_STATUS_SLOTS; s++)
            atomic_init(&m->requests[e][s], 0);
    for (size_t b = 0; b <= SERVER_LATENCY_BUCKETS; b++)
        atomic_init(&m->buckets[b], 0);
    atomic_init(&m->sum_ns, 0);
    atomic_init(&m->count, 0);
}

static size_t status_slot(unsigned status)
{
    for (size_t i = 0; i < SERVER_STATUS_SLOTS - 1; i++)
        if (status_codes[i] == status)
            return i;
    return SERVER_STATUS_SLOTS - 1;
}

void server__metrics_record(struct server_metrics *m, enum server_endpoint e, unsigned status,
                            double seconds)
{
    if ((unsigned)e >= SERVER_EP_COUNT)
        e = SERVER_EP_OTHER;
    if (!(seconds >= 0))
        seconds = 0;
    atomic_fetch_add_explicit(&m->requests[e][status_slot(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < SERVER_LATENCY_BUCKETS && seconds > bucket_le[b])
        b++;
    atomic_fetch_add_explicit(&m->buckets[b], 1, memory_order_relaxed);
    double ns = seconds * 1e9;
    uint64_t add = ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX / 2;
    atomic_fetch_add_explicit(&m->sum_ns, add, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
}

uint64_t server__metrics_total(struct server_metrics *m)
{
    return atomic_load_explicit(&m->count, memory_order_relaxed);
}

void server__metrics_write(struct server_metrics *m, struct server_buf *b)
{
    server__buf_puts(b, "# HELP simcrawl_requests_total Requests answered, by endpoint and "
                        "HTTP status code.\n"
                        "# TYPE simcrawl_requests_total counter\n");
    for (size_t e = 0; e < SERVER_EP_COUNT; e++)
        for (size_t s = 0; s < SERVER_STATUS_SLOTS; s++) {
            uint64_t n = atomic_load_explicit(&m->requests[e][s], memory_order_relaxed);
            if (n == 0)
                continue;
            server__buf_printf(b, "simcrawl_requests_total{endpoint=\"%s\",code=\"",
                               server__endpoint_name((enum server_endpoint)e));
            if (s < SERVER_STATUS_SLOTS - 1)
                server__buf_printf(b, "%u", status_codes[s]);
            else
                server__buf_puts(b, "other");
            server__buf_printf(b, "\"} %llu\n", (unsigned long long)n);
        }
    server__buf_puts(b, "# HELP simcrawl_request_duration_seconds Time from a request's "
                        "first line to its answer, in seconds.\n"
                        "# TYPE simcrawl_request_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (size_t i = 0; i <= SERVER_LATENCY_BUCKETS; i++) {
        cum += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
        if (i < SERVER_LATENCY_BUCKETS)
            server__buf_printf(b, "simcrawl_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                               bucket_le[i], (unsigned long long)cum);
        else
            server__buf_printf(b, "simcrawl_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                               (unsigned long long)cum);
    }
    uint64_t ns = atomic_load_explicit(&m->sum_ns, memory_order_relaxed);
    server__buf_printf(b, "simcrawl_request_duration_seconds_sum %.9f\n", (double)ns / 1e9);
    server__buf_printf(b, "simcrawl_request_duration_seconds_count %llu\n",
                       (unsigned long long)cum);
}

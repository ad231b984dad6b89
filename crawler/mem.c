/*
 * mem.c: the crawl's memory budget (crawl.h, struct crawl_mem): a count of the bytes that
 * response buffers and decoded bodies hold at once, the most ever held, and a limit.
 * The fetcher takes bytes before it grows a response buffer, leaving a quarter of the
 * limit for decoding (fetch.c: a transfer that finds no room is paused with
 * CURL_WRITEFUNC_PAUSE and resumed when bytes come back); the decoder takes them before
 * it grows a decoded body, from all of the limit (httpblock.c: no room is an error);
 * crawl_response_free() and crawl_http_free() give them back. A take is all or nothing under one
 * mutex, so the count never passes the limit: peak <= limit holds. Takes and gives come from the
 * loop thread and the worker threads.
 */
#include "crawler/crawl.h"

#include <pthread.h>
#include <stdlib.h>

struct crawl_mem {
    pthread_mutex_t lock;
    size_t limit, held, peak;
    uint64_t gives; /* how many gives so far: a waiter retries only after one */
};

struct crawl_mem *crawl_mem_new(size_t limit)
{
    struct crawl_mem *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    m->limit = limit ? limit : SIZE_MAX;
    return m;
}

void crawl_mem_free(struct crawl_mem *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

enum crawl_code crawl_mem_take(struct crawl_mem *m, size_t n)
{
    return crawl_mem_take_leaving(m, n, 0);
}

enum crawl_code crawl_mem_take_leaving(struct crawl_mem *m, size_t n, size_t keep)
{
    if (!m || n == 0)
        return CRAWL_OK;
    int ok = 0;
    pthread_mutex_lock(&m->lock);
    if (keep <= m->limit - m->held && n <= m->limit - m->held - keep) {
        m->held += n;
        if (m->held > m->peak)
            m->peak = m->held;
        ok = 1;
    }
    pthread_mutex_unlock(&m->lock);
    return ok ? CRAWL_OK : CRAWL_ETOOLARGE;
}

void crawl_mem_give(struct crawl_mem *m, size_t n)
{
    if (!m || n == 0)
        return;
    pthread_mutex_lock(&m->lock);
    m->held = n <= m->held ? m->held - n : 0;
    m->gives++;
    pthread_mutex_unlock(&m->lock);
}

void crawl_mem_get(struct crawl_mem *m, struct crawl_mem_stats *out)
{
    if (!m) {
        out->limit = out->held = out->peak = 0;
        out->gives = 0;
        return;
    }
    pthread_mutex_lock(&m->lock);
    out->limit = m->limit;
    out->held = m->held;
    out->peak = m->peak;
    out->gives = m->gives;
    pthread_mutex_unlock(&m->lock);
}

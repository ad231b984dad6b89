/*
 * The filter's connections to a Redis index (filter/filter_int.h): a pool of struct
 * redisidx (filter/redisidx.h), one per call in flight, so that the threads of a host
 * (simcrawl serve's workers, a wget2 with several threads) check in parallel, each on a
 * connection of its own, while Redis keeps the decision atomic across all of them and
 * across every other process on the same index. Connections are made on demand (the first
 * at open, which checks the index's meta record) up to FR_MAX_CONNS, then callers wait.
 */
#include "filter/filter_int.h"
#include "filter/redisidx.h"
#include "filter/simcrawl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fr_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *url;
    unsigned k;
    struct redisidx *free_[FR_MAX_CONNS];
    unsigned n_free, n_open;
};

int fr_is_url(const char *path)
{
    return path && (!strncmp(path, "redis://", 8) || !strncmp(path, "unix://", 7));
}

int fr_code(int c)
{
    switch ((enum redisidx_code)c) {
    case REDISIDX_OK:
        return 0;
    case REDISIDX_ENOMEM:
        return SIMCRAWL_ENOMEM;
    case REDISIDX_EINVAL:
        return SIMCRAWL_EINVAL;
    case REDISIDX_ETOOLARGE:
        return SIMCRAWL_EINVAL;
    case REDISIDX_EVERSION:
        return SIMCRAWL_EVERSION;
    case REDISIDX_EMISMATCH:
        return SIMCRAWL_EMISMATCH;
    case REDISIDX_EMETHOD:
        return SIMCRAWL_EMETHOD;
    case REDISIDX_ECORRUPT:
        return SIMCRAWL_ECORRUPT;
    case REDISIDX_EIO:
    case REDISIDX_ECONFLICT:
        return SIMCRAWL_EIO;
    }
    return SIMCRAWL_EIO;
}

int fr_open(struct fr_pool **out, const char *url, unsigned k, char *err, size_t errlen)
{
    *out = NULL;
    struct fr_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->url = strdup(url))) {
        free(p);
        return SIMCRAWL_ENOMEM;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->url);
        free(p);
        return SIMCRAWL_ENOMEM;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p->url);
        free(p);
        return SIMCRAWL_ENOMEM;
    }
    struct redisidx_opts o = {.k = k};
    struct redisidx *ix = NULL;
    enum redisidx_code c = redisidx_open(url, &o, &ix, err, errlen);
    if (c != REDISIDX_OK) {
        fr_close(p);
        return fr_code(c);
    }
    p->k = redisidx_k(ix);
    p->free_[p->n_free++] = ix;
    p->n_open = 1;
    *out = p;
    return 0;
}

void fr_close(struct fr_pool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->n_free; i++)
        redisidx_close(p->free_[i]);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->url);
    free(p);
}

unsigned fr_k(const struct fr_pool *p)
{
    return p->k;
}

struct redisidx *fr_take(struct fr_pool *p, int *code, char *err, size_t errlen)
{
    struct redisidx *ix = NULL;
    pthread_mutex_lock(&p->mu);
    while (!p->n_free && p->n_open >= FR_MAX_CONNS)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->n_free) {
        ix = p->free_[--p->n_free];
        pthread_mutex_unlock(&p->mu);
        return ix;
    }
    p->n_open++; /* a new one, made outside the lock */
    pthread_mutex_unlock(&p->mu);
    struct redisidx_opts o = {.k = p->k, .k_zero = p->k == 0};
    enum redisidx_code c = redisidx_open(p->url, &o, &ix, err, errlen);
    if (c != REDISIDX_OK) {
        *code = fr_code(c);
        pthread_mutex_lock(&p->mu);
        p->n_open--;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    return ix;
}

void fr_give(struct fr_pool *p, struct redisidx *ix)
{
    pthread_mutex_lock(&p->mu);
    p->free_[p->n_free++] = ix;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

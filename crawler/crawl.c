/*
 * The crawl loop: seeds in, every reachable in-scope URL fetched once, politely, with the
 * pages decided about by the caller's process() callback (in simcrawl: extract,
 * fingerprint, look up the near-duplicate index, write the WARC) and the links of kept
 * pages enqueued. crawler/ knows nothing of HTML or fingerprints: the callback does.
 *
 * HOW IT WORKS. One thread runs the event loop: it pops URLs from the frontier
 * (frontier.c) when their host's turn has come, checks robots.txt through the per-host
 * policy (robots_policy.c; robots.txt is itself fetched as a transfer of the same multi
 * handle, the host held until it arrives; a failing robots.txt holds the host's URLs
 * while it is retried with backoff, up to an outage limit: robots_done), starts
 * transfers on the fetcher (fetch.c), and handles what finishes: redirects are followed
 * here (the target is canonicalised, scope-checked and queued, so robots and politeness
 * apply to every hop), errors and filtered answers are logged, and HTML pages go to a
 * bounded job queue. `workers` threads take jobs, undo the content coding and call
 * process(); their verdicts come back on a second queue and wake the loop
 * (curl_multi_wakeup). The loop then enqueues
 * the verdict's links (canonical already, checked here against depth, scope, the
 * include/exclude regexes and the seen set) and writes the log record. The network never
 * waits on parsing, and parsing never waits on the network; the number of pages fetched
 * but not yet decided is capped (`queue`), which bounds memory in both directions.
 *
 * Stopping: crawl_stop() (from a signal handler) sets a flag and wakes the loop, which
 * starts no more transfers, gives those in flight stop_grace seconds, aborts the rest
 * (logged as errors), lets the workers finish their jobs, and returns.
 */
#include "crawler/crawl.h"
#include "crawler/crawler_int.h"

#include <ctype.h>
#include <errno.h>
#include <libpsl.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- verdicts ---- */

const char *crawl_decision_name(enum crawl_decision d)
{
    static const char *const names[] = {
        [CRAWL_DECISION_NEW] = "new",
        [CRAWL_DECISION_NEAR_DUPLICATE] = "near-duplicate",
        [CRAWL_DECISION_EXACT_DUPLICATE] = "exact-duplicate",
        [CRAWL_DECISION_ROBOTS_DISALLOWED] = "robots-disallowed",
        [CRAWL_DECISION_FILTERED] = "filtered",
        [CRAWL_DECISION_REDIRECT] = "redirect",
        [CRAWL_DECISION_ERROR] = "error",
    };
    if ((unsigned)d < sizeof names / sizeof names[0])
        return names[d];
    return "error";
}

enum crawl_code crawl_verdict_set(char **field, const char *value)
{
    char *copy = NULL;
    if (value) {
        copy = strdup(value);
        if (!copy)
            return CRAWL_ENOMEM;
    }
    free(*field);
    *field = copy;
    return CRAWL_OK;
}

/*
 * HOW IT WORKS (link memo): pages name the same targets again and again (a Sphinx page
 * links its own sections, the index and its neighbours many times over: python3.11-doc
 * hands 106,000 links from 530 pages, 21,000 of them distinct per page). Each URL's bytes
 * are kept in one buffer and found again through an open-addressing table of FNV-1a
 * hashes (the bytes are compared, so a collision costs a compare, never a link); a repeat
 * skips canonicalisation and the hand-over to the loop, and raises the kept link's
 * priority if it is higher. So every count made from the links (enqueued, out of scope,
 * saved by dedup) counts a target once per page.
 */
enum { MEMO_INVALID = -1, MEMO_NEW = -2, MEMO_EMPTY = -3 }; /* memo_entry.link below 0 */

struct memo_entry {
    uint64_t hash;
    size_t off, len; /* the URL's bytes in raw */
    long link;       /* its index in v->links, or MEMO_INVALID (counted once), MEMO_NEW
                      * (just added, not decided yet), MEMO_EMPTY (a free slot) */
};

/* A verdict as the crawler holds it (in its job): the public part first (the
 * crawl_verdict * handed to opts.process is this struct's address), then the crawler's
 * own memo of the links added. */
struct verdict {
    struct crawl_verdict pub;
    int base_fast;                     /* pub.base is canonical (1), not (0), unknown (-1) */
    size_t max_links;                  /* opts.max_links */
    struct crawl_link_memo *link_memo; /* the URLs added so far, by bytes */
};
#define VPRIV(v) ((struct verdict *)(void *)(v))

struct crawl_link_memo {
    struct memo_entry *slot;
    size_t mask, n;
    char *raw;
    size_t raw_len, raw_cap;
};

static void link_memo_free(struct crawl_link_memo *m)
{
    if (!m)
        return;
    free(m->slot);
    free(m->raw);
    free(m);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The entry of url (len bytes, hash h): the one added before, or a new one (MEMO_NEW) for
 * the caller to decide, the table grown first when half full. NULL on ENOMEM. */
static struct memo_entry *link_memo_find(struct crawl_verdict *v, const char *url, size_t len,
                                         uint64_t h)
{
    struct crawl_link_memo *m = VPRIV(v)->link_memo;
    if (!m) {
        m = VPRIV(v)->link_memo = calloc(1, sizeof *m);
        if (!m)
            return NULL;
    }
    if (2 * (m->n + 1) > m->mask + 1 || !m->slot) {
        size_t slots = m->slot ? 2 * (m->mask + 1) : 64;
        struct memo_entry *ns = malloc(slots * sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < slots; i++)
            ns[i].link = MEMO_EMPTY;
        for (size_t i = 0; m->slot && i <= m->mask; i++) {
            if (m->slot[i].link == MEMO_EMPTY)
                continue;
            size_t j = (size_t)m->slot[i].hash & (slots - 1);
            while (ns[j].link != MEMO_EMPTY)
                j = (j + 1) & (slots - 1);
            ns[j] = m->slot[i];
        }
        free(m->slot);
        m->slot = ns;
        m->mask = slots - 1;
    }
    size_t i = (size_t)h & m->mask;
    for (; m->slot[i].link != MEMO_EMPTY; i = (i + 1) & m->mask) {
        struct memo_entry *e = &m->slot[i];
        if (e->hash == h && e->len == len && memcmp(m->raw + e->off, url, len) == 0)
            return e;
    }
    if (len + 1 > m->raw_cap - m->raw_len) {
        size_t cap = m->raw_cap ? m->raw_cap : 4096;
        while (len + 1 > cap - m->raw_len)
            cap *= 2;
        char *r = realloc(m->raw, cap);
        if (!r)
            return NULL;
        m->raw = r;
        m->raw_cap = cap;
    }
    memcpy(m->raw + m->raw_len, url, len);
    struct memo_entry *e = &m->slot[i];
    e->hash = h;
    e->off = m->raw_len;
    e->len = len;
    e->link = MEMO_NEW;
    m->raw_len += len;
    m->n++;
    return e;
}

enum crawl_code crawl_verdict_add_link(struct crawl_verdict *v, const char *url, float priority)
{
    size_t len = strlen(url);
    struct memo_entry *e = link_memo_find(v, url, len, fnv1a(url, len));
    if (!e)
        return CRAWL_ENOMEM;
    if (e->link != MEMO_NEW) { /* given before */
        if (e->link >= 0 && priority > v->link_priority[e->link])
            v->link_priority[e->link] = priority;
        return CRAWL_OK;
    }
    e->link = MEMO_INVALID; /* until it is kept */
    char *canon = NULL;
    enum crawl_code rc = crawl__url_canonicalise_memo(url, v->base, &VPRIV(v)->base_fast, &canon);
    if (rc == CRAWL_EURL) {
        free(canon);
        v->links_invalid++;
        return CRAWL_OK;
    }
    size_t max_links = VPRIV(v)->max_links ? VPRIV(v)->max_links : CRAWL_DEFAULT_MAX_LINKS;
    if (rc == CRAWL_OK && v->n_links >= max_links) { /* over the cap: said in the log */
        free(canon);
        v->links_capped++;
        if (!strstr(v->truncated, "links"))
            crawl_verdict_truncated(v, "links");
        return CRAWL_OK;
    }
    if (rc != CRAWL_OK)
        return rc;
    if (v->n_links == v->cap_links) {
        size_t cap = v->cap_links ? v->cap_links * 2 : 32;
        char **l = realloc(v->links, cap * sizeof *l);
        if (l)
            v->links = l;
        float *p = realloc(v->link_priority, cap * sizeof *p);
        if (p)
            v->link_priority = p;
        if (!l || !p) {
            free(canon);
            return CRAWL_ENOMEM;
        }
        v->cap_links = cap;
    }
    v->links[v->n_links] = canon;
    v->link_priority[v->n_links] = priority;
    e->link = (long)v->n_links++;
    return CRAWL_OK;
}

enum crawl_code crawl_verdict_add_requisite(struct crawl_verdict *v, const char *url)
{
    if (v->n_requisites >= CRAWL_MAX_REQUISITES)
        return CRAWL_OK;
    char *canon = NULL;
    enum crawl_code rc = crawl__url_canonicalise_memo(url, v->base, &VPRIV(v)->base_fast, &canon);
    if (rc == CRAWL_EURL) { /* data:, javascript:, malformed: nothing to fetch */
        free(canon);
        return CRAWL_OK;
    }
    if (rc != CRAWL_OK)
        return rc;
    if (v->n_requisites == v->cap_requisites) {
        size_t cap = v->cap_requisites ? v->cap_requisites * 2 : 16;
        char **r = realloc(v->requisites, cap * sizeof *r);
        if (!r) {
            free(canon);
            return CRAWL_ENOMEM;
        }
        v->requisites = r;
        v->cap_requisites = cap;
    }
    v->requisites[v->n_requisites++] = canon;
    return CRAWL_OK;
}

void crawl_verdict_truncated(struct crawl_verdict *v, const char *what)
{
    size_t n = strlen(v->truncated);
    if (n && n + 1 < sizeof v->truncated)
        v->truncated[n++] = ',';
    snprintf(v->truncated + n, sizeof v->truncated - n, "%s", what);
}

static void verdict_init(struct verdict *x, const char *base, size_t max_links)
{
    memset(x, 0, sizeof *x);
    struct crawl_verdict *v = &x->pub;
    v->decision = CRAWL_DECISION_NEW;
    v->distance = -1;
    v->relevance = NAN;
    v->expand = 1;
    v->base = base;
    x->base_fast = -1;
    x->max_links = max_links;
}

static void verdict_release(struct crawl_verdict *v)
{
    for (size_t i = 0; i < v->n_links; i++)
        free(v->links[i]);
    free(v->links);
    free(v->link_priority);
    for (size_t i = 0; i < v->n_requisites; i++)
        free(v->requisites[i]);
    free(v->requisites);
    free(v->duplicate_of);
    free(v->canonical);
    free(v->error);
    link_memo_free(VPRIV(v)->link_memo);
}

/* ---- the crawl ---- */

/* A queued page requisite carries this bit in its item's hops (the redirects followed
 * are the other bits): so the frontier and the state keep it with the URL, no field of
 * their own needed, and a resumed crawl fetches it as a requisite too. */
#define HOPS_REQUISITE 0x40000000u
#define HOPS_COUNT(h) ((h) & ~HOPS_REQUISITE)

struct hostinfo {
    struct crawl_robots_host *robots;
    int robots_in_flight;
    char robots_why[160];   /* the last robots.txt fetch's failure: "HTTP 503" or curl's
                             * words, for the log */
    double outage_since;    /* robots.txt failing: when the first failure in a row ended */
    unsigned no_answer;     /* robots.txt fetches in a row that got no HTTP answer at all */
    double no_answer_since; /* when the first of those started (crawl_clock()) */
    int given_up;           /* robots.txt failed too long: every URL of the host is logged
                             * as given_up_as (robots-disallowed or error), none fetched */
    enum crawl_decision given_up_as;
    char given_up_why[240];
    /* with a state (opts.state): */
    int64_t sid;      /* the host's row */
    int spilled;      /* queued URLs in the state that are not in the frontier */
    int64_t cursor;   /* the highest URL row id in the frontier: the window goes on
                       * from there */
    float below_prio; /* focused: the queued URLs only in the state are those ranked
                       * below (below_prio, below_id) (crawl_state_queued_best), those
                       * in the frontier above it */
    int64_t below_id;
    size_t on_disk; /* queued URLs of the host only in the state */
    int dirty;      /* politeness changed since the last commit */
    struct crawl_host *host;
    struct hostinfo *next;
};

/* A job's place in the crawl's list of page transfers in flight (with a state). */
struct job_link {
    struct job_link *prev, *next; /* NULL: not in the list */
};

/* One fetch in flight or one page in the worker pipeline. */
struct job {
    struct job_link link; /* with a state: in c->inflight from its start to its end */
    int leased;           /* with a state: written leased (maybe_commit) */
    struct crawl_item item;
    struct crawl_host *host;
    int robots; /* a robots.txt fetch */
    struct crawl_response *resp;
    struct verdict verdict;
    int process_rc;
    double process_seconds;
    char decode_error[160];
    struct job *next;
};

struct queue {
    struct job *head, *tail;
    size_t n;
};

/* Focused crawls: the best priority each queued URL was pushed with (URL hash -> float),
 * so that a link found again with a higher relevance is queued again at that priority;
 * the older, lower entry is dropped when popped (`dispatched` says so). Open addressing.
 * With a state it is a cache of at most limit URLs, emptied when full, in front of the
 * state's priorities (the seen set's way: memory does not grow with the URLs seen). */
struct prio_map {
    uint64_t *keys; /* 0 = empty */
    float *vals;
    size_t mask, n;
    size_t limit; /* 0: none */
};

/* The slot of h: -INFINITY when it was not in the map. */
static float *prio_slot(struct prio_map *m, uint64_t h)
{
    if (m->limit && m->n >= m->limit) {
        memset(m->keys, 0, (m->mask + 1) * sizeof *m->keys);
        m->n = 0;
    }
    if (!m->keys || (m->n + 1) * 2 > m->mask + 1) {
        size_t cap = m->keys ? (m->mask + 1) * 2 : 1024;
        uint64_t *k = calloc(cap, sizeof *k);
        float *v = calloc(cap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return NULL;
        }
        for (size_t i = 0; m->keys && i <= m->mask; i++) {
            if (!m->keys[i])
                continue;
            size_t j = (size_t)m->keys[i] & (cap - 1);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = m->keys[i];
            v[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->mask = cap - 1;
    }
    h |= 1;
    size_t j = (size_t)h & m->mask;
    while (m->keys[j] && m->keys[j] != h)
        j = (j + 1) & m->mask;
    if (!m->keys[j]) {
        m->keys[j] = h;
        m->vals[j] = -INFINITY;
        m->n++;
    }
    return &m->vals[j];
}

struct crawl {
    struct crawl_opts opts;
    struct prio_map prio;          /* focused crawls only */
    struct crawl_seen *dispatched; /* focused crawls only: URLs already fetched */
    struct crawl_frontier *frontier;
    struct crawl_state *state; /* opts.state, or NULL */
    struct crawl_fetcher *fetcher;
    struct crawl_mem *mem;          /* opts.max_memory: response buffers and decoded bodies */
    struct crawl_seen *seen;        /* with a state: the latest URLs only, up to a cap */
    struct crawl_bloom *seen_bloom; /* with a state: the URLs spilled from seen */
    uint64_t n_seen;                /* URLs seen (with a state: the table holds a part) */
    regex_t include, exclude;
    int has_include, has_exclude;
    const psl_ctx_t *psl;
    psl_ctx_t *psl_owned;
    char **scope_names; /* seed hosts (scope host) or registrable domains (scope domain) */
    size_t n_scope;
    char **parent_dirs; /* --no-parent: each seed's origin and directory ("http://h/a/") */
    size_t n_parent_dirs;
    struct hostinfo *hosts;
    struct crawl_stats stats;
    double start;
    volatile sig_atomic_t stop;
    int fatal;
    uint64_t n_dispatched;                         /* page transfers started */
    struct crawl_robots_policy_opts robots_policy; /* every host's */

    /* the state on disk (opts.state) */
    struct job_link inflight; /* page transfers started and not recorded yet */
    size_t disk_queued;       /* queued URLs only in the state (spilled hosts) */
    size_t window;            /* with a state: queued URLs of a host held in memory ("windows") */
    double last_commit;       /* crawl_clock() */
    size_t uncommitted;       /* URLs recorded since the last commit */
    double elapsed_before;    /* s of the earlier runs of the crawl */
    int complete;

    /* the shared frontier (a state opened with crawl_state_open_redis), or NULL */
    struct crawl_redis *redis;
    double next_acquire; /* crawl_clock(): when to ask the shared frontier again */
    double next_renew, next_reap;
    int shared_empty;             /* the last acquire found no host waiting and no lease anywhere */
    int shared_spent;             /* ... and the crawl's page budget spent (all workers') */
    int finishing;                /* the last commit: hosts are given back, not kept */
    int shared_kept;              /* the last commit leased more URLs: dispatch them at once */
    uint64_t stats_committed[16]; /* STATS_KEPT (one each: shared_commit asserts it) as
                                   * last committed: the crawl's counters get the differences */

    pthread_t threads[CRAWL_MAX_WORKERS];
    unsigned n_threads;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct queue todo, done; /* under lock */
    int quit;                /* under lock: workers exit when todo is empty */
    size_t in_pipeline;      /* loop thread only: jobs in todo, in a worker, or in done */
};

static void queue_push(struct queue *q, struct job *j)
{
    j->next = NULL;
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    q->n++;
}

static struct job *queue_pop(struct queue *q)
{
    struct job *j = q->head;
    if (j) {
        q->head = j->next;
        if (!q->head)
            q->tail = NULL;
        q->n--;
        j->next = NULL;
    }
    return j;
}

static void job_free_data(struct crawl *c, struct job *j)
{
    if (j->verdict.pub.page_data) {
        if (c->opts.page_data_free)
            c->opts.page_data_free(j->verdict.pub.page_data);
        else
            free(j->verdict.pub.page_data);
        j->verdict.pub.page_data = NULL;
    }
}

static void job_free(struct job *j)
{
    if (!j)
        return;
    if (j->link.next) { /* out of the list of transfers in flight */
        j->link.prev->next = j->link.next;
        j->link.next->prev = j->link.prev;
    }
    crawl_item_release(&j->item);
    crawl_response_free(j->resp);
    verdict_release(&j->verdict.pub);
    free(j);
}

/* ---- workers ---- */

static void run_job(struct crawl *c, struct job *j)
{
    struct crawl_response *r = j->resp;
    struct crawl_page page = {
        .url = j->item.url,
        .depth = j->item.depth,
        .status = r->status,
        .head = r->data,
        .head_len = r->head_len,
        .raw_body = r->data + r->head_len,
        .raw_len = r->len - r->head_len,
        .body = r->data + r->head_len,
        .body_len = r->len - r->head_len,
        .request = r->request,
        .request_len = r->request_len,
        .content_type = r->content_type,
        .ip = r->ip,
        .date = r->date,
        .requisite = (j->item.hops & HOPS_REQUISITE) != 0,
    };
    verdict_init(&j->verdict, j->item.url, c->opts.max_links);
    struct crawl_http_msg *msg = NULL;
    if (r->content_encoding && *r->content_encoding &&
        strcmp(r->content_encoding, "identity") != 0) {
        struct crawl_http_opts ho = {.max_body = c->opts.max_body * 8, .mem = c->mem};
        enum crawl_code rc = crawl_http_parse(r->data, r->len, &ho, &msg);
        const char *data = NULL;
        size_t len = 0;
        if (rc == CRAWL_OK)
            rc = crawl_http_body(msg, &data, &len);
        /* a body cut short, damaged, over the decode cap or in an unknown coding is an
         * error, not a page: what decoded of it may be a fraction of the document */
        if (rc == CRAWL_OK)
            rc = crawl_http_body_code(msg);
        if (rc != CRAWL_OK) {
            snprintf(j->decode_error, sizeof j->decode_error, "content coding %.40s: %.100s",
                     r->content_encoding,
                     msg && *crawl_http_body_error(msg) ? crawl_http_body_error(msg)
                                                        : crawl_strerror(rc));
            crawl_http_free(msg);
            return;
        }
        page.body = data;
        page.body_len = len;
    }
    double t0 = crawl_clock();
    j->process_rc = c->opts.process ? c->opts.process(c->opts.userdata, &page, &j->verdict.pub) : 0;
    j->process_seconds = crawl_clock() - t0;
    crawl_http_free(msg);
}

static void *worker_main(void *arg)
{
    struct crawl *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        struct job *j = queue_pop(&c->todo);
        if (!j) {
            if (c->quit)
                break;
            pthread_cond_wait(&c->cond, &c->lock);
            continue;
        }
        pthread_mutex_unlock(&c->lock);
        run_job(c, j);
        pthread_mutex_lock(&c->lock);
        queue_push(&c->done, j);
        crawl_fetcher_wakeup(c->fetcher);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* ---- setup ---- */

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt,
                                                          ...);
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Step 1, every option left 0 (or out of range) given its default. */
static void opts_defaults(struct crawl_opts *o)
{
    if (o->concurrency == 0)
        o->concurrency = CRAWL_DEFAULT_CONCURRENCY;
    if (o->per_host == 0)
        o->per_host = 1;
    if (o->delay < 0 || isnan(o->delay))
        o->delay = CRAWL_DEFAULT_DELAY;
    if (o->max_delay <= 0)
        o->max_delay = CRAWL_DEFAULT_MAX_DELAY;
    if (o->max_body == 0)
        o->max_body = CRAWL_DEFAULT_MAX_BODY;
    if (o->max_memory == 0)
        o->max_memory = CRAWL_DEFAULT_MAX_MEMORY;
    if (o->max_redirects == 0)
        o->max_redirects = CRAWL_DEFAULT_MAX_REDIRECTS;
    if (o->workers == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->workers = n > 0 ? (unsigned)n : 1;
    }
    if (o->workers > CRAWL_MAX_WORKERS)
        o->workers = CRAWL_MAX_WORKERS;
    if (o->queue == 0)
        /* a focused crawl must not run ahead of its own decisions: on a fast network the
         * frontier would be drained before the pages that rank it are parsed, so fetches
         * in flight count against the queue and it is short */
        o->queue = o->focused ? o->workers + 1 : CRAWL_DEFAULT_QUEUE;
    if (o->stop_grace <= 0)
        o->stop_grace = 5;
    if (o->progress_interval <= 0)
        o->progress_interval = 0.5;
    if (!o->user_agent)
        o->user_agent = CRAWL_DEFAULT_USER_AGENT;
    if (!(o->robots_outage > 0))
        o->robots_outage = CRAWL_DEFAULT_ROBOTS_OUTAGE;
    if (!(o->robots_backoff > 0))
        o->robots_backoff = CRAWL_DEFAULT_ROBOTS_BACKOFF;
    if (!(o->robots_backoff_max > 0))
        o->robots_backoff_max = CRAWL_DEFAULT_ROBOTS_BACKOFF_MAX;
    if (o->robots_backoff_max < o->robots_backoff)
        o->robots_backoff_max = o->robots_backoff;
    if (o->unreachable_retries == 0)
        o->unreachable_retries = CRAWL_DEFAULT_UNREACHABLE_RETRIES;
    else if (o->unreachable_retries < 0)
        o->unreachable_retries = 0;
    if (!(o->unreachable_time > 0))
        o->unreachable_time = CRAWL_DEFAULT_UNREACHABLE_TIME;
}

/* Step 2, what needs no check: the robots.txt policy, the lock, the state and the shared
 * frontier's page budget. After it crawl_free may run. */
static void crawl_init_core(struct crawl *c)
{
    const struct crawl_opts *o = &c->opts;
    /* the policy backs off; the crawl, not the policy, ends an outage (robots_done) */
    crawl_robots_policy_opts_init(&c->robots_policy);
    c->robots_policy.backoff_initial = o->robots_backoff;
    c->robots_policy.backoff_max = o->robots_backoff_max;
    c->robots_policy.outage_limit = -1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->state = o->state;
    c->redis = crawl_state_redis(o->state);
    c->inflight.prev = c->inflight.next = &c->inflight;
    if (c->redis) /* the page budget of all the workers together, kept in Redis */
        crawl_redis_set_max_pages(c->redis, o->max_pages);
}

/* --include or --exclude (name) compiled into re: CRAWL_OK, or CRAWL_EINVAL with err set. */
static enum crawl_code compile_regex(regex_t *re, const char *name, const char *pattern, char *err,
                                     size_t errlen)
{
    int e = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
    if (e != 0) {
        char msg[128];
        regerror(e, re, msg, sizeof msg);
        set_err(err, errlen, "bad --%s regex '%s': %s", name, pattern, msg);
        return CRAWL_EINVAL;
    }
    return CRAWL_OK;
}

/* Step 3, the scope: the options that exclude each other refused, the --include and
 * --exclude regexes compiled, the public suffix list of a domain scope loaded.
 * CRAWL_OK, or CRAWL_EINVAL with err set. */
static enum crawl_code scope_setup(struct crawl *c, char *err, size_t errlen)
{
    const struct crawl_opts *o = &c->opts;
    if (c->redis && o->focused) {
        set_err(err, errlen,
                "a focused crawl (--topic) cannot use the shared frontier "
                "(--redis): its queues are in fetch order, not by priority");
        return CRAWL_EINVAL;
    }
    if (o->include && *o->include) {
        if (compile_regex(&c->include, "include", o->include, err, errlen) != CRAWL_OK)
            return CRAWL_EINVAL;
        c->has_include = 1;
    }
    if (o->exclude && *o->exclude) {
        if (compile_regex(&c->exclude, "exclude", o->exclude, err, errlen) != CRAWL_OK)
            return CRAWL_EINVAL;
        c->has_exclude = 1;
    }
    if (o->scope == CRAWL_SCOPE_DOMAIN) {
        c->psl_owned = psl_latest(NULL);
        c->psl = c->psl_owned ? c->psl_owned : psl_builtin();
        if (!c->psl) {
            set_err(err, errlen, "no public suffix list (libpsl)");
            return CRAWL_EINVAL;
        }
    }
    return CRAWL_OK;
}

/* Step 4, the frontier, the state's window and the seen set (with a state: a table of
 * half of seen_memory, never grown past). */
static enum crawl_code frontier_setup(struct crawl *c)
{
    struct crawl_opts *o = &c->opts;
    struct crawl_frontier_opts fo = {
        .per_host = o->per_host, .delay = o->delay, .max_delay = o->max_delay};
    enum crawl_code rc = crawl_frontier_new(&fo, &c->frontier);
    if (rc != CRAWL_OK)
        return rc;
    c->window = CRAWL_STATE_WINDOW;
    const char *w = getenv("SIMCRAWL_STATE_WINDOW"); /* tests: a window of a few URLs */
    if (w && strtoul(w, NULL, 10) >= 2)
        c->window = strtoul(w, NULL, 10);
    size_t seen_cap = 0;
    if (o->state) {
        if (o->seen_memory == 0)
            o->seen_memory = CRAWL_STATE_SEEN_MEMORY;
        size_t slots = 16;
        while (slots * 2 * sizeof(uint64_t) <= o->seen_memory / 2)
            slots *= 2;
        seen_cap = slots / 4 * 3;
    }
    return crawl_seen_new(seen_cap, &c->seen);
}

/* Step 5, a focused crawl's set of fetched URLs and its priority map (with a state a
 * cache of a quarter of seen_memory at most: a table of 12-byte slots kept at most half
 * full), and the state's best-first order. */
static enum crawl_code focus_setup(struct crawl *c)
{
    const struct crawl_opts *o = &c->opts;
    enum crawl_code rc = crawl_seen_new(0, &c->dispatched);
    if (rc != CRAWL_OK)
        return rc;
    size_t slots = 16;
    while (o->state && slots * 2 * (sizeof(uint64_t) + sizeof(float)) <= o->seen_memory / 4)
        slots *= 2;
    c->prio.limit = o->state ? slots / 2 : 0;
    if (o->state && !c->redis)
        return crawl_state_best_order(o->state);
    return CRAWL_OK;
}

/* Step 6, the fetcher (libcurl): CRAWL_OK, or its code with err set. */
static enum crawl_code fetcher_setup(struct crawl *c, char *err, size_t errlen)
{
    const struct crawl_opts *o = &c->opts;
    struct crawl_fetcher_opts xo = {.concurrency = o->concurrency,
                                    .per_host = o->per_host,
                                    .connect_timeout = o->connect_timeout,
                                    .timeout = o->timeout,
                                    .low_speed_bytes = o->low_speed_bytes,
                                    .low_speed_time = o->low_speed_time,
                                    .max_body = o->max_body,
                                    .user_agent = o->user_agent,
                                    .ca_file = o->ca_file,
                                    .mem = c->mem};
    enum crawl_code rc = crawl_fetcher_new(&xo, &c->fetcher);
    if (rc != CRAWL_OK)
        set_err(err, errlen, "cannot set up libcurl: %s", crawl_strerror(rc));
    return rc;
}

enum crawl_code crawl_new(const struct crawl_opts *opts, struct crawl **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    struct crawl *c = calloc(1, sizeof *c);
    if (!c)
        return CRAWL_ENOMEM;
    c->opts = *opts;
    opts_defaults(&c->opts);
    c->mem = crawl_mem_new(c->opts.max_memory);
    if (!c->mem) {
        free(c);
        return CRAWL_ENOMEM;
    }
    crawl_init_core(c);
    enum crawl_code rc = scope_setup(c, err, errlen);
    if (rc == CRAWL_OK)
        rc = frontier_setup(c);
    if (rc == CRAWL_OK && c->opts.focused)
        rc = focus_setup(c);
    if (rc == CRAWL_OK)
        rc = fetcher_setup(c, err, errlen);
    if (rc != CRAWL_OK) {
        crawl_free(c);
        return rc;
    }
    *out = c;
    return CRAWL_OK;
}

void crawl_free(struct crawl *c)
{
    if (!c)
        return;
    crawl_fetcher_free(c->fetcher);
    crawl_frontier_free(c->frontier);
    crawl_seen_free(c->seen);
    crawl_bloom_free(c->seen_bloom);
    crawl_seen_free(c->dispatched);
    free(c->prio.keys);
    free(c->prio.vals);
    if (c->has_include)
        regfree(&c->include);
    if (c->has_exclude)
        regfree(&c->exclude);
    if (c->psl_owned)
        psl_free(c->psl_owned);
    for (size_t i = 0; i < c->n_scope; i++)
        free(c->scope_names[i]);
    free(c->scope_names);
    for (size_t i = 0; i < c->n_parent_dirs; i++)
        free(c->parent_dirs[i]);
    free(c->parent_dirs);
    while (c->hosts) {
        struct hostinfo *h = c->hosts;
        c->hosts = h->next;
        crawl_robots_host_free(h->robots);
        free(h);
    }
    struct job *j;
    while ((j = queue_pop(&c->todo)) != NULL)
        job_free(j);
    while ((j = queue_pop(&c->done)) != NULL) {
        job_free_data(c, j);
        job_free(j);
    }
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    crawl_mem_free(c->mem); /* last: every response and message gave its bytes back */
    free(c);
}

/* ---- scope ---- */

/* A host that must not go to the public suffix list: an IP literal. IPv6 comes in brackets;
 * a last label of digits only is read as IPv4 by URL parsers (the WHATWG URL Standard's
 * "ends in a number" check), in any of its forms (127.0.0.1, 127.1, 0x7f.1 ends in 1). */
static int host_is_ip(const char *host, size_t len)
{
    if (len && host[0] == '[')
        return 1;
    while (len && host[len - 1] == '.')
        len--; /* "127.0.0.1." is the same address */
    size_t i = len;
    while (i && host[i - 1] != '.')
        i--;
    if (i == len)
        return 0;
    int hex = len - i > 2 && host[i] == '0' && (host[i + 1] == 'x' || host[i + 1] == 'X');
    for (size_t k = i + (hex ? 2 : 0); k < len; k++)
        if (!(hex ? isxdigit((unsigned char)host[k]) : isdigit((unsigned char)host[k])))
            return 0;
    return 1;
}

enum crawl_code crawl__scope_name(const psl_ctx_t *psl, enum crawl_scope scope, const char *url,
                                  char **out)
{
    *out = NULL;
    struct crawl_url_parts p;
    if (crawl_url_split(url, &p) != CRAWL_OK)
        return CRAWL_EURL;
    char *host = strndup(url + p.host_off, p.host_len);
    if (!host)
        return CRAWL_ENOMEM;
    if (scope == CRAWL_SCOPE_DOMAIN && psl && !host_is_ip(host, p.host_len)) {
        const char *reg = psl_registrable_domain(psl, host);
        if (reg && reg != host) {
            char *d = strdup(reg);
            free(host);
            if (!d)
                return CRAWL_ENOMEM;
            host = d;
        }
        /* else a public suffix itself, or a single label: the host is the domain */
    }
    *out = host;
    return CRAWL_OK;
}

/* The name a URL's host is scoped by: the host itself, or its registrable domain. */
static enum crawl_code scope_name(struct crawl *c, const char *url, char **out)
{
    return crawl__scope_name(c->psl, c->opts.scope, url, out);
}

/*
 * --no-parent (wget's -np): a URL of a seed's origin must lie under the directory of one of
 * that origin's seeds: its canonical form starts with "origin/dir/", the seed's up to the
 * last '/' of its path (the query never counts). So a seed /docs/ or /docs/index.html
 * keeps /docs/ and below; /docs (a file, as wget reads it) keeps the whole host. URLs of
 * other origins pass (scope decides them, as wget's -np applies to the start host only).
 */
static int under_parent(const struct crawl *c, const char *url)
{
    struct crawl_url_parts p;
    if (crawl_url_split(url, &p) != CRAWL_OK)
        return 0;
    int same_origin = 0;
    for (size_t i = 0; i < c->n_parent_dirs; i++) {
        const char *dir = c->parent_dirs[i];
        if (strncmp(dir, url, p.origin_len) != 0 || dir[p.origin_len] != '/')
            continue;
        same_origin = 1;
        if (strncmp(url, dir, strlen(dir)) == 0)
            return 1;
    }
    return !same_origin;
}

/* The directory of a canonical seed URL for --no-parent: malloc'd "origin/path-to-last-/". */
static char *parent_dir(const char *canon)
{
    struct crawl_url_parts p;
    if (crawl_url_split(canon, &p) != CRAWL_OK)
        return NULL;
    size_t end = p.path_off + strcspn(canon + p.path_off, "?#");
    while (end > p.path_off && canon[end - 1] != '/')
        end--;
    if (end > p.path_off)
        return strndup(canon, end);
    char *root = malloc(p.path_off + 2); /* no path (not canonical): the root */
    if (root)
        snprintf(root, p.path_off + 2, "%.*s/", (int)p.path_off, canon);
    return root;
}

/* Is url in the crawl's scope? CRAWL_OK with *inside 1 or 0 (a URL without a host is
 * outside), or CRAWL_ENOMEM. */
static enum crawl_code in_scope(struct crawl *c, const char *url, int *inside)
{
    *inside = 0;
    if (c->opts.no_parent && !under_parent(c, url))
        return CRAWL_OK;
    if (c->has_include && regexec(&c->include, url, 0, NULL, 0) != 0)
        return CRAWL_OK;
    if (c->has_exclude && regexec(&c->exclude, url, 0, NULL, 0) == 0)
        return CRAWL_OK;
    if (c->opts.scope == CRAWL_SCOPE_ANY) {
        *inside = 1;
        return CRAWL_OK;
    }
    char *name;
    enum crawl_code rc = scope_name(c, url, &name);
    if (rc != CRAWL_OK)
        return rc == CRAWL_ENOMEM ? CRAWL_ENOMEM : CRAWL_OK;
    for (size_t i = 0; i < c->n_scope && !*inside; i++)
        *inside = strcmp(name, c->scope_names[i]) == 0;
    free(name);
    return CRAWL_OK;
}

/* ---- the state on disk ---- */

static void update_stats(struct crawl *c, double now);

static enum crawl_url_state url_state_of(enum crawl_decision d)
{
    switch (d) {
    case CRAWL_DECISION_NEW:
        return CRAWL_URL_DONE;
    case CRAWL_DECISION_NEAR_DUPLICATE:
    case CRAWL_DECISION_EXACT_DUPLICATE:
        return CRAWL_URL_DUPLICATE;
    case CRAWL_DECISION_ERROR:
        return CRAWL_URL_FAILED;
    default:
        return CRAWL_URL_SKIPPED;
    }
}

/* url (row id) has its decision: written into the open transaction. */
static void shared_done(struct crawl *c, const char *url);

static void state_done(struct crawl *c, const char *url, int64_t id, enum crawl_decision d)
{
    if (!c->state)
        return;
    c->uncommitted++;
    if (c->redis) {
        shared_done(c, url);
        return;
    }
    if (crawl_state_url_set(c->state, id, url_state_of(d), (int)d) != CRAWL_OK && !c->fatal)
        c->fatal = CRAWL_EIO;
}

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The counters kept in the state's meta, by name. */
static const struct {
    const char *name;
    size_t off;
} STATS_KEPT[] = {
#define K(f)                                                                                       \
    {                                                                                              \
        "stats." #f, offsetof(struct crawl_stats, f)                                               \
    }
    K(fetched),
    K(pages),
    K(new_pages),
    K(near_duplicates),
    K(exact_duplicates),
    K(filtered),
    K(robots_disallowed),
    K(redirects),
    K(errors),
    K(robots_fetched),
    K(links_enqueued),
    K(links_saved),
    K(links_out_of_scope),
    K(bytes),
    K(requisites),
    K(requisites_enqueued),
#undef K
};
#define STATS_KEPT_N (sizeof STATS_KEPT / sizeof STATS_KEPT[0])

/* What every commit records beside its pages (--state and --redis alike): the counters
 * kept, into vals and the state's meta (fetched without the transfers still in the
 * pipeline: their URLs are not done yet), the elapsed time, the completion marks; then the
 * caller's before_commit. */
static enum crawl_code commit_meta(struct crawl *c, uint64_t vals[STATS_KEPT_N])
{
    enum crawl_code rc = CRAWL_OK;
    for (size_t i = 0; rc == CRAWL_OK && i < STATS_KEPT_N; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&c->stats + STATS_KEPT[i].off, sizeof v);
        if (STATS_KEPT[i].off == offsetof(struct crawl_stats, fetched))
            v -= c->in_pipeline < v ? c->in_pipeline : v;
        vals[i] = v;
        rc = crawl_state_set_meta_int(c->state, STATS_KEPT[i].name, (int64_t)v);
    }
    if (rc == CRAWL_OK)
        rc = crawl_state_set_meta_int(c->state, "stats.elapsed_ms",
                                      (int64_t)(c->stats.elapsed * 1000));
    if (rc == CRAWL_OK && c->complete)
        rc = crawl_state_set_meta_int(c->state, "complete", c->complete);
    if (rc == CRAWL_OK && c->complete == 2)
        rc = crawl_state_set_meta_int(c->state, "complete.max_pages", c->opts.max_pages);
    if (rc == CRAWL_OK && c->opts.before_commit && c->opts.before_commit(c->opts.userdata) != 0)
        rc = CRAWL_EIO;
    return rc;
}

/* Commits the open transaction when CRAWL_STATE_COMMIT_INTERVAL has passed or
 * CRAWL_STATE_COMMIT_PAGES pages wait (or force): the hosts whose politeness changed and
 * the counters first, then the caller's before_commit (the WARC and the log written out,
 * their offsets in meta), then COMMIT. */
static void shared_commit(struct crawl *c, double now, int force);

static void maybe_commit(struct crawl *c, double now, int force)
{
    if (!c->state || c->fatal)
        return;
    if (c->redis) {
        shared_commit(c, now, force);
        return;
    }
    if (!force && (crawl_state_pending(c->state) == 0 ||
                   (now - c->last_commit < CRAWL_STATE_COMMIT_INTERVAL &&
                    c->uncommitted < CRAWL_STATE_COMMIT_PAGES)))
        return;
    enum crawl_code rc = CRAWL_OK;
    double wall = wall_clock();
    for (struct hostinfo *hi = c->hosts; hi && rc == CRAWL_OK; hi = hi->next) {
        if (!hi->dirty || !hi->host)
            continue;
        double na = crawl_host_next_allowed(hi->host);
        rc = crawl_state_host_save(c->state, hi->sid, crawl_host_delay(hi->host),
                                   isfinite(na) ? wall + (na - now) : 0);
        hi->dirty = 0;
    }
    /* HOW IT WORKS (leases). The transfers in flight now, started and not recorded, are
     * written leased, each once: a transfer that starts and is recorded within one group
     * is never written leased, the group making it done at once. What a commit makes
     * durable is then exactly what writing a lease at every start would make durable (a
     * URL leased and recorded before the commit has its final state either way), with a
     * write per transfer that outlives a commit (about concurrency + queue a commit)
     * instead of one per transfer. The time is when this group ends (wall clock, us): a
     * transfer whose request reached a server before it was leased or recorded in it
     * (tests/tools/crawl_kill.py). */
    for (struct job_link *l = c->inflight.next; rc == CRAWL_OK && l != &c->inflight; l = l->next) {
        struct job *j = (struct job *)(void *)((char *)l - offsetof(struct job, link));
        if (!j->leased)
            rc = crawl_state_url_lease(c->state, j->item.id);
        j->leased = 1;
    }
    if (rc == CRAWL_OK)
        rc = crawl_state_set_meta_int(c->state, "commit.wall_us", (int64_t)(wall * 1e6));
    update_stats(c, now);
    uint64_t vals[STATS_KEPT_N];
    if (rc == CRAWL_OK)
        rc = commit_meta(c, vals);
    if (rc == CRAWL_OK)
        rc = crawl_state_commit(c->state);
    if (rc != CRAWL_OK && !c->fatal)
        c->fatal = rc;
    c->last_commit = now;
    c->uncommitted = 0;
}

/* HOW IT WORKS (windows). With a state, a host's queued URLs are held in memory up to a
 * window and the rest stays in the state's URL table (every queued URL has its row there).
 * Breadth-first: the window is the next URLs in queue (row id) order; past it the host is
 * spilled, new URLs go to the state only, and a pop that leaves less than half a window
 * loads the next rows after the highest id held (cursor). Best-first (--topic): the window
 * is the best URLs, by (priority descending, row id ascending), the state's order
 * (crawl_state_queued_best). The rows only in the state are exactly those ranked below a
 * bound (below_prio, below_id), those in memory above it, so the best URL held is the
 * best queued. A URL found ranked below the bound goes to the state only; above it, into
 * memory, and when memory holds twice the window its worst are dropped (they stay queued
 * in the state) and the bound rises to the best priority dropped (trim_window). When the
 * last URL held is popped, the best window of rows below the bound is loaded and the bound
 * falls to the last of them. Memory therefore holds at most two windows a host, whatever
 * the frontier, and the order is the in-memory crawl's (ties by row id, not push order). */
static size_t state_window(const struct crawl *c)
{
    return c->window;
}

/* Whether a URL of priority and row id ranks below hi's bound (focused, with a state). */
static int ranks_below(const struct hostinfo *hi, float priority, int64_t id)
{
    return priority < hi->below_prio || (priority == hi->below_prio && id > hi->below_id);
}

/* No queued URL of hi's host is only in the state any more. */
static void unspill(struct crawl *c, struct hostinfo *hi)
{
    hi->spilled = 0;
    c->disk_queued = hi->on_disk > c->disk_queued ? 0 : c->disk_queued - hi->on_disk;
    hi->on_disk = 0;
}

/* Loads the next queued URLs of a spilled host from the state into the frontier, up to
 * the window. */
struct refill_ctx {
    struct crawl *c;
    struct crawl_host *h;
    struct hostinfo *hi;
    double now;
    struct crawl_ref *last; /* the last row's referrer: rows of one page follow each other */
};

static int refill_one(void *userdata, int64_t id, const char *url, unsigned depth, unsigned hops,
                      float priority, int64_t ref, const char *referrer)
{
    struct refill_ctx *x = userdata;
    if (referrer && (!x->last || x->last->id != ref)) {
        crawl_ref_put(x->last);
        if (!(x->last = crawl_ref_new(referrer)))
            return -1;
        x->last->id = ref;
    }
    if (crawl_frontier_push(x->c->frontier, x->h, url, depth, hops, priority,
                            referrer ? x->last : NULL, id, x->now) != CRAWL_OK)
        return -1;
    if (x->c->opts.focused) { /* the best priority it was queued with */
        float *best = prio_slot(&x->c->prio, crawl_hash64(url, strlen(url)));
        if (!best)
            return -1;
        *best = priority;
    }
    x->hi->cursor = id;
    x->hi->below_prio = priority; /* focused: the rows come best first */
    x->hi->below_id = id;
    return 0;
}

static enum crawl_code refill(struct crawl *c, struct crawl_host *h, struct hostinfo *hi,
                              double now)
{
    size_t have = crawl_host_queued(h), window = state_window(c);
    if (!hi->spilled || have >= (c->opts.focused ? 1 : window / 2))
        return CRAWL_OK;
    size_t want = window - have, n = 0;
    struct refill_ctx x = {c, h, hi, now, NULL};
    enum crawl_code rc =
        c->opts.focused
            ? crawl_state_queued_best(c->state, hi->sid, hi->below_prio, hi->below_id, want,
                                      refill_one, &x, &n)
            : crawl_state_queued(c->state, hi->sid, hi->cursor, want, refill_one, &x, &n);
    crawl_ref_put(x.last);
    c->disk_queued = n > c->disk_queued ? 0 : c->disk_queued - n;
    hi->on_disk = n > hi->on_disk ? 0 : hi->on_disk - n;
    if (rc == CRAWL_OK && n < want)
        unspill(c, hi);
    return rc;
}

/* A focused crawl's window past twice its size: its worst URLs go back to the state only
 * (see "windows"). */
static enum crawl_code trim_window(struct crawl *c, struct crawl_host *h, struct hostinfo *hi,
                                   double now)
{
    float cut;
    size_t dropped = crawl_frontier_trim(c->frontier, h, state_window(c), &cut);
    if (dropped == 0)
        return CRAWL_OK;
    hi->spilled = 1;
    hi->below_prio = cut; /* every priority up to cut, whatever the row id */
    hi->below_id = 0;
    hi->on_disk += dropped;
    c->disk_queued += dropped;
    return crawl_host_queued(h) == 0 ? refill(c, h, hi, now) : CRAWL_OK;
}

/* ---- records ---- */

/* The summary's counter of a decision: each page, and each URL that got no page (robots,
 * filters, redirects, errors), is counted once, by the one record that reports it. */
static void count_decision(struct crawl_stats *s, enum crawl_decision d)
{
    switch (d) {
    case CRAWL_DECISION_NEW:
        s->new_pages++;
        break;
    case CRAWL_DECISION_NEAR_DUPLICATE:
        s->near_duplicates++;
        break;
    case CRAWL_DECISION_EXACT_DUPLICATE:
        s->exact_duplicates++;
        break;
    case CRAWL_DECISION_ROBOTS_DISALLOWED:
        s->robots_disallowed++;
        break;
    case CRAWL_DECISION_FILTERED:
        s->filtered++;
        break;
    case CRAWL_DECISION_REDIRECT:
        s->redirects++;
        break;
    case CRAWL_DECISION_ERROR:
        s->errors++;
        break;
    }
}

static void emit(struct crawl *c, const char *url, int64_t id, long status, unsigned depth,
                 enum crawl_decision d, const char *error, const char *location,
                 const struct crawl_ref *referrer)
{
    count_decision(&c->stats, d);
    if (c->opts.record) {
        struct crawl_record rec = {.url = url,
                                   .status = status,
                                   .depth = depth,
                                   .decision = d,
                                   .distance = -1,
                                   .links = -1,
                                   .error = error,
                                   .size = -1,
                                   .links_found = -1,
                                   .relevance = NAN,
                                   .location = location,
                                   .referrer = referrer ? referrer->url : NULL};
        c->opts.record(c->opts.userdata, &rec);
    }
    state_done(c, url, id, d);
}

/* ---- the seen set with a state ---- */

/*
 * HOW IT WORKS. Without a state the seen set is one table in memory (seen.c) that grows
 * with the crawl. With a state every URL seen has its row in the state's urls table
 * (one a hash; looked up by hash only from the first spill on, state.c "row ids"), so
 * memory only has to save lookups: the table c->seen is capped at
 * half of opts.seen_memory and holds the latest hashes; when it is full, its hashes go
 * into a Bloom filter of the other half (made then) and it starts empty. A hash is seen
 * when the table has it, or when the filter may have it and the state has its row (the
 * filter answers "no" for nearly every new URL, so new URLs cost no lookup; a false
 * positive costs one, never a lost URL). A hash found in the state goes back into the
 * table, so the links every page repeats (navigation) are found in memory again. Memory:
 * at most seen_memory, whatever the number of URLs; past the filter's design point
 * (a 16 MiB filter: 0.3 % false positives at 10 million URLs, 5 % at 20) more lookups
 * go to the state, which stays exact.
 */
static enum crawl_code seen_spill(struct crawl *c)
{
    if (!c->seen_bloom) {
        enum crawl_code rc = crawl_bloom_new(c->opts.seen_memory / 2, &c->seen_bloom);
        if (rc != CRAWL_OK)
            return rc;
    }
    crawl_seen_spill(c->seen, c->seen_bloom);
    return CRAWL_OK;
}

/* hash into the table, spilling it when full (the hash is new to the table). */
static enum crawl_code seen_keep(struct crawl *c, uint64_t hash)
{
    int added;
    enum crawl_code rc = crawl_seen_add(c->seen, hash, &added);
    if (rc == CRAWL_ETOOLARGE && c->state) {
        rc = seen_spill(c);
        if (rc == CRAWL_OK)
            rc = crawl_seen_add(c->seen, hash, &added);
    }
    return rc;
}

/* *seen: 1 when the URL of hash was seen before. */
static enum crawl_code seen_has(struct crawl *c, uint64_t hash, int *seen)
{
    *seen = crawl_seen_contains(c->seen, hash);
    if (*seen || !c->seen_bloom || !crawl_bloom_maybe(c->seen_bloom, hash))
        return CRAWL_OK;
    return crawl_state_url_has(c->state, hash, seen);
}

/* Marks the URL of hash seen; *added: 1 when it was not before. */
static enum crawl_code seen_add(struct crawl *c, uint64_t hash, int *added)
{
    *added = 0;
    if (!c->state) {
        enum crawl_code rc = crawl_seen_add(c->seen, hash, added);
        c->n_seen += (uint64_t)*added;
        return rc;
    }
    if (!c->seen_bloom) { /* nothing spilled yet: the table is the whole seen set */
        enum crawl_code rc = crawl_seen_add(c->seen, hash, added);
        if (rc == CRAWL_ETOOLARGE) { /* new (the table was full without it) */
            rc = seen_spill(c);
            if (rc == CRAWL_OK)
                rc = crawl_seen_add(c->seen, hash, added);
        }
        c->n_seen += (uint64_t)*added;
        return rc;
    }
    if (crawl_seen_contains(c->seen, hash))
        return CRAWL_OK;
    int seen = 0;
    enum crawl_code rc = CRAWL_OK;
    if (c->seen_bloom && crawl_bloom_maybe(c->seen_bloom, hash))
        rc = crawl_state_url_has(c->state, hash, &seen);
    if (rc == CRAWL_OK) /* new, or found in the state: the table has it at hand */
        rc = seen_keep(c, hash);
    if (rc == CRAWL_OK && !seen) {
        c->n_seen++;
        *added = 1;
    }
    return rc;
}

/* ---- enqueueing ---- */

/* Gives host h its robots state on first sight. */
static enum crawl_code host_info(struct crawl *c, struct crawl_host *h)
{
    if (crawl_host_userdata(h))
        return CRAWL_OK;
    struct hostinfo *hi = calloc(1, sizeof *hi);
    if (!hi)
        return CRAWL_ENOMEM;
    if (!c->opts.ignore_robots) {
        enum crawl_code rc =
            crawl_robots_host_new(c->opts.user_agent, &c->robots_policy, &hi->robots);
        if (rc != CRAWL_OK) {
            free(hi);
            return rc;
        }
    }
    if (c->state && !c->redis &&
        crawl_state_host(c->state, crawl_host_origin(h), &hi->sid) != CRAWL_OK) {
        crawl_robots_host_free(hi->robots);
        free(hi);
        return CRAWL_EIO;
    }
    hi->host = h;
    hi->next = c->hosts;
    c->hosts = hi;
    crawl_host_set_userdata(h, hi);
    return CRAWL_OK;
}

enum enqueue_result { ENQ_QUEUED, ENQ_SEEN, ENQ_OUT_OF_SCOPE, ENQ_DISALLOWED, ENQ_FULL };

static void emit(struct crawl *c, const char *url, int64_t id, long status, unsigned depth,
                 enum crawl_decision d, const char *error, const char *location,
                 const struct crawl_ref *referrer);

/* robots-disallowed now, if the host's robots.txt is known (no request is spent on it). */
static int disallowed_now(struct crawl *c, struct hostinfo *hi, const char *url, int64_t id,
                          unsigned depth, const struct crawl_ref *referrer, double now)
{
    if (hi->given_up) {
        emit(c, url, id, 0, depth, hi->given_up_as, hi->given_up_why, NULL, referrer);
        return 1;
    }
    if (!hi->robots)
        return 0;
    size_t plen;
    const char *path = crawl_robots_url_path(url, &plen);
    struct crawl_robots_decision d;
    enum crawl_robots_verdict rv = crawl_robots_host_check(hi->robots, path, plen, now, &d);
    if (rv != CRAWL_ROBOTS_DISALLOW)
        return 0;
    char why[200];
    if (d.rule)
        snprintf(why, sizeof why, "robots.txt line %u: %.150s", d.line, d.rule);
    else
        snprintf(why, sizeof why, "robots.txt");
    emit(c, url, id, 0, depth, CRAWL_DECISION_ROBOTS_DISALLOWED, why, NULL, referrer);
    return 1;
}

static enum enqueue_result enqueue_shared(struct crawl *c, const char *url, unsigned depth,
                                          unsigned hops, const struct crawl_ref *referrer);

/* A focused crawl found the URL of hash again: ENQ_QUEUED when it is to be queued again at
 * priority (a clearly higher relevance than best, and not fetched yet; with a state its
 * row is raised and *id is its row id), else ENQ_SEEN (ENQ_FULL on a state failure). best:
 * the map's priority for it; -INFINITY when the map, a cache with a state, lost it: the
 * state then decides, raising the row only when its priority is clearly lower. */
static enum enqueue_result found_again(struct crawl *c, uint64_t hash, float priority, float best,
                                       int64_t *id)
{
    if (crawl_seen_contains(c->dispatched, hash))
        return ENQ_SEEN;
    if (best != -INFINITY && priority <= best + 1e-4f)
        return ENQ_SEEN;
    if (!c->state)
        return ENQ_QUEUED;
    if (crawl_state_url_priority(c->state, hash, priority,
                                 best == -INFINITY ? priority - 1e-4f : INFINITY, id) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        return ENQ_FULL;
    }
    return *id ? ENQ_QUEUED : ENQ_SEEN;
}

static enum enqueue_result enqueue(struct crawl *c, const char *url, unsigned depth, unsigned hops,
                                   float priority, struct crawl_ref *referrer, double now)
{
    if (hops & HOPS_REQUISITE) {
        if (c->has_exclude && regexec(&c->exclude, url, 0, NULL, 0) == 0)
            return ENQ_OUT_OF_SCOPE;
    } else {
        int inside;
        if (in_scope(c, url, &inside) != CRAWL_OK)
            return ENQ_FULL; /* out of memory, as below */
        if (!inside)
            return ENQ_OUT_OF_SCOPE;
    }
    if (c->redis)
        return enqueue_shared(c, url, depth, hops, referrer);
    int added = 0;
    uint64_t hash = crawl_hash64(url, strlen(url));
    enum crawl_code src = seen_add(c, hash, &added);
    if (src != CRAWL_OK) {
        if (src == CRAWL_EIO)
            c->fatal = CRAWL_EIO;
        return ENQ_FULL;
    }
    float *best = NULL;
    int64_t id = 0;
    if (c->opts.focused) {
        best = prio_slot(&c->prio, hash);
        if (!best)
            return ENQ_FULL;
        if (!added) {
            enum enqueue_result r = found_again(c, hash, priority, *best, &id);
            if (r != ENQ_QUEUED)
                return r;
        }
        *best = priority;
    } else if (!added) {
        return ENQ_SEEN;
    }
    struct crawl_url_parts p;
    struct crawl_host *h = NULL;
    if (crawl_url_split(url, &p) != CRAWL_OK ||
        crawl_frontier_host(c->frontier, url, p.origin_len, &h) != CRAWL_OK)
        return ENQ_FULL;
    if (host_info(c, h) != CRAWL_OK)
        return ENQ_FULL;
    struct hostinfo *hi = crawl_host_userdata(h);
    if (c->state && added &&
        crawl_state_url_add(c->state, hash, hi->sid, url, depth, hops, priority,
                            referrer ? referrer->id : 0, &id) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        return ENQ_FULL;
    }
    if (disallowed_now(c, hi, url, id, depth, referrer, now)) {
        if (best)
            *best = INFINITY; /* logged once: never queued again */
        return ENQ_DISALLOWED;
    }
    if (c->state && (c->opts.focused ? hi->spilled && ranks_below(hi, priority, id)
                                     : hi->spilled || crawl_host_queued(h) >= state_window(c))) {
        hi->spilled = 1; /* in the state only, until the window drains (refill) */
        hi->on_disk++;
        c->disk_queued++;
        return ENQ_QUEUED;
    }
    if (crawl_frontier_push(c->frontier, h, url, depth, hops, priority, referrer, id, now) !=
        CRAWL_OK)
        return ENQ_FULL;
    if (id > hi->cursor)
        hi->cursor = id;
    if (c->state && c->opts.focused && crawl_host_queued(h) >= 2 * state_window(c) &&
        trim_window(c, h, hi, now) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        return ENQ_FULL;
    }
    return ENQ_QUEUED;
}

enum crawl_code crawl_add_seed(struct crawl *c, const char *url)
{
    char *canon = NULL;
    enum crawl_code rc = crawl_url_canonicalise(url, NULL, &canon);
    if (rc != CRAWL_OK)
        return rc;
    if (c->opts.scope != CRAWL_SCOPE_ANY) {
        char *name;
        rc = scope_name(c, canon, &name);
        if (rc != CRAWL_OK) { /* (a canonical URL has a host: CRAWL_ENOMEM) */
            free(canon);
            return rc;
        }
        char **v = realloc(c->scope_names, (c->n_scope + 1) * sizeof *v);
        if (!v) {
            free(name);
            free(canon);
            return CRAWL_ENOMEM;
        }
        c->scope_names = v;
        c->scope_names[c->n_scope++] = name;
    }
    if (c->opts.no_parent) {
        char *dir = parent_dir(canon);
        char **v = dir ? realloc(c->parent_dirs, (c->n_parent_dirs + 1) * sizeof *v) : NULL;
        if (!v) {
            free(dir);
            free(canon);
            return CRAWL_ENOMEM;
        }
        c->parent_dirs = v;
        c->parent_dirs[c->n_parent_dirs++] = dir;
    }
    /* seeds skip the scope and regex checks on purpose: the user named them */
    if (c->redis) { /* every worker adds them: the shared seen set keeps one */
        enum enqueue_result e = enqueue_shared(c, canon, 0, 0, NULL);
        free(canon);
        return e != ENQ_FULL ? CRAWL_OK : c->fatal ? (enum crawl_code)c->fatal : CRAWL_ENOMEM;
    }
    int added = 0;
    rc = seen_add(c, crawl_hash64(canon, strlen(canon)), &added);
    struct crawl_url_parts p;
    struct crawl_host *h = NULL;
    if (rc == CRAWL_OK && added)
        rc = crawl_url_split(canon, &p);
    if (rc == CRAWL_OK && added)
        rc = crawl_frontier_host(c->frontier, canon, p.origin_len, &h);
    if (rc == CRAWL_OK && added)
        rc = host_info(c, h);
    int64_t id = 0;
    if (rc == CRAWL_OK && added && c->state) {
        struct hostinfo *hi = crawl_host_userdata(h);
        rc = crawl_state_url_add(c->state, crawl_hash64(canon, strlen(canon)), hi->sid, canon, 0, 0,
                                 c->opts.focused ? 1e9f : 0.0f, 0, &id);
        if (id > hi->cursor)
            hi->cursor = id;
    }
    if (rc == CRAWL_OK && added)
        rc = crawl_frontier_push(c->frontier, h, canon, 0, 0, c->opts.focused ? 1e9f : 0.0f, NULL,
                                 id, crawl_clock());
    free(canon);
    return rc;
}

/* ---- handling finished transfers ---- */

/*
 * HOW IT WORKS. A robots.txt answer is in. 2xx, 4xx: the host's turn comes again after
 * its delay, and its held URLs are decided by the new reading. A failure (RFC 9309
 * 2.3.1.4: 5xx, 429, an answer cut short, or no answer at all) disallows the whole host
 * for the time being: its URLs stay queued and the host is paused until the policy's
 * retry time (backoff doubling), but never past the end of the outage limit, so that the
 * last retry happens at the limit. The next pop of the host then finds the retry due and
 * fetches robots.txt again (dispatch). A host still failing at the limit, or giving no
 * HTTP answer more than 1 + unreachable_retries times in a row, is given up: its URLs,
 * queued and later, are logged with the reason, none is fetched. So a held host keeps
 * the crawl alive only until its next retry, and at most for the outage limit.
 * A host giving no answer is also given up once unreachable_time has passed since the
 * first attempt of the run started, or when its next retry would leave less than
 * UNREACHABLE_MIN_ATTEMPT of that time: every robots.txt transfer that could be one of
 * those attempts gets only the time left (start_robots), so a host that drops packets
 * costs about unreachable_time, not 1 + retries connect timeouts and their backoff.
 */
#define UNREACHABLE_MIN_ATTEMPT 0.1 /* s: a retry with less time left than this is not made */

static void robots_done(struct crawl *c, struct job *j, double now)
{
    struct crawl_response *r = j->resp;
    struct hostinfo *hi = crawl_host_userdata(j->host);
    struct crawl_robots_outcome o;
    int no_answer = crawl__robots_outcome_from_response(r, &o);
    if (r->result == CRAWL_FETCH_DONE || r->result == CRAWL_FETCH_TOOLARGE)
        snprintf(hi->robots_why, sizeof hi->robots_why, "HTTP %ld", r->status);
    else
        snprintf(hi->robots_why, sizeof hi->robots_why, "%.150s",
                 r->error[0] ? r->error : "no answer");
    /* the outcome borrows the body: the policy copies what it keeps */
    if (crawl_robots_host_update(hi->robots, &o, now) != CRAWL_OK)
        c->fatal = CRAWL_ENOMEM;
    /* a reading (2xx, 4xx) is kept in the state for the next run; failures are retried */
    int reading = o.status >= 200 && o.status < 500 && o.status != 429 &&
                  !(o.status >= 300 && o.status < 400) && !o.truncated;
    if (c->state && !c->redis && reading &&
        crawl_state_host_robots(c->state, hi->sid, o.status, o.body, o.len, wall_clock()) !=
            CRAWL_OK)
        c->fatal = CRAWL_EIO;
    hi->dirty = 1;
    double cd = crawl_robots_host_crawl_delay(hi->robots);
    if (cd > 0)
        crawl_frontier_set_delay(c->frontier, j->host, cd, now);
    if (c->redis && reading && /* for every worker */
        crawl_redis_host_robots(c->redis, crawl_host_origin(j->host), o.status, o.body, o.len,
                                wall_clock(), crawl_host_delay(j->host)) != CRAWL_OK)
        c->fatal = CRAWL_EIO;
    hi->robots_in_flight = 0;
    c->stats.robots_fetched++;
    unsigned failures = crawl_robots_host_failures(hi->robots);
    double not_before = now;
    if (failures == 0) {
        hi->no_answer = 0;
    } else {
        double started = r->start > 0 && r->start <= now ? r->start : now;
        if (failures == 1)
            hi->outage_since = started;
        hi->no_answer = no_answer ? hi->no_answer + 1 : 0;
        if (hi->no_answer == 1)
            hi->no_answer_since = started;
        double outage = now - hi->outage_since;
        double limit_at = hi->outage_since + c->opts.robots_outage;
        double unreach_at = hi->no_answer_since + c->opts.unreachable_time;
        double retry_at = crawl_robots_host_next_fetch(hi->robots);
        int out_of_time =
            no_answer && (retry_at < now ? now : retry_at) + UNREACHABLE_MIN_ATTEMPT > unreach_at;
        if (no_answer && (hi->no_answer > (unsigned)c->opts.unreachable_retries || out_of_time)) {
            hi->given_up = 1;
            hi->given_up_as = CRAWL_DECISION_ERROR;
            snprintf(
                hi->given_up_why, sizeof hi->given_up_why,
                "host unreachable: robots.txt: %.150s (%u attempt%s in %.0f s%s)", hi->robots_why,
                hi->no_answer, hi->no_answer == 1 ? "" : "s", now - hi->no_answer_since,
                hi->no_answer > (unsigned)c->opts.unreachable_retries ? ""
                                                                      : "; --unreachable-time");
        } else if (now >= limit_at) {
            hi->given_up = 1;
            hi->given_up_as = CRAWL_DECISION_ROBOTS_DISALLOWED;
            snprintf(hi->given_up_why, sizeof hi->given_up_why,
                     "robots.txt unavailable (%.150s) for %.0f s", hi->robots_why, outage);
        } else {
            not_before = retry_at;
            if (not_before > limit_at)
                not_before = limit_at;
        }
    }
    /* politeness: the host's delay runs from the end of the robots.txt transfer too */
    crawl_frontier_pause(c->frontier, j->host, not_before, now);
    crawl_frontier_hold(c->frontier, j->host, 0, now);
}

/* Returns 1 when j went to the workers (they own it now), 0 when the caller frees it. */
static int page_done(struct crawl *c, struct job *j, double now)
{
    struct crawl_response *r = j->resp;
    const char *url = j->item.url;
    unsigned depth = j->item.depth;
    struct hostinfo *hi = crawl_host_userdata(j->host);
    hi->dirty = 1;
    if (c->state && r->result == CRAWL_FETCH_ABORTED && c->stop)
        return 0; /* cut short by the stop: queued (or leased) in the state, fetched on resume */
    c->stats.fetched++;
    switch (r->result) {
    case CRAWL_FETCH_FILTERED:
    case CRAWL_FETCH_TOOLARGE:
        emit(c, url, j->item.id, r->status, depth, CRAWL_DECISION_FILTERED, r->error, NULL,
             j->item.referrer);
        return 0;
    case CRAWL_FETCH_TIMEOUT:
    case CRAWL_FETCH_FAILED:
    case CRAWL_FETCH_ABORTED:
        emit(c, url, j->item.id, r->status, depth, CRAWL_DECISION_ERROR, r->error, NULL,
             j->item.referrer);
        return 0;
    case CRAWL_FETCH_DONE:
        break;
    }
    if (r->status >= 300 && r->status < 400 && r->location) {
        char *target = NULL;
        char err[160] = "";
        if (crawl_url_canonicalise(r->location, url, &target) != CRAWL_OK) {
            snprintf(err, sizeof err, "bad redirect target: %.120s", r->location);
        } else if (HOPS_COUNT(j->item.hops) + 1 > c->opts.max_redirects) {
            snprintf(err, sizeof err, "too many redirects (%u)", c->opts.max_redirects);
        } else {
            /* the target's referrer is the redirecting URL, as Heritrix's crawl.log "via"
             * (the redirecting URL's own line names the page that linked it) */
            struct crawl_ref *via = crawl_ref_new(url);
            if (via)
                via->id = j->item.id;
            switch (!via
                        ? ENQ_FULL
                        : enqueue(c, target, depth, j->item.hops + 1, j->item.priority, via, now)) {
            case ENQ_QUEUED:
                break;
            case ENQ_SEEN:
                snprintf(err, sizeof err, "redirect target already seen");
                break;
            case ENQ_OUT_OF_SCOPE:
                snprintf(err, sizeof err, "redirect target out of scope");
                break;
            case ENQ_DISALLOWED:
                snprintf(err, sizeof err, "redirect target disallowed by robots.txt");
                break;
            case ENQ_FULL:
                snprintf(err, sizeof err, "frontier full");
                break;
            }
            crawl_ref_put(via);
        }
        emit(c, url, j->item.id, r->status, depth, CRAWL_DECISION_REDIRECT, err[0] ? err : NULL,
             target, j->item.referrer);
        free(target);
        return 0;
    }
    if (r->status < 200 || r->status >= 300) {
        char err[64];
        snprintf(err, sizeof err, "http status %ld", r->status);
        emit(c, url, j->item.id, r->status, depth, CRAWL_DECISION_ERROR, err, NULL,
             j->item.referrer);
        return 0;
    }
    /* an HTML page: to the workers */
    pthread_mutex_lock(&c->lock);
    queue_push(&c->todo, j);
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    c->in_pipeline++;
    return 1;
}

/* The referrer of what j's page links: its URL and row. */
static struct crawl_ref *page_ref(const struct job *j)
{
    struct crawl_ref *r = crawl_ref_new(j->item.url);
    if (r)
        r->id = j->item.id;
    return r;
}

/* The requisites of a kept page (or of a requisite: a stylesheet's imports), queued as
 * requisites: right after the page's level (breadth-first) or before any link (focused),
 * whatever the depth. Returns how many were queued, -1 when the verdict gave none. */
static long enqueue_requisites(struct crawl *c, struct job *j, struct crawl_ref **self, double now)
{
    struct crawl_verdict *v = &j->verdict.pub;
    int req = (j->item.hops & HOPS_REQUISITE) != 0;
    if (v->n_requisites == 0)
        return -1;
    if (!req && v->decision != CRAWL_DECISION_NEW)
        return 0;
    long n = 0;
    float prio = c->opts.focused ? 2.0f : -(float)j->item.depth - 0.5f;
    for (size_t i = 0; i < v->n_requisites; i++) {
        if (!*self && !(*self = page_ref(j))) {
            c->fatal = CRAWL_ENOMEM;
            break;
        }
        if (enqueue(c, v->requisites[i], j->item.depth, HOPS_REQUISITE, prio, *self, now) ==
            ENQ_QUEUED)
            n++;
    }
    c->stats.requisites_enqueued += (uint64_t)n;
    return n;
}
static long shared_links(struct crawl *c, const struct crawl_verdict *v, const char *url,
                         unsigned depth);

/* A verdict is back: enqueue the links, write the record. */
static void verdict_done(struct crawl *c, struct job *j, double now)
{
    struct crawl_verdict *v = &j->verdict.pub;
    const char *url = j->item.url;
    c->stats.process_seconds += j->process_seconds;
    if (j->decode_error[0]) {
        job_free_data(c, j);
        emit(c, url, j->item.id, j->resp->status, j->item.depth, CRAWL_DECISION_ERROR,
             j->decode_error, NULL, j->item.referrer);
        return;
    }
    if (!(j->item.hops & HOPS_REQUISITE))
        c->stats.pages++;
    if (j->process_rc != 0 && !c->fatal)
        c->fatal = CRAWL_EIO;
    long enqueued = 0;
    int deeper_ok = c->opts.max_depth < 0 || (long)j->item.depth + 1 <= c->opts.max_depth;
    int dup = v->decision == CRAWL_DECISION_NEAR_DUPLICATE ||
              v->decision == CRAWL_DECISION_EXACT_DUPLICATE;
    struct crawl_ref *self = NULL; /* this page: its links' referrer, made on first use */
    if (c->redis && v->expand && !dup && deeper_ok) { /* one round trip for the page's links */
        enqueued = shared_links(c, v, url, j->item.depth + 1);
        deeper_ok = 0; /* done */
    }
    for (size_t i = 0; i < v->n_links && deeper_ok; i++) {
        const char *link = v->links[i];
        if (!v->expand || dup) {
            /* what dedup saved: in-scope links nobody has queued yet */
            int seen = 1, inside = 0;
            if (dup && in_scope(c, link, &inside) == CRAWL_OK && inside &&
                seen_has(c, crawl_hash64(link, strlen(link)), &seen) != CRAWL_OK)
                c->fatal = CRAWL_EIO; /* (out of memory: the link is not counted) */
            if (dup && !seen)
                c->stats.links_saved++;
            continue;
        }
        float prio = c->opts.focused ? v->link_priority[i] : -(float)(j->item.depth + 1);
        if (!self && !(self = page_ref(j))) {
            c->fatal = CRAWL_ENOMEM;
            break;
        }
        switch (enqueue(c, link, j->item.depth + 1, 0, prio, self, now)) {
        case ENQ_QUEUED:
            enqueued++;
            break;
        case ENQ_OUT_OF_SCOPE:
            c->stats.links_out_of_scope++;
            break;
        default:
            break;
        }
    }
    long requisites = enqueue_requisites(c, j, &self, now);
    crawl_ref_put(self);
    c->stats.links_enqueued += (uint64_t)enqueued;
    if (j->item.hops & HOPS_REQUISITE)
        c->stats.requisites++; /* not a page: counted apart */
    else
        count_decision(&c->stats, v->decision);
    if (c->opts.record) {
        struct crawl_record rec = {.url = url,
                                   .status = j->resp->status,
                                   .depth = j->item.depth,
                                   .decision = v->decision,
                                   .has_fingerprint = v->has_fingerprint,
                                   .fingerprint = v->fingerprint,
                                   .duplicate_of = v->duplicate_of,
                                   .distance = v->distance,
                                   .links = enqueued,
                                   .error = v->error,
                                   .relevance = v->relevance,
                                   .canonical = v->canonical,
                                   .truncated = v->truncated[0] ? v->truncated : NULL,
                                   .page_data = v->page_data,
                                   .content_type = j->resp->content_type,
                                   .size = (long long)(j->resp->len - j->resp->head_len),
                                   .links_found = (long)v->n_links,
                                   .referrer = j->item.referrer ? j->item.referrer->url : NULL,
                                   .requisite = (j->item.hops & HOPS_REQUISITE) != 0,
                                   .requisites = requisites};
        c->opts.record(c->opts.userdata, &rec);
    }
    job_free_data(c, j);
    state_done(c, url, j->item.id, v->decision);
}

/* ---- the loop ---- */

static void update_stats(struct crawl *c, double now)
{
    c->stats.elapsed = c->elapsed_before + (now - c->start);
    c->stats.queued = crawl_frontier_size(c->frontier) + c->disk_queued;
    c->stats.hosts = crawl_frontier_host_count(c->frontier);
    c->stats.seen = (size_t)c->n_seen;
    c->stats.seen_bytes =
        crawl_seen_bytes(c->seen) + (c->seen_bloom ? crawl_bloom_bytes(c->seen_bloom) : 0);
    c->stats.active = crawl_fetcher_active(c->fetcher);
    c->stats.bytes = crawl_fetcher_bytes(c->fetcher);
    c->stats.paused = crawl_fetcher_paused(c->fetcher);
    struct crawl_mem_stats ms;
    crawl_mem_get(c->mem, &ms);
    c->stats.mem_held = ms.held;
    c->stats.mem_peak = ms.peak;
    c->stats.mem_limit = ms.limit;
}

static enum crawl_code start_robots(struct crawl *c, struct crawl_host *h)
{
    struct hostinfo *hi = crawl_host_userdata(h);
    struct job *rj = calloc(1, sizeof *rj);
    if (!rj)
        return CRAWL_ENOMEM;
    const char *origin = crawl_host_origin(h);
    size_t n = strlen(origin);
    rj->item.url = malloc(n + sizeof "/robots.txt");
    if (!rj->item.url) {
        free(rj);
        return CRAWL_ENOMEM;
    }
    memcpy(rj->item.url, origin, n);
    memcpy(rj->item.url + n, "/robots.txt", sizeof "/robots.txt");
    rj->host = h;
    rj->robots = 1;
    /* this may be an attempt at a host that gives no answer: it gets the time left of
     * unreachable_time, counted from the first such attempt in a row (robots_done) */
    double now = crawl_clock();
    double since = hi->no_answer ? hi->no_answer_since : now;
    double left = since + c->opts.unreachable_time - now;
    if (left < UNREACHABLE_MIN_ATTEMPT)
        left = UNREACHABLE_MIN_ATTEMPT;
    enum crawl_code rc =
        crawl_fetcher_add_within(c->fetcher, rj->item.url, CRAWL_FETCH_ANY, left, rj);
    if (rc != CRAWL_OK) {
        job_free(rj);
        return rc;
    }
    hi->robots_in_flight = 1;
    return CRAWL_OK;
}

/* Room in the memory budget for another transfer: more than its first buffer, so that
 * its head fits too (a header callback cannot wait), while transfers paused for room
 * get it first. */
static int mem_room(struct crawl *c)
{
    struct crawl_mem_stats ms;
    crawl_mem_get(c->mem, &ms);
    size_t keep = CRAWL_MEM_DECODE_SHARE(ms.limit);
    return crawl_fetcher_paused(c->fetcher) == 0 && ms.held + keep <= ms.limit &&
           ms.limit - ms.held - keep >= CRAWL_MEM_START_ROOM;
}

static double shared_acquire(struct crawl *c, double now);

/* What dispatch does after a step on one popped URL. */
enum dispatch_step {
    DISPATCH_FETCH, /* the URL may be fetched */
    DISPATCH_NEXT,  /* the URL was dealt with: pop the next */
    DISPATCH_STOP   /* nothing more starts now (c->fatal says when it is an error) */
};

/* Room for another fetch: concurrency, the queue, the page budget, the memory budget. */
static int may_start(struct crawl *c)
{
    return !c->stop && !c->fatal && crawl_fetcher_active(c->fetcher) < c->opts.concurrency &&
           c->in_pipeline + (c->opts.focused ? crawl_fetcher_active(c->fetcher) : 0) <
               c->opts.queue &&
           (c->opts.max_pages <= 0 || c->n_dispatched < (uint64_t)c->opts.max_pages) && mem_room(c);
}

/* Step 1, the URL's host: its spilled URLs read back from the state, a URL of a host given
 * up on logged as the host was, a URL a focused crawl fetched already dropped. */
static enum dispatch_step pop_checks(struct crawl *c, struct crawl_item *it, struct crawl_host *h,
                                     struct hostinfo *hi, double now)
{
    if (c->state && hi->spilled && refill(c, h, hi, now) != CRAWL_OK) {
        crawl_item_release(it);
        crawl_frontier_done(c->frontier, h, now);
        c->fatal = CRAWL_EIO;
        return DISPATCH_STOP;
    }
    if (hi->given_up) {
        emit(c, it->url, it->id, 0, it->depth, hi->given_up_as, hi->given_up_why, NULL,
             it->referrer);
        crawl_frontier_cancel(c->frontier, h, now); /* no request was made */
        crawl_item_release(it);
        return DISPATCH_NEXT;
    }
    if (c->dispatched) {
        /* a focused crawl may hold older, lower-priority entries of a fetched URL */
        uint64_t hash = crawl_hash64(it->url, strlen(it->url));
        if (crawl_seen_contains(c->dispatched, hash)) {
            crawl_frontier_cancel(c->frontier, h, now);
            crawl_item_release(it);
            return DISPATCH_NEXT;
        }
    }
    return DISPATCH_FETCH;
}

/* robots.txt to be fetched first: the URL put back, the host held, robots.txt fetched on
 * the same loop. */
static enum dispatch_step robots_first(struct crawl *c, struct crawl_item *it, struct crawl_host *h,
                                       struct hostinfo *hi, double now)
{
    enum crawl_code rc = crawl_frontier_push(c->frontier, h, it->url, it->depth, it->hops,
                                             it->priority, it->referrer, it->id, now);
    crawl_frontier_done(c->frontier, h, now);
    crawl_item_release(it);
    if (rc != CRAWL_OK) {
        c->fatal = rc;
        return DISPATCH_STOP;
    }
    if (!hi->robots_in_flight) {
        rc = start_robots(c, h);
        if (rc == CRAWL_ETOOLARGE)
            return DISPATCH_STOP; /* no room in the memory budget: the URL waits, pushed back */
        if (rc != CRAWL_OK) {
            c->fatal = rc;
            return DISPATCH_STOP;
        }
        crawl_frontier_hold(c->frontier, h, 1, now);
    }
    return DISPATCH_NEXT;
}

/* Step 2, the host's robots.txt: fetched first, a failing one's retry awaited, a
 * disallowed URL logged. */
static enum dispatch_step robots_checks(struct crawl *c, struct crawl_item *it,
                                        struct crawl_host *h, struct hostinfo *hi, double now)
{
    size_t plen;
    const char *path = crawl_robots_url_path(it->url, &plen);
    struct crawl_robots_decision d;
    enum crawl_robots_verdict rv = crawl_robots_host_check(hi->robots, path, plen, now, &d);
    /* the last retry of an outage is at its limit, whatever the backoff says */
    if (rv == CRAWL_ROBOTS_DEFER && !hi->robots_in_flight &&
        now >= hi->outage_since + c->opts.robots_outage)
        rv = CRAWL_ROBOTS_FETCH;
    if (rv == CRAWL_ROBOTS_FETCH)
        return robots_first(c, it, h, hi, now);
    if (rv == CRAWL_ROBOTS_DEFER) {
        /* robots.txt failing and its retry not due yet (robots_done paused the
         * host until then; another connection of the host may get here): held,
         * not dropped */
        enum crawl_code rc = crawl_frontier_push(c->frontier, h, it->url, it->depth, it->hops,
                                                 it->priority, it->referrer, it->id, now);
        crawl_frontier_cancel(c->frontier, h, now);
        crawl_frontier_pause(c->frontier, h, d.retry_at, now);
        crawl_item_release(it);
        if (rc != CRAWL_OK) {
            c->fatal = rc;
            return DISPATCH_STOP;
        }
        return DISPATCH_NEXT;
    }
    if (rv == CRAWL_ROBOTS_DISALLOW) {
        char why[200];
        if (d.rule)
            snprintf(why, sizeof why, "robots.txt line %u: %.150s", d.line, d.rule);
        else
            snprintf(why, sizeof why, "robots.txt");
        emit(c, it->url, it->id, 0, it->depth, CRAWL_DECISION_ROBOTS_DISALLOWED, why, NULL,
             it->referrer);
        /* no request was made: the slot is free again at once */
        crawl_frontier_cancel(c->frontier, h, now);
        crawl_item_release(it);
        return DISPATCH_NEXT;
    }
    return DISPATCH_FETCH;
}

/* A fetch started: counted, told to the shared frontier, kept in flight for the state's
 * leases, and marked fetched for a focused crawl. */
static void fetch_started(struct crawl *c, struct job *j)
{
    c->n_dispatched++;
    if (c->redis && crawl_redis_fetching(c->redis, j->item.url) != CRAWL_OK)
        c->fatal = CRAWL_EIO;    /* cannot happen: the URL came from a lease */
    if (c->state && !c->redis) { /* in flight: leased at the next commit if not recorded */
        j->link.prev = c->inflight.prev;
        j->link.next = &c->inflight;
        c->inflight.prev->next = &j->link;
        c->inflight.prev = &j->link;
    }
    if (c->dispatched) {
        int added;
        if (crawl_seen_add(c->dispatched, crawl_hash64(j->item.url, strlen(j->item.url)), &added) !=
            CRAWL_OK)
            c->fatal = CRAWL_ENOMEM;
    }
}

/* Step 3, the fetch: a job for the URL (it takes the item) handed to the fetcher. */
static enum dispatch_step start_fetch(struct crawl *c, struct crawl_item *it, struct crawl_host *h,
                                      double now)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        crawl_item_release(it);
        crawl_frontier_done(c->frontier, h, now);
        c->fatal = CRAWL_ENOMEM;
        return DISPATCH_STOP;
    }
    j->item = *it;
    j->host = h;
    enum crawl_code rc = crawl_fetcher_add(
        c->fetcher, j->item.url,
        (j->item.hops & HOPS_REQUISITE) ? CRAWL_FETCH_REQUISITE : CRAWL_FETCH_PAGE, j);
    if (rc == CRAWL_ETOOLARGE) {
        /* no room in the memory budget (a worker took it since mem_room): put the URL
         * back, no request was made; dispatch again when bytes come back */
        rc = crawl_frontier_push(c->frontier, h, j->item.url, j->item.depth, j->item.hops,
                                 j->item.priority, j->item.referrer, j->item.id, now);
        crawl_frontier_cancel(c->frontier, h, now);
        job_free(j); /* and the item with it */
        if (rc != CRAWL_OK)
            c->fatal = rc;
        return DISPATCH_STOP;
    }
    if (rc != CRAWL_OK) {
        crawl_frontier_done(c->frontier, h, now);
        job_free(j);
        c->fatal = rc;
        return DISPATCH_STOP;
    }
    fetch_started(c, j);
    return DISPATCH_NEXT;
}

/* Starts what may start now; returns the time something more may start. */
static double dispatch(struct crawl *c, double now)
{
    double wake = INFINITY;
    double shared_wake = c->redis ? shared_acquire(c, now) : INFINITY;
    while (may_start(c)) {
        struct crawl_item it;
        struct crawl_host *h;
        if (!crawl_frontier_pop(c->frontier, now, &it, &h, &wake))
            break;
        struct hostinfo *hi = crawl_host_userdata(h);
        enum dispatch_step step = pop_checks(c, &it, h, hi, now);
        if (step == DISPATCH_FETCH && hi->robots)
            step = robots_checks(c, &it, h, hi, now);
        if (step == DISPATCH_FETCH)
            step = start_fetch(c, &it, h, now);
        if (step == DISPATCH_STOP)
            break;
    }
    return wake < shared_wake ? wake : shared_wake;
}

/* ---- the shared frontier (crawl --redis) ---- */

/*
 * HOW IT WORKS. With a state opened on Redis (crawl_state_open_redis), the frontier the
 * loop pops from holds only URLs this worker has leased from the shared frontier
 * (redis_frontier.c): shared_acquire leases URLs of hosts whose turn has come (one per
 * host: the host is this worker's until the URL is completed) and pushes them here with
 * their host's shared delay and robots.txt reading, so everything after a pop (robots
 * checks, politeness, the memory budget, redirects) is the same code as without Redis.
 * Links go to the shared frontier (enqueue_shared), never to the local one; the local
 * seen set only saves round trips for URLs this worker has sent already. A URL's decision
 * (state_done) marks its lease decided with its host's next allowed time; the group
 * commit (shared_commit) completes the decided leases with the WARC and log ends after
 * before_commit, as with --state, and may keep the hosts (their next URLs leased in the
 * same script) while the host lease lasts. The crawl is over for this worker when it
 * holds no lease and an acquire finds no host waiting and no lease outstanding anywhere.
 */
#define SHARED_POLL 0.05 /* s between acquires while the shared frontier has nothing ready */
/* s between commits: a host goes back to the others (or on with this worker) only when
 * its URL is committed, so this is the most a host waits beyond its delay */
#define SHARED_COMMIT_INTERVAL 0.001

static int shared_take(void *userdata, const struct crawl_redis_lease *l)
{
    struct crawl *c = userdata;
    double now = crawl_clock(), wall = wall_clock();
    struct crawl_host *h = NULL;
    if (crawl_frontier_host(c->frontier, l->origin, strlen(l->origin), &h) != CRAWL_OK ||
        host_info(c, h) != CRAWL_OK)
        return -1;
    struct hostinfo *hi = crawl_host_userdata(h);
    if (l->delay > 0)
        crawl_frontier_set_delay(c->frontier, h, l->delay, now);
    if (hi->robots && l->robots_status > 0 && crawl_robots_host_needs_fetch(hi->robots, now) &&
        wall - l->robots_time >= 0 && wall - l->robots_time < CRAWL_ROBOTS_CACHE_TTL) {
        /* another worker's reading, aged: it expires when it would have */
        struct crawl_robots_outcome o = {.status = l->robots_status,
                                         .max_age = -1,
                                         .body = l->robots_body,
                                         .len = l->robots_len};
        if (crawl_robots_host_update(hi->robots, &o, now - (wall - l->robots_time)) != CRAWL_OK)
            return -1;
        double cd = crawl_robots_host_crawl_delay(hi->robots);
        if (cd > 0)
            crawl_frontier_set_delay(c->frontier, h, cd, now);
    }
    struct crawl_ref *ref = NULL;
    if (l->referrer && !(ref = crawl_ref_new(l->referrer)))
        return -1;
    enum crawl_code rc = crawl_frontier_push(c->frontier, h, l->url, l->depth, l->hops,
                                             -(float)l->depth, ref, 0, now);
    crawl_ref_put(ref);
    return rc == CRAWL_OK ? 0 : -1;
}

/* Leases what this worker has room for; returns when to look again. */
static double shared_acquire(struct crawl *c, double now)
{
    if (c->stop || c->fatal || now < c->next_acquire)
        return c->next_acquire;
    size_t out = crawl_redis_outstanding(c->redis);
    /* the page budget (--max-pages) is the whole crawl's: the acquire script reserves it */
    size_t room = c->opts.concurrency > out ? c->opts.concurrency - out : 0;
    if (room == 0)
        return INFINITY; /* a transfer ending calls dispatch again */
    size_t n = 0;
    double next_ready = -1;
    int64_t leases = 0;
    if (crawl_redis_acquire(c->redis, room, shared_take, c, &n, &next_ready, &leases) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        return INFINITY;
    }
    /* nothing left for anyone: no host waits (or the page budget is spent) and no lease
     * is outstanding anywhere (a lease given back would be fetched by someone) */
    c->shared_spent = crawl_redis_budget_left(c->redis) == 0;
    c->shared_empty = n == 0 && (next_ready < 0 || c->shared_spent) && leases == 0;
    if (n == room) {
        c->next_acquire = now; /* there may be more */
    } else {
        /* nothing more is ready: look again when the next host's turn comes, or sooner
         * (other workers add URLs and give hosts back at any time) */
        double wait = SHARED_POLL;
        if (next_ready >= 0) {
            double until = next_ready - wall_clock();
            if (until < wait)
                wait = until > 0.001 ? until : 0.001;
        }
        c->next_acquire = now + wait;
    }
    return c->next_acquire;
}

static enum enqueue_result enqueue_shared(struct crawl *c, const char *url, unsigned depth,
                                          unsigned hops, const struct crawl_ref *referrer)
{
    uint64_t hash = crawl_hash64(url, strlen(url));
    if (crawl_seen_contains(c->seen, hash))
        return ENQ_SEEN; /* sent by this worker already */
    struct crawl_url_parts p;
    if (crawl_url_split(url, &p) != CRAWL_OK)
        return ENQ_FULL;
    int added = 0;
    if (crawl_redis_enqueue(c->redis, url, p.origin_len, depth, hops,
                            referrer ? referrer->url : NULL, &added) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        return ENQ_FULL;
    }
    int in_table;
    enum crawl_code rc = crawl_seen_add(c->seen, hash, &in_table);
    if (rc == CRAWL_ETOOLARGE) { /* a cache: start it again */
        crawl_seen_clear(c->seen);
        rc = crawl_seen_add(c->seen, hash, &in_table);
    }
    if (rc != CRAWL_OK)
        return ENQ_FULL;
    c->n_seen += (uint64_t)added;
    return added ? ENQ_QUEUED : ENQ_SEEN;
}

/* The links of a page kept (v, found on url) sent to the shared frontier in one pipeline:
 * those in scope and not sent by this worker before. Returns how many were new. */
static long shared_links(struct crawl *c, const struct crawl_verdict *v, const char *url,
                         unsigned depth)
{
    struct crawl_redis_link *l = malloc((v->n_links ? v->n_links : 1) * sizeof *l);
    if (!l) {
        c->fatal = CRAWL_ENOMEM;
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->n_links; i++) {
        const char *link = v->links[i];
        struct crawl_url_parts p;
        int inside;
        if (in_scope(c, link, &inside) != CRAWL_OK)
            continue; /* out of memory: not queued, as enqueue's ENQ_FULL */
        if (!inside) {
            c->stats.links_out_of_scope++;
            continue;
        }
        if (crawl_seen_contains(c->seen, crawl_hash64(link, strlen(link))) ||
            crawl_url_split(link, &p) != CRAWL_OK)
            continue;
        l[n++] = (struct crawl_redis_link){.url = link, .origin_len = p.origin_len};
    }
    long added = 0;
    if (n && crawl_redis_enqueue_many(c->redis, l, n, depth, url) != CRAWL_OK) {
        c->fatal = CRAWL_EIO;
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        int in_table;
        uint64_t hash = crawl_hash64(l[i].url, strlen(l[i].url));
        enum crawl_code rc = crawl_seen_add(c->seen, hash, &in_table);
        if (rc == CRAWL_ETOOLARGE) { /* a cache: start it again */
            crawl_seen_clear(c->seen);
            rc = crawl_seen_add(c->seen, hash, &in_table);
        }
        added += l[i].added;
    }
    c->n_seen += (uint64_t)added;
    free(l);
    return added;
}

/* url (leased by this worker) has its decision: completed at the next commit. */
static void shared_done(struct crawl *c, const char *url)
{
    struct crawl_url_parts p;
    struct crawl_host *h = NULL;
    double now = crawl_clock(), wall = wall_clock(), next = wall, delay = c->opts.delay;
    if (crawl_url_split(url, &p) == CRAWL_OK &&
        crawl_frontier_host(c->frontier, url, p.origin_len, &h) == CRAWL_OK) {
        double na = crawl_host_next_allowed(h);
        if (isfinite(na) && na > now)
            next = wall + (na - now);
        delay = crawl_host_delay(h);
    }
    if (crawl_redis_decided(c->redis, url, next, delay) != CRAWL_OK && !c->fatal)
        c->fatal = CRAWL_EIO;
}

static void shared_commit(struct crawl *c, double now, int force)
{
    if (!force &&
        (crawl_redis_pending(c->redis) == 0 || (now - c->last_commit < SHARED_COMMIT_INTERVAL &&
                                                c->uncommitted < CRAWL_STATE_COMMIT_PAGES)))
        return;
    update_stats(c, now);
    uint64_t vals[STATS_KEPT_N];
    _Static_assert(STATS_KEPT_N == sizeof c->stats_committed / sizeof c->stats_committed[0],
                   "one committed value per counter kept");
    enum crawl_code rc = commit_meta(c, vals);
    /* the crawl-wide counters move by what this worker added since its last commit */
    for (size_t i = 0; rc == CRAWL_OK && i < STATS_KEPT_N; i++)
        rc = crawl_redis_stats_add(c->redis, STATS_KEPT[i].name,
                                   (int64_t)(vals[i] - c->stats_committed[i]));
    size_t kept = 0;
    if (rc == CRAWL_OK)
        rc = crawl_redis_commit(c->redis, !c->stop && !c->fatal && !c->finishing, shared_take, c,
                                &kept);
    if (rc == CRAWL_OK)
        memcpy(c->stats_committed, vals, sizeof vals);
    c->shared_kept = kept > 0;
    if (rc != CRAWL_OK && !c->fatal)
        c->fatal = rc;
    c->last_commit = now;
    c->uncommitted = 0;
}

/* The leases held pushed on; the expired leases of any worker reaped. */
static void shared_upkeep(struct crawl *c, double now)
{
    if (c->fatal)
        return;
    double lt = crawl_redis_lease_time(c->redis);
    if (now >= c->next_renew) {
        if (crawl_redis_renew(c->redis) != CRAWL_OK)
            c->fatal = CRAWL_EIO;
        c->next_renew = now + lt / 4;
    }
    if (now >= c->next_reap) {
        size_t n = 0;
        if (crawl_redis_reap(c->redis, &n) != CRAWL_OK)
            c->fatal = CRAWL_EIO;
        c->next_reap = now + (lt / 4 < 1 ? lt / 4 : 1);
        if (n)
            c->next_acquire = now; /* URLs came back */
    }
}

static void handle_responses(struct crawl *c, double now)
{
    struct crawl_response *r;
    while ((r = crawl_fetcher_next(c->fetcher)) != NULL) {
        struct job *j = r->userdata;
        j->resp = r;
        if (j->robots) {
            robots_done(c, j, now);
            job_free(j);
            continue;
        }
        crawl_frontier_done(c->frontier, j->host, now);
        if (!page_done(c, j, now))
            job_free(j);
    }
}

enum crawl_code crawl_run(struct crawl *c)
{
    enum crawl_code rc = CRAWL_OK;
    c->start = crawl_clock();
    for (unsigned i = 0; i < c->opts.workers; i++) {
        if (pthread_create(&c->threads[i], NULL, worker_main, c) != 0) {
            rc = CRAWL_ETHREAD;
            break;
        }
        c->n_threads++;
    }
    if (c->n_threads == 0)
        return CRAWL_ETHREAD;
    rc = CRAWL_OK;
    c->last_commit = c->start;
    double next_progress = c->start + c->opts.progress_interval;
    double stop_deadline = INFINITY;
    for (;;) {
        double now = crawl_clock();
        if ((c->stop || c->fatal) && isinf(stop_deadline))
            stop_deadline = now + c->opts.stop_grace;
        if (now >= stop_deadline && crawl_fetcher_active(c->fetcher) > 0) {
            crawl_fetcher_abort_all(c->fetcher);
            handle_responses(c, now);
        }

        /* verdicts back from the workers */
        struct queue got = {0};
        pthread_mutex_lock(&c->lock);
        got = c->done;
        c->done.head = c->done.tail = NULL;
        c->done.n = 0;
        pthread_mutex_unlock(&c->lock);
        struct job *j;
        while ((j = queue_pop(&got)) != NULL) {
            c->in_pipeline--;
            verdict_done(c, j, now);
            job_free(j);
        }

        double wake = dispatch(c, now);
        if (crawl_fetcher_paused(c->fetcher) > 0 &&
            crawl_fetcher_paused(c->fetcher) == crawl_fetcher_active(c->fetcher) &&
            c->in_pipeline == 0) {
            /* every transfer waits for room in the memory budget and no page is in the
             * workers' hands to give bytes back: the one holding the most fails, named
             * with the budget, so that the others can go on */
            crawl_fetcher_fail_paused(c->fetcher);
            handle_responses(c, now);
        }

        unsigned active = crawl_fetcher_active(c->fetcher);
        /* --redis: the budget is the whole crawl's; a worker goes on while it holds leases
         * or any are outstanding (shared_acquire) */
        int budget_left =
            c->redis ? !c->shared_spent
                     : c->opts.max_pages <= 0 || c->n_dispatched < (uint64_t)c->opts.max_pages;
        int more = !c->stop && !c->fatal && (budget_left || c->redis) &&
                   (crawl_frontier_size(c->frontier) + c->disk_queued > 0 ||
                    (c->redis && (crawl_redis_held(c->redis) > 0 || !c->shared_empty)));
        if (active == 0 && c->in_pipeline == 0 && !more) {
            if (!c->stop && !c->fatal) /* 1: nothing left; 2: the page budget is spent */
                c->complete = budget_left ? 1 : 2;
            break;
        }
        maybe_commit(c, now, 0);
        if (c->redis)
            shared_upkeep(c, now);
        if (active == 0 && c->in_pipeline == 0 && isinf(wake) && more) {
            /* queued URLs but nothing can ever start: every host is held with no robots
             * fetch in flight, which cannot happen; guard against a spin anyway */
            break;
        }
        int timeout_ms = c->state && crawl_state_pending(c->state) ? (c->redis ? 1 : 100) : 200;
        if (!isinf(wake) && wake > now && (wake - now) * 1000 < timeout_ms)
            timeout_ms = (int)((wake - now) * 1000) + 1;
        if (c->redis && c->shared_kept) { /* URLs leased by the commit wait in the frontier */
            c->shared_kept = 0;
            timeout_ms = 0;
        }
        if (c->opts.progress && now + timeout_ms / 1000.0 > next_progress)
            timeout_ms = next_progress > now ? (int)((next_progress - now) * 1000) + 1 : 0;
        if (crawl_fetcher_run(c->fetcher, timeout_ms) != CRAWL_OK) {
            rc = CRAWL_ECURL;
            break;
        }
        now = crawl_clock();
        handle_responses(c, now);
        if (c->opts.progress && now >= next_progress) {
            update_stats(c, now);
            c->opts.progress(c->opts.userdata, &c->stats);
            next_progress = now + c->opts.progress_interval;
        }
    }

    pthread_mutex_lock(&c->lock);
    c->quit = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    for (unsigned i = 0; i < c->n_threads; i++)
        pthread_join(c->threads[i], NULL);
    c->n_threads = 0;
    if (rc != CRAWL_OK)
        c->complete = 0;
    c->finishing = 1;
    maybe_commit(c, crawl_clock(), 1); /* what the stop left: its records are whole */
    if (c->redis && !c->fatal) {       /* the transfers a stop cut short go back to the others */
        size_t n;
        if (crawl_redis_release(c->redis, &n) != CRAWL_OK)
            c->fatal = CRAWL_EIO;
    }
    update_stats(c, crawl_clock());
    if (rc == CRAWL_OK && c->fatal)
        rc = (enum crawl_code)c->fatal;
    return rc;
}

void crawl_stop(struct crawl *c)
{
    c->stop = 1;
    if (c->fetcher)
        crawl_fetcher_wakeup(c->fetcher);
}

const struct crawl_stats *crawl_get_stats(const struct crawl *c)
{
    return &c->stats;
}

int crawl_complete(const struct crawl *c)
{
    return c->complete;
}

/* ---- resuming from the state ---- */

static int resume_hash(void *userdata, uint64_t hash, int done)
{
    struct crawl *c = userdata;
    int added;
    if (seen_keep(c, hash) != CRAWL_OK) /* every row is a URL of its own */
        return -1;
    c->n_seen++;
    /* a focused crawl: a URL fetched before is not fetched again from an older entry */
    if (done && c->dispatched && crawl_seen_add(c->dispatched, hash, &added) != CRAWL_OK)
        return -1;
    return 0;
}

static int resume_host(void *userdata, int64_t id, const char *origin,
                       const struct crawl_state_host *sh, int64_t queued)
{
    struct crawl *c = userdata;
    (void)id;
    struct crawl_host *h = NULL;
    double now = crawl_clock(), wall = wall_clock();
    if (!origin || crawl_frontier_host(c->frontier, origin, strlen(origin), &h) != CRAWL_OK ||
        host_info(c, h) != CRAWL_OK)
        return -1;
    struct hostinfo *hi = crawl_host_userdata(h);
    if (sh->delay > 0)
        crawl_frontier_set_delay(c->frontier, h, sh->delay, now);
    if (hi->robots && sh->robots_status > 0 && wall - sh->robots_time >= 0 &&
        wall - sh->robots_time < CRAWL_ROBOTS_CACHE_TTL) {
        /* the reading as it was, aged: it expires when it would have */
        struct crawl_robots_outcome o = {.status = sh->robots_status,
                                         .max_age = -1,
                                         .body = sh->robots_body,
                                         .len = sh->robots_len};
        if (crawl_robots_host_update(hi->robots, &o, now - (wall - sh->robots_time)) != CRAWL_OK)
            return -1;
    }
    if (sh->next_allowed > wall)
        crawl_frontier_pause(c->frontier, h, now + (sh->next_allowed - wall), now);
    if (queued > 0) {
        hi->spilled = 1;
        hi->cursor = 0;
        hi->below_prio = INFINITY; /* focused: every row */
        hi->below_id = 0;
        hi->on_disk = (size_t)queued;
        c->disk_queued += (size_t)queued;
        if (refill(c, h, hi, now) != CRAWL_OK)
            return -1;
    }
    return 0;
}

enum crawl_code crawl_resume(struct crawl *c, int *resumed)
{
    *resumed = 0;
    if (!c->state)
        return CRAWL_OK;
    int64_t v = 0;
    int found = 0;
    enum crawl_code rc = crawl_state_meta_int(c->state, "stats.fetched", &v, &found);
    if (rc != CRAWL_OK)
        return rc;
    if (!c->redis) /* the shared frontier is in Redis: nothing to load */
        rc = crawl_state_foreach_hash(c->state, resume_hash, c);
    if (rc == CRAWL_OK && !c->redis)
        rc = crawl_state_foreach_host(c->state, resume_host, c);
    for (size_t i = 0; rc == CRAWL_OK && i < sizeof STATS_KEPT / sizeof STATS_KEPT[0]; i++) {
        int f = 0;
        rc = crawl_state_meta_int(c->state, STATS_KEPT[i].name, &v, &f);
        if (rc == CRAWL_OK && f) {
            uint64_t u = (uint64_t)v;
            memcpy((char *)&c->stats + STATS_KEPT[i].off, &u, sizeof u);
            c->stats_committed[i] = u;
            found = 1;
        }
    }
    if (rc == CRAWL_OK) {
        int f = 0;
        rc = crawl_state_meta_int(c->state, "stats.elapsed_ms", &v, &f);
        if (f)
            c->elapsed_before = (double)v / 1000;
    }
    if (rc != CRAWL_OK)
        return rc;
    /* the page budget (max_pages) covers the whole crawl */
    c->n_dispatched = c->stats.fetched;
    *resumed = found || c->n_seen > 0;
    return CRAWL_OK;
}

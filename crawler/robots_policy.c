/*
 * The robots.txt fetch policy: one small state machine per host that turns what fetching
 * robots.txt gave (status after redirects, body, network error) into a verdict for each
 * URL. Pure: time comes in as an argument, so tests drive it with a fake clock.
 *
 * RFC 9309 2.3.1 and 2.4, as the states of struct crawl_robots_host:
 *   NONE         never fetched: every URL waits for a fetch (verdict FETCH).
 *   RULES        2xx: the parsed rules apply until expires (cache_ttl, at most 24 h, or
 *                the response's max-age if lower, but not below MIN_TTL).
 *   ALLOW_ALL    "unavailable": 4xx other than 429, a final 3xx, or more than 5 redirects
 *                (2.3.1.2 lets a crawler assume unavailable then); crawling is allowed.
 *   UNREACHABLE  5xx, 429 or a network error (2.3.1.4): the whole host is disallowed
 *                (verdict DEFER, never "allow all") and robots.txt is retried after an
 *                exponential backoff (backoff_initial doubling up to backoff_max). Once the
 *                outage has lasted outage_limit (default 30 days, the RFC's example), the
 *                last good reading applies again (a cached 2xx copy, or a 4xx allow-all),
 *                or allow-all when there never was one; retries continue. The crawl loop
 *                passes outage_limit -1 and ends an outage itself, after minutes, by
 *                logging the host's URLs robots-disallowed (crawl.c, robots_done).
 * A stale reading (past expires) or a due retry makes the verdict FETCH: the crawler
 * fetches robots.txt again before it crawls that host further.
 */
#include "crawler/crawl.h"

#include <stdlib.h>
#include <string.h>

#define MIN_TTL 60.0 /* a max-age of 0 would make the crawler refetch for every URL */

enum host_state { ST_NONE, ST_RULES, ST_ALLOW_ALL, ST_UNREACHABLE };

struct crawl_robots_host {
    char *agent;
    struct crawl_robots_policy_opts o;
    enum host_state state;
    struct crawl_robots *rules; /* RULES; while UNREACHABLE: the last good copy or NULL */
    double expires;             /* RULES, ALLOW_ALL: reading stale from then on */
    double outage_since;        /* UNREACHABLE: time of the first failure in a row */
    double retry_at;            /* UNREACHABLE: next fetch */
    unsigned failures;
};

void crawl_robots_policy_opts_init(struct crawl_robots_policy_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->cache_ttl = CRAWL_ROBOTS_CACHE_TTL;
    opts->backoff_initial = CRAWL_ROBOTS_BACKOFF_INITIAL;
    opts->backoff_max = CRAWL_ROBOTS_BACKOFF_MAX;
    opts->outage_limit = CRAWL_ROBOTS_OUTAGE_LIMIT;
    crawl_robots_opts_init(&opts->parse);
}

enum crawl_code crawl_robots_host_new(const char *user_agent,
                                      const struct crawl_robots_policy_opts *opts,
                                      struct crawl_robots_host **out)
{
    *out = NULL;
    if (!user_agent)
        return CRAWL_EINVAL;
    struct crawl_robots_host *h = calloc(1, sizeof *h);
    if (!h)
        return CRAWL_ENOMEM;
    crawl_robots_policy_opts_init(&h->o);
    if (opts) {
        h->o = *opts;
        if (h->o.cache_ttl <= 0 || h->o.cache_ttl > CRAWL_ROBOTS_CACHE_TTL)
            h->o.cache_ttl = CRAWL_ROBOTS_CACHE_TTL;
        if (h->o.backoff_initial <= 0)
            h->o.backoff_initial = CRAWL_ROBOTS_BACKOFF_INITIAL;
        if (h->o.backoff_max <= 0)
            h->o.backoff_max = CRAWL_ROBOTS_BACKOFF_MAX;
        if (h->o.outage_limit == 0)
            h->o.outage_limit = CRAWL_ROBOTS_OUTAGE_LIMIT;
    }
    h->agent = strdup(user_agent);
    if (!h->agent) {
        free(h);
        return CRAWL_ENOMEM;
    }
    /* the agent must have a product token: the parser says so on an empty file */
    struct crawl_robots *probe = NULL;
    enum crawl_code rc = crawl_robots_parse("", 0, user_agent, &h->o.parse, &probe);
    crawl_robots_free(probe);
    if (rc != CRAWL_OK) {
        crawl_robots_host_free(h);
        return rc;
    }
    h->state = ST_NONE;
    *out = h;
    return CRAWL_OK;
}

void crawl_robots_host_free(struct crawl_robots_host *h)
{
    if (!h)
        return;
    crawl_robots_free(h->rules);
    free(h->agent);
    free(h);
}

static double ttl_for(const struct crawl_robots_host *h, const struct crawl_robots_outcome *o)
{
    double ttl = h->o.cache_ttl;
    if (o->max_age >= 0 && o->max_age < ttl)
        ttl = o->max_age;
    return ttl < MIN_TTL ? MIN_TTL : ttl;
}

enum crawl_code crawl_robots_host_update(struct crawl_robots_host *h,
                                         const struct crawl_robots_outcome *o, double now)
{
    int st = o->status;
    if (!o->too_many_redirects && st >= 200 && st <= 299) {
        size_t len = o->body ? o->len : 0;
        if (o->truncated) /* the line cut by the fetch cap is dropped */
            while (len > 0 && o->body[len - 1] != '\n' && o->body[len - 1] != '\r')
                len--;
        struct crawl_robots *r = NULL;
        enum crawl_code rc =
            crawl_robots_parse(o->body ? o->body : "", len, h->agent, &h->o.parse, &r);
        if (rc != CRAWL_OK)
            return rc;
        crawl_robots_free(h->rules);
        h->rules = r;
        h->state = ST_RULES;
        h->failures = 0;
        h->expires = now + ttl_for(h, o);
        return CRAWL_OK;
    }
    if (o->too_many_redirects || (st >= 300 && st <= 499 && st != 429)) {
        crawl_robots_free(h->rules);
        h->rules = NULL;
        h->state = ST_ALLOW_ALL;
        h->failures = 0;
        h->expires = now + ttl_for(h, o);
        return CRAWL_OK;
    }
    /* 5xx, 429, no answer, or a status that makes no sense (1xx, >= 600): unreachable */
    if (h->state != ST_UNREACHABLE) {
        h->outage_since = now;
        h->failures = 0;
        if (h->state == ST_ALLOW_ALL) {
            crawl_robots_free(h->rules);
            h->rules = NULL;
        }
    }
    h->state = ST_UNREACHABLE;
    h->failures++;
    double backoff = h->o.backoff_initial;
    for (unsigned i = 1; i < h->failures && backoff < h->o.backoff_max; i++)
        backoff *= 2;
    if (backoff > h->o.backoff_max)
        backoff = h->o.backoff_max;
    h->retry_at = now + backoff;
    return CRAWL_OK;
}

int crawl_robots_host_needs_fetch(const struct crawl_robots_host *h, double now)
{
    switch (h->state) {
    case ST_NONE:
        return 1;
    case ST_UNREACHABLE:
        return now >= h->retry_at;
    default:
        return now >= h->expires;
    }
}

double crawl_robots_host_next_fetch(const struct crawl_robots_host *h)
{
    switch (h->state) {
    case ST_NONE:
        return 0;
    case ST_UNREACHABLE:
        return h->retry_at;
    default:
        return h->expires;
    }
}

/* While unreachable: has the outage lasted long enough for the last good reading? */
static int outage_over(const struct crawl_robots_host *h, double now)
{
    return h->o.outage_limit > 0 && now - h->outage_since >= h->o.outage_limit;
}

enum crawl_robots_verdict crawl_robots_host_check(const struct crawl_robots_host *h,
                                                  const char *path, size_t len, double now,
                                                  struct crawl_robots_decision *decision)
{
    struct crawl_robots_decision d;
    memset(&d, 0, sizeof d);
    enum crawl_robots_verdict v;
    if (crawl_robots_host_needs_fetch(h, now)) {
        d.reason = h->state == ST_UNREACHABLE ? CRAWL_ROBOTS_UNREACHABLE : CRAWL_ROBOTS_NOT_FETCHED;
        d.retry_at = now;
        v = CRAWL_ROBOTS_FETCH;
    } else if (h->state == ST_UNREACHABLE && !outage_over(h, now)) {
        d.reason = CRAWL_ROBOTS_UNREACHABLE;
        d.retry_at = h->retry_at;
        v = CRAWL_ROBOTS_DEFER;
    } else if (h->rules) {
        crawl_robots_allowed(h->rules, path, len, &d);
        v = d.allowed ? CRAWL_ROBOTS_ALLOW : CRAWL_ROBOTS_DISALLOW;
    } else {
        d.allowed = 1;
        d.reason = CRAWL_ROBOTS_NO_ROBOTS;
        v = CRAWL_ROBOTS_ALLOW;
    }
    if (decision)
        *decision = d;
    return v;
}

double crawl_robots_host_crawl_delay(const struct crawl_robots_host *h)
{
    return h->rules ? crawl_robots_crawl_delay(h->rules) : 0;
}

const struct crawl_robots *crawl_robots_host_rules(const struct crawl_robots_host *h)
{
    return h->rules;
}

unsigned crawl_robots_host_failures(const struct crawl_robots_host *h)
{
    return h->state == ST_UNREACHABLE ? h->failures : 0;
}

/*
 * robots.txt as the crawler fetches it: the one path. The transfer is the fetcher's
 * (crawler/fetch.c, CRAWL_FETCH_ANY: redirects followed up to CRAWL_ROBOTS_MAX_REDIRECTS
 * across hosts, RFC 9309 2.3.1.2; decoded; the first CRAWL_ROBOTS_MAX_BYTES kept, the
 * rest dropped and the response marked too large); this file turns the finished transfer
 * into the struct crawl_robots_outcome that the policy (crawler/robots_policy.c) reads.
 * The crawl loop (robots_done in crawler/crawl.c) and the tests call the same function.
 *
 * Caching (RFC 9309 2.4): "crawlers MAY use standard HTTP cache-control as defined in
 * RFC 9111" and "SHOULD NOT use the cached version for more than 24 hours, unless the
 * robots.txt file is unreachable". The response's Cache-Control max-age is read here; the
 * policy keeps a reading for max-age when that is shorter than its cache time (24 hours
 * at most, CRAWL_ROBOTS_CACHE_TTL), never longer, and never under a minute.
 *
 * A body cut short by the network (reset, timeout) is no robots.txt (status 0, the error
 * in words): rules missing from its end could allow too much. A body cut at the cap is
 * one (RFC 9309 2.5: at least 500 KiB parsed), marked truncated.
 */
#include "crawler/crawl.h"
#include "crawler/crawler_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* max-age values are capped here (about 31 years); the policy caps them at 24 hours */
#define MAX_AGE_CAP 1e9

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* The max-age directive of one Cache-Control value v[0..n), or -1 when it has none. */
static double max_age_of(const char *v, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (is_space(v[i]) || v[i] == ','))
            i++;
        size_t start = i;
        while (i < n && v[i] != ',' && v[i] != '=' && !is_space(v[i]))
            i++;
        int is_max_age = i - start == 7 && strncasecmp(v + start, "max-age", 7) == 0;
        while (i < n && is_space(v[i]))
            i++;
        if (i < n && v[i] == '=') {
            i++;
            while (i < n && is_space(v[i]))
                i++;
            int quoted = i < n && v[i] == '"'; /* RFC 9111 5.2: a recipient accepts it */
            i += (size_t)quoted;
            double age = 0;
            int digits = 0;
            while (i < n && v[i] >= '0' && v[i] <= '9') {
                if (age < MAX_AGE_CAP)
                    age = age * 10 + (v[i] - '0');
                digits++;
                i++;
            }
            if (is_max_age && digits && (!quoted || (i < n && v[i] == '"')))
                return age < MAX_AGE_CAP ? age : MAX_AGE_CAP;
            if (quoted) /* the rest of a quoted argument, commas and all (RFC 9110 5.6.4) */
                while (i < n && v[i] != '"')
                    i += v[i] == '\\' && i + 1 < n ? 2 : 1;
        }
        while (i < n && v[i] != ',') /* the rest of the directive */
            i++;
    }
    return -1;
}

double crawl__robots_max_age(const char *head, size_t len)
{
    static const char name[] = "cache-control:";
    double age = -1;
    size_t i = 0;
    while (i < len) {
        const char *eol = memchr(head + i, '\n', len - i);
        size_t end = eol ? (size_t)(eol - head) : len;
        size_t n = end - i;
        if (n > sizeof name - 1 && strncasecmp(head + i, name, sizeof name - 1) == 0) {
            size_t vlen = n - (sizeof name - 1);
            const char *v = head + i + sizeof name - 1;
            if (vlen > 0 && v[vlen - 1] == '\r')
                vlen--;
            double a = max_age_of(v, vlen);
            if (a >= 0 && (age < 0 || a < age)) /* two headers: the shorter is kept */
                age = a;
        }
        i = end + 1;
    }
    return age;
}

int crawl__robots_outcome_from_response(const struct crawl_response *r,
                                        struct crawl_robots_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->max_age = -1;
    o->redirects = r->redirects;
    o->final_url = r->final_url;
    if (r->result == CRAWL_FETCH_DONE || r->result == CRAWL_FETCH_TOOLARGE) {
        o->status = (int)r->status;
        o->body = r->data + r->head_len;
        o->len = r->len - r->head_len;
        o->truncated = r->result == CRAWL_FETCH_TOOLARGE;
        o->max_age = crawl__robots_max_age(r->data, r->head_len);
        return 0;
    }
    o->status = 0;
    o->too_many_redirects = r->too_many_redirects;
    snprintf(o->error, sizeof o->error, "%s", r->error);
    /* refused, no such name, TLS, timeout before any status line: the host cannot be
     * reached; an answer cut short (status seen) is a server failing, like a 5xx */
    return r->status == 0 && !r->too_many_redirects && r->result != CRAWL_FETCH_ABORTED;
}

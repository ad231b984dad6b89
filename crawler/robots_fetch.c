/*
 * Fetches one robots.txt with libcurl's easy interface and reports what happened as a
 * struct crawl_robots_outcome for the policy (crawler/robots_policy.c): the final status
 * after following up to CRAWL_ROBOTS_MAX_REDIRECTS redirects across hosts (RFC 9309
 * 2.3.1.2), the decoded body up to a cap, Cache-Control max-age, and network errors in
 * words. http and https only, also after redirects.
 *
 * The body cap: once max_body decoded bytes are in, the write callback refuses more and
 * libcurl stops the transfer (CURLE_WRITE_ERROR); we mark the outcome truncated and keep
 * the status, so a 1 MB robots.txt costs at most max_body plus one network buffer.
 * A body cut short by the network (reset, timeout) is an error (status 0), never a
 * truncated file: rules missing from the end could allow too much.
 */
#include "crawler/crawl.h"

#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct fetch_ctx {
    struct crawl_robots_outcome *out;
    size_t cap;      /* bytes allocated for out->body */
    size_t max_body; /* bytes kept */
    int capped;      /* the write callback refused data at the cap */
    int nomem;
};

static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch_ctx *c = ud;
    struct crawl_robots_outcome *o = c->out;
    size_t add = sz * n;
    size_t room = c->max_body - o->len;
    size_t take = add < room ? add : room;
    if (take > 0) {
        if (o->len + take + 1 > c->cap) {
            size_t ncap = c->cap ? c->cap : 8192;
            while (ncap < o->len + take + 1)
                ncap *= 2;
            if (ncap > c->max_body + 1)
                ncap = c->max_body + 1;
            char *nb = realloc(o->body, ncap);
            if (!nb) {
                c->nomem = 1;
                return 0;
            }
            o->body = nb;
            c->cap = ncap;
        }
        memcpy(o->body + o->len, p, take);
        o->len += take;
        o->body[o->len] = '\0';
    }
    if (take < add) {
        c->capped = 1;
        o->truncated = 1;
        return 0; /* stop the transfer */
    }
    return add;
}

/* Reads max-age from Cache-Control; a new status line (a redirect hop) resets it. */
static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch_ctx *c = ud;
    size_t len = sz * n;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        c->out->max_age = -1;
    } else if (len > 14 && strncasecmp(p, "Cache-Control:", 14) == 0) {
        char line[512];
        size_t m = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, p, m);
        line[m] = '\0';
        for (char *q = line; *q; q++)
            if (*q >= 'A' && *q <= 'Z')
                *q = (char)(*q + 32);
        const char *ma = strstr(line, "max-age=");
        if (ma) {
            ma += 8;
            double v = 0;
            int digits = 0;
            while (*ma >= '0' && *ma <= '9' && v < 1e9) {
                v = v * 10 + (*ma++ - '0');
                digits++;
            }
            if (digits)
                c->out->max_age = v;
        }
    }
    return len;
}

static int is_http_url(const char *url)
{
    return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

enum crawl_code crawl_robots_fetch(const char *url, const struct crawl_robots_fetch_opts *opts,
                                   struct crawl_robots_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->max_age = -1;
    if (!url || !is_http_url(url))
        return CRAWL_EURL;
    long timeout = opts && opts->timeout_ms > 0 ? opts->timeout_ms : CRAWL_ROBOTS_FETCH_TIMEOUT_MS;
    long ctimeout = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : timeout / 3;
    struct fetch_ctx c = {out, 0, opts && opts->max_body ? opts->max_body : CRAWL_ROBOTS_MAX_BYTES,
                          0, 0};
    char errbuf[CURL_ERROR_SIZE] = "";
    enum crawl_code rc = CRAWL_ECURL;

    CURL *e = curl_easy_init();
    if (!e)
        return CRAWL_ECURL;
#define SET(opt, val)                                                                       \
    do {                                                                                    \
        if (curl_easy_setopt(e, opt, val) != CURLE_OK)                                      \
            goto fail;                                                                      \
    } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 1L);
    SET(CURLOPT_MAXREDIRS, (long)CRAWL_ROBOTS_MAX_REDIRECTS);
    SET(CURLOPT_ACCEPT_ENCODING, "");
    SET(CURLOPT_TIMEOUT_MS, timeout);
    SET(CURLOPT_CONNECTTIMEOUT_MS, ctimeout);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_USERAGENT, opts && opts->user_agent ? opts->user_agent : "simcrawl");
    SET(CURLOPT_WRITEFUNCTION, on_write);
    SET(CURLOPT_WRITEDATA, &c);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, &c);
    SET(CURLOPT_ERRORBUFFER, errbuf);
#undef SET

    CURLcode cc = curl_easy_perform(e);
    if (c.nomem) {
        rc = CRAWL_ENOMEM;
        goto fail;
    }
    long status = 0, redirects = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_REDIRECT_COUNT, &redirects);
    char *eff = NULL;
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &eff);
    if (eff) {
        out->final_url = strdup(eff);
        if (!out->final_url) {
            rc = CRAWL_ENOMEM;
            goto fail;
        }
    }
    out->redirects = (unsigned)redirects;
    if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && c.capped)) {
        out->status = (int)status;
    } else if (cc == CURLE_TOO_MANY_REDIRECTS) {
        out->status = (int)status;
        out->too_many_redirects = 1;
        snprintf(out->error, sizeof out->error, "more than %d redirects",
                 CRAWL_ROBOTS_MAX_REDIRECTS);
    } else {
        out->status = 0;
        out->truncated = 0;
        free(out->body); /* a body cut by the network is not a robots.txt */
        out->body = NULL;
        out->len = 0;
        snprintf(out->error, sizeof out->error, "%.60s%s%.180s", curl_easy_strerror(cc),
                 errbuf[0] ? ": " : "", errbuf);
    }
    curl_easy_cleanup(e);
    return CRAWL_OK;

fail:
    curl_easy_cleanup(e);
    crawl_robots_outcome_release(out);
    return rc;
}

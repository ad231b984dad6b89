/*
 * The fetcher: many HTTP transfers at once on one libcurl multi handle, driven by the
 * crawl loop's thread (https://curl.se/libcurl/c/libcurl-multi.html). One multi handle
 * means one connection cache and one DNS cache for every transfer: connections are reused
 * (keep-alive, and HTTP/2 multiplexing where a TLS server offers it), capped in all
 * (CURLMOPT_MAX_TOTAL_CONNECTIONS = concurrency) and per host
 * (CURLMOPT_MAX_HOST_CONNECTIONS = per_host).
 *
 * Each transfer: http and https only; redirects are NOT followed here (the crawl loop
 * follows them itself, so scope and robots.txt are checked at every hop); connect, total
 * and low-speed timeouts; Accept-Encoding gzip, deflate, br, zstd with curl's decoding
 * turned off, so the body is kept exactly as the server coded it (what a WARC record must hold)
 * and decoded later by the parser; a body cap checked in the write callback (and
 * CURLOPT_MAXFILESIZE for an announced Content-Length); for page fetches, the
 * Content-Type is checked as soon as the headers are in, and a 2xx response that is not
 * HTML is aborted there ("filtered") before its body is downloaded.
 *
 * Page requisites (CRAWL_FETCH_REQUISITE) are fetched as pages, but of any type.
 * robots.txt fetches (CRAWL_FETCH_ANY) differ: any type, redirects followed (up to
 * CRAWL_ROBOTS_MAX_REDIRECTS, RFC 9309), decoded by curl (so they offer only the codings
 * this libcurl was built with), cut at CRAWL_ROBOTS_MAX_BYTES.
 *
 * A response is kept as one buffer: the status line and headers, then the body, so that
 * it can be archived and parsed as one HTTP message. Transfer-Encoding is renamed
 * X-Crawler-Transfer-Encoding in the kept head, since curl has already removed the
 * chunked coding (the convention of warcprox and pywb for re-coded captures).
 */
#include "crawler/crawl.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define FETCH_MAX_HEAD (256u * 1024)   /* status line and headers of one response */
#define FETCH_MAX_REQUEST (64u * 1024) /* the request head we keep for the WARC */

/* libcurl's answer to a header line over CURL_MAX_HTTP_HEADER: CURLE_OUT_OF_MEMORY before
 * 8.6.0, CURLE_TOO_LARGE since */
#if LIBCURL_VERSION_NUM >= 0x080600
#define HEAD_LINE_TOO_LONG(cc) ((cc) == CURLE_OUT_OF_MEMORY || (cc) == CURLE_TOO_LARGE)
#else
#define HEAD_LINE_TOO_LONG(cc) ((cc) == CURLE_OUT_OF_MEMORY)
#endif

enum abort_reason {
    ABORT_NONE = 0,
    ABORT_FILTERED,
    ABORT_TOOLARGE,
    ABORT_HEAD,
    ABORT_NOMEM,
    ABORT_BUDGET, /* the memory budget: this response alone is over it, or it was the
                   * largest of transfers that all waited for room */
};

struct transfer {
    struct crawl_fetcher *fx;
    CURL *easy;
    struct curl_slist *headers;
    struct crawl_response *r;
    size_t cap;     /* of r->data */
    size_t req_cap; /* of r->request */
    int head_done;  /* the final response's empty line was seen */
    enum abort_reason abort;
    int paused; /* waiting for room in the memory budget (CURL_WRITEFUNC_PAUSE) */
    char errbuf[CURL_ERROR_SIZE];
    struct transfer *next, *prev; /* the active list */
};

/* A response as the fetcher allocates it: the public part first (a crawl_response * the
 * caller holds is this struct's address), then what only the fetcher uses. */
struct response {
    struct crawl_response pub;
    struct crawl_mem *mem; /* data's bytes are mem_held of this budget, given back by */
    size_t mem_held;       /* crawl_response_free() */
    struct response *next; /* the fetcher's list of finished transfers; NULL once handed out */
};
#define PRIV(r) ((struct response *)(void *)(r))

struct crawl_fetcher {
    struct crawl_fetcher_opts opts;
    CURLM *multi;
    struct transfer *active;
    unsigned n_active;
    struct response *done_head, *done_tail;
    uint64_t bytes;
    unsigned n_paused;
    uint64_t resumed_at; /* the budget's gives count when paused transfers were last resumed */
};

double crawl_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void crawl_response_free(struct crawl_response *r)
{
    if (!r)
        return;
    crawl_mem_give(PRIV(r)->mem, PRIV(r)->mem_held);
    free(r->url);
    free(r->data);
    free(r->request);
    free(r->content_type);
    free(r->location);
    free(r->content_encoding);
    free(r->final_url);
    free(PRIV(r));
}

/* ---- callbacks (run inside curl_multi_perform) ---- */

/* Room for need bytes (+ 1 for a NUL) within limit: 0, -1 over the limit, -2 no memory. */
static int grow(char **buf, size_t *cap, size_t need, size_t limit)
{
    if (need <= *cap)
        return 0;
    if (need > limit)
        return -1;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    if (n > limit)
        n = limit;
    char *p = realloc(*buf, n + 1);
    if (!p)
        return -2;
    *buf = p;
    *cap = n;
    return 0;
}

/* grow() for a response's data, with the new bytes taken from the budget first:
 * 0, -1 over the limit, -2 no memory, -3 no room in the budget (nothing changed). */
static int grow_data(struct transfer *t, size_t need, size_t limit)
{
    struct crawl_response *r = t->r;
    if (need <= t->cap)
        return 0;
    if (need > limit)
        return -1;
    size_t n = t->cap ? t->cap : 4096;
    while (n < need)
        n *= 2;
    if (n > limit)
        n = limit;
    size_t more = n - t->cap + (t->cap ? 0 : 1); /* the NUL byte with the first buffer */
    struct crawl_mem_stats ms;
    crawl_mem_get(PRIV(r)->mem, &ms);
    if (crawl_mem_take_leaving(PRIV(r)->mem, more, CRAWL_MEM_DECODE_SHARE(ms.limit)) != CRAWL_OK)
        return -3;
    char *p = realloc(r->data, n + 1);
    if (!p) {
        crawl_mem_give(PRIV(r)->mem, more);
        return -2;
    }
    r->data = p;
    PRIV(r)->mem_held += more;
    t->cap = n;
    return 0;
}

/* Whether need bytes of data could ever fit the budget (with nothing else held). */
static int fits_budget(const struct transfer *t, size_t need)
{
    struct crawl_mem_stats ms;
    crawl_mem_get(PRIV(t->r)->mem, &ms);
    return !PRIV(t->r)->mem || need + 1 <= ms.limit - CRAWL_MEM_DECODE_SHARE(ms.limit);
}

static char *dup_trim(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Is "name:" the start of line[0..n)? Sets *value to the text after the colon. */
static int header_is(const char *line, size_t n, const char *name, const char **value, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
        return 0;
    *value = line + k + 1;
    *vlen = n - k - 1;
    return 1;
}

static int is_html_type(const char *ct)
{
    if (!ct || !*ct)
        return 1; /* no Content-Type: let the parser sniff it */
    return crawl_mime_is_html(ct);
}

static void replace(char **field, char *value)
{
    free(*field);
    *field = value;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct transfer *t = userdata;
    struct crawl_response *r = t->r;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
        /* a new response (after 1xx, or a proxy's CONNECT): start the head again */
        r->head_len = r->len = 0;
        t->head_done = 0;
        replace(&r->content_type, NULL);
        replace(&r->location, NULL);
        replace(&r->content_encoding, NULL);
    }
    const char *v;
    size_t vlen;
    static const char renamed[] = "X-Crawler-";
    int rename = header_is(ptr, n, "transfer-encoding", &v, &vlen);
    int g = grow_data(t, r->len + n + (rename ? sizeof renamed : 0), FETCH_MAX_HEAD);
    if (g != 0) {
        /* a header callback cannot pause: no room for the head is a failure (rare: the
         * crawl starts a transfer only with room for more than its first 4 KiB) */
        t->abort = g == -1 ? ABORT_HEAD : g == -3 ? ABORT_BUDGET : ABORT_NOMEM;
        return 0;
    }
    if (rename) {
        memcpy(r->data + r->len, renamed, sizeof renamed - 1);
        r->len += sizeof renamed - 1;
    }
    memcpy(r->data + r->len, ptr, n);
    r->len += n;
    r->head_len = r->len;
    if (header_is(ptr, n, "content-type", &v, &vlen))
        replace(&r->content_type, dup_trim(v, vlen));
    else if (header_is(ptr, n, "location", &v, &vlen))
        replace(&r->location, dup_trim(v, vlen));
    else if (header_is(ptr, n, "content-encoding", &v, &vlen))
        replace(&r->content_encoding, dup_trim(v, vlen));

    if ((n == 2 && ptr[0] == '\r' && ptr[1] == '\n') || (n == 1 && ptr[0] == '\n')) {
        long status = 0;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 100 && status < 200)
            return n; /* an interim response; the real one follows */
        t->head_done = 1;
        r->status = status;
        if (r->kind == CRAWL_FETCH_PAGE && status >= 200 && status < 300 &&
            !is_html_type(r->content_type)) { /* (a requisite may be of any type) */
            t->abort = ABORT_FILTERED;
            return 0;
        }
    }
    return n;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct transfer *t = userdata;
    struct crawl_response *r = t->r;
    size_t n = size * nmemb;
    size_t max = r->kind != CRAWL_FETCH_ANY ? t->fx->opts.max_body : CRAWL_ROBOTS_MAX_BYTES;
    if (r->len - r->head_len + n > max) {
        if (r->kind == CRAWL_FETCH_ANY) {
            /* robots.txt: keep the first max bytes (the parser reads no more) */
            size_t room = max - (r->len - r->head_len);
            if (grow_data(t, r->len + room, r->head_len + max) == 0) {
                memcpy(r->data + r->len, ptr, room);
                r->len += room;
            }
        }
        t->abort = ABORT_TOOLARGE;
        return 0;
    }
    if (r->len == r->head_len && r->len + n > t->cap) {
        /* the first piece of the body: room for all of an announced Content-Length at
         * once (the body then lands in one buffer without doubling and copying) */
        curl_off_t cl = -1;
        if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK &&
            cl > 0 && (uint64_t)cl <= max) {
            int g = grow_data(t, r->head_len + (size_t)cl, r->head_len + max);
            if (g == -3 && fits_budget(t, r->head_len + (size_t)cl)) {
                /* wait for room for all of it, holding only the head meanwhile */
                t->paused = 1;
                t->fx->n_paused++;
                return CURL_WRITEFUNC_PAUSE;
            }
        }
        /* (another failure here is only a missed shortcut: the grow below decides) */
    }
    int g = grow_data(t, r->len + n, r->head_len + max);
    if (g == -3 && fits_budget(t, r->len + n)) {
        /* HOW IT WORKS (the memory budget): no room now. libcurl keeps this piece and
         * hands it again after curl_easy_pause(CURLPAUSE_CONT), which crawl_fetcher_run()
         * calls once the budget got bytes back; the transfer holds what it has meanwhile.
         * If every transfer waits and nothing else can give bytes back, the crawl fails
         * the one holding the most (crawl_fetcher_fail_paused). */
        t->paused = 1;
        t->fx->n_paused++;
        return CURL_WRITEFUNC_PAUSE;
    }
    if (g != 0) {
        t->abort = g == -3 ? ABORT_BUDGET : ABORT_TOOLARGE;
        return 0;
    }
    memcpy(r->data + r->len, ptr, n);
    r->len += n;
    t->fx->bytes += n;
    return n;
}

static int on_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *userdata)
{
    (void)easy;
    struct transfer *t = userdata;
    struct crawl_response *r = t->r;
    if (type != CURLINFO_HEADER_OUT)
        return 0;
    /* keep the last request head sent (one per transfer, as redirects are not followed) */
    r->request_len = 0;
    if (grow(&r->request, &t->req_cap, size, FETCH_MAX_REQUEST) == 0) {
        memcpy(r->request, data, size);
        r->request_len = size;
        r->request[size] = '\0';
    }
    return 0;
}

/* ---- the fetcher ---- */

enum crawl_code crawl_fetcher_new(const struct crawl_fetcher_opts *opts, struct crawl_fetcher **out)
{
    *out = NULL;
    struct crawl_fetcher *fx = calloc(1, sizeof *fx);
    if (!fx)
        return CRAWL_ENOMEM;
    fx->opts = *opts;
    if (fx->opts.concurrency == 0)
        fx->opts.concurrency = CRAWL_DEFAULT_CONCURRENCY;
    if (fx->opts.per_host == 0)
        fx->opts.per_host = 1;
    if (!(fx->opts.connect_timeout > 0))
        fx->opts.connect_timeout = CRAWL_DEFAULT_CONNECT_TIMEOUT;
    if (!(fx->opts.timeout > 0))
        fx->opts.timeout = CRAWL_DEFAULT_TIMEOUT;
    if (fx->opts.low_speed_bytes <= 0)
        fx->opts.low_speed_bytes = CRAWL_DEFAULT_LOW_SPEED_BYTES;
    if (fx->opts.low_speed_time <= 0)
        fx->opts.low_speed_time = CRAWL_DEFAULT_LOW_SPEED_TIME;
    if (fx->opts.max_body == 0)
        fx->opts.max_body = CRAWL_DEFAULT_MAX_BODY;
    if (!fx->opts.user_agent)
        fx->opts.user_agent = CRAWL_DEFAULT_USER_AGENT;
    fx->multi = curl_multi_init();
    if (!fx->multi) {
        free(fx);
        return CRAWL_ECURL;
    }
    if (curl_multi_setopt(fx->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)fx->opts.concurrency) !=
            CURLM_OK ||
        curl_multi_setopt(fx->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)fx->opts.per_host) !=
            CURLM_OK ||
        curl_multi_setopt(fx->multi, CURLMOPT_MAXCONNECTS, (long)fx->opts.concurrency * 2) !=
            CURLM_OK ||
        curl_multi_setopt(fx->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX) != CURLM_OK) {
        curl_multi_cleanup(fx->multi);
        free(fx);
        return CRAWL_ECURL;
    }
    *out = fx;
    return CRAWL_OK;
}

static void transfer_free(struct transfer *t)
{
    if (!t)
        return;
    if (t->easy)
        curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    crawl_response_free(t->r);
    free(t);
}

static void unlink_active(struct crawl_fetcher *fx, struct transfer *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        fx->active = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
    fx->n_active--;
}

void crawl_fetcher_free(struct crawl_fetcher *fx)
{
    if (!fx)
        return;
    while (fx->active) {
        struct transfer *t = fx->active;
        curl_multi_remove_handle(fx->multi, t->easy);
        unlink_active(fx, t);
        transfer_free(t);
    }
    while (fx->done_head) {
        struct response *r = fx->done_head;
        fx->done_head = r->next;
        crawl_response_free(&r->pub);
    }
    curl_multi_cleanup(fx->multi);
    free(fx);
}

#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (curl_easy_setopt(t->easy, opt, val) != CURLE_OK)                                       \
            goto fail;                                                                             \
    } while (0)

enum crawl_code crawl_fetcher_add(struct crawl_fetcher *fx, const char *url,
                                  enum crawl_fetch_kind kind, void *userdata)
{
    return crawl_fetcher_add_within(fx, url, kind, 0, userdata);
}

enum crawl_code crawl_fetcher_add_within(struct crawl_fetcher *fx, const char *url,
                                         enum crawl_fetch_kind kind, double timeout, void *userdata)
{
    enum crawl_code rc = CRAWL_ENOMEM;
    struct transfer *t = calloc(1, sizeof *t);
    if (!t)
        return CRAWL_ENOMEM;
    t->fx = fx;
    struct response *resp = calloc(1, sizeof *resp);
    if (!resp)
        goto fail;
    t->r = &resp->pub;
    t->r->url = strdup(url);
    if (!t->r->url)
        goto fail;
    t->r->kind = kind;
    t->r->userdata = userdata;
    PRIV(t->r)->mem = fx->opts.mem;
    int g = grow_data(t, 1, FETCH_MAX_HEAD);
    if (g != 0) {
        rc = g == -3 ? CRAWL_ETOOLARGE : CRAWL_ENOMEM; /* -3: no room in opts.mem */
        goto fail;
    }
    t->headers = curl_slist_append(
        NULL, kind == CRAWL_FETCH_PAGE ? "Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"
              : kind == CRAWL_FETCH_REQUISITE ? "Accept: */*"
                                              : "Accept: text/plain,*/*;q=0.5");
    if (!t->headers)
        goto fail;
    rc = CRAWL_ECURL;
    t->easy = curl_easy_init();
    if (!t->easy)
        goto fail;
    const struct crawl_fetcher_opts *o = &fx->opts;
    SET(CURLOPT_URL, url);
    SET(CURLOPT_PRIVATE, t);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    if (kind != CRAWL_FETCH_ANY) {
        /* the codings crawler/httpblock.c decodes; the body is stored as sent */
        SET(CURLOPT_ACCEPT_ENCODING, "gzip, deflate, br, zstd");
        SET(CURLOPT_FOLLOWLOCATION, 0L);
        SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
    } else {
        /* robots.txt: RFC 9309 2.3.1.2 follows up to 5 redirects; decoded, not archived */
        SET(CURLOPT_FOLLOWLOCATION, 1L);
        SET(CURLOPT_MAXREDIRS, (long)CRAWL_ROBOTS_MAX_REDIRECTS);
        SET(CURLOPT_ACCEPT_ENCODING, ""); /* "": every coding this libcurl decodes */
        SET(CURLOPT_HTTP_CONTENT_DECODING, 1L);
    }
    SET(CURLOPT_USERAGENT, o->user_agent);
    if (o->ca_file)
        SET(CURLOPT_CAINFO, o->ca_file);
    SET(CURLOPT_HTTPHEADER, t->headers);
    double total = o->timeout, connect = o->connect_timeout;
    if (timeout > 0 && timeout < total)
        total = timeout;
    if (connect > total)
        connect = total;
    /* at least 1 ms: 0 would mean no timeout at all */
    SET(CURLOPT_CONNECTTIMEOUT_MS, connect * 1000 < 1 ? 1L : (long)(connect * 1000));
    SET(CURLOPT_TIMEOUT_MS, total * 1000 < 1 ? 1L : (long)(total * 1000));
    SET(CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    SET(CURLOPT_LOW_SPEED_TIME, o->low_speed_time);
    if (kind != CRAWL_FETCH_ANY)
        SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_body);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    SET(CURLOPT_DEBUGFUNCTION, on_debug);
    SET(CURLOPT_DEBUGDATA, t);
    SET(CURLOPT_VERBOSE, 1L);
    SET(CURLOPT_ERRORBUFFER, t->errbuf);
    t->r->start = crawl_clock();
    t->r->date = (int64_t)time(NULL);
    if (curl_multi_add_handle(fx->multi, t->easy) != CURLM_OK)
        goto fail;
    t->next = fx->active;
    if (fx->active)
        fx->active->prev = t;
    fx->active = t;
    fx->n_active++;
    return CRAWL_OK;
fail:
    transfer_free(t);
    return rc;
}

/* Moves a finished transfer's response to the done list, with its outcome in words. */
static void finish(struct crawl_fetcher *fx, struct transfer *t, CURLcode cc, int aborted)
{
    struct crawl_response *r = t->r;
    t->r = NULL;
    char *ip = NULL;
    if (curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip)
        snprintf(r->ip, sizeof r->ip, "%s", ip);
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 || r->status == 0)
        r->status = status;
    r->end = crawl_clock();
    r->data[r->len] = '\0';
    if (r->kind == CRAWL_FETCH_ANY) { /* robots.txt: where the redirects led */
        long redirects = 0;
        char *eff = NULL;
        curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_COUNT, &redirects);
        r->redirects = (unsigned)redirects;
        if (curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff)
            r->final_url = strdup(eff); /* (NULL when out of memory: the URL is unknown) */
    }
    const char *detail = t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc);
    if (aborted) {
        r->result = CRAWL_FETCH_ABORTED;
        snprintf(r->error, sizeof r->error, "aborted: the crawl was stopped");
    } else if (t->abort == ABORT_FILTERED ||
               (cc == CURLE_FILESIZE_EXCEEDED && r->kind == CRAWL_FETCH_PAGE && r->status >= 200 &&
                r->status < 300 && !is_html_type(r->content_type))) {
        r->result = CRAWL_FETCH_FILTERED;
        snprintf(r->error, sizeof r->error, "not html: %.200s",
                 r->content_type ? r->content_type : "");
    } else if (t->abort == ABORT_TOOLARGE || cc == CURLE_FILESIZE_EXCEEDED) {
        r->result = CRAWL_FETCH_TOOLARGE;
        snprintf(r->error, sizeof r->error, "too large: body over %zu bytes",
                 r->kind == CRAWL_FETCH_ANY ? (size_t)CRAWL_ROBOTS_MAX_BYTES : fx->opts.max_body);
    } else if (t->abort == ABORT_HEAD) {
        r->result = CRAWL_FETCH_FAILED;
        snprintf(r->error, sizeof r->error, "response headers over %u bytes (the header cap)",
                 FETCH_MAX_HEAD);
    } else if (HEAD_LINE_TOO_LONG(cc) && !t->head_done && t->abort == ABORT_NONE) {
        /* libcurl holds one header line in a buffer capped at CURL_MAX_HTTP_HEADER; a longer
         * line is its "Out of memory" (a real shortage there is far less likely) */
        r->result = CRAWL_FETCH_FAILED;
        snprintf(r->error, sizeof r->error,
                 "a response header line over %d bytes (libcurl's header line cap)",
                 CURL_MAX_HTTP_HEADER);
    } else if (t->abort == ABORT_BUDGET) {
        struct crawl_mem_stats ms;
        crawl_mem_get(PRIV(r)->mem, &ms);
        r->result = CRAWL_FETCH_FAILED;
        snprintf(r->error, sizeof r->error,
                 "over the memory budget of %zu bytes for response buffers and decoded "
                 "bodies held at once (--max-memory)",
                 ms.limit);
    } else if (t->abort == ABORT_NOMEM) {
        r->result = CRAWL_FETCH_FAILED;
        snprintf(r->error, sizeof r->error, "out of memory holding the response headers");
    } else if (cc == CURLE_TOO_MANY_REDIRECTS) {
        r->result = CRAWL_FETCH_FAILED;
        r->too_many_redirects = 1;
        snprintf(r->error, sizeof r->error, "too many redirects");
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        r->result = CRAWL_FETCH_TIMEOUT;
        snprintf(r->error, sizeof r->error, "timeout: %.200s", detail);
    } else if (cc != CURLE_OK) {
        r->result = CRAWL_FETCH_FAILED;
        snprintf(r->error, sizeof r->error, "%.250s", detail);
    } else {
        r->result = CRAWL_FETCH_DONE;
        r->error[0] = '\0';
    }
    /* strip a trailing newline curl puts in some error buffers */
    size_t el = strlen(r->error);
    while (el > 0 && (r->error[el - 1] == '\n' || r->error[el - 1] == '\r'))
        r->error[--el] = '\0';
    PRIV(r)->next = NULL;
    if (fx->done_tail)
        fx->done_tail->next = PRIV(r);
    else
        fx->done_head = PRIV(r);
    fx->done_tail = PRIV(r);
    if (t->paused)
        fx->n_paused--;
    curl_multi_remove_handle(fx->multi, t->easy);
    unlink_active(fx, t);
    transfer_free(t);
}

static void collect(struct crawl_fetcher *fx)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(fx->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct transfer *t = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        if (t)
            finish(fx, t, m->data.result, 0);
    }
}

/* Paused transfers try again once the budget got bytes back since the last try (each one
 * that still finds no room pauses again; no spinning while nothing is given back). */
static void resume_paused(struct crawl_fetcher *fx)
{
    if (fx->n_paused == 0)
        return;
    struct crawl_mem_stats ms;
    crawl_mem_get(fx->opts.mem, &ms);
    if (ms.gives == fx->resumed_at)
        return;
    fx->resumed_at = ms.gives;
    for (struct transfer *t = fx->active; t; t = t->next) {
        if (!t->paused)
            continue;
        t->paused = 0;
        fx->n_paused--;
        /* may call on_body at once, which may pause it again */
        curl_easy_pause(t->easy, CURLPAUSE_CONT);
    }
}

unsigned crawl_fetcher_paused(const struct crawl_fetcher *fx)
{
    return fx->n_paused;
}

void crawl_fetcher_fail_paused(struct crawl_fetcher *fx)
{
    struct crawl_mem_stats ms;
    crawl_mem_get(fx->opts.mem, &ms);
    if (ms.gives != fx->resumed_at) {
        /* bytes came back since the last try: the paused transfers try again first */
        resume_paused(fx);
        return;
    }
    struct transfer *big = NULL;
    for (struct transfer *t = fx->active; t; t = t->next)
        if (t->paused && (!big || PRIV(t->r)->mem_held > PRIV(big->r)->mem_held))
            big = t;
    if (!big)
        return;
    big->abort = ABORT_BUDGET;
    finish(fx, big, CURLE_WRITE_ERROR, 0);
}

enum crawl_code crawl_fetcher_run(struct crawl_fetcher *fx, int timeout_ms)
{
    int running = 0;
    resume_paused(fx);
    if (curl_multi_perform(fx->multi, &running) != CURLM_OK)
        return CRAWL_ECURL;
    collect(fx);
    if (fx->done_head || timeout_ms <= 0)
        return CRAWL_OK;
    if (curl_multi_poll(fx->multi, NULL, 0, timeout_ms, NULL) != CURLM_OK)
        return CRAWL_ECURL;
    if (curl_multi_perform(fx->multi, &running) != CURLM_OK)
        return CRAWL_ECURL;
    collect(fx);
    return CRAWL_OK;
}

struct crawl_response *crawl_fetcher_next(struct crawl_fetcher *fx)
{
    struct response *r = fx->done_head;
    if (!r)
        return NULL;
    fx->done_head = r->next;
    if (!fx->done_head)
        fx->done_tail = NULL;
    r->next = NULL;
    return &r->pub;
}

void crawl_fetcher_wakeup(struct crawl_fetcher *fx)
{
    curl_multi_wakeup(fx->multi);
}

void crawl_fetcher_abort_all(struct crawl_fetcher *fx)
{
    while (fx->active)
        finish(fx, fx->active, CURLE_ABORTED_BY_CALLBACK, 1);
}

unsigned crawl_fetcher_active(const struct crawl_fetcher *fx)
{
    return fx->n_active;
}

uint64_t crawl_fetcher_bytes(const struct crawl_fetcher *fx)
{
    return fx->bytes;
}

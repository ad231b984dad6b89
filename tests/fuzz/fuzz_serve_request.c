/*
 * Fuzz target: what simcrawl serve makes of a request (server/parse.c and server/api.c,
 * which know nothing of libmicrohttpd). The input is
 *     METHOD SP TARGET "\n" CONTENT-TYPE "\n" AUTHORIZATION "\n" BODY
 * (an empty Content-Type or Authorization line: no such header; with an Authorization
 * line the service wants the token "fuzz-token"), run through server__api_begin() and,
 * when it wants the body, server__api_handle() on a filter in memory, as the service does.
 * Checked:
 *  - every reply has a status the service documents and a body that is valid UTF-8 and
 *    ends with a newline (JSON, NDJSON or the metrics text); an error body is
 *    {"error":"..."};
 *  - each line of the body that server__ndjson_line() accepts, written back as JSON by
 *    server__buf_json_str(), is accepted again with the same id and fingerprint;
 *  - percent-decoding the target, then encoding every byte as %XX and decoding again,
 *    gives the same bytes;
 *  - server__bearer_ok() agrees with a plain comparison;
 *  - server__parse_listen() of the first line never reads past it, and its loopback
 *    verdict is stable.
 * A violated property aborts, which the fuzzer reports.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "filter/simcrawl.h"
#include "server/server_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (1u << 20)
#define FUZZ_REOPEN_EVERY 20000 /* inputs between fresh filters (the index grows) */
#define FUZZ_TOKEN "fuzz-token"

static struct simcrawl_filter *filter;
static struct server_metrics metrics;
static unsigned runs;

static struct simcrawl_filter *the_filter(void)
{
    if (filter && ++runs % FUZZ_REOPEN_EVERY == 0) {
        (void)simcrawl_filter_close(filter);
        filter = NULL;
    }
    if (!filter) {
        if (simcrawl_filter_open(&filter, NULL, 3) != 0)
            abort();
        server__metrics_init(&metrics);
    }
    return filter;
}

/* The next line of s[*pos..n) (without its '\n'), NUL-terminated in a copy. */
static char *line(const char *s, size_t n, size_t *pos)
{
    const char *nl = memchr(s + *pos, '\n', n - *pos);
    size_t len = nl ? (size_t)(nl - (s + *pos)) : n - *pos;
    char *c = malloc(len + 1);
    if (!c)
        abort();
    memcpy(c, s + *pos, len);
    c[len] = '\0';
    *pos += len + (nl != NULL);
    return c;
}

static void check_reply(const struct server_reply *r)
{
    static const unsigned ok[] = {200, 400, 401, 404, 405, 413, 415, 500, 503};
    size_t i = 0;
    while (i < sizeof ok / sizeof ok[0] && ok[i] != r->status)
        i++;
    if (i == sizeof ok / sizeof ok[0] || !r->content_type) {
        fprintf(stderr, "status %u\n", r->status);
        abort();
    }
    if (r->len == 0) /* a bulk check of no lines */
        return;
    if (!r->body || r->body[r->len - 1] != '\n' || !server__utf8_valid(r->body, r->len) ||
        strlen(r->body) != r->len)
        abort();
    if (r->status != 200 && (strncmp(r->body, "{\"error\":\"", 10) != 0 ||
                             memcmp(r->body + r->len - 3, "\"}\n", 3) != 0))
        abort();
}

/* Each accepted NDJSON line round-trips through the JSON writer. */
static void check_lines(const char *body, size_t n)
{
    for (size_t pos = 0; pos < n;) {
        const char *s = body + pos;
        const char *nl = memchr(s, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - s) : n - pos;
        pos += len + (nl != NULL);
        char why[256], *id, *id2;
        uint64_t fp, fp2;
        if (server__ndjson_line(s, len, &id, &fp, why, sizeof why) != 0) {
            if (!why[0] || strlen(why) >= sizeof why)
                abort();
            continue;
        }
        struct server_buf b;
        server__buf_init(&b, (size_t)SERVER_ID_MAX_BYTES * 6 + 64);
        server__buf_puts(&b, "{\"fingerprint\":");
        server__buf_json_fp(&b, fp);
        server__buf_puts(&b, ",\"id\":");
        server__buf_json_str(&b, id, strlen(id));
        server__buf_puts(&b, "}");
        if (b.failed || server__ndjson_line(b.p, b.len, &id2, &fp2, why, sizeof why) != 0 ||
            strcmp(id, id2) != 0 || fp != fp2) {
            fprintf(stderr, "round trip: %s\n", b.p ? b.p : "(failed)");
            abort();
        }
        free(id2);
        free(id);
        server__buf_release(&b);
    }
}

static void check_decode(const char *s, size_t n)
{
    char *out = malloc(n + 1), *enc = malloc(3 * n + 1), *again = malloc(3 * n + 1);
    if (!out || !enc || !again)
        abort();
    long m = server__pct_decode(s, n, 0, out);
    if (m >= 0) {
        if ((size_t)m > n)
            abort();
        for (long i = 0; i < m; i++)
            snprintf(enc + 3 * i, 4, "%%%02X", (unsigned char)out[i]);
        long m2 = server__pct_decode(enc, 3 * (size_t)m, 1, again);
        if (m2 != m || memcmp(out, again, (size_t)m) != 0)
            abort();
    }
    free(out);
    free(enc);
    free(again);
}

/* What server__bearer_ok() must say, written the plain way (no constant time). */
static int bearer_ref(const char *h)
{
    if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
        return 0;
    const char *g = h + 6 + strspn(h + 6, " \t");
    size_t n = strlen(g);
    while (n > 0 && (g[n - 1] == ' ' || g[n - 1] == '\t'))
        n--;
    return n == strlen(FUZZ_TOKEN) && memcmp(g, FUZZ_TOKEN, n) == 0;
}

static void check_misc(const char *first, const char *auth)
{
    if (server__bearer_ok(auth, FUZZ_TOKEN, strlen(FUZZ_TOKEN)) != bearer_ref(auth))
        abort();
    struct sockaddr_storage ss;
    socklen_t len;
    if (server__parse_listen(first, &ss, &len) == 0) {
        int lb = server__addr_is_loopback((struct sockaddr *)&ss);
        if (lb != server__addr_is_loopback((struct sockaddr *)&ss) || len > sizeof ss ||
            (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    const char *s = (const char *)data;
    size_t pos = 0;
    char *first = line(s, size, &pos), *ct = line(s, size, &pos), *auth = line(s, size, &pos);
    char *sp = strchr(first, ' ');
    const char *method = first, *target = sp ? sp + 1 : "";
    if (sp)
        *sp = '\0';
    struct server_api a = {the_filter(),
                           auth[0] ? FUZZ_TOKEN : NULL,
                           strlen(FUZZ_TOKEN),
                           4096,
                           NULL,
                           0,
                           &metrics,
                           NULL,
                           NULL};
    struct server_request r = {
        method, target, strlen(target), ct[0] ? ct : NULL, auth[0] ? auth : NULL, 0, 0, NULL, 0};
    struct server_reply rep;
    if (server__api_begin(&a, &r, &rep) == 0) {
        r.body = size - pos ? s + pos : "";
        r.body_len = size - pos;
        if (r.body_len > a.max_body) {
            server__reply_error(&rep, 413, "over");
        } else
            server__api_handle(&a, &r, &rep);
    }
    check_reply(&rep);
    server__metrics_record(&metrics, rep.endpoint, rep.status, 0.001);
    server__reply_release(&rep);
    check_lines(s + pos, size - pos);
    check_decode(target, strlen(target));
    if (sp)
        *sp = ' ';
    check_misc(first, auth);
    free(first);
    free(ct);
    free(auth);
    return 0;
}

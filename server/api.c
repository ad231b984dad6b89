/*
 * The endpoints of the HTTP API (docs/HTTP-API.md, the contract): a request in (method,
 * raw target, the headers that matter, the body), a reply out (status, JSON), on the one
 * libsimcrawl filter. No libmicrohttpd type appears here, so the fuzz target runs the
 * same code as the service.
 *
 * A request is judged in two steps. server__api_begin() runs as soon as the headers are
 * in, before a byte of the body is read: the bearer token (401), the path (404), the
 * method (405 with Allow), the Content-Type (415), the declared length (413) and the
 * query string (400), so that a request that will fail costs no upload. Then
 * server__api_handle() answers the whole request. Every error is {"error": "..."} naming
 * what was wrong. Decisions are named as in the crawl log (new, near-duplicate,
 * exact-duplicate, too-little-text, filtered).
 */
#include "server/server_int.h"
#include "filter/simcrawl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TYPE_JSON "application/json"
#define TYPE_NDJSON "application/x-ndjson"
#define TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define NEIGHBORS_LIMIT_DEFAULT 100u               /* GET /v1/neighbors: answers by default */
#define NEIGHBORS_LIMIT_MAX 10000u                 /* ... and at most */
#define PARAMS_MAX 4                               /* parameters an endpoint takes */
#define PARAM_NAME_MAX 32                          /* bytes of a parameter name we look at */
#define REPLY_SMALL_MAX ((size_t)16 * 1024 * 1024) /* a reply of one document or less */
/* the most a bulk reply may hold: each answer line repeats its id and names another */
#define REPLY_BULK_MAX(max_body) ((max_body)*4 + REPLY_SMALL_MAX)
#define ERROR_MAX (SERVER_ID_MAX_BYTES * 6 + 1024) /* an error message, JSON-escaped */

double server__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void server__reply_release(struct server_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

/* Sets the body of r from b, or a 500/413 when b failed. */
static void reply_take(struct server_reply *r, unsigned status, const char *type,
                       struct server_buf *b)
{
    if (b->failed) {
        int full = b->failed == SERVER_BUF_FULL;
        size_t max = b->max;
        server__buf_release(b);
        if (full)
            server__reply_error(r, 413, "the answer would be over %zu bytes: send fewer lines",
                                max);
        else
            server__reply_error(r, 503, "out of memory");
        return;
    }
    server__reply_release(r);
    r->status = status;
    r->content_type = type;
    r->body = server__buf_take(b, &r->len);
}

void server__reply_error(struct server_reply *r, unsigned status, const char *fmt, ...)
{
    struct server_buf msg, b;
    server__buf_init(&msg, ERROR_MAX);
    server__buf_init(&b, ERROR_MAX + 32);
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof small)
        server__buf_add(&msg, small, (size_t)n);
    else if (n >= 0) {
        server__buf_reserve(&msg, (size_t)n + 1);
        if (!msg.failed) {
            va_start(ap, fmt);
            vsnprintf(msg.p, (size_t)n + 1, fmt, ap);
            va_end(ap);
            msg.len = (size_t)n;
        }
    }
    server__buf_puts(&b, "{\"error\":");
    server__buf_json_str(&b, msg.p ? msg.p : "error", msg.p ? msg.len : 5);
    server__buf_puts(&b, "}\n");
    server__buf_release(&msg);
    server__reply_release(r);
    r->status = status;
    r->content_type = TYPE_JSON;
    if (b.failed) { /* out of memory: a static body would need another owner; say less */
        server__buf_release(&b);
        r->status = 503;
        r->body = strdup("{\"error\":\"out of memory\"}\n");
        r->len = r->body ? strlen(r->body) : 0;
        return;
    }
    r->body = server__buf_take(&b, &r->len);
}

/* ---- parameters ---- */

/*
 * The query string's parameters for an endpoint that takes the names allowed[0..n):
 * values[i] the percent-decoded value of allowed[i] (caller frees), NULL when absent. An
 * unknown name, a name given twice, a bad escape or a NUL byte (%00: the library's ids are
 * C strings, and an id cut there would be another document) is a 400 in out; returns 0 or
 * -1.
 */
static int params_parse(const char *q, size_t qn, const char *const *allowed, size_t n,
                        char **values, struct server_reply *out)
{
    struct server_param p;
    size_t pos = 0;
    memset(values, 0, n * sizeof *values);
    while (server__query_next(q, qn, &pos, &p)) {
        char name[PARAM_NAME_MAX + 1];
        long nl = -1;
        if (p.name_len <= PARAM_NAME_MAX)
            nl = server__pct_decode(p.name, p.name_len, 1, name);
        size_t i = 0;
        while (nl >= 0 && i < n &&
               !(strlen(allowed[i]) == (size_t)nl && strcmp(name, allowed[i]) == 0))
            i++;
        if (nl < 0 || i == n) {
            server__reply_error(
                out, 400, "unknown parameter \"%.*s\" (this endpoint takes %s%s%s%s%s)",
                (int)(p.name_len > 64 ? 64 : p.name_len), p.name, allowed[0], n > 1 ? ", " : "",
                n > 1 ? allowed[1] : "", n > 2 ? ", " : "", n > 2 ? allowed[2] : "");
            goto fail;
        }
        if (values[i]) {
            server__reply_error(out, 400, "parameter %s given twice", allowed[i]);
            goto fail;
        }
        values[i] = malloc(p.value_len + 1);
        if (!values[i]) {
            server__reply_error(out, 503, "out of memory");
            goto fail;
        }
        long vl = server__pct_decode(p.value, p.value_len, 1, values[i]);
        if (vl < 0) {
            server__reply_error(out, 400, "parameter %s: a '%%' not followed by two hex digits",
                                allowed[i]);
            goto fail;
        }
        if (memchr(values[i], '\0', (size_t)vl)) { /* values are C strings from here on */
            server__reply_error(out, 400, "parameter %s contains a NUL byte (%%00)", allowed[i]);
            goto fail;
        }
    }
    return 0;
fail:
    for (size_t i = 0; i < n; i++) {
        free(values[i]);
        values[i] = NULL;
    }
    return -1;
}

static void params_free(char **values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(values[i]);
}

/* insert=true|false (also 1|0); absent: true. 0, or -1 with a 400 in out. */
static int param_insert(const char *v, unsigned *flags, struct server_reply *out)
{
    *flags = 0;
    if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
        return 0;
    if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
        *flags = SIMCRAWL_CHECK_NO_ADD;
        return 0;
    }
    server__reply_error(out, 400, "insert must be true or false, not \"%.64s\"", v);
    return -1;
}

/* A decimal number in [min, max] (v non-NULL). */
static int param_number(const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
    size_t n = strlen(v);
    if (n == 0 || n > 9 || strspn(v, "0123456789") != n)
        return -1;
    unsigned long x = strtoul(v, NULL, 10);
    if (x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

/* A threshold parameter: a decimal number in [0, 1] (at most 9 characters). 0, or -1. */
static int param_threshold(const char *v, double *out)
{
    size_t n = strlen(v);
    if (n == 0 || n > 9 || strspn(v, "0123456789.") != n)
        return -1;
    char *end;
    double x = strtod(v, &end);
    if (*end || !(x >= 0 && x <= 1))
        return -1;
    *out = x;
    return 0;
}

static int is_minhash(const struct server_api *a)
{
    return strcmp(simcrawl_filter_method(a->f), "minhash") == 0;
}

/* ---- answers ---- */

static const char *decision_name(int d)
{
    static const char *const names[] = {"new", "near-duplicate", "exact-duplicate",
                                        "too-little-text", "filtered"};
    return d >= 0 && (size_t)d < sizeof names / sizeof names[0] ? names[d] : "error";
}

/* One check's answer object (no newline): with the minhash method, the similarity is the
 * signatures' Jaccard estimate (also as "jaccard") and there is no distance. */
static void write_answer(struct server_buf *b, const char *id, int d,
                         const struct simcrawl_match *m, int minhash)
{
    uint64_t fp = simcrawl_match_fingerprint(m);
    const char *dup = simcrawl_match_duplicate_of(m);
    int fingerprinted =
        d == SIMCRAWL_NEW || d == SIMCRAWL_NEAR_DUPLICATE || d == SIMCRAWL_EXACT_DUPLICATE;
    int is_dup = d == SIMCRAWL_NEAR_DUPLICATE || d == SIMCRAWL_EXACT_DUPLICATE;
    server__buf_puts(b, "{\"id\":");
    server__buf_json_str(b, id, strlen(id));
    server__buf_printf(b, ",\"decision\":\"%s\",\"fingerprint\":", decision_name(d));
    if (fingerprinted)
        server__buf_json_fp(b, fp);
    else
        server__buf_puts(b, "null");
    server__buf_puts(b, ",\"duplicate_of\":");
    if (is_dup && dup)
        server__buf_json_str(b, dup, strlen(dup));
    else
        server__buf_puts(b, "null");
    if (is_dup && !minhash)
        server__buf_printf(b, ",\"distance\":%u", simcrawl_match_distance(m));
    else
        server__buf_puts(b, ",\"distance\":null");
    if (is_dup)
        server__buf_printf(b, ",\"similarity\":%.6g", simcrawl_match_similarity(m));
    else
        server__buf_puts(b, ",\"similarity\":null");
    if (minhash && is_dup)
        server__buf_printf(b, ",\"jaccard\":%.6g", simcrawl_match_similarity(m));
    else if (minhash)
        server__buf_puts(b, ",\"jaccard\":null");
    server__buf_printf(b, ",\"added\":%s", simcrawl_match_added(m) ? "true" : "false");
    if (d == SIMCRAWL_NOT_HTML)
        server__buf_puts(b, ",\"reason\":\"not html\"");
    server__buf_puts(b, "}");
}

/* A negative libsimcrawl code as a reply: what the client can do about it. */
static void filter_error(const struct server_api *a, struct server_reply *out, int code,
                         const char *what)
{
    const char *why = simcrawl_strerror(code);
    switch (code) {
    case SIMCRAWL_ETOOLARGE:
        server__reply_error(out, 413, "%s: %s", what, why);
        return;
    case SIMCRAWL_EINVAL:
        server__reply_error(out, 400, "%s: %s", what, why);
        return;
    case SIMCRAWL_ENOMEM:
        server__reply_error(out, 503, "%s: %s; try again", what, why);
        return;
    default:
        server__reply_error(out, 500, "%s: %s", what, why);
        if (a->log) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: %s", what, why);
            a->log(a->log_userdata, msg);
        }
    }
}

/* ---- the endpoints ---- */

static const char *const check_params[] = {"id", "insert"};

/* POST /v1/check?id=ID[&insert=false], a page. */
static void do_check(const struct server_api *a, const struct server_request *r, const char *q,
                     size_t qn, struct server_reply *out)
{
    char *v[2];
    if (params_parse(q, qn, check_params, 2, v, out) != 0)
        return;
    unsigned flags;
    const char *problem;
    struct simcrawl_match *m = NULL;
    if (!v[0]) {
        server__reply_error(out, 400, "id is missing: POST /v1/check?id=URL (percent-encoded)");
        goto done;
    }
    if ((problem = server__id_problem(v[0], strlen(v[0])))) {
        server__reply_error(out, 400, "id %s", problem);
        goto done;
    }
    if (param_insert(v[1], &flags, out) != 0 || !r->body) /* !body: begin's check only */
        goto done;
    m = simcrawl_match_new();
    if (!m) {
        server__reply_error(out, 503, "out of memory");
        goto done;
    }
    int d =
        simcrawl_filter_check_flags(a->f, v[0], r->body, r->body_len, r->content_type, flags, m);
    if (d < 0) {
        filter_error(a, out, d, "check");
        goto done;
    }
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX + SERVER_ID_MAX_BYTES * 12);
    write_answer(&b, v[0], d, m, is_minhash(a));
    server__buf_puts(&b, "\n");
    reply_take(out, 200, TYPE_JSON, &b);
done:
    simcrawl_match_free(m);
    params_free(v, 2);
}

/* The lines of a bulk check, all read before any is checked. */
struct bulk {
    struct bulk_line {
        char *id;
        uint64_t fp;
        size_t line; /* its number in the body, from 1, blank lines counted */
    } * v;
    size_t n, cap;
};

static void bulk_release(struct bulk *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i].id);
    free(k->v);
}

static int bulk_push(struct bulk *k, char *id, uint64_t fp, size_t line)
{
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 64;
        struct bulk_line *nv = realloc(k->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        k->v = nv;
        k->cap = nc;
    }
    k->v[k->n++] = (struct bulk_line){id, fp, line};
    return 0;
}

/* Reads every line of body (blank lines skipped); 0, or -1 with a 400 naming the line. */
static int bulk_read(const char *body, size_t len, struct bulk *k, struct server_reply *out)
{
    size_t line = 0;
    for (size_t pos = 0; pos < len;) {
        const char *s = body + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl != NULL);
        line++;
        if (strspn(s, " \t\r") >= n) /* blank (strspn stops at the '\n' or the end) */
            continue;
        char why[256];
        char *id;
        uint64_t fp;
        if (server__ndjson_line(s, n, &id, &fp, why, sizeof why) != 0) {
            server__reply_error(out, 400, "line %zu: %s; nothing was checked", line, why);
            return -1;
        }
        if (bulk_push(k, id, fp, line) != 0) {
            free(id);
            server__reply_error(out, 503, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* POST /v1/check, application/x-ndjson: {"id","fingerprint"} lines. */
static void do_check_bulk(const struct server_api *a, const struct server_request *r, const char *q,
                          size_t qn, struct server_reply *out)
{
    static const char *const names[] = {"insert"};
    char *v[1];
    if (params_parse(q, qn, names, 1, v, out) != 0)
        return;
    unsigned flags;
    struct bulk k = {0};
    struct simcrawl_match *m = NULL;
    struct server_buf b;
    server__buf_init(&b, REPLY_BULK_MAX(a->max_body));
    if (is_minhash(a)) {
        server__reply_error(out, 400,
                            "this service uses the minhash method, which checks pages, not "
                            "fingerprints: POST each page to /v1/check?id=URL");
        goto done;
    }
    if (param_insert(v[0], &flags, out) != 0 || !r->body ||
        bulk_read(r->body, r->body_len, &k, out) != 0)
        goto done;
    if (!(m = simcrawl_match_new())) {
        server__reply_error(out, 503, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < k.n; i++) {
        const struct bulk_line *l = &k.v[i];
        int d = simcrawl_filter_check_fingerprint(a->f, l->id, l->fp, flags, m);
        if (d < 0) {
            char what[96];
            snprintf(what, sizeof what, "line %zu: check (the lines before it were checked)",
                     l->line);
            filter_error(a, out, d, what);
            goto done;
        }
        write_answer(&b, l->id, d, m, 0);
        server__buf_puts(&b, "\n");
    }
    reply_take(out, 200, TYPE_NDJSON, &b);
done:
    server__buf_release(&b);
    simcrawl_match_free(m);
    bulk_release(&k);
    params_free(v, 1);
}

/* POST /v1/fingerprint, a page: its fingerprint, nothing added. */
static void do_fingerprint(const struct server_request *r, const char *q, size_t qn,
                           struct server_reply *out)
{
    char *v[1];
    static const char *const names[] = {"id"}; /* allowed, unused: a URL to label it */
    if (params_parse(q, qn, names, 1, v, out) != 0)
        return;
    params_free(v, 1);
    if (!r->body)
        return;
    uint64_t fp = 0;
    int rc = simcrawl_fingerprint(r->body, r->body_len, r->content_type, &fp);
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX);
    if (rc == 0) {
        server__buf_puts(&b, "{\"fingerprint\":");
        server__buf_json_fp(&b, fp);
        server__buf_puts(&b, "}\n");
    } else if (rc == SIMCRAWL_TOO_SHORT || rc == SIMCRAWL_NOT_HTML) {
        server__buf_printf(&b, "{\"fingerprint\":null,\"decision\":\"%s\"%s}\n", decision_name(rc),
                           rc == SIMCRAWL_NOT_HTML ? ",\"reason\":\"not html\"" : "");
    } else {
        server__buf_release(&b);
        server__reply_error(out,
                            rc == SIMCRAWL_ETOOLARGE ? 413
                            : rc == SIMCRAWL_ENOMEM  ? 503
                                                     : 500,
                            "fingerprint: %s", simcrawl_strerror(rc));
        return;
    }
    reply_take(out, 200, TYPE_JSON, &b);
}

/* What the neighbours' callback writes into. */
struct hood_out {
    struct server_buf *b;
    size_t n;
};

static int hood_one(void *userdata, const char *id, uint64_t fp, unsigned distance)
{
    struct hood_out *h = userdata;
    server__buf_puts(h->b, h->n++ ? ",{\"id\":" : "{\"id\":");
    server__buf_json_str(h->b, id, strlen(id));
    server__buf_puts(h->b, ",\"fingerprint\":");
    server__buf_json_fp(h->b, fp);
    server__buf_printf(h->b, ",\"distance\":%u}", distance);
    return h->b->failed ? 1 : 0;
}

static int similar_one(void *userdata, const char *id, double similarity)
{
    struct hood_out *h = userdata;
    server__buf_puts(h->b, h->n++ ? ",{\"id\":" : "{\"id\":");
    server__buf_json_str(h->b, id, strlen(id));
    server__buf_printf(h->b, ",\"similarity\":%.6g}", similarity);
    return h->b->failed ? 1 : 0;
}

/* POST /v1/neighbors[?id=URL][&threshold=J][&limit=N], a page: the minhash method's
 * neighbours, most similar first. Called first without the body (the parameters only). */
static void do_neighbors_page(const struct server_api *a, const struct server_request *r,
                              const char *q, size_t qn, struct server_reply *out)
{
    static const char *const names[] = {"id", "threshold", "limit"};
    char *v[3];
    if (params_parse(q, qn, names, 3, v, out) != 0)
        return;
    double t = simcrawl_filter_threshold(a->f);
    unsigned long limit = NEIGHBORS_LIMIT_DEFAULT;
    uint32_t *sig = NULL;
    size_t h = simcrawl_filter_signature_size(a->f);
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX + NEIGHBORS_LIMIT_MAX * (size_t)1024);
    if (!is_minhash(a))
        server__reply_error(out, 400,
                            "this service uses the simhash method: GET "
                            "/v1/neighbors?fingerprint=HEX (POST a page: --method minhash)");
    else if (v[0] && server__id_problem(v[0], strlen(v[0])))
        server__reply_error(out, 400, "id %s", server__id_problem(v[0], strlen(v[0])));
    else if (v[1] && param_threshold(v[1], &t) != 0)
        server__reply_error(out, 400, "threshold must be a Jaccard similarity from 0 to 1");
    else if (v[2] && param_number(v[2], 1, NEIGHBORS_LIMIT_MAX, &limit) != 0)
        server__reply_error(out, 400, "limit must be 1 to %u", NEIGHBORS_LIMIT_MAX);
    else if (!r->body)
        ; /* the parameters are fine: the body next */
    else if (!(sig = malloc(h * sizeof *sig)))
        server__reply_error(out, 503, "out of memory");
    else {
        int rc =
            simcrawl_filter_signature(a->f, v[0], r->body, r->body_len, r->content_type, sig, h);
        if (rc == SIMCRAWL_TOO_SHORT || rc == SIMCRAWL_NOT_HTML) {
            server__buf_printf(&b, "{\"threshold\":%.6g,\"neighbors\":[],\"decision\":\"%s\"%s}\n",
                               t, decision_name(rc),
                               rc == SIMCRAWL_NOT_HTML ? ",\"reason\":\"not html\"" : "");
            reply_take(out, 200, TYPE_JSON, &b);
        } else if (rc < 0)
            filter_error(a, out, rc, "neighbors");
        else {
            struct hood_out ho = {&b, 0};
            server__buf_printf(&b, "{\"threshold\":%.6g,\"neighbors\":[", t);
            rc = simcrawl_filter_neighbors_signature(a->f, sig, h, t, limit, similar_one, &ho);
            server__buf_puts(&b, "]}\n");
            if (rc < 0)
                filter_error(a, out, rc, "neighbors");
            else
                reply_take(out, 200, TYPE_JSON, &b);
        }
    }
    free(sig);
    server__buf_release(&b);
    params_free(v, 3);
}

/* GET /v1/neighbors?fingerprint=HEX[&k=N][&limit=N]. */
static void do_neighbors(const struct server_api *a, const char *q, size_t qn,
                         struct server_reply *out)
{
    static const char *const names[] = {"fingerprint", "k", "limit"};
    char *v[3];
    if (params_parse(q, qn, names, 3, v, out) != 0)
        return;
    if (is_minhash(a)) {
        server__reply_error(out, 400,
                            "this service uses the minhash method: POST the page to "
                            "/v1/neighbors[?threshold=J]");
        params_free(v, 3);
        return;
    }
    uint64_t fp;
    unsigned long k = simcrawl_filter_k(a->f), limit = NEIGHBORS_LIMIT_DEFAULT;
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX + NEIGHBORS_LIMIT_MAX * (size_t)1024);
    if (!v[0])
        server__reply_error(out, 400, "fingerprint is missing: GET /v1/neighbors?fingerprint=HEX");
    else if (server__hex16(v[0], strlen(v[0]), &fp) != 0)
        server__reply_error(out, 400, "fingerprint is not 16 hex digits");
    else if (v[1] && param_number(v[1], 0, 7, &k) != 0)
        server__reply_error(out, 400, "k must be a distance from 0 to 7");
    else if (k > (unsigned long)simcrawl_filter_k(a->f))
        server__reply_error(out, 400, "k %lu is over the index's k (%u)", k,
                            simcrawl_filter_k(a->f));
    else if (v[2] && param_number(v[2], 1, NEIGHBORS_LIMIT_MAX, &limit) != 0)
        server__reply_error(out, 400, "limit must be 1 to %u", NEIGHBORS_LIMIT_MAX);
    else {
        struct hood_out h = {&b, 0};
        server__buf_puts(&b, "{\"fingerprint\":");
        server__buf_json_fp(&b, fp);
        server__buf_printf(&b, ",\"k\":%lu,\"neighbors\":[", k);
        int rc = simcrawl_filter_neighbors(a->f, fp, (unsigned)k, limit, hood_one, &h);
        server__buf_puts(&b, "]}\n");
        if (rc < 0)
            filter_error(a, out, rc, "neighbors");
        else
            reply_take(out, 200, TYPE_JSON, &b);
    }
    server__buf_release(&b);
    params_free(v, 3);
}

/* DELETE /v1/documents/ID (ID percent-encoded; '+' is itself). */
static void do_delete(const struct server_api *a, const char *rest, size_t rn, const char *q,
                      size_t qn, struct server_reply *out)
{
    struct server_param p;
    size_t pos = 0;
    if (server__query_next(q, qn, &pos, &p)) {
        server__reply_error(out, 400,
                            "DELETE /v1/documents/ID takes no parameters (a '?' in "
                            "the id is written %%3F)");
        return;
    }
    char *id = malloc(rn + 1);
    if (!id) {
        server__reply_error(out, 503, "out of memory");
        return;
    }
    long n = server__pct_decode(rest, rn, 0, id);
    const char *problem =
        n < 0 ? "has a '%' not followed by two hex digits" : server__id_problem(id, (size_t)n);
    if (problem) {
        server__reply_error(out, 400,
                            "document id %s: DELETE /v1/documents/ID, the id "
                            "percent-encoded",
                            problem);
        free(id);
        return;
    }
    int rc = simcrawl_filter_delete(a->f, id);
    if (rc < 0)
        filter_error(a, out, rc, "delete");
    else if (rc == 0)
        server__reply_error(out, 404, "no document has the id \"%s\"", id);
    else {
        struct server_buf b;
        server__buf_init(&b, REPLY_SMALL_MAX + SERVER_ID_MAX_BYTES * 6);
        server__buf_puts(&b, "{\"id\":");
        server__buf_json_str(&b, id, strlen(id));
        server__buf_puts(&b, ",\"deleted\":true}\n");
        reply_take(out, 200, TYPE_JSON, &b);
    }
    free(id);
}

/* GET /v1/stats. */
static void do_stats(const struct server_api *a, struct server_reply *out)
{
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX);
    server__buf_printf(&b, "{\"documents\":%llu,\"method\":\"%s\",",
                       (unsigned long long)simcrawl_filter_count(a->f),
                       simcrawl_filter_method(a->f));
    if (is_minhash(a))
        server__buf_printf(&b, "\"k\":null,\"threshold\":%.6g,", simcrawl_filter_threshold(a->f));
    else
        server__buf_printf(&b, "\"k\":%u,\"threshold\":null,", simcrawl_filter_k(a->f));
    server__buf_printf(&b,
                       "\"journal_bytes\":%llu,"
                       "\"uptime_seconds\":%.3f,\"requests\":%llu,\"version\":\"%s\","
                       "\"fingerprint_version\":%u,\"index\":",
                       (unsigned long long)simcrawl_filter_journal_bytes(a->f),
                       server__now() - a->started,
                       (unsigned long long)server__metrics_total(a->metrics), simcrawl_version(),
                       simcrawl_fingerprint_version());
    if (a->index_path)
        server__buf_json_str(&b, a->index_path, strlen(a->index_path));
    else
        server__buf_puts(&b, "null");
    const char *state = "off";
    uint64_t lbytes = 0, lneed = 0, lmax = 0;
    int built = simcrawl_filter_probe_lines(a->f, &state, &lbytes, &lneed, &lmax);
    server__buf_printf(&b,
                       ",\"probe_lines\":{\"built\":%s,\"state\":\"%s\",\"bytes\":%llu,"
                       "\"need_bytes\":%llu,\"max_bytes\":%llu}",
                       built == 1 ? "true" : "false", state, (unsigned long long)lbytes,
                       (unsigned long long)lneed, (unsigned long long)lmax);
    server__buf_puts(&b, "}\n");
    reply_take(out, 200, TYPE_JSON, &b);
}

/* GET /metrics: Prometheus text format 0.0.4. */
static void do_metrics(const struct server_api *a, struct server_reply *out)
{
    struct server_buf b;
    server__buf_init(&b, REPLY_SMALL_MAX);
    server__buf_printf(&b,
                       "# HELP simcrawl_documents Documents in the index.\n"
                       "# TYPE simcrawl_documents gauge\n"
                       "simcrawl_documents %llu\n"
                       "# HELP simcrawl_journal_bytes Bytes of the index's journal (what a "
                       "restart replays).\n"
                       "# TYPE simcrawl_journal_bytes gauge\n"
                       "simcrawl_journal_bytes %llu\n"
                       "# HELP simcrawl_k The largest Hamming distance of a near-duplicate.\n"
                       "# TYPE simcrawl_k gauge\n"
                       "simcrawl_k %u\n"
                       "# HELP simcrawl_uptime_seconds Seconds since the service started.\n"
                       "# TYPE simcrawl_uptime_seconds gauge\n"
                       "simcrawl_uptime_seconds %.3f\n"
                       "# HELP simcrawl_info The version of simcrawl and of its fingerprint.\n"
                       "# TYPE simcrawl_info gauge\n"
                       "simcrawl_info{version=\"%s\",fingerprint_version=\"%u\","
                       "method=\"%s\"} 1\n",
                       (unsigned long long)simcrawl_filter_count(a->f),
                       (unsigned long long)simcrawl_filter_journal_bytes(a->f),
                       simcrawl_filter_k(a->f), server__now() - a->started, simcrawl_version(),
                       simcrawl_fingerprint_version(), simcrawl_filter_method(a->f));
    const char *state = "off";
    uint64_t lbytes = 0;
    int built = simcrawl_filter_probe_lines(a->f, &state, &lbytes, NULL, NULL);
    server__buf_printf(&b,
                       "# HELP simcrawl_probe_lines_built 1 when the probe's lines serve the "
                       "checks (serve --probe-lines).\n"
                       "# TYPE simcrawl_probe_lines_built gauge\n"
                       "simcrawl_probe_lines_built{state=\"%s\"} %d\n"
                       "# HELP simcrawl_probe_lines_bytes Memory the probe's lines hold.\n"
                       "# TYPE simcrawl_probe_lines_bytes gauge\n"
                       "simcrawl_probe_lines_bytes %llu\n",
                       state, built == 1, (unsigned long long)lbytes);
    if (is_minhash(a))
        server__buf_printf(&b,
                           "# HELP simcrawl_threshold The Jaccard estimate of a near-duplicate "
                           "(minhash).\n"
                           "# TYPE simcrawl_threshold gauge\n"
                           "simcrawl_threshold %.6g\n",
                           simcrawl_filter_threshold(a->f));
    server__metrics_write(a->metrics, &b);
    reply_take(out, 200, TYPE_METRICS, &b);
}

/* ---- begin and handle ---- */

/* The methods an endpoint answers, as its 405's Allow header says them. */
static const char *endpoint_allow(enum server_endpoint e)
{
    switch (e) {
    case SERVER_EP_CHECK:
    case SERVER_EP_CHECK_BULK:
    case SERVER_EP_FINGERPRINT:
        return "POST";
    case SERVER_EP_NEIGHBORS:
        return "GET, HEAD, POST";
    case SERVER_EP_DOCUMENTS:
        return "DELETE";
    default:
        return "GET, HEAD";
    }
}

static int method_allowed(enum server_endpoint e, const char *method)
{
    const char *allow = endpoint_allow(e);
    if (e == SERVER_EP_NEIGHBORS)
        return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
               strcmp(method, "POST") == 0;
    if (strcmp(allow, "GET, HEAD") == 0)
        return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    return strcmp(method, allow) == 0;
}

/* The Content-Type of a POST: 0, or -1 with a 415 in out. */
static int check_type(const struct server_request *r, struct server_reply *out)
{
    enum server__body_kind kind = server__body_kind(r->content_type);
    int bulk_ok = out->endpoint == SERVER_EP_CHECK || out->endpoint == SERVER_EP_CHECK_BULK;
    if (kind == SERVER_BODY_PAGE || (kind == SERVER_BODY_NDJSON && bulk_ok))
        return 0;
    if (kind == SERVER_BODY_NONE)
        server__reply_error(out, 415,
                            "a Content-Type is needed: the page's own (text/html; "
                            "charset=...)%s",
                            bulk_ok ? ", or application/x-ndjson for fingerprints" : "");
    else if (kind == SERVER_BODY_FORM)
        server__reply_error(out, 415,
                            "Content-Type %.100s is a form encoding: send the page "
                            "as it is, with its own type (curl --data-binary "
                            "@page.html -H 'Content-Type: text/html')",
                            r->content_type);
    else
        server__reply_error(out, 415, "Content-Type %.100s: %s", r->content_type,
                            bulk_ok ? "send a page (text/html), or fingerprints as "
                                      "application/x-ndjson, one {\"id\",\"fingerprint\"} a line"
                                    : "send a page (text/html; charset=...)");
    return -1;
}

int server__api_begin(const struct server_api *a, const struct server_request *r,
                      struct server_reply *out)
{
    const char *path, *q, *rest;
    size_t pn, qn, rn;
    memset(out, 0, sizeof *out);
    out->endpoint = SERVER_EP_OTHER;
    server__target_split(r->target, r->target_len, &path, &pn, &q, &qn);
    if (a->token && !server__bearer_ok(r->authorization, a->token, a->token_len)) {
        server__reply_error(out, 401,
                            r->authorization ? "wrong bearer token"
                                             : "this service needs a bearer token: "
                                               "Authorization: Bearer TOKEN");
        out->authenticate = 1;
        return 1;
    }
    out->endpoint = server__route(path, pn, &rest, &rn);
    if (out->endpoint == SERVER_EP_OTHER) {
        server__reply_error(out, 404, "no such endpoint: %.*s (see docs/HTTP-API.md)",
                            (int)(pn > 200 ? 200 : pn), path);
        return 1;
    }
    if (!method_allowed(out->endpoint, r->method)) {
        server__reply_error(out, 405, "%.16s is not allowed here (allowed: %s)", r->method,
                            endpoint_allow(out->endpoint));
        out->allow = endpoint_allow(out->endpoint);
        return 1;
    }
    if (strcmp(r->method, "POST") != 0)
        return 0;
    if (out->endpoint == SERVER_EP_CHECK &&
        server__body_kind(r->content_type) == SERVER_BODY_NDJSON)
        out->endpoint = SERVER_EP_CHECK_BULK;
    if (check_type(r, out) != 0)
        return 1;
    if (r->has_length && r->length > a->max_body) {
        server__reply_error(out, 413,
                            "a body of %llu bytes is over the limit of %zu bytes "
                            "(--max-body)",
                            (unsigned long long)r->length, a->max_body);
        return 1;
    }
    /* the query, before the upload: a request that will be refused costs nothing */
    struct server_request head = *r;
    head.body = NULL;
    server__api_handle(a, &head, out);
    return out->body ? 1 : 0;
}

void server__api_handle(const struct server_api *a, const struct server_request *r,
                        struct server_reply *out)
{
    const char *path, *q, *rest;
    size_t pn, qn, rn;
    enum server_endpoint e = out->endpoint;
    server__target_split(r->target, r->target_len, &path, &pn, &q, &qn);
    (void)server__route(path, pn, &rest, &rn);
    switch (e) {
    case SERVER_EP_CHECK:
        do_check(a, r, q, qn, out);
        break;
    case SERVER_EP_CHECK_BULK:
        do_check_bulk(a, r, q, qn, out);
        break;
    case SERVER_EP_FINGERPRINT:
        do_fingerprint(r, q, qn, out);
        break;
    case SERVER_EP_NEIGHBORS:
        if (strcmp(r->method, "POST") == 0)
            do_neighbors_page(a, r, q, qn, out);
        else
            do_neighbors(a, q, qn, out);
        break;
    case SERVER_EP_DOCUMENTS:
        do_delete(a, rest, rn, q, qn, out);
        break;
    case SERVER_EP_STATS:
        do_stats(a, out);
        break;
    case SERVER_EP_HEALTHZ:
        out->status = 200;
        out->content_type = TYPE_JSON;
        out->body = strdup("{\"status\":\"ok\"}\n");
        out->len = out->body ? strlen(out->body) : 0;
        if (!out->body)
            server__reply_error(out, 503, "out of memory");
        break;
    case SERVER_EP_METRICS:
        do_metrics(a, out);
        break;
    default:
        server__reply_error(out, 404, "no such endpoint");
    }
    out->endpoint = e;
}

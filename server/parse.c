/*
 * What a request to the service is made of, taken apart by plain functions that know
 * nothing of libmicrohttpd, so that tests/fuzz/fuzz_serve_request.c can feed them
 * anything: the request target (path and query string, RFC 3986 section 3), percent-
 * decoding (section 2.1; '+' as a space in a query string, as the HTML form encoding that
 * curl --data-urlencode and Python's urlencode write), document ids, fingerprints in hex,
 * the lines of a bulk check (NDJSON: one JSON object, RFC 8259, per line), the
 * Authorization header (RFC 6750 bearer tokens, compared in constant time), the
 * Content-Type's media type (RFC 9110 section 8.3) and the --listen address.
 *
 * Everything here is strict on purpose: a request the service cannot read exactly is a
 * 400 naming what is wrong, never a guess (an id cut at a stray byte would be another
 * document).
 */
#include "server/server_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KEY_MAX 64     /* bytes of a member name we read in an NDJSON line */
#define FP_TEXT_MAX 64 /* bytes of a fingerprint string we read (16 are right) */
#define PORT_DIGITS_MAX 5

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long server__pct_decode(const char *s, size_t n, int plus_is_space, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 1 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else
            out[o++] = plus_is_space && c == '+' ? ' ' : (char)c;
    }
    out[o] = '\0';
    return (long)o;
}

size_t server__utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong form */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogate */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* <= U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

int server__utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = server__utf8_seq(u + i, n - i);
        if (!len)
            return 0;
        i += len;
    }
    return 1;
}

int server__hex16(const char *s, size_t n, uint64_t *fp)
{
    if (n != 16)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hexval((unsigned char)s[i]);
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *fp = v;
    return 0;
}

const char *server__id_problem(const char *id, size_t n)
{
    if (n == 0)
        return "is empty";
    if (n > SERVER_ID_MAX_BYTES)
        return "is longer than 65536 bytes";
    if (memchr(id, '\0', n))
        return "contains a NUL byte";
    if (!server__utf8_valid(id, n))
        return "is not valid UTF-8";
    return NULL;
}

void server__target_split(const char *target, size_t n, const char **path, size_t *path_len,
                          const char **query, size_t *query_len)
{
    const char *q = memchr(target, '?', n);
    size_t plen = q ? (size_t)(q - target) : n;
    const char *hash = memchr(target, '#', plen); /* a fragment is never sent; be safe */
    *path = target;
    *path_len = hash ? (size_t)(hash - target) : plen;
    *query = q ? q + 1 : target + n;
    *query_len = q ? n - plen - 1 : 0;
    const char *qh = memchr(*query, '#', *query_len);
    if (qh)
        *query_len = (size_t)(qh - *query);
}

int server__query_next(const char *query, size_t n, size_t *pos, struct server_param *p)
{
    while (*pos < n && query[*pos] == '&')
        (*pos)++;
    if (*pos >= n)
        return 0;
    const char *start = query + *pos;
    const char *amp = memchr(start, '&', n - *pos);
    size_t len = amp ? (size_t)(amp - start) : n - *pos;
    const char *eq = memchr(start, '=', len);
    p->name = start;
    p->name_len = eq ? (size_t)(eq - start) : len;
    p->has_value = eq != NULL;
    p->value = eq ? eq + 1 : start + len;
    p->value_len = eq ? len - p->name_len - 1 : 0;
    *pos += len;
    return 1;
}

static const char *const endpoint_names[SERVER_EP_COUNT] = {
    "check", "check_bulk", "fingerprint", "neighbors", "documents",
    "stats", "healthz",    "metrics",     "other",
};

const char *server__endpoint_name(enum server_endpoint e)
{
    return (unsigned)e < SERVER_EP_COUNT ? endpoint_names[e] : "other";
}

static int path_is(const char *path, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(path, want, n) == 0;
}

enum server_endpoint server__route(const char *path, size_t n, const char **rest, size_t *rest_len)
{
    static const char docs[] = "/v1/documents/";
    *rest = NULL;
    *rest_len = 0;
    if (n >= sizeof docs - 1 && memcmp(path, docs, sizeof docs - 1) == 0) {
        *rest = path + sizeof docs - 1;
        *rest_len = n - (sizeof docs - 1);
        return SERVER_EP_DOCUMENTS;
    }
    if (path_is(path, n, "/v1/check"))
        return SERVER_EP_CHECK;
    if (path_is(path, n, "/v1/fingerprint"))
        return SERVER_EP_FINGERPRINT;
    if (path_is(path, n, "/v1/neighbors"))
        return SERVER_EP_NEIGHBORS;
    if (path_is(path, n, "/v1/stats"))
        return SERVER_EP_STATS;
    if (path_is(path, n, "/healthz"))
        return SERVER_EP_HEALTHZ;
    if (path_is(path, n, "/metrics"))
        return SERVER_EP_METRICS;
    return SERVER_EP_OTHER;
}

enum server__body_kind server__body_kind(const char *ct)
{
    if (!ct)
        return SERVER_BODY_NONE;
    ct += strspn(ct, " \t");
    size_t n = strcspn(ct, "; \t");
    if (n == 0)
        return SERVER_BODY_NONE;
#define IS(t) (n == sizeof(t) - 1 && strncasecmp(ct, t, n) == 0)
    if (IS("application/x-ndjson"))
        return SERVER_BODY_NDJSON;
    if (IS("application/x-www-form-urlencoded") || IS("multipart/form-data"))
        return SERVER_BODY_FORM;
    if (IS("application/json"))
        return SERVER_BODY_JSON;
#undef IS
    return SERVER_BODY_PAGE;
}

int server__bearer_ok(const char *header, const char *token, size_t token_len)
{
    if (!header || strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
        return 0;
    const char *given = header + 6;
    given += strspn(given, " \t");
    size_t glen = strlen(given);
    while (glen > 0 && (given[glen - 1] == ' ' || given[glen - 1] == '\t'))
        glen--;
    /* every byte of the token is compared, whatever the given one holds */
    unsigned diff = glen != token_len;
    for (size_t i = 0; i < token_len; i++)
        diff |= (unsigned char)token[i] ^ (unsigned char)(i < glen ? given[i] : 0);
    return diff == 0;
}

/* ---- NDJSON lines ---- */

/* A cursor over one line. */
struct jcur {
    const unsigned char *s;
    size_t n, i;
};

static void skip_ws(struct jcur *c)
{
    while (c->i < c->n &&
           (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

/* The 4 hex digits of a \u escape at c->i; -1 when they are not. */
static long hex4(struct jcur *c)
{
    if (c->n - c->i < 4)
        return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hexval(c->s[c->i + (size_t)k]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    c->i += 4;
    return v;
}

static void put_utf8(struct server_buf *out, unsigned long cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    server__buf_add(out, b, n);
}

/* A \uXXXX escape (c->i just past the 'u'), a surrogate pair as one code point. */
static const char *json_unicode(struct jcur *c, struct server_buf *out)
{
    long u = hex4(c);
    if (u < 0)
        return "a \\u escape without 4 hex digits";
    if (u >= 0xDC00 && u <= 0xDFFF)
        return "a lone low surrogate escape";
    if (u >= 0xD800 && u <= 0xDBFF) {
        if (c->n - c->i < 2 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
            return "a high surrogate escape without its low half";
        c->i += 2;
        long lo = hex4(c);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return "a high surrogate escape without its low half";
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
    }
    put_utf8(out, (unsigned long)u);
    return NULL;
}

/*
 * HOW IT WORKS: a JSON string (c->i on its opening quote) decoded into out, whose cap
 * bounds what a line can make us hold. Plain bytes are copied in runs; a byte >= 0x80
 * must start a well-formed UTF-8 sequence (RFC 8259 section 8.1), which is copied
 * whole; a control character must be escaped (section 7); escapes are decoded, a
 * surrogate pair to one code point. Returns NULL, or why the string is not one.
 */
static const char *json_string(struct jcur *c, struct server_buf *out)
{
    c->i++; /* the quote */
    for (;;) {
        size_t run = c->i;
        while (c->i < c->n && c->s[c->i] >= 0x20 && c->s[c->i] < 0x80 && c->s[c->i] != '"' &&
               c->s[c->i] != '\\')
            c->i++;
        server__buf_add(out, c->s + run, c->i - run);
        if (c->i >= c->n)
            return "a string without its closing quote";
        unsigned char ch = c->s[c->i];
        if (ch == '"') {
            c->i++;
            return NULL;
        }
        if (ch < 0x20)
            return "a control character in a string (escape it)";
        if (ch >= 0x80) {
            size_t len = server__utf8_seq(c->s + c->i, c->n - c->i);
            if (!len)
                return "a string that is not valid UTF-8";
            server__buf_add(out, c->s + c->i, len);
            c->i += len;
            continue;
        }
        if (++c->i >= c->n) /* a backslash */
            return "a string without its closing quote";
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e = strchr(from, c->s[c->i]);
        if (e && c->s[c->i]) {
            server__buf_add(out, &to[e - from], 1);
            c->i++;
        } else if (c->s[c->i] == 'u') {
            c->i++;
            const char *why = json_unicode(c, out);
            if (why)
                return why;
        } else
            return "an unknown escape in a string";
    }
}

/* What one line holds, as it is read. */
struct line_fields {
    struct server_buf id, fp;
    int has_id, has_fp;
};

/* One "name": value member (c->i on the name's quote). NULL, or why not. */
static const char *line_member(struct jcur *c, struct line_fields *lf, char *why, size_t why_size)
{
    struct server_buf key;
    server__buf_init(&key, KEY_MAX);
    const char *bad = json_string(c, &key);
    int is_id = !bad && !key.failed && key.len == 2 && memcmp(key.p, "id", 2) == 0;
    int is_fp = !bad && !key.failed && key.len == 11 && memcmp(key.p, "fingerprint", 11) == 0;
    if (!bad && !is_id && !is_fp) {
        struct server_buf shown; /* the name as JSON, shortened */
        server__buf_init(&shown, KEY_MAX * 6 + 2);
        server__buf_json_str(&shown, key.p ? key.p : "", key.len);
        snprintf(why, why_size, "unknown member %s%s (a line has only \"id\" and \"fingerprint\")",
                 shown.p ? shown.p : "\"\"", key.failed ? "..." : "");
        server__buf_release(&shown);
        bad = why;
    }
    server__buf_release(&key);
    if (bad)
        return bad;
    skip_ws(c);
    if (c->i >= c->n || c->s[c->i] != ':')
        return "a member name without ':' after it";
    c->i++;
    skip_ws(c);
    const char *name = is_id ? "id" : "fingerprint";
    if ((is_id && lf->has_id) || (is_fp && lf->has_fp)) {
        snprintf(why, why_size, "%s given twice", name);
        return why;
    }
    if (c->i >= c->n || c->s[c->i] != '"') {
        snprintf(why, why_size, "%s is not a string", name);
        return why;
    }
    struct server_buf *v = is_id ? &lf->id : &lf->fp;
    bad = json_string(c, v);
    if (bad) {
        snprintf(why, why_size, "%s: %s", name, bad);
        return why;
    }
    if (is_id)
        lf->has_id = 1;
    else
        lf->has_fp = 1;
    return NULL;
}

/* The object of one line, members only; NULL, or why not. */
static const char *line_object(struct jcur *c, struct line_fields *lf, char *why, size_t why_size)
{
    skip_ws(c);
    if (c->i >= c->n || c->s[c->i] != '{')
        return "not a JSON object";
    c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return NULL;
    }
    for (;;) {
        skip_ws(c);
        if (c->i >= c->n || c->s[c->i] != '"')
            return "a member that does not start with a quoted name";
        const char *bad = line_member(c, lf, why, why_size);
        if (bad)
            return bad;
        skip_ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == '}') {
            c->i++;
            return NULL;
        }
        return "a member not followed by ',' or '}'";
    }
}

int server__ndjson_line(const char *line, size_t n, char **id, uint64_t *fp, char *why,
                        size_t why_size)
{
    struct jcur c = {(const unsigned char *)line, n, 0};
    struct line_fields lf;
    memset(&lf, 0, sizeof lf);
    server__buf_init(&lf.id, SERVER_ID_MAX_BYTES + 1); /* one more: "is longer than" */
    server__buf_init(&lf.fp, FP_TEXT_MAX);
    *id = NULL;
    const char *bad = line_object(&c, &lf, why, why_size);
    if (!bad) {
        skip_ws(&c);
        if (c.i < c.n)
            bad = "text after the object";
    }
    const char *problem;
    if (bad) {
        /* bad is set */
    } else if (!lf.has_id)
        bad = "id is missing";
    else if (!lf.has_fp)
        bad = "fingerprint is missing";
    else if (lf.id.failed == SERVER_BUF_NOMEM)
        bad = "out of memory";
    else if ((problem = server__id_problem(lf.id.p ? lf.id.p : "",
                                           lf.id.failed ? SERVER_ID_MAX_BYTES + 1 : lf.id.len))) {
        snprintf(why, why_size, "id %s", problem);
        bad = why;
    } else if (lf.fp.failed || server__hex16(lf.fp.p ? lf.fp.p : "", lf.fp.len, fp) != 0)
        bad = "fingerprint is not 16 hex digits";
    if (bad) {
        if (bad != why)
            snprintf(why, why_size, "%s", bad);
        server__buf_release(&lf.id);
        server__buf_release(&lf.fp);
        return -1;
    }
    size_t len;
    *id = server__buf_take(&lf.id, &len);
    server__buf_release(&lf.fp);
    return 0;
}

/* ---- the listen address ---- */

static int parse_port(const char *s, unsigned short *port)
{
    size_t n = strlen(s);
    if (n == 0 || n > PORT_DIGITS_MAX || strspn(s, "0123456789") != n)
        return -1;
    unsigned long v = strtoul(s, NULL, 10);
    if (v > 65535)
        return -1;
    *port = (unsigned short)v;
    return 0;
}

int server__parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    unsigned short port;
    if (parse_port(colon + 1, &port) != 0)
        return -1;
    memset(ss, 0, sizeof *ss);
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
        host[hl - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
            return -1;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        *len = sizeof *a6;
        return 0;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    if (strcmp(host, "localhost") == 0)
        a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
        return -1;
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    *len = sizeof *a4;
    return 0;
}

int server__addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)sa;
        return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

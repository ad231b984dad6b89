/*
 * url.c: resolving a link's href against the page's base URL, RFC 3986 section 5.2
 * ("Reference Resolution": the strict algorithm of 5.2.2, merge of 5.2.3,
 * remove_dot_segments of 5.2.4). extract/ must not depend on libcurl, so this is the
 * small self-contained version; the crawler canonicalises further with curl_url().
 *
 * Before resolving, the href is cleaned as browsers do (WHATWG URL): leading and trailing
 * C0 controls and spaces are trimmed, tabs and newlines inside are removed, and for
 * http(s) a backslash in the path means a slash. The result has no fragment, a lower-case
 * scheme and host, an empty http(s) path becomes "/", and bytes that may not appear in a
 * URL (space, controls, non-ASCII, "<>\"`{}|^") in path and query are percent-encoded.
 *
 * Only crawlable links are usable: http and https, or a relative reference when there is
 * no base. javascript:, mailto:, data:, tel: and the like, and fragment-only or empty
 * hrefs (the page itself) are skipped.
 */
#include "extract/extract_int.h"

#include <string.h>

#define URL_MAX 8192 /* bytes of a cleaned href; longer ones are not crawlable */

struct uri {
    const char *scheme, *auth, *path, *query;
    size_t scheme_len, auth_len, path_len, query_len;
    int has_scheme, has_auth, has_query;
};

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void parse(const char *s, size_t n, struct uri *u)
{
    memset(u, 0, sizeof *u);
    size_t i = 0;
    if (n > 0 && is_alpha((unsigned char)s[0])) {
        size_t j = 1;
        while (j < n && (is_alpha((unsigned char)s[j]) || (s[j] >= '0' && s[j] <= '9') ||
                         s[j] == '+' || s[j] == '-' || s[j] == '.'))
            j++;
        if (j < n && s[j] == ':') {
            u->has_scheme = 1;
            u->scheme = s;
            u->scheme_len = j;
            i = j + 1;
        }
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
        size_t j = i + 2;
        while (j < n && s[j] != '/' && s[j] != '?' && s[j] != '#')
            j++;
        u->has_auth = 1;
        u->auth = s + i + 2;
        u->auth_len = j - i - 2;
        i = j;
    }
    size_t j = i;
    while (j < n && s[j] != '?' && s[j] != '#')
        j++;
    u->path = s + i;
    u->path_len = j - i;
    i = j;
    if (i < n && s[i] == '?') {
        j = i + 1;
        while (j < n && s[j] != '#')
            j++;
        u->has_query = 1;
        u->query = s + i + 1;
        u->query_len = j - i - 1;
    }
}

static int scheme_is(const struct uri *u, const char *name)
{
    size_t n = strlen(name);
    if (!u->has_scheme || u->scheme_len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((u->scheme[i] | 32) != name[i])
            return 0;
    return 1;
}

/* RFC 3986 5.2.4 on path[0..n) into out (a scratch of >= n + 1 bytes); returns length. */
static size_t remove_dots(const char *in, size_t n, char *out)
{
    size_t o = 0, i = 0;
    while (i < n) {
        const char *p = in + i;
        size_t left = n - i;
        if (left >= 3 && memcmp(p, "../", 3) == 0) {
            i += 3;
        } else if (left >= 2 && memcmp(p, "./", 2) == 0) {
            i += 2;
        } else if (left >= 3 && memcmp(p, "/./", 3) == 0) {
            i += 2;
        } else if (left == 2 && memcmp(p, "/.", 2) == 0) {
            i += 1;
            out[o++] = '/';
            i += 1;
        } else if ((left >= 4 && memcmp(p, "/../", 4) == 0) ||
                   (left == 3 && memcmp(p, "/..", 3) == 0)) {
            /* drop the last output segment */
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            if (left == 3) {
                out[o++] = '/';
                i += 3;
            } else {
                i += 3;
            }
        } else if ((left == 1 && p[0] == '.') || (left == 2 && memcmp(p, "..", 2) == 0)) {
            i = n;
        } else {
            size_t j = (p[0] == '/') ? 1 : 0;
            while (j < left && p[j] != '/')
                j++;
            memcpy(out + o, p, j);
            o += j;
            i += j;
        }
    }
    return o;
}

static const char hexd[] = "0123456789ABCDEF";

/* Appends s[0..n), percent-encoding what may not appear raw in a path or query. */
static enum extract_code add_encoded(struct ex_buf *out, const char *s, size_t n)
{
    enum extract_code rc = ex_buf_reserve(out, n * 3);
    if (rc != EXTRACT_OK)
        return rc;
    char *o = out->p + out->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7F || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' ||
            c == '}' || c == '|' || c == '^') {
            *o++ = '%';
            *o++ = hexd[c >> 4];
            *o++ = hexd[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    out->len = (size_t)(o - out->p);
    out->p[out->len] = '\0';
    return EXTRACT_OK;
}

static enum extract_code add_lower(struct ex_buf *out, const char *s, size_t n)
{
    enum extract_code rc = ex_buf_reserve(out, n);
    if (rc != EXTRACT_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        out->p[out->len++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    out->p[out->len] = '\0';
    return EXTRACT_OK;
}

/* Lower-cases the host part of an authority (userinfo@host:port), keeps the rest. */
static enum extract_code add_auth(struct ex_buf *out, const char *a, size_t n)
{
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (a[i] == '@')
            at = a + i;
    size_t host = at ? (size_t)(at - a) + 1 : 0;
    enum extract_code rc = ex_buf_add(out, a, host);
    if (rc == EXTRACT_OK)
        rc = add_lower(out, a + host, n - host);
    return rc;
}

/* Copies ref into clean (URL_MAX bytes) without leading and trailing C0 controls and
 * spaces and without tabs and newlines inside; returns its length, or 0 when nothing
 * is left to follow (empty, a fragment only, or absurdly long). */
static size_t clean_ref(const char *ref, size_t ref_len, char clean[URL_MAX])
{
    while (ref_len > 0 && (unsigned char)ref[0] <= 0x20) {
        ref++;
        ref_len--;
    }
    while (ref_len > 0 && (unsigned char)ref[ref_len - 1] <= 0x20)
        ref_len--;
    size_t n = 0;
    for (size_t i = 0; i < ref_len; i++) {
        if (ref[i] == '\t' || ref[i] == '\n' || ref[i] == '\r')
            continue;
        if (n + 1 >= URL_MAX)
            return 0; /* absurdly long: not a link we follow */
        clean[n++] = ref[i];
    }
    if (n == 0 || clean[0] == '#')
        return 0;
    return n;
}

/* RFC 3986 5.2.2: the target t of reference r against base b (have_base: b is an
 * absolute URI), its path in path_out (*plen bytes; path_in is scratch for the merge of
 * 5.2.3). Returns 0, or -1 when a base path is too long to follow. */
static int transform(const struct uri *r, const struct uri *b, int have_base, struct uri *t,
                     char *path_in, char *path_out, size_t *plen)
{
    memset(t, 0, sizeof *t);
    if (r->has_scheme || !have_base) {
        *t = *r;
        *plen = remove_dots(r->path, r->path_len, path_out);
        return 0;
    }
    t->has_scheme = 1;
    t->scheme = b->scheme;
    t->scheme_len = b->scheme_len;
    if (r->has_auth) {
        t->has_auth = 1;
        t->auth = r->auth;
        t->auth_len = r->auth_len;
        *plen = remove_dots(r->path, r->path_len, path_out);
        t->has_query = r->has_query;
        t->query = r->query;
        t->query_len = r->query_len;
        return 0;
    }
    t->has_auth = b->has_auth;
    t->auth = b->auth;
    t->auth_len = b->auth_len;
    if (r->path_len == 0) {
        if (b->path_len > URL_MAX)
            return -1;
        memcpy(path_out, b->path, b->path_len);
        *plen = b->path_len;
        const struct uri *q = r->has_query ? r : b;
        t->has_query = q->has_query;
        t->query = q->query;
        t->query_len = q->query_len;
        return 0;
    }
    if (r->path[0] == '/') {
        *plen = remove_dots(r->path, r->path_len, path_out);
    } else {
        /* 5.2.3 merge */
        size_t m = 0;
        if (b->has_auth && b->path_len == 0) {
            path_in[m++] = '/';
        } else {
            size_t k = b->path_len;
            while (k > 0 && b->path[k - 1] != '/')
                k--;
            if (k > URL_MAX)
                return -1;
            memcpy(path_in, b->path, k);
            m = k;
        }
        memcpy(path_in + m, r->path, r->path_len);
        m += r->path_len;
        *plen = remove_dots(path_in, m, path_out);
    }
    t->has_query = r->has_query;
    t->query = r->query;
    t->query_len = r->query_len;
    return 0;
}

/* RFC 3986 5.3: appends t (its path: path, plen bytes) to out, scheme and host
 * lower-cased, path and query percent-encoded where needed; out is unchanged on
 * failure. */
static enum extract_code recompose(struct ex_buf *out, const struct uri *t, const char *path,
                                   size_t plen)
{
    size_t start = out->len;
    enum extract_code rc = EXTRACT_OK;
    if (t->has_scheme) {
        rc = add_lower(out, t->scheme, t->scheme_len);
        if (rc == EXTRACT_OK)
            rc = ex_buf_add(out, ":", 1);
    }
    if (rc == EXTRACT_OK && t->has_auth) {
        rc = ex_buf_add(out, "//", 2);
        if (rc == EXTRACT_OK)
            rc = add_auth(out, t->auth, t->auth_len);
    }
    if (rc == EXTRACT_OK) {
        if (plen == 0 && t->has_scheme && t->has_auth)
            rc = ex_buf_add(out, "/", 1);
        else
            rc = add_encoded(out, path, plen);
    }
    if (rc == EXTRACT_OK && t->has_query) {
        rc = ex_buf_add(out, "?", 1);
        if (rc == EXTRACT_OK)
            rc = add_encoded(out, t->query, t->query_len);
    }
    if (rc != EXTRACT_OK) {
        out->len = start;
        if (out->p)
            out->p[start] = '\0';
    }
    return rc;
}

/* Resolves ref against base in the steps of RFC 3986 section 5: clean_ref, parse,
 * transform, recompose; only http(s) targets are usable. */
enum extract_code ex_url_resolve(const char *base, const char *ref, size_t ref_len,
                                 struct ex_buf *out, int *usable)
{
    char clean[URL_MAX];
    char path_in[2 * URL_MAX + 2], path_out[2 * URL_MAX + 2];
    *usable = 0;
    size_t n = clean_ref(ref, ref_len, clean);
    if (n == 0)
        return EXTRACT_OK;

    struct uri r, b;
    parse(clean, n, &r);
    int have_base = base && *base;
    if (have_base)
        parse(base, strlen(base), &b);
    if (have_base && !b.has_scheme)
        have_base = 0;
    if (r.has_scheme && !scheme_is(&r, "http") && !scheme_is(&r, "https"))
        return EXTRACT_OK; /* javascript:, mailto:, data:, tel:, ftp: ... */

    /* http(s): a backslash in the path is a slash (WHATWG) */
    int special = r.has_scheme || (have_base && (scheme_is(&b, "http") || scheme_is(&b, "https")));
    if (special) {
        for (size_t i = 0; i < n && clean[i] != '?' && clean[i] != '#'; i++)
            if (clean[i] == '\\')
                clean[i] = '/';
        parse(clean, n, &r);
    }

    struct uri t;
    size_t plen = 0;
    if (transform(&r, &b, have_base, &t, path_in, path_out, &plen) != 0)
        return EXTRACT_OK;
    if (t.has_scheme && !scheme_is(&t, "http") && !scheme_is(&t, "https"))
        return EXTRACT_OK;
    enum extract_code rc = recompose(out, &t, path_out, plen);
    if (rc != EXTRACT_OK)
        return rc;
    *usable = 1;
    return EXTRACT_OK;
}

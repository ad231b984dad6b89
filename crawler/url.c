/*
 * URL canonicalisation for the crawler: one spelling per resource, so that the seen set,
 * the per-host queues and robots.txt all agree on what a URL is.
 *
 * Parsing, resolving a reference against a base (RFC 3986 section 5.2) and removing dot
 * segments (5.2.4) are libcurl's URL API (curl_url(), curl_url_set(), curl_url_get()).
 * Around it we do the normalisations of RFC 3986 section 6.2.2 that curl leaves alone:
 *   - tab, CR and LF are removed and C0/space trimmed at both ends (WHATWG URL);
 *   - percent-encoding is normalised BEFORE dot segments are removed (6.2.2.2):
 *     escapes of unreserved characters are decoded (%7e -> ~, %41 -> A), other escapes
 *     get upper-case hex (%3a -> %3A), a '%' not followed by two hex digits becomes %25,
 *     and bytes that may not appear in a URL (space, controls, non-ASCII, "<>\^`{|}) are
 *     percent-encoded, in the path, query and fragment (never in the host);
 *   - scheme and host are lower case (ASCII letters); an international host is kept in
 *     UTF-8 (curl's CURLU_PUNYCODE depends on the locale and leaks on failure in 7.88, so
 *     it is not used: the same host always gets the same spelling);
 *   - the default port (80, 443) is dropped, user and password are dropped, the fragment
 *     is dropped, an empty path is "/", an empty query ("?") is dropped.
 * Only http and https are accepted. The result is idempotent: canon(canon(u)) == canon(u)
 * (the fuzz target tests/fuzz/fuzz_url.c checks it). Links already in canonical form (most
 * of them: a crawl's pages link to their own site's canonical spellings) skip curl on an
 * exact fast path, canon_fast(), which gives byte for byte what the curl path gives.
 */
#include "crawler/crawl.h"
#include "crawler/crawler_int.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

static int is_hex(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_val(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

static int is_unreserved(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

/* Bytes that must be percent-encoded wherever they appear after the authority. */
static int needs_escape(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' ||
           c == '`' || c == '{' || c == '|' || c == '}';
}

static const char HEX[] = "0123456789ABCDEF";

/* The percent-normaliser of crawler_int.h (URLs here, robots.txt paths and patterns in
 * robots.c). */
size_t crawl__url_normalise_escapes(const char *in, size_t n, char *out)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '%') {
            if (i + 2 < n && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
                int v = hex_val(s[i + 1]) * 16 + hex_val(s[i + 2]);
                if (is_unreserved(v)) {
                    out[o++] = (char)v;
                } else {
                    out[o++] = '%';
                    out[o++] = HEX[v >> 4];
                    out[o++] = HEX[v & 15];
                }
                i += 2;
            } else {
                out[o++] = '%';
                out[o++] = '2';
                out[o++] = '5';
            }
        } else if (needs_escape(c)) {
            out[o++] = '%';
            out[o++] = HEX[c >> 4];
            out[o++] = HEX[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    return o;
}

size_t crawl_url_scheme_len(const char *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (c == ':')
            return i + 1;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.'))
            return 0;
    }
    return 0;
}

/*
 * Pre-pass over a reference: drops tab/CR/LF, trims C0 and space at both ends, and
 * normalises percent-encoding after the authority. *out: caller frees.
 */
static enum crawl_code prepare(const char *in, char **out)
{
    size_t n = strlen(in);
    while (n > 0 && (unsigned char)in[n - 1] <= 0x20)
        n--;
    while (n > 0 && (unsigned char)*in <= 0x20) {
        in++;
        n--;
    }
    if (n > CRAWL_URL_MAX)
        return CRAWL_EURL;
    char *clean = malloc(n + 1);
    if (!clean)
        return CRAWL_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i] != '\t' && in[i] != '\n' && in[i] != '\r')
            clean[m++] = in[i];
    clean[m] = '\0';

    /* Where the authority ends: after "scheme://host" or "//host", at the first / ? #. */
    size_t start = crawl_url_scheme_len(clean, m);
    size_t auth_end = start;
    if (m - start >= 2 && clean[start] == '/' && clean[start + 1] == '/') {
        auth_end = start + 2;
        while (auth_end < m && clean[auth_end] != '/' && clean[auth_end] != '?' &&
               clean[auth_end] != '#')
            auth_end++;
    }
    /* A percent-escaped host has no one spelling (curl decodes it but does not then
     * normalise it as it does a plain host): refuse it. User info may be escaped. */
    if (auth_end > start) {
        size_t host_start = start + 2;
        for (size_t i = host_start; i < auth_end; i++)
            if (clean[i] == '@')
                host_start = i + 1;
        if (memchr(clean + host_start, '%', auth_end - host_start)) {
            free(clean);
            return CRAWL_EURL;
        }
    }
    char *res = malloc(auth_end + 3 * (m - auth_end) + 1);
    if (!res) {
        free(clean);
        return CRAWL_ENOMEM;
    }
    memcpy(res, clean, auth_end);
    size_t o =
        auth_end + crawl__url_normalise_escapes(clean + auth_end, m - auth_end, res + auth_end);
    res[o] = '\0';
    free(clean);
    *out = res;
    return CRAWL_OK;
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/*
 * The fast path. HOW IT WORKS: most links a crawler sees are absolute URLs already in
 * canonical form (the extractor resolved them; sites link to their own canonical
 * spellings), and for those the slow path below (two prepare() passes, one or two curl
 * parses, five curl_url_get() copies) returns its input, minus any fragment. canon_fast()
 * recognises exactly such URLs with one forward scan, conservatively: anything it is not
 * sure curl and the normalisations above leave unchanged goes the slow way. The accepted
 * form is
 *   "http://" | "https://", then a host that is either a name starting with a letter
 *   (a-z 0-9 - . only, no empty label: curl reads it as a name, not as IPv4) or a dotted
 *   quad of four decimal numbers 0-255 without leading zeros (curl prints it back as is),
 *   then optionally ":" and a port 1-65535 without leading zeros that is not the scheme's
 *   default, then a path starting with "/" with no "." or ".." segment, optionally "?" and
 *   a non-empty query, optionally "#" and a fragment of printable ASCII (0x21-0x7e).
 * Path and query bytes are RFC 3986 unreserved, sub-delims, ":" "@" "/" ("?" in the query)
 * or "%" with two upper-case hex digits that do not encode an unreserved character.
 * Returns the length of the canonical form (the input up to the fragment), or 0 when the
 * slow path must decide. tests/test_url.c and tests/fuzz/fuzz_url.c check fast == slow.
 */
/* 1 for the path bytes the fast path takes as they are: unreserved, sub-delims, ":" "@" "/" */
static const unsigned char fast_pchar_tab[256] = {
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,  ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,  ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,  ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1,  ['E'] = 1, ['F'] = 1,
    ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,  ['M'] = 1, ['N'] = 1,
    ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,  ['U'] = 1, ['V'] = 1,
    ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['0'] = 1, ['1'] = 1,  ['2'] = 1, ['3'] = 1,
    ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,  ['-'] = 1, ['.'] = 1,
    ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1,
    ['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1, [':'] = 1,  ['@'] = 1, ['/'] = 1,
};

static int fast_pchar(unsigned char c)
{
    return fast_pchar_tab[c];
}

static int upper_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

/* Four decimal parts 0-255, no leading zeros: the spelling curl's IPv4 parser prints. */
static int plain_ipv4(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    for (;;) {
        size_t st = i;
        unsigned v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - st < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == st || v > 255 || (s[st] == '0' && i - st > 1))
            return 0;
        parts++;
        if (i == n)
            return parts == 4;
        if (s[i] != '.' || parts == 4)
            return 0;
        i++;
    }
}

static size_t canon_fast(const char *url)
{
    const char *p = url;
    int https;
    if (strncmp(p, "http://", 7) == 0) {
        https = 0;
        p += 7;
    } else if (strncmp(p, "https://", 8) == 0) {
        https = 1;
        p += 8;
    } else {
        return 0;
    }
    /* host */
    const char *h = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.')
        p++;
    size_t hlen = (size_t)(p - h);
    if (hlen == 0)
        return 0;
    if (h[0] >= 'a' && h[0] <= 'z') {
        if (h[hlen - 1] == '.')
            return 0;
        for (const char *c = h; c + 1 < p; c++)
            if (c[0] == '.' && c[1] == '.')
                return 0;
    } else if (!plain_ipv4(h, hlen)) {
        return 0;
    }
    /* port */
    if (*p == ':') {
        p++;
        const char *d = p;
        unsigned long port = 0;
        while (*p >= '0' && *p <= '9' && p - d < 6)
            port = port * 10 + (unsigned long)(*p++ - '0');
        if (p == d || *d == '0' || port > 65535 || port == (https ? 443u : 80u))
            return 0;
    }
    /* path: no "." or ".." segment */
    if (*p != '/')
        return 0;
    const char *seg = p + 1;
    for (;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '/' || c == '?' || c == '#' || c == '\0') {
            if (p > seg && p[-1] == '.' && (p - seg == 1 || (p - seg == 2 && seg[0] == '.')))
                return 0;
            seg = p + 1;
            if (c != '/')
                break;
        } else if (c == '%') {
            if (!upper_hex((unsigned char)p[1]) || !upper_hex((unsigned char)p[2]) ||
                is_unreserved(hex_val(p[1]) * 16 + hex_val(p[2])))
                return 0;
            p += 2;
        } else if (!fast_pchar(c)) {
            return 0;
        }
    }
    /* query: non-empty (an empty one is dropped) */
    if (*p == '?') {
        p++;
        if (*p == '\0' || *p == '#')
            return 0;
        for (; *p && *p != '#'; p++) {
            unsigned char c = (unsigned char)*p;
            if (c == '%') {
                if (!upper_hex((unsigned char)p[1]) || !upper_hex((unsigned char)p[2]) ||
                    is_unreserved(hex_val(p[1]) * 16 + hex_val(p[2])))
                    return 0;
                p += 2;
            } else if (c != '?' && !fast_pchar(c)) {
                return 0;
            }
        }
    }
    size_t keep = (size_t)(p - url);
    /* fragment: dropped, but only when the slow path would not refuse the URL for it */
    if (*p == '#')
        for (p++; *p; p++)
            if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
                return 0;
    if ((size_t)(p - url) > CRAWL_URL_MAX)
        return 0;
    return keep;
}

enum crawl_code crawl__url_canonicalise_memo(const char *url, const char *base, int *base_fast,
                                             char **out)
{
    size_t n;
    /* An absolute URL replaces the base, provided the base itself parses (the slow path
     * refuses everything against a bad base): a canonical base surely does. */
    if (url && (n = canon_fast(url)) > 0) {
        int ok = !base || !*base;
        if (!ok) {
            if (*base_fast < 0)
                *base_fast = canon_fast(base) > 0;
            ok = *base_fast;
        }
        if (ok) {
            *out = strndup(url, n);
            return *out ? CRAWL_OK : CRAWL_ENOMEM;
        }
    }
    return crawl__url_canonicalise_curl(url, base, out);
}

enum crawl_code crawl_url_canonicalise(const char *url, const char *base, char **out)
{
    int base_fast = -1;
    return crawl__url_canonicalise_memo(url, base, &base_fast, out);
}

enum crawl_code crawl__url_canonicalise_curl(const char *url, const char *base, char **out)
{
    enum crawl_code rc = CRAWL_EURL;
    char *ref = NULL, *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    char *res = NULL;
    CURLU *u = NULL;

    *out = NULL;
    if (!url)
        return CRAWL_EINVAL;
    u = curl_url();
    if (!u)
        return CRAWL_ENOMEM;
    if (base && *base) {
        char *b = NULL;
        rc = prepare(base, &b);
        if (rc != CRAWL_OK)
            goto fail;
        CURLUcode uc = curl_url_set(u, CURLUPART_URL, b, 0);
        free(b);
        rc = CRAWL_EURL;
        if (uc != CURLUE_OK)
            goto fail;
    }
    rc = prepare(url, &ref);
    if (rc != CRAWL_OK)
        goto fail;
    rc = CRAWL_EURL;
    /* A reference that is empty or only a fragment is the base itself (RFC 3986 5.2.2);
     * curl would drop the base's last segment. */
    if (!(base && *base && (ref[0] == '\0' || ref[0] == '#')) &&
        curl_url_set(u, CURLUPART_URL, ref, 0) != CURLUE_OK)
        goto fail;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
        goto fail;
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        goto fail; /* curl returns the scheme in lower case */
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        goto fail;
    if (!*host || strpbrk(host, "%\\ \x7f"))
        goto fail; /* an escaped host has no one spelling: refuse it */
    for (const char *c = host; *c; c++)
        if ((unsigned char)*c < 0x21)
            goto fail;
    CURLUcode pc = curl_url_get(u, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
    if (pc != CURLUE_OK && pc != CURLUE_NO_PORT)
        goto fail;
    if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
        goto fail;
    CURLUcode qc = curl_url_get(u, CURLUPART_QUERY, &query, 0);
    if (qc != CURLUE_OK && qc != CURLUE_NO_QUERY)
        goto fail;

    /* curl keeps a path's escapes as given; a reference resolved against a base may have
     * brought in the base's. Normalise once more (idempotent on prepared input). */
    size_t plen = strlen(path), qlen = query ? strlen(query) : 0;
    size_t hlen = strlen(host), slen = strlen(scheme), portlen = port ? strlen(port) : 0;
    size_t cap = slen + 3 + hlen + 1 + portlen + 1 + 3 * plen + 1 + 3 * qlen + 1;
    res = malloc(cap);
    if (!res) {
        rc = CRAWL_ENOMEM;
        goto fail;
    }
    size_t o = 0;
    memcpy(res + o, scheme, slen);
    o += slen;
    memcpy(res + o, "://", 3);
    o += 3;
    for (size_t i = 0; i < hlen; i++)
        res[o++] = ascii_lower(host[i]);
    if (port) {
        res[o++] = ':';
        memcpy(res + o, port, portlen);
        o += portlen;
    }
    if (plen == 0 || path[0] != '/')
        res[o++] = '/';
    o += crawl__url_normalise_escapes(path, plen, res + o);
    if (query && qlen > 0) {
        res[o++] = '?';
        o += crawl__url_normalise_escapes(query, qlen, res + o);
    }
    res[o] = '\0';
    if (o > CRAWL_URL_MAX) {
        rc = CRAWL_EURL;
        goto fail;
    }
    if (base && *base) {
        /* curl normalises some hosts (IPv4 shorthand "9" -> "0.0.0.9") only when it parses
         * an absolute URL: parse the resolved one again so both paths agree. */
        rc = crawl__url_canonicalise_curl(res, NULL, out);
        goto fail;
    }
    *out = res;
    res = NULL;
    rc = CRAWL_OK;
fail:
    free(res);
    free(ref);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return rc;
}

enum crawl_code crawl_url_split(const char *canon, struct crawl_url_parts *out)
{
    memset(out, 0, sizeof *out);
    const char *p = strstr(canon, "://");
    if (!p)
        return CRAWL_EURL;
    size_t host_off = (size_t)(p - canon) + 3;
    size_t i = host_off;
    if (canon[i] == '[') {
        while (canon[i] && canon[i] != ']')
            i++;
        if (canon[i] != ']')
            return CRAWL_EURL;
        i++;
    } else {
        while (canon[i] && canon[i] != ':' && canon[i] != '/' && canon[i] != '?')
            i++;
    }
    out->host_off = host_off;
    out->host_len = i - host_off;
    while (canon[i] && canon[i] != '/' && canon[i] != '?')
        i++;
    out->origin_len = i;
    out->path_off = i;
    if (out->host_len == 0)
        return CRAWL_EURL;
    return CRAWL_OK;
}

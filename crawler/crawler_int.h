#ifndef CRAWLER_CRAWLER_INT_H
#define CRAWLER_CRAWLER_INT_H
/*
 * Shared inside crawler/ only (and by the tests and benchmarks of crawler/): helpers that
 * several files of the library use but that are not part of crawl.h. Each section names
 * the file that implements it; add yours below. Their functions are the library's second
 * tier of names, crawl__ (libuv's uv__): crawl_ is the API of crawl.h only.
 */
#include <libpsl.h>
#include <stddef.h>
#include <stdint.h>

#include "crawler/crawl.h"

/* ---- robots.txt (crawler/robots.c) ---- */

/*
 * The robots.txt wildcard match: does pattern (pat, plen: '*' matches any run of octets;
 * no '$' inside) match a prefix of s (or all of s when anchored)? Iterative, with the
 * classic backtrack-to-last-star: O(plen * slen) at worst, never exponential.
 */
int crawl__robots_wildmatch(const char *pat, size_t plen, const char *s, size_t slen, int anchored);

/* ---- robots.txt fetched by the crawler (crawler/robots_fetch.c) ---- */

/*
 * The outcome of a robots.txt transfer (r: the fetcher's CRAWL_FETCH_ANY) for
 * crawl_robots_host_update(): status, body (the kept bytes; truncated past the cap),
 * redirects, the final URL, Cache-Control max-age, or status 0 and the error in words for
 * a transfer that gave no complete answer. o borrows r's body and final URL (valid while
 * r lives). Returns 1 when the host gave no answer at all (no status line: refused, no
 * such name, TLS, timeout before any byte), 0 otherwise.
 */
int crawl__robots_outcome_from_response(const struct crawl_response *r,
                                        struct crawl_robots_outcome *o);

/* The shortest Cache-Control max-age (seconds, capped at 1e9) in an HTTP response head
 * head[0..len), or -1 when none. */
double crawl__robots_max_age(const char *head, size_t len);

/* ---- scope (crawler/crawl.c) ---- */

/*
 * The name a URL is scoped by (--scope): its host for CRAWL_SCOPE_HOST (and _ANY), and for
 * CRAWL_SCOPE_DOMAIN the host's registrable domain by the public suffix list psl
 * (www.example.co.uk and shop.example.co.uk are both example.co.uk). The host itself when
 * it has no registrable domain: an IP address (IPv6 in brackets, or a last label of digits
 * only, which URL parsers read as IPv4: libpsl would make 127.0.0.1 "0.1"), a public
 * suffix (co.uk), a single label (localhost). Two URLs are in the same scope when their
 * names are equal; the port and scheme never count. url must be canonical (crawl_url_*:
 * lower-case host). *out is the name, a malloc'd string the caller frees; CRAWL_EURL for a
 * URL with no host, CRAWL_ENOMEM (*out NULL either way).
 */
CRAWL_WARN_UNUSED enum crawl_code crawl__scope_name(const psl_ctx_t *psl, enum crawl_scope scope,
                                                    const char *url, char **out);

/* ---- URLs (crawler/url.c) ---- */

/*
 * The one percent-normaliser of the crawler (RFC 3986 6.2.2.2), for the path, query and
 * fragment of every URL (crawl_url_canonicalise) and for both sides of a robots.txt match
 * (the rule's pattern and the URL's path, crawler/robots.c): %xx of an unreserved
 * character (A-Z a-z 0-9 - . _ ~) is decoded, other %xx escapes are kept with upper-case
 * hex (%2f -> %2F, so %2F never equals '/': RFC 9309 2.2.2 compares reserved characters
 * percent-encoded), a '%' not followed by two hex digits becomes %25, and the octets a URL
 * may not hold (controls, space, DEL, non-ASCII as its UTF-8 octets, and " < > \ ^ ` { | })
 * are percent-encoded; everything else ('*' and '$' too) is copied. Idempotent. out must
 * hold 3 * len bytes. Returns the length written (not NUL-terminated).
 */
size_t crawl__url_normalise_escapes(const char *in, size_t len, char *out);

/* crawl_url_canonicalise() for many URLs against one base: *base_fast remembers whether
 * the base is canonical (the fast path's test); start it at -1 (not known yet). */
CRAWL_WARN_UNUSED enum crawl_code crawl__url_canonicalise_memo(const char *url, const char *base,
                                                               int *base_fast, char **out);

/*
 * crawl_url_canonicalise() without its fast path for URLs already canonical: always
 * through curl's URL API. The same contract and results; for the tests and the fuzz
 * target that check the fast path against it.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl__url_canonicalise_curl(const char *url, const char *base,
                                                               char **out);

#endif

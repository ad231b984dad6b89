#ifndef CRAWLER_CRAWLER_INT_H
#define CRAWLER_CRAWLER_INT_H
/*
 * Shared inside crawler/ only (and by the tests and benchmarks of crawler/): helpers that
 * several files of the library use but that are not part of crawl.h. Each section names
 * the file that implements it; add yours below.
 */
#include <stddef.h>
#include <stdint.h>

/* ---- robots.txt (crawler/robots.c) ---- */

/*
 * Percent-normalises a robots.txt path or pattern, as both sides are before matching:
 * %xx of an unreserved character (A-Z a-z 0-9 - . _ ~) is decoded, other %xx escapes are
 * kept with upper-case hex (%2f -> %2F, so %2F never equals '/'), octets >= 0x80, controls,
 * space and DEL are percent-encoded (non-ASCII as its UTF-8 octets), a '%' not followed by
 * two hex digits stays as is, everything else is copied. out must hold 3 * len + 1 bytes.
 * Returns the length written (not NUL-terminated).
 */
size_t crawl_robots_normalize(const char *in, size_t len, char *out);

/*
 * The robots.txt wildcard match: does pattern (pat, plen: '*' matches any run of octets;
 * no '$' inside) match a prefix of s (or all of s when anchored)? Iterative, with the
 * classic backtrack-to-last-star: O(plen * slen) at worst, never exponential.
 */
int crawl_robots_wildmatch(const char *pat, size_t plen, const char *s, size_t slen,
                           int anchored);

#endif

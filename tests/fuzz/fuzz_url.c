/*
 * libFuzzer target for crawler/url.c: the input is "BASE\nREFERENCE" (or a lone URL).
 * Checks that canonicalising never crashes, that the result is a valid http(s) URL no
 * longer than CRAWL_URL_MAX, that it is idempotent (canon(canon(u)) == canon(u)), and
 * that crawl_url_split() accepts it, and that crawl_url_canonicalise() (with its fast path
 * for URLs already canonical) gives exactly what crawl__url_canonicalise_curl() (always
 * curl's URL API) gives. A violated property aborts, which the fuzzer reports.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler/crawl.h"
#include "crawler/crawler_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *canon)
{
    size_t n = strlen(canon);
    if (n > CRAWL_URL_MAX || (strncmp(canon, "http://", 7) != 0 && strncmp(canon, "https://", 8) != 0))
        abort();
    char *again = NULL;
    if (crawl_url_canonicalise(canon, NULL, &again) != CRAWL_OK)
        abort();
    if (strcmp(again, canon) != 0) {
        fprintf(stderr, "not idempotent:\n  %s\n  %s\n", canon, again);
        abort();
    }
    free(again);
    struct crawl_url_parts p;
    if (crawl_url_split(canon, &p) != CRAWL_OK || p.origin_len > n || p.host_len == 0)
        abort();
}

/* The fast path and the slow path agree: same code, same string. */
static void same(const char *url, const char *base)
{
    char *fast = NULL, *slow = NULL;
    enum crawl_code rf = crawl_url_canonicalise(url, base, &fast);
    enum crawl_code rs = crawl__url_canonicalise_curl(url, base, &slow);
    if (rf != rs || (fast == NULL) != (slow == NULL) || (fast && strcmp(fast, slow) != 0)) {
        fprintf(stderr, "fast != slow for %s (base %s):\n  %s\n  %s\n", url,
                base ? base : "-", fast ? fast : "NULL", slow ? slow : "NULL");
        abort();
    }
    free(fast);
    free(slow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 3 * CRAWL_URL_MAX)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* an embedded NUL ends the string, as it would in C callers */
    char *nl = strchr(s, '\n');
    char *out = NULL;
    same(s, NULL);
    if (crawl_url_canonicalise(s, NULL, &out) == CRAWL_OK)
        check(out);
    free(out);
    out = NULL;
    if (nl) {
        *nl = '\0';
        same(nl + 1, s);
        same(nl + 1, NULL);
        if (crawl_url_canonicalise(nl + 1, s, &out) == CRAWL_OK)
            check(out);
        free(out);
    }
    free(s);
    return 0;
}

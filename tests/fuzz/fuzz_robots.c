/*
 * libFuzzer target for the robots.txt parser and matcher (crawler/robots.c).
 * Input: robots.txt bytes, optionally followed by a NUL and a URL or path to check (the
 * part after the last NUL, at most 4 KiB). Each input is parsed for two agents, once with
 * the default limits and once with a byte limit taken from the input length (so the
 * "line cut at the limit" path runs), and the URL plus a few fixed paths are matched;
 * the decision must be consistent with crawl_robots_allowed()'s return value and name a
 * rule with a line number inside the file. The seed corpus (tests/fuzz/corpus/robots/)
 * holds real-world robots.txt files.
 */
#include "crawler/crawl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct crawl_robots *r, const char *path, size_t len)
{
    struct crawl_robots_decision d;
    int a = crawl_robots_allowed(r, path, len, &d);
    if (a != d.allowed)
        abort();
    if (d.reason == CRAWL_ROBOTS_BY_RULE && (d.rule == NULL || d.line == 0 ||
                                             d.line > crawl_robots_info(r)->lines))
        abort();
    if (d.reason != CRAWL_ROBOTS_BY_RULE && !a)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const agents[] = {"googlebot", "simcrawl/0.1 (+https://example.org)"};
    static const char *const fixed[] = {"/", "/search?q=1", "/wiki/Special:Random",
                                        "/a/b/c.php?x=%2F&y=%e3%83%84", "/robots.txt", ""};
    const char *text = (const char *)data;
    size_t tlen = size;
    const char *url = NULL;
    size_t ulen = 0;
    const uint8_t *nul = size ? memchr(data, 0, size) : NULL;
    if (nul) {
        const uint8_t *last = nul;
        const uint8_t *q;
        while ((q = memchr(last + 1, 0, size - (size_t)(last + 1 - data))) != NULL)
            last = q;
        tlen = (size_t)(last - data);
        url = (const char *)last + 1;
        ulen = size - tlen - 1;
        if (ulen > 4096)
            ulen = 4096;
    }
    for (int pass = 0; pass < 2; pass++) {
        struct crawl_robots_opts o;
        crawl_robots_opts_init(&o);
        if (pass == 1)
            o.max_bytes = tlen / 2 + 1;
        struct crawl_robots *r = NULL;
        if (crawl_robots_parse(text, tlen, agents[pass], &o, &r) != CRAWL_OK)
            return 0; /* only ENOMEM is possible here */
        const struct crawl_robots_info *in = crawl_robots_info(r);
        if (in->bytes != tlen || in->bytes_ignored > tlen)
            abort();
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            check(r, fixed[i], strlen(fixed[i]));
        if (url) {
            size_t plen;
            char *u = malloc(ulen + 1);
            if (u) {
                memcpy(u, url, ulen);
                u[ulen] = '\0';
                const char *p = crawl_robots_url_path(u, &plen);
                check(r, p, plen);
                check(r, url, ulen);
                free(u);
            }
        }
        for (size_t i = 0; i < crawl_robots_sitemap_count(r); i++)
            if (!crawl_robots_sitemap(r, i))
                abort();
        crawl_robots_free(r);
    }
    return 0;
}

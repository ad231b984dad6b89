/*
 * libFuzzer target for the HTTP block parser (crawler/httpblock.c): status/request line,
 * headers, chunked transfer coding, and the gzip / deflate / br / zstd content codings under a
 * small decoded-size cap. The first byte picks the cap; the rest is the message.
 */
#include <stdint.h>
#include <string.h>

#include "crawler/crawl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    struct crawl_http_opts o = {.max_body = (size_t)(data[0] & 15) * 65536 + 1};
    struct crawl_http_msg *m;
    if (crawl_http_parse((const char *)data + 1, size - 1, &o, &m) != CRAWL_OK)
        return 0;
    (void)crawl_http_status(m);
    (void)crawl_mime_is_html(crawl_http_header(m, "Content-Type"));
    (void)crawl_mime_is_html(crawl_http_mime(m));
    (void)crawl_http_charset(m);
    for (size_t i = 0; i < crawl_http_header_count(m); i++) {
        const char *n, *v;
        crawl_http_header_at(m, i, &n, &v);
        (void)strlen(n);
        (void)strlen(v);
    }
    size_t pl;
    const char *p = crawl_http_payload(m, &pl);
    if (pl)
        (void)p[pl - 1];
    const char *b;
    size_t bl;
    if (crawl_http_body(m, &b, &bl) == CRAWL_OK && bl)
        (void)b[bl - 1];
    (void)crawl_http_body_error(m);
    crawl_http_free(m);
    return 0;
}

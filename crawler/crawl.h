#ifndef CRAWLER_CRAWL_H
#define CRAWLER_CRAWL_H
/*
 * crawler: URLs, robots.txt (RFC 9309), the frontier and politeness, fetching with the
 * libcurl multi interface, WARC reading and writing (ISO 28500), and the crawl loop.
 * No libcurl, zlib or OpenSSL type appears here.
 */
#include <stddef.h>
#include <stdint.h>

#define CRAWL_WARN_UNUSED __attribute__((warn_unused_result))

/* ==== robots.txt: parser, matcher, fetch policy ==== */

/* ==== WARC: reader, HTTP block parser, writer ==== */

/* ==== URLs, frontier, fetcher, the crawl loop ==== */

#endif

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

/* ==== errors ==== (0 is OK; codes only ever appended) */

enum crawl_code {
    CRAWL_OK = 0,
    CRAWL_ENOMEM,     /* out of memory; the object is unchanged and still usable */
    CRAWL_EINVAL,     /* a bad argument (programmer error) */
    CRAWL_EIO,        /* a read, write, open or rename failed (detail: errno text) */
    CRAWL_EOF,        /* no more records (not an error: the end of the input) */
    CRAWL_EFORMAT,    /* the input breaks its format (WARC header, HTTP message) */
    CRAWL_ETRUNCATED, /* the input ends inside a record or message */
    CRAWL_EGZIP,      /* a gzip member is broken (bad header, CRC, deflate data) */
    CRAWL_ETOOLARGE,  /* a cap was reached (block, header, decoded body) */
    CRAWL_ECHUNKED,   /* bad chunked transfer coding; what was decoded is kept */
    CRAWL_EDECODE,    /* bad gzip/deflate/br content coding; what was decoded is kept */
    CRAWL_EUNSUPPORTED, /* an unsupported coding or version */
};

/* A short lower-case description of code, e.g. "gzip member is broken". */
const char *crawl_strerror(enum crawl_code code);

/* ==== robots.txt: parser, matcher, fetch policy ==== */

/* ==== WARC: reader, HTTP block parser, writer ==== */

/* ==== URLs, frontier, fetcher, the crawl loop ==== */

#endif

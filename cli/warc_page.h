#ifndef CLI_WARC_PAGE_H
#define CLI_WARC_PAGE_H
/*
 * Which WARC records are pages to fingerprint (cli/warc_page.c), shared by `simcrawl
 * dedup` and the WARC kind of the INPUT iterator (cli/inputs_warc.c). A page is a
 * response record (application/http) with a 2xx status other than 206, an HTML media type
 * (text/html, application/xhtml+xml) and a body, after the transfer and content codings
 * are removed, of at least min_size bytes; or a resource record of an HTML media type whose
 * block (the page itself, no HTTP message: msg NULL) has at least min_size bytes. Ids are
 * the WARC-Target-URI.
 */
#include <stddef.h>
#include <stdint.h>

#include "crawler/crawl.h"

#define CLI_WARC_MIN_SIZE_DEFAULT 256u /* bytes: smaller bodies are not near-dup candidates */

enum cli_warc_kind {
    CLI_WARC_PAGE,    /* an HTML page: fingerprint it */
    CLI_WARC_OTHER,   /* any other record (why says which kind) */
    CLI_WARC_DAMAGED, /* the block is truncated or broken (why says how) */
};

struct cli_warc_page {
    enum cli_warc_kind kind;
    char why[256];              /* OTHER / DAMAGED: lower-case reason */
    struct crawl_http_msg *msg; /* the parsed HTTP message when there is one */
    const char *block;          /* the record block, borrowed from the reader */
    size_t block_len;
    const char *body; /* PAGE: decoded body, borrowed from msg */
    size_t body_len;
    const char *content_type;               /* PAGE: the HTTP Content-Type value, or NULL */
    char payload_digest[CRAWL_DIGEST_SIZE]; /* PAGE: sha1 of the payload (codings kept;
                                               a resource: of its block) */
};

/*
 * Classifies rec, the current record of r, reading its block whole (blocks over the
 * reader's max_block are OTHER and left unread). Release out with
 * cli_warc_page_release() whatever the outcome. Returns 0, or -1 when out of memory.
 */
int cli_warc_classify(struct crawl_warc_reader *r, const struct crawl_warc_record *rec,
                      size_t min_size, struct cli_warc_page *out)
    __attribute__((warn_unused_result));
void cli_warc_page_release(struct cli_warc_page *p);

/* 1 when path ends in .warc or .warc.gz (any case). */
int cli_is_warc_name(const char *path);

#endif

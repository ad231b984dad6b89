/*
 * Which WARC records are pages: cli_warc_classify() decides which records are HTML pages
 * (a response record, application/http, 2xx but not 206 Partial Content, text/html or
 * application/xhtml+xml, a body of at least min_size bytes once chunking and
 * gzip/deflate/br are removed; or a resource record whose Content-Type is one of those two,
 * its block the page) and hands out the decoded body and the payload digest.
 * `simcrawl dedup` and the INPUT iterator of pairs, clusters, query and index
 * (cli_inputs_warc) both use it, so they agree on what a page is. The WARC reading itself
 * is crawler/warc.c, the HTTP parsing crawler/httpblock.c.
 */
#include "cli/warc_page.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"

int cli_is_warc_name(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && strcasecmp(path + n - 5, ".warc") == 0) ||
           (n > 8 && strcasecmp(path + n - 8, ".warc.gz") == 0);
}

void cli_warc_page_release(struct cli_warc_page *p)
{
    if (!p)
        return;
    crawl_http_free(p->msg);
    memset(p, 0, sizeof *p);
}

static int other(struct cli_warc_page *out, const char *why)
{
    out->kind = CLI_WARC_OTHER;
    snprintf(out->why, sizeof out->why, "%s", why);
    return 0;
}

/* Reads the current record's block whole into out: 1 when read, 0 when out is decided
 * instead (OTHER past the reader's cap, DAMAGED), -1 when out of memory. */
static int read_block(struct crawl_warc_reader *r, struct cli_warc_page *out)
{
    enum crawl_code rc = crawl_warc_block(r, &out->block, &out->block_len);
    if (rc == CRAWL_ETOOLARGE)
        return other(out, "block larger than the reader's cap");
    if (rc == CRAWL_ENOMEM)
        return -1;
    if (rc != CRAWL_OK) {
        out->kind = CLI_WARC_DAMAGED;
        snprintf(out->why, sizeof out->why, "record is damaged: %s", crawl_strerror(rc));
        return 0;
    }
    return 1;
}

/* 1 (and out decided OTHER) when a body of len bytes is below the size floor. */
static int below_floor(size_t len, size_t min_size, struct cli_warc_page *out)
{
    if (len >= min_size)
        return 0;
    snprintf(out->why, sizeof out->why, "body of %zu bytes is below the size floor %zu", len,
             min_size);
    out->kind = CLI_WARC_OTHER;
    return 1;
}

/* A resource record (WARC 1.1 section 6.4: a document without protocol information, as
 * written by tools that archive files, e.g. warcit, or pages captured in a browser): its
 * block is the page, its WARC Content-Type the media type, and there are no codings. */
static int classify_resource(struct crawl_warc_reader *r, const struct crawl_warc_record *rec,
                             size_t min_size, struct cli_warc_page *out)
{
    if (!crawl_mime_is_html(rec->content_type)) {
        snprintf(out->why, sizeof out->why, "resource not html (%s)",
                 *rec->content_type ? rec->content_type : "no Content-Type");
        out->kind = CLI_WARC_OTHER;
        return 0;
    }
    int got = read_block(r, out);
    if (got <= 0)
        return got;
    if (below_floor(out->block_len, min_size, out))
        return 0;
    if (crawl_digest_sha1(out->block, out->block_len, out->payload_digest) != CRAWL_OK)
        return -1;
    out->body = out->block;
    out->body_len = out->block_len;
    out->content_type = rec->content_type;
    out->kind = CLI_WARC_PAGE;
    return 0;
}

int cli_warc_classify(struct crawl_warc_reader *r, const struct crawl_warc_record *rec,
                      size_t min_size, struct cli_warc_page *out)
{
    memset(out, 0, sizeof *out);
    if (strcmp(rec->type, "resource") == 0)
        return classify_resource(r, rec, min_size, out);
    if (strcmp(rec->type, "response") != 0)
        return other(out, *rec->type ? rec->type : "no WARC-Type");
    if (strncasecmp(rec->content_type, "application/http", 16) != 0)
        return other(out, "response is not application/http");
    int got = read_block(r, out);
    if (got <= 0)
        return got;
    enum crawl_code rc = crawl_http_parse(out->block, out->block_len, NULL, &out->msg);
    if (rc == CRAWL_ENOMEM)
        return -1;
    if (rc != CRAWL_OK)
        return other(out, "block is not an HTTP response");
    int status = crawl_http_status(out->msg);
    if (status < 200 || status > 299 || status == 206) { /* 206: a part, not the page */
        snprintf(out->why, sizeof out->why, "HTTP status %d", status);
        out->kind = CLI_WARC_OTHER;
        return 0;
    }
    const char *mime = crawl_http_mime(out->msg);
    if (!crawl_mime_is_html(mime)) {
        snprintf(out->why, sizeof out->why, "not html (%s)", *mime ? mime : "no Content-Type");
        out->kind = CLI_WARC_OTHER;
        return 0;
    }
    rc = crawl_http_body(out->msg, &out->body, &out->body_len);
    if (rc == CRAWL_ENOMEM)
        return -1;
    enum crawl_code bc = crawl_http_body_code(out->msg);
    if (bc == CRAWL_EUNSUPPORTED || bc == CRAWL_EDECODE) {
        /* nothing usable to fingerprint; the record itself is fine */
        snprintf(out->why, sizeof out->why, "body not decoded: %s",
                 crawl_http_body_error(out->msg));
        out->kind = CLI_WARC_OTHER;
        return 0;
    }
    if (below_floor(out->body_len, min_size, out))
        return 0;
    size_t pl;
    const char *p = crawl_http_payload(out->msg, &pl);
    if (crawl_digest_sha1(p, pl, out->payload_digest) != CRAWL_OK)
        return -1;
    out->content_type = crawl_http_header(out->msg, "Content-Type");
    out->kind = CLI_WARC_PAGE;
    return 0;
}

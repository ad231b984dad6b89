#ifndef CLI_REQUISITES_H
#define CLI_REQUISITES_H
/*
 * Page requisites (`crawl --page-requisites`, wget's -p): what a browser loads to show a
 * page, found in its HTML or in a stylesheet, handed to the crawler with
 * crawl_verdict_add_requisite() (crawler/crawl.h), which resolves them against the page.
 */
#include <stddef.h>

#include "crawler/crawl.h"

/*
 * The requisites of an HTML page (bytes as served, content coding removed): <img src> and
 * srcset, <picture>/<video>/<audio> <source src> and srcset, <video poster>, <input
 * type=image src>, <link rel=stylesheet|icon|apple-touch-icon|preload|modulepreload href>,
 * <script src>, <embed src>, <object data>, and url(...) / @import in <style> elements and
 * style attributes; resolved against <base href> when the page has one. A second pass of
 * libxml2's HTML parser (SAX: no tree is built) over a kept page. 0, or -1 out of memory.
 */
int cli_html_requisites(const char *html, size_t len, const char *page_url,
                        struct crawl_verdict *v);

/* The requisites of a stylesheet: url(...) and @import "..." (CSS Syntax 3, comments
 * skipped), resolved against base (the stylesheet's URL, or the page's for inline CSS).
 * 0, or -1 out of memory. */
int cli_css_requisites(const char *css, size_t len, const char *base, struct crawl_verdict *v);

#endif

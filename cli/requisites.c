/*
 * Page requisites (cli/requisites.h): the URLs a browser loads to render a page, as
 * wget's --page-requisites takes them (src/html-url.c's inline tags), from the page's HTML
 * and from stylesheets.
 *
 * HOW IT WORKS. The HTML goes through libxml2's HTML parser once more, SAX only (no tree):
 * each start tag's attributes are matched against a small table of (element, attribute,
 * condition); <base href> changes the base of what follows it, as in a browser (a base
 * after a requisite is rare and not applied backwards); text inside <style> and style=""
 * attributes is scanned as CSS. A requisite URL is resolved against the base here when
 * there is a <base>, and handed to crawl_verdict_add_requisite(), which canonicalises it
 * against the page URL and drops what is not http(s) (data:, blob:, javascript:).
 * CSS: url( ... ) with or without quotes, and @import "..." / '...', comments skipped;
 * escapes in URLs are not decoded (rare in practice; such a URL is fetched as written).
 */
#include "cli/requisites.h"

#include <libxml/HTMLparser.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct req_state {
    struct crawl_verdict *v;
    const char *page_url;
    char *base;   /* canonical <base href>, or NULL: the page URL */
    int in_style; /* inside <style> */
    int failed;   /* out of memory */
};

/* Hands one URL (s[0..n), trimmed here) to the verdict, resolved against <base> if any. */
static void add_url(struct req_state *st, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r' ||
                 s[n - 1] == '\f'))
        n--;
    if (n == 0 || n > CRAWL_URL_MAX || s[0] == '#')
        return;
    char *u = strndup(s, n);
    if (!u) {
        st->failed = 1;
        return;
    }
    char *abs = NULL;
    enum crawl_code rc = CRAWL_OK;
    if (st->base) {
        rc = crawl_url_canonicalise(u, st->base, &abs);
        if (rc == CRAWL_EURL)
            rc = CRAWL_OK; /* not http(s): nothing to fetch */
    }
    if (rc == CRAWL_OK && (!st->base || abs))
        rc = crawl_verdict_add_requisite(st->v, abs ? abs : u);
    if (rc == CRAWL_ENOMEM)
        st->failed = 1;
    free(abs);
    free(u);
}

/* srcset: "url [descriptor], url [descriptor], ..." (HTML: image candidate strings). */
static void add_srcset(struct req_state *st, const char *s)
{
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == ',')
            s++;
        if (!*s)
            return;
        size_t n = strcspn(s, " \t\n\r\f");
        size_t un = n;
        while (un && s[un - 1] == ',')
            un--;
        add_url(st, s, un);
        s += n;
        if (un < n) /* "url," ends the candidate */
            continue;
        s += strcspn(s, ","); /* the descriptor */
    }
}

static int ieq_prefix(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n >= l && strncasecmp(s, lit, l) == 0;
}

/* A character that continues a CSS identifier ("my-url(" is not a url() token). */
static int ident_char(char c)
{
    return c == '-' || c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
           (c >= '0' && c <= '9');
}

static void css_scan(struct req_state *st, const char *css, size_t len)
{
    size_t i = 0;
    while (i < len) {
        char c = css[i];
        if (c == '/' && i + 1 < len && css[i + 1] == '*') {
            const char *end = NULL;
            for (size_t k = i + 2; k + 1 < len; k++)
                if (css[k] == '*' && css[k + 1] == '/') {
                    end = css + k + 2;
                    break;
                }
            i = end ? (size_t)(end - css) : len;
            continue;
        }
        if ((c == 'u' || c == 'U') && ieq_prefix(css + i, len - i, "url(") &&
            (i == 0 || !ident_char(css[i - 1]))) {
            size_t k = i + 4;
            while (k < len && (css[k] == ' ' || css[k] == '\t' || css[k] == '\n'))
                k++;
            char q = k < len && (css[k] == '"' || css[k] == '\'') ? css[k] : ')';
            if (q != ')')
                k++;
            size_t start = k;
            while (k < len && css[k] != q && css[k] != '\n')
                k++;
            if (k < len && css[k] == q)
                add_url(st, css + start, k - start);
            i = k + 1;
            continue;
        }
        if (c == '@' && ieq_prefix(css + i, len - i, "@import")) {
            size_t k = i + 7;
            while (k < len && (css[k] == ' ' || css[k] == '\t' || css[k] == '\n'))
                k++;
            if (k < len && (css[k] == '"' || css[k] == '\'')) {
                char q = css[k++];
                size_t start = k;
                while (k < len && css[k] != q && css[k] != '\n')
                    k++;
                if (k < len)
                    add_url(st, css + start, k - start);
            }
            i = k;
            continue;
        }
        i++;
    }
}

static const char *att(const xmlChar **atts, const char *name)
{
    for (size_t i = 0; atts && atts[i]; i += 2)
        if (strcasecmp((const char *)atts[i], name) == 0)
            return atts[i + 1] ? (const char *)atts[i + 1] : "";
    return NULL;
}

/* Whether the space-separated rel list holds one of the requisite kinds. */
static int rel_requisite(const char *rel)
{
    static const char *const kinds[] = {"stylesheet", "icon",          "apple-touch-icon",
                                        "preload",    "modulepreload", NULL};
    while (*rel) {
        while (*rel == ' ' || *rel == '\t' || *rel == '\n')
            rel++;
        size_t n = strcspn(rel, " \t\n");
        for (int i = 0; n && kinds[i]; i++)
            if (strlen(kinds[i]) == n && strncasecmp(rel, kinds[i], n) == 0)
                return 1;
        rel += n;
    }
    return 0;
}

static void on_start(void *ctx, const xmlChar *xname, const xmlChar **atts)
{
    struct req_state *st = ctx;
    const char *name = (const char *)xname, *v;
    if (st->failed || !name)
        return;
    if (strcasecmp(name, "base") == 0) {
        if (!st->base && (v = att(atts, "href")) != NULL &&
            crawl_url_canonicalise(v, st->page_url, &st->base) == CRAWL_ENOMEM)
            st->failed = 1;
        return;
    }
    if (strcasecmp(name, "img") == 0 || strcasecmp(name, "source") == 0) {
        if ((v = att(atts, "src")) != NULL)
            add_url(st, v, strlen(v));
        if ((v = att(atts, "srcset")) != NULL)
            add_srcset(st, v);
    } else if (strcasecmp(name, "script") == 0 || strcasecmp(name, "embed") == 0 ||
               strcasecmp(name, "audio") == 0 || strcasecmp(name, "track") == 0) {
        if ((v = att(atts, "src")) != NULL)
            add_url(st, v, strlen(v));
    } else if (strcasecmp(name, "video") == 0) {
        if ((v = att(atts, "src")) != NULL)
            add_url(st, v, strlen(v));
        if ((v = att(atts, "poster")) != NULL)
            add_url(st, v, strlen(v));
    } else if (strcasecmp(name, "input") == 0) {
        const char *type = att(atts, "type");
        if (type && strcasecmp(type, "image") == 0 && (v = att(atts, "src")) != NULL)
            add_url(st, v, strlen(v));
    } else if (strcasecmp(name, "object") == 0) {
        if ((v = att(atts, "data")) != NULL)
            add_url(st, v, strlen(v));
    } else if (strcasecmp(name, "link") == 0) {
        const char *rel = att(atts, "rel");
        if (rel && rel_requisite(rel) && (v = att(atts, "href")) != NULL)
            add_url(st, v, strlen(v));
    } else if (strcasecmp(name, "style") == 0) {
        st->in_style = 1;
    }
    if ((v = att(atts, "style")) != NULL && strstr(v, "url("))
        css_scan(st, v, strlen(v));
}

static void on_end(void *ctx, const xmlChar *name)
{
    struct req_state *st = ctx;
    if (name && strcasecmp((const char *)name, "style") == 0)
        st->in_style = 0;
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
    struct req_state *st = ctx;
    if (st->in_style && !st->failed && len > 0)
        css_scan(st, (const char *)ch, (size_t)len);
}

static void on_error(void *ctx, xmlErrorPtr e)
{
    (void)ctx, (void)e; /* a broken page still has requisites: the parser recovers */
}

int cli_html_requisites(const char *html, size_t len, const char *page_url, struct crawl_verdict *v)
{
    struct req_state st = {.v = v, .page_url = page_url};
    if (len == 0 || len > (size_t)INT32_MAX - 16)
        return 0;
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = on_start;
    sax.endElement = on_end;
    sax.characters = on_text;
    sax.cdataBlock = on_text; /* <style> content comes as CDATA in libxml2's HTML parser */
    sax.serror = on_error;
    sax.initialized = 1;
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(html, (int)len);
    if (!ctxt)
        return -1;
    memcpy(ctxt->sax, &sax, sizeof sax);
    ctxt->userData = &st;
    htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_NONET | HTML_PARSE_NOBLANKS);
    htmlParseDocument(ctxt);
    if (ctxt->errNo == XML_ERR_NO_MEMORY)
        st.failed = 1;
    htmlFreeParserCtxt(ctxt);
    free(st.base);
    return st.failed ? -1 : 0;
}

int cli_css_requisites(const char *css, size_t len, const char *base, struct crawl_verdict *v)
{
    struct req_state st = {.v = v, .page_url = base};
    css_scan(&st, css, len);
    return st.failed ? -1 : 0;
}

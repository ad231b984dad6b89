/*
 * Growing buffers with a cap, and the JSON the service writes into them. After curl's
 * dynbuf (its docs/DYNBUF.md): the cap is set when the buffer is made, and passing it is
 * an error the writer sees once at the end, never a silent truncation. Request bodies
 * and replies both live in one: a body's cap is --max-body, a reply's a multiple of it.
 *
 * The service writes JSON by hand (server/ depends on libsimcrawl and libmicrohttpd
 * only): objects of a few fixed members whose only free text is ids, which the parsers
 * (parse.c) accept only as valid UTF-8 without NUL, so escaping '"', '\' and the control
 * characters (RFC 8259 section 7) is all a string needs; anything else (an error message
 * quoting a request's bytes) has its stray bytes replaced by U+FFFD.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_FIRST_CAP 256 /* first allocation */

void server__buf_init(struct server_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

void server__buf_release(struct server_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Room for need bytes and a NUL; 0, or -1 with failed set. */
static int grow(struct server_buf *b, size_t need)
{
    if (b->failed)
        return -1;
    if (need > b->max) {
        b->failed = SERVER_BUF_FULL;
        return -1;
    }
    if (need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : BUF_FIRST_CAP;
    while (cap < need + 1)
        cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
    if (cap > b->max + 1)
        cap = b->max + 1;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = SERVER_BUF_NOMEM;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void server__buf_reserve(struct server_buf *b, size_t n)
{
    if (n <= b->max && b->len <= b->max - n) /* over the cap: the appends will say so */
        (void)grow(b, b->len + n);
}

void server__buf_add(struct server_buf *b, const void *s, size_t n)
{
    if (n > SIZE_MAX - b->len - 1 || grow(b, b->len + n) != 0)
        return;
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void server__buf_puts(struct server_buf *b, const char *s)
{
    server__buf_add(b, s, strlen(s));
}

void server__buf_printf(struct server_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = SERVER_BUF_NOMEM;
        return;
    }
    if ((size_t)n < sizeof small) {
        server__buf_add(b, small, (size_t)n);
        return;
    }
    if (grow(b, b->len + (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void server__buf_json_str(struct server_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    server__buf_add(b, "\"", 1);
    size_t run = 0; /* bytes to copy as they are, waiting */
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t len = c >= 0x80 ? server__utf8_seq(u + i, n - i) : 1;
        if (len > 1 || (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')) {
            run += len;
            i += len;
            continue;
        }
        server__buf_add(b, s + i - run, run);
        run = 0;
        i++;
        if (c >= 0x80) { /* not UTF-8 */
            server__buf_add(b, "\\ufffd", 6);
            continue;
        }
        char esc[6] = {'\\', (char)c, '0', '0', 0, 0};
        size_t elen = 2;
        if (c == '\n')
            esc[1] = 'n';
        else if (c == '\r')
            esc[1] = 'r';
        else if (c == '\t')
            esc[1] = 't';
        else if (c < 0x20) {
            esc[1] = 'u';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        server__buf_add(b, esc, elen);
    }
    server__buf_add(b, s + n - run, run);
    server__buf_add(b, "\"", 1);
}

void server__buf_json_fp(struct server_buf *b, uint64_t fp)
{
    server__buf_printf(b, "\"%016llx\"", (unsigned long long)fp);
}

char *server__buf_take(struct server_buf *b, size_t *len)
{
    char *p = b->p;
    *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

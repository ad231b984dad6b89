/*
 * The fingerprint list reader: lines "HEX ID" (16 hex digits of a fingerprint, spaces or
 * tabs, the id = the rest of the line), as `simcrawl fingerprint` prints them, including
 * its escaped form for ids holding a newline or a backslash ("\HEX  ID" with \n and \\).
 * Blank lines and lines starting with '#' are skipped; a trailing CR is dropped.
 *
 * Streaming: data is fed in chunks of any size and cut into lines in a buffer capped at
 * DEDUP_FPLIST_LINE_MAX bytes, so a list of any length is read in constant memory; a
 * longer line is reported and skipped. dedup_fplist_feed_inplace() parses the lines that
 * lie whole in a writable chunk where they are (no copy; only a line cut by the chunk's
 * end goes through the buffer): one pass over the bytes. Every malformed line is reported with its
 * number and the reading goes on (the caller decides what a bad line costs).
 */
#include "dedup/dedup.h"

#include <stdlib.h>
#include <string.h>

struct dedup_fplist {
    char *buf;
    size_t len;
    size_t line;  /* number of the line being assembled, from 1 */
    int skipping; /* the current line is over the cap */
};

struct dedup_fplist *dedup_fplist_new(void)
{
    struct dedup_fplist *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->buf = malloc(DEDUP_FPLIST_LINE_MAX + 1);
    if (!p->buf) {
        free(p);
        return NULL;
    }
    p->line = 1;
    return p;
}

void dedup_fplist_free(struct dedup_fplist *p)
{
    if (!p)
        return;
    free(p->buf);
    free(p);
}

/* One complete line s[0..len) (s[len] writable). Returns fn's non-zero value to stop. */
static int parse_line(char *s, size_t len, size_t line, dedup_fplist_fn fn,
                      dedup_fplist_error_fn err, void *userdata)
{
    if (len && s[len - 1] == '\r')
        len--;
    if (len == 0 || s[0] == '#')
        return 0;
    int escaped = s[0] == '\\';
    char *p = s + escaped;
    size_t n = len - (size_t)escaped, i;
    uint64_t fp = 0;
    if (n < 16 || dedup_fingerprint_parse(p, 16, &fp) != DEDUP_OK) {
        err(userdata, line, "expected 16 hex digits, spaces, an id (HEX ID)");
        return 0;
    }
    if (n > 16 && p[16] != ' ' && p[16] != '\t') {
        err(userdata, line, "expected a space after the 16 hex digits");
        return 0;
    }
    i = 16;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i == n) {
        err(userdata, line, "missing id after the fingerprint");
        return 0;
    }
    char *id = p + i;
    size_t idlen = n - i;
    if (memchr(id, '\0', idlen)) {
        err(userdata, line, "NUL byte in the id");
        return 0;
    }
    if (escaped) {
        size_t o = 0;
        for (size_t j = 0; j < idlen; j++) {
            if (id[j] == '\\' && j + 1 < idlen && (id[j + 1] == 'n' || id[j + 1] == '\\')) {
                id[o++] = id[j + 1] == 'n' ? '\n' : '\\';
                j++;
            } else {
                id[o++] = id[j];
            }
        }
        idlen = o;
    }
    id[idlen] = '\0';
    return fn(userdata, fp, id, idlen, line);
}

int dedup_fplist_feed(struct dedup_fplist *p, const char *data, size_t len, dedup_fplist_fn fn,
                      dedup_fplist_error_fn err, void *userdata)
{
    const char *end = data + len;
    while (data < end) {
        const char *nl = memchr(data, '\n', (size_t)(end - data));
        size_t take = (size_t)((nl ? nl : end) - data);
        if (!p->skipping) {
            if (p->len + take > DEDUP_FPLIST_LINE_MAX) {
                err(userdata, p->line, "line longer than the limit (65536 bytes)");
                p->skipping = 1;
                p->len = 0;
            } else {
                memcpy(p->buf + p->len, data, take);
                p->len += take;
            }
        }
        data += take;
        if (nl) {
            int rc = p->skipping ? 0 : parse_line(p->buf, p->len, p->line, fn, err, userdata);
            p->skipping = 0;
            p->len = 0;
            p->line++;
            data++;
            if (rc)
                return rc;
        }
    }
    return 0;
}

int dedup_fplist_feed_inplace(struct dedup_fplist *p, char *data, size_t len, dedup_fplist_fn fn,
                              dedup_fplist_error_fn err, void *userdata)
{
    char *end = data + len;
    while (data < end) {
        if (p->len || p->skipping) {
            /* finish the line begun in an earlier chunk in the buffer */
            const char *nl = memchr(data, '\n', (size_t)(end - data));
            size_t take = (size_t)((nl ? nl + 1 : end) - data);
            int rc = dedup_fplist_feed(p, data, take, fn, err, userdata);
            data += take;
            if (rc)
                return rc;
            continue;
        }
        char *nl = memchr(data, '\n', (size_t)(end - data));
        if (!nl || (size_t)(nl - data) > DEDUP_FPLIST_LINE_MAX)
            return dedup_fplist_feed(p, data, (size_t)(end - data), fn, err, userdata);
        /* a whole line: parsed where it is (the id's NUL goes where the newline was) */
        int rc = parse_line(data, (size_t)(nl - data), p->line, fn, err, userdata);
        p->line++;
        data = nl + 1;
        if (rc)
            return rc;
    }
    return 0;
}

size_t dedup_fplist_line(const struct dedup_fplist *p)
{
    return p->line;
}

int dedup_fplist_finish(struct dedup_fplist *p, dedup_fplist_fn fn, dedup_fplist_error_fn err,
                        void *userdata)
{
    int rc = 0;
    if (!p->skipping && p->len > 0)
        rc = parse_line(p->buf, p->len, p->line, fn, err, userdata); /* no final newline */
    p->skipping = 0;
    p->len = 0;
    return rc;
}

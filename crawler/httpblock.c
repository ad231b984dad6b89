/*
 * HTTP messages as WARC request/response blocks hold them (application/http; RFC 9112):
 * the status or request line, the header fields, and the body in two forms — the
 * payload (transfer coding removed, content coding kept: what WARC-Payload-Digest
 * covers, ISO 28500 section 5.9) and the decoded body (Content-Encoding gzip, x-gzip,
 * deflate in both its zlib (RFC 1950) and raw (RFC 1951) readings, br (RFC 7932,
 * libbrotlidec), zstd (RFC 8878, libzstd; window capped at 8 MB as RFC 9659 section 3
 * asks of HTTP decoders), in the reverse order they were applied; RFC 9110 section 8.4).
 *
 * Archived traffic is often broken, so the parser is tolerant: folded header lines are
 * joined, lines without a colon skipped, bare LF line ends accepted; a bad chunk or a bad
 * content coding keeps what was decoded and says what went wrong. The decoded body is
 * capped (opts->max_body) against decompression bombs.
 */
#include "crawler/crawl.h"

#include <brotli/decode.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define MAX_HEAD (1024u * 1024) /* status line + headers */
#define DECODE_STEP (64u * 1024)
/* zstd window log cap: 2^23 = 8 MB, the most an HTTP "zstd" coding may use (RFC 9659
 * section 3); frames asking for more are refused, so a decoder never allocates more */
#define ZSTD_WINDOW_LOG_MAX 23

struct header {
    char *name, *value;
};

struct crawl_http_msg {
    int status;
    char *head;      /* our copy of the head, parsed in place */
    size_t head_len; /* bytes of the head in the input, including the empty line */
    char method[32];
    struct header *hdr;
    size_t n_hdr;
    char mime[128], charset[64];
    char *payload;
    size_t payload_len;
    char *body; /* decoded; NULL until crawl_http_body() */
    size_t body_len;
    int body_done;
    size_t max_body;
    struct crawl_mem *mem; /* opts->mem: payload and body bytes are taken from it */
    size_t mem_taken;      /* given back by crawl_http_free() */
    enum crawl_code code;
    char error[200];
};

static size_t mem_limit(struct crawl_mem *mem)
{
    struct crawl_mem_stats ms;
    crawl_mem_get(mem, &ms);
    return ms.limit;
}

static void set_error(struct crawl_http_msg *m, enum crawl_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(struct crawl_http_msg *m, enum crawl_code code, const char *fmt, ...)
{
    if (m->code != CRAWL_OK)
        return; /* the first problem is the one reported */
    m->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->error, sizeof m->error, fmt, ap);
    va_end(ap);
}

static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        end--;
    *end = '\0';
    return s;
}

/* Length of the head (through the empty line), or 0 when there is none. */
static size_t find_head_end(const char *d, size_t len)
{
    size_t lim = len < MAX_HEAD ? len : MAX_HEAD;
    for (size_t i = 0; i < lim; i++) {
        if (d[i] != '\n')
            continue;
        if (i >= 1 && d[i - 1] == '\n')
            return i + 1;
        if (i >= 2 && d[i - 1] == '\r' && d[i - 2] == '\n')
            return i + 1;
    }
    return 0;
}

static int parse_start_line(struct crawl_http_msg *m, char *line)
{
    if (strncmp(line, "HTTP/", 5) == 0) {
        char *sp = strchr(line, ' ');
        if (!sp)
            return -1;
        while (*sp == ' ')
            sp++;
        if (!(isdigit((unsigned char)sp[0]) && isdigit((unsigned char)sp[1]) &&
              isdigit((unsigned char)sp[2]) && (sp[3] == '\0' || sp[3] == ' ' || sp[3] == '\r')))
            return -1;
        m->status = (sp[0] - '0') * 100 + (sp[1] - '0') * 10 + (sp[2] - '0');
        return 0;
    }
    /* METHOD SP target SP HTTP/x.y */
    size_t n = 0;
    while (line[n] && line[n] != ' ' && n < sizeof m->method - 1) {
        if (!isupper((unsigned char)line[n]) && line[n] != '-' && line[n] != '_')
            return -1;
        n++;
    }
    if (n == 0 || line[n] != ' ' || !strstr(line + n, " HTTP/"))
        return -1;
    memcpy(m->method, line, n);
    m->method[n] = '\0';
    return 0;
}

static void parse_headers(struct crawl_http_msg *m, char *p, char *end)
{
    size_t cap = 0;
    struct header *last = NULL;
    while (p < end) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        char *line_end = eol ? eol : end;
        char *next = eol ? eol + 1 : end;
        if (line_end == p || (line_end == p + 1 && *p == '\r'))
            break;
        if ((*p == ' ' || *p == '\t') && last) {
            char *cont = trim(p, line_end);
            size_t vl = strlen(last->value), cl = strlen(cont);
            if (cl) {
                last->value[vl] = ' ';
                memmove(last->value + vl + 1, cont, cl + 1);
            }
        } else {
            char *colon = memchr(p, ':', (size_t)(line_end - p));
            last = NULL;
            if (colon && colon > p && m->n_hdr < CRAWL_HTTP_MAX_HEADERS) {
                *colon = '\0';
                char *name = trim(p, colon);
                char *value = trim(colon + 1, line_end);
                if (*name && !strpbrk(name, " \t")) {
                    if (m->n_hdr == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        struct header *nh = realloc(m->hdr, nc * sizeof *nh);
                        if (!nh)
                            return; /* keep what we have; the message stays usable */
                        m->hdr = nh;
                        cap = nc;
                    }
                    last = &m->hdr[m->n_hdr++];
                    last->name = name;
                    last->value = value;
                }
            }
        }
        p = next;
    }
}

const char *crawl_http_header(const struct crawl_http_msg *m, const char *name)
{
    for (size_t i = 0; i < m->n_hdr; i++)
        if (strcasecmp(m->hdr[i].name, name) == 0)
            return m->hdr[i].value;
    return NULL;
}

/* Does the comma-separated list in header `name` (any of its lines) end with token? */
static int last_coding_is(const struct crawl_http_msg *m, const char *name, const char *token)
{
    const char *lastv = NULL;
    for (size_t i = 0; i < m->n_hdr; i++)
        if (strcasecmp(m->hdr[i].name, name) == 0 && m->hdr[i].value[0])
            lastv = m->hdr[i].value;
    if (!lastv)
        return 0;
    const char *comma = strrchr(lastv, ',');
    const char *t = comma ? comma + 1 : lastv;
    while (*t == ' ' || *t == '\t')
        t++;
    size_t n = strlen(token);
    return strncasecmp(t, token, n) == 0 && (t[n] == '\0' || t[n] == ' ' || t[n] == ';');
}

/*
 * Removes the chunked transfer coding of in[0..len) into out (at most len bytes).
 * RFC 9112 section 7.1: chunk-size [; ext] CRLF data CRLF ... 0 CRLF [trailers] CRLF.
 */
static size_t dechunk(struct crawl_http_msg *m, const char *in, size_t len, char *out)
{
    size_t i = 0, o = 0;
    for (;;) {
        if (i >= len) {
            set_error(m, CRAWL_ETRUNCATED,
                      "chunked body ends without its last chunk; kept %zu bytes", o);
            return o;
        }
        size_t start = i;
        uint64_t size = 0;
        int digits = 0;
        while (i < len && isxdigit((unsigned char)in[i])) {
            int c = (unsigned char)in[i];
            int v = isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10);
            if (size > (UINT64_MAX >> 4)) {
                digits = 0;
                break;
            }
            size = size * 16 + (uint64_t)v;
            digits++;
            i++;
        }
        while (i < len && (in[i] == ' ' || in[i] == '\t'))
            i++;
        if (i < len && in[i] == ';') /* chunk extensions: skip */
            while (i < len && in[i] != '\n')
                i++;
        if (i < len && in[i] == '\r')
            i++;
        if (!digits || i >= len || in[i] != '\n') {
            if (i >= len && digits)
                set_error(m, CRAWL_ETRUNCATED,
                          "chunked body ends inside a chunk-size line; kept %zu bytes", o);
            else
                set_error(m, CRAWL_ECHUNKED,
                          "bad chunk-size line at body offset %zu; kept %zu bytes", start, o);
            return o;
        }
        i++;
        if (size == 0)
            return o; /* trailers, if any, are not part of the payload */
        if (size > len - i) {
            memcpy(out + o, in + i, len - i);
            o += len - i;
            set_error(m, CRAWL_ETRUNCATED,
                      "chunked body ends inside a chunk of %llu bytes; kept %zu bytes",
                      (unsigned long long)size, o);
            return o;
        }
        memcpy(out + o, in + i, (size_t)size);
        o += (size_t)size;
        i += (size_t)size;
        if (i < len && in[i] == '\r')
            i++;
        if (i < len && in[i] == '\n') {
            i++;
        } else if (i < len) {
            set_error(m, CRAWL_ECHUNKED,
                      "chunk not followed by CRLF at body offset %zu; kept %zu bytes", i, o);
            return o;
        }
    }
}

static void parse_content_type(struct crawl_http_msg *m)
{
    const char *ct = crawl_http_header(m, "Content-Type");
    if (!ct)
        return;
    size_t n = 0;
    while (ct[n] && ct[n] != ';' && n < sizeof m->mime - 1) {
        m->mime[n] = (char)tolower((unsigned char)ct[n]);
        n++;
    }
    while (n > 0 && (m->mime[n - 1] == ' ' || m->mime[n - 1] == '\t'))
        n--;
    m->mime[n] = '\0';
    const char *p = ct;
    while ((p = strchr(p, ';')) != NULL) {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncasecmp(p, "charset", 7) != 0)
            continue;
        const char *q = p + 7;
        while (*q == ' ')
            q++;
        if (*q != '=')
            continue;
        q++;
        while (*q == ' ' || *q == '"' || *q == '\'')
            q++;
        size_t k = 0;
        while (q[k] && q[k] != ';' && q[k] != '"' && q[k] != '\'' && q[k] != ' ' &&
               k < sizeof m->charset - 1) {
            m->charset[k] = (char)tolower((unsigned char)q[k]);
            k++;
        }
        m->charset[k] = '\0';
        break;
    }
}

enum crawl_code crawl_http_parse(const char *data, size_t len, const struct crawl_http_opts *opts,
                                 struct crawl_http_msg **out)
{
    *out = NULL;
    size_t hl = find_head_end(data, len);
    if (hl == 0)
        return CRAWL_EFORMAT;
    struct crawl_http_msg *m = calloc(1, sizeof *m);
    if (!m)
        return CRAWL_ENOMEM;
    m->max_body = opts && opts->max_body ? opts->max_body : CRAWL_HTTP_DEFAULT_MAX_BODY;
    m->mem = opts ? opts->mem : NULL;
    m->head = malloc(hl + 1);
    if (!m->head)
        goto nomem;
    memcpy(m->head, data, hl);
    m->head[hl] = '\0';
    m->head_len = hl;
    char *eol = memchr(m->head, '\n', hl);
    char *first_end = eol ? eol : m->head + hl;
    char *line = trim(m->head, first_end);
    if (parse_start_line(m, line) != 0) {
        crawl_http_free(m);
        return CRAWL_EFORMAT;
    }
    parse_headers(m, first_end + 1, m->head + hl);
    parse_content_type(m);
    const char *body = data + hl;
    size_t blen = len - hl;
    if (crawl_mem_take(m->mem, blen) != CRAWL_OK) {
        set_error(m, CRAWL_ETOOLARGE,
                  "no room for the body's %zu bytes in the memory budget of %zu bytes "
                  "(--max-memory)",
                  blen, mem_limit(m->mem));
        blen = 0;
    } else {
        m->mem_taken += blen;
    }
    m->payload = malloc(blen ? blen : 1);
    if (!m->payload)
        goto nomem;
    if (last_coding_is(m, "Transfer-Encoding", "chunked")) {
        m->payload_len = dechunk(m, body, blen, m->payload);
    } else {
        memcpy(m->payload, body, blen);
        m->payload_len = blen;
        const char *cl = crawl_http_header(m, "Content-Length");
        char *end;
        if (cl && *cl) {
            unsigned long long want = strtoull(cl, &end, 10);
            if (*end == '\0' && want > blen)
                set_error(m, CRAWL_ETRUNCATED, "body is %zu bytes, Content-Length says %llu", blen,
                          want);
        }
    }
    *out = m;
    return CRAWL_OK;
nomem:
    crawl_http_free(m);
    return CRAWL_ENOMEM;
}

void crawl_http_free(struct crawl_http_msg *m)
{
    if (!m)
        return;
    crawl_mem_give(m->mem, m->mem_taken);
    free(m->head);
    free(m->hdr);
    free(m->payload);
    free(m->body);
    free(m);
}

int crawl_http_status(const struct crawl_http_msg *m)
{
    return m->status;
}
const char *crawl_http_method(const struct crawl_http_msg *m)
{
    return m->method;
}
size_t crawl_http_header_count(const struct crawl_http_msg *m)
{
    return m->n_hdr;
}
size_t crawl_http_head_len(const struct crawl_http_msg *m)
{
    return m->head_len;
}
const char *crawl_http_mime(const struct crawl_http_msg *m)
{
    return m->mime;
}
const char *crawl_http_charset(const struct crawl_http_msg *m)
{
    return m->charset;
}
int crawl_mime_is_html(const char *ct)
{
    if (!ct)
        return 0;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    return (n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
           (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}
enum crawl_code crawl_http_body_code(const struct crawl_http_msg *m)
{
    return m->code;
}
const char *crawl_http_body_error(const struct crawl_http_msg *m)
{
    return m->error;
}

void crawl_http_header_at(const struct crawl_http_msg *m, size_t i, const char **name,
                          const char **value)
{
    *name = i < m->n_hdr ? m->hdr[i].name : NULL;
    *value = i < m->n_hdr ? m->hdr[i].value : NULL;
}

const char *crawl_http_payload(const struct crawl_http_msg *m, size_t *len)
{
    *len = m->payload_len;
    return m->payload;
}

/* ---- content codings ---- */

struct outbuf {
    char *p;
    size_t len, cap, max;
    struct crawl_mem *mem; /* the budget growth is taken from */
    size_t taken;          /* of it, for this buffer */
    int over_budget;       /* the cap was lowered to cap: no room in mem */
};

/* Room for DECODE_STEP more bytes, within max. 0 ok, 1 at the cap, -1 ENOMEM. */
static int out_room(struct outbuf *o)
{
    if (o->cap - o->len >= 1 && o->cap - o->len >= DECODE_STEP / 4)
        return 0;
    if (o->cap >= o->max)
        return o->len < o->cap ? 0 : 1;
    size_t nc = o->cap ? o->cap * 2 : DECODE_STEP;
    if (nc > o->max)
        nc = o->max;
    size_t more = nc - o->cap + (o->cap ? 0 : 1);
    if (crawl_mem_take(o->mem, more) != CRAWL_OK) {
        /* no room in the budget: this is as far as the body decodes (an error) */
        o->over_budget = 1;
        o->max = o->cap;
        return o->len < o->cap ? 0 : 1;
    }
    char *np = realloc(o->p, nc + 1);
    if (!np) {
        crawl_mem_give(o->mem, more);
        return -1;
    }
    o->taken += more;
    o->p = np;
    o->cap = nc;
    return 0;
}

/* zlib family: windowBits 15+16 gzip, 15 zlib, -15 raw deflate. Concatenated gzip
 * members are all decoded. */
static enum crawl_code inflate_all(const char *in, size_t len, int window_bits, struct outbuf *o,
                                   const char **why)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    *why = "";
    if (inflateInit2(&zs, window_bits) != Z_OK)
        return CRAWL_ENOMEM;
    enum crawl_code rc = CRAWL_OK;
    zs.next_in = (Bytef *)in;
    zs.avail_in = len > (1u << 30) ? (1u << 30) : (uInt)len;
    size_t fed = zs.avail_in;
    for (;;) {
        int room = out_room(o);
        if (room < 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
        if (room > 0) {
            rc = CRAWL_ETOOLARGE;
            break;
        }
        zs.next_out = (Bytef *)o->p + o->len;
        zs.avail_out = (uInt)(o->cap - o->len);
        uInt before = zs.avail_out;
        int z = inflate(&zs, Z_NO_FLUSH);
        o->len += before - zs.avail_out;
        if (zs.avail_in == 0 && fed < len) {
            size_t more = len - fed > (1u << 30) ? (1u << 30) : len - fed;
            zs.next_in = (Bytef *)in + fed;
            zs.avail_in = (uInt)more;
            fed += more;
        }
        if (z == Z_STREAM_END) {
            /* another gzip member may follow; anything else after the end is ignored */
            if (window_bits > 15 && zs.avail_in >= 2 && zs.next_in[0] == 0x1f &&
                zs.next_in[1] == 0x8b) {
                inflateReset(&zs);
                continue;
            }
            break;
        }
        if (z == Z_BUF_ERROR && zs.avail_in == 0) {
            rc = CRAWL_ETRUNCATED;
            *why = "compressed data ends early";
            break;
        }
        if (z != Z_OK && z != Z_BUF_ERROR) {
            rc = z == Z_MEM_ERROR ? CRAWL_ENOMEM : CRAWL_EDECODE;
            *why = zs.msg ? zs.msg : "bad compressed data";
            break;
        }
    }
    inflateEnd(&zs);
    return rc;
}

static enum crawl_code brotli_all(const char *in, size_t len, struct outbuf *o, const char **why)
{
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    *why = "";
    if (!s)
        return CRAWL_ENOMEM;
    const uint8_t *next_in = (const uint8_t *)in;
    size_t avail_in = len;
    enum crawl_code rc = CRAWL_OK;
    for (;;) {
        int room = out_room(o);
        if (room < 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
        if (room > 0) {
            rc = CRAWL_ETOOLARGE;
            break;
        }
        uint8_t *next_out = (uint8_t *)o->p + o->len;
        size_t avail_out = o->cap - o->len, before = avail_out;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
        o->len += before - avail_out;
        if (r == BROTLI_DECODER_RESULT_SUCCESS)
            break;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
            rc = CRAWL_ETRUNCATED;
            *why = "compressed data ends early";
            break;
        }
        if (r == BROTLI_DECODER_RESULT_ERROR) {
            rc = CRAWL_EDECODE;
            *why = BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s));
            break;
        }
    }
    BrotliDecoderDestroyInstance(s);
    return rc;
}

/*
 * zstd: streaming ZSTD_decompressStream into the capped buffer. Every frame of the input
 * is decoded (RFC 8878 section 3.1: one or more frames, skippable frames included).
 *
 * HOW IT WORKS: each call consumes input and/or fills output; it returns 0 when a frame
 * is complete and fully flushed (input left over starts the next frame), an error code,
 * or a hint > 0 that the frame goes on. When the output was not filled, the decoder has
 * flushed all it can (zstd.h), so "input all consumed, output not full, hint > 0" means
 * the data ends inside a frame. At the cap the decoder gets a 1-byte probe buffer: any
 * byte it produces there is one too many (CRAWL_ETOOLARGE); a body that ends exactly at
 * the cap still reaches the end of its last frame (the checksum) and is accepted.
 */
static enum crawl_code zstd_all(const char *in, size_t len, struct outbuf *o, const char **why)
{
    *why = "";
    if (len == 0) {
        *why = "no compressed data";
        return CRAWL_ETRUNCATED;
    }
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        return CRAWL_ENOMEM;
    if (ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
        ZSTD_freeDCtx(d);
        return CRAWL_ENOMEM;
    }
    ZSTD_inBuffer ib = {in, len, 0};
    enum crawl_code rc = CRAWL_OK;
    char probe;
    for (;;) {
        int room = out_room(o);
        if (room < 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
        ZSTD_outBuffer ob = room > 0 ? (ZSTD_outBuffer){&probe, 1, 0}
                                     : (ZSTD_outBuffer){o->p + o->len, o->cap - o->len, 0};
        size_t in_before = ib.pos;
        size_t r = ZSTD_decompressStream(d, &ob, &ib);
        if (ZSTD_isError(r)) {
            rc =
                ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? CRAWL_ENOMEM : CRAWL_EDECODE;
            *why = ZSTD_getErrorName(r);
            break;
        }
        if (room > 0) {
            if (ob.pos > 0) {
                rc = CRAWL_ETOOLARGE;
                break;
            }
        } else {
            o->len += ob.pos;
        }
        if (r == 0 && ib.pos == ib.size)
            break; /* the last frame is complete and flushed */
        if (ib.pos == ib.size && ob.pos < ob.size) {
            rc = CRAWL_ETRUNCATED;
            *why = "compressed data ends early";
            break;
        }
        if (ib.pos == in_before && ob.pos == 0) { /* cannot happen per zstd.h; never spin */
            rc = CRAWL_EDECODE;
            *why = "decoder made no progress";
            break;
        }
    }
    ZSTD_freeDCtx(d);
    return rc;
}

/* Decodes one coding of in[0..len) into a new buffer *out. */
static enum crawl_code decode_one(struct crawl_http_msg *m, const char *coding, const char *in,
                                  size_t len, struct outbuf *o)
{
    const char *why = "";
    enum crawl_code rc;
    if (strcasecmp(coding, "gzip") == 0 || strcasecmp(coding, "x-gzip") == 0) {
        rc = inflate_all(in, len, 15 + 16, o, &why);
    } else if (strcasecmp(coding, "deflate") == 0) {
        /* RFC 9110 says zlib; many servers send raw deflate: the zlib header tells */
        int zlib_hdr = len >= 2 && (((unsigned char)in[0] & 0x0f) == 8) &&
                       ((((unsigned char)in[0] << 8) | (unsigned char)in[1]) % 31 == 0);
        rc = inflate_all(in, len, zlib_hdr ? 15 : -15, o, &why);
    } else if (strcasecmp(coding, "br") == 0) {
        rc = brotli_all(in, len, o, &why);
    } else if (strcasecmp(coding, "zstd") == 0) {
        rc = zstd_all(in, len, o, &why);
    } else {
        set_error(m, CRAWL_EUNSUPPORTED, "unsupported content coding '%s'", coding);
        return CRAWL_EUNSUPPORTED;
    }
    if (rc == CRAWL_ETOOLARGE && o->over_budget)
        set_error(m, rc,
                  "%s body: no room to decode more than %zu bytes in the memory budget of "
                  "%zu bytes (--max-memory)",
                  coding, o->len, mem_limit(m->mem));
    else if (rc == CRAWL_ETOOLARGE)
        set_error(m, rc, "%s body decodes to more than %zu bytes; kept %zu", coding, m->max_body,
                  o->len);
    else if (rc != CRAWL_OK && rc != CRAWL_ENOMEM)
        set_error(m, rc, "bad %s content coding (%s); kept %zu decoded bytes", coding, why, o->len);
    return rc;
}

enum crawl_code crawl_http_body(struct crawl_http_msg *m, const char **data, size_t *len)
{
    if (m->body_done) {
        *data = m->body ? m->body : m->payload;
        *len = m->body ? m->body_len : m->payload_len;
        return CRAWL_OK;
    }
    /* the codings, in the order applied; decoded last first */
    char codings[8][16];
    int n = 0;
    for (size_t i = 0; i < m->n_hdr; i++) {
        if (strcasecmp(m->hdr[i].name, "Content-Encoding") != 0)
            continue;
        const char *p = m->hdr[i].value;
        while (*p) {
            while (*p == ' ' || *p == '\t' || *p == ',')
                p++;
            size_t k = strcspn(p, ", \t;");
            if (k && !(k == 8 && strncasecmp(p, "identity", 8) == 0)) {
                if (n == 8) {
                    set_error(m, CRAWL_EUNSUPPORTED, "more than 8 content codings");
                    break;
                }
                size_t c = k < 15 ? k : 15;
                memcpy(codings[n], p, c);
                codings[n][c] = '\0';
                n++;
            }
            p += k;
            while (*p && *p != ',')
                p++;
        }
    }
    const char *cur = m->payload;
    size_t cur_len = m->payload_len;
    char *owned = NULL;
    size_t owned_taken = 0; /* of m->mem, for owned */
    enum crawl_code rc = CRAWL_OK;
    for (int i = n - 1; i >= 0; i--) {
        struct outbuf o = {NULL, 0, 0, m->max_body, m->mem, 0, 0};
        rc = decode_one(m, codings[i], cur, cur_len, &o);
        if (rc == CRAWL_ENOMEM) {
            free(o.p);
            free(owned);
            crawl_mem_give(m->mem, o.taken + owned_taken);
            return CRAWL_ENOMEM;
        }
        if (rc == CRAWL_EUNSUPPORTED) {
            free(o.p);
            crawl_mem_give(m->mem, o.taken);
            break;
        }
        free(owned);
        crawl_mem_give(m->mem, owned_taken);
        owned_taken = o.taken;
        owned = o.p ? o.p : calloc(1, 1);
        if (!owned)
            return CRAWL_ENOMEM;
        owned[o.len] = '\0';
        cur = owned;
        cur_len = o.len;
        if (rc != CRAWL_OK)
            break;
    }
    m->body = owned;
    m->mem_taken += owned_taken;
    m->body_len = owned ? cur_len : 0;
    m->body_done = 1;
    *data = m->body ? m->body : m->payload;
    *len = m->body ? m->body_len : m->payload_len;
    return CRAWL_OK;
}

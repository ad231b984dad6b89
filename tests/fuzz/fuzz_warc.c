/*
 * libFuzzer target for the WARC reader (crawler/warc.c) and, through it, the HTTP block
 * parser. Each input is read twice: as it is (plain, or gzip when it starts with the
 * magic), and re-packed as a gzip file with one member per "WARC/1." segment, with one
 * byte of the packed file flipped when the input asks for it, so the member-level
 * resynchronisation sees real deflate data. The first input byte picks the block cap
 * (small caps force the streaming path) and whether blocks are read whole or in pieces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crawler/crawl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void noop(void *ud, uint64_t off, enum crawl_code code, const char *what)
{
    (void)ud;
    (void)off;
    (void)code;
    (void)what;
}

static void read_all(const uint8_t *data, size_t size, size_t max_block, int pieces)
{
    struct crawl_warc_opts o = {max_block, noop, NULL};
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open_mem(data, size, &o, &r) != CRAWL_OK)
        return;
    const struct crawl_warc_record *rec;
    unsigned n = 0;
    while (crawl_warc_next(r, &rec) == CRAWL_OK && n++ < 10000) {
        (void)crawl_warc_field(rec, "WARC-Target-URI");
        if (pieces && (n & 1)) {
            char buf[37];
            size_t k;
            while (crawl_warc_read(r, buf, sizeof buf, &k) == CRAWL_OK && k > 0)
                ;
            continue;
        }
        const char *d;
        size_t l;
        enum crawl_code rc = crawl_warc_block(r, &d, &l);
        (void)crawl_mime_is_html(rec->content_type); /* a resource record's media type */
        if (rc != CRAWL_OK || strncmp(rec->content_type, "application/http", 16) != 0)
            continue;
        struct crawl_http_msg *m;
        struct crawl_http_opts ho = {.max_body = 1u << 20};
        if (crawl_http_parse(d, l, &ho, &m) != CRAWL_OK)
            continue;
        const char *b;
        size_t bl;
        if (crawl_http_body(m, &b, &bl) == CRAWL_OK && bl > 0)
            (void)b[bl - 1];
        crawl_http_free(m);
    }
    crawl_warc_reader_free(r);
}

/* gzip one segment as a member appended to out. */
static int gz_member(const uint8_t *in, size_t len, uint8_t **out, size_t *olen, size_t *ocap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t need = deflateBound(&zs, len) + 16;
    if (*olen + need > *ocap) {
        size_t nc = (*olen + need) * 2;
        uint8_t *nb = realloc(*out, nc);
        if (!nb) {
            deflateEnd(&zs);
            return -1;
        }
        *out = nb;
        *ocap = nc;
    }
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = *out + *olen;
    zs.avail_out = (uInt)(*ocap - *olen);
    deflate(&zs, Z_FINISH);
    *olen = *ocap - zs.avail_out;
    deflateEnd(&zs);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    uint8_t ctl = data[0];
    data++;
    size--;
    static const size_t caps[4] = {0, 64, 1024, 1u << 20};
    size_t max_block = caps[ctl & 3];
    int pieces = (ctl >> 2) & 1;
    read_all(data, size, max_block, pieces);

    /* re-pack as gzip, one member per segment starting at "WARC/1." */
    uint8_t *gz = NULL;
    size_t gl = 0, gcap = 0, start = 0;
    for (size_t i = 1; i + 7 <= size + 1; i++) {
        int cut = i == size || (i + 7 <= size && memcmp(data + i, "WARC/1.", 7) == 0);
        if (!cut)
            continue;
        if (gz_member(data + start, i - start, &gz, &gl, &gcap) != 0)
            break;
        start = i;
        if (i == size)
            break;
    }
    if (gz && gl > 0) {
        if (ctl & 8) {
            size_t at = ((size_t)ctl * 7919u) % gl;
            gz[at] ^= (uint8_t)(ctl | 1);
        }
        read_all(gz, gl, max_block, pieces);
    }
    free(gz);
    return 0;
}
